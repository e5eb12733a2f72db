//! CTM compute on a Radeon R5xx from a bare-metal OS: the workloads the QEMU demos and the
//! host tests run, each checked element by element against a host computation.
//!
//! A workload assembles its DPP program (`baregpu-dpp-asm`), validates the executable (`baregpu-ati-ctm`'s
//! ch. 4 loader), places it and its surfaces in DMA memory, builds a CTM command buffer with
//! `baregpu-ati-ctm`'s Table 3 builders and dispatches it through the R5xx ring
//! ([`baregpu_radeon_r5xx::ctm`]), then reads the outputs back through the MC address translation of
//! §2.1.4.
//!
//! * [`vector_add`], [`saxpy`]: linear inputs and outputs.
//! * [`stencil`]: a 4-point stencil over a **tiled** input (Table 2 addressing).
//! * [`reduce`]: a 2x2 reduction whose writes are gated by the Conditional Output unit
//!   (§2.1.3): only block sums above a per-element threshold are written, and the threshold
//!   buffer is updated with them.
//! * [`caches_and_counters`]: `flush_out_cache`, `inv_inp_cache` and the performance counters,
//!   observed through memory; [`not_idle_fault`]: a non-pipelined command without
//!   `wait_for_idle` stops the CTM units with a typed fault, and the device recovers.
//!
//! Inputs are small integers and quarters, so every result is exact in `f32` and compared
//! exactly. `no_std`, no allocation.
#![no_std]
#![forbid(unsafe_code)]

use core::fmt;
use core::time::Duration;

use baregpu_ati_ctm::addressing;
use baregpu_ati_ctm::command::{
    CommandBuffer, CondLoc, CondTest, CtmCommands, CtmError, DataFormat, Domain, Format,
    GpuAddress, Height, InputIndex, OutputIndex, OutputMask, Tiling,
};
use baregpu_ati_ctm::elf::{DppExecutable, ElfError};
use baregpu_dpp_asm::{BuildError, Instruction, Words, assemble_executable};
use baregpu_hal::RegisterIo;
use baregpu_hal::dma::{DmaAllocator, DmaBuffer, DmaError, DmaRegion};
use baregpu_hal::time::Clock;
use baregpu_radeon_r5xx::ctm::{
    self, CtmCommandBuffer, CtmFault, CtmLoadError, CtmProgram, CtmWaitError,
};
use baregpu_radeon_r5xx::{InitError, R5xx, SubmitError};

pub use baregpu_dpp_asm::examples;

/// How long one dispatch may take before it counts as hung (the emulated device runs a
/// 64x64 domain in milliseconds; under TCG on a loaded 2-core host, allow far more).
pub const DISPATCH_TIMEOUT: Duration = Duration::from_secs(5);

/// Words of the command buffers built here.
const COMMAND_WORDS: usize = 128;
/// Instruction slots the assembler may use.
const MAX_INSTRUCTIONS: usize = 32;
/// Bytes of an assembled executable.
const ELF_BYTES: usize = 4096;

/// Why a workload failed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WorkloadError {
    /// The program did not assemble.
    Assemble(BuildError),
    /// The assembled executable was rejected by the loader.
    Executable(ElfError),
    /// A command could not be built.
    Command(CtmError),
    /// DMA memory for a surface.
    Dma(DmaError),
    /// Program or command buffer placement.
    Load(CtmLoadError),
    /// The ring refused the dispatch.
    Submit(SubmitError),
    /// The dispatch did not complete.
    Wait(CtmWaitError),
    /// Recovery after an expected fault failed.
    Recover(InitError),
    /// An element differs from the host's result.
    Mismatch {
        /// Which surface.
        what: &'static str,
        /// Element coordinates.
        x: u32,
        /// Element coordinates.
        y: u32,
        /// Value read back.
        got: f32,
        /// Host result.
        want: f32,
    },
    /// A property of the run does not hold.
    Check(&'static str),
}

impl fmt::Display for WorkloadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WorkloadError::Mismatch { what, x, y, got, want } => {
                write!(f, "{what}[{x}, {y}] = {got}, host computed {want}")
            }
            other => write!(f, "{other:?}"),
        }
    }
}

