//! Instruction words computed by hand from the bit layouts (evergreen-compute A4, opcodes A5)
//! and, for vertex fetches, checked against the encodings LLVM publishes in its R600 test
//! suite (`vertex-fetch-encoding.ll`).

mod common;

use baregpu_evergreen_asm::*;
use common::{asm, walk};

#[test]
fn cf_word_jump_pop_and_barrier() {
    // JUMP addr 5, POP_COUNT 1: w0 = ADDR 5; w1 = POP_COUNT 1 | CF_INST 0x0A << 22
    // (0x0280_0000) | BARRIER 1 << 31 = 0x8280_0001. Same on both chips.
    let w = CfWord { addr: 5, pop_count: 1, ..CfWord::new(CfInst::Jump) };
    for chip in Chip::ALL {
        assert_eq!(w.encode(chip), Ok([5, 0x8280_0001]));
        assert_eq!(CfWord::decode([5, 0x8280_0001], chip), Ok(w));
    }
}

#[test]
fn program_end_words_per_chip() {
    // Evergreen NOP + END_OF_PROGRAM: CF_INST 0, EOP 1 << 21, BARRIER -> 0x8020_0000.
    let nop_eop = CfWord { end_of_program: true, ..CfWord::new(CfInst::Nop) };
    assert_eq!(nop_eop.encode(Chip::Evergreen), Ok([0, 0x8020_0000]));
    // Cayman has no EOP bit (bit 21 reserved) ...
    assert_eq!(
        nop_eop.encode(Chip::Cayman),
        Err(EncodeError::NotOnChip { what: "END_OF_PROGRAM", chip: Chip::Cayman })
    );
    assert!(CfWord::decode([0, 0x8020_0000], Chip::Cayman).is_err());
    // ... and ends with CF_END: 0x20 << 22 = 0x0800_0000 | BARRIER = 0x8800_0000.
    assert_eq!(CfWord::new(CfInst::CfEnd).encode(Chip::Cayman), Ok([0, 0x8800_0000]));
    assert!(CfWord::new(CfInst::CfEnd).encode(Chip::Evergreen).is_err());
}

#[test]
fn fetch_clause_words() {
    // VC, 2 fetches at ADDR 14: COUNT 1 << 10 = 0x400, CF_INST 2 << 22 = 0x0080_0000.
    let vc = CfWord { addr: 14, count: 1, ..CfWord::new(CfInst::Vc) };
    assert_eq!(vc.encode(Chip::Evergreen), Ok([14, 0x8080_0400]));
    // Cayman has no VC (§4.1); TC is 1 << 22 = 0x0040_0000.
    assert!(vc.encode(Chip::Cayman).is_err());
    let tc = CfWord { addr: 14, count: 1, ..CfWord::new(CfInst::Tc) };
    assert_eq!(tc.encode(Chip::Cayman), Ok([14, 0x8040_0400]));
    // COUNT is 6 bits: 64 fetches at most.
    let long = CfWord { count: 64, ..tc };
    assert_eq!(
        long.encode(Chip::Cayman),
        Err(EncodeError::OutOfRange { field: "COUNT", value: 64, max: 63 })
    );
}

#[test]
fn alu_clause_word_with_two_kcache_sets() {
    // ALU_PUSH_BEFORE at ADDR 7, 4 slots, set 0 = buffer 0 lines 0-1 (LOCK_2), set 1 =
    // buffer 3 line 5 (LOCK_1).
    // w0 = ADDR 7 | BANK0 0 << 22 | BANK1 3 << 26 (0x0C00_0000) | MODE0 2 << 30 (0x8000_0000)
    //    = 0x8C00_0007.
    // w1 = MODE1 1 | ADDR0 0 << 2 | ADDR1 5 << 10 (0x1400) | COUNT 3 << 18 (0x000C_0000)
    //    | CF_INST 9 << 26 (0x2400_0000) | BARRIER = 0xA40C_1401.
    let w = CfAluWord {
        inst: AluCfInst::AluPushBefore,
        addr: 7,
        kcache: [
            Kcache { bank: 0, mode: KcacheMode::Lock2, addr: 0 },
            Kcache { bank: 3, mode: KcacheMode::Lock1, addr: 5 },
        ],
        count: 3,
        alt_const: false,
        whole_quad_mode: false,
        barrier: true,
    };
    assert_eq!(w.encode(), Ok([0x8C00_0007, 0xA40C_1401]));
    assert_eq!(CfAluWord::decode([0x8C00_0007, 0xA40C_1401]), Ok(w));
    // Bit 29 of w1 marks an ALU CF word for the generic decoder.
    assert_eq!(
        CfInstruction::decode([0x8C00_0007, 0xA40C_1401], Chip::Cayman),
        Ok(CfInstruction::Alu(w))
    );
}

