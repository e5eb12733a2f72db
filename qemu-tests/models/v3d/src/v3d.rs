//! The V3D register block (§10) and the engines behind it that this half of the model owns:
//! identity, scratch, interrupts (pipeline status bits, QPU host interrupts), cache control,
//! the QPU scheduler's reservations, the user-program request queue (SRQ) and the VPM user
//! reservation. The control-list registers (CTnCS/EA/CA/RA0/LC/PC, PCS, BFC, RFC, BPxx, BXCF)
//! and the pipeline interrupts (INTCTL/INTENA/INTDIS) belong to the control-list executor
//! ([`crate::cle::Cle`]), which shades fragments on the same QPUs.

use crate::cle::{self, Cle};
use crate::faults::Faults;
use crate::perf::{COUNTERS, Counters};
use crate::qpu::{QPUS, QpuFault};
use crate::scheduler::{Qpus, RESERVE_USER};
use baregpu_hal::register::Register;
use baregpu_regs::vc4::{Chipset, REGISTERS, v3d};
use gpu_device_model::regfile::RegisterFile;
use gpu_device_model::{Activity, DeviceContext, PlatformModel};
use std::collections::VecDeque;

/// Bytes of the register window (BAR0): the §10 map ends at `V3D_ERRSTAT` 0xF20.
pub const WINDOW_BYTES: u64 = 0x1000;
/// QPU instruction attempts per tick, across all QPUs (checklist item 3).
pub const INSTRUCTIONS_PER_TICK: u32 = 192;
/// VPM DMA words moved per tick, across all QPUs.
pub const DMA_WORDS_PER_TICK: u32 = 64;
/// The most work units (instruction attempts and DMA words) the user-program side of one
/// tick runs; the control-list executor's own bound ([`cle::MAX_UNITS_PER_TICK`]) comes on top
/// ([`MODEL_UNITS_PER_TICK`]).
pub const MAX_UNITS_PER_TICK: u64 = (INSTRUCTIONS_PER_TICK + DMA_WORDS_PER_TICK) as u64;
/// The most work units one tick of the whole V3D runs: user programs and VPM DMA, then the
/// control lists with the fragment shading they start.
pub const MODEL_UNITS_PER_TICK: u64 = MAX_UNITS_PER_TICK + cle::MAX_UNITS_PER_TICK;
/// User program requests the SRQ holds (§10 Table 65).
pub const SRQ_DEPTH: usize = 16;
/// The interrupt line the V3D drives (one line: pipeline and QPU interrupts).
pub const IRQ_LINE: u32 = 1;

const fn off<R: Register>() -> u32 {
    R::OFFSET as u32
}

const L2CACTL: u32 = off::<v3d::V3D_L2CACTL>();
const SLCACTL: u32 = off::<v3d::V3D_SLCACTL>();
const SQRSV0: u32 = off::<v3d::V3D_SQRSV0>();
const SQRSV1: u32 = off::<v3d::V3D_SQRSV1>();
const SRQPC: u32 = off::<v3d::V3D_SRQPC>();
const SRQUA: u32 = off::<v3d::V3D_SRQUA>();
const SRQUL: u32 = off::<v3d::V3D_SRQUL>();
const SRQCS: u32 = off::<v3d::V3D_SRQCS>();
const VPMBASE: u32 = off::<v3d::V3D_VPMBASE>();
const DBQITE: u32 = off::<v3d::V3D_DBQITE>();
const PCTRC: u32 = off::<v3d::V3D_PCTRC>();
const PCTRE: u32 = off::<v3d::V3D_PCTRE>();
const PCTR0: u32 = off::<v3d::V3D_PCTR0>();
const PCTRS0: u32 = off::<v3d::V3D_PCTRS0>();
/// Bytes from one counter's `V3D_PCTRn`/`V3D_PCTRSn` pair to the next (Table 48).
const PCTR_STRIDE: u32 = off::<v3d::V3D_PCTR1>() - PCTR0;

/// The performance counter `V3D_PCTRn` (`Some((n, false))`) or mapping `V3D_PCTRSn`
/// (`Some((n, true))`) at `offset`.
fn counter_register(offset: u32) -> Option<(usize, bool)> {
    let rel = offset.checked_sub(PCTR0)?;
    let n = (rel / PCTR_STRIDE) as usize;
    (n < COUNTERS).then_some((n, rel % PCTR_STRIDE == PCTRS0 - PCTR0))
}
const DBQITC: u32 = off::<v3d::V3D_DBQITC>();

/// Counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Register writes dropped: holes and read-only registers.
    pub writes_dropped: u64,
    /// QPU instructions run.
    pub instructions: u64,
    /// Work units run (instruction attempts and DMA words).
    pub units: u64,
    /// The most work units one tick ran (at most [`MAX_UNITS_PER_TICK`]).
    pub max_tick_units: u64,
    /// User programs started.
    pub user_programs_started: u64,
    /// User programs completed.
    pub user_programs_completed: u64,
    /// VPM DMA words moved.
    pub dma_words: u64,
    /// Host interrupts a `missed-irq` fault kept off the line.
    pub interrupts_missed: u64,
}

/// One queued user program request (§10 Tables 65-67).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// Program address.
    pub pc: u32,
    /// Uniforms address.
    pub uniforms: u32,
    /// Uniforms length.
    pub length: u32,
}

/// The emulated V3D (the QPU half; see the crate documentation).
#[derive(Debug, Clone)]
pub struct V3d {
    regs: RegisterFile<Chipset>,
    /// The QPUs (also the renderer's [`crate::shading::FragmentShading`]).
    pub qpus: Qpus,
    /// The control-list executor: binning and rendering threads, binner, renderer.
    pub cle: Cle,
    queue: VecDeque<Request>,
    srq_error: bool,
    requests_made: u8,
    completed: u8,
    /// QPU interrupt bits a `missed-irq` fault keeps off the line until cleared.
    suppressed: u16,
    faults: Faults,
    stats: Stats,
    fault: Option<QpuFault>,
    slow_ticks: u32,
    counters: Counters,
}

impl Default for V3d {
    fn default() -> Self {
        Self::new()
    }
}

impl V3d {
    /// A V3D at power-on, configured as the BCM2835's (the §10 reference configuration:
    /// `V3D_IDENT1` 3 slices x 4 QPUs, 2 TMUs per slice, 16 semaphores, 12 KiB VPM, HDR;
    /// `V3D_IDENT2` full-size double-buffered tile buffer).
    pub fn new() -> Self {
        Self::with_faults(Faults::default())
    }

    /// A V3D with faults injected.
    pub fn with_faults(faults: Faults) -> Self {
        V3d {
            regs: RegisterFile::new(
                REGISTERS,
                WINDOW_BYTES as u32,
                |s| s.chipsets.contains(Chipset::BCM2835),
                &[],
            ),
            qpus: Qpus::default(),
            cle: {
                let mut cle = Cle::new();
                cle.set_faults(faults.cle());
                cle
            },
            queue: VecDeque::new(),
            srq_error: false,
            requests_made: 0,
            completed: 0,
            suppressed: 0,
            faults,
            stats: Stats::default(),
            fault: None,
            slow_ticks: 0,
            counters: Counters::default(),
        }
    }

    /// Counters.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// The first QPU fault, if a program did something hardware would not do.
    pub fn fault(&self) -> Option<QpuFault> {
        self.fault
    }

    /// The injected faults.
    pub fn faults(&self) -> Faults {
        self.faults
    }

    /// Count `n` events of performance-counter source `source` (§10 Table 82): the
    /// control-list executor's way in for the FEP, TLB, PTB and PSE sources.
    pub fn count_event(&mut self, source: usize, n: u64) {
        self.qpus.shared.events.add(source, n);
    }

