//! The generated VideoCore IV control records (`vc4::packets`): byte-level field round trips,
//! the typed bodies' checks, the list walk and the human-readable decode.

use baregpu_hal::dma::BusAddress;
use baregpu_regs::packet::{ListKind, Lists, RecordError, Walked, decode_records, records};
use baregpu_regs::vc4::packets::{self as cl, tile_binning_mode_configuration as bin_cfg};
use proptest::prelude::*;

proptest! {
    /// Every field of every record: a value put into a record reads back, and leaves every
    /// other field and the id byte as they were.
    #[test]
    fn every_record_field_round_trips(seed in any::<u64>(), fill in any::<u8>()) {
        for r in cl::ALL {
            for (i, f) in r.fields.iter().enumerate() {
                let mut bytes = [fill; 16];
                bytes[0] = r.opcode;
                let before = bytes;
                let mask = if f.width == 64 { u64::MAX } else { (1 << f.width) - 1 };
                let value = seed.rotate_left(i as u32) & mask;
                f.set(&mut bytes, value);
                prop_assert_eq!(f.get(&bytes), value, "{}.{}", r.name, f.name);
                prop_assert_eq!(bytes[0], r.opcode);
                for other in r.fields.iter().filter(|o| o.name != f.name) {
                    prop_assert_eq!(other.get(&bytes), other.get(&before), "{} moved {}", f.name, other.name);
                }
                // Nothing past the record changes.
                prop_assert_eq!(&bytes[r.bytes..], &before[r.bytes..], "{}.{}", r.name, f.name);
                if f.width < 64 {
                    prop_assert!(f.try_set(r.name, &mut bytes, mask + 1).is_err());
                }
            }
        }
    }
}

#[test]
fn the_binning_configuration_sits_where_table_38_puts_it() {
    let body = bin_cfg::Body::new()
        .with_tile_allocation_memory_address(BusAddress(0x1000_0000))
        .unwrap()
        .with_tile_allocation_memory_size(0x8_0000)
        .with_tile_state_data_array_base_address(BusAddress(0x1008_0000))
        .unwrap()
        .with_width(10)
        .unwrap()
        .with_height(8)
        .unwrap()
        .with_tile_allocation_block_size(bin_cfg::TileAllocationBlockSize::V128Bytes)
        .with_auto_initialise_tile_state_data_array(true);
    // Id 112, three little-endian words, width and height in tiles, then the flag byte:
    // block size 2 at bits 6:5, auto-init at bit 2.
    assert_eq!(
        body.bytes(),
        [112, 0, 0, 0, 0x10, 0, 0, 8, 0, 0, 0, 8, 0x10, 10, 8, 2 << 5 | 1 << 2]
    );
    let back = bin_cfg::Body::unpack(body.bytes()).unwrap();
    assert_eq!(back.width(), 10);
    assert_eq!(back.tile_allocation_block_size(), Ok(bin_cfg::TileAllocationBlockSize::V128Bytes));
    assert_eq!(back.tile_state_data_array_base_address(), BusAddress(0x1008_0000));
    assert_eq!(cl::TILE_BINNING_MODE_CONFIGURATION.lists, Lists::Binning);
    assert!(!cl::TILE_BINNING_MODE_CONFIGURATION.lists.allows(ListKind::Rendering));
}

#[test]
fn typed_records_refuse_what_does_not_fit() {
    use cl::{store_tile_buffer_general as store, tile_coordinates as tc};
    // 28-bit address in multiples of 16 bytes.
    assert!(
        store::Body::new()
            .with_memory_base_address_of_frame_tile_dump_buffer(BusAddress(0x1008))
            .is_err()
    );
    assert!(
        store::Body::new()
            .with_memory_base_address_of_frame_tile_dump_buffer(BusAddress(1 << 32))
            .is_err()
    );
    assert!(tc::Body::new().with_tile_column_number(256).is_err());
    assert!(cl::viewport_offset::Body::new().with_viewport_centre_x_coordinate(-40_000).is_err());
    let vp = cl::viewport_offset::Body::new().with_viewport_centre_x_coordinate(-16).unwrap();
    assert_eq!(vp.viewport_centre_x_coordinate(), -16);
    assert_eq!(
        tc::Body::unpack(&[115, 1]),
        Err(RecordError::Length { record: "TILE_COORDINATES", bytes: 2, expected: 3 })
    );
    assert_eq!(
        tc::Body::unpack(&[114, 1, 2]),
        Err(RecordError::Id { record: "TILE_COORDINATES", found: 114 })
    );
}

#[test]
fn a_list_walks_and_decodes_record_by_record() {
    let point = cl::points_size::Body::new().with_point_size(1.5);
    let coords = cl::tile_coordinates::Body::new().with_tile_column_number(3).unwrap();
    let mut list = Vec::new();
    list.extend_from_slice(point.bytes());
    list.extend_from_slice(coords.bytes());
    list.push(cl::INCREMENT_SEMAPHORE.opcode);
    list.push(cl::COMPRESSED_PRIMITIVE_LIST.opcode);
    list.extend_from_slice(&[0x80, 0x80]);
    let steps: Vec<_> = records(cl::ALL, &list).collect();
    assert_eq!(steps.len(), 4);
    assert!(matches!(steps[1], Walked::Record { at: 5, bytes, .. } if bytes == coords.bytes()));
    assert!(matches!(steps[3], Walked::OpenEnded { at: 9, .. }));
    let text = decode_records(cl::ALL, &list).to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "    0: POINTS_SIZE POINT_SIZE=1.5");
    assert_eq!(lines[1], "    5: TILE_COORDINATES TILE_COLUMN_NUMBER=0x3 TILE_ROW_NUMBER=0x0");
    assert_eq!(lines[2], "    8: INCREMENT_SEMAPHORE");
    assert!(
        lines[3]
            .ends_with("COMPRESSED_PRIMITIVE_LIST [escape-terminated list follows: not decoded]")
    );
    // Cut short, and an id Table 38 reserves.
    assert_eq!(
        decode_records(cl::ALL, &[16, 0, 0]).to_string(),
        "    0: BRANCH [list ends inside the record]\n"
    );
    assert_eq!(decode_records(cl::ALL, &[2]).to_string(), "    0: unknown id 2\n");
}
