//! PM4 packet encoders (amd-r5xx-acceleration §6) and the [`Pm4Writer`] that emits them into any
//! [`CommandSink`] (a [`CommandRing`](crate::ring::CommandRing), an
//! [`IndirectBuffer`](crate::ib::IndirectBuffer) or a plain [`SliceSink`]).
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
//! [`Pm4Writer`] takes generated register values (`baregpu_regs::r5xx::*`), never raw offsets:
//! [`write_reg`](Pm4Writer::write_reg), [`write_regs`](Pm4Writer::write_regs) for consecutive
//! registers (a tuple, checked at compile time), [`write_reg_at`](Pm4Writer::write_reg_at) and
//! [`write_reg_array`](Pm4Writer::write_reg_array) for register arrays,
//! [`write_reg_repeated`](Pm4Writer::write_reg_repeated) for data ports (`ONE_REG_WR`), and
//! [`write_reg_pair`](Pm4Writer::write_reg_pair) (type 1). The raw header encoders
//! ([`type0_header`], …) are public for tests and device models.
//!
//! They take only [`R5xxRegister`]s: registers of the R5xx family at a fixed offset of the
//! register window. Another family's register does not build:
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

use baregpu_hal::{Absolute, Array, IndexOutOfRange, Register, Scalar, Writable};
use baregpu_regs::r5xx;

/// A register an R5xx PM4 stream can write: one of the R5xx family's registers at a fixed
/// offset of the register window (implemented for every such generated register).
pub trait R5xxRegister: Register<Family = r5xx::Family, Base = Absolute> {}

impl<R: Register<Family = r5xx::Family, Base = Absolute>> R5xxRegister for R {}

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

/// A type-3 `IT_OPCODE` (header bits 15:8, §6.1.4). The named constants are the §6.2.1 summary
/// table; [`Opcode::new`] builds others (microcode-specific packets).
///
/// Names that begin with a digit in the document (`3D_DRAW_VBUF`) keep it after a leading
/// underscore (`_3D_DRAW_VBUF`), so the vendor name stays searchable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Opcode(u8);

