//! The text assembler. The syntax is documented in the crate root.

use crate::build::*;
use crate::isa::*;

/// Labels per program.
pub const MAX_LABELS: usize = 128;
/// Flow-control blocks (if/loop/rep) per program.
pub const MAX_BLOCKS: usize = 128;
/// Nesting depth of flow-control blocks (ctm-guide §3.5.2: 32 in full mode).
pub const MAX_DEPTH: usize = 32;

/// What went wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum AsmErrorKind {
    /// Unknown mnemonic or directive.
    UnknownMnemonic,
    /// Unknown `.suffix` for this mnemonic.
    UnknownSuffix,
    /// Syntax error: what was expected.
    Expected(&'static str),
    /// A number does not fit or is not allowed here.
    BadNumber,
    /// The instruction could not be encoded.
    Encode(EncodeError),
    /// A label is used but never defined.
    UndefinedLabel,
    /// A label is defined twice.
    DuplicateLabel,
    /// Too many labels / blocks / nesting levels (fixed capacity, no allocator).
    Capacity(&'static str),
    /// More than 512 instructions, or the output buffer is full.
    TooManyInstructions,
    /// `else`/`endif`/`endloop`/… without its opening statement, or a block left open.
    Unbalanced(&'static str),
    /// The last instruction is not an OUTPUT instruction (ctm-guide §3.1).
    LastNotOutput,
    /// The program has no instructions.
    Empty,
}

/// An assembly error with its 1-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct AsmError {
    /// Line (1-based).
    pub line: u32,
    /// Column (1-based, in characters).
    pub col: u32,
    /// What went wrong.
    pub kind: AsmErrorKind,
}

impl core::fmt::Display for AsmError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}:{}: ", self.line, self.col)?;
        match self.kind {
            AsmErrorKind::UnknownMnemonic => f.write_str("unknown mnemonic"),
            AsmErrorKind::UnknownSuffix => f.write_str("unknown suffix"),
            AsmErrorKind::Expected(what) => write!(f, "expected {what}"),
            AsmErrorKind::BadNumber => f.write_str("number out of range"),
            AsmErrorKind::Encode(_) => f.write_str("the instruction cannot be encoded"),
            AsmErrorKind::UndefinedLabel => f.write_str("undefined label"),
            AsmErrorKind::DuplicateLabel => f.write_str("duplicate label"),
            AsmErrorKind::Capacity(what) => write!(f, "too many {what}"),
            AsmErrorKind::TooManyInstructions => f.write_str("too many instructions"),
            AsmErrorKind::Unbalanced(what) => write!(f, "unbalanced {what}"),
            AsmErrorKind::LastNotOutput => {
                f.write_str("the last instruction must be an OUTPUT instruction (ctm-guide §3.1)")
            }
            AsmErrorKind::Empty => f.write_str("empty program"),
        }
    }
}

impl core::error::Error for AsmError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match &self.kind {
            AsmErrorKind::Encode(e) => Some(e),
            _ => None,
        }
    }
}

type R<T> = Result<T, AsmErrorKind>;

struct Cur<'s> {
    s: &'s str,
    pos: usize,
    /// Start of the last word or number read (error positions).
    tok: usize,
}

impl<'s> Cur<'s> {
    fn ws(&mut self) {
        while self.s[self.pos..].starts_with([' ', '\t', '\r']) {
            self.pos += 1;
        }
    }
    fn peek(&mut self) -> Option<char> {
        self.ws();
        self.s[self.pos..].chars().next()
    }
    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }
    fn expect(&mut self, c: char, what: &'static str) -> R<()> {
        if self.eat(c) { Ok(()) } else { Err(AsmErrorKind::Expected(what)) }
    }
    fn at_end(&mut self) -> bool {
        self.peek().is_none()
    }
    fn ident(&mut self) -> Option<&'s str> {
        self.ws();
        let rest = &self.s[self.pos..];
        let n = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
        if n == 0 || rest.as_bytes()[0].is_ascii_digit() {
            return None;
        }
        self.tok = self.pos;
        self.pos += n;
        Some(&rest[..n])
    }
    fn word(&mut self) -> &'s str {
        self.ws();
        let rest = &self.s[self.pos..];
        let n = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
        self.tok = self.pos;
        self.pos += n;
        &rest[..n]
    }
    fn number_text(&mut self) -> &'s str {
        self.ws();
        let rest = &self.s[self.pos..];
        let b = rest.as_bytes();
        let mut n = 0;
        while n < b.len() && (b[n].is_ascii_alphanumeric() || b[n] == b'.') {
            if (b[n] == b'e' || b[n] == b'E')
                && !rest.starts_with("0x")
                && n + 1 < b.len()
                && (b[n + 1] == b'-' || b[n + 1] == b'+')
            {
                n += 1;
            }
            n += 1;
        }
        self.tok = self.pos;
        self.pos += n;
        &rest[..n]
    }
    fn uint(&mut self, max: u32) -> R<u32> {
        let t = self.number_text();
        if t.is_empty() {
            return Err(AsmErrorKind::Expected("a number"));
        }
        let v =
            if let Some(h) = t.strip_prefix("0x") { u32::from_str_radix(h, 16) } else { t.parse() }
                .map_err(|_| AsmErrorKind::Expected("an integer"))?;
        if v > max {
            return Err(AsmErrorKind::BadNumber);
        }
        Ok(v)
    }
}

fn reg_index(name: &str, prefix: &str, max: u32) -> Option<R<u32>> {
    let digits = name.strip_prefix(prefix)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(match digits.parse::<u32>() {
        Ok(v) if v <= max => Ok(v),
        _ => Err(AsmErrorKind::BadNumber),
    })
}

