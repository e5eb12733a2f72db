//! Evergreen/Cayman PM4 type-3 packets (amd-evergreen-cayman-acceleration §9): the header,
//! the opcodes this driver emits, register writes by `SET_*` range, and the packet bodies.
//!
//! The document gives bodies but no opcode values; those are Linux radeon evergreend.h /
//! Mesa r600 evergreend.h `PACKET3_*`. Every packet goes to a [`CommandSink`] whole or not at
//! all (a ring, an indirect buffer, a stack buffer).

use core::fmt;

use baregpu_hal::dma::BusAddress;
use baregpu_hal::register::{Absolute, Register, Scalar, Writable};
use baregpu_regs::evergreen::Family;
use baregpu_ring::evergreen::set_range;
pub use baregpu_ring::pm4::Opcode;
use baregpu_ring::pm4::{CommandSink, NoSpace, Pm4Error, type3_header};

/// The type-3 opcodes this driver emits: the generated §9 packet table
/// (`baregpu_regs::evergreen::packets`, opcodes the document omits from Linux radeon
/// evergreend.h) where it has them, and the few it leaves without an opcode or omits.
pub mod opcode {
    use super::Opcode;
    use baregpu_regs::evergreen::packets as p;

    /// §9.7.2 `NOP`.
    pub const NOP: Opcode = Opcode::of(p::NOP);
    /// `SET_BASE` (not in the document; Linux radeon evergreend.h 0x11): body BASE_INDEX
    /// (1 = the DISPATCH_INDIRECT / DRAW_INDIRECT base, Linux evergreen_cs.c), address lo, hi.
    pub const SET_BASE: Opcode = Opcode::new(0x11);
    /// §9.4.2 `DEALLOC_STATE`, Cayman (the table has no opcode: Mesa r600 evergreend.h 0x14).
    pub const DEALLOC_STATE: Opcode = Opcode::new(0x14);
    /// §9.3.12 `DISPATCH_DIRECT`.
    pub const DISPATCH_DIRECT: Opcode = Opcode::of(p::DISPATCH_DIRECT);
    /// §9.3.13 `DISPATCH_INDIRECT`.
    pub const DISPATCH_INDIRECT: Opcode = Opcode::of(p::DISPATCH_INDIRECT);
    /// §9.5.3 `SET_PREDICATION`.
    pub const SET_PREDICATION: Opcode = Opcode::of(p::SET_PREDICATION);
    /// §9.5.1 `COND_EXEC`.
    pub const COND_EXEC: Opcode = Opcode::of(p::COND_EXEC);
    /// §9.5.4 `PRED_EXEC`.
    pub const PRED_EXEC: Opcode = Opcode::of(p::PRED_EXEC);
    /// §9.6.4 `MEM_SEMAPHORE`.
    pub const MEM_SEMAPHORE: Opcode = Opcode::of(p::MEM_SEMAPHORE);
    /// §9.6.8 `WAIT_REG_MEM`.
    pub const WAIT_REG_MEM: Opcode = Opcode::of(p::WAIT_REG_MEM);
    /// §9.7.1 `MEM_WRITE`.
    pub const MEM_WRITE: Opcode = Opcode::of(p::MEM_WRITE);
    /// `CP_DMA` (not in the document; Linux radeon evergreend.h `PACKET3_CP_DMA` 0x41).
    pub const CP_DMA: Opcode = Opcode::new(0x41);
    /// §9.6.5 `PFP_SYNC_ME` (the table has no opcode: Mesa r600 r600d_common.h 0x42).
    pub const PFP_SYNC_ME: Opcode = Opcode::new(0x42);
    /// §9.6.7 `SURFACE_SYNC`.
    pub const SURFACE_SYNC: Opcode = Opcode::of(p::SURFACE_SYNC);
    /// §9.2.1 `ME_INITIALIZE`.
    pub const ME_INITIALIZE: Opcode = Opcode::of(p::ME_INITIALIZE);
    /// §9.5.2 `COND_WRITE`.
    pub const COND_WRITE: Opcode = Opcode::of(p::COND_WRITE);
    /// §9.6.1 `EVENT_WRITE`.
    pub const EVENT_WRITE: Opcode = Opcode::of(p::EVENT_WRITE);
    /// §9.6.2 `EVENT_WRITE_EOP`.
    pub const EVENT_WRITE_EOP: Opcode = Opcode::of(p::EVENT_WRITE_EOP);
    /// §9.6.3 `EVENT_WRITE_EOS`.
    pub const EVENT_WRITE_EOS: Opcode = Opcode::of(p::EVENT_WRITE_EOS);
    /// §9.4.14 `SET_CONFIG_REG`.
    pub const SET_CONFIG_REG: Opcode = Opcode::of(p::SET_CONFIG_REG);
}

