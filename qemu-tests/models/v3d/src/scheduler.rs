//! The QPU scheduler (§3 "Thread Control", §10 "QPU Scheduler Registers"): the twelve QPUs,
//! what they share, user programs started from the SRQ on free QPUs that `V3D_SQRSVn` does
//! not reserve, one fragment-shader thread at a time for the renderer ([`FragmentShading`]),
//! and a bounded number of instructions per call.

use crate::perf::source;
use crate::qpu::{self, Exec, FragmentState, Program, QPUS, Qpu, QpuFault, Shared, Step, Thread};
use crate::shading::{FragmentBatch, FragmentOutput, FragmentShading, ShaderFault, ShadingStep};
use gpu_device_model::DeviceContext;

/// Instructions a QPU runs before the scheduler moves to the next one (round robin).
pub const QPU_TURN: u32 = 8;

/// `V3D_SQRSVn` QPURSV bit 0: do not use for user programs (§10 Table 62).
pub const RESERVE_USER: u8 = 1 << 0;
/// QPURSV bit 1: do not use for fragment shaders.
pub const RESERVE_FRAGMENT: u8 = 1 << 1;

/// What one [`Qpus::run`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Run {
    /// Instructions attempted (stalled attempts included).
    pub units: u32,
    /// Instructions that ran.
    pub instructions: u32,
    /// User programs that ended.
    pub user_programs_ended: u32,
    /// Every running user thread is stalled (nothing a tick can change without the host).
    pub all_stalled: bool,
}

/// The QPUs and what they share.
#[derive(Debug, Clone)]
pub struct Qpus {
    /// QPU 0-11 (QPU n is QPU n % 4 of slice n / 4).
    pub qpus: Vec<Qpu>,
    /// Semaphores, mutex, VPM, caches, host interrupt latch.
    pub shared: Shared,
    /// QPURSV per QPU (`V3D_SQRSV0/1`, 4 bits each).
    pub reservations: [u8; QPUS],
    /// The QPU running the renderer's fragment thread, and that thread's pending batch while
    /// no QPU is free.
    fragment_qpu: Option<usize>,
    pending_fragment: Option<FragmentBatch>,
    next: usize,
}

impl Default for Qpus {
    fn default() -> Self {
        Qpus {
            qpus: vec![Qpu::default(); QPUS],
            shared: Shared::new(),
            reservations: [0; QPUS],
            fragment_qpu: None,
            pending_fragment: None,
            next: 0,
        }
    }
}

impl Qpus {
    /// A free QPU not reserved against `reserve` (one of the QPURSV bits), lowest first.
    pub fn free_qpu(&self, reserve: u8) -> Option<usize> {
        (0..QPUS).find(|&q| self.qpus[q].thread.is_none() && self.reservations[q] & reserve == 0)
    }

    /// Start a user program on QPU `q`: code at `pc`, uniforms at `uniforms` with SRQUL
    /// `length` (§10 Tables 66-67: address 0 or length 0 disables the stream, a length above
    /// 1023 is unlimited).
    pub fn start_user(&mut self, q: usize, pc: u32, uniforms: u32, length: u32) {
        let left = match (uniforms, length) {
            (0, _) | (_, 0) => Some(0),
            (_, l) if l > 1023 => None,
            (_, l) => Some(l),
        };
        self.qpus[q].thread = Some(Thread::new(pc, uniforms, left, Program::User));
    }

    /// Count `cycles` idle cycles for every QPU without a thread (performance source 13).
    pub fn count_idle(&mut self, cycles: u64) {
        let idle = self.qpus.iter().filter(|q| q.thread.is_none()).count() as u64;
        self.shared.events.add(source::QPU_IDLE, idle * cycles);
    }

    /// Whether any QPU runs a thread or a DMA.
    pub fn busy(&self) -> bool {
        self.qpus.iter().any(|q| q.thread.is_some() || q.vdw.is_some() || q.vdr.is_some())
    }

    /// Whether a user program runs on a QPU.
    pub fn user_running(&self) -> bool {
        self.qpus
            .iter()
            .any(|q| q.thread.as_ref().is_some_and(|t| matches!(t.program, Program::User)))
    }

    /// Advance the VPM DMA engines by at most `budget` words in all.
    pub fn run_dma(&mut self, dev: &mut DeviceContext<'_>, budget: u32) -> Result<u32, QpuFault> {
        let mut moved = 0;
        for (q, qpu) in self.qpus.iter_mut().enumerate() {
            if moved >= budget {
                break;
            }
            moved +=
                qpu::run_dma(qpu, &mut self.shared.vpm, dev, budget - moved).map_err(|kind| {
                    QpuFault { kind, qpu: q as u8, pc: qpu.thread.as_ref().map_or(0, |t| t.pc) }
                })?;
        }
        Ok(moved)
    }

    fn exec<'a, 'b>(&'a mut self, q: usize, dev: &'a mut DeviceContext<'b>) -> Exec<'a, 'b> {
        Exec { id: q, qpu: &mut self.qpus[q], shared: &mut self.shared, dev }
    }

