//! Floating point as the DPP does it (CTM guide §3.6): denormals flushed to signed zero,
//! extra range inside non-transcendental ops, output modifiers standardising NaN, the special
//! values of the transcendental table (§3.6.3) and comparisons against zero (§3.6.1).

/// The standardised NaN produced by the output modifier (§3.3.5).
pub const STD_NAN: u32 = 0x7fff_ffff;

/// Flush an f32 denormal to a zero of the same sign (§3.6.1).
pub fn ftz(v: f32) -> f32 {
    if v.is_subnormal() { f32::from_bits(v.to_bits() & 0x8000_0000) } else { v }
}

/// f64 → f32 with IEEE overflow to ±Inf and flushing of denormal results (§3.6.2).
pub fn to_f32_ftz(v: f64) -> f32 {
    ftz(v as f32)
}

/// Inline constant (§3.3.1): unsigned, 4-bit exponent (bias 7), 3-bit mantissa; exponent 0
/// is denormal (m * 2^-9) except that the all-zero pattern means 2^-10.
pub fn inline_const(bits7: u32) -> f32 {
    let e = (bits7 >> 3) & 0xf;
    let m = bits7 & 7;
    if e == 0 {
        if m == 0 { 2f32.powi(-10) } else { m as f32 * 2f32.powi(-9) }
    } else {
        2f32.powi(e as i32 - 7) * (1.0 + m as f32 / 8.0)
    }
}

/// §3.3.9 / §3.3.10 comparison of a channel against zero (ops 0 ==, 1 <, 2 >=, 3 !=), with
/// the special values of the §3.6.1 table: NaN is only "!= 0"; denormals equal zero.
pub fn compare_zero(v: f32, op: u32) -> bool {
    let v = ftz(v);
    match op & 3 {
        0 => v == 0.0,
        1 => v < 0.0,
        2 => v >= 0.0,
        _ => v != 0.0,
    }
}

/// The transcendental ops of §3.3.4 with the special values of §3.6.3. The result is an f32
/// (no extra range): overflow is Inf, denormal results are signed zero.
pub fn transcendental(op: u32, a: f32) -> f32 {
    let a = ftz(a);
    let x = f64::from(a);
    let r: f32 = match op {
        // EX2: 2^A
        8 => x.exp2() as f32,
        // LN2: log2(A); ±0 → -Inf, negative → NaN, +Inf → +Inf
        9 => {
            if a == 0.0 {
                f32::NEG_INFINITY
            } else if a < 0.0 {
                f32::NAN
            } else {
                x.log2() as f32
            }
        }
        // RCP: 1/A; ±0 → ±Inf, ±Inf → ±0
        10 => (1.0 / x) as f32,
        // RSQ: 1/sqrt(A); -0 → +Inf (the deviation noted under the §3.6.3 table)
        11 => {
            if a == 0.0 {
                f32::INFINITY
            } else if a < 0.0 {
                f32::NAN
            } else {
                (1.0 / x.sqrt()) as f32
            }
        }
        // SIN / COS of A*2pi; ±Inf and NaN → NaN; SIN(±0) = ±0, COS(±0) = 1
        12 | 13 => {
            if !a.is_finite() {
                f32::NAN
            } else if a == 0.0 {
                if op == 12 { a } else { 1.0 }
            } else {
                let frac = x - x.floor();
                let t = frac * core::f64::consts::TAU;
                (if op == 12 { t.sin() } else { t.cos() }) as f32
            }
        }
        _ => f32::NAN,
    };
    ftz(r)
}

/// Output modifier (§3.3.5) and clamp: `omod` 0-6 multiply by 1, 2, 4, 8, 1/2, 1/4, 1/8;
/// NaN becomes [`STD_NAN`], denormals flush; clamp to [0, 1] afterwards (NaN clamps to 0, a
/// judgement call: the guide does not say).
pub fn output_modifier(v: f64, omod: u32, clamp: bool) -> f32 {
    let k = match omod {
        1 => 2.0,
        2 => 4.0,
        3 => 8.0,
        4 => 0.5,
        5 => 0.25,
        6 => 0.125,
        _ => 1.0,
    };
    let r = v * k;
    let mut out = if r.is_nan() { f32::from_bits(STD_NAN) } else { to_f32_ftz(r) };
    if clamp {
        out = if out.is_nan() { 0.0 } else { out.clamp(0.0, 1.0) };
    }
    out
}
