//! The device: PCI identity, BAR0 dispatch (PMC, PBUS, PTIMER, the PMEM window, the falcon
//! windows), the VRAM apertures, engine ticks, interrupts and faults.

use crate::falcon::{Engine, Falcon, INSNS_PER_TICK};
use crate::faults::Faults;
use crate::pfifo::{Env, Pfifo};
use crate::vram::Vram;
use baregpu_hal::register::{Register, RegisterSpec};
use baregpu_regs::nvidia::{Chipset, REGISTERS, pbus, pmc, ptimer};
use gpu_device_model::regfile::RegisterFile;
use gpu_device_model::{Activity, BarSpec, DeviceContext, GpuModel, PciIdentity, RegisterBar};

/// nVidia's PCI vendor ID.
pub const VENDOR_ID: u16 = 0x10de;
/// GeForce GT 240, a GT215 (nvidia-hardware-envytools §2.2.3: GT215 0x0ca0-0x0cbf).
pub const DEVICE_ID: u16 = 0x0ca3;
/// The GPU id `PMC.BOOT_0` reports in bits 28:20 (§2.2.3: GT215 is 0xa3).
pub const CHIPSET_ID: u32 = 0xa3;
/// VGA-compatible display controller.
const CLASS: u32 = 0x03_0000;

/// BAR0: "a 16MB area of memory sparsely populated with areas representing individual
/// engines" (§2.4.1), 32-bit non-prefetchable.
pub const BAR0: RegisterBar = RegisterBar::new(0, BAR0_SIZE);
/// Bytes of BAR0.
pub const BAR0_SIZE: u64 = 16 << 20;
/// BAR1 slot: the VRAM aperture (§2.4.1), 64-bit prefetchable on native PCIE cards, mapping
/// VRAM directly (the model has no VM: "G80+ cards with BAR1 VM disabled").
pub const BAR1: u8 = 1;
/// BAR3 slot: the RAMIN aperture (§2.4.1: "It works like BAR1"), the 64-bit BAR after BAR1's
/// pair; prefetchable ("prefetchable memory on MCP77+", GT215 comes after MCP77).
pub const BAR3: u8 = 3;
/// Bytes of BAR3 (§2.4.1: "The size is at least 16MB").
pub const BAR3_SIZE: u64 = 16 << 20;
/// Bytes of VRAM, all of it behind BAR1 (§2.4.1: G80+ BAR1 is 64MB-64GB).
pub const VRAM_SIZE: usize = 64 << 20;
/// BAR0 offset of the PMEM window onto VRAM (envytools rnndb nv_mmio.xml: 0x700000-0x7fffff).
pub const PMEM_WINDOW_BASE: u32 = 0x70_0000;
/// Bytes of the PMEM window.
pub const PMEM_WINDOW_SIZE: u32 = 0x10_0000;
/// Nanoseconds of PTIMER time per engine tick. The framework gives a model ticks, not time:
/// one tick stands for one microsecond, so a driver polling for a millisecond sees ~1000 ticks
/// of engine progress.
pub const TIMER_NS_PER_TICK: u64 = 1000;

/// Consecutive busy ticks after which the device reports one `Waiting` tick. Its engines may
/// legitimately run forever (a firmware's polling main loop, a pushbuffer jumping back to
/// itself): every tick is bounded work, but an endless `Busy` streak is the framework's sign
/// of a hung model. Yielding once every this many ticks ends the streak, and bounds what one
/// request under run-to-idle pacing runs to this many ticks.
pub const YIELD_EVERY: u32 = 256;

/// Bytes of BAR0 the register file covers: PMC, PBUS and PTIMER; higher offsets are the falcon
/// windows, the PMEM window, or holes.
const REGFILE_BYTES: u32 = 0x1_0000;
/// Size of one falcon's host window (§2.10.10: "a 0x1000-byte window in BAR0").
const FALCON_WINDOW: u32 = 0x1000;

const BOOT_0: u32 = pmc::BOOT_0::OFFSET as u32;
const PMC_INTR: u32 = pmc::INTR::OFFSET as u32;
const PMC_ENABLE: u32 = pmc::ENABLE::OFFSET as u32;
const PMC_INTR_MASK: u32 = pmc::INTR_MASK_GT215_ONWARD::OFFSET as u32;
const PMEM_WINDOW: u32 = pbus::PMEM_WINDOW_G80_ONWARD::OFFSET as u32;
const TIME_LOW: u32 = ptimer::TIME_LOW::OFFSET as u32;
const TIME_HIGH: u32 = ptimer::TIME_HIGH::OFFSET as u32;

