//! `v3d-*`: the VideoCore IV V3D driver (`drivers/videocore-v3d`) against the emulated V3D
//! (`qemu-tests/models/v3d`) behind the project-defined PCI wrapper: registers through the
//! mailbox `RegisterIo`, control lists, tile memory, frame buffers and QPU code in guest RAM,
//! shaders and user programs from `baregpu-qpu-asm`.
//!
//! The render cases draw the scenes of `gpu_mailbox::v3d_scenes` and log where the frame is
//! (`v3d: frame scene=… address=… width=… height=… format=rgba8888`); the runner reads it
//! from the guest RAM file, saves `frame.png` and compares it with its own rasterisation.
//!
//! The same code runs on x86_64 (`v3d-*`) and on aarch64 `virt` (`aarch64-v3d-*`); `v3d-irq`
//! needs MSI-X and is x86_64's only.
#![cfg_attr(target_arch = "aarch64", allow(dead_code))]

use super::{CaseError, attach_reset, check, expect, expect_eq, inject};
use crate::Kernel;
use crate::arch::irq::without_interrupts;
use crate::clock::KernelClock;
use crate::dma::IdentityDma;
use crate::mailbox::{self, Mailbox, MailboxIo, virtual_function};
use baregpu_hal::RegisterIoExt;
use baregpu_hal::dma::{BusAddress, DmaBuffer, DmaLayout};
use baregpu_hal::pci;
use baregpu_hal::time::poll_until;
use baregpu_qpu_asm::programs;
use baregpu_videocore_v3d::gpu::GpuQueue;
use baregpu_videocore_v3d::job::{JobBufferSizes, TileLayout};
use baregpu_videocore_v3d::regs::v3d::{V3D_IDENT0, V3D_IDENT1, V3D_IDENT2};
use baregpu_videocore_v3d::{
    Bar, ColorFormat, FenceError, FenceFailure, FenceStatus, FragmentShader, Framebuffer, Identity,
    InitError, JobMemory, NvVertex, OverflowPool, ProbeError, RenderJob, SubmitError, UserProgram,
    V3d, V3dConfig, WaitError, identity,
};
use core::sync::atomic::{AtomicU32, Ordering};
use core::time::Duration;
use defmt::Debug2Format;
use gpu_mailbox::v3d_faults::{self, MISSED_IRQ, OUTOMEM_STORM, SLOW_TICKS_SHIFT};
use gpu_mailbox::v3d_scenes::{self, MAX_TRIANGLES, Scene, Shading};
use gpu_mailbox::{Op, platform};

/// The driver over the mailbox; `'p` is the overflow pool's lifetime.
type Gpu<'p> = V3d<'p, MailboxIo, KernelClock>;
/// DMA memory from the kernel's pool, given back on drop.
type Buffer = DmaBuffer<'static, IdentityDma>;

/// A frame or a batch of user programs normally completes within a few thousand mailbox
/// round trips; the bound absorbs a loaded host.
const WAIT: Duration = Duration::from_secs(10);
/// How long a job that must NOT complete (stuck control-list executor) is waited for.
const STALL_WINDOW: Duration = Duration::from_millis(100);
/// Bytes of each overflow block the binner is given on OUTOMEM.
const OVERFLOW_BLOCK_BYTES: u32 = 4096;
/// Tile allocation memory beyond the initial blocks (the binner's own pool, §10 BPCA/BPCS).
const TILE_POOL_BYTES: usize = 16 * 1024;

fn alloc(kernel: &Kernel, bytes: usize) -> Result<Buffer, CaseError> {
    let r = DmaBuffer::allocate(kernel.dma, DmaLayout::new(bytes.max(16), 256)?)?;
    r.zero();
    Ok(r)
}

