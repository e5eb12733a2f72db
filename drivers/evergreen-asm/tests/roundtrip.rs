//! Round trips: every word that decodes re-encodes to itself, and every program the builder
//! accepts encodes to words whose fields, walked from dword 0 like a sequencer does, decode
//! back to the instructions that were built.

mod common;

use baregpu_evergreen_asm::*;
use common::walk;
use proptest::prelude::*;

fn chip() -> impl Strategy<Value = Chip> {
    prop_oneof![Just(Chip::Evergreen), Just(Chip::Cayman)]
}

fn chan() -> impl Strategy<Value = Chan> {
    (0usize..4).prop_map(Chan::from_index)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

    /// Decoders and encoders are inverse on every word the decoders accept: no field is lost,
    /// no reserved bit is dropped silently.
    #[test]
    fn decoded_words_reencode_exactly(w0: u32, w1: u32, w2: u32, chip in chip()) {
        if let Ok(i) = CfInstruction::decode([w0, w1], chip) {
            prop_assert_eq!(i.encode(chip), Ok([w0, w1]));
        }
        if let Ok(a) = AluWord::decode([w0, w1], chip) {
            prop_assert_eq!(a.encode(chip), Ok([w0, w1]));
        }
        if let Ok(f) = VtxFetch::decode([w0, w1, w2, 0], chip) {
            prop_assert_eq!(f.encode(chip), Ok([w0, w1, w2, 0]));
        }
    }

    /// Words that decode for the chip carry no field of the other chip.
    #[test]
    fn chip_specific_fields_stay_on_their_chip(w0: u32, w1: u32, w2: u32) {
        if let Ok(f) = VtxFetch::decode([w0, w1, w2, 0], Chip::Cayman) {
            prop_assert!(!f.mega_fetch && f.mega_fetch_count == 0);
        }
        if let Ok(CfInstruction::Cf(c)) = CfInstruction::decode([w0, w1], Chip::Cayman) {
            prop_assert!(!c.end_of_program && c.inst != CfInst::Vc);
        }
        if let Ok(CfInstruction::Cf(c)) = CfInstruction::decode([w0, w1], Chip::Evergreen) {
            prop_assert!(c.inst != CfInst::CfEnd);
        }
    }
}

fn operand(op3: bool) -> impl Strategy<Value = Operand> {
    let src = prop_oneof![
        4 => (0u8..8, chan()).prop_map(|(g, c)| Src::gpr(g, c)),
        2 => (0u8..2, prop_oneof![0u16..4, 16u16..20, 40u16..44], chan()).prop_map(|(b, i, c)| Src::cb(b, i, c)),
        2 => any::<u32>().prop_map(Src::value),
        1 => prop::sample::select(vec![0u32, 1, 0xFFFF_FFFF, 0x3F80_0000, 0x3F00_0000]).prop_map(Src::value),
        1 => chan().prop_map(Src::Pv),
    ];
    (src, any::<bool>(), any::<bool>()).prop_map(move |(src, neg, abs)| Operand {
        src,
        neg,
        abs: abs && !op3,
    })
}

fn inst() -> impl Strategy<Value = AluInst> {
    prop::sample::select(AluOp::ALL.to_vec()).prop_flat_map(|op| {
        let op3 = op.is_op3();
        (0u8..16, chan(), any::<bool>(), prop::collection::vec(operand(op3), 3), any::<bool>())
            .prop_map(move |(gpr, c, write, srcs, clamp)| {
                let dst = Dst { gpr, chan: c, write: write || op3 };
                let mut i = AluInst::new(op, dst, &srcs);
                i.clamp = clamp;
                if op.is_pred_set() {
                    i.update_exec_mask = true;
                    i.update_pred = true;
                }
                i
            })
    })
}

#[derive(Debug, Clone)]
enum Item {
    Alu(AluCfInst, Vec<Vec<AluInst>>),
    Fetch(Vec<(u8, u8, Chan, u16, DataFormat)>),
    Store(u8, u8, u8),
    Nop,
}

fn item() -> impl Strategy<Value = Item> {
    let kind = prop::sample::select(vec![AluCfInst::Alu, AluCfInst::AluElseAfter]);
    let groups = prop::collection::vec(prop::collection::vec(inst(), 1..5), 1..6);
    let formats =
        prop::sample::select(vec![DataFormat::Fmt32, DataFormat::Fmt32x2, DataFormat::Fmt32x4]);
    prop_oneof![
        4 => (kind, groups).prop_map(|(k, g)| Item::Alu(k, g)),
        2 => prop::collection::vec((0u8..16, 0u8..16, chan(), any::<u16>(), formats), 1..4).prop_map(Item::Fetch),
        1 => (0u8..16, 0u8..16, 1u8..16).prop_map(|(i, d, m)| Item::Store(i, d, m)),
        1 => Just(Item::Nop),
    ]
}

