//! The Radeon Evergreen/Cayman Command Processor (amd-evergreen-cayman-acceleration §9): its
//! ring registers, its register writes (type-3 `SET_*` packets by register range, type 0 for
//! the system registers) and its `INDIRECT_BUFFER` packet. Facts the document omits are cited
//! from Linux radeon (evergreend.h, evergreen.c), as the register database does.
//!
//! ```
//! # fn f(ring: &mut baregpu_ring::evergreen::EvergreenRing, io: &impl baregpu_hal::RegisterIo)
//! #     -> Result<(), baregpu_ring::pm4::Pm4Error> {
//! use baregpu_regs::evergreen::cp::SCRATCH_REG0;
//! let mut w = ring.writer();
//! w.write_reg_at(1, SCRATCH_REG0::from_raw(42))?; // SET_CONFIG_REG, 3 dwords (§9.4.14)
//! ring.pad_to(baregpu_ring::evergreen::SUBMIT_ALIGN).ok(); // type-2 fillers (§9.1.3)
//! ring.kick(io); // dma_wmb + CP_RB_WPTR
//! # Ok(()) }
//! ```
//!
//! The writer takes only Evergreen registers, and an R5xx writer only R5xx registers:
//!
//! ```compile_fail,E0271
//! use baregpu_ring::evergreen;
//! use baregpu_ring::pm4::{Pm4Writer, SliceSink};
//! let mut buf = [0u32; 4];
//! let mut w = Pm4Writer::<_, evergreen::Family>::with_family(SliceSink::new(&mut buf));
//! // An R5xx register in an Evergreen command stream:
//! let _ = w.write_reg(baregpu_regs::r5xx::cp::CP_RB_CNTL::from_raw(0));
//! ```
//!
//! ```compile_fail,E0271
//! use baregpu_ring::pm4::{Pm4Writer, SliceSink};
//! let mut buf = [0u32; 4];
//! let mut w = Pm4Writer::<_, baregpu_ring::r5xx::Family>::with_family(SliceSink::new(&mut buf));
//! // An Evergreen register in an R5xx command stream:
//! let _ = w.write_reg(baregpu_regs::evergreen::cp::CP_RB_CNTL::from_raw(0));
//! ```

use core::borrow::Borrow;

use baregpu_hal::dma::{BusAddress, DmaRegion};
use baregpu_regs::evergreen;
use baregpu_regs::evergreen::cp::{
    CP_RB_BASE, CP_RB_RPTR, CP_RB_RPTR_ADDR, CP_RB_RPTR_ADDR_HI, CP_RB_WPTR,
};
use baregpu_regs::evergreen::packets;
use baregpu_regs::packet::Packet;

use crate::ib::{IbError, IndirectBuffer, IndirectBuffers};
use crate::pm4::{
    CommandSink, MAX_BODY_DWORDS, Opcode, Pm4Error, Pm4Family, Pm4Writer, RegisterWrite, TYPE2,
    check_count, type3_header,
};
use crate::ring::{
    CommandProcessorRing, CommandRing, RegisterRptrFamily, WritebackFamily, WritebackRptr,
};

/// The Evergreen/Cayman family (Cypress … Cayman): the register database's marker
/// (`baregpu_regs::evergreen::Family`, the `Register::Family` of every Evergreen register),
/// which is also the family parameter of [`CommandRing`], [`Pm4Writer`] and [`IndirectBuffer`]
/// for Evergreen streams: one type names the family everywhere.
pub use baregpu_regs::evergreen::Family;

/// An Evergreen/Cayman command ring over DMA memory whose read pointer the CP writes back.
pub type EvergreenRing<B = DmaRegion, W = DmaRegion> =
    CommandRing<B, WritebackRptr<W, Family>, Family>;

/// An Evergreen/Cayman indirect buffer in DMA memory.
pub type EvergreenIb<B = DmaRegion> = IndirectBuffer<B, Family>;

/// Smallest ring: one 4 KiB GPU page, the read-pointer write-back block Linux programs
/// (evergreen.c cp_resume: `RB_BLKSZ = order_base_2(RADEON_GPU_PAGE_SIZE / 8)`); the document
/// gives no bound.
pub const MIN_RING_DWORDS: usize = 1024;
/// Largest ring: 1 MiB, the ring Linux radeon allocates for the GFX ring (evergreen.c
/// `r600_ring_init(.., 1024 * 1024)`); the document gives no bound.
pub const MAX_RING_DWORDS: usize = (1 << 20) / 4;
/// Submission alignment: Linux pads every commit with the ring's nop, `RADEON_CP_PACKET2`
/// for the Evergreen GFX ring (evergreen.c evergreen_startup), to 16 dwords
/// (radeon_ring.c radeon_ring_commit, `align_mask` 15).
pub const SUBMIT_ALIGN: usize = 16;

