//! The bump DMA allocator: disjoint, aligned, zeroed allocations within the pool and the
//! layout's address limit; roll-back of the most recent one; concurrent use from threads.
//! Runs under Miri (`cargo miri test -p baregpu-platform`), which checks the unsafe core.

use baregpu_hal::dma::{BusAddress, DmaAllocator, DmaBuffer, DmaError, DmaLayout};
use baregpu_platform::dma::{BumpDma, MIN_ALIGN, PoolError};
use core::ptr::NonNull;

/// `bytes` of leaked, 64-byte aligned host memory, filled with a non-zero pattern.
fn memory(bytes: usize) -> NonNull<u8> {
    #[repr(C, align(64))]
    #[derive(Clone, Copy)]
    struct Line([u8; 64]);
    let lines: &'static mut [Line] =
        Box::leak(vec![Line([0xA5; 64]); bytes / 64].into_boxed_slice());
    NonNull::new(lines.as_mut_ptr().cast::<u8>()).unwrap()
}

const BUS: u64 = 0x10_0000;

fn pool(bytes: usize) -> BumpDma {
    // SAFETY: leaked host memory, used by nothing else; "devices" (the test) see it at BUS.
    unsafe { BumpDma::new(memory(bytes), BusAddress(BUS), bytes) }.unwrap()
}

#[test]
fn allocations_are_aligned_disjoint_zeroed_and_inside_the_pool() {
    let dma = pool(64 * 1024);
    let a = dma.allocate(DmaLayout::new(100, 4).unwrap()).unwrap();
    let b = dma.allocate(DmaLayout::new(4096, 4096).unwrap()).unwrap();
    let c = dma.allocate(DmaLayout::new(8, 256).unwrap()).unwrap();
    assert_eq!(a.bus_address(), BusAddress(BUS));
    assert_eq!(b.bus_address().0 % 4096, 0);
    assert_eq!(c.bus_address().0 % 256, 0);
    assert!(a.bus_address().0 + 100 <= b.bus_address().0, "a and b overlap");
    assert!(b.bus_address().0 + 4096 <= c.bus_address().0, "b and c overlap");
    for region in [&a, &b, &c] {
        assert_eq!(region.bus_address().0 % MIN_ALIGN as u64, 0);
        assert!(region.bus_address().0 + region.size() as u64 <= BUS + 64 * 1024);
        let mut words = vec![1u32; region.size() / 4];
        region.read_slice(0, &mut words).unwrap();
        assert!(words.iter().all(|&w| w == 0), "allocation not zeroed");
    }
    // Writes through one region never show in another.
    a.write_u32(0, 0xDEAD_BEEF).unwrap();
    assert_eq!(b.read_u32(0).unwrap(), 0);
}

#[test]
fn a_full_pool_or_an_address_limit_refuses_and_bad_layouts_are_typed_errors() {
    let dma = pool(8192);
    dma.allocate(DmaLayout::new(4096, 64).unwrap()).unwrap();
    assert_eq!(dma.allocate(DmaLayout::new(8192, 64).unwrap()).unwrap_err(), DmaError::OutOfMemory);
    // The pool starts at 1 MiB: nothing fits below a limit inside the first allocation.
    let low = DmaLayout::new(64, 64).unwrap().with_max_address(BUS + 4096);
    assert_eq!(dma.allocate(low).unwrap_err(), DmaError::OutOfMemory);
    // What is left still serves a request that fits.
    assert!(dma.allocate(DmaLayout::new(4096, 64).unwrap()).is_ok());
    assert_eq!(dma.free(), 0);
}

#[test]
fn the_most_recent_allocation_rolls_back_and_earlier_ones_stay() {
    let dma = pool(16 * 1024);
    let first = dma.allocate(DmaLayout::new(4096, 4096).unwrap()).unwrap();
    let second = dma.allocate(DmaLayout::new(4096, 4096).unwrap()).unwrap();
    let second_at = second.bus_address();
    dma.deallocate(second);
    assert_eq!(dma.used(), 4096);
    // Freed memory is handed out again (zeroed).
    let again = dma.allocate(DmaLayout::new(4096, 4096).unwrap()).unwrap();
    assert_eq!(again.bus_address(), second_at);
    // `first` is not the most recent: giving it back keeps it allocated.
    dma.deallocate(first);
    assert_eq!(dma.used(), 8192);
    // A DmaBuffer gives its memory back on drop (the drivers' error paths rely on it).
    let used = dma.used();
    {
        let _buffer = DmaBuffer::allocate(&dma, DmaLayout::new(256, 64).unwrap()).unwrap();
        assert!(dma.used() > used);
    }
    assert_eq!(dma.used(), used);
}

#[test]
fn pools_that_cannot_work_are_refused() {
    let cpu = memory(4096);
    // Each constructor call: as in `pool`; the constructor refuses before handing anything out.
    // SAFETY: see above.
    let empty = unsafe { BumpDma::new(cpu, BusAddress(BUS), 0) };
    assert_eq!(empty.unwrap_err(), PoolError::Empty);
    // SAFETY: see above.
    let misaligned = unsafe { BumpDma::new(cpu, BusAddress(BUS + 4), 4096) };
    assert_eq!(misaligned.unwrap_err(), PoolError::Misaligned);
    // SAFETY: see above.
    let wrapping = unsafe { BumpDma::new(cpu, BusAddress(u64::MAX - 63), 4096) };
    assert_eq!(wrapping.unwrap_err(), PoolError::TooLarge { size: 4096 });
}

#[test]
fn threads_sharing_the_allocator_get_disjoint_memory() {
    // `Sync`: a `static` driver's allocator, used from an interrupt handler or another CPU.
    let dma: &'static BumpDma = Box::leak(Box::new(pool(64 * 1024)));
    let threads: Vec<_> = (0..4)
        .map(|_| {
            std::thread::spawn(move || {
                (0..8)
                    .map(|_| {
                        dma.allocate(DmaLayout::new(128, 64).unwrap()).unwrap().bus_address().0
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut starts: Vec<u64> = threads.into_iter().flat_map(|t| t.join().unwrap()).collect();
    starts.sort_unstable();
    assert_eq!(starts.len(), 32);
    assert!(starts.windows(2).all(|w| w[1] - w[0] >= 128), "allocations overlap: {starts:x?}");
}
