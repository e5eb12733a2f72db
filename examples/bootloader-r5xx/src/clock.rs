//! A [`Clock`] from the TSC, its rate measured against PIT channel 2 at boot.
//!
//! The TSC is monotonic and invariant on the CPUs QEMU models (and under TCG it is the host's
//! TSC), so after calibration `now_ns` never decreases and resolves well below a microsecond,
//! which is what the driver's bounded waits need (timeouts of milliseconds, polls of
//! microseconds).

use baregpu_hal::time::Clock;
use x86_64::instructions::port::Port;

/// PIT input clock in Hz.
const PIT_HZ: u64 = 1_193_182;
/// Calibration window: 10 ms of PIT ticks.
const CALIBRATION_TICKS: u16 = 11_932;
/// Bound on polls of the PIT output (a missing PIT must not hang the boot).
const MAX_POLLS: u32 = 10_000_000;

/// Why the TSC could not be calibrated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CalibrationError {
    /// PIT channel 2's output never went high.
    PitStuck,
    /// The TSC did not advance.
    TscStuck,
}

fn rdtsc() -> u64 {
    // SAFETY: RDTSC exists on every x86_64 CPU and has no side effects.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// The calibrated TSC; time 0 is the calibration.
#[derive(Debug, Clone, Copy)]
pub struct TscClock {
    base: u64,
    /// Nanoseconds per tick, 32.32 fixed point.
    ns_per_tick: u64,
}

impl TscClock {
    /// Count TSC ticks while PIT channel 2 counts down [`CALIBRATION_TICKS`] (mode 0).
    pub fn calibrate() -> Result<TscClock, CalibrationError> {
        // SAFETY: port 0x61 (PIT gate 2, speaker) and 0x42/0x43 (PIT channel 2 and mode) are
        // used by nothing else in this kernel; the speaker stays off.
        let ticks = unsafe {
            let mut control = Port::<u8>::new(0x61);
            let gate = control.read();
            control.write((gate & !0x02) | 0x01);
            Port::<u8>::new(0x43).write(0xB0); // channel 2, lobyte/hibyte, mode 0, binary
            let [lo, hi] = CALIBRATION_TICKS.to_le_bytes();
            Port::<u8>::new(0x42).write(lo);
            Port::<u8>::new(0x42).write(hi);
            let start = rdtsc();
            let mut polls = 0;
            while control.read() & 0x20 == 0 {
                polls += 1;
                if polls > MAX_POLLS {
                    control.write(gate);
                    return Err(CalibrationError::PitStuck);
                }
            }
            let ticks = rdtsc().wrapping_sub(start);
            control.write(gate);
            ticks
        };
        if ticks == 0 {
            return Err(CalibrationError::TscStuck);
        }
        let hz = ticks * PIT_HZ / u64::from(CALIBRATION_TICKS);
        Ok(TscClock { base: rdtsc(), ns_per_tick: (1_000_000_000u64 << 32) / hz.max(1) })
    }

    /// TSC frequency in Hz.
    pub fn hz(&self) -> u64 {
        (1_000_000_000u64 << 32) / self.ns_per_tick.max(1)
    }
}

impl Clock for TscClock {
    fn now_ns(&self) -> u64 {
        let ticks = rdtsc().saturating_sub(self.base);
        ((u128::from(ticks) * u128::from(self.ns_per_tick)) >> 32) as u64
    }
}
