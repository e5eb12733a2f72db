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
//! Where the host learns the CP's read pointer is a [`ReadPointer`] policy, the ring's second
//! type parameter:
//!
//! - [`WritebackRptr`]: the dword the CP writes back by bus mastering to the family's
//!   write-back address register every `RB_BLKSZ` quadwords and when it runs empty (R5xx §5.4;
//!   normal DMA memory, no MMIO read). The AMD families use it.
//! - [`RegisterRptr`]: a register read through a [`RegisterIoExt`] (absolute, or a block
//!   instance such as an nVidia channel's USER area, whose `DMA_GET` reports the pushbuffer's
//!   get pointer, envytools §2.8.3).
//!
//! The ring caches the read pointer and asks the policy again only when the cached free space
//! is too small for a request, as §5.4 recommends ("check them once, calculate an amount of
//! free space, and then decrement a local copy"). A reported value outside the window the CP
//! may legally have reached (between the cached read pointer and the last committed write
//! pointer) is ignored, so a stale or corrupted report can never make the ring overwrite units
//! the CP has not fetched yet.
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
//! the register access the doorbell lives in: the `RegisterIo` for an absolute doorbell
//! (AMD `CP_RB_WPTR`), a [`BlockIo`](baregpu_hal::BlockIo) of the channel for a doorbell in a
//! per-channel block (`bar0.at_index::<UserG80>(ch)?`, nVidia `DMA_PUT`). The doorbell
//! register's `Base` says which, so a wrong one does not build. [`CommandRing::commits`]
//! counts doorbells for tests and benchmarks.
//!
//! ```compile_fail,E0271
//! # fn f(ring: &mut baregpu_ring::r5xx::R5xxRing, bar0: &impl baregpu_hal::RegisterIo) {
//! use baregpu_hal::RegisterIoExt;
//! use baregpu_regs::nvidia::pfifo_user::UserG80;
//! // CP_RB_WPTR is an absolute register, not one of a channel's USER block:
//! ring.kick(&bar0.at_index::<UserG80>(3).unwrap());
//! # }
//! ```
//!
//! # Families
//!
//! What differs between command processors is one small trait, [`CommandProcessorRing`]: the
//! unit the ring holds, the base register value (its alignment and reach), the size limits and
//! encoding, the doorbell register and the filler used for padding; a family whose CP writes
//! its read pointer back implements [`WritebackFamily`] (the write-back address register), one
//! that reports it in a register [`RegisterRptrFamily`]. The ring itself (space,
//! back-pressure, wrap, read-pointer validation, doorbell counting) is written once over
//! them and names no family: every ring type says its family
//! (`CommandRing<B, P, r5xx::Family>`, or the aliases `r5xx::R5xxRing`,
//! `evergreen::EvergreenRing`). The family is the register database's marker
//! (`baregpu_regs::r5xx::Family`, re-exported as `r5xx::Family`), the same type that types
//! the family's registers. Implementations: `r5xx::Family` (feature `r5xx`) and
//! `evergreen::Family` (feature `evergreen`).
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
use baregpu_hal::{Readable, Register, RegisterIoExt, Scalar, Writable};

use crate::pm4::{PadError, pad_count};
use crate::stream::{CommandSink, NoSpace, StreamUnit};

/// The ring has no room for a request; nothing was written. `free` is the free space after
/// re-reading the write-back read pointer.
pub type RingFull = NoSpace;

/// What a family's command processor asks of its ring: one implementation per family
/// (`r5xx::Family`, `evergreen::Family`), used by [`CommandRing`].
pub trait CommandProcessorRing: 'static {
    /// What the ring holds (`u32` for PM4).
    type Unit: StreamUnit;
    /// The ring's base address as the CP's base register(s) hold it.
    type Base: Copy + fmt::Debug;
    /// The write-pointer register (the doorbell): absolute (AMD `CP_RB_WPTR`) or in a block
    /// instance (a channel's USER area); [`CommandRing::kick`] takes the matching access.
    type Doorbell: Writable + Scalar + Register;

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
    /// The size field for a ring of `units` units (a power of two within the limits).
    fn size_field(units: usize) -> u8;
    /// The doorbell value publishing write pointer `wptr` (a unit index).
    fn doorbell(wptr: u32) -> Self::Doorbell;
}

