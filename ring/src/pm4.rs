//! PM4 packet encoders (amd-r5xx-acceleration §6, amd-evergreen-cayman-acceleration §9.1) and
//! the [`Pm4Writer`] that emits them into any [`CommandSink`] (a
//! [`CommandRing`](crate::ring::CommandRing), an [`IndirectBuffer`](crate::ib::IndirectBuffer)
//! or a plain [`SliceSink`]).
//!
//! The writer is generic over the family's [`Pm4Family`]: how its stream writes a register.
//! R5xx (`r5xx::Family`, feature `r5xx`) uses type-0 packets (and type-1 pairs, `ONE_REG_WR`
//! data ports); Evergreen/Cayman (`evergreen::Family`, feature `evergreen`) uses type-3
//! `SET_*_REG` packets
//! chosen by the register's range. This module names no family: a writer's type says its
//! family (`Pm4Writer<S, r5xx::Family>`), made by [`Pm4Writer::with_family`] or a family's shorthand
//! (`Pm4Writer::new` for R5xx, `ring.writer()`).
//!
//! # Packet layouts (§6.1)
//!
//! | type | header bits | body |
//! |---|---|---|
//! | 0 | `BASE_INDEX` 12:0, reserved 14:13, `ONE_REG_WR` 15, `COUNT` 29:16, `TYPE` 31:30 = 0 | N register values |
//! | 1 | `REG_INDEX1` 10:0, `REG_INDEX2` 21:11, reserved 29:22, `TYPE` = 1 | 2 register values |
//! | 2 | reserved 29:0, `TYPE` = 2 | none (filler) |
//! | 3 | reserved 7:0, `IT_OPCODE` 15:8, `COUNT` 29:16, `TYPE` = 3 | N dwords |
//!
//! `COUNT` is always N - 1 for an N-dword body, so a packet carries 1 to 0x4000 body dwords; an
//! empty body cannot be encoded ([`Pm4Error::BadCount`]).
//!
//! ## Type-0 `BASE_INDEX` range (decision)
//!
//! §6.1.1 says "BASE_INDEX\[12:0\] correspond to byte address bits \[14:2\]" and then "supports up
//! to DWORD address: 0x7FFF", with bits 14:13 of the header reserved "for future expansion of the
//! address space". 13 bits of dword index reach byte addresses 0x0000..=0x7FFC; the "0x7FFF"
//! only makes sense as the highest *byte* address of that window. The encoder therefore accepts
//! dword-aligned byte offsets up to [`TYPE0_MAX_OFFSET`] = 0x7FFC (dword index 0x1FFF) and never
//! sets the reserved bits 14:13; a consecutive run must end inside that window too. Registers
//! above it (R500 `US_*` instruction arrays at 0x9000+) are reached through their index/data
//! register pairs, not by type-0 packets.
//!
//! ## Type-1 index range
//!
//! §6.1.2 gives 11-bit `REG_INDEX1`/`REG_INDEX2` fields that "point to a memory-mapped register";
//! like `BASE_INDEX` they hold dword indices (byte offset / 4), so a type-1 packet reaches byte
//! offsets up to [`TYPE1_MAX_OFFSET`] = 0x1FFC ("this packet cannot address the entire address
//! space").
//!
//! # Register writes are typed
//!
//! [`Pm4Writer`] takes generated register values (`baregpu_regs::<family>::*`), never raw
//! offsets: [`write_reg`](Pm4Writer::write_reg), [`write_regs`](Pm4Writer::write_regs) for
//! consecutive registers (a tuple, checked at compile time),
//! [`write_reg_at`](Pm4Writer::write_reg_at) and [`write_reg_array`](Pm4Writer::write_reg_array)
//! for register arrays; for R5xx also `write_reg_repeated` for data ports (`ONE_REG_WR`) and
//! `write_reg_pair` (type 1, which Evergreen does not support, §9.1.2). The packet each write
//! becomes is the family's ([`Pm4Family::register_write`]). The raw header encoders
//! ([`type0_header`], …) are public for tests and device models.
//!
//! They take only registers of the writer's family ([`StreamRegister`]) at a fixed offset of
//! the register window. Another family's register does not build:
//!
//! ```compile_fail,E0271
//! use baregpu_ring::pm4::{Pm4Writer, SliceSink};
//! use baregpu_regs::vc4::v3d::V3D_CT0CA;
//! let mut buf = [0u32; 4];
//! let mut w = Pm4Writer::new(SliceSink::new(&mut buf));
//! // A VideoCore register in an R5xx command stream:
//! let _ = w.write_reg(V3D_CT0CA::from_raw(0));
//! ```
//!
//! # All or nothing
//!
//! Every packet is sized first and [`CommandSink::reserve`]d whole, so a packet is either written
//! completely or not at all ([`Pm4Error::NoSpace`]); the stream never holds half a packet.

