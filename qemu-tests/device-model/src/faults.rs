//! The faults every GPU model injects the same way (`gpu_mailbox::gpu_faults`): a stalled
//! command processor, a device gone from the bus, a bus fault on the next command fetch, a slow
//! command processor. Parsed and encoded once here; a model adds its own (microcode read-back
//! corruption) through the `family` hook of [`parse_fault_list`] and the switch bits above the
//! shared ones.

use gpu_mailbox::gpu_faults as sw;
use std::fmt;

/// The shared faults. All off by default; they are harness configuration, not device state,
/// so they survive a function-level reset. [`dma_fault_next_fetch`](Self::dma_fault_next_fetch)
/// is one-shot: the model clears it when it fires.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CommonFaults {
    /// The command processor never fetches or parses; registers still work.
    pub cp_stall: bool,
    /// The device fell off the bus: reads return all-ones, writes are dropped.
    pub registers_all_ones: bool,
    /// One-shot: the next command fetch (ring or indirect buffer) faults on the bus.
    pub dma_fault_next_fetch: bool,
    /// Slow, not hung: at most one packet per this many engine ticks.
    pub slow: Option<u16>,
}

impl CommonFaults {
    /// The shared switches of an `Op::Inject` request; the slow tick count sits at
    /// `slow_shift` and up (0 reads as 1).
    pub fn from_switches(bits: u32, slow_shift: u32) -> Self {
        CommonFaults {
            cp_stall: bits & sw::CP_STALL != 0,
            registers_all_ones: bits & sw::ALL_ONES != 0,
            dma_fault_next_fetch: bits & sw::DMA_FAULT != 0,
            slow: (bits & sw::SLOW != 0).then_some(((bits >> slow_shift) as u16).max(1)),
        }
    }

    /// The switches for these faults (inverse of [`from_switches`](Self::from_switches)), the
    /// slow tick count clamped to `1..=max_slow`.
    pub fn switches(&self, slow_shift: u32, max_slow: u16) -> u32 {
        let bit = |on: bool, b: u32| if on { b } else { 0 };
        bit(self.cp_stall, sw::CP_STALL)
            | bit(self.registers_all_ones, sw::ALL_ONES)
            | bit(self.dma_fault_next_fetch, sw::DMA_FAULT)
            | self
                .slow
                .map_or(0, |n| sw::SLOW | u32::from(n.clamp(1, max_slow.max(1))) << slow_shift)
    }
}

/// Give a model's fault set, a struct with the four shared fields (`cp_stall`,
/// `registers_all_ones`, `dma_fault_next_fetch`, `slow`) beside its own, the conversions to and
/// from [`CommonFaults`]: `common()` and `set_common()`.
#[macro_export]
macro_rules! common_faults {
    ($faults:ty) => {
        impl $faults {
            /// The shared faults (`gpu_device_model::faults`).
            pub fn common(&self) -> $crate::faults::CommonFaults {
                $crate::faults::CommonFaults {
                    cp_stall: self.cp_stall,
                    registers_all_ones: self.registers_all_ones,
                    dma_fault_next_fetch: self.dma_fault_next_fetch,
                    slow: self.slow,
                }
            }

            /// Set the shared faults, keeping the model's own.
            pub fn set_common(&mut self, common: $crate::faults::CommonFaults) {
                self.cp_stall = common.cp_stall;
                self.registers_all_ones = common.registers_all_ones;
                self.dma_fault_next_fetch = common.dma_fault_next_fetch;
                self.slow = common.slow;
            }
        }
    };
}

/// A fault specification that does not parse: the item, and the names the model knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadFault {
    /// The item that did not parse.
    pub item: String,
    /// What the model accepts (for the message).
    pub known: String,
}

impl fmt::Display for BadFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown fault `{}` (known: {})", self.item, self.known)
    }
}

impl std::error::Error for BadFault {}

/// Parse a comma-separated fault list (model-server's `--fault`): the shared `cp-stall`,
/// `all-ones` (alias `device-gone`), `dma-fault`, `slow=TICKS` (1..=`max_slow`), and whatever
/// `family` accepts: it gets each other item's name and argument and answers `None` for a name
/// it does not know, `Some(false)` for a bad argument. Numbers are decimal or `0x` hex; the
/// empty string is no fault. `family_help` lists the family's items for the error message.
pub fn parse_fault_list(
    text: &str,
    max_slow: u16,
    family_help: &str,
    mut family: impl FnMut(&str, Option<&str>) -> Option<bool>,
) -> Result<CommonFaults, BadFault> {
    let mut faults = CommonFaults::default();
    for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let bad = || BadFault {
            item: item.into(),
            known: format!(
                "cp-stall, all-ones, dma-fault, slow=TICKS with TICKS 1..={max_slow}, {family_help}"
            ),
        };
        let (name, arg) = match item.split_once('=') {
            Some((n, a)) => (n, Some(a)),
            None => (item, None),
        };
        match (name, arg) {
            ("cp-stall", None) => faults.cp_stall = true,
            ("all-ones" | "device-gone", None) => faults.registers_all_ones = true,
            ("dma-fault", None) => faults.dma_fault_next_fetch = true,
            ("slow", Some(a)) => {
                let ticks = crate::parse_number(a).filter(|&n| n > 0 && n <= u64::from(max_slow));
                faults.slow = Some(ticks.ok_or_else(bad)? as u16);
            }
            _ => {
                if family(name, arg) != Some(true) {
                    return Err(bad());
                }
            }
        }
    }
    Ok(faults)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_faults_parse_and_round_trip_and_the_family_gets_the_rest() {
        let mut extra = None;
        let f = parse_fault_list(
            "cp-stall, device-gone, dma-fault, slow=0x10, melt=3",
            99,
            "melt=N",
            |n, a| {
                (n == "melt").then(|| {
                    extra = a.and_then(crate::parse_number);
                    extra.is_some()
                })
            },
        )
        .unwrap();
        assert_eq!(
            f,
            CommonFaults {
                cp_stall: true,
                registers_all_ones: true,
                dma_fault_next_fetch: true,
                slow: Some(16)
            }
        );
        assert_eq!(extra, Some(3));
        assert_eq!(CommonFaults::from_switches(f.switches(17, 99), 17), f);
        assert_eq!(CommonFaults::from_switches(sw::SLOW, 16).slow, Some(1), "0 ticks reads as 1");
        for bad in ["slow=0", "slow=100", "cp-stall=1", "melt", "boil"] {
            let e = parse_fault_list(bad, 99, "melt=N", |n, a| (n == "melt").then(|| a.is_some()));
            assert!(e.is_err(), "{bad}");
        }
        assert_eq!(parse_fault_list("", 99, "", |_, _| None), Ok(CommonFaults::default()));
    }
}
