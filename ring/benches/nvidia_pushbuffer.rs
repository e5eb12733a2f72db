//! nVidia method-header encoding against a plain store loop of the same words.
//!
//! One batch = 256 × (increasing methods: a header and 4 data words; non-increasing methods: a
//! header and 2 data words; `REF_CNT`: a header and its value) = 2560 words (10 KiB), the
//! shape of a copy or semaphore submission. Pair to compare: `encode_slice`
//! (`PushbufferWriter` into a `[u32]`) vs `store_loop` (the pre-encoded batch stored one `u32`
//! at a time: the floor for building a stream word by word).
//!
//! Quick by design: 20 samples, 1 s measurement.

use std::hint::black_box;
use std::sync::atomic::{Ordering, compiler_fence};
use std::time::Duration;

use baregpu_regs::pushbuffer::PusherMode;
use baregpu_ring::nvidia::{PushbufferError, PushbufferWriter};
use baregpu_ring::stream::{CommandSink, SliceSink};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const GROUPS: u32 = 256;
const WORDS: usize = GROUPS as usize * 10;

fn batch<S: CommandSink<u32>>(
    w: &mut PushbufferWriter<S>,
    seed: u32,
) -> Result<(), PushbufferError> {
    for i in 0..GROUPS {
        let v = seed.wrapping_add(i);
        w.methods(1, 0x200, &[v, v + 1, v + 2, v + 3])?;
        w.methods_non_increasing(2, 0x400, &[v, !v])?;
        w.ref_cnt(v)?;
    }
    Ok(())
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("nvidia_pushbuffer");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .throughput(Throughput::Bytes(WORDS as u64 * 4));

    let mut reference = vec![0u32; WORDS];
    let mut w = PushbufferWriter::new(SliceSink::new(&mut reference), PusherMode::Ib);
    batch(&mut w, 7).unwrap();
    assert_eq!(w.sink().len(), WORDS);

    let mut out = vec![0u32; WORDS];
    g.bench_function("encode_slice", |b| {
        b.iter(|| {
            let mut w = PushbufferWriter::new(SliceSink::new(&mut out), PusherMode::Ib);
            batch(&mut w, black_box(7)).unwrap();
            black_box(w.sink().len())
        })
    });
    assert_eq!(out, reference, "the encoded batch is the reference");
    g.bench_function("store_loop", |b| {
        b.iter(|| {
            for (slot, &word) in out.iter_mut().zip(black_box(&reference)) {
                *slot = word;
                // One store per word, as a builder makes them: no merging into vector stores.
                compiler_fence(Ordering::SeqCst);
            }
            black_box(out[WORDS - 1])
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
