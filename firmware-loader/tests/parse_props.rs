//! Property tests: `parse` never panics and accepts exactly the well-formed images; every valid
//! image uploads and verifies against the fake.

mod common;

use baregpu_firmware::FirmwareError;
use baregpu_firmware::amd::evergreen::{EvergreenUcode, MeMicrocode, PfpMicrocode};
use baregpu_firmware::amd::r5xx;
use baregpu_firmware::amd::{CpMicrocode, MeRamEntry};
use common::*;
use proptest::prelude::*;

proptest! {
    #[test]
    fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..6000)) {
        let _ = CpMicrocode::parse(&bytes);
        let _ = PfpMicrocode::parse(&bytes, &EvergreenUcode::CYPRESS);
        let _ = MeMicrocode::parse(&bytes, &EvergreenUcode::CAYMAN);
    }

    #[test]
    fn parse_classifies_lengths(len in 0usize..4200) {
        let bytes = vec![0u8; len];
        let expected = if len == 0 {
            Err(FirmwareError::Empty)
        } else if len % 8 != 0 {
            Err(FirmwareError::TruncatedEntry { len, entry_bytes: 8 })
        } else if len != 2048 {
            Err(FirmwareError::WrongSize { expected: 2048, found: len })
        } else {
            Ok(())
        };
        prop_assert_eq!(CpMicrocode::parse(&bytes).map(|_| ()), expected);
    }

    #[test]
    fn full_size_images_are_valid_iff_every_high_word_fits(
        words in proptest::collection::vec(
            prop_oneof![4 => 0u32..=0xff, 1 => any::<u32>()], 512)
    ) {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_be_bytes()).collect();
        let first_bad = (0..256).find(|&i| words[2 * i] > 0xff);
        match (CpMicrocode::parse(&bytes), first_bad) {
            (Ok(fw), None) => {
                for (i, e) in fw.entries().enumerate() {
                    prop_assert_eq!(e, MeRamEntry { high: words[2 * i] as u8, low: words[2 * i + 1] });
                }
            }
            (Err(e), Some(index)) => prop_assert_eq!(
                e, FirmwareError::EntryOutOfRange { index, high: words[2 * index] }
            ),
            (got, want) => prop_assert!(false, "parse gave {:?}, first bad entry {:?}", got, want),
        }
    }

    #[test]
    fn every_valid_image_uploads_and_verifies(
        entries in proptest::collection::vec((any::<u8>(), any::<u32>()), 256)
    ) {
        let bytes: Vec<u8> = entries
            .iter()
            .flat_map(|&(h, l)| (h as u32).to_be_bytes().into_iter().chain(l.to_be_bytes()))
            .collect();
        let fw = CpMicrocode::parse(&bytes).expect("valid by construction");
        let dev = FakeMeRam::new();
        let report = r5xx::upload(&dev, &fw).expect("upload");
        prop_assert_eq!(report.load_writes, 513);
        let ram = dev.ram();
        for (i, &(high, low)) in entries.iter().enumerate() {
            prop_assert_eq!(ram[i], MeRamEntry { high, low });
        }
    }
}
