//! Submission, all or nothing: the closure stages render jobs, user programs and fences in a
//! [`Submission`] (nothing touches the device); then the driver waits, bounded, until the
//! device can take the whole batch (the previous render job rendered, room in the user
//! program queue and the fence table) and only then writes the registers that start it.
//! A failed closure or wait leaves the device untouched and takes the fence numbers back.

use baregpu_gpu::liveness::{Unfinished, poll_healthy};
use baregpu_gpu::{Allowance, Fence, Timeline};
use baregpu_hal::time::{Clock, TimedOut};
use baregpu_hal::{RegisterIo, RegisterIoExt};
use baregpu_regs::vc4::v3d::v3d_ct0cs::Ctrun as Ctrun0;
use baregpu_regs::vc4::v3d::v3d_ct1cs::Ctrun as Ctrun1;
use baregpu_regs::vc4::v3d::{
    V3D_CT0CA, V3D_CT0CS, V3D_CT0EA, V3D_CT1CA, V3D_CT1CS, V3D_CT1EA, V3D_SRQCS,
};

use super::V3d;
use super::check_alive;
use super::fences::FENCE_SLOTS;
use crate::error::{BuildError, DeviceGone, SubmitError};
use crate::job::{self, BuiltJob, JobMemory, RenderJob, UntrustedJob, UntrustedMemory};
use crate::program::{Request, SRQ_DEPTH, UserProgram};

/// Where the control lists given to [`Submission::render_lists`] come from: the API flag that
/// decides whether the validator runs.
#[derive(Debug, Clone, Copy)]
pub enum ListOrigin<'a> {
    /// Built by this driver's writer ([`job::build`]): trusted, staged as they are.
    DriverWriter(BuiltJob),
    /// A binning list from anyone else (a user program): validated against the buffers it
    /// names before anything is staged.
    Untrusted {
        /// The list, its buffers and frame.
        job: UntrustedJob<'a>,
        /// Where the driver puts the validated copy and the rendering list.
        memory: UntrustedMemory<'a>,
    },
}

/// Items (render jobs, user programs, fences) one submission holds at most.
pub const MAX_BATCH_ITEMS: usize = 32;

#[derive(Debug, Clone, Copy, Default)]
enum Item {
    #[default]
    Empty,
    Render(BuiltJob),
    Program(Request),
    Fence(u64),
}

/// The staged items of the submission being built.
#[derive(Debug, Default)]
pub(crate) struct Staged {
    items: [Item; MAX_BATCH_ITEMS],
    len: usize,
}

impl Staged {
    fn clear(&mut self) {
        self.len = 0;
    }

    fn iter(&self) -> impl Iterator<Item = &Item> {
        self.items[..self.len].iter()
    }

    fn count(&self, f: impl Fn(&Item) -> bool) -> usize {
        self.iter().filter(|i| f(i)).count()
    }
}

/// One batch being built: render jobs (at most one, the control list executor runs one
/// frame at a time), user programs (at most the queue's 16) and fences, in order. Each item
/// takes one unit of the submission's reservation.
pub struct Submission<'s> {
    staged: &'s mut Staged,
    timeline: &'s mut Timeline,
    allowance: Allowance,
}

