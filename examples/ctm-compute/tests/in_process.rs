//! The CTM workloads through the driver against the emulated R520 in-process (the same model
//! the QEMU cases use): each output is compared with the host's computation by the workload.
// The closures passed to `run` pick lifetimes the generic fn items cannot.
#![allow(clippy::redundant_closure)]

mod common;

use baregpu_radeon_r5xx::ctm::CtmFault;
use common::*;
use ctm_compute::{
    Report, SAXPY_A, WorkloadError, caches_and_counters, not_idle_fault, reduce, saxpy, stencil,
    vector_add,
};

fn run(w: fn(&mut Driver<'_>, &Gpu) -> Result<Report, WorkloadError>) -> (Report, u16) {
    with_driver(|gpu, drv| {
        let driver_regions = gpu.dma_outstanding();
        let report = w(drv, gpu).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(gpu.dma_outstanding(), driver_regions, "the workload freed its DMA memory");
        (report, gpu.model().ctm_consumed())
    })
}

#[test]
fn vector_add_matches_the_host_element_by_element() {
    let (r, consumed) = run(|d, g| vector_add(d, g));
    assert_eq!((r.elements, r.checked), (64 * 16, 64 * 16));
    assert_eq!(consumed, 1, "one command buffer consumed");
    // a(0,0) + b(0,0) = -20 + 0; a(1,0) + b(1,0) = -13 + 0.75
    assert_eq!(r.first[..2], [-20.0, -12.25]);
}

#[test]
fn saxpy_matches_the_host_and_uses_the_constant() {
    let (r, _) = run(|d, g| saxpy(d, g));
    assert_eq!(r.checked, 64 * 64);
    assert_eq!(r.first[0], SAXPY_A * -20.0);
    assert_eq!(r.first[1], SAXPY_A * -13.0 + 0.75);
}

#[test]
fn stencil_reads_a_tiled_input_and_leaves_the_border_alone() {
    let (r, _) = run(|d, g| stencil(d, g));
    assert_eq!(r.elements, 62 * 30);
    assert_eq!(r.checked, 62 * 30 + 2 * (64 + 32) - 4);
}

#[test]
fn reduction_writes_only_where_the_conditional_test_passes() {
    let (r, _) = run(|d, g| reduce(d, g));
    assert_eq!(r.elements, 16 * 16);
    assert_eq!(r.checked, 2 * 16 * 16, "outputs and the threshold buffer");
}

#[test]
fn checksums_are_reproducible_across_devices() {
    let (a, _) = run(|d, g| saxpy(d, g));
    let (b, _) = run(|d, g| saxpy(d, g));
    assert_eq!(a, b);
}

#[test]
fn flush_invalidate_and_counters_are_observable_in_memory() {
    let units =
        with_driver(|gpu, drv| caches_and_counters(drv, gpu).unwrap_or_else(|e| panic!("{e}")));
    assert_eq!(units.visible_before_flush, 0);
    assert_eq!(units.visible_after_flush, 64);
    assert_eq!(units.stale_without_invalidate, 64);
    assert_eq!(units.fresh_after_invalidate, 64);
    assert!(units.counters[1] > 0 && units.counters[0] >= units.counters[1]);
    assert_eq!(units.counters_stopped, units.counters);
}

#[test]
fn missing_wait_for_idle_is_a_typed_fault_and_the_device_recovers() {
    with_driver(|gpu, drv| {
        let fw = firmware();
        let report =
            not_idle_fault(drv, gpu, &fw, || gpu.reset()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(report.checked, 64 * 16);
        assert_eq!(drv.stats().recoveries, 1);
        assert_eq!(drv.ctm_status().fault, None);
    });
}

#[test]
fn a_program_error_is_reported_from_ctm_status() {
    with_driver(|gpu, drv| {
        // Let the next start_program fail: an input the program reads is not configured.
        let status_before = drv.ctm_status();
        assert_eq!(status_before.fault, None);
        let err = ctm_compute::unconfigured_input(drv, gpu).unwrap_err();
        match err {
            WorkloadError::Wait(baregpu_radeon_r5xx::ctm::CtmWaitError::Fault(
                CtmFault::Program(_),
            )) => {}
            e => panic!("expected a program fault, got {e}"),
        }
        assert!(matches!(drv.ctm_status().fault, Some(CtmFault::Program(_))));
    });
}

#[test]
fn the_loader_accepts_every_assembled_example() {
    use baregpu_ati_ctm::elf::DppExecutable;
    for (name, source) in ctm_compute::examples::ALL {
        let mut insts = [baregpu_dpp_asm::Instruction::default(); 32];
        let mut words = [[0u32; 6]; 32];
        let mut elf = [0u8; 4096];
        let len = baregpu_dpp_asm::assemble_executable(source, &mut insts, &mut words, &mut elf)
            .unwrap_or_else(|e| panic!("{name}: {e:?}"));
        let exe = DppExecutable::parse(&elf[..len]).unwrap_or_else(|e| panic!("{name}: {e}"));
        let n = baregpu_dpp_asm::assemble(source, &mut insts).unwrap();
        assert_eq!(exe.instruction_count() as usize, n, "{name}");
        let loaded: Vec<u32> = exe.instruction_words().collect();
        assert_eq!(loaded, words[..n].concat(), "{name}: .text is the encoded program");
        assert_eq!(exe.program_info().code_end() as usize, n - 1, "{name}: US_CODE_ADDR end");
    }
}

#[test]
fn a_buffer_over_the_devices_work_budget_is_a_typed_fault_not_a_hang() {
    with_driver(|gpu, drv| {
        // The emulated part bounds one command buffer's work (CTM_STATUS.ERROR_CODE 0x107);
        // SAXPY 64x64 needs far more than 1,000 units. The driver's fence wait sees the CTM
        // fault, not a timeout.
        let limits = ctm_model::Limits { per_buffer: 1_000, ..ctm_model::Limits::default() };
        gpu.model_mut().set_ctm_limits(limits);
        match saxpy(drv, gpu).unwrap_err() {
            WorkloadError::Wait(baregpu_radeon_r5xx::ctm::CtmWaitError::Fault(
                CtmFault::BufferBudgetExceeded,
            )) => {}
            e => panic!("expected the buffer budget fault, got {e}"),
        }
        assert_eq!(drv.ctm_status().fault, Some(CtmFault::BufferBudgetExceeded));
        assert_eq!(gpu.model().stats().ctm_units, 1_000, "stopped at the budget");
    });
}
