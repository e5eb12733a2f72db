//! The whole V3D: control lists (§9) binned and rendered by the executor, every fragment shaded
//! by a QPU program (§3, §5, §6) on the model's own QPUs — lists and instructions written by
//! hand from the document's layouts, pictures compared pixel by pixel with the reference
//! rasteriser in `cle_support`.
#![allow(clippy::items_after_statements)]

mod cle_support;
mod common;

use baregpu_hal::RegisterIo;
use baregpu_hal::register::Register;
use baregpu_regs::vc4::v3d::{V3D_BPOA, V3D_BPOS, V3D_CT0EA, V3D_INTCTL, V3D_INTENA, V3D_RFC};
use cle_support::{PACINGS, map};
use common::{END, I, M_R0, NOP, R0, TLB_COLOUR_ALL, ldi, mov, w};
use gpu_device_model::{InProcess, InProcessOptions, Pacing, PlatformDevice};
use gpu_mailbox::platform;
use v3d_model::V3d;

const W: u32 = 128;
const H: u32 = 128;
const CLEAR: u32 = 0xFF20_4060;
const COLOUR: u32 = 0xFF33_6699;

type Gpu = InProcess<PlatformDevice<V3d>>;

fn gpu(pacing: Pacing) -> Gpu {
    InProcess::with_options(
        PlatformDevice::new(V3d::new(), platform::DEVICE_V3D),
        InProcessOptions { memory_size: 8 << 20, pacing: Some(pacing), ..Default::default() },
    )
    .unwrap()
}

/// A constant-colour fragment shader (§5 "Color Read and Write"): the TLB write is the third
/// instruction (§3 forbids the implicit scoreboard wait in the first two), then thread end, a
/// nop, and a nop with the scoreboard unlock signal (§3 "Thread Control").
fn constant_colour(colour: u32) -> Vec<u8> {
    let code = [
        ldi(R0, colour),
        w(NOP),
        w(mov(TLB_COLOUR_ALL, M_R0)),
        END.word(),
        NOP.word(),
        I { sig: 5, ..NOP }.word(),
    ];
    code.iter().flat_map(|i| i.to_le_bytes()).collect()
}

/// Two triangles crossing all four 64x64 tiles (vertices in 12.4 pixels), the second over the
/// first with the depth test off: the later one wins where they overlap.
const TRIANGLES: [[(i32, i32); 3]; 2] = [
    [(10 * 16 + 3, 5 * 16 + 9), (120 * 16 + 1, 40 * 16), (50 * 16 + 7, 123 * 16 + 15)],
    [(2 * 16, 100 * 16), (90 * 16 + 8, 126 * 16), (70 * 16, 20 * 16 + 4)],
];

fn draw(gpu: &Gpu, shapes: &[[(i32, i32); 3]]) {
    let (bin, render) = scene(gpu, shapes, [FLUSH_RECORD, INCREMENT_RECORD]);
    cle_support::run_frame(gpu, &bin, &render);
}

const FLUSH_RECORD: u8 = cle_support::FLUSH;
const INCREMENT_RECORD: u8 = cle_support::INCREMENT_SEMAPHORE;

/// Write the shader, vertices and NV record of `shapes`; the binning list (ending in the two
/// records `ending`) and the rendering list.
fn scene(gpu: &Gpu, shapes: &[[(i32, i32); 3]], ending: [u8; 2]) -> (Vec<u8>, Vec<u8>) {
    use cle_support::{
        AUTO_INIT, START_BINNING, bin_config, clip_window, config_bits, list, nv_record, nv_state,
        prim_format, render_list, triangles, vertex, viewport_offset,
    };
    gpu.write_memory(map::CODE.into(), &constant_colour(COLOUR)).unwrap();
    let mut vertices = Vec::new();
    for &(x, y) in shapes.iter().flatten() {
        vertices.extend(vertex(x, y, 0.5, 1.0, &[]));
    }
    gpu.write_memory(map::VERTICES.into(), &vertices).unwrap();
    gpu.write_memory(map::NV_RECORD.into(), &nv_record(12, 0, map::CODE, 0, map::VERTICES))
        .unwrap();
    let (tx, ty) = ((W / 64) as u8, (H / 64) as u8);
    let bin = list(&[
        bin_config(map::TILE_ALLOC, 0x1_0000, map::TSDA, tx, ty, AUTO_INIT),
        vec![START_BINNING],
        prim_format(),
        config_bits(7, false),
        clip_window(0, 0, W as u16, H as u16),
        viewport_offset(0, 0),
        nv_state(map::NV_RECORD),
        triangles(3 * shapes.len() as u32, 0),
        vec![ending[0]],
        vec![ending[1]],
    ]);
    (bin, render_list(tx, ty, W as u16, H as u16, CLEAR))
}

fn reference(triangles: &[[(i32, i32); 3]]) -> Vec<u32> {
    let mut picture = vec![CLEAR; (W * H) as usize];
    for t in triangles {
        let p = t.map(|(x, y)| (i64::from(x), i64::from(y)));
        for y in 0..i64::from(H) {
            for x in 0..i64::from(W) {
                if cle_support::reference_covers(p, x, y) {
                    picture[(y as u32 * W + x as u32) as usize] = COLOUR;
                }
            }
        }
    }
    picture
}