/// The single interrupt line the model drives (PCI INTA, §2.4.1 "INTA: the card interrupt").
const IRQ_LINE: u32 = 1;

/// Counters for white-box tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Register writes dropped: holes, read-only registers, engines held in reset by
    /// `PMC.ENABLE`, PMEM window accesses outside VRAM.
    pub writes_dropped: u64,
    /// Falcon instructions executed (both engines).
    pub falcon_insns: u64,
    /// Most falcon instructions one tick executed, over both engines (bounded by
    /// `2 * INSNS_PER_TICK`).
    pub max_tick_insns: u32,
    /// Engine ticks.
    pub ticks: u64,
}

/// The emulated GT215.
pub struct Gt215 {
    regs: RegisterFile<Chipset>,
    vram: Vram,
    pcopy: Falcon,
    pdaemon: Falcon,
    pfifo: Pfifo,
    /// PTIMER time in nanoseconds.
    time: u64,
    faults: Faults,
    slow_ticks: u32,
    /// Consecutive `Busy` ticks (see [`YIELD_EVERY`]).
    busy_streak: u32,
    stats: Stats,
}

fn on_gt215(spec: &RegisterSpec<Chipset>) -> bool {
    spec.chipsets.contains(Chipset::GT215) && matches!(spec.block, "PMC" | "PBUS" | "PTIMER")
}

impl Default for Gt215 {
    fn default() -> Self {
        Self::new()
    }
}

impl Gt215 {
    /// A GT215 after power-on: every engine enable off, VRAM zero, falcons stopped.
    pub fn new() -> Self {
        Self::with_faults(Faults::default())
    }

    /// A GT215 with `faults` injected from the start (model-server's `--fault`).
    pub fn with_faults(faults: Faults) -> Self {
        let mut regs = RegisterFile::new(REGISTERS, REGFILE_BYTES, on_gt215, &[]);
        regs.set(BOOT_0, pmc::BOOT_0::CHIPSET.set(0, CHIPSET_ID));
        Gt215 {
            regs,
            vram: Vram::new(VRAM_SIZE),
            pcopy: Falcon::new(Engine::Pcopy),
            pdaemon: Falcon::new(Engine::Pdaemon),
            pfifo: Pfifo::new(),
            time: 0,
            faults,
            slow_ticks: 0,
            busy_streak: 0,
            stats: Stats::default(),
        }
    }

    /// The injected faults.
    pub fn faults(&self) -> Faults {
        self.faults
    }

    /// Replace the injected faults.
    pub fn set_faults(&mut self, faults: Faults) {
        self.faults = faults;
    }

    /// Counters.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// The VRAM dword at `address` (white-box inspection); `None` outside VRAM or unaligned.
    pub fn vram_u32(&self, address: u64) -> Option<u32> {
        self.vram.read_u32(address)
    }

    /// The falcon of `engine` (white-box inspection).
    pub fn falcon(&self, engine: Engine) -> &Falcon {
        match engine {
            Engine::Pcopy => &self.pcopy,
            Engine::Pdaemon => &self.pdaemon,
        }
    }

    /// PTIMER time in nanoseconds.
    pub fn time_ns(&self) -> u64 {
        self.time
    }

    /// PFIFO (white-box inspection).
    pub fn pfifo(&self) -> &Pfifo {
        &self.pfifo
    }

    fn pfifo_enabled(&self) -> bool {
        pmc::ENABLE::PFIFO.get(self.regs.stored(PMC_ENABLE)) != 0
    }

    fn enabled(&self, engine: Engine) -> bool {
        let enable = self.regs.stored(PMC_ENABLE);
        match engine {
            // GT215 bit 13 is PCOPY's (envytools rnndb bus/pmc.xml).
            Engine::Pcopy => pmc::ENABLE::PCOPY_PDAEMON.get(enable) != 0,
            // GT215:GF100 enable PDAEMON through 0x22210, not PMC (§2.5.2 "falcon parameters");
            // the model does not gate it.
            Engine::Pdaemon => true,
        }
    }

    fn falcon_at(&mut self, offset: u32) -> Option<(Engine, u32)> {
        [Engine::Pcopy, Engine::Pdaemon].into_iter().find_map(|e| {
            let base = e.base();
            (base..base + FALCON_WINDOW).contains(&offset).then(|| (e, offset - base))
        })
    }