/// Field positions and values of the §9 packet bodies this module writes, named after the
/// document's tables (values the document leaves out cite Linux radeon evergreend.h).
pub mod field {
    /// §9.1.4 type-3 header SHADER_TYPE (bit 1): 1 = compute.
    pub const SHADER_TYPE_COMPUTE: u32 = 1 << 1;
    /// §9.1.4 type-3 header PREDICATE (bit 0): the packet obeys SET_PREDICATION.
    pub const PREDICATE: u32 = 1;
    /// ADDRESS_HI (7:0): address bits 39:32 of every 40-bit address.
    pub const ADDRESS_HI_MASK: u32 = 0xFF;
    /// §9.2.1 `ME_INITIALIZE` DW5 DEVICE_ID (23:16).
    pub const DEVICE_ID_SHIFT: u32 = 16;
    /// §9.6.1 EVENT_TYPE (5:0).
    pub const EVENT_TYPE_MASK: u32 = 0x3F;
    /// §9.6.1 EVENT_INDEX (11:8).
    pub const EVENT_INDEX_SHIFT: u32 = 8;
    /// §9.6.1 EVENT_INDEX width mask (before the shift).
    pub const EVENT_INDEX_MASK: u32 = 0xF;
    /// §9.6.3 `EVENT_WRITE_EOS` EVENT_INDEX 6.
    pub const EVENT_INDEX_EOS: u32 = 6;
    /// §9.6.2 DATA_SEL / §9.6.3 CMD (31:29).
    pub const DATA_SEL_SHIFT: u32 = 29;
    /// §9.6.2 DATA_SEL 2: send the 64-bit data; §9.6.3 CMD 010: store the 32-bit data.
    pub const DATA_SEL_DATA: u32 = 2;
    /// §9.6.2 INT_SEL (25:24).
    pub const INT_SEL_SHIFT: u32 = 24;
    /// §9.6.2 INT_SEL 2: interrupt once the write is confirmed.
    pub const INT_SEL_ON_CONFIRM: u32 = 2;
    /// §9.6.7 `SURFACE_SYNC` ENGINE (bit 31): the ME performs the sync.
    pub const SURFACE_SYNC_ENGINE_ME: u32 = 1 << 31;
    /// §9.6.7 COHER_CNTL bits (28:0) below ENGINE.
    pub const COHER_CNTL_MASK: u32 = 0x1FFF_FFFF;
    /// §9.6.7 COHER_SIZE of "everything" (Linux radeon evergreen.c fence emission).
    pub const COHER_SIZE_ALL: u32 = 0xFFFF_FFFF;
    /// §9.6.7 / §9.6.8 POLL_INTERVAL in clocks (Linux radeon: 10).
    pub const POLL_INTERVAL: u32 = 10;
    /// §9.6.8 `WAIT_REG_MEM` MEM_SPACE / §9.5.2 `COND_WRITE` POLL_SPACE (bit 4): memory.
    pub const POLL_SPACE_MEMORY: u32 = 1 << 4;
    /// §9.5.2 `COND_WRITE` WRITE_SPACE (bit 8): memory.
    pub const WRITE_SPACE_MEMORY: u32 = 1 << 8;
    /// §9.5.1 / §9.5.4 EXEC_COUNT is 14 bits (13:0).
    pub const EXEC_COUNT_LIMIT: usize = 1 << 14;
    /// §9.5.4 `PRED_EXEC` device_select (31:24).
    pub const DEVICE_SELECT_SHIFT: u32 = 24;
    /// §9.5.3 `SET_PREDICATION` PRED_OP (18:16).
    pub const PRED_OP_SHIFT: u32 = 16;
    /// §9.5.3 `SET_PREDICATION` PREDICATION_BOOLEAN (bit 8).
    pub const PREDICATION_BOOLEAN: u32 = 1 << 8;
    /// §9.6.4 `MEM_SEMAPHORE` SEM_SEL (31:29).
    pub const SEM_SEL_SHIFT: u32 = 29;
    /// §9.6.4 `MEM_SEMAPHORE` WAIT_ON_SIGNAL (bit 12).
    pub const WAIT_ON_SIGNAL: u32 = 1 << 12;
    /// `CP_DMA` CP_SYNC (bit 31 of the second dword; Linux radeon evergreend.h
    /// `PACKET3_CP_DMA_CP_SYNC`).
    pub const CP_DMA_CP_SYNC: u32 = 1 << 31;
    /// `CP_DMA` SRC_SEL (30:29; Linux radeon evergreend.h `PACKET3_CP_DMA_SRC_SEL`).
    pub const CP_DMA_SRC_SEL_SHIFT: u32 = 29;
    /// `CP_DMA` SRC_SEL 2: the source dword is the data to write.
    pub const CP_DMA_SRC_SEL_DATA: u32 = 2;
}

