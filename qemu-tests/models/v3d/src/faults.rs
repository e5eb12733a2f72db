//! Fault injection: the framework's shared faults (`gpu_device_model::faults`) as the V3D
//! has them, plus a missed interrupt.
//!
//! - `cp-stall`: the QPUs and the SRQ stop (no instruction runs, no program starts); a user
//!   program never completes. (A QPU program that never ends needs no switch: the instruction
//!   budget per tick keeps the model responsive and [`crate::qpu::PROGRAM_INSTRUCTION_LIMIT`]
//!   ends it.)
//! - `all-ones`: register reads return all-ones and writes are dropped.
//! - `dma-fault`: the next QPU memory read (code, uniform or TMU) faults on the bus.
//! - `slow=N`: the QPUs and DMA run one tick in N.
//! - `missed-irq`: the next QPU host interrupt (`V3D_DBQITC`) latches but does not assert the
//!   interrupt line, until the driver clears it.
//! - `outomem-storm`: the binner never gets memory, whatever the host gives through
//!   `V3D_BPOA`/`BPOS` (OUTOMEM stays raised).
//!
//! `cp-stall`, `dma-fault` and `slow` apply to the control-list executor too (a stuck or slow
//! CLE; the next control-list fetch faults).

use gpu_device_model::faults::{BadFault, CommonFaults, parse_fault_list};
use gpu_mailbox::gpu_faults as sw;
use std::str::FromStr;

/// The `Op::Inject` bits of [`Faults::missed_irq`] and [`Faults::outomem_storm`] (above the
/// shared bits 4:0) and where N of `slow` goes: the mailbox contract, which the guest uses too.
pub use gpu_mailbox::v3d_faults::{MISSED_IRQ, OUTOMEM_STORM, SLOW_TICKS_SHIFT};
/// Largest `slow` setting.
pub const MAX_SLOW_TICKS: u16 = u16::MAX;

/// Faults to inject (harness configuration: they survive a reset).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Faults {
    /// The QPUs and the SRQ stop.
    pub cp_stall: bool,
    /// Reads return all-ones, writes are dropped.
    pub registers_all_ones: bool,
    /// One-shot: the next QPU memory read faults.
    pub dma_fault_next_fetch: bool,
    /// The engines run one tick in this many.
    pub slow: Option<u16>,
    /// One-shot: the next host interrupt does not reach the line.
    pub missed_irq: bool,
    /// The binner never gets memory.
    pub outomem_storm: bool,
}

gpu_device_model::common_faults!(Faults);

impl Faults {
    /// The switches of an `Op::Inject` request.
    pub fn from_switches(bits: u32) -> Faults {
        let mut f = Faults {
            missed_irq: bits & MISSED_IRQ != 0,
            outomem_storm: bits & OUTOMEM_STORM != 0,
            ..Faults::default()
        };
        f.set_common(CommonFaults::from_switches(bits & !sw::UCODE_CORRUPT, SLOW_TICKS_SHIFT));
        f
    }

    /// The inject switches for these faults.
    pub fn switches(&self) -> u32 {
        self.common().switches(SLOW_TICKS_SHIFT, MAX_SLOW_TICKS)
            | if self.missed_irq { MISSED_IRQ } else { 0 }
            | if self.outomem_storm { OUTOMEM_STORM } else { 0 }
    }

    /// The control-list executor's share of these faults.
    pub fn cle(&self) -> crate::cle::CleFaults {
        crate::cle::CleFaults {
            cp_stall: self.cp_stall,
            dma_fault_next_fetch: self.dma_fault_next_fetch,
            slow: self.slow,
            outomem_storm: self.outomem_storm,
        }
    }
}

/// `--fault` lists: the shared names and `missed-irq`.
impl FromStr for Faults {
    type Err = BadFault;
    fn from_str(s: &str) -> Result<Self, BadFault> {
        let (mut missed, mut storm) = (false, false);
        let common =
            parse_fault_list(s, MAX_SLOW_TICKS, "missed-irq, outomem-storm", |name, arg| {
                let flag = match name {
                    "missed-irq" => &mut missed,
                    "outomem-storm" => &mut storm,
                    _ => return None,
                };
                *flag = true;
                Some(arg.is_none())
            })?;
        let mut f = Faults { missed_irq: missed, outomem_storm: storm, ..Faults::default() };
        f.set_common(common);
        Ok(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fault_lists_parse_and_round_trip_through_the_switches() {
        let all: Faults =
            "cp-stall, all-ones, dma-fault, slow=300, missed-irq, outomem-storm".parse().unwrap();
        assert_eq!(
            all,
            Faults {
                cp_stall: true,
                registers_all_ones: true,
                dma_fault_next_fetch: true,
                slow: Some(300),
                missed_irq: true,
                outomem_storm: true,
            }
        );
        assert_eq!(Faults::from_switches(all.switches()), all);
        assert_eq!(Faults::from_switches(0), Faults::default());
        assert!("missed-irq=1".parse::<Faults>().is_err());
        assert!("outomem-storm=1".parse::<Faults>().is_err());
        // The executor gets the stuck, slow and bus faults and the storm; not the line's.
        let cle = all.cle();
        assert!(cle.cp_stall && cle.dma_fault_next_fetch && cle.outomem_storm);
        assert_eq!(cle.slow, Some(300));
        assert!("melt".parse::<Faults>().is_err());
    }
}
