//! Physical memory plan on `virt`: RAM from 0x4000_0000 (`VIRT_MEM`), the size the runner
//! gives QEMU (`-m 256M`). QEMU puts the device tree at the start of RAM, so the kernel is
//! linked at 0x4008_0000 (linker-aarch64.ld).
//!
//! ```text
//! 0x4000_0000   0x4008_0000    __kernel_end (2 MiB aligned)                   RAM_END
//! | DTB        | kernel image | heap (HEAP_SIZE) | ... free ... | DMA pool (DMA_SIZE) |
//! ```
//! With the MMU off a physical address is the CPU pointer and (no IOMMU) the bus address.

/// Kernel heap size.
pub const HEAP_SIZE: u64 = 4 << 20;
/// DMA pool size.
pub const DMA_SIZE: u64 = 16 << 20;
/// First byte after guest RAM: `VIRT_MEM` base plus the runner's `-m 256M`.
const RAM_END: u64 = 0x4000_0000 + (256 << 20);
const ALIGN_2M: u64 = 2 << 20;

unsafe extern "C" {
    /// End of the kernel image including `.bss` and the stack (linker-aarch64.ld).
    static __kernel_end: u8;
}

/// Where the heap and the DMA pool are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, defmt::Format)]
pub struct MemoryPlan {
    /// Heap start.
    pub heap_start: u64,
    /// DMA pool start.
    pub dma_start: u64,
}

/// RAM does not hold the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, defmt::Format)]
pub enum MemoryError {
    /// The kernel image, heap and DMA pool do not fit below [`RAM_END`].
    NoRoom {
        /// First byte after the kernel image.
        kernel_end: u64,
    },
}

/// Heap after the kernel image, DMA pool at the top of RAM.
pub fn plan() -> Result<MemoryPlan, MemoryError> {
    let kernel_end = core::ptr::addr_of!(__kernel_end) as u64;
    let heap_start = kernel_end.next_multiple_of(ALIGN_2M);
    let dma_start = RAM_END - DMA_SIZE;
    if heap_start + HEAP_SIZE > dma_start {
        return Err(MemoryError::NoRoom { kernel_end });
    }
    Ok(MemoryPlan { heap_start, dma_start })
}
