//! The program builder: CF instructions, clauses and groups in program order, recorded into a
//! caller-provided [`Node`] buffer, then laid out by [`Builder::finish`] into a caller-provided
//! dword buffer. No allocation.
//!
//! Layout (evergreen-compute A4, as Mesa lays programs out): every CF instruction first, in
//! order, 64 bits each; then the clause bodies in program order, ALU clauses packed, fetch
//! clauses starting on a 128-bit boundary (one zero 64-bit slot of padding when needed). CF
//! `ADDR` fields count 64-bit units from the program start; `COUNT` is fetches − 1 for a fetch
//! clause and 64-bit slots (instructions plus literal pairs) − 1 for an ALU clause.
//!
//! Loop addresses follow the rule Mesa quotes from the R600 ISA: `LOOP_START_DX10` points to
//! the CF instruction after its `LOOP_END`, `LOOP_END` to the one after its `LOOP_START_DX10`,
//! `LOOP_BREAK` to the `LOOP_END`. `POP` points to the next instruction. `JUMP`, `PUSH` and
//! `ELSE` take a [`Label`].
//!
//! Every CF instruction sets `BARRIER`: the builder does not track dependencies between
//! clauses, and a clause must not start before the one computing its inputs has finished.
//!
//! A call that returns an error records nothing (it may end the open clause, as any CF
//! instruction would), so a caller may report the error and go on.

use crate::alu::{AluSrc, AluWord, Sel};
use crate::error::{Error, ErrorKind};
use crate::group::{self, Placed};
use crate::isa::{
    AluCfInst, CfAluWord, CfInst, CfWord, Chan, Chip, Kcache, KcacheMode, RatExport, VtxFetch,
};
use crate::program::{AluInst, Src};

/// Labels per program.
pub const MAX_LABELS: usize = 64;
/// Nesting depth of loops.
pub const MAX_LOOP_DEPTH: usize = 16;

/// A jump target, created by [`Builder::new_label`] and placed by [`Builder::bind`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Label(u16);

impl Label {
    pub(crate) const PLACEHOLDER: Label = Label(u16::MAX);
}

/// One recorded program element: storage for [`Builder`] (and [`crate::assemble`]), opaque
/// to callers. A program needs one node per CF instruction, ALU slot instruction, literal
/// group and fetch.
#[derive(Debug, Clone, Copy)]
pub struct Node {
    kind: NodeKind,
    line: u32,
    col: u32,
}

impl Node {
    /// An unused node, to initialise buffers: `[Node::EMPTY; 256]`.
    pub const EMPTY: Node = Node { kind: NodeKind::Empty, line: 0, col: 0 };
}

impl Default for Node {
    fn default() -> Self {
        Node::EMPTY
    }
}

#[derive(Debug, Clone, Copy)]
enum NodeKind {
    Empty,
    Cf(CfNode),
    Alu { placed: Placed, last: bool },
    Literals { values: [u32; 4], n: u8 },
    Fetch(VtxFetch),
}

#[derive(Debug, Clone, Copy)]
enum CfNode {
    Alu { inst: AluCfInst, kcache: [Kcache; 2], slots: u16 },
    Fetch { inst: CfInst, count: u8 },
    Flow { inst: CfInst, target: Target, pop_count: u8 },
    Nop { eop: bool },
    CfEnd,
    Rat(RatExport),
}

#[derive(Debug, Clone, Copy)]
enum Target {
    Next,
    Label(Label),
    /// Placeholder of an open loop (by id), patched at its `LOOP_END`.
    Loop(u16),
    Cf(u32),
}

/// Which fetch clause to open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum FetchClause {
    /// `CF_INST_TC`.
    Tc,
    /// `CF_INST_VC` (Evergreen only).
    Vc,
    /// Where the chip issues vertex fetches: VC on Evergreen, TC on Cayman (§4.1).
    Vertex,
}

#[derive(Debug, Clone, Copy)]
struct LabelState {
    cf: Option<u32>,
    used_at: Option<(u32, u32)>,
}

