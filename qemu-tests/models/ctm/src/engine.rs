//! The Processor Execution Unit's command decoder and the unit state commands set (CTM guide
//! §2.2, Table 3), plus start_program's scheduling through the Conditional Operation Unit
//! (§2.1.2, §2.1.3) and the output stage.
//!
//! # Work units and slices
//!
//! A command buffer is consumed incrementally: [`CtmEngine::begin`] starts one,
//! [`CtmEngine::advance`] does at most a given number of **work units** of it and returns, so
//! the device model around it can keep its clock, hang detection and other requests going
//! while a long kernel runs, as hardware does. One work unit is
//!
//! - one command consumed (its words fetched and its effect applied),
//! - one domain element visited by start_program (the PE's conditional test, starting the
//!   processor, and its output stage),
//! - one DPP instruction executed, or
//! - one cache line written back to memory (flush commands, or a full cache pushing out).
//!
//! An element can be left in the middle of its program at the end of a slice and continues
//! at the next. Everything else is indivisible: a slice stops before the next unit once its
//! budget is spent, so it does at most `budget` units, plus the write-backs of its last step
//! (at most [`MAX_STEP_UNITS`] in all, bounded by the caches' capacity, never by the guest).
//! Limits on the whole: [`Limits::per_program`] instructions per start_program (the
//! per-dispatch limit) and [`Limits::per_buffer`] work units per command buffer
//! ([`CtmErrorKind::BufferBudgetExceeded`], error code 0x107).
//!
//! Command order is kept: a start_program finishes its whole domain before the next command
//! is read (over as many slices as it takes). What stays observable of the asynchronous
//! hardware:
//!
//! - **Caches (CTM guide §2.1.4).** All program memory traffic goes through the MC caches
//!   the engine owns ([`Caches`], see [`crate::cache`]): instruction, constant and input reads
//!   are served from their read caches until inv_inst_cache / inv_const{f,i,b}_cache /
//!   inv_inp_cache; outputs stay in the output write cache until flush_out_cache; the CO's
//!   reads and writes of the conditional output buffer go through the conditional output
//!   cache (inv_cond_out_cache drops its clean data, flush_cond_out_cache writes its pending
//!   data back). A fault while flushing is reported by the flush command
//!   ([`CtmErrorKind::Memory`]); read_perf_counters writes memory directly.
//! - **Pipelining (CTM guide §2.2).** start_program sets "a program may be executing",
//!   wait_for_idle clears it; both persist across [`CtmEngine::execute`] calls. A command of
//!   [`op::NOT_PIPELINED`] consumed while it is set is refused with
//!   [`CtmErrorKind::NotIdle`] at that command's offset, without taking effect.
//! - **Performance counters (§2.1.2)**: see [`PerfCounters`] for the clock model.

use crate::cache::{CachedMemory, Caches, LineCache, WRITE_CACHE_LINES};
use crate::dpp::{ElementResult, Limits, ProgramInfo, ProgramRun, Runner, Surfaces};
use crate::error::{CtmError, CtmErrorKind, DppError};
use crate::mc::{self, DataFormat, SurfaceFormat};
use crate::memory::Memory;

