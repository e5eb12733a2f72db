//! One GPU queue with its queued jobs and its jobs in flight, in fixed-size FIFOs.

use core::time::Duration;

use baregpu_gpu::{DeviceGone, Fence, FenceFailure, FenceStatus, GpuQueue};

use crate::{
    Done, Engine, Event, JobError, JobId, LaneState, LaneStats, RefuseReason, Refused, Work,
};

/// How a lane learns that its jobs finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Completion {
    /// The queue's fence interrupts are on; the GPU's interrupt handler calls
    /// [`Engine::on_interrupt`]. Nothing is polled except
    /// once at a job's deadline (a lost interrupt is then counted as a poll completion).
    Interrupt,
    /// Every [`step`](crate::Scheduler::step) reads the fence write-back; no interrupts.
    Polled,
}

/// A fixed-capacity FIFO (no allocation).
struct Fifo<T, const N: usize> {
    slots: [Option<T>; N],
    head: usize,
    len: usize,
}

impl<T, const N: usize> Fifo<T, N> {
    fn new() -> Self {
        Fifo { slots: core::array::from_fn(|_| None), head: 0, len: 0 }
    }

    fn is_full(&self) -> bool {
        self.len == N
    }

    /// `Err(value)` when full.
    fn push_back(&mut self, value: T) -> Result<(), T> {
        if self.is_full() {
            return Err(value);
        }
        self.slots[(self.head + self.len) % N] = Some(value);
        self.len += 1;
        Ok(())
    }

    fn front(&self) -> Option<&T> {
        if self.len == 0 { None } else { self.slots[self.head].as_ref() }
    }

    fn pop_front(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let value = self.slots[self.head].take();
        self.head = (self.head + 1) % N;
        self.len -= 1;
        value
    }

    /// Oldest first.
    fn iter_mut(&mut self) -> impl Iterator<Item = &mut T> {
        let (head, len) = (self.head, self.len);
        let (wrapped, tail) = self.slots.split_at_mut(head);
        tail.iter_mut().chain(wrapped.iter_mut()).take(len).filter_map(Option::as_mut)
    }
}

/// A job whose fence went to the GPU.
struct InFlight {
    job: JobId,
    fence: Fence,
    deadline_ns: u64,
    /// Set when it finished: the result, and whether an interrupt recorded it.
    done: Option<(Result<(), JobError>, bool)>,
}

/// One GPU queue `Q` running jobs `W`: up to `DEPTH` queued and `DEPTH` in flight.
pub struct Lane<Q: GpuQueue, W, const DEPTH: usize> {
    queue: Q,
    completion: Completion,
    timeout_ns: u64,
    queued: Fifo<(JobId, W), DEPTH>,
    in_flight: Fifo<InFlight, DEPTH>,
    state: LaneState,
    stats: LaneStats,
}

impl<Q: GpuQueue, W: Work<Q>, const DEPTH: usize> Lane<Q, W, DEPTH> {
    /// A lane over `queue`: completion by interrupt (turns the queue's fence interrupts on) or
    /// polled; a job not finished `timeout` after its submission makes the lane check its GPU.
    /// Turning interrupts on runs the family's interrupt test: its failure is the error.
    pub fn new(
        mut queue: Q,
        completion: Completion,
        timeout: Duration,
    ) -> Result<Self, Q::ResetError> {
        queue.set_fence_interrupts(completion == Completion::Interrupt)?;
        Ok(Lane {
            queue,
            completion,
            timeout_ns: u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX),
            queued: Fifo::new(),
            in_flight: Fifo::new(),
            state: LaneState::Running,
            stats: LaneStats::default(),
        })
    }

    /// Its queue.
    pub fn queue(&self) -> &Q {
        &self.queue
    }

    /// Its queue, for work outside the scheduler (nothing may be in flight through it then).
    pub fn queue_mut(&mut self) -> &mut Q {
        &mut self.queue
    }

    /// Jobs queued, not yet submitted.
    pub fn queued(&self) -> usize {
        self.queued.len
    }

    /// Jobs in flight (submitted, not yet reported finished): at most `DEPTH`.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len
    }

    /// The queue back.
    pub fn into_queue(self) -> Q {
        self.queue
    }

    /// Mark the jobs in flight up to `mark` finished, with their fences' status.
    fn record(&mut self, mark: u64, by_interrupt: bool) {
        let timeline = self.queue.timeline();
        for slot in self.in_flight.iter_mut() {
            if slot.done.is_some() || slot.fence.seq() > mark {
                continue;
            }
            let result = match timeline.status(&slot.fence) {
                FenceStatus::Signalled => Ok(()),
                FenceStatus::Failed(failure) => Err(JobError::Failed(failure)),
                FenceStatus::Pending | FenceStatus::NotSubmitted => continue,
            };
            slot.done = Some((result, by_interrupt));
        }
    }

    /// The GPU stopped answering: its outstanding fences complete with
    /// [`FenceFailure::DeviceGone`] (the queue's timeline says so to every holder of a fence),
    /// and the lane stops.
    fn lose_device(&mut self) {
        self.state = LaneState::Gone;
        let timeline = self.queue.timeline();
        timeline.fail_pending(FenceFailure::DeviceGone);
        self.record(timeline.completed_up_to(), false);
    }

    /// The oldest unfinished job passed its deadline: a last look at the write-back, then gone
    /// (all-ones) or hung (reset).
    fn deadline_passed(&mut self) {
        self.record(self.queue.poll_completed(), false);
        if !self.in_flight.iter_mut().any(|s| s.done.is_none()) {
            return;
        }
        self.stats.timeouts += 1;
        if self.queue.check_alive().is_err() {
            self.lose_device();
            return;
        }
        if let Some(oldest) = self.in_flight.iter_mut().find(|s| s.done.is_none()) {
            oldest.done = Some((Err(JobError::TimedOut), false));
        }
        match self.queue.reset() {
            Ok(_) => {
                self.stats.resets += 1;
                self.record(self.queue.timeline().completed_up_to(), false);
            }
            Err(_) => {
                self.state = LaneState::Stopped;
                for slot in self.in_flight.iter_mut().filter(|s| s.done.is_none()) {
                    slot.done = Some((Err(JobError::ResetFailed), false));
                }
            }
        }
    }

    fn report(&mut self, done: Done, events: &mut dyn FnMut(Event)) {
        match (done.result, done.by_interrupt) {
            (Err(_), _) => self.stats.failed += 1,
            (Ok(()), true) => self.stats.completed_by_interrupt += 1,
            (Ok(()), false) => self.stats.completed_by_poll += 1,
        }
        events(Event::Completed(done));
    }
}

