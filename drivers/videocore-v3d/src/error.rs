//! Typed errors of every driver operation. Each wraps the one all-ones error
//! ([`DeviceGone`]) and gives the wrapped error as `source()`.

use core::fmt;

use baregpu_hal::dma::DmaError;
use baregpu_hal::register::{AddressFieldError, FieldOverflow};
use baregpu_hal::time::TimedOut;
use baregpu_ring::vc4::ControlListError;
use baregpu_vc4_validate::ListError;

pub use baregpu_gpu::{DeviceGone, FenceError, Overrun};

/// Why [`crate::identity::probe`] (and so [`crate::V3d::init`]) refused the device. No
/// register was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum ProbeError {
    /// Every register reads all-ones: nothing answers at this address.
    DeviceGone(DeviceGone),
    /// `V3D_IDENT0` does not read "V3D" (§10, Table 79): a powered-off V3D (its power domain
    /// or clock off, reading zero) or another block at this address.
    NotV3d {
        /// What `V3D_IDENT0` read.
        ident0: u32,
    },
    /// The technology version is not the VideoCore IV's (2, Table 79).
    UnsupportedVersion {
        /// `V3D_IDENT0.TVER`.
        version: u8,
    },
    /// An identity register holds a configuration no V3D has (no slices, no QPUs, an
    /// undocumented tile buffer size).
    BadConfiguration {
        /// The register.
        register: &'static str,
        /// What it read.
        raw: u32,
    },
}

impl From<DeviceGone> for ProbeError {
    fn from(e: DeviceGone) -> Self {
        ProbeError::DeviceGone(e)
    }
}

impl fmt::Display for ProbeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProbeError::DeviceGone(_) => f.write_str("device gone"),
            ProbeError::NotV3d { ident0 } => {
                write!(f, "V3D_IDENT0 reads {ident0:#010x}, not \"V3D\" (powered off?)")
            }
            ProbeError::UnsupportedVersion { version } => {
                write!(f, "V3D technology version {version}, the driver knows 2")
            }
            ProbeError::BadConfiguration { register, raw } => {
                write!(f, "{register} reads {raw:#010x}, a configuration no V3D has")
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

/// Which caller-provided buffer of a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum JobBuffer {
    /// The binning control list.
    BinningList,
    /// The rendering control list.
    RenderingList,
    /// Tile allocation memory (the tile lists the binner writes).
    TileAllocation,
    /// The tile state data array (48 bytes per tile).
    TileState,
    /// The NV shader state record and the shaded vertices.
    Vertices,
    /// The frame buffer.
    Framebuffer,
    /// The binner's overflow pool.
    OverflowPool,
}