fn chan_of(c: char) -> Option<usize> {
    match c {
        'x' | 'r' => Some(0),
        'y' | 'g' => Some(1),
        'z' | 'b' => Some(2),
        'w' | 'a' => Some(3),
        _ => None,
    }
}

/// Parses `.mask` after a destination (default xyzw).
fn mask(c: &mut Cur<'_>) -> R<u8> {
    if !c.s[c.pos..].starts_with('.') {
        return Ok(15);
    }
    c.pos += 1;
    let w = c.word();
    let mut m = 0u8;
    let mut last = None;
    for ch in w.chars() {
        let i = chan_of(ch).ok_or(AsmErrorKind::Expected("a write mask of x, y, z, w"))?;
        if last.is_some_and(|l| i <= l) {
            return Err(AsmErrorKind::Expected("write-mask channels in xyzw order"));
        }
        last = Some(i);
        m |= 1 << i;
    }
    if m == 0 {
        return Err(AsmErrorKind::Expected("a write mask"));
    }
    Ok(m)
}

fn swizzle(c: &mut Cur<'_>) -> R<Option<[Swz; 4]>> {
    if !c.s[c.pos..].starts_with('.') {
        return Ok(None);
    }
    c.pos += 1;
    let w = c.word();
    let mut s = [Swz::R; 4];
    let mut n = 0;
    for ch in w.chars() {
        if n == 4 {
            return Err(AsmErrorKind::Expected("at most 4 swizzle components"));
        }
        s[n] = match ch {
            '0' => Swz::Zero,
            '1' => Swz::One,
            'h' => Swz::Half,
            _ => [Swz::R, Swz::G, Swz::B, Swz::A]
                [chan_of(ch).ok_or(AsmErrorKind::Expected("swizzle of x y z w 0 1 h"))?],
        };
        n += 1;
    }
    if n == 0 {
        return Err(AsmErrorKind::Expected("a swizzle"));
    }
    for i in n..4 {
        s[i] = s[n - 1];
    }
    Ok(Some(s))
}

fn rel(c: &mut Cur<'_>) -> R<bool> {
    if c.s[c.pos..].starts_with('[') {
        c.pos += 1;
        let w = c.word();
        if w != "aL" && w != "al" {
            return Err(AsmErrorKind::Expected("[aL]"));
        }
        c.expect(']', "]")?;
        return Ok(true);
    }
    Ok(false)
}

/// Parses `rN[aL]`, `cN[aL]` or `#value`.
fn source(c: &mut Cur<'_>) -> R<Source> {
    if c.eat('#') {
        let t = c.number_text();
        let v: f32 = t.parse().map_err(|_| AsmErrorKind::Expected("a number"))?;
        return inline_const_from_f32(v).map(Source::Inline).ok_or(AsmErrorKind::Encode(
            EncodeError::Invalid("not representable as an inline constant (ctm-guide §3.3.1)"),
        ));
    }
    let name = c.word();
    if let Some(i) = reg_index(name, "r", 127) {
        let index = i? as u8;
        return Ok(Source::Temp(TempReg { index, rel: rel(c)? }));
    }
    if let Some(i) = reg_index(name, "c", 255) {
        let index = i? as u8;
        return Ok(Source::Const { index, rel: rel(c)? });
    }
    Err(AsmErrorKind::Expected("a register (rN, cN) or #inline constant"))
}

fn operand(c: &mut Cur<'_>) -> R<Operand> {
    let neg = c.eat('-');
    let abs = c.eat('|');
    let mut op = match c.peek() {
        Some('(') => {
            c.pos += 1;
            let save = c.pos;
            let t = c.number_text();
            let p = if t == "1" {
                c.expect('-', "-")?;
                let save2 = c.pos;
                if c.number_text() == "2" {
                    c.expect('*', "*")?;
                    let s0 = source(c)?;
                    (Presub::Bias, s0, s0)
                } else {
                    c.pos = save2;
                    let s0 = source(c)?;
                    (Presub::Inv, s0, s0)
                }
            } else {
                c.pos = save;
                let s1 = source(c)?;
                let p = if c.eat('-') {
                    Presub::Sub
                } else if c.eat('+') {
                    Presub::Add
                } else {
                    return Err(AsmErrorKind::Expected("+ or - in a presubtract"));
                };
                let s0 = source(c)?;
                (p, s0, s1)
            };
            c.expect(')', ")")?;
            Operand {
                base: OperandBase::Presub { op: p.0, src0: p.1, src1: p.2 },
                swizzle: [Swz::R, Swz::G, Swz::B, Swz::A],
                modifier: InputMod::Off,
            }
        }
        Some(ch) if ch.is_ascii_digit() => {
            let t = c.number_text();
            let v = match t {
                "0" | "0.0" => Swz::Zero,
                "0.5" => Swz::Half,
                "1" | "1.0" => Swz::One,
                _ => {
                    return Err(AsmErrorKind::Expected(
                        "0, 0.5 or 1 (use #value for an inline constant)",
                    ));
                }
            };
            Operand::imm(v)
        }
        _ => Operand::src(source(c)?),
    };
    if let Some(s) = swizzle(c)? {
        op.swizzle = s;
    }
    if abs {
        c.expect('|', "closing |")?;
        if let Some(s) = swizzle(c)? {
            op.swizzle = s;
        }
        op = op.abs();
    }
    if neg {
        op = op.neg();
    }
    Ok(op)
}

