//! Commands (§2.2), address translation (§2.1.4), flow control (§3.5), conditional output
//! (§2.1.3), whole programs.
mod common;
use common::*;
use ctm_model::mc::translate;
use ctm_model::{CondLocation, CondTest, CtmErrorKind, DppError, Memory};

#[test]
fn commands_set_state_2_2() {
    let mut m = mem();
    let e = run(
        &mut m,
        &[
            vec![0xC000_0600, 0x1234],                                  // set_cond_val
            set_domain(1, 2, 0x1003, 4),                                // i1 bits 11:0 → 3
            vec![0xC002_0D00, COND | 0x7ff, fmt(64, 1, F32X1), 0x2010], // set_cond_out_fmt
            vec![0xC000_1900, 0x5],
            vec![0xC000_1A00, 1],
            vec![0xC000_1B00, 3],
            vec![0xC000_1C00, 1],
            set_inp(15, IN0, fmt(32, 3, F32X1), 8),
            vec![0xC000_1100, 0],
            vec![0xC000_1200, 0],
            vec![0xC000_1300, 0],
            vec![0xC000_1400, 0],
            vec![0xC000_1500, 0],
            vec![0xC000_1600, 0],
            vec![0xC000_1700, 0],
            vec![0xC000_1800, 0],
            vec![0xC000_0900, 0],
        ],
    )
    .unwrap();
    let s = e.state;
    assert_eq!(s.cond_val, 0x1234);
    assert_eq!((s.domain.i0, s.domain.j0, s.domain.i1, s.domain.j1), (1, 2, 3, 4));
    let c = s.cond_out.unwrap();
    assert_eq!((c.base, c.pitch, c.height), (COND, 64, 0x10)); // low 11 bits ignored; height 12:0
    assert!(c.tiling.is_tiled());
    assert_eq!(s.out_mask, 5);
    assert!(s.cond_out_mask);
    assert_eq!(s.cond_test, CondTest::Equal);
    assert_eq!(s.cond_loc, CondLocation::Pe);
    assert!(s.surfaces.inputs[15].unwrap().tiling.is_superfine());
    let c = e.cache_ops;
    assert_eq!(
        [
            c.inv_inst,
            c.inv_constf,
            c.inv_consti,
            c.inv_constb,
            c.inv_cond_out,
            c.inv_inp,
            c.flush_out,
            c.flush_cond_out,
            c.wait_for_idle
        ],
        [1; 9]
    );
}

#[test]
fn command_errors() {
    let mut m = mem();
    let mut e = ctm_model::CtmEngine::new();
    let err = e.execute(&[0xC000_0900, 0, 0xC000_9900, 0], &mut m).unwrap_err();
    assert_eq!((err.offset, err.kind), (2, CtmErrorKind::UnknownOpcode(0xC000_9900)));
    // set_domain with a count field of 2 instead of 3.
    let err = e.execute(&[0xC002_0700, 0, 0, 0], &mut m).unwrap_err();
    assert!(matches!(err.kind, CtmErrorKind::BadParameterCount { expected: 0xC003_0700, .. }));
    let err = e.execute(&[0xC003_0700, 0, 0], &mut m).unwrap_err();
    assert!(matches!(err.kind, CtmErrorKind::Truncated { needed: 4, available: 2, .. }));
    // Data format 5 is reserved (§2.2.2).
    let err = e.execute(&[0xC001_0A00, 0, 5 << 24], &mut m).unwrap_err();
    assert!(matches!(err.kind, CtmErrorKind::ReservedDataFormat(_)));
    assert!(err.code() != 0);
}

