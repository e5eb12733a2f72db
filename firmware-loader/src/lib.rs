//! `baregpu-firmware`: parse, validate and upload GPU microcode, `no_std` and without allocation.
//!
//! Every image is validated by a `parse` function that sees only bytes; a register is touched
//! only by an upload function that takes an already-parsed image, so a malformed file can never
//! reach a device (the types make the order impossible to get wrong).
//!
//! - [`amd`]: Radeon command-processor microcode.
//!   - R5xx: [`amd::CpMicrocode`] (`radeon/R520_cp.bin`, 256 x 40-bit MicroEngine RAM entries)
//!     and its upload/read-back through `CP_ME_RAM_*` ([`amd::r5xx::upload`],
//!     amd-r5xx-acceleration §5.12, §5.13).
//!   - Evergreen / Cayman: [`amd::evergreen::PfpMicrocode`], [`amd::evergreen::MeMicrocode`] and
//!     [`amd::evergreen::RlcMicrocode`] (a set: [`amd::evergreen::EvergreenFirmware`]), uploaded
//!     and read back with the ME and PFP halted ([`amd::evergreen::upload`], Linux radeon
//!     evergreen.c).
//! - `falcon` (feature `nvidia`): nVidia v3+ falcon images ([`falcon::FalconImage`]: IMEM code
//!   with its virtual start page, DMEM data, entry point) uploaded to a falcon instance
//!   (`PDAEMON`, `PCOPY`) through `CODE_INDEX`/`CODE_VIRT`/`CODE` and `DATA_INDEX`/`DATA`
//!   with auto-increment, checked against the engine's `UC_CAPS` first and read back after
//!   ([`falcon::FalconLoader`], nvidia-hardware-envytools §2.10.4, §2.10.7). The falcon is
//!   never started here.
//!
//! Errors: [`FirmwareError`] (the image is malformed; nothing was written) and
//! [`amd::r5xx::LoadError`] / [`amd::evergreen::LoadError`] (the device refused, was not ready or did not keep what was written);
//! for falcons `falcon::FalconImageError` and `falcon::FalconLoadError`.
#![no_std]
// docs.rs (`--cfg docsrs`) marks each feature-gated item with the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]

pub mod amd;
mod counting;
mod error;
#[cfg(feature = "nvidia")]
pub mod falcon;

pub use error::FirmwareError;