macro_rules! from {
    ($($t:ty => $v:ident),*) => {
        $(impl From<$t> for WorkloadError {
            fn from(e: $t) -> Self { WorkloadError::$v(e) }
        })*
    };
}
from!(BuildError => Assemble, ElfError => Executable, CtmError => Command, DmaError => Dma,
      CtmLoadError => Load, SubmitError => Submit, CtmWaitError => Wait, InitError => Recover);

/// What a workload computed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Report {
    /// Workload name.
    pub name: &'static str,
    /// Domain elements the program ran over.
    pub elements: u32,
    /// Output values compared with the host's.
    pub checked: u32,
    /// FNV-1a over the output values' bits, row by row.
    pub checksum: u32,
    /// The first output values.
    pub first: [f32; 4],
}

/// FNV-1a, 32 bits.
#[derive(Debug, Clone, Copy)]
struct Checksum(u32);

impl Checksum {
    const fn new() -> Self {
        Checksum(0x811C_9DC5)
    }
    fn add(&mut self, v: f32) {
        for b in v.to_bits().to_le_bytes() {
            self.0 = (self.0 ^ u32::from(b)).wrapping_mul(0x0100_0193);
        }
    }
}

/// Surfaces in DMA memory, given back when the workload ends, whatever the outcome (each is a
/// `DmaBuffer`, freed when the arena drops).
struct Arena<'d, D: DmaAllocator> {
    dma: &'d D,
    regions: [Option<DmaBuffer<'d, D>>; 8],
}

impl<'d, D: DmaAllocator> Arena<'d, D> {
    fn new(dma: &'d D) -> Self {
        Arena { dma, regions: Default::default() }
    }

    /// A zeroed `width` x `height` FLOAT32_1 surface (`width` a multiple of 4: the pitch),
    /// at a 2 KiB-aligned MC address; [`view`](Self::view) gives access to it.
    fn surface(
        &mut self,
        width: u32,
        height: u32,
        tiling: Tiling,
    ) -> Result<Placed, WorkloadError> {
        let format = Format::new(width, tiling, DataFormat::Float32x1)?;
        // The extent of the surface under this translation (tiling pads to whole tiles).
        let mut end = 0u32;
        for y in 0..height {
            for x in 0..width {
                end = end.max(addressing::address(format, GpuAddress::ZERO, x, y) + 4);
            }
        }
        let Some(slot) = self.regions.iter().position(Option::is_none) else {
            return Err(WorkloadError::Check("more than 8 surfaces"));
        };
        let (region, base) = ctm::allocate(self.dma, end as usize)?;
        region.zero();
        self.regions[slot] = Some(region);
        Ok(Placed { slot, base, format, width, height })
    }

    fn view(&self, p: Placed) -> Result<Surface<'_>, WorkloadError> {
        let region = self.regions[p.slot].as_deref().ok_or(WorkloadError::Check("surface slot"))?;
        Ok(Surface { region, base: p.base, format: p.format, width: p.width, height: p.height })
    }
}

/// Where [`Arena::surface`] placed a surface.
#[derive(Clone, Copy)]
struct Placed {
    slot: usize,
    base: GpuAddress,
    format: Format,
    width: u32,
    height: u32,
}

/// A 2D surface of one-channel `f32` elements in DMA memory, addressed as the MC does.
#[derive(Clone, Copy)]
struct Surface<'a> {
    region: &'a DmaRegion,
    base: GpuAddress,
    format: Format,
    width: u32,
    height: u32,
}

impl Surface<'_> {
    fn offset(&self, x: u32, y: u32) -> usize {
        (addressing::address(self.format, self.base, x, y) - self.base.get()) as usize
    }

    fn write(&self, x: u32, y: u32, v: f32) -> Result<(), WorkloadError> {
        Ok(self.region.write_u32(self.offset(x, y), v.to_bits())?)
    }

    fn read(&self, x: u32, y: u32) -> Result<f32, WorkloadError> {
        Ok(f32::from_bits(self.region.read_u32(self.offset(x, y))?))
    }

    fn fill(&self, f: impl Fn(u32, u32) -> f32) -> Result<(), WorkloadError> {
        for y in 0..self.height {
            for x in 0..self.width {
                self.write(x, y, f(x, y))?;
            }
        }
        Ok(())
    }

    fn height(&self) -> Result<Height, WorkloadError> {
        Ok(Height::new(self.height)?)
    }
}