/// Type-3 header (§9.1.4): the ring's header (TYPE 3, COUNT = body dwords - 1, IT_OPCODE)
/// with SHADER_TYPE (bit 1, 1 = compute) and PREDICATE (bit 0).
#[inline]
pub fn header(
    op: Opcode,
    body_dwords: usize,
    compute: bool,
    predicate: bool,
) -> Result<u32, PacketError> {
    let h = type3_header(op, body_dwords)
        .map_err(|_| PacketError::BadLength { dwords: body_dwords })?;
    let shader = if compute { field::SHADER_TYPE_COMPUTE } else { 0 };
    Ok(h | shader | if predicate { field::PREDICATE } else { 0 })
}

/// Largest type-3 body: COUNT is 14 bits (§9.1.4).
pub const MAX_BODY_DWORDS: usize = field::EXEC_COUNT_LIMIT;

/// A packet that could not be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum PacketError {
    /// The sink had no room; nothing was written.
    NoSpace(NoSpace),
    /// The register lies in no `SET_*` range of its packet (§9.4.14-§9.4.18 ranges, Linux
    /// radeon evergreend.h `PACKET3_SET_*_REG_START`/`_END`).
    OutOfRange {
        /// Byte offset of the register.
        offset: usize,
    },
    /// A packet the ring's PM4 writer refused (register writes, `INDIRECT_BUFFER`).
    Pm4(Pm4Error),
    /// A body longer than COUNT can encode, or empty.
    BadLength {
        /// Body dwords.
        dwords: usize,
    },
    /// A bus address beyond the 40 bits the packets carry (§9: ADDRESS_HI 7:0), or not aligned
    /// as the packet requires.
    BadAddress {
        /// The address.
        address: u64,
        /// The alignment the field needs, in bytes.
        align: u64,
    },
}

impl From<Pm4Error> for PacketError {
    fn from(e: Pm4Error) -> Self {
        PacketError::Pm4(e)
    }
}

impl From<NoSpace> for PacketError {
    fn from(e: NoSpace) -> Self {
        PacketError::NoSpace(e)
    }
}

impl fmt::Display for PacketError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PacketError::NoSpace(_) => f.write_str("no room in the sink for the packet"),
            PacketError::Pm4(_) => f.write_str("the PM4 writer refused the packet"),
            PacketError::OutOfRange { offset } => {
                write!(f, "register {offset:#x} is outside the SET_* range of its packet")
            }
            PacketError::BadLength { dwords } => write!(f, "a type-3 body of {dwords} dwords"),
            PacketError::BadAddress { address, align } => {
                write!(f, "bus address {address:#x} is not a {align}-aligned 40-bit address")
            }
        }
    }
}

impl core::error::Error for PacketError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            PacketError::NoSpace(e) => Some(e),
            PacketError::Pm4(e) => Some(e),
            PacketError::OutOfRange { .. }
            | PacketError::BadLength { .. }
            | PacketError::BadAddress { .. } => None,
        }
    }
}

/// A generated Evergreen register that a `SET_*` packet can reach (absolute offset).
pub trait EvergreenRegister: Register<Family = Family, Base = Absolute> {}
impl<R: Register<Family = Family, Base = Absolute>> EvergreenRegister for R {}