/// Table 3 opcodes (the full command word, including the count field in bits 29:16).
pub mod op {
    /// init_perf_counters.
    pub const INIT_PERF_COUNTERS: u32 = 0xC001_0200;
    /// start_perf_counters.
    pub const START_PERF_COUNTERS: u32 = 0xC000_0300;
    /// stop_perf_counters.
    pub const STOP_PERF_COUNTERS: u32 = 0xC000_0400;
    /// read_perf_counters.
    pub const READ_PERF_COUNTERS: u32 = 0xC001_0500;
    /// set_cond_val.
    pub const SET_COND_VAL: u32 = 0xC000_0600;
    /// set_domain.
    pub const SET_DOMAIN: u32 = 0xC003_0700;
    /// start_program.
    pub const START_PROGRAM: u32 = 0xC000_0800;
    /// wait_for_idle.
    pub const WAIT_FOR_IDLE: u32 = 0xC000_0900;
    /// set_inst_fmt.
    pub const SET_INST_FMT: u32 = 0xC001_0A00;
    /// set_inp_fmt.
    pub const SET_INP_FMT: u32 = 0xC003_0B00;
    /// set_out_fmt.
    pub const SET_OUT_FMT: u32 = 0xC003_0C00;
    /// set_cond_out_fmt.
    pub const SET_COND_OUT_FMT: u32 = 0xC002_0D00;
    /// set_constf_fmt.
    pub const SET_CONSTF_FMT: u32 = 0xC001_0E00;
    /// set_consti_fmt.
    pub const SET_CONSTI_FMT: u32 = 0xC001_0F00;
    /// set_constb_fmt.
    pub const SET_CONSTB_FMT: u32 = 0xC001_1000;
    /// inv_inst_cache.
    pub const INV_INST_CACHE: u32 = 0xC000_1100;
    /// inv_constf_cache.
    pub const INV_CONSTF_CACHE: u32 = 0xC000_1200;
    /// inv_consti_cache.
    pub const INV_CONSTI_CACHE: u32 = 0xC000_1300;
    /// inv_constb_cache.
    pub const INV_CONSTB_CACHE: u32 = 0xC000_1400;
    /// inv_cond_out_cache.
    pub const INV_COND_OUT_CACHE: u32 = 0xC000_1500;
    /// inv_inp_cache.
    pub const INV_INP_CACHE: u32 = 0xC000_1600;
    /// flush_out_cache.
    pub const FLUSH_OUT_CACHE: u32 = 0xC000_1700;
    /// flush_cond_out_cache.
    pub const FLUSH_COND_OUT_CACHE: u32 = 0xC000_1800;
    /// set_out_mask.
    pub const SET_OUT_MASK: u32 = 0xC000_1900;
    /// set_cond_out_mask.
    pub const SET_COND_OUT_MASK: u32 = 0xC000_1A00;
    /// set_cond_test.
    pub const SET_COND_TEST: u32 = 0xC000_1B00;
    /// set_cond_loc.
    pub const SET_COND_LOC: u32 = 0xC000_1C00;

    /// The commands Table 3 marks "Pipelined: no". §2.2: they "will result in undefined
    /// behavior if a program is currently executing" and "must follow a wait_for_idle command
    /// and precede any subsequent start_program command"; the engine rejects them while a
    /// program may be executing ([`crate::CtmErrorKind::NotIdle`]).
    pub const NOT_PIPELINED: [u32; 8] = [
        READ_PERF_COUNTERS,
        SET_INST_FMT,
        SET_INP_FMT,
        SET_OUT_FMT,
        SET_COND_OUT_FMT,
        SET_CONSTF_FMT,
        SET_CONSTI_FMT,
        SET_CONSTB_FMT,
    ];

    /// Whether Table 3 marks the command word `word` as pipelined ("can be issued at any
    /// time", §2.2).
    pub fn is_pipelined(word: u32) -> bool {
        !NOT_PIPELINED.contains(&word)
    }

    /// Every opcode with its parameter count. The count is the Table 3 "Parameters" column
    /// and the §2.2.1/§2.2.2 prose; for all commands but two it equals count field + 1.
    /// init_perf_counters and read_perf_counters encode a count field of 1 yet are documented
    /// as taking one parameter ("takes one parameter"): the prose is followed.
    pub const TABLE: [(u32, usize); 27] = [
        (INIT_PERF_COUNTERS, 1),
        (START_PERF_COUNTERS, 1),
        (STOP_PERF_COUNTERS, 1),
        (READ_PERF_COUNTERS, 1),
        (SET_COND_VAL, 1),
        (SET_DOMAIN, 4),
        (START_PROGRAM, 1),
        (WAIT_FOR_IDLE, 1),
        (SET_INST_FMT, 2),
        (SET_INP_FMT, 4),
        (SET_OUT_FMT, 4),
        (SET_COND_OUT_FMT, 3),
        (SET_CONSTF_FMT, 2),
        (SET_CONSTI_FMT, 2),
        (SET_CONSTB_FMT, 2),
        (INV_INST_CACHE, 1),
        (INV_CONSTF_CACHE, 1),
        (INV_CONSTI_CACHE, 1),
        (INV_CONSTB_CACHE, 1),
        (INV_COND_OUT_CACHE, 1),
        (INV_INP_CACHE, 1),
        (FLUSH_OUT_CACHE, 1),
        (FLUSH_COND_OUT_CACHE, 1),
        (SET_OUT_MASK, 1),
        (SET_COND_OUT_MASK, 1),
        (SET_COND_TEST, 1),
        (SET_COND_LOC, 1),
    ];
}

/// The rectangle (i0, j0) - (i1, j1) inclusive (set_domain, §2.2.1; 12-bit values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Domain {
    /// i0.
    pub i0: u32,
    /// j0.
    pub j0: u32,
    /// i1.
    pub i1: u32,
    /// j1.
    pub j1: u32,
}

