//! Typed errors of every driver operation.

use core::fmt;

use baregpu_firmware::FirmwareError;
use baregpu_firmware::amd::LoadError;
use baregpu_hal::dma::DmaError;
use baregpu_hal::time::TimedOut;
use baregpu_ring::ib::IbError;
use baregpu_ring::pm4::{PadError, Pm4Error};
use baregpu_ring::ring::{RingConfigError, WaitError};

pub use baregpu_gpu::{DeviceGone, FenceError, Overrun};

/// A [`crate::RingConfig`] the CP cannot use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum ConfigError {
    /// The ring is not a power of two of 32 bytes (8 dwords) to 32 MiB (2^23 dwords)
    /// (§11.1 `CP_RB_CNTL.RB_BUFSZ`).
    BadRingSize {
        /// Requested size in bytes.
        bytes: usize,
    },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::BadRingSize { bytes } => {
                write!(f, "a ring of {bytes} bytes (must be a power of two, 32 B..=32 MiB)")
            }
        }
    }
}

/// Why a submission (ring or PIO) failed. Nothing half-written reaches the CP: packets are
/// whole or absent, and ring dwords the CP has not consumed are never overwritten.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum SubmitError {
    /// The ring stayed too full for the whole submit timeout (back-pressure: the CP is not
    /// consuming, e.g. hung), or the request can never fit.
    RingFull(WaitError),
    /// A packet could not be encoded or had no room (reserve more first).
    Packet(Pm4Error),
    /// The type-2 padding to 16 dwords (Linux r100.c) could not be written.
    Pad(PadError),
    /// An indirect buffer the CP cannot fetch.
    Ib(IbError),
    /// The PIO primary queue (§5.11) had no room for a packet within the submit timeout.
    PioQueueFull {
        /// Dwords the packet needed.
        needed: usize,
        /// Free queue entries at the last check.
        free: usize,
    },
    /// The PIO primary queue (§5.11) still held dwords the CP had not parsed when the submit
    /// timeout passed at the end of a PIO session (the CP is stuck: reset it).
    PioDrainTimeout {
        /// Dwords still queued at the last check.
        queued: usize,
        /// How long and how often the queue was polled.
        waited: TimedOut,
    },
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

impl From<Pm4Error> for SubmitError {
    fn from(e: Pm4Error) -> Self {
        SubmitError::Packet(e)
    }
}

impl From<PadError> for SubmitError {
    fn from(e: PadError) -> Self {
        SubmitError::Pad(e)
    }
}

impl From<IbError> for SubmitError {
    fn from(e: IbError) -> Self {
        SubmitError::Ib(e)
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
            SubmitError::Pad(_) => f.write_str("type-2 padding could not be written"),
            SubmitError::Ib(_) => f.write_str("indirect buffer refused"),
            SubmitError::PioQueueFull { needed, free } => {
                write!(f, "PIO queue has {free} of {needed} entries free after the timeout")
            }
            SubmitError::PioDrainTimeout { queued, .. } => {
                write!(f, "PIO queue still holds {queued} dwords after the submit timeout")
            }
            SubmitError::Overrun(_) => f.write_str("submission discarded"),
            SubmitError::DeviceGone(_) => f.write_str("device gone"),
        }
    }
}

/// The ring test or IB test (Linux r100.c `r100_ring_test` / `r100_ib_test`) failed: the
/// shared [`baregpu_gpu::TestError`] over this driver's [`SubmitError`].
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

/// Why [`crate::R5xx::init`] or [`crate::R5xx::recover`] failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum InitError {
    /// The microcode image is malformed; no register was accessed, nothing was allocated.
    Firmware(FirmwareError),
    /// The configuration is unusable; no register was accessed, nothing was allocated.
    Config(ConfigError),
    /// DMA memory for the ring or the writeback page could not be allocated (no register was
    /// accessed).
    Dma(DmaError),
    /// The ring or writeback memory is not reachable by the CP (32-bit bus addresses).
    Ring(RingConfigError),
    /// The device reads all-ones.
    DeviceGone(DeviceGone),
    /// The MicroEngine stayed busy (`CP_ME_CNTL.ME_BUSY`, §11.1) after the CP was stopped and
    /// soft-reset.
    MicroEngineBusy(TimedOut),
    /// The microcode upload failed, e.g. the read-back (§5.13) differs ([`LoadError::Readback`]).
    Microcode(LoadError),
    /// The ring test failed after bring-up.
    RingTest(TestError),
}

