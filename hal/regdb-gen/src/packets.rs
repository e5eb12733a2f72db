//! Packet tables: `hal/regdb/packets/<family>.toml` (extracted from the documents by
//! `hal/regdb/extract/extract.py`, like the register databases) and the `packets` module the
//! generator appends to the family's generated register module.

use serde::Deserialize;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use crate::codegen::{KEYWORDS, camel};
use crate::model::LoadError;

/// One family's packet table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PacketTable {
    /// Which family and document the table describes.
    pub meta: PacketMeta,
    /// Packets, in document order.
    #[serde(default, rename = "packet")]
    pub packets: Vec<Packet>,
    /// Byte-oriented control records (VideoCore IV), in document order.
    #[serde(default, rename = "record")]
    pub records: Vec<Record>,
    /// nVidia pushbuffer command forms, in the pusher's matching order.
    #[serde(default, rename = "command")]
    pub commands: Vec<crate::pushbuffer::Command>,
    /// nVidia pushbuffer structures (the IB entry).
    #[serde(default, rename = "entry")]
    pub entries: Vec<crate::pushbuffer::Entry>,
    /// nVidia puller methods.
    #[serde(default, rename = "method")]
    pub methods: Vec<crate::pushbuffer::Method>,
}

/// One control record of a byte stream (VideoCore IV §9): an id byte, then fields at byte and
/// bit positions, little-endian.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    /// UPPER_SNAKE name (the document's, without its remarks).
    pub name: String,
    /// The name as the document writes it.
    pub doc_name: String,
    /// The id byte.
    pub opcode: u8,
    /// The document section (its record table).
    pub section: String,
    /// Which list may hold it: `binning`, `rendering` or `both`.
    pub lists: String,
    /// Size in bytes with the id byte (the fewest, for an open-ended record).
    pub bytes: usize,
    /// An escape-terminated list follows the fixed part.
    #[serde(default)]
    pub open_ended: bool,
    /// For a fact the document omits or gets wrong: where it comes from.
    pub source: Option<String>,
    /// The record's fields.
    #[serde(default, rename = "field")]
    pub fields: Vec<RecordField>,
}

/// One field of a control record.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordField {
    /// UPPER_SNAKE name.
    pub name: String,
    /// The byte it starts in (the id byte is 0).
    pub byte: usize,
    /// Highest bit, counted from bit 0 of `byte` (may reach into the following bytes).
    pub msb: u32,
    /// Lowest bit within `byte`.
    pub lsb: u32,
    /// For an address field: the lowest address bit it holds (its shift).
    pub address_lsb: Option<u32>,
    /// `sint` or `float` where the document types the field so; otherwise inferred (enum
    /// values, address, one bit: bool, else uint).
    #[serde(rename = "type")]
    pub ty: Option<String>,
    /// For a correction: where the fact comes from.
    pub source: Option<String>,
    /// Enumerated values.
    #[serde(default, rename = "value")]
    pub values: Vec<FieldValue>,
}

impl RecordField {
    /// Width in bits.
    pub fn width(&self) -> u32 {
        self.msb - self.lsb + 1
    }
}

/// Family-level facts of a packet table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PacketMeta {
    /// Family (database) name.
    pub family: String,
    /// File name of the source document.
    pub document: String,
    /// How citations name the document.
    pub doc_label: String,
}

/// One type-3 packet.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Packet {
    /// UPPER_SNAKE name (the document's, spaces made underscores).
    pub name: String,
    /// The name as the document writes it.
    pub doc_name: String,
    /// `IT_OPCODE`, when the document or a cited public source gives it.
    pub opcode: Option<u8>,
    /// Where the opcode comes from.
    pub opcode_source: Option<String>,
    /// For a packet the document does not describe: where it comes from.
    pub source: Option<String>,
    /// The document section describing the packet.
    pub section: String,
    /// The chips the document says have it.
    pub chips: String,
    /// The document's one-line description.
    pub description: String,
    /// Fewest body dwords.
    pub min_dwords: usize,
    /// Most body dwords; none for an open-ended body.
    pub max_dwords: Option<usize>,
    /// When not every length between the two is allowed: the ones that are.
    #[serde(default)]
    pub only_dwords: Vec<usize>,
    /// For a `SET_*` packet: the registers it writes.
    pub register_range: Option<RegisterRange>,
    /// The body, dword by dword, as the document's table gives it.
    #[serde(default)]
    pub body: Vec<BodyDword>,
    /// The body's fields.
    #[serde(default, rename = "field")]
    pub fields: Vec<BodyField>,
}

/// The registers a `SET_*` packet writes.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegisterRange {
    /// First register (byte offset).
    pub start: usize,
    /// End (exclusive).
    pub end: usize,
    /// Bits 31:16 of the offset dword must be zero.
    pub legacy_zero: bool,
    /// Where the range comes from.
    pub source: String,
}

