//! nVidia pushbuffer tables (`hal/regdb/packets/nvidia.toml`, nvidia-hardware-envytools §2.8):
//! the command words the DMA pusher recognises, the IB entry and the puller's own methods,
//! each field by field, and the `packets` module generated from them
//! (`baregpu_regs::nvidia::packets`, over `baregpu_regs::pushbuffer`).

use serde::Deserialize;
use std::fmt::Write;

use crate::packets::{FieldValue, PacketTable, module_name, render_field_list};

/// One command form (§2.8.3): the first word matches when `word & mask == value`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Command {
    /// UPPER_SNAKE name (the pseudocode's comment).
    pub name: String,
    /// As the document writes it.
    pub doc_name: String,
    /// The document section.
    pub section: String,
    /// The chips that have it.
    pub chips: String,
    /// `dma`, `ib` or `both`.
    pub modes: String,
    /// The bits that select the form.
    pub mask: u32,
    /// Their value.
    pub value: u32,
    /// Words of the command before its data.
    pub words: usize,
    /// For a methods command: whether every data word goes to the same method.
    #[serde(default)]
    pub non_increasing: bool,
    /// Its fields.
    #[serde(default, rename = "field")]
    pub fields: Vec<WordField>,
}

/// A fixed-size structure (the IB entry).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// UPPER_SNAKE name.
    pub name: String,
    /// As the document writes it.
    pub doc_name: String,
    /// The document section.
    pub section: String,
    /// Size in words.
    pub words: usize,
    /// Its fields.
    #[serde(default, rename = "field")]
    pub fields: Vec<WordField>,
}

/// A method the puller executes itself (§2.8.4).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Method {
    /// UPPER_SNAKE name (the heading's).
    pub name: String,
    /// Byte address.
    pub method: u16,
    /// The document section.
    pub section: String,
    /// "Present on".
    pub chips: String,
    /// The method table's description.
    pub description: String,
    /// The parameter is an object handle (`[O]`).
    #[serde(default)]
    pub object: bool,
    /// The parameter's fields.
    #[serde(default, rename = "field")]
    pub fields: Vec<WordField>,
}

/// One field of a command, entry or method parameter.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WordField {
    /// UPPER_SNAKE name.
    pub name: String,
    /// The word it is in (0: the first).
    pub word: usize,
    /// Highest bit.
    pub msb: u32,
    /// Lowest bit.
    pub lsb: u32,
    /// For an address part: the lowest address bit it holds.
    pub address_lsb: Option<u32>,
    /// Enumerated values.
    #[serde(default, rename = "value")]
    pub values: Vec<FieldValue>,
}

impl WordField {
    fn width(&self) -> u32 {
        self.msb - self.lsb + 1
    }

    /// The same `FieldKind` a packet body field of these bits and values has.
    fn kind(&self) -> String {
        crate::packets::field_kind(&crate::packets::BodyField {
            name: self.name.clone(),
            dword: 0,
            msb: self.msb,
            lsb: self.lsb,
            address_lsb: self.address_lsb,
            alias_of: None,
            values: self.values.clone(),
        })
    }
}

fn modes_variant(modes: &str) -> &'static str {
    match modes {
        "dma" => "Modes::Dma",
        "ib" => "Modes::Ib",
        _ => "Modes::Both",
    }
}

/// `mod name { FIELD constants, FIELDS, enums }` for an item with fields, and the expression
/// naming its field list.
fn render_fields(out: &mut String, name: &str, owner: &str, fields: &[WordField]) -> String {
    if fields.is_empty() {
        return "&[]".into();
    }
    let module = module_name(name);
    let _ = writeln!(out, "    /// The fields of [`{}`].", crate::packets::const_name(name));
    let _ = writeln!(out, "    pub mod {module} {{");
    out.push_str("        #[allow(unused_imports)]\n        use crate::packet::{EnumEntry, FieldKind};\n        use crate::pushbuffer::WordField;\n");
    for f in fields {
        let _ = writeln!(
            out,
            "        /// `{}` of {owner}: word {} bits {}:{}.",
            f.name, f.word, f.msb, f.lsb
        );
        let _ = writeln!(
            out,
            "        pub const {}: WordField = WordField::new({:?}, {}, {}, {}, {});",
            f.name,
            f.name,
            f.word,
            f.msb,
            f.lsb,
            f.kind()
        );
    }
    render_field_list(
        out,
        "in table order",
        "WordField",
        fields.iter().map(|f| (f.name.as_str(), f.values.as_slice())),
    );
    out.push_str("    }\n");
    format!("{module}::FIELDS")
}

