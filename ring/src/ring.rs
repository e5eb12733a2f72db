//! The command processor's ring buffer: a circular buffer of stream units (PM4 dwords) in DMA
//! memory the host writes and the command processor reads, written once for every family
//! (amd-r5xx-acceleration §5.4 describes the scheme; Evergreen/Cayman use the same one,
//! amd-evergreen-cayman-acceleration §9.1).
//!
//! # Pointers and free space
//!
//! Both pointers are unit indices into the ring. "Equal pointers mean empty", so "it is the
//! Host's responsibility to ensure that there is at least one free location in the buffer"
//! (R5xx §5.4): [`CommandRing::free_units`] is `size - 1 - used` and at most `size - 1` units
//! are ever outstanding.
//!
//! The host's read pointer is the value the CP writes back by bus mastering to the family's
//! write-back address register every `RB_BLKSZ` quadwords and when it runs empty (§5.4). The
//! ring caches it and re-reads the write-back dword (normal DMA memory, never an MMIO register)
//! only when the cached free space is too small for a request, as §5.4 recommends ("check them
//! once, calculate an amount of free space, and then decrement a local copy"). A written-back
//! value outside the window the CP may legally have reached (between the cached read pointer
//! and the last committed write pointer) is ignored, so a stale or corrupted write-back can
//! never make the ring overwrite units the CP has not fetched yet.
//!
//! # Wrap-around
//!
//! §5.4: "Once the data placement hits the end, it starts from the beginning again", and the CP
//! consumes "in a manner similar to how they were placed": the read pointer is an index that
//! wraps modulo the ring size independently of packet boundaries. Packets are therefore written
//! unit by unit modulo the size and may straddle the end (the Linux radeon driver does the
//! same); no padding to the end is needed.
//!
//! # Doorbell
//!
//! The ring does not own registers. [`CommandRing::commit`] issues [`dma_wmb`] and returns the
//! family's typed write-pointer register value the driver writes (`io.write(ring.commit())`),
//! so many packets share one doorbell; [`CommandRing::kick`] does both for a driver that passes
//! its `RegisterIo`. [`CommandRing::commits`] counts doorbells for tests and benchmarks.
//!
//! # Families
//!
//! What differs between command processors is one small trait, [`CommandProcessorRing`]: the
//! unit the ring holds, the base and write-back register values (their alignment and reach),
//! the size limits and encoding, the doorbell register and the filler used for padding. The
//! ring itself (space, back-pressure, wrap, write-back validation, doorbell counting) is
//! written once over it. Implementations: [`R5xx`] (the default type
//! parameter, so `CommandRing::new` builds an R5xx ring) and `Evergreen` (module `evergreen`,
//! feature `evergreen`).
//!
//! Nothing here allocates: the crate is `no_std` without `alloc`.

use core::borrow::Borrow;
use core::fmt;
use core::marker::PhantomData;
use core::time::Duration;

use baregpu_hal::barrier::{dma_rmb, dma_wmb};
use baregpu_hal::dma::{BusAddress, DmaRegion};
use baregpu_hal::io::Accepts;
use baregpu_hal::time::{Clock, TimedOut, poll_until};
use baregpu_hal::{Absolute, Register, RegisterIoExt, Scalar, Writable};

use crate::pm4::{PadError, pad_count};
use crate::r5xx::R5xx;
use crate::stream::{CommandSink, NoSpace, StreamUnit};

/// The ring has no room for a request; nothing was written. `free` is the free space after
/// re-reading the write-back read pointer.
pub type RingFull = NoSpace;

/// What a family's command processor asks of its ring: one implementation per family
/// ([`R5xx`], `Evergreen`), used by [`CommandRing`].
pub trait CommandProcessorRing: 'static {
    /// What the ring holds (`u32` for PM4).
    type Unit: StreamUnit;
    /// The ring's base address as the CP's base register(s) hold it.
    type Base: Copy + fmt::Debug;
    /// The read-pointer write-back address as the CP's write-back register(s) hold it.
    type Writeback: Copy + fmt::Debug;
    /// The write-pointer register (the doorbell).
    type Doorbell: Writable + Scalar + Register<Base = Absolute>;

    /// Smallest ring, in units (a power of two).
    const MIN_UNITS: usize;
    /// Largest ring, in units (a power of two).
    const MAX_UNITS: usize;
    /// The unit [`CommandRing::pad_to`] fills with: a packet the CP skips.
    const FILLER: Self::Unit;
    /// The alignment, in units, a driver pads each submission to before the doorbell.
    const SUBMIT_ALIGN: usize;

    /// The base register value for a ring of `bytes` bytes at `address`, or `None` when the
    /// CP cannot reach or align it.
    fn base(address: BusAddress, bytes: usize) -> Option<Self::Base>;
    /// The write-back register value for the read-pointer dword at `address`, or `None`.
    fn writeback(address: BusAddress) -> Option<Self::Writeback>;
    /// The size field for a ring of `units` units (a power of two within the limits).
    fn size_field(units: usize) -> u8;
    /// The doorbell value publishing write pointer `wptr` (a unit index).
    fn doorbell(wptr: u32) -> Self::Doorbell;
}

