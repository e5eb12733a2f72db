//! Vertex fetches from buffer resources (Evergreen VC and Cayman TC clauses, the two VTX_WORD0
//! layouts) and RAT stores/atomics, with their bounds and state errors.
//!
//! VTX_WORD0 (A4/A8) = VC_INST 4:0 | FETCH_TYPE 6:5 (NO_INDEX_OFFSET 2<<5 = 0x40) | BUFFER_ID
//! 15:8 | SRC_GPR 22:16 (R3: 0x3_0000) | SRC_SEL_X 25:24 | Evergreen MEGA_FETCH_COUNT 31:26.
//! VTX_WORD1 = DST_GPR 6:0 (R2) | DST_SEL_X/Y/Z/W 11:9/14:12/17:15/20:18 | USE_CONST_FIELDS 21 |
//! DATA_FORMAT 27:22 | NUM_FORMAT_ALL 29:28. VTX_WORD2 = OFFSET 15:0 | Evergreen MEGA_FETCH 19.
mod common;
use common::*;

/// Buffer resources (words 2 and 3 in hex; see `common::resource`):
/// 0: [`BUF_A`] 64 dwords, W2 = STRIDE 4<<8 (0x400) | FMT_32 0xD<<20 (0xD0_0000) | NUM_FORMAT
///    INT 1<<26 (0x400_0000) = 0x04D0_0400.
/// 1: [`BUF_B`] 256 bytes, W2 = STRIDE 16<<8 (0x1000) | FMT_32_32_32_32_FLOAT 0x23<<20
///    (0x230_0000) = 0x0230_1000.
/// 2: [`BUF_A`] W2 = STRIDE 8<<8 (0x800) | FMT_32_32 0x1D<<20 (0x1D0_0000) | INT = 0x05D0_0800.
/// 3: [`BUF_A`] W2 = STRIDE 1<<8 (0x100) | FMT_32 | INT = 0x04D0_0100 (byte index, LLVM style).
fn fetch_state(chip: Chip) -> DispatchState {
    let mut s = state(chip);
    s.resources = vec![
        resource(BUF_A, 256, 0x04D0_0400, RES_W3_XYZW),
        resource(BUF_B, 256, 0x0230_1000, RES_W3_XYZW),
        resource(BUF_A, 256, 0x05D0_0800, RES_W3_XYZW),
        resource(BUF_A, 256, 0x04D0_0100, RES_W3_XYZW),
    ];
    s
}

/// Memory with A[i] = 100 + i and B[i] = 0.5 * i.
fn fetch_mem() -> FlatMemory {
    let mut m = mem();
    put(&mut m, BUF_A, &(0..64).map(|i| 100 + i).collect::<Vec<u32>>());
    put(&mut m, BUF_B, &(0..64).map(|i| fb(0.5 * i as f32)).collect::<Vec<u32>>());
    m
}

/// R3.x = `index`; fetch clause (`eg` or `cm` fetch words, one or two fetches) into R2; store
/// R2.xyzw to RAT 0 dwords 0-3.
fn run_fetch(
    chip: Chip,
    index: u32,
    fetches: &[u32],
    s: DispatchState,
) -> Result<(Vec<u32>, Stats), ShaderErrorKind> {
    let n = fetches.len() / 4;
    // CF0 ALU @4, 2 slots (0xA004_0000). CF1 fetch clause @6: Evergreen VC 0x02<<22
    // (0x0080_0000), Cayman TC 0x01<<22 (0x0040_0000), | COUNT (n-1)<<10 | BARRIER.
    let fetch_cf = match (chip, n) {
        (Chip::Evergreen, 1) => 0x8080_0000,
        (Chip::Evergreen, _) => 0x8080_0400,
        (Chip::Cayman, 1) => 0x8040_0000,
        (Chip::Cayman, _) => 0x8040_0400,
    };
    let cf = cat(&[[0x0000_0004, 0xA004_0000], [0x0000_0006, fetch_cf]], store_r2(chip));
    // @4 MOV R3.x = literal.x: W0 = 253 | LAST; W1 = 0xC80 | 0x10 | DST_GPR 3<<21 (0x60_0000).
    let mut clauses = vec![[0x8000_00FD, 0x0060_0C90], [index, 0]];
    clauses.extend(fetches.chunks_exact(2).map(|c| [c[0], c[1]]));
    let mut m = fetch_mem();
    load_program(&mut m, &cf, 4, &clauses);
    let stats = run(s, &mut m).map_err(|e| e.kind)?;
    Ok((get(&mut m, RAT0, 4), stats))
}

