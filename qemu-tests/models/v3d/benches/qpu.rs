//! QPU instructions per second in the model: a counting loop (six instructions an iteration:
//! fadd, sub with flags, branch, three delay slots) run as a user program through the SRQ on
//! one QPU and on all twelve, ticked to idle.
//!
//! Quick by design: 10 samples, 2 s measurement: `cargo bench -p v3d-model` takes seconds.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

#[path = "../tests/common/mod.rs"]
mod common;
use common::*;

const ITERATIONS: u32 = 10_000;

fn counting_loop() -> Vec<u64> {
    let imm = |v: u64| I { sig: 13, raddr_b: v, ..NOP };
    let small = |i: I, v: u64| I { sig: imm(v).sig, raddr_b: imm(v).raddr_b, ..i }.word();
    let mut p = vec![ldi(R0, 0), ldi(R1, ITERATIONS)];
    p.push(w(add_op(1, R0, M_R0, M_R1)));
    p.push(small(I { sf: 1, ..add_op(13, R1, M_R1, M_B) }, 1));
    // Back to the fadd: the target counts from the instruction after the delay slots.
    p.push(branch(3, true, -6 * 8));
    p.extend([w(NOP), w(NOP), w(NOP)]);
    p.extend(end());
    p
}

/// Run `programs` copies of the loop on `b` to completion; the instructions they ran.
fn run(b: &mut Bench, programs: u32) -> u64 {
    let (before, done) = (b.model().stats().instructions, b.completed());
    for _ in 0..programs {
        b.submit(CODE, 0, 0);
    }
    b.run(u32::MAX);
    assert_eq!(b.completed(), (done + programs) % 256);
    b.model().stats().instructions - before
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("qpu");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    let mut b = Bench::new();
    b.code(CODE, &counting_loop());
    for programs in [1, 12] {
        g.throughput(Throughput::Elements(run(&mut b, programs)));
        g.bench_function(format!("counting_loop_{programs}_qpus"), |bench| {
            bench.iter(|| black_box(run(&mut b, black_box(programs))))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
