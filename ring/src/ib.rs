//! Indirect buffers (amd-r5xx-acceleration §5.6, §5.10; amd-evergreen-cayman-acceleration
//! §9.3.1): command streams outside the ring that the CP fetches when the ring tells it to.
//!
//! [`IndirectBuffer`] builds a stream in a [`DmaRegion`] with the same
//! [`Pm4Writer`] as the ring; [`IndirectBuffer::descriptor`] describes
//! the finished buffer as the family's [`IndirectBuffers::Descriptor`], which the family's
//! writer emits (R5xx: `r5xx::IbDescriptor`, a type-0 write of
//! CP_IB_BASE/CP_IB_BUFSZ; Evergreen: an `INDIRECT_BUFFER` packet).
//!
//! The CP reads an indirect buffer when it gets to it, not when it is emitted: keep the buffer
//! unchanged until a later fence has passed.

use core::borrow::Borrow;
use core::fmt;
use core::marker::PhantomData;

use baregpu_hal::dma::{BusAddress, DmaRegion};

use crate::pm4::{PadError, Pm4Family, Pm4Writer, TYPE2, pad_count};
use crate::stream::{CommandSink, NoSpace};

/// What a family's CP accepts as an indirect buffer: one implementation per family.
pub trait IndirectBuffers: 'static {
    /// A validated buffer, ready for the family's writer to emit.
    type Descriptor: Copy;
    /// Largest buffer, in dwords.
    const MAX_IB_DWORDS: usize;
    /// Describe `dwords` dwords at `base`, or say why the CP cannot fetch them.
    fn describe(base: BusAddress, dwords: usize) -> Result<Self::Descriptor, IbError>;
}

/// An indirect buffer the CP cannot fetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum IbError {
    /// The buffer does not start on a dword (the base registers hold address bits from 2 up).
    Unaligned {
        /// Its bus address.
        address: BusAddress,
    },
    /// The buffer does not end within the CP's reach (R5xx: below 4 GiB; Evergreen: 1 TiB).
    AddressOutOfRange {
        /// Its bus address.
        address: BusAddress,
        /// Its length in dwords.
        dwords: usize,
    },
    /// An empty buffer, or one longer than the family's largest. (A size write starts a fetch,
    /// R5xx §5.10, so an empty buffer is not emitted.)
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
                write!(
                    f,
                    "indirect buffer of {dwords} dwords at {address} is out of the CP's reach"
                )
            }
            IbError::BadSize { dwords } => {
                write!(f, "indirect buffer of {dwords} dwords (empty or longer than the CP takes)")
            }
        }
    }
}

impl core::error::Error for IbError {}

/// An indirect buffer being built in DMA memory (owned, or borrowed as `&DmaRegion`), for
/// family `F` (no default: `r5xx::R5xxIb`, `evergreen::EvergreenIb`).
#[derive(Debug)]
pub struct IndirectBuffer<B, F: IndirectBuffers> {
    region: B,
    capacity: usize,
    len: usize,
    granted: usize,
    family: PhantomData<F>,
}

impl<B: Borrow<DmaRegion>, F: IndirectBuffers> IndirectBuffer<B, F> {
    /// An empty buffer of family `F` over `region`, which the family's CP must be able to
    /// fetch whole; its capacity is the region's dwords, at most `F::MAX_IB_DWORDS`.
    pub fn with_family(region: B) -> Result<Self, IbError> {
        let r = region.borrow();
        let capacity = (r.size() / 4).min(F::MAX_IB_DWORDS);
        F::describe(r.bus_address(), capacity)?;
        Ok(IndirectBuffer { region, capacity, len: 0, granted: 0, family: PhantomData })
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

    /// A PM4 writer of the family appending to this buffer.
    pub fn family_writer(&mut self) -> Pm4Writer<&mut Self, F>
    where
        F: Pm4Family,
    {
        Pm4Writer::with_family(self)
    }

    /// Type-2 fillers (R5xx §6.1.3, Evergreen §9.1.3) up to a multiple of `alignment` dwords
    /// (a power of two); all or nothing. Returns the number of fillers.
    pub fn pad_to(&mut self, alignment: usize) -> Result<usize, PadError> {
        let n = pad_count(self.len, alignment)?;
        CommandSink::reserve(self, n)?;
        for _ in 0..n {
            self.push(TYPE2)?;
        }
        Ok(n)
    }

    /// The buffer as written so far, for the family writer's `indirect_buffer`. Fails for an
    /// empty buffer.
    pub fn descriptor(&self) -> Result<F::Descriptor, IbError> {
        F::describe(self.region.borrow().bus_address(), self.len)
    }
}

impl<B: Borrow<DmaRegion>, F: IndirectBuffers> CommandSink for IndirectBuffer<B, F> {
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