impl Opcode {
    /// §6.2.1 / §6.2.2.1 `NOP` 0x10: skip N dwords to get to the next packet.
    pub const NOP: Opcode = Opcode(0x10);
    /// §6.2.1 / §6.2.2.2 `PAINT` 0x91: paint rectangles with a colour brush.
    pub const PAINT: Opcode = Opcode(0x91);
    /// §6.2.1 / §6.2.2.8 `BITBLT` 0x92: copy a source rectangle to a destination rectangle.
    pub const BITBLT: Opcode = Opcode(0x92);
    /// §6.2.1 / §6.2.2.3 `HOSTDATA_BLT` 0x94: large characters or bitmaps to video memory.
    pub const HOSTDATA_BLT: Opcode = Opcode(0x94);
    /// §6.2.1 / §6.2.2.4 `POLYLINE` 0x95: lines connected at their ends.
    pub const POLYLINE: Opcode = Opcode(0x95);
    /// §6.2.1 / §6.2.2.5 `POLYSCANLINES` 0x98: polyscanlines or scanlines.
    pub const POLYSCANLINES: Opcode = Opcode(0x98);
    /// §6.2.1 / §6.2.2.6 `NEXTCHAR` 0x19: a character in the default colours.
    pub const NEXTCHAR: Opcode = Opcode(0x19);
    /// §6.2.1 / §6.2.2.7 `PAINT_MULTI` 0x9A: rectangles in one colour.
    pub const PAINT_MULTI: Opcode = Opcode(0x9A);
    /// §6.2.1 / §6.2.2.9 `BITBLT_MULTI` 0x9B: several source rectangles to destinations.
    pub const BITBLT_MULTI: Opcode = Opcode(0x9B);
    /// §6.2.1 / §6.2.2.10 `TRANS_BITBLT` 0x9C: transparent bitblt.
    pub const TRANS_BITBLT: Opcode = Opcode(0x9C);
    /// §6.2.1 / §6.2.2.11 `PLY_NEXTSCAN` 0x1D: polyscanlines with the current settings.
    pub const PLY_NEXTSCAN: Opcode = Opcode(0x1D);
    /// §6.2.1 / §6.2.2.13 `SET_SCISSORS` 0x1E: set up scissors.
    pub const SET_SCISSORS: Opcode = Opcode(0x1E);
    /// §6.2.1 / §6.2.4 `PRED_EXEC` 0x20: predicated execution of the following packets.
    pub const PRED_EXEC: Opcode = Opcode(0x20);
    /// §6.2.1 / §6.2.5.1 `COND_EXEC` 0x21: conditional execution (uses IB2; not from an IB2).
    pub const COND_EXEC: Opcode = Opcode(0x21);
    /// §6.2.1 / §6.2.4.1 `WAIT_SEMAPHORE` 0x22: wait for a micro-engine semaphore to be zero.
    pub const WAIT_SEMAPHORE: Opcode = Opcode(0x22);
    /// §6.2.1 / §6.2.5.2 `WAIT_MEM` 0x23: wait for a memory semaphore (uses IB2; not from an IB2).
    pub const WAIT_MEM: Opcode = Opcode(0x23);
    /// §6.2.1 / §6.2.3.1 `3D_DRAW_VBUF` 0x28: draw primitives from a vertex buffer.
    pub const _3D_DRAW_VBUF: Opcode = Opcode(0x28);
    /// §6.2.1 / §6.2.3.2 `3D_DRAW_IMMD` 0x29: draw primitives from vertices in the packet.
    pub const _3D_DRAW_IMMD: Opcode = Opcode(0x29);
    /// §6.2.1 / §6.2.3.3 `3D_DRAW_INDX` 0x2A: vertex buffer and indices in the packet.
    pub const _3D_DRAW_INDX: Opcode = Opcode(0x2A);
    /// §6.2.1 / §6.2.2.12 `LOAD_PALETTE` 0x2C: load a palette for 2D scaling.
    pub const LOAD_PALETTE: Opcode = Opcode(0x2C);
    /// §6.2.1 / §6.2.3.9 `3D_LOAD_VBPNTR` 0x2F: load pointers to vertex buffers.
    pub const _3D_LOAD_VBPNTR: Opcode = Opcode(0x2F);
    /// §6.2.1 / §6.2.3.11 `INDX_BUFFER` 0x33: load indices through indirect buffer #2.
    pub const INDX_BUFFER: Opcode = Opcode(0x33);
    /// §6.2.1 / §6.2.3.4 `3D_DRAW_VBUF_2` 0x34: `3D_DRAW_VBUF` without `VAP_VTX_FMT`.
    pub const _3D_DRAW_VBUF_2: Opcode = Opcode(0x34);
    /// §6.2.1 / §6.2.3.5 `3D_DRAW_IMMD_2` 0x35: `3D_DRAW_IMMD` without `VAP_VTX_FMT`.
    pub const _3D_DRAW_IMMD_2: Opcode = Opcode(0x35);
    /// §6.2.1 / §6.2.3.6 `3D_DRAW_INDX_2` 0x36: `3D_DRAW_INDX` without `VAP_VTX_FMT`.
    pub const _3D_DRAW_INDX_2: Opcode = Opcode(0x36);
    /// §6.2.1 / §6.2.3.10 `3D_CLEAR_HIZ` 0x37: clear part of the hierarchical Z RAM.
    pub const _3D_CLEAR_HIZ: Opcode = Opcode(0x37);
    /// §6.2.1 / §6.2.3.7 `3D_DRAW_128` 0x39: draw through the 128-bit VAP data port.
    pub const _3D_DRAW_128: Opcode = Opcode(0x39);
    /// §6.2.1 / §6.2.3.12 `MPEG_INDEX` 0x3A: packed MPEG register writes and index generation.
    pub const MPEG_INDEX: Opcode = Opcode(0x3A);