/// The CO test (set_cond_test bits 2:0, §2.2.3): v op b.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CondTest {
    /// 0 - Never.
    Never,
    /// 1 - v < b.
    Less,
    /// 2 - v <= b.
    LessEqual,
    /// 3 - v == b.
    Equal,
    /// 4 - v >= b.
    GreaterEqual,
    /// 5 - v > b.
    Greater,
    /// 6 - v != b.
    NotEqual,
    /// 7 - Always.
    Always,
}

impl CondTest {
    fn from_field(v: u32) -> Self {
        match v & 7 {
            0 => Self::Never,
            1 => Self::Less,
            2 => Self::LessEqual,
            3 => Self::Equal,
            4 => Self::GreaterEqual,
            5 => Self::Greater,
            6 => Self::NotEqual,
            _ => Self::Always,
        }
    }
    fn needs_buffer(self) -> bool {
        !matches!(self, Self::Never | Self::Always)
    }
    fn eval<T: PartialOrd>(self, v: T, b: T) -> bool {
        match self {
            Self::Never => false,
            Self::Less => v < b,
            Self::LessEqual => v <= b,
            Self::Equal => v == b,
            Self::GreaterEqual => v >= b,
            Self::Greater => v > b,
            Self::NotEqual => v != b,
            Self::Always => true,
        }
    }
}

/// Where the CO test applies (set_cond_loc bit 0, §2.2.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CondLocation {
    /// 0 - DPP: conditional output; the PE always gets "true".
    Dpp,
    /// 1 - PE: conditional execution; the DPP always gets "true".
    Pe,
}

/// Performance counters (§2.1.2, §2.2.1). Clock model: one total clock per command consumed
/// (a command refused with an error before it takes effect, such as
/// [`CtmErrorKind::NotIdle`], is not consumed), plus one total and one active clock per
/// instruction executed by a processor. Processors run one at a time, so "at least one
/// processor was active" exactly during instruction clocks and active <= total always holds.
/// Execution is synchronous: a program's clocks are all counted by the start_program that
/// runs it, so stopping the counters before the wait_for_idle that follows does not lose any.
/// read_perf_counters is not pipelined (Table 3): after a start_program it needs a
/// wait_for_idle first, so the clocks it reports always include the whole program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PerfCounters {
    /// init_perf_counters bit 0.
    pub enabled: bool,
    /// Between start_perf_counters and stop_perf_counters.
    pub running: bool,
    /// Total clocks since start.
    pub total_clocks: u64,
    /// Clocks during which at least one processor was active.
    pub active_clocks: u64,
}

/// How many times each cache/synchronisation command was consumed (observable for tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheOps {
    /// inv_inst_cache.
    pub inv_inst: u32,
    /// inv_constf_cache.
    pub inv_constf: u32,
    /// inv_consti_cache.
    pub inv_consti: u32,
    /// inv_constb_cache.
    pub inv_constb: u32,
    /// inv_cond_out_cache.
    pub inv_cond_out: u32,
    /// inv_inp_cache.
    pub inv_inp: u32,
    /// flush_out_cache.
    pub flush_out: u32,
    /// flush_cond_out_cache.
    pub flush_cond_out: u32,
    /// wait_for_idle.
    pub wait_for_idle: u32,
    /// start_program.
    pub start_program: u32,
}

/// The state of the CTM units (PE, CO, MC) as set by commands.
#[derive(Debug, Clone, Copy)]
pub struct CtmState {
    /// set_domain.
    pub domain: Domain,
    /// set_cond_val.
    pub cond_val: u32,
    /// set_cond_test (reset: Always).
    pub cond_test: CondTest,
    /// set_cond_loc (reset: DPP).
    pub cond_loc: CondLocation,
    /// set_inst_fmt / set_inp_fmt / set_const*_fmt.
    pub surfaces: Surfaces,
    /// set_out_fmt, per output.
    pub outputs: [Option<SurfaceFormat>; 4],
    /// set_cond_out_fmt.
    pub cond_out: Option<SurfaceFormat>,
    /// set_out_mask bits 3:0 (reset: 0xf, all channels).
    pub out_mask: u32,
    /// set_cond_out_mask bit 0 (reset: false, nothing written to the conditional buffer).
    pub cond_out_mask: bool,
    /// Performance counters.
    pub perf: PerfCounters,
}

impl Default for CtmState {
    fn default() -> Self {
        Self {
            domain: Domain::default(),
            cond_val: 0,
            cond_test: CondTest::Always,
            cond_loc: CondLocation::Dpp,
            surfaces: Surfaces::default(),
            outputs: [None; 4],
            cond_out: None,
            out_mask: 0xf,
            cond_out_mask: false,
            perf: PerfCounters::default(),
        }
    }
}

