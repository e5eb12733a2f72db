//! The Radeon R5xx Command Processor (amd-r5xx-acceleration §5, §6): its ring registers, its
//! register writes (type-0 and type-1 packets), its indirect buffers. Every R5xx register the
//! ring, the PM4 writer and the IB code use is named here and nowhere else.

use core::borrow::Borrow;

use baregpu_hal::dma::{BusAddress, DmaRegion};
use baregpu_hal::register::{AddressFieldError, AddressProblem};
use baregpu_hal::{Absolute, Array, Register, Scalar, Writable};
use baregpu_regs::r5xx;
use baregpu_regs::r5xx::cp::{
    CP_IB_BASE, CP_IB_BUFSZ, CP_IB2_BASE, CP_IB2_BUFSZ, CP_RB_BASE, CP_RB_RPTR, CP_RB_RPTR_ADDR,
    CP_RB_WPTR,
};

use crate::ib::{IbError, IndirectBuffer, IndirectBuffers};
use crate::pm4::{
    CommandSink, Opcode, Pm4Error, Pm4Family, Pm4Writer, RegisterWrite, TYPE2, type0_header,
    type1_header,
};
use crate::ring::{
    CommandProcessorRing, CommandRing, RegisterRptrFamily, RingConfigError, WritebackFamily,
    WritebackRptr, ring_units,
};

/// The R5xx family (R520 … R580): the register database's marker
/// (`baregpu_regs::r5xx::Family`, the `Register::Family` of every R5xx register), which is
/// also the family parameter of [`CommandRing`], [`Pm4Writer`] and [`IndirectBuffer`] for R5xx
/// streams: one type names the family everywhere. [`R5xxRing`], [`R5xxIb`] and the
/// constructors `CommandRing::new`, `Pm4Writer::new` and `IndirectBuffer::new` name it.
pub use baregpu_regs::r5xx::Family;

/// An R5xx command ring over DMA memory whose read pointer the CP writes back (§5.4).
pub type R5xxRing<B = DmaRegion, W = DmaRegion> = CommandRing<B, WritebackRptr<W, Family>, Family>;

/// An R5xx indirect buffer in DMA memory.
pub type R5xxIb<B = DmaRegion> = IndirectBuffer<B, Family>;

/// A register an R5xx PM4 stream can write: one of the R5xx family's registers at a fixed
/// offset of the register window (implemented for every such generated register).
pub trait R5xxRegister: Register<Family = r5xx::Family, Base = Absolute> {}

impl<R: Register<Family = r5xx::Family, Base = Absolute>> R5xxRegister for R {}

/// Smallest ring: RB_BUFSZ values 0 and 1 "are clamped to an 8 DWORD ring buffer" (§11.1).
pub const MIN_RING_DWORDS: usize = 8;
/// Largest ring: RB_BUFSZ 22 gives 2^23 dwords; larger values clamp to 22 (§11.1), and the
/// pointers are 23 bits (CP_RB_RPTR/CP_RB_WPTR 22:0).
pub const MAX_RING_DWORDS: usize = 1 << CP_RB_WPTR::RB_WPTR.width;
/// The submission alignment Linux uses (radeon_ring_commit pads to `align_mask` 15 with
/// type-2 packets: 16 dwords).
pub const SUBMIT_ALIGN: usize = 16;

/// The size in dwords of an R5xx ring over `bytes` of memory: a power of two of
/// [`MIN_RING_DWORDS`]..=[`MAX_RING_DWORDS`] dwords (§11.1 `CP_RB_CNTL.RB_BUFSZ`), else
/// [`RingConfigError::BadSize`]. [`CommandRing::new`] applies it; drivers check a configured
/// size with it before allocating.
pub const fn ring_dwords(bytes: usize) -> Result<usize, RingConfigError> {
    ring_units::<Family>(bytes)
}

impl CommandProcessorRing for Family {
    type Unit = u32;
    type Base = CP_RB_BASE;
    type Doorbell = CP_RB_WPTR;

