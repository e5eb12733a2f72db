//! VLIW group semantics and slot rules: all slots read before any writes, PV/PS forwarding,
//! Evergreen's t slot, Cayman's four slots and replicated operations (§4.2), and the typed
//! errors for groups that break them. Words as in `alu.rs` (MOV = 0x19 << 7 = 0xC80; inline
//! 1.0 = 249 (0xF9), 0.5 = 252 (0xFC); PV = 254 (0xFE), PS = 255 (0xFF)).
mod common;
use common::*;
use evergreen_model::shader::AluOp;

#[test]
fn all_slots_read_before_any_write_and_pv_forwards() {
    let alu = [
        // g1 x MOV R2.x = 1.0; y MOV R2.y = 0.5 | LAST.
        [0x0000_00F9, 0x0040_0C90],
        [0x8000_00FC, 0x2040_0C90],
        // g2 x MOV R2.x = R2.y (SRC0 2, CHAN 1<<10 = 0x400); y MOV R2.y = R2.x | LAST: a swap.
        [0x0000_0402, 0x0040_0C90],
        [0x8000_0002, 0x2040_0C90],
        // g3 z ADD R2.z = PV.x + PV.y: W0 = 254 (0xFE) | 254<<13 (0x1F_C000) | 1<<23
        // (0x80_0000) | LAST; W1 = ADD | 0x10 | 0x40_0000 | chan z.
        [0x809F_C0FE, 0x4040_0010],
        // g4 w MOV R2.w = PV.z: W0 = 0xFE | 2<<10 (0x800) | LAST.
        [0x8000_08FE, 0x6040_0C90],
    ];
    for chip in CHIPS {
        assert_eq!(run_alu(chip, &alu), Ok([fb(0.5), fb(1.0), fb(1.5), fb(1.5)]), "{chip:?}");
    }
}

#[test]
fn pv_holds_results_not_written_to_gprs() {
    let alu = [
        // g1 x ADD_INT R3.x = lit.x + lit.y, WRITE_MASK 0: W0 = 253 (0xFD) | 253<<13
        // (0x1F_A000) | 1<<23 (0x80_0000) | LAST; W1 = 0x34<<7 (0x1A00) | DST_GPR 3<<21
        // (0x60_0000).
        [0x809F_A0FD, 0x0060_1A00],
        [5, 6],
        // g2 x ADD_INT R2.x = PV.x + int 1: W0 = 0xFE | 250<<13 (0x1F_4000) | LAST; W1 = 0x1A00 |
        // 0x10 | 0x40_0000.
        [0x801F_40FE, 0x0040_1A10],
    ];
    for chip in CHIPS {
        assert_eq!(run_alu(chip, &alu).map(|r| r[0]), Ok(12), "{chip:?}");
    }
}

#[test]
fn evergreen_ps_forwards_the_t_result() {
    let alu = [
        // g1 t MULLO_INT R3.x = KC0[1].x * KC0[1].w, WRITE_MASK 0: W0 = 0x81 | 129<<13
        // (0x10_2000) | 3<<23 (0x180_0000) | LAST; W1 = 0x8F<<7 (0x4780) | 3<<21 (0x60_0000).
        [0x8190_2081, 0x0060_4780],
        // g2 y MOV R2.y = PS | LAST.
        [0x8000_00FF, 0x2040_0C90],
    ];
    assert_eq!(run_alu(Chip::Evergreen, &alu).map(|r| r[1]), Ok(700));
    // Cayman has no t slot, hence no PS (§4.1), and MULLO alone is not a valid group there.
    assert_eq!(run_alu(Chip::Cayman, &alu[1..]), Err(ShaderErrorKind::PsOnCayman));
    assert_eq!(
        run_alu(Chip::Cayman, &alu[..1]),
        Err(ShaderErrorKind::ReplicationMissing { op: AluOp::MulloInt, slot: 1 })
    );
}

#[test]
fn forwarding_needs_a_previous_group_of_the_clause() {
    // x MOV R2.x = PV.x | LAST as the clause's first group.
    let first = [[0x8000_00FE, 0x0040_0C90]];
    for chip in CHIPS {
        assert_eq!(
            run_alu(chip, &first),
            Err(ShaderErrorKind::ForwardUnavailable { sel: 254, chan: 0 })
        );
    }
    // g1 x MOV R2.x = 1.0 | LAST; g2 y MOV R2.y = PV.y (0xFE | 1<<10): g1 had no y slot.
    let empty = [[0x8000_00F9, 0x0040_0C90], [0x8000_04FE, 0x2040_0C90]];
    for chip in CHIPS {
        assert_eq!(
            run_alu(chip, &empty),
            Err(ShaderErrorKind::ForwardUnavailable { sel: 254, chan: 1 })
        );
    }
    // PS at the start of an Evergreen clause: MOV R2.y = PS | LAST.
    assert_eq!(
        run_alu(Chip::Evergreen, &[[0x8000_00FF, 0x2040_0C90]]),
        Err(ShaderErrorKind::ForwardUnavailable { sel: 255, chan: 0 })
    );
}

/// The Evergreen slot rule: a DST_CHAN that does not come after the previous instruction's goes to
/// t on Evergreen; Cayman has nowhere to put it.
#[test]
fn out_of_order_channel_goes_to_t_on_evergreen_only() {
    let alu = [
        // y MOV R2.y = 1.0 (W1 chan y 0x2040_0C90); x MOV R2.x = 0.5 | LAST.
        [0x0000_00F9, 0x2040_0C90],
        [0x8000_00FC, 0x0040_0C90],
    ];
    assert_eq!(run_alu(Chip::Evergreen, &alu).map(|r| [r[0], r[1]]), Ok([fb(0.5), fb(1.0)]));
    assert_eq!(run_alu(Chip::Cayman, &alu), Err(ShaderErrorKind::SlotOrder { chan: 0 }));
}

