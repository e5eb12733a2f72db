//! The text syntax: every example on both chips, program structure after layout, error
//! positions, and text/builder equivalence.

mod common;

use baregpu_evergreen_asm::*;
use common::{Clause, asm, asm_err, walk};

fn cf_insts(words: &[u32], chip: Chip) -> Vec<CfInstruction> {
    walk(words, chip).cf
}

fn cf(inst: CfInstruction) -> CfWord {
    match inst {
        CfInstruction::Cf(c) => c,
        other => panic!("not a CF_WORD: {other:?}"),
    }
}

#[test]
fn every_example_assembles_for_both_chips() {
    for (name, src) in examples::ALL {
        for chip in Chip::ALL {
            let (words, info) = asm(src, chip);
            let w = walk(&words, chip);
            assert_eq!(w.cf.len(), info.cf_count, "{name} {chip}: the walk ends at the last CF");
            let last = *w.cf.last().unwrap();
            match chip {
                Chip::Evergreen => {
                    let c = cf(last);
                    assert!(c.inst == CfInst::Nop && c.end_of_program, "{name}: A7 end");
                }
                Chip::Cayman => assert_eq!(cf(last).inst, CfInst::CfEnd, "{name}: §4.1 end"),
            }
            // Fetches read global memory through fetch buffer 1 by byte index; stores and
            // atomics go to RAT 0 (the ABI).
            for f in w.fetches() {
                assert_eq!(f.buffer_id, abi::GLOBAL_FETCH_BUFFER, "{name}");
                assert_eq!(f.data_format, DataFormat::Fmt32, "{name}");
            }
            for i in &w.cf {
                if let CfInstruction::Rat(r) = i {
                    assert_eq!(r.rat_id, abi::GLOBAL_RAT, "{name}");
                }
                // The fetch clause is VC on Evergreen and TC on Cayman.
                if let CfInstruction::Cf(c) = i {
                    assert_ne!(c.inst, if chip == Chip::Cayman { CfInst::Vc } else { CfInst::Tc });
                }
            }
            assert_eq!(info.words, words.len());
        }
    }
}

#[test]
fn vector_add_layout() {
    let (eg, info) = asm(examples::VECTOR_ADD, Chip::Evergreen);
    // ALU, VC, ALU, MEM_RAT_CACHELESS, NOP+EOP.
    assert_eq!(info.cf_count, 5);
    assert_eq!(info.num_gprs, 7, "r0..r6");
    assert_eq!(info.stack_depth, 0);
    let w = walk(&eg, Chip::Evergreen);
    let CfInstruction::Alu(a) = w.cf[0] else { panic!() };
    // First clause right after the 5 CF words; 9 slots: mullo, add_int, lshl_int + literal,
    // 3 add_int, lshr_int + literal. cb0 line 0 locked in set 0.
    assert_eq!((a.addr, a.count), (5, 8));
    assert_eq!(a.kcache[0], Kcache { bank: 0, mode: KcacheMode::Lock1, addr: 0 });
    // The VC clause follows at 64-bit unit 14 (already 128-bit aligned), 2 fetches.
    assert_eq!((cf(w.cf[1]).inst, cf(w.cf[1]).addr, cf(w.cf[1]).count), (CfInst::Vc, 14, 1));
    let CfInstruction::Alu(a2) = w.cf[2] else { panic!() };
    assert_eq!((a2.addr, a2.count), (18, 0));
    let CfInstruction::Rat(r) = w.cf[3] else { panic!() };
    assert_eq!((r.rat_inst, r.index_gpr, r.rw_gpr, r.comp_mask), (RatInst::StoreRaw, 6, 4, 1));
    // MULLO in t on Evergreen.
    let g0 = &w.alu_groups()[0].insts;
    assert_eq!((g0.len(), g0[0].op, g0[0].last), (1, AluOp::MulloUint, true));

    // Cayman: the ALU clause grows by the three MULLO copies (12 slots), so the TC clause is
    // padded from unit 17 to 18.
    let (cm, _) = asm(examples::VECTOR_ADD, Chip::Cayman);
    let w = walk(&cm, Chip::Cayman);
    assert_eq!((cf(w.cf[1]).inst, cf(w.cf[1]).addr), (CfInst::Tc, 18));
    assert_eq!(&cm[34..36], &[0, 0], "padding slot before the 128-bit aligned clause");
}

