//! Monotonic clocks from free-running CPU counters, for [`Clock`].
//!
//! - `TscClock` (`x86_64`): the time-stamp counter, its rate measured against PIT channel 2.
//!   The TSC is invariant on the CPUs QEMU models and on every x86_64 CPU of the last decade
//!   (CPUID 80000007h EDX bit 8); under TCG it is the host's TSC, so only a measurement
//!   against an emulated timer tells its rate (CPUID 15h/16h describe the modelled CPU).
//! - `CounterClock` (`aarch64`): the generic timer's virtual count (CNTVCT_EL0) at the
//!   frequency firmware wrote to CNTFRQ_EL0 (Arm ARM D11.1.2).
//!
//! Both convert ticks with a [`TickScale`] (32.32 fixed point), keep the moment of their
//! creation as time 0, are `Copy + Send + Sync`, and never decrease.
//!
//! [`Clock`]: baregpu_hal::time::Clock

use core::fmt;

/// Ticks to nanoseconds: nanoseconds per tick in 32.32 fixed point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct TickScale {
    ns_per_tick: u64,
}

impl TickScale {
    /// The scale of a counter running at `hz`; `None` for 0 Hz or above 4 GHz·2³² (which no
    /// counter reaches).
    pub const fn from_hz(hz: u64) -> Option<TickScale> {
        if hz == 0 {
            return None;
        }
        let ns_per_tick = (1_000_000_000u128 << 32) / hz as u128;
        if ns_per_tick == 0 || ns_per_tick > u64::MAX as u128 {
            return None;
        }
        Some(TickScale { ns_per_tick: ns_per_tick as u64 })
    }

    /// Nanoseconds in `ticks` (saturating at `u64::MAX`).
    pub const fn ns(self, ticks: u64) -> u64 {
        let ns = (ticks as u128 * self.ns_per_tick as u128) >> 32;
        if ns > u64::MAX as u128 { u64::MAX } else { ns as u64 }
    }

    /// The counter frequency this scale stands for, in Hz (rounded).
    pub const fn hz(self) -> u64 {
        ((1_000_000_000u128 << 32) / self.ns_per_tick as u128) as u64
    }
}

/// Why a clock could not be set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum CalibrationError {
    /// The reference timer (PIT channel 2's output) never changed within the poll bound.
    ReferenceStuck,
    /// The counter did not advance during the measurement.
    CounterStuck,
    /// The counter's frequency is 0 or out of range (e.g. CNTFRQ_EL0 left unprogrammed).
    BadFrequency(u64),
}

impl fmt::Display for CalibrationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CalibrationError::ReferenceStuck => write!(f, "the reference timer did not run"),
            CalibrationError::CounterStuck => write!(f, "the counter did not advance"),
            CalibrationError::BadFrequency(hz) => {
                write!(f, "counter frequency {hz} Hz is unusable")
            }
        }
    }
}

impl core::error::Error for CalibrationError {}

#[cfg(all(feature = "x86_64", target_arch = "x86_64"))]
pub use tsc::TscClock;

#[cfg(all(feature = "x86_64", target_arch = "x86_64"))]
mod tsc {
    use super::{CalibrationError, TickScale};
    use baregpu_hal::time::Clock;
    use x86_64::instructions::interrupts::without_interrupts;
    use x86_64::instructions::port::Port;

    /// PIT input clock in Hz (IBM PC/AT technical reference; Intel 8254 datasheet).
    const PIT_HZ: u64 = 1_193_182;
    /// PIT channel 2 data port.
    const PIT_CHANNEL2: u16 = 0x42;
    /// PIT mode/command port.
    const PIT_COMMAND: u16 = 0x43;
    /// Channel 2, lobyte/hibyte access, mode 0 (interrupt on terminal count), binary.
    const PIT_CHANNEL2_MODE0: u8 = 0b1011_0000;
    /// NMI status and control port: bit 0 gates PIT channel 2, bit 1 drives the speaker from
    /// it, bit 5 reads channel 2's output.
    const NMI_SC: u16 = 0x61;
    const GATE2: u8 = 1 << 0;
    const SPEAKER: u8 = 1 << 1;
    const OUT2: u8 = 1 << 5;
    /// Bound on polls of the PIT output: a port read costs ~1 µs or more under TCG, so any
    /// window up to 50 ms needs far fewer; the bound stops a missing PIT from hanging the boot.
    const MAX_POLLS: u32 = 10_000_000;

    fn rdtsc() -> u64 {
        // SAFETY: RDTSC exists on every x86_64 CPU and has no side effects.
        unsafe { core::arch::x86_64::_rdtsc() }
    }

    /// The TSC as a [`Clock`]; time 0 is its creation.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    #[cfg_attr(feature = "defmt", derive(defmt::Format))]
    pub struct TscClock {
        base: u64,
        scale: TickScale,
    }

    impl TscClock {
        /// Measure the TSC against PIT channel 2 over `window_ms` milliseconds (1..=50; 10 to
        /// 20 give well under 1 % error) and start the clock. The boot waits that long.
        ///
        /// Uses PIT channel 2 and the speaker gate (port 0x61), restoring the gate after;
        /// interrupts are off during the measurement. Nothing else may program channel 2
        /// meanwhile (on another CPU).
        pub fn calibrate_pit(window_ms: u16) -> Result<TscClock, CalibrationError> {
            let window_ms = window_ms.clamp(1, 50);
            let pit_ticks = (PIT_HZ * u64::from(window_ms) / 1000) as u16;
            let tsc_ticks = without_interrupts(|| measure(pit_ticks))?;
            if tsc_ticks == 0 {
                return Err(CalibrationError::CounterStuck);
            }
            let hz = tsc_ticks * PIT_HZ / u64::from(pit_ticks);
            Self::from_hz(hz)
        }

