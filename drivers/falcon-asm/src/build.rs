//! Operands, form selection and the [`Builder`] (labels and branch relocation).
//!
//! The text assembler and Rust code share this path: a [`Mnemonic`], an optional [`Size`] and
//! [`Operand`]s choose the row of the opcode table whose operand shapes match, preferring the
//! 8-bit immediate form when the value fits (or the 16-bit one when asked with `long`).

use core::fmt;

use crate::isa::{
    Base, Cond, EncodeError, Ext, Index, Instruction, Mnemonic, Op, Pat, ROWS, Reg, Size, Space,
    SpecialReg,
};

/// A label of a [`Builder`]: a code address bound once, usable before it is bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Label(u16);

/// The base of a memory operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum MemBase {
    /// A GPR.
    Reg(Reg),
    /// `$sp` (data segment only).
    Sp,
}

/// The index of a memory operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum MemIndex {
    /// `D[$r2]`: no index.
    None,
    /// A GPR, scaled by the access size (`D[]`) or 4 (`I[]`) by the hardware.
    Reg(Reg),
    /// A byte offset: a multiple of the access size (`D[]`) or of 4 (`I[]`), whose quotient
    /// is the I8 field.
    Offset(u32),
}

/// `D[base + index]` or `I[base + index]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Mem {
    /// Data segment or IO space.
    pub space: Space,
    /// Base register.
    pub base: MemBase,
    /// Index.
    pub index: MemIndex,
}

/// One operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Operand {
    /// `$rN`.
    Reg(Reg),
    /// `$sp`, `$flags`, `$xdbase`, ...
    Sr(SpecialReg),
    /// A number: an immediate, a flag bit, or an absolute code address for `bra`/`jmp`/`call`.
    Imm(i64),
    /// A memory operand.
    Mem(Mem),
    /// A code label (`bra`, `jmp`, `call`: always the 16-bit form).
    Label(Label),
    /// A `bra` condition ([`Cond::ALWAYS`] for an unconditional one).
    Cond(Cond),
}

/// Why an instruction or a program cannot be built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum BuildError {
    /// No form of the mnemonic takes these operands (and size / no size).
    NoMatchingForm(Mnemonic),
    /// A form matches but the immediate does not fit its field (or `.l` asked for a form
    /// with a 16-bit immediate the mnemonic does not have).
    ImmediateOutOfRange,
    /// A memory offset that is not a multiple of the access size (or of 4 in `I[]`).
    MisalignedOffset,
    /// A branch target more than the 16-bit displacement away.
    BranchOutOfRange,
    /// More labels than the builder holds ([`MAX_LABELS`]).
    TooManyLabels,
    /// More label uses than the builder holds ([`MAX_FIXUPS`]).
    TooManyFixups,
    /// A label bound twice.
    LabelBoundTwice,
    /// A label used but never bound.
    UnboundLabel(Label),
    /// The output buffer (or the 64 KiB a 16-bit target reaches) is full.
    OutputFull,
    /// The chosen row refused the fields.
    Encode(EncodeError),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoMatchingForm(m) => write!(f, "no form of `{}` takes these operands", m.name()),
            Self::ImmediateOutOfRange => f.write_str("immediate does not fit the field"),
            Self::MisalignedOffset => {
                f.write_str("memory offset not a multiple of the access size")
            }
            Self::BranchOutOfRange => f.write_str("branch target out of the 16-bit range"),
            Self::TooManyLabels => write!(f, "more than {MAX_LABELS} labels"),
            Self::TooManyFixups => write!(f, "more than {MAX_FIXUPS} label uses"),
            Self::LabelBoundTwice => f.write_str("label bound twice"),
            Self::UnboundLabel(_) => f.write_str("label used but never bound"),
            Self::OutputFull => f.write_str("output buffer full"),
            Self::Encode(_) => f.write_str("instruction fields refused"),
        }
    }
}

impl core::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Encode(e) => Some(e),
            _ => None,
        }
    }
}

impl From<EncodeError> for BuildError {
    fn from(e: EncodeError) -> Self {
        Self::Encode(e)
    }
}

/// Labels a builder holds.
pub const MAX_LABELS: usize = 64;
/// Label uses (branch/jump/call targets) a builder holds.
pub const MAX_FIXUPS: usize = 128;

/// A label use to patch when the program is finished.
#[derive(Clone, Copy)]
struct Fixup {
    /// Address of the instruction (its I16 field is at +2).
    at: u16,
    label: Label,
    /// `$pc`-relative (`bra`) or absolute (`jmp`, `call`).
    relative: bool,
}

