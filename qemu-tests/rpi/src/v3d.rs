//! The V3D on the Pi: powered up through the firmware, probed and brought up with
//! `baregpu-videocore-v3d`, and (on a board whose V3D answers) one frame rendered into the
//! mailbox framebuffer and one QPU user program run. The QPU code is `baregpu-qpu-asm`'s
//! example programs: the constant-colour fragment shader and `VPM_STORE`.
//!
//! Power-up order. The V3D document (broadcom-videocore-iv-3d) does not say how the block is
//! powered: on the Pi the VideoCore firmware owns its power domain and clock. The image asks
//! the firmware with the "enable QPU" property tag (0x00030012; Raspberry Pi firmware wiki
//! "Mailbox property interface", and the hello_fft sample's `qpu_enable` that every QPU
//! program on the Pi starts with) before the first V3D register access, then lets the driver
//! probe (`V3D_IDENT0/1/2`, three reads, no write) and bring it up. Linux powers the same
//! domain through the firmware's power-domain tag (raspberrypi-power.c) and then checks
//! `V3D_IDENT0` the same way (vc4_v3d.c). The registers are read whatever the firmware
//! answered: on QEMU `raspi3b` (10.0) the V3D window is an unimplemented-device region that
//! reads zero and ignores writes, so the driver's probe reports `NotV3d` there; the firmware's
//! refusal is reported beside it. The V3D stays powered: the image parks after its frame
//! (hello_fft sends the same tag with 0 when it exits; a kernel done with the V3D would too,
//! after dropping the driver, whose `Drop` stops both control list threads first).
//!
//! Cache coherency. The image runs with the MMU and the data cache off (`boot.rs`), so every
//! CPU write reaches RAM before the next access, and the V3D is given every buffer at its
//! uncached VideoCore bus alias (`0xC0000000 | ARM address`, [`arm_to_bus`]): the V3D's reads
//! and writes then bypass the VideoCore L2 cache, the display scans out the rendered frame from
//! RAM, and the ARM reads the user program's output from RAM.
//! The driver still clears the V3D's own L2 and slice caches before each job (its `init` and
//! submission). With the data cache on, a kernel must clean the lists, vertices, shader and
//! uniforms before submitting and invalidate what the V3D wrote (frame buffer, program
//! output) before reading it.

use core::cell::UnsafeCell;
use core::fmt;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicBool, Ordering};
use core::time::Duration;

use baregpu_hal::MmioRegion;
use baregpu_hal::dma::{DmaAllocator, DmaError, DmaLayout, DmaRegion};
use baregpu_platform::dma::{BumpDma, PoolError};
use baregpu_qpu_asm::programs;
use baregpu_qpu_asm::{AsmError, BuildError as QpuBuildError};
use baregpu_videocore_v3d::{
    ColorFormat, FragmentShader, Framebuffer, InitError, JobBufferSizes, JobError, JobMemory,
    NvVertex, OverflowPool, RenderJob, SubmitError, TileLayout, UserProgram, V3d, V3dConfig,
    WaitError,
};

use crate::framebuffer::{Framebuffer as FirmwareFramebuffer, Rgb};
use crate::mailbox::{Mailbox, MailboxError, arm_to_bus};
use crate::soc;
use crate::timer::SystemTimer;

/// Bytes of RAM the image gives the V3D: the overflow pool, the job's lists, tile memory,
/// vertices and shader.
pub const ARENA_BYTES: usize = 256 * 1024;
/// The binner's overflow pool (the driver refills the binner from it on out-of-memory).
pub const OVERFLOW_POOL_BYTES: usize = 64 * 1024;
/// Bytes handed to the binner per out-of-memory refill (`V3D_BPOA`/`V3D_BPOS`): the pool gives
/// four. One triangle's tile lists fit the initial 32-byte blocks, so a refill is not expected.
pub const OVERFLOW_BLOCK_BYTES: u32 = 16 * 1024;
/// How long the frame, or the user program, may take on the V3D.
pub const FRAME_TIMEOUT: Duration = Duration::from_millis(500);
/// Instructions the image's QPU programs may have.
const MAX_INSTRUCTIONS: usize = 16;
/// Words `VPM_STORE` writes: one VPM row of 16 elements.
pub const PROGRAM_WORDS: usize = 16;
/// What the destination holds before the program runs (none of the element numbers).
const POISON: u32 = 0xDEAD_BEEF;