#[derive(Debug, Clone, Copy)]
struct OpenLoop {
    node: usize,
    cf: u32,
    id: u16,
}

/// What [`Builder::finish`] and [`crate::assemble`] produce besides the words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ProgramInfo {
    /// The chip the program was assembled for.
    pub chip: Chip,
    /// Dwords written to the output buffer.
    pub words: usize,
    /// CF instructions (the first `2 * cf_count` dwords).
    pub cf_count: usize,
    /// GPRs the program needs (`SQ_PGM_RESOURCES_LS.NUM_GPRS`): one more than the highest
    /// register it reads or writes, at least 2 because the thread start state fills R0 and R1.
    pub num_gprs: u8,
    /// Deepest nesting of stack pushes (`PUSH`, `ALU_PUSH_BEFORE`, loops) along the program;
    /// the driver sizes `STACK_SIZE` from it.
    pub stack_depth: u8,
}

/// Builds a program for one chip; see the crate docs for the rules it enforces.
#[derive(Debug)]
pub struct Builder<'n> {
    chip: Chip,
    nodes: &'n mut [Node],
    len: usize,
    cf_count: u32,
    clause: Option<usize>,
    labels: [LabelState; MAX_LABELS],
    nlabels: usize,
    loops: [OpenLoop; MAX_LOOP_DEPTH],
    loop_depth: usize,
    next_loop: u16,
    depth: u32,
    max_depth: u32,
    ended: bool,
    line: u32,
    col: u32,
    /// Where the next label reference is written (text assembler), if not at `line:col`.
    label_pos: Option<(u32, u32)>,
}

impl<'n> Builder<'n> {
    /// A builder recording into `nodes`.
    pub fn new(chip: Chip, nodes: &'n mut [Node]) -> Self {
        Self {
            chip,
            nodes,
            len: 0,
            cf_count: 0,
            clause: None,
            labels: [LabelState { cf: None, used_at: None }; MAX_LABELS],
            nlabels: 0,
            loops: [OpenLoop { node: 0, cf: 0, id: 0 }; MAX_LOOP_DEPTH],
            loop_depth: 0,
            next_loop: 0,
            depth: 0,
            max_depth: 0,
            ended: false,
            line: 0,
            col: 0,
            label_pos: None,
        }
    }

    /// The target chip.
    pub fn chip(&self) -> Chip {
        self.chip
    }

    /// Sets the source position reported by errors of the following calls (and of the nodes
    /// they record, for errors found at [`Builder::finish`]).
    pub fn at(&mut self, line: u32, col: u32) {
        self.line = line;
        self.col = col;
    }

    /// The position of the label operand of the next `jump`/`push`/`else`.
    pub(crate) fn label_at(&mut self, line: u32, col: u32) {
        self.label_pos = Some((line, col));
    }

    fn err(&self, kind: impl Into<ErrorKind>) -> Error {
        Error { line: self.line, col: self.col, kind: kind.into() }
    }

    fn node_err(&self, i: usize, kind: impl Into<ErrorKind>) -> Error {
        Error { line: self.nodes[i].line, col: self.nodes[i].col, kind: kind.into() }
    }

    fn push_node(&mut self, kind: NodeKind, line: u32, col: u32) -> Result<usize, Error> {
        if self.len == self.nodes.len() {
            return Err(self.err(ErrorKind::Capacity("nodes")));
        }
        self.nodes[self.len] = Node { kind, line, col };
        self.len += 1;
        Ok(self.len - 1)
    }

    fn cf(&mut self, node: CfNode) -> Result<u32, Error> {
        self.close_clause()?;
        if self.ended {
            return Err(self.err(ErrorKind::CodeAfterEnd));
        }
        self.push_node(NodeKind::Cf(node), self.line, self.col)?;
        self.cf_count += 1;
        Ok(self.cf_count - 1)
    }

