//! The control-list executor (CLE, §8 "System Operation"): two control-list threads (thread 0
//! binning, thread 1 rendering, §10 "Control List Executor Registers"), the binner that writes
//! tile lists (`binner.rs`) and the renderer that rasterises, shades on the QPUs and stores
//! tiles (`render.rs`), with the registers they own and the pipeline interrupts (§10 Tables
//! 49-61, 75-77).
//!
//! Records are decoded with the checked §9 tables (`baregpu_regs::vc4::packets`): ids, sizes,
//! which list may hold them and every field by name. The top-level model wires it:
//! [`Cle::mmio_read`] / [`Cle::mmio_write`] for the offsets it owns, [`Cle::tick`] with the
//! QPUs once per model tick, [`Cle::interrupt_pending`] onto its interrupt line,
//! [`Cle::reset`] on reset and [`Cle::set_faults`] from its fault switches.
//!
//! Work per tick is bounded ([`MAX_UNITS_PER_TICK`]): each thread parses at most
//! [`RECORDS_PER_TICK`] records (or compressed primitive codes), the binner does
//! [`BIN_UNITS_PER_TICK`] tile visits, the renderer scans
//! [`RASTER_QUADS_PER_TICK`] quads, runs [`QPU_INSTRUCTIONS_PER_TICK`] QPU
//! instructions and stores [`STORE_ROWS_PER_TICK`] rows; [`CleStats::max_tick_units`]
//! records the most one tick did.

mod binner;
mod compressed;
mod error;
mod raster;
mod render;
mod state;

pub use binner::{BIN_UNITS_PER_TICK, TILE_PIXELS, TSDA_BYTES_PER_TILE};
pub use error::{CleError, code};
pub use render::{
    QPU_INSTRUCTIONS_PER_TICK, RASTER_QUADS_PER_TICK, RENDER_UNITS_PER_TICK, STORE_ROWS_PER_TICK,
};

use baregpu_hal::register::Register;
use baregpu_regs::packet::{ListKind, Record};
use baregpu_regs::vc4::packets::{self, branch, branch_to_sub_list};
use baregpu_regs::vc4::v3d::{
    V3D_BFC, V3D_BPCA, V3D_BPCS, V3D_BPOA, V3D_BPOS, V3D_BXCF, V3D_CT0CA, V3D_CT0CS, V3D_CT0EA,
    V3D_CT0LC, V3D_CT0PC, V3D_CT0RA0, V3D_CT1CA, V3D_CT1CS, V3D_CT1EA, V3D_CT1LC, V3D_CT1PC,
    V3D_CT1RA0, V3D_INTCTL, V3D_INTDIS, V3D_INTENA, V3D_PCS, V3D_RFC,
};
use gpu_device_model::{Activity, DeviceContext, cp_error};

use crate::shading::FragmentShading;
use binner::{BinEvents, Binner};
use compressed::Code;
use render::{RenderEvents, Renderer};

/// Records (or compressed primitive codes) one thread parses per tick at most.
pub const RECORDS_PER_TICK: u64 = 8;
/// The most work units one tick runs: both threads' records, the binner's units and the
/// renderer's.
pub const MAX_UNITS_PER_TICK: u64 =
    2 * RECORDS_PER_TICK + BIN_UNITS_PER_TICK + RENDER_UNITS_PER_TICK;
/// Levels of sub-list nesting (§9 Table 38 id 17: "maximum of 2 levels of nesting").
pub const MAX_NESTING: usize = 2;
/// The counting semaphore's largest value (CTnCS.CTSEMA, 3 bits).
const SEMAPHORE_MAX: u8 = 7;

/// The executor's fault-injection switches (the top-level model maps its `Inject` bits here).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CleFaults {
    /// Stuck CLE (`cp-stall`): neither thread parses a record; registers still work.
    pub cp_stall: bool,
    /// One-shot (`dma-fault`): the next control-list fetch faults on the bus.
    pub dma_fault_next_fetch: bool,
    /// Slow CLE (`slow=N`): at most one record per thread every N ticks.
    pub slow: Option<u16>,
    /// OUTOMEM storm: the binner never gets memory, whatever the host gives.
    pub outomem_storm: bool,
}

