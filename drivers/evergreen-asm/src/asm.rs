//! The text assembler: a line lexer and a statement parser that drive a [`Builder`]. The
//! syntax is documented in the crate root.

use crate::alu::{AluOp, Omod};
use crate::build::{Builder, FetchClause, Label, MAX_LABELS, Node, ProgramInfo};
use crate::error::{Error, ErrorKind};
use crate::isa::{
    AluCfInst, Chan, Chip, DataFormat, DstSel, NumFormat, RatCfInst, RatExport, RatInst, VtxFetch,
};
use crate::program::{AluInst, Dst, Operand, Slot, Src};

/// Tokens on one line.
const MAX_TOKENS: usize = 64;
/// Instructions in one `{ … }` group (5 slots, plus room for the error on the sixth).
const MAX_GROUP: usize = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok<'s> {
    Word(&'s str),
    Num(&'s str),
    Punct(char),
}

#[derive(Debug, Clone, Copy)]
struct Token<'s> {
    tok: Tok<'s>,
    start: usize,
}

type R<T> = Result<T, Error>;

/// A CF statement without operands.
type CfFn<'n> = fn(&mut Builder<'n>) -> R<()>;

fn column(text: &str, byte: usize) -> u32 {
    text[..byte.min(text.len())].chars().count() as u32 + 1
}

/// Splits a line into tokens; `;` and `//` start a comment.
fn lex<'s>(text: &'s str, line: u32, out: &mut [Token<'s>; MAX_TOKENS]) -> R<usize> {
    let b = text.as_bytes();
    let (mut i, mut n) = (0, 0);
    while i < b.len() {
        let c = b[i];
        if matches!(c, b' ' | b'\t' | b'\r') {
            i += 1;
            continue;
        }
        if c == b';' || (c == b'/' && b.get(i + 1) == Some(&b'/')) {
            break;
        }
        let start = i;
        let err = |kind| Error { line, col: column(text, start), kind };
        let tok = if c.is_ascii_alphabetic() || c == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            Tok::Word(&text[start..i])
        } else if c.is_ascii_digit() {
            let hex = c == b'0' && matches!(b.get(i + 1), Some(b'x' | b'X'));
            while i < b.len() {
                let d = b[i];
                let exp_sign = matches!(d, b'-' | b'+') && !hex && matches!(b[i - 1], b'e' | b'E');
                if d.is_ascii_alphanumeric() || d == b'_' || d == b'.' || exp_sign {
                    i += 1;
                } else {
                    break;
                }
            }
            Tok::Num(&text[start..i])
        } else if b",:[]{}|-=.".contains(&c) {
            i += 1;
            Tok::Punct(c as char)
        } else {
            return Err(err(ErrorKind::Expected("a mnemonic, register, number or punctuation")));
        };
        if n == MAX_TOKENS {
            return Err(err(ErrorKind::Capacity("tokens on a line")));
        }
        out[n] = Token { tok, start };
        n += 1;
    }
    Ok(n)
}

/// A cursor over the tokens of one line.
struct Line<'t, 's> {
    toks: &'t [Token<'s>],
    i: usize,
    text: &'s str,
    line: u32,
}

impl<'s> Line<'_, 's> {
    fn peek(&self) -> Option<Tok<'s>> {
        self.toks.get(self.i).map(|t| t.tok)
    }
    fn peek2(&self) -> Option<Tok<'s>> {
        self.toks.get(self.i + 1).map(|t| t.tok)
    }
    fn col(&self) -> u32 {
        self.col_of(self.i)
    }
    fn col_of(&self, i: usize) -> u32 {
        match self.toks.get(i) {
            Some(t) => column(self.text, t.start),
            None => column(self.text, self.text.trim_end().len()),
        }
    }
    fn fail(&self, kind: ErrorKind) -> Error {
        Error { line: self.line, col: self.col(), kind }
    }
    fn fail_at(&self, i: usize, kind: ErrorKind) -> Error {
        Error { line: self.line, col: self.col_of(i), kind }
    }
    fn at_end(&self) -> bool {
        self.i >= self.toks.len()
    }
    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(Tok::Punct(c)) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, c: char, what: &'static str) -> R<()> {
        if self.eat(c) { Ok(()) } else { Err(self.fail(ErrorKind::Expected(what))) }
    }
    fn word(&mut self, what: &'static str) -> R<&'s str> {
        match self.peek() {
            Some(Tok::Word(w)) => {
                self.i += 1;
                Ok(w)
            }
            _ => Err(self.fail(ErrorKind::Expected(what))),
        }
    }
    fn end(&self) -> R<()> {
        if self.at_end() { Ok(()) } else { Err(self.fail(ErrorKind::Expected("end of line"))) }
    }
    /// An unsigned decimal or `0x` number no larger than `max`.
    fn uint(&mut self, max: u32) -> R<u32> {
        let Some(Tok::Num(t)) = self.peek() else {
            return Err(self.fail(ErrorKind::Expected("a number")));
        };
        let v = parse_uint(t).filter(|&v| v <= max).ok_or(self.fail(ErrorKind::BadNumber))?;
        self.i += 1;
        Ok(v)
    }
}

