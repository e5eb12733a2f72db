//! Checks `hal/regdb/evergreen.toml` against `amd-evergreen-cayman-acceleration.txt` without going
//! through the Python extractor: every `REG.FIELD` the document writes (with one of the block
//! prefixes below) must be in the database unless `corrections/evergreen.toml` lists it under
//! `[[not_covered]]` with a reason; the CP bring-up offsets the
//! public drivers use (Linux radeon evergreend.h) must be there; fields must be sound; every register must cite a section of the document.

use regdb_gen::{Database, Register};
use std::collections::BTreeSet;
use std::path::PathBuf;

const DOC: &str = "amd-evergreen-cayman-acceleration.txt";
const LABEL: &str = "amd-evergreen-cayman-acceleration";

/// Block prefixes of the register names the document uses (same list as the extractor's, written
/// out again here on purpose).
const PREFIXES: [&str; 15] = [
    "SCRATCH", "GRBM", "VGT", "SPI", "GDS", "RLC", "CB", "DB", "PA", "SQ", "SX", "CP", "TA", "TD",
    "GB",
];

fn database() -> Database {
    Database::load(&regdb_gen::database_path("evergreen")).expect("evergreen database loads")
}

/// The document, or `None` where the documents are absent (the test is skipped, `gpu-docs`).
fn document() -> Option<String> {
    gpu_docs::document(DOC)
}

/// `(register, field)` pairs of `[[not_covered]]` (field empty for a whole register), read with a
/// minimal parser: only `[[table]]` headers and `key = "string"` lines matter here.
fn not_covered() -> Vec<(String, String, String)> {
    let path: PathBuf = regdb_gen::regdb_dir().join("corrections/evergreen.toml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = Vec::new();
    let mut current: Option<(String, String, String)> = None;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with("[[") {
            if let Some(entry) = current.take() {
                out.push(entry);
            }
            if line == "[[not_covered]]" {
                current = Some(Default::default());
            }
            continue;
        }
        let Some(entry) = current.as_mut() else { continue };
        let Some((key, value)) = line.split_once('=') else { continue };
        let value = value.trim().trim_matches('"').to_string();
        match key.trim() {
            "register" => entry.0 = value,
            "field" => entry.1 = value,
            "reason" => entry.2 = value,
            _ => {}
        }
    }
    if let Some(entry) = current {
        out.push(entry);
    }
    out
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_' || c == '*'
}

/// Every `NAME.FIELD` (or `NAME:FIELD`) in the text whose NAME starts with a block prefix and an
/// underscore (optionally `CB0_`-style). `<mrt>`/`<n>` placeholders are kept as `<...>`.
fn field_references(text: &str) -> BTreeSet<(String, String)> {
    let chars: Vec<char> = text.chars().collect();
    let mut refs = BTreeSet::new();
    let mut i = 0;
    while i < chars.len() {
        let boundary = i == 0 || !(chars[i - 1].is_ascii_alphanumeric() || chars[i - 1] == '_');
        if !boundary || !chars[i].is_ascii_uppercase() {
            i += 1;
            continue;
        }
        // read a name: uppercase/digits/_/* and <lowercase> placeholders
        let start = i;
        let mut j = i;
        while j < chars.len() {
            if is_name_char(chars[j]) {
                j += 1;
            } else if chars[j] == '<' {
                let close = chars[j..].iter().position(|&c| c == '>').map(|p| j + p);
                match close {
                    Some(k)
                        if chars[j + 1..k].iter().all(|c| c.is_ascii_lowercase()) && k > j + 1 =>
                    {
                        j = k + 1
                    }
                    _ => break,
                }
            } else {
                break;
            }
        }
        let name: String = chars[start..j].iter().collect();
        i = j.max(i + 1);
        let prefixed = PREFIXES.iter().any(|p| {
            name.strip_prefix(p)
                .map(|rest| rest.trim_start_matches(|c: char| c.is_ascii_digit()).starts_with('_'))
                .unwrap_or(false)
        });
        if !prefixed || j >= chars.len() || !(chars[j] == '.' || chars[j] == ':') {
            continue;
        }
        let mut k = j + 1;
        if k >= chars.len() || !chars[k].is_ascii_uppercase() {
            continue;
        }
        while k < chars.len()
            && (chars[k].is_ascii_uppercase() || chars[k].is_ascii_digit() || chars[k] == '_')
        {
            k += 1;
        }
        let field: String = chars[j + 1..k].iter().collect();
        refs.insert((name.trim_end_matches('_').to_string(), field));
        i = k;
    }
    refs
}

