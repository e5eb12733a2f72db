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
//! - nVidia falcon (IMEM/DMEM upload through `CODE_INDEX`/`CODE`/`DATA_INDEX`/`DATA`): not yet;
//!   it arrives with the nVidia driver issue. Nothing here pretends to support it.
//!
//! Errors: [`FirmwareError`] (the image is malformed; nothing was written) and
//! [`amd::r5xx::LoadError`] / [`amd::evergreen::LoadError`] (the device refused, was not ready or did not keep what was written).
#![no_std]
// docs.rs (`--cfg docsrs`) marks each feature-gated item with the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]

pub mod amd;
mod error;

pub use error::FirmwareError;
