//! Liveness: the one all-ones check, and the one bounded poll loop that runs it while waiting
//! on DMA memory or a queue.

use core::time::Duration;

use baregpu_hal::time::{Clock, TimedOut, poll_until};
use baregpu_hal::{RegisterIo, RegisterIoExt};
use baregpu_regs::r5xx::cp::CP_RB_RPTR;

use crate::consts::LIVENESS_CHECK_EVERY;
use crate::error::DeviceGone;

/// Whether the device reads all-ones: one read of `CP_RB_RPTR`, whose bits 31:23 are not
/// implemented (§11.1), so a live CP never returns 0xFFFF_FFFF there.
pub(crate) fn reads_all_ones(io: &impl RegisterIo) -> bool {
    io.read::<CP_RB_RPTR>().raw() == u32::MAX
}

/// [`DeviceGone`] if the device reads all-ones ([`reads_all_ones`]).
pub(crate) fn check_alive(io: &impl RegisterIo) -> Result<(), DeviceGone> {
    if reads_all_ones(io) { Err(DeviceGone) } else { Ok(()) }
}

/// How a [`poll_healthy`] wait ended without its condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unfinished<E> {
    /// `health` reported an error (device gone, an engine's fault).
    Unhealthy(E),
    /// The deadline passed and `health` found nothing wrong.
    TimedOut(TimedOut),
}

/// Poll `done` until it gives a value, at most `timeout` on `clock`. Every
/// [`LIVENESS_CHECK_EVERY`] polls and once more at the deadline `health` runs and may end the
/// wait with its error, so a dead device is reported within a few polls, not only at the
/// deadline, without a register read per poll.
pub(crate) fn poll_healthy<T, E>(
    clock: &impl Clock,
    timeout: Duration,
    mut done: impl FnMut() -> Option<T>,
    health: impl Fn() -> Option<E>,
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
