//! The register database as the generator sees it: a direct image of `hal/regdb/<family>.toml`
//! (format described in `hal/regdb/README.md`).

use serde::Deserialize;
use std::fmt;
use std::path::Path;

/// One family's register database.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Database {
    /// Which family and document the database describes.
    pub meta: Meta,
    /// Register blocks, in document order.
    #[serde(default, rename = "block")]
    pub blocks: Vec<Block>,
    /// Registers, sorted by block then offset.
    #[serde(default, rename = "register")]
    pub registers: Vec<Register>,
}

/// Family-level facts.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Meta {
    /// Database name, used as the Rust module name (`r5xx`, `vc4`, ...).
    pub family: String,
    /// Human-readable family name.
    pub title: String,
    /// File name of the source document in `shared/docs`.
    pub document: String,
    /// How citations name the document (`amd-r5xx-acceleration`).
    pub doc_label: String,
}

/// A group of registers sharing a base address.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Block {
    /// UPPER_SNAKE block name; the Rust module is its lower-case form.
    pub name: String,
    /// What the block is.
    pub description: String,
    /// Byte address added to every register offset of the block.
    #[serde(default)]
    pub base: u64,
    /// Offsets are relative to a base chosen at run time (engine instance, channel).
    #[serde(default)]
    pub relative: bool,
    /// Document section the block comes from.
    pub source: String,
}

/// Who may read or write a register or field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum Access {
    /// Read-only.
    #[serde(rename = "r")]
    Read,
    /// Write-only.
    #[serde(rename = "w")]
    Write,
    /// Read and write.
    #[serde(rename = "rw")]
    ReadWrite,
}

impl Access {
    /// Reads are allowed.
    pub fn readable(self) -> bool {
        matches!(self, Access::Read | Access::ReadWrite)
    }
    /// Writes are allowed.
    pub fn writable(self) -> bool {
        matches!(self, Access::Write | Access::ReadWrite)
    }
}

/// One register, or one array of identical registers.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Register {
    /// Name of the block the register belongs to.
    pub block: String,
    /// Vendor name, UPPER_SNAKE.
    pub name: String,
    /// Byte offset relative to the block base.
    pub offset: u64,
    /// Width in bits.
    #[serde(default = "default_width")]
    pub width: u32,
    /// Register-level access.
    pub access: Access,
    /// Number of instances, for register arrays.
    pub count: Option<u32>,
    /// Byte distance between instances, for register arrays.
    pub stride: Option<u64>,
    /// Chipset range the layout applies to (`G80:GF100`, `GT215-`).
    pub variant: Option<String>,
    /// Name of the register this one aliases (same offset, documented as such).
    pub alias_of: Option<String>,
    /// Address in the falcon I[] space, for falcon IO registers.
    pub io_address: Option<u64>,
    /// I[] distance between instances, for falcon IO register arrays.
    pub io_stride: Option<u64>,
    /// Reset value of the whole register, where documented.
    pub reset: Option<u64>,
    /// Description from the document.
    pub description: String,
    /// Document label and section (`amd-r5xx-acceleration §11.1`), or the named outside source.
    pub source: String,
    /// Bit fields; empty means one field spanning the register.
    #[serde(default, rename = "field")]
    pub fields: Vec<Field>,
}

fn default_width() -> u32 {
    32
}

impl Register {
    /// Number of instances (1 for a plain register).
    pub fn instances(&self) -> u32 {
        self.count.unwrap_or(1)
    }

    /// Byte span covered by the register (all instances of an array).
    pub fn span(&self) -> (u64, u64) {
        let bytes = u64::from(self.width / 8).max(1);
        let last = self.offset + self.stride.unwrap_or(0) * u64::from(self.instances() - 1);
        (self.offset, last + bytes)
    }
}

/// A bit field of a register.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Field {
    /// UPPER_SNAKE field name.
    pub name: String,
    /// Most significant bit, inclusive.
    pub msb: u32,
    /// Least significant bit.
    pub lsb: u32,
    /// Field access, when it differs from the register's.
    pub access: Option<Access>,
    /// Reset value of the field, where documented.
    pub reset: Option<u64>,
    /// Description from the document.
    #[serde(default)]
    pub description: String,
    /// Enumerated values, where the document lists them.
    #[serde(default, rename = "value")]
    pub values: Vec<EnumValue>,
}

impl Field {
    /// Number of bits.
    pub fn width(&self) -> u32 {
        self.msb.saturating_sub(self.lsb) + 1
    }
    /// Mask of the field, in register position.
    pub fn mask(&self) -> u64 {
        (((1u128 << self.width()) - 1) as u64) << self.lsb
    }
}

/// One enumerated value of a field.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnumValue {
    /// UPPER_SNAKE value name.
    pub name: String,
    /// Numeric value.
    pub value: u64,
    /// Meaning, from the document.
    #[serde(default)]
    pub description: String,
}

/// Why a database file could not be loaded.
#[derive(Debug)]
pub enum LoadError {
    /// The file could not be read.
    Io(std::io::Error),
    /// The file is not valid database TOML.
    Parse(toml::de::Error),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Io(e) => write!(f, "cannot read register database: {e}"),
            LoadError::Parse(e) => write!(f, "invalid register database: {e}"),
        }
    }
}

impl std::error::Error for LoadError {}

impl Database {
    /// Parse database TOML text.
    pub fn parse(text: &str) -> Result<Database, LoadError> {
        toml::from_str(text).map_err(LoadError::Parse)
    }

    /// Read and parse a database file.
    pub fn load(path: &Path) -> Result<Database, LoadError> {
        let text = std::fs::read_to_string(path).map_err(LoadError::Io)?;
        Database::parse(&text)
    }

    /// Registers with the given vendor name (several when the layout differs per chipset).
    pub fn registers_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Register> + 'a {
        self.registers.iter().filter(move |r| r.name == name)
    }

    /// The block a register belongs to.
    pub fn block(&self, name: &str) -> Option<&Block> {
        self.blocks.iter().find(|b| b.name == name)
    }
}
