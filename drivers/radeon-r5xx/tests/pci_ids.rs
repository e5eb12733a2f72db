//! The PCI ID table backs every chip the driver claims: each chipset its README (and the
//! repository's) names has device IDs, so `pci::probe` finds a board of that chip instead of
//! returning `NotSupported`.

use baregpu_regs::r5xx::{Chipset, PCI_IDS, identify_pci};

/// R5xx chip names in `text` (`R520`, `RV515`, ...; not the family name `R5xx`).
fn chip_names(text: &str) -> Vec<String> {
    let mut names: Vec<String> = text
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| {
            let digits = w.strip_prefix("RV").or_else(|| w.strip_prefix('R'));
            digits.is_some_and(|d| {
                d.len() == 3 && d.starts_with('5') && d.bytes().all(|b| b.is_ascii_digit())
            })
        })
        .map(str::to_owned)
        .collect();
    names.sort();
    names.dedup();
    names
}

#[test]
fn every_chip_the_readme_names_is_a_chipset_with_pci_ids() {
    let names = chip_names(include_str!("../README.md"));
    assert!(names.len() >= 6, "the README names the R5xx chips: {names:?}");
    for name in &names {
        let chip = Chipset::ALL
            .iter()
            .find(|c| c.name() == name)
            .unwrap_or_else(|| panic!("the README names {name}, which is not a chipset"));
        assert!(PCI_IDS.iter().any(|m| m.chipset == *chip), "{name} is claimed but has no PCI ID");
    }
}

#[test]
fn every_chipset_has_pci_ids_that_identify_it_and_no_id_is_listed_twice() {
    for chip in Chipset::ALL {
        let entries: Vec<_> = PCI_IDS.iter().filter(|m| m.chipset == *chip).collect();
        assert!(!entries.is_empty(), "{} has no PCI ID", chip.name());
        for m in entries {
            assert_eq!(m.vendor, 0x1002, "{}: ATI's vendor ID", chip.name());
            assert!(m.first <= m.last);
            for device in m.first..=m.last {
                assert_eq!(identify_pci(0x1002, device).map(|e| e.chipset), Some(*chip));
            }
        }
    }
    let mut ids: Vec<u16> = PCI_IDS.iter().flat_map(|m| m.first..=m.last).collect();
    let count = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), count, "a device ID is in two ranges");
}

#[test]
fn the_rv560_and_rv570_boards_are_identified() {
    // Linux drm_pciids.h: 0x7291 is an RV560 (X1650 XT), 0x7280 an RV570 (X1950 Pro).
    assert_eq!(identify_pci(0x1002, 0x7291).map(|m| m.chipset), Some(Chipset::RV560));
    assert_eq!(identify_pci(0x1002, 0x7280).map(|m| m.chipset), Some(Chipset::RV570));
    // 0x7148 is in no Linux list: not claimed.
    assert_eq!(identify_pci(0x1002, 0x7148), None);
}
