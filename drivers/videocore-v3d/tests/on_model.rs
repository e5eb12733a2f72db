//! The driver against the emulated V3D (`v3d-model`) in process: probe, the assembler's
//! user programs run through the request queue and compared with the CPU, render jobs
//! compared pixel by pixel with a reference rasterised here, and the binner's out-of-memory
//! refills from the overflow pool.

mod emulated;

use baregpu_qpu_asm::programs::{self, SAXPY, VECTOR_ADD, VPM_STORE, saxpy_uniforms};
use baregpu_videocore_v3d::hal::dma::BusAddress;
use baregpu_videocore_v3d::{NvVertex, OverflowPool, TileBufferSize, UserProgram, WaitError};
use emulated::*;

#[test]
fn the_emulated_v3d_probes_as_a_bcm2835() {
    let gpu = gpu();
    let v3d = driver(&gpu, None);
    let id = v3d.identity();
    assert_eq!(id.tech_version, 2, "V3D technology version 2 (VideoCore IV)");
    assert_eq!((id.slices, id.qpus_per_slice, id.tmus_per_slice), (3, 4, 2), "12 QPUs");
    assert_eq!(id.semaphores, 16);
    assert_eq!(id.vpm_bytes, 12 * 1024);
    assert!(id.hdr);
    assert_eq!(id.tile_buffer, TileBufferSize::Full);
    assert!(id.tile_double_buffer);
    assert!(id.vri_full);
    assert_eq!(gpu.error_code(), 0);
    assert_eq!(gpu.model().model().stats().writes_dropped, 0, "bring-up wrote real registers");
}

#[test]
fn vpm_store_writes_the_element_numbers_through_the_driver() {
    let gpu = gpu();
    let mut v3d = driver(&gpu, None);
    v3d.reserve_user_vpm(256).expect("VPM for user programs");
    let code = program_code(&gpu, VPM_STORE);
    let out = alloc(&gpu, 64);
    out.write_slice(0, &[0xDEAD_BEEF; 16]).unwrap();
    let uniforms = upload(&gpu, &[out.bus_address().0 as u32]);
    let fence = v3d.run_program(&user_program(&code, &uniforms, 1)).expect("queued");
    v3d.wait(&fence, TIMEOUT).expect("the program completed");
    assert_eq!(read_words(&out, 16), (0..16).collect::<Vec<u32>>());
    assert_eq!(v3d.programs_completed(), 1);
}

#[test]
fn a_program_reads_uniforms_written_after_an_earlier_program_cached_their_line() {
    // Two VPM stores, one submission each, their uniforms 8 bytes apart (one cache line).
    // The second's uniforms are written after the first ran, when the uniforms cache holds
    // the line: without a cache clear before the second it reads the stale zero and its
    // DMA faults on address 0.
    let gpu = gpu();
    let mut v3d = driver(&gpu, None);
    v3d.reserve_user_vpm(256).unwrap();
    let code = program_code(&gpu, VPM_STORE);
    let (first, second) = (alloc(&gpu, 64), alloc(&gpu, 64));
    let uniforms = alloc(&gpu, 64);
    uniforms.write_u32(0, first.bus_address().0 as u32).unwrap();
    let program = |at: usize| UserProgram {
        code: code.bus_address(),
        uniforms: BusAddress(uniforms.bus_address().0 + at as u64),
        uniforms_len: 1,
    };
    let fence = v3d.run_program(&program(0)).unwrap();
    v3d.wait(&fence, TIMEOUT).expect("first");
    uniforms.write_u32(8, second.bus_address().0 as u32).unwrap();
    let fence = v3d.run_program(&program(8)).unwrap();
    v3d.wait(&fence, TIMEOUT).expect("second: its uniform read fresh");
    assert_eq!(gpu.error_code(), 0);
    assert_eq!(read_words(&second, 16), (0..16).collect::<Vec<u32>>());
}