/// A ring or write-back location the CP cannot use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum RingConfigError {
    /// The ring is not a power of two between the family's smallest and largest ring
    /// (`bytes` is the region size).
    BadSize {
        /// Region size in bytes.
        bytes: usize,
    },
    /// The family's base register cannot hold the ring's address (misaligned, or the ring does
    /// not end within its reach).
    BadBase {
        /// The ring's bus address.
        address: BusAddress,
    },
    /// The read-pointer write-back dword is outside its region, misaligned, or not reachable by
    /// the family's write-back register.
    BadWriteback {
        /// Byte offset requested in the write-back region.
        offset: usize,
        /// Its bus address; `None` when region address + offset passes the top of the bus
        /// space.
        address: Option<BusAddress>,
    },
}

impl fmt::Display for RingConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RingConfigError::BadSize { bytes } => {
                write!(f, "a ring of {bytes} bytes (not a power of two the CP supports)")
            }
            RingConfigError::BadBase { address } => {
                write!(f, "ring at {address} is misaligned or out of the CP's reach")
            }
            RingConfigError::BadWriteback { offset, address: Some(address) } => {
                write!(f, "read-pointer writeback at offset {offset} ({address}) is unusable")
            }
            RingConfigError::BadWriteback { offset, address: None } => {
                write!(f, "read-pointer writeback at offset {offset} is past the bus space")
            }
        }
    }
}

impl core::error::Error for RingConfigError {}

/// The size in units of a ring of family `F` over `bytes` of memory: a power of two of
/// `F::MIN_UNITS..=F::MAX_UNITS` units, else [`RingConfigError::BadSize`].
/// [`CommandRing::with_family`] applies it; drivers check a configured size with it before
/// allocating (R5xx: [`ring_dwords`](crate::r5xx::ring_dwords)).
pub const fn ring_units<F: CommandProcessorRing>(bytes: usize) -> Result<usize, RingConfigError> {
    let units = bytes / F::Unit::BYTES;
    if bytes.is_multiple_of(F::Unit::BYTES)
        && units.is_power_of_two()
        && units >= F::MIN_UNITS
        && units <= F::MAX_UNITS
    {
        Ok(units)
    } else {
        Err(RingConfigError::BadSize { bytes })
    }
}

/// The written-back read pointer is not one the CP could have reached; it was ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct BadReadPointer {
    /// The value read from the writeback location.
    pub rptr: u32,
    /// The cached read pointer (still in use).
    pub cached: u32,
    /// The last committed write pointer.
    pub committed: u32,
}

impl fmt::Display for BadReadPointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "written-back RPTR {:#x} is outside {:#x}..={:#x}",
            self.rptr, self.cached, self.committed
        )
    }
}

impl core::error::Error for BadReadPointer {}

/// A blocking reservation failed; nothing was written. Counts are in the ring's units (the
/// message says dwords, as for [`NoSpace`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum WaitError {
    /// Waiting cannot help: even with every committed unit consumed, at most `max` units
    /// would be free (the ring is too small, or uncommitted units fill it: commit first).
    TooLarge {
        /// Units requested.
        needed: usize,
        /// The most that could ever be free without a commit.
        max: usize,
    },
    /// The CP did not consume enough before the deadline.
    TimedOut {
        /// Units requested.
        needed: usize,
        /// Free units at the last poll.
        free: usize,
        /// How long and how often the writeback was polled.
        waited: TimedOut,
    },
}

impl fmt::Display for WaitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WaitError::TooLarge { needed, max } => {
                write!(f, "{needed} dwords can never fit (at most {max} without a commit)")
            }
            WaitError::TimedOut { needed, free, .. } => {
                write!(f, "ring still has {free} of {needed} dwords free")
            }
        }
    }
}

impl core::error::Error for WaitError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            WaitError::TimedOut { waited, .. } => Some(waited),
            _ => None,
        }
    }
}

