//! `regdb`: lint the register databases, report their coverage, and keep the generated register
//! modules (`hal/regs/src/generated/`) in step with them.
//!
//! ```text
//! regdb coverage      # per-family counts (the README's main command prints this)
//! regdb lint          # lint every family; exit 1 on any problem
//! regdb generate      # rewrite the stale generated modules (what `cargo xtask regen` runs)
//! regdb check         # exit 1 if a generated module is stale (the tests check it too)
//! ```

#![forbid(unsafe_code)]

use regdb_gen::{Database, FAMILIES, coverage, database_path, lint};
use std::process::ExitCode;

fn load_all() -> Result<Vec<Database>, String> {
    FAMILIES
        .iter()
        .map(|f| {
            let path = database_path(f);
            Database::load(&path).map_err(|e| format!("{}: {e}", path.display()))
        })
        .collect()
}

fn main() -> ExitCode {
    let command = std::env::args().nth(1).unwrap_or_else(|| "coverage".into());
    match command.as_str() {
        "generate" => {
            return match regdb_gen::regenerate() {
                Ok(written) => {
                    for path in &written {
                        println!("regdb: wrote {}", path.display());
                    }
                    println!("regdb generate: {} files rewritten", written.len());
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("regdb: {e}");
                    ExitCode::FAILURE
                }
            };
        }
        "check" => {
            return match regdb_gen::stale_files() {
                Ok(stale) => {
                    for path in &stale {
                        eprintln!("regdb: {} is stale (run `cargo xtask regen`)", path.display());
                    }
                    if stale.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE }
                }
                Err(e) => {
                    eprintln!("regdb: {e}");
                    ExitCode::FAILURE
                }
            };
        }
        _ => {}
    }
    let dbs = match load_all() {
        Ok(dbs) => dbs,
        Err(e) => {
            eprintln!("regdb: {e}");
            return ExitCode::FAILURE;
        }
    };
    match command.as_str() {
        "coverage" => {
            let rows: Vec<_> = dbs.iter().map(coverage::Coverage::of).collect();
            print!("{}", coverage::table(&rows));
            ExitCode::SUCCESS
        }
        "lint" => {
            let errors: Vec<_> = dbs.iter().flat_map(lint).collect();
            for e in &errors {
                eprintln!("{e}");
            }
            println!("regdb lint: {} families, {} problems", dbs.len(), errors.len());
            if errors.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE }
        }
        other => {
            eprintln!(
                "regdb: unknown command {other:?} (expected `coverage`, `lint`, `generate` or `check`)"
            );
            ExitCode::from(2)
        }
    }
}
