//! Command encodings against Table 3 and §2.2.1–§2.2.3.

use baregpu_ati_ctm::command::*;
use proptest::prelude::*;

fn enc(cmd: Command) -> Vec<u32> {
    let (w, n) = cmd.encode().unwrap();
    w[..n].to_vec()
}

#[test]
fn opcode_words_match_table_3() {
    let table: [(&str, u32, usize); 27] = [
        ("init_perf_counters", 0xC0010200, 1),
        ("start_perf_counters", 0xC0000300, 1),
        ("stop_perf_counters", 0xC0000400, 1),
        ("read_perf_counters", 0xC0010500, 1),
        ("set_cond_val", 0xC0000600, 1),
        ("set_domain", 0xC0030700, 4),
        ("start_program", 0xC0000800, 1),
        ("wait_for_idle", 0xC0000900, 1),
        ("set_inst_fmt", 0xC0010A00, 2),
        ("set_inp_fmt", 0xC0030B00, 4),
        ("set_out_fmt", 0xC0030C00, 4),
        ("set_cond_out_fmt", 0xC0020D00, 3),
        ("set_constf_fmt", 0xC0010E00, 2),
        ("set_consti_fmt", 0xC0010F00, 2),
        ("set_constb_fmt", 0xC0011000, 2),
        ("inv_inst_cache", 0xC0001100, 1),
        ("inv_constf_cache", 0xC0001200, 1),
        ("inv_consti_cache", 0xC0001300, 1),
        ("inv_constb_cache", 0xC0001400, 1),
        ("inv_cond_out_cache", 0xC0001500, 1),
        ("inv_inp_cache", 0xC0001600, 1),
        ("flush_out_cache", 0xC0001700, 1),
        ("flush_cond_out_cache", 0xC0001800, 1),
        ("set_out_mask", 0xC0001900, 1),
        ("set_cond_out_mask", 0xC0001A00, 1),
        ("set_cond_test", 0xC0001B00, 1),
        ("set_cond_loc", 0xC0001C00, 1),
    ];
    for (op, (name, word, params)) in Opcode::ALL.iter().zip(table) {
        assert_eq!(op.name(), name);
        assert_eq!(op.word(), word, "{name}");
        assert_eq!(op.param_count(), params, "{name}");
        assert_eq!(*op as u8 as u32, (word >> 8) & 0xFF);
        assert_eq!(Opcode::from_word(word), Some(*op));
        // Every opcode except the two perf-counter ones has COUNT = params - 1.
        let count = ((word >> 16) & 0x3FFF) as usize + 1;
        if name != "init_perf_counters" && name != "read_perf_counters" {
            assert_eq!(count, params, "{name}");
        }
    }
    let not_pipelined: Vec<_> =
        Opcode::ALL.iter().filter(|o| !o.pipelined()).map(|o| o.name()).collect();
    assert_eq!(
        not_pipelined,
        [
            "read_perf_counters",
            "set_inst_fmt",
            "set_inp_fmt",
            "set_out_fmt",
            "set_cond_out_fmt",
            "set_constf_fmt",
            "set_consti_fmt",
            "set_constb_fmt"
        ]
    );
    assert_eq!(Opcode::from_word(0xC0001D00), None);
    assert_eq!(opcode::SET_DOMAIN, 0xC003_0700);
}

#[test]
fn pe_commands() {
    assert_eq!(enc(Command::InitPerfCounters { enable: true }), [0xC0010200, 1]);
    assert_eq!(enc(Command::InitPerfCounters { enable: false }), [0xC0010200, 0]);
    assert_eq!(enc(Command::StartPerfCounters), [0xC0000300, 0]);
    assert_eq!(enc(Command::StopPerfCounters), [0xC0000400, 0]);
    assert_eq!(
        enc(Command::ReadPerfCounters { addr: GpuAddress::new(0x1234_5800).unwrap() }),
        [0xC0010500, 0x1234_5800]
    );
    assert_eq!(enc(Command::SetCondVal { value: 0xDEAD_BEEF }), [0xC0000600, 0xDEAD_BEEF]);
    assert_eq!(
        enc(Command::SetDomain(Domain::new(1, 2, 0xFFF, 4).unwrap())),
        [0xC0030700, 1, 2, 0xFFF, 4]
    );
    assert_eq!(enc(Command::StartProgram), [0xC0000800, 0]);
    assert_eq!(enc(Command::WaitForIdle), [0xC0000900, 0]);
}

