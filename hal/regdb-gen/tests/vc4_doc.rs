//! The VideoCore IV V3D database (`hal/regdb/vc4.toml`) checked against its document,
//! `broadcom-videocore-iv-3d.txt` Section 10, independently of the Python extractor: Table 48 and
//! the bit ranges of the register description tables are scanned here, and a few registers are
//! spot-checked against values read from the document by hand.

use regdb_gen::{Access, Database, Field, Register};
use std::collections::{BTreeMap, BTreeSet};

const DOC: &str = "broadcom-videocore-iv-3d.txt";
/// Rows of Table 48 (three table parts).
const TABLE48_ROWS: usize = 78;
/// Registers without a Table 48 row: two the document describes (Tables 73, 74) and the
/// debugger block's configuration register user-program code writes (DBCFG); their offsets
/// come from Broadcom's reg_v3d.h via `[[add]]` corrections.
const ADDED: [(&str, u64); 3] =
    [("V3D_DBQITE", 0xe2c), ("V3D_DBQITC", 0xe30), ("V3D_DBCFG", 0xe00)];

fn db() -> Database {
    let path = regdb_gen::database_path("vc4");
    Database::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The document, or `None` where the documents are absent (the test is skipped, `gpu-docs`).
fn doc() -> Option<String> {
    gpu_docs::document(DOC)
}

/// Cyrillic letters the OCR put in place of Latin look-alikes.
fn normalise(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            'а' => 'a',
            'с' => 'c',
            'е' => 'e',
            'о' => 'o',
            'р' => 'p',
            'х' => 'x',
            'у' => 'y',
            'А' => 'A',
            'В' => 'B',
            'С' => 'C',
            'Е' => 'E',
            'Н' => 'H',
            'К' => 'K',
            'М' => 'M',
            'О' => 'O',
            'Р' => 'P',
            'Т' => 'T',
            'Х' => 'X',
            c => c,
        })
        .collect()
}

/// Section 10 of the document, up to Section 11.
fn section10(doc: &str) -> &str {
    let start = doc.find("# **Section 10: V3D Registers**").expect("Section 10 heading");
    let end = start + doc[start..].find("# **Section 11:").expect("Section 11 heading");
    &doc[start..end]
}

/// Table 48 spells the CTnRA0 pair V3D_CT00RA0 / V3D_CT01RA0; the database follows Table 52.
fn db_name(table48_name: &str) -> &str {
    match table48_name {
        "V3D_CT00RA0" => "V3D_CT0RA0",
        "V3D_CT01RA0" => "V3D_CT1RA0",
        n => n,
    }
}

/// (offset, name, size) of every Table 48 row.
fn table48(doc: &str) -> Vec<(u64, String, u32)> {
    let sec = section10(doc);
    let end = sec.find("# **V3D Register Definitions**").expect("end of Table 48");
    let mut rows = Vec::new();
    for line in sec[..end].lines() {
        let line = normalise(line);
        let cells: Vec<&str> = line.split('\t').map(str::trim).collect();
        if cells.len() < 2 || !cells[1].starts_with("V3D_") {
            continue;
        }
        assert_eq!(cells.len(), 4, "Table 48 row with {} cells: {line:?}", cells.len());
        let hex = cells[0].strip_prefix("0x").unwrap_or_else(|| panic!("offset of {line:?}"));
        let offset = u64::from_str_radix(hex, 16).unwrap_or_else(|e| panic!("{line:?}: {e}"));
        let size: u32 = cells[3].parse().unwrap_or_else(|e| panic!("{line:?}: {e}"));
        rows.push((offset, cells[1].to_string(), size));
    }
    rows
}

fn reg<'a>(db: &'a Database, name: &str) -> &'a Register {
    let mut regs = db.registers.iter().filter(|r| r.name == name);
    let r = regs.next().unwrap_or_else(|| panic!("{name} missing from the database"));
    assert!(regs.next().is_none(), "{name} defined twice");
    r
}

fn field<'a>(r: &'a Register, name: &str) -> &'a Field {
    r.fields
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("{} has no field {name}", r.name))
}

fn access(r: &Register, f: &Field) -> Access {
    f.access.unwrap_or(r.access)
}

