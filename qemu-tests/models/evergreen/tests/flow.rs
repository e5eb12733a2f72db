//! Flow control per thread: PUSH/JUMP/ELSE/POP and ALU_PUSH_BEFORE/POP_AFTER, DX10 loops with
//! LOOP_BREAK / LOOP_CONTINUE, LOOP_START_NO_AL counted by a loop constant, boolean-constant
//! conditions, and the stack errors.
//!
//! CF_WORD1 layout (Mesa sb_bc_fmt_def.inc): POP_COUNT 2:0 | CF_CONST 7:3 | COND 9:8 | COUNT 15:10
//! | END_OF_PROGRAM 21 | CF_INST 29:22 | BARRIER 31 (0x8000_0000, set on every CF word here).
//! CF_ALU_WORD1: COUNT 24:18 (slots - 1) | CF_INST 29:26 (ALU 8 = 0x2000_0000, PUSH_BEFORE 9 =
//! 0x2400_0000, POP_AFTER 10 = 0x2800_0000) | BARRIER. CF_WORD0 / CF_ALU_WORD0 = ADDR.
mod common;
use common::*;

/// if (tid > 1) R2.x = 100 else R2.x = 200; store R2.x at dword tid. The clauses start at CF
/// index 8 (room for Cayman's CF_END).
fn if_else_program(m: &mut FlatMemory, chip: Chip) {
    let cf = [
        // CF0 ALU_PUSH_BEFORE @8, 2 slots: COUNT 1<<18 (0x4_0000) | 0x2400_0000 | BARRIER.
        [0x0000_0008, 0xA404_0000],
        // CF1 JUMP @3 (the ELSE), POP_COUNT 0: CF_INST 0x0A<<22 (0x0280_0000) | BARRIER.
        [0x0000_0003, 0x8280_0000],
        // CF2 ALU @10, 2 slots (then branch): 0x4_0000 | 0x2000_0000 | BARRIER.
        [0x0000_000A, 0xA004_0000],
        // CF3 ELSE @5, POP_COUNT 1: 0x0D<<22 (0x0340_0000) | 1 | BARRIER.
        [0x0000_0005, 0x8340_0001],
        // CF4 ALU_POP_AFTER @12, 2 slots (else branch): 0x4_0000 | 0x2800_0000 | BARRIER.
        [0x0000_000C, 0xA804_0000],
    ];
    let clauses = [
        // @8 PRED_SETGT_INT R0.x > literal.x, UPDATE_EXEC_MASK, UPDATE_PRED, WRITE_MASK 0:
        // W0 = SRC0 0 | SRC1 253<<13 (0x1F_A000) | LAST; W1 = UEM 1<<2 | UP 1<<3 | 0x43<<7
        // (0x2180) | DST_GPR 2<<21 (0x40_0000).
        [0x801F_A000, 0x0040_218C],
        [1, 0],
        // @10 MOV R2.x = literal.x (100): W0 = 253 | LAST; W1 = 0x19<<7 (0xC80) | 0x10 |
        // 0x40_0000.
        [0x8000_00FD, 0x0040_0C90],
        [100, 0],
        // @12 MOV R2.x = literal.x (200).
        [0x8000_00FD, 0x0040_0C90],
        [200, 0],
    ];
    load_program(m, &cat(&cf, store_r2x(chip)), 8, &clauses);
}

#[test]
fn if_else_per_thread_over_partial_waves() {
    for chip in CHIPS {
        let mut m = mem();
        if_else_program(&mut m, chip);
        let mut s = state(chip);
        s.num_threads = [70, 1, 1];
        s.rats[0] = rat_u32(RAT0, 128);
        let stats = run(s, &mut m).unwrap();
        let want: Vec<u32> = (0..70).map(|t| if t > 1 { 100 } else { 200 }).collect();
        assert_eq!(get(&mut m, RAT0, 70), want, "{chip:?}");
        // Wave 0 runs the predicate and both branches; in wave 1 (threads 64-69, all > 1) the
        // ELSE finds no thread and jumps past the else clause.
        assert_eq!((stats.waves, stats.alu_groups), (2, 3 + 2), "{chip:?}");
        // Threads 70.. of the partial wave do not exist: nothing stored past dword 69.
        assert_eq!(get(&mut m, RAT0 + 70 * 4, 1), [0]);
    }
}

#[test]
fn jump_skips_a_branch_no_thread_takes() {
    for chip in CHIPS {
        let mut m = mem();
        if_else_program(&mut m, chip);
        let mut s = state(chip);
        // Threads 0 and 1 only: nobody passes tid > 1, JUMP goes straight to the ELSE.
        s.num_threads = [2, 1, 1];
        let stats = run(s, &mut m).unwrap();
        assert_eq!(get(&mut m, RAT0, 2), [200, 200], "{chip:?}");
        assert_eq!(stats.alu_groups, 2, "{chip:?}: the then-clause never ran");
    }
}

