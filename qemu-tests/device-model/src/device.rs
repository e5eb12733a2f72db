//! [`Device`]: a model plus everything the framework emulates around it, answering the mailbox
//! operations of `gpu-mailbox` ([`Op`]).

use crate::config::ConfigSpace;
use crate::context::{DeviceContext, IrqState};
use crate::memory::GuestMemory;
use crate::model::{Activity, GpuModel, IdentityError};
use crate::pacing::{Pacing, SeededPacer};
use gpu_mailbox::{ModelState, Op, Status};

/// Ticks a model may report [`Activity::Busy`] in a row (across requests and clock readings)
/// before it is declared hung ([`error_code::HUNG`]): a model bug cannot stall the server.
/// Models do small bounded work per tick, so real work goes idle or waits long before this.
pub const TICK_BUDGET: u32 = 1_000_000;

/// Framework error codes in `header::ERROR` (models use codes below
/// [`FRAMEWORK_BASE`](error_code::FRAMEWORK_BASE)).
pub mod error_code {
    /// First code reserved for the framework.
    pub const FRAMEWORK_BASE: u32 = 0xFFFF_0000;
    /// The model stayed busy for [`TICK_BUDGET`](super::TICK_BUDGET) ticks in a row.
    pub const HUNG: u32 = 0xFFFF_0001;
    /// Fault injected by the server (`--fault-after-requests`).
    pub const INJECTED: u32 = 0xFFFF_0002;
}

/// How ticking the model ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Run {
    /// The model stopped being busy, used up the ticks it was given, or is (or became) failed.
    Settled,
    /// The tick budget ran out: the model is now in the error state with [`error_code::HUNG`].
    Hung,
}

/// An emulated PCI function: the model, its configuration space, guest memory, interrupt
/// state and error state.
///
/// Request semantics ([`handle`](Self::handle)):
/// - `MmioRead`/`MmioWrite` reach the model only for a BAR that exists and is decoded (command
///   register memory or I/O enable on), at a dword-aligned offset inside it; otherwise the
///   access master-aborts like on real hardware: `BadAddress`, reads all-ones, writes dropped.
/// - `ConfigRead`/`ConfigWrite` always work (a hung GPU still answers configuration cycles);
///   bad offsets give `BadAddress`.
/// - `Reset` resets the model, its interrupts and the error state. Configuration space (BARs,
///   command register) is kept, unlike a PCIe FLR, so a driver recovers without re-probing.
/// - `IrqAck` clears `IRQ_STATUS` bits (lines still asserted are latched again) and returns the
///   new `IRQ_STATUS`.
///
/// After every request the engines advance by the device's [`Pacing`] (see
/// [`crate::pacing`]): under `run-to-idle` the model is ticked while it reports
/// [`Activity::Busy`]; under `seeded` by 0..=[`SEEDED_MAX_TICKS`](crate::pacing::SEEDED_MAX_TICKS) ticks (while busy), with
/// long stalls ([`SeededPacer`]); under
/// `threaded` not at all (the server's engine thread ticks it). A model busy for
/// [`TICK_BUDGET`] ticks in a row is hung.
///
/// The error state (a model [`fail`](crate::DeviceContext::fail)ed, e.g. on a DMA fault or
/// invalid command; a hang; an injected fault) behaves like hardware that hit a bus error: the
/// device keeps answering register accesses and reports the fault in its own status registers,
/// and the driver resets it. So in the error state requests are still performed with the
/// statuses above (reads return the model's registers, writes reach the model), the error is
/// visible in the mailbox header (`STATE` = `Error`, `ERROR` = code) until `Reset`, and the
/// model's engines stay frozen: a failed model is not ticked. A request during which the model
/// faults completes normally (its access happened; the fault is recorded). Only the request
/// during which the model hung (tick budget exhausted, [`error_code::HUNG`]) completes with
/// `ModelError` and all-ones, because its side effects are incomplete.
pub struct Device<M> {
    model: M,
    config: ConfigSpace,
    memory: Box<dyn GuestMemory>,
    irq: IrqState,
    error: Option<u32>,
    served: u64,
    activity: Activity,
    pacing: Pacing,
    pacer: SeededPacer,
    busy_streak: u32,
    tick_budget: u32,
}

