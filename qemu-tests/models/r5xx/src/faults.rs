//! Fault injection: ways real hardware misbehaves, switchable on the model.

use std::fmt;
use std::str::FromStr;

/// Faults to inject. All off by default; they survive a function-level reset (they are the
/// harness's configuration, not device state). The one-shot
/// [`dma_fault_next_fetch`](Faults::dma_fault_next_fetch) clears itself when it fires.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Faults {
    /// The CP is stuck: it never fetches or parses, so `CP_RB_RPTR` never advances (a hung
    /// micro-engine). Register accesses still work.
    pub cp_stall: bool,
    /// The device fell off the bus: every register read returns all-ones and writes are
    /// dropped.
    pub registers_all_ones: bool,
    /// Corrupt the ME RAM read path: the entry at this address reads back with bit 0 flipped
    /// (§5.13 ports), as a failing upload verification would see.
    pub me_ram_corrupt: Option<u8>,
    /// One-shot: the next command fetch (ring or indirect buffer) faults on the bus as if the
    /// address were outside guest memory ([`DMA_FETCH_FAULT`](crate::error_code::DMA_FETCH_FAULT)).
    pub dma_fault_next_fetch: bool,
}

impl Faults {
    /// The switches of a harness `Op::Inject` request (`gpu_mailbox::r5xx_faults` bits).
    pub fn from_switches(bits: u32) -> Faults {
        use gpu_mailbox::r5xx_faults as f;
        Faults {
            cp_stall: bits & f::CP_STALL != 0,
            registers_all_ones: bits & f::ALL_ONES != 0,
            me_ram_corrupt: (bits & f::ME_RAM_CORRUPT != 0)
                .then_some((bits >> f::ME_RAM_ENTRY_SHIFT) as u8),
            dma_fault_next_fetch: bits & f::DMA_FAULT != 0,
        }
    }
}

/// A fault specification that does not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadFault(pub String);

impl fmt::Display for BadFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown fault `{}` (known: cp-stall, all-ones, me-ram-corrupt[=ENTRY], dma-fault)",
            self.0
        )
    }
}

impl std::error::Error for BadFault {}

/// Comma-separated names, e.g. `cp-stall,me-ram-corrupt=17` (for a `--fault` option):
/// `cp-stall`, `all-ones` (alias `device-gone`), `me-ram-corrupt[=ENTRY]` (entry 0 by default),
/// `dma-fault`. The empty string is no fault.
impl FromStr for Faults {
    type Err = BadFault;
    fn from_str(s: &str) -> Result<Self, BadFault> {
        let mut faults = Faults::default();
        for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (name, arg) = match item.split_once('=') {
                Some((n, a)) => (n, Some(a)),
                None => (item, None),
            };
            match (name, arg) {
                ("cp-stall", None) => faults.cp_stall = true,
                ("all-ones" | "device-gone", None) => faults.registers_all_ones = true,
                ("dma-fault", None) => faults.dma_fault_next_fetch = true,
                ("me-ram-corrupt", None) => faults.me_ram_corrupt = Some(0),
                ("me-ram-corrupt", Some(a)) => {
                    let entry = match a.strip_prefix("0x") {
                        Some(hex) => u8::from_str_radix(hex, 16),
                        None => a.parse(),
                    };
                    faults.me_ram_corrupt = Some(entry.map_err(|_| BadFault(item.into()))?);
                }
                _ => return Err(BadFault(item.into())),
            }
        }
        Ok(faults)
    }
}

#[cfg(test)]
mod switch_tests {
    use super::*;
    use gpu_mailbox::r5xx_faults as f;

    #[test]
    fn inject_switches_map_to_faults() {
        assert_eq!(Faults::from_switches(0), Faults::default());
        let all = Faults::from_switches(
            f::CP_STALL
                | f::ALL_ONES
                | f::DMA_FAULT
                | f::ME_RAM_CORRUPT
                | (17 << f::ME_RAM_ENTRY_SHIFT),
        );
        assert!(all.cp_stall && all.registers_all_ones && all.dma_fault_next_fetch);
        assert_eq!(all.me_ram_corrupt, Some(17));
        assert_eq!(Faults::from_switches(17 << f::ME_RAM_ENTRY_SHIFT).me_ram_corrupt, None);
    }
}
