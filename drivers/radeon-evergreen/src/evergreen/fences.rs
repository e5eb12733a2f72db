//! Fences: `SURFACE_SYNC` (§9.6.7) then `EVENT_WRITE_EOP` (§9.6.2) writing the 64-bit sequence
//! number of the shared [`Timeline`] to the write-back page, with an interrupt only when the
//! caller enabled interrupts; the shared bounded wait, which checks the device's health while
//! it polls (not only at the deadline).

use baregpu_gpu::Fence;
use baregpu_gpu::wait::FenceSource;
use baregpu_hal::dma::DmaAllocator;
use baregpu_hal::time::Clock;
use baregpu_hal::{RegisterIo, RegisterIoExt};
use baregpu_regs::evergreen::cp::CP_RB_RPTR;
use baregpu_ring::stream::CommandSink;

use super::Evergreen;
use super::submit::Submission;
use crate::consts::{COHER_TC_VC_SH, FENCE_DWORDS, WB_FENCE_OFFSET};
use crate::error::DeviceGone;
use crate::pm4::{self, PacketError, opcode};

impl<A: DmaAllocator + ?Sized> Submission<'_, '_, A> {
    /// A fence: `SURFACE_SYNC` of the texture, vertex and shader caches (§9.6.7), then
    /// `EVENT_WRITE_EOP` writing the next 64-bit sequence number to the write-back page
    /// (§9.6.2), INT_SEL asking for an interrupt only when interrupts are enabled (polled
    /// fences cost none). [`FENCE_DWORDS`] dwords, written whole or not at all.
    pub fn fence(&mut self) -> Result<Fence, PacketError> {
        let (timeline, fence_addr, irq) = self.fence_parts();
        let [e0, e1, e2, e3, e4] = pm4::eop_fence(fence_addr, timeline.peek_next(), irq)?;
        let [s0, s1, s2, s3] = pm4::surface_sync_all(COHER_TC_VC_SH)?;
        let sync = pm4::header(opcode::SURFACE_SYNC, 4, false, false)?;
        let eop = pm4::header(opcode::EVENT_WRITE_EOP, 5, false, false)?;
        // Both packets as one reservation and one run of stores.
        let fence: [u32; FENCE_DWORDS] = [sync, s0, s1, s2, s3, eop, e0, e1, e2, e3, e4];
        self.sink().write_parts(&fence, &[])?;
        Ok(self.emit_fence())
    }
}

impl<IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> Evergreen<'_, IO, C, A> {
    /// Submit a fence alone.
    pub fn fence(&mut self) -> Result<Fence, crate::error::SubmitError> {
        self.submit(FENCE_DWORDS, |s| s.fence())
    }

    fn fence_writeback(&self) -> u64 {
        let wb = self.writeback();
        let lo = wb.read_u32(WB_FENCE_OFFSET).unwrap_or(0) as u64;
        let hi = wb.read_u32(WB_FENCE_OFFSET + 4).unwrap_or(0) as u64;
        (hi << 32) | lo
    }
}

impl<IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> FenceSource for Evergreen<'_, IO, C, A> {
    fn read_completed(&self) -> u64 {
        self.fence_writeback()
    }

    fn progress_marker(&self) -> u64 {
        self.io.read::<CP_RB_RPTR>().raw().into()
    }

    fn check_alive(&self) -> Result<(), DeviceGone> {
        crate::liveness::check_alive(&self.io)
    }
}
