//! Fault injection: ways real hardware misbehaves, switchable on the model (the same kinds and
//! `--fault` syntax as the R5xx model's).

use gpu_device_model::faults::{BadFault, CommonFaults, parse_fault_list};
use gpu_mailbox::evergreen_faults as f;
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

/// The items `--fault` accepts beyond the shared ones.
const FAMILY_HELP: &str = "ucode-corrupt[=WORD] with WORD 0..=4095";

gpu_device_model::common_faults!(Faults);

impl Faults {
    fn with_common(common: CommonFaults, ucode_corrupt: Option<u16>) -> Faults {
        let mut faults = Faults { ucode_corrupt, ..Faults::default() };
        faults.set_common(common);
        faults
    }

    /// The switches of a harness `Op::Inject` request (`gpu_mailbox::evergreen_faults`).
    pub fn from_switches(bits: u32) -> Faults {
        let word = (bits >> f::UCODE_WORD_SHIFT) & ((1 << f::UCODE_WORD_BITS) - 1);
        let common = CommonFaults::from_switches(bits, f::SLOW_TICKS_SHIFT);
        Faults::with_common(common, (bits & f::UCODE_CORRUPT != 0).then_some(word as u16))
    }

    /// The inject switches for these faults (inverse of [`from_switches`](Self::from_switches)).
    pub fn switches(&self) -> u32 {
        let word_mask = (1 << f::UCODE_WORD_BITS) - 1;
        self.common().switches(f::SLOW_TICKS_SHIFT, MAX_SLOW_TICKS)
            | self
                .ucode_corrupt
                .map_or(0, |w| f::UCODE_CORRUPT | (u32::from(w) & word_mask) << f::UCODE_WORD_SHIFT)
    }
}

/// Comma-separated names (model-server's `--fault`): the shared `cp-stall`, `all-ones` (alias
/// `device-gone`), `dma-fault`, `slow=TICKS` (`gpu_device_model::faults::parse_fault_list`) and
/// `ucode-corrupt[=WORD]` (alias `me-ram-corrupt`, word 0 by default). Numbers decimal or `0x`
/// hex; the empty string is no fault.
impl FromStr for Faults {
    type Err = BadFault;
    fn from_str(s: &str) -> Result<Self, BadFault> {
        let mut corrupt = None;
        let common = parse_fault_list(s, MAX_SLOW_TICKS, FAMILY_HELP, |name, arg| {
            if !matches!(name, "ucode-corrupt" | "me-ram-corrupt") {
                return None;
            }
            let word = match arg {
                None => Some(0),
                Some(a) => {
                    gpu_device_model::parse_number(a).filter(|&n| n < 1 << f::UCODE_WORD_BITS)
                }
            };
            corrupt = word.map(|w| w as u16);
            Some(word.is_some())
        })?;
        Ok(Faults::with_common(common, corrupt))
    }
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
