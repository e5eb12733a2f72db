//! The PCI ID table backs every chip the driver claims: Cypress and Cayman (named by its
//! README) have every device ID Linux radeon lists for them, so `pci::probe` finds any of
//! their boards instead of returning `NotSupported`.

use baregpu_regs::evergreen::{Chipset, PCI_IDS, identify_pci};

#[test]
fn every_chipset_the_readme_names_has_pci_ids() {
    let readme = include_str!("../README.md").to_ascii_uppercase();
    let named: Vec<_> = Chipset::ALL.iter().filter(|c| readme.contains(c.name())).collect();
    assert_eq!(named.len(), Chipset::ALL.len(), "the README names every chipset");
    for chip in named {
        assert!(PCI_IDS.iter().any(|m| m.chipset == *chip), "{} has no PCI ID", chip.name());
    }
}

#[test]
fn the_ids_cover_desktop_mobility_and_firepro_boards_and_none_twice() {
    // Linux drm_pciids.h: 0x6880 mobility Cypress, 0x6888 FirePro Cypress, 0x689e Cypress;
    // 0x6700 and 0x671f Cayman.
    for (device, chip) in [
        (0x6880, Chipset::CYPRESS),
        (0x6888, Chipset::CYPRESS),
        (0x6898, Chipset::CYPRESS),
        (0x689e, Chipset::CYPRESS),
        (0x6700, Chipset::CAYMAN),
        (0x6718, Chipset::CAYMAN),
        (0x671f, Chipset::CAYMAN),
    ] {
        assert_eq!(identify_pci(0x1002, device).map(|m| m.chipset), Some(chip), "{device:#x}");
    }
    // Hemlock (two Cypress dies behind a bridge) is its own chip in Linux: not claimed.
    assert_eq!(identify_pci(0x1002, 0x689c), None);
    let mut ids: Vec<u16> = PCI_IDS.iter().flat_map(|m| m.first..=m.last).collect();
    let count = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), count, "a device ID is in two ranges");
    assert_eq!(count, 25, "10 Cypress and 15 Cayman IDs");
}
