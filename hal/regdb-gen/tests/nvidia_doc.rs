//! The nVidia database (`hal/regdb/nvidia.toml`) checked against its document,
//! `nvidia-hardware-envytools.txt`, independently of the Python extractor: the falcon chapter
//! (§2.10), the PDAEMON section (§2.5.2), the common IO register list (§2.10.10 Table 18) and the
//! channel control area table (§2.8.3) are scanned here, and registers are spot-checked against
//! values read from the document by hand.

use regdb_gen::{Access, Database, Register};
use std::collections::BTreeSet;

const DOC: &str = "nvidia-hardware-envytools.txt";

fn db() -> Database {
    let path = regdb_gen::database_path("nvidia");
    Database::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The document with its markdown undone (`\_`, `\*`, `**`), or `None` where the documents are
/// absent (the test is skipped, `gpu-docs`).
fn doc() -> Option<String> {
    let text = gpu_docs::document(DOC)?;
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('\\', Some('_' | '*' | '[' | ']' | '&' | '$')) => {}
            ('*', Some('*')) => {
                chars.next();
            }
            _ => out.push(c),
        }
    }
    Some(out)
}

/// Text from the line starting with `from` up to the line starting with `to`.
fn section<'a>(doc: &'a str, from: &str, to: &str) -> &'a str {
    let start = doc.find(&format!("\n{from}")).unwrap_or_else(|| panic!("heading {from:?}")) + 1;
    let end =
        start + doc[start..].find(&format!("\n{to}")).unwrap_or_else(|| panic!("heading {to:?}"));
    &doc[start..end]
}

fn falcon_chapter(doc: &str) -> &str {
    section(doc, "# 2.10 falcon microprocessor", "2.11 Video decoding")
}

fn pdaemon_section(doc: &str) -> &str {
    section(doc, "## 2.5.2 PDAEMON", "# 2.5.3 ")
}

fn parse_num(s: &str) -> u64 {
    match s.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).unwrap(),
        None => s.parse().unwrap(),
    }
}

/// One `MMIO 0x... [+i*S] [/ I[0x...[+i*S]]] [, i<N]: NAME` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    mmio: u64,
    stride: Option<u64>,
    io: Option<u64>,
    io_stride: Option<u64>,
    count: Option<u64>,
    name: String,
}

/// A tiny cursor parser for the entry syntax (no regex crate here).
struct Cursor<'a> {
    s: &'a str,
}

impl<'a> Cursor<'a> {
    fn ws(&mut self) {
        self.s = self.s.trim_start_matches([' ', '\t']);
    }
    fn eat(&mut self, t: &str) -> bool {
        self.ws();
        match self.s.strip_prefix(t) {
            Some(rest) => {
                self.s = rest;
                true
            }
            None => false,
        }
    }
    fn take(&mut self, f: impl Fn(char) -> bool) -> &'a str {
        self.ws();
        let end = self.s.find(|c: char| !f(c)).unwrap_or(self.s.len());
        let (tok, rest) = self.s.split_at(end);
        self.s = rest;
        tok
    }
    fn number(&mut self) -> Option<u64> {
        let tok = self.take(|c| c.is_ascii_hexdigit() || c == 'x');
        (!tok.is_empty()).then(|| parse_num(tok))
    }
    /// `+ i * N`
    fn stride(&mut self) -> Option<u64> {
        let save = self.s;
        if self.eat("+")
            && self.eat("i")
            && self.eat("*")
            && let Some(n) = self.number()
        {
            return Some(n);
        }
        self.s = save;
        None
    }
}

/// Every entry of `text`, in order.
fn entries(text: &str) -> Vec<Entry> {
    let mut out = Vec::new();
    for (pos, _) in text.match_indices("MMIO 0x") {
        let mut c = Cursor { s: &text[pos + 5..] };
        let Some(mmio) = c.number() else { continue };
        let stride = c.stride();
        let (mut io, mut io_stride) = (None, None);
        if c.eat("/") && c.eat("I[") {
            io = c.number();
            io_stride = c.stride();
            if !c.eat("]") {
                continue;
            }
        }
        let count = if c.eat(",") && c.eat("i") && c.eat("<") { c.number() } else { None };
        if !(c.eat(":") || c.eat("[")) {
            continue;
        }
        let name = c.take(|ch| ch.is_ascii_uppercase() || ch.is_ascii_digit() || ch == '_');
        if name.is_empty() || !name.starts_with(|ch: char| ch.is_ascii_uppercase()) {
            continue;
        }
        out.push(Entry { mmio, stride, io, io_stride, count, name: name.to_string() });
    }
    out
}

