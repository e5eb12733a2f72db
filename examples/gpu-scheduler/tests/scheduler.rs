//! The scheduler over an emulated R520 and an emulated Cypress in-process, as the two-GPU QEMU
//! cases run them: jobs interleaved round-robin, completion by interrupt (the test hands each
//! device's asserted interrupt line to its lane's `on_interrupt` and then acknowledges the
//! line, as the test kernel's MSI-X handler does), every result checked by the CPU, a hung GPU
//! reset, a lost GPU's fences failed while the other GPU's work completes.

use std::time::{Duration, Instant};

use baregpu_firmware::amd::evergreen::{EvergreenFirmware, EvergreenUcode};
use baregpu_gpu::{FenceFailure, FenceStatus, GpuQueue};
use baregpu_hal::dma::{BusAddress, DmaBuffer, DmaLayout};
use baregpu_radeon_evergreen::{Evergreen, RingConfig as EvergreenRing};
use baregpu_radeon_r5xx::consts::USER_SCRATCH;
use baregpu_radeon_r5xx::{R5xx, RingConfig};
use baregpu_regs::evergreen::Chipset;
use evergreen_model::{Asic, EvergreenModel};
use gpu_device_model::{GpuModel, InProcess, ModelClock, Pacing};
use gpu_scheduler::radeon::{CheckedWrite, FILL_BYTES};
use gpu_scheduler::{
    Completion, Done, Engine, Event, JobError, JobId, Lane, LaneState, RefuseReason, Scheduler,
    Work,
};
use r5xx_model::R5xxModel;

type R5xxGpu = InProcess<R5xxModel>;
type EvergreenGpu = InProcess<EvergreenModel>;
type R520 = R5xx<'static, &'static R5xxGpu, ModelClock<'static, R5xxModel>, R5xxGpu>;
type Cypress =
    Evergreen<'static, &'static EvergreenGpu, ModelClock<'static, EvergreenModel>, EvergreenGpu>;

/// User scratch registers an R520 job may write (`SCRATCH_REG2..7`).
const SCRATCH_REGS: usize = 6;
/// Per-job deadline (the scheduler's time, see [`Timebase`]).
const JOB_TIMEOUT: Duration = Duration::from_millis(20);
/// Simulated time per turn of the test's main loop under request-paced engines.
const TURN_NS: u64 = 10_000;

type Job = CheckedWrite;

fn read_firmware(file: &str) -> Vec<u8> {
    let path = format!("/lib/firmware/{file}");
    std::fs::read(&path).unwrap_or_else(|e| {
        panic!("{path}: {e}; install it with `bash scripts/setup.sh` (firmware-amd-graphics)")
    })
}

/// An emulated R520 (leaked, so the helpers can hand out drivers that borrow it) and its
/// driver.
fn r520() -> (&'static R5xxGpu, R520) {
    let gpu: &'static R5xxGpu = Box::leak(Box::new(InProcess::new(R5xxModel::new()).unwrap()));
    let fw = read_firmware("radeon/R520_cp.bin");
    let driver = R5xx::init(gpu, ModelClock::new(gpu), gpu, &fw, RingConfig::default()).unwrap();
    (gpu, driver)
}

/// An emulated Cypress (leaked), its driver, and DMA memory for `jobs` fills.
fn cypress(jobs: usize) -> (&'static EvergreenGpu, Cypress, DmaBuffer<'static, EvergreenGpu>) {
    let gpu: &'static EvergreenGpu =
        Box::leak(Box::new(InProcess::new(EvergreenModel::new(Asic::Cypress)).unwrap()));
    let ucode = &EvergreenUcode::CYPRESS;
    let images = [ucode.pfp_file(), ucode.me_file(), ucode.rlc_file()].map(read_firmware);
    let fw = EvergreenFirmware::parse(ucode, &images[0], &images[1], &images[2]).unwrap();
    let clock = ModelClock::new(gpu);
    let driver =
        Evergreen::init(gpu, clock, gpu, Chipset::CYPRESS, &fw, EvergreenRing::default()).unwrap();
    let layout = DmaLayout::new(jobs * FILL_BYTES, 256).unwrap();
    let memory = DmaBuffer::allocate(gpu, layout).unwrap();
    memory.zero();
    (gpu, driver, memory)
}

