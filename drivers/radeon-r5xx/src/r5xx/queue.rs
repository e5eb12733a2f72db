//! The family-generic interface ([`GpuQueue`]) over this driver, so a scheduler drives an R5xx
//! like any other family.

use core::time::Duration;

use baregpu_gpu::wait::{self, FenceSource};
use baregpu_gpu::{DeviceGone, Fence, FenceError, GpuQueue, ResetReport, Stats, Timeline};
use baregpu_hal::RegisterIo;
use baregpu_hal::dma::DmaAllocator;
use baregpu_hal::time::Clock;

use super::R5xx;
use super::interrupts::Interrupts;
use super::submit::Submission;
use crate::consts::{FENCE_DWORDS, REG_WRITE_DWORDS};
use crate::error::{ResetError, SubmitError};

impl<'d, IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> GpuQueue for R5xx<'d, IO, C, A> {
    type Submission<'s>
        = Submission<'s, 'd, IO, C, A>
    where
        Self: 's;
    type BuildError = SubmitError;
    type SubmitError = SubmitError;
    type ResetError = ResetError;

    /// The fence, and the software interrupt after it when fence interrupts are on.
    const FENCE_UNITS: usize = FENCE_DWORDS + REG_WRITE_DWORDS;

    fn submit<T>(
        &mut self,
        units: usize,
        build: impl FnOnce(&mut Submission<'_, 'd, IO, C, A>) -> Result<T, SubmitError>,
    ) -> Result<T, SubmitError> {
        R5xx::submit(self, units, build)
    }

    fn fence(submission: &mut Submission<'_, 'd, IO, C, A>) -> Result<Fence, SubmitError> {
        let fence = submission.fence()?;
        // R5xx has no fence interrupt of its own: the software interrupt after the fence's
        // scratch write fires once the CP passed it (`GEN_INT_STATUS.SW_INT`).
        if submission.fence_interrupts() {
            submission.software_interrupt()?;
        }
        Ok(fence)
    }

    fn timeline(&self) -> &Timeline {
        &self.timeline
    }

    /// Reads the fence write-back (DMA memory, §5.9), no register access.
    fn poll_completed(&self) -> u64 {
        self.timeline.observe(FenceSource::read_completed(self))
    }

    /// [`FenceError::Timeout`] carries the last signalled sequence number: the CP is hung or
    /// stalled, call [`reset`](Self::reset). [`FenceError::Failed`] if a reset discarded its
    /// work. [`FenceError::DeviceGone`] if the registers read all-ones (checked every
    /// [`LIVENESS_CHECK_EVERY`](baregpu_gpu::liveness::LIVENESS_CHECK_EVERY) polls and at the
    /// deadline).
    fn wait(&self, fence: &Fence, timeout: Duration) -> Result<(), FenceError> {
        wait::wait(self, &self.timeline, &self.clock, fence, timeout)
    }

    fn set_fence_interrupts(&mut self, enabled: bool) -> Result<(), ResetError> {
        self.check_alive()?;
        let which = Interrupts { software: enabled, ..self.interrupts };
        Ok(self.enable_interrupts(which)?)
    }

    fn handle_interrupts(&mut self) -> Result<u64, DeviceGone> {
        R5xx::handle_interrupts(self)?;
        Ok(self.poll_completed())
    }

    fn reset(&mut self) -> Result<ResetReport, ResetError> {
        R5xx::reset(self)
    }

    fn check_alive(&self) -> Result<(), DeviceGone> {
        crate::liveness::check_alive(&self.io)
    }

    fn stats(&self) -> Stats {
        R5xx::stats(self)
    }
}
