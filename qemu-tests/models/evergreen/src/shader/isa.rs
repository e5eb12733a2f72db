//! Bit fields and opcode numbers of the shader ISA subset, the model's own table (never shared
//! with an assembler, so a misread bit on either side shows up as a test failure).
//!
//! Layouts: CF, ALU and VTX words as listed by Mesa `sb_bc_fmt_def.inc` / `eg_asm.c` and LLVM
//! `R600InstrFormats.td`; opcode numbers from Mesa `r600_isa.c` (Evergreen and Cayman columns),
//! which LLVM agrees with. Slot classes: Mesa `r600_isa.c` flags per chip, amd-evergreen-cayman
//! §4.2 for Cayman.

/// Bits `lo .. lo + width` of `word` (`width` < 32).
pub(crate) const fn field(word: u32, lo: u32, width: u32) -> u32 {
    (word >> lo) & ((1 << width) - 1)
}

/// Bit `bit` of `word`.
pub(crate) const fn flag(word: u32, bit: u32) -> bool {
    (word >> bit) & 1 != 0
}

/// CF_INST values of the CF_WORD1 / export formats (8 bits, CF_WORD1 29:22).
pub mod cf_inst {
    /// No operation (carries END_OF_PROGRAM after ALU clauses on Evergreen).
    pub const NOP: u32 = 0x00;
    /// Texture-cache fetch clause (vertex fetches on both chips).
    pub const TC: u32 = 0x01;
    /// Vertex-cache fetch clause (Evergreen only; Cayman fetches through TC, §4.1).
    pub const VC: u32 = 0x02;
    /// Loop with the aL index register (not modelled: needs relative addressing).
    pub const LOOP_START: u32 = 0x04;
    /// End of a loop.
    pub const LOOP_END: u32 = 0x05;
    /// DirectX 10 loop: no trip count (runs until every thread breaks).
    pub const LOOP_START_DX10: u32 = 0x06;
    /// Loop counted by the loop constant, without aL.
    pub const LOOP_START_NO_AL: u32 = 0x07;
    /// Continue the innermost loop.
    pub const LOOP_CONTINUE: u32 = 0x08;
    /// Break out of the innermost loop.
    pub const LOOP_BREAK: u32 = 0x09;
    /// Jump if no thread passes the condition.
    pub const JUMP: u32 = 0x0A;
    /// Push the active mask.
    pub const PUSH: u32 = 0x0B;
    /// Invert the active mask against the stack top.
    pub const ELSE: u32 = 0x0D;
    /// Pop the stack.
    pub const POP: u32 = 0x0E;
    /// Subroutine call (not modelled).
    pub const CALL: u32 = 0x12;
    /// Fetch-shader call (not modelled).
    pub const CALL_FS: u32 = 0x13;
    /// Subroutine return (not modelled).
    pub const RETURN: u32 = 0x14;
    /// Wait for outstanding write acknowledgements.
    pub const WAIT_ACK: u32 = 0x1A;
    /// End of program (Cayman only; replaces END_OF_PROGRAM, §4.1).
    pub const CF_END: u32 = 0x20;
    /// Pixel/position/parameter export (not in a compute shader).
    pub const EXPORT: u32 = 0x53;
    /// Last export (not in a compute shader).
    pub const EXPORT_DONE: u32 = 0x54;
    /// RAT export through the CB cache (§8.6 EXPORT_RAT).
    pub const MEM_RAT: u32 = 0x56;
    /// RAT export bypassing the cache (§8.6 EXPORT_RAT_CACHELESS; Mesa MEM_RAT_NOCACHE).
    pub const MEM_RAT_CACHELESS: u32 = 0x57;
}

/// CF_INST values of CF_ALU_WORD1 (4 bits, 29:26; always >= 8, so bit 29 tells the formats
/// apart: every CF_WORD1 / export CF_INST is below 0x80).
pub mod alu_cf_inst {
    /// Plain ALU clause.
    pub const ALU: u32 = 8;
    /// Push the active mask, then run the clause.
    pub const PUSH_BEFORE: u32 = 9;
    /// Run the clause, then pop once.
    pub const POP_AFTER: u32 = 10;
    /// Run the clause, then pop twice.
    pub const POP2_AFTER: u32 = 11;
    /// Extended kcache (sets 2-3 through an extra word pair; not modelled).
    pub const EXTENDED: u32 = 12;
    /// Evergreen ALU_CONTINUE (removed on Cayman, §4.1; not modelled).
    pub const CONTINUE: u32 = 13;
    /// Evergreen ALU_BREAK; on Cayman the same value is ALU_VALID_PIXEL_MODE (§4.1).
    pub const BREAK_OR_VALID_PIXEL_MODE: u32 = 14;
    /// Run the clause, then ELSE.
    pub const ELSE_AFTER: u32 = 15;
}