/// Mailbox attached, device reset, the V3D's PCI function found by its project-defined IDs
/// and its register BAR enabled.
fn attach(kernel: &Kernel) -> Result<(&'static Mailbox, MailboxIo), CaseError> {
    let (mailbox, platform) = attach_reset(kernel)?;
    let function = pci::probe(&platform, virtual_function()).map_err(CaseError::Pci)?;
    expect_eq("pci: vendor (project-defined)", function.vendor, platform::VENDOR)?;
    expect_eq("pci: device (V3D)", function.device, platform::DEVICE_V3D)?;
    let bar = function.register_bar().ok_or(CaseError::Check("a register BAR"))?;
    expect_eq("pci: registers in BAR0", bar.slot as u64, u64::from(platform::REGISTER_BAR))?;
    expect("pci: BAR0 holds the 4 KiB register window", bar.size >= 4096)?;
    pci::enable_memory_and_bus_master(&platform, virtual_function()).map_err(CaseError::Pci)?;
    Ok((mailbox, mailbox.io(u32::from(platform::REGISTER_BAR))))
}

fn init<'p>(io: MailboxIo, pool: Option<OverflowPool<'p>>) -> Result<Gpu<'p>, CaseError> {
    check("init", V3d::init(io, KernelClock, pool, V3dConfig::default()))
}

fn log_identity(id: &Identity) {
    defmt::info!(
        "v3d: technology version {=u8}, revision {=u8}, {=u8} slices x {=u8} QPUs, {=u8} TMUs per slice, {=u8} semaphores, VPM {=u32} bytes, tile buffer {}, HDR {=bool}, double-buffered tile buffer {=bool}",
        id.tech_version,
        id.revision,
        id.slices,
        id.qpus_per_slice,
        id.tmus_per_slice,
        id.semaphores,
        id.vpm_bytes,
        id.tile_buffer,
        id.hdr,
        id.tile_double_buffer
    );
}

/// `v3d-probe`: `V3D_IDENT0/1/2` decoded (the model's configuration is the BCM2835's: 3
/// slices of 4 QPUs, 12 KiB VPM); a V3D reading all-ones is `DeviceGone` for the probe and
/// for `init`, after reads only; a powered-off V3D (IDENT0 reads 0) is `NotV3d`.
pub fn probe(kernel: &Kernel) -> Result<(), CaseError> {
    let (mailbox, io) = attach(kernel)?;
    let bar: Bar<MailboxIo> = Bar::new(io);
    let id = check("probe", identity::probe(&bar))?;
    log_identity(&id);
    expect_eq("IDENT0: technology version", id.tech_version, 2u8)?;
    expect_eq("IDENT1: slices", id.slices, 3u8)?;
    expect_eq("IDENT1: QPUs per slice", id.qpus_per_slice, 4u8)?;
    expect_eq("QPUs in all", id.qpus(), 12u32)?;
    expect_eq("IDENT1: VPM bytes", id.vpm_bytes, 12 * 1024u32)?;
    let (ident1, ident2) = (bar.read::<V3D_IDENT1>().raw(), bar.read::<V3D_IDENT2>().raw());
    expect(
        "an IDENT0 of zero (powered off) is NotV3d",
        matches!(Identity::decode(0, ident1, ident2), Err(ProbeError::NotV3d { ident0: 0 })),
    )?;

    inject(mailbox, v3d_faults::ALL_ONES)?;
    let requests = mailbox.requests();
    let gone = identity::probe(&bar);
    defmt::info!("v3d: probe of an all-ones V3D: {}", Debug2Format(&gone));
    expect("all-ones: probe says DeviceGone", matches!(gone, Err(ProbeError::DeviceGone(_))))?;
    expect("... after at most three reads", mailbox.requests() - requests <= 3)?;
    let failed = V3d::init(io, KernelClock, None, V3dConfig::default()).err();
    defmt::info!("v3d: init of an all-ones V3D: {}", Debug2Format(&failed));
    expect("all-ones: init says DeviceGone", matches!(failed, Some(InitError::DeviceGone(_))))?;
    inject(mailbox, 0)?;
    expect_eq(
        "IDENT0 reads the V3D again",
        bar.read::<V3D_IDENT0>().raw(),
        V3D_IDENT0::RESET.raw(),
    )?;
    let gpu = init(io, None)?;
    expect_eq("init: the same identity", gpu.identity().qpus(), 12u32)?;
    Ok(())
}

/// QPU code (64-bit instructions, low word first) in DMA memory.
fn upload_code(kernel: &Kernel, words: &[u64]) -> Result<Buffer, CaseError> {
    let code = alloc(kernel, words.len() * 8)?;
    for (i, w) in words.iter().enumerate() {
        code.write_slice(i * 8, &[*w as u32, (*w >> 32) as u32])?;
    }
    Ok(code)
}

