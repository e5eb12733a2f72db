//! Submissions per second through the in-process emulated R520 (ring + fence), and doorbells
//! per batch.
//!
//! - `ring_fence`: one batch = a scratch write + a fence (4 dwords, padded to 16), one doorbell,
//!   then a wait on the fence (the model runs synchronously with the doorbell write).
//! - `ring_batch_of_16`: one batch = 16 × (scratch write + fence), one doorbell, one wait.
//! - `pio_fence`: the same scratch write + fence through the PIO aperture.
//!
//! Quick by design: 10 samples, 1 s measurement.

#[path = "../tests/common/mod.rs"]
mod common;

use std::hint::black_box;
use std::time::Duration;

use baregpu_radeon_r5xx::USER_SCRATCH;
use baregpu_regs::r5xx::cp::SCRATCH_REG0;
use common::*;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn scratch(v: u32) -> SCRATCH_REG0 {
    SCRATCH_REG0::RESET.with_scratch_reg0(v)
}

fn bench(c: &mut Criterion) {
    let gpu = gpu();
    let mut drv = init(&gpu, baregpu_radeon_r5xx::RingConfig::with_ring_bytes(64 * 1024));
    let mut g = c.benchmark_group("submit");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(1))
        .warm_up_time(Duration::from_millis(300));

    g.throughput(Throughput::Elements(1));
    let mut i = 0u32;
    g.bench_function("ring_fence", |b| {
        b.iter(|| {
            i = i.wrapping_add(1);
            let f = drv
                .submit(4, |s| {
                    s.writer().write_reg_at(USER_SCRATCH, scratch(i))?;
                    s.fence()
                })
                .unwrap();
            drv.wait(black_box(&f), FENCE_TIMEOUT).unwrap();
        })
    });

    g.throughput(Throughput::Elements(16));
    let (batches, doorbells) = (drv.stats().batches, drv.stats().doorbells);
    g.bench_function("ring_batch_of_16", |b| {
        b.iter(|| {
            let f = drv
                .submit(16 * 4, |s| {
                    let mut last = None;
                    for k in 0..16 {
                        s.writer().write_reg_at(USER_SCRATCH, scratch(k))?;
                        last = Some(s.fence()?);
                    }
                    Ok(last)
                })
                .unwrap()
                .unwrap();
            drv.wait(&f, FENCE_TIMEOUT).unwrap();
        })
    });
    let s = drv.stats();
    let per_batch = (s.doorbells - doorbells) as f64 / (s.batches - batches) as f64;
    println!("doorbells per batch (ring_batch_of_16): {per_batch:.3}");
    assert_eq!(s.doorbells - doorbells, s.batches - batches);

    g.throughput(Throughput::Elements(1));
    g.bench_function("pio_fence", |b| {
        b.iter(|| {
            i = i.wrapping_add(1);
            let mut pio = drv.pio().unwrap();
            pio.packets(|w| w.write_reg_at(USER_SCRATCH, scratch(i))).unwrap();
            let f = pio.fence().unwrap();
            pio.finish().unwrap();
            drv.wait(&f, FENCE_TIMEOUT).unwrap();
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
