//! Test support for the control-list executor: a tiny [`PlatformModel`] wrapping
//! [`v3d_model::cle::Cle`] with a TEST-ONLY fragment-shading double (standing in for the QPUs,
//! which live in the top-level model), control records written byte by byte from the layouts of
//! §9 Table 38 (never with the ring's list writer), and a reference rasteriser of our own.
#![allow(dead_code)]

use baregpu_hal::RegisterIo;
use baregpu_hal::register::Register;
use baregpu_regs::vc4::v3d::{V3D_CT0CA, V3D_CT0CS, V3D_CT0EA, V3D_CT1CA, V3D_CT1CS, V3D_CT1EA};
use gpu_device_model::{
    Activity, DeviceContext, GpuModel, InProcess, InProcessOptions, Pacing, PlatformDevice,
    PlatformModel,
};
use gpu_mailbox::platform;
use v3d_model::cle::Cle;
use v3d_model::shading::{FragmentBatch, FragmentOutput, FragmentShading, LANES, ShadingStep};

/// What the test double's "shader" computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shader {
    /// Every lane gets this colour.
    Constant(u32),
    /// The uniforms address is the colour (so each triangle's NV record picks its colour).
    UniformsAsColour,
    /// Red = the first varying, interpolated as §6 says (`partial * W + C`), rounded.
    FirstVarying,
}

/// TEST-ONLY stand-in for the QPUs: it does not run QPU code; it computes its colour directly
/// and writes Z = the FEP's Z (as a depth-testing shader does), taking [`SHADER_INSTRUCTIONS`]
/// instructions of budget so that a batch spans ticks like a real shader.
pub struct TestShading {
    pub shader: Shader,
    pub write_z: bool,
    batch: Option<FragmentBatch>,
    left: u32,
    pub batches: Vec<FragmentBatch>,
}

/// Instructions the double pretends each batch takes.
pub const SHADER_INSTRUCTIONS: u32 = 300;

impl TestShading {
    pub fn new(shader: Shader) -> Self {
        TestShading { shader, write_z: true, batch: None, left: 0, batches: Vec::new() }
    }
}

impl FragmentShading for TestShading {
    fn start(&mut self, batch: FragmentBatch) {
        self.left = SHADER_INSTRUCTIONS;
        self.batches.push(batch.clone());
        self.batch = Some(batch);
    }

    fn step(&mut self, _dev: &mut DeviceContext<'_>, budget: u32) -> ShadingStep {
        let Some(b) = &self.batch else {
            return ShadingStep::Fault(v3d_model::shading::ShaderFault {
                pc: 0,
                reason: "no batch",
            });
        };
        self.left -= budget.min(self.left);
        if self.left > 0 {
            return ShadingStep::Running;
        }
        let mut colour = [0u32; LANES];
        for (lane, c) in colour.iter_mut().enumerate() {
            *c = match self.shader {
                Shader::Constant(c) => c,
                Shader::UniformsAsColour => b.uniforms_address,
                Shader::FirstVarying => {
                    // No varying set up: §6 says the read "returns undefined data"; 0 here.
                    let value =
                        b.varyings.first().map_or(0.0, |v| v.partial[lane] * b.w[lane] + v.c);
                    0xFF00_0000 | value.round().clamp(0.0, 255.0) as u32
                }
            };
        }
        let out = FragmentOutput {
            colour,
            colour_written: 0xFFFF,
            z: b.z,
            z_written: if self.write_z { 0xFFFF } else { 0 },
        };
        self.batch = None;
        ShadingStep::Done(out)
    }
}

/// The CLE as a platform device, for the in-process harness.
pub struct Harness {
    pub cle: Cle,
    pub qpus: TestShading,
    pub max_tick_units: u64,
}

/// The interrupt line the harness drives from `Cle::interrupt_pending`.
pub const IRQ_LINE: u32 = 1;

impl PlatformModel for Harness {
    fn window_bytes(&self) -> u64 {
        0x1000
    }

    fn read(&mut self, offset: u32, _dev: &mut DeviceContext<'_>) -> u32 {
        self.cle.mmio_read(offset).unwrap_or(0)
    }

    fn write(&mut self, offset: u32, value: u32, dev: &mut DeviceContext<'_>) {
        self.cle.mmio_write(offset, value);
        dev.set_irq(IRQ_LINE, self.cle.interrupt_pending() != 0);
    }

    fn tick(&mut self, dev: &mut DeviceContext<'_>) -> Activity {
        let a = self.cle.tick(dev, &mut self.qpus);
        dev.set_irq(IRQ_LINE, self.cle.interrupt_pending() != 0);
        a
    }

