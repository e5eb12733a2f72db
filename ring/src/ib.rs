//! Indirect buffers (amd-r5xx-acceleration §5.6, §5.10): command streams outside the ring that
//! the CP fetches when a packet writes the buffer's size register.
//!
//! - [`IndirectBuffer`] builds a stream in a [`DmaRegion`] with the same [`Pm4Writer`] as the
//!   ring; [`IndirectBuffer::descriptor`] describes the finished buffer.
//! - [`Pm4Writer::indirect_buffer`] emits IB1 from the ring: one type-0 packet writing
//!   CP_IB_BASE then CP_IB_BUFSZ (3 dwords, hardware-facts.md). §5.10: "the write to the
//!   CP_IB_BUFSZ or CP_IB2_BUFSZ register must be the **last** register-write of a Type 0 or
//!   Type 1 packet" and "the respective CP_IB_BASE or CP_IB2_BASE register must have been setup
//!   with the proper value before" — both hold because CP_IB_BASE (0x738) and CP_IB_BUFSZ
//!   (0x73C) are consecutive and a type-0 packet writes in register order.
//! - [`Pm4Writer::indirect_buffer2`] emits IB2 (CP_IB2_BASE 0x730, CP_IB2_BUFSZ 0x734) and
//!   belongs inside an IB1: §5.10 "A write to the CP_IB2_BUFSZ register triggers the Command
//!   Processor to start fetching the command stream from the Indirect2 buffer, instead of from
//!   the Indirect1 buffer". There is no third level. (COND_EXEC and WAIT_MEM use IB2 themselves
//!   and so cannot run from an IB2, §6.2.5.)
//!
//! The CP reads an indirect buffer when it gets to it, not when it is emitted: keep the buffer
//! unchanged until a later fence (a scratch register write, §5.9) has passed.

use core::borrow::Borrow;
use core::fmt;

use baregpu_hal::dma::{BusAddress, DmaRegion};
use baregpu_hal::register::{AddressFieldError, AddressProblem};
use baregpu_regs::r5xx::cp::{CP_IB_BASE, CP_IB_BUFSZ, CP_IB2_BASE, CP_IB2_BUFSZ};

use crate::pm4::{CommandSink, NoSpace, PadError, Pm4Error, Pm4Writer, TYPE2, pad_count};

/// Largest indirect buffer: CP_IB_BUFSZ / CP_IB2_BUFSZ hold a dword count in bits 22:0
/// (§11.1; §6.2.3.11 "8,192K DWORDs").
pub const MAX_IB_DWORDS: usize = CP_IB_BUFSZ::IB_BUFSZ.mask() as usize;
const _: () = assert!(CP_IB2_BUFSZ::IB2_BUFSZ.mask() as usize == MAX_IB_DWORDS);

/// An indirect buffer the CP cannot fetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum IbError {
    /// The buffer does not start on a dword (CP_IB_BASE holds address bits 31:2).
    Unaligned {
        /// Its bus address.
        address: BusAddress,
    },
    /// The buffer does not end below 4 GiB (CP_IB_BASE is a 32-bit address).
    AddressOutOfRange {
        /// Its bus address.
        address: BusAddress,
        /// Its length in dwords.
        dwords: usize,
    },
    /// An empty buffer, or one longer than [`MAX_IB_DWORDS`]. (A size write starts a fetch,
    /// §5.10, so an empty buffer is not emitted.)
    BadSize {
        /// Its length in dwords.
        dwords: usize,
    },
}

impl fmt::Display for IbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IbError::Unaligned { address } => write!(f, "indirect buffer at {address} unaligned"),
            IbError::AddressOutOfRange { address, dwords } => {
                write!(f, "indirect buffer of {dwords} dwords at {address} crosses 4 GiB")
            }
            IbError::BadSize { dwords } => {
                write!(f, "indirect buffer of {dwords} dwords (must be 1..={MAX_IB_DWORDS})")
            }
        }
    }
}

impl core::error::Error for IbError {}

/// A finished indirect buffer as the CP sees it: bus address and length in dwords, validated.
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

