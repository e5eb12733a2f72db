//! The control lists a render job produces, decoded with the generated §9 record table and
//! checked record by record against the document's list rules (§9 "Control Record IDs") and
//! the minimal jobs of Mesa and Linux vc4; the shader record and vertices against Table 46
//! and Figure 12; the job errors.

mod common;

use baregpu_hal::dma::BusAddress;
use baregpu_regs::packet::{Walked, decode_records, records};
use baregpu_videocore_v3d::job::{self, BINNING_LIST_BYTES, rendering_list_bytes};
use baregpu_videocore_v3d::regs::packets::{self as cl, *};
use baregpu_videocore_v3d::{JobBuffer, JobError, NvVertex, TileLayout};
use common::*;

/// (id, bytes) of every record of a list.
fn walk(list: &[u8]) -> Vec<(u8, Vec<u8>)> {
    records(cl::ALL, list)
        .map(|step| match step {
            Walked::Record { record, bytes, .. } => (record.opcode, bytes.to_vec()),
            other => panic!("not a whole record: {other:?}\n{}", decode_records(cl::ALL, list)),
        })
        .collect()
}

#[test]
fn the_binning_list_holds_the_documented_records_in_order() {
    let bufs = Buffers::new();
    let tris = one_triangle();
    let built = job::build(&triangle_job(&tris), &bufs.memory()).unwrap();
    assert_eq!(built.binning.start, BusAddress(BIN_BUS));
    let len = (built.binning.end.0 - built.binning.start.0) as usize;
    assert_eq!(len, BINNING_LIST_BYTES);
    let list = bytes(&bufs.binning, len);
    let recs = walk(&list);
    let ids: Vec<u8> = recs.iter().map(|r| r.0).collect();
    // §9: 112 first, 6 after the prefix state, 56 followed by a shader state (65); Linux
    // vc4_validate.c: the last two bytes are 7 then 4.
    assert_eq!(
        ids,
        [
            cl::TILE_BINNING_MODE_CONFIGURATION.opcode,
            cl::START_TILE_BINNING.opcode,
            cl::PRIMITIVE_LIST_FORMAT.opcode,
            cl::CLIP_WINDOW.opcode,
            cl::CONFIGURATION_BITS.opcode,
            cl::CLIPPER_XY_SCALING.opcode,
            cl::CLIPPER_Z_SCALE_AND_OFFSET.opcode,
            cl::VIEWPORT_OFFSET.opcode,
            cl::FLAT_SHADE_FLAGS.opcode,
            cl::NV_SHADER_STATE.opcode,
            cl::VERTEX_ARRAY_PRIMITIVES.opcode,
            cl::INCREMENT_SEMAPHORE.opcode,
            cl::FLUSH.opcode,
        ],
        "{}",
        decode_records(cl::ALL, &list)
    );
    assert_eq!(&list[len - 2..], [7, 4]);

    let mode = tile_binning_mode_configuration::Body::unpack(&recs[0].1).unwrap();
    assert_eq!(mode.tile_allocation_memory_address(), BusAddress(TILE_ALLOC_BUS));
    assert_eq!(mode.tile_allocation_memory_size(), 64 * 1024);
    assert_eq!(mode.tile_state_data_array_base_address(), BusAddress(TILE_STATE_BUS));
    assert_eq!((mode.width(), mode.height()), (3, 2), "130x70 pixels in 64x64 tiles");
    assert!(mode.auto_initialise_tile_state_data_array());
    assert_eq!(
        mode.tile_allocation_initial_block_size().unwrap(),
        tile_binning_mode_configuration::TileAllocationInitialBlockSize::V32Bytes
    );
    let format = primitive_list_format::Body::unpack(&recs[2].1).unwrap();
    assert_eq!(format.primitive_type().unwrap(), primitive_list_format::PrimitiveType::Triangles);
    let clip = clip_window::Body::unpack(&recs[3].1).unwrap();
    assert_eq!(
        (clip.clip_window_width_in_pixels(), clip.clip_window_height_in_pixels()),
        (130, 70)
    );
    let shader = nv_shader_state::Body::unpack(&recs[9].1).unwrap();
    assert_eq!(shader.memory_address_of_shader_record(), BusAddress(VERTICES_BUS));
    let prims = vertex_array_primitives::Body::unpack(&recs[10].1).unwrap();
    assert_eq!(prims.length(), 3);
    assert_eq!(prims.index_of_first_vertex(), 0);
    assert_eq!(prims.primitive_mode().unwrap(), vertex_array_primitives::PrimitiveMode::Triangles);
}

