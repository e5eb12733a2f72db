//! Bounded waits that check the device's health while they poll, so a dead device is reported
//! within a few polls, not only at the deadline (every family waits this way: fences, ring
//! space, ring tests, queue drains).

use core::time::Duration;

use baregpu_hal::time::{Clock, TimedOut, poll_until};

/// Polls between two health checks while waiting on DMA memory (fences, ring space): a device
/// that fell off the bus is reported within 64 polls instead of only at the deadline, without
/// a register read per poll.
pub const LIVENESS_CHECK_EVERY: u64 = 64;

/// How a [`poll_healthy`] wait ended without its condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unfinished<E> {
    /// `health` reported an error (device gone, an engine's fault).
    Unhealthy(E),
    /// The deadline passed and `health` found nothing wrong.
    TimedOut(TimedOut),
}

/// Poll `done` until it gives a value, at most `timeout` on `clock`. Every
/// [`LIVENESS_CHECK_EVERY`] polls, and once more at the deadline, `health` runs and may end
/// the wait with its error.
pub fn poll_healthy<T, E>(
    clock: &impl Clock,
    timeout: Duration,
    mut done: impl FnMut() -> Option<T>,
    mut health: impl FnMut() -> Option<E>,
) -> Result<T, Unfinished<E>> {
    let mut polls = 0u64;
    let polled = poll_until(clock, timeout, || {
        if let Some(value) = done() {
            return Some(Ok(value));
        }
        polls += 1;
        if polls.is_multiple_of(LIVENESS_CHECK_EVERY) {
            return health().map(Err);
        }
        None
    });
    match polled {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(e)) => Err(Unfinished::Unhealthy(e)),
        Err(waited) => Err(health().map_or(Unfinished::TimedOut(waited), Unfinished::Unhealthy)),
    }
}