/// Run `body` with `source` loaded and an arena for its surfaces; everything is freed after,
/// whatever the outcome.
fn with_program<D: DmaAllocator, T>(
    dma: &D,
    source: &str,
    body: impl FnOnce(&CtmProgram<'_, D>, &mut Arena<'_, D>) -> Result<T, WorkloadError>,
) -> Result<T, WorkloadError> {
    let program = load_program(source, dma)?;
    let mut arena = Arena::new(dma);
    let result = body(&program, &mut arena);
    // Surfaces, then the program, go back to `dma` (the last dispatch's fence was waited for).
    drop(arena);
    drop(program);
    result
}

/// Assemble `source` and load it: the executable passes the ch. 4 loader first.
fn load_program<'d, D: DmaAllocator + ?Sized>(
    source: &str,
    dma: &'d D,
) -> Result<CtmProgram<'d, D>, WorkloadError> {
    let mut insts = [Instruction::default(); MAX_INSTRUCTIONS];
    let mut words: [Words; MAX_INSTRUCTIONS] = [[0; 6]; MAX_INSTRUCTIONS];
    let mut elf = [0u8; ELF_BYTES];
    let len = assemble_executable(source, &mut insts, &mut words, &mut elf)?;
    let exe = DppExecutable::parse(&elf[..len])?;
    Ok(CtmProgram::load(&exe, dma)?)
}

/// The commands every run starts with: program, caches invalidated (the inputs, constants
/// and program may have changed since the last run, §2.1.4), every output channel, no
/// conditional test.
fn preamble<P: DmaAllocator + ?Sized>(
    cb: &mut CommandBuffer<'_>,
    program: &CtmProgram<'_, P>,
) -> Result<(), CtmError> {
    cb.set_inst_fmt(program.address(), program.format())?;
    cb.set_out_mask(OutputMask::ALL)?;
    cb.set_cond_loc(CondLoc::Dpp)?;
    cb.set_cond_test(CondTest::Always)?;
    cb.set_cond_out_mask(false)?;
    cb.inv_inst_cache()?;
    cb.inv_constf_cache()?;
    cb.inv_inp_cache()?;
    Ok(())
}

/// Run over `domain`, wait for the array to go idle, flush the output caches (§2.2: the
/// flush makes the outputs visible in memory).
fn run_and_flush(cb: &mut CommandBuffer<'_>, domain: Domain) -> Result<(), CtmError> {
    cb.set_domain(domain)?;
    cb.start_program()?;
    cb.wait_for_idle()?;
    cb.flush_out_cache()?;
    cb.flush_cond_out_cache()
}

fn input(cb: &mut CommandBuffer<'_>, n: u32, s: &Surface<'_>) -> Result<(), WorkloadError> {
    Ok(cb.set_inp_fmt(InputIndex::new(n)?, s.base, s.format, s.height()?)?)
}

fn output(cb: &mut CommandBuffer<'_>, n: u32, s: &Surface<'_>) -> Result<(), WorkloadError> {
    Ok(cb.set_out_fmt(OutputIndex::new(n)?, s.base, s.format, s.height()?)?)
}

/// Submit `words` with `program` and wait for the fence.
fn dispatch<IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized>(
    gpu: &mut R5xx<'_, IO, C, A>,
    dma: &impl DmaAllocator,
    program: &CtmProgram<'_, impl DmaAllocator + ?Sized>,
    words: &[u32],
) -> Result<(), WorkloadError> {
    // Given back when this returns: after the fence, or on an error (a dispatch that never
    // reached the ring, or a CTM fault that stopped the CP).
    let mut commands = CtmCommandBuffer::new(dma, words.len().max(1))?;
    commands.set(words)?;
    let fence = gpu.ctm_submit(program, &commands)?;
    gpu.ctm_wait(&fence, DISPATCH_TIMEOUT)?;
    Ok(())
}

