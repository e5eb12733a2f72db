//! A compute dispatch: thread groups split into waves of 64 threads, run one bounded step at a
//! time so the command processor's tick never does unbounded guest-controlled work.

use super::error::{Location, ShaderError, ShaderErrorKind as E};
use super::isa::flag;
use super::memory::ShaderMemory;
use super::state::{DispatchState, Limits, WAVE_SIZE};
use super::wave::{Ctx, Gprs, Progress, Wave};

/// Counters of a dispatch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Work units run (see [`Limits`]).
    pub units: u64,
    /// Waves completed.
    pub waves: u64,
    /// ALU groups executed (per wave).
    pub alu_groups: u64,
    /// Vertex fetch instructions executed (per wave).
    pub fetches: u64,
    /// Thread fetches that fell outside their buffer and read zero.
    pub fetches_out_of_range: u64,
    /// RAT export instructions executed (per wave).
    pub rat_exports: u64,
    /// Dwords stored or atomically updated through RATs.
    pub rat_dwords: u64,
    /// RAT dwords dropped because they fell outside the surface.
    pub rat_dropped: u64,
}

/// Outcome of [`Dispatch::step`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepResult {
    /// Work remains; call again.
    Running,
    /// Every wave finished.
    Done,
    /// The dispatch stopped with an error (sticky: later steps return it again).
    Error(ShaderError),
}

#[derive(Debug, Clone, Copy)]
enum Status {
    Running,
    Done,
    Failed(ShaderError),
}

/// One dispatch in flight. Groups run in x, then y, then z order, the waves of a group in
/// order; waves run one after the other (nothing in the subset lets waves communicate except
/// RAT atomics, which are order-independent).
#[derive(Debug, Clone)]
pub struct Dispatch {
    state: DispatchState,
    limits: Limits,
    gprs: Gprs,
    wave: Option<Wave>,
    next_group: [u32; 3],
    next_wave: u32,
    exhausted: bool,
    stats: Stats,
    status: Status,
}

impl Dispatch {
    /// Check `state` (group size, GPR count, LDS size) and prepare the first wave. A grid with a
    /// zero dimension is done at once (the hardware launches no group).
    pub fn new(state: DispatchState, limits: Limits) -> Result<Self, ShaderError> {
        state.validate().map_err(|kind| ShaderError { kind, at: None })?;
        let exhausted = state.groups.contains(&0);
        Ok(Self {
            state,
            limits,
            gprs: vec![[[0; 64]; 4]; 128],
            wave: None,
            next_group: [0; 3],
            next_wave: 0,
            exhausted,
            stats: Stats::default(),
            status: if exhausted { Status::Done } else { Status::Running },
        })
    }

    /// The state the dispatch runs with.
    pub fn state(&self) -> &DispatchState {
        &self.state
    }

    /// Counters so far.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// Run at most `budget` work units (one instruction for one wave: a CF instruction, an ALU
    /// group, a vertex fetch, a RAT export).
    pub fn step(&mut self, mem: &mut dyn ShaderMemory, budget: u64) -> StepResult {
        match self.status {
            Status::Done => return StepResult::Done,
            Status::Failed(e) => return StepResult::Error(e),
            Status::Running => {}
        }
        let mut used = 0;
        while used < budget {
            if self.wave.is_none() && !self.start_wave() {
                self.status = Status::Done;
                return StepResult::Done;
            }
            let Some(wave) = self.wave.as_mut() else { break };
            let at = Location { group: wave.group, wave: wave.index, cf: wave.cf };
            if self.stats.units >= self.limits.dispatch_units {
                return self
                    .fail(E::DispatchBudgetExceeded { limit: self.limits.dispatch_units }, at);
            }
            if wave.units >= self.limits.wave_units {
                return self.fail(E::WaveBudgetExceeded { limit: self.limits.wave_units }, at);
            }
            wave.units += 1;
            self.stats.units += 1;
            used += 1;
            let mut ctx =
                Ctx { state: &self.state, mem, gprs: &mut self.gprs, stats: &mut self.stats };
            match wave.step(&mut ctx) {
                Ok(Progress::Continue) => {}
                Ok(Progress::Finished) => {
                    self.wave = None;
                    self.stats.waves += 1;
                }
                Err(kind) => {
                    let at = Location { group: wave.group, wave: wave.index, cf: wave.cf };
                    return self.fail(kind, at);
                }
            }
        }
        if self.wave.is_none() && self.exhausted {
            self.status = Status::Done;
            return StepResult::Done;
        }
        StepResult::Running
    }

    fn fail(&mut self, kind: E, at: Location) -> StepResult {
        let e = ShaderError { kind, at: Some(at) };
        self.status = Status::Failed(e);
        StepResult::Error(e)
    }

    /// Start the next wave: zero its GPRs and load the thread start state as
    /// [`DispatchState::input_cntl`] describes.
    fn start_wave(&mut self) -> bool {
        if self.exhausted {
            return false;
        }
        let s = &self.state;
        let [lx, ly, _] = s.num_threads;
        let threads = s.group_threads();
        let first = self.next_wave * WAVE_SIZE;
        let n = (threads - first).min(WAVE_SIZE);
        let valid = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
        let regs = s.num_gprs().max(2) as usize;
        for r in &mut self.gprs[..regs] {
            *r = [[0; 64]; 4];
        }
        for t in 0..n as usize {
            let lin = first + t as u32;
            if flag(s.input_cntl, 0) {
                let id = [lin % lx, (lin / lx) % ly, lin / (lx * ly)];
                for (c, v) in id.into_iter().enumerate() {
                    self.gprs[0][c][t] = v;
                }
            }
            if flag(s.input_cntl, 1) {
                for c in 0..3 {
                    self.gprs[1][c][t] = self.next_group[c];
                }
            }
        }
        self.wave = Some(Wave::new(self.next_group, self.next_wave, valid));
        // Advance the cursor.
        self.next_wave += 1;
        if self.next_wave * WAVE_SIZE >= threads {
            self.next_wave = 0;
            let g = &mut self.next_group;
            let dims = s.groups;
            g[0] += 1;
            if g[0] == dims[0] {
                g[0] = 0;
                g[1] += 1;
                if g[1] == dims[1] {
                    g[1] = 0;
                    g[2] += 1;
                    if g[2] == dims[2] {
                        self.exhausted = true;
                    }
                }
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The command processor keeps a dispatch in its model state, which the framework moves
    /// between threads.
    #[test]
    fn dispatch_is_send() {
        fn send<T: Send>() {}
        send::<Dispatch>();
    }
}
