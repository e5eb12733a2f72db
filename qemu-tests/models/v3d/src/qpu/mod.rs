//! The quad processors (§3), with the model's own decoder ([`decode`]) and pipes ([`alu`]):
//! 16 lanes, regfiles A and B (32 physical locations each, the other 32 addresses I/O),
//! accumulators r0-r5, flags, both pipes, pack/unpack, small immediates and vector rotation,
//! load immediate, branches with three delay slots, semaphores, the mutex, uniforms, the SFU,
//! TMU general-memory lookups, VPM block access and its DMA, the host interrupt and the thread
//! end with its two delay slots.
//!
//! One instruction runs at a time per QPU and completes in the same call (reads, both pipes,
//! writes, signals), except that an instruction that would stall (semaphore, mutex, DMA wait,
//! a DMA start while the previous one runs) is retried on a later call with nothing changed.
//! Anything §3 leaves undefined that the model can see at run time is a [`QpuFault`].

pub mod alu;
pub mod decode;
mod error;

use crate::cache::{Caches, Port};
use crate::shading::{FragmentBatch, FragmentOutput, LANES};
use crate::vpm::{BlockAccess, DmaJob, VdrSetup, VdwSetup, Vpm};
use decode::{ImmediateMode, Instruction, SourceB, Writes, sig};
pub use error::{QpuFault, QpuFaultKind};
use gpu_device_model::DeviceContext;
use std::collections::VecDeque;

/// A 16-lane vector.
pub type Vector = [u32; LANES];

/// QPUs per slice (`V3D_IDENT1.QUPS`).
pub const QPUS_PER_SLICE: usize = 4;
/// Slices (`V3D_IDENT1.NSLC`).
pub const SLICES: usize = 3;
/// QPUs in the V3D.
pub const QPUS: usize = QPUS_PER_SLICE * SLICES;
/// Counting semaphores (`V3D_IDENT1.NSEM`), 4 bits each (§3 "Semaphore Instruction").
pub const SEMAPHORES: usize = 16;
/// Instructions one program may run before the model stops it
/// ([`QpuFaultKind::BudgetExhausted`]): far beyond any real shader or user program, small
/// enough that a runaway program ends well within the framework's hang detection.
pub const PROGRAM_INSTRUCTION_LIMIT: u64 = 1 << 22;
/// Outstanding TMU lookups per TMU per QPU (§4 "QPU Interface": eight receive slots).
pub const TMU_FIFO_DEPTH: usize = 8;

// Register-space addresses (§3 Table 14).
const UNIFORM_READ: u8 = 32;
const ACC5: u8 = 37;
const VARYING_READ: u8 = 35;
const TMU_NOSWAP: u8 = 36;
const ELEMENT_OR_QPU: u8 = 38; // read: ELEMENT_NUMBER (A), QPU_NUMBER (B); write: HOST_INT
const NOP: u8 = 39;
const UNIFORMS_ADDRESS: u8 = 40;
const PIXEL_COORD: u8 = 41;
const MS_OR_REV: u8 = 42;
const TLB_STENCIL_SETUP: u8 = 43;
const TLB_Z: u8 = 44;
const TLB_COLOUR_MS: u8 = 45;
const TLB_COLOUR_ALL: u8 = 46;
const TLB_ALPHA_MASK: u8 = 47;
const VPM_DATA: u8 = 48;
const VPM_SETUP_OR_BUSY: u8 = 49;
const VPM_ADDR_OR_WAIT: u8 = 50;
const MUTEX: u8 = 51;
const SFU_RECIP: u8 = 52;
const SFU_LOG: u8 = 55;
const TMU_FIRST: u8 = 56;

/// Which half of the register space an access uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Space {
    A,
    B,
}

/// What a running thread is.
#[derive(Debug, Clone, PartialEq)]
pub enum Program {
    /// A general-purpose (user) program from the SRQ.
    User,
    /// A fragment shader with its FEP inputs (§6) and what it wrote to the tile buffer (§5).
    Fragment(Box<FragmentState>),
}

/// A fragment thread's inputs and outputs.
#[derive(Debug, Clone, PartialEq)]
pub struct FragmentState {
    /// What the front-end pipe handed over.
    pub batch: FragmentBatch,
    /// Varyings read so far.
    pub varyings_read: usize,
    /// The tile-buffer writes.
    pub output: FragmentOutput,
}

/// A VPM read block in the QPU's queue (§7: two may be queued).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct VpmRead {
    access: BlockAccess,
    remaining: u32,
    /// The first instruction number that may read it (three instructions after the setup).
    ready_at: u64,
}

/// A texture request being written (§4): the T, R, B coordinates and the configuration
/// uniforms read with each parameter write.
#[derive(Debug, Clone, Default, PartialEq)]
struct TextureRequest {
    t: Option<Vector>,
    config: Vec<u32>,
}

/// One QPU thread's state.
#[derive(Debug, Clone, PartialEq)]
pub struct Thread {
    /// Bus address of the next instruction.
    pub pc: u32,
    /// The uniforms pointer.
    pub uniforms: u32,
    /// Uniforms the stream still allows (`None`: unlimited).
    uniforms_left: Option<u32>,
    ra: [Vector; 32],
    rb: [Vector; 32],
    acc: [Vector; 6],
    z: u16,
    n: u16,
    c: u16,
    /// Instructions run.
    pub executed: u64,
    /// The instruction a stall holds in the pipeline (fetched once, retried).
    stalled_on: Option<u64>,
    /// Stalled attempts counted against the instruction limit (the scheduler counts them for
    /// fragment threads, which nothing else can end).
    pub stalls: u64,
    /// Delay slots left after a thread end.
    end_slots: Option<u8>,
    /// A taken branch: target and delay slots left.
    branch: Option<(u32, u8)>,
    /// An SFU result on its way to r4: value and instructions left.
    sfu: Option<(Vector, u8)>,
    /// Physical regfile locations the previous instruction wrote.
    written_a: Option<u8>,
    written_b: Option<u8>,
    /// Accumulators the previous instruction wrote (bit n = rn).
    written_acc: u8,
    /// The instruction number of the last uniforms-address write.
    uniforms_written_at: Option<u64>,
    /// The instruction number of the last TMU_NOSWAP write.
    noswap_written_at: Option<u64>,
    /// The instruction number of the last TLB Z write.
    tlb_z_written_at: Option<u64>,
    tmu_noswap: bool,
    tmu_results: [VecDeque<Vector>; 2],
    /// Texture request being written, per TMU.
    tmu_request: [TextureRequest; 2],
    vpm_write: Option<BlockAccess>,
    vpm_reads: VecDeque<VpmRead>,
    vdw: VdwSetup,
    vdr: VdrSetup,
    /// User program or fragment shader.
    pub program: Program,
    /// Threaded fragment shader: only regfile locations 0-15 are its own (§3 "Thread
    /// Control").
    threaded: bool,
}

