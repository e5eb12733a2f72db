//! One wave of 64 threads: the CF program, ALU clauses, fetch clauses and RAT exports, one work
//! unit at a time.
//!
//! # Active mask and stack (decisions; the documents give no CF semantics)
//!
//! Every thread is active or not; the stack holds PUSH entries (the active mask before the push)
//! and loop entries (the mask at loop start, the threads that broke out and the threads that
//! continued). The behaviour is the one Mesa's and LLVM's if/else/loop sequences rely on:
//! - `JUMP` jumps to ADDR, popping POP_COUNT entries, when no active thread passes COND; `PUSH`
//!   pushes, keeps the threads passing COND and does the same when none is left; `ELSE` makes
//!   active the threads of the stack top that are not active now (minus those that left the
//!   innermost loop), and jumps like `JUMP` when none is. POP_COUNT only applies when the jump
//!   is taken (LLVM's `JUMP`/`ELSE` with POP_COUNT 1 skip past the closing `POP`).
//! - `POP` pops POP_COUNT entries; the active mask becomes the last popped one, minus threads
//!   that broke out of (or continued) the innermost loop. It continues with the next
//!   instruction (Mesa and LLVM point ADDR there).
//! - `LOOP_START_DX10` ignores the loop constants (Mesa's r600 compiler records that this form,
//!   unlike the other LOOP_START variants, does not read them and is not capped at 4095
//!   iterations): the loop runs until every thread has broken, and a runaway loop ends on the
//!   wave budget.
//!   `LOOP_START_NO_AL` takes its trip count from loop constant CF_CONST (COUNT 11:0; Mesa's
//!   160 = 0x01000FFF is 4095 iterations). With no active thread, or a count of 0, both jump to
//!   ADDR (the instruction after LOOP_END) without pushing.
//! - `LOOP_BREAK` / `LOOP_CONTINUE` deactivate the threads passing COND until the loop ends /
//!   the next iteration; when no thread of the loop is left to run, they jump to ADDR (the
//!   LOOP_END), discarding the entries above the loop entry. `LOOP_END` starts the next
//!   iteration at ADDR with every thread that did not break (while the trip count lasts), or
//!   pops the loop and restores the mask the loop started with.
//! - An ALU clause runs with the mask it started with; PRED_SET* with UPDATE_EXEC_MASK sets the
//!   new mask (threads passing) when the clause ends, before ALU_POP_AFTER / ALU_ELSE_AFTER (a
//!   Mesa r600 sb scheduling fix relies on the new mask covering everything after the clause).
//! - Stack capacity: a PUSH entry is one element, a loop four (one full entry); SQ_PGM_RESOURCES
//!   STACK_SIZE entries hold four elements each (Mesa's accounting for Evergreen/Cayman).
//!   Needing more is [`E::StackOverflow`].

use super::alu::{eval, result_modifiers, source_modifiers};
use super::decode::{
    AluCf, AluCfKind, AluGroup, CfInst, Cond, FetchFormat, Flow, FlowOp, RatExport, RatOp, Src,
    VtxFetch, decode_cf, decode_clause, decode_vtx,
};
use super::error::ShaderErrorKind as E;
use super::isa::{AluOp, src_sel};
use super::memory::{Path, ShaderMemory};
use super::state::{BufferResource, CS_RESOURCE_COUNT, DispatchState, RAT_COUNT, RatSurface};
use super::{PredSel, Stats};

/// Registers of one wave: 128 GPRs x 4 channels x 64 threads.
pub(crate) type Gprs = Vec<[[u32; 64]; 4]>;

/// Threads of a wave.
const LANES: usize = 64;

#[derive(Debug, Clone, Copy)]
struct LoopFrame {
    entry: u64,
    broken: u64,
    continued: u64,
    remaining: Option<u32>,
}

#[derive(Debug, Clone, Copy)]
enum Frame {
    Push(u64),
    Loop(LoopFrame),
}

impl Frame {
    fn elements(&self) -> u32 {
        match self {
            Frame::Push(_) => 1,
            Frame::Loop(_) => 4,
        }
    }
}

#[derive(Debug, Clone)]
struct AluRun {
    cf: AluCf,
    groups: Vec<AluGroup>,
    next: usize,
    pv: [[u32; LANES]; 4],
    pv_valid: [bool; 4],
    ps: [u32; LANES],
    ps_valid: bool,
    /// Kcache sets 0 and 1: 32 constants of 4 channels each.
    kcache: [[[u32; 4]; 32]; 2],
    exec_update: Option<u64>,
}

