//! nVidia pushbuffers (nvidia-hardware-envytools §2.8), over the `u32` stream unit beside PM4:
//! the [`PushbufferWriter`] that writes method commands and the puller's own methods into any
//! [`CommandSink`], the pushbuffer ring of NV4-style DMA mode ([`Pushbuffer`], doorbell
//! `DMA_PUT`, read pointer `DMA_GET`, wrapped by a jump before the end) and the IB-mode
//! channel ([`IbChannel`]: a ring of IB entries pointing at segments of a main pushbuffer or
//! at external ones, back-pressure on `IB_GET`, one `IB_PUT` write per batch). Both rings are
//! the family-agnostic [`CommandRing`]; their doorbells and read pointers are registers of the
//! channel's USER block (`bar0.at_index::<UserG80>(channel)?`).
//!
//! Every word is encoded from the document-checked tables (`baregpu_regs::nvidia::packets`):
//! headers by the fields of `INCREASING_METHODS`/`NON_INCREASING_METHODS`/
//! `LONG_NON_INCREASING_METHODS`, jumps by `JUMP`/`CALL`/`RETURN`, entries by `IB_ENTRY`, the
//! puller methods by `REF_CNT`, `SEMAPHORE_*`, `OBJECT`, `DMA_SEMAPHORE`. Each command is one
//! reservation: written whole or not at all.
//!
//! ```
//! use baregpu_ring::nvidia::{PushbufferWriter, PushbufferError};
//! use baregpu_ring::stream::SliceSink;
//! use baregpu_regs::pushbuffer::PusherMode;
//!
//! let mut words = [0u32; 8];
//! let mut w = PushbufferWriter::new(SliceSink::new(&mut words), PusherMode::Ib);
//! w.ref_cnt(7)?;                        // REF_CNT (0x50) = 7, §2.8.4
//! w.methods(1, 0x104, &[0xa, 0xb])?;    // two engine methods on subchannel 1
//! assert_eq!(w.sink().written(), [0x0004_0050, 7, 0x0008_2104, 0xa, 0xb]);
//! # Ok::<(), PushbufferError>(())
//! ```
//!
//! # Decisions where the document is silent
//!
//! - **The DMA-mode pushbuffer's DMA object starts at the ring**: `DMA_PUT`, `DMA_GET` and
//!   jump targets are byte offsets in the pushbuffer DMA object (§2.8.3), and the ring's
//!   doorbell is a function of its write pointer alone, so the object a driver binds for a
//!   DMA-mode channel begins at the ring (the jump back to the start targets offset 0).
//! - **IB entries hold bus addresses**: the IB ring and the segments are read "through the
//!   dma_pushbuffer DMA object", which an IB-mode channel binds linear from bus address 0
//!   (a VM-less setup), so entry addresses are bus addresses.
//! - **IB ring sizes**: "The size has to be a power of two and can be in range ???" (§2.8.3):
//!   this crate takes 2 to 2^16 entries.
//! - **The main pushbuffer's read pointer is `DMA_MGET`**, which follows the main pushbuffer
//!   only ("without being affected by IB entries pulling data from other pushbuffers",
//!   §2.8.3); its low 32 bits are read, so the main pushbuffer must not cross a 4 GiB
//!   boundary.
//! - **Filler**: an increasing-methods header with a count of 0 submits nothing (in the
//!   pseudocode `mcnt = 0`, so the next word starts a command); it pads DMA-mode rings.
//! - **Increase-once methods** exist only in the GF100 command format (§2.8.3 "GF100
//!   commands"), not on Tesla, so the writer has none; neither has it the GF100-only `NOP`
//!   method (0x0008).

use core::borrow::Borrow;
use core::fmt;
use core::time::Duration;

use baregpu_hal::RegisterIoExt;
use baregpu_hal::dma::{BusAddress, DmaRegion};
use baregpu_hal::io::Accepts;
use baregpu_hal::register::{AddressFieldError, FieldOverflow};
use baregpu_hal::time::{Clock, TimedOut, poll_until};
use baregpu_regs::nvidia::packets::{self as pb, ib_entry};
use baregpu_regs::nvidia::pfifo_user::{self, DMA_GET, DMA_MGET, DMA_PUT, IB_GET, IB_PUT};
use baregpu_regs::packet::FieldKind;
use baregpu_regs::pushbuffer::{Command, Modes, PusherMode, WordField, address_part, put_address};

use crate::ring::{
    BadReadPointer, CommandProcessorRing, CommandRing, ReadPointer, RegisterRptr,
    RegisterRptrFamily, RingConfigError,
};
use crate::stream::{CommandSink, NoSpace};

pub use baregpu_regs::nvidia::Family;
pub use baregpu_regs::nvidia::packets::semaphore_trigger::Operation;

/// Most data words of an increasing or non-increasing methods command (`COUNT`, §2.8.3).
pub const MAX_METHOD_COUNT: usize = max_of(&pb::increasing_methods::COUNT);
/// Most data words of a long non-increasing methods command (its second word, bits 23:0).
pub const MAX_LONG_COUNT: usize = max_of(&pb::long_non_increasing_methods::COUNT);
/// Subchannels of a channel (`SUBCHANNEL`, 3 bits).
pub const SUBCHANNELS: u8 = 1 << pb::increasing_methods::SUBCHANNEL.spec.width;
/// Most words of one IB entry's segment (`SIZE`, §2.8.3).
pub const MAX_SEGMENT_WORDS: usize = max_of(&ib_entry::SIZE);