/// Counters for tests and logs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CleStats {
    /// Records parsed, per thread.
    pub records: [u64; 2],
    /// Work units run (see [`MAX_UNITS_PER_TICK`]).
    pub units: u64,
    /// The most units one tick ran.
    pub max_tick_units: u64,
    /// Writes dropped: read-only registers, CTnCA while its thread runs.
    pub dropped_writes: u64,
    /// Fragment batches the QPUs finished.
    pub batches: u64,
    /// Times the binner ran out of memory.
    pub out_of_memory: u64,
}

/// Bits of CTnCS (§10 Table 49) and the interrupt registers (Tables 75-77).
mod bits {
    use super::*;
    pub const CTRSTA: u32 = V3D_CT0CS::CTRSTA.mask();
    pub const CTRUN: u32 = V3D_CT0CS::CTRUN.mask();
    pub const CTSUBS: u32 = V3D_CT0CS::CTSUBS.mask();
    pub const CTERR: u32 = V3D_CT0CS::CTERR.mask();
    pub const CTMODE: u32 = V3D_CT0CS::CTMODE.mask();
    pub const CTRTSD_SHIFT: u32 = V3D_CT0CS::CTRTSD.lsb;
    pub const CTSEMA_SHIFT: u32 = V3D_CT0CS::CTSEMA.lsb;
    pub const FRDONE: u32 = V3D_INTCTL::INT_FRDONE.mask();
    pub const FLDONE: u32 = V3D_INTCTL::INT_FLDONE.mask();
    pub const OUTOMEM: u32 = V3D_INTCTL::INT_OUTOMEM.mask();
    pub const SPILLUSE: u32 = V3D_INTCTL::INT_SPILLUSE.mask();
    pub const BMACTIVE: u32 = V3D_PCS::BMACTIVE.mask();
    pub const BMBUSY: u32 = V3D_PCS::BMBUSY.mask();
    pub const RMACTIVE: u32 = V3D_PCS::RMACTIVE.mask();
    pub const RMBUSY: u32 = V3D_PCS::RMBUSY.mask();
    pub const BMOOM: u32 = V3D_PCS::BMOOM.mask();
    /// CTnLC: writing 1 to bit 16 resets the major count, to bit 0 the sub-list count.
    pub const LC_MAJOR_RESET: u32 = 1 << V3D_CT0LC::CTLLCM.lsb;
    pub const LC_SUB_RESET: u32 = 1 << V3D_CT0LC::CTLSLCS.lsb;
    /// BFC / RFC: writing 1 clears the count.
    pub const COUNT_CLEAR: u32 = 1 << V3D_BFC::BMFCT.lsb;
}

/// One control-list thread's registers (§10 Tables 49-54).
#[derive(Debug, Clone, Default)]
struct Thread {
    ca: u32,
    ea: u32,
    stack: Vec<u32>,
    run: bool,
    /// CTSUBS: stopped at halt (not running), or stalled on the semaphore (running).
    subs: bool,
    err: bool,
    semaphore: u8,
    /// Increment Semaphore records parsed whose increment has not taken effect yet: §9 Table
    /// 38 gives it "after tile lists are flushed or last tile written", so the binning
    /// thread's waits for the binner's flush and the rendering thread's for its stores.
    pending_increments: u8,
    flushes: u16,
    returns: u16,
    /// Inside a compressed primitive list (id 48): the previous triangle's indices.
    compressed: Option<[u32; 3]>,
}

impl Thread {
    fn status(&self) -> u32 {
        (u32::from(self.semaphore) << bits::CTSEMA_SHIFT)
            | ((self.stack.len() as u32) << bits::CTRTSD_SHIFT)
            | if self.run { bits::CTRUN } else { 0 }
            | if self.subs { bits::CTSUBS } else { 0 }
            | if self.err { bits::CTERR } else { 0 }
    }