#[derive(Debug, Clone)]
enum Phase {
    Cf,
    Alu(Box<AluRun>),
    Fetch { addr: u32, next: u32, count: u32, eop: bool },
}

/// Whether the wave goes on.
pub(crate) enum Progress {
    Continue,
    Finished,
}

/// What a wave reads and writes besides its own state.
pub(crate) struct Ctx<'a> {
    pub state: &'a DispatchState,
    pub mem: &'a mut dyn ShaderMemory,
    pub gprs: &'a mut Gprs,
    pub stats: &'a mut Stats,
}

/// One wave in flight.
#[derive(Debug, Clone)]
pub(crate) struct Wave {
    /// Thread-group id.
    pub group: [u32; 3],
    /// Wave index in the group.
    pub index: u32,
    /// Work units run.
    pub units: u64,
    /// CF index of the instruction being executed (for error locations).
    pub cf: u32,
    active: u64,
    pred: u64,
    stack: Vec<Frame>,
    stack_elements: u32,
    pc: u32,
    phase: Phase,
}

fn lanes(mask: u64) -> impl Iterator<Item = usize> {
    (0..LANES).filter(move |t| mask >> t & 1 != 0)
}

fn gpr_check(gpr: u32, state: &DispatchState) -> Result<usize, E> {
    if gpr >= state.num_gprs() {
        return Err(E::GprOutOfRange { gpr, num_gprs: state.num_gprs() });
    }
    Ok(gpr as usize)
}

/// A resolved ALU source: per-thread values or one value for all.
enum Operand<'a> {
    Lanes(&'a [u32; LANES]),
    Uniform(u32),
}

impl Operand<'_> {
    fn get(&self, t: usize) -> u32 {
        match self {
            Operand::Lanes(v) => v[t],
            Operand::Uniform(v) => *v,
        }
    }
}

impl Wave {
    /// A wave whose `valid` threads start active at the first CF instruction.
    pub fn new(group: [u32; 3], index: u32, valid: u64) -> Self {
        Self {
            group,
            index,
            units: 0,
            cf: 0,
            active: valid,
            pred: 0,
            stack: Vec::new(),
            stack_elements: 0,
            pc: 0,
            phase: Phase::Cf,
        }
    }

    /// Run one work unit.
    pub fn step(&mut self, ctx: &mut Ctx<'_>) -> Result<Progress, E> {
        match core::mem::replace(&mut self.phase, Phase::Cf) {
            Phase::Cf => self.cf_instruction(ctx),
            Phase::Alu(mut run) => {
                let group = run.groups[run.next].clone();
                self.alu_group(ctx, &mut run, &group)?;
                ctx.stats.alu_groups += 1;
                run.next += 1;
                if run.next == run.groups.len() {
                    self.end_alu_clause(&run)?;
                } else {
                    self.phase = Phase::Alu(run);
                }
                Ok(Progress::Continue)
            }
            Phase::Fetch { addr, next, count, eop } => {
                let at = ctx.state.program_address() + u64::from(addr) * 8 + u64::from(next) * 16;
                let mut w = [0u32; 4];
                for (k, word) in w.iter_mut().enumerate() {
                    *word = ctx.mem.read_u32_via(Path::Instruction, at + 4 * k as u64)?;
                }
                let fetch = decode_vtx(w, ctx.state.chip)?;
                self.vertex_fetch(ctx, &fetch)?;
                ctx.stats.fetches += 1;
                if next + 1 < count {
                    self.phase = Phase::Fetch { addr, next: next + 1, count, eop };
                } else if eop {
                    return Ok(Progress::Finished);
                }
                Ok(Progress::Continue)
            }
        }
    }