#[test]
fn evergreen_t_slot_rules() {
    // x MOV R2.x = 1.0, then BFE_UINT R2.x (a second op for x, so t) | LAST: BFE is
    // vector-only. BFE W0 = 0x82 | 130<<13 (0x10_4000) | 2<<23 (0x100_0000) | LAST; W1 = 0x82 |
    // 3<<10 (0xC00) | 4<<13 (0x8000) | 0x40_0000.
    let bfe_in_t = [[0x0000_00F9, 0x0040_0C90], [0x8110_4082, 0x0040_8C82]];
    assert_eq!(
        run_alu(Chip::Evergreen, &bfe_in_t),
        Err(ShaderErrorKind::VectorOnlyInTrans(AluOp::BfeUint))
    );
    assert_eq!(run_alu(Chip::Cayman, &bfe_in_t), Err(ShaderErrorKind::SlotOrder { chan: 0 }));

    // RECIP_IEEE R2.x (t-only: t) then MOV R2.x = 0.5 | LAST: nothing may follow t.
    let after_t = [[0x0000_0C80, 0x0040_4310], [0x8000_00FC, 0x0040_0C90]];
    assert_eq!(run_alu(Chip::Evergreen, &after_t), Err(ShaderErrorKind::InstructionAfterTrans));

    // x MOV R2.x = 1.0, t MOV R2.x = 0.5 | LAST: two writers of R2.x.
    let conflict = [[0x0000_00F9, 0x0040_0C90], [0x8000_00FC, 0x0040_0C90]];
    assert_eq!(
        run_alu(Chip::Evergreen, &conflict),
        Err(ShaderErrorKind::WriteConflict { gpr: 2, chan: 0 })
    );

    // ... but t MOV R3.x is fine: x writes R2.x, t writes R3.x (DST_GPR 3<<21 = 0x60_0000).
    let ok = [[0x0000_00F9, 0x0040_0C90], [0x8000_00FC, 0x0060_0C90]];
    assert_eq!(run_alu(Chip::Evergreen, &ok).map(|r| r[0]), Ok(fb(1.0)));
}

#[test]
fn group_length_limits() {
    // MOV R2.x = 1.0 without LAST (0x0000_00F9, 0x0040_0C90), then one with LAST.
    let group = |n: usize| {
        let mut v = vec![[0x0000_00F9, 0x0040_0C90]; n - 1];
        v.push([0x8000_00F9, 0x0040_0C90]);
        v
    };
    assert_eq!(run_alu(Chip::Evergreen, &group(6)), Err(ShaderErrorKind::GroupTooLong));
    assert_eq!(run_alu(Chip::Cayman, &group(5)), Err(ShaderErrorKind::GroupTooLong));
}

#[test]
fn cayman_replication_rules() {
    // MULLO_INT KC0[1].x * KC0[1].w in x, y, w and KC0[1].z * KC0[1].w in z: W0 0x0190_2081
    // (z: 0x0190_2881, SRC0_CHAN 2; w: | LAST); W1 = 0x4780 | 0x40_0000 | chan (| 0x10 on w).
    let differing = [
        [0x0190_2081, 0x0040_4780],
        [0x0190_2081, 0x2040_4780],
        [0x0190_2881, 0x4040_4780],
        [0x8190_2081, 0x6040_4790],
    ];
    assert_eq!(
        run_alu(Chip::Cayman, &differing),
        Err(ShaderErrorKind::ReplicationOperands { op: AluOp::MulloInt, slot: 2 })
    );
    // With z's source fixed it runs: 7 * 100 in R2.w.
    let mut same = differing;
    same[2][0] = 0x0190_2081;
    assert_eq!(run_alu(Chip::Cayman, &same).map(|r| r[3]), Ok(700));

    // RECIP_IEEE in x and y only: z missing. W0 = KC0[0].w (0xC80; LAST on y).
    let xy = [[0x0000_0C80, 0x0040_4300], [0x8000_0C80, 0x2040_4310]];
    assert_eq!(
        run_alu(Chip::Cayman, &xy),
        Err(ShaderErrorKind::ReplicationMissing { op: AluOp::RecipIeee, slot: 2 })
    );
    // RECIP_IEEE in x, y, z and an independent ADD R2.w = 1.0 + 0.5 in w (W0 = 0xF9 | 252<<13
    // (0x1F_8000) | LAST; W1 = ADD | 0x10 | 0x40_0000 | chan w).
    let xyz_w = [
        [0x0000_0C80, 0x0040_4300],
        [0x0000_0C80, 0x2040_4310],
        [0x0000_0C80, 0x4040_4300],
        [0x801F_80F9, 0x6040_0010],
    ];
    assert_eq!(run_alu(Chip::Cayman, &xyz_w).map(|r| [r[1], r[3]]), Ok([fb(0.125), fb(1.5)]));
}

#[test]
fn one_predicate_update_per_group() {
    // x and y PRED_SETE_INT KC0[1].x == KC0[1].x with UPDATE_PRED (W1 = 0x42<<7 (0x2100) | 0x8
    // | 0x40_0000 | chan).
    let alu = [[0x0010_2081, 0x0040_2108], [0x8010_2081, 0x2040_2108]];
    for chip in CHIPS {
        assert_eq!(run_alu(chip, &alu), Err(ShaderErrorKind::PredicateConflict), "{chip:?}");
    }
}
