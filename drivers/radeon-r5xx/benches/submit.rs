//! Submissions per second through the in-process emulated R520 (ring + fence), doorbells per
//! batch, and the driver's own cost per batch with no device behind it.
//!
//! - `ring_fence`: one batch = a scratch write + a fence (4 dwords, padded to 16), one doorbell,
//!   then a wait on the fence.
//! - `ring_batch_of_16`: one batch = 16 × (scratch write + fence), one doorbell, one wait.
//! - `pio_fence`: the same scratch write + fence through the PIO aperture.
//! - `null_io_batch_of_16`: the `ring_batch_of_16` batch with a null `RegisterIo` (writes
//!   dropped) and the CP's read-pointer write-back simulated after each batch: the driver's
//!   packet building, padding and doorbell apart from the emulator.
//!
//! The model runs to idle here (`GPU_MODEL_PACING` is not consulted): these are throughput
//! figures; the tests exercise the paced interleavings. Quick by design: 10 samples, 1 s
//! measurement.

#[path = "../tests/common/mod.rs"]
mod common;

use baregpu_radeon_r5xx::gpu::GpuQueue;
use std::hint::black_box;
use std::time::Duration;

use baregpu_hal::RegisterIo;
use baregpu_radeon_r5xx::{R5xx, RingConfig, USER_SCRATCH};
use baregpu_regs::r5xx::cp::SCRATCH_REG0;
use common::*;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use gpu_device_model::{InProcess, InProcessOptions, NullAfterInit, Pacing};
use r5xx_model::R5xxModel;

fn scratch(v: u32) -> SCRATCH_REG0 {
    SCRATCH_REG0::RESET.with_scratch_reg0(v)
}

/// 16 × (scratch write + fence): 64 dwords, padded to 64.
fn batch_of_16<
    IO: RegisterIo,
    C: baregpu_hal::time::Clock,
    A: baregpu_hal::dma::DmaAllocator + ?Sized,
>(
    drv: &mut R5xx<'_, IO, C, A>,
) -> baregpu_radeon_r5xx::Fence {
    drv.submit(16 * 4, |s| {
        let mut last = None;
        for k in 0..16 {
            s.writer().write_reg_at(USER_SCRATCH, scratch(k))?;
            last = Some(s.fence()?);
        }
        Ok(last)
    })
    .unwrap()
    .unwrap()
}

fn bench(c: &mut Criterion) {
    let options = InProcessOptions { pacing: Some(Pacing::RunToIdle), ..Default::default() };
    let gpu = InProcess::with_options(R5xxModel::new(), options).unwrap();
    let mut drv = init(&gpu, RingConfig::with_ring_bytes(64 * 1024));
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
    let (batches, doorbells) = (drv.stats().submissions, drv.stats().doorbells);
    g.bench_function("ring_batch_of_16", |b| {
        b.iter(|| {
            let f = batch_of_16(&mut drv);
            drv.wait(&f, FENCE_TIMEOUT).unwrap();
        })
    });
    let s = drv.stats();
    let per_batch = (s.doorbells - doorbells) as f64 / (s.submissions - batches) as f64;
    println!("doorbells per batch (ring_batch_of_16): {per_batch:.3}");
    assert_eq!(s.doorbells - doorbells, s.submissions - batches);

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

    // The driver alone: a null register interface after bring-up, the CP's work reduced to
    // writing its read pointer back (what lets the ring reuse its space).
    let gpu = InProcess::with_options(R5xxModel::new(), options).unwrap();
    let io = NullAfterInit::new(&gpu);
    let mut drv = R5xx::init(&io, ModelClock::new(&gpu), &gpu, &firmware(), RingConfig::default())
        .expect("init");
    io.go_null();
    g.throughput(Throughput::Elements(16));
    g.bench_function("null_io_batch_of_16", |b| {
        b.iter(|| {
            black_box(batch_of_16(&mut drv));
            let (wb, offset) = drv.ring().writeback();
            wb.write_u32(offset, drv.ring().committed()).unwrap();
        })
    });
    assert!(io.dropped() > 0, "one doorbell per batch reached the null interface");
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