const fn max_of(field: &WordField) -> usize {
    (1usize << field.spec.width) - 1
}

/// A methods command's header, laid out once at compile time from its table entry (the
/// command's value and its `METHOD`, `SUBCHANNEL` and `COUNT` fields), so that encoding a
/// header is a few shifts and ORs instead of a walk through the fields per word. The tables
/// stay the single description: the templates are built from their constants, and a test
/// checks every header a template makes against the table-driven encoding.
#[derive(Debug, Clone, Copy)]
struct HeaderTemplate {
    /// The command (its name, modes and fields for the table-driven path).
    cmd: &'static Command<Family>,
    value: u32,
    ib_only: bool,
    method_lsb: u32,
    method_limit: u32,
    subchannel_lsb: u32,
    subchannel_limit: u32,
    count_word: usize,
    count_lsb: u32,
    count_max: usize,
}

impl HeaderTemplate {
    const fn new(
        cmd: &'static Command<Family>,
        method: WordField,
        subchannel: WordField,
        count: WordField,
    ) -> Self {
        // The fast path puts METHOD and SUBCHANNEL in word 0, METHOD as a byte address whose
        // two low bits are not stored, and only IB-only or any-mode commands.
        assert!(method.word == 0 && subchannel.word == 0 && count.word < 2);
        assert!(matches!(method.kind, FieldKind::Address { address_lsb: 2 }));
        assert!(matches!(cmd.modes, Modes::Both | Modes::Ib));
        HeaderTemplate {
            cmd,
            value: cmd.value,
            ib_only: matches!(cmd.modes, Modes::Ib),
            method_lsb: method.spec.lsb,
            method_limit: 1 << method.spec.width,
            subchannel_lsb: subchannel.spec.lsb,
            subchannel_limit: 1 << subchannel.spec.width,
            count_word: count.word,
            count_lsb: count.spec.lsb,
            count_max: max_of(&count),
        }
    }

    /// The header words for a pusher in `mode`, or `None` when the mode or a value does not
    /// fit (the caller then takes the table-driven path for the precise error).
    #[inline(always)]
    fn encode(
        &self,
        mode: PusherMode,
        subchannel: u8,
        method: u16,
        count: usize,
    ) -> Option<[u32; 2]> {
        let (m, sc) = (u32::from(method), u32::from(subchannel));
        if (self.ib_only && mode != PusherMode::Ib)
            || m & 3 != 0
            || m >> 2 >= self.method_limit
            || sc >= self.subchannel_limit
            || count.wrapping_sub(1) >= self.count_max
        {
            return None;
        }
        let mut words = [self.value | (m >> 2) << self.method_lsb | sc << self.subchannel_lsb, 0];
        words[self.count_word] |= (count as u32) << self.count_lsb;
        Some(words)
    }
}

const INCREASING: HeaderTemplate = {
    use pb::increasing_methods as f;
    HeaderTemplate::new(&pb::INCREASING_METHODS, f::METHOD, f::SUBCHANNEL, f::COUNT)
};
const NON_INCREASING: HeaderTemplate = {
    use pb::non_increasing_methods as f;
    HeaderTemplate::new(&pb::NON_INCREASING_METHODS, f::METHOD, f::SUBCHANNEL, f::COUNT)
};
const LONG_NON_INCREASING: HeaderTemplate = {
    use pb::long_non_increasing_methods as f;
    HeaderTemplate::new(&pb::LONG_NON_INCREASING_METHODS, f::METHOD, f::SUBCHANNEL, f::COUNT)
};

// The semaphore methods are consecutive, so one increasing header sets all four (§2.8.4).
const _: () = assert!(pb::SEMAPHORE_ADDRESS_LOW.method == pb::SEMAPHORE_ADDRESS_HIGH.method + 4);
const _: () = assert!(pb::SEMAPHORE_SEQUENCE.method == pb::SEMAPHORE_ADDRESS_HIGH.method + 8);
const _: () = assert!(pb::SEMAPHORE_TRIGGER.method == pb::SEMAPHORE_ADDRESS_HIGH.method + 12);

/// Why a command was not written. Nothing was written in every case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum PushbufferError {
    /// A methods command with no data, or more than its count field holds.
    BadCount {
        /// Data words given.
        count: usize,
        /// Most the command carries ([`MAX_METHOD_COUNT`], [`MAX_LONG_COUNT`]).
        max: usize,
    },
    /// A subchannel past 7.
    BadSubchannel {
        /// The subchannel given.
        subchannel: u8,
    },
    /// A method the header cannot hold (not 4-byte aligned, or past 0x1ffc).
    BadMethod(AddressFieldError),
    /// A jump, call or semaphore address the command cannot hold.
    Address(AddressFieldError),
    /// A command the pusher does not accept in the writer's mode (a jump in IB mode, the long
    /// form in DMA mode: `INVALID_CMD`).
    WrongMode {
        /// The command.
        command: &'static str,
        /// The writer's mode.
        mode: PusherMode,
    },
    /// A field value that does not fit.
    Field(FieldOverflow),
    /// The sink has no room for the whole command.
    NoSpace(NoSpace),
}

