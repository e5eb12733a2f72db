//! The BCM2835 system timer (CLO +0x04, CHI +0x08: a free-running 1 MHz counter), used as the
//! [`Clock`] behind every bounded wait. QEMU models it (`bcm2835_systmr`).

use baregpu_hal::{MmioRegion, RegisterIo, time::Clock};

const CLO: usize = 0x04;
const CHI: usize = 0x08;

/// The 1 MHz system timer.
#[derive(Debug)]
pub struct SystemTimer {
    io: MmioRegion,
}

impl SystemTimer {
    /// The system timer at [`crate::soc::SYSTEM_TIMER`].
    pub fn new() -> Self {
        // SAFETY: the system timer block is 0x20 bytes of registers; reading CLO/CHI has no side
        // effects, so any number of owners is harmless.
        SystemTimer { io: unsafe { crate::soc::region(crate::soc::SYSTEM_TIMER, 0x20) } }
    }

    /// Microseconds since the counter started (power-on / QEMU start).
    pub fn now_us(&self) -> u64 {
        // CHI/CLO are two registers: re-read CHI until it did not change across the CLO read
        // (a second pass only happens when CLO wrapped in between, once every ~71 minutes).
        loop {
            let hi = self.io.read32(CHI);
            let lo = self.io.read32(CLO);
            if self.io.read32(CHI) == hi {
                return (u64::from(hi) << 32) | u64::from(lo);
            }
        }
    }
}

impl Default for SystemTimer {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for SystemTimer {
    fn now_ns(&self) -> u64 {
        self.now_us().saturating_mul(1000)
    }
}