    const MIN_UNITS: usize = MIN_RING_DWORDS;
    const MAX_UNITS: usize = MAX_RING_DWORDS;
    /// Type-2 filler (§6.1.3).
    const FILLER: u32 = TYPE2;
    const SUBMIT_ALIGN: usize = SUBMIT_ALIGN;

    /// CP_RB_BASE holds address bits 31:2: dword-aligned, and the whole ring below 4 GiB.
    fn base(address: BusAddress, bytes: usize) -> Option<CP_RB_BASE> {
        CP_RB_BASE::RESET
            .try_with_rb_base(address)
            .ok()
            .filter(|_| address.fits_below(bytes as u64, 1 << 32))
    }

    /// CP_RB_CNTL.RB_BUFSZ: log2 of the size in quadwords ("a value of 2 to 22 will give a ring
    /// buffer 2^(RB_BUFSZ+1)" dwords, §11.1).
    fn size_field(units: usize) -> u8 {
        (units.trailing_zeros() - 1) as u8
    }

    fn doorbell(wptr: u32) -> CP_RB_WPTR {
        CP_RB_WPTR::RESET.with_rb_wptr(wptr)
    }
}

impl WritebackFamily for Family {
    type Writeback = CP_RB_RPTR_ADDR;

    /// CP_RB_RPTR_ADDR holds address bits 31:2 (no swap).
    fn writeback(address: BusAddress) -> Option<CP_RB_RPTR_ADDR> {
        CP_RB_RPTR_ADDR::RESET.try_with_rb_rptr_addr(address).ok()
    }
}

/// A ring may also poll CP_RB_RPTR (§11.1), at the cost of an MMIO read per refresh instead
/// of a cached write-back dword (§5.4 recommends the write-back).
impl RegisterRptrFamily for Family {
    type Rptr = CP_RB_RPTR;

    fn rptr_index(value: CP_RB_RPTR) -> u32 {
        value.rb_rptr()
    }
}

impl<B: Borrow<DmaRegion>, W: Borrow<DmaRegion>> R5xxRing<B, W> {
    /// An R5xx ring over all of `buffer` (a power of two of 8..=2^23 dwords, dword-aligned below
    /// 4 GiB), whose read pointer the CP writes back to byte `writeback_offset` of `writeback`
    /// (§5.4, §11.1).
    ///
    /// Both pointers start at 0, matching a CP whose CP_RB_WPTR (and RPTR) were just set to 0
    /// (§5.8); the write-back dword is zeroed.
    ///
    /// The ring owns `buffer` and `writeback`: pass [`DmaBuffer`](baregpu_hal::dma::DmaBuffer)s
    /// and both are given back to their allocator when construction fails or the ring is
    /// dropped.
    pub fn new(buffer: B, writeback: W, writeback_offset: usize) -> Result<Self, RingConfigError> {
        Self::with_family(buffer, writeback, writeback_offset)
    }

    /// CP_RB_BASE for this ring (address bits 31:2).
    pub fn cp_rb_base(&self) -> CP_RB_BASE {
        self.base_registers()
    }

    /// CP_RB_RPTR_ADDR for the write-back dword (address bits 31:2, no swap).
    pub fn cp_rb_rptr_addr(&self) -> CP_RB_RPTR_ADDR {
        self.writeback_registers()
    }

    /// A PM4 writer appending to this ring.
    pub fn writer(&mut self) -> Pm4Writer<&mut Self, Family> {
        Pm4Writer::new(self)
    }
}

impl<S: CommandSink> Pm4Writer<S, Family> {
    /// An R5xx writer over `sink` (usually `&mut ring` or `&mut ib`):
    /// [`with_family`](Pm4Writer::with_family) for [`Family`].
    pub const fn new(sink: S) -> Self {
        Pm4Writer::with_family(sink)
    }
}

impl Pm4Family for Family {
    type Registers = r5xx::Family;
    const NOP: Opcode = Opcode::of(r5xx::packets::NOP);

