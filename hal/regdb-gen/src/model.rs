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
    /// The family's chipsets, in the order chipset ranges are written against.
    #[serde(default, rename = "chipset")]
    pub chipsets: Vec<Chipset>,
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

/// One chip of the family.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Chipset {
    /// Name as the documents write it (`GT215`, `RV515`); also the Rust enum variant.
    pub name: String,
    /// The code the chip reports in a register (nVidia `PMC_BOOT_0` chipset), if any.
    pub id: Option<u64>,
    /// CPU physical address of the register window, for SoC parts without PCI BARs.
    pub mmio_base: Option<u64>,
    /// What the chip is.
    pub description: String,
    /// Where the facts come from.
    pub source: String,
    /// PCI vendor/device ID ranges of the chip.
    #[serde(default)]
    pub pci: Vec<PciIds>,
}

/// A range of PCI device IDs of one vendor.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PciIds {
    /// PCI vendor ID.
    pub vendor: u16,
    /// First device ID.
    pub first: u16,
    /// Last device ID (inclusive).
    pub last: u16,
    /// Marketing name, for logs.
    pub name: Option<String>,
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
    /// The block exists once per engine or channel: offsets count from an instance's base.
    #[serde(default)]
    pub relative: bool,
    /// Document section the block comes from.
    pub source: String,
    /// Where the instances of a relative block are.
    #[serde(default, rename = "instance")]
    pub instances: Vec<Instance>,
    /// Classes of units a register of a relative block may be limited to.
    #[serde(default, rename = "unit_class")]
    pub unit_classes: Vec<UnitClass>,
}

/// One place a relative block sits in the register window, or numbered places (`count`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Instance {
    /// UPPER_SNAKE name; the Rust type is its CamelCase form (`PDAEMON` -> `Pdaemon`).
    pub name: String,
    /// Offset of the (first) instance in the register window.
    pub base: u64,
    /// Number of valid indices, for numbered instances.
    pub count: Option<u32>,
    /// Byte distance between numbered instances.
    pub stride: Option<u64>,
    /// Lowest valid index (default 0); instance `i` is at `base + i * stride`.
    pub first: Option<u32>,
    /// Chipsets that have the instance.
    pub chipsets: Option<String>,
    /// What the instance is.
    pub description: String,
    /// Where the facts come from.
    pub source: String,
}

/// A class of units of a relative block (falcon "v3+ units").
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnitClass {
    /// UPPER_SNAKE name.
    pub name: String,
    /// Which units belong to it.
    pub description: String,
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
    /// Chipsets the layout applies to (see [`parse_chip_ranges`]).
    pub chipsets: Option<String>,
    /// The class of units of a relative block that have the register (a `unit_class` name).
    pub units: Option<String>,
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
    /// The field holds a bus address from this bit of the address up.
    pub address_shift: Option<u32>,
    /// The field holds the family's chipset id (a `[[chipset]]` `id`).
    #[serde(default)]
    pub chipset_id: bool,
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

/// One range of a chipset list, as written (envytools notation, names of `[[chipset]]`s).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChipRangeText {
    /// `A`: exactly that chipset.
    Only(String),
    /// `A:B`: from `A` up to, not including, `B`.
    Until(String, String),
    /// `A-`: `A` and every later chipset.
    Onward(String),
}

/// Parse a chipset list: comma-separated ranges, each `A`, `A:B` or `A-`.
pub fn parse_chip_ranges(text: &str) -> Result<Vec<ChipRangeText>, String> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim) {
        let name_ok = |n: &str| !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric());
        let range = if let Some(first) = part.strip_suffix('-') {
            ChipRangeText::Onward(first.to_string())
        } else if let Some((a, b)) = part.split_once(':') {
            ChipRangeText::Until(a.to_string(), b.to_string())
        } else {
            ChipRangeText::Only(part.to_string())
        };
        let names_ok = match &range {
            ChipRangeText::Only(a) | ChipRangeText::Onward(a) => name_ok(a),
            ChipRangeText::Until(a, b) => name_ok(a) && name_ok(b),
        };
        if !names_ok {
            return Err(format!("{part:?} is not a chipset range (A, A:B or A-)"));
        }
        out.push(range);
    }
    Ok(out)
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

    /// Position of a chipset in the family's order.
    pub fn chipset_index(&self, name: &str) -> Option<usize> {
        self.chipsets.iter().position(|c| c.name == name)
    }
}