use core::fmt;
use core::marker::PhantomData;

use baregpu_hal::register::Family;
use baregpu_hal::{Absolute, Array, IndexOutOfRange, Register, Scalar, Writable};
use baregpu_regs::packet::{BodyError, Packet};

pub use crate::stream::{CommandSink, NoSpace, SliceSink};

/// A family's PM4 dialect: whose registers its stream writes and with which packet (the packet
/// that writes `count` consecutive registers from a byte offset). One implementation per family
/// (`r5xx::Family`: type 0, `evergreen::Family`: type-3 `SET_*` by range).
pub trait Pm4Family: 'static {
    /// The generated register family (`baregpu_regs::<family>::Family`) the stream writes.
    type Registers: Family;
    /// The family's type-3 `NOP` (R5xx §6.2.2.1, Evergreen §9.7.2).
    const NOP: Opcode;
    /// Bits this dialect sets in every type-3 header (Evergreen compute: `SHADER_TYPE`, bit 1,
    /// §9.1.4); 0 for most.
    const TYPE3_FLAGS: u32 = 0;

    /// The dwords before the values of a packet writing `count` consecutive registers from
    /// byte `offset`, or why no packet of the family can.
    fn register_write(offset: usize, count: usize) -> Result<RegisterWrite, Pm4Error>;
}

/// The header (and, for type-3 `SET_*` packets, the register-offset dword) a register write
/// puts before the values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegisterWrite {
    /// The packet header.
    pub header: u32,
    /// The dword after the header that names the first register, if the packet has one.
    pub index: Option<u32>,
}

impl RegisterWrite {
    /// Dwords before the values.
    pub const fn prefix_dwords(&self) -> usize {
        if self.index.is_some() { 2 } else { 1 }
    }
}

/// A register a family's PM4 stream can write: one of its registers at a fixed offset of the
/// register window (implemented for every such generated register).
pub trait StreamRegister<F: Family>: Register<Family = F, Base = Absolute> {}

impl<F: Family, R: Register<Family = F, Base = Absolute>> StreamRegister<F> for R {}

/// Most body dwords one packet carries: `COUNT` (bits 29:16, 14 bits) holds N - 1 (§6.1).
pub const MAX_BODY_DWORDS: usize = 0x4000;

/// Highest register byte offset a type-0 packet reaches: `BASE_INDEX` 12:0 = byte address
/// bits 14:2 (§6.1.1; see the module documentation for the reading of "0x7FFF").
pub const TYPE0_MAX_OFFSET: usize = 0x1FFF << 2;

/// Highest register byte offset a type-1 packet reaches: 11-bit `REG_INDEX1`/`REG_INDEX2` dword
/// indices (§6.1.2).
pub const TYPE1_MAX_OFFSET: usize = 0x7FF << 2;

/// The type-2 filler packet: `TYPE` (31:30) = 2, everything else reserved zero (§6.1.3).
pub const TYPE2: u32 = 2 << 30;

const COUNT_SHIFT: u32 = 16;
const ONE_REG_WR: u32 = 1 << 15;
const TYPE_SHIFT: u32 = 30;

/// A type-3 `IT_OPCODE` (header bits 15:8, R5xx §6.1.4, Evergreen §9.1.4).
///
/// The opcodes are data: each family's packet table (`hal/regdb/packets/<family>.toml`,
/// extracted from the document and checked against it) is generated into
/// `baregpu_regs::<family>::packets`, whose constants [`Pm4Writer::packet`] takes (typed by the
/// family) and [`Opcode::of`] converts. [`Opcode::new`] builds others (microcode-specific
/// packets) for [`Pm4Writer::packet3`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Opcode(u8);

impl Opcode {
    /// The opcode of a packet of the generated tables (`baregpu_regs::r5xx::packets::NOP`).
    pub const fn of<F>(packet: Packet<F>) -> Opcode {
        Opcode(packet.opcode)
    }