    fn start_if_pending(&mut self) {
        if !self.run && !self.subs && self.ca != self.ea {
            self.run = true;
            self.err = false;
        }
    }
}

/// What a record did to its thread.
enum Flow {
    /// Go on after the record.
    Next,
    /// Continue at this address.
    Jump(u32),
    /// Do not advance; try the record again on a later tick (semaphore wait, busy engine).
    Stall,
    /// Stop at halt after the record.
    Halt,
}

/// Which register the CLE owns at an offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reg {
    Cs(usize),
    Ea(usize),
    Ca(usize),
    Ra(usize),
    Lc(usize),
    Pc(usize),
    Pcs,
    Bfc,
    Rfc,
    Bpca,
    Bpcs,
    Bpoa,
    Bpos,
    Bxcf,
    IntCtl,
    IntEna,
    IntDis,
}

fn reg(offset: u32) -> Option<Reg> {
    let o = offset as usize;
    Some(match o {
        V3D_CT0CS::OFFSET => Reg::Cs(0),
        V3D_CT1CS::OFFSET => Reg::Cs(1),
        V3D_CT0EA::OFFSET => Reg::Ea(0),
        V3D_CT1EA::OFFSET => Reg::Ea(1),
        V3D_CT0CA::OFFSET => Reg::Ca(0),
        V3D_CT1CA::OFFSET => Reg::Ca(1),
        V3D_CT0RA0::OFFSET => Reg::Ra(0),
        V3D_CT1RA0::OFFSET => Reg::Ra(1),
        V3D_CT0LC::OFFSET => Reg::Lc(0),
        V3D_CT1LC::OFFSET => Reg::Lc(1),
        V3D_CT0PC::OFFSET => Reg::Pc(0),
        V3D_CT1PC::OFFSET => Reg::Pc(1),
        V3D_PCS::OFFSET => Reg::Pcs,
        V3D_BFC::OFFSET => Reg::Bfc,
        V3D_RFC::OFFSET => Reg::Rfc,
        V3D_BPCA::OFFSET => Reg::Bpca,
        V3D_BPCS::OFFSET => Reg::Bpcs,
        V3D_BPOA::OFFSET => Reg::Bpoa,
        V3D_BPOS::OFFSET => Reg::Bpos,
        V3D_BXCF::OFFSET => Reg::Bxcf,
        V3D_INTCTL::OFFSET => Reg::IntCtl,
        V3D_INTENA::OFFSET => Reg::IntEna,
        V3D_INTDIS::OFFSET => Reg::IntDis,
        _ => return None,
    })
}

/// The control-list executor, binner and renderer.
#[derive(Debug, Clone, Default)]
pub struct Cle {
    threads: [Thread; 2],
    binner: Binner,
    renderer: Renderer,
    bfc: u8,
    rfc: u8,
    bxcf: u32,
    intctl: u32,
    intena: u32,
    faults: CleFaults,
    stats: CleStats,
    last_error: Option<CleError>,
    slow_count: u16,
}

impl Cle {
    /// The power-on state.
    pub fn new() -> Self {
        Cle::default()
    }

    /// Back to the power-on state (fault switches are harness configuration and stay).
    pub fn reset(&mut self) {
        let faults = self.faults;
        *self = Cle { faults, ..Cle::default() };
        self.binner.starve = faults.outomem_storm;
    }

    /// Set the fault-injection switches.
    pub fn set_faults(&mut self, faults: CleFaults) {
        self.faults = faults;
        self.binner.starve = faults.outomem_storm;
    }

    /// The switches in force.
    pub fn faults(&self) -> CleFaults {
        self.faults
    }

    /// Counters.
    pub fn stats(&self) -> &CleStats {
        &self.stats
    }

    /// The error that stopped a thread, if any (until reset).
    pub fn last_error(&self) -> Option<&CleError> {
        self.last_error.as_ref()
    }

    /// V3D_INTCTL: the latched pipeline interrupts (§10 Table 75).
    pub fn interrupt_status(&self) -> u32 {
        self.intctl
    }

