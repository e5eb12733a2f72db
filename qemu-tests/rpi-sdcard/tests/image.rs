//! The image as the Pi and a flashing user see it: one bootable FAT32 partition of type 0x0C
//! with the boot files at its root, byte for byte.

use rpi_sdcard::{
    BootFile, IMAGE_BYTES, PARTITION_START_LBA, PARTITION_TYPE_FAT32_LBA, SdCardError, read_image,
    write_image,
};
use std::path::PathBuf;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rpi-sdcard-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn boot_files() -> Vec<BootFile> {
    // Sizes that end mid-cluster and span many clusters, contents that differ everywhere.
    let noise = |len: usize, seed: u32| -> Vec<u8> {
        let mut x = seed;
        (0..len)
            .map(|_| {
                x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (x >> 24) as u8
            })
            .collect()
    };
    vec![
        BootFile { name: "bootcode.bin".into(), bytes: noise(52_460, 1) },
        BootFile { name: "start.elf".into(), bytes: noise(2_973_536, 2) },
        BootFile { name: "fixup.dat".into(), bytes: noise(7_262, 3) },
        BootFile {
            name: "config.txt".into(),
            bytes: b"arm_64bit=1\nkernel=kernel8.img\n".to_vec(),
        },
        BootFile { name: "kernel8.img".into(), bytes: noise(40_001, 4) },
    ]
}

#[test]
fn the_image_reads_back_as_one_bootable_fat32_partition_with_the_files() {
    let path = scratch("roundtrip.img");
    let files = boot_files();
    write_image(&path, &files).unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), IMAGE_BYTES);
    let back = read_image(&path).unwrap();
    assert_eq!(back.partitions.len(), 1);
    let p = back.partitions[0];
    assert_eq!((p.slot, p.bootable, p.kind), (1, true, PARTITION_TYPE_FAT32_LBA));
    assert_eq!(p.start_lba, PARTITION_START_LBA);
    assert!(back.fat32, "the file system is not FAT32");
    assert_eq!(back.label, "BAREGPU-PI");
    assert_eq!(
        back.names(),
        ["bootcode.bin", "start.elf", "fixup.dat", "config.txt", "kernel8.img"]
    );
    assert_eq!(back.files, files);
    // The MBR's boot signature, where every reader looks first.
    let raw = std::fs::read(&path).unwrap();
    assert_eq!(&raw[510..512], &[0x55, 0xAA]);
    let _ = std::fs::remove_file(&path);
}

#[test]
fn the_same_files_give_the_same_bytes() {
    let (a, b) = (scratch("same-a.img"), scratch("same-b.img"));
    write_image(&a, &boot_files()).unwrap();
    write_image(&b, &boot_files()).unwrap();
    assert!(
        std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap(),
        "the image is not reproducible"
    );
    let _ = std::fs::remove_file(&a);
    let _ = std::fs::remove_file(&b);
}

#[test]
fn bad_input_is_a_typed_error() {
    let path = scratch("bad.img");
    let mut files = boot_files();
    files.push(BootFile { name: "KERNEL8.IMG".into(), bytes: vec![1] });
    assert!(matches!(
        write_image(&path, &files),
        Err(SdCardError::DuplicateName(n)) if n == "KERNEL8.IMG"
    ));
    let huge = [BootFile { name: "big.bin".into(), bytes: vec![0; 64 << 20] }];
    assert!(matches!(write_image(&path, &huge), Err(SdCardError::TooLarge { .. })));
    // A disk with no partition table entries is not an SD-card image.
    std::fs::write(&path, {
        let mut mbr = vec![0u8; 4096];
        mbr[510] = 0x55;
        mbr[511] = 0xAA;
        mbr
    })
    .unwrap();
    assert!(matches!(read_image(&path), Err(SdCardError::PartitionCount(0))));
    let _ = std::fs::remove_file(&path);
}
