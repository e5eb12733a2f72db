//! Rust code generation: one module per family, one submodule per block, one type per register.
//!
//! For a family the generator emits
//!
//! - `Family`, the family as a type (`baregpu_hal::register::Family`), and `Chipset`, the enum of
//!   its chipsets in the database's order (which is the order chipset ranges are written
//!   against), with `ALL`, `name()`, and where the database has them `from_id`/`id` (the code a
//!   chip reports, nVidia `PMC_BOOT_0`), `mmio_base` (SoC register windows) and the `PCI_IDS`
//!   table with `identify_pci`;
//! - per block a module; a relative block gets a `Block` marker (`baregpu_hal::register::Base`),
//!   one type per `[[block.instance]]` (`Instance` or `InstanceArray`) and, where registers are
//!   limited to classes of units, a `Units` enum;
//! - per register `pub struct CP_RB_CNTL(u32)`, `#[repr(transparent)]`, implementing
//!   `baregpu_hal::register::Register` (family, base, offset, masks, chipsets), `Readable` /
//!   `Writable` as the access allows, and `Scalar` or `Array` (through the crate's `register!`
//!   macro, which also writes `Default`, `Debug` and `defmt::Format` printing fields by name,
//!   and the register's `SPEC`);
//! - per field a `FieldSpec` constant (`CP_RB_CNTL::RB_BUFSZ`: name, position, width, access;
//!   its doc comment carries the document's description), a getter, and a setter for writable
//!   fields: `with_x(v)` (documented truncation) and `try_with_x(v) -> Result<_, FieldOverflow>`;
//!   enumerated fields read and write a generated `enum`; fields that hold a bus address read
//!   and write a `BusAddress` (`try_with_x` rejects misaligned or unreachable addresses); a
//!   chipset id field reads as the `Chipset`;
//! - `REGISTERS: &[RegisterSpec<Chipset>]` for generic users (device models, register dumps).
//!
//! Chip-specific layouts get a type-name suffix derived from their chipset list alone, so adding
//! a second layout never renames the first: `A` gives `_A`, `A:B` (from A up to, not including,
//! B) gives `_A_UNTIL_B`, `A-` (A and later) gives `_A_ONWARD`, and ranges are joined with
//! `_AND_` (`MMIO_ERR_GT215_UNTIL_GF100`, `INTR_MASK_GT215_ONWARD`).
//!
//! Output depends only on the database (no hash-map iteration, no timestamps): regenerating
//! gives identical bytes.

use crate::lint::{LintError, lint};
use crate::model::{
    Access, Block, ChipRangeText, Database, EnumValue, Field, Instance, Register, parse_chip_ranges,
};
use std::collections::BTreeSet;
use std::fmt::Write;

/// Generate the Rust module body for one family, after linting it.
pub fn generate(db: &Database) -> Result<String, Vec<LintError>> {
    let errors = lint(db);
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(Generator { db }.family())
}

/// The Rust type name of a register: its name, plus a suffix derived from its chipset list
/// when it has one (see the module documentation).
pub fn type_name(r: &Register) -> String {
    match &r.chipsets {
        Some(text) => format!("{}_{}", r.name, chipsets_suffix(text)),
        None => r.name.clone(),
    }
}

/// `GT215:GF100` -> `GT215_UNTIL_GF100`, `GF100-` -> `GF100_ONWARD`, `G98, MCP77:GM107` ->
/// `G98_AND_MCP77_UNTIL_GM107`.
fn chipsets_suffix(text: &str) -> String {
    let parts: Vec<String> = match parse_chip_ranges(text) {
        Ok(ranges) => ranges
            .iter()
            .map(|r| match r {
                ChipRangeText::Only(a) => a.clone(),
                ChipRangeText::Until(a, b) => format!("{a}_UNTIL_{b}"),
                ChipRangeText::Onward(a) => format!("{a}_ONWARD"),
            })
            .collect(),
        // The lints reject such a list before any code is generated.
        Err(_) => vec![text.chars().filter(char::is_ascii_alphanumeric).collect()],
    };
    parts.join("_AND_").to_ascii_uppercase()
}

struct Generator<'a> {
    db: &'a Database,
}

fn rust_str(s: &str) -> String {
    format!("{s:?}")
}

/// Doc-comment lines (`///`); the text is kept on one line per entry.
fn doc(out: &mut String, indent: &str, lines: &[String]) {
    for line in lines {
        let line = line.replace(['\n', '\r'], " ");
        if line.is_empty() {
            let _ = writeln!(out, "{indent}///");
        } else {
            let _ = writeln!(out, "{indent}/// {line}");
        }
    }
}

/// Rust keywords (strict and reserved): names that need `r#` or a suffix.
pub(crate) const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut",
    "pub", "ref", "return", "self", "static", "struct", "super", "trait", "true", "type", "unsafe",
    "use", "where", "while", "abstract", "become", "box", "do", "final", "macro", "override",
    "priv", "try", "typeof", "unsized", "virtual", "yield",
];