fn in_block<'a>(db: &'a Database, block: &str, name: &str) -> Vec<&'a Register> {
    db.registers.iter().filter(|r| r.block == block && r.name == name).collect()
}

fn one<'a>(db: &'a Database, block: &str, name: &str) -> &'a Register {
    let regs = in_block(db, block, name);
    assert_eq!(regs.len(), 1, "{block}.{name}: {} registers", regs.len());
    regs[0]
}

fn field<'a>(r: &'a Register, name: &str) -> &'a regdb_gen::Field {
    r.fields.iter().find(|f| f.name == name).unwrap_or_else(|| panic!("{}.{name} missing", r.name))
}

/// Every entry must be in `block` at its offset, I[] address, stride and count.
fn check_entries(db: &Database, block: &str, found: &[Entry], corrected: &[Entry]) {
    for e in found {
        let e = corrected
            .iter()
            .find(|c| c.mmio == e.mmio && c.io.is_some() == e.io.is_some())
            .unwrap_or(e);
        // Same-name layouts at other offsets (HOST_IO_INDEX [v4+] at 0x0ac) are other entries.
        let regs: Vec<&Register> =
            in_block(db, block, &e.name).into_iter().filter(|r| r.offset == e.mmio).collect();
        assert!(!regs.is_empty(), "{block}.{} (MMIO {:#x}) missing", e.name, e.mmio);
        for r in regs {
            assert_eq!(r.io_address, e.io, "{} I[]", e.name);
            if let Some(stride) = e.stride {
                assert_eq!(r.stride, Some(stride), "{} stride", e.name);
                assert_eq!(r.io_stride, e.io_stride, "{} I[] stride", e.name);
            }
            if let Some(count) = e.count {
                assert_eq!(r.count.map(u64::from), Some(count), "{} count", e.name);
            }
        }
    }
}

#[test]
fn every_falcon_chapter_entry_is_in_the_falcon_block() {
    let Some(doc) = doc() else { return };
    let found = entries(falcon_chapter(&doc));
    // Prose entries of §2.10.4 .. §2.10.12, with and without I[] (host-only 0xf00 window).
    assert_eq!(found.len(), 39, "{found:#?}");
    let with_io = found.iter().filter(|e| e.io.is_some()).count();
    assert_eq!(with_io, 36);
    check_entries(&db(), "FALCON", &found, &[]);
}

#[test]
fn every_pdaemon_entry_is_in_the_pdaemon_block() {
    let Some(doc) = doc() else { return };
    let found = entries(pdaemon_section(&doc));
    // Entries whose text the corrections repair (hal/regdb/corrections/nvidia.toml), as read by
    // hand: the stride `i*10` lost its 0x (I[] stride 0x400 = 0x10 << 6), COUNTER_COUNT and
    // MMIO_TIMEOUT repeat their neighbour's I[] address. Names with a lost underscore
    // (`TIMER INTR`, `CRC STATE`, `COUNTER COUNT`, `[MMIO ERR]`) scan as their first word and
    // are listed here under their real name.
    let fixed = |mmio, stride, io, io_stride, name: &str| Entry {
        mmio,
        stride,
        io: Some(io),
        io_stride,
        count: None,
        name: name.to_string(),
    };
    let corrected = [
        fixed(0x504, Some(0x10), 0x14100, Some(0x400), "COUNTER_MASK"),
        fixed(0x508, Some(0x10), 0x14200, Some(0x400), "COUNTER_COUNT"),
        fixed(0x50c, Some(0x10), 0x14300, Some(0x400), "COUNTER_MODE"),
        fixed(0x7a8, None, 0x1ea00, None, "MMIO_TIMEOUT"),
        fixed(0x680, None, 0x1a000, None, "TIMER_INTR"),
        fixed(0x494, None, 0x12500, None, "CRC_STATE"),
        fixed(0x7b0, None, 0x1ec00, None, "MMIO_ERR"),
    ];
    assert!(found.len() >= 40, "only {} entries found", found.len());
    check_entries(&db(), "PDAEMON", &found, &corrected);
}