impl<M: GpuModel> Device<M> {
    /// Build a device from a model and the guest memory it DMAs to, paced
    /// [`Pacing::RunToIdle`] until [`set_pacing`](Self::set_pacing).
    pub fn new(model: M, memory: Box<dyn GuestMemory>) -> Result<Self, IdentityError> {
        let config = ConfigSpace::new(model.pci_identity())?;
        Ok(Device {
            model,
            config,
            memory,
            irq: IrqState::default(),
            error: None,
            served: 0,
            activity: Activity::Idle,
            pacing: Pacing::RunToIdle,
            pacer: SeededPacer::new(0),
            busy_streak: 0,
            tick_budget: TICK_BUDGET,
        })
    }

    /// Change the pacing; a seeded pacing restarts its pseudo-random stream from the seed.
    pub fn set_pacing(&mut self, pacing: Pacing) {
        self.pacing = pacing;
        if let Pacing::Seeded(seed) = pacing {
            self.pacer = SeededPacer::new(seed);
        }
    }

    /// The pacing in force.
    pub fn pacing(&self) -> Pacing {
        self.pacing
    }

    /// Lower (or raise) the hang threshold from [`TICK_BUDGET`] (tests of hang detection
    /// under a pacing that gives few ticks per request).
    pub fn set_tick_budget(&mut self, ticks: u32) {
        self.tick_budget = ticks.max(1);
    }

    fn parts(&mut self) -> (&mut M, DeviceContext<'_>) {
        let dev = DeviceContext {
            memory: &mut *self.memory,
            bus_master: self.config.bus_master_enabled(),
            irq: &mut self.irq,
            error: &mut self.error,
        };
        (&mut self.model, dev)
    }

    /// Perform one mailbox request; returns the completion status and value (all-ones unless
    /// the status is `Ok`; 0 for successful writes).
    pub fn handle(&mut self, op: u32, bar: u32, address: u32, value: u32) -> (Status, u32) {
        self.served += 1;
        let result = match Op::from_u32(op) {
            None => Err(Status::BadOp),
            Some(Op::MmioRead) => self.mmio(bar, address, None),
            Some(Op::MmioWrite) => self.mmio(bar, address, Some(value)),
            Some(Op::ConfigRead) => self.config.read(address).map_err(|_| Status::BadAddress),
            Some(Op::ConfigWrite) => {
                self.config.write(address, value).map(|()| 0).map_err(|_| Status::BadAddress)
            }
            Some(Op::Reset) => {
                self.reset();
                Ok(0)
            }
            Some(Op::IrqAck) => {
                self.irq.ack(value);
                Ok(self.irq.status)
            }
            Some(Op::Inject) => {
                if self.model.inject(value) {
                    Ok(0)
                } else {
                    Err(Status::BadOp)
                }
            }
        };
        // The request may have given the engines work: until a tick says otherwise.
        self.activity = if self.error.is_some() { Activity::Idle } else { Activity::Busy };
        if self.advance() == Run::Hung {
            return (Status::ModelError, u32::MAX);
        }
        match result {
            Ok(v) => (Status::Ok, v),
            Err(s) => (s, u32::MAX),
        }
    }

    fn mmio(&mut self, bar: u32, address: u32, write: Option<u32>) -> Result<u32, Status> {
        let bar = u8::try_from(bar).map_err(|_| Status::BadAddress)?;
        let size = self.config.bar_size(bar).ok_or(Status::BadAddress)?;
        let inside = address.is_multiple_of(4) && u64::from(address) + 4 <= size;
        if !inside || !self.config.decodes(bar) {
            return Err(Status::BadAddress);
        }
        let (model, mut dev) = self.parts();
        let value = match write {
            None => model.mmio_read(bar, address, &mut dev),
            Some(v) => {
                model.mmio_write(bar, address, v, &mut dev);
                0
            }
        };
        Ok(value)
    }

    /// Let time pass for the engines, as a clock reading or the server's timer does: ticks by
    /// the pacing (none under `threaded`, where [`tick_engines`](Self::tick_engines) runs on
    /// the engine thread). Returns what the model reported last. A failed model is frozen: it
    /// is not ticked and reports idle.
    pub fn poll(&mut self) -> Activity {
        self.advance();
        self.activity
    }