    /// Records CF instruction `node` that pops `pop` then pushes `push` stack entries, after
    /// checking that it can (a failed call records nothing).
    fn cf_stack(&mut self, node: CfNode, pop: u32, push: u32) -> Result<u32, Error> {
        let Some(depth) = self.depth.checked_sub(pop) else {
            return Err(self.err(ErrorKind::StackUnderflow));
        };
        if depth + push > u32::from(u8::MAX) {
            return Err(self.err(ErrorKind::Capacity("stack levels")));
        }
        let cf = self.cf(node)?;
        self.depth = depth + push;
        self.max_depth = self.max_depth.max(self.depth);
        Ok(cf)
    }

    /// The clause CF node at `i` with its instruction count set to `n`.
    fn set_clause_len(&mut self, i: usize, n: usize) {
        match &mut self.nodes[i].kind {
            NodeKind::Cf(CfNode::Alu { slots, .. }) => *slots = n as u16,
            NodeKind::Cf(CfNode::Fetch { count, .. }) => *count = n as u8,
            _ => {}
        }
    }

    /// Ends the open clause: rejects it if empty (leaving it open, so every later call and
    /// [`Builder::finish`] report it too) and locks the kcache lines of an ALU clause.
    fn close_clause(&mut self) -> Result<(), Error> {
        let Some(c) = self.clause else { return Ok(()) };
        match self.nodes[c].kind {
            NodeKind::Cf(CfNode::Alu { slots: 0, .. } | CfNode::Fetch { count: 0, .. }) => {
                return Err(self.node_err(c, ErrorKind::EmptyClause));
            }
            NodeKind::Cf(CfNode::Alu { .. }) => {
                let kc = self.kcache_sets(c)?;
                if let NodeKind::Cf(CfNode::Alu { kcache, .. }) = &mut self.nodes[c].kind {
                    *kcache = kc;
                }
            }
            _ => {}
        }
        self.clause = None;
        Ok(())
    }

    /// The constant lines (buffer, 16-constant line) the ALU slots after node `c` read, added
    /// to `lines[..n]` without duplicates; returns the new count.
    fn clause_lines(&self, c: usize, lines: &mut [(u8, u8)], mut n: usize) -> usize {
        for node in &self.nodes[c + 1..self.len] {
            if let NodeKind::Alu { placed, .. } = node.kind {
                n = add_lines(&placed, lines, n);
            }
        }
        n
    }

    /// Locks the kcache lines of the ALU clause at node `c` (checked group by group, so this
    /// cannot fail for a clause built through [`Builder::group`]).
    fn kcache_sets(&self, c: usize) -> Result<[Kcache; 2], Error> {
        let mut lines = [(0u8, 0u8); MAX_CLAUSE_LINES];
        let n = self.clause_lines(c, &mut lines, 0);
        kcache_windows(&mut lines[..n]).ok_or(self.node_err(c, ErrorKind::TooManyKcacheSets))
    }

    /// Creates a label; place it with [`Builder::bind`].
    pub fn new_label(&mut self) -> Result<Label, Error> {
        if self.nlabels == MAX_LABELS {
            return Err(self.err(ErrorKind::Capacity("labels")));
        }
        self.nlabels += 1;
        Ok(Label(self.nlabels as u16 - 1))
    }

    /// Places `label` at the next CF instruction (and ends the open clause).
    pub fn bind(&mut self, label: Label) -> Result<(), Error> {
        self.close_clause()?;
        let i = usize::from(label.0);
        if i >= self.nlabels {
            return Err(self.err(ErrorKind::UndefinedLabel));
        }
        if self.labels[i].cf.is_some() {
            return Err(self.err(ErrorKind::DuplicateLabel));
        }
        self.labels[i].cf = Some(self.cf_count);
        Ok(())
    }

