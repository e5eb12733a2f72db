//! Typed shader-core errors. No guest input panics the core: a bad state, a bad instruction word
//! or a runaway program ends the dispatch with one of these, and [`ShaderErrorKind::code`] gives
//! the command processor a stable number for its error state.

use super::isa::{AluOp, Chip};
use super::memory::MemoryFault;
use core::fmt;

/// What went wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShaderErrorKind {
    // ---- dispatch state (checked before any work) ----
    /// SPI_COMPUTE_NUM_THREAD_X/Y/Z: a dimension is 0 or the group has more than
    /// [`super::MAX_GROUP_THREADS`] threads.
    InvalidGroupSize {
        /// Threads per group in x, y, z.
        size: [u32; 3],
    },
    /// SQ_PGM_RESOURCES_LS NUM_GPRS above the 128 GPRs a thread can address.
    InvalidGprCount(u32),
    /// SQ_LDS_ALLOC SIZE above the 32 KiB of local data share.
    InvalidLdsSize(u32),

    // ---- instruction decoding ----
    /// A CF_INST (CF_WORD1 29:22) the ISA does not define.
    UnknownCfInst(u32),
    /// An ALU clause CF_INST (CF_ALU_WORD1 29:26) the chip does not define.
    UnknownAluCfInst(u32),
    /// A CF instruction that exists on the other chip only (VC or END_OF_PROGRAM on Cayman,
    /// CF_END on Evergreen, §4.1).
    CfInstNotOnChip {
        /// The CF_INST value.
        inst: u32,
        /// The chip executing.
        chip: Chip,
    },
    /// A defined CF instruction outside the modelled subset (CALL, RETURN, LOOP_START with aL,
    /// EXPORT, ALU_EXTENDED, ALU_BREAK/CONTINUE, ...).
    UnsupportedCfInst(u32),
    /// An ALU_INST the model does not know (`op3`: ALU_WORD1_OP3 format).
    UnknownAluOp {
        /// Three-source format.
        op3: bool,
        /// The ALU_INST value.
        inst: u32,
    },
    /// A SRC_SEL outside GPRs, kcache sets 0-1, inline constants, literal, PV and PS.
    UnsupportedSrcSel(u32),
    /// A field set to a value the model does not implement (relative addressing, whole quad
    /// mode, alternate constants, endian swap, ...).
    UnsupportedField {
        /// Field name as in the ISA.
        field: &'static str,
        /// Its value.
        value: u32,
    },
    /// A field set to a reserved value.
    ReservedField {
        /// Field name as in the ISA.
        field: &'static str,
        /// Its value.
        value: u32,
    },
    /// A fetch clause instruction that is not a vertex fetch (VC_INST/TEX_INST 4:0 != 0).
    UnsupportedFetchInst(u32),
    /// A vertex fetch DATA_FORMAT / NUM_FORMAT_ALL combination the model does not convert.
    UnsupportedFetchFormat {
        /// DATA_FORMAT.
        data_format: u32,
        /// NUM_FORMAT_ALL.
        num_format: u32,
    },
    /// A RAT_INST outside STORE_RAW (Evergreen), STORE_DWORD (Cayman) and ADD.
    UnsupportedRatInst {
        /// The RAT_INST value.
        inst: u32,
        /// The chip executing.
        chip: Chip,
    },
    /// A fetch clause starting at an odd 64-bit address (fetch clauses are 128-bit aligned).
    MisalignedFetchClause(u32),

    // ---- VLIW group rules ----
    /// A group longer than 5 (Evergreen) or 4 (Cayman) instructions.
    GroupTooLong,
    /// An instruction after the one that took the t slot (t is last, Evergreen).
    InstructionAfterTrans,
    /// A vector-only operation in the t slot (Evergreen).
    VectorOnlyInTrans(AluOp),
    /// Two instructions for the same vector slot, or slots out of x, y, z, w order (Cayman
    /// has no t slot to take the second one).
    SlotOrder {
        /// DST_CHAN of the offending instruction.
        chan: u8,
    },
    /// A Cayman replicated operation (§4.2) missing from a slot it needs.
    ReplicationMissing {
        /// The operation.
        op: AluOp,
        /// The slot without it (0 = x .. 3 = w).
        slot: u8,
    },
    /// A Cayman replicated operation whose copies read different sources (§4.2: "all four slots
    /// expecting the arguments on sources a and b" / "issue the source argument to slots z, y,
    /// and x").
    ReplicationOperands {
        /// The operation.
        op: AluOp,
        /// The slot whose sources differ from slot x.
        slot: u8,
    },
    /// Two instructions of one group write the same GPR channel.
    WriteConflict {
        /// GPR.
        gpr: u8,
        /// Channel.
        chan: u8,
    },
    /// More than one instruction of a group updates the predicate or the execute mask.
    PredicateConflict,
    /// PS read on Cayman, which has no scalar slot (§4.1).
    PsOnCayman,
    /// PV/PS read where the previous group of the clause produced no such value (first group of
    /// a clause, or an empty slot).
    ForwardUnavailable {
        /// The SRC_SEL (254 PV, 255 PS).
        sel: u32,
        /// The channel.
        chan: u8,
    },
    /// The clause ends inside a group (no LAST bit before COUNT runs out).
    ClauseEndsMidGroup,
    /// A group's literal constants run past the end of the clause.
    LiteralOutsideClause,

    // ---- execution ----
    /// A GPR at or beyond SQ_PGM_RESOURCES_LS NUM_GPRS.
    GprOutOfRange {
        /// The GPR.
        gpr: u32,
        /// NUM_GPRS.
        num_gprs: u32,
    },
    /// A kcache constant outside the lines the clause locked (KCACHE_MODE NOP, or index 16-31
    /// with LOCK_1).
    KcacheNotLocked {
        /// Kcache set (0 or 1).
        set: u8,
        /// Constant index within the set.
        index: u8,
    },
    /// The control-flow stack needs more entries than SQ_PGM_RESOURCES_LS STACK_SIZE.
    StackOverflow {
        /// STACK_SIZE.
        entries: u32,
    },
    /// POP/ELSE/JUMP popped or used an empty stack.
    StackUnderflow,
    /// A push entry where a loop entry is needed or the reverse (LOOP_END over an unbalanced
    /// PUSH, POP of a loop, ELSE inside a loop without its PUSH).
    StackMismatch,
    /// LOOP_END/BREAK/CONTINUE with no loop on the stack.
    NotInLoop,
    /// BUFFER_ID beyond the CS stage's fetch resources.
    ResourceOutOfRange(u32),
    /// The fetch resource is not a valid buffer (word 7 TYPE != 3).
    InvalidResource(u32),
    /// A 32-bit fetch at an address that is not a multiple of 4.
    UnalignedFetch {
        /// BUFFER_ID.
        buffer: u32,
        /// The element address.
        address: u64,
    },
    /// RAT_ID above CB11.
    RatIdOutOfRange(u32),
    /// The RAT's CB_COLORn_INFO does not have RAT set (bit 26).
    RatNotBound(u32),
    /// The RAT state breaks a rule of amd-evergreen-cayman §8.6 (or asks for a layout the model
    /// does not implement: non-32-bit formats, tiled or typed surfaces).
    RatState {
        /// RAT / CB index.
        rat: u32,
        /// The rule.
        rule: &'static str,
    },
    /// A memory access failed.
    Memory(MemoryFault),

    // ---- budgets ----
    /// One wave ran more work units than [`super::Limits::wave_units`]: a runaway program.
    WaveBudgetExceeded {
        /// The limit.
        limit: u64,
    },
    /// The dispatch ran more work units than [`super::Limits::dispatch_units`].
    DispatchBudgetExceeded {
        /// The limit.
        limit: u64,
    },
}

