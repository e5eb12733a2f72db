//! Shared fixtures: memory layout, dispatch state, a stepping loop, and the hand-derived CF
//! "harness" program that runs one ALU clause and stores R2.xyzw through RAT 0.
//!
//! Every instruction word in these tests is written out in hex with its derivation from the bit
//! layouts (Mesa sb_bc_fmt_def.inc, LLVM R600InstrFormats.td; field value << first bit); nothing
//! here encodes instructions from field values.
#![allow(dead_code)]

pub use evergreen_model::shader::{
    Chip, Dispatch, DispatchState, FlatMemory, Limits, RatRegs, ShaderError, ShaderErrorKind,
    Stats, StepResult,
};

/// Program address (SQ_PGM_START_LS = 0x10).
pub const PROG: u64 = 0x1000;
/// Constant buffer 0 (SQ_ALU_CONST_CACHE_LS_0 = 0x40) and 1 (= 0x50).
pub const CB0: u64 = 0x4000;
/// Constant buffer 1.
pub const CB1: u64 = 0x5000;
/// RAT 0 surface.
pub const RAT0: u64 = 0x8000;
/// Input buffers.
pub const BUF_A: u64 = 0x1_0000;
/// Second input buffer.
pub const BUF_B: u64 = 0x2_0000;

/// One 64-bit slot: a CF instruction, an ALU instruction, two literal dwords, half a fetch.
pub type Slot = [u32; 2];

/// Both chips, for tests whose words are the same on each.
pub const CHIPS: [Chip; 2] = [Chip::Evergreen, Chip::Cayman];

/// 1 MiB of zeroed GPU memory at address 0.
pub fn mem() -> FlatMemory {
    FlatMemory::new(0, 1 << 20)
}

/// CB_COLORn registers of a linear R32_UINT buffer RAT of `elements` dwords at `base`
/// (as Mesa programs one: INFO 0x04104134 = RAT 1<<26 | BLEND_BYPASS 1<<20 | NUMBER_TYPE UINT
/// 4<<12 | ARRAY_MODE LINEAR_ALIGNED 1<<8 | FORMAT COLOR_32 0xD<<2; ATTRIB
/// NON_DISP_TILING_ORDER 1<<4; DIM WIDTH_MAX = elements - 1).
pub fn rat_u32(base: u64, elements: u32) -> RatRegs {
    assert!((1..=0x1_0000).contains(&elements));
    RatRegs {
        base: (base >> 8) as u32,
        pitch: 0,
        slice: 0,
        view: 0,
        info: 0x0410_4134,
        attrib: 0x10,
        dim: elements - 1,
    }
}

/// An 8-dword buffer resource (Mesa evergreen_state.c layout): W0 base 31:0, W1 bytes - 1, W2
/// STRIDE 18:8 | DATA_FORMAT 25:20 | NUM_FORMAT_ALL 27:26 (1 = INT), W3 DST_SEL X/Y/Z/W = 0/1/2/3
/// at 3/6/9/12 (= 0x3440), W7 TYPE 3 << 30 (valid buffer). `w2` and `w3` are given in hex by the
/// caller.
pub fn resource(base: u64, bytes: u32, w2: u32, w3: u32) -> [u32; 8] {
    [base as u32, bytes - 1, w2, w3, 0, 0, 0, 0xC000_0000]
}

/// Identity DST_SEL in resource word 3: X 0<<3 | Y 1<<6 (0x40) | Z 2<<9 (0x400) | W 3<<12
/// (0x3000).
pub const RES_W3_XYZW: u32 = 0x3440;

