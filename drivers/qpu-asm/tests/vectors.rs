//! Instruction words derived by hand from the §3 bit layout (sig 63:60, unpack 59:57, pm 56,
//! pack 55:52, cond_add 51:49, cond_mul 48:46, sf 45, ws 44, waddr_add 43:38, waddr_mul 37:32,
//! op_mul 31:29, op_add 28:24, raddr_a 23:18, raddr_b 17:12, add_a 11:9, add_b 8:6, mul_a 5:3,
//! mul_b 2:0; load immediate mode in 59:57; branch cond 55:52, rel 51, reg 50, raddr_a 49:45),
//! each with the text this crate assembles it from and disassembles it to.

use baregpu_qpu_asm::{Instruction, assemble};

/// Checked against Mesa vc4_qpu_disasm.c (built from the public Mesa source as a standalone
/// harness during development): Mesa's disassembly of each word names the same operations,
/// conditions, destinations, sources, packs, unpacks and signals. The "random combination"
/// rows are from a run in which 65,000 random ALU words (every field, limited to what Mesa's
/// text shows) were disassembled by Mesa, its names mapped to this syntax, and assembled here
/// back to the same word. (word, text, what it covers)
const CHECKED_AGAINST_MESA: &[(u64, &str, &str)] = &[
    (0x1000_09e7_009e_7000, "nop", "NOP: sig 1, both waddr 39, raddr 39"),
    (0x3000_09e7_009e_7000, "thrend", "sig 3"),
    (0x0000_09e7_009e_7000, "bkpt", "sig 0"),
    (0x2000_09e7_009e_7000, "thrsw", "sig 2"),
    (0x4000_09e7_009e_7000, "sbwait", "sig 4"),
    (0x5000_09e7_009e_7000, "sbdone", "sig 5"),
    (0x6000_09e7_009e_7000, "lthrsw", "sig 6"),
    (0x7000_09e7_009e_7000, "loadcv", "sig 7"),
    (0x8000_09e7_009e_7000, "loadc", "sig 8"),
    (0x9000_09e7_009e_7000, "ldcend", "sig 9"),
    (0xa000_09e7_009e_7000, "ldtmu0", "sig 10"),
    (0xb000_09e7_009e_7000, "ldtmu1", "sig 11"),
    (0xc000_09e7_009e_7000, "loadam", "sig 12"),
    (0x1002_0827_0c9e_7280, "add r0, r1, r2", "op_add 12, cond_add always, waddr_add acc0, muxes"),
    (0x2002_4042_2c9e_7053, "add ra1, r0, r1 ; fmul rb2, r2, r3 ; thrsw", "both pipes, op_mul 1"),
    (
        0x1004_6821_213e_3dc6,
        "fadd.ifz.setf r0, ra15, vary ; fmul r1, r0, ra15",
        "cond zs, sf, mux A/B, raddr_a 15, raddr_b 35 (vary on B)",
    ),
    (0x1006_08a7_029e_7700, "fsub.ifnz r2, r3, r4", "cond zc, fsub"),
    (0x1008_08e7_039e_7a00, "fmin.ifn r3, r5, r0", "cond ns, fmin"),
    (0x100a_0967_049e_7000, "fmax.ifnn r5, r0, r0", "cond nc, fmax, waddr acc5"),
    (0x100c_00e7_059e_7280, "fminabs.ifc ra3, r1, r2", "cond cs"),
    (0x100e_0127_069e_7280, "fmaxabs.ifnc ra4, r1, r2", "cond cc"),
    (0x1002_0827_079e_7280, "ftoi r0, r1, r2", "op 7"),
    (0x1002_0827_089e_7280, "itof r0, r1, r2", "op 8"),
    (0x1002_0827_0d9e_7280, "sub r0, r1, r2", "op 13"),
    (0x1002_0827_0e9e_7280, "shr r0, r1, r2", "op 14"),
    (0x1002_0827_0f9e_7280, "asr r0, r1, r2", "op 15"),
    (0x1002_0827_109e_7280, "ror r0, r1, r2", "op 16"),
    (0xd002_0827_1198_2dc0, "shl r0, elem_num, 2", "op 17, small immediate 2, ELEMENT_NUMBER"),
    (0x1002_0827_129e_7280, "min r0, r1, r2", "op 18"),
    (0x1002_0827_139e_7280, "max r0, r1, r2", "op 19"),
    (0x1002_0827_149e_7280, "and r0, r1, r2", "op 20"),
    (0x1002_0ba7_159e_7000, "mov tlb_color_all, r0", "op 21 with equal muxes (mov)"),
    (0x1002_0827_169e_7280, "xor r0, r1, r2", "op 22"),
    (0x1002_0827_179e_7280, "not r0, r1, r2", "op 23"),
    (0x1002_0827_189e_7280, "clz r0, r1, r2", "op 24"),
    (0x1002_0827_1e9e_7280, "v8adds r0, r1, r2", "op 30"),
    (0x1002_0827_1f9e_7280, "v8subs r0, r1, r2", "op 31"),
    (0x1000_49e0_409e_700a, "nop ; mul24 r0, r1, r2", "op_mul 2"),
    (0x1000_49e0_609e_700a, "nop ; v8muld r0, r1, r2", "op_mul 3"),
    (0x1000_49e0_809e_7009, "nop ; mov r0, r1", "op_mul 4 with equal muxes (mov)"),
    (0x1000_49e0_a09e_700a, "nop ; v8max r0, r1, r2", "op_mul 5"),
    (0x1000_49e0_c09e_700a, "nop ; v8adds r0, r1, r2", "op_mul 6"),
    (0x1000_49e0_e09e_700a, "nop ; v8subs r0, r1, r2", "op_mul 7"),
    (0x1000_c9e0_209e_700a, "nop ; fmul.ifnz r0, r1, r2", "cond_mul zc"),
    (0x1000_69e0_209e_700a, "nop ; fmul.setf r0, r1, r2", "sf from the mul pipe (add nop)"),
    (0x1130_49e0_209e_700a, "nop ; fmul r0.c8888, r1, r2", "pm 1, mul pack 3"),
    (0x1160_49e3_209e_7012, "nop ; fmul r3.c8c, r2, r2", "pm 1, mul pack 6"),
    (0x1012_0067_019e_7040, "fadd ra1.16a, r0, r1", "pm 0, regfile-A pack 16a"),
    (0x10c2_00a7_0c9e_7040, "add ra2.8a.sat, r0, r1", "pm 0, pack 12 (8a saturated)"),
    (0x1080_59c5_209e_7001, "nop ; fmul ra5.sat, r0, r1", "ws 1: mul to side A, pack 8"),
    (0x1802_0827_150e_7d80, "mov r0, ra3.8a", "pm 0 unpack 4 on a regfile-A read"),
    (0x1302_0827_159e_7900, "mov r0, r4.16a", "pm 1 unpack 1 on r4"),
    (0x1602_0827_011e_7c40, "fadd r0, ra7.8dr, r1", "unpack 3 (8d replicate)"),
    (
        0x1002_1c67_1582_7d80,
        "mov vw_setup, unif",
        "ws 1: add to side B (VPMVCD_WR_SETUP), UNIFORM_READ",
    ),
    (
        0x1002_0c67_159e_0fc0,
        "mov vr_setup, rb32",
        "side A write 49 (VPMVCD_RD_SETUP), unif read via B printed by address",
    ),
    (0x1002_0e27_0c04_8dc0, "add tmu0_s, ra1, rb8", "TMU0_S write, both register files"),
    (0x1002_0827_15ce_7d80, "mov r0, mutex_acq", "MUTEX_ACQUIRE read"),
    (0x1002_0d27_150e_7d80, "mov sfu_recip, ra3", "SFU write"),
    (0xd002_0827_0c9d_d3c0, "add r0, r1, -3", "small immediate 29 (-3)"),
    (0xd000_49e0_209e_000f, "nop ; fmul r0, r1, 1.0", "small immediate 32 (1.0)"),
    (0xd000_49e0_209e_800f, "nop ; fmul r0, r1, 0.00390625", "small immediate 40 (1/256)"),
    (0xd000_49e0_209f_300a, "nop ; fmul r0, r1, r2 ; rot 3", "small immediate 51: rotate by 3"),
    (0xd000_49e0_209f_000a, "nop ; fmul r0, r1, r2 ; rot r5", "small immediate 48: rotate by r5"),
    (0xe002_0827_3f80_0000, "ldi r0, 0x3f800000", "load immediate mode 0"),
    (0xe002_1c67_0000_1a00, "ldi vw_setup, 0x1a00", "load immediate to side B with ws"),
    (
        0xe004_6821_0000_0005,
        "ldi.setf r0.ifz, 0x5, r1",
        "load immediate conds, sf, mul destination",
    ),
    (
        0x8009_6250_b85e_78b6,
        "clz.ifn.setf ra9, r4, r2 ; v8max.ifnn rb16, ra23, ra23 ; loadc",
        "random combination",
    ),
    (
        0x00bf_0ac0_4c9e_7a62,
        "add.ifnc tlb_stencil.8888.sat, r5, r1 ; mul24.ifn rb0, r4, r2 ; bkpt",
        "random combination",
    ),
    (
        0xc00b_88c3_d59e_76d9,
        "mov.ifnn r3, r3 ; v8adds.ifc rb3, r3, r1 ; loadam",
        "random combination",
    ),
    (
        0x513d_1f8c_e59d_bec9,
        "fminabs.ifc tmu1_r, rb27, r3 ; v8subs.ifn ra12.c8888, r1, r1 ; sbdone",
        "random combination",
    ),
    (
        0x415c_74dd_3e9f_1f49,
        "v8adds.ifc.setf rb19, vw_busy, r5 ; fmul ra29.c8b, r1, r1 ; sbwait",
        "random combination",
    ),
    (
        0x505c_94d0_359e_7109,
        "or.ifc rb19, r0, r4 ; fmul.ifz ra16.8b, r1, r1 ; sbdone",
        "random combination",
    ),
    (
        0x603a_8022_d19e_7245,
        "shl.ifnn ra0.8888, r1, r1 ; v8adds.ifz r2, r0, r5 ; lthrsw",
        "random combination",
    ),
    (
        0x604c_5488_a39e_7713,
        "fmin.ifc rb18, r3, r4 ; v8max ra8.8a, r2, r3 ; lthrsw",
        "random combination",
    ),
    (
        0xb00f_5698_e759_3c38,
        "ftoi.ifnc rb26, ra22, r0 ; v8subs.ifnn ra24, rb19, r0 ; ldtmu1",
        "random combination",
    ),
    (
        0xb803_063d_f366_7b90,
        "max ra24, r5, ra25.8a ; v8subs.ifn tmu1_t, r2, r0 ; ldtmu1",
        "random combination",
    ),
    (
        0x2604_d773_8e16_7b74,
        "shr.ifz rb29, r5, r5 ; v8min.ifnz mutex_release, ra5.8dr, r4 ; thrsw",
        "random combination",
    ),
    (
        0xc009_254d_5e9d_51ec,
        "v8adds.ifn.setf ra21, r0, rb21 ; mul24.ifn rb13, r5, r4 ; loadam",
        "random combination",
    ),
];