impl From<FirmwareError> for InitError {
    fn from(e: FirmwareError) -> Self {
        InitError::Firmware(e)
    }
}

impl From<DeviceGone> for InitError {
    fn from(e: DeviceGone) -> Self {
        InitError::DeviceGone(e)
    }
}

impl From<LoadError> for InitError {
    fn from(e: LoadError) -> Self {
        match e {
            LoadError::DeviceGone { .. } => InitError::DeviceGone(DeviceGone),
            e => InitError::Microcode(e),
        }
    }
}

impl From<TestError> for InitError {
    fn from(e: TestError) -> Self {
        match e {
            TestError::DeviceGone(e) => InitError::DeviceGone(e),
            e => InitError::RingTest(e),
        }
    }
}

impl fmt::Display for InitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InitError::Firmware(_) => f.write_str("firmware rejected"),
            InitError::Config(_) => f.write_str("configuration rejected"),
            InitError::Dma(_) => f.write_str("DMA allocation failed"),
            InitError::Ring(_) => f.write_str("ring memory unusable by the CP"),
            InitError::DeviceGone(_) => f.write_str("device gone"),
            InitError::MicroEngineBusy(_) => f.write_str("CP MicroEngine stayed busy"),
            InitError::Microcode(_) => f.write_str("microcode upload failed"),
            InitError::RingTest(_) => f.write_str("ring test failed"),
        }
    }
}

/// Why [`crate::R5xx::reset`] failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum ResetError {
    /// The device reads all-ones.
    DeviceGone(DeviceGone),
    /// The ring test after the soft reset failed: the CP did not come back (e.g. a bus error
    /// state that needs a function-level reset and [`crate::R5xx::recover`]).
    RingTest(TestError),
}

impl From<TestError> for ResetError {
    fn from(e: TestError) -> Self {
        match e {
            TestError::DeviceGone(e) => ResetError::DeviceGone(e),
            e => ResetError::RingTest(e),
        }
    }
}

impl From<DeviceGone> for ResetError {
    fn from(e: DeviceGone) -> Self {
        ResetError::DeviceGone(e)
    }
}

impl fmt::Display for ResetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResetError::DeviceGone(_) => f.write_str("device gone"),
            ResetError::RingTest(_) => f.write_str("ring test after soft reset failed"),
        }
    }
}

impl core::error::Error for ConfigError {}

// `source()` gives the wrapped error (every one implements `core::error::Error`).
impl core::error::Error for SubmitError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            SubmitError::RingFull(e) => Some(e),
            SubmitError::Packet(e) => Some(e),
            SubmitError::Pad(e) => Some(e),
            SubmitError::Ib(e) => Some(e),
            SubmitError::PioDrainTimeout { waited, .. } => Some(waited),
            SubmitError::Overrun(e) => Some(e),
            SubmitError::DeviceGone(e) => Some(e),
            SubmitError::PioQueueFull { .. } => None,
        }
    }
}

impl core::error::Error for InitError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            InitError::Firmware(e) => Some(e),
            InitError::Config(e) => Some(e),
            InitError::DeviceGone(e) => Some(e),
            InitError::Microcode(e) => Some(e),
            InitError::RingTest(e) => Some(e),
            InitError::Dma(e) => Some(e),
            InitError::Ring(e) => Some(e),
            InitError::MicroEngineBusy(e) => Some(e),
        }
    }
}

impl core::error::Error for ResetError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            ResetError::DeviceGone(e) => Some(e),
            ResetError::RingTest(e) => Some(e),
        }
    }
}