/// One field of a packet body.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BodyField {
    /// UPPER_SNAKE name.
    pub name: String,
    /// The document's dword number (the header is 1).
    pub dword: usize,
    /// Highest bit.
    pub msb: u32,
    /// Lowest bit.
    pub lsb: u32,
    /// For address fields: the lowest address bit the field holds.
    pub address_lsb: Option<u32>,
    /// Another reading of this field's bits.
    pub alias_of: Option<String>,
    /// Enumerated values.
    #[serde(default, rename = "value")]
    pub values: Vec<FieldValue>,
}

/// A named value of an enumerated field.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldValue {
    /// UPPER_SNAKE name.
    pub name: String,
    /// Value.
    pub value: u32,
}

impl BodyField {
    /// Width in bits.
    pub fn width(&self) -> u32 {
        self.msb - self.lsb + 1
    }
}

impl Packet {
    /// Whether every body length is one (`min_dwords == max_dwords`).
    pub fn is_fixed(&self) -> bool {
        self.max_dwords == Some(self.min_dwords)
    }
}

/// One row of a packet's body table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BodyDword {
    /// The document's dword number ("2", "3 to N", "n+2").
    pub dword: String,
    /// The field(s) in it.
    pub field: String,
}

impl PacketTable {
    /// Read and parse a packet table.
    pub fn load(path: &Path) -> Result<PacketTable, LoadError> {
        let text = std::fs::read_to_string(path).map_err(LoadError::Io)?;
        toml::from_str(&text).map_err(LoadError::Parse)
    }
}

/// Directory of the packet tables (`hal/regdb/packets`).
pub fn packets_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../regdb/packets")
}

/// The packet table of `family`, if it has one.
pub fn packet_table_path(family: &str) -> Option<PathBuf> {
    let path = packets_dir().join(format!("{family}.toml"));
    path.exists().then_some(path)
}

/// The Rust constant for a packet: its name, after an underscore when it starts with a digit
/// (`3D_DRAW_VBUF` -> `_3D_DRAW_VBUF`), so the vendor name stays searchable.
pub fn const_name(name: &str) -> String {
    if name.starts_with(|c: char| c.is_ascii_digit()) { format!("_{name}") } else { name.into() }
}

/// Rust module name of a packet (`EVENT_WRITE_EOP` -> `event_write_eop`, `3D_DRAW_VBUF` ->
/// `_3d_draw_vbuf`).
pub fn module_name(name: &str) -> String {
    const_name(name).to_lowercase()
}

fn ident(name: &str) -> String {
    let lower = name.to_lowercase();
    if KEYWORDS.contains(&lower.as_str()) { format!("r#{lower}") } else { lower }
}

/// The address a field is part of: its name without `_LO`/`_HI` (`IB_BASE_LO` -> `IB_BASE`).
pub fn address_group(name: &str) -> &str {
    name.strip_suffix("_LO").or_else(|| name.strip_suffix("_HI")).unwrap_or(name)
}

pub(crate) fn field_kind(f: &BodyField) -> String {
    if let Some(lsb) = f.address_lsb {
        format!("FieldKind::Address {{ address_lsb: {lsb} }}")
    } else if let Some(of) = &f.alias_of {
        format!("FieldKind::Alias({of:?})")
    } else if !f.values.is_empty() {
        let values: Vec<String> = f
            .values
            .iter()
            .map(|v| format!("EnumEntry {{ name: {:?}, value: {:#x} }}", v.name, v.value))
            .collect();
        format!("FieldKind::Enum(&[{}])", values.join(", "))
    } else if f.width() == 1 {
        "FieldKind::Bool".into()
    } else {
        "FieldKind::Uint".into()
    }
}

