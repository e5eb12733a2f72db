//! The Memory Controller address translation of §2.1.4 (Table 1: linear, Table 2: tiled).
//!
//! Host code uses these functions to place inputs, constants and instructions where the MC
//! will look for them, and to find outputs after a program ran. The tables are implemented
//! literally, bit for bit:
//!
//! * `x` and `y` are taken as `x[11:0]`, `y[11:0]` (the MC's indices are 12 bits; higher bits
//!   are ignored, like the hardware's).
//! * The pitch enters as `pitch[13:k]`, i.e. the pitch in elements divided by the number of
//!   elements in a 32-byte row unit (linear) or tile width (tiled), rounded down. A linear
//!   mapping is therefore injective only when `pitch × bpe` is a multiple of 32 bytes, and a
//!   tiled one when the pitch is a multiple of the tile width ([`tile_size`]); other pitches
//!   make rows alias, exactly as the table says.
//! * Arithmetic on bits 31:5 / 31:11 wraps modulo 2³² (a 32-bit MC address, §2.1.4).
//!
//! Bytes per element come from the data format ([`DataFormat::bytes_per_element`]); Table 1
//! and 2 also have a 1-byte row, which no documented data format uses but [`linear_address`]
//! and [`tiled_address`] accept through [`ElementSize`].

use crate::command::{DataFormat, Format, GpuAddress};

/// Bytes per element: the rows of Tables 1 and 2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum ElementSize {
    /// 1 byte.
    B1,
    /// 2 bytes (`UINT16_1`).
    B2,
    /// 4 bytes (`UINT8_4`, `FLOAT32_1`).
    B4,
    /// 8 bytes (`FLOAT32_2`).
    B8,
    /// 16 bytes (`FLOAT32_4`).
    B16,
}

impl ElementSize {
    /// Every size, smallest first.
    pub const ALL: [ElementSize; 5] = [Self::B1, Self::B2, Self::B4, Self::B8, Self::B16];

    /// log2 of the size in bytes.
    pub const fn log2(self) -> u32 {
        match self {
            Self::B1 => 0,
            Self::B2 => 1,
            Self::B4 => 2,
            Self::B8 => 3,
            Self::B16 => 4,
        }
    }

    /// The size in bytes.
    pub const fn bytes(self) -> u32 {
        1 << self.log2()
    }

    /// The element size of a data format.
    pub const fn of(format: DataFormat) -> Self {
        match format.bytes_per_element() {
            2 => Self::B2,
            4 => Self::B4,
            8 => Self::B8,
            _ => Self::B16,
        }
    }
}

/// Bit `n` of `v`.
const fn bit(v: u32, n: u32) -> u32 {
    (v >> n) & 1
}

/// Table 1 (linear): `bits[31:5] = y[11:0]*pitch[13:5-s] + x[11:5-s] + offset[31:5]`,
/// `bits[4:0] = x[4-s:0]` followed by `s` zero bits, with `s = log2(bpe)`.
pub const fn linear_address(size: ElementSize, pitch: u32, offset: u32, x: u32, y: u32) -> u32 {
    let s = size.log2();
    let k = 5 - s; // x/pitch bits that stay inside one 32-byte unit
    let x = x & 0xFFF;
    let y = y & 0xFFF;
    let pitch = pitch & 0x3FFF;
    let high = y.wrapping_mul(pitch >> k).wrapping_add(x >> k).wrapping_add(offset >> 5);
    (high << 5) | ((x & ((1 << k) - 1)) << s)
}

/// Tile dimensions `(width, height)` in elements for Table 2: each tile is 2048 bytes
/// (bits 10:0), tiles are numbered `y_tile * (pitch / width) + x_tile` (bits 31:11).
pub const fn tile_size(size: ElementSize) -> (u32, u32) {
    match size {
        ElementSize::B1 => (64, 32),
        ElementSize::B2 => (32, 32),
        ElementSize::B4 => (32, 16),
        ElementSize::B8 => (16, 16),
        ElementSize::B16 => (16, 8),
    }
}

