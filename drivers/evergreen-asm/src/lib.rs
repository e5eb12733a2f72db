//! `baregpu-evergreen-asm`: an assembler for the shader-ISA subset that compute kernels use on
//! Radeon Evergreen (Cypress, HD 5870) and Cayman (HD 6970), chosen by [`Chip`].
//!
//! * [`isa`], [`alu`]: typed encoders and decoders of every instruction word (CF, ALU clause
//!   CF, RAT export, ALU OP2/OP3, vertex fetch), each field range-checked, with the Cayman
//!   changes of amd-evergreen-cayman §4.
//! * [`Builder`]: programs from Rust — CF instructions, clauses, ALU groups with automatic slot
//!   placement, literals, kcache locking, bank swizzles and the program layout.
//! * [`assemble`]: the text syntax below, with line/column [`Error`]s.
//! * [`abi`]: the kernel ABI (thread start state, constant buffer 0, global buffers).
//! * [`examples`]: vector add, SAXPY, an atomic reduction, an if/else kernel and a loop.
//!
//! Everything writes into caller buffers (`no_std`, no allocation): a [`Node`] buffer records
//! the program (one node per CF instruction, ALU slot instruction, literal group and fetch;
//! the examples need at most 31 nodes of 68 bytes), a `u32` buffer receives the words (at most
//! 66 for the examples). The builder's own state (labels, loops) is about 1.6 KiB, the text
//! assembler adds 2 KiB for the tokens of one line.
//!
//! ```
//! use baregpu_evergreen_asm::{Chip, Node, assemble, examples};
//! for chip in Chip::ALL {
//!     let mut nodes = [Node::EMPTY; 64];
//!     let mut words = [0u32; 256];
//!     let info = assemble(examples::SAXPY, chip, &mut nodes, &mut words).expect("assembles");
//!     assert!(info.words <= words.len() && info.num_gprs == 7);
//! }
//! ```
//!
//! # Assembly syntax
//!
//! One statement per line; `;` or `//` start a comment. Mnemonics, registers and keywords are
//! ASCII case-insensitive; labels are case-sensitive.
//!
//! ## CF (control-flow) statements
//!
//! | statement | instruction |
//! |---|---|
//! | `name:` | label: the next CF instruction (ends an open clause); `x:` … `t:` are slot prefixes, not labels |
//! | `alu`, `alu_push_before`, `alu_pop_after`, `alu_pop2_after`, `alu_else_after` | ALU clause (`CF_ALU_WORD*`, `CF_INST` 8/9/10/11/15); ALU groups follow |
//! | `fetch` | vertex-fetch clause of the chip: VC on Evergreen, TC on Cayman (§4.1) |
//! | `tc`, `vc` | TC clause (both chips), VC clause (Evergreen only); `vfetch` lines follow |
//! | `nop` | CF `NOP` |
//! | `jump L[, pop=N]`, `push L[, pop=N]`, `else L[, pop=N]` | `JUMP`/`PUSH`/`ELSE` to label `L` (`POP_COUNT` N, default 0) |
//! | `pop [N]` | `POP` N entries (default 1); `ADDR` = next instruction |
//! | `loop_start_dx10`, `loop_end`, `loop_break [pop=N]` | DX10 loop; addresses filled from the nesting |
//! | `mem_rat_cacheless store ratR[rI.x], rD.mask[, eop]` | `MEM_RAT_CACHELESS` global store: the `mask` channels of `rD` to dword index `rI.x` of RAT R; `STORE_RAW` on Evergreen, `STORE_DWORD` on Cayman (`store_raw`/`store_dword` name one form explicitly and are rejected on the other chip) |
//! | `mem_rat add ratR[rI.x], rD.x[, eop]` | `MEM_RAT` `ADD`: atomically add `rD.x` at dword `rI.x` (either CF form takes either op) |
//! | `end` | end of program: `NOP` + `END_OF_PROGRAM` on Evergreen (A7), `CF_END` on Cayman |
//! | `cf_end` | `CF_END` (Cayman only) |
//!
//! `eop` sets `END_OF_PROGRAM` on a RAT export (Evergreen only). Every CF instruction sets
//! `BARRIER`.
//!
//! ## Fetch statements
//!
//! `vfetch rD[.sel], rS.c, vbN[, offset=N][, fmt=32|32_32|32_32_32_32][, num=int|norm|scaled][, signed][, mfc=N]`
//! loads the element at byte index `rS.c` of fetch buffer N into `rD`. `sel` is four of
//! `x y z w` (element components), `0`, `1`, `_` (keep), e.g. `r4.x___`; default `xyzw`.
//! Defaults: `fmt=32`, `num=int` (bits unchanged), unsigned, `FETCH_TYPE` no-index-offset,
//! and on Evergreen `MEGA_FETCH` with `MEGA_FETCH_COUNT` = the element's bytes (see
//! [`VtxFetch::load`] for why).
//!
//! ## ALU groups
//!
//! An instruction line is a group of one; `{` … `}` around several instruction lines (the
//! braces may share a line with the first/last instruction) makes one group, whose
//! instructions read the registers as they were before the group.
//!
//! `[slot:] op[.mod…] dst, src, …` — `slot` is `x`, `y`, `z`, `w` or `t` (optional, see
//! placement); `op` is an [`AluOp`] mnemonic (`add`, `mul_ieee`, `add_int`, `lshl_int`,
//! `mullo_uint`, `muladd`, `cnde_int`, `pred_setne_int`, … — `alu_nop` is the ALU `NOP`);
//! modifiers `.clamp`, `.m2`, `.m4`, `.d2` (OMOD), `.exec` (`UPDATE_EXEC_MASK`), `.pred`
//! (`UPDATE_PRED`).
//!
//! | operand | meaning |
//! |---|---|
//! | `rN.c` | GPR N (0-127), channel `c` of x y z w |
//! | `_.c` | destination only: write nothing, slot of channel `c` |
//! | `cbB[i].c` | constant `i` (16-byte units, 0-4095) of constant buffer B (0-15), through a kcache set the assembler locks |
//! | `pv.c`, `ps` | previous group's vector result (channel c) / t-slot result (Evergreen) |
//! | `0`, `1`, `-1`, `1.0`, `0.5` | inline constants (any number whose bits equal one) |
//! | `42`, `-7`, `0x7f`, `2.5`, `1e-3` | literal dword: integers as their two's-complement bits, numbers with `.`/exponent as `f32` |
//! | `-x`, `\|x\|`, `-\|x\|` | `NEG`, `ABS` (OP2 sources 0-1), both |
//!
//! # What the assembler decides and checks
//!
//! * **Slots** (A4, A8). Evergreen: a vector instruction's slot is its destination channel; an
//!   opcode the chip runs only in t (`mullo_*`, `mulhi_*`, `recip_ieee`, `int_to_flt`,
//!   `uint_to_flt`, `flt_to_uint`) goes to t, and an opcode that runs anywhere goes to t when
//!   its channel's slot is taken — exactly how the hardware decodes a group, so the words
//!   are emitted x, y, z, w, t. Cayman: the slot is the destination channel;
//!   `mullo_*`/`mulhi_*` are issued in all four slots and `recip_ieee` in x, y, z (and w when
//!   the destination is w), with the same sources and only the destination channel written
//!   (§4.2). Rejected: two instructions for one slot ([`ErrorKind::SlotTaken`]), a t-only op in
//!   a vector slot, a vector-only op (`flt_to_int`, `mul_uint24`, `muladd_uint24`, `bfe_uint`,
//!   `bfi_int`) in t, an explicit t slot on Cayman, a vector slot other than the destination
//!   channel, `PS` on Cayman.
//! * **Per group**: ≤ 4 literal dwords (padded to an even count, A4), one `PRED_SET*`, no two
//!   writes of one channel, ≤ 2 constant read ports (distinct constant and channel pair),
//!   ≤ 2 constants in a t instruction, and a `BANK_SWIZZLE` per instruction such that each of
//!   the three read cycles reads one GPR per channel (first fitting combination, x's swizzle
//!   most significant); OP3 always writes and has no ABS/OMOD; exec/pred updates only on
//!   `PRED_SET*`.
//! * **Per clause**: the constant lines an ALU clause reads are covered by at most two kcache
//!   sets (`LOCK_1` for one 16-constant line, `LOCK_2` for two consecutive), set 0 first in
//!   (buffer, line) order; no empty clause; `COUNT` limits (128 ALU slots, 64 fetches).
//! * **Per program**: it ends (`end`, `cf_end` or `eop`) and nothing follows; no VC clause and
//!   no `END_OF_PROGRAM` on Cayman, no `CF_END` on Evergreen; labels defined once and before
//!   the end; loops balanced; pops never exceed pushes in program order
//!   ([`ProgramInfo::stack_depth`] reports the deepest nesting).
//!
//! # Judgement calls (evergreen-compute "could not confirm")
//!
//! * `MEGA_FETCH_COUNT`: the documents never define it; the assembler writes the fetch size in
//!   bytes with `MEGA_FETCH` set, as LLVM's public encodings do ([`VtxFetch::load`]).
//! * Bank swizzles: the read-port rules are the ones Mesa's R700-and-later checker enforces
//!   (module `group`); groups that satisfy them get a valid `BANK_SWIZZLE`, others are
//!   rejected rather than emitted with a guess.
//! * GPR read-after-write between adjacent groups: no hazard is modelled — a group's results
//!   are in the GPRs (and PV/PS) for the next group. The only documented hazards involve
//!   relative addressing (`*_REL`, `INDEX_MODE`), which the text syntax never emits.
//! * `SPI_COMPUTE_INPUT_CNTL` and the compute resource base are driver settings; the ABI the
//!   kernels assume is stated in [`abi`].
//! * Program end on Evergreen: `end` always emits its own `NOP` with `END_OF_PROGRAM` (A7's
//!   form after an ALU clause, `LOOP_END` or `POP`), so a label on `end` stays valid; `eop`
//!   folds the bit into a RAT export by hand.
#![no_std]
// docs.rs (`--cfg docsrs`) marks each feature-gated item with the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]

pub mod abi;
pub mod alu;
mod asm;
mod build;
mod error;
pub mod examples;
mod group;
pub mod isa;
mod program;

pub use alu::{AluOp, AluSrc, AluWord, InlineConst, Omod, PredSel, Sel};
pub use asm::assemble;
pub use build::{Builder, FetchClause, Label, MAX_LABELS, MAX_LOOP_DEPTH, Node, ProgramInfo};
pub use error::{Error, ErrorKind};
pub use isa::{
    AluCfInst, CfAluWord, CfCond, CfInst, CfInstruction, CfWord, Chan, Chip, DataFormat, DstSel,
    EncodeError, ExportType, FetchType, Kcache, KcacheMode, NumFormat, RatCfInst, RatExport,
    RatInst, VtxFetch, VtxInst,
};
pub use program::{AluInst, Dst, Operand, Slot, Src};
