//! The register file behind BAR0, built from the generated register database
//! (`baregpu_regs::r5xx::REGISTERS`: §11 plus the reviewed additions from public drivers).
//!
//! Every documented register keeps its stored value with the database's semantics:
//! - a write changes only the bits of `write_mask` (the writable fields); read-only registers
//!   (`writable = false`) ignore writes;
//! - a read returns only the bits of readable fields; write-only registers
//!   (`readable = false`: `CP_ME_RAM_RADDR`, `CP_CSQ_ADDR`, `CP_RESYNC_*`, the PIO apertures)
//!   and write-only fields (`CP_ME_CNTL.ME_STEP`) read 0;
//! - reset values are the database's `reset`.
//!
//! Offsets the database does not list read 0 and ignore writes (a hole in the register
//! backbone). Registers with side effects are handled by the model before or after the store.
//! The file itself is the framework's (`gpu_device_model::regfile`), shared by every model.

use baregpu_regs::r5xx::{Chipset, REGISTERS};
use gpu_device_model::regfile;

/// Bytes of register space (BAR0).
pub(crate) const REG_SPACE: u32 = 0x1_0000;

/// The register file at power-on: every database register (the R5xx database has one layout).
pub(crate) type RegisterFile = regfile::RegisterFile<Chipset>;

/// A fresh register file.
pub(crate) fn new() -> RegisterFile {
    regfile::RegisterFile::new(REGISTERS, REG_SPACE, |_| true, &[])
}