impl Thread {
    /// A thread starting at `pc` with uniforms at `uniforms` (`uniforms_left`: the SRQUL
    /// length, `None` unlimited).
    pub fn new(pc: u32, uniforms: u32, uniforms_left: Option<u32>, program: Program) -> Self {
        let mut t = Thread {
            pc,
            uniforms,
            uniforms_left,
            ra: [[0; LANES]; 32],
            rb: [[0; LANES]; 32],
            acc: [[0; LANES]; 6],
            z: 0,
            n: 0,
            c: 0,
            executed: 0,
            stalls: 0,
            stalled_on: None,
            end_slots: None,
            branch: None,
            sfu: None,
            written_a: None,
            written_b: None,
            written_acc: 0,
            uniforms_written_at: None,
            noswap_written_at: None,
            tlb_z_written_at: None,
            tmu_noswap: false,
            tmu_results: Default::default(),
            tmu_request: Default::default(),
            vpm_write: None,
            vpm_reads: VecDeque::new(),
            vdw: VdwSetup::default(),
            vdr: VdrSetup::default(),
            threaded: false,
            program,
        };
        if let Program::Fragment(f) = &t.program {
            // §6 Table 29: W in regfile A 15, Z in regfile B 15.
            t.ra[15] = f.batch.w.map(f32::to_bits);
            t.rb[15] = f.batch.z;
            t.threaded = !f.batch.single_threaded;
        }
        t
    }

    /// Accumulator `n` (0-5), for tests and the fragment interface.
    pub fn acc(&self, n: usize) -> Vector {
        self.acc[n]
    }

    /// Regfile A location `n`.
    pub fn ra(&self, n: usize) -> Vector {
        self.ra[n]
    }

    /// Regfile B location `n`.
    pub fn rb(&self, n: usize) -> Vector {
        self.rb[n]
    }

    fn fragment(&mut self) -> Option<&mut FragmentState> {
        match &mut self.program {
            Program::Fragment(f) => Some(f),
            Program::User => None,
        }
    }

    fn is_fragment(&self) -> bool {
        matches!(self.program, Program::Fragment(_))
    }

    /// In the thread end instruction or its delay slots.
    fn ending(&self, sig: u8) -> bool {
        self.end_slots.is_some() || matches!(sig, sig::PROGRAM_END | sig::COLOUR_LOAD_END)
    }
}

/// Everything the QPUs share: semaphores, the mutex, the VPM, the caches, the host interrupt
/// latch.
#[derive(Debug, Clone)]
pub struct Shared {
    /// The 16 counting semaphores.
    pub semaphores: [u8; SEMAPHORES],
    /// The QPU holding the mutex.
    pub mutex: Option<u8>,
    /// The VPM.
    pub vpm: Vpm,
    /// Rows of the VPM user programs may write (`V3D_VPMBASE.VPMURSV` x 4).
    pub user_vpm_rows: usize,
    /// The caches.
    pub caches: Caches,
    /// Host interrupts latched by QPUs (bit n: QPU n wrote HOST_INT; `V3D_DBQITC`).
    pub host_interrupts: u16,
    /// One-shot: the next QPU memory read faults (`dma-fault`).
    pub fail_next_read: bool,
    /// VPM lanes masked by the user window.
    pub vpm_lanes_masked: u64,
    /// Instructions a program may run ([`PROGRAM_INSTRUCTION_LIMIT`] unless a test lowers it).
    pub instruction_limit: u64,
    /// Performance-counter events (§10 Table 82).
    pub events: crate::perf::Events,
}

impl Shared {
    /// Power-on state.
    pub fn new() -> Self {
        Shared {
            semaphores: [0; SEMAPHORES],
            mutex: None,
            vpm: Vpm::default(),
            user_vpm_rows: 0,
            caches: Caches::new(SLICES),
            host_interrupts: 0,
            fail_next_read: false,
            vpm_lanes_masked: 0,
            instruction_limit: PROGRAM_INSTRUCTION_LIMIT,
            events: crate::perf::Events::default(),
        }
    }

    fn read(
        &mut self,
        dev: &mut DeviceContext<'_>,
        slice: usize,
        port: Port,
        address: u32,
    ) -> Result<u32, QpuFaultKind> {
        if std::mem::take(&mut self.fail_next_read) {
            return Err(QpuFaultKind::Bus { address, write: false });
        }
        self.caches
            .read_u32(dev, &mut self.events, slice, port, address)
            .map_err(|address| QpuFaultKind::Bus { address, write: false })
    }
}

impl Default for Shared {
    fn default() -> Self {
        Self::new()
    }
}

/// How one instruction went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// It ran.
    Ran,
    /// It would stall: nothing changed, run it again later.
    Stalled,
    /// It was the last delay slot of the thread end: the thread is over.
    Ended,
    /// It did something hardware would not do.
    Fault(QpuFaultKind),
}

/// One QPU: its thread and its VPM DMA engines (which outlive the thread, §6: "programs
/// that access the VPM or VCD do not need to complete such accesses before the Program End").
#[derive(Debug, Clone, Default)]
pub struct Qpu {
    /// The running thread.
    pub thread: Option<Thread>,
    /// VDW store in flight.
    pub vdw: Option<DmaJob>,
    /// VDR load in flight.
    pub vdr: Option<DmaJob>,
}

/// Copy the lanes of `values` whose bit is set in `mask` into `dst`.
fn merge_lanes(dst: &mut Vector, values: &Vector, mask: u16) {
    for (i, (d, v)) in dst.iter_mut().zip(values).enumerate() {
        if mask >> i & 1 != 0 {
            *d = *v;
        }
    }
}

fn lanes(v: u32) -> Vector {
    [v; LANES]
}

fn element_numbers() -> Vector {
    core::array::from_fn(|i| i as u32)
}

/// Lanes where condition `cond` (§3 Table 2) holds.
fn condition(t: &Thread, cond: u8) -> u16 {
    match cond {
        0 => 0,
        1 => 0xFFFF,
        2 => t.z,
        3 => !t.z,
        4 => t.n,
        5 => !t.n,
        6 => t.c,
        _ => !t.c,
    }
}