/// Write `values` to consecutive registers from byte offset `first` with the `SET_*` packet
/// whose range holds them (the ring's `SET_RANGES`; body dw1 = (first - range start) >> 2,
/// §9.4.14-§9.4.18), with SHADER_TYPE compute when `compute`. One reservation and one run of
/// stores (`write_parts`).
#[inline]
pub fn set_regs(
    sink: &mut impl CommandSink,
    first: usize,
    values: &[u32],
    compute: bool,
) -> Result<(), PacketError> {
    let range = set_range(first).ok_or(PacketError::OutOfRange { offset: first })?;
    let last = first + 4 * values.len();
    if last > range.end || values.is_empty() || !first.is_multiple_of(4) {
        return Err(PacketError::OutOfRange { offset: last.saturating_sub(4) });
    }
    let n = values.len() + 1;
    let h = header(Opcode::of(range.packet), n, compute, false)?;
    sink.write_parts(&[h, ((first - range.start) >> 2) as u32], values)?;
    Ok(())
}

/// Write one generated register with its `SET_*` packet.
pub fn set_reg<R: EvergreenRegister + Writable + Scalar>(
    sink: &mut impl CommandSink,
    value: R,
    compute: bool,
) -> Result<(), PacketError> {
    set_regs(sink, R::OFFSET, &[value.to_raw()], compute)
}

/// Write a type-3 packet.
#[inline]
pub fn packet(
    sink: &mut impl CommandSink,
    op: Opcode,
    body: &[u32],
    compute: bool,
) -> Result<(), PacketError> {
    if body.is_empty() || body.len() > MAX_BODY_DWORDS {
        return Err(PacketError::BadLength { dwords: body.len() });
    }
    sink.write_packet(header(op, body.len(), compute, false)?, body)?;
    Ok(())
}

/// Check that `address` fits the 40-bit address of the packets (ADDRESS_HI 7:0) and `align`.
#[inline]
pub fn address40(address: BusAddress, align: u64) -> Result<(u32, u32), PacketError> {
    if address.0 >> 40 != 0 || !address.0.is_multiple_of(align) {
        return Err(PacketError::BadAddress { address: address.0, align });
    }
    Ok((address.low(), address.high() & field::ADDRESS_HI_MASK))
}

/// The device ID this driver gives its GPU in `ME_INITIALIZE` (§9.2.1 DW5 23:16, "a GPU unique
/// Device ID" that `PRED_EXEC` selects on, §9.5.4): 1, as Linux radeon evergreen.c
/// (`PACKET3_ME_INITIALIZE_DEVICE_ID(1)`).
pub const DEVICE_ID: u8 = 1;

/// §9.2.1 `ME_INITIALIZE` body: default reset control 1, reserved 0, MAX_CONTEXT (Linux radeon
/// evergreen.c: `max_hw_contexts - 1` = 7 on Cypress and Cayman), [`DEVICE_ID`] in 23:16, no
/// header dump.
pub const ME_INITIALIZE_BODY: [u32; 6] =
    [1, 0, 7, (DEVICE_ID as u32) << field::DEVICE_ID_SHIFT, 0, 0];

/// `EVENT_TYPE` values (Linux radeon evergreend.h / Mesa r600 evergreend.h `EVENT_TYPE_*`).
pub mod event {
    /// `CS_PARTIAL_FLUSH` 0x07, EVENT_INDEX 4 (§9.6.1).
    pub const CS_PARTIAL_FLUSH: u32 = 0x07;
    /// `CACHE_FLUSH_AND_INV_EVENT_TS` 0x14, EVENT_INDEX 5 (§9.6.2).
    pub const CACHE_FLUSH_AND_INV_TS: u32 = 0x14;
    /// EVENT_INDEX of the partial flushes (§9.6.1).
    pub const INDEX_PARTIAL_FLUSH: u32 = 4;
    /// EVENT_INDEX of the EOP time-stamp/fence events (§9.6.2).
    pub const INDEX_EOP: u32 = 5;
}

/// §9.6.1 `EVENT_WRITE` body (2-dword form): EVENT_TYPE 5:0, EVENT_INDEX 11:8.
pub const fn event_write(event_type: u32, index: u32) -> [u32; 1] {
    [(event_type & field::EVENT_TYPE_MASK)
        | ((index & field::EVENT_INDEX_MASK) << field::EVENT_INDEX_SHIFT)]
}