/// The name with every index (digits, `<...>`, `*`) replaced by `#`.
fn pattern(name: &str) -> String {
    let mut out = String::new();
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        let index = if c == '<' {
            for d in chars.by_ref() {
                if d == '>' {
                    break;
                }
            }
            true
        } else {
            c.is_ascii_digit() || c == '*'
        };
        if index {
            if !out.ends_with('#') {
                out.push('#');
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Database registers a document spelling refers to: the register of that name, or the register
/// arrays (or, for placeholder spellings, all registers) with the same index pattern.
fn resolve<'a>(db: &'a Database, name: &'a str) -> Vec<&'a Register> {
    let exact: Vec<&Register> = db.registers_named(name).collect();
    if !exact.is_empty() {
        return exact;
    }
    let placeholder = name.contains('*') || name.contains('<');
    let key = pattern(name);
    db.registers
        .iter()
        .filter(|r| (placeholder || r.count.is_some()) && pattern(&r.name) == key)
        .collect()
}

#[test]
fn every_field_reference_of_the_document_is_in_the_database_or_listed_as_not_covered() {
    let db = database();
    let Some(text) = document() else { return };
    let text = text.replace(".bits.", ".");
    let excluded = not_covered();
    for (reg, field, reason) in &excluded {
        assert!(!reason.trim().is_empty(), "[[not_covered]] {reg}.{field} has no reason");
    }
    let refs = field_references(&text);
    assert!(refs.len() >= 90, "only {} REG.FIELD references found: scanner broken?", refs.len());
    let mut missing = Vec::new();
    for (name, field) in &refs {
        let listed = excluded.iter().any(|(r, f, _)| r == name && (f.is_empty() || f == field));
        if listed {
            continue;
        }
        let regs = resolve(&db, name);
        if regs.is_empty() {
            missing.push(format!("{name} (for {name}.{field})"));
            continue;
        }
        for r in regs {
            if !r.fields.iter().any(|f| &f.name == field) {
                missing.push(format!("{name}.{field} (not a field of {})", r.name));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "document references missing from the database:\n{}",
        missing.join("\n")
    );
}

#[test]
fn known_references_are_found_by_the_scanner() {
    let Some(text) = document() else { return };
    let refs = field_references(&text.replace(".bits.", "."));
    for (name, field) in [
        ("VGT_GS_MODE", "COMPUTE_MODE"),
        ("CB_COLOR<mrt>_INFO", "FAST_CLEAR"),
        ("PA_SU_SC_MODE_CNTL", "CULL_BACK"),
        ("SQ_LDS_ALLOC", "SIZE"),
        ("VGT_PRIMITIVE_TYPE", "PRIM_TYPE"),
        ("SPI_COMPUTE_INPUT_CNTL", "TGID_ENA"),
        ("CB_COLOR*_SLICE", "TILE_MAX"),
    ] {
        assert!(refs.contains(&(name.to_string(), field.to_string())), "{name}.{field} not found");
    }
}

fn reg<'a>(db: &'a Database, name: &'a str) -> &'a Register {
    let mut regs = db.registers_named(name);
    let r = regs.next().unwrap_or_else(|| panic!("{name} missing"));
    assert!(regs.next().is_none(), "{name} defined more than once");
    r
}

#[test]
fn hardware_facts_cp_offsets() {
    let db = database();
    for (name, offset) in [
        ("CP_ME_CNTL", 0x86D8),
        ("CP_RB_BASE", 0xC100),
        ("CP_RB_CNTL", 0xC104),
        ("CP_RB_RPTR_WR", 0xC108),
        ("CP_RB_RPTR_ADDR", 0xC10C),
        ("CP_RB_RPTR_ADDR_HI", 0xC110),
        ("CP_RB_WPTR", 0xC114),
        ("CP_RB_RPTR", 0x8700),
        ("CP_RB_WPTR_DELAY", 0x8704),
        ("CP_PFP_UCODE_ADDR", 0xC150),
        ("CP_PFP_UCODE_DATA", 0xC154),
        ("CP_ME_RAM_RADDR", 0xC158),
        ("CP_ME_RAM_WADDR", 0xC15C),
        ("CP_ME_RAM_DATA", 0xC160),
        ("CP_DEBUG", 0xC1FC),
        ("GRBM_SOFT_RESET", 0x8020),
        ("SCRATCH_UMSK", 0x8540),
        ("SCRATCH_ADDR", 0x8544),
        ("SCRATCH_REG0", 0x8500),
        ("WAIT_UNTIL", 0x8040),
        ("CP_INT_STATUS", 0xC128),
        ("RLC_CNTL", 0x3F00),
        ("RLC_UCODE_ADDR", 0x3F2C),
        ("RLC_UCODE_DATA", 0x3F30),
    ] {
        let r = reg(&db, name);
        let base = db.block(&r.block).expect("block exists").base;
        assert_eq!(base + r.offset, offset, "{name}");
    }
    let scratch = reg(&db, "SCRATCH_REG0");
    assert_eq!((scratch.count, scratch.stride), (Some(8), Some(4)));
    let me = reg(&db, "CP_ME_CNTL");
    let bit = |f: &str| me.fields.iter().find(|x| x.name == f).map(|x| (x.msb, x.lsb));
    assert_eq!(bit("ME_HALT"), Some((28, 28)));
    assert_eq!(bit("PFP_HALT"), Some((26, 26)));
}

#[test]
fn color_target_arrays_follow_the_two_strides() {
    // MRT0-7 register groups are 0x3C apart; MRT8-11 (no cmask/fmask/clear) only 0x1C.
    let db = database();
    let info0 = reg(&db, "CB_COLOR0_INFO");
    assert_eq!((info0.offset, info0.count, info0.stride), (0x28C70, Some(8), Some(0x3C)));
    let info8 = reg(&db, "CB_COLOR8_INFO");
    assert_eq!((info8.offset, info8.count, info8.stride), (0x28E50, Some(4), Some(0x1C)));
    // CB_COLOR7_INFO + 0x3C is CB_COLOR8_BASE's neighbour group start, not CB_COLOR8_INFO + 0x3C
    assert_eq!(info0.offset + 7 * 0x3C, 0x28E14);
}

#[test]
fn fields_fit_and_do_not_overlap() {
    let db = database();
    for r in &db.registers {
        assert_eq!(r.width, 32, "{}", r.name);
        let mut used = 0u64;
        for f in &r.fields {
            assert!(
                f.lsb <= f.msb && f.msb < 32,
                "{}.{}: bits {}:{}",
                r.name,
                f.name,
                f.msb,
                f.lsb
            );
            assert_eq!(used & f.mask(), 0, "{}.{} overlaps another field", r.name, f.name);
            used |= f.mask();
            for v in &f.values {
                assert!(
                    v.value >> f.width() == 0,
                    "{}.{} = {} does not fit",
                    r.name,
                    v.name,
                    v.value
                );
            }
        }
    }
    assert!(regdb_gen::lint(&db).is_empty(), "{:?}", regdb_gen::lint(&db));
}

#[test]
fn every_register_cites_a_section_of_the_document() {
    let db = database();
    let Some(text) = document() else { return };
    for r in &db.registers {
        assert!(!r.source.trim().is_empty(), "{} has no source", r.name);
        let at = r
            .source
            .find(&format!("{LABEL} §"))
            .unwrap_or_else(|| panic!("{}: {}", r.name, r.source));
        let section: String = r.source[at + LABEL.len() + " §".len()..]
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        let section = section.trim_end_matches('.');
        assert!(!section.is_empty(), "{}: {}", r.name, r.source);
        let heading = text.lines().any(|l| {
            let l = l.trim_start_matches(|c: char| c == '*' || c.is_whitespace());
            l.starts_with(&format!("{section} "))
                || l.starts_with(&format!("{section}. "))
                || l.starts_with(&format!("{section}\t"))
        }) || text.contains(&format!("**{section} "));
        assert!(heading, "{} cites §{section}, which is not a heading of the document", r.name);
    }
    assert_eq!(db.meta.family, "evergreen");
    assert_eq!(db.meta.doc_label, LABEL);
}
