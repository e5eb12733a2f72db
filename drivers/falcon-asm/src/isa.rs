//! Instruction formats, the opcode table, and the typed encoder/decoder (§2.10.2).
//!
//! Every instruction is one row of [`Op`]: a mnemonic, one of the §2.10.2 formats (which bytes
//! hold the subopcode, the registers and the immediate) and its subopcode. The operand fields
//! keep the document's names: `r1` is the low nibble of byte 1, `r2` the high nibble of byte 1,
//! `r3` the high nibble of byte 2, `imm` the I8 (byte 2) or I16 (bytes 2-3, little-endian)
//! field.
//!
//! Rows come from the §2.10.2 subopcode tables and the per-instruction sections (§2.10.3
//! arithmetic, §2.10.4 `ld`/`st`/`push`/`pop`/`add $sp`, §2.10.5 branches, §2.10.6 `exit` and
//! `sleep`, §2.10.8 `trap`/`iret`, §2.10.9 xfers, §2.10.10 `iord`/`iowr`). Where the PDF's
//! tables are damaged the clean copy is envytools' hwdocs `falcon/isa.rst`; `mov` to and from
//! special registers (fe/0, fe/1), which §2.10.6 leaves "Todo", is from envytools envydis
//! `falcon.c` (special register in R1 for fe/0, in R2 for fe/1).

use core::fmt;

/// A general-purpose register `$r0`-`$r15` (§2.10.2 "Registers").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Reg(u8);

impl Reg {
    /// `$rN`, or `None` past `$r15`.
    pub const fn new(n: u8) -> Option<Self> {
        if n < 16 { Some(Self(n)) } else { None }
    }
    /// The register number (0-15).
    pub const fn index(self) -> u8 {
        self.0
    }
}

/// `$r0`-`$r15` by name.
pub mod regs {
    use super::Reg;
    macro_rules! gprs { ($($name:ident = $n:expr),*) => { $(
        #[doc = concat!("`$r", stringify!($n), "`")]
        pub const $name: Reg = Reg($n);
    )* } }
    gprs!(
        R0 = 0,
        R1 = 1,
        R2 = 2,
        R3 = 3,
        R4 = 4,
        R5 = 5,
        R6 = 6,
        R7 = 7,
        R8 = 8,
        R9 = 9,
        R10 = 10,
        R11 = 11,
        R12 = 12,
        R13 = 13,
        R14 = 14,
        R15 = 15
    );
}

/// A special register `$sr0`-`$sr15` (§2.10.2 "Registers"; named ones as constants).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct SpecialReg(u8);

impl SpecialReg {
    /// `$iv0` ($sr0): interrupt 0 vector.
    pub const IV0: Self = Self(0);
    /// `$iv1` ($sr1): interrupt 1 vector.
    pub const IV1: Self = Self(1);
    /// `$tv` ($sr3): trap vector.
    pub const TV: Self = Self(3);
    /// `$sp` ($sr4): stack pointer.
    pub const SP: Self = Self(4);
    /// `$pc` ($sr5): program counter.
    pub const PC: Self = Self(5);
    /// `$xcbase` ($sr6): code xfer external base.
    pub const XCBASE: Self = Self(6);
    /// `$xdbase` ($sr7): data xfer external base.
    pub const XDBASE: Self = Self(7);
    /// `$flags` ($sr8).
    pub const FLAGS: Self = Self(8);
    /// `$cx` ($sr9): crypt xfer mode (crypto units).
    pub const CX: Self = Self(9);
    /// `$cauth` ($sr10): crypt auth code selection (crypto units).
    pub const CAUTH: Self = Self(10);
    /// `$xtargets` ($sr11): xfer port selection.
    pub const XTARGETS: Self = Self(11);
    /// `$tstatus` ($sr12): trap status (v3+).
    pub const TSTATUS: Self = Self(12);

    const NAMES: [(u8, &'static str); 12] = [
        (0, "iv0"),
        (1, "iv1"),
        (3, "tv"),
        (4, "sp"),
        (5, "pc"),
        (6, "xcbase"),
        (7, "xdbase"),
        (8, "flags"),
        (9, "cx"),
        (10, "cauth"),
        (11, "xtargets"),
        (12, "tstatus"),
    ];

    /// `$srN`, or `None` past `$sr15`.
    pub const fn new(n: u8) -> Option<Self> {
        if n < 16 { Some(Self(n)) } else { None }
    }
    /// The index N of `$srN`.
    pub const fn index(self) -> u8 {
        self.0
    }
    /// The document's name (`xdbase`), or `None` for an unnamed index (shown as `srN`).
    pub fn name(self) -> Option<&'static str> {
        Self::NAMES.iter().find(|(i, _)| *i == self.0).map(|(_, n)| *n)
    }
    /// By name without `$`: `xdbase` or `sr7`.
    pub fn from_name(name: &str) -> Option<Self> {
        if let Some((i, _)) = Self::NAMES.iter().find(|(_, n)| n.eq_ignore_ascii_case(name)) {
            return Some(Self(*i));
        }
        let digits = name.strip_prefix("sr").or_else(|| name.strip_prefix("SR"))?;
        Self::new(digits.parse().ok()?)
    }
}

impl fmt::Display for SpecialReg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => write!(f, "${n}"),
            None => write!(f, "$sr{}", self.0),
        }
    }
}

/// Operand size of a sized instruction: byte 0 bits 7:6 (§2.10.2 "Instructions").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Size {
    /// 8-bit (00).
    B8,
    /// 16-bit (01).
    B16,
    /// 32-bit (10).
    B32,
}

