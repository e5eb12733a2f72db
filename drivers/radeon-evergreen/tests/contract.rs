//! The family-generic contract suite (`gpu-contract`, issue #17 §1) over the Evergreen driver
//! and its in-process Cypress and Cayman models.

mod common;

use std::time::Duration;

use baregpu_radeon_evergreen::Submission;
use baregpu_radeon_evergreen::pm4::PacketError;
use common::*;
use gpu_contract::Fixture;

/// The scratch register the suite writes (the ring and IB tests use 0).
const MARKER_SCRATCH: usize = 1;

struct EvergreenFixture<'a> {
    gpu: &'a Gpu,
    drv: Driver<'a>,
}

impl<'a> Fixture for EvergreenFixture<'a> {
    type Queue = Driver<'a>;

    fn queue(&mut self) -> &mut Driver<'a> {
        &mut self.drv
    }
    fn set_stalled(&self, stalled: bool) {
        set_faults(self.gpu, |f| f.cp_stall = stalled);
    }
    fn set_gone(&self, gone: bool) {
        set_faults(self.gpu, |f| f.registers_all_ones = gone);
    }
    fn run_device(&self) {
        self.gpu.poll();
    }
    fn take_interrupts(&self) -> u32 {
        self.gpu.take_interrupts()
    }
    /// `SET_CONFIG_REG` of a scratch register (§9.4.14): header, offset, value.
    const MARKER_UNITS: usize = 3;
    fn write_marker(s: &mut Submission<'_, 'a, Gpu>, value: u32) -> Result<(), PacketError> {
        s.set_scratch(MARKER_SCRATCH, value)
    }
    fn read_marker(&self) -> u32 {
        self.drv.scratch(MARKER_SCRATCH).expect("a scratch register")
    }
    fn closure_error() -> PacketError {
        PacketError::BadLength { dwords: 0 }
    }
    fn ring_units(&self) -> usize {
        self.drv.ring().size_dwords()
    }
    const TIMEOUT: Duration = FENCE_TIMEOUT;
}

fn with_evergreen(test: impl Fn(&mut EvergreenFixture<'_>)) {
    for (chip, asic) in CHIPS {
        let gpu = gpu(asic);
        let drv = init(&gpu, chip, &Images::of(chip), small_ring());
        test(&mut EvergreenFixture { gpu: &gpu, drv });
    }
}

gpu_contract::contract_suite!(with_evergreen);
