//! Evergreen/Cayman driver figures through the in-process emulated Cypress: submissions and
//! dispatches per second, doorbells per batch, overhead dwords per fence and per IB, MMIO
//! writes per firmware upload, and the driver's own cost per batch against a null
//! `RegisterIo` beside the floor for the same dwords (plain stores into the same ring memory).
//!
//! The model runs to idle here (`GPU_MODEL_PACING` is not consulted): these are throughput
//! figures; the tests exercise the paced interleavings. Quick by design: 10 samples, 1 s.

#[path = "../tests/common/mod.rs"]
mod common;

use baregpu_radeon_evergreen::gpu::GpuQueue;
use std::hint::black_box;
use std::time::Duration;

use baregpu_evergreen_asm::{Chip, Node, assemble, examples};
use baregpu_hal::RegisterIo;
use baregpu_radeon_evergreen::compute::{self, Dispatch};
use baregpu_radeon_evergreen::{Evergreen, FENCE_DWORDS, RingConfig};
use baregpu_regs::evergreen::Chipset;
use common::*;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use evergreen_model::{Asic, EvergreenModel};
use gpu_device_model::{InProcess, InProcessOptions, NullAfterInit, Pacing};

/// 16 x (scratch write + fence).
fn batch_of_16<IO: RegisterIo, C: baregpu_hal::time::Clock>(
    drv: &mut Evergreen<'_, IO, C, Gpu>,
) -> baregpu_radeon_evergreen::Fence {
    drv.submit(16 * (3 + FENCE_DWORDS), |s| {
        let mut last = None;
        for k in 0..16 {
            s.set_scratch(1, k)?;
            last = Some(s.fence()?);
        }
        Ok(last)
    })
    .unwrap()
    .unwrap()
}

fn bench(c: &mut Criterion) {
    let options = InProcessOptions { pacing: Some(Pacing::RunToIdle), ..Default::default() };
    let gpu = InProcess::with_options(EvergreenModel::new(Asic::Cypress), options).unwrap();
    let images = Images::of(Chipset::CYPRESS);
    let mut drv = init(&gpu, Chipset::CYPRESS, &images, RingConfig::with_ring_bytes(64 * 1024));
    let u = drv.upload_report();
    println!(
        "MMIO writes per firmware upload: PFP {} + ME {} + RLC {} (address + one per word)",
        u.pfp_writes, u.me_writes, u.rlc_writes
    );
    println!("overhead dwords per fence: {FENCE_DWORDS} (SURFACE_SYNC 5 + EVENT_WRITE_EOP 6)");
    println!("overhead dwords per IB: {}", baregpu_ring::evergreen::IB_PACKET_DWORDS);
    let mut g = c.benchmark_group("evergreen");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(1))
        .warm_up_time(Duration::from_millis(300));

    g.throughput(Throughput::Elements(1));
    let mut i = 0u32;
    g.bench_function("ring_fence", |b| {
        b.iter(|| {
            i = i.wrapping_add(1);
            let f = drv
                .submit(3 + FENCE_DWORDS, |s| {
                    s.set_scratch(1, i)?;
                    s.fence()
                })
                .unwrap();
            drv.wait(black_box(&f), FENCE_TIMEOUT).unwrap();
        })
    });

    g.throughput(Throughput::Elements(16));
    let (submissions, doorbells) = (drv.stats().submissions, drv.stats().doorbells);
    g.bench_function("ring_batch_of_16", |b| {
        b.iter(|| {
            let f = batch_of_16(&mut drv);
            drv.wait(&f, FENCE_TIMEOUT).unwrap();
        })
    });
    let s = drv.stats();
    let per_batch = (s.doorbells - doorbells) as f64 / (s.submissions - submissions) as f64;
    println!("doorbells per batch (ring_batch_of_16): {per_batch:.3}");
    assert_eq!(s.doorbells - doorbells, s.submissions - submissions);

    // Dispatches: VECTOR_ADD over 256 elements (4 groups of 64).
    let mut nodes = [Node::EMPTY; 64];
    let mut words = [0u32; 256];
    let info = assemble(examples::VECTOR_ADD, Chip::Evergreen, &mut nodes, &mut words).unwrap();
    let code = alloc(&gpu, 4096);
    let k =
        compute::load_kernel(&code, &words[..info.words], info.num_gprs, info.stack_depth).unwrap();
    let (mem, cb) = (alloc(&gpu, 4096), alloc(&gpu, 256));
    let d = Dispatch {
        kernel: k,
        groups: [4, 1, 1],
        local: [64, 1, 1],
        args: &[0, 1024, 2048],
        constants: &cb,
        global: &mem,
        lds_dwords: 0,
        indirect: None,
    };
    g.throughput(Throughput::Elements(1));
    g.bench_function("dispatch_vector_add_256", |b| {
        b.iter(|| {
            let f = drv.dispatch(black_box(&d)).unwrap();
            drv.wait(&f, FENCE_TIMEOUT).unwrap();
        })
    });

    // The driver alone: a null register interface after bring-up, the CP's work reduced to
    // writing its read pointer back.
    let gpu = InProcess::with_options(EvergreenModel::new(Asic::Cypress), options).unwrap();
    let io = NullAfterInit::new(&gpu);
    let mut drv = Evergreen::init(
        &io,
        ModelClock::new(&gpu),
        &gpu,
        Chipset::CYPRESS,
        &images.parse(),
        RingConfig::default(),
    )
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
    // Its floor, in the same run: the batch's dwords (16 x (3 + FENCE_DWORDS)) stored one
    // at a time into the same ring memory, as `DmaRegion::write_u32` stores them.
    let stream: Vec<u32> = (0..16 * (3 + FENCE_DWORDS) as u32).collect();
    g.bench_function("store_floor_batch_of_16", |b| {
        b.iter(|| {
            let region = drv.ring().buffer();
            for (i, &dword) in black_box(&stream).iter().enumerate() {
                let _ = region.write_u32(i * 4, dword);
            }
        })
    });
    assert!(io.dropped() > 0, "one doorbell per batch reached the null interface");
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