/// The fragment shader of `scene`: the constant-colour or the varying-colour program from
/// `baregpu-qpu-asm`, with the (unused) uniforms buffer beside it.
struct Shader {
    code: Buffer,
    uniforms: Buffer,
}

impl Shader {
    fn of(kernel: &Kernel, scene: &Scene) -> Result<Shader, CaseError> {
        let mut words = [0u64; 32];
        let code = match scene.shading {
            Shading::Constant(rgba) => {
                check("constant-colour shader", programs::constant_colour(rgba, &mut words))?
            }
            Shading::Varyings => check(
                "varying-colour shader",
                programs::assemble_into(programs::VARYING_COLOUR, &mut words),
            )?,
        };
        Ok(Shader { code: upload_code(kernel, code)?, uniforms: alloc(kernel, 16)? })
    }

    fn fragment(&self) -> FragmentShader {
        FragmentShader {
            code: self.code.bus_address(),
            uniforms: self.uniforms.bus_address(),
            single_threaded: true,
        }
    }
}

/// A render job's buffers, owned until its fence signalled.
struct JobBuffers {
    binning: Buffer,
    rendering: Buffer,
    tile_allocation: Buffer,
    tile_state: Buffer,
    vertices: Buffer,
    framebuffer: Buffer,
}

impl JobBuffers {
    fn for_scene(kernel: &Kernel, scene: &Scene) -> Result<JobBuffers, CaseError> {
        let tiles =
            check("tile layout", TileLayout::of(u32::from(scene.width), u32::from(scene.height)))?;
        // The driver's sizes for the buffers (lists are stored by whole dwords).
        let sizes = JobBufferSizes::of(tiles, scene.triangles.len() * 3, 3);
        Ok(JobBuffers {
            binning: alloc(kernel, sizes.binning_list)?,
            rendering: alloc(kernel, sizes.rendering_list)?,
            tile_allocation: alloc(kernel, sizes.tile_allocation + TILE_POOL_BYTES)?,
            tile_state: alloc(kernel, sizes.tile_state)?,
            vertices: alloc(kernel, sizes.vertices)?,
            framebuffer: alloc(kernel, usize::from(scene.width) * usize::from(scene.height) * 4)?,
        })
    }

    fn memory(&self) -> JobMemory<'_> {
        JobMemory {
            binning_list: &self.binning,
            rendering_list: &self.rendering,
            tile_allocation: &self.tile_allocation,
            tile_state: &self.tile_state,
            vertices: &self.vertices,
        }
    }
}

/// `scene`'s triangles as the driver's pre-shaded vertices (their colours as varyings).
fn triangles(scene: &Scene) -> Result<([[NvVertex; 3]; MAX_TRIANGLES], usize), CaseError> {
    let n = scene.triangles.len();
    if n > MAX_TRIANGLES {
        return Err(CaseError::Check("the scene fits the kernel's triangle array"));
    }
    let mut out = [[NvVertex::at(0.0, 0.0); 3]; MAX_TRIANGLES];
    for (slot, t) in out.iter_mut().zip(scene.triangles) {
        *slot = t.map(|v| NvVertex::at(v.x, v.y).with_varyings(&v.rgb));
    }
    Ok((out, n))
}

fn job<'a>(
    scene: &Scene,
    triangles: &'a [[NvVertex; 3]],
    buffers: &JobBuffers,
    shader: &Shader,
) -> RenderJob<'a> {
    RenderJob {
        framebuffer: Framebuffer {
            address: buffers.framebuffer.bus_address(),
            width: scene.width,
            height: scene.height,
            format: ColorFormat::Rgba8888,
        },
        clear_color: scene.clear,
        triangles,
        varyings: match scene.shading {
            Shading::Constant(_) => 0,
            Shading::Varyings => 3,
        },
        shader: shader.fragment(),
    }
}

