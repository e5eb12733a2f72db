//! Encodings of individual instructions against words computed by hand from the field tables
//! (amd-r5xx-acceleration §11.10 positions, ctm-guide chapter 3 semantics).

use baregpu_dpp_asm::build::*;
use baregpu_dpp_asm::isa::*;
use baregpu_dpp_asm::{Instruction, assemble};

fn asm(src: &str) -> Vec<Instruction> {
    let mut buf = vec![Instruction::default(); 64];
    let n = assemble(src, &mut buf).unwrap_or_else(|e| panic!("{e}"));
    buf.truncate(n);
    buf
}

fn words(src: &str) -> Vec<Words> {
    asm(src).iter().map(|i| i.encode().unwrap()).collect()
}

#[test]
fn vector_add_words() {
    let w = words(baregpu_dpp_asm::examples::VECTOR_ADD);
    assert_eq!(w.len(), 3);
    // tex r1, in0, r0 — CMN: TYPE=3 | RGB_WMASK=7<<11 (0x3800) | ALPHA_WMASK 1<<14 (0x4000).
    // TEX_INST: INST=LD(1)<<22 = 0x40_0000 | UNSCALED 1<<27 = 0x800_0000.
    // TEX_ADDR: SRC r0 with swizzles R,G,B,A = 0<<8|1<<10|2<<12|3<<14 = 0xe400;
    //           DST r1 (1) with the same swizzle, <<16 -> 0xe401_0000.
    // TEX_ADDR_DXDY: DX/DY r0 identity swizzles = 0xe400_e400.
    assert_eq!(w[0], [0x7803, 0x0840_0000, 0xe401_e400, 0xe400_e400, 0, 0]);
    // tex r2, in1, r0 — last of the run: TEX_SEM_WAIT (1<<2) and TEX_SEM_ACQUIRE (1<<25);
    // TEX_ID 1<<16.
    assert_eq!(w[1], [0x7807, 0x0a41_0000, 0xe402_e400, 0xe400_e400, 0, 0]);
    // add o0, r1, r2 = MAD(r1, 1, r2); r1 in slot 0, r2 in slot 1 of both ADDR words:
    //   ADDR = 1 | 2<<10 = 0x801.
    // CMN: TYPE=OUTPUT 1 | TEX_SEM_WAIT 4 | RGB_OMASK 7<<15 (0x38000) | ALPHA_OMASK 1<<18.
    // RGB_INST: A = sel0, swz R(0) G(1) B(2): 1<<5 | 2<<8 = 0x220;
    //           B = sel0, swz One(6) x3: 6<<2|6<<5|6<<8 = 0x6d8, <<13 = 0xdb_0000.
    // ALPHA_INST: OP MAD 0; A = sel0, swz A(3): 3<<2 = 0xc, <<12 = 0xc000;
    //             B = swz One: 6<<2 = 0x18, <<19 = 0xc0_0000.
    // RGBA_INST: C rgb = sel1 | 0x220 = 0x221, <<12 = 0x22_1000;
    //            C alpha = sel1 | A<<2 = 0xd, <<25 = 0x1a00_0000.
    assert_eq!(w[2], [0x0007_8005, 0x801, 0x801, 0x00db_0220, 0x00c0_c000, 0x1a22_1000]);
}

#[test]
fn flow_control_if_else_endif_words() {
    let w = words(baregpu_dpp_asm::examples::SIGN_BRANCH);
    // 0 tex, 1 mov.lt p.x, 2 if p.x, 3 mov, 4 else, 5 add, 6 endif, 7 mov o0
    assert_eq!(w.len(), 8);
    // IF p (§3.5.4): JUMP_FUNC 0x33<<8, B_OP0 INCR 2<<24, B_OP1 INCR 2<<26 -> 0x0a00_3300;
    // JUMP_ADDR = ELSE+1 = 5 -> 5<<16. CMN: TYPE 2 | RGB_PRED_SEL RRRR 2<<3 | ALU_WAIT 1<<10.
    assert_eq!(w[2], [0x412, 0, 0x0a00_3300, 0x5_0000, 0, 0]);
    // ELSE: B_ELSE 1<<4 | B_POP_CNT 1<<16 | B_OP1 DECR 1<<26; JUMP_ADDR ENDIF+1 = 7.
    // CMN: TYPE 2 | TEX_SEM_WAIT 4: its jump target, the final output, waits (§3.7 erratum).
    assert_eq!(w[4], [6, 0, 0x0401_0010, 0x7_0000, 0, 0]);
    // ENDIF: JUMP_ANY 1<<5 | B_POP_CNT 1 | B_OP0 DECR 1<<24; JUMP_ADDR 0; waits (falls
    // through to the final output).
    assert_eq!(w[6], [6, 0, 0x0101_0020, 0, 0, 0]);
    // mov.lt p.x, r1.x: ALU (TYPE 0), waits for the lookup (4); RGB_OMASK R = 1<<15;
    // TARGET = PRED_OP_LESS (1) << 29 in both RGB_INST and ALPHA_INST; OMOD disabled 7<<26.
    assert_eq!(w[1][0], 4 | 1 << 15);
    assert_eq!(w[1][3] >> 26, 7 | 1 << 3);
    assert_eq!(w[1][4] >> 26, 7 | 1 << 3);
    assert_eq!(w[1][5] & 0xf, RgbOp::Max as u32);
}

