//! One test per rule the assembler enforces: each program breaks exactly one rule of its chip
//! and must be rejected with that error at that line and column.

mod common;

use baregpu_evergreen_asm::*;
use common::asm_err;

const EG: Chip = Chip::Evergreen;
const CM: Chip = Chip::Cayman;

#[track_caller]
fn rejects(chip: Chip, src: &str, line: u32, col: u32, kind: ErrorKind) {
    let e = asm_err(src, chip);
    assert_eq!((e.line, e.col, e.kind), (line, col, kind), "{chip}: {e}");
}

// ---- slots ----

#[test]
fn two_vector_only_ops_for_one_channel() {
    // FLT_TO_INT cannot move to t: the second one finds slot x taken.
    rejects(
        EG,
        "alu\n{ flt_to_int r1.x, r2.x\n  flt_to_int r3.x, r4.x }\nend",
        3,
        3,
        ErrorKind::SlotTaken(Slot::X),
    );
}

#[test]
fn two_ops_for_one_channel_on_cayman() {
    // Evergreen moves the second ADD to t; Cayman has nowhere to put it.
    let src = "alu\n{ add r1.x, r2.x, r2.y\n  add r3.x, r4.x, r4.y }\nend";
    assert!(common::asm(src, EG).1.words > 0);
    rejects(CM, src, 3, 3, ErrorKind::SlotTaken(Slot::X));
}

#[test]
fn third_op_for_one_channel_with_t_taken() {
    rejects(
        EG,
        "alu\n{ add r1.x, r2.x, r2.y\n  add r3.x, r4.x, r4.y\n  add r5.x, r6.x, r6.y }\nend",
        4,
        3,
        ErrorKind::SlotTaken(Slot::X),
    );
}

#[test]
fn two_trans_only_ops_in_one_group() {
    rejects(
        EG,
        "alu\n{ mullo_int r1.x, r2.x, r3.x\n  int_to_flt r1.y, r2.y }\nend",
        3,
        3,
        ErrorKind::SlotTaken(Slot::T),
    );
}

#[test]
fn trans_only_op_in_a_vector_slot_on_evergreen() {
    rejects(
        EG,
        "alu\n  x: mullo_int r1.x, r2.x, r3.x\nend",
        2,
        3,
        ErrorKind::TransOnlyOp(AluOp::MulloInt),
    );
}

#[test]
fn vector_only_op_in_t() {
    rejects(
        EG,
        "alu\n  t: flt_to_int r1.x, r2.x\nend",
        2,
        3,
        ErrorKind::VectorOnlyOp(AluOp::FltToInt),
    );
}

#[test]
fn t_slot_on_cayman() {
    rejects(CM, "alu\n  t: add r1.x, r2.x, r3.x\nend", 2, 3, ErrorKind::NoTransSlotOnCayman);
}

#[test]
fn vector_slot_must_be_the_destination_channel() {
    for chip in Chip::ALL {
        rejects(chip, "alu\n  y: add r1.x, r2.x, r3.x\nend", 2, 3, ErrorKind::SlotChannelMismatch);
    }
}

#[test]
fn explicit_t_with_a_free_vector_slot_would_decode_as_vector() {
    rejects(EG, "alu\n  t: add r1.x, r2.x, r3.x\nend", 2, 3, ErrorKind::AmbiguousTransSlot);
    // With x taken, the explicit t is what the hardware decodes.
    assert!(common::asm("alu\n{ mov r1.x, r2.x\n t: add r3.x, r2.y, r2.z }\nend", EG).1.words > 0);
}

#[test]
fn explicit_slot_on_a_replicated_cayman_op() {
    rejects(
        CM,
        "alu\n  x: mullo_uint r1.x, r2.x, r3.x\nend",
        2,
        3,
        ErrorKind::ReplicatedOpSlot(AluOp::MulloUint),
    );
}

