//! Typed errors of every driver operation.

use core::fmt;

use baregpu_hal::time::TimedOut;
use baregpu_regs::nvidia::Chipset;
use baregpu_regs::nvidia::pfifo::cache1_dma_state_g80_until_gf100::ErrorCode as PusherErrorKind;

pub use baregpu_gpu::DeviceGone;

/// What a refused chip lacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Missing {
    /// Not an NV50-family (Tesla) chip: another PFIFO, channel layout and command format.
    NotTesla,
    /// No falcon engine at all (G80, G84-G96, G200: VP2 video engines, §2.10.1).
    Falcon,
    /// Falcons, but not the v3 PCOPY and PDAEMON (G98, MCP77, MCP79: v0 video falcons only).
    CopyEngineAndDaemon,
    /// No on-board VRAM for channel structures (an IGP, §2.1.1).
    Vram,
}

impl fmt::Display for Missing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Missing::NotTesla => "not an NV50-family (Tesla) GPU",
            Missing::Falcon => "no falcon engines (VP2 video engines)",
            Missing::CopyEngineAndDaemon => "no PCOPY or PDAEMON falcon (v0 falcons only)",
            Missing::Vram => "no on-board VRAM (an IGP)",
        })
    }
}

/// Why the register window is not a GPU this driver runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum ProbeError {
    /// `PMC.BOOT_0` reads all-ones.
    DeviceGone(DeviceGone),
    /// `BOOT_0` holds a GPU id the §2.2.3 table does not list.
    UnknownChipset {
        /// The id (`BOOT_0` bits 20-28).
        id: u32,
    },
    /// A known chip this driver cannot run.
    Unsupported {
        /// The chip.
        chipset: Chipset,
        /// What it lacks.
        missing: Missing,
    },
}

impl fmt::Display for ProbeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProbeError::DeviceGone(_) => f.write_str("PMC.BOOT_0 reads all-ones"),
            ProbeError::UnknownChipset { id } => write!(f, "unknown GPU id {id:#x}"),
            ProbeError::Unsupported { chipset, missing } => {
                write!(f, "{} is not supported: {missing}", chipset.name())
            }
        }
    }
}

impl core::error::Error for ProbeError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            ProbeError::DeviceGone(e) => Some(e),
            _ => None,
        }
    }
}

/// A VRAM structure could not be placed or written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum MemoryError {
    /// A word access at an address that is not 4-byte aligned.
    Unaligned {
        /// The address.
        address: u64,
    },
    /// An address past what the PMEM window can be moved to (40 bits).
    OutOfReach {
        /// The address.
        address: u64,
    },
    /// The driver's VRAM range has no room left.
    VramExhausted {
        /// Bytes asked for.
        size: u64,
        /// Bytes left.
        free: u64,
    },
    /// A DMA object past 40 bits or with its limit below its base.
    BadDmaObject {
        /// Its base.
        base: u64,
        /// Its limit.
        limit: u64,
    },
}

impl fmt::Display for MemoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MemoryError::Unaligned { address } => write!(f, "unaligned VRAM word {address:#x}"),
            MemoryError::OutOfReach { address } => {
                write!(f, "VRAM address {address:#x} is past the PMEM window's reach")
            }
            MemoryError::VramExhausted { size, free } => {
                write!(f, "{size:#x} bytes of VRAM asked for, {free:#x} left")
            }
            MemoryError::BadDmaObject { base, limit } => {
                write!(f, "DMA object {base:#x}..={limit:#x} is not a 40-bit range")
            }
        }
    }
}

impl core::error::Error for MemoryError {}

/// Why bring-up failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum InitError {
    /// The chip is not one the driver runs (or does not answer).
    Probe(ProbeError),
    /// The playlist could not be placed in the driver's VRAM.
    Memory(MemoryError),
    /// The device stopped answering during bring-up.
    DeviceGone(DeviceGone),
}

impl From<ProbeError> for InitError {
    fn from(e: ProbeError) -> Self {
        match e {
            ProbeError::DeviceGone(g) => InitError::DeviceGone(g),
            e => InitError::Probe(e),
        }
    }
}

impl From<MemoryError> for InitError {
    fn from(e: MemoryError) -> Self {
        InitError::Memory(e)
    }
}

impl From<DeviceGone> for InitError {
    fn from(e: DeviceGone) -> Self {
        InitError::DeviceGone(e)
    }
}

impl fmt::Display for InitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InitError::Probe(_) => f.write_str("probe failed"),
            InitError::Memory(_) => f.write_str("VRAM for the playlist"),
            InitError::DeviceGone(_) => f.write_str("device gone"),
        }
    }
}

impl core::error::Error for InitError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            InitError::Probe(e) => Some(e),
            InitError::Memory(e) => Some(e),
            InitError::DeviceGone(e) => Some(e),
        }
    }
}

