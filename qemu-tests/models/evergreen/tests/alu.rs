//! ALU instruction classes, one hand-encoded group each, run through the harness (one thread;
//! the result R2.xyzw lands in RAT 0 dwords 0-3). Constants: `common::std_constants`.
//!
//! Word layouts (Mesa sb_bc_fmt_def.inc, LLVM R600InstrFormats.td): ALU_WORD0 = SRC0_SEL 8:0 |
//! SRC0_CHAN 11:10 | SRC0_NEG 12 | SRC1_SEL 21:13 | SRC1_CHAN 24:23 | SRC1_NEG 25 | PRED_SEL 30:29
//! | LAST 31. ALU_WORD1_OP2 = SRC0_ABS 0 | SRC1_ABS 1 | UPDATE_EXEC_MASK 2 | UPDATE_PRED 3 |
//! WRITE_MASK 4 | OMOD 6:5 | ALU_INST 17:7 | DST_GPR 27:21 | DST_CHAN 30:29 | CLAMP 31.
//! ALU_WORD1_OP3 = SRC2_SEL 8:0 | SRC2_CHAN 11:10 | SRC2_NEG 12 | ALU_INST 17:13 | DST_GPR 27:21 |
//! DST_CHAN 30:29. Recurring pieces: KC0[k] = SRC_SEL 128 + k; DST_GPR 2 << 21 = 0x40_0000;
//! WRITE_MASK 1 << 4 = 0x10; DST_CHAN y/z/w = 0x2000_0000/0x4000_0000/0x6000_0000; LAST =
//! 0x8000_0000; SRC1_SEL s << 13, SRC1_CHAN c << 23.
mod common;
use common::*;

#[test]
fn float_arithmetic_and_compare() {
    let alu = [
        // x ADD R2.x = KC0[0].x + KC0[0].y: W0 = SRC0 128 (0x80) | SRC1 128<<13 (0x10_0000) |
        // SRC1_CHAN 1<<23 (0x80_0000); W1 = ADD 0<<7 | 0x10 | 0x40_0000.
        [0x0090_0080, 0x0040_0010],
        // y MUL R2.y = KC0[0].x * literal.x: W0 = 0x80 | SRC1 253<<13 (0x1F_A000); W1 = MUL
        // 1<<7 (0x80) | 0x10 | 0x40_0000 | chan y.
        [0x001F_A080, 0x2040_0090],
        // z MAX R2.z = KC0[0].z, -KC0[0].w: W0 = 0x80 | SRC0_CHAN 2<<10 (0x800) | 0x10_0000 |
        // SRC1_CHAN 3<<23 (0x180_0000) | SRC1_NEG 1<<25 (0x200_0000); W1 = MAX 3<<7 (0x180) |
        // 0x10 | 0x40_0000 | chan z.
        [0x0390_0880, 0x4040_0190],
        // w SETGT R2.w = KC0[0].w > KC0[0].x: W0 = 0x80 | 3<<10 (0xC00) | 0x10_0000 | LAST;
        // W1 = SETGT 9<<7 (0x480) | 0x10 | 0x40_0000 | chan w.
        [0x8010_0C80, 0x6040_0490],
        // Literals X = 1.5, Y = padding.
        [0x3FC0_0000, 0],
    ];
    for chip in CHIPS {
        // 2 + -3, 2 * 1.5, max(0.5, -8), 8 > 2.
        assert_eq!(run_alu(chip, &alu), Ok([fb(-1.0), fb(3.0), fb(0.5), fb(1.0)]), "{chip:?}");
    }
}