fn alu_dest(c: &mut Cur<'_>) -> R<AluDest> {
    let mut d = AluDest::default();
    loop {
        let name = c.word();
        if name == "p" {
            d.pred = Some(mask(c)?);
        } else if name == "oc" {
            d.cond_out = true;
        } else if let Some(i) = reg_index(name, "o", 3) {
            let n = i? as u8;
            d.output = Some((n, mask(c)?));
        } else if let Some(i) = reg_index(name, "r", 127) {
            let index = i? as u8;
            let r = rel(c)?;
            d.temp = Some((TempReg { index, rel: r }, mask(c)?));
        } else {
            return Err(AsmErrorKind::Expected("a destination (rN, oN, oc, p)"));
        }
        if !c.eat('+') {
            return Ok(d);
        }
    }
}

fn cmp_suffix(s: &str) -> Option<CmpOp> {
    Some(match s {
        "eq" => CmpOp::Equal,
        "lt" => CmpOp::Less,
        "ge" => CmpOp::GreaterEqual,
        "ne" => CmpOp::NotEqual,
        _ => return None,
    })
}

fn alu_suffix(f: &mut AluFlags, s: &str) -> R<()> {
    match s {
        "sat" => f.clamp = true,
        "x2" => f.omod = Some(Omod::U2),
        "x4" => f.omod = Some(Omod::U4),
        "x8" => f.omod = Some(Omod::U8),
        "d2" => f.omod = Some(Omod::D2),
        "d4" => f.omod = Some(Omod::D4),
        "d8" => f.omod = Some(Omod::D8),
        "exact" => f.omod = Some(Omod::Disabled),
        "wait" => f.common.tex_sem_wait = true,
        "nop" => f.common.nop = true,
        "last" => f.common.last = true,
        "inactive" => f.common.write_inactive = true,
        _ => {
            if let Some(op) = cmp_suffix(s) {
                f.pred_op = Some(op);
            } else if let Some(op) = s.strip_prefix("cr").and_then(cmp_suffix) {
                f.alu_result = Some((AluResultSel::Red, op));
            } else if let Some(op) = s.strip_prefix("ca").and_then(cmp_suffix) {
                f.alu_result = Some((AluResultSel::Alpha, op));
            } else {
                return Err(AsmErrorKind::UnknownSuffix);
            }
        }
    }
    Ok(())
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    IfStatic,
    IfDyn,
    Loop,
    Rep,
}

#[derive(Clone, Copy)]
struct Open {
    kind: Kind,
    id: usize,
    has_else: bool,
    start: u16,
    int_addr: u8,
    line: u32,
    col: u32,
}

#[derive(Clone, Copy, Default)]
struct BlockAddrs {
    else_addr: u16,
    end_addr: u16,
}

/// A jump condition (ctm-guide §3.5.3, §3.5.4): `bN`, `p.c`, `c`, each optionally negated.
#[derive(Clone, Copy)]
enum Cond {
    Always,
    Bool(u8, bool),
    Pred(PredSel, bool),
    AluRes(bool),
}