#[test]
fn rat_store_raw_and_atomic_add_words() {
    // STORE_RAW rat0[r6.x], r4.x (cacheless):
    // w0 = RAT_ID 0 | RAT_INST 2 << 4 (0x20) | TYPE 1 << 13 (0x2000) | RW_GPR 4 << 15
    //      (0x2_0000) | INDEX_GPR 6 << 23 (0x300_0000) = 0x0302_2020.
    // w1 = COMP_MASK 1 << 12 (0x1000) | CF_INST 0x57 << 22 (0x15C0_0000) | BARRIER
    //    = 0x95C0_1000.
    let store = RatExport::indexed(RatCfInst::MemRatCacheless, RatInst::StoreRaw, 0, 6, 4, 1);
    assert_eq!(store.encode(Chip::Evergreen), Ok([0x0302_2020, 0x95C0_1000]));
    assert_eq!(RatExport::decode([0x0302_2020, 0x95C0_1000], Chip::Evergreen), Ok(store));
    // Cayman's form of the same store is STORE_DWORD, RAT_INST 0x14 (LLVM RAT_STORE_DWORD):
    // w0 = 0x14 << 4 (0x140) | 0x2000 | 0x2_0000 | 0x300_0000 = 0x0302_2140; w1 unchanged.
    let dword = RatExport::indexed(RatCfInst::MemRatCacheless, RatInst::StoreDword, 0, 6, 4, 1);
    assert_eq!(dword.encode(Chip::Cayman), Ok([0x0302_2140, 0x95C0_1000]));
    assert_eq!(RatExport::decode([0x0302_2140, 0x95C0_1000], Chip::Cayman), Ok(dword));
    // Each chip rejects the other's store, both ways.
    assert!(store.encode(Chip::Cayman).is_err());
    assert!(dword.encode(Chip::Evergreen).is_err());
    assert!(RatExport::decode([0x0302_2020, 0x95C0_1000], Chip::Cayman).is_err());
    assert!(RatExport::decode([0x0302_2140, 0x95C0_1000], Chip::Evergreen).is_err());
    // ADD rat2[r9.x], r8.x through MEM_RAT: RAT_ID 2 | RAT_INST 7 << 4 (0x70) | 0x2000
    // | RW_GPR 8 << 15 (0x4_0000) | INDEX_GPR 9 << 23 (0x480_0000) = 0x0484_2072;
    // w1 = 0x1000 | 0x56 << 22 (0x1580_0000) | BARRIER = 0x9580_1000.
    let add = RatExport::indexed(RatCfInst::MemRat, RatInst::Add, 2, 9, 8, 1);
    assert_eq!(add.encode(Chip::Evergreen), Ok([0x0484_2072, 0x9580_1000]));
    // END_OF_PROGRAM (bit 21 of w1) is Evergreen-only.
    let eop = RatExport { end_of_program: true, ..store };
    assert_eq!(eop.encode(Chip::Evergreen), Ok([0x0302_2020, 0x95E0_1000]));
    assert!(eop.encode(Chip::Cayman).is_err());
}

