//! The ALU instruction words (`ALU_WORD0`, `ALU_WORD1_OP2`, `ALU_WORD1_OP3`), the opcode table
//! and the slot classes of each opcode on each chip.
//!
//! | word | bits |
//! |---|---|
//! | `ALU_WORD0` | `SRC0_SEL` 8:0, `SRC0_REL` 9, `SRC0_CHAN` 11:10, `SRC0_NEG` 12, `SRC1_SEL` 21:13, `SRC1_REL` 22, `SRC1_CHAN` 24:23, `SRC1_NEG` 25, `INDEX_MODE` 28:26, `PRED_SEL` 30:29, `LAST` 31 |
//! | `ALU_WORD1_OP2` | `SRC0_ABS` 0, `SRC1_ABS` 1, `UPDATE_EXEC_MASK` 2, `UPDATE_PRED` 3, `WRITE_MASK` 4, `OMOD` 6:5, `ALU_INST` 17:7, `BANK_SWIZZLE` 20:18, `DST_GPR` 27:21, `DST_REL` 28, `DST_CHAN` 30:29, `CLAMP` 31 |
//! | `ALU_WORD1_OP3` | `SRC2_SEL` 8:0, `SRC2_REL` 9, `SRC2_CHAN` 11:10, `SRC2_NEG` 12, `ALU_INST` 17:13, then as OP2 from bit 18 |
//!
//! (Mesa `sb_bc_fmt_def.inc`, LLVM `R600InstrFormats.td`.) An OP3 opcode is at least 4, so
//! bits 17:15 of an OP3 word are never zero while every OP2 opcode (below 0x100) leaves them
//! zero: that is how a decoder tells the two formats apart. OP3 instructions have no
//! `WRITE_MASK` and always write their destination.
//!
//! On Cayman, when `UPDATE_EXEC_MASK` is set, bits 6:5 are `EXECUTE_MASK_OP` instead of
//! `OMOD` (Mesa's `ALU_WORD1_OP2_EXEC_MASK`, from §4.1 "ALU_BREAK and ALU_CONTINUE are removed
//! and replaced with new EXECUTE_MASK_OP modes"); this crate supports only mode 0
//! (deactivate), so the field must be zero there.

use crate::isa::{Chan, Chip, EncodeError, bit, flag, get, only_on, put, raw_enum, reserved};

raw_enum! {
    /// `PRED_SEL` (`ALU_WORD0` 30:29): predication of one instruction; 1 is reserved.
    PredSel: "PRED_SEL" {
        /// Not predicated.
        Off = 0,
        /// Execute where the predicate is 0.
        Zero = 2,
        /// Execute where the predicate is 1.
        One = 3,
    }
}

raw_enum! {
    /// `OMOD` (`ALU_WORD1_OP2` 6:5): output modifier of float results.
    Omod: "OMOD" {
        /// None.
        Off = 0,
        /// Multiply by 2.
        Mul2 = 1,
        /// Multiply by 4.
        Mul4 = 2,
        /// Divide by 2.
        Div2 = 3,
    }
}

raw_enum! {
    /// An inline constant source (`SRC_SEL` 248-252): fixed 32-bit patterns that cost no
    /// literal slot.
    InlineConst: "SRC_SEL (inline constant)" {
        /// `ALU_SRC_0`: 0 (also 0.0).
        Zero = 248,
        /// `ALU_SRC_1`: 1.0 (0x3F80_0000).
        One = 249,
        /// `ALU_SRC_1_INT`: integer 1.
        OneInt = 250,
        /// `ALU_SRC_M_1_INT`: integer -1 (0xFFFF_FFFF).
        MinusOneInt = 251,
        /// `ALU_SRC_0_5`: 0.5 (0x3F00_0000).
        Half = 252,
    }
}

impl InlineConst {
    /// The 32-bit value the constant supplies.
    pub const fn bits(self) -> u32 {
        match self {
            InlineConst::Zero => 0,
            InlineConst::One => 0x3F80_0000,
            InlineConst::OneInt => 1,
            InlineConst::MinusOneInt => 0xFFFF_FFFF,
            InlineConst::Half => 0x3F00_0000,
        }
    }
    /// The inline constant supplying exactly `bits`, if there is one.
    pub fn from_bits(bits: u32) -> Option<Self> {
        InlineConst::ALL.iter().copied().find(|c| c.bits() == bits)
    }
}

