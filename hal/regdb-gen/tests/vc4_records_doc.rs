//! The VideoCore IV control-record table (`hal/regdb/packets/vc4.toml`) against
//! broadcom-videocore-iv-3d §9 Table 38, read independently of the Python extractor: every
//! record the table prints (id, "(B)"/"(R)" list suffix) is in ours, every field row (width,
//! offset, the words of its description) is one of our fields at the same bits, each record's
//! size is the id byte plus the bytes up to its highest printed bit, and the sizes agree with
//! the ones Linux vc4 vc4_packet.h defines. What differs from the print is a reviewed
//! correction that names its public source. Skipped where the document is absent.

use regdb_gen::packets::{PacketTable, Record, RecordField, packet_table_path};

fn table() -> PacketTable {
    let path = packet_table_path("vc4").expect("the vc4 record table");
    PacketTable::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// One record block of Table 38: its id, the heading cells, its (width, offset, description)
/// rows.
struct Block {
    id: u8,
    heading: String,
    rows: Vec<(u32, u32, String)>,
}

fn table38(doc: &str) -> Vec<Block> {
    let start = doc.find("Table 38: Control Record IDs and Data Summary").expect("Table 38");
    let end = start + doc[start..].find("Primitive List Formats").expect("end of Table 38");
    let mut blocks: Vec<Block> = Vec::new();
    for line in doc[start..end].lines() {
        let cells: Vec<&str> = line.split('\t').map(str::trim).collect();
        let code = cells[0].replace("<mark>", "").replace("</mark>", "");
        if let Ok(id) = code.parse::<u8>() {
            blocks.push(Block { id, heading: cells[1..].concat(), rows: Vec::new() });
        } else if code.is_empty()
            && cells.len() > 3
            && let (Ok(width), Some(block)) = (cells[1].parse::<u32>(), blocks.last_mut())
        {
            // ids 16 and 17 print their one field without an offset: it starts the record.
            let offset = cells[2].parse::<u32>().unwrap_or(0);
            block.rows.push((width, offset, cells[3..].join(" ")));
        }
    }
    blocks
}

fn offset(f: &RecordField) -> u32 {
    (f.byte as u32 - 1) * 8 + f.lsb
}

fn words(s: &str) -> String {
    s.replace("<sub>", "").replace("</sub>", "").to_ascii_uppercase()
}

fn ours<'a>(t: &'a PacketTable, block: &Block, nth: usize) -> &'a Record {
    // Table 38 prints 105 twice; the second is 106 (a reviewed correction).
    let id = if nth == 1 && block.id == 105 { 106 } else { block.id };
    t.records.iter().find(|r| r.opcode == id).unwrap_or_else(|| panic!("no record {id}"))
}

#[test]
fn every_table_38_record_is_in_the_table_with_its_lists() {
    let Some(doc) = gpu_docs::document("broadcom-videocore-iv-3d.txt") else { return };
    let t = table();
    let blocks = table38(&doc);
    assert_eq!(blocks.iter().filter(|b| b.id == 105).count(), 2, "the document prints 105 twice");
    let mut seen_105 = 0;
    let mut ids = Vec::new();
    for b in &blocks {
        let r = ours(&t, b, if b.id == 105 { seen_105 } else { 0 });
        seen_105 += usize::from(b.id == 105);
        ids.push(r.opcode);
        let printed = if b.heading.contains("(B)") {
            "binning"
        } else if b.heading.contains("(R)") {
            "rendering"
        } else {
            "both"
        };
        assert!(
            r.lists == printed || r.source.is_some(),
            "{}: lists {} vs {printed}",
            r.name,
            r.lists
        );
    }
    let mut table_ids: Vec<u8> = t.records.iter().map(|r| r.opcode).collect();
    table_ids.sort_unstable();
    ids.sort_unstable();
    assert_eq!(ids, table_ids, "ids in Table 38 and in the table");
    assert_eq!(t.records.len(), 42);
}

