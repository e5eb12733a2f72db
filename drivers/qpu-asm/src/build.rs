//! Operands by name, ALU instructions from their operands, and the [`Builder`] with labels.

use core::fmt;

use crate::check::{ProgramKind, RuleError, check};
use crate::isa::{
    AddOp, Alu, Branch, BranchCond, Cond, EncodeError, File, Instruction, LoadImm, MulOp, Mux,
    Packing, RaddrB, Reg, Semaphore, Signal, SmallImm, WriteBack,
};

/// A destination: an address and, for the sided ones (regfile locations, `quad_x`/`quad_y`,
/// `ms_flags`/`rev_flag`, `vr_setup`/`vw_setup`, `vr_addr`/`vw_addr`), the side it needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Dst {
    /// The write address.
    pub reg: Reg,
    /// The side the write must go to, `None` when both mean the same register.
    pub side: Option<File>,
}

impl Dst {
    /// No write.
    pub const NOP: Self = Self::both(Reg::NOP);
    /// Accumulator r0.
    pub const R0: Self = Self::both(Reg::ACC0);
    /// Accumulator r1.
    pub const R1: Self = Self::both(Reg::ACC1);
    /// Accumulator r2.
    pub const R2: Self = Self::both(Reg::ACC2);
    /// Accumulator r3.
    pub const R3: Self = Self::both(Reg::ACC3);
    /// Accumulator r5.
    pub const R5: Self = Self::both(Reg::ACC5);
    /// TLB_COLOUR_ALL: the fragment colour to the tile buffer.
    pub const TLB_COLOUR_ALL: Self = Self::both(Reg::TLB_COLOUR_ALL);
    /// TLB_Z.
    pub const TLB_Z: Self = Self::both(Reg::TLB_Z);
    /// VPM_WRITE.
    pub const VPM: Self = Self::both(Reg::VPM);
    /// VPMVCD_RD_SETUP (side A): VPM read or VDR DMA setup.
    pub const VR_SETUP: Self = Self { reg: Reg::VPM_SETUP, side: Some(File::A) };
    /// VPMVCD_WR_SETUP (side B): VPM write or VDW DMA setup.
    pub const VW_SETUP: Self = Self { reg: Reg::VPM_SETUP, side: Some(File::B) };
    /// VPM_LD_ADDR (side A): starts a VDR DMA load.
    pub const VR_ADDR: Self = Self { reg: Reg::VPM_ADDR, side: Some(File::A) };
    /// VPM_ST_ADDR (side B): starts a VDW DMA store.
    pub const VW_ADDR: Self = Self { reg: Reg::VPM_ADDR, side: Some(File::B) };
    /// TMU0_S: a TMU0 lookup (a direct memory address when nothing else was written).
    pub const TMU0_S: Self = Self::both(Reg::TMU0_S);
    /// SFU_RECIP.
    pub const SFU_RECIP: Self = Self::both(Reg::SFU_RECIP);

    const fn both(reg: Reg) -> Self {
        Self { reg, side: None }
    }
    /// Regfile A location `n` (0-31; wraps).
    pub const fn ra(n: u8) -> Self {
        Self { reg: Reg::raw(n & 31), side: Some(File::A) }
    }
    /// Regfile B location `n` (0-31; wraps).
    pub const fn rb(n: u8) -> Self {
        Self { reg: Reg::raw(n & 31), side: Some(File::B) }
    }
    /// A write address on a given side (any 0-63).
    pub const fn on(side: File, reg: Reg) -> Self {
        Self { reg, side: Some(side) }
    }
}

/// An ALU source operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Src {
    /// An accumulator r0-r5 (through its mux).
    Acc(Mux),
    /// A read of side A at the address.
    A(Reg),
    /// A read of side B at the address.
    B(Reg),
    /// A read both sides define the same way (`unif`, `vary`, `vpm`, `mutex_acq`, `nop`): side
    /// A when it is free or already reads this address, else side B.
    Either(Reg),
    /// A small immediate (signal 13, through the B mux).
    Imm(SmallImm),
}

