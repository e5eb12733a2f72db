//! Interim adapters: the Radeon drivers as [`GpuQueue`]s until the drivers implement the trait
//! themselves (issue #17 §1); and [`CheckedWrite`], a job both families run whose result the
//! CPU checks (the host tests' and the `multi-gpu-*` QEMU cases' job). Fence interrupts on R5xx: a software interrupt packet after each
//! fence (the §5.9 scratch-compare interrupt cannot be armed from the documented registers),
//! raised only while `GEN_INT_CNTL.SW_INT_EN` is on.

use core::time::Duration;

use crate::Work;

use baregpu_gpu::{DeviceGone, Fence, FenceError, GpuQueue, ResetReport, Stats, Timeline};
use baregpu_hal::RegisterIo;
use baregpu_hal::dma::{BusAddress, DmaAllocator};
use baregpu_hal::time::Clock;
use baregpu_radeon_evergreen::pm4::PacketError;
use baregpu_radeon_evergreen::{
    Evergreen, FENCE_DWORDS as EVERGREEN_FENCE_DWORDS, InitError,
    Submission as EvergreenSubmission, SubmitError as EvergreenSubmitError,
};
use baregpu_radeon_r5xx::consts::{FENCE_DWORDS, REG_WRITE_DWORDS, USER_SCRATCH};
use baregpu_radeon_r5xx::regs::cp::SCRATCH_REG0;
use baregpu_radeon_r5xx::{Interrupts, R5xx, ResetError, Submission, SubmitError};

/// An R5xx driver as a [`GpuQueue`].
pub struct R5xxQueue<'d, IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized>(
    pub R5xx<'d, IO, C, A>,
);

// `'static` only: `GpuQueue::submit`'s closure takes `Submission<'_>` for every lifetime, and
// the trait's `where Self: 's` then asks `Self: 'static`.
impl<IO, C, A> GpuQueue for R5xxQueue<'static, IO, C, A>
where
    IO: RegisterIo + 'static,
    C: Clock + 'static,
    A: DmaAllocator + ?Sized + 'static,
{
    type Submission<'s>
        = Submission<'s, 'static, IO, C, A>
    where
        Self: 's;
    type BuildError = SubmitError;
    type SubmitError = SubmitError;
    type ResetError = ResetError;

    fn submit<T>(
        &mut self,
        units: usize,
        build: impl FnOnce(&mut Self::Submission<'_>) -> Result<T, SubmitError>,
    ) -> Result<T, SubmitError> {
        self.0.submit(units, build)
    }

    fn fence(submission: &mut Self::Submission<'_>) -> Result<Fence, SubmitError> {
        let fence = submission.fence()?;
        submission.software_interrupt()?;
        Ok(fence)
    }

    const FENCE_UNITS: usize = FENCE_DWORDS + REG_WRITE_DWORDS;

    fn timeline(&self) -> &Timeline {
        self.0.timeline()
    }

    fn poll_completed(&self) -> u64 {
        self.0.poll_completed()
    }

    fn wait(&self, fence: &Fence, timeout: Duration) -> Result<(), FenceError> {
        self.0.wait(fence, timeout)
    }

    fn set_fence_interrupts(&mut self, enabled: bool) -> Result<(), DeviceGone> {
        self.check_alive()?;
        self.0.enable_interrupts(Interrupts { software: enabled, scratch: false });
        Ok(())
    }

    fn handle_interrupts(&mut self) -> Result<u64, DeviceGone> {
        self.0.handle_interrupts()?;
        Ok(self.0.poll_completed())
    }

    fn reset(&mut self) -> Result<ResetReport, ResetError> {
        self.0.reset()
    }

    fn check_alive(&self) -> Result<(), DeviceGone> {
        if self.0.device_gone() { Err(DeviceGone) } else { Ok(()) }
    }

    fn stats(&self) -> Stats {
        let s = self.0.stats();
        Stats {
            submissions: s.batches,
            doorbells: s.doorbells,
            fences: s.fences,
            padding_units: s.padding_dwords,
            discarded: s.discarded,
            resets: s.resets,
            recoveries: s.recoveries,
            failed_fences: s.failed_fences,
        }
    }
}

/// An Evergreen/Cayman driver as a [`GpuQueue`]. Fence interrupts: the IH ring and EOP
/// interrupts ([`Evergreen::enable_interrupts`]).
pub struct EvergreenQueue<'d, IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized>(
    pub Evergreen<'d, IO, C, A>,
);