    fn cf_instruction(&mut self, ctx: &mut Ctx<'_>) -> Result<Progress, E> {
        self.cf = self.pc;
        let at = ctx.state.program_address() + u64::from(self.pc) * 8;
        let (w0, w1) = (
            ctx.mem.read_u32_via(Path::Instruction, at)?,
            ctx.mem.read_u32_via(Path::Instruction, at + 4)?,
        );
        let decoded = decode_cf(w0, w1, ctx.state.chip)?;
        // Wrapping: a runaway program walks off into memory that faults, never into a panic.
        self.pc = self.pc.wrapping_add(1);
        match decoded.inst {
            CfInst::Nop | CfInst::WaitAck => {}
            CfInst::End => return Ok(Progress::Finished),
            CfInst::Fetch { addr, count } => {
                if addr % 2 != 0 {
                    return Err(E::MisalignedFetchClause(addr));
                }
                self.phase = Phase::Fetch { addr, next: 0, count, eop: decoded.end_of_program };
                return Ok(Progress::Continue);
            }
            CfInst::Alu(cf) => {
                self.start_alu_clause(ctx, cf)?;
                return Ok(Progress::Continue);
            }
            CfInst::Flow(f) => self.flow(ctx.state, f)?,
            CfInst::Rat(r) => self.rat_export(ctx, &r)?,
        }
        Ok(if decoded.end_of_program { Progress::Finished } else { Progress::Continue })
    }

    // ---- stack ----

    fn push(&mut self, frame: Frame, state: &DispatchState) -> Result<(), E> {
        let elements = self.stack_elements + frame.elements();
        if elements > state.stack_size() * 4 {
            return Err(E::StackOverflow { entries: state.stack_size() });
        }
        self.stack_elements = elements;
        self.stack.push(frame);
        Ok(())
    }

    fn pop_frame(&mut self) -> Option<Frame> {
        let f = self.stack.pop()?;
        self.stack_elements -= f.elements();
        Some(f)
    }

    /// Threads out of the innermost loop's current iteration.
    fn loop_exclusions(&self) -> u64 {
        self.stack
            .iter()
            .rev()
            .find_map(|f| match f {
                Frame::Loop(l) => Some(l.broken | l.continued),
                Frame::Push(_) => None,
            })
            .unwrap_or(0)
    }

    fn pop_n(&mut self, n: u32) -> Result<(), E> {
        let mut last = None;
        for _ in 0..n {
            match self.stack.last() {
                Some(Frame::Push(m)) => last = Some(*m),
                Some(Frame::Loop(_)) => return Err(E::StackMismatch),
                None => return Err(E::StackUnderflow),
            }
            self.pop_frame();
        }
        if let Some(m) = last {
            self.active = m & !self.loop_exclusions();
        }
        Ok(())
    }

    fn else_op(&mut self) -> Result<(), E> {
        let top = match self.stack.last() {
            Some(Frame::Push(m)) => *m,
            Some(Frame::Loop(_)) => return Err(E::StackMismatch),
            None => return Err(E::StackUnderflow),
        };
        self.active = top & !self.active & !self.loop_exclusions();
        Ok(())
    }

    fn innermost_loop(&self) -> Result<usize, E> {
        self.stack.iter().rposition(|f| matches!(f, Frame::Loop(_))).ok_or(E::NotInLoop)
    }

    fn cond_mask(state: &DispatchState, f: &Flow, mask: u64) -> u64 {
        let b = state.bool_consts >> (f.cf_const & 31) & 1 != 0;
        match f.cond {
            Cond::Active => mask,
            Cond::AlwaysFalse => 0,
            Cond::Bool if b => mask,
            Cond::NotBool if !b => mask,
            Cond::Bool | Cond::NotBool => 0,
        }
    }