/// §9.6.2 `EVENT_WRITE_EOP` with 64-bit data (DATA_SEL 2 in 31:29, quadword-aligned address)
/// and INT_SEL in 25:24 (2 = interrupt when the write is confirmed, 0 = none).
#[inline]
pub fn eop_fence(address: BusAddress, seq: u64, interrupt: bool) -> Result<[u32; 5], PacketError> {
    let (lo, hi) = address40(address, 8)?;
    let int_sel = if interrupt { field::INT_SEL_ON_CONFIRM } else { 0 };
    Ok([
        event::CACHE_FLUSH_AND_INV_TS | (event::INDEX_EOP << field::EVENT_INDEX_SHIFT),
        lo,
        hi | (field::DATA_SEL_DATA << field::DATA_SEL_SHIFT) | (int_sel << field::INT_SEL_SHIFT),
        seq as u32,
        (seq >> 32) as u32,
    ])
}

/// §9.6.7 `SURFACE_SYNC` body: ENGINE ME (bit 31) | COHER_CNTL, COHER_SIZE 0xFFFFFFFF (all),
/// COHER_BASE 0, POLL_INTERVAL 10 (Linux radeon evergreen.c fence emission).
pub const fn surface_sync_all(coher_cntl: u32) -> [u32; 4] {
    [
        field::SURFACE_SYNC_ENGINE_ME | (coher_cntl & field::COHER_CNTL_MASK),
        field::COHER_SIZE_ALL,
        0,
        field::POLL_INTERVAL,
    ]
}

/// §9.6.8 `WAIT_REG_MEM` FUNCTION values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum Compare {
    /// 000 always.
    Always = 0,
    /// 001 less than the reference.
    Less = 1,
    /// 010 less or equal.
    LessEqual = 2,
    /// 011 equal.
    Equal = 3,
    /// 100 not equal.
    NotEqual = 4,
    /// 101 greater or equal.
    GreaterEqual = 5,
    /// 110 greater.
    Greater = 6,
}

/// §9.6.8 `WAIT_REG_MEM` on a memory dword (ENGINE ME, MEM_SPACE 1): wait until
/// `(*address & mask) <compare> reference`.
pub fn wait_mem(
    address: BusAddress,
    compare: Compare,
    reference: u32,
    mask: u32,
) -> Result<[u32; 6], PacketError> {
    let (lo, hi) = address40(address, 4)?;
    Ok([field::POLL_SPACE_MEMORY | compare as u32, lo, hi, reference, mask, field::POLL_INTERVAL])
}

/// §9.5.1 `COND_EXEC`: the next `exec_dwords` dwords run only if the dword at `address` is not
/// zero (EXEC_COUNT 13:0).
pub fn cond_exec(address: BusAddress, exec_dwords: usize) -> Result<[u32; 3], PacketError> {
    let (lo, hi) = address40(address, 4)?;
    if exec_dwords >= field::EXEC_COUNT_LIMIT {
        return Err(PacketError::BadLength { dwords: exec_dwords });
    }
    Ok([lo, hi, exec_dwords as u32])
}

/// §9.5.4 `PRED_EXEC` device_select (CONTROL 31:24) bit of device ID `id`: `None` for IDs no
/// bit names.
///
/// The document calls device_select a selection of "one or more device IDs" (the R5xx
/// document calls the same field a "bitfield"), a mask, without saying which bit is which ID.
/// This driver's reading: bit n selects ID n + 1, so the eight bits name IDs 1-8 and the ID
/// Linux radeon (and [`DEVICE_ID`]) gives a single GPU, 1, is the lowest bit; ID 0 is named by
/// no bit.
pub const fn device_select(id: u8) -> Option<u8> {
    match id {
        1..=8 => Some(1 << (id - 1)),
        _ => None,
    }
}

/// §9.5.4 `PRED_EXEC` body: the next `exec_dwords` dwords (EXEC_COUNT 13:0, at least one)
/// run only on the devices `device_select` names ([`device_select`]).
pub fn pred_exec(device_select: u8, exec_dwords: usize) -> Result<[u32; 1], PacketError> {
    if exec_dwords == 0 || exec_dwords >= field::EXEC_COUNT_LIMIT {
        return Err(PacketError::BadLength { dwords: exec_dwords });
    }
    Ok([(u32::from(device_select) << field::DEVICE_SELECT_SHIFT) | exec_dwords as u32])
}

/// §9.6.4 `MEM_SEMAPHORE` SEM_SEL (DW3 31:29).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum SemaphoreOp {
    /// 110: signal, at the bottom of the pipe (after the work before it).
    Signal = 6,
    /// 111: wait, at the top of the pipe (the CP).
    Wait = 7,
}