    /// Records a flow-control instruction; `push` stack entries are pushed on fall-through.
    fn flow(
        &mut self,
        inst: CfInst,
        target: Target,
        pop_count: u8,
        pop: u32,
        push: u32,
    ) -> Result<u32, Error> {
        if pop_count > 7 {
            return Err(self.err(crate::isa::EncodeError::OutOfRange {
                field: "POP_COUNT",
                value: pop_count.into(),
                max: 7,
            }));
        }
        self.cf_stack(CfNode::Flow { inst, target, pop_count }, pop, push)
    }

    /// Records a flow-control instruction jumping to `label`.
    fn labeled(
        &mut self,
        inst: CfInst,
        label: Label,
        pop_count: u8,
        push: u32,
    ) -> Result<(), Error> {
        let i = usize::from(label.0);
        let at = self.label_pos.take().unwrap_or((self.line, self.col));
        if i >= self.nlabels {
            return Err(Error { line: at.0, col: at.1, kind: ErrorKind::UndefinedLabel });
        }
        self.flow(inst, Target::Label(label), pop_count, 0, push)?;
        self.labels[i].used_at.get_or_insert(at);
        Ok(())
    }

    /// Opens an ALU clause; [`Builder::group`] adds to it until the next CF instruction.
    pub fn alu(&mut self, inst: AluCfInst) -> Result<(), Error> {
        let (pop, push) = match inst {
            AluCfInst::AluPushBefore => (0, 1),
            AluCfInst::AluPopAfter => (1, 0),
            AluCfInst::AluPop2After => (2, 0),
            AluCfInst::Alu | AluCfInst::AluElseAfter => (0, 0),
        };
        self.cf_stack(CfNode::Alu { inst, kcache: [Kcache::NONE; 2], slots: 0 }, pop, push)?;
        self.clause = Some(self.len - 1);
        Ok(())
    }

    /// Adds one instruction group to the open ALU clause (positions: [`Builder::at`]).
    pub fn group(&mut self, insts: &[AluInst]) -> Result<(), Error> {
        self.group_at(insts, None)
    }

    /// [`Builder::group`] with a source position per instruction, for the text assembler.
    pub(crate) fn group_at(
        &mut self,
        insts: &[AluInst],
        pos: Option<&[(u32, u32)]>,
    ) -> Result<(), Error> {
        let here = (self.line, self.col);
        let where_ = |i: usize| pos.and_then(|p| p.get(i).copied()).unwrap_or(here);
        if self.ended {
            return Err(self.err(ErrorKind::CodeAfterEnd));
        }
        let (clause, slots) = match self.clause.map(|c| (c, self.nodes[c].kind)) {
            Some((c, NodeKind::Cf(CfNode::Alu { slots, .. }))) => (c, slots),
            _ => return Err(self.err(ErrorKind::AluOutsideClause)),
        };
        let g = group::build(self.chip, insts).map_err(|(kind, i)| {
            let (line, col) = where_(i);
            Error { line, col, kind }
        })?;
        // The clause's constant lines with this group's must fit the two kcache sets.
        let mut lines = [(0u8, 0u8); MAX_CLAUSE_LINES];
        let before = self.clause_lines(clause, &mut lines, 0);
        let mut n = before;
        for p in g.slots.iter().flatten() {
            n = add_lines(p, &mut lines, n);
        }
        if kcache_windows(&mut lines[..n]).is_none() {
            let old = &lines[..before];
            let culprit = g.slots.iter().flatten().find(|p| {
                p.inst
                    .sources()
                    .iter()
                    .any(|s| const_line(s.src).is_some_and(|k| !old.contains(&k)))
            });
            let (line, col) = where_(culprit.map_or(0, |p| p.origin.into()));
            return Err(Error { line, col, kind: ErrorKind::TooManyKcacheSets });
        }
        let nslots = g.slots.iter().flatten().count();
        let lit_slots = g.nlit.div_ceil(2);
        let new_slots = usize::from(slots) + nslots + lit_slots;
        if new_slots > 128 {
            return Err(self.err(ErrorKind::ClauseTooLong));
        }
        if self.len + nslots + usize::from(g.nlit > 0) > self.nodes.len() {
            return Err(self.err(ErrorKind::Capacity("nodes")));
        }
        let mut remaining = nslots;
        for p in g.slots.iter().flatten() {
            remaining -= 1;
            let (line, col) = where_(p.origin.into());
            self.push_node(NodeKind::Alu { placed: *p, last: remaining == 0 }, line, col)?;
        }
        if g.nlit > 0 {
            let n = (lit_slots * 2) as u8;
            self.push_node(NodeKind::Literals { values: g.literals, n }, self.line, self.col)?;
        }
        self.set_clause_len(clause, new_slots);
        Ok(())
    }