struct State<'s, 'o> {
    pass2: bool,
    pc: usize,
    out: &'o mut [Instruction],
    lines: [(u32, u32); MAX_INSTRUCTIONS],
    labels: [(&'s str, u16); MAX_LABELS],
    nlabels: usize,
    blocks: [BlockAddrs; MAX_BLOCKS],
    nblocks: usize,
    stack: [Option<Open>; MAX_DEPTH],
    depth: usize,
    nosync: bool,
}

impl<'s> State<'s, '_> {
    fn emit(&mut self, i: Instruction, line: u32, col: u32) -> R<()> {
        if self.pc >= MAX_INSTRUCTIONS || self.pc >= self.out.len() {
            return Err(AsmErrorKind::TooManyInstructions);
        }
        i.encode().map_err(AsmErrorKind::Encode)?;
        if self.pass2 {
            self.out[self.pc] = i;
        }
        self.lines[self.pc] = (line, col);
        self.pc += 1;
        Ok(())
    }
    fn label(&self, name: &str) -> R<u16> {
        if !self.pass2 {
            return Ok(0);
        }
        self.labels[..self.nlabels]
            .iter()
            .find(|l| l.0 == name)
            .map(|l| l.1)
            .ok_or(AsmErrorKind::UndefinedLabel)
    }
    fn push(&mut self, o: Open) -> R<()> {
        if self.depth == MAX_DEPTH {
            return Err(AsmErrorKind::Capacity("nested blocks"));
        }
        if o.id >= MAX_BLOCKS {
            return Err(AsmErrorKind::Capacity("flow-control blocks"));
        }
        self.stack[self.depth] = Some(o);
        self.depth += 1;
        Ok(())
    }
    fn top(&mut self) -> Option<&mut Open> {
        self.depth.checked_sub(1).and_then(|d| self.stack[d].as_mut())
    }
    fn pop(&mut self) -> Open {
        self.depth -= 1;
        self.stack[self.depth].take().expect("checked by caller")
    }
    fn addrs(&self, id: usize) -> BlockAddrs {
        if self.pass2 { self.blocks[id] } else { BlockAddrs::default() }
    }
    /// Innermost loop and the number of dynamic branch frames inside it.
    fn innermost_loop(&self) -> R<(Open, u8)> {
        let mut n = 0;
        for o in self.stack[..self.depth].iter().rev().flatten() {
            match o.kind {
                Kind::Loop | Kind::Rep => return Ok((*o, n)),
                Kind::IfDyn => n += 1,
                Kind::IfStatic => {}
            }
        }
        Err(AsmErrorKind::Unbalanced("break/continue outside a loop"))
    }
}

fn pred_chan(c: &mut Cur<'_>) -> R<PredSel> {
    if !c.s[c.pos..].starts_with('.') {
        return Err(AsmErrorKind::Expected(
            "a predicate channel p.x/p.y/p.z/p.w (flow control replicates one bit, ctm-guide §3.5.1)",
        ));
    }
    c.pos += 1;
    let w = c.word();
    let mut ch = w.chars();
    match (ch.next().and_then(chan_of), ch.next()) {
        (Some(i), None) => Ok([PredSel::Rrrr, PredSel::Gggg, PredSel::Bbbb, PredSel::Aaaa][i]),
        _ => Err(AsmErrorKind::Expected("one predicate channel")),
    }
}

fn cond(c: &mut Cur<'_>) -> R<Cond> {
    if c.at_end() {
        return Ok(Cond::Always);
    }
    let inv = c.eat('!');
    let w = c.word();
    if w == "p" {
        return Ok(Cond::Pred(pred_chan(c)?, inv));
    }
    if w == "c" {
        return Ok(Cond::AluRes(inv));
    }
    if let Some(i) = reg_index(w, "b", 31) {
        return Ok(Cond::Bool(i? as u8, inv));
    }
    Err(AsmErrorKind::Expected("a condition: bN, p.c or c (optionally with !)"))
}

/// Applies a "jump when the condition holds" condition to an FC instruction.
fn apply_true(f: &mut FcInst, cnd: Cond) {
    match cnd {
        Cond::Always => f.jump_func = 0xff,
        Cond::Bool(b, inv) => {
            f.bool_addr = b;
            f.jump_func = if inv { 0x55 } else { 0xaa };
        }
        Cond::Pred(sel, inv) => {
            f.pred = Pred::new(sel, inv);
            f.jump_func = 0xcc;
            f.alu_wait = true;
        }
        Cond::AluRes(inv) => {
            f.jump_func = if inv { 0x0f } else { 0xf0 };
            f.alu_wait = true;
        }
    }
}

fn fc_suffixes(f: &mut FcInst, suffixes: &[&str]) -> R<()> {
    for s in suffixes {
        match *s {
            "wait" => f.tex_sem_wait = true,
            "ignunc" => f.ignore_uncovered = true,
            _ => return Err(AsmErrorKind::UnknownSuffix),
        }
    }
    Ok(())
}

fn fc_statement(
    st: &mut State<'_, '_>,
    c: &mut Cur<'_>,
    m: &str,
    suffixes: &[&str],
    line: u32,
    col: u32,
) -> R<bool> {
    let mut f = FcInst::default();
    // Validate the suffixes first so that an error points at them.
    fc_suffixes(&mut FcInst::default(), suffixes)?;
    let here = st.pc as u16;
    match m {
        "if" => {
            let cnd = cond(c)?;
            let id = st.nblocks;
            st.nblocks += 1;
            let a = st.addrs(id.min(MAX_BLOCKS - 1));
            // §3.5.4: jump (to the else part or past the block) when the condition is false.
            let kind = match cnd {
                Cond::Always => return Err(AsmErrorKind::Expected("a condition")),
                Cond::Bool(b, inv) => {
                    f.bool_addr = b;
                    f.jump_func = if inv { 0xaa } else { 0x55 };
                    Kind::IfStatic
                }
                Cond::Pred(sel, inv) => {
                    f.pred = Pred::new(sel, inv);
                    f.jump_func = 0x33;
                    f.alu_wait = true;
                    Kind::IfDyn
                }
                Cond::AluRes(inv) => {
                    f.jump_func = if inv { 0xf0 } else { 0x0f };
                    f.alu_wait = true;
                    Kind::IfDyn
                }
            };
            let has_else = a.else_addr != 0;
            if kind == Kind::IfDyn {
                f.b_op0 = BOp::Incr;
                f.b_op1 = if has_else { BOp::Incr } else { BOp::None };
                f.jump_addr = if has_else { a.else_addr + 1 } else { a.end_addr + 1 };
            } else {
                f.jump_addr = if has_else { a.else_addr + 1 } else { a.end_addr };
            }
            st.push(Open { kind, id, has_else: false, start: here, int_addr: 0, line, col })?;
        }
        "else" => {
            let o = *st
                .top()
                .filter(|o| matches!(o.kind, Kind::IfStatic | Kind::IfDyn) && !o.has_else)
                .ok_or(AsmErrorKind::Unbalanced("else without if"))?;
            st.top().expect("checked").has_else = true;
            if !st.pass2 {
                // Address 0 is never an else (the if precedes it), so 0 means "no else".
                st.blocks[o.id].else_addr = here;
            }
            let a = st.addrs(o.id);
            if o.kind == Kind::IfDyn {
                f.b_op1 = BOp::Decr;
                f.b_pop_cnt = 1;
                f.b_else = true;
                f.jump_addr = a.end_addr + 1;
            } else {
                f.jump_func = 0xff;
                f.jump_addr = a.end_addr;
            }
        }
        "endif" => {
            let o = *st
                .top()
                .filter(|o| matches!(o.kind, Kind::IfStatic | Kind::IfDyn))
                .ok_or(AsmErrorKind::Unbalanced("endif without if"))?;
            st.pop();
            if !st.pass2 {
                st.blocks[o.id].end_addr = here;
            }
            if o.kind == Kind::IfStatic {
                // §3.5.4: no instruction for the end of a static if.
                fc_suffixes(&mut f, suffixes)?;
                return Ok(false);
            }
            f.jump_any = true;
            f.b_op0 = BOp::Decr;
            f.b_pop_cnt = 1;
        }
        "loop" | "rep" => {
            let w = c.word();
            let i =
                reg_index(w, "i", 31).ok_or(AsmErrorKind::Expected("an integer constant iN"))??;
            let id = st.nblocks;
            st.nblocks += 1;
            let a = st.addrs(id.min(MAX_BLOCKS - 1));
            let kind = if m == "loop" { Kind::Loop } else { Kind::Rep };
            f.op = if m == "loop" { FcOp::Loop } else { FcOp::Rep };
            f.int_addr = i as u8;
            f.jump_addr = a.end_addr + 1;
            st.push(Open { kind, id, has_else: false, start: here, int_addr: i as u8, line, col })?;
        }
        "endloop" | "endrep" => {
            let want = if m == "endloop" { Kind::Loop } else { Kind::Rep };
            let o = *st
                .top()
                .filter(|o| o.kind == want)
                .ok_or(AsmErrorKind::Unbalanced("endloop/endrep without loop/rep"))?;
            st.pop();
            if !st.pass2 {
                st.blocks[o.id].end_addr = here;
            }
            f.op = if m == "endloop" { FcOp::EndLoop } else { FcOp::EndRep };
            f.jump_func = 0xff;
            f.jump_any = true;
            f.int_addr = o.int_addr;
            f.jump_addr = o.start + 1;
        }
        "break" | "continue" => {
            let cnd = cond(c)?;
            let (lp, n) = st.innermost_loop()?;
            let a = st.addrs(lp.id);
            apply_true(&mut f, cnd);
            f.b_op1 = BOp::Decr;
            f.b_pop_cnt = n;
            if m == "break" {
                f.op = if lp.kind == Kind::Loop { FcOp::BreakLoop } else { FcOp::BreakRep };
                f.jump_addr = a.end_addr + 1;
            } else {
                f.op = FcOp::Continue;
                f.jump_addr = a.end_addr;
            }
        }
        "call" | "jump" => {
            let name = c.ident().ok_or(AsmErrorKind::Expected("a label"))?;
            f.jump_addr = st.label(name)?;
            let cnd = if c.eat(',') { cond(c)? } else { Cond::Always };
            apply_true(&mut f, cnd);
            if m == "call" {
                f.jump_any = true;
                f.a_op = AOp::Push;
                f.b_op1 = BOp::Incr;
            }
        }
        "ret" => {
            f.jump_func = 0xff;
            f.a_op = AOp::Pop;
            f.b_op1 = BOp::Decr;
            f.b_pop_cnt = 1;
        }
        "fc" => raw_fc(st, c, &mut f)?,
        _ => return Err(AsmErrorKind::UnknownMnemonic),
    }
    fc_suffixes(&mut f, suffixes)?;
    st.emit(Instruction::Fc(f), line, col)?;
    Ok(true)
}

fn enum_word<T: Copy>(c: &mut Cur<'_>, table: &[(&str, T)]) -> R<T> {
    let w = c.word();
    table
        .iter()
        .find(|(n, _)| *n == w)
        .map(|(_, v)| *v)
        .ok_or(AsmErrorKind::Expected("a field value name"))
}

const BOPS: [(&str, BOp); 3] = [("none", BOp::None), ("decr", BOp::Decr), ("incr", BOp::Incr)];

fn raw_fc(st: &mut State<'_, '_>, c: &mut Cur<'_>, f: &mut FcInst) -> R<()> {
    if c.at_end() {
        return Ok(());
    }
    loop {
        let key = c.word();
        match key {
            "any" => f.jump_any = true,
            "else" => f.b_else = true,
            "global" => f.jump_global = true,
            "inv" => f.pred.inv = true,
            "alu_wait" => f.alu_wait = true,
            _ => {
                c.expect('=', "=")?;
                match key {
                    "func" => f.jump_func = c.uint(255)? as u8,
                    "pop" => f.b_pop_cnt = c.uint(31)? as u8,
                    "bool" => f.bool_addr = c.uint(31)? as u8,
                    "int" => f.int_addr = c.uint(31)? as u8,
                    "pred" => {
                        let w = c.word();
                        let mut ch = w.chars();
                        f.pred.sel =
                            PredSelOpt(Some(match (ch.next().and_then(chan_of), ch.next()) {
                                (Some(i), None) => {
                                    [PredSel::Rrrr, PredSel::Gggg, PredSel::Bbbb, PredSel::Aaaa][i]
                                }
                                _ => return Err(AsmErrorKind::Expected("x, y, z or w")),
                            }));
                    }
                    "addr" => {
                        f.jump_addr = if c.peek().is_some_and(|ch| ch.is_ascii_digit()) {
                            c.uint(511)? as u16
                        } else {
                            let l = c.ident().ok_or(AsmErrorKind::Expected("a label"))?;
                            st.label(l)?
                        }
                    }
                    "op" => {
                        f.op = enum_word(
                            c,
                            &[
                                ("jump", FcOp::Jump),
                                ("loop", FcOp::Loop),
                                ("endloop", FcOp::EndLoop),
                                ("rep", FcOp::Rep),
                                ("endrep", FcOp::EndRep),
                                ("breakloop", FcOp::BreakLoop),
                                ("breakrep", FcOp::BreakRep),
                                ("continue", FcOp::Continue),
                            ],
                        )?
                    }
                    "aop" => {
                        f.a_op = enum_word(
                            c,
                            &[("none", AOp::None), ("pop", AOp::Pop), ("push", AOp::Push)],
                        )?
                    }
                    "b0" => f.b_op0 = enum_word(c, &BOPS)?,
                    "b1" => f.b_op1 = enum_word(c, &BOPS)?,
                    _ => return Err(AsmErrorKind::Expected("an fc field name")),
                }
            }
        }
        if !c.eat(',') {
            return Ok(());
        }
    }
}

fn tex_statement(
    st: &mut State<'_, '_>,
    c: &mut Cur<'_>,
    m: &str,
    suffixes: &[&str],
    pred: Pred,
    line: u32,
    col: u32,
) -> R<()> {
    let op = match m {
        "tex" => TexOp::Lookup,
        "texp" => TexOp::LookupProj,
        "texb" => TexOp::LodBias,
        "texl" => TexOp::Lod,
        "texd" => TexOp::Dxdy,
        "texu" => TexOp::LookupUncached,
        "texkill" => TexOp::KillLt0,
        "texnop" => TexOp::Nop,
        _ => return Err(AsmErrorKind::UnknownMnemonic),
    };
    let mut t = TexInst { op, rgb_pred: pred, alpha_pred: pred, ..TexInst::default() };
    for s in suffixes {
        match *s {
            "acq" => {
                t.sem_acquire = true;
                t.tex_sem_wait = true;
            }
            "wait" => t.tex_sem_wait = true,
            "scaled" => t.unscaled = false,
            "ignunc" => t.ignore_uncovered = true,
            "inactive" => t.write_inactive = true,
            _ => return Err(AsmErrorKind::UnknownSuffix),
        }
    }
    let tex_reg = |c: &mut Cur<'_>| -> R<(TempReg, [Chan; 4])> {
        let w = c.word();
        let index = reg_index(w, "r", 127).ok_or(AsmErrorKind::Expected("a temporary rN"))?? as u8;
        let r = TempReg { index, rel: rel(c)? };
        Ok((r, tex_swizzle(c)?))
    };
    match op {
        TexOp::Nop => {
            t.rgb_wmask = 0;
            t.alpha_wmask = false;
        }
        TexOp::KillLt0 => {
            t.rgb_wmask = 0;
            t.alpha_wmask = false;
            let (r, s) = tex_reg(c)?;
            t.src = r;
            t.src_swz = s;
        }
        _ => {
            let w = c.word();
            let index =
                reg_index(w, "r", 127).ok_or(AsmErrorKind::Expected("a temporary rN"))?? as u8;
            t.dst = TempReg { index, rel: rel(c)? };
            let m = mask(c)?;
            t.rgb_wmask = m & 7;
            t.alpha_wmask = m & 8 != 0;
            c.expect(',', ",")?;
            let w = c.word();
            let input = reg_index(w, "input", 15)
                .or_else(|| reg_index(w, "in", 15))
                .ok_or(AsmErrorKind::Expected("an input inN (0..15)"))??;
            t.input = input as u8;
            t.dst_swz = tex_swizzle(c)?;
            c.expect(',', ",")?;
            let (r, s) = tex_reg(c)?;
            t.src = r;
            t.src_swz = s;
            if op == TexOp::Dxdy {
                c.expect(',', ",")?;
                (t.dx, t.dx_swz) = tex_reg(c)?;
                c.expect(',', ",")?;
                (t.dy, t.dy_swz) = tex_reg(c)?;
            }
        }
    }
    st.emit(Instruction::Tex(t), line, col)
}