/// Methods every register type has; field accessors must not collide with them.
const RESERVED_METHODS: &[&str] = &["from_raw", "raw", "reset", "to_raw", "exists_on"];

/// Associated constants of register types (inherent or from the traits); a field constant must
/// not shadow them.
const RESERVED_CONSTS: &[&str] = &[
    "RESET",
    "FIELDS",
    "SPEC",
    "UNITS",
    "IO_ADDRESS",
    "IO_STRIDE",
    "NAME",
    "OFFSET",
    "WRITE_MASK",
    "RESET_RAW",
    "CHIPSETS",
    "COUNT",
    "STRIDE",
];

fn snake(name: &str) -> String {
    let s = name.to_ascii_lowercase();
    if KEYWORDS.contains(&s.as_str()) || RESERVED_METHODS.contains(&s.as_str()) {
        format!("{s}_field")
    } else {
        s
    }
}

/// Name of a field's `FieldSpec` constant.
fn field_const(name: &str) -> String {
    if RESERVED_CONSTS.contains(&name) { format!("{name}_FIELD") } else { name.to_string() }
}

/// CamelCase type or variant name of an UPPER_SNAKE name (`V` before a leading digit).
pub(crate) fn camel(name: &str) -> String {
    let mut out = String::new();
    for part in name.split('_').filter(|p| !p.is_empty()) {
        let mut chars = part.chars();
        if let Some(first) = chars.next() {
            out.push(first.to_ascii_uppercase());
            out.extend(chars.map(|c| c.to_ascii_lowercase()));
        }
    }
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 'V');
    }
    if out == "Self" {
        out.push('_');
    }
    out
}

/// Smallest unsigned type holding `width` bits, or `bool` for one bit.
fn field_type(width: u32) -> &'static str {
    match width {
        1 => "bool",
        2..=8 => "u8",
        9..=16 => "u16",
        _ => "u32",
    }
}

fn hex(v: u64) -> String {
    if v < 10 { v.to_string() } else { format!("{v:#x}") }
}

/// Underscored hex literal (clippy::unreadable_literal friendly).
fn hex_u32(v: u32) -> String {
    if v < 0x10000 { hex(u64::from(v)) } else { format!("{:#06x}_{:04x}", v >> 16, v & 0xffff) }
}

fn mask(width: u32) -> u32 {
    if width >= 32 { u32::MAX } else { (1 << width) - 1 }
}

/// The fields a register has, with the implied whole-register field when the database lists none.
fn fields_of(r: &Register) -> Vec<Field> {
    if r.fields.is_empty() {
        vec![Field {
            name: r.name.clone(),
            msb: r.width - 1,
            lsb: 0,
            access: None,
            reset: r.reset,
            address_shift: None,
            chipset_id: false,
            description: String::from("The whole register."),
            values: Vec::new(),
        }]
    } else {
        let mut fields = r.fields.clone();
        fields.sort_by_key(|f| (f.lsb, f.msb));
        fields
    }
}

fn field_access(r: &Register, f: &Field) -> Access {
    f.access.unwrap_or(r.access)
}

/// Effective register access: what the register says, narrowed to what its fields allow.
fn register_access(r: &Register) -> (bool, bool) {
    let fields = fields_of(r);
    let readable = r.access.readable() && fields.iter().any(|f| field_access(r, f).readable());
    let writable = r.access.writable() && fields.iter().any(|f| field_access(r, f).writable());
    (readable, writable)
}

fn write_mask(r: &Register) -> u32 {
    fields_of(r)
        .iter()
        .filter(|f| field_access(r, f).writable() && r.access.writable())
        .fold(0, |m, f| m | (mask(f.width()) << f.lsb))
}

fn reset_value(r: &Register) -> u32 {
    match r.reset {
        Some(v) => v as u32,
        None => fields_of(r)
            .iter()
            .fold(0, |acc, f| acc | ((f.reset.unwrap_or(0) as u32 & mask(f.width())) << f.lsb)),
    }
}

/// An enumeration is complete when it names every value the field can hold.
fn complete_enum(f: &Field) -> bool {
    f.width() < 16 && f.values.len() as u64 == 1u64 << f.width()
}

