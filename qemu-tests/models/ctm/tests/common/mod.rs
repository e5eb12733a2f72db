//! Shared hand-encoding helpers. Every field is placed at the bit position given by the
//! US_* register tables (amd-r5xx-acceleration §11.10) that CTM guide §3.2 names; command
//! words are the Table 3 opcodes (CTM guide §2.2).
#![allow(dead_code)]

use ctm_model::{CtmEngine, CtmError, FlatMemory};

pub const INST_BASE: u32 = 0x1_0000; // 2K-aligned
pub const CONST_BASE: u32 = 0x2_0000;
pub const ICONST_BASE: u32 = 0x2_0800;
pub const BCONST_BASE: u32 = 0x2_1000;
pub const IN0: u32 = 0x4_0000;
pub const IN1: u32 = 0x5_0000;
pub const OUT0: u32 = 0x8_0000;
pub const COND: u32 = 0x9_0000;
pub const PERF: u32 = 0xA_0000;

/// Format parameter (§2.2.2): pitch bits 12:2, tiling 17:16, data format 26:24.
pub fn fmt(pitch: u32, tiling: u32, format: u32) -> u32 {
    pitch | (tiling << 16) | (format << 24)
}
pub const F32X1: u32 = 2;
pub const F32X2: u32 = 3;
pub const F32X4: u32 = 4;
pub const U8X4: u32 = 1;

/// Source-address word (US_ALU_*_ADDR): ADDRk at 10k, CONSTk at 10k+8.
pub const CONST_ADDRS_012: u32 = 0x100 | (1 << 10) | (1 << 18) | (2 << 20) | (1 << 28);
/// RGB input A = src0.rgb (SEL_A 1:0 = 0; swizzles 4:2 = R, 7:5 = G, 10:8 = B).
pub const RGB_A_SRC0: u32 = (1 << 5) | (2 << 8);
/// RGB input B = src1.rgb (SEL_B 14:13 = 1; swizzles 17:15, 20:18, 23:21).
pub const RGB_B_SRC1: u32 = (1 << 13) | (1 << 18) | (2 << 21);
/// RGB input C = src2.rgb (RGBA_INST SEL_C 13:12 = 2; swizzles 16:14, 19:17, 22:20).
pub const RGB_C_SRC2: u32 = (2 << 12) | (1 << 17) | (2 << 20);
/// Alpha input A = src0.a (SEL_A 13:12 = 0, SWIZ_A 16:14 = 3).
pub const A_A_SRC0: u32 = 3 << 14;
/// Alpha input B = src1.a (SEL_B 20:19 = 1, SWIZ_B 23:21 = 3).
pub const A_B_SRC1: u32 = (1 << 19) | (3 << 21);
/// Alpha input C = src2.a (RGBA_INST ALPHA_SEL_C 26:25 = 2, ALPHA_SWIZ_C 29:27 = 3).
pub const A_C_SRC2: u32 = (2 << 25) | (3 << 27);

/// CMN_INST: TYPE 1:0 (0 ALU, 1 OUT, 2 FC, 3 TEX), LAST bit 8, RGB_WMASK 13:11, ALPHA_WMASK
/// 14, RGB_OMASK 17:15, ALPHA_OMASK 18.
pub const OUT_ALL_LAST: u32 = 1 | (1 << 8) | (7 << 15) | (1 << 18);
pub const WRITE_RGBA: u32 = (7 << 11) | (1 << 14);

/// out0 = c0 * c1 + c2 (OP MAD, all channels), then the program ends (LAST).
pub const CONST_OUT: [u32; 6] = [
    OUT_ALL_LAST,
    CONST_ADDRS_012,
    CONST_ADDRS_012,
    RGB_A_SRC0 | RGB_B_SRC1,
    A_A_SRC0 | A_B_SRC1,
    RGB_C_SRC2 | A_C_SRC2,
];

/// Command words.
pub fn set_inst_fmt() -> Vec<u32> {
    vec![0xC001_0A00, INST_BASE, fmt(0, 0, F32X1)]
}
pub fn set_constf(format: u32) -> Vec<u32> {
    vec![0xC001_0E00, CONST_BASE, fmt(256, 0, format)]
}
pub fn set_out(idx: u32, base: u32, f: u32, h: u32) -> Vec<u32> {
    vec![0xC003_0C00, idx, base, f, h]
}
pub fn set_inp(idx: u32, base: u32, f: u32, h: u32) -> Vec<u32> {
    vec![0xC003_0B00, idx, base, f, h]
}
pub fn set_domain(i0: u32, j0: u32, i1: u32, j1: u32) -> Vec<u32> {
    vec![0xC003_0700, i0, j0, i1, j1]
}
pub const START: [u32; 2] = [0xC000_0800, 0];
/// wait_for_idle (§2.2.1): needed between start_program and any non-pipelined command.
pub const WAIT_FOR_IDLE: [u32; 2] = [0xC000_0900, 0];
/// The §2.1.4 cache commands (Table 3).
pub const INV_INST: [u32; 2] = [0xC000_1100, 0];
pub const INV_CONSTF: [u32; 2] = [0xC000_1200, 0];
pub const INV_CONSTI: [u32; 2] = [0xC000_1300, 0];
pub const INV_CONSTB: [u32; 2] = [0xC000_1400, 0];
pub const INV_COND_OUT: [u32; 2] = [0xC000_1500, 0];
pub const INV_INP: [u32; 2] = [0xC000_1600, 0];
pub const FLUSH_OUT: [u32; 2] = [0xC000_1700, 0];
pub const FLUSH_COND_OUT: [u32; 2] = [0xC000_1800, 0];