    /// Type 0 (§6.1.1): consecutive registers from `offset`, each within
    /// [`TYPE0_MAX_OFFSET`](crate::pm4::TYPE0_MAX_OFFSET).
    #[inline]
    fn register_write(offset: usize, count: usize) -> Result<RegisterWrite, Pm4Error> {
        Ok(RegisterWrite { header: type0_header(offset, count, false)?, index: None })
    }
}

impl<S: CommandSink> Pm4Writer<S, Family> {
    /// Every value to the same register (a data port), one type-0 packet with `ONE_REG_WR`
    /// (§6.1.1 bit 15).
    pub fn write_reg_repeated<R: R5xxRegister + Writable + Scalar>(
        &mut self,
        values: &[R],
    ) -> Result<(), Pm4Error> {
        let header = type0_header(R::OFFSET, values.len(), true)?;
        self.sink_mut().reserve(1 + values.len())?;
        self.sink_mut().push(header)?;
        self.push_values(values)
    }

    /// Every value to instance `index` of a register array (a data port that is one of an
    /// array's registers), one type-0 packet with `ONE_REG_WR` (§6.1.1 bit 15); an index past
    /// the array is [`Pm4Error::Index`].
    pub fn write_reg_at_repeated<R: R5xxRegister + Writable + Array>(
        &mut self,
        index: usize,
        values: &[R],
    ) -> Result<(), Pm4Error> {
        let header = type0_header(R::offset_of(index)?, values.len(), true)?;
        self.sink_mut().reserve(1 + values.len())?;
        self.sink_mut().push(header)?;
        self.push_values(values)
    }

    /// Two arbitrary registers (each at most [`TYPE1_MAX_OFFSET`](crate::pm4::TYPE1_MAX_OFFSET))
    /// by one type-1 packet (3 dwords, §6.1.2); `second` is written last.
    pub fn write_reg_pair<
        A: R5xxRegister + Writable + Scalar,
        B: R5xxRegister + Writable + Scalar,
    >(
        &mut self,
        first: A,
        second: B,
    ) -> Result<(), Pm4Error> {
        let header = type1_header(A::OFFSET, B::OFFSET)?;
        self.emit(header, &[first.to_raw(), second.to_raw()])
    }

    /// Start `ib` as indirect buffer 1 (from the ring): type-0 writing CP_IB_BASE then
    /// CP_IB_BUFSZ, 3 dwords (§5.10).
    pub fn indirect_buffer(&mut self, ib: IbDescriptor) -> Result<(), Pm4Error> {
        self.write_regs(ib.ib1_registers())
    }

    /// Start `ib` as indirect buffer 2 (from inside an IB1): type-0 writing CP_IB2_BASE then
    /// CP_IB2_BUFSZ, 3 dwords (§5.10).
    pub fn indirect_buffer2(&mut self, ib: IbDescriptor) -> Result<(), Pm4Error> {
        self.write_regs(ib.ib2_registers())
    }
}

/// Largest indirect buffer: CP_IB_BUFSZ / CP_IB2_BUFSZ hold a dword count in bits 22:0
/// (§11.1; §6.2.3.11 "8,192K DWORDs").
pub const MAX_IB_DWORDS: usize = CP_IB_BUFSZ::IB_BUFSZ.mask() as usize;
const _: () = assert!(CP_IB2_BUFSZ::IB2_BUFSZ.mask() as usize == MAX_IB_DWORDS);

/// Dwords one IB emission takes: a type-0 header and the two registers.
pub const IB_PACKET_DWORDS: usize = 3;

