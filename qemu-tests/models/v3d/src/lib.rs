//! Emulated Broadcom VideoCore IV V3D, written from the *VideoCore IV 3D Architecture
//! Reference Guide* (`broadcom-videocore-iv-3d`, cited by section) and never from a driver.
//!
//! The real V3D is not a PCI device; the harness presents it through the framework's
//! project-defined PCI wrapper ([`gpu_device_model::PlatformDevice`]) with BAR0 as the V3D
//! register block (§10).
//!
//! Layout: the QPUs (their own decoder and executor) and the user-program request queue
//! (SRQ) on one side, the control-list executor (binner and renderer) on the other, meeting
//! at [`shading`]: what the front-end pipe hands a fragment-shader thread (§6) and what the
//! thread leaves for the tile buffer (§5).
//!
//! - [`V3d`]: the register block (§10) as a [`gpu_device_model::PlatformModel`]: identity,
//!   interrupts, cache control, QPU reservations, the SRQ, the VPM user reservation; the
//!   control-list registers are stored for the control-list executor.
//! - [`qpu`]: one QPU's decoder and executor, with the §3 restrictions checked at run time.
//! - [`scheduler`]: the twelve QPUs, round robin under a per-tick instruction budget, and the
//!   renderer's [`shading::FragmentShading`].
//! - [`vpm`], [`cache`]: the VPM with its DMA, and the read caches in front of memory.
//! - [`faults`]: injected faults.
//!
//! The crate README lists what is emulated and every decision where the document is silent.

#![forbid(unsafe_code)]

pub mod cache;
pub mod cle;
pub mod faults;
pub mod perf;
pub mod qpu;
pub mod scheduler;
pub mod shading;
pub mod tmu;
mod v3d;
pub mod vpm;

pub use faults::Faults;
pub use v3d::*;