    /// Opens a fetch clause; [`Builder::vfetch`] adds to it until the next CF instruction.
    pub fn fetch(&mut self, kind: FetchClause) -> Result<(), Error> {
        let inst = match (kind, self.chip) {
            (FetchClause::Vc, Chip::Cayman) => return Err(self.err(ErrorKind::VcClauseOnCayman)),
            (FetchClause::Vc | FetchClause::Vertex, Chip::Evergreen) => CfInst::Vc,
            (FetchClause::Tc, _) | (FetchClause::Vertex, Chip::Cayman) => CfInst::Tc,
        };
        self.cf(CfNode::Fetch { inst, count: 0 })?;
        self.clause = Some(self.len - 1);
        Ok(())
    }

    /// Adds a vertex fetch to the open fetch clause.
    pub fn vfetch(&mut self, fetch: &VtxFetch) -> Result<(), Error> {
        if self.ended {
            return Err(self.err(ErrorKind::CodeAfterEnd));
        }
        let (clause, count) = match self.clause.map(|c| (c, self.nodes[c].kind)) {
            Some((c, NodeKind::Cf(CfNode::Fetch { count, .. }))) => (c, count),
            _ => return Err(self.err(ErrorKind::FetchOutsideClause)),
        };
        fetch.encode(self.chip).map_err(|e| self.err(e))?;
        if count == 64 {
            return Err(self.err(ErrorKind::ClauseTooLong));
        }
        self.push_node(NodeKind::Fetch(*fetch), self.line, self.col)?;
        self.set_clause_len(clause, usize::from(count) + 1);
        Ok(())
    }

    /// CF `NOP`.
    pub fn nop(&mut self) -> Result<(), Error> {
        self.cf(CfNode::Nop { eop: false }).map(drop)
    }

    /// `JUMP label`: jump if no thread is active, popping `pop_count` entries when taken.
    pub fn jump(&mut self, label: Label, pop_count: u8) -> Result<(), Error> {
        self.labeled(CfInst::Jump, label, pop_count, 0)
    }

    /// `PUSH label`: push the active mask; jump (popping `pop_count`) if no thread is active.
    pub fn push(&mut self, label: Label, pop_count: u8) -> Result<(), Error> {
        self.labeled(CfInst::Push, label, pop_count, 1)
    }

    /// `ELSE label`: invert the active mask under the stack top; jump (popping `pop_count`)
    /// if no thread is active afterwards.
    pub fn else_(&mut self, label: Label, pop_count: u8) -> Result<(), Error> {
        self.labeled(CfInst::Else, label, pop_count, 0)
    }

    /// `POP`: pop `pop_count` entries.
    pub fn pop(&mut self, pop_count: u8) -> Result<(), Error> {
        self.flow(CfInst::Pop, Target::Next, pop_count, pop_count.into(), 0).map(drop)
    }

    /// `LOOP_START_DX10`: opens a loop that runs until every thread has left it.
    pub fn loop_start(&mut self) -> Result<(), Error> {
        if self.loop_depth == MAX_LOOP_DEPTH {
            return Err(self.err(ErrorKind::Capacity("nested loops")));
        }
        let id = self.next_loop;
        let cf = self.flow(CfInst::LoopStartDx10, Target::Loop(id), 0, 0, 1)?;
        self.next_loop = self.next_loop.wrapping_add(1);
        self.loops[self.loop_depth] = OpenLoop { node: self.len - 1, cf, id };
        self.loop_depth += 1;
        Ok(())
    }