/// The module of one packet: its field constants, enums and, for a fixed-length body, a typed
/// `Body` builder/unpacker.
fn render_packet_module(out: &mut String, p: &Packet, label: &str) {
    let m = module_name(&p.name);
    let _ = writeln!(
        out,
        "\n    /// Fields of [`{}`]{}.",
        const_name(&p.name),
        if p.is_fixed() { " and its typed body" } else { "" }
    );
    let _ = writeln!(out, "    pub mod {m} {{");
    out.push_str("        #[allow(unused_imports)]\n        use crate::packet::{get_address, put_address, BodyError, BodyField, EnumEntry, FieldKind};\n");
    out.push_str("        #[allow(unused_imports)]\n        use baregpu_hal::dma::BusAddress;\n");
    out.push_str("        #[allow(unused_imports)]\n        use baregpu_hal::register::{AddressFieldError, FieldOverflow, InvalidEnumValue};\n");
    let where_ = if p.section.is_empty() {
        p.source.clone().unwrap_or_default()
    } else {
        format!("{label} §{}", p.section)
    };
    for f in &p.fields {
        let _ = writeln!(
            out,
            "        /// DW{} bits {}:{} ({where_}).\n        pub const {}: BodyField = BodyField::new({:?}, {}, {}, {}, {});",
            f.dword,
            f.msb,
            f.lsb,
            f.name,
            f.name,
            f.dword,
            f.msb,
            f.lsb,
            field_kind(f)
        );
    }
    render_field_list(
        out,
        "by dword",
        "BodyField",
        p.fields.iter().map(|f| (f.name.as_str(), f.values.as_slice())),
    );
    if p.is_fixed() && !p.fields.is_empty() {
        let n = p.min_dwords;
        let _ = writeln!(
            out,
            "        /// A `{}` body: build it field by field (the builders check every value), or unpack one \
             from a stream.",
            p.name
        );
        out.push_str("        #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]\n");
        let _ = writeln!(out, "        pub struct Body(pub [u32; {n}]);");
        out.push_str("        impl Body {\n");
        let _ = writeln!(
            out,
            "            /// Body dwords.\n            pub const DWORDS: usize = {n};"
        );
        let _ = writeln!(
            out,
            "            /// All fields zero.\n            #[inline]\n            pub const fn new() -> Self {{ Body([0; {n}]) }}"
        );
        let _ = writeln!(
            out,
            "            /// The body of a `{}` packet in a stream, or why it is not one.\n            pub fn unpack(body: &[u32]) -> Result<Self, BodyError> {{\n                super::{}.check_body(body.len())?;\n                let mut b = [0; {n}];\n                b.copy_from_slice(body);\n                Ok(Body(b))\n            }}",
            p.name,
            const_name(&p.name)
        );
        out.push_str("            /// The body dwords, for a writer.\n            pub const fn dwords(&self) -> &[u32] { &self.0 }\n");
        let mut groups: Vec<&str> = Vec::new();
        for f in &p.fields {
            let id = ident(&f.name);
            let plain = f.name.to_lowercase();
            if f.address_lsb.is_some() {
                let g = address_group(&f.name);
                if !groups.contains(&g) {
                    groups.push(g);
                }
                continue;
            }
            if !f.values.is_empty() {
                let ty = camel(&f.name);
                let _ = writeln!(
                    out,
                    "            /// {0} (DW{1} {2}:{3}).\n            #[inline]\n            pub const fn with_{4}(mut self, v: {ty}) -> Self {{ self.0[{5}] = {0}.spec.set(self.0[{5}], v as u32); self }}\n            /// {0}, or the raw value when the table does not list it.\n            pub const fn {id}(&self) -> Result<{ty}, InvalidEnumValue> {{ let raw = {0}.spec.get(self.0[{5}]); match {ty}::from_raw(raw) {{ Some(v) => Ok(v), None => Err(InvalidEnumValue {{ register: {6:?}, field: {0:?}, value: raw }}) }} }}",
                    f.name,
                    f.dword,
                    f.msb,
                    f.lsb,
                    plain,
                    f.dword - 2,
                    p.name
                );
            } else if f.width() == 1 {
                let _ = writeln!(
                    out,
                    "            /// {0} (DW{1} bit {2}).\n            #[inline]\n            pub const fn with_{3}(mut self, v: bool) -> Self {{ self.0[{4}] = {0}.spec.set(self.0[{4}], v as u32); self }}\n            /// {0}.\n            pub const fn {id}(&self) -> bool {{ {0}.spec.get(self.0[{4}]) != 0 }}",
                    f.name,
                    f.dword,
                    f.msb,
                    plain,
                    f.dword - 2
                );
            } else {
                let _ = writeln!(
                    out,
                    "            /// {0} (DW{1} {2}:{3}); an error when `v` does not fit.\n            #[inline]\n            pub const fn with_{4}(mut self, v: u32) -> Result<Self, FieldOverflow> {{ match {0}.spec.try_set({6:?}, self.0[{5}], v) {{ Ok(raw) => {{ self.0[{5}] = raw; Ok(self) }} Err(e) => Err(e) }} }}\n            /// {0}.\n            pub const fn {id}(&self) -> u32 {{ {0}.spec.get(self.0[{5}]) }}",
                    f.name,
                    f.dword,
                    f.msb,
                    f.lsb,
                    plain,
                    f.dword - 2,
                    p.name
                );
            }
        }
        for g in groups {
            let parts: Vec<&str> = p
                .fields
                .iter()
                .filter(|f| f.address_lsb.is_some() && address_group(&f.name) == g)
                .map(|f| f.name.as_str())
                .collect();
            let id = ident(g);
            let plain = g.to_lowercase();
            let _ = writeln!(
                out,
                "            /// The address in {0}; an error when it is not aligned to the lowest bit they hold or beyond the highest.\n            #[inline]\n            pub fn with_{1}(mut self, address: BusAddress) -> Result<Self, AddressFieldError> {{ put_address({2:?}, &[{0}], &mut self.0, address)?; Ok(self) }}\n            /// The address in {0}.\n            pub fn {id}(&self) -> BusAddress {{ get_address(&[{0}], &self.0) }}",
                parts.join(", "),
                plain,
                p.name
            );
        }
        out.push_str("        }\n");
    }
    out.push_str("    }\n");
}

fn record_field_kind(f: &RecordField) -> String {
    if let Some(lsb) = f.address_lsb {
        format!("FieldKind::Address {{ address_lsb: {lsb} }}")
    } else if !f.values.is_empty() {
        let values: Vec<String> = f
            .values
            .iter()
            .map(|v| format!("EnumEntry {{ name: {:?}, value: {:#x} }}", v.name, v.value))
            .collect();
        format!("FieldKind::Enum(&[{}])", values.join(", "))
    } else if f.ty.as_deref() == Some("float") {
        "FieldKind::Float".into()
    } else if f.ty.as_deref() == Some("sint") {
        "FieldKind::Sint".into()
    } else if f.width() == 1 {
        "FieldKind::Bool".into()
    } else {
        "FieldKind::Uint".into()
    }
}