#[test]
fn loop_words_and_relative_constant() {
    let w = words(baregpu_dpp_asm::examples::CONST_LOOP);
    // 0 tex, 1 loop i0, 2 add, 3 endloop, 4 mov o0
    // LOOP: OP=1, JUMP_ADDR = ENDLOOP+1 = 4; CMN TYPE 2 | TEX_SEM_WAIT (first after the lookup).
    assert_eq!(w[1], [6, 0, 1, 0x4_0000, 0, 0]);
    // ENDLOOP: OP=2 | JUMP_ANY 0x20 | JUMP_FUNC 0xff<<8; JUMP_ADDR = LOOP+1 = 2.
    // CMN: TYPE 2 | TEX_SEM_WAIT (falls through to the waiting final output, §3.7).
    assert_eq!(w[3], [6, 0, 0xff22, 0x2_0000, 0, 0]);
    // add r1, r1, c0[aL]: src0 = r1 (1); src1 = c0 CONST 1<<8 | REL 1<<9 = 0x300, <<10.
    assert_eq!(w[2][1], 1 | 0x300 << 10);
    assert_eq!(w[2][2], 1 | 0x300 << 10);
}

#[test]
fn inline_constants() {
    // §3.3.1 table: 1 = exp 7 mant 0; 256 = exp 15; 480 = exp 15 mant 7; 2^-9 = 0x01; 2^-10 = 0.
    assert_eq!(inline_const_from_f32(1.0), Some(0x38));
    assert_eq!(inline_const_from_f32(256.0), Some(0x78));
    assert_eq!(inline_const_from_f32(480.0), Some(0x7f));
    assert_eq!(inline_const_value(0x01), 1.0 / 512.0);
    assert_eq!(inline_const_value(0x04), 1.0 / 128.0);
    assert_eq!(inline_const_value(0x08), 1.0 / 64.0);
    assert_eq!(inline_const_value(0x00), 1.0 / 1024.0);
    assert_eq!(inline_const_from_f32(0.0), None);
    assert_eq!(inline_const_from_f32(3.3), None);
    // ADDR0[7] = 1, CONST = 0: `#1.0` -> 0x80 | 0x38.
    let w = words("mov o0, #1.0");
    assert_eq!(w[0][1] & 0x3ff, 0xb8);
}

#[test]
fn presubtract_pins_sources() {
    // (r3 - r4): SRCP_OP SUB (1) << 30, src0 = r4, src1 = r3; r1 takes src2.
    let w = words("mad o0, (r3 - r4), r1, 0");
    assert_eq!(w[0][1], 4 | 3 << 10 | 1 << 20 | 1 << 30);
    // RGB input A selects srcp (3).
    assert_eq!(w[0][3] & 3, 3);
    let w = words("add o0, (1 - 2*r5), r6");
    assert_eq!(w[0][1], 5 | 6 << 10);
}

#[test]
fn presubtract_nop_inserted() {
    let i = asm("add r3, r1, r2\nmad o0, (r3 - r4), r1, 0");
    let Instruction::Alu(a) = i[0] else { panic!() };
    assert!(a.common.nop, "§3.3.2: NOP after writing a presubtract source");
}

