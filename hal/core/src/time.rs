//! Monotonic time and bounded polling.
//!
//! Every wait on hardware in this framework is bounded: a hung engine or a device that fell off
//! the bus must become an error, never an endless loop.

use core::fmt;
use core::time::Duration;

/// A monotonic clock (TSC, PTIMER, the Pi system timer, the host clock in tests).
///
/// # What an implementation must guarantee (porting guide)
///
/// - **Monotonic**: successive readings never decrease, on every CPU the driver runs on (an
///   invariant TSC, Arm's `CNTVCT_EL0`, the Pi's 1 MHz system timer, HPET).
/// - **Free-running**: it advances without interrupts. The drivers poll with interrupts off
///   (inside a lock an interrupt handler also takes); a tick counter incremented by a timer
///   interrupt would stop there, and every bounded wait would become endless.
/// - **Resolution**: any; a wait lasts at least its timeout and ends at the first reading at or
///   past it. 1 µs or better keeps the drivers' waits close to their timeouts (defaults of
///   100 ms, fence waits of the caller's choosing); a 10 ms tick still works, rounding them up.
/// - **Cheap and lock-free**: `now_ns` is called once per poll, also in interrupt context.
pub trait Clock {
    /// Nanoseconds since an arbitrary fixed point; never decreases.
    fn now_ns(&self) -> u64;

    /// Busy-wait for `duration`.
    fn delay(&self, duration: Duration) {
        let end = self.now_ns().saturating_add(duration_ns(duration));
        while self.now_ns() < end {
            core::hint::spin_loop();
        }
    }
}

impl<C: Clock + ?Sized> Clock for &C {
    fn now_ns(&self) -> u64 {
        (**self).now_ns()
    }
}

fn duration_ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// A condition did not become true within its timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct TimedOut {
    /// How long was waited, in microseconds.
    pub waited_us: u64,
    /// How many times the condition was checked.
    pub polls: u64,
}

impl TimedOut {
    /// A wait of `waited_us` microseconds and `polls` checks that ended without the condition.
    pub const fn new(waited_us: u64, polls: u64) -> TimedOut {
        TimedOut { waited_us, polls }
    }
}

impl fmt::Display for TimedOut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "timed out after {} us ({} polls)", self.waited_us, self.polls)
    }
}

impl core::error::Error for TimedOut {}

/// A point in time after which a wait gives up.
#[derive(Debug, Clone, Copy)]
pub struct Deadline {
    start_ns: u64,
    end_ns: u64,
}

impl Deadline {
    /// `timeout` from now on `clock`.
    pub fn after(clock: &impl Clock, timeout: Duration) -> Deadline {
        let start_ns = clock.now_ns();
        Deadline { start_ns, end_ns: start_ns.saturating_add(duration_ns(timeout)) }
    }

    /// Whether the deadline has passed.
    pub fn expired(&self, clock: &impl Clock) -> bool {
        clock.now_ns() >= self.end_ns
    }

    fn timed_out(&self, clock: &impl Clock, polls: u64) -> TimedOut {
        TimedOut { waited_us: clock.now_ns().saturating_sub(self.start_ns) / 1000, polls }
    }
}

/// Call `check` until it returns `Some`, at most for `timeout`. The condition is always checked
/// at least once, and once more after the deadline passes (so a slow poll still sees a result
/// that arrived in time).
pub fn poll_until<T>(
    clock: &impl Clock,
    timeout: Duration,
    mut check: impl FnMut() -> Option<T>,
) -> Result<T, TimedOut> {
    let deadline = Deadline::after(clock, timeout);
    let mut polls = 0u64;
    loop {
        let expired = deadline.expired(clock);
        polls += 1;
        if let Some(value) = check() {
            return Ok(value);
        }
        if expired {
            return Err(deadline.timed_out(clock, polls));
        }
        core::hint::spin_loop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::cell::Cell;

    /// A clock that advances 1 µs per reading.
    struct StepClock(Cell<u64>);
    impl Clock for StepClock {
        fn now_ns(&self) -> u64 {
            let t = self.0.get();
            self.0.set(t + 1000);
            t
        }
    }

    #[test]
    fn poll_returns_the_value_as_soon_as_the_condition_holds() {
        let clock = StepClock(Cell::new(0));
        let mut n = 0;
        let got = poll_until(&clock, Duration::from_millis(1), || {
            n += 1;
            (n == 3).then_some(n)
        });
        assert_eq!(got, Ok(3));
    }

    #[test]
    fn poll_gives_up_at_the_deadline_with_the_time_waited() {
        let clock = StepClock(Cell::new(0));
        let err = poll_until(&clock, Duration::from_micros(50), || None::<()>).unwrap_err();
        assert!(err.waited_us >= 50 && err.waited_us < 60, "{err:?}");
        assert!(err.polls >= 25, "{err:?}");
    }

    #[test]
    fn delay_waits_at_least_the_duration() {
        let clock = StepClock(Cell::new(0));
        clock.delay(Duration::from_micros(10));
        assert!(clock.0.get() >= 10_000);
    }
}
