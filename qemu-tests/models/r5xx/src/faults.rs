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
    /// The CP is slow, not hung: it completes at most one packet per this many engine ticks
    /// (1..=[`MAX_SLOW_TICKS`]), reporting busy in between. A driver must not mistake it for a
    /// hang while it makes progress within its timeout.
    pub slow: Option<u16>,
}

/// Largest `slow` setting (it travels in 16 bits of the inject switches).
pub const MAX_SLOW_TICKS: u16 = u16::MAX;

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
            slow: (bits & f::SLOW != 0).then_some(((bits >> f::SLOW_TICKS_SHIFT) as u16).max(1)),
        }
    }

    /// The inject switches for these faults (the inverse of [`from_switches`](Self::from_switches)),
    /// e.g. to apply a `--fault` option through [`GpuModel::inject`](gpu_device_model::GpuModel::inject).
    pub fn switches(&self) -> u32 {
        use gpu_mailbox::r5xx_faults as f;
        let bit = |on: bool, b: u32| if on { b } else { 0 };
        bit(self.cp_stall, f::CP_STALL)
            | bit(self.registers_all_ones, f::ALL_ONES)
            | self
                .me_ram_corrupt
                .map_or(0, |e| f::ME_RAM_CORRUPT | u32::from(e) << f::ME_RAM_ENTRY_SHIFT)
            | bit(self.dma_fault_next_fetch, f::DMA_FAULT)
            | self.slow.map_or(0, |n| f::SLOW | u32::from(n.max(1)) << f::SLOW_TICKS_SHIFT)
    }
}

/// A fault specification that does not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadFault(pub String);

impl fmt::Display for BadFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown fault `{}` (known: cp-stall, all-ones, me-ram-corrupt[=ENTRY], dma-fault, \
             slow=TICKS with TICKS 1..=65535)",
            self.0
        )
    }
}

impl std::error::Error for BadFault {}

/// Comma-separated names, e.g. `cp-stall,me-ram-corrupt=17` (model-server's `--fault`):
/// `cp-stall`, `all-ones` (alias `device-gone`), `me-ram-corrupt[=ENTRY]` (entry 0 by default),
/// `dma-fault`, `slow=TICKS` (one packet per TICKS engine ticks). Numbers are decimal or `0x`
/// hex. The empty string is no fault.
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
                    let entry = parse_number(a).and_then(|n| u8::try_from(n).ok());
                    faults.me_ram_corrupt = Some(entry.ok_or_else(|| BadFault(item.into()))?);
                }
                ("slow", Some(a)) => {
                    let ticks = parse_number(a).and_then(|n| u16::try_from(n).ok());
                    faults.slow =
                        Some(ticks.filter(|&t| t > 0).ok_or_else(|| BadFault(item.into()))?);
                }
                _ => return Err(BadFault(item.into())),
            }
        }
        Ok(faults)
    }
}

/// A fault argument: decimal or `0x` hex, within `u32`.
fn parse_number(text: &str) -> Option<u32> {
    gpu_device_model::parse_number(text).and_then(|n| u32::try_from(n).ok())
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
        let slow = Faults::from_switches(f::SLOW | 300 << f::SLOW_TICKS_SHIFT);
        assert_eq!(slow, Faults { slow: Some(300), ..Faults::default() });
        assert_eq!(Faults::from_switches(f::SLOW).slow, Some(1), "0 ticks reads as 1");
        // Round trip through the switches.
        let all = Faults { slow: Some(u16::MAX), ..all };
        assert_eq!(Faults::from_switches(all.switches()), all);
        assert_eq!(Faults::default().switches(), 0);
    }
}
