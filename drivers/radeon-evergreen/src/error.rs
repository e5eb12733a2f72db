//! Typed errors of every driver operation.

use core::fmt;

use baregpu_firmware::amd::evergreen::LoadError;
use baregpu_hal::dma::DmaError;
use baregpu_hal::register::IndexOutOfRange;
use baregpu_hal::time::TimedOut;
use baregpu_regs::evergreen::Chipset;
use baregpu_ring::ring::{RingConfigError, WaitError};

use crate::irq::IrqError;
use crate::pm4::PacketError;

/// The device answers register reads with all-ones: it fell off the bus, its BAR is not decoded
/// or it is powered down. Detected on `GRBM_STATUS`, whose reserved bits (4, 6, 9; Linux radeon
/// evergreend.h) a live chip never sets.
///
/// The one all-ones error of the driver: every operation's error enum wraps it in its
/// `DeviceGone` variant (and gives it as [`source`](core::error::Error::source)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct DeviceGone;

impl fmt::Display for DeviceGone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("device is not answering (registers read 0xffffffff)")
    }
}

/// A scratch register could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum ScratchError {
    /// There are 8 scratch registers (`SCRATCH_REG0..7`).
    NoSuchRegister(IndexOutOfRange),
    /// The device reads all-ones.
    DeviceGone(DeviceGone),
}

impl From<DeviceGone> for ScratchError {
    fn from(e: DeviceGone) -> Self {
        ScratchError::DeviceGone(e)
    }
}

impl fmt::Display for ScratchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScratchError::NoSuchRegister(_) => f.write_str("no such scratch register"),
            ScratchError::DeviceGone(_) => f.write_str("device gone"),
        }
    }
}

/// A [`crate::RingConfig`] the CP cannot use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
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

/// Why a submission failed. Packets are whole or absent; dwords the CP has not consumed are
/// never overwritten.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum SubmitError {
    /// The ring stayed too full for the submit timeout (the CP is not consuming), or the
    /// request can never fit.
    RingFull(WaitError),
    /// A packet could not be encoded or had no room in the reservation.
    Packet(PacketError),
    /// The device reads all-ones.
    DeviceGone(DeviceGone),
}

impl From<PacketError> for SubmitError {
    fn from(e: PacketError) -> Self {
        SubmitError::Packet(e)
    }
}

impl From<DeviceGone> for SubmitError {
    fn from(e: DeviceGone) -> Self {
        SubmitError::DeviceGone(e)
    }
}

impl fmt::Display for SubmitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SubmitError::RingFull(_) => f.write_str("ring stayed full"),
            SubmitError::Packet(_) => f.write_str("packet could not be written"),
            SubmitError::DeviceGone(_) => f.write_str("device gone"),
        }
    }
}

/// A fence did not signal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
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
            FenceError::Timeout { seq, last_signalled, cp_progressed, .. } => write!(
                f,
                "fence {seq} not signalled (last signalled {last_signalled}); CP {}",
                if *cp_progressed { "still consuming" } else { "not progressing (hung)" }
            ),
            FenceError::NotSubmitted { seq } => write!(f, "fence {seq} was never submitted"),
            FenceError::DeviceGone(_) => f.write_str("device gone"),
        }
    }
}

/// A ring, IB or interrupt test failed: the CP did not execute what it was given, or its
/// interrupt did not arrive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
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
    DeviceGone(DeviceGone),
    /// The interrupt test's fence signalled but no vector from `source` reached the IH ring
    /// (the IH or the RLC that drives it does not work).
    NoInterrupt {
        /// The interrupt source id waited for.
        source: u32,
        /// How long the IH ring was polled.
        waited: TimedOut,
    },
    /// The interrupt test found the IH ring's write pointer inconsistent.
    Irq(IrqError),
}

impl From<IrqError> for TestError {
    fn from(e: IrqError) -> Self {
        match e {
            IrqError::DeviceGone(e) => TestError::DeviceGone(e),
            e => TestError::Irq(e),
        }
    }
}

impl From<SubmitError> for TestError {
    fn from(e: SubmitError) -> Self {
        match e {
            SubmitError::DeviceGone(e) => TestError::DeviceGone(e),
            e => TestError::Submit(e),
        }
    }
}