#[test]
fn every_printed_field_is_a_field_at_the_same_bits() {
    let Some(doc) = gpu_docs::document("broadcom-videocore-iv-3d.txt") else { return };
    let t = table();
    let mut seen_105 = 0;
    let mut checked = 0;
    for b in table38(&doc) {
        let r = ours(&t, &b, if b.id == 105 { seen_105 } else { 0 });
        seen_105 += usize::from(b.id == 105);
        for (width, at, description) in &b.rows {
            if description.starts_with("Unused") {
                assert!(
                    r.fields.iter().all(|f| offset(f) != *at),
                    "{}: a field over the unused bits at {at}",
                    r.name
                );
                continue;
            }
            let matching = r.fields.iter().find(|f| f.width() == *width && offset(f) == *at);
            match matching {
                Some(f) => {
                    // Every word of the name is written in the description.
                    let text = words(description);
                    for w in f.name.split('_').filter(|w| !w.is_empty()) {
                        assert!(
                            text.contains(w),
                            "{}.{}: {w:?} not in {description:?}",
                            r.name,
                            f.name
                        );
                    }
                    checked += 1;
                }
                None => {
                    // A row printed at other bits: our field names the source of its bits.
                    let corrected =
                        r.fields.iter().find(|f| f.width() == *width && f.source.is_some());
                    assert!(
                        corrected.is_some(),
                        "{}: no field for {width} bits at {at} ({description})",
                        r.name
                    );
                }
            }
        }
        // Nothing in our table that Table 38 does not print, unless corrected with a source.
        for f in &r.fields {
            let printed = b.rows.iter().any(|(w, at, _)| *w == f.width() && *at == offset(f));
            assert!(printed || f.source.is_some(), "{}.{} is not in Table 38", r.name, f.name);
        }
        // The size: the id byte and the bytes up to the highest printed bit.
        let end = b.rows.iter().map(|(w, at, _)| w + at).max().unwrap_or(0);
        assert_eq!(r.bytes, 1 + end.div_ceil(8) as usize, "{}: size", r.name);
    }
    assert!(checked >= 95, "only {checked} fields checked");
}

/// Record sizes from Linux vc4 vc4_packet.h (the `VC4_PACKET_*_SIZE` it defines; it has none
/// for NOP, Branch, Return, the VG and flat-shading records, point size, line width, RHT X
/// boundary, depth offset and Z clipping, whose sizes come from Table 38 alone). The document
/// prints no size, so the sizes derived from its bit offsets are checked against them.
const LINUX_SIZES: &[(u8, usize)] = &[
    (0, 1),
    (4, 1),
    (5, 1),
    (6, 1),
    (7, 1),
    (8, 1),
    (17, 5),
    (24, 1),
    (25, 1),
    (26, 5),
    (27, 5),
    (28, 7),
    (29, 7),
    (32, 14),
    (33, 10),
    (56, 2),
    (64, 5),
    (65, 5),
    (96, 4),
    (102, 9),
    (103, 5),
    (105, 9),
    (106, 9),
    (112, 16),
    (113, 11),
    (114, 14),
    (115, 3),
];

#[test]
fn record_sizes_agree_with_linux_vc4() {
    let t = table();
    for &(id, size) in LINUX_SIZES {
        let r = t.records.iter().find(|r| r.opcode == id).unwrap_or_else(|| panic!("no {id}"));
        assert_eq!(r.bytes, size, "{}", r.name);
        assert!(!r.open_ended, "{}", r.name);
    }
    // The records Table 38 prints with an escape-terminated list have no one size.
    for id in [42, 48, 49] {
        assert!(t.records.iter().any(|r| r.opcode == id && r.open_ended), "{id}");
    }
}

#[test]
fn address_fields_hold_what_the_document_says() {
    let t = table();
    let field = |id: u8, name: &str| {
        let r = t.records.iter().find(|r| r.opcode == id).expect("record");
        r.fields.iter().find(|f| f.name == name).cloned().unwrap_or_else(|| panic!("{name}"))
    };
    // "Memory address of Tile. In multiples of 16 bytes." (26): bits 31:4 of the address.
    let tile = field(26, "MEMORY_ADDRESS_OF_TILE");
    assert_eq!((tile.byte, tile.msb, tile.lsb, tile.address_lsb), (1, 31, 4, Some(4)));
    // "Fragment Shader Code Address (8-byte multiple)" (67).
    assert_eq!(field(67, "FRAGMENT_SHADER_CODE_ADDRESS").address_lsb, Some(3));
    // A full 32-bit address: the branch target.
    assert_eq!(field(16, "ABSOLUTE_BRANCH_ADDRESS").address_lsb, Some(0));
    // Block sizes: the codes of "(32,64,128,256 bytes)".
    let block = field(112, "TILE_ALLOCATION_BLOCK_SIZE");
    assert_eq!(block.values.iter().map(|v| v.value).collect::<Vec<_>>(), [0, 1, 2, 3]);
}
