//! A small scheduler over [`GpuQueue`]: how an OS drives several GPUs, of any family, from one
//! loop.
//!
//! - A [`Lane`] is one GPU queue with a fixed-size FIFO of queued jobs and a fixed-size window
//!   of jobs in flight (each with its fence and deadline). Jobs are the caller's type `W`,
//!   turned into packets by [`Work::build`] for each family (one job type, one `impl` per
//!   family).
//! - The [`Scheduler`] steps its lanes as [`Engine`] trait objects (the families' queue types
//!   differ) and submits **round-robin**: one job per lane per turn, starting with a different
//!   lane each [`step`](Scheduler::step), so no GPU waits behind another's backlog. The lanes
//!   stay the caller's: jobs go in with [`Engine::enqueue`], each GPU's interrupt handler calls
//!   its own lane, and the queues are at hand between steps.
//! - **Completion by interrupt**: [`Engine::on_interrupt`] (from the GPU's interrupt handler)
//!   calls the queue's [`GpuQueue::handle_interrupts`], which acknowledges the device and
//!   returns its completed-up-to mark; [`step`](Scheduler::step) reports the jobs it
//!   completed. Polled lanes ([`Completion::Polled`]) read the fence write-back instead.
//! - **Timeouts**: a job in flight past its deadline makes the lane look at its GPU. One that
//!   stopped answering is **gone**: every fence in flight completes with
//!   [`FenceFailure::DeviceGone`] on the queue's timeline, every queued job fails without being
//!   submitted, the lane refuses new work, and the other lanes go on. One that answers but did
//!   not finish is **hung**: the job fails with [`JobError::TimedOut`] and the queue is reset
//!   (its reset completes the lost fences with [`FenceFailure::Lost`]).
//! - No allocation anywhere: the FIFOs are arrays sized by a const parameter, events go to a
//!   caller's closure.
//!
//! ```
//! use gpu_scheduler::{JobId, Scheduler};
//! # use gpu_scheduler::{Engine, Event, LaneState, LaneStats, Refused};
//! # use baregpu_gpu::{Fence, FenceStatus};
//! # struct Idle;
//! # impl Engine<u32> for Idle {
//! #     fn enqueue(&mut self, _: JobId, w: u32) -> Result<(), Refused<u32>> {
//! #         Err(Refused { work: w, reason: gpu_scheduler::RefuseReason::Full })
//! #     }
//! #     fn submit_next(&mut self, _: usize, _: u64, _: &mut dyn FnMut(Event)) -> bool { false }
//! #     fn on_interrupt(&mut self) {}
//! #     fn service(&mut self, _: usize, _: u64, _: &mut dyn FnMut(Event)) {}
//! #     fn busy(&self) -> bool { false }
//! #     fn state(&self) -> LaneState { LaneState::Running }
//! #     fn stats(&self) -> LaneStats { LaneStats::default() }
//! #     fn fence_status(&self, _: &Fence) -> FenceStatus { FenceStatus::NotSubmitted }
//! # }
//! # let (mut r520, mut cypress) = (Idle, Idle);
//! // Lanes over two drivers: `Lane::new(queue, Completion::Interrupt, timeout)`.
//! let _ = r520.enqueue(JobId(1), 0xC0DE);
//! // The main loop (each GPU's interrupt handler calls `its_lane.on_interrupt()`):
//! let mut scheduler = Scheduler::<2>::new();
//! let now_ns = 0;
//! scheduler.step(&mut [&mut r520 as &mut dyn Engine<u32>, &mut cypress], now_ns, &mut |event| {
//!     if let Event::Completed(done) = event {
//!         let _ = (done.lane, done.job, done.result);
//!     }
//! });
//! ```
#![no_std]
#![forbid(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod lane;
#[cfg(feature = "radeon")]
pub mod radeon;

pub use lane::{Completion, Lane};

use baregpu_gpu::{Fence, FenceFailure, FenceStatus, GpuQueue};

/// The caller's name for a job (reported back in its [`Event`]s).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct JobId(pub u32);

/// A job as packets for one family's queue `Q`. One job type implements it once per family
/// it can run on.
pub trait Work<Q: GpuQueue> {
    /// Units (dwords) its packets take; the scheduler adds the fence's.
    fn units(&self) -> usize;
    /// Write its packets into `submission` (within [`units`](Self::units)).
    fn build(&self, submission: &mut Q::Submission<'_>) -> Result<(), Q::BuildError>;
}

/// Why a job did not complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum JobError {
    /// Its fence completed with an error: a reset discarded its work
    /// ([`FenceFailure::Lost`]) or the GPU stopped answering ([`FenceFailure::DeviceGone`]).
    Failed(FenceFailure),
    /// Not complete by its deadline while the GPU still answered: the GPU was reset.
    TimedOut,
    /// Never submitted: its GPU was gone (or stopped after a failed reset) first.
    NotRun(LaneState),
    /// The queue refused the submission (its closure failed or overran, back-pressure did not
    /// clear): nothing of it reached the GPU.
    SubmitFailed,
    /// It timed out and the reset failed: the lane stopped, the fence stays pending on the
    /// queue's timeline (nothing is known about it).
    ResetFailed,
}

impl core::fmt::Display for JobError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            JobError::Failed(failure) => write!(f, "its fence failed: {failure}"),
            JobError::TimedOut => f.write_str("not complete by its deadline; the GPU was reset"),
            JobError::NotRun(state) => write!(f, "never submitted: the lane is {state:?}"),
            JobError::SubmitFailed => f.write_str("the queue refused the submission"),
            JobError::ResetFailed => f.write_str("timed out and the GPU's reset failed"),
        }
    }
}