/// RAT_INST values of the RAT export WORD0 (9:4).
pub mod rat_inst {
    /// Typed store (not modelled).
    pub const STORE_TYPED: u32 = 1;
    /// Raw dword store: Evergreen (LLVM `RAT_WRITE_CACHELESS_*_eg`).
    pub const STORE_RAW: u32 = 2;
    /// Atomic add.
    pub const ADD: u32 = 7;
    /// Dword store: Cayman (LLVM `RAT_STORE_DWORD*`, CaymanInstructions.td; terakan).
    pub const STORE_DWORD: u32 = 20;
}

/// SRC_SEL values that are not GPRs (Mesa `r600_sq.h` / `evergreend.h` V_SQ_ALU_SRC_*).
pub mod src_sel {
    /// Last GPR.
    pub const GPR_LAST: u32 = 127;
    /// First constant of kcache set 0.
    pub const KCACHE0: u32 = 128;
    /// First constant of kcache set 1.
    pub const KCACHE1: u32 = 160;
    /// One past the last constant of kcache set 1.
    pub const KCACHE_END: u32 = 192;
    /// Inline 0.0.
    pub const ZERO: u32 = 248;
    /// Inline 1.0.
    pub const ONE: u32 = 249;
    /// Inline integer 1.
    pub const ONE_INT: u32 = 250;
    /// Inline integer -1.
    pub const M_ONE_INT: u32 = 251;
    /// Inline 0.5.
    pub const HALF: u32 = 252;
    /// Literal constant; SRC_CHAN selects the literal dword.
    pub const LITERAL: u32 = 253;
    /// Previous vector result.
    pub const PV: u32 = 254;
    /// Previous scalar (trans) result.
    pub const PS: u32 = 255;
}

/// Vertex fetch DATA_FORMAT values the model supports (Mesa `evergreend.h` FMT_*).
pub mod fetch_format {
    /// One 32-bit integer component.
    pub const FMT_32: u32 = 0x0D;
    /// One 32-bit float component.
    pub const FMT_32_FLOAT: u32 = 0x0E;
    /// Two 32-bit integer components.
    pub const FMT_32_32: u32 = 0x1D;
    /// Two 32-bit float components.
    pub const FMT_32_32_FLOAT: u32 = 0x1E;
    /// Four 32-bit integer components.
    pub const FMT_32_32_32_32: u32 = 0x22;
    /// Four 32-bit float components.
    pub const FMT_32_32_32_32_FLOAT: u32 = 0x23;
}

/// The chip generation whose encodings and slot rules apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Chip {
    /// Evergreen (Cypress, HD 5870): five slots x, y, z, w, t.
    Evergreen,
    /// Northern Islands Cayman (HD 6970): four slots x, y, z, w (§4).
    Cayman,
}

/// Where an operation may issue on Evergreen (Mesa `r600_isa.c` AF_V / AF_S / AF_VS).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EgSlots {
    /// Any of x, y, z, w, t.
    Any,
    /// x, y, z, w only.
    Vector,
    /// t only (the "ALU.Trans" operations of §4.2).
    Trans,
}

/// Where an operation issues on Cayman (§4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmSlots {
    /// Any vector slot, independently.
    Vector,
    /// All four slots with the same sources, result broadcast (MULLO/MULHI_INT/UINT).
    AllFour,
    /// Slots x, y and z with the same sources; w optionally as well (RECIP_IEEE and the other
    /// former transcendental ops).
    XyzPlusOptionalW,
}

/// How an operation reads and writes its operands: decides which modifiers apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Float sources (NEG/ABS allowed), float result (CLAMP/OMOD allowed).
    FloatToFloat,
    /// Float sources, integer result (FLT_TO_INT, SET*_DX10).
    FloatToInt,
    /// Integer sources, float result (INT_TO_FLT).
    IntToFloat,
    /// Integer sources and result: no modifiers.
    Int,
}