    /// The latched interrupts the host enabled (V3D_INTCTL & V3D_INTENA): the interrupt line
    /// is asserted while this is non-zero.
    pub fn interrupt_pending(&self) -> u32 {
        self.intctl & self.intena
    }

    /// Read a register the CLE owns; `None` for any other offset.
    pub fn mmio_read(&mut self, offset: u32) -> Option<u32> {
        Some(match reg(offset)? {
            Reg::Cs(t) => {
                let mode = if t == 0 && self.binner.prefixing() { bits::CTMODE } else { 0 };
                self.threads[t].status() | mode
            }
            Reg::Ea(t) => self.threads[t].ea,
            Reg::Ca(t) => self.threads[t].ca,
            Reg::Ra(t) => self.threads[t].stack.last().copied().unwrap_or(0),
            Reg::Lc(t) => {
                (u32::from(self.threads[t].flushes) << 16) | u32::from(self.threads[t].returns)
            }
            Reg::Pc(0) => self.binner.primitives_remaining(),
            Reg::Pc(_) => 0,
            Reg::Pcs => self.pcs(),
            Reg::Bfc => u32::from(self.bfc),
            Reg::Rfc => u32::from(self.rfc),
            Reg::Bpca => self.binner.pool.0,
            Reg::Bpcs => self.binner.pool.1,
            Reg::Bpoa => self.binner.overspill.0,
            Reg::Bpos => self.binner.overspill.1,
            Reg::Bxcf => self.bxcf,
            Reg::IntCtl => self.intctl,
            Reg::IntEna | Reg::IntDis => self.intena,
        })
    }

    fn pcs(&self) -> u32 {
        let binning = self.binner.busy() || self.threads[0].run;
        let rendering = self.renderer.busy() || self.threads[1].run;
        let oom = self.binner.out_of_memory;
        (if binning { bits::BMACTIVE } else { 0 })
            | (if binning && !oom { bits::BMBUSY } else { 0 })
            | (if rendering { bits::RMACTIVE | bits::RMBUSY } else { 0 })
            | (if oom { bits::BMOOM } else { 0 })
    }

    /// Write a register the CLE owns; `false` for any other offset.
    pub fn mmio_write(&mut self, offset: u32, value: u32) -> bool {
        let Some(r) = reg(offset) else { return false };
        match r {
            Reg::Cs(t) => self.write_cs(t, value & V3D_CT0CS::WRITE_MASK),
            Reg::Ea(t) => {
                let th = &mut self.threads[t];
                th.ea = value;
                // "Writing to this register causes the thread to start running if stopped,
                // but only if CTSUBS is 'Stopped at end'" (Table 50).
                th.start_if_pending();
            }
            Reg::Ca(t) => {
                let th = &mut self.threads[t];
                if th.run {
                    // "This register can only be written when CTRUN is Stopped" (Table 51).
                    self.stats.dropped_writes += 1;
                } else {
                    th.ca = value;
                    th.subs = false;
                    th.stack.clear();
                    th.compressed = None;
                }
            }
            Reg::Lc(t) => {
                if value & bits::LC_MAJOR_RESET != 0 {
                    self.threads[t].flushes = 0;
                }
                if value & bits::LC_SUB_RESET != 0 {
                    self.threads[t].returns = 0;
                }
            }
            Reg::Bfc => {
                if value & bits::COUNT_CLEAR != 0 {
                    self.bfc = 0;
                }
            }
            Reg::Rfc => {
                if value & bits::COUNT_CLEAR != 0 {
                    self.rfc = 0;
                }
            }
            Reg::Bpoa => self.binner.overspill.0 = value,
            Reg::Bpos => {
                self.binner.give_overspill(value);
                self.update_oom();
            }
            Reg::Bxcf => self.bxcf = value & V3D_BXCF::WRITE_MASK,
            Reg::IntCtl => {
                self.intctl &= !(value & V3D_INTCTL::WRITE_MASK);
                // INT_OUTOMEM is level triggered: set while the binner needs memory.
                self.update_oom();
            }
            Reg::IntEna => self.intena |= value & V3D_INTENA::WRITE_MASK,
            Reg::IntDis => self.intena &= !(value & V3D_INTDIS::WRITE_MASK),
            Reg::Ra(_) | Reg::Pc(_) | Reg::Pcs | Reg::Bpca | Reg::Bpcs => {
                self.stats.dropped_writes += 1;
            }
        }
        true
    }