    /// Run the user programs' QPUs round robin, [`QPU_TURN`] instructions a turn, for at most
    /// `budget` instruction attempts. A fault stops the faulting thread and is returned.
    pub fn run(&mut self, dev: &mut DeviceContext<'_>, budget: u32) -> (Run, Option<QpuFault>) {
        let mut run = Run::default();
        loop {
            let mut progress = false;
            let mut any = false;
            for k in 0..QPUS {
                let q = (self.next + k) % QPUS;
                let user = self.qpus[q]
                    .thread
                    .as_ref()
                    .is_some_and(|t| matches!(t.program, Program::User));
                if !user {
                    continue;
                }
                any = true;
                for _ in 0..QPU_TURN {
                    if run.units >= budget {
                        self.next = q;
                        return (run, None);
                    }
                    run.units += 1;
                    let pc = self.qpus[q].thread.as_ref().map_or(0, |t| t.pc);
                    match self.exec(q, dev).step() {
                        Step::Ran => {
                            run.instructions += 1;
                            self.shared.events.add(source::QPU_VALID, 1);
                            progress = true;
                        }
                        Step::Stalled => break,
                        Step::Ended => {
                            run.instructions += 1;
                            self.shared.events.add(source::QPU_VALID, 1);
                            run.user_programs_ended += 1;
                            progress = true;
                            self.end_thread(q);
                            break;
                        }
                        Step::Fault(kind) => {
                            self.end_thread(q);
                            return (run, Some(QpuFault { kind, qpu: q as u8, pc }));
                        }
                    }
                }
            }
            self.next = (self.next + 1) % QPUS;
            if !progress {
                run.all_stalled = any;
                return (run, None);
            }
        }
    }

    /// A thread is over: §7 "When a QPU program finishes, all outstanding VPM reads for that
    /// QPU are cancelled" (they live in the thread); its DMA runs on.
    fn end_thread(&mut self, q: usize) {
        self.qpus[q].thread = None;
        if self.shared.mutex == Some(q as u8) {
            self.shared.mutex = None;
        }
    }

    /// Return to the power-on state, keeping nothing.
    pub fn reset(&mut self) {
        *self = Qpus::default();
    }
}

/// The renderer's fragment threads run one at a time on a QPU not reserved for fragment
/// shaders (QPURSV bit 1); while every such QPU runs a user program the batch waits.
impl FragmentShading for Qpus {
    fn start(&mut self, batch: FragmentBatch) {
        if let Some(q) = self.fragment_qpu.take() {
            self.end_thread(q);
        }
        self.pending_fragment = Some(batch);
    }

    fn step(&mut self, dev: &mut DeviceContext<'_>, budget: u32) -> ShadingStep {
        if self.fragment_qpu.is_none() {
            let Some(q) = self.free_qpu(RESERVE_FRAGMENT) else { return ShadingStep::Running };
            let Some(batch) = self.pending_fragment.take() else { return ShadingStep::Running };
            let state = FragmentState {
                varyings_read: 0,
                output: FragmentOutput {
                    colour: [0; crate::shading::LANES],
                    colour_written: 0,
                    z: [0; crate::shading::LANES],
                    z_written: 0,
                },
                batch,
            };
            let (pc, uniforms) = (state.batch.code_address, state.batch.uniforms_address);
            let program = Program::Fragment(Box::new(state));
            self.qpus[q].thread = Some(Thread::new(pc, uniforms, None, program));
            self.fragment_qpu = Some(q);
        }
        let Some(q) = self.fragment_qpu else { return ShadingStep::Running };
        for _ in 0..budget {
            let pc = self.qpus[q].thread.as_ref().map_or(0, |t| t.pc);
            let ran = |s: &mut Shared| {
                s.events.add(source::QPU_VALID, 1);
                s.events.add(source::QPU_FRAGMENT, 1);
            };
            match self.exec(q, dev).step() {
                Step::Ran => ran(&mut self.shared),
                Step::Stalled => {
                    // A fragment thread stalled for good (a semaphore no one releases) would
                    // hang the renderer: its stalls count against the instruction limit.
                    if let Some(t) = self.qpus[q].thread.as_mut() {
                        t.stalls += 1;
                    }
                }
                Step::Ended => {
                    ran(&mut self.shared);
                    let thread = self.qpus[q].thread.take();
                    self.fragment_qpu = None;
                    self.end_thread(q);
                    return match thread.map(|t| t.program) {
                        Some(Program::Fragment(f)) => ShadingStep::Done(f.output),
                        _ => ShadingStep::Running,
                    };
                }
                Step::Fault(kind) => {
                    self.fragment_qpu = None;
                    self.end_thread(q);
                    return ShadingStep::Fault(ShaderFault { pc, reason: kind.reason() });
                }
            }
        }
        ShadingStep::Running
    }
}