    /// Every opcode of the §6.2.1 summary table, by its document name, in table order.
    pub const ALL: &'static [(&'static str, Opcode)] = &[
        ("NOP", Self::NOP),
        ("PAINT", Self::PAINT),
        ("BITBLT", Self::BITBLT),
        ("HOSTDATA_BLT", Self::HOSTDATA_BLT),
        ("POLYLINE", Self::POLYLINE),
        ("POLYSCANLINES", Self::POLYSCANLINES),
        ("NEXTCHAR", Self::NEXTCHAR),
        ("PAINT_MULTI", Self::PAINT_MULTI),
        ("BITBLT_MULTI", Self::BITBLT_MULTI),
        ("TRANS_BITBLT", Self::TRANS_BITBLT),
        ("PLY_NEXTSCAN", Self::PLY_NEXTSCAN),
        ("SET_SCISSORS", Self::SET_SCISSORS),
        ("PRED_EXEC", Self::PRED_EXEC),
        ("COND_EXEC", Self::COND_EXEC),
        ("WAIT_SEMAPHORE", Self::WAIT_SEMAPHORE),
        ("WAIT_MEM", Self::WAIT_MEM),
        ("3D_DRAW_VBUF", Self::_3D_DRAW_VBUF),
        ("3D_DRAW_IMMD", Self::_3D_DRAW_IMMD),
        ("3D_DRAW_INDX", Self::_3D_DRAW_INDX),
        ("LOAD_PALETTE", Self::LOAD_PALETTE),
        ("3D_LOAD_VBPNTR", Self::_3D_LOAD_VBPNTR),
        ("INDX_BUFFER", Self::INDX_BUFFER),
        ("3D_DRAW_VBUF_2", Self::_3D_DRAW_VBUF_2),
        ("3D_DRAW_IMMD_2", Self::_3D_DRAW_IMMD_2),
        ("3D_DRAW_INDX_2", Self::_3D_DRAW_INDX_2),
        ("3D_CLEAR_HIZ", Self::_3D_CLEAR_HIZ),
        ("3D_DRAW_128", Self::_3D_DRAW_128),
        ("MPEG_INDEX", Self::MPEG_INDEX),
    ];

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

/// A sink had no room for a whole packet (or a dword was pushed outside a reservation);
/// nothing was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct NoSpace {
    /// Dwords requested.
    pub needed: usize,
    /// Dwords available when the request was made.
    pub free: usize,
}

impl fmt::Display for NoSpace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "no room for {} dwords ({} free)", self.needed, self.free)
    }
}

impl core::error::Error for NoSpace {}

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
    /// The sink has no room for the whole packet.
    NoSpace(NoSpace),
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
            Pm4Error::NoSpace(_) => f.write_str("no room in the sink for the packet"),
        }
    }
}

impl core::error::Error for Pm4Error {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Pm4Error::Index(e) => Some(e),
            Pm4Error::NoSpace(e) => Some(e),
            _ => None,
        }
    }
}

const fn check_count(count: usize) -> Result<u32, Pm4Error> {
    if count == 0 || count > MAX_BODY_DWORDS {
        Err(Pm4Error::BadCount { count })
    } else {
        Ok((count as u32 - 1) << COUNT_SHIFT)
    }
}

const fn check_offset(offset: usize, max: usize) -> Result<u32, Pm4Error> {
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
pub const fn type3_header(opcode: Opcode, count: usize) -> Result<u32, Pm4Error> {
    match check_count(count) {
        Ok(c) => Ok(3 << TYPE_SHIFT | c | (opcode.0 as u32) << 8),
        Err(e) => Err(e),
    }
}

/// Somewhere packets go: a ring, an indirect buffer, a stack buffer.
///
/// The protocol is reserve-then-push: [`reserve`](Self::reserve) grants room for a whole packet
/// (or fails with [`NoSpace`] without touching memory), then the packet's dwords are
/// [`push`](Self::push)ed inside that grant. A push outside any grant fails with [`NoSpace`]
/// and writes nothing, so a sink never overwrites memory it did not grant (for a ring: dwords
/// the device has not consumed yet).
pub trait CommandSink {
    /// Grant room for the next `dwords` pushes, replacing any earlier unused grant; on error
    /// nothing changes.
    fn reserve(&mut self, dwords: usize) -> Result<(), NoSpace>;

    /// Append one dword inside the current grant.
    fn push(&mut self, dword: u32) -> Result<(), NoSpace>;

    /// Append a whole packet, `header` then `body`, or nothing ([`NoSpace`]). Same effect as
    /// `reserve(1 + body.len())` and the pushes; sinks override it with a faster path.
    #[inline]
    fn write_packet(&mut self, header: u32, body: &[u32]) -> Result<(), NoSpace> {
        self.reserve(1 + body.len())?;
        self.push(header)?;
        self.push_slice(body)
    }

    /// Append dwords inside the current grant. The sinks of this crate check the whole slice
    /// against the grant first (all or none); this default pushes one by one and stops at the
    /// first error.
    fn push_slice(&mut self, dwords: &[u32]) -> Result<(), NoSpace> {
        for &d in dwords {
            self.push(d)?;
        }
        Ok(())
    }
}

impl<S: CommandSink + ?Sized> CommandSink for &mut S {
    fn reserve(&mut self, dwords: usize) -> Result<(), NoSpace> {
        (**self).reserve(dwords)
    }
    fn push(&mut self, dword: u32) -> Result<(), NoSpace> {
        (**self).push(dword)
    }
    fn push_slice(&mut self, dwords: &[u32]) -> Result<(), NoSpace> {
        (**self).push_slice(dwords)
    }
    #[inline]
    fn write_packet(&mut self, header: u32, body: &[u32]) -> Result<(), NoSpace> {
        (**self).write_packet(header, body)
    }
}

/// A [`CommandSink`] over a caller's `[u32]` (stack buffers, PIO staging, benchmarks).
#[derive(Debug)]
pub struct SliceSink<'a> {
    buf: &'a mut [u32],
    len: usize,
    granted: usize,
}

