//! Checks that fail the build: a database the generator accepts cannot describe impossible
//! hardware (overlapping fields, fields outside the register, two registers at one address) or
//! produce invalid Rust names.

use crate::codegen::type_name;
use crate::model::{ChipRangeText, Database, Register, parse_chip_ranges};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// One problem found in a database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LintError {
    /// Family (database) name.
    pub family: String,
    /// Register (or block) concerned.
    pub subject: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for LintError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.family, self.subject, self.message)
    }
}

/// Whether `name` is a valid UPPER_SNAKE database name (and so a valid Rust identifier).
pub fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some('A'..='Z'))
        && chars.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// Whether `name` is a valid enumerated value name: UPPER_SNAKE, but may start with a digit
/// (`8BPP`, `2D`): the generator prefixes such names to make Rust identifiers.
pub fn valid_value_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some('A'..='Z' | '0'..='9'))
        && chars.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// Every problem in `db`; empty when the database is sound.
pub fn lint(db: &Database) -> Vec<LintError> {
    let mut errors = Vec::new();
    let mut err = |subject: &str, message: String| {
        errors.push(LintError {
            family: db.meta.family.clone(),
            subject: subject.to_string(),
            message,
        })
    };

    if !db.meta.family.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()) {
        err("meta", format!("family {:?} must be lower-case alphanumeric", db.meta.family));
    }
    lint_chipsets(db, &mut err);
    let mut block_names = BTreeSet::new();
    for b in &db.blocks {
        if !valid_name(&b.name) {
            err(&b.name, "invalid block name".into());
        }
        if !block_names.insert(b.name.as_str()) {
            err(&b.name, "block defined twice".into());
        }
        if b.relative && b.base != 0 {
            err(&b.name, "a relative block has no fixed base".into());
        }
        if !b.relative && !(b.instances.is_empty() && b.unit_classes.is_empty()) {
            err(&b.name, "only a relative block has instances and unit classes".into());
        }
        let mut names = BTreeSet::new();
        for i in &b.instances {
            let subject = format!("{}.{}", b.name, i.name);
            if !valid_name(&i.name) || matches!(i.name.as_str(), "BLOCK" | "UNITS") {
                err(&subject, "invalid instance name (UPPER_SNAKE, not BLOCK or UNITS)".into());
            }
            if !names.insert(i.name.as_str()) {
                err(&subject, "instance defined twice".into());
            }
            match (i.count, i.stride) {
                (None, None) if i.first.is_none() => {}
                (Some(count), Some(stride)) if count >= 1 && stride > 0 => {}
                _ => err(&subject, "numbered instances need count >= 1 and stride > 0".into()),
            }
            if let Some(text) = &i.chipsets {
                lint_chip_ranges(db, text, &subject, &mut err);
            }
        }
        for u in &b.unit_classes {
            if !valid_name(&u.name) {
                err(&format!("{}.{}", b.name, u.name), "invalid unit class name".into());
            }
        }
    }

    let mut identities = BTreeSet::new();
    for r in &db.registers {
        let subject = match &r.chipsets {
            Some(v) => format!("{} [{v}]", r.name),
            None => r.name.clone(),
        };
        let subject = subject.as_str();
        if !valid_name(&r.name) {
            err(subject, "invalid register name".into());
        }
        match db.block(&r.block) {
            None => err(subject, format!("unknown block {}", r.block)),
            Some(b) => {
                if let Some(units) = &r.units
                    && !b.unit_classes.iter().any(|u| &u.name == units)
                {
                    err(subject, format!("units {units} is not a unit class of block {}", b.name));
                }
            }
        }
        if !identities.insert((r.block.as_str(), type_name(r))) {
            err(subject, "register (type name) defined twice in its block".into());
        }
        if let Some(text) = &r.chipsets {
            lint_chip_ranges(db, text, subject, &mut err);
        }
        if ![8, 16, 32].contains(&r.width) {
            err(subject, format!("width {} is not 8, 16 or 32", r.width));
        }
        if r.offset % u64::from((r.width / 8).max(1)) != 0 {
            err(subject, format!("offset {:#x} is not aligned to the register width", r.offset));
        }
        if r.source.trim().is_empty() {
            err(subject, "no source".into());
        }
        match (r.count, r.stride) {
            (None, None) => {
                if r.io_stride.is_some() {
                    err(subject, "io_stride on a register that is not an array".into());
                }
            }
            (Some(count), Some(stride)) => {
                if count < 2 {
                    err(subject, format!("array count {count} must be at least 2"));
                }
                if stride < u64::from(r.width / 8) {
                    err(subject, format!("array stride {stride:#x} is smaller than the register"));
                }
            }
            _ => err(subject, "count and stride must be given together".into()),
        }
        if let Some(reset) = r.reset
            && (r.width >= 64 || reset >> r.width != 0)
        {
            err(subject, format!("reset {reset:#x} is wider than the register"));
        }
        lint_fields(r, subject, &mut err);
    }

    lint_addresses(db, &mut err);
    errors
}

