//! Counters every family keeps the same way.

/// Counters for tests, benchmarks and logs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Stats {
    /// Submissions committed (one doorbell each).
    pub submissions: u64,
    /// Doorbell writes.
    pub doorbells: u64,
    /// Fences emitted in committed submissions.
    pub fences: u64,
    /// Filler units written to pad submissions.
    pub padding_units: u64,
    /// Submissions discarded (their closure failed or overran): nothing reached the device.
    pub discarded: u64,
    /// Successful resets.
    pub resets: u64,
    /// Successful full recoveries.
    pub recoveries: u64,
    /// Fences completed with an error (lost to a reset or a gone device).
    pub failed_fences: u64,
    /// Indirect buffers started from the ring.
    pub indirect_buffers: u64,
    /// Units written outside the ring (R5xx: dwords through the PIO aperture).
    pub direct_units: u64,
    /// Microcode uploads (bring-up and reloads).
    pub firmware_uploads: u64,
}
