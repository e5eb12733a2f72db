//! Binning and rendering through the control-list executor (§8 "System Operation", §9):
//! lists written by hand from Table 38's byte layouts, pictures compared pixel by pixel with
//! the reference rasteriser in `cle_support`.

mod cle_support;

use baregpu_hal::RegisterIo;
use baregpu_hal::register::Register;
use baregpu_regs::packet::{Walked, records};
use baregpu_regs::vc4::packets;
use baregpu_regs::vc4::v3d::{
    V3D_BFC, V3D_CT0CA, V3D_CT1CA, V3D_CT1CS, V3D_INTCTL, V3D_INTENA, V3D_RFC,
};
use cle_support::*;
use gpu_device_model::Pacing;
use v3d_model::cle::{MAX_UNITS_PER_TICK, TILE_PIXELS};

const W: u32 = 128;
const H: u32 = 128;
const CLEAR: u32 = 0xFF20_4060;

/// A scene: NV records (uniforms address = colour), vertices (12.4 pixels, z), triangles as
/// (record, first vertex).
struct Scene {
    vertices: Vec<(i32, i32, f32)>,
    /// Per triangle: which NV record (colour) and the three vertex indices.
    draws: Vec<(u32, [u32; 3])>,
    depth: u8,
    /// Clip window (left, bottom, width, height); the whole frame by default.
    clip: [u16; 4],
}

const RED: u32 = 0xFF00_00FF;
const FULL: [u16; 4] = [0, 0, W as u16, H as u16];
const GREEN: u32 = 0xFF00_FF00;

fn setup(gpu: &Gpu, scene: &Scene) {
    let render = render_list((W / 64) as u8, (H / 64) as u8, W as u16, H as u16, CLEAR);
    setup_with(gpu, scene, &render);
}

fn setup_with(gpu: &Gpu, scene: &Scene, render: &[u8]) {
    let mut v = Vec::new();
    for &(x, y, z) in &scene.vertices {
        v.extend(vertex(x, y, z, 1.0, &[]));
    }
    gpu.write_memory(map::VERTICES.into(), &v).unwrap();
    gpu.write_memory(map::NV_RECORD.into(), &nv_record(12, 0, map::CODE, RED, map::VERTICES))
        .unwrap();
    gpu.write_memory(map::NV_RECORD_2.into(), &nv_record(12, 0, map::CODE, GREEN, map::VERTICES))
        .unwrap();
    // One 16-bit index list per draw, after the vertices.
    let mut bin = vec![
        bin_config(map::TILE_ALLOC, 0x1_0000, map::TSDA, (W / 64) as u8, (H / 64) as u8, AUTO_INIT),
        vec![START_BINNING],
        prim_format(),
        config_bits(scene.depth, true),
        // State the model keeps without using (Table 38 97, 103, 105, 106) and a clip window
        // of the whole frame.
        flat_shade_flags(0),
        clip_window(scene.clip[0], scene.clip[1], scene.clip[2], scene.clip[3]),
        viewport_offset(0, 0),
        clipper_xy(W as f32 * 8.0, H as f32 * 8.0),
        clipper_z(0.5, 0.5),
    ];
    for (n, &(colour, idx)) in scene.draws.iter().enumerate() {
        let at = map::VERTICES + 0x800 + 8 * n as u32;
        let bytes: Vec<u8> = idx.iter().flat_map(|&i| (i as u16).to_le_bytes()).collect();
        gpu.write_memory(at.into(), &bytes).unwrap();
        let record = if colour == RED { map::NV_RECORD } else { map::NV_RECORD_2 };
        bin.push(nv_state(record));
        bin.push(indexed(3, at, 0xFFFF));
    }
    bin.push(vec![FLUSH]);
    bin.push(vec![INCREMENT_SEMAPHORE]);
    // Rendering first: it waits on the semaphore the binning list increments.
    run_frame(gpu, &list(&bin), render);
}

fn render(scene: &Scene, pacing: Pacing) -> (Vec<u32>, Gpu) {
    let gpu = gpu(Shader::UniformsAsColour, pacing);
    gpu.write32(V3D_INTENA::OFFSET, V3D_INTENA::EI_FRDONE.mask() | V3D_INTENA::EI_FLDONE.mask());
    setup(&gpu, scene);
    wait(&gpu, "the frame", |g| reg(g, V3D_RFC::OFFSET) == 1);
    assert_eq!(gpu.error_code(), 0);
    (frame(&gpu, W, H), gpu)
}