/// What a command buffer did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ExecSummary {
    /// Commands consumed.
    pub commands: u32,
    /// start_program commands run.
    pub programs: u32,
    /// Elements that ran the program.
    pub elements: u64,
    /// Instructions executed.
    pub instructions: u64,
}

/// Most work units one indivisible step of [`CtmEngine::advance`] charges beyond its budget:
/// an element's output stage can make both write caches push out everything they hold.
pub const MAX_STEP_UNITS: u64 = 1 + 2 * WRITE_CACHE_LINES as u64;

/// Where [`CtmEngine::advance`] left the command buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// No command buffer was in flight ([`CtmEngine::begin`] starts one).
    Idle,
    /// More work remains: call [`CtmEngine::advance`] again.
    Running,
    /// The buffer was consumed completely.
    Done(ExecSummary),
}

/// What one [`CtmEngine::advance`] call did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slice {
    /// Work units done by this call (see the module docs).
    pub units: u64,
    /// Progress, or the error that stopped the buffer (it is then no longer in flight;
    /// commands before the failing one have taken effect).
    pub result: Result<Progress, CtmError>,
}

/// Work units a synchronous call ([`CtmEngine::execute`]) does per slice.
const SYNC_SLICE_UNITS: u64 = 1 << 16;

/// Where a command buffer's words come from.
#[derive(Debug, Clone)]
enum Source {
    /// Host words ([`CtmEngine::execute`]).
    Words(Vec<u32>),
    /// Memory at an MC address, fetched as the PE consumes them (amSubmitCommandBuffer).
    Memory(u32),
}

/// A command buffer being consumed.
#[derive(Debug, Clone)]
struct InFlight {
    source: Source,
    /// Length in words.
    len: usize,
    /// Index of the next command word.
    at: usize,
    /// Work units charged to the buffer so far.
    units: u64,
    summary: ExecSummary,
    /// The start_program in progress.
    dispatch: Option<Box<Dispatch>>,
}

/// A start_program in progress: the unit state it latched and the next element.
#[derive(Debug, Clone)]
struct Dispatch {
    /// Word index of the start_program command (error offsets).
    offset: usize,
    state: CtmState,
    info: ProgramInfo,
    /// Next element (or the one in flight), row-major from (i0, j0).
    i: u32,
    j: u32,
    elements: u64,
    run: ProgramRun,
}

impl Dispatch {
    fn done(&self) -> bool {
        let d = self.state.domain;
        d.i0 > d.i1 || self.j > d.j1
    }

    fn next_element(&mut self) {
        let d = self.state.domain;
        self.i += 1;
        if self.i > d.i1 {
            self.i = d.i0;
            self.j += 1;
        }
    }
}

/// The CTM command engine: PE + CO + MC in front of the DPP interpreter.
///
/// Besides the unit state set by commands, the engine owns the MC caches ([`Caches`]) and
/// the PE's "a program may be executing" flag; both persist across command buffers (every
/// [`CtmEngine::execute`] call continues the same command stream) until [`CtmEngine::reset`].
#[derive(Debug, Clone, Default)]
pub struct CtmEngine {
    /// Unit state.
    pub state: CtmState,
    /// Cache and synchronisation command counters.
    pub cache_ops: CacheOps,
    /// Program information from the loader (§4.1.4), not from commands.
    pub program: ProgramInfo,
    /// Execution bounds.
    pub limits: Limits,
    /// The MC caches (CTM guide §2.1.4).
    caches: Caches,
    /// Set by start_program, cleared by wait_for_idle (§2.2).
    busy: bool,
    /// The command buffer being consumed.
    in_flight: Option<Box<InFlight>>,
}

/// A value the CO compares: float or unsigned, by the conditional buffer's data format.
#[derive(Clone, Copy)]
enum CondVal {
    F(f32),
    U(u32),
}

impl CtmEngine {
    /// A freshly reset engine.
    pub fn new() -> Self {
        Self::default()
    }

    /// Back to the reset state (counters included): the caches are emptied — writes never
    /// flushed are lost, as they would be on a hardware reset —, no program is executing and
    /// a command buffer in flight is abandoned.
    pub fn reset(&mut self) {
        *self = Self { program: self.program, limits: self.limits, ..Self::default() };
    }

    /// The MC caches, read-only (for tests and diagnostics).
    pub fn caches(&self) -> &Caches {
        &self.caches
    }

    /// Output bytes written by programs and not yet flushed to memory (flush_out_cache).
    pub fn pending_output_bytes(&self) -> usize {
        self.caches.output.dirty_bytes()
    }

