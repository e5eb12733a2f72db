//! The contract every family's driver keeps, written once over [`GpuQueue`] and instantiated by
//! each driver's tests over its in-process device model (issue #17 §1): ordering, wrap,
//! back-pressure, polled and interrupt completion, a stall with work queued, device gone,
//! reset with work in flight, failing and overrunning submission closures (and a property test
//! with closures failing at random points).
//!
//! A driver's test file implements [`Fixture`] (the driver, its in-process model, and a
//! marker the family can write from a submission and read back) and expands
//! [`contract_suite!`]. The drivers' tests run under every pacing `cargo xtask test` uses
//! (the default seed, two more seeds and run-to-idle), so the suite does too.
#![forbid(unsafe_code)]

mod in_process;
pub mod layout;

pub use in_process::InProcessDevice;

use std::time::Duration;

use baregpu_gpu::{FenceError, FenceFailure, FenceStatus, GpuQueue};
use gpu_device_model::GpuModel;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRng, TestRunner};

/// A driver over its in-process model, with what the suite needs from the family.
pub trait Fixture {
    /// The driver.
    type Queue: GpuQueue;

    /// The driver.
    fn queue(&mut self) -> &mut Self::Queue;
    /// The model the driver runs on.
    type Model: GpuModel + 'static;
    /// The driver's in-process model, with how to read its fault switches.
    fn device(&self) -> InProcessDevice<'_, Self::Model>;
    /// Stall (or release) the command processor: it stops consuming the ring.
    fn set_stalled(&self, stalled: bool) {
        self.device().set_stalled(stalled);
    }
    /// Make every register read all-ones (or stop).
    fn set_gone(&self, gone: bool) {
        self.device().set_gone(gone);
    }
    /// Advance the model (the engines work) without the driver.
    fn run_device(&self) {
        self.device().run();
    }
    /// Interrupts the model delivered since the last call; acknowledges the latched lines.
    fn take_interrupts(&self) -> u32 {
        self.device().take_interrupts()
    }
    /// Units of one [`write_marker`](Self::write_marker).
    const MARKER_UNITS: usize;
    /// Write `value` to the family's marker location from a submission (a scratch register).
    fn write_marker(
        s: &mut <Self::Queue as GpuQueue>::Submission<'_>,
        value: u32,
    ) -> Result<(), <Self::Queue as GpuQueue>::BuildError>;
    /// Read the marker location back.
    fn read_marker(&self) -> u32;
    /// A submission the closure fails from, in the family's error type (what a caller's own
    /// check would return).
    fn closure_error() -> <Self::Queue as GpuQueue>::BuildError;
    /// Units of the ring (its capacity, roughly): wrap needs several times this.
    fn ring_units(&self) -> usize;
    /// A fence timeout, in the model's simulated time.
    const TIMEOUT: Duration;
    /// Doorbells (register writes that start work) a committed submission of `markers` marker
    /// writes and a fence rings: one for a ring family (its write pointer), one per marker
    /// where each marker is work started on its own (the V3D's user program requests).
    fn doorbells(markers: usize) -> u64 {
        let _ = markers;
        1
    }
    /// Whether the reset's test needs the engine (a ring test), so a reset fails while it is
    /// stalled. A family whose reset test is a register (the V3D's scratch register) resets a
    /// stalled device at once, abandoning the queued work.
    const RESET_TESTS_ENGINE: bool = true;
}

/// One batch: `markers` marker writes then a fence.
fn marked<F: Fixture>(
    f: &mut F,
    values: impl IntoIterator<Item = u32>,
    reserve: usize,
) -> Result<baregpu_gpu::Fence, <F::Queue as GpuQueue>::SubmitError> {
    f.queue().submit(reserve, |s| {
        for v in values {
            F::write_marker(s, v)?;
        }
        F::Queue::fence(s)
    })
}

fn batch_units<F: Fixture>(markers: usize) -> usize {
    markers * F::MARKER_UNITS + F::Queue::FENCE_UNITS
}

