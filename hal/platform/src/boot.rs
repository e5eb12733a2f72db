//! rust-osdev `bootloader` 0.11 (`bootloader_api`): its boot information as a DMA pool and
//! BAR mappings.
//!
//! Ask the bootloader to map all physical memory (`config.mappings.physical_memory =
//! Some(Mapping::Dynamic)`): the DMA pool's CPU address and the BARs are reached through that
//! map at [`BootInfo::physical_memory_offset`]. Bus address = physical address (no IOMMU, or
//! one in pass-through), and x86 DMA is cache-coherent, so the pool needs no cache maintenance.

use crate::dma::{BumpDma, PoolError};
use crate::mmio::MapError;
use baregpu_hal::dma::BusAddress;
use bootloader_api::BootInfo;
use bootloader_api::info::{MemoryRegion, MemoryRegionKind};
use core::fmt;
use core::ptr::NonNull;

const PAGE: u64 = 4096;

/// Why the boot information does not give what the drivers need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum BootError {
    /// The bootloader did not map physical memory (the kernel's `BootloaderConfig` must ask
    /// for `mappings.physical_memory`).
    NoPhysicalMemoryMap,
    /// No usable region holds a pool of this many bytes below the address limit.
    NoDmaMemory {
        /// Bytes asked for.
        bytes: u64,
    },
    /// The pool was refused.
    Pool(PoolError),
    /// A BAR could not be mapped.
    Map(MapError),
}

impl fmt::Display for BootError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BootError::NoPhysicalMemoryMap => {
                write!(f, "the bootloader did not map physical memory")
            }
            BootError::NoDmaMemory { bytes } => {
                write!(f, "no usable memory region holds a {bytes}-byte DMA pool")
            }
            BootError::Pool(_) => write!(f, "the DMA pool was refused"),
            BootError::Map(_) => write!(f, "a BAR could not be mapped"),
        }
    }
}

impl core::error::Error for BootError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            BootError::Pool(e) => Some(e),
            BootError::Map(e) => Some(e),
            _ => None,
        }
    }
}

/// Where the bootloader mapped all physical memory.
pub fn physical_memory_offset(info: &BootInfo) -> Result<u64, BootError> {
    info.physical_memory_offset.into_option().ok_or(BootError::NoPhysicalMemoryMap)
}

/// The physical range `[start, end)` of `bytes` bytes, page aligned, in the first usable region
/// that holds them with `end <= limit` (e.g. `1 << 32` for 32-bit bus masters), never at
/// physical page 0.
pub fn find_dma_range(regions: &[MemoryRegion], bytes: u64, limit: u64) -> Option<(u64, u64)> {
    regions.iter().filter(|r| r.kind == MemoryRegionKind::Usable).find_map(|r| {
        let start = r.start.checked_next_multiple_of(PAGE)?.max(PAGE);
        let end = start.checked_add(bytes)?;
        (bytes > 0 && end <= r.end && end <= limit).then_some((start, end))
    })
}

/// A [`BumpDma`] over `bytes` bytes of the first usable region below `limit` (see
/// [`find_dma_range`]), reached through the physical-memory map.
///
/// # Safety
/// The kernel must not use the pool's range ([`BumpDma::bus_range`]) for anything else: a
/// frame allocator built from the same memory map must skip it. The physical-memory map must
/// stay in place for as long as the pool lives.
pub unsafe fn dma_pool(info: &BootInfo, bytes: u64, limit: u64) -> Result<BumpDma, BootError> {
    let offset = physical_memory_offset(info)?;
    let (start, end) = find_dma_range(&info.memory_regions, bytes, limit)
        .ok_or(BootError::NoDmaMemory { bytes })?;
    let cpu = offset
        .checked_add(start)
        .and_then(|a| NonNull::new(a as *mut u8))
        .ok_or(BootError::NoDmaMemory { bytes })?;
    let size = usize::try_from(end - start).map_err(|_| BootError::NoDmaMemory { bytes })?;
    // SAFETY: `[start, end)` is usable RAM of the boot memory map (nothing of the bootloader's
    // lives there), mapped at `offset + start` by the physical-memory map, and reserved for
    // the pool by the caller; bus address = physical address on x86 without an IOMMU, and x86
    // DMA is coherent.
    unsafe { BumpDma::new(cpu, BusAddress(start), size) }.map_err(BootError::Pool)
}

/// A BAR as an [`MmioRegion`](baregpu_hal::MmioRegion): `size` bytes at physical `phys`,
/// through the physical-memory map, made uncached ([`crate::mmio::map_uncached`]).
///
/// # Safety
/// As [`crate::mmio::map_uncached`]: `phys..phys + size` is a BAR, the page tables are not
/// used concurrently, and the window is used only through the returned region.
#[cfg(all(feature = "x86_64", target_arch = "x86_64"))]
pub unsafe fn map_bar(
    info: &BootInfo,
    phys: u64,
    size: u64,
) -> Result<baregpu_hal::MmioRegion, BootError> {
    let offset = physical_memory_offset(info)?;
    // SAFETY: the bootloader's physical-memory map reaches the active page tables at
    // `offset`; the rest is the caller's contract.
    unsafe { crate::mmio::map_uncached(phys, size, offset) }.map_err(BootError::Map)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn region(start: u64, end: u64, kind: MemoryRegionKind) -> MemoryRegion {
        MemoryRegion { start, end, kind }
    }

    #[test]
    fn the_pool_comes_from_the_first_usable_region_that_holds_it_below_the_limit() {
        let map = [
            region(0, 0x9_F000, MemoryRegionKind::Usable),
            region(0x10_0000, 0x20_0000, MemoryRegionKind::Bootloader),
            region(0x20_0000, 0x28_0000, MemoryRegionKind::Usable),
            region(0x100_0000, 0x800_0000, MemoryRegionKind::Usable),
            region(0x1_0000_0000, 0x2_0000_0000, MemoryRegionKind::Usable),
        ];
        // 1 MiB fits neither the low region nor the 512 KiB one.
        assert_eq!(find_dma_range(&map, 1 << 20, 1 << 32), Some((0x100_0000, 0x110_0000)));
        // 64 KiB fits the low region, but never at page 0.
        assert_eq!(find_dma_range(&map, 0x1_0000, 1 << 32), Some((0x1000, 0x1_1000)));
        // 1 GiB fits only above 4 GiB: refused for 32-bit masters, found for 64-bit ones.
        assert_eq!(find_dma_range(&map, 1 << 30, 1 << 32), None);
        assert_eq!(find_dma_range(&map, 1 << 30, u64::MAX), Some((0x1_0000_0000, 0x1_4000_0000)));
        assert_eq!(find_dma_range(&map, 0, u64::MAX), None);
    }
}
