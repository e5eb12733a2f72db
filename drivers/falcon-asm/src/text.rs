//! The text syntax: [`assemble`] (with line/column [`AsmError`]s) and the disassembler
//! ([`Instruction::display_at`], [`disassemble`]).

use core::fmt;

use crate::build::{
    BuildError, Builder, Label, MAX_LABELS, Mem, MemBase, MemIndex, Operand, needs_long, operands,
};
use crate::isa::{Cond, DecodeError, Instruction, Mnemonic, Reg, Size, Space, SpecialReg};

/// What is wrong on a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum AsmErrorKind {
    /// Not an instruction name.
    UnknownMnemonic,
    /// Syntax error: what was expected.
    Expected(&'static str),
    /// A malformed number, or one that does not fit 32 bits.
    BadNumber,
    /// `$name` that is no register.
    UnknownRegister,
    /// A label defined twice.
    DuplicateLabel,
    /// A label used but never defined (at its first use).
    UndefinedLabel,
    /// The instruction cannot be built (form, range, capacity).
    Build(BuildError),
}

/// A text assembly error at a 1-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct AsmError {
    /// Line, from 1.
    pub line: u32,
    /// Column (bytes), from 1.
    pub column: u32,
    /// What.
    pub kind: AsmErrorKind,
}

impl fmt::Display for AsmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: ", self.line, self.column)?;
        match self.kind {
            AsmErrorKind::UnknownMnemonic => f.write_str("unknown instruction"),
            AsmErrorKind::Expected(what) => write!(f, "expected {what}"),
            AsmErrorKind::BadNumber => f.write_str("malformed number"),
            AsmErrorKind::UnknownRegister => f.write_str("unknown register"),
            AsmErrorKind::DuplicateLabel => f.write_str("label defined twice"),
            AsmErrorKind::UndefinedLabel => f.write_str("label never defined"),
            AsmErrorKind::Build(e) => write!(f, "{e}"),
        }
    }
}

impl core::error::Error for AsmError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match &self.kind {
            AsmErrorKind::Build(e) => Some(e),
            _ => None,
        }
    }
}

/// Label names of one text program.
struct Names<'s> {
    names: [(&'s str, u32, u32); MAX_LABELS],
    labels: [Option<Label>; MAX_LABELS],
    defined: [bool; MAX_LABELS],
    len: usize,
}

impl<'s> Names<'s> {
    fn get(
        &mut self,
        b: &mut Builder<'_>,
        name: &'s str,
        line: u32,
        col: u32,
    ) -> Result<Label, AsmErrorKind> {
        if let Some(i) = self.names[..self.len].iter().position(|(n, _, _)| *n == name) {
            return self.labels[i].ok_or(AsmErrorKind::UndefinedLabel);
        }
        let label = b.label().map_err(AsmErrorKind::Build)?;
        self.names[self.len] = (name, line, col);
        self.labels[self.len] = Some(label);
        self.len += 1;
        Ok(label)
    }
}

fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    c.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && c.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
}

fn number(s: &str) -> Option<i64> {
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s),
    };
    let v = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        if !h.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        u32::from_str_radix(h, 16).ok()?
    } else {
        if !body.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        body.parse::<u32>().ok()?
    };
    Some(if neg { -i64::from(v) } else { i64::from(v) })
}

fn register(s: &str) -> Result<Operand, AsmErrorKind> {
    let name = s.strip_prefix('$').ok_or(AsmErrorKind::Expected("a register"))?;
    if let Some(n) = name.strip_prefix('r').or_else(|| name.strip_prefix('R'))
        && let Some(r) = n.parse::<u8>().ok().and_then(Reg::new)
    {
        return Ok(Operand::Reg(r));
    }
    SpecialReg::from_name(name).map(Operand::Sr).ok_or(AsmErrorKind::UnknownRegister)
}

fn memory(space: Space, inner: &str) -> Result<Operand, AsmErrorKind> {
    let (base, index) = match inner.split_once('+') {
        Some((b, i)) => (b.trim(), Some(i.trim())),
        None => (inner.trim(), None),
    };
    let base = match register(base)? {
        Operand::Reg(r) => MemBase::Reg(r),
        Operand::Sr(SpecialReg::SP) => MemBase::Sp,
        _ => return Err(AsmErrorKind::Expected("a base register")),
    };
    let index = match index {
        None => MemIndex::None,
        Some(i) if i.starts_with('$') => match register(i)? {
            Operand::Reg(r) => MemIndex::Reg(r),
            _ => return Err(AsmErrorKind::Expected("an index register")),
        },
        Some(i) => {
            let v = number(i).ok_or(AsmErrorKind::BadNumber)?;
            MemIndex::Offset(u32::try_from(v).map_err(|_| AsmErrorKind::BadNumber)?)
        }
    };
    Ok(Operand::Mem(Mem { space, base, index }))
}