/// A command processor's ring buffer over DMA memory, with the host's copy of the read pointer
/// in a second DMA location (see the module documentation).
///
/// `B` and `W` are the ring and write-back storage: an owned [`DmaRegion`] or a borrow of one
/// (`&DmaRegion`), so the write-back dword can share a page with, e.g., the scratch write-back
/// area (R5xx §5.9). `F` is the family ([`R5xx`] by default).
#[derive(Debug)]
pub struct CommandRing<B = DmaRegion, W = DmaRegion, F: CommandProcessorRing = R5xx> {
    buffer: B,
    writeback: W,
    writeback_offset: usize,
    /// The ring's base and write-back address as the CP registers hold them, checked by their
    /// bus-address setters when the ring was made.
    base: F::Base,
    writeback_address: F::Writeback,
    /// Size in units minus one.
    mask: u32,
    /// Next unit the host writes.
    head: u32,
    /// Last write pointer handed to the CP.
    committed: u32,
    /// Cached read pointer (last valid write-back value).
    rptr: u32,
    /// Pushes left in the current grant.
    granted: usize,
    commits: u64,
    rptr_reads: u64,
    partial_reads: u64,
    family: PhantomData<F>,
}

impl<B: Borrow<DmaRegion>, W: Borrow<DmaRegion>, F: CommandProcessorRing> CommandRing<B, W, F> {
    /// A ring of family `F` over all of `buffer` (a power of two of `F::MIN_UNITS..=
    /// F::MAX_UNITS` units the family's base register can hold), whose read pointer the CP
    /// writes back to byte `writeback_offset` of `writeback`. [`CommandRing::new`] is this for
    /// the default family, [`R5xx`].
    ///
    /// Both pointers start at 0, matching a CP whose write (and read) pointer were just set to
    /// 0 (R5xx §5.8); the write-back dword is zeroed.
    ///
    /// The ring owns `buffer` and `writeback`: pass [`DmaBuffer`](baregpu_hal::dma::DmaBuffer)s
    /// and both are given back to their allocator when construction fails or the ring is
    /// dropped.
    pub fn with_family(
        buffer: B,
        writeback: W,
        writeback_offset: usize,
    ) -> Result<Self, RingConfigError> {
        let region = buffer.borrow();
        let bytes = region.size();
        let units = ring_units::<F>(bytes)?;
        let address = region.bus_address();
        let base = F::base(address, bytes).ok_or(RingConfigError::BadBase { address })?;
        // A checked sum: a region near the top of the bus space must be refused, not wrapped
        // into a small write-back address.
        let wb = writeback.borrow();
        let wb_address = wb.bus_address().checked_offset(writeback_offset as u64);
        let bad_wb =
            RingConfigError::BadWriteback { offset: writeback_offset, address: wb_address };
        let writeback_address = wb_address.and_then(F::writeback).ok_or(bad_wb)?;
        wb.write_u32(writeback_offset, 0).map_err(|_| bad_wb)?;
        Ok(CommandRing {
            buffer,
            writeback,
            writeback_offset,
            base,
            writeback_address,
            mask: units as u32 - 1,
            head: 0,
            committed: 0,
            rptr: 0,
            granted: 0,
            commits: 0,
            rptr_reads: 0,
            partial_reads: 0,
            family: PhantomData,
        })
    }

    /// Ring size in units.
    pub fn size_units(&self) -> usize {
        self.mask as usize + 1
    }

    /// Most units that can be outstanding at once (size - 1, §5.4).
    pub fn capacity(&self) -> usize {
        self.mask as usize
    }

    /// The family's ring-size field for this ring (R5xx and Evergreen: CP_RB_CNTL.RB_BUFSZ,
    /// log2 of the size in quadwords).
    pub fn rb_bufsz(&self) -> u8 {
        F::size_field(self.size_units())
    }

    /// The ring's base address as the family's base register(s) hold it.
    pub fn base_registers(&self) -> F::Base {
        self.base
    }

    /// The write-back address as the family's write-back register(s) hold it.
    pub fn writeback_registers(&self) -> F::Writeback {
        self.writeback_address
    }

    /// The ring memory.
    pub fn buffer(&self) -> &DmaRegion {
        self.buffer.borrow()
    }

    /// The region holding the write-back dword, and the dword's byte offset in it.
    pub fn writeback(&self) -> (&DmaRegion, usize) {
        (self.writeback.borrow(), self.writeback_offset)
    }

    /// Give the storage back.
    pub fn into_parts(self) -> (B, W) {
        (self.buffer, self.writeback)
    }

    /// Next unit index the host writes (the write pointer the next [`commit`](Self::commit)
    /// publishes).
    pub fn head(&self) -> u32 {
        self.head
    }

    /// The last write pointer published by [`commit`](Self::commit).
    pub fn committed(&self) -> u32 {
        self.committed
    }

