//! A device model's register file built from a generated register database
//! (`baregpu_regs::<family>::REGISTERS`), shared by the models so every one applies the
//! database the same way:
//! - a write changes only the bits of the register's writable fields (`write_mask`); read-only
//!   registers ignore writes;
//! - a read returns only readable fields; write-only registers and fields read 0;
//! - reset values are the database's `reset`;
//! - registers of other chips (`chipsets`, filtered by the model's `present` test) and offsets
//!   no register occupies are holes: they read 0 and keep nothing;
//! - `plain` byte ranges (constant files a packet fills, whose words mean different things to
//!   different consumers) are stored whole whatever the database says about them.
//!
//! Registers with side effects are the model's business, before or after the store.

use baregpu_hal::register::RegisterSpec;

const UNMAPPED: u16 = u16::MAX;

/// Stored register values with database masks.
#[derive(Debug, Clone)]
pub struct RegisterFile<C: 'static> {
    specs: &'static [RegisterSpec<C>],
    /// Dword index -> index into `specs`, or `UNMAPPED`.
    index: Vec<u16>,
    values: Vec<u32>,
    plain: &'static [(u32, u32)],
}

impl<C: 'static> RegisterFile<C> {
    /// A register space of `bytes` holding the absolute registers of `specs` for which
    /// `present` holds (the first entry wins where two share an offset), at their reset values;
    /// `plain`: `[start, end)` byte ranges stored whole.
    pub fn new(
        specs: &'static [RegisterSpec<C>],
        bytes: u32,
        present: impl Fn(&RegisterSpec<C>) -> bool,
        plain: &'static [(u32, u32)],
    ) -> Self {
        let dwords = (bytes / 4) as usize;
        let mut index = vec![UNMAPPED; dwords];
        for (i, spec) in specs.iter().enumerate() {
            let Ok(i) = u16::try_from(i) else { break };
            if spec.relative || !present(spec) {
                continue;
            }
            for n in 0..spec.count.max(1) {
                let Some(offset) =
                    n.checked_mul(spec.stride).and_then(|d| d.checked_add(spec.offset))
                else {
                    break;
                };
                if offset.is_multiple_of(4) && offset / 4 < dwords && index[offset / 4] == UNMAPPED
                {
                    index[offset / 4] = i;
                }
            }
        }
        let values = index
            .iter()
            .map(|&i| if i == UNMAPPED { 0 } else { specs[usize::from(i)].reset })
            .collect();
        RegisterFile { specs, index, values, plain }
    }

    /// Bytes of register space.
    pub fn bytes(&self) -> u32 {
        (self.values.len() * 4) as u32
    }

    fn slot(&self, offset: u32) -> Option<usize> {
        let s = (offset / 4) as usize;
        (offset.is_multiple_of(4) && s < self.values.len()).then_some(s)
    }

    fn is_plain(&self, offset: u32) -> bool {
        self.plain.iter().any(|&(start, end)| (start..end).contains(&offset))
    }

    /// The database entry at byte `offset`.
    pub fn spec(&self, offset: u32) -> Option<&'static RegisterSpec<C>> {
        let i = *self.index.get(self.slot(offset)?)?;
        let specs = self.specs;
        (i != UNMAPPED).then(|| &specs[usize::from(i)])
    }

    /// Whether a write to `offset` stores anything: a writable register or a plain range.
    pub fn accepts(&self, offset: u32) -> bool {
        self.slot(offset).is_some()
            && (self.is_plain(offset) || self.spec(offset).is_some_and(|s| s.writable))
    }

    /// The raw stored value (the model's own view, no read mask).
    pub fn stored(&self, offset: u32) -> u32 {
        self.slot(offset).map_or(0, |s| self.values[s])
    }

    /// What a bus read returns: readable fields only; 0 for holes and write-only registers.
    pub fn read(&self, offset: u32) -> u32 {
        if self.is_plain(offset) {
            return self.stored(offset);
        }
        self.spec(offset).map_or(0, |spec| self.stored(offset) & read_mask(spec))
    }

    /// A bus write: only `write_mask` bits of a register change, a plain word is stored whole;
    /// holes and read-only registers ignore it. Returns the stored value afterwards (0 for a
    /// hole).
    pub fn write(&mut self, offset: u32, value: u32) -> u32 {
        let Some(slot) = self.slot(offset) else { return 0 };
        if self.is_plain(offset) {
            self.values[slot] = value;
        } else {
            let Some(spec) = self.spec(offset) else { return 0 };
            if spec.writable {
                let mask = spec.write_mask;
                self.values[slot] = (self.values[slot] & !mask) | (value & mask);
            }
        }
        self.values[slot]
    }

    /// Store a value the hardware itself produces (status bits), bypassing the write mask.
    pub fn set(&mut self, offset: u32, value: u32) {
        if let Some(slot) = self.slot(offset) {
            self.values[slot] = value;
        }
    }
}

