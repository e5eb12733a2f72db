//! PM4 packet layout (amd-evergreen-cayman-acceleration §9.1) and the type-3 opcodes the CP
//! knows, with the body size each takes. The document gives packet bodies but no opcode
//! numbers: those are from Linux radeon evergreend.h (`PACKET3_*`), as are the SET_* register
//! ranges (`PACKET3_SET_*_START/_END`).

use crate::chip::Asic;

/// §9.1.4: bits 31:30.
pub const fn packet_type(header: u32) -> u32 {
    header >> 30
}
/// §9.1.4: COUNT 29:16 = body dwords - 1 (type 0 too, §9.1.1).
pub const fn count(header: u32) -> u32 {
    (header >> 16) & 0x3FFF
}
/// §9.1.4: IT_OPCODE 15:8.
pub const fn opcode(header: u32) -> u8 {
    (header >> 8) as u8
}
/// §9.1.4 bit 0: the predicated version of the packet.
pub const fn predicated(header: u32) -> bool {
    header & 1 != 0
}
/// §9.1.4 bit 1: SHADER_TYPE = compute.
pub const fn compute(header: u32) -> bool {
    header & 2 != 0
}

/// §9.7.2.
pub const NOP: u8 = 0x10;
/// SET_BASE (Linux radeon evergreen_cs.c; not in the document).
pub const SET_BASE: u8 = 0x11;
/// §9.4.1.
pub const CLEAR_STATE: u8 = 0x12;
/// §9.4.2 (Cayman).
pub const DEALLOC_STATE: u8 = 0x14;
/// §9.3.12.
pub const DISPATCH_DIRECT: u8 = 0x15;
/// §9.3.13.
pub const DISPATCH_INDIRECT: u8 = 0x16;
/// §9.4.3.
pub const MODE_CONTROL: u8 = 0x18;
/// §9.5.3.
pub const SET_PREDICATION: u8 = 0x20;
/// §9.5.1.
pub const COND_EXEC: u8 = 0x22;
/// §9.5.4.
pub const PRED_EXEC: u8 = 0x23;
/// §9.4.4.
pub const CONTEXT_CONTROL: u8 = 0x28;
/// §9.3.1.
pub const INDIRECT_BUFFER: u8 = 0x32;
/// §9.6.6 (graphics stream-out: not emulated).
pub const STRMOUT_BUFFER_UPDATE: u8 = 0x34;
/// §9.6.4.
pub const MEM_SEMAPHORE: u8 = 0x39;
/// §9.6.8.
pub const WAIT_REG_MEM: u8 = 0x3C;
/// §9.7.1.
pub const MEM_WRITE: u8 = 0x3D;
/// CP_DMA (Linux radeon evergreend.h; not in the document).
pub const CP_DMA: u8 = 0x41;
/// §9.6.5.
pub const PFP_SYNC_ME: u8 = 0x42;
/// §9.6.7.
pub const SURFACE_SYNC: u8 = 0x43;
/// §9.2.1.
pub const ME_INITIALIZE: u8 = 0x44;
/// §9.5.2.
pub const COND_WRITE: u8 = 0x45;
/// §9.6.1.
pub const EVENT_WRITE: u8 = 0x46;
/// §9.6.2.
pub const EVENT_WRITE_EOP: u8 = 0x47;
/// §9.6.3.
pub const EVENT_WRITE_EOS: u8 = 0x48;
/// §9.2.2.
pub const PREAMBLE_CNTL: u8 = 0x4A;
/// §9.4.14.
pub const SET_CONFIG_REG: u8 = 0x68;
/// §9.4.15.
pub const SET_CONTEXT_REG: u8 = 0x69;
/// SET_ALU_CONST (Evergreen has no ALU constant register file: Linux radeon evergreend.h).
pub const SET_ALU_CONST: u8 = 0x6A;
/// §9.4.13.
pub const SET_BOOL_CONST: u8 = 0x6B;
/// §9.4.17.
pub const SET_LOOP_CONST: u8 = 0x6C;
/// §9.4.18.
pub const SET_RESOURCE: u8 = 0x6D;
/// §9.4.19.
pub const SET_SAMPLER: u8 = 0x6E;
/// §9.4.16.
pub const SET_CTL_CONST: u8 = 0x6F;

/// Drawing, stream-out and index packets (§9.3.2-§9.3.11; 0x34 is §9.6.6
/// STRMOUT_BUFFER_UPDATE): documented, not emulated (no rendering engine), so the CP stops on
/// them instead of pretending.
const UNSUPPORTED: [u8; 17] = [
    0x13, 0x17, 0x21, 0x24, 0x25, 0x26, 0x27, 0x29, 0x2A, 0x2B, 0x2D, 0x2E, 0x2F, 0x30, 0x34, 0x35,
    0x36,
];

/// The largest fixed body the CP collects before it runs a packet (COND_WRITE, 8 dwords).
pub const MAX_COLLECT: usize = 8;

/// What body a type-3 opcode takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Exactly this many body dwords.
    Fixed(u32),
    /// One of these sizes.
    OneOf(&'static [u32]),
    /// Any size (NOP).
    Any,
    /// A SET_* packet over registers [start, end) bytes: an offset dword then data dwords;
    /// `legacy_zero`: the offset's bits 31:16 must be zero.
    Set {
        /// First register of the range.
        start: u32,
        /// End of the range (exclusive).
        end: u32,
        /// Bits 31:16 of the offset must be 0.
        legacy_zero: bool,
    },
    /// Documented, not emulated.
    Unsupported,
}