fn lists_variant(lists: &str) -> &'static str {
    match lists {
        "binning" => "Lists::Binning",
        "rendering" => "Lists::Rendering",
        _ => "Lists::Both",
    }
}

/// A packet's or record's `FIELDS` list (`ty` constants in `order`) and an enum with
/// `from_raw` for each enumerated field (`camel(name)`).
pub(crate) fn render_field_list<'a>(
    out: &mut String,
    order: &str,
    ty: &str,
    fields: impl Iterator<Item = (&'a str, &'a [FieldValue])> + Clone,
) {
    let names: Vec<&str> = fields.clone().map(|(name, _)| name).collect();
    let _ = writeln!(
        out,
        "        /// Every field, {order}.\n        pub const FIELDS: &[{ty}] = &[{}];",
        names.join(", ")
    );
    for (name, values) in fields.filter(|(_, v)| !v.is_empty()) {
        let ty = camel(name);
        let _ = writeln!(out, "        /// Values of [`{name}`].");
        out.push_str(
            "        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]\n        #[repr(u32)]\n",
        );
        let _ = writeln!(out, "        pub enum {ty} {{");
        for v in values {
            let _ = writeln!(out, "            /// {} ({}).", v.name, v.value);
            let _ = writeln!(out, "            {} = {:#x},", camel(&v.name), v.value);
        }
        out.push_str("        }\n");
        let _ = writeln!(out, "        impl {ty} {{");
        out.push_str("            /// The value for a raw field value the table lists.\n");
        out.push_str("            pub const fn from_raw(raw: u32) -> Option<Self> {\n                match raw {\n");
        for v in values {
            let _ = writeln!(
                out,
                "                    {:#x} => Some(Self::{}),",
                v.value,
                camel(&v.name)
            );
        }
        out.push_str(
            "                    _ => None,\n                }\n            }\n        }\n",
        );
    }
}

