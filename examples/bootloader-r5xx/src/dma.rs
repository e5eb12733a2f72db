//! A bump [`DmaAllocator`] over one usable region of the bootloader's memory map.
//!
//! Bus address = physical address (x86 without an IOMMU, as QEMU's q35 here); the CPU reaches
//! the same bytes through the bootloader's map of all physical memory at
//! `physical_memory_offset`. x86 DMA is cache-coherent, so write-back mappings need no cache
//! maintenance (see the porting guide). Memory is handed out once: `deallocate` gives back only
//! the most recent allocation (enough for the driver's error paths, which free in reverse).

use baregpu_hal::dma::{BusAddress, DmaAllocator, DmaError, DmaLayout, DmaRegion};
use bootloader_api::info::{MemoryRegionKind, MemoryRegions};
use core::cell::Cell;
use core::ptr::NonNull;

/// Bytes taken from the memory map for DMA (the driver needs a 64 KiB ring and a few pages).
pub const POOL_BYTES: u64 = 1 << 20;
const PAGE: u64 = 4096;

/// The pool: physical `[start, end)`, mapped at `start + offset`.
pub struct BumpDma {
    start: u64,
    end: u64,
    offset: u64,
    next: Cell<u64>,
    /// Start of the most recent allocation (what `deallocate` can roll back to).
    last: Cell<Option<u64>>,
}

impl BumpDma {
    /// [`POOL_BYTES`] from the first usable region (below 4 GiB, for 32-bit masters) that
    /// holds them; `None` if none does.
    pub fn from_memory_map(regions: &MemoryRegions, offset: u64) -> Option<BumpDma> {
        regions.iter().find_map(|r| {
            let start = r.start.checked_next_multiple_of(PAGE)?.max(PAGE);
            let end = start.checked_add(POOL_BYTES)?;
            let fits = r.kind == MemoryRegionKind::Usable && end <= r.end && end <= 1 << 32;
            fits.then(|| BumpDma {
                start,
                end,
                offset,
                next: Cell::new(start),
                last: Cell::new(None),
            })
        })
    }

    /// Physical range of the pool.
    pub fn range(&self) -> (u64, u64) {
        (self.start, self.end)
    }
}

impl DmaAllocator for BumpDma {
    fn allocate(&self, layout: DmaLayout) -> Result<DmaRegion, DmaError> {
        let align = layout.align.max(64) as u64;
        let start = self.next.get().checked_next_multiple_of(align).ok_or(DmaError::OutOfMemory)?;
        let end = start.checked_add(layout.size as u64).ok_or(DmaError::OutOfMemory)?;
        if end > self.end || end - 1 > layout.max_address {
            return Err(DmaError::OutOfMemory);
        }
        let cpu = NonNull::new((start + self.offset) as *mut u8).ok_or(DmaError::OutOfMemory)?;
        self.next.set(end);
        self.last.set(Some(start));
        // SAFETY: `[start, end)` lies in a usable RAM region of the bootloader's map, inside the
        // pool no one else uses, handed out once; the physical-memory map makes it readable and
        // writable at `start + offset` for as long as the kernel runs.
        Ok(unsafe { DmaRegion::from_raw_parts(cpu, BusAddress(start), layout.size) })
    }

    fn deallocate(&self, region: DmaRegion) {
        if self.last.get() == Some(region.bus_address().0) {
            self.next.set(region.bus_address().0);
            self.last.set(None);
        }
    }
}
