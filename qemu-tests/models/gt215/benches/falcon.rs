//! Falcon instructions per second in the emulated GT215: a counting loop (`sub`, `bra ne`)
//! on PDAEMON, hand-encoded from §2.10.2's formats, started through `UC_CTRL` and run to its
//! `exit` under run-to-idle pacing (every register access ticks the device). Throughput is in
//! instructions; the setup checks the model executed exactly that many.
//!
//! Quick by design: 20 samples, 2 s measurement.

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::Duration;

use common::*;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// Loop iterations (a positive 16-bit immediate).
const N: u32 = 0x7fff;
/// `mov`, then `sub` and `bra` per iteration, then `exit`.
const INSNS: u64 = 1 + 2 * N as u64 + 1;

fn bench(c: &mut Criterion) {
    let gpu = gpu();
    let falcon = Falcon::new(&gpu, Engine::Pdaemon);
    falcon.upload_code(
        0,
        0,
        &program(&[
            &[0xf1, 0x07, N as u8, (N >> 8) as u8], // 00 f1/7 mov $r0, N
            &[0xb6, 0x02, 0x01],                    // 04 36/2 b32 sub $r0, 1
            &[0xf4, 0x1b, 0xfd],                    // 07 f4/1b bra ne 0x04 (-3)
            &[0xf8, 0x02],                          // 0a f8/2 exit
        ]),
    );
    let run = || {
        falcon.start(0);
        assert!(falcon.wait_halted(1_000_000), "the loop ends");
    };
    let before = gpu.model().falcon(Engine::Pdaemon).executed();
    run();
    assert_eq!(gpu.model().falcon(Engine::Pdaemon).executed() - before, INSNS);

    let mut g = c.benchmark_group("gt215_falcon");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
        .throughput(Throughput::Elements(INSNS));
    g.bench_function("counting_loop", |b| b.iter(run));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
