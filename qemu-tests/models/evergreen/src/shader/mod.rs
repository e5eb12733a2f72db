//! The compute shader core of the emulated Evergreen / Cayman.
//!
//! The command processor collects the compute state (registers and resources, see
//! [`DispatchState`]), and on DISPATCH_DIRECT creates a [`Dispatch`]; each of its ticks calls
//! [`Dispatch::step`] with a work budget and a [`ShaderMemory`] over guest memory, until the
//! step returns [`StepResult::Done`] or [`StepResult::Error`] (whose
//! [`ShaderError::code`] goes into the CP's error state).
//!
//! ```
//! use evergreen_model::shader::{Chip, Dispatch, DispatchState, FlatMemory, Limits, StepResult};
//! let mut mem = FlatMemory::new(0, 1 << 16);
//! // One CF instruction at 0x100: NOP with END_OF_PROGRAM (CF_WORD1 bit 21).
//! mem.write_words(0x100, &[0, 1 << 21]).unwrap();
//! let mut state = DispatchState::new(Chip::Evergreen);
//! state.pgm_start = 0x100 >> 8;
//! state.num_threads = [64, 1, 1];
//! state.groups = [2, 1, 1];
//! let mut d = Dispatch::new(state, Limits::default()).unwrap();
//! while d.step(&mut mem, 100) == StepResult::Running {}
//! assert_eq!(d.stats().waves, 2);
//! ```
//!
//! # What is modelled
//!
//! - Waves of 64 threads (the last wave of a group partial), 128 GPRs x 4 channels of 32 bits,
//!   R0/R1 start state ([`Dispatch`]), GPR accesses checked against NUM_GPRS.
//! - CF: NOP, TC (and VC on Evergreen) fetch clauses, ALU clauses (ALU, PUSH_BEFORE, POP_AFTER,
//!   POP2_AFTER, ELSE_AFTER; Cayman VALID_PIXEL_MODE), JUMP, PUSH, ELSE, POP, LOOP_START_DX10,
//!   LOOP_START_NO_AL, LOOP_END, LOOP_BREAK, LOOP_CONTINUE, WAIT_ACK, MEM_RAT and
//!   MEM_RAT_CACHELESS (STORE_RAW on Evergreen, STORE_DWORD on Cayman, ADD), END_OF_PROGRAM
//!   (Evergreen) and CF_END (Cayman). Semantics: [`wave`] module docs.
//! - ALU groups with VLIW semantics and the slot rules of each chip ([`decode`]), kcache sets 0
//!   and 1 (LOCK_1/LOCK_2), literals, inline constants, PV/PS, predication; the operations of
//!   [`isa::OPS`] with the floating-point rules of [`alu`].
//! - Vertex fetches of 32-bit formats from buffer resources; RAT stores and atomic add into
//!   linear 32-bit buffer RATs.
//!
//! Not modelled (typed errors): LDS and GDS operations, textures, relative addressing, CALL /
//! RETURN, exports other than RATs, kcache sets 2-3, other RAT operations and formats. Not
//! checked: GPR read-port (bank swizzle) conflicts and per-group constant limits (the public
//! sources do not pin them down).
//!
//! # Bounded work
//!
//! A work unit is one instruction for one wave: a CF instruction (an ALU or fetch clause
//! instruction included, which decodes up to 128 slots and locks up to 64 constants), an ALU
//! group (at most 5 slots x 64 threads), a vertex fetch (64 threads) or a RAT export (64 threads
//! x 4 dwords). Every unit is bounded by those constants, [`Dispatch::step`] runs at most its
//! budget of units, and [`Limits`] caps a wave (a runaway program) and a dispatch (a huge grid).
//!
//! # Decisions where the documents are silent
//!
//! - Fetch BUFFER_ID `b` reads resource slot 816 + `b` ([`CS_RESOURCE_BASE`], with the
//!   reasoning).
//! - R0/R1 are loaded only when SPI_COMPUTE_INPUT_CNTL enables them
//!   ([`DispatchState::input_cntl`]).
//! - RAT stores: STORE_RAW on Evergreen, STORE_DWORD on Cayman, each refused on the other chip
//!   (LLVM uses exactly these); index = dword index; ELEM_SIZE must be 0; dwords beyond the
//!   surface (DIM) are dropped ([`wave`]).
//! - Out-of-range vertex fetches read 0; constants beyond SQ_ALU_CONST_BUFFER_SIZE read 0;
//!   32-bit fetches must be dword aligned ([`wave`]).
//! - Flow-control semantics, execute-mask timing and stack accounting ([`wave`]).
//! - Floating point: rounding, denormals, NaN, legacy MUL, conversions ([`alu`]).
//! - Cayman (§4.2): MULLO/MULHI_* in all four slots and RECIP_IEEE in x, y, z with identical
//!   sources; FLT_TO_UINT, INT_TO_FLT, UINT_TO_FLT are ordinary per-slot vector operations.

pub mod alu;
pub mod decode;
mod dispatch;
pub mod error;
pub mod isa;
pub mod memory;
pub mod state;
pub mod wave;

pub use decode::PredSel;
pub use dispatch::{Dispatch, Stats, StepResult};
pub use error::{Location, ShaderError, ShaderErrorKind};
pub use isa::{AluOp, Chip};
pub use memory::{FlatMemory, MemoryFault, Path, ShaderMemory};
pub use state::{
    CS_RESOURCE_BASE, CS_RESOURCE_COUNT, DispatchState, Limits, MAX_GROUP_THREADS, MAX_LDS_DWORDS,
    RAT_COUNT, RatRegs, WAVE_SIZE,
};
