//! Monotonic time from the TSC, calibrated against PIT channel 2.
//!
//! Under TCG the guest TSC is the host's TSC (QEMU's `cpu_get_host_ticks`), so only a
//! measurement against an emulated timer tells its rate: CPUID 0x15/0x16 of `-cpu max` (when
//! present) describe the modelled CPU, not the host. The PIT's counter follows QEMU's virtual
//! clock, which tracks host time; a 20 ms window costs 20 ms of boot and gives well under 1 %
//! error (the CPUID values are logged for comparison).

use baregpu_hal::time::Clock;
use core::sync::atomic::{AtomicU64, Ordering};
use x86_64::instructions::port::Port;

/// PIT input clock in Hz.
const PIT_HZ: u64 = 1_193_182;
/// Calibration window: 20 ms of PIT ticks.
const CALIBRATION_PIT_TICKS: u16 = 23_864;
/// Bound on polls of the PIT output during calibration: a port read costs ~1 µs or more under
/// TCG, so 20 ms needs far fewer; the bound only stops a missing PIT from hanging the boot.
const CALIBRATION_MAX_POLLS: u32 = 5_000_000;
/// Frequency assumed when calibration fails (logged as an error; times are then approximate).
const FALLBACK_HZ: u64 = 1_000_000_000;

/// Nanoseconds per TSC tick in 32.32 fixed point (0 = not calibrated).
static NS_PER_TICK_FP: AtomicU64 = AtomicU64::new(0);
static TSC_BASE: AtomicU64 = AtomicU64::new(0);
static TSC_HZ: AtomicU64 = AtomicU64::new(0);

/// Why calibration failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, defmt::Format)]
pub enum CalibrationError {
    /// The PIT output never went high.
    PitStuck,
    /// The TSC did not advance.
    TscStuck,
}

fn rdtsc() -> u64 {
    // SAFETY: RDTSC is available on every x86_64 CPU and has no side effects.
    unsafe { core::arch::x86_64::_rdtsc() }
}

fn measure_tsc_hz() -> Result<u64, CalibrationError> {
    // SAFETY: port 0x61 (NMI status/control: PIT gate 2, speaker) and 0x42/0x43 (PIT channel 2
    // and mode) are not used by anything else in the kernel; channel 2 only drives the speaker,
    // which stays off.
    unsafe {
        let mut control = Port::<u8>::new(0x61);
        let gate = control.read();
        control.write((gate & !0x02) | 0x01); // gate 2 on, speaker off
        Port::<u8>::new(0x43).write(0xB0); // channel 2, lobyte/hibyte, mode 0, binary
        let [lo, hi] = CALIBRATION_PIT_TICKS.to_le_bytes();
        Port::<u8>::new(0x42).write(lo);
        Port::<u8>::new(0x42).write(hi);
        let start = rdtsc();
        let mut polls = 0;
        while control.read() & 0x20 == 0 {
            polls += 1;
            if polls > CALIBRATION_MAX_POLLS {
                return Err(CalibrationError::PitStuck);
            }
        }
        let ticks = rdtsc().wrapping_sub(start);
        control.write(gate);
        if ticks == 0 {
            return Err(CalibrationError::TscStuck);
        }
        Ok(ticks * PIT_HZ / u64::from(CALIBRATION_PIT_TICKS))
    }
}

fn set_frequency(hz: u64) {
    TSC_HZ.store(hz, Ordering::Relaxed);
    NS_PER_TICK_FP.store((1_000_000_000u64 << 32) / hz.max(1), Ordering::Relaxed);
}

/// Calibrate the TSC; time 0 is the moment of the call. Returns the TSC frequency in Hz.
pub fn init() -> Result<u64, CalibrationError> {
    let base = rdtsc();
    let measured = measure_tsc_hz();
    TSC_BASE.store(base, Ordering::Relaxed);
    set_frequency(measured.unwrap_or(FALLBACK_HZ));
    let leaf15 = core::arch::x86_64::__cpuid(0x15);
    let leaf16 = core::arch::x86_64::__cpuid(0x16);
    defmt::info!(
        "clock: TSC {=u64} Hz from PIT; CPUID.15h eax={=u32} ebx={=u32} ecx={=u32}, CPUID.16h base={=u32} MHz (informational)",
        TSC_HZ.load(Ordering::Relaxed),
        leaf15.eax,
        leaf15.ebx,
        leaf15.ecx,
        leaf16.eax
    );
    measured
}

/// Nanoseconds since [`init`] (0 before).
pub fn now_ns() -> u64 {
    let fp = NS_PER_TICK_FP.load(Ordering::Relaxed);
    let ticks = rdtsc().saturating_sub(TSC_BASE.load(Ordering::Relaxed));
    ((u128::from(ticks) * u128::from(fp)) >> 32) as u64
}

/// Microseconds since [`init`] (the defmt timestamp).
pub fn now_us() -> u64 {
    now_ns() / 1000
}

/// The TSC clock as a [`baregpu_hal::time::Clock`].
#[derive(Debug, Clone, Copy, Default)]
pub struct TscClock;

impl Clock for TscClock {
    fn now_ns(&self) -> u64 {
        now_ns()
    }
}