#[test]
fn replicated_op_shares_no_group_on_cayman() {
    // MULLO takes x, y, z and w on Cayman; the ADD in y has no slot left.
    let src = "alu\n{ mullo_uint r1.x, r2.x, r3.x\n  add r4.y, r5.y, r6.y }\nend";
    assert!(common::asm(src, EG).1.words > 0);
    rejects(CM, src, 3, 3, ErrorKind::SlotTaken(Slot::Y));
}

#[test]
fn ps_on_cayman() {
    rejects(CM, "alu\n  mov r1.x, ps\nend", 2, 3, ErrorKind::PsOnCayman);
}

// ---- group rules ----

#[test]
fn more_than_four_literals() {
    rejects(
        EG,
        "alu\n{ add_int r1.x, 10, 11\n  add_int r1.y, 12, 13\n  add_int r1.z, 14, 15 }\nend",
        4,
        3,
        ErrorKind::TooManyLiterals,
    );
    // Equal values share a literal slot: four distinct values fit.
    assert!(
        common::asm(
            "alu\n{ add_int r1.x, 10, 11\n  add_int r1.y, 12, 13\n  add_int r1.z, 10, 13 }\nend",
            CM
        )
        .1
        .words
            > 0
    );
}

#[test]
fn two_pred_sets_in_a_group() {
    rejects(
        EG,
        "alu_push_before\n{ pred_sete_int.exec _.x, r1.x, 0\n  pred_sete_int _.y, r1.y, 0 }\nend",
        3,
        3,
        ErrorKind::PredSetTwice,
    );
}

#[test]
fn two_writes_of_one_channel() {
    // ADD goes to x, the second ADD to t, and both write r1.x.
    rejects(
        EG,
        "alu\n{ add r1.x, r2.x, r2.y\n  add r1.x, r3.x, r3.y }\nend",
        3,
        3,
        ErrorKind::DuplicateWrite,
    );
}

#[test]
fn too_many_kcache_sets() {
    // Three lines far apart (0, 2, 4) need three sets; only two exist without ALU_EXTENDED.
    rejects(
        EG,
        "alu\n  mov r1.x, cb0[0].x\n  mov r1.y, cb0[32].x\n  mov r1.z, cb0[64].x\nend",
        4,
        3,
        ErrorKind::TooManyKcacheSets,
    );
    // Lines 1 and 2 of one buffer plus another buffer fit: LOCK_2 + LOCK_1.
    assert!(
        common::asm(
            "alu\n  mov r1.x, cb0[16].x\n  mov r1.y, cb0[32].x\n  mov r1.z, cb3[0].x\nend",
            CM
        )
        .1
        .words
            > 0
    );
}

#[test]
fn kcache_sets_are_per_clause() {
    // Each clause locks its own lines: the same three lines over three clauses assemble.
    let src = "alu\n mov r1.x, cb0[0].x\nalu\n mov r1.y, cb0[32].x\nalu\n mov r1.z, cb0[64].x\nend";
    assert!(common::asm(src, EG).1.words > 0);
}

#[test]
fn more_than_two_constant_read_ports() {
    // cb0[0].x and cb0[0].y share a port (channel pair xy); cb0[1].x and cb0[2].z need two more.
    rejects(
        CM,
        "alu\n{ add r1.x, cb0[0].x, cb0[0].y\n  add r1.y, cb0[1].x, cb0[2].z }\nend",
        3,
        3,
        ErrorKind::ConstantReadPorts,
    );
}

#[test]
fn unsatisfiable_gpr_read_ports() {
    // Two OP3 instructions each reading three different GPRs on bank x: bank x has only
    // three read cycles for the whole group.
    rejects(
        EG,
        "alu\n{ muladd r1.x, r2.x, r3.x, r4.x\n  muladd r1.y, r5.x, r6.x, r7.x }\nend",
        3,
        3,
        ErrorKind::BankSwizzle,
    );
}

