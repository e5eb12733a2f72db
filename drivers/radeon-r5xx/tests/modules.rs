//! The driver's modules have one concern each and no import cycle (issue #11 §5): a module
//! graph from the `crate::` paths in each module's code (comments excluded), where a top-level
//! module and its children (`r5xx/*`) are one node and `lib.rs` (declarations and re-exports)
//! is not a node.

use std::path::Path;

use gpu_contract::layout::{module_graph, reaches};

#[test]
fn no_module_imports_one_that_imports_it_back() {
    let graph = module_graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
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
    let graph = module_graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    for top in ["pio", "ctm"] {
        assert!(!reaches(&graph, "r5xx", top), "r5xx reaches {top}: {graph:?}");
    }
    for bottom in ["consts", "config", "error", "liveness"] {
        for above in ["r5xx", "pio", "ctm"] {
            assert!(!reaches(&graph, bottom, above), "{bottom} reaches {above}: {graph:?}");
        }
    }
}
