//! Example kernels in the text syntax, shared by the driver, the QEMU demos and the emulator
//! tests. Each assembles for both chips (the `fetch` clause and `end` pick the chip's form).
//!
//! All follow the [`crate::abi`]: one thread per element, global id
//! `gid = R1.x * local_size_x + R0.x`, arrays of 32-bit elements addressed by byte-address
//! kernel arguments, reads through fetch buffer 1, writes through RAT 0. None checks bounds:
//! the dispatch must cover exactly the elements (global size x = element count, y = z = 1).
//! The gid prologue multiplies with `mullo_uint` (Evergreen: t slot; Cayman: all four vector
//! slots, §4.2), except [`REDUCE_ADD`], which uses the 24-bit `muladd_uint24` (valid while the
//! group id and the local size stay below 2^24).
//!
//! Floating-point results equal the CPU's `f32` arithmetic (IEEE-754, round to nearest even)
//! whenever the inputs and results are normal numbers (the ALU may flush denormals); the
//! kernels use `mul_ieee` and `add` as separate instructions, so no fused multiply-add is
//! involved.

/// Vector add, f32: `c[gid] = a[gid] + b[gid]`.
///
/// Arguments: dword 9 = byte address of `a`, dword 10 = of `b`, dword 11 = of `c`.
/// Reads `a[gid]`, `b[gid]`; writes `c[gid]` (one dword, the chip's cacheless global store).
pub const VECTOR_ADD: &str = "\
; c[gid] = a[gid] + b[gid] (f32)
alu
    mullo_uint r2.x, r1.x, cb0[1].z     ; group id * local size x
    add_int r2.x, r2.x, r0.x            ; gid
    lshl_int r2.y, r2.x, 2              ; byte offset of element gid
    { add_int r3.x, r2.y, cb0[2].y      ; &a[gid]
      add_int r3.y, r2.y, cb0[2].z      ; &b[gid]
      add_int r3.z, r2.y, cb0[2].w }    ; &c[gid]
    lshr_int r6.x, r3.z, 2              ; RAT index: dword address of c[gid]
fetch
    vfetch r4.x___, r3.x, vb1           ; a[gid]
    vfetch r5.x___, r3.y, vb1           ; b[gid]
alu
    add r4.x, r4.x, r5.x
mem_rat_cacheless store rat0[r6.x], r4.x
end
";

/// SAXPY, f32: `y[gid] = a * x[gid] + y[gid]`, the product rounded to f32 before the
/// addition (`mul_ieee`, then `add`).
///
/// Arguments: dword 9 = `a` (f32 bits), dword 10 = byte address of `x`, dword 11 = of `y`.
/// Reads `x[gid]`, `y[gid]`; writes `y[gid]`.
pub const SAXPY: &str = "\
; y[gid] = a * x[gid] + y[gid] (f32)
alu
    mullo_uint r2.x, r1.x, cb0[1].z
    add_int r2.x, r2.x, r0.x            ; gid
    lshl_int r2.y, r2.x, 2
    { add_int r3.x, r2.y, cb0[2].z      ; &x[gid]
      add_int r3.y, r2.y, cb0[2].w }    ; &y[gid]
    lshr_int r6.x, r3.y, 2              ; RAT index of y[gid]
fetch
    vfetch r4.x___, r3.x, vb1           ; x[gid]
    vfetch r5.x___, r3.y, vb1           ; y[gid]
alu
    mul_ieee r4.x, cb0[2].y, r4.x       ; a * x[gid]
    add r4.x, r4.x, r5.x                ; + y[gid]
mem_rat_cacheless store rat0[r6.x], r4.x
end
";

/// Reduction, u32: every thread atomically adds `a[gid]` to the dword `*sum` (RAT `ADD`, no
/// return value), so after the dispatch `*sum` = its old value + Σ `a[i]` over the dispatched
/// elements, modulo 2^32, in whatever order the atomics land.
///
/// Arguments: dword 9 = byte address of `a`, dword 10 = byte address of `sum`.
pub const REDUCE_ADD: &str = "\
; *sum += a[gid] (u32, atomic)
alu
    muladd_uint24 r2.x, r1.x, cb0[1].z, r0.x   ; gid (24-bit multiply-add)
    lshl_int r2.y, r2.x, 2
    add_int r3.x, r2.y, cb0[2].y        ; &a[gid]
    lshr_int r6.x, cb0[2].z, 2          ; RAT index of *sum
