//! Type-3 command-stream packets as data, field by field (the tables in
//! `hal/regdb/packets/`): the generated `<family>::packets` modules hold one [`Packet`]
//! constant per packet of the family's table, typed by the family, its body fields, and per
//! fixed-length packet a typed `Body`. Here are what those modules are made of, the checks
//! writers make on a body, and a human-readable decode of a command stream for logs and test
//! failures ([`decode`]).
//!
//! A packet's fields carry the document's dword number (the header is dword 1, so body index
//! `dword - 2`), their bits and their type, so one description drives the writers' `Body`
//! builders, the device models' unpacking and [`decode`]. No allocation anywhere.
//!
//! Byte streams (VideoCore IV control lists) are made of [`Record`]s instead: an id byte, then
//! [`RecordField`]s at byte and bit positions, little-endian; [`records`] walks a list and
//! [`decode_records`] prints it.

use core::fmt;
use core::marker::PhantomData;

use baregpu_hal::dma::BusAddress;
use baregpu_hal::register::{AddressFieldError, AddressProblem, FieldOverflow, FieldSpec};

/// Most body dwords a type-3 packet carries: COUNT (header bits 29:16) holds N - 1.
pub const MAX_BODY_DWORDS: usize = 0x4000;

/// One type-3 packet of family `F`: its name, `IT_OPCODE`, document section, chips, body
/// length and fields, as the document's tables (and the reviewed corrections) give them.
pub struct Packet<F> {
    /// Document name (spaces made underscores).
    pub name: &'static str,
    /// `IT_OPCODE` (header bits 15:8).
    pub opcode: u8,
    /// The document section describing it; empty for a packet the document omits (then
    /// `source` names where it comes from).
    pub section: &'static str,
    /// The chips the document says have it.
    pub chips: &'static str,
    /// The document's one-line description.
    pub description: &'static str,
    /// The body dword by dword, as the document's table gives it (without the header).
    pub body: &'static [BodyDword],
    /// Fewest body dwords.
    pub min_dwords: usize,
    /// Most body dwords ([`MAX_BODY_DWORDS`] for an open-ended body).
    pub max_dwords: usize,
    /// When not every length from `min_dwords` to `max_dwords` is allowed: the ones that are
    /// (`EVENT_WRITE`: 1 or 3).
    pub only_dwords: &'static [usize],
    /// The body's fields, by dword then from the high bit down.
    pub fields: &'static [BodyField],
    /// For a `SET_*` packet: the registers it writes.
    pub register_range: Option<RegisterRange>,
    family: PhantomData<fn() -> F>,
}

impl<F> Packet<F> {
    /// A table entry (used by the generated modules).
    pub const fn new(
        name: &'static str,
        opcode: u8,
        section: &'static str,
        chips: &'static str,
        description: &'static str,
        body: &'static [BodyDword],
    ) -> Self {
        Packet {
            name,
            opcode,
            section,
            chips,
            description,
            body,
            min_dwords: 1,
            max_dwords: MAX_BODY_DWORDS,
            only_dwords: &[],
            fields: &[],
            register_range: None,
            family: PhantomData,
        }
    }

    /// The entry with its body length and fields.
    pub const fn with_layout(
        mut self,
        min_dwords: usize,
        max_dwords: usize,
        fields: &'static [BodyField],
    ) -> Self {
        self.min_dwords = min_dwords;
        self.max_dwords = max_dwords;
        self.fields = fields;
        self
    }

    /// The entry with the only body lengths it takes.
    pub const fn with_only_dwords(mut self, only: &'static [usize]) -> Self {
        self.only_dwords = only;
        self
    }

    /// The entry with its register range (`SET_*` packets).
    pub const fn with_register_range(mut self, range: RegisterRange) -> Self {
        self.register_range = Some(range);
        self
    }

    /// Whether a body of `dwords` fits the packet's layout.
    pub const fn check_body(&self, dwords: usize) -> Result<(), BodyError> {
        let mut listed = self.only_dwords.is_empty();
        let mut i = 0;
        while i < self.only_dwords.len() {
            listed |= self.only_dwords[i] == dwords;
            i += 1;
        }
        if dwords < self.min_dwords || dwords > self.max_dwords || dwords == 0 || !listed {
            return Err(BodyError {
                packet: self.name,
                dwords,
                min: self.min_dwords,
                max: self.max_dwords,
            });
        }
        Ok(())
    }

