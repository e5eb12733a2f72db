//! The errors every family's driver shares. Family-specific failures (a packet a family cannot
//! encode, a microcode image) stay in the driver and reach these through a type parameter.

use core::fmt;

use baregpu_hal::time::TimedOut;

/// The device answers every register read with all-ones: it fell off the bus, its BAR is not
/// decoded (memory decoding off), or it is powered down. Each family detects it on a register
/// whose documented fields cannot produce that value.
///
/// The one all-ones error of every driver: each operation's error enum wraps it in a
/// `DeviceGone` variant and gives it as [`source`](core::error::Error::source).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct DeviceGone;

impl fmt::Display for DeviceGone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("device is not answering (registers read 0xffffffff)")
    }
}

impl core::error::Error for DeviceGone {}

/// A submission closure wrote, or tried to write, more than the submission reserved. Nothing
/// beyond the reservation was written, and the whole submission was discarded (see
/// [`crate::submit`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Overrun {
    /// Units (dwords) the submission reserved.
    pub reserved: usize,
    /// Units written plus the units of the write that did not fit.
    pub attempted: usize,
}

impl fmt::Display for Overrun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "wrote past the reservation ({} of {} dwords)", self.attempted, self.reserved)
    }
}

impl core::error::Error for Overrun {}

/// How a fence ended without its work completing (Linux dma-fence's error status): the fence
/// is no longer pending, and whoever waits for it sees this.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum FenceFailure {
    /// A reset or recovery discarded the work before it (its packets never ran, or ran only in
    /// part).
    Lost,
    /// The device stopped answering with the work in flight.
    DeviceGone,
    /// The fence completed more than [`LOST_HISTORY`](crate::fence::LOST_HISTORY) losses ago;
    /// whether it signalled or was lost is no longer recorded.
    Forgotten,
}

impl fmt::Display for FenceFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FenceFailure::Lost => "its work was discarded by a reset",
            FenceFailure::DeviceGone => "the device stopped answering",
            FenceFailure::Forgotten => "its outcome is older than the recorded history",
        })
    }
}

/// A fence did not signal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum FenceError {
    /// Not signalled within the timeout: the engine is hung or stalled. Recover with the
    /// driver's `reset` (the fence then completes with [`FenceFailure::Lost`]).
    Timeout {
        /// The fence waited for.
        seq: u64,
        /// The last sequence number the device signalled.
        last_signalled: u64,
        /// How long and how often the completion was polled.
        waited: TimedOut,
        /// Whether the engine moved (its read pointer or its completed sequence changed)
        /// while the wait ran: a slow engine rather than a hung one.
        progressed: bool,
    },
    /// The fence completed with an error: its work did not (all) run.
    Failed {
        /// The fence.
        seq: u64,
        /// Why.
        failure: FenceFailure,
    },
    /// The fence's sequence number was never emitted on this timeline (a fence of another
    /// device, or made up).
    NotSubmitted {
        /// The fence.
        seq: u64,
    },
    /// The device reads all-ones.
    DeviceGone(DeviceGone),
}

impl From<DeviceGone> for FenceError {
    fn from(e: DeviceGone) -> Self {
        FenceError::DeviceGone(e)
    }
}

impl fmt::Display for FenceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FenceError::Timeout { seq, last_signalled, progressed, .. } => write!(
                f,
                "fence {seq} not signalled (last signalled {last_signalled}, engine {})",
                if *progressed { "progressing" } else { "stalled" }
            ),
            FenceError::Failed { seq, .. } => write!(f, "fence {seq} completed with an error"),
            FenceError::NotSubmitted { seq } => write!(f, "fence {seq} was never submitted"),
            FenceError::DeviceGone(_) => f.write_str("device gone"),
        }
    }
}

impl core::error::Error for FenceError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            FenceError::Timeout { waited, .. } => Some(waited),
            FenceError::Failed { failure, .. } => Some(failure),
            FenceError::DeviceGone(e) => Some(e),
            FenceError::NotSubmitted { .. } => None,
        }
    }
}

impl core::error::Error for FenceFailure {}

/// A ring or IB test (a value written through the engine, polled) failed. `S` is the family's
/// submission error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum TestError<S> {
    /// The scratch register did not take the value the ring wrote within the test timeout.
    Mismatch {
        /// The value the packet writes.
        expected: u32,
        /// The value read last.
        found: u32,
        /// How long and how often it was polled.
        waited: TimedOut,
    },
    /// The indirect buffer's fence signalled but its value is not there.
    IbMismatch {
        /// The value the indirect buffer writes.
        expected: u32,
        /// The value read.
        found: u32,
    },
    /// The test packets could not be submitted.
    Submit(S),
    /// The test's fence did not signal.
    Fence(FenceError),
    /// The test's buffer could not be allocated.
    Dma(baregpu_hal::dma::DmaError),
    /// The device reads all-ones.
    DeviceGone(DeviceGone),
    /// The interrupt test's interrupt never arrived (the interrupt path does not work).
    NoInterrupt {
        /// The family's interrupt source waited for (Evergreen: the IH source id; R5xx: the
        /// `GEN_INT_STATUS` bit).
        source: u32,
        /// How long and how often it was polled.
        waited: TimedOut,
    },
}

impl<S> From<DeviceGone> for TestError<S> {
    fn from(e: DeviceGone) -> Self {
        TestError::DeviceGone(e)
    }
}

impl<S> From<FenceError> for TestError<S> {
    fn from(e: FenceError) -> Self {
        match e {
            FenceError::DeviceGone(e) => TestError::DeviceGone(e),
            e => TestError::Fence(e),
        }
    }
}

impl<S> fmt::Display for TestError<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TestError::Mismatch { expected, found, .. } => {
                write!(f, "scratch register reads {found:#x}, expected {expected:#x}")
            }
            TestError::IbMismatch { expected, found } => {
                write!(f, "IB test scratch reads {found:#x}, expected {expected:#x}")
            }
            TestError::Submit(_) => f.write_str("test submission failed"),
            TestError::Fence(_) => f.write_str("test fence did not signal"),
            TestError::Dma(_) => f.write_str("DMA memory for the test"),
            TestError::DeviceGone(_) => f.write_str("device gone"),
            TestError::NoInterrupt { source, .. } => {
                write!(f, "no interrupt from source {source} arrived")
            }
        }
    }
}

impl<S: core::error::Error + 'static> core::error::Error for TestError<S> {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            TestError::Mismatch { waited, .. } => Some(waited),
            TestError::IbMismatch { .. } => None,
            TestError::Submit(e) => Some(e),
            TestError::Fence(e) => Some(e),
            TestError::Dma(e) => Some(e),
            TestError::DeviceGone(e) => Some(e),
            TestError::NoInterrupt { waited, .. } => Some(waited),
        }
    }
}