// `'static` only, as for [`R5xxQueue`].
impl<IO, C, A> GpuQueue for EvergreenQueue<'static, IO, C, A>
where
    IO: RegisterIo + 'static,
    C: Clock + 'static,
    A: DmaAllocator + ?Sized + 'static,
{
    type Submission<'s>
        = EvergreenSubmission<'s, 'static, A>
    where
        Self: 's;
    type BuildError = PacketError;
    type SubmitError = EvergreenSubmitError;
    type ResetError = InitError;

    fn submit<T>(
        &mut self,
        units: usize,
        build: impl FnOnce(&mut Self::Submission<'_>) -> Result<T, PacketError>,
    ) -> Result<T, EvergreenSubmitError> {
        self.0.submit(units, build)
    }

    fn fence(submission: &mut Self::Submission<'_>) -> Result<Fence, PacketError> {
        submission.fence()
    }

    const FENCE_UNITS: usize = EVERGREEN_FENCE_DWORDS;

    fn timeline(&self) -> &Timeline {
        self.0.timeline()
    }

    fn poll_completed(&self) -> u64 {
        self.0.poll_completed()
    }

    fn wait(&self, fence: &Fence, timeout: Duration) -> Result<(), FenceError> {
        self.0.wait(fence, timeout)
    }

    fn set_fence_interrupts(&mut self, enabled: bool) -> Result<(), DeviceGone> {
        self.0.check_alive()?;
        if enabled {
            // Enabling programs the IH ring the driver allocated at bring-up: with the device
            // answering, only a gone device makes it fail.
            self.0.enable_interrupts().map_err(|_| DeviceGone)?;
        } else {
            self.0.disable_interrupts();
        }
        Ok(())
    }

    fn handle_interrupts(&mut self) -> Result<u64, DeviceGone> {
        Ok(self.0.handle_interrupts()?.completed)
    }

    fn reset(&mut self) -> Result<ResetReport, InitError> {
        self.0.reset()
    }

    fn check_alive(&self) -> Result<(), DeviceGone> {
        self.0.check_alive()
    }

    fn stats(&self) -> Stats {
        let s = self.0.stats();
        Stats {
            submissions: s.submissions,
            doorbells: s.doorbells,
            fences: s.fences,
            discarded: s.discarded,
            resets: s.resets,
            failed_fences: s.failed_fences,
            ..Stats::default()
        }
    }
}

/// Bytes a [`CheckedWrite`] fills on an Evergreen/Cayman.
pub const FILL_BYTES: usize = 64;
/// `CP_DMA`: a header and a 5-dword body (Linux radeon evergreend.h `PACKET3_CP_DMA`).
const CP_DMA_DWORDS: usize = 6;

/// A job whose result the CPU can check, on either family: an R5xx writes `value` to user
/// scratch register `reg` (`USER_SCRATCH + reg`, which the CP writes back to memory, §5.9); an
/// Evergreen/Cayman fills [`FILL_BYTES`] at `fill` with `value` by CP DMA.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckedWrite {
    /// User scratch register (0 = `USER_SCRATCH`), R5xx.
    pub reg: usize,
    /// The value written.
    pub value: u32,
    /// Where the fill goes, Evergreen/Cayman.
    pub fill: BusAddress,
}

impl<IO, C, A> Work<R5xxQueue<'static, IO, C, A>> for CheckedWrite
where
    IO: RegisterIo + 'static,
    C: Clock + 'static,
    A: DmaAllocator + ?Sized + 'static,
{
    fn units(&self) -> usize {
        REG_WRITE_DWORDS
    }

    fn build(&self, s: &mut Submission<'_, 'static, IO, C, A>) -> Result<(), SubmitError> {
        let value = SCRATCH_REG0::RESET.with_scratch_reg0(self.value);
        s.writer().write_reg_at(USER_SCRATCH + self.reg, value)?;
        Ok(())
    }
}

impl<IO, C, A> Work<EvergreenQueue<'static, IO, C, A>> for CheckedWrite
where
    IO: RegisterIo + 'static,
    C: Clock + 'static,
    A: DmaAllocator + ?Sized + 'static,
{
    fn units(&self) -> usize {
        CP_DMA_DWORDS
    }

    fn build(&self, s: &mut EvergreenSubmission<'_, 'static, A>) -> Result<(), PacketError> {
        s.cp_dma_fill(self.value, self.fill, FILL_BYTES)
    }
}