#[test]
fn alu_op2_words() {
    // add r4.x, r4.x, r5.x (last):
    // w0 = SRC0_SEL 4 | SRC1_SEL 5 << 13 (0xA000) | LAST 1 << 31 = 0x8000_A004.
    // w1 = WRITE_MASK 1 << 4 (0x10) | ALU_INST 0 | DST_GPR 4 << 21 (0x80_0000) = 0x0080_0010.
    let mut w = AluWord::new(AluOp::Add, 4, Chan::X);
    w.src[0] = AluSrc { sel: Sel::Gpr(4), ..AluSrc::UNUSED };
    w.src[1] = AluSrc { sel: Sel::Gpr(5), ..AluSrc::UNUSED };
    w.last = true;
    assert_eq!(w.encode(Chip::Evergreen), Ok([0x8000_A004, 0x0080_0010]));

    // add r1.z, -|r2.w|, cb-set-1 constant 3 .y, clamp, not last:
    // src0: SEL 2 | CHAN 3 << 10 (0xC00) | NEG 1 << 12 (0x1000) = 0x1C02;
    // src1: SEL 160 + 3 = 163 (0xA3) | CHAN 1 << 10 = 0x4A3, << 13 = 0x0094_6000.
    // w0 = 0x0094_7C02.
    // w1 = SRC0_ABS 1 | WRITE_MASK 0x10 | DST_GPR 1 << 21 (0x20_0000) | DST_CHAN 2 << 29
    //      (0x4000_0000) | CLAMP 1 << 31 = 0xC020_0011.
    let mut w = AluWord::new(AluOp::Add, 1, Chan::Z);
    w.src[0] = AluSrc { sel: Sel::Gpr(2), rel: false, chan: Chan::W, neg: true };
    w.src[1] =
        AluSrc { sel: Sel::Kcache { set: 1, index: 3 }, rel: false, chan: Chan::Y, neg: false };
    w.abs[0] = true;
    w.clamp = true;
    assert_eq!(w.encode(Chip::Cayman), Ok([0x0094_7C02, 0xC020_0011]));
    assert_eq!(AluWord::decode([0x0094_7C02, 0xC020_0011], Chip::Cayman), Ok(w));

    // pred_setne_int.exec.pred _.x, r5.x, 0 (last): SRC1_SEL 248 << 13 = 0x1F_0000;
    // w0 = 0x801F_0005. w1 = UPDATE_EXEC_MASK 4 | UPDATE_PRED 8 | WRITE_MASK 0
    //      | ALU_INST 0x45 << 7 (0x2280) = 0x0000_228C.
    let mut w = AluWord::new(AluOp::PredSetneInt, 0, Chan::X);
    w.src[0] = AluSrc { sel: Sel::Gpr(5), ..AluSrc::UNUSED };
    w.src[1] = AluSrc { sel: Sel::Inline(InlineConst::Zero), ..AluSrc::UNUSED };
    w.update_exec_mask = true;
    w.update_pred = true;
    w.write_mask = false;
    w.last = true;
    assert_eq!(w.encode(Chip::Evergreen), Ok([0x801F_0005, 0x0000_228C]));
}

#[test]
fn alu_op3_word() {
    // muladd_uint24 r2.x, r1.x, kcache set 0 constant 1 .z, r0.x (last):
    // w0 = SRC0_SEL 1 | SRC1_SEL 129 << 13 (0x10_2000) | SRC1_CHAN 2 << 23 (0x100_0000)
    //      | LAST = 0x8110_2001.
    // w1 = SRC2 r0.x (0) | ALU_INST 0x10 << 13 (0x2_0000) | DST_GPR 2 << 21 (0x40_0000)
    //    = 0x0042_0000 (no WRITE_MASK bit: OP3 always writes).
    let (words, _) = asm("alu\n muladd_uint24 r2.x, r1.x, cb0[1].z, r0.x\nend", Chip::Evergreen);
    assert_eq!(&words[4..6], &[0x8110_2001, 0x0042_0000]);
    let w = AluWord::decode([0x8110_2001, 0x0042_0000], Chip::Evergreen).unwrap();
    assert_eq!(w.op, AluOp::MuladdUint24);
    assert!(w.write_mask);
    // OP3 has no ABS bits.
    let mut bad = w;
    bad.abs[0] = true;
    assert!(bad.encode(Chip::Evergreen).is_err());
}

