//! The fence timeline: 64-bit sequence numbers, what the device completed, and what resets
//! and a lost device did to the work in flight.
//!
//! Every family numbers its fences from one 64-bit timeline (at a billion fences a second it
//! wraps after 584 years: never). A family whose hardware writes back fewer bits (R5xx scratch
//! registers: 32) extends the written-back value with [`Timeline::extend32`] before handing it
//! to [`Timeline::observe`].
//!
//! A fence ends in one of two ways (Linux dma-fence): **signalled** (the device passed it) or
//! **failed** with a [`FenceFailure`] (a reset discarded its work, or the device went away).
//! It never stays pending after the reset that lost it: [`Timeline::fail_pending`] completes
//! every outstanding fence with an error, and drivers call it only once their ring test passed
//! (see [`crate::recovery`]), so a failed reset leaves the fences honestly pending.

use core::cell::Cell;

use crate::error::FenceFailure;

/// How many losses (resets or a lost device with work in flight) a [`Timeline`] remembers
/// per fence range; a fence older than all of them reads [`FenceFailure::Forgotten`] if it
/// might have been lost.
pub const LOST_HISTORY: usize = 16;

/// A point on a device's timeline: done once the device passed the fence's packets.
///
/// Made only by [`Timeline::emit`]; `Copy`, so any number of waiters may hold it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Fence {
    seq: u64,
}

impl Fence {
    /// Its 64-bit sequence number (1 for the first fence of a timeline).
    pub const fn seq(&self) -> u64 {
        self.seq
    }
}

/// Where a fence is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum FenceStatus {
    /// Emitted, not yet passed by the device.
    Pending,
    /// The device passed it: the work before it completed.
    Signalled,
    /// Completed with an error: the work before it did not (all) run.
    Failed(FenceFailure),
    /// Never emitted on this timeline.
    NotSubmitted,
}

impl FenceStatus {
    /// Whether the fence is no longer pending (signalled or failed).
    pub const fn is_complete(self) -> bool {
        matches!(self, FenceStatus::Signalled | FenceStatus::Failed(_))
    }
}

/// Fences `first..=last` completed with `failure` (one reset or one lost device).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct LostRange {
    /// The first fence that failed.
    pub first: u64,
    /// The last fence that failed (the last emitted at the time).
    pub last: u64,
    /// Why.
    pub failure: FenceFailure,
}

impl LostRange {
    /// How many fences failed.
    pub const fn count(&self) -> u64 {
        self.last - self.first + 1
    }

    /// Whether `seq` is among them.
    pub const fn contains(&self, seq: u64) -> bool {
        self.first <= seq && seq <= self.last
    }
}

/// A device's fence timeline: emitted sequence numbers, the completed-up-to mark, the recent
/// losses. Completion is recorded through `&self` (waits and interrupt handlers read the
/// device's write-back and record it without exclusive access); emission and rollback need
/// `&mut self`.
#[derive(Debug, Default)]
pub struct Timeline {
    emitted: u64,
    /// Every fence up to here is complete (signalled or failed).
    completed: Cell<u64>,
    /// The last sequence number the device itself reported.
    signalled: Cell<u64>,
    lost: [Cell<Option<LostRange>>; LOST_HISTORY],
    /// Next slot of `lost` to overwrite.
    next_lost: Cell<usize>,
    /// Fences up to here may have been lost in a range no longer recorded.
    forgotten_until: Cell<u64>,
}

/// A point to roll a [`Timeline`] back to when a submission is discarded
/// ([`Timeline::checkpoint`], [`Timeline::rollback`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checkpoint {
    emitted: u64,
}

impl Timeline {
    /// A timeline with nothing emitted.
    pub fn new() -> Self {
        Self::default()
    }

    /// The next fence. The driver writes `seq()` into the family's fence packet; when the
    /// packet cannot be written, [`rollback`](Self::rollback) returns the number.
    pub fn emit(&mut self) -> Fence {
        self.emitted += 1;
        Fence { seq: self.emitted }
    }

    /// The next sequence number [`emit`](Self::emit) would give (for a family that must encode
    /// the packet before it commits to the number).
    pub fn peek_next(&self) -> u64 {
        self.emitted + 1
    }

    /// The last sequence number emitted (0 before the first fence).
    pub fn last_emitted(&self) -> u64 {
        self.emitted
    }