#[test]
fn perf_counters_2_1_2() {
    let mut m = mem();
    load_program(&mut m, &[[OUT_ALL_LAST & !(7 << 15) & !(1 << 18), 0, 0, 0, 0, 0]]);
    // init(1), start, inst fmt, domain 2x1, start_program (2 elements x 1 instr), stop, read.
    run(
        &mut m,
        &[
            vec![0xC001_0200, 1],
            vec![0xC000_0300, 0],
            set_inst_fmt(),
            set_domain(0, 0, 1, 0),
            START.to_vec(),
            vec![0xC000_0400, 0],
            vec![0xC000_0400, 0],
            WAIT_FOR_IDLE.to_vec(), // read_perf_counters is not pipelined (Table 3)
            vec![0xC001_0500, PERF | 0x123],
        ],
    )
    .unwrap();
    // Clocks while running: set_inst_fmt, set_domain, start_program, stop = 4 command clocks
    // (start itself precedes the reset) + 2 instructions; active = 2. The program's clocks
    // are counted by its start_program, before the stop.
    assert_eq!(m.read_u32(PERF).unwrap(), 6);
    assert_eq!(m.read_u32(PERF + 4).unwrap(), 2);
    // Disabled: read has no effect.
    let mut m2 = mem();
    run(&mut m2, &[vec![0xC001_0200, 0], vec![0xC001_0500, PERF]]).unwrap();
    assert_eq!(m2.read_u32(PERF).unwrap(), 0);
}

#[test]
fn address_translation_tables_1_2() {
    // Table 1, bpe 4: (y*pitch[13:3] + x[11:3] + offset[31:5]) << 5 | x[2:0] << 2
    // = (3*8 + 1 + 0x800) * 32 + 8 = 0x10328 = 0x10000 + (3*64 + 10) * 4.
    assert_eq!(translate(0x10000, 64, false, 4, 10, 3), 0x10328);
    // bpe 1: (2*2 + 1) * 32 + 8 = 168.
    assert_eq!(translate(0, 64, false, 1, 40, 2), 168);
    // Table 2, bpe 4, x = 37 (100101b), y = 21 (10101b), pitch 64:
    // hi = (21>>4)*(64>>5) + (37>>5) = 3 → 0x1800; b10 y3^x5 = 1, b9 x4^y4 = 1, b8 y2^x4 = 1,
    // b7 x3^y3 = 0, b6 y1 = 0, b5 x2 = 1, b4 y0 = 1, b3:2 x1:0 = 01 → 0x734.
    assert_eq!(translate(0, 64, true, 4, 37, 21), 0x1F34);
    // bpe 16, base 0x800, pitch 32, x = 5, y = 9: hi = 1*2 + 0 + 1 = 3; b9 x3^y3 = 1,
    // b7 x2^y2 = 1, b6 y0 = 1, b4 x0 = 1 → 0x2D0.
    assert_eq!(translate(0x800, 32, true, 16, 5, 9), 0x1AD0);
    // Every bpe's tiling is a bijection over a 128x64 region (2K tiles of bpe bytes).
    for bpe in [1u32, 2, 4, 8, 16] {
        let mut seen = std::collections::HashSet::new();
        for y in 0..64 {
            for x in 0..128 {
                let a = translate(0, 128, true, bpe, x, y);
                assert_eq!(a % bpe, 0);
                assert!(seen.insert(a / bpe), "bpe {bpe} ({x},{y})");
            }
        }
    }
}

fn run_prog(
    prog: &[[u32; 6]],
    w: u32,
    consts: &[(u32, u32)],
) -> (Result<(), ctm_model::CtmError>, ctm_model::FlatMemory) {
    let mut m = mem();
    load_program(&mut m, prog);
    for (a, v) in consts {
        m.write_u32(*a, *v).unwrap();
    }
    let r = run(
        &mut m,
        &[
            set_inst_fmt(),
            set_constf(F32X4),
            vec![0xC001_0F00, ICONST_BASE, fmt(32, 0, U8X4)],
            vec![0xC001_1000, BCONST_BASE, fmt(32, 0, F32X1)],
            set_out(0, OUT0, fmt(64, 0, F32X4), 1),
            set_domain(0, 0, w - 1, 0),
            START.to_vec(),
            FLUSH_OUT.to_vec(),
        ],
    );
    (r.map(|_| ()), m)
}

