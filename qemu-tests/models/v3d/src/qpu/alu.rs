//! The add and mul pipes (§3 Tables 12-13), unpack (Tables 6, 8) and pack (Tables 7, 9), one
//! 32-bit lane at a time.

/// Whether add opcode `op` reads its inputs as floats (fadd ... ftoi).
pub fn add_reads_float(op: u8) -> bool {
    (1..=7).contains(&op)
}

/// Whether add opcode `op` produces a float (fadd ... fmaxabs, itof).
pub fn add_writes_float(op: u8) -> bool {
    (1..=6).contains(&op) || op == 8
}

/// Whether mul opcode `op` is a float operation (fmul).
pub fn mul_is_float(op: u8) -> bool {
    op == 1
}

/// A lane result with the flags it sets (§3 "Condition Codes").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lane {
    /// The 32-bit result.
    pub value: u32,
    /// The C flag. §3 does not define it per opcode; the model sets it as the carry out of
    /// `add`, the borrow of `sub` (unsigned a < b), `a > b`... see the crate README.
    pub carry: bool,
    /// The exact integer result for the saturating 32-bit pack (pack 8), where it differs.
    pub wide: Option<i64>,
}

impl Lane {
    fn of(value: u32) -> Lane {
        Lane { value, carry: false, wide: None }
    }
    fn float(f: f32) -> Lane {
        // C for float results: set when the result is greater than zero (a decision: the
        // document does not define C for float operations).
        Lane { value: f.to_bits(), carry: f > 0.0, wide: None }
    }
}

fn f(x: u32) -> f32 {
    f32::from_bits(x)
}

fn bytes(a: u32, b: u32, op: impl Fn(u8, u8) -> u8) -> u32 {
    let mut out = [0u8; 4];
    for (i, o) in out.iter_mut().enumerate() {
        *o = op(a.to_le_bytes()[i], b.to_le_bytes()[i]);
    }
    u32::from_le_bytes(out)
}

/// The add pipe (§3 Table 12); `op` is never reserved (the decoder refuses those).
pub fn add(op: u8, a: u32, b: u32) -> Lane {
    match op {
        0 => Lane::of(0),
        1 => Lane::float(f(a) + f(b)),
        2 => Lane::float(f(a) - f(b)),
        3 => Lane::float(f(a).min(f(b))),
        4 => Lane::float(f(a).max(f(b))),
        5 => Lane::float(f(a).abs().min(f(b).abs())),
        6 => Lane::float(f(a).abs().max(f(b).abs())),
        // Truncation toward zero, saturating (NaN gives 0): a decision, §3 says "to signed
        // integer" only.
        7 => Lane::of(f(a) as i32 as u32),
        8 => Lane::float(a as i32 as f32),
        12 => {
            let (v, c) = a.overflowing_add(b);
            Lane { value: v, carry: c, wide: Some(i64::from(a as i32) + i64::from(b as i32)) }
        }
        13 => Lane {
            value: a.wrapping_sub(b),
            carry: a < b,
            wide: Some(i64::from(a as i32) - i64::from(b as i32)),
        },
        14 => Lane::of(a >> (b & 31)),
        15 => Lane::of(((a as i32) >> (b & 31)) as u32),
        16 => Lane::of(a.rotate_right(b & 31)),
        17 => Lane::of(a << (b & 31)),
        18 => Lane::of((a as i32).min(b as i32) as u32),
        19 => Lane::of((a as i32).max(b as i32) as u32),
        20 => Lane::of(a & b),
        21 => Lane::of(a | b),
        22 => Lane::of(a ^ b),
        23 => Lane::of(!a),
        24 => Lane::of(a.leading_zeros()),
        30 => Lane::of(bytes(a, b, u8::saturating_add)),
        31 => Lane::of(bytes(a, b, u8::saturating_sub)),
        _ => Lane::of(0),
    }
}