impl Submission<'_> {
    fn stage(&mut self, item: Item) -> Result<(), BuildError> {
        if self.allowance.take(1).is_err() || self.staged.len == MAX_BATCH_ITEMS {
            let overrun = self.allowance.overrun().unwrap_or(baregpu_gpu::Overrun {
                reserved: MAX_BATCH_ITEMS,
                attempted: MAX_BATCH_ITEMS + 1,
            });
            return Err(BuildError::Overrun(overrun));
        }
        self.staged.items[self.staged.len] = item;
        self.staged.len += 1;
        Ok(())
    }

    /// Build `job`'s control lists, shader record and vertices into `memory`
    /// ([`job::build`]) and stage the job.
    pub fn render(
        &mut self,
        job: &RenderJob<'_>,
        memory: &JobMemory<'_>,
    ) -> Result<BuiltJob, BuildError> {
        if self.staged.count(|i| matches!(i, Item::Render(_))) > 0 {
            return Err(BuildError::OneRenderJobPerSubmission);
        }
        let built = job::build(job, memory)?;
        self.stage(Item::Render(built))?;
        Ok(built)
    }

    /// Stage lists built elsewhere, saying where they come from: lists of this driver's
    /// writer are staged as they are; an untrusted binning list is validated, copied and
    /// given the driver's rendering list first ([`job::build_untrusted`]), and a refused one
    /// stages nothing (`JobError::Rejected`), so it never reaches the device.
    pub fn render_lists(&mut self, origin: ListOrigin<'_>) -> Result<BuiltJob, BuildError> {
        if self.staged.count(|i| matches!(i, Item::Render(_))) > 0 {
            return Err(BuildError::OneRenderJobPerSubmission);
        }
        let built = match origin {
            ListOrigin::DriverWriter(built) => built,
            ListOrigin::Untrusted { job, memory } => job::build_untrusted(&job, &memory)?,
        };
        self.stage(Item::Render(built))?;
        Ok(built)
    }

    /// Stage a QPU user program request.
    pub fn program(&mut self, program: &UserProgram) -> Result<(), BuildError> {
        let request = program.request()?;
        if self.staged.count(|i| matches!(i, Item::Program(_))) >= SRQ_DEPTH as usize {
            return Err(BuildError::TooManyPrograms);
        }
        self.stage(Item::Program(request))
    }

    /// A fence: signalled once every render job and user program before it (in this and
    /// earlier submissions) completed.
    pub fn fence(&mut self) -> Result<Fence, BuildError> {
        let seq = self.timeline.peek_next();
        self.stage(Item::Fence(seq))?;
        Ok(self.timeline.emit())
    }
}