/// Why a channel operation failed. Nothing of a failed creation reaches the channel table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum ChannelError {
    /// Channel ids are 1..=126: 0 is PIO-only and 127 is reserved (Linux nouveau nv50.c).
    BadId {
        /// The id given.
        id: u8,
    },
    /// The channel already exists.
    InUse {
        /// The channel id.
        id: u8,
    },
    /// The channel does not exist.
    NotCreated {
        /// The channel id.
        id: u8,
    },
    /// An IB ring that is not a power of two of 2..=2^16 entries, or not 8-byte aligned.
    BadIbRing {
        /// Its entries.
        entries: u32,
        /// Its bus address.
        address: u64,
    },
    /// A DMA-mode pushbuffer that is empty, not whole words, unaligned or past 40 bits.
    BadPushbuffer {
        /// Its bus address.
        address: u64,
        /// Its size.
        bytes: u64,
    },
    /// The channel's RAMHT has no free slot for the handle.
    RamhtFull {
        /// The handle.
        handle: u32,
    },
    /// The handle is already in the channel's RAMHT.
    DuplicateHandle {
        /// The handle.
        handle: u32,
    },
    /// The channel structure has no room for another object.
    NoObjectSpace,
    /// VRAM for the channel's structures.
    Memory(MemoryError),
    /// PFIFO did not finish unloading the channel (`CHANNEL_UNLOAD` stayed all-ones).
    UnloadTimeout(TimedOut),
    /// The device reads all-ones.
    DeviceGone(DeviceGone),
}

impl From<MemoryError> for ChannelError {
    fn from(e: MemoryError) -> Self {
        ChannelError::Memory(e)
    }
}

impl From<DeviceGone> for ChannelError {
    fn from(e: DeviceGone) -> Self {
        ChannelError::DeviceGone(e)
    }
}

impl fmt::Display for ChannelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChannelError::BadId { id } => write!(f, "channel id {id} (usable: 1..=126)"),
            ChannelError::InUse { id } => write!(f, "channel {id} already exists"),
            ChannelError::NotCreated { id } => write!(f, "channel {id} does not exist"),
            ChannelError::BadIbRing { entries, address } => write!(
                f,
                "IB ring of {entries} entries at {address:#x} (power of two 2..=65536, 8-byte aligned)"
            ),
            ChannelError::BadPushbuffer { address, bytes } => write!(
                f,
                "DMA pushbuffer of {bytes:#x} bytes at {address:#x} (whole words, 4-byte aligned, below 2^40)"
            ),
            ChannelError::RamhtFull { handle } => write!(f, "no RAMHT slot for handle {handle:#x}"),
            ChannelError::DuplicateHandle { handle } => {
                write!(f, "handle {handle:#x} is already in the RAMHT")
            }
            ChannelError::NoObjectSpace => f.write_str("no room for another channel object"),
            ChannelError::Memory(_) => f.write_str("VRAM for the channel"),
            ChannelError::UnloadTimeout(_) => f.write_str("PFIFO did not unload the channel"),
            ChannelError::DeviceGone(_) => f.write_str("device gone"),
        }
    }
}

impl core::error::Error for ChannelError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            ChannelError::Memory(e) => Some(e),
            ChannelError::UnloadTimeout(e) => Some(e),
            ChannelError::DeviceGone(e) => Some(e),
            _ => None,
        }
    }
}

/// A PFIFO error interrupt, decoded (nvidia-hardware-envytools §2.8.3 "Errors", §2.8.4
/// semaphores). The channel it names is recovered with
/// [`Tesla::recover_channel`](crate::Tesla::recover_channel).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum FifoError {
    /// The DMA pusher stopped on the channel's command stream (`DMA_PUSHER`).
    DmaPusher {
        /// The channel CACHE1 held (`CACHE1_PUSH1.CHID`).
        channel: u8,
        /// What it found (`CACHE1_DMA_STATE.ERROR_CODE`, §2.8.3).
        error: PusherErrorKind,
    },
    /// A `DMA_STATE` error code §2.8.3 does not list.
    DmaPusherUnknown {
        /// The channel.
        channel: u8,
        /// The code.
        code: u32,
    },
    /// A semaphore method failed (`SEMAPHORE`: unaligned or too large an address, no DMA
    /// object, a memory fault; §2.8.4).
    Semaphore {
        /// The channel.
        channel: u8,
    },
    /// The puller could not deliver a method (`CACHE_ERROR`: a handle missing from RAMHT, an
    /// invalid method, §2.8.4).
    Cache {
        /// The channel.
        channel: u8,
    },
    /// Another PFIFO error (`BAR_FAULT`, `PEEPHOLE_FAULT`, `PIO_ERROR`, or an unnamed bit).
    Other {
        /// `PFIFO.INTR` bits.
        bits: u32,
    },
}

impl FifoError {
    /// The channel the error names, if any.
    pub const fn channel(&self) -> Option<u8> {
        match *self {
            FifoError::DmaPusher { channel, .. }
            | FifoError::DmaPusherUnknown { channel, .. }
            | FifoError::Semaphore { channel }
            | FifoError::Cache { channel } => Some(channel),
            FifoError::Other { .. } => None,
        }
    }
}

impl fmt::Display for FifoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FifoError::DmaPusher { channel, error } => {
                write!(f, "DMA pusher error {error:?} on channel {channel}")
            }
            FifoError::DmaPusherUnknown { channel, code } => {
                write!(f, "DMA pusher error code {code} on channel {channel}")
            }
            FifoError::Semaphore { channel } => write!(f, "semaphore error on channel {channel}"),
            FifoError::Cache { channel } => write!(f, "puller cache error on channel {channel}"),
            FifoError::Other { bits } => write!(f, "PFIFO error interrupt {bits:#x}"),
        }
    }
}

impl core::error::Error for FifoError {}
