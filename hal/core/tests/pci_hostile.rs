//! PCI probing over arbitrary configuration spaces (#24 §4): any header, any BAR contents and
//! sizing read-backs, and devices whose registers change from one read to the next. `probe`
//! and `scan` return a typed result for every one of them, never panic, and what they accept
//! is well-formed.

mod hostile_config;

use baregpu_hal::pci::{PciAddress, PciError, probe, scan};
use hostile_config::{Hostile, well_formed};
use proptest::prelude::*;

fn hostile() -> impl Strategy<Value = Hostile> {
    // Mostly endpoints with plausible IDs, so BAR decoding runs; any dword anywhere.
    let header = (any::<[u32; 64]>(), any::<u16>(), prop::bool::weighted(0.9)).prop_map(
        |(mut regs, vendor, endpoint)| {
            if vendor != 0xFFFF {
                regs[0] = (regs[0] & 0xFFFF_0000) | u32::from(vendor);
            }
            if endpoint {
                regs[3] &= !(0x7F << 16);
            }
            regs
        },
    );
    // Sizing masks: real ones (power-of-two sizes), none, or arbitrary bits.
    let mask = prop_oneof![
        (4u32..32).prop_map(|b| !((1u32 << b) - 1)),
        Just(0u32),
        Just(u32::MAX),
        any::<u32>(),
    ];
    let flips = prop_oneof![
        2 => Just(Vec::new()),
        1 => prop::collection::vec(any::<u32>(), 1..8),
        1 => prop::collection::vec(prop_oneof![Just(0u32), Just(0b110), Just(0b1), Just(0xF)], 1..8),
    ];
    (header, prop::array::uniform6(mask), flips)
        .prop_map(|(regs, masks, flips)| Hostile::new(regs, masks, flips))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

    #[test]
    fn probe_returns_a_typed_result_for_every_config_space(cfg in hostile()) {
        match probe(&cfg, PciAddress::new(0, 0, 0, 0)) {
            Ok(f) => well_formed(&f.bars).map_err(TestCaseError::fail)?,
            Err(
                PciError::NoDevice
                | PciError::NotEndpoint
                | PciError::ReservedBarType { .. }
                | PciError::BadBarSize { .. }
                | PciError::WideBarInLastSlot,
            ) => {}
            Err(e) => prop_assert!(false, "unexpected {:?}", e),
        }
    }

    #[test]
    fn scan_visits_only_well_formed_functions(cfg in hostile()) {
        let mut found = Vec::new();
        scan(&cfg, 0, |f| found.push(f));
        prop_assert!(found.len() <= 8);
        for f in found {
            well_formed(&f.bars).map_err(TestCaseError::fail)?;
        }
    }
}