fn set_r5xx_faults(gpu: &R5xxGpu, f: impl FnOnce(&mut r5xx_model::Faults)) {
    let mut faults = gpu.model().faults();
    f(&mut faults);
    gpu.model_mut().set_faults(faults);
}

fn set_evergreen_faults(gpu: &EvergreenGpu, f: impl FnOnce(&mut evergreen_model::Faults)) {
    let mut faults = gpu.model().faults();
    f(&mut faults);
    gpu.model_mut().set_faults(faults);
}

/// Job `i` of a lane whose fills go to `memory`.
fn job(i: u32, memory: &DmaBuffer<'_, EvergreenGpu>) -> Job {
    let fill = BusAddress(memory.bus_address().0 + u64::from(i) * FILL_BYTES as u64);
    Job { reg: i as usize % SCRATCH_REGS, value: 0x5C00_0000 + i, fill }
}

/// Job `i`'s fill is in memory.
fn filled(memory: &DmaBuffer<'_, EvergreenGpu>, i: u32) -> bool {
    let base = i as usize * FILL_BYTES;
    (0..FILL_BYTES / 4).all(|w| memory.read_u32(base + 4 * w).unwrap() == 0x5C00_0000 + i)
}

/// The device side of a lane: its engines run when time passes, its interrupt line.
trait Device {
    fn poll(&self);
    fn lines(&self) -> u32;
    fn ack(&self, lines: u32);
    /// Its engines run on the wall clock (`threaded` pacing), not as the test polls.
    fn wall_clocked(&self) -> bool;
}

impl<M: GpuModel> Device for InProcess<M> {
    fn poll(&self) {
        InProcess::poll(self);
    }
    fn wall_clocked(&self) -> bool {
        matches!(self.pacing(), Pacing::Threaded { .. })
    }
    fn lines(&self) -> u32 {
        self.irq_status()
    }
    fn ack(&self, lines: u32) {
        self.ack_irq(lines);
    }
}

/// Both devices, DMA memory for the Cypress's fills, an R520 lane and a Cypress lane.
type Rig<const D: usize> = (
    &'static R5xxGpu,
    &'static EvergreenGpu,
    DmaBuffer<'static, EvergreenGpu>,
    Lane<R520, Job, D>,
    Lane<Cypress, Job, D>,
);

/// Fresh devices, memory for `jobs` fills, both lanes with completion by interrupt.
fn two_lanes<const D: usize>(jobs: usize) -> Rig<D> {
    let ((r5xx, a), (eg, b, memory)) = (r520(), cypress(jobs));
    let lane_a = Lane::new(a, Completion::Interrupt, JOB_TIMEOUT).unwrap();
    let lane_b = Lane::new(b, Completion::Interrupt, JOB_TIMEOUT).unwrap();
    (r5xx, eg, memory, lane_a, lane_b)
}

/// What a run saw.
#[derive(Default)]
struct Run {
    /// Lanes in submission order.
    submitted: Vec<usize>,
    /// Completions in order.
    done: Vec<Done>,
}

impl Run {
    fn of(&self, lane: usize) -> Vec<Done> {
        self.done.iter().filter(|d| d.lane == lane).copied().collect()
    }
}

/// The scheduler's time: [`TURN_NS`] per turn while the engines advance as the test polls
/// them, the wall clock while they run on it (`threaded` pacing: polling makes the engines
/// catch up with it, so a job's deadline still means that long of engine time).
enum Timebase {
    Turns,
    Wall(Instant),
}

impl Timebase {
    fn of(devices: [&dyn Device; 2]) -> Self {
        if devices.iter().any(|d| d.wall_clocked()) {
            Self::Wall(Instant::now())
        } else {
            Self::Turns
        }
    }

    /// The time after a turn that began at `now`.
    fn after_turn(&self, now: u64) -> u64 {
        match self {
            Self::Turns => now + TURN_NS,
            Self::Wall(start) => {
                u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX).max(now)
            }
        }
    }
}