    fn flow(&mut self, state: &DispatchState, f: Flow) -> Result<(), E> {
        match f.op {
            FlowOp::Jump => {
                if Self::cond_mask(state, &f, self.active) == 0 {
                    self.pop_n(f.pop_count)?;
                    self.pc = f.addr;
                }
            }
            FlowOp::Push => {
                self.push(Frame::Push(self.active), state)?;
                self.active = Self::cond_mask(state, &f, self.active);
                if self.active == 0 {
                    self.pop_n(f.pop_count)?;
                    self.pc = f.addr;
                }
            }
            FlowOp::Else => {
                self.else_op()?;
                self.active = Self::cond_mask(state, &f, self.active);
                if self.active == 0 {
                    self.pop_n(f.pop_count)?;
                    self.pc = f.addr;
                }
            }
            FlowOp::Pop => self.pop_n(f.pop_count)?,
            FlowOp::LoopStartDx10 | FlowOp::LoopStartNoAl => {
                let remaining = match f.op {
                    FlowOp::LoopStartNoAl => {
                        Some(state.loop_consts[(f.cf_const & 31) as usize] & 0xFFF)
                    }
                    _ => None,
                };
                if self.active == 0 || remaining == Some(0) {
                    self.pc = f.addr;
                } else {
                    let frame =
                        LoopFrame { entry: self.active, broken: 0, continued: 0, remaining };
                    self.push(Frame::Loop(frame), state)?;
                }
            }
            FlowOp::LoopEnd => {
                let lf = match self.stack.last_mut() {
                    Some(Frame::Loop(l)) => l,
                    Some(Frame::Push(_)) => return Err(E::StackMismatch),
                    None => return Err(E::NotInLoop),
                };
                lf.continued = 0;
                if let Some(r) = lf.remaining.as_mut() {
                    *r -= 1;
                }
                let live = lf.entry & !lf.broken;
                if live != 0 && lf.remaining != Some(0) {
                    self.active = live;
                    self.pc = f.addr;
                } else {
                    let entry = lf.entry;
                    self.pop_frame();
                    self.active = entry & !self.loop_exclusions();
                }
            }
            FlowOp::LoopBreak | FlowOp::LoopContinue => {
                let idx = self.innermost_loop()?;
                let leaving = Self::cond_mask(state, &f, self.active);
                let Frame::Loop(lf) = &mut self.stack[idx] else { return Err(E::NotInLoop) };
                if f.op == FlowOp::LoopBreak {
                    lf.broken |= leaving;
                } else {
                    lf.continued |= leaving;
                }
                let live = lf.entry & !lf.broken & !lf.continued;
                self.active &= !leaving;
                if live == 0 {
                    while self.stack.len() > idx + 1 {
                        self.pop_frame();
                    }
                    self.pc = f.addr;
                }
            }
        }
        Ok(())
    }

    // ---- ALU clauses ----

    fn start_alu_clause(&mut self, ctx: &mut Ctx<'_>, cf: AluCf) -> Result<(), E> {
        let base = ctx.state.program_address() + u64::from(cf.addr) * 8;
        let mut words = vec![0u32; cf.slots as usize * 2];
        for (k, w) in words.iter_mut().enumerate() {
            *w = ctx.mem.read_u32_via(Path::Instruction, base + 4 * k as u64)?;
        }
        let groups = decode_clause(&words, ctx.state.chip)?;
        let mut run = Box::new(AluRun {
            cf,
            groups,
            next: 0,
            pv: [[0; LANES]; 4],
            pv_valid: [false; 4],
            ps: [0; LANES],
            ps_valid: false,
            kcache: [[[0; 4]; 32]; 2],
            exec_update: None,
        });
        // Lock the kcache lines: constant k of bank b is 16 bytes at
        // SQ_ALU_CONST_CACHE_LS_b * 256 + 16k. Constants past SQ_ALU_CONST_BUFFER_SIZE_LS_b read
        // as 0 (the buffer's bound, as out-of-range fetches).
        for (set, kc) in cf.kcache.iter().enumerate() {
            let b = kc.bank as usize;
            let cb_base = u64::from(ctx.state.const_cache[b]) << 8;
            let cb_consts = u64::from(ctx.state.const_size[b]) * 16;
            for i in 0..kc.constants {
                let k = u64::from(kc.first + i);
                if k < cb_consts {
                    for c in 0..4 {
                        run.kcache[set][i as usize][c] = ctx
                            .mem
                            .read_u32_via(Path::Constant, cb_base + k * 16 + 4 * c as u64)?;
                    }
                }
            }
        }
        if cf.kind == AluCfKind::PushBefore {
            self.push(Frame::Push(self.active), ctx.state)?;
        }
        self.phase = Phase::Alu(run);
        Ok(())
    }

    fn end_alu_clause(&mut self, run: &AluRun) -> Result<(), E> {
        if let Some(m) = run.exec_update {
            self.active = m;
        }
        match run.cf.kind {
            AluCfKind::PopAfter(n) => self.pop_n(n),
            AluCfKind::ElseAfter => self.else_op(),
            AluCfKind::Plain | AluCfKind::PushBefore => Ok(()),
        }
    }