/// Fences signal in emission order and only after the work before them.
pub fn ordering<F: Fixture>(f: &mut F) {
    let fences: Vec<_> =
        (1..=20).map(|i| marked(f, [i], batch_units::<F>(1)).expect("submit")).collect();
    assert!(fences.windows(2).all(|w| w[0].seq() + 1 == w[1].seq()), "consecutive numbers");
    let last = *fences.last().expect("fences");
    f.queue().wait(&last, F::TIMEOUT).expect("last fence");
    for fence in &fences {
        assert_eq!(f.queue().fence_status(fence), FenceStatus::Signalled);
    }
    assert_eq!(f.read_marker(), 20, "the marker before the last fence is in place");
    assert_eq!(f.queue().timeline().completed_up_to(), last.seq());
}

/// Many batches wrap the ring several times; every fence signals, the last marker lands.
pub fn wrap<F: Fixture>(f: &mut F) {
    let per = batch_units::<F>(3);
    let n = (4 * f.ring_units() / per.max(16)).max(64) as u32;
    let mut last = None;
    for i in 0..n {
        let fence = marked(f, [i, i, i], per).expect("submit");
        if i % 16 == 15 {
            f.queue().wait(&fence, F::TIMEOUT).expect("fence");
        }
        last = Some(fence);
    }
    f.queue().wait(&last.expect("fences"), F::TIMEOUT).expect("last fence");
    assert_eq!(f.read_marker(), n - 1);
}

/// Submitting faster than the engine consumes waits for ring space (bounded) and never
/// overwrites what it has not read: every marker value lands in order.
pub fn back_pressure<F: Fixture>(f: &mut F) {
    let per = batch_units::<F>(8);
    let n = (3 * f.ring_units() / per.max(16)).max(32) as u32;
    let mut last = None;
    for i in 0..n {
        last = Some(marked(f, (0..8).map(|k| i * 8 + k), per).expect("back-pressure waits"));
    }
    let last = last.expect("fences");
    f.queue().wait(&last, F::TIMEOUT).expect("last fence");
    assert_eq!(f.read_marker(), n * 8 - 1);
    assert_eq!(f.queue().stats().discarded, 0);
}

/// Polled completion: the completed-up-to mark follows the device without a wait.
pub fn polled_completion<F: Fixture>(f: &mut F) {
    let fence = marked(f, [7], batch_units::<F>(1)).expect("submit");
    let mut done = false;
    for _ in 0..100_000 {
        f.run_device();
        if f.queue().poll_completed() >= fence.seq() {
            done = true;
            break;
        }
    }
    assert!(done, "the fence completed by polling");
    assert_eq!(f.queue().fence_status(&fence), FenceStatus::Signalled);
}

/// Interrupt completion: with fence interrupts on, the interrupt handler reports the
/// completed-up-to mark; with them off, polling alone completes fences.
pub fn interrupt_completion<F: Fixture>(f: &mut F) {
    let polled = marked(f, [8], batch_units::<F>(1)).expect("submit");
    f.queue().wait(&polled, F::TIMEOUT).expect("polled fence");
    for _ in 0..50 {
        f.run_device();
    }
    f.take_interrupts();
    let quiet = marked(f, [8], batch_units::<F>(1)).expect("submit");
    f.queue().wait(&quiet, F::TIMEOUT).expect("polled fence");
    for _ in 0..50 {
        f.run_device();
    }
    assert_eq!(f.take_interrupts(), 0, "polled fences cost no interrupt (opt-in)");
    f.queue().set_fence_interrupts(true).expect("interrupts on");
    let fence = marked(f, [9], batch_units::<F>(1)).expect("submit");
    let mut completed = 0;
    for _ in 0..100_000 {
        f.run_device();
        completed = f.queue().handle_interrupts().expect("handler");
        if completed >= fence.seq() {
            break;
        }
    }
    assert!(completed >= fence.seq(), "the handler reported the fence complete: {completed}");
    assert!(f.take_interrupts() > 0, "the fence raised an interrupt");
    f.queue().set_fence_interrupts(false).expect("interrupts off");
    let polled = marked(f, [10], batch_units::<F>(1)).expect("submit");
    f.queue().wait(&polled, F::TIMEOUT).expect("polled fence");
}