#[test]
fn whole_program_with_a_literal() {
    // alu / add r1.x, r0.x, 2.5 / end
    // CF 0: ALU at ADDR 2 (after the two CF words), 2 slots (instruction + literal pair):
    //   w0 = 2, w1 = COUNT 1 << 18 (0x4_0000) | CF_INST 8 << 26 (0x2000_0000) | BARRIER
    //      = 0xA004_0000.
    // CF 1: Evergreen NOP + EOP = 0x8020_0000; Cayman CF_END = 0x8800_0000.
    // Clause: SRC0 r0.x = 0, SRC1 literal 253 << 13 = 0x1F_A000, LAST -> 0x801F_A000;
    //   w1 = WRITE_MASK 0x10 | DST_GPR 1 << 21 = 0x0020_0010; literal 2.5f = 0x4020_0000, pad 0.
    for (chip, end) in [(Chip::Evergreen, 0x8020_0000), (Chip::Cayman, 0x8800_0000)] {
        let (words, info) = asm("alu\n    add r1.x, r0.x, 2.5\nend\n", chip);
        assert_eq!(
            words,
            [2, 0xA004_0000, 0, end, 0x801F_A000, 0x0020_0010, 0x4020_0000, 0],
            "{chip}"
        );
        assert_eq!(info.cf_count, 2);
        assert_eq!(info.num_gprs, 2);
    }
}

#[test]
fn mullo_in_t_on_evergreen_and_in_four_slots_on_cayman() {
    let src = "alu\n mullo_uint r2.x, r1.x, cb0[1].z\nend";
    // Evergreen: one word (t slot, decoded as t because MULLO is t-only):
    // w0 = SRC0 r1.x (1) | SRC1 129 << 13 | CHAN z 2 << 23 | LAST = 0x8110_2001;
    // w1 = WRITE 0x10 | ALU_INST 0x91 << 7 (0x4880) | DST_GPR 2 << 21 = 0x0040_4890.
    let (eg, _) = asm(src, Chip::Evergreen);
    assert_eq!(&eg[4..], &[0x8110_2001, 0x0040_4890]);
    // Cayman (§4.2): the same instruction in x, y, z, w; DST_CHAN = slot, only x writes,
    // LAST on w: w1 of y = 0x4880 | 2 << 21 | 1 << 29 = 0x2040_4880, etc.
    let (cm, _) = asm(src, Chip::Cayman);
    assert_eq!(
        &cm[4..],
        &[
            0x0110_2001,
            0x0040_4890, // x, writes
            0x0110_2001,
            0x2040_4880, // y
            0x0110_2001,
            0x4040_4880, // z
            0x8110_2001,
            0x6040_4880, // w, last
        ]
    );
}

#[test]
fn recip_uses_xyz_on_cayman_and_leaves_w_free() {
    // recip_ieee r3.y, r2.x with an independent op in w: x, y, z copies (only y writes),
    // then the w op. RECIP_IEEE = 0x86 -> ALU_INST bits 0x86 << 7 = 0x4300.
    let src = "alu\n { recip_ieee r3.y, r2.x\n mov r4.w, r5.w }\nend";
    let (cm, _) = asm(src, Chip::Cayman);
    let w = walk(&cm, Chip::Cayman);
    let g = &w.alu_groups()[0].insts;
    assert_eq!(g.len(), 4);
    assert_eq!(
        g.iter().map(|i| (i.op, i.dst_chan, i.write_mask)).collect::<Vec<_>>(),
        [
            (AluOp::RecipIeee, Chan::X, false),
            (AluOp::RecipIeee, Chan::Y, true),
            (AluOp::RecipIeee, Chan::Z, false),
            (AluOp::Mov, Chan::W, true),
        ]
    );
    assert_eq!(cm[5] & 0x0003_FF80, 0x86 << 7); // w1 of the x copy
    // A w destination takes all four slots.
    let (cm, _) = asm("alu\n recip_ieee r3.w, r2.x\nend", Chip::Cayman);
    assert_eq!(walk(&cm, Chip::Cayman).alu_groups()[0].insts.len(), 4);
}