impl Size {
    /// All three, in encoding order.
    pub const ALL: [Self; 3] = [Self::B8, Self::B16, Self::B32];
    const fn bits(self) -> u8 {
        match self {
            Self::B8 => 0,
            Self::B16 => 1,
            Self::B32 => 2,
        }
    }
    /// Bytes per access; a sized `ld`/`st` immediate index is scaled by it (§2.10.4).
    pub const fn bytes(self) -> u32 {
        match self {
            Self::B8 => 1,
            Self::B16 => 2,
            Self::B32 => 4,
        }
    }
    /// The text name: `b8`, `b16`, `b32`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::B8 => "b8",
            Self::B16 => "b16",
            Self::B32 => "b32",
        }
    }
}

/// A `bra` condition: the OL subopcode 0x00-0x1f of f4/f5 (§2.10.5 "Conditional branch").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Cond(u8);

impl Cond {
    /// Branch always (0x0e).
    pub const ALWAYS: Self = Self(0x0e);
    /// Carry / unsigned below (0x08).
    pub const C: Self = Self(0x08);
    /// Overflow (0x09).
    pub const O: Self = Self(0x09);
    /// Sign (0x0a).
    pub const S: Self = Self(0x0a);
    /// Zero / equal (0x0b).
    pub const Z: Self = Self(0x0b);
    /// Unsigned above (0x0c).
    pub const A: Self = Self(0x0c);
    /// Not unsigned above / below or equal (0x0d).
    pub const NA: Self = Self(0x0d);
    /// No carry / above or equal (0x18).
    pub const NC: Self = Self(0x18);
    /// No overflow (0x19).
    pub const NO: Self = Self(0x19);
    /// Sign clear (0x1a).
    pub const NS: Self = Self(0x1a);
    /// Not zero / not equal (0x1b).
    pub const NZ: Self = Self(0x1b);
    /// Signed greater (0x1c, v3+).
    pub const G: Self = Self(0x1c);
    /// Signed less or equal (0x1d, v3+).
    pub const LE: Self = Self(0x1d);
    /// Signed less (0x1e, v3+).
    pub const L: Self = Self(0x1e);
    /// Signed greater or equal (0x1f, v3+).
    pub const GE: Self = Self(0x1f);

    /// Names of the flag conditions (subopcode, canonical name first, then aliases).
    const NAMES: [(u8, &'static str); 20] = [
        (0x08, "c"),
        (0x08, "b"),
        (0x09, "o"),
        (0x0a, "s"),
        (0x0b, "e"),
        (0x0b, "z"),
        (0x0c, "a"),
        (0x0d, "na"),
        (0x0d, "be"),
        (0x18, "nc"),
        (0x18, "nb"),
        (0x18, "ae"),
        (0x19, "no"),
        (0x1a, "ns"),
        (0x1b, "ne"),
        (0x1b, "nz"),
        (0x1c, "g"),
        (0x1d, "le"),
        (0x1e, "l"),
        (0x1f, "ge"),
    ];

    /// Predicate `$pN` true (0x00+N).
    pub const fn pred(n: u8) -> Option<Self> {
        if n < 8 { Some(Self(n)) } else { None }
    }
    /// Predicate `$pN` false (0x10+N).
    pub const fn not_pred(n: u8) -> Option<Self> {
        if n < 8 { Some(Self(0x10 + n)) } else { None }
    }
    /// From the subopcode; 0x0f and values past 0x1f are not conditions.
    pub const fn from_bits(bits: u8) -> Option<Self> {
        if bits < 0x20 && bits != 0x0f { Some(Self(bits)) } else { None }
    }
    /// The subopcode.
    pub const fn bits(self) -> u8 {
        self.0
    }
    /// By text name: `ne`, `$p3`, `not $p3`.
    pub fn from_name(name: &str) -> Option<Self> {
        if let Some(rest) = name.strip_prefix("not") {
            let p = rest.trim_start().strip_prefix("$p")?;
            return Self::not_pred(p.parse().ok()?);
        }
        if let Some(p) = name.strip_prefix("$p") {
            return Self::pred(p.parse().ok()?);
        }
        Self::NAMES.iter().find(|(_, n)| n.eq_ignore_ascii_case(name)).map(|(b, _)| Self(*b))
    }
}

impl fmt::Display for Cond {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            n @ 0..=7 => write!(f, "$p{n}"),
            n @ 0x10..=0x17 => write!(f, "not $p{}", n - 0x10),
            0x0e => Ok(()),
            b => f.write_str(Self::NAMES.iter().find(|(x, _)| *x == b).map_or("?", |(_, n)| *n)),
        }
    }
}

/// The §2.10.2 instruction formats: where the subopcode, registers and immediate live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[allow(missing_docs)] // the names are the document's opcode columns
pub enum Format {
    // Sized (low 6 bits of byte 0).
    S0x,
    S1x,
    S2x,
    S30,
    S31,
    S34,
    S36,
    S37,
    S38,
    S39,
    S3a,
    S3b,
    S3c,
    S3d,
    // Unsized.
    Cx,
    Dx,
    Ex,
    F0,
    F1,
    F2,
    F4,
    F5,
    F8,
    F9,
    Fa,
    Fc,
    Fd,
    Fe,
    Ff,
}

/// Where a format keeps its subopcode (§2.10.2: O1, O2, OL, O3).
#[derive(Clone, Copy, PartialEq, Eq)]
enum SubopAt {
    /// Low 4 bits of byte 0.
    O1,
    /// Low 4 bits of byte 1.
    O2,
    /// Low 6 bits of byte 1.
    OL,
    /// Low 4 bits of byte 2.
    O3,
}