/// The module of one control record: field constants, enums and, for a fixed-size record, a
/// typed `Body` (the whole record, id byte first).
fn render_record_module(out: &mut String, r: &Record, label: &str) {
    let m = module_name(&r.name);
    let _ = writeln!(
        out,
        "\n    /// Fields of [`{}`]{}.",
        const_name(&r.name),
        if r.open_ended { "" } else { " and its typed body" }
    );
    let _ = writeln!(out, "    pub mod {m} {{");
    out.push_str("        #[allow(unused_imports)]\n        use crate::packet::{EnumEntry, FieldKind, RecordError, RecordField};\n");
    out.push_str("        #[allow(unused_imports)]\n        use baregpu_hal::dma::BusAddress;\n");
    out.push_str("        #[allow(unused_imports)]\n        use baregpu_hal::register::{AddressFieldError, FieldOverflow, InvalidEnumValue};\n");
    for f in &r.fields {
        let origin = f.source.clone().unwrap_or_else(|| format!("{label} §{}", r.section));
        let _ = writeln!(
            out,
            "        /// Byte {} bits {}:{} ({origin}).\n        pub const {}: RecordField = RecordField::new({:?}, {}, {}, {}, {});",
            f.byte,
            f.msb,
            f.lsb,
            f.name,
            f.name,
            f.byte,
            f.msb,
            f.lsb,
            record_field_kind(f)
        );
    }
    render_field_list(
        out,
        "by byte",
        "RecordField",
        r.fields.iter().map(|f| (f.name.as_str(), f.values.as_slice())),
    );
    if !r.open_ended {
        let n = r.bytes;
        let _ = writeln!(
            out,
            "        /// A `{}` record (id byte first): build it field by field (the builders check every value), or unpack one from a list.",
            r.name
        );
        out.push_str("        #[derive(Debug, Clone, Copy, PartialEq, Eq)]\n");
        let _ = writeln!(out, "        pub struct Body(pub [u8; {n}]);");
        out.push_str("        impl Default for Body {\n            fn default() -> Self { Self::new() }\n        }\n");
        out.push_str("        impl Body {\n");
        let _ = writeln!(
            out,
            "            /// Record bytes, with the id byte.\n            pub const BYTES: usize = {n};"
        );
        let _ = writeln!(
            out,
            "            /// The id byte, every field zero.\n            pub const fn new() -> Self {{ let mut b = [0; {n}]; b[0] = {:#04x}; Body(b) }}",
            r.opcode
        );
        let _ = writeln!(
            out,
            "            /// The record at the start of `bytes` (which must be exactly one `{0}`), or why it is not one.\n            pub fn unpack(bytes: &[u8]) -> Result<Self, RecordError> {{\n                super::{1}.check(bytes)?;\n                let mut b = [0; {n}];\n                b.copy_from_slice(bytes);\n                Ok(Body(b))\n            }}",
            r.name,
            const_name(&r.name)
        );
        out.push_str("            /// The record's bytes, for a writer.\n            pub const fn bytes(&self) -> &[u8] { &self.0 }\n");
        for f in &r.fields {
            let id = ident(&f.name);
            let plain = f.name.to_lowercase();
            let at = format!("byte {} bits {}:{}", f.byte, f.msb, f.lsb);
            let code = if f.address_lsb.is_some() {
                format!(
                    "            /// {0} ({at}); an error when the address is not aligned to the lowest bit it holds or beyond the highest.\n            pub fn with_{plain}(mut self, address: BusAddress) -> Result<Self, AddressFieldError> {{ {0}.put_address({1:?}, &mut self.0, address)?; Ok(self) }}\n            /// {0}.\n            pub fn {id}(&self) -> BusAddress {{ {0}.address(&self.0) }}",
                    f.name, r.name
                )
            } else if !f.values.is_empty() {
                let ty = camel(&f.name);
                format!(
                    "            /// {0} ({at}).\n            pub fn with_{plain}(mut self, v: {ty}) -> Self {{ {0}.set(&mut self.0, v as u64); self }}\n            /// {0}, or the raw value when the table does not list it.\n            pub fn {id}(&self) -> Result<{ty}, InvalidEnumValue> {{ let raw = {0}.get(&self.0) as u32; {ty}::from_raw(raw).ok_or(InvalidEnumValue {{ register: {1:?}, field: {0:?}, value: raw }}) }}",
                    f.name, r.name
                )
            } else if f.ty.as_deref() == Some("float") {
                format!(
                    "            /// {0} ({at}, float32).\n            pub fn with_{plain}(mut self, v: f32) -> Self {{ {0}.set(&mut self.0, u64::from(v.to_bits())); self }}\n            /// {0}.\n            pub fn {id}(&self) -> f32 {{ f32::from_bits({0}.get(&self.0) as u32) }}",
                    f.name
                )
            } else if f.ty.as_deref() == Some("sint") {
                format!(
                    "            /// {0} ({at}, signed); an error when `v` does not fit.\n            pub fn with_{plain}(mut self, v: i32) -> Result<Self, FieldOverflow> {{ {0}.try_set_signed({1:?}, &mut self.0, i64::from(v))?; Ok(self) }}\n            /// {0}.\n            pub fn {id}(&self) -> i32 {{ {0}.get_signed(&self.0) as i32 }}",
                    f.name, r.name
                )
            } else if f.width() == 1 {
                format!(
                    "            /// {0} ({at}).\n            pub fn with_{plain}(mut self, v: bool) -> Self {{ {0}.set(&mut self.0, u64::from(v)); self }}\n            /// {0}.\n            pub fn {id}(&self) -> bool {{ {0}.get(&self.0) != 0 }}",
                    f.name
                )
            } else if f.width() > 32 {
                format!(
                    "            /// {0} ({at}).\n            pub fn with_{plain}(mut self, v: u64) -> Self {{ {0}.set(&mut self.0, v); self }}\n            /// {0}.\n            pub fn {id}(&self) -> u64 {{ {0}.get(&self.0) }}",
                    f.name
                )
            } else if f.width() == 32 {
                format!(
                    "            /// {0} ({at}).\n            pub fn with_{plain}(mut self, v: u32) -> Self {{ {0}.set(&mut self.0, u64::from(v)); self }}\n            /// {0}.\n            pub fn {id}(&self) -> u32 {{ {0}.get(&self.0) as u32 }}",
                    f.name
                )
            } else {
                format!(
                    "            /// {0} ({at}); an error when `v` does not fit.\n            pub fn with_{plain}(mut self, v: u32) -> Result<Self, FieldOverflow> {{ {0}.try_set({1:?}, &mut self.0, u64::from(v))?; Ok(self) }}\n            /// {0}.\n            pub fn {id}(&self) -> u32 {{ {0}.get(&self.0) as u32 }}",
                    f.name, r.name
                )
            };
            out.push_str(&code);
            out.push('\n');
        }
        out.push_str("        }\n");
    }
    out.push_str("    }\n");
}

/// The `packets` module of a family whose stream is made of byte records (VideoCore IV).
fn render_records(table: &PacketTable) -> String {
    let label = &table.meta.doc_label;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n/// Control records of the family's control lists: `hal/regdb/packets/{}.toml`, extracted \
         from {} and checked against it by `regdb-gen`'s tests, field by field. Each constant is \
         typed by the family; each record's module holds its fields and, for a fixed-size record, \
         a typed `Body` (the record's bytes, id first).",
        table.meta.family, table.meta.document
    );
    out.push_str("pub mod packets {\n    use super::Family;\n    #[allow(unused_imports)]\n    use crate::packet::{Lists, Record};\n");
    for r in &table.records {
        let source =
            r.source.as_ref().map(|s| format!("\n    ///\n    /// {s}.")).unwrap_or_default();
        let _ = writeln!(
            out,
            "\n    /// `{}`: id {}, {} bytes{} ({label} §{}; {} lists).{source}",
            r.doc_name.replace('[', "\\[").replace(']', "\\]"),
            r.opcode,
            r.bytes,
            if r.open_ended { " and an escape-terminated list" } else { "" },
            r.section,
            r.lists,
        );
        let _ = writeln!(
            out,
            "    pub const {}: Record<Family> = Record::new({:?}, {}, {:?}, {}, {}, {}, {}::FIELDS);",
            const_name(&r.name),
            r.name,
            r.opcode,
            r.section,
            lists_variant(&r.lists),
            r.bytes,
            r.open_ended,
            module_name(&r.name)
        );
        render_record_module(&mut out, r, label);
    }
    out.push_str("\n    /// Every record, by id.\n    pub const ALL: &[Record<Family>] = &[\n");
    for r in &table.records {
        let _ = writeln!(out, "        {},", const_name(&r.name));
    }
    out.push_str("    ];\n}\n");
    out
}