/// The ALU operations of the subset (amd-evergreen-cayman §4.2; numbers from Mesa r600_isa.c).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)] // The names are the ISA's mnemonics.
pub enum AluOp {
    Add,
    Mul,
    MulIeee,
    Max,
    Min,
    MaxDx10,
    MinDx10,
    SetE,
    SetGt,
    SetGe,
    SetNe,
    SetEDx10,
    SetGtDx10,
    SetGeDx10,
    SetNeDx10,
    Fract,
    Trunc,
    Ceil,
    Rndne,
    Floor,
    AshrInt,
    LshrInt,
    LshlInt,
    Mov,
    Nop,
    PredSetGtUint,
    PredSetGeUint,
    PredSetE,
    PredSetGt,
    PredSetGe,
    PredSetNe,
    AndInt,
    OrInt,
    XorInt,
    NotInt,
    AddInt,
    SubInt,
    MaxInt,
    MinInt,
    MaxUint,
    MinUint,
    SetEInt,
    SetGtInt,
    SetGeInt,
    SetNeInt,
    SetGtUint,
    SetGeUint,
    PredSetEInt,
    PredSetGtInt,
    PredSetGeInt,
    PredSetNeInt,
    FltToInt,
    RecipIeee,
    MulloInt,
    MulhiInt,
    MulloUint,
    MulhiUint,
    FltToUint,
    IntToFlt,
    UintToFlt,
    MulUint24,
    BfeUint,
    BfeInt,
    BfiInt,
    MuladdUint24,
    Muladd,
    MuladdIeee,
    Cnde,
    Cndgt,
    Cndge,
    CndeInt,
    CndgtInt,
    CndgeInt,
}

/// Static facts of one operation.
#[derive(Debug, Clone, Copy)]
pub struct OpInfo {
    /// The operation.
    pub op: AluOp,
    /// ISA mnemonic.
    pub name: &'static str,
    /// Three-source (ALU_WORD1_OP3) encoding.
    pub op3: bool,
    /// ALU_INST value (11 bits OP2, 5 bits OP3).
    pub code: u32,
    /// Sources read.
    pub srcs: usize,
    /// Evergreen slot class.
    pub eg: EgSlots,
    /// Cayman slot class.
    pub cm: CmSlots,
    /// Operand kinds.
    pub kind: Kind,
}

const fn op2(
    op: AluOp,
    name: &'static str,
    code: u32,
    srcs: usize,
    eg: EgSlots,
    cm: CmSlots,
    kind: Kind,
) -> OpInfo {
    OpInfo { op, name, op3: false, code, srcs, eg, cm, kind }
}

const fn op3(op: AluOp, name: &'static str, code: u32, eg: EgSlots, kind: Kind) -> OpInfo {
    OpInfo { op, name, op3: true, code, srcs: 3, eg, cm: CmSlots::Vector, kind }
}

use CmSlots::{AllFour, Vector as CmVec, XyzPlusOptionalW};
use EgSlots::{Any, Trans, Vector};
use Kind::{FloatToFloat as FF, FloatToInt as FI, Int as II, IntToFloat as IF};

