//! `baregpu-dpp-asm`: an assembler for the ATI CTM DPP array (the R5xx fragment processor) and a writer
//! of DPP executables.
//!
//! * [`isa`]: typed encoders/decoders of the ALU, OUTPUT, texture and flow-control instruction
//!   words (ctm-guide chapter 3; bit positions from amd-r5xx-acceleration §11.10, word order
//!   from §8.8.1).
//! * [`build`]: the operand-level builder used by the text assembler (source-slot allocation,
//!   presubtract, vector ops).
//! * [`asm`]: the text assembler ([`assemble`]) with line/column errors.
//! * [`elf`]: the executable writer (ctm-guide chapter 4).
//! * [`examples`]: example programs shared by the QEMU demos and the emulator tests.
//!
//! Everything writes into caller-provided buffers; the crate is `no_std` without `alloc`.
//!
//! # Assembly syntax
//!
//! One statement per line; `;` or `//` start a comment; `name:` defines a label.
//!
//! ```text
//! [label:] [(p) | (!p) | (p.x) | (!p.x)] mnemonic[.suffix…] operands
//! ```
//!
//! ## Registers and operands
//!
//! | syntax | meaning |
//! |---|---|
//! | `r0`..`r127` | temporaries (§3.3.1) |
//! | `c0`..`c255` | float constants |
//! | `r5[aL]`, `c5[aL]` | relative addressing: index + loop variable aL |
//! | `#0.25` | inline constant (must be exactly representable: 4-bit exponent, 3-bit mantissa) |
//! | `0`, `0.5`, `1` | swizzle constants (no source slot) |
//! | `.xyzw` / `.rgba` / `0 1 h` | swizzle; shorter swizzles repeat their last component (`.x` = `.xxxx`); `h` = 0.5 |
//! | `-x`, `\|x\|`, `-\|x\|` | input modifiers NEG, ABS, NAB (§3.3.3) |
//! | `(r1 - r2)`, `(r1 + r2)`, `(1 - r1)`, `(1 - 2*r1)` | presubtract SUB, ADD, INV, BIAS (§3.3.2); pins r2/r1 to src0/src1 |
//! | `in0`..`in15` (`input0`…) | program inputs (texture ids) |
//!
//! Destinations (joined with `+`, e.g. `r2+o0`): `rN[.mask]`, `oN[.mask]` (output N = render
//! target A-D, makes the instruction OUTPUT), `oc` (alpha of the result to the W output, i.e.
//! the conditional output value), `p[.mask]` (predicate bits; needs `.eq/.lt/.ge/.ne`).
//!
//! ## ALU instructions
//!
//! `mad d, a, b, c` · `add d, a, b` · `sub d, a, b` · `mul d, a, b` · `mov d, a` ·
//! `min`/`max d, a, b` · `cnd`/`cmp d, a, b, c` · `frc d, a` · `dp3`/`dp4 d, a, b` ·
//! `d2a d, a, b, c` · `ex2`/`ln2`/`rcp`/`rsq`/`sin`/`cos d, a` (scalar: the operand's last
//! swizzle component) · `end` (an OUTPUT that writes nothing).
//!
//! Both units run the op (x, y, z on the RGB unit, w on the alpha unit); dot products broadcast
//! and transcendentals are replicated through `SOP`/`DP` (§3.3.4). `add`, `sub`, `mul` are MAD
//! with a swizzle constant; `mov` is `MAX(a, a)` with the output modifier disabled (bit-exact,
//! §3.6.2). Two different ops co-issue with `||`: `dp3 r0.xyz, r1, r2 || rcp r3.w, r4.x` (the
//! left part drives the RGB unit and writes only x/y/z, the right one the alpha unit and
//! writes only w). At most three distinct registers/inline constants per instruction.
//!
//! Suffixes: `.sat` (clamp), `.x2 .x4 .x8 .d2 .d4 .d8` (output modifier), `.exact`
//! (OMOD_DISABLED), `.eq .lt .ge .ne` (predicate compare, §3.3.9), `.creq .crlt .crge .crne` /
//! `.caeq …` (write the ALU result from red / alpha, §3.3.10), `.wait` (TEX_SEM_WAIT), `.nop`,
//! `.last`, `.inactive` (WRITE_INACTIVE).
//!
//! ## Texture (input fetch) instructions
//!
//! `tex d[.mask], inN[.swz], rS[.swz]` reads input N at the coordinates in `rS` (swizzle =
//! S, T, R, Q channels; the `inN` swizzle routes returned channels to d's r, g, b, a).
//! Also `texp` (projected), `texb` (LOD bias), `texl` (explicit LOD), `texd d, inN, rS, rDX, rDY`,
//! `texu` (uncached read), `texkill rS`, `texnop`. Suffixes: `.acq`, `.wait`, `.scaled`,
//! `.ignunc`, `.inactive`. CTM inputs are addressed by element index pairs, so `UNSCALED` is
//! set unless `.scaled` is given (§3.4).
//!
//! ## Flow control (§3.5.4, emitted exactly as the guide's table)
//!
//! Conditions: `bN` (boolean constant), `p.x`…`p.w` (one predicate bit), `c` (the ALU result),
//! each optionally negated with `!`.
//! `if cond` / `else` / `endif` (static `bN` ifs use no branch counters and their `endif`
//! emits nothing), `loop iN` / `endloop`, `rep iN` / `endrep`, `break [cond]`,
//! `continue [cond]` (the assembler counts the branch frames `n`), `call label[, cond]`, `ret`,
//! `jump label[, cond]`, and the raw form `fc func=0x55, op=jump, aop=none, b0=incr, b1=none,
//! pop=1, else, any, addr=label, bool=3, int=2, pred=x, inv, global, alu_wait`.
//! Suffixes: `.wait`, `.ignunc`. Dynamic conditions set `ALU_WAIT` (§3.2.1).
//!
//! ## What the assembler adds (ctm-guide §3.1-§3.4; `.nosync` turns 2-4 off)
//!
//! 1. The last instruction must be OUTPUT ([`AsmErrorKind::LastNotOutput`]); it gets
//!    `TEX_SEM_WAIT` (§3.1).
//! 2. Texture semaphore (§3.4.2): in each run of consecutive texture instructions the last
//!    lookup sets `TEX_SEM_ACQUIRE` + `TEX_SEM_WAIT` and the next instruction waits; a lookup
//!    whose coordinates come from an earlier lookup of the run splits the run. Per the §3.7
//!    erratum, a flow-control instruction whose fall-through or jump target waits also waits.
//! 3. `ALU_WAIT` on texture instructions whose coordinate register an ALU instruction writes.
//! 4. `NOP` on an ALU instruction whose result feeds the next instruction's presubtract.
//!
//! # Judgement calls (where the guide is silent or ambiguous)
//!
//! * Bit positions and enumeration values come from amd-r5xx-acceleration §11.10 (the CTM
//!   guide names the fields only); the slot layout from r5xx §8.8.1.
//! * `TEX_INST_LOOKUP_UNCACHED` has no documented value: 7, the only one no r5xx op uses.
//! * UMRT output targets (§3.3.8) have no documented values: the builder's
//!   [`isa::Target::Output`] 0-3 would select them in the order the guide lists them; the text
//!   syntax has no UMRT form and [`ProgramInfo::uncached_output`] is set by the caller.
//! * `US_PIXSIZE` in the program-information note is the largest temporary index used, as
//!   the guide's "Largest register used" reads.
//! * The early-exit note is 1 when a `LAST` bit is set before the final slot or a `texkill`
//!   is present; the full-flow-control bit when any loop-stack or address-stack operation is
//!   used (§3.5: partial mode has no loops or subroutines).
//! * The processor's (i, j) index pair is assumed to arrive in `r0.xy` (the guide does not
//!   say where; the [`examples`] rely on it).
//!
//! # Example
//!
//! ```
//! use baregpu_dpp_asm::{Instruction, assemble_executable};
//! let mut insts = [Instruction::default(); 8];
//! let mut words = [[0u32; 6]; 8];
//! let mut elf = [0u8; 1024];
//! let len = assemble_executable(baregpu_dpp_asm::examples::SAXPY, &mut insts, &mut words, &mut elf)
//!     .expect("assembles");
//! assert_eq!(&elf[..4], b"\x7fELF");
//! assert_eq!(elf[7], 98); // ELFOSABI_ATI
//! # let _ = len;
//! ```
#![no_std]
// docs.rs (`--cfg docsrs`) marks each feature-gated item with the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]