/// Assert a field's bits and access (and reset, when given).
fn check(r: &Register, name: &str, msb: u32, lsb: u32, acc: Access, reset: Option<u64>) {
    let f = field(r, name);
    assert_eq!((f.msb, f.lsb), (msb, lsb), "{}.{name} bits", r.name);
    assert_eq!(access(r, f), acc, "{}.{name} access", r.name);
    if let Some(reset) = reset {
        assert_eq!(f.reset, Some(reset), "{}.{name} reset", r.name);
    }
}

/// The names of the fields of a register, sorted.
fn field_names(r: &Register) -> Vec<&str> {
    let mut names: Vec<&str> = r.fields.iter().map(|f| f.name.as_str()).collect();
    names.sort_unstable();
    names
}

#[test]
fn every_table48_row_is_in_the_database_at_its_offset() {
    let db = db();
    let Some(doc) = doc() else { return };
    let rows = table48(&doc);
    assert_eq!(rows.len(), TABLE48_ROWS, "Table 48 rows scanned from the document");

    let offsets: BTreeSet<u64> = rows.iter().map(|r| r.0).collect();
    assert_eq!(offsets.len(), rows.len(), "Table 48 offsets are unique");
    for (offset, name, size) in &rows {
        let r = reg(&db, db_name(name));
        assert_eq!(r.offset, *offset, "{name} offset: want {offset:#x}, got {:#x}", r.offset);
        assert_eq!(r.width, *size, "{name} width");
        assert_eq!(r.block, "V3D", "{name} block");
        assert!(r.count.is_none() && r.stride.is_none(), "{name} is one register per row");
        assert!(r.source.contains("Table 48"), "{name} source {:?}", r.source);
    }

    // Nothing else, apart from the two registers added from outside the document.
    let expected: BTreeSet<&str> =
        rows.iter().map(|r| db_name(&r.1)).chain(ADDED.iter().map(|a| a.0)).collect();
    let actual: BTreeSet<&str> = db.registers.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(actual, expected);
    assert_eq!(db.registers.len(), TABLE48_ROWS + ADDED.len());
    for (name, offset) in ADDED {
        let r = reg(&db, name);
        assert_eq!(r.offset, offset, "{name} offset");
        assert!(!offsets.contains(&offset), "{name} collides with a Table 48 register");
        assert!(!r.source.starts_with(&db.meta.doc_label), "{name} names its outside source");
    }

    // The interleaved counters: PCTRn at 0x680 + 8n, PCTRSn at 0x684 + 8n.
    for n in 0..16u64 {
        assert_eq!(reg(&db, &format!("V3D_PCTR{n}")).offset, 0x680 + 8 * n);
        assert_eq!(reg(&db, &format!("V3D_PCTRS{n}")).offset, 0x684 + 8 * n);
    }
}

#[test]
fn meta_and_block() {
    let db = db();
    assert_eq!(db.meta.family, "vc4");
    assert_eq!(db.meta.document, DOC);
    assert_eq!(db.meta.doc_label, "broadcom-videocore-iv-3d");
    assert_eq!(db.blocks.len(), 1);
    let b = &db.blocks[0];
    assert_eq!((b.name.as_str(), b.base, b.relative), ("V3D", 0, false));
    // Appendix B Table 95: "BCM2835 0x7ec00000": the V3D block's offsets count from its window.
    let chips: Vec<&str> = db.chipsets.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(chips[..3], ["BCM2835", "BCM21553", "BCM21654"]);
}

/// Description-table name (`V3D_CTnCS`) -> the registers it describes.
fn described(table: &str) -> Vec<String> {
    if let Some(suffix) = table.strip_prefix("V3D_CTn") {
        return (0..2).map(|n| format!("V3D_CT{n}{suffix}")).collect();
    }
    if let Some(base) = table.strip_suffix('n') {
        return (0..16).map(|n| format!("{base}{n}")).collect(); // V3D_PCTRn, V3D_PCTRSn
    }
    // Table 79's caption reads V3D_IDENTO (letter O).
    vec![if table == "V3D_IDENTO" { "V3D_IDENT0".into() } else { table.into() }]
}