/// §9.6.4 `MEM_SEMAPHORE` body on the quadword at `address`: SEM_SEL `op`, CLIENT_CODE 0 (CP),
/// SIGNAL_TYPE 0 (increment; a wait has 0), USE_MAILBOX 0, WAIT_ON_SIGNAL (bit 12) as given
/// ("should be set in evergreen, but in cayman it is reserved").
pub fn mem_semaphore(
    address: BusAddress,
    op: SemaphoreOp,
    wait_on_signal: bool,
) -> Result<[u32; 2], PacketError> {
    let (lo, hi) = address40(address, 8)?;
    let wait_on_signal = if wait_on_signal { field::WAIT_ON_SIGNAL } else { 0 };
    Ok([lo, ((op as u32) << field::SEM_SEL_SHIFT) | wait_on_signal | hi])
}

/// §9.5.3 `SET_PREDICATION` operations (PRED_OP 18:16).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum PredOp {
    /// 000 clear the predicate: predicated packets run.
    Clear = 0,
    /// 001 ZPASS predicate from the DB counts at the address.
    Zpass = 1,
    /// 010 PRIMCOUNT predicate from the streamout counts at the address.
    PrimCount = 2,
}

/// §9.5.3 `SET_PREDICATION` body: 16-byte aligned START_ADDR, PRED_OP, HINT 0,
/// PREDICATION_BOOLEAN (bit 8: 1 = draw if visible / no overflow).
pub fn set_predication(
    address: BusAddress,
    op: PredOp,
    draw_if_visible: bool,
) -> Result<[u32; 2], PacketError> {
    let (lo, hi) = address40(address, 16)?;
    let boolean = if draw_if_visible { field::PREDICATION_BOOLEAN } else { 0 };
    Ok([lo, ((op as u32) << field::PRED_OP_SHIFT) | boolean | hi])
}

/// §9.7.1 `MEM_WRITE` body: 64-bit `value` to the quadword at `address` (DATA32 0, no write
/// confirm, packet data).
pub fn mem_write(address: BusAddress, value: u64) -> Result<[u32; 4], PacketError> {
    let (lo, hi) = address40(address, 8)?;
    Ok([lo, hi, value as u32, (value >> 32) as u32])
}

/// §9.5.2 `COND_WRITE` body, memory to memory: if `(*poll & mask) <compare> reference`, write
/// `data` to the dword at `write` (WRITE_SPACE 1 in bit 8, POLL_SPACE 1 in bit 4).
pub fn cond_write(
    poll: BusAddress,
    compare: Compare,
    reference: u32,
    mask: u32,
    write: BusAddress,
    data: u32,
) -> Result<[u32; 8], PacketError> {
    let (plo, phi) = address40(poll, 4)?;
    let (wlo, whi) = address40(write, 4)?;
    let spaces = field::WRITE_SPACE_MEMORY | field::POLL_SPACE_MEMORY;
    Ok([spaces | compare as u32, plo, phi, reference, mask, wlo, whi, data])
}

/// `EVENT_TYPE` `CS_DONE` (Mesa r600 evergreend.h `EVENT_TYPE_CS_DONE` 0x2F), EVENT_INDEX 6
/// (§9.6.3).
pub const CS_DONE: u32 = 0x2F;

/// §9.6.3 `EVENT_WRITE_EOS` body: at the end of the compute shaders before it, store `data`
/// (CMD 010 in 31:29) to the dword at `address`.
pub fn eos_write(address: BusAddress, data: u32) -> Result<[u32; 4], PacketError> {
    let (lo, hi) = address40(address, 4)?;
    Ok([
        CS_DONE | (field::EVENT_INDEX_EOS << field::EVENT_INDEX_SHIFT),
        lo,
        (field::DATA_SEL_DATA << field::DATA_SEL_SHIFT) | hi,
        data,
    ])
}

/// Largest CP_DMA transfer: BYTE_COUNT is 21 bits (Linux radeon evergreend.h COMMAND 20:0;
/// Linux splits at 0x1FFFFF bytes).
pub const CP_DMA_MAX_BYTES: usize = (1 << 21) - 1;

