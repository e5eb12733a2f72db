//! What each ALU operation computes for one thread.
//!
//! Floating point decisions (the documents give none; these follow the D3D10-class behaviour the
//! chips were built for, and are what the tests pin):
//! - IEEE-754 binary32, round to nearest even, in every arithmetic operation.
//! - Denormals are flushed to zero (sign kept) on the inputs and the result of float
//!   arithmetic: Evergreen/Cayman single precision has no denormal support (OpenCL drivers for
//!   them report no `CL_FP_DENORM`).
//! - A NaN produced by arithmetic is the quiet NaN `0x7FC00000` (host NaN payloads differ).
//! - MUL and MULADD are the legacy forms: 0 times anything (infinity and NaN included) is 0 with
//!   the sign of the product; MUL_IEEE / MULADD_IEEE follow IEEE. MULADD* round the product
//!   before the add (FMA is a separate opcode, not in the subset).
//! - MAX is `src0 >= src1 ? src0 : src1`, MIN `src0 < src1 ? src0 : src1` (a NaN in src0 selects
//!   src1); MAX_DX10/MIN_DX10 return the non-NaN operand.
//! - SETxx give 1.0/0.0; SETxx_DX10 and the integer SETs give 0xFFFFFFFF/0 (Mesa r600_isa.c
//!   result types). PRED_SETxx write 0.0 where the predicate passes and 1.0 where it fails
//!   (R600-family ISA definition: the result counts skipped levels); drivers write them with
//!   WRITE_MASK 0.
//! - FLT_TO_INT / FLT_TO_UINT round to nearest even and saturate, NaN gives 0: both Mesa and
//!   LLVM emit TRUNC before them for C casts, which only makes sense if they do not truncate.
//! - RECIP_IEEE is correctly rounded (1/x; 1/±0 = ±inf).
//! - MOV, CNDxx and the vertex/RAT paths move bits unchanged (MOV is how compilers copy
//!   integers); only NEG/ABS (sign bit), CLAMP and OMOD change a MOV result.
//! - CLAMP clamps to [0, 1]; a NaN becomes 0 when SQ_PGM_RESOURCES DX10_CLAMP is set and passes
//!   through otherwise. OMOD (x2, x4, /2) applies before CLAMP.
//! - Shift counts use bits 4:0 (D3D10). MUL_UINT24 / MULADD_UINT24 use bits 23:0 of the factors
//!   and keep the low 32 bits. BFE/BFI follow D3D11 ubfe/ibfe/bfi with offset and width from
//!   bits 4:0.

use super::decode::{AluInst, Src};
use super::isa::{AluOp, Kind};

/// The NaN arithmetic produces.
pub const CANONICAL_NAN: u32 = 0x7FC0_0000;
const ONE: u32 = 0x3F80_0000;

fn ftz(x: f32) -> f32 {
    if x.is_subnormal() { 0.0f32.copysign(x) } else { x }
}

fn f(v: u32) -> f32 {
    ftz(f32::from_bits(v))
}

fn out(x: f32) -> u32 {
    let x = ftz(x);
    if x.is_nan() { CANONICAL_NAN } else { x.to_bits() }
}

fn fbool(v: bool) -> u32 {
    if v { ONE } else { 0 }
}

fn mask(v: bool) -> u32 {
    if v { u32::MAX } else { 0 }
}

/// PRED_SET* result: 0.0 passes (see module docs).
fn pred(v: bool) -> (u32, Option<bool>) {
    (if v { 0 } else { ONE }, Some(v))
}

fn mul_legacy(a: f32, b: f32) -> f32 {
    if a == 0.0 || b == 0.0 {
        f32::from_bits((a.to_bits() ^ b.to_bits()) & 0x8000_0000)
    } else {
        a * b
    }
}

fn bfe(a: u32, offset: u32, width: u32, signed: bool) -> u32 {
    let (offset, width) = (offset & 31, width & 31);
    if width == 0 {
        return 0;
    }
    if offset + width < 32 {
        let up = a << (32 - width - offset);
        if signed { ((up as i32) >> (32 - width)) as u32 } else { up >> (32 - width) }
    } else if signed {
        ((a as i32) >> offset) as u32
    } else {
        a >> offset
    }
}