    /// `LOOP_BREAK`: the active threads leave the innermost loop; when none is left in it,
    /// jump to its `LOOP_END` popping `pop_count`.
    pub fn loop_break(&mut self, pop_count: u8) -> Result<(), Error> {
        let Some(open) = self.loop_depth.checked_sub(1).map(|d| self.loops[d]) else {
            return Err(self.err(ErrorKind::BreakOutsideLoop));
        };
        self.flow(CfInst::LoopBreak, Target::Loop(open.id), pop_count, 0, 0).map(drop)
    }

    /// `LOOP_END` of the innermost loop.
    pub fn loop_end(&mut self) -> Result<(), Error> {
        let Some(d) = self.loop_depth.checked_sub(1) else {
            return Err(self.err(ErrorKind::UnbalancedLoop));
        };
        let open = self.loops[d];
        let end = self.flow(CfInst::LoopEnd, Target::Cf(open.cf + 1), 0, 1, 0)?;
        self.loop_depth = d;
        for node in &mut self.nodes[open.node..self.len] {
            if let NodeKind::Cf(CfNode::Flow { inst, target, .. }) = &mut node.kind
                && matches!(target, Target::Loop(id) if *id == open.id)
            {
                *target = Target::Cf(if *inst == CfInst::LoopStartDx10 { end + 1 } else { end });
            }
        }
        Ok(())
    }

    /// A RAT export (store or atomic). With `end_of_program` set (Evergreen only) it ends the
    /// program.
    pub fn rat(&mut self, export: &RatExport) -> Result<(), Error> {
        if export.end_of_program && self.chip == Chip::Cayman {
            return Err(self.err(ErrorKind::EndOfProgramOnCayman));
        }
        export.encode(self.chip).map_err(|e| self.err(e))?;
        self.cf(CfNode::Rat(*export))?;
        self.ended |= export.end_of_program;
        Ok(())
    }

    /// Ends the program the chip's way: a CF `NOP` with `END_OF_PROGRAM` on Evergreen (A7;
    /// always a separate instruction, so labels and clause types never matter), `CF_END` on
    /// Cayman.
    pub fn end(&mut self) -> Result<(), Error> {
        let node = match self.chip {
            Chip::Evergreen => CfNode::Nop { eop: true },
            Chip::Cayman => CfNode::CfEnd,
        };
        self.cf(node)?;
        self.ended = true;
        Ok(())
    }

    /// `CF_END` (Cayman only).
    pub fn cf_end(&mut self) -> Result<(), Error> {
        if self.chip == Chip::Evergreen {
            return Err(self.err(ErrorKind::CfEndOnEvergreen));
        }
        self.end()
    }