/// Every operation the model executes. Opcode numbers: Mesa `r600_isa.c` (Evergreen/Cayman
/// columns; LLVM agrees); the ones beyond the core compute list (MIN/MAX_DX10, SET*_DX10,
/// FRACT..RNDNE, MIN/MAX_INT/UINT, the other PRED_SET*/CND*, BFE_INT) from the same table.
pub static OPS: &[OpInfo] = &[
    op2(AluOp::Add, "ADD", 0x00, 2, Any, CmVec, FF),
    op2(AluOp::Mul, "MUL", 0x01, 2, Any, CmVec, FF),
    op2(AluOp::MulIeee, "MUL_IEEE", 0x02, 2, Any, CmVec, FF),
    op2(AluOp::Max, "MAX", 0x03, 2, Any, CmVec, FF),
    op2(AluOp::Min, "MIN", 0x04, 2, Any, CmVec, FF),
    op2(AluOp::MaxDx10, "MAX_DX10", 0x05, 2, Any, CmVec, FF),
    op2(AluOp::MinDx10, "MIN_DX10", 0x06, 2, Any, CmVec, FF),
    op2(AluOp::SetE, "SETE", 0x08, 2, Any, CmVec, FF),
    op2(AluOp::SetGt, "SETGT", 0x09, 2, Any, CmVec, FF),
    op2(AluOp::SetGe, "SETGE", 0x0A, 2, Any, CmVec, FF),
    op2(AluOp::SetNe, "SETNE", 0x0B, 2, Any, CmVec, FF),
    op2(AluOp::SetEDx10, "SETE_DX10", 0x0C, 2, Any, CmVec, FI),
    op2(AluOp::SetGtDx10, "SETGT_DX10", 0x0D, 2, Any, CmVec, FI),
    op2(AluOp::SetGeDx10, "SETGE_DX10", 0x0E, 2, Any, CmVec, FI),
    op2(AluOp::SetNeDx10, "SETNE_DX10", 0x0F, 2, Any, CmVec, FI),
    op2(AluOp::Fract, "FRACT", 0x10, 1, Any, CmVec, FF),
    op2(AluOp::Trunc, "TRUNC", 0x11, 1, Any, CmVec, FF),
    op2(AluOp::Ceil, "CEIL", 0x12, 1, Any, CmVec, FF),
    op2(AluOp::Rndne, "RNDNE", 0x13, 1, Any, CmVec, FF),
    op2(AluOp::Floor, "FLOOR", 0x14, 1, Any, CmVec, FF),
    op2(AluOp::AshrInt, "ASHR_INT", 0x15, 2, Any, CmVec, II),
    op2(AluOp::LshrInt, "LSHR_INT", 0x16, 2, Any, CmVec, II),
    op2(AluOp::LshlInt, "LSHL_INT", 0x17, 2, Any, CmVec, II),
    op2(AluOp::Mov, "MOV", 0x19, 1, Any, CmVec, FF),
    op2(AluOp::Nop, "NOP", 0x1A, 0, Any, CmVec, II),
    op2(AluOp::PredSetGtUint, "PRED_SETGT_UINT", 0x1E, 2, Any, CmVec, II),
    op2(AluOp::PredSetGeUint, "PRED_SETGE_UINT", 0x1F, 2, Any, CmVec, II),
    op2(AluOp::PredSetE, "PRED_SETE", 0x20, 2, Any, CmVec, FF),
    op2(AluOp::PredSetGt, "PRED_SETGT", 0x21, 2, Any, CmVec, FF),
    op2(AluOp::PredSetGe, "PRED_SETGE", 0x22, 2, Any, CmVec, FF),
    op2(AluOp::PredSetNe, "PRED_SETNE", 0x23, 2, Any, CmVec, FF),
    op2(AluOp::AndInt, "AND_INT", 0x30, 2, Any, CmVec, II),
    op2(AluOp::OrInt, "OR_INT", 0x31, 2, Any, CmVec, II),
    op2(AluOp::XorInt, "XOR_INT", 0x32, 2, Any, CmVec, II),
    op2(AluOp::NotInt, "NOT_INT", 0x33, 1, Any, CmVec, II),
    op2(AluOp::AddInt, "ADD_INT", 0x34, 2, Any, CmVec, II),
    op2(AluOp::SubInt, "SUB_INT", 0x35, 2, Any, CmVec, II),
    op2(AluOp::MaxInt, "MAX_INT", 0x36, 2, Any, CmVec, II),
    op2(AluOp::MinInt, "MIN_INT", 0x37, 2, Any, CmVec, II),
    op2(AluOp::MaxUint, "MAX_UINT", 0x38, 2, Any, CmVec, II),
    op2(AluOp::MinUint, "MIN_UINT", 0x39, 2, Any, CmVec, II),
    op2(AluOp::SetEInt, "SETE_INT", 0x3A, 2, Any, CmVec, II),
    op2(AluOp::SetGtInt, "SETGT_INT", 0x3B, 2, Any, CmVec, II),
    op2(AluOp::SetGeInt, "SETGE_INT", 0x3C, 2, Any, CmVec, II),
    op2(AluOp::SetNeInt, "SETNE_INT", 0x3D, 2, Any, CmVec, II),
    op2(AluOp::SetGtUint, "SETGT_UINT", 0x3E, 2, Any, CmVec, II),
    op2(AluOp::SetGeUint, "SETGE_UINT", 0x3F, 2, Any, CmVec, II),
    op2(AluOp::PredSetEInt, "PRED_SETE_INT", 0x42, 2, Any, CmVec, II),
    op2(AluOp::PredSetGtInt, "PRED_SETGT_INT", 0x43, 2, Any, CmVec, II),
    op2(AluOp::PredSetGeInt, "PRED_SETGE_INT", 0x44, 2, Any, CmVec, II),
    op2(AluOp::PredSetNeInt, "PRED_SETNE_INT", 0x45, 2, Any, CmVec, II),
    op2(AluOp::FltToInt, "FLT_TO_INT", 0x50, 1, Vector, CmVec, FI),
    op2(AluOp::RecipIeee, "RECIP_IEEE", 0x86, 1, Trans, XyzPlusOptionalW, FF),
    op2(AluOp::MulloInt, "MULLO_INT", 0x8F, 2, Trans, AllFour, II),
    op2(AluOp::MulhiInt, "MULHI_INT", 0x90, 2, Trans, AllFour, II),
    op2(AluOp::MulloUint, "MULLO_UINT", 0x91, 2, Trans, AllFour, II),
    op2(AluOp::MulhiUint, "MULHI_UINT", 0x92, 2, Trans, AllFour, II),
    // §4.2: "implemented in all vector slots" on Cayman, t-only on Evergreen.
    op2(AluOp::FltToUint, "FLT_TO_UINT", 0x9A, 1, Trans, CmVec, FI),
    op2(AluOp::IntToFlt, "INT_TO_FLT", 0x9B, 1, Trans, CmVec, IF),
    op2(AluOp::UintToFlt, "UINT_TO_FLT", 0x9C, 1, Trans, CmVec, IF),
    op2(AluOp::MulUint24, "MUL_UINT24", 0xB5, 2, Vector, CmVec, II),
    op3(AluOp::BfeUint, "BFE_UINT", 0x04, Vector, II),
    op3(AluOp::BfeInt, "BFE_INT", 0x05, Vector, II),
    op3(AluOp::BfiInt, "BFI_INT", 0x06, Vector, II),
    op3(AluOp::MuladdUint24, "MULADD_UINT24", 0x10, Vector, II),
    op3(AluOp::Muladd, "MULADD", 0x14, Any, FF),
    op3(AluOp::MuladdIeee, "MULADD_IEEE", 0x18, Any, FF),
    op3(AluOp::Cnde, "CNDE", 0x19, Any, FF),
    op3(AluOp::Cndgt, "CNDGT", 0x1A, Any, FF),
    op3(AluOp::Cndge, "CNDGE", 0x1B, Any, FF),
    op3(AluOp::CndeInt, "CNDE_INT", 0x1C, Any, II),
    op3(AluOp::CndgtInt, "CNDGT_INT", 0x1D, Any, II),
    op3(AluOp::CndgeInt, "CNDGE_INT", 0x1E, Any, II),
];