/// Dispatch state for `chip`: program at [`PROG`], NUM_GPRS 8, STACK_SIZE 2
/// (SQ_PGM_RESOURCES = 8 | 2 << 8), SPI_COMPUTE_INPUT_CNTL 7 (thread and group ids), one group
/// of one thread, constant buffers 0/1 at [`CB0`]/[`CB1`] with 32 constants each (size 2 x 256
/// bytes), RAT 0 at [`RAT0`] with 64 dwords.
pub fn state(chip: Chip) -> DispatchState {
    let mut s = DispatchState::new(chip);
    s.pgm_start = (PROG >> 8) as u32;
    s.pgm_resources = 8 | 2 << 8;
    s.input_cntl = 7;
    s.num_threads = [1, 1, 1];
    s.groups = [1, 1, 1];
    s.const_cache[0] = (CB0 >> 8) as u32;
    s.const_size[0] = 2;
    s.const_cache[1] = (CB1 >> 8) as u32;
    s.const_size[1] = 2;
    s.rats[0] = rat_u32(RAT0, 64);
    s
}

/// Run a dispatch to completion in steps of 1000 units.
pub fn run(state: DispatchState, m: &mut FlatMemory) -> Result<Stats, ShaderError> {
    let mut d = Dispatch::new(state, Limits::default())?;
    loop {
        match d.step(m, 1000) {
            StepResult::Running => {}
            StepResult::Done => return Ok(d.stats()),
            StepResult::Error(e) => return Err(e),
        }
    }
}

/// Write words at an address.
pub fn put(m: &mut FlatMemory, at: u64, words: &[u32]) {
    m.write_words(at, words).unwrap();
}

/// Read `n` words.
pub fn get(m: &mut FlatMemory, at: u64, n: usize) -> Vec<u32> {
    m.read_words(at, n).unwrap()
}

/// Store four floats as constant `k` of the buffer at `cb`.
pub fn const_f(m: &mut FlatMemory, cb: u64, k: u64, v: [f32; 4]) {
    put(m, cb + 16 * k, &v.map(f32::to_bits));
}

/// Store four words as constant `k` of the buffer at `cb`.
pub fn const_u(m: &mut FlatMemory, cb: u64, k: u64, v: [u32; 4]) {
    put(m, cb + 16 * k, &v);
}

/// The Evergreen harness CF program (4 CF slots, the ALU clause follows at CF ADDR 4):
/// - CF0 ALU clause. CF_ALU_WORD0 = ADDR 4 | KCACHE_BANK0 0 << 22 | KCACHE_BANK1 1 << 26
///   (0x0400_0000) | KCACHE_MODE0 LOCK_2 2 << 30 (0x8000_0000) = 0x8400_0004.
///   CF_ALU_WORD1 = KCACHE_MODE1 LOCK_1 1 | KCACHE_ADDR0 0 << 2 | KCACHE_ADDR1 1 << 10 (0x400)
///   | COUNT 15 << 18 (0x3C_0000: 16 slots) | CF_INST ALU 8 << 26 (0x2000_0000) | BARRIER
///   1 << 31 = 0xA03C_0401. So KC0[0..31] = CB0 constants 0-31, KC1[0..15] = CB1 16-31.
/// - CF1 MEM_RAT_CACHELESS STORE_RAW. WORD0 = RAT_ID 0 | RAT_INST 2 << 4 (0x20) | TYPE
///   WRITE_IND 1 << 13 (0x2000) | RW_GPR 2 << 15 (0x1_0000) | INDEX_GPR 0 << 23 = 0x0001_2020.
///   WORD1 = COMP_MASK 0xF << 12 (0xF000) | END_OF_PROGRAM 1 << 21 (0x20_0000) | CF_INST 0x57
///   << 22 (0x15C0_0000) | BARRIER 1 << 31 = 0x95E0_F000.
pub const EG_HARNESS: [Slot; 2] = [[0x8400_0004, 0xA03C_0401], [0x0001_2020, 0x95E0_F000]];

/// The Cayman harness: CF0 as on Evergreen; CF1 STORE_DWORD (RAT_INST 20 << 4 = 0x140:
/// WORD0 = 0x0001_2140) without END_OF_PROGRAM (WORD1 = 0x95C0_F000); CF2 CF_END: WORD0 0,
/// WORD1 = CF_INST 0x20 << 22 (0x0800_0000) | BARRIER = 0x8800_0000.
pub const CM_HARNESS: [Slot; 3] =
    [[0x8400_0004, 0xA03C_0401], [0x0001_2140, 0x95C0_F000], [0, 0x8800_0000]];