/// Render `scene` and wait for its frame; returns the job's buffers (the frame among them).
fn render(kernel: &Kernel, gpu: &mut Gpu<'_>, scene: &Scene) -> Result<JobBuffers, CaseError> {
    let shader = Shader::of(kernel, scene)?;
    let buffers = JobBuffers::for_scene(kernel, scene)?;
    let (tris, n) = triangles(scene)?;
    let frames = gpu.frames_rendered();
    let fence =
        check("render", gpu.render(&job(scene, &tris[..n], &buffers, &shader), &buffers.memory()))?;
    check("frame fence", gpu.wait(&fence, WAIT))?;
    expect_eq("one frame rendered (V3D_RFC)", gpu.frames_rendered() - frames, 1u64)?;
    Ok(buffers)
}

/// Log where `scene`'s frame is, for the runner's picture check.
fn log_frame(scene: &Scene, framebuffer: &Buffer) {
    defmt::info!(
        "v3d: frame scene={=str} address={=u64:#x} width={=u16} height={=u16} format=rgba8888",
        scene.name,
        framebuffer.bus_address().0,
        scene.width,
        scene.height
    );
}

/// The RGBA8888 word at pixel (`x`, `y`) (row 0 at the bottom, §11) of a frame.
fn pixel(frame: &Buffer, scene: &Scene, x: u16, y: u16) -> Result<u32, CaseError> {
    let at = (usize::from(y) * usize::from(scene.width) + usize::from(x)) * 4;
    Ok(frame.read_u32(at)?)
}

fn render_case(kernel: &Kernel, scene: &Scene) -> Result<(), CaseError> {
    let (_, io) = attach(kernel)?;
    let pool_memory = alloc(kernel, 16 * OVERFLOW_BLOCK_BYTES as usize)?;
    let pool = check("overflow pool", OverflowPool::new(&pool_memory, OVERFLOW_BLOCK_BYTES))?;
    let mut gpu = init(io, Some(pool))?;
    let buffers = render(kernel, &mut gpu, scene)?;
    let fb = &buffers.framebuffer;
    // A quick look before the runner's full comparison: a corner keeps the clear colour and
    // the first triangle's first vertex (inside it, by the scenes' construction) is drawn.
    expect_eq("pixel (0, 0) is the clear colour", pixel(fb, scene, 0, 0)?, scene.clear)?;
    let first = scene.triangles[0][0];
    let inside = pixel(fb, scene, first.x as u16 + 2, first.y as u16 + 2)?;
    expect("the first triangle is drawn", inside != scene.clear)?;
    log_frame(scene, fb);
    Ok(())
}

/// `v3d-triangle`: one triangle through the constant-colour fragment shader.
pub fn triangle(kernel: &Kernel) -> Result<(), CaseError> {
    render_case(kernel, &v3d_scenes::TRIANGLE)
}

/// `v3d-scene`: overlapping triangles with interpolated colours (the varying-colour shader).
pub fn scene(kernel: &Kernel) -> Result<(), CaseError> {
    render_case(kernel, &v3d_scenes::SCENE)
}

/// Bytes of one VPM row (16 32-bit words, §7).
const VPM_ROW_BYTES: u32 = 64;

/// `v3d-vector-add`: `VECTOR_ADD` through the user-program queue, compared with the CPU.
pub fn vector_add(kernel: &Kernel) -> Result<(), CaseError> {
    let (_, io) = attach(kernel)?;
    let mut gpu = init(io, None)?;
    check("reserve user VPM", gpu.reserve_user_vpm(VPM_ROW_BYTES))?;
    let a: [u32; 16] = core::array::from_fn(|i| (i as u32) * 7 + 3);
    let b: [u32; 16] = core::array::from_fn(|i| 0xFFFF_FFF0u32.wrapping_add(i as u32 * 1000));
    let (va, vb, vc) = (alloc(kernel, 64)?, alloc(kernel, 64)?, alloc(kernel, 64)?);
    va.write_slice(0, &a)?;
    vb.write_slice(0, &b)?;
    vc.write_slice(0, &[0xDEAD_BEEF; 16])?;
    let mut words = [0u64; 32];
    let code = check("assemble", programs::assemble_into(programs::VECTOR_ADD, &mut words))?;
    let code = upload_code(kernel, code)?;
    let uniforms = alloc(kernel, 16)?;
    let addr = |b: &Buffer| b.bus_address().0 as u32;
    uniforms.write_slice(0, &[addr(&va), addr(&vb), addr(&vc)])?;
    let program =
        UserProgram { code: code.bus_address(), uniforms: uniforms.bus_address(), uniforms_len: 3 };
    let fence = check("run program", gpu.run_program(&program))?;
    check("program fence", gpu.wait(&fence, WAIT))?;
    let mut c = [0u32; 16];
    vc.read_slice(0, &mut c)?;
    let want: [u32; 16] = core::array::from_fn(|i| a[i].wrapping_add(b[i]));
    for (i, (got, want)) in c.iter().zip(want).enumerate() {
        if *got != want {
            defmt::error!("c[{=usize}] = {=u32:#x}, CPU {=u32:#x}", i, got, want);
        }
    }
    expect("c = a + b on every element, as the CPU computes it", c == want)?;
    expect_eq("one program completed (SRQCS.QPURQCC)", gpu.programs_completed(), 1u64)?;
    Ok(())
}