/// Bit ranges of the non-reserved rows of every "Table NN: V3D_X Register Description",
/// continuation parts merged. A table without a Bit(s) column (Table 85) has no ranges.
fn description_tables(doc: &str) -> BTreeMap<String, BTreeSet<(u32, u32)>> {
    let mut tables: BTreeMap<String, BTreeSet<(u32, u32)>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in section10(doc).lines() {
        let line = normalise(line).replace("\\_", "_");
        let caption = line.trim_start_matches(['#', ' ', '*']);
        if caption.starts_with("Table ") && caption.contains(':') {
            current = caption
                .split_once(": ")
                .and_then(|(_, rest)| rest.split_once(" Register Description"))
                .map(|(name, _)| name.trim().to_string());
            if let Some(name) = &current {
                tables.entry(name.clone()).or_default();
            }
            continue;
        }
        if line.starts_with('#') {
            current = None;
            continue;
        }
        let Some(name) = &current else { continue };
        let cells: Vec<&str> = line.split('\t').map(str::trim).collect();
        let bits = cells[0];
        if bits.is_empty() || !bits.chars().all(|c| c.is_ascii_digit() || c == ':') {
            continue;
        }
        if line.contains("Reserved") {
            continue;
        }
        let (msb, lsb) = match bits.split_once(':') {
            Some((m, l)) => (m.parse().unwrap(), l.parse().unwrap()),
            None => (bits.parse().unwrap(), bits.parse().unwrap()),
        };
        tables.get_mut(name).unwrap().insert((msb, lsb));
    }
    tables
}

#[test]
fn field_bit_ranges_match_the_description_tables() {
    let db = db();
    let Some(doc) = doc() else { return };
    let tables = description_tables(&doc);
    // Tables 49-81 and 83-93, less the ones sharing a number (none): 44 register tables.
    assert_eq!(tables.len(), 44, "{:?}", tables.keys().collect::<Vec<_>>());
    let mut covered = BTreeSet::new();
    for (table, ranges) in &tables {
        for name in described(table) {
            let r = reg(&db, &name);
            let got: BTreeSet<(u32, u32)> = r.fields.iter().map(|f| (f.msb, f.lsb)).collect();
            let want = if ranges.is_empty() { BTreeSet::from([(31, 0)]) } else { ranges.clone() };
            assert_eq!(got, want, "{name}: field bit ranges vs the {table} table");
            assert_eq!(got.len(), r.fields.len(), "{name}: two fields with one range");
            covered.insert(name);
        }
    }
    // Every register of the database has a description table: none relies on the implied
    // whole-register field. DBCFG alone comes from outside the document (its fields are not
    // public: one whole-register field).
    for r in &db.registers {
        if r.name == "V3D_DBCFG" {
            assert_eq!(r.fields.iter().map(|f| (f.msb, f.lsb)).collect::<Vec<_>>(), [(31, 0)]);
            continue;
        }
        assert!(covered.contains(&r.name), "{} has no description table", r.name);
        assert!(!r.fields.is_empty(), "{} has no fields", r.name);
    }
}

#[test]
fn fields_are_sound() {
    let db = db();
    let errors = regdb_gen::lint(&db);
    assert!(errors.is_empty(), "{errors:#?}");
    let mut fields = 0;
    for r in &db.registers {
        let mut used = 0u64;
        for f in &r.fields {
            fields += 1;
            assert!(f.lsb <= f.msb && f.msb < 32, "{}.{} bits {}:{}", r.name, f.name, f.msb, f.lsb);
            assert_eq!(used & f.mask(), 0, "{}.{} overlaps another field", r.name, f.name);
            used |= f.mask();
            if let Some(reset) = f.reset {
                assert_eq!(reset >> f.width(), 0, "{}.{} reset", r.name, f.name);
            }
            for v in &f.values {
                assert_eq!(v.value >> f.width(), 0, "{}.{} = {}", r.name, f.name, v.name);
            }
            // Register access is derived from the fields.
            let a = access(r, f);
            assert!(
                (!a.readable() || r.access.readable()) && (!a.writable() || r.access.writable()),
                "{}.{} access exceeds the register's",
                r.name,
                f.name
            );
        }
    }
    assert!(fields > 200, "only {fields} fields");
}

