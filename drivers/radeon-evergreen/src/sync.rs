//! GPU-side semaphores (`MEM_SEMAPHORE`, amd-evergreen-cayman-acceleration §9.6.4) and
//! per-device predication (`PRED_EXEC`, §9.5.4) on a [`Submission`].
//!
//! A [`Semaphore`] is a 64-bit counter in DMA memory, used as Linux radeon's r600/evergreen
//! semaphore emit uses it: a signal adds one once the work before it is done (bottom of the
//! pipe); a wait stops the CP at the top of the pipe until the counter is not zero and takes
//! one. The one ring is parsed in order, so a wait is released by the host writing the counter
//! or by a signal submitted *before* it; a signal queued behind a wait on the same ring cannot
//! release it.

use baregpu_hal::dma::{BusAddress, DmaAllocator};
use baregpu_regs::evergreen::Chipset;
use baregpu_ring::pm4::{CommandSink, SliceSink};

use crate::Submission;
use crate::pm4::{self, PacketError, SemaphoreOp, opcode};

/// Dwords of [`Submission::semaphore_signal`]: `MEM_SEMAPHORE`.
pub const SEMAPHORE_SIGNAL_DWORDS: usize = 3;
/// Dwords of [`Submission::semaphore_wait`]: `MEM_SEMAPHORE` + `PFP_SYNC_ME`.
pub const SEMAPHORE_WAIT_DWORDS: usize = 5;
/// Most dwords [`Submission::pred_exec`] predicates (staged on the stack; no allocation).
pub const PRED_EXEC_MAX_DWORDS: usize = 64;
/// Dwords `PRED_EXEC` adds in front of its packets.
pub const PRED_EXEC_DWORDS: usize = 2;

/// A 64-bit counting semaphore at a quadword-aligned 40-bit bus address (§9.6.4 ADDRESS_LO
/// 31:3, ADDRESS_HI 7:0), for one chip. The memory is the caller's; a new semaphore should
/// hold 0 (Linux radeon zeroes its semaphores before use).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Semaphore {
    address: BusAddress,
    wait_on_signal: bool,
}

impl Semaphore {
    /// The semaphore at `address` on `chip`. [`PacketError::BadAddress`] (align 8) unless the
    /// address is quadword aligned and within 40 bits.
    pub fn new(chip: Chipset, address: BusAddress) -> Result<Self, PacketError> {
        pm4::address40(address, 8)?;
        // WAIT_ON_SIGNAL: "should be set in evergreen, but in cayman it is reserved" (§9.6.4);
        // Linux radeon r600.c sets it below Cayman.
        Ok(Semaphore { address, wait_on_signal: chip < Chipset::CAYMAN })
    }

    /// Its bus address.
    pub fn address(&self) -> BusAddress {
        self.address
    }

    fn body(&self, op: SemaphoreOp) -> Result<[u32; 2], PacketError> {
        pm4::mem_semaphore(self.address, op, self.wait_on_signal)
    }
}

impl<A: DmaAllocator + ?Sized> Submission<'_, '_, A> {
    /// `MEM_SEMAPHORE` signal (§9.6.4): once the work before it is done, the CP adds one to
    /// `sem`. [`SEMAPHORE_SIGNAL_DWORDS`] dwords.
    pub fn semaphore_signal(&mut self, sem: &Semaphore) -> Result<(), PacketError> {
        let body = sem.body(SemaphoreOp::Signal)?;
        self.packet(opcode::MEM_SEMAPHORE, &body)
    }

    /// `MEM_SEMAPHORE` wait (§9.6.4): the CP stops here until `sem` is not zero, then takes one
    /// from it; `PFP_SYNC_ME` (§9.6.5) after it keeps the PFP from fetching ahead of the wait
    /// (Linux radeon r600.c semaphore emit). [`SEMAPHORE_WAIT_DWORDS`] dwords, written whole or
    /// not at all.
    pub fn semaphore_wait(&mut self, sem: &Semaphore) -> Result<(), PacketError> {
        let body = sem.body(SemaphoreOp::Wait)?;
        self.sink().reserve(SEMAPHORE_WAIT_DWORDS)?;
        self.packet(opcode::MEM_SEMAPHORE, &body)?;
        self.pfp_sync_me()
    }

    /// `PRED_EXEC` (§9.5.4): the packets `build` writes run only on the devices
    /// `device_select` names (a mask: [`pm4::device_select`] gives an ID's bit; this driver's
    /// GPU is [`pm4::DEVICE_ID`]). Elsewhere the CP skips them unparsed. EXEC_COUNT is what
    /// `build` wrote, at most [`PRED_EXEC_MAX_DWORDS`] (more is [`PacketError::NoSpace`]);
    /// nothing written predicates nothing and emits nothing (EXEC_COUNT 0 is no packet count).
    pub fn pred_exec(
        &mut self,
        device_select: u8,
        build: impl FnOnce(&mut SliceSink<'_>) -> Result<(), PacketError>,
    ) -> Result<(), PacketError> {
        let mut buf = [0u32; PRED_EXEC_MAX_DWORDS];
        let mut staging = SliceSink::new(&mut buf);
        build(&mut staging)?;
        let inner = staging.written();
        if inner.is_empty() {
            return Ok(());
        }
        let body = pm4::pred_exec(device_select, inner.len())?;
        let header = pm4::header(opcode::PRED_EXEC, body.len(), false, false)?;
        let mut sink = self.sink();
        sink.reserve(PRED_EXEC_DWORDS + inner.len())?;
        sink.push(header)?;
        sink.push_slice(&body)?;
        sink.push_slice(inner)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn semaphores_are_quadwords_with_wait_on_signal_below_cayman() {
        let a = BusAddress(0x12_3456_7808);
        let cypress = Semaphore::new(Chipset::CYPRESS, a).unwrap();
        let cayman = Semaphore::new(Chipset::CAYMAN, a).unwrap();
        // DW3: SEM_SEL 111 | WAIT_ON_SIGNAL (Cypress) | ADDRESS_HI; Cayman leaves bit 12 clear.
        assert_eq!(cypress.body(SemaphoreOp::Wait), Ok([0x3456_7808, 0xE000_1012]));
        assert_eq!(cayman.body(SemaphoreOp::Wait), Ok([0x3456_7808, 0xE000_0012]));
        for bad in [BusAddress(0x1004), BusAddress(1 << 40)] {
            assert_eq!(
                Semaphore::new(Chipset::CYPRESS, bad),
                Err(PacketError::BadAddress { address: bad.0, align: 8 })
            );
        }
    }
}
