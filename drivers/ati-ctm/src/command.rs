//! CTM command buffers (ATI CTM Guide ch. 2.2, Table 3, §2.2.1–§2.2.3).
//!
//! A CTM command buffer is "a tightly packed region in memory interpreted as a sequence of
//! commands and their parameters" (§2.2): one 32-bit opcode word followed by a fixed number of
//! 32-bit parameters. Every command of Table 3 is a [`Command`] variant and a method of
//! [`CtmCommands`], which is implemented for every [`CommandSink`] (e.g. [`CommandBuffer`]).
//!
//! Parameters are typed: [`GpuAddress`] (2K-aligned, §2.2.2), [`Format`] (pitch, tiling, data
//! format, §2.2.2), [`Domain`] (§2.2.1 `set_domain`), [`InputIndex`], [`OutputIndex`],
//! [`Height`], [`OutputMask`], [`CondTest`], [`CondLoc`] (§2.2.3). Reserved parameters and
//! reserved bits are always written as zero.
//!
//! Emission is all-or-nothing: if the whole command (opcode and every parameter) does not fit,
//! nothing is written and [`CtmError::NoSpace`] is returned.

use core::fmt;

/// Errors of the command builders and of [`Command::decode`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum CtmError {
    /// A base address is not 2K-aligned (§2.2.2: bits 10:0 are reserved; CTM would silently
    /// treat them as zero, so they are rejected rather than truncated).
    Misaligned {
        /// The offending address.
        addr: u32,
        /// The required alignment in bytes (2048).
        align: u32,
    },
    /// A pitch whose lowest two bits are not zero (§2.2.2: "the pitch is given in multiples of
    /// 4").
    PitchNotMultipleOf4 {
        /// The offending pitch, in elements.
        pitch: u32,
    },
    /// A pitch that does not fit the 13-bit field (bits 12:2 of the format word, §2.2.2).
    PitchOutOfRange {
        /// The offending pitch, in elements.
        pitch: u32,
        /// The largest encodable pitch (8188).
        max: u32,
    },
    /// A `set_domain` coordinate that does not fit its 12 bits (§2.2.1).
    DomainOutOfRange {
        /// Which coordinate (`"i0"`, `"j0"`, `"i1"` or `"j1"`).
        coord: &'static str,
        /// The offending value.
        value: u32,
    },
    /// A domain whose lower corner is past its upper corner (`i0 > i1` or `j0 > j1`); the
    /// rectangle of §2.1.2 would be empty.
    DomainInverted {
        /// `'i'` or `'j'`.
        axis: char,
        /// The lower bound (`i0` or `j0`).
        lo: u32,
        /// The upper bound (`i1` or `j1`).
        hi: u32,
    },
    /// An input (0..16) or output (0..4) index out of range (§2.1.4, §2.2.2).
    BadIndex {
        /// `"input"` or `"output"`.
        kind: &'static str,
        /// The offending index.
        index: u32,
        /// The number of valid indices.
        limit: u32,
    },
    /// A height that does not fit its 13 bits (§2.2.2, bits 12:0).
    HeightOutOfRange {
        /// The offending height.
        height: u32,
        /// The largest encodable height (8191).
        max: u32,
    },
    /// A write mask with bits outside the documented channels (§2.2.2 `set_out_mask`: bits
    /// 3:0; `set_cond_out_mask`: bit 0).
    BadMask {
        /// The offending mask.
        mask: u32,
        /// The largest valid mask.
        max: u32,
    },
    /// 2x2 superfine tiling on a multi-channel data format: undefined behaviour (§2.1.4).
    SuperfineMultiChannel {
        /// The multi-channel data format.
        format: DataFormat,
    },
    /// 2x2 superfine tiling on a client other than a program input: ignored by CTM (§2.1.4),
    /// so almost certainly a mistake; rejected.
    SuperfineNotInput {
        /// The command that carried the superfine tiling.
        opcode: Opcode,
    },
    /// Not enough room left in the sink for the whole command.
    NoSpace {
        /// Words the command needs.
        needed: usize,
        /// Words left in the sink.
        available: usize,
    },
    /// Decoding: a word that is not one of the opcodes of Table 3.
    UnknownOpcode {
        /// The word.
        word: u32,
    },
    /// Decoding: the buffer ends inside a command.
    Truncated {
        /// Words the command needs.
        needed: usize,
        /// Words left in the buffer.
        available: usize,
    },
    /// Decoding: a parameter has reserved bits set.
    ReservedBitsSet {
        /// The opcode of the command.
        opcode: Opcode,
        /// The index of the parameter (0-based).
        param: usize,
        /// The parameter word.
        word: u32,
    },
    /// Decoding: an enumerated field holds a reserved value (tiling, data format ≥ 5, ...).
    BadEnum {
        /// The field name.
        field: &'static str,
        /// The reserved value.
        value: u32,
    },
}

impl fmt::Display for CtmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Misaligned { addr, align } => {
                write!(f, "address {addr:#010x} is not {align}-byte aligned (§2.2.2)")
            }
            Self::PitchNotMultipleOf4 { pitch } => {
                write!(f, "pitch {pitch} is not a multiple of 4 (§2.2.2)")
            }
            Self::PitchOutOfRange { pitch, max } => {
                write!(f, "pitch {pitch} exceeds the maximum {max} (§2.2.2)")
            }
            Self::DomainOutOfRange { coord, value } => {
                write!(f, "domain {coord} = {value} does not fit 12 bits (§2.2.1)")
            }
            Self::DomainInverted { axis, lo, hi } => {
                write!(f, "domain {axis}0 = {lo} is greater than {axis}1 = {hi} (§2.1.2)")
            }
            Self::BadIndex { kind, index, limit } => {
                write!(f, "{kind} index {index} out of range 0..{limit} (§2.1.4)")
            }
            Self::HeightOutOfRange { height, max } => {
                write!(f, "height {height} exceeds the maximum {max} (§2.2.2)")
            }
            Self::BadMask { mask, max } => {
                write!(f, "write mask {mask:#x} has bits above {max:#x} (§2.2.2)")
            }
            Self::SuperfineMultiChannel { format } => write!(
                f,
                "2x2 superfine tiling on multi-channel format {format:?} is undefined (§2.1.4)"
            ),
            Self::SuperfineNotInput { opcode } => write!(
                f,
                "2x2 superfine tiling only applies to inputs, not {} (§2.1.4)",
                opcode.name()
            ),
            Self::NoSpace { needed, available } => {
                write!(f, "command needs {needed} words but only {available} are free")
            }
            Self::UnknownOpcode { word } => {
                write!(f, "{word:#010x} is not a CTM opcode (Table 3)")
            }
            Self::Truncated { needed, available } => {
                write!(f, "command needs {needed} words but the buffer has only {available}")
            }
            Self::ReservedBitsSet { opcode, param, word } => write!(
                f,
                "{} parameter {param} = {word:#010x} has reserved bits set",
                opcode.name()
            ),
            Self::BadEnum { field, value } => write!(f, "{field} value {value} is reserved"),
        }
    }
}