/// A register nibble of a format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Field {
    R1,
    R2,
    R3,
}

impl Format {
    /// Whether byte 0 bits 7:6 carry a [`Size`].
    pub const fn is_sized(self) -> bool {
        matches!(
            self,
            Self::S0x
                | Self::S1x
                | Self::S2x
                | Self::S30
                | Self::S31
                | Self::S34
                | Self::S36
                | Self::S37
                | Self::S38
                | Self::S39
                | Self::S3a
                | Self::S3b
                | Self::S3c
                | Self::S3d
        )
    }

    /// Byte 0 without size bits and subopcode (O1 formats: the high nibble of the low 6 bits
    /// for sized ones, of the whole byte for unsized ones).
    const fn opcode(self) -> u8 {
        match self {
            Self::S0x => 0x00,
            Self::S1x => 0x10,
            Self::S2x => 0x20,
            Self::S30 => 0x30,
            Self::S31 => 0x31,
            Self::S34 => 0x34,
            Self::S36 => 0x36,
            Self::S37 => 0x37,
            Self::S38 => 0x38,
            Self::S39 => 0x39,
            Self::S3a => 0x3a,
            Self::S3b => 0x3b,
            Self::S3c => 0x3c,
            Self::S3d => 0x3d,
            Self::Cx => 0xc0,
            Self::Dx => 0xd0,
            Self::Ex => 0xe0,
            Self::F0 => 0xf0,
            Self::F1 => 0xf1,
            Self::F2 => 0xf2,
            Self::F4 => 0xf4,
            Self::F5 => 0xf5,
            Self::F8 => 0xf8,
            Self::F9 => 0xf9,
            Self::Fa => 0xfa,
            Self::Fc => 0xfc,
            Self::Fd => 0xfd,
            Self::Fe => 0xfe,
            Self::Ff => 0xff,
        }
    }

    const fn subop_at(self) -> SubopAt {
        match self {
            Self::S0x | Self::S1x | Self::S2x | Self::Cx | Self::Dx | Self::Ex => SubopAt::O1,
            Self::S38 | Self::S39 | Self::S3a | Self::S3b | Self::S3c => SubopAt::O3,
            Self::Fa | Self::Fd | Self::Fe | Self::Ff => SubopAt::O3,
            Self::F4 | Self::F5 => SubopAt::OL,
            _ => SubopAt::O2,
        }
    }

    /// Immediate width in bits (0, 8 or 16).
    pub const fn imm_bits(self) -> u32 {
        match self {
            Self::S0x | Self::S1x | Self::S30 | Self::S34 | Self::S36 => 8,
            Self::Cx | Self::Dx | Self::F0 | Self::F2 | Self::F4 => 8,
            Self::S2x | Self::S31 | Self::S37 | Self::Ex | Self::F1 | Self::F5 => 16,
            _ => 0,
        }
    }

    /// Instruction length in bytes: 2, 3 or 4 (§2.10.2).
    pub const fn length(self) -> usize {
        match self.imm_bits() {
            16 => 4,
            8 => 3,
            _ => match self.subop_at() {
                SubopAt::O3 => 3,
                _ => 2,
            },
        }
    }

    /// The register nibbles the format uses.
    pub(crate) const fn fields(self) -> &'static [Field] {
        use Field::*;
        match self {
            Self::S0x | Self::S1x | Self::S2x | Self::Cx | Self::Dx | Self::Ex => &[R1, R2],
            Self::S38 | Self::S39 | Self::S3a | Self::S3b => &[R1, R2],
            Self::Fa | Self::Fd | Self::Fe => &[R1, R2],
            Self::S3c | Self::Ff => &[R1, R2, R3],
            Self::S30 | Self::S31 | Self::S34 | Self::S36 | Self::S37 | Self::S3d => &[R2],
            Self::F0 | Self::F1 | Self::F2 | Self::F9 | Self::Fc => &[R2],
            Self::F4 | Self::F5 | Self::F8 => &[],
        }
    }

    /// The format of a first byte, and its subopcode when O1 holds it.
    fn of_byte0(b0: u8) -> Option<(Self, Option<u8>)> {
        let sized = b0 >> 6 != 3;
        let low = if sized { b0 & 0x3f } else { b0 };
        let o1 = Some(low & 0x0f);
        Some(match (sized, low & 0xf0) {
            (true, 0x00) => (Self::S0x, o1),
            (true, 0x10) => (Self::S1x, o1),
            (true, 0x20) => (Self::S2x, o1),
            (false, 0xc0) => (Self::Cx, o1),
            (false, 0xd0) => (Self::Dx, o1),
            (false, 0xe0) => (Self::Ex, o1),
            _ => (
                ALL_FORMATS.iter().copied().find(|f| f.is_sized() == sized && f.opcode() == low)?,
                None,
            ),
        })
    }
}

const ALL_FORMATS: [Format; 29] = {
    use Format::*;
    [
        S0x, S1x, S2x, S30, S31, S34, S36, S37, S38, S39, S3a, S3b, S3c, S3d, Cx, Dx, Ex, F0, F1,
        F2, F4, F5, F8, F9, Fa, Fc, Fd, Fe, Ff,
    ]
};

/// How an immediate is extended and shown (§2.10.3-2.10.10 "Immediates").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ext {
    /// Zero-extended (or truncated: shift counts, bit indices).
    Zero,
    /// Sign-extended.
    Sign,
}