#[test]
fn collatz_flow_control_addresses() {
    for chip in Chip::ALL {
        let (words, info) = asm(examples::COLLATZ_STEP, chip);
        let c = cf_insts(&words, chip);
        // 0 ALU, 1 fetch, 2 ALU_PUSH_BEFORE, 3 JUMP even, 4 ALU, 5 ELSE done pop 1,
        // 6 ALU, 7 POP 1, 8 RAT store, 9 end.
        let CfInstruction::Alu(push) = c[2] else { panic!() };
        assert_eq!(push.inst, AluCfInst::AluPushBefore);
        assert_eq!((cf(c[3]).inst, cf(c[3]).addr, cf(c[3]).pop_count), (CfInst::Jump, 5, 0));
        assert_eq!((cf(c[5]).inst, cf(c[5]).addr, cf(c[5]).pop_count), (CfInst::Else, 8, 1));
        assert_eq!((cf(c[7]).inst, cf(c[7]).addr, cf(c[7]).pop_count), (CfInst::Pop, 8, 1));
        assert!(matches!(c[8], CfInstruction::Rat(_)));
        assert_eq!(info.stack_depth, 1);
        // The predicate: PRED_SETNE_INT updating the exec mask and the predicate, no write.
        let w = walk(&words, chip);
        let pred =
            w.alu_groups().into_iter().flat_map(|g| &g.insts).find(|i| i.op.is_pred_set()).unwrap();
        assert!(pred.update_exec_mask && pred.update_pred && !pred.write_mask);
    }
}

#[test]
fn loop_addresses_follow_the_nesting() {
    for chip in Chip::ALL {
        let (words, info) = asm(examples::BIT_LENGTH, chip);
        let c = cf_insts(&words, chip);
        // 3 LOOP_START_DX10 -> after LOOP_END (10); 5 JUMP body (8) pop 1;
        // 6 LOOP_BREAK -> LOOP_END (9) pop 1; 7 POP -> next; 9 LOOP_END -> after start (4).
        assert_eq!((cf(c[3]).inst, cf(c[3]).addr), (CfInst::LoopStartDx10, 10));
        assert_eq!((cf(c[5]).inst, cf(c[5]).addr, cf(c[5]).pop_count), (CfInst::Jump, 8, 1));
        assert_eq!((cf(c[6]).inst, cf(c[6]).addr, cf(c[6]).pop_count), (CfInst::LoopBreak, 9, 1));
        assert_eq!((cf(c[7]).inst, cf(c[7]).addr), (CfInst::Pop, 8));
        assert_eq!((cf(c[9]).inst, cf(c[9]).addr), (CfInst::LoopEnd, 4));
        assert_eq!(info.stack_depth, 2, "loop + push");
    }
}

#[test]
fn nested_loops_break_to_their_own_end() {
    let src = "\
loop_start_dx10          ; 0 -> 6
  loop_start_dx10        ; 1 -> 4
    loop_break           ; 2 -> 3
  loop_end               ; 3 -> 2
  loop_break             ; 4 -> 5
loop_end                 ; 5 -> 1
end";
    let (words, _) = asm(src, Chip::Cayman);
    let addrs: Vec<u32> = cf_insts(&words, Chip::Cayman).into_iter().map(|i| cf(i).addr).collect();
    assert_eq!(addrs, [6, 4, 3, 2, 5, 1, 0]);
}

#[test]
fn reduction_uses_the_atomic_add() {
    for chip in Chip::ALL {
        let (words, _) = asm(examples::REDUCE_ADD, chip);
        let w = walk(&words, chip);
        let rat =
            w.cf.iter()
                .find_map(|i| if let CfInstruction::Rat(r) = i { Some(*r) } else { None })
                .unwrap();
        assert_eq!(
            (rat.cf_inst, rat.rat_inst, rat.export_type),
            (RatCfInst::MemRat, RatInst::Add, ExportType::WriteInd)
        );
        // The 24-bit multiply-add is an OP3 vector op: slot x on both chips.
        let g = w.alu_groups()[0];
        assert_eq!((g.insts[0].op, g.insts[0].dst_chan), (AluOp::MuladdUint24, Chan::X));
    }
}

#[test]
fn comments_case_and_braces() {
    let a = "alu\n{ add r1.x, r2.x, r3.x\n  mov r1.y, r2.y }\nend";
    let b = "ALU // clause\n  { ADD R1.X, R2.X, R3.X   ; first\n    MOV R1.Y, R2.Y\n  }\nEND";
    for chip in Chip::ALL {
        assert_eq!(asm(a, chip).0, asm(b, chip).0);
    }
    // A line with a single instruction is a group of one: two lines, two groups.
    let (two, _) = asm("alu\n add r1.x, r2.x, r3.x\n mov r1.y, r2.y\nend", Chip::Evergreen);
    let w = walk(&two, Chip::Evergreen);
    assert_eq!(w.alu_groups().len(), 2);
}

