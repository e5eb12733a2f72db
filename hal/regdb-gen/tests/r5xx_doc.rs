//! The R5xx register database checked against its source document, independently of the Python
//! extractor: this test scans `amd-r5xx-acceleration.txt` §11 for every `MMReg:0x…` register
//! header itself and requires each register at the offset (and array shape) the document gives.

use regdb_gen::{Database, Register, database_path, lint};
use std::collections::BTreeSet;

fn database() -> Database {
    Database::load(&database_path("r5xx")).expect("hal/regdb/r5xx.toml loads")
}

/// The document, or `None` where the documents are absent (the test is skipped, `gpu-docs`).
fn document() -> Option<String> {
    gpu_docs::document("amd-r5xx-acceleration.txt")
}

/// Cyrillic look-alikes and LaTeX debris of the OCR, mapped back to what the PDF shows.
fn normalise(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let mapped = match c {
            'А' => 'A',
            'В' => 'B',
            'С' => 'C',
            'Е' => 'E',
            'Н' => 'H',
            'І' => 'I',
            'К' => 'K',
            'М' => 'M',
            'О' => 'O',
            'Р' => 'P',
            'Т' => 'T',
            'Х' => 'X',
            'Ү' | 'У' => 'Y',
            'а' => 'a',
            'с' => 'c',
            'е' => 'e',
            'о' => 'o',
            'р' => 'p',
            'х' => 'x',
            '•' => '·',
            '$' => continue,
            other => other,
        };
        out.push(mapped);
    }
    out.replace("\\cdot", "·")
}

/// Register names the OCR split or misread in their header (checked by hand against the page).
const NAME_FIXES: &[(&str, &str)] = &[
    ("RB3D_COLOROFFSET[0-36]", "RB3D_COLOROFFSET[0-3]"),
    ("US_CMN_INST_[0-511", "US_CMN_INST_[0-511]"),
    ("SU_POLY_OFFSET_BAGCK_SCALEE", "SU_POLY_OFFSET_BACK_SCALE"),
    ("VAP_PVS_CONST_CNT.", "VAP_PVS_CONST_CNTL"),
    ("VAP_PVS_CODE_CNTL1", "VAP_PVS_CODE_CNTL_1"),
    ("VAP_PROG_STREAM_CNTL_EXKT_[0-7]", "VAP_PROG_STREAM_CNTL_EXT_[0-7]"),
    ("VAP_VPORT_XSCAILE", "VAP_VPORT_XSCALE"),
];

/// One `MMReg:` header of §11.
#[derive(Debug)]
struct Header {
    /// Name as printed, with the array part (`TX_FILTER0_[0-15]`).
    raw: String,
    /// Offsets as printed: (start, end of range).
    offsets: Vec<(u64, Option<u64>)>,
}

fn parse_hex(s: &str) -> (u64, usize) {
    let digits: String = s.chars().take_while(char::is_ascii_hexdigit).collect();
    (u64::from_str_radix(&digits, 16).expect("hex offset"), digits.len())
}

fn headers(doc: &str) -> Vec<Header> {
    let lines: Vec<&str> = doc.lines().collect();
    let start = lines.iter().position(|l| l.trim() == "11. Registers").expect("§11 heading");
    let mut out = Vec::new();
    let mut i = start;
    while i < lines.len() {
        if !lines[i].contains("MMReg:0x") {
            i += 1;
            continue;
        }
        let mut compact: String = lines[i].chars().filter(|c| !c.is_whitespace()).collect();
        if compact.ends_with('-') {
            // `MMReg:0x2504-` / (blank) / `0x257c`
            let mut j = i + 1;
            while lines[j].trim().is_empty() {
                j += 1;
            }
            compact.extend(lines[j].chars().filter(|c| !c.is_whitespace()));
            i = j;
        }
        if let Some(p) = compact.find("DESCRIPTION:") {
            compact.truncate(p);
        }
        // Name: after the last `PREFIX:` before the access field (page junk repeats the header).
        let head = &compact[..compact.find("MMReg:").unwrap()];
        let name_part = head
            .split('·')
            .rfind(|seg| {
                seg.rsplit_once(':')
                    .is_some_and(|(_, n)| n.starts_with(|c: char| c.is_ascii_uppercase()))
            })
            .unwrap_or_else(|| panic!("no name in {compact}"));
        let mut raw = name_part[name_part.rfind(':').unwrap() + 1..].to_string();
        // Cut an access field run into the name (`RB3D_ABLENDCNTL[R/W]`), keep `[0-15]`.
        if let Some(p) = raw.char_indices().find_map(|(k, c)| {
            (c == '[' && !raw[k + 1..].starts_with(|d: char| d.is_ascii_digit())).then_some(k)
        }) {
            raw.truncate(p);
        }
        for (bad, good) in NAME_FIXES {
            if raw == *bad {
                raw = (*good).to_string();
            }
        }
        let mut offsets = Vec::new();
        let mut rest = compact.as_str();
        while let Some(p) = rest.find("MMReg:0x") {
            rest = &rest[p + 8..];
            let (startv, n) = parse_hex(rest);
            rest = &rest[n..];
            let end = rest.strip_prefix("-0x").map(|r| {
                let (e, n) = parse_hex(r);
                rest = &r[n..];
                e
            });
            offsets.push((startv, end));
        }
        out.push(Header { raw, offsets });
        i += 1;
    }
    out
}