/// Time passes: each device's engines run, its asserted interrupt line goes to its lane, then
/// is acknowledged; one scheduler step.
fn turn(
    scheduler: &mut Scheduler<2>,
    lanes: &mut [&mut dyn Engine<Job>; 2],
    devices: [&dyn Device; 2],
    (time, now): (&Timebase, &mut u64),
    run: &mut Run,
) {
    for (lane, device) in devices.iter().enumerate() {
        device.poll();
        let lines = device.lines();
        if lines != 0 {
            lanes[lane].on_interrupt();
            device.ack(lines);
        }
    }
    *now = time.after_turn(*now);
    assert!(*now < 10_000_000_000, "no progress in 10 s of the scheduler's time");
    scheduler.step(lanes, *now, &mut |event| match event {
        Event::Submitted { lane, .. } => run.submitted.push(lane),
        Event::Completed(done) => run.done.push(done),
    });
}

/// Feed `jobs` jobs per lane (`job(lane, i)`) as room allows, turn until all are done;
/// `before_turn` may change the devices. Returns the jobs the lanes refused as not running.
fn run_jobs(
    lanes: &mut [&mut dyn Engine<Job>; 2],
    devices: [&dyn Device; 2],
    jobs: u32,
    job: impl Fn(usize, u32) -> Job,
    mut before_turn: impl FnMut(&Run),
    run: &mut Run,
) -> usize {
    let mut scheduler = Scheduler::new();
    let time = Timebase::of(devices);
    let mut now = 0;
    let mut next = [0u32; 2];
    let mut refused = 0;
    while next.iter().any(|&n| n < jobs) || Scheduler::busy(lanes) {
        for (lane, n) in next.iter_mut().enumerate() {
            while *n < jobs {
                match lanes[lane].enqueue(JobId(*n), job(lane, *n)) {
                    Ok(()) => *n += 1,
                    Err(r) if r.reason == RefuseReason::Full => break,
                    Err(_) => {
                        refused += 1;
                        *n += 1;
                    }
                }
            }
        }
        before_turn(run);
        turn(&mut scheduler, lanes, devices, (&time, &mut now), run);
    }
    refused
}

#[test]
fn jobs_on_an_r520_and_a_cypress_interleave_and_complete_by_interrupt() {
    const JOBS: u32 = 40;
    let (r5xx, eg, memory, mut lane_a, mut lane_b) = two_lanes::<8>(JOBS as usize);
    let mut run = Run::default();
    let mut checked = 0;
    {
        let mut lanes = [&mut lane_a as &mut dyn Engine<Job>, &mut lane_b];
        let refused = run_jobs(
            &mut lanes,
            [r5xx, eg],
            JOBS,
            |_, i| job(i, &memory),
            // Each Cypress job's fill is in memory by the time its completion is reported.
            |run| {
                for d in &run.of(1)[checked..] {
                    assert!(
                        filled(&memory, d.job.0),
                        "job {} done, its fill not in memory",
                        d.job.0
                    );
                }
                checked = run.of(1).len();
            },
            &mut run,
        );
        assert_eq!(refused, 0);
    }
    // Interleaved: the first step (both windows empty, both queues full) alternates strictly.
    // Afterwards a GPU runs ahead while the other's in-flight window is full, and a fast one
    // may do so by more than the window (under threaded pacing the R520 finished nine jobs
    // while the Cypress's window stayed full), so no bound on the run-ahead is asserted.
    let first: Vec<usize> = run.submitted[..16].to_vec();
    assert_eq!(first, [0, 1].repeat(8), "first step {:?}", run.submitted);
    assert_eq!(run.submitted.len(), 2 * JOBS as usize);
    // Every job done, in order per lane, by interrupt, its fence signalled.
    for (lane, engine) in [&lane_a as &dyn Engine<Job>, &lane_b].into_iter().enumerate() {
        let done = run.of(lane);
        let ids: Vec<u32> = done.iter().map(|d| d.job.0).collect();
        assert_eq!(ids, (0..JOBS).collect::<Vec<_>>(), "lane {lane} completion order");
        assert!(done.iter().all(|d| d.result == Ok(()) && d.by_interrupt), "lane {lane}");
        for d in &done {
            assert_eq!(engine.fence_status(&d.fence.unwrap()), FenceStatus::Signalled);
        }
        let stats = engine.stats();
        assert_eq!(stats.completed_by_interrupt, u64::from(JOBS), "lane {lane}");
        assert_eq!((stats.completed_by_poll, stats.timeouts, stats.failed), (0, 0, 0));
        assert!(stats.interrupts > 0);
    }
    // The results, by the CPU: the R520's last scratch writes, every Cypress fill.
    let driver = lane_a.queue();
    for i in JOBS - SCRATCH_REGS as u32..JOBS {
        let j = job(i, &memory);
        assert_eq!(driver.scratch_writeback(USER_SCRATCH + j.reg), Some(j.value));
    }
    assert!((0..JOBS).all(|i| filled(&memory, i)));
    assert_eq!((r5xx.error_code(), eg.error_code()), (0, 0));
}