/// The small immediate value (§3 Table 5) for 0..=47.
fn small_immediate(v: u8) -> u32 {
    match v {
        0..=15 => u32::from(v),
        16..=31 => (i32::from(v) - 32) as u32,
        32..=39 => ((1u32 << (v - 32)) as f32).to_bits(),
        _ => (1.0f32 / (1u32 << (48 - v)) as f32).to_bits(),
    }
}

/// Whether register-space address `addr` read in `space` is an I/O read with a side effect
/// the thread-end rule forbids (uniforms, varyings, VPM).
fn io_read_forbidden_at_end(addr: u8) -> bool {
    matches!(addr, UNIFORM_READ | VARYING_READ | VPM_DATA | VPM_SETUP_OR_BUSY | VPM_ADDR_OR_WAIT)
}

fn io_write_forbidden_at_end(addr: u8) -> bool {
    matches!(addr, UNIFORMS_ADDRESS | VPM_DATA | VPM_SETUP_OR_BUSY | VPM_ADDR_OR_WAIT)
}

/// Both pipes' lane results and whether each produced a float.
type PipeResults = ([alu::Lane; LANES], [alu::Lane; LANES], bool, bool);

fn plain(value: u32) -> alu::Lane {
    alu::Lane { value, carry: false, wide: None }
}

/// Up to two register-space accesses (the two read ports, or the two pipes' writes).
#[derive(Debug, Clone, Copy, Default)]
struct Pair([Option<(u8, Space)>; 2]);

impl Pair {
    fn push(&mut self, access: (u8, Space)) {
        if let Some(slot) = self.0.iter_mut().find(|s| s.is_none()) {
            *slot = Some(access);
        }
    }

    fn iter(&self) -> impl Iterator<Item = &(u8, Space)> {
        self.0.iter().flatten()
    }
}

/// Executes instructions of one QPU.
pub struct Exec<'a, 'b> {
    /// The QPU's number.
    pub id: usize,
    /// The QPU.
    pub qpu: &'a mut Qpu,
    /// What the QPUs share.
    pub shared: &'a mut Shared,
    /// Memory.
    pub dev: &'a mut DeviceContext<'b>,
}

/// The reads one instruction makes, with the side effects already applied.
struct Reads {
    a: Vector,
    b: Vector,
    /// r5 loaded by a varying read (applied after the instruction).
    r5_c: Option<u32>,
}

impl Exec<'_, '_> {
    fn slice(&self) -> usize {
        self.id / QPUS_PER_SLICE
    }

    fn thread(&mut self) -> &mut Thread {
        self.qpu.thread.as_mut().expect("an executing QPU has a thread")
    }

    /// Run one instruction of the thread.
    pub fn step(&mut self) -> Step {
        match self.try_step() {
            Ok(s) => s,
            Err(k) => Step::Fault(k),
        }
    }

    fn try_step(&mut self) -> Result<Step, QpuFaultKind> {
        let slice = self.slice();
        let pc = self.thread().pc;
        let limit = self.shared.instruction_limit;
        if self.thread().executed + self.thread().stalls >= limit {
            return Err(QpuFaultKind::BudgetExhausted { limit });
        }
        let word = match self.thread().stalled_on.take() {
            Some(word) => word,
            None => {
                let lo = self.shared.read(self.dev, slice, Port::Instruction, pc)?;
                let hi =
                    self.shared.read(self.dev, slice, Port::Instruction, pc.wrapping_add(4))?;
                u64::from(hi) << 32 | u64::from(lo)
            }
        };
        let inst = Instruction::decode(word)?;
        if self.would_stall(&inst) {
            self.thread().stalled_on = Some(word);
            return Ok(Step::Stalled);
        }
        self.check_rules(&inst)?;
        let sfu_before = self.thread().sfu.is_some();
        let mut r4_load: Option<Vector> = None;
        let mut r5_c = None;
        let mut wrote_sfu = None;
        match inst {
            Instruction::Alu { sig: s, unpack, w, op_mul, op_add, raddr_a, b, mux } => {
                let reads = self.read_operands(raddr_a, b)?;
                r5_c = reads.r5_c;
                let results = self.alu(unpack, w, op_add, op_mul, raddr_a, b, mux, &reads);
                wrote_sfu = self.write_results(w, results, op_add)?;
                r4_load = self.signal(s)?;
            }
            Instruction::LoadImmediate { mode, w, imm } => {
                let v: Vector = core::array::from_fn(|i| {
                    let two = (imm >> (16 + i) & 1) << 1 | (imm >> i & 1);
                    match mode {
                        ImmediateMode::Word => imm,
                        ImmediateMode::PerElementUnsigned => two,
                        ImmediateMode::PerElementSigned => (((two << 30) as i32) >> 30) as u32,
                    }
                });
                let v = v.map(plain);
                wrote_sfu = self.write_results(w, (v, v, false, false), 1)?;
            }
            Instruction::Semaphore { w, acquire, number } => {
                let s = &mut self.shared.semaphores[usize::from(number)];
                *s = if acquire { *s - 1 } else { *s + 1 };
                // Otherwise a 32-bit load immediate (§3 "Semaphore Instruction").
                let imm = (u32::from(acquire) << 4) | u32::from(number);
                let v = lanes(imm).map(plain);
                wrote_sfu = self.write_results(w, (v, v, false, false), 1)?;
            }
            Instruction::Branch { cond, rel, reg, raddr_a, w, imm } => {
                if self.thread().branch.is_some() {
                    return Err(QpuFaultKind::Restriction("branch in the delay slots of a branch"));
                }
                let t = self.thread();
                let taken = match cond {
                    15 => true,
                    c => {
                        let flags = match c / 4 {
                            0 => t.z,
                            1 => t.n,
                            _ => t.c,
                        };
                        let flags = if c % 2 == 1 { !flags } else { flags };
                        if c % 4 < 2 { flags == 0xFFFF } else { flags != 0 }
                    }
                };
                // §3 "Branches": the link address and PC-relative targets count from PC+4 in
                // instructions, the first instruction after the three delay slots.
                let link = pc.wrapping_add(32);
                let mut target = imm;
                if rel {
                    target = target.wrapping_add(link);
                }
                if reg {
                    if t.written_a == Some(raddr_a) {
                        return Err(QpuFaultKind::Restriction(
                            "regfile location read in the instruction after its write",
                        ));
                    }
                    target = target.wrapping_add(t.ra[usize::from(raddr_a)][0]);
                }
                if taken {
                    if target & 7 != 0 {
                        return Err(QpuFaultKind::Restriction("branch target not 8-byte aligned"));
                    }
                    // Counted down at the end of the branch and each of its three delay slots.
                    t.branch = Some((target, 4));
                    let v = lanes(link).map(plain);
                    self.write_results(w, (v, v, false, false), 1)?;
                } else {
                    self.thread().written_a = None;
                    self.thread().written_b = None;
                    self.thread().written_acc = 0;
                }
            }
        }
        // End of the instruction: results that arrive for the next one.
        let t = self.thread();
        if let Some(c) = r5_c {
            t.acc[5] = lanes(c);
        }
        if let Some(v) = r4_load {
            t.acc[4] = v;
        }
        if sfu_before && let Some((v, left)) = t.sfu.as_mut() {
            *left -= 1;
            if *left == 0 {
                t.acc[4] = *v;
                t.sfu = None;
            }
        }
        if let Some(v) = wrote_sfu {
            t.sfu = Some((v, 2));
        }
        t.executed += 1;
        t.pc = pc.wrapping_add(8);
        if let Some((target, left)) = t.branch.as_mut() {
            *left -= 1;
            if *left == 0 {
                t.pc = *target;
                t.branch = None;
            }
        }
        match t.end_slots {
            Some(0) => return self.finish(),
            Some(n) => t.end_slots = Some(n - 1),
            None if matches!(inst.sig(), sig::PROGRAM_END | sig::COLOUR_LOAD_END) => {
                t.end_slots = Some(1)
            }
            None => {}
        }
        Ok(Step::Ran)
    }

