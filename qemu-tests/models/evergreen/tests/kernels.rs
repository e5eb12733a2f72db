//! Whole kernels in hand-built words, laid out as the LLVM R600 backend and clover do (LLVM
//! R600ISelLowering, Mesa evergreen_compute.c): constant buffer 0 holds the group counts (dw0-2),
//! global size (dw3-5), local size (dw6-8) and the arguments (dw9+: byte addresses in the global
//! pool); global memory is read through fetch resource 1 (byte-indexed FMT_32, STRIDE 1) and
//! written through RAT 0 (dword index = byte address >> 2). Global id x = R1.x * KC0[1].z + R0.x.
//! Each runs over several groups with partial waves, on both chips, checked element by element
//! against the same computation on the CPU.
mod common;
use common::*;

/// Dispatch state and constant buffer 0 for a 1-D kernel.
fn kernel_state(
    chip: Chip,
    m: &mut FlatMemory,
    groups: u32,
    local: u32,
    args: &[u32],
) -> DispatchState {
    let mut s = state(chip);
    s.num_threads = [local, 1, 1];
    s.groups = [groups, 1, 1];
    // Resource 1 = VB1: W2 = STRIDE 1<<8 (0x100) | FMT_32 0xD<<20 (0xD0_0000) | NUM_FORMAT INT
    // 1<<26 (0x400_0000) = 0x04D0_0100. Resource 0 stays unset.
    s.resources = vec![[0; 8], resource(POOL, POOL_BYTES, 0x04D0_0100, RES_W3_XYZW)];
    s.rats[0] = rat_u32(POOL, POOL_BYTES / 4);
    let mut cb = vec![groups, 1, 1, groups * local, 1, 1, local, 1, 1];
    cb.extend_from_slice(args);
    put(m, CB0, &cb);
    s
}

fn words_at(m: &mut FlatMemory, offset: u32, n: usize) -> Vec<u32> {
    get(m, POOL + u64::from(offset), n)
}