/// The mul pipe (§3 Table 13).
pub fn mul(op: u8, a: u32, b: u32) -> Lane {
    match op {
        1 => Lane::float(f(a) * f(b)),
        2 => Lane::of((a & 0xFF_FFFF).wrapping_mul(b & 0xFF_FFFF)),
        // Bytes as [0, 1.0]: round(a * b / 255).
        3 => Lane::of(bytes(a, b, |x, y| ((u32::from(x) * u32::from(y) + 127) / 255) as u8)),
        4 => Lane::of(bytes(a, b, u8::min)),
        5 => Lane::of(bytes(a, b, u8::max)),
        6 => Lane::of(bytes(a, b, u8::saturating_add)),
        7 => Lane::of(bytes(a, b, u8::saturating_sub)),
        _ => Lane::of(0),
    }
}

/// IEEE half to single.
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h >> 15) << 31;
    let exp = u32::from((h >> 10) & 0x1F);
    let man = u32::from(h & 0x3FF);
    let bits = match (exp, man) {
        (0, 0) => sign,
        (0, m) => {
            // Subnormal: m * 2^-24.
            let v = m as f32 * (1.0 / 16_777_216.0);
            return if sign != 0 { -v } else { v };
        }
        (31, 0) => sign | 0x7F80_0000,
        (31, m) => sign | 0x7FC0_0000 | (m << 13),
        (e, m) => sign | ((e + 112) << 23) | (m << 13),
    };
    f32::from_bits(bits)
}

/// Single to IEEE half, round to nearest even, overflow to infinity.
pub fn f32_to_f16(x: f32) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xFF) as i32;
    let man = bits & 0x7F_FFFF;
    if exp == 0xFF {
        return sign | 0x7C00 | if man != 0 { 0x200 } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 31 {
        return sign | 0x7C00;
    }
    if e <= 0 {
        if e < -10 {
            return sign;
        }
        let m = man | 0x80_0000;
        let shift = (14 - e) as u32;
        let half = m >> shift;
        let rem = m & ((1 << shift) - 1);
        let mid = 1 << (shift - 1);
        let round = rem > mid || (rem == mid && half & 1 == 1);
        return sign | (half + u32::from(round)) as u16;
    }
    let half = ((e as u32) << 10) | (man >> 13);
    let rem = man & 0x1FFF;
    let round = rem > 0x1000 || (rem == 0x1000 && half & 1 == 1);
    sign | (half + u32::from(round)) as u16
}

/// Regfile A unpack (§3 Table 6; pm clear) of `v` for a consumer that reads floats or not.
pub fn unpack_a(mode: u8, v: u32, float: bool) -> u32 {
    match mode {
        1 | 2 => {
            let h = (v >> (16 * u32::from(mode - 1))) as u16;
            if float { f16_to_f32(h).to_bits() } else { h as i16 as i32 as u32 }
        }
        3 => u32::from_le_bytes([(v >> 24) as u8; 4]),
        4..=7 => {
            let byte = (v >> (8 * u32::from(mode - 4))) & 0xFF;
            if float { (byte as f32 / 255.0).to_bits() } else { byte }
        }
        _ => v,
    }
}

/// r4 unpack (§3 Table 8; pm set): always the float conversions.
pub fn unpack_r4(mode: u8, v: u32) -> u32 {
    unpack_a(mode, v, true)
}