    /// The falcon of `engine`, mutably (white-box: a test feeds its method FIFO directly).
    pub fn falcon_mut(&mut self, engine: Engine) -> &mut Falcon {
        match engine {
            Engine::Pcopy => &mut self.pcopy,
            Engine::Pdaemon => &mut self.pdaemon,
        }
    }

    /// The VRAM address a PMEM window access at BAR0 `offset` reaches (only VRAM is
    /// modelled behind the window: another target reaches nothing).
    fn pmem_address(&self, offset: u32) -> Option<u64> {
        let window = self.regs.stored(PMEM_WINDOW);
        if pbus::PMEM_WINDOW_G80_ONWARD::TARGET.get(window) != 0 {
            return None;
        }
        let base = u64::from(pbus::PMEM_WINDOW_G80_ONWARD::BASE.get(window)) << 16;
        Some(base + u64::from(offset - PMEM_WINDOW_BASE))
    }

    /// `PMC.INTR`: one bit per engine line (envytools rnndb bus/pmc.xml).
    fn pmc_intr(&self) -> u32 {
        let mut intr = 0;
        if self.pfifo_enabled() && self.pfifo.pmc_line() {
            intr = pmc::INTR::PFIFO.set(intr, 1);
        }
        if self.enabled(Engine::Pcopy) && self.pcopy.pmc_line() {
            intr = pmc::INTR::PCOPY_GT215.set(intr, 1);
        }
        if self.pdaemon.pmc_line() {
            intr = pmc::INTR::PDAEMON_GT215.set(intr, 1);
        }
        intr
    }

    /// Drive the PCI interrupt: any `PMC.INTR` bit that `INTR_MASK` lets through.
    fn update_irq(&self, dev: &mut DeviceContext<'_>) {
        let pending = self.pmc_intr() & self.regs.stored(PMC_INTR_MASK) != 0;
        dev.set_irq(IRQ_LINE, pending);
    }

    fn read_register(&mut self, offset: u32) -> u32 {
        if let Some((engine, off)) = self.falcon_at(offset) {
            if !self.enabled(engine) {
                return 0;
            }
            let time = self.time;
            return self.falcon_mut(engine).host_read(off, time);
        }
        if (PMEM_WINDOW_BASE..PMEM_WINDOW_BASE + PMEM_WINDOW_SIZE).contains(&offset) {
            return self.pmem_address(offset).and_then(|a| self.vram.read_u32(a)).unwrap_or(0);
        }
        if Pfifo::owns(offset) {
            return if self.pfifo_enabled() { self.pfifo.read(offset, &self.vram) } else { 0 };
        }
        match offset {
            PMC_INTR => self.pmc_intr(),
            TIME_LOW => self.time as u32,
            TIME_HIGH => (self.time >> 32) as u32,
            _ => self.regs.read(offset),
        }
    }

    fn write_register(&mut self, offset: u32, value: u32, dev: &mut DeviceContext<'_>) {
        if let Some((engine, off)) = self.falcon_at(offset) {
            if !self.enabled(engine) {
                self.stats.writes_dropped += 1;
                return;
            }
            let accepted = self.falcon_mut(engine).host_write(off, value);
            if !accepted {
                self.stats.writes_dropped += 1;
            }
            self.update_irq(dev);
            return;
        }
        if (PMEM_WINDOW_BASE..PMEM_WINDOW_BASE + PMEM_WINDOW_SIZE).contains(&offset) {
            if !self.pmem_address(offset).is_some_and(|a| self.vram.write_u32(a, value)) {
                self.stats.writes_dropped += 1;
            }
            return;
        }
        if Pfifo::owns(offset) {
            if !self.pfifo_enabled() || !self.pfifo.write(offset, value, &mut self.vram) {
                self.stats.writes_dropped += 1;
            }
            self.update_irq(dev);
            return;
        }
        if !self.regs.accepts(offset) {
            self.stats.writes_dropped += 1;
            return;
        }
        match offset {
            TIME_LOW => self.time = (self.time & !0xFFFF_FFFF) | u64::from(value),
            TIME_HIGH => self.time = (self.time & 0xFFFF_FFFF) | u64::from(value) << 32,
            PMC_ENABLE => {
                self.regs.write(offset, value);
                // A cleared enable bit holds the engine in reset (§2.4.1 "Big Red Switches"):
                // it loses its state.
                if !self.enabled(Engine::Pcopy) {
                    self.pcopy.reset();
                }
                if !self.pfifo_enabled() {
                    self.pfifo = Pfifo::new();
                }
            }
            _ => {
                self.regs.write(offset, value);
            }
        }
        self.update_irq(dev);
    }

