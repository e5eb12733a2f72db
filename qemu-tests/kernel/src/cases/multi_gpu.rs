//! `multi-gpu-*`: two emulated GPUs in one guest, an R520 and a Cypress, each beside its own
//! model process behind its own ivshmem function: distinct mailboxes, virtual PCI functions,
//! BARs and MSI-X vectors. The guest finds which is which by probing, not by bus order.
//!
//! `multi-gpu-schedule` and `multi-gpu-one-dies` drive both through `examples/gpu-scheduler`:
//! one lane per GPU in a `static` its MSI-X handler reaches (the handler calls the lane's
//! `on_interrupt`, which acknowledges the device and records completions), the main loop
//! steps the scheduler with interrupts off and spins with them on.

use super::{CaseError, check, expect, expect_eq};
use crate::Kernel;
use crate::clock::TscClock;
use crate::dma::IdentityDma;
use crate::mailbox::{self, MAX_MAILBOXES, Mailbox, MailboxIo};
use crate::pci::Platform;
use baregpu_gpu::GpuQueue;
use baregpu_gpu::{FenceFailure, FenceStatus};
use baregpu_hal::dma::{BusAddress, DmaBuffer, DmaLayout, DmaRegion};
use baregpu_hal::pci::PciFunction;
use baregpu_hal::time::{Clock, poll_until};
use baregpu_radeon_evergreen::{Evergreen, RingConfig as EvergreenRing};
use baregpu_radeon_r5xx::USER_SCRATCH;
use baregpu_radeon_r5xx::{Interrupts, R5xx, RingConfig as R5xxRing};
use baregpu_regs::evergreen::Chipset as EvergreenChip;
use baregpu_regs::r5xx::Chipset as R5xxChip;
use core::time::Duration;
use gpu_scheduler::radeon::{CheckedWrite, FILL_BYTES};
use gpu_scheduler::{
    Completion, Done, Engine, Event, JobError, JobId, Lane, LaneState, RefuseReason, Scheduler,
};

/// The R520's driver in this guest.
pub(super) type R520 = R5xx<'static, MailboxIo, TscClock, IdentityDma>;
/// The Cypress's driver in this guest.
pub(super) type Cypress = Evergreen<'static, MailboxIo, TscClock, IdentityDma>;

/// Bound on a fence or an interrupt (a few mailbox round trips on a loaded 2-core host).
const TIMEOUT: Duration = Duration::from_millis(300);