/// loop { R2.x += 1; if (R2.x > tid) break; }: thread t ends with t + 1. The loop runs until
/// the last thread of the wave breaks (64 iterations for wave 0).
fn break_loop_program(m: &mut FlatMemory, chip: Chip) {
    let cf = [
        // CF0 LOOP_START_DX10 @6 (after LOOP_END): 0x06<<22 (0x0180_0000) | BARRIER.
        [0x0000_0006, 0x8180_0000],
        // CF1 ALU_PUSH_BEFORE @8, 2 slots.
        [0x0000_0008, 0xA404_0000],
        // CF2 JUMP @5 POP_COUNT 1 (nobody breaks: skip to after the POP).
        [0x0000_0005, 0x8280_0001],
        // CF3 LOOP_BREAK @5 (the LOOP_END): 0x09<<22 (0x0240_0000) | BARRIER.
        [0x0000_0005, 0x8240_0000],
        // CF4 POP POP_COUNT 1: 0x0E<<22 (0x0380_0000) | 1 | BARRIER.
        [0x0000_0005, 0x8380_0001],
        // CF5 LOOP_END @1: 0x05<<22 (0x0140_0000) | BARRIER.
        [0x0000_0001, 0x8140_0000],
    ];
    let clauses = [
        // @8 ADD_INT R2.x = R2.x + int 1: W0 = SRC0 2 | SRC1 250<<13 (0x1F_4000) | LAST;
        // W1 = 0x34<<7 (0x1A00) | 0x10 | 0x40_0000.
        [0x801F_4002, 0x0040_1A10],
        // @9 PRED_SETGT_INT R2.x > R0.x, UEM, UP, WRITE_MASK 0: W0 = 2 | LAST; W1 = 0x0040_218C.
        [0x8000_0002, 0x0040_218C],
    ];
    load_program(m, &cat(&cf, store_r2x(chip)), 8, &clauses);
}

#[test]
fn dx10_loop_with_per_thread_break() {
    for chip in CHIPS {
        let mut m = mem();
        break_loop_program(&mut m, chip);
        let mut s = state(chip);
        s.num_threads = [70, 1, 1];
        s.rats[0] = rat_u32(RAT0, 128);
        run(s.clone(), &mut m).unwrap();
        let want: Vec<u32> = (1..=70).collect();
        assert_eq!(get(&mut m, RAT0, 70), want, "{chip:?}");

        // A loop (4 elements) plus a PUSH (1) need 2 stack entries of 4 elements.
        s.pgm_resources = 8 | 1 << 8;
        let e = run(s, &mut m).unwrap_err();
        assert_eq!(e.kind, ShaderErrorKind::StackOverflow { entries: 1 }, "{chip:?}");
        assert_eq!(e.at.map(|a| a.cf), Some(1), "{chip:?}: failed at the ALU_PUSH_BEFORE");
    }
}

/// loop { R2.x += 1; if (R2.x > 3) break; if (R2.x & 1) continue; R2.y += 1; }: continued
/// threads rejoin at LOOP_END: R2 = (4, 1).
#[test]
fn dx10_loop_with_continue() {
    let cf = [
        // CF0 LOOP_START_DX10 @11.
        [0x0000_000B, 0x8180_0000],
        // CF1 ALU_PUSH_BEFORE @14, 3 slots: COUNT 2<<18 (0x8_0000) | 0x2400_0000 | BARRIER.
        [0x0000_000E, 0xA408_0000],
        // CF2 JUMP @5 POP_COUNT 1; CF3 LOOP_BREAK @10; CF4 POP 1.
        [0x0000_0005, 0x8280_0001],
        [0x0000_000A, 0x8240_0000],
        [0x0000_0005, 0x8380_0001],
        // CF5 ALU_PUSH_BEFORE @17, 2 slots.
        [0x0000_0011, 0xA404_0000],
        // CF6 JUMP @9 POP_COUNT 1; CF7 LOOP_CONTINUE @10 (0x08<<22 = 0x0200_0000); CF8 POP 1.
        [0x0000_0009, 0x8280_0001],
        [0x0000_000A, 0x8200_0000],
        [0x0000_0009, 0x8380_0001],
        // CF9 ALU @19, 1 slot: 0x2000_0000 | BARRIER.
        [0x0000_0013, 0xA000_0000],
        // CF10 LOOP_END @1.
        [0x0000_0001, 0x8140_0000],
    ];
    let clauses = [
        // @14 ADD_INT R2.x = R2.x + 1 (as in the break loop).
        [0x801F_4002, 0x0040_1A10],
        // @15 PRED_SETGT_INT R2.x > literal.x (3): W0 = 2 | 253<<13 (0x1F_A000) | LAST;
        // W1 = 0x0040_218C; @16 literal.
        [0x801F_A002, 0x0040_218C],
        [3, 0],
        // @17 AND_INT R3.x = R2.x & int 1: W0 = 2 | 250<<13 | LAST; W1 = 0x30<<7 (0x1800) |
        // 0x10 | DST_GPR 3<<21 (0x60_0000).
        [0x801F_4002, 0x0060_1810],
        // @18 PRED_SETNE_INT R3.x != 0 (SRC1 248, 0.0 = integer 0 bits): W0 = 3 | 248<<13
        // (0x1F_0000) | LAST; W1 = 0xC | 0x45<<7 (0x2280) | 0x40_0000.
        [0x801F_0003, 0x0040_228C],
        // @19 ADD_INT R2.y = R2.y + 1: W0 = 2 | SRC0_CHAN 1<<10 (0x400) | 250<<13 | LAST;
        // W1 = 0x1A00 | 0x10 | 0x40_0000 | chan y (0x2000_0000).
        [0x801F_4402, 0x2040_1A10],
    ];
    for chip in CHIPS {
        let mut m = mem();
        load_program(&mut m, &cat(&cf, store_r2(chip)), 14, &clauses);
        run(state(chip), &mut m).unwrap();
        assert_eq!(get(&mut m, RAT0, 2), [4, 1], "{chip:?}");
    }
}

