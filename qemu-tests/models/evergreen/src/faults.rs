//! Fault injection: ways real hardware misbehaves, switchable on the model (the same kinds and
//! `--fault` syntax as the R5xx model's).

use gpu_mailbox::evergreen_faults as f;
use std::fmt;
use std::str::FromStr;

/// Faults to inject. All off by default; they survive a function-level reset (harness
/// configuration, not device state). [`dma_fault_next_fetch`](Faults::dma_fault_next_fetch)
/// clears itself when it fires.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Faults {
    /// The CP never fetches or parses: `CP_RB_RPTR` never advances. Registers still work.
    pub cp_stall: bool,
    /// The device fell off the bus: reads return all-ones, writes are dropped.
    pub registers_all_ones: bool,
    /// Microcode read-back of this word index has bit 0 flipped (PFP, ME and RLC ports), as a
    /// failing upload verification would see.
    pub ucode_corrupt: Option<u16>,
    /// One-shot: the next command fetch (ring or indirect buffer) faults on the bus.
    pub dma_fault_next_fetch: bool,
    /// Slow, not hung: at most one packet per this many engine ticks.
    pub slow: Option<u16>,
}

/// Largest `slow` setting (15 bits of the inject switches).
pub const MAX_SLOW_TICKS: u16 = (1 << 15) - 1;

impl Faults {
    /// The switches of a harness `Op::Inject` request (`gpu_mailbox::evergreen_faults`).
    pub fn from_switches(bits: u32) -> Faults {
        let word = (bits >> f::UCODE_WORD_SHIFT) & ((1 << f::UCODE_WORD_BITS) - 1);
        Faults {
            cp_stall: bits & f::CP_STALL != 0,
            registers_all_ones: bits & f::ALL_ONES != 0,
            ucode_corrupt: (bits & f::UCODE_CORRUPT != 0).then_some(word as u16),
            dma_fault_next_fetch: bits & f::DMA_FAULT != 0,
            slow: (bits & f::SLOW != 0).then_some(((bits >> f::SLOW_TICKS_SHIFT) as u16).max(1)),
        }
    }

    /// The inject switches for these faults (inverse of [`from_switches`](Self::from_switches)).
    pub fn switches(&self) -> u32 {
        let bit = |on: bool, b: u32| if on { b } else { 0 };
        let word_mask = (1 << f::UCODE_WORD_BITS) - 1;
        bit(self.cp_stall, f::CP_STALL)
            | bit(self.registers_all_ones, f::ALL_ONES)
            | self
                .ucode_corrupt
                .map_or(0, |w| f::UCODE_CORRUPT | (u32::from(w) & word_mask) << f::UCODE_WORD_SHIFT)
            | bit(self.dma_fault_next_fetch, f::DMA_FAULT)
            | self.slow.map_or(0, |n| {
                f::SLOW | u32::from(n.clamp(1, MAX_SLOW_TICKS)) << f::SLOW_TICKS_SHIFT
            })
    }
}

/// A fault specification that does not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadFault(pub String);

impl fmt::Display for BadFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown fault `{}` (known: cp-stall, all-ones, ucode-corrupt[=WORD] with WORD \
             0..=4095, dma-fault, slow=TICKS with TICKS 1..=32767)",
            self.0
        )
    }
}

impl std::error::Error for BadFault {}

/// Comma-separated names (model-server's `--fault`): `cp-stall`, `all-ones` (alias
/// `device-gone`), `ucode-corrupt[=WORD]` (alias `me-ram-corrupt`, word 0 by default),
/// `dma-fault`, `slow=TICKS`. Numbers decimal or `0x` hex; the empty string is no fault.
impl FromStr for Faults {
    type Err = BadFault;
    fn from_str(s: &str) -> Result<Self, BadFault> {
        let mut faults = Faults::default();
        for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let bad = || BadFault(item.into());
            let (name, arg) = match item.split_once('=') {
                Some((n, a)) => (n, Some(a)),
                None => (item, None),
            };
            match (name, arg) {
                ("cp-stall", None) => faults.cp_stall = true,
                ("all-ones" | "device-gone", None) => faults.registers_all_ones = true,
                ("dma-fault", None) => faults.dma_fault_next_fetch = true,
                ("ucode-corrupt" | "me-ram-corrupt", None) => faults.ucode_corrupt = Some(0),
                ("ucode-corrupt" | "me-ram-corrupt", Some(a)) => {
                    let w = parse_number(a).filter(|&n| n < 1 << f::UCODE_WORD_BITS);
                    faults.ucode_corrupt = Some(w.ok_or_else(bad)? as u16);
                }
                ("slow", Some(a)) => {
                    let t = parse_number(a).filter(|&n| n > 0 && n <= u32::from(MAX_SLOW_TICKS));
                    faults.slow = Some(t.ok_or_else(bad)? as u16);
                }
                _ => return Err(bad()),
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
mod tests {
    use super::*;

    #[test]
    fn fault_lists_parse_and_round_trip_through_the_switches() {
        let all: Faults =
            "cp-stall, all-ones, ucode-corrupt=0x880, dma-fault, slow=300".parse().unwrap();
        assert_eq!(
            all,
            Faults {
                cp_stall: true,
                registers_all_ones: true,
                ucode_corrupt: Some(0x880),
                dma_fault_next_fetch: true,
                slow: Some(300),
            }
        );
        assert_eq!(Faults::from_switches(all.switches()), all);
        assert_eq!(Faults::from_switches(0), Faults::default());
        assert_eq!("".parse::<Faults>(), Ok(Faults::default()));
        assert_eq!("me-ram-corrupt".parse::<Faults>().unwrap().ucode_corrupt, Some(0));
        for bad in ["slow=0", "slow=32768", "ucode-corrupt=4096", "cp-stall=1", "melt"] {
            assert!(bad.parse::<Faults>().is_err(), "{bad}");
        }
        assert_eq!(Faults::from_switches(f::SLOW).slow, Some(1), "0 ticks reads as 1");
    }
}
