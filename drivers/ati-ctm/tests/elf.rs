//! The DPP executable loader (ch. 4) on hand-built files.

use baregpu_ati_ctm::elf::*;
use proptest::prelude::*;

/// A note to place in a PT_NOTE segment.
#[derive(Clone)]
struct Note {
    name: Vec<u8>,
    ty: u32,
    desc: Vec<u8>,
}

fn words(ws: &[u32]) -> Vec<u8> {
    ws.iter().flat_map(|w| w.to_le_bytes()).collect()
}

fn note(ty: u32, desc: &[u32]) -> Note {
    Note { name: NOTE_NAME.to_vec(), ty, desc: words(desc) }
}

fn proginfo(count: u32) -> [u32; 28] {
    let mut p = [0u32; 28];
    p[0] = 1;
    p[1] = 1; // FG_DEPTH_SRC: conditional value exported
    p[3] = 3; // US_PIXSIZE
    p[4] = 1 << 31; // US_FC_CTRL: full flow control
    p[5] = (count - 1) << 16; // US_CODE_ADDR: 0 .. count-1
    p[6] = (count - 1) << 16; // US_CODE_RANGE
    p[7] = 0xC0;
    p[8] = 0x0002_0000;
    p[27] = count;
    p
}

fn encode_notes(notes: &[Note]) -> Vec<u8> {
    let mut out = Vec::new();
    for n in notes {
        out.extend((n.name.len() as u32).to_le_bytes());
        out.extend((n.desc.len() as u32).to_le_bytes());
        out.extend(n.ty.to_le_bytes());
        out.extend(&n.name);
        while out.len() % 4 != 0 {
            out.push(0);
        }
        out.extend(&n.desc);
        while out.len() % 4 != 0 {
            out.push(0);
        }
    }
    out
}

/// Builds a DPP executable: ELF header, program headers (PT_LOAD then one PT_NOTE per group),
/// text, note segments.
#[derive(Clone)]
struct Builder {
    text: Vec<u8>,
    note_groups: Vec<Vec<Note>>,
}

impl Builder {
    fn valid(count: u32) -> Self {
        let text = (0..count * 6).flat_map(|i| (0x1000 + i).to_le_bytes()).collect();
        Self {
            text,
            note_groups: vec![
                vec![
                    note(1, &proginfo(count)),
                    note(2, &[0, 3, 15]),
                    note(3, &[0, 1]),
                    note(4, &[1]),
                ],
                vec![note(5, &[0, 1, 2, 255]), note(6, &[]), note(7, &[0])],
            ],
        }
    }

    fn build(&self) -> Vec<u8> {
        let phnum = 1 + self.note_groups.len();
        let mut off = 52 + 32 * phnum;
        let mut phdrs = Vec::new();
        let mut body = Vec::new();
        // PT_LOAD
        phdrs.push([1, off as u32, 0, 0, self.text.len() as u32, self.text.len() as u32, 5, 4]);
        body.extend(&self.text);
        off += self.text.len();
        for g in &self.note_groups {
            let n = encode_notes(g);
            phdrs.push([4, off as u32, 0, 0, n.len() as u32, 0, 4, 4]);
            off += n.len();
            body.extend(n);
        }
        let mut f = Vec::new();
        f.extend(b"\x7fELF");
        f.extend([1, 1, 1, 98, 1, 0, 0, 0, 0, 0, 0, 0]);
        f.extend(2u16.to_le_bytes()); // e_type
        f.extend(122u16.to_le_bytes()); // e_machine
        f.extend(1u32.to_le_bytes()); // e_version
        f.extend(0u32.to_le_bytes()); // e_entry
        f.extend(52u32.to_le_bytes()); // e_phoff
        f.extend(0u32.to_le_bytes()); // e_shoff
        f.extend(1u32.to_le_bytes()); // e_flags
        f.extend(52u16.to_le_bytes()); // e_ehsize
        f.extend(32u16.to_le_bytes()); // e_phentsize
        f.extend((phnum as u16).to_le_bytes());
        f.extend(40u16.to_le_bytes()); // e_shentsize
        f.extend(0u16.to_le_bytes()); // e_shnum
        f.extend(0u16.to_le_bytes()); // e_shstrndx
        assert_eq!(f.len(), 52);
        for p in phdrs {
            f.extend(words(&p));
        }
        f.extend(body);
        f
    }
}