impl Src {
    /// r0.
    pub const R0: Self = Self::Acc(Mux::R0);
    /// r1.
    pub const R1: Self = Self::Acc(Mux::R1);
    /// r2.
    pub const R2: Self = Self::Acc(Mux::R2);
    /// r3.
    pub const R3: Self = Self::Acc(Mux::R3);
    /// r4 (loads and SFU results).
    pub const R4: Self = Self::Acc(Mux::R4);
    /// r5 (the varying's C coefficient after a VARYING_READ).
    pub const R5: Self = Self::Acc(Mux::R5);
    /// The next uniform.
    pub const UNIF: Self = Self::Either(Reg::UNIFORM_READ);
    /// The next varying (its partly interpolated value; r5 receives the C coefficient).
    pub const VARY: Self = Self::Either(Reg::VARYING_READ);
    /// The next VPM word.
    pub const VPM: Self = Self::Either(Reg::VPM);
    /// ELEMENT_NUMBER (side A).
    pub const ELEM_NUM: Self = Self::A(Reg::ELEMENT_QPU_NUMBER);
    /// QPU_NUMBER (side B).
    pub const QPU_NUM: Self = Self::B(Reg::ELEMENT_QPU_NUMBER);
    /// VPM_LD_WAIT (side A): stalls until a VDR DMA is done.
    pub const VR_WAIT: Self = Self::A(Reg::VPM_ADDR);
    /// VPM_ST_WAIT (side B): stalls until a VDW DMA is done.
    pub const VW_WAIT: Self = Self::B(Reg::VPM_ADDR);
    /// Regfile A location `n` (0-31; wraps).
    pub const fn ra(n: u8) -> Self {
        Self::A(Reg::raw(n & 31))
    }
    /// Regfile B location `n` (0-31; wraps).
    pub const fn rb(n: u8) -> Self {
        Self::B(Reg::raw(n & 31))
    }
    /// The small integer immediate `v` (-16..=15), or `None`.
    pub const fn int(v: i8) -> Option<Self> {
        match SmallImm::int(v) {
            Some(s) => Some(Self::Imm(s)),
            None => None,
        }
    }
}

/// One pipe of an ALU instruction: operation, condition, destination, operands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Pipe<Op> {
    /// The operation.
    pub op: Op,
    /// The condition.
    pub cond: Cond,
    /// The destination.
    pub dst: Dst,
    /// Operand A.
    pub a: Src,
    /// Operand B.
    pub b: Src,
}

impl Pipe<AddOp> {
    /// The idle add pipe.
    pub const NOP: Self =
        Self { op: AddOp::Nop, cond: Cond::Never, dst: Dst::NOP, a: Src::R0, b: Src::R0 };
    /// `op dst, a, b`, always.
    pub const fn new(op: AddOp, dst: Dst, a: Src, b: Src) -> Self {
        Self { op, cond: Cond::Always, dst, a, b }
    }
    /// `mov dst, src` (`or dst, src, src`).
    pub const fn mov(dst: Dst, src: Src) -> Self {
        Self::new(AddOp::Or, dst, src, src)
    }
}

impl Pipe<MulOp> {
    /// The idle mul pipe.
    pub const NOP: Self =
        Self { op: MulOp::Nop, cond: Cond::Never, dst: Dst::NOP, a: Src::R0, b: Src::R0 };
    /// `op dst, a, b`, always.
    pub const fn new(op: MulOp, dst: Dst, a: Src, b: Src) -> Self {
        Self { op, cond: Cond::Always, dst, a, b }
    }
    /// `mov dst, src` (`v8min dst, src, src`).
    pub const fn mov(dst: Dst, src: Src) -> Self {
        Self::new(MulOp::V8min, dst, src, src)
    }
}

impl<Op> Pipe<Op> {
    /// The same with condition `cond`.
    pub const fn cond(mut self, cond: Cond) -> Self {
        self.cond = cond;
        self
    }
}

/// An ALU instruction by its operands; [`AluSpec::resolve`] picks the read addresses, muxes,
/// the small-immediate field and the write swap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct AluSpec {
    /// The add pipe.
    pub add: Pipe<AddOp>,
    /// The mul pipe.
    pub mul: Pipe<MulOp>,
    /// The signal.
    pub sig: Signal,
    /// Set flags.
    pub sf: bool,
    /// Force write swap (it also follows from sided destinations).
    pub ws: bool,
    /// pm, pack and unpack.
    pub packing: Packing,
    /// A mul-output rotation (a small immediate 48-63).
    pub rotate: Option<SmallImm>,
    /// raddr_a when no operand reads side A (else it must match).
    pub raddr_a: Option<Reg>,
    /// raddr_b / small immediate when no operand reads it (else it must match).
    pub raddr_b: Option<RaddrB>,
}

