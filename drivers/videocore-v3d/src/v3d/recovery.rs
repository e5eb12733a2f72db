//! Reset with `baregpu-gpu`'s protocol: both control list threads stopped and reset, the
//! user program queue emptied, counters cleared, then the register test, and only then the
//! fences of the lost work complete with `FenceFailure::Lost`. QPUs already running a user
//! program are not stopped by any register the document describes: their programs run to
//! their end (or forever); a fence of one is failed all the same.

use baregpu_gpu::recovery::{self, Recovery};
use baregpu_gpu::{DeviceGone, ResetReport, Timeline};
use baregpu_hal::RegisterIo;
use baregpu_hal::time::Clock;

use super::{V3d, check_alive};
use crate::error::InitError;

impl<IO: RegisterIo, C: Clock> V3d<'_, IO, C> {
    /// Stop everything and start again; the fences of the work in flight complete with
    /// `FenceFailure::Lost` once the register test passed.
    pub fn reset(&mut self) -> Result<ResetReport, InitError> {
        let (_, report) = recovery::recover(self, |v3d: &mut Self| -> Result<(), InitError> {
            v3d.quiesce();
            v3d.fences.clear(v3d.timeline.last_signalled());
            if v3d.interrupts {
                v3d.enable_interrupts()?;
            } else {
                v3d.disable_interrupts();
            }
            v3d.clear_caches();
            Ok(())
        })?;
        self.stats.resets += 1;
        self.stats.failed_fences += report.lost.map_or(0, |l| l.count());
        Ok(report)
    }
}

impl<IO: RegisterIo, C: Clock> Recovery for V3d<'_, IO, C> {
    type TestError = InitError;

    fn check_alive(&self) -> Result<(), DeviceGone> {
        check_alive(&self.io)
    }

    fn ring_test(&mut self) -> Result<(), InitError> {
        self.register_test()
    }

    fn timeline(&self) -> &Timeline {
        &self.timeline
    }

    fn read_completed(&self) -> u64 {
        self.read_counters()
    }
}