fn fits(v: i64, bits: u32, ext: Ext) -> bool {
    match ext {
        Ext::Zero => (0..1i64 << bits).contains(&v),
        Ext::Sign => (-(1i64 << (bits - 1))..1i64 << (bits - 1)).contains(&v),
    }
}

/// The result of matching one row: the instruction, and the label its target waits for.
type Matched = (Instruction, Option<(Label, bool)>);

/// Tries one row against the operands. `Ok(None)`: the shapes differ.
fn try_row(
    op: Op,
    size: Option<Size>,
    ops: &[Operand],
    pc: u32,
) -> Result<Option<Matched>, BuildError> {
    let row = op.row();
    let f = row.format;
    if row.pats.len() != ops.len() || f.is_sized() != size.is_some() {
        return Ok(None);
    }
    let bits = f.imm_bits();
    let mut insn = Instruction::new(op);
    insn.size = size;
    let mut label = None;
    let set_imm = |insn: &mut Instruction, v: i64, ext: Ext| {
        if !fits(v, bits, ext) {
            return Err(BuildError::ImmediateOutOfRange);
        }
        insn.imm = (v as u16) & if bits == 8 { 0xff } else { 0xffff };
        Ok(())
    };
    for (pat, operand) in row.pats.iter().zip(ops) {
        match (*pat, *operand) {
            (Pat::R(field), Operand::Reg(r)) => insn.set_field(field, r.index()),
            (Pat::Sr(field), Operand::Sr(s)) => insn.set_field(field, s.index()),
            (Pat::Sp, Operand::Sr(SpecialReg::SP))
            | (Pat::Flags, Operand::Sr(SpecialReg::FLAGS)) => {}
            (Pat::Imm(ext), Operand::Imm(v)) => set_imm(&mut insn, v, ext)?,
            (Pat::Lit(n), Operand::Imm(v)) if v == i64::from(n) => {}
            (Pat::Cond, Operand::Cond(c)) => insn.cond = c,
            (Pat::Rel, Operand::Imm(target)) => {
                let target = u32::try_from(target).map_err(|_| BuildError::BranchOutOfRange)?;
                let off = i64::from(target.wrapping_sub(pc) as i32);
                set_imm(&mut insn, off, Ext::Sign).map_err(|_| BuildError::BranchOutOfRange)?;
            }
            (Pat::Abs, Operand::Imm(target)) => {
                set_imm(&mut insn, target, Ext::Zero).map_err(|_| BuildError::BranchOutOfRange)?
            }
            (Pat::Rel | Pat::Abs, Operand::Label(l)) if bits == 16 => {
                label = Some((l, *pat == Pat::Rel));
            }
            (Pat::Mem(space, base, index), Operand::Mem(m)) if m.space == space => {
                match (base, m.base) {
                    (Base::R(field), MemBase::Reg(r)) => insn.set_field(field, r.index()),
                    (Base::Sp, MemBase::Sp) => {}
                    _ => return Ok(None),
                }
                match (index, m.index) {
                    (Index::None, MemIndex::None) => {}
                    (Index::R(field), MemIndex::Reg(r)) => insn.set_field(field, r.index()),
                    (Index::Imm, MemIndex::Offset(off)) => {
                        let scale = match space {
                            Space::Data => size.map_or(4, Size::bytes),
                            Space::Io => 4,
                        };
                        if off % scale != 0 {
                            return Err(BuildError::MisalignedOffset);
                        }
                        set_imm(&mut insn, i64::from(off / scale), Ext::Zero)?;
                    }
                    _ => return Ok(None),
                }
            }
            _ => return Ok(None),
        }
    }
    Ok(Some((insn, label)))
}

/// Chooses the row for `mnemonic`, `size` and `operands` at code address `pc`: the first
/// matching row in table order (8-bit immediates before 16-bit ones); `long` keeps only rows
/// with a 16-bit immediate. Returns the instruction and the label its target waits for
/// (`true`: `$pc`-relative).
pub(crate) fn select(
    mnemonic: Mnemonic,
    size: Option<Size>,
    operands: &[Operand],
    long: bool,
    pc: u32,
) -> Result<Matched, BuildError> {
    let mut err = BuildError::NoMatchingForm(mnemonic);
    for (i, row) in ROWS.iter().enumerate() {
        if row.mnemonic != mnemonic || (long && row.format.imm_bits() != 16) {
            continue;
        }
        match try_row(Op::ALL[i], size, operands, pc) {
            Ok(Some(m)) => return Ok(m),
            Ok(None) => {}
            Err(e) => err = e,
        }
    }
    if long && matches!(err, BuildError::NoMatchingForm(_)) {
        // Some form matched without `long`: the mnemonic has no 16-bit immediate form here.
        if select(mnemonic, size, operands, false, pc).is_ok() {
            return Err(BuildError::ImmediateOutOfRange);
        }
    }
    Err(err)
}

