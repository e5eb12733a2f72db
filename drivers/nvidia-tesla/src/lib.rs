//! nVidia Tesla (NV50 family) driver for GT215, GT216 and GT218, from nvidia-hardware-envytools
//! §2.3 (PCI IDs), §2.4 (BARs, PMC), §2.7 (memory, DMA objects), §2.8 (PFIFO), with the facts
//! the document leaves out from envytools rnndb and Linux nouveau (nvkm/engine/fifo/nv50.c,
//! g84.c, core/ramht.c), each cited where it is used.
//!
//! # Use
//!
//! ```no_run
//! # use baregpu_nvidia_tesla::hal;
//! # fn f(bar0: impl hal::RegisterIo, clock: impl hal::time::Clock)
//! #      -> Result<(), Box<dyn core::error::Error>> {
//! use baregpu_nvidia_tesla::{ChannelId, IbRing, Tesla, TeslaConfig};
//!
//! // 1 MiB of VRAM at 16 MiB for channel structures, RAMFC, RAMHT and the playlist.
//! let mut gpu = Tesla::init(bar0, clock, TeslaConfig::new(16 << 20, 1 << 20))?;
//! let id = ChannelId::new(1)?;
//! gpu.create_channel(id, IbRing { address: 0x8000_0000, entries: 512 })?;
//! gpu.enable_channel(id)?;
//! // ... IB entries written at 0x8000_0000, IB_PUT in the channel's USER area ...
//! for fault in gpu.handle_interrupts()?.faults() {
//!     gpu.recover_channel(id)?; // a DMA_PUSHER, SEMAPHORE or CACHE_ERROR fault
//! #   let _ = fault;
//! }
//! # Ok(()) }
//! ```
//!
//! # What it does
//!
//! - [`pci`]: the PCI ID table, BAR0 and the VRAM and RAMIN apertures; [`identity`]:
//!   `PMC.BOOT_0` decoded into an [`Identity`]; chips without the falcons or VRAM the driver
//!   needs are refused naming what they lack ([`Missing`]); all-ones is a typed error.
//! - [`memory`]: the VM-less setup (unpaged DMA objects only; why the document allows it is
//!   there), the PMEM window, a VRAM arena, DMA objects.
//! - [`Tesla::init`]: PFIFO reset through `PMC.ENABLE` and initialised in Linux nouveau's
//!   order.
//! - Channels ([`channel`], [`Tesla::create_channel`]): ids 1..=126, channel structure, RAMFC
//!   for IB or DMA mode, RAMHT with object handles, channel table, playlist; enable, disable,
//!   unload.
//! - Interrupts ([`Tesla::handle_interrupts`]): `PMC.INTR` routed, PFIFO errors decoded into
//!   [`FifoError`]s, the channel recovered ([`Tesla::recover_channel`]).
//! - [`queue`]: a channel as the family-generic [`gpu::GpuQueue`] over the IB-mode pushbuffer
//!   writer of `baregpu_ring::nvidia` (one `IB_PUT` per batch, all or nothing); fences are
//!   `REF_CNT` plus a G84+ semaphore release, other channels wait on them with semaphore
//!   acquires; bounded waits; reset through the shared recovery protocol.
//! - [`falcon`]: any falcon by its typed instance ([`Tesla::falcon`]): PMC enable, upload
//!   through `baregpu_firmware`'s `FalconLoader`, entry point, start, halt detection, the
//!   SCRATCH mailbox, `EXIT` and scratch (`SWGEN`) interrupts.
//!
//! Safe Rust only, `no_std`, no allocation, every wait bounded by a
//! [`baregpu_hal::time::Clock`].
#![no_std]
// docs.rs (`--cfg docsrs`) marks each feature-gated item with the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod channel;
mod error;
pub mod falcon;
pub mod identity;
pub mod memory;
pub mod pci;
pub mod queue;
mod tesla;

use baregpu_hal::FamilyIo;

pub use channel::{ChannelId, ChannelMemory, DmaPushbuffer, Engine, IbRing, Pusher};
pub use error::{ChannelError, DeviceGone, FifoError, InitError, MemoryError, ProbeError};
pub use falcon::{Falcon, FalconError, FalconIrq, TeslaFalcon};
pub use identity::{Identity, Missing};
pub use memory::{Access, DmaObject, Pmem, Target, VramArena, VramBlock};
pub use pci::PciProbeError;
pub use queue::{FencePoint, Queue, QueueConfig, QueueError, SubmitError};
pub use tesla::channels::SEMAPHORE_DMA_HANDLE;
pub use tesla::interrupts::{IrqReport, MAX_FAULTS};
pub use tesla::{Tesla, TeslaConfig};

/// The register window (BAR0) as the driver holds it: bound to the nVidia family, so another
/// family's register does not compile against it.
pub type Bar<IO> = FamilyIo<baregpu_regs::nvidia::Family, IO>;

// What the public API names, so that this crate is the one dependency a kernel needs.
/// The falcon image and loader beneath [`falcon`].
pub use baregpu_firmware as firmware;
/// The family-generic GPU layer.
pub use baregpu_gpu as gpu;
/// The HAL the driver runs on (`RegisterIo`, `Clock`).
pub use baregpu_hal as hal;
/// The nVidia registers, generated from the register database.
pub use baregpu_regs::nvidia as regs;
/// The pushbuffer writer and IB-mode channel beneath [`queue`].
pub use baregpu_ring as ring;
