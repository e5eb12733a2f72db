//! Example programs, shared by the QEMU demos and the emulator tests.
//!
//! Convention (a judgement call; the guide does not say how a processor learns its index
//! pair): the processor's (i, j) index pair is in `r0.xy` when the program starts. Inputs are
//! read with unscaled (element index) coordinates; outputs are written at (i, j) (ctm-guide
//! §2.1.1). Every example assembles (see the tests).

/// `out0 = in0 + in1`, element-wise.
pub const VECTOR_ADD: &str = "\
; out0 = in0 + in1
    tex r1, in0, r0         ; r1 = in0[i, j]
    tex r2, in1, r0         ; r2 = in1[i, j]
    add o0, r1, r2
";

/// SAXPY: `out0 = a * in0 + in1` with `a` in `c0.x`.
pub const SAXPY: &str = "\
; out0 = c0.x * in0 + in1
    tex r1, in0, r0
    tex r2, in1, r0
    mad o0, c0.x, r1, r2
";

/// 4-point stencil: `out0[i, j]` = average of `in0` at (i-1, j), (i+1, j), (i, j-1), (i, j+1)
/// (the input may be tiled: the tiling is the memory controller's business, §2.1.4).
pub const STENCIL4: &str = "\
; out0 = (in0[i-1,j] + in0[i+1,j] + in0[i,j-1] + in0[i,j+1]) / 4
    add r1.xy, r0, -r0.10   ; (i-1, j): r0.10 is the swizzle constant (1, 0, 0, 0)
    add r2.xy, r0, r0.10    ; (i+1, j)
    add r3.xy, r0, -r0.01   ; (i, j-1)
    add r4.xy, r0, r0.01    ; (i, j+1)
    tex r5, in0, r1
    tex r6, in0, r2
    tex r7, in0, r3
    tex r8, in0, r4
    add r9, r5, r6
    add r10, r7, r8
    add.d4 o0, r9, r10      ; output modifier: divide by 4
";

/// Reduction step: `out0[i, j]` = sum of `in0` over the 2x2 block at (2i, 2j); the sum's
/// first component is also the conditional output value (W output, ctm-guide §4.1.4
/// `FG_DEPTH_SRC`), so with `set_cond_loc` = DPP the write happens only where the conditional
/// test passes.
pub const REDUCE_2X2: &str = "\
; out0 = in0[2i,2j] + in0[2i+1,2j] + in0[2i,2j+1] + in0[2i+1,2j+1]; cond = sum.x
    add r1.xy, r0, r0       ; (2i, 2j)
    add r2.xy, r1, r0.10    ; (2i+1, 2j)
    add r3.xy, r1, r0.01    ; (2i, 2j+1)
    add r4.xy, r1, r0.11    ; (2i+1, 2j+1)
    tex r5, in0, r1
    tex r6, in0, r2
    tex r7, in0, r3
    tex r8, in0, r4
    add r9, r5, r6
    add r10, r7, r8
    add r11, r9, r10
    mov o0, r11
    mov oc, r11.x           ; conditional output value
";

/// Branching: `out0 = in0 < 0 ? -in0 : 2 * in0` per element, with a dynamic if/else on a
/// predicate bit (full §3.5.4 IF p / ELSE / ENDIF sequence).
pub const SIGN_BRANCH: &str = "\
    tex r1, in0, r0
    mov.lt p.x, r1.x        ; p.x = (in0.x < 0)
    if p.x
    mov r2, -r1
    else
    add r2, r1, r1
    endif
    mov o0, r2
";

/// Loop with relative addressing: `out0 = in0 + sum of c[aL]` over the iterations of integer
/// constant i0 (red: count, green: initial aL, blue: increment; ctm-guide §3.5.3).
pub const CONST_LOOP: &str = "\
    tex r1, in0, r0
    loop i0
    add r1, r1, c0[aL]
    endloop
    mov o0, r1
";

/// Every example, by name.
pub const ALL: [(&str, &str); 6] = [
    ("vector_add", VECTOR_ADD),
    ("saxpy", SAXPY),
    ("stencil4", STENCIL4),
    ("reduce_2x2", REDUCE_2X2),
    ("sign_branch", SIGN_BRANCH),
    ("const_loop", CONST_LOOP),
];
