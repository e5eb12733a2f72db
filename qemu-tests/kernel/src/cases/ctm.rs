//! `ctm-*`: ATI CTM compute on the emulated R520 through the R5xx driver: DPP programs
//! assembled in the guest, command buffers dispatched through the ring, outputs compared
//! element by element with the guest CPU's results (`examples/ctm-compute`).

use super::r5xx::{FIRMWARE, attach, init};
use super::{CaseError, expect, expect_eq};
use crate::Kernel;
use baregpu_radeon_r5xx::RingConfig;
use ctm_compute::{Report, WorkloadError};
use defmt::Display2Format;

fn workload(what: &'static str, r: Result<Report, WorkloadError>) -> Result<Report, CaseError> {
    match r {
        Ok(report) => {
            defmt::info!(
                "{=str}: {=u32} elements, {=u32} values match the CPU, checksum {=u32:#010x}, first {=[?]}",
                report.name,
                report.elements,
                report.checked,
                report.checksum,
                &report.first[..]
            );
            Ok(report)
        }
        Err(e) => {
            defmt::error!("FAILED: {=str}: {}", what, Display2Format(&e));
            Err(CaseError::Check(what))
        }
    }
}

macro_rules! case {
    ($(#[$doc:meta])* $name:ident, $workload:path, $elements:expr) => {
        $(#[$doc])*
        pub fn $name(kernel: &Kernel) -> Result<(), CaseError> {
            let mailbox = attach(kernel)?;
            let mut gpu = init(kernel, mailbox, RingConfig::default())?;
            let report = workload(stringify!($name), $workload(&mut gpu, kernel.dma))?;
            expect_eq("elements computed", report.elements, $elements as u32)?;
            expect_eq("command buffers consumed", gpu.ctm_status().consumed, 1u16)
        }
    };
}

case!(
    /// `ctm-vector-add`: out = in0 + in1 over 64x16 elements.
    vector_add, ctm_compute::vector_add, 64 * 16
);
case!(
    /// `ctm-saxpy`: out = a * x + y over 64x64 elements, `a` from a float constant.
    saxpy, ctm_compute::saxpy, 64 * 64
);
case!(
    /// `ctm-stencil`: 4-point stencil over a tiled 64x32 input (interior domain).
    stencil, ctm_compute::stencil, 62 * 30
);
case!(
    /// `ctm-reduce`: 2x2 reduction gated by the Conditional Output unit.
    reduce, ctm_compute::reduce, 16 * 16
);

/// `ctm-units`: flush/invalidate and the performance counters observed through memory; a
/// missing `wait_for_idle` is a typed fault; function-level reset and recovery.
pub fn units(kernel: &Kernel) -> Result<(), CaseError> {
    let mailbox = attach(kernel)?;
    let mut gpu = init(kernel, mailbox, RingConfig::default())?;
    let units = ctm_compute::caches_and_counters(&mut gpu, kernel.dma).map_err(|e| {
        defmt::error!("FAILED: units: {}", Display2Format(&e));
        CaseError::Check("caches and counters")
    })?;
    defmt::info!(
        "ctm-units: outputs visible before flush_out_cache {=u32}, after {=u32}; stale inputs without inv_inp_cache {=u32}, fresh after {=u32}; perf counters total {=u32} active {=u32}",
        units.visible_before_flush,
        units.visible_after_flush,
        units.stale_without_invalidate,
        units.fresh_after_invalidate,
        units.counters[0],
        units.counters[1]
    );
    let mut reset = Ok(());
    let report = ctm_compute::not_idle_fault(&mut gpu, kernel.dma, FIRMWARE, || {
        reset = mailbox.reset();
    });
    reset?;
    workload("not-idle fault, recovery, vector add", report)?;
    expect("recovered once", gpu.stats().recoveries == 1)
}

/// `ctm-demo` (the main command): SAXPY, with its checksum and first elements.
pub fn demo(kernel: &Kernel) -> Result<(), CaseError> {
    let mailbox = attach(kernel)?;
    let mut gpu = init(kernel, mailbox, RingConfig::default())?;
    let report = workload("saxpy", ctm_compute::saxpy(&mut gpu, kernel.dma))?;
    defmt::info!(
        "ctm-demo: SAXPY y = {=f32} * x + y on the R520's DPP array: {=u32} elements checked, checksum {=u32:#010x}, first elements {=f32} {=f32} {=f32} {=f32}",
        ctm_compute::SAXPY_A,
        report.checked,
        report.checksum,
        report.first[0],
        report.first[1],
        report.first[2],
        report.first[3]
    );
    Ok(())
}
