//! Radeon Evergreen (Cypress, HD 5800) and Cayman (HD 6900) driver, from
//! amd-evergreen-cayman-acceleration §3 (compute) and §9 (PM4), with the facts the document
//! leaves out taken from Linux radeon (evergreen.c, evergreend.h, ni.c, nid.h, r600.c) and Mesa
//! r600 (evergreen_compute.c), each cited where it is used.
//!
//! # Use
//!
//! ```no_run
//! # use baregpu_radeon_evergreen::hal;
//! # fn f(cfg: &impl hal::pci::ConfigRegionAccess, addr: hal::pci::PciAddress,
//! #      io: impl hal::RegisterIo, clock: impl hal::time::Clock,
//! #      dma: &impl hal::dma::DmaAllocator, dst: hal::dma::BusAddress,
//! #      pfp: &[u8], me: &[u8], rlc: &[u8]) -> Result<(), Box<dyn core::error::Error>> {
//! use core::time::Duration;
//! use baregpu_radeon_evergreen::gpu::GpuQueue; // fences, waits (the shared interface)
//! use baregpu_radeon_evergreen::{Evergreen, EvergreenFirmware, EvergreenUcode, RingConfig};
//! use baregpu_radeon_evergreen::{FENCE_DWORDS, pci};
//!
//! let probed = pci::probe(cfg, addr)?;          // chipset table, register BAR
//! pci::enable(cfg, addr)?;                      // memory decoding + bus mastering
//! let ucode = EvergreenUcode::of(probed.chip).ok_or("no microcode known for this chip")?;
//! let fw = EvergreenFirmware::parse(ucode, pfp, me, rlc)?;
//! // ... map `probed.registers` as `io` ...
//! let mut gpu = Evergreen::init(io, clock, dma, probed.chip, &fw, RingConfig::default())?;
//! let fence = gpu.submit(6 + FENCE_DWORDS, |s| {
//!     s.cp_dma_fill(0, dst, 4096)?;             // 4 KiB of zeros by the CP
//!     s.fence()
//! })?;                                          // padded to 16 dwords, one doorbell
//! gpu.wait(&fence, Duration::from_millis(100))?;
//! # Ok(()) }
//! ```
//!
//! # What it does
//!
//! - [`pci`]: probe by PCI ID from the generated chipset table (unknown IDs are
//!   [`pci::ProbeError::NotSupported`]), the register BAR, enable decoding and bus mastering.
//! - [`Evergreen::init`]: the PFP, ME and RLC images must be the device's chip's (checked before
//!   any register access); the ME and PFP are halted, the three images uploaded with
//!   auto-increment and read back (`baregpu_firmware::amd::evergreen::upload`: one address write
//!   plus one write per word), the ring programmed with read-pointer write-back, `ME_INITIALIZE`
//!   (§9.2.1) written, the engines un-halted; ring test and IB test with `SET_CONFIG_REG`
//!   scratch writes (§9.4.14, §9.3.1); interrupts left off (opt-in).
//! - Submission ([`Evergreen::submit`]): `baregpu-gpu`'s all-or-nothing protocol: reserve with
//!   back-pressure (bounded wait on the written-back read pointer), packets held to the
//!   reservation, type-2 padding to 16 dwords, one doorbell; a failed closure leaves nothing.
//! - Fences: `SURFACE_SYNC` (§9.6.7) then `EVENT_WRITE_EOP` (§9.6.2) writing the 64-bit
//!   sequence of the shared timeline to memory, with an interrupt only once enabled;
//!   [`GpuQueue::wait`](gpu::GpuQueue::wait) is bounded, checks the device while it polls and tells a hung CP
//!   from a slow one; `WAIT_REG_MEM` (§9.6.8) for GPU-side waits.
//! - Interrupts, opt-in ([`Evergreen::enable_interrupts`], [`Evergreen::handle_interrupts`]):
//!   the IH ring, EOP vectors, overflow; a write pointer the IH could not have written is
//!   [`IrqError::BadWritePointer`]. Bring-up tests the interrupt path once (a fence's EOP
//!   vector must arrive), then leaves interrupts off.
//! - CP DMA fill and copy, `COND_EXEC` and `SET_PREDICATION` (§9.5) on [`Submission`].
//! - Recovery: [`Evergreen::reset`] (`GRBM_SOFT_RESET`, ring restart, ring test, then the lost
//!   fences fail) and [`Evergreen::recover`] (microcode read-back, reload when it fails).
//! - The family-generic interface: [`gpu::GpuQueue`] (module layout: `evergreen/` with
//!   `bringup`, `submit`, `fences`, `interrupts`, `recovery`, as in the R5xx driver).
//! - Compute ([`compute`]): LS/CS program, cb0 with the dispatch dimensions and arguments,
//!   RAT 0, fetch resources, group size, LDS, `DISPATCH_DIRECT`/`DISPATCH_INDIRECT` and the
//!   cache flushes after, in the order of Mesa r600 evergreen_compute.c; a typed
//!   [`compute::DispatchError`] for every violated requirement.
//! - One dependency: the crate re-exports what its API names ([`hal`], [`regs`], [`ring`],
//!   [`firmware`] with its Evergreen error and report types, [`asm`] for the kernels).
//! - All-ones reads are [`DeviceGone`], never a loop; every error enum wraps that one type and
//!   gives it as `source()`.
//!
//! Safe Rust only, `no_std`, no allocation, every wait bounded by a
//! [`baregpu_hal::time::Clock`].
#![no_std]
// docs.rs (`--cfg docsrs`) marks each feature-gated item with the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod compute;
mod config;
mod consts;
mod error;
mod evergreen;
pub mod irq;
mod liveness;
pub mod pci;
pub mod pm4;
pub mod sync;