/// Compare `out` with `want(x, y)` over `xs` x `ys`, building the report.
fn compare(
    name: &'static str,
    out: &Surface<'_>,
    xs: core::ops::Range<u32>,
    ys: core::ops::Range<u32>,
    want: impl Fn(u32, u32) -> f32,
) -> Result<Report, WorkloadError> {
    let mut sum = Checksum::new();
    let mut first = [0.0; 4];
    let mut checked = 0u32;
    for y in ys {
        for x in xs.clone() {
            let (got, want) = (out.read(x, y)?, want(x, y));
            if got != want {
                return Err(WorkloadError::Mismatch { what: name, x, y, got, want });
            }
            if (checked as usize) < first.len() {
                first[checked as usize] = got;
            }
            sum.add(got);
            checked += 1;
        }
    }
    Ok(Report { name, elements: checked, checked, checksum: sum.0, first })
}

fn a(x: u32, y: u32) -> f32 {
    ((x * 7 + y * 13) % 64) as f32 - 20.0
}

fn b(x: u32, y: u32) -> f32 {
    ((x * 3 + y * 5) % 32) as f32 * 0.25
}

/// `out = in0 + in1` over a 64x16 domain.
pub fn vector_add<IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized>(
    gpu: &mut R5xx<'_, IO, C, A>,
    dma: &impl DmaAllocator,
) -> Result<Report, WorkloadError> {
    const W: u32 = 64;
    const H: u32 = 16;
    binary(gpu, dma, "vector_add", examples::VECTOR_ADD, W, H, None, |x, y| a(x, y) + b(x, y))
}

/// The SAXPY constant.
pub const SAXPY_A: f32 = 2.5;

/// SAXPY, `out = a * x + y` with `a` = [`SAXPY_A`] in constant `c0.x`, over 64x64 elements.
pub fn saxpy<IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized>(
    gpu: &mut R5xx<'_, IO, C, A>,
    dma: &impl DmaAllocator,
) -> Result<Report, WorkloadError> {
    const W: u32 = 64;
    const H: u32 = 64;
    binary(gpu, dma, "saxpy", examples::SAXPY, W, H, Some(SAXPY_A), |x, y| {
        SAXPY_A * a(x, y) + b(x, y)
    })
}

/// A two-input, one-output element-wise program, with an optional `c0.x`.
#[allow(clippy::too_many_arguments)]
fn binary<IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized>(
    gpu: &mut R5xx<'_, IO, C, A>,
    dma: &impl DmaAllocator,
    name: &'static str,
    source: &str,
    w: u32,
    h: u32,
    c0: Option<f32>,
    want: impl Fn(u32, u32) -> f32,
) -> Result<Report, WorkloadError> {
    with_program(dma, source, |program, arena| {
        let x = arena.surface(w, h, Tiling::Linear)?;
        let y = arena.surface(w, h, Tiling::Linear)?;
        let o = arena.surface(w, h, Tiling::Linear)?;
        let k = arena.surface(4, 1, Tiling::Linear)?;
        let (x, y, o, k) = (arena.view(x)?, arena.view(y)?, arena.view(o)?, arena.view(k)?);
        x.fill(a)?;
        y.fill(b)?;
        o.fill(|_, _| f32::NAN)?;
        let mut mem = [0u32; COMMAND_WORDS];
        let mut cb = CommandBuffer::new(&mut mem);
        preamble(&mut cb, program)?;
        input(&mut cb, 0, &x)?;
        input(&mut cb, 1, &y)?;
        output(&mut cb, 0, &o)?;
        if let Some(c0) = c0 {
            // c0 is one FLOAT32_4 element at (0, 0).
            k.region.write_slice(0, &[c0.to_bits(), 0, 0, 0])?;
            let f32x4 = Format::new(4, Tiling::Linear, DataFormat::Float32x4)?;
            cb.set_constf_fmt(k.base, f32x4)?;
        }
        run_and_flush(&mut cb, Domain::of_size(w, h)?)?;
        dispatch(gpu, dma, program, cb.as_words())?;
        compare(name, &o, 0..w, 0..h, want)
    })
}