#[test]
fn the_rendering_list_clears_then_branches_to_every_tile_list_and_ends_the_frame_once() {
    let bufs = Buffers::new();
    let tris = one_triangle();
    let built = job::build(&triangle_job(&tris), &bufs.memory()).unwrap();
    let tiles = TileLayout::of(130, 70).unwrap();
    let len = (built.rendering.end.0 - built.rendering.start.0) as usize;
    assert_eq!(len, rendering_list_bytes(tiles.tiles()));
    let list = bytes(&bufs.rendering, len);
    let recs = walk(&list);
    let shown = decode_records(cl::ALL, &list).to_string();

    // Clear colours, then the rendering mode (§9: "optionally preceded by a Clear colors").
    let clear = clear_colors::Body::unpack(&recs[0].1).unwrap();
    assert_eq!(clear.clear_color(), 0xff20_4060_ff20_4060);
    let mode = tile_rendering_mode_configuration::Body::unpack(&recs[1].1).unwrap();
    assert_eq!(mode.memory_address(), BusAddress(FB_BUS));
    assert_eq!((mode.width(), mode.height()), (130, 70));
    assert_eq!(
        mode.non_hdr_frame_buffer_color_format().unwrap(),
        tile_rendering_mode_configuration::NonHdrFrameBufferColorFormat::Rgba8888
    );
    // The clearing store of tile (0, 0) stores nothing.
    assert_eq!(recs[2].0, cl::TILE_COORDINATES.opcode, "{shown}");
    let store = store_tile_buffer_general::Body::unpack(&recs[3].1).unwrap();
    assert_eq!(store.buffer_to_store().unwrap(), store_tile_buffer_general::BufferToStore::None);

    // Then each tile, row by row: coordinates, (first only) wait, branch, store.
    let mut at = 4;
    for y in 0..2u32 {
        for x in 0..3u32 {
            let index = y * 3 + x;
            let coords = tile_coordinates::Body::unpack(&recs[at].1).unwrap();
            assert_eq!((coords.tile_column_number(), coords.tile_row_number()), (x, y), "{shown}");
            at += 1;
            if index == 0 {
                assert_eq!(recs[at].0, cl::WAIT_ON_SEMAPHORE.opcode, "{shown}");
                at += 1;
            }
            let branch = branch_to_sub_list::Body::unpack(&recs[at].1).unwrap();
            assert_eq!(
                branch.absolute_branch_address(),
                BusAddress(TILE_ALLOC_BUS + u64::from(index) * 32),
                "tile {index}'s list at 32 bytes per tile"
            );
            at += 1;
            let store = if index == 5 {
                cl::STORE_MULTI_SAMPLE_RESOLVED_TILE_COLOR_BUFFER_AND_SIGNAL_END_OF_FRAME.opcode
            } else {
                cl::STORE_MULTI_SAMPLE_RESOLVED_TILE_COLOR_BUFFER.opcode
            };
            assert_eq!(recs[at].0, store, "{shown}");
            at += 1;
        }
    }
    assert_eq!(at, recs.len(), "{shown}");
    let waits = recs.iter().filter(|r| r.0 == cl::WAIT_ON_SEMAPHORE.opcode).count();
    assert_eq!(waits, 1, "only the first tile waits for the binner");
}

#[test]
fn the_shader_record_and_vertices_follow_table_46_and_figure_12() {
    let bufs = Buffers::new();
    let tris = one_triangle();
    job::build(&triangle_job(&tris), &bufs.memory()).unwrap();
    let words = |at: usize, n: usize| {
        let mut w = vec![0u32; n];
        bufs.vertices.read_slice(at, &mut w).unwrap();
        w
    };
    let record = words(0, 4);
    // Byte 0 flags (single-threaded), byte 1 stride (3 + 2 varyings words), byte 2 uniforms
    // (unused), byte 3 varyings.
    assert_eq!(record[0].to_le_bytes(), [1, 20, 0, 2]);
    assert_eq!(record[1], SHADER_BUS as u32);
    assert_eq!(record[2], UNIFORMS_BUS as u32);
    assert_eq!(record[3], VERTICES_BUS as u32 + 16);
    // Vertex 0: (10, 5.5) px = (160, 88) sixteenths; Z 0, 1/W 1, varyings 1, 0.
    let v0 = words(16, 5);
    assert_eq!(v0[0], 160 | 88 << 16);
    assert_eq!(&v0[1..], [0.0f32.to_bits(), 1.0f32.to_bits(), 1.0f32.to_bits(), 0]);
    // Vertex 1: x 120.25 px = 1924; vertex 2: x -3 px = -48 as s12.4 in the low half.
    assert_eq!(words(36, 1)[0] & 0xffff, 1924);
    assert_eq!(words(56, 1)[0], (-48i16 as u16 as u32) | (60 * 16) << 16);
}