impl fmt::Display for PushbufferError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PushbufferError::BadCount { count, max } => {
                write!(f, "{count} data words (a methods command takes 1..={max})")
            }
            PushbufferError::BadSubchannel { subchannel } => {
                write!(f, "subchannel {subchannel} (a channel has {SUBCHANNELS})")
            }
            PushbufferError::BadMethod(_) => f.write_str("the header cannot hold the method"),
            PushbufferError::Address(_) => f.write_str("the command cannot hold the address"),
            PushbufferError::WrongMode { command, mode } => {
                write!(f, "{command} is not a command of {mode:?} mode")
            }
            PushbufferError::Field(_) => f.write_str("a field value does not fit"),
            PushbufferError::NoSpace(_) => f.write_str("no room in the pushbuffer for the command"),
        }
    }
}

impl core::error::Error for PushbufferError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            PushbufferError::BadMethod(e) | PushbufferError::Address(e) => Some(e),
            PushbufferError::Field(e) => Some(e),
            PushbufferError::NoSpace(e) => Some(e),
            _ => None,
        }
    }
}

impl From<NoSpace> for PushbufferError {
    fn from(e: NoSpace) -> Self {
        PushbufferError::NoSpace(e)
    }
}

impl From<FieldOverflow> for PushbufferError {
    fn from(e: FieldOverflow) -> Self {
        PushbufferError::Field(e)
    }
}

/// Writes pushbuffer commands into a sink (a [`CommandRing`] of [`Pushbuffer`], the main
/// pushbuffer of an [`IbChannel`], a [`SliceSink`](crate::stream::SliceSink)), for a pusher in
/// `mode`.
#[derive(Debug)]
pub struct PushbufferWriter<S> {
    sink: S,
    mode: PusherMode,
}

impl<S: CommandSink<u32>> PushbufferWriter<S> {
    /// A writer of commands for a pusher in `mode` into `sink`.
    pub fn new(sink: S, mode: PusherMode) -> Self {
        PushbufferWriter { sink, mode }
    }

    /// The sink.
    pub fn sink(&self) -> &S {
        &self.sink
    }

    /// The sink back.
    pub fn into_sink(self) -> S {
        self.sink
    }

    /// The pusher mode the writer writes for.
    pub fn mode(&self) -> PusherMode {
        self.mode
    }

    fn check_mode(&self, cmd: &Command<Family>) -> Result<(), PushbufferError> {
        if cmd.modes.allows(self.mode) {
            Ok(())
        } else {
            Err(PushbufferError::WrongMode { command: cmd.name, mode: self.mode })
        }
    }

    /// The words of a methods command (one, or two for the long form) for `count` data words
    /// to `method` on `subchannel`: from the template when everything fits, else the
    /// table-driven encoding says why not.
    #[inline(always)]
    fn method_header(
        &self,
        template: &HeaderTemplate,
        subchannel: u8,
        method: u16,
        count: usize,
    ) -> Result<[u32; 2], PushbufferError> {
        match template.encode(self.mode, subchannel, method, count) {
            Some(words) => Ok(words),
            None => self.method_header_from_table(template.cmd, subchannel, method, count),
        }
    }

    /// [`method_header`](Self::method_header) field by field from the table, with every
    /// check and its typed error.
    #[cold]
    fn method_header_from_table(
        &self,
        cmd: &Command<Family>,
        subchannel: u8,
        method: u16,
        count: usize,
    ) -> Result<[u32; 2], PushbufferError> {
        self.check_mode(cmd)?;
        let (Some(method_f), Some(subc_f), Some(count_f)) =
            (cmd.field("METHOD"), cmd.field("SUBCHANNEL"), cmd.field("COUNT"))
        else {
            // Every methods form of the table has the three (checked by the tests).
            return Err(PushbufferError::WrongMode { command: cmd.name, mode: self.mode });
        };
        let max = max_of(count_f);
        if count == 0 || count > max {
            return Err(PushbufferError::BadCount { count, max });
        }
        if subchannel >= SUBCHANNELS {
            return Err(PushbufferError::BadSubchannel { subchannel });
        }
        let mut words = [cmd.value, 0];
        put_address(cmd.name, &[*method_f], &mut words, BusAddress(u64::from(method)))
            .map_err(PushbufferError::BadMethod)?;
        subc_f.put(cmd.name, &mut words, u32::from(subchannel))?;
        count_f.put(cmd.name, &mut words, count as u32)?;
        Ok(words)
    }

    fn emit(&mut self, prefix: &[u32], data: &[u32]) -> Result<(), PushbufferError> {
        self.sink.write_parts(prefix, data)?;
        Ok(())
    }

    /// Increasing methods (§2.8.3): `data[i]` to method `method + 4 * i` of the object on
    /// `subchannel`; 1..=[`MAX_METHOD_COUNT`] words.
    pub fn methods(
        &mut self,
        subchannel: u8,
        method: u16,
        data: &[u32],
    ) -> Result<(), PushbufferError> {
        let h = self.method_header(&INCREASING, subchannel, method, data.len())?;
        self.emit(&h[..1], data)
    }

    /// Non-increasing methods: every word of `data` to `method`; 1..=[`MAX_METHOD_COUNT`].
    pub fn methods_non_increasing(
        &mut self,
        subchannel: u8,
        method: u16,
        data: &[u32],
    ) -> Result<(), PushbufferError> {
        let h = self.method_header(&NON_INCREASING, subchannel, method, data.len())?;
        self.emit(&h[..1], data)
    }

