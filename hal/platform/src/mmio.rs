//! Register windows (PCI BARs) as [`MmioRegion`]s.
//!
//! [`MmioRegion`] needs its memory mapped as device memory: uncached, not combined, not
//! speculatively read. How a kernel gets there depends on its paging:
//!
//! - x86_64 with all physical memory mapped at an offset (rust-osdev `bootloader`'s
//!   `physical_memory` mapping, or a kernel's own direct map): `map_uncached` (feature
//!   `x86_64`) sets PCD and PWT on the pages that cover the BAR. Without this, such maps are
//!   write-back and only the MTRRs keep MMIO uncached, which firmware does not promise for
//!   every BAR (a 64-bit BAR placed by the OS is outside them).
//! - aarch64: map the BAR with a MAIR attribute of Device-nGnRE (Arm ARM B2.7.2) in the
//!   kernel's own tables and pass the virtual address to [`MmioRegion::new`]; the hook is the
//!   kernel's page-table code, which this crate does not own.
//! - Identity-mapped kernels whose tables already mark the PCI window uncached (the test
//!   kernel in this repository maps 3-4 GiB so) call [`MmioRegion::new`] directly.
//!
//! [`MmioRegion`]: baregpu_hal::MmioRegion
//! [`MmioRegion::new`]: baregpu_hal::MmioRegion::new

#[cfg(all(feature = "x86_64", target_arch = "x86_64"))]
use baregpu_hal::MmioRegion;
use core::fmt;

/// Why a BAR could not be mapped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum MapError {
    /// A zero-sized window, or one that passes the top of the address space.
    BadRange {
        /// Physical start.
        phys: u64,
        /// Bytes.
        size: u64,
    },
    /// A page covering the window is not mapped.
    NotMapped {
        /// First physical address not mapped.
        phys: u64,
    },
    /// A page covering the window is a 1 GiB page: making it uncached would make the RAM it
    /// also covers uncached.
    HugePage {
        /// Physical address in that page.
        phys: u64,
    },
}

impl fmt::Display for MapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MapError::BadRange { phys, size } => {
                write!(f, "window of {size} bytes at {phys:#x} is empty or wraps")
            }
            MapError::NotMapped { phys } => write!(f, "physical address {phys:#x} is not mapped"),
            MapError::HugePage { phys } => {
                write!(f, "physical address {phys:#x} is mapped by a 1 GiB page")
            }
        }
    }
}

impl core::error::Error for MapError {}

/// `size` bytes of registers at physical address `phys`, reached through the map of all
/// physical memory at virtual `physical_memory_offset`, with the 4 KiB or 2 MiB pages covering
/// them made uncached (PCD and PWT set, TLB entries flushed on this CPU).
///
/// # Safety
/// - The active page tables (CR3) are reachable at `physical_memory_offset + physical
///   address`, and nothing else reads or changes them during the call (one CPU, or a lock).
/// - `phys..phys + size` is device memory (a BAR), not RAM; the pages covering it map nothing
///   the kernel uses as normal memory (a 2 MiB page shared with RAM would make that RAM
///   uncached: slow, but not unsound on x86).
/// - Other CPUs flush their TLBs before they use the returned region (it is uncached only on
///   this CPU until then).
/// - The window stays mapped for the region's lifetime and is used only through it.
#[cfg(all(feature = "x86_64", target_arch = "x86_64"))]
pub unsafe fn map_uncached(
    phys: u64,
    size: u64,
    physical_memory_offset: u64,
) -> Result<MmioRegion, MapError> {
    use core::ptr::NonNull;
    use x86_64::VirtAddr;
    use x86_64::registers::control::Cr3;
    use x86_64::structures::paging::mapper::{MappedFrame, TranslateResult};
    use x86_64::structures::paging::{
        Mapper, OffsetPageTable, Page, PageSize, PageTable, PageTableFlags, Size2MiB, Size4KiB,
        Translate,
    };

    let bad = MapError::BadRange { phys, size };
    let last = phys.checked_add(size).and_then(|end| end.checked_sub(1)).ok_or(bad)?;
    let first_virt = physical_memory_offset.checked_add(phys).ok_or(bad)?;
    let last_virt = physical_memory_offset.checked_add(last).ok_or(bad)?;
    let len = usize::try_from(size).map_err(|_| bad)?;
    if size == 0 || !phys.is_multiple_of(4) || VirtAddr::try_new(last_virt).is_err() {
        return Err(bad);
    }
    // SAFETY: CR3 holds the active level-4 table, reached through the physical-memory map
    // (caller's contract), which also guarantees no other reference to the tables exists.
    let mut tables = unsafe {
        let level4 =
            (physical_memory_offset + Cr3::read().0.start_address().as_u64()) as *mut PageTable;
        OffsetPageTable::new(&mut *level4, VirtAddr::new(physical_memory_offset))
    };
    let uncached = PageTableFlags::NO_CACHE | PageTableFlags::WRITE_THROUGH;
    let mut at = first_virt;
    while at <= last_virt {
        let virt = VirtAddr::new(at);
        let not_mapped = MapError::NotMapped { phys: at - physical_memory_offset };
        let (size_4k, flags) = match tables.translate(virt) {
            TranslateResult::Mapped { frame: MappedFrame::Size4KiB(_), flags, .. } => (true, flags),
            TranslateResult::Mapped { frame: MappedFrame::Size2MiB(_), flags, .. } => {
                (false, flags)
            }
            TranslateResult::Mapped { frame: MappedFrame::Size1GiB(_), .. } => {
                return Err(MapError::HugePage { phys: at - physical_memory_offset });
            }
            _ => return Err(not_mapped),
        };
        if !flags.contains(PageTableFlags::WRITABLE) {
            return Err(not_mapped);
        }
        let step = if size_4k {
            // SAFETY: the page maps the BAR (caller's contract); only its cache attributes
            // change.
            unsafe {
                tables.update_flags(Page::<Size4KiB>::containing_address(virt), flags | uncached)
            }
            .map_err(|_| not_mapped)?
            .flush();
            Size4KiB::SIZE - (at % Size4KiB::SIZE)
        } else {
            // SAFETY: as above.
            unsafe {
                tables.update_flags(Page::<Size2MiB>::containing_address(virt), flags | uncached)
            }
            .map_err(|_| not_mapped)?
            .flush();
            Size2MiB::SIZE - (at % Size2MiB::SIZE)
        };
        let Some(next) = at.checked_add(step) else { break };
        at = next;
    }
    let base = NonNull::new(first_virt as *mut u32).ok_or(bad)?;
    // SAFETY: `base..base + size` maps the BAR, uncached from here on, for the region's
    // lifetime and used only through it (caller's contract); BARs are at least 16-byte aligned.
    Ok(unsafe { MmioRegion::new(base, len) })
}