/// Regfile A pack (§3 Table 7; pm clear): the value written over `old` (16- and 8-bit packs
/// write only their half-word or byte).
pub fn pack_a(mode: u8, lane: Lane, float_result: bool, old: u32) -> u32 {
    let v = lane.value;
    let half = |h: u16, hi: bool| {
        if hi { (old & 0xFFFF) | (u32::from(h) << 16) } else { (old & !0xFFFF) | u32::from(h) }
    };
    let byte = |b: u8, i: u32| (old & !(0xFF << (8 * i))) | (u32::from(b) << (8 * i));
    let sat16 = |x: u32| (x as i32).clamp(i32::from(i16::MIN), i32::from(i16::MAX)) as u16;
    let sat8 = |x: u32| (x as i32).clamp(0, 255) as u8;
    match mode {
        0 => v,
        1 | 2 | 9 | 10 => {
            let h = if float_result {
                f32_to_f16(f(v))
            } else if mode >= 9 {
                sat16(v)
            } else {
                v as u16
            };
            half(h, mode == 2 || mode == 10)
        }
        3 => u32::from_le_bytes([v as u8; 4]),
        11 => u32::from_le_bytes([sat8(v); 4]),
        4..=7 => byte(v as u8, u32::from(mode - 4)),
        12..=15 => byte(sat8(v), u32::from(mode - 12)),
        8 => match lane.wide {
            Some(w) => w.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32 as u32,
            None => v,
        },
        _ => v,
    }
}

/// The mul pipe's colour conversion (§3 Table 9; pm set): `c = sat[round(f * 255)]` into the
/// byte(s) `mode` names, over `old`.
pub fn pack_mul_colour(mode: u8, v: u32, old: u32) -> u32 {
    let c = colour_byte(f(v));
    match mode {
        3 => u32::from_le_bytes([c; 4]),
        4..=7 => {
            let i = u32::from(mode - 4);
            (old & !(0xFF << (8 * i))) | (u32::from(c) << (8 * i))
        }
        _ => v,
    }
}

/// `sat[round(f * 255)]` (§3 "Pack/Unpack Bits"); NaN gives 0.
pub fn colour_byte(x: f32) -> u8 {
    (x * 255.0).round().clamp(0.0, 255.0) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_floats_round_trip_the_values_shaders_use() {
        for x in [0.0f32, 1.0, -2.5, 0.333_251_95, 65504.0, 6.103_515_6e-5, 5.960_464_5e-8] {
            assert_eq!(f16_to_f32(f32_to_f16(x)), x, "{x}");
        }
        assert_eq!(f32_to_f16(1.0e6), 0x7C00, "overflow to infinity");
        assert_eq!(f32_to_f16(1.0), 0x3C00);
    }

    #[test]
    fn integer_ops_follow_table_12() {
        assert_eq!(add(12, u32::MAX, 2).value, 1);
        assert!(add(12, u32::MAX, 2).carry);
        assert!(add(13, 1, 2).carry, "borrow");
        assert_eq!(add(15, 0x8000_0000, 4).value, 0xF800_0000);
        assert_eq!(add(16, 1, 1).value, 0x8000_0000);
        assert_eq!(add(24, 1, 0).value, 31);
        assert_eq!(add(30, 0xFF01, 0x0101).value, 0xFF02, "per-byte saturation");
        assert_eq!(add(31, 0x0102, 0x0201).value, 0x0001);
        assert_eq!(add(7, (-3.7f32).to_bits(), 0).value, -3i32 as u32);
        assert_eq!(mul(2, 0x0100_0003, 5).value, 15, "24-bit inputs");
        assert_eq!(mul(3, 0xFF80, 0x80FF).value, 0x8080);
        assert_eq!(mul(3, 0x40, 0x80).value, 0x20);
    }

    #[test]
    fn packs_write_their_part_and_saturate() {
        let l = |v: u32| Lane { value: v, carry: false, wide: None };
        assert_eq!(pack_a(4, l(0x1FF), false, 0xAABB_CCDD), 0xAABB_CCFF);
        assert_eq!(pack_a(13, l(300), false, 0), 0xFF00);
        assert_eq!(pack_a(2, l(1.0f32.to_bits()), true, 0x1234), 0x3C00_1234);
        let big = add(12, 0x7FFF_FFFF, 1);
        assert_eq!(pack_a(8, big, false, 0), 0x7FFF_FFFF);
        assert_eq!(pack_mul_colour(3, 0.5f32.to_bits(), 0), 0x8080_8080);
        assert_eq!(unpack_a(5, 0xFF00, true), 1.0f32.to_bits());
        assert_eq!(unpack_a(1, 0xFFFF, false), u32::MAX);
    }
}