    /// Requests waiting in the SRQ.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    fn update_irq(&mut self, dev: &mut DeviceContext<'_>) {
        let enabled = self.regs.read(DBQITE) as u16;
        let host = self.qpus.shared.host_interrupts;
        let qpu = host & enabled & !self.suppressed;
        dev.set_irq(IRQ_LINE, self.cle.interrupt_pending() != 0 || qpu != 0);
    }

    fn srqcs(&self) -> u32 {
        u32::from(self.completed) << 16
            | u32::from(self.requests_made) << 8
            | u32::from(self.srq_error) << 7
            | self.queue.len() as u32
    }

    fn read_register(&mut self, offset: u32) -> u32 {
        if let Some(value) = self.cle.mmio_read(offset) {
            return value;
        }
        let events = &self.qpus.shared.events;
        if let Some((n, mapping)) = counter_register(offset) {
            return if mapping { self.counters.source(n) } else { self.counters.value(n, events) };
        }
        match offset {
            PCTRE => self.counters.enables(),
            DBQITC => u32::from(self.qpus.shared.host_interrupts),
            L2CACTL => u32::from(self.qpus.shared.caches.l2_enabled),
            SRQCS => self.srqcs(),
            _ => self.regs.read(offset),
        }
    }

    fn write_register(&mut self, offset: u32, value: u32, dev: &mut DeviceContext<'_>) {
        if self.cle.mmio_write(offset, value) {
            self.update_irq(dev);
            return;
        }
        if !self.regs.accepts(offset) {
            self.stats.writes_dropped += 1;
            return;
        }
        let events = &self.qpus.shared.events;
        if let Some((n, mapping)) = counter_register(offset) {
            let value = self.regs.write(offset, value);
            match mapping {
                true => self.counters.set_source(n, value, events),
                false => self.counters.set_value(n, value, events),
            }
            return;
        }
        match offset {
            PCTRE => self.counters.set_enables(self.regs.write(offset, value), events),
            PCTRC => self.counters.clear(self.regs.write(offset, value), events),
            // Write 1 to clear (§10 Table 73).
            DBQITC => {
                self.qpus.shared.host_interrupts &= !(value as u16);
                self.suppressed &= !(value as u16);
            }
            L2CACTL => {
                let caches = &mut self.qpus.shared.caches;
                if v3d::V3D_L2CACTL::L2CCLR.get(value) != 0 {
                    caches.clear_l2();
                }
                if v3d::V3D_L2CACTL::L2CDIS.get(value) != 0 {
                    caches.l2_enabled = false;
                }
                if v3d::V3D_L2CACTL::L2CENA.get(value) != 0 {
                    caches.l2_enabled = true;
                }
            }
            SLCACTL => {
                use crate::cache::Port;
                use v3d::V3D_SLCACTL as S;
                let caches = &mut self.qpus.shared.caches;
                caches.clear(Port::Instruction, S::ICCS.get(value));
                caches.clear(Port::Uniforms, S::UCCS.get(value));
                caches.clear(Port::Tmu(0), S::T0CCS.get(value));
                caches.clear(Port::Tmu(1), S::T1CCS.get(value));
            }
            SRQPC => {
                // §10 Table 65: a request to a full queue (or while QPURQERR is set) is
                // dropped and sets QPURQERR; QPURQCM counts it anyway (Table 68).
                self.requests_made = self.requests_made.wrapping_add(1);
                if self.srq_error || self.queue.len() >= SRQ_DEPTH {
                    self.srq_error = true;
                } else {
                    self.queue.push_back(Request {
                        pc: value,
                        uniforms: self.regs.read(SRQUA),
                        length: self.regs.read(SRQUL),
                    });
                }
            }
            SRQCS => {
                use v3d::V3D_SRQCS as C;
                if value & C::QPURQL.mask() & 1 != 0 {
                    self.queue.clear();
                }
                if C::QPURQERR.get(value) != 0 {
                    self.srq_error = false;
                }
                if value >> C::QPURQCM.lsb & 1 != 0 {
                    self.requests_made = 0;
                }
                if value >> C::QPURQCC.lsb & 1 != 0 {
                    self.completed = 0;
                }
            }
            _ => {
                self.regs.write(offset, value);
                match offset {
                    SQRSV0 | SQRSV1 => {
                        let word = u64::from(self.regs.read(SQRSV1)) << 32
                            | u64::from(self.regs.read(SQRSV0));
                        for (q, r) in self.qpus.reservations.iter_mut().enumerate().take(QPUS) {
                            *r = (word >> (4 * q) & 0xF) as u8;
                        }
                    }
                    VPMBASE => {
                        let rsv = v3d::V3D_VPMBASE::VPMURSV.get(self.regs.read(VPMBASE));
                        // 256-byte units: four 16-word rows each (§10 Table 69).
                        self.qpus.shared.user_vpm_rows = rsv as usize * 4;
                    }
                    _ => {}
                }
            }
        }
        self.update_irq(dev);
    }

    fn qpu_fault(&mut self, fault: QpuFault, dev: &mut DeviceContext<'_>) {
        self.fault.get_or_insert(fault);
        dev.fail(fault.code());
    }

    fn dispatch(&mut self) {
        while let Some(&req) = self.queue.front() {
            let Some(q) = self.qpus.free_qpu(RESERVE_USER) else { break };
            self.queue.pop_front();
            self.qpus.start_user(q, req.pc, req.uniforms, req.length);
            self.stats.user_programs_started += 1;
        }
    }

    fn run(&mut self, dev: &mut DeviceContext<'_>) -> (u64, Activity) {
        if std::mem::take(&mut self.faults.dma_fault_next_fetch) {
            self.qpus.shared.fail_next_read = true;
        }
        let moved = match self.qpus.run_dma(dev, DMA_WORDS_PER_TICK) {
            Ok(n) => n,
            Err(f) => {
                self.qpu_fault(f, dev);
                return (0, Activity::Idle);
            }
        };
        self.stats.dma_words += u64::from(moved);
        self.dispatch();
        // A QPU cycle is one instruction slot: the tick's slots shared by the twelve QPUs.
        self.qpus.count_idle(u64::from(INSTRUCTIONS_PER_TICK) / QPUS as u64);
        let host_before = self.qpus.shared.host_interrupts;
        let (run, fault) = self.qpus.run(dev, INSTRUCTIONS_PER_TICK);
        self.stats.instructions += u64::from(run.instructions);
        self.completed = self.completed.wrapping_add(run.user_programs_ended as u8);
        self.stats.user_programs_completed += u64::from(run.user_programs_ended);
        let new = self.qpus.shared.host_interrupts & !host_before;
        if new != 0 && std::mem::take(&mut self.faults.missed_irq) {
            self.suppressed |= new;
            self.stats.interrupts_missed += 1;
        }
        self.update_irq(dev);
        let units = u64::from(moved) + u64::from(run.units);
        if let Some(f) = fault {
            self.qpu_fault(f, dev);
            return (units, Activity::Idle);
        }
        self.dispatch();
        let dma = self.qpus.qpus.iter().any(|q| q.vdw.is_some() || q.vdr.is_some());
        let activity = if run.all_stalled && !dma {
            // Every running program waits on another (a semaphore nobody will signal): only
            // the host can end that, by resetting the V3D.
            Activity::Waiting
        } else if self.qpus.user_running() || dma {
            Activity::Busy
        } else {
            Activity::Idle
        };
        (units, activity)
    }
}