    /// Long non-increasing methods (IB mode only): every word of `data` to `method`, the count
    /// in a second word; 1..=[`MAX_LONG_COUNT`] words.
    pub fn methods_long(
        &mut self,
        subchannel: u8,
        method: u16,
        data: &[u32],
    ) -> Result<(), PushbufferError> {
        let h = self.method_header(&LONG_NON_INCREASING, subchannel, method, data.len())?;
        self.emit(&h[..LONG_NON_INCREASING.cmd.words], data)
    }

    /// One puller method (§2.8.4) on subchannel 0 with its one-field parameter.
    #[inline]
    fn puller_method(
        &mut self,
        method: &baregpu_regs::pushbuffer::Method<Family>,
        field: &WordField,
        value: u32,
    ) -> Result<(), PushbufferError> {
        let param = baregpu_regs::pushbuffer::method_param(method, field, value)?;
        self.methods(0, method.method, &[param])
    }

    /// `REF_CNT` (NV10+): the channel's reference counter (USER `REF`) becomes `value` once
    /// everything before it has executed.
    pub fn ref_cnt(&mut self, value: u32) -> Result<(), PushbufferError> {
        self.puller_method(&pb::REF_CNT, &pb::ref_cnt::VALUE, value)
    }

    /// `OBJECT` (method 0): bind the object of RAMHT handle `handle` to `subchannel`.
    pub fn bind_object(&mut self, subchannel: u8, handle: u32) -> Result<(), PushbufferError> {
        let param =
            baregpu_regs::pushbuffer::method_param(&pb::OBJECT, &pb::object::HANDLE, handle)?;
        self.methods(subchannel, pb::OBJECT.method, &[param])
    }

    /// `DMA_SEMAPHORE` (NV1A:GF100): the DMA object (RAMHT handle) semaphores go through.
    pub fn dma_semaphore(&mut self, handle: u32) -> Result<(), PushbufferError> {
        self.puller_method(&pb::DMA_SEMAPHORE, &pb::dma_semaphore::HANDLE, handle)
    }

    /// A G84+ semaphore operation at `address` (4-byte aligned, 40 bits) with `sequence`: the
    /// address, sequence and trigger methods in one increasing command (5 words).
    pub fn semaphore(
        &mut self,
        address: BusAddress,
        sequence: u32,
        operation: Operation,
    ) -> Result<(), PushbufferError> {
        let parts =
            [pb::semaphore_address_high::ADDRESS_HIGH, pb::semaphore_address_low::ADDRESS_LOW];
        let name = pb::SEMAPHORE_ADDRESS_HIGH.name;
        let high = address_part(name, &parts, 0, address).map_err(PushbufferError::Address)?;
        let low = address_part(name, &parts, 1, address).map_err(PushbufferError::Address)?;
        let trigger = baregpu_regs::pushbuffer::method_param(
            &pb::SEMAPHORE_TRIGGER,
            &pb::semaphore_trigger::OPERATION,
            operation as u32,
        )?;
        self.methods(0, pb::SEMAPHORE_ADDRESS_HIGH.method, &[high, low, sequence, trigger])
    }

    /// Release: write `value` (and a timestamp) to the semaphore at `address`.
    pub fn semaphore_release(
        &mut self,
        address: BusAddress,
        value: u32,
    ) -> Result<(), PushbufferError> {
        self.semaphore(address, value, Operation::WriteLong)
    }

    /// Acquire: hold the channel until the semaphore at `address` equals `value`.
    pub fn semaphore_acquire(
        &mut self,
        address: BusAddress,
        value: u32,
    ) -> Result<(), PushbufferError> {
        self.semaphore(address, value, Operation::AcquireEqual)
    }

    /// Acquire >=: hold the channel until `(int32)(semaphore - value) >= 0`.
    pub fn semaphore_acquire_geq(
        &mut self,
        address: BusAddress,
        value: u32,
    ) -> Result<(), PushbufferError> {
        self.semaphore(address, value, Operation::AcquireGequal)
    }

    fn control(
        &mut self,
        cmd: &Command<Family>,
        target: Option<u32>,
    ) -> Result<(), PushbufferError> {
        self.check_mode(cmd)?;
        let mut word = [cmd.value];
        if let (Some(t), Some(field)) = (target, cmd.field("TARGET")) {
            put_address(cmd.name, &[*field], &mut word, BusAddress(u64::from(t)))
                .map_err(PushbufferError::Address)?;
        }
        self.emit(&word, &[])
    }

    /// Jump (NV1A+, DMA mode): continue reading at byte `target` of the pushbuffer DMA object
    /// (4-byte aligned).
    pub fn jump(&mut self, target: u32) -> Result<(), PushbufferError> {
        self.control(&pb::JUMP, Some(target))
    }

    /// Call (NV1A+, DMA mode): a subroutine at `target`; one level deep (a call while one is
    /// active is `CALL_SUBR_ACTIVE`).
    pub fn call(&mut self, target: u32) -> Result<(), PushbufferError> {
        self.control(&pb::CALL, Some(target))
    }

    /// Return from the subroutine (NV1A+, DMA mode).
    pub fn ret(&mut self) -> Result<(), PushbufferError> {
        self.control(&pb::RETURN, None)
    }
}

/// The filler word: increasing methods to method 0 with a count of 0 submit nothing.
pub const FILLER: u32 = pb::INCREASING_METHODS.value;