/// Bits of `spec` a read returns.
fn read_mask<C>(spec: &RegisterSpec<C>) -> u32 {
    if !spec.readable {
        return 0;
    }
    if spec.fields.is_empty() {
        return u32::MAX;
    }
    spec.fields.iter().filter(|f| f.readable).fold(0, |m, f| m | f.mask())
}

#[cfg(test)]
mod tests {
    use super::*;
    use baregpu_hal::register::{Chipsets, FieldSpec};

    const BASE: RegisterSpec<u8> = RegisterSpec {
        name: "",
        block: "T",
        offset: 0,
        relative: false,
        count: 1,
        stride: 0,
        readable: true,
        writable: true,
        write_mask: u32::MAX,
        reset: 0,
        chipsets: Chipsets::All,
        source: "test",
        fields: &[],
    };

    static SPECS: [RegisterSpec<u8>; 4] = [
        // Fields 7:0 (rw) and 31 (write-only): writes keep 0x8000_00FF, reads return 0xFF.
        RegisterSpec {
            name: "CNTL",
            offset: 0x10,
            fields: &[FieldSpec::rw("A", 0, 8), FieldSpec::wo("GO", 31, 1)],
            write_mask: 0x8000_00FF,
            reset: 0x5,
            ..BASE
        },
        RegisterSpec { name: "STATUS", offset: 0x14, writable: false, reset: 0x1234, ..BASE },
        RegisterSpec { name: "ARRAY", offset: 0x20, count: 3, stride: 8, ..BASE },
        RegisterSpec { name: "OTHER_CHIP", offset: 0x40, ..BASE },
    ];

    #[test]
    fn the_database_decides_what_sticks_and_what_reads_back() {
        let mut f = RegisterFile::new(&SPECS, 0x100, |s| s.name != "OTHER_CHIP", &[(0x80, 0x90)]);
        assert_eq!(f.bytes(), 0x100);
        assert_eq!(f.read(0x10), 0x5, "reset value");
        assert_eq!(f.write(0x10, u32::MAX), 0x8000_00FF);
        assert_eq!(f.read(0x10), 0xFF, "the write-only field reads 0");
        assert_eq!(f.write(0x14, 7), 0x1234, "read-only");
        assert!(!f.accepts(0x14) && f.accepts(0x10));
        // Array instances 8 bytes apart; between them, a hole.
        f.write(0x30, 9);
        assert_eq!((f.read(0x30), f.read(0x2C), f.spec(0x2C).is_none()), (9, 0, true));
        assert_eq!(f.write(0x2C, 1), 0);
        // Absent on this chip, and beyond the space: holes.
        assert_eq!((f.write(0x40, 1), f.read(0x40), f.accepts(0x40)), (0, 0, false));
        assert_eq!((f.write(0x1000, 1), f.read(0x1000)), (0, 0));
        // Plain words store whole; unaligned offsets are nothing.
        assert!(f.accepts(0x84));
        assert_eq!((f.write(0x84, 0xDEAD_BEEF), f.read(0x84)), (0xDEAD_BEEF, 0xDEAD_BEEF));
        assert_eq!(f.write(0x12, 1), 0);
        f.set(0x14, 0x99);
        assert_eq!(f.read(0x14), 0x99);
    }
}
