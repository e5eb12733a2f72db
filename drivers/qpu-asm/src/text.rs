//! The text syntax (described in the crate documentation): [`assemble`] with line/column
//! [`AsmError`]s, and the disassembler ([`Instruction::display`], [`disassemble`]) whose text
//! assembles back to the same words.

use core::fmt::{self, Write};

use crate::build::{
    AluSpec, BuildError, Dst, MAX_LABELS, OperandError, Pipe, Src, set_once, write_swap,
};
use crate::isa::{
    APack, AddOp, Alu, Branch, BranchCond, Cond, DecodeError, File, Instruction, LoadImm,
    LoadImmKind, MulOp, MulPack, Mux, Packing, RaddrB, Reg, Semaphore, Signal, SmallImm, Unpack,
    WriteBack,
};

/// What is wrong at a position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum AsmErrorKind {
    /// Not an operation, instruction or item name.
    UnknownMnemonic,
    /// Syntax error: what was expected.
    Expected(&'static str),
    /// A malformed number, or one out of range for its place.
    BadNumber,
    /// A name that is no register for its place (source or destination).
    UnknownRegister,
    /// A `.suffix` that does not apply there.
    UnknownSuffix,
    /// Pack/unpack suffixes (or `pm`) that need both values of the pm bit, or two different
    /// packs or unpacks.
    PackConflict,
    /// A pack on a destination the pack mode does not apply to (regfile-A packs on the pipe
    /// writing side A, colour conversions on the mul pipe) or an unpack on a source that is
    /// neither a side-A read nor r4.
    PackPlacement,
    /// A label defined twice.
    DuplicateLabel,
    /// A label never defined.
    UndefinedLabel,
    /// Operands that make no instruction.
    Operands(OperandError),
    /// The program does not fit (or has too many labels).
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
            AsmErrorKind::UnknownMnemonic => f.write_str("unknown instruction or item"),
            AsmErrorKind::Expected(what) => write!(f, "expected {what}"),
            AsmErrorKind::BadNumber => f.write_str("malformed or out-of-range number"),
            AsmErrorKind::UnknownRegister => f.write_str("no such register here"),
            AsmErrorKind::UnknownSuffix => f.write_str("suffix does not apply here"),
            AsmErrorKind::PackConflict => f.write_str("conflicting pack/unpack modes"),
            AsmErrorKind::PackPlacement => {
                f.write_str("pack or unpack on an operand it cannot apply to")
            }
            AsmErrorKind::DuplicateLabel => f.write_str("label defined twice"),
            AsmErrorKind::UndefinedLabel => f.write_str("label never defined"),
            AsmErrorKind::Operands(e) => write!(f, "{e}"),
            AsmErrorKind::Build(e) => write!(f, "{e}"),
        }
    }
}

impl core::error::Error for AsmError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match &self.kind {
            AsmErrorKind::Operands(e) => Some(e),
            AsmErrorKind::Build(e) => Some(e),
            _ => None,
        }
    }
}

/// A piece of a line with its 1-based column.
#[derive(Clone, Copy)]
struct Tok<'s> {
    s: &'s str,
    col: u32,
}

struct Ctx {
    line: u32,
}

impl Ctx {
    fn err<T>(&self, t: Tok<'_>, kind: AsmErrorKind) -> Result<T, AsmError> {
        Err(AsmError { line: self.line, column: t.col, kind })
    }
}

impl<'s> Tok<'s> {
    fn trim(self) -> Self {
        let lead = self.s.len() - self.s.trim_start().len();
        Tok { s: self.s.trim(), col: self.col + lead as u32 }
    }
    /// Splits at every `sep` (the pieces trimmed).
    fn split(self, sep: char) -> impl Iterator<Item = Tok<'s>> {
        let mut at = 0usize;
        self.s.split(sep).map(move |p| {
            let t = Tok { s: p, col: self.col + at as u32 }.trim();
            at += p.len() + 1;
            t
        })
    }
    /// The first whitespace-separated word and the rest.
    fn word(self) -> (Tok<'s>, Tok<'s>) {
        let t = self.trim();
        let end = t.s.find(char::is_whitespace).unwrap_or(t.s.len());
        (Tok { s: &t.s[..end], col: t.col }, Tok { s: &t.s[end..], col: t.col + end as u32 }.trim())
    }
    /// Name and `.suffix` pieces.
    fn dotted(self) -> (Tok<'s>, impl Iterator<Item = Tok<'s>>) {
        let mut parts = self.split('.');
        let head = parts.next().unwrap_or(self);
        (head, parts)
    }
}

fn parse_int(t: Tok<'_>) -> Option<i64> {
    let (neg, s) = match t.s.strip_prefix('-') {
        Some(s) => (true, s),
        None => (false, t.s.strip_prefix('+').unwrap_or(t.s)),
    };
    let v = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        i64::from_str_radix(h, 16).ok()?
    } else if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        s.parse::<i64>().ok()?
    } else {
        return None;
    };
    if v > u32::MAX as i64 {
        return None;
    }
    Some(if neg { -v } else { v })
}

/// `raN`/`rbN` with N up to `max`.
fn file_reg(name: &str, max: u8) -> Option<(File, Reg)> {
    let (file, n) = if let Some(n) = name.strip_prefix("ra") {
        (File::A, n)
    } else {
        (File::B, name.strip_prefix("rb")?)
    };
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) || n.len() > 2 {
        return None;
    }
    let n: u8 = n.parse().ok()?;
    if n > max {
        return None;
    }
    Some((file, Reg::new(n)?))
}

/// Pack requests of one instruction: the pm bit, the pack and the unpack, each once.
#[derive(Default)]
struct PackState {
    pm: Option<bool>,
    apack: Option<APack>,
    mpack: Option<MulPack>,
    unpack: Option<Unpack>,
}

