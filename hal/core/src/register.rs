//! Traits implemented by the generated register types (crate `baregpu-regs`).
//!
//! A register type is a `#[repr(transparent)]` newtype over its raw `u32` value that knows its
//! offset, its [`Family`] and its [`Base`]. Access rights are part of the type: only
//! [`Readable`] registers can be read and only [`Writable`] ones written, so a write to a
//! read-only status register does not compile. Plain registers are [`Scalar`]; indexed ranges
//! (`TX_FILTER0_[0-15]`, falcon `DATA_INDEX[i]`) are [`Array`]s whose index is checked against the
//! documented count.
//!
//! # Family and base in the type
//!
//! [`Register::Family`] is a marker per GPU family (`baregpu_regs::r5xx::Family`), so a writer
//! of one family's command stream accepts only that family's registers.
//! [`Register::Base`] says where [`Register::OFFSET`] counts from: [`Absolute`] registers sit at
//! a fixed offset of the device's register window (the PCI BAR, or a SoC block); registers of a
//! block that exists once per engine or channel (the falcon IO space, the PFIFO USER area) have
//! that block's marker as their base and are reached only through an [`Instance`] or
//! [`InstanceArray`] of it (`io.at::<Pdaemon>()`, see [`crate::io`]).
//!
//! # Chipsets
//!
//! [`Family::Chipset`] is the family's generated chipset enum, ordered as the documents order
//! chipsets, so a [`ChipRange`] (envytools `GT215:GF100`, `GF100-`) is a plain range over it.
//! [`Register::CHIPSETS`] tells which chipsets a layout applies to
//! ([`Register::exists_on`]).

use crate::dma::BusAddress;
use core::fmt;

/// A GPU family, as a type: implemented by the generated zero-sized marker of each family
/// (`baregpu_regs::r5xx::Family`, `baregpu_regs::nvidia::Family`).
pub trait Family: 'static {
    /// Family (database) name: `"r5xx"`, `"nvidia"`.
    const NAME: &'static str;
    /// The family's chipsets (the generated `Chipset` enum). `Ord` follows the order the
    /// documents list chipsets in, which is what chipset ranges are written against.
    type Chipset: Copy + Eq + Ord + fmt::Debug + 'static;
}

/// Where a register's [`Register::OFFSET`] counts from: [`Absolute`], or the marker of a block
/// that exists once per engine or channel (generated as `Block` in that block's module).
pub trait Base: 'static {
    /// Block name, as in the database (`"FALCON"`), or `"absolute"`.
    const NAME: &'static str;
}

/// Offsets from the start of the device's register window: the register BAR of a PCI device
/// (R5xx, Evergreen, nVidia BAR0) or the block a SoC maps at a fixed physical address (V3D).
/// Only absolute registers can be accessed directly on a [`RegisterIo`](crate::RegisterIo).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Absolute {}

impl Base for Absolute {
    const NAME: &'static str = "absolute";
}

/// One instance of a relative block at a fixed offset of the register window (a falcon engine:
/// `baregpu_regs::nvidia::falcon::Pdaemon` at 0x10a000). Generated from the database's
/// `[[block.instance]]` entries; pass it to `io.at::<I>()`.
pub trait Instance: 'static {
    /// The family the instance belongs to.
    type Family: Family;
    /// The block whose registers the instance holds.
    type Block: Base;
    /// Instance name, as in the database (`"PDAEMON"`).
    const NAME: &'static str;
    /// Offset of the instance in the register window.
    const BASE: usize;
    /// Chipsets that have the instance.
    const CHIPSETS: Chipsets<<Self::Family as Family>::Chipset>;
}

/// Numbered instances of a relative block (a per-channel area): instance `i` is at
/// `BASE + i * STRIDE` for `FIRST <= i < FIRST + COUNT`. Pass it to `io.at_index::<A>(i)`.
pub trait InstanceArray: 'static {
    /// The family the instances belong to.
    type Family: Family;
    /// The block whose registers each instance holds.
    type Block: Base;
    /// Name, as in the database (`"USER_G80"`).
    const NAME: &'static str;
    /// Offset of instance 0 in the register window (whether or not index 0 is valid).
    const BASE: usize;
    /// Lowest valid index.
    const FIRST: usize;
    /// Number of valid indices.
    const COUNT: usize;
    /// Byte distance between instances.
    const STRIDE: usize;
    /// Chipsets that have the instances.
    const CHIPSETS: Chipsets<<Self::Family as Family>::Chipset>;

    /// Offset of instance `index`, or an error if the index is not valid.
    fn base_of(index: usize) -> Result<usize, IndexOutOfRange> {
        if index >= Self::FIRST && index - Self::FIRST < Self::COUNT {
            Ok(Self::BASE + index * Self::STRIDE)
        } else {
            Err(IndexOutOfRange {
                register: Self::NAME,
                index,
                first: Self::FIRST,
                count: Self::COUNT,
            })
        }
    }
}