/// One operand of a row's text/builder syntax, and where its value goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pat {
    /// A GPR in a nibble.
    R(Field),
    /// A special register in a nibble (`mov` fe/0, fe/1).
    Sr(Field),
    /// The fixed operand `$sp`.
    Sp,
    /// The fixed operand `$flags`.
    Flags,
    /// An immediate.
    Imm(Ext),
    /// `D[...]`/`I[...]`: base, index.
    Mem(Space, Base, Index),
    /// A `$pc`-relative branch target, written as an absolute address or label.
    Rel,
    /// An absolute code address (`jmp`, `call`), or label.
    Abs,
    /// A `bra` condition (the OL subopcode itself).
    Cond,
    /// A literal number fixed by the subopcode (`trap 2`).
    Lit(u8),
}

/// Data segment (`D[]`, §2.10.4) or IO space (`I[]`, §2.10.10).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Space {
    /// `D[]`: index scaled by the access size.
    Data,
    /// `I[]`: index scaled by 4.
    Io,
}

/// Base of a memory operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Base {
    R(Field),
    Sp,
}

/// Index of a memory operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Index {
    None,
    Imm,
    R(Field),
}

/// One row of the opcode table.
pub(crate) struct Row {
    pub(crate) mnemonic: Mnemonic,
    pub(crate) format: Format,
    /// The subopcode; for `bra` the condition takes its place.
    pub(crate) subop: u8,
    pub(crate) pats: &'static [Pat],
}

macro_rules! mnemonics {
    ($($v:ident = $s:literal),* $(,)?) => {
        /// An instruction name of the text syntax (several [`Op`] rows share one).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[cfg_attr(feature = "defmt", derive(defmt::Format))]
        #[allow(missing_docs)] // each is its text name
        pub enum Mnemonic { $($v),* }
        impl Mnemonic {
            /// Every mnemonic.
            pub const ALL: &'static [Mnemonic] = &[$(Mnemonic::$v),*];
            /// The text name.
            pub const fn name(self) -> &'static str { match self { $(Mnemonic::$v => $s),* } }
            /// By text name (ASCII case-insensitive).
            pub fn from_name(s: &str) -> Option<Self> {
                Self::ALL.iter().copied().find(|m| m.name().eq_ignore_ascii_case(s))
            }
        }
    };
}

mnemonics! {
    St = "st", Ld = "ld", Cmpu = "cmpu", Cmps = "cmps", Cmp = "cmp", Add = "add", Adc = "adc",
    Sub = "sub", Sbb = "sbb", Shl = "shl", Shr = "shr", Sar = "sar", Shlc = "shlc",
    Shrc = "shrc", Not = "not", Neg = "neg", Mov = "mov", Hswap = "hswap", Clear = "clear",
    Setf = "setf", Mulu = "mulu", Muls = "muls", Sext = "sext", Extrs = "extrs", Sethi = "sethi",
    And = "and", Or = "or", Xor = "xor", Extr = "extr", Xbit = "xbit", Bset = "bset",
    Bclr = "bclr", Btgl = "btgl", Ins = "ins", Div = "div", Mod = "mod", Iord = "iord",
    Iowr = "iowr", Iowrs = "iowrs", Xcld = "xcld", Xdld = "xdld", Xdst = "xdst", Setp = "setp",
    Bra = "bra", Jmp = "jmp", Call = "call", Sleep = "sleep", Ret = "ret", Iret = "iret",
    Exit = "exit", Xdwait = "xdwait", Xcwait = "xcwait", Trap = "trap", Push = "push",
    Pop = "pop",
}

macro_rules! table {
    ($($v:ident: $m:ident $f:ident $s:literal [$($p:expr),*];)*) => {
        /// One instruction of the table: mnemonic, format and subopcode (see [`Op::mnemonic`],
        /// [`Op::format`]). The variant name is the mnemonic, then the format's opcode.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[cfg_attr(feature = "defmt", derive(defmt::Format))]
        #[allow(missing_docs, non_camel_case_types)]
        pub enum Op { $($v),* }
        pub(crate) const ROWS: &[Row] = &[$(Row {
            mnemonic: Mnemonic::$m, format: Format::$f, subop: $s, pats: &[$($p),*],
        }),*];
        impl Op {
            /// Every row, in table order (8-bit immediate forms before 16-bit ones).
            pub const ALL: &'static [Op] = &[$(Op::$v),*];
        }
    };
}

use Field::{R1, R2, R3};
const Z: Pat = Pat::Imm(Ext::Zero);
const S: Pat = Pat::Imm(Ext::Sign);
const fn r(f: Field) -> Pat {
    Pat::R(f)
}
const fn d(b: Base, i: Index) -> Pat {
    Pat::Mem(Space::Data, b, i)
}
const fn io(i: Index) -> Pat {
    Pat::Mem(Space::Io, Base::R(R2), i)
}
const BR2: Base = Base::R(R2);