impl V3d {
    /// One bounded step of the user-program side: VPM DMA, the SRQ and the QPUs.
    fn tick_user_programs(&mut self, dev: &mut DeviceContext<'_>) -> Activity {
        if self.faults.cp_stall {
            return Activity::Idle;
        }
        if let Some(n) = self.faults.slow {
            self.slow_ticks += 1;
            if self.slow_ticks < u32::from(n) {
                return if self.qpus.busy() { Activity::Busy } else { Activity::Idle };
            }
            self.slow_ticks = 0;
        }
        let (units, activity) = self.run(dev);
        self.stats.units += units;
        self.stats.max_tick_units = self.stats.max_tick_units.max(units);
        activity
    }
}

impl PlatformModel for V3d {
    fn window_bytes(&self) -> u64 {
        WINDOW_BYTES
    }

    fn read(&mut self, offset: u32, _dev: &mut DeviceContext<'_>) -> u32 {
        if self.faults.registers_all_ones {
            return u32::MAX;
        }
        self.read_register(offset)
    }

    fn write(&mut self, offset: u32, value: u32, dev: &mut DeviceContext<'_>) {
        if self.faults.registers_all_ones {
            return;
        }
        self.write_register(offset, value, dev);
    }

    fn tick(&mut self, dev: &mut DeviceContext<'_>) -> Activity {
        let programs = self.tick_user_programs(dev);
        // The control lists beside the user programs (the executor applies its own faults);
        // a fragment shader it starts runs on the same QPUs.
        let lists = self.cle.tick(dev, &mut self.qpus);
        self.update_irq(dev);
        match (programs, lists) {
            (Activity::Busy, _) | (_, Activity::Busy) => Activity::Busy,
            (Activity::Waiting, _) | (_, Activity::Waiting) => Activity::Waiting,
            _ => Activity::Idle,
        }
    }

    fn reset(&mut self) {
        *self = Self::with_faults(self.faults);
    }

    fn inject(&mut self, switches: u32) -> bool {
        self.faults = Faults::from_switches(switches);
        self.cle.set_faults(self.faults.cle());
        true
    }
}
