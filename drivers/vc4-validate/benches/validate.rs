//! Validation throughput: binning lists (bytes/s) and shaders (instructions/s).
//!
//! The list is the sample's GL list with 200 more draws (Vertex Array Primitives, each
//! checked against the shader state's attribute arrays) before its end; the shader is 1000
//! ALU instructions and a thread end. Quick by design: 20 samples, 1 s measurement.

use std::hint::black_box;
use std::time::Duration;

use baregpu_qpu_asm::isa::{Alu, Instruction, Signal};
use baregpu_vc4_validate::sample::Sample;
use baregpu_vc4_validate::{Buffers, Options, validate_binning_list, validate_shader};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// Bytes of Vertex Array Primitives (33) in the sample list, and where it starts.
const DRAW: std::ops::Range<usize> = 24..34;

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("validate");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));

    let s = Sample::new();
    let buffers = s.buffers();
    let (bytes, len) = s.binning_list(false);
    let mut list = bytes[..DRAW.end].to_vec();
    for _ in 0..200 {
        list.extend_from_slice(&bytes[DRAW]);
    }
    list.extend_from_slice(&bytes[DRAW.end..len]);
    let buffers = Buffers::new(&buffers);
    validate_binning_list(&list, &buffers, &Options::LINUX).unwrap();
    g.throughput(Throughput::Bytes(list.len() as u64));
    g.bench_function("binning_list", |b| {
        b.iter(|| black_box(validate_binning_list(black_box(&list), &buffers, &Options::LINUX)))
    });

    let word = |s: Signal| Instruction::Alu(Alu::signal(s)).encode().unwrap().to_le_bytes();
    let mut code: Vec<u8> = Vec::new();
    for s in
        [Signal::None; 1000].into_iter().chain([Signal::ProgramEnd, Signal::None, Signal::None])
    {
        code.extend_from_slice(&word(s));
    }
    let n = validate_shader(&code).unwrap().instructions;
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function("shader", |b| b.iter(|| black_box(validate_shader(black_box(&code)))));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