#[test]
fn vector_add_matches_the_cpu() {
    let gpu = gpu();
    let mut v3d = driver(&gpu, None);
    v3d.reserve_user_vpm(256).unwrap();
    let a: Vec<u32> = (0..16).map(|i| 1000 * i + 7).collect();
    let b: Vec<u32> = (0..16).map(|i| u32::MAX - 3 * i).collect();
    let (ab, bb, cb) = (upload(&gpu, &a), upload(&gpu, &b), alloc(&gpu, 64));
    let code = program_code(&gpu, VECTOR_ADD);
    let addr = |r: &Buffer<'_>| r.bus_address().0 as u32;
    let uniforms = upload(&gpu, &[addr(&ab), addr(&bb), addr(&cb)]);
    let fence = v3d.run_program(&user_program(&code, &uniforms, 3)).unwrap();
    v3d.wait(&fence, TIMEOUT).expect("vector add");
    let cpu: Vec<u32> = a.iter().zip(&b).map(|(x, y)| x.wrapping_add(*y)).collect();
    assert_eq!(read_words(&cb, 16), cpu);
}

#[test]
fn saxpy_over_twelve_qpus_matches_the_cpu() {
    const QPUS: u32 = 12;
    const ROWS_EACH: u32 = 4;
    const ROWS: u32 = QPUS * ROWS_EACH;
    const ROW_BYTES: u32 = 64;
    let gpu = gpu();
    let mut v3d = driver(&gpu, None);
    v3d.reserve_user_vpm(QPUS * ROW_BYTES).unwrap();
    let x: Vec<f32> = (0..ROWS * 16).map(|i| i as f32 * 0.25 - 40.0).collect();
    let y: Vec<f32> = (0..ROWS * 16).map(|i| 3.5 - i as f32 * 0.125).collect();
    let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
    let (xb, yb) = (upload(&gpu, &bits(&x)), upload(&gpu, &bits(&y)));
    let out = alloc(&gpu, (ROWS * ROW_BYTES) as usize);
    let code = program_code(&gpu, SAXPY);
    let a = 1.75f32;
    let at = |b: &Buffer<'_>, q: u32| b.bus_address().0 as u32 + q * ROWS_EACH * ROW_BYTES;
    let uniforms: Vec<Buffer<'_>> = (0..QPUS)
        .map(|q| {
            let u = saxpy_uniforms(
                a,
                at(&xb, q),
                at(&yb, q),
                at(&out, q),
                ROWS_EACH,
                ROW_BYTES,
                q as u8,
            );
            upload(&gpu, &u)
        })
        .collect();
    let fence = v3d
        .submit(QPUS as usize + 1, |s| {
            for u in &uniforms {
                s.program(&user_program(&code, u, 8))?;
            }
            s.fence()
        })
        .expect("twelve programs in one submission");
    v3d.wait(&fence, TIMEOUT).expect("saxpy");
    let cpu: Vec<u32> = x.iter().zip(&y).map(|(x, y)| (a * x + y).to_bits()).collect();
    assert_eq!(read_words(&out, (ROWS * 16) as usize), cpu);
    let stats = gpu.model().model().stats();
    assert_eq!(stats.user_programs_completed, u64::from(QPUS));
    assert_eq!(v3d.stats().doorbells, u64::from(QPUS), "one SRQPC write per program");
}

const W: u16 = SCENE_W;
const H: u16 = SCENE_H;
const CLEAR: u32 = 0xFF40_2010;

const RED: u32 = 0xFF00_00FF;

fn one_triangle() -> [[NvVertex; 3]; 1] {
    [[v(10.3, 5.6, [0.0; 3]), v(60.5, 120.2, [0.0; 3]), v(185.0, 40.75, [0.0; 3])]]
}