#[test]
fn mc_commands() {
    let base = GpuAddress::new(0x0080_0000).unwrap();
    // pitch 256 → bits 12:2 = 64 → word bits 12:0 = 0x100; TILED (1) → bit 16;
    // FLOAT32_4 (4) → bits 26:24 = 4.
    let f = Format::new(256, Tiling::Tiled, DataFormat::Float32x4).unwrap();
    assert_eq!(f.word(), 0x0401_0100);
    let h = Height::new(0x1FFF).unwrap();
    assert_eq!(
        enc(Command::SetInstFmt { base, format: f }),
        [0xC0010A00, 0x0080_0000, 0x0401_0100]
    );
    let sf = Format::new(4, Tiling::TiledInp2x2, DataFormat::Float32x1).unwrap();
    assert_eq!(sf.word(), 0x0203_0004);
    assert_eq!(
        enc(Command::SetInpFmt {
            input: InputIndex::new(15).unwrap(),
            base,
            format: sf,
            height: h
        }),
        [0xC0030B00, 15, 0x0080_0000, 0x0203_0004, 0x1FFF]
    );
    assert_eq!(
        enc(Command::SetOutFmt {
            output: OutputIndex::new(3).unwrap(),
            base,
            format: f,
            height: Height::new(7).unwrap()
        }),
        [0xC0030C00, 3, 0x0080_0000, 0x0401_0100, 7]
    );
    let cf = Format::new(8188, Tiling::Linear, DataFormat::Uint16x1).unwrap();
    assert_eq!(cf.word(), 0x1FFC);
    assert_eq!(
        enc(Command::SetCondOutFmt { base, format: cf, height: h }),
        [0xC0020D00, 0x0080_0000, 0x1FFC, 0x1FFF]
    );
    let u8x4 = Format::new(16, Tiling::Linear, DataFormat::Uint8x4).unwrap();
    assert_eq!(u8x4.word(), 0x0100_0010);
    for (cmd, op) in [
        (Command::SetConstfFmt { base, format: u8x4 }, 0xC0010E00),
        (Command::SetConstiFmt { base, format: u8x4 }, 0xC0010F00),
        (Command::SetConstbFmt { base, format: u8x4 }, 0xC0011000),
    ] {
        assert_eq!(enc(cmd), [op, 0x0080_0000, 0x0100_0010]);
    }
    for (cmd, op) in [
        (Command::InvInstCache, 0xC0001100),
        (Command::InvConstfCache, 0xC0001200),
        (Command::InvConstiCache, 0xC0001300),
        (Command::InvConstbCache, 0xC0001400),
        (Command::InvCondOutCache, 0xC0001500),
        (Command::InvInpCache, 0xC0001600),
        (Command::FlushOutCache, 0xC0001700),
        (Command::FlushCondOutCache, 0xC0001800),
    ] {
        assert_eq!(enc(cmd), [op, 0]);
    }
    assert_eq!(
        enc(Command::SetOutMask(OutputMask::from_channels(true, false, true, true))),
        [0xC0001900, 0b1101]
    );
    assert_eq!(enc(Command::SetCondOutMask { write: true }), [0xC0001A00, 1]);
}

#[test]
fn co_commands() {
    let tests = [
        (CondTest::Never, 0),
        (CondTest::Less, 1),
        (CondTest::LessOrEqual, 2),
        (CondTest::Equal, 3),
        (CondTest::GreaterOrEqual, 4),
        (CondTest::Greater, 5),
        (CondTest::NotEqual, 6),
        (CondTest::Always, 7),
    ];
    for (t, v) in tests {
        assert_eq!(enc(Command::SetCondTest(t)), [0xC0001B00, v]);
    }
    assert_eq!(enc(Command::SetCondLoc(CondLoc::Dpp)), [0xC0001C00, 0]);
    assert_eq!(enc(Command::SetCondLoc(CondLoc::Pe)), [0xC0001C00, 1]);
}