    fn operand<'a>(
        &self,
        s: &Src,
        state: &DispatchState,
        gprs: &'a Gprs,
        run: &'a AluRun,
        group: &AluGroup,
    ) -> Result<Operand<'a>, E> {
        let chan = usize::from(s.chan);
        Ok(match s.sel {
            0..=src_sel::GPR_LAST => Operand::Lanes(&gprs[gpr_check(s.sel, state)?][chan]),
            src_sel::KCACHE0..src_sel::KCACHE_END => {
                let set = ((s.sel - src_sel::KCACHE0) / 32) as usize;
                let index = (s.sel - src_sel::KCACHE0) % 32;
                if index >= run.cf.kcache[set].constants {
                    return Err(E::KcacheNotLocked { set: set as u8, index: index as u8 });
                }
                Operand::Uniform(run.kcache[set][index as usize][chan])
            }
            src_sel::ZERO => Operand::Uniform(0),
            src_sel::ONE => Operand::Uniform(0x3F80_0000),
            src_sel::ONE_INT => Operand::Uniform(1),
            src_sel::M_ONE_INT => Operand::Uniform(u32::MAX),
            src_sel::HALF => Operand::Uniform(0x3F00_0000),
            src_sel::LITERAL => Operand::Uniform(group.literals[chan]),
            src_sel::PV => {
                if !run.pv_valid[chan] {
                    return Err(E::ForwardUnavailable { sel: s.sel, chan: s.chan });
                }
                Operand::Lanes(&run.pv[chan])
            }
            src_sel::PS => {
                if !run.ps_valid {
                    return Err(E::ForwardUnavailable { sel: s.sel, chan: s.chan });
                }
                Operand::Lanes(&run.ps)
            }
            // The decoder refuses every other select.
            other => return Err(E::UnsupportedSrcSel(other)),
        })
    }

    /// One instruction group: every slot reads its sources before any slot writes (VLIW), PV
    /// and PS then hold this group's results for the next group.
    fn alu_group(
        &mut self,
        ctx: &mut Ctx<'_>,
        run: &mut AluRun,
        group: &AluGroup,
    ) -> Result<(), E> {
        let state = ctx.state;
        let mut results = [[0u32; LANES]; 5];
        let mut passed = [0u64; 5];
        for (slot, inst) in group.slots.iter().enumerate() {
            let Some(inst) = inst else { continue };
            if inst.op == AluOp::Nop {
                continue;
            }
            let ops = inst
                .sources()
                .iter()
                .map(|s| self.operand(s, state, ctx.gprs, run, group))
                .collect::<Result<Vec<_>, E>>()?;
            let srcs = inst.sources();
            for (t, result) in results[slot].iter_mut().enumerate() {
                let mut v = [0u32; 3];
                for (k, o) in ops.iter().enumerate() {
                    v[k] = source_modifiers(o.get(t), &srcs[k]);
                }
                let (r, p) = eval(inst.op, v[0], v[1], v[2]);
                *result = result_modifiers(r, inst, state.dx10_clamp());
                if p == Some(true) {
                    passed[slot] |= 1 << t;
                }
            }
        }
        // Writes, predicate and exec-mask updates.
        for (slot, inst) in group.slots.iter().enumerate() {
            let Some(inst) = inst else { continue };
            if inst.op == AluOp::Nop {
                continue;
            }
            let runs = self.active
                & match inst.pred_sel {
                    PredSel::Off => u64::MAX,
                    PredSel::Zero => !self.pred,
                    PredSel::One => self.pred,
                };
            if inst.writes_gpr() {
                let dst = gpr_check(inst.dst_gpr, state)?;
                let chan = usize::from(inst.dst_chan);
                for t in lanes(runs) {
                    ctx.gprs[dst][chan][t] = results[slot][t];
                }
            }
            if inst.update_pred {
                self.pred = (self.pred & !runs) | (passed[slot] & runs);
            }
            if inst.update_exec_mask {
                run.exec_update = Some((self.active & !runs) | (passed[slot] & runs));
            }
        }
        for (chan, result) in results.iter().take(4).enumerate() {
            run.pv_valid[chan] = matches!(group.slots[chan], Some(i) if i.op != AluOp::Nop);
            if run.pv_valid[chan] {
                run.pv[chan] = *result;
            }
        }
        run.ps_valid = matches!(group.slots[4], Some(i) if i.op != AluOp::Nop);
        if run.ps_valid {
            run.ps = results[4];
        }
        Ok(())
    }

    // ---- memory ----

    /// Vertex fetch from a buffer resource: element address = base + index * STRIDE + OFFSET (Mesa
    /// evergreen_state.c and the LLVM R600 loads agree). An element not wholly inside the buffer
    /// (W1 = bytes - 1) reads as all zero before the swizzles, like D3D10 out-of-bounds buffer
    /// loads (the hardware bounds check; CLAMP_X is not modelled). Components the format lacks read
    /// as 0 (y, z) and 1 (w). The resource's DST_SEL (word 3) applies first, then the
    /// instruction's; 7 leaves the destination channel unwritten.
    fn vertex_fetch(&mut self, ctx: &mut Ctx<'_>, f: &VtxFetch) -> Result<(), E> {
        let state = ctx.state;
        if f.buffer_id as usize >= CS_RESOURCE_COUNT {
            return Err(E::ResourceOutOfRange(f.buffer_id));
        }
        let words = state.resources.get(f.buffer_id as usize).copied().unwrap_or([0; 8]);
        let res = BufferResource::parse(&words, f.buffer_id)?;
        let fmt = if f.use_const_fields {
            FetchFormat::new(res.data_format, res.num_format)?
        } else {
            FetchFormat::new(f.data_format, f.num_format)?
        };
        let src = gpr_check(f.src_gpr, state)?;
        let dst = gpr_check(f.dst_gpr, state)?;
        let one = if fmt.float { 0x3F80_0000 } else { 1 };
        let pick = |v: &[u32; 4], s: u32| match s {
            0..=3 => v[s as usize],
            4 => 0,
            _ => one,
        };
        let bytes = u64::from(fmt.components) * 4;
        for t in lanes(self.active) {
            let index = u64::from(ctx.gprs[src][usize::from(f.src_chan)][t]);
            let offset = index * res.stride + u64::from(f.offset);
            let mut raw = [0u32; 4];
            if offset + bytes <= res.size {
                let address = res.base + offset;
                if address % 4 != 0 {
                    return Err(E::UnalignedFetch { buffer: f.buffer_id, address });
                }
                raw[3] = one;
                for (c, r) in raw.iter_mut().take(fmt.components as usize).enumerate() {
                    *r = ctx.mem.read_u32_via(Path::Fetch, address + 4 * c as u64)?;
                }
            } else {
                ctx.stats.fetches_out_of_range += 1;
            }
            let v = [0, 1, 2, 3].map(|c| pick(&raw, res.dst_sel[c]));
            for c in 0..4 {
                if f.dst_sel[c] != 7 {
                    ctx.gprs[dst][c][t] = pick(&v, f.dst_sel[c]);
                }
            }
        }
        Ok(())
    }

    /// RAT export (amd-evergreen-cayman §8.6) to the dword array of CB_COLOR[RAT_ID]. Threads
    /// write in thread order. A dword at or beyond the surface's (WIDTH_MAX + 1) x
    /// (HEIGHT_MAX + 1) elements is dropped, as D3D11 requires of out-of-bounds UAV writes (the
    /// model counts them in [`Stats::rat_dropped`]).
    fn rat_export(&mut self, ctx: &mut Ctx<'_>, r: &RatExport) -> Result<(), E> {
        let state = ctx.state;
        if r.rat as usize >= RAT_COUNT {
            return Err(E::RatIdOutOfRange(r.rat));
        }
        let surface = RatSurface::parse(&state.rats[r.rat as usize], r.rat, r.op == RatOp::Add)?;
        let data = gpr_check(r.rw_gpr, state)?;
        let index_gpr = gpr_check(r.index_gpr, state)?;
        let path = if r.cached { Path::Rat { cb: r.rat as u8 } } else { Path::RatCacheless };
        for t in lanes(self.active) {
            let index = u64::from(ctx.gprs[index_gpr][0][t]);
            match r.op {
                RatOp::Store => {
                    for c in (0..4).filter(|c| r.comp_mask >> c & 1 != 0) {
                        let e = index + c as u64;
                        if e < surface.elements {
                            ctx.mem.write_u32_via(
                                path,
                                surface.base + 4 * e,
                                ctx.gprs[data][c][t],
                            )?;
                            ctx.stats.rat_dwords += 1;
                        } else {
                            ctx.stats.rat_dropped += 1;
                        }
                    }
                }
                RatOp::Add => {
                    if index < surface.elements {
                        let at = surface.base + 4 * index;
                        // The CB performs the atomic (§8.6): it reads what its cache holds.
                        let old = ctx.mem.read_u32_via(path, at)?;
                        ctx.mem.write_u32_via(path, at, old.wrapping_add(ctx.gprs[data][0][t]))?;
                        ctx.stats.rat_dwords += 1;
                    } else {
                        ctx.stats.rat_dropped += 1;
                    }
                }
            }
        }
        ctx.stats.rat_exports += 1;
        Ok(())
    }
}