/// QPUs the SAXPY case runs on at once (all twelve of the BCM2835's).
const SAXPY_QPUS: usize = 12;
/// Rows of 16 floats each QPU computes.
const SAXPY_ROWS_PER_QPU: usize = 4;

/// `v3d-saxpy`: `out = a * x + y` over 48 rows of 16 floats, split over twelve user programs
/// queued in one submission (each with its own rows and VPM row, the VPM DMA under the
/// mutex), compared bit for bit with the CPU (one f32 multiply, one f32 add, as the QPU).
pub fn saxpy(kernel: &Kernel) -> Result<(), CaseError> {
    const ROWS: usize = SAXPY_QPUS * SAXPY_ROWS_PER_QPU;
    const N: usize = ROWS * 16;
    let (_, io) = attach(kernel)?;
    let mut gpu = init(io, None)?;
    check("reserve user VPM", gpu.reserve_user_vpm(SAXPY_QPUS as u32 * VPM_ROW_BYTES))?;
    let a = 2.5f32;
    let x: [f32; N] = core::array::from_fn(|i| i as f32 * 0.25 - 17.0);
    let y: [f32; N] = core::array::from_fn(|i| 100.0 - (i as f32) * 0.5);
    let (bx, by, bout) = (alloc(kernel, N * 4)?, alloc(kernel, N * 4)?, alloc(kernel, N * 4)?);
    for i in 0..N {
        bx.write_u32(i * 4, x[i].to_bits())?;
        by.write_u32(i * 4, y[i].to_bits())?;
        bout.write_u32(i * 4, f32::NAN.to_bits())?;
    }
    let mut words = [0u64; 64];
    let code = check("assemble", programs::assemble_into(programs::SAXPY, &mut words))?;
    let code = upload_code(kernel, code)?;
    let stride = 16 * 4u32;
    let per_qpu = (SAXPY_ROWS_PER_QPU as u32) * stride;
    let uniforms = alloc(kernel, SAXPY_QPUS * 8 * 4)?;
    let addr = |b: &Buffer| b.bus_address().0 as u32;
    let mut progs =
        [UserProgram { code: code.bus_address(), uniforms: BusAddress(0), uniforms_len: 8 };
            SAXPY_QPUS];
    for (q, p) in progs.iter_mut().enumerate() {
        let off = q as u32 * per_qpu;
        let u = programs::saxpy_uniforms(
            a,
            addr(&bx) + off,
            addr(&by) + off,
            addr(&bout) + off,
            SAXPY_ROWS_PER_QPU as u32,
            stride,
            q as u8,
        );
        uniforms.write_slice(q * 32, &u)?;
        p.uniforms = BusAddress(uniforms.bus_address().0 + q as u64 * 32);
    }
    let fence = check(
        "submit twelve programs",
        gpu.submit(SAXPY_QPUS + 1, |s| {
            for p in &progs {
                s.program(p)?;
            }
            s.fence()
        }),
    )?;
    check("saxpy fence", gpu.wait(&fence, WAIT))?;
    let mut wrong = 0usize;
    for i in 0..N {
        let got = bout.read_u32(i * 4)?;
        let want = (a * x[i] + y[i]).to_bits();
        if got != want {
            if wrong < 8 {
                defmt::error!("out[{=usize}] = {=u32:#x}, CPU {=u32:#x}", i, got, want);
            }
            wrong += 1;
        }
    }
    defmt::info!("v3d: saxpy over {=usize} floats on {=usize} QPUs", N, SAXPY_QPUS);
    expect_eq("elements differing from the CPU", wrong as u64, 0u64)?;
    expect_eq("twelve programs completed", gpu.programs_completed(), SAXPY_QPUS as u64)?;
    Ok(())
}

