//! nVidia pushbuffers as data (nvidia-hardware-envytools §2.8): the command words the DMA
//! pusher recognises ([`Command`]: a mask and value that select the form, and its fields), the
//! IB entry ([`Entry`]) and the methods the puller executes itself ([`Method`]), each field by
//! field ([`WordField`]). The generated `nvidia::packets` module holds one constant per
//! command, entry and method of `hal/regdb/packets/nvidia.toml`, typed by the family; writers
//! set fields through the constants ([`WordField::put`], [`put_address`]), device models and
//! logs read them back ([`WordField::get`], [`find_command`], [`decode_pushbuffer`]). No
//! allocation anywhere.

use core::fmt;
use core::marker::PhantomData;

use baregpu_hal::dma::BusAddress;
use baregpu_hal::register::{AddressFieldError, FieldOverflow, FieldSpec};

use crate::packet::{AddressPart, FieldKind};

pub use crate::packet::{get_address, put_address};

/// The two ways the DMA pusher reads a pushbuffer (§2.8.3): NV4-style DMA mode (jumps, calls,
/// returns) and IB mode (a ring of IB entries; no jumps).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum PusherMode {
    /// NV4-style DMA mode.
    Dma,
    /// IB mode.
    Ib,
}

/// The modes in which a command is recognised (the pseudocode's `!ib_enable` / `ib_enable`
/// conditions; any other command is `INVALID_CMD`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Modes {
    /// DMA mode only (jumps, calls, returns).
    Dma,
    /// IB mode only (long non-increasing methods).
    Ib,
    /// Both.
    Both,
}

impl Modes {
    /// Whether a pusher in `mode` accepts the command.
    pub const fn allows(self, mode: PusherMode) -> bool {
        matches!(
            (self, mode),
            (Modes::Both, _) | (Modes::Dma, PusherMode::Dma) | (Modes::Ib, PusherMode::Ib)
        )
    }
}

/// One field of a pushbuffer word group (a command's words, an IB entry, a method's parameter):
/// bits of word `word`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WordField {
    /// The word it is in (0: the first).
    pub word: usize,
    /// Name and bits within the word.
    pub spec: FieldSpec,
    /// What it holds.
    pub kind: FieldKind,
}

impl WordField {
    /// A field (used by the generated modules).
    pub const fn new(name: &'static str, word: usize, msb: u32, lsb: u32, kind: FieldKind) -> Self {
        WordField { word, spec: FieldSpec::rw(name, lsb, msb - lsb + 1), kind }
    }

    /// The field's name.
    pub const fn name(&self) -> &'static str {
        self.spec.name
    }

    /// The field's value in `words` (0 when they are shorter).
    pub const fn get(&self, words: &[u32]) -> u32 {
        if self.word < words.len() { self.spec.get(words[self.word]) } else { 0 }
    }

    /// Set the field in `words` (which must hold its word) to `value`, or say why it does not
    /// fit; `owner` names the command, entry or method in the error.
    #[inline]
    pub fn put(
        &self,
        owner: &'static str,
        words: &mut [u32],
        value: u32,
    ) -> Result<(), FieldOverflow> {
        words[self.word] = self.spec.try_set(owner, words[self.word], value)?;
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

impl AddressPart for WordField {
    fn index(&self) -> usize {
        self.word
    }
    fn spec(&self) -> FieldSpec {
        self.spec
    }
    fn kind(&self) -> FieldKind {
        self.kind
    }
}

/// One command form of family `F`'s pushbuffers (§2.8.3): the first word matches when
/// `word & mask == value`; `words` is how many words the command itself takes (the long
/// non-increasing form has its count in a second word); method data words follow.
pub struct Command<F> {
    /// Name (the pseudocode's comment, made UPPER_SNAKE).
    pub name: &'static str,
    /// The document section.
    pub section: &'static str,
    /// The chips that have it (envytools range notation).
    pub chips: &'static str,
    /// The modes that accept it.
    pub modes: Modes,
    /// The bits that select the form.
    pub mask: u32,
    /// Their value.
    pub value: u32,
    /// Words of the command before any data.
    pub words: usize,
    /// For a methods command: every data word goes to the same method (`dma_state.ni`);
    /// otherwise the method advances by 4 per word.
    pub non_increasing: bool,
    /// Its fields.
    pub fields: &'static [WordField],
    family: PhantomData<fn() -> F>,
}

impl<F> Command<F> {
    /// A table entry (used by the generated modules).
    #[allow(clippy::too_many_arguments)]
    pub const fn new(
        name: &'static str,
        section: &'static str,
        chips: &'static str,
        modes: Modes,
        mask: u32,
        value: u32,
        words: usize,
        non_increasing: bool,
        fields: &'static [WordField],
    ) -> Self {
        Command {
            name,
            section,
            chips,
            modes,
            mask,
            value,
            words,
            non_increasing,
            fields,
            family: PhantomData,
        }
    }

    /// Whether `word` is the first word of this command.
    pub const fn matches(&self, word: u32) -> bool {
        word & self.mask == self.value
    }

    /// The field named `name`.
    pub fn field(&self, name: &str) -> Option<&'static WordField> {
        self.fields.iter().find(|f| f.name() == name)
    }

    /// Whether the command submits methods (it has a method and a count).
    pub fn is_methods(&self) -> bool {
        self.field("METHOD").is_some() && self.field("COUNT").is_some()
    }
}

