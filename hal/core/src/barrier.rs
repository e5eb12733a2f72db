//! Memory barriers between CPU writes to DMA memory and device doorbells.
//!
//! A driver fills a ring or indirect buffer in normal (cached, coherent) memory and then writes a
//! doorbell register (e.g. CP_RB_WPTR, amd-r5xx-acceleration §5.4). The device may fetch the
//! buffer as soon as it sees the doorbell, so the buffer writes must be globally visible first:
//! call [`dma_wmb`] between the last buffer write and the doorbell. [`dma_rmb`] orders the read
//! of a device-written value (a written-back read pointer, a fence) before reads of the data it
//! guards.

use core::sync::atomic::{Ordering, fence};

/// Make all earlier CPU writes to DMA memory visible to devices before any later write
/// (including a doorbell MMIO write).
#[inline(always)]
pub fn dma_wmb() {
    fence(Ordering::Release);
    arch::store_barrier();
}

/// Order earlier reads of device-written memory before later reads.
#[inline(always)]
pub fn dma_rmb() {
    arch::load_barrier();
    fence(Ordering::Acquire);
}

#[cfg(all(target_arch = "x86_64", not(miri)))]
mod arch {
    /// x86 keeps stores to write-back memory ordered with later uncached MMIO stores; `sfence`
    /// also drains write-combining buffers, should a ring ever be mapped WC.
    #[inline(always)]
    pub fn store_barrier() {
        // SAFETY: `sfence` has no operands and no effect besides ordering stores.
        unsafe { core::arch::asm!("sfence", options(nostack, preserves_flags)) }
    }
    #[inline(always)]
    pub fn load_barrier() {
        // SAFETY: `lfence` has no operands and no effect besides ordering loads.
        unsafe { core::arch::asm!("lfence", options(nostack, preserves_flags)) }
    }
}

#[cfg(all(target_arch = "aarch64", not(miri)))]
mod arch {
    /// Outer-shareable store barrier: DMA masters are outside the inner-shareable domain.
    #[inline(always)]
    pub fn store_barrier() {
        // SAFETY: `dmb oshst` has no operands and only orders memory accesses.
        unsafe { core::arch::asm!("dmb oshst", options(nostack, preserves_flags)) }
    }
    #[inline(always)]
    pub fn load_barrier() {
        // SAFETY: `dmb oshld` has no operands and only orders memory accesses.
        unsafe { core::arch::asm!("dmb oshld", options(nostack, preserves_flags)) }
    }
}

/// Other architectures, and Miri (which cannot run inline assembly): a sequentially
/// consistent fence, at least as strong as the store/load barriers above for every access the
/// Rust memory model describes.
#[cfg(any(miri, not(any(target_arch = "x86_64", target_arch = "aarch64"))))]
mod arch {
    #[inline(always)]
    pub fn store_barrier() {
        core::sync::atomic::fence(core::sync::atomic::Ordering::SeqCst);
    }
    #[inline(always)]
    pub fn load_barrier() {
        core::sync::atomic::fence(core::sync::atomic::Ordering::SeqCst);
    }
}