#[test]
fn control_list_executor_status() {
    // Table 49, V3D_CTnCS: applies to both threads.
    let db = db();
    for name in ["V3D_CT0CS", "V3D_CT1CS"] {
        let r = reg(&db, name);
        assert_eq!(r.access, Access::ReadWrite);
        assert_eq!(
            field_names(r),
            ["CTERR", "CTMODE", "CTRSTA", "CTRTSD", "CTRUN", "CTSEMA", "CTSUBS"]
        );
        check(r, "CTRSTA", 15, 15, Access::Write, Some(0));
        check(r, "CTSEMA", 14, 12, Access::Read, Some(0));
        check(r, "CTRTSD", 9, 8, Access::Read, Some(0));
        check(r, "CTRUN", 5, 5, Access::ReadWrite, Some(0));
        check(r, "CTSUBS", 4, 4, Access::ReadWrite, Some(0));
        check(r, "CTERR", 3, 3, Access::Read, Some(0));
        check(r, "CTMODE", 0, 0, Access::Read, Some(0));
        let run: Vec<(&str, u64)> =
            field(r, "CTRUN").values.iter().map(|v| (v.name.as_str(), v.value)).collect();
        assert_eq!(run, [("STOPPED", 0), ("RUNNING", 1)]);
        // CTSUBS's meaning depends on CTRUN: no enumeration.
        assert!(field(r, "CTSUBS").values.is_empty());
    }
    assert_eq!(reg(&db, "V3D_CT0CS").offset, 0x100);
    assert_eq!(reg(&db, "V3D_CT1CS").offset, 0x104);
    for (name, offset) in
        [("V3D_CT0EA", 0x108), ("V3D_CT1EA", 0x10c), ("V3D_CT0CA", 0x110), ("V3D_CT1CA", 0x114)]
    {
        let r = reg(&db, name);
        assert_eq!(r.offset, offset);
        check(
            r,
            if name.contains("EA") { "CTLEA" } else { "CTLCA" },
            31,
            0,
            Access::ReadWrite,
            Some(0),
        );
    }
    for (name, offset) in [("V3D_CT0RA0", 0x118), ("V3D_CT1RA0", 0x11c)] {
        let r = reg(&db, name);
        assert_eq!((r.offset, r.access), (offset, Access::Read));
        check(r, "CTLRA", 31, 0, Access::Read, Some(0));
    }
    let lc = reg(&db, "V3D_CT1LC");
    check(lc, "CTLLCM", 31, 16, Access::ReadWrite, Some(0));
    check(lc, "CTLSLCS", 15, 0, Access::ReadWrite, Some(0));
    check(reg(&db, "V3D_CT0PC"), "CTLPC", 31, 0, Access::Read, Some(0));
}

#[test]
fn pipeline_status_and_binning_memory() {
    let db = db();
    let pcs = reg(&db, "V3D_PCS"); // Table 55
    assert_eq!((pcs.offset, pcs.access), (0x130, Access::Read));
    assert_eq!(field_names(pcs), ["BMACTIVE", "BMBUSY", "BMOOM", "RMACTIVE", "RMBUSY"]);
    check(pcs, "BMOOM", 8, 8, Access::Read, Some(0));
    check(pcs, "RMBUSY", 3, 3, Access::Read, Some(0));
    check(pcs, "RMACTIVE", 2, 2, Access::Read, Some(0));
    check(pcs, "BMBUSY", 1, 1, Access::Read, Some(0));
    check(pcs, "BMACTIVE", 0, 0, Access::Read, Some(0));
    check(reg(&db, "V3D_BFC"), "BMFCT", 7, 0, Access::ReadWrite, Some(0));
    check(reg(&db, "V3D_RFC"), "RMFCT", 7, 0, Access::ReadWrite, Some(0));
    check(reg(&db, "V3D_BPCA"), "BMPCA", 31, 0, Access::Read, Some(0));
    check(reg(&db, "V3D_BPCS"), "BMPRS", 31, 0, Access::Read, Some(0));
    check(reg(&db, "V3D_BPOA"), "BMPOA", 31, 0, Access::ReadWrite, Some(0));
    check(reg(&db, "V3D_BPOS"), "BMPOS", 31, 0, Access::ReadWrite, Some(0));
    let bxcf = reg(&db, "V3D_BXCF"); // Table 93
    check(bxcf, "CLIPDISA", 1, 1, Access::ReadWrite, Some(0));
    check(bxcf, "FWDDISA", 0, 0, Access::ReadWrite, Some(0));
}

