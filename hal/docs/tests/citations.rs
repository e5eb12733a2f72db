//! Facts the hardware documents omit are cited by their public origin ("Linux radeon
//! evergreend.h", "envytools rnndb", "Mesa r600"), never by a file outside the repository: a
//! user's clone has no `../shared`, so such a citation points nowhere. This walks every source,
//! database, script and document of the repository and fails on a citation of the project's
//! private design notes. (Where the hardware documents themselves are looked for,
//! `../shared/docs`, is a search path, not a citation, and stays allowed.)

use std::path::{Path, PathBuf};

/// Names of design notes that exist only beside the repository, never in a user's clone.
const PRIVATE: &[&str] = &[
    "hardware-facts",
    "shared/design",
    "evergreen-compute.md",
    "nvidia-tesla.md",
    "videocore-v3d.md",
    "anchors.md",
];

/// Directories that hold no hand-written text: build output, VCS data, fuzz corpora.
const SKIP_DIRS: &[&str] = &["target", ".git", "corpus", "artifacts"];

const TEXT: &[&str] = &["rs", "toml", "md", "py", "sh", "txt", "json", "ld", "s"];

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let path = e.path();
        let name = e.file_name();
        let name = name.to_string_lossy();
        if path.is_dir() {
            if !SKIP_DIRS.contains(&name.as_ref()) {
                walk(&path, out);
            }
        } else if path.extension().is_some_and(|x| TEXT.iter().any(|t| x == *t)) {
            out.push(path);
        }
    }
}

#[test]
fn no_citation_points_outside_the_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let this = Path::new(file!()).file_name().unwrap();
    let mut files = Vec::new();
    walk(&root, &mut files);
    assert!(files.len() > 100, "walked {} files from {}", files.len(), root.display());
    let mut bad = Vec::new();
    for f in files.iter().filter(|f| f.file_name() != Some(this)) {
        let Ok(text) = std::fs::read_to_string(f) else { continue };
        for (n, line) in text.lines().enumerate() {
            if PRIVATE.iter().any(|p| line.contains(p)) {
                let shown = f.strip_prefix(&root).unwrap_or(f).display().to_string();
                bad.push(format!("{shown}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "cite the public origin (e.g. \"Linux radeon r100.c\", \"envytools rnndb\") instead:\n{}",
        bad.join("\n")
    );
}