#[test]
fn parameter_errors() {
    assert_eq!(
        GpuAddress::new(0x1000_0400),
        Err(CtmError::Misaligned { addr: 0x1000_0400, align: 2048 })
    );
    assert_eq!(
        Format::new(6, Tiling::Linear, DataFormat::Float32x1),
        Err(CtmError::PitchNotMultipleOf4 { pitch: 6 })
    );
    assert_eq!(
        Format::new(8192, Tiling::Linear, DataFormat::Float32x1),
        Err(CtmError::PitchOutOfRange { pitch: 8192, max: 8188 })
    );
    assert_eq!(
        Format::new(4, Tiling::LinearInp2x2, DataFormat::Float32x4),
        Err(CtmError::SuperfineMultiChannel { format: DataFormat::Float32x4 })
    );
    assert_eq!(
        Domain::new(0, 0, 4096, 0),
        Err(CtmError::DomainOutOfRange { coord: "i1", value: 4096 })
    );
    assert_eq!(Domain::new(5, 0, 4, 0), Err(CtmError::DomainInverted { axis: 'i', lo: 5, hi: 4 }));
    assert_eq!(Domain::new(0, 9, 4, 8), Err(CtmError::DomainInverted { axis: 'j', lo: 9, hi: 8 }));
    assert!(Domain::of_size(0, 1).is_err());
    assert_eq!(Domain::of_size(4096, 4096).unwrap().len(), 4096 * 4096);
    assert_eq!(
        InputIndex::new(16),
        Err(CtmError::BadIndex { kind: "input", index: 16, limit: 16 })
    );
    assert_eq!(OutputIndex::new(4), Err(CtmError::BadIndex { kind: "output", index: 4, limit: 4 }));
    assert_eq!(
        Height::new(0x2000),
        Err(CtmError::HeightOutOfRange { height: 0x2000, max: 0x1FFF })
    );
    assert_eq!(OutputMask::new(0x10), Err(CtmError::BadMask { mask: 0x10, max: 0xF }));
    let sf = Format::new(4, Tiling::LinearInp2x2, DataFormat::Float32x1).unwrap();
    assert_eq!(
        Command::SetOutFmt {
            output: OutputIndex::new(0).unwrap(),
            base: GpuAddress::ZERO,
            format: sf,
            height: Height::new(1).unwrap()
        }
        .encode(),
        Err(CtmError::SuperfineNotInput { opcode: Opcode::SetOutFmt })
    );
    // Display mentions the section.
    let msg = CtmError::Misaligned { addr: 1, align: 2048 }.to_string();
    assert!(msg.contains("§2.2.2"), "{msg}");
}

#[test]
fn buffer_is_all_or_nothing() {
    let mut mem = [0xAAAA_AAAAu32; 6];
    let mut cb = CommandBuffer::new(&mut mem);
    cb.start_program().unwrap();
    assert_eq!(cb.len(), 2);
    // set_domain needs 5 words, only 4 free.
    assert_eq!(
        cb.set_domain(Domain::of_size(2, 2).unwrap()),
        Err(CtmError::NoSpace { needed: 5, available: 4 })
    );
    assert_eq!(cb.as_words(), [0xC0000800, 0]);
    cb.wait_for_idle().unwrap();
    cb.set_cond_test(CondTest::Equal).unwrap();
    assert_eq!(cb.free_words(), 0);
    assert!(cb.inv_inp_cache().is_err());
    assert_eq!(cb.as_words(), [0xC0000800, 0, 0xC0000900, 0, 0xC0001B00, 3]);
    cb.clear();
    assert!(cb.is_empty());
    assert_eq!(cb.capacity(), 6);
    // The rejected command left nothing behind in memory beyond what was written.
    assert_eq!(mem[5], 3);
}