/// The operands of a decoded instruction at `pc`, in the order [`select`] takes them.
pub(crate) fn operands(insn: &Instruction, pc: u32, out: &mut [Operand; 3]) -> usize {
    let row = insn.op.row();
    let reg = |v: u8| Operand::Reg(Reg::new(v).unwrap_or(crate::isa::regs::R0));
    for (slot, pat) in out.iter_mut().zip(row.pats) {
        *slot = match *pat {
            Pat::R(f) => reg(insn.field(f)),
            Pat::Sr(f) => Operand::Sr(SpecialReg::new(insn.field(f)).unwrap_or(SpecialReg::IV0)),
            Pat::Sp => Operand::Sr(SpecialReg::SP),
            Pat::Flags => Operand::Sr(SpecialReg::FLAGS),
            Pat::Imm(_) | Pat::Abs => Operand::Imm(i64::from(insn.imm_value())),
            Pat::Lit(n) => Operand::Imm(i64::from(n)),
            Pat::Cond => Operand::Cond(insn.cond),
            Pat::Rel => Operand::Imm(i64::from(insn.branch_target(pc).unwrap_or(0))),
            Pat::Mem(space, base, index) => {
                let base = match base {
                    Base::R(f) => {
                        MemBase::Reg(Reg::new(insn.field(f)).unwrap_or(crate::isa::regs::R0))
                    }
                    Base::Sp => MemBase::Sp,
                };
                let scale = match space {
                    Space::Data => insn.size.map_or(4, Size::bytes),
                    Space::Io => 4,
                };
                let index = match index {
                    Index::None => MemIndex::None,
                    Index::R(f) => {
                        MemIndex::Reg(Reg::new(insn.field(f)).unwrap_or(crate::isa::regs::R0))
                    }
                    Index::Imm => MemIndex::Offset(u32::from(insn.imm) * scale),
                };
                Operand::Mem(Mem { space, base, index })
            }
        };
    }
    row.pats.len()
}

/// Whether [`select`] would pick a shorter form for the instruction's operands, so that the
/// text must say `.l` to keep the 16-bit form.
pub(crate) fn needs_long(insn: &Instruction, pc: u32) -> bool {
    if insn.op.format().imm_bits() != 16 {
        return false;
    }
    let mut ops = [Operand::Imm(0); 3];
    let n = operands(insn, pc, &mut ops);
    select(insn.op.mnemonic(), insn.size, &ops[..n], false, pc).is_ok_and(|(i, _)| i.op != insn.op)
}

/// Assembles a program into a caller buffer: instructions at increasing addresses from 0,
/// labels bound anywhere, targets patched by [`Builder::finish`].
///
/// ```
/// use baregpu_falcon_asm::{Builder, Cond, Mnemonic, Operand, Size, regs::*};
/// let mut code = [0u8; 64];
/// let mut b = Builder::new(&mut code);
/// let top = b.label()?;
/// b.bind(top)?;
/// b.asm(Mnemonic::Sub, Some(Size::B32), &[Operand::Reg(R1), Operand::Imm(1)])?;
/// b.bra(Cond::NZ, top)?;
/// b.exit()?;
/// let len = b.finish()?;
/// // sub b32 $r1, 1 (0xb6 0x12 0x01); bra nz back by 3 (f5 1b, displacement -3); exit (f8 02)
/// assert_eq!(code[..len], [0xb6, 0x12, 0x01, 0xf5, 0x1b, 0xfd, 0xff, 0xf8, 0x02]);
/// # Ok::<(), baregpu_falcon_asm::BuildError>(())
/// ```
pub struct Builder<'o> {
    out: &'o mut [u8],
    len: usize,
    labels: [Option<u16>; MAX_LABELS],
    nlabels: usize,
    fixups: [Fixup; MAX_FIXUPS],
    nfixups: usize,
}

impl<'o> Builder<'o> {
    /// A builder writing into `out` from address 0.
    pub fn new(out: &'o mut [u8]) -> Self {
        let none = Fixup { at: 0, label: Label(0), relative: false };
        Self {
            out,
            len: 0,
            labels: [None; MAX_LABELS],
            nlabels: 0,
            fixups: [none; MAX_FIXUPS],
            nfixups: 0,
        }
    }