/// A family whose CP writes its read pointer (a unit index) back to a dword of DMA memory
/// whose address the driver programs ([`WritebackRptr`]).
pub trait WritebackFamily: CommandProcessorRing {
    /// The read-pointer write-back address as the CP's write-back register(s) hold it.
    type Writeback: Copy + fmt::Debug;
    /// The write-back register value for the read-pointer dword at `address`, or `None`.
    fn writeback(address: BusAddress) -> Option<Self::Writeback>;
}

/// A family whose CP reports its read pointer in a register ([`RegisterRptr`]).
pub trait RegisterRptrFamily: CommandProcessorRing {
    /// The register holding the read pointer: absolute, or in a block instance.
    type Rptr: Readable + Scalar + Register;
    /// The unit index a value of the register stands for (not yet validated by the ring: any
    /// value is allowed, the ring ignores one the CP cannot have reached).
    fn rptr_index(value: Self::Rptr) -> u32;
}

/// Where a [`CommandRing`] of family `F` learns how far the CP has read: a policy, the ring's
/// second type parameter ([`WritebackRptr`], [`RegisterRptr`]).
pub trait ReadPointer<F: CommandProcessorRing> {
    /// The read pointer as the CP last reported it, a unit index (the ring validates it).
    fn read(&self) -> u32;
    /// Forget the last report when the CP's pointers are set back to 0 (a write-back dword is
    /// zeroed; a register needs nothing).
    fn reset(&mut self) {}
}

/// The read pointer the CP writes back to byte `offset` of a DMA region (R5xx §5.4: the
/// `CP_RB_RPTR_ADDR` write-back). `W` is the region, owned ([`DmaRegion`],
/// [`DmaBuffer`](baregpu_hal::dma::DmaBuffer)) or borrowed, so the dword can share a page with
/// other write-back data (the scratch registers, R5xx §5.9).
#[derive(Debug)]
pub struct WritebackRptr<W, F: WritebackFamily> {
    region: W,
    offset: usize,
    /// The address as the family's write-back register(s) hold it, checked when made.
    registers: F::Writeback,
}

impl<W: Borrow<DmaRegion>, F: WritebackFamily> WritebackRptr<W, F> {
    /// The dword at byte `offset` of `region`, zeroed, if the family's write-back register can
    /// address it; else [`RingConfigError::BadWriteback`] (and `region` is dropped: a
    /// [`DmaBuffer`](baregpu_hal::dma::DmaBuffer) goes back to its allocator).
    pub fn new(region: W, offset: usize) -> Result<Self, RingConfigError> {
        let wb = region.borrow();
        // A checked sum: a region near the top of the bus space must be refused, not wrapped
        // into a small write-back address.
        let address = wb.bus_address().checked_offset(offset as u64);
        let bad = RingConfigError::BadWriteback { offset, address };
        let registers = address.and_then(F::writeback).ok_or(bad)?;
        wb.write_u32(offset, 0).map_err(|_| bad)?;
        Ok(WritebackRptr { region, offset, registers })
    }

    /// The region holding the dword.
    pub fn region(&self) -> &DmaRegion {
        self.region.borrow()
    }

    /// The dword's byte offset in the region.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The write-back address as the family's write-back register(s) hold it.
    pub fn registers(&self) -> F::Writeback {
        self.registers
    }

    /// Give the region back.
    pub fn into_region(self) -> W {
        self.region
    }
}

