//! The packet tables (`hal/regdb/packets/*.toml`) against the documents, read independently of
//! the Python extractor: the R5xx §6.2.1 summary table row by row (name and IT_OPCODE, in order)
//! and each packet's section heading; every Evergreen §9 packet heading (section, name, chips).
//! Every body field of a packet the document describes is checked against the text of the
//! packet's section: its name (as written, spaces or case aside) and its bit range appear there.
//! The documents are found by `gpu-docs`; the checks are skipped where they are absent. The
//! generated `packets` modules are the tables' image (`generated_code_is_up_to_date`).

use std::collections::HashSet;

use regdb_gen::packets::{PacketTable, packet_table_path};

fn table(family: &str) -> PacketTable {
    let path = packet_table_path(family).expect("a packet table");
    PacketTable::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `(name, opcode)` rows of the R5xx table between "6.2.1" and "6.2.2".
fn r5xx_summary(doc: &str) -> Vec<(String, u8)> {
    let start = doc.find("6.2.1 <u>Summary of packets</u>").expect("§6.2.1 heading");
    let end = start + doc[start..].find("6.2.2 ").expect("§6.2.2 heading");
    doc[start..end]
        .lines()
        .filter_map(|line| {
            let mut cols = line.split('\t');
            let name = cols.next()?.trim();
            let op = cols.next()?.trim().strip_prefix("0x")?;
            Some((name.to_string(), u8::from_str_radix(op, 16).ok()?))
        })
        .collect()
}

#[test]
fn r5xx_table_is_the_summary_of_packets() {
    let Some(doc) = gpu_docs::document("amd-r5xx-acceleration.txt") else { return };
    let summary = r5xx_summary(&doc);
    assert_eq!(summary.len(), 28, "{summary:?}");
    let t = table("r5xx");
    let ours: Vec<(String, u8)> =
        t.packets.iter().map(|p| (p.doc_name.clone(), p.opcode.expect("opcode"))).collect();
    assert_eq!(ours, summary);
    for p in &t.packets {
        // "6.2.2.1 NOP" or "6.2.4 <u>PRED_EXEC</u>".
        let plain = format!("\n{} {}\n", p.section, p.doc_name);
        let underlined = format!("\n{} <u>{}</u>\n", p.section, p.doc_name);
        assert!(
            doc.contains(&plain) || doc.contains(&underlined),
            "{}: no heading §{}",
            p.name,
            p.section
        );
        assert_eq!(p.chips, "R5xx");
    }
}

#[test]
fn every_evergreen_section_9_packet_is_in_the_table() {
    let Some(doc) = gpu_docs::document("amd-evergreen-cayman-acceleration.txt") else { return };
    // Headings "9.3.4 **DRAW INDEX AUTO - R7xx/Evergreen/Cayman**", some after another heading
    // on the same line.
    let mut headings = Vec::new();
    for line in doc.lines() {
        let line = line.replace("**", " ");
        // The last "9.a.b NAME - CHIPS" on the line.
        let heading = line.match_indices("9.").filter_map(|(at, _)| {
            let (section, title) = line[at..].split_once(' ')?;
            let numbers: Vec<&str> = section.split('.').collect();
            let ok = numbers.len() == 3
                && ("2"..="7").contains(&numbers[1])
                && numbers[2].parse::<u32>().is_ok();
            let (name, chips) = title.trim().rsplit_once(" - ")?;
            ok.then(|| (section.to_string(), name.trim().to_string(), chips.to_string()))
        });
        if let Some(h) = heading.last() {
            headings.push(h);
        }
    }
    assert_eq!(headings.len(), 48, "{headings:?}");
    let t = table("evergreen");
    let ours: Vec<(String, String, String)> = t
        .packets
        .iter()
        .filter(|p| p.source.is_none())
        .map(|p| (p.section.clone(), p.doc_name.clone(), p.chips.clone()))
        .collect();
    assert_eq!(ours, headings);
}

#[test]
fn opcodes_are_unique_and_sourced() {
    for family in ["r5xx", "evergreen"] {
        let t = table(family);
        let mut seen = HashSet::new();
        for p in &t.packets {
            if let Some(op) = p.opcode {
                assert!(seen.insert(op), "{family}: {} repeats opcode {op:#x}", p.name);
                let source = p.opcode_source.as_deref().unwrap_or_default();
                assert!(
                    source.starts_with(&t.meta.doc_label)
                        || source.starts_with("Linux radeon")
                        || source.starts_with("Mesa r600"),
                    "{family}: {} opcode from {source:?}",
                    p.name
                );
            }
        }
    }
    // The document gives every R5xx opcode and no Evergreen one.
    assert!(table("r5xx").packets.iter().all(|p| p.opcode.is_some()));
    let eg = table("evergreen");
    assert!(eg.packets.iter().filter_map(|p| p.opcode_source.as_deref()).all(|s| {
        s.contains("evergreend.h") || s.contains("nid.h") || s.contains("r600d_common.h")
    }));
    // Every packet the document omits names its source.
    assert!(eg.packets.iter().all(|p| p.section.is_empty() == p.source.is_some()));
    // What the Evergreen writer and driver emit has an opcode.
    for name in ["NOP", "INDIRECT_BUFFER", "SET_CONFIG_REG", "SET_CONTEXT_REG", "EVENT_WRITE_EOP"] {
        assert!(eg.packets.iter().any(|p| p.name == name && p.opcode.is_some()), "{name}");
    }
}

/// The text of the section that describes `section` in `doc` (from its heading to the next
/// heading of the same family of sections).
fn section_text<'a>(doc: &'a str, section: &str, next_prefix: &str) -> &'a str {
    let at = doc
        .match_indices(&format!("{section} "))
        .map(|(i, _)| i)
        .find(|&i| i == 0 || doc[..i].ends_with('\n') || doc[..i].ends_with("**"))
        .unwrap_or_else(|| panic!("no heading §{section}"));
    let rest = &doc[at + section.len()..];
    let end = rest
        .match_indices(&format!("\n{next_prefix}"))
        .map(|(i, _)| i)
        .next()
        .unwrap_or(rest.len().min(20_000));
    &rest[..end]
}