fn reference(scene: &Scene) -> Vec<u32> {
    let mut colour = vec![CLEAR; (W * H) as usize];
    let mut depth = vec![f32::INFINITY; (W * H) as usize];
    for &(c, idx) in &scene.draws {
        let v = idx.map(|i| scene.vertices[i as usize]);
        let p = v.map(|(x, y, _)| (i64::from(x), i64::from(y)));
        for y in 0..H as i64 {
            for x in 0..W as i64 {
                let [l, b, w, h] = scene.clip.map(i64::from);
                let clipped = x < l || x >= l + w || y < b || y >= b + h;
                if !clipped && reference_covers(p, x, y) {
                    let i = (y as u32 * W + x as u32) as usize;
                    // Flat z per triangle in these scenes; LT (1) or ALWAYS (7).
                    let z = v[0].2;
                    if scene.depth == 7 || z < depth[i] {
                        depth[i] = z;
                        colour[i] = c;
                    }
                }
            }
        }
    }
    colour
}

fn px(x: i32) -> i32 {
    x * 16
}

fn one_triangle() -> Scene {
    // Crosses all four tiles, with edges at fractional positions.
    Scene {
        vertices: vec![
            (px(10) + 3, px(5) + 9, 0.5),
            (px(120) + 1, px(40), 0.5),
            (px(50) + 7, px(123) + 15, 0.5),
        ],
        draws: vec![(RED, [0, 1, 2])],
        depth: 7,
        clip: FULL,
    }
}

#[test]
fn a_binned_triangle_renders_exactly_the_reference_pixels_under_every_pacing() {
    let scene = one_triangle();
    let want = reference(&scene);
    assert!(want.iter().filter(|&&c| c == RED).count() > 1000, "the triangle covers pixels");
    for pacing in PACINGS {
        let (got, gpu) = render(&scene, pacing);
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g, w, "pixel ({}, {}) under {pacing}", i as u32 % W, i as u32 / W);
        }
        // §10 Tables 56/57, 75: one flush, one frame, both interrupts latched.
        assert_eq!(reg(&gpu, V3D_BFC::OFFSET), 1);
        let int = reg(&gpu, V3D_INTCTL::OFFSET);
        assert_eq!(int & 3, V3D_INTCTL::INT_FRDONE.mask() | V3D_INTCTL::INT_FLDONE.mask());
        assert!(gpu.take_interrupts() >= 1);
        // Writing 1 clears the counts (Tables 56, 57) and the interrupt bits (Table 75).
        gpu.write32(V3D_BFC::OFFSET, 1);
        gpu.write32(V3D_RFC::OFFSET, 1);
        gpu.write32(V3D_INTCTL::OFFSET, int);
        assert_eq!(reg(&gpu, V3D_BFC::OFFSET) | reg(&gpu, V3D_RFC::OFFSET), 0);
        assert_eq!(reg(&gpu, V3D_INTCTL::OFFSET), 0);
        // The same lists again make the same frame (state and tile lists start afresh).
        gpu.write_memory(map::FRAME.into(), &vec![0u8; (W * H * 4) as usize]).unwrap();
        let (bin_end, render_end) = (reg(&gpu, V3D_CT0CA::OFFSET), reg(&gpu, V3D_CT1CA::OFFSET));
        submit(&gpu, 1, map::RENDER_LIST, render_end);
        submit(&gpu, 0, map::BIN_LIST, bin_end);
        wait(&gpu, "the second frame", |g| reg(g, V3D_RFC::OFFSET) == 1);
        assert_eq!(reg(&gpu, V3D_BFC::OFFSET), 1);
        assert_eq!(frame(&gpu, W, H), want, "second frame under {pacing}");
        let stats = gpu.model().model().cle.stats().clone();
        assert!(stats.max_tick_units <= MAX_UNITS_PER_TICK);
        assert!(stats.batches > 0);
        // Both threads stopped at their end addresses (§10 Table 49: RUN 0, SUBS 0).
        assert_eq!(reg(&gpu, V3D_CT1CS::OFFSET) & 0x38, 0);
    }
}

