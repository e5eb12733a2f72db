//! Physical memory plan: where the heap and the DMA pool go. x86_64 reads the PVH memory map;
//! aarch64 (`virt`) has one RAM range from 0x4000_0000 of the size the runner gives QEMU
//! (`-m 256M`), with the device tree at its start, so its kernel is linked at 0x4008_0000.
//!
//! x86_64:
//! ```text
//! 0        1 MiB         __kernel_end  (2 MiB aligned)              top of the RAM range
//! | fw/info | kernel image | gap | heap (HEAP_SIZE) | ... free ... | DMA pool (DMA_SIZE) |
//! ```
//! Everything is identity mapped, so a physical address is also the CPU pointer and (no IOMMU)
//! the bus address. The start info, command line and memory map live below 1 MiB and are copied
//! before anything is allocated.
//!
//! aarch64 (MMU off: physical address = CPU pointer = bus address):
//! ```text
//! 0x4000_0000  0x4008_0000   __kernel_end (2 MiB aligned)                   RAM_END
//! | DTB       | kernel image | heap (HEAP_SIZE) | ... free ... | DMA pool (DMA_SIZE) |
//! ```

#[cfg(target_arch = "x86_64")]
use crate::bootinfo::{MEMMAP_RAM, MemoryRange};

/// Kernel heap size.
pub const HEAP_SIZE: u64 = 4 << 20;
/// DMA pool size.
pub const DMA_SIZE: u64 = 16 << 20;
const ALIGN_2M: u64 = 2 << 20;
/// End of the identity map: both regions must lie below it.
#[cfg(target_arch = "x86_64")]
const MAPPED_END: u64 = 1 << 32;
/// First byte after guest RAM on `virt`: `VIRT_MEM` plus the runner's `-m 256M`.
#[cfg(target_arch = "aarch64")]
const RAM_END: u64 = 0x4000_0000 + (256 << 20);

unsafe extern "C" {
    /// End of the kernel image including `.bss` (linker.ld, linker-aarch64.ld).
    static __kernel_end: u8;
}

/// Where the heap and the DMA pool are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, defmt::Format)]
pub struct MemoryPlan {
    /// Heap start (physical = virtual).
    pub heap_start: u64,
    /// DMA pool start.
    pub dma_start: u64,
}

/// No RAM range fits the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, defmt::Format)]
pub enum MemoryError {
    /// No usable RAM range holds the kernel image plus the heap.
    NoRoomForHeap {
        /// First byte after the kernel image.
        kernel_end: u64,
    },
    /// The RAM range above the heap is too small for the DMA pool.
    NoRoomForDma,
}

fn align_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a) * a
}

/// Place the heap after the kernel image and the DMA pool at the top of the same RAM range.
#[cfg(target_arch = "x86_64")]
pub fn plan(map: &[MemoryRange]) -> Result<MemoryPlan, MemoryError> {
    let kernel_end = core::ptr::addr_of!(__kernel_end) as u64;
    let heap_start = align_up(kernel_end, ALIGN_2M);
    let heap_end = heap_start + HEAP_SIZE;
    let range = map
        .iter()
        .find(|r| r.kind == MEMMAP_RAM && r.start <= kernel_end && heap_end <= r.end())
        .ok_or(MemoryError::NoRoomForHeap { kernel_end })?;
    let top = range.end().min(MAPPED_END) / ALIGN_2M * ALIGN_2M;
    let dma_start = top.checked_sub(DMA_SIZE).ok_or(MemoryError::NoRoomForDma)?;
    if dma_start < heap_end {
        return Err(MemoryError::NoRoomForDma);
    }
    Ok(MemoryPlan { heap_start, dma_start })
}

/// Place the heap after the kernel image and the DMA pool at the top of RAM.
#[cfg(target_arch = "aarch64")]
pub fn plan() -> Result<MemoryPlan, MemoryError> {
    let kernel_end = core::ptr::addr_of!(__kernel_end) as u64;
    let heap_start = align_up(kernel_end, ALIGN_2M);
    let heap_end = heap_start + HEAP_SIZE;
    if heap_end > RAM_END {
        return Err(MemoryError::NoRoomForHeap { kernel_end });
    }
    let dma_start = RAM_END - DMA_SIZE;
    if dma_start < heap_end {
        return Err(MemoryError::NoRoomForDma);
    }
    Ok(MemoryPlan { heap_start, dma_start })
}