/// 4-point stencil over a 64x32 **tiled** input: `out[i, j]` = mean of the four neighbours,
/// on the interior (the border is never written and must stay untouched).
pub fn stencil<IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized>(
    gpu: &mut R5xx<'_, IO, C, A>,
    dma: &impl DmaAllocator,
) -> Result<Report, WorkloadError> {
    const W: u32 = 64;
    const H: u32 = 32;
    const BORDER: f32 = -1.0;
    with_program(dma, examples::STENCIL4, |program, arena| {
        let i = arena.surface(W, H, Tiling::Tiled)?;
        let o = arena.surface(W, H, Tiling::Linear)?;
        let (i, o) = (arena.view(i)?, arena.view(o)?);
        let field = |x: u32, y: u32| ((x * x + 3 * y) % 40) as f32;
        i.fill(field)?;
        o.fill(|_, _| BORDER)?;
        let mut mem = [0u32; COMMAND_WORDS];
        let mut cb = CommandBuffer::new(&mut mem);
        preamble(&mut cb, program)?;
        input(&mut cb, 0, &i)?;
        output(&mut cb, 0, &o)?;
        run_and_flush(&mut cb, Domain::new(1, 1, W - 2, H - 2)?)?;
        dispatch(gpu, dma, program, cb.as_words())?;
        let mut report = compare("stencil", &o, 1..W - 1, 1..H - 1, |x, y| {
            (field(x - 1, y) + field(x + 1, y) + field(x, y - 1) + field(x, y + 1)) / 4.0
        })?;
        // The border: outside the domain, never written.
        for y in 0..H {
            for x in 0..W {
                if (x == 0 || y == 0 || x == W - 1 || y == H - 1) && o.read(x, y)? != BORDER {
                    return Err(WorkloadError::Mismatch {
                        what: "stencil border",
                        x,
                        y,
                        got: o.read(x, y)?,
                        want: BORDER,
                    });
                }
            }
        }
        report.checked += 2 * (W + H) - 4;
        Ok(report)
    })
}

/// 2x2 sum reduction of a 32x32 input to 16x16, with the Conditional Output unit at the DPP
/// testing `sum > threshold[i, j]` (§2.1.3, `set_cond_test` Greater): where it passes the
/// sum is written to the output and to the threshold buffer (`set_cond_out_mask`); where it
/// fails nothing is written.
pub fn reduce<IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized>(
    gpu: &mut R5xx<'_, IO, C, A>,
    dma: &impl DmaAllocator,
) -> Result<Report, WorkloadError> {
    const W: u32 = 32;
    const H: u32 = 32;
    const UNWRITTEN: f32 = -7.0;
    with_program(dma, examples::REDUCE_2X2, |program, arena| {
        let i = arena.surface(W, H, Tiling::Linear)?;
        let o = arena.surface(W / 2, H / 2, Tiling::Linear)?;
        let t = arena.surface(W / 2, H / 2, Tiling::Linear)?;
        let (i, o, t) = (arena.view(i)?, arena.view(o)?, arena.view(t)?);
        i.fill(|x, y| ((x * 5 + y * 11) % 16) as f32)?;
        let threshold = |x: u32, y: u32| ((x * 9 + y * 7) % 60) as f32;
        t.fill(threshold)?;
        o.fill(|_, _| UNWRITTEN)?;
        let mut mem = [0u32; COMMAND_WORDS];
        let mut cb = CommandBuffer::new(&mut mem);
        preamble(&mut cb, program)?;
        input(&mut cb, 0, &i)?;
        output(&mut cb, 0, &o)?;
        cb.set_cond_out_fmt(t.base, t.format, t.height()?)?;
        cb.set_cond_test(CondTest::Greater)?;
        cb.set_cond_out_mask(true)?;
        cb.inv_cond_out_cache()?;
        run_and_flush(&mut cb, Domain::of_size(W / 2, H / 2)?)?;
        dispatch(gpu, dma, program, cb.as_words())?;
        let sum = |x: u32, y: u32| {
            let v = |x: u32, y: u32| ((x * 5 + y * 11) % 16) as f32;
            v(2 * x, 2 * y) + v(2 * x + 1, 2 * y) + v(2 * x, 2 * y + 1) + v(2 * x + 1, 2 * y + 1)
        };
        let passes = |x, y| sum(x, y) > threshold(x, y);
        let mut report = compare("reduce", &o, 0..W / 2, 0..H / 2, |x, y| {
            if passes(x, y) { sum(x, y) } else { UNWRITTEN }
        })?;
        let cond = compare("reduce threshold", &t, 0..W / 2, 0..H / 2, |x, y| {
            if passes(x, y) { sum(x, y) } else { threshold(x, y) }
        })?;
        let written = (0..H / 2).flat_map(|y| (0..W / 2).map(move |x| (x, y)));
        let n_written = written.filter(|&(x, y)| passes(x, y)).count() as u32;
        if n_written == 0 || n_written == (W / 2) * (H / 2) {
            return Err(WorkloadError::Check("reduce: the test must pass for some elements only"));
        }
        report.checked += cond.checked;
        Ok(report)
    })
}

