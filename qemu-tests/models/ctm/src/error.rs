//! Typed errors. Every error is recoverable: no guest input panics the engine.

use crate::memory::MemFault;
use core::fmt;

/// Why a DPP program (CTM guide ch. 3) could not run to completion for one element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DppError {
    /// More instructions than the per-element budget ([`crate::Limits`]): a runaway loop.
    InstructionBudgetExceeded,
    /// More instructions than the per-start_program budget.
    ProgramBudgetExceeded,
    /// The program counter left the 512 instruction slots (§3.1).
    PcOutOfRange,
    /// A reserved encoding (opcode, A_OP/B_OP 3, texture op 7, OMOD_DISABLED on an op other
    /// than MIN/MAX/CMP/CND, SOP/DP without a transcendental/dot partner, ...).
    Reserved(&'static str),
    /// An operation the interpreter does not model (MDH/MDV need neighbour processors;
    /// uncached (UMRT) output).
    Unsupported(&'static str),
    /// Loop stack push beyond its size (§3.5.2: 4 in full flow control mode).
    LoopStackOverflow,
    /// Loop stack pop/use while empty.
    LoopStackUnderflow,
    /// Address stack push beyond its size (§3.5.2: 4).
    AddressStackOverflow,
    /// Address stack pop while empty.
    AddressStackUnderflow,
    /// Branch counter above its maximum (§3.5.2: 31 full, 3 partial).
    BranchCounterOverflow,
    /// Loops and subroutines need full flow control mode (§3.5).
    NeedsFullFlowControl,
    /// Flow control predication must be NONE or a replicate swizzle (§3.5.1).
    FlowControlPredicate,
    /// A texture instruction read input N whose format was never set (set_inp_fmt).
    InputNotConfigured(u8),
    /// The program wrote output N whose format was never set (set_out_fmt).
    OutputNotConfigured(u8),
    /// Constants of this kind ("f", "i", "b") were read but their format was never set.
    ConstantsNotConfigured(&'static str),
    /// Instructions were fetched but set_inst_fmt was never issued.
    InstructionsNotConfigured,
    /// The CO needed the conditional output buffer but set_cond_out_fmt was never issued.
    CondOutNotConfigured,
    /// A memory access failed.
    Memory(MemFault),
}

/// What went wrong while consuming a command buffer (CTM guide §2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CtmErrorKind {
    /// The word is not one of the Table 3 opcodes.
    UnknownOpcode(u32),
    /// The word names a Table 3 command (bits 15:8) but its count field (bits 29:16) differs.
    BadParameterCount {
        /// The command word found.
        word: u32,
        /// The Table 3 opcode word for that command.
        expected: u32,
    },
    /// The buffer ends before all of the command's parameters.
    Truncated {
        /// The command word.
        word: u32,
        /// Parameters the command takes.
        needed: usize,
        /// Words left in the buffer.
        available: usize,
    },
    /// A format parameter with a reserved data format (bits 26:24 >= 5).
    ReservedDataFormat(u32),
    /// A memory access made by a command failed: read_perf_counters, or the write-back of
    /// flush_out_cache / flush_cond_out_cache (the first failing write; the others were
    /// still made).
    Memory(MemFault),
    /// A command Table 3 marks as not pipelined (read_perf_counters, set_*_fmt) came after a
    /// start_program without a wait_for_idle in between (§2.2: such a command "must follow a
    /// wait_for_idle command and precede any subsequent start_program command"). The command
    /// had no effect.
    NotIdle {
        /// The command word.
        word: u32,
    },
    /// The command buffer used up its work budget ([`crate::Limits::per_buffer`]) before its
    /// end; `offset` is the command being executed. The model's bound on guest-controlled
    /// work: a buffer of millions of start_programs cannot hold the device for days.
    BufferBudgetExceeded {
        /// Work units charged to the buffer.
        units: u64,
    },
    /// [`crate::CtmEngine::begin`] while another command buffer is in flight.
    BufferInFlight,
    /// start_program failed for element (i, j) at instruction `pc`.
    Program {
        /// Domain index i.
        i: u32,
        /// Domain index j.
        j: u32,
        /// Program counter of the failing instruction.
        pc: u32,
        /// What failed.
        error: DppError,
    },
}

/// A command-buffer error and where it happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CtmError {
    /// Index (in 32-bit words) of the failing command word in the buffer.
    pub offset: usize,
    /// What failed.
    pub kind: CtmErrorKind,
}

impl CtmError {
    /// A stable nonzero code for the R5xx model's error state: 0x100 + kind (commands) or
    /// 0x200 + kind (program errors).
    pub fn code(&self) -> u32 {
        match self.kind {
            CtmErrorKind::UnknownOpcode(_) => 0x101,
            CtmErrorKind::BadParameterCount { .. } => 0x102,
            CtmErrorKind::Truncated { .. } => 0x103,
            CtmErrorKind::ReservedDataFormat(_) => 0x104,
            CtmErrorKind::Memory(_) => 0x105,
            CtmErrorKind::NotIdle { .. } => 0x106,
            CtmErrorKind::BufferBudgetExceeded { .. } => 0x107,
            CtmErrorKind::BufferInFlight => 0x108,
            CtmErrorKind::Program { error, .. } => {
                0x200
                    + match error {
                        DppError::InstructionBudgetExceeded => 1,
                        DppError::ProgramBudgetExceeded => 2,
                        DppError::PcOutOfRange => 3,
                        DppError::Reserved(_) => 4,
                        DppError::Unsupported(_) => 5,
                        DppError::LoopStackOverflow => 6,
                        DppError::LoopStackUnderflow => 7,
                        DppError::AddressStackOverflow => 8,
                        DppError::AddressStackUnderflow => 9,
                        DppError::BranchCounterOverflow => 10,
                        DppError::NeedsFullFlowControl => 11,
                        DppError::FlowControlPredicate => 12,
                        DppError::InputNotConfigured(_) => 13,
                        DppError::OutputNotConfigured(_) => 14,
                        DppError::ConstantsNotConfigured(_) => 15,
                        DppError::InstructionsNotConfigured => 16,
                        DppError::CondOutNotConfigured => 17,
                        DppError::Memory(_) => 18,
                    }
            }
        }
    }
}

impl fmt::Display for CtmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            CtmErrorKind::NotIdle { word } => write!(
                f,
                "CTM command at word {}: command {word:#010x} is not pipelined and a program \
                 may be executing (wait_for_idle required after start_program, CTM guide §2.2)",
                self.offset
            ),
            CtmErrorKind::BufferBudgetExceeded { units } => write!(
                f,
                "CTM command at word {}: the command buffer used its budget of work ({units} \
                 units) before its end",
                self.offset
            ),
            kind => write!(f, "CTM command at word {}: {kind:?}", self.offset),
        }
    }
}

impl std::error::Error for CtmError {}

impl From<MemFault> for DppError {
    fn from(e: MemFault) -> Self {
        DppError::Memory(e)
    }
}