impl From<FenceError> for TestError {
    fn from(e: FenceError) -> Self {
        match e {
            FenceError::DeviceGone(e) => TestError::DeviceGone(e),
            e => TestError::Fence(e),
        }
    }
}

impl From<DeviceGone> for TestError {
    fn from(e: DeviceGone) -> Self {
        TestError::DeviceGone(e)
    }
}

impl fmt::Display for TestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TestError::Submit(_) => f.write_str("test submission failed"),
            TestError::Mismatch { expected, found, .. } => {
                write!(f, "scratch register reads {found:#010x}, the test wrote {expected:#010x}")
            }
            TestError::IbMismatch { expected, found } => write!(
                f,
                "after the IB test's fence the scratch register reads {found:#010x}, the IB \
                 wrote {expected:#010x}"
            ),
            TestError::Fence(_) => f.write_str("the IB test's fence failed"),
            TestError::Dma(_) => f.write_str("DMA memory for the IB test"),
            TestError::DeviceGone(_) => f.write_str("device gone"),
            TestError::NoInterrupt { source, .. } => {
                write!(f, "no interrupt vector from source {source} reached the IH ring")
            }
            TestError::Irq(_) => f.write_str("the interrupt test could not read the IH ring"),
        }
    }
}

/// Why [`crate::Evergreen::init`] failed. Variants before [`InitError::Firmware`] mean no
/// register was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
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
    DeviceGone(DeviceGone),
    /// The microcode upload failed (read-back mismatch).
    Firmware(LoadError),
    /// The ring, IB or interrupt test failed after bring-up.
    Test(TestError),
}

impl fmt::Display for InitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InitError::WrongChip { device, firmware } => {
                write!(f, "{firmware} firmware for a {} device", device.name())
            }
            InitError::Config(_) => f.write_str("configuration rejected"),
            InitError::Dma(_) => f.write_str("DMA allocation failed"),
            InitError::Ring(_) => f.write_str("ring memory unusable by the CP"),
            InitError::DeviceGone(_) => f.write_str("device gone"),
            InitError::Firmware(_) => f.write_str("microcode upload failed"),
            InitError::Test(_) => f.write_str("ring, IB or interrupt test failed"),
        }
    }
}

impl From<LoadError> for InitError {
    fn from(e: LoadError) -> Self {
        match e {
            LoadError::DeviceGone { .. } => InitError::DeviceGone(DeviceGone),
            e => InitError::Firmware(e),
        }
    }
}

impl From<TestError> for InitError {
    fn from(e: TestError) -> Self {
        match e {
            TestError::DeviceGone(e) => InitError::DeviceGone(e),
            e => InitError::Test(e),
        }
    }
}

impl From<DeviceGone> for InitError {
    fn from(e: DeviceGone) -> Self {
        InitError::DeviceGone(e)
    }
}

impl core::error::Error for DeviceGone {}
impl core::error::Error for ConfigError {}

// `source()` gives the wrapped error (every one implements `core::error::Error`).
impl core::error::Error for ScratchError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            ScratchError::NoSuchRegister(e) => Some(e),
            ScratchError::DeviceGone(e) => Some(e),
        }
    }
}

impl core::error::Error for SubmitError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            SubmitError::RingFull(e) => Some(e),
            SubmitError::Packet(e) => Some(e),
            SubmitError::DeviceGone(e) => Some(e),
        }
    }
}

impl core::error::Error for FenceError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            FenceError::Timeout { waited, .. } => Some(waited),
            FenceError::DeviceGone(e) => Some(e),
            FenceError::NotSubmitted { .. } => None,
        }
    }
}

impl core::error::Error for TestError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            TestError::Submit(e) => Some(e),
            TestError::Mismatch { waited, .. } => Some(waited),
            TestError::Fence(e) => Some(e),
            TestError::Dma(e) => Some(e),
            TestError::DeviceGone(e) => Some(e),
            TestError::NoInterrupt { waited, .. } => Some(waited),
            TestError::Irq(e) => Some(e),
            TestError::IbMismatch { .. } => None,
        }
    }
}

impl core::error::Error for InitError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            InitError::Config(e) => Some(e),
            InitError::Dma(e) => Some(e),
            InitError::Ring(e) => Some(e),
            InitError::DeviceGone(e) => Some(e),
            InitError::Firmware(e) => Some(e),
            InitError::Test(e) => Some(e),
            InitError::WrongChip { .. } => None,
        }
    }
}