impl<'a> SliceSink<'a> {
    /// An empty sink writing from the start of `buf`.
    pub fn new(buf: &'a mut [u32]) -> Self {
        SliceSink { buf, len: 0, granted: 0 }
    }

    /// The dwords written so far.
    pub fn written(&self) -> &[u32] {
        &self.buf[..self.len]
    }

    /// Number of dwords written.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Forget the contents (the buffer is reused from its start).
    pub fn clear(&mut self) {
        self.len = 0;
        self.granted = 0;
    }
}

impl CommandSink for SliceSink<'_> {
    #[inline]
    fn write_packet(&mut self, header: u32, body: &[u32]) -> Result<(), NoSpace> {
        let n = 1 + body.len();
        let free = self.buf.len() - self.len;
        if n > free {
            return Err(NoSpace { needed: n, free });
        }
        let dst = &mut self.buf[self.len..self.len + n];
        dst[0] = header;
        dst[1..].copy_from_slice(body);
        self.len += n;
        self.granted = 0;
        Ok(())
    }

    #[inline]
    fn reserve(&mut self, dwords: usize) -> Result<(), NoSpace> {
        let free = self.buf.len() - self.len;
        if dwords > free {
            return Err(NoSpace { needed: dwords, free });
        }
        self.granted = dwords;
        Ok(())
    }

    #[inline]
    fn push(&mut self, dword: u32) -> Result<(), NoSpace> {
        if self.granted == 0 {
            return Err(NoSpace { needed: 1, free: 0 });
        }
        self.buf[self.len] = dword;
        self.len += 1;
        self.granted -= 1;
        Ok(())
    }

    #[inline]
    fn push_slice(&mut self, dwords: &[u32]) -> Result<(), NoSpace> {
        if dwords.len() > self.granted {
            return Err(NoSpace { needed: dwords.len(), free: self.granted });
        }
        self.buf[self.len..self.len + dwords.len()].copy_from_slice(dwords);
        self.len += dwords.len();
        self.granted -= dwords.len();
        Ok(())
    }
}