#[test]
fn loop_with_counter_and_al_3_5() {
    // int const 0 = UINT8_4 bytes (count 3, aL init 0, inc 1); c0..c2.r = 1, 10, 100.
    // 0 LOOP (0x00) → ENDLOOP+1 = 3; 1 r3 += c[aL] (ADDR2 = 0, CONST 28, REL 29); 2 ENDLOOP (0xff, any) → 1.
    let prog = [
        fc(0, 1, 0, 0, 0, 0, 0, 0, 0, 3),
        add_r3((1 << 28) | (1 << 29)),
        fc(0, 2, 0xff, 1, 0, 0, 0, 0, 0, 1),
        out_r3(),
    ];
    let consts = [
        (ICONST_BASE, 0x0001_0003),
        (CONST_BASE, 1f32.to_bits()),
        (CONST_BASE + 16, 10f32.to_bits()),
        (CONST_BASE + 32, 100f32.to_bits()),
    ];
    let (r, mut m) = run_prog(&prog, 1, &consts);
    r.unwrap();
    assert_eq!(m.read_f32(OUT0).unwrap(), 111.0);
    // Count 0: LOOP jumps over the body.
    let (r, mut m) = run_prog(&prog, 1, &[(ICONST_BASE, 0)]);
    r.unwrap();
    assert_eq!(m.read_f32(OUT0).unwrap(), 0.0);
}

#[test]
fn if_else_on_predicate_3_5_4() {
    // 0 ALU: pred.r = (r0.r + (-2) >= 0): MAD r0*1 + (-2) via inline const 0x48 (e9 m0 = 4?)...
    // use c0.r = -2: A = r0 (ADDR0 0 temp), C = c0 (ADDR2 = 0 CONST). OMASK R, TARGET 2 (>=).
    let b_one = (1 << 13) | (6 << 15) | (6 << 18) | (6 << 21);
    let setp = [1 << 15, 1 << 28, 0, RGB_A_SRC0 | b_one | (2 << 29), 0, RGB_C_SRC2];
    // IF p: 0x33, B_OP0 INCR, B_OP1 INCR, jump ELSE+1; predicate RRRR (CMN 5:3 = 2).
    // body: r3 += c1 (1.0); ELSE: 0x00, B_ELSE, B_OP1 DECR 1 → ENDIF+1; else body: r3 += c2 (2.0);
    // ENDIF: 0x00, any, B_OP0 DECR 1.
    let prog = [
        setp,
        fc(2 << 3, 0, 0x33, 0, 0, 2, 2, 0, 0, 4),
        add_r3((1 << 20) | (1 << 28)),
        fc(0, 0, 0x00, 0, 0, 0, 1, 1, 1, 6),
        add_r3((2 << 20) | (1 << 28)),
        fc(0, 0, 0x00, 1, 0, 1, 0, 1, 0, 0),
        out_r3(),
    ];
    let consts = [
        (CONST_BASE, (-2f32).to_bits()),
        (CONST_BASE + 16, 1f32.to_bits()),
        (CONST_BASE + 32, 2f32.to_bits()),
    ];
    let (r, mut m) = run_prog(&prog, 4, &consts);
    r.unwrap();
    let got: Vec<f32> = (0..4).map(|i| m.read_f32(OUT0 + 16 * i).unwrap()).collect();
    assert_eq!(got, vec![2.0, 2.0, 1.0, 1.0]);
}