/// Render `scene` and wait at most `timeout`; returns how the wait ended, the fence and the
/// job's buffers (kept until a reset ends the job).
fn render_expecting(
    kernel: &Kernel,
    gpu: &mut Gpu<'_>,
    scene: &Scene,
    timeout: Duration,
) -> Result<(Result<(), WaitError>, baregpu_videocore_v3d::Fence, JobBuffers), CaseError> {
    let shader = Shader::of(kernel, scene)?;
    let buffers = JobBuffers::for_scene(kernel, scene)?;
    let (tris, n) = triangles(scene)?;
    let fence =
        check("render", gpu.render(&job(scene, &tris[..n], &buffers, &shader), &buffers.memory()))?;
    let result = gpu.wait(&fence, timeout);
    defmt::info!("v3d: wait ended with {}", Debug2Format(&result));
    Ok((result, fence, buffers))
}

/// Reset, clear the injected fault and check the stopped job's fence reads lost; then a frame
/// renders again.
fn recover(
    kernel: &Kernel,
    mailbox: &Mailbox,
    gpu: &mut Gpu<'_>,
    fence: &baregpu_videocore_v3d::Fence,
) -> Result<(), CaseError> {
    // Reset while the fault still holds the job (cleared first, the job could finish before
    // the reset stops it), then clear the fault.
    let report = check("reset", gpu.reset())?;
    inject(mailbox, 0)?;
    defmt::info!("v3d: reset: {}", Debug2Format(&report));
    expect(
        "the stopped job's fence completed as lost",
        matches!(gpu.fence_status(fence), FenceStatus::Failed(FenceFailure::Lost)),
    )?;
    let again = render(kernel, gpu, &v3d_scenes::TRIANGLE)?;
    let scene = &v3d_scenes::TRIANGLE;
    expect_eq(
        "after recovery: pixel (0, 0) cleared",
        pixel(&again.framebuffer, scene, 0, 0)?,
        scene.clear,
    )?;
    Ok(())
}

