//! The packet tables (`hal/regdb/packets/*.toml`) against the documents, read independently of
//! the Python extractor: the R5xx §6.2.1 summary table row by row (name and IT_OPCODE, in order)
//! and each packet's section heading; every Evergreen §9 packet heading (section, name, chips).
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
                    source.starts_with(&t.meta.doc_label) || source.starts_with("Linux radeon"),
                    "{family}: {} opcode from {source:?}",
                    p.name
                );
            }
        }
    }
    // The document gives every R5xx opcode and no Evergreen one.
    assert!(table("r5xx").packets.iter().all(|p| p.opcode.is_some()));
    let eg = table("evergreen");
    assert!(
        eg.packets
            .iter()
            .filter_map(|p| p.opcode_source.as_deref())
            .all(|s| s.contains("evergreend.h"))
    );
    // What the Evergreen writer and driver emit has an opcode.
    for name in ["NOP", "INDIRECT_BUFFER", "SET_CONFIG_REG", "SET_CONTEXT_REG", "EVENT_WRITE_EOP"] {
        assert!(eg.packets.iter().any(|p| p.name == name && p.opcode.is_some()), "{name}");
    }
}