/// LOOP_START_NO_AL runs COUNT (loop constant bits 11:0) iterations; a count of 0 skips the
/// loop.
#[test]
fn counted_loop_from_a_loop_constant() {
    let cf = [
        // CF0 LOOP_START_NO_AL @3, CF_CONST 2: 2<<3 (0x10) | 0x07<<22 (0x01C0_0000) | BARRIER.
        [0x0000_0003, 0x81C0_0010],
        // CF1 ALU @8, 1 slot; CF2 LOOP_END @1.
        [0x0000_0008, 0xA000_0000],
        [0x0000_0001, 0x8140_0000],
    ];
    // @8 ADD_INT R2.x = R2.x + 1.
    let clauses = [[0x801F_4002, 0x0040_1A10]];
    for chip in CHIPS {
        for (constant, want) in [(0x0100_0005, 5), (0x0100_0FFF, 4095), (0x0100_0000, 0)] {
            let mut m = mem();
            load_program(&mut m, &cat(&cf, store_r2x(chip)), 8, &clauses);
            let mut s = state(chip);
            s.loop_consts[2] = constant;
            let stats = run(s, &mut m).unwrap();
            assert_eq!(get(&mut m, RAT0, 1), [want], "{chip:?} {constant:#x}");
            assert_eq!(stats.alu_groups, u64::from(want));
        }
    }
}

/// COND = CF_COND_BOOL (2 << 8) with CF_CONST 3: JUMP jumps when boolean constant 3 is clear.
/// COND = ALWAYS_FALSE (1 << 8): the JUMP always jumps.
#[test]
fn boolean_constant_and_always_false_conditions() {
    // CF0 JUMP @2: 0x0280_0000 | COND | CF_CONST 3<<3 (0x18) | BARRIER; CF1 ALU @4, 1 slot.
    let program = |jump: u32| [[0x0000_0002, jump], [0x0000_0004, 0xA000_0000]];
    // @4 MOV R2.x = 1.0 | LAST.
    let clauses = [[0x8000_00F9, 0x0040_0C90]];
    for chip in CHIPS {
        for (jump, bools, want) in [
            (0x8280_0218, 1 << 3, fb(1.0)),
            (0x8280_0218, !(1 << 3), 0),
            (0x8280_0100, u32::MAX, 0),
        ] {
            let mut m = mem();
            load_program(&mut m, &cat(&program(jump), store_r2x(chip)), 4, &clauses);
            let mut s = state(chip);
            s.bool_consts = bools;
            run(s, &mut m).unwrap();
            assert_eq!(get(&mut m, RAT0, 1), [want], "{chip:?} {jump:#x} {bools:#x}");
        }
    }
}

#[test]
fn stack_errors() {
    for chip in CHIPS {
        for (cf, want) in [
            // POP POP_COUNT 1 on an empty stack.
            ([[0x0000_0001, 0x8380_0001]], ShaderErrorKind::StackUnderflow),
            // ELSE on an empty stack.
            ([[0x0000_0001, 0x8340_0000]], ShaderErrorKind::StackUnderflow),
            // LOOP_END without a loop.
            ([[0x0000_0001, 0x8140_0000]], ShaderErrorKind::NotInLoop),
            // LOOP_BREAK without a loop.
            ([[0x0000_0001, 0x8240_0000]], ShaderErrorKind::NotInLoop),
        ] {
            let mut m = mem();
            load_program(&mut m, &cat(&cf, store_r2x(chip)), 4, &[]);
            assert_eq!(run(state(chip), &mut m).map_err(|e| e.kind), Err(want), "{chip:?}");
        }
        // PUSH then LOOP_END: the stack top is a PUSH entry, not the loop.
        let mut m = mem();
        let cf = [[0x0000_0001, 0x82C0_0000], [0x0000_0001, 0x8140_0000]];
        load_program(&mut m, &cat(&cf, store_r2x(chip)), 4, &[]);
        assert_eq!(
            run(state(chip), &mut m).map_err(|e| e.kind),
            Err(ShaderErrorKind::StackMismatch)
        );
    }
}