/// `SRC_SEL` classes of the supported subset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Sel {
    /// GPR 0-127.
    Gpr(u8),
    /// Kcache constant: set 0 (`SRC_SEL` 128-159) or 1 (160-191), constant 0-31 of the set.
    Kcache {
        /// Kcache set, 0 or 1 (sets 2-3 need `ALU_EXTENDED`, not supported).
        set: u8,
        /// Constant within the set's locked lines, 0-31.
        index: u8,
    },
    /// An inline constant.
    Inline(InlineConst),
    /// `ALU_SRC_LITERAL` (253): the literal dword selected by the source's `CHAN`.
    Literal,
    /// `ALU_SRC_PV` (254): the previous group's vector result in the source's channel.
    Pv,
    /// `ALU_SRC_PS` (255): the previous group's t-slot result.
    Ps,
}

impl Sel {
    /// The 9-bit `SRC_SEL` value.
    pub fn raw(self) -> Result<u32, EncodeError> {
        Ok(match self {
            Sel::Gpr(g) => put("SRC_SEL (GPR)", g.into(), 0, 7)?,
            Sel::Kcache { set, index } => {
                128 + put("kcache set", set.into(), 5, 1)?
                    + put("kcache index", index.into(), 0, 5)?
            }
            Sel::Inline(c) => c.raw(),
            Sel::Literal => 253,
            Sel::Pv => 254,
            Sel::Ps => 255,
        })
    }
    /// Decodes a 9-bit `SRC_SEL`; selectors outside the subset (192-247: LDS queues, time
    /// counters…; 256-511: kcache sets 2-3 of `ALU_EXTENDED`) are `Reserved`.
    pub fn from_raw(raw: u32) -> Result<Self, EncodeError> {
        Ok(match raw {
            0..=127 => Sel::Gpr(raw as u8),
            128..=191 => Sel::Kcache { set: ((raw - 128) >> 5) as u8, index: (raw & 31) as u8 },
            248..=252 => Sel::Inline(InlineConst::from_raw(raw)?),
            253 => Sel::Literal,
            254 => Sel::Pv,
            255 => Sel::Ps,
            _ => return Err(EncodeError::Reserved { field: "SRC_SEL", value: raw }),
        })
    }
}

/// One source field of an ALU word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct AluSrc {
    /// `SRCn_SEL`.
    pub sel: Sel,
    /// `SRCn_REL`.
    pub rel: bool,
    /// `SRCn_CHAN` (for a literal: which literal dword, X..W).
    pub chan: Chan,
    /// `SRCn_NEG`.
    pub neg: bool,
}

impl AluSrc {
    /// GPR 0, channel x: what unused source fields hold.
    pub const UNUSED: AluSrc = AluSrc { sel: Sel::Gpr(0), rel: false, chan: Chan::X, neg: false };

    fn encode(&self) -> Result<u32, EncodeError> {
        Ok(self.sel.raw()? | flag(self.rel, 9) | self.chan.raw() << 10 | flag(self.neg, 12))
    }
    fn decode(bits: u32) -> Result<Self, EncodeError> {
        Ok(AluSrc {
            sel: Sel::from_raw(get(bits, 0, 9))?,
            rel: bit(bits, 9),
            chan: Chan::from_index(get(bits, 10, 2) as usize),
            neg: bit(bits, 12),
        })
    }
}

impl Default for AluSrc {
    fn default() -> Self {
        AluSrc::UNUSED
    }
}

/// How an opcode is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum OpEncoding {
    /// `ALU_WORD1_OP2`, 11-bit `ALU_INST`.
    Op2(u16),
    /// `ALU_WORD1_OP3`, 5-bit `ALU_INST`.
    Op3(u8),
}

/// Where an opcode may run on Evergreen (Mesa `r600_isa.h` slot flags, EG column).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum EgUnit {
    /// A vector slot x/y/z/w or t (`AF_VS`).
    Any,
    /// A vector slot only (`AF_V`).
    Vector,
    /// The t slot only (`AF_S`; A5 "EG T-slot only").
    Trans,
}

/// How an opcode runs on Cayman (amd-evergreen-cayman §4.2, Mesa `r600_isa.h` CM column).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum CmUnit {
    /// Any one slot (the slot of its destination channel).
    Vector,
    /// §4.2 "become vector ops, with all four slots expecting the arguments on sources a and
    /// b. Result is broadcast to all channels": issued in x, y, z and w with the same
    /// sources (MULLO/MULHI).
    Replicated,
    /// §4.2 "become vector ops in the z, y, and x slots … if the result is required to be in
    /// the w slot, the opcode may be issued in the w slot as well": issued in x, y, z (and w
    /// when the destination channel is w) with the same source (RECIP).
    Xyz,
}