/// `v3d-faults`: each injected fault reaches the driver as a typed error, and the V3D works
/// again after a reset:
/// - all-ones: submission says `DeviceGone` and nothing is written;
/// - a stuck control-list executor (`cp-stall`): the bounded wait times out without progress;
/// - an OUTOMEM storm: the binner takes every overflow block and the wait ends with
///   `OverflowPoolExhausted`;
/// - a bus fault on a control-list fetch (`dma-fault`): `ControlListError` (CTERR); the
///   device is in its error state until the platform's reset, which clears its counters under
///   the driver; the driver's reset then reads the frame as lost, and a frame renders;
/// - a slow executor (`slow=8`): the frame still completes.
pub fn faults(kernel: &Kernel) -> Result<(), CaseError> {
    let (mailbox, io) = attach(kernel)?;
    let pool_blocks = 4u32;
    let pool_memory = alloc(kernel, (pool_blocks * OVERFLOW_BLOCK_BYTES) as usize)?;
    let pool = check("overflow pool", OverflowPool::new(&pool_memory, OVERFLOW_BLOCK_BYTES))?;
    let mut gpu = init(io, Some(pool))?;
    let scene = &v3d_scenes::TRIANGLE;

    // All-ones: the device is gone for the submission, which writes nothing.
    inject(mailbox, v3d_faults::ALL_ONES)?;
    let shader = Shader::of(kernel, scene)?;
    let buffers = JobBuffers::for_scene(kernel, scene)?;
    let (tris, n) = triangles(scene)?;
    let doorbells = gpu.stats().doorbells;
    let gone = gpu.render(&job(scene, &tris[..n], &buffers, &shader), &buffers.memory());
    defmt::info!("v3d: render on an all-ones V3D: {}", Debug2Format(&gone));
    expect("all-ones: SubmitError::DeviceGone", matches!(gone, Err(SubmitError::DeviceGone(_))))?;
    expect_eq("... and no doorbell", gpu.stats().doorbells, doorbells)?;
    inject(mailbox, 0)?;
    check("reset after all-ones", gpu.reset())?;
    render(kernel, &mut gpu, scene)?;

    // A stuck control-list executor: a bounded wait, then recovery by reset.
    inject(mailbox, v3d_faults::CP_STALL)?;
    let (result, fence, _stuck) = render_expecting(kernel, &mut gpu, scene, STALL_WINDOW)?;
    expect(
        "stuck CLE: the wait times out without progress",
        matches!(result, Err(WaitError::Fence(FenceError::Timeout { progressed: false, .. }))),
    )?;
    recover(kernel, mailbox, &mut gpu, &fence)?;

    // OUTOMEM storm: every block handed out, then the typed error.
    inject(mailbox, OUTOMEM_STORM)?;
    let (result, fence, _starved) = render_expecting(kernel, &mut gpu, scene, WAIT)?;
    expect(
        "OUTOMEM storm: the overflow pool is exhausted",
        matches!(result, Err(WaitError::OverflowPoolExhausted { blocks }) if blocks == pool_blocks),
    )?;
    recover(kernel, mailbox, &mut gpu, &fence)?;

    // A bus fault on the next control-list fetch: the thread stops with CTERR.
    inject(mailbox, v3d_faults::DMA_FAULT)?;
    let (result, fence, _faulted) = render_expecting(kernel, &mut gpu, scene, WAIT)?;
    expect(
        "list fetch fault: the wait ends with the thread's ControlListError",
        matches!(result, Err(WaitError::ControlListError { .. })),
    )?;
    // The bus error put the whole device in its error state: the platform's reset (on a Pi,
    // powering the V3D's domain off and on through the firmware) clears the V3D's counters
    // under the driver, which does not read the cleared frame counter as frames rendered:
    // its reset reports the frame lost.
    mailbox.reset()?;
    recover(kernel, mailbox, &mut gpu, &fence)?;

    // A slow executor is slow, not hung.
    inject(mailbox, v3d_faults::SLOW | 8 << SLOW_TICKS_SHIFT)?;
    render(kernel, &mut gpu, scene)?;
    inject(mailbox, 0)?;
    Ok(())
}

/// A user program that raises its QPU's host interrupt (`HOST_INT`, §3 Table 14) and ends.
const HOST_INTERRUPT: &str = "\
    mov host_int, 1
    thrend
    nop
    nop
";

/// The driver where `v3d-irq`'s interrupt handler finds it.
static IRQ_GPU: spin::Mutex<Option<Gpu<'static>>> = spin::Mutex::new(None);
/// MSI-X interrupts that carried a device line.
static MSIX: AtomicU32 = AtomicU32::new(0);
/// Frame-done interrupts the handler acknowledged.
static FRAME_IRQS: AtomicU32 = AtomicU32::new(0);
/// QPU host interrupts the handler acknowledged.
static QPU_IRQS: AtomicU32 = AtomicU32::new(0);

/// The MSI-X handler: the driver's `handle_interrupts` reads and acknowledges what latched.
fn on_interrupt(lines: u32) {
    if lines != 0 {
        MSIX.fetch_add(1, Ordering::SeqCst);
    }
    if let Some(mut guard) = IRQ_GPU.try_lock()
        && let Some(gpu) = guard.as_mut()
        && let Ok(report) = gpu.handle_interrupts()
    {
        FRAME_IRQS.fetch_add(u32::from(report.frame_done), Ordering::SeqCst);
        QPU_IRQS.fetch_add(report.qpus.count_ones(), Ordering::SeqCst);
    }
}

