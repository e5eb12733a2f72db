//! Evergreen PFP/ME image validation on synthetic inputs.

use baregpu_firmware::FirmwareError;
use baregpu_firmware::amd::evergreen::{EvergreenUcode, MeMicrocode, PfpMicrocode};

#[test]
fn malformed_images_are_rejected() {
    let c = &EvergreenUcode::CYPRESS;
    assert_eq!(PfpMicrocode::parse(&[], c), Err(FirmwareError::Empty));
    assert_eq!(MeMicrocode::parse(&[], c), Err(FirmwareError::Empty));
    assert_eq!(
        PfpMicrocode::parse(&[0; 3], c),
        Err(FirmwareError::TruncatedEntry { len: 3, entry_bytes: 4 })
    );
    assert_eq!(
        PfpMicrocode::parse(&[0; 4479], c),
        Err(FirmwareError::TruncatedEntry { len: 4479, entry_bytes: 4 })
    );
    assert_eq!(
        PfpMicrocode::parse(&[0; 4484], c),
        Err(FirmwareError::WrongSize { expected: 4480, found: 4484 })
    );
    assert_eq!(
        MeMicrocode::parse(&[0; 5500], c),
        Err(FirmwareError::WrongSize { expected: 5504, found: 5500 })
    );
}

#[test]
fn words_are_big_endian() {
    let mut bytes = vec![0u8; 1120 * 4];
    bytes[..8].copy_from_slice(&[0x12, 0x34, 0x56, 0x78, 0xff, 0xff, 0xff, 0xff]);
    let pfp = PfpMicrocode::parse(&bytes, &EvergreenUcode::CYPRESS).unwrap();
    assert_eq!(pfp.word(0), Some(0x1234_5678));
    assert_eq!(pfp.word(1), Some(0xffff_ffff));
    assert_eq!(pfp.chip().chip(), "CYPRESS");
    assert_eq!(pfp.chip().pfp_file(), "radeon/CYPRESS_pfp.bin");
}

#[test]
fn descriptor_sizes_match_hardware_facts() {
    let c = EvergreenUcode::CYPRESS;
    assert_eq!((c.pfp_dwords(), c.me_dwords()), (1120, 1376));
    let k = EvergreenUcode::CAYMAN;
    assert_eq!((k.pfp_dwords(), k.me_dwords()), (2176, 2176));
    assert_eq!(k.me_file(), "radeon/CAYMAN_me.bin");
}