    /// The body sizes the table allows, as bounds (a decoder applies what the table cannot say,
    /// such as a count held in a field, itself, within them); `only_dwords` is checked by
    /// [`Packet::check_body`].
    pub const fn body_len(&self) -> BodyLen {
        BodyLen {
            min: self.min_dwords as u32,
            max: if self.max_dwords >= MAX_BODY_DWORDS {
                None
            } else {
                Some(self.max_dwords as u32)
            },
        }
    }

    /// The field named `name`.
    pub fn field(&self, name: &str) -> Option<&'static BodyField> {
        self.fields.iter().find(|f| f.name() == name)
    }
}

impl<F> Clone for Packet<F> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<F> Copy for Packet<F> {}

impl<F> PartialEq for Packet<F> {
    fn eq(&self, other: &Self) -> bool {
        self.opcode == other.opcode && self.name == other.name
    }
}

impl<F> Eq for Packet<F> {}

impl<F> fmt::Debug for Packet<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({:#04x}, §{})", self.name, self.opcode, self.section)
    }
}

/// A packet body's size bounds in dwords ([`Packet::body_len`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyLen {
    /// Fewest body dwords.
    pub min: u32,
    /// Most body dwords (`None`: the table leaves the end open).
    pub max: Option<u32>,
}

impl BodyLen {
    /// Whether a body of `dwords` fits.
    pub const fn accepts(&self, dwords: u32) -> bool {
        dwords >= self.min
            && match self.max {
                Some(max) => dwords <= max,
                None => true,
            }
    }
}

/// One row of a packet's body table: the document's dword number ("2", "3 to N") and the
/// field(s) it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyDword {
    /// Dword number, as the document writes it (the header is dword 1).
    pub dword: &'static str,
    /// Field name(s).
    pub field: &'static str,
}

/// The registers a `SET_*` packet writes: byte offsets `start..end`; its first body dword is
/// the offset from `start` in dwords.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegisterRange {
    /// First register (byte offset).
    pub start: usize,
    /// End of the range (exclusive).
    pub end: usize,
    /// The offset dword's bits 31:16 "must be programmed to zero for legacy support".
    pub legacy_zero: bool,
}

impl RegisterRange {
    /// Whether the register at byte `offset` is in the range.
    pub const fn contains(&self, offset: usize) -> bool {
        offset >= self.start && offset < self.end
    }
}

/// What a body field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// A number.
    Uint,
    /// One bit.
    Bool,
    /// One of the listed values.
    Enum(&'static [EnumEntry]),
    /// Bits of a bus address, from address bit `address_lsb` up (with the packet's other parts
    /// of the same address: `ADDRESS_LO` 31:2 holds bits 31:2, `ADDRESS_HI` 7:0 bits 39:32).
    Address {
        /// The lowest address bit the field holds.
        address_lsb: u32,
    },
    /// Another reading of the named field's bits (a register index where the other holds a
    /// memory address).
    Alias(&'static str),
    /// A two's complement number (VideoCore IV viewport offsets, "sint16").
    Sint,
    /// An IEEE-754 single (VideoCore IV point size, clipper scales, "float32").
    Float,
}

/// A named value of an enumerated field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnumEntry {
    /// Name.
    pub name: &'static str,
    /// Value.
    pub value: u32,
}

/// One field of a packet body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyField {
    /// The document's dword number (the header is 1).
    pub dword: usize,
    /// Name and bits within the dword.
    pub spec: FieldSpec,
    /// What it holds.
    pub kind: FieldKind,
}

impl BodyField {
    /// A field (used by the generated modules).
    pub const fn new(
        name: &'static str,
        dword: usize,
        msb: u32,
        lsb: u32,
        kind: FieldKind,
    ) -> Self {
        BodyField { dword, spec: FieldSpec::rw(name, lsb, msb - lsb + 1), kind }
    }

