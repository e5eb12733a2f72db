//! PCI probing (`baregpu_hal::pci::probe` and `scan`) over arbitrary configuration spaces: the
//! first 256 bytes are the function's 64 configuration dwords, the next 24 the sizing masks of
//! its six BARs (the bits a written all-ones keeps), and every 4 bytes after that are XORed
//! into successive reads, so registers change between two reads of them.
//!
//! Asserts (`hal/core/tests/hostile_config/mod.rs`, shared with `tests/pci_hostile.rs`): no
//! panic; `probe` returns a typed result; every function `probe` or `scan` accepts has memory
//! BARs of a power-of-two size of at least 16 bytes and 64-bit BARs with an empty upper slot.
#![no_main]

use baregpu_hal::pci::{PciAddress, probe, scan};
use libfuzzer_sys::fuzz_target;

#[path = "../../hal/core/tests/hostile_config/mod.rs"]
mod hostile_config;
use hostile_config::{Hostile, well_formed};

fn word(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

fuzz_target!(|bytes: &[u8]| {
    let Some((regs, rest)) = bytes.split_first_chunk::<256>() else { return };
    let Some((masks, flips)) = rest.split_first_chunk::<24>() else { return };
    let regs: [u32; 64] = std::array::from_fn(|i| word(&regs[4 * i..]));
    let masks: [u32; 6] = std::array::from_fn(|i| word(&masks[4 * i..]));
    let flips: Vec<u32> = flips.chunks_exact(4).take(64).map(word).collect();
    let config = || Hostile::new(regs, masks, flips.clone());
    if let Ok(f) = probe(&config(), PciAddress::new(0, 0, 0, 0)) {
        well_formed(&f.bars).unwrap();
    }
    scan(&config(), 0, |f| well_formed(&f.bars).unwrap());
});
