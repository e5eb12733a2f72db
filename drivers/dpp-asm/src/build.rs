//! Operand-level builder for ALU instructions: the lowering the text assembler uses, public so
//! Rust code can build the same instructions without text.
//!
//! An ALU slot has three RGB and three alpha source addresses (ctm-guide §3.3.1). The builder
//! treats them as three *unified* source slots: each distinct register (or inline constant) an
//! instruction reads is placed in the same slot `k` of both `ALU_RGB_ADDR` and
//! `ALU_ALPHA_ADDR`, so any swizzle (including `.w` read by the RGB unit, which "always comes
//! from alpha_addr", §3.3.3) sees the register. At most three distinct sources per instruction.
//! A presubtract operand pins src0/src1 (§3.3.2).

use crate::isa::*;

/// The readable ALU operations (vector form: both units run the op; see the crate docs for the
/// lowering of each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum VecOp {
    /// `A*B + C`.
    Mad,
    /// `A + B` = MAD(A, 1, B).
    Add,
    /// `A - B` = MAD(A, 1, -B).
    Sub,
    /// `A * B` = MAD(A, B, -0) (keeps the sign of zero products, §3.6.1).
    Mul,
    /// Bit-exact move: MAX(A, A) with OMOD_DISABLED (§3.3.5, §3.6.2); with `.sat` or an
    /// output modifier the modifier is applied instead.
    Mov,
    /// Minimum.
    Min,
    /// Maximum.
    Max,
    /// `C > 0.5 ? A : B`.
    Cnd,
    /// `C >= 0 ? A : B`.
    Cmp,
    /// `A - floor(A)`.
    Frc,
    /// RGB DP3, alpha DP.
    Dp3,
    /// RGB DP4, alpha DP (the 4th components come from the operands' `.w` swizzles).
    Dp4,
    /// RGB D2A, alpha DP.
    D2a,
    /// Alpha EX2, RGB SOP.
    Ex2,
    /// Alpha LN2, RGB SOP.
    Ln2,
    /// Alpha RCP, RGB SOP.
    Rcp,
    /// Alpha RSQ, RGB SOP.
    Rsq,
    /// Alpha SIN, RGB SOP.
    Sin,
    /// Alpha COS, RGB SOP.
    Cos,
    /// An OUTPUT instruction writing nothing: the mandatory last instruction (§3.1).
    End,
}

impl VecOp {
    /// Looks up a mnemonic.
    pub fn from_mnemonic(s: &str) -> Option<Self> {
        Some(match s {
            "mad" => Self::Mad,
            "add" => Self::Add,
            "sub" => Self::Sub,
            "mul" => Self::Mul,
            "mov" => Self::Mov,
            "min" => Self::Min,
            "max" => Self::Max,
            "cnd" => Self::Cnd,
            "cmp" => Self::Cmp,
            "frc" => Self::Frc,
            "dp3" => Self::Dp3,
            "dp4" => Self::Dp4,
            "d2a" => Self::D2a,
            "ex2" => Self::Ex2,
            "ln2" => Self::Ln2,
            "rcp" => Self::Rcp,
            "rsq" => Self::Rsq,
            "sin" => Self::Sin,
            "cos" => Self::Cos,
            "end" => Self::End,
            _ => return None,
        })
    }
    /// Number of source operands.
    pub const fn arity(self) -> usize {
        match self {
            Self::End => 0,
            Self::Mov
            | Self::Frc
            | Self::Ex2
            | Self::Ln2
            | Self::Rcp
            | Self::Rsq
            | Self::Sin
            | Self::Cos => 1,
            Self::Add | Self::Sub | Self::Mul | Self::Min | Self::Max | Self::Dp3 | Self::Dp4 => 2,
            Self::Mad | Self::Cnd | Self::Cmp | Self::D2a => 3,
        }
    }
    fn units(self) -> (RgbOp, AlphaOp) {
        match self {
            Self::Mad | Self::Add | Self::Sub | Self::Mul | Self::End => (RgbOp::Mad, AlphaOp::Mad),
            Self::Mov | Self::Max => (RgbOp::Max, AlphaOp::Max),
            Self::Min => (RgbOp::Min, AlphaOp::Min),
            Self::Cnd => (RgbOp::Cnd, AlphaOp::Cnd),
            Self::Cmp => (RgbOp::Cmp, AlphaOp::Cmp),
            Self::Frc => (RgbOp::Frc, AlphaOp::Frc),
            Self::Dp3 => (RgbOp::Dp3, AlphaOp::Dp),
            Self::Dp4 => (RgbOp::Dp4, AlphaOp::Dp),
            Self::D2a => (RgbOp::D2a, AlphaOp::Dp),
            Self::Ex2 => (RgbOp::Sop, AlphaOp::Ex2),
            Self::Ln2 => (RgbOp::Sop, AlphaOp::Ln2),
            Self::Rcp => (RgbOp::Sop, AlphaOp::Rcp),
            Self::Rsq => (RgbOp::Sop, AlphaOp::Rsq),
            Self::Sin => (RgbOp::Sop, AlphaOp::Sin),
            Self::Cos => (RgbOp::Sop, AlphaOp::Cos),
        }
    }
}