#[test]
fn a_lost_gpu_fails_its_fences_and_the_other_completes() {
    const JOBS: u32 = 24;
    const BEFORE_LOSS: usize = 4;
    let (r5xx, eg, memory, mut lane_a, mut lane_b) = two_lanes::<4>(JOBS as usize);
    let mut run = Run::default();
    let refused = {
        let mut lanes = [&mut lane_a as &mut dyn Engine<Job>, &mut lane_b];
        let refused = run_jobs(
            &mut lanes,
            [r5xx, eg],
            JOBS,
            |_, i| job(i, &memory),
            // The Cypress falls off the bus once a few of its jobs completed.
            |run| {
                if run.of(1).len() >= BEFORE_LOSS {
                    set_evergreen_faults(eg, |f| f.registers_all_ones = true);
                }
            },
            &mut run,
        );
        assert_eq!(lanes[1].state(), LaneState::Gone);
        refused
    };
    // The R520's work all completed by interrupt.
    let r = run.of(0);
    assert_eq!(r.len(), JOBS as usize);
    assert!(r.iter().all(|d| d.result == Ok(()) && d.by_interrupt));
    assert_eq!(lane_a.stats().timeouts, 0);
    // The lost Cypress's jobs: the first completed, those in flight failed with DeviceGone on
    // its timeline (none left pending), those still queued never ran, later ones were refused.
    let c = run.of(1);
    assert!(c[..BEFORE_LOSS].iter().all(|d| d.result == Ok(())), "{c:?}");
    let gone = Err(JobError::Failed(FenceFailure::DeviceGone));
    let failed: Vec<&Done> = c.iter().filter(|d| d.result == gone).collect();
    assert!(!failed.is_empty(), "{c:?}");
    for d in &failed {
        let status = lane_b.fence_status(&d.fence.unwrap());
        assert_eq!(status, FenceStatus::Failed(FenceFailure::DeviceGone));
    }
    let not_run = Err(JobError::NotRun(LaneState::Gone));
    assert!(c.iter().all(|d| d.result.is_ok() || d.result == gone || d.result == not_run));
    assert_eq!(c.len() + refused, JOBS as usize, "every Cypress job accounted for");
    assert_eq!(GpuQueue::timeline(lane_b.queue()).outstanding(), 0, "no fence left pending");
}