#[test]
fn every_builder_method() {
    let mut mem = [0u32; 128];
    let mut cb = CommandBuffer::new(&mut mem);
    let a = GpuAddress::new(0x800).unwrap();
    let f = Format::new(64, Tiling::Linear, DataFormat::Float32x1).unwrap();
    let h = Height::new(64).unwrap();
    cb.init_perf_counters(true).unwrap();
    cb.start_perf_counters().unwrap();
    cb.stop_perf_counters().unwrap();
    cb.read_perf_counters(a).unwrap();
    cb.set_cond_val(7).unwrap();
    cb.set_domain(Domain::of_size(64, 64).unwrap()).unwrap();
    cb.start_program().unwrap();
    cb.wait_for_idle().unwrap();
    cb.set_inst_fmt(a, f).unwrap();
    cb.set_inp_fmt(InputIndex::new(1).unwrap(), a, f, h).unwrap();
    cb.set_out_fmt(OutputIndex::new(1).unwrap(), a, f, h).unwrap();
    cb.set_cond_out_fmt(a, f, h).unwrap();
    cb.set_constf_fmt(a, f).unwrap();
    cb.set_consti_fmt(a, f).unwrap();
    cb.set_constb_fmt(a, f).unwrap();
    cb.inv_inst_cache().unwrap();
    cb.inv_constf_cache().unwrap();
    cb.inv_consti_cache().unwrap();
    cb.inv_constb_cache().unwrap();
    cb.inv_cond_out_cache().unwrap();
    cb.inv_inp_cache().unwrap();
    cb.flush_out_cache().unwrap();
    cb.flush_cond_out_cache().unwrap();
    cb.set_out_mask(OutputMask::ALL).unwrap();
    cb.set_cond_out_mask(false).unwrap();
    cb.set_cond_test(CondTest::Always).unwrap();
    cb.set_cond_loc(CondLoc::Pe).unwrap();
    // Walk the buffer: every opcode of Table 3 appears once, in order.
    let mut words = cb.as_words();
    let mut seen = Vec::new();
    while !words.is_empty() {
        let (cmd, n) = Command::decode(words).unwrap();
        seen.push(cmd.opcode());
        words = &words[n..];
    }
    assert_eq!(seen, Opcode::ALL);
}

#[test]
fn decode_rejects() {
    assert_eq!(Command::decode(&[]), Err(CtmError::Truncated { needed: 1, available: 0 }));
    assert_eq!(
        Command::decode(&[0xC0001D00, 0]),
        Err(CtmError::UnknownOpcode { word: 0xC0001D00 })
    );
    assert_eq!(
        Command::decode(&[0xC0030700, 0, 0]),
        Err(CtmError::Truncated { needed: 5, available: 3 })
    );
    assert_eq!(
        Command::decode(&[0xC0001B00, 8]),
        Err(CtmError::ReservedBitsSet { opcode: Opcode::SetCondTest, param: 0, word: 8 })
    );
    assert_eq!(
        Command::decode(&[0xC0010A00, 0, 5 << 24]),
        Err(CtmError::BadEnum { field: "format", value: 5 })
    );
}

fn any_format() -> impl Strategy<Value = Format> {
    (0u32..=2047, 0u32..4, 0u32..5).prop_filter_map("superfine multi-channel", |(p, t, d)| {
        Format::new(p * 4, Tiling::from_bits(t).unwrap(), DataFormat::from_bits(d).unwrap()).ok()
    })
}