/// `TX_FILTER0_[0-15]` → (`TX_FILTER0`, Some((0, 15))); `VAP_VTX_ST_CLR_[0-7]_A` →
/// (`VAP_VTX_ST_CLR_A`, Some((0, 7))).
fn split_array(raw: &str) -> (String, Option<(u32, u32)>) {
    let Some(open) = raw.find('[') else { return (raw.to_string(), None) };
    let close = raw.find(']').expect("closing bracket");
    let (lo, hi) = raw[open + 1..close].split_once('-').expect("index range");
    let name = format!("{}{}", raw[..open].trim_end_matches('_'), &raw[close + 1..]);
    (name, Some((lo.parse().unwrap(), hi.parse().unwrap())))
}

fn register<'a>(db: &'a Database, name: &str) -> &'a Register {
    let mut regs = db.registers.iter().filter(|r| r.name == name);
    let r = regs.next().unwrap_or_else(|| panic!("{name} missing from the database"));
    assert!(regs.next().is_none(), "{name} defined twice");
    r
}

fn field<'a>(r: &'a Register, name: &str) -> &'a regdb_gen::Field {
    r.fields.iter().find(|f| f.name == name).unwrap_or_else(|| panic!("{}.{name} missing", r.name))
}

#[test]
fn every_documented_register_is_in_the_database_at_its_offset() {
    let db = database();
    let Some(doc) = document() else { return };
    let doc = normalise(&doc);
    let headers = headers(&doc);
    assert!(headers.len() >= 280, "only {} MMReg headers found in §11", headers.len());

    let mut names = BTreeSet::new();
    for h in &headers {
        let (name, index) = split_array(&h.raw);
        let (start, end) = h.offsets[0];
        names.insert(name.clone());
        match (name.as_str(), index, end) {
            // Interleaved with VAP_VTX_AOS_ATTR: ATTR01, ADDR0, ADDR1, ATTR23, ADDR2, … (3 dwords
            // per pair of arrays); stored as the even and odd halves.
            ("VAP_VTX_AOS_ADDR", Some((0, 15)), Some(end)) => {
                let even = register(&db, "VAP_VTX_AOS_ADDR_EVEN");
                let odd = register(&db, "VAP_VTX_AOS_ADDR_ODD");
                let mut all: Vec<u64> = [even, odd]
                    .iter()
                    .flat_map(|r| {
                        (0..u64::from(r.instances())).map(|i| r.offset + i * r.stride.unwrap())
                    })
                    .collect();
                all.sort_unstable();
                assert_eq!(all.len(), 16);
                assert_eq!((all[0], all[15]), (start, end), "VAP_VTX_AOS_ADDR range");
            }
            // `ATTR[01-1415]`: one register per pair of arrays.
            ("VAP_VTX_AOS_ATTR", _, Some(end)) => {
                let r = register(&db, "VAP_VTX_AOS_ATTR");
                assert_eq!((r.offset, r.count, r.stride), (start, Some(8), Some(12)));
                assert_eq!(r.offset + 7 * 12, end);
            }
            (_, Some((lo, hi)), Some(end)) => {
                let r = register(&db, &name);
                let count = hi - lo + 1;
                assert_eq!(r.offset, start, "{name} offset");
                assert_eq!(r.count, Some(count), "{name} count");
                assert_eq!(
                    r.offset + r.stride.unwrap() * u64::from(count - 1),
                    end,
                    "{name} last instance"
                );
            }
            (_, None, Some(end)) => {
                // An aperture: a range of dwords under one name.
                let r = register(&db, &name);
                assert_eq!(r.offset, start, "{name} offset");
                assert_eq!(r.stride, Some(4), "{name} stride");
                assert_eq!(u64::from(r.count.unwrap()), (end - start) / 4 + 1, "{name} count");
            }
            (_, None, None) => {
                assert_eq!(register(&db, &name).offset, start, "{name} offset");
                assert_eq!(register(&db, &name).count, None, "{name} is not an array");
            }
            (_, Some(_), None) => panic!("{name}: array without a range"),
        }
        // `MMReg:0x1d98, MMReg:0x2098`: the second address is the `_ALT` register.
        for &(extra, _) in &h.offsets[1..] {
            let alt = register(&db, &format!("{name}_ALT"));
            assert_eq!(alt.offset, extra, "{name}_ALT offset");
        }
    }
    assert!(names.len() >= 260, "only {} distinct register names in §11", names.len());
}

