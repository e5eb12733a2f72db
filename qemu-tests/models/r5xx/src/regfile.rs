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

use baregpu_hal::register::RegisterSpec;
use baregpu_regs::r5xx::{Chipset, REGISTERS};
use std::sync::OnceLock;

/// Bytes of register space (BAR0).
pub(crate) const REG_SPACE: u32 = 0x1_0000;
const DWORDS: usize = (REG_SPACE / 4) as usize;
const UNMAPPED: u16 = u16::MAX;

/// Dword index -> index into `REGISTERS` (or `UNMAPPED`), built once.
fn index_table() -> &'static [u16] {
    static TABLE: OnceLock<Vec<u16>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table = vec![UNMAPPED; DWORDS];
        for (i, spec) in REGISTERS.iter().enumerate() {
            let Ok(i) = u16::try_from(i) else { break };
            if spec.relative {
                continue;
            }
            for instance in 0..spec.count.max(1) {
                let Some(offset) =
                    instance.checked_mul(spec.stride).and_then(|d| d.checked_add(spec.offset))
                else {
                    break;
                };
                if !offset.is_multiple_of(4) || offset >= REG_SPACE as usize {
                    continue;
                }
                // First entry wins if the database ever lists an alias at the same offset.
                if table[offset / 4] == UNMAPPED {
                    table[offset / 4] = i;
                }
            }
        }
        table
    })
}

/// Bits of `spec` a read returns.
fn read_mask(spec: &RegisterSpec<Chipset>) -> u32 {
    if !spec.readable {
        return 0;
    }
    if spec.fields.is_empty() {
        return u32::MAX;
    }
    spec.fields.iter().filter(|f| f.readable).fold(0, |m, f| m | f.mask())
}

/// Stored register values with database masks.
#[derive(Debug, Clone)]
pub(crate) struct RegisterFile {
    values: Vec<u32>,
}

impl RegisterFile {
    /// Every register at its database reset value.
    pub(crate) fn new() -> Self {
        let table = index_table();
        let values = table
            .iter()
            .map(|&i| if i == UNMAPPED { 0 } else { REGISTERS[usize::from(i)].reset })
            .collect();
        RegisterFile { values }
    }

    fn slot(offset: u32) -> Option<usize> {
        (offset < REG_SPACE && offset.is_multiple_of(4)).then_some((offset / 4) as usize)
    }

    /// The database entry covering byte `offset`.
    pub(crate) fn spec(offset: u32) -> Option<&'static RegisterSpec<Chipset>> {
        let i = *index_table().get(Self::slot(offset)?)?;
        (i != UNMAPPED).then(|| &REGISTERS[usize::from(i)])
    }

    /// The raw stored value (model-internal view, no read mask).
    pub(crate) fn stored(&self, offset: u32) -> u32 {
        Self::slot(offset).map_or(0, |s| self.values[s])
    }

    /// What a bus read returns from the stored value: readable fields only, 0 for write-only
    /// and unmapped registers.
    pub(crate) fn read(&self, offset: u32) -> u32 {
        Self::spec(offset).map_or(0, |spec| self.stored(offset) & read_mask(spec))
    }

    /// A bus write: only `write_mask` bits change; read-only and unmapped offsets ignore it.
    /// Returns the new stored value.
    pub(crate) fn write(&mut self, offset: u32, value: u32) -> u32 {
        let (Some(spec), Some(slot)) = (Self::spec(offset), Self::slot(offset)) else {
            return 0;
        };
        if spec.writable {
            let mask = spec.write_mask;
            self.values[slot] = (self.values[slot] & !mask) | (value & mask);
        }
        self.values[slot]
    }

    /// Store a value the hardware itself produces (status bits), bypassing the write mask.
    pub(crate) fn set(&mut self, offset: u32, value: u32) {
        if let Some(slot) = Self::slot(offset) {
            self.values[slot] = value;
        }
    }
}
