//! ALU operations, modifiers, §3.6 special values (CTM guide §3.3, §3.6).
mod common;
use common::*;

const ABC_RGB: u32 = RGB_A_SRC0 | RGB_B_SRC1;
const ABC_A: u32 = A_A_SRC0 | A_B_SRC1;

/// rgb op in RGBA_INST 3:0, alpha op in ALPHA_INST 3:0 (§11.10 tables).
fn op(c: [[f32; 4]; 3], rgb_op: u32, alpha_op: u32) -> [f32; 4] {
    run_alu(c, 0, ABC_RGB, ABC_A | alpha_op, RGB_C_SRC2 | A_C_SRC2 | rgb_op)
}

#[test]
fn mad_min_max_cnd_cmp_frc() {
    // §3.3.4 OP_*_MAD = A*B + C: 2*3+1 = 7; alpha 4*0.5+(-1) = 1.
    let c = [[2.0, -1.0, 0.25, 4.0], [3.0, 5.0, 4.0, 0.5], [1.0, 1.0, 0.6, -1.0]];
    assert_eq!(op(c, 0, 0), [7.0, -4.0, 1.6, 1.0]);
    // MIN (rgb 4, alpha 2), MAX (rgb 5, alpha 3).
    assert_eq!(op(c, 4, 2), [2.0, -1.0, 0.25, 0.5]);
    assert_eq!(op(c, 5, 3), [3.0, 5.0, 4.0, 4.0]);
    // CND (rgb 7, alpha 5): C > 0.5 ? A : B. C = (1, 1, 0.6, -1).
    assert_eq!(op(c, 7, 5), [2.0, -1.0, 0.25, 0.5]);
    // CMP (rgb 8, alpha 6): C >= 0 ? A : B.
    assert_eq!(op(c, 8, 6), [2.0, -1.0, 0.25, 0.5]);
    // FRC (rgb 9, alpha 7): A - floor(A): 2 → 0, -1 → 0, 0.25, 4 → 0.
    assert_eq!(op([[2.5, -1.25, 0.25, 4.0], [0.0; 4], [0.0; 4]], 9, 7), [0.5, 0.75, 0.25, 0.0]);
}

