//! `boot`: the kernel's own services, no device: heap, DMA allocator, clock, exceptions.

use super::{CaseError, expect, expect_eq};
use crate::Kernel;
use crate::clock::{self, KernelClock};
use crate::{heap, memory};
use alloc::boxed::Box;
use alloc::vec::Vec;
use baregpu_hal::dma::{DmaBuffer, DmaError, DmaLayout};
use baregpu_hal::time::Clock;
use core::time::Duration;

/// Run the case.
pub fn run(kernel: &Kernel) -> Result<(), CaseError> {
    check_heap()?;
    check_dma(kernel)?;
    check_clock()?;
    #[cfg(target_arch = "x86_64")]
    check_breakpoint()?;
    Ok(())
}

fn check_heap() -> Result<(), CaseError> {
    let before = heap::used();
    {
        let v: Vec<u32> = (0..10_000u32).collect();
        let sum: u64 = v.iter().map(|&x| u64::from(x)).sum();
        expect_eq("heap: sum of a 10000-element Vec", sum, 49_995_000u64)?;
        let b = Box::new([0x5Au8; 4096]);
        expect("heap: boxed 4 KiB array reads back", b.iter().all(|&x| x == 0x5A))?;
        let s = alloc::format!("{}-{}", "heap", 42);
        expect("heap: format! works", s == "heap-42")?;
        expect("heap: usage grew while allocated", heap::used() > before)?;
    }
    expect_eq("heap: usage back to baseline after drop", heap::used() as u64, before as u64)
}

fn check_dma(kernel: &Kernel) -> Result<(), CaseError> {
    let dma = kernel.dma;
    let free = dma.free_bytes();
    expect_eq("dma: pool starts fully free", free, memory::DMA_SIZE)?;
    expect("dma: zero-size layout rejected", DmaLayout::new(0, 4) == Err(DmaError::ZeroSize))?;
    let mut regions = Vec::new();
    for (size, align) in
        [(100usize, 4usize), (4096, 4096), (3000, 1 << 16), (64, 64), (8192, 1 << 12)]
    {
        let region = DmaBuffer::allocate(dma, DmaLayout::new(size, align)?)?;
        let bus = region.bus_address().0;
        defmt::info!("dma: {=usize} bytes align {=usize} at {=u64:#x}", size, align, bus);
        expect("dma: bus address aligned", bus.is_multiple_of(align as u64))?;
        expect("dma: size covers the request", region.size() >= size)?;
        expect("dma: CPU address = bus address", region.cpu_ptr().as_ptr() as u64 == bus)?;
        let mut words = [0u32; 16];
        region.read_slice(0, &mut words[..(size / 4).min(16)])?;
        expect("dma: memory zeroed", words.iter().all(|&w| w == 0))?;
        region.write_u32(0, 0xFFFF_FFFF)?; // dirty it: a reallocation must come back zeroed
        regions.push(region);
    }
    let first = regions[0].bus_address();
    regions.clear(); // each buffer goes back to the pool as it drops
    expect_eq("dma: freeing everything coalesces the pool", dma.free_bytes(), memory::DMA_SIZE)?;
    let again = DmaBuffer::allocate(dma, DmaLayout::new(100, 4)?)?;
    expect("dma: first fit reuses the freed block", again.bus_address() == first)?;
    expect_eq("dma: reallocated block zeroed", again.read_u32(0)?, 0u32)?;
    drop(again);
    expect_eq("dma: a dropped buffer is given back", dma.free_bytes(), memory::DMA_SIZE)?;
    let below = DmaLayout::new(64, 64)?.with_max_address(0xFFFF);
    expect(
        "dma: a max_address below the pool is out of memory",
        DmaBuffer::allocate(dma, below).err() == Some(DmaError::OutOfMemory),
    )?;
    let huge = DmaLayout::new(memory::DMA_SIZE as usize + 1, 4)?;
    expect(
        "dma: oversize request is out of memory",
        DmaBuffer::allocate(dma, huge).err() == Some(DmaError::OutOfMemory),
    )
}

fn check_clock() -> Result<(), CaseError> {
    let mut last = clock::now_ns();
    for _ in 0..10_000 {
        let now = clock::now_ns();
        if now < last {
            defmt::error!("clock went back: {=u64} -> {=u64}", last, now);
            return Err(CaseError::Check("clock: monotonic"));
        }
        last = now;
    }
    expect("clock: 10000 readings never decrease", true)?;
    let start = clock::now_ns();
    KernelClock.delay(Duration::from_millis(2));
    let elapsed = clock::now_ns() - start;
    defmt::info!("clock: delay(2 ms) took {=u64} ns", elapsed);
    expect("clock: delay(2 ms) lasts 2..50 ms", (2_000_000..50_000_000).contains(&elapsed))
}

#[cfg(target_arch = "x86_64")]
fn check_breakpoint() -> Result<(), CaseError> {
    use crate::arch::idt;
    let before = idt::breakpoints();
    x86_64::instructions::interrupts::int3();
    expect_eq("exceptions: int3 caught once and resumed", idt::breakpoints() - before, 1u32)
}