/// A finished R5xx indirect buffer as the CP sees it: bus address and length in dwords,
/// validated.
///
/// - [`Pm4Writer::indirect_buffer`] emits IB1 from the ring: one type-0 packet writing
///   CP_IB_BASE then CP_IB_BUFSZ (3 dwords). §5.10: "the write to the CP_IB_BUFSZ or
///   CP_IB2_BUFSZ register must be the **last** register-write of a Type 0 or Type 1 packet" and
///   "the respective CP_IB_BASE or CP_IB2_BASE register must have been setup with the proper
///   value before" — both hold because CP_IB_BASE (0x738) and CP_IB_BUFSZ (0x73C) are
///   consecutive and a type-0 packet writes in register order.
/// - [`Pm4Writer::indirect_buffer2`] emits IB2 (CP_IB2_BASE 0x730, CP_IB2_BUFSZ 0x734) and
///   belongs inside an IB1: §5.10 "A write to the CP_IB2_BUFSZ register triggers the Command
///   Processor to start fetching the command stream from the Indirect2 buffer, instead of from
///   the Indirect1 buffer". There is no third level. (COND_EXEC and WAIT_MEM use IB2 themselves
///   and so cannot run from an IB2, §6.2.5.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct IbDescriptor {
    base: BusAddress,
    dwords: u32,
    /// The base as CP_IB_BASE and CP_IB2_BASE hold it, checked by their bus-address setters.
    ib_base: CP_IB_BASE,
    ib2_base: CP_IB2_BASE,
}

/// The [`IbError`] for a base CP_IB_BASE / CP_IB2_BASE cannot hold.
const fn base_error(e: AddressFieldError, dwords: usize) -> IbError {
    match e.problem {
        AddressProblem::Misaligned { .. } => IbError::Unaligned { address: e.address },
        AddressProblem::OutOfReach { .. } => {
            IbError::AddressOutOfRange { address: e.address, dwords }
        }
    }
}

impl IbDescriptor {
    /// `dwords` (1..=[`MAX_IB_DWORDS`]) at dword-aligned `base`, ending below 4 GiB.
    pub const fn new(base: BusAddress, dwords: usize) -> Result<Self, IbError> {
        let ib_base = match CP_IB_BASE::RESET.try_with_ib_base(base) {
            Ok(r) => r,
            Err(e) => return Err(base_error(e, dwords)),
        };
        let ib2_base = match CP_IB2_BASE::RESET.try_with_ib2_base(base) {
            Ok(r) => r,
            Err(e) => return Err(base_error(e, dwords)),
        };
        if dwords == 0 || dwords > MAX_IB_DWORDS {
            return Err(IbError::BadSize { dwords });
        }
        if !base.fits_below(dwords as u64 * 4, 1 << 32) {
            return Err(IbError::AddressOutOfRange { address: base, dwords });
        }
        Ok(IbDescriptor { base, dwords: dwords as u32, ib_base, ib2_base })
    }

    /// Bus address of the first dword.
    pub const fn base(&self) -> BusAddress {
        self.base
    }

    /// Length in dwords.
    pub const fn dwords(&self) -> usize {
        self.dwords as usize
    }

    /// CP_IB_BASE and CP_IB_BUFSZ values starting this buffer as IB1.
    pub const fn ib1_registers(&self) -> (CP_IB_BASE, CP_IB_BUFSZ) {
        (self.ib_base, CP_IB_BUFSZ::RESET.with_ib_bufsz(self.dwords))
    }

    /// CP_IB2_BASE and CP_IB2_BUFSZ values starting this buffer as IB2.
    pub const fn ib2_registers(&self) -> (CP_IB2_BASE, CP_IB2_BUFSZ) {
        (self.ib2_base, CP_IB2_BUFSZ::RESET.with_ib2_bufsz(self.dwords))
    }
}

impl IndirectBuffers for Family {
    type Descriptor = IbDescriptor;
    const MAX_IB_DWORDS: usize = MAX_IB_DWORDS;

    fn describe(base: BusAddress, dwords: usize) -> Result<IbDescriptor, IbError> {
        IbDescriptor::new(base, dwords)
    }
}

impl<B: Borrow<DmaRegion>> IndirectBuffer<B, Family> {
    /// An empty R5xx indirect buffer over `region`, which must start dword-aligned and end
    /// below 4 GiB; its capacity is the region's dwords, at most [`MAX_IB_DWORDS`].
    pub fn new(region: B) -> Result<Self, IbError> {
        Self::with_family(region)
    }

    /// A PM4 writer appending to this buffer.
    pub fn writer(&mut self) -> Pm4Writer<&mut Self, Family> {
        Pm4Writer::new(self)
    }
}
