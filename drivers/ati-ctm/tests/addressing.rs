//! Properties of the §2.1.4 address translation (Tables 1 and 2).

use baregpu_ati_ctm::addressing::*;
use baregpu_ati_ctm::command::{DataFormat, Format, GpuAddress, Tiling};
use proptest::prelude::*;
use std::collections::HashSet;

fn any_size() -> impl Strategy<Value = ElementSize> {
    prop::sample::select(ElementSize::ALL.to_vec())
}

#[test]
fn tiles_are_2k() {
    for s in ElementSize::ALL {
        let (w, h) = tile_size(s);
        assert_eq!(w * h * s.bytes(), 2048, "{s:?}");
    }
    assert_eq!(ElementSize::of(DataFormat::Uint16x1), ElementSize::B2);
    assert_eq!(ElementSize::of(DataFormat::Float32x4), ElementSize::B16);
}

#[test]
fn linear_is_row_major_when_pitch_is_32_byte_multiple() {
    // Table 1 reduces to offset + (y * pitch + x) * bpe when pitch * bpe % 32 == 0.
    for s in ElementSize::ALL {
        let pitch = 32 / s.bytes() * 3;
        for y in 0..5 {
            for x in 0..pitch {
                assert_eq!(
                    linear_address(s, pitch, 0x8000, x, y),
                    0x8000 + (y * pitch + x) * s.bytes()
                );
            }
        }
    }
}

proptest! {
    /// Table 1 is injective over a `pitch × height` domain (element ranges never overlap)
    /// whenever a row is a whole number of 32-byte units.
    #[test]
    fn linear_injective(size in any_size(), units in 1u32..8, height in 1u32..24, base in 0u32..1024) {
        let per_unit = 32 / size.bytes();
        let pitch = (units * per_unit).next_multiple_of(4);
        let offset = base << 11;
        let mut seen = HashSet::new();
        for y in 0..height {
            for x in 0..pitch {
                let a = linear_address(size, pitch, offset, x, y);
                prop_assert_eq!(a % size.bytes(), 0);
                prop_assert!(a >= offset);
                prop_assert!(seen.insert(a), "({}, {}) aliases {:#x}", x, y, a);
            }
        }
    }

    /// Table 2 is a bijection from a tile-aligned `tw×w` by `th×h` region onto the contiguous
    /// `w*h` 2K tiles starting at the offset (in element-sized steps).
    #[test]
    fn tiled_bijective(size in any_size(), tiles_w in 1u32..4, tiles_h in 1u32..4, base in 0u32..1024) {
        let (w, h) = tile_size(size);
        let pitch = tiles_w * w;
        let offset = base << 11;
        let mut seen = HashSet::new();
        for y in 0..tiles_h * h {
            for x in 0..pitch {
                let a = tiled_address(size, pitch, offset, x, y);
                prop_assert_eq!(a % size.bytes(), 0);
                prop_assert!(seen.insert(a), "({}, {}) aliases {:#x}", x, y, a);
                // The element stays in its own tile.
                let tile = (y / h) * tiles_w + x / w;
                prop_assert_eq!((a - offset) >> 11, tile);
            }
        }
        let total = tiles_w * tiles_h * 2048 / size.bytes();
        prop_assert_eq!(seen.len() as u32, total);
        let expected: HashSet<u32> = (0..total).map(|k| offset + k * size.bytes()).collect();
        prop_assert_eq!(seen, expected);
    }

    /// `address` never panics for any format, offset and index (wrapping arithmetic).
    #[test]
    fn address_total(p in 0u32..=2047, t in 0u32..4, d in 0u32..5, off in any::<u32>(), x in any::<u32>(), y in any::<u32>()) {
        if let Ok(f) = Format::new(p * 4, Tiling::from_bits(t).unwrap(), DataFormat::from_bits(d).unwrap()) {
            let off = GpuAddress::new(off & !0x7FF).unwrap();
            let a = address(f, off, x, y);
            prop_assert_eq!(a, address(f, off, x & 0xFFF, y & 0xFFF));
            let _ = superfine_addresses(f, off, x, y);
        }
    }
}
