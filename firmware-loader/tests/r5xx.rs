//! R5xx CP MicroEngine microcode: validation (no register access on any error) and upload /
//! read-back against a fake of the §5.12/§5.13 port semantics.

mod common;

use baregpu_firmware::FirmwareError;
use baregpu_firmware::amd::r5xx::{self, ME_RAM_ENTRIES};
use baregpu_firmware::amd::{CpFirmwareKind, CpMicrocode, LoadError, MeRamEntry, UploadReport};
use common::*;

/// Parse, and upload only if the image is valid; returns the parse result and the number of
/// register accesses made.
fn parse_then_upload(bytes: &[u8]) -> (Result<UploadReport, FirmwareError>, usize) {
    let io = Recorder::new();
    let result = CpMicrocode::parse(bytes).map(|fw| r5xx::upload(&io, &fw).expect("upload"));
    (result, io.accesses())
}

fn assert_rejected(bytes: &[u8], expected: FirmwareError) {
    let (result, accesses) = parse_then_upload(bytes);
    assert_eq!(result, Err(expected), "image of {} bytes", bytes.len());
    assert_eq!(accesses, 0, "a rejected image must not touch a register");
}

#[test]
fn empty_is_rejected() {
    assert_rejected(&[], FirmwareError::Empty);
}

#[test]
fn seven_bytes_is_a_truncated_entry() {
    assert_rejected(&[0; 7], FirmwareError::TruncatedEntry { len: 7, entry_bytes: 8 });
}

#[test]
fn one_byte_short_is_a_truncated_entry() {
    let image = synthetic_image();
    assert_rejected(&image[..2047], FirmwareError::TruncatedEntry { len: 2047, entry_bytes: 8 });
}

#[test]
fn one_byte_long_is_a_truncated_entry() {
    let mut image = synthetic_image();
    image.push(0);
    assert_rejected(&image, FirmwareError::TruncatedEntry { len: 2049, entry_bytes: 8 });
}

#[test]
fn one_entry_too_many_is_the_wrong_size() {
    let mut image = synthetic_image();
    image.extend_from_slice(&[0; 8]);
    assert_rejected(&image, FirmwareError::WrongSize { expected: 2048, found: 2056 });
}

#[test]
fn one_entry_too_few_is_the_wrong_size() {
    let image = synthetic_image();
    assert_rejected(&image[..2040], FirmwareError::WrongSize { expected: 2048, found: 2040 });
    assert_rejected(&[0; 8], FirmwareError::WrongSize { expected: 2048, found: 8 });
}

#[test]
fn a_high_word_beyond_8_bits_names_the_entry() {
    for (index, high) in [(0usize, 0x100u32), (17, 0x1ff), (200, 0x8000_0000), (255, 0xffff_ffff)] {
        let mut image = synthetic_image();
        image[index * 8..index * 8 + 4].copy_from_slice(&high.to_be_bytes());
        assert_rejected(&image, FirmwareError::EntryOutOfRange { index, high });
    }
}

#[test]
fn the_first_bad_entry_is_reported() {
    let mut image = synthetic_image();
    image[40 * 8..40 * 8 + 4].copy_from_slice(&0x200u32.to_be_bytes());
    image[30 * 8..30 * 8 + 4].copy_from_slice(&0x300u32.to_be_bytes());
    assert_rejected(&image, FirmwareError::EntryOutOfRange { index: 30, high: 0x300 });
}

#[test]
fn high_word_0xff_is_the_largest_legal_value() {
    let mut image = synthetic_image();
    image[5 * 8..5 * 8 + 8].copy_from_slice(&[0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff]);
    let fw = CpMicrocode::parse(&image).expect("0xff fits ME_RAM_DATAH");
    assert_eq!(fw.entry(5), Some(MeRamEntry { high: 0xff, low: 0xffff_ffff }));
}

#[test]
fn errors_display_their_details() {
    let cases = [
        (FirmwareError::Empty, "empty"),
        (FirmwareError::TruncatedEntry { len: 2047, entry_bytes: 8 }, "2047 bytes"),
        (FirmwareError::WrongSize { expected: 2048, found: 2056 }, "exactly 2048"),
        (FirmwareError::EntryOutOfRange { index: 17, high: 0x1ff }, "entry 17: high word 0x1ff"),
    ];
    for (e, needle) in cases {
        let s = e.to_string();
        assert!(s.contains(needle), "{s:?} should contain {needle:?}");
    }
    let e = LoadError::Readback {
        index: 17,
        expected: MeRamEntry { high: 1, low: 2 },
        found: MeRamEntry { high: 1, low: 3 },
    };
    assert_eq!(
        e.to_string(),
        "MicroEngine RAM entry 17 reads back 0x01_00000003, expected 0x01_00000002"
    );
    assert!(LoadError::DeviceGone { entry: None }.to_string().contains("not answering"));
}

