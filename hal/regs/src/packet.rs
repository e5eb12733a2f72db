//! Type-3 packets as data, field by field (the tables in `hal/regdb/packets/`): what the
//! generated `<family>::packets` modules are made of, the checks writers make on a body, and a
//! human-readable decode of a command stream for logs and test failures ([`decode`]).
//!
//! A packet's fields carry the document's dword number (the header is dword 1, so body index
//! `dword - 2`), their bits and their type, so one description drives the writers' `Body`
//! builders, the device models' unpacking and [`decode`]. No allocation anywhere.

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

/// The bus address held by the address fields `parts` of `body`.
pub fn get_address(parts: &[BodyField], body: &[u32]) -> BusAddress {
    let mut address = 0u64;
    for p in parts {
        if let FieldKind::Address { address_lsb } = p.kind {
            address |= u64::from(p.get(body)) << address_lsb;
        }
    }
    BusAddress(address)
}

/// Set the address fields `parts` of `body` to `address`: an error when `address` is not
/// aligned to the lowest bit the fields hold, or beyond the highest. Inlined: writers build
/// bodies per packet (a fence's address), and for a constant field list the loops fold.
#[inline]
pub fn put_address(
    packet: &'static str,
    parts: &[BodyField],
    body: &mut [u32],
    address: BusAddress,
) -> Result<(), AddressFieldError> {
    let (mut low, mut limit_bits) = (64u32, 0u32);
    for p in parts {
        if let FieldKind::Address { address_lsb } = p.kind {
            low = low.min(address_lsb);
            limit_bits = limit_bits.max(address_lsb + p.spec.width);
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
            if let FieldKind::Address { address_lsb } = p.kind {
                let i = p.index();
                body[i] = p.spec.set(body[i], (address.0 >> address_lsb) as u32);
            }
        }
        return Ok(());
    };
    Err(AddressFieldError { register: packet, field: parts[0].spec.name, address, problem })
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
            FieldKind::Uint => write!(f, " {}={v:#x}", field.name())?,
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
