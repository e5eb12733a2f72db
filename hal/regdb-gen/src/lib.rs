//! Register database tooling: load `hal/regdb/<family>.toml`, lint it, and generate typed
//! register blocks (used by the `baregpu-regs` build script).

pub mod codegen;
pub mod coverage;
pub mod lint;
pub mod model;

pub use codegen::generate;
pub use lint::{LintError, lint};
pub use model::{Access, Block, Database, EnumValue, Field, LoadError, Meta, Register};

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