#[test]
fn falcon_io_addresses_follow_the_indexed_layout() {
    // §2.10.10: host falcon_base + X is falcon I[X << 6] on G98:GF119.
    for r in db().registers.iter().filter(|r| r.block == "FALCON" || r.block == "PDAEMON") {
        if let Some(io) = r.io_address {
            assert_eq!(io, r.offset << 6, "{} I[{io:#x}] vs MMIO {:#x}", r.name, r.offset);
        } else {
            assert!(
                r.offset >= 0xf00,
                "{}: only the host window 0xf00+ has no I[] address",
                r.name
            );
        }
        if let Some(stride) = r.stride {
            assert_eq!(r.io_stride, Some(stride << 6), "{} I[] stride", r.name);
        }
    }
}

/// §2.10.10 Table 18 rows: `host<TAB>falcon<TAB>present on<TAB>NAME[<TAB>description]`.
#[test]
fn table18_rows_are_in_the_falcon_block() {
    let Some(doc) = doc() else { return };
    let db = db();
    let chapter = falcon_chapter(&doc);
    let table = section(chapter, "# Common IO register list", "# Scratch registers");
    let mut checked = 0;
    for line in table.lines() {
        let cols: Vec<&str> = line.split('\t').map(str::trim).collect();
        let start = cols.iter().position(|c| c.starts_with("0x")).unwrap_or(cols.len());
        let cols = &cols[start..];
        if cols.len() < 4 || !cols[0].starts_with("0x") || cols[0].contains(' ') {
            continue;
        }
        let host = parse_num(cols[0]);
        let name = cols[3];
        let (base, index) = match name.split_once('[') {
            Some((b, i)) => match i.strip_suffix(']').and_then(|i| i.parse::<u64>().ok()) {
                Some(i) => (b, Some(i)),
                None => continue, // `DATA_INDEX[5]  DATA[5]`: two rows merged by the OCR
            },
            None => (name, None),
        };
        if !base.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
            || base.is_empty()
        {
            continue; // `???`, or two names scrambled into one cell
        }
        // Only rows whose two addresses agree (I[] = host << 6) are facts; the OCR scrambled the
        // rest (e.g. `0x1e4 0x07a00 DATA_INDEX[5]`), see the [[text]] corrections.
        let io = if cols[1] == "-" { None } else { Some(parse_num(cols[1])) };
        if io.is_some_and(|io| io != host << 6) || (io.is_none() && host < 0xf00) {
            continue;
        }
        let at = |r: &&Register| {
            let stride = r.stride.unwrap_or(0);
            (0..u64::from(r.instances())).any(|i| r.offset + i * stride == host)
        };
        let regs: Vec<&Register> =
            db.registers.iter().filter(|r| r.block == "FALCON").filter(at).collect();
        if index.is_some_and(|i| i >= 4) && (base == "DATA_INDEX" || base == "DATA") {
            // Ports 4-7 exist in the I[] map but no engine of this document has them (§2.10.4:
            // 4 on PDAEMON, 1 elsewhere): the database stops at 4.
            assert!(regs.is_empty(), "{name}");
            continue;
        }
        assert!(!regs.is_empty(), "Table 18 {name} at {host:#x} missing");
        assert!(
            regs.iter().all(|r| r
                .io_address
                .map(|a| a
                    + (host - r.offset) / r.stride.unwrap_or(1).max(1) * r.io_stride.unwrap_or(0))
                == io),
            "{name} I[]"
        );
        checked += 1;
    }
    assert!(checked >= 60, "only {checked} Table 18 rows checked");
}