impl<F> Clone for Command<F> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<F> Copy for Command<F> {}
impl<F> PartialEq for Command<F> {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.mask == other.mask && self.value == other.value
    }
}
impl<F> Eq for Command<F> {}
impl<F> fmt::Debug for Command<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (& {:#010x} == {:#010x}, §{})",
            self.name, self.mask, self.value, self.section
        )
    }
}

/// The first command of `table` (in the document's matching order) that `word` starts and a
/// pusher in `mode` accepts (`None` for any mode); `None` when none does (`INVALID_CMD`).
pub fn find_command<F>(
    table: &[Command<F>],
    word: u32,
    mode: Option<PusherMode>,
) -> Option<&Command<F>> {
    table.iter().find(|c| c.matches(word) && mode.is_none_or(|m| c.modes.allows(m)))
}

/// A fixed-size structure of family `F`'s pushbuffer machinery (the 2-word IB entry, §2.8.3).
pub struct Entry<F> {
    /// Name.
    pub name: &'static str,
    /// The document section.
    pub section: &'static str,
    /// Size in 32-bit words.
    pub words: usize,
    /// Its fields.
    pub fields: &'static [WordField],
    family: PhantomData<fn() -> F>,
}

impl<F> Entry<F> {
    /// A table entry (used by the generated modules).
    pub const fn new(
        name: &'static str,
        section: &'static str,
        words: usize,
        fields: &'static [WordField],
    ) -> Self {
        Entry { name, section, words, fields, family: PhantomData }
    }
}

impl<F> Clone for Entry<F> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<F> Copy for Entry<F> {}
impl<F> fmt::Debug for Entry<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({} words, §{})", self.name, self.words, self.section)
    }
}

/// One method the puller executes itself (methods 0-0xfc, §2.8.4): its byte address, the
/// chips that have it, and its parameter's fields.
pub struct Method<F> {
    /// Name (the document's heading).
    pub name: &'static str,
    /// The method's byte address (its index is `method / 4`).
    pub method: u16,
    /// The document section.
    pub section: &'static str,
    /// The chips that have it (the method table's "Present on").
    pub chips: &'static str,
    /// The method table's description.
    pub description: &'static str,
    /// The parameter is an object handle looked up in RAMHT (`[O]`).
    pub object: bool,
    /// The parameter's fields.
    pub fields: &'static [WordField],
    family: PhantomData<fn() -> F>,
}

impl<F> Method<F> {
    /// A table entry (used by the generated modules).
    pub const fn new(
        name: &'static str,
        method: u16,
        section: &'static str,
        chips: &'static str,
        description: &'static str,
        object: bool,
        fields: &'static [WordField],
    ) -> Self {
        Method { name, method, section, chips, description, object, fields, family: PhantomData }
    }
}

impl<F> Clone for Method<F> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<F> Copy for Method<F> {}
impl<F> PartialEq for Method<F> {
    fn eq(&self, other: &Self) -> bool {
        self.method == other.method && self.name == other.name
    }
}
impl<F> Eq for Method<F> {}
impl<F> fmt::Debug for Method<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({:#06x}, §{})", self.name, self.method, self.section)
    }
}

/// The parameter word of `method` with one field set: `value` in `field` (an address part
/// of a method's parameter goes through [`put_address`] instead).
#[inline]
pub fn method_param<F>(
    method: &Method<F>,
    field: &WordField,
    value: u32,
) -> Result<u32, FieldOverflow> {
    let mut word = [0u32];
    field.put(method.name, &mut word, value)?;
    Ok(word[0])
}

/// The bits an address part of a method parameter holds: `address` checked against every part
/// of it (`parts`, up to four, e.g. the semaphore address's high and low methods), then the
/// word of part number `part`.
pub fn address_part(
    owner: &'static str,
    parts: &[WordField],
    part: usize,
    address: BusAddress,
) -> Result<u32, AddressFieldError> {
    // Each part is alone in its method's word: lay them out one word each to check the whole
    // address at once, then take this part's word (0 for a part that is not there).
    let Some(&first) = parts.first() else { return Ok(0) };
    let mut words = [0u32; 4];
    let mut laid = [first; 4];
    for (i, p) in parts.iter().enumerate().take(4) {
        laid[i] = WordField { word: i, ..*p };
    }
    put_address(owner, &laid[..parts.len().min(4)], &mut words, address)?;
    Ok(words.get(part).copied().unwrap_or(0))
}