/// Table 2 (tiled). Per row (`^` is XOR, `,` concatenates from bit 10 down to bit 0):
///
/// | bpe | bits 31:11 | 10:9 | 8:7 | 6:5 | 4:0 |
/// |---|---|---|---|---|---|
/// | 1 | `y[11:5]*pitch[13:6]+x[11:6]+offset[31:11]` | `y4^x6, x5^y5` | `y3^x5, x4^y4` | `y2, x3` | `y[1:0], x[2:0]` |
/// | 2 | `y[11:5]*pitch[13:5]+x[11:5]+offset[31:11]` | `y4^x5, x4^y5` | `y3^x4, x3^y4` | `y2, x2` | `y[1:0], x[1:0], 0` |
/// | 4 | `y[11:4]*pitch[13:5]+x[11:5]+offset[31:11]` | `y3^x5, x4^y4` | `y2^x4, x3^y3` | `y1, x2` | `y0, x[1:0], 00` |
/// | 8 | `y[11:4]*pitch[13:4]+x[11:4]+offset[31:11]` | `y3^x4, x3^y4` | `y2^x3, x2^y3` | `y1, x1` | `y0, x0, 000` |
/// | 16 | `y[11:3]*pitch[13:4]+x[11:4]+offset[31:11]` | `y2^x4, x3^y3` | `y1^x3, x2^y2` | `y0, x1` | `x0, 0000` |
pub const fn tiled_address(size: ElementSize, pitch: u32, offset: u32, x: u32, y: u32) -> u32 {
    let x = x & 0xFFF;
    let y = y & 0xFFF;
    let pitch = pitch & 0x3FFF;
    // (y shift, pitch/x shift) of bits 31:11.
    let (ys, xs) = match size {
        ElementSize::B1 => (5, 6),
        ElementSize::B2 => (5, 5),
        ElementSize::B4 => (4, 5),
        ElementSize::B8 => (4, 4),
        ElementSize::B16 => (3, 4),
    };
    let high = (y >> ys).wrapping_mul(pitch >> xs).wrapping_add(x >> xs).wrapping_add(offset >> 11);
    let (b10, b9, b8, b7, b6, b5, low) = match size {
        ElementSize::B1 => (
            bit(y, 4) ^ bit(x, 6),
            bit(x, 5) ^ bit(y, 5),
            bit(y, 3) ^ bit(x, 5),
            bit(x, 4) ^ bit(y, 4),
            bit(y, 2),
            bit(x, 3),
            ((y & 3) << 3) | (x & 7),
        ),
        ElementSize::B2 => (
            bit(y, 4) ^ bit(x, 5),
            bit(x, 4) ^ bit(y, 5),
            bit(y, 3) ^ bit(x, 4),
            bit(x, 3) ^ bit(y, 4),
            bit(y, 2),
            bit(x, 2),
            ((y & 3) << 3) | ((x & 3) << 1),
        ),
        ElementSize::B4 => (
            bit(y, 3) ^ bit(x, 5),
            bit(x, 4) ^ bit(y, 4),
            bit(y, 2) ^ bit(x, 4),
            bit(x, 3) ^ bit(y, 3),
            bit(y, 1),
            bit(x, 2),
            (bit(y, 0) << 4) | ((x & 3) << 2),
        ),
        ElementSize::B8 => (
            bit(y, 3) ^ bit(x, 4),
            bit(x, 3) ^ bit(y, 4),
            bit(y, 2) ^ bit(x, 3),
            bit(x, 2) ^ bit(y, 3),
            bit(y, 1),
            bit(x, 1),
            (bit(y, 0) << 4) | (bit(x, 0) << 3),
        ),
        ElementSize::B16 => (
            bit(y, 2) ^ bit(x, 4),
            bit(x, 3) ^ bit(y, 3),
            bit(y, 1) ^ bit(x, 3),
            bit(x, 2) ^ bit(y, 2),
            bit(y, 0),
            bit(x, 1),
            bit(x, 0) << 4,
        ),
    };
    (high << 11) | (b10 << 10) | (b9 << 9) | (b8 << 8) | (b7 << 7) | (b6 << 6) | (b5 << 5) | low
}