/// What an operand reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum OperandBase {
    /// A register or inline constant (takes a source slot).
    Src(Source),
    /// Only swizzle constants (0, 0.5, 1): no source slot needed.
    Imm,
    /// The presubtract result: `op` over `src0` (and `src1` for SUB/ADD).
    Presub {
        /// The operation.
        op: Presub,
        /// src0.
        src0: Source,
        /// src1 (ignored for BIAS/INV).
        src1: Source,
    },
}

/// A source operand: base, 4-component swizzle (x, y, z for the RGB unit, w for alpha) and
/// input modifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Operand {
    /// What is read.
    pub base: OperandBase,
    /// Per-component selects.
    pub swizzle: [Swz; 4],
    /// Input modifier.
    pub modifier: InputMod,
}

impl Operand {
    /// Temporary `rN.xyzw`.
    pub const fn temp(n: u8) -> Self {
        Self::src(Source::Temp(TempReg::new(n)))
    }
    /// Constant `cN.xyzw`.
    pub const fn konst(n: u8) -> Self {
        Self::src(Source::Const { index: n, rel: false })
    }
    /// Any source with the identity swizzle.
    pub const fn src(s: Source) -> Self {
        Self {
            base: OperandBase::Src(s),
            swizzle: [Swz::R, Swz::G, Swz::B, Swz::A],
            modifier: InputMod::Off,
        }
    }
    /// The constant 0, 0.5 or 1 in every component.
    pub const fn imm(v: Swz) -> Self {
        Self { base: OperandBase::Imm, swizzle: [v; 4], modifier: InputMod::Off }
    }
    /// With swizzle `s`.
    pub const fn swz(mut self, s: [Swz; 4]) -> Self {
        self.swizzle = s;
        self
    }
    /// Negated (composes with abs: `-|x|`).
    pub const fn neg(mut self) -> Self {
        self.modifier = match self.modifier {
            InputMod::Off => InputMod::Neg,
            InputMod::Neg => InputMod::Off,
            InputMod::Abs => InputMod::Nab,
            InputMod::Nab => InputMod::Abs,
        };
        self
    }
    /// Absolute value.
    pub const fn abs(mut self) -> Self {
        self.modifier = InputMod::Abs;
        self
    }
}

/// Destinations of an ALU instruction. Masks: bit 0 x/r, 1 y/g, 2 z/b, 3 w/a.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct AluDest {
    /// Temporary register and write mask.
    pub temp: Option<(TempReg, u8)>,
    /// Output (render target 0..=3) and mask: makes the instruction an OUTPUT.
    pub output: Option<(u8, u8)>,
    /// Predicate-bit mask: needs [`AluFlags::pred_op`]; ALU instructions only.
    pub pred: Option<u8>,
    /// Write the alpha result to the W output (conditional output value): OUTPUT.
    pub cond_out: bool,
}

impl AluDest {
    /// `rN` with a mask.
    pub const fn temp(n: u8, mask: u8) -> Self {
        Self { temp: Some((TempReg::new(n), mask)), output: None, pred: None, cond_out: false }
    }
    /// `oN` with a mask.
    pub const fn output(n: u8, mask: u8) -> Self {
        Self { temp: None, output: Some((n, mask)), pred: None, cond_out: false }
    }
    fn mask(&self) -> u8 {
        self.temp.map_or(0, |t| t.1) | self.output.map_or(0, |o| o.1) | self.pred.unwrap_or(0)
    }
}

