//! Evergreen/Cayman PFP, ME and RLC microcode: any bytes are either refused with a typed error or
//! accepted as exactly the chip's dword count, every word readable; never a panic.
#![no_main]

use baregpu_firmware::amd::evergreen::{EvergreenUcode, MeMicrocode, PfpMicrocode, RlcMicrocode};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    for chip in [&EvergreenUcode::CYPRESS, &EvergreenUcode::CAYMAN] {
        if let Ok(fw) = PfpMicrocode::parse(bytes, chip) {
            assert_eq!(fw.len(), chip.pfp_dwords());
            assert_eq!(fw.words().count(), fw.len());
            assert!(fw.word(fw.len()).is_none());
        }
        if let Ok(fw) = MeMicrocode::parse(bytes, chip) {
            assert_eq!(fw.len(), chip.me_dwords());
            assert_eq!(fw.words().count(), fw.len());
            assert!(fw.word(fw.len()).is_none());
        }
        if let Ok(fw) = RlcMicrocode::parse(bytes, chip) {
            assert_eq!(fw.len(), chip.rlc_dwords());
            assert_eq!(fw.words().count(), fw.len());
        }
    }
});