    /// The field's name.
    pub const fn name(&self) -> &'static str {
        self.spec.name
    }

    /// Index of its dword in the body (without the header).
    pub const fn index(&self) -> usize {
        self.dword - 2
    }

    /// The field's value in `body` (0 when the body is shorter).
    pub const fn get(&self, body: &[u32]) -> u32 {
        if self.index() < body.len() { self.spec.get(body[self.index()]) } else { 0 }
    }

    /// The bits of the field's dword below it (an address's swap code or must-be-zero bits),
    /// in place; 0 when the body is shorter.
    pub const fn bits_below(&self, body: &[u32]) -> u32 {
        if self.index() < body.len() {
            body[self.index()] & ((1u32 << self.spec.lsb) - 1)
        } else {
            0
        }
    }

    /// Set the field in `body` (which must hold its dword) to `value`, or say why it does not
    /// fit; `packet` names the packet in the error.
    pub fn put(
        &self,
        packet: &'static str,
        body: &mut [u32],
        value: u32,
    ) -> Result<(), FieldOverflow> {
        let i = self.index();
        body[i] = self.spec.try_set(packet, body[i], value)?;
        Ok(())
    }

    /// The name of `value` when the field is an enum that lists it.
    pub fn value_name(&self, value: u32) -> Option<&'static str> {
        match self.kind {
            FieldKind::Enum(values) => values.iter().find(|v| v.value == value).map(|v| v.name),
            _ => None,
        }
    }
}

/// A field that may hold part of a bus address: a packet body's ([`BodyField`]) or a
/// pushbuffer word group's (`pushbuffer::WordField`). [`get_address`] and [`put_address`] work
/// on either.
pub trait AddressPart {
    /// Index of the field's word in the words it is read from.
    fn index(&self) -> usize;
    /// Its name and bits.
    fn spec(&self) -> FieldSpec;
    /// What it holds.
    fn kind(&self) -> FieldKind;
}

impl AddressPart for BodyField {
    fn index(&self) -> usize {
        BodyField::index(self)
    }
    fn spec(&self) -> FieldSpec {
        self.spec
    }
    fn kind(&self) -> FieldKind {
        self.kind
    }
}

/// The bus address held by the address fields `parts` of `words` (0 for parts past their end).
pub fn get_address<P: AddressPart>(parts: &[P], words: &[u32]) -> BusAddress {
    let mut address = 0u64;
    for p in parts {
        if let (FieldKind::Address { address_lsb }, Some(&w)) = (p.kind(), words.get(p.index())) {
            address |= u64::from(p.spec().get(w)) << address_lsb;
        }
    }
    BusAddress(address)
}

/// Set the address fields `parts` of `body` to `address`: an error when `address` is not
/// aligned to the lowest bit the fields hold, or beyond the highest. Inlined: writers build
/// bodies per packet (a fence's address), and for a constant field list the loops fold.
#[inline]
pub fn put_address<P: AddressPart>(
    packet: &'static str,
    parts: &[P],
    body: &mut [u32],
    address: BusAddress,
) -> Result<(), AddressFieldError> {
    let (mut low, mut limit_bits) = (64u32, 0u32);
    for p in parts {
        if let FieldKind::Address { address_lsb } = p.kind() {
            low = low.min(address_lsb);
            limit_bits = limit_bits.max(address_lsb + p.spec().width);
        }
    }
    let align = 1u64 << low;
    let limit = 1u64 << limit_bits;
    let problem = if address.0 & (align - 1) != 0 {
        AddressProblem::Misaligned { align }
    } else if address.0 >= limit {
        AddressProblem::OutOfReach { limit }
    } else {
        for p in parts {
            if let FieldKind::Address { address_lsb } = p.kind() {
                let i = p.index();
                body[i] = p.spec().set(body[i], (address.0 >> address_lsb) as u32);
            }
        }
        return Ok(());
    };
    Err(AddressFieldError { register: packet, field: parts[0].spec().name, address, problem })
}

/// A body whose length does not fit its packet's layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct BodyError {
    /// The packet.
    pub packet: &'static str,
    /// Body dwords given.
    pub dwords: usize,
    /// Fewest the packet takes.
    pub min: usize,
    /// Most the packet takes.
    pub max: usize,
}

impl fmt::Display for BodyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.min == self.max {
            write!(f, "{} takes a {}-dword body, not {}", self.packet, self.min, self.dwords)
        } else {
            write!(
                f,
                "{} takes a body of {} to {} dwords, not {}",
                self.packet, self.min, self.max, self.dwords
            )
        }
    }
}

impl core::error::Error for BodyError {}