impl PackState {
    fn pm(&mut self, pm: bool) -> bool {
        set_once(&mut self.pm, pm)
    }
    fn unpack(&mut self, u: Unpack) -> bool {
        set_once(&mut self.unpack, u)
    }
    fn packing(&self) -> Packing {
        let unpack = self.unpack.unwrap_or(Unpack::None);
        if self.pm == Some(true) {
            Packing::MulR4 { unpack, pack: self.mpack.unwrap_or(MulPack::None) }
        } else {
            Packing::RegfileA { unpack, pack: self.apack.unwrap_or(APack::None) }
        }
    }
}

/// A destination pack suffix and where it was.
#[derive(Clone, Copy)]
enum DstPack {
    A(APack),
    Mul(MulPack),
}

/// A parsed destination: the register, its condition suffix, its pack suffix.
type ParsedDst<'s> = (Dst, Option<Cond>, Option<(DstPack, Tok<'s>)>);

/// Parses `name[.suffix]...` as a destination; cond suffixes only where `conds`.
fn parse_dst<'s>(cx: &Ctx, t: Tok<'s>, conds: bool) -> Result<ParsedDst<'s>, AsmError> {
    let (head, suffixes) = t.dotted();
    let dst = if let Some((file, reg)) = file_reg(head.s, 31) {
        Dst::on(file, reg)
    } else if let Some((reg, side)) = Reg::from_write_name(head.s) {
        Dst { reg, side }
    } else {
        return cx.err(head, AsmErrorKind::UnknownRegister);
    };
    let mut cond = None;
    let mut pack: Option<(DstPack, Tok<'s>)> = None;
    for s in suffixes {
        if let (true, Some(c)) = (conds, Cond::from_name(s.s)) {
            if cond.replace(c).is_some() {
                return cx.err(s, AsmErrorKind::UnknownSuffix);
            }
        } else if let Some(p) = MulPack::from_name(s.s).filter(|p| *p != MulPack::None) {
            if pack.replace((DstPack::Mul(p), s)).is_some() {
                return cx.err(s, AsmErrorKind::PackConflict);
            }
        } else if s.s == "sat" {
            let base = match pack {
                None => APack::None,
                Some((DstPack::A(p), _)) if p.bits() < 8 => p,
                _ => return cx.err(s, AsmErrorKind::UnknownSuffix),
            };
            let sat = APack::from_bits(base.bits() + 8).unwrap_or(APack::Sat);
            pack = Some((DstPack::A(sat), s));
        } else if let Some(p) = APack::from_name(s.s).filter(|p| p.bits() < 8 && *p != APack::None)
        {
            if pack.replace((DstPack::A(p), s)).is_some() {
                return cx.err(s, AsmErrorKind::PackConflict);
            }
        } else {
            return cx.err(s, AsmErrorKind::UnknownSuffix);
        }
    }
    Ok((dst, cond, pack))
}

/// Records a destination pack for the pipe writing `side` (`mul`: the mul pipe).
fn place_pack(
    cx: &Ctx,
    packs: &mut PackState,
    pack: Option<(DstPack, Tok<'_>)>,
    side: File,
    mul: bool,
) -> Result<(), AsmError> {
    let Some((p, t)) = pack else { return Ok(()) };
    match p {
        DstPack::A(p) => {
            if side != File::A {
                return cx.err(t, AsmErrorKind::PackPlacement);
            }
            if !packs.pm(false) || !set_once(&mut packs.apack, p) {
                return cx.err(t, AsmErrorKind::PackConflict);
            }
        }
        DstPack::Mul(p) => {
            if !mul {
                return cx.err(t, AsmErrorKind::PackPlacement);
            }
            if !packs.pm(true) || !set_once(&mut packs.mpack, p) {
                return cx.err(t, AsmErrorKind::PackConflict);
            }
        }
    }
    Ok(())
}

fn parse_src<'s>(cx: &Ctx, t: Tok<'s>) -> Result<(Src, Option<(Unpack, Tok<'s>)>), AsmError> {
    if t.s.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '+') {
        let imm = if t.s.contains('.') {
            t.s.parse::<f32>().ok().and_then(SmallImm::float)
        } else {
            parse_int(t).and_then(|v| i8::try_from(v).ok()).and_then(SmallImm::int)
        };
        return match imm {
            Some(s) => Ok((Src::Imm(s), None)),
            None => cx.err(t, AsmErrorKind::BadNumber),
        };
    }
    let (head, mut suffixes) = t.dotted();
    let src = match head.s.as_bytes() {
        [b'r', d @ b'0'..=b'5'] => Src::Acc(Mux::from_bits(d - b'0').unwrap_or(Mux::R0)),
        _ => {
            if let Some((file, reg)) = file_reg(head.s, 63) {
                match file {
                    File::A => Src::A(reg),
                    File::B => Src::B(reg),
                }
            } else if let Some((reg, side)) = Reg::from_read_name(head.s) {
                match side {
                    None => Src::Either(reg),
                    Some(File::A) => Src::A(reg),
                    Some(File::B) => Src::B(reg),
                }
            } else {
                return cx.err(head, AsmErrorKind::UnknownRegister);
            }
        }
    };
    let unpack = match (suffixes.next(), suffixes.next()) {
        (None, _) => None,
        (Some(s), None) => match Unpack::from_name(s.s).filter(|u| *u != Unpack::None) {
            Some(u) => Some((u, s)),
            None => return cx.err(s, AsmErrorKind::UnknownSuffix),
        },
        (Some(_), Some(s)) => return cx.err(s, AsmErrorKind::UnknownSuffix),
    };
    Ok((src, unpack))
}