/// Dwords one IB emission takes: a type-0 header and the two registers.
pub const IB_PACKET_DWORDS: usize = 3;

impl<S: CommandSink> Pm4Writer<S> {
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

/// An indirect buffer being built in DMA memory (owned, or borrowed as `&DmaRegion`).
#[derive(Debug)]
pub struct IndirectBuffer<B = DmaRegion> {
    region: B,
    capacity: usize,
    len: usize,
    granted: usize,
}

impl<B: Borrow<DmaRegion>> IndirectBuffer<B> {
    /// An empty buffer over `region`, which must start dword-aligned and end below 4 GiB; its
    /// capacity is the region's dwords, at most [`MAX_IB_DWORDS`].
    pub fn new(region: B) -> Result<Self, IbError> {
        let r = region.borrow();
        let capacity = (r.size() / 4).min(MAX_IB_DWORDS);
        IbDescriptor::new(r.bus_address(), capacity)?;
        Ok(IndirectBuffer { region, capacity, len: 0, granted: 0 })
    }

    /// Most dwords it can hold.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Dwords written.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Dwords still free.
    pub fn free_dwords(&self) -> usize {
        self.capacity - self.len
    }

    /// Start over (only once the CP is done with the previous contents).
    pub fn clear(&mut self) {
        self.len = 0;
        self.granted = 0;
    }

    /// The memory.
    pub fn region(&self) -> &DmaRegion {
        self.region.borrow()
    }

    /// Give the memory back.
    pub fn into_region(self) -> B {
        self.region
    }

    /// A PM4 writer appending to this buffer.
    pub fn writer(&mut self) -> Pm4Writer<&mut Self> {
        Pm4Writer::new(self)
    }

    /// Type-2 fillers up to a multiple of `alignment` dwords (a power of two); all or nothing.
    /// Returns the number of fillers.
    pub fn pad_to(&mut self, alignment: usize) -> Result<usize, PadError> {
        let n = pad_count(self.len, alignment)?;
        CommandSink::reserve(self, n)?;
        for _ in 0..n {
            self.push(TYPE2)?;
        }
        Ok(n)
    }

    /// The buffer as written so far, for [`Pm4Writer::indirect_buffer`] /
    /// [`indirect_buffer2`](Pm4Writer::indirect_buffer2). Fails for an empty buffer.
    pub fn descriptor(&self) -> Result<IbDescriptor, IbError> {
        IbDescriptor::new(self.region.borrow().bus_address(), self.len)
    }
}

impl<B: Borrow<DmaRegion>> CommandSink for IndirectBuffer<B> {
    #[inline]
    fn write_packet(&mut self, header: u32, body: &[u32]) -> Result<(), NoSpace> {
        CommandSink::reserve(self, 1 + body.len())?;
        let region = self.region.borrow();
        // In bounds: `len + 1 + body.len() <= capacity <= region dwords` (checked above).
        let _ = region.write_u32(self.len * 4, header);
        let _ = region.write_slice((self.len + 1) * 4, body);
        self.len += 1 + body.len();
        self.granted = 0;
        Ok(())
    }

    #[inline]
    fn reserve(&mut self, dwords: usize) -> Result<(), NoSpace> {
        let free = self.free_dwords();
        if dwords > free {
            return Err(NoSpace { needed: dwords, free });
        }
        self.granted = dwords;
        Ok(())
    }

    #[inline]
    fn push(&mut self, dword: u32) -> Result<(), NoSpace> {
        if self.granted == 0 {
            return Err(NoSpace { needed: 1, free: 0 });
        }
        // `len < capacity <= region dwords`: always in bounds.
        let _ = self.region.borrow().write_u32(self.len * 4, dword);
        self.len += 1;
        self.granted -= 1;
        Ok(())
    }

    fn push_slice(&mut self, dwords: &[u32]) -> Result<(), NoSpace> {
        if dwords.len() > self.granted {
            return Err(NoSpace { needed: dwords.len(), free: self.granted });
        }
        let _ = self.region.borrow().write_slice(self.len * 4, dwords);
        self.len += dwords.len();
        self.granted -= dwords.len();
        Ok(())
    }
}