/// The R520 queue whose soft reset also clears the model's `cp_stall` switch: the model keeps
/// a fault until the harness clears it, where a real hung CP comes back from the reset.
struct ResetUnsticks(R520, &'static R5xxGpu);

impl GpuQueue for ResetUnsticks {
    type Submission<'s> = <R520 as GpuQueue>::Submission<'s>;
    type BuildError = <R520 as GpuQueue>::BuildError;
    type SubmitError = <R520 as GpuQueue>::SubmitError;
    type ResetError = <R520 as GpuQueue>::ResetError;
    const FENCE_UNITS: usize = R520::FENCE_UNITS;

    fn submit<T>(
        &mut self,
        units: usize,
        build: impl FnOnce(&mut Self::Submission<'_>) -> Result<T, Self::BuildError>,
    ) -> Result<T, Self::SubmitError> {
        GpuQueue::submit(&mut self.0, units, build)
    }
    fn fence(s: &mut Self::Submission<'_>) -> Result<baregpu_gpu::Fence, Self::BuildError> {
        R520::fence(s)
    }
    fn timeline(&self) -> &baregpu_gpu::Timeline {
        GpuQueue::timeline(&self.0)
    }
    fn poll_completed(&self) -> u64 {
        GpuQueue::poll_completed(&self.0)
    }
    fn wait(&self, f: &baregpu_gpu::Fence, t: Duration) -> Result<(), baregpu_gpu::FenceError> {
        GpuQueue::wait(&self.0, f, t)
    }
    fn set_fence_interrupts(&mut self, on: bool) -> Result<(), Self::ResetError> {
        GpuQueue::set_fence_interrupts(&mut self.0, on)
    }
    fn handle_interrupts(&mut self) -> Result<u64, baregpu_gpu::DeviceGone> {
        GpuQueue::handle_interrupts(&mut self.0)
    }
    fn reset(&mut self) -> Result<baregpu_gpu::ResetReport, Self::ResetError> {
        set_r5xx_faults(self.1, |f| f.cp_stall = false);
        GpuQueue::reset(&mut self.0)
    }
    fn check_alive(&self) -> Result<(), baregpu_gpu::DeviceGone> {
        GpuQueue::check_alive(&self.0)
    }
    fn stats(&self) -> baregpu_gpu::Stats {
        GpuQueue::stats(&self.0)
    }
}

impl Work<ResetUnsticks> for Job {
    fn units(&self) -> usize {
        <Job as Work<R520>>::units(self)
    }
    fn build(
        &self,
        s: &mut <R520 as GpuQueue>::Submission<'_>,
    ) -> Result<(), <R520 as GpuQueue>::BuildError> {
        <Job as Work<R520>>::build(self, s)
    }
}

#[test]
fn a_hung_gpu_times_out_and_is_reset_then_runs_again() {
    let ((r5xx, a), (eg, b, memory)) = (r520(), cypress(4));
    let a = ResetUnsticks(a, r5xx);
    let mut lane_a: Lane<ResetUnsticks, Job, 4> =
        Lane::new(a, Completion::Interrupt, JOB_TIMEOUT).unwrap();
    let mut lane_b: Lane<Cypress, Job, 4> = Lane::new(b, Completion::Polled, JOB_TIMEOUT).unwrap();
    let mut run = Run::default();
    {
        let mut lanes = [&mut lane_a as &mut dyn Engine<Job>, &mut lane_b];
        set_r5xx_faults(r5xx, |f| f.cp_stall = true);
        run_jobs(&mut lanes, [r5xx, eg], 3, |_, i| job(i, &memory), |_| {}, &mut run);
        lanes[0].enqueue(JobId(3), job(3, &memory)).unwrap();
        run_jobs(&mut lanes, [r5xx, eg], 0, |_, i| job(i, &memory), |_| {}, &mut run);
    }
    let a: Vec<Result<(), JobError>> = run.of(0).iter().map(|d| d.result).collect();
    // The two behind the timed-out job were lost to the reset, or finished first (the CP runs
    // again once unstuck, and the reset protocol does not report finished fences lost;
    // which one depends on the engine pacing).
    let lost = Err(JobError::Failed(FenceFailure::Lost));
    assert_eq!(a.len(), 4, "{a:?}");
    assert_eq!((a[0], a[3]), (Err(JobError::TimedOut), Ok(())), "{a:?}");
    assert!(a[1..3].iter().all(|r| *r == lost || r.is_ok()), "{a:?}");
    assert_eq!((lane_a.stats().timeouts, lane_a.stats().resets), (1, 1));
    assert_eq!(lane_a.state(), LaneState::Running);
    // The polled Cypress was not disturbed.
    let b = run.of(1);
    assert!(b.iter().all(|d| d.result == Ok(()) && !d.by_interrupt) && b.len() == 3);
    assert_eq!(lane_b.stats().completed_by_poll, 3);
    assert!((0..3).all(|i| filled(&memory, i)));
}

#[test]
fn a_gpu_whose_reset_fails_stops_without_hanging_the_other() {
    let (r5xx, eg, memory, mut lane_a, mut lane_b) = two_lanes::<4>(6);
    let mut run = Run::default();
    {
        let mut lanes = [&mut lane_a as &mut dyn Engine<Job>, &mut lane_b];
        // Stalled for good: the reset's ring test fails too. Four jobs fill the R520's
        // in-flight window, two wait in its queue.
        set_r5xx_faults(r5xx, |f| f.cp_stall = true);
        run_jobs(&mut lanes, [r5xx, eg], 6, |_, i| job(i, &memory), |_| {}, &mut run);
        let refused = lanes[0].enqueue(JobId(6), job(6, &memory)).unwrap_err();
        assert_eq!(refused.reason, RefuseReason::NotRunning(LaneState::Stopped));
    }
    let a: Vec<Result<(), JobError>> = run.of(0).iter().map(|d| d.result).collect();
    let failed = Err(JobError::ResetFailed);
    let not_run = Err(JobError::NotRun(LaneState::Stopped));
    assert_eq!(a, [Err(JobError::TimedOut), failed, failed, failed, not_run, not_run]);
    assert_eq!(lane_a.state(), LaneState::Stopped);
    let b = run.of(1);
    assert!(b.iter().all(|d| d.result == Ok(()) && d.by_interrupt) && b.len() == 6);
    assert!((0..6).all(|i| filled(&memory, i)));
}

/// A device whose interrupts never reach the lane (a handler not installed, a masked vector).
struct NoInterrupts<'a>(&'a dyn Device);

impl Device for NoInterrupts<'_> {
    fn poll(&self) {
        self.0.poll();
    }
    fn lines(&self) -> u32 {
        0
    }
    fn ack(&self, _: u32) {}
    fn wall_clocked(&self) -> bool {
        self.0.wall_clocked()
    }
}