/// The colour of the varyings interpolated at (`px`, `py`)'s centre (W = 1: linear), as the
/// mul pipe's float-to-8-bit colour pack gives it, red in the low byte, alpha 1.0.
fn shaded(t: &[NvVertex; 3], px: u32, py: u32) -> [f64; 3] {
    let p = subpixels(t).map(|(x, y)| (x as f64 / 16.0, y as f64 / 16.0));
    let (cx, cy) = (f64::from(px) + 0.5, f64::from(py) + 0.5);
    let area = (p[1].0 - p[0].0) * (p[2].1 - p[0].1) - (p[2].0 - p[0].0) * (p[1].1 - p[0].1);
    let w1 = ((cx - p[0].0) * (p[2].1 - p[0].1) - (p[2].0 - p[0].0) * (cy - p[0].1)) / area;
    let w2 = ((p[1].0 - p[0].0) * (cy - p[0].1) - (cx - p[0].0) * (p[1].1 - p[0].1)) / area;
    let w0 = 1.0 - w1 - w2;
    core::array::from_fn(|c| {
        let (a, b, d) = (t[0].varyings[c], t[1].varyings[c], t[2].varyings[c]);
        (w0 * f64::from(a) + w1 * f64::from(b) + w2 * f64::from(d)).clamp(0.0, 1.0) * 255.0
    })
}

/// Reference picture: per pixel the last triangle covering it, coloured by `colour`.
fn reference(
    triangles: &[[NvVertex; 3]],
    colour: impl Fn(&[NvVertex; 3], u32, u32) -> Option<[f64; 3]>,
) -> Vec<Option<[f64; 3]>> {
    let mut picture = vec![None; usize::from(W) * usize::from(H)];
    for t in triangles {
        let s = subpixels(t);
        for y in 0..u32::from(H) {
            for x in 0..u32::from(W) {
                if covers(s, i64::from(x), i64::from(y)) {
                    picture[(y * u32::from(W) + x) as usize] = colour(t, x, y);
                }
            }
        }
    }
    picture
}

/// Pixels differing from `want` (None: the clear colour); channels within `tolerance`.
fn differences(got: &[u32], want: &[Option<[f64; 3]>], tolerance: f64) -> Vec<(usize, u32)> {
    got.iter()
        .zip(want)
        .enumerate()
        .filter(|(_, (g, w))| match w {
            None => **g != CLEAR,
            Some(rgb) => {
                let bytes = g.to_le_bytes();
                bytes[3] != 0xFF || (0..3).any(|c| (f64::from(bytes[c]) - rgb[c]).abs() > tolerance)
            }
        })
        .map(|(i, (g, _))| (i, *g))
        .collect()
}

/// `got` is `want` pixel for pixel (channels within `tolerance`).
fn assert_picture(got: &[u32], want: &[Option<[f64; 3]>], tolerance: f64) {
    let wrong = differences(got, want, tolerance);
    assert!(
        wrong.is_empty(),
        "{} pixels differ, first (index, pixel) {:?}",
        wrong.len(),
        &wrong[..wrong.len().min(8)]
    );
}

fn frame_for<'a>(
    gpu: &'a Gpu,
    triangles: usize,
    varyings: usize,
    tile_alloc: usize,
    code: &[u64],
) -> Frame<'a> {
    Frame::new(gpu, (W, H), (triangles, varyings), tile_alloc, code)
}

fn render(
    gpu: &Gpu,
    v3d: &mut Driver<'_>,
    f: &Frame<'_>,
    triangles: &[[NvVertex; 3]],
    varyings: usize,
) {
    let job = f.job(CLEAR, triangles, varyings);
    let fence = v3d.render(&job, &f.buffers.memory()).expect("submitted");
    if let Err(e) = v3d.wait(&fence, TIMEOUT) {
        use baregpu_videocore_v3d::hal::Register;
        use baregpu_videocore_v3d::regs::v3d::*;
        let last = gpu.model().model().cle.last_error().cloned();
        panic!(
            "{e:?}; the model says {last:?}; CT0CS {:#x} CT1CS {:#x} CT0CA {:#x} CT1CA {:#x} PCS {:#x} BFC {} RFC {}",
            reg(gpu, V3D_CT0CS::OFFSET),
            reg(gpu, V3D_CT1CS::OFFSET),
            reg(gpu, V3D_CT0CA::OFFSET),
            reg(gpu, V3D_CT1CA::OFFSET),
            reg(gpu, V3D_PCS::OFFSET),
            reg(gpu, V3D_BFC::OFFSET),
            reg(gpu, V3D_RFC::OFFSET),
        );
    }
}

