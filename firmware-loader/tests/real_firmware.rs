//! The real images from Debian's firmware-amd-graphics (installed by `scripts/setup.sh`).

mod common;

use baregpu_firmware::FirmwareError;
use baregpu_firmware::amd::evergreen::{EvergreenUcode, MeMicrocode, PfpMicrocode};
use baregpu_firmware::amd::r5xx;
use baregpu_firmware::amd::{CpFirmwareKind, CpMicrocode, MeRamEntry, UploadReport};
use common::*;

#[test]
fn r520_cp_parses_as_256_entries() {
    let bytes = real_firmware("R520_cp.bin");
    let fw = CpMicrocode::parse(&bytes).expect("R520_cp.bin is valid");
    assert_eq!(fw.kind(), &CpFirmwareKind::R520);
    assert_eq!(fw.kind().file(), "radeon/R520_cp.bin");
    assert_eq!(fw.len(), 256);
    assert_eq!(fw.entry(0), Some(MeRamEntry { high: 0, low: 0x4200_e000 }));
    // Every high word fits 8 bits (the parse checked), and some use it.
    assert!(fw.entries().any(|e| e.high != 0));
}

#[test]
fn r520_cp_uploads_with_513_writes_and_verifies() {
    let bytes = real_firmware("R520_cp.bin");
    let fw = CpMicrocode::parse(&bytes).unwrap();
    let dev = FakeMeRam::new();
    let report = r5xx::upload(&dev, &fw).expect("upload");
    assert_eq!(
        report,
        UploadReport { entries: 256, load_writes: 513, verify_writes: 1, reads: 514 }
    );
    let ram = dev.ram();
    for (i, e) in fw.entries().enumerate() {
        assert_eq!(ram[i], e, "entry {i}");
    }
}

#[test]
fn r520_cp_with_a_corrupted_entry_is_rejected() {
    let mut bytes = real_firmware("R520_cp.bin");
    bytes[17 * 8] = 0x01; // high word 0x01xxxxxx
    match CpMicrocode::parse(&bytes) {
        Err(FirmwareError::EntryOutOfRange { index: 17, high }) => assert!(high >= 0x0100_0000),
        other => panic!("expected EntryOutOfRange at 17, got {other:?}"),
    }
}

#[test]
fn cypress_pfp_and_me_parse() {
    let pfp = real_firmware("CYPRESS_pfp.bin");
    let me = real_firmware("CYPRESS_me.bin");
    let pfp = PfpMicrocode::parse(&pfp, &EvergreenUcode::CYPRESS).expect("CYPRESS_pfp.bin");
    let me = MeMicrocode::parse(&me, &EvergreenUcode::CYPRESS).expect("CYPRESS_me.bin");
    assert_eq!(pfp.len(), 1120);
    assert_eq!(me.len(), 1376);
    assert_eq!(pfp.words().len(), 1120);
    // Big-endian: the first word of both images is 0x7c408000.
    assert_eq!(pfp.word(0), Some(0x7c40_8000));
    assert_eq!(me.word(0), Some(0x7c40_8000));
    assert_eq!(pfp.words().next(), pfp.word(0));
    assert_eq!(me.word(1376), None);
}

#[test]
fn cypress_images_are_not_interchangeable() {
    let pfp = real_firmware("CYPRESS_pfp.bin");
    let me = real_firmware("CYPRESS_me.bin");
    assert_eq!(
        MeMicrocode::parse(&pfp, &EvergreenUcode::CYPRESS),
        Err(FirmwareError::WrongSize { expected: 1376 * 4, found: 1120 * 4 })
    );
    assert_eq!(
        PfpMicrocode::parse(&me, &EvergreenUcode::CYPRESS),
        Err(FirmwareError::WrongSize { expected: 1120 * 4, found: 1376 * 4 })
    );
    // Nor is the R5xx image an Evergreen one, or the other way round.
    let r520 = real_firmware("R520_cp.bin");
    assert!(PfpMicrocode::parse(&r520, &EvergreenUcode::CYPRESS).is_err());
    assert!(CpMicrocode::parse(&pfp).is_err());
}

#[test]
fn cayman_pfp_and_me_parse() {
    let pfp = real_firmware("CAYMAN_pfp.bin");
    let me = real_firmware("CAYMAN_me.bin");
    assert_eq!(PfpMicrocode::parse(&pfp, &EvergreenUcode::CAYMAN).map(|p| p.len()), Ok(2176));
    assert_eq!(MeMicrocode::parse(&me, &EvergreenUcode::CAYMAN).map(|m| m.len()), Ok(2176));
}

#[test]
fn rlc_images_parse_and_sets_reject_the_other_chip() {
    use baregpu_firmware::amd::evergreen::{EvergreenFirmware, Image, RlcMicrocode};
    let cypress = ["CYPRESS_pfp.bin", "CYPRESS_me.bin", "CYPRESS_rlc.bin"].map(real_firmware);
    let cayman = ["CAYMAN_pfp.bin", "CAYMAN_me.bin", "CAYMAN_rlc.bin"].map(real_firmware);
    assert_eq!(
        RlcMicrocode::parse(&cypress[2], &EvergreenUcode::CYPRESS).map(|r| r.len()),
        Ok(768)
    );
    assert_eq!(RlcMicrocode::parse(&cayman[2], &EvergreenUcode::CAYMAN).map(|r| r.len()), Ok(1024));
    fn set(
        chip: &'static EvergreenUcode,
        f: &[Vec<u8>; 3],
    ) -> Result<(), baregpu_firmware::amd::evergreen::ImageError> {
        EvergreenFirmware::parse(chip, &f[0], &f[1], &f[2]).map(|_| ())
    }
    assert!(set(&EvergreenUcode::CYPRESS, &cypress).is_ok());
    assert!(set(&EvergreenUcode::CAYMAN, &cayman).is_ok());
    assert_eq!(set(&EvergreenUcode::CAYMAN, &cypress).map_err(|e| e.image), Err(Image::Pfp));
    assert_eq!(set(&EvergreenUcode::CYPRESS, &cayman).map_err(|e| e.image), Err(Image::Pfp));
}