fn lint_fields(r: &Register, subject: &str, err: &mut impl FnMut(&str, String)) {
    let mut names = BTreeSet::new();
    for f in &r.fields {
        let fs = format!("{subject}.{}", f.name);
        if !valid_name(&f.name) {
            err(&fs, "invalid field name".into());
        }
        if !names.insert(f.name.as_str()) {
            err(&fs, "field defined twice".into());
        }
        if f.msb < f.lsb {
            err(&fs, format!("msb {} below lsb {}", f.msb, f.lsb));
            continue;
        }
        if f.msb >= r.width {
            err(&fs, format!("bits {}:{} outside the {}-bit register", f.msb, f.lsb, r.width));
            continue;
        }
        let field_access = f.access.unwrap_or(r.access);
        let widens = (field_access.readable() && !r.access.readable())
            || (field_access.writable() && !r.access.writable());
        if widens {
            err(
                &fs,
                format!("field access {field_access:?} exceeds register access {:?}", r.access),
            );
        }
        if let Some(reset) = f.reset
            && reset >> f.width() != 0
        {
            err(&fs, format!("reset {reset:#x} does not fit {} bits", f.width()));
        }
        if let Some(shift) = f.address_shift
            && (shift + f.width() > 48 || !f.values.is_empty() || f.chipset_id)
        {
            err(&fs, "an address field reaches at most 2^48, with no enumeration".into());
        }
        if f.chipset_id && (field_access.writable() || !f.values.is_empty()) {
            err(&fs, "a chipset id field is read-only and not enumerated".into());
        }
        let mut value_names = BTreeSet::new();
        let mut values = BTreeSet::new();
        for v in &f.values {
            if !valid_value_name(&v.name) {
                err(&fs, format!("invalid enumerated value name {:?}", v.name));
            }
            if !value_names.insert(v.name.as_str()) {
                err(&fs, format!("enumerated value {} defined twice", v.name));
            }
            if !values.insert(v.value) {
                err(&fs, format!("two enumerated values are {}", v.value));
            }
            if v.value >> f.width() != 0 {
                err(
                    &fs,
                    format!(
                        "enumerated value {} = {} does not fit {} bits",
                        v.name,
                        v.value,
                        f.width()
                    ),
                );
            }
        }
    }
    for (i, a) in r.fields.iter().enumerate() {
        for b in &r.fields[i + 1..] {
            if a.msb >= a.lsb && b.msb >= b.lsb && a.mask() & b.mask() != 0 {
                err(
                    subject,
                    format!(
                        "fields {} ({}:{}) and {} ({}:{}) overlap",
                        a.name, a.msb, a.lsb, b.name, b.msb, b.lsb
                    ),
                );
            }
        }
    }
}