/// `D[...` or `I[...` (either case): the space and the text after `[`.
fn space_of(part: &str) -> Option<(Space, &str)> {
    let (head, inner) = part.split_once('[')?;
    match head {
        "D" | "d" => Some((Space::Data, inner)),
        "I" | "i" => Some((Space::Io, inner)),
        _ => None,
    }
}

/// Column (1-based) of `part` inside `line` (`part` is a subslice of it).
fn col_of(line: &str, part: &str) -> u32 {
    (part.as_ptr() as usize - line.as_ptr() as usize + 1) as u32
}

/// Assembles `source` into `out` from address 0; returns the length in bytes.
///
/// One statement per line; `;` or `//` start a comment; `name:` defines a label (an
/// instruction may follow on the line). A statement is `mnemonic[.l] [b8|b16|b32] operands`,
/// operands separated by commas: `$r0`-`$r15`, special registers by name (`$sp`, `$flags`,
/// `$xdbase`, `$sr2`), numbers (decimal, `0x` hex, `-`), `D[$rB]`, `D[$rB + off]`,
/// `D[$rB + $rI]`, `D[$sp + off]`, `D[$sp + $rI]`, `I[$rB]`, `I[$rB + off]`, `I[$rB + $rI]`
/// (offsets in bytes; a register index is scaled by the hardware: by the access size in
/// `D[]`, §2.10.4, by 4 in `I[]`, §2.10.10, so `ld b32 $r1, D[$r2 + $r3]` reads
/// `$r2 + $r3 * 4`), labels. `bra` takes an
/// optional condition word before its target, without a comma: `bra ne loop`,
/// `bra not $p1 0x20`. Targets of `bra` are absolute addresses; `.l` asks for the 16-bit
/// immediate form where the 8-bit one would fit (label targets always use it).
///
/// An error found only when the labels are patched (a `bra` more than the 16-bit
/// displacement from its label) has line and column 0.
pub fn assemble(source: &str, out: &mut [u8]) -> Result<usize, AsmError> {
    let mut b = Builder::new(out);
    let mut names = Names {
        names: [("", 0, 0); MAX_LABELS],
        labels: [None; MAX_LABELS],
        defined: [false; MAX_LABELS],
        len: 0,
    };
    for (n, raw) in source.lines().enumerate() {
        let line_no = n as u32 + 1;
        let err = |part: &str, kind| AsmError { line: line_no, column: col_of(raw, part), kind };
        let mut line = raw;
        for c in [";", "//"] {
            if let Some(i) = line.find(c) {
                line = &line[..i];
            }
        }
        let mut stmt = line.trim();
        if let Some((name, rest)) = stmt.split_once(':') {
            let name = name.trim();
            if !is_ident(name) {
                return Err(err(name, AsmErrorKind::Expected("a label name")));
            }
            let label =
                names.get(&mut b, name, line_no, col_of(raw, name)).map_err(|k| err(name, k))?;
            let i = names.names[..names.len].iter().position(|(x, _, _)| *x == name).unwrap_or(0);
            if names.defined[i] {
                return Err(err(name, AsmErrorKind::DuplicateLabel));
            }
            names.defined[i] = true;
            b.bind(label).map_err(|e| err(name, AsmErrorKind::Build(e)))?;
            stmt = rest.trim();
        }
        if stmt.is_empty() {
            continue;
        }
        let (head, rest) = stmt.split_once(char::is_whitespace).unwrap_or((stmt, ""));
        let (name, long) = match head.strip_suffix(".l").or_else(|| head.strip_suffix(".L")) {
            Some(n) => (n, true),
            None => (head, false),
        };
        let mnemonic =
            Mnemonic::from_name(name).ok_or_else(|| err(head, AsmErrorKind::UnknownMnemonic))?;
        let mut rest = rest.trim();
        let mut size = None;
        let (first, tail) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        if let Some(s) = Size::ALL.iter().find(|s| s.name().eq_ignore_ascii_case(first)) {
            size = Some(*s);
            rest = tail.trim();
        }
        let mut ops = [Operand::Imm(0); 4];
        let mut count = 0;
        if mnemonic == Mnemonic::Bra {
            // `bra [cond] target`: the condition is the words before the last one.
            let (cond_text, target) = rest.rsplit_once(char::is_whitespace).unwrap_or(("", rest));
            let cond_text = cond_text.trim();
            let cond = if cond_text.is_empty() {
                Cond::ALWAYS
            } else {
                Cond::from_name(cond_text)
                    .ok_or_else(|| err(cond_text, AsmErrorKind::Expected("a condition")))?
            };
            ops[0] = Operand::Cond(cond);
            count = 1;
            rest = target;
        }
        if !rest.is_empty() {
            for part in rest.split(',') {
                let part = part.trim();
                if count == ops.len() {
                    return Err(err(part, AsmErrorKind::Expected("at most three operands")));
                }
                let op = if part.is_empty() {
                    Err(AsmErrorKind::Expected("an operand"))
                } else if part.starts_with('$') {
                    register(part)
                } else if let Some((space, inner)) = space_of(part) {
                    inner
                        .strip_suffix(']')
                        .ok_or(AsmErrorKind::Expected("`]`"))
                        .and_then(|i| memory(space, i))
                } else if let Some(v) = number(part) {
                    Ok(Operand::Imm(v))
                } else if part.starts_with(|c: char| c.is_ascii_digit() || c == '-') {
                    Err(AsmErrorKind::BadNumber)
                } else if is_ident(part) {
                    names.get(&mut b, part, line_no, col_of(raw, part)).map(Operand::Label)
                } else {
                    Err(AsmErrorKind::Expected("an operand"))
                };
                ops[count] = op.map_err(|k| err(part, k))?;
                count += 1;
            }
        }
        b.asm_form(mnemonic, size, &ops[..count], long)
            .map_err(|e| err(head, AsmErrorKind::Build(e)))?;
    }
    if let Some(i) = (0..names.len).find(|&i| !names.defined[i]) {
        let (_, line, column) = names.names[i];
        return Err(AsmError { line, column, kind: AsmErrorKind::UndefinedLabel });
    }
    b.finish().map_err(|e| AsmError { line: 0, column: 0, kind: AsmErrorKind::Build(e) })
}