/// Run `f` on the driver with interrupts off (the handler never sees it half-way).
fn with_gpu<T>(f: impl FnOnce(&mut Gpu<'static>) -> Result<T, CaseError>) -> Result<T, CaseError> {
    without_interrupts(|| {
        let mut guard = IRQ_GPU.lock();
        let gpu = guard.as_mut().ok_or(CaseError::Check("driver present"))?;
        f(gpu)
    })
}

/// Wait with interrupts on until `counter` passes `before`.
fn irq_arrives(what: &'static str, counter: &AtomicU32, before: u32) -> Result<(), CaseError> {
    let arrived =
        poll_until(&KernelClock, WAIT, || (counter.load(Ordering::SeqCst) > before).then_some(()));
    check(what, arrived)?;
    defmt::info!("ok: {=str}", what);
    Ok(())
}

/// `v3d-irq`: the driver's opt-in interrupts over MSI-X: a frame's `FRDONE` and a user
/// program's QPU host interrupt each arrive and are acknowledged by `handle_interrupts` in the
/// handler; with `missed-irq` injected the next host interrupt never reaches the line, the
/// program's fence completes by polling all the same, no MSI-X comes, and a polled
/// `handle_interrupts` finds the QPU's bit latched.
pub fn irq(kernel: &Kernel) -> Result<(), CaseError> {
    let (mailbox, io) = attach(kernel)?;
    let mut gpu: Gpu<'static> = init(io, None)?;
    check("reserve user VPM", gpu.reserve_user_vpm(VPM_ROW_BYTES))?;
    without_interrupts(|| {
        check("enable interrupts", gpu.enable_interrupts())?;
        mailbox.request(Op::IrqAck, 0, 0, u32::MAX)?;
        *IRQ_GPU.lock() = Some(gpu);
        mailbox::set_irq_handler(Some(on_interrupt));
        Ok::<_, CaseError>(())
    })?;
    crate::arch::irq::enable();

    // A frame: FRDONE by MSI-X.
    let scene = &v3d_scenes::TRIANGLE;
    let shader = Shader::of(kernel, scene)?;
    let buffers = JobBuffers::for_scene(kernel, scene)?;
    let (tris, n) = triangles(scene)?;
    let frames = FRAME_IRQS.load(Ordering::SeqCst);
    let fence = with_gpu(|gpu| {
        check("render", gpu.render(&job(scene, &tris[..n], &buffers, &shader), &buffers.memory()))
    })?;
    irq_arrives("the frame-done interrupt arrives by MSI-X", &FRAME_IRQS, frames)?;
    let done = with_gpu(|gpu| Ok(gpu.fence_status(&fence)))?;
    expect(
        "the frame's fence has signalled when its interrupt arrives",
        done == FenceStatus::Signalled,
    )?;

    // A user program's host interrupt by MSI-X.
    let mut words = [0u64; 8];
    let code = check("assemble", programs::assemble_into(HOST_INTERRUPT, &mut words))?;
    let code = upload_code(kernel, code)?;
    let program =
        UserProgram { code: code.bus_address(), uniforms: BusAddress(0), uniforms_len: 0 };
    let qpu_irqs = QPU_IRQS.load(Ordering::SeqCst);
    let fence = with_gpu(|gpu| check("run program", gpu.run_program(&program)))?;
    irq_arrives("the QPU host interrupt arrives by MSI-X", &QPU_IRQS, qpu_irqs)?;
    with_gpu(|gpu| check("program fence", gpu.wait(&fence, WAIT)))?;

    // Missed: no line, completion by polling, the latched bit found by a polled handler.
    inject(mailbox, MISSED_IRQ)?;
    let (msix, qpu_irqs) = (MSIX.load(Ordering::SeqCst), QPU_IRQS.load(Ordering::SeqCst));
    let fence = with_gpu(|gpu| check("run program", gpu.run_program(&program)))?;
    with_gpu(|gpu| {
        check("missed interrupt: the fence completes by polling", gpu.wait(&fence, WAIT))
    })?;
    let late = poll_until(&KernelClock, STALL_WINDOW, || {
        (MSIX.load(Ordering::SeqCst) != msix).then_some(())
    });
    expect("missed interrupt: no MSI-X arrives", late.is_err())?;
    expect_eq(
        "... and the handler saw no QPU interrupt",
        QPU_IRQS.load(Ordering::SeqCst),
        qpu_irqs,
    )?;
    let report = with_gpu(|gpu| check("polled handle_interrupts", gpu.handle_interrupts()))?;
    defmt::info!("v3d: polled after the missed interrupt: {}", report);
    expect("... a polled handle_interrupts finds the QPU's bit latched", report.qpus != 0)?;
    inject(mailbox, 0)?;

    without_interrupts(|| {
        mailbox::set_irq_handler(None);
        IRQ_GPU.lock().take();
    });
    Ok(())
}