macro_rules! alu_ops {
    ($($(#[$m:meta])* $v:ident = $mn:literal, $enc:ident($code:literal), $n:literal, $eg:ident, $cm:ident;)+) => {
        /// The ALU opcodes of the supported subset (evergreen-compute A5; Mesa `r600_isa.c`
        /// EG/CM columns, which LLVM agrees with).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[cfg_attr(feature = "defmt", derive(defmt::Format))]
        pub enum AluOp { $($(#[$m])* $v),+ }

        impl AluOp {
            /// Every opcode.
            pub const ALL: &'static [AluOp] = &[$(AluOp::$v),+];
            /// The mnemonic of the text syntax.
            pub const fn mnemonic(self) -> &'static str {
                match self { $(AluOp::$v => $mn),+ }
            }
            /// The `ALU_INST` encoding.
            pub const fn encoding(self) -> OpEncoding {
                match self { $(AluOp::$v => OpEncoding::$enc($code)),+ }
            }
            /// Number of source operands.
            pub const fn src_count(self) -> usize {
                match self { $(AluOp::$v => $n),+ }
            }
            /// Slot class on Evergreen.
            pub const fn evergreen_unit(self) -> EgUnit {
                match self { $(AluOp::$v => EgUnit::$eg),+ }
            }
            /// Slot class on Cayman.
            pub const fn cayman_unit(self) -> CmUnit {
                match self { $(AluOp::$v => CmUnit::$cm),+ }
            }
        }
    };
}

alu_ops! {
    /// `a + b` (float).
    Add = "add", Op2(0x00), 2, Any, Vector;
    /// `a * b` (float, DX9 rules: 0 * anything = 0).
    Mul = "mul", Op2(0x01), 2, Any, Vector;
    /// `a * b` (IEEE float).
    MulIeee = "mul_ieee", Op2(0x02), 2, Any, Vector;
    /// Float maximum.
    Max = "max", Op2(0x03), 2, Any, Vector;
    /// Float minimum.
    Min = "min", Op2(0x04), 2, Any, Vector;
    /// `a == b ? 1.0 : 0.0`.
    Sete = "sete", Op2(0x08), 2, Any, Vector;
    /// `a > b ? 1.0 : 0.0`.
    Setgt = "setgt", Op2(0x09), 2, Any, Vector;
    /// `a >= b ? 1.0 : 0.0`.
    Setge = "setge", Op2(0x0A), 2, Any, Vector;
    /// `a != b ? 1.0 : 0.0`.
    Setne = "setne", Op2(0x0B), 2, Any, Vector;
    /// `a - floor(a)`.
    Fract = "fract", Op2(0x10), 1, Any, Vector;
    /// Round toward zero.
    Trunc = "trunc", Op2(0x11), 1, Any, Vector;
    /// Round toward -infinity.
    Floor = "floor", Op2(0x14), 1, Any, Vector;
    /// Arithmetic shift right.
    AshrInt = "ashr_int", Op2(0x15), 2, Any, Vector;
    /// Logical shift right.
    LshrInt = "lshr_int", Op2(0x16), 2, Any, Vector;
    /// Shift left.
    LshlInt = "lshl_int", Op2(0x17), 2, Any, Vector;
    /// Move.
    Mov = "mov", Op2(0x19), 1, Any, Vector;
    /// No operation.
    AluNop = "alu_nop", Op2(0x1A), 0, Any, Vector;
    /// Predicate `a == b` (float).
    PredSete = "pred_sete", Op2(0x20), 2, Any, Vector;
    /// Predicate `a > b` (float).
    PredSetgt = "pred_setgt", Op2(0x21), 2, Any, Vector;
    /// Predicate `a >= b` (float).
    PredSetge = "pred_setge", Op2(0x22), 2, Any, Vector;
    /// Predicate `a != b` (float).
    PredSetne = "pred_setne", Op2(0x23), 2, Any, Vector;
    /// Bitwise and.
    AndInt = "and_int", Op2(0x30), 2, Any, Vector;
    /// Bitwise or.
    OrInt = "or_int", Op2(0x31), 2, Any, Vector;
    /// Bitwise xor.
    XorInt = "xor_int", Op2(0x32), 2, Any, Vector;
    /// Bitwise not.
    NotInt = "not_int", Op2(0x33), 1, Any, Vector;
    /// `a + b` (32-bit wrapping).
    AddInt = "add_int", Op2(0x34), 2, Any, Vector;
    /// `a - b` (32-bit wrapping).
    SubInt = "sub_int", Op2(0x35), 2, Any, Vector;
    /// Signed maximum.
    MaxInt = "max_int", Op2(0x36), 2, Any, Vector;
    /// Signed minimum.
    MinInt = "min_int", Op2(0x37), 2, Any, Vector;
    /// Unsigned maximum.
    MaxUint = "max_uint", Op2(0x38), 2, Any, Vector;
    /// Unsigned minimum.
    MinUint = "min_uint", Op2(0x39), 2, Any, Vector;
    /// `a == b ? ~0 : 0`.
    SeteInt = "sete_int", Op2(0x3A), 2, Any, Vector;
    /// `a > b ? ~0 : 0` (signed).
    SetgtInt = "setgt_int", Op2(0x3B), 2, Any, Vector;
    /// `a >= b ? ~0 : 0` (signed).
    SetgeInt = "setge_int", Op2(0x3C), 2, Any, Vector;
    /// `a != b ? ~0 : 0`.
    SetneInt = "setne_int", Op2(0x3D), 2, Any, Vector;
    /// `a > b ? ~0 : 0` (unsigned).
    SetgtUint = "setgt_uint", Op2(0x3E), 2, Any, Vector;
    /// `a >= b ? ~0 : 0` (unsigned).
    SetgeUint = "setge_uint", Op2(0x3F), 2, Any, Vector;
    /// Predicate `a == b` (integer).
    PredSeteInt = "pred_sete_int", Op2(0x42), 2, Any, Vector;
    /// Predicate `a > b` (signed).
    PredSetgtInt = "pred_setgt_int", Op2(0x43), 2, Any, Vector;
    /// Predicate `a >= b` (signed).
    PredSetgeInt = "pred_setge_int", Op2(0x44), 2, Any, Vector;
    /// Predicate `a != b` (integer).
    PredSetneInt = "pred_setne_int", Op2(0x45), 2, Any, Vector;
    /// Float to signed integer (Evergreen: vector slots only).
    FltToInt = "flt_to_int", Op2(0x50), 1, Vector, Vector;
    /// `1 / a` (IEEE).
    RecipIeee = "recip_ieee", Op2(0x86), 1, Trans, Xyz;
    /// Low 32 bits of the signed product.
    MulloInt = "mullo_int", Op2(0x8F), 2, Trans, Replicated;
    /// High 32 bits of the signed product.
    MulhiInt = "mulhi_int", Op2(0x90), 2, Trans, Replicated;
    /// Low 32 bits of the unsigned product.
    MulloUint = "mullo_uint", Op2(0x91), 2, Trans, Replicated;
    /// High 32 bits of the unsigned product.
    MulhiUint = "mulhi_uint", Op2(0x92), 2, Trans, Replicated;
    /// Float to unsigned integer.
    FltToUint = "flt_to_uint", Op2(0x9A), 1, Trans, Vector;
    /// Signed integer to float.
    IntToFlt = "int_to_flt", Op2(0x9B), 1, Trans, Vector;
    /// Unsigned integer to float.
    UintToFlt = "uint_to_flt", Op2(0x9C), 1, Trans, Vector;
    /// Product of the low 24 bits (unsigned).
    MulUint24 = "mul_uint24", Op2(0xB5), 2, Vector, Vector;
    /// Bit-field extract: `(a >> b) & ((1 << c) - 1)`.
    BfeUint = "bfe_uint", Op3(0x04), 3, Vector, Vector;
    /// Bit-field insert: `(a & b) | (~a & c)`.
    BfiInt = "bfi_int", Op3(0x06), 3, Vector, Vector;
    /// `a * b + c` on the low 24 bits of a and b (unsigned).
    MuladdUint24 = "muladd_uint24", Op3(0x10), 3, Vector, Vector;
    /// `a * b + c` (float).
    Muladd = "muladd", Op3(0x14), 3, Any, Vector;
    /// `a * b + c` (IEEE float).
    MuladdIeee = "muladd_ieee", Op3(0x18), 3, Any, Vector;
    /// `a == 0.0 ? b : c`.
    Cnde = "cnde", Op3(0x19), 3, Any, Vector;
    /// `a > 0.0 ? b : c`.
    Cndgt = "cndgt", Op3(0x1A), 3, Any, Vector;
    /// `a >= 0.0 ? b : c`.
    Cndge = "cndge", Op3(0x1B), 3, Any, Vector;
    /// `a == 0 ? b : c` (integer).
    CndeInt = "cnde_int", Op3(0x1C), 3, Any, Vector;
    /// `a > 0 ? b : c` (signed).
    CndgtInt = "cndgt_int", Op3(0x1D), 3, Any, Vector;
    /// `a >= 0 ? b : c` (signed).
    CndgeInt = "cndge_int", Op3(0x1E), 3, Any, Vector;
}

impl AluOp {
    /// Looks up a mnemonic (ASCII case-insensitive).
    pub fn from_mnemonic(s: &str) -> Option<Self> {
        AluOp::ALL.iter().copied().find(|op| op.mnemonic().eq_ignore_ascii_case(s))
    }
    /// The opcode with this encoding, if it is in the subset.
    pub fn from_encoding(e: OpEncoding) -> Option<Self> {
        AluOp::ALL.iter().copied().find(|op| op.encoding() == e)
    }
    /// Whether the opcode uses the OP3 format.
    pub const fn is_op3(self) -> bool {
        matches!(self.encoding(), OpEncoding::Op3(_))
    }
    /// The `PRED_SET*` family: the only opcodes that may update the execute mask or the
    /// predicate, and at most one of them per group (Mesa `is_alu_once_inst`).
    pub const fn is_pred_set(self) -> bool {
        matches!(
            self,
            AluOp::PredSete
                | AluOp::PredSetgt
                | AluOp::PredSetge
                | AluOp::PredSetne
                | AluOp::PredSeteInt
                | AluOp::PredSetgtInt
                | AluOp::PredSetgeInt
                | AluOp::PredSetneInt
        )
    }
}

/// One ALU instruction: `ALU_WORD0` + `ALU_WORD1_OP2` or `ALU_WORD1_OP3` (the format follows
/// from [`AluOp::encoding`]).
///
/// Fields an OP3 word lacks must keep their neutral values (`abs` false, no exec/pred
/// update, `omod` off, `write_mask` true since OP3 always writes); an OP2 word has no `src[2]`,
/// which must be [`AluSrc::UNUSED`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct AluWord {
    /// Sources 0, 1 and (OP3) 2.
    pub src: [AluSrc; 3],
    /// `SRC0_ABS`, `SRC1_ABS` (OP2 only).
    pub abs: [bool; 2],
    /// `INDEX_MODE` (3 bits).
    pub index_mode: u8,
    /// `PRED_SEL`.
    pub pred_sel: PredSel,
    /// `LAST`: the last instruction of its group.
    pub last: bool,
    /// `ALU_INST`.
    pub op: AluOp,
    /// `UPDATE_EXEC_MASK` (OP2).
    pub update_exec_mask: bool,
    /// `UPDATE_PRED` (OP2).
    pub update_pred: bool,
    /// `WRITE_MASK` (OP2; OP3 always writes).
    pub write_mask: bool,
    /// `OMOD` (OP2).
    pub omod: Omod,
    /// `BANK_SWIZZLE` (3 bits; 0-5 `ALU_VEC_012`..`ALU_VEC_210` in x-w, 0-3 `ALU_SCL_210`..
    /// `ALU_SCL_221` in t).
    pub bank_swizzle: u8,
    /// `DST_GPR` (7 bits).
    pub dst_gpr: u8,
    /// `DST_REL`.
    pub dst_rel: bool,
    /// `DST_CHAN` (on Cayman and for Evergreen vector slots: the slot).
    pub dst_chan: Chan,
    /// `CLAMP`.
    pub clamp: bool,
}

impl AluWord {
    /// An instruction writing `dst_gpr.dst_chan` with every other field neutral.
    pub const fn new(op: AluOp, dst_gpr: u8, dst_chan: Chan) -> Self {
        Self {
            src: [AluSrc::UNUSED; 3],
            abs: [false; 2],
            index_mode: 0,
            pred_sel: PredSel::Off,
            last: false,
            op,
            update_exec_mask: false,
            update_pred: false,
            write_mask: true,
            omod: Omod::Off,
            bank_swizzle: 0,
            dst_gpr,
            dst_rel: false,
            dst_chan,
            clamp: false,
        }
    }

    /// Encodes both words for `chip`.
    pub fn encode(&self, chip: Chip) -> Result<[u32; 2], EncodeError> {
        let w0 = self.src[0].encode()?
            | self.src[1].encode()? << 13
            | put("INDEX_MODE", self.index_mode.into(), 26, 3)?
            | self.pred_sel.raw() << 29
            | flag(self.last, 31);
        if self.bank_swizzle > 5 {
            return Err(EncodeError::OutOfRange {
                field: "BANK_SWIZZLE",
                value: self.bank_swizzle.into(),
                max: 5,
            });
        }
        let tail = self.bank_swizzle as u32
            | put("DST_GPR", self.dst_gpr.into(), 3, 7)?
            | flag(self.dst_rel, 10)
            | self.dst_chan.raw() << 11
            | flag(self.clamp, 13);
        let w1 = match self.op.encoding() {
            OpEncoding::Op2(code) => {
                if self.src[2] != AluSrc::UNUSED {
                    return Err(EncodeError::Invalid("OP2 instructions have no third source"));
                }
                only_on(
                    chip,
                    Chip::Evergreen,
                    "OMOD with UPDATE_EXEC_MASK (Cayman: EXECUTE_MASK_OP other than 0)",
                    self.update_exec_mask && self.omod != Omod::Off,
                )?;
                flag(self.abs[0], 0)
                    | flag(self.abs[1], 1)
                    | flag(self.update_exec_mask, 2)
                    | flag(self.update_pred, 3)
                    | flag(self.write_mask, 4)
                    | self.omod.raw() << 5
                    | u32::from(code) << 7
                    | tail << 18
            }
            OpEncoding::Op3(code) => {
                if self.abs != [false; 2] {
                    return Err(EncodeError::Invalid("OP3 instructions have no ABS bits"));
                }
                if self.update_exec_mask || self.update_pred || self.omod != Omod::Off {
                    return Err(EncodeError::Invalid(
                        "OP3 instructions have no UPDATE_EXEC_MASK/UPDATE_PRED/OMOD",
                    ));
                }
                if !self.write_mask {
                    return Err(EncodeError::Invalid(
                        "OP3 instructions have no WRITE_MASK and always write",
                    ));
                }
                self.src[2].encode()? | u32::from(code) << 13 | tail << 18
            }
        };
        Ok([w0, w1])
    }

    /// Decodes both words for `chip`.
    pub fn decode(w: [u32; 2], chip: Chip) -> Result<Self, EncodeError> {
        let op3 = get(w[1], 15, 3) != 0;
        let enc = if op3 {
            OpEncoding::Op3(get(w[1], 13, 5) as u8)
        } else {
            OpEncoding::Op2(get(w[1], 7, 11) as u16)
        };
        let op = AluOp::from_encoding(enc).ok_or(EncodeError::Reserved {
            field: "ALU_INST",
            value: if op3 { get(w[1], 13, 5) } else { get(w[1], 7, 11) },
        })?;
        let mut word = AluWord {
            src: [AluSrc::decode(w[0])?, AluSrc::decode(w[0] >> 13)?, AluSrc::UNUSED],
            abs: [false; 2],
            index_mode: get(w[0], 26, 3) as u8,
            pred_sel: PredSel::from_raw(get(w[0], 29, 2))?,
            last: bit(w[0], 31),
            op,
            update_exec_mask: false,
            update_pred: false,
            write_mask: true,
            omod: Omod::Off,
            bank_swizzle: get(w[1], 18, 3) as u8,
            dst_gpr: get(w[1], 21, 7) as u8,
            dst_rel: bit(w[1], 28),
            dst_chan: Chan::from_index(get(w[1], 29, 2) as usize),
            clamp: bit(w[1], 31),
        };
        if word.bank_swizzle > 5 {
            return Err(EncodeError::Reserved {
                field: "BANK_SWIZZLE",
                value: word.bank_swizzle.into(),
            });
        }
        if op3 {
            word.src[2] = AluSrc::decode(w[1])?;
        } else {
            word.abs = [bit(w[1], 0), bit(w[1], 1)];
            word.update_exec_mask = bit(w[1], 2);
            word.update_pred = bit(w[1], 3);
            word.write_mask = bit(w[1], 4);
            word.omod = Omod::from_raw(get(w[1], 5, 2))?;
            if chip == Chip::Cayman && word.update_exec_mask {
                reserved("EXECUTE_MASK_OP (Cayman, only 0 supported)", w[1], 5, 2)?;
            }
        }
        Ok(word)
    }
}