fn constant_red() -> Vec<u64> {
    let mut out = [0u64; 8];
    programs::constant_colour(RED, &mut out).expect("shader").to_vec()
}

#[test]
fn a_constant_colour_triangle_matches_the_reference_pixel_for_pixel() {
    let gpu = gpu();
    let mut v3d = driver(&gpu, None);
    let tris = one_triangle();
    let f = frame_for(&gpu, 1, 0, 64 * 1024, &constant_red());
    render(&gpu, &mut v3d, &f, &tris, 0);
    let want = reference(&tris, |_, _, _| Some([255.0, 0.0, 0.0]));
    let covered = want.iter().filter(|p| p.is_some()).count();
    assert!(covered > 5000, "a real triangle: {covered} pixels");
    let got = f.pixels();
    assert_picture(&got, &want, 0.0);
    assert_eq!(v3d.frames_rendered(), 1);
    assert_eq!(gpu.error_code(), 0);
}

#[test]
fn a_scene_of_overlapping_triangles_with_varyings_matches_the_reference() {
    let gpu = gpu();
    let mut v3d = driver(&gpu, None);
    let tris = scene();
    let f = frame_for(&gpu, tris.len(), 3, 64 * 1024, &varying_colour());
    render(&gpu, &mut v3d, &f, &tris, 3);
    let want = reference(&tris, |t, x, y| Some(shaded(t, x, y)));
    let got = f.pixels();
    // Coverage exact; colours within one step of the 8-bit conversion (the QPU interpolates
    // in f32 from the first vertex, the reference in f64 barycentrics).
    assert_picture(&got, &want, 1.01);
    // Bottom-left origin (§11): the first triangle's red corner at (2, 3) is in memory row 3.
    let corner = got[3 * usize::from(W) + 4].to_le_bytes();
    assert!(corner[0] > 0xF0 && corner[2] < 0x10, "red at the bottom left: {corner:02x?}");
}

/// Many triangles over every tile: more tile list than the 32-byte initial blocks hold.
fn crowd() -> Vec<[NvVertex; 3]> {
    (0..40)
        .map(|i| {
            let o = i as f32 * 0.5;
            [
                v(1.0 + o, 2.0, [0.0; 3]),
                v(190.0 - o, 3.0 + o, [0.0; 3]),
                v(96.0, 126.0 - o, [0.0; 3]),
            ]
        })
        .collect()
}

#[test]
fn outomem_is_refilled_from_the_overflow_pool_under_a_small_tile_allocation() {
    let gpu = gpu();
    let pool_memory = alloc(&gpu, 64 * 1024);
    let pool = OverflowPool::new(&pool_memory, 512).expect("pool");
    let mut v3d = driver(&gpu, Some(pool));
    // Tile allocation memory only the 32-byte initial blocks.
    let tris = crowd();
    let f = frame_for(&gpu, tris.len(), 0, 0, &constant_red());
    render(&gpu, &mut v3d, &f, &tris, 0);
    let handed = v3d.overflow_pool().unwrap().handed_out();
    assert!(handed >= 2, "the binner ran out of memory and was refilled: {handed} blocks");
    let want = reference(&tris, |_, _, _| Some([255.0, 0.0, 0.0]));
    assert_picture(&f.pixels(), &want, 0.0);
}

#[test]
fn without_an_overflow_pool_the_binner_stall_is_a_typed_error() {
    let gpu = gpu();
    let mut v3d = driver(&gpu, None);
    let tris = crowd();
    let f = frame_for(&gpu, tris.len(), 0, 0, &constant_red());
    let job = f.job(CLEAR, &tris, 0);
    let fence = v3d.render(&job, &f.buffers.memory()).unwrap();
    match v3d.wait(&fence, TIMEOUT) {
        Err(WaitError::OverflowPoolExhausted { blocks: 0 }) => {}
        other => panic!("expected an exhausted pool, got {other:?}"),
    }
}

