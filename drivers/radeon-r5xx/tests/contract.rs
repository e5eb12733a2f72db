//! The family-generic contract suite (`gpu-contract`, issue #17 §1) over the R5xx driver and
//! its in-process R520 model.

mod common;

use std::time::Duration;

use baregpu_radeon_r5xx::{Submission, SubmitError, USER_SCRATCH};
use baregpu_regs::r5xx::cp::SCRATCH_REG0;
use baregpu_ring::pm4::{NoSpace, Pm4Error};
use common::*;
use gpu_contract::Fixture;

struct R5xxFixture<'a> {
    gpu: &'a Gpu,
    drv: Driver<'a>,
}

impl<'a> Fixture for R5xxFixture<'a> {
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
    /// A type-0 write of the user scratch register (written back, §5.9).
    const MARKER_UNITS: usize = 2;
    fn write_marker(
        s: &mut Submission<'_, 'a, &'a Gpu, ModelClock<'a>, Gpu>,
        value: u32,
    ) -> Result<(), SubmitError> {
        s.reserve(2)?;
        s.writer().write_reg_at(USER_SCRATCH, SCRATCH_REG0::RESET.with_scratch_reg0(value))?;
        Ok(())
    }
    fn read_marker(&self) -> u32 {
        self.drv.scratch_writeback(USER_SCRATCH).expect("a scratch register")
    }
    fn closure_error() -> SubmitError {
        SubmitError::Packet(Pm4Error::NoSpace(NoSpace { needed: 1, free: 0 }))
    }
    fn ring_units(&self) -> usize {
        self.drv.ring().size_dwords()
    }
    const TIMEOUT: Duration = FENCE_TIMEOUT;
}

fn with_r5xx(test: impl Fn(&mut R5xxFixture<'_>)) {
    let gpu = gpu();
    let drv = init(&gpu, small_ring());
    test(&mut R5xxFixture { gpu: &gpu, drv });
}

gpu_contract::contract_suite!(with_r5xx);