/// Source after NEG/ABS (sign-bit operations, as on float data).
pub(crate) fn source_modifiers(v: u32, s: &Src) -> u32 {
    let v = if s.abs { v & 0x7FFF_FFFF } else { v };
    if s.neg { v ^ 0x8000_0000 } else { v }
}

/// Result after OMOD and CLAMP (float results only; the decoder refuses them elsewhere).
pub(crate) fn result_modifiers(v: u32, inst: &AluInst, dx10_clamp: bool) -> u32 {
    if !matches!(inst.op.info().kind, Kind::FloatToFloat | Kind::IntToFloat)
        || (inst.omod == 0 && !inst.clamp)
    {
        return v;
    }
    let mut x = f(v);
    x *= match inst.omod {
        1 => 2.0,
        2 => 4.0,
        3 => 0.5,
        _ => 1.0,
    };
    if inst.clamp {
        if x.is_nan() {
            if dx10_clamp {
                x = 0.0;
            }
        } else {
            // x is not NaN here; -0.0 clamps to +0.0.
            x = x.clamp(0.0, 1.0) + 0.0;
        }
    }
    out(x)
}

/// Evaluate `op` on sources `a`, `b`, `c` (modifiers applied): the result and, for PRED_SET*,
/// the predicate.
pub(crate) fn eval(op: AluOp, a: u32, b: u32, c: u32) -> (u32, Option<bool>) {
    use AluOp::*;
    let (x, y) = (f(a), f(b));
    let v = match op {
        Add => out(x + y),
        Mul => out(mul_legacy(x, y)),
        MulIeee => out(x * y),
        Max => out(if x >= y { x } else { y }),
        Min => out(if x < y { x } else { y }),
        MaxDx10 => out(x.max(y)),
        MinDx10 => out(x.min(y)),
        SetE => fbool(x == y),
        SetGt => fbool(x > y),
        SetGe => fbool(x >= y),
        SetNe => fbool(x != y),
        SetEDx10 => mask(x == y),
        SetGtDx10 => mask(x > y),
        SetGeDx10 => mask(x >= y),
        SetNeDx10 => mask(x != y),
        Fract => out(x - x.floor()),
        Trunc => out(x.trunc()),
        Ceil => out(x.ceil()),
        Rndne => out(x.round_ties_even()),
        Floor => out(x.floor()),
        AshrInt => ((a as i32) >> (b & 31)) as u32,
        LshrInt => a >> (b & 31),
        LshlInt => a << (b & 31),
        Mov => a,
        Nop => 0,
        PredSetGtUint => return pred(a > b),
        PredSetGeUint => return pred(a >= b),
        PredSetE => return pred(x == y),
        PredSetGt => return pred(x > y),
        PredSetGe => return pred(x >= y),
        PredSetNe => return pred(x != y),
        PredSetEInt => return pred(a == b),
        PredSetGtInt => return pred((a as i32) > (b as i32)),
        PredSetGeInt => return pred((a as i32) >= (b as i32)),
        PredSetNeInt => return pred(a != b),
        AndInt => a & b,
        OrInt => a | b,
        XorInt => a ^ b,
        NotInt => !a,
        AddInt => a.wrapping_add(b),
        SubInt => a.wrapping_sub(b),
        MaxInt => (a as i32).max(b as i32) as u32,
        MinInt => (a as i32).min(b as i32) as u32,
        MaxUint => a.max(b),
        MinUint => a.min(b),
        SetEInt => mask(a == b),
        SetGtInt => mask((a as i32) > (b as i32)),
        SetGeInt => mask((a as i32) >= (b as i32)),
        SetNeInt => mask(a != b),
        SetGtUint => mask(a > b),
        SetGeUint => mask(a >= b),
        // `as` saturates and maps NaN to 0.
        FltToInt => x.round_ties_even() as i32 as u32,
        FltToUint => x.round_ties_even() as u32,
        RecipIeee => out(1.0 / x),
        MulloInt | MulloUint => a.wrapping_mul(b),
        MulhiInt => ((i64::from(a as i32) * i64::from(b as i32)) >> 32) as u32,
        MulhiUint => ((u64::from(a) * u64::from(b)) >> 32) as u32,
        IntToFlt => out(a as i32 as f32),
        UintToFlt => out(a as f32),
        MulUint24 => (a & 0xFF_FFFF).wrapping_mul(b & 0xFF_FFFF),
        MuladdUint24 => (a & 0xFF_FFFF).wrapping_mul(b & 0xFF_FFFF).wrapping_add(c),
        BfeUint => bfe(a, b, c, false),
        BfeInt => bfe(a, b, c, true),
        BfiInt => (a & b) | (!a & c),
        Muladd => out(ftz(mul_legacy(x, y)) + f(c)),
        MuladdIeee => out(ftz(x * y) + f(c)),
        Cnde => {
            if x == 0.0 {
                b
            } else {
                c
            }
        }
        Cndgt => {
            if x > 0.0 {
                b
            } else {
                c
            }
        }
        Cndge => {
            if x >= 0.0 {
                b
            } else {
                c
            }
        }
        CndeInt => {
            if a == 0 {
                b
            } else {
                c
            }
        }
        CndgtInt => {
            if (a as i32) > 0 {
                b
            } else {
                c
            }
        }
        CndgeInt => {
            if (a as i32) >= 0 {
                b
            } else {
                c
            }
        }
    };
    (v, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(op: AluOp, a: u32, b: u32, c: u32) -> u32 {
        eval(op, a, b, c).0
    }
    fn fl(x: f32) -> u32 {
        x.to_bits()
    }

    #[test]
    fn float_rules() {
        // Legacy MUL: 0 * inf = 0; IEEE: NaN (canonical).
        assert_eq!(e(AluOp::Mul, 0, fl(f32::INFINITY), 0), 0);
        assert_eq!(e(AluOp::MulIeee, 0, fl(f32::INFINITY), 0), CANONICAL_NAN);
        // Denormal input flushed: 1e-45 + 0 = +0.
        assert_eq!(e(AluOp::Add, 1, 0, 0), 0);
        // Denormal result flushed: 1.5 * 2^-126 - 2^-126 = 2^-127 (denormal) -> 0.
        assert_eq!(e(AluOp::Add, 0x00C0_0000, 0x8080_0000, 0), 0);
        // FLT_TO_INT rounds to nearest even and saturates.
        assert_eq!(e(AluOp::FltToInt, fl(2.5), 0, 0), 2);
        assert_eq!(e(AluOp::FltToInt, fl(-3.5), 0, 0), -4i32 as u32);
        assert_eq!(e(AluOp::FltToInt, fl(3e9), 0, 0), i32::MAX as u32);
        assert_eq!(e(AluOp::FltToUint, fl(-1.0), 0, 0), 0);
        assert_eq!(e(AluOp::FltToInt, CANONICAL_NAN, 0, 0), 0);
        // MAX: NaN in src0 selects src1, NaN in src1 is returned.
        assert_eq!(e(AluOp::Max, CANONICAL_NAN, fl(1.0), 0), fl(1.0));
        assert_eq!(e(AluOp::Max, fl(1.0), CANONICAL_NAN, 0), CANONICAL_NAN);
        assert_eq!(e(AluOp::MaxDx10, fl(1.0), CANONICAL_NAN, 0), fl(1.0));
    }

    #[test]
    fn bitfields() {
        assert_eq!(e(AluOp::BfeUint, 0xABCD_1234, 8, 8), 0x12);
        assert_eq!(e(AluOp::BfeInt, 0x0000_8000, 12, 4), 0xFFFF_FFF8);
        assert_eq!(e(AluOp::BfeUint, 0xABCD_1234, 28, 8), 0xA);
        assert_eq!(e(AluOp::BfeUint, 0xFFFF_FFFF, 3, 0), 0);
        assert_eq!(e(AluOp::BfiInt, 0x0000_FFFF, 0x1234_5678, 0xABCD_EF01), 0xABCD_5678);
    }
}