/// The `packets` module for `table`, appended to the family's generated module.
pub fn render(table: &PacketTable) -> String {
    if !table.records.is_empty() {
        return render_records(table);
    }
    if !table.commands.is_empty() {
        return crate::pushbuffer::render(table);
    }
    let label = &table.meta.doc_label;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n/// Type-3 packets of the family's command stream: `hal/regdb/packets/{}.toml`, extracted \
         from {} and checked against it by `regdb-gen`'s tests, field by field. Each constant is \
         typed by the family, so a writer of another family does not take it; each packet's \
         module holds its fields and, for a fixed-length body, a typed `Body`.",
        table.meta.family, table.meta.document
    );
    out.push_str("pub mod packets {\n");
    out.push_str("    use super::Family;\n");
    out.push_str("    #[allow(unused_imports)]\n    use crate::packet::{BodyDword, Packet, RegisterRange};\n");
    for p in table.packets.iter().filter(|p| p.opcode.is_some()) {
        let opcode = p.opcode.unwrap_or_default();
        let _ = writeln!(out);
        let where_ = if p.section.is_empty() {
            "not in the document".to_string()
        } else {
            format!("{label} §{}", p.section)
        };
        let chips = if p.chips.is_empty() { String::new() } else { format!("; {}", p.chips) };
        let _ = writeln!(
            out,
            "    /// `{}` {:#04x} ({where_}{chips}): {}",
            p.doc_name,
            opcode,
            p.description.replace('[', "\\[").replace(']', "\\]")
        );
        if let Some(source) = &p.opcode_source {
            let _ = writeln!(out, "    ///\n    /// Opcode: {source}.");
        }
        let _ = writeln!(
            out,
            "    pub const {}: Packet<Family> = Packet::new({:?}, {:#04x}, {:?}, {:?}, {:?}, &[",
            const_name(&p.name),
            p.name,
            opcode,
            p.section,
            p.chips,
            p.description
        );
        for b in &p.body {
            let _ = writeln!(
                out,
                "        BodyDword {{ dword: {:?}, field: {:?} }},",
                b.dword, b.field
            );
        }
        let max =
            p.max_dwords.map_or("crate::packet::MAX_BODY_DWORDS".to_string(), |m| m.to_string());
        let _ = write!(
            out,
            "    ]).with_layout({}, {max}, {}::FIELDS)",
            p.min_dwords,
            module_name(&p.name)
        );
        if !p.only_dwords.is_empty() {
            let _ = write!(out, "\n    .with_only_dwords(&{:?})", p.only_dwords);
        }
        if let Some(r) = &p.register_range {
            let _ = write!(
                out,
                "\n    // Register range: {}.\n    .with_register_range(RegisterRange {{ start: {:#x}, end: {:#x}, legacy_zero: {} }})",
                r.source, r.start, r.end, r.legacy_zero
            );
        }
        out.push_str(";\n");
        render_packet_module(&mut out, p, label);
    }
    out.push_str("\n    /// Every packet with an opcode, in document order.\n");
    out.push_str("    pub const ALL: &[Packet<Family>] = &[\n");
    for p in table.packets.iter().filter(|p| p.opcode.is_some()) {
        let _ = writeln!(out, "        {},", const_name(&p.name));
    }
    out.push_str("    ];\n");
    out.push_str(
        "\n    /// Packets the document describes whose opcode neither it nor a cited public source \
         gives: (name, section). They have no constant, so no writer emits them.\n",
    );
    out.push_str("    pub const WITHOUT_OPCODE: &[(&str, &str)] = &[\n");
    for p in table.packets.iter().filter(|p| p.opcode.is_none()) {
        let _ = writeln!(out, "        ({:?}, {:?}),", p.name, p.section);
    }
    out.push_str("    ];\n}\n");
    out
}