fn parse_uint(t: &str) -> Option<u32> {
    match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u32::from_str_radix(h, 16).ok(),
        None => t.parse().ok(),
    }
}

/// The 32-bit value of a numeric operand: `0x` hex and decimal integers as their bits
/// (negative ones two's complement), anything with `.` or an exponent as an `f32`.
fn number_bits(t: &str, negative: bool) -> Option<u32> {
    let is_float = !t.starts_with("0x")
        && !t.starts_with("0X")
        && t.bytes().any(|c| matches!(c, b'.' | b'e' | b'E'));
    if is_float {
        let v: f32 = t.parse().ok()?;
        return Some(if negative { -v } else { v }.to_bits());
    }
    let v = parse_uint(t)?;
    if !negative {
        return Some(v);
    }
    (v <= 1 << 31).then(|| (v as i32).wrapping_neg() as u32)
}

fn is(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}

fn chan_of(w: &str) -> Option<Chan> {
    let mut it = w.chars();
    let c = it.next()?.to_ascii_lowercase();
    if it.next().is_some() {
        return None;
    }
    ['x', 'y', 'z', 'w'].iter().position(|&x| x == c).map(Chan::from_index)
}

fn slot_of(w: &str) -> Option<Slot> {
    if is(w, "t") { Some(Slot::T) } else { chan_of(w).map(Slot::of_chan) }
}

/// `rN` → N (0..=127).
fn gpr_of(w: &str) -> Option<Option<u8>> {
    let digits = w.strip_prefix('r').or_else(|| w.strip_prefix('R'))?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(digits.parse::<u8>().ok().filter(|&g| g <= 127))
}

/// `<prefix>N` → N (case-insensitive prefix), or `None` when `w` is not of that form.
fn prefixed(w: &str, prefix: &str, max: u32) -> Option<Option<u32>> {
    if w.len() <= prefix.len() || !is(&w[..prefix.len()], prefix) {
        return None;
    }
    let digits = &w[prefix.len()..];
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(digits.parse::<u32>().ok().filter(|&v| v <= max))
}

const ALU_CF: [(&str, AluCfInst); 5] = [
    ("alu", AluCfInst::Alu),
    ("alu_push_before", AluCfInst::AluPushBefore),
    ("alu_pop_after", AluCfInst::AluPopAfter),
    ("alu_pop2_after", AluCfInst::AluPop2After),
    ("alu_else_after", AluCfInst::AluElseAfter),
];

struct OpenGroup {
    insts: [AluInst; MAX_GROUP],
    pos: [(u32, u32); MAX_GROUP],
    n: usize,
    line: u32,
    col: u32,
}

