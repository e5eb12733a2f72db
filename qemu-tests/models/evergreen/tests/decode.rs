//! The decoder on hand-derived words of every format, for both chips where the layouts or the
//! instruction sets differ (Mesa/LLVM layouts, amd-evergreen-cayman §4.1), and on
//! random words (it never panics).
mod common;
use common::{CHIPS, Chip, ShaderErrorKind as E};
use evergreen_model::shader::AluOp;
use evergreen_model::shader::decode::*;
use proptest::prelude::*;

const EG: Chip = Chip::Evergreen;
const CM: Chip = Chip::Cayman;

fn inst(w0: u32, w1: u32, chip: Chip) -> Result<CfInst, E> {
    decode_cf(w0, w1, chip).map(|d| d.inst)
}

#[test]
fn program_end_per_chip() {
    // NOP with END_OF_PROGRAM: CF_WORD1 = EOP 1<<21 (0x20_0000) | BARRIER 1<<31.
    assert_eq!(
        decode_cf(0, 0x8020_0000, EG),
        Ok(DecodedCf { inst: CfInst::Nop, end_of_program: true })
    );
    // Cayman has no END_OF_PROGRAM bit (§4.1).
    assert_eq!(
        decode_cf(0, 0x8020_0000, CM),
        Err(E::ReservedField { field: "END_OF_PROGRAM (Cayman)", value: 1 })
    );
    // CF_END: CF_INST 0x20<<22 (0x0800_0000) | BARRIER. Cayman only.
    assert_eq!(
        decode_cf(0, 0x8800_0000, CM),
        Ok(DecodedCf { inst: CfInst::End, end_of_program: false })
    );
    assert_eq!(inst(0, 0x8800_0000, EG), Err(E::CfInstNotOnChip { inst: 0x20, chip: EG }));
}

#[test]
fn fetch_clauses_per_chip() {
    // VC @6, COUNT 1<<10 (two fetches): 0x02<<22 (0x0080_0000) | 0x400 | BARRIER.
    assert_eq!(inst(6, 0x8080_0400, EG), Ok(CfInst::Fetch { addr: 6, count: 2 }));
    // §4.1: "Vfetch instructions issue through TC" on Cayman; there is no VC.
    assert_eq!(inst(6, 0x8080_0400, CM), Err(E::CfInstNotOnChip { inst: 2, chip: CM }));
    // TC @6, COUNT 2<<10 (0x800): 0x01<<22 (0x0040_0000) | 0x800 | BARRIER.
    for chip in CHIPS {
        assert_eq!(inst(6, 0x8040_0800, chip), Ok(CfInst::Fetch { addr: 6, count: 3 }));
    }
}

#[test]
fn alu_clause_words() {
    // The harness ALU clause (common::EG_HARNESS): ADDR 4, LOCK_2 of bank 0 line 0, LOCK_1 of
    // bank 1 line 1, 16 slots.
    let want = AluCf {
        kind: AluCfKind::Plain,
        addr: 4,
        slots: 16,
        kcache: [
            Kcache { bank: 0, constants: 32, first: 0 },
            Kcache { bank: 1, constants: 16, first: 16 },
        ],
    };
    for chip in CHIPS {
        assert_eq!(inst(0x8400_0004, 0xA03C_0401, chip), Ok(CfInst::Alu(want)));
        // CF_INST 9 (0x2400_0000), 10 (0x2800_0000), 11 (0x2C00_0000), 15 (0x3C00_0000), one slot.
        let kind = |w1| match inst(8, w1, chip) {
            Ok(CfInst::Alu(a)) => Ok(a.kind),
            other => Err(other),
        };
        assert_eq!(kind(0xA400_0000), Ok(AluCfKind::PushBefore));
        assert_eq!(kind(0xA800_0000), Ok(AluCfKind::PopAfter(1)));
        assert_eq!(kind(0xAC00_0000), Ok(AluCfKind::PopAfter(2)));
        assert_eq!(kind(0xBC00_0000), Ok(AluCfKind::ElseAfter));
        // KCACHE_MODE0 3 (LOCK_LOOP_INDEX, 3<<30) and ALT_CONST (1<<25) are not modelled.
        assert!(matches!(inst(0xC000_0000, 0xA000_0000, chip), Err(E::UnsupportedField { .. })));
        assert!(matches!(
            inst(0, 0xA200_0000, chip),
            Err(E::UnsupportedField { field: "ALT_CONST", .. })
        ));
    }
    // CF_INST 14 (0x3800_0000): ALU_BREAK on Evergreen, ALU_VALID_PIXEL_MODE on Cayman (§4.1).
    assert_eq!(inst(8, 0xB800_0000, EG), Err(E::UnsupportedCfInst(14)));
    assert!(matches!(
        inst(8, 0xB800_0000, CM),
        Ok(CfInst::Alu(AluCf { kind: AluCfKind::Plain, .. }))
    ));
    // CF_INST 13: ALU_CONTINUE on Evergreen, gone on Cayman.
    assert_eq!(inst(8, 0xB400_0000, EG), Err(E::UnsupportedCfInst(13)));
    assert_eq!(inst(8, 0xB400_0000, CM), Err(E::UnknownAluCfInst(13)));
}