pub fn load_program(mem: &mut FlatMemory, prog: &[[u32; 6]]) {
    let words: Vec<u32> = prog.iter().flatten().copied().collect();
    mem.write_words(INST_BASE, &words).unwrap();
}

pub fn run(mem: &mut FlatMemory, cmds: &[Vec<u32>]) -> Result<CtmEngine, CtmError> {
    let mut e = CtmEngine::new();
    let words: Vec<u32> = cmds.iter().flatten().copied().collect();
    e.execute(&words, mem)?;
    Ok(e)
}

pub fn mem() -> FlatMemory {
    FlatMemory::new(0, 0x10_0000)
}

/// One OUTPUT instruction over constants c0-c2 (FLOAT32_4), result to output 0 (FLOAT32_4)
/// at element (0, 0).
pub fn run_alu(
    consts: [[f32; 4]; 3],
    cmn_extra: u32,
    rgb_inst: u32,
    alpha_inst: u32,
    rgba_inst: u32,
) -> [f32; 4] {
    let mut m = mem();
    for (k, c) in consts.iter().enumerate() {
        for (ch, v) in c.iter().enumerate() {
            m.write_f32(CONST_BASE + 16 * k as u32 + 4 * ch as u32, *v).unwrap();
        }
    }
    load_program(
        &mut m,
        &[[
            OUT_ALL_LAST | cmn_extra,
            CONST_ADDRS_012,
            CONST_ADDRS_012,
            rgb_inst,
            alpha_inst,
            rgba_inst,
        ]],
    );
    run(
        &mut m,
        &[
            set_inst_fmt(),
            set_constf(F32X4),
            set_out(0, OUT0, fmt(64, 0, F32X4), 1),
            START.to_vec(),
            FLUSH_OUT.to_vec(),
        ],
    )
    .unwrap();
    [0, 4, 8, 12].map(|o| m.read_f32(OUT0 + o).unwrap())
}

/// FC words (§3.5.3; US_FC_INST in word 2, US_FC_ADDR in word 3): OP 2:0, B_ELSE 4,
/// JUMP_ANY 5, A_OP 7:6, JUMP_FUNC 15:8, B_POP_CNT 20:16, B_OP0 25:24, B_OP1 27:26;
/// BOOL_ADDR 4:0, INT_ADDR 12:8, JUMP_ADDR 24:16, JUMP_GLOBAL 31.
#[allow(clippy::too_many_arguments)] // one argument per documented FC field
pub fn fc(
    cmn_extra: u32,
    op: u32,
    func: u32,
    any: u32,
    a_op: u32,
    b0: u32,
    b1: u32,
    pop: u32,
    b_else: u32,
    addr: u32,
) -> [u32; 6] {
    let inst = op
        | (b_else << 4)
        | (any << 5)
        | (a_op << 6)
        | (func << 8)
        | (pop << 16)
        | (b0 << 24)
        | (b1 << 26);
    [2 | cmn_extra, 0, inst, addr << 16, 0, 0]
}

/// ALU: r3.rgb = r3.rgb * 1 + src2 (src2 = RGB_ADDR ADDR2), wmask RGB, dst r3.
pub fn add_r3(addr2_word: u32) -> [u32; 6] {
    let b_one = (1 << 13) | (6 << 15) | (6 << 18) | (6 << 21);
    let addr = 3 | addr2_word;
    [7 << 11, addr, 3, RGB_A_SRC0 | b_one, 0, RGB_C_SRC2 | (3 << 4)]
}
/// OUTPUT r3 to output 0 (FLOAT32_4), LAST.
pub fn out_r3() -> [u32; 6] {
    [
        OUT_ALL_LAST,
        3,
        3,
        RGB_A_SRC0 | (1 << 13) | (6 << 15) | (6 << 18) | (6 << 21),
        A_A_SRC0 | (6 << 21),
        (2 << 12) | (4 << 14) | (4 << 17) | (4 << 20) | (4 << 27),
    ]
}

/// TEX: dst r<dst> = input <id> at r<src>.(r, g), unscaled (§3.4; US_TEX_INST word 1: TEX_ID
/// 19:16, INST 24:22 (1 = LD), UNSCALED 27; US_TEX_ADDR word 2: SRC 6:0, S 9:8, T 11:10 = G,
/// DST 22:16, DST swizzles R G B A = 0 1 2 3 at 25:24 27:26 29:28 31:30).
pub fn tex(id: u32, src: u32, dst: u32) -> [u32; 6] {
    [
        3 | WRITE_RGBA,
        (id << 16) | (1 << 22) | (1 << 27),
        src | (1 << 10) | (dst << 16) | (1 << 26) | (2 << 28) | (3 << 30),
        0,
        0,
        0,
    ]
}
