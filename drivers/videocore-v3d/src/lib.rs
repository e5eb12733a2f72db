//! Broadcom VideoCore IV V3D driver (the 3D core of the Raspberry Pi 1-3), from
//! broadcom-videocore-iv-3d §8 (system control), §9 (control lists) and §10 (registers), with
//! the facts the document leaves out taken from Linux vc4 (vc4_gem.c, vc4_render_cl.c,
//! vc4_v3d.c, vc4_validate.c), Mesa vc4 (vc4_draw.c, vc4_emit.c) and the Raspberry Pi
//! hello_fft sample (gpu_fft_base.c), each cited where it is used.
//!
//! # Use
//!
//! ```no_run
//! # use baregpu_videocore_v3d::hal;
//! # fn f(io: impl hal::RegisterIo, clock: impl hal::time::Clock,
//! #      pool: &hal::dma::DmaRegion, memory: baregpu_videocore_v3d::JobMemory<'_>,
//! #      fb: hal::dma::BusAddress, shader: baregpu_videocore_v3d::FragmentShader)
//! #      -> Result<(), Box<dyn core::error::Error>> {
//! use core::time::Duration;
//! use baregpu_videocore_v3d::{ColorFormat, Framebuffer, NvVertex, OverflowPool, RenderJob};
//! use baregpu_videocore_v3d::{V3d, V3dConfig};
//!
//! let pool = OverflowPool::new(pool, 64 * 1024)?;        // the binner's OUTOMEM refills
//! let mut v3d = V3d::init(io, clock, Some(pool), V3dConfig::default())?; // probe, bring-up
//! let triangle = [NvVertex::at(10.0, 10.0), NvVertex::at(100.0, 10.0), NvVertex::at(10.0, 100.0)];
//! let job = RenderJob {
//!     framebuffer: Framebuffer { address: fb, width: 128, height: 128, format: ColorFormat::Rgba8888 },
//!     clear_color: 0xff00_0000,
//!     triangles: &[triangle],
//!     varyings: 0,
//!     shader,
//! };
//! let fence = v3d.render(&job, &memory)?;                // lists built, CT0/CT1 started
//! v3d.wait(&fence, Duration::from_millis(100))?;
//! # Ok(()) }
//! ```
//!
//! # What it does
//!
//! - [`identity`]: `V3D_IDENT0/1/2` decoded into an [`Identity`]; all-ones, a powered-off or
//!   foreign block, an unknown version are a typed [`ProbeError`] after three reads.
//! - [`V3d::init`]: register test (`V3D_SCRATCH`), control list threads reset, counters and
//!   the user program queue cleared, interrupts off, L2 and slice caches cleared.
//! - [`job`]: a [`RenderJob`] (frame buffer, clear colour, NV-mode triangles with varyings, a
//!   fragment shader the caller supplies) built into a binning and a rendering control list
//!   with `baregpu_ring::vc4::ControlListWriter`, into the caller's DMA buffers; tile
//!   allocation and tile state sized from §9 (64x64-pixel tiles, 48 bytes of tile state per
//!   tile, a 32-byte initial block per tile).
//! - Lists from elsewhere ([`Submission::render_lists`] with a [`ListOrigin`]): the
//!   driver's own are staged as they are; an untrusted binning list (a user program's) is
//!   checked by `baregpu-vc4-validate` against the buffers it names, copied into the
//!   driver's DMA buffer and given the driver's rendering list, or refused before anything
//!   reaches the device.
//! - Submission ([`V3d::submit`]): render jobs, user programs and fences staged, then started
//!   in the document's order once the device can take the whole batch (bounded waits); a
//!   failed closure or wait reaches the device with nothing.
//! - Completion: the frame and program counters (`V3D_RFC`, `V3D_SRQCS`) extended to 64 bits
//!   and matched against each fence; [`V3d::wait`] is bounded, refills the binner from the
//!   [`OverflowPool`] on OUTOMEM (`V3D_BPOA` then `V3D_BPOS`) and reports an exhausted pool
//!   or a control list error as a typed [`WaitError`].
//! - User programs ([`UserProgram`]): `V3D_SRQUA`, `V3D_SRQUL`, `V3D_SRQPC`, back-pressure on
//!   the 16-deep queue; VPM reservation ([`V3d::reserve_user_vpm`]).
//! - Interrupts, opt-in ([`V3d::enable_interrupts`], [`V3d::handle_interrupts`]).
//! - [`V3d::reset`] and the family-generic [`gpu::GpuQueue`].
//!
//! Safe Rust only, `no_std`, no allocation, every wait bounded by a
//! [`baregpu_hal::time::Clock`].
#![no_std]
// docs.rs (`--cfg docsrs`) marks each feature-gated item with the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod error;
pub mod identity;
pub mod job;
mod pool;
mod program;
mod v3d;

use baregpu_hal::FamilyIo;

pub use baregpu_gpu::{Fence, FenceFailure, FenceStatus, ResetReport};
pub use error::{
    BuildError, DeviceGone, FenceError, InitError, JobBuffer, JobError, Overrun, ProbeError,
    SubmitError, WaitError,
};
pub use identity::{Identity, TileBufferSize};
pub use job::{
    BuiltJob, ColorFormat, FragmentShader, Framebuffer, JobBufferSizes, JobMemory, ListRange,
    NvVertex, RenderJob, TileLayout, UntrustedJob, UntrustedMemory,
};
pub use pool::OverflowPool;
pub use program::{SRQ_DEPTH, UserProgram};
pub use v3d::bringup::VPM_RESERVE_UNIT_BYTES;
pub use v3d::fences::FENCE_SLOTS;
pub use v3d::interrupts::IrqReport;
pub use v3d::submit::{ListOrigin, MAX_BATCH_ITEMS, Submission};
pub use v3d::{V3d, V3dConfig};

/// The register window as the driver holds it: bound to the VideoCore IV family, so another
/// family's register does not compile against it.
pub type Bar<IO> = FamilyIo<baregpu_regs::vc4::Family, IO>;

// What the public API names, so that this crate is the one dependency a kernel needs.
/// The family-generic GPU layer the driver implements.
pub use baregpu_gpu as gpu;
/// The HAL the driver runs on (`RegisterIo`, `Clock`, `DmaRegion`).
pub use baregpu_hal as hal;
/// The VideoCore IV registers and control records, generated from the register database.
pub use baregpu_regs::vc4 as regs;
/// The control list writer beneath [`job`].
pub use baregpu_ring as ring;
/// The validator of untrusted binning lists and shaders ([`ListOrigin::Untrusted`]).
pub use baregpu_vc4_validate as validate;