#[test]
fn syntax_errors_carry_line_and_column() {
    let cases: &[(&str, u32, u32, ErrorKind)] = &[
        ("frobnicate\nend", 1, 1, ErrorKind::UnknownMnemonic),
        ("alu\n  add r1.x, r2.x\nend", 2, 17, ErrorKind::Expected("`,` and another operand")),
        ("alu\n  add r1.q, r2.x, r3.x\nend", 2, 10, ErrorKind::Expected("a channel x, y, z or w")),
        ("alu\n  add.fast r1.x, r2.x, r3.x\nend", 2, 7, ErrorKind::UnknownOption),
        ("alu\n  add r1.x, r2.x, 0x1_0000_0000\nend", 2, 19, ErrorKind::BadNumber),
        ("alu\n  add r1.x, r2.x, r3.x extra\nend", 2, 24, ErrorKind::Expected("end of line")),
        ("alu\n{ add r1.x, r2.x, r3.x\nend", 3, 1, ErrorKind::UnclosedGroup),
        ("alu\n{ add r1.x, r2.x, r3.x\n", 2, 1, ErrorKind::UnclosedGroup),
        ("alu\n add r1.x, r2.x, r3.x }\nend", 2, 23, ErrorKind::UnbalancedBrace),
        ("alu\n{ { add r1.x, r2.x, r3.x }\nend", 2, 3, ErrorKind::UnbalancedBrace),
        (
            "alu\n add r1.x, r2.x, r3.x @\nend",
            2,
            23,
            ErrorKind::Expected("a mnemonic, register, number or punctuation"),
        ),
        (
            "fetch\n vfetch r1.xy, r0.x, vb1\nend",
            2,
            12,
            ErrorKind::Expected("four destination selects of x y z w 0 1 _"),
        ),
        (
            "fetch\n vfetch r1, r0.x, vb1, fmt=16\nend",
            2,
            28,
            ErrorKind::Expected("32, 32_32 or 32_32_32_32"),
        ),
        (
            "mem_rat store_raw rat0[r1.y], r2.x\nend",
            1,
            27,
            ErrorKind::Expected("`.x`: the index is read from channel x"),
        ),
        (
            "mem_rat store_raw rat0[r1.x], r2.yx\nend",
            1,
            34,
            ErrorKind::Expected("a component mask of x y z w in order"),
        ),
        ("mem_rat xchg rat0[r1.x], r2.x\nend", 1, 9, ErrorKind::UnknownMnemonic),
        ("jump l, pops=1\nl:\nend", 1, 9, ErrorKind::UnknownOption),
        ("pop 8\nend", 1, 5, ErrorKind::BadNumber),
    ];
    for &(src, line, col, kind) in cases {
        let e = asm_err(src, Chip::Evergreen);
        assert_eq!((e.line, e.col, e.kind), (line, col, kind), "{src:?}: {e}");
    }
}

#[test]
fn error_messages_name_the_position() {
    let e = asm_err("alu\n  x: mullo_int r1.x, r2.x, r3.x\nend", Chip::Evergreen);
    let text = format!("{e}");
    assert!(text.starts_with("2:3: "), "{text}");
    assert!(text.contains("mullo_int") && text.contains("t slot"), "{text}");
}