/// Per-instruction modifiers (the mnemonic suffixes of the text syntax).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct AluFlags {
    /// Output modifier; `None` = ×1 (or disabled for `mov`).
    pub omod: Option<Omod>,
    /// Clamp to [0, 1] (`.sat`).
    pub clamp: bool,
    /// Compare used when writing predicate bits (`.eq/.lt/.ge/.ne`).
    pub pred_op: Option<CmpOp>,
    /// Write the ALU result (`.crlt`, `.calt`, …).
    pub alu_result: Option<(AluResultSel, CmpOp)>,
    /// `CMN_INST` flags.
    pub common: AluCommon,
    /// Predication of the writes.
    pub pred: Pred,
}

/// Which unit(s) a part of an instruction drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Unit {
    /// Both (vector form).
    Both,
    /// RGB only (left of `||`).
    Rgb,
    /// Alpha only (right of `||`).
    Alpha,
}

/// One part of an ALU instruction: an op on one or both units.
#[derive(Debug, Clone, Copy)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct AluPart<'a> {
    /// Which unit(s).
    pub unit: Unit,
    /// Operation.
    pub op: VecOp,
    /// Destinations.
    pub dst: AluDest,
    /// Sources (`op.arity()` of them).
    pub srcs: &'a [Operand],
    /// Modifiers.
    pub flags: AluFlags,
}

struct Slots {
    src: [Option<Source>; 3],
    presub: Option<Presub>,
}

const TOO_MANY: EncodeError =
    EncodeError::Invalid("more than three distinct sources in one instruction (ctm-guide §3.3.1)");

impl Slots {
    fn alloc(&mut self, s: Source) -> Result<SrcSel, EncodeError> {
        if let Some(k) = self.src.iter().position(|x| *x == Some(s)) {
            return Ok(sel(k));
        }
        let k = self.src.iter().position(Option::is_none).ok_or(TOO_MANY)?;
        self.src[k] = Some(s);
        Ok(sel(k))
    }
    fn pin(&mut self, k: usize, s: Source) -> Result<(), EncodeError> {
        match self.src[k] {
            None => {
                self.src[k] = Some(s);
                Ok(())
            }
            Some(x) if x == s => Ok(()),
            Some(_) => Err(EncodeError::Invalid(
                "two presubtract operands need different src0/src1 (ctm-guide §3.3.2)",
            )),
        }
    }
}

fn sel(k: usize) -> SrcSel {
    [SrcSel::Src0, SrcSel::Src1, SrcSel::Src2][k]
}

fn one() -> Operand {
    Operand::imm(Swz::One)
}

fn neg_zero() -> Operand {
    Operand::imm(Swz::Zero).neg()
}

