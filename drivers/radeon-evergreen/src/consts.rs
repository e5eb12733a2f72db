//! Protocol constants, each with its source: the write-back page layout, the scratch register
//! the ring and IB tests use, packet sizes, and the address split of the LO/HI register pairs.

use core::time::Duration;

use baregpu_hal::dma::BusAddress;
use baregpu_hal::register::{Array, Register};
use baregpu_regs::evergreen::cp::SCRATCH_REG0;

use crate::pm4::PacketError;

/// Bytes of the write-back page: the CP's read pointer, the fence, the IH write pointer.
pub const WRITEBACK_BYTES: usize = 4096;
/// Offset of the command ring's read-pointer write-back (`CP_RB_RPTR_ADDR`).
pub const WB_RPTR_OFFSET: usize = 0;
/// Offset of the 64-bit fence sequence (`EVENT_WRITE_EOP` DATA_SEL 2, quadword aligned).
pub const WB_FENCE_OFFSET: usize = 64;
/// Offset of the interrupt ring's write-pointer write-back (`IH_RB_WPTR_ADDR_LO/HI`).
pub const WB_IH_WPTR_OFFSET: usize = 128;

/// Scratch register used by the ring test and the IB test (Linux radeon uses a free scratch
/// register the same way).
pub const TEST_SCRATCH: usize = 0;
const _: () = assert!(TEST_SCRATCH < <SCRATCH_REG0 as Array>::COUNT);
/// Value written to the scratch register before a test.
pub const TEST_SEED: u32 = 0xCAFE_DEAD;
/// Value the test packets write.
pub const TEST_VALUE: u32 = 0xDEAD_BEEF;

/// How long `GRBM_SOFT_RESET` is held (Linux radeon evergreen.c holds it for 50 µs).
pub(crate) const SOFT_RESET_HOLD: Duration = Duration::from_micros(50);

/// Dwords of a fence: `SURFACE_SYNC` (5) + `EVENT_WRITE_EOP` (6).
pub const FENCE_DWORDS: usize = 11;

/// Most dwords [`Submission::cond_exec`](crate::Submission::cond_exec) stages (on the stack;
/// no allocation).
pub const COND_EXEC_MAX_DWORDS: usize = 64;

/// `CP_COHER_CNTL` TC_ACTION_ENA | VC_ACTION_ENA | SH_ACTION_ENA (Linux radeon evergreen.c
/// fence emission; §9.6.7 refers to the register).
pub const COHER_TC_VC_SH: u32 = baregpu_regs::evergreen::cp::CP_COHER_CNTL::RESET
    .with_tc_action_ena(true)
    .with_vc_action_ena(true)
    .with_sh_action_ena(true)
    .raw();

/// An address as a LO/HI register pair holds it: bits 31:0, and bits 39:32 (as the address
/// with the low 32 bits clear, which the generated HI setters take).
pub(crate) fn split_address(a: BusAddress) -> (BusAddress, BusAddress) {
    (BusAddress(a.0 & 0xFFFF_FFFF), BusAddress(a.0 & !0xFFFF_FFFF))
}

/// Byte offset of scratch register `n` (0..8).
pub(crate) fn scratch_offset(n: usize) -> Result<usize, PacketError> {
    <SCRATCH_REG0 as Array>::offset_of(n)
        .map_err(|_| PacketError::OutOfRange { offset: SCRATCH_REG0::OFFSET + 4 * n })
}