#[test]
fn integer_arithmetic_and_shifts() {
    let alu = [
        // x ADD_INT R2.x = KC0[1].x + KC0[1].y: W0 = SRC0 129 (0x81) | SRC1 129<<13
        // (0x10_2000) | SRC1_CHAN 1<<23 (0x80_0000); W1 = 0x34<<7 (0x1A00) | 0x10 | 0x40_0000.
        [0x0090_2081, 0x0040_1A10],
        // y SUB_INT R2.y = KC0[1].y - KC0[1].x: W0 = 0x81 | SRC0_CHAN 1<<10 (0x400) |
        // 0x10_2000; W1 = 0x35<<7 (0x1A80) | 0x10 | 0x40_0000 | chan y.
        [0x0010_2481, 0x2040_1A90],
        // z ASHR_INT R2.z = KC0[1].z >> KC0[2].z: W0 = 0x81 | 2<<10 (0x800) | SRC1 130<<13
        // (0x10_4000) | SRC1_CHAN 2<<23 (0x100_0000); W1 = 0x15<<7 (0xA80) | 0x10 | 0x40_0000 |
        // chan z.
        [0x0110_4881, 0x4040_0A90],
        // w LSHL_INT R2.w = KC0[2].x << literal.x: W0 = SRC0 130 (0x82) | SRC1 253<<13
        // (0x1F_A000) | LAST; W1 = 0x17<<7 (0xB80) | 0x10 | 0x40_0000 | chan w.
        [0x801F_A082, 0x6040_0B90],
        // Literal X = 36: shift counts use bits 4:0, so << 4.
        [36, 0],
    ];
    for chip in CHIPS {
        // 7 + -2; -2 - 7; 0x8000_0000 >> 4 (arithmetic); 0x1234_5678 << 4.
        let want = [5, (-9i32) as u32, 0xF800_0000, 0x2345_6780];
        assert_eq!(run_alu(chip, &alu), Ok(want), "{chip:?}");
    }
}

#[test]
fn integer_compares_and_logic() {
    let alu = [
        // x SETGT_UINT R2.x = KC0[1].y >u KC0[1].x: W0 = 0x81 | 1<<10 (0x400) | 129<<13
        // (0x10_2000); W1 = 0x3E<<7 (0x1F00) | 0x10 | 0x40_0000.
        [0x0010_2481, 0x0040_1F10],
        // y SETGT_INT R2.y, same sources: W1 = 0x3B<<7 (0x1D80) | 0x10 | 0x40_0000 | chan y.
        [0x0010_2481, 0x2040_1D90],
        // z XOR_INT R2.z = KC0[2].x ^ KC0[2].y: W0 = 0x82 | 130<<13 (0x10_4000) | 1<<23
        // (0x80_0000); W1 = 0x32<<7 (0x1900) | 0x10 | 0x40_0000 | chan z.
        [0x0090_4082, 0x4040_1910],
        // w MIN_INT R2.w = min(KC0[1].y, KC0[1].x): W0 = 0x0010_2481 | LAST; W1 = 0x37<<7
        // (0x1B80) | 0x10 | 0x40_0000 | chan w.
        [0x8010_2481, 0x6040_1B90],
    ];
    for chip in CHIPS {
        // 0xFFFF_FFFE >u 7 (true: ~0), -2 > 7 (false: 0), XOR, min(-2, 7).
        let want = [u32::MAX, 0, 0x1234_5678 ^ 0xABCD_EF01, (-2i32) as u32];
        assert_eq!(run_alu(chip, &alu), Ok(want), "{chip:?}");
    }
}

#[test]
fn three_source_operations() {
    let alu = [
        // x MULADD R2.x = KC0[0].x * KC0[0].y + KC0[0].w: W0 = 0x80 | 128<<13 (0x10_0000) |
        // 1<<23 (0x80_0000); W1_OP3 = SRC2 128 (0x80) | SRC2_CHAN 3<<10 (0xC00) | MULADD
        // 0x14<<13 (0x2_8000) | 0x40_0000.
        [0x0090_0080, 0x0042_8C80],
        // y CNDE_INT R2.y = KC0[1].x == 0 ? KC0[2].x : KC0[2].y: W0 = 0x81 | 130<<13
        // (0x10_4000); W1 = SRC2 130 (0x82) | 1<<10 (0x400) | 0x1C<<13 (0x3_8000) | 0x40_0000 |
        // chan y.
        [0x0010_4081, 0x2043_8482],
        // z BFE_UINT R2.z = bits [KC0[2].z, +KC0[2].w) of KC0[2].x: W0 = 0x82 | 130<<13
        // (0x10_4000) | 2<<23 (0x100_0000); W1 = 0x82 | 3<<10 (0xC00) | 4<<13 (0x8000) |
        // 0x40_0000 | chan z.
        [0x0110_4082, 0x4040_8C82],
        // w BFI_INT R2.w = (lit.x & KC0[2].x) | (~lit.x & KC0[2].y): W0 = SRC0 253 (0xFD) |
        // 130<<13 (0x10_4000) | LAST; W1 = 0x82 | 1<<10 (0x400) | 6<<13 (0xC000) | 0x40_0000 |
        // chan w.
        [0x8010_40FD, 0x6040_C482],
        // Literal X = 0x0000_FFFF.
        [0x0000_FFFF, 0],
    ];
    for chip in CHIPS {
        // 2 * -3 + 8; 7 != 0 selects src2; (0x1234_5678 >> 4) & 0xFFF; low half of src1,
        // high half of src2.
        let want = [fb(2.0), 0xABCD_EF01, 0x567, 0xABCD_5678];
        assert_eq!(run_alu(chip, &alu), Ok(want), "{chip:?}");
    }
}

