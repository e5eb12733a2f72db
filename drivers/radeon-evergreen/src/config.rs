//! Ring sizes and timeouts.

use core::time::Duration;

use baregpu_ring::evergreen::{MAX_RING_DWORDS, MIN_RING_DWORDS};

use crate::error::ConfigError;

/// Sizes and timeouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RingConfig {
    /// Command ring bytes (power of two, 4 KiB ..= 1 MiB: `baregpu_ring::evergreen` limits).
    pub ring_bytes: usize,
    /// Interrupt ring bytes (power of two, 256 B ..= 256 KiB; 16-byte vectors).
    pub ih_ring_bytes: usize,
    /// How long a submission waits for ring space.
    pub submit_timeout: Duration,
    /// How long the ring and IB tests wait.
    pub test_timeout: Duration,
}

impl Default for RingConfig {
    fn default() -> Self {
        RingConfig {
            ring_bytes: 64 * 1024,
            ih_ring_bytes: 4096,
            submit_timeout: Duration::from_millis(100),
            test_timeout: Duration::from_millis(100),
        }
    }
}

impl RingConfig {
    /// The default with a ring of `bytes`.
    pub fn with_ring_bytes(bytes: usize) -> Self {
        RingConfig { ring_bytes: bytes, ..RingConfig::default() }
    }

    pub(crate) fn validate(&self) -> Result<(), ConfigError> {
        let b = self.ring_bytes;
        let dwords = MIN_RING_DWORDS * 4..=MAX_RING_DWORDS * 4;
        if !b.is_power_of_two() || !dwords.contains(&b) {
            return Err(ConfigError::BadRingSize { bytes: b });
        }
        let ih = self.ih_ring_bytes;
        if !ih.is_power_of_two() || !(256..=256 << 10).contains(&ih) {
            return Err(ConfigError::BadIhRingSize { bytes: ih });
        }
        Ok(())
    }
}