impl<Q: GpuQueue, W: Work<Q>, const DEPTH: usize> Engine<W> for Lane<Q, W, DEPTH> {
    fn enqueue(&mut self, job: JobId, work: W) -> Result<(), Refused<W>> {
        if self.state != LaneState::Running {
            return Err(Refused { work, reason: RefuseReason::NotRunning(self.state) });
        }
        self.queued
            .push_back((job, work))
            .map_err(|(_, work)| Refused { work, reason: RefuseReason::Full })
    }

    fn submit_next(&mut self, lane: usize, now_ns: u64, events: &mut dyn FnMut(Event)) -> bool {
        if self.state != LaneState::Running || self.in_flight.is_full() {
            return false;
        }
        let Some((job, work)) = self.queued.pop_front() else { return false };
        let units = work.units() + Q::FENCE_UNITS;
        let submitted = self.queue.submit(units, |s: &mut Q::Submission<'_>| {
            work.build(s)?;
            Q::fence(s)
        });
        match submitted {
            Ok(fence) => {
                let deadline_ns = now_ns.saturating_add(self.timeout_ns);
                // Cannot fail: the window had room and nothing else filled it.
                let _ = self.in_flight.push_back(InFlight { job, fence, deadline_ns, done: None });
                self.stats.submitted += 1;
                events(Event::Submitted { lane, job, fence });
            }
            Err(_) => {
                let error = if self.queue.check_alive().is_err() {
                    self.lose_device();
                    JobError::NotRun(LaneState::Gone)
                } else {
                    JobError::SubmitFailed
                };
                let done = Done { lane, job, fence: None, result: Err(error), by_interrupt: false };
                self.report(done, events);
            }
        }
        true
    }

    fn on_interrupt(&mut self) {
        match self.queue.handle_interrupts() {
            Ok(mark) => {
                self.stats.interrupts += 1;
                self.record(mark, true);
            }
            Err(DeviceGone) => self.lose_device(),
        }
    }

    fn service(&mut self, lane: usize, now_ns: u64, events: &mut dyn FnMut(Event)) {
        if self.state == LaneState::Running {
            if self.completion == Completion::Polled {
                self.record(self.queue.poll_completed(), false);
            }
            let overdue =
                self.in_flight.iter_mut().any(|s| s.done.is_none() && s.deadline_ns <= now_ns);
            if overdue {
                self.deadline_passed();
            }
        }
        while let Some(InFlight { done: Some(_), .. }) = self.in_flight.front() {
            let Some(slot) = self.in_flight.pop_front() else { break };
            let Some((result, by_interrupt)) = slot.done else { break };
            let done = Done { lane, job: slot.job, fence: Some(slot.fence), result, by_interrupt };
            self.report(done, events);
        }
        if self.state != LaneState::Running {
            while let Some((job, _)) = self.queued.pop_front() {
                let result = Err(JobError::NotRun(self.state));
                let done = Done { lane, job, fence: None, result, by_interrupt: false };
                self.report(done, events);
            }
        }
    }

    fn busy(&self) -> bool {
        self.queued.len > 0 || self.in_flight.len > 0
    }

    fn state(&self) -> LaneState {
        self.state
    }

    fn stats(&self) -> LaneStats {
        self.stats
    }

    fn fence_status(&self, fence: &Fence) -> FenceStatus {
        self.queue.timeline().status(fence)
    }
}
