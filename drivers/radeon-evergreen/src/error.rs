//! Typed errors of every driver operation.

use core::fmt;

use baregpu_firmware::amd::evergreen::LoadError;
use baregpu_hal::dma::DmaError;
use baregpu_hal::register::IndexOutOfRange;
use baregpu_regs::evergreen::Chipset;
use baregpu_ring::ring::{RingConfigError, WaitError};

use crate::pm4::PacketError;

pub use baregpu_gpu::{DeviceGone, FenceError, Overrun};

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
    /// A packet could not be encoded.
    Packet(PacketError),
    /// The submission closure wrote past its reservation: nothing beyond it was written and
    /// the whole submission was discarded (nothing reached the CP).
    Overrun(Overrun),
    /// The device reads all-ones.
    DeviceGone(DeviceGone),
}

impl From<Overrun> for SubmitError {
    fn from(e: Overrun) -> Self {
        SubmitError::Overrun(e)
    }
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
            SubmitError::Overrun(_) => f.write_str("submission discarded"),
            SubmitError::DeviceGone(_) => f.write_str("device gone"),
        }
    }
}

/// A ring or IB test failed: the CP did not execute what it was given (the shared
/// [`baregpu_gpu::TestError`] over this driver's [`SubmitError`]).
pub type TestError = baregpu_gpu::TestError<SubmitError>;

// A submission failing its ring or IB test: a gone device stays `TestError::DeviceGone`.
impl From<SubmitError> for TestError {
    fn from(e: SubmitError) -> Self {
        match e {
            SubmitError::DeviceGone(e) => TestError::DeviceGone(e),
            e => TestError::Submit(e),
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
            SubmitError::Overrun(e) => Some(e),
            SubmitError::DeviceGone(e) => Some(e),
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
