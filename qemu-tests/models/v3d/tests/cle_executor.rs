//! The control-list executor threads (§8 "System Operation", §9, §10 Tables 49-61, 75):
//! run/stop semantics, sub-lists, semaphores, out-of-memory, errors, bounded ticks, faults.

mod cle_support;

use baregpu_hal::RegisterIo;
use baregpu_hal::register::Register;
use baregpu_regs::vc4::v3d::{
    V3D_BFC, V3D_BPOA, V3D_BPOS, V3D_CT0CA, V3D_CT0CS, V3D_CT0EA, V3D_CT0PC, V3D_CT0RA0, V3D_CT1CA,
    V3D_CT1CS, V3D_CT1EA, V3D_CT1LC, V3D_INTCTL, V3D_INTENA, V3D_PCS, V3D_RFC,
};
use cle_support::*;
use gpu_device_model::{Pacing, cp_error, error_code};
use v3d_model::cle::{CleFaults, MAX_UNITS_PER_TICK, RECORDS_PER_TICK, code};

const RUN: u32 = 1 << 5;
const SUBS: u32 = 1 << 4;
const ERR: u32 = 1 << 3;

fn nops(n: usize) -> Vec<u8> {
    vec![1; n]
}

/// Run `records` on thread `t` and return the device's error code and CTnCS.
fn run_list(t: usize, records: &[Vec<u8>]) -> (u32, u32, Gpu) {
    let gpu = gpu(Shader::Constant(0), Pacing::RunToIdle);
    let l = list(records);
    let at = if t == 0 { map::BIN_LIST } else { map::RENDER_LIST };
    gpu.write_memory(at.into(), &l).unwrap();
    submit(&gpu, t, at, at + l.len() as u32);
    let cs = reg(&gpu, if t == 0 { V3D_CT0CS::OFFSET } else { V3D_CT1CS::OFFSET });
    (gpu.error_code(), cs, gpu)
}

#[test]
fn records_the_document_does_not_allow_stop_the_thread_with_the_shared_error_codes() {
    // Id 2 is reserved (Table 38 "2-3 Reserved").
    let (e, cs, gpu) = run_list(0, &[vec![1], vec![2]]);
    assert_eq!(e, cp_error::UNKNOWN_OPCODE);
    assert_eq!(cs & (ERR | RUN), ERR, "stopped with CTERR (Table 49)");
    assert_eq!(reg(&gpu, V3D_CT0CA::OFFSET), map::BIN_LIST + 1, "CA at the bad record");
    // A rendering-only record (R) in the binning list and a binning-only one (B) in the
    // rendering list.
    let (e, ..) = run_list(0, &[render_config(map::FRAME, 64, 64, RGBA8888)]);
    assert_eq!(e, cp_error::INVALID_PACKET);
    let (e, ..) = run_list(1, &[bin_config(map::TILE_ALLOC, 0x1000, map::TSDA, 1, 1, AUTO_INIT)]);
    assert_eq!(e, cp_error::INVALID_PACKET);
    // Primitives before Start Tile Binning (§9: 112, then 6, then the list proper).
    let (e, ..) = run_list(0, &[triangles(3, 0)]);
    assert_eq!(e, cp_error::INVALID_PACKET);
    // GL mode is not emulated: refused, not ignored.
    let (e, ..) = run_list(0, &[vec![64, 0x10, 0, 0, 0]]);
    assert_eq!(e, cp_error::UNSUPPORTED_PACKET);
    // Record 112 without auto-initialise, or 0 tiles wide.
    let (e, ..) = run_list(0, &[bin_config(map::TILE_ALLOC, 0x1000, map::TSDA, 1, 1, 0)]);
    assert_eq!(e, cp_error::UNSUPPORTED_PACKET);
    let (e, ..) = run_list(0, &[bin_config(map::TILE_ALLOC, 0x1000, map::TSDA, 0, 1, AUTO_INIT)]);
    assert_eq!(e, cp_error::BAD_CONFIGURATION);
}