    /// Checks the program and writes its words into `out`.
    pub fn finish(mut self, out: &mut [u32]) -> Result<ProgramInfo, Error> {
        self.close_clause()?;
        if let Some(d) = self.loop_depth.checked_sub(1) {
            return Err(self.node_err(self.loops[d].node, ErrorKind::UnbalancedLoop));
        }
        if !self.ended {
            return Err(self.err(ErrorKind::MissingEnd));
        }
        for l in &self.labels[..self.nlabels] {
            if let Some((line, col)) = l.used_at {
                match l.cf {
                    None => return Err(Error { line, col, kind: ErrorKind::UndefinedLabel }),
                    Some(cf) if cf >= self.cf_count => {
                        return Err(Error { line, col, kind: ErrorKind::LabelPastEnd });
                    }
                    Some(_) => {}
                }
            }
        }
        let nodes = &self.nodes[..self.len];
        // Pass 1: size.
        let mut pos = self.cf_count as usize;
        for node in nodes {
            match node.kind {
                NodeKind::Cf(CfNode::Alu { slots, .. }) => pos += usize::from(slots),
                NodeKind::Cf(CfNode::Fetch { count, .. }) => {
                    pos += pos % 2 + 2 * usize::from(count)
                }
                _ => {}
            }
        }
        let needed = pos * 2;
        if out.len() < needed {
            return Err(self.err(ErrorKind::OutputTooSmall { needed }));
        }
        out[..needed].fill(0);
        // Pass 2: write.
        let chip = self.chip;
        let mut cf_idx = 0usize;
        let mut clause = self.cf_count as usize;
        let mut cursor = 0usize;
        let mut kcache = [Kcache::NONE; 2];
        for (i, node) in nodes.iter().enumerate() {
            let at = |kind: ErrorKind| Error { line: node.line, col: node.col, kind };
            match node.kind {
                NodeKind::Empty => {}
                NodeKind::Cf(cf) => {
                    let words = match cf {
                        CfNode::Alu { inst, kcache: kc, slots } => {
                            kcache = kc;
                            cursor = clause * 2;
                            let w = CfAluWord {
                                inst,
                                addr: clause as u32,
                                kcache: kc,
                                count: (slots - 1) as u8,
                                alt_const: false,
                                whole_quad_mode: false,
                                barrier: true,
                            };
                            clause += usize::from(slots);
                            w.encode()
                        }
                        CfNode::Fetch { inst, count } => {
                            clause += clause % 2;
                            cursor = clause * 2;
                            let w = CfWord {
                                addr: clause as u32,
                                count: count - 1,
                                ..CfWord::new(inst)
                            };
                            clause += 2 * usize::from(count);
                            w.encode(chip)
                        }
                        CfNode::Flow { inst, target, pop_count } => {
                            // Labels were checked above and loops are balanced, so every
                            // target is known here.
                            let addr = match target {
                                Target::Next => Some(cf_idx as u32 + 1),
                                Target::Cf(n) => Some(n),
                                Target::Label(l) => self.labels[usize::from(l.0)].cf,
                                Target::Loop(_) => None,
                            };
                            let addr = addr.ok_or(at(ErrorKind::UndefinedLabel))?;
                            CfWord { addr, pop_count, ..CfWord::new(inst) }.encode(chip)
                        }
                        CfNode::Nop { eop } => {
                            CfWord { end_of_program: eop, ..CfWord::new(CfInst::Nop) }.encode(chip)
                        }
                        CfNode::CfEnd => CfWord::new(CfInst::CfEnd).encode(chip),
                        CfNode::Rat(r) => r.encode(chip),
                    }
                    .map_err(|e| at(e.into()))?;
                    out[cf_idx * 2..cf_idx * 2 + 2].copy_from_slice(&words);
                    cf_idx += 1;
                }
                NodeKind::Alu { placed, last } => {
                    let w = slot_word(&placed, last, &kcache)
                        .and_then(|w| w.encode(chip).map_err(ErrorKind::from))
                        .map_err(|k| self.node_err(i, k))?;
                    out[cursor..cursor + 2].copy_from_slice(&w);
                    cursor += 2;
                }
                NodeKind::Literals { values, n } => {
                    let n = usize::from(n);
                    out[cursor..cursor + n].copy_from_slice(&values[..n]);
                    cursor += n;
                }
                NodeKind::Fetch(f) => {
                    let w = f.encode(chip).map_err(|e| at(e.into()))?;
                    out[cursor..cursor + 4].copy_from_slice(&w);
                    cursor += 4;
                }
            }
        }
        Ok(ProgramInfo {
            chip,
            words: needed,
            cf_count: self.cf_count as usize,
            num_gprs: num_gprs(nodes),
            stack_depth: self.max_depth as u8,
        })
    }
}

/// Distinct constant lines one clause can read: 128 slots × 3 sources.
const MAX_CLAUSE_LINES: usize = 128 * 3;

/// The (buffer, 16-constant line) a source reads through the kcache, if any.
fn const_line(src: Src) -> Option<(u8, u8)> {
    match src {
        Src::Const { buffer, index, .. } => Some((buffer, (index / 16) as u8)),
        _ => None,
    }
}