/// Bus addresses the CP reaches: 40 bits (CP_RB_BASE bits 39:8, CP_RB_RPTR_ADDR_HI bits 39:32,
/// `INDIRECT_BUFFER` IB_BASE_HI \[7:0\] = address 39:32, §9.3.1).
const BUS_LIMIT: u64 = 1 << 40;

/// The ring's write-back address as CP_RB_RPTR_ADDR (bits 31:2) and CP_RB_RPTR_ADDR_HI (bits
/// 39:32) hold it (Linux radeon evergreen.c cp_resume).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct RptrWriteback {
    /// Address bits 31:2 (no swap).
    pub low: CP_RB_RPTR_ADDR,
    /// Address bits 39:32.
    pub high: CP_RB_RPTR_ADDR_HI,
}

impl CommandProcessorRing for Family {
    type Unit = u32;
    type Base = CP_RB_BASE;
    type Doorbell = CP_RB_WPTR;

    const MIN_UNITS: usize = MIN_RING_DWORDS;
    const MAX_UNITS: usize = MAX_RING_DWORDS;
    /// Type-2 filler (§9.1.3: "used to fill up the trailing space").
    const FILLER: u32 = TYPE2;
    const SUBMIT_ALIGN: usize = SUBMIT_ALIGN;

    /// CP_RB_BASE holds address bits 39:8 (Linux evergreen.c: `gpu_addr >> 8`): 256-byte
    /// aligned, the whole ring below 1 TiB.
    fn base(address: BusAddress, bytes: usize) -> Option<CP_RB_BASE> {
        CP_RB_BASE::RESET
            .try_with_rb_base(address)
            .ok()
            .filter(|_| address.fits_below(bytes as u64, BUS_LIMIT))
    }

    /// CP_RB_CNTL.RB_BUFSZ: log2 of the size in quadwords (Linux evergreen.c cp_resume:
    /// `order_base_2(ring_size / 8)`).
    fn size_field(units: usize) -> u8 {
        (units.trailing_zeros() - 1) as u8
    }

    fn doorbell(wptr: u32) -> CP_RB_WPTR {
        CP_RB_WPTR::RESET.with_cp_rb_wptr(wptr)
    }
}

impl WritebackFamily for Family {
    type Writeback = RptrWriteback;

    /// Dword-aligned, below 1 TiB: bits 31:2 in CP_RB_RPTR_ADDR, 39:32 in CP_RB_RPTR_ADDR_HI.
    fn writeback(address: BusAddress) -> Option<RptrWriteback> {
        if !address.fits_below(4, BUS_LIMIT) {
            return None;
        }
        let low = CP_RB_RPTR_ADDR::RESET
            .try_with_rb_rptr_addr(BusAddress(u64::from(address.low())))
            .ok()?;
        let high = CP_RB_RPTR_ADDR_HI::RESET
            .try_with_rb_rptr_addr_hi(BusAddress(u64::from(address.high()) << 32))
            .ok()?;
        Some(RptrWriteback { low, high })
    }
}

/// A ring may also poll CP_RB_RPTR (Linux radeon evergreend.h), an MMIO read per refresh.
impl RegisterRptrFamily for Family {
    type Rptr = CP_RB_RPTR;

    fn rptr_index(value: CP_RB_RPTR) -> u32 {
        value.cp_rb_rptr()
    }
}

impl<B: Borrow<DmaRegion>, W: Borrow<DmaRegion>> EvergreenRing<B, W> {
    /// CP_RB_BASE for this ring (address bits 39:8).
    pub fn cp_rb_base(&self) -> CP_RB_BASE {
        self.base_registers()
    }

    /// CP_RB_RPTR_ADDR and CP_RB_RPTR_ADDR_HI for the write-back dword.
    pub fn cp_rb_rptr_addr(&self) -> RptrWriteback {
        self.writeback_registers()
    }

    /// An Evergreen PM4 writer appending to this ring.
    pub fn writer(&mut self) -> Pm4Writer<&mut Self, Family> {
        Pm4Writer::with_family(self)
    }

    /// An Evergreen writer for compute state and dispatches (`SHADER_TYPE` = compute).
    pub fn compute_writer(&mut self) -> Pm4Writer<&mut Self, EvergreenCompute> {
        Pm4Writer::with_family(self)
    }
}

