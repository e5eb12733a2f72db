//! Fault injection: the framework's shared faults (`gpu_device_model::faults`), switchable from
//! tests, `model-server --fault` and the mailbox `Inject` request (`gpu_mailbox::gt215_faults`).
//! A falcon that never halts needs no switch: its instruction budget per tick bounds it and the
//! driver's timeout sees it.

use gpu_device_model::faults::{BadFault, CommonFaults, parse_fault_list};
use gpu_mailbox::gt215_faults as f;
use std::str::FromStr;

/// Faults to inject. All off by default; they survive a function-level reset (harness
/// configuration, not device state).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Faults {
    /// PFIFO's DMA pusher stands still: DMA_GET and IB_GET never advance (registers still
    /// work; the falcons run on).
    pub cp_stall: bool,
    /// The device fell off the bus: reads return all-ones, writes are dropped.
    pub registers_all_ones: bool,
    /// One-shot: the next fetch from memory faults on the bus: a pushbuffer or IB read
    /// (DMA_PUSHER MEM_FAULT) or a falcon xfer load (the device's DMA fetch fault), whichever
    /// comes first.
    pub dma_fault_next_fetch: bool,
    /// Slow, not hung: PFIFO and the falcons step once per this many ticks.
    pub slow: Option<u16>,
}

/// Largest `slow` setting (16 bits of the inject switches).
pub const MAX_SLOW_TICKS: u16 = u16::MAX;

gpu_device_model::common_faults!(Faults);

impl Faults {
    /// The switches of a harness `Op::Inject` request (`gpu_mailbox::gt215_faults`).
    pub fn from_switches(bits: u32) -> Faults {
        let mut faults = Faults::default();
        faults.set_common(CommonFaults::from_switches(bits, f::SLOW_TICKS_SHIFT));
        faults
    }

    /// The inject switches for these faults (inverse of [`from_switches`](Self::from_switches)).
    pub fn switches(&self) -> u32 {
        self.common().switches(f::SLOW_TICKS_SHIFT, MAX_SLOW_TICKS)
    }
}

/// Comma-separated names (model-server's `--fault`): the shared `cp-stall`, `all-ones` (alias
/// `device-gone`), `dma-fault`, `slow=TICKS`; the empty string is no fault.
impl FromStr for Faults {
    type Err = BadFault;
    fn from_str(s: &str) -> Result<Self, BadFault> {
        let common = parse_fault_list(s, MAX_SLOW_TICKS, "no GT215-specific faults", |_, _| None)?;
        let mut faults = Faults::default();
        faults.set_common(common);
        Ok(faults)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fault_lists_and_switches_round_trip() {
        let faults: Faults = "cp-stall, all-ones, dma-fault, slow=7".parse().unwrap();
        assert_eq!(
            faults,
            Faults {
                cp_stall: true,
                registers_all_ones: true,
                dma_fault_next_fetch: true,
                slow: Some(7)
            }
        );
        assert_eq!(Faults::from_switches(faults.switches()), faults);
        assert!("ucode-corrupt".parse::<Faults>().is_err(), "no microcode images to corrupt");
        assert_eq!("".parse::<Faults>().unwrap(), Faults::default());
    }
}