/// A parsed pipe: its spec and the suffixes to place once the write swap is known.
struct ParsedPipe<'s, Op> {
    pipe: Pipe<Op>,
    sf: bool,
    pack: Option<(DstPack, Tok<'s>)>,
    unpacks: [Option<(Unpack, Tok<'s>)>; 2],
}

fn parse_pipe<'s, Op: Copy>(
    cx: &Ctx,
    seg: Tok<'s>,
    op_of: impl Fn(&str) -> Option<Op>,
    nop: Op,
    mov: Op,
) -> Result<ParsedPipe<'s, Op>, AsmError> {
    let (mn, rest) = seg.word();
    let (head, mods) = mn.dotted();
    let (op, is_mov) = if head.s == "mov" {
        (mov, true)
    } else {
        match op_of(head.s) {
            Some(op) => (op, false),
            None => return cx.err(head, AsmErrorKind::UnknownMnemonic),
        }
    };
    let is_nop = !is_mov && rest.s.is_empty() && head.s == "nop";
    let mut cond = None;
    let mut sf = false;
    for m in mods {
        if m.s == "setf" && !sf {
            sf = true;
        } else if let Some(c) = Cond::from_name(m.s).filter(|_| cond.is_none()) {
            cond = Some(c);
        } else {
            return cx.err(m, AsmErrorKind::UnknownSuffix);
        }
    }
    let default_cond = if head.s == "nop" { Cond::Never } else { Cond::Always };
    let cond = cond.unwrap_or(default_cond);
    if is_nop {
        let pipe = Pipe { op: nop, cond, dst: Dst::NOP, a: Src::R0, b: Src::R0 };
        return Ok(ParsedPipe { pipe, sf, pack: None, unpacks: [None, None] });
    }
    let mut ops = rest.split(',');
    let want = if is_mov { "destination, source" } else { "destination, source, source" };
    let d = ops.next().filter(|t| !t.s.is_empty());
    let a = ops.next();
    let b = if is_mov { None } else { ops.next() };
    let (Some(d), Some(a)) = (d, a) else { return cx.err(rest, AsmErrorKind::Expected(want)) };
    if !is_mov && b.is_none() {
        return cx.err(rest, AsmErrorKind::Expected(want));
    }
    if let Some(extra) = ops.next() {
        return cx.err(extra, AsmErrorKind::Expected("end of operands"));
    }
    let (dst, _, pack) = parse_dst(cx, d, false)?;
    let (a, ua) = parse_src(cx, a)?;
    let (b, ub) = match b {
        Some(b) => parse_src(cx, b)?,
        None => (a, ua),
    };
    Ok(ParsedPipe { pipe: Pipe { op, cond, dst, a, b }, sf, pack, unpacks: [ua, ub] })
}

/// Item names that may start a line with no pipes.
fn is_item(word: &str) -> bool {
    Signal::from_name(word).is_some()
        || matches!(word, "rot" | "ws" | "pm")
        || word
            .split_once('=')
            .is_some_and(|(k, _)| matches!(k, "raddr_a" | "raddr_b" | "si" | "unpack"))
}

/// Items after the pipes.
#[derive(Default)]
struct Items {
    sig: Option<Signal>,
    rotate: Option<SmallImm>,
    ws: bool,
    raddr_a: Option<Reg>,
    raddr_b: Option<RaddrB>,
}

fn parse_item(
    cx: &Ctx,
    t: Tok<'_>,
    items: &mut Items,
    packs: &mut PackState,
) -> Result<(), AsmError> {
    let (w, rest) = t.word();
    let dup = |cx: &Ctx| cx.err(t, AsmErrorKind::Expected("each item once"));
    if let Some(sig) = Signal::from_name(w.s) {
        if items.sig.replace(sig).is_some() {
            return dup(cx);
        }
    } else if w.s == "rot" {
        let rot = if rest.s == "r5" {
            Some(SmallImm::ROTATE_R5)
        } else {
            parse_int(rest).and_then(|n| u8::try_from(n).ok()).and_then(SmallImm::rotate)
        };
        match rot {
            Some(r) if items.rotate.replace(r).is_none() => {}
            Some(_) => return dup(cx),
            None => return cx.err(rest, AsmErrorKind::Expected("rotation 1-15 or r5")),
        }
        return Ok(());
    } else if w.s == "ws" {
        items.ws = true;
    } else if w.s == "pm" {
        if !packs.pm(true) {
            return cx.err(w, AsmErrorKind::PackConflict);
        }
    } else if let Some((k, v)) = w.s.split_once('=') {
        let vt = Tok { s: v, col: w.col + k.len() as u32 + 1 };
        let n = parse_int(vt).and_then(|n| u8::try_from(n).ok());
        let Some(n) = n.filter(|n| *n < 64) else { return cx.err(vt, AsmErrorKind::BadNumber) };
        match k {
            "raddr_a" => items.raddr_a = Some(Reg::raw(n)),
            "raddr_b" => items.raddr_b = Some(RaddrB::Reg(Reg::raw(n))),
            "si" => items.raddr_b = SmallImm::from_bits(n).map(RaddrB::Imm),
            "unpack" => match Unpack::from_bits(n) {
                Some(u) if packs.unpack(u) => {}
                Some(_) => return cx.err(w, AsmErrorKind::PackConflict),
                None => return cx.err(vt, AsmErrorKind::BadNumber),
            },
            _ => return cx.err(w, AsmErrorKind::UnknownMnemonic),
        }
    } else {
        return cx.err(w, AsmErrorKind::UnknownMnemonic);
    }
    if !rest.s.is_empty() {
        return cx.err(rest, AsmErrorKind::Expected("`;` before the next item"));
    }
    Ok(())
}

