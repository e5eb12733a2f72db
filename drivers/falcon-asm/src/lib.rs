//! `baregpu-falcon-asm`: an assembler and disassembler for the falcon microcontroller of nVidia
//! GPUs (the v3 falcons of Tesla GT215: PDAEMON, PCOPY, the VP3 engines), from
//! nvidia-hardware-envytools §2.10.
//!
//! * [`isa`]: the §2.10.2 formats and opcode table as [`Op`] rows; [`Instruction::encode`] and
//!   [`Instruction::decode`] (canonical encodings only, so decode → encode gives the bytes).
//! * [`Builder`]: programs from Rust, with [`Label`]s whose `bra`/`jmp`/`call` targets are
//!   patched when the program is finished.
//! * [`assemble`]: the text syntax, with line/column [`AsmError`]s; [`disassemble`] and
//!   [`Instruction::display_at`] print text that assembles back to the same bytes.
//! * [`programs`]: firmware as text and as loadable [`programs::Image`]s: a mailbox echo, a
//!   DMEM checksum, an xfer memcpy service and the PCOPY copy-engine firmware.
//!
//! Everything writes into caller buffers (`no_std`, no allocation).
//!
//! ```
//! use baregpu_falcon_asm::{assemble, Instruction};
//! let mut code = [0u8; 32];
//! let len = assemble("
//!     mov $r1, 0x1000        ; SCRATCH0 in the IO space (§2.10.10)
//!     iord $r2, I[$r1 + 0]
//!     add b32 $r2, 1
//!     iowr I[$r1 + 0x100], $r2   ; SCRATCH1
//!     exit
//! ", &mut code)?;
//! // mov $r1, 0x1000: f1 (O2 R2SD I16), byte 1 = R2 << 4 | subop 7, I16 little-endian.
//! assert_eq!(code[..4], [0xf1, 0x17, 0x00, 0x10]);
//! let (insn, n) = Instruction::decode(&code[4..len])?;
//! assert_eq!((insn.display_at(4).to_string().as_str(), n), ("iord $r2, I[$r1 + 0x0]", 3));
//! # Ok::<(), Box<dyn core::error::Error>>(())
//! ```
//!
//! Instruction sets differ between falcon versions (§2.10.1); the table holds the rows the
//! document marks "all units" and "v3+ units" (GT215 has v3 falcons), not the crypto ones.

#![no_std]
// docs.rs (`--cfg docsrs`) marks each feature-gated item with the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]

mod build;
pub mod isa;
pub mod programs;
mod text;

pub use build::{
    BuildError, Builder, Label, MAX_FIXUPS, MAX_LABELS, Mem, MemBase, MemIndex, Operand,
};
pub use isa::{
    Cond, DecodeError, EncodeError, Format, Instruction, Mnemonic, Op, Reg, Size, Space,
    SpecialReg, regs,
};
pub use text::{AsmError, AsmErrorKind, Disassembly, assemble, disassemble};

/// The README's example runs as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeExample;