#[test]
fn more_than_two_constants_in_t() {
    rejects(
        EG,
        "alu\n{ mov r2.x, r3.x\n  muladd r1.x, cb0[0].x, cb0[0].y, 3.5 }\nend",
        3,
        3,
        ErrorKind::TransConstants,
    );
}

#[test]
fn op3_without_a_write() {
    rejects(EG, "alu\n  muladd _.x, r1.x, r2.x, r3.x\nend", 2, 3, ErrorKind::Op3AlwaysWrites);
}

#[test]
fn abs_or_omod_on_op3() {
    rejects(CM, "alu\n  muladd r1.x, |r1.x|, r2.x, r3.x\nend", 2, 3, ErrorKind::Op3Modifier);
    rejects(CM, "alu\n  muladd.m2 r1.x, r1.x, r2.x, r3.x\nend", 2, 3, ErrorKind::Op3Modifier);
}

#[test]
fn exec_update_on_a_non_pred_set_op() {
    rejects(EG, "alu\n  add.exec r1.x, r1.x, r2.x\nend", 2, 3, ErrorKind::UpdateOnNonPredSet);
}

#[test]
fn omod_with_exec_update_on_cayman() {
    let src = "alu_push_before\n  pred_sete.exec.m2 _.x, r1.x, 0\npop\nend";
    assert!(common::asm(src, EG).1.words > 0);
    rejects(CM, src, 2, 3, ErrorKind::ExecMaskOmodOnCayman);
}

#[test]
fn bad_sources() {
    rejects(EG, "alu\n  mov r1.x, r128.x\nend", 2, 13, ErrorKind::BadNumber);
    rejects(EG, "alu\n  mov r1.x, cb16[0].x\nend", 2, 13, ErrorKind::BadNumber);
    rejects(EG, "alu\n  mov r1.x, cb0[4096].x\nend", 2, 17, ErrorKind::BadNumber);
}

// ---- clauses and program structure ----

#[test]
fn alu_outside_a_clause() {
    rejects(EG, "  add r1.x, r2.x, r3.x\nend", 1, 3, ErrorKind::AluOutsideClause);
    // A label ends the clause: it marks a CF instruction.
    rejects(
        EG,
        "alu\n mov r1.x, r0.x\nl:\n  add r1.x, r2.x, r3.x\nend",
        4,
        3,
        ErrorKind::AluOutsideClause,
    );
}

#[test]
fn fetch_outside_a_fetch_clause() {
    rejects(EG, "alu\n  vfetch r1, r0.x, vb1\nend", 2, 3, ErrorKind::FetchOutsideClause);
}

#[test]
fn empty_clause() {
    rejects(CM, "alu\nfetch\n  vfetch r1, r0.x, vb1\nend", 1, 1, ErrorKind::EmptyClause);
    rejects(EG, "alu\n mov r1.x, r0.x\nfetch\nend", 3, 1, ErrorKind::EmptyClause);
}

#[test]
fn alu_clause_over_128_slots() {
    let mut src = String::from("alu\n");
    for i in 0..129 {
        src += &format!("  mov r{}.x, r0.x\n", i % 100);
    }
    src += "end\n";
    rejects(EG, &src, 130, 3, ErrorKind::ClauseTooLong);
}

#[test]
fn fetch_clause_over_64_fetches() {
    let mut src = String::from("fetch\n");
    for _ in 0..65 {
        src += "  vfetch r1, r0.x, vb1\n";
    }
    src += "end\n";
    rejects(CM, &src, 66, 3, ErrorKind::ClauseTooLong);
}

#[test]
fn vc_clause_on_cayman() {
    rejects(CM, "vc\n  vfetch r1, r0.x, vb1\nend", 1, 1, ErrorKind::VcClauseOnCayman);
    assert!(common::asm("vc\n  vfetch r1, r0.x, vb1\nend", EG).1.words > 0);
}