/// Builds one ALU/OUTPUT instruction from one part (vector form) or two parts (an RGB part
/// and an alpha part, co-issued).
pub fn build_alu(parts: &[AluPart<'_>]) -> Result<AluInst, EncodeError> {
    let mut slots = Slots { src: [None; 3], presub: None };
    // Presubtract operands first: they pin src0/src1.
    for p in parts {
        if p.srcs.len() != p.op.arity() {
            return Err(EncodeError::Invalid("wrong number of operands"));
        }
        for o in p.srcs {
            if let OperandBase::Presub { op, src0, src1 } = o.base {
                if slots.presub.is_some_and(|x| x != op) {
                    return Err(EncodeError::Invalid(
                        "one presubtract operation per instruction (ctm-guide §3.3.2)",
                    ));
                }
                slots.presub = Some(op);
                slots.pin(0, src0)?;
                if matches!(op, Presub::Sub | Presub::Add) {
                    slots.pin(1, src1)?;
                }
            }
        }
    }
    let mut inst = AluInst::default();
    let mut any_output = false;
    let mut any_pred = false;
    for p in parts {
        let (rop, aop) = p.op.units();
        let s = p.srcs;
        let ops: [Operand; 3] = match p.op {
            VecOp::End => [Operand::imm(Swz::Zero); 3],
            VecOp::Add => [s[0], one(), s[1]],
            VecOp::Sub => [s[0], one(), s[1].neg()],
            VecOp::Mul => [s[0], s[1], neg_zero()],
            VecOp::Mov => [s[0], s[0], Operand::imm(Swz::Zero)],
            _ => {
                let mut a = [Operand::imm(Swz::Zero); 3];
                a[..s.len()].copy_from_slice(s);
                a
            }
        };
        let mut rgb_in = [RgbInput::constant(Swz::Zero); 3];
        let mut alpha_in = [AlphaInput::constant(Swz::Zero); 3];
        for (i, o) in ops.iter().enumerate() {
            let sel = match o.base {
                OperandBase::Src(src) => slots.alloc(src)?,
                OperandBase::Imm => SrcSel::Src0,
                OperandBase::Presub { .. } => SrcSel::SrcP,
            };
            rgb_in[i] = RgbInput {
                sel,
                swz: [o.swizzle[0], o.swizzle[1], o.swizzle[2]],
                modifier: o.modifier,
            };
            alpha_in[i] = AlphaInput { sel, swz: o.swizzle[3], modifier: o.modifier };
        }
        let f = &p.flags;
        let omod = match (f.omod, p.op) {
            (Some(m), _) => m,
            (None, VecOp::Mov) if !f.clamp => Omod::Disabled,
            (None, _) => Omod::U1,
        };
        let d = &p.dst;
        if d.output.is_some() && d.pred.is_some() {
            return Err(EncodeError::Invalid(
                "one instruction cannot write outputs and predicate bits (ctm-guide §3.1)",
            ));
        }
        if d.pred.is_some() != f.pred_op.is_some() {
            return Err(EncodeError::Invalid(
                "a predicate write needs a compare (.eq/.lt/.ge/.ne) and vice versa (ctm-guide §3.3.9)",
            ));
        }
        for m in [d.temp.map(|t| t.1), d.output.map(|o| o.1), d.pred].into_iter().flatten() {
            if m > 15 {
                return Err(EncodeError::OutOfRange {
                    field: "write mask",
                    value: m.into(),
                    max: 15,
                });
            }
        }
        match p.unit {
            Unit::Rgb if d.mask() & 8 != 0 || d.cond_out => {
                return Err(EncodeError::Invalid(
                    "the RGB part of a co-issued instruction cannot write .w",
                ));
            }
            Unit::Alpha if d.mask() & 7 != 0 => {
                return Err(EncodeError::Invalid(
                    "the alpha part of a co-issued instruction writes .w only",
                ));
            }
            _ => {}
        }
        any_output |= d.output.is_some() || d.cond_out || p.op == VecOp::End;
        any_pred |= d.pred.is_some();
        let temp = d.temp.map_or(TempReg::default(), |t| t.0);
        let tmask = d.temp.map_or(0, |t| t.1);
        let omask = d.output.map_or(0, |o| o.1) | d.pred.unwrap_or(0);
        let target = match (d.output, f.pred_op) {
            (Some((n, _)), _) => Target::Output(n),
            (None, Some(c)) => Target::Pred(c),
            (None, None) => Target::Pred(CmpOp::Equal),
        };
        if p.unit != Unit::Alpha {
            inst.rgb = RgbHalf {
                op: rop,
                inputs: rgb_in,
                omod,
                clamp: f.clamp,
                dst: temp,
                wmask: tmask & 7,
                omask: omask & 7,
                target,
                pred: f.pred,
            };
        }
        if p.unit != Unit::Rgb {
            inst.alpha = AlphaHalf {
                op: aop,
                inputs: alpha_in,
                omod,
                clamp: f.clamp,
                dst: temp,
                wmask: tmask & 8 != 0,
                omask: omask & 8 != 0,
                target,
                pred: f.pred,
            };
            inst.w_omask |= d.cond_out;
        }
        let c = &mut inst.common;
        c.tex_sem_wait |= f.common.tex_sem_wait;
        c.write_inactive |= f.common.write_inactive;
        c.last |= f.common.last;
        c.nop |= f.common.nop;
        if f.alu_result.is_some() {
            inst.alu_result = f.alu_result;
        }
    }
    if any_output && any_pred {
        return Err(EncodeError::Invalid(
            "one instruction cannot write outputs and predicate bits (ctm-guide §3.1)",
        ));
    }
    inst.output = any_output;
    if any_output {
        // The unit that writes no output still needs a render-target TARGET value.
        for t in [&mut inst.rgb.target, &mut inst.alpha.target] {
            if let Target::Pred(_) = t {
                *t = Target::Output(0);
            }
        }
    }
    let presub = PresubOpt(slots.presub.unwrap_or(Presub::Bias));
    let src = slots.src.map(|s| s.unwrap_or_default());
    inst.rgb_addr = SourceAddrs { src, presub };
    inst.alpha_addr = SourceAddrs { src, presub };
    inst.encode()?;
    Ok(inst)
}

/// Shorthand for a one-part (vector form) instruction.
pub fn vec_op(
    op: VecOp,
    dst: AluDest,
    srcs: &[Operand],
    flags: AluFlags,
) -> Result<AluInst, EncodeError> {
    build_alu(&[AluPart { unit: Unit::Both, op, dst, srcs, flags }])
}