impl Generator<'_> {
    fn family(&self) -> String {
        let m = &self.db.meta;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "// GENERATED by regdb-gen from hal/regdb/{}.toml. Do not edit: run `cargo xtask regen`.",
            m.family
        );
        let _ = writeln!(out);
        doc(
            &mut out,
            "",
            &[format!(
                "The {} family as a type: the `Register::Family` of every register below.",
                m.title
            )],
        );
        let _ = writeln!(out, "#[derive(Debug, Clone, Copy, PartialEq, Eq)]");
        let _ = writeln!(out, "pub enum Family {{}}");
        let _ = writeln!(out, "impl baregpu_hal::register::Family for Family {{");
        let _ = writeln!(out, "    const NAME: &'static str = {};", rust_str(&m.family));
        let _ = writeln!(out, "    type Chipset = Chipset;");
        let _ = writeln!(out, "}}");
        self.chipsets(&mut out);
        for block in &self.db.blocks {
            self.block(&mut out, block);
        }
        self.spec_table(&mut out);
        out
    }

    /// `Chipsets::All`, or the ranges of a chipset list as a Rust expression.
    fn chipsets_expr(&self, text: Option<&str>) -> String {
        let Some(text) = text else { return "baregpu_hal::register::Chipsets::All".into() };
        let chip = |name: &str| format!("Chipset::{name}");
        let next = |name: &str| {
            self.db
                .chipset_index(name)
                .and_then(|i| self.db.chipsets.get(i + 1))
                .map_or("None".to_string(), |c| format!("Some({})", chip(&c.name)))
        };
        let ranges: Vec<String> = parse_chip_ranges(text)
            .unwrap_or_default()
            .iter()
            .map(|r| {
                let (first, end) = match r {
                    ChipRangeText::Only(a) => (chip(a), next(a)),
                    ChipRangeText::Until(a, b) => (chip(a), format!("Some({})", chip(b))),
                    ChipRangeText::Onward(a) => (chip(a), "None".into()),
                };
                format!("baregpu_hal::register::ChipRange {{ first: {first}, end: {end} }}")
            })
            .collect();
        format!("baregpu_hal::register::Chipsets::Ranges(&[{}])", ranges.join(", "))
    }

    fn chipsets(&self, out: &mut String) {
        let chips = &self.db.chipsets;
        doc(
            out,
            "",
            &["The chipsets of the family, in the order the database lists them: chipset \
                 ranges (`GT215:GF100`, `GF100-`) are written against this order, and `Ord` \
                 follows it. Non-exhaustive: a chip added to the database is not a breaking \
                 change."
                .into()],
        );
        let _ = writeln!(out, "#[allow(non_camel_case_types)]");
        let _ = writeln!(out, "#[non_exhaustive]");
        let _ =
            writeln!(out, "#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]");
        let _ = writeln!(out, "#[cfg_attr(feature = \"defmt\", derive(defmt::Format))]");
        let _ = writeln!(out, "pub enum Chipset {{");
        for c in chips {
            let mut lines = vec![format!("{}.", c.description.trim_end_matches('.'))];
            if let Some(id) = c.id {
                lines.push(format!("Chipset id {id:#x}."));
            }
            lines.push(format!("Source: {}.", c.source));
            doc(out, "    ", &lines);
            let _ = writeln!(out, "    {},", c.name);
        }
        let _ = writeln!(out, "}}");
        let _ = writeln!(out, "impl Chipset {{");
        doc(out, "    ", &["Every chipset, in order.".into()]);
        let all: Vec<String> = chips.iter().map(|c| format!("Chipset::{}", c.name)).collect();
        let _ = writeln!(out, "    pub const ALL: &'static [Chipset] = &[{}];", all.join(", "));
        doc(out, "    ", &["The chipset's name, as the documents write it.".into()]);
        let _ = writeln!(out, "    pub const fn name(self) -> &'static str {{");
        let _ = writeln!(out, "        match self {{");
        for c in chips {
            let _ = writeln!(out, "            Chipset::{} => {},", c.name, rust_str(&c.name));
        }
        if chips.is_empty() {
            let _ = writeln!(out, "            _ => unreachable!(),");
        }
        let _ = writeln!(out, "        }}");
        let _ = writeln!(out, "    }}");
        if chips.iter().any(|c| c.id.is_some()) {
            doc(
                out,
                "    ",
                &["The chipset whose id (the code the chip reports) is `id`, or an error for a code the table does not list.".into()],
            );
            let _ = writeln!(
                out,
                "    pub const fn from_id(id: u32) -> Result<Chipset, baregpu_hal::register::UnknownChipset> {{"
            );
            let _ = writeln!(out, "        match id {{");
            for c in chips {
                if let Some(id) = c.id {
                    let _ = writeln!(out, "            {} => Ok(Chipset::{}),", hex(id), c.name);
                }
            }
            let _ = writeln!(
                out,
                "            _ => Err(baregpu_hal::register::UnknownChipset {{ family: {}, id }}),",
                rust_str(&self.db.meta.family)
            );
            let _ = writeln!(out, "        }}");
            let _ = writeln!(out, "    }}");
            doc(out, "    ", &["The chipset's id, where the table gives one.".into()]);
            let _ = writeln!(out, "    pub const fn id(self) -> Option<u32> {{");
            let _ = writeln!(out, "        match self {{");
            for c in chips {
                let v = c.id.map_or("None".to_string(), |id| format!("Some({})", hex(id)));
                let _ = writeln!(out, "            Chipset::{} => {v},", c.name);
            }
            let _ = writeln!(out, "        }}");
            let _ = writeln!(out, "    }}");
        }
        if chips.iter().any(|c| c.mmio_base.is_some()) {
            doc(
                out,
                "    ",
                &["CPU physical address of the family's register window on this chip (SoC parts without PCI BARs), where known.".into()],
            );
            let _ = writeln!(out, "    pub const fn mmio_base(self) -> Option<u64> {{");
            let _ = writeln!(out, "        match self {{");
            for c in chips {
                let v = c.mmio_base.map_or("None".to_string(), |a| format!("Some({})", hex(a)));
                let _ = writeln!(out, "            Chipset::{} => {v},", c.name);
            }
            let _ = writeln!(out, "        }}");
            let _ = writeln!(out, "    }}");
        }
        let _ = writeln!(out, "}}");
        doc(
            out,
            "",
            &["PCI vendor/device IDs of the family's chipsets, in chipset order. Some chipsets share an ID range (the documents tell them apart by a register only): the first entry wins.".into()],
        );
        let _ = writeln!(out, "pub const PCI_IDS: &[baregpu_hal::pci::PciMatch<Chipset>] = &[");
        for c in chips {
            for p in &c.pci {
                let name =
                    p.name.as_deref().map_or("None".into(), |n| format!("Some({})", rust_str(n)));
                let _ = writeln!(
                    out,
                    "    baregpu_hal::pci::PciMatch {{ vendor: {:#06x}, first: {:#06x}, last: {:#06x}, chipset: Chipset::{}, name: {name} }},",
                    p.vendor, p.first, p.last, c.name
                );
            }
        }
        let _ = writeln!(out, "];");
        doc(out, "", &["The `PCI_IDS` entry of a vendor/device ID pair.".into()]);
        let _ = writeln!(
            out,
            "pub fn identify_pci(vendor: u16, device: u16) -> Option<&'static baregpu_hal::pci::PciMatch<Chipset>> {{"
        );
        let _ = writeln!(out, "    PCI_IDS.iter().find(|m| m.matches(vendor, device))");
        let _ = writeln!(out, "}}");
    }

    fn block(&self, out: &mut String, block: &Block) {
        let module = block.name.to_ascii_lowercase();
        let mut lines = vec![format!("{}: {}", block.name, block.description), String::new()];
        lines.push(format!("Source: {}.", block.source));
        if block.relative {
            lines.push(String::new());
            lines.push(
                "The block exists once per engine or channel: its registers are reached through \
                 an instance below, `io.at::<Instance>()` or `io.at_index::<Instances>(i)` \
                 (`baregpu_hal::RegisterIoExt`), never directly on the register window."
                    .into(),
            );
        }
        doc(out, "", &lines);
        let _ = writeln!(out, "pub mod {module} {{");
        let _ = writeln!(out, "    #![allow(unused_imports)]");
        let _ = writeln!(out, "    use super::{{Chipset, Family}};");
        let _ = writeln!(
            out,
            "    use baregpu_hal::register::{{Absolute, AddressFieldError, FieldOverflow, FieldSpec, InvalidEnumValue, UnknownChipset}};"
        );
        let _ = writeln!(out, "    use baregpu_hal::dma::BusAddress;");
        if block.relative {
            doc(
                out,
                "    ",
                &[format!(
                    "The {} block as a type: the `Register::Base` of its registers.",
                    block.name
                )],
            );
            let _ = writeln!(out, "    #[derive(Debug, Clone, Copy, PartialEq, Eq)]");
            let _ = writeln!(out, "    pub enum Block {{}}");
            let _ = writeln!(
                out,
                "    impl baregpu_hal::register::Base for Block {{ const NAME: &'static str = {}; }}",
                rust_str(&block.name)
            );
            for i in &block.instances {
                self.instance(out, i);
            }
            if !block.unit_classes.is_empty() {
                doc(
                    out,
                    "    ",
                    &["Classes of units a register of the block may be limited to (a register's `UNITS`; registers without one exist on every unit).".into()],
                );
                let _ = writeln!(out, "    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]");
                let _ =
                    writeln!(out, "    #[cfg_attr(feature = \"defmt\", derive(defmt::Format))]");
                let _ = writeln!(out, "    pub enum Units {{");
                for u in &block.unit_classes {
                    doc(out, "        ", &[format!("`{}`: {}", u.name, u.description)]);
                    let _ = writeln!(out, "        {},", camel(&u.name));
                }
                let _ = writeln!(out, "    }}");
            }
        } else {
            doc(out, "    ", &["Base address of the block; register offsets include it.".into()]);
            let _ = writeln!(out, "    pub const BASE: usize = {};", hex(block.base));
        }
        for r in &self.db.registers {
            if r.block == block.name {
                self.register(out, block, r);
            }
        }
        let _ = writeln!(out, "}}");
    }

    fn instance(&self, out: &mut String, i: &Instance) {
        let ty = camel(&i.name);
        let mut lines = vec![format!("`{}`: {}.", i.name, i.description.trim_end_matches('.'))];
        match (i.count, i.stride) {
            (Some(count), Some(stride)) => {
                let first = i.first.unwrap_or(0);
                lines.push(format!(
                    "Instance `i` at {:#x} + i * {stride:#x}, for i in {first}..{}.",
                    i.base,
                    first + count
                ));
            }
            _ => lines.push(format!("At {:#x}.", i.base)),
        }
        if let Some(c) = &i.chipsets {
            lines.push(format!("Chipsets: `{c}`."));
        }
        lines.push(format!("Source: {}.", i.source));
        doc(out, "    ", &lines);
        let _ = writeln!(out, "    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]");
        let _ = writeln!(out, "    pub struct {ty};");
        let chipsets = self.chipsets_expr(i.chipsets.as_deref());
        let (kind, extra) = match (i.count, i.stride) {
            (Some(count), Some(stride)) => (
                "InstanceArray",
                format!(
                    "        const FIRST: usize = {};\n        const COUNT: usize = {count};\n        const STRIDE: usize = {};\n",
                    i.first.unwrap_or(0),
                    hex(stride)
                ),
            ),
            _ => ("Instance", String::new()),
        };
        let _ = writeln!(out, "    impl baregpu_hal::register::{kind} for {ty} {{");
        let _ = writeln!(out, "        type Family = Family;");
        let _ = writeln!(out, "        type Block = Block;");
        let _ = writeln!(out, "        const NAME: &'static str = {};", rust_str(&i.name));
        let _ = writeln!(out, "        const BASE: usize = {};", hex(i.base));
        out.push_str(&extra);
        let _ = writeln!(
            out,
            "        const CHIPSETS: baregpu_hal::register::Chipsets<Chipset> = {chipsets};"
        );
        let _ = writeln!(out, "    }}");
    }

    fn register(&self, out: &mut String, block: &Block, r: &Register) {
        let ty = type_name(r);
        let fields = fields_of(r);
        let (readable, writable) = register_access(r);
        let offset = r.offset + if block.relative { 0 } else { block.base };
        let access = match (readable, writable) {
            (true, true) => "read/write",
            (true, false) => "read-only",
            (false, true) => "write-only",
            (false, false) => "reserved (no readable or writable field)",
        };

        let mut lines = vec![format!("`{}`: {}", r.name, r.description.trim()), String::new()];
        let mut place = format!("Offset {offset:#x}");
        if block.relative {
            place.push_str(" from the block instance's base");
        }
        if let (Some(count), Some(stride)) = (r.count, r.stride) {
            let _ = write!(place, ", {count} instances {stride:#x} bytes apart");
        }
        if let Some(io) = r.io_address {
            let _ = write!(place, "; falcon I[{io:#x}]");
        }
        lines.push(format!("{place}; {}-bit, {access}.", r.width));
        if let Some(v) = &r.chipsets {
            lines.push(format!("Chipsets: `{v}` (`Register::CHIPSETS`)."));
        }
        if let Some(u) = &r.units {
            lines.push(format!("Units: `{u}` (`UNITS`)."));
        }
        if let Some(a) = &r.alias_of {
            lines.push(format!("Alias of `{a}`."));
        }
        lines.push(format!("Source: {}.", r.source));
        doc(out, "    ", &lines);
        let _ = writeln!(out, "    #[allow(non_camel_case_types)]");
        let _ = writeln!(out, "    #[derive(Clone, Copy, PartialEq, Eq, Hash)]");
        let _ = writeln!(out, "    #[repr(transparent)]");
        let _ = writeln!(out, "    pub struct {ty}(u32);");

        // The trait impls, `Debug`, `defmt::Format` and `SPEC`: the crate's `register!` macro.
        let kind = match (r.count, r.stride) {
            (Some(count), Some(stride)) => format!("array({count}, {})", hex(stride)),
            _ => "scalar".into(),
        };
        let base = if block.relative { "Block" } else { "Absolute" };
        let chipsets = match &r.chipsets {
            Some(c) => format!(" chipsets {},", self.chipsets_expr(Some(c))),
            None => String::new(),
        };
        let _ = writeln!(
            out,
            "    register!({ty}: {} in {} ({base}, {}) at {}, {readable} {writable} {kind}, mask {}, reset {},{chipsets} source {});",
            rust_str(&r.name),
            rust_str(&block.name),
            block.relative,
            hex(offset),
            hex_u32(write_mask(r)),
            hex_u32(reset_value(r)),
            rust_str(&r.source),
        );

        // Enumerations live in a submodule named after the register type.
        let enum_fields: Vec<&Field> = fields.iter().filter(|f| !f.values.is_empty()).collect();
        let enum_mod = ty.to_ascii_lowercase();
        if !enum_fields.is_empty() {
            doc(out, "    ", &[format!("Enumerated field values of [`{ty}`].")]);
            let _ = writeln!(out, "    pub mod {enum_mod} {{");
            for f in &enum_fields {
                self.enumeration(out, f);
            }
            let _ = writeln!(out, "    }}");
        }

        let _ = writeln!(out, "    impl {ty} {{");
        doc(
            out,
            "        ",
            &["Value after reset (documented defaults; unknown bits are 0).".into()],
        );
        let _ = writeln!(out, "        pub const RESET: Self = Self({});", hex_u32(reset_value(r)));
        if let Some(u) = &r.units {
            doc(out, "        ", &["The units of the block that have this register.".into()]);
            let _ = writeln!(out, "        pub const UNITS: Units = Units::{};", camel(u));
        }
        if let Some(io) = r.io_address {
            doc(out, "        ", &["Address of the register in the falcon I[] space.".into()]);
            let _ = writeln!(out, "        pub const IO_ADDRESS: u32 = {};", hex(io));
            if let Some(s) = r.io_stride {
                doc(out, "        ", &["I[] distance between instances.".into()]);
                let _ = writeln!(out, "        pub const IO_STRIDE: u32 = {};", hex(s));
            }
        }
        for f in &fields {
            self.field_spec(out, r, f, readable, writable);
        }
        doc(out, "        ", &["Fields, lowest bit first.".into()]);
        let names: Vec<String> =
            fields.iter().map(|f| format!("Self::{}", field_const(&f.name))).collect();
        let _ = writeln!(
            out,
            "        pub const FIELDS: &'static [FieldSpec] = &[{}];",
            names.join(", ")
        );
        doc(out, "        ", &["The register holding `raw`.".into()]);
        let _ = writeln!(
            out,
            "        #[inline]\n        pub const fn from_raw(raw: u32) -> Self {{ Self(raw) }}"
        );
        doc(out, "        ", &["The raw value.".into()]);
        let _ =
            writeln!(out, "        #[inline]\n        pub const fn raw(self) -> u32 {{ self.0 }}");
        for f in &fields {
            self.field_accessors(out, r, &enum_mod, f, readable, writable);
        }
        let _ = writeln!(out, "    }}");
    }

    fn field_spec(
        &self,
        out: &mut String,
        r: &Register,
        f: &Field,
        readable: bool,
        writable: bool,
    ) {
        let fa = field_access(r, f);
        let ctor = match (fa.readable() && readable, fa.writable() && writable) {
            (true, true) => "rw",
            (true, false) => "ro",
            (false, true) => "wo",
            (false, false) => "hidden",
        };
        let mut desc =
            vec![format!("`{}` (bits {}:{}): {}", f.name, f.msb, f.lsb, f.description.trim())];
        if let Some(reset) = f.reset {
            desc.push(format!("Reset value: {}.", hex(reset)));
        }
        if let Some(shift) = f.address_shift {
            desc.push(format!(
                "Holds a bus address from bit {shift} up (reach {:#x}).",
                1u64 << (shift + f.width())
            ));
        }
        doc(out, "        ", &desc);
        let _ = writeln!(
            out,
            "        pub const {}: FieldSpec = FieldSpec::{ctor}({}, {}, {});",
            field_const(&f.name),
            rust_str(&f.name),
            f.lsb,
            f.width()
        );
    }

    fn enumeration(&self, out: &mut String, f: &Field) {
        let name = camel(&f.name);
        let repr = if f.width() == 1 { "u8" } else { field_type(f.width()) };
        let mut lines = vec![format!("Values of field `{}`.", f.name)];
        if !complete_enum(f) {
            lines.push(String::new());
            lines.push(
                "Not every value is documented: reading an undocumented one is an error.".into(),
            );
        }
        doc(out, "        ", &lines);
        let _ = writeln!(out, "        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]");
        let _ = writeln!(out, "        #[cfg_attr(feature = \"defmt\", derive(defmt::Format))]");
        let _ = writeln!(out, "        #[repr({repr})]");
        let _ = writeln!(out, "        pub enum {name} {{");
        let mut used = BTreeSet::new();
        for v in &f.values {
            let variant = unique_variant(&mut used, v);
            let text = match v.description.trim() {
                "" => format!("`{}` = {}", v.name, v.value),
                d => format!("`{}` = {}: {d}", v.name, v.value),
            };
            doc(out, "            ", &[text]);
            let _ = writeln!(out, "            {variant} = {},", hex(v.value));
        }
        let _ = writeln!(out, "        }}");
        let _ = writeln!(out, "        impl {name} {{");
        doc(out, "            ", &["The value for raw field contents, if documented.".into()]);
        let _ = writeln!(
            out,
            "            #[inline]\n            pub const fn from_raw(raw: u32) -> Option<Self> {{"
        );
        let _ = writeln!(out, "                match raw {{");
        let mut used = BTreeSet::new();
        for v in &f.values {
            let variant = unique_variant(&mut used, v);
            let _ = writeln!(out, "                    {} => Some(Self::{variant}),", hex(v.value));
        }
        let _ = writeln!(out, "                    _ => None,");
        let _ = writeln!(out, "                }}");
        let _ = writeln!(out, "            }}");
        let _ = writeln!(out, "        }}");
    }

    fn field_accessors(
        &self,
        out: &mut String,
        r: &Register,
        enum_mod: &str,
        f: &Field,
        readable: bool,
        writable: bool,
    ) {
        let method = snake(&f.name);
        let spec = format!("Self::{}", field_const(&f.name));
        let link = format!("[`{}`](Self::{})", f.name, field_const(&f.name));
        let width = f.width();
        let fa = field_access(r, f);
        let can_read = fa.readable() && readable;
        let can_write = fa.writable() && writable;
        let vt = field_type(width);
        let get_raw = format!("{spec}.get(self.0)");
        let reg = rust_str(&r.name);

        if let Some(shift) = f.address_shift {
            if can_read {
                doc(out, "        ", &[format!("The bus address in {link}.")]);
                let _ = writeln!(
                    out,
                    "        #[inline]\n        pub const fn {method}(self) -> BusAddress {{ {spec}.get_address(self.0, {shift}) }}"
                );
            }
            if can_write {
                doc(
                    out,
                    "        ",
                    &[format!(
                        "Set {link} to `address`, or fail if it is not a multiple of {} or not below {:#x} (nothing is truncated).",
                        1u64 << shift,
                        1u64 << (shift + width)
                    )],
                );
                let _ = writeln!(
                    out,
                    "        #[inline]\n        pub const fn try_with_{method}(self, address: BusAddress) -> Result<Self, AddressFieldError> {{ match {spec}.set_address({reg}, self.0, address, {shift}) {{ Ok(raw) => Ok(Self(raw)), Err(e) => Err(e) }} }}"
                );
            }
            return;
        }

        if f.chipset_id {
            if can_read {
                doc(
                    out,
                    "        ",
                    &[format!(
                        "The chipset {link} names, or an error for an id the chipset table does not list."
                    )],
                );
                let _ = writeln!(
                    out,
                    "        #[inline]\n        pub const fn {method}(self) -> Result<Chipset, UnknownChipset> {{ Chipset::from_id({get_raw}) }}"
                );
                doc(out, "        ", &[format!("Raw contents of {link}.")]);
                let _ = writeln!(
                    out,
                    "        #[inline]\n        pub const fn {method}_raw(self) -> u32 {{ {get_raw} }}"
                );
            }
            return;
        }

        if f.values.is_empty() {
            if can_read {
                let value = match vt {
                    "bool" => format!("{get_raw} != 0"),
                    "u32" => get_raw.clone(),
                    other => format!("{get_raw} as {other}"),
                };
                doc(out, "        ", &[format!("{link}.")]);
                let _ = writeln!(
                    out,
                    "        #[inline]\n        pub const fn {method}(self) -> {vt} {{ {value} }}"
                );
            }
            if can_write {
                let v = if vt == "u32" { "value".to_string() } else { "value as u32".to_string() };
                // Only a value type wider than the field can carry bits the field cannot hold.
                let can_truncate =
                    !matches!((vt, width), ("bool", _) | ("u8", 8) | ("u16", 16) | ("u32", 32));
                if can_truncate {
                    doc(
                        out,
                        "        ",
                        &[format!(
                            "Set {link}; bits of `value` above its {width} bits are dropped ([`try_with_{method}`](Self::try_with_{method}) rejects them instead)."
                        )],
                    );
                } else {
                    doc(out, "        ", &[format!("Set {link}.")]);
                }
                let _ = writeln!(
                    out,
                    "        #[must_use]\n        #[inline]\n        pub const fn with_{method}(self, value: {vt}) -> Self {{ Self({spec}.set(self.0, {v})) }}"
                );
                if can_truncate {
                    doc(
                        out,
                        "        ",
                        &[format!("Set {link}, or fail if `value` does not fit its {width} bits.")],
                    );
                    let _ = writeln!(
                        out,
                        "        #[inline]\n        pub const fn try_with_{method}(self, value: {vt}) -> Result<Self, FieldOverflow> {{ match {spec}.try_set({reg}, self.0, {v}) {{ Ok(raw) => Ok(Self(raw)), Err(e) => Err(e) }} }}"
                    );
                }
            }
            return;
        }

        // Enumerated field.
        let en = format!("{enum_mod}::{}", camel(&f.name));
        if can_read {
            doc(out, "        ", &[format!("{link}.")]);
            if complete_enum(f) {
                // Every pattern of the field's bits is a documented value.
                let _ = writeln!(
                    out,
                    "        #[inline]\n        pub const fn {method}(self) -> {en} {{ match {en}::from_raw({get_raw}) {{ Some(v) => v, None => unreachable!() }} }}"
                );
            } else {
                let _ = writeln!(
                    out,
                    "        #[inline]\n        pub const fn {method}(self) -> Result<{en}, InvalidEnumValue> {{"
                );
                let _ = writeln!(out, "            let raw = {get_raw};");
                let _ = writeln!(out, "            match {en}::from_raw(raw) {{");
                let _ = writeln!(out, "                Some(v) => Ok(v),");
                let _ = writeln!(
                    out,
                    "                None => Err(InvalidEnumValue {{ register: {reg}, field: {}, value: raw }}),",
                    rust_str(&f.name)
                );
                let _ = writeln!(out, "            }}");
                let _ = writeln!(out, "        }}");
            }
            doc(out, "        ", &[format!("Raw contents of {link}, documented or not.")]);
            let _ = writeln!(
                out,
                "        #[inline]\n        pub const fn {method}_raw(self) -> u32 {{ {get_raw} }}"
            );
        }
        if can_write {
            doc(out, "        ", &[format!("Set {link}.")]);
            let _ = writeln!(
                out,
                "        #[must_use]\n        #[inline]\n        pub const fn with_{method}(self, value: {en}) -> Self {{ Self({spec}.set(self.0, value as u32)) }}"
            );
        }
    }

    fn spec_table(&self, out: &mut String) {
        doc(
            out,
            "",
            &["Every register of the family, for generic users (device models, register dumps)."
                .into()],
        );
        let _ = writeln!(
            out,
            "pub const REGISTERS: &[baregpu_hal::register::RegisterSpec<Chipset>] = &["
        );
        for r in &self.db.registers {
            if let Some(block) = self.db.block(&r.block) {
                let _ = writeln!(
                    out,
                    "    {}::{}::SPEC,",
                    block.name.to_ascii_lowercase(),
                    type_name(r)
                );
            }
        }
        let _ = writeln!(out, "];");
    }
}