    /// The cached read pointer.
    pub fn cached_rptr(&self) -> u32 {
        self.rptr
    }

    /// Units written since the last commit.
    pub fn pending_units(&self) -> usize {
        (self.head.wrapping_sub(self.committed) & self.mask) as usize
    }

    /// Free units by the cached read pointer (no memory access): `size - 1 - used`.
    pub fn free_units(&self) -> usize {
        self.capacity() - (self.head.wrapping_sub(self.rptr) & self.mask) as usize
    }

    /// Number of commits (doorbells) so far.
    pub fn commits(&self) -> u64 {
        self.commits
    }

    /// Number of times the write-back read pointer was read.
    pub fn rptr_reads(&self) -> u64 {
        self.rptr_reads
    }

    /// Reads of the write-back read pointer that found the CP part-way: it had moved past the
    /// cached read pointer but not yet reached the committed write pointer (the CP was still
    /// consuming). Tests use it to show the driver ran against an engine that works on its own
    /// time, not one that finished every doorbell before the write returned.
    pub fn partial_reads(&self) -> u64 {
        self.partial_reads
    }

    /// Re-read the written-back read pointer and cache it if the CP could have reached it
    /// (between the cached read pointer and the last commit); otherwise keep the cached one.
    pub fn refresh_rptr(&mut self) -> Result<u32, BadReadPointer> {
        self.rptr_reads += 1;
        // The offset was checked in `with_family`, so the read cannot fail; a failure reads as
        // "no progress".
        let raw = self.writeback.borrow().read_u32(self.writeback_offset).unwrap_or(self.rptr);
        // Order the pointer read before anything that depends on it (§5.4 snooped write-back).
        dma_rmb();
        let advanced = raw.wrapping_sub(self.rptr) & self.mask;
        let in_flight = self.committed.wrapping_sub(self.rptr) & self.mask;
        if raw > self.mask || advanced > in_flight {
            return Err(BadReadPointer { rptr: raw, cached: self.rptr, committed: self.committed });
        }
        if advanced > 0 && advanced < in_flight {
            self.partial_reads += 1;
        }
        self.rptr = raw;
        Ok(raw)
    }

    /// Grant room for the next `units` pushes, re-reading the write-back read pointer only if
    /// the cached free space is too small. [`RingFull`] (with the free space after the re-read)
    /// when there is no room; ring memory is not touched.
    #[inline]
    pub fn reserve(&mut self, units: usize) -> Result<(), RingFull> {
        if units > self.free_units() {
            return self.reserve_after_refresh(units);
        }
        self.granted = units;
        Ok(())
    }

    #[cold]
    fn reserve_after_refresh(&mut self, units: usize) -> Result<(), RingFull> {
        // A bad write-back value keeps the cached pointer: treated as no progress.
        let _ = self.refresh_rptr();
        let free = self.free_units();
        if units > free {
            return Err(RingFull { needed: units, free });
        }
        self.granted = units;
        Ok(())
    }

    /// [`reserve`](Self::reserve), polling the write-back read pointer until the CP has
    /// consumed enough or `timeout` passes on `clock` (back-pressure: unconsumed units are
    /// never overwritten). Fails at once with [`WaitError::TooLarge`] when waiting cannot help.
    pub fn reserve_blocking(
        &mut self,
        units: usize,
        clock: &impl Clock,
        timeout: Duration,
    ) -> Result<(), WaitError> {
        let max = self.capacity() - self.pending_units();
        if units > max {
            return Err(WaitError::TooLarge { needed: units, max });
        }
        if self.reserve(units).is_ok() {
            return Ok(());
        }
        let polled = poll_until(clock, timeout, || {
            let _ = self.refresh_rptr();
            (self.free_units() >= units).then_some(())
        });
        match polled {
            Ok(()) => {
                self.granted = units;
                Ok(())
            }
            Err(waited) => {
                Err(WaitError::TimedOut { needed: units, free: self.free_units(), waited })
            }
        }
    }

    /// The family's filler units (R5xx and Evergreen: type-2 packets, R5xx §6.1.3, Evergreen
    /// §9.1.3) until the write pointer is a multiple of `alignment` units (a power of two;
    /// drivers use `F::SUBMIT_ALIGN`); all or nothing. Returns the number of fillers. An
    /// alignment above the ring size pads to the end of the ring (index 0 is the only aligned
    /// index there).
    pub fn pad_to(&mut self, alignment: usize) -> Result<usize, PadError> {
        pad_count(0, alignment)?;
        let n = pad_count(self.head as usize, alignment.min(self.size_units()))?;
        self.reserve(n)?;
        for _ in 0..n {
            self.push(F::FILLER)?;
        }
        Ok(n)
    }