impl<W: Borrow<DmaRegion>, F: WritebackFamily> ReadPointer<F> for WritebackRptr<W, F> {
    #[inline]
    fn read(&self) -> u32 {
        // The offset was checked in `new`, so the read cannot fail; a failure reads as an
        // out-of-range pointer, which the ring ignores.
        self.region.borrow().read_u32(self.offset).unwrap_or(u32::MAX)
    }

    fn reset(&mut self) {
        let _ = self.region.borrow().write_u32(self.offset, 0);
    }
}

/// The read pointer read from the family's register ([`RegisterRptrFamily::Rptr`]) through
/// `IO`: a [`RegisterIo`](baregpu_hal::RegisterIo) for an absolute register, a
/// [`BlockIo`](baregpu_hal::BlockIo) for one in a block instance (a channel's USER area).
#[derive(Debug, Clone, Copy)]
pub struct RegisterRptr<IO> {
    io: IO,
}

impl<IO> RegisterRptr<IO> {
    /// Read the pointer through `io`.
    pub const fn new(io: IO) -> Self {
        RegisterRptr { io }
    }

    /// The register access.
    pub fn io(&self) -> &IO {
        &self.io
    }
}

impl<IO, F> ReadPointer<F> for RegisterRptr<IO>
where
    F: RegisterRptrFamily,
    IO: RegisterIoExt<Base = <F::Rptr as Register>::Base>,
    IO::Family: Accepts<<F::Rptr as Register>::Family>,
{
    #[inline]
    fn read(&self) -> u32 {
        F::rptr_index(self.io.read::<F::Rptr>())
    }
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
/// The ring's constructors apply it; drivers check a configured size with it before
/// allocating (R5xx: `r5xx::ring_dwords`).
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

/// A command processor's ring buffer over DMA memory (see the module documentation).
///
/// `B` is the ring storage: an owned [`DmaRegion`] (or
/// [`DmaBuffer`](baregpu_hal::dma::DmaBuffer)) or a borrow of one. `P` is where the CP's read
/// pointer is learnt, a [`ReadPointer`] policy ([`WritebackRptr`], [`RegisterRptr`]). `F` is
/// the family; there is no default.
#[derive(Debug)]
pub struct CommandRing<B, P, F: CommandProcessorRing> {
    buffer: B,
    read_pointer: P,
    /// The ring's base address as the CP registers hold it, checked by their bus-address
    /// setters when the ring was made.
    base: F::Base,
    /// Size in units minus one.
    mask: u32,
    /// Next unit the host writes.
    head: u32,
    /// Last write pointer handed to the CP.
    committed: u32,
    /// Cached read pointer (last valid reported value).
    rptr: u32,
    /// Pushes left in the current grant.
    granted: usize,
    commits: u64,
    rptr_reads: u64,
    partial_reads: u64,
    family: PhantomData<F>,
}

/// The ring's size in units and base register value, or why the CP cannot use `buffer`.
fn check_buffer<F: CommandProcessorRing>(
    buffer: &DmaRegion,
) -> Result<(usize, F::Base), RingConfigError> {
    let bytes = buffer.size();
    let units = ring_units::<F>(bytes)?;
    let address = buffer.bus_address();
    let base = F::base(address, bytes).ok_or(RingConfigError::BadBase { address })?;
    Ok((units, base))
}

impl<B: Borrow<DmaRegion>, P: ReadPointer<F>, F: CommandProcessorRing> CommandRing<B, P, F> {
    /// A ring of family `F` over all of `buffer` (a power of two of `F::MIN_UNITS..=
    /// F::MAX_UNITS` units the family's base register can hold), learning the CP's read
    /// pointer from `read_pointer`.
    ///
    /// Both pointers start at 0, matching a CP whose write (and read) pointer were just set to
    /// 0 (R5xx §5.8). The ring owns `buffer` and the policy: DMA buffers are given back to
    /// their allocator when construction fails or the ring is dropped.
    pub fn with_read_pointer(buffer: B, read_pointer: P) -> Result<Self, RingConfigError> {
        let (units, base) = check_buffer::<F>(buffer.borrow())?;
        Ok(Self::from_parts(buffer, read_pointer, units, base))
    }

    fn from_parts(buffer: B, read_pointer: P, units: usize, base: F::Base) -> Self {
        CommandRing {
            buffer,
            read_pointer,
            base,
            mask: units as u32 - 1,
            head: 0,
            committed: 0,
            rptr: 0,
            granted: 0,
            commits: 0,
            rptr_reads: 0,
            partial_reads: 0,
            family: PhantomData,
        }
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

    /// The ring memory.
    pub fn buffer(&self) -> &DmaRegion {
        self.buffer.borrow()
    }

    /// The read-pointer policy.
    pub fn read_pointer(&self) -> &P {
        &self.read_pointer
    }

    /// Give the storage and the read-pointer policy back.
    pub fn into_parts(self) -> (B, P) {
        (self.buffer, self.read_pointer)
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

    /// Number of times the read pointer was asked of the policy (a write-back read or a
    /// register read).
    pub fn rptr_reads(&self) -> u64 {
        self.rptr_reads
    }

    /// Reads of the read pointer that found the CP part-way: it had moved past the cached read
    /// pointer but not yet reached the committed write pointer (the CP was still consuming).
    /// Tests use it to show the driver ran against an engine that works on its own time, not
    /// one that finished every doorbell before the write returned.
    pub fn partial_reads(&self) -> u64 {
        self.partial_reads
    }

    /// Ask the policy for the read pointer again and cache it if the CP could have reached it
    /// (between the cached read pointer and the last commit); otherwise keep the cached one.
    pub fn refresh_rptr(&mut self) -> Result<u32, BadReadPointer> {
        self.rptr_reads += 1;
        let raw = self.read_pointer.read();
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
        self.make_room(units)?;
        self.granted = units;
        Ok(())
    }

    /// Room for `units` more, re-reading the read pointer only if the cached free space is too
    /// small; the grant is left alone.
    #[inline(always)]
    fn make_room(&mut self, units: usize) -> Result<(), RingFull> {
        if units > self.free_units() { self.make_room_after_refresh(units) } else { Ok(()) }
    }

    #[cold]
    fn make_room_after_refresh(&mut self, units: usize) -> Result<(), RingFull> {
        // A bad write-back value keeps the cached pointer: treated as no progress.
        let _ = self.refresh_rptr();
        let free = self.free_units();
        if units > free { Err(RingFull { needed: units, free }) } else { Ok(()) }
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

    /// [`commit`](Self::commit) and write the result to the doorbell register through `io`:
    /// the register window for an absolute doorbell, the block instance holding it otherwise
    /// (`bar0.at_index::<UserG80>(channel)?`); a window bound to a family
    /// ([`FamilyIo`](baregpu_hal::FamilyIo)) must be the doorbell's.
    pub fn kick<IO>(&mut self, io: &IO)
    where
        IO: RegisterIoExt<Base = <F::Doorbell as Register>::Base> + ?Sized,
        IO::Family: Accepts<<F::Doorbell as Register>::Family>,
    {
        let wptr = self.commit();
        io.write(wptr);
    }

    /// Forget all contents after a CP soft reset (R5xx §5.8): both pointers back to 0 (the
    /// driver writes a zero write pointer), the policy reset (a write-back dword zeroed).
    pub fn reset(&mut self) {
        self.read_pointer.reset();
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

    /// Store `first` then `then` from the head on and advance it: one run of stores, split in
    /// two where it passes the end of the ring (§5.4: placement "starts from the beginning
    /// again"), so the wrap is decided once per packet, never per unit. The caller checked
    /// the space.
    #[inline(always)]
    fn store_at_head(&mut self, first: &[F::Unit], then: &[F::Unit]) {
        let head = self.head as usize;
        let n = first.len() + then.len();
        if n <= self.size_units() - head {
            F::Unit::store_run(self.buffer.borrow(), head, first, then);
        } else {
            self.store_wrapped(first, then);
        }
        self.head = ((head + n) & self.mask as usize) as u32;
    }

    /// The run of [`store_at_head`](Self::store_at_head) that passes the end: out of line,
    /// so the common contiguous case stays a few instructions at each call site.
    #[cold]
    #[inline(never)]
    fn store_wrapped(&self, first: &[F::Unit], then: &[F::Unit]) {
        let head = self.head as usize;
        let to_end = self.size_units() - head;
        let region = self.buffer.borrow();
        if to_end <= first.len() {
            let (before, after) = first.split_at(to_end);
            F::Unit::store_run(region, head, before, &[]);
            F::Unit::store_run(region, 0, after, then);
        } else {
            let (before, after) = then.split_at(to_end - first.len());
            F::Unit::store_run(region, head, first, before);
            F::Unit::store_run(region, 0, after, &[]);
        }
    }
}

/// Rings whose CP writes its read pointer back to DMA memory ([`WritebackRptr`]).
impl<B: Borrow<DmaRegion>, W: Borrow<DmaRegion>, F: WritebackFamily>
    CommandRing<B, WritebackRptr<W, F>, F>
{
    /// A ring of family `F` over all of `buffer` (a power of two of `F::MIN_UNITS..=
    /// F::MAX_UNITS` units the family's base register can hold), whose read pointer the CP
    /// writes back to byte `writeback_offset` of `writeback`: [`with_read_pointer`] with a
    /// [`WritebackRptr`]. The buffer is checked first, then the write-back dword, which is
    /// zeroed.
    ///
    /// [`with_read_pointer`]: CommandRing::with_read_pointer
    pub fn with_family(
        buffer: B,
        writeback: W,
        writeback_offset: usize,
    ) -> Result<Self, RingConfigError> {
        let (units, base) = check_buffer::<F>(buffer.borrow())?;
        let read_pointer = WritebackRptr::new(writeback, writeback_offset)?;
        Ok(Self::from_parts(buffer, read_pointer, units, base))
    }

    /// The write-back address as the family's write-back register(s) hold it.
    pub fn writeback_registers(&self) -> F::Writeback {
        self.read_pointer.registers()
    }

    /// The region holding the write-back dword, and the dword's byte offset in it.
    pub fn writeback(&self) -> (&DmaRegion, usize) {
        (self.read_pointer.region(), self.read_pointer.offset())
    }
}

/// Dword names for rings of dwords (PM4): the same as the `_units` accessors.
impl<B: Borrow<DmaRegion>, P: ReadPointer<F>, F: CommandProcessorRing<Unit = u32>>
    CommandRing<B, P, F>
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

impl<B: Borrow<DmaRegion>, P: ReadPointer<F>, F: CommandProcessorRing> CommandSink<F::Unit>
    for CommandRing<B, P, F>
{
    #[inline]
    fn reserve(&mut self, units: usize) -> Result<(), NoSpace> {
        CommandRing::reserve(self, units)
    }

    #[inline(always)]
    fn write_packet(&mut self, header: F::Unit, body: &[F::Unit]) -> Result<(), NoSpace> {
        self.write_parts(&[header], body)
    }

    /// Reserve once, store the run (wrap handled once), no per-unit grant checks. Always
    /// inlined: at the writers' call sites the lengths are constants, so the run becomes
    /// plain stores.
    #[inline(always)]
    fn write_parts(&mut self, prefix: &[F::Unit], body: &[F::Unit]) -> Result<(), NoSpace> {
        self.make_room(prefix.len() + body.len())?;
        self.store_at_head(prefix, body);
        // As `reserve` and the pushes would: no grant left over.
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

    #[inline]
    fn push_slice(&mut self, units: &[F::Unit]) -> Result<(), NoSpace> {
        if units.len() > self.granted {
            return Err(NoSpace { needed: units.len(), free: self.granted });
        }
        self.store_at_head(units, &[]);
        self.granted -= units.len();
        Ok(())
    }
}
