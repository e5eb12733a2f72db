//! A hostile PCI configuration space, shared by `tests/pci_hostile.rs` and the `pci_probe`
//! fuzz target, and the check that what a probe accepted is well-formed.

use std::cell::{Cell, RefCell};

use baregpu_hal::pci::{Bar, ConfigRegionAccess, PciAddress};

/// One function at 00:00.0 whose 64 configuration dwords are arbitrary; a BAR keeps the bits
/// of its sizing mask that are written (flag bits stay). Reads may be perturbed: read `n`
/// XORs `flips[n % len]` into the value, so a register can differ between two reads.
#[derive(Debug)]
pub struct Hostile {
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

impl Hostile {
    /// `regs` with sizing `masks` and read perturbations `flips`.
    pub fn new(regs: [u32; 64], masks: [u32; 6], flips: Vec<u32>) -> Self {
        Hostile { regs: RefCell::new(regs), masks, flips, reads: Cell::new(0) }
    }
}

/// What a successful probe reports is well-formed: memory BARs have a power-of-two size of
/// at least 16 bytes, a 64-bit BAR's upper slot is empty, and nothing follows slot 5.
pub fn well_formed(bars: &[Option<Bar>; 6]) -> Result<(), String> {
    let mut slot = 0;
    while slot < 6 {
        match bars[slot] {
            Some(Bar::Memory { size, wide, .. }) => {
                if !size.is_power_of_two() || size < 16 {
                    return Err(format!("BAR{slot} size {size:#x}"));
                }
                if wide && (slot == 5 || bars[slot + 1].is_some()) {
                    return Err(format!("64-bit BAR{slot} without an empty upper slot"));
                }
                slot += usize::from(wide);
            }
            Some(Bar::Io { port }) if port & 3 != 0 => return Err(format!("I/O port {port:#x}")),
            Some(Bar::Io { .. }) => {}
            None => {}
        }
        slot += 1;
    }
    Ok(())
}