// Sized rows: §2.10.2 "Sized" table; forms from §2.10.3 and §2.10.4. Unsized rows: the
// "Unsized" table (clean copy in hwdocs falcon/isa.rst) and §2.10.3-2.10.10.
table! {
    St_0x: St S0x 0 [d(BR2, Index::Imm), r(R1)];
    St_30: St S30 1 [d(Base::Sp, Index::Imm), r(R2)];
    St_38: St S38 0 [d(BR2, Index::None), r(R1)];
    StSp_38: St S38 1 [d(Base::Sp, Index::R(R1)), r(R2)];
    Ld_1x: Ld S1x 8 [r(R1), d(BR2, Index::Imm)];
    Ld_34: Ld S34 0 [r(R2), d(Base::Sp, Index::Imm)];
    Ld_3a: Ld S3a 0 [r(R2), d(Base::Sp, Index::R(R1))];
    Ld_3c: Ld S3c 8 [r(R3), d(BR2, Index::R(R1))];
    Cmpu_30: Cmpu S30 4 [r(R2), Z];
    Cmpu_31: Cmpu S31 4 [r(R2), Z];
    Cmpu_38: Cmpu S38 4 [r(R2), r(R1)];
    Cmps_30: Cmps S30 5 [r(R2), S];
    Cmps_31: Cmps S31 5 [r(R2), S];
    Cmps_38: Cmps S38 5 [r(R2), r(R1)];
    Cmp_30: Cmp S30 6 [r(R2), S];
    Cmp_31: Cmp S31 6 [r(R2), S];
    Cmp_38: Cmp S38 6 [r(R2), r(R1)];
    Add_1x: Add S1x 0 [r(R1), r(R2), Z];
    Add_2x: Add S2x 0 [r(R1), r(R2), Z];
    Add_36: Add S36 0 [r(R2), Z];
    Add_37: Add S37 0 [r(R2), Z];
    Add_3b: Add S3b 0 [r(R2), r(R1)];
    Add_3c: Add S3c 0 [r(R3), r(R2), r(R1)];
    Adc_1x: Adc S1x 1 [r(R1), r(R2), Z];
    Adc_2x: Adc S2x 1 [r(R1), r(R2), Z];
    Adc_36: Adc S36 1 [r(R2), Z];
    Adc_37: Adc S37 1 [r(R2), Z];
    Adc_3b: Adc S3b 1 [r(R2), r(R1)];
    Adc_3c: Adc S3c 1 [r(R3), r(R2), r(R1)];
    Sub_1x: Sub S1x 2 [r(R1), r(R2), Z];
    Sub_2x: Sub S2x 2 [r(R1), r(R2), Z];
    Sub_36: Sub S36 2 [r(R2), Z];
    Sub_37: Sub S37 2 [r(R2), Z];
    Sub_3b: Sub S3b 2 [r(R2), r(R1)];
    Sub_3c: Sub S3c 2 [r(R3), r(R2), r(R1)];
    Sbb_1x: Sbb S1x 3 [r(R1), r(R2), Z];
    Sbb_2x: Sbb S2x 3 [r(R1), r(R2), Z];
    Sbb_36: Sbb S36 3 [r(R2), Z];
    Sbb_37: Sbb S37 3 [r(R2), Z];
    Sbb_3b: Sbb S3b 3 [r(R2), r(R1)];
    Sbb_3c: Sbb S3c 3 [r(R3), r(R2), r(R1)];
    // Shifts: the §2.10.2 table gives `sar` subopcode 7 (the §2.10.3 text's "6" disagrees with
    // both tables and envydis; 6 is undefined).
    Shl_1x: Shl S1x 4 [r(R1), r(R2), Z];
    Shl_36: Shl S36 4 [r(R2), Z];
    Shl_3b: Shl S3b 4 [r(R2), r(R1)];
    Shl_3c: Shl S3c 4 [r(R3), r(R2), r(R1)];
    Shr_1x: Shr S1x 5 [r(R1), r(R2), Z];
    Shr_36: Shr S36 5 [r(R2), Z];
    Shr_3b: Shr S3b 5 [r(R2), r(R1)];
    Shr_3c: Shr S3c 5 [r(R3), r(R2), r(R1)];
    Sar_1x: Sar S1x 7 [r(R1), r(R2), Z];
    Sar_36: Sar S36 7 [r(R2), Z];
    Sar_3b: Sar S3b 7 [r(R2), r(R1)];
    Sar_3c: Sar S3c 7 [r(R3), r(R2), r(R1)];
    Shlc_1x: Shlc S1x 0xc [r(R1), r(R2), Z];
    Shlc_36: Shlc S36 0xc [r(R2), Z];
    Shlc_3b: Shlc S3b 0xc [r(R2), r(R1)];
    Shlc_3c: Shlc S3c 0xc [r(R3), r(R2), r(R1)];
    Shrc_1x: Shrc S1x 0xd [r(R1), r(R2), Z];
    Shrc_36: Shrc S36 0xd [r(R2), Z];
    Shrc_3b: Shrc S3b 0xd [r(R2), r(R1)];
    Shrc_3c: Shrc S3c 0xd [r(R3), r(R2), r(R1)];
    Not_39: Not S39 0 [r(R1), r(R2)];
    Not_3d: Not S3d 0 [r(R2)];
    Neg_39: Neg S39 1 [r(R1), r(R2)];
    Neg_3d: Neg S3d 1 [r(R2)];
    Mov_39: Mov S39 2 [r(R1), r(R2)];
    Mov_3d: Mov S3d 2 [r(R2)];
    Hswap_39: Hswap S39 3 [r(R1), r(R2)];
    Hswap_3d: Hswap S3d 3 [r(R2)];
    Clear_3d: Clear S3d 4 [r(R2)];
    Setf_3d: Setf S3d 5 [r(R2)];
    // Unsized.
    Mulu_cx: Mulu Cx 0 [r(R1), r(R2), Z];
    Mulu_ex: Mulu Ex 0 [r(R1), r(R2), Z];
    Mulu_f0: Mulu F0 0 [r(R2), Z];
    Mulu_f1: Mulu F1 0 [r(R2), Z];
    Mulu_fd: Mulu Fd 0 [r(R2), r(R1)];
    Mulu_ff: Mulu Ff 0 [r(R3), r(R2), r(R1)];
    Muls_cx: Muls Cx 1 [r(R1), r(R2), S];
    Muls_ex: Muls Ex 1 [r(R1), r(R2), S];
    Muls_f0: Muls F0 1 [r(R2), S];
    Muls_f1: Muls F1 1 [r(R2), S];
    Muls_fd: Muls Fd 1 [r(R2), r(R1)];
    Muls_ff: Muls Ff 1 [r(R3), r(R2), r(R1)];
    Sext_cx: Sext Cx 2 [r(R1), r(R2), Z];
    Sext_f0: Sext F0 2 [r(R2), Z];
    Sext_fd: Sext Fd 2 [r(R2), r(R1)];
    Sext_ff: Sext Ff 2 [r(R3), r(R2), r(R1)];
    Extrs_cx: Extrs Cx 3 [r(R1), r(R2), Z];
    Extrs_ex: Extrs Ex 3 [r(R1), r(R2), Z];
    Extrs_ff: Extrs Ff 3 [r(R3), r(R2), r(R1)];
    Sethi_f0: Sethi F0 3 [r(R2), Z];
    Sethi_f1: Sethi F1 3 [r(R2), Z];
    And_cx: And Cx 4 [r(R1), r(R2), Z];
    And_ex: And Ex 4 [r(R1), r(R2), Z];
    And_f0: And F0 4 [r(R2), Z];
    And_f1: And F1 4 [r(R2), Z];
    And_fd: And Fd 4 [r(R2), r(R1)];
    And_ff: And Ff 4 [r(R3), r(R2), r(R1)];
    Or_cx: Or Cx 5 [r(R1), r(R2), Z];
    Or_ex: Or Ex 5 [r(R1), r(R2), Z];
    Or_f0: Or F0 5 [r(R2), Z];
    Or_f1: Or F1 5 [r(R2), Z];
    Or_fd: Or Fd 5 [r(R2), r(R1)];
    Or_ff: Or Ff 5 [r(R3), r(R2), r(R1)];
    Xor_cx: Xor Cx 6 [r(R1), r(R2), Z];
    Xor_ex: Xor Ex 6 [r(R1), r(R2), Z];
    Xor_f0: Xor F0 6 [r(R2), Z];
    Xor_f1: Xor F1 6 [r(R2), Z];
    Xor_fd: Xor Fd 6 [r(R2), r(R1)];
    Xor_ff: Xor Ff 6 [r(R3), r(R2), r(R1)];
    Extr_cx: Extr Cx 7 [r(R1), r(R2), Z];
    Extr_ex: Extr Ex 7 [r(R1), r(R2), Z];
    Extr_ff: Extr Ff 7 [r(R3), r(R2), r(R1)];
    Mov_f0: Mov F0 7 [r(R2), S];
    Mov_f1: Mov F1 7 [r(R2), S];
    Xbit_cx: Xbit Cx 8 [r(R1), r(R2), Z];
    Xbit_ff: Xbit Ff 8 [r(R3), r(R2), r(R1)];
    XbitFlags_f0: Xbit F0 0xc [r(R2), Pat::Flags, Z];
    XbitFlags_fe: Xbit Fe 0xc [r(R1), Pat::Flags, r(R2)];
    Bset_f0: Bset F0 9 [r(R2), Z];
    Bset_fd: Bset Fd 9 [r(R2), r(R1)];
    Bclr_f0: Bclr F0 0xa [r(R2), Z];
    Bclr_fd: Bclr Fd 0xa [r(R2), r(R1)];
    Btgl_f0: Btgl F0 0xb [r(R2), Z];
    Btgl_fd: Btgl Fd 0xb [r(R2), r(R1)];
    BsetFlags_f4: Bset F4 0x31 [Pat::Flags, Z];
    BsetFlags_f9: Bset F9 9 [Pat::Flags, r(R2)];
    BclrFlags_f4: Bclr F4 0x32 [Pat::Flags, Z];
    BclrFlags_f9: Bclr F9 0xa [Pat::Flags, r(R2)];
    BtglFlags_f4: Btgl F4 0x33 [Pat::Flags, Z];
    BtglFlags_f9: Btgl F9 0xb [Pat::Flags, r(R2)];
    Ins_cx: Ins Cx 0xb [r(R1), r(R2), Z];
    Ins_ex: Ins Ex 0xb [r(R1), r(R2), Z];
    Div_cx: Div Cx 0xc [r(R1), r(R2), Z];
    Div_ex: Div Ex 0xc [r(R1), r(R2), Z];
    Div_ff: Div Ff 0xc [r(R3), r(R2), r(R1)];
    Mod_cx: Mod Cx 0xd [r(R1), r(R2), Z];
    Mod_ex: Mod Ex 0xd [r(R1), r(R2), Z];
    Mod_ff: Mod Ff 0xd [r(R3), r(R2), r(R1)];
    // §2.10.10: IO addresses are BASE + IDX * 4.
    Iord_cx: Iord Cx 0xf [r(R1), io(Index::Imm)];
    Iord_ff: Iord Ff 0xf [r(R3), io(Index::R(R1))];
    Iowr_dx: Iowr Dx 0 [io(Index::Imm), r(R1)];
    Iowr_fa: Iowr Fa 0 [io(Index::None), r(R1)];
    Iowrs_dx: Iowrs Dx 1 [io(Index::Imm), r(R1)];
    Iowrs_fa: Iowrs Fa 1 [io(Index::None), r(R1)];
    // §2.10.9: first operand the external offset, second the local address | size << 16.
    Xcld_fa: Xcld Fa 4 [r(R2), r(R1)];
    Xdld_fa: Xdld Fa 5 [r(R2), r(R1)];
    Xdst_fa: Xdst Fa 6 [r(R2), r(R1)];
    Setp_f2: Setp F2 8 [Z, r(R2)];
    Setp_fa: Setp Fa 8 [r(R1), r(R2)];
    // §2.10.5.
    Bra_f4: Bra F4 0 [Pat::Cond, Pat::Rel];
    Bra_f5: Bra F5 0 [Pat::Cond, Pat::Rel];
    Jmp_f4: Jmp F4 0x20 [Pat::Abs];
    Jmp_f5: Jmp F5 0x20 [Pat::Abs];
    Jmp_f9: Jmp F9 4 [r(R2)];
    Call_f4: Call F4 0x21 [Pat::Abs];
    Call_f5: Call F5 0x21 [Pat::Abs];
    Call_f9: Call F9 5 [r(R2)];
    Sleep_f4: Sleep F4 0x28 [Z];
    AddSp_f4: Add F4 0x30 [Pat::Sp, S];
    AddSp_f5: Add F5 0x30 [Pat::Sp, S];
    AddSp_f9: Add F9 1 [Pat::Sp, r(R2)];
    Ret_f8: Ret F8 0 [];
    Iret_f8: Iret F8 1 [];
    Exit_f8: Exit F8 2 [];
    Xdwait_f8: Xdwait F8 3 [];
    Xcwait_f8: Xcwait F8 7 [];
    Trap0_f8: Trap F8 8 [Pat::Lit(0)];
    Trap1_f8: Trap F8 9 [Pat::Lit(1)];
    Trap2_f8: Trap F8 0xa [Pat::Lit(2)];
    Trap3_f8: Trap F8 0xb [Pat::Lit(3)];
    Push_f9: Push F9 0 [r(R2)];
    // The §2.10.4 `pop` section gives opcode f2 (setp's I8 opcode); the §2.10.2 unsized table
    // puts `pop` in the fc column and envytools envydis agrees: a doc error, fc is used.
    Pop_fc: Pop Fc 0 [r(R2)];
    // Not in the document (§2.10.6 "Todo"); envytools envydis falcon.c.
    MovToSr_fe: Mov Fe 0 [Pat::Sr(R1), r(R2)];
    MovFromSr_fe: Mov Fe 1 [r(R1), Pat::Sr(R2)];
}