/// Why a render job's control lists were not built. Nothing was submitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum JobError {
    /// A frame buffer of no pixels, or wider or taller than the tile counts of Table 38
    /// (record 112: 8-bit width and height in tiles) allow.
    BadFramebuffer {
        /// Pixels.
        width: u32,
        /// Pixels.
        height: u32,
    },
    /// A job without triangles.
    NoTriangles,
    /// More varyings than [`crate::job::MAX_VARYINGS`].
    TooManyVaryings {
        /// Asked for.
        varyings: usize,
    },
    /// A buffer is smaller than the job needs.
    BufferTooSmall {
        /// Which.
        buffer: JobBuffer,
        /// Bytes needed.
        needed: usize,
        /// Bytes it has.
        size: usize,
    },
    /// A buffer is not aligned as the document requires (16 bytes for the tile state data
    /// array and the shader record, Table 38 and Table 46).
    Misaligned {
        /// Which.
        buffer: JobBuffer,
        /// Alignment in bytes.
        align: u64,
    },
    /// Binner memory crosses a 256 MiB boundary, which the binner cannot follow (Linux
    /// vc4_v3d.c).
    CrossesBinnerBoundary {
        /// Which.
        buffer: JobBuffer,
    },
    /// A vertex coordinate outside the s12.4 range of Figure 12 (±2048 pixels).
    CoordinateOutOfRange,
    /// A shader address the V3D cannot reach (its addresses are 32-bit, Table 46).
    AddressAbove4GiB {
        /// The address.
        address: u64,
    },
    /// A value does not fit its record field.
    Field(FieldOverflow),
    /// An address does not fit its field.
    Address(AddressFieldError),
    /// The list writer refused a record (list buffer full, wrong list, relocation).
    ControlList(ControlListError),
    /// A job buffer could not be written.
    Dma(DmaError),
    /// An untrusted binning list the validator refused (`baregpu-vc4-validate`).
    Rejected(ListError),
    /// An untrusted binning list's tiles (record 112) are not the frame buffer's: the
    /// rendering list would read tile lists the binner never wrote.
    TilesMismatch {
        /// The binning list's tiles across and down.
        list: (u32, u32),
        /// The frame buffer's.
        framebuffer: (u32, u32),
    },
    /// An untrusted binning list's initial tile block is not the 32 bytes the driver's
    /// rendering list steps by (Linux vc4_validate.c forces 32 too).
    UnsupportedTileBlock {
        /// Its size in bytes.
        bytes: u32,
    },
}

impl From<ListError> for JobError {
    fn from(e: ListError) -> Self {
        JobError::Rejected(e)
    }
}

impl From<FieldOverflow> for JobError {
    fn from(e: FieldOverflow) -> Self {
        JobError::Field(e)
    }
}

impl From<AddressFieldError> for JobError {
    fn from(e: AddressFieldError) -> Self {
        JobError::Address(e)
    }
}

impl From<ControlListError> for JobError {
    fn from(e: ControlListError) -> Self {
        JobError::ControlList(e)
    }
}

impl From<DmaError> for JobError {
    fn from(e: DmaError) -> Self {
        JobError::Dma(e)
    }
}

impl fmt::Display for JobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JobError::BadFramebuffer { width, height } => {
                write!(f, "a {width}x{height} frame buffer (1..=16320 pixels each way)")
            }
            JobError::NoTriangles => f.write_str("a job without triangles"),
            JobError::TooManyVaryings { varyings } => write!(f, "{varyings} varyings"),
            JobError::BufferTooSmall { buffer, needed, size } => {
                write!(f, "{buffer:?} has {size} bytes, the job needs {needed}")
            }
            JobError::Misaligned { buffer, align } => {
                write!(f, "{buffer:?} is not {align}-byte aligned")
            }
            JobError::CrossesBinnerBoundary { buffer } => {
                write!(f, "{buffer:?} crosses a 256 MiB boundary")
            }
            JobError::CoordinateOutOfRange => {
                f.write_str("a vertex outside the s12.4 screen coordinate range")
            }
            JobError::AddressAbove4GiB { address } => {
                write!(f, "address {address:#x} is above the V3D's 4 GiB")
            }
            JobError::Field(_) => f.write_str("a value does not fit its record field"),
            JobError::Address(_) => f.write_str("an address does not fit its record field"),
            JobError::ControlList(_) => f.write_str("control list record refused"),
            JobError::Dma(_) => f.write_str("job buffer not writable"),
            JobError::Rejected(_) => f.write_str("untrusted binning list refused"),
            JobError::TilesMismatch { list, framebuffer } => write!(
                f,
                "the binning list has {}x{} tiles, the frame buffer {}x{}",
                list.0, list.1, framebuffer.0, framebuffer.1
            ),
            JobError::UnsupportedTileBlock { bytes } => {
                write!(f, "initial tile block of {bytes} bytes (the driver steps by 32)")
            }
        }
    }
}

impl core::error::Error for JobError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            JobError::Field(e) => Some(e),
            JobError::Address(e) => Some(e),
            JobError::ControlList(e) => Some(e),
            JobError::Dma(e) => Some(e),
            JobError::Rejected(e) => Some(e),
            _ => None,
        }
    }
}