fn tex_swizzle(c: &mut Cur<'_>) -> R<[Chan; 4]> {
    match swizzle(c)? {
        None => Ok(CHAN_XYZW),
        Some(s) => {
            let mut out = CHAN_XYZW;
            for (o, z) in out.iter_mut().zip(s) {
                *o = match z {
                    Swz::R => Chan::R,
                    Swz::G => Chan::G,
                    Swz::B => Chan::B,
                    Swz::A => Chan::A,
                    _ => {
                        return Err(AsmErrorKind::Encode(EncodeError::Invalid(
                            "texture swizzles cannot select constants (ctm-guide §3.4)",
                        )));
                    }
                };
            }
            Ok(out)
        }
    }
}

fn alu_part<'o>(
    c: &mut Cur<'_>,
    m: &str,
    suffixes: &[&str],
    pred: Pred,
    unit: Unit,
    srcs: &'o mut [Operand; 3],
) -> R<AluPart<'o>> {
    let op = VecOp::from_mnemonic(m).ok_or(AsmErrorKind::UnknownMnemonic)?;
    let mut flags = AluFlags { pred, ..AluFlags::default() };
    for s in suffixes {
        alu_suffix(&mut flags, s)?;
    }
    let dst = if op == VecOp::End { AluDest::default() } else { alu_dest(c)? };
    for s in srcs.iter_mut().take(op.arity()) {
        c.expect(',', ", and another operand")?;
        *s = operand(c)?;
    }
    Ok(AluPart { unit, op, dst, srcs: &srcs[..op.arity()], flags })
}