#[test]
fn a_render_job_rings_two_doorbells_and_a_user_program_one() {
    use baregpu_videocore_v3d::regs::v3d::{V3D_CT0EA, V3D_CT1EA, V3D_SRQPC};
    use baregpu_videocore_v3d::{V3d, V3dConfig};
    let gpu = gpu();
    let io = Counting::new(&gpu);
    let mut v3d = V3d::init(&io, ModelClock::new(&gpu), None, V3dConfig::default()).unwrap();
    v3d.reserve_user_vpm(256).unwrap();
    let tris = scene();
    let f = frame_for(&gpu, tris.len(), 3, 64 * 1024, &varying_colour());
    let job = f.job(CLEAR, &tris, 3);
    const JOBS: usize = 3;
    for _ in 0..JOBS {
        let fence = v3d.render(&job, &f.buffers.memory()).unwrap();
        v3d.wait(&fence, TIMEOUT).unwrap();
    }
    // The writes that start work: each thread's end address (Table 50), nothing else.
    assert_eq!((io.writes_to::<V3D_CT0EA>(), io.writes_to::<V3D_CT1EA>()), (JOBS, JOBS));
    assert_eq!(io.writes_to::<V3D_SRQPC>(), 0);
    let stats = v3d.stats();
    assert_eq!((stats.doorbells, stats.submissions), (2 * JOBS as u64, JOBS as u64));
    let code = program_code(&gpu, VPM_STORE);
    let out = alloc(&gpu, 64);
    let uniforms = upload(&gpu, &[out.bus_address().0 as u32]);
    let fence = v3d.run_program(&user_program(&code, &uniforms, 1)).unwrap();
    v3d.wait(&fence, TIMEOUT).unwrap();
    assert_eq!(io.writes_to::<V3D_SRQPC>(), 1, "one queue write per program (Table 65)");
    assert_eq!(v3d.stats().doorbells, 2 * JOBS as u64 + 1);
}

/// A user program that counts down from `loops`, then stores the element numbers to the
/// address in its first uniform through VPM row `row`.
fn slow_store(loops: u32, row: u8) -> String {
    format!(
        "\
    ldi r0, {loops}
loop:
    sub.setf r0, r0, 1
    bra.anynz -> loop
    nop
    nop
    nop
    ldi vw_setup, {:#x}
    mov vpm, elem_num
    ldi vw_setup, {:#x}
    mov vw_addr, unif
    mov r0, vw_wait
    thrend
    nop
    nop
",
        baregpu_qpu_asm::vpm::write_rows(row),
        baregpu_qpu_asm::vpm::store_rows(1, 16, row)
    )
}

#[test]
fn a_fence_after_a_long_program_waits_for_it_not_for_a_later_short_one() {
    // The programs run at once on two QPUs; QPURQCC counts completions in any order, so the
    // short one finishing first must not signal the long one's fence.
    let gpu = gpu();
    let mut v3d = driver(&gpu, None);
    v3d.reserve_user_vpm(256).unwrap();
    let (long, short) =
        (program_code(&gpu, &slow_store(3000, 0)), program_code(&gpu, &slow_store(1, 1)));
    let (long_out, short_out) = (alloc(&gpu, 64), alloc(&gpu, 64));
    let long_u = upload(&gpu, &[long_out.bus_address().0 as u32]);
    let short_u = upload(&gpu, &[short_out.bus_address().0 as u32]);
    let (after_long, after_short) = v3d
        .submit(4, |s| {
            s.program(&user_program(&long, &long_u, 1))?;
            let first = s.fence()?;
            s.program(&user_program(&short, &short_u, 1))?;
            Ok((first, s.fence()?))
        })
        .unwrap();
    v3d.wait(&after_long, TIMEOUT).expect("the long program");
    assert_eq!(read_words(&long_out, 16), (0..16).collect::<Vec<u32>>(), "its output is there");
    v3d.wait(&after_short, TIMEOUT).unwrap();
    assert_eq!(read_words(&short_out, 16), (0..16).collect::<Vec<u32>>());
}