    /// The thread's last delay slot ran: §3/§6 end-of-program rules, then the thread is over.
    fn finish(&mut self) -> Result<Step, QpuFaultKind> {
        let id = self.id as u8;
        if self.shared.mutex == Some(id) {
            return Err(QpuFaultKind::Restriction("program ended holding the mutex"));
        }
        let t = self.thread();
        if let Program::Fragment(f) = &t.program
            && f.varyings_read < f.batch.varyings.len()
        {
            return Err(QpuFaultKind::Restriction(
                "fragment shader ended without reading every varying (§6)",
            ));
        }
        Ok(Step::Ended)
    }

    /// Stalls (§3 "Processor Stalls") checked before anything changes.
    fn would_stall(&mut self, inst: &Instruction) -> bool {
        let id = self.id as u8;
        let busy_load = self.qpu.vdr.is_some();
        let busy_store = self.qpu.vdw.is_some();
        match *inst {
            Instruction::Semaphore { acquire, number, .. } => {
                let s = self.shared.semaphores[usize::from(number)];
                if acquire { s == 0 } else { s == 15 }
            }
            Instruction::Alu { raddr_a, b, w, .. } => {
                let raddr_b = match b {
                    SourceB::Register(r) => Some(r),
                    SourceB::SmallImmediate(_) => None,
                };
                let mutex_held_elsewhere = self.shared.mutex.is_some_and(|m| m != id);
                let reads = |a: u8| raddr_a == a || raddr_b == Some(a);
                (reads(MUTEX) && mutex_held_elsewhere)
                    || (raddr_a == VPM_ADDR_OR_WAIT && busy_load)
                    || (raddr_b == Some(VPM_ADDR_OR_WAIT) && busy_store)
                    || self.starts_busy_dma(w, busy_load, busy_store)
            }
            Instruction::LoadImmediate { w, .. } | Instruction::Branch { w, .. } => {
                self.starts_busy_dma(w, busy_load, busy_store)
            }
        }
    }

    /// A write to VPM_LD_ADDR / VPM_ST_ADDR while that DMA runs (§7: "A new DMA load or store
    /// operation cannot be started until the previous one is complete").
    fn starts_busy_dma(&self, w: Writes, busy_load: bool, busy_store: bool) -> bool {
        let (add_space, mul_space) = if w.ws { (Space::B, Space::A) } else { (Space::A, Space::B) };
        [(w.waddr_add, add_space, w.cond_add), (w.waddr_mul, mul_space, w.cond_mul)].iter().any(
            |&(a, s, c)| {
                a == VPM_ADDR_OR_WAIT
                    && c != 0
                    && match s {
                        Space::A => busy_load,
                        Space::B => busy_store,
                    }
            },
        )
    }

