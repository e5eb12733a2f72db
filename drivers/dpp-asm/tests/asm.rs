//! Assembler: examples, error positions, round trips.

use baregpu_dpp_asm::isa::*;
use baregpu_dpp_asm::{AsmErrorKind, Instruction, assemble};
use proptest::prelude::*;

fn asm(src: &str) -> Result<Vec<Instruction>, baregpu_dpp_asm::AsmError> {
    let mut buf = vec![Instruction::default(); 512];
    let n = assemble(src, &mut buf)?;
    buf.truncate(n);
    Ok(buf)
}

fn err(src: &str) -> (u32, u32, AsmErrorKind) {
    let e = asm(src).expect_err("should fail");
    (e.line, e.col, e.kind)
}

#[test]
fn all_examples_assemble_and_end_with_a_waiting_output() {
    for (name, src) in baregpu_dpp_asm::examples::ALL {
        let p = asm(src).unwrap_or_else(|e| panic!("{name}: {e}"));
        let last = p.last().unwrap();
        assert!(last.is_output(), "{name}");
        let Instruction::Alu(a) = last else { panic!() };
        assert!(a.common.tex_sem_wait, "{name}: §3.1 last instruction waits");
        // Every slot decodes back to the same instruction.
        for i in &p {
            assert_eq!(Instruction::decode(&i.encode().unwrap()).unwrap(), *i, "{name}");
        }
    }
}

#[test]
fn stencil_semaphore_placement() {
    let p = asm(baregpu_dpp_asm::examples::STENCIL4).unwrap();
    // 4 ALU coordinate computations, 4 lookups, 3 ALU.
    let tex: Vec<&TexInst> =
        p.iter().filter_map(|i| if let Instruction::Tex(t) = i { Some(t) } else { None }).collect();
    assert_eq!(tex.len(), 4);
    // §3.4.2: only the last lookup of the run acquires; all wait for the ALU (§3.2.1).
    assert_eq!(tex.iter().map(|t| t.sem_acquire).collect::<Vec<_>>(), [false, false, false, true]);
    assert!(tex.iter().all(|t| t.alu_wait && t.unscaled));
    let Instruction::Alu(first_use) = p[8] else { panic!() };
    assert!(first_use.common.tex_sem_wait);
    let Instruction::Alu(out) = p[10] else { panic!() };
    assert_eq!(out.rgb.omod, Omod::D4);
}

#[test]
fn reduce_writes_conditional_output() {
    let p = asm(baregpu_dpp_asm::examples::REDUCE_2X2).unwrap();
    let Instruction::Alu(a) = p.last().unwrap() else { panic!() };
    assert!(a.output && a.w_omask);
    assert_eq!(a.alpha.inputs[0].swz, Swz::R);
    let info = baregpu_dpp_asm::ProgramInfo::scan(&p);
    assert!(info.cond_out);
    assert_eq!(info.inputs, 1);
    assert_eq!(info.outputs, 1);
    assert_eq!(info.max_temp, 11);
}

#[test]
fn labels_calls_and_breaks() {
    let src = "\
        call sub
        rep i3
        if p.y
        break
        endif
        endrep
        end
    sub:
        mov r1, r2
        ret
        end";
    let p = asm(src).unwrap();
    let fc = |k: usize| match p[k] {
        Instruction::Fc(f) => f,
        _ => panic!("slot {k} is not FC"),
    };
    // call: 0xff, JUMP_ANY, A_OP PUSH, B_OP1 INCR, to `sub` = slot 7.
    let c = fc(0);
    assert_eq!(
        (c.jump_func, c.jump_any, c.a_op, c.b_op1, c.jump_addr),
        (0xff, true, AOp::Push, BOp::Incr, 7)
    );
    // break inside one dynamic if inside rep: BREAKREP, B_POP_CNT n = 1, to ENDREP+1 = 6.
    let b = fc(3);
    assert_eq!((b.op, b.b_pop_cnt, b.b_op1, b.jump_addr), (FcOp::BreakRep, 1, BOp::Decr, 6));
    let e = fc(5);
    assert_eq!((e.op, e.jump_addr, e.int_addr), (FcOp::EndRep, 2, 3));
    let r = fc(8);
    assert_eq!((r.a_op, r.b_op1, r.b_pop_cnt), (AOp::Pop, BOp::Decr, 1));
    let info = baregpu_dpp_asm::ProgramInfo::scan(&p);
    assert!(info.full_flow_control);
    assert_eq!(info.int_consts, 1 << 3);
}

