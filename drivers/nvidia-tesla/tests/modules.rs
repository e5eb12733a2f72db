//! The driver's modules follow the layout of the other drivers (issue #17 §5): one concern
//! each, no import cycle, and the bottom modules (errors, identity, memory, channel layouts)
//! know nothing of the running driver.

use std::path::Path;

use gpu_contract::layout::{module_graph, reaches};

#[test]
fn no_import_cycle_and_the_bottom_knows_no_driver() {
    let graph = module_graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    // The parser sees the edges the layering is made of (else the test proves nothing).
    for (from, to) in [
        ("tesla", "channel"),
        ("tesla", "memory"),
        ("tesla", "identity"),
        ("queue", "tesla"),
        ("falcon", "tesla"),
        ("channel", "memory"),
    ] {
        assert!(graph[from].contains(to), "{from} uses {to}: {graph:?}");
    }
    for module in graph.keys() {
        assert!(!reaches(&graph, module, module), "{module} is on an import cycle: {graph:?}");
    }
    for bottom in ["error", "identity", "memory", "channel", "pci"] {
        for driver in ["tesla", "queue", "falcon"] {
            assert!(!reaches(&graph, bottom, driver), "{bottom} reaches {driver}: {graph:?}");
        }
    }
}