    /// The address of the next instruction.
    pub fn here(&self) -> u32 {
        self.len as u32
    }

    /// A new, unbound label.
    pub fn label(&mut self) -> Result<Label, BuildError> {
        if self.nlabels == MAX_LABELS {
            return Err(BuildError::TooManyLabels);
        }
        self.nlabels += 1;
        Ok(Label(self.nlabels as u16 - 1))
    }

    /// Binds `label` to the next instruction's address.
    pub fn bind(&mut self, label: Label) -> Result<(), BuildError> {
        let slot =
            self.labels.get_mut(usize::from(label.0)).ok_or(BuildError::UnboundLabel(label))?;
        if slot.is_some() {
            return Err(BuildError::LabelBoundTwice);
        }
        *slot = Some(u16::try_from(self.len).map_err(|_| BuildError::OutputFull)?);
        Ok(())
    }

    /// Appends an encoded instruction.
    pub fn emit(&mut self, insn: &Instruction) -> Result<(), BuildError> {
        if self.len + insn.len() > 0x1_0000 {
            return Err(BuildError::OutputFull);
        }
        let rest = self.out.get_mut(self.len..).ok_or(BuildError::OutputFull)?;
        let n = insn.encode(rest).map_err(|e| match e {
            EncodeError::BufferTooSmall => BuildError::OutputFull,
            e => BuildError::Encode(e),
        })?;
        self.len += n;
        Ok(())
    }

    /// Appends the form of `mnemonic` that takes `operands` (the smallest that fits; with
    /// `long`, one with a 16-bit immediate); returns it.
    pub fn asm_form(
        &mut self,
        mnemonic: Mnemonic,
        size: Option<Size>,
        operands: &[Operand],
        long: bool,
    ) -> Result<Instruction, BuildError> {
        let (insn, label) = select(mnemonic, size, operands, long, self.here())?;
        if let Some((label, relative)) = label {
            if usize::from(label.0) >= self.nlabels {
                return Err(BuildError::UnboundLabel(label));
            }
            if self.nfixups == MAX_FIXUPS {
                return Err(BuildError::TooManyFixups);
            }
            let at = u16::try_from(self.len).map_err(|_| BuildError::OutputFull)?;
            self.fixups[self.nfixups] = Fixup { at, label, relative };
            self.nfixups += 1;
        }
        self.emit(&insn)?;
        Ok(insn)
    }

    /// [`Self::asm_form`] choosing the smallest form.
    pub fn asm(
        &mut self,
        mnemonic: Mnemonic,
        size: Option<Size>,
        operands: &[Operand],
    ) -> Result<Instruction, BuildError> {
        self.asm_form(mnemonic, size, operands, false)
    }

    /// `bra cond label` (§2.10.5; the 16-bit form).
    pub fn bra(&mut self, cond: Cond, label: Label) -> Result<(), BuildError> {
        self.asm(Mnemonic::Bra, None, &[Operand::Cond(cond), Operand::Label(label)]).map(drop)
    }

    /// `jmp label` (absolute, the 16-bit form).
    pub fn jmp(&mut self, label: Label) -> Result<(), BuildError> {
        self.asm(Mnemonic::Jmp, None, &[Operand::Label(label)]).map(drop)
    }

    /// `call label` (absolute, the 16-bit form).
    pub fn call(&mut self, label: Label) -> Result<(), BuildError> {
        self.asm(Mnemonic::Call, None, &[Operand::Label(label)]).map(drop)
    }

    /// `exit` (§2.10.6).
    pub fn exit(&mut self) -> Result<(), BuildError> {
        self.asm(Mnemonic::Exit, None, &[]).map(drop)
    }

    /// `ret` (§2.10.5).
    pub fn ret(&mut self) -> Result<(), BuildError> {
        self.asm(Mnemonic::Ret, None, &[]).map(drop)
    }

    /// Patches every label use; returns the program length in bytes.
    pub fn finish(self) -> Result<usize, BuildError> {
        for fx in &self.fixups[..self.nfixups] {
            let target =
                self.labels[usize::from(fx.label.0)].ok_or(BuildError::UnboundLabel(fx.label))?;
            let value = if fx.relative {
                let off = i32::from(target) - i32::from(fx.at);
                i16::try_from(off).map_err(|_| BuildError::BranchOutOfRange)? as u16
            } else {
                target
            };
            let at = usize::from(fx.at) + 2;
            self.out[at..at + 2].copy_from_slice(&value.to_le_bytes());
        }
        Ok(self.len)
    }
}