impl AluSpec {
    /// Both pipes idle, no signal.
    pub const NOP: Self = Self {
        add: Pipe::<AddOp>::NOP,
        mul: Pipe::<MulOp>::NOP,
        sig: Signal::None,
        sf: false,
        ws: false,
        packing: Packing::NONE,
        rotate: None,
        raddr_a: None,
        raddr_b: None,
    };
    /// The add pipe alone.
    pub const fn add(add: Pipe<AddOp>) -> Self {
        Self { add, ..Self::NOP }
    }
    /// The mul pipe alone.
    pub const fn mul(mul: Pipe<MulOp>) -> Self {
        Self { mul, ..Self::NOP }
    }
    /// Both pipes.
    pub const fn pair(add: Pipe<AddOp>, mul: Pipe<MulOp>) -> Self {
        Self { add, mul, ..Self::NOP }
    }
    /// The same with signal `sig`.
    pub const fn sig(mut self, sig: Signal) -> Self {
        self.sig = sig;
        self
    }
    /// The same with set-flags.
    pub const fn setf(mut self) -> Self {
        self.sf = true;
        self
    }
    /// The same with packing.
    pub const fn packing(mut self, packing: Packing) -> Self {
        self.packing = packing;
        self
    }

    /// The instruction: read addresses and muxes from the operands, ws from the destinations.
    pub fn resolve(&self) -> Result<Alu, OperandError> {
        let ws = write_swap(self.add.dst, self.mul.dst, self.ws)?;
        let mut ra = self.raddr_a;
        let mut rb = self.raddr_b;
        if let Some(r) = self.rotate {
            set(&mut rb, RaddrB::Imm(r))?;
        }
        let srcs = [self.add.a, self.add.b, self.mul.a, self.mul.b];
        let mut muxes = [Mux::R0; 4];
        // Sided operands first, then the either-side names where there is room.
        for (src, mux) in srcs.iter().zip(muxes.iter_mut()) {
            *mux = match *src {
                Src::Acc(m) => m,
                Src::A(r) => set(&mut ra, r).map(|_| Mux::A)?,
                Src::B(r) => set(&mut rb, RaddrB::Reg(r)).map(|_| Mux::B)?,
                Src::Imm(s) => set(&mut rb, RaddrB::Imm(s)).map(|_| Mux::B)?,
                Src::Either(_) => continue,
            };
        }
        for (src, mux) in srcs.iter().zip(muxes.iter_mut()) {
            let Src::Either(r) = *src else { continue };
            *mux = if ra == Some(r) || ra.is_none() {
                ra = Some(r);
                Mux::A
            } else if rb == Some(RaddrB::Reg(r)) || rb.is_none() {
                rb = Some(RaddrB::Reg(r));
                Mux::B
            } else {
                return Err(OperandError::TooManyReads);
            };
        }
        let raddr_b = rb.unwrap_or(RaddrB::Reg(Reg::NOP));
        if matches!(raddr_b, RaddrB::Imm(_)) && self.sig != Signal::None {
            return Err(OperandError::Encode(EncodeError::SignalWithSmallImmediate));
        }
        Ok(Alu {
            sig: self.sig,
            packing: self.packing,
            wb: WriteBack {
                waddr_add: self.add.dst.reg,
                waddr_mul: self.mul.dst.reg,
                cond_add: self.add.cond,
                cond_mul: self.mul.cond,
                sf: self.sf,
                ws,
            },
            op_add: self.add.op,
            op_mul: self.mul.op,
            raddr_a: ra.unwrap_or(Reg::NOP),
            raddr_b,
            add_a: muxes[0],
            add_b: muxes[1],
            mul_a: muxes[2],
            mul_b: muxes[3],
        })
    }
}

/// Fills `slot` with `v` unless it holds something else; whether it now holds `v`.
pub(crate) fn set_once<T: PartialEq + Copy>(slot: &mut Option<T>, v: T) -> bool {
    match *slot {
        Some(old) => old == v,
        None => {
            *slot = Some(v);
            true
        }
    }
}

fn set<T: PartialEq + Copy>(slot: &mut Option<T>, v: T) -> Result<(), OperandError> {
    if set_once(slot, v) { Ok(()) } else { Err(OperandError::TooManyReads) }
}

/// The write-swap bit the destinations need (`force` sets it).
pub(crate) fn write_swap(add: Dst, mul: Dst, force: bool) -> Result<bool, OperandError> {
    let add_ws = add.side.map(|s| s == File::B);
    let mul_ws = mul.side.map(|s| s == File::A);
    match (add_ws, mul_ws) {
        (Some(a), Some(m)) if a != m => Err(OperandError::WriteSides),
        (Some(w), _) | (_, Some(w)) if force && !w => Err(OperandError::WriteSides),
        (Some(w), _) | (_, Some(w)) => Ok(w),
        (None, None) => Ok(force),
    }
}