impl AluOp {
    /// The operation's static facts.
    pub fn info(self) -> &'static OpInfo {
        // Every variant has exactly one row (checked by a unit test).
        OPS.iter().find(|i| i.op == self).unwrap_or(&OPS[0])
    }

    /// Look up an encoding.
    pub fn from_code(op3: bool, code: u32) -> Option<AluOp> {
        OPS.iter().find(|i| i.op3 == op3 && i.code == code).map(|i| i.op)
    }

    /// True for the PRED_SET* family (they produce a predicate).
    pub fn is_pred_set(self) -> bool {
        use AluOp::*;
        matches!(
            self,
            PredSetGtUint
                | PredSetGeUint
                | PredSetE
                | PredSetGt
                | PredSetGe
                | PredSetNe
                | PredSetEInt
                | PredSetGtInt
                | PredSetGeInt
                | PredSetNeInt
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_consistent() {
        for (i, a) in OPS.iter().enumerate() {
            assert!(core::ptr::eq(a.op.info(), a), "{} has one row", a.name);
            for b in &OPS[i + 1..] {
                assert!(
                    !(a.op3 == b.op3 && a.code == b.code),
                    "{} / {} share a code",
                    a.name,
                    b.name
                );
            }
            // OP2 and OP3 words are told apart by ALU_WORD1 17:15 (OP3 ALU_INST 17:13 >= 4).
            if a.op3 {
                assert!((4..32).contains(&a.code), "{}", a.name);
            } else {
                assert!(a.code < 0x100, "{}", a.name);
            }
        }
    }
}