/// Chipsets `first` up to, not including, `end`, in the document's order (envytools `A:B`);
/// `end == None` is open-ended (`A-`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ChipRange<C> {
    /// First chipset of the range.
    pub first: C,
    /// First chipset after the range, or `None` for every later one.
    pub end: Option<C>,
}

impl<C: Ord + Copy> ChipRange<C> {
    /// Whether `chip` is in the range.
    pub fn contains(&self, chip: C) -> bool {
        self.first <= chip && self.end.is_none_or(|end| chip < end)
    }
}

/// Which chipsets of a family have a register layout or a block instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Chipsets<C: 'static> {
    /// Every chipset of the family (the database gives no range).
    All,
    /// The union of these ranges.
    Ranges(&'static [ChipRange<C>]),
}

impl<C: Ord + Copy> Chipsets<C> {
    /// Whether `chip` is one of them.
    pub fn contains(&self, chip: C) -> bool {
        match self {
            Chipsets::All => true,
            Chipsets::Ranges(ranges) => ranges.iter().any(|r| r.contains(chip)),
        }
    }
}

/// A register layout: raw value conversions and where it lives.
pub trait Register: Copy {
    /// The family whose register database defines it.
    type Family: Family;
    /// Where [`OFFSET`](Self::OFFSET) counts from: [`Absolute`] or a relative block's marker.
    type Base: Base;
    /// Vendor name of the register, as in the document.
    const NAME: &'static str;
    /// Byte offset of the (first instance of the) register from its [`Base`](Self::Base).
    const OFFSET: usize;
    /// Bits a write may change (the union of the writable fields). Device models use it to mask
    /// writes outside the documented fields.
    const WRITE_MASK: u32;
    /// Raw value after reset, built from the documented field defaults (unknown defaults are
    /// 0). Generated types also have `RESET`, the same value as the register type.
    const RESET_RAW: u32;
    /// Chipsets this layout applies to ([`Chipsets::All`] unless the database gives a range).
    const CHIPSETS: Chipsets<<Self::Family as Family>::Chipset> = Chipsets::All;

    /// The register holding `raw`.
    fn from_raw(raw: u32) -> Self;
    /// The raw 32-bit value.
    fn to_raw(self) -> u32;

    /// Whether this layout applies to `chip` (see [`CHIPSETS`](Self::CHIPSETS)).
    fn exists_on(chip: <Self::Family as Family>::Chipset) -> bool {
        Self::CHIPSETS.contains(chip)
    }
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
            Err(IndexOutOfRange { register: Self::NAME, index, first: 0, count: Self::COUNT })
        }
    }
}

/// An index outside a register array or an [`InstanceArray`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct IndexOutOfRange {
    /// Register array (or instance array) name.
    pub register: &'static str,
    /// Requested index.
    pub index: usize,
    /// Lowest valid index (0 for register arrays).
    pub first: usize,
    /// Number of valid indices.
    pub count: usize,
}

impl fmt::Display for IndexOutOfRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.first == 0 {
            write!(f, "{}[{}] is outside the array of {}", self.register, self.index, self.count)
        } else {
            write!(
                f,
                "{}[{}] is outside the valid indices {}..{}",
                self.register,
                self.index,
                self.first,
                self.first + self.count
            )
        }
    }
}

impl core::error::Error for IndexOutOfRange {}

/// A value too wide for the field it was meant for (returned by the generated `try_with_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
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