#[test]
fn triangles_shaded_by_a_qpu_program_match_the_reference_under_every_pacing() {
    let want = reference(&TRIANGLES);
    assert!(want.iter().filter(|&&p| p == COLOUR).count() > 4000, "a real picture");
    for pacing in PACINGS {
        let gpu = gpu(pacing);
        draw(&gpu, &TRIANGLES);
        cle_support::wait(&gpu, "the frame", |g| g.read32(V3D_RFC::OFFSET) == 1);
        assert_eq!(gpu.error_code(), 0, "{pacing:?}");
        let got = cle_support::frame(&gpu, W, H);
        let wrong = got.iter().zip(&want).filter(|(g, w)| g != w).count();
        assert_eq!(wrong, 0, "{pacing:?}: {wrong} pixels differ from the reference");
        // The colour exists only in the shader's load immediate: the QPUs ran it per batch.
        assert!(gpu.model().model().cle.stats().batches > 0);
    }
}

/// §9 Table 38: Increment Semaphore counts "after tile lists are flushed". Linux (and this
/// project's driver) end the binning list with Increment Semaphore then Flush; the rendering
/// thread, waiting on the semaphore, must not walk tile lists the Flush has not closed. The
/// binning list is given up to its increment first, its Flush only later.
#[test]
fn an_increment_before_the_flush_counts_only_once_the_tile_lists_are_flushed() {
    let want = reference(&TRIANGLES);
    for pacing in [Pacing::RunToIdle, Pacing::Seeded(7)] {
        let gpu = gpu(pacing);
        let (bin, render) = scene(&gpu, &TRIANGLES, [INCREMENT_RECORD, FLUSH_RECORD]);
        gpu.write_memory(map::BIN_LIST.into(), &bin).unwrap();
        gpu.write_memory(map::RENDER_LIST.into(), &render).unwrap();
        let bin_end = map::BIN_LIST + bin.len() as u32;
        cle_support::submit(&gpu, 0, map::BIN_LIST, bin_end - 1);
        cle_support::submit(&gpu, 1, map::RENDER_LIST, map::RENDER_LIST + render.len() as u32);
        for _ in 0..2000 {
            gpu.poll();
        }
        assert_eq!(gpu.read32(V3D_RFC::OFFSET), 0, "{pacing:?}: no frame before the Flush");
        assert_eq!(gpu.error_code(), 0, "{pacing:?}");
        // The Flush: CT0EA extended past it.
        gpu.write32(V3D_CT0EA::OFFSET, bin_end);
        cle_support::wait(&gpu, "the frame", |g| g.read32(V3D_RFC::OFFSET) == 1);
        assert_eq!(gpu.error_code(), 0, "{pacing:?}");
        assert_eq!(cle_support::frame(&gpu, W, H), want, "{pacing:?}");
    }
}

#[test]
fn frame_done_reaches_the_interrupt_line_through_the_executor() {
    let gpu = gpu(Pacing::RunToIdle);
    gpu.write32(V3D_INTENA::OFFSET, V3D_INTENA::EI_FRDONE.mask());
    draw(&gpu, &TRIANGLES[..1]);
    cle_support::wait(&gpu, "the frame", |g| g.read32(V3D_RFC::OFFSET) == 1);
    assert_ne!(gpu.read32(V3D_INTCTL::OFFSET) & V3D_INTCTL::INT_FRDONE.mask(), 0);
    assert_eq!(gpu.irq_status(), 1, "FRDONE enabled: the line is up");
    gpu.write32(V3D_INTCTL::OFFSET, V3D_INTCTL::INT_FRDONE.mask());
    assert_eq!(gpu.ack_irq(1), 0, "write 1 to clear drops the line");
}

#[test]
fn an_outomem_storm_keeps_the_binner_waiting_until_the_fault_is_cleared() {
    use v3d_model::faults::OUTOMEM_STORM;
    let gpu = gpu(Pacing::RunToIdle);
    assert!(gpu_device_model::GpuModel::inject(&mut *gpu.model(), OUTOMEM_STORM));
    gpu.write32(V3D_INTENA::OFFSET, V3D_INTENA::EI_OUTOMEM.mask());
    // Under the storm the binner is never given memory, not even its initial area.
    draw(&gpu, &TRIANGLES);
    for _ in 0..200 {
        gpu.poll();
    }
    assert_ne!(gpu.read32(V3D_INTCTL::OFFSET) & V3D_INTCTL::INT_OUTOMEM.mask(), 0);
    assert_eq!(gpu.read32(V3D_RFC::OFFSET), 0, "no frame while the binner starves");
    // Memory given during the storm is not taken.
    gpu.write32(V3D_BPOA::OFFSET, map::OVERSPILL);
    gpu.write32(V3D_BPOS::OFFSET, 0x1_0000);
    for _ in 0..200 {
        gpu.poll();
    }
    assert_eq!(gpu.read32(V3D_RFC::OFFSET), 0);
}