/// An ALU group holding one NOP: WORD0 = LAST 1 << 31; WORD1 = ALU_INST NOP 0x1A << 7 (0xD00),
/// WRITE_MASK 0.
pub const NOP_GROUP: Slot = [0x8000_0000, 0x0000_0D00];

/// Load the harness for `chip` with `alu` (at most 16 slots) as the clause, padded with NOP
/// groups to the 16 slots CF0 declares.
pub fn load_harness(m: &mut FlatMemory, chip: Chip, alu: &[Slot]) {
    assert!(alu.len() <= 16);
    let cf: &[Slot] = match chip {
        Chip::Evergreen => &EG_HARNESS,
        Chip::Cayman => &CM_HARNESS,
    };
    let mut clause = alu.to_vec();
    clause.resize(16, NOP_GROUP);
    load_program(m, cf, 4, &clause);
}

/// Run the harness with `alu` on one thread; R2.xyzw as stored to RAT 0 dwords 0-3.
pub fn run_alu_with(
    m: &mut FlatMemory,
    chip: Chip,
    alu: &[Slot],
) -> Result<[u32; 4], ShaderErrorKind> {
    load_harness(m, chip, alu);
    run(state(chip), m).map_err(|e| e.kind)?;
    let r = get(m, RAT0, 4);
    Ok([r[0], r[1], r[2], r[3]])
}

/// [`run_alu_with`] on fresh memory holding the standard constants (see [`std_constants`]).
pub fn run_alu(chip: Chip, alu: &[Slot]) -> Result<[u32; 4], ShaderErrorKind> {
    let mut m = mem();
    std_constants(&mut m);
    run_alu_with(&mut m, chip, alu)
}

/// Constants the ALU tests read:
/// - KC0[0] = (2.0, -3.0, 0.5, 8.0) floats;
/// - KC0[1] = (7, 0xFFFF_FFFE (-2), 0x8000_0000, 100) integers;
/// - KC0[2] = (0x1234_5678, 0xABCD_EF01, 4, 12);
/// - KC1[0] = CB1 constant 16 = (16.0, 17.0, 18.0, 19.0); CB1 constant 0 (not locked) = 99.0.
pub fn std_constants(m: &mut FlatMemory) {
    const_f(m, CB0, 0, [2.0, -3.0, 0.5, 8.0]);
    const_u(m, CB0, 1, [7, 0xFFFF_FFFE, 0x8000_0000, 100]);
    const_u(m, CB0, 2, [0x1234_5678, 0xABCD_EF01, 4, 12]);
    const_f(m, CB1, 16, [16.0, 17.0, 18.0, 19.0]);
    const_f(m, CB1, 0, [99.0; 4]);
}

/// f32 bits.
pub fn fb(x: f32) -> u32 {
    x.to_bits()
}

/// Write a CF program at [`PROG`] and its clauses from CF index `clauses_at` (64-bit units).
pub fn load_program(m: &mut FlatMemory, cf: &[Slot], clauses_at: u64, clauses: &[Slot]) {
    assert!(cf.len() as u64 <= clauses_at, "CF program overlaps its clauses");
    put(m, PROG, cf.as_flattened());
    put(m, PROG + clauses_at * 8, clauses.as_flattened());
}

/// The end of a program: a RAT 0 store of R2 at dword R0.x with COMP_MASK x, then the end.
/// Evergreen: MEM_RAT_CACHELESS STORE_RAW, WORD0 = 0x0001_2020 (see [`EG_HARNESS`]), WORD1 =
/// COMP_MASK 1<<12 (0x1000) | END_OF_PROGRAM (0x20_0000) | 0x57<<22 (0x15C0_0000) | BARRIER =
/// 0x95E0_1000. Cayman: STORE_DWORD 0x0001_2140 / 0x95C0_1000 (no END_OF_PROGRAM), then CF_END
/// 0 / 0x8800_0000.
pub fn store_r2x(chip: Chip) -> &'static [Slot] {
    match chip {
        Chip::Evergreen => &[[0x0001_2020, 0x95E0_1000]],
        Chip::Cayman => &[[0x0001_2140, 0x95C0_1000], [0, 0x8800_0000]],
    }
}