#[test]
fn a_record_across_the_end_address_is_an_error_not_a_partial_fetch() {
    let gpu = gpu(Shader::Constant(0), Pacing::RunToIdle);
    let l = bin_config(map::TILE_ALLOC, 0x1000, map::TSDA, 1, 1, AUTO_INIT);
    gpu.write_memory(map::BIN_LIST.into(), &l).unwrap();
    submit(&gpu, 0, map::BIN_LIST, map::BIN_LIST + 10);
    assert_eq!(gpu.error_code(), cp_error::INVALID_PACKET);
    assert_ne!(reg(&gpu, V3D_CT0CS::OFFSET) & ERR, 0);
}

#[test]
fn address_0_is_unprogrammed_for_lists_and_for_the_memory_records_point_at() {
    let gpu = gpu(Shader::Constant(0), Pacing::RunToIdle);
    submit(&gpu, 0, 0, 16);
    assert_eq!(gpu.error_code(), cp_error::DMA_FETCH_FAULT);
    // A branch to 0, an NV record at 0, a tile allocation at 0.
    let (e, ..) = run_list(1, &[branch(0)]);
    assert_eq!(e, cp_error::DMA_FETCH_FAULT);
    let (e, ..) = run_list(1, &[nv_state(0)]);
    assert_eq!(e, cp_error::DMA_FETCH_FAULT);
    let (e, ..) = run_list(0, &[bin_config(0, 0x1000, map::TSDA, 1, 1, AUTO_INIT)]);
    assert_eq!(e, cp_error::DMA_WRITE_FAULT);
}

#[test]
fn sub_lists_nest_two_levels_and_return_where_they_were_called() {
    let gpu = gpu(Shader::Constant(0), Pacing::RunToIdle);
    // Main: call A; A: call B, return; B: return. Then a return with nothing on the stack
    // ("ignored"), then HALT.
    let (a, b) = (map::RENDER_LIST + 0x100, map::RENDER_LIST + 0x200);
    let main = list(&[branch_sub(a), vec![18], vec![HALT]]);
    gpu.write_memory(a.into(), &list(&[branch_sub(b), vec![18]])).unwrap();
    gpu.write_memory(b.into(), &[1, 18]).unwrap();
    gpu.write_memory(map::RENDER_LIST.into(), &main).unwrap();
    submit(&gpu, 1, map::RENDER_LIST, map::RENDER_LIST + 0x80);
    assert_eq!(gpu.error_code(), 0);
    let cs = reg(&gpu, V3D_CT1CS::OFFSET);
    assert_eq!(cs & (RUN | SUBS), SUBS, "stopped at halt");
    assert_eq!(reg(&gpu, V3D_CT1CA::OFFSET), map::RENDER_LIST + 7, "after the HALT");
    assert_eq!(reg(&gpu, V3D_CT1LC::OFFSET) & 0xFFFF, 3, "three returns counted (Table 53)");
    // A third level is refused.
    let c = map::RENDER_LIST + 0x300;
    gpu.write_memory(b.into(), &branch_sub(c)).unwrap();
    gpu.write_memory(c.into(), &[18]).unwrap();
    gpu.write32(V3D_CT1CS::OFFSET, RUN);
    gpu.write32(V3D_CT1CA::OFFSET, map::RENDER_LIST);
    gpu.write32(V3D_CT1EA::OFFSET, map::RENDER_LIST + 0x80);
    assert_eq!(gpu.error_code(), cp_error::IB_NESTING);
}

