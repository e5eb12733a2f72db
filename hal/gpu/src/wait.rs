//! The fence wait, written once: bounded polling of the device's completion with liveness
//! checks while it waits (not only at the deadline), and the error status of fences a reset or
//! a lost device completed.

use core::time::Duration;

use baregpu_hal::time::Clock;

use crate::error::{DeviceGone, FenceError, FenceFailure};
use crate::fence::{Fence, FenceStatus, Timeline};
use crate::liveness::{Unfinished, poll_healthy};

/// What a wait needs from a family: its completion as the device reports it, a marker that
/// moves while the engine works, and the all-ones check.
pub trait FenceSource {
    /// The device's completed sequence number as a 64-bit timeline value (a 32-bit write-back
    /// extended with [`Timeline::extend32`]), read from memory or a register.
    fn read_completed(&self) -> u64;
    /// A value that changes while the engine makes progress (its read pointer), read once
    /// before and once after a timed-out wait to tell a slow engine from a hung one.
    fn progress_marker(&self) -> u64;
    /// `Err(DeviceGone)` if the device reads all-ones.
    fn check_alive(&self) -> Result<(), DeviceGone>;
}

/// Record the device's completion on `timeline` and give `fence`'s status.
pub fn poll_status(source: &impl FenceSource, timeline: &Timeline, fence: &Fence) -> FenceStatus {
    timeline.observe(source.read_completed());
    timeline.status(fence)
}

/// Wait for `fence`, at most `timeout` on `clock`, checking the device's health every
/// [`LIVENESS_CHECK_EVERY`](crate::liveness::LIVENESS_CHECK_EVERY) polls and at the deadline.
///
/// `Ok` once it signalled; [`FenceError::Failed`] if it completed with an error (a reset lost
/// its work); [`FenceError::DeviceGone`] if the device stopped answering, and then every
/// outstanding fence of `timeline` completes with [`FenceFailure::DeviceGone`];
/// [`FenceError::Timeout`] otherwise, saying whether the engine progressed.
pub fn wait(
    source: &impl FenceSource,
    timeline: &Timeline,
    clock: &impl Clock,
    fence: &Fence,
    timeout: Duration,
) -> Result<(), FenceError> {
    wait_with(source, timeline, clock, fence, timeout, || {
        source.check_alive().err().map(FenceError::from)
    })
}

/// [`wait`] with the family's own health check (`health` runs every
/// [`LIVENESS_CHECK_EVERY`](crate::liveness::LIVENESS_CHECK_EVERY) polls and at the deadline,
/// and ends the wait with its error: device gone, an engine's fault).
pub fn wait_with<E: From<FenceError>>(
    source: &impl FenceSource,
    timeline: &Timeline,
    clock: &impl Clock,
    fence: &Fence,
    timeout: Duration,
    mut health: impl FnMut() -> Option<E>,
) -> Result<(), E> {
    let seq = fence.seq();
    let settled = |status: FenceStatus| match status {
        FenceStatus::Pending => None,
        FenceStatus::Signalled => Some(Ok(())),
        FenceStatus::Failed(failure) => Some(Err(FenceError::Failed { seq, failure })),
        FenceStatus::NotSubmitted => Some(Err(FenceError::NotSubmitted { seq })),
    };
    if let Some(done) = settled(timeline.status(fence)) {
        return done.map_err(E::from);
    }
    let marker_before = source.progress_marker();
    let signalled_before = timeline.last_signalled();
    let mut gone = false;
    let polled = poll_healthy(
        clock,
        timeout,
        || settled(poll_status(source, timeline, fence)),
        || {
            let unhealthy = health();
            gone = unhealthy.is_some() && source.check_alive().is_err();
            unhealthy
        },
    );
    match polled {
        Ok(done) => done.map_err(E::from),
        Err(Unfinished::Unhealthy(e)) => {
            if gone {
                timeline.fail_pending(FenceFailure::DeviceGone);
            }
            Err(e)
        }
        Err(Unfinished::TimedOut(waited)) => Err(E::from(FenceError::Timeout {
            seq,
            last_signalled: timeline.last_signalled(),
            waited,
            progressed: source.progress_marker() != marker_before
                || timeline.last_signalled() != signalled_before,
        })),
    }
}