#[test]
fn nesting_and_stack_overflow_3_5_2() {
    let nest = |n: u32| {
        let mut p = Vec::new();
        for k in 0..n {
            p.push(fc(0, 1, 0, 0, 0, 0, 0, 0, 0, 2 * n + 1 - k));
        }
        p.push(add_r3((1 << 20) | (1 << 28)));
        for k in 0..n {
            p.push(fc(0, 2, 0xff, 1, 0, 0, 0, 0, 0, n - k));
        }
        p.push(out_r3());
        p
    };
    let consts = [(ICONST_BASE, 2), (CONST_BASE + 16, 1f32.to_bits())];
    let (r, mut m) = run_prog(&nest(4), 1, &consts);
    r.unwrap();
    assert_eq!(m.read_f32(OUT0).unwrap(), 16.0); // 2^4 iterations
    let (r, _) = run_prog(&nest(5), 1, &consts);
    assert!(matches!(
        r.unwrap_err().kind,
        CtmErrorKind::Program { error: DppError::LoopStackOverflow, pc: 4, .. }
    ));
    // CALL to itself: the 5th push overflows the 4-deep address stack.
    let (r, _) = run_prog(&[fc(0, 0, 0xff, 1, 2, 0, 0, 0, 0, 0)], 1, &[]);
    assert!(matches!(
        r.unwrap_err().kind,
        CtmErrorKind::Program { error: DppError::AddressStackOverflow, .. }
    ));
    // Boolean jump (0xaa: jump iff boolean) over the add, b0 = 1.0.
    let prog = [fc(0, 0, 0xaa, 0, 0, 0, 0, 0, 0, 2), add_r3((1 << 20) | (1 << 28)), out_r3()];
    let (r, mut m) =
        run_prog(&prog, 1, &[(BCONST_BASE, 1f32.to_bits()), (CONST_BASE + 16, 1f32.to_bits())]);
    r.unwrap();
    assert_eq!(m.read_f32(OUT0).unwrap(), 0.0);
}

#[test]
fn runaway_loop_hits_budget() {
    let (r, _) = run_prog(&[fc(0, 0, 0xff, 0, 0, 0, 0, 0, 0, 0)], 1, &[]);
    assert!(matches!(
        r.unwrap_err().kind,
        CtmErrorKind::Program { error: DppError::InstructionBudgetExceeded, i: 0, j: 0, pc: 0 }
    ));
}

#[test]
fn conditional_output_each_test_2_1_3() {
    // v = cond_val 2.0 (no W written); b[i] = i for i in 0..5; outputs write 7 where v op b.
    for (test, expect) in [
        (0u32, [false; 5]),
        (1, [false, false, false, true, true]),
        (2, [false, false, true, true, true]),
        (3, [false, false, true, false, false]),
        (4, [true, true, true, false, false]),
        (5, [true, true, false, false, false]),
        (6, [true, true, false, true, true]),
        (7, [true; 5]),
    ] {
        let mut m = mem();
        let b_one = (1 << 13) | (6 << 15) | (6 << 18) | (6 << 21);
        // out = 7.0 via inline 0x4c (e9 m4: 4 * 1.5 = 6)... use c0 = 7: MAD c0*1 + 0.
        load_program(
            &mut m,
            &[[
                OUT_ALL_LAST,
                0x100,
                0x100,
                RGB_A_SRC0 | b_one,
                A_A_SRC0,
                (2 << 12) | (4 << 14) | (4 << 17) | (4 << 20),
            ]],
        );
        m.write_f32(CONST_BASE, 7.0).unwrap();
        for i in 0..5 {
            m.write_f32(COND + 4 * i, i as f32).unwrap();
        }
        run(
            &mut m,
            &[
                set_inst_fmt(),
                set_constf(F32X4),
                set_out(0, OUT0, fmt(64, 0, F32X1), 1),
                vec![0xC002_0D00, COND, fmt(64, 0, F32X1), 1],
                vec![0xC000_0600, 2f32.to_bits()],
                vec![0xC000_1B00, test],
                vec![0xC000_1C00, 0],
                vec![0xC000_1A00, 1],
                set_domain(0, 0, 4, 0),
                START.to_vec(),
                FLUSH_OUT.to_vec(),
                FLUSH_COND_OUT.to_vec(),
            ],
        )
        .unwrap();
        for i in 0..5u32 {
            assert_eq!(
                m.read_f32(OUT0 + 4 * i).unwrap() == 7.0,
                expect[i as usize],
                "test {test} i {i}"
            );
            let b = m.read_f32(COND + 4 * i).unwrap();
            assert_eq!(b, if expect[i as usize] { 2.0 } else { i as f32 });
        }
    }
}