    fn vram_aperture(&mut self, offset: u32, write: Option<u32>) -> u32 {
        match write {
            Some(v) => {
                self.vram.write_u32(u64::from(offset), v);
                0
            }
            None => self.vram.read_u32(u64::from(offset)).unwrap_or(0),
        }
    }

    fn busy(&self) -> bool {
        self.pcopy.busy()
            || self.pdaemon.busy()
            || (self.pfifo_enabled() && !self.faults.cp_stall && self.pfifo.busy(&self.vram))
    }
}

impl GpuModel for Gt215 {
    fn pci_identity(&self) -> PciIdentity {
        BAR0.present(PciIdentity::new(VENDOR_ID, DEVICE_ID, CLASS))
            .with_bar(usize::from(BAR1), BarSpec::mem64_prefetchable(VRAM_SIZE as u64))
            .with_bar(usize::from(BAR3), BarSpec::mem64_prefetchable(BAR3_SIZE))
    }

    fn mmio_read(&mut self, bar: u8, offset: u32, _dev: &mut DeviceContext<'_>) -> u32 {
        if self.faults.registers_all_ones {
            return u32::MAX;
        }
        match bar {
            BAR1 | BAR3 => self.vram_aperture(offset, None),
            _ => BAR0.read(bar, false, || self.read_register(offset)),
        }
    }

    fn mmio_write(&mut self, bar: u8, offset: u32, value: u32, dev: &mut DeviceContext<'_>) {
        if self.faults.registers_all_ones {
            return;
        }
        match bar {
            BAR1 | BAR3 => {
                self.vram_aperture(offset, Some(value));
            }
            _ => BAR0.write(bar, false, || self.write_register(offset, value, dev)),
        }
    }

    fn tick(&mut self, dev: &mut DeviceContext<'_>) -> Activity {
        self.stats.ticks += 1;
        self.time = self.time.wrapping_add(TIMER_NS_PER_TICK);
        if !self.busy() {
            self.update_irq(dev);
            return Activity::Idle;
        }
        if let Some(n) = self.faults.slow {
            self.slow_ticks += 1;
            if self.slow_ticks < u32::from(n) {
                return Activity::Waiting;
            }
            self.slow_ticks = 0;
        }
        let time = self.time;
        let mut insns = 0;
        let mut activity = Activity::Idle;
        // PFIFO first: methods it delivers reach PCOPY's falcon in the same tick.
        if self.pfifo_enabled() && !self.faults.cp_stall {
            let pcopy_on = self.enabled(Engine::Pcopy);
            let mut env = Env {
                vram: &mut self.vram,
                pcopy: pcopy_on.then_some(&mut self.pcopy),
                time,
                dev,
                dma_fault: &mut self.faults.dma_fault_next_fetch,
            };
            activity = self.pfifo.step(&mut env);
        }
        for engine in [Engine::Pcopy, Engine::Pdaemon] {
            if !self.enabled(engine) {
                continue;
            }
            let mut dma_fault = self.faults.dma_fault_next_fetch;
            let step = match engine {
                Engine::Pcopy => self.pcopy.step(dev, time, &mut dma_fault),
                Engine::Pdaemon => self.pdaemon.step(dev, time, &mut dma_fault),
            };
            self.faults.dma_fault_next_fetch = dma_fault;
            insns += step.insns;
            activity = merge(activity, step.activity);
        }
        if activity == Activity::Busy {
            self.busy_streak += 1;
            if self.busy_streak >= YIELD_EVERY {
                self.busy_streak = 0;
                activity = Activity::Waiting;
            }
        } else {
            self.busy_streak = 0;
        }
        debug_assert!(insns <= 2 * INSNS_PER_TICK);
        self.stats.falcon_insns += u64::from(insns);
        self.stats.max_tick_insns = self.stats.max_tick_insns.max(insns);
        self.update_irq(dev);
        activity
    }

    fn reset(&mut self) {
        *self = Self::with_faults(self.faults);
    }

    fn inject(&mut self, switches: u32) -> bool {
        self.faults = Faults::from_switches(switches);
        true
    }
}

/// The activity of two engines ticking side by side: busy wins, then waiting.
fn merge(a: Activity, b: Activity) -> Activity {
    match (a, b) {
        (Activity::Busy, _) | (_, Activity::Busy) => Activity::Busy,
        (Activity::Waiting, _) | (_, Activity::Waiting) => Activity::Waiting,
        _ => Activity::Idle,
    }
}