/// What [`caches_and_counters`] observed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnitsReport {
    /// Outputs in memory after the run without `flush_out_cache` (must be 0).
    pub visible_before_flush: u32,
    /// Outputs in memory after the `flush_out_cache` (all).
    pub visible_after_flush: u32,
    /// Elements that still used the old input after it changed in memory without
    /// `inv_inp_cache` (all).
    pub stale_without_invalidate: u32,
    /// Elements that used the new input after `inv_inp_cache` (all).
    pub fresh_after_invalidate: u32,
    /// `read_perf_counters`: total clocks, then clocks with the array active.
    pub counters: [u32; 2],
    /// The counters read again after more work with the counters stopped (unchanged).
    pub counters_stopped: [u32; 2],
}

/// The cache and synchronisation commands, observed through memory (§2.1.4, §2.2):
/// outputs are not in memory before `flush_out_cache` and are after it; an input changed in
/// memory is not seen before `inv_inp_cache` and is after it; the performance counters count
/// while started and hold their values while stopped.
pub fn caches_and_counters<IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized>(
    gpu: &mut R5xx<'_, IO, C, A>,
    dma: &impl DmaAllocator,
) -> Result<UnitsReport, WorkloadError> {
    const W: u32 = 16;
    const H: u32 = 4;
    const N: u32 = W * H;
    with_program(dma, examples::VECTOR_ADD, |program, arena| {
        let x = arena.surface(W, H, Tiling::Linear)?;
        let y = arena.surface(W, H, Tiling::Linear)?;
        let o = arena.surface(W, H, Tiling::Linear)?;
        let p = arena.surface(4, 1, Tiling::Linear)?;
        let (x, y, o, p) = (arena.view(x)?, arena.view(y)?, arena.view(o)?, arena.view(p)?);
        x.fill(a)?;
        y.fill(b)?;
        o.fill(|_, _| f32::NAN)?;
        let count = |want: &dyn Fn(u32, u32) -> f32| -> Result<u32, WorkloadError> {
            let mut n = 0;
            for j in 0..H {
                for i in 0..W {
                    n += u32::from(o.read(i, j)? == want(i, j));
                }
            }
            Ok(n)
        };
        let mut mem = [0u32; COMMAND_WORDS];

        // 1. Counters on, run, idle: no flush.
        let mut cb = CommandBuffer::new(&mut mem);
        preamble(&mut cb, program)?;
        input(&mut cb, 0, &x)?;
        input(&mut cb, 1, &y)?;
        output(&mut cb, 0, &o)?;
        cb.init_perf_counters(true)?;
        cb.start_perf_counters()?;
        cb.set_domain(Domain::of_size(W, H)?)?;
        cb.start_program()?;
        cb.wait_for_idle()?;
        cb.stop_perf_counters()?;
        cb.read_perf_counters(p.base)?;
        dispatch(gpu, dma, program, cb.as_words())?;
        let sum = |i, j| a(i, j) + b(i, j);
        let visible_before_flush = count(&sum)?;
        let counters = [p.region.read_u32(0)?, p.region.read_u32(4)?];

        // 2. Only the flush.
        let mut cb = CommandBuffer::new(&mut mem);
        cb.flush_out_cache()?;
        dispatch(gpu, dma, program, cb.as_words())?;
        let visible_after_flush = count(&sum)?;

        // 3. New input in memory, run again without invalidating the input cache.
        let b2 = |i: u32, j: u32| b(i, j) + 100.0;
        y.fill(b2)?;
        let rerun = |cb: &mut CommandBuffer<'_>, invalidate: bool| -> Result<(), CtmError> {
            if invalidate {
                cb.inv_inp_cache()?;
            }
            cb.start_program()?;
            cb.wait_for_idle()?;
            cb.flush_out_cache()?;
            cb.read_perf_counters(p.base)
        };
        let mut cb = CommandBuffer::new(&mut mem);
        rerun(&mut cb, false)?;
        dispatch(gpu, dma, program, cb.as_words())?;
        let stale_without_invalidate = count(&sum)?;
        let counters_stopped = [p.region.read_u32(0)?, p.region.read_u32(4)?];

        // 4. The same with inv_inp_cache.
        let mut cb = CommandBuffer::new(&mut mem);
        rerun(&mut cb, true)?;
        dispatch(gpu, dma, program, cb.as_words())?;
        let fresh_after_invalidate = count(&|i, j| a(i, j) + b2(i, j))?;

        let report = UnitsReport {
            visible_before_flush,
            visible_after_flush,
            stale_without_invalidate,
            fresh_after_invalidate,
            counters,
            counters_stopped,
        };
        let ok = visible_before_flush == 0
            && visible_after_flush == N
            && stale_without_invalidate == N
            && fresh_after_invalidate == N
            && counters[1] > 0
            && counters[0] >= counters[1]
            && counters_stopped == counters;
        if ok { Ok(report) } else { Err(WorkloadError::Check("cache or counter behaviour")) }
    })
}

