//! `Opcode::ALL` against the §6.2.1 summary table of amd-r5xx-acceleration.txt, read from the
//! document itself (found by `gpu-docs`; skipped where the documents are absent).

use baregpu_ring::pm4::Opcode;

/// `(name, opcode)` rows of the table between "6.2.1" and "6.2.2".
fn summary_table(doc: &str) -> Vec<(String, u8)> {
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
fn every_summary_opcode_has_a_named_constant() {
    let Some(doc) = gpu_docs::document("amd-r5xx-acceleration.txt") else { return };
    let table = summary_table(&doc);
    assert_eq!(table.len(), 28, "{table:?}");
    let ours: Vec<(String, u8)> =
        Opcode::ALL.iter().map(|(n, o)| (n.to_string(), o.raw())).collect();
    assert_eq!(ours, table);
}
