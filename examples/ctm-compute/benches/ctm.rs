//! CTM throughput on the host:
//!
//! - `encode_dispatch_buffer`: building a typical command buffer (program, two inputs, an
//!   output, a constant, cache invalidations, domain, start, wait, flushes: 22 commands, 53
//!   words) with `baregpu-ati-ctm`'s builders, in words per second.
//! - `saxpy_64x64`: the whole SAXPY workload through the driver and the in-process emulated
//!   R520 (assemble, load, fill inputs, dispatch, wait, compare 4096 outputs), in kernel
//!   elements per second.
//!
//! Quick by design: 10 samples, 1 s measurement.

#[path = "../tests/common/mod.rs"]
mod common;

use std::hint::black_box;
use std::time::Duration;

use baregpu_ati_ctm::command::{
    CommandBuffer, CondLoc, CondTest, CtmCommands, DataFormat, Domain, Format, GpuAddress, Height,
    InputIndex, OutputIndex, OutputMask, Tiling,
};
use common::*;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn encode(mem: &mut [u32]) -> usize {
    let f = Format::new(64, Tiling::Linear, DataFormat::Float32x1).unwrap();
    let k = Format::new(4, Tiling::Linear, DataFormat::Float32x4).unwrap();
    let at = |a: u32| GpuAddress::new(a).unwrap();
    let h = Height::new(64).unwrap();
    let mut cb = CommandBuffer::new(mem);
    cb.set_inst_fmt(at(0x10_0000), f).unwrap();
    cb.set_out_mask(OutputMask::ALL).unwrap();
    cb.set_cond_loc(CondLoc::Dpp).unwrap();
    cb.set_cond_test(CondTest::Always).unwrap();
    cb.set_cond_out_mask(false).unwrap();
    cb.inv_inst_cache().unwrap();
    cb.inv_constf_cache().unwrap();
    cb.inv_inp_cache().unwrap();
    cb.set_inp_fmt(InputIndex::new(0).unwrap(), at(0x20_0000), f, h).unwrap();
    cb.set_inp_fmt(InputIndex::new(1).unwrap(), at(0x30_0000), f, h).unwrap();
    cb.set_out_fmt(OutputIndex::new(0).unwrap(), at(0x40_0000), f, h).unwrap();
    cb.set_constf_fmt(at(0x50_0000), k).unwrap();
    cb.init_perf_counters(true).unwrap();
    cb.start_perf_counters().unwrap();
    cb.set_domain(Domain::of_size(64, 64).unwrap()).unwrap();
    cb.start_program().unwrap();
    cb.wait_for_idle().unwrap();
    cb.stop_perf_counters().unwrap();
    cb.read_perf_counters(at(0x60_0000)).unwrap();
    cb.flush_out_cache().unwrap();
    cb.flush_cond_out_cache().unwrap();
    cb.inv_cond_out_cache().unwrap();
    cb.len()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("ctm");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(1))
        .warm_up_time(Duration::from_millis(300));

    let mut mem = [0u32; 128];
    let words = encode(&mut mem);
    g.throughput(Throughput::Elements(words as u64));
    g.bench_function("encode_dispatch_buffer", |b| b.iter(|| encode(black_box(&mut mem))));

    g.throughput(Throughput::Elements(64 * 64));
    // A fresh device per iteration (untimed): the in-process DMA allocator never reuses
    // memory, so one device would run out after a few hundred workloads.
    g.bench_function("saxpy_64x64", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                total += with_driver(|gpu, drv| {
                    let start = std::time::Instant::now();
                    black_box(ctm_compute::saxpy(drv, gpu).unwrap());
                    start.elapsed()
                });
            }
            total
        });
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
