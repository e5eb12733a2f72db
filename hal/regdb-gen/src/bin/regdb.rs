//! `regdb`: lint the register databases and report their coverage.
//!
//! ```text
//! regdb coverage      # per-family counts (the README's main command prints this)
//! regdb lint          # lint every family; exit 1 on any problem
//! ```

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
            eprintln!("regdb: unknown command {other:?} (expected `coverage` or `lint`)");
            ExitCode::from(2)
        }
    }
}
