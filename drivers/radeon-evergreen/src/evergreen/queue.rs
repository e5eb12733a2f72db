//! The family-generic interface ([`GpuQueue`]) over this driver, so a scheduler drives an
//! Evergreen/Cayman like any other family.

use core::time::Duration;

use baregpu_gpu::wait::{self, FenceSource};
use baregpu_gpu::{DeviceGone, Fence, FenceError, GpuQueue, ResetReport, Stats, Timeline};
use baregpu_hal::RegisterIo;
use baregpu_hal::dma::DmaAllocator;
use baregpu_hal::time::Clock;

use super::Evergreen;
use super::submit::Submission;
use crate::consts::FENCE_DWORDS;
use crate::error::{InitError, SubmitError};
use crate::irq::IrqError;
use crate::pm4::PacketError;

impl<'d, IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> GpuQueue for Evergreen<'d, IO, C, A> {
    type Submission<'s>
        = Submission<'s, 'd, A>
    where
        Self: 's;
    type BuildError = PacketError;
    type SubmitError = SubmitError;
    type ResetError = InitError;

    const FENCE_UNITS: usize = FENCE_DWORDS;

    fn submit<T>(
        &mut self,
        units: usize,
        build: impl FnOnce(&mut Submission<'_, 'd, A>) -> Result<T, PacketError>,
    ) -> Result<T, SubmitError> {
        Evergreen::submit(self, units, build)
    }

    fn fence(submission: &mut Submission<'_, 'd, A>) -> Result<Fence, PacketError> {
        submission.fence()
    }

    fn timeline(&self) -> &Timeline {
        &self.timeline
    }

    /// Reads the fence write-back (DMA memory, §9.6.2), no register access.
    fn poll_completed(&self) -> u64 {
        self.timeline.observe(FenceSource::read_completed(self))
    }

    /// Checks every few polls that the device still answers. On a timeout, tells a slow CP
    /// (read pointer or fences moved) from a hung one; [`FenceError::Failed`] if a reset
    /// discarded its work.
    fn wait(&self, fence: &Fence, timeout: Duration) -> Result<(), FenceError> {
        wait::wait(self, &self.timeline, &self.clock, fence, timeout)
    }

    fn set_fence_interrupts(&mut self, enabled: bool) -> Result<(), InitError> {
        self.check_alive()?;
        if enabled {
            return self.enable_interrupts();
        }
        self.disable_interrupts();
        Ok(())
    }

    fn handle_interrupts(&mut self) -> Result<u64, DeviceGone> {
        match Evergreen::handle_interrupts(self) {
            Ok(report) => Ok(report.completed),
            Err(IrqError::DeviceGone(gone)) => Err(gone),
            // An impossible IH write pointer consumed nothing (the ring resynchronised); the
            // completion is read from memory all the same.
            Err(_) => Ok(self.poll_completed()),
        }
    }

    fn reset(&mut self) -> Result<ResetReport, InitError> {
        Evergreen::reset(self)
    }

    fn check_alive(&self) -> Result<(), DeviceGone> {
        Evergreen::check_alive(self)
    }

    fn stats(&self) -> Stats {
        Evergreen::stats(self)
    }
}
