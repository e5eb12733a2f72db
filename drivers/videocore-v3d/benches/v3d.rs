//! V3D driver figures through the in-process emulated V3D: the cost of building a job's
//! control lists, shader record and vertices (`job::build`, the vc4 list writer) beside the
//! floor for the same bytes (a plain byte store loop), frames per second of the scene (five
//! overlapping triangles with varyings, 192x128, shaded on the model's QPUs) ticked to idle,
//! and doorbells per job.
//!
//! The model runs to idle here (`GPU_MODEL_PACING` is not consulted): these are throughput
//! figures; the tests exercise the paced interleavings. Quick by design: 10 samples, 1 s.

#[path = "../tests/emulated/mod.rs"]
mod emulated;

use std::hint::black_box;
use std::time::Duration;

use baregpu_videocore_v3d::job;
use baregpu_videocore_v3d::{V3d, V3dConfig};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use emulated::*;
use gpu_device_model::{InProcess, InProcessOptions, Pacing, PlatformDevice};

/// Every byte `job::build` writes, in order: binning list, rendering list, then the shader
/// record and vertices.
fn built_bytes(b: &JobBuffers<'_>, built: &baregpu_videocore_v3d::BuiltJob) -> Vec<u8> {
    let len = |r: baregpu_videocore_v3d::ListRange| (r.end.0 - r.start.0) as usize;
    let bytes = |region: &baregpu_videocore_v3d::hal::dma::DmaRegion, n: usize| {
        read_words(region, n.div_ceil(4))
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .take(n)
            .collect::<Vec<u8>>()
    };
    let tris = scene().len();
    let mut all = bytes(&b.binning, len(built.binning));
    all.extend(bytes(&b.rendering, len(built.rendering)));
    all.extend(bytes(&b.vertices, job::vertex_buffer_bytes(tris * 3, 3)));
    all
}

fn bench(c: &mut Criterion) {
    let options = InProcessOptions { pacing: Some(Pacing::RunToIdle), ..Default::default() };
    let device = PlatformDevice::new(v3d_model::V3d::new(), gpu_mailbox::platform::DEVICE_V3D);
    let gpu = InProcess::with_options(device, options).unwrap();
    let mut v3d = V3d::init(&gpu, ModelClock::new(&gpu), None, V3dConfig::default()).unwrap();
    let tris = scene();
    let f = Frame::new(&gpu, (SCENE_W, SCENE_H), (tris.len(), 3), 64 * 1024, &varying_colour());
    let (job, buffers) = (f.job(0xFF00_0000, &tris, 3), &f.buffers);

    let mut g = c.benchmark_group("v3d");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(1))
        .warm_up_time(Duration::from_millis(300));

    // The driver's encoding against the floor for the same bytes, in the same run.
    let built = job::build(&job, &buffers.memory()).unwrap();
    let bytes = built_bytes(buffers, &built);
    println!(
        "bytes per job::build of the scene: {} (lists {} + {}, record and vertices {})",
        bytes.len(),
        built.binning.end.0 - built.binning.start.0,
        built.rendering.end.0 - built.rendering.start.0,
        job::vertex_buffer_bytes(tris.len() * 3, 3)
    );
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.bench_function("build_scene_lists", |b| {
        b.iter(|| job::build(black_box(&job), &buffers.memory()).unwrap())
    });
    let mut plain = vec![0u8; bytes.len()];
    g.bench_function("byte_store_floor", |b| {
        b.iter(|| {
            // One store per byte (`black_box` on each value keeps the loop from becoming a
            // memcpy): the floor for writing a byte stream record by record.
            for (slot, &byte) in plain.iter_mut().zip(black_box(&bytes)) {
                *slot = black_box(byte);
            }
            black_box(&plain);
        })
    });

    g.throughput(Throughput::Elements(1));
    let (submissions, doorbells) = (v3d.stats().submissions, v3d.stats().doorbells);
    g.bench_function("scene_frame", |b| {
        b.iter(|| {
            let fence = v3d.render(black_box(&job), &buffers.memory()).unwrap();
            v3d.wait(&fence, TIMEOUT).unwrap();
        })
    });
    let s = v3d.stats();
    let per_job = (s.doorbells - doorbells) as f64 / (s.submissions - submissions) as f64;
    println!("doorbells per job (scene_frame): {per_job:.3} (CT0EA, CT1EA)");
    assert_eq!(s.doorbells - doorbells, 2 * (s.submissions - submissions));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