#[test]
fn hand_checked_registers_and_fields() {
    let db = database();

    let cntl = register(&db, "CP_RB_CNTL");
    assert_eq!((cntl.block.as_str(), cntl.offset), ("CP", 0x704));
    for (name, msb, lsb) in [
        ("RB_BUFSZ", 5, 0),
        ("RB_BLKSZ", 13, 8),
        ("BUF_SWAP", 17, 16),
        ("MAX_FETCH", 19, 18),
        ("RB_NO_UPDATE", 27, 27),
        ("RB_RPTR_WR_ENA", 31, 31),
    ] {
        let f = field(cntl, name);
        assert_eq!((f.msb, f.lsb), (msb, lsb), "CP_RB_CNTL.{name}");
    }
    let swap = field(cntl, "BUF_SWAP");
    assert_eq!(swap.values.iter().map(|v| v.value).collect::<Vec<_>>(), [0, 1, 2, 3]);
    assert_eq!(swap.values[0].name, "NO_SWAP");

    for (name, offset) in [
        ("CP_RB_BASE", 0x700),
        ("CP_RB_RPTR_ADDR", 0x70c),
        ("CP_RB_RPTR", 0x710),
        ("CP_RB_WPTR", 0x714),
        ("CP_RB_WPTR_DELAY", 0x718),
        ("CP_RB_RPTR_WR", 0x71c),
        ("CP_IB_BASE", 0x738),
        ("CP_IB_BUFSZ", 0x73c),
        ("CP_CSQ_CNTL", 0x740),
        ("CP_CSQ_MODE", 0x744),
        ("CP_ME_CNTL", 0x7d0),
        ("CP_ME_RAM_ADDR", 0x7d4),
        ("CP_ME_RAM_RADDR", 0x7d8),
        ("CP_ME_RAM_DATAH", 0x7dc),
        ("CP_ME_RAM_DATAL", 0x7e0),
        ("RB3D_CCTL", 0x4e00), // header printed as `MM AReg:02 x4e00`
        ("ZB_ZSTENCILCNTL", 0x4f04),
        ("VAP_VF_CNTL", 0x2084),
    ] {
        assert_eq!(register(&db, name).offset, offset, "{name}");
    }

    let csq = field(register(&db, "CP_CSQ_CNTL"), "CSQ_MODE");
    assert_eq!((csq.msb, csq.lsb, csq.reset), (31, 28, Some(0)));
    assert!(csq.values.iter().any(|v| v.value == 4 && v.name == "PRIMARY_BM_INDIRECT_BM"));

    let me = register(&db, "CP_ME_CNTL");
    let mode = field(me, "ME_MODE");
    assert_eq!((mode.msb, mode.lsb, mode.reset), (30, 30, Some(1)));
    assert_eq!(
        mode.values.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(),
        ["SINGLE_STEP_MODE", "FREE_RUNNING_MODE"]
    );
    let busy = field(me, "ME_BUSY");
    assert_eq!((busy.msb, busy.access), (29, Some(regdb_gen::Access::Read)));
    assert_eq!(field(me, "ME_STEP").access, Some(regdb_gen::Access::Write));

    let csq_mode = register(&db, "CP_CSQ_MODE");
    let pm = field(csq_mode, "CSQ_PRIMARY_MODE");
    assert_eq!((pm.msb, pm.lsb), (30, 30));
    assert_eq!(
        pm.values.iter().map(|v| (v.value, v.name.as_str())).collect::<Vec<_>>(),
        [(0, "PIO"), (1, "BM")]
    );

    let filter0 = register(&db, "TX_FILTER0");
    assert_eq!((filter0.offset, filter0.count, filter0.stride), (0x4400, Some(16), Some(4)));
    assert_eq!((field(filter0, "ID").msb, field(filter0, "ID").lsb), (31, 28));
    let filter1 = register(&db, "TX_FILTER1");
    assert_eq!((filter1.offset, filter1.count), (0x4440, Some(16)));
    assert_eq!(field(filter1, "BORDER_FIX").lsb, 31);

    let aper = register(&db, "CP_CSQ_APER_PRIMARY");
    assert_eq!((aper.offset, aper.count, aper.stride), (0x1000, Some(128), Some(4)));
    let clr = register(&db, "VAP_VTX_ST_CLR_A");
    assert_eq!((clr.offset, clr.count, clr.stride), (0x232c, Some(8), Some(16)));
    let lw = register(&db, "VAP_PVS_FLOW_CNTL_ADDRS_LW");
    assert_eq!((lw.offset, lw.count, lw.stride), (0x2500, Some(16), Some(8)));

    let zs = register(&db, "ZB_ZSTENCILCNTL");
    assert_eq!(field(zs, "ZFUNC").values.len(), 8);
    assert_eq!((field(zs, "ZERO_OUTPUT_MASK").msb, field(zs, "ZERO_OUTPUT_MASK").lsb), (27, 27));

    let wrap = register(&db, "SU_TEX_WRAP");
    assert_eq!(wrap.fields.len(), 32, "SU_TEX_WRAP has T0C0 … T7C3");
    for f in &wrap.fields {
        let (t, c) = (f.name.as_bytes()[1] - b'0', f.name.as_bytes()[3] - b'0');
        assert_eq!((f.msb, f.lsb), (u32::from(t * 4 + c), u32::from(t * 4 + c)), "{}", f.name);
    }

    // Registers the document omits, from Linux radeon.
    assert_eq!(register(&db, "SCRATCH_REG0").count, Some(8));
    assert_eq!(register(&db, "RBBM_STATUS").offset, 0xe40);
    // Linux radeon_reg.h / rs600d.h: SW_INT_FIRE (set) 26, SW_INT_TEST (status) 25, scratch 18.
    let status = register(&db, "GEN_INT_STATUS");
    assert_eq!(field(status, "SW_INT_SET").lsb, 26);
    assert_eq!(field(status, "SW_INT").lsb, 25);
    assert_eq!(field(status, "SCRATCH_INT_STAT").lsb, 18);
    let cntl = register(&db, "GEN_INT_CNTL");
    assert_eq!((field(cntl, "SW_INT_EN").lsb, field(cntl, "SCRATCH_INT_MASK").lsb), (25, 18));
}

#[test]
fn fields_fit_and_do_not_overlap() {
    let db = database();
    for r in &db.registers {
        assert!(r.width <= 32, "{} is wider than 32 bits", r.name);
        let mut used = 0u64;
        for f in &r.fields {
            assert!(
                f.lsb <= f.msb && f.msb < r.width,
                "{}.{} bits {}:{}",
                r.name,
                f.name,
                f.msb,
                f.lsb
            );
            assert_eq!(used & f.mask(), 0, "{}.{} overlaps another field", r.name, f.name);
            used |= f.mask();
            if let Some(reset) = f.reset {
                assert_eq!(reset >> f.width(), 0, "{}.{} reset {reset:#x}", r.name, f.name);
            }
            for v in &f.values {
                assert_eq!(v.value >> f.width(), 0, "{}.{} value {}", r.name, f.name, v.name);
            }
        }
    }
    let errors = lint(&db);
    assert!(errors.is_empty(), "lint: {errors:#?}");
}
