//! Monotonic time: the generic timer's virtual counter (`baregpu_platform::clock::CounterClock`,
//! CNTVCT_EL0 at CNTFRQ_EL0, 62.5 MHz on QEMU `virt`), kept in a global for the defmt timestamp
//! and the cases.

use baregpu_hal::time::Clock;
use baregpu_platform::clock::CounterClock;
use spin::Once;

static COUNTER: Once<CounterClock> = Once::new();

/// Start the clock (time 0) from CNTFRQ_EL0; logs the frequency.
pub fn init() {
    match CounterClock::new() {
        Ok(counter) => {
            let counter = COUNTER.call_once(|| counter);
            defmt::info!("clock: generic timer {=u64} Hz (CNTFRQ_EL0)", counter.hz());
        }
        Err(e) => defmt::error!("clock: unusable CNTFRQ_EL0 ({}); time stays 0", e),
    }
}

/// Nanoseconds since [`init`] (0 before).
pub fn now_ns() -> u64 {
    COUNTER.get().map_or(0, |c| c.now_ns())
}

/// Microseconds since [`init`] (the defmt timestamp).
pub fn now_us() -> u64 {
    now_ns() / 1000
}

/// The kernel's clock as a [`baregpu_hal::time::Clock`] (a handle on the global).
#[derive(Debug, Clone, Copy, Default)]
pub struct KernelClock;

impl Clock for KernelClock {
    fn now_ns(&self) -> u64 {
        now_ns()
    }
}