#[test]
fn dot_products_and_alpha_dp() {
    let c = [[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [0.0, 0.0, 10.0, 0.0]];
    // DP3 (1) broadcast 5+12+21 = 38, alpha OP_DP (1) copies it.
    assert_eq!(op(c, 1, 1), [38.0; 4]);
    // DP4 (2): + A.a*B.a from the alpha unit's inputs = 38 + 32 = 70.
    assert_eq!(op(c, 2, 1), [70.0; 4]);
    // D2A (3): 5 + 12 + C.b (10) = 27.
    assert_eq!(op(c, 3, 1), [27.0; 4]);
}

#[test]
fn transcendentals_via_sop() {
    // RGB SOP (10) replicates the alpha transcendental; alpha input A = c0.a.
    let t = |alpha_op: u32, a: f32| op([[0.0, 0.0, 0.0, a], [0.0; 4], [0.0; 4]], 10, alpha_op);
    assert_eq!(t(8, 3.0), [8.0; 4]); // EX2
    assert_eq!(t(9, 8.0), [3.0; 4]); // LN2
    assert_eq!(t(10, 4.0), [0.25; 4]); // RCP
    assert_eq!(t(11, 16.0), [0.25; 4]); // RSQ
    assert!((t(12, 0.25)[0] - 1.0).abs() < 1e-6); // SIN(A*2pi)
    assert!((t(13, 0.5)[3] + 1.0).abs() < 1e-6); // COS
    // §3.6.3 table.
    assert_eq!(t(8, f32::NEG_INFINITY)[0], 0.0);
    assert_eq!(t(9, 0.0)[0], f32::NEG_INFINITY);
    assert_eq!(t(10, -0.0)[0], f32::NEG_INFINITY);
    assert_eq!(t(11, -0.0)[0], f32::INFINITY); // the documented deviation
    assert!(t(11, f32::NEG_INFINITY)[0].is_nan());
    assert_eq!(t(12, -0.0)[0].to_bits(), (-0.0f32).to_bits());
    assert!(t(13, f32::INFINITY)[0].is_nan());
    // SOP without a transcendental partner is invalid (§3.3.4).
    let mut m = mem();
    load_program(&mut m, &[[OUT_ALL_LAST, 0, 0, 0, 0, 10]]);
    assert!(
        run(&mut m, &[set_inst_fmt(), set_out(0, OUT0, fmt(64, 0, F32X4), 1), START.to_vec()])
            .is_err()
    );
}

#[test]
fn special_values_3_6() {
    // §3.6.2: 0 * Inf = NaN, standardised by the output modifier to 0x7fffffff (§3.3.5).
    let r = op(
        [
            [0.0, f32::INFINITY, f32::INFINITY, 0.0],
            [f32::INFINITY, f32::INFINITY, -1.0, 0.0],
            [0.0; 4],
        ],
        0,
        0,
    );
    assert_eq!(r[0].to_bits(), 0x7fff_ffff);
    assert_eq!(r[1], f32::INFINITY); // Inf * Inf
    assert_eq!(r[2], f32::NEG_INFINITY); // Inf * -1
    // Inf + -Inf = NaN; -0 + -0 = -0 (A * 1 + C with B = 1 via c1).
    let r =
        op([[f32::INFINITY, -0.0, 1.0, 1.0], [1.0; 4], [f32::NEG_INFINITY, -0.0, 0.0, 0.0]], 0, 0);
    assert!(r[0].is_nan());
    assert_eq!(r[1].to_bits(), (-0.0f32).to_bits());
    // Denormal inputs flush (§3.6.1): denormal * 2^100 = 0.
    let den = f32::from_bits(1);
    let r = op([[den, 0.0, 0.0, 0.0], [2f32.powi(100), 0.0, 0.0, 0.0], [0.0; 4]], 0, 0);
    assert_eq!(r[0], 0.0);
    // Extra range (§3.6.2): 2^100 * 2^100 overflows f32 but OMOD /8... still out of range;
    // 2^127 * 4 / 8 = 2^126 is brought back: OMOD 6 (/8) at RGB_INST 28:26.
    let r = run_alu(
        [[2f32.powi(127), 0.0, 0.0, 0.0], [4.0, 0.0, 0.0, 0.0], [0.0; 4]],
        0,
        ABC_RGB | (6 << 26),
        ABC_A,
        RGB_C_SRC2 | A_C_SRC2,
    );
    assert_eq!(r[0], 2f32.powi(126));
    // MIN(+0, -0) = -0 and MIN(-0, +0) = +0 with OMOD_DISABLED (7) (§3.6.2).
    let r = run_alu(
        [[0.0, -0.0, f32::NAN, 1.0], [-0.0, 0.0, 1.0, f32::NAN], [0.0; 4]],
        0,
        ABC_RGB | (7 << 26),
        ABC_A | 2 | (7 << 26),
        RGB_C_SRC2 | A_C_SRC2 | 4,
    );
    assert_eq!(r[0].to_bits(), (-0.0f32).to_bits());
    assert_eq!(r[1].to_bits(), 0.0f32.to_bits());
    assert_eq!(r[2], 1.0); // NaN → second argument
    assert!(r[3].is_nan()); // second argument is the NaN
}

#[test]
fn modifiers_presubtract_clamp_inline() {
    // IMOD (RGB_MOD_A 12:11): NEG 1, ABS 2, NAB 3 on A; MAD with B = 1 (swizzle One = 6).
    let b_one = (1 << 13) | (6 << 15) | (6 << 18) | (6 << 21);
    let c_zero = (2 << 12) | (4 << 14) | (4 << 17) | (4 << 20);
    let c = [[-2.0, 3.0, -4.0, 0.0], [0.0; 4], [0.0; 4]];
    let r = |m: u32| run_alu(c, 0, RGB_A_SRC0 | (m << 11) | b_one, ABC_A, c_zero);
    assert_eq!(&r(1)[..3], &[2.0, -3.0, 4.0]);
    assert_eq!(&r(2)[..3], &[2.0, 3.0, 4.0]);
    assert_eq!(&r(3)[..3], &[-2.0, -3.0, -4.0]);
    // Presubtract (SRCP_OP 31:30 of ALU_RGB_ADDR): A = srcp (SEL_A = 3).
    let c = [[0.25, 1.0, 2.0, 0.0], [1.0, 1.0, 1.0, 0.0], [0.0; 4]];
    let p = |sop: u32| {
        let mut m = mem();
        for (k, cc) in c.iter().enumerate() {
            for (ch, v) in cc.iter().enumerate() {
                m.write_f32(CONST_BASE + 16 * k as u32 + 4 * ch as u32, *v).unwrap();
            }
        }
        let addr = CONST_ADDRS_012 | (sop << 30);
        load_program(&mut m, &[[OUT_ALL_LAST, addr, addr, 3 | RGB_A_SRC0 | b_one, ABC_A, c_zero]]);
        run(
            &mut m,
            &[
                set_inst_fmt(),
                set_constf(F32X4),
                set_out(0, OUT0, fmt(64, 0, F32X4), 1),
                START.to_vec(),
                FLUSH_OUT.to_vec(),
            ],
        )
        .unwrap();
        [0, 4, 8].map(|o| m.read_f32(OUT0 + o).unwrap())
    };
    assert_eq!(p(0), [0.5, -1.0, -3.0]); // 1 - 2*src0
    assert_eq!(p(1), [0.75, 0.0, -1.0]); // src1 - src0
    assert_eq!(p(2), [1.25, 2.0, 3.0]); // src1 + src0
    assert_eq!(p(3), [0.75, 0.0, -1.0]); // 1 - src0
    // RGB_CLAMP (CMN bit 19) and OMOD x2 (1).
    let c = [[0.75, -0.5, 0.25, 0.0], [0.0; 4], [0.0; 4]];
    let r = run_alu(c, 1 << 19, RGB_A_SRC0 | b_one | (1 << 26), ABC_A, c_zero);
    assert_eq!(&r[..3], &[1.0, 0.0, 0.5]);
    // Inline constants (§3.3.1): ADDR0 = 0x80 | (e << 3 | m), CONST = 0. 0x38 = e7 m0 = 1.0;
    // 0x7f = e15 m7 = 480; 0x00 = 2^-10.
    let ic = |bits: u32| {
        let mut m = mem();
        let addr = 0x80 | bits;
        load_program(&mut m, &[[OUT_ALL_LAST, addr, addr, RGB_A_SRC0 | b_one, ABC_A, c_zero]]);
        run(
            &mut m,
            &[
                set_inst_fmt(),
                set_out(0, OUT0, fmt(64, 0, F32X4), 1),
                START.to_vec(),
                FLUSH_OUT.to_vec(),
            ],
        )
        .unwrap();
        m.read_f32(OUT0).unwrap()
    };
    assert_eq!(ic(0x38), 1.0);
    assert_eq!(ic(0x7f), 480.0);
    assert_eq!(ic(0x00), 2f32.powi(-10));
    assert_eq!(ic(0x04), 2f32.powi(-7));
}

#[test]
fn writemasks_and_predicates() {
    // 0: ALU: pred = (c0 >= 0) per channel: OMASK 7 + alpha, TARGET 2 (>=) in RGB_INST 30:29
    //    and ALPHA_INST 30:29. MAD c0*1+0.
    // 1: OUTPUT with RGB_PRED_SEL = RGBA (1, CMN 5:3): only channels whose predicate is set
    //    reach the output.
    let b_one = (1 << 13) | (6 << 15) | (6 << 18) | (6 << 21);
    let c_zero = (2 << 12) | (4 << 14) | (4 << 17) | (4 << 20) | (2 << 25) | (4 << 27);
    let a_b_one = (1 << 19) | (6 << 21);
    let mut m = mem();
    for (ch, v) in [1.0f32, -1.0, 2.0, -2.0].iter().enumerate() {
        m.write_f32(CONST_BASE + 4 * ch as u32, *v).unwrap();
    }
    m.write_words(OUT0, &[0xdead; 4]).unwrap();
    let set_pred = [
        (7 << 15) | (1 << 18),
        CONST_ADDRS_012,
        CONST_ADDRS_012,
        RGB_A_SRC0 | b_one | (2 << 29),
        A_A_SRC0 | a_b_one | (2 << 29),
        c_zero,
    ];
    // ALPHA_PRED_SEL 27:25 = 1 (RGBA → A).
    let out = [
        OUT_ALL_LAST | (1 << 3) | (1 << 25),
        CONST_ADDRS_012,
        CONST_ADDRS_012,
        RGB_A_SRC0 | b_one,
        A_A_SRC0 | a_b_one,
        c_zero,
    ];
    load_program(&mut m, &[set_pred, out]);
    run(
        &mut m,
        &[
            set_inst_fmt(),
            set_constf(F32X4),
            set_out(0, OUT0, fmt(64, 0, F32X4), 1),
            START.to_vec(),
            FLUSH_OUT.to_vec(),
        ],
    )
    .unwrap();
    let got: Vec<u32> = (0..4).map(|k| m.read_u32_(OUT0 + 4 * k)).collect();
    assert_eq!(got, vec![1.0f32.to_bits(), 0xdead, 2.0f32.to_bits(), 0xdead]);
}

trait R {
    fn read_u32_(&mut self, a: u32) -> u32;
}
impl R for ctm_model::FlatMemory {
    fn read_u32_(&mut self, a: u32) -> u32 {
        use ctm_model::Memory;
        self.read_u32(a).unwrap()
    }
}
