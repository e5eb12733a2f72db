//! R5xx CP microcode (`radeon/R520_cp.bin`): any bytes are either refused with a typed error
//! or accepted as exactly 256 entries whose high words fit ME_RAM_DATAH (8 bits), every entry
//! readable; never a panic.
#![no_main]

use baregpu_firmware::amd::{CpFirmwareKind, CpMicrocode};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    for kind in [&CpFirmwareKind::R520] {
        if let Ok(fw) = CpMicrocode::parse_for(bytes, kind) {
            assert_eq!(fw.len() * 8, bytes.len());
            assert_eq!(fw.entries().len(), fw.len());
            for (i, e) in fw.entries().enumerate() {
                assert_eq!(fw.entry(i), Some(e));
            }
            assert!(fw.entry(fw.len()).is_none());
        }
    }
});