#[test]
fn end_of_program_on_cayman() {
    let src = "alu\n mov r1.x, r0.x\nmem_rat_cacheless store_raw rat0[r0.x], r1.x, eop";
    assert!(common::asm(src, EG).1.words > 0);
    rejects(CM, src, 3, 1, ErrorKind::EndOfProgramOnCayman);
}

#[test]
fn each_chip_has_its_own_global_store() {
    use baregpu_evergreen_asm::EncodeError;
    let raw = "alu\n mov r1.x, r0.x\nmem_rat_cacheless store_raw rat0[r0.x], r1.x\nend";
    let dword = "alu\n mov r1.x, r0.x\nmem_rat_cacheless store_dword rat0[r0.x], r1.x\nend";
    let not_on = |what, chip| ErrorKind::Encode(EncodeError::NotOnChip { what, chip });
    rejects(CM, raw, 3, 1, not_on("STORE_RAW", CM));
    rejects(EG, dword, 3, 1, not_on("STORE_DWORD", EG));
    assert!(common::asm(raw, EG).1.words > 0);
    assert!(common::asm(dword, CM).1.words > 0);
    // `store` picks the chip's form.
    let neutral = "alu\n mov r1.x, r0.x\nmem_rat_cacheless store rat0[r0.x], r1.x\nend";
    assert_eq!(common::asm(neutral, EG).0, common::asm(raw, EG).0);
    assert_eq!(common::asm(neutral, CM).0, common::asm(dword, CM).0);
}

#[test]
fn cf_end_on_evergreen() {
    rejects(EG, "nop\ncf_end", 2, 1, ErrorKind::CfEndOnEvergreen);
    assert!(common::asm("nop\ncf_end", CM).1.words > 0);
}

#[test]
fn missing_end() {
    rejects(EG, "alu\n  mov r1.x, r0.x\n", 2, 1, ErrorKind::MissingEnd);
    rejects(CM, "", 1, 1, ErrorKind::MissingEnd);
}

#[test]
fn code_after_end() {
    rejects(CM, "end\nnop", 2, 1, ErrorKind::CodeAfterEnd);
    rejects(EG, "mem_rat add rat0[r0.x], r1.x, eop\nalu", 2, 1, ErrorKind::CodeAfterEnd);
}

#[test]
fn unbalanced_loops() {
    rejects(EG, "loop_end\nend", 1, 1, ErrorKind::UnbalancedLoop);
    rejects(CM, "nop\nloop_start_dx10\nnop\nend", 2, 1, ErrorKind::UnbalancedLoop);
}

#[test]
fn break_outside_a_loop() {
    rejects(EG, "loop_break\nend", 1, 1, ErrorKind::BreakOutsideLoop);
}

#[test]
fn more_pops_than_pushes() {
    rejects(CM, "push l\npop 2\nl:\nend", 2, 1, ErrorKind::StackUnderflow);
    rejects(EG, "alu_pop_after\n mov r1.x, r0.x\nend", 1, 1, ErrorKind::StackUnderflow);
}

#[test]
fn eop_only_where_the_chip_has_it() {
    // ALU clauses have no END_OF_PROGRAM bit: there is no syntax for it, and `eop` is only an
    // option of RAT exports.
    rejects(EG, "alu, eop\nend", 1, 4, ErrorKind::Expected("end of line"));
}

// ---- labels ----

#[test]
fn undefined_label() {
    rejects(EG, "jump nowhere\nend", 1, 6, ErrorKind::UndefinedLabel);
}

#[test]
fn duplicate_label() {
    rejects(CM, "a:\nnop\na:\nend", 3, 1, ErrorKind::DuplicateLabel);
}

#[test]
fn label_after_the_end() {
    rejects(EG, "jump out\nend\nout:", 1, 6, ErrorKind::LabelPastEnd);
}

// ---- capacity ----