/// The driver over the Pi's V3D window, timed by the system timer.
pub type PiV3d<'p, 'c> = V3d<'p, MmioRegion, &'c SystemTimer>;

/// RAM for the V3D: page-aligned, in `.bss` (so below 1 GiB and reachable at a bus address).
#[repr(C, align(4096))]
struct Arena(UnsafeCell<[u8; ARENA_BYTES]>);

// SAFETY: the arena is only reached through the one `BumpDma` that `take_arena` builds, once.
unsafe impl Sync for Arena {}

static ARENA: Arena = Arena(UnsafeCell::new([0; ARENA_BYTES]));

/// Why the image could not use the V3D.
#[derive(Debug)]
pub enum V3dError {
    /// The arena has no bus address or could not be made a pool (a bug in this image).
    Arena(PoolError),
    /// [`take_arena`] was called a second time.
    ArenaTaken,
    /// A buffer could not be taken from the arena.
    Dma(DmaError),
    /// The V3D is not there: the driver's probe or bring-up refused it. `power` is the
    /// firmware's refusal of the power-up, if it refused.
    NotPresent {
        /// What the driver found.
        init: InitError,
        /// The firmware's answer to "enable QPU", when it was not a success.
        power: Option<MailboxError>,
    },
    /// The mailbox framebuffer's rows are not packed as the V3D stores them (pitch 4 x width).
    FramebufferPitch {
        /// Bytes per row the firmware gave.
        pitch: u32,
        /// Pixels per row.
        width: u32,
    },
    /// The job does not fit (tile layout, buffer sizes).
    Job(JobError),
    /// The submission was refused.
    Submit(SubmitError),
    /// The frame or the program did not complete.
    Wait(WaitError),
    /// The fragment shader could not be built.
    Shader(QpuBuildError),
    /// The user program did not assemble.
    Program(AsmError),
    /// The user VPM could not be reserved.
    Vpm(InitError),
    /// The user program completed but memory does not hold what it writes.
    ProgramResult {
        /// The first word that differs.
        index: usize,
        /// What it holds.
        found: u32,
    },
}

impl fmt::Display for V3dError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            V3dError::Arena(_) => f.write_str("DMA arena"),
            V3dError::ArenaTaken => f.write_str("the DMA arena was already taken"),
            V3dError::Dma(_) => f.write_str("DMA buffer"),
            V3dError::NotPresent { power: Some(e), .. } => {
                write!(f, "V3D not present (firmware power-up refused: {e})")
            }
            V3dError::NotPresent { power: None, .. } => {
                f.write_str("V3D not present (firmware confirmed the power-up)")
            }
            V3dError::FramebufferPitch { pitch, width } => {
                write!(f, "framebuffer pitch {pitch} is not 4 x {width}")
            }
            V3dError::Job(_) => f.write_str("render job"),
            V3dError::Submit(_) => f.write_str("submission"),
            V3dError::Wait(_) => f.write_str("waiting for the V3D"),
            V3dError::Shader(_) => f.write_str("fragment shader"),
            V3dError::Program(_) => f.write_str("user program"),
            V3dError::Vpm(_) => f.write_str("user VPM reservation"),
            V3dError::ProgramResult { index, found } => {
                write!(f, "user program: word {index} reads {found:#x}, expected {index}")
            }
        }
    }
}

impl core::error::Error for V3dError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            V3dError::Arena(e) => Some(e),
            V3dError::Dma(e) => Some(e),
            V3dError::NotPresent { init, .. } => Some(init),
            V3dError::Job(e) => Some(e),
            V3dError::Submit(e) => Some(e),
            V3dError::Wait(e) => Some(e),
            V3dError::Shader(e) => Some(e),
            V3dError::Program(e) => Some(e),
            V3dError::Vpm(e) => Some(e),
            V3dError::ArenaTaken
            | V3dError::FramebufferPitch { .. }
            | V3dError::ProgramResult { .. } => None,
        }
    }
}

/// Set by the first [`take_arena`].
static ARENA_TAKEN: AtomicBool = AtomicBool::new(false);

