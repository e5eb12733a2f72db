//! Completion: the V3D writes nothing back to memory, so the driver counts what finished
//! from its 8-bit counters (frames rendered, `V3D_RFC`, Table 57; user programs completed,
//! `V3D_SRQCS.QPURQCC`, Table 68), extended to 64 bits, and a fence signals once every
//! render job and user program submitted before it is complete. Frames complete in order;
//! user programs run at once on several QPUs and complete in any order, so a completion count
//! says which programs are done only when it equals the count of programs started
//! (`QPURQCM` requests made less `QPURQL` still queued, the same read): nothing is running
//! then. Waits service the binner's out-of-memory condition from the overflow pool while
//! they poll.

use core::cell::Cell;
use core::time::Duration;

use baregpu_gpu::Fence;
use baregpu_gpu::wait::{self, FenceSource};
use baregpu_hal::time::Clock;
use baregpu_hal::{RegisterIo, RegisterIoExt};
use baregpu_regs::vc4::v3d::{
    V3D_BFC, V3D_BPOA, V3D_BPOS, V3D_CT0CS, V3D_CT0PC, V3D_CT1CS, V3D_CT1PC, V3D_INTCTL, V3D_PCS,
    V3D_RFC, V3D_SRQCS,
};

use super::{V3d, check_alive};
use crate::error::{DeviceGone, WaitError};

/// Fences outstanding at most (the driver's fence table).
pub const FENCE_SLOTS: usize = 64;

/// An 8-bit hardware counter extended to 64 bits: exact while fewer than 256 events happen
/// between two reads, which the driver's limits keep (one render job in flight, 16 queued
/// programs).
#[derive(Debug, Default)]
pub(crate) struct Extended {
    last_raw: Cell<u8>,
    total: Cell<u64>,
}

impl Extended {
    /// Record a reading of the counter, which cannot pass `most` (the events the driver
    /// started). A reading that would is no progress: the counter was cleared underneath the
    /// driver (a platform or function reset of the V3D) and went back, which the wrapping
    /// difference would count as up to 255 events; the reading becomes the new origin and the
    /// work in flight stays pending (a reset then fails its fences). Not told apart: a clear
    /// whose wrapped difference fits the work in flight (the counter was 255 with one frame
    /// in flight).
    fn observe(&self, raw: u8, most: u64) -> u64 {
        let delta = u64::from(raw.wrapping_sub(self.last_raw.get()));
        self.last_raw.set(raw);
        if self.total.get() + delta <= most {
            self.total.set(self.total.get() + delta);
        }
        self.total.get()
    }

    fn get(&self) -> u64 {
        self.total.get()
    }

    /// The hardware counter was cleared: it reads 0 again, and `total` events are done.
    fn restart(&self, total: u64) {
        self.last_raw.set(0);
        self.total.set(total);
    }
}

/// What was submitted and what the counters say completed.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    /// Binning lists finished (`V3D_BFC`).
    pub(crate) binned: Extended,
    /// Frames rendered (`V3D_RFC`).
    pub(crate) rendered: Extended,
    /// User programs completed (`V3D_SRQCS.QPURQCC`), in any order.
    pub(crate) programs_done: Extended,
    /// User program requests the queue took (`V3D_SRQCS.QPURQCM`).
    pub(crate) programs_made: Extended,
    /// User programs known complete in queue order: every program up to this count.
    pub(crate) programs_settled: Cell<u64>,
    /// Render jobs started.
    pub(crate) jobs: Cell<u64>,
    /// User programs queued.
    pub(crate) programs: Cell<u64>,
}

impl Counters {
    /// The hardware counters were cleared: what was submitted counts as done.
    pub(crate) fn restart(&self) {
        self.binned.restart(self.jobs.get());
        self.rendered.restart(self.jobs.get());
        self.programs_done.restart(self.programs.get());
        self.programs_made.restart(self.programs.get());
        self.programs_settled.set(self.programs.get());
    }

