//! The nVidia pushbuffer tables (`hal/regdb/packets/nvidia.toml`) against
//! nvidia-hardware-envytools §2.8, read independently of the Python extractor: every command
//! form is a branch of the §2.8.3 pusher pseudocode (its mask and value, its name in the
//! branch's comment, its mode condition) and every field is a `(word >> lsb) & mask` (or
//! `word & mask`) of that branch; the IB entry's fields are the "Word 0:" / "Word 1:" bit lists;
//! every method is a `mthd 0xNNNN / 0xNNN: NAME` heading of §2.8.4 and a row of its method
//! table with the same "Present on", and a field the document lists (`bits 0-2: operation`)
//! has its bits and values. Skipped where the document is absent.

use regdb_gen::packets::{PacketTable, packet_table_path};

fn table() -> PacketTable {
    let path = packet_table_path("nvidia").expect("the nvidia pushbuffer table");
    PacketTable::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn doc() -> Option<String> {
    let d = gpu_docs::document("nvidia-hardware-envytools.txt")?;
    Some(d.replace("\\_", "_").replace("\\&", "&"))
}

fn between<'a>(doc: &'a str, start: &str, end: &str) -> &'a str {
    let a = doc.find(start).unwrap_or_else(|| panic!("{start:?} not in the document"));
    let b = a + doc[a..].find(end).unwrap_or_else(|| panic!("{end:?} not after {start:?}"));
    &doc[a..b]
}

/// The branch of the pseudocode that matches `word & mask == value`: its lines up to the next
/// `} else`.
fn branch(code: &str, mask: u32, value: u32) -> Option<Vec<&str>> {
    let conditions = [
        format!("(word & {mask:#010x}) == {value:#010x}"),
        format!("(word & {mask:#x}) == {value}"),
        format!("(word & {mask:#010x}) == {value}"),
        format!("(word & {mask}) == {value}"),
        format!("word == {value:#010x}"),
    ];
    let lines: Vec<&str> = code.lines().collect();
    let i = lines.iter().position(|l| {
        conditions
            .iter()
            .enumerate()
            .any(|(k, c)| l.contains(c.as_str()) && (k < 4 || mask == u32::MAX))
    })?;
    let end =
        lines[i + 1..].iter().position(|l| l.contains("} else")).map_or(lines.len(), |e| i + 1 + e);
    Some(lines[i..end].to_vec())
}

#[test]
fn every_command_is_a_branch_of_the_pusher_pseudocode() {
    let Some(doc) = doc() else { return };
    let code = between(&doc, "The pusher pseudocode - pre-GF100", "# 2.8.4");
    let t = table();
    assert_eq!(t.commands.len(), 7, "old jump, jump, call, return, three method forms");
    for c in &t.commands {
        let b = branch(code, c.mask, c.value).unwrap_or_else(|| {
            panic!("{}: no branch for & {:#x} == {:#x}", c.name, c.mask, c.value)
        });
        assert!(b[1].contains(&format!("/* {} */", c.doc_name)), "{}: comment {:?}", c.name, b[1]);
        let condition = b[0];
        let mode = if condition.contains("!ib_enable") {
            "dma"
        } else if condition.contains("ib_enable") {
            "ib"
        } else {
            "both"
        };
        assert_eq!(c.modes, mode, "{}: {condition}", c.name);
        for f in c.fields.iter().filter(|f| f.word == 0) {
            let width_mask = (1u64 << (f.msb - f.lsb + 1)) - 1;
            let shifted = format!("(word >> {}) & {:#x}", f.lsb, width_mask);
            let shifted_dec = format!("(word >> {}) & {}", f.lsb, width_mask);
            // A target keeps the word's bits under a mask, with or without the low bits the
            // form requires to be zero.
            let masked = format!("word & {:#x}", (width_mask << f.lsb) as u32);
            let masked_old = format!("word & {:#x}", (width_mask << f.lsb | 3) as u32);
            let found = b.iter().any(|l| {
                l.contains(&shifted)
                    || l.contains(&shifted_dec)
                    || l.contains(&masked)
                    || l.contains(&masked_old)
            });
            assert!(
                found,
                "{}.{}: bits {}:{} not taken out of the word in {b:#?}",
                c.name, f.name, f.msb, f.lsb
            );
        }
        let ni = b.iter().find_map(|l| l.trim().strip_prefix("dma_state.ni = "));
        if let Some(ni) = ni {
            assert_eq!(c.non_increasing, ni.starts_with('1'), "{}", c.name);
        }
    }
    // The long form's second word: "dma_state.mcnt = word & 0xffffff".
    let long =
        t.commands.iter().find(|c| c.name == "LONG_NON_INCREASING_METHODS").expect("long form");
    let count = long.fields.iter().find(|f| f.word == 1).expect("count word");
    assert_eq!((count.msb, count.lsb), (23, 0));
    assert!(code.contains("dma_state.mcnt = word & 0xffffff;"));
}