    /// Any 8-bit `IT_OPCODE` (e.g. one a particular microcode adds).
    pub const fn new(raw: u8) -> Opcode {
        Opcode(raw)
    }

    /// The raw `IT_OPCODE`.
    pub const fn raw(self) -> u8 {
        self.0
    }

    /// Whether the body starts with a `GUI_CONTROL` dword: "A 1 in the MSB of the IT_OPCODE
    /// indicates that GUI control is required" (§6.2).
    pub const fn needs_gui_control(self) -> bool {
        self.0 & 0x80 != 0
    }
}

/// Why a packet could not be encoded or written. Nothing was written in every case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Pm4Error {
    /// A register (byte `offset`) lies beyond what the packet's index field reaches (`max`):
    /// [`TYPE0_MAX_OFFSET`] or [`TYPE1_MAX_OFFSET`].
    RegisterOutOfRange {
        /// Byte offset of the first register that does not fit.
        offset: usize,
        /// Highest byte offset the packet type reaches.
        max: usize,
    },
    /// A register byte offset that is not a multiple of 4 (indices are dword addresses, §6.1.1).
    UnalignedRegister {
        /// The offending byte offset.
        offset: usize,
    },
    /// A body of 0 or more than [`MAX_BODY_DWORDS`] dwords (`COUNT` = N - 1 in 14 bits, §6.1).
    BadCount {
        /// Requested body length in dwords.
        count: usize,
    },
    /// A register array index past the documented instances.
    Index(IndexOutOfRange),
    /// Instances of a register array that are not adjacent dwords, so one type-0 packet cannot
    /// write several of them.
    NotConsecutive {
        /// Register array name.
        register: &'static str,
        /// Its byte stride.
        stride: usize,
    },
    /// No register-write packet of the family reaches the register at byte `offset` (an
    /// Evergreen register outside every `SET_*` range and above the type-0 system registers,
    /// amd-evergreen-cayman-acceleration §9.1.1, §9.4.14-19).
    NoRegisterPacket {
        /// Byte offset of the register.
        offset: usize,
    },
    /// The sink has no room for the whole packet.
    NoSpace(NoSpace),
    /// A body whose length does not fit the packet's layout in the family's table (a 3-dword
    /// `DISPATCH_DIRECT`, amd-evergreen-cayman-acceleration §9.3.12 takes 4).
    Body(BodyError),
}

impl From<BodyError> for Pm4Error {
    fn from(e: BodyError) -> Self {
        Pm4Error::Body(e)
    }
}

impl From<NoSpace> for Pm4Error {
    fn from(e: NoSpace) -> Self {
        Pm4Error::NoSpace(e)
    }
}

impl From<IndexOutOfRange> for Pm4Error {
    fn from(e: IndexOutOfRange) -> Self {
        Pm4Error::Index(e)
    }
}

impl fmt::Display for Pm4Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pm4Error::RegisterOutOfRange { offset, max } => {
                write!(f, "register {offset:#x} is beyond the packet's reach ({max:#x})")
            }
            Pm4Error::UnalignedRegister { offset } => {
                write!(f, "register offset {offset:#x} is not dword-aligned")
            }
            Pm4Error::BadCount { count } => {
                write!(f, "a packet body of {count} dwords (must be 1..={MAX_BODY_DWORDS})")
            }
            Pm4Error::Index(_) => f.write_str("register array index outside the array"),
            Pm4Error::NotConsecutive { register, stride } => {
                write!(f, "{register} instances are {stride} bytes apart, not consecutive")
            }
            Pm4Error::NoRegisterPacket { offset } => {
                write!(f, "no register-write packet reaches register {offset:#x}")
            }
            Pm4Error::NoSpace(_) => f.write_str("no room in the sink for the packet"),
            Pm4Error::Body(_) => f.write_str("the body does not fit the packet's layout"),
        }
    }
}

impl core::error::Error for Pm4Error {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Pm4Error::Index(e) => Some(e),
            Pm4Error::NoSpace(e) => Some(e),
            Pm4Error::Body(e) => Some(e),
            _ => None,
        }
    }
}

#[inline]
pub(crate) const fn check_count(count: usize) -> Result<u32, Pm4Error> {
    if count == 0 || count > MAX_BODY_DWORDS {
        Err(Pm4Error::BadCount { count })
    } else {
        Ok((count as u32 - 1) << COUNT_SHIFT)
    }
}