/// The chipset table: valid, unique names and ids; PCI ranges the right way round; a family
/// with chipset id fields has ids to decode them to.
fn lint_chipsets(db: &Database, err: &mut impl FnMut(&str, String)) {
    let mut names = BTreeSet::new();
    let mut ids = BTreeMap::new();
    for c in &db.chipsets {
        let valid = c.name.starts_with(|ch: char| ch.is_ascii_uppercase())
            && c.name.chars().all(|ch| ch.is_ascii_uppercase() || ch.is_ascii_digit());
        if !valid || matches!(c.name.as_str(), "Self") {
            err(&c.name, "invalid chipset name (upper-case letters and digits)".into());
        }
        if !names.insert(c.name.as_str()) {
            err(&c.name, "chipset listed twice".into());
        }
        if let Some(id) = c.id
            && let Some(other) = ids.insert(id, c.name.as_str())
        {
            err(&c.name, format!("chipset id {id:#x} is also {other}'s"));
        }
        for p in &c.pci {
            if p.first > p.last {
                err(&c.name, format!("PCI range {:#06x}-{:#06x} is reversed", p.first, p.last));
            }
        }
    }
    let id_fields = db.registers.iter().flat_map(|r| &r.fields).any(|f| f.chipset_id);
    if id_fields && ids.is_empty() {
        err("chipset", "chipset_id fields but no chipset has an id".into());
    }
}

/// A chipset list names known chipsets, each `A:B` range running forwards.
fn lint_chip_ranges(db: &Database, text: &str, subject: &str, err: &mut impl FnMut(&str, String)) {
    let ranges = match parse_chip_ranges(text) {
        Ok(r) => r,
        Err(e) => return err(subject, e),
    };
    for range in ranges {
        let (first, end) = match &range {
            ChipRangeText::Only(a) | ChipRangeText::Onward(a) => (a, None),
            ChipRangeText::Until(a, b) => (a, Some(b)),
        };
        let Some(i) = db.chipset_index(first) else {
            err(subject, format!("unknown chipset {first}"));
            continue;
        };
        if let Some(end) = end {
            match db.chipset_index(end) {
                None => err(subject, format!("unknown chipset {end}")),
                Some(j) if j <= i => err(subject, format!("empty chipset range {first}:{end}")),
                Some(_) => {}
            }
        }
    }
}

