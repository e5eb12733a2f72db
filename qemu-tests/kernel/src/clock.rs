//! Monotonic time: the TSC calibrated against PIT channel 2 (`baregpu_platform::clock`), kept
//! in a global for the defmt timestamp and the cases.
//!
//! Under TCG the guest TSC is the host's TSC (QEMU's `cpu_get_host_ticks`), so only a
//! measurement against an emulated timer tells its rate: CPUID 0x15/0x16 of `-cpu max` (when
//! present) describe the modelled CPU, not the host. The PIT's counter follows QEMU's virtual
//! clock, which tracks host time; a 20 ms window costs 20 ms of boot and gives well under 1 %
//! error (the CPUID values are logged for comparison).

use baregpu_hal::time::Clock;
pub use baregpu_platform::clock::CalibrationError;
use spin::Once;

/// Calibration window in milliseconds.
const CALIBRATION_MS: u16 = 20;
/// Frequency assumed when calibration fails (logged as an error; times are then approximate).
const FALLBACK_HZ: u64 = 1_000_000_000;

static TSC: Once<baregpu_platform::clock::TscClock> = Once::new();

/// Calibrate the TSC; time 0 is the end of the calibration. Returns the TSC frequency in Hz.
pub fn init() -> Result<u64, CalibrationError> {
    let measured = baregpu_platform::clock::TscClock::calibrate_pit(CALIBRATION_MS);
    let tsc = match measured {
        Ok(tsc) => tsc,
        Err(e) => baregpu_platform::clock::TscClock::from_hz(FALLBACK_HZ).map_err(|_| e)?,
    };
    let tsc = *TSC.call_once(|| tsc);
    let leaf15 = core::arch::x86_64::__cpuid(0x15);
    let leaf16 = core::arch::x86_64::__cpuid(0x16);
    defmt::info!(
        "clock: TSC {=u64} Hz from PIT; CPUID.15h eax={=u32} ebx={=u32} ecx={=u32}, CPUID.16h base={=u32} MHz (informational)",
        tsc.hz(),
        leaf15.eax,
        leaf15.ebx,
        leaf15.ecx,
        leaf16.eax
    );
    measured.map(|m| m.hz())
}

/// Nanoseconds since [`init`] (0 before).
pub fn now_ns() -> u64 {
    TSC.get().map_or(0, |tsc| tsc.now_ns())
}

/// Microseconds since [`init`] (the defmt timestamp).
pub fn now_us() -> u64 {
    now_ns() / 1000
}

/// The clock the shared code (mailbox, logger, cases) uses.
pub use TscClock as KernelClock;

/// The kernel's TSC clock as a [`baregpu_hal::time::Clock`] (a handle on the global).
#[derive(Debug, Clone, Copy, Default)]
pub struct TscClock;

impl Clock for TscClock {
    fn now_ns(&self) -> u64 {
        now_ns()
    }
}
