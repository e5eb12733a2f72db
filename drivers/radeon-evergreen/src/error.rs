//! Typed errors of every driver operation.

use core::fmt;

use baregpu_firmware::amd::evergreen::LoadError;
use baregpu_hal::dma::DmaError;
use baregpu_hal::register::IndexOutOfRange;
use baregpu_hal::time::TimedOut;
use baregpu_regs::evergreen::Chipset;
use baregpu_ring::ring::{RingConfigError, WaitError};

use crate::pm4::PacketError;

/// The device answers register reads with all-ones: it fell off the bus, its BAR is not decoded
/// or it is powered down. Detected on `GRBM_STATUS`, whose reserved bits (4, 6, 9; Linux radeon
/// evergreend.h) a live chip never sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct DeviceGone;

impl fmt::Display for DeviceGone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("device is not answering (registers read 0xffffffff)")
    }
}

impl core::error::Error for DeviceGone {}

/// A scratch register could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScratchError {
    /// There are 8 scratch registers (`SCRATCH_REG0..7`).
    NoSuchRegister(IndexOutOfRange),
    /// The device reads all-ones.
    DeviceGone,
}

impl fmt::Display for ScratchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScratchError::NoSuchRegister(e) => write!(f, "{e}"),
            ScratchError::DeviceGone => write!(f, "{DeviceGone}"),
        }
    }
}

impl core::error::Error for ScratchError {}

/// A [`crate::RingConfig`] the CP cannot use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum ConfigError {
    /// The command ring is not a power of two from 4 KiB to 1 MiB (the limits of
    /// `baregpu_ring::evergreen`, from Linux radeon).
    BadRingSize {
        /// Requested bytes.
        bytes: usize,
    },
    /// The interrupt ring is not a power of two from 256 bytes to 256 KiB (`IH_RB_CNTL.IH_IB_SIZE`
    /// is log2 of the dwords, Linux radeon r600.c uses 64 KiB).
    BadIhRingSize {
        /// Requested bytes.
        bytes: usize,
    },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::BadRingSize { bytes } => {
                write!(f, "a command ring of {bytes} bytes (power of two, 4 KiB..=1 MiB)")
            }
            ConfigError::BadIhRingSize { bytes } => {
                write!(f, "an interrupt ring of {bytes} bytes (power of two, 256 B..=256 KiB)")
            }
        }
    }
}

impl core::error::Error for ConfigError {}

/// Why a submission failed. Packets are whole or absent; dwords the CP has not consumed are
/// never overwritten.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubmitError {
    /// The ring stayed too full for the submit timeout (the CP is not consuming), or the
    /// request can never fit.
    RingFull(WaitError),
    /// A packet could not be encoded or had no room in the reservation.
    Packet(PacketError),
    /// The device reads all-ones.
    DeviceGone,
}

impl From<PacketError> for SubmitError {
    fn from(e: PacketError) -> Self {
        SubmitError::Packet(e)
    }
}

impl From<DeviceGone> for SubmitError {
    fn from(_: DeviceGone) -> Self {
        SubmitError::DeviceGone
    }
}

impl fmt::Display for SubmitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SubmitError::RingFull(e) => write!(f, "ring full: {e}"),
            SubmitError::Packet(e) => write!(f, "packet: {e}"),
            SubmitError::DeviceGone => write!(f, "{DeviceGone}"),
        }
    }
}

impl core::error::Error for SubmitError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            SubmitError::RingFull(_) => None,
            SubmitError::Packet(e) => Some(e),
            SubmitError::DeviceGone => Some(&DeviceGone),
        }
    }
}

/// A fence did not signal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FenceError {
    /// Not signalled within the timeout: the CP is hung or stalled (the `EVENT_WRITE_EOP` write,
    /// §9.6.2, never arrived). Recover with [`crate::Evergreen::reset`].
    Timeout {
        /// The sequence number waited for.
        seq: u64,
        /// The last sequence number the CP wrote.
        last_signalled: u64,
        /// How long and how often memory was polled.
        waited: TimedOut,
        /// Whether the CP moved during the wait (its read pointer or an earlier fence): slow,
        /// not hung.
        cp_progressed: bool,
    },
    /// The fence was never submitted (its sequence number is ahead of the driver's).
    NotSubmitted {
        /// The sequence number.
        seq: u64,
    },
    /// The device reads all-ones.
    DeviceGone,
}

