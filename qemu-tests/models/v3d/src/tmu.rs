//! Texture lookups (§4): the configuration uniforms (Tables 15-17), the image layouts (§11:
//! T-format, LT-format, raster) and point and bilinear sampling of level 0.
//!
//! Emulated: types RGBA8888, RGBX8888 (T/LT) and RGBA32R (raster); wrap modes repeat, clamp
//! and mirror; NEAREST or LINEAR with both filters alike and one mipmap level. Anything else
//! (other types, border wrap, mipmaps, cube maps, child images, different min/mag filters,
//! which need a level of detail) is [`QpuFaultKind::Unsupported`].

use crate::qpu::QpuFaultKind;

/// A decoded texture configuration (parameters 0 and 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Texture {
    /// Level-0 base address (P0 31:12, 4 KiB units).
    pub base: u32,
    /// Texture type (P0 7:4 with P1 bit 31 as bit 4, Table 18).
    pub kind: u32,
    /// FLIPY (P0 bit 8).
    pub flip_y: bool,
    /// Width and height in texels (P1 18:8 and 30:20, 0 = 2048).
    pub width: u32,
    /// Height.
    pub height: u32,
    /// LINEAR (bilinear) rather than NEAREST.
    pub linear: bool,
    /// WRAP_S, WRAP_T (0 repeat, 1 clamp, 2 mirror).
    pub wrap: [u32; 2],
}

/// Table 18 numbers the model samples.
const RGBA8888: u32 = 0;
const RGBX8888: u32 = 1;
const RGBA32R: u32 = 16;

impl Texture {
    /// Decode parameters 0 and 1. Parameter 0's field positions (BASE 31:12, CSWIZ 11:10,
    /// CMMODE 9, FLIPY 8, TYPE 7:4, MIPLVLS 3:0; Table 15 lost its bit column) are those of
    /// Mesa's public vc4_packet.h.
    pub fn decode(p0: u32, p1: u32) -> Result<Texture, QpuFaultKind> {
        let kind = (p0 >> 4 & 0xF) | (p1 >> 31) << 4;
        if !matches!(kind, RGBA8888 | RGBX8888 | RGBA32R) {
            return Err(QpuFaultKind::Unsupported(
                "texture types other than RGBA8888/RGBX8888/RGBA32R",
            ));
        }
        if p0 & 0xF != 0 || p0 >> 9 & 1 != 0 {
            return Err(QpuFaultKind::Unsupported("mipmapped and cube-map textures"));
        }
        let (mag, min) = (p1 >> 7 & 1, p1 >> 4 & 7);
        let linear = match (mag, min) {
            (0, 0) => true,
            (1, 1) => false,
            _ => {
                return Err(QpuFaultKind::Unsupported(
                    "different minification and magnification filters (level of detail)",
                ));
            }
        };
        let wrap = [p1 & 3, p1 >> 2 & 3];
        if wrap.contains(&3) {
            return Err(QpuFaultKind::Unsupported("clamp-to-border wrap mode"));
        }
        let size = |v: u32| if v == 0 { 2048 } else { v };
        Ok(Texture {
            base: p0 & !0xFFF,
            kind,
            flip_y: p0 >> 8 & 1 != 0,
            width: size(p1 >> 8 & 0x7FF),
            height: size(p1 >> 20 & 0x7FF),
            linear,
            wrap,
        })
    }