impl FieldOverflow {
    /// `value` does not fit the `width`-bit field `register.field`.
    pub const fn new(register: &'static str, field: &'static str, value: u32, width: u32) -> Self {
        FieldOverflow { register, field, value, width }
    }
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

impl core::error::Error for FieldOverflow {}

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

impl core::error::Error for InvalidEnumValue {}

/// A bus address a register field cannot hold (returned by the generated setters of fields
/// that hold a bus address). Nothing is truncated: the caller gets the address back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct AddressFieldError {
    /// Register name.
    pub register: &'static str,
    /// Field name.
    pub field: &'static str,
    /// The rejected address.
    pub address: BusAddress,
    /// Why it does not fit.
    pub problem: AddressProblem,
}

/// Why an address does not fit a field (see [`AddressFieldError`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum AddressProblem {
    /// The field holds address bits from `log2(align)` up: the address must be a multiple of
    /// `align`.
    Misaligned {
        /// Required alignment in bytes.
        align: u64,
    },
    /// The address is at or above `limit`, the first address the field cannot express.
    OutOfReach {
        /// First unreachable address.
        limit: u64,
    },
}

impl fmt::Display for AddressFieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.problem {
            AddressProblem::Misaligned { align } => write!(
                f,
                "{} is not {align}-byte aligned as {}.{} requires",
                self.address, self.register, self.field
            ),
            AddressProblem::OutOfReach { limit } => write!(
                f,
                "{} is beyond {}.{}, which reaches addresses below {limit:#x}",
                self.address, self.register, self.field
            ),
        }
    }
}

impl core::error::Error for AddressFieldError {}

/// A chipset code read from the hardware (nVidia `PMC_BOOT_0.CHIPSET`) that the family's
/// chipset table does not list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct UnknownChipset {
    /// Family name (`"nvidia"`).
    pub family: &'static str,
    /// The code read.
    pub id: u32,
}

impl fmt::Display for UnknownChipset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "chipset id {:#x} is not in the {} chipset table", self.id, self.family)
    }
}

impl core::error::Error for UnknownChipset {}

/// Mask of `width` low bits (`width` 1..=32).
#[inline(always)]
pub const fn low_mask(width: u32) -> u32 {
    if width >= 32 { u32::MAX } else { (1u32 << width) - 1 }
}

/// Static description of one field, generated from the register database: each register type
/// has one constant per field (`CP_RB_CNTL::RB_BUFSZ`) and the list of them (`FIELDS`), so code
/// that needs a field's position (a device model composing a read-only register, a decoder)
/// never writes `1 << 29`.
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
    /// A field software may read and write.
    #[inline]
    pub const fn rw(name: &'static str, lsb: u32, width: u32) -> Self {
        FieldSpec { name, lsb, width, readable: true, writable: true }
    }
    /// A read-only field.
    #[inline]
    pub const fn ro(name: &'static str, lsb: u32, width: u32) -> Self {
        FieldSpec { name, lsb, width, readable: true, writable: false }
    }
    /// A write-only field.
    #[inline]
    pub const fn wo(name: &'static str, lsb: u32, width: u32) -> Self {
        FieldSpec { name, lsb, width, readable: false, writable: true }
    }
    /// A field software can neither read nor write (a read-only field of a write-only register).
    #[inline]
    pub const fn hidden(name: &'static str, lsb: u32, width: u32) -> Self {
        FieldSpec { name, lsb, width, readable: false, writable: false }
    }
    /// Mask of the field in register position.
    #[inline]
    pub const fn mask(&self) -> u32 {
        low_mask(self.width) << self.lsb
    }
    /// The field's value in `raw`.
    #[inline]
    pub const fn get(&self, raw: u32) -> u32 {
        (raw >> self.lsb) & low_mask(self.width)
    }
    /// `value` in register position (truncated to the field width).
    #[inline]
    pub const fn place(&self, value: u32) -> u32 {
        (value & low_mask(self.width)) << self.lsb
    }
    /// `raw` with the field replaced by `value` (truncated to the field width).
    #[inline]
    pub const fn set(&self, raw: u32, value: u32) -> u32 {
        (raw & !self.mask()) | self.place(value)
    }
    /// `raw` with the field replaced by `value`, or an error naming `register` if `value` does
    /// not fit the field.
    #[inline]
    pub const fn try_set(
        &self,
        register: &'static str,
        raw: u32,
        value: u32,
    ) -> Result<u32, FieldOverflow> {
        if value & !low_mask(self.width) != 0 {
            return Err(FieldOverflow { register, field: self.name, value, width: self.width });
        }
        Ok(self.set(raw, value))
    }
    /// The bus address held by a field that holds address bits from `shift` up.
    #[inline]
    pub const fn get_address(&self, raw: u32, shift: u32) -> BusAddress {
        BusAddress((self.get(raw) as u64) << shift)
    }
    /// `raw` with the field set to hold `address`, which the field holds from bit `shift` up:
    /// an error naming `register` if `address` is not a multiple of `1 << shift` or beyond the
    /// field's reach (`1 << (shift + width)`). Nothing is truncated.
    #[inline]
    pub const fn set_address(
        &self,
        register: &'static str,
        raw: u32,
        address: BusAddress,
        shift: u32,
    ) -> Result<u32, AddressFieldError> {
        let align = 1u64 << shift;
        // The database keeps `shift + width` below 64 (a lint in regdb-gen).
        let limit = 1u64 << (shift + self.width);
        let problem = if address.0 & (align - 1) != 0 {
            AddressProblem::Misaligned { align }
        } else if address.0 >= limit {
            AddressProblem::OutOfReach { limit }
        } else {
            return Ok(self.set(raw, (address.0 >> shift) as u32));
        };
        Err(AddressFieldError { register, field: self.name, address, problem })
    }
}

