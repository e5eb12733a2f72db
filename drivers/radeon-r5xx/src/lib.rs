//! Radeon R5xx (X1000 series: R520, RV515, RV530, RV560, RV570, R580) command-processor driver,
//! from amd-r5xx-acceleration §5 (Command Processor), §6 (PM4) and §11.1 (CP registers), plus
//! the facts the document leaves out, from Linux r100.c (bring-up order, ring/IB tests,
//! 16-dword padding).
//!
//! # Use
//!
//! ```no_run
//! # fn f(cfg: &impl baregpu_hal::pci::ConfigRegionAccess, addr: baregpu_hal::pci::PciAddress,
//! #      io: impl baregpu_hal::RegisterIo, clock: impl baregpu_hal::time::Clock,
//! #      dma: &impl baregpu_hal::dma::DmaAllocator, firmware: &[u8])
//! #      -> Result<(), Box<dyn core::error::Error>> {
//! use core::time::Duration;
//! use baregpu_radeon_r5xx::gpu::GpuQueue; // fences, waits (the shared interface)
//! use baregpu_radeon_r5xx::{R5xx, RingConfig, pci};
//!
//! let probed = pci::probe(cfg, addr)?;          // device table, register BAR
//! pci::enable(cfg, addr)?;                      // memory decoding + bus mastering
//! // ... map `probed.registers` as `io` ...
//! let mut gpu = R5xx::init(io, clock, dma, firmware, RingConfig::default())?; // owns its memory
//! let fence = gpu.submit(8, |s| {
//!     // s.writer().write_reg(...)?; s.indirect_buffer(ib)?;
//!     s.fence()
//! })?;                                          // padded to 16 dwords, one doorbell
//! gpu.wait(&fence, Duration::from_millis(100))?;
//! gpu.shutdown();                               // streams off, ring memory back to `dma`
//! # Ok(()) }
//! ```
//!
//! # What it does
//!
//! - [`pci`]: probe (device table, register BAR ≥ 64 KiB), enable decoding and bus mastering.
//! - [`R5xx::init`]: parse the microcode **first** (a malformed image never reaches the
//!   device), stop and soft-reset the CP (§5.8 steps 1-2), wait for the MicroEngine to idle,
//!   upload and read back the microcode (§5.12, §5.13), program the ring in the Linux order
//!   (r100.c `r100_cp_init`), enable the streams and run the ring test. The ring and
//!   writeback page are [`DmaBuffer`](baregpu_hal::dma::DmaBuffer)s: dropping the driver stops
//!   the streams and gives them back.
//! - Submission ([`R5xx::begin`], [`R5xx::submit`]): reserve ring space with back-pressure
//!   (bounded wait on the written-back read pointer, §5.4), emit packets with `baregpu-ring`'s
//!   [`Pm4Writer`](baregpu_ring::pm4::Pm4Writer), pad to 16 dwords with type-2 packets, one doorbell
//!   (`CP_RB_WPTR`) per batch.
//! - Indirect buffers (§5.6, §5.10): [`Submission::indirect_buffer`] emits IB1 (3 dwords); an
//!   IB1 built with [`baregpu_ring::ib::IndirectBuffer`] starts an IB2 with
//!   `writer().indirect_buffer2(..)`.
//! - PIO push mode (§5.3, §5.11): [`R5xx::pio`] switches the primary stream to PIO and writes
//!   packets through the `CP_CSQ_APER_PRIMARY` aperture, respecting the queue's space
//!   (`CP_CSQ_AVAIL.CSQ_CNT_PRIMARY`, free dwords; the reasoning is in [`PioSession`]'s module).
//! - Fences (§5.9): sequence numbers written by a type-0 packet to a scratch register, written
//!   back by the CP to the writeback page; [`GpuQueue::wait`](gpu::GpuQueue::wait) is bounded.
//! - Interrupts: `GEN_INT_CNTL`/`GEN_INT_STATUS` software and scratch interrupts
//!   ([`R5xx::enable_interrupts`], [`R5xx::handle_interrupts`]).
//! - Recovery: [`R5xx::reset`] (the §5.8 soft-reset sequence, ring restart, ring test);
//!   [`R5xx::recover`] (full re-bring-up, reloading the microcode when its read-back fails,
//!   e.g. after a function-level reset).
//! - CTM compute (module `ctm`, cargo feature `ctm`, off by default because only the emulated
//!   R5xx has the project's CTM device interface): DPP programs and CTM command buffers (crate
//!   `baregpu-ati-ctm`) in DMA memory they own, dispatched through the ring with that
//!   interface, typed CTM faults from `CTM_STATUS`.
//! - One dependency: the crate re-exports what its API names ([`hal`], [`regs`], [`ring`],
//!   [`firmware`] and its error and report types).
//! - All-ones detection: a device that stopped answering is [`DeviceGone`], never a loop; every
//!   error enum wraps that one type and gives it as `source()`.
//!
//! # Modules
//!
//! One concern each, with no import cycle (a test reads the `use` lines): `consts`, `config`,
//! `error`, `liveness` (the all-ones check and the health-checked poll loop) at the bottom;
//! `r5xx` (the [`R5xx`] handle with `bringup`, `submit`, `fences`, `interrupts`, `recovery`)
//! above them; [`pio`](PioSession) and `ctm` on top, through methods only.
//!
//! Safe Rust only, `no_std`, no allocation (the crate does not link `alloc`), every wait
//! bounded by a [`baregpu_hal::time::Clock`].
#![no_std]
// docs.rs (`--cfg docsrs`) marks each feature-gated item with the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod config;
pub mod consts;
#[cfg(feature = "ctm")]
pub mod ctm;
mod error;
mod liveness;
pub mod pci;
mod pio;
mod r5xx;

pub use baregpu_gpu::{Fence, FenceFailure, FenceStatus, ResetReport};
pub use config::RingConfig;
pub use consts::{
    FENCE_SCRATCH, RING_TEST_SCRATCH, RING_TEST_SEED, RING_TEST_VALUE, USER_SCRATCH,
    WB_RPTR_OFFSET, WB_SCRATCH_OFFSET, WRITEBACK_BYTES,
};
pub use error::{
    ConfigError, DeviceGone, FenceError, InitError, Overrun, ResetError, SubmitError, TestError,
};
pub use pio::{PioSession, PioSink};
pub use r5xx::interrupts::Interrupts;
pub use r5xx::recovery::RecoverReport;
pub use r5xx::submit::Submission;
pub use r5xx::{Bar, R5xx, Ring, Stats};

// What the public API names, so that this crate is the one dependency a kernel needs.
/// The ATI CTM command builders and DPP executable loader the `ctm` module takes.
#[cfg(feature = "ctm")]
pub use baregpu_ati_ctm as ati_ctm;
/// The microcode parser and loader (`FirmwareError`, `LoadError`, `UploadReport`).
pub use baregpu_firmware as firmware;
pub use baregpu_firmware::FirmwareError;
pub use baregpu_firmware::amd::{CpMicrocode, LoadError, MeRamEntry, UploadReport};
/// The family-generic GPU layer the driver implements (fence timeline, submission protocol,
/// waits, recovery, the `GpuQueue` trait).
pub use baregpu_gpu as gpu;
/// The HAL the driver runs on (`RegisterIo`, `Clock`, `DmaAllocator`, PCI access).
pub use baregpu_hal as hal;
/// The R5xx registers (amd-r5xx-acceleration §11), generated from the register database.
pub use baregpu_regs::r5xx as regs;
/// PM4 packets, the command ring and indirect buffers the submission API hands out.
pub use baregpu_ring as ring;