    fn reset(&mut self) {
        self.cle.reset();
    }
}

pub type Gpu = InProcess<PlatformDevice<Harness>>;

pub fn gpu(shader: Shader, pacing: Pacing) -> Gpu {
    let harness = Harness { cle: Cle::new(), qpus: TestShading::new(shader), max_tick_units: 0 };
    InProcess::with_options(
        PlatformDevice::new(harness, platform::DEVICE_V3D),
        InProcessOptions { memory_size: 8 << 20, pacing: Some(pacing), ..Default::default() },
    )
    .unwrap()
}

/// The pacings every picture test runs under.
pub const PACINGS: [Pacing; 5] = [
    Pacing::RunToIdle,
    Pacing::Seeded(1),
    Pacing::Seeded(7),
    Pacing::Seeded(0xC1E),
    Pacing::Threaded { ticks_per_ms: 500 },
];

/// Start thread `t` on `start..end` as §10 and Linux's submission do: halt it (CTnCS.CTRUN),
/// write CTnCA, then CTnEA (which starts it).
pub fn submit<M: GpuModel + 'static>(gpu: &InProcess<M>, t: usize, start: u32, end: u32) {
    let (cs, ca, ea) = if t == 0 {
        (V3D_CT0CS::OFFSET, V3D_CT0CA::OFFSET, V3D_CT0EA::OFFSET)
    } else {
        (V3D_CT1CS::OFFSET, V3D_CT1CA::OFFSET, V3D_CT1EA::OFFSET)
    };
    gpu.write32(cs, V3D_CT0CS::CTRUN.mask());
    gpu.write32(ca, start);
    gpu.write32(ea, end);
}

/// Let time pass until `done` (bounded in polls and in wall time, for threaded pacing).
pub fn wait<M: GpuModel + 'static>(
    gpu: &InProcess<M>,
    what: &str,
    mut done: impl FnMut(&InProcess<M>) -> bool,
) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    for _ in 0..10_000_000 {
        if done(gpu) {
            return;
        }
        if std::time::Instant::now() > deadline {
            break;
        }
        gpu.poll();
        if matches!(gpu.pacing(), Pacing::Threaded { .. }) {
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
    }
    panic!("timed out waiting for {what} (error {:#x})", gpu.error_code());
}

/// Read a register at `offset`.
pub fn reg<M: GpuModel + 'static>(gpu: &InProcess<M>, offset: usize) -> u32 {
    gpu.read32(offset)
}

// ---- Control records, byte by byte from §9 Table 38 (sizes and byte layouts as Mesa vc4_packet.h gives them).

pub fn le32(v: u32) -> [u8; 4] {
    v.to_le_bytes()
}

/// 112 Tile Binning Mode Configuration: tile allocation address, size, tile state data array
/// address (u32 each), width, height in tiles, flags (bit 2 auto-initialise, 4:3 initial block
/// size, 6:5 block size: 0-3 = 32/64/128/256 bytes).
pub fn bin_config(alloc: u32, size: u32, tsda: u32, w: u8, h: u8, flags: u8) -> Vec<u8> {
    let mut r = vec![112];
    r.extend(le32(alloc));
    r.extend(le32(size));
    r.extend(le32(tsda));
    r.extend([w, h, flags]);
    r
}
/// Flag bit 2 of record 112: auto-initialise the tile state data array.
pub const AUTO_INIT: u8 = 1 << 2;

/// 113 Tile Rendering Mode Configuration: address, width, height (u16), u16 flags (3:2 format:
/// 1 RGBA8888, 2 BGR565; 7:6 memory format 0 linear).
pub fn render_config(address: u32, w: u16, h: u16, flags: u16) -> Vec<u8> {
    let mut r = vec![113];
    r.extend(le32(address));
    r.extend(w.to_le_bytes());
    r.extend(h.to_le_bytes());
    r.extend(flags.to_le_bytes());
    r
}
pub const RGBA8888: u16 = 1 << 2;
/// Record 113 memory format (bits 7:6) 2: LT-format.
pub const LT_FORMAT: u16 = 2 << 6;

/// 114 Clear Colors: two RGBA8888 colours, 24-bit Z, VG mask, stencil.
pub fn clear_colours(colour: u32, z: u32) -> Vec<u8> {
    let mut r = vec![114];
    r.extend(le32(colour));
    r.extend(le32(colour));
    r.extend(&le32(z)[..3]);
    r.extend([0, 0]);
    r
}

