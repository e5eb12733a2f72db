//! Rust code generation: one module per family, one submodule per block, one type per register.
//!
//! For a register `CP_RB_CNTL` with field `RB_BUFSZ` (bits 5:0) the generator emits
//!
//! - `pub struct CP_RB_CNTL(u32)`, `#[repr(transparent)]`, implementing `baregpu_hal::Register`,
//!   `Readable`/`Writable` as the access allows, and `Scalar` or `Array`;
//! - `const fn rb_bufsz(self) -> u8`, `const fn with_rb_bufsz(self, u8) -> Self` (truncating,
//!   documented) and `fn try_with_rb_bufsz(self, u8) -> Result<Self, FieldOverflow>`;
//! - for enumerated fields a `enum` in the register's snake-case submodule, a getter returning
//!   `Result<Enum, InvalidEnumValue>` (or the enum itself when every value is named) and a setter
//!   taking the enum;
//! - `Debug` and (feature `defmt`) `defmt::Format` that print fields by name;
//! - a `REGISTERS: &[RegisterSpec]` table per family for generic users (device models).
//!
//! Output depends only on the database (no hash-map iteration, no timestamps): regenerating
//! gives identical bytes.

use crate::lint::{LintError, lint};
use crate::model::{Access, Block, Database, EnumValue, Field, Register};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// Generate the Rust module body for one family, after linting it.
pub fn generate(db: &Database) -> Result<String, Vec<LintError>> {
    let errors = lint(db);
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(Generator::new(db).family())
}

struct Generator<'a> {
    db: &'a Database,
    /// Rust type name of each register (index into `db.registers`).
    type_names: Vec<String>,
}

fn rust_str(s: &str) -> String {
    format!("{s:?}")
}

/// Doc-comment lines as `#[doc = "..."]` attributes (safe for any text).
fn doc(out: &mut String, indent: &str, lines: &[String]) {
    for line in lines {
        let _ = writeln!(out, "{indent}#[doc = {}]", rust_str(&format!(" {line}")));
    }
}

const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut",
    "pub", "ref", "return", "self", "static", "struct", "super", "trait", "true", "type", "unsafe",
    "use", "where", "while", "abstract", "become", "box", "do", "final", "macro", "override",
    "priv", "try", "typeof", "unsized", "virtual", "yield",
];

/// Methods every register type has; field accessors must not collide with them.
const RESERVED_METHODS: &[&str] = &["from_raw", "raw", "reset", "to_raw"];

fn snake(name: &str) -> String {
    let s = name.to_ascii_lowercase();
    if KEYWORDS.contains(&s.as_str()) || RESERVED_METHODS.contains(&s.as_str()) {
        format!("{s}_field")
    } else {
        s
    }
}