fn parse_alu<'s>(cx: &Ctx, body: Tok<'s>) -> Result<Alu, AsmError> {
    let mut segs = body.split(';').peekable();
    let mut add: Option<ParsedPipe<'s, AddOp>> = None;
    let mut mul: Option<ParsedPipe<'s, MulOp>> = None;
    let first = *segs.peek().unwrap_or(&body);
    let first_word = first.word().0.dotted().0.s;
    if !is_item(first_word) {
        segs.next();
        if AddOp::from_name(first_word).is_some() || first_word == "mov" {
            add = Some(parse_pipe(cx, first, AddOp::from_name, AddOp::Nop, AddOp::Or)?);
            if let Some(&second) = segs.peek() {
                let w = second.word().0.dotted().0.s;
                if MulOp::from_name(w).is_some() || w == "mov" {
                    segs.next();
                    mul = Some(parse_pipe(cx, second, MulOp::from_name, MulOp::Nop, MulOp::V8min)?);
                }
            }
        } else if MulOp::from_name(first_word).is_some() {
            mul = Some(parse_pipe(cx, first, MulOp::from_name, MulOp::Nop, MulOp::V8min)?);
        } else {
            return cx.err(first.word().0, AsmErrorKind::UnknownMnemonic);
        }
    }
    let mut packs = PackState::default();
    let mut items = Items::default();
    for seg in segs {
        parse_item(cx, seg, &mut items, &mut packs)?;
    }
    let add = add.unwrap_or(ParsedPipe {
        pipe: Pipe::<AddOp>::NOP,
        sf: false,
        pack: None,
        unpacks: [None, None],
    });
    let mul = mul.unwrap_or(ParsedPipe {
        pipe: Pipe::<MulOp>::NOP,
        sf: false,
        pack: None,
        unpacks: [None, None],
    });
    let spec = AluSpec {
        add: add.pipe,
        mul: mul.pipe,
        sig: items.sig.unwrap_or(Signal::None),
        sf: add.sf || mul.sf,
        ws: items.ws,
        packing: Packing::NONE,
        rotate: items.rotate,
        raddr_a: items.raddr_a,
        raddr_b: items.raddr_b,
    };
    let at = |e| AsmError { line: cx.line, column: body.col, kind: AsmErrorKind::Operands(e) };
    let alu = spec.resolve().map_err(at)?;
    place_pack(cx, &mut packs, add.pack, alu.wb.add_side(), false)?;
    place_pack(cx, &mut packs, mul.pack, alu.wb.mul_side(), true)?;
    let muxes = [alu.add_a, alu.add_b, alu.mul_a, alu.mul_b];
    let unpacks = [add.unpacks[0], add.unpacks[1], mul.unpacks[0], mul.unpacks[1]];
    for (mux, u) in muxes.iter().zip(unpacks) {
        let Some((u, t)) = u else { continue };
        let pm = match mux {
            Mux::A => false,
            Mux::R4 => true,
            _ => return cx.err(t, AsmErrorKind::PackPlacement),
        };
        if !packs.pm(pm) || !packs.unpack(u) {
            return cx.err(t, AsmErrorKind::PackConflict);
        }
    }
    Ok(Alu { packing: packs.packing(), ..alu })
}

/// `ldi`, `sem` and branch link destinations (`dst[.cond][.pack]`), with write swap.
fn parse_writeback<'s>(
    cx: &Ctx,
    dsts: [Option<Tok<'s>>; 2],
    sf: bool,
    conds: bool,
    items: &Items,
    packs: &mut PackState,
) -> Result<WriteBack, AsmError> {
    let mut parsed = [(Dst::NOP, None, None); 2];
    for (slot, t) in parsed.iter_mut().zip(dsts) {
        if let Some(t) = t {
            *slot = parse_dst(cx, t, conds)?;
        }
    }
    let [(da, ca, pa), (dm, cm, pm)] = parsed;
    let at = dsts[0].unwrap_or(Tok { s: "", col: 1 });
    let ws = match write_swap(da, dm, items.ws) {
        Ok(ws) => ws,
        Err(e) => return cx.err(at, AsmErrorKind::Operands(e)),
    };
    let default = |d: Dst| if d.reg == Reg::NOP { Cond::Never } else { Cond::Always };
    let wb = WriteBack {
        waddr_add: da.reg,
        waddr_mul: dm.reg,
        cond_add: ca.unwrap_or(default(da)),
        cond_mul: cm.unwrap_or(default(dm)),
        sf,
        ws,
    };
    place_pack(cx, packs, pa, wb.add_side(), false)?;
    place_pack(cx, packs, pm, wb.mul_side(), true)?;
    Ok(wb)
}