    /// §3 "Summary of Instruction Restrictions" and the other documented rules the model can
    /// check before running the instruction.
    fn check_rules(&mut self, inst: &Instruction) -> Result<(), QpuFaultKind> {
        let s = inst.sig();
        let w = inst.writes();
        let fragment = self.thread().is_fragment();
        let t = self.thread();
        let ending = t.ending(s);
        let last = t.end_slots == Some(0);
        let (add_space, mul_space) = if w.ws { (Space::B, Space::A) } else { (Space::A, Space::B) };
        let writes = [(w.waddr_add, add_space, w.cond_add), (w.waddr_mul, mul_space, w.cond_mul)];
        // A branch writes its link whatever the conditions; others write where not "never".
        let branch = matches!(inst, Instruction::Branch { .. });
        let mut active = Pair::default();
        for &(a, s, c) in &writes {
            if a != NOP && (branch || c != 0) {
                active.push((a, s));
            }
        }
        let mut reads = Pair::default();
        if let Instruction::Alu { raddr_a, b, mux, .. } = *inst {
            reads.push((raddr_a, Space::A));
            if let SourceB::Register(r) = b {
                reads.push((r, Space::B));
            }
            let uses = |m: u8| mux.contains(&m);
            if uses(4) && t.sfu.is_some() {
                return Err(QpuFaultKind::Restriction(
                    "r4 read in the two instructions after an SFU write",
                ));
            }
            if uses(6) && raddr_a < 32 && t.written_a == Some(raddr_a) {
                return Err(QpuFaultKind::Restriction(
                    "regfile A location read in the instruction after its write",
                ));
            }
            if let SourceB::Register(r) = b
                && uses(7)
                && r < 32
                && t.written_b == Some(r)
            {
                return Err(QpuFaultKind::Restriction(
                    "regfile B location read in the instruction after its write",
                ));
            }
            if let SourceB::SmallImmediate(v) = b
                && v >= 48
            {
                if mux[2] > 3 || mux[3] > 3 {
                    return Err(QpuFaultKind::Restriction(
                        "vector rotation with a mul input other than r0-r3",
                    ));
                }
                if v == 48 && t.written_acc & 1 << 5 != 0 {
                    return Err(QpuFaultKind::Restriction(
                        "rotation by r5 right after a write to r5",
                    ));
                }
                if (t.written_acc & (1 << mux[2] | 1 << mux[3])) != 0 {
                    return Err(QpuFaultKind::Restriction(
                        "rotation of an accumulator written by the previous instruction",
                    ));
                }
            }
            if t.uniforms_written_at.is_some_and(|at| t.executed <= at + 2)
                && reads.iter().any(|r| r.0 == UNIFORM_READ)
            {
                return Err(QpuFaultKind::Restriction(
                    "uniform read within two instructions of a uniforms-address write",
                ));
            }
            let within = |at: Option<u64>, n: u64| at.is_some_and(|at| t.executed <= at + n);
            if within(t.tlb_z_written_at, 2) && raddr_a == MS_OR_REV {
                return Err(QpuFaultKind::Restriction(
                    "multisample mask read in the two instructions after a TLB Z write",
                ));
            }
            if t.threaded && reads.iter().any(|r| (16..32).contains(&r.0)) {
                return Err(QpuFaultKind::Restriction(
                    "threaded shader read a regfile location of the other thread (16-31)",
                ));
            }
        }
        if matches!(s, sig::BREAKPOINT) {
            return Err(QpuFaultKind::Unsupported("software breakpoint (no debugger attached)"));
        }
        if matches!(s, sig::COVERAGE_LOAD | sig::ALPHA_MASK_LOAD) {
            return Err(QpuFaultKind::Unsupported("coverage and alpha-mask loads"));
        }
        let tlb_sig = matches!(
            s,
            sig::COLOUR_LOAD | sig::COLOUR_LOAD_END | sig::WAIT_SCOREBOARD | sig::SCOREBOARD_UNLOCK
        );
        let tlb_write = active.iter().any(|w| (TLB_STENCIL_SETUP..=TLB_ALPHA_MASK).contains(&w.0));
        if !fragment && (tlb_sig || tlb_write) {
            return Err(QpuFaultKind::Restriction("tile buffer access outside a fragment shader"));
        }
        if fragment
            && t.executed < 2
            && (s == sig::WAIT_SCOREBOARD
                || tlb_write
                || matches!(s, sig::COLOUR_LOAD | sig::COLOUR_LOAD_END))
        {
            return Err(QpuFaultKind::Restriction(
                "scoreboard wait in the first two instructions of a fragment shader",
            ));
        }
        let vpm = |a: u8| matches!(a, VPM_DATA | VPM_SETUP_OR_BUSY | VPM_ADDR_OR_WAIT);
        if fragment && (reads.iter().any(|r| vpm(r.0)) || active.iter().any(|w| vpm(w.0))) {
            return Err(QpuFaultKind::Restriction("VPM access from a fragment shader (§7)"));
        }
        if !fragment && reads.iter().any(|r| r.0 == VARYING_READ) {
            return Err(QpuFaultKind::Restriction("varying read outside a fragment shader"));
        }
        if matches!(s, sig::THREAD_SWITCH | sig::LAST_THREAD_SWITCH) && (!fragment || !t.threaded) {
            return Err(QpuFaultKind::Restriction(
                "thread switch in a program not marked threadable",
            ));
        }
        if ending {
            if reads.iter().any(|r| io_read_forbidden_at_end(r.0))
                || active.iter().any(|w| io_write_forbidden_at_end(w.0))
            {
                return Err(QpuFaultKind::Restriction(
                    "uniform, varying or VPM access in the last three instructions",
                ));
            }
            if reads.iter().any(|r| r.0 == 14) || active.iter().any(|w| w.0 == 14) {
                return Err(QpuFaultKind::Restriction(
                    "regfile location 14 touched in the last three instructions",
                ));
            }
            if t.end_slots.is_none() && active.iter().any(|w| w.0 < 32) {
                return Err(QpuFaultKind::Restriction(
                    "thread end instruction writes a physical regfile",
                ));
            }
        }
        if last && active.iter().any(|w| w.0 == TLB_Z) {
            return Err(QpuFaultKind::Restriction("TLB Z write in the final instruction"));
        }
        if matches!(s, sig::PROGRAM_END | sig::COLOUR_LOAD_END) && t.end_slots.is_some() {
            return Err(QpuFaultKind::Restriction("thread end in the delay slots of a thread end"));
        }
        if t.noswap_written_at.is_some_and(|at| t.executed < at + 3)
            && active.iter().any(|w| w.0 >= TMU_FIRST)
        {
            return Err(QpuFaultKind::Restriction(
                "TMU write less than three instructions after a TMU_NOSWAP write",
            ));
        }
        let texture_write = active.iter().any(|w| {
            w.0 >= TMU_FIRST
                && (!(w.0 - TMU_FIRST).is_multiple_of(4)
                    || t.tmu_request.iter().any(|r| !r.config.is_empty()))
        });
        if texture_write && reads.iter().any(|r| r.0 == UNIFORM_READ) {
            return Err(QpuFaultKind::Restriction(
                "texture lookup write that also reads a uniform (§3 \"Texture and Memory Units\")",
            ));
        }
        // One closely coupled peripheral access per instruction (the multisample colour read
        // and write may share one).
        let mut units = 0;
        units += active.iter().filter(|w| w.0 >= TMU_FIRST).count();
        units += usize::from(matches!(s, sig::LOAD_TMU0 | sig::LOAD_TMU1));
        let colour_read = matches!(s, sig::COLOUR_LOAD | sig::COLOUR_LOAD_END);
        let tlb_writes =
            active.iter().filter(|w| (TLB_STENCIL_SETUP..=TLB_ALPHA_MASK).contains(&w.0)).count();
        let only_ms_write = tlb_writes == 1 && active.iter().any(|w| w.0 == TLB_COLOUR_MS);
        units += tlb_writes;
        units += usize::from(colour_read && !only_ms_write);
        units += active.iter().filter(|w| (SFU_RECIP..=SFU_LOG).contains(&w.0)).count();
        units += reads.iter().filter(|r| r.0 == MUTEX).count().min(1);
        units += usize::from(matches!(inst, Instruction::Semaphore { .. }));
        if units > 1 {
            return Err(QpuFaultKind::Restriction(
                "more than one closely coupled peripheral access in one instruction",
            ));
        }
        let r4_writer =
            matches!(s, sig::LOAD_TMU0 | sig::LOAD_TMU1 | sig::COLOUR_LOAD | sig::COLOUR_LOAD_END)
                || active.iter().any(|w| (SFU_RECIP..=SFU_LOG).contains(&w.0));
        if r4_writer && t.sfu.is_some() {
            return Err(QpuFaultKind::Restriction(
                "r4 written in the two instructions after an SFU write",
            ));
        }
        // Both pipes writing one accumulator or I/O register is undefined (§3 "ALUs").
        if let [Some((a, _)), Some((b, _))] = active.0
            && a == b
            && a >= 32
        {
            return Err(QpuFaultKind::Restriction(
                "both pipes write the same accumulator or I/O register",
            ));
        }
        if t.threaded && active.iter().any(|w| (16..32).contains(&w.0)) {
            return Err(QpuFaultKind::Restriction(
                "threaded shader wrote a regfile location of the other thread (16-31)",
            ));
        }
        Ok(())
    }

