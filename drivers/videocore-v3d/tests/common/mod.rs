//! A scripted V3D register file for the driver's tests: every write is logged in order,
//! plain registers keep what was written, command registers (write-1-to-clear, start and
//! queue ports) only log, and a test scripts the device's answers with `on_write`/`on_read`
//! hooks. Plus host DMA memory at chosen bus addresses and a clock that advances per read.
#![allow(dead_code)]

use core::cell::{Cell, RefCell};
use core::ptr::NonNull;
use std::collections::HashMap;

use baregpu_hal::dma::{BusAddress, DmaRegion};
use baregpu_hal::time::Clock;
use baregpu_hal::{Register, RegisterIo};
use baregpu_videocore_v3d::regs::v3d::*;

/// Byte offset of register `R`.
pub fn off<R: Register>() -> usize {
    R::OFFSET
}

/// Registers whose writes are commands, not stored values.
fn is_command(offset: usize) -> bool {
    [
        off::<V3D_CT0CS>(),
        off::<V3D_CT1CS>(),
        off::<V3D_BFC>(),
        off::<V3D_RFC>(),
        off::<V3D_SRQCS>(),
        off::<V3D_SRQPC>(),
        off::<V3D_INTCTL>(),
        off::<V3D_INTENA>(),
        off::<V3D_INTDIS>(),
        off::<V3D_L2CACTL>(),
        off::<V3D_SLCACTL>(),
        off::<V3D_DBQITC>(),
    ]
    .contains(&offset)
}

type WriteHook = Box<dyn FnMut(&mut HashMap<usize, u32>, usize, u32)>;
type ReadHook = Box<dyn FnMut(&mut HashMap<usize, u32>, usize) -> Option<u32>>;

/// The scripted register file.
pub struct FakeV3d {
    pub regs: RefCell<HashMap<usize, u32>>,
    pub writes: RefCell<Vec<(usize, u32)>>,
    pub all_ones: Cell<bool>,
    on_write: RefCell<Option<WriteHook>>,
    on_read: RefCell<Option<ReadHook>>,
}

impl Default for FakeV3d {
    fn default() -> Self {
        Self::with_identity(
            V3D_IDENT0::RESET.raw(),
            V3D_IDENT1::RESET.raw(),
            V3D_IDENT2::RESET.raw(),
        )
    }
}

impl FakeV3d {
    /// A V3D whose identity registers read these values.
    pub fn with_identity(ident0: u32, ident1: u32, ident2: u32) -> Self {
        let mut regs = HashMap::new();
        regs.insert(off::<V3D_IDENT0>(), ident0);
        regs.insert(off::<V3D_IDENT1>(), ident1);
        regs.insert(off::<V3D_IDENT2>(), ident2);
        FakeV3d {
            regs: RefCell::new(regs),
            writes: RefCell::new(Vec::new()),
            all_ones: Cell::new(false),
            on_write: RefCell::new(None),
            on_read: RefCell::new(None),
        }
    }

    /// Run `hook` after every write (the register map, the offset, the value).
    pub fn on_write(&self, hook: impl FnMut(&mut HashMap<usize, u32>, usize, u32) + 'static) {
        *self.on_write.borrow_mut() = Some(Box::new(hook));
    }

    /// Answer reads with `hook` where it returns a value.
    pub fn on_read(
        &self,
        hook: impl FnMut(&mut HashMap<usize, u32>, usize) -> Option<u32> + 'static,
    ) {
        *self.on_read.borrow_mut() = Some(Box::new(hook));
    }

    /// Set a register's value as the device would.
    pub fn set(&self, offset: usize, value: u32) {
        self.regs.borrow_mut().insert(offset, value);
    }

    pub fn get(&self, offset: usize) -> u32 {
        self.regs.borrow().get(&offset).copied().unwrap_or(0)
    }

    /// Forget the writes logged so far.
    pub fn clear_log(&self) {
        self.writes.borrow_mut().clear();
    }

    /// The logged writes.
    pub fn log(&self) -> Vec<(usize, u32)> {
        self.writes.borrow().clone()
    }

    /// The logged writes to `offset`.
    pub fn writes_to(&self, offset: usize) -> Vec<u32> {
        self.log().into_iter().filter(|(o, _)| *o == offset).map(|(_, v)| v).collect()
    }
}

impl RegisterIo for FakeV3d {
    fn read32(&self, offset: usize) -> u32 {
        if self.all_ones.get() {
            return u32::MAX;
        }
        let mut regs = self.regs.borrow_mut();
        if let Some(hook) = self.on_read.borrow_mut().as_mut()
            && let Some(v) = hook(&mut regs, offset)
        {
            return v;
        }
        regs.get(&offset).copied().unwrap_or(0)
    }

    fn write32(&self, offset: usize, value: u32) {
        self.writes.borrow_mut().push((offset, value));
        if self.all_ones.get() {
            return;
        }
        let mut regs = self.regs.borrow_mut();
        if !is_command(offset) {
            regs.insert(offset, value);
        }
        if let Some(hook) = self.on_write.borrow_mut().as_mut() {
            hook(&mut regs, offset, value);
        }
    }
}