    /// Publish everything written: [`dma_wmb`], then the write-pointer (doorbell) register
    /// value for the driver to write (R5xx §5.4: "informs the Graphics Controller of any
    /// changes to the Write Pointer by writing directly to the Write Pointer register"). Counts
    /// one doorbell.
    pub fn commit(&mut self) -> F::Doorbell {
        dma_wmb();
        self.committed = self.head;
        self.commits += 1;
        F::doorbell(self.head)
    }

    /// Forget the units written since the last [`commit`](Self::commit): the write pointer
    /// goes back to the committed one and the grant ends. The CP never saw them (no doorbell
    /// published them); a driver discards a submission that failed half-way this way, so
    /// nothing of it runs with the next one. Returns the number of units discarded.
    pub fn discard_uncommitted(&mut self) -> usize {
        let discarded = self.pending_units();
        self.head = self.committed;
        self.granted = 0;
        discarded
    }

    /// [`commit`](Self::commit) and write the result to the doorbell register through `io`
    /// (a bare register window, or one bound to the doorbell's family).
    pub fn kick<IO>(&mut self, io: &IO)
    where
        IO: RegisterIoExt<Base = Absolute> + ?Sized,
        IO::Family: Accepts<<F::Doorbell as Register>::Family>,
    {
        let wptr = self.commit();
        io.write(wptr);
    }

    /// Forget all contents after a CP soft reset (R5xx §5.8): both pointers back to 0 (the
    /// driver writes a zero write pointer), the write-back dword zeroed.
    pub fn reset(&mut self) {
        let _ = self.writeback.borrow().write_u32(self.writeback_offset, 0);
        self.head = 0;
        self.committed = 0;
        self.rptr = 0;
        self.granted = 0;
    }

    #[inline]
    fn write_at(&self, index: u32, unit: F::Unit) {
        // `index <= mask` and the region is exactly `mask + 1` units: always in bounds.
        F::Unit::store(self.buffer.borrow(), index as usize, unit);
    }
}

/// Dword names for rings of dwords (PM4): the same as the `_units` accessors.
impl<B: Borrow<DmaRegion>, W: Borrow<DmaRegion>, F: CommandProcessorRing<Unit = u32>>
    CommandRing<B, W, F>
{
    /// Ring size in dwords.
    pub fn size_dwords(&self) -> usize {
        self.size_units()
    }

    /// Dwords written since the last commit.
    pub fn pending_dwords(&self) -> usize {
        self.pending_units()
    }

    /// Free dwords by the cached read pointer (no memory access): `size - 1 - used`.
    pub fn free_dwords(&self) -> usize {
        self.free_units()
    }
}

impl<B: Borrow<DmaRegion>, W: Borrow<DmaRegion>, F: CommandProcessorRing> CommandSink<F::Unit>
    for CommandRing<B, W, F>
{
    #[inline]
    fn reserve(&mut self, units: usize) -> Result<(), NoSpace> {
        CommandRing::reserve(self, units)
    }

    #[inline]
    fn write_packet(&mut self, header: F::Unit, body: &[F::Unit]) -> Result<(), NoSpace> {
        let n = 1 + body.len();
        CommandRing::reserve(self, n)?;
        let head = self.head as usize;
        if head + n <= self.size_units() {
            // Contiguous: in bounds because `head + n <= size` (region = size units).
            let region = self.buffer.borrow();
            F::Unit::store(region, head, header);
            F::Unit::store_slice(region, head + 1, body);
            self.head = ((head + n) & self.mask as usize) as u32;
        } else {
            // Straddles the end: unit by unit modulo the size (§5.4).
            self.write_at(self.head, header);
            self.head = (self.head + 1) & self.mask;
            for &d in body {
                self.write_at(self.head, d);
                self.head = (self.head + 1) & self.mask;
            }
        }
        self.granted = 0;
        Ok(())
    }

    #[inline]
    fn push(&mut self, unit: F::Unit) -> Result<(), NoSpace> {
        if self.granted == 0 {
            return Err(NoSpace { needed: 1, free: 0 });
        }
        self.write_at(self.head, unit);
        self.head = (self.head + 1) & self.mask;
        self.granted -= 1;
        Ok(())
    }

    fn push_slice(&mut self, units: &[F::Unit]) -> Result<(), NoSpace> {
        if units.len() > self.granted {
            return Err(NoSpace { needed: units.len(), free: self.granted });
        }
        for &d in units {
            self.write_at(self.head, d);
            self.head = (self.head + 1) & self.mask;
        }
        self.granted -= units.len();
        Ok(())
    }
}