impl Op {
    pub(crate) fn row(self) -> &'static Row {
        &ROWS[self as usize]
    }
    /// Its text name.
    pub fn mnemonic(self) -> Mnemonic {
        self.row().mnemonic
    }
    /// Its §2.10.2 format.
    pub fn format(self) -> Format {
        self.row().format
    }
}

/// One decoded or to-be-encoded instruction: the row and its fields (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Instruction {
    /// The row.
    pub op: Op,
    /// The operand size of a sized row; `None` for an unsized one.
    pub size: Option<Size>,
    /// Byte 1 low nibble.
    pub r1: u8,
    /// Byte 1 high nibble.
    pub r2: u8,
    /// Byte 2 high nibble.
    pub r3: u8,
    /// The I8 or I16 field as stored (raw, before extension).
    pub imm: u16,
    /// The condition of a `bra`; [`Cond::ALWAYS`] for every other row.
    pub cond: Cond,
}

/// Why an [`Instruction`] cannot be encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum EncodeError {
    /// A sized row without a size, or an unsized row with one.
    SizeMismatch,
    /// A register nibble above 15, or a nibble the format does not have is not 0.
    FieldOutOfRange,
    /// The immediate is wider than the format's field.
    ImmediateOutOfRange,
    /// A condition on a row other than `bra`.
    CondNotAllowed,
    /// The output is shorter than the instruction.
    BufferTooSmall,
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::SizeMismatch => {
                "operand size given for an unsized form or missing for a sized one"
            }
            Self::FieldOutOfRange => "register field out of range or set where the format has none",
            Self::ImmediateOutOfRange => "immediate wider than the format's field",
            Self::CondNotAllowed => "a branch condition on an instruction that is not bra",
            Self::BufferTooSmall => "output buffer shorter than the instruction",
        })
    }
}

