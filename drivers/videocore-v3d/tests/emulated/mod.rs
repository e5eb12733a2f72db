//! Fixtures over the emulated V3D (`v3d-model`) in process: the device under the default
//! pacing (or the one `GPU_PACING` names), the driver over it with a clock that runs it, DMA
//! memory from the device's allocator, QPU code from `baregpu-qpu-asm`, a job's buffers, and
//! a reference rasteriser written here from the model's documented rules (§11 bottom-left
//! origin, OpenGL's top-left fill rule), independent of the model's code.
#![allow(dead_code)]

use std::time::Duration;

use baregpu_qpu_asm::programs;
use baregpu_videocore_v3d::hal::RegisterIo;
use baregpu_videocore_v3d::hal::dma::{DmaBuffer, DmaLayout, DmaRegion};
use baregpu_videocore_v3d::job::{JobBufferSizes, TileLayout};
use baregpu_videocore_v3d::{
    ColorFormat, FragmentShader, Framebuffer, JobMemory, NvVertex, OverflowPool, RenderJob,
    UserProgram, V3d, V3dConfig,
};
use gpu_device_model::{GpuModel, InProcess, InProcessOptions, PlatformDevice};
use gpu_mailbox::platform;
use v3d_model::faults::Faults;

/// The emulated V3D behind the project's platform wrapper.
pub type Gpu = InProcess<PlatformDevice<v3d_model::V3d>>;
/// The test clock: each reading runs the model and advances simulated time.
pub type ModelClock<'a> = gpu_device_model::ModelClock<'a, PlatformDevice<v3d_model::V3d>>;
/// The driver over it.
pub type Driver<'a> = V3d<'a, &'a Gpu, ModelClock<'a>>;
/// DMA memory from the device's allocator.
pub type Buffer<'a> = DmaBuffer<'a, Gpu>;

/// Fence timeout (simulated time).
pub const TIMEOUT: Duration = Duration::from_millis(500);

/// A fresh emulated V3D with 16 MiB of memory, under the pacing `GPU_MODEL_PACING` names (the
/// default seeded pacing otherwise).
pub fn gpu() -> Gpu {
    InProcess::with_options(
        PlatformDevice::new(v3d_model::V3d::new(), platform::DEVICE_V3D),
        InProcessOptions { memory_size: 16 << 20, ..Default::default() },
    )
    .expect("in-process V3D")
}

/// Set the model's injected faults.
pub fn set_faults(gpu: &Gpu, f: impl FnOnce(&mut Faults)) {
    let mut faults = gpu.model().model().faults();
    f(&mut faults);
    assert!(GpuModel::inject(&mut *gpu.model(), faults.switches()));
}

/// `bytes` of zeroed DMA memory, 256-byte aligned.
pub fn alloc(gpu: &Gpu, bytes: usize) -> Buffer<'_> {
    let b = DmaBuffer::allocate(gpu, DmaLayout::new(bytes, 256).expect("layout")).expect("DMA");
    b.zero();
    b
}

/// The driver over `gpu` with `pool` as its overflow memory.
pub fn driver<'a>(gpu: &'a Gpu, pool: Option<OverflowPool<'a>>) -> Driver<'a> {
    V3d::init(gpu, ModelClock::new(gpu), pool, V3dConfig::default()).expect("init")
}

/// QPU instructions as the little-endian words the V3D fetches.
pub fn code_words(code: &[u64]) -> Vec<u32> {
    code.iter().flat_map(|i| [*i as u32, (*i >> 32) as u32]).collect()
}

/// `words` in a fresh buffer.
pub fn upload<'a>(gpu: &'a Gpu, words: &[u32]) -> Buffer<'a> {
    let b = alloc(gpu, (words.len() * 4).max(4));
    b.write_slice(0, words).expect("upload");
    b
}

/// One of `baregpu_qpu_asm::programs`' text programs, assembled into a buffer.
pub fn program_code<'a>(gpu: &'a Gpu, text: &str) -> Buffer<'a> {
    let mut out = [0u64; 64];
    let code = programs::assemble_into(text, &mut out).expect("assembles");
    upload(gpu, &code_words(code))
}

/// Read `words` words at `region`'s start.
pub fn read_words(region: &DmaRegion, words: usize) -> Vec<u32> {
    let mut out = vec![0; words];
    region.read_slice(0, &mut out).expect("read back");
    out
}

/// A user program request for `code` with `uniforms`.
pub fn user_program(code: &DmaRegion, uniforms: &DmaRegion, count: usize) -> UserProgram {
    UserProgram {
        code: code.bus_address(),
        uniforms: uniforms.bus_address(),
        uniforms_len: count as u16,
    }
}