    /// Conditional output bytes written by the CO and not yet flushed to memory
    /// (flush_cond_out_cache).
    pub fn pending_cond_out_bytes(&self) -> usize {
        self.caches.cond_out.dirty_bytes()
    }

    /// Whether a program may be executing: set by start_program, cleared by wait_for_idle.
    /// While set, the commands of [`op::NOT_PIPELINED`] fail with
    /// [`CtmErrorKind::NotIdle`] (§2.2).
    pub fn busy(&self) -> bool {
        self.busy
    }

    fn clock(&mut self, total: u64, active: u64) {
        let p = &mut self.state.perf;
        if p.enabled && p.running {
            p.total_clocks = p.total_clocks.saturating_add(total);
            p.active_clocks = p.active_clocks.saturating_add(active);
        }
    }

    /// Whether a command buffer is in flight (begun and neither done nor failed).
    pub fn in_flight(&self) -> bool {
        self.in_flight.is_some()
    }

    /// Start consuming the command buffer of `size` words at MC address `address`
    /// (amSubmitCommandBuffer, §5.1.4); [`advance`](Self::advance) does the work. The words are
    /// fetched as the PE reaches them. Refused with [`CtmErrorKind::BufferInFlight`] while
    /// another buffer is in flight.
    pub fn begin(&mut self, address: u32, size: u32) -> Result<(), CtmError> {
        self.begin_source(Source::Memory(address), size as usize)
    }

    fn begin_source(&mut self, source: Source, len: usize) -> Result<(), CtmError> {
        if self.in_flight.is_some() {
            return Err(CtmError { offset: 0, kind: CtmErrorKind::BufferInFlight });
        }
        let summary = ExecSummary::default();
        let f = InFlight { source, len, at: 0, units: 0, summary, dispatch: None };
        self.in_flight = Some(Box::new(f));
        Ok(())
    }

    /// Do at most `budget` work units of the buffer in flight (plus at most
    /// [`MAX_STEP_UNITS`] of write-backs, see the module docs) and report how far it got.
    /// Stops at the first error; commands before it have taken effect.
    pub fn advance(&mut self, budget: u64, mem: &mut dyn Memory) -> Slice {
        let Some(mut f) = self.in_flight.take() else {
            return Slice { units: 0, result: Ok(Progress::Idle) };
        };
        let mut used = 0u64;
        let result = loop {
            if f.dispatch.is_none() && f.at >= f.len {
                break Ok(Progress::Done(f.summary));
            }
            if used >= budget {
                self.in_flight = Some(f);
                break Ok(Progress::Running);
            }
            let offset = f.dispatch.as_ref().map_or(f.at, |d| d.offset);
            if f.units >= self.limits.per_buffer {
                let kind = CtmErrorKind::BufferBudgetExceeded { units: f.units };
                break Err(CtmError { offset, kind });
            }
            // Never past the slice's budget nor the buffer's.
            let allowance = (budget - used).min(self.limits.per_buffer - f.units);
            let written = self.caches.lines_written();
            let (units, step) = match f.dispatch.take() {
                Some(mut d) => {
                    let (units, r) = self.dispatch_step(&mut d, &mut f.summary, allowance, mem);
                    if r.is_ok() && !d.done() {
                        f.dispatch = Some(d);
                    }
                    (units, r.map_err(|kind| CtmError { offset, kind }))
                }
                None => (1, self.command_step(&mut f, mem)),
            };
            let units = units + self.caches.lines_written() - written;
            used += units;
            f.units += units;
            if let Err(e) = step {
                break Err(e);
            }
        };
        Slice { units: used, result }
    }

    /// Run the buffer in flight to its end, slice after slice.
    fn finish(&mut self, mem: &mut dyn Memory) -> Result<ExecSummary, CtmError> {
        loop {
            match self.advance(SYNC_SLICE_UNITS, mem).result? {
                Progress::Running => {}
                Progress::Done(summary) => return Ok(summary),
                Progress::Idle => return Ok(ExecSummary::default()),
            }
        }
    }

    /// Consume a whole command buffer given as host words (§2.2), synchronously (slices of
    /// the incremental API until done). Stops at the first error; commands before it have
    /// taken effect.
    pub fn execute(
        &mut self,
        words: &[u32],
        mem: &mut dyn Memory,
    ) -> Result<ExecSummary, CtmError> {
        self.begin_source(Source::Words(words.to_vec()), words.len())?;
        self.finish(mem)
    }