impl core::error::Error for EncodeError {}

/// Why bytes do not decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum DecodeError {
    /// The bytes end inside the instruction (needed: its length).
    Truncated {
        /// The instruction's length.
        needed: usize,
    },
    /// No row has this first byte and subopcode: the hardware traps (§2.10.2 "Invalid opcode
    /// handling").
    InvalidOpcode {
        /// The first byte.
        byte0: u8,
    },
    /// Bits the format leaves unused are set (this decoder accepts only the canonical
    /// encoding, so that decoding and re-encoding give the same bytes).
    ReservedBits {
        /// The first byte.
        byte0: u8,
    },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Truncated { needed } => {
                write!(f, "instruction truncated ({needed} bytes needed)")
            }
            Self::InvalidOpcode { byte0 } => write!(f, "invalid opcode (first byte {byte0:#04x})"),
            Self::ReservedBits { byte0 } => {
                write!(f, "unused bits set (first byte {byte0:#04x})")
            }
        }
    }
}

impl core::error::Error for DecodeError {}

impl Instruction {
    /// A row with every field 0 (and `size` [`Size::B32`] when the row is sized).
    pub const fn new(op: Op) -> Self {
        let size = if ROWS[op as usize].format.is_sized() { Some(Size::B32) } else { None };
        Self { op, size, r1: 0, r2: 0, r3: 0, imm: 0, cond: Cond::ALWAYS }
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.op.format().length()
    }