#[test]
fn a_lost_interrupt_is_caught_by_the_deadline_poll_without_a_reset() {
    let (r5xx, eg, memory, mut lane_a, mut lane_b) = two_lanes::<4>(3);
    let mut run = Run::default();
    {
        let mut lanes = [&mut lane_a as &mut dyn Engine<Job>, &mut lane_b];
        let deaf = NoInterrupts(r5xx);
        run_jobs(&mut lanes, [&deaf, eg], 3, |_, i| job(i, &memory), |_| {}, &mut run);
    }
    // The R520's jobs finished on the GPU; the lane learnt it at the first deadline.
    let a = run.of(0);
    assert!(a.iter().all(|d| d.result == Ok(()) && !d.by_interrupt) && a.len() == 3, "{a:?}");
    let stats = lane_a.stats();
    assert_eq!((stats.completed_by_poll, stats.interrupts), (3, 0));
    assert_eq!((stats.timeouts, stats.resets), (0, 0), "a finished job is no timeout");
    assert!(run.of(1).iter().all(|d| d.result == Ok(()) && d.by_interrupt));
}

#[test]
fn a_silent_lost_gpu_is_found_gone_at_the_deadline() {
    // Like a model process that died: no interrupt, no answer. Only the deadline notices.
    let (r5xx, eg, memory, mut lane_a, mut lane_b) = two_lanes::<4>(8);
    let mut run = Run::default();
    {
        let mut lanes = [&mut lane_a as &mut dyn Engine<Job>, &mut lane_b];
        set_r5xx_faults(r5xx, |f| {
            f.cp_stall = true;
            f.registers_all_ones = true;
        });
        let deaf = NoInterrupts(r5xx);
        run_jobs(&mut lanes, [&deaf, eg], 8, |_, i| job(i, &memory), |_| {}, &mut run);
    }
    let gone = Err(JobError::Failed(FenceFailure::DeviceGone));
    let not_run = Err(JobError::NotRun(LaneState::Gone));
    let a: Vec<Result<(), JobError>> = run.of(0).iter().map(|d| d.result).collect();
    assert_eq!(a, [gone, gone, gone, gone, not_run, not_run, not_run, not_run]);
    assert_eq!(
        (lane_a.state(), lane_a.stats().timeouts, lane_a.stats().resets),
        (LaneState::Gone, 1, 0)
    );
    assert_eq!(GpuQueue::timeline(lane_a.queue()).outstanding(), 0);
    let b = run.of(1);
    assert!(b.iter().all(|d| d.result == Ok(()) && d.by_interrupt) && b.len() == 8);
}