impl ShaderErrorKind {
    /// A stable nonzero code for the command processor's error state: 0x31xx dispatch state,
    /// 0x32xx decoding, 0x33xx VLIW rules, 0x34xx execution, 0x35xx budgets.
    pub fn code(&self) -> u32 {
        use ShaderErrorKind::*;
        match self {
            InvalidGroupSize { .. } => 0x3101,
            InvalidGprCount(_) => 0x3102,
            InvalidLdsSize(_) => 0x3103,
            UnknownCfInst(_) => 0x3201,
            UnknownAluCfInst(_) => 0x3202,
            CfInstNotOnChip { .. } => 0x3203,
            UnsupportedCfInst(_) => 0x3204,
            UnknownAluOp { .. } => 0x3205,
            UnsupportedSrcSel(_) => 0x3206,
            UnsupportedField { .. } => 0x3207,
            ReservedField { .. } => 0x3208,
            UnsupportedFetchInst(_) => 0x3209,
            UnsupportedFetchFormat { .. } => 0x320A,
            UnsupportedRatInst { .. } => 0x320B,
            MisalignedFetchClause(_) => 0x320C,
            GroupTooLong => 0x3301,
            InstructionAfterTrans => 0x3302,
            VectorOnlyInTrans(_) => 0x3303,
            SlotOrder { .. } => 0x3304,
            ReplicationMissing { .. } => 0x3305,
            ReplicationOperands { .. } => 0x3306,
            WriteConflict { .. } => 0x3307,
            PredicateConflict => 0x3308,
            PsOnCayman => 0x3309,
            ForwardUnavailable { .. } => 0x330A,
            ClauseEndsMidGroup => 0x330B,
            LiteralOutsideClause => 0x330C,
            GprOutOfRange { .. } => 0x3401,
            KcacheNotLocked { .. } => 0x3402,
            StackOverflow { .. } => 0x3403,
            StackUnderflow => 0x3404,
            StackMismatch => 0x3405,
            NotInLoop => 0x3406,
            ResourceOutOfRange(_) => 0x3407,
            InvalidResource(_) => 0x3408,
            UnalignedFetch { .. } => 0x3409,
            RatIdOutOfRange(_) => 0x340A,
            RatNotBound(_) => 0x340B,
            RatState { .. } => 0x340C,
            Memory(_) => 0x340D,
            WaveBudgetExceeded { .. } => 0x3501,
            DispatchBudgetExceeded { .. } => 0x3502,
        }
    }
}

impl From<MemoryFault> for ShaderErrorKind {
    fn from(e: MemoryFault) -> Self {
        ShaderErrorKind::Memory(e)
    }
}

/// Which wave failed, and where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Location {
    /// Thread-group id (x, y, z).
    pub group: [u32; 3],
    /// Wave index within the group (64 threads each).
    pub wave: u32,
    /// Index of the CF instruction (64-bit units from the program start).
    pub cf: u32,
}

/// A shader-core error: what, and in which wave (none for dispatch-state errors).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShaderError {
    /// What went wrong.
    pub kind: ShaderErrorKind,
    /// Where, for errors raised while a wave ran.
    pub at: Option<Location>,
}

impl ShaderError {
    /// The stable error code ([`ShaderErrorKind::code`]).
    pub fn code(&self) -> u32 {
        self.kind.code()
    }
}

impl fmt::Display for ShaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "shader core error {:#06x}: {:?}", self.code(), self.kind)?;
        if let Some(at) = self.at {
            write!(f, " (group {:?}, wave {}, CF instruction {})", at.group, at.wave, at.cf)?;
        }
        Ok(())
    }
}

impl std::error::Error for ShaderError {}
