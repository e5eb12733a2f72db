//! AMD/ATI Radeon command-processor microcode.
//!
//! - [`r5xx`]: the R5xx CP MicroEngine image ([`CpMicrocode`]) and its upload and read-back
//!   through `CP_ME_RAM_ADDR`/`RADDR`/`DATAH`/`DATAL` (amd-r5xx-acceleration §5.12, §5.13).
//! - [`evergreen`]: the Evergreen / Cayman PFP, ME and RLC images (parse, upload, read back).

pub mod evergreen;
pub mod r5xx;

pub use r5xx::{CpFirmwareKind, CpMicrocode, LoadError, MeRamEntry, UploadReport};