pub fn tile_coords(x: u8, y: u8) -> Vec<u8> {
    vec![115, x, y]
}
pub fn branch(to: u32) -> Vec<u8> {
    let mut r = vec![16];
    r.extend(le32(to));
    r
}
pub fn branch_sub(to: u32) -> Vec<u8> {
    let mut r = vec![17];
    r.extend(le32(to));
    r
}
/// 28 Store Tile Buffer General with buffer NONE (clears the tile buffer, as Linux's render
/// list does when the clear values change).
pub fn store_none() -> Vec<u8> {
    vec![28, 0, 0, 0, 0, 0, 0]
}
pub const STORE: u8 = 24;
pub const STORE_EOF: u8 = 25;
pub const HALT: u8 = 0;
pub const FLUSH: u8 = 4;
pub const START_BINNING: u8 = 6;
pub const INCREMENT_SEMAPHORE: u8 = 7;
pub const WAIT_SEMAPHORE: u8 = 8;

pub fn nv_state(record: u32) -> Vec<u8> {
    let mut r = vec![65];
    r.extend(le32(record));
    r
}
/// 56 Primitive List Format: 16-bit index, triangles.
pub fn prim_format() -> Vec<u8> {
    vec![56, 0x12]
}
/// 96 Configuration Bits: both facings; depth function (0-7) and Z updates.
pub fn config_bits(depth: u8, z_write: bool) -> Vec<u8> {
    vec![96, 0b11, (depth << 4) | if z_write { 0x80 } else { 0 }, 0]
}
/// 97 Flat Shade Flags.
pub fn flat_shade_flags(flags: u32) -> Vec<u8> {
    let mut r = vec![97];
    r.extend(le32(flags));
    r
}
/// 102 Clip Window: left, bottom, width, height (u16).
pub fn clip_window(left: u16, bottom: u16, width: u16, height: u16) -> Vec<u8> {
    let mut r = vec![102];
    for v in [left, bottom, width, height] {
        r.extend(v.to_le_bytes());
    }
    r
}
/// 103 Viewport Offset: centre x, y.
pub fn viewport_offset(x: i16, y: i16) -> Vec<u8> {
    let mut r = vec![103];
    r.extend(x.to_le_bytes());
    r.extend(y.to_le_bytes());
    r
}
/// 105 Clipper XY Scaling: half width, half height in 1/16 pixel (f32).
pub fn clipper_xy(half_width: f32, half_height: f32) -> Vec<u8> {
    let mut r = vec![105];
    r.extend(half_width.to_le_bytes());
    r.extend(half_height.to_le_bytes());
    r
}
/// 106 Clipper Z Scale and Offset (f32 each).
pub fn clipper_z(scale: f32, offset: f32) -> Vec<u8> {
    let mut r = vec![106];
    r.extend(scale.to_le_bytes());
    r.extend(offset.to_le_bytes());
    r
}
/// 33 Vertex Array Primitives: mode 4 (triangles), count, first.
pub fn triangles(count: u32, first: u32) -> Vec<u8> {
    let mut r = vec![33, 4];
    r.extend(le32(count));
    r.extend(le32(first));
    r
}
/// 32 Indexed Primitive List, 16-bit indices, triangles.
pub fn indexed(count: u32, address: u32, max: u32) -> Vec<u8> {
    let mut r = vec![32, 0x14];
    r.extend(le32(count));
    r.extend(le32(address));
    r.extend(le32(max));
    r
}

/// An NV shader state record (§9 Table 46): flags, stride, uniforms count, varyings, code,
/// uniforms, vertex data.
pub fn nv_record(stride: u8, varyings: u8, code: u32, uniforms: u32, vertices: u32) -> Vec<u8> {
    let mut r = vec![0, stride, 0, varyings];
    r.extend(le32(code));
    r.extend(le32(uniforms));
    r.extend(le32(vertices));
    r
}

/// A shaded vertex without clip header or point size (§9 Figure 12): Xs | Ys << 16 (12.4),
/// Zs, 1/Wc, varyings.
pub fn vertex(x: i32, y: i32, z: f32, inv_w: f32, varyings: &[f32]) -> Vec<u8> {
    let mut r = Vec::new();
    r.extend(le32((x as u16 as u32) | ((y as u16 as u32) << 16)));
    r.extend(z.to_le_bytes());
    r.extend(inv_w.to_le_bytes());
    for v in varyings {
        r.extend(v.to_le_bytes());
    }
    r
}

/// A list of records.
pub fn list(records: &[Vec<u8>]) -> Vec<u8> {
    records.concat()
}

