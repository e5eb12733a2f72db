//! The VideoCore IV control-list writer: a minimal binning list and rendering list (the
//! records §9 requires, in its order) written with the writer decode back, record by record,
//! to the same records with their addresses relocated; a full list buffer, a record the list
//! may not hold, a missing or failing relocation each leave the list as it was.

use baregpu_hal::dma::BusAddress;
use baregpu_regs::packet::{ListKind, Walked, records};
use baregpu_regs::vc4::packets::{self as cl, *};
use baregpu_ring::stream::SliceSink;
use baregpu_ring::vc4::{
    ControlListError, ControlListWriter, Relocate, Relocation, RelocationError,
};

/// The buffers of a frame, by name, at fixed bus addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Buf {
    TileAlloc,
    TileState,
    ShaderRecord,
    Frame,
    /// A buffer the caller no longer has.
    Freed,
}

struct Frame;

impl Relocate for Frame {
    type Buffer = Buf;
    fn bus_address(&mut self, buffer: Buf, offset: u32) -> Result<BusAddress, RelocationError> {
        let (base, size) = match buffer {
            Buf::TileAlloc => (0x1000_0000, 0x8_0000),
            Buf::TileState => (0x1008_0000, 0x1000),
            Buf::ShaderRecord => (0x1009_0000, 0x100),
            Buf::Frame => (0x1100_0000, 0x4_0000),
            Buf::Freed => return Err(RelocationError::UnknownBuffer),
        };
        if offset >= size {
            return Err(RelocationError::OutOfBounds { offset, size });
        }
        Ok(BusAddress(base + u64::from(offset)))
    }
}

fn reloc(
    field: &'static baregpu_regs::packet::RecordField,
    buffer: Buf,
    offset: u32,
) -> Relocation<Buf> {
    Relocation { field, buffer, offset }
}