impl core::error::Error for CtmError {}

/// The CTM unit a command belongs to (the three groups of Table 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Unit {
    /// Processor Execution Unit commands (§2.2.1).
    ProcessorExecution,
    /// Memory Controller Unit commands (§2.2.2).
    MemoryController,
    /// Conditional Output Unit commands (§2.2.3).
    ConditionalOutput,
}

macro_rules! opcodes {
    ($( $(#[$doc:meta])* $variant:ident / $konst:ident = $word:literal, $name:literal, $params:literal, $unit:ident, $pipelined:literal; )*) => {
        /// The CTM opcodes of Table 3. The discriminant is the opcode byte (bits 15:8 of the
        /// opcode word); [`Opcode::word`] is the full documented opcode word.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[cfg_attr(feature = "defmt", derive(defmt::Format))]
        #[repr(u8)]
        pub enum Opcode {
            $( $(#[$doc])* $variant = ((($word as u32) >> 8) & 0xFF) as u8, )*
        }

        impl Opcode {
            /// Every opcode of Table 3, in table order.
            pub const ALL: [Opcode; 27] = [ $( Opcode::$variant, )* ];

            /// The full opcode word exactly as printed in Table 3.
            pub const fn word(self) -> u32 {
                match self { $( Opcode::$variant => $word as u32, )* }
            }

            /// The command name of Table 3 (e.g. `"set_domain"`).
            pub const fn name(self) -> &'static str {
                match self { $( Opcode::$variant => $name, )* }
            }

            /// The number of parameters listed for the command in Table 3 and §2.2.x.
            ///
            /// For every command except `init_perf_counters` and `read_perf_counters` this
            /// equals bits 29:16 of the opcode word plus one (the PM4 type-3 `COUNT` field);
            /// for those two Table 3 prints `x'C001..` yet lists one parameter. The builders
            /// follow the parameter lists (see the crate documentation).
            pub const fn param_count(self) -> usize {
                match self { $( Opcode::$variant => $params, )* }
            }

            /// The unit the command is addressed to (Table 3 grouping).
            pub const fn unit(self) -> Unit {
                match self { $( Opcode::$variant => Unit::$unit, )* }
            }

            /// The "Pipelined" column of Table 3: `false` means the command must follow a
            /// `wait_for_idle` and precede the next `start_program` to be predictable (§2.2).
            pub const fn pipelined(self) -> bool {
                match self { $( Opcode::$variant => $pipelined, )* }
            }

            /// The opcode whose documented word is exactly `word`.
            pub const fn from_word(word: u32) -> Option<Opcode> {
                $( if word == $word as u32 { return Some(Opcode::$variant); } )*
                None
            }
        }

        /// Named opcode words of Table 3.
        pub mod opcode {
            $( $(#[$doc])* pub const $konst: u32 = $word as u32; )*
        }
    };
}

opcodes! {
    /// `init_perf_counters` x'C0010200 (Table 3, §2.2.1): parameter 0 bit 0 enables counters.
    InitPerfCounters / INIT_PERF_COUNTERS = 0xC001_0200, "init_perf_counters", 1, ProcessorExecution, true;
    /// `start_perf_counters` x'C0000300 (Table 3, §2.2.1): zero and start the counters.
    StartPerfCounters / START_PERF_COUNTERS = 0xC000_0300, "start_perf_counters", 1, ProcessorExecution, true;
    /// `stop_perf_counters` x'C0000400 (Table 3, §2.2.1): stop the counters.
    StopPerfCounters / STOP_PERF_COUNTERS = 0xC000_0400, "stop_perf_counters", 1, ProcessorExecution, true;
    /// `read_perf_counters` x'C0010500 (Table 3, §2.2.1): write the counters at a 2K-aligned
    /// GPU address (total clocks, then active clocks; §2.1.2). Not pipelined.
    ReadPerfCounters / READ_PERF_COUNTERS = 0xC001_0500, "read_perf_counters", 1, ProcessorExecution, false;
    /// `set_cond_val` x'C0000600 (Table 3, §2.2.1): the PE's conditional value.
    SetCondVal / SET_COND_VAL = 0xC000_0600, "set_cond_val", 1, ProcessorExecution, true;
    /// `set_domain` x'C0030700 (Table 3, §2.2.1): i0, j0, i1, j1 (12 bits each).
    SetDomain / SET_DOMAIN = 0xC003_0700, "set_domain", 4, ProcessorExecution, true;
    /// `start_program` x'C0000800 (Table 3, §2.2.1): run the program over the domain.
    StartProgram / START_PROGRAM = 0xC000_0800, "start_program", 1, ProcessorExecution, true;
    /// `wait_for_idle` x'C0000900 (Table 3, §2.2.1): block until the DPP is idle.
    WaitForIdle / WAIT_FOR_IDLE = 0xC000_0900, "wait_for_idle", 1, ProcessorExecution, true;
    /// `set_inst_fmt` x'C0010A00 (Table 3, §2.2.2): base address, format of the instructions.
    SetInstFmt / SET_INST_FMT = 0xC001_0A00, "set_inst_fmt", 2, MemoryController, false;
    /// `set_inp_fmt` x'C0030B00 (Table 3, §2.2.2): input index, base, format, height.
    SetInpFmt / SET_INP_FMT = 0xC003_0B00, "set_inp_fmt", 4, MemoryController, false;
    /// `set_out_fmt` x'C0030C00 (Table 3, §2.2.2): output index, base, format, height.
    SetOutFmt / SET_OUT_FMT = 0xC003_0C00, "set_out_fmt", 4, MemoryController, false;
    /// `set_cond_out_fmt` x'C0020D00 (Table 3, §2.2.2): base, format, height.
    SetCondOutFmt / SET_COND_OUT_FMT = 0xC002_0D00, "set_cond_out_fmt", 3, MemoryController, false;
    /// `set_constf_fmt` x'C0010E00 (Table 3, §2.2.2): float constants base, format.
    SetConstfFmt / SET_CONSTF_FMT = 0xC001_0E00, "set_constf_fmt", 2, MemoryController, false;
    /// `set_consti_fmt` x'C0010F00 (Table 3, §2.2.2): integer constants base, format.
    SetConstiFmt / SET_CONSTI_FMT = 0xC001_0F00, "set_consti_fmt", 2, MemoryController, false;
    /// `set_constb_fmt` x'C0011000 (Table 3, §2.2.2): boolean constants base, format.
    SetConstbFmt / SET_CONSTB_FMT = 0xC001_1000, "set_constb_fmt", 2, MemoryController, false;
    /// `inv_inst_cache` x'C0001100 (Table 3, §2.2.2).
    InvInstCache / INV_INST_CACHE = 0xC000_1100, "inv_inst_cache", 1, MemoryController, true;
    /// `inv_constf_cache` x'C0001200 (Table 3, §2.2.2).
    InvConstfCache / INV_CONSTF_CACHE = 0xC000_1200, "inv_constf_cache", 1, MemoryController, true;
    /// `inv_consti_cache` x'C0001300 (Table 3, §2.2.2).
    InvConstiCache / INV_CONSTI_CACHE = 0xC000_1300, "inv_consti_cache", 1, MemoryController, true;
    /// `inv_constb_cache` x'C0001400 (Table 3, §2.2.2).
    InvConstbCache / INV_CONSTB_CACHE = 0xC000_1400, "inv_constb_cache", 1, MemoryController, true;
    /// `inv_cond_out_cache` x'C0001500 (Table 3, §2.2.2).
    InvCondOutCache / INV_COND_OUT_CACHE = 0xC000_1500, "inv_cond_out_cache", 1, MemoryController, true;
    /// `inv_inp_cache` x'C0001600 (Table 3, §2.2.2).
    InvInpCache / INV_INP_CACHE = 0xC000_1600, "inv_inp_cache", 1, MemoryController, true;
    /// `flush_out_cache` x'C0001700 (Table 3, §2.2.2).
    FlushOutCache / FLUSH_OUT_CACHE = 0xC000_1700, "flush_out_cache", 1, MemoryController, true;
    /// `flush_cond_out_cache` x'C0001800 (Table 3, §2.2.2).
    FlushCondOutCache / FLUSH_COND_OUT_CACHE = 0xC000_1800, "flush_cond_out_cache", 1, MemoryController, true;
    /// `set_out_mask` x'C0001900 (Table 3, §2.2.2): per-channel output write mask.
    SetOutMask / SET_OUT_MASK = 0xC000_1900, "set_out_mask", 1, MemoryController, true;
    /// `set_cond_out_mask` x'C0001A00 (Table 3, §2.2.2): conditional output write mask.
    SetCondOutMask / SET_COND_OUT_MASK = 0xC000_1A00, "set_cond_out_mask", 1, MemoryController, true;
    /// `set_cond_test` x'C0001B00 (Table 3, §2.2.3): the CO test.
    SetCondTest / SET_COND_TEST = 0xC000_1B00, "set_cond_test", 1, ConditionalOutput, true;
    /// `set_cond_loc` x'C0001C00 (Table 3, §2.2.3): test for the PE or the DPP.
    SetCondLoc / SET_COND_LOC = 0xC000_1C00, "set_cond_loc", 1, ConditionalOutput, true;
}

/// A 2K-aligned GPU (MC) address, as every base address parameter of §2.2.2 (bits 31:11;
/// bits 10:0 reserved).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct GpuAddress(u32);

impl GpuAddress {
    /// The required alignment: 2048 bytes (§2.2.2).
    pub const ALIGN: u32 = 2048;
    /// Address zero.
    pub const ZERO: GpuAddress = GpuAddress(0);

    /// `addr` if it is 2K-aligned, else [`CtmError::Misaligned`] (never truncated).
    pub const fn new(addr: u32) -> Result<Self, CtmError> {
        if addr.is_multiple_of(Self::ALIGN) {
            Ok(Self(addr))
        } else {
            Err(CtmError::Misaligned { addr, align: Self::ALIGN })
        }
    }

    /// The address (also the parameter word: bits 10:0 are zero).
    pub const fn get(self) -> u32 {
        self.0
    }
}

/// Tiling format, bits 17:16 of a format word (§2.2.2); the address translation is Table 1
/// (linear) or Table 2 (tiled), §2.1.4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(u8)]
pub enum Tiling {
    /// 0 — `LINEAR` (Table 1).
    Linear = 0,
    /// 1 — `TILED` (Table 2).
    Tiled = 1,
    /// 2 — `LINEAR_INP_2X2`: linear with 2x2 superfine tiling (single-channel inputs only).
    LinearInp2x2 = 2,
    /// 3 — `TILED_INP_2X2`: tiled with 2x2 superfine tiling (single-channel inputs only).
    TiledInp2x2 = 3,
}

impl Tiling {
    /// Whether the base translation is Table 2 (tiled).
    pub const fn is_tiled(self) -> bool {
        matches!(self, Tiling::Tiled | Tiling::TiledInp2x2)
    }

    /// Whether the 2x2 superfine option is set (§2.1.4).
    pub const fn is_superfine(self) -> bool {
        matches!(self, Tiling::LinearInp2x2 | Tiling::TiledInp2x2)
    }

    /// The tiling for field value `v` (0..=3).
    pub const fn from_bits(v: u32) -> Option<Tiling> {
        match v {
            0 => Some(Tiling::Linear),
            1 => Some(Tiling::Tiled),
            2 => Some(Tiling::LinearInp2x2),
            3 => Some(Tiling::TiledInp2x2),
            _ => None,
        }
    }
}

/// Data format, bits 26:24 of a format word (§2.2.2); values 5..=7 are reserved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(u8)]
pub enum DataFormat {
    /// 0 — `UINT16_1`: one 16-bit channel, 2 bytes per element.
    Uint16x1 = 0,
    /// 1 — `UINT8_4`: four 8-bit channels, 4 bytes per element.
    Uint8x4 = 1,
    /// 2 — `FLOAT32_1`: one float, 4 bytes per element.
    Float32x1 = 2,
    /// 3 — `FLOAT32_2`: two floats, 8 bytes per element.
    Float32x2 = 3,
    /// 4 — `FLOAT32_4`: four floats, 16 bytes per element.
    Float32x4 = 4,
}

impl DataFormat {
    /// Bytes per element ("bpe", §2.1.4), derived from the format name.
    pub const fn bytes_per_element(self) -> u32 {
        match self {
            DataFormat::Uint16x1 => 2,
            DataFormat::Uint8x4 | DataFormat::Float32x1 => 4,
            DataFormat::Float32x2 => 8,
            DataFormat::Float32x4 => 16,
        }
    }

    /// Number of channels, from the format name (`_1`, `_2`, `_4`).
    pub const fn channels(self) -> u32 {
        match self {
            DataFormat::Uint16x1 | DataFormat::Float32x1 => 1,
            DataFormat::Float32x2 => 2,
            DataFormat::Uint8x4 | DataFormat::Float32x4 => 4,
        }
    }

    /// The format for field value `v` (0..=4; 5..=7 reserved).
    pub const fn from_bits(v: u32) -> Option<DataFormat> {
        match v {
            0 => Some(DataFormat::Uint16x1),
            1 => Some(DataFormat::Uint8x4),
            2 => Some(DataFormat::Float32x1),
            3 => Some(DataFormat::Float32x2),
            4 => Some(DataFormat::Float32x4),
            _ => None,
        }
    }
}

/// A format parameter (§2.2.2): pitch (bits 12:2), tiling (17:16), data format (26:24).
///
/// The pitch is the number of elements in a row (§2.1.4) and must be a multiple of 4 ("the
/// lowest two bits of the pitch must be zero"), so the word's bits 12:0 hold the pitch itself
/// with bits 1:0 zero; the largest pitch is 8188.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Format {
    pitch: u16,
    tiling: Tiling,
    data: DataFormat,
}

impl Format {
    /// The largest encodable pitch (bits 12:2 all ones).
    pub const MAX_PITCH: u32 = 0x1FFC;

    /// A format; errors on a pitch that is not a multiple of 4 or exceeds
    /// [`Format::MAX_PITCH`], and on superfine tiling with a multi-channel format (§2.1.4:
    /// undefined).
    pub const fn new(pitch: u32, tiling: Tiling, data: DataFormat) -> Result<Self, CtmError> {
        if !pitch.is_multiple_of(4) {
            return Err(CtmError::PitchNotMultipleOf4 { pitch });
        }
        if pitch > Self::MAX_PITCH {
            return Err(CtmError::PitchOutOfRange { pitch, max: Self::MAX_PITCH });
        }
        if tiling.is_superfine() && data.channels() != 1 {
            return Err(CtmError::SuperfineMultiChannel { format: data });
        }
        Ok(Self { pitch: pitch as u16, tiling, data })
    }

    /// Pitch in elements.
    pub const fn pitch(self) -> u32 {
        self.pitch as u32
    }

    /// Tiling format.
    pub const fn tiling(self) -> Tiling {
        self.tiling
    }

    /// Data format.
    pub const fn data_format(self) -> DataFormat {
        self.data
    }

    /// The parameter word.
    pub const fn word(self) -> u32 {
        (self.pitch as u32 & 0x1FFC) | ((self.tiling as u32) << 16) | ((self.data as u32) << 24)
    }

    /// Reserved bits of a format word (1:0, 15:13, 23:18, 31:27).
    pub const RESERVED_MASK: u32 = !(0x1FFC | (0x3 << 16) | (0x7 << 24));

    /// Decodes a format word; `None` if reserved bits are set or the data format is reserved
    /// (or superfine tiling is paired with a multi-channel format).
    pub const fn from_word(word: u32) -> Option<Format> {
        if word & Self::RESERVED_MASK != 0 {
            return None;
        }
        let Some(tiling) = Tiling::from_bits((word >> 16) & 3) else {
            return None;
        };
        let Some(data) = DataFormat::from_bits((word >> 24) & 7) else {
            return None;
        };
        match Format::new(word & 0x1FFC, tiling, data) {
            Ok(f) => Some(f),
            Err(_) => None,
        }
    }
}

/// The execution domain of `set_domain` (§2.2.1): the inclusive rectangle
/// `(i0, j0)..=(i1, j1)` of §2.1.2, each coordinate 12 bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Domain {
    i0: u16,
    j0: u16,
    i1: u16,
    j1: u16,
}

impl Domain {
    /// The largest coordinate (12 bits).
    pub const MAX_COORD: u32 = 0xFFF;

    /// A domain; errors if a coordinate exceeds 12 bits or `i0 > i1` / `j0 > j1`.
    pub const fn new(i0: u32, j0: u32, i1: u32, j1: u32) -> Result<Self, CtmError> {
        let coords = [("i0", i0), ("j0", j0), ("i1", i1), ("j1", j1)];
        let mut k = 0;
        while k < coords.len() {
            if coords[k].1 > Self::MAX_COORD {
                return Err(CtmError::DomainOutOfRange { coord: coords[k].0, value: coords[k].1 });
            }
            k += 1;
        }
        if i0 > i1 {
            return Err(CtmError::DomainInverted { axis: 'i', lo: i0, hi: i1 });
        }
        if j0 > j1 {
            return Err(CtmError::DomainInverted { axis: 'j', lo: j0, hi: j1 });
        }
        Ok(Self { i0: i0 as u16, j0: j0 as u16, i1: i1 as u16, j1: j1 as u16 })
    }

    /// A `width` × `height` domain at the origin (`(0, 0)..=(width-1, height-1)`).
    pub const fn of_size(width: u32, height: u32) -> Result<Self, CtmError> {
        if width == 0 {
            return Err(CtmError::DomainInverted { axis: 'i', lo: 0, hi: 0 });
        }
        if height == 0 {
            return Err(CtmError::DomainInverted { axis: 'j', lo: 0, hi: 0 });
        }
        Self::new(0, 0, width - 1, height - 1)
    }

    /// `[i0, j0, i1, j1]`.
    pub const fn corners(self) -> [u32; 4] {
        [self.i0 as u32, self.j0 as u32, self.i1 as u32, self.j1 as u32]
    }

    /// Number of index pairs in the domain.
    pub const fn len(self) -> u32 {
        (self.i1 as u32 - self.i0 as u32 + 1) * (self.j1 as u32 - self.j0 as u32 + 1)
    }

    /// Always `false`: a valid domain holds at least one pair.
    pub const fn is_empty(self) -> bool {
        false
    }
}

/// A program input index, 0..16 (§2.1.4; `set_inp_fmt` parameter 0 bits 3:0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct InputIndex(u8);

impl InputIndex {
    /// Number of inputs (16).
    pub const COUNT: u32 = 16;

    /// The index, or [`CtmError::BadIndex`].
    pub const fn new(index: u32) -> Result<Self, CtmError> {
        if index < Self::COUNT {
            Ok(Self(index as u8))
        } else {
            Err(CtmError::BadIndex { kind: "input", index, limit: Self::COUNT })
        }
    }

    /// The index.
    pub const fn get(self) -> u32 {
        self.0 as u32
    }
}

/// A program output index, 0..4 (§2.1.4; `set_out_fmt` parameter 0 bits 1:0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct OutputIndex(u8);

impl OutputIndex {
    /// Number of outputs (4).
    pub const COUNT: u32 = 4;

    /// The index, or [`CtmError::BadIndex`].
    pub const fn new(index: u32) -> Result<Self, CtmError> {
        if index < Self::COUNT {
            Ok(Self(index as u8))
        } else {
            Err(CtmError::BadIndex { kind: "output", index, limit: Self::COUNT })
        }
    }

    /// The index.
    pub const fn get(self) -> u32 {
        self.0 as u32
    }
}

/// A buffer height (`set_inp_fmt`/`set_out_fmt`/`set_cond_out_fmt`, bits 12:0, §2.2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Height(u16);

impl Height {
    /// The largest encodable height (13 bits).
    pub const MAX: u32 = 0x1FFF;

    /// The height, or [`CtmError::HeightOutOfRange`].
    pub const fn new(height: u32) -> Result<Self, CtmError> {
        if height <= Self::MAX {
            Ok(Self(height as u16))
        } else {
            Err(CtmError::HeightOutOfRange { height, max: Self::MAX })
        }
    }

    /// The height.
    pub const fn get(self) -> u32 {
        self.0 as u32
    }
}

/// The output channel write mask of `set_out_mask` (§2.2.2): bit n enables channel cn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct OutputMask(u8);

impl OutputMask {
    /// Write all four channels.
    pub const ALL: OutputMask = OutputMask(0xF);
    /// Write nothing.
    pub const NONE: OutputMask = OutputMask(0);

    /// A mask from bits 3:0, or [`CtmError::BadMask`].
    pub const fn new(bits: u32) -> Result<Self, CtmError> {
        if bits <= 0xF {
            Ok(Self(bits as u8))
        } else {
            Err(CtmError::BadMask { mask: bits, max: 0xF })
        }
    }

    /// A mask from four channel flags (c0, c1, c2, c3).
    pub const fn from_channels(c0: bool, c1: bool, c2: bool, c3: bool) -> Self {
        Self(c0 as u8 | (c1 as u8) << 1 | (c2 as u8) << 2 | (c3 as u8) << 3)
    }

    /// The mask bits.
    pub const fn bits(self) -> u32 {
        self.0 as u32
    }
}

/// The conditional test of `set_cond_test` (§2.2.3, bits 2:0): `v op b` with `v` the client's
/// conditional value and `b` the conditional output buffer value (§2.1.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(u8)]
pub enum CondTest {
    /// 0 — never (always false).
    Never = 0,
    /// 1 — `v < b`.
    Less = 1,
    /// 2 — `v <= b`.
    LessOrEqual = 2,
    /// 3 — `v == b`.
    Equal = 3,
    /// 4 — `v >= b`.
    GreaterOrEqual = 4,
    /// 5 — `v > b`.
    Greater = 5,
    /// 6 — `v != b` (listed in §2.2.3, absent from the operator list of §2.1.3).
    NotEqual = 6,
    /// 7 — always true.
    Always = 7,
}

impl CondTest {
    /// The test for field value `v` (0..=7).
    pub const fn from_bits(v: u32) -> Option<CondTest> {
        match v {
            0 => Some(CondTest::Never),
            1 => Some(CondTest::Less),
            2 => Some(CondTest::LessOrEqual),
            3 => Some(CondTest::Equal),
            4 => Some(CondTest::GreaterOrEqual),
            5 => Some(CondTest::Greater),
            6 => Some(CondTest::NotEqual),
            7 => Some(CondTest::Always),
            _ => None,
        }
    }
}

/// Where the CO performs its test, `set_cond_loc` (§2.2.3, bit 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(u8)]
pub enum CondLoc {
    /// 0 — the DPP: conditional program output (the PE always gets "true").
    Dpp = 0,
    /// 1 — the PE: conditional program execution (the DPP always gets "true").
    Pe = 1,
}

/// One CTM command of Table 3 with its typed parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Command {
    /// `init_perf_counters`: enable (true) or disable the counters (§2.2.1).
    InitPerfCounters {
        /// Parameter 0 bit 0.
        enable: bool,
    },
    /// `start_perf_counters` (§2.2.1).
    StartPerfCounters,
    /// `stop_perf_counters` (§2.2.1).
    StopPerfCounters,
    /// `read_perf_counters` to a 2K-aligned address (§2.2.1).
    ReadPerfCounters {
        /// Where the two 32-bit counters are written.
        addr: GpuAddress,
    },
    /// `set_cond_val` (§2.2.1).
    SetCondVal {
        /// The 32-bit conditional value.
        value: u32,
    },
    /// `set_domain` (§2.2.1).
    SetDomain(Domain),
    /// `start_program` (§2.2.1).
    StartProgram,
    /// `wait_for_idle` (§2.2.1).
    WaitForIdle,
    /// `set_inst_fmt` (§2.2.2).
    SetInstFmt {
        /// Base address of the first instruction.
        base: GpuAddress,
        /// Instruction memory format.
        format: Format,
    },
    /// `set_inp_fmt` (§2.2.2).
    SetInpFmt {
        /// Input index.
        input: InputIndex,
        /// Base address.
        base: GpuAddress,
        /// Format (superfine tiling allowed).
        format: Format,
        /// Height.
        height: Height,
    },
    /// `set_out_fmt` (§2.2.2).
    SetOutFmt {
        /// Output index.
        output: OutputIndex,
        /// Base address.
        base: GpuAddress,
        /// Format.
        format: Format,
        /// Height.
        height: Height,
    },
    /// `set_cond_out_fmt` (§2.2.2).
    SetCondOutFmt {
        /// Base address.
        base: GpuAddress,
        /// Format.
        format: Format,
        /// Height.
        height: Height,
    },
    /// `set_constf_fmt` (§2.2.2).
    SetConstfFmt {
        /// Base address.
        base: GpuAddress,
        /// Format.
        format: Format,
    },
    /// `set_consti_fmt` (§2.2.2).
    SetConstiFmt {
        /// Base address.
        base: GpuAddress,
        /// Format.
        format: Format,
    },
    /// `set_constb_fmt` (§2.2.2).
    SetConstbFmt {
        /// Base address.
        base: GpuAddress,
        /// Format.
        format: Format,
    },
    /// `inv_inst_cache` (§2.2.2).
    InvInstCache,
    /// `inv_constf_cache` (§2.2.2).
    InvConstfCache,
    /// `inv_consti_cache` (§2.2.2).
    InvConstiCache,
    /// `inv_constb_cache` (§2.2.2).
    InvConstbCache,
    /// `inv_cond_out_cache` (§2.2.2).
    InvCondOutCache,
    /// `inv_inp_cache` (§2.2.2).
    InvInpCache,
    /// `flush_out_cache` (§2.2.2).
    FlushOutCache,
    /// `flush_cond_out_cache` (§2.2.2).
    FlushCondOutCache,
    /// `set_out_mask` (§2.2.2).
    SetOutMask(OutputMask),
    /// `set_cond_out_mask` (§2.2.2): write the conditional value to the buffer or not.
    SetCondOutMask {
        /// Parameter 0 bit 0.
        write: bool,
    },
    /// `set_cond_test` (§2.2.3).
    SetCondTest(CondTest),
    /// `set_cond_loc` (§2.2.3).
    SetCondLoc(CondLoc),
}

/// The longest command: opcode + 4 parameters.
pub const MAX_COMMAND_WORDS: usize = 5;

impl Command {
    /// The command's opcode.
    pub const fn opcode(&self) -> Opcode {
        match self {
            Command::InitPerfCounters { .. } => Opcode::InitPerfCounters,
            Command::StartPerfCounters => Opcode::StartPerfCounters,
            Command::StopPerfCounters => Opcode::StopPerfCounters,
            Command::ReadPerfCounters { .. } => Opcode::ReadPerfCounters,
            Command::SetCondVal { .. } => Opcode::SetCondVal,
            Command::SetDomain(_) => Opcode::SetDomain,
            Command::StartProgram => Opcode::StartProgram,
            Command::WaitForIdle => Opcode::WaitForIdle,
            Command::SetInstFmt { .. } => Opcode::SetInstFmt,
            Command::SetInpFmt { .. } => Opcode::SetInpFmt,
            Command::SetOutFmt { .. } => Opcode::SetOutFmt,
            Command::SetCondOutFmt { .. } => Opcode::SetCondOutFmt,
            Command::SetConstfFmt { .. } => Opcode::SetConstfFmt,
            Command::SetConstiFmt { .. } => Opcode::SetConstiFmt,
            Command::SetConstbFmt { .. } => Opcode::SetConstbFmt,
            Command::InvInstCache => Opcode::InvInstCache,
            Command::InvConstfCache => Opcode::InvConstfCache,
            Command::InvConstiCache => Opcode::InvConstiCache,
            Command::InvConstbCache => Opcode::InvConstbCache,
            Command::InvCondOutCache => Opcode::InvCondOutCache,
            Command::InvInpCache => Opcode::InvInpCache,
            Command::FlushOutCache => Opcode::FlushOutCache,
            Command::FlushCondOutCache => Opcode::FlushCondOutCache,
            Command::SetOutMask(_) => Opcode::SetOutMask,
            Command::SetCondOutMask { .. } => Opcode::SetCondOutMask,
            Command::SetCondTest(_) => Opcode::SetCondTest,
            Command::SetCondLoc(_) => Opcode::SetCondLoc,
        }
    }

    /// Checks the cross-parameter rules the types cannot express: superfine tiling only on
    /// `set_inp_fmt` (§2.1.4).
    pub const fn validate(&self) -> Result<(), CtmError> {
        let format = match self {
            Command::SetInstFmt { format, .. }
            | Command::SetOutFmt { format, .. }
            | Command::SetCondOutFmt { format, .. }
            | Command::SetConstfFmt { format, .. }
            | Command::SetConstiFmt { format, .. }
            | Command::SetConstbFmt { format, .. } => format,
            _ => return Ok(()),
        };
        if format.tiling().is_superfine() {
            Err(CtmError::SuperfineNotInput { opcode: self.opcode() })
        } else {
            Ok(())
        }
    }

    /// The encoded words (opcode then parameters) and how many of the array are used
    /// (`1 + opcode().param_count()`); validates first.
    pub const fn encode(&self) -> Result<([u32; MAX_COMMAND_WORDS], usize), CtmError> {
        if let Err(e) = self.validate() {
            return Err(e);
        }
        let op = self.opcode().word();
        let mut w = [op, 0, 0, 0, 0];
        match *self {
            Command::InitPerfCounters { enable } => w[1] = enable as u32,
            Command::ReadPerfCounters { addr } => w[1] = addr.get(),
            Command::SetCondVal { value } => w[1] = value,
            Command::SetDomain(d) => {
                let c = d.corners();
                w[1] = c[0];
                w[2] = c[1];
                w[3] = c[2];
                w[4] = c[3];
            }
            Command::SetInstFmt { base, format }
            | Command::SetConstfFmt { base, format }
            | Command::SetConstiFmt { base, format }
            | Command::SetConstbFmt { base, format } => {
                w[1] = base.get();
                w[2] = format.word();
            }
            Command::SetInpFmt { input, base, format, height } => {
                w[1] = input.get();
                w[2] = base.get();
                w[3] = format.word();
                w[4] = height.get();
            }
            Command::SetOutFmt { output, base, format, height } => {
                w[1] = output.get();
                w[2] = base.get();
                w[3] = format.word();
                w[4] = height.get();
            }
            Command::SetCondOutFmt { base, format, height } => {
                w[1] = base.get();
                w[2] = format.word();
                w[3] = height.get();
            }
            Command::SetOutMask(m) => w[1] = m.bits(),
            Command::SetCondOutMask { write } => w[1] = write as u32,
            Command::SetCondTest(t) => w[1] = t as u32,
            Command::SetCondLoc(l) => w[1] = l as u32,
            Command::StartPerfCounters
            | Command::StopPerfCounters
            | Command::StartProgram
            | Command::WaitForIdle
            | Command::InvInstCache
            | Command::InvConstfCache
            | Command::InvConstiCache
            | Command::InvConstbCache
            | Command::InvCondOutCache
            | Command::InvInpCache
            | Command::FlushOutCache
            | Command::FlushCondOutCache => {}
        }
        Ok((w, 1 + self.opcode().param_count()))
    }

    /// Decodes the command at the start of `words`, strictly (reserved bits must be zero,
    /// enumerations must name documented values); returns it and the number of words used.
    ///
    /// This is the inverse of [`Command::encode`], for tests and command-buffer dumps.
    pub fn decode(words: &[u32]) -> Result<(Command, usize), CtmError> {
        let Some(&first) = words.first() else {
            return Err(CtmError::Truncated { needed: 1, available: 0 });
        };
        let op = Opcode::from_word(first).ok_or(CtmError::UnknownOpcode { word: first })?;
        let n = 1 + op.param_count();
        let Some(p) = words.get(1..n) else {
            return Err(CtmError::Truncated { needed: n, available: words.len() });
        };
        let reserved = |param: usize, mask: u32| -> Result<u32, CtmError> {
            let word = p[param];
            if word & mask != 0 {
                Err(CtmError::ReservedBitsSet { opcode: op, param, word })
            } else {
                Ok(word)
            }
        };
        let addr = |param: usize| -> Result<GpuAddress, CtmError> {
            reserved(param, 0x7FF).and_then(GpuAddress::new)
        };
        let format = |param: usize| -> Result<Format, CtmError> {
            let word = p[param];
            if word & Format::RESERVED_MASK != 0 {
                return Err(CtmError::ReservedBitsSet { opcode: op, param, word });
            }
            let tiling = Tiling::from_bits((word >> 16) & 3)
                .ok_or(CtmError::BadEnum { field: "tiling", value: (word >> 16) & 3 })?;
            let data = DataFormat::from_bits((word >> 24) & 7)
                .ok_or(CtmError::BadEnum { field: "format", value: (word >> 24) & 7 })?;
            Format::new(word & 0x1FFC, tiling, data)
        };
        let height = |param: usize| reserved(param, !Height::MAX).and_then(Height::new);
        let cmd = match op {
            Opcode::InitPerfCounters => Command::InitPerfCounters { enable: reserved(0, !1)? == 1 },
            Opcode::StartPerfCounters => {
                reserved(0, !0)?;
                Command::StartPerfCounters
            }
            Opcode::StopPerfCounters => {
                reserved(0, !0)?;
                Command::StopPerfCounters
            }
            Opcode::ReadPerfCounters => Command::ReadPerfCounters { addr: addr(0)? },
            Opcode::SetCondVal => Command::SetCondVal { value: p[0] },
            Opcode::SetDomain => {
                for k in 0..4 {
                    reserved(k, !0xFFF)?;
                }
                Command::SetDomain(Domain::new(p[0], p[1], p[2], p[3])?)
            }
            Opcode::StartProgram => {
                reserved(0, !0)?;
                Command::StartProgram
            }
            Opcode::WaitForIdle => {
                reserved(0, !0)?;
                Command::WaitForIdle
            }
            Opcode::SetInstFmt => Command::SetInstFmt { base: addr(0)?, format: format(1)? },
            Opcode::SetInpFmt => Command::SetInpFmt {
                input: InputIndex::new(reserved(0, !0xF)?)?,
                base: addr(1)?,
                format: format(2)?,
                height: height(3)?,
            },
            Opcode::SetOutFmt => Command::SetOutFmt {
                output: OutputIndex::new(reserved(0, !0x3)?)?,
                base: addr(1)?,
                format: format(2)?,
                height: height(3)?,
            },
            Opcode::SetCondOutFmt => {
                Command::SetCondOutFmt { base: addr(0)?, format: format(1)?, height: height(2)? }
            }
            Opcode::SetConstfFmt => Command::SetConstfFmt { base: addr(0)?, format: format(1)? },
            Opcode::SetConstiFmt => Command::SetConstiFmt { base: addr(0)?, format: format(1)? },
            Opcode::SetConstbFmt => Command::SetConstbFmt { base: addr(0)?, format: format(1)? },
            Opcode::InvInstCache
            | Opcode::InvConstfCache
            | Opcode::InvConstiCache
            | Opcode::InvConstbCache
            | Opcode::InvCondOutCache
            | Opcode::InvInpCache
            | Opcode::FlushOutCache
            | Opcode::FlushCondOutCache => {
                reserved(0, !0)?;
                match op {
                    Opcode::InvInstCache => Command::InvInstCache,
                    Opcode::InvConstfCache => Command::InvConstfCache,
                    Opcode::InvConstiCache => Command::InvConstiCache,
                    Opcode::InvConstbCache => Command::InvConstbCache,
                    Opcode::InvCondOutCache => Command::InvCondOutCache,
                    Opcode::InvInpCache => Command::InvInpCache,
                    Opcode::FlushOutCache => Command::FlushOutCache,
                    _ => Command::FlushCondOutCache,
                }
            }
            Opcode::SetOutMask => Command::SetOutMask(OutputMask::new(reserved(0, !0xF)?)?),
            Opcode::SetCondOutMask => Command::SetCondOutMask { write: reserved(0, !1)? == 1 },
            Opcode::SetCondTest => {
                let v = reserved(0, !7)?;
                Command::SetCondTest(
                    CondTest::from_bits(v)
                        .ok_or(CtmError::BadEnum { field: "condition", value: v })?,
                )
            }
            Opcode::SetCondLoc => {
                Command::SetCondLoc(if reserved(0, !1)? == 1 { CondLoc::Pe } else { CondLoc::Dpp })
            }
        };
        cmd.validate()?;
        Ok((cmd, n))
    }
}

/// Where encoded commands go. Implementations must be all-or-nothing: either every word of
/// `words` is appended, or none is and [`CtmError::NoSpace`] is returned.
pub trait CommandSink {
    /// Words that can still be appended.
    fn free_words(&self) -> usize;
    /// Appends `words` entirely, or nothing.
    fn write_words(&mut self, words: &[u32]) -> Result<(), CtmError>;
}

/// A CTM command buffer over a caller-provided `&mut [u32]` (e.g. the CPU view of a DMA
/// region); nothing is allocated.
#[derive(Debug)]
pub struct CommandBuffer<'a> {
    buf: &'a mut [u32],
    len: usize,
}

impl<'a> CommandBuffer<'a> {
    /// An empty command buffer over `buf`.
    pub fn new(buf: &'a mut [u32]) -> Self {
        Self { buf, len: 0 }
    }

    /// The words written so far, in order: what the device must consume (how it is handed to
    /// the device is open, see [`crate::submit`]).
    pub fn as_words(&self) -> &[u32] {
        &self.buf[..self.len]
    }

    /// Number of words written.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing has been written.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Total capacity in words.
    pub fn capacity(&self) -> usize {
        self.buf.len()
    }

    /// Forgets every written word (the memory is not cleared).
    pub fn clear(&mut self) {
        self.len = 0;
    }
}

impl CommandSink for CommandBuffer<'_> {
    fn free_words(&self) -> usize {
        self.buf.len() - self.len
    }

    fn write_words(&mut self, words: &[u32]) -> Result<(), CtmError> {
        let available = self.free_words();
        if words.len() > available {
            return Err(CtmError::NoSpace { needed: words.len(), available });
        }
        let end = self.len + words.len();
        self.buf[self.len..end].copy_from_slice(words);
        self.len = end;
        Ok(())
    }
}

