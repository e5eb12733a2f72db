//! PM4 packet headers (§6.1), decoded from the document by the model's own decoder,
//! independent of any driver-side encoder; type-3 opcodes from the §6.2.1 packet table as
//! `baregpu_regs::r5xx::packets` holds it (extracted from the document and checked against it
//! by regdb-gen's tests, like the register database).

use baregpu_regs::packet::BodyLen;
use baregpu_regs::r5xx::packets::{
    self, _3D_LOAD_VBPNTR, COND_EXEC, INDX_BUFFER, NOP, PRED_EXEC, WAIT_MEM, WAIT_SEMAPHORE,
};

/// A decoded packet header (§6.1). Counts are body dwords (the header's COUNT + 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Header {
    /// Type 0 (§6.1.1): `count` dwords to `base_index` (a dword register index, byte address
    /// bits 14:2) and up, or all to `base_index` when `one_reg_wr`.
    Type0 {
        /// BASE_INDEX, bits 12:0.
        base_index: u32,
        /// ONE_REG_WR, bit 15.
        one_reg_wr: bool,
        /// COUNT (bits 29:16) + 1.
        count: u32,
    },
    /// Type 1 (§6.1.2): two dwords, to REG_INDEX1 (bits 10:0) and REG_INDEX2 (bits 21:11).
    Type1 {
        /// REG_INDEX1 (dword index).
        reg_index1: u32,
        /// REG_INDEX2 (dword index).
        reg_index2: u32,
    },
    /// Type 2 (§6.1.3): a one-dword filler.
    Type2,
    /// Type 3 (§6.1.4): IT_OPCODE (bits 15:8) and `count` body dwords.
    Type3 {
        /// IT_OPCODE.
        opcode: u8,
        /// COUNT (bits 29:16) + 1.
        count: u32,
    },
}

impl Header {
    /// Decode a header dword: TYPE is bits 31:30.
    pub const fn decode(h: u32) -> Header {
        let count = ((h >> 16) & 0x3FFF) + 1;
        match h >> 30 {
            0 => Header::Type0 { base_index: h & 0x1FFF, one_reg_wr: h & (1 << 15) != 0, count },
            1 => Header::Type1 { reg_index1: h & 0x7FF, reg_index2: (h >> 11) & 0x7FF },
            2 => Header::Type2,
            _ => Header::Type3 { opcode: ((h >> 8) & 0xFF) as u8, count },
        }
    }
}

/// What the model does with a type-3 opcode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// NOP: the body is skipped (§6.2.2.1).
    Nop,
    /// WAIT_SEMAPHORE: executed (§6.2.4.1).
    WaitSemaphore,
    /// WAIT_MEM: executed (§6.2.5.2).
    WaitMem,
    /// A documented 2D/3D packet for an engine the model does not emulate: parsed (its body is
    /// consumed by COUNT) with no further effect.
    Consumed,
    /// Documented, but changes control flow in ways the document under-specifies (PRED_EXEC,
    /// COND_EXEC, INDX_BUFFER): the model stops with
    /// [`UNSUPPORTED_PACKET`](crate::error_code::UNSUPPORTED_PACKET) rather than execute the
    /// wrong packets.
    Unsupported,
    /// Not in §6.2.1: invalid packet.
    Unknown,
}

/// Classify an IT_OPCODE.
pub fn classify(op: u8) -> Class {
    let Some(packet) = packets::ALL.iter().find(|p| p.opcode == op) else {
        return Class::Unknown;
    };
    match *packet {
        p if p == NOP => Class::Nop,
        p if p == WAIT_SEMAPHORE => Class::WaitSemaphore,
        p if p == WAIT_MEM => Class::WaitMem,
        p if p == PRED_EXEC || p == COND_EXEC || p == INDX_BUFFER => Class::Unsupported,
        _ => Class::Consumed,
    }
}

/// The body sizes an IT_OPCODE takes: its §6.2 table's bounds (`Packet::body_len`), with what
/// a table cannot say: WAIT_SEMAPHORE's reset dword is "Optional" (§6.2.4.1), and
/// 3D_LOAD_VBPNTR lists up to 12 arrays, its exact length following VTX_NUM_ARRAYS
/// ([`vbpntr_len`], checked when the body has been read). `None`: not in §6.2.1.
pub fn body_len(op: u8) -> Option<BodyLen> {
    let packet = packets::ALL.iter().find(|p| p.opcode == op)?;
    let table = packet.body_len();
    Some(match *packet {
        p if p == WAIT_SEMAPHORE => BodyLen { min: 1, ..table },
        p if p == _3D_LOAD_VBPNTR => BodyLen { min: vbpntr_len(1), ..table },
        _ => table,
    })
}

/// §6.2.3.9: 3D_LOAD_VBPNTR's body for `arrays` vertex arrays: VTX_NUM_ARRAYS, then per pair
/// of arrays one ATTR dword and two ADDR dwords (an odd last array: ATTR and one ADDR).
pub const fn vbpntr_len(arrays: u32) -> u32 {
    1 + 3 * (arrays / 2) + 2 * (arrays % 2)
}

/// Whether `opcode`'s complete body of `count` dwords, starting with `first`, is consistent
/// with its own fields (only 3D_LOAD_VBPNTR's VTX_NUM_ARRAYS, 1..=12, is checked this way).
pub fn body_consistent(opcode: u8, count: u32, first: u32) -> bool {
    opcode != _3D_LOAD_VBPNTR.opcode || ((1..=12).contains(&first) && count == vbpntr_len(first))
}