#[inline]
pub(crate) const fn check_offset(offset: usize, max: usize) -> Result<u32, Pm4Error> {
    if !offset.is_multiple_of(4) {
        Err(Pm4Error::UnalignedRegister { offset })
    } else if offset > max {
        Err(Pm4Error::RegisterOutOfRange { offset, max })
    } else {
        Ok((offset >> 2) as u32)
    }
}

/// Type-0 header (§6.1.1): write `count` body dwords to the registers from byte `offset` on
/// (`one_reg_wr` false: consecutive registers, each inside [`TYPE0_MAX_OFFSET`]) or all to the
/// register at `offset` (`one_reg_wr` true).
///
/// `(count - 1) << 16 | one_reg_wr << 15 | offset >> 2`, type 0.
#[inline]
pub const fn type0_header(offset: usize, count: usize, one_reg_wr: bool) -> Result<u32, Pm4Error> {
    let index = match check_offset(offset, TYPE0_MAX_OFFSET) {
        Ok(i) => i,
        Err(e) => return Err(e),
    };
    let count_bits = match check_count(count) {
        Ok(c) => c,
        Err(e) => return Err(e),
    };
    if !one_reg_wr {
        // The last register of the run must be addressable too.
        let last = offset + (count - 1) * 4;
        if last > TYPE0_MAX_OFFSET {
            return Err(Pm4Error::RegisterOutOfRange { offset: last, max: TYPE0_MAX_OFFSET });
        }
    }
    let one = if one_reg_wr { ONE_REG_WR } else { 0 };
    Ok(count_bits | one | index)
}

/// Type-1 header (§6.1.2): the body's two dwords go to the registers at byte offsets `first`
/// and `second` (each at most [`TYPE1_MAX_OFFSET`]).
///
/// `1 << 30 | (second >> 2) << 11 | first >> 2`.
#[inline]
pub const fn type1_header(first: usize, second: usize) -> Result<u32, Pm4Error> {
    let i1 = match check_offset(first, TYPE1_MAX_OFFSET) {
        Ok(i) => i,
        Err(e) => return Err(e),
    };
    let i2 = match check_offset(second, TYPE1_MAX_OFFSET) {
        Ok(i) => i,
        Err(e) => return Err(e),
    };
    Ok(1 << TYPE_SHIFT | i2 << 11 | i1)
}

/// Type-3 header (§6.1.4) for an `opcode` with a `count`-dword body.
///
/// `3 << 30 | (count - 1) << 16 | opcode << 8`.
#[inline]
pub const fn type3_header(opcode: Opcode, count: usize) -> Result<u32, Pm4Error> {
    match check_count(count) {
        Ok(c) => Ok(3 << TYPE_SHIFT | c | (opcode.0 as u32) << 8),
        Err(e) => Err(e),
    }
}

/// Registers written by one packet: a tuple of consecutive writable registers of family `Fam`,
/// e.g. `(CP_IB_BASE, CP_IB_BUFSZ)`. Consecutiveness (each register 4 bytes after the previous
/// one) is checked when the tuple type is used, at compile time:
///
/// ```compile_fail,E0080
/// use baregpu_ring::pm4::{Pm4Writer, SliceSink};
/// use baregpu_regs::r5xx::cp::{CP_IB2_BASE, CP_IB_BUFSZ};
/// let mut buf = [0u32; 4];
/// let mut w = Pm4Writer::new(SliceSink::new(&mut buf));
/// // 0x730 and 0x73c are not adjacent: does not build.
/// let _ = w.write_regs((CP_IB2_BASE::from_raw(0), CP_IB_BUFSZ::from_raw(0)));
/// ```
pub trait RegisterRun<Fam: Family>: Copy {
    /// Number of registers (1..=8).
    const LEN: usize;
    /// Byte offset of the first register.
    const FIRST: usize;
    /// The values in register order, as a fixed array.
    type Values: AsRef<[u32]>;
    /// Raw values in register order (evaluates the consecutiveness check).
    fn values(self) -> Self::Values;
}

const fn consecutive(offsets: &[usize]) -> bool {
    let mut i = 1;
    while i < offsets.len() {
        if offsets[i] != offsets[i - 1] + 4 {
            return false;
        }
        i += 1;
    }
    true
}

