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

use baregpu_hal::register::RegisterSpec;
use baregpu_regs::evergreen::{Chipset, REGISTERS};

/// Bytes of register space (BAR0): up to the end of the SET_CTL_CONST range (0x3FF0C).
pub const REG_SPACE: u32 = 0x4_0000;
const DWORDS: usize = (REG_SPACE / 4) as usize;
const UNMAPPED: u16 = u16::MAX;

/// The constant files: [start, end) byte ranges (Linux radeon evergreend.h
/// `PACKET3_SET_{RESOURCE,LOOP_CONST,BOOL_CONST,SAMPLER,CTL_CONST}_START/_END`).
pub const CONSTANT_FILES: [(u32, u32); 5] = [
    (0x3_0000, 0x3_8000),
    (0x3_A200, 0x3_A500),
    (0x3_A500, 0x3_A518),
    (0x3_C000, 0x3_C600),
    (0x3_CFF0, 0x3_FF0C),
];

/// Stored register values with database masks.
#[derive(Debug, Clone)]
pub(crate) struct RegisterFile {
    values: Vec<u32>,
    index: Vec<u16>,
}

fn read_mask(spec: &RegisterSpec<Chipset>) -> u32 {
    if !spec.readable {
        return 0;
    }
    if spec.fields.is_empty() {
        return u32::MAX;
    }
    spec.fields.iter().filter(|f| f.readable).fold(0, |m, f| m | f.mask())
}

impl RegisterFile {
    /// Every register of `chip` at its reset value.
    pub(crate) fn new(chip: Chipset) -> Self {
        let mut index = vec![UNMAPPED; DWORDS];
        for (i, spec) in REGISTERS.iter().enumerate() {
            let Ok(i) = u16::try_from(i) else { break };
            if spec.relative || !spec.chipsets.contains(chip) {
                continue;
            }
            for n in 0..spec.count.max(1) {
                let offset = spec.offset + n * spec.stride;
                if offset.is_multiple_of(4)
                    && offset < REG_SPACE as usize
                    && index[offset / 4] == UNMAPPED
                {
                    index[offset / 4] = i;
                }
            }
        }
        let values = index
            .iter()
            .map(|&i| if i == UNMAPPED { 0 } else { REGISTERS[usize::from(i)].reset })
            .collect();
        Self { values, index }
    }

    fn slot(offset: u32) -> Option<usize> {
        (offset < REG_SPACE && offset.is_multiple_of(4)).then_some((offset / 4) as usize)
    }

    /// The database entry at `offset`.
    pub(crate) fn spec(&self, offset: u32) -> Option<&'static RegisterSpec<Chipset>> {
        let i = *self.index.get(Self::slot(offset)?)?;
        (i != UNMAPPED).then(|| &REGISTERS[usize::from(i)])
    }

    fn constant_file(offset: u32) -> bool {
        CONSTANT_FILES.iter().any(|&(s, e)| (s..e).contains(&offset))
    }

    /// The raw stored value (no read mask).
    pub(crate) fn stored(&self, offset: u32) -> u32 {
        Self::slot(offset).map_or(0, |s| self.values[s])
    }

    /// What a bus read returns.
    pub(crate) fn read(&self, offset: u32) -> u32 {
        if Self::constant_file(offset) {
            return self.stored(offset);
        }
        self.spec(offset).map_or(0, |spec| self.stored(offset) & read_mask(spec))
    }

    /// A write: the writable bits of a register, the whole word of a constant file. Returns
    /// `false` if nothing was stored (a hole or a read-only register).
    pub(crate) fn write(&mut self, offset: u32, value: u32) -> bool {
        let Some(slot) = Self::slot(offset) else { return false };
        // A constant-file word is a texture or a buffer resource word (or a sampler, loop,
        // bool or control constant) depending on what the driver puts there: the database's
        // buffer-resource fields do not mask it.
        if Self::constant_file(offset) {
            self.values[slot] = value;
            return true;
        }
        match self.spec(offset) {
            Some(spec) if spec.writable => {
                let mask = spec.write_mask;
                self.values[slot] = (self.values[slot] & !mask) | (value & mask);
                true
            }
            Some(_) | None => false,
        }
    }

    /// Store a value the hardware produces, bypassing the write mask.
    pub(crate) fn set(&mut self, offset: u32, value: u32) {
        if let Some(slot) = Self::slot(offset) {
            self.values[slot] = value;
        }
    }
}