impl<B: Borrow<DmaRegion>> IndirectBuffer<B, Family> {
    /// An Evergreen PM4 writer appending to this buffer.
    pub fn writer(&mut self) -> Pm4Writer<&mut Self, Family> {
        Pm4Writer::with_family(self)
    }

    /// An Evergreen writer for compute state and dispatches (`SHADER_TYPE` = compute).
    pub fn compute_writer(&mut self) -> Pm4Writer<&mut Self, EvergreenCompute> {
        Pm4Writer::with_family(self)
    }
}

/// A register range a `SET_*` packet writes: `REG_OFFSET` counts dwords from `start`
/// (§9.4.13-19). The ranges are the packet table's (`Packet::register_range`, from the
/// reviewed corrections: the config and context starts are the document's, §9.4.14 byte offset
/// 0x8000 and §9.4.15 0x28000; the others start at the register the document names, and every
/// end is Linux radeon evergreend.h's `PACKET3_SET_*_END`, which its command checker enforces).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SetRange {
    /// The packet (name, opcode, section: the generated table).
    pub packet: Packet<evergreen::Family>,
    /// First byte offset it writes.
    pub start: usize,
    /// First byte offset past its range.
    pub end: usize,
}

impl SetRange {
    /// The range of a `SET_*` packet of the table (a packet without one does not build).
    pub const fn of(packet: Packet<evergreen::Family>) -> SetRange {
        match packet.register_range {
            Some(r) => SetRange { packet, start: r.start, end: r.end },
            None => panic!("not a SET_* packet"),
        }
    }
}

/// The `SET_*` ranges, by start.
pub const SET_RANGES: [SetRange; 7] = [
    SetRange::of(packets::SET_CONFIG_REG),
    SetRange::of(packets::SET_CONTEXT_REG),
    SetRange::of(packets::SET_RESOURCE),
    SetRange::of(packets::SET_LOOP_CONST),
    SetRange::of(packets::SET_BOOL_CONST),
    SetRange::of(packets::SET_SAMPLER),
    SetRange::of(packets::SET_CTL_CONST),
];

/// Registers below this byte offset are system registers, written by type-0 packets: "For the
/// first 32KB of register space (system registers) there is no `SET_*` type packet and
/// `TYPE-0` packets should be used" (§9.1.1).
pub const SYSTEM_REGISTERS_END: usize = 0x8000;

/// The `SET_*` range holding byte `offset`, if any (inlined: for a constant offset the search
/// folds away).
#[inline]
pub fn set_range(offset: usize) -> Option<&'static SetRange> {
    SET_RANGES.iter().find(|r| (r.start..r.end).contains(&offset))
}

/// Type-0 header for Evergreen (§9.1.1): `BASE_INDEX` is the register's dword index, reaching
/// "a register memory map up to 64K DWords" (bits 15:0, Linux radeon evergreend.h `PACKET0`),
/// `COUNT` 29:16 = N - 1. Used for the system registers only.
#[inline]
pub const fn type0_header(offset: usize, count: usize) -> Result<u32, Pm4Error> {
    let count_bits = match check_count(count) {
        Ok(c) => c,
        Err(e) => return Err(e),
    };
    if !offset.is_multiple_of(4) {
        return Err(Pm4Error::UnalignedRegister { offset });
    }
    let last = offset + (count - 1) * 4;
    if last >= SYSTEM_REGISTERS_END {
        return Err(Pm4Error::RegisterOutOfRange { offset: last, max: SYSTEM_REGISTERS_END - 4 });
    }
    Ok(count_bits | (offset >> 2) as u32)
}

impl Pm4Family for Family {
    type Registers = evergreen::Family;
    const NOP: Opcode = Opcode::of(packets::NOP);

    /// Type 0 for the system registers (below 0x8000, §9.1.1), else the `SET_*` packet whose
    /// range holds the whole run: header, then `REG_OFFSET` (dwords from the range's start),
    /// then the values (§9.4.14-19). A register in no range is
    /// [`Pm4Error::NoRegisterPacket`]; a run leaving its range is
    /// [`Pm4Error::RegisterOutOfRange`].
    #[inline]
    fn register_write(offset: usize, count: usize) -> Result<RegisterWrite, Pm4Error> {
        register_write(offset, count, Self::TYPE3_FLAGS)
    }
}

