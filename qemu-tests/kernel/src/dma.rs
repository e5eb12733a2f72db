//! DMA memory for the test kernel: an identity-mapped pool (bus address = physical address =
//! CPU address; QEMU has no IOMMU here) handed out first-fit from a sorted free list.
//!
//! Allocations are rounded to [`GRANULE`] bytes (a cache line) and zeroed. The free list is a
//! fixed array so allocating DMA memory never touches the heap.

use crate::arch::irq::without_interrupts;
use baregpu_hal::dma::{BusAddress, DmaAllocator, DmaError, DmaLayout, DmaRegion};
use core::ptr::NonNull;
use spin::Mutex;

/// Allocation granule and minimum alignment.
pub const GRANULE: u64 = 64;
/// Free-list capacity: fragments beyond this are leaked (and logged) on free.
const MAX_FREE_RANGES: usize = 64;

#[derive(Debug, Clone, Copy)]
struct Range {
    start: u64,
    end: u64,
}

struct FreeList {
    ranges: [Range; MAX_FREE_RANGES],
    len: usize,
}

impl FreeList {
    fn insert_at(&mut self, index: usize, range: Range) -> bool {
        if self.len == MAX_FREE_RANGES {
            return false;
        }
        self.ranges.copy_within(index..self.len, index + 1);
        self.ranges[index] = range;
        self.len += 1;
        true
    }

    fn remove_at(&mut self, index: usize) {
        self.ranges.copy_within(index + 1..self.len, index);
        self.len -= 1;
    }

    /// First fit: carve `[start, start + size)` out of the first range that holds it aligned.
    fn take(&mut self, size: u64, align: u64, max_address: u64) -> Option<u64> {
        for i in 0..self.len {
            let r = self.ranges[i];
            let start = r.start.checked_next_multiple_of(align)?;
            let end = start.checked_add(size)?;
            if end > r.end || end - 1 > max_address {
                continue;
            }
            // Keep the head and tail fragments; the head replaces `r`, the tail follows it.
            let head = Range { start: r.start, end: start };
            let tail = Range { start: end, end: r.end };
            match (head.start < head.end, tail.start < tail.end) {
                (false, false) => self.remove_at(i),
                (true, false) => self.ranges[i] = head,
                (false, true) => self.ranges[i] = tail,
                (true, true) => {
                    if !self.insert_at(i + 1, tail) {
                        continue; // no slot for the split: try elsewhere
                    }
                    self.ranges[i] = head;
                }
            }
            return Some(start);
        }
        None
    }

    /// Give a range back, merging with its neighbours. False if the list is full.
    fn give(&mut self, range: Range) -> bool {
        let i = self.ranges[..self.len].partition_point(|r| r.start < range.start);
        let merges_prev = i > 0 && self.ranges[i - 1].end == range.start;
        let merges_next = i < self.len && self.ranges[i].start == range.end;
        match (merges_prev, merges_next) {
            (true, true) => {
                self.ranges[i - 1].end = self.ranges[i].end;
                self.remove_at(i);
                true
            }
            (true, false) => {
                self.ranges[i - 1].end = range.end;
                true
            }
            (false, true) => {
                self.ranges[i].start = range.start;
                true
            }
            (false, false) => self.insert_at(i, range),
        }
    }

    fn free_bytes(&self) -> u64 {
        self.ranges[..self.len].iter().map(|r| r.end - r.start).sum()
    }
}

/// The identity-mapped DMA pool.
pub struct IdentityDma {
    free: Mutex<FreeList>,
    pool: Range,
}

impl IdentityDma {
    /// A pool over `size` bytes of RAM at physical address `start`.
    ///
    /// # Safety
    /// The range must be RAM, identity mapped and writable, used by nothing else for the
    /// pool's lifetime, and reachable by devices at the same addresses.
    pub unsafe fn new(start: u64, size: u64) -> IdentityDma {
        let pool = Range { start, end: start + size };
        let mut list = FreeList { ranges: [Range { start: 0, end: 0 }; MAX_FREE_RANGES], len: 0 };
        list.insert_at(0, pool);
        IdentityDma { free: Mutex::new(list), pool }
    }

    /// Bytes not allocated.
    pub fn free_bytes(&self) -> u64 {
        without_interrupts(|| self.free.lock().free_bytes())
    }
}

impl DmaAllocator for IdentityDma {
    fn allocate(&self, layout: DmaLayout) -> Result<DmaRegion, DmaError> {
        if layout.size == 0 {
            return Err(DmaError::ZeroSize);
        }
        if !layout.align.is_power_of_two() {
            return Err(DmaError::BadAlignment(layout.align));
        }
        let size = (layout.size as u64).next_multiple_of(GRANULE);
        let align = (layout.align as u64).max(GRANULE);
        let start = without_interrupts(|| self.free.lock().take(size, align, layout.max_address))
            .ok_or(DmaError::OutOfMemory)?;
        let cpu = NonNull::new(start as usize as *mut u8).ok_or(DmaError::OutOfMemory)?;
        // SAFETY: `start..start + size` was just removed from the free list of a pool that the
        // constructor's contract makes exclusive, mapped RAM; identity mapping makes the CPU
        // address the bus address; GRANULE alignment covers the 4-byte requirement.
        let region = unsafe { DmaRegion::from_raw_parts(cpu, BusAddress(start), size as usize) };
        region.zero();
        Ok(region)
    }

    fn deallocate(&self, region: DmaRegion) {
        let start = region.bus_address().0;
        let range = Range { start, end: start + region.size() as u64 };
        if range.start < self.pool.start || range.end > self.pool.end {
            defmt::error!("dma: freeing {=u64:#x} which is not from this pool", start);
            return;
        }
        if !without_interrupts(|| self.free.lock().give(range)) {
            defmt::warn!("dma: free list full, leaking {=u64:#x}+{=u64}", start, range.end - start);
        }
    }
}