/// The `packets` module of a family whose stream is an nVidia pushbuffer.
pub fn render(table: &PacketTable) -> String {
    let label = &table.meta.doc_label;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n/// Pushbuffer commands, the IB entry and the puller's methods: \
         `hal/regdb/packets/{}.toml`, extracted from {} and checked against it by `regdb-gen`'s \
         tests, field by field. Each constant is typed by the family; each item's module holds \
         its fields.",
        table.meta.family, table.meta.document
    );
    out.push_str("pub mod packets {\n    use super::Family;\n    #[allow(unused_imports)]\n    use crate::pushbuffer::{Command, Entry, Method, Modes};\n");
    for c in &table.commands {
        let _ = writeln!(out);
        let fields = render_fields(&mut out, &c.name, &format!("`{}`", c.name), &c.fields);
        let _ = writeln!(
            out,
            "    /// `{}` ({label} §{}; {}; {} mode): first word `& {:#010x} == {:#010x}`.",
            c.doc_name, c.section, c.chips, c.modes, c.mask, c.value
        );
        let _ = writeln!(
            out,
            "    pub const {}: Command<Family> = Command::new({:?}, {:?}, {:?}, {}, {:#010x}, {:#010x}, {}, {}, {fields});",
            c.name,
            c.name,
            c.section,
            c.chips,
            modes_variant(&c.modes),
            c.mask,
            c.value,
            c.words,
            c.non_increasing
        );
    }
    for e in &table.entries {
        let _ = writeln!(out);
        let fields = render_fields(&mut out, &e.name, &format!("`{}`", e.name), &e.fields);
        let _ = writeln!(
            out,
            "    /// The {} ({label} §{}): {} words.",
            e.doc_name, e.section, e.words
        );
        let _ = writeln!(
            out,
            "    pub const {}: Entry<Family> = Entry::new({:?}, {:?}, {}, {fields});",
            e.name, e.name, e.section, e.words
        );
    }
    for m in &table.methods {
        let _ = writeln!(out);
        let fields = render_fields(&mut out, &m.name, &format!("`{}`", m.name), &m.fields);
        let _ = writeln!(
            out,
            "    /// Method {:#06x} `{}` ({label} §{}; {}): {}.",
            m.method, m.name, m.section, m.chips, m.description
        );
        let _ = writeln!(
            out,
            "    pub const {}: Method<Family> = Method::new({:?}, {:#06x}, {:?}, {:?}, {:?}, {}, {fields});",
            m.name, m.name, m.method, m.section, m.chips, m.description, m.object
        );
    }
    out.push_str("\n    /// Every command form, in the pusher's matching order.\n    pub const COMMANDS: &[Command<Family>] = &[\n");
    for c in &table.commands {
        let _ = writeln!(out, "        {},", c.name);
    }
    out.push_str("    ];\n\n    /// Every puller method, by address.\n    pub const METHODS: &[Method<Family>] = &[\n");
    for m in &table.methods {
        let _ = writeln!(out, "        {},", m.name);
    }
    out.push_str("    ];\n}\n");
    out
}

