//! The vertex pipeline memory (§7): 16 words wide, [`VPM_ROWS`] rows; the QPUs' generic block
//! reads and writes (Tables 32-33) and the VDW/VDR DMA (Tables 34-37), which run over ticks
//! beside the QPUs.

use crate::qpu::QpuFaultKind;

/// VPM bytes: `V3D_IDENT1.VPMSZ` 12 (KiB) of the reference configuration, also the
/// BCM2835's.
pub const VPM_BYTES: usize = 12 * 1024;
/// Rows of 16 words.
pub const VPM_ROWS: usize = VPM_BYTES / 64;
const WORDS: usize = VPM_BYTES / 4;

/// The VPM storage.
#[derive(Debug, Clone)]
pub struct Vpm {
    words: Vec<u32>,
}

impl Default for Vpm {
    fn default() -> Self {
        Vpm { words: vec![0; WORDS] }
    }
}

/// A generic block read or write setup (§7 Tables 32-33, ID 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockAccess {
    /// ADDR: the next vector's address (with the half-word/byte select in its low bits).
    pub addr: u32,
    /// STRIDE (0 => 64).
    pub stride: u32,
    /// HORIZ.
    pub horizontal: bool,
    /// LANED (ignored for 32-bit).
    pub laned: bool,
    /// SIZE: 0, 1, 2 = 8, 16, 32 bits.
    pub size: u32,
}

impl BlockAccess {
    /// Decode bits 17:0 of a setup word; SIZE 3 is reserved.
    pub fn decode(v: u32) -> Result<BlockAccess, QpuFaultKind> {
        let size = (v >> 8) & 3;
        if size == 3 {
            return Err(QpuFaultKind::ReservedEncoding { field: "VPM setup SIZE", value: 3 });
        }
        let stride = (v >> 12) & 0x3F;
        Ok(BlockAccess {
            addr: v & 0xFF,
            stride: if stride == 0 { 64 } else { stride },
            horizontal: v >> 11 & 1 != 0,
            laned: v >> 10 & 1 != 0,
            size,
        })
    }

    /// Where lane `lane` of the current vector lives: (word index, bit shift, bit width).
    fn lane(&self, lane: usize) -> (usize, u32, u32) {
        let sub_bits = 2 - self.size; // 8-bit: 2 select bits, 16-bit: 1, 32-bit: 0
        let sel = self.addr & ((1 << sub_bits) - 1);
        let a = (self.addr >> sub_bits) & 0x3F;
        let (y, x) = if self.horizontal { (a, 0) } else { (a & 0x30, a & 0xF) };
        let lane = lane as u32;
        // (offset along the vector, bit shift, width) per size and split mode.
        let (along, shift, bits) = match (self.size, self.laned) {
            (2, _) => (lane, 0, 32),
            (1, true) => (lane, 16 * sel, 16),
            (1, false) => (sel * 8 + lane / 2, 16 * (lane % 2), 16),
            (_, true) => (lane, 8 * sel, 8),
            (_, false) => (sel * 4 + lane / 4, 8 * (lane % 4), 8),
        };
        let (row, col) = if self.horizontal { (y, along) } else { (y + along, x) };
        ((row as usize % VPM_ROWS) * 16 + col as usize % 16, shift, bits)
    }

    fn advance(&mut self) {
        let mask = match self.size {
            0 => 0xFF,
            1 => 0x7F,
            _ => 0x3F,
        };
        self.addr = (self.addr + self.stride) & mask;
    }

    /// The row lane `lane` touches (for the user window check).
    fn row(&self, lane: usize) -> usize {
        self.lane(lane).0 / 16
    }
}

impl Vpm {
    /// Write one vector at `access` (rows at or beyond `window_rows` are masked, §7: "writes
    /// to addresses outside of the window of allocated VPM space will be masked") and advance
    /// it. Returns the lanes masked.
    pub fn write_vector(
        &mut self,
        access: &mut BlockAccess,
        values: &[u32; 16],
        window_rows: usize,
    ) -> u32 {
        let mut masked = 0;
        for (i, v) in values.iter().enumerate() {
            if access.row(i) >= window_rows {
                masked += 1;
                continue;
            }
            let (w, shift, bits) = access.lane(i);
            let m = if bits == 32 { u32::MAX } else { ((1 << bits) - 1) << shift };
            self.words[w] = (self.words[w] & !m) | ((v << shift) & m);
        }
        access.advance();
        masked
    }

    /// Read one vector at `access` (zero-extended sub-words; §7: data is returned even outside
    /// the window) and advance it.
    pub fn read_vector(&self, access: &mut BlockAccess) -> [u32; 16] {
        let out = core::array::from_fn(|i| {
            let (w, shift, bits) = access.lane(i);
            let v = self.words[w] >> shift;
            if bits == 32 { v } else { v & ((1 << bits) - 1) }
        });
        access.advance();
        out
    }

    /// The word at `index` (row * 16 + column), for DMA and tests.
    pub fn word(&self, index: usize) -> u32 {
        self.words[index % WORDS]
    }

    /// Set the word at `index`.
    pub fn set_word(&mut self, index: usize, value: u32) {
        self.words[index % WORDS] = value;
    }
}

/// A VPM DMA in flight: a list of (VPM word index, bus address) moved one word at a time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DmaJob {
    /// Store (VDW: VPM to memory) or load (VDR: memory to VPM).
    pub store: bool,
    /// Words left, in order.
    pub words: std::collections::VecDeque<(usize, u32)>,
}

/// VDW basic setup (Table 34, ID 2) and stride setup (Table 35, ID 3) as written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VdwSetup {
    /// The last basic setup word.
    pub basic: Option<u32>,
    /// The last stride setup word.
    pub stride: u32,
}