impl<S: CommandSink + ?Sized> CommandSink for &mut S {
    fn free_words(&self) -> usize {
        (**self).free_words()
    }

    fn write_words(&mut self, words: &[u32]) -> Result<(), CtmError> {
        (**self).write_words(words)
    }
}

/// The typed builders: one method per command of Table 3, available on every
/// [`CommandSink`]. Each writes the opcode word and its parameters, or nothing.
pub trait CtmCommands: CommandSink {
    /// Encodes and appends any [`Command`].
    fn emit(&mut self, cmd: Command) -> Result<(), CtmError> {
        let (words, n) = cmd.encode()?;
        self.write_words(&words[..n])
    }

    /// `init_perf_counters` (§2.2.1).
    fn init_perf_counters(&mut self, enable: bool) -> Result<(), CtmError> {
        self.emit(Command::InitPerfCounters { enable })
    }
    /// `start_perf_counters` (§2.2.1).
    fn start_perf_counters(&mut self) -> Result<(), CtmError> {
        self.emit(Command::StartPerfCounters)
    }
    /// `stop_perf_counters` (§2.2.1).
    fn stop_perf_counters(&mut self) -> Result<(), CtmError> {
        self.emit(Command::StopPerfCounters)
    }
    /// `read_perf_counters` (§2.2.1).
    fn read_perf_counters(&mut self, addr: GpuAddress) -> Result<(), CtmError> {
        self.emit(Command::ReadPerfCounters { addr })
    }
    /// `set_cond_val` (§2.2.1).
    fn set_cond_val(&mut self, value: u32) -> Result<(), CtmError> {
        self.emit(Command::SetCondVal { value })
    }
    /// `set_domain` (§2.2.1).
    fn set_domain(&mut self, domain: Domain) -> Result<(), CtmError> {
        self.emit(Command::SetDomain(domain))
    }
    /// `start_program` (§2.2.1).
    fn start_program(&mut self) -> Result<(), CtmError> {
        self.emit(Command::StartProgram)
    }
    /// `wait_for_idle` (§2.2.1).
    fn wait_for_idle(&mut self) -> Result<(), CtmError> {
        self.emit(Command::WaitForIdle)
    }
    /// `set_inst_fmt` (§2.2.2).
    fn set_inst_fmt(&mut self, base: GpuAddress, format: Format) -> Result<(), CtmError> {
        self.emit(Command::SetInstFmt { base, format })
    }
    /// `set_inp_fmt` (§2.2.2).
    fn set_inp_fmt(
        &mut self,
        input: InputIndex,
        base: GpuAddress,
        format: Format,
        height: Height,
    ) -> Result<(), CtmError> {
        self.emit(Command::SetInpFmt { input, base, format, height })
    }
    /// `set_out_fmt` (§2.2.2).
    fn set_out_fmt(
        &mut self,
        output: OutputIndex,
        base: GpuAddress,
        format: Format,
        height: Height,
    ) -> Result<(), CtmError> {
        self.emit(Command::SetOutFmt { output, base, format, height })
    }
    /// `set_cond_out_fmt` (§2.2.2).
    fn set_cond_out_fmt(
        &mut self,
        base: GpuAddress,
        format: Format,
        height: Height,
    ) -> Result<(), CtmError> {
        self.emit(Command::SetCondOutFmt { base, format, height })
    }
    /// `set_constf_fmt` (§2.2.2).
    fn set_constf_fmt(&mut self, base: GpuAddress, format: Format) -> Result<(), CtmError> {
        self.emit(Command::SetConstfFmt { base, format })
    }
    /// `set_consti_fmt` (§2.2.2).
    fn set_consti_fmt(&mut self, base: GpuAddress, format: Format) -> Result<(), CtmError> {
        self.emit(Command::SetConstiFmt { base, format })
    }
    /// `set_constb_fmt` (§2.2.2).
    fn set_constb_fmt(&mut self, base: GpuAddress, format: Format) -> Result<(), CtmError> {
        self.emit(Command::SetConstbFmt { base, format })
    }
    /// `inv_inst_cache` (§2.2.2).
    fn inv_inst_cache(&mut self) -> Result<(), CtmError> {
        self.emit(Command::InvInstCache)
    }
    /// `inv_constf_cache` (§2.2.2).
    fn inv_constf_cache(&mut self) -> Result<(), CtmError> {
        self.emit(Command::InvConstfCache)
    }
    /// `inv_consti_cache` (§2.2.2).
    fn inv_consti_cache(&mut self) -> Result<(), CtmError> {
        self.emit(Command::InvConstiCache)
    }
    /// `inv_constb_cache` (§2.2.2).
    fn inv_constb_cache(&mut self) -> Result<(), CtmError> {
        self.emit(Command::InvConstbCache)
    }
    /// `inv_cond_out_cache` (§2.2.2).
    fn inv_cond_out_cache(&mut self) -> Result<(), CtmError> {
        self.emit(Command::InvCondOutCache)
    }
    /// `inv_inp_cache` (§2.2.2).
    fn inv_inp_cache(&mut self) -> Result<(), CtmError> {
        self.emit(Command::InvInpCache)
    }
    /// `flush_out_cache` (§2.2.2).
    fn flush_out_cache(&mut self) -> Result<(), CtmError> {
        self.emit(Command::FlushOutCache)
    }
    /// `flush_cond_out_cache` (§2.2.2).
    fn flush_cond_out_cache(&mut self) -> Result<(), CtmError> {
        self.emit(Command::FlushCondOutCache)
    }
    /// `set_out_mask` (§2.2.2).
    fn set_out_mask(&mut self, mask: OutputMask) -> Result<(), CtmError> {
        self.emit(Command::SetOutMask(mask))
    }
    /// `set_cond_out_mask` (§2.2.2).
    fn set_cond_out_mask(&mut self, write: bool) -> Result<(), CtmError> {
        self.emit(Command::SetCondOutMask { write })
    }
    /// `set_cond_test` (§2.2.3).
    fn set_cond_test(&mut self, test: CondTest) -> Result<(), CtmError> {
        self.emit(Command::SetCondTest(test))
    }
    /// `set_cond_loc` (§2.2.3).
    fn set_cond_loc(&mut self, loc: CondLoc) -> Result<(), CtmError> {
        self.emit(Command::SetCondLoc(loc))
    }
}

impl<S: CommandSink + ?Sized> CtmCommands for S {}