    fn uniform(&mut self) -> Result<u32, QpuFaultKind> {
        let slice = self.slice();
        let t = self.thread();
        let address = t.uniforms;
        match t.uniforms_left.as_mut() {
            Some(0) => {
                return Err(QpuFaultKind::Restriction(
                    "uniform read beyond the stream's length (V3D_SRQUL)",
                ));
            }
            Some(n) => *n -= 1,
            None => {}
        }
        t.uniforms = address.wrapping_add(4);
        self.shared.read(self.dev, slice, Port::Uniforms, address)
    }

    fn read_io(&mut self, addr: u8, space: Space) -> Result<(Vector, Option<u32>), QpuFaultKind> {
        let id = self.id as u32;
        let default = match space {
            Space::A => element_numbers(),
            Space::B => lanes(id),
        };
        let t = self.qpu.thread.as_mut().expect("an executing QPU has a thread");
        Ok(match addr {
            0..=31 => {
                let v = match space {
                    Space::A => t.ra[usize::from(addr)],
                    Space::B => t.rb[usize::from(addr)],
                };
                (v, None)
            }
            UNIFORM_READ => (lanes(self.uniform()?), None),
            VARYING_READ => {
                let f = t.fragment().expect("checked: fragment shader");
                let Some(v) = f.batch.varyings.get(f.varyings_read) else {
                    return Err(QpuFaultKind::Restriction(
                        "varying read beyond the varyings set up (undefined data)",
                    ));
                };
                let (p, c) = (v.partial.map(f32::to_bits), v.c.to_bits());
                f.varyings_read += 1;
                (p, Some(c))
            }
            PIXEL_COORD | MS_OR_REV => match t.fragment() {
                Some(f) => {
                    let b = &f.batch;
                    let v = match (addr, space) {
                        (PIXEL_COORD, Space::A) => b.x.map(u32::from),
                        (PIXEL_COORD, Space::B) => b.y.map(u32::from),
                        (_, Space::A) => core::array::from_fn(|i| u32::from(b.coverage >> i & 1)),
                        (_, Space::B) => lanes(u32::from(b.reverse)),
                    };
                    (v, None)
                }
                None => (default, None),
            },
            VPM_DATA => {
                let executed = t.executed;
                let Some(r) = t.vpm_reads.front_mut() else {
                    return Err(QpuFaultKind::Restriction(
                        "VPM read beyond the vectors set up (undefined data)",
                    ));
                };
                if executed < r.ready_at {
                    return Err(QpuFaultKind::Restriction(
                        "VPM read within three instructions of its setup (undefined data)",
                    ));
                }
                let v = self.shared.vpm.read_vector(&mut r.access);
                r.remaining -= 1;
                if r.remaining == 0 {
                    t.vpm_reads.pop_front();
                }
                (v, None)
            }
            VPM_SETUP_OR_BUSY => {
                let busy = match space {
                    Space::A => self.qpu.vdr.is_some(),
                    Space::B => self.qpu.vdw.is_some(),
                };
                (lanes(u32::from(busy)), None)
            }
            // The waits stalled until the DMA was done (`would_stall`).
            VPM_ADDR_OR_WAIT => (lanes(0), None),
            MUTEX => {
                let me = self.id as u8;
                if self.shared.mutex == Some(me) {
                    return Err(QpuFaultKind::Restriction(
                        "mutex acquire by the QPU holding it (it would wait forever)",
                    ));
                }
                self.shared.mutex = Some(me);
                (default, None)
            }
            NOP => ([0; LANES], None),
            _ => (default, None),
        })
    }

    fn read_operands(&mut self, raddr_a: u8, b: SourceB) -> Result<Reads, QpuFaultKind> {
        let (a, c_a) = self.read_io(raddr_a, Space::A)?;
        let (bv, c_b) = match b {
            SourceB::Register(r) => self.read_io(r, Space::B)?,
            SourceB::SmallImmediate(v) if v < 48 => (lanes(small_immediate(v)), None),
            SourceB::SmallImmediate(_) => ([0; LANES], None),
        };
        Ok(Reads { a, b: bv, r5_c: c_b.or(c_a) })
    }

    /// Both pipes: inputs through the muxes (with unpack), per-lane results, mul rotation.
    #[allow(clippy::too_many_arguments)]
    fn alu(
        &mut self,
        unpack: u8,
        w: Writes,
        op_add: u8,
        op_mul: u8,
        raddr_a: u8,
        b: SourceB,
        mux: [u8; 4],
        reads: &Reads,
    ) -> PipeResults {
        let t = self.thread();
        // Unpack applies to physical regfile A reads (pm clear) or to r4 (pm set), §3.
        let input = |m: u8, float: bool, lane: usize| -> u32 {
            match m {
                0..=3 | 5 => t.acc[usize::from(m)][lane],
                4 if w.pm => alu::unpack_r4(unpack, t.acc[4][lane]),
                4 => t.acc[4][lane],
                6 if !w.pm && raddr_a < 32 => alu::unpack_a(unpack, reads.a[lane], float),
                6 => reads.a[lane],
                _ => reads.b[lane],
            }
        };
        let fa = alu::add_reads_float(op_add);
        let fm = alu::mul_is_float(op_mul);
        // A nop pipe reads nothing (and costs nothing).
        let nop = [plain(0); LANES];
        let add: [alu::Lane; LANES] = if op_add == 0 {
            nop
        } else {
            core::array::from_fn(|i| alu::add(op_add, input(mux[0], fa, i), input(mux[1], fa, i)))
        };
        let mut mul: [alu::Lane; LANES] = if op_mul == 0 {
            nop
        } else {
            core::array::from_fn(|i| alu::mul(op_mul, input(mux[2], fm, i), input(mux[3], fm, i)))
        };
        if let SourceB::SmallImmediate(v) = b
            && v >= 48
        {
            // §3 Table 5: rotated "upwards", element 0 moves to element n.
            let n = if v == 48 { (t.acc[5][0] & 0xF) as usize } else { usize::from(v - 48) };
            let src = mul;
            for (i, l) in src.iter().enumerate() {
                mul[(i + n) % LANES] = *l;
            }
        }
        (add, mul, alu::add_writes_float(op_add), alu::mul_is_float(op_mul))
    }