    /// Always false (no instruction is empty); for clippy's `len_without_is_empty`.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Writes the instruction to the start of `out`; returns its length.
    pub fn encode(&self, out: &mut [u8]) -> Result<usize, EncodeError> {
        let row = self.op.row();
        let f = row.format;
        let len = f.length();
        let mut b = [0u8; 4];
        match (f.is_sized(), self.size) {
            (true, Some(s)) => b[0] = s.bits() << 6 | f.opcode(),
            (false, None) => b[0] = f.opcode(),
            _ => return Err(EncodeError::SizeMismatch),
        }
        let subop = if row.mnemonic == Mnemonic::Bra {
            self.cond.0
        } else if self.cond != Cond::ALWAYS {
            return Err(EncodeError::CondNotAllowed);
        } else {
            row.subop
        };
        match f.subop_at() {
            SubopAt::O1 => b[0] |= subop,
            SubopAt::O2 | SubopAt::OL => b[1] = subop,
            SubopAt::O3 => b[2] = subop,
        }
        let fields = f.fields();
        for (field, v) in [(Field::R1, self.r1), (Field::R2, self.r2), (Field::R3, self.r3)] {
            if v > 15 || (v != 0 && !fields.contains(&field)) {
                return Err(EncodeError::FieldOutOfRange);
            }
            match field {
                Field::R1 => b[1] |= v,
                Field::R2 => b[1] |= v << 4,
                Field::R3 => b[2] |= v << 4,
            }
        }
        match f.imm_bits() {
            0 if self.imm != 0 => return Err(EncodeError::ImmediateOutOfRange),
            8 if self.imm > 0xff => return Err(EncodeError::ImmediateOutOfRange),
            8 => b[2] = self.imm as u8,
            16 => b[2..4].copy_from_slice(&self.imm.to_le_bytes()),
            _ => {}
        }
        let dst = out.get_mut(..len).ok_or(EncodeError::BufferTooSmall)?;
        dst.copy_from_slice(&b[..len]);
        Ok(len)
    }

    /// Decodes the instruction at the start of `bytes`; returns it and its length.
    pub fn decode(bytes: &[u8]) -> Result<(Self, usize), DecodeError> {
        let b0 = *bytes.first().ok_or(DecodeError::Truncated { needed: 1 })?;
        let (f, o1) = Format::of_byte0(b0).ok_or(DecodeError::InvalidOpcode { byte0: b0 })?;
        let len = f.length();
        let b = bytes.get(..len).ok_or(DecodeError::Truncated { needed: len })?;
        let byte = |i: usize| b.get(i).copied().unwrap_or(0);
        let subop = match f.subop_at() {
            SubopAt::O1 => o1.unwrap_or(0),
            SubopAt::O2 => byte(1) & 0x0f,
            SubopAt::OL => byte(1),
            SubopAt::O3 => byte(2) & 0x0f,
        };
        let (op, cond) = if matches!(f, Format::F4 | Format::F5) && subop < 0x20 {
            let cond = Cond::from_bits(subop).ok_or(DecodeError::InvalidOpcode { byte0: b0 })?;
            (if f == Format::F4 { Op::Bra_f4 } else { Op::Bra_f5 }, cond)
        } else {
            let i = ROWS
                .iter()
                .position(|r| r.format == f && r.subop == subop && r.mnemonic != Mnemonic::Bra)
                .ok_or(DecodeError::InvalidOpcode { byte0: b0 })?;
            (Op::ALL[i], Cond::ALWAYS)
        };
        let size = f.is_sized().then(|| Size::ALL[usize::from(b0 >> 6)]);
        let fields = f.fields();
        let nib = |field: Field, v: u8| if fields.contains(&field) { v } else { 0 };
        let imm = match f.imm_bits() {
            8 => u16::from(byte(2)),
            16 => u16::from_le_bytes([byte(2), byte(3)]),
            _ => 0,
        };
        let insn = Self {
            op,
            size,
            r1: nib(Field::R1, byte(1) & 0x0f),
            r2: nib(Field::R2, byte(1) >> 4),
            r3: nib(Field::R3, byte(2) >> 4),
            imm,
            cond,
        };
        // Canonical only: re-encoding must give these bytes (unused nibbles, OL's top bits).
        let mut again = [0u8; 4];
        match insn.encode(&mut again) {
            Ok(n) if again[..n] == *b => Ok((insn, len)),
            _ => Err(DecodeError::ReservedBits { byte0: b0 }),
        }
    }

    /// The immediate as the instruction uses it: sign-extended where the row says so.
    pub fn imm_value(&self) -> i32 {
        let signed = self.op.row().pats.iter().any(|p| matches!(p, Pat::Imm(Ext::Sign) | Pat::Rel));
        match (signed, self.op.format().imm_bits()) {
            (true, 8) => i32::from(self.imm as u8 as i8),
            (true, 16) => i32::from(self.imm as i16),
            _ => i32::from(self.imm),
        }
    }

    /// A `bra`'s target when the instruction sits at `pc` (relative to its own address,
    /// §2.10.5); `None` for other rows.
    pub fn branch_target(&self, pc: u32) -> Option<u32> {
        (self.op.mnemonic() == Mnemonic::Bra).then(|| pc.wrapping_add_signed(self.imm_value()))
    }

    pub(crate) fn field(&self, f: Field) -> u8 {
        match f {
            Field::R1 => self.r1,
            Field::R2 => self.r2,
            Field::R3 => self.r3,
        }
    }

    pub(crate) fn set_field(&mut self, f: Field, v: u8) {
        match f {
            Field::R1 => self.r1 = v,
            Field::R2 => self.r2 = v,
            Field::R3 => self.r3 = v,
        }
    }
}