#[test]
fn channel_control_area_matches_section_2_8_3() {
    let Some(doc) = doc() else { return };
    let db = db();
    let area = section(&doc, "#### Channel control area", "# NV4-style mode");
    let mut rows = 0;
    for line in area.lines() {
        let cols: Vec<&str> = line.split('\t').collect();
        if cols.len() < 3 || !cols[0].starts_with("0x") {
            continue;
        }
        let (offset, rw, name) = (parse_num(cols[0]), cols[1], cols[2]);
        if name == "???" {
            continue;
        }
        let r = one(&db, "PFIFO_USER", name);
        assert_eq!(r.offset, offset, "{name}");
        let access = match rw {
            "R/W" => Access::ReadWrite,
            "R" => Access::Read,
            "W" => Access::Write,
            other => panic!("{name}: {other}"),
        };
        assert_eq!(r.access, access, "{name}");
        rows += 1;
    }
    assert_eq!(rows, 10);
    let block = db.block("PFIFO_USER").unwrap();
    assert!(block.relative && block.base == 0);
    // Hand-read spot checks (also envytools rnndb): USER area of G80 channels.
    for (name, offset) in
        [("DMA_PUT", 0x40), ("DMA_GET", 0x44), ("REF", 0x48), ("IB_GET", 0x88), ("IB_PUT", 0x8c)]
    {
        assert_eq!(one(&db, "PFIFO_USER", name).offset, offset, "{name}");
    }
    assert_eq!(one(&db, "PFIFO_USER", "IB_PUT").access, Access::ReadWrite);
    assert_eq!(one(&db, "PFIFO_USER", "IB_GET").access, Access::Read);
    assert_eq!(one(&db, "PFIFO_USER", "DMA_CGET").chipsets.as_deref(), Some("NV40-"));
    // "On G80 cards, channel 0 supports PIO mode and has channel control area at 0x800000,
    // while channels 1-126 support DMA mode and have channel control areas at 0xc00000 +
    // 0x2000 * channel ID."
    let user = &block.instances[0];
    assert_eq!(
        (user.name.as_str(), user.base, user.stride, user.first, user.count),
        ("USER_G80", 0xc0_0000, Some(0x2000), Some(1), Some(126))
    );
    assert_eq!(user.chipsets.as_deref(), Some("G80:GF100"));
}

#[test]
fn chipsets_follow_the_gpu_list_with_the_comparison_table_ids() {
    let Some(doc) = doc() else { return };
    let db = db();
    // §2.2.2: the list ranges are written against, e.g. "G200:GT218 means GPUs G200, MCP77,
    // MCP79, GT215, GT216".
    let names: Vec<&str> = db.chipsets.iter().map(|c| c.name.as_str()).collect();
    let at = |n: &str| names.iter().position(|x| *x == n).unwrap_or_else(|| panic!("{n}"));
    assert_eq!(names[at("G200")..at("GT218")], ["G200", "MCP77", "MCP79", "GT215", "GT216"]);
    assert_eq!(names[at("NV20")..at("NV30")], ["NV20", "NV2A", "NV25", "NV28"], "NV20:NV30");
    // Every listed name appears in §2.2.2 in this order.
    let list = section(&doc, "The full known GPU list", "### NV1 family");
    let mut from = 0;
    for n in &names {
        let found = list[from..].find(n).unwrap_or_else(|| panic!("{n} out of order"));
        from += found + n.len();
    }
    // GPU ids (PMC_BOOT_0 chipset codes), hand-read from the §2.2.2 family tables.
    let id = |n: &str| db.chipsets[at(n)].id;
    for (name, expect) in [
        ("NV10", 0x10),
        ("NV44", 0x44),
        ("G80", 0x50),
        ("G84", 0x84),
        ("G98", 0x98),
        ("GT215", 0xa3),
        ("MCP89", 0xaf),
        ("GF100", 0xc0),
        ("GF119", 0xd9),
        ("GK104", 0xe4),
    ] {
        assert_eq!(id(name), Some(expect), "{name}");
    }
    assert_eq!(id("NV4"), None, "pre-NV10 GPUs have no GPU id");
    let gt215 = &db.chipsets[at("GT215")].pci;
    assert_eq!((gt215[0].vendor, gt215[0].first, gt215[0].last), (0x10de, 0x0ca0, 0x0cbf));
}

#[test]
fn falcon_engines_are_instances_with_the_documented_bases() {
    let Some(doc) = doc() else { return };
    let db = db();
    let falcon = db.block("FALCON").unwrap();
    let base = |n: &str| falcon.instances.iter().find(|i| i.name == n).map(|i| i.base);
    // §2.5.2 falcon parameters: "BAR0 address: 0x10a000"; PDISPLAY's: "BAR0 address: 0x627000".
    assert!(doc.contains("BAR0 address: 0x10a000") && doc.contains("BAR0 address: 0x627000"));
    assert_eq!(base("PDAEMON"), Some(0x10a000));
    assert_eq!(base("PDISPLAY_DAEMON"), Some(0x627000));
    assert_eq!(db.block("PDAEMON").unwrap().base, 0x10a000, "the PDAEMON block agrees");
    // The others from public sources (envytools rnndb, nouveau).
    assert_eq!(base("PCOPY0"), Some(0x104000));
    assert_eq!(base("PVLD"), Some(0x084000));
    assert_eq!(base("FECS"), Some(0x409000));
    let classes: Vec<&str> = falcon.unit_classes.iter().map(|u| u.name.as_str()).collect();
    assert!(classes.contains(&"V3_PLUS") && classes.contains(&"CRYPTO"), "{classes:?}");
}

