//! Fences (§5.9): sequence numbers written by a type-0 packet to the fence scratch register
//! and written back by the CP to the writeback page; bounded waits that watch the device's
//! health while they poll.

use core::time::Duration;

use baregpu_hal::barrier::dma_rmb;
use baregpu_hal::dma::DmaAllocator;
use baregpu_hal::time::Clock;
use baregpu_hal::{RegisterIo, RegisterIoExt};
use baregpu_regs::r5xx::cp::SCRATCH_REG0;
use baregpu_ring::pm4::{CommandSink, Pm4Error, Pm4Writer};
use baregpu_ring::r5xx::R5xx as R5xxFamily;

use super::R5xx;
use crate::consts::{FENCE_SCRATCH, SCRATCH_COUNT, WB_SCRATCH_OFFSET};
use crate::error::FenceError;
use crate::liveness::{Unfinished, poll_healthy};

/// A point in the command stream: done once the CP wrote `seq` back from the fence scratch
/// register (§5.9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fence {
    seq: u32,
}

impl Fence {
    /// Sequence number (monotonically increasing, wrapping).
    pub const fn seq(&self) -> u32 {
        self.seq
    }
}

/// `true` if `seq` is at or before `last` in wrapping order (fewer than 2^31 apart).
const fn seq_reached(last: u32, seq: u32) -> bool {
    (last.wrapping_sub(seq) as i32) >= 0
}

/// The fence sequence: the one place fences are written, for the ring and for PIO alike.
#[derive(Debug, Default)]
pub(crate) struct FenceSeq {
    last: u32,
    emitted: u64,
}

impl FenceSeq {
    /// The last sequence number emitted.
    pub(crate) fn last(&self) -> u32 {
        self.last
    }

    /// Fences emitted so far.
    pub(crate) fn emitted(&self) -> u64 {
        self.emitted
    }

    /// Write the next fence into `w`: a type-0 write of the next sequence number to
    /// `SCRATCH_REG<FENCE_SCRATCH>` (2 dwords, §5.9). The number is taken only if the packet
    /// was written.
    pub(crate) fn emit<S: CommandSink>(
        &mut self,
        w: &mut Pm4Writer<S, R5xxFamily>,
    ) -> Result<Fence, Pm4Error> {
        let seq = self.last.wrapping_add(1);
        w.write_reg_at(FENCE_SCRATCH, SCRATCH_REG0::RESET.with_scratch_reg0(seq))?;
        self.last = seq;
        self.emitted += 1;
        Ok(Fence { seq })
    }
}

impl<IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> R5xx<'_, IO, C, A> {
    /// The written-back value of `SCRATCH_REG<n>` (`n` < 8, §5.9: `SCRATCH_ADDR + 4n`).
    fn writeback_scratch(&self, n: usize) -> u32 {
        let (wb, _) = self.ring.writeback();
        // In bounds: `n` < SCRATCH_COUNT and the area fits the page (checked at compile time
        // in `consts`), and the page is WRITEBACK_BYTES long (allocated by `init`).
        let value = wb.read_u32(WB_SCRATCH_OFFSET + 4 * n);
        debug_assert!(value.is_ok(), "scratch writeback {n} outside the writeback page");
        dma_rmb();
        value.unwrap_or(0)
    }

    /// The last fence sequence number the CP wrote back (§5.9: `SCRATCH_ADDR + 4n`), read from
    /// DMA memory (no register access).
    pub fn last_signalled(&self) -> u32 {
        self.writeback_scratch(FENCE_SCRATCH)
    }

    /// The value the CP last wrote back from `SCRATCH_REG<n>` (§5.9: `SCRATCH_ADDR + 4n`), read
    /// from the writeback page; `None` for `n` ≥ 8. Registers [`USER_SCRATCH`](crate::USER_SCRATCH)..
    /// are the caller's to use as markers.
    pub fn scratch_writeback(&self, n: usize) -> Option<u32> {
        (n < SCRATCH_COUNT).then(|| self.writeback_scratch(n))
    }

    /// The last fence sequence number emitted.
    pub fn last_emitted(&self) -> u32 {
        self.fences.last()
    }

    /// Whether the CP has passed `fence` (wrapping comparison: valid while fewer than 2^31
    /// fences are outstanding).
    pub fn fence_signalled(&self, fence: &Fence) -> bool {
        seq_reached(self.last_signalled(), fence.seq)
    }

    /// Wait for `fence`, at most `timeout` (the caller's budget for the work before it).
    ///
    /// [`FenceError::Timeout`] carries the last signalled sequence number: the CP is hung or
    /// stalled, call [`reset`](Self::reset). [`FenceError::DeviceGone`] if the registers read
    /// all-ones (checked every [`LIVENESS_CHECK_EVERY`](crate::consts::LIVENESS_CHECK_EVERY)
    /// polls and at the deadline).
    pub fn wait(&self, fence: &Fence, timeout: Duration) -> Result<(), FenceError> {
        self.wait_with(fence, timeout, || self.check_alive().err().map(FenceError::from))
    }

    /// The fence wait behind [`wait`](Self::wait): `health` runs every
    /// [`LIVENESS_CHECK_EVERY`](crate::consts::LIVENESS_CHECK_EVERY) polls and at the deadline,
    /// and ends the wait with its error (device gone, an engine's fault); otherwise the
    /// deadline gives [`FenceError::Timeout`].
    pub(crate) fn wait_with<E: From<FenceError>>(
        &self,
        fence: &Fence,
        timeout: Duration,
        health: impl Fn() -> Option<E>,
    ) -> Result<(), E> {
        let signalled = || self.fence_signalled(fence).then_some(());
        match poll_healthy(&self.clock, timeout, signalled, health) {
            Ok(()) => Ok(()),
            Err(Unfinished::Unhealthy(e)) => Err(e),
            Err(Unfinished::TimedOut(waited)) => Err(FenceError::Timeout {
                seq: fence.seq,
                last_signalled: self.last_signalled(),
                waited,
            }
            .into()),
        }
    }

    /// Make every emitted fence read as signalled (after a reset discarded the ring): the fence
    /// scratch register and its writeback both take the last emitted sequence number. Returns
    /// (last signalled before, last emitted).
    pub(super) fn force_fence_completion(&mut self) -> (u32, u32) {
        let completed = self.last_signalled();
        let last = self.fences.last();
        let value = SCRATCH_REG0::RESET.with_scratch_reg0(last);
        self.io.write_nth::<SCRATCH_REG0, FENCE_SCRATCH>(value);
        let (wb, _) = self.ring.writeback();
        let written = wb.write_u32(WB_SCRATCH_OFFSET + 4 * FENCE_SCRATCH, last);
        debug_assert!(written.is_ok(), "the fence writeback lies in the writeback page");
        (completed, last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fence_order_wraps() {
        assert!(seq_reached(5, 5));
        assert!(seq_reached(6, 5));
        assert!(!seq_reached(4, 5));
        assert!(seq_reached(2, u32::MAX), "2 comes after 0xffffffff");
        assert!(!seq_reached(u32::MAX, 2));
    }
}