/// The spellings of a bit range the documents use: "[31:29]", "31:29", "[8]", "8 -", "Bit 8".
fn range_written(text: &str, msb: u32, lsb: u32) -> bool {
    let forms = if msb == lsb {
        vec![format!("[{msb}]"), format!("{msb} - "), format!("{msb}: "), format!("Bit {msb}")]
    } else {
        vec![format!("[{msb}:{lsb}]"), format!("{msb}:{lsb}"), format!("({msb}:{lsb})")]
    };
    forms.iter().any(|f| text.contains(f.as_str()))
}

fn squash(s: &str) -> String {
    s.chars().filter(|c| c.is_ascii_alphanumeric()).collect::<String>().to_ascii_uppercase()
}

#[test]
fn every_field_is_written_in_its_packets_section() {
    for (family, next) in [("r5xx", "6."), ("evergreen", "9.")] {
        let t = table(family);
        let Some(doc) = gpu_docs::document(&t.meta.document) else { return };
        let mut checked = 0;
        for p in t.packets.iter().filter(|p| p.source.is_none()) {
            let text = section_text(&doc, &p.section, next);
            let squashed = squash(text);
            for f in &p.fields {
                assert!(
                    // An alias is this project's name for another reading of documented bits.
                    squashed.contains(&squash(&f.name))
                        || f.name == "RESERVED"
                        || f.alias_of.is_some(),
                    "{family} {}: field {} is not named in §{}",
                    p.name,
                    f.name,
                    p.section
                );
                // A whole dword may be described without a range.
                let whole = f.msb == 31 && f.lsb == 0;
                assert!(
                    whole || range_written(text, f.msb, f.lsb),
                    "{family} {}: {} bits {}:{} are not written in §{}",
                    p.name,
                    f.name,
                    f.msb,
                    f.lsb,
                    p.section
                );
                checked += 1;
            }
        }
        assert!(checked > 20, "{family}: only {checked} fields checked");
    }
}

#[test]
fn evergreen_eop_fence_fields_are_the_documents() {
    // §9.6.2: DATA_SEL 31:29 and INT_SEL 25:24 in DW4, the dword after ADDRESS_LO.
    let t = table("evergreen");
    let eop = t.packets.iter().find(|p| p.name == "EVENT_WRITE_EOP").expect("EVENT_WRITE_EOP");
    let field = |name: &str| eop.fields.iter().find(|f| f.name == name).expect(name);
    assert_eq!(
        (field("DATA_SEL").dword, field("DATA_SEL").msb, field("DATA_SEL").lsb),
        (4, 31, 29)
    );
    assert_eq!((field("INT_SEL").dword, field("INT_SEL").msb, field("INT_SEL").lsb), (4, 25, 24));
    assert_eq!((eop.min_dwords, eop.max_dwords), (5, Some(5)));
}

#[test]
fn every_numbered_body_dword_has_its_fields() {
    // Each dword the document numbers (not "3 to N" runs, not `{DATA_BLOCK}` blocks of any
    // length) is described by at least one field, so writers and decoders never fall back to
    // raw dwords for it.
    for family in ["r5xx", "evergreen"] {
        let t = table(family);
        for p in &t.packets {
            for row in p.body.iter().filter(|r| !r.field.starts_with('{')) {
                let Ok(dword) = row.dword.parse::<usize>() else { continue };
                assert!(
                    p.fields.iter().any(|f| f.dword == dword),
                    "{family} {} DW{dword} ({}) has no field",
                    p.name,
                    row.field
                );
            }
        }
    }
}