/// What a submission closure's staging calls return (a job whose lists could not be built, a
/// batch over its limits). Nothing reached the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum BuildError {
    /// The job's control lists could not be built.
    Job(JobError),
    /// A second render job in one submission: the control list executor runs one binning and
    /// one rendering list at a time (§8), so a submission holds at most one.
    OneRenderJobPerSubmission,
    /// More user programs than the request queue holds (16, Table 65).
    TooManyPrograms,
    /// A user program's address does not fit the request registers, or its uniforms are longer
    /// than `V3D_SRQUL` holds (Table 67).
    BadProgram,
    /// The submission's reservation is used up.
    Overrun(Overrun),
}

impl From<JobError> for BuildError {
    fn from(e: JobError) -> Self {
        BuildError::Job(e)
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::Job(_) => f.write_str("render job refused"),
            BuildError::OneRenderJobPerSubmission => {
                f.write_str("a second render job in one submission")
            }
            BuildError::TooManyPrograms => {
                f.write_str("more user programs than the request queue holds")
            }
            BuildError::BadProgram => f.write_str("user program address or uniforms length"),
            BuildError::Overrun(_) => f.write_str("submission reservation used up"),
        }
    }
}

impl core::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            BuildError::Job(e) => Some(e),
            BuildError::Overrun(e) => Some(e),
            _ => None,
        }
    }
}

/// Why a submission failed. A failed submission reached the device with nothing: the
/// registers are written only once every wait before them succeeded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum SubmitError {
    /// The previous render job did not finish within the submit timeout (the control list
    /// executor runs one job at a time).
    Busy(TimedOut),
    /// The user program request queue stayed full for the submit timeout (16 deep, Table 65).
    QueueFull(TimedOut),
    /// The queue refused a request (`V3D_SRQCS.QPURQERR` set, Table 68); the error bit was
    /// cleared.
    QueueError,
    /// Too many fences outstanding for the driver's fence table, for the submit timeout.
    FencesFull(TimedOut),
    /// The submission closure's error.
    Build(BuildError),
    /// The closure wrote past its reservation: the whole submission was discarded.
    Overrun(Overrun),
    /// The device reads all-ones.
    DeviceGone(DeviceGone),
}

impl From<Overrun> for SubmitError {
    fn from(e: Overrun) -> Self {
        SubmitError::Overrun(e)
    }
}

impl From<DeviceGone> for SubmitError {
    fn from(e: DeviceGone) -> Self {
        SubmitError::DeviceGone(e)
    }
}

impl From<BuildError> for SubmitError {
    fn from(e: BuildError) -> Self {
        match e {
            BuildError::Overrun(o) => SubmitError::Overrun(o),
            e => SubmitError::Build(e),
        }
    }
}

impl From<JobError> for SubmitError {
    fn from(e: JobError) -> Self {
        SubmitError::Build(BuildError::Job(e))
    }
}

impl fmt::Display for SubmitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SubmitError::Busy(_) => f.write_str("the previous render job did not finish"),
            SubmitError::QueueFull(_) => f.write_str("user program queue stayed full"),
            SubmitError::QueueError => f.write_str("user program queue refused a request"),
            SubmitError::FencesFull(_) => f.write_str("fence table stayed full"),
            SubmitError::Build(_) => f.write_str("submission refused"),
            SubmitError::Overrun(_) => f.write_str("submission discarded"),
            SubmitError::DeviceGone(_) => f.write_str("device gone"),
        }
    }
}

impl core::error::Error for SubmitError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            SubmitError::Busy(e) | SubmitError::QueueFull(e) | SubmitError::FencesFull(e) => {
                Some(e)
            }
            SubmitError::Build(e) => Some(e),
            SubmitError::Overrun(e) => Some(e),
            SubmitError::DeviceGone(e) => Some(e),
            SubmitError::QueueError => None,
        }
    }
}