    /// Fetch and execute the command at `f.at` (one work unit).
    fn command_step(&mut self, f: &mut InFlight, mem: &mut dyn Memory) -> Result<(), CtmError> {
        let at = f.at;
        let fetch = |k: usize, mem: &mut dyn Memory| match &f.source {
            Source::Words(w) => Ok(w[k]),
            Source::Memory(base) => mem
                .read_u32(base.wrapping_add((k as u32).wrapping_mul(4)))
                .map_err(|e| CtmError { offset: k, kind: CtmErrorKind::Memory(e) }),
        };
        let err = |kind| CtmError { offset: at, kind };
        let word = fetch(at, mem)?;
        let Some(&(_, n)) = op::TABLE.iter().find(|(w, _)| *w == word) else {
            // Same command byte and packet type, different count: a bad parameter count.
            let kind = match op::TABLE.iter().find(|(w, _)| w & 0xC000_FFFF == word & 0xC000_FFFF) {
                Some(&(expected, _)) => CtmErrorKind::BadParameterCount { word, expected },
                None => CtmErrorKind::UnknownOpcode(word),
            };
            return Err(err(kind));
        };
        let available = f.len - at - 1;
        if available < n {
            return Err(err(CtmErrorKind::Truncated { word, needed: n, available }));
        }
        let mut params = [0u32; 4];
        for (k, p) in params[..n].iter_mut().enumerate() {
            *p = fetch(at + 1 + k, mem)?;
        }
        let dispatch = self.command(word, &params[..n], mem).map_err(err)?;
        f.dispatch = dispatch.map(|(state, info)| {
            let d = state.domain;
            let run = ProgramRun::default();
            Box::new(Dispatch { offset: at, state, info, i: d.i0, j: d.j0, elements: 0, run })
        });
        f.summary.commands += 1;
        f.at += 1 + n;
        if let Some(d) = &f.dispatch
            && d.done()
        {
            // An empty domain: nothing to schedule.
            f.dispatch = None;
            f.summary.programs += 1;
        }
        Ok(())
    }

    /// Execute one command whose parameters have been checked for count. start_program
    /// returns the state and program it latches; its elements run in later steps.
    fn command(
        &mut self,
        word: u32,
        p: &[u32],
        mem: &mut dyn Memory,
    ) -> Result<Option<(CtmState, ProgramInfo)>, CtmErrorKind> {
        let fmt = |base: u32, f: u32, h: u32| {
            SurfaceFormat::decode(base, f, h).map_err(|e| CtmErrorKind::ReservedDataFormat(e.0))
        };
        // §2.2: a command that is not pipelined "must follow a wait_for_idle command and
        // precede any subsequent start_program command"; the model makes the undefined
        // behaviour a refusal, before the command takes any effect.
        if self.busy && !op::is_pipelined(word) {
            return Err(CtmErrorKind::NotIdle { word });
        }
        self.clock(1, 0);
        let s = &mut self.state;
        let c = &mut self.cache_ops;
        let caches = &mut self.caches;
        match word {
            op::INIT_PERF_COUNTERS => {
                s.perf = PerfCounters { enabled: p[0] & 1 != 0, ..PerfCounters::default() };
            }
            op::START_PERF_COUNTERS => {
                if s.perf.enabled {
                    s.perf.total_clocks = 0;
                    s.perf.active_clocks = 0;
                    s.perf.running = true;
                }
            }
            op::STOP_PERF_COUNTERS => {
                if s.perf.enabled {
                    s.perf.running = false;
                }
            }
            op::READ_PERF_COUNTERS => {
                if s.perf.enabled {
                    // Two 32-bit words at the 2K-aligned address: total clocks, active clocks.
                    // Written by the PE straight to memory, not through an MC cache.
                    let a = p[0] & !0x7ff;
                    let mut b = [0u8; 8];
                    b[..4].copy_from_slice(&(s.perf.total_clocks as u32).to_le_bytes());
                    b[4..].copy_from_slice(&(s.perf.active_clocks as u32).to_le_bytes());
                    mem.write(a, &b).map_err(CtmErrorKind::Memory)?;
                }
            }
            op::SET_COND_VAL => s.cond_val = p[0],
            op::SET_DOMAIN => {
                s.domain = Domain {
                    i0: p[0] & 0xfff,
                    j0: p[1] & 0xfff,
                    i1: p[2] & 0xfff,
                    j1: p[3] & 0xfff,
                };
            }
            op::START_PROGRAM => {
                c.start_program += 1;
                self.busy = true;
                return Ok(Some((*s, self.program)));
            }
            op::WAIT_FOR_IDLE => {
                // The next command is read only after the dispatch has finished (module
                // docs): the processors are already idle.
                c.wait_for_idle += 1;
                self.busy = false;
            }
            op::SET_INST_FMT => s.surfaces.inst = Some(fmt(p[0], p[1], 0)?),
            op::SET_INP_FMT => {
                s.surfaces.inputs[(p[0] & 0xf) as usize] = Some(fmt(p[1], p[2], p[3])?)
            }
            op::SET_OUT_FMT => s.outputs[(p[0] & 3) as usize] = Some(fmt(p[1], p[2], p[3])?),
            op::SET_COND_OUT_FMT => s.cond_out = Some(fmt(p[0], p[1], p[2])?),
            op::SET_CONSTF_FMT => s.surfaces.constf = Some(fmt(p[0], p[1], 0)?),
            op::SET_CONSTI_FMT => s.surfaces.consti = Some(fmt(p[0], p[1], 0)?),
            op::SET_CONSTB_FMT => s.surfaces.constb = Some(fmt(p[0], p[1], 0)?),
            op::INV_INST_CACHE => {
                c.inv_inst += 1;
                caches.inst.invalidate();
            }
            op::INV_CONSTF_CACHE => {
                c.inv_constf += 1;
                caches.constf.invalidate();
            }
            op::INV_CONSTI_CACHE => {
                c.inv_consti += 1;
                caches.consti.invalidate();
            }
            op::INV_CONSTB_CACHE => {
                c.inv_constb += 1;
                caches.constb.invalidate();
            }
            op::INV_COND_OUT_CACHE => {
                // Clean data only: pending CO writes survive until the flush (cache.rs).
                c.inv_cond_out += 1;
                caches.cond_out.invalidate();
            }
            op::INV_INP_CACHE => {
                c.inv_inp += 1;
                caches.input.invalidate();
            }
            op::FLUSH_OUT_CACHE => {
                c.flush_out += 1;
                let r = caches.output.flush(mem);
                // The output cache is write-only: its clean lines can never be read.
                caches.output.clear();
                r.map_err(CtmErrorKind::Memory)?;
            }
            op::FLUSH_COND_OUT_CACHE => {
                // Written back, and still held (clean) for the CO's reads.
                c.flush_cond_out += 1;
                caches.cond_out.flush(mem).map_err(CtmErrorKind::Memory)?;
            }
            op::SET_OUT_MASK => s.out_mask = p[0] & 0xf,
            op::SET_COND_OUT_MASK => s.cond_out_mask = p[0] & 1 != 0,
            op::SET_COND_TEST => s.cond_test = CondTest::from_field(p[0]),
            op::SET_COND_LOC => {
                s.cond_loc = if p[0] & 1 != 0 { CondLocation::Pe } else { CondLocation::Dpp }
            }
            _ => return Err(CtmErrorKind::UnknownOpcode(word)),
        }
        Ok(None)
    }