/// Static description of one register (or register array), generated from the database, for
/// code that works on registers generically: device models' register files, debug dumps.
/// `C` is the family's chipset type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegisterSpec<C: 'static> {
    /// Register name, as in the document.
    pub name: &'static str,
    /// Block name.
    pub block: &'static str,
    /// Byte offset: absolute, or from the block's instance base when `relative`.
    pub offset: usize,
    /// Whether `offset` is relative to a block instance (the register's base is not
    /// [`Absolute`]).
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
    /// Chipsets the layout applies to.
    pub chipsets: Chipsets<C>,
    /// Document and section.
    pub source: &'static str,
    /// Fields, lowest first.
    pub fields: &'static [FieldSpec],
}

impl<C> RegisterSpec<C> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
    enum Chip {
        A,
        B,
        C,
    }

    #[test]
    fn chip_ranges_include_their_first_and_exclude_their_end() {
        let a_to_c = ChipRange { first: Chip::A, end: Some(Chip::C) };
        assert!(a_to_c.contains(Chip::A) && a_to_c.contains(Chip::B));
        assert!(!a_to_c.contains(Chip::C), "A:C stops before C");
        let b_on = ChipRange { first: Chip::B, end: None };
        assert!(!b_on.contains(Chip::A) && b_on.contains(Chip::B) && b_on.contains(Chip::C));
        static ONLY_A_AND_C: [ChipRange<Chip>; 2] = [
            ChipRange { first: Chip::A, end: Some(Chip::B) },
            ChipRange { first: Chip::C, end: None },
        ];
        let set = Chipsets::Ranges(&ONLY_A_AND_C);
        assert!(set.contains(Chip::A) && !set.contains(Chip::B) && set.contains(Chip::C));
        assert!(Chipsets::<Chip>::All.contains(Chip::B));
    }

    #[test]
    fn field_specs_check_values_and_addresses_without_truncating() {
        let f = FieldSpec::rw("F", 4, 4);
        assert_eq!(f.try_set("R", 0xffff_ffff, 0x5), Ok(0xffff_ff5f));
        assert_eq!(
            f.try_set("R", 0, 0x10),
            Err(FieldOverflow { register: "R", field: "F", value: 0x10, width: 4 })
        );
        // An address field at bits 31:2 holding address bits 31:2.
        let a = FieldSpec::rw("A", 2, 30);
        assert_eq!(a.set_address("R", 0b11, BusAddress(0x8000_0000), 2), Ok(0x8000_0003));
        assert_eq!(a.get_address(0x8000_0003, 2), BusAddress(0x8000_0000));
        let misaligned = a.set_address("R", 0, BusAddress(0x1002), 2).unwrap_err();
        assert_eq!(misaligned.problem, AddressProblem::Misaligned { align: 4 });
        let far = a.set_address("R", 0, BusAddress(0x1_0000_0000), 2).unwrap_err();
        assert_eq!(far.problem, AddressProblem::OutOfReach { limit: 0x1_0000_0000 });
        assert_eq!(far.address, BusAddress(0x1_0000_0000), "the address comes back whole");
    }
}