    /// Bus address of texel (x, y) (row 0 first in memory: the bottom row, §11).
    pub fn texel_address(&self, x: u32, y: u32) -> u32 {
        let y = if self.flip_y { self.height - 1 - y } else { y };
        if self.kind == RGBA32R {
            return self.base.wrapping_add(4 * (y * self.width + x));
        }
        // 32 bpp: 4x4-texel micro-tiles of 64 bytes, texels in raster order inside (§11).
        let (ux, uy) = (x / 4, y / 4);
        let in_utile = 4 * ((y % 4) * 4 + x % 4);
        // The TMU reads a level as LT-format when it is at most four micro-tiles wide or high
        // (Mesa vc4_tiling.c `vc4_size_is_lt`; §4 says "less than one T-format tile").
        if self.width <= 16 || self.height <= 16 {
            let stride = self.width.div_ceil(4);
            return self.base.wrapping_add(64 * (uy * stride + ux) + in_utile);
        }
        // T-format (§11, with the 4 KiB tile order of Mesa vc4_tiling.c, the document's Figure
        // 14 being lost): 4 KiB tiles of 2x2 1 KiB sub-tiles of 4x4 micro-tiles; rows of tiles
        // run left to right on even rows, right to left on odd rows; sub-tiles in the order
        // BL, TL, TR, BR on even rows and TR, BR, BL, TL on odd rows.
        let tiles_wide = self.width.div_ceil(32);
        let (mut tx, ty) = (ux / 8, uy / 8);
        let odd = ty & 1 == 1;
        if odd {
            tx = tiles_wide - tx - 1;
        }
        let sub = ((uy / 4) & 1) * 2 + ((ux / 4) & 1); // BL 0, BR 1, TL 2, TR 3
        let order = if odd { [2, 1, 3, 0] } else { [0, 3, 1, 2] };
        let tile = (ty * tiles_wide + tx) * 4096;
        let utile = 64 * ((uy % 4) * 4 + ux % 4);
        self.base.wrapping_add(tile + 1024 * order[sub as usize] + utile + in_utile)
    }

    fn wrap(&self, axis: usize, v: i64) -> u32 {
        let n = i64::from(if axis == 0 { self.width } else { self.height });
        (match self.wrap[axis] {
            0 => v.rem_euclid(n),
            1 => v.clamp(0, n - 1),
            _ => {
                let m = v.rem_euclid(2 * n);
                if m < n { m } else { 2 * n - 1 - m }
            }
        }) as u32
    }

