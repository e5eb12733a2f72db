//! Checks that fail the build: a database the generator accepts cannot describe impossible
//! hardware (overlapping fields, fields outside the register, two registers at one address) or
//! produce invalid Rust names.

use crate::model::{Database, Register};
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
    }

    let mut identities = BTreeSet::new();
    for r in &db.registers {
        let subject = match &r.variant {
            Some(v) => format!("{} [{v}]", r.name),
            None => r.name.clone(),
        };
        let subject = subject.as_str();
        if !valid_name(&r.name) {
            err(subject, "invalid register name".into());
        }
        if db.block(&r.block).is_none() {
            err(subject, format!("unknown block {}", r.block));
        }
        if !identities.insert((r.block.as_str(), r.name.as_str(), r.variant.as_deref())) {
            err(subject, "register defined twice in its block".into());
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

/// Two registers of one block must not share an address unless the document says they alias
/// (`alias_of`) or they belong to different chipsets (`variant`).
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
                    matches!((&a.variant, &b.variant), (Some(x), Some(y)) if x != y);
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

        let a = GOOD.replace("offset = 0x10", "offset = 0x10\nvariant = \"NV43:G70\"");
        let b = twin.replace("offset = 0x10", "offset = 0x10\nvariant = \"G70:G80\"");
        assert_eq!(messages(&db(&format!("{a}{b}"))), Vec::<String>::new());
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