#[test]
fn flow_control_words() {
    for chip in CHIPS {
        // JUMP @9 POP_COUNT 1: 0x0A<<22 (0x0280_0000) | 1 | BARRIER.
        let jump =
            Flow { op: FlowOp::Jump, addr: 9, pop_count: 1, cf_const: 0, cond: Cond::Active };
        assert_eq!(inst(9, 0x8280_0001, chip), Ok(CfInst::Flow(jump)));
        // PUSH, COND BOOL 2<<8 (0x200), CF_CONST 5<<3 (0x28): 0x0B<<22 (0x02C0_0000).
        let push = Flow { op: FlowOp::Push, addr: 3, pop_count: 0, cf_const: 5, cond: Cond::Bool };
        assert_eq!(inst(3, 0x82C0_0228, chip), Ok(CfInst::Flow(push)));
        // LOOP_START_DX10 (0x06<<22 = 0x0180_0000) with COND ALWAYS_FALSE (1<<8).
        assert!(matches!(inst(3, 0x8180_0100, chip), Err(E::UnsupportedField { .. })));
        // WHOLE_QUAD_MODE (1<<30) on a NOP.
        assert_eq!(
            inst(0, 0xC000_0000, chip),
            Err(E::UnsupportedField { field: "WHOLE_QUAD_MODE", value: 1 })
        );
        // 0x11 is no CF_INST; CALL 0x12 and EXPORT 0x53 are, but not modelled; 0x7F is none.
        assert_eq!(inst(0, 0x8440_0000, chip), Err(E::UnknownCfInst(0x11)));
        assert_eq!(inst(0, 0x8480_0000, chip), Err(E::UnsupportedCfInst(0x12)));
        assert_eq!(inst(0, 0x94C0_0000, chip), Err(E::UnsupportedCfInst(0x53)));
        assert_eq!(inst(0, 0x9FC0_0000, chip), Err(E::UnknownCfInst(0x7F)));
    }
}

#[test]
fn rat_export_words() {
    // Evergreen STORE_RAW of R2 at R0, COMP_MASK 0xF, END_OF_PROGRAM (common::EG_HARNESS).
    let store = RatExport {
        rat: 0,
        op: RatOp::Store,
        rw_gpr: 2,
        index_gpr: 0,
        comp_mask: 0xF,
        cached: false,
    };
    assert_eq!(
        decode_cf(0x0001_2020, 0x95E0_F000, EG),
        Ok(DecodedCf { inst: CfInst::Rat(store), end_of_program: true })
    );
    assert_eq!(
        inst(0x0001_2020, 0x95E0_F000, CM),
        Err(E::UnsupportedRatInst { inst: 2, chip: CM })
    );
    // Cayman STORE_DWORD (RAT_INST 20<<4 = 0x140), no END_OF_PROGRAM (0x95C0_F000).
    assert_eq!(inst(0x0001_2140, 0x95C0_F000, CM), Ok(CfInst::Rat(store)));
    assert_eq!(
        inst(0x0001_2140, 0x95C0_F000, EG),
        Err(E::UnsupportedRatInst { inst: 20, chip: EG })
    );
    // With END_OF_PROGRAM on Cayman (0x95E0_F000): a reserved bit there.
    assert!(matches!(inst(0x0001_2140, 0x95E0_F000, CM), Err(E::ReservedField { .. })));
    // MEM_RAT ADD: RAT_ID 1 | ADD 7<<4 (0x70) | TYPE 1<<13 (0x2000) | RW_GPR 3<<15 (0x1_8000) |
    // INDEX_GPR 4<<23 (0x200_0000) = 0x0201_A071; WORD1 = COMP_MASK 1<<12 | 0x56<<22
    // (0x1580_0000) | BARRIER = 0x9580_1000.
    // CF_INST 0x56 is MEM_RAT: through the colour-buffer cache.
    let add =
        RatExport { rat: 1, op: RatOp::Add, rw_gpr: 3, index_gpr: 4, comp_mask: 1, cached: true };
    for chip in CHIPS {
        assert_eq!(inst(0x0201_A071, 0x9580_1000, chip), Ok(CfInst::Rat(add)));
        // ELEM_SIZE 1 (1<<30), TYPE 0 (non-indexed), BURST_COUNT 1 (1<<16): not modelled.
        assert!(matches!(
            inst(0x4201_A071, 0x9580_1000, chip),
            Err(E::UnsupportedField { field: "ELEM_SIZE", .. })
        ));
        assert!(matches!(inst(0x0201_8071, 0x9580_1000, chip), Err(E::UnsupportedField { .. })));
        assert!(matches!(
            inst(0x0201_A071, 0x9581_1000, chip),
            Err(E::UnsupportedField { field: "BURST_COUNT", .. })
        ));
    }
}