fn statement<'s>(st: &mut State<'s, '_>, text: &'s str, lineno: u32) -> Result<(), AsmError> {
    let mut c = Cur { s: text, pos: 0, tok: 0 };
    let err = |c: &Cur<'_>, pos: usize, kind| AsmError {
        line: lineno,
        col: c.s[..pos.min(c.s.len())].chars().count() as u32 + 1,
        kind,
    };
    c.ws();
    if c.at_end() {
        return Ok(());
    }
    if c.eat('.') {
        let p = c.pos;
        return match c.word() {
            "nosync" => {
                st.nosync = true;
                Ok(())
            }
            _ => Err(err(&c, p, AsmErrorKind::UnknownMnemonic)),
        };
    }
    // label:
    let save = c.pos;
    if let Some(name) = c.ident() {
        if c.eat(':') {
            if !st.pass2 {
                if st.labels[..st.nlabels].iter().any(|l| l.0 == name) {
                    return Err(err(&c, save, AsmErrorKind::DuplicateLabel));
                }
                if st.nlabels == MAX_LABELS {
                    return Err(err(&c, save, AsmErrorKind::Capacity("labels")));
                }
                st.labels[st.nlabels] = (name, st.pc as u16);
                st.nlabels += 1;
            }
            c.ws();
            if c.at_end() {
                return Ok(());
            }
        } else {
            c.pos = save;
        }
    }
    c.ws();
    let start = c.pos;
    let line_col = |c: &Cur<'_>| c.s[..start].chars().count() as u32 + 1;
    // (p), (!p), (p.x)
    let mut pred = Pred::NONE;
    if c.eat('(') {
        let p0 = c.pos;
        let inv = c.eat('!');
        if c.word() != "p" {
            return Err(err(&c, p0, AsmErrorKind::Expected("a predicate (p) prefix")));
        }
        let sel = if c.s[c.pos..].starts_with('.') {
            pred_chan(&mut c).map_err(|k| err(&c, p0, k))?
        } else {
            PredSel::Rgba
        };
        pred = Pred::new(sel, inv);
        c.expect(')', ")").map_err(|k| err(&c, c.pos, k))?;
    }
    let mstart = c.pos;
    let m = c.word();
    if m.is_empty() {
        return Err(err(&c, mstart, AsmErrorKind::Expected("a mnemonic")));
    }
    let mut suffixes = [""; 8];
    let mut ns = 0;
    while c.s[c.pos..].starts_with('.') {
        c.pos += 1;
        if ns == suffixes.len() {
            return Err(err(&c, c.pos, AsmErrorKind::Capacity("suffixes")));
        }
        suffixes[ns] = c.word();
        ns += 1;
    }
    let sfx = &suffixes[..ns];
    let (l, col) = (lineno, line_col(&c));
    let res: R<()> = (|| {
        if m.starts_with("tex") {
            return tex_statement(st, &mut c, m, sfx, pred, l, col);
        }
        if VecOp::from_mnemonic(m).is_none() {
            if pred != Pred::NONE {
                return Err(AsmErrorKind::Expected(
                    "flow control predicates in the condition (if p.x), not a prefix",
                ));
            }
            fc_statement(st, &mut c, m, sfx, l, col)?;
            return Ok(());
        }
        // ALU: one part, or `rgb-part || alpha-part`.
        let mut s1 = [Operand::imm(Swz::Zero); 3];
        let mut s2 = [Operand::imm(Swz::Zero); 3];
        let split = c.s[c.pos..].find("||").map(|i| c.pos + i);
        let inst = if let Some(sp) = split {
            let mut left = Cur { s: &c.s[..sp], pos: c.pos, tok: c.pos };
            let p1 = alu_part(&mut left, m, sfx, pred, Unit::Rgb, &mut s1);
            c.pos = left.pos;
            c.tok = left.tok;
            let p1 = p1?;
            if !left.at_end() {
                c.pos = left.pos;
                return Err(AsmErrorKind::Expected("end of the RGB part"));
            }
            c.pos = sp + 2;
            let m2 = c.word();
            let mut suf2 = [""; 8];
            let mut n2 = 0;
            while c.s[c.pos..].starts_with('.') {
                c.pos += 1;
                if n2 == suf2.len() {
                    return Err(AsmErrorKind::Capacity("suffixes"));
                }
                suf2[n2] = c.word();
                n2 += 1;
            }
            let p2 = alu_part(&mut c, m2, &suf2[..n2], pred, Unit::Alpha, &mut s2)?;
            build_alu(&[p1, p2])
        } else {
            let p = alu_part(&mut c, m, sfx, pred, Unit::Both, &mut s1)?;
            build_alu(&[p])
        }
        .map_err(AsmErrorKind::Encode)?;
        if !c.at_end() {
            return Err(AsmErrorKind::Expected("end of line"));
        }
        st.emit(Instruction::Alu(inst), l, col)
    })();
    res.map_err(|k| match k {
        AsmErrorKind::Encode(_) | AsmErrorKind::TooManyInstructions => err(&c, start, k),
        AsmErrorKind::UnknownMnemonic => err(&c, mstart, k),
        AsmErrorKind::BadNumber | AsmErrorKind::UndefinedLabel | AsmErrorKind::UnknownSuffix => {
            err(&c, c.tok, k)
        }
        _ => err(&c, c.pos, k),
    })?;
    if !c.at_end() {
        return Err(err(&c, c.pos, AsmErrorKind::Expected("end of line")));
    }
    Ok(())
}

