//! The PM4 writer and the CP command ring (amd-r5xx-acceleration §5.4) under hostile
//! read-pointer write-backs: whatever value the "CP" writes back, the ring never overwrites a
//! dword it has committed and not seen consumed, its pointers stay inside the ring, and its
//! free-space accounting stays within capacity; never a panic.
#![no_main]

use baregpu_hal::dma::{BusAddress, DmaRegion};
use baregpu_ring::pm4::CommandSink;
use baregpu_ring::ring::CommandRing;
use core::ptr::NonNull;
use libfuzzer_sys::fuzz_target;

/// `words` of host memory as a region at bus address `bus`.
///
/// # Safety
/// The region must be dropped before `words`, which nothing else touches meanwhile.
unsafe fn region(words: &mut [u32], bus: u64) -> DmaRegion {
    let bytes = words.len() * 4;
    let cpu = NonNull::from(words).cast::<u8>();
    // SAFETY: the caller keeps `words` alive and untouched while the region lives; 4-byte
    // aligned; the length is the slice's.
    unsafe { DmaRegion::from_raw_parts(cpu, BusAddress(bus), bytes) }
}

fuzz_target!(|bytes: &[u8]| {
    let Some((&size, ops)) = bytes.split_first() else { return };
    let dwords = 8usize << (size % 6); // 8..=256 dwords
    let mut ring_mem = vec![0u32; dwords];
    let mut wb_mem = vec![0u32; 4];
    // SAFETY: both regions live inside `ring`, dropped at the end of this closure before the
    // vectors; nothing else touches the vectors meanwhile.
    let (rb, wb) = unsafe { (region(&mut ring_mem, 0x10_0000), region(&mut wb_mem, 0x20_0000)) };
    let mut ring = CommandRing::new(rb, wb, 4).expect("a valid ring");
    let mask = dwords as u32 - 1;
    let mut it = ops.iter().copied();
    let next_u32 = |it: &mut dyn Iterator<Item = u8>| {
        u32::from_le_bytes([0; 4].map(|_| it.next().unwrap_or(0)))
    };
    while let Some(op) = it.next() {
        // The dwords the ring considers unconsumed before the operation.
        let (rptr, committed) = (ring.cached_rptr(), ring.committed());
        let window: Vec<(u32, u32)> = (0..committed.wrapping_sub(rptr) & mask)
            .map(|k| {
                let i = (rptr + k) & mask;
                (i, ring.buffer().read_u32(i as usize * 4).unwrap())
            })
            .collect();
        match op % 8 {
            0 => {
                let n = (op / 8) as usize % 20;
                let body: Vec<u32> = (0..n as u32).collect();
                let _ = ring.writer().nop(&body);
            }
            1 => {
                let n = (op / 8) as usize % 8;
                if ring.reserve(n).is_ok() {
                    for k in 0..n {
                        ring.push(0xDEAD_0000 | k as u32).unwrap();
                    }
                }
            }
            2 => {
                let _ = ring.commit();
            }
            3 => {
                // The hostile write-back: any value at all.
                let v = next_u32(&mut it);
                let (wb, off) = ring.writeback();
                wb.write_u32(off, v).unwrap();
            }
            4 => {
                let _ = ring.pad_to(1 << (op / 8 % 6));
            }
            5 => {
                let _ = ring.refresh_rptr();
            }
            6 => ring.reset(),
            _ => {
                let _ = ring.reserve((op / 8) as usize);
                let _ = ring.push(0xBAD);
            }
        }
        assert!(ring.head() <= mask && ring.committed() <= mask && ring.cached_rptr() <= mask);
        assert!(ring.free_dwords() <= ring.capacity());
        assert!(ring.pending_dwords() <= ring.capacity());
        if op % 8 == 6 {
            continue; // a CP reset discards everything
        }
        // Still-unconsumed dwords (the read pointer only moves forward inside the window)
        // kept their contents.
        let still = ring.committed().wrapping_sub(ring.cached_rptr()) & mask;
        let skip = ring.cached_rptr().wrapping_sub(rptr) & mask;
        for &(i, v) in window.iter().skip(skip as usize).take(still as usize) {
            assert_eq!(ring.buffer().read_u32(i as usize * 4).unwrap(), v, "dword {i}");
        }
    }
    drop(ring);
});