/// Why operands make no instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum OperandError {
    /// More than one address (or immediate) wanted from one side's read port.
    TooManyReads,
    /// The destinations need opposite write swaps (the add pipe writes side A unless ws, the
    /// mul pipe side B: §3 table 1).
    WriteSides,
    /// The fields encode no instruction.
    Encode(EncodeError),
}

impl fmt::Display for OperandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooManyReads => f.write_str("more than one read from one register-file side"),
            Self::WriteSides => f.write_str("the destinations need opposite write swaps"),
            Self::Encode(e) => write!(f, "{e}"),
        }
    }
}

impl core::error::Error for OperandError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Encode(e) => Some(e),
            _ => None,
        }
    }
}

/// A branch target in a [`Builder`] program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Label(u16);

/// Labels one builder holds.
pub const MAX_LABELS: usize = 64;
/// Branches to labels one builder holds before [`Builder::finish`].
pub const MAX_FIXUPS: usize = 64;

/// Why a program cannot be built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum BuildError {
    /// The output slice is full: its length.
    OutOfSpace(usize),
    /// More than [`MAX_LABELS`] labels.
    TooManyLabels,
    /// More than [`MAX_FIXUPS`] branches to labels.
    TooManyFixups,
    /// A label bound twice.
    LabelRebound,
    /// A branch to a label never bound (the branch's index).
    UnboundLabel(usize),
    /// Operands that make no instruction, at an index.
    Operands(usize, OperandError),
    /// An instruction that cannot be encoded, at an index.
    Encode(usize, EncodeError),
    /// The program breaks a §3 rule.
    Rule(RuleError),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::OutOfSpace(n) => write!(f, "program longer than {n} instructions"),
            Self::TooManyLabels => write!(f, "more than {MAX_LABELS} labels"),
            Self::TooManyFixups => write!(f, "more than {MAX_FIXUPS} branches to labels"),
            Self::LabelRebound => f.write_str("label bound twice"),
            Self::UnboundLabel(i) => write!(f, "instruction {i}: branch to an unbound label"),
            Self::Operands(i, e) => write!(f, "instruction {i}: {e}"),
            Self::Encode(i, e) => write!(f, "instruction {i}: {e}"),
            Self::Rule(e) => write!(f, "{e}"),
        }
    }
}

impl core::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Operands(_, e) => Some(e),
            Self::Encode(_, e) => Some(e),
            Self::Rule(e) => Some(e),
            _ => None,
        }
    }
}

/// Builds a program into a caller slice of words: instructions, labels and relative branches
/// to them (patched by [`Builder::finish`], which also checks the §3 rules).
///
/// ```
/// use baregpu_qpu_asm::{AluSpec, BranchCond, Builder, Dst, Pipe, ProgramKind, Src};
/// use baregpu_qpu_asm::isa::{AddOp, Signal};
/// let mut words = [0u64; 16];
/// let mut b = Builder::new(&mut words);
/// let top = b.label()?;
/// b.bind(top)?;
/// b.alu(AluSpec::add(Pipe::<AddOp>::new(AddOp::Sub, Dst::R0, Src::R0, Src::int(1).unwrap())).setf())?;
/// b.branch(BranchCond::AnyNz, top)?; // loop while any element of r0 is non-zero
/// b.nops(3)?; // the delay slots
/// b.alu(AluSpec::NOP.sig(Signal::ProgramEnd))?;
/// b.nops(2)?;
/// let program = b.finish(ProgramKind::User)?;
/// assert_eq!(program.len(), 8);
/// # Ok::<(), baregpu_qpu_asm::BuildError>(())
/// ```
pub struct Builder<'o> {
    out: &'o mut [u64],
    len: usize,
    labels: [Option<u32>; MAX_LABELS],
    nlabels: usize,
    fixups: [(u32, Label); MAX_FIXUPS],
    nfixups: usize,
}

