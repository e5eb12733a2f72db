//! Reset and recovery as one protocol: check the device answers, restart the engine (the
//! family's soft reset, ring reprogramming, a microcode reload), run the ring test, and only
//! then complete every fence of the lost work with [`FenceFailure::Lost`]. A failed restart or
//! ring test leaves the fences pending (honest: nothing is known about them) and the caller
//! escalates (a function-level reset and a full recovery).

use crate::error::{DeviceGone, FenceFailure};
use crate::fence::{LostRange, Timeline};

/// What a reset or recovery did to the work in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ResetReport {
    /// The last fence the device signalled before the reset: fences up to here completed.
    pub completed: u64,
    /// The fences whose work was discarded: they completed with [`FenceFailure::Lost`] and
    /// waiters see [`FenceError::Failed`](crate::FenceError::Failed). `None` when nothing was in
    /// flight.
    pub lost: Option<LostRange>,
}

impl ResetReport {
    /// The last fence emitted before the reset (`completed` when nothing was lost).
    pub fn last_emitted(&self) -> u64 {
        self.lost.map_or(self.completed, |r| r.last)
    }
}

/// What the protocol needs from a family.
pub trait Recovery {
    /// Why the family's ring test failed.
    type TestError;

    /// `Err(DeviceGone)` if the device reads all-ones.
    fn check_alive(&self) -> Result<(), DeviceGone>;
    /// The ring test (a value written through the ring, polled, bounded).
    fn ring_test(&mut self) -> Result<(), Self::TestError>;
    /// The device's fence timeline.
    fn timeline(&self) -> &Timeline;
    /// The device's completed sequence number (64-bit), read before the restart so fences the
    /// device finished are not reported lost.
    fn read_completed(&self) -> u64;
}

/// The protocol: [`Recovery::check_alive`], record what completed, `restart` (the family's
/// reset or full recovery, which empties the ring), [`Recovery::ring_test`], then complete the
/// outstanding fences with [`FenceFailure::Lost`]. Returns `restart`'s value and the report.
/// `E` is the caller's error (a reset's, or a full recovery's that also reloads microcode).
pub fn recover<R: Recovery, T, E: From<DeviceGone> + From<R::TestError>>(
    device: &mut R,
    restart: impl FnOnce(&mut R) -> Result<T, E>,
) -> Result<(T, ResetReport), E> {
    device.check_alive()?;
    device.timeline().observe(device.read_completed());
    let value = restart(device)?;
    device.ring_test()?;
    // Only now: the engine is back, so the fences stop being pending.
    let timeline = device.timeline();
    let completed = timeline.last_signalled();
    let lost = timeline.fail_pending(FenceFailure::Lost);
    Ok((value, ResetReport { completed, lost }))
}
