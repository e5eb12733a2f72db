//! Memory Controller Unit (CTM guide §2.1.4): surface formats (§2.2.2 base address and format
//! parameters), the address translation of Tables 1 (linear) and 2 (tiled), the 2x2 superfine
//! option for single-channel inputs, and element conversion to/from the four-channel registers.

use crate::memory::{MemFault, Memory};

/// Tiling format, format parameter bits 17:16 (§2.2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tiling {
    /// 0 - LINEAR (Table 1).
    Linear,
    /// 1 - TILED (Table 2).
    Tiled,
    /// 2 - LINEAR_INP_2X2: linear with 2x2 superfine tiling on single-channel input reads.
    LinearInp2x2,
    /// 3 - TILED_INP_2X2: tiled with 2x2 superfine tiling on single-channel input reads.
    TiledInp2x2,
}

impl Tiling {
    /// Whether Table 2 (tiled) applies.
    pub fn is_tiled(self) -> bool {
        matches!(self, Tiling::Tiled | Tiling::TiledInp2x2)
    }
    /// Whether the 2x2 superfine option is requested.
    pub fn is_superfine(self) -> bool {
        matches!(self, Tiling::LinearInp2x2 | Tiling::TiledInp2x2)
    }
}

/// Data format, format parameter bits 26:24 (§2.2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataFormat {
    /// 0 - UINT16_1 (2 bytes per element).
    Uint16x1,
    /// 1 - UINT8_4 (4 bytes).
    Uint8x4,
    /// 2 - FLOAT32_1 (4 bytes).
    Float32x1,
    /// 3 - FLOAT32_2 (8 bytes).
    Float32x2,
    /// 4 - FLOAT32_4 (16 bytes).
    Float32x4,
}

impl DataFormat {
    /// Decode bits 26:24; values 5-7 are reserved (§2.2.2 "> 5 - Reserved", 5 being unlisted).
    pub fn from_field(v: u32) -> Option<Self> {
        Some(match v {
            0 => Self::Uint16x1,
            1 => Self::Uint8x4,
            2 => Self::Float32x1,
            3 => Self::Float32x2,
            4 => Self::Float32x4,
            _ => return None,
        })
    }
    /// Bytes per element (bpe, §2.1.4).
    pub fn bpe(self) -> u32 {
        match self {
            Self::Uint16x1 => 2,
            Self::Uint8x4 | Self::Float32x1 => 4,
            Self::Float32x2 => 8,
            Self::Float32x4 => 16,
        }
    }
    /// Channels stored per element.
    pub fn channels(self) -> usize {
        match self {
            Self::Uint16x1 | Self::Float32x1 => 1,
            Self::Float32x2 => 2,
            Self::Uint8x4 | Self::Float32x4 => 4,
        }
    }
}

/// A surface as set by set_inst_fmt / set_inp_fmt / set_out_fmt / set_cond_out_fmt /
/// set_const*_fmt (§2.2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SurfaceFormat {
    /// Base address: bits 31:11 of the parameter; "the lower eleven bits are ignored".
    pub base: u32,
    /// Pitch in elements: format bits 12:2 ("in multiples of 4", so bits 1:0 are zero).
    pub pitch: u32,
    /// Tiling, bits 17:16.
    pub tiling: Tiling,
    /// Data format, bits 26:24.
    pub format: DataFormat,
    /// Height (bits 12:0 of the height parameter; 0 for surfaces without one).
    pub height: u32,
}

/// Why a format parameter was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReservedFormat(pub u32);

impl SurfaceFormat {
    /// Decode a base address parameter, a format parameter and a height parameter (§2.2.2).
    pub fn decode(base: u32, format: u32, height: u32) -> Result<Self, ReservedFormat> {
        let data = DataFormat::from_field((format >> 24) & 7).ok_or(ReservedFormat(format))?;
        let tiling = match (format >> 16) & 3 {
            0 => Tiling::Linear,
            1 => Tiling::Tiled,
            2 => Tiling::LinearInp2x2,
            _ => Tiling::TiledInp2x2,
        };
        Ok(Self {
            base: base & !0x7ff,
            pitch: format & 0x1ffc,
            tiling,
            format: data,
            height: height & 0x1fff,
        })
    }