#[test]
fn edges_through_pixel_centres_follow_the_top_left_rule_and_shared_edges_draw_once() {
    // A quad with corners on pixel centres (x.5, y.5), split along its diagonal: pixel
    // centres lie exactly on all five edges.
    let c = |x: i32, y: i32| (px(x) + 8, px(y) + 8, 0.5);
    let scene = Scene {
        vertices: vec![c(20, 70), c(100, 70), c(100, 110), c(20, 110)],
        draws: vec![(RED, [0, 1, 2]), (GREEN, [0, 2, 3])],
        depth: 7,
        clip: FULL,
    };
    let want = reference(&scene);
    let p =
        scene.vertices.iter().map(|&(x, y, _)| (i64::from(x), i64::from(y))).collect::<Vec<_>>();
    for y in 70..=110 {
        for x in 20..=100 {
            let a = reference_covers([p[0], p[1], p[2]], x, y) as u32;
            let b = reference_covers([p[0], p[2], p[3]], x, y) as u32;
            // With y up (row 0 at the bottom), the top edge (y = 110.5) and the left edge are
            // in, the bottom and right edges out; the diagonal belongs to one triangle.
            let inside = x < 100 && y > 70;
            assert_eq!(a + b, inside as u32, "reference at ({x}, {y})");
        }
    }
    let (got, _) = render(&scene, Pacing::Seeded(11));
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "pixel ({}, {})", i as u32 % W, i as u32 / W);
    }
}

#[test]
fn an_lt_format_frame_holds_the_same_picture_in_micro_tiles() {
    // §11: 64-byte micro-tiles of 4x4 32-bit pixels in raster order, micro-tiles in raster
    // order. Record 113 bits 7:6 of its flags = 2 (LT-format).
    let scene = one_triangle();
    let gpu = gpu(Shader::UniformsAsColour, Pacing::Seeded(21));
    let mut render = render_list((W / 64) as u8, (H / 64) as u8, W as u16, H as u16, CLEAR);
    let mode = render_config(map::FRAME, W as u16, H as u16, RGBA8888 | LT_FORMAT);
    let at = render.windows(mode.len()).position(|w| w[0] == 113).unwrap();
    render[at..at + mode.len()].copy_from_slice(&mode);
    setup_with(&gpu, &scene, &render);
    wait(&gpu, "the frame", |g| reg(g, V3D_RFC::OFFSET) == 1);
    assert_eq!(gpu.error_code(), 0);
    let mut b = vec![0u8; (W * H * 4) as usize];
    gpu.read_memory(map::FRAME.into(), &mut b).unwrap();
    let want = reference(&scene);
    for y in 0..H {
        for x in 0..W {
            let micro = (y / 4) * (W / 4) + x / 4;
            let o = (micro * 64 + ((y % 4) * 4 + x % 4) * 4) as usize;
            let got = u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
            assert_eq!(got, want[(y * W + x) as usize], "pixel ({x}, {y})");
        }
    }
}

#[test]
fn the_clip_window_limits_the_pixels_drawn() {
    // Table 38 id 102: left 30, bottom 20, 50 x 70 pixels (across all four tiles).
    let scene = Scene { clip: [30, 20, 50, 70], ..one_triangle() };
    let want = reference(&scene);
    assert!(want.iter().filter(|&&c| c == RED).count() > 500);
    let (got, _) = render(&scene, Pacing::Seeded(8));
    assert_eq!(got, want);
}

#[test]
fn configuration_bits_cull_by_facing_and_flat_shading_takes_the_last_vertex() {
    // Table 38 id 96 bit 0 only: forward-facing (counter-clockwise, y up) triangles only.
    let gpu = gpu(Shader::FirstVarying, Pacing::Seeded(12));
    let tri = |a: (i32, i32), b: (i32, i32), c: (i32, i32), v: [f32; 3]| {
        let mut out = Vec::new();
        for (p, v) in [a, b, c].into_iter().zip(v) {
            out.extend(vertex(px(p.0), px(p.1), 0.5, 1.0, &[v]));
        }
        out
    };
    let mut v = tri((0, 0), (60, 0), (0, 60), [10.0, 20.0, 30.0]); // counter-clockwise
    v.extend(tri((64, 64), (64, 124), (124, 64), [40.0, 50.0, 60.0])); // clockwise
    gpu.write_memory(map::VERTICES.into(), &v).unwrap();
    gpu.write_memory(map::NV_RECORD.into(), &nv_record(16, 1, map::CODE, 0, map::VERTICES))
        .unwrap();
    let bin = list(&[
        bin_config(map::TILE_ALLOC, 0x1_0000, map::TSDA, 2, 2, AUTO_INIT),
        vec![START_BINNING],
        prim_format(),
        vec![96, 0b01, 0x70, 0],
        flat_shade_flags(1),
        nv_state(map::NV_RECORD),
        triangles(6, 0),
        vec![FLUSH],
        vec![INCREMENT_SEMAPHORE],
    ]);
    run_frame(&gpu, &bin, &render_list(2, 2, W as u16, H as u16, 0));
    wait(&gpu, "the frame", |g| reg(g, V3D_RFC::OFFSET) == 1);
    assert_eq!(gpu.error_code(), 0);
    let got = frame(&gpu, W, H);
    assert_eq!(got[(10 * W + 10) as usize], 0xFF00_0000 | 30, "flat: the last vertex's value");
    assert_eq!(got[(5 * W + 50) as usize], 0xFF00_0000 | 30);
    assert_eq!(got[(70 * W + 70) as usize], 0, "the clockwise triangle is culled");
}