#[test]
fn a_smaller_kind_plugs_in() {
    static SMALL: CpFirmwareKind = CpFirmwareKind::new("TEST", "radeon/TEST_cp.bin", 4);
    let image = synthetic_image();
    let fw = CpMicrocode::parse_for(&image[..32], &SMALL).expect("4 entries");
    assert_eq!(fw.len(), 4);
    assert_eq!(fw.kind().name(), "TEST");
    let dev = FakeMeRam::new();
    let report = r5xx::upload(&dev, &fw).expect("upload");
    assert_eq!(report.load_writes, 1 + 8);
    assert_eq!(
        CpMicrocode::parse_for(&image, &SMALL),
        Err(FirmwareError::WrongSize { expected: 32, found: 2048 })
    );
}

#[test]
#[should_panic(expected = "entries must be 1..=256")]
fn a_kind_larger_than_the_ram_is_refused() {
    let _ = CpFirmwareKind::new("BIG", "radeon/BIG_cp.bin", ME_RAM_ENTRIES + 1);
}

#[test]
fn entries_decode_big_endian_high_then_low() {
    let image = synthetic_image();
    let fw = CpMicrocode::parse(&image).unwrap();
    assert_eq!(fw.len(), 256);
    assert_eq!(fw.entries().len(), 256);
    assert_eq!(fw.entry(3), Some(MeRamEntry { high: 3, low: 0x0303_0303 ^ 0x8000_0001 }));
    assert_eq!(fw.entry(256), None);
    assert_eq!(fw.entry(usize::MAX), None);
    assert_eq!(fw.entries().nth(255), fw.entry(255));
}

// ---- upload against the fake ----------------------------------------------------------------

#[test]
fn upload_writes_addr_once_then_pairs_and_verifies() {
    let image = synthetic_image();
    let fw = CpMicrocode::parse(&image).unwrap();
    let dev = FakeMeRam::new();
    let report = r5xx::upload(&dev, &fw).expect("upload");

    assert_eq!(
        report,
        UploadReport { entries: 256, load_writes: 1 + 512, verify_writes: 1, reads: 2 + 512 }
    );
    assert_eq!(dev.writes(), 1 + 512 + 1);
    assert_eq!(dev.reads(), 2 + 512);

    // The RAM holds exactly the image.
    let ram = dev.ram();
    for (i, e) in fw.entries().enumerate() {
        assert_eq!(ram[i], e, "entry {i}");
    }

    // The exact sequence: readiness reads, ADDR = 0 once, DATAH/DATAL pairs, RADDR = 0 once,
    // DATAH/DATAL reads.
    let log = dev.log();
    assert_eq!(&log[..2], &[Access::Read(ME_CNTL), Access::Read(CSQ_CNTL)]);
    assert_eq!(log[2], Access::Write(ADDR, 0));
    for (i, e) in fw.entries().enumerate() {
        assert_eq!(log[3 + 2 * i], Access::Write(DATAH, e.high as u32), "entry {i}");
        assert_eq!(log[4 + 2 * i], Access::Write(DATAL, e.low), "entry {i}");
    }
    assert_eq!(log[3 + 512], Access::Write(RADDR, 0));
    for i in 0..256 {
        assert_eq!(log[4 + 512 + 2 * i], Access::Read(DATAH));
        assert_eq!(log[5 + 512 + 2 * i], Access::Read(DATAL));
    }
    assert_eq!(log.len(), 4 + 512 + 512);
    assert_eq!(log.iter().filter(|a| matches!(a, Access::Write(ADDR, _))).count(), 1);
}

#[test]
fn load_alone_is_one_plus_two_per_entry() {
    let image = synthetic_image();
    let fw = CpMicrocode::parse(&image).unwrap();
    let dev = FakeMeRam::new();
    assert_eq!(r5xx::load(&dev, &fw), 513);
    assert_eq!(dev.writes(), 513);
    assert_eq!(dev.reads(), 0);
    assert_eq!(r5xx::verify(&dev, &fw), Ok(()));
}

#[test]
fn a_flipped_bit_in_entry_17_is_a_readback_error() {
    let image = synthetic_image();
    let fw = CpMicrocode::parse(&image).unwrap();
    let expected = fw.entry(17).unwrap();
    for bit in [0u32, 31, 32, 39] {
        let dev = FakeMeRam::new().with_fault(Fault::FlipOnRead { entry: 17, bit });
        let flipped = expected.to_u64() ^ (1 << bit);
        let found = MeRamEntry { high: (flipped >> 32) as u8, low: flipped as u32 };
        assert_eq!(
            r5xx::upload(&dev, &fw),
            Err(LoadError::Readback { index: 17, expected, found }),
            "bit {bit}"
        );
        // It stopped at the first mismatch.
        assert_eq!(dev.reads(), 2 + 2 * 18);
    }
}