/// Fetch words for `chip` from the two layouts.
fn pick(chip: Chip, eg: [u32; 4], cm: [u32; 4]) -> [u32; 4] {
    if chip == Chip::Evergreen { eg } else { cm }
}

/// FMT_32 from buffer 0 with identity DST_SEL: W0 = 0x40 | BUFFER_ID 0 | 0x3_0000 (Evergreen
/// MEGA_FETCH_COUNT 3<<26 = 0x0C00_0000); W1 = 2 | SEL_Y 1<<12 (0x1000) | SEL_Z 2<<15
/// (0x1_0000) | SEL_W 3<<18 (0xC_0000) | FMT 0xD<<22 (0x340_0000) | INT 1<<28 = 0x134D_1002;
/// W2 = Evergreen MEGA_FETCH 1<<19 (0x8_0000).
fn fetch32(chip: Chip) -> [u32; 4] {
    pick(chip, [0x0C03_0040, 0x134D_1002, 0x0008_0000, 0], [0x0003_0040, 0x134D_1002, 0, 0])
}

#[test]
fn fetch_32_bit_with_format_defaults() {
    for chip in CHIPS {
        // Index 3, stride 4: A[3]; y, z read 0 and w 1 for a one-component format.
        let (r, stats) = run_fetch(chip, 3, &fetch32(chip), fetch_state(chip)).unwrap();
        assert_eq!(r, [103, 0, 0, 1], "{chip:?}");
        assert_eq!((stats.fetches, stats.fetches_out_of_range), (1, 0));
    }
}

#[test]
fn fetch_vec4_float_with_offset_and_swizzle() {
    // Buffer 1: W0 = 0x40 | 1<<8 (0x100) | 0x3_0000 (Evergreen MFC 15<<26 = 0x3C00_0000);
    // W1 = 2 | SEL_X 3<<9 (0x600) | SEL_Y 2<<12 (0x2000) | SEL_Z 1<<15 (0x8000) | SEL_W 0 |
    // FMT 0x23<<22 (0x08C0_0000) = 0x08C0_A602; W2 = OFFSET 16 (| MEGA_FETCH 0x8_0000).
    for chip in CHIPS {
        let f = pick(
            chip,
            [0x3C03_0140, 0x08C0_A602, 0x0008_0010, 0],
            [0x0003_0140, 0x08C0_A602, 0x10, 0],
        );
        // Index 1, stride 16, offset 16: bytes 32..48 = B[8..12] = 4.0, 4.5, 5.0, 5.5, W..X.
        let (r, _) = run_fetch(chip, 1, &f, fetch_state(chip)).unwrap();
        assert_eq!(r, [fb(5.5), fb(5.0), fb(4.5), fb(4.0)], "{chip:?}");
    }
}

#[test]
fn fetch_format_from_the_resource() {
    // Buffer 2 with USE_CONST_FIELDS (1<<21) and DATA_FORMAT 0 in the instruction: the
    // resource's FMT_32_32 (stride 8) applies. W0 = 0x40 | 2<<8 (0x200) | 0x3_0000 (Evergreen
    // MFC 7<<26 = 0x1C00_0000); W1 = 2 | 0x1000 | 0x1_0000 | 0xC_0000 | 0x20_0000 = 0x002D_1002.
    for chip in CHIPS {
        let f = pick(
            chip,
            [0x1C03_0240, 0x002D_1002, 0x0008_0000, 0],
            [0x0003_0240, 0x002D_1002, 0, 0],
        );
        let (r, _) = run_fetch(chip, 2, &f, fetch_state(chip)).unwrap();
        assert_eq!(r, [104, 105, 0, 1], "{chip:?}");
        // Without USE_CONST_FIELDS, DATA_FORMAT 0 is no format the model converts.
        let bad = [f[0], 0x000D_1002, f[2], 0];
        assert_eq!(
            run_fetch(chip, 2, &bad, fetch_state(chip)).map(|r| r.0),
            Err(ShaderErrorKind::UnsupportedFetchFormat { data_format: 0, num_format: 0 })
        );
    }
}

#[test]
fn fetch_out_of_range_reads_zero_and_dst_sel_constants() {
    for chip in CHIPS {
        // Index 64 of a 64-dword buffer: all zero, even w.
        let (r, stats) = run_fetch(chip, 64, &fetch32(chip), fetch_state(chip)).unwrap();
        assert_eq!((r, stats.fetches_out_of_range), (vec![0, 0, 0, 0], 1), "{chip:?}");
        // Two fetches: the first as fetch32; the second FMT_32 with DST_SEL_X 7 (keep) | Y 0 (X)
        // | Z 5 (one) | W 4 (zero): W1 = 2 | 7<<9 (0xE00) | 5<<15 (0x2_8000) | 4<<18
        // (0x10_0000) | 0x340_0000 | 0x1000_0000 = 0x1352_8E02.
        let mut two = fetch32(chip).to_vec();
        two.extend([two[0], 0x1352_8E02, two[2], 0]);
        let (r, _) = run_fetch(chip, 5, &two, fetch_state(chip)).unwrap();
        assert_eq!(r, [105, 105, 1, 0], "{chip:?}");
    }
}