#[test]
fn ptimer_time_registers_match_the_falcon_aliases() {
    let Some(doc) = doc() else { return };
    let db = db();
    let block = db.block("PTIMER").unwrap();
    assert!(!block.relative);
    assert_eq!(block.base, 0x9000);
    let chapter = falcon_chapter(&doc);
    let mut seen = 0;
    for (pos, _) in chapter.match_indices("Alias of PTIMER's ") {
        let rest = &chapter[pos + "Alias of PTIMER's ".len()..];
        let name = rest.split_whitespace().next().unwrap();
        let addr = rest.split("[MMIO ").nth(1).unwrap().split(']').next().unwrap();
        let r = one(&db, "PTIMER", name);
        assert_eq!(block.base + r.offset, parse_num(addr), "{name}");
        seen += 1;
    }
    assert_eq!(seen, 2);
    assert_eq!(one(&db, "PTIMER", "TIME_LOW").offset, 0x400);
    assert_eq!(one(&db, "PTIMER", "TIME_HIGH").offset, 0x410);
    // The falcon aliases are read-only (§2.10.11 "Both of these registers are read-only").
    assert_eq!(one(&db, "FALCON", "TIME_LOW").access, Access::Read);
    assert_eq!(one(&db, "FALCON", "TIME_HIGH").access, Access::Read);
}

#[test]
fn hand_read_falcon_registers() {
    let db = db();
    let falcon = db.block("FALCON").unwrap();
    assert!(falcon.relative && falcon.base == 0);

    // §2.10.7 "MMIO 0x180 / I[0x06000]: CODE_INDEX", bits 2-15 address, 24/25 autoincrement.
    let code_index = one(&db, "FALCON", "CODE_INDEX");
    assert_eq!((code_index.offset, code_index.io_address), (0x180, Some(0x6000)));
    assert_eq!((field(code_index, "ADDRESS").msb, field(code_index, "ADDRESS").lsb), (15, 2));
    assert_eq!(field(code_index, "WRITE_AUTOINCREMENT").lsb, 24);
    assert_eq!(field(code_index, "READ_AUTOINCREMENT").lsb, 25);
    assert_eq!(field(code_index, "SECRET_LOCKDOWN").access, Some(Access::Read));
    assert_eq!(one(&db, "FALCON", "CODE").offset, 0x184);
    assert_eq!(one(&db, "FALCON", "CODE_VIRT").io_address, Some(0x6200));

    // §2.10.4 "MMIO 0x1c0 + i * 8 / I[0x07000 + i * 0x200]: DATA_INDEX", 4 ports on PDAEMON.
    let data_index = one(&db, "FALCON", "DATA_INDEX");
    assert_eq!(
        (
            data_index.offset,
            data_index.stride,
            data_index.count,
            data_index.io_address,
            data_index.io_stride
        ),
        (0x1c0, Some(8), Some(4), Some(0x7000), Some(0x200))
    );
    let data = one(&db, "FALCON", "DATA");
    assert_eq!((data.offset, data.stride, data.count), (0x1c4, Some(8), Some(4)));

    // §2.10.8 interrupts: set/clear/status triples, INTR_MODE [v3+ only] reset 0xfc04.
    assert_eq!(one(&db, "FALCON", "INTR").offset, 0x008);
    assert_eq!(one(&db, "FALCON", "INTR").access, Access::Read);
    assert_eq!(one(&db, "FALCON", "INTR_CLEAR").access, Access::Write);
    let mode = one(&db, "FALCON", "INTR_MODE");
    assert_eq!(
        (mode.offset, mode.units.as_deref(), mode.reset),
        (0xc, Some("V3_PLUS"), Some(0xfc04))
    );

    // §2.10.10 scratch registers and Table 18 UC_* registers (envytools rnndb falcon.xml agrees).
    for (name, offset) in
        [("SCRATCH0", 0x40), ("SCRATCH1", 0x44), ("UC_CTRL", 0x100), ("UC_ENTRY", 0x104)]
    {
        let r = one(&db, "FALCON", name);
        assert_eq!((r.offset, r.io_address), (offset, Some(offset << 6)), "{name}");
    }
    let uc_ctrl = one(&db, "FALCON", "UC_CTRL");
    assert_eq!(field(uc_ctrl, "START").lsb, 1);
    assert_eq!(field(uc_ctrl, "HALTED").lsb, 4);

    // §2.10.9 XFER_CTRL mode values.
    let xfer = one(&db, "FALCON", "XFER_CTRL");
    let mode = field(xfer, "MODE");
    assert_eq!((mode.msb, mode.lsb), (5, 4));
    let values: Vec<(&str, u64)> = mode.values.iter().map(|v| (v.name.as_str(), v.value)).collect();
    assert_eq!(values, [("DATA_LOAD", 0), ("CODE_LOAD", 1), ("DATA_STORE", 2)]);
    assert_eq!(field(xfer, "PORT").msb, 14);

    // Table 18 names two registers HOST_IO_INDEX: 0xffc [v0, v3] and 0x0ac [v4+] (renamed
    // HOST_IO_INDEX_V4 by a correction so both get a type).
    let old = one(&db, "FALCON", "HOST_IO_INDEX");
    assert_eq!((old.offset, old.units.as_deref()), (0xffc, Some("V0_AND_V3")));
    let v4 = one(&db, "FALCON", "HOST_IO_INDEX_V4");
    assert_eq!((v4.offset, v4.units.as_deref()), (0xac, Some("V4_PLUS")));
}