// ---- The reference rasteriser: edge functions on the 12.4 vertices, pixel centres, the
// top-left rule with y up (row 0 at the bottom).

/// Whether pixel (px, py) is covered by the triangle with 12.4 vertices `v`.
pub fn reference_covers(v: [(i64, i64); 3], px: i64, py: i64) -> bool {
    let area = (v[1].0 - v[0].0) * (v[2].1 - v[0].1) - (v[2].0 - v[0].0) * (v[1].1 - v[0].1);
    if area == 0 {
        return false;
    }
    let v = if area > 0 { v } else { [v[0], v[2], v[1]] };
    let c = (px * 16 + 8, py * 16 + 8);
    (0..3).all(|i| {
        let (a, b) = (v[i], v[(i + 1) % 3]);
        let e = (b.0 - a.0) * (c.1 - a.1) - (b.1 - a.1) * (c.0 - a.0);
        let top_left = (b.1 == a.1 && b.0 < a.0) || b.1 < a.1;
        e > 0 || (e == 0 && top_left)
    })
}

/// The memory layout of the picture tests.
pub mod map {
    pub const BIN_LIST: u32 = 0x1000;
    pub const RENDER_LIST: u32 = 0x2000;
    pub const NV_RECORD: u32 = 0x3000;
    pub const NV_RECORD_2: u32 = 0x3010;
    pub const VERTICES: u32 = 0x3100;
    pub const CODE: u32 = 0x4000;
    pub const TSDA: u32 = 0x1_0000;
    pub const TILE_ALLOC: u32 = 0x2_0000;
    pub const OVERSPILL: u32 = 0x8_0000;
    pub const FRAME: u32 = 0x10_0000;
}

/// The rendering list for a `tiles_x` x `tiles_y` frame whose tile lists the binner wrote with
/// 32-byte initial blocks (the minimal render list of Linux vc4_render_cl.c): clear colours, mode, a clearing store,
/// then per tile: (wait on the semaphore first), coordinates, branch to the tile list, store
/// (store and end of frame on the last).
pub fn render_list(tiles_x: u8, tiles_y: u8, width: u16, height: u16, clear: u32) -> Vec<u8> {
    let mut l = vec![
        clear_colours(clear, 0xFF_FFFF),
        render_config(map::FRAME, width, height, RGBA8888),
        tile_coords(0, 0),
        store_none(),
    ];
    for y in 0..tiles_y {
        for x in 0..tiles_x {
            if x == 0 && y == 0 {
                l.push(vec![WAIT_SEMAPHORE]);
            }
            l.push(tile_coords(x, y));
            let tile = u32::from(y) * u32::from(tiles_x) + u32::from(x);
            l.push(branch_sub(map::TILE_ALLOC + tile * 32));
            let last = x + 1 == tiles_x && y + 1 == tiles_y;
            l.push(vec![if last { STORE_EOF } else { STORE }]);
        }
    }
    list(&l)
}

/// The binning list of one draw with the NV record at `map::NV_RECORD` (the minimal binning
/// list of Mesa vc4_draw.c): configuration, Start Tile Binning, state, the draw, Flush, Increment Semaphore.
pub fn bin_list(tiles_x: u8, tiles_y: u8, tile_alloc_size: u32, draw: Vec<u8>) -> Vec<u8> {
    list(&[
        bin_config(map::TILE_ALLOC, tile_alloc_size, map::TSDA, tiles_x, tiles_y, AUTO_INIT),
        vec![START_BINNING],
        prim_format(),
        config_bits(7, false),
        nv_state(map::NV_RECORD),
        draw,
        vec![FLUSH],
        vec![INCREMENT_SEMAPHORE],
    ])
}

/// Write `bin` and `render` to their places and start the rendering thread, then binning.
pub fn run_frame<M: GpuModel + 'static>(gpu: &InProcess<M>, bin: &[u8], render: &[u8]) {
    gpu.write_memory(map::BIN_LIST.into(), bin).unwrap();
    gpu.write_memory(map::RENDER_LIST.into(), render).unwrap();
    submit(gpu, 1, map::RENDER_LIST, map::RENDER_LIST + render.len() as u32);
    submit(gpu, 0, map::BIN_LIST, map::BIN_LIST + bin.len() as u32);
}

/// Read the frame buffer (RGBA8888, linear).
pub fn frame<M: GpuModel + 'static>(gpu: &InProcess<M>, width: u32, height: u32) -> Vec<u32> {
    let mut b = vec![0u8; (width * height * 4) as usize];
    gpu.read_memory(map::FRAME.into(), &mut b).unwrap();
    b.chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}
