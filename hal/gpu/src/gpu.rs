//! The interface a scheduler (or any code that drives several GPUs of different families)
//! programs against: one trait every family's driver implements.

use core::time::Duration;

use crate::error::{DeviceGone, FenceError};
use crate::fence::{Fence, FenceStatus, Timeline};
use crate::recovery::ResetReport;
use crate::stats::Stats;

/// One GPU queue (a command ring and its fence timeline), whatever the family.
///
/// - Submission: [`submit`](Self::submit) is all or nothing (see [`crate::submit`]);
///   [`fence`](Self::fence) writes a fence inside a submission.
/// - Completion: polled ([`poll_completed`](Self::poll_completed), [`wait`](Self::wait)) or by
///   interrupt ([`set_fence_interrupts`](Self::set_fence_interrupts), then
///   [`handle_interrupts`](Self::handle_interrupts) from the handler); both record on the one
///   [`Timeline`].
/// - Recovery: [`reset`](Self::reset) completes the lost fences with an error once the engine
///   is back.
pub trait GpuQueue {
    /// The family's packet builder a submission closure gets.
    type Submission<'s>
    where
        Self: 's;
    /// The error a submission closure returns (the family's packet errors).
    type BuildError;
    /// Why a submission failed (wraps [`DeviceGone`], an overrun, the closure's error).
    type SubmitError: core::error::Error + From<DeviceGone>;
    /// Why a reset failed.
    type ResetError: core::error::Error + From<DeviceGone>;

    /// One batch of at most `units` units (dwords): reserve with bounded back-pressure, let
    /// `build` write, pad, one doorbell. All or nothing: a failed or overrunning `build`
    /// leaves nothing in the ring and rings no doorbell.
    fn submit<T>(
        &mut self,
        units: usize,
        build: impl FnOnce(&mut Self::Submission<'_>) -> Result<T, Self::BuildError>,
    ) -> Result<T, Self::SubmitError>;

    /// Write a fence into `submission` (taking [`FENCE_UNITS`](Self::FENCE_UNITS) of its
    /// reservation).
    fn fence(submission: &mut Self::Submission<'_>) -> Result<Fence, Self::BuildError>;

    /// Units one [`fence`](Self::fence) takes.
    const FENCE_UNITS: usize;

    /// A submission holding just a fence.
    fn submit_fence(&mut self) -> Result<Fence, Self::SubmitError> {
        self.submit(Self::FENCE_UNITS, |s| Self::fence(s))
    }

    /// The fence timeline (what was emitted, completed, lost).
    fn timeline(&self) -> &Timeline;

    /// Read the device's completion (memory, no register access where the family writes it
    /// back), record it on the timeline, and return the completed-up-to mark.
    fn poll_completed(&self) -> u64;

    /// Where `fence` is (pending, signalled, or completed with an error by a reset), after
    /// [`poll_completed`](Self::poll_completed).
    fn fence_status(&self, fence: &Fence) -> FenceStatus {
        self.poll_completed();
        self.timeline().status(fence)
    }

    /// Whether `fence` signalled (a fence a reset completed with an error did not).
    fn signalled(&self, fence: &Fence) -> bool {
        self.fence_status(fence) == FenceStatus::Signalled
    }

    /// The last sequence number the device signalled, after
    /// [`poll_completed`](Self::poll_completed).
    fn last_signalled(&self) -> u64 {
        self.poll_completed();
        self.timeline().last_signalled()
    }

    /// Wait for `fence` at most `timeout`, checking the device's health while polling (see
    /// [`crate::wait::wait`]).
    fn wait(&self, fence: &Fence, timeout: Duration) -> Result<(), FenceError>;

    /// Ask for an interrupt when a fence signals (`true`), or poll only (`false`, the default
    /// after bring-up: polled fences cost no interrupt). Turning them on runs the family's
    /// interrupt test: an interrupt path that does not work is an error here (the family's
    /// test error inside its reset error), not fences whose interrupts never come.
    fn set_fence_interrupts(&mut self, enabled: bool) -> Result<(), Self::ResetError>;

    /// The interrupt handler: acknowledge what fired, record fence completion, return the
    /// completed-up-to mark.
    fn handle_interrupts(&mut self) -> Result<u64, DeviceGone>;

    /// Soft-reset the engine and restart the ring; once the ring test passed, every fence of
    /// the lost work completes with [`FenceFailure::Lost`](crate::FenceFailure::Lost).
    fn reset(&mut self) -> Result<ResetReport, Self::ResetError>;

    /// `Err(DeviceGone)` if the device reads all-ones.
    fn check_alive(&self) -> Result<(), DeviceGone>;

    /// Counters.
    fn stats(&self) -> Stats;
}