    /// Let time pass on the server's timer: as [`poll`](Self::poll), but a seeded pacing's
    /// stall does not hold it back (see [`crate::pacing`]).
    pub fn poll_timer(&mut self) -> Activity {
        match self.pacing {
            Pacing::Seeded(_) => {
                let n = self.pacer.timer_ticks();
                self.ticks(n);
            }
            _ => {
                self.advance();
            }
        }
        self.activity
    }

    /// Tick up to `max` times while the model reports [`Activity::Busy`] (the first tick
    /// always runs), with hang detection; the engine thread of `threaded` pacing calls this.
    /// Returns what the model reported last.
    pub fn tick_engines(&mut self, max: u32) -> Activity {
        self.ticks(max);
        self.activity
    }

    /// The ticks the pacing gives one request or clock reading.
    fn advance(&mut self) -> Run {
        match self.pacing {
            Pacing::RunToIdle => self.ticks(u32::MAX),
            Pacing::Seeded(_) => {
                let n = self.pacer.next_ticks();
                self.ticks(n)
            }
            Pacing::Threaded { .. } => Run::Settled,
        }
    }

    /// Tick at most `max` times: stop when the model reports idle or waiting (tick again later,
    /// not now) or fails; [`Run::Hung`] when this call ended a busy streak of the tick budget.
    fn ticks(&mut self, max: u32) -> Run {
        for _ in 0..max {
            if self.error.is_some() {
                self.activity = Activity::Idle;
                return Run::Settled;
            }
            let (model, mut dev) = self.parts();
            let activity = model.tick(&mut dev);
            if self.error.is_some() {
                // Failed on this tick: a fault, not a hang, and frozen from now on.
                self.activity = Activity::Idle;
                return Run::Settled;
            }
            self.activity = activity;
            if activity != Activity::Busy {
                self.busy_streak = 0;
                return Run::Settled;
            }
            self.busy_streak += 1;
            if self.busy_streak >= self.tick_budget {
                self.busy_streak = 0;
                self.error = Some(error_code::HUNG);
                self.activity = Activity::Idle;
                return Run::Hung;
            }
        }
        Run::Settled
    }

    /// What the model reported after the last request or poll.
    pub fn activity(&self) -> Activity {
        self.activity
    }

    /// Function-level reset: model, interrupt lines and latch, error state.
    pub fn reset(&mut self) {
        self.model.reset();
        self.irq = IrqState::default();
        self.error = None;
        self.activity = Activity::Idle;
        self.busy_streak = 0;
    }

    /// Put the device into the error state (first code wins), e.g. for fault injection.
    pub fn fail(&mut self, code: u32) {
        self.error.get_or_insert(code);
    }

    /// Mailbox `header::STATE`.
    pub fn state(&self) -> ModelState {
        if self.error.is_some() { ModelState::Error } else { ModelState::Ready }
    }

    /// Mailbox `header::ERROR`: the error code, 0 when not in the error state.
    pub fn error_code(&self) -> u32 {
        self.error.unwrap_or(0)
    }

    /// Mailbox `IRQ_STATUS`: latched interrupt lines.
    pub fn irq_status(&self) -> u32 {
        self.irq.status
    }

    /// How many times the guest must be signalled since the last call (the latch gained bits).
    pub fn take_irq_signals(&mut self) -> u32 {
        std::mem::take(&mut self.irq.signals)
    }

    /// Requests handled so far (mailbox `header::SERVED`, truncated to 32 bits there).
    pub fn served(&self) -> u64 {
        self.served
    }

    /// The model.
    pub fn model(&self) -> &M {
        &self.model
    }

    /// The model, mutably (for white-box tests).
    pub fn model_mut(&mut self) -> &mut M {
        &mut self.model
    }

    /// Configuration space.
    pub fn config(&self) -> &ConfigSpace {
        &self.config
    }

    /// Configuration space, mutably (e.g. to assign BARs like firmware).
    pub fn config_mut(&mut self) -> &mut ConfigSpace {
        &mut self.config
    }

    /// Guest memory.
    pub fn memory(&self) -> &dyn GuestMemory {
        &*self.memory
    }