/// As [`store_r2x`] with COMP_MASK xyzw (0xF << 12 = 0xF000).
pub fn store_r2(chip: Chip) -> &'static [Slot] {
    match chip {
        Chip::Evergreen => &[[0x0001_2020, 0x95E0_F000]],
        Chip::Cayman => &[[0x0001_2140, 0x95C0_F000], [0, 0x8800_0000]],
    }
}

/// `cf` followed by `tail`.
pub fn cat(cf: &[Slot], tail: &[Slot]) -> Vec<Slot> {
    [cf, tail].concat()
}

// --- kernels laid out as LLVM R600 / clover do (shared by kernels.rs and the CP tests) ---

/// The global pool: 256 KiB at [`BUF_A`].
pub const POOL: u64 = BUF_A;
pub const POOL_BYTES: u32 = 0x4_0000;
/// Argument buffers (byte offsets in the pool).
pub const A: u32 = 0x0000;
pub const B: u32 = 0x2000;
pub const C: u32 = 0x4000;
pub const R: u32 = 0x6000;

/// ALU clause computing the addresses (kcache set 0 = CB0 constants 0-15):
/// R2.x = gid; R2.y = gid * 4; R2.z = A + R2.y; R2.w = B + R2.y; R3.x = (`dst` + R2.y) >> 2.
/// `dst_word` is g3's x instruction (ADD_INT R3.x = PV.y + KC0[2].w (C) or KC0[2].z (B)).
pub fn address_clause(dst_word: Slot) -> [Slot; 8] {
    [
        // g1 x MULADD_UINT24 R2.x = R1.x * KC0[1].z + R0.x: W0 = SRC0 1 | SRC1 129<<13
        // (0x10_2000) | SRC1_CHAN 2<<23 (0x100_0000) | LAST; W1_OP3 = SRC2 0 | 0x10<<13
        // (0x2_0000) | DST_GPR 2<<21 (0x40_0000).
        [0x8110_2001, 0x0042_0000],
        // g2 y LSHL_INT R2.y = PV.x << literal.x (2): W0 = 254 (0xFE) | 253<<13 (0x1F_A000) |
        // LAST; W1 = 0x17<<7 (0xB80) | 0x10 | 0x40_0000 | chan y (0x2000_0000).
        [0x801F_A0FE, 0x2040_0B90],
        [2, 0],
        // g3 x: `dst_word`.
        dst_word,
        // g3 z ADD_INT R2.z = PV.y + KC0[2].y: W0 = 0xFE | 1<<10 (0x400) | 130<<13 (0x10_4000) |
        // 1<<23 (0x80_0000); W1 = 0x34<<7 (0x1A00) | 0x10 | 0x40_0000 | chan z (0x4000_0000).
        [0x0090_44FE, 0x4040_1A10],
        // g3 w ADD_INT R2.w = PV.y + KC0[2].z | LAST: W0 = 0xFE | 0x400 | 0x10_4000 | 2<<23
        // (0x100_0000) | LAST; W1 = 0x1A10 | 0x40_0000 | chan w (0x6000_0000).
        [0x8110_44FE, 0x6040_1A10],
        // g4 x LSHR_INT R3.x = PV.x >> literal.x (2): W0 = 0xFE | 253<<13 | LAST; W1 = 0x16<<7
        // (0xB00) | 0x10 | DST_GPR 3<<21 (0x60_0000).
        [0x801F_A0FE, 0x0060_0B10],
        [2, 0],
    ]
}