/// The two emulated GPUs, found and enabled (not yet initialised).
pub(super) struct Found {
    /// The R520's mailbox.
    pub r5xx: &'static Mailbox,
    /// The Evergreen chip's mailbox and chip.
    pub evergreen: (&'static Mailbox, EvergreenChip),
}

fn log_found(index: usize, chip: &str, name: &str, function: &PciFunction) {
    defmt::info!(
        "multi-gpu: mailbox {=usize}: {=str} ({=str}) {=u16:04x}:{=u16:04x}",
        index,
        chip,
        name,
        function.vendor,
        function.device
    );
}

/// Attach every ivshmem function, reset its model, and probe its virtual function with both
/// drivers' PCI tables: one must be an R5xx, the other an Evergreen chip.
pub(super) fn attach(kernel: &Kernel) -> Result<Found, CaseError> {
    let (mut r5xx, mut evergreen) = (None, None);
    for index in 0..MAX_MAILBOXES {
        let ivshmem = mailbox::attach_nth(index, kernel.cmdline.flag("ivshmem.relocate"))
            .map_err(CaseError::Ivshmem)?;
        let mailbox = Mailbox::connect(ivshmem)?;
        mailbox.reset()?;
        let platform = Platform { mailbox: Some(mailbox.config()) };
        let address = mailbox.function();
        if let Ok(p) = baregpu_radeon_r5xx::pci::probe(&platform, address) {
            log_found(index, p.chip.name(), p.name, &p.function);
            check("R5xx enable", baregpu_radeon_r5xx::pci::enable(&platform, address))?;
            expect("one R5xx", r5xx.replace((mailbox, p.chip)).is_none())?;
        } else {
            let p = check("probe", baregpu_radeon_evergreen::pci::probe(&platform, address))?;
            log_found(index, p.chip.name(), p.name, &p.function);
            check("Evergreen enable", baregpu_radeon_evergreen::pci::enable(&platform, address))?;
            expect("one Evergreen", evergreen.replace((mailbox, p.chip)).is_none())?;
        }
    }
    let (r5xx, r5xx_chip) = r5xx.ok_or(CaseError::Check("an R5xx among the GPUs"))?;
    let evergreen = evergreen.ok_or(CaseError::Check("an Evergreen among the GPUs"))?;
    expect("the R5xx is an R520", r5xx_chip == R5xxChip::R520)?;
    expect("the Evergreen chip is a Cypress", evergreen.1 == EvergreenChip::CYPRESS)?;
    Ok(Found { r5xx, evergreen })
}

/// The R520 brought up (microcode, ring, ring test).
pub(super) fn init_r520(kernel: &Kernel, mailbox: &'static Mailbox) -> Result<R520, CaseError> {
    super::r5xx::init(kernel, mailbox, R5xxRing::default())
}

/// The Cypress brought up (PFP/ME/RLC, ring, IH ring, ring and IB tests).
pub(super) fn init_cypress(
    kernel: &Kernel,
    (mailbox, chip): (&'static Mailbox, EvergreenChip),
) -> Result<Cypress, CaseError> {
    let fw = super::evergreen::firmware(chip)?;
    check(
        "Cypress init",
        Evergreen::init(mailbox.io(0), TscClock, kernel.dma, chip, &fw, EvergreenRing::default()),
    )
}

static R520_IRQ: spin::Mutex<Option<R520>> = spin::Mutex::new(None);
static CYPRESS_IRQ: spin::Mutex<Option<Cypress>> = spin::Mutex::new(None);

/// The R520's interrupt handler: the driver acknowledges in GEN_INT_STATUS.
fn on_r520_interrupt(_lines: u32) {
    if let Some(mut guard) = R520_IRQ.try_lock()
        && let Some(gpu) = guard.as_mut()
    {
        let _ = gpu.handle_interrupts();
    }
}

/// The Cypress's interrupt handler: the driver drains the IH ring (its line stays asserted
/// while vectors are unread, so the mailbox's acknowledgement alone would re-latch it).
fn on_cypress_interrupt(_lines: u32) {
    if let Some(mut guard) = CYPRESS_IRQ.try_lock()
        && let Some(gpu) = guard.as_mut()
    {
        let _ = gpu.handle_interrupts();
    }
}

/// Wait until mailbox `m`'s interrupt line is quiet: a vector raised while the CPU's
/// interrupts were off has been taken and acknowledged.
fn quiet(what: &'static str, m: &Mailbox) -> Result<(), CaseError> {
    check(what, poll_until(&TscClock, TIMEOUT, || (m.irq_lines() == 0).then_some(())))
}

/// `multi-gpu-probe`: both GPUs found by probing, each with its own mailbox, virtual function
/// and BARs; both initialised; each one's interrupt arrives on its own MSI-X vector only.
///
/// Each interrupt test runs with the CPU's interrupts off (it polls the device's status) and
/// its GPU's handler installed before they come back on: a vector taken with no driver to
/// clear the device's source would be acknowledged and re-latched over and over.
pub fn probe(kernel: &Kernel) -> Result<(), CaseError> {
    use x86_64::instructions::interrupts::without_interrupts;
    let found = attach(kernel)?;
    let (r_box, e_box) = (found.r5xx, found.evergreen.0);
    expect("distinct mailboxes", r_box.index() != e_box.index())?;
    expect("distinct virtual functions", r_box.function() != e_box.function())?;

    // The R520's software interrupt reaches its vector only (the Cypress is not running yet,
    // so nothing else can interrupt).
    let mut r520 = init_r520(kernel, r_box)?;
    let fence = check("R520 fence", r520.emit_fence())?;
    check("R520 fence wait", r520.wait(&fence, TIMEOUT))?;
    without_interrupts(|| {
        let tested = r520.enable_interrupts(Interrupts::NONE.with_software(true));
        *R520_IRQ.lock() = Some(r520);
        r_box.set_irq_handler(Some(on_r520_interrupt));
        e_box.set_irq_handler(Some(on_cypress_interrupt));
        check("R520 interrupt test", tested)
    })?;
    quiet("R520 interrupt test's vector taken", r_box)?;
    let before = (r_box.interrupts(), e_box.interrupts());
    without_interrupts(|| {
        if let Some(gpu) = R520_IRQ.lock().as_ref() {
            gpu.raise_software_interrupt();
        }
    });
    let arrived = poll_until(&TscClock, TIMEOUT, || (r_box.interrupts() > before.0).then_some(()));
    check("R520 interrupt on its vector", arrived)?;
    expect_eq("no interrupt on the Cypress's vector", e_box.interrupts(), before.1)?;

    // The Cypress's EOP interrupts reach its vector only.
    without_interrupts(|| {
        let mut cypress = init_cypress(kernel, found.evergreen)?;
        let tested = cypress.enable_interrupts();
        *CYPRESS_IRQ.lock() = Some(cypress);
        check("Cypress interrupts", tested)
    })?;
    quiet("Cypress interrupt test's vector taken", e_box)?;
    let r520_irqs = r_box.interrupts();
    let e_before = e_box.interrupts();
    without_interrupts(|| {
        let mut guard = CYPRESS_IRQ.lock();
        let gpu = guard.as_mut().ok_or(CaseError::Check("Cypress"))?;
        let fence = check("Cypress fence", gpu.fence())?;
        check("Cypress fence wait", gpu.wait(&fence, TIMEOUT))
    })?;
    let arrived = poll_until(&TscClock, TIMEOUT, || (e_box.interrupts() > e_before).then_some(()));
    check("Cypress EOP interrupt on its vector", arrived)?;
    quiet("Cypress EOP vector drained", e_box)?;
    expect_eq("no further interrupt on the R520's vector", r_box.interrupts(), r520_irqs)?;
    defmt::info!(
        "multi-gpu: interrupts: R520 {=u32} (mailbox {=usize}), Cypress {=u32} (mailbox {=usize})",
        r_box.interrupts(),
        r_box.index(),
        e_box.interrupts(),
        e_box.index()
    );
    r_box.set_irq_handler(None);
    e_box.set_irq_handler(None);
    without_interrupts(|| {
        if let Some(gpu) = CYPRESS_IRQ.lock().take() {
            gpu.shutdown();
        }
        *R520_IRQ.lock() = None;
    });
    Ok(())
}

/// Jobs per GPU in the scheduler cases.
const JOBS: u32 = 400;
/// Queue and in-flight window per lane.
const DEPTH: usize = 8;
/// Per-job deadline. Above the mailbox's 1 s request timeout: a request to a dead model holds
/// interrupts off that long, and the other GPU's jobs must not pass their deadline meanwhile
/// (they would be completed by the deadline's poll instead of their interrupt).
const JOB_TIMEOUT: Duration = Duration::from_secs(2);
/// Bound on a whole scheduler run.
const RUN_TIMEOUT: Duration = Duration::from_secs(60);
/// User scratch registers the R520's jobs rotate through (`SCRATCH_REG2..7`).
const SCRATCH_REGS: usize = 6;
/// First job value (job `i` writes `VALUE_BASE + i`).
const VALUE_BASE: u32 = 0x6A00_0000;
/// The lanes' indices.
const R520_LANE: usize = 0;
const CYPRESS_LANE: usize = 1;

type Job = CheckedWrite;
type R520Lane = Lane<R520, Job, DEPTH>;
type CypressLane = Lane<Cypress, Job, DEPTH>;

static R520: spin::Mutex<Option<R520Lane>> = spin::Mutex::new(None);
static CYPRESS: spin::Mutex<Option<CypressLane>> = spin::Mutex::new(None);

/// The R520's MSI-X handler: its lane acknowledges the device and records completions.
fn on_r520_lane(_lines: u32) {
    if let Some(mut guard) = R520.try_lock()
        && let Some(lane) = guard.as_mut()
    {
        lane.on_interrupt();
    }
}

/// The Cypress's MSI-X handler (IH ring drained by its lane).
fn on_cypress_lane(_lines: u32) {
    if let Some(mut guard) = CYPRESS.try_lock()
        && let Some(lane) = guard.as_mut()
    {
        lane.on_interrupt();
    }
}

/// What the scheduler cases check afterwards.
struct Outcome {
    /// Every completion, per lane, in order.
    done: [alloc::vec::Vec<Done>; 2],
    /// Lanes in submission order.
    submitted: alloc::vec::Vec<u8>,
    /// Jobs a lane refused because it was not running.
    refused: [u32; 2],
    /// Lane states and counters at the end.
    states: [LaneState; 2],
    /// Cypress jobs done when the R520's lane was first seen not running.
    cypress_done_when_r520_stopped: Option<usize>,
    /// Cypress jobs enqueued once the R520's lane was seen not running.
    cypress_enqueued_after_r520_stopped: u32,
    /// Steps whose submissions did not alternate while both lanes took jobs (round-robin:
    /// lane `a` twice in a row only once lane `b` could take no more in that step).
    steps_not_round_robin: u32,
    /// Steps that left a running lane with a job queued and room in its in-flight window.
    steps_leaving_work: u32,
    stats: [gpu_scheduler::LaneStats; 2],
}

/// A step's submissions, lane by lane, are round-robin: they alternate until one lane can take
/// no more, then only the other lane's follow.
fn round_robin(lanes: &[u8]) -> bool {
    match lanes.windows(2).position(|w| w[0] == w[1]) {
        Some(k) => lanes[k..].iter().all(|&l| l == lanes[k]),
        None => true,
    }
}

/// Both GPUs brought up, their lanes installed (completion by interrupt) where their MSI-X
/// handlers reach them. Runs with the CPU's interrupts off: the families' interrupt tests poll
/// their devices' status, and an MSI-X taken meanwhile would find no lane to drain the device
/// (the mailbox's acknowledgement alone re-latches a line still asserted: a storm of
/// interrupts). The vectors raised meanwhile are taken once the run enables interrupts.
fn set_up(kernel: &Kernel, found: &Found) -> Result<(), CaseError> {
    x86_64::instructions::interrupts::without_interrupts(|| set_up_lanes(kernel, found))
}

fn set_up_lanes(kernel: &Kernel, found: &Found) -> Result<(), CaseError> {
    let r520 = init_r520(kernel, found.r5xx)?;
    defmt::info!("multi-gpu: R520 up after {=u64} mailbox requests", found.r5xx.requests());
    let cypress = init_cypress(kernel, found.evergreen)?;
    let r_lane = check("R520 lane", Lane::new(r520, Completion::Interrupt, JOB_TIMEOUT))?;
    let c_lane = check("Cypress lane", Lane::new(cypress, Completion::Interrupt, JOB_TIMEOUT))?;
    *R520.lock() = Some(r_lane);
    *CYPRESS.lock() = Some(c_lane);
    found.r5xx.set_irq_handler(Some(on_r520_lane));
    found.evergreen.0.set_irq_handler(Some(on_cypress_lane));
    defmt::info!(
        "multi-gpu: lanes up after R520 {=u64}, Cypress {=u64} mailbox requests",
        found.r5xx.requests(),
        found.evergreen.0.requests()
    );
    Ok(())
}

fn job(i: u32, fills: &DmaRegion) -> Job {
    let fill = BusAddress(fills.bus_address().0 + u64::from(i) * FILL_BYTES as u64);
    CheckedWrite { reg: i as usize % SCRATCH_REGS, value: VALUE_BASE + i, fill }
}

/// Job `i`'s fill, as the CPU reads it: the first word that differs from its value.
fn fill_mismatch(fills: &DmaRegion, i: u32) -> Result<Option<u32>, CaseError> {
    let base = i as usize * FILL_BYTES;
    for w in 0..FILL_BYTES / 4 {
        let word = fills.read_u32(base + 4 * w)?;
        if word != VALUE_BASE + i {
            return Ok(Some(word));
        }
    }
    Ok(None)
}

/// Check a completed job's result with the CPU, now: the R520's scratch register holds its
/// value or a later job's for the same register; the Cypress's fill holds its value.
fn check_result(d: &Done, r520: &R520Lane, fills: &DmaRegion) -> Result<(), CaseError> {
    if d.result.is_err() {
        return Ok(());
    }
    let i = d.job.0;
    match d.lane {
        R520_LANE => {
            let reg = i as usize % SCRATCH_REGS;
            let seen = r520.queue().scratch_writeback(USER_SCRATCH + reg).unwrap_or(0);
            let later = seen.wrapping_sub(VALUE_BASE);
            if seen < VALUE_BASE + i || later as usize % SCRATCH_REGS != reg {
                return expect_eq(
                    "R520 job's scratch write at its completion",
                    seen,
                    VALUE_BASE + i,
                );
            }
        }
        _ => {
            if let Some(word) = fill_mismatch(fills, i)? {
                return expect_eq("Cypress job's fill at its completion", word, VALUE_BASE + i);
            }
        }
    }
    Ok(())
}

/// Feed [`JOBS`] jobs to each lane and step the scheduler until every job finished, checking
/// each result at its completion and, after each step, that it was round-robin and left no
/// running lane with work it could take. Interrupts are on while the loop spins, off while it
/// steps. Cypress jobs from `cypress_held` on are enqueued only once the R520's lane stopped
/// running (or finished its jobs).
fn run_jobs(fills: &DmaRegion, cypress_held: u32) -> Result<Outcome, CaseError> {
    use alloc::vec::Vec;
    let mut out = Outcome {
        done: [Vec::with_capacity(JOBS as usize), Vec::with_capacity(JOBS as usize)],
        submitted: Vec::with_capacity(2 * JOBS as usize),
        refused: [0; 2],
        states: [LaneState::Running; 2],
        cypress_done_when_r520_stopped: None,
        cypress_enqueued_after_r520_stopped: 0,
        steps_not_round_robin: 0,
        steps_leaving_work: 0,
        stats: Default::default(),
    };
    let mut step_lanes = Vec::with_capacity(4 * DEPTH);
    let mut events = Vec::with_capacity(4 * DEPTH);
    let mut scheduler = Scheduler::<2>::new();
    let mut next = [0u32; 2];
    let start = TscClock.now_ns();
    x86_64::instructions::interrupts::enable();
    loop {
        let idle = x86_64::instructions::interrupts::without_interrupts(|| {
            let (mut r, mut c) = (R520.lock(), CYPRESS.lock());
            let (Some(r), Some(c)) = (r.as_mut(), c.as_mut()) else {
                return Err(CaseError::Check("multi-gpu: lanes present"));
            };
            let r520_stopped = r.state() != LaneState::Running;
            let r520_finished = next[R520_LANE] == JOBS && !r.busy();
            let mut lanes: [&mut dyn Engine<Job>; 2] = [r, c];
            for (lane, n) in next.iter_mut().enumerate() {
                while *n < JOBS {
                    let held = lane == CYPRESS_LANE && *n >= cypress_held;
                    if held && !(r520_stopped || r520_finished) {
                        break;
                    }
                    match lanes[lane].enqueue(JobId(*n), job(*n, fills)) {
                        Ok(()) => {
                            if lane == CYPRESS_LANE && r520_stopped {
                                out.cypress_enqueued_after_r520_stopped += 1;
                            }
                            *n += 1;
                        }
                        Err(refused) if refused.reason == RefuseReason::Full => break,
                        Err(_) => {
                            out.refused[lane] += 1;
                            *n += 1;
                        }
                    }
                }
            }
            scheduler.step(&mut lanes, TscClock.now_ns(), &mut |e| events.push(e));
            let idle = next.iter().all(|&n| n == JOBS) && !Scheduler::busy(&lanes);
            step_lanes.clear();
            for e in events.drain(..) {
                match e {
                    Event::Submitted { lane, .. } => {
                        out.submitted.push(lane as u8);
                        step_lanes.push(lane as u8);
                    }
                    Event::Completed(d) => {
                        check_result(&d, r, fills)?;
                        out.done[d.lane].push(d);
                    }
                }
            }
            out.steps_not_round_robin += u32::from(!round_robin(&step_lanes));
            let leaves_work = |state: LaneState, queued: usize, in_flight: usize| {
                state == LaneState::Running && queued > 0 && in_flight < DEPTH
            };
            let left = leaves_work(r.state(), r.queued(), r.in_flight())
                || leaves_work(c.state(), c.queued(), c.in_flight());
            out.steps_leaving_work += u32::from(left);
            out.states = [r.state(), c.state()];
            out.stats = [r.stats(), c.stats()];
            if out.states[R520_LANE] != LaneState::Running {
                let done = out.done[CYPRESS_LANE].len();
                out.cypress_done_when_r520_stopped.get_or_insert(done);
            }
            Ok(idle)
        })?;
        if idle {
            break;
        }
        if TscClock.now_ns() - start > RUN_TIMEOUT.as_nanos() as u64 {
            defmt::error!("multi-gpu: jobs unfinished after {=u64} s", RUN_TIMEOUT.as_secs());
            return Err(CaseError::Check("multi-gpu: every job finishes"));
        }
        core::hint::spin_loop();
    }
    for lane in [R520_LANE, CYPRESS_LANE] {
        let s = out.stats[lane];
        defmt::info!(
            "multi-gpu: lane {=usize}: {} {=usize} done, {=u32} refused; {}",
            lane,
            out.states[lane],
            out.done[lane].len(),
            out.refused[lane],
            s
        );
    }
    Ok(out)
}

/// Remove the handlers and the lanes (drivers shut down by their drop).
fn tear_down(found: &Found) {
    found.r5xx.set_irq_handler(None);
    found.evergreen.0.set_irq_handler(None);
    x86_64::instructions::interrupts::without_interrupts(|| {
        *R520.lock() = None;
        *CYPRESS.lock() = None;
    });
}

/// Every job of `lane` completed by interrupt, in order, its result checked (at completion).
fn all_by_interrupt(out: &Outcome, lane: usize, what: &'static str) -> Result<(), CaseError> {
    let done = &out.done[lane];
    expect_eq(what, done.len() as u64, u64::from(JOBS))?;
    let in_order = done.iter().enumerate().all(|(i, d)| d.job.0 == i as u32);
    expect("... in submission order", in_order)?;
    expect("... every one succeeded", done.iter().all(|d| d.result.is_ok()))?;
    expect("... every one by its interrupt", done.iter().all(|d| d.by_interrupt))?;
    expect_eq("... none by a deadline's poll", out.stats[lane].completed_by_poll, 0u64)?;
    Ok(())
}

/// Both GPUs found and brought up, [`JOBS`] jobs on each run through the scheduler; the
/// Cypress's fills in the returned memory.
fn run_case(
    kernel: &Kernel,
    cypress_held: u32,
) -> Result<(Found, DmaBuffer<'static, IdentityDma>, Outcome), CaseError> {
    let found = attach(kernel)?;
    let fills = DmaBuffer::allocate(kernel.dma, DmaLayout::new(JOBS as usize * FILL_BYTES, 256)?)?;
    fills.zero();
    set_up(kernel, &found)?;
    let out = run_jobs(&fills, cypress_held)?;
    defmt::info!(
        "multi-gpu: mailbox requests: R520 {=u64}, Cypress {=u64}",
        found.r5xx.requests(),
        found.evergreen.0.requests()
    );
    Ok((found, fills, out))
}

/// Every Cypress fill equals the CPU's value, now.
fn check_fills(fills: &DmaRegion) -> Result<(), CaseError> {
    for i in 0..JOBS {
        if let Some(word) = fill_mismatch(fills, i)? {
            return expect_eq("Cypress fill", word, VALUE_BASE + i);
        }
    }
    expect("Cypress: every fill equals the CPU's", true)
}

/// `multi-gpu-schedule`: the scheduler interleaves jobs on the R520 (scratch writes) and the
/// Cypress (CP DMA fills), completion by interrupt, each result checked by the CPU at its
/// completion and all again at the end.
pub fn schedule(kernel: &Kernel) -> Result<(), CaseError> {
    let (found, fills, out) = run_case(kernel, JOBS)?;

    // Interleaved: the first step (both windows empty, both queues full) alternates strictly;
    // every step is round-robin and leaves neither lane with a job it could take, so a GPU runs
    // ahead only while the other's in-flight window is full. How far ahead is the GPUs' pace,
    // not the scheduler's: an end-of-pipe fence may stay pending long after its CP read the
    // ring, so the R520's scratch writes may run hundreds of jobs ahead of the Cypress's
    // fills (logged, not bounded).
    let first = out.submitted.iter().take(2 * DEPTH);
    expect(
        "first step alternates R520, Cypress",
        first.enumerate().all(|(i, &l)| l == (i % 2) as u8),
    )?;
    let (mut a, mut b) = (0i64, 0i64);
    let mut ahead = 0;
    for &l in &out.submitted {
        if l == 0 {
            a += 1
        } else {
            b += 1
        }
        ahead = ahead.max((a - b).abs());
    }
    defmt::info!(
        "multi-gpu: {=usize} submissions, most one GPU ran ahead: {=i64}",
        out.submitted.len(),
        ahead
    );
    expect_eq("steps not round-robin", out.steps_not_round_robin, 0u32)?;
    expect_eq("steps leaving a lane work it could take", out.steps_leaving_work, 0u32)?;
    all_by_interrupt(&out, R520_LANE, "R520 jobs done")?;
    all_by_interrupt(&out, CYPRESS_LANE, "Cypress jobs done")?;

    // All the results again, at the end.
    x86_64::instructions::interrupts::without_interrupts(|| {
        let guard = R520.lock();
        let r = guard.as_ref().ok_or(CaseError::Check("R520 lane"))?;
        for i in JOBS - SCRATCH_REGS as u32..JOBS {
            let reg = i as usize % SCRATCH_REGS;
            let seen = r.queue().scratch_writeback(USER_SCRATCH + reg).unwrap_or(0);
            if seen != VALUE_BASE + i {
                return expect_eq("R520 last scratch writes", seen, VALUE_BASE + i);
            }
        }
        expect("R520: the last write of each scratch register is in memory", true)
    })?;
    check_fills(&fills)?;
    tear_down(&found);
    Ok(())
}

/// `multi-gpu-one-dies`: as `multi-gpu-schedule`, with the R520's model aborting mid-run (the
/// runner starts it with `--die-after-requests`): the Cypress's jobs all complete by interrupt
/// with their results checked; the R520's lane is gone, its jobs in flight failed with
/// `DeviceGone` on its timeline, none pending, its queued jobs not run.
pub fn one_dies(kernel: &Kernel) -> Result<(), CaseError> {
    // The Cypress's second half waits for the R520's lane to stop: however the two GPUs' paces
    // and the death's request fall, the Cypress runs jobs after the R520 was found gone.
    let (found, fills, out) = run_case(kernel, JOBS / 2)?;

    all_by_interrupt(&out, CYPRESS_LANE, "Cypress jobs done although the R520 died")?;
    expect_eq("steps leaving a lane work it could take", out.steps_leaving_work, 0u32)?;
    check_fills(&fills)?;

    let r = &out.done[R520_LANE];
    expect("R520 lane is gone", out.states[R520_LANE] == LaneState::Gone)?;
    let before = out.cypress_done_when_r520_stopped.unwrap_or(JOBS as usize);
    defmt::info!(
        "multi-gpu: Cypress jobs done when the R520 was found gone: {=usize} of {=u32}",
        before,
        JOBS
    );
    let after = out.cypress_enqueued_after_r520_stopped;
    defmt::info!("multi-gpu: Cypress jobs enqueued after the R520 was found gone: {=u32}", after);
    expect(
        "the Cypress's held jobs (at least) enqueued after the R520 was found gone, all done",
        after >= JOBS - JOBS / 2,
    )?;
    let ok = r.iter().take_while(|d| d.result.is_ok()).count();
    let gone = Err(JobError::Failed(FenceFailure::DeviceGone));
    let failed = r.iter().filter(|d| d.result == gone).count();
    let not_run = r.iter().filter(|d| d.result == Err(JobError::NotRun(LaneState::Gone))).count();
    defmt::info!(
        "multi-gpu: R520 jobs: {=usize} done before it died, {=usize} in flight failed (DeviceGone), {=usize} queued not run, {=u32} refused",
        ok,
        failed,
        not_run,
        out.refused[R520_LANE]
    );
    expect("R520 died mid-run: some of its jobs completed first", ok > 0)?;
    expect("... and its jobs in flight failed with DeviceGone", failed > 0)?;
    expect(
        "... every job accounted for, in order (done, failed, not run)",
        ok + failed + not_run == r.len(),
    )?;
    expect_eq(
        "... or refused",
        r.len() as u64 + u64::from(out.refused[R520_LANE]),
        u64::from(JOBS),
    )?;
    x86_64::instructions::interrupts::without_interrupts(|| {
        let guard = R520.lock();
        let lane = guard.as_ref().ok_or(CaseError::Check("R520 lane"))?;
        for d in r.iter().filter(|d| d.result == gone) {
            let Some(fence) = d.fence else { return expect("a failed job has its fence", false) };
            let status = lane.fence_status(&fence);
            if status != FenceStatus::Failed(FenceFailure::DeviceGone) {
                defmt::error!("R520 job {=u32}: fence {} is {}", d.job.0, fence, status);
                return expect("every dead fence failed with DeviceGone", false);
            }
        }
        expect("R520: its failed jobs' fences read Failed(DeviceGone)", true)?;
        expect_eq("R520: no fence left pending", lane.queue().timeline().outstanding(), 0u64)
    })?;
    tear_down(&found);
    Ok(())
}