fn put16(f: &mut [u8], off: usize, v: u16) {
    f[off..off + 2].copy_from_slice(&v.to_le_bytes());
}
fn put32(f: &mut [u8], off: usize, v: u32) {
    f[off..off + 4].copy_from_slice(&v.to_le_bytes());
}
/// Offset of field `field` (byte offset) of program header `i`.
fn ph(i: usize, field: usize) -> usize {
    52 + 32 * i + field
}

#[test]
fn valid_executable_accepted() {
    let bytes = Builder::valid(3).build();
    let exe = DppExecutable::parse(&bytes).unwrap();
    assert_eq!(exe.instruction_count(), 3);
    assert_eq!(exe.text().len(), 72);
    let ws: Vec<u32> = exe.instruction_words().collect();
    assert_eq!(ws, (0x1000..0x1000 + 18).collect::<Vec<_>>());
    let slots: Vec<_> = exe.instructions().collect();
    assert_eq!(slots.len(), 3);
    assert_eq!(slots[1], [0x1006, 0x1007, 0x1008, 0x1009, 0x100A, 0x100B]);
    assert_eq!(exe.inputs().iter().collect::<Vec<_>>(), [0, 3, 15]);
    assert!(exe.inputs().contains(15));
    assert_eq!(exe.outputs().len(), 2);
    assert_eq!(exe.float32_constants().iter().collect::<Vec<_>>(), [0, 1, 2, 255]);
    assert!(exe.int32_constants().is_empty());
    assert!(exe.writes_cond_output());
    assert!(!exe.has_early_exit());
    let info = exe.program_info();
    assert!(info.exports_cond_value());
    assert!(!info.uncached_output());
    assert!(info.full_flow_control());
    assert_eq!(info.us_pixsize(), 3);
    assert_eq!((info.code_start(), info.code_end()), (0, 2));
    assert_eq!(info.us_code_range(), 2 << 16);
    assert_eq!(info.words[7], 0xC0);
}

#[test]
fn minimal_executable_accepted() {
    // Only the mandatory Program Information note; one instruction.
    let mut b = Builder::valid(1);
    b.note_groups = vec![vec![note(1, &proginfo(1))]];
    let bytes = b.build();
    let exe = DppExecutable::parse(&bytes).unwrap();
    assert_eq!(exe.instruction_count(), 1);
    assert!(exe.inputs().is_empty() && exe.outputs().is_empty());
    assert!(!exe.writes_cond_output() && !exe.has_early_exit());
}

#[test]
fn max_size_executable_accepted() {
    let bytes = Builder::valid(512).build();
    assert_eq!(DppExecutable::parse(&bytes).unwrap().instructions().len(), 512);
}

