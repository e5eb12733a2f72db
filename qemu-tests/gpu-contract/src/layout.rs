//! The driver layout every family follows (issue #17 §5): one module per concern and no import
//! cycle. Drivers' tests read their own sources with [`module_graph`] and check the layering.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Module -> the modules its code names through `crate::`, for the crate sources in `src`: a
/// top-level module and its children (`r5xx/*`) are one node, `lib.rs` (declarations and
/// re-exports) is not a node, comments are skipped.
pub fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(src).expect("readable sources") {
        let path = entry.expect("readable sources").path();
        if path.is_dir() {
            let node = path
                .file_name()
                .expect("readable sources")
                .to_str()
                .expect("readable sources")
                .to_owned();
            for child in std::fs::read_dir(&path).expect("readable sources") {
                files.push((node.clone(), child.expect("readable sources").path()));
            }
        } else if path.file_name().expect("readable sources") != "lib.rs" {
            files.push((
                path.file_stem()
                    .expect("readable sources")
                    .to_str()
                    .expect("readable sources")
                    .to_owned(),
                path,
            ));
        }
    }
    let modules: BTreeSet<String> = files.iter().map(|(m, _)| m.clone()).collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, path) in &files {
        let text = std::fs::read_to_string(path).expect("readable sources");
        let edges = graph.entry(module.clone()).or_default();
        for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
            let mut rest = line;
            while let Some(at) = rest.find("crate::") {
                rest = &rest[at + "crate::".len()..];
                let name: String =
                    rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if modules.contains(&name) && name != *module {
                    edges.insert(name);
                }
            }
        }
    }
    graph
}

/// Whether `from` reaches `to` through the graph's edges.
pub fn reaches(graph: &BTreeMap<String, BTreeSet<String>>, from: &str, to: &str) -> bool {
    let mut seen = BTreeSet::new();
    let mut stack = vec![from.to_owned()];
    while let Some(m) = stack.pop() {
        for next in graph.get(&m).into_iter().flatten() {
            if next == to {
                return true;
            }
            if seen.insert(next.clone()) {
                stack.push(next.clone());
            }
        }
    }
    false
}
