//! Assembly throughput: the example kernels from text for each chip, and a five-slot group
//! whose bank swizzles need a search through hundreds of combinations.
//!
//! Quick by design: 20 samples, 1 s measurement: `cargo bench -p baregpu-evergreen-asm` takes
//! seconds.

use std::hint::black_box;
use std::time::Duration;

use baregpu_evergreen_asm::{Chip, Node, assemble, examples};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// Bank x must read r2, r3 and r4 in its three cycles and bank y r5, r6 and r8: the first
/// fitting swizzle combination (x 0, y 4, z 2, w 4, t 1) is number 642 of the 6^4 * 4 tried.
const DENSE_GROUP: &str = "\
alu
{ add r1.x, r2.x, r3.x
  add r1.y, r4.x, r5.y
  add r1.z, r6.y, r7.z
  add r1.w, r8.y, r9.w
  add r2.x, r10.z, r11.w }
end";
fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("assemble");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    let mut nodes = [Node::EMPTY; 128];
    let mut words = [0u32; 512];
    for chip in Chip::ALL {
        let bytes: usize = examples::ALL.iter().map(|(_, s)| s.len()).sum();
        g.throughput(Throughput::Bytes(bytes as u64));
        g.bench_function(format!("examples_{}", chip.name()), |b| {
            b.iter(|| {
                for (_, src) in examples::ALL {
                    black_box(assemble(black_box(src), chip, &mut nodes, &mut words).unwrap());
                }
            })
        });
    }
    g.throughput(Throughput::Elements(1));
    assemble(DENSE_GROUP, Chip::Evergreen, &mut nodes, &mut words).expect("the dense group fits");
    g.bench_function("dense_group_Evergreen", |b| {
        b.iter(|| {
            black_box(
                assemble(black_box(DENSE_GROUP), Chip::Evergreen, &mut nodes, &mut words).unwrap(),
            )
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