#[test]
fn fetch_byte_indexed_buffer_and_errors() {
    for chip in CHIPS {
        // Buffer 3 (stride 1): W0 = 0x40 | 3<<8 (0x300) | 0x3_0000 (| MFC 0x0C00_0000).
        let f3 = pick(
            chip,
            [0x0C03_0340, 0x134D_1002, 0x0008_0000, 0],
            [0x0003_0340, 0x134D_1002, 0, 0],
        );
        assert_eq!(run_fetch(chip, 8, &f3, fetch_state(chip)).unwrap().0[0], 102, "{chip:?}");
        assert_eq!(
            run_fetch(chip, 2, &f3, fetch_state(chip)).map(|r| r.0),
            Err(ShaderErrorKind::UnalignedFetch { buffer: 3, address: BUF_A + 2 })
        );
        // Buffer 5 is not set (TYPE is not 3); BUFFER_ID 176 (0xB0<<8 = 0xB000) is past the
        // CS block.
        let f5 = pick(
            chip,
            [0x0C03_0540, 0x134D_1002, 0x0008_0000, 0],
            [0x0003_0540, 0x134D_1002, 0, 0],
        );
        assert_eq!(
            run_fetch(chip, 0, &f5, fetch_state(chip)).map(|r| r.0),
            Err(ShaderErrorKind::InvalidResource(5))
        );
        let f176 = pick(
            chip,
            [0x0C03_B040, 0x134D_1002, 0x0008_0000, 0],
            [0x0003_B040, 0x134D_1002, 0, 0],
        );
        assert_eq!(
            run_fetch(chip, 0, &f176, fetch_state(chip)).map(|r| r.0),
            Err(ShaderErrorKind::ResourceOutOfRange(176))
        );
    }
}

/// R2 = (1, 2, 3, 4) from literals, then a RAT 0 store at dword R0.x = 0 with `store` words.
fn run_store(
    store: &[Slot],
    s: DispatchState,
    m: &mut FlatMemory,
) -> Result<Stats, ShaderErrorKind> {
    // CF0 ALU @4, 6 slots: COUNT 5<<18 (0x14_0000) | 0x2000_0000 | BARRIER.
    let cf = cat(&[[0x0000_0004, 0xA014_0000]], store);
    let clauses = [
        // MOV R2.x/y/z/w = literal.x/y/z/w: W0 = 253 | SRC0_CHAN c<<10 (| LAST on w);
        // W1 = 0xC80 | 0x10 | 0x40_0000 | DST_CHAN c<<29.
        [0x0000_00FD, 0x0040_0C90],
        [0x0000_04FD, 0x2040_0C90],
        [0x0000_08FD, 0x4040_0C90],
        [0x8000_0CFD, 0x6040_0C90],
        [1, 2],
        [3, 4],
    ];
    load_program(m, &cf, 4, &clauses);
    run(s, m).map_err(|e| e.kind)
}

#[test]
fn rat_store_comp_mask_and_bounds() {
    for chip in CHIPS {
        // COMP_MASK x and z (5<<12 = 0x5000): Evergreen WORD1 0x95E0_5000 (STORE_RAW, END),
        // Cayman 0x95C0_5000 (STORE_DWORD) then CF_END.
        let store: &[Slot] = match chip {
            Chip::Evergreen => &[[0x0001_2020, 0x95E0_5000]],
            Chip::Cayman => &[[0x0001_2140, 0x95C0_5000], [0, 0x8800_0000]],
        };
        let mut m = mem();
        put(&mut m, RAT0, &[0xEEEE_EEEE; 6]);
        run_store(store, state(chip), &mut m).unwrap();
        assert_eq!(
            get(&mut m, RAT0, 6),
            [1, 0xEEEE_EEEE, 3, 0xEEEE_EEEE, 0xEEEE_EEEE, 0xEEEE_EEEE]
        );

        // All four components into a 2-dword surface (DIM 1): dwords 2 and 3 are dropped.
        let mut m = mem();
        put(&mut m, RAT0, &[0xEEEE_EEEE; 6]);
        let mut s = state(chip);
        s.rats[0] = rat_u32(RAT0, 2);
        let stats = run_store(store_r2(chip), s, &mut m).unwrap();
        assert_eq!(get(&mut m, RAT0, 4), [1, 2, 0xEEEE_EEEE, 0xEEEE_EEEE], "{chip:?}");
        assert_eq!((stats.rat_dwords, stats.rat_dropped), (2, 2));
    }
}

