//! The one error type of the builder and the text assembler.

use core::fmt;

use crate::alu::AluOp;
use crate::isa::EncodeError;
use crate::program::Slot;

/// What went wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum ErrorKind {
    // ---- text syntax ----
    /// Unknown instruction or directive.
    UnknownMnemonic,
    /// Unknown `.modifier` or `key=value` option.
    UnknownOption,
    /// Syntax error: what was expected.
    Expected(&'static str),
    /// A number is malformed or does not fit its field.
    BadNumber,
    /// A `{` group is still open where a `}` was needed (at the `{` or at the statement that
    /// cannot be inside a group).
    UnclosedGroup,
    /// `{` inside a group, or `}` without `{`.
    UnbalancedBrace,
    // ---- labels and capacity ----
    /// A label is defined twice.
    DuplicateLabel,
    /// A label is used but never defined.
    UndefinedLabel,
    /// A label used as a target is defined after the last CF instruction.
    LabelPastEnd,
    /// A fixed capacity (no allocator) is exhausted: which one.
    Capacity(&'static str),
    /// The output buffer holds fewer dwords than the program needs.
    OutputTooSmall {
        /// Dwords the program needs.
        needed: usize,
    },
    // ---- encoding ----
    /// A field does not fit or does not exist on the chip.
    Encode(EncodeError),
    // ---- program structure ----
    /// An ALU group with no ALU clause open (`alu…` must come first).
    AluOutsideClause,
    /// A fetch with no fetch clause open (`tc`, `vc` or `fetch` must come first).
    FetchOutsideClause,
    /// A clause with no instructions (its `COUNT` would be -1).
    EmptyClause,
    /// An ALU clause over 128 slots or a fetch clause over 64 fetches (the `COUNT` fields).
    ClauseTooLong,
    /// An instruction after the end of the program.
    CodeAfterEnd,
    /// The program has no end (`end`, `cf_end` or an `END_OF_PROGRAM` bit).
    MissingEnd,
    /// `loop_end` without `loop_start_dx10`, or a loop left open.
    UnbalancedLoop,
    /// `loop_break` outside a loop.
    BreakOutsideLoop,
    /// More stack pops than pushes along the program.
    StackUnderflow,
    /// `END_OF_PROGRAM` on an instruction that cannot carry it (ALU clauses have no such bit;
    /// A7: after an ALU clause, `LOOP_END` or `POP` a CF `NOP` carries it).
    EopNotAllowed,
    // ---- chip rules ----
    /// A VC clause on Cayman (§4.1: vertex fetches issue through TC).
    VcClauseOnCayman,
    /// `END_OF_PROGRAM` on Cayman (§4.1: replaced with `CF_END`).
    EndOfProgramOnCayman,
    /// `CF_END` on Evergreen (it ends programs with the `END_OF_PROGRAM` bit).
    CfEndOnEvergreen,
    /// The t slot on Cayman (§4.2: removed).
    NoTransSlotOnCayman,
    /// `PS` (the previous t-slot result) on Cayman, which has no t slot.
    PsOnCayman,
    // ---- ALU group rules ----
    /// A group with no instructions.
    EmptyGroup,
    /// The slot is already used in this group (two ops for one vector channel with t taken or
    /// unavailable, or two t ops).
    SlotTaken(Slot),
    /// A t-only opcode placed in a vector slot on Evergreen.
    TransOnlyOp(AluOp),
    /// A vector-only opcode placed in t on Evergreen.
    VectorOnlyOp(AluOp),
    /// A vector slot other than the destination channel (the slot is `DST_CHAN`).
    SlotChannelMismatch,
    /// An opcode that may run in a vector slot placed in t while its channel's vector slot is
    /// free: the hardware would decode it as the vector instruction.
    AmbiguousTransSlot,
    /// An explicit slot on a Cayman opcode that occupies several slots (§4.2 MULLO/MULHI,
    /// RECIP): write it once, without a slot.
    ReplicatedOpSlot(AluOp),
    /// More than one `PRED_SET*` in a group.
    PredSetTwice,
    /// Two instructions of a group write the same GPR channel.
    DuplicateWrite,
    /// More than four distinct literal dwords in a group (A4).
    TooManyLiterals,
    /// An ALU clause needs more than the two kcache sets of `CF_ALU_WORD0/1`
    /// (`ALU_EXTENDED` is not supported).
    TooManyKcacheSets,
    /// A group reads more than two constant-buffer pairs (distinct constant and channel pair
    /// xy/zw): the kcache has two read ports per group (R700 and later, Mesa `reserve_cfile`).
    ConstantReadPorts,
    /// No `BANK_SWIZZLE` assignment lets the group read its GPRs: each cycle reads one GPR
    /// per channel (bank) for the whole group.
    BankSwizzle,
    /// A t-slot instruction with more than two constant operands (kcache, literal, inline).
    TransConstants,
    /// An OP3 opcode with no destination write (OP3 always writes).
    Op3AlwaysWrites,
    /// ABS or OMOD on an OP3 opcode (its word has no such fields).
    Op3Modifier,
    /// `UPDATE_EXEC_MASK`/`UPDATE_PRED` on an opcode other than `PRED_SET*`.
    UpdateOnNonPredSet,
    /// `OMOD` with `UPDATE_EXEC_MASK` on Cayman (those bits are `EXECUTE_MASK_OP` there).
    ExecMaskOmodOnCayman,
    /// A source the instruction cannot use (literal/PV/PS out of place, index out of range).
    BadSource(&'static str),
}

/// An error with its source position: line and column (1-based) for the text assembler, the
/// position last set with [`crate::Builder::at`] for builder programs (0:0 if never set).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Error {
    /// Line.
    pub line: u32,
    /// Column.
    pub col: u32,
    /// What went wrong.
    pub kind: ErrorKind,
}

impl From<EncodeError> for ErrorKind {
    fn from(e: EncodeError) -> Self {
        ErrorKind::Encode(e)
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ErrorKind::*;
        match self {
            UnknownMnemonic => f.write_str("unknown mnemonic"),
            UnknownOption => f.write_str("unknown modifier or option"),
            Expected(what) => write!(f, "expected {what}"),
            BadNumber => f.write_str("malformed or out-of-range number"),
            UnclosedGroup => f.write_str("ALU group `{` not closed with `}`"),
            UnbalancedBrace => f.write_str("`{` inside a group or `}` without `{`"),
            DuplicateLabel => f.write_str("label defined twice"),
            UndefinedLabel => f.write_str("undefined label"),
            LabelPastEnd => f.write_str("jump target after the last CF instruction"),
            Capacity(what) => write!(f, "too many {what}"),
            OutputTooSmall { needed } => {
                write!(f, "output buffer too small ({needed} dwords needed)")
            }
            Encode(_) => f.write_str("the instruction cannot be encoded"),
            AluOutsideClause => f.write_str("ALU instruction outside an ALU clause"),
            FetchOutsideClause => f.write_str("fetch outside a fetch clause"),
            EmptyClause => f.write_str("empty clause"),
            ClauseTooLong => f.write_str("clause too long for its COUNT field"),
            CodeAfterEnd => f.write_str("instruction after the end of the program"),
            MissingEnd => f.write_str("program has no end (`end`)"),
            UnbalancedLoop => f.write_str("unbalanced loop_start_dx10/loop_end"),
            BreakOutsideLoop => f.write_str("loop_break outside a loop"),
            StackUnderflow => f.write_str("more stack pops than pushes"),
            EopNotAllowed => f.write_str("END_OF_PROGRAM not allowed on this instruction"),
            VcClauseOnCayman => f.write_str("Cayman has no VC clause (§4.1: fetch through TC)"),
            EndOfProgramOnCayman => {
                f.write_str("Cayman has no END_OF_PROGRAM bit (§4.1: end with CF_END)")
            }
            CfEndOnEvergreen => f.write_str("Evergreen has no CF_END (use END_OF_PROGRAM)"),
            NoTransSlotOnCayman => f.write_str("Cayman has no t slot (§4.2)"),
            PsOnCayman => f.write_str("Cayman has no t slot, so no PS"),
            EmptyGroup => f.write_str("empty ALU group"),
            SlotTaken(s) => write!(f, "slot {} already used in this group", s.letter()),
            TransOnlyOp(op) => write!(f, "{} runs only in the t slot on Evergreen", op.mnemonic()),
            VectorOnlyOp(op) => write!(f, "{} cannot run in the t slot", op.mnemonic()),
            SlotChannelMismatch => f.write_str("a vector slot must equal the destination channel"),
            AmbiguousTransSlot => {
                f.write_str("t slot for an op whose vector slot is free (decodes as vector)")
            }
            ReplicatedOpSlot(op) => {
                write!(f, "{} occupies several slots on Cayman: give no slot", op.mnemonic())
            }
            PredSetTwice => f.write_str("more than one PRED_SET in a group"),
            DuplicateWrite => f.write_str("two instructions of a group write the same channel"),
            TooManyLiterals => f.write_str("more than 4 literal dwords in a group"),
            TooManyKcacheSets => f.write_str("clause needs more than 2 kcache sets"),
            ConstantReadPorts => f.write_str("group reads more than 2 constant pairs"),
            BankSwizzle => f.write_str("no bank swizzle satisfies the GPR read ports"),
            TransConstants => f.write_str("t-slot instruction with more than 2 constants"),
            Op3AlwaysWrites => f.write_str("OP3 instructions always write their destination"),
            Op3Modifier => f.write_str("OP3 instructions have no ABS/OMOD"),
            UpdateOnNonPredSet => f.write_str("exec/pred update on a non-PRED_SET opcode"),
            ExecMaskOmodOnCayman => {
                f.write_str("OMOD with UPDATE_EXEC_MASK on Cayman (EXECUTE_MASK_OP)")
            }
            BadSource(why) => write!(f, "bad source: {why}"),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.col, self.kind)
    }
}

impl core::error::Error for Error {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match &self.kind {
            ErrorKind::Encode(e) => Some(e),
            _ => None,
        }
    }
}