#[test]
fn ctncs_halt_resume_extend_and_the_return_address() {
    let gpu = gpu(Shader::Constant(0), Pacing::RunToIdle);
    let l = list(&[nops(3), vec![HALT], nops(2)]);
    gpu.write_memory(map::BIN_LIST.into(), &l).unwrap();
    submit(&gpu, 0, map::BIN_LIST, map::BIN_LIST + 6);
    // Stopped at halt after the HALT record (Table 49: RUN 0, SUBS 1).
    assert_eq!(reg(&gpu, V3D_CT0CS::OFFSET) & (RUN | SUBS), SUBS);
    assert_eq!(reg(&gpu, V3D_CT0CA::OFFSET), map::BIN_LIST + 4);
    // Writing EA does not restart a thread stopped at halt (Table 50) ...
    gpu.write32(V3D_CT0EA::OFFSET, map::BIN_LIST + 6);
    assert_eq!(reg(&gpu, V3D_CT0CA::OFFSET), map::BIN_LIST + 4);
    // ... writing CTSUBS does, and it stops at the end address (RUN 0, SUBS 0).
    gpu.write32(V3D_CT0CS::OFFSET, SUBS);
    assert_eq!(reg(&gpu, V3D_CT0CA::OFFSET), map::BIN_LIST + 6);
    assert_eq!(reg(&gpu, V3D_CT0CS::OFFSET) & (RUN | SUBS), 0);
    // Extending the list resumes it (§8).
    gpu.write_memory((map::BIN_LIST + 6).into(), &nops(4)).unwrap();
    gpu.write32(V3D_CT0EA::OFFSET, map::BIN_LIST + 10);
    assert_eq!(reg(&gpu, V3D_CT0CA::OFFSET), map::BIN_LIST + 10);
    // RA0 shows the return address while in a sub-list; CA cannot be written while running.
    let sub = map::BIN_LIST + 0x100;
    gpu.write_memory(sub.into(), &[8]).unwrap(); // waits on the semaphore forever
    gpu.write_memory((map::BIN_LIST + 10).into(), &branch_sub(sub)).unwrap();
    gpu.write32(V3D_CT0EA::OFFSET, map::BIN_LIST + 15);
    assert_eq!(reg(&gpu, V3D_CT0RA0::OFFSET), map::BIN_LIST + 15);
    let cs = reg(&gpu, V3D_CT0CS::OFFSET);
    assert_eq!(cs & (RUN | SUBS), RUN | SUBS, "running, stalled on the semaphore");
    assert_eq!((cs >> 8) & 3, 1, "return stack depth 1");
    gpu.write32(V3D_CT0CA::OFFSET, map::BIN_LIST);
    assert_eq!(reg(&gpu, V3D_CT0CA::OFFSET), sub, "dropped: the thread runs");
    assert_eq!(gpu.model().model().cle.stats().dropped_writes, 1);
    // CTRSTA stops it and resets the register.
    gpu.write32(V3D_CT0CS::OFFSET, 1 << 15);
    assert_eq!(reg(&gpu, V3D_CT0CS::OFFSET), 0);
}

#[test]
fn the_rendering_thread_waits_on_its_semaphore_until_binning_increments_it() {
    let gpu = gpu(Shader::Constant(0), Pacing::Seeded(5));
    gpu.write_memory(map::RENDER_LIST.into(), &[8, 1]).unwrap();
    submit(&gpu, 1, map::RENDER_LIST, map::RENDER_LIST + 2);
    for _ in 0..100 {
        gpu.poll();
    }
    assert_eq!(reg(&gpu, V3D_CT1CS::OFFSET) & (RUN | SUBS), RUN | SUBS);
    assert_eq!(reg(&gpu, V3D_CT1CA::OFFSET), map::RENDER_LIST);
    gpu.write_memory(map::BIN_LIST.into(), &[7]).unwrap();
    submit(&gpu, 0, map::BIN_LIST, map::BIN_LIST + 1);
    wait(&gpu, "the rendering thread", |g| reg(g, V3D_CT1CA::OFFSET) == map::RENDER_LIST + 2);
    assert_eq!(reg(&gpu, V3D_CT1CS::OFFSET) & (RUN | SUBS | (7 << 12)), 0);
    // The counter is 3 bits: an eighth increment is refused.
    let (e, ..) = run_list(0, &[vec![7; 8]]);
    assert_eq!(e, code::SEMAPHORE_OVERFLOW);
}