/// The value an operand of a decoded word reads, resolved through the clause's kcache sets
/// and the group's literals.
fn resolve(s: &AluSrc, kcache: &[Kcache; 2], literals: &[u32]) -> Src {
    match s.sel {
        alu::Sel::Gpr(g) => Src::gpr(g, s.chan),
        alu::Sel::Kcache { set, index } => {
            let k = kcache[usize::from(set)];
            assert_ne!(k.mode, KcacheMode::Nop, "selector of an unlocked kcache set");
            Src::cb(k.bank, u16::from(k.addr) * 16 + u16::from(index), s.chan)
        }
        alu::Sel::Inline(c) => Src::Inline(c),
        alu::Sel::Literal => Src::Literal(literals[s.chan.index()]),
        alu::Sel::Pv => Src::Pv(s.chan),
        alu::Sel::Ps => Src::Ps,
    }
}

/// How the hardware assigns slots while decoding a group in order (A4, A8): returns the slot
/// of each word, or `None` if two words land in one slot.
fn hardware_slots(chip: Chip, words: &[AluWord]) -> Option<Vec<Slot>> {
    let mut used = [false; 5];
    let mut slots = Vec::new();
    for w in words {
        let own = Slot::of_chan(w.dst_chan);
        let slot = match chip {
            Chip::Cayman => own,
            Chip::Evergreen if w.op.evergreen_unit() == alu::EgUnit::Trans => Slot::T,
            Chip::Evergreen if used[own.index()] => Slot::T,
            Chip::Evergreen => own,
        };
        if std::mem::replace(&mut used[slot.index()], true) {
            return None;
        }
        slots.push(slot);
    }
    Some(slots)
}

/// The fields of one ALU word the builder derives from a written instruction: opcode,
/// destination, modifiers and the sources (resolved to what they read) with their modifiers.
#[derive(Debug, Clone, PartialEq)]
struct WordFields {
    op: AluOp,
    dst_gpr: u8,
    dst_chan: Chan,
    write: bool,
    clamp: bool,
    update_exec_mask: bool,
    update_pred: bool,
    /// Source, `NEG`, `ABS` (OP2 sources 0 and 1 only) of each used source.
    src: Vec<(Src, bool, bool)>,
}

impl WordFields {
    /// The word of `i` in the slot of channel `c`.
    fn written(i: &AluInst, c: Chan) -> Self {
        Self {
            op: i.op,
            dst_gpr: i.dst.gpr,
            dst_chan: c,
            write: c == i.dst.chan && (i.dst.write || i.op.is_op3()),
            clamp: i.clamp,
            update_exec_mask: i.update_exec_mask,
            update_pred: i.update_pred,
            src: i
                .sources()
                .iter()
                .enumerate()
                .map(|(k, o)| (o.src, o.neg, k < 2 && o.abs))
                .collect(),
        }
    }