fetch
    vfetch r4.x___, r3.x, vb1           ; a[gid]
mem_rat add rat0[r6.x], r4.x
end
";

/// Branchy kernel, u32: one Collatz step with a data-dependent if/else,
/// `out[gid] = v odd ? 3 * v + 1 : v / 2` where `v = in[gid]` (wrapping 32-bit arithmetic).
///
/// Flow control in Mesa's if/else form: `ALU_PUSH_BEFORE` pushes the active mask and
/// `PRED_SETNE_INT` (with `UPDATE_EXEC_MASK`) keeps the odd threads active; `JUMP` skips the
/// odd branch to the `ELSE` when no thread is odd; `ELSE` activates the even threads (jumping
/// past the `POP`, popping one entry, when none is even); `POP` restores the mask.
///
/// Arguments: dword 9 = byte address of `in`, dword 10 = byte address of `out`.
pub const COLLATZ_STEP: &str = "\
; out[gid] = in[gid] odd ? 3 * in[gid] + 1 : in[gid] >> 1 (u32)
alu
    mullo_uint r2.x, r1.x, cb0[1].z
    add_int r2.x, r2.x, r0.x            ; gid
    lshl_int r2.y, r2.x, 2
    { add_int r3.x, r2.y, cb0[2].y      ; &in[gid]
      add_int r3.y, r2.y, cb0[2].z }    ; &out[gid]
    lshr_int r6.x, r3.y, 2              ; RAT index of out[gid]
fetch
    vfetch r4.x___, r3.x, vb1           ; v
alu_push_before
    and_int r5.x, r4.x, 1
    pred_setne_int.exec.pred _.x, r5.x, 0   ; active: odd v
jump even
alu
    mullo_uint r7.x, r4.x, 3
    add_int r7.x, r7.x, 1               ; 3v + 1
even:
else done, pop=1                        ; active: even v
alu
    lshr_int r7.x, r4.x, 1              ; v / 2
pop 1
done:
mem_rat_cacheless store rat0[r6.x], r7.x
end
";

/// Loop kernel, u32: `out[gid]` = the number of significant bits of `v = in[gid]` (0 for 0,
/// 32 for v ≥ 2^31), counted by a data-dependent DX10 loop that shifts v right until it is 0.
/// Threads leave the loop at different iterations.
///
/// Each iteration: `ALU_PUSH_BEFORE` with `PRED_SETE_INT` keeps the threads whose v is 0;
/// `JUMP` (popping one entry) skips the break when there are none; `LOOP_BREAK` takes them
/// out of the loop (jumping to `LOOP_END`, popping one entry, once no thread is left in the
/// loop); `POP` restores the others; the body shifts and counts; `LOOP_END` repeats while any
/// thread is in the loop.
///
/// Arguments: dword 9 = byte address of `in`, dword 10 = byte address of `out`.
pub const BIT_LENGTH: &str = "\
; out[gid] = bit length of in[gid] (u32), by a loop
alu
    mullo_uint r2.x, r1.x, cb0[1].z
    add_int r2.x, r2.x, r0.x            ; gid
    lshl_int r2.y, r2.x, 2
    { add_int r3.x, r2.y, cb0[2].y      ; &in[gid]
      add_int r3.y, r2.y, cb0[2].z }    ; &out[gid]
    lshr_int r6.x, r3.y, 2
fetch
    vfetch r4._x__, r3.x, vb1           ; r4.y = v (destination select: y <- element x)
alu
    mov r7.x, 0                         ; count
loop_start_dx10
alu_push_before
    pred_sete_int.exec.pred _.y, r4.y, 0    ; active: finished threads (v == 0)
jump body, pop=1                        ; none finished: skip the break
loop_break pop=1
pop 1
body:
alu
    { lshr_int r4.y, r4.y, 1            ; v >>= 1
      add_int r7.x, r7.x, 1 }           ; count++ (same group: reads the old values)
loop_end
mem_rat_cacheless store rat0[r6.x], r7.x
end
";

/// Every example, by name.
pub const ALL: [(&str, &str); 5] = [
    ("vector_add", VECTOR_ADD),
    ("saxpy", SAXPY),
    ("reduce_add", REDUCE_ADD),
    ("collatz_step", COLLATZ_STEP),
    ("bit_length", BIT_LENGTH),
];
