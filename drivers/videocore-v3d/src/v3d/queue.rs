//! The family-generic interface ([`GpuQueue`]) over this driver: a render job and a batch of
//! user programs are submissions with fences, so a scheduler drives a V3D like any other
//! family.

use core::time::Duration;

use baregpu_gpu::wait;
use baregpu_gpu::{DeviceGone, Fence, FenceError, GpuQueue, ResetReport, Stats, Timeline};
use baregpu_hal::RegisterIo;
use baregpu_hal::time::Clock;

use super::V3d;
use super::submit::Submission;
use crate::error::{BuildError, InitError, SubmitError};

impl<IO: RegisterIo, C: Clock> GpuQueue for V3d<'_, IO, C> {
    type Submission<'s>
        = Submission<'s>
    where
        Self: 's;
    type BuildError = BuildError;
    type SubmitError = SubmitError;
    type ResetError = InitError;

    /// A fence takes one item of a submission.
    const FENCE_UNITS: usize = 1;

    fn submit<T>(
        &mut self,
        units: usize,
        build: impl FnOnce(&mut Submission<'_>) -> Result<T, BuildError>,
    ) -> Result<T, SubmitError> {
        V3d::submit(self, units, build)
    }

    fn fence(submission: &mut Submission<'_>) -> Result<Fence, BuildError> {
        submission.fence()
    }

    fn timeline(&self) -> &Timeline {
        &self.timeline
    }

    /// Reads the completion counters (registers: the V3D writes nothing back to memory).
    fn poll_completed(&self) -> u64 {
        self.timeline.observe(self.read_counters())
    }

    /// The shared wait: a stall for overflow memory or a control list error shows as a
    /// timeout here; [`V3d::wait`] names them.
    fn wait(&self, fence: &Fence, timeout: Duration) -> Result<(), FenceError> {
        wait::wait(self, &self.timeline, &self.clock, fence, timeout)
    }

    /// No interrupt test: the V3D has no way to raise an interrupt without running a job
    /// (the document describes none), so enabling cannot prove the path works.
    fn set_fence_interrupts(&mut self, enabled: bool) -> Result<(), InitError> {
        if enabled {
            self.enable_interrupts()?;
        } else {
            self.check_alive()?;
            self.disable_interrupts();
            self.interrupts = false;
        }
        Ok(())
    }

    fn handle_interrupts(&mut self) -> Result<u64, DeviceGone> {
        V3d::handle_interrupts(self).map(|r| r.completed)
    }

    fn reset(&mut self) -> Result<ResetReport, InitError> {
        V3d::reset(self)
    }

    fn check_alive(&self) -> Result<(), DeviceGone> {
        V3d::check_alive(self)
    }

    fn stats(&self) -> Stats {
        V3d::stats(self)
    }
}