macro_rules! register_run {
    ($n:literal: $($t:ident $i:tt),+) => {
        impl<Fam: Family, $($t: StreamRegister<Fam> + Writable + Scalar),+> RegisterRun<Fam>
            for ($($t,)+)
        {
            const LEN: usize = $n;
            const FIRST: usize = register_run!(@first $($t)+);
            type Values = [u32; $n];
            #[inline]
            fn values(self) -> [u32; $n] {
                const {
                    assert!(
                        consecutive(&[$($t::OFFSET),+]),
                        "write_regs: registers must be consecutive (each 4 bytes after the last)"
                    )
                };
                [$(self.$i.to_raw()),+]
            }
        }
    };
    (@first $first:ident $($rest:ident)*) => { $first::OFFSET };
}

register_run!(1: A 0);
register_run!(2: A 0, B 1);
register_run!(3: A 0, B 1, C 2);
register_run!(4: A 0, B 1, C 2, D 3);
register_run!(5: A 0, B 1, C 2, D 3, E 4);
register_run!(6: A 0, B 1, C 2, D 3, E 4, F 5);
register_run!(7: A 0, B 1, C 2, D 3, E 4, F 5, G 6);
register_run!(8: A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);

/// Writes whole PM4 packets into a [`CommandSink`]; each method emits one packet or nothing.
///
/// `F` is the family whose registers the stream writes (no default);
/// [`Pm4Writer::with_family`] makes a writer for any family.
#[derive(Debug)]
pub struct Pm4Writer<S, F: Pm4Family> {
    sink: S,
    family: PhantomData<F>,
}

impl<S: CommandSink, F: Pm4Family> Pm4Writer<S, F> {
    /// A writer of family `F` over `sink` (usually `&mut ring` or `&mut ib`).
    pub const fn with_family(sink: S) -> Self {
        Pm4Writer { sink, family: PhantomData }
    }

    /// The sink.
    pub fn sink(&self) -> &S {
        &self.sink
    }

    /// The sink, mutably.
    pub fn sink_mut(&mut self) -> &mut S {
        &mut self.sink
    }

    /// Give the sink back.
    pub fn into_sink(self) -> S {
        self.sink
    }

    #[inline(always)]
    pub(crate) fn emit(&mut self, header: u32, body: &[u32]) -> Result<(), Pm4Error> {
        Ok(self.sink.write_packet(header, body)?)
    }

    /// A register-write packet: the family's prefix, then `values`, all or nothing. Always
    /// inlined: the callers' value counts are constants, so the copy becomes plain stores.
    #[inline(always)]
    fn emit_registers(&mut self, write: RegisterWrite, values: &[u32]) -> Result<(), Pm4Error> {
        match write.index {
            None => self.emit(write.header, values),
            Some(index) => Ok(self.sink.write_parts(&[write.header, index], values)?),
        }
    }

    /// One register, by the family's register-write packet (R5xx: type-0 of count 1, 2
    /// dwords, §6.1.1; Evergreen: `SET_*` of one register, 3 dwords, §9.4).
    #[inline]
    pub fn write_reg<R: StreamRegister<F::Registers> + Writable + Scalar>(
        &mut self,
        value: R,
    ) -> Result<(), Pm4Error> {
        let write = F::register_write(R::OFFSET, 1)?;
        self.emit_registers(write, &[value.to_raw()])
    }

    /// Consecutive registers (a tuple, see [`RegisterRun`]) by one packet; the last element is
    /// the last register written, which R5xx §5.10 requires for `*_BUFSZ` triggers.
    #[inline]
    pub fn write_regs<T: RegisterRun<F::Registers>>(&mut self, regs: T) -> Result<(), Pm4Error> {
        let write = F::register_write(T::FIRST, T::LEN)?;
        let values = regs.values();
        self.emit_registers(write, values.as_ref())
    }

    /// Instance `index` of a register array, by one packet.
    #[inline]
    pub fn write_reg_at<R: StreamRegister<F::Registers> + Writable + Array>(
        &mut self,
        index: usize,
        value: R,
    ) -> Result<(), Pm4Error> {
        let write = F::register_write(R::offset_of(index)?, 1)?;
        self.emit_registers(write, &[value.to_raw()])
    }