/// The pushbuffer of an NV4-style DMA-mode channel as a ring (§2.8.3 "NV4-style mode"):
/// `DMA_PUT` (a byte offset in the pushbuffer DMA object, which starts at the ring) is the
/// doorbell, `DMA_GET` the read pointer. Write it through [`DmaSink`], which jumps back to
/// the start before a command would reach the end; the pusher does not wrap by itself, so
/// the ring's own `pad_to` (which may fill up to the end) is not for DMA mode (nothing needs
/// padding: `SUBMIT_ALIGN` is 1).
#[derive(Debug)]
pub enum Pushbuffer {}

impl CommandProcessorRing for Pushbuffer {
    type Unit = u32;
    /// The ring's bus address (the DMA object's base).
    type Base = BusAddress;
    type Doorbell = DMA_PUT;

    const MIN_UNITS: usize = 16;
    /// 4 MiB: jump targets hold 32-bit offsets (§2.8.3), and every run of an IB-mode main
    /// pushbuffer fits one entry's `SIZE` (2^21 - 1 words).
    const MAX_UNITS: usize = 1 << 20;
    const FILLER: u32 = FILLER;
    const SUBMIT_ALIGN: usize = 1;

    fn base(address: BusAddress, _bytes: usize) -> Option<BusAddress> {
        address.0.is_multiple_of(4).then_some(address)
    }

    fn size_field(units: usize) -> u8 {
        units.trailing_zeros() as u8
    }

    fn doorbell(wptr: u32) -> DMA_PUT {
        DMA_PUT::RESET.with_dma_put(wptr * 4)
    }
}

impl RegisterRptrFamily for Pushbuffer {
    type Rptr = DMA_GET;
    /// A byte offset; an unaligned or out-of-ring one maps outside the ring and is ignored.
    fn rptr_index(value: DMA_GET) -> u32 {
        let get = value.dma_get();
        if get.is_multiple_of(4) { get / 4 } else { u32::MAX }
    }
}

/// A DMA-mode pushbuffer ring whose read pointer is `DMA_GET` in the channel's USER block.
pub type DmaRing<B, IO> = CommandRing<B, RegisterRptr<IO>, Pushbuffer>;

/// A [`CommandSink`] over a DMA-mode pushbuffer ring that never lets a command run into the
/// end: when a command and a jump would not fit before it, a jump to the start is written
/// first and the rest of the ring is filled (§2.8.3 step 4a), all in one reservation.
#[derive(Debug)]
pub struct DmaSink<'r, B, P> {
    ring: &'r mut CommandRing<B, P, Pushbuffer>,
    jumps: u64,
}

impl<'r, B: Borrow<DmaRegion>, P: ReadPointer<Pushbuffer>> DmaSink<'r, B, P> {
    /// A sink writing into `ring`.
    pub fn new(ring: &'r mut CommandRing<B, P, Pushbuffer>) -> Self {
        DmaSink { ring, jumps: 0 }
    }

    /// Jumps back to the start written so far.
    pub fn jumps(&self) -> u64 {
        self.jumps
    }

    /// Room for `units`, with the jump back first when they and a jump do not fit before
    /// the end; the grant left is `units`.
    fn reserve_before_end(&mut self, units: usize) -> Result<(), NoSpace> {
        let to_end = self.ring.size_units() - self.ring.head() as usize;
        if units < to_end {
            return self.ring.reserve(units);
        }
        self.ring.reserve(to_end + units)?;
        let mut jump = [pb::JUMP.value];
        // Target 0 (the ring's start) always fits the field.
        let _ = put_address(pb::JUMP.name, pb::jump::FIELDS, &mut jump, BusAddress(0));
        self.ring.push(jump[0])?;
        for _ in 1..to_end {
            self.ring.push(FILLER)?;
        }
        self.jumps += 1;
        Ok(())
    }
}

impl<B: Borrow<DmaRegion>, P: ReadPointer<Pushbuffer>> CommandSink<u32> for DmaSink<'_, B, P> {
    fn reserve(&mut self, units: usize) -> Result<(), NoSpace> {
        self.reserve_before_end(units)
    }

    fn push(&mut self, unit: u32) -> Result<(), NoSpace> {
        self.ring.push(unit)
    }

    fn push_slice(&mut self, units: &[u32]) -> Result<(), NoSpace> {
        self.ring.push_slice(units)
    }

    fn write_parts(&mut self, prefix: &[u32], body: &[u32]) -> Result<(), NoSpace> {
        self.reserve_before_end(prefix.len() + body.len())?;
        self.ring.push_slice(prefix)?;
        self.ring.push_slice(body)
    }
}

/// The IB ring's base as the channel's RAMFC holds it: the ring's address and log2 of its
/// entries (`ib_address`, `ib_order`, §2.8.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct IbBase {
    /// The ring's address (8-byte aligned, 40 bits).
    pub address: BusAddress,
    /// log2 of its entries.
    pub order: u8,
}

/// The IB ring of an IB-mode channel: 2-word entries ([`IB_ENTRY`](pb::IB_ENTRY)), `IB_PUT`
/// the doorbell, `IB_GET` the read pointer (entry indices, §2.8.3). The ring counts words, two
/// per entry.
#[derive(Debug)]
pub enum IbRing {}

const ENTRY_WORDS: usize = pb::IB_ENTRY.words;

impl CommandProcessorRing for IbRing {
    type Unit = u32;
    type Base = IbBase;
    type Doorbell = IB_PUT;

    const MIN_UNITS: usize = 2 * ENTRY_WORDS;
    const MAX_UNITS: usize = (1 << 16) * ENTRY_WORDS;
    /// Never written: an IB ring is not padded (an empty entry is `IB_EMPTY`).
    const FILLER: u32 = 0;
    const SUBMIT_ALIGN: usize = ENTRY_WORDS;