    /// MC address of element (x, y): Table 1 (linear) or Table 2 (tiled) for this surface's bpe.
    pub fn address(&self, x: u32, y: u32) -> u32 {
        translate(self.base, self.pitch, self.tiling.is_tiled(), self.format.bpe(), x, y)
    }
}

fn bit(v: u32, n: u32) -> u32 {
    (v >> n) & 1
}

/// §2.1.4 address translation. `bpe` is 1, 2, 4, 8 or 16 (other values are treated as 16);
/// x and y are used as 12-bit indices (x[11:0], y[11:0]) and pitch as pitch[13:0]. The
/// high part is computed modulo its field width, like the hardware adder.
pub fn translate(base: u32, pitch: u32, tiled: bool, bpe: u32, x: u32, y: u32) -> u32 {
    let (x, y, p) = (x & 0xfff, y & 0xfff, pitch & 0x3fff);
    if !tiled {
        // Table 1: Bits[31:5] = y*pitch[13:k] + x[11:k] + offset[31:5]; Bits[4:0] = x[k-1:0]*bpe.
        let k = match bpe {
            1 => 5,
            2 => 4,
            4 => 3,
            8 => 2,
            _ => 1,
        };
        let hi = y.wrapping_mul(p >> k).wrapping_add(x >> k).wrapping_add(base >> 5);
        let lo = (x & ((1 << k) - 1)) * (32 >> k);
        return (hi << 5) | lo;
    }
    // Table 2: Bits[31:11] = y[11:ys]*pitch[13:ps] + x[11:xs] + offset[31:11], then bits 10:0.
    let (ys, ps, xs) = match bpe {
        1 => (5, 6, 6),
        2 => (5, 5, 5),
        4 => (4, 5, 5),
        8 => (4, 4, 4),
        _ => (3, 4, 4),
    };
    let hi = (y >> ys).wrapping_mul(p >> ps).wrapping_add(x >> xs).wrapping_add(base >> 11);
    let b = |v, n| bit(v, n);
    let lo = match bpe {
        // [10:9] y4^x6, x5^y5 | [8:7] y3^x5, x4^y4 | [6:5] y2, x3 | [4:0] y[1:0], x[2:0]
        1 => {
            (b(y, 4) ^ b(x, 6)) << 10
                | (b(x, 5) ^ b(y, 5)) << 9
                | (b(y, 3) ^ b(x, 5)) << 8
                | (b(x, 4) ^ b(y, 4)) << 7
                | b(y, 2) << 6
                | b(x, 3) << 5
                | (y & 3) << 3
                | (x & 7)
        }
        // [10:9] y4^x5, x4^y5 | [8:7] y3^x4, x3^y4 | [6:5] y2, x2 | [4:0] y[1:0], x[1:0], 0
        2 => {
            (b(y, 4) ^ b(x, 5)) << 10
                | (b(x, 4) ^ b(y, 5)) << 9
                | (b(y, 3) ^ b(x, 4)) << 8
                | (b(x, 3) ^ b(y, 4)) << 7
                | b(y, 2) << 6
                | b(x, 2) << 5
                | (y & 3) << 3
                | (x & 3) << 1
        }
        // [10:9] y3^x5, x4^y4 | [8:7] y2^x4, x3^y3 | [6:5] y1, x2 | [4:0] y0, x[1:0], 00
        4 => {
            (b(y, 3) ^ b(x, 5)) << 10
                | (b(x, 4) ^ b(y, 4)) << 9
                | (b(y, 2) ^ b(x, 4)) << 8
                | (b(x, 3) ^ b(y, 3)) << 7
                | b(y, 1) << 6
                | b(x, 2) << 5
                | b(y, 0) << 4
                | (x & 3) << 2
        }
        // [10:9] y3^x4, x3^y4 | [8:7] y2^x3, x2^y3 | [6:5] y1, x1 | [4:0] y0, x0, 000
        8 => {
            (b(y, 3) ^ b(x, 4)) << 10
                | (b(x, 3) ^ b(y, 4)) << 9
                | (b(y, 2) ^ b(x, 3)) << 8
                | (b(x, 2) ^ b(y, 3)) << 7
                | b(y, 1) << 6
                | b(x, 1) << 5
                | b(y, 0) << 4
                | b(x, 0) << 3
        }
        // [10:9] y2^x4, x3^y3 | [8:7] y1^x3, x2^y2 | [6:5] y0, x1 | [4:0] x0, 0000
        _ => {
            (b(y, 2) ^ b(x, 4)) << 10
                | (b(x, 3) ^ b(y, 3)) << 9
                | (b(y, 1) ^ b(x, 3)) << 8
                | (b(x, 2) ^ b(y, 2)) << 7
                | b(y, 0) << 6
                | b(x, 1) << 5
                | b(x, 0) << 4
        }
    };
    (hi << 11) | lo
}

