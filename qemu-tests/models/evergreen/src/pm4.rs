//! PM4 packet layout (amd-evergreen-cayman-acceleration §9.1) and the type-3 packets the CP
//! knows, with the body each takes: from the packet table (`baregpu_regs::evergreen::packets`,
//! extracted from the document and checked against it; opcodes, SET_* ranges and the packets
//! §9 omits from the reviewed corrections, with their Linux radeon sources).

use baregpu_regs::evergreen::Family;
use baregpu_regs::evergreen::packets as p;
use baregpu_regs::packet::Packet;

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
pub const NOP: u8 = p::NOP.opcode;
/// SET_BASE (not in the document: the table's correction from Linux radeon).
pub const SET_BASE: u8 = p::SET_BASE.opcode;
/// §9.4.1.
pub const CLEAR_STATE: u8 = p::CLEAR_STATE.opcode;
/// §9.4.2 (Cayman).
pub const DEALLOC_STATE: u8 = p::DEALLOC_STATE.opcode;
/// §9.3.12.
pub const DISPATCH_DIRECT: u8 = p::DISPATCH_DIRECT.opcode;
/// §9.3.13.
pub const DISPATCH_INDIRECT: u8 = p::DISPATCH_INDIRECT.opcode;
/// §9.4.3.
pub const MODE_CONTROL: u8 = p::MODE_CONTROL.opcode;
/// §9.5.3.
pub const SET_PREDICATION: u8 = p::SET_PREDICATION.opcode;
/// §9.5.1.
pub const COND_EXEC: u8 = p::COND_EXEC.opcode;
/// §9.5.4.
pub const PRED_EXEC: u8 = p::PRED_EXEC.opcode;
/// §9.4.4.
pub const CONTEXT_CONTROL: u8 = p::CONTEXT_CONTROL.opcode;
/// §9.3.1.
pub const INDIRECT_BUFFER: u8 = p::INDIRECT_BUFFER.opcode;
/// §9.6.4.
pub const MEM_SEMAPHORE: u8 = p::MEM_SEMAPHORE.opcode;
/// §9.6.8.
pub const WAIT_REG_MEM: u8 = p::WAIT_REG_MEM.opcode;
/// §9.7.1.
pub const MEM_WRITE: u8 = p::MEM_WRITE.opcode;
/// CP_DMA (not in the document: the table's correction from Linux radeon).
pub const CP_DMA: u8 = p::CP_DMA.opcode;
/// §9.6.5.
pub const PFP_SYNC_ME: u8 = p::PFP_SYNC_ME.opcode;
/// §9.6.7.
pub const SURFACE_SYNC: u8 = p::SURFACE_SYNC.opcode;
/// §9.2.1.
pub const ME_INITIALIZE: u8 = p::ME_INITIALIZE.opcode;
/// §9.5.2.
pub const COND_WRITE: u8 = p::COND_WRITE.opcode;
/// §9.6.1.
pub const EVENT_WRITE: u8 = p::EVENT_WRITE.opcode;
/// §9.6.2.
pub const EVENT_WRITE_EOP: u8 = p::EVENT_WRITE_EOP.opcode;
/// §9.6.3.
pub const EVENT_WRITE_EOS: u8 = p::EVENT_WRITE_EOS.opcode;
/// §9.2.2.
pub const PREAMBLE_CNTL: u8 = p::PREAMBLE_CNTL.opcode;

/// Packets the model knows but does not emulate (no rendering engine: drawing, index and
/// stream-out packets, §9.3.2-§9.3.11, §9.6.6; SET_ALU_CONST, as Evergreen has no ALU constant
/// register file), so the CP stops on them instead of pretending.
const UNSUPPORTED: [Packet<Family>; 19] = [
    p::INDEX_BUFFER_SIZE,
    p::INDIRECT_BUFFER_END,
    p::REG_RMW,
    p::DRAW_INDIRECT,
    p::DRAW_INDEX_INDIRECT,
    p::INDEX_BASE,
    p::DRAW_INDEX_2,
    p::DRAW_INDEX_OFFSET,
    p::INDEX_TYPE,
    p::DRAW_INDEX,
    p::DRAW_INDEX_AUTO,
    p::DRAW_INDEX_IMMED,
    p::NUM_INSTANCES,
    p::DRAW_INDEX_MULTI_AUTO,
    p::STRMOUT_BUFFER_UPDATE,
    p::DRAW_INDEX_OFFSET_2,
    p::DRAW_INDEX_MULTI_ELEMENT,
    p::MPEG_INDEX,
    p::SET_ALU_CONST,
];

/// Packets the model's CP executes (§9: the compute and synchronisation subset).
const EXECUTED: [Packet<Family>; 29] = [
    p::NOP,
    p::ME_INITIALIZE,
    p::PREAMBLE_CNTL,
    p::CLEAR_STATE,
    p::MODE_CONTROL,
    p::PFP_SYNC_ME,
    p::PRED_EXEC,
    p::DEALLOC_STATE,
    p::CONTEXT_CONTROL,
    p::DISPATCH_INDIRECT,
    p::SET_PREDICATION,
    p::MEM_SEMAPHORE,
    p::INDIRECT_BUFFER,
    p::COND_EXEC,
    p::SET_BASE,
    p::DISPATCH_DIRECT,
    p::SURFACE_SYNC,
    p::MEM_WRITE,
    p::EVENT_WRITE_EOS,
    p::EVENT_WRITE_EOP,
    p::CP_DMA,
    p::WAIT_REG_MEM,
    p::COND_WRITE,
    p::EVENT_WRITE,
    p::SET_CONFIG_REG,
    p::SET_CONTEXT_REG,
    p::SET_RESOURCE,
    p::SET_LOOP_CONST,
    p::SET_BOOL_CONST,
];

/// The largest fixed body the CP collects before it runs a packet (COND_WRITE, 8 dwords).
pub const MAX_COLLECT: usize = 8;

/// What body a type-3 opcode takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A body its packet's layout takes (the table's lengths), collected before it runs.
    Fixed(Packet<Family>),
    /// Any size within the table's lengths, not collected (NOP).
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
            Shape::Fixed(packet) => packet.check_body(dwords as usize).is_ok(),
            Shape::Any | Shape::Unsupported => true,
            Shape::Set { .. } => dwords >= 2,
        }
    }
}

/// The body shape of `opcode` on `asic` (from the checked packet table: lengths, `SET_*`
/// ranges, the chips a packet's heading names), `None` for an opcode the chip does not have.
pub fn shape(opcode: u8, asic: Asic) -> Option<Shape> {
    let packet = *p::ALL.iter().find(|p| p.opcode == opcode)?;
    if packet.chips == "Cayman" && asic != Asic::Cayman {
        return None;
    }
    if UNSUPPORTED.contains(&packet) {
        return Some(Shape::Unsupported);
    }
    if !EXECUTED.contains(&packet) && packet.register_range.is_none() {
        return None;
    }
    Some(match packet.register_range {
        Some(r) => {
            Shape::Set { start: r.start as u32, end: r.end as u32, legacy_zero: r.legacy_zero }
        }
        None if packet == p::NOP => Shape::Any,
        None => Shape::Fixed(packet),
    })
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
