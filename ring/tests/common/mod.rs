//! Host-side DMA memory for the tests and benchmarks: leaked heap buffers wrapped as
//! `DmaRegion`s at chosen bus addresses.
#![allow(dead_code)]

use baregpu_hal::dma::{BusAddress, DmaRegion};
use core::ptr::NonNull;

/// `dwords` zeroed dwords of host memory seen by the "device" at `bus`.
pub fn region(dwords: usize, bus: u64) -> DmaRegion {
    let mem: &'static mut [u32] = Box::leak(vec![0u32; dwords].into_boxed_slice());
    let cpu = NonNull::from(mem).cast::<u8>();
    // SAFETY: the leaked buffer is valid for reads and writes forever, 4-byte aligned, never
    // accessed except through this region, and `dwords * 4` bytes long.
    unsafe { DmaRegion::from_raw_parts(cpu, BusAddress(bus), dwords * 4) }
}

/// Every dword of `r`.
pub fn dwords(r: &DmaRegion) -> Vec<u32> {
    let mut out = vec![0u32; r.size() / 4];
    r.read_slice(0, &mut out).unwrap();
    out
}