fn any_command() -> impl Strategy<Value = Command> {
    let addr = (0u32..(1 << 21)).prop_map(|a| GpuAddress::new(a << 11).unwrap());
    let height = (0u32..=0x1FFF).prop_map(|h| Height::new(h).unwrap());
    let simple = prop::sample::select(vec![
        Command::StartPerfCounters,
        Command::StopPerfCounters,
        Command::StartProgram,
        Command::WaitForIdle,
        Command::InvInstCache,
        Command::InvConstfCache,
        Command::InvConstiCache,
        Command::InvConstbCache,
        Command::InvCondOutCache,
        Command::InvInpCache,
        Command::FlushOutCache,
        Command::FlushCondOutCache,
    ]);
    prop_oneof![
        simple,
        any::<bool>().prop_map(|enable| Command::InitPerfCounters { enable }),
        addr.clone().prop_map(|addr| Command::ReadPerfCounters { addr }),
        any::<u32>().prop_map(|value| Command::SetCondVal { value }),
        (0u32..4096, 0u32..4096, 0u32..4096, 0u32..4096).prop_map(|(a, b, c, d)| {
            Command::SetDomain(Domain::new(a.min(c), b.min(d), a.max(c), b.max(d)).unwrap())
        }),
        (0u32..16, addr.clone(), any_format(), height.clone()).prop_map(
            |(i, base, format, height)| {
                Command::SetInpFmt { input: InputIndex::new(i).unwrap(), base, format, height }
            }
        ),
        (0u32..4, addr.clone(), any_format(), height.clone()).prop_filter_map(
            "superfine",
            |(o, base, format, height)| {
                let c = Command::SetOutFmt {
                    output: OutputIndex::new(o).unwrap(),
                    base,
                    format,
                    height,
                };
                c.validate().ok().map(|_| c)
            }
        ),
        (addr.clone(), any_format(), height).prop_filter_map(
            "superfine",
            |(base, format, height)| {
                let c = Command::SetCondOutFmt { base, format, height };
                c.validate().ok().map(|_| c)
            }
        ),
        (0u32..4, addr, any_format()).prop_filter_map("superfine", |(k, base, format)| {
            let c = match k {
                0 => Command::SetInstFmt { base, format },
                1 => Command::SetConstfFmt { base, format },
                2 => Command::SetConstiFmt { base, format },
                _ => Command::SetConstbFmt { base, format },
            };
            c.validate().ok().map(|_| c)
        }),
        (0u32..16).prop_map(|m| Command::SetOutMask(OutputMask::new(m).unwrap())),
        any::<bool>().prop_map(|write| Command::SetCondOutMask { write }),
        (0u32..8).prop_map(|t| Command::SetCondTest(CondTest::from_bits(t).unwrap())),
        any::<bool>().prop_map(|pe| Command::SetCondLoc(if pe {
            CondLoc::Pe
        } else {
            CondLoc::Dpp
        })),
    ]
}

proptest! {
    #[test]
    fn encode_decode_round_trip(cmds in prop::collection::vec(any_command(), 0..20), cap in 0usize..64) {
        let mut mem = vec![0u32; cap];
        let mut cb = CommandBuffer::new(&mut mem);
        let mut accepted = Vec::new();
        for c in &cmds {
            let before = cb.len();
            match cb.emit(*c) {
                Ok(()) => accepted.push(*c),
                Err(CtmError::NoSpace { needed, available }) => {
                    prop_assert_eq!(cb.len(), before);
                    prop_assert!(needed > available);
                }
                Err(e) => prop_assert!(false, "unexpected {e}"),
            }
        }
        let mut words = cb.as_words();
        let mut decoded = Vec::new();
        while !words.is_empty() {
            let (c, n) = Command::decode(words).unwrap();
            decoded.push(c);
            words = &words[n..];
        }
        prop_assert_eq!(decoded, accepted);
    }

    #[test]
    fn decode_never_panics(words in prop::collection::vec(any::<u32>(), 0..8)) {
        let _ = Command::decode(&words);
    }

    #[test]
    fn format_word_round_trip(f in any_format()) {
        prop_assert_eq!(Format::from_word(f.word()), Some(f));
        prop_assert_eq!(f.word() & Format::RESERVED_MASK, 0);
    }

    #[test]
    fn misaligned_addresses_rejected(a in any::<u32>()) {
        prop_assert_eq!(GpuAddress::new(a).is_ok(), a % 2048 == 0);
    }
}