/// The Evergreen/Cayman dialect for compute state and dispatches: the same packets with the
/// type-3 header's `SHADER_TYPE` bit (bit 1) set, "1: Compute Shader" (§9.1.4; the `SET_*`
/// packets' shader type "will correspond to the shader type of the Load", §9.4.13-19).
/// [`EvergreenRing::compute_writer`] makes one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvergreenCompute {}

impl Pm4Family for EvergreenCompute {
    type Registers = evergreen::Family;
    const NOP: Opcode = Opcode::of(packets::NOP);
    const TYPE3_FLAGS: u32 = 1 << 1;

    /// As [`Family`]'s, with `SHADER_TYPE` set in the `SET_*` header.
    #[inline]
    fn register_write(offset: usize, count: usize) -> Result<RegisterWrite, Pm4Error> {
        register_write(offset, count, Self::TYPE3_FLAGS)
    }
}

/// The register-write packet of both Evergreen dialects; `flags` go into a type-3 header.
#[inline]
fn register_write(offset: usize, count: usize, flags: u32) -> Result<RegisterWrite, Pm4Error> {
    if !offset.is_multiple_of(4) {
        return Err(Pm4Error::UnalignedRegister { offset });
    }
    if offset < SYSTEM_REGISTERS_END {
        return Ok(RegisterWrite { header: type0_header(offset, count)?, index: None });
    }
    let range = set_range(offset).ok_or(Pm4Error::NoRegisterPacket { offset })?;
    // The body is REG_OFFSET and the values: at most MAX_BODY_DWORDS - 1 registers.
    if count == 0 || count > MAX_BODY_DWORDS - 1 {
        return Err(Pm4Error::BadCount { count });
    }
    let last = offset + (count - 1) * 4;
    if last >= range.end {
        return Err(Pm4Error::RegisterOutOfRange { offset: last, max: range.end - 4 });
    }
    let header = type3_header(Opcode::of(range.packet), 1 + count)? | flags;
    Ok(RegisterWrite { header, index: Some(((offset - range.start) >> 2) as u32) })
}

/// Largest indirect buffer: IB_SIZE is bits 19:0 of the last dword (§9.3.1).
pub const MAX_IB_DWORDS: usize = (1 << 20) - 1;

/// Dwords one `INDIRECT_BUFFER` packet takes: header, IB_BASE_LO, IB_BASE_HI, IB_SIZE (§9.3.1).
pub const IB_PACKET_DWORDS: usize = 4;

/// A finished Evergreen indirect buffer: dword-aligned, below 1 TiB, 1..=[`MAX_IB_DWORDS`]
/// dwords (§9.3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct IbDescriptor {
    base: BusAddress,
    dwords: u32,
}

impl IbDescriptor {
    /// `dwords` (1..=[`MAX_IB_DWORDS`]) at dword-aligned `base`, ending below 1 TiB.
    pub const fn new(base: BusAddress, dwords: usize) -> Result<Self, IbError> {
        if !base.0.is_multiple_of(4) {
            return Err(IbError::Unaligned { address: base });
        }
        if dwords == 0 || dwords > MAX_IB_DWORDS {
            return Err(IbError::BadSize { dwords });
        }
        if !base.fits_below(dwords as u64 * 4, BUS_LIMIT) {
            return Err(IbError::AddressOutOfRange { address: base, dwords });
        }
        Ok(IbDescriptor { base, dwords: dwords as u32 })
    }

    /// Bus address of the first dword.
    pub const fn base(&self) -> BusAddress {
        self.base
    }

    /// Length in dwords.
    pub const fn dwords(&self) -> usize {
        self.dwords as usize
    }

    /// The `INDIRECT_BUFFER` body: IB_BASE_LO (address 31:2, swap 0), IB_BASE_HI (address
    /// 39:32), IB_SIZE (19:0, VMID 0) (§9.3.1).
    pub const fn body(&self) -> [u32; 3] {
        [self.base.low(), self.base.high(), self.dwords]
    }
}

impl IndirectBuffers for Family {
    type Descriptor = IbDescriptor;
    const MAX_IB_DWORDS: usize = MAX_IB_DWORDS;

    fn describe(base: BusAddress, dwords: usize) -> Result<IbDescriptor, IbError> {
        IbDescriptor::new(base, dwords)
    }
}

impl<S: CommandSink> Pm4Writer<S, Family> {
    /// Start `ib`: one `INDIRECT_BUFFER` packet, 4 dwords (§9.3.1).
    pub fn indirect_buffer(&mut self, ib: IbDescriptor) -> Result<(), Pm4Error> {
        self.packet(packets::INDIRECT_BUFFER, &ib.body())
    }
}
