//! The register file behind BAR0, built from the generated register database
//! (`baregpu_regs::evergreen::REGISTERS`: the registers amd-evergreen-cayman-acceleration
//! names, with offsets and fields from the public headers each entry cites).
//!
//! A documented register keeps its stored value with the database's semantics: a write changes
//! only the bits of its writable fields (read-only registers ignore writes), a read returns only
//! readable fields. Registers of the other chip (`chipsets`) do not exist. The constant files
//! the SET_RESOURCE / SET_SAMPLER / SET_LOOP_CONST / SET_BOOL_CONST / SET_CTL_CONST packets
//! write (§9.4.13-§9.4.19; ranges from Linux radeon evergreend.h) are plain storage: the
//! database lists only the words the compute path interprets. Any other offset is a hole:
//! reads 0, writes are dropped (the model counts them).

use baregpu_regs::evergreen::{Chipset, REGISTERS};
use gpu_device_model::regfile;

/// Bytes of register space (BAR0): up to the end of the SET_CTL_CONST range (0x3FF0C).
pub const REG_SPACE: u32 = 0x4_0000;

/// The constant files: [start, end) byte ranges (Linux radeon evergreend.h
/// `PACKET3_SET_{RESOURCE,LOOP_CONST,BOOL_CONST,SAMPLER,CTL_CONST}_START/_END`).
pub const CONSTANT_FILES: [(u32, u32); 5] = [
    (0x3_0000, 0x3_8000),
    (0x3_A200, 0x3_A500),
    (0x3_A500, 0x3_A518),
    (0x3_C000, 0x3_C600),
    (0x3_CFF0, 0x3_FF0C),
];

/// The register file of `chip` at power-on (`gpu_device_model::regfile` applies the database).
pub(crate) fn new(chip: Chipset) -> regfile::RegisterFile<Chipset> {
    regfile::RegisterFile::new(
        REGISTERS,
        REG_SPACE,
        |spec| spec.chipsets.contains(chip),
        &CONSTANT_FILES,
    )
}
