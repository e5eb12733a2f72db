//! Fences (§5.9): sequence numbers of the shared 64-bit [`Timeline`], written (low 32 bits) by
//! a type-0 packet to the fence scratch register and written back by the CP to the writeback
//! page, extended back to 64 bits ([`Timeline::extend32`]); the shared bounded wait, which
//! watches the device's health while it polls.

use baregpu_regs::r5xx::Family;
use core::time::Duration;

use baregpu_gpu::wait::{self, FenceSource};
use baregpu_gpu::{Fence, Timeline};
use baregpu_hal::barrier::dma_rmb;
use baregpu_hal::dma::DmaAllocator;
use baregpu_hal::time::Clock;
use baregpu_hal::{RegisterIo, RegisterIoExt};
use baregpu_regs::r5xx::cp::SCRATCH_REG0;
use baregpu_ring::pm4::{CommandSink, Pm4Error, Pm4Writer};

use super::R5xx;
use crate::consts::{FENCE_SCRATCH, SCRATCH_COUNT, WB_RPTR_OFFSET, WB_SCRATCH_OFFSET};
use crate::error::{DeviceGone, FenceError};

/// Write the next fence of `timeline` into `w`: a type-0 write of the low 32 bits of the next
/// sequence number to `SCRATCH_REG<FENCE_SCRATCH>` (2 dwords, §5.9). The number is taken only
/// if the packet was written. The one place fences are written, for the ring and for PIO.
pub(crate) fn emit<S: CommandSink>(
    timeline: &mut Timeline,
    w: &mut Pm4Writer<S, Family>,
) -> Result<Fence, Pm4Error> {
    // The scratch register holds the low 32 bits; `extend32` restores the rest.
    let low = timeline.peek_next() as u32;
    w.write_reg_at(FENCE_SCRATCH, SCRATCH_REG0::RESET.with_scratch_reg0(low))?;
    Ok(timeline.emit())
}

impl<IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> R5xx<'_, IO, C, A> {
    /// The written-back value of `SCRATCH_REG<n>` (`n` < 8, §5.9: `SCRATCH_ADDR + 4n`).
    fn writeback_scratch(&self, n: usize) -> u32 {
        self.writeback_dword(WB_SCRATCH_OFFSET + 4 * n)
    }

    fn writeback_dword(&self, offset: usize) -> u32 {
        let (wb, _) = self.ring.writeback();
        // In bounds: the scratch area and the RPTR dword fit the page (checked at compile time
        // in `consts`), and the page is WRITEBACK_BYTES long (allocated by `init`).
        let value = wb.read_u32(offset);
        debug_assert!(value.is_ok(), "writeback offset {offset} outside the writeback page");
        dma_rmb();
        value.unwrap_or(0)
    }

    /// The value the CP last wrote back from `SCRATCH_REG<n>` (§5.9: `SCRATCH_ADDR + 4n`), read
    /// from the writeback page; `None` for `n` ≥ 8. Registers [`USER_SCRATCH`](crate::USER_SCRATCH)..
    /// are the caller's to use as markers.
    pub fn scratch_writeback(&self, n: usize) -> Option<u32> {
        (n < SCRATCH_COUNT).then(|| self.writeback_scratch(n))
    }

    /// The last fence sequence number emitted.
    pub fn last_emitted(&self) -> u64 {
        self.timeline.last_emitted()
    }

    /// The fence wait behind [`GpuQueue::wait`](baregpu_gpu::GpuQueue::wait) with the caller's health check (device gone,
    /// an engine's fault), run every few polls and at the deadline.
    #[cfg_attr(not(feature = "ctm"), allow(dead_code))]
    pub(crate) fn wait_with<E: From<FenceError>>(
        &self,
        fence: &Fence,
        timeout: Duration,
        health: impl FnMut() -> Option<E>,
    ) -> Result<(), E> {
        wait::wait_with(self, &self.timeline, &self.clock, fence, timeout, health)
    }

    /// At init and after a reset emptied the ring: the fence scratch register and its writeback
    /// take the last emitted number, so the hardware's value and the timeline agree.
    pub(super) fn sync_fence_scratch(&mut self) {
        let last = self.timeline.last_emitted() as u32;
        self.io
            .write_nth::<SCRATCH_REG0, FENCE_SCRATCH>(SCRATCH_REG0::RESET.with_scratch_reg0(last));
        let (wb, _) = self.ring.writeback();
        let written = wb.write_u32(WB_SCRATCH_OFFSET + 4 * FENCE_SCRATCH, last);
        debug_assert!(written.is_ok(), "the fence writeback lies in the writeback page");
    }
}

impl<IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> FenceSource for R5xx<'_, IO, C, A> {
    fn read_completed(&self) -> u64 {
        self.timeline.extend32(self.writeback_scratch(FENCE_SCRATCH))
    }

    fn progress_marker(&self) -> u64 {
        // The CP's written-back read pointer (memory, §5.4).
        self.writeback_dword(WB_RPTR_OFFSET).into()
    }

    fn check_alive(&self) -> Result<(), DeviceGone> {
        crate::liveness::check_alive(&self.io)
    }
}