#[test]
fn the_nearer_of_two_overlapping_triangles_wins_the_depth_test_in_either_order() {
    let near = [(px(0), px(0), 0.25), (px(100), px(10), 0.25), (px(30), px(90), 0.25)];
    let far = [(px(20), px(20), 0.75), (px(127), px(60), 0.75), (px(60), px(127), 0.75)];
    for near_first in [true, false] {
        let mut vertices = Vec::new();
        let (a, b) = if near_first { (near, far) } else { (far, near) };
        vertices.extend(a);
        vertices.extend(b);
        let colour = |v: &[(i32, i32, f32); 3]| if v[0].2 < 0.5 { GREEN } else { RED };
        let scene = Scene {
            vertices,
            draws: vec![(colour(&a), [0, 1, 2]), (colour(&b), [3, 4, 5])],
            depth: 1, // LT
            clip: FULL,
        };
        let want = reference(&scene);
        assert!(want.contains(&GREEN) && want.contains(&RED));
        let (got, _) = render(&scene, Pacing::Seeded(3));
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(
                g,
                w,
                "pixel ({}, {}), near first: {near_first}",
                i as u32 % W,
                i as u32 / W
            );
        }
    }
}

/// Walk tile `tile`'s list in tile-allocation memory with the shared record table, following
/// branches and reading the compressed triangle codes (Table 39 coding 3, escape); returns the
/// record ids and the triangles.
fn walk_tile_list(gpu: &Gpu, tile: u32) -> (Vec<u8>, Vec<[u16; 3]>) {
    let mut memory = vec![0u8; 0x1_0000];
    gpu.read_memory(map::TILE_ALLOC.into(), &mut memory).unwrap();
    let mut at = (tile * 32) as usize;
    let (mut ids, mut tris) = (Vec::new(), Vec::new());
    'walk: loop {
        for step in records(packets::ALL, &memory[at..]) {
            match step {
                Walked::Record { at: off, record, bytes } => {
                    ids.push(record.opcode);
                    if record.opcode == packets::RETURN_FROM_SUB_LIST.opcode {
                        break 'walk;
                    }
                    if record.opcode == packets::BRANCH.opcode {
                        let to =
                            packets::branch::Body::unpack(bytes).unwrap().absolute_branch_address();
                        at = (to.0 - u64::from(map::TILE_ALLOC)) as usize;
                        continue 'walk;
                    }
                    let _ = off;
                }
                Walked::OpenEnded { at: off, record, .. } => {
                    assert_eq!(record.opcode, packets::COMPRESSED_PRIMITIVE_LIST.opcode);
                    ids.push(record.opcode);
                    let mut p = at + off + 1;
                    loop {
                        match memory[p] {
                            128 => {
                                p += 1;
                                break;
                            }
                            129 => {
                                let w = |i: usize| {
                                    u16::from_le_bytes([memory[p + i], memory[p + i + 1]])
                                };
                                tris.push([w(1), w(3), w(5)]);
                                p += 7;
                            }
                            other => panic!("tile {tile}: unexpected code {other} at {p:#x}"),
                        }
                    }
                    at = p;
                    continue 'walk;
                }
                other => panic!("tile {tile}: {other:?}"),
            }
        }
        panic!("tile {tile}: the list ran off the memory read");
    }
    (ids, tris)
}