/// g3 x ADD_INT R3.x = PV.y + KC0[2].w (third argument): W0 = 0xFE | 1<<10 | 130<<13 | 3<<23
/// (0x180_0000); W1 = 0x1A00 | 0x10 | 0x60_0000.
pub const DST_ARG2: Slot = [0x0190_44FE, 0x0060_1A10];
/// g3 x ADD_INT R3.x = PV.y + KC0[2].z (second argument): SRC1_CHAN 2<<23 (0x100_0000).
pub const DST_ARG1: Slot = [0x0110_44FE, 0x0060_1A10];

/// Two fetches from resource 1 (BUFFER_ID 1<<8 = 0x100, FETCH_TYPE 0x40, SRC_GPR 2<<16
/// (0x2_0000)): R4.x = pool[R2.z] (SRC_SEL_X 2<<24 = 0x200_0000; DST_SEL x from X, y/z/w 7 =
/// keep: W1 = 4 | 7<<12 (0x7000) | 7<<15 (0x3_8000) | 7<<18 (0x1C_0000) | FMT_32 0xD<<22
/// (0x340_0000) | INT 1<<28 = 0x135F_F004) and R4.y = pool[R2.w] (SRC_SEL_X 3<<24; W1 = 4 |
/// SEL_X 7<<9 (0xE00) | SEL_Y 0 | 0x3_8000 | 0x1C_0000 | 0x340_0000 | 0x1000_0000 =
/// 0x135F_8E04). Evergreen adds MEGA_FETCH_COUNT 3<<26 (0x0C00_0000) and MEGA_FETCH 1<<19.
pub fn fetch_xy(chip: Chip) -> [Slot; 4] {
    match chip {
        Chip::Evergreen => [
            [0x0E02_0140, 0x135F_F004],
            [0x0008_0000, 0],
            [0x0F02_0140, 0x135F_8E04],
            [0x0008_0000, 0],
        ],
        Chip::Cayman => [[0x0202_0140, 0x135F_F004], [0, 0], [0x0302_0140, 0x135F_8E04], [0, 0]],
    }
}

/// CF program shared by vector add and SAXPY; `cf2` is the CF word pair of the compute clause.
/// - CF0 ALU @6, 8 slots, kcache set 0 = bank 0 LOCK_1 line 0: WORD0 = 6 | KCACHE_MODE0 1<<30
///   (0x4000_0000); WORD1 = COUNT 7<<18 (0x1C_0000) | ALU 0x2000_0000 | BARRIER.
/// - CF1 fetch clause @14 (0xE), 2 fetches: Evergreen VC 0x8080_0400, Cayman TC 0x8040_0400.
/// - CF2 `cf2` (clause @18).
/// - CF3 RAT 0 store of R4.x at dword R3.x: WORD0 = RW_GPR 4<<15 (0x2_0000) | INDEX_GPR 3<<23
///   (0x180_0000) | TYPE 0x2000 | STORE_RAW 0x20 (Evergreen, WORD1 0x95E0_1000 with
///   END_OF_PROGRAM) or STORE_DWORD 0x140 (Cayman, WORD1 0x95C0_1000, then CF_END).
pub fn two_input_program(m: &mut FlatMemory, chip: Chip, dst_word: Slot, cf2: Slot, compute: Slot) {
    let cf: Vec<Slot> = match chip {
        Chip::Evergreen => {
            vec![
                [0x4000_0006, 0xA01C_0000],
                [0x0000_000E, 0x8080_0400],
                cf2,
                [0x0182_2020, 0x95E0_1000],
            ]
        }
        Chip::Cayman => vec![
            [0x4000_0006, 0xA01C_0000],
            [0x0000_000E, 0x8040_0400],
            cf2,
            [0x0182_2140, 0x95C0_1000],
            [0, 0x8800_0000],
        ],
    };
    let mut clauses = address_clause(dst_word).to_vec();
    clauses.extend(fetch_xy(chip));
    clauses.push(compute);
    load_program(m, &cf, 6, &clauses);
}