#[test]
fn alu_words() {
    for chip in CHIPS {
        // ADD R2.x = KC0[0].x + KC0[0].y (alu.rs float group, x).
        let add = decode_alu(0x0090_0080, 0x0040_0010, chip).unwrap();
        assert_eq!(add.op, AluOp::Add);
        assert_eq!(
            add.sources(),
            &[
                Src { sel: 128, chan: 0, neg: false, abs: false },
                Src { sel: 128, chan: 1, neg: false, abs: false }
            ]
        );
        assert_eq!((add.dst_gpr, add.dst_chan, add.write, add.last), (2, 0, true, false));
        // MULADD R2.x = KC0[0].x * KC0[0].y + KC0[0].w (OP3 0x14<<13 in WORD1 17:13).
        let mad = decode_alu(0x0090_0080, 0x0042_8C80, chip).unwrap();
        assert_eq!(
            (mad.op, mad.src[2]),
            (AluOp::Muladd, Src { sel: 128, chan: 3, neg: false, abs: false })
        );
        // OP2 ALU_INST 7 (7<<7 = 0x380) and OP3 0x1F (MUL_LIT, 0x1F<<13 = 0x3_E000): not in the
        // subset.
        assert_eq!(decode_alu(0, 0x380, chip), Err(E::UnknownAluOp { op3: false, inst: 7 }));
        assert_eq!(decode_alu(0, 0x3_E000, chip), Err(E::UnknownAluOp { op3: true, inst: 0x1F }));
        // MOV (0x0040_0C90) with SRC0_REL (1<<9), PRED_SEL 1 (1<<29), BANK_SWIZZLE 6 (6<<18),
        // SRC_SEL 200.
        assert!(matches!(decode_alu(0x200, 0x0040_0C90, chip), Err(E::UnsupportedField { .. })));
        assert_eq!(
            decode_alu(0x2000_0000, 0x0040_0C90, chip),
            Err(E::ReservedField { field: "PRED_SEL", value: 1 })
        );
        assert_eq!(
            decode_alu(0, 0x0058_0C90, chip),
            Err(E::ReservedField { field: "BANK_SWIZZLE", value: 6 })
        );
        assert_eq!(decode_alu(200, 0x0040_0C90, chip), Err(E::UnsupportedSrcSel(200)));
        // ADD_INT (0x0040_1A10) with SRC0_NEG (1<<12) or CLAMP (1<<31); ADD with UPDATE_PRED (8).
        assert!(matches!(decode_alu(0x1000, 0x0040_1A10, chip), Err(E::UnsupportedField { .. })));
        assert!(matches!(decode_alu(0, 0x8040_1A10, chip), Err(E::UnsupportedField { .. })));
        assert!(matches!(decode_alu(0, 0x0040_0018, chip), Err(E::UnsupportedField { .. })));
    }
}