/// Every problem in a packet table's fields; empty when it is sound: a field outside the body
/// (before dword 2 or past the longest body) or outside its dword, two fields over the same
/// bits (unless one is an `alias_of` the other), repeated names, invalid names, enum values that
/// do not fit, address parts that reach past 64 bits, `SET_*` ranges that are empty.
pub fn lint(table: &PacketTable) -> Vec<crate::lint::LintError> {
    use crate::lint::{LintError, valid_name, valid_value_name};
    let mut errors = Vec::new();
    for p in &table.packets {
        let mut err = |message: String| {
            errors.push(LintError {
                family: table.meta.family.clone(),
                subject: p.name.clone(),
                message,
            })
        };
        if p.only_dwords.iter().any(|&n| n < p.min_dwords || p.max_dwords.is_some_and(|m| n > m)) {
            err(format!(
                "lengths {:?} outside {}..{:?}",
                p.only_dwords, p.min_dwords, p.max_dwords
            ));
        }
        if p.max_dwords.is_some_and(|m| m < p.min_dwords) || p.min_dwords == 0 {
            err(format!("body length {}..{:?} is empty", p.min_dwords, p.max_dwords));
        }
        if let Some(r) = &p.register_range
            && (r.end <= r.start || r.start % 4 != 0 || r.end % 4 != 0)
        {
            err(format!("register range {:#x}..{:#x} is empty or unaligned", r.start, r.end));
        }
        let mut names = std::collections::BTreeSet::new();
        for f in &p.fields {
            if !valid_name(&f.name) {
                err(format!("invalid field name {:?}", f.name));
            }
            if !names.insert(&f.name) {
                err(format!("field {} appears twice", f.name));
            }
            if f.msb > 31 || f.lsb > f.msb {
                err(format!("{} has bits {}:{}, outside its dword", f.name, f.msb, f.lsb));
            }
            if f.dword < 2 || p.max_dwords.is_some_and(|m| f.dword - 1 > m) {
                err(format!("{} is in DW{}, outside the body", f.name, f.dword));
            }
            if f.address_lsb.is_some_and(|a| a + f.width() > 64) {
                err(format!("{} holds address bits past 63", f.name));
            }
            for v in &f.values {
                if !valid_value_name(&v.name) {
                    err(format!("{}: invalid value name {:?}", f.name, v.name));
                }
                if f.width() < 32 && v.value >> f.width() != 0 {
                    err(format!("{}: value {} does not fit {} bits", f.name, v.value, f.width()));
                }
            }
            if let Some(of) = &f.alias_of
                && !p.fields.iter().any(|o| &o.name == of && o.dword == f.dword)
            {
                err(format!("{} is an alias of {of}, which is not in its dword", f.name));
            }
        }
        for (i, a) in p.fields.iter().enumerate() {
            for b in &p.fields[i + 1..] {
                let aliased =
                    a.alias_of.as_ref() == Some(&b.name) || b.alias_of.as_ref() == Some(&a.name);
                if a.dword == b.dword && a.lsb <= b.msb && b.lsb <= a.msb && !aliased {
                    err(format!("{} and {} overlap in DW{}", a.name, b.name, a.dword));
                }
            }
        }
    }
    errors.extend(lint_records(table));
    errors.extend(crate::pushbuffer::lint(table));
    errors
}

