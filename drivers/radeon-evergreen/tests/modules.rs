//! The driver's modules follow the R5xx layout (issue #17 §5): one concern each and no import
//! cycle (the old `driver.rs` <-> `irq.rs` circle is gone), the bottom modules know no driver,
//! the driver core does not know compute or sync.

use std::path::Path;

use gpu_contract::layout::{module_graph, reaches};

#[test]
fn no_module_imports_one_that_imports_it_back() {
    let graph = module_graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    // The parser sees the edges the layering is made of (else the tests prove nothing).
    for (from, to) in
        [("compute", "pm4"), ("evergreen", "irq"), ("evergreen", "liveness"), ("irq", "consts")]
    {
        assert!(graph[from].contains(to), "{from} uses {to}: {graph:?}");
    }
    for module in graph.keys() {
        assert!(!reaches(&graph, module, module), "{module} is on an import cycle: {graph:?}");
    }
}

#[test]
fn the_driver_core_does_not_know_compute_or_sync_and_the_bottom_knows_no_driver() {
    let graph = module_graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    for top in ["compute", "sync"] {
        assert!(!reaches(&graph, "evergreen", top), "evergreen reaches {top}: {graph:?}");
    }
    for bottom in ["consts", "config", "error", "liveness", "pm4", "irq"] {
        for above in ["evergreen", "compute", "sync"] {
            assert!(!reaches(&graph, bottom, above), "{bottom} reaches {above}: {graph:?}");
        }
    }
}