    fn write_cs(&mut self, t: usize, value: u32) {
        if value & bits::CTRSTA != 0 {
            // "Writing 1 stops the control thread and resets all bits in this register".
            self.threads[t] = Thread {
                ca: self.threads[t].ca,
                ea: self.threads[t].ea,
                flushes: self.threads[t].flushes,
                returns: self.threads[t].returns,
                ..Thread::default()
            };
            if t == 0 {
                self.binner.abandon();
                self.update_oom();
            } else {
                self.renderer.abandon();
            }
            return;
        }
        let th = &mut self.threads[t];
        if value & bits::CTRUN != 0 {
            // "Writing 1 stops the thread and sets the state to 'Stopped at halt'".
            th.run = false;
            th.subs = true;
        } else if value & bits::CTSUBS != 0 && !th.run && th.subs {
            // "Writing 1 clears any 'Stopped at halt' condition, and causes the thread to
            // start running if CTLCA != CTLEA".
            th.subs = false;
            th.start_if_pending();
        }
    }

    fn update_oom(&mut self) {
        if self.binner.out_of_memory {
            self.intctl |= bits::OUTOMEM;
        }
    }

    /// One bounded step of both threads and the engines behind them.
    pub fn tick(
        &mut self,
        dev: &mut DeviceContext<'_>,
        qpus: &mut dyn FragmentShading,
    ) -> Activity {
        let mut units = 0;
        let result = self.run(dev, qpus, &mut units);
        self.stats.units += units;
        self.stats.max_tick_units = self.stats.max_tick_units.max(units);
        if let Err((t, e)) = result {
            let th = &mut self.threads[t];
            th.run = false;
            th.subs = true;
            th.err = true;
            dev.fail(e.code);
            self.last_error = Some(e);
            return Activity::Idle;
        }
        self.activity()
    }

    fn activity(&self) -> Activity {
        if self.faults.cp_stall {
            return Activity::Idle;
        }
        let engine = [self.binner.busy() && !self.binner.out_of_memory, self.renderer.busy()];
        let thread = |t: usize| {
            let th = &self.threads[t];
            let blocked = if t == 0 { self.binner.busy() } else { self.renderer.busy() };
            th.run && !th.subs && !blocked
        };
        if engine[0] || engine[1] || thread(0) || thread(1) {
            Activity::Busy
        } else {
            Activity::Idle
        }
    }

    fn run(
        &mut self,
        dev: &mut DeviceContext<'_>,
        qpus: &mut dyn FragmentShading,
        units: &mut u64,
    ) -> Result<(), (usize, CleError)> {
        let mut budget = RECORDS_PER_TICK;
        if let Some(n) = self.faults.slow {
            self.slow_count += 1;
            if self.slow_count < n {
                budget = 0;
            } else {
                self.slow_count = 0;
                budget = 1;
            }
        }
        if self.faults.cp_stall {
            budget = 0;
        }
        for t in 0..2 {
            *units += self.run_thread(dev, t, budget).map_err(|e| (t, e))?;
        }
        let mut bin = BinEvents::default();
        let was_oom = self.binner.out_of_memory;
        *units += self.binner.step(dev, &mut bin).map_err(|e| (0, e))?;
        if self.binner.out_of_memory && !was_oom {
            self.stats.out_of_memory += 1;
        }
        self.update_oom();
        if bin.spill_used {
            self.intctl |= bits::SPILLUSE;
        }
        if bin.flushed {
            // "incremented in binning mode once the PTB has flushed all tile lists to memory"
            self.bfc = self.bfc.wrapping_add(1);
            self.intctl |= bits::FLDONE;
        }
        let mut render = RenderEvents::default();
        let before = self.renderer.batches;
        *units += self.renderer.step(dev, qpus, &mut render).map_err(|e| (1, e))?;
        self.stats.batches += self.renderer.batches - before;
        if render.frame_done {
            self.rfc = self.rfc.wrapping_add(1);
            self.intctl |= bits::FRDONE;
        }
        self.release_increments();
        Ok(())
    }