/// Adds the constant lines of `p` to `lines[..n]` without duplicates; returns the new count.
fn add_lines(p: &Placed, lines: &mut [(u8, u8)], mut n: usize) -> usize {
    for s in p.inst.sources() {
        if let Some(key) = const_line(s.src)
            && !lines[..n].contains(&key)
        {
            lines[n] = key;
            n += 1;
        }
    }
    n
}

/// The fewest kcache windows covering `lines`: sorted (buffer, line) pairs, each window one
/// line (`LOCK_1`) or two consecutive ones (`LOCK_2`), set 0 first; `None` if more than the
/// two sets of `CF_ALU_WORD0/1` are needed. Greedy from the lowest line is optimal for
/// covering points with fixed-length intervals.
fn kcache_windows(lines: &mut [(u8, u8)]) -> Option<[Kcache; 2]> {
    lines.sort_unstable();
    let mut sets = [Kcache::NONE; 2];
    let mut nsets = 0;
    let mut i = 0;
    while i < lines.len() {
        let (bank, line) = lines[i];
        let pair = line < 255 && lines.get(i + 1) == Some(&(bank, line + 1));
        *sets.get_mut(nsets)? = Kcache {
            bank,
            mode: if pair { KcacheMode::Lock2 } else { KcacheMode::Lock1 },
            addr: line,
        };
        nsets += 1;
        i += if pair { 2 } else { 1 };
    }
    Some(sets)
}

/// The ALU word of a placed slot, with kcache selectors resolved against the clause's sets.
fn slot_word(p: &Placed, last: bool, kcache: &[Kcache; 2]) -> Result<AluWord, ErrorKind> {
    let inst = &p.inst;
    let mut w = AluWord::new(inst.op, inst.dst.gpr, p.dst_chan);
    w.write_mask = p.write || inst.op.is_op3();
    w.last = last;
    w.bank_swizzle = p.bank_swizzle;
    w.omod = inst.omod;
    w.clamp = inst.clamp;
    w.update_exec_mask = inst.update_exec_mask;
    w.update_pred = inst.update_pred;
    w.pred_sel = inst.pred_sel;
    for (k, o) in inst.sources().iter().enumerate() {
        let (sel, chan) = match o.src {
            Src::Gpr { index, chan } => (Sel::Gpr(index), chan),
            Src::Const { buffer, index, chan } => {
                let (set, off) = kcache
                    .iter()
                    .enumerate()
                    .find_map(|(s, k)| k.offset_of(buffer, index).map(|o| (s as u8, o)))
                    .ok_or(ErrorKind::TooManyKcacheSets)?;
                (Sel::Kcache { set, index: off }, chan)
            }
            Src::Inline(c) => (Sel::Inline(c), Chan::X),
            Src::Literal(_) => (Sel::Literal, Chan::from_index(p.lit[k].into())),
            Src::Pv(c) => (Sel::Pv, c),
            Src::Ps => (Sel::Ps, Chan::X),
        };
        w.src[k] = AluSrc { sel, rel: false, chan, neg: o.neg };
        if k < 2 {
            w.abs[k] = o.abs;
        }
    }
    Ok(w)
}

fn num_gprs(nodes: &[Node]) -> u8 {
    let mut max = 1u8;
    let mut see = |g: u8| max = max.max(g);
    for node in nodes {
        match node.kind {
            NodeKind::Alu { placed, .. } => {
                if placed.write || placed.inst.op.is_op3() {
                    see(placed.inst.dst.gpr);
                }
                for s in placed.inst.sources() {
                    if let Src::Gpr { index, .. } = s.src {
                        see(index);
                    }
                }
            }
            NodeKind::Fetch(f) => {
                see(f.src_gpr);
                see(f.dst_gpr);
            }
            NodeKind::Cf(CfNode::Rat(r)) => {
                see(r.rw_gpr);
                see(r.index_gpr);
            }
            _ => {}
        }
    }
    max + 1
}