    /// Every fence up to this one is complete (signalled or failed): the "completed up to" an
    /// interrupt handler reports.
    pub fn completed_up_to(&self) -> u64 {
        self.completed.get()
    }

    /// The last sequence number the device reported (not counting failed fences).
    pub fn last_signalled(&self) -> u64 {
        self.signalled.get()
    }

    /// Fences emitted and not yet complete.
    pub fn outstanding(&self) -> u64 {
        self.emitted - self.completed.get()
    }

    /// Where the timeline stands, for a submission that may be discarded.
    pub fn checkpoint(&self) -> Checkpoint {
        Checkpoint { emitted: self.emitted }
    }

    /// Forget the fences emitted since `checkpoint` (their packets never reached the device).
    pub fn rollback(&mut self, checkpoint: Checkpoint) {
        debug_assert!(checkpoint.emitted <= self.emitted, "rollback to a later checkpoint");
        self.emitted = checkpoint.emitted.max(self.completed.get());
    }

    /// Record that the device reports `seq` completed (its 64-bit write-back value, or one
    /// extended by [`extend32`](Self::extend32)). A value above the last emitted one is not a
    /// completion this timeline could have (stale memory, a corrupted write-back) and is
    /// ignored; values only ever move the mark forward. Returns the completed-up-to mark.
    pub fn observe(&self, seq: u64) -> u64 {
        if seq <= self.emitted && seq > self.signalled.get() {
            self.signalled.set(seq);
            if seq > self.completed.get() {
                self.completed.set(seq);
            }
        }
        self.completed.get()
    }

    /// The 64-bit sequence number a 32-bit write-back `raw` stands for: the latest emitted
    /// number (or number below the next one) whose low 32 bits are `raw`. Exact while fewer
    /// than 2^32 fences are outstanding, which a ring cannot exceed.
    pub fn extend32(&self, raw: u32) -> u64 {
        let top = self.emitted;
        let candidate = (top & !0xFFFF_FFFF) | raw as u64;
        if candidate > top { candidate.saturating_sub(1 << 32) } else { candidate }
    }

    /// Where `fence` is, by what has been observed (no device access).
    pub fn status(&self, fence: &Fence) -> FenceStatus {
        let seq = fence.seq;
        if seq == 0 || seq > self.emitted {
            return FenceStatus::NotSubmitted;
        }
        if seq > self.completed.get() {
            return FenceStatus::Pending;
        }
        if let Some(range) = self.lost.iter().filter_map(Cell::get).find(|r| r.contains(seq)) {
            return FenceStatus::Failed(range.failure);
        }
        if seq <= self.forgotten_until.get() {
            return FenceStatus::Failed(FenceFailure::Forgotten);
        }
        FenceStatus::Signalled
    }

    /// Complete every outstanding fence with `failure`: after a reset discarded the ring (call
    /// it only once the ring test passed, [`crate::recovery`]) or when the device is gone.
    /// Returns the fences that failed, or `None` when none were outstanding.
    pub fn fail_pending(&self, failure: FenceFailure) -> Option<LostRange> {
        let completed = self.completed.get();
        if completed >= self.emitted {
            return None;
        }
        let range = LostRange { first: completed + 1, last: self.emitted, failure };
        let slot = self.next_lost.get();
        if let Some(old) = self.lost[slot].get() {
            self.forgotten_until.set(self.forgotten_until.get().max(old.last));
        }
        self.lost[slot].set(Some(range));
        self.next_lost.set((slot + 1) % LOST_HISTORY);
        self.completed.set(self.emitted);
        Some(range)
    }

    /// The most recent loss, if any.
    pub fn last_loss(&self) -> Option<LostRange> {
        let slot = (self.next_lost.get() + LOST_HISTORY - 1) % LOST_HISTORY;
        self.lost[slot].get()
    }

    /// A timeline whose last emitted and completed sequence number is `seq`: for a driver
    /// brought up again after fences a kernel still holds, or a test that starts near a
    /// boundary (2^32) instead of emitting billions of fences.
    pub fn starting_at(seq: u64) -> Self {
        let t = Timeline { emitted: seq, ..Self::default() };
        t.completed.set(seq);
        t.signalled.set(seq);
        t
    }
}