/// Each malformed variant and the exact error it must produce.
#[test]
fn malformed_corpus() {
    let good = Builder::valid(2).build();
    let text_off = 52 + 32 * 3;
    let mut cases: Vec<(&str, Vec<u8>, ElfError)> = Vec::new();
    let mut m = |name, f: &dyn Fn(&mut Vec<u8>), e| {
        let mut b = good.clone();
        f(&mut b);
        cases.push((name, b, e));
    };
    m("truncated header", &|b| b.truncate(51), ElfError::TruncatedHeader { len: 51 });
    m("empty", &|b| b.clear(), ElfError::TruncatedHeader { len: 0 });
    m("bad magic", &|b| b[1] = b'X', ElfError::BadMagic);
    m("64-bit class", &|b| b[4] = 2, ElfError::BadClass(2));
    m("big endian", &|b| b[5] = 2, ElfError::BadData(2));
    m("ident version", &|b| b[6] = 0, ElfError::BadIdentVersion(0));
    m("osabi", &|b| b[7] = 0, ElfError::BadOsAbi(0));
    m("abi version", &|b| b[8] = 2, ElfError::BadAbiVersion(2));
    m("e_type REL", &|b| put16(b, 16, 1), ElfError::BadType(1));
    m("machine", &|b| put16(b, 18, 3), ElfError::BadMachine(3));
    m("e_version", &|b| put32(b, 20, 2), ElfError::BadVersion(2));
    m("entry", &|b| put32(b, 24, 0x40), ElfError::BadEntry(0x40));
    m("flags", &|b| put32(b, 36, 0), ElfError::BadFlags(0));
    m("ehsize", &|b| put16(b, 40, 64), ElfError::BadEhsize(64));
    m("phentsize", &|b| put16(b, 42, 56), ElfError::BadPhentsize(56));
    m("no phdrs", &|b| put16(b, 44, 0), ElfError::NoProgramHeaders);
    m(
        "phdrs past end",
        &|b| put32(b, 28, 0xFFFF_FFF0),
        ElfError::PhdrOutOfBounds { offset: 0xFFFF_FFF0, count: 3, len: good.len() },
    );
    m(
        "phnum past end",
        &|b| put16(b, 44, 0xFFFF),
        ElfError::PhdrOutOfBounds { offset: 52, count: 0xFFFF, len: good.len() },
    );
    m(
        "segment past end",
        &|b| put32(b, ph(0, 16), 0x10_0000),
        ElfError::SegmentOutOfBounds {
            index: 0,
            offset: text_off as u32,
            size: 0x10_0000,
            len: good.len(),
        },
    );
    m(
        "segment offset overflow",
        &|b| put32(b, ph(1, 4), 0xFFFF_FFFF),
        ElfError::SegmentOutOfBounds { index: 1, offset: 0xFFFF_FFFF, size: 216, len: good.len() },
    );
    m(
        "dynamic segment",
        &|b| put32(b, ph(2, 0), 2),
        ElfError::UnexpectedSegment { index: 2, p_type: 2 },
    );
    m("no load", &|b| put32(b, ph(0, 0), 0), ElfError::MissingText);
    m("two loads", &|b| put32(b, ph(1, 0), 1), ElfError::DuplicateText { index: 1 });
    m(
        "no notes",
        &|b| {
            put32(b, ph(1, 0), 0);
            put32(b, ph(2, 0), 0);
        },
        ElfError::MissingNotes,
    );
    m(
        "memsz differs",
        &|b| put32(b, ph(0, 20), 96),
        ElfError::TextSizeMismatch { filesz: 48, memsz: 96 },
    );
    m(
        "overlapping segments",
        &|b| put32(b, ph(2, 4), text_off as u32 + 40),
        ElfError::SegmentsOverlap { first: 0, second: 2 },
    );
    m(
        "segment over headers",
        &|b| put32(b, ph(0, 4), 60),
        ElfError::SegmentOverlapsHeaders { index: 0 },
    );
    m(
        "empty text",
        &|b| {
            put32(b, ph(0, 16), 0);
            put32(b, ph(0, 20), 0);
        },
        ElfError::EmptyText,
    );
    m(
        "odd text",
        &|b| {
            put32(b, ph(0, 16), 44);
            put32(b, ph(0, 20), 44);
        },
        ElfError::TextNotInstructionMultiple { size: 44 },
    );
    m(
        "note past segment",
        &|b| {
            let sz = u32::from_le_bytes(b[ph(1, 16)..ph(1, 16) + 4].try_into().unwrap());
            put32(b, ph(1, 16), sz - 4);
        },
        ElfError::NoteTruncated { segment: 1, offset: 192 },
    );
    for (name, bytes, err) in &cases {
        assert_eq!(DppExecutable::parse(bytes), Err(*err), "{name}");
    }
    assert!(cases.len() >= 30);
}

