//! Memory-mapped register regions.

use crate::io::RegisterIo;
use core::ptr::NonNull;
use volatile::VolatilePtr;

/// A region of 32-bit memory-mapped registers (a PCI BAR, the V3D block).
///
/// Every access is one volatile 32-bit load or store through a raw pointer: no Rust reference to
/// device memory is ever created (a reference would let the compiler insert or merge accesses).
/// Volatile accesses are not reordered against each other by the compiler; the mapping must be
/// uncached device memory (x86 UC, Arm Device-nGnRE) so the CPU keeps them in order too.
///
/// An offset outside the region, or not 4-byte aligned, behaves like a bus master abort: the read
/// returns all-ones and the write is dropped. Drivers detect all-ones as "device gone", so a bug
/// cannot silently scribble outside the BAR.
#[derive(Debug)]
pub struct MmioRegion {
    base: NonNull<u32>,
    len: usize,
}

// SAFETY: the region is only accessed through volatile 32-bit operations, which devices accept
// from any CPU; exclusive ownership of the mapping is the constructor's contract.
unsafe impl Send for MmioRegion {}
// SAFETY: as above; concurrent callers coordinate through the driver's own locking.
unsafe impl Sync for MmioRegion {}

impl MmioRegion {
    /// A region of `len` bytes of registers starting at `base`.
    ///
    /// # Safety
    /// `base..base + len` must be mapped as device (uncached) memory for the lifetime of the
    /// region, `base` must be 4-byte aligned, and nothing else may treat that memory as normal
    /// memory.
    pub const unsafe fn new(base: NonNull<u32>, len: usize) -> Self {
        MmioRegion { base, len }
    }

    /// Length in bytes.
    pub const fn len(&self) -> usize {
        self.len
    }

    /// Whether the region is empty.
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn register(&self, offset: usize) -> Option<VolatilePtr<'_, u32>> {
        if !offset.is_multiple_of(4) || offset.checked_add(4)? > self.len {
            return None;
        }
        // SAFETY: `offset + 4 <= len` and alignment were checked, so the pointer stays inside the
        // mapping the constructor's contract makes valid for volatile access.
        let ptr = unsafe { self.base.byte_add(offset) };
        // SAFETY: `ptr` is valid and aligned for volatile u32 accesses for `&self`'s lifetime.
        Some(unsafe { VolatilePtr::new(ptr) })
    }
}

impl RegisterIo for MmioRegion {
    fn read32(&self, offset: usize) -> u32 {
        match self.register(offset) {
            Some(reg) => reg.read(),
            None => u32::MAX,
        }
    }

    fn write32(&self, offset: usize, value: u32) {
        if let Some(reg) = self.register(offset) {
            reg.write(value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_reach_memory_and_out_of_range_is_a_master_abort() {
        let mut backing = [0u32; 4];
        let base = NonNull::from(&mut backing).cast::<u32>();
        // SAFETY: `backing` outlives `mmio` and is only accessed through it below.
        let mmio = unsafe { MmioRegion::new(base, 16) };
        mmio.write32(4, 0xDEAD_BEEF);
        assert_eq!(mmio.read32(4), 0xDEAD_BEEF);
        // Past the end and misaligned: all-ones, write dropped.
        mmio.write32(16, 1);
        assert_eq!(mmio.read32(16), u32::MAX);
        assert_eq!(mmio.read32(2), u32::MAX);
        mmio.write32(2, 0);
        mmio.write32(12, 7);
        assert_eq!(mmio.read32(12), 7);
        assert_eq!(backing, [0, 0xDEAD_BEEF, 0, 7]);
    }
}
