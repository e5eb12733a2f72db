//! Copy-engine bytes per second through the driver and the emulated GT215 in process: copy
//! methods submitted on an IB-mode channel, delivered by PFIFO to PCOPY's method FIFO, the
//! copy-engine firmware (`baregpu-falcon-asm`) moving 64 KiB with 256-byte xfers and releasing
//! its semaphore; the driver waits for the fence and the semaphore. Run-to-idle pacing.
//!
//! Quick by design: 10 samples, 3 s measurement.

#[path = "../tests/model/mod.rs"]
mod model;

use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use gpu_device_model::Pacing;
use model::CopyRig;

const BYTES: usize = 64 * 1024;

fn bench(c: &mut Criterion) {
    let mut rig = CopyRig::new(Pacing::RunToIdle, BYTES);
    let data: Vec<u32> = (0..BYTES as u32 / 4).map(|i| i.wrapping_mul(0x9e37_79b9)).collect();
    rig.src.write_slice(0, &data).unwrap();
    rig.copy(BYTES as u32);
    let mut copied = vec![0u32; data.len()];
    rig.dst.read_slice(0, &mut copied).unwrap();
    assert_eq!(copied, data, "the copy is the source");

    let mut g = c.benchmark_group("gt215_copy_engine");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(3))
        .throughput(Throughput::Bytes(BYTES as u64));
    g.bench_function("copy_64k", |b| b.iter(|| rig.copy(BYTES as u32)));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