#[test]
fn job_errors_are_typed_and_checked_before_anything_is_written() {
    let bufs = Buffers::new();
    let tris = one_triangle();
    let job = triangle_job(&tris);

    let mut small = Buffers::new();
    small.tile_state = region(4 * 48, TILE_STATE_BUS); // 6 tiles need 288 bytes
    assert_eq!(
        job::build(&job, &small.memory()).unwrap_err(),
        JobError::BufferTooSmall { buffer: JobBuffer::TileState, needed: 288, size: 192 }
    );
    assert_eq!(bytes(&small.binning, 4), [0; 4], "nothing written");

    let mut misaligned = Buffers::new();
    misaligned.tile_state = region(4096, TILE_STATE_BUS + 8);
    assert_eq!(
        job::build(&job, &misaligned.memory()).unwrap_err(),
        JobError::Misaligned { buffer: JobBuffer::TileState, align: 16 }
    );

    let mut crossing = Buffers::new();
    crossing.tile_allocation = region(64 * 1024, 0x1000_0000 - 0x4000);
    assert_eq!(
        job::build(&job, &crossing.memory()).unwrap_err(),
        JobError::CrossesBinnerBoundary { buffer: JobBuffer::TileAllocation }
    );

    let empty = baregpu_videocore_v3d::RenderJob { triangles: &[], ..job };
    assert_eq!(job::build(&empty, &bufs.memory()).unwrap_err(), JobError::NoTriangles);
    let varied = baregpu_videocore_v3d::RenderJob { varyings: 9, ..job };
    assert_eq!(
        job::build(&varied, &bufs.memory()).unwrap_err(),
        JobError::TooManyVaryings { varyings: 9 }
    );
    let mut huge = job;
    huge.framebuffer.width = 64 * 256;
    assert!(matches!(
        job::build(&huge, &bufs.memory()).unwrap_err(),
        JobError::BadFramebuffer { width: 16384, .. }
    ));
    let far = [[NvVertex::at(3000.0, 0.0), NvVertex::at(0.0, 0.0), NvVertex::at(0.0, 1.0)]];
    assert_eq!(
        job::build(&triangle_job(&far), &bufs.memory()).unwrap_err(),
        JobError::CoordinateOutOfRange
    );
    let mut far_shader = job;
    far_shader.shader.code = BusAddress(1 << 32);
    assert_eq!(
        job::build(&far_shader, &bufs.memory()).unwrap_err(),
        JobError::AddressAbove4GiB { address: 1 << 32 }
    );
    let mut short = Buffers::new();
    short.rendering = region(32, RENDER_BUS);
    assert!(matches!(
        job::build(&job, &short.memory()).unwrap_err(),
        JobError::BufferTooSmall { buffer: JobBuffer::RenderingList, .. }
    ));
}

#[test]
fn a_list_buffer_without_whole_dwords_for_the_list_is_refused_not_cut_short() {
    // A binning buffer of exactly the list's 77 bytes: its last dword is partial, so the
    // closing Flush could not be stored (the list used to end without it and the binner never
    // flushed its tile lists). Now refused up front with the size that holds it.
    let mut bufs = Buffers::new();
    bufs.binning = exact_region(BINNING_LIST_BYTES, BIN_BUS);
    assert_ne!(BINNING_LIST_BYTES % 4, 0, "the list ends in a partial dword");
    let tris = one_triangle();
    let err = job::build(&triangle_job(&tris), &bufs.memory()).unwrap_err();
    assert_eq!(
        err,
        JobError::BufferTooSmall {
            buffer: JobBuffer::BinningList,
            needed: job::list_buffer_bytes(BINNING_LIST_BYTES),
            size: BINNING_LIST_BYTES,
        }
    );
    bufs.binning = exact_region(job::list_buffer_bytes(BINNING_LIST_BYTES), BIN_BUS);
    let built = job::build(&triangle_job(&tris), &bufs.memory()).unwrap();
    let list = bytes(&bufs.binning, BINNING_LIST_BYTES);
    assert_eq!(built.binning.end.0 - built.binning.start.0, BINNING_LIST_BYTES as u64);
    assert_eq!(&list[BINNING_LIST_BYTES - 2..], [7, 4], "Increment Semaphore, then Flush");
}

#[test]
fn the_list_sink_offers_only_whole_dwords() {
    use baregpu_videocore_v3d::ring::stream::CommandSink;
    let region = exact_region(6, BIN_BUS);
    let mut sink = job::RegionSink::new(&region);
    assert!(sink.reserve(5).is_err(), "byte 4 is in a partial dword");
    sink.reserve(4).unwrap();
    sink.push_slice(&[1, 2, 3, 4]).unwrap();
    assert_eq!(bytes(&region, 4), [1, 2, 3, 4]);
}

#[test]
fn tile_memory_is_sized_from_the_document() {
    let layout = TileLayout::of(1920, 1080).unwrap();
    assert_eq!((layout.tiles_x, layout.tiles_y), (30, 17));
    assert_eq!(layout.tile_state_bytes(), 30 * 17 * 48);
    assert_eq!(layout.tile_allocation_bytes(), (30 * 17 * 32_usize).next_multiple_of(256));
    assert!(TileLayout::of(0, 10).is_err());
    assert!(TileLayout::of(64 * 255, 64 * 255).is_ok());
}