#[test]
fn static_if_emits_no_endif() {
    let p = asm("if b2\nmov r1, r2\nelse\nmov r1, r3\nendif\nmov o0, r1").unwrap();
    assert_eq!(p.len(), 5);
    let Instruction::Fc(i) = p[0] else { panic!() };
    // IF b: 0x55 to ELSE+1 = 3, BOOL_ADDR 2, no branch counters.
    assert_eq!((i.jump_func, i.jump_addr, i.bool_addr, i.b_op0), (0x55, 3, 2, BOp::None));
    let Instruction::Fc(e) = p[2] else { panic!() };
    assert_eq!((e.jump_func, e.jump_addr), (0xff, 4));
    assert!(!baregpu_dpp_asm::ProgramInfo::scan(&p).full_flow_control);
}

#[test]
fn raw_fc_form() {
    let p = asm("x: fc func=0x33, op=jump, b0=incr, b1=decr, pop=2, else, any, addr=x, bool=4, int=5, pred=w, inv, global\nend").unwrap();
    let Instruction::Fc(f) = p[0] else { panic!() };
    assert_eq!(f.jump_func, 0x33);
    assert_eq!((f.b_op0, f.b_op1, f.b_pop_cnt), (BOp::Incr, BOp::Decr, 2));
    assert!(f.b_else && f.jump_any && f.jump_global && f.pred.inv);
    assert_eq!(f.pred.sel.0, Some(PredSel::Aaaa));
    assert_eq!((f.bool_addr, f.int_addr, f.jump_addr), (4, 5, 0));
}

#[test]
fn errors_have_positions() {
    assert_eq!(err("    add r128, r1, r2"), (1, 9, AsmErrorKind::BadNumber));
    assert_eq!(err("end\n  foo r1"), (2, 3, AsmErrorKind::UnknownMnemonic));
    assert_eq!(err("  call nowhere\nend"), (1, 8, AsmErrorKind::UndefinedLabel));
    assert_eq!(err("add r0, r1, r2"), (1, 1, AsmErrorKind::LastNotOutput));
    assert_eq!(err("mov o0, r1\nelse").2, AsmErrorKind::Unbalanced("else without if"));
    assert_eq!(err("  if p.x\nend"), (1, 3, AsmErrorKind::Unbalanced("block never closed")));
    assert_eq!(err("a: end\na: end"), (2, 1, AsmErrorKind::DuplicateLabel));
    assert_eq!(err("mov.foo o0, r1"), (1, 5, AsmErrorKind::UnknownSuffix));
    assert_eq!(err(""), (1, 1, AsmErrorKind::Empty));
    assert!(matches!(err("mov p.x, r1\nend"), (1, 1, AsmErrorKind::Encode(_))));
    assert!(matches!(err("mad.exact o0, r1, r2, r3"), (1, 1, AsmErrorKind::Encode(_))));
    assert!(matches!(err("mad o0, r1, r2, (r3 - r4)"), (1, 1, AsmErrorKind::Encode(_))));
    assert!(matches!(err("tex r1, in0, r0.x0\nend").2, AsmErrorKind::Encode(_)));
    assert!(matches!(err("mov o0, #3.3").2, AsmErrorKind::Encode(_)));
    assert_eq!(err("tex r1, in16, r0\nend").2, AsmErrorKind::BadNumber);
    assert_eq!(err("mov o4, r1").2, AsmErrorKind::BadNumber);
    assert_eq!(err("add o0, r1 r2").2, AsmErrorKind::Expected(", and another operand"));
    assert_eq!(err("break\nend").2, AsmErrorKind::Unbalanced("break/continue outside a loop"));
    let long = "add r0, r1, r2\n".repeat(513);
    assert_eq!(err(&long), (513, 1, AsmErrorKind::TooManyInstructions));
}