/// A job's DMA buffers for `triangles` triangles of `varyings` varyings on a `w` x `h` frame,
/// with `tile_alloc` bytes of tile allocation memory (at least the initial blocks).
pub struct JobBuffers<'a> {
    pub binning: Buffer<'a>,
    pub rendering: Buffer<'a>,
    pub tile_allocation: Buffer<'a>,
    pub tile_state: Buffer<'a>,
    pub vertices: Buffer<'a>,
}

impl<'a> JobBuffers<'a> {
    pub fn new(
        gpu: &'a Gpu,
        w: u32,
        h: u32,
        triangles: usize,
        varyings: usize,
        tile_alloc: usize,
    ) -> Self {
        let tiles = TileLayout::of(w, h).expect("tiles");
        let sizes = JobBufferSizes::of(tiles, triangles * 3, varyings);
        JobBuffers {
            binning: alloc(gpu, sizes.binning_list),
            rendering: alloc(gpu, sizes.rendering_list),
            tile_allocation: alloc(gpu, tile_alloc.max(sizes.tile_allocation)),
            tile_state: alloc(gpu, sizes.tile_state),
            vertices: alloc(gpu, sizes.vertices),
        }
    }

    pub fn memory(&self) -> JobMemory<'_> {
        JobMemory {
            binning_list: &self.binning,
            rendering_list: &self.rendering,
            tile_allocation: &self.tile_allocation,
            tile_state: &self.tile_state,
            vertices: &self.vertices,
        }
    }
}

/// A frame's buffers: the frame buffer (`w` x `h`, RGBA8888), the fragment shader's code and
/// the job's buffers.
pub struct Frame<'a> {
    pub w: u16,
    pub h: u16,
    pub fb: Buffer<'a>,
    pub code: Buffer<'a>,
    pub buffers: JobBuffers<'a>,
}

impl<'a> Frame<'a> {
    /// Buffers for `triangles` triangles of `varyings` varyings, `tile_alloc` bytes of tile
    /// allocation memory (at least the initial area), shaded by `code`.
    pub fn new(
        gpu: &'a Gpu,
        (w, h): (u16, u16),
        (triangles, varyings): (usize, usize),
        tile_alloc: usize,
        code: &[u64],
    ) -> Self {
        Frame {
            w,
            h,
            fb: alloc(gpu, usize::from(w) * usize::from(h) * 4),
            code: upload(gpu, &code_words(code)),
            buffers: JobBuffers::new(gpu, w.into(), h.into(), triangles, varyings, tile_alloc),
        }
    }

    /// The job drawing `triangles` over `clear`.
    pub fn job<'t>(
        &self,
        clear: u32,
        triangles: &'t [[NvVertex; 3]],
        varyings: usize,
    ) -> RenderJob<'t> {
        let fb = framebuffer(&self.fb, self.w, self.h);
        render_job(fb, clear, triangles, varyings, shader(&self.code))
    }

    /// The frame as stored, row 0 (the bottom, §11) first.
    pub fn pixels(&self) -> Vec<u32> {
        frame(&self.fb, self.w.into(), self.h.into())
    }
}

/// An RGBA8888 frame buffer of `w` x `h` pixels.
pub fn framebuffer(fb: &DmaRegion, w: u16, h: u16) -> Framebuffer {
    Framebuffer { address: fb.bus_address(), width: w, height: h, format: ColorFormat::Rgba8888 }
}

/// A fragment shader at `code` with no uniforms, multi-threaded as the asm's programs allow.
pub fn shader(code: &DmaRegion) -> FragmentShader {
    FragmentShader { code: code.bus_address(), uniforms: code.bus_address(), single_threaded: true }
}

/// A render job of `triangles` into `fb`.
pub fn render_job<'t>(
    fb: Framebuffer,
    clear: u32,
    triangles: &'t [[NvVertex; 3]],
    varyings: usize,
    shader: FragmentShader,
) -> RenderJob<'t> {
    RenderJob { framebuffer: fb, clear_color: clear, triangles, varyings, shader }
}

/// The frame as pixels, row 0 first (the frame buffer's first row in memory).
pub fn frame(fb: &DmaRegion, w: u32, h: u32) -> Vec<u32> {
    read_words(fb, (w * h) as usize)
}