fn unique_variant(used: &mut BTreeSet<String>, v: &EnumValue) -> String {
    let base = camel(&v.name);
    let mut name = base.clone();
    let mut n = 2;
    while !used.insert(name.clone()) {
        name = format!("{base}{n}");
        n += 1;
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_valid_rust() {
        assert_eq!(snake("TYPE"), "type_field");
        assert_eq!(snake("RAW"), "raw_field");
        assert_eq!(snake("RB_BUFSZ"), "rb_bufsz");
        assert_eq!(field_const("RESET"), "RESET_FIELD");
        assert_eq!(field_const("RB_BUFSZ"), "RB_BUFSZ");
        assert_eq!(camel("FREE_RUNNING_MODE"), "FreeRunningMode");
        assert_eq!(camel("8BPP"), "V8bpp");
        assert_eq!(camel("PDAEMON"), "Pdaemon");
    }

    #[test]
    fn chip_specific_type_names_come_from_the_range_alone() {
        assert_eq!(chipsets_suffix("NV43:G70"), "NV43_UNTIL_G70");
        assert_eq!(chipsets_suffix("GT215-"), "GT215_ONWARD");
        assert_eq!(chipsets_suffix("CAYMAN"), "CAYMAN");
        assert_eq!(chipsets_suffix("G98, MCP77:GM107"), "G98_AND_MCP77_UNTIL_GM107");
    }

    const ONE: &str = "[meta]\nfamily = \"t\"\ntitle = \"T\"\ndocument = \"d\"\ndoc_label = \"d\"\n\
                       [[block]]\nname = \"B\"\ndescription = \"\"\nsource = \"s\"\n\
                       [[register]]\nblock = \"B\"\nname = \"R\"\noffset = 4\naccess = \"rw\"\n\
                       description = \"x\"\nsource = \"s\"\n";

    #[test]
    fn lint_errors_stop_generation() {
        let text = format!("{ONE}[[register.field]]\nname = \"A\"\nmsb = 40\nlsb = 0\n");
        let db = Database::parse(&text).unwrap();
        let errors = generate(&db).unwrap_err();
        assert_eq!(errors.len(), 1);
        assert!(errors[0].to_string().contains("outside the 32-bit register"));
    }

    #[test]
    fn generation_is_deterministic() {
        let db = Database::parse(ONE).unwrap();
        assert_eq!(generate(&db).unwrap(), generate(&db).unwrap());
    }
}
