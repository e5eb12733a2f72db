//! The compressed triangle list with 16-bit indices (§9 "Compressed Primitive List (ID=48)",
//! Table 39), which the binner writes into tile lists and the renderer reads back.

/// Escape code: ends the list (Table 39).
pub const ESCAPE: u8 = 128;
/// Coding 3: three absolute indices (Table 39).
pub const ABSOLUTE: u8 = 129;
/// Relative branch (Table 39).
pub const RELATIVE_BRANCH: u8 = 130;
/// Longest code: coding 3 with 16-bit indices (7 bytes).
pub const MAX_CODE_BYTES: usize = 7;

/// Coding 3 for triangle `t` (16-bit indices).
pub fn encode_absolute(t: [u16; 3]) -> [u8; MAX_CODE_BYTES] {
    let [a, b, c] = t.map(u16::to_le_bytes);
    [ABSOLUTE, a[0], a[1], b[0], b[1], c[0], c[1]]
}

/// One decoded code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    /// A triangle and the code's length in bytes.
    Triangle([u32; 3], usize),
    /// The escape code (1 byte).
    Escape,
    /// A relative branch (3 bytes) with its signed offset in 32-byte units.
    Branch(i16),
    /// The code needs `usize` bytes and fewer were given.
    Short(usize),
    /// A value Table 39 reserves.
    Reserved(u8),
}

fn signed(value: u32, bits: u32) -> i64 {
    let shift = 64 - bits;
    (i64::from(value) << shift) >> shift
}

/// Decode the code at the start of `b`, `prev` being the previous triangle's indices.
pub fn decode(b: &[u8], prev: [u32; 3]) -> Code {
    let Some(&first) = b.first() else { return Code::Short(1) };
    let need = match first {
        ESCAPE => return Code::Escape,
        ABSOLUTE => 7,
        RELATIVE_BRANCH => 3,
        f if f & 3 != 3 => 1,
        f if f & 0xF == 0xF => 4,
        _ => 2,
    };
    if b.len() < need {
        return Code::Short(need);
    }
    let add = |base: u32, delta: i64| (i64::from(base) + delta) as u32 & 0xFFFF;
    match need {
        7 => {
            let w = |i: usize| u32::from(u16::from_le_bytes([b[i], b[i + 1]]));
            Code::Triangle([w(1), w(3), w(5)], 7)
        }
        3 => Code::Branch(i16::from_le_bytes([b[1], b[2]])),
        1 => {
            // Coding 0: two indices shared with the previous triangle, the third relative.
            let delta = u32::from(first >> 2);
            if delta == 32 {
                return Code::Reserved(first);
            }
            let (i0, i1) = match first & 3 {
                0 => (prev[2], prev[1]),
                1 => (prev[0], prev[2]),
                _ => (prev[1], prev[0]),
            };
            Code::Triangle([i0, i1, add(prev[2], signed(delta, 6))], 1)
        }
        4 => {
            // Coding 2: index 0 absolute, indices 1 and 2 relative to it.
            let w = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            let i0 = w >> 16;
            let d1 = signed((w >> 4) & 0x3F, 6);
            let d2 = signed((w >> 10) & 0x3F, 6);
            Code::Triangle([i0, add(i0, d1), add(i0, d2)], 4)
        }
        _ => {
            // Coding 1: each index relative to the previous triangle's.
            let w = u32::from(u16::from_le_bytes([b[0], b[1]]));
            if (w >> 2) & 3 == 3 {
                return Code::Reserved(first);
            }
            let d = |shift: u32| signed((w >> shift) & 0xF, 4);
            Code::Triangle([add(prev[0], d(4)), add(prev[1], d(8)), add(prev[2], d(12))], 2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_coding_of_table_39_decodes() {
        let prev = [10, 11, 12];
        assert_eq!(
            decode(&encode_absolute([1, 2, 0x1234]), prev),
            Code::Triangle([1, 2, 0x1234], 7)
        );
        // Coding 0, selector 0: (prev2, prev1, prev2 + 3).
        assert_eq!(decode(&[3 << 2], prev), Code::Triangle([12, 11, 15], 1));
        // Coding 0, selector 2 with delta -1: (prev1, prev0, prev2 - 1).
        assert_eq!(decode(&[(0x3F << 2) | 2], prev), Code::Triangle([11, 10, 11], 1));
        // Coding 1: deltas +1, -1, +7.
        assert_eq!(decode(&[0x13, 0x7F], prev), Code::Triangle([11, 10, 19], 2));
        // Coding 2: index 0 = 100, +1, -2.
        let w: u32 = 15 | (1 << 4) | (0x3E << 10) | (100 << 16);
        assert_eq!(decode(&w.to_le_bytes(), prev), Code::Triangle([100, 101, 98], 4));
        assert_eq!(decode(&[ESCAPE], prev), Code::Escape);
        assert_eq!(decode(&[RELATIVE_BRANCH, 0xFF, 0xFF], prev), Code::Branch(-1));
        assert_eq!(decode(&[ABSOLUTE, 1], prev), Code::Short(7));
    }
}