/// Whether the pixel (`px`, `py`) (row 0 at the bottom, §11) is inside the triangle with
/// s12.4 vertices `v`: its centre strictly inside every edge of the counter-clockwise
/// triangle, or exactly on a top edge (horizontal, the triangle below it) or a left edge
/// (OpenGL's top-left rule, which the model documents).
pub fn covers(v: [(i64, i64); 3], px: i64, py: i64) -> bool {
    let cross = |o: (i64, i64), a: (i64, i64), b: (i64, i64)| {
        (a.0 - o.0) * (b.1 - o.1) - (a.1 - o.1) * (b.0 - o.0)
    };
    let area = cross(v[0], v[1], v[2]);
    if area == 0 {
        return false;
    }
    let ccw = if area > 0 { v } else { [v[0], v[2], v[1]] };
    let centre = (px * 16 + 8, py * 16 + 8);
    (0..3).all(|i| {
        let (a, b) = (ccw[i], ccw[(i + 1) % 3]);
        let edge = cross(a, b, centre);
        // Counter-clockwise with y up: the interior is to the left of a -> b. A top edge
        // runs right to left (b.x < a.x) at constant y; a left edge runs downwards.
        let top = a.1 == b.1 && b.0 < a.0;
        let left = b.1 < a.1;
        edge > 0 || (edge == 0 && (top || left))
    })
}

/// s12.4 of a pixel coordinate, as the driver rounds it (to the nearest sixteenth).
pub fn sub(p: f32) -> i64 {
    (p * 16.0).round() as i64
}

/// The triangle's vertices in s12.4.
pub fn subpixels(t: &[NvVertex; 3]) -> [(i64, i64); 3] {
    t.map(|v| (sub(v.x), sub(v.y)))
}

/// Drive `gpu` to silence after a test (reads also run it under seeded pacing).
pub fn settle(gpu: &Gpu) {
    for _ in 0..50 {
        gpu.poll();
    }
}

/// Read register `offset` of the model directly.
pub fn reg(gpu: &Gpu, offset: usize) -> u32 {
    gpu.read32(offset)
}

/// The scene's frame: 3 x 2 tiles.
pub const SCENE_W: u16 = 192;
/// The scene's frame height.
pub const SCENE_H: u16 = 128;

/// A vertex at (`x`, `y`) pixels with three varyings (red, green, blue).
pub fn v(x: f32, y: f32, rgb: [f32; 3]) -> NvVertex {
    NvVertex::at(x, y).with_varyings(&rgb)
}

/// Five overlapping triangles with per-vertex colours, both windings, edges shared.
pub fn scene() -> Vec<[NvVertex; 3]> {
    vec![
        [
            v(2.0, 3.0, [1.0, 0.0, 0.0]),
            v(150.0, 10.0, [0.0, 1.0, 0.0]),
            v(70.0, 120.0, [0.0, 0.0, 1.0]),
        ],
        [
            v(100.0, 20.0, [1.0, 1.0, 0.0]),
            v(190.0, 125.0, [0.0, 1.0, 1.0]),
            v(40.5, 90.25, [1.0, 0.0, 1.0]),
        ],
        [
            v(64.0, 64.0, [0.2, 0.4, 0.6]),
            v(128.0, 64.0, [0.9, 0.1, 0.3]),
            v(96.0, 127.0, [0.5, 0.5, 0.5]),
        ],
        [
            v(128.0, 64.0, [0.0, 0.0, 0.0]),
            v(64.0, 64.0, [1.0, 1.0, 1.0]),
            v(96.0, 1.0, [0.3, 0.8, 0.1]),
        ],
        [
            v(170.0, 5.0, [0.25, 0.75, 1.0]),
            v(191.0, 60.0, [1.0, 0.5, 0.0]),
            v(120.0, 40.0, [0.6, 0.0, 0.9]),
        ],
    ]
}

/// The assembler's varying-colour fragment shader (`programs::VARYING_COLOUR`).
pub fn varying_colour() -> Vec<u64> {
    let mut out = [0u64; 32];
    programs::assemble_into(programs::VARYING_COLOUR, &mut out).expect("shader").to_vec()
}

/// A register interface that counts the writes per register and forwards them.
pub struct Counting<'a> {
    pub inner: &'a Gpu,
    pub writes: std::cell::RefCell<std::collections::HashMap<usize, usize>>,
}

impl<'a> Counting<'a> {
    pub fn new(inner: &'a Gpu) -> Self {
        Counting { inner, writes: Default::default() }
    }

    /// Writes to register `R` so far.
    pub fn writes_to<R: baregpu_videocore_v3d::hal::Register>(&self) -> usize {
        self.writes.borrow().get(&R::OFFSET).copied().unwrap_or(0)
    }
}

impl RegisterIo for Counting<'_> {
    fn read32(&self, offset: usize) -> u32 {
        self.inner.read32(offset)
    }
    fn write32(&self, offset: usize, value: u32) {
        *self.writes.borrow_mut().entry(offset).or_default() += 1;
        self.inner.write32(offset, value)
    }
}