fn camel(name: &str) -> String {
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

fn variant_suffix(variant: &str) -> String {
    let cleaned: String = variant
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' })
        .collect();
    let trimmed = cleaned.trim_matches('_');
    let mut collapsed = String::new();
    for c in trimmed.chars() {
        if !(c == '_' && collapsed.ends_with('_')) {
            collapsed.push(c);
        }
    }
    if trimmed.len() < cleaned.len() && cleaned.ends_with('_') {
        // `GT215-` (open-ended) must stay distinct from `GT215` (exactly that chip).
        collapsed.push_str("_ON");
    }
    collapsed
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

impl<'a> Generator<'a> {
    fn new(db: &'a Database) -> Self {
        let mut per_block_name: BTreeMap<(&str, &str), usize> = BTreeMap::new();
        for r in &db.registers {
            *per_block_name.entry((r.block.as_str(), r.name.as_str())).or_default() += 1;
        }
        let type_names = db
            .registers
            .iter()
            .map(|r| match (&r.variant, per_block_name[&(r.block.as_str(), r.name.as_str())] > 1) {
                (Some(v), true) => format!("{}_{}", r.name, variant_suffix(v)),
                _ => r.name.clone(),
            })
            .collect();
        Generator { db, type_names }
    }

    fn family(&self) -> String {
        let m = &self.db.meta;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "// GENERATED by regdb-gen from hal/regdb/{}.toml. Do not edit.",
            m.family
        );
        // The family's own doc comment is on its `pub mod` in baregpu-regs (an included file cannot
        // carry inner attributes).
        for block in &self.db.blocks {
            self.block(&mut out, block);
        }
        self.spec_table(&mut out);
        out
    }

    fn block(&self, out: &mut String, block: &Block) {
        let module = block.name.to_ascii_lowercase();
        let mut lines = vec![format!("{}: {}", block.name, block.description), String::new()];
        lines.push(format!("Source: {}.", block.source));
        if block.relative {
            lines.push(String::new());
            lines.push(
                "Offsets are relative to a base chosen at run time: access these registers through \
                 `io.at(base)` (`baregpu_hal::RegisterIoExt::at`)."
                    .into(),
            );
        }
        doc(out, "", &lines);
        let _ = writeln!(out, "pub mod {module} {{");
        let _ = writeln!(out, "    #[allow(unused_imports)]");
        let _ = writeln!(
            out,
            "    use baregpu_hal::register::{{Array, FieldOverflow, FieldSpec, InvalidEnumValue, Readable, Register, Scalar, Writable}};"
        );
        if !block.relative {
            doc(out, "    ", &["Base address of the block; register offsets include it.".into()]);
            let _ = writeln!(out, "    pub const BASE: usize = {};", hex(block.base));
        }
        for (i, r) in self.db.registers.iter().enumerate() {
            if r.block == block.name {
                self.register(out, block, r, &self.type_names[i]);
            }
        }
        let _ = writeln!(out, "}}");
    }

    fn register(&self, out: &mut String, block: &Block, r: &Register, ty: &str) {
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
            place.push_str(" from the block's run-time base");
        }
        if let (Some(count), Some(stride)) = (r.count, r.stride) {
            let _ = write!(place, ", {count} instances {stride:#x} bytes apart");
        }
        if let Some(io) = r.io_address {
            let _ = write!(place, "; falcon I[{io:#x}]");
        }
        lines.push(format!("{place}; {}-bit, {access}.", r.width));
        if let Some(v) = &r.variant {
            lines.push(format!("Chipsets: `[{v}]`."));
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
        let wm = write_mask(r);
        let reset = reset_value(r);
        doc(
            out,
            "        ",
            &["Value after reset (documented defaults; unknown bits are 0).".into()],
        );
        let _ = writeln!(out, "        pub const RESET: Self = Self({});", hex_u32(reset));
        if let Some(v) = &r.variant {
            doc(out, "        ", &["Chipset range this layout applies to.".into()]);
            let _ = writeln!(out, "        pub const VARIANT: &'static str = {};", rust_str(v));
        }
        if let Some(io) = r.io_address {
            doc(out, "        ", &["Address of the register in the falcon I[] space.".into()]);
            let _ = writeln!(out, "        pub const IO_ADDRESS: u32 = {};", hex(io));
            if let Some(s) = r.io_stride {
                doc(out, "        ", &["I[] distance between instances.".into()]);
                let _ = writeln!(out, "        pub const IO_STRIDE: u32 = {};", hex(s));
            }
        }
        doc(out, "        ", &["Fields, lowest bit first.".into()]);
        let _ = writeln!(out, "        pub const FIELDS: &'static [FieldSpec] = &[");
        for f in &fields {
            let fa = field_access(r, f);
            let _ = writeln!(
                out,
                "            FieldSpec {{ name: {}, lsb: {}, width: {}, readable: {}, writable: {} }},",
                rust_str(&f.name),
                f.lsb,
                f.width(),
                fa.readable() && readable,
                fa.writable() && writable
            );
        }
        let _ = writeln!(out, "        ];");
        doc(out, "        ", &["The register holding `raw`.".into()]);
        let _ = writeln!(out, "        pub const fn from_raw(raw: u32) -> Self {{ Self(raw) }}");
        doc(out, "        ", &["The raw value.".into()]);
        let _ = writeln!(out, "        pub const fn raw(self) -> u32 {{ self.0 }}");

        for f in &fields {
            self.field_accessors(out, r, &enum_mod, f, readable, writable);
        }
        let _ = writeln!(out, "    }}");

        let _ = writeln!(out, "    impl Default for {ty} {{");
        let _ = writeln!(out, "        fn default() -> Self {{ Self::RESET }}");
        let _ = writeln!(out, "    }}");
        let _ = writeln!(out, "    impl Register for {ty} {{");
        let _ = writeln!(out, "        const NAME: &'static str = {};", rust_str(&r.name));
        let _ = writeln!(out, "        const OFFSET: usize = {};", hex(offset));
        let _ = writeln!(out, "        const WRITE_MASK: u32 = {};", hex_u32(wm));
        let _ = writeln!(out, "        const RESET: u32 = {};", hex_u32(reset));
        let _ = writeln!(out, "        fn from_raw(raw: u32) -> Self {{ Self(raw) }}");
        let _ = writeln!(out, "        fn to_raw(self) -> u32 {{ self.0 }}");
        let _ = writeln!(out, "    }}");
        if readable {
            let _ = writeln!(out, "    impl Readable for {ty} {{}}");
        }
        if writable {
            let _ = writeln!(out, "    impl Writable for {ty} {{}}");
        }
        match (r.count, r.stride) {
            (Some(count), Some(stride)) => {
                let _ = writeln!(out, "    impl Array for {ty} {{");
                let _ = writeln!(out, "        const COUNT: usize = {count};");
                let _ = writeln!(out, "        const STRIDE: usize = {};", hex(stride));
                let _ = writeln!(out, "    }}");
            }
            _ => {
                let _ = writeln!(out, "    impl Scalar for {ty} {{}}");
            }
        }
        let _ = writeln!(out, "    impl core::fmt::Debug for {ty} {{");
        let _ = writeln!(
            out,
            "        fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {{"
        );
        let _ = writeln!(
            out,
            "            baregpu_hal::register::debug_fields(f, {}, self.0, Self::FIELDS)",
            rust_str(&r.name)
        );
        let _ = writeln!(out, "        }}");
        let _ = writeln!(out, "    }}");
        let _ = writeln!(out, "    #[cfg(feature = \"defmt\")]");
        let _ = writeln!(out, "    impl defmt::Format for {ty} {{");
        let _ = writeln!(out, "        fn format(&self, f: defmt::Formatter<'_>) {{");
        let _ = writeln!(
            out,
            "            baregpu_hal::register::defmt_fields(f, {}, self.0, Self::FIELDS)",
            rust_str(&r.name)
        );
        let _ = writeln!(out, "        }}");
        let _ = writeln!(out, "    }}");
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
        let _ = writeln!(out, "            pub const fn from_raw(raw: u32) -> Option<Self> {{");
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

    #[allow(clippy::too_many_arguments)]
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
        let width = f.width();
        let fa = field_access(r, f);
        let vt = field_type(width);
        let m = hex_u32(mask(width));
        let lsb = f.lsb;
        let mut desc =
            vec![format!("`{}` (bits {}:{}): {}", f.name, f.msb, f.lsb, f.description.trim())];
        if let Some(reset) = f.reset {
            desc.push(format!("Reset value: {}.", hex(reset)));
        }
        let get_raw = format!("(self.0 >> {lsb}) & {m}");
        let to_value = |expr: &str| match vt {
            "bool" => format!("{expr} != 0"),
            "u32" => expr.to_string(),
            other => format!("({expr}) as {other}"),
        };
        let from_value = |v: &str| match vt {
            "u32" => v.to_string(),
            _ => format!("{v} as u32"),
        };
        let set_expr =
            |v: &str| format!("Self((self.0 & !({m} << {lsb})) | (({v} & {m}) << {lsb}))");

        if f.values.is_empty() {
            if fa.readable() && readable {
                doc(out, "        ", &desc);
                let _ = writeln!(
                    out,
                    "        pub const fn {method}(self) -> {vt} {{ {} }}",
                    to_value(&get_raw)
                );
            }
            if fa.writable() && writable {
                // Only a value type wider than the field can carry bits the field cannot hold.
                let can_truncate =
                    !matches!((vt, width), ("bool", _) | ("u8", 8) | ("u16", 16) | ("u32", 32));
                let mut d = desc.clone();
                if can_truncate {
                    d.push(String::new());
                    d.push(format!(
                        "Bits of `value` above the {width}-bit field are dropped; \
                         [`try_with_{method}`](Self::try_with_{method}) rejects them instead."
                    ));
                }
                doc(out, "        ", &d);
                let _ = writeln!(
                    out,
                    "        #[must_use]\n        pub const fn with_{method}(self, value: {vt}) -> Self {{ {} }}",
                    set_expr(&from_value("value"))
                );
                if can_truncate {
                    doc(
                        out,
                        "        ",
                        &[format!(
                            "Set `{}`, or fail if `value` does not fit its {width} bits.",
                            f.name
                        )],
                    );
                    let _ = writeln!(
                        out,
                        "        pub const fn try_with_{method}(self, value: {vt}) -> Result<Self, FieldOverflow> {{"
                    );
                    let _ = writeln!(out, "            let v = {};", from_value("value"));
                    let _ = writeln!(out, "            if v & !{m} != 0 {{");
                    let _ = writeln!(
                        out,
                        "                return Err(FieldOverflow {{ register: {}, field: {}, value: v, width: {width} }});",
                        rust_str(&r.name),
                        rust_str(&f.name)
                    );
                    let _ = writeln!(out, "            }}");
                    let _ = writeln!(out, "            Ok({})", set_expr("v"));
                    let _ = writeln!(out, "        }}");
                }
            }
            return;
        }

        // Enumerated field.
        let en = format!("{enum_mod}::{}", camel(&f.name));
        if fa.readable() && readable {
            doc(out, "        ", &desc);
            if complete_enum(f) {
                let _ = writeln!(out, "        pub const fn {method}(self) -> {en} {{");
                let _ = writeln!(out, "            match {en}::from_raw({get_raw}) {{");
                let _ = writeln!(out, "                Some(v) => v,");
                // Every pattern of the field's bits is a documented value.
                let _ = writeln!(out, "                None => unreachable!(),");
                let _ = writeln!(out, "            }}");
                let _ = writeln!(out, "        }}");
            } else {
                let _ = writeln!(
                    out,
                    "        pub const fn {method}(self) -> Result<{en}, InvalidEnumValue> {{"
                );
                let _ = writeln!(out, "            let raw = {get_raw};");
                let _ = writeln!(out, "            match {en}::from_raw(raw) {{");
                let _ = writeln!(out, "                Some(v) => Ok(v),");
                let _ = writeln!(
                    out,
                    "                None => Err(InvalidEnumValue {{ register: {}, field: {}, value: raw }}),",
                    rust_str(&r.name),
                    rust_str(&f.name)
                );
                let _ = writeln!(out, "            }}");
                let _ = writeln!(out, "        }}");
            }
            doc(out, "        ", &[format!("Raw contents of `{}`, documented or not.", f.name)]);
            let _ = writeln!(out, "        pub const fn {method}_raw(self) -> u32 {{ {get_raw} }}");
        }
        if fa.writable() && writable {
            doc(out, "        ", &desc);
            let _ = writeln!(
                out,
                "        #[must_use]\n        pub const fn with_{method}(self, value: {en}) -> Self {{ {} }}",
                set_expr("value as u32")
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
        let _ = writeln!(out, "pub const REGISTERS: &[baregpu_hal::register::RegisterSpec] = &[");
        for (i, r) in self.db.registers.iter().enumerate() {
            let Some(block) = self.db.block(&r.block) else {
                continue;
            };
            let module = block.name.to_ascii_lowercase();
            let ty = &self.type_names[i];
            let (readable, writable) = register_access(r);
            let offset = r.offset + if block.relative { 0 } else { block.base };
            let variant = match &r.variant {
                Some(v) => format!("Some({})", rust_str(v)),
                None => "None".into(),
            };
            let _ = writeln!(
                out,
                "    baregpu_hal::register::RegisterSpec {{ name: {}, block: {}, offset: {}, relative: {}, count: {}, stride: {}, readable: {readable}, writable: {writable}, write_mask: {}, reset: {}, variant: {variant}, source: {}, fields: {module}::{ty}::FIELDS }},",
                rust_str(&r.name),
                rust_str(&block.name),
                hex(offset),
                block.relative,
                r.instances(),
                hex(r.stride.unwrap_or(0)),
                hex_u32(write_mask(r)),
                hex_u32(reset_value(r)),
                rust_str(&r.source),
            );
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
        assert_eq!(camel("FREE_RUNNING_MODE"), "FreeRunningMode");
        assert_eq!(camel("8BPP"), "V8bpp");
        assert_eq!(variant_suffix("NV43:G70"), "NV43_G70");
        assert_eq!(variant_suffix("GT215-"), "GT215_ON");
        assert_eq!(variant_suffix("v3+ only"), "V3_ONLY");
    }

    #[test]
    fn lint_errors_stop_generation() {
        let text = "[meta]\nfamily = \"t\"\ntitle = \"T\"\ndocument = \"d\"\ndoc_label = \"d\"\n\
                    [[block]]\nname = \"B\"\ndescription = \"\"\nsource = \"s\"\n\
                    [[register]]\nblock = \"B\"\nname = \"R\"\noffset = 0\naccess = \"rw\"\n\
                    description = \"\"\nsource = \"s\"\n\
                    [[register.field]]\nname = \"A\"\nmsb = 40\nlsb = 0\n";
        let db = Database::parse(text).unwrap();
        let errors = generate(&db).unwrap_err();
        assert_eq!(errors.len(), 1);
        assert!(errors[0].to_string().contains("outside the 32-bit register"));
    }

    #[test]
    fn generation_is_deterministic() {
        let text = "[meta]\nfamily = \"t\"\ntitle = \"T\"\ndocument = \"d\"\ndoc_label = \"d\"\n\
                    [[block]]\nname = \"B\"\ndescription = \"\"\nsource = \"s\"\n\
                    [[register]]\nblock = \"B\"\nname = \"R\"\noffset = 4\naccess = \"rw\"\n\
                    description = \"x\"\nsource = \"s\"\n";
        let db = Database::parse(text).unwrap();
        assert_eq!(generate(&db).unwrap(), generate(&db).unwrap());
    }
}