/// The arena as a DMA pool at its uncached bus alias; [`V3dError::ArenaTaken`] after the first
/// call.
pub fn take_arena() -> Result<BumpDma, V3dError> {
    if ARENA_TAKEN.swap(true, Ordering::AcqRel) {
        return Err(V3dError::ArenaTaken);
    }
    let cpu = NonNull::new(ARENA.0.get().cast::<u8>()).ok_or(V3dError::Arena(PoolError::Empty))?;
    let bus =
        arm_to_bus(cpu.as_ptr().addr()).map_err(|_| V3dError::Arena(PoolError::Misaligned))?;
    // SAFETY: `ARENA` is RAM in `.bss`, used by nothing but this pool (`ARENA_TAKEN` lets only
    // one be built); with the data cache off the V3D sees the same bytes at `bus`.
    unsafe { BumpDma::new(cpu, bus, ARENA_BYTES) }.map_err(V3dError::Arena)
}

fn take(dma: &BumpDma, size: usize, align: usize) -> Result<DmaRegion, V3dError> {
    dma.allocate(DmaLayout::new(size, align).map_err(V3dError::Dma)?).map_err(V3dError::Dma)
}

/// The overflow pool's memory, from the arena.
pub fn overflow_memory(dma: &BumpDma) -> Result<DmaRegion, V3dError> {
    take(dma, OVERFLOW_POOL_BYTES, 4096)
}

/// Power the V3D up through the firmware, then probe and bring it up with the driver.
pub fn bring_up<'p, 'c>(
    mailbox: &mut Mailbox<MmioRegion, &'c SystemTimer>,
    clock: &'c SystemTimer,
    overflow: &'p DmaRegion,
) -> Result<PiV3d<'p, 'c>, V3dError> {
    let power = mailbox.enable_qpu(true).err();
    let pool = OverflowPool::new(overflow, OVERFLOW_BLOCK_BYTES).map_err(V3dError::Job)?;
    // SAFETY: the V3D register window of the BCM2837 (device memory with the MMU off); the
    // driver is its only user.
    let io = unsafe { soc::region(soc::V3D, soc::V3D_WINDOW) };
    V3d::init(io, clock, Some(pool), V3dConfig::default())
        .map_err(|init| V3dError::NotPresent { init, power })
}

/// The frame the image renders: a dark background and one triangle, both in the firmware
/// framebuffer's pixel encoding.
pub const BACKGROUND: Rgb = Rgb::new(0, 0, 64);
/// The triangle's colour.
pub const TRIANGLE: Rgb = Rgb::new(255, 160, 0);

/// Render one frame into the firmware framebuffer: cleared to [`BACKGROUND`], one triangle
/// in [`TRIANGLE`] with its corners at a quarter, half and three quarters of the screen.
/// Returns the frame's fence number.
pub fn render_scene(
    v3d: &mut PiV3d<'_, '_>,
    fb: &FirmwareFramebuffer,
    dma: &BumpDma,
) -> Result<u64, V3dError> {
    let (w, h) = (fb.width(), fb.height());
    if fb.pitch() != w * ColorFormat::Rgba8888.bytes_per_pixel() {
        return Err(V3dError::FramebufferPitch { pitch: fb.pitch(), width: w });
    }
    let target = Framebuffer {
        address: fb.bus_address(),
        width: w as u16,
        height: h as u16,
        format: ColorFormat::Rgba8888,
    };
    let layout = TileLayout::of(w, h).map_err(V3dError::Job)?;
    // The shader's code and an empty uniforms stream it never reads.
    let mut shader = [0u64; MAX_INSTRUCTIONS];
    let shader =
        programs::constant_colour(fb.encode(TRIANGLE), &mut shader).map_err(V3dError::Shader)?;
    let code = load_code(dma, shader)?;
    let uniforms = take(dma, 16, 16)?;
    let (x0, x1, x2) = (w as f32 / 4.0, w as f32 / 2.0, w as f32 * 3.0 / 4.0);
    let (y0, y1) = (h as f32 / 4.0, h as f32 * 3.0 / 4.0);
    let triangle = [NvVertex::at(x0, y1), NvVertex::at(x2, y1), NvVertex::at(x1, y0)];
    let sizes = JobBufferSizes::of(layout, triangle.len(), 0);
    let binning_list = take(dma, sizes.binning_list, 16)?;
    let rendering_list = take(dma, sizes.rendering_list, 16)?;
    let tile_allocation = take(dma, sizes.tile_allocation, 4096)?;
    let tile_state = take(dma, sizes.tile_state, 16)?;
    let vertices = take(dma, sizes.vertices, 16)?;
    let memory = JobMemory {
        binning_list: &binning_list,
        rendering_list: &rendering_list,
        tile_allocation: &tile_allocation,
        tile_state: &tile_state,
        vertices: &vertices,
    };
    let job = RenderJob {
        framebuffer: target,
        clear_color: fb.encode(BACKGROUND),
        triangles: &[triangle],
        varyings: 0,
        shader: FragmentShader {
            code: code.bus_address(),
            uniforms: uniforms.bus_address(),
            single_threaded: true,
        },
    };
    let fence = v3d.render(&job, &memory).map_err(V3dError::Submit)?;
    v3d.wait(&fence, FRAME_TIMEOUT).map_err(V3dError::Wait)?;
    Ok(fence.seq())
}