/// Two registers of one block must not share an address unless the document says they alias
/// (`alias_of`) or they belong to different chipsets (`chipsets`).
fn lint_addresses(db: &Database, err: &mut impl FnMut(&str, String)) {
    let mut by_address: BTreeMap<(&str, u64), Vec<&Register>> = BTreeMap::new();
    for r in &db.registers {
        let stride = r.stride.unwrap_or(0);
        for i in 0..u64::from(r.instances()) {
            by_address.entry((r.block.as_str(), r.offset + i * stride)).or_default().push(r);
        }
    }
    let mut reported = BTreeSet::new();
    for ((block, offset), regs) in by_address {
        for (i, a) in regs.iter().enumerate() {
            for b in &regs[i + 1..] {
                // Two aliases of one register (three views of one word) share its address too.
                let aliased = a.alias_of.as_deref() == Some(b.name.as_str())
                    || b.alias_of.as_deref() == Some(a.name.as_str())
                    || (a.alias_of.is_some() && a.alias_of == b.alias_of);
                let chip_specific =
                    matches!((&a.chipsets, &b.chipsets), (Some(x), Some(y)) if x != y);
                if !aliased && !chip_specific && reported.insert((a.name.clone(), b.name.clone())) {
                    err(
                        &a.name,
                        format!(
                            "{block}+{offset:#x} is also {} (mark one alias_of the other, or fix)",
                            b.name
                        ),
                    );
                }
            }
        }
    }
    for r in &db.registers {
        if let Some(target) = &r.alias_of
            && db.registers_named(target).next().is_none()
        {
            err(&r.name, format!("alias_of names unknown register {target}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db(registers: &str) -> Database {
        let text = format!(
            "[meta]\nfamily = \"t\"\ntitle = \"T\"\ndocument = \"d.txt\"\ndoc_label = \"d\"\n\
             [[chipset]]\nname = \"NV43\"\ndescription = \"\"\nsource = \"s\"\n\
             [[chipset]]\nname = \"G70\"\ndescription = \"\"\nsource = \"s\"\n\
             [[chipset]]\nname = \"G80\"\ndescription = \"\"\nsource = \"s\"\n\
             [[block]]\nname = \"B\"\ndescription = \"\"\nsource = \"d §1\"\n{registers}"
        );
        Database::parse(&text).unwrap()
    }

    fn messages(db: &Database) -> Vec<String> {
        lint(db).into_iter().map(|e| e.to_string()).collect()
    }

    const GOOD: &str = "[[register]]\nblock = \"B\"\nname = \"CTRL\"\noffset = 0x10\naccess = \"rw\"\n\
        description = \"\"\nsource = \"d §1\"\n\
        [[register.field]]\nname = \"EN\"\nmsb = 0\nlsb = 0\n\
        [[register.field]]\nname = \"MODE\"\nmsb = 3\nlsb = 1\n\
        [[register.field.value]]\nname = \"FAST\"\nvalue = 7\n";

    #[test]
    fn a_sound_database_passes() {
        assert_eq!(messages(&db(GOOD)), Vec::<String>::new());
    }

    #[test]
    fn overlapping_fields_fail() {
        let bad = GOOD.replace("msb = 3\nlsb = 1", "msb = 3\nlsb = 0");
        let m = messages(&db(&bad));
        assert!(m.iter().any(|m| m.contains("EN (0:0) and MODE (3:0) overlap")), "{m:?}");
    }

    #[test]
    fn fields_outside_the_register_width_fail() {
        let bad = GOOD.replace("msb = 3\nlsb = 1", "msb = 32\nlsb = 30");
        let m = messages(&db(&bad));
        assert!(m.iter().any(|m| m.contains("outside the 32-bit register")), "{m:?}");
    }

    #[test]
    fn enumerated_values_must_fit_their_field() {
        let bad = GOOD.replace("value = 7", "value = 8");
        let m = messages(&db(&bad));
        assert!(m.iter().any(|m| m.contains("FAST = 8 does not fit 3 bits")), "{m:?}");
    }

    #[test]
    fn duplicate_offsets_fail_unless_aliased_or_chip_specific() {
        let twin = GOOD.replace("CTRL", "CTRL2");
        let m = messages(&db(&format!("{GOOD}{twin}")));
        assert!(m.iter().any(|m| m.contains("B+0x10 is also CTRL2")), "{m:?}");

        let alias = twin.replace("offset = 0x10", "offset = 0x10\nalias_of = \"CTRL\"");
        assert_eq!(messages(&db(&format!("{GOOD}{alias}"))), Vec::<String>::new());

        let a = GOOD.replace("offset = 0x10", "offset = 0x10\nchipsets = \"NV43:G70\"");
        let b = twin.replace("offset = 0x10", "offset = 0x10\nchipsets = \"G70:G80\"");
        assert_eq!(messages(&db(&format!("{a}{b}"))), Vec::<String>::new());
    }

    #[test]
    fn chipset_ranges_name_known_chipsets_in_order() {
        let bad = GOOD.replace("offset = 0x10", "offset = 0x10\nchipsets = \"G80:NV43\"");
        let m = messages(&db(&bad));
        assert!(m.iter().any(|m| m.contains("empty chipset range G80:NV43")), "{m:?}");
        let bad = GOOD.replace("offset = 0x10", "offset = 0x10\nchipsets = \"GT215-\"");
        let m = messages(&db(&bad));
        assert!(m.iter().any(|m| m.contains("unknown chipset GT215")), "{m:?}");
        let ok = GOOD.replace("offset = 0x10", "offset = 0x10\nchipsets = \"NV43, G80-\"");
        assert_eq!(messages(&db(&ok)), Vec::<String>::new());
    }

    #[test]
    fn address_fields_must_stay_within_reach() {
        let bad = GOOD.replace("msb = 3\nlsb = 1", "msb = 31\nlsb = 4\naddress_shift = 24");
        let bad = bad.replace("[[register.field.value]]\nname = \"FAST\"\nvalue = 7\n", "");
        let m = messages(&db(&bad));
        assert!(m.iter().any(|m| m.contains("reaches at most 2^48")), "{m:?}");
    }

    #[test]
    fn registers_aliasing_the_same_register_may_share_its_address() {
        // R5xx US instruction memory: three documented views of one word.
        let b = GOOD
            .replace("CTRL", "VIEW_B")
            .replace("offset = 0x10", "offset = 0x10\nalias_of = \"CTRL\"");
        let c = GOOD
            .replace("CTRL", "VIEW_C")
            .replace("offset = 0x10", "offset = 0x10\nalias_of = \"CTRL\"");
        assert_eq!(messages(&db(&format!("{GOOD}{b}{c}"))), Vec::<String>::new());
        // An alias of something else at the same address is still a collision.
        let other = GOOD.replace("CTRL", "OTHER").replace("offset = 0x10", "offset = 0x20");
        let d = GOOD
            .replace("CTRL", "VIEW_D")
            .replace("offset = 0x10", "offset = 0x10\nalias_of = \"OTHER\"");
        let m = messages(&db(&format!("{GOOD}{other}{d}")));
        assert!(m.iter().any(|m| m.contains("is also")), "{m:?}");
    }

    #[test]
    fn array_instances_collide_with_registers_inside_the_range() {
        let array = GOOD
            .replace("offset = 0x10", "offset = 0x0\ncount = 8\nstride = 0x4")
            .replace("CTRL", "ARR");
        let m = messages(&db(&format!("{GOOD}{array}")));
        assert!(m.iter().any(|m| m.contains("is also")), "{m:?}");
        // Interleaved arrays (V3D PCTRn / PCTRSn) do not collide.
        let a = GOOD.replace("offset = 0x10", "offset = 0x0\ncount = 4\nstride = 0x8");
        let b = a.replace("offset = 0x0", "offset = 0x4").replace("CTRL", "CTRLS");
        assert_eq!(messages(&db(&format!("{a}{b}"))), Vec::<String>::new());
    }

    #[test]
    fn invalid_names_fail() {
        let bad = GOOD.replace("name = \"EN\"", "name = \"en-able\"");
        let m = messages(&db(&bad));
        assert!(m.iter().any(|m| m.contains("invalid field name")), "{m:?}");
        assert!(valid_name("CP_RB_CNTL") && valid_name("V3D_PCTR15"));
        assert!(!valid_name("0X") && !valid_name("_A") && !valid_name("Ёж") && !valid_name(""));
    }

    #[test]
    fn a_field_cannot_be_writable_in_a_read_only_register() {
        let bad = GOOD
            .replace("access = \"rw\"", "access = \"r\"")
            .replace("lsb = 0\n", "lsb = 0\naccess = \"w\"\n");
        let m = messages(&db(&bad));
        assert!(m.iter().any(|m| m.contains("exceeds register access")), "{m:?}");
    }

    #[test]
    fn unknown_blocks_and_half_arrays_fail() {
        let bad = GOOD
            .replace("block = \"B\"", "block = \"NOPE\"")
            .replace("offset = 0x10", "offset = 0x10\ncount = 4");
        let m = messages(&db(&bad));
        assert!(m.iter().any(|m| m.contains("unknown block NOPE")), "{m:?}");
        assert!(m.iter().any(|m| m.contains("count and stride")), "{m:?}");
    }
}