/// §2.2: a non-pipelined command (`set_inp_fmt`) right after `start_program`, without
/// `wait_for_idle`, stops the CTM units. The driver reports [`CtmFault::NotIdle`] (not a
/// plain timeout); `function_level_reset` (the platform's) and [`R5xx::recover`] bring the
/// device back, and a correct dispatch then succeeds.
pub fn not_idle_fault<IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized, D: DmaAllocator>(
    gpu: &mut R5xx<'_, IO, C, A>,
    dma: &D,
    firmware: &[u8],
    function_level_reset: impl FnOnce(),
) -> Result<Report, WorkloadError> {
    with_program(dma, examples::VECTOR_ADD, |program, arena| {
        let x = arena.surface(16, 4, Tiling::Linear)?;
        let x = arena.view(x)?;
        let mut mem = [0u32; COMMAND_WORDS];
        let mut cb = CommandBuffer::new(&mut mem);
        preamble(&mut cb, program)?;
        input(&mut cb, 0, &x)?;
        input(&mut cb, 1, &x)?;
        output(&mut cb, 0, &x)?;
        cb.set_domain(Domain::of_size(16, 4)?)?;
        cb.start_program()?;
        input(&mut cb, 1, &x)?; // not pipelined, no wait_for_idle before it
        match dispatch(gpu, dma, program, cb.as_words()) {
            Err(WorkloadError::Wait(CtmWaitError::Fault(CtmFault::NotIdle))) => {}
            Err(e) => return Err(e),
            Ok(()) => return Err(WorkloadError::Check("not-idle buffer was accepted")),
        }
        Ok(())
    })?;
    function_level_reset();
    gpu.recover(firmware)?;
    if gpu.ctm_status().fault.is_some() {
        return Err(WorkloadError::Check("CTM fault survived recovery"));
    }
    vector_add(gpu, dma)
}

/// A program that reads an input no `set_inp_fmt` configured (on a freshly reset device):
/// the DPP array faults, and [`R5xx::ctm_wait`] reports [`CtmFault::Program`] from
/// `CTM_STATUS` instead of a bare timeout.
pub fn unconfigured_input<IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized>(
    gpu: &mut R5xx<'_, IO, C, A>,
    dma: &impl DmaAllocator,
) -> Result<(), WorkloadError> {
    with_program(dma, examples::VECTOR_ADD, |program, arena| {
        let x = arena.surface(16, 4, Tiling::Linear)?;
        let x = arena.view(x)?;
        let mut mem = [0u32; COMMAND_WORDS];
        let mut cb = CommandBuffer::new(&mut mem);
        preamble(&mut cb, program)?;
        input(&mut cb, 0, &x)?;
        output(&mut cb, 0, &x)?;
        run_and_flush(&mut cb, Domain::of_size(16, 4)?)?;
        dispatch(gpu, dma, program, cb.as_words())
    })
}