/// A command stream as named packets and fields, one packet per line (`Display`): type-0
/// register writes, type-2 fillers, and type-3 packets looked up in `table` with every field
/// of their body. For logs and test failures; it never fails (an unknown opcode or a stream
/// cut short is printed as such).
pub fn decode<'a, F>(table: &'a [Packet<F>], dwords: &'a [u32]) -> Decode<'a, F> {
    Decode { table, dwords }
}

/// See [`decode`].
pub struct Decode<'a, F> {
    table: &'a [Packet<F>],
    dwords: &'a [u32],
}

impl<F> fmt::Display for Decode<'_, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.dwords;
        let mut at = 0;
        while at < d.len() {
            let h = d[at];
            let count = ((h >> 16) & 0x3FFF) as usize + 1;
            write!(f, "{at:5}: {h:08x} ")?;
            let body_at = at + 1;
            let len = match h >> 30 {
                0 => {
                    let reg = (h & 0x7FFF) << 2;
                    let one = if h & (1 << 15) != 0 { " ONE_REG_WR" } else { "" };
                    write!(f, "TYPE0 reg {reg:#06x}{one} x{count}:")?;
                    for v in d.iter().skip(body_at).take(count) {
                        write!(f, " {v:#x}")?;
                    }
                    count
                }
                1 => {
                    write!(
                        f,
                        "TYPE1 reg {:#06x}, {:#06x}:",
                        (h & 0x7FF) << 2,
                        ((h >> 11) & 0x7FF) << 2
                    )?;
                    for v in d.iter().skip(body_at).take(2) {
                        write!(f, " {v:#x}")?;
                    }
                    2
                }
                2 => {
                    f.write_str("TYPE2 filler")?;
                    0
                }
                _ => {
                    let opcode = (h >> 8) as u8;
                    let end = (body_at + count).min(d.len());
                    let body = &d[body_at.min(d.len())..end];
                    match self.table.iter().find(|p| p.opcode == opcode) {
                        None => write!(f, "TYPE3 unknown opcode {opcode:#04x} ({count} dwords)")?,
                        Some(p) => {
                            write!(f, "{} ({count} dwords)", p.name)?;
                            if h & 2 != 0 {
                                f.write_str(" compute")?;
                            }
                            if h & 1 != 0 {
                                f.write_str(" predicated")?;
                            }
                            if p.check_body(count).is_err() {
                                f.write_str(" [body does not fit the layout]")?;
                            }
                            write_fields(f, p, body)?;
                        }
                    }
                    count
                }
            };
            if body_at + len > d.len() {
                f.write_str(" [stream ends inside the packet]")?;
            }
            f.write_str("\n")?;
            at = body_at + len;
        }
        Ok(())
    }
}

fn write_fields<F>(f: &mut fmt::Formatter<'_>, p: &Packet<F>, body: &[u32]) -> fmt::Result {
    if p.fields.is_empty() {
        for v in body {
            write!(f, " {v:#x}")?;
        }
        return Ok(());
    }
    for field in p.fields.iter().filter(|x| x.index() < body.len()) {
        let v = field.get(body);
        match field.kind {
            FieldKind::Address { .. } | FieldKind::Alias(_) => {
                write!(f, " {}={v:#x}", field.name())?
            }
            FieldKind::Bool => write!(f, " {}={}", field.name(), v != 0)?,
            FieldKind::Enum(_) => match field.value_name(v) {
                Some(name) => write!(f, " {}={name}", field.name())?,
                None => write!(f, " {}={v:#x}", field.name())?,
            },
            FieldKind::Uint | FieldKind::Sint | FieldKind::Float => {
                write!(f, " {}={v:#x}", field.name())?
            }
        }
    }
    // Dwords past the described ones (SET_* data, NOP blocks).
    let described = p.fields.iter().map(|x| x.index() + 1).max().unwrap_or(0);
    if body.len() > described {
        f.write_str(" data:")?;
        for v in &body[described..] {
            write!(f, " {v:#x}")?;
        }
    }
    Ok(())
}

/// Which control list may hold a record (VideoCore IV §9: Table 38 suffixes a record only a
/// binning list may hold with "(B)", one only a rendering list may hold with "(R)").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Lists {
    /// Binning lists only.
    Binning,
    /// Rendering lists (and the tile lists they branch to) only.
    Rendering,
    /// Either.
    Both,
}

/// The kind of one control list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum ListKind {
    /// A binning list (control list executor thread 0).
    Binning,
    /// A rendering list (thread 1).
    Rendering,
}

