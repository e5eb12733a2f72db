//! The driver's modules follow the layout of the other drivers (issue #17 §5): one concern
//! each, no import cycle, and the bottom modules (errors, identity, jobs, the pool, user
//! program requests) know nothing of the running driver.

use std::path::Path;

use gpu_contract::layout::{module_graph, reaches};

#[test]
fn no_import_cycle_and_the_bottom_knows_no_driver() {
    let graph = module_graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    // The parser sees the edges the layering is made of (else the test proves nothing).
    for (from, to) in [("v3d", "job"), ("v3d", "pool"), ("v3d", "program"), ("pool", "job")] {
        assert!(graph[from].contains(to), "{from} uses {to}: {graph:?}");
    }
    for module in graph.keys() {
        assert!(!reaches(&graph, module, module), "{module} is on an import cycle: {graph:?}");
    }
    for bottom in ["error", "identity", "job", "pool", "program"] {
        assert!(!reaches(&graph, bottom, "v3d"), "{bottom} reaches the driver: {graph:?}");
    }
}
