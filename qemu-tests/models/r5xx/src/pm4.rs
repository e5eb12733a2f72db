//! PM4 packet headers (§6.1) and type-3 opcodes (§6.2.1), decoded from the document: the
//! model's own decoder, independent of any driver-side encoder.

/// Type-3 `IT_OPCODE`s listed in §6.2.1.
pub mod opcode {
    /// Skip N dwords (§6.2.2.1).
    pub const NOP: u8 = 0x10;
    /// Print a character (§6.2.2.6).
    pub const NEXTCHAR: u8 = 0x19;
    /// Polyscanlines with current settings (§6.2.2.11).
    pub const PLY_NEXTSCAN: u8 = 0x1D;
    /// Set up scissors (§6.2.2.13).
    pub const SET_SCISSORS: u8 = 0x1E;
    /// Predicated execute wrapper (§6.2.4).
    pub const PRED_EXEC: u8 = 0x20;
    /// Conditional execute wrapper (§6.2.5.1).
    pub const COND_EXEC: u8 = 0x21;
    /// Wait for an ME RAM semaphore to be zero (§6.2.4.1).
    pub const WAIT_SEMAPHORE: u8 = 0x22;
    /// Wait for a memory semaphore to be zero (§6.2.5.2).
    pub const WAIT_MEM: u8 = 0x23;
    /// 3D_DRAW_VBUF (§6.2.3.1).
    pub const DRAW_VBUF: u8 = 0x28;
    /// 3D_DRAW_IMMD (§6.2.3.2).
    pub const DRAW_IMMD: u8 = 0x29;
    /// 3D_DRAW_INDX (§6.2.3.3).
    pub const DRAW_INDX: u8 = 0x2A;
    /// Load a palette (§6.2.2.12).
    pub const LOAD_PALETTE: u8 = 0x2C;
    /// 3D_LOAD_VBPNTR (§6.2.3.9).
    pub const LOAD_VBPNTR: u8 = 0x2F;
    /// Indices through IB2 (§6.2.3.11).
    pub const INDX_BUFFER: u8 = 0x33;
    /// 3D_DRAW_VBUF_2 (§6.2.3.4).
    pub const DRAW_VBUF_2: u8 = 0x34;
    /// 3D_DRAW_IMMD_2 (§6.2.3.5).
    pub const DRAW_IMMD_2: u8 = 0x35;
    /// 3D_DRAW_INDX_2 (§6.2.3.6).
    pub const DRAW_INDX_2: u8 = 0x36;
    /// 3D_CLEAR_HIZ (§6.2.3.10).
    pub const CLEAR_HIZ: u8 = 0x37;
    /// 3D_DRAW_128 (§6.2.3.7).
    pub const DRAW_128: u8 = 0x39;
    /// MPEG_INDEX (§6.2.3.12).
    pub const MPEG_INDEX: u8 = 0x3A;
    /// PAINT (§6.2.2.2).
    pub const PAINT: u8 = 0x91;
    /// BITBLT (§6.2.2.8).
    pub const BITBLT: u8 = 0x92;
    /// HOSTDATA_BLT (§6.2.2.3).
    pub const HOSTDATA_BLT: u8 = 0x94;
    /// POLYLINE (§6.2.2.4).
    pub const POLYLINE: u8 = 0x95;
    /// POLYSCANLINES (§6.2.2.5).
    pub const POLYSCANLINES: u8 = 0x98;
    /// PAINT_MULTI (§6.2.2.7).
    pub const PAINT_MULTI: u8 = 0x9A;
    /// BITBLT_MULTI (§6.2.2.9).
    pub const BITBLT_MULTI: u8 = 0x9B;
    /// TRANS_BITBLT (§6.2.2.10).
    pub const TRANS_BITBLT: u8 = 0x9C;
}

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
pub const fn classify(op: u8) -> Class {
    use opcode::*;
    match op {
        NOP => Class::Nop,
        WAIT_SEMAPHORE => Class::WaitSemaphore,
        WAIT_MEM => Class::WaitMem,
        PRED_EXEC | COND_EXEC | INDX_BUFFER => Class::Unsupported,
        NEXTCHAR | PLY_NEXTSCAN | SET_SCISSORS | DRAW_VBUF | DRAW_IMMD | DRAW_INDX
        | LOAD_PALETTE | LOAD_VBPNTR | DRAW_VBUF_2 | DRAW_IMMD_2 | DRAW_INDX_2 | CLEAR_HIZ
        | DRAW_128 | MPEG_INDEX | PAINT | BITBLT | HOSTDATA_BLT | POLYLINE | POLYSCANLINES
        | PAINT_MULTI | BITBLT_MULTI | TRANS_BITBLT => Class::Consumed,
        _ => Class::Unknown,
    }
}