/// INT_TO_FLT is t-only on Evergreen and a plain vector op on Cayman (§4.2): the same group,
/// whose fourth instruction names DST_CHAN w, runs it in t on Evergreen and in w on Cayman.
#[test]
fn conversions_and_24_bit_multiply() {
    let alu = [
        // x FLT_TO_INT R2.x = KC0[0].y: W0 = 0x80 | 1<<10 (0x400); W1 = 0x50<<7 (0x2800) |
        // 0x10 | 0x40_0000.
        [0x0000_0480, 0x0040_2810],
        // y MOV R2.y = inline -1 (SRC0 251 = 0xFB); W1 = MOV 0x19<<7 (0xC80) | 0x10 |
        // 0x40_0000 | chan y.
        [0x0000_00FB, 0x2040_0C90],
        // z MULADD_UINT24 R2.z = KC0[1].w * KC0[2].w + KC0[1].x: W0 = 0x81 | 3<<10 (0xC00) |
        // 130<<13 (0x10_4000) | 3<<23 (0x180_0000); W1 = SRC2 129 (0x81) | 0x10<<13 (0x2_0000)
        // | 0x40_0000 | chan z.
        [0x0190_4C81, 0x4042_0081],
        // w/t INT_TO_FLT R2.w = KC0[1].y: W0 = 0x81 | 1<<10 (0x400) | LAST; W1 = 0x9B<<7
        // (0x4D80) | 0x10 | 0x40_0000 | chan w.
        [0x8000_0481, 0x6040_4D90],
    ];
    for chip in CHIPS {
        // -3.0 -> -3; -1 moved bit-exact; 100 * 12 + 7; -2 -> -2.0.
        let want = [(-3i32) as u32, u32::MAX, 1207, fb(-2.0)];
        assert_eq!(run_alu(chip, &alu), Ok(want), "{chip:?}");
    }
}

#[test]
fn evergreen_transcendental_and_multiply_in_t() {
    let alu = [
        // g1 x MOV R2.x = KC0[0].w: W0 = 0x80 | 3<<10 (0xC00); W1 = 0xC80 | 0x10 | 0x40_0000.
        [0x0000_0C80, 0x0040_0C90],
        // g1 t RECIP_IEEE R2.y = 1 / KC0[0].w (t-only, so it takes t whatever its chan):
        // W0 = 0xC80 | LAST; W1 = 0x86<<7 (0x4300) | 0x10 | 0x40_0000 | chan y.
        [0x8000_0C80, 0x2040_4310],
        // g2 t MULHI_UINT R2.z = hi(KC0[1].y * KC0[1].w): W0 = 0x81 | 1<<10 (0x400) | 129<<13
        // (0x10_2000) | 3<<23 (0x180_0000) | LAST; W1 = 0x92<<7 (0x4900) | 0x10 | 0x40_0000 |
        // chan z.
        [0x8190_2481, 0x4040_4910],
        // g3 t MULLO_INT R2.w = KC0[1].y * KC0[1].x: W0 = 0x0010_2481 | LAST; W1 = 0x8F<<7
        // (0x4780) | 0x10 | 0x40_0000 | chan w.
        [0x8010_2481, 0x6040_4790],
    ];
    // hi(0xFFFF_FFFE * 100) = 99; -2 * 7 = -14.
    let want = [fb(8.0), fb(0.125), 99, (-14i32) as u32];
    assert_eq!(run_alu(Chip::Evergreen, &alu), Ok(want));
}