/// An instruction shown as text at a code address (see [`Instruction::display_at`]).
pub struct Disassembly<'i> {
    insn: &'i Instruction,
    pc: u32,
}

fn write_operand(f: &mut fmt::Formatter<'_>, op: &Operand) -> fmt::Result {
    match op {
        Operand::Reg(r) => write!(f, "$r{}", r.index()),
        Operand::Sr(s) => write!(f, "{s}"),
        Operand::Imm(v) if *v < 0 => write!(f, "-{:#x}", v.unsigned_abs()),
        Operand::Imm(v) => write!(f, "{v:#x}"),
        Operand::Cond(c) => write!(f, "{c}"),
        Operand::Label(_) => f.write_str("?"),
        Operand::Mem(m) => {
            f.write_str(match m.space {
                Space::Data => "D[",
                Space::Io => "I[",
            })?;
            match m.base {
                MemBase::Reg(r) => write!(f, "$r{}", r.index())?,
                MemBase::Sp => f.write_str("$sp")?,
            }
            match m.index {
                MemIndex::None => {}
                MemIndex::Reg(r) => write!(f, " + $r{}", r.index())?,
                MemIndex::Offset(o) => write!(f, " + {o:#x}")?,
            }
            f.write_str("]")
        }
    }
}

impl fmt::Display for Disassembly<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let insn = self.insn;
        f.write_str(insn.op.mnemonic().name())?;
        if needs_long(insn, self.pc) {
            f.write_str(".l")?;
        }
        if let Some(s) = insn.size {
            write!(f, " {}", s.name())?;
        }
        let mut ops = [Operand::Imm(0); 3];
        let n = operands(insn, self.pc, &mut ops);
        let mut sep = " ";
        for op in &ops[..n] {
            if *op == Operand::Cond(Cond::ALWAYS) {
                continue;
            }
            f.write_str(sep)?;
            write_operand(f, op)?;
            sep = if matches!(op, Operand::Cond(_)) { " " } else { ", " };
        }
        Ok(())
    }
}

impl Instruction {
    /// The instruction as text when it sits at `pc` (`bra` targets are absolute); the text
    /// assembles back to the same instruction at the same address.
    pub fn display_at(&self, pc: u32) -> Disassembly<'_> {
        Disassembly { insn: self, pc }
    }
}

/// Disassembles `code` (loaded at address 0), one `address: text` line per instruction,
/// into `out`; stops at the first undecodable bytes with their error and address.
pub fn disassemble(code: &[u8], out: &mut impl fmt::Write) -> Result<(), (u32, DecodeError)> {
    let mut pc = 0usize;
    while pc < code.len() {
        let (insn, len) = Instruction::decode(&code[pc..]).map_err(|e| (pc as u32, e))?;
        // A formatter that fails (full buffer) ends the listing; the bytes were fine.
        if writeln!(out, "{pc:04x}: {}", insn.display_at(pc as u32)).is_err() {
            return Ok(());
        }
        pc += len;
    }
    Ok(())
}
