//! Evergreen/Cayman PM4 type-3 packets (amd-evergreen-cayman-acceleration §9): the header,
//! the opcodes this driver emits, register writes by `SET_*` range, and the packet bodies.
//!
//! The document gives bodies but no opcode values; those are Linux radeon evergreend.h /
//! Mesa r600 evergreend.h `PACKET3_*`. Every packet goes to a [`CommandSink`] whole or not at
//! all (a ring, an indirect buffer, a stack buffer).

use core::fmt;

use baregpu_hal::dma::BusAddress;
use baregpu_hal::register::{
    Absolute, AddressFieldError, AddressProblem, FieldOverflow, Register, Scalar, Writable,
};
use baregpu_regs::evergreen::Family;
use baregpu_regs::evergreen::packets as p;
pub use baregpu_regs::packet::BodyError;
use baregpu_regs::packet::Packet;
use baregpu_ring::evergreen::set_range;
pub use baregpu_ring::pm4::Opcode;
use baregpu_ring::pm4::{CommandSink, NoSpace, Pm4Error, type3_header};

/// A packet of the Evergreen/Cayman table.
pub type EvergreenPacket = Packet<Family>;

/// The type-3 packets this driver emits: the generated §9 packet table
/// (`baregpu_regs::evergreen::packets`: opcodes the document omits from Linux radeon
/// evergreend.h / nid.h and Mesa r600, `SET_BASE` and `CP_DMA`, which §9 does not describe,
/// from the reviewed corrections with their sources).
pub mod opcode {
    pub use baregpu_regs::evergreen::packets::{
        COND_EXEC, COND_WRITE, CP_DMA, DEALLOC_STATE, DISPATCH_DIRECT, DISPATCH_INDIRECT,
        EVENT_WRITE, EVENT_WRITE_EOP, EVENT_WRITE_EOS, ME_INITIALIZE, MEM_SEMAPHORE, MEM_WRITE,
        NOP, PFP_SYNC_ME, PRED_EXEC, SET_BASE, SET_CONFIG_REG, SET_PREDICATION, SURFACE_SYNC,
        WAIT_REG_MEM,
    };
}

/// Header bits and values the packet table does not hold (the body fields are in
/// `baregpu_regs::evergreen::packets::<packet>`).
pub mod field {
    /// §9.1.4 type-3 header SHADER_TYPE (bit 1): 1 = compute.
    pub const SHADER_TYPE_COMPUTE: u32 = 1 << 1;
    /// §9.1.4 type-3 header PREDICATE (bit 0): the packet obeys SET_PREDICATION.
    pub const PREDICATE: u32 = 1;
    /// §9.6.7 COHER_SIZE of "everything" (Linux radeon evergreen.c fence emission).
    pub const COHER_SIZE_ALL: u32 = 0xFFFF_FFFF;
    /// §9.6.7 / §9.6.8 POLL_INTERVAL in clocks (Linux radeon: 10).
    pub const POLL_INTERVAL: u32 = 10;
    /// §9.5.1 / §9.5.4 EXEC_COUNT is 14 bits (13:0).
    pub const EXEC_COUNT_LIMIT: usize = 1 << super::p::cond_exec::EXEC_COUNT.spec.width;
}