#[test]
fn bank_swizzle_is_chosen_for_a_read_port_conflict() {
    // x: add r1.x, r2.x, r3.x reads r2 (bank x) in cycle 0 and r3 (bank x) in cycle 1 with
    // VEC_012. y: add r1.y, r4.x, r5.y must read r4 on bank x: VEC_012/021 put src0 in cycle 0
    // (r2 there), VEC_120/102 in cycle 1 (r3 there); VEC_201 (4) puts it in cycle 2 and src1
    // r5.y in cycle 0 on bank y: the first fit.
    // y word: w0 = 4 | 5 << 13 (0xA000) | CHAN y 1 << 23 (0x80_0000) | LAST = 0x8080_A004;
    // w1 = WRITE 0x10 | BANK_SWIZZLE 4 << 18 (0x10_0000) | DST_GPR 1 << 21 (0x20_0000)
    //      | DST_CHAN 1 << 29 (0x2000_0000) = 0x2030_0010.
    let (eg, _) =
        asm("alu\n{ add r1.x, r2.x, r3.x\n  add r1.y, r4.x, r5.y }\nend", Chip::Evergreen);
    assert_eq!(&eg[4..6], &[0x0000_6002, 0x0020_0010]);
    assert_eq!(&eg[6..8], &[0x8080_A004, 0x2030_0010]);
}

#[test]
fn kcache_lines_are_locked_per_clause() {
    // cb0[1] (line 0) and cb0[17] (line 1): one LOCK_2 set at line 0; cb0[17] is SRC_SEL
    // 128 + 17 = 145.
    let (w, _) = asm("alu\n add r1.x, cb0[1].x, cb0[17].x\nend", Chip::Evergreen);
    let cf = CfAluWord::decode([w[0], w[1]]).unwrap();
    assert_eq!(cf.kcache[0], Kcache { bank: 0, mode: KcacheMode::Lock2, addr: 0 });
    assert_eq!(cf.kcache[1], Kcache::NONE);
    let alu = AluWord::decode([w[4], w[5]], Chip::Evergreen).unwrap();
    assert_eq!(alu.src[1].sel.raw(), Ok(145));
    // cb1[0] and cb0[40]: sorted (buffer 0, line 2), (buffer 1, line 0) -> set 0 = buffer 0
    // line 2 (LOCK_1), set 1 = buffer 1 line 0; cb0[40] = 128 + (40 - 32) = 136,
    // cb1[0] = 160.
    let (w, _) = asm("alu\n add r1.x, cb1[0].x, cb0[40].y\nend", Chip::Cayman);
    let cf = CfAluWord::decode([w[0], w[1]]).unwrap();
    assert_eq!(cf.kcache[0], Kcache { bank: 0, mode: KcacheMode::Lock1, addr: 2 });
    assert_eq!(cf.kcache[1], Kcache { bank: 1, mode: KcacheMode::Lock1, addr: 0 });
    let alu = AluWord::decode([w[4], w[5]], Chip::Cayman).unwrap();
    assert_eq!((alu.src[0].sel.raw(), alu.src[1].sel.raw()), (Ok(160), Ok(136)));
    assert_eq!(alu.src[1].chan, Chan::Y);
}

#[test]
fn inline_constants_and_literals() {
    // 1.0, 1, -1, 0.5 and 0 are inline (SRC_SEL 249, 250, 251, 252, 248); 3 and -2.0 are
    // literals (253) in channels x and y, padded to two dwords; 0x3f800000 is 1.0's bits.
    let (w, _) = asm(
        "alu\n{ add r1.x, 1.0, 0.5\n add_int r1.y, 1, -1\n add_int r1.z, 3, 0\n add r1.w, -2.0, 0x3f800000 }\nend",
        Chip::Cayman,
    );
    let walk = walk(&w, Chip::Cayman);
    let g = walk.alu_groups()[0];
    let sels: Vec<_> = g
        .insts
        .iter()
        .map(|i| (i.src[0].sel.raw().unwrap(), i.src[1].sel.raw().unwrap()))
        .collect();
    assert_eq!(sels, [(249, 252), (250, 251), (253, 248), (253, 249)]);
    assert_eq!(g.insts[2].src[0].chan, Chan::X);
    assert_eq!(g.insts[3].src[0].chan, Chan::Y);
    assert_eq!(g.literals, [3, (-2.0f32).to_bits()]);
}