/// STORE_RAW is the Evergreen store, STORE_DWORD the Cayman one (LLVM CaymanInstructions.td
/// `RAT_STORE_DWORD*`): each chip refuses the other's.
#[test]
fn rat_store_opcode_per_chip() {
    let mut m = mem();
    // The Evergreen store words (without END_OF_PROGRAM: 0x95C0_F000) on Cayman, CF_END after.
    let eg_on_cm = [[0x0001_2020, 0x95C0_F000], [0, 0x8800_0000]];
    assert_eq!(
        run_store(&eg_on_cm, state(Chip::Cayman), &mut m),
        Err(ShaderErrorKind::UnsupportedRatInst { inst: 2, chip: Chip::Cayman })
    );
    let cm_on_eg = [[0x0001_2140, 0x95E0_F000]];
    assert_eq!(
        run_store(&cm_on_eg, state(Chip::Evergreen), &mut m),
        Err(ShaderErrorKind::UnsupportedRatInst { inst: 20, chip: Chip::Evergreen })
    );
}

/// MEM_RAT ADD of R0.x (the thread id) to dword R3.x (0) from 64 threads.
#[test]
fn rat_atomic_add() {
    // WORD0 = RAT_INST ADD 7<<4 (0x70) | TYPE 1<<13 (0x2000) | RW_GPR 0 | INDEX_GPR 3<<23
    // (0x180_0000) = 0x0180_2070. WORD1 = COMP_MASK 1<<12 | MEM_RAT 0x56<<22 (0x1580_0000) |
    // BARRIER (| END_OF_PROGRAM on Evergreen) = 0x95A0_1000 / 0x9580_1000.
    for chip in CHIPS {
        let cf: &[Slot] = match chip {
            Chip::Evergreen => &[[0x0180_2070, 0x95A0_1000]],
            Chip::Cayman => &[[0x0180_2070, 0x9580_1000], [0, 0x8800_0000]],
        };
        let mut m = mem();
        put(&mut m, RAT0, &[1000]);
        load_program(&mut m, cf, 4, &[]);
        let mut s = state(chip);
        s.num_threads = [64, 1, 1];
        let stats = run(s.clone(), &mut m).unwrap();
        assert_eq!(get(&mut m, RAT0, 1), [1000 + (0..64).sum::<u32>()], "{chip:?}");
        assert_eq!((stats.rat_exports, stats.rat_dwords), (1, 64));

        // §8.6 rule 6: atomics need NUMBER_TYPE UINT; FLOAT (7<<12: INFO 0x0410_7134) refused.
        s.rats[0].info = 0x0410_7134;
        assert!(matches!(
            run(s, &mut m).map_err(|e| e.kind),
            Err(ShaderErrorKind::RatState { rat: 0, .. })
        ));
    }
}

#[test]
fn rat_state_errors() {
    for chip in CHIPS {
        let mut m = mem();
        let run_with = |m: &mut FlatMemory, f: &dyn Fn(&mut DispatchState)| {
            let mut s = state(chip);
            f(&mut s);
            run_store(store_r2(chip), s, m)
        };
        // INFO without RAT (bit 26): a colour target, not a RAT.
        assert_eq!(
            run_with(&mut m, &|s| s.rats[0].info = 0x0010_4134),
            Err(ShaderErrorKind::RatNotBound(0))
        );
        // §8.6 rule 3a: a BUFFER RAT needs ATTRIB.NON_DISP_TILING_ORDER.
        assert!(matches!(
            run_with(&mut m, &|s| s.rats[0].attrib = 0),
            Err(ShaderErrorKind::RatState { rat: 0, .. })
        ));
        // §8.6 rule 3b: ARRAY_MODE must be LINEAR_ALIGNED (INFO with ARRAY_MODE 0: 0x0410_4034).
        assert!(matches!(
            run_with(&mut m, &|s| s.rats[0].info = 0x0410_4034),
            Err(ShaderErrorKind::RatState { rat: 0, .. })
        ));
        // §8.6 rule 4: FAST_CLEAR (bit 17) is not permitted.
        assert!(matches!(
            run_with(&mut m, &|s| s.rats[0].info = 0x0412_4134),
            Err(ShaderErrorKind::RatState { rat: 0, .. })
        ));
    }
}
