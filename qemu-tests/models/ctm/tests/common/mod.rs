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
        ],
    )
    .unwrap();
    [0, 4, 8, 12].map(|o| m.read_f32(OUT0 + o).unwrap())
}
