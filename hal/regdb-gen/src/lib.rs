//! Register database tooling: load `hal/regdb/<family>.toml`, lint it, and generate the typed
//! register blocks checked in under `hal/regs/src/generated/` (crate `baregpu-regs`).
//!
//! `cargo xtask regen` (or `cargo run -p regdb-gen --bin regdb -- generate`) rewrites the
//! generated files; the `generated_code_is_up_to_date` test fails when one is stale.

#![forbid(unsafe_code)]

pub mod codegen;
pub mod coverage;
pub mod lint;
pub mod model;
pub mod packets;
pub mod pushbuffer;

pub use codegen::generate;
pub use lint::{LintError, lint};
pub use model::{Access, Block, Database, EnumValue, Field, LoadError, Meta, Register};

use std::fmt;
use std::path::{Path, PathBuf};

/// The families with a database, in the order reports list them.
pub const FAMILIES: [&str; 4] = ["r5xx", "vc4", "evergreen", "nvidia"];

/// Directory holding the database files (`hal/regdb`).
pub fn regdb_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../regdb")
}

/// Path of one family's database file.
pub fn database_path(family: &str) -> PathBuf {
    regdb_dir().join(format!("{family}.toml"))
}

/// Directory of the checked-in generated modules (`hal/regs/src/generated`).
pub fn generated_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../regs/src/generated")
}

/// Every generated file as (database, generated module): the four families and the generator
/// fixture `baregpu-regs` tests itself with.
pub fn generated_files() -> Vec<(PathBuf, PathBuf)> {
    let mut files: Vec<(PathBuf, PathBuf)> = FAMILIES
        .iter()
        .map(|f| (database_path(f), generated_dir().join(format!("{f}.rs"))))
        .collect();
    files.push((
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../regs/fixture/fixture.toml"),
        generated_dir().join("fixture.rs"),
    ));
    files
}

/// Why the generated code could not be produced or written.
#[derive(Debug)]
pub enum RegenError {
    /// A database could not be loaded.
    Load(PathBuf, LoadError),
    /// A database fails its lints (one entry per problem).
    Lint(PathBuf, Vec<LintError>),
    /// A generated file could not be read or written.
    Io(PathBuf, std::io::Error),
}

impl fmt::Display for RegenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegenError::Load(p, e) => write!(f, "{}: {e}", p.display()),
            RegenError::Lint(p, errors) => {
                write!(f, "{} fails its lints:", p.display())?;
                errors.iter().try_for_each(|e| write!(f, "\n  {e}"))
            }
            RegenError::Io(p, e) => write!(f, "{}: {e}", p.display()),
        }
    }
}

impl std::error::Error for RegenError {}

/// The generated module for the database at `db_path`, with the family's `packets` module
/// when it has a packet table (`hal/regdb/packets/<family>.toml`).
pub fn render(db_path: &Path) -> Result<String, RegenError> {
    let db = Database::load(db_path).map_err(|e| RegenError::Load(db_path.into(), e))?;
    let mut code = generate(&db).map_err(|e| RegenError::Lint(db_path.into(), e))?;
    if let Some(path) = packets::packet_table_path(&db.meta.family) {
        let table =
            packets::PacketTable::load(&path).map_err(|e| RegenError::Load(path.clone(), e))?;
        let errors = packets::lint(&table);
        if !errors.is_empty() {
            return Err(RegenError::Lint(path, errors));
        }
        code.push_str(&packets::render(&table));
    }
    Ok(code)
}

/// Generated files whose checked-in text differs from a fresh generation (missing ones too).
pub fn stale_files() -> Result<Vec<PathBuf>, RegenError> {
    let mut stale = Vec::new();
    for (db, out) in generated_files() {
        let fresh = render(&db)?;
        if std::fs::read_to_string(&out).ok().as_deref() != Some(fresh.as_str()) {
            stale.push(out);
        }
    }
    Ok(stale)
}

/// Rewrite every stale generated file; returns the ones written.
pub fn regenerate() -> Result<Vec<PathBuf>, RegenError> {
    let mut written = Vec::new();
    for (db, out) in generated_files() {
        let fresh = render(&db)?;
        if std::fs::read_to_string(&out).ok().as_deref() != Some(fresh.as_str()) {
            std::fs::write(&out, fresh).map_err(|e| RegenError::Io(out.clone(), e))?;
            written.push(out);
        }
    }
    Ok(written)
}