impl<IO: RegisterIo, C: Clock> V3d<'_, IO, C> {
    /// One batch of at most `units` items, all or nothing: `build` stages render jobs, user
    /// programs and fences; then the driver waits (bounded by `submit_timeout`) until the
    /// device can take all of it and starts it. A failed or overrunning `build`, or a wait
    /// that times out, leaves the device untouched and the fence numbers unused.
    pub fn submit<T>(
        &mut self,
        units: usize,
        build: impl FnOnce(&mut Submission<'_>) -> Result<T, BuildError>,
    ) -> Result<T, SubmitError> {
        check_alive(&self.io)?;
        if units > MAX_BATCH_ITEMS {
            return Err(SubmitError::Overrun(baregpu_gpu::Overrun {
                reserved: MAX_BATCH_ITEMS,
                attempted: units,
            }));
        }
        let checkpoint = self.timeline.checkpoint();
        self.staged.clear();
        let mut s = Submission {
            staged: &mut self.staged,
            timeline: &mut self.timeline,
            allowance: Allowance::new(units),
        };
        let built = build(&mut s);
        let failure = match (built, s.allowance.overrun()) {
            (_, Some(overrun)) => SubmitError::Overrun(overrun),
            (Err(e), None) => SubmitError::from(e),
            (Ok(value), None) => match self.commit() {
                Ok(()) => return Ok(value),
                // Started in part: the fences stay and signal once what was queued completed.
                Err(SubmitError::QueueError) => return Err(SubmitError::QueueError),
                Err(e) => e,
            },
        };
        self.staged.clear();
        self.timeline.rollback(checkpoint);
        self.stats.discarded += 1;
        Err(failure)
    }

    /// Render `job` into `memory` and fence it: one submission.
    pub fn render(
        &mut self,
        job: &RenderJob<'_>,
        memory: &JobMemory<'_>,
    ) -> Result<Fence, SubmitError> {
        self.submit(2, |s| {
            s.render(job, memory)?;
            s.fence()
        })
    }

    /// Queue `program` and fence it: one submission.
    pub fn run_program(&mut self, program: &UserProgram) -> Result<Fence, SubmitError> {
        self.submit(2, |s| {
            s.program(program)?;
            s.fence()
        })
    }

    /// Wait until the device can take everything staged, then start it in order.
    fn commit(&mut self) -> Result<(), SubmitError> {
        let renders = self.staged.count(|i| matches!(i, Item::Render(_)));
        let programs = self.staged.count(|i| matches!(i, Item::Program(_)));
        let fences = self.staged.count(|i| matches!(i, Item::Fence(_)));
        if renders > 0 {
            self.wait_until(|v| v.render_idle()).map_err(|e| e.into_submit(SubmitError::Busy))?;
        }
        if programs > 0 {
            self.wait_until(|v| {
                let queued = u32::from(v.io.read::<V3D_SRQCS>().qpurql());
                queued + programs as u32 <= SRQ_DEPTH
            })
            .map_err(|e| e.into_submit(SubmitError::QueueFull))?;
        }
        if fences > 0 {
            self.wait_until(|v| {
                v.read_counters();
                v.fences.free() >= fences
            })
            .map_err(|e| e.into_submit(SubmitError::FencesFull))?;
        }
        debug_assert!(fences <= FENCE_SLOTS);
        // Nothing was written so far; from here on every item reaches the device. The caches
        // do not snoop memory: cleared once before any list, shader, program or uniform the
        // CPU may have rewritten is fetched (a user program's uniforms share cache lines with
        // the previous program's).
        if renders > 0 || programs > 0 {
            self.clear_caches();
        }
        let items = self.staged.items;
        let len = self.staged.len;
        self.staged.clear();
        let mut result = Ok(());
        for item in &items[..len] {
            match *item {
                Item::Render(built) => self.start_job(&built),
                Item::Program(request) => {
                    if result.is_ok() {
                        result = self.queue_program(&request);
                    }
                }
                Item::Fence(seq) => {
                    self.fences.push(seq, self.counters.jobs.get(), self.counters.programs.get())
                }
                Item::Empty => {}
            }
        }
        self.stats.submissions += 1;
        result
    }

    /// Poll `ready` until it holds, at most `submit_timeout`, checking the device answers.
    fn wait_until(
        &self,
        mut ready: impl FnMut(&Self) -> bool,
    ) -> Result<(), Unfinished<DeviceGone>> {
        poll_healthy(
            &self.clock,
            self.config.submit_timeout,
            || ready(self).then_some(()),
            || check_alive(&self.io).err(),
        )
    }

    /// Start a render job (Linux vc4_gem.c's order, after the caches were cleared): the
    /// previous job's overflow memory withdrawn, then thread 0 (binning) and thread 1 (rendering) each
    /// stopped (`CTnCS.CTRUN` written 1, Table 49: "Writing 1 stops the thread"), given
    /// its list's start (`CTnCA`) and then its end (`CTnEA`), which starts it (Table 50).
    /// Rendering waits for the binner's semaphore in the list itself.
    fn start_job(&mut self, built: &BuiltJob) {
        self.withdraw_overflow();
        self.counters.jobs.set(self.counters.jobs.get() + 1);
        // Addresses were checked to fit 32 bits by the list writer's relocation.
        let (Ok(ca0), Ok(ea0), Ok(ca1), Ok(ea1)) = (
            V3D_CT0CA::RESET.try_with_ctlca(built.binning.start),
            V3D_CT0EA::RESET.try_with_ctlea(built.binning.end),
            V3D_CT1CA::RESET.try_with_ctlca(built.rendering.start),
            V3D_CT1EA::RESET.try_with_ctlea(built.rendering.end),
        ) else {
            return;
        };
        self.io.write(V3D_CT0CS::RESET.with_ctrun(Ctrun0::Running));
        self.io.write(ca0);
        self.io.write(ea0);
        self.io.write(V3D_CT1CS::RESET.with_ctrun(Ctrun1::Running));
        self.io.write(ca1);
        self.io.write(ea1);
        self.stats.doorbells += 2;
    }

    /// Queue a user program (hello_fft gpu_fft_base.c's order): uniforms address and length
    /// (`V3D_SRQUA`, `V3D_SRQUL`), then the code address (`V3D_SRQPC`), whose write queues
    /// the request (Table 65). A request the queue refused sets `QPURQERR`: cleared and
    /// reported.
    fn queue_program(&mut self, request: &Request) -> Result<(), SubmitError> {
        self.io.write(request.uniforms);
        self.io.write(request.length);
        self.io.write(request.code);
        self.stats.doorbells += 1;
        if self.io.read::<V3D_SRQCS>().qpurqerr() {
            self.io.write(V3D_SRQCS::RESET.with_qpurqerr(true));
            return Err(SubmitError::QueueError);
        }
        self.counters.programs.set(self.counters.programs.get() + 1);
        Ok(())
    }
}

trait IntoSubmit {
    fn into_submit(self, timeout: fn(TimedOut) -> SubmitError) -> SubmitError;
}

impl IntoSubmit for Unfinished<DeviceGone> {
    fn into_submit(self, timeout: fn(TimedOut) -> SubmitError) -> SubmitError {
        match self {
            Unfinished::Unhealthy(gone) => SubmitError::DeviceGone(gone),
            Unfinished::TimedOut(t) => timeout(t),
        }
    }
}