        /// A clock for a TSC whose frequency is known (CPUID 15h on real hardware, or a value
        /// the kernel measured itself).
        pub fn from_hz(hz: u64) -> Result<TscClock, CalibrationError> {
            let scale = TickScale::from_hz(hz).ok_or(CalibrationError::BadFrequency(hz))?;
            Ok(TscClock { base: rdtsc(), scale })
        }

        /// TSC frequency in Hz.
        pub fn hz(&self) -> u64 {
            self.scale.hz()
        }
    }

    /// TSC ticks while PIT channel 2 counts `pit_ticks` down in mode 0.
    fn measure(pit_ticks: u16) -> Result<u64, CalibrationError> {
        let mut control = Port::<u8>::new(NMI_SC);
        // SAFETY: ports 0x61 and 0x42/0x43 are the PIT's channel 2 and its gate, which only
        // drive the PC speaker (kept off); the caller owns channel 2 during calibration.
        unsafe {
            let gate = control.read();
            control.write((gate & !SPEAKER) | GATE2);
            Port::<u8>::new(PIT_COMMAND).write(PIT_CHANNEL2_MODE0);
            let [lo, hi] = pit_ticks.to_le_bytes();
            Port::<u8>::new(PIT_CHANNEL2).write(lo);
            Port::<u8>::new(PIT_CHANNEL2).write(hi);
            let start = rdtsc();
            let mut polls = 0u32;
            let result = loop {
                if control.read() & OUT2 != 0 {
                    break Ok(rdtsc().wrapping_sub(start));
                }
                polls += 1;
                if polls > MAX_POLLS {
                    break Err(CalibrationError::ReferenceStuck);
                }
            };
            control.write(gate);
            result
        }
    }

    impl Clock for TscClock {
        fn now_ns(&self) -> u64 {
            self.scale.ns(rdtsc().saturating_sub(self.base))
        }
    }
}

#[cfg(all(feature = "aarch64", target_arch = "aarch64"))]
pub use counter::CounterClock;

#[cfg(all(feature = "aarch64", target_arch = "aarch64"))]
mod counter {
    use super::{CalibrationError, TickScale};
    use baregpu_hal::time::Clock;

    fn cntvct() -> u64 {
        let ticks: u64;
        // SAFETY: CNTVCT_EL0 is readable at EL1 (and at EL0 when CNTKCTL_EL1 allows it); the
        // ISB keeps the read from being performed ahead of earlier instructions (Arm ARM
        // D11.2.2: reads of the counter may be speculative otherwise).
        unsafe {
            core::arch::asm!("isb", "mrs {}, cntvct_el0", out(reg) ticks, options(nomem, nostack));
        }
        ticks
    }

    fn cntfrq() -> u64 {
        let hz: u64;
        // SAFETY: CNTFRQ_EL0 is readable at every exception level; no side effects.
        unsafe {
            core::arch::asm!("mrs {}, cntfrq_el0", out(reg) hz, options(nomem, nostack));
        }
        hz
    }

    /// The generic timer's virtual counter as a [`Clock`]; time 0 is its creation.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    #[cfg_attr(feature = "defmt", derive(defmt::Format))]
    pub struct CounterClock {
        base: u64,
        scale: TickScale,
    }

    impl CounterClock {
        /// At the frequency in CNTFRQ_EL0 (firmware programs it; 62.5 MHz under QEMU `virt`,
        /// 19.2 MHz on the Raspberry Pi 3).
        pub fn new() -> Result<CounterClock, CalibrationError> {
            Self::from_hz(cntfrq())
        }

        /// At a frequency the kernel knows better than CNTFRQ_EL0 says.
        pub fn from_hz(hz: u64) -> Result<CounterClock, CalibrationError> {
            let scale = TickScale::from_hz(hz).ok_or(CalibrationError::BadFrequency(hz))?;
            Ok(CounterClock { base: cntvct(), scale })
        }

        /// Counter frequency in Hz.
        pub fn hz(&self) -> u64 {
            self.scale.hz()
        }
    }

    impl Clock for CounterClock {
        fn now_ns(&self) -> u64 {
            self.scale.ns(cntvct().saturating_sub(self.base))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::TickScale;

    #[test]
    fn a_scale_converts_ticks_to_nanoseconds_at_its_frequency() {
        let ghz = TickScale::from_hz(1_000_000_000).unwrap();
        assert_eq!(ghz.ns(12_345), 12_345);
        let tsc = TickScale::from_hz(2_863_000_000).unwrap();
        // Truncation of the fixed-point scale loses under a nanosecond per conversion.
        assert!((999_999_999..=1_000_000_000).contains(&tsc.ns(2_863_000_000)));
        assert_eq!(tsc.hz(), 2_863_000_000);
        let pi = TickScale::from_hz(19_200_000).unwrap();
        assert!((9_999..=10_000).contains(&pi.ns(192)));
    }

    #[test]
    fn a_zero_frequency_has_no_scale_and_large_counts_saturate() {
        assert_eq!(TickScale::from_hz(0), None);
        let slow = TickScale::from_hz(1).unwrap();
        assert_eq!(slow.ns(u64::MAX), u64::MAX);
    }
}