#[test]
fn interrupt_registers() {
    // Tables 75-77: INTCTL status (write 1 to clear), INTENA, INTDIS; same four bits.
    let db = db();
    for (name, offset, prefix) in
        [("V3D_INTCTL", 0x30, "INT"), ("V3D_INTENA", 0x34, "EI"), ("V3D_INTDIS", 0x38, "DI")]
    {
        let r = reg(&db, name);
        assert_eq!((r.offset, r.access), (offset, Access::ReadWrite), "{name}");
        assert_eq!(r.fields.len(), 4, "{name}");
        for (bit, what) in [(3, "SPILLUSE"), (2, "OUTOMEM"), (1, "FLDONE"), (0, "FRDONE")] {
            check(r, &format!("{prefix}_{what}"), bit, bit, Access::ReadWrite, Some(0));
        }
    }
    assert!(field(reg(&db, "V3D_INTCTL"), "INT_FRDONE").description.contains("Write 1 to clear"));
    // Tables 73-74: QPU interrupts, one bit per QPU.
    check(reg(&db, "V3D_DBQITE"), "IE_QPU", 15, 0, Access::ReadWrite, Some(0));
    check(reg(&db, "V3D_DBQITC"), "IC_QPU", 15, 0, Access::ReadWrite, Some(0));
}

#[test]
fn identity_registers() {
    let db = db();
    let id0 = reg(&db, "V3D_IDENT0"); // Table 79
    assert_eq!((id0.offset, id0.access), (0x0, Access::Read));
    check(id0, "TVER", 31, 24, Access::Read, Some(2));
    check(id0, "IDSTR", 23, 0, Access::Read, Some(0x44_33_56)); // "V3D", 'V' in the low byte
    // Together: the 0x02443356 the driver probes for.
    let ident0: u64 = id0.fields.iter().map(|f| f.reset.unwrap() << f.lsb).sum();
    assert_eq!(ident0, 0x0244_3356);

    let id1 = reg(&db, "V3D_IDENT1"); // Table 80 (reference-configuration resets)
    assert_eq!((id1.offset, id1.access), (0x4, Access::Read));
    check(id1, "VPMSZ", 31, 28, Access::Read, Some(12));
    check(id1, "HDRT", 27, 24, Access::Read, Some(1));
    check(id1, "NSEM", 23, 16, Access::Read, Some(16));
    check(id1, "TUPS", 15, 12, Access::Read, Some(2));
    check(id1, "QUPS", 11, 8, Access::Read, Some(4));
    check(id1, "NSLC", 7, 4, Access::Read, Some(3));
    check(id1, "REV", 3, 0, Access::Read, Some(1));

    let id2 = reg(&db, "V3D_IDENT2"); // Table 81
    assert_eq!((id2.offset, id2.access), (0x8, Access::Read));
    check(id2, "TLBDB", 11, 8, Access::Read, Some(1));
    check(id2, "TLBSZ", 7, 4, Access::Read, Some(2));
    check(id2, "VRISZ", 3, 0, Access::Read, Some(1));
    assert_eq!(field(id2, "TLBSZ").values.len(), 3);

    check(reg(&db, "V3D_SCRATCH"), "SCRATCH", 31, 0, Access::ReadWrite, Some(0));
}

#[test]
fn cache_control() {
    let db = db();
    let l2 = reg(&db, "V3D_L2CACTL"); // Table 71
    assert_eq!(l2.offset, 0x20);
    check(l2, "L2CCLR", 2, 2, Access::Write, Some(0));
    check(l2, "L2CDIS", 1, 1, Access::Write, Some(0));
    check(l2, "L2CENA", 0, 0, Access::ReadWrite, Some(0));
    let slc = reg(&db, "V3D_SLCACTL"); // Table 72, one bit per slice
    assert_eq!((slc.offset, slc.access), (0x24, Access::Write));
    check(slc, "T1CCS", 27, 24, Access::Write, Some(0));
    check(slc, "T0CCS", 19, 16, Access::Write, Some(0));
    check(slc, "UCCS", 11, 8, Access::Write, Some(0));
    check(slc, "ICCS", 3, 0, Access::Write, Some(0));
}