/// The MC address of element `(x, y)` of a buffer with format `fmt` at base `offset`
/// (§2.1.4): Table 2 if the tiling is tiled (with or without superfine), else Table 1. The
/// element occupies `fmt.data_format().bytes_per_element()` bytes from there.
///
/// With superfine tiling this is the address of the `(x, y)` element itself; see
/// [`superfine_addresses`] for the four elements an input read fetches.
pub const fn address(fmt: Format, offset: GpuAddress, x: u32, y: u32) -> u32 {
    let size = ElementSize::of(fmt.data_format());
    if fmt.tiling().is_tiled() {
        tiled_address(size, fmt.pitch(), offset.get(), x, y)
    } else {
        linear_address(size, fmt.pitch(), offset.get(), x, y)
    }
}

/// The addresses an input read at `(x, y)` fetches with 2x2 superfine tiling (§2.1.4), in
/// channel order c0..c3: `(x+1, y)`, `(x, y+1)`, `(x+1, y+1)`, `(x, y)`. Indices wrap at 12
/// bits like every MC index.
pub const fn superfine_addresses(fmt: Format, offset: GpuAddress, x: u32, y: u32) -> [u32; 4] {
    let x1 = x.wrapping_add(1);
    let y1 = y.wrapping_add(1);
    [
        address(fmt, offset, x1, y),
        address(fmt, offset, x, y1),
        address(fmt, offset, x1, y1),
        address(fmt, offset, x, y),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::Tiling;

    #[test]
    fn linear_examples() {
        // bpe 4, pitch 64, offset 0x1000, (x, y) = (10, 3):
        // bits[31:5] = 3*pitch[13:3] + x[11:3] + offset[31:5] = 3*8 + 1 + 0x80 = 0x99
        // bits[4:0]  = x[2:0],00 = 0b010_00 = 8  → 0x99<<5 | 8 = 0x1328
        // (= 0x1000 + (3*64 + 10)*4 = 0x1000 + 808 = 0x1328)
        assert_eq!(linear_address(ElementSize::B4, 64, 0x1000, 10, 3), 0x1328);
        // bpe 1, pitch 96, (x, y) = (37, 2): 2*3 + 1 = 7 → 7<<5 | 5 = 229 = 2*96 + 37.
        assert_eq!(linear_address(ElementSize::B1, 96, 0, 37, 2), 229);
        // bpe 16, pitch 4, (x, y) = (3, 5): 5*pitch[13:1] + x[11:1] = 5*2 + 1 = 11;
        // bits[4:0] = x[0],0000 = 16 → 11*32 + 16 = 368 = (5*4 + 3)*16.
        assert_eq!(linear_address(ElementSize::B16, 4, 0, 3, 5), 368);
        // bpe 2, pitch 16, (x, y) = (15, 1): 1*pitch[13:4] + x[11:4] = 1 + 0 = 1;
        // bits[4:0] = x[3:0],0 = 30 → 62 = (16 + 15)*2.
        assert_eq!(linear_address(ElementSize::B2, 16, 0, 15, 1), 62);
        // bpe 8, pitch 8, (x, y) = (6, 7): 7*2 + 1 = 15; x[1:0],000 = 2<<3 = 16 → 496.
        assert_eq!(linear_address(ElementSize::B8, 8, 0, 6, 7), 496);
        // Pitch below one 32-byte unit truncates: bpe 4, pitch 4 → pitch[13:3] = 0, rows alias.
        assert_eq!(
            linear_address(ElementSize::B4, 4, 0, 1, 1),
            linear_address(ElementSize::B4, 4, 0, 1, 0)
        );
        // x, y are 12-bit: x = 4096 aliases x = 0.
        assert_eq!(
            linear_address(ElementSize::B4, 64, 0, 4096, 0),
            linear_address(ElementSize::B4, 64, 0, 0, 0)
        );
    }

    #[test]
    fn tiled_examples() {
        // bpe 4 (tile 32x16), pitch 64 (2 tiles per row), offset 0x800, (x, y) = (37, 19):
        // x = 0b100101, y = 0b10011.
        // bits[31:11] = y[11:4]*pitch[13:5] + x[11:5] + offset[31:11] = 1*2 + 1 + 1 = 4
        // b10 = y3^x5 = 0^1 = 1; b9 = x4^y4 = 0^1 = 1; b8 = y2^x4 = 0^0 = 0;
        // b7 = x3^y3 = 0^0 = 0; b6 = y1 = 1; b5 = x2 = 1; bits[4:0] = y0,x[1:0],00 = 1,01,00
        // → 4<<11 | 0b11_00_11_10100 = 0x2000 | 0x674 = 0x2674.
        assert_eq!(tiled_address(ElementSize::B4, 64, 0x800, 37, 19), 0x2674);
        // bpe 1 (tile 64x32), pitch 128, (x, y) = (70, 33): x = 0b1000110, y = 0b100001.
        // high = y[11:5]*pitch[13:6] + x[11:6] = 1*2 + 1 = 3
        // b10 = y4^x6 = 0^1 = 1; b9 = x5^y5 = 0^1 = 1; b8 = y3^x5 = 0; b7 = x4^y4 = 0;
        // b6 = y2 = 0; b5 = x3 = 0; bits[4:0] = y[1:0],x[2:0] = 01,110 = 0b01110
        // → 3<<11 | 0b110_0000_1110 = 0x1800 | 0x60E = 0x1E0E.
        assert_eq!(tiled_address(ElementSize::B1, 128, 0, 70, 33), 0x1E0E);
        // bpe 16 (tile 16x8), pitch 16, (x, y) = (5, 9): x = 0b101, y = 0b1001.
        // high = y[11:3]*pitch[13:4] + x[11:4] = 1*1 + 0 = 1
        // b10 = y2^x4 = 0; b9 = x3^y3 = 0^1 = 1; b8 = y1^x3 = 0; b7 = x2^y2 = 1;
        // b6 = y0 = 1; b5 = x1 = 0; bits[4:0] = x0,0000 = 0b10000
        // → 0x800 | 0b010_1100_0000 | 0x10 = 0x800 | 0x2C0 | 0x10 = 0xAD0.
        assert_eq!(tiled_address(ElementSize::B16, 16, 0, 5, 9), 0xAD0);
        // bpe 2 (tile 32x32), pitch 32, (x, y) = (3, 2): no swizzle bits set except
        // b6 = y2 = 0, b5 = x2 = 0; bits[4:0] = y[1:0],x[1:0],0 = 10,11,0 = 0b10110 = 22.
        assert_eq!(tiled_address(ElementSize::B2, 32, 0, 3, 2), 22);
        // bpe 8 (tile 16x16), pitch 16, (x, y) = (15, 15): x = y = 0b1111.
        // high = 0; b10 = y3^x4 = 1; b9 = x3^y4 = 1; b8 = y2^x3 = 0; b7 = x2^y3 = 0;
        // b6 = y1 = 1; b5 = x1 = 1; bits[4:0] = y0,x0,000 = 0b11000
        // → 0b110_0111_1000 = 0x678.
        assert_eq!(tiled_address(ElementSize::B8, 16, 0, 15, 15), 0x678);
    }

    #[test]
    fn address_dispatches_on_format() {
        let off = GpuAddress::new(0x4000).unwrap();
        let lin = Format::new(64, Tiling::Linear, DataFormat::Float32x1).unwrap();
        let til = Format::new(64, Tiling::Tiled, DataFormat::Float32x1).unwrap();
        assert_eq!(address(lin, off, 10, 3), linear_address(ElementSize::B4, 64, 0x4000, 10, 3));
        assert_eq!(address(til, off, 37, 19), tiled_address(ElementSize::B4, 64, 0x4000, 37, 19));
        let sf = Format::new(64, Tiling::LinearInp2x2, DataFormat::Float32x1).unwrap();
        // c0 = (x+1, y), c1 = (x, y+1), c2 = (x+1, y+1), c3 = (x, y).
        assert_eq!(
            superfine_addresses(sf, off, 0, 0),
            [0x4000 + 4, 0x4000 + 256, 0x4000 + 260, 0x4000]
        );
    }
}