fn strip_comment(line: &str) -> &str {
    let mut end = line.len();
    if let Some(i) = line.find(';') {
        end = end.min(i);
    }
    if let Some(i) = line.find("//") {
        end = end.min(i);
    }
    &line[..end]
}

fn run_pass<'s>(st: &mut State<'s, '_>, src: &'s str) -> Result<(), AsmError> {
    st.pc = 0;
    st.nblocks = 0;
    st.depth = 0;
    st.nosync = false;
    let mut last_line = 0;
    for (i, line) in src.lines().enumerate() {
        last_line = i as u32 + 1;
        statement(st, strip_comment(line), last_line)?;
    }
    if let Some(o) = st.top().copied() {
        return Err(AsmError {
            line: o.line,
            col: o.col,
            kind: AsmErrorKind::Unbalanced("block never closed"),
        });
    }
    if st.pc == 0 {
        return Err(AsmError { line: last_line.max(1), col: 1, kind: AsmErrorKind::Empty });
    }
    Ok(())
}

/// Assembles `src` into `out`, returning the number of instructions.
///
/// After parsing, the assembler applies the synchronisation rules of ctm-guide §3.1-§3.4
/// (unless the source says `.nosync`), see the crate docs.
pub fn assemble(src: &str, out: &mut [Instruction]) -> Result<usize, AsmError> {
    let mut st = State {
        pass2: false,
        pc: 0,
        out,
        lines: [(0, 0); MAX_INSTRUCTIONS],
        labels: [("", 0); MAX_LABELS],
        nlabels: 0,
        blocks: [BlockAddrs::default(); MAX_BLOCKS],
        nblocks: 0,
        stack: [None; MAX_DEPTH],
        depth: 0,
        nosync: false,
    };
    run_pass(&mut st, src)?;
    st.pass2 = true;
    run_pass(&mut st, src)?;
    let n = st.pc;
    let (line, col) = st.lines[n - 1];
    let insts = &mut st.out[..n];
    match &mut insts[n - 1] {
        Instruction::Alu(a) if a.output => a.common.tex_sem_wait = true,
        _ => {
            return Err(AsmError { line, col, kind: AsmErrorKind::LastNotOutput });
        }
    }
    if !st.nosync {
        synchronise(insts);
    }
    Ok(n)
}