impl Lists {
    /// Whether a list of `kind` may hold the record.
    pub const fn allows(self, kind: ListKind) -> bool {
        matches!(
            (self, kind),
            (Lists::Both, _)
                | (Lists::Binning, ListKind::Binning)
                | (Lists::Rendering, ListKind::Rendering)
        )
    }
}

/// One control record of family `F`'s byte stream: its id byte, size, which lists may hold it
/// and its fields, as the document's record table (and the reviewed corrections) give them.
pub struct Record<F> {
    /// Name (the document's, without its remarks).
    pub name: &'static str,
    /// The id byte.
    pub opcode: u8,
    /// The document section with its record table.
    pub section: &'static str,
    /// Which lists may hold it.
    pub lists: Lists,
    /// Size in bytes with the id byte; the fixed part of an open-ended record.
    pub bytes: usize,
    /// An escape-terminated list of any length follows the fixed part (its end is found only
    /// by parsing the list, so [`records`] stops there).
    pub open_ended: bool,
    /// Its fields, by byte then from the high bit down.
    pub fields: &'static [RecordField],
    family: PhantomData<fn() -> F>,
}

impl<F> Record<F> {
    /// A table entry (used by the generated modules).
    pub const fn new(
        name: &'static str,
        opcode: u8,
        section: &'static str,
        lists: Lists,
        bytes: usize,
        open_ended: bool,
        fields: &'static [RecordField],
    ) -> Self {
        Record { name, opcode, section, lists, bytes, open_ended, fields, family: PhantomData }
    }

    /// Whether `bytes` is exactly one whole fixed-size record of this kind.
    pub fn check(&self, bytes: &[u8]) -> Result<(), RecordError> {
        if bytes.len() != self.bytes || self.open_ended {
            return Err(RecordError::Length {
                record: self.name,
                bytes: bytes.len(),
                expected: self.bytes,
            });
        }
        if bytes[0] != self.opcode {
            return Err(RecordError::Id { record: self.name, found: bytes[0] });
        }
        Ok(())
    }

    /// The field named `name`.
    pub fn field(&self, name: &str) -> Option<&'static RecordField> {
        self.fields.iter().find(|f| f.name == name)
    }
}

impl<F> Clone for Record<F> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<F> Copy for Record<F> {}

impl<F> PartialEq for Record<F> {
    fn eq(&self, other: &Self) -> bool {
        self.opcode == other.opcode && self.name == other.name
    }
}

impl<F> Eq for Record<F> {}

impl<F> fmt::Debug for Record<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (id {}, {} bytes)", self.name, self.opcode, self.bytes)
    }
}

/// One field of a control record: `width` bits from bit `lsb` of byte `byte` (the id byte is
/// 0) up, little-endian, so a field may span several bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordField {
    /// Name.
    pub name: &'static str,
    /// The byte it starts in.
    pub byte: usize,
    /// Its lowest bit within that byte.
    pub lsb: u32,
    /// Width in bits (up to 64).
    pub width: u32,
    /// What it holds.
    pub kind: FieldKind,
}

impl RecordField {
    /// A field (used by the generated modules).
    pub const fn new(name: &'static str, byte: usize, msb: u32, lsb: u32, kind: FieldKind) -> Self {
        RecordField { name, byte, lsb, width: msb - lsb + 1, kind }
    }

    /// The bytes the field touches.
    const fn span(&self) -> usize {
        (self.lsb + self.width).div_ceil(8) as usize
    }

    const fn mask(&self) -> u64 {
        if self.width >= 64 { u64::MAX } else { (1u64 << self.width) - 1 }
    }

    /// The field's value in `record` (0 for bytes past its end).
    pub fn get(&self, record: &[u8]) -> u64 {
        let mut window = 0u128;
        for i in 0..self.span() {
            let b = record.get(self.byte + i).copied().unwrap_or(0);
            window |= u128::from(b) << (8 * i);
        }
        (window >> self.lsb) as u64 & self.mask()
    }

    /// The field's value sign-extended from its width.
    pub fn get_signed(&self, record: &[u8]) -> i64 {
        let shift = 64 - self.width;
        ((self.get(record) << shift) as i64) >> shift
    }

