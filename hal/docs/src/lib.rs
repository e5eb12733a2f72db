//! `gpu-docs`: where the hardware documents are, for the checks that read them.
//!
//! The documents (see the README's "Hardware documents" for their public origins) are not part
//! of the repository. They are looked for in `$GPU_DOCS_DIR`, then in `shared/docs` beside the
//! repository (`../shared/docs`). A clone without them builds and tests everything else; the
//! checks that need them are skipped and counted as skipped by `cargo xtask test`.
//!
//! # The rule for a check that reads a document
//!
//! A Rust test gets the text with [`document`] and returns when it is `None`:
//!
//! ```no_run
//! // #[test]
//! fn every_opcode_of_the_summary_table_is_named() {
//!     let Some(doc) = gpu_docs::document("amd-r5xx-acceleration.txt") else { return };
//!     assert!(doc.contains("6.2.1"));
//! }
//! ```
//!
//! Where the documents are absent, [`document`] records the test as skipped (in the file
//! named by `$GPU_DOCS_SKIP_LOG`, which `cargo xtask test` reads to count it as skipped and
//! not passed; without it, one line on stderr says so) and returns `None`. Under `CI=true` it
//! panics instead: CI must run every check. A present document directory missing the named
//! file is a failure too (a typo, or an incomplete copy), never a skip.

#![forbid(unsafe_code)]

use std::io::Write;
use std::path::{Path, PathBuf};

/// The environment variable naming the document directory.
pub const DOCS_DIR_ENV: &str = "GPU_DOCS_DIR";

/// The environment variable naming the file skipped checks are recorded in (one line each:
/// the test binary and the test).
pub const SKIP_LOG_ENV: &str = "GPU_DOCS_SKIP_LOG";

/// The documents a complete directory holds.
pub const DOCUMENTS: [&str; 5] = [
    "amd-r5xx-acceleration.txt",
    "ati-ctm-guide.txt",
    "amd-evergreen-cayman-acceleration.txt",
    "nvidia-hardware-envytools.txt",
    "broadcom-videocore-iv-3d.txt",
];

/// The repository root (this crate is `hal/docs` in it).
pub fn repo_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.ancestors().nth(2).unwrap_or(manifest).to_path_buf()
}

/// Where the documents would be: `$GPU_DOCS_DIR` if set, else `../shared/docs` beside the
/// repository (whether it exists or not).
pub fn expected_dir() -> PathBuf {
    match std::env::var_os(DOCS_DIR_ENV) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => {
            let root = repo_root();
            root.parent().unwrap_or(&root).join("shared/docs")
        }
    }
}

/// The document directory, if it exists.
pub fn docs_dir() -> Option<PathBuf> {
    let dir = expected_dir();
    dir.is_dir().then_some(dir)
}

/// Whether `CI=true`: missing documents are then a failure, not a skip.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// The text of document `name` (a file name of [`DOCUMENTS`]), or `None` where the documents
/// are absent (see the crate documentation for what the caller does then).
///
/// # Panics
///
/// If the documents are absent under `CI=true`, if the directory exists without `name`, or if
/// the file cannot be read.
pub fn document(name: &str) -> Option<String> {
    let Some(dir) = docs_dir() else {
        let expected = expected_dir();
        assert!(
            !in_ci(),
            "hardware documents not found at {} (CI=true needs them; set {DOCS_DIR_ENV})",
            expected.display()
        );
        record_skip(name, &expected);
        return None;
    };
    let path = dir.join(name);
    match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(e) => panic!("{}: {e} (the document directory is incomplete)", path.display()),
    }
}

fn record_skip(name: &str, expected: &Path) {
    let test = std::thread::current().name().unwrap_or("?").to_owned();
    let binary = std::env::args().next().unwrap_or_default();
    let binary = Path::new(&binary).file_name().map(|n| n.to_string_lossy().into_owned());
    let line = format!("{} {test}\n", binary.unwrap_or_default());
    if let Some(log) = std::env::var_os(SKIP_LOG_ENV) {
        let file = std::fs::OpenOptions::new().create(true).append(true).open(&log);
        // One write of one line: concurrent tests append whole lines.
        if file.and_then(|mut f| f.write_all(line.as_bytes())).is_ok() {
            return;
        }
    }
    // Written to the process's stderr directly, past the test harness's output capture.
    let _ = writeln!(
        std::io::stderr(),
        "gpu-docs: {test} skipped: {name} not found ({} absent; set {DOCS_DIR_ENV})",
        expected.display()
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_directory_is_gpu_docs_dir_or_shared_docs_beside_the_repository() {
        // Only the default is checked: the environment is the caller's.
        if std::env::var_os(DOCS_DIR_ENV).is_none() {
            let beside = repo_root().parent().map(|p| p.join("shared/docs"));
            assert_eq!(Some(expected_dir()), beside);
        }
        assert!(repo_root().join("Cargo.toml").is_file());
        if let Some(dir) = docs_dir() {
            for name in DOCUMENTS {
                assert!(dir.join(name).is_file(), "{name} missing from {}", dir.display());
            }
        }
    }
}
