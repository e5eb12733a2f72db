//! SD-card image build time against a floor measured in the same run: `write_image` of the
//! Pi's boot files (the sizes of Debian raspi-firmware 1.20220830's `bootcode.bin`,
//! `start.elf`, `fixup.dat`, a `config.txt` and a 105 KiB `kernel8.img`, contents synthetic)
//! vs `copy_floor`, the same bytes written into one file with `std::fs::write` (what any image
//! writer must at least do). The ratio is the cost of the MBR, the FAT32 format (two 512 KiB
//! FATs) and the directory.
//!
//! Quick by design: 20 samples, 4 s measurement per function: `cargo bench -p rpi-sdcard`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rpi_sdcard::{BootFile, write_image};

fn boot_files() -> Vec<BootFile> {
    [
        ("bootcode.bin", 52_460),
        ("start.elf", 2_973_536),
        ("fixup.dat", 7_262),
        ("config.txt", 811),
        ("kernel8.img", 105_240),
    ]
    .iter()
    .enumerate()
    .map(|(i, &(name, len))| BootFile {
        name: name.into(),
        bytes: (0..len).map(|j| (j as u8) ^ (i as u8 * 37)).collect(),
    })
    .collect()
}

fn bench(c: &mut Criterion) {
    let files = boot_files();
    let payload: Vec<u8> = files.iter().flat_map(|f| f.bytes.iter().copied()).collect();
    let dir = std::env::temp_dir().join(format!("rpi-sdcard-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("bench directory");
    let (image, copy) = (dir.join("sdcard.img"), dir.join("copy.bin"));
    let mut group = c.benchmark_group("sdcard");
    group.sample_size(20).measurement_time(Duration::from_secs(4));
    group.throughput(Throughput::Bytes(payload.len() as u64));
    group.bench_function("write_image", |b| {
        b.iter(|| write_image(black_box(&image), black_box(&files)).expect("image"))
    });
    group.bench_function("copy_floor", |b| {
        b.iter(|| std::fs::write(black_box(&copy), black_box(&payload)).expect("copy"))
    });
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, bench);
criterion_main!(benches);