    /// "b40 ib_address": entries are 8 bytes, so 8-byte aligned below 2^40.
    fn base(address: BusAddress, bytes: usize) -> Option<IbBase> {
        let aligned = address.0.is_multiple_of((ENTRY_WORDS * 4) as u64);
        let entries = bytes / (ENTRY_WORDS * 4);
        (aligned && address.fits_below(bytes as u64, 1 << 40))
            .then_some(IbBase { address, order: entries.trailing_zeros() as u8 })
    }

    fn size_field(units: usize) -> u8 {
        (units / ENTRY_WORDS).trailing_zeros() as u8
    }

    fn doorbell(wptr: u32) -> IB_PUT {
        IB_PUT::RESET.with_ib_put(wptr / ENTRY_WORDS as u32)
    }
}

impl RegisterRptrFamily for IbRing {
    type Rptr = IB_GET;
    /// An entry index; one past the ring maps outside it (the ring reports it).
    fn rptr_index(value: IB_GET) -> u32 {
        value.ib_get().saturating_mul(ENTRY_WORDS as u32)
    }
}

/// The main pushbuffer's read pointer: `DMA_MGET` (the main pushbuffer's last read address,
/// §2.8.3) less the pushbuffer's address, in words. The low 32 bits are read: the main
/// pushbuffer does not cross a 4 GiB boundary ([`IbChannel::new`] checks).
#[derive(Debug, Clone, Copy)]
pub struct MgetRptr<IO> {
    io: IO,
    base: u32,
}

impl<IO> ReadPointer<Pushbuffer> for MgetRptr<IO>
where
    IO: RegisterIoExt<Base = pfifo_user::Block>,
    IO::Family: Accepts<Family>,
{
    fn read(&self) -> u32 {
        let offset = self.io.read::<DMA_MGET>().dma_mget().wrapping_sub(self.base);
        if offset.is_multiple_of(4) { offset / 4 } else { u32::MAX }
    }
}

/// A pushbuffer segment an IB entry points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Segment {
    /// Its address (4-byte aligned, 40 bits).
    pub address: BusAddress,
    /// Its length in words (1..=[`MAX_SEGMENT_WORDS`]).
    pub words: u32,
    /// Not the main pushbuffer (`NOT_MAIN`): `DMA_MGET` does not follow it.
    pub not_main: bool,
}

impl Segment {
    /// The IB entry for the segment, from the table's fields.
    pub fn entry(&self) -> Result<[u32; ENTRY_WORDS], IbSubmitError> {
        if self.words == 0 || self.words as usize > MAX_SEGMENT_WORDS {
            return Err(IbSubmitError::BadSegment { words: self.words });
        }
        let mut e = [0u32; ENTRY_WORDS];
        put_address(pb::IB_ENTRY.name, ib_entry::FIELDS, &mut e, self.address)
            .map_err(IbSubmitError::Address)?;
        ib_entry::SIZE.put(pb::IB_ENTRY.name, &mut e, self.words)?;
        ib_entry::NOT_MAIN.put(pb::IB_ENTRY.name, &mut e, u32::from(self.not_main))?;
        Ok(e)
    }
}

/// Why an IB-mode submission failed. Nothing was submitted; the main pushbuffer's words wait
/// for the next submission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum IbSubmitError {
    /// The IB ring has no room for the batch's entries (back-pressure: unread entries are
    /// never overwritten).
    Full {
        /// Entries the batch needs.
        needed: usize,
        /// Entries free after reading `IB_GET`.
        free: usize,
    },
    /// `IB_GET` reported a position the pusher cannot have reached (past the ring, or
    /// behind its last position): the cached one stays in use.
    BadIbGet(BadReadPointer),
    /// A segment of 0 words (`IB_EMPTY`) or longer than an entry's `SIZE` holds.
    BadSegment {
        /// Its length in words.
        words: u32,
    },
    /// A segment address an entry cannot hold (misaligned, past 40 bits).
    Address(AddressFieldError),
    /// A field that does not fit.
    Field(FieldOverflow),
    /// The batch does not fit the IB ring even when it is empty.
    TooLarge {
        /// Entries needed.
        needed: usize,
        /// The ring's capacity in entries.
        capacity: usize,
    },
    /// No room after waiting.
    TimedOut(TimedOut),
}

impl fmt::Display for IbSubmitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IbSubmitError::Full { needed, free } => {
                write!(f, "IB ring full: {needed} entries needed, {free} free")
            }
            IbSubmitError::BadIbGet(_) => {
                f.write_str("IB_GET is not a position the pusher can be at")
            }
            IbSubmitError::BadSegment { words } => {
                write!(f, "a segment of {words} words (1..={MAX_SEGMENT_WORDS})")
            }
            IbSubmitError::Address(_) => {
                f.write_str("an IB entry cannot hold the segment's address")
            }
            IbSubmitError::Field(_) => f.write_str("an IB entry field does not fit"),
            IbSubmitError::TooLarge { needed, capacity } => {
                write!(f, "{needed} entries never fit an IB ring of {capacity}")
            }
            IbSubmitError::TimedOut(_) => f.write_str("the IB ring stayed full"),
        }
    }
}

impl core::error::Error for IbSubmitError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            IbSubmitError::BadIbGet(e) => Some(e),
            IbSubmitError::Address(e) => Some(e),
            IbSubmitError::Field(e) => Some(e),
            IbSubmitError::TimedOut(e) => Some(e),
            _ => None,
        }
    }
}