impl fmt::Display for FenceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FenceError::Timeout { seq, last_signalled, waited, cp_progressed } => write!(
                f,
                "fence {seq} not signalled (last {last_signalled}) after {waited}; CP {}",
                if *cp_progressed { "still consuming" } else { "not progressing (hung)" }
            ),
            FenceError::NotSubmitted { seq } => write!(f, "fence {seq} was never submitted"),
            FenceError::DeviceGone => write!(f, "{DeviceGone}"),
        }
    }
}

impl core::error::Error for FenceError {}

/// A ring or IB test failed: the CP did not execute what it was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestError {
    /// The test packets could not be submitted.
    Submit(SubmitError),
    /// The scratch register never took the value (the CP fetched nothing, or something else).
    Mismatch {
        /// Value written by the test packet.
        expected: u32,
        /// Last value read.
        found: u32,
        /// How long it was polled.
        waited: TimedOut,
    },
    /// The IB test's fence signalled but the scratch register does not hold the IB's value
    /// (the CP skipped or misread the indirect buffer).
    IbMismatch {
        /// Value the IB writes.
        expected: u32,
        /// Value read.
        found: u32,
    },
    /// The IB test's fence did not signal.
    Fence(FenceError),
    /// No DMA memory for the IB test's indirect buffer.
    Dma(DmaError),
    /// The device reads all-ones.
    DeviceGone,
}

impl From<SubmitError> for TestError {
    fn from(e: SubmitError) -> Self {
        match e {
            SubmitError::DeviceGone => TestError::DeviceGone,
            e => TestError::Submit(e),
        }
    }
}

impl From<FenceError> for TestError {
    fn from(e: FenceError) -> Self {
        match e {
            FenceError::DeviceGone => TestError::DeviceGone,
            e => TestError::Fence(e),
        }
    }
}

impl fmt::Display for TestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TestError::Submit(e) => write!(f, "test submission: {e}"),
            TestError::Mismatch { expected, found, waited } => write!(
                f,
                "scratch register reads {found:#010x}, the test wrote {expected:#010x} ({waited})"
            ),
            TestError::IbMismatch { expected, found } => write!(
                f,
                "after the IB test's fence the scratch register reads {found:#010x}, the IB \
                 wrote {expected:#010x}"
            ),
            TestError::Fence(e) => write!(f, "test fence: {e}"),
            TestError::Dma(e) => write!(f, "IB test memory: {e}"),
            TestError::DeviceGone => write!(f, "{DeviceGone}"),
        }
    }
}

impl core::error::Error for TestError {}

/// Why [`crate::Evergreen::init`] failed. Variants before [`InitError::Firmware`] mean no
/// register was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InitError {
    /// The firmware set was validated for another chip than the device's.
    WrongChip {
        /// The device's chipset.
        device: Chipset,
        /// The chip the images were parsed for.
        firmware: &'static str,
    },
    /// Bad ring configuration.
    Config(ConfigError),
    /// DMA memory for the rings could not be allocated.
    Dma(DmaError),
    /// The ring memory is not usable by the CP.
    Ring(RingConfigError),
    /// The device reads all-ones.
    DeviceGone,
    /// The microcode upload failed (read-back mismatch).
    Firmware(LoadError),
    /// The ring test or IB test failed after bring-up.
    Test(TestError),
}

impl fmt::Display for InitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InitError::WrongChip { device, firmware } => {
                write!(f, "{firmware} firmware for a {} device", device.name())
            }
            InitError::Config(e) => write!(f, "{e}"),
            InitError::Dma(e) => write!(f, "DMA memory: {e}"),
            InitError::Ring(e) => write!(f, "ring memory: {e}"),
            InitError::DeviceGone => write!(f, "{DeviceGone}"),
            InitError::Firmware(e) => write!(f, "microcode: {e}"),
            InitError::Test(e) => write!(f, "{e}"),
        }
    }
}

impl core::error::Error for InitError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            InitError::Config(e) => Some(e),
            InitError::Firmware(e) => Some(e),
            InitError::Test(e) => Some(e),
            _ => None,
        }
    }
}

impl From<LoadError> for InitError {
    fn from(e: LoadError) -> Self {
        match e {
            LoadError::DeviceGone { .. } => InitError::DeviceGone,
            e => InitError::Firmware(e),
        }
    }
}

impl From<TestError> for InitError {
    fn from(e: TestError) -> Self {
        match e {
            TestError::DeviceGone => InitError::DeviceGone,
            e => InitError::Test(e),
        }
    }
}

impl From<DeviceGone> for InitError {
    fn from(_: DeviceGone) -> Self {
        InitError::DeviceGone
    }
}