/// Hand-derived only: the Mesa disassembler of the version used prints no fields of branches,
/// semaphores (it shows them as `load_imm`) or the per-element load-immediate modes. (The
/// semaphore form, bits 63:57 = 0x74 with sa in bit 4 and the semaphore in 3:0, is the
/// document's figure 3 row; VC4C's `SemaphoreInstruction` uses the same.)
const HAND_DERIVED: &[(u64, &str, &str)] = &[
    (0xe202_0127_0001_0001, "ldi.pes ra4, 0x10001", "load immediate mode 1 (per-element signed)"),
    (0xe602_0127_0000_ffff, "ldi.peu ra4, 0xffff", "load immediate mode 3 (per-element unsigned)"),
    (0xe800_09e7_0000_0013, "sem acq 3", "semaphore acquire (sa 1)"),
    (0xe800_09e7_0000_000f, "sem rel 15", "semaphore release 15"),
    (0xf028_09e7_ffff_ffe0, "bra.anyz rel -32", "branch cond 2, relative"),
    (0xf0f4_40e7_0000_0000, "bra abs ra2 + 0, ra3", "branch via register, absolute, link to ra3"),
    (0xf008_09e7_0000_0008, "bra.allz rel 8", "branch cond 0"),
    (0xf0b8_09e7_0000_0000, "bra.anync rel 0", "branch cond 11"),
];