#[test]
fn modifiers_and_suffixes() {
    // -|r1| -> NAB (3) for input A; .sat sets RGB_CLAMP (19) and ALPHA_CLAMP (20); .x2 OMOD 1.
    let w = words("mad.sat.x2 o0, -|r1|, r2, r3");
    assert_eq!(w[0][0] & (3 << 19), 3 << 19);
    assert_eq!((w[0][3] >> 11) & 3, 3);
    assert_eq!((w[0][3] >> 26) & 7, 1);
    assert_eq!((w[0][4] >> 17) & 3, 3);
    // .crlt: ALU_WMASK (RGB_INST 31), ALU_RESULT_SEL red 0, ALU_RESULT_OP LESS 1<<23.
    let w = words("sub.crlt r0.x, r1, r2\nend");
    assert_eq!(w[0][3] >> 31, 1);
    assert_eq!(w[0][0] & (7 << 21), 1 << 23);
    // relative destination: RGB_ADDRD_REL bit 11 of RGBA_INST, ALPHA_ADDRD_REL bit 11.
    let w = words("mov r7[aL], r1\nend");
    assert_eq!((w[0][5] >> 4) & 0xfff, 7 | 0x80);
    assert_eq!((w[0][4] >> 4) & 0xff, 7 | 0x80);
}

#[test]
fn transcendental_and_dot_pairs() {
    let i = asm("rcp r1, r2.y\ndp3 r3, r1, r2\nend");
    let Instruction::Alu(a) = i[0] else { panic!() };
    assert_eq!((a.rgb.op, a.alpha.op), (RgbOp::Sop, AlphaOp::Rcp));
    assert_eq!(a.alpha.inputs[0].swz, Swz::G);
    let Instruction::Alu(a) = i[1] else { panic!() };
    assert_eq!((a.rgb.op, a.alpha.op), (RgbOp::Dp3, AlphaOp::Dp));
    // Co-issue: different ops and destinations per unit.
    let i = asm("dp3 r0.xyz, r1, r2 || rcp r3.w, r4.x\nend");
    let Instruction::Alu(a) = i[0] else { panic!() };
    assert_eq!((a.rgb.op, a.alpha.op), (RgbOp::Dp3, AlphaOp::Rcp));
    assert_eq!((a.rgb.dst.index, a.alpha.dst.index), (0, 3));
    assert_eq!((a.rgb.wmask, a.alpha.wmask), (7, true));
}

#[test]
fn builder_rejects_invalid_combinations() {
    let mut a = AluInst::default();
    a.rgb.op = RgbOp::Sop;
    assert!(matches!(a.encode(), Err(EncodeError::Invalid(_))));
    let mut a = AluInst::default();
    a.alpha.op = AlphaOp::Dp;
    assert!(matches!(a.encode(), Err(EncodeError::Invalid(_))));
    let mut a = AluInst::default();
    a.rgb.omod = Omod::Disabled;
    assert!(matches!(a.encode(), Err(EncodeError::Invalid(_))));
    let mut a = AluInst::default();
    a.rgb.dst.index = 128;
    assert!(matches!(a.encode(), Err(EncodeError::OutOfRange { max: 127, .. })));
    let mut a = AluInst::default();
    a.rgb_addr.src[2] = Source::Inline(128);
    assert!(matches!(a.encode(), Err(EncodeError::OutOfRange { .. })));
    let mut a = AluInst::default();
    a.rgb.pred.inv = true;
    assert!(matches!(a.encode(), Err(EncodeError::Invalid(_))));
    let f = FcInst { pred: Pred::new(PredSel::Rgba, false), ..FcInst::default() };
    assert!(matches!(f.encode(), Err(EncodeError::Invalid(_))));
    let f = FcInst { jump_addr: 512, ..FcInst::default() };
    assert!(matches!(f.encode(), Err(EncodeError::OutOfRange { max: 511, .. })));
    let t = TexInst { sem_acquire: true, ..TexInst::default() };
    assert!(matches!(t.encode(), Err(EncodeError::Invalid(_))));
    let t = TexInst { input: 16, ..TexInst::default() };
    assert!(matches!(t.encode(), Err(EncodeError::OutOfRange { max: 15, .. })));
    // Reserved encodings decode as errors.
    assert!(RgbOp::from_raw(6).is_err());
    assert!(AlphaOp::from_raw(4).is_err());
    assert!(Swz::from_raw(7).is_err());
    assert!(PredSel::from_raw(6).is_err());
    assert!(AOp::from_raw(3).is_err());
}

#[test]
fn builder_api_matches_text() {
    let inst = vec_op(
        VecOp::Add,
        AluDest::output(0, 15),
        &[Operand::temp(1), Operand::temp(2)],
        AluFlags::default(),
    )
    .unwrap();
    let Instruction::Alu(mut from_text) = asm("add o0, r1, r2")[0] else { panic!() };
    from_text.common.tex_sem_wait = false;
    assert_eq!(inst, from_text);
    let four = vec_op(
        VecOp::Mad,
        AluDest::temp(0, 15),
        &[Operand::temp(1), Operand::temp(2), Operand::konst(3)],
        AluFlags::default(),
    );
    assert!(four.is_ok());
}