impl<'o> Builder<'o> {
    /// An empty program writing into `out`.
    pub fn new(out: &'o mut [u64]) -> Self {
        Self {
            out,
            len: 0,
            labels: [None; MAX_LABELS],
            nlabels: 0,
            fixups: [(0, Label(0)); MAX_FIXUPS],
            nfixups: 0,
        }
    }
    /// The index the next instruction gets.
    pub fn here(&self) -> usize {
        self.len
    }
    /// A new, unbound label.
    pub fn label(&mut self) -> Result<Label, BuildError> {
        if self.nlabels == MAX_LABELS {
            return Err(BuildError::TooManyLabels);
        }
        self.nlabels += 1;
        Ok(Label(self.nlabels as u16 - 1))
    }
    /// Binds `label` to the next instruction.
    pub fn bind(&mut self, label: Label) -> Result<(), BuildError> {
        let slot = &mut self.labels[label.0 as usize];
        if slot.is_some() {
            return Err(BuildError::LabelRebound);
        }
        *slot = Some(self.len as u32);
        Ok(())
    }
    /// Appends an instruction.
    pub fn emit(&mut self, insn: &Instruction) -> Result<(), BuildError> {
        let word = insn.encode().map_err(|e| BuildError::Encode(self.len, e))?;
        self.word(word)
    }
    fn word(&mut self, word: u64) -> Result<(), BuildError> {
        let slot = self.out.get_mut(self.len).ok_or(BuildError::OutOfSpace(self.len))?;
        *slot = word;
        self.len += 1;
        Ok(())
    }
    /// Appends an ALU instruction from its operands.
    pub fn alu(&mut self, spec: AluSpec) -> Result<(), BuildError> {
        let alu = spec.resolve().map_err(|e| BuildError::Operands(self.len, e))?;
        self.emit(&Instruction::Alu(alu))
    }
    /// Appends `mov dst, src` on the add pipe.
    pub fn mov(&mut self, dst: Dst, src: Src) -> Result<(), BuildError> {
        self.alu(AluSpec::add(Pipe::<AddOp>::mov(dst, src)))
    }
    /// Appends `n` no-ops.
    pub fn nops(&mut self, n: usize) -> Result<(), BuildError> {
        (0..n).try_for_each(|_| self.emit(&Instruction::Alu(Alu::NOP)))
    }
    /// Appends a 32-bit load immediate into `dst` by the add pipe, with the write swap when
    /// `dst` is on side B only (`rbN`, `vw_setup`, `vw_addr`, ...).
    pub fn ldi(&mut self, dst: Dst, value: u32) -> Result<(), BuildError> {
        let mut l = LoadImm::word(dst.reg, value);
        l.wb.ws =
            write_swap(dst, Dst::NOP, false).map_err(|e| BuildError::Operands(self.len, e))?;
        self.emit(&Instruction::LoadImm(l))
    }
    /// Appends a semaphore acquire (`true`) or release.
    pub fn semaphore(&mut self, acquire: bool, index: u8) -> Result<(), BuildError> {
        if index > 15 {
            return Err(BuildError::Encode(self.len, EncodeError::SemaphoreIndex(index)));
        }
        self.emit(&Instruction::Semaphore(Semaphore::new(acquire, index)))
    }
    /// Appends a relative branch to `label` (patched by [`Builder::finish`]); the caller adds
    /// the three delay slots.
    pub fn branch(&mut self, cond: BranchCond, label: Label) -> Result<(), BuildError> {
        if self.nfixups == MAX_FIXUPS {
            return Err(BuildError::TooManyFixups);
        }
        self.fixups[self.nfixups] = (self.len as u32, label);
        self.nfixups += 1;
        self.emit(&Instruction::Branch(Branch::relative(cond, 0)))
    }
    fn patch(&mut self) -> Result<(), BuildError> {
        for &(at, label) in &self.fixups[..self.nfixups] {
            let at = at as usize;
            let target = self.labels[label.0 as usize].ok_or(BuildError::UnboundLabel(at))?;
            if let Ok(Instruction::Branch(mut b)) = Instruction::decode(self.out[at]) {
                b.immediate = (target as i32 - (at as i32 + 4)) * 8;
                self.out[at] =
                    Instruction::Branch(b).encode().map_err(|e| BuildError::Encode(at, e))?;
            }
        }
        Ok(())
    }
    /// Patches the branches and gives the program, without the rule checks.
    pub fn finish_unchecked(mut self) -> Result<&'o [u64], BuildError> {
        self.patch()?;
        let Self { out, len, .. } = self;
        Ok(&out[..len])
    }
    /// Patches the branches, checks the program's §3 rules for `kind` ([`check`]), and gives
    /// the program.
    pub fn finish(self, kind: ProgramKind) -> Result<&'o [u64], BuildError> {
        let words = self.finish_unchecked()?;
        check(words, kind).map_err(BuildError::Rule)?;
        Ok(words)
    }
}
