//! Packet tables: `hal/regdb/packets/<family>.toml` (extracted from the documents by
//! `hal/regdb/extract/extract.py`, like the register databases) and the `packets` module the
//! generator appends to the family's generated register module.

use serde::Deserialize;
use std::fmt::Write;
use std::path::{Path, PathBuf};

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
    /// The document section describing the packet.
    pub section: String,
    /// The chips the document says have it.
    pub chips: String,
    /// The document's one-line description.
    pub description: String,
    /// The body, dword by dword, as the document's table gives it.
    #[serde(default)]
    pub body: Vec<BodyDword>,
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

/// The `packets` module for `table`, appended to the family's generated module.
pub fn render(table: &PacketTable) -> String {
    let label = &table.meta.doc_label;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n/// Type-3 packets of the family's command stream: `hal/regdb/packets/{}.toml`, extracted \
         from {} and checked against it by `regdb-gen`'s tests. Each constant is typed by the \
         family, so a writer of another family does not take it.",
        table.meta.family, table.meta.document
    );
    out.push_str("pub mod packets {\n");
    out.push_str("    use super::Family;\n");
    out.push_str("    use crate::packet::{BodyDword, Packet};\n");
    for p in table.packets.iter().filter(|p| p.opcode.is_some()) {
        let opcode = p.opcode.unwrap_or_default();
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "    /// `{}` {:#04x} ({label} §{}; {}): {}",
            p.doc_name,
            opcode,
            p.section,
            p.chips,
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
        out.push_str("    ]);\n");
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