struct Asm<'s, 'n> {
    b: Builder<'n>,
    names: [(&'s str, Label); MAX_LABELS],
    nnames: usize,
    group: Option<OpenGroup>,
}

impl<'s, 'n> Asm<'s, 'n> {
    fn label(&mut self, name: &'s str) -> Result<Label, ErrorKind> {
        if let Some((_, l)) = self.names[..self.nnames].iter().find(|(n, _)| *n == name) {
            return Ok(*l);
        }
        let l = self.b.new_label().map_err(|e| e.kind)?;
        self.names[self.nnames] = (name, l);
        self.nnames += 1;
        Ok(l)
    }

    fn statement(&mut self, l: &mut Line<'_, 's>) -> R<()> {
        if l.at_end() {
            return Ok(());
        }
        // `name:` (single letters x y z w t followed by `:` are slot prefixes instead).
        if let (Some(Tok::Word(w)), Some(Tok::Punct(':'))) = (l.peek(), l.peek2())
            && slot_of(w).is_none()
        {
            if self.group.is_some() {
                return Err(l.fail(ErrorKind::UnclosedGroup));
            }
            let label = self.label(w).map_err(|k| l.fail(k))?;
            self.b.at(l.line, l.col());
            self.b.bind(label)?;
            l.i += 2;
        }
        if l.peek() == Some(Tok::Punct('{')) {
            if self.group.is_some() {
                return Err(l.fail(ErrorKind::UnbalancedBrace));
            }
            self.group = Some(OpenGroup {
                insts: [AluInst::new(AluOp::AluNop, Dst::none(Chan::X), &[]); MAX_GROUP],
                pos: [(0, 0); MAX_GROUP],
                n: 0,
                line: l.line,
                col: l.col(),
            });
            l.i += 1;
        }
        if l.at_end() {
            return Ok(());
        }
        let closes = l.toks.last().map(|t| t.tok) == Some(Tok::Punct('}'));
        let close_col = l.col_of(l.toks.len() - 1);
        let body = &l.toks[..l.toks.len() - usize::from(closes)];
        let mut s = Line { toks: body, i: l.i, text: l.text, line: l.line };
        if !s.at_end() {
            self.instruction(&mut s)?;
        }
        if closes {
            self.close_group(l.line, close_col)?;
        }
        Ok(())
    }

    fn close_group(&mut self, line: u32, col: u32) -> R<()> {
        let Some(g) = self.group.take() else {
            return Err(Error { line, col, kind: ErrorKind::UnbalancedBrace });
        };
        self.b.at(g.line, g.col);
        self.b.group_at(&g.insts[..g.n], Some(&g.pos[..g.n]))
    }

    fn instruction(&mut self, l: &mut Line<'_, 's>) -> R<()> {
        let mcol = l.col();
        let m = match l.peek() {
            Some(Tok::Word(m)) => m,
            Some(Tok::Punct('{' | '}')) => return Err(l.fail(ErrorKind::UnbalancedBrace)),
            _ => return Err(l.fail(ErrorKind::Expected("an instruction"))),
        };
        let slot_prefix = l.peek2() == Some(Tok::Punct(':')) && slot_of(m).is_some();
        if slot_prefix || AluOp::from_mnemonic(m).is_some() {
            let inst = alu_inst(l)?;
            let pos = (l.line, mcol);
            return match &mut self.group {
                Some(g) if g.n == MAX_GROUP => Err(Error {
                    line: pos.0,
                    col: pos.1,
                    kind: ErrorKind::Capacity("instructions in a group"),
                }),
                Some(g) => {
                    g.insts[g.n] = inst;
                    g.pos[g.n] = pos;
                    g.n += 1;
                    Ok(())
                }
                None => {
                    self.b.at(pos.0, pos.1);
                    self.b.group_at(&[inst], Some(&[pos]))
                }
            };
        }
        if self.group.is_some() {
            return Err(l.fail(ErrorKind::UnclosedGroup));
        }
        l.i += 1;
        self.b.at(l.line, mcol);
        let chip = self.b.chip();
        if is(m, "vfetch") {
            let f = vfetch(l, chip)?;
            l.end()?;
            return self.b.vfetch(&f);
        }
        if let Some((_, inst)) = ALU_CF.iter().find(|(n, _)| is(n, m)) {
            l.end()?;
            return self.b.alu(*inst);
        }
        let fetch =
            [("tc", FetchClause::Tc), ("vc", FetchClause::Vc), ("fetch", FetchClause::Vertex)];
        if let Some((_, kind)) = fetch.iter().find(|(n, _)| is(n, m)) {
            l.end()?;
            return self.b.fetch(*kind);
        }
        if is(m, "jump") || is(m, "push") || is(m, "else") {
            let lcol = l.i;
            let name = l.word("a label")?;
            let label = self.label(name).map_err(|k| l.fail_at(lcol, k))?;
            let pop = pop_option(l)?;
            l.end()?;
            self.b.label_at(l.line, l.col_of(lcol));
            return if is(m, "jump") {
                self.b.jump(label, pop)
            } else if is(m, "push") {
                self.b.push(label, pop)
            } else {
                self.b.else_(label, pop)
            };
        }
        if is(m, "pop") {
            let n = if l.at_end() { 1 } else { l.uint(7)? as u8 };
            l.end()?;
            return self.b.pop(n);
        }
        if is(m, "loop_break") {
            let pop = if l.at_end() { 0 } else { pop_value(l)? };
            l.end()?;
            return self.b.loop_break(pop);
        }
        if is(m, "mem_rat") || is(m, "mem_rat_cacheless") {
            let cf = if is(m, "mem_rat") { RatCfInst::MemRat } else { RatCfInst::MemRatCacheless };
            let r = rat(l, cf, self.b.chip())?;
            return self.b.rat(&r);
        }
        let simple: [(&str, CfFn<'n>); 5] = [
            ("nop", Builder::nop),
            ("loop_start_dx10", Builder::loop_start),
            ("loop_end", Builder::loop_end),
            ("end", Builder::end),
            ("cf_end", Builder::cf_end),
        ];
        if let Some((_, f)) = simple.iter().find(|(n, _)| is(n, m)) {
            l.end()?;
            return f(&mut self.b);
        }
        Err(Error { line: l.line, col: mcol, kind: ErrorKind::UnknownMnemonic })
    }
}

/// `, pop=N` (optional).
fn pop_option(l: &mut Line<'_, '_>) -> R<u8> {
    if !l.eat(',') {
        return Ok(0);
    }
    pop_value(l)
}

/// `pop=N`.
fn pop_value(l: &mut Line<'_, '_>) -> R<u8> {
    let k = l.i;
    let key = l.word("`pop=N`")?;
    if !is(key, "pop") {
        return Err(l.fail_at(k, ErrorKind::UnknownOption));
    }
    l.expect('=', "`=`")?;
    Ok(l.uint(7)? as u8)
}

fn alu_inst(l: &mut Line<'_, '_>) -> R<AluInst> {
    let mut slot = None;
    if let (Some(Tok::Word(w)), Some(Tok::Punct(':'))) = (l.peek(), l.peek2())
        && let Some(s) = slot_of(w)
    {
        slot = Some(s);
        l.i += 2;
    }
    let mcol = l.i;
    let m = l.word("an ALU mnemonic")?;
    let op = AluOp::from_mnemonic(m).ok_or(l.fail_at(mcol, ErrorKind::UnknownMnemonic))?;
    let mut inst = AluInst::new(op, Dst::none(Chan::X), &[]);
    inst.slot = slot;
    while l.eat('.') {
        let k = l.i;
        let modifier = l.word("a modifier")?;
        match () {
            _ if is(modifier, "clamp") => inst.clamp = true,
            _ if is(modifier, "m2") => inst.omod = Omod::Mul2,
            _ if is(modifier, "m4") => inst.omod = Omod::Mul4,
            _ if is(modifier, "d2") => inst.omod = Omod::Div2,
            _ if is(modifier, "exec") => inst.update_exec_mask = true,
            _ if is(modifier, "pred") => inst.update_pred = true,
            _ => return Err(l.fail_at(k, ErrorKind::UnknownOption)),
        }
    }
    inst.dst = dst(l)?;
    for k in 0..op.src_count() {
        l.expect(',', "`,` and another operand")?;
        inst.src[k] = operand(l)?;
    }
    l.end()?;
    Ok(inst)
}

/// `.c` after a register.
fn chan(l: &mut Line<'_, '_>) -> R<Chan> {
    l.expect('.', "`.` and a channel x, y, z or w")?;
    let k = l.i;
    let w = l.word("a channel x, y, z or w")?;
    chan_of(w).ok_or(l.fail_at(k, ErrorKind::Expected("a channel x, y, z or w")))
}

fn gpr(l: &mut Line<'_, '_>) -> R<u8> {
    let k = l.i;
    let w = l.word("a register rN")?;
    match gpr_of(w) {
        Some(Some(g)) => Ok(g),
        Some(None) => Err(l.fail_at(k, ErrorKind::BadNumber)),
        None => Err(l.fail_at(k, ErrorKind::Expected("a register rN"))),
    }
}

fn dst(l: &mut Line<'_, '_>) -> R<Dst> {
    if l.peek() == Some(Tok::Word("_")) {
        l.i += 1;
        return Ok(Dst::none(chan(l)?));
    }
    let g = gpr(l)?;
    Ok(Dst::gpr(g, chan(l)?))
}

fn operand(l: &mut Line<'_, '_>) -> R<Operand> {
    let mut neg = false;
    let mut abs = false;
    if l.peek() == Some(Tok::Punct('-')) {
        // `-` right before a number is its sign; otherwise it is the NEG modifier.
        if let Some(Tok::Num(t)) = l.peek2()
            && l.toks[l.i + 1].start == l.toks[l.i].start + 1
        {
            let k = l.i + 1;
            l.i += 2;
            let bits = number_bits(t, true).ok_or(l.fail_at(k, ErrorKind::BadNumber))?;
            return Ok(Operand::new(Src::value(bits)));
        }
        neg = true;
        l.i += 1;
    }
    if l.eat('|') {
        abs = true;
    }
    let k = l.i;
    let src = match l.peek() {
        Some(Tok::Num(t)) => {
            l.i += 1;
            Src::value(number_bits(t, false).ok_or(l.fail_at(k, ErrorKind::BadNumber))?)
        }
        Some(Tok::Word(w)) => {
            l.i += 1;
            if let Some(g) = gpr_of(w) {
                let index = g.ok_or(l.fail_at(k, ErrorKind::BadNumber))?;
                Src::Gpr { index, chan: chan(l)? }
            } else if let Some(b) = prefixed(w, "cb", 15) {
                let buffer = b.ok_or(l.fail_at(k, ErrorKind::BadNumber))? as u8;
                l.expect('[', "`[` and a constant index")?;
                let index = l.uint(4095)? as u16;
                l.expect(']', "`]`")?;
                Src::Const { buffer, index, chan: chan(l)? }
            } else if is(w, "pv") {
                Src::Pv(chan(l)?)
            } else if is(w, "ps") {
                Src::Ps
            } else {
                return Err(l.fail_at(
                    k,
                    ErrorKind::Expected("an operand (rN.c, cbN[i].c, pv.c, ps or a number)"),
                ));
            }
        }
        _ => return Err(l.fail(ErrorKind::Expected("an operand"))),
    };
    if abs {
        l.expect('|', "closing `|`")?;
    }
    Ok(Operand { src, neg, abs })
}

/// `vfetch rD[.sel], rS.c, vbN[, option…]`.
fn vfetch(l: &mut Line<'_, '_>, chip: Chip) -> R<VtxFetch> {
    let dst_gpr = gpr(l)?;
    let mut sel = [DstSel::X, DstSel::Y, DstSel::Z, DstSel::W];
    if l.eat('.') {
        let k = l.i;
        let text = match l.peek() {
            Some(Tok::Word(t) | Tok::Num(t)) => t,
            _ => {
                return Err(
                    l.fail(ErrorKind::Expected("four destination selects of x y z w 0 1 _"))
                );
            }
        };
        l.i += 1;
        let bad = l.fail_at(k, ErrorKind::Expected("four destination selects of x y z w 0 1 _"));
        if text.len() != 4 {
            return Err(bad);
        }
        for (s, c) in sel.iter_mut().zip(text.bytes()) {
            *s = match c.to_ascii_lowercase() {
                b'x' => DstSel::X,
                b'y' => DstSel::Y,
                b'z' => DstSel::Z,
                b'w' => DstSel::W,
                b'0' => DstSel::Zero,
                b'1' => DstSel::One,
                b'_' => DstSel::Mask,
                _ => return Err(bad),
            };
        }
    }
    l.expect(',', "`,` and the index register")?;
    let src = gpr(l)?;
    let src_chan = chan(l)?;
    l.expect(',', "`,` and a fetch buffer vbN")?;
    let k = l.i;
    let w = l.word("a fetch buffer vbN")?;
    let buffer = match prefixed(w, "vb", 255) {
        Some(Some(b)) => b as u8,
        Some(None) => return Err(l.fail_at(k, ErrorKind::BadNumber)),
        None => return Err(l.fail_at(k, ErrorKind::Expected("a fetch buffer vbN"))),
    };
    let mut f = VtxFetch::load(chip, DataFormat::Fmt32, dst_gpr, sel, src, src_chan, buffer);
    let mut mfc = None;
    while l.eat(',') {
        let k = l.i;
        let key = l.word("an option")?;
        if is(key, "signed") {
            f.format_comp_signed = true;
            continue;
        }
        l.expect('=', "`=` and a value")?;
        let v = l.i;
        match () {
            _ if is(key, "offset") => f.offset = l.uint(0xFFFF)? as u16,
            _ if is(key, "mfc") => mfc = Some(l.uint(63)? as u8),
            _ if is(key, "fmt") => {
                let t = match l.peek() {
                    Some(Tok::Num(t)) => t,
                    _ => return Err(l.fail(ErrorKind::Expected("32, 32_32 or 32_32_32_32"))),
                };
                l.i += 1;
                f.data_format = match t {
                    "32" => DataFormat::Fmt32,
                    "32_32" => DataFormat::Fmt32x2,
                    "32_32_32_32" => DataFormat::Fmt32x4,
                    _ => return Err(l.fail_at(v, ErrorKind::Expected("32, 32_32 or 32_32_32_32"))),
                };
            }
            _ if is(key, "num") => {
                let t = l.word("norm, int or scaled")?;
                f.num_format = match () {
                    _ if is(t, "norm") => NumFormat::Norm,
                    _ if is(t, "int") => NumFormat::Int,
                    _ if is(t, "scaled") => NumFormat::Scaled,
                    _ => return Err(l.fail_at(v, ErrorKind::Expected("norm, int or scaled"))),
                };
            }
            _ => return Err(l.fail_at(k, ErrorKind::UnknownOption)),
        }
    }
    if chip == Chip::Evergreen {
        f.mega_fetch_count = mfc.unwrap_or(f.data_format.bytes());
    } else if let Some(m) = mfc {
        f.mega_fetch_count = m; // rejected by the encoder: Cayman has no such field
    }
    Ok(f)
}

/// `mem_rat[_cacheless] op ratN[rI.x], rD.mask[, eop]`.
fn rat(l: &mut Line<'_, '_>, cf: RatCfInst, chip: Chip) -> R<RatExport> {
    let k = l.i;
    let op_name = l.word("a RAT operation (store, store_raw, store_dword, add)")?;
    let op = if is(op_name, "store") {
        RatInst::store_for(chip)
    } else {
        RatInst::ALL
            .iter()
            .copied()
            .find(|o| is(o.mnemonic(), op_name))
            .ok_or(l.fail_at(k, ErrorKind::UnknownMnemonic))?
    };
    let k = l.i;
    let w = l.word("a RAT ratN")?;
    let id = match prefixed(w, "rat", 15) {
        Some(Some(id)) => id as u8,
        Some(None) => return Err(l.fail_at(k, ErrorKind::BadNumber)),
        None => return Err(l.fail_at(k, ErrorKind::Expected("a RAT ratN"))),
    };
    l.expect('[', "`[` and the index register")?;
    let index = gpr(l)?;
    let k = l.i;
    if chan(l)? != Chan::X {
        return Err(l.fail_at(k + 1, ErrorKind::Expected("`.x`: the index is read from channel x")));
    }
    l.expect(']', "`]`")?;
    l.expect(',', "`,` and the data register")?;
    let data = gpr(l)?;
    l.expect('.', "`.` and a component mask")?;
    let k = l.i;
    let m = l.word("a component mask")?;
    let mut mask = 0u8;
    let mut last = None;
    for c in m.chars() {
        let ch = chan_of(c.encode_utf8(&mut [0; 4]))
            .filter(|c| last.is_none_or(|l: Chan| c.index() > l.index()));
        let Some(ch) = ch else {
            return Err(l.fail_at(k, ErrorKind::Expected("a component mask of x y z w in order")));
        };
        last = Some(ch);
        mask |= 1 << ch.index();
    }
    let mut r = RatExport::indexed(cf, op, id, index, data, mask);
    while l.eat(',') {
        let k = l.i;
        let opt = l.word("an option")?;
        if is(opt, "eop") {
            r.end_of_program = true;
        } else {
            return Err(l.fail_at(k, ErrorKind::UnknownOption));
        }
    }
    l.end()?;
    Ok(r)
}

/// Assembles `src` for `chip`, using `nodes` as scratch (one per CF instruction, ALU slot,
/// literal group and fetch) and writing the program into `out`.
pub fn assemble(
    src: &str,
    chip: Chip,
    nodes: &mut [Node],
    out: &mut [u32],
) -> Result<ProgramInfo, Error> {
    let mut asm = Asm {
        b: Builder::new(chip, nodes),
        names: [("", Label::PLACEHOLDER); MAX_LABELS],
        nnames: 0,
        group: None,
    };
    let mut toks = [Token { tok: Tok::Punct(' '), start: 0 }; MAX_TOKENS];
    let mut last_line = 1;
    for (i, text) in src.lines().enumerate() {
        let line = i as u32 + 1;
        last_line = line;
        let n = lex(text, line, &mut toks)?;
        let mut l = Line { toks: &toks[..n], i: 0, text, line };
        asm.statement(&mut l)?;
    }
    if let Some(g) = &asm.group {
        return Err(Error { line: g.line, col: g.col, kind: ErrorKind::UnclosedGroup });
    }
    asm.b.at(last_line, 1);
    asm.b.finish(out)
}
