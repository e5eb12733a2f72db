//! Fault injection: ways real hardware misbehaves, switchable on the model.

use gpu_device_model::faults::{BadFault, CommonFaults, parse_fault_list};
use gpu_mailbox::r5xx_faults as f;
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

/// The items `--fault` accepts beyond the shared ones.
const FAMILY_HELP: &str = "me-ram-corrupt[=ENTRY] with ENTRY 0..=255";

gpu_device_model::common_faults!(Faults);

impl Faults {
    fn with_common(common: CommonFaults, me_ram_corrupt: Option<u8>) -> Faults {
        let mut faults = Faults { me_ram_corrupt, ..Faults::default() };
        faults.set_common(common);
        faults
    }

    /// The switches of a harness `Op::Inject` request (`gpu_mailbox::r5xx_faults` bits).
    pub fn from_switches(bits: u32) -> Faults {
        let common = CommonFaults::from_switches(bits, f::SLOW_TICKS_SHIFT);
        let entry =
            (bits & f::ME_RAM_CORRUPT != 0).then_some((bits >> f::ME_RAM_ENTRY_SHIFT) as u8);
        Faults::with_common(common, entry)
    }

    /// The inject switches for these faults (the inverse of [`from_switches`](Self::from_switches)),
    /// e.g. to apply a `--fault` option through [`GpuModel::inject`](gpu_device_model::GpuModel::inject).
    pub fn switches(&self) -> u32 {
        self.common().switches(f::SLOW_TICKS_SHIFT, MAX_SLOW_TICKS)
            | self
                .me_ram_corrupt
                .map_or(0, |e| f::ME_RAM_CORRUPT | u32::from(e) << f::ME_RAM_ENTRY_SHIFT)
    }
}

/// Comma-separated names, e.g. `cp-stall,me-ram-corrupt=17` (model-server's `--fault`): the
/// shared `cp-stall`, `all-ones` (alias `device-gone`), `dma-fault`, `slow=TICKS` (one packet
/// per TICKS engine ticks; `gpu_device_model::faults::parse_fault_list`) and
/// `me-ram-corrupt[=ENTRY]` (entry 0 by default). Numbers are decimal or `0x` hex. The empty
/// string is no fault.
impl FromStr for Faults {
    type Err = BadFault;
    fn from_str(s: &str) -> Result<Self, BadFault> {
        let mut corrupt = None;
        let common = parse_fault_list(s, MAX_SLOW_TICKS, FAMILY_HELP, |name, arg| {
            if name != "me-ram-corrupt" {
                return None;
            }
            let entry = match arg {
                None => Some(0),
                Some(a) => gpu_device_model::parse_number(a).and_then(|n| u8::try_from(n).ok()),
            };
            corrupt = entry;
            Some(entry.is_some())
        })?;
        Ok(Faults::with_common(common, corrupt))
    }
}

#[cfg(test)]
mod switch_tests {
    use super::*;

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