fn check(vectors: &[(u64, &str, &str)]) {
    for &(word, text, what) in vectors {
        let mut out = [0u64; 1];
        assert_eq!(assemble(text, &mut out), Ok(1), "{text} ({what})");
        assert_eq!(out[0], word, "{text} ({what}): {:#018x}", out[0]);
        let insn = Instruction::decode(word).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(insn.encode(), Ok(word), "{what}");
        assert_eq!(insn.display().to_string(), text, "{what}");
    }
}

#[test]
fn words_checked_against_mesa() {
    assert!(CHECKED_AGAINST_MESA.len() >= 40);
    check(CHECKED_AGAINST_MESA);
}

#[test]
fn hand_derived_words() {
    check(HAND_DERIVED);
}

/// The two words public drivers use everywhere (Mesa's `qpu_NOP()` and the thread end).
#[test]
fn nop_and_thread_end() {
    let nop = 0x1000_09e7_u64 << 32 | 0x009e_7000;
    let end = 0x3000_09e7_u64 << 32 | 0x009e_7000;
    let mut out = [0u64; 2];
    assert_eq!(assemble("nop\nthrend", &mut out), Ok(2));
    assert_eq!(out, [nop, end]);
}

#[test]
fn reserved_encodings_are_typed_errors() {
    use baregpu_qpu_asm::DecodeError;
    let nop = 0x1000_09e7_009e_7000u64;
    // op_add 9 (reserved, table 12).
    assert_eq!(Instruction::decode(nop | 9 << 24), Err(DecodeError::ReservedAddOp(9)));
    // pm 1 with pack 1 (reserved, table 9).
    assert_eq!(Instruction::decode(nop | 1 << 56 | 1 << 52), Err(DecodeError::ReservedMulPack(1)));
    // Load-immediate mode 2 (no such type).
    assert_eq!(
        Instruction::decode(0xe400_09e7_0000_0000),
        Err(DecodeError::ReservedLoadImmMode(2))
    );
    // Branch condition 12 (reserved, table 11).
    assert_eq!(
        Instruction::decode(0xf0c8_09e7_0000_0000),
        Err(DecodeError::ReservedBranchCond(12))
    );
    // Branch bits 59:56 and semaphore bits 31:5 unused.
    assert_eq!(
        Instruction::decode(0xf1f8_09e7_0000_0000),
        Err(DecodeError::UnusedBitsSet(1 << 56))
    );
    assert_eq!(Instruction::decode(0xe800_09e7_0000_0020), Err(DecodeError::UnusedBitsSet(0x20)));
    // Mul operand B reading a rotation (small immediate 49) as a value.
    assert_eq!(Instruction::decode(0xd000_49e0_2093_100f), Err(DecodeError::RotationAsOperand));
}

