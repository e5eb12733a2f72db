//! Generate the typed register blocks from `hal/regdb/<family>.toml` at build time.
//! A database that fails its lints (overlapping fields, fields outside the register, duplicate
//! offsets, invalid names) fails the build with one line per problem.

use regdb_gen::{Database, database_path, generate};
use std::path::{Path, PathBuf};
use std::process::exit;

fn generate_file(db_path: &Path, out: &Path) {
    println!("cargo::rerun-if-changed={}", db_path.display());
    let db = Database::load(db_path).unwrap_or_else(|e| {
        eprintln!("error: {}: {e}", db_path.display());
        exit(1)
    });
    match generate(&db) {
        Ok(code) => {
            if let Err(e) = std::fs::write(out, code) {
                eprintln!("error: cannot write {}: {e}", out.display());
                exit(1);
            }
        }
        Err(errors) => {
            eprintln!("error: register database {} fails its lints:", db_path.display());
            for e in &errors {
                eprintln!("  {e}");
            }
            exit(1);
        }
    }
}

fn main() {
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    for family in regdb_gen::FAMILIES {
        let feature = format!("CARGO_FEATURE_{}", family.to_ascii_uppercase());
        if std::env::var_os(feature).is_some() {
            generate_file(&database_path(family), &out_dir.join(format!("{family}.rs")));
        }
    }
    // A small database exercising every generator feature, for this crate's own tests.
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixture/fixture.toml");
    generate_file(&fixture, &out_dir.join("fixture.rs"));
}