fn parse_line<'s>(
    cx: &Ctx,
    body: Tok<'s>,
    index: usize,
    labels: &Labels<'s>,
) -> Result<Instruction, AsmError> {
    let (mn, _) = body.word();
    let (head, mods) = mn.dotted();
    let (main, item_segs) = match body.s.find(';') {
        Some(i) => (
            Tok { s: &body.s[..i], col: body.col }.trim(),
            Some(Tok { s: &body.s[i + 1..], col: body.col + i as u32 + 1 }),
        ),
        None => (body, None),
    };
    if !matches!(head.s, "ldi" | "sem" | "bra") {
        return Ok(Instruction::Alu(parse_alu(cx, body)?));
    }
    let mut packs = PackState::default();
    let mut items = Items::default();
    if let Some(segs) = item_segs {
        for seg in segs.split(';') {
            parse_item(cx, seg, &mut items, &mut packs)?;
            if items.sig.is_some()
                || items.rotate.is_some()
                || items.raddr_b.is_some()
                || packs.unpack.is_some()
            {
                return cx.err(seg, AsmErrorKind::Expected("`ws`, `pm` or `raddr_a=` here"));
            }
            if items.raddr_a.is_some() && head.s != "bra" {
                return cx.err(seg, AsmErrorKind::Expected("`ws` or `pm` here"));
            }
        }
    }
    let (_, operands) = main.word();
    let mut ops = operands.split(',');
    let mut sf = false;
    let mut kind = LoadImmKind::Word;
    let mut bcond = BranchCond::Always;
    for m in mods {
        match (head.s, m.s) {
            ("ldi" | "sem", "setf") if !sf => sf = true,
            ("ldi", "pes") if kind == LoadImmKind::Word => kind = LoadImmKind::PerElementSigned,
            ("ldi", "peu") if kind == LoadImmKind::Word => kind = LoadImmKind::PerElementUnsigned,
            ("bra", c) if bcond == BranchCond::Always => match BranchCond::from_name(c) {
                Some(c) => bcond = c,
                None => return cx.err(m, AsmErrorKind::UnknownSuffix),
            },
            _ => return cx.err(m, AsmErrorKind::UnknownSuffix),
        }
    }
    let need = |t: Option<Tok<'s>>, what| match t {
        Some(t) if !t.s.is_empty() => Ok(t),
        _ => cx.err(operands, AsmErrorKind::Expected(what)),
    };
    match head.s {
        "ldi" => {
            let d = need(ops.next(), "destination, value")?;
            let v = need(ops.next(), "destination, value")?;
            let value = match parse_int(v) {
                Some(n) if n >= i32::MIN as i64 => n as u32,
                _ => return cx.err(v, AsmErrorKind::BadNumber),
            };
            let dm = ops.next();
            if let Some(extra) = ops.next() {
                return cx.err(extra, AsmErrorKind::Expected("end of operands"));
            }
            let wb = parse_writeback(cx, [Some(d), dm], sf, true, &items, &mut packs)?;
            Ok(Instruction::LoadImm(LoadImm { kind, value, packing: packs.packing(), wb }))
        }
        "sem" => {
            let t = need(ops.next(), "acq or rel and a semaphore number")?;
            let (dir, n) = t.word();
            let acquire = match dir.s {
                "acq" => true,
                "rel" => false,
                _ => return cx.err(dir, AsmErrorKind::Expected("acq or rel")),
            };
            let index = match parse_int(n) {
                Some(i @ 0..=15) => i as u8,
                _ => return cx.err(n, AsmErrorKind::BadNumber),
            };
            let dsts = [ops.next(), ops.next()];
            if let Some(extra) = ops.next() {
                return cx.err(extra, AsmErrorKind::Expected("end of operands"));
            }
            let wb = parse_writeback(cx, dsts, sf, true, &items, &mut packs)?;
            Ok(Instruction::Semaphore(Semaphore { acquire, index, packing: packs.packing(), wb }))
        }
        _ => {
            let t = need(ops.next(), "a branch target")?;
            let dsts = [ops.next(), ops.next()];
            if let Some(extra) = ops.next() {
                return cx.err(extra, AsmErrorKind::Expected("end of operands"));
            }
            let wb = parse_writeback(cx, dsts, false, false, &items, &mut packs)?;
            if packs.pm.is_some() {
                return cx.err(t, AsmErrorKind::PackPlacement);
            }
            let (rel, reg, raddr, immediate) = parse_target(cx, t, index, labels)?;
            Ok(Instruction::Branch(Branch {
                cond: bcond,
                rel,
                reg: reg.is_some(),
                raddr_a: reg.or(items.raddr_a.map(|r| r.index() & 31)).unwrap_or(raddr),
                waddr_add: wb.waddr_add,
                waddr_mul: wb.waddr_mul,
                ws: wb.ws,
                immediate,
            }))
        }
    }
}

/// `-> label` | `rel|abs [raN +] N`: (rel, register, default raddr_a, immediate).
fn parse_target(
    cx: &Ctx,
    t: Tok<'_>,
    index: usize,
    labels: &Labels<'_>,
) -> Result<(bool, Option<u8>, u8, i32), AsmError> {
    if let Some(name) = t.s.strip_prefix("->") {
        let nt = Tok { s: name, col: t.col + 2 }.trim();
        let Some(target) = labels.find(nt.s) else {
            return cx.err(nt, AsmErrorKind::UndefinedLabel);
        };
        return Ok((true, None, 0, (target as i32 - (index as i32 + 4)).wrapping_mul(8)));
    }
    let (mode, rest) = t.word();
    let rel = match mode.s {
        "rel" => true,
        "abs" => false,
        _ => return cx.err(mode, AsmErrorKind::Expected("`-> label`, `rel N` or `abs N`")),
    };
    let (reg, num) = match rest.s.split_once('+') {
        Some((r, n)) => {
            let rt = Tok { s: r, col: rest.col }.trim();
            match file_reg(rt.s, 31) {
                Some((File::A, r)) => {
                    (Some(r.index()), Tok { s: n, col: rest.col + rt.s.len() as u32 + 1 }.trim())
                }
                _ => return cx.err(rt, AsmErrorKind::Expected("a regfile A location ra0-ra31")),
            }
        }
        None => (None, rest),
    };
    match parse_int(num) {
        Some(n) if n >= i32::MIN as i64 => Ok((rel, reg, 0, n as u32 as i32)),
        _ => cx.err(num, AsmErrorKind::BadNumber),
    }
}