#[test]
fn a_runaway_list_never_stalls_a_tick_and_the_framework_sees_a_hang() {
    let gpu = gpu(Shader::Constant(0), Pacing::RunToIdle);
    gpu.device_mut().set_tick_budget(2000);
    gpu.write_memory(map::BIN_LIST.into(), &branch(map::BIN_LIST)).unwrap();
    submit(&gpu, 0, map::BIN_LIST, map::BIN_LIST + 0x100);
    assert_eq!(gpu.error_code(), error_code::HUNG);
    let stats = gpu.model().model().cle.stats().clone();
    assert!(stats.records[0] >= 2000, "progress every tick: {stats:?}");
    assert_eq!(stats.max_tick_units, RECORDS_PER_TICK, "at most {RECORDS_PER_TICK} records a tick");
}

/// Ten small triangles in tile (0, 0) of a 2x2-tile frame.
fn crowded_tile(gpu: &Gpu, tile_alloc_size: u32) -> (Vec<u8>, Vec<[(i64, i64); 3]>) {
    let mut v = Vec::new();
    let mut tris = Vec::new();
    for i in 0..10i32 {
        let (x, y) = (16 * (i % 4) * 16, 16 * (i / 4) * 16);
        let t = [(x, y), (x + 12 * 16, y), (x, y + 12 * 16)];
        for &(px, py) in &t {
            v.extend(vertex(px, py, 0.5, 1.0, &[]));
        }
        tris.push(t.map(|(x, y)| (i64::from(x), i64::from(y))));
    }
    gpu.write_memory(map::VERTICES.into(), &v).unwrap();
    gpu.write_memory(map::NV_RECORD.into(), &nv_record(12, 0, map::CODE, 0, map::VERTICES))
        .unwrap();
    let bin = bin_list(2, 2, tile_alloc_size, triangles(30, 0));
    gpu.write_memory(map::BIN_LIST.into(), &bin).unwrap();
    (bin, tris)
}

#[test]
fn out_of_binning_memory_stalls_until_the_host_gives_overspill_memory() {
    const COLOUR: u32 = 0xFF12_3456;
    let gpu = gpu(Shader::Constant(COLOUR), Pacing::Seeded(9));
    gpu.write32(V3D_INTENA::OFFSET, V3D_INTENA::EI_OUTOMEM.mask());
    // 4 initial blocks of 32 bytes, rounded to 256: nothing left in the pool.
    let (bin, tris) = crowded_tile(&gpu, 256);
    submit(&gpu, 0, map::BIN_LIST, map::BIN_LIST + bin.len() as u32);
    let oom = V3D_INTCTL::INT_OUTOMEM.mask();
    wait(&gpu, "OUTOMEM", |g| reg(g, V3D_INTCTL::OFFSET) & oom != 0);
    assert!(gpu.take_interrupts() >= 1);
    for _ in 0..100 {
        gpu.poll();
    }
    assert_ne!(reg(&gpu, V3D_PCS::OFFSET) & V3D_PCS::BMOOM.mask(), 0, "Table 55 BMOOM");
    assert_eq!(reg(&gpu, V3D_BFC::OFFSET), 0, "binning has not finished");
    // INT_OUTOMEM is level triggered: writing 1 does not clear it while memory is short.
    gpu.write32(V3D_INTCTL::OFFSET, oom);
    assert_ne!(reg(&gpu, V3D_INTCTL::OFFSET) & oom, 0);
    gpu.write32(V3D_BPOA::OFFSET, map::OVERSPILL);
    gpu.write32(V3D_BPOS::OFFSET, 0x1000);
    wait(&gpu, "the flush", |g| reg(g, V3D_BFC::OFFSET) == 1);
    assert_eq!(reg(&gpu, V3D_BPOS::OFFSET), 0, "taken (Table 61)");
    assert_ne!(reg(&gpu, V3D_INTCTL::OFFSET) & V3D_INTCTL::INT_SPILLUSE.mask(), 0);
    gpu.write32(V3D_INTCTL::OFFSET, oom);
    assert_eq!(reg(&gpu, V3D_INTCTL::OFFSET) & oom, 0, "cleared once memory was given");
    // The tile list continued in the overspill block and renders every triangle.
    let render = render_list(2, 2, 128, 128, 0);
    gpu.write_memory(map::RENDER_LIST.into(), &render).unwrap();
    submit(&gpu, 1, map::RENDER_LIST, map::RENDER_LIST + render.len() as u32);
    wait(&gpu, "the frame", |g| reg(g, V3D_RFC::OFFSET) == 1);
    let got = frame(&gpu, 128, 128);
    for y in 0..128 {
        for x in 0..128 {
            let covered = tris.iter().any(|&t| reference_covers(t, x, y));
            let want = if covered { COLOUR } else { 0 };
            assert_eq!(got[(y * 128 + x) as usize], want, "pixel ({x}, {y})");
        }
    }
    assert_eq!(gpu.error_code(), 0);
}