fn temps_written(i: &Instruction) -> u128 {
    match i {
        Instruction::Alu(a) => {
            let mut m = 0u128;
            if a.rgb.wmask != 0 {
                m |= 1 << a.rgb.dst.index;
            }
            if a.alpha.wmask {
                m |= 1 << a.alpha.dst.index;
            }
            m
        }
        Instruction::Tex(t) if t.rgb_wmask != 0 || t.alpha_wmask => 1 << t.dst.index,
        _ => 0,
    }
}

/// The automatic synchronisation applied by [`assemble`] (see the crate docs):
/// texture semaphore (§3.4.2) with the §3.7 flow-control erratum workaround, `ALU_WAIT` on
/// texture instructions (§3.2.1) and the presubtract `NOP` (§3.3.2).
pub fn synchronise(insts: &mut [Instruction]) {
    // ALU_WAIT: a texture instruction whose coordinates some ALU instruction writes.
    let mut alu_written = 0u128;
    for i in insts.iter() {
        if let Instruction::Alu(_) = i {
            alu_written |= temps_written(i);
        }
    }
    for i in insts.iter_mut() {
        if let Instruction::Tex(t) = i
            && t.op != TexOp::Nop
            && alu_written & (1 << t.src.index) != 0
        {
            t.alu_wait = true;
        }
    }
    // Texture semaphore: the last lookup of a run of texture instructions acquires, the first
    // instruction after the run (or a dependent lookup inside it) waits.
    let mut run_dst = 0u128;
    let mut last_tex: Option<usize> = None;
    for k in 0..insts.len() {
        let (is_tex, reads_run) = match &insts[k] {
            Instruction::Tex(t) => (true, t.op != TexOp::Nop && run_dst & (1 << t.src.index) != 0),
            _ => (false, true),
        };
        if let (Some(prev), true) = (last_tex, reads_run) {
            if let Instruction::Tex(t) = &mut insts[prev] {
                t.sem_acquire = true;
                t.tex_sem_wait = true;
            }
            match &mut insts[k] {
                Instruction::Alu(a) => a.common.tex_sem_wait = true,
                Instruction::Fc(f) => f.tex_sem_wait = true,
                Instruction::Tex(t) => t.tex_sem_wait = true,
            }
            run_dst = 0;
            last_tex = None;
        }
        if is_tex {
            run_dst |= temps_written(&insts[k]);
            last_tex = Some(k);
        }
    }
    // ctm-guide §3.7 erratum: a flow-control instruction waits on the semaphore when any
    // possible next instruction (fall-through or jump target) waits.
    let waits = |i: &Instruction| match i {
        Instruction::Alu(a) => a.common.tex_sem_wait,
        Instruction::Fc(f) => f.tex_sem_wait,
        Instruction::Tex(t) => t.tex_sem_wait,
    };
    for k in (0..insts.len()).rev() {
        if let Instruction::Fc(f) = insts[k] {
            let next = insts.get(k + 1).is_some_and(waits);
            let target = insts.get(usize::from(f.jump_addr)).is_some_and(waits);
            if (next || target)
                && let Instruction::Fc(f) = &mut insts[k]
            {
                f.tex_sem_wait = true;
            }
        }
    }
    // Presubtract hazard: NOP after an ALU instruction writing a presubtract source.
    for k in 1..insts.len() {
        let needs = match &insts[k] {
            Instruction::Alu(a) => {
                let uses = a.rgb.inputs.iter().any(|i| i.sel == SrcSel::SrcP)
                    || a.alpha.inputs.iter().any(|i| i.sel == SrcSel::SrcP);
                let mut m = 0u128;
                for s in [&a.rgb_addr, &a.alpha_addr] {
                    for src in &s.src[..2] {
                        if let Source::Temp(t) = src {
                            m |= 1 << t.index;
                        }
                    }
                }
                if uses { m } else { 0 }
            }
            _ => 0,
        };
        if needs != 0
            && temps_written(&insts[k - 1]) & needs != 0
            && let Instruction::Alu(a) = &mut insts[k - 1]
        {
            a.common.nop = true;
        }
    }
}

/// Encodes instructions into slots; returns the number written.
pub fn encode_all(insts: &[Instruction], out: &mut [Words]) -> Result<usize, EncodeError> {
    if out.len() < insts.len() {
        return Err(EncodeError::OutOfRange {
            field: "output buffer (instructions)",
            value: insts.len() as u32,
            max: out.len() as u32,
        });
    }
    for (i, o) in insts.iter().zip(out.iter_mut()) {
        *o = i.encode()?;
    }
    Ok(insts.len())
}