/// Unsigned-normalised channel → float (judgement call: UINT formats are read as unorm).
fn unorm(v: u32, max: u32) -> f32 {
    (f64::from(v) / f64::from(max)) as f32
}

/// Float → unsigned-normalised channel: clamp to [0, 1] (NaN → 0), scale, round to nearest.
fn to_unorm(v: f32, max: u32) -> u32 {
    let c = if v.is_nan() { 0.0 } else { f64::from(v).clamp(0.0, 1.0) };
    (c * f64::from(max) + 0.5).floor() as u32
}

/// Read the element at `address` in `format`, expanded to four channels (c0..c3 = r, g, b, a).
/// Channels the format lacks read as 0 (r, g, b) and 1 (a).
pub fn read_element(
    mem: &mut dyn Memory,
    address: u32,
    format: DataFormat,
) -> Result<[f32; 4], MemFault> {
    let mut buf = [0u8; 16];
    let n = format.bpe() as usize;
    mem.read(address, &mut buf[..n])?;
    let f =
        |i: usize| f32::from_le_bytes([buf[i * 4], buf[i * 4 + 1], buf[i * 4 + 2], buf[i * 4 + 3]]);
    Ok(match format {
        DataFormat::Uint16x1 => {
            [unorm(u32::from(u16::from_le_bytes([buf[0], buf[1]])), 0xffff), 0.0, 0.0, 1.0]
        }
        DataFormat::Uint8x4 => [
            unorm(u32::from(buf[0]), 255),
            unorm(u32::from(buf[1]), 255),
            unorm(u32::from(buf[2]), 255),
            unorm(u32::from(buf[3]), 255),
        ],
        DataFormat::Float32x1 => [f(0), 0.0, 0.0, 1.0],
        DataFormat::Float32x2 => [f(0), f(1), 0.0, 1.0],
        DataFormat::Float32x4 => [f(0), f(1), f(2), f(3)],
    })
}

/// Read the raw bytes of one element (constants that are not floats: int and bool, §3.5.3).
pub fn read_raw(
    mem: &mut dyn Memory,
    address: u32,
    format: DataFormat,
) -> Result<[u8; 16], MemFault> {
    let mut buf = [0u8; 16];
    mem.read(address, &mut buf[..format.bpe() as usize])?;
    Ok(buf)
}

/// Write channels of `value` selected by `mask` (bit n = channel cn) that the format stores,
/// channel by channel so masked channels keep their memory contents (§2.2.2 set_out_mask).
pub fn write_element(
    mem: &mut dyn Memory,
    address: u32,
    format: DataFormat,
    value: [f32; 4],
    mask: u32,
) -> Result<(), MemFault> {
    for (c, v) in value.iter().enumerate().take(format.channels()) {
        if mask & (1 << c) == 0 {
            continue;
        }
        let c32 = c as u32;
        match format {
            DataFormat::Uint16x1 => {
                mem.write(address, &(to_unorm(*v, 0xffff) as u16).to_le_bytes())?;
            }
            DataFormat::Uint8x4 => {
                mem.write(address.wrapping_add(c32), &[to_unorm(*v, 255) as u8])?;
            }
            _ => mem.write(address.wrapping_add(c32 * 4), &v.to_bits().to_le_bytes())?,
        }
    }
    Ok(())
}