    /// Sample at (s, t), reading texels through `fetch`.
    pub fn sample(
        &self,
        s: f32,
        t: f32,
        mut fetch: impl FnMut(u32) -> Result<u32, QpuFaultKind>,
    ) -> Result<u32, QpuFaultKind> {
        let mut texel = |x: i64, y: i64| -> Result<u32, QpuFaultKind> {
            let v = fetch(self.texel_address(self.wrap(0, x), self.wrap(1, y)))?;
            Ok(if self.kind == RGBX8888 { v | 0xFF00_0000 } else { v })
        };
        let (u, v) = (s * self.width as f32, t * self.height as f32);
        if !self.linear {
            return texel(u.floor() as i64, v.floor() as i64);
        }
        let (u, v) = (u - 0.5, v - 0.5);
        let (x0, y0) = (u.floor() as i64, v.floor() as i64);
        let (fx, fy) = (u - u.floor(), v - v.floor());
        let c = [texel(x0, y0)?, texel(x0 + 1, y0)?, texel(x0, y0 + 1)?, texel(x0 + 1, y0 + 1)?];
        let weights = [(1.0 - fx) * (1.0 - fy), fx * (1.0 - fy), (1.0 - fx) * fy, fx * fy];
        let mut out = 0;
        for byte in 0..4 {
            let sum: f32 =
                c.iter().zip(weights).map(|(t, w)| (t >> (8 * byte) & 0xFF) as f32 * w).sum();
            out |= (sum.round().clamp(0.0, 255.0) as u32) << (8 * byte);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texture(kind: u32, w: u32, h: u32) -> Texture {
        Texture {
            base: 0x10_0000,
            kind,
            flip_y: false,
            width: w,
            height: h,
            linear: false,
            wrap: [0, 0],
        }
    }

    #[test]
    fn lt_and_raster_addresses() {
        // LT: micro-tiles in raster order; texel (5, 6) is in micro-tile (1, 1) of a 2-wide row.
        let lt = texture(RGBA8888, 8, 8);
        assert_eq!(lt.texel_address(5, 6), 0x10_0000 + 64 * 3 + 4 * (2 * 4 + 1));
        let raster = texture(RGBA32R, 10, 4);
        assert_eq!(raster.texel_address(3, 2), 0x10_0000 + 4 * 23);
    }

    #[test]
    fn nearest_and_bilinear_samples_with_wrap_modes() {
        // A 2x2 LT texture: one micro-tile, texels (0,0) (1,0) (0,1) (1,1) at words 0, 1, 4, 5.
        let texels = |a: u32| -> Result<u32, QpuFaultKind> {
            Ok(match (a - 0x10_0000) / 4 {
                0 => 0x0000_0000,
                1 => 0x0000_0040,
                4 => 0x0000_0080,
                5 => 0xFF00_00C0,
                w => panic!("word {w}"),
            })
        };
        let mut t = texture(RGBA8888, 2, 2);
        assert_eq!(t.sample(0.75, 0.25, texels), Ok(0x40));
        assert_eq!(t.sample(1.25, 0.25, texels), Ok(0x00), "repeat");
        t.wrap = [1, 1];
        assert_eq!(t.sample(1.25, 0.25, texels), Ok(0x40), "clamp");
        t.wrap = [2, 2];
        assert_eq!(t.sample(1.25, 0.25, texels), Ok(0x40), "mirror");
        t.linear = true;
        // The centre: the mean of the four texels, per byte.
        assert_eq!(t.sample(0.5, 0.5, texels), Ok(0x4000_0060));
        let x = texture(RGBX8888, 2, 2);
        assert_eq!(x.sample(0.25, 0.25, texels), Ok(0xFF00_0000), "alpha forced to 1.0");
        assert!(Texture::decode(0x10_0000 | 2 << 4, 1 << 7 | 1 << 4).is_err(), "RGBA4444");
        assert!(Texture::decode(0x10_0000, 1 << 7).is_err(), "mixed filters");
        let d = Texture::decode(0x10_0100, 1 << 31 | 3 << 20 | 5 << 8 | 1 << 7 | 1 << 4 | 6);
        assert_eq!(
            d,
            Ok(Texture {
                base: 0x10_0000,
                kind: RGBA32R,
                flip_y: true,
                width: 5,
                height: 3,
                linear: false,
                wrap: [2, 1]
            })
        );
    }

    #[test]
    fn t_format_tiles_snake_and_sub_tiles_turn() {
        let t = texture(RGBA8888, 64, 64);
        let base = 0x10_0000;
        // Row 0 of 4 KiB tiles runs left to right; sub-tiles BL, TL, TR, BR.
        assert_eq!(t.texel_address(0, 0), base);
        assert_eq!(t.texel_address(0, 16), base + 1024, "TL second");
        assert_eq!(t.texel_address(16, 16), base + 2048, "TR third");
        assert_eq!(t.texel_address(16, 0), base + 3072, "BR fourth");
        assert_eq!(t.texel_address(32, 0), base + 4096, "next tile to the right");
        // Row 1 runs right to left: its rightmost tile comes first; sub-tiles TR, BR, BL, TL.
        assert_eq!(t.texel_address(48, 48), base + 2 * 4096, "TR of the right tile first");
        assert_eq!(t.texel_address(48, 32), base + 2 * 4096 + 1024);
        assert_eq!(t.texel_address(32, 32), base + 2 * 4096 + 2048);
        assert_eq!(t.texel_address(32, 48), base + 2 * 4096 + 3072);
        assert_eq!(t.texel_address(0, 32), base + 3 * 4096 + 2048, "BL third in odd rows");
        // Inside a sub-tile: micro-tiles, then texels, in raster order.
        assert_eq!(t.texel_address(5, 6), base + 64 * (4 + 1) + 4 * (2 * 4 + 1));
    }
}