/// A pushbuffer as named commands, methods and fields, one command per line (`Display`): the
/// first word of each command looked up in `commands`, each data word named by `methods` (a
/// method 0x100 and up belongs to the object bound to the subchannel and is printed by
/// address). Commands a mode restricts are marked. For logs and test failures; it never fails.
pub fn decode_pushbuffer<'a, F>(
    commands: &'a [Command<F>],
    methods: &'a [Method<F>],
    words: &'a [u32],
) -> DecodePushbuffer<'a, F> {
    DecodePushbuffer { commands, methods, words }
}

/// See [`decode_pushbuffer`].
pub struct DecodePushbuffer<'a, F> {
    commands: &'a [Command<F>],
    methods: &'a [Method<F>],
    words: &'a [u32],
}

fn write_fields(
    f: &mut fmt::Formatter<'_>,
    fields: &[WordField],
    words: &[u32],
    skip: impl Fn(&WordField) -> bool,
) -> fmt::Result {
    for field in fields.iter().filter(|x| !skip(x)) {
        let v = field.get(words);
        match field.kind {
            FieldKind::Bool => write!(f, " {}={}", field.name(), v != 0)?,
            FieldKind::Enum(_) => match field.value_name(v) {
                Some(name) => write!(f, " {}={name}", field.name())?,
                None => write!(f, " {}={v:#x}", field.name())?,
            },
            FieldKind::Address { address_lsb } => {
                write!(f, " {}={:#x}", field.name(), u64::from(v) << address_lsb)?
            }
            _ => write!(f, " {}={v:#x}", field.name())?,
        }
    }
    Ok(())
}

impl<F> fmt::Display for DecodePushbuffer<'_, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.words;
        let mut at = 0;
        while at < d.len() {
            write!(f, "{at:5}: {:08x} ", d[at])?;
            let Some(cmd) = find_command(self.commands, d[at], None) else {
                f.write_str("INVALID_CMD\n")?;
                at += 1;
                continue;
            };
            f.write_str(cmd.name)?;
            match cmd.modes {
                Modes::Dma => f.write_str(" [DMA mode]")?,
                Modes::Ib => f.write_str(" [IB mode]")?,
                Modes::Both => {}
            }
            let head = &d[at..(at + cmd.words).min(d.len())];
            if head.len() < cmd.words {
                f.write_str(" [stream ends inside the command]\n")?;
                return Ok(());
            }
            at += cmd.words;
            let (Some(method_f), Some(count_f)) = (cmd.field("METHOD"), cmd.field("COUNT")) else {
                write_fields(f, cmd.fields, head, |_| false)?;
                f.write_str("\n")?;
                continue;
            };
            write_fields(f, cmd.fields, head, |x| *x == *method_f || *x == *count_f)?;
            let count = count_f.get(head) as usize;
            let shift = match method_f.kind {
                FieldKind::Address { address_lsb } => address_lsb,
                _ => 0,
            };
            let mut method = method_f.get(head) << shift;
            let step = if cmd.non_increasing { 0 } else { 1 << shift };
            writeln!(f, " x{count}")?;
            for i in 0..count {
                let Some(&word) = d.get(at + i) else {
                    writeln!(f, "       [stream ends after {i} of {count} data words]")?;
                    return Ok(());
                };
                write!(f, "{:5}: {word:08x}   ", at + i)?;
                match self.methods.iter().find(|m| u32::from(m.method) == method) {
                    Some(m) => {
                        write!(f, "{}", m.name)?;
                        write_fields(f, m.fields, &[word], |_| false)?;
                    }
                    None => write!(f, "mthd {method:#06x} = {word:#x}")?,
                }
                f.write_str("\n")?;
                method = method.wrapping_add(step);
            }
            at += count;
        }
        Ok(())
    }
}

/// IB entries as named fields, one per line (`Display`). For logs and test failures.
pub fn decode_entries<'a, F>(entry: &'a Entry<F>, words: &'a [u32]) -> DecodeEntries<'a, F> {
    DecodeEntries { entry, words }
}

/// See [`decode_entries`].
pub struct DecodeEntries<'a, F> {
    entry: &'a Entry<F>,
    words: &'a [u32],
}

impl<F> fmt::Display for DecodeEntries<'_, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.words.chunks(self.entry.words).enumerate() {
            write!(f, "{i:5}: {}", self.entry.name)?;
            if e.len() < self.entry.words {
                f.write_str(" [ends inside the entry]\n")?;
                break;
            }
            let address = get_address(self.entry.fields, e);
            write!(f, " address={:#x}", address.0)?;
            write_fields(f, self.entry.fields, e, |x| matches!(x.kind, FieldKind::Address { .. }))?;
            f.write_str("\n")?;
        }
        Ok(())
    }
}