impl Shape {
    /// Whether a body of `dwords` fits.
    pub fn accepts(&self, dwords: u32) -> bool {
        match *self {
            Shape::Fixed(n) => dwords == n,
            Shape::OneOf(ns) => ns.contains(&dwords),
            Shape::Any | Shape::Unsupported => true,
            Shape::Set { .. } => dwords >= 2,
        }
    }
}

/// The body shape of `opcode` on `asic`, `None` for an opcode the chip does not have.
pub fn shape(opcode: u8, asic: Asic) -> Option<Shape> {
    let set = |start, end, legacy_zero| Some(Shape::Set { start, end, legacy_zero });
    match opcode {
        NOP => Some(Shape::Any),
        ME_INITIALIZE => Some(Shape::Fixed(6)),
        PREAMBLE_CNTL | CLEAR_STATE | MODE_CONTROL | PFP_SYNC_ME | PRED_EXEC => {
            Some(Shape::Fixed(1))
        }
        DEALLOC_STATE => (asic == Asic::Cayman).then_some(Shape::Fixed(1)),
        CONTEXT_CONTROL | DISPATCH_INDIRECT | SET_PREDICATION | MEM_SEMAPHORE => {
            Some(Shape::Fixed(2))
        }
        INDIRECT_BUFFER | COND_EXEC | SET_BASE => Some(Shape::Fixed(3)),
        DISPATCH_DIRECT | SURFACE_SYNC | MEM_WRITE | EVENT_WRITE_EOS => Some(Shape::Fixed(4)),
        EVENT_WRITE_EOP | CP_DMA => Some(Shape::Fixed(5)),
        WAIT_REG_MEM => Some(Shape::Fixed(6)),
        COND_WRITE => Some(Shape::Fixed(8)),
        EVENT_WRITE => Some(Shape::OneOf(&[1, 3])),
        SET_CONFIG_REG => set(0x8000, 0xAC00, true),
        SET_CONTEXT_REG => set(0x2_8000, 0x2_9000, false),
        SET_RESOURCE => set(0x3_0000, 0x3_8000, false),
        SET_LOOP_CONST => set(0x3_A200, 0x3_A500, true),
        SET_BOOL_CONST => set(0x3_A500, 0x3_A518, true),
        SET_SAMPLER => set(0x3_C000, 0x3_C600, false),
        SET_CTL_CONST => set(0x3_CFF0, 0x3_FF0C, true),
        SET_ALU_CONST => Some(Shape::Unsupported),
        op if UNSUPPORTED.contains(&op) => Some(Shape::Unsupported),
        _ => None,
    }
}

/// §9.5.4 PRED_EXEC: whether DEVICE_SELECT (CONTROL 31:24, "to select one or more device IDs")
/// names the GPU whose ME_INITIALIZE gave it `device_id` (§9.2.1 DW5 23:16).
///
/// The document calls DEVICE_SELECT a selection of "one or more" IDs (the R5xx document words
/// the same field a "bitfield"), so it is a mask, but it does not say which bit names which
/// ID. The model's decision: bit n selects device ID n + 1, so the eight bits name IDs 1-8
/// and the ID Linux radeon gives its GPU, 1 (`PACKET3_ME_INITIALIZE_DEVICE_ID(1)`,
/// evergreen.c), is the lowest bit (bit 24). ID 0 (no ID given) and IDs above 8 are named by
/// no bit, so such a GPU skips every PRED_EXEC body.
pub const fn device_selected(device_select: u8, device_id: u8) -> bool {
    matches!(device_id, 1..=8) && device_select & (1 << (device_id - 1)) != 0
}
#[cfg(test)]
mod tests {
    use super::*;

    /// Packets whose extracted §9 table is shorter than the document's text (the extraction
    /// stops at a row the table formats differently): the model's size comes from the text
    /// (and Linux radeon, which sends these bodies). Revisit when the tables are completed.
    const TABLE_SHORT: [(u8, &str); 6] = [
        (ME_INITIALIZE, "§9.2.1 DW7 (Linux radeon sends 6 body dwords)"),
        (COND_EXEC, "§9.5.1 table not extracted"),
        (COND_WRITE, "§9.5.2 DW7-DW9 (WRITE_ADDRESS_LO/HI, WRITE_DATA)"),
        (EVENT_WRITE, "§9.6.1: the 1-dword form without an address"),
        (EVENT_WRITE_EOP, "§9.6.2 DW6 DATA_HI"),
        (MEM_SEMAPHORE, "§9.6.4 DW3 (SEM_SEL, ADDRESS_HI)"),
    ];

    #[test]
    fn body_sizes_agree_with_the_packet_tables() {
        for p in baregpu_regs::evergreen::packets::ALL {
            for asic in Asic::ALL {
                let table = p.body_len();
                let short = TABLE_SHORT.iter().any(|&(op, _)| op == p.opcode);
                let sizes: &[u32] = match shape(p.opcode, asic) {
                    Some(Shape::Fixed(n)) => &[n],
                    Some(Shape::OneOf(ns)) => ns,
                    // SET_* bodies and NOP: open-ended in the table too.
                    Some(Shape::Set { .. } | Shape::Any) => {
                        assert_eq!(table.max, None, "{p:?}");
                        continue;
                    }
                    Some(Shape::Unsupported) | None => continue,
                };
                let agree = sizes.iter().all(|&n| table.accepts(n));
                assert!(agree != short, "{p:?} on {asic:?}: model {sizes:?}, table {table:?}");
            }
        }
    }
}