/// Every problem in a table's control records: repeated ids or names, a list other than
/// binning/rendering/both, a field outside the record (in the id byte, past its size, or
/// starting past bit 7 of its byte), wider than 64 bits, two fields over the same bits, enum
/// values that do not fit, an unknown type, addresses past bit 31 (V3D addresses are 32-bit).
fn lint_records(table: &PacketTable) -> Vec<crate::lint::LintError> {
    use crate::lint::{LintError, valid_name, valid_value_name};
    let mut errors = Vec::new();
    let mut ids = std::collections::BTreeSet::new();
    let mut record_names = std::collections::BTreeSet::new();
    for r in &table.records {
        let mut err = |message: String| {
            errors.push(LintError {
                family: table.meta.family.clone(),
                subject: r.name.clone(),
                message,
            })
        };
        if !valid_name(&r.name) || !record_names.insert(&r.name) {
            err(format!("record name {:?} is invalid or repeated", r.name));
        }
        if !ids.insert(r.opcode) {
            err(format!("id {} appears twice", r.opcode));
        }
        if !["binning", "rendering", "both"].contains(&r.lists.as_str()) {
            err(format!("lists {:?} is not binning, rendering or both", r.lists));
        }
        if r.bytes == 0 {
            err("a record has at least its id byte".into());
        }
        let mut names = std::collections::BTreeSet::new();
        for f in &r.fields {
            if !valid_name(&f.name) || !names.insert(&f.name) {
                err(format!("field name {:?} is invalid or repeated", f.name));
            }
            if f.lsb > 7 || f.lsb > f.msb || f.width() > 64 {
                err(format!("{} has bits {}:{} from byte {}", f.name, f.msb, f.lsb, f.byte));
            }
            if f.byte == 0 || f.byte * 8 + f.msb as usize >= r.bytes * 8 {
                err(format!("{} is outside the record's {} bytes", f.name, r.bytes));
            }
            if f.address_lsb.is_some_and(|a| a + f.width() > 32) {
                err(format!("{} holds address bits past 31", f.name));
            }
            match f.ty.as_deref() {
                None | Some("sint") => {}
                Some("float") if f.width() == 32 => {}
                Some(other) => err(format!("{}: type {other:?} (width {})", f.name, f.width())),
            }
            for v in &f.values {
                if !valid_value_name(&v.name) {
                    err(format!("{}: invalid value name {:?}", f.name, v.name));
                }
                if f.width() < 32 && v.value >> f.width() != 0 {
                    err(format!("{}: value {} does not fit {} bits", f.name, v.value, f.width()));
                }
            }
        }
        let bits = |f: &RecordField| (f.byte * 8 + f.lsb as usize, f.byte * 8 + f.msb as usize);
        for (i, a) in r.fields.iter().enumerate() {
            for b in &r.fields[i + 1..] {
                let ((alo, ahi), (blo, bhi)) = (bits(a), bits(b));
                if alo <= bhi && blo <= ahi {
                    err(format!("{} and {} overlap", a.name, b.name));
                }
            }
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(fields: &str, max: &str) -> PacketTable {
        toml::from_str(&format!(
            "[meta]\nfamily = \"t\"\ndocument = \"d\"\ndoc_label = \"d\"\n\n[[packet]]\nname = \"P\"\n\
             doc_name = \"P\"\nopcode = 0x10\nsection = \"1\"\nchips = \"c\"\ndescription = \"\"\n\
             min_dwords = 2\n{max}\n{fields}"
        ))
        .expect("table")
    }

    fn field(name: &str, dword: usize, msb: u32, lsb: u32, extra: &str) -> String {
        format!(
            "\n[[packet.field]]\nname = \"{name}\"\ndword = {dword}\nmsb = {msb}\nlsb = {lsb}\n{extra}\n"
        )
    }

    #[test]
    fn sound_fields_pass() {
        let t = table(&(field("A", 2, 31, 29, "") + &field("B", 2, 28, 0, "")), "max_dwords = 2");
        assert_eq!(lint(&t), vec![]);
    }

    #[test]
    fn overlapping_fields_are_refused_unless_aliased() {
        let t = table(&(field("A", 2, 31, 2, "") + &field("B", 2, 15, 0, "")), "max_dwords = 2");
        assert!(lint(&t)[0].message.contains("A and B overlap in DW2"));
        let aliased = field("A", 2, 31, 2, "") + &field("B", 2, 15, 0, "alias_of = \"A\"");
        assert_eq!(lint(&table(&aliased, "max_dwords = 2")), vec![]);
    }

    #[test]
    fn fields_outside_the_body_or_dword_are_refused() {
        let past = lint(&table(&field("A", 4, 31, 0, ""), "max_dwords = 2"));
        assert!(past[0].message.contains("A is in DW4, outside the body"));
        let header = lint(&table(&field("A", 1, 31, 0, ""), "max_dwords = 2"));
        assert!(header[0].message.contains("outside the body"));
        let bits = lint(&table(&field("A", 2, 32, 0, ""), "max_dwords = 2"));
        assert!(bits[0].message.contains("outside its dword"));
        // An open-ended body has no last dword.
        assert_eq!(lint(&table(&field("A", 9, 31, 0, ""), "")), vec![]);
    }

    fn records(fields: &str) -> PacketTable {
        toml::from_str(&format!(
            "[meta]\nfamily = \"t\"\ndocument = \"d\"\ndoc_label = \"d\"\n\n[[record]]\nname = \"R\"\n\
             doc_name = \"R\"\nopcode = 64\nsection = \"9\"\nlists = \"both\"\nbytes = 5\n{fields}"
        ))
        .expect("table")
    }

    fn record_field(name: &str, byte: usize, msb: u32, lsb: u32, extra: &str) -> String {
        format!(
            "\n[[record.field]]\nname = \"{name}\"\nbyte = {byte}\nmsb = {msb}\nlsb = {lsb}\n{extra}\n"
        )
    }

    #[test]
    fn record_fields_must_fit_the_record_and_not_overlap() {
        // Table 38 as printed: GL Shader State's address at offset 0 over the two fields beside it.
        let printed = record_field("ADDRESS", 1, 27, 0, "address_lsb = 4")
            + &record_field("EXTENDED", 1, 3, 3, "")
            + &record_field("COUNT", 1, 2, 0, "");
        let errors = lint(&records(&printed));
        assert!(errors.iter().any(|e| e.message == "ADDRESS and EXTENDED overlap"), "{errors:?}");
        let corrected = record_field("ADDRESS", 1, 31, 4, "address_lsb = 4")
            + &record_field("EXTENDED", 1, 3, 3, "")
            + &record_field("COUNT", 1, 2, 0, "");
        assert_eq!(lint(&records(&corrected)), vec![]);
        let past = lint(&records(&record_field("A", 2, 31, 0, "")));
        assert!(past[0].message.contains("outside the record's 5 bytes"), "{past:?}");
        let id = lint(&records(&record_field("A", 0, 7, 0, "")));
        assert!(id[0].message.contains("outside the record"), "{id:?}");
        let wide = lint(&records(&record_field("A", 1, 31, 0, "address_lsb = 4")));
        assert!(wide[0].message.contains("address bits past 31"), "{wide:?}");
    }

    #[test]
    fn enum_values_must_fit() {
        let t = table(&field("A", 2, 1, 0, "[[packet.field.value]]\nname = \"X\"\nvalue = 4"), "");
        assert!(lint(&t)[0].message.contains("value 4 does not fit 2 bits"));
    }
}