#[test]
fn erratum_flow_control_waits_before_a_waiting_target() {
    // `jump l` (slot 0) targets slot 2, which waits for the lookup in slot 1 (§3.7).
    let p = asm("jump l\ntex r1, in0, r0\nl: add o0, r1, r1").unwrap();
    let Instruction::Fc(f) = p[0] else { panic!() };
    assert!(f.tex_sem_wait);
    let p = asm("jump l\nl: add o0, r1, r1").unwrap();
    let Instruction::Fc(f) = p[0] else { panic!() };
    assert!(f.tex_sem_wait, "the final output always waits, so the jump waits too");
    let p = asm("jump l\nl: add r0, r1, r1\nend").unwrap();
    let Instruction::Fc(f) = p[0] else { panic!() };
    assert!(!f.tex_sem_wait);
}

#[test]
fn nosync_leaves_semaphores_alone() {
    let p = asm(".nosync\ntex r1, in0, r0\nadd o0, r1, r1").unwrap();
    let Instruction::Tex(t) = p[0] else { panic!() };
    assert!(!t.sem_acquire && !t.tex_sem_wait);
}

fn swz_char(i: u8) -> char {
    ['x', 'y', 'z', 'w', '0', 'h', '1'][usize::from(i)]
}

proptest! {
    /// Text -> words -> decoded fields: registers, swizzles and masks survive.
    #[test]
    fn mad_fields_round_trip(d in 0u8..128, a in 0u8..128, b in 0u8..=255, c in 0u8..128,
                             sw in proptest::array::uniform4(0u8..7), mask in 1u8..16) {
        let m: String = "xyzw".chars().enumerate().filter(|(i, _)| mask & (1 << i) != 0).map(|(_, c)| c).collect();
        let s: String = sw.iter().map(|&i| swz_char(i)).collect();
        let src = format!("mad r{d}.{m}, r{a}.{s}, c{b}, -r{c}\nend");
        let p = asm(&src).unwrap();
        let w = p[0].encode().unwrap();
        let Instruction::Alu(x) = Instruction::decode(&w).unwrap() else { panic!() };
        prop_assert_eq!(x.rgb.dst.index, d);
        prop_assert_eq!(x.rgb.wmask, mask & 7);
        prop_assert_eq!(x.alpha.wmask, mask & 8 != 0);
        let want: Vec<Swz> = sw.iter().map(|&i| Swz::from_raw(i.into()).unwrap()).collect();
        prop_assert_eq!(&x.rgb.inputs[0].swz[..], &want[..3]);
        prop_assert_eq!(x.alpha.inputs[0].swz, want[3]);
        let sel = |s: SrcSel| x.rgb_addr.src[s as usize];
        prop_assert_eq!(sel(x.rgb.inputs[0].sel), Source::Temp(TempReg::new(a)));
        prop_assert_eq!(sel(x.rgb.inputs[1].sel), Source::Const { index: b, rel: false });
        let want_c = Source::Temp(TempReg::new(c));
        prop_assert_eq!(sel(x.rgb.inputs[2].sel), want_c);
        prop_assert_eq!(x.rgb.inputs[2].modifier, InputMod::Neg);
        prop_assert_eq!(x.rgb_addr, x.alpha_addr);
    }

    /// Decoder and encoder agree on what is an instruction: any six words that decode
    /// re-encode (decode ∘ encode ∘ decode), to words that decode to the same instruction.
    /// Random words mostly hit reserved values, so the low bits of the first word (TYPE and
    /// the predicate/semaphore bits) are drawn separately to reach every instruction type.
    #[test]
    fn decode_encode_round_trip(
        mut w in proptest::array::uniform6(any::<u32>()),
        low in 0u32..128,
        sparse in any::<bool>(),
    ) {
        if sparse {
            // Mostly-zero words: the shapes the assembler produces, with a few random bits.
            for (k, x) in w.iter_mut().enumerate() {
                *x &= if k == 0 { 0x0200_4800 } else { 1 << (*x % 32) };
            }
        }
        w[0] = (w[0] & !0x7f) | low;
        if let Ok(i) = Instruction::decode(&w) {
            let e = i.encode();
            prop_assert!(e.is_ok(), "{:08x?} decodes to {:?} but does not encode: {:?}", w, i, e);
            prop_assert_eq!(Instruction::decode(&e.unwrap()), Ok(i));
        }
    }

    /// The three slots the fuzzer found, each refused by the decoder as by the encoder.
    #[test]
    fn unencodable_slots_do_not_decode(_x in 0..1) {
        // FC predicated per channel (RGB_PRED_SEL = RGBA): ctm-guide §3.5.1.
        prop_assert!(Instruction::decode(&[0x0000_000A, 0, 0, 0, 0, 0]).is_err());
        // PRED_INV with PRED_SEL = NONE: ctm-guide §3.3.6 "Should be zero".
        prop_assert!(Instruction::decode(&[0x0000_0042, 0, 0, 0, 0, 0]).is_err());
        // TEX_SEM_ACQUIRE without TEX_SEM_WAIT: ctm-guide §3.4.2 "must also set".
        prop_assert!(Instruction::decode(&[0x0000_0003, 1 << 25, 0, 0, 0, 0]).is_err());
    }

    /// ALU words with reserved values replaced: decode, encode and decode again agree.
    #[test]
    fn alu_words_round_trip(mut w in proptest::array::uniform6(any::<u32>()), out in any::<bool>()) {
        // Clear ALU_WAIT and STAT_WE (not ALU fields), set TYPE, keep PRED_SELs below 6.
        w[0] = (w[0] & !(1 << 10 | 0xf << 28 | 3)) | out as u32;
        for lo in [3, 25] {
            if (w[0] >> lo) & 7 >= 6 { w[0] &= !(7 << lo); }
        }
        // PRED_INV must be clear with PRED_SEL = NONE (ctm-guide §3.3.6).
        for (sel, inv) in [(3, 6), (25, 22)] {
            if (w[0] >> sel) & 7 == 0 { w[0] &= !(1 << inv); }
        }
        // 3-bit swizzle fields: 7 is unused.
        let swz: &[(usize, u32)] = &[(3, 2), (3, 5), (3, 8), (3, 15), (3, 18), (3, 21),
            (4, 14), (4, 21), (5, 14), (5, 17), (5, 20), (5, 27)];
        for &(k, lo) in swz {
            if (w[k] >> lo) & 7 == 7 { w[k] &= !(7 << lo); }
        }
        if matches!(w[5] & 0xf, 6 | 12..) { w[5] &= !0xf; }
        if w[4] & 0xf == 4 { w[4] &= !0xf; }
        // Inline constants cannot be relative.
        for k in [1, 2] {
            for s in 0..3 {
                let g = (w[k] >> (10 * s)) & 0x3ff;
                if g & 0x180 == 0x080 { w[k] &= !(1 << (10 * s + 9)); }
            }
        }
        // Pairing and modifier rules (§3.3.4, §3.3.5, §3.1) may still refuse the slot, on
        // both sides; whatever decodes must encode and decode back.
        if let Ok(i) = Instruction::decode(&w) {
            prop_assert_eq!(Instruction::decode(&i.encode().unwrap()).unwrap(), i);
        }
    }

    /// FC and TEX words: every defined bit survives decode + encode.
    #[test]
    fn fc_words_round_trip(inst in any::<u32>(), addr in any::<u32>(), cmn in any::<u32>()) {
        // Defined FC_INST bits: 2:0, 4, 5, 7:6, 15:8, 20:16, 25:24, 27:26, 28 (3 is unused).
        let inst = inst & 0x1f1f_fff7;
        let addr = addr & 0x81ff_1f1f;
        let cmn = (cmn & ((7 << 3) | 1 << 2 | 1 << 10)) | 2;
        let w = [cmn, 0, inst, addr, 0, 0];
        if let Ok(i) = Instruction::decode(&w)
            && let Ok(e) = i.encode()
        {
            prop_assert_eq!(e, w);
        }
    }

    /// TEX words: every defined bit survives decode + encode.
    #[test]
    fn tex_words_round_trip(cmn in any::<u32>(), inst in any::<u32>(), addr in any::<u32>(), dxdy in any::<u32>()) {
        // CMN bits used by TEX: 2, 5:3, 6, 7, 10, 13:11, 14, 22, 27:25 (r5xx §11.10).
        let cmn = (cmn & (1 << 2 | 7 << 3 | 1 << 6 | 1 << 7 | 1 << 10 | 7 << 11 | 1 << 14 | 1 << 22 | 7 << 25)) | 3;
        let inst = inst & (0xf << 16 | 7 << 22 | 1 << 25 | 1 << 26 | 1 << 27);
        let w = [cmn, inst, addr, dxdy, 0, 0];
        if let Ok(i) = Instruction::decode(&w)
            && let Ok(e) = i.encode()
        {
            prop_assert_eq!(e, w);
        }
    }
}