/// Label names of one text program and their instruction indices.
struct Labels<'s> {
    names: [(&'s str, usize); MAX_LABELS],
    len: usize,
}

impl<'s> Labels<'s> {
    fn find(&self, name: &str) -> Option<usize> {
        self.names[..self.len].iter().find(|(n, _)| *n == name).map(|(_, i)| *i)
    }
}

/// A line split into its label (if any) and instruction text (without the comment).
fn split_line(line: &str) -> (Option<Tok<'_>>, Tok<'_>) {
    let end = [line.find('#'), line.find("//")].into_iter().flatten().min().unwrap_or(line.len());
    let t = Tok { s: &line[..end], col: 1 };
    if let Some(i) = t.s.find(':') {
        let name = Tok { s: &t.s[..i], col: 1 }.trim();
        let valid = !name.s.is_empty()
            && name.s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            && !name.s.starts_with(|c: char| c.is_ascii_digit());
        if valid {
            return (Some(name), Tok { s: &t.s[i + 1..], col: i as u32 + 2 }.trim());
        }
    }
    (None, t.trim())
}

/// Assembles `text` (the syntax in the crate documentation) into `out`; the number of words.
pub fn assemble(text: &str, out: &mut [u64]) -> Result<usize, AsmError> {
    let mut labels = Labels { names: [("", 0); MAX_LABELS], len: 0 };
    let mut count = 0usize;
    for (n, line) in text.lines().enumerate() {
        let cx = Ctx { line: n as u32 + 1 };
        let (label, body) = split_line(line);
        if let Some(l) = label {
            if labels.find(l.s).is_some() {
                return cx.err(l, AsmErrorKind::DuplicateLabel);
            }
            if labels.len == MAX_LABELS {
                return cx.err(l, AsmErrorKind::Build(BuildError::TooManyLabels));
            }
            labels.names[labels.len] = (l.s, count);
            labels.len += 1;
        }
        if !body.s.is_empty() {
            count += 1;
        }
    }
    let mut index = 0usize;
    for (n, line) in text.lines().enumerate() {
        let cx = Ctx { line: n as u32 + 1 };
        let (_, body) = split_line(line);
        if body.s.is_empty() {
            continue;
        }
        let insn = parse_line(&cx, body, index, &labels)?;
        let word = insn.encode().map_err(|e| AsmError {
            line: cx.line,
            column: body.col,
            kind: AsmErrorKind::Operands(OperandError::Encode(e)),
        })?;
        let Some(slot) = out.get_mut(index) else {
            return cx.err(body, AsmErrorKind::Build(BuildError::OutOfSpace(out.len())));
        };
        *slot = word;
        index += 1;
    }
    Ok(index)
}

// ---- Disassembly ----

/// The text of one instruction ([`Instruction::display`]).
pub struct Display<'a>(&'a Instruction);

impl Instruction {
    /// Text that [`assemble`] turns back into the same word.
    pub fn display(&self) -> impl fmt::Display + '_ {
        Display(self)
    }
}

impl fmt::Display for Display<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Instruction::Alu(a) => write_alu(f, a),
            Instruction::LoadImm(l) => {
                f.write_str("ldi")?;
                match l.kind {
                    LoadImmKind::Word => {}
                    LoadImmKind::PerElementSigned => f.write_str(".pes")?,
                    LoadImmKind::PerElementUnsigned => f.write_str(".peu")?,
                }
                if l.wb.sf {
                    f.write_str(".setf")?;
                }
                f.write_char(' ')?;
                let (add, mul) = wb_dsts(&l.wb, l.packing);
                write!(f, "{add}")?;
                write!(f, ", {:#x}", l.value)?;
                if mul.needed() {
                    write!(f, ", {mul}")?;
                }
                write_wb_items(f, &l.wb, l.packing)
            }
            Instruction::Semaphore(s) => {
                f.write_str("sem")?;
                if s.wb.sf {
                    f.write_str(".setf")?;
                }
                write!(f, " {} {}", if s.acquire { "acq" } else { "rel" }, s.index)?;
                let (add, mul) = wb_dsts(&s.wb, s.packing);
                if add.needed() || mul.needed() {
                    write!(f, ", {add}")?;
                }
                if mul.needed() {
                    write!(f, ", {mul}")?;
                }
                write_wb_items(f, &s.wb, s.packing)
            }
            Instruction::Branch(b) => {
                f.write_str("bra")?;
                if b.cond != BranchCond::Always {
                    write!(f, ".{}", b.cond.name())?;
                }
                write!(f, " {}", if b.rel { "rel" } else { "abs" })?;
                if b.reg {
                    write!(f, " ra{} +", b.raddr_a)?;
                }
                write!(f, " {}", b.immediate)?;
                let wb = WriteBack {
                    waddr_add: b.waddr_add,
                    waddr_mul: b.waddr_mul,
                    cond_add: Cond::Never,
                    cond_mul: Cond::Never,
                    sf: false,
                    ws: b.ws,
                };
                let dst = |reg: Reg, side| DstText { reg, side, cond: None, pack: None };
                let (add, mul) = (dst(b.waddr_add, wb.add_side()), dst(b.waddr_mul, wb.mul_side()));
                let mul_needed = b.waddr_mul != Reg::NOP;
                if b.waddr_add != Reg::NOP || mul_needed {
                    write!(f, ", {add}")?;
                }
                if mul_needed {
                    write!(f, ", {mul}")?;
                }
                if b.ws && !implied_ws(&wb) {
                    f.write_str(" ; ws")?;
                }
                if !b.reg && b.raddr_a != 0 {
                    write!(f, " ; raddr_a={}", b.raddr_a)?;
                }
                Ok(())
            }
        }
    }
}

/// A destination as text: name, condition suffix (when not the default), pack suffix.
struct DstText {
    reg: Reg,
    side: File,
    cond: Option<Cond>,
    pack: Option<&'static str>,
}

impl DstText {
    fn needed(&self) -> bool {
        self.reg != Reg::NOP || self.cond.is_some() || self.pack.is_some()
    }
}

impl fmt::Display for DstText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.reg.write_name(self.side) {
            Some(n) => f.write_str(n)?,
            None => write!(f, "r{}{}", side_char(self.side), self.reg.index())?,
        }
        if let Some(c) = self.cond {
            write!(f, ".{}", c.name())?;
        }
        if let Some(p) = self.pack {
            write!(f, ".{p}")?;
        }
        Ok(())
    }
}

fn side_char(s: File) -> char {
    match s {
        File::A => 'a',
        File::B => 'b',
    }
}

/// The pack suffixes of the add and mul destinations.
fn pack_suffixes(wb: &WriteBack, packing: Packing) -> (Option<&'static str>, Option<&'static str>) {
    match packing {
        Packing::RegfileA { pack: APack::None, .. }
        | Packing::MulR4 { pack: MulPack::None, .. } => (None, None),
        Packing::RegfileA { pack, .. } if wb.add_side() == File::A => (Some(pack.name()), None),
        Packing::RegfileA { pack, .. } => (None, Some(pack.name())),
        Packing::MulR4 { pack, .. } => (None, Some(pack.name())),
    }
}