#[test]
fn a_lost_datah_write_is_caught_at_the_first_entry_with_a_high_byte() {
    let image = synthetic_image();
    let fw = CpMicrocode::parse(&image).unwrap();
    let dev = FakeMeRam::new().with_fault(Fault::StuckDatah);
    // Entry 0 has high = 0, which the stuck holding register (0 after reset) matches.
    match r5xx::upload(&dev, &fw) {
        Err(LoadError::Readback { index: 1, expected, found }) => {
            assert_eq!(expected.high, 1);
            assert_eq!(found.high, 0);
            assert_eq!(found.low, expected.low);
        }
        other => panic!("expected a readback error at entry 1, got {other:?}"),
    }
}

#[test]
fn an_all_ones_device_is_gone_before_anything_is_written() {
    let image = synthetic_image();
    let fw = CpMicrocode::parse(&image).unwrap();
    let dev = FakeMeRam::new().with_fault(Fault::Gone);
    assert_eq!(r5xx::upload(&dev, &fw), Err(LoadError::DeviceGone { entry: None }));
    assert_eq!(dev.writes(), 0);
    assert_eq!(dev.log(), vec![Access::Read(ME_CNTL)]);
}

#[test]
fn a_device_lost_during_readback_is_gone_not_a_mismatch() {
    let image = synthetic_image();
    let fw = CpMicrocode::parse(&image).unwrap();
    let dev = FakeMeRam::new().with_fault(Fault::GoneAtReadback);
    assert_eq!(r5xx::upload(&dev, &fw), Err(LoadError::DeviceGone { entry: Some(0) }));
    // `verify` on its own reports the same.
    assert_eq!(r5xx::verify(&dev, &fw), Err(LoadError::DeviceGone { entry: Some(0) }));
}

#[test]
fn an_all_ones_entry_in_the_image_is_not_mistaken_for_a_dead_device() {
    let mut image = synthetic_image();
    image[..8].copy_from_slice(&[0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff]);
    let fw = CpMicrocode::parse(&image).unwrap();
    let dev = FakeMeRam::new();
    r5xx::upload(&dev, &fw).expect("a live device holding 0xff_ffffffff verifies");
    // Dead at read-back: entry 0 compares equal under the 8-bit DATAH mask, entry 1 does not.
    let dev = FakeMeRam::new().with_fault(Fault::GoneAtReadback);
    assert_eq!(r5xx::upload(&dev, &fw), Err(LoadError::DeviceGone { entry: Some(1) }));
}

#[test]
fn a_busy_microengine_is_refused_without_writes() {
    let image = synthetic_image();
    let fw = CpMicrocode::parse(&image).unwrap();
    let dev = FakeMeRam::new();
    dev.state.borrow_mut().me_cntl |= 1 << 29; // ME_BUSY
    assert_eq!(r5xx::upload(&dev, &fw), Err(LoadError::MicroEngineBusy));
    assert_eq!(r5xx::check_ready(&dev), Err(LoadError::MicroEngineBusy));
    assert_eq!(dev.writes(), 0);
}

#[test]
fn enabled_command_streams_are_refused_without_writes() {
    let image = synthetic_image();
    let fw = CpMicrocode::parse(&image).unwrap();
    let dev = FakeMeRam::new();
    dev.state.borrow_mut().csq_cntl = 4 << 28; // Primary BM, Indirect BM
    assert_eq!(r5xx::upload(&dev, &fw), Err(LoadError::CommandStreamsEnabled { csq_mode: 4 }));
    assert_eq!(dev.writes(), 0);
}

#[test]
fn upload_is_idempotent() {
    let image = synthetic_image();
    let fw = CpMicrocode::parse(&image).unwrap();
    let dev = FakeMeRam::new();
    let first = r5xx::upload(&dev, &fw).unwrap();
    let second = r5xx::upload(&dev, &fw).unwrap();
    assert_eq!(first, second);
}

// ---- the fake itself follows §5.12/§5.13 -------------------------------------------------------

#[test]
fn fake_read_path_auto_increments_from_raddr() {
    use baregpu_hal::RegisterIo;
    let dev = FakeMeRam::new();
    dev.write32(ADDR, 10);
    dev.write32(DATAH, 0x1ab); // only the low 8 bits are kept
    dev.write32(DATAL, 0x1111_1111);
    dev.write32(DATAH, 0xcd);
    dev.write32(DATAL, 0x2222_2222);
    assert_eq!(dev.read32(ADDR), 12);
    dev.write32(RADDR, 10);
    assert_eq!((dev.read32(DATAH), dev.read32(DATAL)), (0xab, 0x1111_1111));
    assert_eq!((dev.read32(DATAH), dev.read32(DATAL)), (0xcd, 0x2222_2222));
}