#[test]
fn tile_lists_hold_state_and_exactly_the_triangles_that_touch_each_tile() {
    // Triangle 0 inside tile (0, 0); triangle 1 inside tile (1, 1); triangle 2 everywhere.
    let scene = Scene {
        vertices: vec![
            (px(2), px(2), 0.5),
            (px(40), px(3), 0.5),
            (px(10), px(50), 0.5),
            (px(70), px(70), 0.5),
            (px(120), px(72), 0.5),
            (px(80), px(125), 0.5),
            (px(1), px(1), 0.5),
            (px(127), px(2), 0.5),
            (px(64), px(127), 0.5),
        ],
        draws: vec![(RED, [0, 1, 2]), (RED, [3, 4, 5]), (GREEN, [6, 7, 8])],
        depth: 7,
        clip: FULL,
    };
    let gpu = gpu(Shader::UniformsAsColour, Pacing::RunToIdle);
    setup(&gpu, &scene);
    wait(&gpu, "binning", |g| reg(g, V3D_BFC::OFFSET) == 1);
    let expect: [&[[u16; 3]]; 4] =
        [&[[0, 1, 2], [6, 7, 8]], &[[6, 7, 8]], &[[6, 7, 8]], &[[3, 4, 5], [6, 7, 8]]];
    for tile in 0..4 {
        let (ids, tris) = walk_tile_list(&gpu, tile);
        assert_eq!(tris, expect[tile as usize], "tile {tile}: {ids:?}");
        // The state after Start Tile Binning comes first (56, 65, 96), then the primitives,
        // and Flush ends the list with Return from Sub-list (Table 38 id 4).
        assert_eq!(&ids[..3], &[56, 65, 96], "tile {tile}");
        assert_eq!(ids.last(), Some(&18));
        // The state and a triangle overflow a 32-byte initial block into pool blocks.
        let two = expect[tile as usize].len() == 2;
        assert!(ids.contains(&packets::BRANCH.opcode), "tile {tile}: {ids:?}");
        if two {
            assert_eq!(ids.iter().filter(|&&id| id == 65).count(), 2, "state again: {ids:?}");
        }
    }
    wait(&gpu, "the frame", |g| reg(g, V3D_RFC::OFFSET) == 1);
    let got = frame(&gpu, W, H);
    assert_eq!(got, reference(&scene));
}

#[test]
fn varyings_are_interpolated_perspective_correctly_from_the_section_6_coefficients() {
    let gpu = gpu(Shader::FirstVarying, Pacing::RunToIdle);
    // Red = the varying: 0 at one vertex, 255 at another, W different per vertex.
    let v = [
        (px(0), px(0), 0.5, 1.0, 0.0f32),
        (px(127), px(0), 0.5, 0.25, 255.0),
        (px(0), px(127), 0.5, 0.5, 100.0),
    ];
    let mut bytes = Vec::new();
    for &(x, y, z, q, a) in &v {
        bytes.extend(vertex(x, y, z, q, &[a]));
    }
    gpu.write_memory(map::VERTICES.into(), &bytes).unwrap();
    gpu.write_memory(map::NV_RECORD.into(), &nv_record(16, 1, map::CODE, 0, map::VERTICES))
        .unwrap();
    let bin = bin_list(2, 2, 0x1_0000, triangles(3, 0));
    run_frame(&gpu, &bin, &render_list(2, 2, W as u16, H as u16, 0));
    wait(&gpu, "the frame", |g| reg(g, V3D_RFC::OFFSET) == 1);
    let got = frame(&gpu, W, H);
    // Perspective-correct reference: barycentrics from the pixel centre, weighted by 1/W.
    let p = v.map(|(x, y, ..)| (f64::from(x) / 16.0, f64::from(y) / 16.0));
    let area = (p[1].0 - p[0].0) * (p[2].1 - p[0].1) - (p[2].0 - p[0].0) * (p[1].1 - p[0].1);
    let mut checked = 0;
    for y in 0..H {
        for x in 0..W {
            let c = (f64::from(x) + 0.5, f64::from(y) + 0.5);
            let b1 =
                ((c.0 - p[0].0) * (p[2].1 - p[0].1) - (p[2].0 - p[0].0) * (c.1 - p[0].1)) / area;
            let b2 =
                ((p[1].0 - p[0].0) * (c.1 - p[0].1) - (c.0 - p[0].0) * (p[1].1 - p[0].1)) / area;
            let b = [1.0 - b1 - b2, b1, b2];
            if b.iter().any(|&w| w < 1e-3) {
                continue; // leave edge pixels to the coverage tests
            }
            let q: f64 = (0..3).map(|i| b[i] * f64::from(v[i].3)).sum();
            let a: f64 =
                (0..3).map(|i| b[i] * f64::from(v[i].3) * f64::from(v[i].4)).sum::<f64>() / q;
            let want = a.round() as i64;
            let red = i64::from(got[(y * W + x) as usize] & 0xFF);
            assert!((red - want).abs() <= 1, "pixel ({x}, {y}): {red}, want {want}");
            checked += 1;
        }
    }
    assert!(checked > 5000);
    let _ = TILE_PIXELS;
}
