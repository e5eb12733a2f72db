//! The driver's modules have one concern each and no import cycle (issue #11 §5): a module
//! graph from the `crate::` paths in each module's code (comments excluded), where a top-level
//! module and its children (`r5xx/*`) are one node and `lib.rs` (declarations and re-exports)
//! is not a node.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Module -> the modules its code names through `crate::`.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            let node = path.file_name().unwrap().to_str().unwrap().to_owned();
            for child in std::fs::read_dir(&path).unwrap() {
                files.push((node.clone(), child.unwrap().path()));
            }
        } else if path.file_name().unwrap() != "lib.rs" {
            files.push((path.file_stem().unwrap().to_str().unwrap().to_owned(), path));
        }
    }
    let modules: BTreeSet<String> = files.iter().map(|(m, _)| m.clone()).collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, path) in &files {
        let text = std::fs::read_to_string(path).unwrap();
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

fn reaches(graph: &BTreeMap<String, BTreeSet<String>>, from: &str, to: &str) -> bool {
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

#[test]
fn no_module_imports_one_that_imports_it_back() {
    let graph = graph();
    // The parser sees the edges the layering is made of (else the test below proves nothing).
    for (from, to) in [("pio", "r5xx"), ("ctm", "r5xx"), ("r5xx", "liveness"), ("pio", "error")] {
        assert!(graph[from].contains(to), "{from} uses {to}: {graph:?}");
    }
    for module in graph.keys() {
        assert!(!reaches(&graph, module, module), "{module} is on an import cycle: {graph:?}");
    }
}

#[test]
fn the_driver_core_does_not_know_pio_or_ctm_and_the_bottom_knows_no_driver() {
    let graph = graph();
    for top in ["pio", "ctm"] {
        assert!(!reaches(&graph, "r5xx", top), "r5xx reaches {top}: {graph:?}");
    }
    for bottom in ["consts", "config", "error", "liveness"] {
        for above in ["r5xx", "pio", "ctm"] {
            assert!(!reaches(&graph, bottom, above), "{bottom} reaches {above}: {graph:?}");
        }
    }
}