#[test]
fn clause_groups_and_literals() {
    for chip in CHIPS {
        // MOV R2.x = literal.z | LAST (253 | 2<<10 = 0x8FD): literal z needs four dwords.
        let words = [0x8000_08FD, 0x0040_0C90, 1, 2, 3, 4];
        let groups = decode_clause(&words, chip).unwrap();
        assert_eq!((groups.len(), groups[0].literals), (1, [1, 2, 3, 4]));
        assert_eq!(decode_clause(&words[..4], chip), Err(E::LiteralOutsideClause));
        // ADD without LAST and nothing after it.
        assert_eq!(decode_clause(&[0x0090_0080, 0x0040_0010], chip), Err(E::ClauseEndsMidGroup));
    }
}

/// The VTX_WORD0 31:26 and WORD2 bit 19 differ between the chips (Mesa Cayman layouts).
#[test]
fn vertex_fetch_words_per_chip() {
    // FMT_32 from buffer 0, index R3.x, into R2 (memory.rs `fetch32`): Evergreen MEGA_FETCH_COUNT
    // 3<<26 and MEGA_FETCH 1<<19.
    let eg = [0x0C03_0040, 0x134D_1002, 0x0008_0000, 0];
    let want = VtxFetch {
        buffer_id: 0,
        src_gpr: 3,
        src_chan: 0,
        dst_gpr: 2,
        dst_sel: [0, 1, 2, 3],
        use_const_fields: false,
        data_format: 0xD,
        num_format: 1,
        offset: 0,
    };
    assert_eq!(decode_vtx(eg, EG), Ok(want));
    // On Cayman bit 19 of WORD2 is reserved.
    assert_eq!(
        decode_vtx(eg, CM),
        Err(E::ReservedField { field: "MEGA_FETCH (Cayman)", value: 1 })
    );
    assert_eq!(decode_vtx([0x0C03_0040, 0x134D_1002, 0, 0], CM), Ok(want));
    // MEGA_FETCH_COUNT 15 (0x3C00_0000) is STRUCTURED_READ 3 on Cayman; 32 (0x8000_0000) is
    // COALESCED_READ.
    assert!(decode_vtx([0x3C03_0040, 0x134D_1002, 0, 0], EG).is_ok());
    assert!(matches!(
        decode_vtx([0x3C03_0040, 0x134D_1002, 0, 0], CM),
        Err(E::UnsupportedField { field: "STRUCTURED_READ", .. })
    ));
    assert!(decode_vtx([0x8003_0040, 0x134D_1002, 0, 0], EG).is_ok());
    assert!(matches!(
        decode_vtx([0x8003_0040, 0x134D_1002, 0, 0], CM),
        Err(E::UnsupportedField { field: "COALESCED_READ", .. })
    ));
    for chip in CHIPS {
        // VC_INST 1 (semantic), TEX_INST 0x10 (SAMPLE in a TC clause).
        assert_eq!(
            decode_vtx([0x0003_0041, 0x134D_1002, 0, 0], chip),
            Err(E::UnsupportedFetchInst(1))
        );
        assert_eq!(
            decode_vtx([0x0003_0050, 0x134D_1002, 0, 0], chip),
            Err(E::UnsupportedFetchInst(0x10))
        );
        // FETCH_TYPE 1 (0x20) instance data; 3 (0x60) reserved.
        assert!(matches!(
            decode_vtx([0x0003_0020, 0x134D_1002, 0, 0], chip),
            Err(E::UnsupportedField { .. })
        ));
        assert!(matches!(
            decode_vtx([0x0003_0060, 0x134D_1002, 0, 0], chip),
            Err(E::ReservedField { .. })
        ));
        // DST_SEL_X 6 (6<<9 = 0xC00) is reserved; ENDIAN_SWAP 1<<16 not modelled.
        assert_eq!(
            decode_vtx([0x0003_0040, 0x134D_1C02, 0, 0], chip),
            Err(E::ReservedField { field: "DST_SEL", value: 6 })
        );
        assert!(matches!(
            decode_vtx([0x0003_0040, 0x134D_1002, 0x1_0000, 0], chip),
            Err(E::UnsupportedField { .. })
        ));
    }
}

proptest! {
    /// Arbitrary words decode or give a typed error; nothing panics.
    #[test]
    fn random_words_never_panic(words in proptest::collection::vec(any::<u32>(), 4..64)) {
        for chip in CHIPS {
            let _ = decode_cf(words[0], words[1], chip);
            let _ = decode_alu(words[0], words[1], chip);
            let _ = decode_vtx([words[0], words[1], words[2], words[3]], chip);
            let even = words.len() & !1;
            let _ = decode_clause(&words[..even], chip);
        }
    }
}
