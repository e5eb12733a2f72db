//! Register windows (PCI BARs) reached through the bootloader's physical-memory map, remapped
//! uncached as [`MmioRegion`] requires.

use baregpu_hal::MmioRegion;
use core::ptr::NonNull;
use x86_64::VirtAddr;
use x86_64::registers::control::Cr3;
use x86_64::structures::paging::mapper::MapperFlush;
use x86_64::structures::paging::{
    Mapper, OffsetPageTable, Page, PageTable, PageTableFlags, Size2MiB,
};

/// Why a BAR cannot be mapped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapError {
    /// The BAR ends above 4 GiB, past what the bootloader maps of physical memory here.
    Above4G(u64),
    /// Its pages are not mapped as the bootloader's 2 MiB physical-memory pages.
    NotMapped(u64),
}

/// `size` bytes of registers at physical `phys`, through the physical-memory map at `offset`.
/// The 2 MiB pages covering them become uncached (PCD, PWT); the bootloader maps the first
/// 4 GiB with write-back pages, which only the MTRRs would otherwise make uncached for MMIO.
pub fn map(phys: u64, size: u64, offset: u64) -> Result<MmioRegion, MapError> {
    let end = phys.checked_add(size).filter(|&e| e <= 1 << 32).ok_or(MapError::Above4G(phys))?;
    // SAFETY: CR3 holds the active level-4 table, reached through the physical-memory map at
    // `offset`; this single-threaded kernel creates no other reference to the tables.
    let mut tables = unsafe {
        let level4 = (offset + Cr3::read().0.start_address().as_u64()) as *mut PageTable;
        OffsetPageTable::new(&mut *level4, VirtAddr::new(offset))
    };
    let first = Page::<Size2MiB>::containing_address(VirtAddr::new(offset + phys));
    let last = Page::<Size2MiB>::containing_address(VirtAddr::new(offset + end - 1));
    let flags = PageTableFlags::PRESENT
        | PageTableFlags::WRITABLE
        | PageTableFlags::NO_EXECUTE
        | PageTableFlags::NO_CACHE
        | PageTableFlags::WRITE_THROUGH;
    for page in Page::range_inclusive(first, last) {
        // SAFETY: the pages map PCI memory (a BAR), never RAM the kernel uses as normal memory;
        // only the cache attributes change.
        let flush: MapperFlush<Size2MiB> =
            unsafe { tables.update_flags(page, flags) }.map_err(|_| MapError::NotMapped(phys))?;
        flush.flush();
    }
    let base = NonNull::new((offset + phys) as *mut u32).ok_or(MapError::NotMapped(phys))?;
    // SAFETY: `base..base + size` is the BAR, mapped uncached above for the kernel's lifetime
    // and used only through this region.
    Ok(unsafe { MmioRegion::new(base, size as usize) })
}