impl From<FieldOverflow> for IbSubmitError {
    fn from(e: FieldOverflow) -> Self {
        IbSubmitError::Field(e)
    }
}

/// Most entries one batch holds (runs of the main pushbuffer and external segments).
pub const MAX_BATCH_ENTRIES: usize = 16;

/// An IB-mode channel (§2.8.3 "IB mode"): a main pushbuffer (a [`CommandRing`] of
/// [`Pushbuffer`] whose read pointer is `DMA_MGET`) that [`writer`](Self::writer) writes
/// commands into, and the IB ring of entries the pusher follows. A batch is, in order, the
/// runs of main words and the external segments queued with
/// [`push_external`](Self::push_external) since the last [`submit`](Self::submit), which
/// writes their entries, all or none, and rings `IB_PUT` once.
#[derive(Debug)]
pub struct IbChannel<M, I, IO> {
    main: CommandRing<M, MgetRptr<IO>, Pushbuffer>,
    ib: CommandRing<I, RegisterRptr<IO>, IbRing>,
    user: IO,
    queued: [Segment; MAX_BATCH_ENTRIES],
    queued_len: usize,
    /// Where the main words not yet queued start.
    run_start: u32,
    /// Batches [`submit_blocking`](Self::submit_blocking) found the IB ring full for.
    ib_waits: u64,
}