    /// Instances `first..first + values.len()` of a register array by one packet (the array's
    /// stride must be 4).
    pub fn write_reg_array<R: StreamRegister<F::Registers> + Writable + Array>(
        &mut self,
        first: usize,
        values: &[R],
    ) -> Result<(), Pm4Error> {
        if R::STRIDE != 4 && values.len() > 1 {
            return Err(Pm4Error::NotConsecutive { register: R::NAME, stride: R::STRIDE });
        }
        let offset = R::offset_of(first)?;
        if let Some(last) = values.len().checked_sub(1) {
            R::offset_of(first + last)?;
        }
        let write = F::register_write(offset, values.len())?;
        self.sink.reserve(write.prefix_dwords() + values.len())?;
        self.sink.push(write.header)?;
        if let Some(index) = write.index {
            self.sink.push(index)?;
        }
        self.push_values(values)
    }

    /// Push `values` inside a grant the caller made.
    pub(crate) fn push_values<R: Register>(&mut self, values: &[R]) -> Result<(), Pm4Error> {
        for v in values {
            self.sink.push(v.to_raw())?;
        }
        Ok(())
    }

    /// One type-2 filler dword (R5xx §6.1.3, Evergreen §9.1.3).
    pub fn type2(&mut self) -> Result<(), Pm4Error> {
        self.filler(1)
    }

    /// `n` type-2 filler dwords, all or none.
    pub fn filler(&mut self, n: usize) -> Result<(), Pm4Error> {
        self.sink.reserve(n)?;
        for _ in 0..n {
            self.sink.push(TYPE2)?;
        }
        Ok(())
    }

    /// A type-3 packet of the family's table (`baregpu_regs::<family>::packets`; R5xx §6.1.4,
    /// Evergreen §9.1.4) with `body`, whose length must fit the packet's layout in the table
    /// ([`Pm4Error::Body`] otherwise; the packets' typed `Body`s always do). Another family's packet does not
    /// build (Evergreen's COND_EXEC is 0x22, R5xx's 0x21):
    ///
    /// ```compile_fail,E0308
    /// use baregpu_ring::pm4::{Pm4Writer, SliceSink};
    /// let mut buf = [0u32; 4];
    /// let mut w = Pm4Writer::new(SliceSink::new(&mut buf));
    /// let _ = w.packet(baregpu_regs::evergreen::packets::COND_EXEC, &[0]);
    /// ```
    #[inline]
    pub fn packet(&mut self, packet: Packet<F::Registers>, body: &[u32]) -> Result<(), Pm4Error> {
        check_count(body.len())?;
        packet.check_body(body.len())?;
        self.packet3(Opcode::of(packet), body)
    }

    /// A type-3 packet with any `opcode` (one a particular microcode adds) and `body`
    /// (1..=0x4000 dwords).
    #[inline]
    pub fn packet3(&mut self, opcode: Opcode, body: &[u32]) -> Result<(), Pm4Error> {
        let header = type3_header(opcode, body.len())? | F::TYPE3_FLAGS;
        self.emit(header, body)
    }

    /// A type-3 `NOP` skipping `body` (which the CP ignores): for markers in dumps.
    #[inline]
    pub fn nop(&mut self, body: &[u32]) -> Result<(), Pm4Error> {
        self.packet3(F::NOP, body)
    }
}

/// Why a stream could not be padded. Nothing was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum PadError {
    /// The alignment (in dwords) is not a power of two.
    BadAlignment {
        /// The requested alignment.
        alignment: usize,
    },
    /// No room for the fillers.
    NoSpace(NoSpace),
}

impl From<NoSpace> for PadError {
    fn from(e: NoSpace) -> Self {
        PadError::NoSpace(e)
    }
}

impl fmt::Display for PadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PadError::BadAlignment { alignment } => {
                write!(f, "alignment {alignment} is not a power of two")
            }
            PadError::NoSpace(_) => f.write_str("no room in the sink for the padding"),
        }
    }
}

impl core::error::Error for PadError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            PadError::NoSpace(e) => Some(e),
            _ => None,
        }
    }
}

/// Type-2 fillers needed to bring dword `position` to a multiple of `alignment` (a power of
/// two, in dwords).
#[inline]
pub const fn pad_count(position: usize, alignment: usize) -> Result<usize, PadError> {
    if !alignment.is_power_of_two() {
        return Err(PadError::BadAlignment { alignment });
    }
    Ok(position.wrapping_neg() & (alignment - 1))
}