/// Malformed notes, built rather than patched.
#[test]
fn malformed_notes() {
    let cases: Vec<(&str, Vec<Vec<Note>>, ElfError)> = vec![
        ("missing proginfo", vec![vec![note(2, &[0])]], ElfError::MissingProgramInfo),
        (
            "duplicate proginfo",
            vec![vec![note(1, &proginfo(2))], vec![note(1, &proginfo(2))]],
            ElfError::DuplicateNote { kind: NoteKind::ProgramInfo },
        ),
        (
            "duplicate inputs",
            vec![vec![note(1, &proginfo(2)), note(2, &[0]), note(2, &[1])]],
            ElfError::DuplicateNote { kind: NoteKind::Inputs },
        ),
        (
            "short proginfo",
            vec![vec![note(1, &proginfo(2)[..27])]],
            ElfError::NoteSizeMismatch { kind: NoteKind::ProgramInfo, descsz: 108 },
        ),
        (
            "condout size",
            vec![vec![note(1, &proginfo(2)), note(4, &[1, 0])]],
            ElfError::NoteSizeMismatch { kind: NoteKind::CondOut, descsz: 8 },
        ),
        (
            "earlyexit value",
            vec![vec![note(1, &proginfo(2)), note(7, &[2])]],
            ElfError::BadNoteValue { kind: NoteKind::EarlyExit, value: 2 },
        ),
        (
            "input 16",
            vec![vec![note(1, &proginfo(2)), note(2, &[16])]],
            ElfError::NoteIndexOutOfRange { kind: NoteKind::Inputs, index: 16 },
        ),
        (
            "output 4",
            vec![vec![note(1, &proginfo(2)), note(3, &[0, 4])]],
            ElfError::NoteIndexOutOfRange { kind: NoteKind::Outputs, index: 4 },
        ),
        (
            "unknown type",
            vec![vec![note(1, &proginfo(2)), note(8, &[0])]],
            ElfError::UnknownNoteType { note_type: 8 },
        ),
        (
            "wrong name",
            vec![vec![Note { name: b"ATI DPQ\0".to_vec(), ty: 1, desc: words(&proginfo(2)) }]],
            ElfError::BadNoteName { note_type: 1, namesz: 8 },
        ),
        (
            "name without NUL",
            vec![vec![Note { name: b"ATI DPP".to_vec(), ty: 1, desc: words(&proginfo(2)) }]],
            ElfError::BadNoteName { note_type: 1, namesz: 7 },
        ),
        (
            "instruction count",
            vec![vec![note(1, &{
                let mut p = proginfo(2);
                p[27] = 3;
                p
            })]],
            ElfError::InstructionCountMismatch { proginfo: 3, text: 2 },
        ),
        (
            "code range",
            vec![vec![note(1, &{
                let mut p = proginfo(2);
                p[6] = 2 << 16;
                p
            })]],
            ElfError::BadCodeRange { code_range: 2 << 16 },
        ),
        (
            "code addr end",
            vec![vec![note(1, &{
                let mut p = proginfo(2);
                p[5] = 2 << 16;
                p
            })]],
            ElfError::BadCodeAddr { code_addr: 2 << 16 },
        ),
        (
            "code addr start after end",
            vec![vec![note(1, &{
                let mut p = proginfo(2);
                p[5] = 1;
                p
            })]],
            ElfError::BadCodeAddr { code_addr: 1 },
        ),
    ];
    for (name, groups, err) in cases {
        let mut b = Builder::valid(2);
        b.note_groups = groups;
        assert_eq!(DppExecutable::parse(&b.build()), Err(err), "{name}");
    }
    // A list note whose desc is not whole words.
    let mut b = Builder::valid(2);
    b.note_groups = vec![vec![
        note(1, &proginfo(2)),
        Note { name: NOTE_NAME.to_vec(), ty: 5, desc: vec![1, 0, 0] },
    ]];
    assert_eq!(
        DppExecutable::parse(&b.build()),
        Err(ElfError::NoteSizeMismatch { kind: NoteKind::Float32Consts, descsz: 3 })
    );
    // Too many instructions.
    let b = Builder::valid(513);
    assert_eq!(DppExecutable::parse(&b.build()), Err(ElfError::TooManyInstructions { count: 513 }));
}

#[test]
fn errors_display() {
    let e = ElfError::BadOsAbi(0).to_string();
    assert!(e.contains("98"), "{e}");
    let e = ElfError::MissingProgramInfo.to_string();
    assert!(e.contains("§4.1.4"), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = DppExecutable::parse(&bytes);
    }

    #[test]
    fn random_header_never_panics(tail in prop::collection::vec(any::<u8>(), 0..400)) {
        // A valid ident so the fuzzing reaches the program headers and notes.
        let mut bytes = Builder::valid(1).build()[..52].to_vec();
        bytes.extend(tail);
        let _ = DppExecutable::parse(&bytes);
    }

    #[test]
    fn mutations_never_panic(
        count in 1u32..4,
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        cut in any::<prop::sample::Index>(),
        truncate in any::<bool>(),
    ) {
        let mut bytes = Builder::valid(count).build();
        for (i, v) in &flips {
            let k = i.index(bytes.len());
            bytes[k] = *v;
        }
        if truncate {
            bytes.truncate(cut.index(bytes.len()));
        }
        match DppExecutable::parse(&bytes) {
            Ok(exe) => {
                // Whatever was accepted is self-consistent.
                prop_assert_eq!(exe.text().len() as u32, exe.instruction_count() * 24);
                prop_assert_eq!(exe.instruction_words().count(), exe.text().len() / 4);
                prop_assert!(exe.inputs().iter().all(|i| i < 16));
                prop_assert!(exe.outputs().iter().all(|i| i < 4));
            }
            Err(e) => { let _ = e.to_string(); }
        }
    }
}