#[test]
fn capacity_limits_are_errors() {
    let mut nodes = [Node::EMPTY; 2];
    let mut out = [0u32; 64];
    let e = assemble("nop\nnop\nnop\nend", EG, &mut nodes, &mut out).unwrap_err();
    assert_eq!((e.line, e.kind), (3, ErrorKind::Capacity("nodes")));
    let mut nodes = [Node::EMPTY; 8];
    let mut out = [0u32; 3];
    let e = assemble("nop\nend", EG, &mut nodes, &mut out).unwrap_err();
    assert_eq!(e.kind, ErrorKind::OutputTooSmall { needed: 4 });
    let mut src = String::new();
    for i in 0..=MAX_LABELS {
        src += &format!("l{i}:\nnop\n");
    }
    src += "end";
    let mut nodes = [Node::EMPTY; 256];
    let mut out = [0u32; 512];
    let e = assemble(&src, EG, &mut nodes, &mut out).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Capacity("labels"));
}

#[test]
fn builder_rejects_an_empty_group() {
    let mut nodes = [Node::EMPTY; 8];
    let mut b = Builder::new(EG, &mut nodes);
    b.alu(AluCfInst::Alu).unwrap();
    b.at(7, 1);
    let e = b.group(&[]).unwrap_err();
    assert_eq!((e.line, e.col, e.kind), (7, 1, ErrorKind::EmptyGroup));
}

#[test]
fn a_failed_builder_call_records_nothing() {
    let build = |with_errors: bool| -> Vec<u32> {
        let mut nodes = [Node::EMPTY; 32];
        let mut b = Builder::new(CM, &mut nodes);
        let x = Chan::X;
        let mov = AluInst::new(AluOp::Mov, Dst::gpr(1, x), &[Src::gpr(0, x).into()]);
        if with_errors {
            assert_eq!(b.pop(1).unwrap_err().kind, ErrorKind::StackUnderflow);
            assert_eq!(b.loop_end().unwrap_err().kind, ErrorKind::UnbalancedLoop);
            assert_eq!(b.group(&[mov]).unwrap_err().kind, ErrorKind::AluOutsideClause);
        }
        b.alu(AluCfInst::Alu).unwrap();
        if with_errors {
            let clash = AluInst::new(AluOp::Mov, Dst::gpr(2, x), &[Src::gpr(0, x).into()]);
            assert_eq!(b.group(&[mov, clash]).unwrap_err().kind, ErrorKind::SlotTaken(Slot::X));
        }
        b.group(&[mov]).unwrap();
        let l = b.new_label().unwrap();
        if with_errors {
            assert!(matches!(b.jump(l, 9).unwrap_err().kind, ErrorKind::Encode(_)));
            assert_eq!(b.alu(AluCfInst::AluPopAfter).unwrap_err().kind, ErrorKind::StackUnderflow);
        }
        b.jump(l, 0).unwrap();
        b.bind(l).unwrap();
        b.end().unwrap();
        if with_errors {
            assert_eq!(b.nop().unwrap_err().kind, ErrorKind::CodeAfterEnd);
        }
        let mut out = vec![0u32; 64];
        let info = b.finish(&mut out).unwrap();
        out.truncate(info.words);
        out
    };
    assert_eq!(build(true), build(false));
}

#[test]
fn an_empty_clause_stays_an_error() {
    let mut nodes = [Node::EMPTY; 8];
    let mut b = Builder::new(EG, &mut nodes);
    b.at(1, 1);
    b.alu(AluCfInst::Alu).unwrap();
    b.at(2, 1);
    assert_eq!(b.nop().unwrap_err(), Error { line: 1, col: 1, kind: ErrorKind::EmptyClause });
    assert_eq!(b.end().unwrap_err().kind, ErrorKind::EmptyClause);
    let mut out = [0u32; 16];
    assert_eq!(b.finish(&mut out).unwrap_err().kind, ErrorKind::EmptyClause);
}