pub mod asm;
pub mod build;
pub mod elf;
pub mod examples;
pub mod isa;

pub use asm::{AsmError, AsmErrorKind, assemble, encode_all, synchronise};
pub use elf::{ProgramInfo, write_executable};
pub use isa::{Instruction, Words};

/// Why [`assemble_executable`] failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum BuildError {
    /// Assembly failed.
    Asm(AsmError),
    /// Encoding failed (only with a too-small word buffer).
    Encode(isa::EncodeError),
    /// Writing the ELF failed.
    Elf(elf::ElfError),
}

impl core::fmt::Display for BuildError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            BuildError::Asm(_) => "assembly failed",
            BuildError::Encode(_) => "an instruction could not be encoded",
            BuildError::Elf(_) => "the executable could not be written",
        })
    }
}

impl core::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            BuildError::Asm(e) => Some(e),
            BuildError::Encode(e) => Some(e),
            BuildError::Elf(e) => Some(e),
        }
    }
}

/// Assembles `src` and writes the DPP executable into `out`, using `insts` and `words` as
/// scratch (each needs one entry per instruction). Returns the executable's length.
pub fn assemble_executable(
    src: &str,
    insts: &mut [Instruction],
    words: &mut [Words],
    out: &mut [u8],
) -> Result<usize, BuildError> {
    let n = assemble(src, insts).map_err(BuildError::Asm)?;
    let info = ProgramInfo::scan(&insts[..n]);
    encode_all(&insts[..n], words).map_err(BuildError::Encode)?;
    write_executable(&words[..n], &info, out).map_err(BuildError::Elf)
}