    /// Write both pipes' results (conditions, pack, flags). Returns the SFU input if an SFU
    /// register was written.
    fn write_results(
        &mut self,
        w: Writes,
        (add, mul, add_float, mul_float): PipeResults,
        op_add: u8,
    ) -> Result<Option<Vector>, QpuFaultKind> {
        let t = self.thread();
        let add_mask = condition(t, w.cond_add);
        let mul_mask = condition(t, w.cond_mul);
        // Flags: from the add pipe unless it did a NOP or never ran (§3 Table 1, sf).
        if w.sf {
            let from_add = op_add != 0 && w.cond_add != 0;
            let (src, float) = if from_add { (&add, add_float) } else { (&mul, mul_float) };
            let (mut z, mut n, mut c) = (0u16, 0u16, 0u16);
            for (i, l) in src.iter().enumerate() {
                let zero = if float { l.value & 0x7FFF_FFFF == 0 } else { l.value == 0 };
                z |= u16::from(zero) << i;
                n |= u16::from(l.value >> 31 != 0) << i;
                c |= u16::from(l.carry) << i;
            }
            (t.z, t.n, t.c) = (z, n, c);
        }
        let (add_space, mul_space) = if w.ws { (Space::B, Space::A) } else { (Space::A, Space::B) };
        t.written_a = None;
        t.written_b = None;
        t.written_acc = 0;
        let mut sfu = None;
        for (pipe, (addr, space, mask, results, float)) in [
            (w.waddr_add, add_space, add_mask, add, add_float),
            (w.waddr_mul, mul_space, mul_mask, mul, mul_float),
        ]
        .into_iter()
        .enumerate()
        {
            if mask == 0 || addr == NOP {
                continue;
            }
            let is_mul = pipe == 1;
            let t = self.thread();
            let old = |i: usize| -> u32 {
                match (addr, space) {
                    (0..=31, Space::A) => t.ra[usize::from(addr)][i],
                    (0..=31, Space::B) => t.rb[usize::from(addr)][i],
                    (32..=35, _) => t.acc[usize::from(addr - 32)][i],
                    _ => 0,
                }
            };
            let values: Vector = core::array::from_fn(|i| {
                let l = results[i];
                if w.pm && is_mul {
                    alu::pack_mul_colour(w.pack, l.value, old(i))
                } else if !w.pm && space == Space::A && addr < 32 {
                    alu::pack_a(w.pack, l, float, old(i))
                } else {
                    l.value
                }
            });
            if let Some(v) = self.write_register(addr, space, mask, values)? {
                sfu = Some(v);
            }
        }
        Ok(sfu)
    }

    /// Write `values` (lanes in `mask`) to register-space address `addr` of `space`.
    fn write_register(
        &mut self,
        addr: u8,
        space: Space,
        mask: u16,
        values: Vector,
    ) -> Result<Option<Vector>, QpuFaultKind> {
        let id = self.id;
        let t = self.qpu.thread.as_mut().expect("an executing QPU has a thread");
        let merge = |dst: &mut Vector| merge_lanes(dst, &values, mask);
        match addr {
            0..=31 => match space {
                Space::A => {
                    merge(&mut t.ra[usize::from(addr)]);
                    t.written_a = Some(addr);
                }
                Space::B => {
                    merge(&mut t.rb[usize::from(addr)]);
                    t.written_b = Some(addr);
                }
            },
            32..=35 => {
                merge(&mut t.acc[usize::from(addr - 32)]);
                t.written_acc |= 1 << (addr - 32);
            }
            TMU_NOSWAP => {
                t.tmu_noswap = values[0] & 1 != 0;
                t.noswap_written_at = Some(t.executed);
            }
            ACC5 => {
                // A: each quad replicates its element 0; B: element 0 everywhere (Table 14).
                t.acc[5] = match space {
                    Space::A => core::array::from_fn(|i| values[i & !3]),
                    Space::B => lanes(values[0]),
                };
                t.written_acc |= 1 << 5;
            }
            ELEMENT_OR_QPU => self.shared.host_interrupts |= 1 << id,
            NOP => {}
            UNIFORMS_ADDRESS => {
                t.uniforms = values[0];
                t.uniforms_written_at = Some(t.executed);
            }
            PIXEL_COORD | MS_OR_REV | TLB_STENCIL_SETUP | TLB_ALPHA_MASK => {
                return Err(QpuFaultKind::Unsupported(
                    "QUAD_X/Y, MS_FLAGS, REV_FLAG, stencil setup and alpha-mask writes",
                ));
            }
            TLB_Z => {
                t.tlb_z_written_at = Some(t.executed);
                let f = t.fragment().expect("checked: fragment shader");
                merge_lanes(&mut f.output.z, &values.map(|z| z & 0xFF_FFFF), mask);
                f.output.z_written |= mask;
            }
            TLB_COLOUR_MS | TLB_COLOUR_ALL => {
                let f = t.fragment().expect("checked: fragment shader");
                merge_lanes(&mut f.output.colour, &values, mask);
                f.output.colour_written |= mask;
            }
            VPM_DATA => {
                let Some(access) = t.vpm_write.as_mut() else {
                    return Err(QpuFaultKind::Restriction("VPM write before a VPM write setup"));
                };
                let rows = self.shared.user_vpm_rows;
                self.shared.vpm_lanes_masked +=
                    u64::from(self.shared.vpm.write_vector(access, &values, rows));
            }
            VPM_SETUP_OR_BUSY => self.vpm_setup(space, values[0])?,
            VPM_ADDR_OR_WAIT => {
                let job = match space {
                    Space::A => t.vdr.job(values[0])?,
                    Space::B => t.vdw.job(values[0])?,
                };
                if job.words.iter().any(|&(_, a)| a & !3 == 0) {
                    return Err(QpuFaultKind::Bus { address: 0, write: job.store });
                }
                match space {
                    Space::A => self.qpu.vdr = Some(job),
                    Space::B => self.qpu.vdw = Some(job),
                }
            }
            MUTEX => {
                if self.shared.mutex != Some(id as u8) {
                    return Err(QpuFaultKind::Restriction("mutex release by a QPU not holding it"));
                }
                self.shared.mutex = None;
            }
            SFU_RECIP..=SFU_LOG => {
                let f = |x: u32| -> u32 {
                    let x = f32::from_bits(x);
                    match addr {
                        SFU_RECIP => 1.0 / x,
                        53 => 1.0 / x.sqrt(),
                        54 => x.exp2(),
                        _ => x.log2(),
                    }
                    .to_bits()
                };
                return Ok(Some(values.map(f)));
            }
            _ => self.tmu_write(addr, values, mask)?,
        }
        Ok(None)
    }