/// QPU code in DMA memory: each 64-bit instruction as two little-endian words, low first.
fn load_code(dma: &BumpDma, code: &[u64]) -> Result<DmaRegion, V3dError> {
    let region = take(dma, code.len() * 8, 8)?;
    for (i, insn) in code.iter().enumerate() {
        region.write_u32(i * 8, *insn as u32).map_err(V3dError::Dma)?;
        region.write_u32(i * 8 + 4, (*insn >> 32) as u32).map_err(V3dError::Dma)?;
    }
    Ok(region)
}

/// The user-program demo: `baregpu-qpu-asm`'s `VPM_STORE` (the 16 element numbers through the
/// VPM and a VDW DMA to the address in its first uniform) run once through the request queue,
/// with one 256-byte unit of VPM reserved for user programs. The destination is filled with
/// a value none of the numbers has first; after the fence every word must hold its index.
/// Returns the words read back.
pub fn run_user_program(
    v3d: &mut PiV3d<'_, '_>,
    dma: &BumpDma,
) -> Result<[u32; PROGRAM_WORDS], V3dError> {
    let mut words = [0u64; MAX_INSTRUCTIONS];
    let program =
        programs::assemble_into(programs::VPM_STORE, &mut words).map_err(V3dError::Program)?;
    let code = load_code(dma, program)?;
    let destination = take(dma, PROGRAM_WORDS * 4, 64)?;
    destination.write_slice(0, &[POISON; PROGRAM_WORDS]).map_err(V3dError::Dma)?;
    let uniforms = take(dma, 16, 16)?;
    uniforms.write_u32(0, destination.bus_address().low()).map_err(V3dError::Dma)?;
    v3d.reserve_user_vpm(baregpu_videocore_v3d::VPM_RESERVE_UNIT_BYTES).map_err(V3dError::Vpm)?;
    let fence = v3d
        .run_program(&UserProgram {
            code: code.bus_address(),
            uniforms: uniforms.bus_address(),
            uniforms_len: 1,
        })
        .map_err(V3dError::Submit)?;
    v3d.wait(&fence, FRAME_TIMEOUT).map_err(V3dError::Wait)?;
    let mut back = [0u32; PROGRAM_WORDS];
    destination.read_slice(0, &mut back).map_err(V3dError::Dma)?;
    match back.iter().enumerate().find(|&(i, &w)| w != i as u32) {
        Some((index, &found)) => Err(V3dError::ProgramResult { index, found }),
        None => Ok(back),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use baregpu_hal::dma::BusAddress;

    #[repr(C, align(4096))]
    struct Page([u8; 4096]);

    #[test]
    fn the_qpu_programs_fit_and_are_stored_low_word_first() {
        let mut page = Box::new(Page([0; 4096]));
        let cpu = NonNull::from(&mut page.0).cast::<u8>();
        // SAFETY: `page` is host memory owned by this test and outlives the pool.
        let dma = unsafe { BumpDma::new(cpu, BusAddress(0x1000), 4096) }.unwrap();
        let mut shader = [0u64; MAX_INSTRUCTIONS];
        let shader = programs::constant_colour(0xFF00_80FF, &mut shader).unwrap();
        let mut program = [0u64; MAX_INSTRUCTIONS];
        let program = programs::assemble_into(programs::VPM_STORE, &mut program).unwrap();
        for code in [shader, program] {
            let region = load_code(&dma, code).unwrap();
            assert!(region.bus_address().0.is_multiple_of(8));
            for (i, insn) in code.iter().enumerate() {
                assert_eq!(region.read_u32(i * 8).unwrap(), *insn as u32);
                assert_eq!(region.read_u32(i * 8 + 4).unwrap(), (*insn >> 32) as u32);
            }
        }
        // The program ends as every QPU program must: thread end, then two delay slots.
        assert_eq!(program[program.len() - 3], 0x3000_09E7_009E_7000);
    }
}