    /// Record a `V3D_SRQCS` reading: completions, requests made, requests still queued.
    fn observe_programs(&self, srq: V3D_SRQCS) {
        let done = self.programs_done.observe(srq.qpurqcc(), self.programs.get());
        // Requests made are not bounded by the programs queued (a request the queue refused
        // may count): a cleared counter overcounts them, which only holds the programs
        // pending until the reset that follows restarts the counters.
        let made = self.programs_made.observe(srq.qpurqcm(), u64::MAX);
        let started = made.saturating_sub(u64::from(srq.qpurql()));
        // Every started program complete: none is running, so all of the first `done` are.
        if done >= started && done > self.programs_settled.get() {
            self.programs_settled.set(done);
        }
    }
}

/// A fence waiting for its counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Pending {
    seq: u64,
    jobs: u64,
    programs: u64,
}

/// Fences in submission order, each with the render job and program counts it waits for.
#[derive(Debug)]
pub(crate) struct FenceTable {
    slots: [Cell<Option<Pending>>; FENCE_SLOTS],
    head: Cell<usize>,
    len: Cell<usize>,
    /// The last fence found complete.
    completed: Cell<u64>,
}

impl Default for FenceTable {
    fn default() -> Self {
        FenceTable {
            slots: core::array::from_fn(|_| Cell::new(None)),
            head: Cell::new(0),
            len: Cell::new(0),
            completed: Cell::new(0),
        }
    }
}

impl FenceTable {
    pub(crate) fn free(&self) -> usize {
        FENCE_SLOTS - self.len.get()
    }

    /// Record fence `seq`, signalled once `jobs` render jobs and `programs` user programs
    /// completed. The caller checked [`free`](Self::free).
    pub(crate) fn push(&self, seq: u64, jobs: u64, programs: u64) {
        let at = (self.head.get() + self.len.get()) % FENCE_SLOTS;
        self.slots[at].set(Some(Pending { seq, jobs, programs }));
        self.len.set(self.len.get() + 1);
    }

    /// Retire the fences whose counts are reached; the last one retired is returned (or the
    /// last retired before).
    fn retire(&self, jobs: u64, programs: u64) -> u64 {
        while self.len.get() > 0 {
            let head = self.head.get();
            match self.slots[head].get() {
                Some(p) if p.jobs <= jobs && p.programs <= programs => {
                    self.completed.set(p.seq);
                    self.slots[head].set(None);
                    self.head.set((head + 1) % FENCE_SLOTS);
                    self.len.set(self.len.get() - 1);
                }
                _ => break,
            }
        }
        self.completed.get()
    }

    /// Forget every pending fence (a reset: they are failed on the timeline).
    pub(crate) fn clear(&self, completed: u64) {
        for slot in &self.slots {
            slot.set(None);
        }
        self.len.set(0);
        self.completed.set(completed);
    }
}