#[test]
fn vertex_fetch_matches_llvm_encodings() {
    // LLVM `VTX_READ_32 T2.X, T2.X, 0, #1` on cypress/barts:
    // bytes 40 01 02 10 | 02 f0 5f 13 | 00 00 08 00 | (dword 3 = 0).
    // w0: FETCH_TYPE 2 << 5 (0x40) | BUFFER_ID 1 << 8 | SRC_GPR 2 << 16 | MEGA_FETCH_COUNT
    //     4 << 26 (0x1000_0000) = 0x1002_0140.
    // w1: DST_GPR 2 | DST_SEL x 0, y/z/w 7 (7 << 12 | 7 << 15 | 7 << 18 = 0x1F_F000)
    //     | DATA_FORMAT 0x0D << 22 (0x0340_0000) | NUM_FORMAT_ALL 1 << 28 = 0x135F_F002.
    // w2: MEGA_FETCH 1 << 19 = 0x0008_0000.
    let sel = [DstSel::X, DstSel::Mask, DstSel::Mask, DstSel::Mask];
    let eg = VtxFetch::load(Chip::Evergreen, DataFormat::Fmt32, 2, sel, 2, Chan::X, 1);
    assert_eq!(eg.encode(Chip::Evergreen), Ok([0x1002_0140, 0x135F_F002, 0x0008_0000, 0]));
    // Cayman (same LLVM test, cayman): no MEGA_FETCH_COUNT / MEGA_FETCH.
    let cm = VtxFetch::load(Chip::Cayman, DataFormat::Fmt32, 2, sel, 2, Chan::X, 1);
    assert_eq!(cm.encode(Chip::Cayman), Ok([0x0002_0140, 0x135F_F002, 0, 0]));
    // VTX_READ_128 T3.XYZW, T1.X: 40 01 01 40 | 03 10 8d 18 | 00 00 08 00:
    // MEGA_FETCH_COUNT 16 << 26 = 0x4000_0000; DST_SEL x y z w = 0 | 1 << 12 | 2 << 15
    // | 3 << 18 = 0x000D_1000; DATA_FORMAT 0x22 << 22 = 0x0880_0000.
    let xyzw = [DstSel::X, DstSel::Y, DstSel::Z, DstSel::W];
    let v4 = VtxFetch::load(Chip::Evergreen, DataFormat::Fmt32x4, 3, xyzw, 1, Chan::X, 1);
    assert_eq!(v4.encode(Chip::Evergreen), Ok([0x4001_0140, 0x188D_1003, 0x0008_0000, 0]));
    // The text form produces the same words.
    let (w, _) = asm("fetch\n vfetch r2.x___, r2.x, vb1\nend", Chip::Evergreen);
    assert_eq!(&w[4..8], &[0x1002_0140, 0x135F_F002, 0x0008_0000, 0]);
    let (w, _) = asm("fetch\n vfetch r3, r1.x, vb1, fmt=32_32_32_32\nend", Chip::Evergreen);
    assert_eq!(&w[4..8], &[0x4001_0140, 0x188D_1003, 0x0008_0000, 0]);
}

#[test]
fn vertex_fetch_cayman_fields() {
    // Cayman's VTX_WORD0 31:26: SRC_SEL_Y 27:26, STRUCTURED_READ 29:28, LDS_REQ 30,
    // COALESCED_READ 31. SRC_SEL_Y z (2 << 26) | STRUCTURED_READ 1 << 28 | COALESCED 1 << 31
    // on top of the VTX_READ_32 word: 0x0002_0140 | 0x0800_0000 | 0x1000_0000 | 0x8000_0000.
    let sel = [DstSel::X, DstSel::Mask, DstSel::Mask, DstSel::Mask];
    let mut f = VtxFetch::load(Chip::Cayman, DataFormat::Fmt32, 2, sel, 2, Chan::X, 1);
    f.src_sel_y = Chan::Z;
    f.structured_read = 1;
    f.coalesced_read = true;
    let w = f.encode(Chip::Cayman).unwrap();
    assert_eq!(w[0], 0x9802_0140);
    assert_eq!(VtxFetch::decode(w, Chip::Cayman), Ok(f));
    // Those fields do not exist on Evergreen, and MEGA_FETCH does not exist on Cayman.
    assert!(matches!(f.encode(Chip::Evergreen), Err(EncodeError::NotOnChip { .. })));
    let eg = VtxFetch::load(Chip::Evergreen, DataFormat::Fmt32, 2, sel, 2, Chan::X, 1);
    assert!(matches!(eg.encode(Chip::Cayman), Err(EncodeError::NotOnChip { .. })));
    assert!(VtxFetch::decode([0, 0x0340_0000, 1 << 19, 0], Chip::Cayman).is_err());
}