impl<M, I, IO> IbChannel<M, I, IO>
where
    M: Borrow<DmaRegion>,
    I: Borrow<DmaRegion>,
    IO: RegisterIoExt<Base = pfifo_user::Block> + Clone,
    IO::Family: Accepts<Family>,
{
    /// A channel over the main pushbuffer `main` and the IB ring `ib` (each a power of two of
    /// words the family accepts; `ib` 8-byte aligned below 2^40), whose USER block is `user`
    /// (`bar0.at_index::<UserG80>(channel)?`). All pointers start at 0, as for a channel just
    /// set up with `IB_PUT`/`IB_GET` 0.
    pub fn new(main: M, ib: I, user: IO) -> Result<Self, RingConfigError> {
        let region = main.borrow();
        let address = region.bus_address();
        // DMA_MGET's low 32 bits must identify a word of the main pushbuffer.
        if !address.fits_below(region.size() as u64, 1 << 40)
            || (address.0 >> 32) != ((address.0 + region.size() as u64 - 1) >> 32)
        {
            return Err(RingConfigError::BadBase { address });
        }
        let mget = MgetRptr { io: user.clone(), base: address.0 as u32 };
        let main = CommandRing::with_read_pointer(main, mget)?;
        let ib = CommandRing::with_read_pointer(ib, RegisterRptr::new(user.clone()))?;
        let empty = Segment { address: BusAddress(0), words: 0, not_main: false };
        Ok(IbChannel {
            main,
            ib,
            user,
            queued: [empty; MAX_BATCH_ENTRIES],
            queued_len: 0,
            run_start: 0,
            ib_waits: 0,
        })
    }

    /// A writer of commands into the main pushbuffer (IB mode).
    pub fn writer(&mut self) -> PushbufferWriter<&mut CommandRing<M, MgetRptr<IO>, Pushbuffer>> {
        PushbufferWriter::new(&mut self.main, PusherMode::Ib)
    }

    /// The main pushbuffer.
    pub fn main(&self) -> &CommandRing<M, MgetRptr<IO>, Pushbuffer> {
        &self.main
    }

    /// The IB ring.
    pub fn ib(&self) -> &CommandRing<I, RegisterRptr<IO>, IbRing> {
        &self.ib
    }

    /// The IB ring's base as RAMFC holds it.
    pub fn ib_base(&self) -> IbBase {
        self.ib.base_registers()
    }

    /// Number of `IB_PUT` writes so far (one per [`submit`](Self::submit)).
    pub fn doorbells(&self) -> u64 {
        self.ib.commits()
    }

    /// Batches that had to wait for the pusher to read the IB ring (`IB_GET` read again
    /// until their entries fit: back-pressure) in [`submit_blocking`](Self::submit_blocking).
    pub fn ib_waits(&self) -> u64 {
        self.ib_waits
    }

    /// Entries the IB ring holds at most (its size less one, §2.8.3: equal indices are empty).
    pub fn capacity_entries(&self) -> usize {
        self.ib.capacity() / ENTRY_WORDS
    }

    /// Queue an external segment (`NOT_MAIN` for a buffer outside the main pushbuffer, e.g. a
    /// prepared command buffer) after the main words written so far; it goes out with the next
    /// [`submit`](Self::submit). A batch holds at most [`MAX_BATCH_ENTRIES`] entries and no
    /// more than the IB ring can ([`IbSubmitError::TooLarge`]; nothing is queued then), so a
    /// queued batch always fits once the pusher has read the ring.
    pub fn push_external(&mut self, segment: Segment) -> Result<(), IbSubmitError> {
        segment.entry()?;
        let runs = self.main_runs();
        // Room is kept for the (at most two) runs of main words `submit` adds, so a queued
        // batch can always be submitted.
        let needed = self.queued_len + runs.iter().flatten().count() + 1 + 2;
        let capacity = MAX_BATCH_ENTRIES.min(self.capacity_entries());
        if needed > capacity {
            return Err(IbSubmitError::TooLarge { needed, capacity });
        }
        self.queue_main_runs(runs);
        self.queued[self.queued_len] = segment;
        self.queued_len += 1;
        Ok(())
    }

    /// The main words not yet queued, as at most two runs (split where they wrap).
    fn main_runs(&self) -> [Option<Segment>; 2] {
        let size = self.main.size_units() as u32;
        let (start, head) = (self.run_start, self.main.head());
        let base = self.main.buffer().bus_address();
        let run = |from: u32, to: u32| {
            (to > from).then(|| Segment {
                address: BusAddress(base.0 + u64::from(from) * 4),
                words: to - from,
                not_main: false,
            })
        };
        if head >= start { [run(start, head), None] } else { [run(start, size), run(0, head)] }
    }

    fn queue_main_runs(&mut self, runs: [Option<Segment>; 2]) {
        for r in runs.into_iter().flatten() {
            self.queued[self.queued_len] = r;
            self.queued_len += 1;
        }
        self.run_start = self.main.head();
    }

    /// Submit the batch: its entries into the IB ring (all or none; back-pressure on
    /// `IB_GET`, read only when the cached free space is too small, a hostile value a typed
    /// error), then one `IB_PUT` write. Returns the entries written; an empty batch writes
    /// nothing. On error nothing is lost: the batch waits for the next call.
    pub fn submit(&mut self) -> Result<usize, IbSubmitError> {
        let runs = self.main_runs();
        let n = self.queued_len + runs.iter().flatten().count();
        if n == 0 {
            return Ok(0);
        }
        if n > MAX_BATCH_ENTRIES {
            return Err(IbSubmitError::TooLarge { needed: n, capacity: MAX_BATCH_ENTRIES });
        }
        let needed = n * ENTRY_WORDS;
        if needed > self.ib.capacity() {
            return Err(IbSubmitError::TooLarge { needed: n, capacity: self.capacity_entries() });
        }
        if self.ib.free_units() < needed {
            self.ib.refresh_rptr().map_err(IbSubmitError::BadIbGet)?;
            if self.ib.free_units() < needed {
                let free = self.ib.free_units() / ENTRY_WORDS;
                return Err(IbSubmitError::Full { needed: n, free });
            }
        }
        self.queue_main_runs(runs);
        for s in &self.queued[..self.queued_len] {
            // Each segment was checked when queued (main runs fit by the ring's size limit)
            // and the room above: neither can fail here.
            if let Ok(e) = s.entry() {
                let _ = self.ib.write_parts(&e, &[]);
            }
        }
        self.queued_len = 0;
        // The main words are published (DMA_MGET may now move over them), then the entries.
        let _ = self.main.commit();
        self.ib.kick(&self.user);
        Ok(n)
    }

    /// [`submit`](Self::submit), reading `IB_GET` until the entries fit or `timeout` passes on
    /// `clock`. A hostile `IB_GET` fails at once.
    pub fn submit_blocking(
        &mut self,
        clock: &impl Clock,
        timeout: Duration,
    ) -> Result<usize, IbSubmitError> {
        match self.submit() {
            Err(IbSubmitError::Full { .. }) => self.ib_waits += 1,
            other => return other,
        }
        let mut last = Ok(0);
        let polled = poll_until(clock, timeout, || match self.submit() {
            Err(IbSubmitError::Full { .. }) => None,
            other => {
                last = other;
                Some(())
            }
        });
        match polled {
            Ok(()) => last,
            Err(waited) => Err(IbSubmitError::TimedOut(waited)),
        }
    }

    /// Read `IB_GET` now (validated like every read).
    pub fn refresh_ib_get(&mut self) -> Result<u32, IbSubmitError> {
        self.ib
            .refresh_rptr()
            .map(|units| units / ENTRY_WORDS as u32)
            .map_err(IbSubmitError::BadIbGet)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::SliceSink;

    #[test]
    fn header_templates_encode_exactly_what_the_tables_do() {
        let mut out = [0u32; 0];
        for mode in [PusherMode::Dma, PusherMode::Ib] {
            let w = PushbufferWriter::new(SliceSink::new(&mut out), mode);
            for t in [INCREASING, NON_INCREASING, LONG_NON_INCREASING] {
                // Each template is laid out from its own command's fields, found by name.
                let f = |name| t.cmd.field(name).unwrap().spec;
                assert_eq!(t.value, t.cmd.value);
                assert_eq!(
                    (t.method_lsb, t.method_limit),
                    (f("METHOD").lsb, 1 << f("METHOD").width)
                );
                let sc = f("SUBCHANNEL");
                assert_eq!((t.subchannel_lsb, t.subchannel_limit), (sc.lsb, 1 << sc.width));
                let count = t.cmd.field("COUNT").unwrap();
                assert_eq!((t.count_word, t.count_lsb), (count.word, count.spec.lsb));
                assert_eq!(t.count_max, max_of(count));
                let max = t.count_max;
                for subchannel in [0, 1, 7, 8, 255] {
                    for method in [0u16, 4, 0x60, 0x1ffc, 0x2000, 2, 0xffff] {
                        for count in [0, 1, 2, MAX_METHOD_COUNT, max, max + 1] {
                            assert_eq!(
                                w.method_header(&t, subchannel, method, count),
                                w.method_header_from_table(t.cmd, subchannel, method, count),
                                "{} {mode:?} subc {subchannel} method {method:#x} count {count}",
                                t.cmd.name
                            );
                        }
                    }
                }
            }
        }
    }
}