/// A clock that advances 1 us every time it is read.
#[derive(Default)]
pub struct StepClock(Cell<u64>);

impl Clock for StepClock {
    fn now_ns(&self) -> u64 {
        let t = self.0.get();
        self.0.set(t + 1000);
        t
    }
}

/// `bytes` zeroed bytes of host memory seen by the device at `bus`.
pub fn region(bytes: usize, bus: u64) -> DmaRegion {
    let dwords = bytes.div_ceil(4);
    let mem: &'static mut [u32] = Box::leak(vec![0u32; dwords].into_boxed_slice());
    let cpu = NonNull::from(mem).cast::<u8>();
    // SAFETY: the leaked buffer is valid for reads and writes forever, 4-byte aligned, never
    // accessed except through this region, and `dwords * 4` bytes long.
    unsafe { DmaRegion::from_raw_parts(cpu, BusAddress(bus), dwords * 4) }
}

/// A region of exactly `bytes` (not rounded to whole dwords: what an allocator that does not
/// round hands out), backed by whole dwords.
pub fn exact_region(bytes: usize, bus: u64) -> DmaRegion {
    let dwords = bytes.div_ceil(4);
    let mem: &'static mut [u32] = Box::leak(vec![0u32; dwords].into_boxed_slice());
    let cpu = NonNull::from(mem).cast::<u8>();
    // SAFETY: as in `region`; the region claims no more than the `dwords * 4` bytes leaked.
    unsafe { DmaRegion::from_raw_parts(cpu, BusAddress(bus), bytes) }
}

/// The first `len` bytes of `r`.
pub fn bytes(r: &DmaRegion, len: usize) -> Vec<u8> {
    let mut words = vec![0u32; r.size() / 4];
    r.read_slice(0, &mut words).unwrap();
    words.iter().flat_map(|w| w.to_le_bytes()).take(len).collect()
}

/// The buffers of a job, at fixed bus addresses (tile allocation 1 MiB past the others).
pub struct Buffers {
    pub binning: DmaRegion,
    pub rendering: DmaRegion,
    pub tile_allocation: DmaRegion,
    pub tile_state: DmaRegion,
    pub vertices: DmaRegion,
}

pub const BIN_BUS: u64 = 0x0100_0000;
pub const RENDER_BUS: u64 = 0x0101_0000;
pub const TILE_ALLOC_BUS: u64 = 0x0200_0000;
pub const TILE_STATE_BUS: u64 = 0x0210_0000;
pub const VERTICES_BUS: u64 = 0x0220_0000;
pub const FB_BUS: u64 = 0x0300_0000;
pub const SHADER_BUS: u64 = 0x0400_0000;
pub const UNIFORMS_BUS: u64 = 0x0400_1000;

impl Buffers {
    pub fn new() -> Self {
        Buffers {
            binning: region(256, BIN_BUS),
            rendering: region(4096, RENDER_BUS),
            tile_allocation: region(64 * 1024, TILE_ALLOC_BUS),
            tile_state: region(4096, TILE_STATE_BUS),
            vertices: region(4096, VERTICES_BUS),
        }
    }

    pub fn memory(&self) -> baregpu_videocore_v3d::JobMemory<'_> {
        baregpu_videocore_v3d::JobMemory {
            binning_list: &self.binning,
            rendering_list: &self.rendering,
            tile_allocation: &self.tile_allocation,
            tile_state: &self.tile_state,
            vertices: &self.vertices,
        }
    }
}

pub fn shader() -> baregpu_videocore_v3d::FragmentShader {
    baregpu_videocore_v3d::FragmentShader {
        code: BusAddress(SHADER_BUS),
        uniforms: BusAddress(UNIFORMS_BUS),
        single_threaded: true,
    }
}

/// A 130x70-pixel frame (3x2 tiles) with one triangle carrying two varyings.
pub fn triangle_job(
    triangles: &[[baregpu_videocore_v3d::NvVertex; 3]],
) -> baregpu_videocore_v3d::RenderJob<'_> {
    baregpu_videocore_v3d::RenderJob {
        framebuffer: baregpu_videocore_v3d::Framebuffer {
            address: BusAddress(FB_BUS),
            width: 130,
            height: 70,
            format: baregpu_videocore_v3d::ColorFormat::Rgba8888,
        },
        clear_color: 0xff20_4060,
        triangles,
        varyings: 2,
        shader: shader(),
    }
}

pub fn one_triangle() -> [[baregpu_videocore_v3d::NvVertex; 3]; 1] {
    use baregpu_videocore_v3d::NvVertex;
    [[
        NvVertex::at(10.0, 5.5).with_varyings(&[1.0, 0.0]),
        NvVertex::at(120.25, 8.0).with_varyings(&[0.0, 1.0]),
        NvVertex::at(-3.0, 60.0).with_varyings(&[0.5, 0.5]),
    ]]
}