/// `CP_DMA` (Linux radeon evergreend.h): copy `bytes` from `src` to `dst` (SRC_SEL 0, both in
/// memory, incrementing), `sync` = CP_SYNC (the ME waits for the transfer).
pub fn cp_dma_copy(
    src: BusAddress,
    dst: BusAddress,
    bytes: usize,
    sync: bool,
) -> Result<[u32; 5], PacketError> {
    let (slo, shi) = address40(src, 1)?;
    let (dlo, dhi) = address40(dst, 1)?;
    if bytes == 0 || bytes > CP_DMA_MAX_BYTES {
        return Err(PacketError::BadLength { dwords: bytes.div_ceil(4) });
    }
    let sync = if sync { field::CP_DMA_CP_SYNC } else { 0 };
    Ok([slo, sync | shi, dlo, dhi, bytes as u32])
}

/// `CP_DMA` fill: write the dword `value` over `bytes` at `dst` (SRC_SEL 2 = DATA in 30:29,
/// the data in the source-address dword; Linux radeon evergreend.h). `bytes` a multiple of 4
/// (Linux evergreen_cs.c: non memory-to-memory transfers need a dword count).
pub fn cp_dma_fill(
    value: u32,
    dst: BusAddress,
    bytes: usize,
    sync: bool,
) -> Result<[u32; 5], PacketError> {
    let (dlo, dhi) = address40(dst, 4)?;
    if bytes == 0 || bytes > CP_DMA_MAX_BYTES || !bytes.is_multiple_of(4) {
        return Err(PacketError::BadLength { dwords: bytes.div_ceil(4) });
    }
    let sync = if sync { field::CP_DMA_CP_SYNC } else { 0 };
    let data = field::CP_DMA_SRC_SEL_DATA << field::CP_DMA_SRC_SEL_SHIFT;
    Ok([value, sync | data, dlo, dhi, bytes as u32])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_match_the_worked_examples() {
        // SET_CONTEXT_REG of 3 registers, compute: 0xC0036902; DISPATCH_DIRECT: 0xC0031502.
        let set_context = Opcode::of(baregpu_ring::evergreen::set_range(0x28000).unwrap().packet);
        assert_eq!(header(set_context, 4, true, false), Ok(0xC003_6902));
        assert_eq!(header(opcode::DISPATCH_DIRECT, 4, true, false), Ok(0xC003_1502));
        assert_eq!(header(opcode::NOP, 1, false, true), Ok(0xC000_1001));
    }

    #[test]
    fn set_regs_refuse_registers_outside_the_ranges() {
        let mut buf = [0u32; 8];
        let mut sink = baregpu_ring::pm4::SliceSink::new(&mut buf);
        assert_eq!(
            set_regs(&mut sink, 0xC100, &[1], false),
            Err(PacketError::OutOfRange { offset: 0xC100 })
        );
        assert_eq!(
            set_regs(&mut sink, 0xABFC, &[1, 2], false),
            Err(PacketError::OutOfRange { offset: 0xAC00 })
        );
        assert!(sink.is_empty());
        set_regs(&mut sink, 0x8500, &[7], false).unwrap();
        assert_eq!(sink.written(), &[0xC001_6800, 0x140, 7]);
    }

    #[test]
    fn sync_bodies_follow_the_document_layout() {
        // §9.6.4: ADDRESS_LO, then SEM_SEL 31:29 | WAIT_ON_SIGNAL 12 | ADDRESS_HI 7:0.
        let a = BusAddress(0x12_3456_7808);
        assert_eq!(mem_semaphore(a, SemaphoreOp::Signal, false), Ok([0x3456_7808, 0xC000_0012]));
        assert_eq!(mem_semaphore(a, SemaphoreOp::Wait, true), Ok([0x3456_7808, 0xE000_1012]));
        assert!(mem_semaphore(BusAddress(0x1004), SemaphoreOp::Wait, false).is_err());
        // §9.5.4: device_select 31:24 | exec_count 13:0.
        assert_eq!(pred_exec(0b101, 7), Ok([0x0500_0007]));
        assert!(pred_exec(1, 0).is_err() && pred_exec(1, 1 << 14).is_err());
        assert_eq!((device_select(1), device_select(8)), (Some(1), Some(0x80)));
        assert_eq!((device_select(0), device_select(9)), (None, None));
        assert_eq!(ME_INITIALIZE_BODY[3], 1 << 16);
    }

    #[test]
    fn addresses_are_checked() {
        assert!(address40(BusAddress(1 << 40), 4).is_err());
        assert!(address40(BusAddress(0x1004), 8).is_err());
        assert_eq!(address40(BusAddress(0x12_3456_7808), 8), Ok((0x3456_7808, 0x12)));
    }
}