#[test]
fn faults_stuck_slow_and_an_outomem_storm() {
    // Stuck CLE: registers work, the thread never moves.
    let gpu = gpu(Shader::Constant(0), Pacing::RunToIdle);
    gpu.model_mut().model_mut().cle.set_faults(CleFaults { cp_stall: true, ..Default::default() });
    gpu.write_memory(map::BIN_LIST.into(), &nops(16)).unwrap();
    submit(&gpu, 0, map::BIN_LIST, map::BIN_LIST + 16);
    for _ in 0..50 {
        gpu.poll();
    }
    assert_eq!(reg(&gpu, V3D_CT0CA::OFFSET), map::BIN_LIST);
    assert_ne!(reg(&gpu, V3D_CT0CS::OFFSET) & RUN, 0);
    // Slow: one record per N ticks, but it finishes.
    gpu.model_mut().model_mut().cle.set_faults(CleFaults { slow: Some(5), ..Default::default() });
    wait(&gpu, "the slow list", |g| reg(g, V3D_CT0CA::OFFSET) == map::BIN_LIST + 16);
    let records = gpu.model().model().cle.stats().records[0];
    assert_eq!(records, 16);
    // One-shot DMA fault on the next list fetch.
    let gpu2 = gpu_fresh();
    let faults = CleFaults { dma_fault_next_fetch: true, ..Default::default() };
    gpu2.model_mut().model_mut().cle.set_faults(faults);
    gpu2.write_memory(map::BIN_LIST.into(), &nops(4)).unwrap();
    submit(&gpu2, 0, map::BIN_LIST, map::BIN_LIST + 4);
    assert_eq!(gpu2.error_code(), cp_error::DMA_FETCH_FAULT);
    assert!(!gpu2.model().model().cle.faults().dma_fault_next_fetch, "one-shot");
    // OUTOMEM storm: memory given is never enough.
    let gpu = gpu_with_storm();
    let (bin, _) = crowded_tile(&gpu, 256);
    submit(&gpu, 0, map::BIN_LIST, map::BIN_LIST + bin.len() as u32);
    for _ in 0..3 {
        wait(&gpu, "OUTOMEM", |g| reg(g, V3D_PCS::OFFSET) & V3D_PCS::BMOOM.mask() != 0);
        gpu.write32(V3D_BPOA::OFFSET, map::OVERSPILL);
        gpu.write32(V3D_BPOS::OFFSET, 0x1000);
    }
    wait(&gpu, "OUTOMEM", |g| reg(g, V3D_PCS::OFFSET) & V3D_PCS::BMOOM.mask() != 0);
    assert_eq!(reg(&gpu, V3D_BFC::OFFSET), 0);
    assert!(gpu.model().model().cle.stats().out_of_memory >= 4);
}

fn gpu_fresh() -> Gpu {
    gpu(Shader::Constant(0), Pacing::RunToIdle)
}

fn gpu_with_storm() -> Gpu {
    let gpu = gpu(Shader::Constant(0), Pacing::RunToIdle);
    gpu.model_mut()
        .model_mut()
        .cle
        .set_faults(CleFaults { outomem_storm: true, ..Default::default() });
    gpu
}

