//! PCI probing over arbitrary configuration spaces (#24 §4): any header, any BAR contents and
//! sizing read-backs, and devices whose registers change from one read to the next. `probe`
//! and `scan` return a typed result for every one of them, never panic, and what they accept
//! is well-formed.

use std::cell::{Cell, RefCell};

use baregpu_hal::pci::{Bar, ConfigRegionAccess, PciAddress, PciError, probe, scan};
use proptest::prelude::*;

/// One function at 00:00.0 whose 64 configuration dwords are arbitrary; a BAR keeps the bits
/// of its sizing mask that are written (flag bits stay). Reads may be perturbed: read `n`
/// XORs `flips[n % len]` into the value, so a register can differ between two reads.
#[derive(Debug)]
struct Hostile {
    regs: RefCell<[u32; 64]>,
    masks: [u32; 6],
    flips: Vec<u32>,
    reads: Cell<usize>,
}

impl ConfigRegionAccess for Hostile {
    unsafe fn read(&self, address: PciAddress, offset: u16) -> u32 {
        if address != PciAddress::new(0, 0, 0, 0) {
            return u32::MAX;
        }
        let n = self.reads.replace(self.reads.get() + 1);
        let flip = if self.flips.is_empty() { 0 } else { self.flips[n % self.flips.len()] };
        self.regs.borrow()[usize::from(offset / 4) % 64] ^ flip
    }

    unsafe fn write(&self, address: PciAddress, offset: u16, value: u32) {
        if address != PciAddress::new(0, 0, 0, 0) {
            return;
        }
        let i = usize::from(offset / 4) % 64;
        let mut regs = self.regs.borrow_mut();
        regs[i] = match i {
            4..=9 => {
                let flags = if regs[i] & 1 == 1 { 0x3 } else { 0xF };
                (value & self.masks[i - 4] & !flags) | (regs[i] & flags)
            }
            _ => value,
        };
    }
}

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
    (header, prop::array::uniform6(mask), flips).prop_map(|(regs, masks, flips)| Hostile {
        regs: RefCell::new(regs),
        masks,
        flips,
        reads: Cell::new(0),
    })
}

/// What a successful probe reports is well-formed: memory BARs have a power-of-two size of
/// at least 16 bytes, a 64-bit BAR's upper slot is empty, and nothing follows slot 5.
fn well_formed(bars: &[Option<Bar>; 6]) -> Result<(), TestCaseError> {
    let mut slot = 0;
    while slot < 6 {
        match bars[slot] {
            Some(Bar::Memory { size, wide, .. }) => {
                prop_assert!(size.is_power_of_two() && size >= 16, "BAR{} size {:#x}", slot, size);
                if wide {
                    prop_assert!(slot < 5, "64-bit BAR{}", slot);
                    prop_assert_eq!(bars[slot + 1], None);
                    slot += 1;
                }
            }
            Some(Bar::Io { port }) => prop_assert_eq!(port & 3, 0),
            None => {}
        }
        slot += 1;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

    #[test]
    fn probe_returns_a_typed_result_for_every_config_space(cfg in hostile()) {
        match probe(&cfg, PciAddress::new(0, 0, 0, 0)) {
            Ok(f) => well_formed(&f.bars)?,
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
            well_formed(&f.bars)?;
        }
    }
}