#[test]
fn ib_entry_fields_are_the_documents_bit_lists() {
    let Some(doc) = doc() else { return };
    let words =
        between(&doc, "The IB entry is made of two 32-bit words", "When an IB entry is read");
    let t = table();
    let entry = &t.entries[0];
    assert_eq!((entry.name.as_str(), entry.words), ("IB_ENTRY", 2));
    let word1 = words.find("Word 1:").expect("Word 1");
    for f in &entry.fields {
        let range = if f.msb == f.lsb {
            format!("bit {}: ", f.lsb)
        } else {
            format!("bits {}-{}: ", f.lsb, f.msb)
        };
        let name = f.name.replace('_', " ");
        let text = if f.word == 0 { &words[..word1] } else { &words[word1..] };
        let line = text
            .lines()
            .find(|l| l.contains(&range))
            .unwrap_or_else(|| panic!("{}: {range:?} not under Word {}", f.name, f.word));
        assert!(line.replace('_', " ").contains(&name), "{}: {line:?}", f.name);
    }
    let low = entry.fields.iter().find(|f| f.name == "ADDRESS_LOW").expect("low");
    let high = entry.fields.iter().find(|f| f.name == "ADDRESS_HIGH").expect("high");
    assert!(words.contains("bits 2-31 of pushbuffer start address"));
    assert!(words.contains("bits 32-39 of pushbuffer start address"));
    assert_eq!((low.address_lsb, high.address_lsb), (Some(2), Some(32)));
}

#[test]
fn every_method_is_a_heading_and_a_row_of_the_method_table() {
    let Some(doc) = doc() else { return };
    let puller = between(&doc, "# 2.8.4 Puller", "# 2.9 PGRAPH");
    let t = table();
    for name in ["OBJECT", "REF_CNT", "SEMAPHORE_ADDRESS_HIGH", "SEMAPHORE_ADDRESS_LOW"] {
        assert!(t.methods.iter().any(|m| m.name == name), "{name} missing");
    }
    for m in &t.methods {
        let heading = format!(
            "mthd {:#06x} / {:#05x}: {}",
            m.method,
            m.method >> 2,
            m.name.replace('_', " ")
        );
        let found = puller.lines().any(|l| l.replace('_', " ").contains(&heading));
        assert!(found, "{}: no heading {heading:?}", m.name);
        let row = puller
            .lines()
            .find(|l| l.starts_with(&format!("{:#06x}\t", m.method)))
            .unwrap_or_else(|| panic!("{}: no method table row", m.name));
        let cols: Vec<&str> = row.split('\t').collect();
        assert_eq!(cols[1], m.chips, "{}: {row:?}", m.name);
    }
    let trigger = t.methods.iter().find(|m| m.name == "SEMAPHORE_TRIGGER").expect("trigger");
    let op = &trigger.fields[0];
    assert!(puller.contains("bits 0-2: operation"));
    assert_eq!((op.msb, op.lsb), (2, 0));
    for v in &op.values {
        assert!(puller.contains(&format!("- {}: {}", v.value, v.name)), "{}", v.name);
    }
    assert!(puller.contains("op = param & 7;"), "Tesla decodes three bits");
}