/// Type-3 header (§9.1.4): the ring's header (TYPE 3, COUNT = body dwords - 1, IT_OPCODE)
/// with SHADER_TYPE (bit 1, 1 = compute) and PREDICATE (bit 0).
#[inline]
pub fn header(
    op: EvergreenPacket,
    body_dwords: usize,
    compute: bool,
    predicate: bool,
) -> Result<u32, PacketError> {
    op.check_body(body_dwords)?;
    let h = type3_header(Opcode::of(op), body_dwords)
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
    /// A body whose length does not fit the packet's layout in the table.
    Body(BodyError),
    /// A value wider than its body field.
    Field(FieldOverflow),
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

impl From<BodyError> for PacketError {
    fn from(e: BodyError) -> Self {
        PacketError::Body(e)
    }
}

impl From<FieldOverflow> for PacketError {
    fn from(e: FieldOverflow) -> Self {
        PacketError::Field(e)
    }
}

impl From<AddressFieldError> for PacketError {
    fn from(e: AddressFieldError) -> Self {
        let align = match e.problem {
            AddressProblem::Misaligned { align } => align,
            _ => 1,
        };
        PacketError::BadAddress { address: e.address.0, align }
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
            PacketError::Body(_) => f.write_str("the body does not fit the packet's layout"),
            PacketError::Field(_) => f.write_str("a value does not fit its packet field"),
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
            PacketError::Body(e) => Some(e),
            PacketError::Field(e) => Some(e),
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
/// §9.4.14-§9.4.18), with SHADER_TYPE compute when `compute`.
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
    let h = header(range.packet, n, compute, false)?;
    // One reservation and one run of stores.
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

/// Write a type-3 packet; its body must fit the packet's layout ([`PacketError::Body`]).
#[inline]
pub fn packet(
    sink: &mut impl CommandSink,
    op: EvergreenPacket,
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
    Ok((address.low(), address.high()))
}

/// The device ID this driver gives its GPU in `ME_INITIALIZE` (§9.2.1 DW5 23:16, "a GPU unique
/// Device ID" that `PRED_EXEC` selects on, §9.5.4): 1, as Linux radeon evergreen.c
/// (`PACKET3_ME_INITIALIZE_DEVICE_ID(1)`).
pub const DEVICE_ID: u8 = 1;

/// §9.2.1 `ME_INITIALIZE` body: default reset control 1, reserved 0, MAX_CONTEXT (Linux radeon
/// evergreen.c: `max_hw_contexts - 1` = 7 on Cypress and Cayman), [`DEVICE_ID`] in DEVICE_ID,
/// no header dump.
pub fn me_initialize() -> Result<[u32; 6], PacketError> {
    use p::me_initialize::Body;
    let body = Body::new()
        .with_default_reset_control(true)
        .with_max_context(7)?
        .with_device_id(u32::from(DEVICE_ID))?;
    Ok(body.0)
}

/// `EVENT_TYPE` values (Linux radeon evergreend.h / Mesa r600 evergreend.h `EVENT_TYPE_*`).
pub mod event {
    /// `CS_PARTIAL_FLUSH` 0x07, EVENT_INDEX 4 (§9.6.1).
    pub const CS_PARTIAL_FLUSH: u32 = 0x07;
    /// `CACHE_FLUSH_AND_INV_EVENT_TS` 0x14, EVENT_INDEX 5 (§9.6.2).
    pub const CACHE_FLUSH_AND_INV_TS: u32 = 0x14;
}

/// §9.6.1 `EVENT_WRITE` body (2-dword form) of `event_type` with EVENT_INDEX `index`.
pub fn event_write(
    event_type: u32,
    index: p::event_write::EventIndex,
) -> Result<[u32; 1], PacketError> {
    let mut body = [0];
    p::event_write::EVENT_TYPE.put(p::EVENT_WRITE.name, &mut body, event_type)?;
    p::event_write::EVENT_INDEX.put(p::EVENT_WRITE.name, &mut body, index as u32)?;
    Ok(body)
}

/// §9.6.2 `EVENT_WRITE_EOP` with 64-bit data (DATA_SEL DATA64, quadword-aligned address) and
/// INT_SEL ON_CONFIRM (interrupt when the write is confirmed) or NONE.
#[inline]
pub fn eop_fence(address: BusAddress, seq: u64, interrupt: bool) -> Result<[u32; 5], PacketError> {
    use p::event_write_eop::{Body, DataSel, EventIndex, IntSel};
    // 64-bit data needs a quadword address (§9.6.2 ADDRESS_LO).
    address40(address, 8)?;
    let body = Body::new()
        .with_event_type(event::CACHE_FLUSH_AND_INV_TS)?
        .with_event_index(EventIndex::Eop)
        .with_address(address)?
        .with_data_sel(DataSel::Data64)
        .with_int_sel(if interrupt { IntSel::OnConfirm } else { IntSel::None })
        .with_data_lo(seq as u32)?
        .with_data_hi((seq >> 32) as u32)?;
    Ok(body.0)
}

/// §9.6.7 `SURFACE_SYNC` body: ENGINE ME, `coher_cntl`, COHER_SIZE 0xFFFFFFFF (all),
/// COHER_BASE 0, POLL_INTERVAL 10 (Linux radeon evergreen.c fence emission).
#[inline]
pub fn surface_sync_all(coher_cntl: u32) -> Result<[u32; 4], PacketError> {
    use p::surface_sync::{Body, Engine};
    let body = Body::new()
        .with_engine(Engine::Me)
        .with_coher_cntl(coher_cntl)?
        .with_coher_size(field::COHER_SIZE_ALL)?
        .with_poll_interval(field::POLL_INTERVAL)?;
    Ok(body.0)
}

/// §9.6.8 `WAIT_REG_MEM` FUNCTION values.
pub use p::wait_reg_mem::Function as Compare;

/// §9.6.8 `WAIT_REG_MEM` on a memory dword (ENGINE ME, MEM_SPACE memory): wait until
/// `(*address & mask) <compare> reference`.
pub fn wait_mem(
    address: BusAddress,
    compare: Compare,
    reference: u32,
    mask: u32,
) -> Result<[u32; 6], PacketError> {
    use p::wait_reg_mem::{Body, MemSpace};
    address40(address, 4)?;
    let body = Body::new()
        .with_mem_space(MemSpace::Memory)
        .with_function(compare)
        .with_poll_address(address)?
        .with_reference(reference)?
        .with_mask(mask)?
        .with_poll_interval(field::POLL_INTERVAL)?;
    Ok(body.0)
}

/// §9.5.1 `COND_EXEC`: the next `exec_dwords` dwords run only if the dword at `address` is not
/// zero.
pub fn cond_exec(address: BusAddress, exec_dwords: usize) -> Result<[u32; 3], PacketError> {
    address40(address, 4)?;
    let count = u32::try_from(exec_dwords).unwrap_or(u32::MAX);
    let body = p::cond_exec::Body::new()
        .with_bool_addr(address)?
        .with_exec_count(count)
        .map_err(|_| PacketError::BadLength { dwords: exec_dwords })?;
    Ok(body.0)
}

/// §9.5.4 `PRED_EXEC` device_select bit of device ID `id`: `None` for IDs no bit names.
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

/// §9.5.4 `PRED_EXEC` body: the next `exec_dwords` dwords (at least one) run only on the
/// devices `device_select` names ([`device_select`]).
pub fn pred_exec(device_select: u8, exec_dwords: usize) -> Result<[u32; 1], PacketError> {
    let count = u32::try_from(exec_dwords).unwrap_or(u32::MAX);
    if count == 0 {
        return Err(PacketError::BadLength { dwords: exec_dwords });
    }
    let body = p::pred_exec::Body::new()
        .with_device_select(u32::from(device_select))?
        .with_exec_count(count)
        .map_err(|_| PacketError::BadLength { dwords: exec_dwords })?;
    Ok(body.0)
}

/// §9.6.4 `MEM_SEMAPHORE` SEM_SEL: signal (at the bottom of the pipe) or wait (at the CP).
pub use p::mem_semaphore::SemSel as SemaphoreOp;

/// §9.6.4 `MEM_SEMAPHORE` body on the quadword at `address`: SEM_SEL `op`, CLIENT_CODE 0 (CP),
/// SIGNAL_TYPE 0 (increment; a wait has 0), USE_MAILBOX 0, WAIT_ON_SIGNAL as given ("should be
/// set in evergreen, but in cayman it is reserved").
pub fn mem_semaphore(
    address: BusAddress,
    op: SemaphoreOp,
    wait_on_signal: bool,
) -> Result<[u32; 2], PacketError> {
    let body = p::mem_semaphore::Body::new()
        .with_address(address)?
        .with_sem_sel(op)
        .with_wait_on_signal(wait_on_signal);
    Ok(body.0)
}

/// §9.5.3 `SET_PREDICATION` operations (PRED_OP).
pub use p::set_predication::PredOp;

/// §9.5.3 `SET_PREDICATION` body: 16-byte aligned START_ADDR, PRED_OP, HINT 0,
/// PREDICATION_BOOLEAN (1 = draw if visible / no overflow).
pub fn set_predication(
    address: BusAddress,
    op: PredOp,
    draw_if_visible: bool,
) -> Result<[u32; 2], PacketError> {
    let body = p::set_predication::Body::new()
        .with_start_addr(address)?
        .with_pred_op(op)
        .with_predication_boolean(draw_if_visible);
    Ok(body.0)
}

/// §9.7.1 `MEM_WRITE` body: 64-bit `value` to the quadword at `address` (DATA32 0, no write
/// confirm, packet data).
pub fn mem_write(address: BusAddress, value: u64) -> Result<[u32; 4], PacketError> {
    let body = p::mem_write::Body::new()
        .with_address(address)?
        .with_data_lo(value as u32)?
        .with_data_hi((value >> 32) as u32)?;
    Ok(body.0)
}

/// §9.5.2 `COND_WRITE` body, memory to memory: if `(*poll & mask) <compare> reference`, write
/// `data` to the dword at `write`.
pub fn cond_write(
    poll: BusAddress,
    compare: Compare,
    reference: u32,
    mask: u32,
    write: BusAddress,
    data: u32,
) -> Result<[u32; 8], PacketError> {
    use p::cond_write::{Body, FUNCTION, Function, PollSpace, WriteSpace};
    // §9.5.2 and §9.6.8 list the same FUNCTION values.
    let function = Function::from_raw(compare as u32).ok_or(FieldOverflow::new(
        p::COND_WRITE.name,
        FUNCTION.name(),
        compare as u32,
        FUNCTION.spec.width,
    ))?;
    address40(poll, 4)?;
    address40(write, 4)?;
    let body = Body::new()
        .with_write_space(WriteSpace::Memory)
        .with_poll_space(PollSpace::Memory)
        .with_function(function)
        .with_poll_address(poll)?
        .with_reference(reference)?
        .with_mask(mask)?
        .with_write_address(write)?
        .with_write_data(data)?;
    Ok(body.0)
}

/// `EVENT_TYPE` `CS_DONE` (Mesa r600 evergreend.h `EVENT_TYPE_CS_DONE` 0x2F), EVENT_INDEX EOS
/// (§9.6.3).
pub const CS_DONE: u32 = 0x2F;

/// §9.6.3 `EVENT_WRITE_EOS` body: at the end of the compute shaders before it, store `data`
/// (CMD STORE_DATA) to the dword at `address`.
pub fn eos_write(address: BusAddress, data: u32) -> Result<[u32; 4], PacketError> {
    use p::event_write_eos::{Body, Cmd, EventIndex};
    let body = Body::new()
        .with_event_type(CS_DONE)?
        .with_event_index(EventIndex::Eos)
        .with_address(address)?
        .with_cmd(Cmd::StoreData)
        .with_data(data)?;
    Ok(body.0)
}

/// Largest CP_DMA transfer: BYTE_COUNT is 21 bits (Linux radeon evergreend.h COMMAND 20:0;
/// Linux splits at 0x1FFFFF bytes).
pub const CP_DMA_MAX_BYTES: usize = (1 << 21) - 1;

/// `CP_DMA` (Linux radeon evergreend.h): copy `bytes` from `src` to `dst` (SRC_SEL memory, both
/// in memory, incrementing), `sync` = CP_SYNC (the ME waits for the transfer).
pub fn cp_dma_copy(
    src: BusAddress,
    dst: BusAddress,
    bytes: usize,
    sync: bool,
) -> Result<[u32; 5], PacketError> {
    if bytes == 0 || bytes > CP_DMA_MAX_BYTES {
        return Err(PacketError::BadLength { dwords: bytes.div_ceil(4) });
    }
    let body = p::cp_dma::Body::new()
        .with_src_address(src)?
        .with_dst_address(dst)?
        .with_cp_sync(sync)
        .with_byte_count(bytes as u32)?;
    Ok(body.0)
}

/// `CP_DMA` fill: write the dword `value` over `bytes` at `dst` (SRC_SEL DATA: the data in the
/// source-address dword; Linux radeon evergreend.h). `bytes` a multiple of 4 (Linux
/// evergreen_cs.c: non memory-to-memory transfers need a dword count).
pub fn cp_dma_fill(
    value: u32,
    dst: BusAddress,
    bytes: usize,
    sync: bool,
) -> Result<[u32; 5], PacketError> {
    use p::cp_dma::{Body, SRC_ADDRESS_LO, SrcSel};
    address40(dst, 4)?;
    if bytes == 0 || bytes > CP_DMA_MAX_BYTES || !bytes.is_multiple_of(4) {
        return Err(PacketError::BadLength { dwords: bytes.div_ceil(4) });
    }
    let mut body = Body::new()
        .with_src_sel(SrcSel::Data)
        .with_dst_address(dst)?
        .with_cp_sync(sync)
        .with_byte_count(bytes as u32)?;
    // With SRC_SEL DATA the source-address dword holds the data.
    SRC_ADDRESS_LO.put(p::CP_DMA.name, &mut body.0, value)?;
    Ok(body.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_match_the_worked_examples() {
        // SET_CONTEXT_REG of 3 registers, compute: 0xC0036902; DISPATCH_DIRECT: 0xC0031502.
        let set_context = baregpu_ring::evergreen::set_range(0x28000).unwrap().packet;
        assert_eq!(header(set_context, 4, true, false), Ok(0xC003_6902));
        // A body the packet's layout does not take is refused (§9.3.12: four dwords).
        assert!(matches!(
            header(opcode::DISPATCH_DIRECT, 3, true, false),
            Err(PacketError::Body(BodyError { dwords: 3, min: 4, max: 4, .. }))
        ));
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
        assert_eq!(me_initialize().unwrap(), [1, 0, 7, 1 << 16, 0, 0]);
    }

    #[test]
    fn addresses_are_checked() {
        assert!(address40(BusAddress(1 << 40), 4).is_err());
        assert!(address40(BusAddress(0x1004), 8).is_err());
        assert_eq!(address40(BusAddress(0x12_3456_7808), 8), Ok((0x3456_7808, 0x12)));
    }
}