impl core::error::Error for JobError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            JobError::Failed(failure) => Some(failure),
            _ => None,
        }
    }
}

/// A finished job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Done {
    /// Its lane (index in the scheduler).
    pub lane: usize,
    /// The caller's name for it.
    pub job: JobId,
    /// Its fence (`None` if it was never submitted).
    pub fence: Option<Fence>,
    /// How it ended.
    pub result: Result<(), JobError>,
    /// Its completion was recorded by the interrupt handler (not by a poll).
    pub by_interrupt: bool,
}

/// What [`Scheduler::step`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Event {
    /// A job's packets and fence went to its GPU (one doorbell).
    Submitted {
        /// Its lane.
        lane: usize,
        /// The job.
        job: JobId,
        /// Its fence.
        fence: Fence,
    },
    /// A job finished (in submission order within a lane).
    Completed(Done),
}

/// Where a lane stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum LaneState {
    /// Accepting and running work.
    Running,
    /// The GPU stopped answering: its fences failed, it takes no more work.
    Gone,
    /// A reset after a timeout failed: the lane takes no more work.
    Stopped,
}

/// Why [`Engine::enqueue`] did not take a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum RefuseReason {
    /// The lane's queue is full: step the scheduler and try again.
    Full,
    /// The lane is not running (its GPU is gone or stopped).
    NotRunning(LaneState),
}

/// A job [`Engine::enqueue`] did not take, handed back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refused<W> {
    /// The job's work, unchanged.
    pub work: W,
    /// Why.
    pub reason: RefuseReason,
}

impl<W> core::fmt::Display for Refused<W> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.reason {
            RefuseReason::Full => f.write_str("the lane's queue is full"),
            RefuseReason::NotRunning(state) => write!(f, "the lane is {state:?}"),
        }
    }
}

impl<W: core::fmt::Debug> core::error::Error for Refused<W> {}

/// Counters of one lane.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct LaneStats {
    /// Jobs submitted.
    pub submitted: u64,
    /// Jobs whose completion the interrupt handler recorded.
    pub completed_by_interrupt: u64,
    /// Jobs whose completion a poll recorded (polled lanes; a deadline's last look).
    pub completed_by_poll: u64,
    /// Jobs that ended with an error.
    pub failed: u64,
    /// Deadlines that passed with the job unfinished.
    pub timeouts: u64,
    /// Resets after a timeout.
    pub resets: u64,
    /// Interrupts handled.
    pub interrupts: u64,
}

/// One lane as the scheduler drives it, whatever its queue's family (object safe; [`Lane`]
/// implements it).
pub trait Engine<W> {
    /// Queue a job, or hand it back.
    fn enqueue(&mut self, job: JobId, work: W) -> Result<(), Refused<W>>;
    /// Submit the oldest queued job if the in-flight window has room; `true` if a job left the
    /// queue (submitted or failed).
    fn submit_next(&mut self, lane: usize, now_ns: u64, events: &mut dyn FnMut(Event)) -> bool;
    /// The GPU interrupted: acknowledge it and record completions (interrupt context: reports
    /// nothing itself; the next [`service`](Self::service) does).
    fn on_interrupt(&mut self);
    /// Report finished jobs; act on passed deadlines (gone or hung GPU).
    fn service(&mut self, lane: usize, now_ns: u64, events: &mut dyn FnMut(Event));
    /// Jobs queued or in flight.
    fn busy(&self) -> bool;
    /// Running, gone or stopped.
    fn state(&self) -> LaneState;
    /// Counters.
    fn stats(&self) -> LaneStats;
    /// A fence's status on the lane's timeline.
    fn fence_status(&self, fence: &Fence) -> FenceStatus;
}

/// The round-robin dispatcher over `N` lanes. It keeps only whose turn is first; the lanes
/// stay the caller's (typed access to each queue between steps, each GPU's interrupt handler
/// reaching its own lane only), and are lent to every [`step`](Self::step).
#[derive(Debug, Clone, Default)]
pub struct Scheduler<const N: usize> {
    /// The lane that goes first in the next dispatch.
    next: usize,
}

impl<const N: usize> Scheduler<N> {
    /// A scheduler whose first step starts with lane 0.
    pub const fn new() -> Self {
        Scheduler { next: 0 }
    }

    /// One turn over `lanes` (index = lane number in events): every lane reports its finished
    /// jobs and acts on passed deadlines, then jobs are submitted round-robin (one per lane per
    /// round, rounds until no lane can take one; the first lane rotates every step). Returns
    /// the jobs that left the queues.
    pub fn step<W, E: ?Sized + Engine<W>>(
        &mut self,
        lanes: &mut [&mut E; N],
        now_ns: u64,
        events: &mut dyn FnMut(Event),
    ) -> usize {
        for (i, lane) in lanes.iter_mut().enumerate() {
            lane.service(i, now_ns, events);
        }
        let mut dispatched = 0;
        loop {
            let mut any = false;
            for k in 0..N {
                let i = (self.next + k) % N;
                if lanes[i].submit_next(i, now_ns, events) {
                    any = true;
                    dispatched += 1;
                }
            }
            if !any {
                break;
            }
        }
        self.next = (self.next + 1) % N.max(1);
        dispatched
    }

    /// Some lane has jobs queued or in flight.
    pub fn busy<W, E: ?Sized + Engine<W>>(lanes: &[&mut E; N]) -> bool {
        lanes.iter().any(|l| l.busy())
    }
}