    /// Let pending semaphore increments count: the binning thread's once the binner has
    /// flushed its tile lists (nothing binned since the last Flush), the rendering thread's
    /// once every tile it asked for is stored.
    fn release_increments(&mut self) {
        for t in 0..2 {
            let done = if t == 0 { self.binner.flushed() } else { !self.renderer.busy() };
            let pending = std::mem::take(&mut self.threads[t].pending_increments);
            if done {
                self.threads[1 - t].semaphore += pending;
            } else {
                self.threads[t].pending_increments = pending;
            }
        }
    }

    fn kind(t: usize) -> ListKind {
        if t == 0 { ListKind::Binning } else { ListKind::Rendering }
    }

    fn engine_busy(&self, t: usize) -> bool {
        if t == 0 { self.binner.busy() } else { self.renderer.busy() }
    }

    /// Parse up to `budget` records of thread `t`; returns the units used.
    fn run_thread(
        &mut self,
        dev: &mut DeviceContext<'_>,
        t: usize,
        budget: u64,
    ) -> Result<u64, CleError> {
        let mut done = 0;
        while done < budget {
            let th = &self.threads[t];
            if !th.run || self.engine_busy(t) {
                break;
            }
            if th.stack.is_empty() && th.ca == th.ea {
                // "The CLE advances V3DCTnCA until it exactly matches V3DCTnEA" (§8).
                let th = &mut self.threads[t];
                th.run = false;
                th.subs = false;
                break;
            }
            done += 1;
            if self.faults.dma_fault_next_fetch {
                self.faults.dma_fault_next_fetch = false;
                return Err(CleError::new(
                    cp_error::DMA_FETCH_FAULT,
                    format!("injected DMA fault fetching the control list at {:#x}", th.ca),
                ));
            }
            let stalled = if self.threads[t].compressed.is_some() {
                self.compressed_code(dev, t)?
            } else {
                self.record(dev, t)?
            };
            if stalled {
                break;
            }
        }
        self.stats.records[t] += done;
        Ok(done)
    }

    /// Bytes available before the end address (only the top-level list has one).
    fn room(&self, t: usize) -> Option<u64> {
        let th = &self.threads[t];
        (th.stack.is_empty() && th.ca < th.ea).then(|| u64::from(th.ea - th.ca))
    }