impl<IO: RegisterIo, C: Clock> V3d<'_, IO, C> {
    /// Read the counters (skipping a register that reads all-ones), refill the binner if it
    /// ran out of memory, retire the fences whose work completed; returns the last fence
    /// completed.
    pub(crate) fn read_counters(&self) -> u64 {
        self.service_out_of_memory();
        let bfc = self.io.read::<V3D_BFC>();
        let rfc = self.io.read::<V3D_RFC>();
        let srq = self.io.read::<V3D_SRQCS>();
        let jobs = self.counters.jobs.get();
        if bfc.raw() != u32::MAX {
            self.counters.binned.observe(bfc.bmfct(), jobs);
        }
        if rfc.raw() != u32::MAX {
            self.counters.rendered.observe(rfc.rmfct(), jobs);
        }
        if srq.raw() != u32::MAX {
            self.counters.observe_programs(srq);
        }
        self.fences.retire(self.counters.rendered.get(), self.counters.programs_settled.get())
    }

    /// Render jobs whose frame was fully stored (`V3D_RFC` extended).
    pub fn frames_rendered(&self) -> u64 {
        self.read_counters();
        self.counters.rendered.get()
    }

    /// Binning lists flushed (`V3D_BFC` extended).
    pub fn binnings_flushed(&self) -> u64 {
        self.read_counters();
        self.counters.binned.get()
    }

    /// User programs completed (`V3D_SRQCS.QPURQCC` extended).
    pub fn programs_completed(&self) -> u64 {
        self.read_counters();
        self.counters.programs_done.get()
    }

    /// Whether the last render job submitted has rendered its frame.
    pub(crate) fn render_idle(&self) -> bool {
        self.read_counters();
        self.counters.rendered.get() >= self.counters.jobs.get()
    }

    /// The binner ran out of memory (`V3D_PCS.BMOOM`, Table 55): give it the pool's next
    /// block, address first (`V3D_BPOA`) then size (`V3D_BPOS`, which clears BMOOM, Table
    /// 55), then acknowledge the level-triggered OUTOMEM interrupt (Table 75). With no block
    /// left the binner stays halted and [`WaitError::OverflowPoolExhausted`] is reported.
    pub(crate) fn service_out_of_memory(&self) {
        let pcs = self.io.read::<V3D_PCS>();
        if pcs.raw() == u32::MAX || !pcs.bmoom() {
            return;
        }
        let Some((address, size)) = self.pool.as_ref().and_then(|p| p.take()) else {
            self.pool_exhausted.set(true);
            return;
        };
        // The pool checked that its blocks sit below 4 GiB (they are within one 256 MiB
        // window of a 32-bit bus address).
        let Ok(bpoa) = V3D_BPOA::RESET.try_with_bmpoa(address) else {
            self.pool_exhausted.set(true);
            return;
        };
        self.io.write(bpoa);
        self.io.write(V3D_BPOS::RESET.with_bmpos(size));
        self.io.write(V3D_INTCTL::RESET.with_int_outomem(true));
    }

    /// Withdraw any overflow block the binner has not taken (`BPOA`, then `BPOS` = 0, as
    /// older Linux vc4 did before each binning job) and give the pool's blocks back.
    pub(crate) fn withdraw_overflow(&self) {
        self.io.write(V3D_BPOA::RESET);
        self.io.write(V3D_BPOS::RESET);
        if let Some(pool) = &self.pool {
            pool.reset();
        }
        self.pool_exhausted.set(false);
    }

    /// Wait for `fence`, at most `timeout`, refilling the binner from the overflow pool while
    /// it polls. Ends early with [`WaitError::OverflowPoolExhausted`] when the binner needs
    /// memory the pool does not have, [`WaitError::ControlListError`] when a control list
    /// thread stopped with an error, `DeviceGone` when the device reads all-ones.
    pub fn wait(&self, fence: &Fence, timeout: Duration) -> Result<(), WaitError> {
        wait::wait_with(self, &self.timeline, &self.clock, fence, timeout, || self.health())
    }

    /// What ends a wait early.
    fn health(&self) -> Option<WaitError> {
        if let Err(gone) = check_alive(&self.io) {
            return Some(WaitError::from(gone));
        }
        if self.pool_exhausted.get() {
            let blocks = self.pool.as_ref().map_or(0, |p| p.handed_out());
            return Some(WaitError::OverflowPoolExhausted { blocks });
        }
        if self.io.read::<V3D_CT0CS>().cterr() {
            return Some(WaitError::ControlListError { thread: 0 });
        }
        if self.io.read::<V3D_CT1CS>().cterr() {
            return Some(WaitError::ControlListError { thread: 1 });
        }
        None
    }
}

impl<IO: RegisterIo, C: Clock> FenceSource for V3d<'_, IO, C> {
    fn read_completed(&self) -> u64 {
        self.read_counters()
    }

    /// Primitives left in the lists being executed and the frame and program counts: they
    /// move while the V3D works.
    fn progress_marker(&self) -> u64 {
        let pc0 = u64::from(self.io.read::<V3D_CT0PC>().raw());
        let pc1 = u64::from(self.io.read::<V3D_CT1PC>().raw());
        let counts = self.counters.rendered.get() + self.counters.programs_done.get();
        pc0 ^ (pc1 << 32) ^ counts.rotate_left(16)
    }

    fn check_alive(&self) -> Result<(), DeviceGone> {
        check_alive(&self.io)
    }
}