#[test]
fn per_element_load_immediates() {
    use baregpu_qpu_asm::isa::{LoadImm, LoadImmKind};
    let signed = [-2, -1, 0, 1, 1, 0, -1, -2, 0, 0, 0, 0, 1, 1, 1, 1];
    let value = LoadImm::per_element_signed(signed).unwrap();
    // Element 0 is -2 (binary 10): bit 16 set, bit 0 clear; element 1 is -1 (11): bits 17, 1.
    assert_eq!(value & 0x0003_0003, 0x0003_0002);
    let l = LoadImm {
        kind: LoadImmKind::PerElementSigned,
        value,
        ..LoadImm::word(baregpu_qpu_asm::isa::Reg::ACC0, 0)
    };
    assert_eq!((0..16).map(|i| l.element(i) as i8).collect::<Vec<_>>(), signed);
    assert_eq!(LoadImm::per_element_signed([2; 16]), None);
    let unsigned = [3, 2, 1, 0, 0, 1, 2, 3, 3, 3, 3, 3, 0, 0, 0, 0];
    let l = LoadImm {
        kind: LoadImmKind::PerElementUnsigned,
        value: LoadImm::per_element_unsigned(unsigned).unwrap(),
        ..l
    };
    assert_eq!((0..16).map(|i| l.element(i) as u8).collect::<Vec<_>>(), unsigned);
    assert_eq!(LoadImm::per_element_unsigned([4; 16]), None);
    // The text form carries the mode: `ldi.pes` is mode 1, `ldi.peu` mode 3 (bits 59:57).
    let word = Instruction::LoadImm(l).encode().unwrap();
    assert_eq!(word >> 57 & 7, 3);
    assert_eq!(Instruction::decode(word).unwrap().signal_bits(), 14);
}
