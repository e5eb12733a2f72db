//! The CP ring buffer (amd-r5xx-acceleration §5.4): a circular buffer of dwords in DMA memory
//! the host writes and the Command Processor reads.
//!
//! # Pointers and free space
//!
//! Both pointers are dword indices into the ring (CP_RB_RPTR / CP_RB_WPTR bits 22:0, §11.1).
//! "Equal pointers mean empty", so "it is the Host's responsibility to ensure that there is at
//! least one free location in the buffer" (§5.4): [`CommandRing::free_dwords`] is
//! `size - 1 - used` and at most `size - 1` dwords are ever outstanding.
//!
//! The host's read pointer is the dword the CP writes back by bus mastering to CP_RB_RPTR_ADDR
//! every `RB_BLKSZ` quadwords and when it runs empty (§5.4). The ring caches it and re-reads
//! the writeback dword (normal DMA memory, never an MMIO register) only when the cached free
//! space is too small for a request, as §5.4 recommends ("check them once, calculate an amount
//! of free space, and then decrement a local copy"). A written-back value outside the window the
//! CP may legally have reached (between the cached read pointer and the last committed write
//! pointer) is ignored, so a stale or corrupted writeback can never make the ring overwrite
//! dwords the CP has not fetched yet.
//!
//! # Wrap-around
//!
//! §5.4: "Once the data placement hits the end, it starts from the beginning again", and the CP
//! consumes "in a manner similar to how they were placed": the read pointer is a dword index
//! that wraps modulo the ring size independently of packet boundaries. Packets are therefore
//! written dword by dword modulo the size and may straddle the end (the Linux radeon driver does
//! the same); no padding to the end is needed.
//!
//! # Doorbell
//!
//! The ring does not own registers. [`CommandRing::commit`] issues [`dma_wmb`] and returns the
//! typed `CP_RB_WPTR` value the driver writes (`io.write(ring.commit())`), so many packets share
//! one doorbell; [`CommandRing::kick`] does both for a driver that passes its `RegisterIo`.
//! [`CommandRing::commits`] counts doorbells for tests and benchmarks.
//!
//! # Setup values
//!
//! [`CommandRing::rb_bufsz`], [`cp_rb_base`](CommandRing::cp_rb_base) and
//! [`cp_rb_rptr_addr`](CommandRing::cp_rb_rptr_addr) give the CP_RB_CNTL.RB_BUFSZ, CP_RB_BASE
//! and CP_RB_RPTR_ADDR values for the bring-up sequence (§5.8, §11.1). RB_BUFSZ is log2 of the
//! ring size in quadwords: "a value of 2 to 22 will give a ring buffer 2^(RB_BUFSZ+1)" dwords,
//! so rings of 8 to 2^23 dwords (32 bytes to 32 MiB) are accepted.
//!
//! Nothing here allocates: the crate is `no_std` without `alloc`.

use core::borrow::Borrow;
use core::fmt;
use core::time::Duration;

use baregpu_hal::barrier::{dma_rmb, dma_wmb};
use baregpu_hal::dma::{BusAddress, DmaRegion};
use baregpu_hal::time::{Clock, TimedOut, poll_until};
use baregpu_hal::{RegisterIo, RegisterIoExt};
use baregpu_regs::r5xx::cp::{CP_RB_BASE, CP_RB_RPTR_ADDR, CP_RB_WPTR};

use crate::pm4::{CommandSink, NoSpace, PadError, Pm4Writer, TYPE2, pad_count};

/// The ring has no room for a request; nothing was written. `free` is the free space after
/// re-reading the writeback read pointer.
pub type RingFull = NoSpace;

/// Smallest ring: RB_BUFSZ values 0 and 1 "are clamped to an 8 DWORD ring buffer" (§11.1).
pub const MIN_RING_DWORDS: usize = 8;
/// Largest ring: RB_BUFSZ 22 gives 2^23 dwords; larger values clamp to 22 (§11.1), and the
/// pointers are 23 bits (CP_RB_RPTR/CP_RB_WPTR 22:0).
pub const MAX_RING_DWORDS: usize = 1 << CP_RB_WPTR::RB_WPTR.width;
/// The submission alignment Linux uses (16 dwords of type-2 padding; hardware-facts.md).
pub const SUBMIT_ALIGN: usize = 16;

/// The size in dwords of a ring over `bytes` of memory: a power of two of
/// [`MIN_RING_DWORDS`]..=[`MAX_RING_DWORDS`] dwords (§11.1 `CP_RB_CNTL.RB_BUFSZ`), else
/// [`RingConfigError::BadSize`]. [`CommandRing::new`] applies it; drivers check a configured
/// size with it before allocating.
pub const fn ring_dwords(bytes: usize) -> Result<usize, RingConfigError> {
    let dwords = bytes / 4;
    if bytes.is_multiple_of(4)
        && dwords.is_power_of_two()
        && dwords >= MIN_RING_DWORDS
        && dwords <= MAX_RING_DWORDS
    {
        Ok(dwords)
    } else {
        Err(RingConfigError::BadSize { bytes })
    }
}

