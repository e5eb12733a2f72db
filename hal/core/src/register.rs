//! Traits implemented by the generated register types (crate `baregpu-regs`).
//!
//! A register type is a `#[repr(transparent)]` newtype over its raw `u32` value that knows its
//! offset. Access rights are part of the type: only [`Readable`] registers can be read and only
//! [`Writable`] ones written, so a write to a read-only status register does not compile.
//! Plain registers are [`Scalar`]; indexed ranges (`TX_FILTER0_[0-15]`, falcon `DATA_INDEX[i]`)
//! are [`Array`]s whose index is checked against the documented count.

use core::fmt;

/// A register layout: raw value conversions and where it lives.
pub trait Register: Copy {
    /// Vendor name of the register, as in the document.
    const NAME: &'static str;
    /// Byte offset of the (first instance of the) register in its block.
    const OFFSET: usize;
    /// Bits a write may change (the union of the writable fields). Device models use it to mask
    /// writes outside the documented fields.
    const WRITE_MASK: u32;
    /// Value after reset, built from the documented field defaults (unknown defaults are 0).
    const RESET: u32;

    /// The register holding `raw`.
    fn from_raw(raw: u32) -> Self;
    /// The raw 32-bit value.
    fn to_raw(self) -> u32;
}

/// A register that may be read.
pub trait Readable: Register {}

/// A register that may be written.
pub trait Writable: Register {}

/// A single register at [`Register::OFFSET`].
pub trait Scalar: Register {}

/// An array of identical registers: instance `i` lives at `OFFSET + i * STRIDE`.
pub trait Array: Register {
    /// Number of instances.
    const COUNT: usize;
    /// Byte distance between instances.
    const STRIDE: usize;

    /// Byte offset of instance `index`, or an error if the index is outside the array.
    fn offset_of(index: usize) -> Result<usize, IndexOutOfRange> {
        if index < Self::COUNT {
            Ok(Self::OFFSET + index * Self::STRIDE)
        } else {
            Err(IndexOutOfRange { register: Self::NAME, index, count: Self::COUNT })
        }
    }
}

/// An array index beyond the documented number of instances.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct IndexOutOfRange {
    /// Register array name.
    pub register: &'static str,
    /// Requested index.
    pub index: usize,
    /// Number of instances.
    pub count: usize,
}

impl fmt::Display for IndexOutOfRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[{}] is outside the array of {}", self.register, self.index, self.count)
    }
}

/// A value too wide for the field it was meant for (returned by the generated `try_with_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct FieldOverflow {
    /// Register name.
    pub register: &'static str,
    /// Field name.
    pub field: &'static str,
    /// Rejected value.
    pub value: u32,
    /// Field width in bits.
    pub width: u32,
}

impl fmt::Display for FieldOverflow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:#x} does not fit the {}-bit field {}.{}",
            self.value, self.width, self.register, self.field
        )
    }
}

/// A field holds a value its enumeration does not name (returned by generated enum getters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct InvalidEnumValue {
    /// Register name.
    pub register: &'static str,
    /// Field name.
    pub field: &'static str,
    /// Raw field value.
    pub value: u32,
}

impl fmt::Display for InvalidEnumValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{} holds undocumented value {:#x}", self.register, self.field, self.value)
    }
}

/// Mask of `width` low bits (`width` 1..=32).
#[inline(always)]
pub const fn low_mask(width: u32) -> u32 {
    if width >= 32 { u32::MAX } else { (1u32 << width) - 1 }
}

/// Static description of one field, generated from the register database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldSpec {
    /// Field name, as in the document.
    pub name: &'static str,
    /// Lowest bit.
    pub lsb: u32,
    /// Width in bits.
    pub width: u32,
    /// Software may read the field.
    pub readable: bool,
    /// Software may write the field.
    pub writable: bool,
}

impl FieldSpec {
    /// Mask of the field in register position.
    pub const fn mask(&self) -> u32 {
        low_mask(self.width) << self.lsb
    }
    /// The field's value in `raw`.
    pub const fn get(&self, raw: u32) -> u32 {
        (raw >> self.lsb) & low_mask(self.width)
    }
    /// `raw` with the field replaced by `value` (truncated to the field width).
    pub const fn set(&self, raw: u32, value: u32) -> u32 {
        (raw & !self.mask()) | ((value & low_mask(self.width)) << self.lsb)
    }
}

/// Static description of one register (or register array), generated from the database, for
/// code that works on registers generically: device models' register files, debug dumps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegisterSpec {
    /// Register name, as in the document.
    pub name: &'static str,
    /// Block name.
    pub block: &'static str,
    /// Byte offset: absolute, or from the block's run-time base when `relative`.
    pub offset: usize,
    /// Whether `offset` is relative to a run-time base.
    pub relative: bool,
    /// Number of instances (1 for a plain register).
    pub count: usize,
    /// Byte distance between instances (0 for a plain register).
    pub stride: usize,
    /// Software may read it.
    pub readable: bool,
    /// Software may write it.
    pub writable: bool,
    /// Bits a write may change.
    pub write_mask: u32,
    /// Reset value.
    pub reset: u32,
    /// Chipset range, where the layout is chip-specific.
    pub variant: Option<&'static str>,
    /// Document and section.
    pub source: &'static str,
    /// Fields, lowest first.
    pub fields: &'static [FieldSpec],
}

impl RegisterSpec {
    /// Index of the instance at byte `offset`, if this register (array) covers it.
    pub const fn instance_at(&self, offset: usize) -> Option<usize> {
        if offset < self.offset {
            return None;
        }
        let delta = offset - self.offset;
        if self.count <= 1 {
            return if delta == 0 { Some(0) } else { None };
        }
        if delta.is_multiple_of(self.stride) && delta / self.stride < self.count {
            Some(delta / self.stride)
        } else {
            None
        }
    }
}

/// `Debug` for generated registers: the name and every field by name, not a bare hex number.
pub fn debug_fields(
    f: &mut fmt::Formatter<'_>,
    name: &str,
    raw: u32,
    fields: &[FieldSpec],
) -> fmt::Result {
    let mut s = f.debug_struct(name);
    for field in fields {
        s.field(field.name, &format_args!("{:#x}", field.get(raw)));
    }
    s.finish()
}

/// `defmt::Format` for generated registers, printing fields by name.
#[cfg(feature = "defmt")]
pub fn defmt_fields(f: defmt::Formatter<'_>, name: &str, raw: u32, fields: &[FieldSpec]) {
    defmt::write!(f, "{=str} {{", name);
    for field in fields {
        defmt::write!(f, " {=str}: {=u32:#x}", field.name, field.get(raw));
    }
    defmt::write!(f, " }}");
}
