//! A `Sync` bump allocator over one physically contiguous memory region.
//!
//! Drivers allocate their rings, write-back pages and buffers at initialisation and keep them;
//! they give memory back on error paths (in reverse order) and on teardown. [`BumpDma`] hands
//! memory out front to back and takes back only the most recent allocation, which covers
//! both, with one atomic word of state: no lock, so it is `Sync` and usable from an interrupt
//! handler or another CPU while a driver that borrows it sits in a `static` behind a lock.

use baregpu_hal::dma::{BusAddress, DmaAllocator, DmaError, DmaLayout, DmaRegion};
use core::fmt;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicU64, Ordering};

/// Smallest alignment handed out: a cache line, so two allocations never share one (CPU
/// writes to one must not be able to write back stale bytes of the other).
pub const MIN_ALIGN: usize = 64;

/// Largest pool: the allocator keeps offsets in 32 bits.
pub const MAX_POOL_BYTES: usize = u32::MAX as usize;

/// "No allocation to roll back" in the state's high half (never a valid start offset).
const NO_LAST: u64 = u32::MAX as u64;

/// Why a pool cannot be created.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum PoolError {
    /// The pool is larger than [`MAX_POOL_BYTES`] or ends past the top of the bus space.
    TooLarge {
        /// Bytes asked for.
        size: usize,
    },
    /// The CPU address or the bus address is not aligned to [`MIN_ALIGN`].
    Misaligned,
    /// A zero-byte pool.
    Empty,
}

impl fmt::Display for PoolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PoolError::TooLarge { size } => {
                write!(f, "DMA pool of {size} bytes is too large or passes the top of the bus")
            }
            PoolError::Misaligned => write!(f, "DMA pool is not aligned to {MIN_ALIGN} bytes"),
            PoolError::Empty => write!(f, "DMA pool is empty"),
        }
    }
}

impl core::error::Error for PoolError {}

/// A bump allocator over `size` bytes of RAM that the CPU reaches at `cpu` and devices at `bus`.
///
/// Allocations are aligned to at least [`MIN_ALIGN`], zeroed, and never overlap.
/// [`deallocate`](DmaAllocator::deallocate) takes back the most recent allocation (so a
/// failed initialisation that frees in reverse returns everything); anything else stays
/// allocated until [`reset`](Self::reset).
pub struct BumpDma {
    cpu: NonNull<u8>,
    bus: u64,
    size: u64,
    /// Low half: offset of the first free byte. High half: start offset of the most recent
    /// allocation, or [`NO_LAST`]. One word, so allocate and roll back are single CAS steps.
    state: AtomicU64,
}

// SAFETY: the pool's memory is owned by the allocator (the constructor's contract) and handed
// out in disjoint regions; all shared state is the one atomic word.
unsafe impl Send for BumpDma {}
// SAFETY: as above: `allocate`/`deallocate` update the state with compare-and-swap only.
unsafe impl Sync for BumpDma {}

impl fmt::Debug for BumpDma {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BumpDma")
            .field("bus", &BusAddress(self.bus))
            .field("size", &self.size)
            .field("used", &self.used())
            .finish()
    }
}

const fn pack(next: u64, last: u64) -> u64 {
    (last << 32) | next
}

const fn next_of(state: u64) -> u64 {
    state & 0xFFFF_FFFF
}

const fn last_of(state: u64) -> u64 {
    state >> 32
}

impl BumpDma {
    /// A pool over `size` bytes at CPU address `cpu`, bus address `bus`.
    ///
    /// # Safety
    /// `cpu..cpu + size` must be RAM, mapped readable and writable for as long as the
    /// allocator or any region it handed out lives, used by nothing else, and reachable by
    /// devices at `bus..bus + size` (the same bytes), coherently with the CPU's caches (x86
    /// DMA is coherent; elsewhere map it uncached or keep it coherent).
    pub unsafe fn new(
        cpu: NonNull<u8>,
        bus: BusAddress,
        size: usize,
    ) -> Result<BumpDma, PoolError> {
        if size == 0 {
            return Err(PoolError::Empty);
        }
        if size > MAX_POOL_BYTES || bus.0.checked_add(size as u64).is_none() {
            return Err(PoolError::TooLarge { size });
        }
        if !(cpu.as_ptr() as usize).is_multiple_of(MIN_ALIGN)
            || !bus.0.is_multiple_of(MIN_ALIGN as u64)
        {
            return Err(PoolError::Misaligned);
        }
        Ok(BumpDma { cpu, bus: bus.0, size: size as u64, state: AtomicU64::new(pack(0, NO_LAST)) })
    }

    /// Bus address range of the pool: `[start, end)`.
    pub fn bus_range(&self) -> (BusAddress, BusAddress) {
        (BusAddress(self.bus), BusAddress(self.bus + self.size))
    }

    /// Bytes handed out (including alignment padding).
    pub fn used(&self) -> usize {
        next_of(self.state.load(Ordering::Acquire)) as usize
    }

    /// Bytes still free (before alignment).
    pub fn free(&self) -> usize {
        (self.size as usize).saturating_sub(self.used())
    }

    /// Take back everything. Exclusive access (`&mut`) proves no region borrowed from `&self`
    /// is alive; regions the caller kept as raw [`DmaRegion`]s must no longer be used by the
    /// CPU or any device.
    pub fn reset(&mut self) {
        *self.state.get_mut() = pack(0, NO_LAST);
    }

    /// The start offset and end offset of `layout` placed after `next`, if it fits.
    fn place(&self, next: u64, layout: &DmaLayout) -> Option<(u64, u64)> {
        let align = (layout.align.max(MIN_ALIGN)) as u64;
        let start = (self.bus + next).checked_next_multiple_of(align)? - self.bus;
        let end = start.checked_add(layout.size as u64)?;
        let last_byte = self.bus + end - 1;
        (end <= self.size && last_byte <= layout.max_address).then_some((start, end))
    }
}

impl DmaAllocator for BumpDma {
    fn allocate(&self, layout: DmaLayout) -> Result<DmaRegion, DmaError> {
        if layout.size == 0 {
            return Err(DmaError::ZeroSize);
        }
        if !layout.align.is_power_of_two() {
            return Err(DmaError::BadAlignment(layout.align));
        }
        let mut state = self.state.load(Ordering::Acquire);
        let start = loop {
            let (start, end) = self.place(next_of(state), &layout).ok_or(DmaError::OutOfMemory)?;
            match self.state.compare_exchange_weak(
                state,
                pack(end, start),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => break start,
                Err(now) => state = now,
            }
        };
        // SAFETY: `start + size <= self.size` (checked by `place`), so the pointer stays in the
        // pool the constructor's contract hands to this allocator.
        let cpu = unsafe { self.cpu.add(start as usize) };
        // SAFETY: `[start, start + size)` was claimed by the compare-and-swap above and by no
        // other allocation; it is RAM mapped at `cpu` and seen by devices at `bus + start`
        // (constructor's contract), aligned to at least MIN_ALIGN.
        let region =
            unsafe { DmaRegion::from_raw_parts(cpu, BusAddress(self.bus + start), layout.size) };
        region.zero();
        Ok(region)
    }

    fn deallocate(&self, region: DmaRegion) {
        let Some(start) = region.bus_address().0.checked_sub(self.bus) else { return };
        let mut state = self.state.load(Ordering::Acquire);
        // Only the most recent allocation rolls back; its start is recorded in the state.
        while last_of(state) == start {
            match self.state.compare_exchange_weak(
                state,
                pack(start, NO_LAST),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return,
                Err(now) => state = now,
            }
        }
    }
}