/// What the list must decode to: (record, bytes with the relocated addresses in place).
type Expected = Vec<(&'static str, Vec<u8>)>;

fn decoded(bytes: &[u8]) -> Expected {
    records(cl::ALL, bytes)
        .map(|step| match step {
            Walked::Record { record, bytes, .. } => (record.name, bytes.to_vec()),
            other => panic!("not a whole record: {other:?}"),
        })
        .collect()
}

#[test]
fn a_minimal_binning_list_decodes_back_to_its_records() {
    let mut buf = [0u8; 128];
    let mut w = ControlListWriter::new(SliceSink::new(&mut buf), ListKind::Binning, Frame);
    let config = tile_binning_mode_configuration::Body::new()
        .with_tile_allocation_memory_size(0x8_0000)
        .with_width(4)
        .unwrap()
        .with_height(3)
        .unwrap()
        .with_auto_initialise_tile_state_data_array(true);
    use tile_binning_mode_configuration as tb;
    w.write(
        &TILE_BINNING_MODE_CONFIGURATION,
        config.bytes(),
        &[
            reloc(&tb::TILE_ALLOCATION_MEMORY_ADDRESS, Buf::TileAlloc, 0),
            reloc(&tb::TILE_STATE_DATA_ARRAY_BASE_ADDRESS, Buf::TileState, 0),
        ],
    )
    .unwrap();
    w.write(&START_TILE_BINNING, &[6], &[]).unwrap();
    let format = primitive_list_format::Body::new()
        .with_data_type(primitive_list_format::DataType::V16BitIndex)
        .with_primitive_type(primitive_list_format::PrimitiveType::Triangles);
    w.write(&PRIMITIVE_LIST_FORMAT, format.bytes(), &[]).unwrap();
    w.write(
        &NV_SHADER_STATE,
        nv_shader_state::Body::new().bytes(),
        &[reloc(&nv_shader_state::MEMORY_ADDRESS_OF_SHADER_RECORD, Buf::ShaderRecord, 0)],
    )
    .unwrap();
    let draw = vertex_array_primitives::Body::new()
        .with_primitive_mode(vertex_array_primitives::PrimitiveMode::Triangles)
        .with_length(3);
    w.write(&VERTEX_ARRAY_PRIMITIVES, draw.bytes(), &[]).unwrap();
    w.write(&INCREMENT_SEMAPHORE, &[7], &[]).unwrap();
    w.write(&FLUSH, &[4], &[]).unwrap();

    let expected: Expected = vec![
        (
            "TILE_BINNING_MODE_CONFIGURATION",
            config
                .with_tile_allocation_memory_address(BusAddress(0x1000_0000))
                .unwrap()
                .with_tile_state_data_array_base_address(BusAddress(0x1008_0000))
                .unwrap()
                .bytes()
                .to_vec(),
        ),
        ("START_TILE_BINNING", vec![6]),
        ("PRIMITIVE_LIST_FORMAT", vec![56, 0x12]),
        (
            "NV_SHADER_STATE",
            nv_shader_state::Body::new()
                .with_memory_address_of_shader_record(BusAddress(0x1009_0000))
                .unwrap()
                .bytes()
                .to_vec(),
        ),
        ("VERTEX_ARRAY_PRIMITIVES", draw.bytes().to_vec()),
        ("INCREMENT_SEMAPHORE", vec![7]),
        ("FLUSH", vec![4]),
    ];
    let (sink, _) = w.into_parts();
    assert_eq!(decoded(sink.written()), expected);
    // The list ends with INCREMENT_SEMAPHORE then FLUSH (the last two bytes).
    assert_eq!(sink.written()[sink.len() - 2..], [7, 4]);
}

#[test]
fn a_minimal_rendering_list_decodes_back_to_its_records() {
    let mut buf = [0u8; 128];
    let mut w = ControlListWriter::new(SliceSink::new(&mut buf), ListKind::Rendering, Frame);
    let clear = clear_colors::Body::new()
        .with_clear_color(0xff20_4080_ff20_4080)
        .with_clear_z_s(0xff_ffff)
        .unwrap();
    w.write(&CLEAR_COLORS, clear.bytes(), &[]).unwrap();
    let mode = tile_rendering_mode_configuration::Body::new()
        .with_width(128)
        .unwrap()
        .with_height(64)
        .unwrap()
        .with_non_hdr_frame_buffer_color_format(
            tile_rendering_mode_configuration::NonHdrFrameBufferColorFormat::Rgba8888,
        );
    w.write(
        &TILE_RENDERING_MODE_CONFIGURATION,
        mode.bytes(),
        &[reloc(&tile_rendering_mode_configuration::MEMORY_ADDRESS, Buf::Frame, 0)],
    )
    .unwrap();
    let mut expected: Expected = vec![
        ("CLEAR_COLORS", clear.bytes().to_vec()),
        (
            "TILE_RENDERING_MODE_CONFIGURATION",
            mode.with_memory_address(BusAddress(0x1100_0000)).unwrap().bytes().to_vec(),
        ),
    ];
    // Two tiles across, one down: coordinates, the tile's list (32 bytes per tile in the tile
    // allocation memory), the store; the last store signals the end of the frame.
    for x in 0..2u8 {
        let tile = tile_coordinates::Body::new().with_tile_column_number(u32::from(x)).unwrap();
        w.write(&TILE_COORDINATES, tile.bytes(), &[]).unwrap();
        let offset = u32::from(x) * 32;
        w.write(
            &BRANCH_TO_SUB_LIST,
            branch_to_sub_list::Body::new().bytes(),
            &[reloc(&branch_to_sub_list::ABSOLUTE_BRANCH_ADDRESS, Buf::TileAlloc, offset)],
        )
        .unwrap();
        let store = if x == 1 {
            &STORE_MULTI_SAMPLE_RESOLVED_TILE_COLOR_BUFFER_AND_SIGNAL_END_OF_FRAME
        } else {
            &STORE_MULTI_SAMPLE_RESOLVED_TILE_COLOR_BUFFER
        };
        w.write(store, &[store.opcode], &[]).unwrap();
        let target = branch_to_sub_list::Body::new()
            .with_absolute_branch_address(BusAddress(0x1000_0000 + u64::from(offset)))
            .unwrap();
        expected.push(("TILE_COORDINATES", tile.bytes().to_vec()));
        expected.push(("BRANCH_TO_SUB_LIST", target.bytes().to_vec()));
        expected.push((store.name, vec![store.opcode]));
    }
    let (sink, _) = w.into_parts();
    assert_eq!(decoded(sink.written()), expected);
}

#[test]
fn an_overflowing_list_is_refused_whole() {
    let mut buf = [0u8; 18];
    let mut w = ControlListWriter::new(SliceSink::new(&mut buf), ListKind::Binning, Frame);
    w.write(&START_TILE_BINNING, &[6], &[]).unwrap();
    w.write(&PRIMITIVE_LIST_FORMAT, &[56, 0x12], &[]).unwrap();
    // 15 bytes left: the 16-byte binning configuration does not fit.
    use tile_binning_mode_configuration as tb;
    let err = w
        .write(
            &TILE_BINNING_MODE_CONFIGURATION,
            tb::Body::new().bytes(),
            &[
                reloc(&tb::TILE_ALLOCATION_MEMORY_ADDRESS, Buf::TileAlloc, 0),
                reloc(&tb::TILE_STATE_DATA_ARRAY_BASE_ADDRESS, Buf::TileState, 0),
            ],
        )
        .unwrap_err();
    assert!(
        matches!(err, ControlListError::NoSpace(e) if e.needed == 16 && e.free == 15),
        "{err:?}"
    );
    assert_eq!(w.sink().written(), [6, 56, 0x12]);
    // What fits still goes in.
    w.write(&INCREMENT_SEMAPHORE, &[7], &[]).unwrap();
    assert_eq!(w.sink().written(), [6, 56, 0x12, 7]);
}

#[test]
fn a_failing_relocation_leaves_nothing_written() {
    let mut buf = [0u8; 64];
    let mut w = ControlListWriter::new(SliceSink::new(&mut buf), ListKind::Rendering, Frame);
    w.write(&TILE_COORDINATES, &[115, 0, 0], &[]).unwrap();
    let branch = branch_to_sub_list::Body::new();
    let field = &branch_to_sub_list::ABSOLUTE_BRANCH_ADDRESS;
    let freed = w.write(&BRANCH_TO_SUB_LIST, branch.bytes(), &[reloc(field, Buf::Freed, 0)]);
    assert_eq!(
        freed,
        Err(ControlListError::Relocation {
            record: "BRANCH_TO_SUB_LIST",
            field: "ABSOLUTE_BRANCH_ADDRESS",
            error: RelocationError::UnknownBuffer
        })
    );
    let past =
        w.write(&BRANCH_TO_SUB_LIST, branch.bytes(), &[reloc(field, Buf::ShaderRecord, 0x100)]);
    assert!(matches!(
        past,
        Err(ControlListError::Relocation {
            error: RelocationError::OutOfBounds { offset: 0x100, size: 0x100 },
            ..
        })
    ));
    // An address the field cannot hold: the store's tile address is in multiples of 16 bytes.
    let store = store_tile_buffer_general::Body::new();
    let misaligned = w.write(
        &STORE_TILE_BUFFER_GENERAL,
        store.bytes(),
        &[reloc(
            &store_tile_buffer_general::MEMORY_BASE_ADDRESS_OF_FRAME_TILE_DUMP_BUFFER,
            Buf::Frame,
            8,
        )],
    );
    assert!(matches!(misaligned, Err(ControlListError::Address(_))), "{misaligned:?}");
    // No relocation for the address, or one for a field that is not an address.
    assert!(matches!(
        w.write(&BRANCH_TO_SUB_LIST, branch.bytes(), &[]),
        Err(ControlListError::Unrelocated { field: "ABSOLUTE_BRANCH_ADDRESS", .. })
    ));
    assert!(matches!(
        w.write(
            &TILE_COORDINATES,
            &[115, 0, 0],
            &[reloc(&tile_coordinates::TILE_ROW_NUMBER, Buf::Frame, 0)]
        ),
        Err(ControlListError::NotAnAddress { .. })
    ));
    assert_eq!(w.sink().written(), [115, 0, 0]);
}

#[test]
fn records_a_list_may_not_hold_are_refused() {
    let mut buf = [0u8; 64];
    let mut w = ControlListWriter::new(SliceSink::new(&mut buf), ListKind::Rendering, Frame);
    // Start Tile Binning is "(B)", Tile Coordinates "(R)" (§9 Table 38).
    assert_eq!(
        w.write(&START_TILE_BINNING, &[6], &[]),
        Err(ControlListError::WrongList {
            record: "START_TILE_BINNING",
            list: ListKind::Rendering
        })
    );
    // Bytes that are not the record: a short one, another record's id.
    assert!(matches!(w.write(&TILE_COORDINATES, &[115, 0], &[]), Err(ControlListError::Record(_))));
    assert!(matches!(
        w.write(&TILE_COORDINATES, &[114, 0, 0], &[]),
        Err(ControlListError::Record(_))
    ));
    assert!(matches!(
        w.write(&COMPRESSED_PRIMITIVE_LIST, &[48], &[]),
        Err(ControlListError::OpenEnded { .. })
    ));
    assert!(w.sink().written().is_empty());
}