/// A ring or writeback location the CP cannot use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum RingConfigError {
    /// The ring is not a power of two between [`MIN_RING_DWORDS`] and [`MAX_RING_DWORDS`]
    /// dwords (`bytes` is the region size).
    BadSize {
        /// Region size in bytes.
        bytes: usize,
    },
    /// The ring does not lie dword-aligned below 4 GiB (CP_RB_BASE holds address bits 31:2).
    BadBase {
        /// The ring's bus address.
        address: BusAddress,
    },
    /// The read-pointer writeback dword is outside its region, misaligned, or not reachable by
    /// CP_RB_RPTR_ADDR (address bits 31:2).
    BadWriteback {
        /// Byte offset requested in the writeback region.
        offset: usize,
        /// Its bus address; `None` when region address + offset passes the top of the bus
        /// space.
        address: Option<BusAddress>,
    },
}

impl fmt::Display for RingConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RingConfigError::BadSize { bytes } => write!(
                f,
                "a ring of {bytes} bytes (must be a power of two of {MIN_RING_DWORDS}..={MAX_RING_DWORDS} dwords)"
            ),
            RingConfigError::BadBase { address } => {
                write!(f, "ring at {address} is not dword-aligned below 4 GiB")
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

/// A blocking reservation failed; nothing was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum WaitError {
    /// Waiting cannot help: even with every committed dword consumed, at most `max` dwords
    /// would be free (the ring is too small, or uncommitted dwords fill it: commit first).
    TooLarge {
        /// Dwords requested.
        needed: usize,
        /// The most that could ever be free without a commit.
        max: usize,
    },
    /// The CP did not consume enough before the deadline.
    TimedOut {
        /// Dwords requested.
        needed: usize,
        /// Free dwords at the last poll.
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

/// A CP ring buffer over DMA memory, with the host's copy of the read pointer in a second
/// DMA location (see the module documentation).
///
/// `B` and `W` are the ring and writeback storage: an owned [`DmaRegion`] or a borrow of one
/// (`&DmaRegion`), so the writeback dword can share a page with, e.g., the scratch writeback
/// area (§5.9).
#[derive(Debug)]
pub struct CommandRing<B = DmaRegion, W = DmaRegion> {
    buffer: B,
    writeback: W,
    writeback_offset: usize,
    /// The ring's base and writeback address as the CP registers hold them, checked by their
    /// bus-address setters when the ring was made.
    cp_rb_base: CP_RB_BASE,
    cp_rb_rptr_addr: CP_RB_RPTR_ADDR,
    /// Size in dwords minus one.
    mask: u32,
    /// Next dword the host writes.
    head: u32,
    /// Last write pointer handed to the CP.
    committed: u32,
    /// Cached read pointer (last valid writeback value).
    rptr: u32,
    /// Pushes left in the current grant.
    granted: usize,
    commits: u64,
    rptr_reads: u64,
    partial_reads: u64,
}

impl<B: Borrow<DmaRegion>, W: Borrow<DmaRegion>> CommandRing<B, W> {
    /// A ring over all of `buffer` (a power of two of 8..=2^23 dwords, dword-aligned below
    /// 4 GiB), whose read pointer the CP writes back to byte `writeback_offset` of `writeback`.
    ///
    /// Both pointers start at 0, matching a CP whose CP_RB_WPTR (and RPTR) were just set to 0
    /// (§5.8); the writeback dword is zeroed.
    ///
    /// The ring owns `buffer` and `writeback`: pass [`DmaBuffer`](baregpu_hal::dma::DmaBuffer)s
    /// and both are given back to their allocator when construction fails or the ring is
    /// dropped.
    pub fn new(buffer: B, writeback: W, writeback_offset: usize) -> Result<Self, RingConfigError> {
        let region = buffer.borrow();
        let bytes = region.size();
        let dwords = ring_dwords(bytes)?;
        // Checked sums: a region near the top of the bus space must be refused, not wrapped
        // into a small CP_RB_BASE / CP_RB_RPTR_ADDR.
        let base = region.bus_address();
        // The base register checks alignment and reach; the whole ring must end below 4 GiB too.
        let cp_rb_base = CP_RB_BASE::RESET
            .try_with_rb_base(base)
            .ok()
            .filter(|_| base.fits_below(bytes as u64, 1 << 32))
            .ok_or(RingConfigError::BadBase { address: base })?;
        let wb = writeback.borrow();
        let wb_address = wb.bus_address().checked_offset(writeback_offset as u64);
        let bad_wb =
            RingConfigError::BadWriteback { offset: writeback_offset, address: wb_address };
        let Some(wb_address) = wb_address else { return Err(bad_wb) };
        let cp_rb_rptr_addr =
            CP_RB_RPTR_ADDR::RESET.try_with_rb_rptr_addr(wb_address).map_err(|_| bad_wb)?;
        wb.write_u32(writeback_offset, 0).map_err(|_| bad_wb)?;
        Ok(CommandRing {
            buffer,
            writeback,
            writeback_offset,
            cp_rb_base,
            cp_rb_rptr_addr,
            mask: dwords as u32 - 1,
            head: 0,
            committed: 0,
            rptr: 0,
            granted: 0,
            commits: 0,
            rptr_reads: 0,
            partial_reads: 0,
        })
    }

    /// Ring size in dwords.
    pub fn size_dwords(&self) -> usize {
        self.mask as usize + 1
    }

    /// Most dwords that can be outstanding at once (size - 1, §5.4).
    pub fn capacity(&self) -> usize {
        self.mask as usize
    }

    /// CP_RB_CNTL.RB_BUFSZ for this ring: log2 of its size in quadwords (size = 2^(RB_BUFSZ+1)
    /// dwords, §11.1).
    pub fn rb_bufsz(&self) -> u8 {
        (self.size_dwords().trailing_zeros() - 1) as u8
    }

    /// CP_RB_BASE for this ring (address bits 31:2).
    pub fn cp_rb_base(&self) -> CP_RB_BASE {
        self.cp_rb_base
    }

    /// CP_RB_RPTR_ADDR for the writeback dword (address bits 31:2, no swap).
    pub fn cp_rb_rptr_addr(&self) -> CP_RB_RPTR_ADDR {
        self.cp_rb_rptr_addr
    }

    /// The ring memory.
    pub fn buffer(&self) -> &DmaRegion {
        self.buffer.borrow()
    }

    /// The region holding the writeback dword, and the dword's byte offset in it.
    pub fn writeback(&self) -> (&DmaRegion, usize) {
        (self.writeback.borrow(), self.writeback_offset)
    }

    /// Give the storage back.
    pub fn into_parts(self) -> (B, W) {
        (self.buffer, self.writeback)
    }

    /// Next dword index the host writes (the WPTR the next [`commit`](Self::commit) returns).
    pub fn head(&self) -> u32 {
        self.head
    }

    /// The last write pointer returned by [`commit`](Self::commit).
    pub fn committed(&self) -> u32 {
        self.committed
    }

    /// The cached read pointer.
    pub fn cached_rptr(&self) -> u32 {
        self.rptr
    }

    /// Dwords written since the last commit.
    pub fn pending_dwords(&self) -> usize {
        (self.head.wrapping_sub(self.committed) & self.mask) as usize
    }

    /// Free dwords by the cached read pointer (no memory access): `size - 1 - used`.
    pub fn free_dwords(&self) -> usize {
        self.capacity() - (self.head.wrapping_sub(self.rptr) & self.mask) as usize
    }

    /// Number of commits (doorbells) so far.
    pub fn commits(&self) -> u64 {
        self.commits
    }

    /// Number of times the writeback read pointer was read.
    pub fn rptr_reads(&self) -> u64 {
        self.rptr_reads
    }

    /// Reads of the writeback read pointer that found the CP part-way: it had moved past the
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
        // The offset was checked in `new`, so the read cannot fail; a failure reads as "no
        // progress".
        let raw = self.writeback.borrow().read_u32(self.writeback_offset).unwrap_or(self.rptr);
        // Order the pointer read before anything that depends on it (§5.4 snooped writeback).
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

    /// Grant room for the next `dwords` pushes, re-reading the writeback read pointer only if
    /// the cached free space is too small. [`RingFull`] (with the free space after the re-read)
    /// when there is no room; ring memory is not touched.
    #[inline]
    pub fn reserve(&mut self, dwords: usize) -> Result<(), RingFull> {
        if dwords > self.free_dwords() {
            return self.reserve_after_refresh(dwords);
        }
        self.granted = dwords;
        Ok(())
    }

    #[cold]
    fn reserve_after_refresh(&mut self, dwords: usize) -> Result<(), RingFull> {
        // A bad writeback value keeps the cached pointer: treated as no progress.
        let _ = self.refresh_rptr();
        let free = self.free_dwords();
        if dwords > free {
            return Err(RingFull { needed: dwords, free });
        }
        self.granted = dwords;
        Ok(())
    }

    /// [`reserve`](Self::reserve), polling the writeback read pointer until the CP has consumed
    /// enough or `timeout` passes on `clock` (back-pressure: unconsumed dwords are never
    /// overwritten). Fails at once with [`WaitError::TooLarge`] when waiting cannot help.
    pub fn reserve_blocking(
        &mut self,
        dwords: usize,
        clock: &impl Clock,
        timeout: Duration,
    ) -> Result<(), WaitError> {
        let max = self.capacity() - self.pending_dwords();
        if dwords > max {
            return Err(WaitError::TooLarge { needed: dwords, max });
        }
        if self.reserve(dwords).is_ok() {
            return Ok(());
        }
        let polled = poll_until(clock, timeout, || {
            let _ = self.refresh_rptr();
            (self.free_dwords() >= dwords).then_some(())
        });
        match polled {
            Ok(()) => {
                self.granted = dwords;
                Ok(())
            }
            Err(waited) => {
                Err(WaitError::TimedOut { needed: dwords, free: self.free_dwords(), waited })
            }
        }
    }

    /// A PM4 writer appending to this ring.
    pub fn writer(&mut self) -> Pm4Writer<&mut Self> {
        Pm4Writer::new(self)
    }

    /// Type-2 fillers (§6.1.3) until the write pointer is a multiple of `alignment` dwords (a
    /// power of two; Linux uses [`SUBMIT_ALIGN`]); all or nothing. Returns the number of
    /// fillers. An alignment above the ring size pads to the end of the ring (index 0 is the
    /// only aligned index there).
    pub fn pad_to(&mut self, alignment: usize) -> Result<usize, PadError> {
        pad_count(0, alignment)?;
        let n = pad_count(self.head as usize, alignment.min(self.size_dwords()))?;
        self.reserve(n)?;
        for _ in 0..n {
            self.push(TYPE2)?;
        }
        Ok(n)
    }

    /// Publish everything written: [`dma_wmb`], then the CP_RB_WPTR value for the driver to
    /// write (§5.4: "informs the Graphics Controller of any changes to the Write Pointer by
    /// writing directly to the Write Pointer register"). Counts one doorbell.
    pub fn commit(&mut self) -> CP_RB_WPTR {
        dma_wmb();
        self.committed = self.head;
        self.commits += 1;
        CP_RB_WPTR::RESET.with_rb_wptr(self.head)
    }

    /// [`commit`](Self::commit) and write the result to CP_RB_WPTR through `io`.
    pub fn kick(&mut self, io: &impl RegisterIo) {
        let wptr = self.commit();
        io.write(wptr);
    }

    /// Forget all contents after a CP soft reset (§5.8): both pointers back to 0 (the driver
    /// writes CP_RB_WPTR = 0), the writeback dword zeroed.
    pub fn reset(&mut self) {
        let _ = self.writeback.borrow().write_u32(self.writeback_offset, 0);
        self.head = 0;
        self.committed = 0;
        self.rptr = 0;
        self.granted = 0;
    }

    #[inline]
    fn write_at(&self, index: u32, dword: u32) {
        // `index <= mask` and the region is exactly `mask + 1` dwords: always in bounds.
        let _ = self.buffer.borrow().write_u32(index as usize * 4, dword);
    }
}

impl<B: Borrow<DmaRegion>, W: Borrow<DmaRegion>> CommandSink for CommandRing<B, W> {
    #[inline]
    fn reserve(&mut self, dwords: usize) -> Result<(), NoSpace> {
        CommandRing::reserve(self, dwords)
    }

    #[inline]
    fn write_packet(&mut self, header: u32, body: &[u32]) -> Result<(), NoSpace> {
        let n = 1 + body.len();
        CommandRing::reserve(self, n)?;
        let head = self.head as usize;
        if head + n <= self.size_dwords() {
            // Contiguous: in bounds because `head + n <= size` (region = size dwords).
            let region = self.buffer.borrow();
            let _ = region.write_u32(head * 4, header);
            let _ = region.write_slice((head + 1) * 4, body);
            self.head = ((head + n) & self.mask as usize) as u32;
        } else {
            // Straddles the end: dword by dword modulo the size (§5.4).
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
    fn push(&mut self, dword: u32) -> Result<(), NoSpace> {
        if self.granted == 0 {
            return Err(NoSpace { needed: 1, free: 0 });
        }
        self.write_at(self.head, dword);
        self.head = (self.head + 1) & self.mask;
        self.granted -= 1;
        Ok(())
    }

    fn push_slice(&mut self, dwords: &[u32]) -> Result<(), NoSpace> {
        if dwords.len() > self.granted {
            return Err(NoSpace { needed: dwords.len(), free: self.granted });
        }
        for &d in dwords {
            self.write_at(self.head, d);
            self.head = (self.head + 1) & self.mask;
        }
        self.granted -= dwords.len();
        Ok(())
    }
}