fn wb_dsts(wb: &WriteBack, packing: Packing) -> (DstText, DstText) {
    let (pa, pm) = pack_suffixes(wb, packing);
    let default = |r: Reg| if r == Reg::NOP { Cond::Never } else { Cond::Always };
    let cond = |r: Reg, c: Cond| (c != default(r)).then_some(c);
    (
        DstText {
            reg: wb.waddr_add,
            side: wb.add_side(),
            cond: cond(wb.waddr_add, wb.cond_add),
            pack: pa,
        },
        DstText {
            reg: wb.waddr_mul,
            side: wb.mul_side(),
            cond: cond(wb.waddr_mul, wb.cond_mul),
            pack: pm,
        },
    )
}

/// The write swap follows from a sided destination name.
fn implied_ws(wb: &WriteBack) -> bool {
    wb.waddr_add.write_is_sided() || wb.waddr_mul.write_is_sided()
}

/// `; ws` and `; pm` where the destinations do not show them.
fn write_wb_items(f: &mut fmt::Formatter<'_>, wb: &WriteBack, packing: Packing) -> fmt::Result {
    if wb.ws && !implied_ws(wb) {
        f.write_str(" ; ws")?;
    }
    if matches!(packing, Packing::MulR4 { pack: MulPack::None, .. }) {
        f.write_str(" ; pm")?;
    }
    Ok(())
}

/// How a source prints: its text, and whether it is an either-side name.
#[derive(Clone, Copy)]
enum SrcText {
    Acc(u8),
    Reg(File, Reg),
    Name(&'static str, Reg, Option<File>),
    Imm(SmallImm),
}

impl SrcText {
    fn of(a: &Alu, mux: Mux, explicit: bool) -> Self {
        let reg_text = |side: File, r: Reg| match r.read_name(side) {
            Some(n) if !r.read_is_sided() && !explicit => Self::Name(n, r, None),
            Some(n) if r.read_is_sided() => Self::Name(n, r, Some(side)),
            _ => Self::Reg(side, r),
        };
        match mux {
            Mux::A => reg_text(File::A, a.raddr_a),
            Mux::B => match a.raddr_b {
                RaddrB::Reg(r) => reg_text(File::B, r),
                RaddrB::Imm(s) => Self::Imm(s),
            },
            m => Self::Acc(m.bits()),
        }
    }
    fn src(self) -> Src {
        match self {
            Self::Acc(n) => Src::Acc(Mux::from_bits(n).unwrap_or(Mux::R0)),
            Self::Reg(File::A, r) | Self::Name(_, r, Some(File::A)) => Src::A(r),
            Self::Reg(File::B, r) | Self::Name(_, r, Some(File::B)) => Src::B(r),
            Self::Name(_, r, None) => Src::Either(r),
            Self::Imm(s) => Src::Imm(s),
        }
    }
}

impl fmt::Display for SrcText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Acc(n) => write!(f, "r{n}"),
            Self::Reg(side, r) => write!(f, "r{}{}", side_char(side), r.index()),
            Self::Name(n, ..) => f.write_str(n),
            Self::Imm(s) => match s.bits() {
                0..=31 => write!(f, "{}", s.value().unwrap_or(0) as i32),
                _ => write!(f, "{:?}", f32::from_bits(s.value().unwrap_or(0))),
            },
        }
    }
}