/// §4.2 on Cayman: RECIP_IEEE issued in x, y and z with the same source; MULHI/MULLO in all four
/// slots; WRITE_MASK picks the channel kept.
#[test]
fn cayman_replicated_transcendental_and_multiply() {
    let alu = [
        // g1 x MOV R2.x = KC0[0].w | LAST.
        [0x8000_0C80, 0x0040_0C90],
        // g2 x/y/z RECIP_IEEE src KC0[0].w (W0 0xC80, LAST on z); W1 = 0x86<<7 (0x4300) |
        // 0x40_0000 | chan, WRITE_MASK (0x10) only on y.
        [0x0000_0C80, 0x0040_4300],
        [0x0000_0C80, 0x2040_4310],
        [0x8000_0C80, 0x4040_4300],
        // g3 x/y/z/w MULHI_UINT KC0[1].y, KC0[1].w (W0 0x0190_2481, LAST on w); W1 = 0x92<<7
        // (0x4900) | 0x40_0000 | chan, WRITE_MASK only on z.
        [0x0190_2481, 0x0040_4900],
        [0x0190_2481, 0x2040_4900],
        [0x0190_2481, 0x4040_4910],
        [0x8190_2481, 0x6040_4900],
        // g4 x/y/z/w MULLO_INT KC0[1].y, KC0[1].x (W0 0x0010_2481, LAST on w); W1 = 0x8F<<7
        // (0x4780) | 0x40_0000 | chan, WRITE_MASK only on w.
        [0x0010_2481, 0x0040_4780],
        [0x0010_2481, 0x2040_4780],
        [0x0010_2481, 0x4040_4780],
        [0x8010_2481, 0x6040_4790],
    ];
    let want = [fb(8.0), fb(0.125), 99, (-14i32) as u32];
    assert_eq!(run_alu(Chip::Cayman, &alu), Ok(want));
}

#[test]
fn source_and_result_modifiers() {
    let alu = [
        // x ADD R2.x = |KC0[0].y| + -KC0[0].x: W0 = 0x80 | 1<<10 (0x400) | 128<<13 (0x10_0000)
        // | SRC1_NEG 1<<25 (0x200_0000); W1 = SRC0_ABS 1 | 0x10 | 0x40_0000.
        [0x0210_0480, 0x0040_0011],
        // y MUL R2.y = KC0[0].w * KC0[0].z, OMOD x2: W0 = 0x80 | 3<<10 (0xC00) | 0x10_0000 |
        // 2<<23 (0x100_0000); W1 = OMOD 1<<5 (0x20) | MUL 0x80 | 0x10 | 0x40_0000 | chan y.
        [0x0110_0C80, 0x2040_00B0],
        // z MOV R2.z = KC0[0].w, CLAMP: W0 = 0xC80; W1 = 0xC80 | 0x10 | 0x40_0000 | chan z |
        // CLAMP 1<<31.
        [0x0000_0C80, 0xC040_0C90],
        // w MOV R2.w = KC0[0].y, OMOD /2 (3<<5 = 0x60), CLAMP: W0 = 0x480 | LAST; W1 = 0x60 |
        // 0xC80 | 0x10 | 0x40_0000 | chan w | CLAMP.
        [0x8000_0480, 0xE040_0CF0],
    ];
    for chip in CHIPS {
        // 3 - 2; 8 * 0.5 * 2; clamp(8) = 1; clamp(-3 / 2) = 0.
        assert_eq!(run_alu(chip, &alu), Ok([fb(1.0), fb(8.0), fb(1.0), 0]), "{chip:?}");
    }
}

#[test]
fn inline_constants() {
    let alu = [
        // x ADD R2.x = 1.0 (249 = 0xF9) + 0.5 (252<<13 = 0x1F_8000); W1 = 0x10 | 0x40_0000.
        [0x001F_80F9, 0x0040_0010],
        // y SUB_INT R2.y = int 1 (250 = 0xFA) - int -1 (251<<13 = 0x1F_6000); W1 = 0x1A80 |
        // 0x10 | 0x40_0000 | chan y.
        [0x001F_60FA, 0x2040_1A90],
        // z MOV R2.z = -(0.0): SRC0 248 (0xF8) | SRC0_NEG 1<<12 (0x1000); W1 = 0xC80 | 0x10 |
        // 0x40_0000 | chan z.
        [0x0000_10F8, 0x4040_0C90],
        // w MOV R2.w = int -1 (0xFB) | LAST; W1 = 0xC80 | 0x10 | 0x40_0000 | chan w.
        [0x8000_00FB, 0x6040_0C90],
    ];
    for chip in CHIPS {
        assert_eq!(run_alu(chip, &alu), Ok([fb(1.5), 2, 0x8000_0000, u32::MAX]), "{chip:?}");
    }
}