/// Every problem in the pushbuffer tables: invalid or repeated names, fields outside their
/// word or item, overlapping fields, fields inside a command's selecting mask, a mask that does
/// not hold its value, commands two of which match the same word in the same mode, unknown
/// modes, enum values that do not fit, address parts past bit 63, repeated method addresses,
/// methods that are not 4-byte aligned or not puller methods (0x100 and up go to engines).
pub fn lint(table: &PacketTable) -> Vec<crate::lint::LintError> {
    use crate::lint::{LintError, valid_name, valid_value_name};
    let mut errors = Vec::new();
    let family = &table.meta.family;
    let mut check_fields = |subject: &str, words: usize, fields: &[WordField], mask: u32| {
        let mut err = |message: String| {
            errors.push(LintError { family: family.clone(), subject: subject.into(), message })
        };
        let mut names = std::collections::BTreeSet::new();
        for f in fields {
            if !valid_name(&f.name) || !names.insert(&f.name) {
                err(format!("field name {:?} is invalid or repeated", f.name));
            }
            if f.msb > 31 || f.lsb > f.msb || f.word >= words {
                err(format!(
                    "{} (word {} bits {}:{}) is outside the item",
                    f.name, f.word, f.msb, f.lsb
                ));
                continue;
            }
            let bits = (u32::MAX >> (31 - f.msb)) & !((1u32 << f.lsb) - 1);
            if f.word == 0 && bits & mask != 0 {
                err(format!("{} overlaps the bits that select the command", f.name));
            }
            if f.address_lsb.is_some_and(|a| a + f.width() > 64) {
                err(format!("{} holds address bits past 63", f.name));
            }
            for v in &f.values {
                if !valid_value_name(&v.name) || (f.width() < 32 && v.value >> f.width() != 0) {
                    err(format!("{}: value {} {} does not fit", f.name, v.name, v.value));
                }
            }
        }
        for (i, a) in fields.iter().enumerate() {
            for b in &fields[i + 1..] {
                if a.word == b.word && a.lsb <= b.msb && b.lsb <= a.msb {
                    err(format!("{} and {} overlap in word {}", a.name, b.name, a.word));
                }
            }
        }
    };
    for c in &table.commands {
        check_fields(&c.name, c.words, &c.fields, c.mask);
    }
    for e in &table.entries {
        check_fields(&e.name, e.words, &e.fields, 0);
    }
    for m in &table.methods {
        check_fields(&m.name, 1, &m.fields, 0);
    }
    let mut err = |subject: &str, message: String| {
        errors.push(LintError { family: family.clone(), subject: subject.into(), message })
    };
    let mut names = std::collections::BTreeSet::new();
    for c in &table.commands {
        if !valid_name(&c.name) || !names.insert(&c.name) {
            err(&c.name, "invalid or repeated command name".into());
        }
        if c.value & !c.mask != 0 {
            err(&c.name, format!("value {:#x} has bits outside mask {:#x}", c.value, c.mask));
        }
        if !["dma", "ib", "both"].contains(&c.modes.as_str()) || c.words == 0 {
            err(&c.name, format!("modes {:?} / words {} are not valid", c.modes, c.words));
        }
    }
    for (i, a) in table.commands.iter().enumerate() {
        for b in &table.commands[i + 1..] {
            // Two forms overlap when some word satisfies both: their values agree on the bits
            // both masks select. Within one mode the first in table order would shadow the
            // other.
            let common = a.mask & b.mask;
            let shared_mode = a.modes == b.modes || a.modes == "both" || b.modes == "both";
            if a.value & common == b.value & common && shared_mode {
                err(&b.name, format!("matches words {} matches too", a.name));
            }
        }
    }
    let mut addresses = std::collections::BTreeSet::new();
    for m in &table.methods {
        if !valid_name(&m.name)
            || !addresses.insert(m.method)
            || m.method % 4 != 0
            || m.method >= 0x100
        {
            err(
                &m.name,
                format!("method {:#x} is repeated, unaligned or not a puller method", m.method),
            );
        }
    }
    for e in &table.entries {
        if !valid_name(&e.name) || e.words == 0 {
            err(&e.name, "invalid entry".into());
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(commands: &str) -> PacketTable {
        toml::from_str(&format!(
            "[meta]\nfamily = \"t\"\ndocument = \"d\"\ndoc_label = \"d\"\n{commands}"
        ))
        .unwrap()
    }

    fn command(name: &str, mask: u32, value: u32, modes: &str, field: &str) -> String {
        format!(
            "\n[[command]]\nname = \"{name}\"\ndoc_name = \"n\"\nsection = \"s\"\nchips = \"c\"\n\
             modes = \"{modes}\"\nmask = {mask}\nvalue = {value}\nwords = 1\n{field}"
        )
    }

    #[test]
    fn forms_that_match_one_word_in_one_mode_are_refused() {
        // Increasing methods and a jump are disjoint (bits 1:0 differ).
        let sound = command("INC", 0xe003_0003, 0, "both", "") + &command("JUMP", 3, 1, "dma", "");
        assert!(lint(&table(&sound)).is_empty(), "{:?}", lint(&table(&sound)));
        // A second form inside the first's words, in a shared mode, shadows it.
        let shadowed =
            command("INC", 0xe003_0003, 0, "both", "") + &command("ZERO", 0xffff_ffff, 0, "ib", "");
        let errors = lint(&table(&shadowed));
        assert!(errors[0].message.contains("INC matches too"), "{errors:?}");
    }

    #[test]
    fn fields_inside_the_selecting_bits_or_the_word_are_refused() {
        let field = "\n[[command.field]]\nname = \"TARGET\"\nword = 0\nmsb = 31\nlsb = 0\n";
        let errors = lint(&table(&command("JUMP", 3, 1, "dma", field)));
        assert!(errors[0].message.contains("overlaps the bits that select"), "{errors:?}");
        let far = "\n[[command.field]]\nname = \"COUNT\"\nword = 1\nmsb = 23\nlsb = 0\n";
        let errors = lint(&table(&command("LONG", 0xffff_0003, 0x30000, "ib", far)));
        assert!(errors[0].message.contains("outside the item"), "{errors:?}");
    }
}
