//! PM4 encoding throughput against a plain copy of the same bytes.
//!
//! One batch = 256 × (type-0 CP_IB_BASE/CP_IB_BUFSZ, 3 dwords; type-3 NOP with 4 body dwords,
//! 5 dwords; type-0 SCRATCH_REG0[1], 2 dwords) = 2560 dwords (10 KiB). Pairs to compare:
//!
//! - `encode_slice` (Pm4Writer into a `[u32]`) vs `store_loop` (the pre-encoded batch stored
//!   one `u32` at a time: the floor for building a stream dword by dword) and `copy_from_slice`
//!   (vector stores, which no dword-by-dword builder can approach);
//! - `encode_slice_large` vs `copy_from_slice_large`: 5 × 3D_DRAW_IMMD_2 of 511 body
//!   dwords (also 10 KiB), where the per-packet cost is amortised;
//! - `encode_ring` (Pm4Writer into a CommandRing over DMA memory, one reservation and one run
//!   of stores per packet, one commit, simulated CP write-back) vs `volatile_store_dma` (the
//!   batch stored one `u32` at a time with `DmaRegion::write_u32` into the same DMA memory: the
//!   floor for the ring path) and `copy_into_dma` (`DmaRegion::write_slice` of the batch).
//!
//! Quick by design: 20 samples, 1 s measurement: `cargo bench -p baregpu-ring` takes seconds.

#[path = "../tests/common/mod.rs"]
mod common;

use std::hint::black_box;
use std::sync::atomic::{Ordering, compiler_fence};
use std::time::Duration;

use baregpu_regs::r5xx::cp::{CP_IB_BASE, CP_IB_BUFSZ, SCRATCH_REG0};
use baregpu_regs::r5xx::packets;
use baregpu_ring::pm4::{CommandSink, Pm4Error, Pm4Writer, SliceSink};
use baregpu_ring::r5xx::{self, R5xxRing};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const PACKETS: u32 = 256;
const DWORDS: usize = PACKETS as usize * 10;

fn batch<S: CommandSink>(w: &mut Pm4Writer<S, r5xx::Family>, seed: u32) -> Result<(), Pm4Error> {
    for i in 0..PACKETS {
        let v = seed.wrapping_add(i);
        w.write_regs((CP_IB_BASE::from_raw(v << 2), CP_IB_BUFSZ::from_raw(16)))?;
        w.packet(packets::NOP, &[v, v + 1, v + 2, v + 3])?;
        w.write_reg_at(1, SCRATCH_REG0::from_raw(v))?;
    }
    Ok(())
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("pm4");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .throughput(Throughput::Bytes(DWORDS as u64 * 4));

    let mut reference = vec![0u32; DWORDS];
    let mut w = Pm4Writer::new(SliceSink::new(&mut reference));
    batch(&mut w, 7).unwrap();
    assert_eq!(w.sink().len(), DWORDS);

    let mut out = vec![0u32; DWORDS];
    let mut w = Pm4Writer::new(SliceSink::new(&mut out));
    batch(&mut w, 7).unwrap();
    assert_eq!(out, reference, "the encoded batch is the reference");
    g.bench_function("encode_slice", |b| {
        b.iter(|| {
            let mut w = Pm4Writer::new(SliceSink::new(&mut out));
            batch(&mut w, black_box(7)).unwrap();
            black_box(w.sink().len())
        })
    });
    g.bench_function("store_loop", |b| {
        b.iter(|| {
            for (slot, &dword) in out.iter_mut().zip(black_box(&reference)) {
                *slot = dword;
                // One store per dword, as a builder makes them: no merging into vector stores.
                compiler_fence(Ordering::SeqCst);
            }
            black_box(out[DWORDS - 1])
        })
    });
    g.bench_function("copy_from_slice", |b| {
        b.iter(|| {
            out.copy_from_slice(black_box(&reference));
            black_box(out[DWORDS - 1])
        })
    });

    // Large bodies (vertex data in 3D_DRAW_IMMD_2): 5 packets of 1 + 511 dwords, the same
    // 10 KiB; here encoding is a header plus a copy of the body.
    let vertices: Vec<u32> = (0..511).collect();
    let encode_large = |w: &mut Pm4Writer<SliceSink<'_>, r5xx::Family>| -> Result<(), Pm4Error> {
        for _ in 0..5 {
            w.packet(packets::_3D_DRAW_IMMD_2, black_box(&vertices))?;
        }
        Ok(())
    };
    let mut large = vec![0u32; DWORDS];
    let mut w = Pm4Writer::new(SliceSink::new(&mut large));
    encode_large(&mut w).unwrap();
    assert_eq!(w.sink().len(), DWORDS);
    g.bench_function("encode_slice_large", |b| {
        b.iter(|| {
            let mut w = Pm4Writer::new(SliceSink::new(&mut out));
            encode_large(&mut w).unwrap();
            black_box(w.sink().len())
        })
    });
    g.bench_function("copy_from_slice_large", |b| {
        b.iter(|| {
            out.copy_from_slice(black_box(&large));
            black_box(out[DWORDS - 1])
        })
    });

    let mut ring =
        R5xxRing::new(common::region(4096, 0x10_0000), common::region(1, 0), 0).expect("ring");
    g.bench_function("encode_ring", |b| {
        b.iter(|| {
            batch(&mut ring.writer(), black_box(7)).unwrap();
            let wptr = ring.commit();
            // The simulated CP consumes everything and writes its read pointer back.
            let (wb, off) = ring.writeback();
            wb.write_u32(off, wptr.rb_wptr()).unwrap();
            black_box(wptr)
        })
    });
    g.bench_function("volatile_store_dma", |b| {
        b.iter(|| {
            let region = ring.buffer();
            for (i, &dword) in black_box(&reference).iter().enumerate() {
                // `write_u32` is a bounds-checked volatile store, as the ring's own.
                let _ = region.write_u32(i * 4, dword);
            }
        })
    });
    let dma = common::region(DWORDS, 0x20_0000);
    g.bench_function("copy_into_dma", |b| {
        b.iter(|| {
            dma.write_slice(0, black_box(&reference)).unwrap();
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