/// A stalled engine with work queued: the wait times out saying it did not progress, the
/// fences stay pending; a reset completes them with [`FenceFailure::Lost`] and service returns.
pub fn stall_and_reset_with_work_in_flight<F: Fixture>(f: &mut F) {
    let done = marked(f, [1], batch_units::<F>(1)).expect("submit");
    f.queue().wait(&done, F::TIMEOUT).expect("before the stall");
    f.set_stalled(true);
    let queued: Vec<_> =
        (2..6).map(|i| marked(f, [i], batch_units::<F>(1)).expect("queued")).collect();
    match f.queue().wait(&queued[3], F::TIMEOUT) {
        Err(FenceError::Timeout { seq, last_signalled, progressed, .. }) => {
            assert_eq!((seq, last_signalled), (queued[3].seq(), done.seq()));
            assert!(!progressed, "a stalled engine does not progress");
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert_eq!(f.queue().fence_status(&queued[0]), FenceStatus::Pending);
    let report = if F::RESET_TESTS_ENGINE {
        // The reset's ring test fails while the stall lasts: the fences stay pending (nothing
        // is known about them), they are not marked before the engine is back.
        assert!(f.queue().reset().is_err(), "the ring test fails on a stalled engine");
        for fence in &queued {
            assert_eq!(f.queue().fence_status(fence), FenceStatus::Pending, "not marked early");
        }
        f.set_stalled(false);
        f.queue().reset().expect("reset")
    } else {
        // A reset that needs no engine abandons the queued work at once: it never runs.
        let report = f.queue().reset().expect("reset of a stalled engine");
        f.set_stalled(false);
        for _ in 0..100 {
            f.run_device();
        }
        assert_eq!(f.read_marker(), 1, "the abandoned markers never ran");
        report
    };
    assert_eq!(report.completed, done.seq());
    let lost = report.lost.expect("work was lost");
    assert_eq!((lost.first, lost.last), (queued[0].seq(), queued[3].seq()));
    for fence in &queued {
        assert_eq!(f.queue().fence_status(fence), FenceStatus::Failed(FenceFailure::Lost));
        assert_eq!(
            f.queue().wait(fence, F::TIMEOUT),
            Err(FenceError::Failed { seq: fence.seq(), failure: FenceFailure::Lost })
        );
    }
    assert_eq!(f.queue().fence_status(&done), FenceStatus::Signalled);
    let after = marked(f, [99], batch_units::<F>(1)).expect("after the reset");
    f.queue().wait(&after, F::TIMEOUT).expect("service restored");
    assert!(after.seq() > queued[3].seq());
    assert_eq!(f.read_marker(), 99);
    assert_eq!(f.queue().stats().failed_fences, 4);
}

/// A device reading all-ones: a wait ends with [`FenceError::DeviceGone`] well before its
/// deadline (the health check runs while it polls), and the outstanding fences complete with
/// [`FenceFailure::DeviceGone`].
pub fn device_gone<F: Fixture>(f: &mut F) {
    f.set_stalled(true);
    let pending = marked(f, [1], batch_units::<F>(1)).expect("submit");
    f.set_gone(true);
    let r = f.queue().wait(&pending, Duration::from_secs(3600));
    assert!(matches!(r, Err(FenceError::DeviceGone(_))), "{r:?}");
    assert_eq!(
        f.queue().fence_status(&pending),
        FenceStatus::Failed(FenceFailure::DeviceGone),
        "the fence completed with an error, it does not stay pending"
    );
    assert!(f.queue().check_alive().is_err());
    // A family may refuse the submission at once (Evergreen reads a register per batch) or
    // take it without a register read (R5xx); either way nothing stays pending.
    if let Ok(late) = f.queue().submit_fence() {
        assert!(matches!(f.queue().wait(&late, F::TIMEOUT), Err(FenceError::DeviceGone(_))));
        assert!(f.queue().fence_status(&late).is_complete(), "not pending: {late:?}");
    }
    f.set_gone(false);
    f.set_stalled(false);
}

/// A closure that fails after writing whole packets leaves nothing in the ring: no doorbell,
/// and its packets do not run with the next submission.
pub fn failing_closure_leaves_nothing<F: Fixture>(f: &mut F) {
    let base = marked(f, [1], batch_units::<F>(1)).expect("submit");
    f.queue().wait(&base, F::TIMEOUT).expect("fence");
    let before = f.queue().stats();
    let emitted = f.queue().timeline().last_emitted();
    let r = f.queue().submit(batch_units::<F>(2), |s| {
        F::write_marker(s, 0xBAD)?;
        F::Queue::fence(s)?;
        Err::<(), _>(F::closure_error())
    });
    assert!(r.is_err());
    let after = f.queue().stats();
    assert_eq!(after.doorbells, before.doorbells, "no doorbell");
    assert_eq!(after.discarded, before.discarded + 1);
    assert_eq!(f.queue().timeline().last_emitted(), emitted, "its fence number taken back");
    let next = marked(f, [2], batch_units::<F>(1)).expect("next submission");
    assert_eq!(next.seq(), emitted + 1);
    f.queue().wait(&next, F::TIMEOUT).expect("next fence");
    assert_eq!(f.read_marker(), 2);
    for _ in 0..100 {
        f.run_device();
    }
    assert_eq!(f.read_marker(), 2, "the failed closure's marker never ran");
}

/// A closure writing past its reservation gets an error, nothing beyond the reservation is
/// written, the submission is discarded, and later submissions are unaffected (a 1000-dword
/// closure used to poison every later fence until a reset).
pub fn overrunning_closure_is_refused<F: Fixture>(f: &mut F) {
    let before = f.queue().stats();
    let r = f.queue().submit(F::MARKER_UNITS, |s| {
        for i in 0..1000 {
            F::write_marker(s, 0xB00 + i)?;
        }
        Ok(())
    });
    assert!(r.is_err(), "an overrun is an error");
    // Even a closure that swallows the refusal fails the submission.
    let swallowed = f.queue().submit(F::MARKER_UNITS, |s| {
        let _ignored = F::write_marker(s, 0xB01);
        let _ignored = F::write_marker(s, 0xB02);
        Ok(())
    });
    assert!(swallowed.is_err(), "a swallowed overrun still fails the submission");
    assert_eq!(f.queue().stats().doorbells, before.doorbells);
    assert_eq!(f.queue().stats().discarded, before.discarded + 2);
    for i in 0..20 {
        let fence = f.queue().submit_fence().expect("later fences fit");
        if i == 19 {
            f.queue().wait(&fence, F::TIMEOUT).expect("signalled");
        }
    }
    assert!(f.read_marker() < 0xB00, "nothing of the refused submissions ran");
}

/// One step of [`closures_failing_at_random_points`]: `markers` marker writes, a fence, and
/// the closure failing after `fail_after` of those writes (`None`: it succeeds; past the end:
/// an overrun of the reservation).
#[derive(Debug, Clone)]
pub struct Step {
    /// Marker writes the closure makes.
    pub markers: usize,
    /// Fail after this many writes (`None`: succeed).
    pub fail_after: Option<usize>,
    /// Reserve room for this many fewer markers than written and none for the fence (an
    /// overrun when above 0).
    pub short: usize,
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    let step =
        (1usize..6, prop::option::of(0usize..7), prop_oneof![4 => Just(0usize), 1 => 1usize..3])
            .prop_map(|(markers, fail_after, short)| Step { markers, fail_after, short });
    prop::collection::vec(step, 1..12)
}

/// Run `plan` on `f`: each step's submission must succeed exactly when its closure neither
/// fails nor overruns; afterwards the marker holds the last value of the last submission that
/// succeeded (nothing of a failed one reached the command processor), the doorbells count
/// only the successes, and the last successful fence signals. `tag` numbers the marker values
/// (kept across plans so every value is new). Returns what did not hold.
pub fn run_plan<F: Fixture>(f: &mut F, plan: &[Step], tag: &mut u32) -> Result<(), String> {
    let base = f.queue().submit_fence().map_err(|e| format!("base fence: {e}"))?;
    f.queue().wait(&base, F::TIMEOUT).map_err(|e| format!("base fence: {e}"))?;
    let mut expected = f.read_marker();
    let doorbells = f.queue().stats().doorbells;
    let mut successes = 0;
    let mut expected_doorbells = 0;
    let mut last = None;
    for step in plan {
        *tag = tag.wrapping_add(1);
        let first = *tag << 8;
        let markers = step.markers.min(255);
        // Short: room for fewer markers than written and no fence: an overrun.
        let reserve = if step.short == 0 {
            batch_units::<F>(markers)
        } else {
            markers.saturating_sub(step.short) * F::MARKER_UNITS
        };
        let r = f.queue().submit(reserve, |s| {
            for k in 0..markers {
                if step.fail_after == Some(k) {
                    return Err(F::closure_error());
                }
                F::write_marker(s, first + k as u32)?;
            }
            F::Queue::fence(s)
        });
        let should_succeed = step.short == 0 && step.fail_after.is_none_or(|k| k >= markers);
        if r.is_ok() != should_succeed {
            return Err(format!("{step:?}: submission ok = {}", r.is_ok()));
        }
        if let Ok(fence) = r {
            successes += 1;
            expected_doorbells += F::doorbells(markers);
            if markers > 0 {
                expected = first + markers as u32 - 1;
            }
            last = Some(fence);
        }
    }
    if let Some(fence) = last {
        f.queue().wait(&fence, F::TIMEOUT).map_err(|e| format!("last good fence: {e}"))?;
    }
    for _ in 0..50 {
        f.run_device();
    }
    if f.read_marker() != expected {
        return Err(format!("marker {:#x}, expected {expected:#x}", f.read_marker()));
    }
    let rung = f.queue().stats().doorbells - doorbells;
    if rung != expected_doorbells {
        return Err(format!(
            "{rung} doorbells for {successes} successful submissions (expected {expected_doorbells})"
        ));
    }
    Ok(())
}

/// A property test over [`run_plan`]: closures failing or overrunning at random points.
pub fn closures_failing_at_random_points<F: Fixture>(f: &mut F) {
    // A fixed seed: the same plans on every run (a failure prints its minimal plan).
    let config = Config { cases: 24, ..Config::default() };
    let rng = TestRng::deterministic_rng(config.rng_algorithm);
    let mut runner = TestRunner::new_with_rng(config, rng);
    // `run` takes an `Fn`: the fixture and the tag counter are shared through cells.
    let fixture = std::cell::RefCell::new(f);
    let tag = std::cell::Cell::new(0u32);
    runner
        .run(&steps(), |plan| {
            let mut guard = fixture.borrow_mut();
            let mut t = tag.get();
            let r = run_plan(&mut **guard, &plan, &mut t);
            tag.set(t);
            r.map_err(TestCaseError::fail)
        })
        .unwrap_or_else(|e| panic!("{e}"));
}

/// The suite as `#[test]` functions: `contract_suite!(make)` where `make` is a function
/// taking a closure that receives a `&mut impl Fixture` (the model it borrows lives in
/// `make`).
#[macro_export]
macro_rules! contract_suite {
    ($make:path) => {
        $crate::contract_suite!(@tests $make;
            ordering, wrap, back_pressure, polled_completion, interrupt_completion,
            stall_and_reset_with_work_in_flight, device_gone, failing_closure_leaves_nothing,
            overrunning_closure_is_refused, closures_failing_at_random_points);
    };
    (@tests $make:path; $($name:ident),*) => {
        $(
            #[test]
            fn $name() {
                $make(|f| $crate::$name(f));
            }
        )*
    };
}