    /// Guest memory, mutably.
    pub fn memory_mut(&mut self) -> &mut dyn GuestMemory {
        &mut *self.memory
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::config::{COMMAND_BUS_MASTER, COMMAND_MEMORY};
    use crate::memory::VecMemory;
    use crate::model::{BarSpec, PciIdentity};
    use crate::pacing::SEEDED_MAX_TICKS;

    /// A small test model: BAR0 (128 B) register file; offset 0x10 write = DMA the value to
    /// guest address 0x100 (fails the model on fault); 0x14 write = raise/lower line 0;
    /// 0x18 write = run N busy ticks (u32::MAX: forever); 0x1C write = wait (tick returns
    /// Waiting until 0x1C is written 0); 0x0C write = the next tick fails the model with that
    /// code (while reporting Busy).
    #[derive(Default)]
    pub(crate) struct Toy {
        pub(crate) regs: [u32; 32],
        busy: u32,
        waiting: bool,
        fail_on_tick: u32,
        pub(crate) ticks: u64,
        pub(crate) resets: u32,
    }

    impl GpuModel for Toy {
        fn pci_identity(&self) -> PciIdentity {
            PciIdentity::new(0x1234, 0x0001, 0xFF0000).with_bar(0, BarSpec::mem32(128))
        }
        fn mmio_read(&mut self, _bar: u8, offset: u32, _dev: &mut DeviceContext<'_>) -> u32 {
            self.regs[(offset / 4) as usize]
        }
        fn mmio_write(&mut self, _bar: u8, offset: u32, value: u32, dev: &mut DeviceContext<'_>) {
            self.regs[(offset / 4) as usize] = value;
            match offset {
                0x10 => {
                    if dev.dma_write_u32(u64::from(value), 0xC0DE).is_err() {
                        dev.fail(7);
                    }
                }
                0x14 => dev.set_irq(1, value != 0),
                0x18 => self.busy = value,
                0x1C => self.waiting = value != 0,
                0x0C => self.fail_on_tick = value,
                _ => {}
            }
        }
        fn tick(&mut self, dev: &mut DeviceContext<'_>) -> Activity {
            self.ticks += 1;
            if self.fail_on_tick != 0 {
                dev.fail(std::mem::take(&mut self.fail_on_tick));
                Activity::Busy
            } else if self.busy > 0 {
                if self.busy != u32::MAX {
                    self.busy -= 1;
                }
                Activity::Busy
            } else if self.waiting {
                Activity::Waiting
            } else {
                Activity::Idle
            }
        }
        fn reset(&mut self) {
            *self = Toy { resets: self.resets + 1, ..Toy::default() };
        }
    }

    fn device() -> Device<Toy> {
        let mut d = Device::new(Toy::default(), Box::new(VecMemory::new(4096).unwrap())).unwrap();
        assert_eq!(d.handle(Op::ConfigWrite as u32, 0, 4, 0), (Status::Ok, 0));
        d
    }

    fn enable(d: &mut Device<Toy>, bits: u16) {
        assert_eq!(d.handle(Op::ConfigWrite as u32, 0, 4, u32::from(bits)).0, Status::Ok);
    }

    const R: u32 = Op::MmioRead as u32;
    const W: u32 = Op::MmioWrite as u32;

    #[test]
    fn mmio_is_not_decoded_until_memory_space_is_enabled() {
        let mut d = device();
        assert_eq!(d.handle(W, 0, 0, 5), (Status::BadAddress, u32::MAX));
        assert_eq!(d.handle(R, 0, 0, 0), (Status::BadAddress, u32::MAX));
        assert_eq!(d.model().regs[0], 0, "the dropped write never reached the model");
        enable(&mut d, COMMAND_MEMORY);
        assert_eq!(d.handle(W, 0, 0, 5), (Status::Ok, 0));
        assert_eq!(d.handle(R, 0, 0, 0), (Status::Ok, 5));
    }

    #[test]
    fn bad_ops_bars_and_offsets_become_statuses() {
        let mut d = device();
        enable(&mut d, COMMAND_MEMORY);
        assert_eq!(d.handle(0, 0, 0, 0), (Status::BadOp, u32::MAX));
        assert_eq!(d.handle(99, 0, 0, 0), (Status::BadOp, u32::MAX));
        for (bar, addr) in
            [(1, 0), (6, 0), (0x100, 0), (u32::MAX, 0), (0, 2), (0, 128), (0, 0xFFFF_FFFC)]
        {
            assert_eq!(d.handle(R, bar, addr, 0), (Status::BadAddress, u32::MAX), "{bar} {addr}");
        }
        assert_eq!(d.handle(R, 0, 124, 0).0, Status::Ok);
        assert_eq!(d.handle(Op::ConfigRead as u32, 0, 256, 0), (Status::BadAddress, u32::MAX));
        assert_eq!(d.handle(Op::ConfigRead as u32, 0, 1, 0), (Status::BadAddress, u32::MAX));
        assert_eq!(d.handle(Op::ConfigRead as u32, 0, 0, 0), (Status::Ok, 0x0001_1234));
        assert_eq!(d.served(), 15, "including device()'s config write");
        assert_eq!(d.state(), ModelState::Ready);
    }

    #[test]
    fn dma_fault_enters_the_error_state_until_reset_while_requests_are_still_performed() {
        let mut d = device();
        enable(&mut d, COMMAND_MEMORY | COMMAND_BUS_MASTER);
        assert_eq!(d.handle(W, 0, 0x10, 0x20), (Status::Ok, 0));
        let mut b = [0u8; 4];
        d.memory().read(0x20, &mut b).unwrap();
        assert_eq!(u32::from_le_bytes(b), 0xC0DE);
        assert_eq!((d.state(), d.error_code()), (ModelState::Ready, 0));
        // The faulting request completes normally: the register write happened, the fault is
        // recorded in the error state.
        assert_eq!(d.handle(W, 0, 0x10, 4096), (Status::Ok, 0));
        assert_eq!(d.model().regs[4], 4096);
        assert_eq!((d.state(), d.error_code()), (ModelState::Error, 7));
        // In the error state register accesses are still performed, like hardware reporting
        // the fault in its status registers.
        assert_eq!(d.handle(R, 0, 0x10, 0), (Status::Ok, 4096));
        assert_eq!(d.handle(W, 0, 4, 1), (Status::Ok, 0));
        assert_eq!(d.model().regs[1], 1, "performed in the error state");
        assert_eq!(d.handle(R, 0, 4, 0), (Status::Ok, 1));
        assert_eq!(d.handle(R, 0, 128, 0), (Status::BadAddress, u32::MAX), "bounds still apply");
        // Engines stay frozen: a failed model is not ticked, even when given work.
        let ticks = d.model().ticks;
        assert_eq!(d.handle(W, 0, 0x18, 1000), (Status::Ok, 0));
        assert_eq!(d.poll(), Activity::Idle);
        assert_eq!(d.model().ticks, ticks, "not ticked in the error state");
        // A second fault keeps the first code.
        assert_eq!(d.handle(W, 0, 0x10, 8192), (Status::Ok, 0));
        d.fail(error_code::INJECTED);
        assert_eq!((d.state(), d.error_code()), (ModelState::Error, 7), "first code wins");
        assert_eq!(d.handle(Op::ConfigRead as u32, 0, 0, 0).0, Status::Ok, "config still works");
        assert_eq!(d.handle(Op::Reset as u32, 0, 0, 0), (Status::Ok, 0));
        assert_eq!((d.state(), d.error_code(), d.model().resets), (ModelState::Ready, 0, 1));
        assert_eq!(d.handle(R, 0, 4, 0), (Status::Ok, 0), "config space kept across reset");
        assert_eq!(d.handle(W, 0, 0x18, 10), (Status::Ok, 0));
        assert!(d.model().ticks > 10, "ticked again after reset");
    }

    #[test]
    fn fault_injection_reaches_models_that_have_switches_only() {
        let mut d = device();
        // The test model has no switches: the harness is told so, nothing changes.
        assert_eq!(d.handle(Op::Inject as u32, 0, 0, 1), (Status::BadOp, u32::MAX));
        assert_eq!(d.state(), ModelState::Ready);
    }

    #[test]
    fn dma_without_bus_mastering_faults() {
        let mut d = device();
        enable(&mut d, COMMAND_MEMORY);
        assert_eq!(d.handle(W, 0, 0x10, 0x20), (Status::Ok, 0));
        assert_eq!((d.state(), d.error_code()), (ModelState::Error, 7));
        let mut b = [0u8; 4];
        d.memory().read(0x20, &mut b).unwrap();
        assert_eq!(b, [0; 4], "nothing written");
    }

    #[test]
    fn a_fault_while_busy_is_not_a_hang() {
        let mut d = device();
        enable(&mut d, COMMAND_MEMORY);
        let ticks = d.model().ticks;
        // The model fails on its first tick while reporting Busy: the request completes Ok.
        assert_eq!(d.handle(W, 0, 0x0C, 0x33), (Status::Ok, 0));
        assert_eq!((d.state(), d.error_code()), (ModelState::Error, 0x33));
        assert_eq!(d.model().ticks - ticks, 1, "frozen right after the failing tick");
        assert_eq!(d.activity(), Activity::Idle);
    }

    #[test]
    fn interrupts_latch_signal_once_and_relatch_on_ack_while_asserted() {
        let mut d = device();
        enable(&mut d, COMMAND_MEMORY);
        d.handle(W, 0, 0x14, 1);
        assert_eq!((d.irq_status(), d.take_irq_signals()), (1, 1));
        d.handle(W, 0, 0x14, 1);
        assert_eq!(d.take_irq_signals(), 0, "already asserted: no new edge");
        // Ack while the line is still asserted: latched and signalled again.
        assert_eq!(d.handle(Op::IrqAck as u32, 0, 0, 1), (Status::Ok, 1));
        assert_eq!(d.take_irq_signals(), 1);
        // Lower the line, then ack: stays clear.
        d.handle(W, 0, 0x14, 0);
        assert_eq!(d.irq_status(), 1, "latch keeps its bit until IrqAck");
        assert_eq!(d.handle(Op::IrqAck as u32, 0, 0, 1), (Status::Ok, 0));
        assert_eq!((d.irq_status(), d.take_irq_signals()), (0, 0));
        d.handle(W, 0, 0x14, 1);
        d.handle(Op::Reset as u32, 0, 0, 0);
        assert_eq!((d.irq_status(), d.take_irq_signals()), (0, 0), "reset clears interrupts");
    }

    fn paced(pacing: Pacing) -> Device<Toy> {
        let mut d = device();
        d.set_pacing(pacing);
        enable(&mut d, COMMAND_MEMORY);
        d
    }

    /// Ticks each of `n` register reads gives a busy Toy.
    fn ticks_per_request(d: &mut Device<Toy>, n: usize) -> Vec<u64> {
        (0..n)
            .map(|_| {
                let before = d.model().ticks;
                assert_eq!(d.handle(R, 0, 0, 0).0, Status::Ok);
                d.model().ticks - before
            })
            .collect()
    }

    #[test]
    fn seeded_pacing_gives_each_request_a_small_reproducible_number_of_ticks() {
        let mut a = paced(Pacing::Seeded(7));
        a.handle(W, 0, 0x18, 10_000);
        let got = ticks_per_request(&mut a, 200);
        assert!(got.iter().all(|&t| t <= u64::from(SEEDED_MAX_TICKS)), "{got:?}");
        assert!(got.contains(&0) && got.contains(&u64::from(SEEDED_MAX_TICKS)), "{got:?}");
        assert_eq!(a.activity(), Activity::Busy, "10,000 ticks of work are far from done");
        // The same seed gives the same ticks; another seed other ones.
        let mut b = paced(Pacing::Seeded(7));
        b.handle(W, 0, 0x18, 10_000);
        assert_eq!(ticks_per_request(&mut b, 200), got);
        let mut c = paced(Pacing::Seeded(8));
        c.handle(W, 0, 0x18, 10_000);
        assert_ne!(ticks_per_request(&mut c, 200), got);
        // Clock readings (poll) advance too, until the work is done.
        let mut polls = 0;
        while a.poll() != Activity::Idle {
            polls += 1;
            assert!(polls < 20_000, "bounded");
        }
        assert!(polls > 10_000 / SEEDED_MAX_TICKS as usize, "{polls} polls: partial progress");
    }

    #[test]
    fn a_request_without_ticks_leaves_the_device_marked_busy() {
        // Seed 7's first counts include 0: the request ran no tick, so the server must keep
        // ticking (its timer) although the model has not reported anything yet.
        let mut d = paced(Pacing::Seeded(7));
        let mut zero = false;
        for _ in 0..50 {
            let before = d.model().ticks;
            d.handle(W, 0, 0, 1);
            if d.model().ticks == before {
                zero = true;
                assert_eq!(d.activity(), Activity::Busy);
            } else {
                assert_eq!(d.activity(), Activity::Idle);
            }
        }
        assert!(zero);
    }

    #[test]
    fn hangs_are_detected_across_requests_under_seeded_pacing_and_waiting_is_not_a_hang() {
        let mut d = paced(Pacing::Seeded(3));
        d.set_tick_budget(500);
        // Waiting for many ticks is fine.
        d.handle(W, 0, 0x1C, 1);
        for _ in 0..2000 {
            assert_eq!(d.handle(R, 0, 0, 0).0, Status::Ok);
        }
        assert_eq!(d.state(), ModelState::Ready);
        d.handle(W, 0, 0x1C, 0);
        // Busy forever: exactly one request reports the hang, the device is frozen after.
        d.handle(W, 0, 0x18, u32::MAX);
        let mut hung = 0;
        for _ in 0..2000 {
            if d.handle(R, 0, 0, 0).0 == Status::ModelError {
                hung += 1;
            }
        }
        assert_eq!(hung, 1);
        assert_eq!((d.state(), d.error_code()), (ModelState::Error, error_code::HUNG));
        // A long busy stretch broken by idle is not a hang: the streak restarts.
        d.handle(Op::Reset as u32, 0, 0, 0);
        for _ in 0..10 {
            d.handle(W, 0, 0x18, 400);
            while d.poll() == Activity::Busy {}
        }
        assert_eq!(d.state(), ModelState::Ready);
    }

    #[test]
    fn threaded_pacing_leaves_ticking_to_the_engine_thread() {
        let mut d = paced(Pacing::Threaded { ticks_per_ms: 10 });
        d.set_tick_budget(100);
        let ticks = d.model().ticks;
        d.handle(W, 0, 0x18, 25);
        assert_eq!((d.model().ticks, d.activity()), (ticks, Activity::Busy), "no tick yet");
        assert_eq!(d.poll(), Activity::Busy, "time passing is the engine thread's job");
        assert_eq!(d.tick_engines(10), Activity::Busy);
        assert_eq!(d.model().ticks - ticks, 10);
        assert_eq!(d.tick_engines(100), Activity::Idle);
        assert_eq!(d.model().ticks - ticks, 26, "25 busy ticks and the idle one");
        d.handle(W, 0, 0x18, u32::MAX);
        for _ in 0..9 {
            d.tick_engines(10);
        }
        assert_eq!(d.state(), ModelState::Ready);
        d.tick_engines(10);
        assert_eq!((d.state(), d.error_code()), (ModelState::Error, error_code::HUNG));
    }

    #[test]
    fn busy_models_are_ticked_to_idle_and_hung_ones_fail() {
        let mut d = device();
        enable(&mut d, COMMAND_MEMORY);
        d.handle(W, 0, 0x18, 1000);
        assert_eq!(d.activity(), Activity::Idle);
        assert!(d.model().ticks > 1000);
        d.handle(W, 0, 0x1C, 1);
        assert_eq!(d.activity(), Activity::Waiting);
        assert_eq!(d.poll(), Activity::Waiting);
        d.handle(W, 0, 0x1C, 0);
        assert_eq!(d.activity(), Activity::Idle);
        let ticks = d.model().ticks;
        // Only the request during which the model hung reports ModelError: its side effects
        // are incomplete.
        assert_eq!(d.handle(W, 0, 0x18, u32::MAX), (Status::ModelError, u32::MAX));
        assert_eq!(d.model().ticks - ticks, u64::from(TICK_BUDGET));
        assert_eq!((d.state(), d.error_code()), (ModelState::Error, error_code::HUNG));
        // Later requests are performed and complete Ok; the model stays frozen and in the
        // error state until reset.
        let ticks = d.model().ticks;
        assert_eq!(d.handle(W, 0, 0, 9), (Status::Ok, 0));
        assert_eq!(d.handle(R, 0, 0, 0), (Status::Ok, 9));
        assert_eq!(d.handle(R, 0, 0x18, 0), (Status::Ok, u32::MAX));
        assert_eq!(d.poll(), Activity::Idle);
        assert_eq!(d.model().ticks, ticks, "a hung model is not ticked again");
        assert_eq!((d.state(), d.error_code()), (ModelState::Error, error_code::HUNG));
        assert_eq!(d.handle(Op::Reset as u32, 0, 0, 0), (Status::Ok, 0));
        assert_eq!((d.state(), d.error_code()), (ModelState::Ready, 0));
        assert_eq!(d.handle(R, 0, 0x18, 0), (Status::Ok, 0), "model reset too");
    }
}
