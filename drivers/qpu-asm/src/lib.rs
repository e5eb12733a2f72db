//! `baregpu-qpu-asm`: an assembler, disassembler and rule checker for the QPU, the shader
//! processor of the Broadcom VideoCore IV 3D block (V3D), from the VideoCore IV 3D Architecture
//! Reference Guide §3.
//!
//! * [`isa`]: the typed instruction model ([`Instruction`]: ALU with both pipes, load
//!   immediate, semaphore, branch) and its exact 64-bit encoding; [`Instruction::decode`] gives
//!   a typed [`DecodeError`] for words the document gives no meaning.
//! * [`check()`]: the §3 restrictions on whole programs ([`Rule`], with the instruction index).
//! * [`Builder`]: programs from Rust ([`AluSpec`] operands, [`Label`]s for branches) into a
//!   caller slice of words.
//! * [`assemble`]: the text syntax (below), with line/column [`AsmError`]s; [`disassemble`]
//!   and [`Instruction::display`] print text that assembles back to the same words.
//! * [`programs`]: fragment shaders, a VPM DMA user program, vector add and SAXPY.
//!
//! Everything writes into caller buffers (`no_std`, no allocation).
//!
//! ```
//! use baregpu_qpu_asm::{assemble, ProgramKind, check, isa::Instruction};
//! let mut words = [0u64; 8];
//! let n = assemble("
//!     ldi r0, 0xff0000ff            # opaque red
//!     nop                           # no tile-buffer access in the first two instructions
//!     mov tlb_color_all, r0         # waits for the scoreboard
//!     thrend
//!     nop
//!     sbdone
//! ", &mut words)?;
//! assert_eq!(n, 6);
//! assert_eq!(words[3], 0x3000_09e7_009e_7000); // thread end (sig 3) on a nop
//! check(&words[..n], ProgramKind::Fragment)?;
//! assert_eq!(Instruction::decode(words[2])?.display().to_string(), "mov tlb_color_all, r0");
//! # Ok::<(), Box<dyn core::error::Error>>(())
//! ```
//!
//! # Text syntax
//!
//! One instruction per line; `label:` before it binds a label; `#` or `//` start a comment.
//! Numbers are decimal or `0x` hex, optionally negative.
//!
//! **ALU**: `ADD ; MUL [; ITEM]...`. Each pipe is `op[.cond][.setf] dst, a, b`, `mov dst, a`
//! (add `or a, a`, mul `v8min a, a`) or a bare `nop`. A single pipe whose operation only the
//! mul pipe has (`fmul`, `mul24`, `v8muld`, `v8min`, `v8max`) is the mul pipe with the add
//! pipe idle; a line of items only (`thrend`) is a no-op carrying them.
//! * Operations: [`AddOp`](isa::AddOp) and [`MulOp`](isa::MulOp) names (`fadd`, `add`, `shl`,
//!   `fmul`, ...). Conditions (§3 table 2): `.ifz .ifnz .ifn .ifnn .ifc .ifnc .always .never`
//!   (default: always for an operation, never for `nop`). `.setf` (on either pipe) sets sf.
//! * Destinations: `ra0`-`ra31`, `rb0`-`rb31`, accumulators `r0`-`r3`, `r5`, and the §3 table
//!   14 write names ([`Reg::write_name`](isa::Reg::write_name): `tlb_color_all`, `vpm`,
//!   `vw_setup`, `vw_addr`, `sfu_recip`, `tmu0_s`, `unif_addr`, `nop`, ...). Side A names
//!   (`raN`, `quad_x`, `ms_flags`, `vr_setup`, `vr_addr`) on the mul pipe, or side B names on
//!   the add pipe, set the write swap. Pack suffixes: `.16a .16b .8888 .8a-.8d` and their
//!   `.sat` forms (pm 0, on the pipe writing side A), `.c8888 .c8a-.c8d` (pm 1, the mul
//!   pipe's float-to-colour conversion).
//! * Sources: `r0`-`r5`; `raN`/`rbN` (N up to 63 for any address); read names (`unif`,
//!   `vary`, `vpm`, `mutex_acq`, `nop` on either side: side A when free; `elem_num`,
//!   `x_coord`, `ms_flags`, `vr_busy`, `vr_wait` on A; `qpu_num`, `y_coord`, `rev_flag`,
//!   `vw_busy`, `vw_wait` on B); small immediates `-16`..`15` and the table 5 floats (`1.0`,
//!   `0.5`, ...). Unpack suffixes `.16a .16b .8dr .8a-.8d` on a side-A read (pm 0) or `r4`
//!   (pm 1).
//! * Items: signals ([`Signal`](isa::Signal) names: `thrsw`, `thrend`, `sbwait`, `sbdone`,
//!   `lthrsw`, `loadcv`, `loadc`, `ldcend`, `ldtmu0`, `ldtmu1`, `loadam`, `bkpt`), `rot N`
//!   (1-15) and `rot r5` (mul output rotation), `ws`, `pm`, and the raw fields an instruction
//!   may carry unused: `raddr_a=N`, `raddr_b=N`, `si=N`, `unpack=N`.
//!
//! **Load immediate**: `ldi[.pes|.peu][.setf] dst, value[, dst_mul] [; ITEM]...` (`.pes` and
//! `.peu`: per-element signed / unsigned 2-bit values). Conditions and packs are destination
//! suffixes (`ldi r0.ifz, 1`); a destination other than `nop` defaults to always.
//!
//! **Semaphore**: `sem[.setf] acq|rel N[, dst_add[, dst_mul]]`.
//!
//! **Branch**: `bra[.cond] target[, link_add[, link_mul]]` with conditions `.allz .allnz .anyz
//! .anynz .alln .allnn .anyn .anynn .allc .allnc .anyc .anync` (§3 table 11) and targets
//! `-> label` (relative), `rel N` or `abs N` (bytes), optionally `rel raN + N` / `abs raN + N`
//! to add regfile A element 0.

#![no_std]
// docs.rs (`--cfg docsrs`) marks each feature-gated item with the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]

mod build;
mod check;
pub mod isa;
pub mod programs;
mod text;
pub mod vpm;

pub use build::{
    AluSpec, BuildError, Builder, Dst, Label, MAX_FIXUPS, MAX_LABELS, OperandError, Pipe, Src,
};
pub use check::{ProgramKind, Rule, RuleError, check};
pub use isa::{BranchCond, DecodeError, EncodeError, Instruction};
pub use text::{AsmError, AsmErrorKind, Disassembly, assemble, disassemble};

/// The README's example runs as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeExample;