#[test]
fn every_field_is_range_checked() {
    let w = CfWord { addr: 1 << 24, ..CfWord::new(CfInst::Jump) };
    assert_eq!(
        w.encode(Chip::Evergreen),
        Err(EncodeError::OutOfRange { field: "ADDR", value: 1 << 24, max: (1 << 24) - 1 })
    );
    let w = CfWord { pop_count: 8, ..CfWord::new(CfInst::Pop) };
    assert!(matches!(
        w.encode(Chip::Cayman),
        Err(EncodeError::OutOfRange { field: "POP_COUNT", .. })
    ));
    let a = CfAluWord {
        inst: AluCfInst::Alu,
        addr: 1 << 22,
        kcache: [Kcache::NONE; 2],
        count: 0,
        alt_const: false,
        whole_quad_mode: false,
        barrier: true,
    };
    assert!(matches!(a.encode(), Err(EncodeError::OutOfRange { field: "ADDR (ALU)", .. })));
    assert!(matches!(
        CfAluWord { count: 128, addr: 0, ..a }.encode(),
        Err(EncodeError::OutOfRange { .. })
    ));
    let mut r = RatExport::indexed(RatCfInst::MemRat, RatInst::Add, 16, 0, 0, 1);
    assert!(matches!(
        r.encode(Chip::Evergreen),
        Err(EncodeError::OutOfRange { field: "RAT_ID", .. })
    ));
    r.rat_id = 0;
    r.rw_gpr = 128;
    assert!(matches!(
        r.encode(Chip::Evergreen),
        Err(EncodeError::OutOfRange { field: "RW_GPR", .. })
    ));
    let mut alu = AluWord::new(AluOp::Mov, 128, Chan::X);
    assert!(matches!(
        alu.encode(Chip::Evergreen),
        Err(EncodeError::OutOfRange { field: "DST_GPR", .. })
    ));
    alu.dst_gpr = 0;
    alu.bank_swizzle = 6;
    assert!(matches!(
        alu.encode(Chip::Evergreen),
        Err(EncodeError::OutOfRange { field: "BANK_SWIZZLE", .. })
    ));
    alu.bank_swizzle = 0;
    alu.src[0].sel = Sel::Kcache { set: 2, index: 0 };
    assert!(alu.encode(Chip::Evergreen).is_err());
    // Cayman: OMOD bits are EXECUTE_MASK_OP when UPDATE_EXEC_MASK is set.
    let mut p = AluWord::new(AluOp::PredSeteInt, 0, Chan::X);
    p.update_exec_mask = true;
    p.omod = Omod::Mul2;
    assert!(p.encode(Chip::Evergreen).is_ok());
    assert!(matches!(p.encode(Chip::Cayman), Err(EncodeError::NotOnChip { .. })));
}

#[test]
fn decoders_reject_reserved_values() {
    // SRC_SEL 200 (not in the subset), PRED_SEL 1 (reserved), ALU_INST 0x07 (not in the table).
    assert!(AluWord::decode([200, 0x10], Chip::Evergreen).is_err());
    assert!(AluWord::decode([1 << 29, 0x10], Chip::Evergreen).is_err());
    assert!(AluWord::decode([0, 0x10 | 0x07 << 7], Chip::Evergreen).is_err());
    // CF_WORD0 31:27 reserved; CF_INST 0x03 not in the subset.
    assert!(CfWord::decode([1 << 27, 0], Chip::Evergreen).is_err());
    assert!(CfWord::decode([0, 0x03 << 22], Chip::Evergreen).is_err());
    // A fetch's fourth dword must be zero.
    assert!(VtxFetch::decode([0x40, 0x0340_0000, 0, 1], Chip::Evergreen).is_err());
}