/// VDR basic setup (Table 36) and extended stride (Table 37) as written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VdrSetup {
    /// The last basic setup word.
    pub basic: Option<u32>,
    /// The last extended stride setup word.
    pub extended: u32,
}

fn field(v: u32, lsb: u32, bits: u32) -> u32 {
    (v >> lsb) & ((1 << bits) - 1)
}

fn zero_is(v: u32, n: u32) -> u32 {
    if v == 0 { n } else { v }
}

fn check_address(address: u32) -> Result<(), QpuFaultKind> {
    if address & 3 != 0 {
        return Err(QpuFaultKind::Restriction("VPM DMA address not 32-bit aligned"));
    }
    Ok(())
}

impl VdwSetup {
    /// The store a write of `address` to VPM_ST_ADDR starts (§7 Tables 34-35).
    pub fn job(&self, address: u32) -> Result<DmaJob, QpuFaultKind> {
        let Some(b) = self.basic else {
            return Err(QpuFaultKind::Restriction("VDW store without a VDW basic setup"));
        };
        check_address(address)?;
        if field(b, 0, 3) != 0 {
            return Err(QpuFaultKind::Unsupported("VDW 8- and 16-bit widths (MODEW != 0)"));
        }
        if field(b, 15, 1) != 0 {
            return Err(QpuFaultKind::ReservedEncoding {
                field: "VDW LANED (write as 0)",
                value: 1,
            });
        }
        let units = zero_is(field(b, 23, 7), 128);
        let depth = zero_is(field(b, 16, 7), 128);
        let horizontal = field(b, 14, 1) != 0;
        let base = field(b, 3, 11) as usize;
        let (y, x) = (base >> 4, base & 0xF);
        let block = field(self.stride, 16, 1) != 0;
        let gap = field(self.stride, 0, 13);
        let mut words = std::collections::VecDeque::new();
        for r in 0..units {
            let row_address = address.wrapping_add(r * (depth * 4 + gap));
            for j in 0..depth {
                let index = if block {
                    let k = (r * depth + j) as usize;
                    if horizontal { (y * 16 + x) + k } else { (y + k % 16) * 16 + x + k / 16 }
                } else if horizontal {
                    (y + r as usize) * 16 + x + j as usize
                } else {
                    (y + j as usize) * 16 + x + r as usize
                };
                words.push_back((index, row_address.wrapping_add(4 * j)));
            }
        }
        Ok(DmaJob { store: true, words })
    }
}

impl VdrSetup {
    /// The load a write of `address` to VPM_LD_ADDR starts (§7 Tables 36-37).
    pub fn job(&self, address: u32) -> Result<DmaJob, QpuFaultKind> {
        let Some(b) = self.basic else {
            return Err(QpuFaultKind::Restriction("VDR load without a VDR basic setup"));
        };
        check_address(address)?;
        if field(b, 28, 3) != 0 {
            return Err(QpuFaultKind::Unsupported("VDR 8- and 16-bit widths (MODEW != 0)"));
        }
        if field(b, 11, 1) != 0 {
            return Err(QpuFaultKind::Unsupported("VDR vertical mode"));
        }
        let mpitch = field(b, 24, 4);
        let pitch = if mpitch == 0 { field(self.extended, 0, 13) } else { 8 << mpitch };
        let rowlen = zero_is(field(b, 20, 4), 16);
        let nrows = zero_is(field(b, 16, 4), 16);
        let vpitch = zero_is(field(b, 12, 4), 16) as usize;
        let xy = field(b, 0, 11) as usize;
        let (y, x) = (xy >> 4 & 0x3F, xy & 0xF);
        let mut words = std::collections::VecDeque::new();
        for r in 0..nrows {
            let row = (y + r as usize * vpitch) & 0x3F;
            for j in 0..rowlen {
                words.push_back((
                    row * 16 + x + j as usize,
                    address.wrapping_add(r * pitch + 4 * j),
                ));
            }
        }
        Ok(DmaJob { store: false, words })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn horizontal_and_vertical_32_bit_vectors_follow_table_32() {
        let mut vpm = Vpm::default();
        let v: [u32; 16] = core::array::from_fn(|i| i as u32 + 100);
        // Horizontal 32-bit at Y = 3: row 3, columns 0..16.
        let mut h = BlockAccess::decode(0xA00 | 1 << 12 | 3).unwrap();
        vpm.write_vector(&mut h, &v, 64);
        assert_eq!((vpm.word(3 * 16), vpm.word(3 * 16 + 15)), (100, 115));
        assert_eq!(h.addr, 4, "stride 1 moves to the next row");
        // Vertical 32-bit at {Y[5:4] = 1, X = 5}: column 5, rows 16..32.
        let mut vt = BlockAccess::decode(0x200 | 1 << 12 | 0x15).unwrap();
        vpm.write_vector(&mut vt, &v, 64);
        assert_eq!((vpm.word(16 * 16 + 5), vpm.word(31 * 16 + 5)), (100, 115));
        // 8-bit laned horizontal, byte 2 of row 3: reads back the low bytes of the values.
        let mut b = BlockAccess::decode(0xC00 | 3 << 2 | 2).unwrap();
        let read = vpm.read_vector(&mut b);
        assert_eq!(read[0], 0, "byte 2 of 100");
        // Outside a 4-row window, writes are masked.
        let mut far = BlockAccess::decode(0xA00 | 10).unwrap();
        assert_eq!(vpm.write_vector(&mut far, &v, 4), 16);
        assert_eq!(vpm.word(10 * 16), 0);
    }
}