    fn decoded(w: &AluWord, kcache: &[Kcache; 2], literals: &[u32]) -> Self {
        Self {
            op: w.op,
            dst_gpr: w.dst_gpr,
            dst_chan: w.dst_chan,
            write: w.write_mask,
            clamp: w.clamp,
            update_exec_mask: w.update_exec_mask,
            update_pred: w.update_pred,
            src: w.src[..w.op.src_count()]
                .iter()
                .enumerate()
                .map(|(k, s)| (resolve(s, kcache, literals), s.neg, k < 2 && w.abs[k]))
                .collect(),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn built_programs_decode_back(chip in chip(), items in prop::collection::vec(item(), 1..7)) {
        let mut nodes = vec![Node::EMPTY; 1024];
        let mut b = Builder::new(chip, &mut nodes);
        let mut groups: Vec<Vec<AluInst>> = Vec::new();
        let mut fetches: Vec<VtxFetch> = Vec::new();
        let mut exports: Vec<RatExport> = Vec::new();
        let mut rejected = 0usize;
        for it in &items {
            match it {
                Item::Alu(kind, gs) => {
                    b.alu(*kind).unwrap();
                    let mut any = false;
                    for g in gs {
                        match b.group(g) {
                            Ok(()) => {
                                any = true;
                                groups.push(g.clone());
                            }
                            // A rejected group leaves the builder as it was.
                            Err(_) => rejected += 1,
                        }
                    }
                    if !any {
                        let mov = vec![AluInst::new(AluOp::Mov, Dst::gpr(1, Chan::X), &[Src::gpr(0, Chan::X).into()])];
                        b.group(&mov).unwrap();
                        groups.push(mov);
                    }
                }
                Item::Fetch(fs) => {
                    b.fetch(FetchClause::Vertex).unwrap();
                    for &(dst, src, c, offset, fmt) in fs {
                        let mut f = VtxFetch::load(chip, fmt, dst, [DstSel::X, DstSel::Y, DstSel::Zero, DstSel::Mask], src, c, 1);
                        f.offset = offset;
                        b.vfetch(&f).unwrap();
                        fetches.push(f);
                    }
                }
                Item::Store(index, data, mask) => {
                    let r = RatExport::indexed(RatCfInst::MemRatCacheless, RatInst::store_for(chip), 0, *index, *data, *mask);
                    b.rat(&r).unwrap();
                    exports.push(r);
                }
                Item::Nop => b.nop().unwrap(),
            }
        }
        b.end().unwrap();
        let mut out = vec![0u32; 8192];
        let info = b.finish(&mut out).unwrap();
        let walked = walk(&out[..info.words], chip);
        prop_assert_eq!(walked.cf.len(), info.cf_count);

        // ALU groups, in order, with every instruction's fields.
        let mut decoded_groups = Vec::new();
        for (i, clause) in &walked.clauses {
            if let common::Clause::Alu(gs) = clause {
                let CfInstruction::Alu(a) = walked.cf[*i] else { panic!("ALU clause from a non-ALU CF") };
                for g in gs {
                    decoded_groups.push((a.kcache, g.clone()));
                }
            }
        }
        prop_assert_eq!(decoded_groups.len(), groups.len(), "{} groups rejected", rejected);
        for ((kcache, dg), written) in decoded_groups.iter().zip(&groups) {
            // Slots as the hardware decodes them are distinct, LAST only on the last word.
            prop_assert!(hardware_slots(chip, &dg.insts).is_some(), "slot clash in {:?}", dg.insts);
            for (k, w) in dg.insts.iter().enumerate() {
                prop_assert_eq!(w.last, k + 1 == dg.insts.len());
            }
            // Every written instruction becomes one word per slot it occupies (Cayman copies
            // its replicated opcodes, §4.2; only the copy in the destination channel writes).
            // The group's words must be exactly those, in any order: words are compared as a
            // multiset because a group may hold instructions that differ only in fields other
            // than opcode, GPR and sources (two `ALU_NOP`s, which read nothing, differ only in
            // `DST_CHAN`), so matching by opcode, GPR and sources alone is ambiguous.
            let mut expected: Vec<WordFields> = Vec::new();
            for i in written {
                let copies: &[Chan] = match (chip, i.op.cayman_unit()) {
                    (Chip::Cayman, alu::CmUnit::Replicated) => &[Chan::X, Chan::Y, Chan::Z, Chan::W],
                    (Chip::Cayman, alu::CmUnit::Xyz) if i.dst.chan == Chan::W => &[Chan::X, Chan::Y, Chan::Z, Chan::W],
                    (Chip::Cayman, alu::CmUnit::Xyz) => &[Chan::X, Chan::Y, Chan::Z],
                    _ => std::slice::from_ref(&i.dst.chan),
                };
                for &c in copies {
                    expected.push(WordFields::written(i, c));
                }
            }
            let mut unmatched: Vec<WordFields> =
                dg.insts.iter().map(|w| WordFields::decoded(w, kcache, &dg.literals)).collect();
            for e in &expected {
                let at = unmatched.iter().position(|d| d == e);
                prop_assert!(at.is_some(), "{:?} not in {:?}", e, dg.insts);
                unmatched.swap_remove(at.unwrap());
            }
            prop_assert!(unmatched.is_empty(), "words nobody wrote: {:?}", unmatched);
        }
        prop_assert_eq!(walked.fetches().into_iter().copied().collect::<Vec<_>>(), fetches);
        let rats: Vec<RatExport> = walked.cf.iter().filter_map(|c| if let CfInstruction::Rat(r) = c { Some(*r) } else { None }).collect();
        prop_assert_eq!(rats, exports);
    }
}
