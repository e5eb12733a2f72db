//! Example programs, each checked by its tests (decoded, rule-checked, values traced):
//!
//! * [`constant_colour`]: a fragment shader writing one colour.
//! * [`VARYING_COLOUR`]: a fragment shader interpolating three varyings into an RGBA8888
//!   colour.
//! * [`VPM_STORE`]: a user program writing the 16 element numbers to memory through the VPM
//!   and a VDW DMA.
//! * [`VECTOR_ADD`]: a user program adding two 16-word vectors (TMU direct lookups) and
//!   storing the sum through the VPM.
//! * [`SAXPY`]: `out = a * x + y` over rows of 16 floats, for many QPUs at once: each QPU
//!   gets its rows, addresses and VPM row from its uniforms ([`saxpy_uniforms`]).
//!
//! User programs run through the QPU scheduler's request queue (V3DPRQPC / V3DPRQUA in §3
//! "Thread Control", the SRQPC / SRQUA registers of §10): the uniforms address comes with the
//! program address.

use crate::build::{BuildError, Builder, Dst, Src};
use crate::check::ProgramKind;
use crate::isa::{Alu, Instruction, Signal};
use crate::text::{AsmError, assemble};
use crate::vpm;

/// A fragment shader writing `rgba` (the tile buffer's colour word) to every pixel:
/// load-immediate the colour, write it to TLB_COLOUR_ALL, then the thread end, a nop and a nop
/// with the scoreboard unlock (Mesa's `vc4_qpu_emit.c` ends fragment shaders so). A nop comes
/// before the tile-buffer write: the first tile-buffer access waits for the scoreboard, which
/// "must not occur in the first two instructions of a fragment shader" (§3).
pub fn constant_colour(rgba: u32, out: &mut [u64]) -> Result<&[u64], BuildError> {
    let mut b = Builder::new(out);
    b.ldi(Dst::R0, rgba)?;
    b.nops(1)?;
    b.mov(Dst::TLB_COLOUR_ALL, Src::R0)?;
    b.emit(&Instruction::Alu(Alu::signal(Signal::ProgramEnd)))?;
    b.nops(1)?;
    b.emit(&Instruction::Alu(Alu::signal(Signal::ScoreboardUnlock)))?;
    b.finish(ProgramKind::Fragment)
}

/// A fragment shader colouring pixels by three interpolated varyings (red, green, blue in
/// [0, 1]) with alpha 1.0. Each varying is `VARYING_READ * W + C` (§6 "Varyings
/// Interpolation": the read leaves C in r5 for the next instruction; W is in ra15, table 29).
/// The mul pipe's float-to-colour conversion (pm 1, §3 table 9) writes each channel into one
/// byte of r3: red in byte a (bits 7:0), green b, blue c, alpha d.
pub const VARYING_COLOUR: &str = "\
    fmul r0, vary, ra15          # red: Vp * W, C to r5
    fadd r0, r0, r5
    fmul r1, vary, ra15          # green
    fadd r1, r1, r5
    fmul r2, vary, ra15          # blue
    fadd r2, r2, r5
    nop ; fmul r3.c8a, r0, 1.0   # float to 8-bit colour, byte a
    nop ; fmul r3.c8b, r1, 1.0
    nop ; fmul r3.c8c, r2, 1.0
    nop ; fmul r3.c8d, 1.0, 1.0  # alpha 1.0
    mov tlb_color_all, r3        # waits for the scoreboard
    thrend
    nop
    sbdone
";

/// The 16 element numbers (0-15) to the address in the first uniform: a VPM write setup
/// (horizontal 32-bit rows from row 0, [`vpm::write_rows`]), one VPM row written, a VDW setup
/// (1 row of 16 words from VPM row 0, [`vpm::store_rows`]), the address written to
/// VPM_ST_ADDR (which starts the DMA), VPM_ST_WAIT read until it is done, and the end.
pub const VPM_STORE: &str = "\
    ldi vw_setup, 0x1a00          # vpm::write_rows(0)
    mov vpm, elem_num
    ldi vw_setup, 0x80904000      # vpm::store_rows(1, 16, 0)
    mov vw_addr, unif             # uniform 0: destination address
    mov r0, vw_wait
    thrend
    nop
    nop
";

/// `c[i] = a[i] + b[i]` for 16 32-bit integers. Uniforms: the addresses of `a`, `b` and `c`.
/// `a` and `b` are read through TMU0 direct lookups (one address per element; §4 "QPU
/// Interface": s-only requests), `c` written through VPM row 0 and a VDW DMA.
pub const VECTOR_ADD: &str = "\
    ldi vw_setup, 0x1a00          # vpm::write_rows(0)
    shl r0, elem_num, 2           # byte offset of each element
    add tmu0_s, unif, r0          # uniform 0: a
    add tmu0_s, unif, r0          # uniform 1: b
    mov ra1, unif                 # uniform 2: c
    ldtmu0
    mov r1, r4                    # a[i]
    ldtmu0
    add vpm, r1, r4               # a[i] + b[i]
    ldi vw_setup, 0x80904000      # vpm::store_rows(1, 16, 0)
    mov vw_addr, ra1
    mov r0, vw_wait
    thrend
    nop
    nop
";

/// `out = a * x + y` over `rows` rows of 16 floats, the rows `stride` bytes apart. Any number
/// of QPUs run it at once, each with its own uniforms ([`saxpy_uniforms`]): its rows and its
/// own VPM row; the VPM DMA is taken under the hardware mutex (MUTEX_ACQUIRE / RELEASE).
pub const SAXPY: &str = "\
    shl rb8, elem_num, 2          # byte offset of each element
    mov ra0, unif                 # a
    mov ra1, unif                 # x row address
    mov ra2, unif                 # y row address
    mov ra3, unif                 # out row address
    mov ra4, unif                 # rows left
    mov rb5, unif                 # row stride in bytes
    mov rb6, unif                 # VPM write setup for this QPU's VPM row
    mov rb7, unif                 # VDW setup for this QPU's VPM row
row:
    add tmu0_s, ra1, rb8          # x[i]
    add tmu0_s, ra2, rb8          # y[i]
    mov r0, mutex_acq
    mov vw_setup, rb6
    ldtmu0
    fmul r1, r4, ra0              # a * x[i]
    ldtmu0
    fadd vpm, r1, r4              # + y[i]
    mov vw_setup, rb7
    mov vw_addr, ra3
    mov r0, vw_wait
    mov mutex_release, r0
    add ra1, ra1, rb5
    add ra2, ra2, rb5
    add ra3, ra3, rb5
    sub.setf ra4, ra4, 1
    bra.anynz -> row
    nop
    nop
    nop
    thrend
    nop
    nop
";

/// The uniforms of one QPU running [`SAXPY`] over `rows` (at least 1) rows from `x`, `y` and
/// `out` (bus addresses), `stride` bytes apart, using VPM row `vpm_row` (distinct per QPU).
pub fn saxpy_uniforms(
    a: f32,
    x: u32,
    y: u32,
    out: u32,
    rows: u32,
    stride: u32,
    vpm_row: u8,
) -> [u32; 8] {
    [
        a.to_bits(),
        x,
        y,
        out,
        rows,
        stride,
        vpm::write_rows(vpm_row),
        vpm::store_rows(1, 16, vpm_row),
    ]
}

/// Assembles one of the text programs into `out`.
pub fn assemble_into<'o>(text: &str, out: &'o mut [u64]) -> Result<&'o [u64], AsmError> {
    let n = assemble(text, out)?;
    Ok(&out[..n])
}