    /// §2.1.3: test v op b at (i, j) and, when it passes, write v back (if the conditional
    /// output mask allows). Float buffers compare as floats, UINT buffers as unsigned. The
    /// buffer is read and written through the conditional output cache (§2.1.4), so the CO
    /// sees its own unflushed writes and memory only reaches it after inv_cond_out_cache.
    fn co_test(
        state: &CtmState,
        mem: &mut dyn Memory,
        cache: &mut LineCache,
        i: u32,
        j: u32,
        v: CondVal,
    ) -> Result<bool, DppError> {
        let mem = &mut CachedMemory::new(cache, mem);
        let test = state.cond_test;
        let f = if test.needs_buffer() || state.cond_out_mask {
            Some(state.cond_out.ok_or(DppError::CondOutNotConfigured)?)
        } else {
            None
        };
        let pass = match (test.needs_buffer(), f) {
            (true, Some(f)) => {
                let a = f.address(i, j);
                let raw = mc::read_raw(mem, a, f.format)?;
                let w32 = u32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]]);
                match f.format {
                    DataFormat::Uint16x1 => test.eval(as_u32(v), u32::from(w32 as u16)),
                    DataFormat::Uint8x4 => test.eval(as_u32(v), w32),
                    _ => test.eval(as_f32(v), f32::from_bits(w32)),
                }
            }
            _ => test == CondTest::Always,
        };
        if let (true, true, Some(f)) = (pass, state.cond_out_mask, f) {
            {
                let a = f.address(i, j);
                match f.format {
                    DataFormat::Uint16x1 => {
                        mem.write(a, &(as_u32(v).min(0xffff) as u16).to_le_bytes())?
                    }
                    DataFormat::Uint8x4 => mem.write_u32(a, as_u32(v))?,
                    _ => mem.write_u32(a, as_f32(v).to_bits())?,
                }
            }
        }
        Ok(pass)
    }

    /// One step of a start_program: visit the next element (one work unit) and run its program
    /// for the rest of `allowance`, or continue the element in flight. Returns the work units
    /// done, also when it fails (write-backs are charged by the caller).
    fn dispatch_step(
        &mut self,
        d: &mut Dispatch,
        summary: &mut ExecSummary,
        allowance: u64,
        mem: &mut dyn Memory,
    ) -> (u64, Result<(), CtmErrorKind>) {
        let visit = u64::from(!d.run.element_in_flight());
        let executed = d.run.executed;
        let r = self.element_step(d, summary, allowance - visit, mem);
        (visit + d.run.executed - executed, r)
    }

    /// [`dispatch_step`](Self::dispatch_step) without the accounting: `budget` instructions.
    fn element_step(
        &mut self,
        d: &mut Dispatch,
        summary: &mut ExecSummary,
        budget: u64,
        mem: &mut dyn Memory,
    ) -> Result<(), CtmErrorKind> {
        let (i, j) = (d.i, d.j);
        let fail = |pc, error| CtmErrorKind::Program { i, j, pc, error };
        if !d.run.element_in_flight() {
            // §2.1.2 conditional execution: the PE asks the CO with the cond value.
            if d.state.cond_loc == CondLocation::Pe {
                let v = CondVal::U(d.state.cond_val);
                let pass = Self::co_test(&d.state, mem, &mut self.caches.cond_out, i, j, v);
                match pass {
                    Ok(true) => {}
                    Ok(false) => {
                        d.next_element();
                        self.dispatch_end(d, summary);
                        return Ok(());
                    }
                    Err(e) => return Err(self.dispatch_failed(d, fail(d.info.start, e))),
                }
            }
        }
        // With nothing left after the visit, the element is only started (budget 0).
        let step =
            Runner::new(mem, &mut self.caches, &d.state.surfaces, d.info, self.limits, &mut d.run)
                .step(i, j, budget);
        let step = match step {
            Ok(step) => step,
            Err((pc, e)) => return Err(self.dispatch_failed(d, fail(pc, e))),
        };
        if let Some(r) = step.result {
            d.elements += 1;
            if let Err(e) = Self::output(&d.state, mem, &mut self.caches, i, j, &r) {
                return Err(self.dispatch_failed(d, fail(d.info.end, e)));
            }
            d.next_element();
        }
        self.dispatch_end(d, summary);
        Ok(())
    }

    /// After a step: when the domain is done, account the dispatch (counters, clocks).
    fn dispatch_end(&mut self, d: &Dispatch, summary: &mut ExecSummary) {
        if d.done() {
            summary.programs += 1;
            summary.elements += d.elements;
            summary.instructions += d.run.executed;
            self.clock(d.run.executed, d.run.executed);
        }
    }

    /// A dispatch stopped on `kind`: the instructions it executed still count on the clocks.
    fn dispatch_failed(&mut self, d: &Dispatch, kind: CtmErrorKind) -> CtmErrorKind {
        self.clock(d.run.executed, d.run.executed);
        kind
    }

    /// Program termination: conditional output test at the DPP location, then the output
    /// registers go through the output formats and the output mask into the MC's output
    /// write cache (§2.1.4); they reach memory at flush_out_cache.
    fn output(
        state: &CtmState,
        mem: &mut dyn Memory,
        caches: &mut Caches,
        i: u32,
        j: u32,
        r: &ElementResult,
    ) -> Result<(), DppError> {
        if r.killed {
            return Ok(());
        }
        if state.cond_loc == CondLocation::Dpp {
            let v = match r.w {
                Some(w) => CondVal::F(w),
                None => CondVal::U(state.cond_val),
            };
            if !Self::co_test(state, mem, &mut caches.cond_out, i, j, v)? {
                return Ok(());
            }
        }
        for (o, value) in r.outputs.iter().enumerate() {
            let mask = r.written[o] & state.out_mask;
            if r.written[o] == 0 {
                continue;
            }
            let f = state.outputs[o].ok_or(DppError::OutputNotConfigured(o as u8))?;
            let mut m = CachedMemory::new(&mut caches.output, mem);
            mc::write_element(&mut m, f.address(i, j), f.format, *value, mask)?;
        }
        Ok(())
    }
}

fn as_f32(v: CondVal) -> f32 {
    match v {
        CondVal::F(f) => f,
        CondVal::U(u) => f32::from_bits(u),
    }
}

fn as_u32(v: CondVal) -> u32 {
    match v {
        CondVal::F(f) => f as u32,
        CondVal::U(u) => u,
    }
}