#[test]
fn hand_read_pdaemon_registers() {
    let db = db();
    let pdaemon = db.block("PDAEMON").unwrap();
    assert_eq!((pdaemon.base, pdaemon.relative), (0x10a000, false));

    // "MMIO 0x4a0+i*4 / I[0x12800+i*0x100], i<4: FIFO_PUT[i]"
    let put = one(&db, "PDAEMON", "FIFO_PUT");
    assert_eq!(
        (put.offset, put.stride, put.count, put.io_address, put.io_stride),
        (0x4a0, Some(4), Some(4), Some(0x12800), Some(0x100))
    );
    assert_eq!(one(&db, "PDAEMON", "MUTEX_TOKEN").count, Some(16));
    // Two entries on one line.
    assert_eq!(one(&db, "PDAEMON", "RFIFO_PUT").offset, 0x4c8);
    assert_eq!(one(&db, "PDAEMON", "RFIFO_GET").offset, 0x4cc);

    // "## MMIO 0x4e8 / I[0x13a00]: TIMER_CTRL" with a bit list and value lists.
    let ctrl = one(&db, "PDAEMON", "TIMER_CTRL");
    assert_eq!(field(ctrl, "RUNNING").lsb, 0);
    let source = field(ctrl, "SOURCE");
    assert_eq!(source.lsb, 4);
    assert_eq!(
        source.values.iter().map(|v| (v.name.as_str(), v.value)).collect::<Vec<_>>(),
        [("DCLK", 0), ("PTIMER_B5", 1)]
    );
    assert_eq!(field(ctrl, "MODE").lsb, 8);

    // MMIO_CTRL: "bits 0-1: request 0: XXX 1: read 2: write 3: XXX ... bit 12: BUSY [RO]"
    let mmio_ctrl = one(&db, "PDAEMON", "MMIO_CTRL");
    let req = field(mmio_ctrl, "REQUEST");
    assert_eq!((req.msb, req.lsb), (1, 0));
    assert_eq!(
        req.values.iter().map(|v| (v.name.as_str(), v.value)).collect::<Vec<_>>(),
        [("READ", 1), ("WRITE", 2)]
    );
    assert_eq!(field(mmio_ctrl, "BYTE_MASK").msb, 7);
    assert_eq!(field(mmio_ctrl, "BUSY").access, Some(Access::Read));
    assert_eq!(field(mmio_ctrl, "TRIGGER").lsb, 16);

    // MMIO_ERR: three chipset layouts.
    let layouts: BTreeSet<Option<&str>> =
        in_block(&db, "PDAEMON", "MMIO_ERR").iter().map(|r| r.chipsets.as_deref()).collect();
    assert_eq!(layouts, BTreeSet::from([Some("GT215:GF100"), Some("GF100:GF119"), Some("GF119-")]));
    for r in in_block(&db, "PDAEMON", "MMIO_ERR") {
        let addr = field(r, "ADDR");
        let expect = match r.chipsets.as_deref() {
            Some("GT215:GF100") => (31, 3),
            Some("GF100:GF119") => (30, 3),
            _ => (29, 4),
        };
        assert_eq!((addr.msb, addr.lsb), expect, "{:?}", r.chipsets);
    }

    // Idle counters: 4 on GT215:GF100, 8 on GF100+, 0x10 apart.
    let counts: BTreeSet<(Option<&str>, Option<u32>, Option<u64>)> =
        in_block(&db, "PDAEMON", "COUNTER_COUNT")
            .iter()
            .map(|r| (r.chipsets.as_deref(), r.count, r.stride))
            .collect();
    assert_eq!(
        counts,
        BTreeSet::from([
            (Some("GT215:GF100"), Some(4), Some(0x10)),
            (Some("GF100-"), Some(8), Some(0x10))
        ])
    );

    // IREDIR_ERR_DETAIL: bits 0, 4, 8, 12 (the document repeats 12; corrected).
    let detail = one(&db, "PDAEMON", "IREDIR_ERR_DETAIL");
    let bits: Vec<(&str, u32)> = detail.fields.iter().map(|f| (f.name.as_str(), f.lsb)).collect();
    assert_eq!(
        bits,
        [
            ("HOST_REQ_TIMEOUT", 0),
            ("HOST_REQ_REDUNDANT", 4),
            ("DAEMON_REDUNDANT", 8),
            ("HOST_REDUNDANT", 12)
        ]
    );
    assert_eq!(one(&db, "PDAEMON", "THERM_BYTE_MASK").reset, Some(0xf));
}