#[test]
fn vector_add() {
    let n = 300;
    let a: Vec<f32> = (0..n).map(|i| 1.0 + i as f32 * 0.25).collect();
    let b: Vec<f32> = (0..n).map(|i| 1000.0 - i as f32 * 0.5).collect();
    for chip in CHIPS {
        let mut m = mem();
        put(&mut m, POOL + u64::from(A), &a.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
        put(&mut m, POOL + u64::from(B), &b.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
        put(&mut m, POOL + u64::from(C) + 4 * n as u64, &[0xDEAD_BEEF]);
        // CF2 ALU @18 (0x12), 1 slot, no kcache: WORD1 = ALU 0x2000_0000 | BARRIER. The clause:
        // ADD R4.x = R4.x + R4.y | LAST: W0 = 4 | 4<<13 (0x8000) | 1<<23 (0x80_0000) | LAST;
        // W1 = ADD 0 | 0x10 | DST_GPR 4<<21 (0x80_0000).
        two_input_program(
            &mut m,
            chip,
            DST_ARG2,
            [0x0000_0012, 0xA000_0000],
            [0x8080_8004, 0x0080_0010],
        );
        // Three groups of 100 threads: waves of 64 and 36.
        let s = kernel_state(chip, &mut m, 3, 100, &[A, B, C]);
        let stats = run(s, &mut m).unwrap();
        let c = words_at(&mut m, C, n + 1);
        for i in 0..n {
            assert_eq!(f32::from_bits(c[i]), a[i] + b[i], "{chip:?} element {i}");
        }
        assert_eq!(c[n], 0xDEAD_BEEF, "{chip:?}: nothing written past the grid");
        assert_eq!((stats.waves, stats.rat_dwords), (6, n as u64));
    }
}

#[test]
fn saxpy() {
    let n = 160;
    let alpha = 2.5f32;
    let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.125 - 7.0).collect();
    let y: Vec<f32> = (0..n).map(|i| 3.0 - i as f32 * 1.5).collect();
    for chip in CHIPS {
        let mut m = mem();
        put(&mut m, POOL + u64::from(A), &x.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
        put(&mut m, POOL + u64::from(B), &y.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
        // Y = alpha * X + Y in place: R3.x from the second argument (Y). CF2 ALU @18 with kcache
        // set 0 = bank 0 LOCK_1 (WORD0 0x4000_0012). The clause: MULADD_IEEE R4.x = KC0[2].w *
        // R4.x + R4.y | LAST: W0 = 130 (0x82) | 3<<10 (0xC00) | SRC1 4<<13 (0x8000) | LAST;
        // W1_OP3 = SRC2 4 | SRC2_CHAN 1<<10 (0x400) | 0x18<<13 (0x3_0000) | 0x80_0000.
        two_input_program(
            &mut m,
            chip,
            DST_ARG1,
            [0x4000_0012, 0xA000_0000],
            [0x8000_8C82, 0x0083_0404],
        );
        // Two groups of 80 threads (waves of 64 and 16).
        let s = kernel_state(chip, &mut m, 2, 80, &[A, B, alpha.to_bits()]);
        run(s, &mut m).unwrap();
        let out = words_at(&mut m, B, n);
        for i in 0..n {
            assert_eq!(f32::from_bits(out[i]), alpha * x[i] + y[i], "{chip:?} element {i}");
        }
    }
}

/// RESULT += A[gid] for every thread with MEM_RAT ADD: the sum of the buffer.
#[test]
fn atomic_add_reduction() {
    let n = 384u32;
    let a: Vec<u32> = (0..n).map(|i| 2_654_435_761u32.wrapping_mul(i + 1) >> 4).collect();
    for chip in CHIPS {
        let mut m = mem();
        put(&mut m, POOL + u64::from(A), &a);
        put(&mut m, POOL + u64::from(R), &[5]);
        let cf: Vec<Slot> = match chip {
            // CF0 ALU @4, 5 slots, kcache bank 0 LOCK_1: WORD1 = COUNT 4<<18 (0x10_0000) | ALU |
            // BARRIER. CF1 VC @10 (0xA), one fetch: 0x8080_0000. CF2 MEM_RAT ADD of R4.x at
            // dword R3.x: WORD0 = ADD 7<<4 (0x70) | TYPE 0x2000 | RW_GPR 4<<15 (0x2_0000) |
            // INDEX_GPR 3<<23 (0x180_0000); WORD1 = COMP_MASK 1<<12 | MEM_RAT 0x56<<22
            // (0x1580_0000) | BARRIER (| END_OF_PROGRAM 0x20_0000 on Evergreen).
            Chip::Evergreen => {
                vec![
                    [0x4000_0004, 0xA010_0000],
                    [0x0000_000A, 0x8080_0000],
                    [0x0182_2070, 0x95A0_1000],
                ]
            }
            // Cayman: TC (0x8040_0000), no END_OF_PROGRAM, CF_END.
            Chip::Cayman => vec![
                [0x4000_0004, 0xA010_0000],
                [0x0000_000A, 0x8040_0000],
                [0x0182_2070, 0x9580_1000],
                [0, 0x8800_0000],
            ],
        };
        let fetch = fetch_xy(chip);
        let clauses = [
            // @4 g1 gid (as in address_clause).
            [0x8110_2001, 0x0042_0000],
            // @5 g2 x LSHR_INT R3.x = KC0[2].z >> literal.x: W0 = 130 | 2<<10 (0x800) |
            // 253<<13 (0x1F_A000); W1 = 0xB00 | 0x10 | 0x60_0000.
            [0x001F_A882, 0x0060_0B10],
            // @6 g2 y LSHL_INT R2.y = PV.x << literal.x | LAST; @7 literal 2.
            [0x801F_A0FE, 0x2040_0B90],
            [2, 0],
            // @8 g3 z ADD_INT R2.z = PV.y + KC0[2].y | LAST (0x0090_44FE | LAST).
            [0x8090_44FE, 0x4040_1A10],
            // @9 padding; @10 the R4.x fetch of fetch_xy.
            [0, 0],
            fetch[0],
            fetch[1],
        ];
        load_program(&mut m, &cf, 4, &clauses);
        // Four groups of 96 threads (waves of 64 and 32).
        let s = kernel_state(chip, &mut m, 4, 96, &[A, R]);
        let stats = run(s, &mut m).unwrap();
        let want = a.iter().fold(5u32, |s, &v| s.wrapping_add(v));
        assert_eq!(words_at(&mut m, R, 1), [want], "{chip:?}");
        assert_eq!(stats.rat_dwords, u64::from(n));
    }
}

fn collatz(v: u32) -> u32 {
    if v & 1 != 0 { v * 3 + 1 } else { v >> 1 }
}

/// if (gid < n) { v = A[gid]; v = v & 1 ? 3v + 1 : v >> 1; OUT[gid] = v; } with n not a
/// multiple of the group size: a bounds check around a data-dependent if/else.
#[test]
fn branchy_kernel() {
    let n = 333u32;
    let threads = 400;
    let a: Vec<u32> = (0..threads).map(|i| (i * 7919 + 13) % 100_000).collect();
    for chip in CHIPS {
        let mut m = mem();
        put(&mut m, POOL + u64::from(A), &a);
        put(&mut m, POOL + u64::from(C), &vec![0xDEAD_BEEF; threads as usize]);
        let fetch = fetch_xy(chip);
        let (fetch_cf, end) = match chip {
            // Evergreen: VC @20 (0x14) one fetch; NOP with END_OF_PROGRAM (1<<21) at the end.
            Chip::Evergreen => (0x8080_0000, [0, 0x8020_0000]),
            // Cayman: TC; CF_END.
            Chip::Cayman => (0x8040_0000, [0, 0x8800_0000]),
        };
        let store_word0 = if chip == Chip::Evergreen { 0x0182_2020 } else { 0x0182_2140 };
        let cf = [
            // CF0 ALU_PUSH_BEFORE @12, 8 slots, kcache bank 0 LOCK_1: WORD1 = 7<<18 (0x1C_0000) |
            // 9<<26 (0x2400_0000) | BARRIER.
            [0x4000_000C, 0xA41C_0000],
            // CF1 JUMP @10 POP_COUNT 1 (no thread in range).
            [0x0000_000A, 0x8280_0001],
            // CF2 fetch @20.
            [0x0000_0014, fetch_cf],
            // CF3 ALU_PUSH_BEFORE @22, 2 slots: 1<<18 | 0x2400_0000 | BARRIER.
            [0x0000_0016, 0xA404_0000],
            // CF4 JUMP @6 (the ELSE).
            [0x0000_0006, 0x8280_0000],
            // CF5 ALU @24, 2 slots (odd: 3v + 1).
            [0x0000_0018, 0xA004_0000],
            // CF6 ELSE @8 POP_COUNT 1.
            [0x0000_0008, 0x8340_0001],
            // CF7 ALU_POP_AFTER @26, 1 slot (even: v >> 1): 0x2800_0000 | BARRIER.
            [0x0000_001A, 0xA800_0000],
            // CF8 RAT 0 store of R4.x at dword R3.x, no END_OF_PROGRAM on either chip (WORD1 =
            // COMP_MASK 0x1000 | 0x57<<22 | BARRIER).
            [store_word0, 0x95C0_1000],
            // CF9 POP 1: 0x0E<<22 (0x0380_0000) | 1 | BARRIER.
            [0x0000_000A, 0x8380_0001],
            // CF10 end.
            end,
        ];
        let clauses = [
            // @12 g1 gid; @13-14 g2 R2.y = gid << 2.
            [0x8110_2001, 0x0042_0000],
            [0x801F_A0FE, 0x2040_0B90],
            [2, 0],
            // @15 g3 x PRED_SETGT_UINT KC0[2].w (n) > R2.x, UPDATE_EXEC_MASK, UPDATE_PRED,
            // WRITE_MASK 0: W0 = 130 | 3<<10 (0xC00) | SRC1 2<<13 (0x4000); W1 = 4 | 8 | 0x1E<<7
            // (0xF00) | 0x40_0000.
            [0x0000_4C82, 0x0040_0F0C],
            // @16 g3 z ADD_INT R2.z = R2.y + KC0[2].y: W0 = 2 | 1<<10 | 130<<13 | 1<<23.
            [0x0090_4402, 0x4040_1A10],
            // @17 g3 w ADD_INT R2.w = R2.y + KC0[2].z | LAST.
            [0x8110_4402, 0x6040_1A10],
            // @18 g4 x LSHR_INT R3.x = PV.w >> literal.x (2) | LAST: W0 = 0xFE | 3<<10 | 253<<13
            // | LAST; @19 literal.
            [0x801F_ACFE, 0x0060_0B10],
            [2, 0],
            // @20 fetch R4.x = pool[R2.z].
            fetch[0],
            fetch[1],
            // @22 AND_INT R5.x = R4.x & int 1 | LAST: W0 = 4 | 250<<13 (0x1F_4000) | LAST; W1 =
            // 0x30<<7 (0x1800) | 0x10 | DST_GPR 5<<21 (0xA0_0000).
            [0x801F_4004, 0x00A0_1810],
            // @23 PRED_SETNE_INT PV.x != 0 (248), UEM, UP, WRITE_MASK 0 | LAST: W0 = 0xFE |
            // 248<<13 (0x1F_0000) | LAST; W1 = 0xC | 0x45<<7 (0x2280) | 0xA0_0000.
            [0x801F_00FE, 0x00A0_228C],
            // @24 MULADD_UINT24 R4.x = R4.x * literal.x + literal.y | LAST: W0 = 4 | 253<<13 |
            // LAST; W1_OP3 = SRC2 253 | SRC2_CHAN 1<<10 (0x400) | 0x10<<13 (0x2_0000) | 0x80_0000;
            // @25 literals 3, 1.
            [0x801F_A004, 0x0082_04FD],
            [3, 1],
            // @26 LSHR_INT R4.x = R4.x >> int 1 | LAST: W0 = 4 | 250<<13 | LAST; W1 = 0xB00 |
            // 0x10 | 0x80_0000.
            [0x801F_4004, 0x0080_0B10],
        ];
        load_program(&mut m, &cf, 12, &clauses);
        // Four groups of 100 threads (waves of 64 and 36); threads 333-399 are out of range.
        let s = kernel_state(chip, &mut m, 4, 100, &[A, C, n]);
        run(s, &mut m).unwrap();
        let out = words_at(&mut m, C, threads as usize);
        for i in 0..threads as usize {
            let want = if (i as u32) < n { collatz(a[i]) } else { 0xDEAD_BEEF };
            assert_eq!(out[i], want, "{chip:?} element {i}");
        }
    }
}