    /// Parse the record at thread `t`'s CA; `true` when the thread stalls.
    fn record(&mut self, dev: &mut DeviceContext<'_>, t: usize) -> Result<bool, CleError> {
        let ca = self.threads[t].ca;
        let mut id = [0u8];
        error::read(dev, "control list", ca.into(), &mut id)?;
        let Some(record) = packets::ALL.iter().find(|r| r.opcode == id[0]) else {
            return Err(Self::unknown(id[0], ca));
        };
        if !record.lists.allows(Self::kind(t)) {
            return Err(CleError::invalid(format!(
                "{} at {ca:#x} is not allowed in a {:?} list (§9 Table 38)",
                record.name,
                Self::kind(t)
            )));
        }
        if let Some(room) = self.room(t)
            && (record.bytes as u64) > room
        {
            return Err(CleError::invalid(format!(
                "{} at {ca:#x} ({} bytes) runs past the end address {:#x}",
                record.name, record.bytes, self.threads[t].ea
            )));
        }
        let mut bytes = vec![0u8; record.bytes];
        error::read(dev, "control list", ca.into(), &mut bytes)?;
        let flow = self.execute(dev, t, record, &bytes, ca)?;
        let th = &mut self.threads[t];
        match flow {
            Flow::Next => th.ca = ca.wrapping_add(record.bytes as u32),
            Flow::Jump(to) => th.ca = to,
            Flow::Stall => return Ok(true),
            Flow::Halt => {
                th.ca = ca.wrapping_add(record.bytes as u32);
                th.run = false;
                th.subs = true;
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn unknown(id: u8, at: u32) -> CleError {
        CleError::new(
            cp_error::UNKNOWN_OPCODE,
            format!("unknown control record id {id} at {at:#x}"),
        )
    }

    fn execute(
        &mut self,
        dev: &mut DeviceContext<'_>,
        t: usize,
        record: &Record<baregpu_regs::vc4::Family>,
        bytes: &[u8],
        ca: u32,
    ) -> Result<Flow, CleError> {
        const HALT: u8 = packets::HALT.opcode;
        const NOP: u8 = packets::NOP.opcode;
        const FLUSH: u8 = packets::FLUSH.opcode;
        const FLUSH_ALL: u8 = packets::FLUSH_ALL_STATE.opcode;
        const START: u8 = packets::START_TILE_BINNING.opcode;
        const INCREMENT: u8 = packets::INCREMENT_SEMAPHORE.opcode;
        const WAIT: u8 = packets::WAIT_ON_SEMAPHORE.opcode;
        const BRANCH: u8 = packets::BRANCH.opcode;
        const CALL: u8 = packets::BRANCH_TO_SUB_LIST.opcode;
        const RETURN: u8 = packets::RETURN_FROM_SUB_LIST.opcode;
        const STORE: u8 = packets::STORE_MULTI_SAMPLE_RESOLVED_TILE_COLOR_BUFFER.opcode;
        const STORE_EOF: u8 =
            packets::STORE_MULTI_SAMPLE_RESOLVED_TILE_COLOR_BUFFER_AND_SIGNAL_END_OF_FRAME.opcode;
        const STORE_GENERAL: u8 = packets::STORE_TILE_BUFFER_GENERAL.opcode;
        const INDEXED: u8 = packets::INDEXED_PRIMITIVE_LIST.opcode;
        const ARRAY: u8 = packets::VERTEX_ARRAY_PRIMITIVES.opcode;
        const COMPRESSED: u8 = packets::COMPRESSED_PRIMITIVE_LIST.opcode;
        const BIN_CONFIG: u8 = packets::TILE_BINNING_MODE_CONFIGURATION.opcode;
        const RENDER_CONFIG: u8 = packets::TILE_RENDERING_MODE_CONFIGURATION.opcode;
        const CLEAR: u8 = packets::CLEAR_COLORS.opcode;
        const COORDS: u8 = packets::TILE_COORDINATES.opcode;
        let binning = t == 0;
        match bytes[0] {
            HALT => return Ok(Flow::Halt),
            NOP => {}
            FLUSH | FLUSH_ALL => {
                self.binner.flush(bytes[0] == FLUSH_ALL)?;
                self.threads[t].flushes = self.threads[t].flushes.wrapping_add(1);
            }
            START => self.binner.start()?,
            INCREMENT => {
                // The other thread's semaphore: the rendering thread waits for the frame the
                // binning thread flushed, and the reverse (§8). It counts once the work before
                // it is out (`release_increments`): Linux ends its binning lists with Increment
                // Semaphore then Flush, so the increment must not let the renderer into tile
                // lists the Flush has not closed yet.
                let pending = self.threads[t].pending_increments;
                let other = &self.threads[1 - t];
                if other.semaphore + pending >= SEMAPHORE_MAX {
                    return Err(CleError::new(
                        code::SEMAPHORE_OVERFLOW,
                        format!(
                            "Increment Semaphore at {ca:#x}: thread {}'s semaphore is at 7",
                            1 - t
                        ),
                    ));
                }
                self.threads[t].pending_increments += 1;
            }
            WAIT => {
                let th = &mut self.threads[t];
                if th.semaphore == 0 {
                    // Running, sub-mode 1: "Stalled, waiting for other thread".
                    th.subs = true;
                    return Ok(Flow::Stall);
                }
                th.semaphore -= 1;
                th.subs = false;
            }
            BRANCH => {
                return Ok(Flow::Jump(branch::ABSOLUTE_BRANCH_ADDRESS.address(bytes).0 as u32));
            }
            CALL => {
                let th = &mut self.threads[t];
                if th.stack.len() == MAX_NESTING {
                    return Err(CleError::new(
                        cp_error::IB_NESTING,
                        format!(
                            "Branch to Sub-list at {ca:#x} nests deeper than {MAX_NESTING} levels (§9 Table 38)"
                        ),
                    ));
                }
                th.stack.push(ca.wrapping_add(record.bytes as u32));
                return Ok(Flow::Jump(
                    branch_to_sub_list::ABSOLUTE_BRANCH_ADDRESS.address(bytes).0 as u32,
                ));
            }
            RETURN => {
                let th = &mut self.threads[t];
                th.returns = th.returns.wrapping_add(1);
                // "ignored if nothing on the return stack".
                if let Some(to) = th.stack.pop() {
                    return Ok(Flow::Jump(to));
                }
            }
            BIN_CONFIG => self.binner.configure(bytes)?,
            RENDER_CONFIG => self.renderer.configure(bytes)?,
            CLEAR => self.renderer.clear_colours(bytes),
            COORDS => self.renderer.tile_coordinates(bytes)?,
            STORE | STORE_EOF | STORE_GENERAL => self.renderer.store(bytes)?,
            INDEXED | ARRAY if binning => self.binner.primitives(bytes)?,
            INDEXED | ARRAY => {
                return Err(CleError::unsupported(
                    "primitive lists in a rendering list (the model renders binned tile lists)",
                ));
            }
            COMPRESSED => {
                self.renderer.state.nv()?;
                self.threads[t].compressed = Some([0; 3]);
            }
            id if state::PrimitiveState::gl_mode(id) => {
                return Err(CleError::unsupported(
                    "GL Shader State: GL mode needs vertex and coordinate shaders, not emulated (use NV mode, id 65)",
                ));
            }
            _ => {
                let kind = if binning {
                    self.binner.state_record(dev, bytes)?
                } else {
                    self.renderer.state.apply(dev, bytes)?
                };
                if kind == state::StateRecord::No {
                    return Err(CleError::unsupported(format!("{} (§9 Table 38)", record.name)));
                }
            }
        }
        Ok(Flow::Next)
    }

    /// Decode one code of the compressed primitive list thread `t` is in; `true` when the
    /// thread stalls.
    fn compressed_code(&mut self, dev: &mut DeviceContext<'_>, t: usize) -> Result<bool, CleError> {
        let ca = self.threads[t].ca;
        let prev = self.threads[t].compressed.unwrap_or_default();
        let mut b = [0u8; compressed::MAX_CODE_BYTES];
        error::read(dev, "compressed primitive list", ca.into(), &mut b[..1])?;
        let mut code = compressed::decode(&b[..1], prev);
        if let Code::Short(need) = code {
            if let Some(room) = self.room(t)
                && need as u64 > room
            {
                return Err(CleError::invalid(format!(
                    "compressed primitive code at {ca:#x} runs past the end address"
                )));
            }
            error::read(dev, "compressed primitive list", ca.into(), &mut b[..need])?;
            code = compressed::decode(&b[..need], prev);
        }
        let th = &mut self.threads[t];
        match code {
            Code::Escape => {
                th.compressed = None;
                th.ca = ca.wrapping_add(1);
            }
            Code::Triangle(indices, len) => {
                th.compressed = Some(indices);
                th.ca = ca.wrapping_add(len as u32);
                self.renderer.triangle(dev, indices)?;
            }
            Code::Branch(_) => {
                return Err(CleError::unsupported(
                    "relative branch in a compressed primitive list (Table 39 does not say what it is relative to)",
                ));
            }
            Code::Reserved(v) => {
                return Err(CleError::invalid(format!(
                    "reserved compressed primitive code {v:#x} at {ca:#x} (Table 39)"
                )));
            }
            Code::Short(_) => return Err(CleError::invalid("truncated compressed primitive code")),
        }
        Ok(false)
    }
}