pub use baregpu_gpu::{Fence, FenceFailure, FenceStatus, ResetReport};
pub use config::RingConfig;
pub use consts::{
    COHER_TC_VC_SH, COND_EXEC_MAX_DWORDS, FENCE_DWORDS, TEST_SCRATCH, TEST_SEED, TEST_VALUE,
    WB_FENCE_OFFSET, WB_IH_WPTR_OFFSET, WB_RPTR_OFFSET, WRITEBACK_BYTES,
};
pub use error::{
    ConfigError, DeviceGone, FenceError, InitError, Overrun, ScratchError, SubmitError, TestError,
};
pub use evergreen::recovery::RecoverReport;
pub use evergreen::submit::Submission;
pub use evergreen::{Bar, Evergreen, Ring, Stats};
pub use irq::{IrqError, IrqReport};

// What the public API names, so that this crate is the one dependency a kernel needs.
/// The Evergreen/Cayman shader assembler and kernel ABI the [`compute`] module's kernels use.
pub use baregpu_evergreen_asm as asm;
/// The microcode parser and loader ([`EvergreenFirmware`], [`LoadError`], [`UploadReport`]).
pub use baregpu_firmware as firmware;
pub use baregpu_firmware::FirmwareError;
pub use baregpu_firmware::amd::evergreen::{
    EvergreenFirmware, EvergreenUcode, Image, ImageError, LoadError, UploadReport,
};
/// The family-generic GPU layer the driver implements (fence timeline, submission protocol,
/// waits, recovery, the `GpuQueue` trait).
pub use baregpu_gpu as gpu;
/// The HAL the driver runs on (`RegisterIo`, `Clock`, `DmaAllocator`, PCI access).
pub use baregpu_hal as hal;
/// The Evergreen/Cayman registers, chipsets and PCI IDs, generated from the register database.
pub use baregpu_regs::evergreen as regs;
/// PM4 packets, the command ring and indirect buffers beneath the submission API.
pub use baregpu_ring as ring;