#[test]
fn hand_read_pmc_registers() {
    let db = db();
    let pmc = db.block("PMC").unwrap();
    assert_eq!((pmc.base, pmc.relative), (0, false));
    let boot = one(&db, "PMC", "BOOT_0");
    assert_eq!((boot.offset, boot.access), (0, Access::Read));
    let chipset = field(boot, "CHIPSET");
    assert_eq!((chipset.msb, chipset.lsb), (28, 20));
    assert_eq!(one(&db, "PMC", "INTR").offset, 0x100);
    let enable = one(&db, "PMC", "ENABLE");
    assert_eq!(enable.offset, 0x200);
    assert_eq!(field(enable, "PGRAPH").lsb, 12);
}

#[test]
fn every_field_fits_and_nothing_overlaps() {
    let db = db();
    for r in &db.registers {
        assert!([8, 16, 32].contains(&r.width), "{}", r.name);
        for (i, f) in r.fields.iter().enumerate() {
            assert!(f.lsb <= f.msb && f.msb < r.width, "{}.{} {}:{}", r.name, f.name, f.msb, f.lsb);
            for v in &f.values {
                assert!(v.value >> f.width() == 0, "{}.{}.{}", r.name, f.name, v.name);
            }
            for g in &r.fields[i + 1..] {
                assert_eq!(f.mask() & g.mask(), 0, "{}: {} overlaps {}", r.name, f.name, g.name);
            }
        }
        let block = db.block(&r.block).unwrap_or_else(|| panic!("{}: block {}", r.name, r.block));
        assert!(
            r.source.starts_with(&format!("{} §", db.meta.doc_label))
                || r.source.starts_with("Linux ")
                || r.source.starts_with("envytools "),
            "{}: source {:?}",
            r.name,
            r.source
        );
        if block.relative {
            assert!(r.offset < 0x1000, "{}: relative offsets stay inside the 4 KiB window", r.name);
        }
    }
}

#[test]
fn the_database_lints_clean_and_generates() {
    let db = db();
    assert_eq!(db.meta.family, "nvidia");
    assert_eq!(db.meta.document, DOC);
    let errors = regdb_gen::lint(&db);
    assert!(errors.is_empty(), "{errors:#?}");
    regdb_gen::generate(&db).expect("generates");
    let blocks: Vec<&str> = db.blocks.iter().map(|b| b.name.as_str()).collect();
    for b in ["PMC", "PTIMER", "PFIFO_USER", "FALCON", "PDAEMON"] {
        assert!(blocks.contains(&b), "block {b}");
    }
}