    fn vpm_setup(&mut self, space: Space, v: u32) -> Result<(), QpuFaultKind> {
        let t = self.thread();
        match (space, v >> 30) {
            (Space::B, 0) => t.vpm_write = Some(BlockAccess::decode(v)?),
            (Space::B, 2) => t.vdw.basic = Some(v),
            (Space::B, 3) => t.vdw.stride = v,
            (Space::A, 0) => {
                if t.vpm_reads.len() < 2 {
                    let num = (v >> 20) & 0xF;
                    t.vpm_reads.push_back(VpmRead {
                        access: BlockAccess::decode(v)?,
                        remaining: if num == 0 { 16 } else { num },
                        ready_at: t.executed + 3,
                    });
                } // §7: "writes to the setup register will be ignored if the queue is full"
            }
            (Space::A, _) if v >> 28 == 9 => t.vdr.extended = v,
            (Space::A, _) if v >> 31 == 1 => t.vdr.basic = Some(v),
            (Space::A, id) | (Space::B, id) => {
                // Write setup ID 1 and read setup IDs 1 (bit 31 clear, bit 30 set) are not
                // defined by §7 Tables 32-37.
                return Err(QpuFaultKind::ReservedEncoding {
                    field: "VPM setup ID",
                    value: id as u8,
                });
            }
        }
        Ok(())
    }

    /// TMU parameter writes (§4): S retires the request. S alone is a general-memory lookup
    /// (no uniform); a T, R or B write first makes it a texture lookup, each parameter write
    /// reading a configuration uniform ([`crate::tmu`]). Lanes whose write condition fails are
    /// not looked up and return 0 (a decision).
    fn tmu_write(&mut self, addr: u8, values: Vector, mask: u16) -> Result<(), QpuFaultKind> {
        let slice = self.slice();
        let swap = self.id % QPUS_PER_SLICE >= 2;
        let t = self.thread();
        let mut tmu = usize::from((addr - TMU_FIRST) / 4);
        if swap && !t.tmu_noswap {
            tmu ^= 1;
        }
        let param = (addr - TMU_FIRST) % 4;
        let texture = param != 0 || !t.tmu_request[tmu].config.is_empty();
        if texture {
            let u = self.uniform()?;
            let r = &mut self.thread().tmu_request[tmu];
            r.config.push(u);
            match param {
                0 => {}
                1 => {
                    r.t = Some(values);
                    return Ok(());
                }
                _ => return Ok(()), // R (border colour, cube maps) and B (bias): not used
            }
        }
        let t = self.thread();
        if t.tmu_results[tmu].len() >= TMU_FIFO_DEPTH {
            return Err(QpuFaultKind::Restriction(
                "more TMU lookups outstanding than the receive FIFO holds (the QPU would hang)",
            ));
        }
        let request = std::mem::take(&mut t.tmu_request[tmu]);
        let sampler = match request.config[..] {
            [] => None,
            [p0, p1, ..] => Some(crate::tmu::Texture::decode(p0, p1)?),
            [_] => {
                return Err(QpuFaultKind::Restriction(
                    "texture lookup with fewer than two parameters (§4: always at least two)",
                ));
            }
        };
        if sampler.is_some() {
            let quads = (0..LANES / 4).filter(|q| mask >> (4 * q) & 0xF != 0).count();
            self.shared.events.add(crate::perf::source::TMU_QUADS, quads as u64);
        }
        let t_values = request.t.unwrap_or([0; LANES]);
        let mut out = [0; LANES];
        for (i, o) in out.iter_mut().enumerate() {
            if mask >> i & 1 == 0 {
                continue;
            }
            let (shared, dev) = (&mut *self.shared, &mut *self.dev);
            let mut fetch = |a: u32| shared.read(dev, slice, Port::Tmu(tmu as u8), a);
            *o = match &sampler {
                None => fetch(values[i])?,
                Some(tex) => {
                    tex.sample(f32::from_bits(values[i]), f32::from_bits(t_values[i]), &mut fetch)?
                }
            };
        }
        self.thread().tmu_results[tmu].push_back(out);
        Ok(())
    }

    /// The signal's own effect; returns what it loads into r4.
    fn signal(&mut self, s: u8) -> Result<Option<Vector>, QpuFaultKind> {
        let swap = self.id % QPUS_PER_SLICE >= 2;
        let t = self.thread();
        Ok(match s {
            sig::LOAD_TMU0 | sig::LOAD_TMU1 => {
                // The load names the TMU as the writes did (swapped likewise, §4).
                let tmu = usize::from(s - sig::LOAD_TMU0) ^ usize::from(swap && !t.tmu_noswap);
                let Some(v) = t.tmu_results[tmu].pop_front() else {
                    return Err(QpuFaultKind::Restriction(
                        "TMU load with no lookup outstanding (the QPU would hang)",
                    ));
                };
                Some(v)
            }
            sig::COLOUR_LOAD | sig::COLOUR_LOAD_END => t.fragment().map(|f| f.batch.tile_colour),
            _ => None,
        })
    }
}

/// Advance the VPM DMA engines of `qpu` by at most `budget` words; returns the words moved.
pub fn run_dma(
    qpu: &mut Qpu,
    vpm: &mut Vpm,
    dev: &mut DeviceContext<'_>,
    budget: u32,
) -> Result<u32, QpuFaultKind> {
    let mut moved = 0;
    for slot in [&mut qpu.vdw, &mut qpu.vdr] {
        let Some(job) = slot.as_mut() else { continue };
        while moved < budget {
            let Some((index, address)) = job.words.pop_front() else { break };
            if job.store {
                dev.dma_write_u32(u64::from(address), vpm.word(index))
                    .map_err(|_| QpuFaultKind::Bus { address, write: true })?;
            } else {
                let v = dev
                    .dma_read_u32(u64::from(address))
                    .map_err(|_| QpuFaultKind::Bus { address, write: false })?;
                vpm.set_word(index, v);
            }
            moved += 1;
        }
        if job.words.is_empty() {
            *slot = None;
        }
    }
    Ok(moved)
}