    /// Set the field in `record` (which must hold it) to the low `width` bits of `value`.
    pub fn set(&self, record: &mut [u8], value: u64) {
        let value = u128::from(value & self.mask()) << self.lsb;
        let mask = u128::from(self.mask()) << self.lsb;
        for i in 0..self.span() {
            let byte = &mut record[self.byte + i];
            let m = (mask >> (8 * i)) as u8;
            *byte = (*byte & !m) | ((value >> (8 * i)) as u8 & m);
        }
    }

    /// Set the field, or say why `value` does not fit; `record_name` names the record in the
    /// error (a value past `u32` is reported as `u32::MAX`).
    pub fn try_set(
        &self,
        record_name: &'static str,
        record: &mut [u8],
        value: u64,
    ) -> Result<(), FieldOverflow> {
        if value & !self.mask() != 0 {
            return Err(self.overflow(record_name, value.min(u64::from(u32::MAX)) as u32));
        }
        self.set(record, value);
        Ok(())
    }

    /// Set a signed field, or say why `value` does not fit its width.
    pub fn try_set_signed(
        &self,
        record_name: &'static str,
        record: &mut [u8],
        value: i64,
    ) -> Result<(), FieldOverflow> {
        let half = 1i64 << (self.width - 1);
        if self.width < 64 && !(-half..half).contains(&value) {
            return Err(self.overflow(record_name, value as u32));
        }
        self.set(record, value as u64);
        Ok(())
    }

    fn overflow(&self, record_name: &'static str, value: u32) -> FieldOverflow {
        FieldOverflow::new(record_name, self.name, value, self.width)
    }

    /// The bus address an address field holds (its bits shifted up to the lowest address bit
    /// they hold); the raw value for another field.
    pub fn address(&self, record: &[u8]) -> BusAddress {
        let shift = match self.kind {
            FieldKind::Address { address_lsb } => address_lsb,
            _ => 0,
        };
        BusAddress(self.get(record) << shift)
    }

    /// Set an address field to `address`: an error when it is not aligned to the lowest bit
    /// the field holds, or beyond the highest.
    pub fn put_address(
        &self,
        record_name: &'static str,
        record: &mut [u8],
        address: BusAddress,
    ) -> Result<(), AddressFieldError> {
        let shift = match self.kind {
            FieldKind::Address { address_lsb } => address_lsb,
            _ => 0,
        };
        let align = 1u64 << shift;
        let limit_bits = shift + self.width;
        let problem = if address.0 & (align - 1) != 0 {
            AddressProblem::Misaligned { align }
        } else if limit_bits < 64 && address.0 >> limit_bits != 0 {
            AddressProblem::OutOfReach { limit: 1u64 << limit_bits }
        } else {
            self.set(record, address.0 >> shift);
            return Ok(());
        };
        Err(AddressFieldError { register: record_name, field: self.name, address, problem })
    }

    /// Whether the field holds a bus address (the fields a list writer relocates).
    pub const fn is_address(&self) -> bool {
        matches!(self.kind, FieldKind::Address { .. })
    }

    /// The name of `value` when the field is an enum that lists it.
    pub fn value_name(&self, value: u64) -> Option<&'static str> {
        match self.kind {
            FieldKind::Enum(values) => {
                values.iter().find(|v| u64::from(v.value) == value).map(|v| v.name)
            }
            _ => None,
        }
    }
}

/// Bytes that are not the record they were taken for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum RecordError {
    /// Not the record's size (or an open-ended record, which has no one size).
    Length {
        /// The record.
        record: &'static str,
        /// Bytes given.
        bytes: usize,
        /// Its size.
        expected: usize,
    },
    /// The first byte is another record's id.
    Id {
        /// The record.
        record: &'static str,
        /// The id byte found.
        found: u8,
    },
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecordError::Length { record, bytes, expected } => {
                write!(f, "{record} is {expected} bytes, not {bytes}")
            }
            RecordError::Id { record, found } => {
                write!(f, "id byte {found} is not {record}'s")
            }
        }
    }
}

impl core::error::Error for RecordError {}