/// Why a wait ended without its fence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum WaitError {
    /// The fence did not signal (timeout, lost to a reset, device gone).
    Fence(FenceError),
    /// The binner ran out of memory (OUTOMEM, §10 Table 75) and the overflow pool had no
    /// block left to give it (`V3D_BPOA`/`V3D_BPOS`, Tables 60-61): the binner stays halted
    /// until more memory is given or the engine is reset.
    OverflowPoolExhausted {
        /// Blocks the pool handed out for this job.
        blocks: u32,
    },
    /// A control list thread stopped with an error (`V3D_CTnCS.CTERR`, Table 49).
    ControlListError {
        /// 0: binning, 1: rendering.
        thread: u8,
    },
}

impl From<FenceError> for WaitError {
    fn from(e: FenceError) -> Self {
        WaitError::Fence(e)
    }
}

impl From<DeviceGone> for WaitError {
    fn from(e: DeviceGone) -> Self {
        WaitError::Fence(FenceError::DeviceGone(e))
    }
}

impl fmt::Display for WaitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WaitError::Fence(_) => f.write_str("fence did not signal"),
            WaitError::OverflowPoolExhausted { blocks } => {
                write!(f, "binner out of memory after {blocks} overflow blocks")
            }
            WaitError::ControlListError { thread } => {
                write!(f, "control list thread {thread} stopped with an error")
            }
        }
    }
}

impl core::error::Error for WaitError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            WaitError::Fence(e) => Some(e),
            _ => None,
        }
    }
}

/// Why a driver operation outside submission (bring-up, reset, VPM reservation) failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum InitError {
    /// The device is not a usable V3D.
    Probe(ProbeError),
    /// The overflow pool is unusable (crosses a 256 MiB boundary, smaller than one block,
    /// blocks not 16-byte multiples).
    BadOverflowPool(JobError),
    /// The engine did not go idle within the timeout (a VPM reservation needs an idle V3D,
    /// Table 69; a reset waits for the control threads to stop).
    NotIdle(TimedOut),
    /// More VPM memory asked for user programs than `V3D_VPMBASE` holds or the VPM has.
    VpmTooLarge {
        /// Bytes asked for.
        bytes: u32,
    },
    /// The scratch register did not hold what was written (the register test of bring-up
    /// and reset).
    ScratchMismatch {
        /// Written.
        expected: u32,
        /// Read back.
        found: u32,
    },
    /// The device reads all-ones.
    DeviceGone(DeviceGone),
}

impl From<DeviceGone> for InitError {
    fn from(e: DeviceGone) -> Self {
        InitError::DeviceGone(e)
    }
}

impl From<ProbeError> for InitError {
    fn from(e: ProbeError) -> Self {
        match e {
            ProbeError::DeviceGone(e) => InitError::DeviceGone(e),
            e => InitError::Probe(e),
        }
    }
}

impl fmt::Display for InitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InitError::Probe(_) => f.write_str("probe failed"),
            InitError::BadOverflowPool(_) => f.write_str("overflow pool unusable"),
            InitError::NotIdle(_) => f.write_str("the V3D did not go idle"),
            InitError::VpmTooLarge { bytes } => {
                write!(f, "{bytes} bytes of VPM for user programs")
            }
            InitError::ScratchMismatch { expected, found } => {
                write!(f, "V3D_SCRATCH reads {found:#x}, expected {expected:#x}")
            }
            InitError::DeviceGone(_) => f.write_str("device gone"),
        }
    }
}

impl core::error::Error for InitError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            InitError::Probe(e) => Some(e),
            InitError::BadOverflowPool(e) => Some(e),
            InitError::NotIdle(e) => Some(e),
            InitError::DeviceGone(e) => Some(e),
            _ => None,
        }
    }
}