#[test]
fn qpu_scheduler_and_user_programs() {
    let db = db();
    let sq0 = reg(&db, "V3D_SQRSV0"); // Table 62
    let sq1 = reg(&db, "V3D_SQRSV1"); // Table 63
    for n in 0..8u32 {
        check(sq0, &format!("QPURSV{n}"), 4 * n + 3, 4 * n, Access::ReadWrite, Some(0));
        check(sq1, &format!("QPURSV{}", n + 8), 4 * n + 3, 4 * n, Access::ReadWrite, Some(0));
    }
    let cntl = reg(&db, "V3D_SQCNTL"); // Table 64
    check(cntl, "CSRBL", 3, 2, Access::ReadWrite, Some(0));
    check(cntl, "VSRBL", 1, 0, Access::ReadWrite, Some(0));

    let pc = reg(&db, "V3D_SRQPC"); // Table 65: write-only FIFO port
    assert_eq!((pc.offset, pc.access), (0x430, Access::Write));
    check(pc, "QPURQPC", 31, 0, Access::Write, Some(0));
    check(reg(&db, "V3D_SRQUA"), "QPURQUA", 31, 0, Access::ReadWrite, Some(0));
    check(reg(&db, "V3D_SRQUL"), "QPURQUL", 11, 0, Access::ReadWrite, Some(0));

    let cs = reg(&db, "V3D_SRQCS"); // Table 68
    assert_eq!((cs.offset, cs.access), (0x43c, Access::ReadWrite));
    assert_eq!(field_names(cs), ["QPURQCC", "QPURQCM", "QPURQERR", "QPURQL"]);
    check(cs, "QPURQCC", 23, 16, Access::ReadWrite, Some(0));
    check(cs, "QPURQCM", 15, 8, Access::ReadWrite, Some(0));
    check(cs, "QPURQERR", 7, 7, Access::ReadWrite, Some(0));
    check(cs, "QPURQL", 5, 0, Access::ReadWrite, Some(0));
}

#[test]
fn vpm_and_performance_counters() {
    let db = db();
    let vpa = reg(&db, "V3D_VPACNTL"); // Table 70
    assert_eq!(vpa.offset, 0x500);
    check(vpa, "VPATOEN", 13, 13, Access::ReadWrite, Some(0));
    check(vpa, "VPALIMEN", 12, 12, Access::ReadWrite, Some(0));
    check(vpa, "VPABATO", 11, 9, Access::ReadWrite, Some(0));
    check(vpa, "VPARATO", 8, 6, Access::ReadWrite, Some(0));
    check(vpa, "VPABALIM", 5, 3, Access::ReadWrite, Some(0));
    check(vpa, "VPARALIM", 2, 0, Access::ReadWrite, Some(0));
    let base = reg(&db, "V3D_VPMBASE"); // Table 69
    assert_eq!(base.offset, 0x504);
    check(base, "VPMURSV", 4, 0, Access::ReadWrite, Some(0));

    check(reg(&db, "V3D_PCTRC"), "CTCLR", 15, 0, Access::Write, Some(0)); // Table 83
    check(reg(&db, "V3D_PCTRE"), "CTEN", 15, 0, Access::ReadWrite, Some(0)); // Table 84
    for n in 0..16 {
        check(reg(&db, &format!("V3D_PCTR{n}")), "PCTR", 31, 0, Access::ReadWrite, Some(0));
        check(reg(&db, &format!("V3D_PCTRS{n}")), "PCTRS", 4, 0, Access::ReadWrite, Some(0));
    }
}

#[test]
fn error_and_debug_registers() {
    let db = db();
    let err = reg(&db, "V3D_ERRSTAT"); // Table 87: bits 15..0, all read-only
    assert_eq!((err.offset, err.access), (0xf20, Access::Read));
    assert_eq!(err.fields.len(), 16);
    check(err, "L2CARE", 15, 15, Access::Read, Some(0));
    check(err, "VPAERRGL", 3, 3, Access::Read, Some(0));
    check(err, "VPAEABB", 0, 0, Access::Read, Some(0));
    let dbge = reg(&db, "V3D_DBGE"); // Table 88
    check(dbge, "IPD2_FPDUSED", 20, 20, Access::Read, Some(0));
    check(dbge, "VR1_A", 1, 1, Access::Read, Some(0));
    check(reg(&db, "V3D_FDBGB"), "EDGES_CTRLID", 5, 3, Access::Read, Some(0)); // Table 90
    check(reg(&db, "V3D_FDBGR"), "QXYF_FIFO_READY", 0, 0, Access::Read, Some(0)); // Table 91
    check(reg(&db, "V3D_FDBGS"), "ZO_FIFO_IP_STALL", 28, 28, Access::Read, Some(0)); // Table 92
    check(reg(&db, "V3D_FDBGO"), "EZREQ_FIFO_ORUN", 17, 17, Access::Read, Some(0)); // Table 89
}