#[test]
fn vector_add_and_saxpy_over_2d_domain() {
    // out0 = a * in0 + in1 over (0,0)-(7,3); in0 tiled FLOAT32_1 pitch 32, in1 linear.
    let (w, h) = (8u32, 4u32);
    let a = 2.5f32;
    for saxpy in [false, true] {
        let mut m = mem();
        for j in 0..h {
            for i in 0..w {
                m.write_f32(translate(IN0, 32, true, 4, i, j), (i + 10 * j) as f32).unwrap();
                m.write_f32(translate(IN1, 32, false, 4, i, j), (100 * i + j) as f32 * 0.5)
                    .unwrap();
            }
        }
        m.write_f32(CONST_BASE, a).unwrap();
        // OUTPUT: A = src0 (c0 if saxpy, else inline 1.0 = 0x80|0x38), B = r1 (src1), C = r2.
        let addr0 = if saxpy { 0x100 } else { 0xB8 };
        let addr = addr0 | (1 << 10) | (2 << 20);
        let rgb_a_rrr = 0; // SEL_A src0, all swizzles R
        load_program(
            &mut m,
            &[
                tex(0, 0, 1),
                tex(1, 0, 2),
                [
                    OUT_ALL_LAST | (1 << 2),
                    addr,
                    addr,
                    rgb_a_rrr | RGB_B_SRC1,
                    A_A_SRC0 | A_B_SRC1,
                    RGB_C_SRC2 | A_C_SRC2,
                ],
            ],
        );
        run(
            &mut m,
            &[
                set_inst_fmt(),
                set_constf(F32X4),
                set_inp(0, IN0, fmt(32, 1, F32X1), h),
                set_inp(1, IN1, fmt(32, 0, F32X1), h),
                set_out(0, OUT0, fmt(32, 0, F32X1), h),
                set_domain(0, 0, w - 1, h - 1),
                INV_INP.to_vec(),
                START.to_vec(),
                FLUSH_OUT.to_vec(),
            ],
        )
        .unwrap();
        let k = if saxpy { a } else { 1.0 };
        for j in 0..h {
            for i in 0..w {
                let want = k * (i + 10 * j) as f32 + (100 * i + j) as f32 * 0.5;
                assert_eq!(m.read_f32(OUT0 + 4 * (j * 32 + i)).unwrap(), want, "({i},{j})");
            }
        }
    }
}

#[test]
fn superfine_2x2_fetch_2_1_4() {
    let mut m = mem();
    for j in 0..4 {
        for i in 0..4 {
            m.write_f32(IN0 + 4 * (j * 32 + i), (10 * j + i) as f32).unwrap();
        }
    }
    load_program(&mut m, &[tex(0, 0, 3), out_r3()]);
    run(
        &mut m,
        &[
            set_inst_fmt(),
            set_inp(0, IN0, fmt(32, 2, F32X1), 4),
            set_out(0, OUT0, fmt(64, 0, F32X4), 4),
            set_domain(1, 1, 1, 1),
            INV_INP.to_vec(),
            START.to_vec(),
            FLUSH_OUT.to_vec(),
        ],
    )
    .unwrap();
    // (x+1, y), (x, y+1), (x+1, y+1), (x, y) at (1,1): 12, 21, 22, 11.
    let a = translate(OUT0, 64, false, 16, 1, 1);
    let got: Vec<f32> = (0..4).map(|c| m.read_f32(a + 4 * c).unwrap()).collect();
    assert_eq!(got, vec![12.0, 21.0, 22.0, 11.0]);
}