#[test]
fn a_frame_of_large_triangles_stays_within_the_tick_bound() {
    // 1024x1024 pixels (16x16 tiles), two triangles covering everything, shaded over ticks.
    let gpu = gpu(Shader::Constant(0xFFFF_FFFF), Pacing::Seeded(4));
    let s = 1024 * 16;
    let mut v = Vec::new();
    for (x, y) in [(0, 0), (s, 0), (s, s), (0, s)] {
        v.extend(vertex(x, y, 0.5, 1.0, &[]));
    }
    gpu.write_memory(map::VERTICES.into(), &v).unwrap();
    gpu.write_memory((map::VERTICES + 0x100).into(), &[0, 0, 1, 0, 2, 0, 0, 0, 2, 0, 3, 0])
        .unwrap();
    gpu.write_memory(map::NV_RECORD.into(), &nv_record(12, 0, map::CODE, 0, map::VERTICES))
        .unwrap();
    let bin = bin_list(16, 16, 0x4_0000, indexed(6, map::VERTICES + 0x100, 3));
    run_frame(&gpu, &bin, &render_list(16, 16, 1024, 1024, 0));
    // CT0PC counts the triangles left of the list being binned (Table 54).
    let mut primitives_seen = 0;
    wait(&gpu, "the frame", |g| {
        primitives_seen = primitives_seen.max(reg(g, V3D_CT0PC::OFFSET));
        reg(g, V3D_RFC::OFFSET) == 1
    });
    assert_eq!(primitives_seen, 2);
    assert_eq!(gpu.error_code(), 0);
    let stats = gpu.model().model().cle.stats().clone();
    assert!(stats.max_tick_units <= MAX_UNITS_PER_TICK, "{stats:?}");
    let mut b = vec![0u8; 1024 * 1024 * 4];
    gpu.read_memory(map::FRAME.into(), &mut b).unwrap();
    assert!(b.iter().all(|&x| x == 0xFF), "every pixel drawn once by one of the two");
}

#[test]
fn store_tile_buffer_general_writes_bgr565_and_its_last_tile_bit_ends_the_frame() {
    // Table 38 id 28: buffer COLOR (1), raster format, pixel format 2 (BGR565, no dither),
    // address in bits 31:4 of the last word with bit 3 "last tile of frame".
    const COLOUR: u32 = 0xFF40_80F8; // R 0xF8, G 0x80, B 0x40
    let gpu = gpu(Shader::Constant(COLOUR), Pacing::Seeded(2));
    let mut v = Vec::new();
    for (x, y) in [(0, 0), (64 * 16, 0), (0, 64 * 16)] {
        v.extend(vertex(x, y, 0.5, 1.0, &[]));
    }
    gpu.write_memory(map::VERTICES.into(), &v).unwrap();
    gpu.write_memory(map::NV_RECORD.into(), &nv_record(12, 0, map::CODE, 0, map::VERTICES))
        .unwrap();
    let bin = bin_list(1, 1, 0x1000, triangles(3, 0));
    let target = map::FRAME + 0x4_0000;
    let mut store = vec![28, 0x01, 0x02];
    store.extend(le32(target | (1 << 3)));
    let render = list(&[
        clear_colours(0, 0xFF_FFFF),
        render_config(map::FRAME, 64, 64, RGBA8888),
        tile_coords(0, 0),
        store_none(),
        vec![WAIT_SEMAPHORE],
        tile_coords(0, 0),
        branch_sub(map::TILE_ALLOC),
        store,
    ]);
    run_frame(&gpu, &bin, &render);
    wait(&gpu, "the frame", |g| reg(g, V3D_RFC::OFFSET) == 1);
    assert_eq!(gpu.error_code(), 0);
    let mut b = vec![0u8; 64 * 64 * 2];
    gpu.read_memory(target.into(), &mut b).unwrap();
    let px =
        |x: usize, y: usize| u16::from_le_bytes([b[2 * (y * 64 + x)], b[2 * (y * 64 + x) + 1]]);
    let bgr565 = (0xF8 >> 3) | ((0x80 >> 2) << 5) | ((0x40 >> 3) << 11);
    assert_eq!(px(1, 1), bgr565);
    assert_eq!(px(63, 63), 0, "outside the triangle: the clear colour");
    assert_ne!(reg(&gpu, V3D_INTCTL::OFFSET) & V3D_INTCTL::INT_FRDONE.mask(), 0);
}