fn write_alu(f: &mut fmt::Formatter<'_>, a: &Alu) -> fmt::Result {
    let muxes = [a.add_a, a.add_b, a.mul_a, a.mul_b];
    let reads_a = muxes.contains(&Mux::A);
    let reads_b = muxes.contains(&Mux::B);
    // Unused read fields print as items; with them, either-side names print by name only if
    // the assembler would put them where they are.
    let raddr_a = (!reads_a && a.raddr_a != Reg::NOP).then_some(a.raddr_a);
    let rotation = match a.raddr_b {
        RaddrB::Imm(s) => s.rotation().map(|_| s),
        RaddrB::Reg(_) => None,
    };
    let raddr_b = match a.raddr_b {
        _ if reads_b || rotation.is_some() => None,
        RaddrB::Reg(r) if r == Reg::NOP => None,
        other => Some(other),
    };
    let mut srcs = muxes.map(|m| SrcText::of(a, m, false));
    let spec = |srcs: &[SrcText; 4]| AluSpec {
        add: Pipe {
            op: a.op_add,
            cond: a.wb.cond_add,
            dst: Dst::NOP,
            a: srcs[0].src(),
            b: srcs[1].src(),
        },
        mul: Pipe {
            op: a.op_mul,
            cond: a.wb.cond_mul,
            dst: Dst::NOP,
            a: srcs[2].src(),
            b: srcs[3].src(),
        },
        sig: Signal::None,
        sf: false,
        ws: false,
        packing: Packing::NONE,
        rotate: rotation,
        raddr_a,
        raddr_b,
    };
    let same = |r: Result<Alu, OperandError>| {
        r.is_ok_and(|r| {
            (r.raddr_a, r.raddr_b, [r.add_a, r.add_b, r.mul_a, r.mul_b])
                == (a.raddr_a, a.raddr_b, muxes)
        })
    };
    if !same(spec(&srcs).resolve()) {
        srcs = muxes.map(|m| SrcText::of(a, m, true));
    }
    let (pack_add, pack_mul) = pack_suffixes(&a.wb, a.packing);
    let unpack = a.packing.unpack();
    let unpack_mux = if a.packing.pm() { Mux::R4 } else { Mux::A };
    let unpack_shown = unpack != Unpack::None && muxes.contains(&unpack_mux);
    let sf_on_add = a.op_add != AddOp::Nop && a.wb.cond_add != Cond::Never;
    let add = PipeText {
        op: if a.op_add == AddOp::Or && a.add_a == a.add_b { "mov" } else { a.op_add.name() },
        nop: a.op_add == AddOp::Nop,
        mov: a.op_add == AddOp::Or && a.add_a == a.add_b,
        cond: a.wb.cond_add,
        sf: a.wb.sf && sf_on_add,
        dst: DstText { reg: a.wb.waddr_add, side: a.wb.add_side(), cond: None, pack: pack_add },
        srcs: [(srcs[0], a.add_a), (srcs[1], a.add_b)],
        unpack: (unpack_shown).then_some((unpack, unpack_mux)),
    };
    let mul = PipeText {
        op: if a.op_mul == MulOp::V8min && a.mul_a == a.mul_b { "mov" } else { a.op_mul.name() },
        nop: a.op_mul == MulOp::Nop,
        mov: a.op_mul == MulOp::V8min && a.mul_a == a.mul_b,
        cond: a.wb.cond_mul,
        sf: a.wb.sf && !sf_on_add,
        dst: DstText { reg: a.wb.waddr_mul, side: a.wb.mul_side(), cond: None, pack: pack_mul },
        srcs: [(srcs[2], a.mul_a), (srcs[3], a.mul_b)],
        unpack: add.unpack,
    };
    let sig = (a.sig != Signal::None).then_some(a.sig.name());
    let mut parts = 0;
    let sep = |f: &mut fmt::Formatter<'_>, parts: &mut usize| {
        *parts += 1;
        if *parts > 1 { f.write_str(" ; ") } else { Ok(()) }
    };
    let pipes_bare = add.bare() && mul.bare();
    if !pipes_bare || (sig.is_none() && !needs_items(a, raddr_a, raddr_b, rotation, unpack_shown)) {
        sep(f, &mut parts)?;
        write!(f, "{add}")?;
        if !mul.bare() {
            sep(f, &mut parts)?;
            write!(f, "{mul}")?;
        }
    }
    if let Some(s) = sig {
        sep(f, &mut parts)?;
        f.write_str(s)?;
    }
    if let Some(r) = rotation {
        sep(f, &mut parts)?;
        match r.rotation() {
            Some(Some(n)) => write!(f, "rot {n}")?,
            _ => f.write_str("rot r5")?,
        }
    }
    if a.wb.ws && !implied_ws(&a.wb) {
        sep(f, &mut parts)?;
        f.write_str("ws")?;
    }
    if a.packing.pm() && pack_mul.is_none() && !unpack_shown {
        sep(f, &mut parts)?;
        f.write_str("pm")?;
    }
    if let Some(r) = raddr_a {
        sep(f, &mut parts)?;
        write!(f, "raddr_a={}", r.index())?;
    }
    match raddr_b {
        Some(RaddrB::Reg(r)) => {
            sep(f, &mut parts)?;
            write!(f, "raddr_b={}", r.index())?;
        }
        Some(RaddrB::Imm(s)) => {
            sep(f, &mut parts)?;
            write!(f, "si={}", s.bits())?;
        }
        None => {}
    }
    if unpack != Unpack::None && !unpack_shown {
        sep(f, &mut parts)?;
        write!(f, "unpack={}", unpack.bits())?;
    }
    Ok(())
}

fn needs_items(
    a: &Alu,
    ra: Option<Reg>,
    rb: Option<RaddrB>,
    rot: Option<SmallImm>,
    unpack_shown: bool,
) -> bool {
    (a.wb.ws && !implied_ws(&a.wb))
        || a.packing.pm()
        || ra.is_some()
        || rb.is_some()
        || rot.is_some()
        || (a.packing.unpack() != Unpack::None && !unpack_shown)
}

struct PipeText {
    op: &'static str,
    nop: bool,
    mov: bool,
    cond: Cond,
    sf: bool,
    dst: DstText,
    srcs: [(SrcText, Mux); 2],
    unpack: Option<(Unpack, Mux)>,
}

impl PipeText {
    fn bare(&self) -> bool {
        self.nop
            && self.cond == Cond::Never
            && !self.sf
            && self.dst.reg == Reg::NOP
            && self.dst.pack.is_none()
            && self.srcs[0].1 == Mux::R0
            && self.srcs[1].1 == Mux::R0
    }
}

impl fmt::Display for PipeText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.op)?;
        let default = if self.nop { Cond::Never } else { Cond::Always };
        if self.cond != default {
            write!(f, ".{}", self.cond.name())?;
        }
        if self.sf {
            f.write_str(".setf")?;
        }
        if self.bare() {
            return Ok(());
        }
        write!(f, " {}", self.dst)?;
        let n = if self.mov { 1 } else { 2 };
        for (text, mux) in &self.srcs[..n] {
            write!(f, ", {text}")?;
            if let Some((u, m)) = self.unpack
                && *mux == m
            {
                write!(f, ".{}", u.name())?;
            }
        }
        Ok(())
    }
}

/// A program's listing ([`disassemble`]).
pub struct Disassembly<'a>(&'a [u64]);

impl fmt::Display for Disassembly<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for &w in self.0 {
            match Instruction::decode(w) {
                Ok(i) => writeln!(f, "{}", i.display())?,
                Err(e) => writeln!(f, "# {w:#018x}: {e}")?,
            }
        }
        Ok(())
    }
}

/// Writes one line per word into `out` ([`Instruction::display`]); the first word that does
/// not decode is the error (with its index), after the lines before it.
pub fn disassemble(words: &[u64], out: &mut impl Write) -> Result<(), (usize, DecodeError)> {
    for (i, &w) in words.iter().enumerate() {
        let insn = Instruction::decode(w).map_err(|e| (i, e))?;
        // A formatter error can only come from `out`; the listing stops there.
        if writeln!(out, "{}", insn.display()).is_err() {
            break;
        }
    }
    Ok(())
}

impl<'a> Disassembly<'a> {
    /// The listing of `words` (undecodable words as `#` comments).
    pub fn new(words: &'a [u64]) -> Self {
        Self(words)
    }
}