/// Registers written by one type-0 packet: a tuple of consecutive writable registers, e.g.
/// `(CP_IB_BASE, CP_IB_BUFSZ)`. Consecutiveness (each register 4 bytes after the previous one)
/// is checked when the tuple type is used, at compile time:
///
/// ```compile_fail,E0080
/// use baregpu_ring::pm4::{Pm4Writer, SliceSink};
/// use baregpu_regs::r5xx::cp::{CP_IB2_BASE, CP_IB_BUFSZ};
/// let mut buf = [0u32; 4];
/// let mut w = Pm4Writer::new(SliceSink::new(&mut buf));
/// // 0x730 and 0x73c are not adjacent: does not build.
/// let _ = w.write_regs((CP_IB2_BASE::from_raw(0), CP_IB_BUFSZ::from_raw(0)));
/// ```
pub trait RegisterRun: Copy {
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
        impl<$($t: R5xxRegister + Writable + Scalar),+> RegisterRun for ($($t,)+) {
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
#[derive(Debug)]
pub struct Pm4Writer<S> {
    sink: S,
}

impl<S: CommandSink> Pm4Writer<S> {
    /// A writer over `sink` (usually `&mut ring` or `&mut ib`).
    pub const fn new(sink: S) -> Self {
        Pm4Writer { sink }
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

    #[inline]
    fn emit(&mut self, header: u32, body: &[u32]) -> Result<(), Pm4Error> {
        Ok(self.sink.write_packet(header, body)?)
    }

    /// One register, by a type-0 packet of count 1 (2 dwords, §6.1.1).
    #[inline]
    pub fn write_reg<R: R5xxRegister + Writable + Scalar>(
        &mut self,
        value: R,
    ) -> Result<(), Pm4Error> {
        let header = type0_header(R::OFFSET, 1, false)?;
        self.emit(header, &[value.to_raw()])
    }

    /// Consecutive registers (a tuple, see [`RegisterRun`]) by one type-0 packet; the last
    /// element is the last register written, which §5.10 requires for `*_BUFSZ` triggers.
    #[inline]
    pub fn write_regs<T: RegisterRun>(&mut self, regs: T) -> Result<(), Pm4Error> {
        let header = type0_header(T::FIRST, T::LEN, false)?;
        let values = regs.values();
        self.emit(header, values.as_ref())
    }

    /// Instance `index` of a register array, by a type-0 packet of count 1.
    #[inline]
    pub fn write_reg_at<R: R5xxRegister + Writable + Array>(
        &mut self,
        index: usize,
        value: R,
    ) -> Result<(), Pm4Error> {
        let header = type0_header(R::offset_of(index)?, 1, false)?;
        self.emit(header, &[value.to_raw()])
    }

    /// Instances `first..first + values.len()` of a register array by one type-0 packet (the
    /// array's stride must be 4).
    pub fn write_reg_array<R: R5xxRegister + Writable + Array>(
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
        let header = type0_header(offset, values.len(), false)?;
        self.emit_typed(header, values)
    }

    /// Every value to the same register (a data port), one type-0 packet with `ONE_REG_WR`
    /// (§6.1.1 bit 15).
    pub fn write_reg_repeated<R: R5xxRegister + Writable + Scalar>(
        &mut self,
        values: &[R],
    ) -> Result<(), Pm4Error> {
        let header = type0_header(R::OFFSET, values.len(), true)?;
        self.emit_typed(header, values)
    }

    fn emit_typed<R: Register>(&mut self, header: u32, values: &[R]) -> Result<(), Pm4Error> {
        self.sink.reserve(1 + values.len())?;
        self.sink.push(header)?;
        for v in values {
            self.sink.push(v.to_raw())?;
        }
        Ok(())
    }

    /// Two arbitrary registers (each at most [`TYPE1_MAX_OFFSET`]) by one type-1 packet
    /// (3 dwords, §6.1.2); `second` is written last.
    pub fn write_reg_pair<
        A: R5xxRegister + Writable + Scalar,
        B: R5xxRegister + Writable + Scalar,
    >(
        &mut self,
        first: A,
        second: B,
    ) -> Result<(), Pm4Error> {
        let header = type1_header(A::OFFSET, B::OFFSET)?;
        self.emit(header, &[first.to_raw(), second.to_raw()])
    }

    /// One type-2 filler dword (§6.1.3).
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

    /// A type-3 packet (§6.1.4): `opcode` with `body` (1..=0x4000 dwords).
    #[inline]
    pub fn packet3(&mut self, opcode: Opcode, body: &[u32]) -> Result<(), Pm4Error> {
        let header = type3_header(opcode, body.len())?;
        self.emit(header, body)
    }

    /// A type-3 `NOP` (§6.2.2.1) skipping `body` (which the CP ignores): for markers in dumps.
    #[inline]
    pub fn nop(&mut self, body: &[u32]) -> Result<(), Pm4Error> {
        self.packet3(Opcode::NOP, body)
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
pub const fn pad_count(position: usize, alignment: usize) -> Result<usize, PadError> {
    if !alignment.is_power_of_two() {
        return Err(PadError::BadAlignment { alignment });
    }
    Ok(position.wrapping_neg() & (alignment - 1))
}