/// One step of [`records`]: a whole record, or where the walk had to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Walked<'a, F> {
    /// A whole fixed-size record at byte `at`.
    Record {
        /// Offset in the list.
        at: usize,
        /// Its table entry.
        record: &'a Record<F>,
        /// Its bytes, id first.
        bytes: &'a [u8],
    },
    /// An open-ended record at `at` (its fixed part in `bytes`): the escape-terminated list
    /// after it is not walked, so the walk ends here.
    OpenEnded {
        /// Offset in the list.
        at: usize,
        /// Its table entry.
        record: &'a Record<F>,
        /// Its fixed part (shorter when the list ends inside it).
        bytes: &'a [u8],
    },
    /// An id the table does not have: the walk ends here.
    Unknown {
        /// Offset in the list.
        at: usize,
        /// The id byte.
        id: u8,
    },
    /// The list ends inside a record: the walk ends here.
    Truncated {
        /// Offset in the list.
        at: usize,
        /// Its table entry.
        record: &'a Record<F>,
        /// The bytes there are.
        bytes: &'a [u8],
    },
}

/// The records of the control list `bytes`, looked up in `table`, in order; never fails (an
/// unknown id, an open-ended record or a list cut short ends the walk with that step).
pub fn records<'a, F>(table: &'a [Record<F>], bytes: &'a [u8]) -> Records<'a, F> {
    Records { table, bytes, at: 0 }
}

/// See [`records`].
pub struct Records<'a, F> {
    table: &'a [Record<F>],
    bytes: &'a [u8],
    at: usize,
}

impl<'a, F> Iterator for Records<'a, F> {
    type Item = Walked<'a, F>;

    fn next(&mut self) -> Option<Self::Item> {
        let at = self.at;
        let id = *self.bytes.get(at)?;
        let rest = &self.bytes[at..];
        self.at = self.bytes.len(); // every step but a whole record ends the walk
        let Some(record) = self.table.iter().find(|r| r.opcode == id) else {
            return Some(Walked::Unknown { at, id });
        };
        if rest.len() < record.bytes {
            return Some(Walked::Truncated { at, record, bytes: rest });
        }
        let bytes = &rest[..record.bytes];
        if record.open_ended {
            return Some(Walked::OpenEnded { at, record, bytes });
        }
        self.at = at + record.bytes;
        Some(Walked::Record { at, record, bytes })
    }
}

/// A control list as named records and fields, one record per line (`Display`), from
/// `table`. For logs and test failures; it never fails.
pub fn decode_records<'a, F>(table: &'a [Record<F>], bytes: &'a [u8]) -> DecodeRecords<'a, F> {
    DecodeRecords { table, bytes }
}

/// See [`decode_records`].
pub struct DecodeRecords<'a, F> {
    table: &'a [Record<F>],
    bytes: &'a [u8],
}

impl<F> fmt::Display for DecodeRecords<'_, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for step in records(self.table, self.bytes) {
            match step {
                Walked::Record { at, record, bytes } => {
                    write!(f, "{at:5}: {}", record.name)?;
                    write_record_fields(f, record, bytes)?;
                }
                Walked::OpenEnded { at, record, bytes } => {
                    write!(f, "{at:5}: {}", record.name)?;
                    write_record_fields(f, record, bytes)?;
                    f.write_str(" [escape-terminated list follows: not decoded]")?;
                }
                Walked::Unknown { at, id } => write!(f, "{at:5}: unknown id {id}")?,
                Walked::Truncated { at, record, .. } => {
                    write!(f, "{at:5}: {} [list ends inside the record]", record.name)?
                }
            }
            f.write_str("\n")?;
        }
        Ok(())
    }
}

fn write_record_fields<F>(f: &mut fmt::Formatter<'_>, r: &Record<F>, bytes: &[u8]) -> fmt::Result {
    for field in r.fields {
        let v = field.get(bytes);
        match field.kind {
            FieldKind::Bool => write!(f, " {}={}", field.name, v != 0)?,
            FieldKind::Enum(_) => match field.value_name(v) {
                Some(name) => write!(f, " {}={name}", field.name)?,
                None => write!(f, " {}={v:#x}", field.name)?,
            },
            FieldKind::Sint => write!(f, " {}={}", field.name, field.get_signed(bytes))?,
            FieldKind::Float => write!(f, " {}={}", field.name, f32::from_bits(v as u32))?,
            FieldKind::Address { .. } => {
                write!(f, " {}={:#x}", field.name, field.address(bytes).0)?
            }
            FieldKind::Uint | FieldKind::Alias(_) => write!(f, " {}={v:#x}", field.name)?,
        }
    }
    Ok(())
}
