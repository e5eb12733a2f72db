//! Ring size, timeouts and where the fence timeline starts.

use core::time::Duration;

use baregpu_ring::r5xx::ring_dwords;

use crate::error::ConfigError;

/// Ring size, timeouts and where the fence timeline starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RingConfig {
    /// Ring size in bytes: a power of two from 32 B to 32 MiB (§11.1 RB_BUFSZ 2..=22 gives
    /// 2^(RB_BUFSZ+1) dwords).
    pub ring_bytes: usize,
    /// Longest wait for ring space (back-pressure) or PIO queue space before a submission fails.
    pub submit_timeout: Duration,
    /// Longest wait for the MicroEngine to idle (`CP_ME_CNTL.ME_BUSY`) before the upload.
    pub idle_timeout: Duration,
    /// Longest wait for the ring/IB test scratch value.
    pub test_timeout: Duration,
    /// The fence timeline's last emitted (and completed) sequence number at init: the first
    /// fence is `timeline_start + 1`. 0 by default. A kernel that brings a device up again
    /// while it still holds fences of the previous driver starts after them, so none of them
    /// reads as signalled by a new fence; a start just below 2^32 exercises the extension of
    /// the scratch register's 32 bits (§5.9) without emitting billions of fences.
    pub timeline_start: u64,
}

impl RingConfig {
    /// 64 KiB ring, all timeouts [`RingConfig::DEFAULT_TIMEOUT`], the timeline from 0.
    pub const DEFAULT: RingConfig = RingConfig {
        ring_bytes: 64 * 1024,
        submit_timeout: Self::DEFAULT_TIMEOUT,
        idle_timeout: Self::DEFAULT_TIMEOUT,
        test_timeout: Self::DEFAULT_TIMEOUT,
        timeline_start: 0,
    };

    /// 100 ms: Linux radeon's `usec_timeout` (100000 µs) for ring tests and idle waits. A
    /// healthy CP consumes a whole 64 KiB ring of register writes in well under a millisecond,
    /// so anything slower is a hang, and 100 ms keeps a dead device's error path short.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(100);

    /// A ring of `ring_bytes` with the default timeouts.
    pub const fn with_ring_bytes(ring_bytes: usize) -> Self {
        RingConfig { ring_bytes, ..Self::DEFAULT }
    }

    /// Whether the CP can use the ring size: the ring crate's own check
    /// ([`ring_dwords`]), applied before anything is allocated.
    pub(crate) fn validate(&self) -> Result<(), ConfigError> {
        match ring_dwords(self.ring_bytes) {
            Ok(_) => Ok(()),
            Err(_) => Err(ConfigError::BadRingSize { bytes: self.ring_bytes }),
        }
    }
}

impl Default for RingConfig {
    fn default() -> Self {
        Self::DEFAULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_config_sizes_follow_rb_bufsz() {
        assert!(RingConfig::with_ring_bytes(32).validate().is_ok());
        assert!(RingConfig::with_ring_bytes(32 << 20).validate().is_ok());
        for bad in [0, 16, 4095, 3 * 1024, 64 << 20] {
            assert_eq!(
                RingConfig::with_ring_bytes(bad).validate(),
                Err(ConfigError::BadRingSize { bytes: bad })
            );
        }
    }
}