#[test]
fn kcache_sets_lines_and_bounds() {
    let alu = [
        // x MOV R2.x = KC1[0].y: SRC0 160 (0xA0) | 1<<10 (0x400); W1 = 0xC80 | 0x10 | 0x40_0000.
        [0x0000_04A0, 0x0040_0C90],
        // y MOV R2.y = KC0[31].x: SRC0 159 (0x9F); W1 ... | chan y.
        [0x0000_009F, 0x2040_0C90],
        // z MOV R2.z = KC0[2].y: 0x82 | 1<<10 | LAST; W1 ... | chan z.
        [0x8000_0482, 0x4040_0C90],
    ];
    for chip in CHIPS {
        let mut m = mem();
        std_constants(&mut m);
        const_f(&mut m, CB0, 31, [31.0; 4]);
        // KC1 is CB1 from constant 16 (KCACHE_ADDR1 = 1 line of 16): 17.0, not CB1[0]'s 99.
        let r = run_alu_with(&mut m, chip, &alu);
        assert_eq!(r, Ok([fb(17.0), fb(31.0), 0xABCD_EF01, 0]), "{chip:?}");
        // CB0 shrunk to one 256-byte unit (constants 0-15): KC0[31] is past it and reads 0.
        let mut s = state(chip);
        s.const_size[0] = 1;
        run(s, &mut m).unwrap();
        assert_eq!(get(&mut m, RAT0, 2), [fb(17.0), 0]);
    }
    // KC1[16] (SRC0 176 = 0xB0): set 1 is LOCK_1, only 16 constants are locked.
    let err = [[0x8000_00B0, 0x0040_0C90]];
    for chip in CHIPS {
        assert_eq!(
            run_alu(chip, &err),
            Err(ShaderErrorKind::KcacheNotLocked { set: 1, index: 16 })
        );
    }
}

/// PRED_SET* with UPDATE_PRED set the per-thread predicate; PRED_SEL ONE/ZERO instructions run
/// where it is 1/0. PRED_SET* write 0.0 where the predicate passes and 1.0 where it fails.
#[test]
fn predicate_set_and_predicated_instructions() {
    let alu = [
        // g1 w PRED_SETGT_INT R2.w = KC0[1].x > KC0[1].w (7 > 100, fails), UPDATE_PRED:
        // W0 = 0x81 | 129<<13 (0x10_2000) | 3<<23 (0x180_0000) | LAST; W1 = UPDATE_PRED 1<<3
        // (0x8) | 0x10 | 0x43<<7 (0x2180) | 0x40_0000 | chan w.
        [0x8190_2081, 0x6040_2198],
        // g2 x MOV R2.x = 1.0, PRED_SEL_ONE 3<<29 (0x6000_0000): skipped.
        [0x6000_00F9, 0x0040_0C90],
        // g2 y MOV R2.y = 1.0, PRED_SEL_ZERO 2<<29 (0x4000_0000) | LAST: runs.
        [0xC000_00F9, 0x2040_0C90],
        // g3 z PRED_SETE_INT R2.z = KC0[1].x == KC0[1].x (passes), UPDATE_PRED: W0 = 0x81 |
        // 0x10_2000 | LAST; W1 = 0x8 | 0x10 | 0x42<<7 (0x2100) | 0x40_0000 | chan z.
        [0x8010_2081, 0x4040_2118],
        // g4 x MOV R2.x = KC0[0].w, PRED_SEL_ONE | LAST: runs now.
        [0xE000_0C80, 0x0040_0C90],
    ];
    for chip in CHIPS {
        assert_eq!(run_alu(chip, &alu), Ok([fb(8.0), fb(1.0), 0, fb(1.0)]), "{chip:?}");
    }
}