#[test]
fn builder_and_text_produce_the_same_words() {
    let src = "\
alu
    mullo_uint r2.x, r1.x, cb0[1].z
    add_int r2.x, r2.x, r0.x
fetch
    vfetch r4.x___, r2.x, vb1
alu_push_before
    pred_sete_int.exec.pred _.x, r4.x, 7
jump skip, pop=1
alu_pop_after
    mov r5.x, -|r4.x|
skip:
mem_rat_cacheless store rat0[r2.x], r5.x
end";
    for chip in Chip::ALL {
        let mut nodes = [Node::EMPTY; 32];
        let mut b = Builder::new(chip, &mut nodes);
        let x = Chan::X;
        b.alu(AluCfInst::Alu).unwrap();
        b.group(&[AluInst::new(
            AluOp::MulloUint,
            Dst::gpr(2, x),
            &[Src::gpr(1, x).into(), Src::cb(0, 1, Chan::Z).into()],
        )])
        .unwrap();
        b.group(&[AluInst::new(
            AluOp::AddInt,
            Dst::gpr(2, x),
            &[Src::gpr(2, x).into(), Src::gpr(0, x).into()],
        )])
        .unwrap();
        b.fetch(FetchClause::Vertex).unwrap();
        let sel = [DstSel::X, DstSel::Mask, DstSel::Mask, DstSel::Mask];
        b.vfetch(&VtxFetch::load(chip, DataFormat::Fmt32, 4, sel, 2, x, 1)).unwrap();
        b.alu(AluCfInst::AluPushBefore).unwrap();
        let mut pred = AluInst::new(
            AluOp::PredSeteInt,
            Dst::none(x),
            &[Src::gpr(4, x).into(), Src::value(7).into()],
        );
        pred.update_exec_mask = true;
        pred.update_pred = true;
        b.group(&[pred]).unwrap();
        let skip = b.new_label().unwrap();
        b.jump(skip, 1).unwrap();
        b.alu(AluCfInst::AluPopAfter).unwrap();
        b.group(&[AluInst::new(
            AluOp::Mov,
            Dst::gpr(5, x),
            &[Operand::new(Src::gpr(4, x)).abs().neg()],
        )])
        .unwrap();
        b.bind(skip).unwrap();
        b.rat(&RatExport::indexed(
            RatCfInst::MemRatCacheless,
            RatInst::store_for(chip),
            0,
            2,
            5,
            1,
        ))
        .unwrap();
        b.end().unwrap();
        let mut built = [0u32; 128];
        let info = b.finish(&mut built).unwrap();
        let (text, tinfo) = asm(src, chip);
        assert_eq!(&built[..info.words], &text[..], "{chip}");
        assert_eq!(info, tinfo);
    }
}

#[test]
fn fetch_options() {
    let (w, _) = asm(
        "fetch\n vfetch r1.xy01, r0.y, vb3, offset=16, fmt=32_32, num=scaled, signed\nend",
        Chip::Cayman,
    );
    let Clause::Fetch(f) = &walk(&w, Chip::Cayman).clauses[0].1 else { panic!() };
    let f = f[0];
    assert_eq!(f.dst_sel, [DstSel::X, DstSel::Y, DstSel::Zero, DstSel::One]);
    assert_eq!((f.src_gpr, f.src_sel_x, f.buffer_id, f.offset), (0, Chan::Y, 3, 16));
    assert_eq!(
        (f.data_format, f.num_format, f.format_comp_signed),
        (DataFormat::Fmt32x2, NumFormat::Scaled, true)
    );
    assert_eq!((f.mega_fetch, f.mega_fetch_count), (false, 0));
    // Evergreen: MEGA_FETCH_COUNT defaults to the element size, or as given.
    let (w, _) = asm(
        "fetch\n vfetch r1, r0.x, vb1, fmt=32_32\n vfetch r2, r0.x, vb1, mfc=12\nend",
        Chip::Evergreen,
    );
    let f = walk(&w, Chip::Evergreen).fetches().into_iter().copied().collect::<Vec<_>>();
    assert_eq!((f[0].mega_fetch_count, f[1].mega_fetch_count), (8, 12));
    // Cayman has no such field.
    let e = asm_err("fetch\n vfetch r2, r0.x, vb1, mfc=12\nend", Chip::Cayman);
    assert!(matches!(e.kind, ErrorKind::Encode(EncodeError::NotOnChip { .. })), "{e}");
}

#[test]
fn abi_dispatch_constants() {
    let mut cb = [0u32; 16];
    let n =
        abi::dispatch_constants([4, 2, 1], [64, 1, 1], &[0x100, 0x200, 0x300], &mut cb).unwrap();
    assert_eq!(n, 12);
    assert_eq!(&cb[..12], &[4, 2, 1, 256, 2, 1, 64, 1, 1, 0x100, 0x200, 0x300]);
    // The examples read local_size_x at cb0[1].z = dword 6 and the first argument at
    // cb0[2].y = dword 9.
    assert_eq!(abi::CB0_LOCAL_SIZE, 4 + 2);
    assert_eq!(abi::CB0_ARGS, 2 * 4 + 1);
    assert_eq!(
        abi::dispatch_constants([1; 3], [1; 3], &[1, 2], &mut cb[..10]),
        Err(abi::AbiError::BufferTooSmall { needed: 11 })
    );
    assert_eq!(
        abi::dispatch_constants([1 << 16, 1, 1], [1 << 16, 1, 1], &[], &mut cb),
        Err(abi::AbiError::GlobalSizeOverflow)
    );
}
