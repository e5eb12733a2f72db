//! The DPP executable loader (ATI CTM Guide ch. 4).
//!
//! A DPP executable is a 32-bit little-endian ELF file (§4.1.2) whose *execution view* holds
//! one `PT_LOAD` segment with the `.text` instructions (§4.1.3) and one or more `PT_NOTE`
//! segments with the "ATI DPP" notes (§4.1.4). [`DppExecutable::parse`] validates everything
//! without allocating and without panicking (all offsets use checked arithmetic) and borrows
//! the instruction words from the input.
//!
//! What is checked (every failure is a distinct [`ElfError`]):
//!
//! * ELF header (§4.1.2): magic, `EI_CLASS = ELFCLASS32`, `EI_DATA = ELFDATA2LSB`,
//!   `EI_VERSION = EV_CURRENT`, `EI_OSABI = 98`, `EI_ABIVERSION = 1`, `e_type = ET_EXEC`,
//!   `e_machine = 122`, `e_version = EV_CURRENT`, `e_entry = 0`, `e_flags = EF_ATI_DPP (1)`,
//!   `e_ehsize = 52`, `e_phentsize = 32`, at least one program header, the program header
//!   table inside the file.
//! * Segments: only `PT_NULL` (ignored), `PT_LOAD` and `PT_NOTE`; exactly one `PT_LOAD`, at
//!   least one `PT_NOTE`; each segment's file range inside the file, not overlapping the ELF
//!   header, the program header table or another segment; `p_memsz == p_filesz` for the text.
//! * Text: non-empty, a multiple of [`INSTRUCTION_BYTES`] (one 6-word instruction slot,
//!   ch. 3.2), at most [`MAX_INSTRUCTIONS`] (512 slots, ch. 3.1).
//! * Notes (§4.1.4): each well formed (12-byte header, 4-byte padded name and desc), named
//!   `"ATI DPP"` with `namesz = 8`, a known type 1..=7, not repeated; desc sizes as
//!   documented (program information: 28 words; condout/early exit: 4; lists: 4 × n);
//!   flag notes hold 0 or 1; input indices < 16 and output indices < 4 (§2.1.4).
//! * Program information: present (the only mandatory note), `INSTR_CNT` equal to the number
//!   of text instructions, `US_CODE_RANGE = (INSTR_CNT - 1) << 16`, and `US_CODE_ADDR`'s start
//!   ≤ end < `INSTR_CNT`.
//!
//! Section headers are not consulted (the loader uses the execution view only).

use core::fmt;

/// Bytes in one instruction slot: 6 words (`INST_TYPE_ALU`/`INST_TYPE_OUTPUT`, ch. 3.2; the
/// shorter FC and TEX forms overlap the same slot).
pub const INSTRUCTION_BYTES: usize = 24;
/// Words in one instruction slot.
pub const INSTRUCTION_WORDS: usize = 6;
/// Instruction slots of the processor (ch. 3.1).
pub const MAX_INSTRUCTIONS: u32 = 512;

/// `EI_OSABI` value `ELFOSABI_ATI` (§4.1.2).
pub const ELFOSABI_ATI: u8 = 98;
/// `EI_ABIVERSION` (§4.1.2).
pub const ABI_VERSION: u8 = 1;
/// `e_machine` value `EM_ATI_R5XX` (§4.1.2).
pub const EM_ATI_R5XX: u16 = 122;
/// `e_flags` value `EF_ATI_DPP` (§4.1.2).
pub const EF_ATI_DPP: u32 = 1;
/// `ELFCLASS32`.
pub const ELFCLASS32: u8 = 1;
/// `ELFDATA2LSB`.
pub const ELFDATA2LSB: u8 = 1;
/// `EV_CURRENT`.
pub const EV_CURRENT: u8 = 1;
/// `ET_EXEC`.
pub const ET_EXEC: u16 = 2;
/// `PT_NULL`.
pub const PT_NULL: u32 = 0;
/// `PT_LOAD`.
pub const PT_LOAD: u32 = 1;
/// `PT_NOTE`.
pub const PT_NOTE: u32 = 4;
/// Size of the ELF32 header.
pub const EHDR_SIZE: usize = 52;
/// Size of an ELF32 program header.
pub const PHDR_SIZE: usize = 32;
/// The note name `ELF_NOTE_ATI` with its terminating NUL (`namesz = 8`, §4.1.4).
pub const NOTE_NAME: &[u8; 8] = b"ATI DPP\0";
/// The most non-null segments accepted (one `PT_LOAD` and up to 15 `PT_NOTE`; no allocation).
pub const MAX_SEGMENTS: usize = 16;
/// Words in `dpp_proginfo` (§4.1.4).
pub const PROGINFO_WORDS: usize = 28;

/// The seven notes of §4.1.4; the discriminant is the note type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(u32)]
pub enum NoteKind {
    /// `ELF_NOTE_ATI_PROGINFO` = 1: the `dpp_proginfo` structure (mandatory).
    ProgramInfo = 1,
    /// `ELF_NOTE_ATI_INPUTS` = 2: input indices used.
    Inputs = 2,
    /// `ELF_NOTE_ATI_OUTPUTS` = 3: output indices used.
    Outputs = 3,
    /// `ELF_NOTE_ATI_CONDOUT` = 4: whether a conditional output value is written.
    CondOut = 4,
    /// `ELF_NOTE_ATI_FLOAT32CONSTS` = 5: float32 constant indices used.
    Float32Consts = 5,
    /// `ELF_NOTE_ATI_INT32CONSTS` = 6: int32 constant indices used.
    Int32Consts = 6,
    /// `ELF_NOTE_ATI_EARLYEXIT` = 7: whether the program may exit early.
    EarlyExit = 7,
}

impl NoteKind {
    /// The note kind of type `t`.
    pub const fn from_type(t: u32) -> Option<NoteKind> {
        match t {
            1 => Some(Self::ProgramInfo),
            2 => Some(Self::Inputs),
            3 => Some(Self::Outputs),
            4 => Some(Self::CondOut),
            5 => Some(Self::Float32Consts),
            6 => Some(Self::Int32Consts),
            7 => Some(Self::EarlyExit),
            _ => None,
        }
    }
}

/// Why a DPP executable was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum ElfError {
    /// The file is shorter than the 52-byte ELF header.
    TruncatedHeader {
        /// File length.
        len: usize,
    },
    /// `e_ident[0..4]` is not `\x7fELF`.
    BadMagic,
    /// `EI_CLASS` is not `ELFCLASS32`.
    BadClass(u8),
    /// `EI_DATA` is not `ELFDATA2LSB`.
    BadData(u8),
    /// `EI_VERSION` is not `EV_CURRENT`.
    BadIdentVersion(u8),
    /// `EI_OSABI` is not 98.
    BadOsAbi(u8),
    /// `EI_ABIVERSION` is not 1.
    BadAbiVersion(u8),
    /// `e_type` is not `ET_EXEC`.
    BadType(u16),
    /// `e_machine` is not 122.
    BadMachine(u16),
    /// `e_version` is not `EV_CURRENT`.
    BadVersion(u32),
    /// `e_entry` is not 0.
    BadEntry(u32),
    /// `e_flags` is not `EF_ATI_DPP`.
    BadFlags(u32),
    /// `e_ehsize` is not 52.
    BadEhsize(u16),
    /// `e_phentsize` is not 32.
    BadPhentsize(u16),
    /// `e_phnum` is 0.
    NoProgramHeaders,
    /// The program header table does not fit in the file.
    PhdrOutOfBounds {
        /// `e_phoff`.
        offset: u32,
        /// `e_phnum`.
        count: u16,
        /// File length.
        len: usize,
    },
    /// A segment's file range does not fit in the file.
    SegmentOutOfBounds {
        /// Program header index.
        index: usize,
        /// `p_offset`.
        offset: u32,
        /// `p_filesz`.
        size: u32,
        /// File length.
        len: usize,
    },
    /// A segment type other than `PT_NULL`, `PT_LOAD`, `PT_NOTE`.
    UnexpectedSegment {
        /// Program header index.
        index: usize,
        /// `p_type`.
        p_type: u32,
    },
    /// More non-null segments than the loader accepts.
    TooManySegments {
        /// The limit.
        max: usize,
    },
    /// No `PT_LOAD` segment.
    MissingText,
    /// A second `PT_LOAD` segment.
    DuplicateText {
        /// Program header index of the second one.
        index: usize,
    },
    /// No `PT_NOTE` segment.
    MissingNotes,
    /// The text segment's `p_memsz` differs from its `p_filesz`.
    TextSizeMismatch {
        /// `p_filesz`.
        filesz: u32,
        /// `p_memsz`.
        memsz: u32,
    },
    /// Two segments share file bytes.
    SegmentsOverlap {
        /// First program header index.
        first: usize,
        /// Second program header index.
        second: usize,
    },
    /// A segment overlaps the ELF header or the program header table.
    SegmentOverlapsHeaders {
        /// Program header index.
        index: usize,
    },
    /// The text segment is empty.
    EmptyText,
    /// The text size is not a multiple of [`INSTRUCTION_BYTES`].
    TextNotInstructionMultiple {
        /// Text size in bytes.
        size: u32,
    },
    /// More than [`MAX_INSTRUCTIONS`] instructions.
    TooManyInstructions {
        /// Instruction count.
        count: u32,
    },
    /// A note header, name or desc runs past the end of its segment.
    NoteTruncated {
        /// Program header index.
        segment: usize,
        /// Offset of the note within the segment.
        offset: usize,
    },
    /// A note is not named `"ATI DPP"` with `namesz = 8`.
    BadNoteName {
        /// The note's type.
        note_type: u32,
        /// Its `namesz`.
        namesz: u32,
    },
    /// A note type outside 1..=7.
    UnknownNoteType {
        /// The note's type.
        note_type: u32,
    },
    /// A note kind appears twice.
    DuplicateNote {
        /// The repeated note.
        kind: NoteKind,
    },
    /// The mandatory Program Information note is absent.
    MissingProgramInfo,
    /// A note's `descsz` is not what §4.1.4 requires.
    NoteSizeMismatch {
        /// The note.
        kind: NoteKind,
        /// Its `descsz`.
        descsz: u32,
    },
    /// A flag note (condout, early exit) holds a value other than 0 or 1.
    BadNoteValue {
        /// The note.
        kind: NoteKind,
        /// The value.
        value: u32,
    },
    /// An input (≥ 16) or output (≥ 4) index in a note.
    NoteIndexOutOfRange {
        /// The note.
        kind: NoteKind,
        /// The index.
        index: u32,
    },
    /// `INSTR_CNT` differs from the number of instructions in the text.
    InstructionCountMismatch {
        /// `INSTR_CNT` of the program information.
        proginfo: u32,
        /// Instructions in the text segment.
        text: u32,
    },
    /// `US_CODE_RANGE` is not `(INSTR_CNT - 1) << 16`.
    BadCodeRange {
        /// `US_CODE_RANGE`.
        code_range: u32,
    },
    /// `US_CODE_ADDR` start/end outside the program or start after end.
    BadCodeAddr {
        /// `US_CODE_ADDR`.
        code_addr: u32,
    },
}

impl fmt::Display for ElfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::TruncatedHeader { len } => {
                write!(f, "file of {len} bytes is shorter than the ELF header")
            }
            Self::BadMagic => f.write_str("not an ELF file (bad magic)"),
            Self::BadClass(c) => write!(f, "EI_CLASS {c} is not ELFCLASS32 (§4.1.2)"),
            Self::BadData(d) => write!(f, "EI_DATA {d} is not ELFDATA2LSB (§4.1.2)"),
            Self::BadIdentVersion(v) => write!(f, "EI_VERSION {v} is not EV_CURRENT"),
            Self::BadOsAbi(a) => write!(f, "EI_OSABI {a} is not ELFOSABI_ATI (98, §4.1.2)"),
            Self::BadAbiVersion(v) => write!(f, "EI_ABIVERSION {v} is not 1 (§4.1.2)"),
            Self::BadType(t) => write!(f, "e_type {t} is not ET_EXEC (§4.1.2)"),
            Self::BadMachine(m) => write!(f, "e_machine {m} is not EM_ATI_R5XX (122, §4.1.2)"),
            Self::BadVersion(v) => write!(f, "e_version {v} is not EV_CURRENT"),
            Self::BadEntry(e) => write!(f, "e_entry {e:#x} is not 0 (§4.1.2)"),
            Self::BadFlags(x) => write!(f, "e_flags {x:#x} is not EF_ATI_DPP (1, §4.1.2)"),
            Self::BadEhsize(s) => write!(f, "e_ehsize {s} is not 52"),
            Self::BadPhentsize(s) => write!(f, "e_phentsize {s} is not 32"),
            Self::NoProgramHeaders => f.write_str("no program headers"),
            Self::PhdrOutOfBounds { offset, count, len } => {
                write!(f, "{count} program headers at {offset:#x} do not fit in {len} bytes")
            }
            Self::SegmentOutOfBounds { index, offset, size, len } => write!(
                f,
                "segment {index} ({size} bytes at {offset:#x}) does not fit in {len} bytes"
            ),
            Self::UnexpectedSegment { index, p_type } => write!(
                f,
                "segment {index} has type {p_type:#x}, not PT_LOAD or PT_NOTE (§4.1.3, §4.1.4)"
            ),
            Self::TooManySegments { max } => write!(f, "more than {max} segments"),
            Self::MissingText => f.write_str("no PT_LOAD segment for .text (§4.1.3)"),
            Self::DuplicateText { index } => {
                write!(f, "segment {index} is a second PT_LOAD (§4.1.3: a single .text)")
            }
            Self::MissingNotes => f.write_str("no PT_NOTE segment (§4.1.4)"),
            Self::TextSizeMismatch { filesz, memsz } => {
                write!(f, "text p_filesz {filesz} differs from p_memsz {memsz}")
            }
            Self::SegmentsOverlap { first, second } => {
                write!(f, "segments {first} and {second} overlap")
            }
            Self::SegmentOverlapsHeaders { index } => {
                write!(f, "segment {index} overlaps the ELF header or program header table")
            }
            Self::EmptyText => f.write_str("the text segment is empty"),
            Self::TextNotInstructionMultiple { size } => write!(
                f,
                "text size {size} is not a multiple of the {INSTRUCTION_BYTES}-byte instruction"
            ),
            Self::TooManyInstructions { count } => {
                write!(f, "{count} instructions exceed the {MAX_INSTRUCTIONS} instruction slots")
            }
            Self::NoteTruncated { segment, offset } => {
                write!(f, "note at offset {offset} of segment {segment} is truncated")
            }
            Self::BadNoteName { note_type, namesz } => write!(
                f,
                "note type {note_type} (namesz {namesz}) is not named \"ATI DPP\" (§4.1.4)"
            ),
            Self::UnknownNoteType { note_type } => {
                write!(f, "unknown note type {note_type} (§4.1.4)")
            }
            Self::DuplicateNote { kind } => write!(f, "duplicate {kind:?} note"),
            Self::MissingProgramInfo => {
                f.write_str("no Program Information note: the object is ill conditioned (§4.1.4)")
            }
            Self::NoteSizeMismatch { kind, descsz } => {
                write!(f, "{kind:?} note has descsz {descsz} (§4.1.4)")
            }
            Self::BadNoteValue { kind, value } => {
                write!(f, "{kind:?} note holds {value}, not 0 or 1 (§4.1.4)")
            }
            Self::NoteIndexOutOfRange { kind, index } => {
                write!(f, "{kind:?} note lists index {index}, out of range (§2.1.4)")
            }
            Self::InstructionCountMismatch { proginfo, text } => {
                write!(f, "INSTR_CNT {proginfo} differs from the {text} instructions of .text")
            }
            Self::BadCodeRange { code_range } => {
                write!(f, "US_CODE_RANGE {code_range:#010x} is not (INSTR_CNT - 1) << 16 (§4.1.4)")
            }
            Self::BadCodeAddr { code_addr } => {
                write!(f, "US_CODE_ADDR {code_addr:#010x} is outside the program (§4.1.4)")
            }
        }
    }
}

impl core::error::Error for ElfError {}

/// The `dpp_proginfo` structure of the Program Information note (§4.1.4), word for word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ProgramInfo {
    /// All 28 words as stored.
    pub words: [u32; PROGINFO_WORDS],
}

impl ProgramInfo {
    /// `FG_DEPTH_SRC` (word 1).
    pub const fn fg_depth_src(&self) -> u32 {
        self.words[1]
    }
    /// `US_CONFIG` (word 2).
    pub const fn us_config(&self) -> u32 {
        self.words[2]
    }
    /// `US_PIXSIZE` (word 3): the largest register used.
    pub const fn us_pixsize(&self) -> u32 {
        self.words[3]
    }
    /// `US_FC_CTRL` (word 4).
    pub const fn us_fc_ctrl(&self) -> u32 {
        self.words[4]
    }
    /// `US_CODE_ADDR` (word 5).
    pub const fn us_code_addr(&self) -> u32 {
        self.words[5]
    }
    /// `US_CODE_RANGE` (word 6).
    pub const fn us_code_range(&self) -> u32 {
        self.words[6]
    }
    /// `INSTR_CNT` (word 27).
    pub const fn instr_cnt(&self) -> u32 {
        self.words[27]
    }
    /// `FG_DEPTH_SRC` bit 0: the conditional value is exported.
    pub const fn exports_cond_value(&self) -> bool {
        self.fg_depth_src() & 1 != 0
    }
    /// `US_CONFIG` bit 0: output writes are uncached.
    pub const fn uncached_output(&self) -> bool {
        self.us_config() & 1 != 0
    }
    /// `US_FC_CTRL` bit 31: full flow control.
    pub const fn full_flow_control(&self) -> bool {
        self.us_fc_ctrl() & (1 << 31) != 0
    }
    /// `US_CODE_ADDR` bits 15:0: the instruction where execution begins.
    pub const fn code_start(&self) -> u32 {
        self.us_code_addr() & 0xFFFF
    }
    /// `US_CODE_ADDR` bits 31:16: the instruction after which to halt.
    pub const fn code_end(&self) -> u32 {
        self.us_code_addr() >> 16
    }
}

/// A list of 32-bit indices from a list note (inputs, outputs, constants), borrowed from the
/// file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct IndexList<'a> {
    bytes: &'a [u8],
}

impl<'a> IndexList<'a> {
    /// Number of indices.
    pub fn len(&self) -> usize {
        self.bytes.len() / 4
    }
    /// Whether the list is empty (or the note absent).
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
    /// The indices in file order.
    pub fn iter(&self) -> Words<'a> {
        Words { bytes: self.bytes }
    }
    /// Whether `index` is listed.
    pub fn contains(&self, index: u32) -> bool {
        self.iter().any(|i| i == index)
    }
}

impl<'a> IntoIterator for IndexList<'a> {
    type Item = u32;
    type IntoIter = Words<'a>;
    fn into_iter(self) -> Words<'a> {
        self.iter()
    }
}

/// Little-endian 32-bit words of a byte slice whose length is a multiple of 4.
#[derive(Debug, Clone)]
pub struct Words<'a> {
    bytes: &'a [u8],
}

impl Iterator for Words<'_> {
    type Item = u32;
    fn next(&mut self) -> Option<u32> {
        let (w, rest) = self.bytes.split_first_chunk::<4>()?;
        self.bytes = rest;
        Some(u32::from_le_bytes(*w))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.bytes.len() / 4;
        (n, Some(n))
    }
}

impl ExactSizeIterator for Words<'_> {}

/// Instruction slots of the text: `[u32; 6]` each.
#[derive(Debug, Clone)]
pub struct Instructions<'a> {
    bytes: &'a [u8],
}

impl Iterator for Instructions<'_> {
    type Item = [u32; INSTRUCTION_WORDS];
    fn next(&mut self) -> Option<Self::Item> {
        let (slot, rest) = self.bytes.split_first_chunk::<INSTRUCTION_BYTES>()?;
        self.bytes = rest;
        let mut out = [0u32; INSTRUCTION_WORDS];
        for (o, w) in out.iter_mut().zip(slot.chunks_exact(4)) {
            *o = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
        }
        Some(out)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.bytes.len() / INSTRUCTION_BYTES;
        (n, Some(n))
    }
}

impl ExactSizeIterator for Instructions<'_> {}

/// A validated DPP executable borrowing its text and note lists from the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct DppExecutable<'a> {
    text: &'a [u8],
    text_vaddr: u32,
    info: ProgramInfo,
    inputs: IndexList<'a>,
    outputs: IndexList<'a>,
    float32_consts: IndexList<'a>,
    int32_consts: IndexList<'a>,
    cond_out: bool,
    early_exit: bool,
}

fn u16_at(b: &[u8], off: usize) -> Option<u16> {
    let end = off.checked_add(2)?;
    let s = b.get(off..end)?;
    Some(u16::from_le_bytes([s[0], s[1]]))
}

fn u32_at(b: &[u8], off: usize) -> Option<u32> {
    let end = off.checked_add(4)?;
    let s = b.get(off..end)?;
    Some(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

/// Rounds `n` up to a multiple of 4.
fn pad4(n: usize) -> Option<usize> {
    Some(n.checked_add(3)? & !3)
}

#[derive(Clone, Copy)]
struct Segment {
    index: usize,
    p_type: u32,
    start: usize,
    end: usize,
}

/// Notes collected while scanning the `PT_NOTE` segments.
#[derive(Default)]
struct NoteSet<'a> {
    seen: [bool; 8],
    info: Option<ProgramInfo>,
    inputs: IndexList<'a>,
    outputs: IndexList<'a>,
    float32_consts: IndexList<'a>,
    int32_consts: IndexList<'a>,
    cond_out: bool,
    early_exit: bool,
}

impl<'a> NoteSet<'a> {
    fn add(&mut self, kind: NoteKind, desc: &'a [u8]) -> Result<(), ElfError> {
        let slot = &mut self.seen[kind as usize];
        if *slot {
            return Err(ElfError::DuplicateNote { kind });
        }
        *slot = true;
        let descsz = desc.len() as u32;
        let size_err = ElfError::NoteSizeMismatch { kind, descsz };
        match kind {
            NoteKind::ProgramInfo => {
                if desc.len() != PROGINFO_WORDS * 4 {
                    return Err(size_err);
                }
                let mut words = [0u32; PROGINFO_WORDS];
                for (w, v) in words.iter_mut().zip(Words { bytes: desc }) {
                    *w = v;
                }
                self.info = Some(ProgramInfo { words });
            }
            NoteKind::CondOut | NoteKind::EarlyExit => {
                if desc.len() != 4 {
                    return Err(size_err);
                }
                let value = Words { bytes: desc }.next().unwrap_or(0);
                let flag = match value {
                    0 => false,
                    1 => true,
                    _ => return Err(ElfError::BadNoteValue { kind, value }),
                };
                if kind == NoteKind::CondOut {
                    self.cond_out = flag;
                } else {
                    self.early_exit = flag;
                }
            }
            NoteKind::Inputs
            | NoteKind::Outputs
            | NoteKind::Float32Consts
            | NoteKind::Int32Consts => {
                if !desc.len().is_multiple_of(4) {
                    return Err(size_err);
                }
                let list = IndexList { bytes: desc };
                let limit = match kind {
                    NoteKind::Inputs => Some(16),
                    NoteKind::Outputs => Some(4),
                    _ => None,
                };
                if let Some(limit) = limit
                    && let Some(index) = list.iter().find(|&i| i >= limit)
                {
                    return Err(ElfError::NoteIndexOutOfRange { kind, index });
                }
                match kind {
                    NoteKind::Inputs => self.inputs = list,
                    NoteKind::Outputs => self.outputs = list,
                    NoteKind::Float32Consts => self.float32_consts = list,
                    _ => self.int32_consts = list,
                }
            }
        }
        Ok(())
    }

    fn scan(&mut self, seg: &'a [u8], segment: usize) -> Result<(), ElfError> {
        let mut off = 0usize;
        while off < seg.len() {
            let trunc = ElfError::NoteTruncated { segment, offset: off };
            let namesz = u32_at(seg, off).ok_or(trunc)?;
            let descsz = u32_at(seg, off + 4).ok_or(trunc)?;
            let note_type = u32_at(seg, off + 8).ok_or(trunc)?;
            let name_start = off.checked_add(12).ok_or(trunc)?;
            let name_end = name_start.checked_add(namesz as usize).ok_or(trunc)?;
            let desc_start =
                name_start.checked_add(pad4(namesz as usize).ok_or(trunc)?).ok_or(trunc)?;
            let desc_end = desc_start.checked_add(descsz as usize).ok_or(trunc)?;
            let next = desc_start.checked_add(pad4(descsz as usize).ok_or(trunc)?).ok_or(trunc)?;
            if next > seg.len() {
                return Err(trunc);
            }
            let name = seg.get(name_start..name_end).ok_or(trunc)?;
            let desc = seg.get(desc_start..desc_end).ok_or(trunc)?;
            if name != NOTE_NAME {
                return Err(ElfError::BadNoteName { note_type, namesz });
            }
            let kind =
                NoteKind::from_type(note_type).ok_or(ElfError::UnknownNoteType { note_type })?;
            self.add(kind, desc)?;
            off = next;
        }
        Ok(())
    }
}

impl<'a> DppExecutable<'a> {
    /// Parses and validates a DPP executable (ch. 4). Never panics; every malformed input is
    /// an [`ElfError`].
    pub fn parse(bytes: &'a [u8]) -> Result<Self, ElfError> {
        let len = bytes.len();
        let Some(ident) = bytes.get(..EHDR_SIZE) else {
            return Err(ElfError::TruncatedHeader { len });
        };
        if ident[..4] != *b"\x7fELF" {
            return Err(ElfError::BadMagic);
        }
        if ident[4] != ELFCLASS32 {
            return Err(ElfError::BadClass(ident[4]));
        }
        if ident[5] != ELFDATA2LSB {
            return Err(ElfError::BadData(ident[5]));
        }
        if ident[6] != EV_CURRENT {
            return Err(ElfError::BadIdentVersion(ident[6]));
        }
        if ident[7] != ELFOSABI_ATI {
            return Err(ElfError::BadOsAbi(ident[7]));
        }
        if ident[8] != ABI_VERSION {
            return Err(ElfError::BadAbiVersion(ident[8]));
        }
        // The header is 52 bytes long, so these reads cannot fail; default defensively.
        let h16 = |o| u16_at(ident, o).unwrap_or(0);
        let h32 = |o| u32_at(ident, o).unwrap_or(0);
        let e_type = h16(16);
        let e_machine = h16(18);
        let e_version = h32(20);
        let e_entry = h32(24);
        let e_phoff = h32(28);
        let e_flags = h32(36);
        let e_ehsize = h16(40);
        let e_phentsize = h16(42);
        let e_phnum = h16(44);
        if e_type != ET_EXEC {
            return Err(ElfError::BadType(e_type));
        }
        if e_machine != EM_ATI_R5XX {
            return Err(ElfError::BadMachine(e_machine));
        }
        if e_version != u32::from(EV_CURRENT) {
            return Err(ElfError::BadVersion(e_version));
        }
        if e_entry != 0 {
            return Err(ElfError::BadEntry(e_entry));
        }
        if e_flags != EF_ATI_DPP {
            return Err(ElfError::BadFlags(e_flags));
        }
        if usize::from(e_ehsize) != EHDR_SIZE {
            return Err(ElfError::BadEhsize(e_ehsize));
        }
        if usize::from(e_phentsize) != PHDR_SIZE {
            return Err(ElfError::BadPhentsize(e_phentsize));
        }
        if e_phnum == 0 {
            return Err(ElfError::NoProgramHeaders);
        }
        let ph_oob = ElfError::PhdrOutOfBounds { offset: e_phoff, count: e_phnum, len };
        let ph_start = e_phoff as usize;
        let ph_end = usize::from(e_phnum)
            .checked_mul(PHDR_SIZE)
            .and_then(|n| n.checked_add(ph_start))
            .ok_or(ph_oob)?;
        let phdrs = bytes.get(ph_start..ph_end).ok_or(ph_oob)?;
        if ph_start < EHDR_SIZE {
            // The table would overlap the ELF header.
            return Err(ph_oob);
        }

        let mut segs = [Segment { index: 0, p_type: 0, start: 0, end: 0 }; MAX_SEGMENTS];
        let mut nsegs = 0usize;
        let mut text: Option<(usize, u32, &'a [u8])> = None;
        for (index, ph) in phdrs.chunks_exact(PHDR_SIZE).enumerate() {
            let p = |o| u32_at(ph, o).unwrap_or(0);
            let (p_type, p_offset, p_vaddr, p_filesz, p_memsz) = (p(0), p(4), p(8), p(16), p(20));
            match p_type {
                PT_NULL => continue,
                PT_LOAD | PT_NOTE => {}
                _ => return Err(ElfError::UnexpectedSegment { index, p_type }),
            }
            let oob = ElfError::SegmentOutOfBounds { index, offset: p_offset, size: p_filesz, len };
            let start = p_offset as usize;
            let end = start.checked_add(p_filesz as usize).ok_or(oob)?;
            let data = bytes.get(start..end).ok_or(oob)?;
            if p_filesz != 0 && (start < EHDR_SIZE || (start < ph_end && end > ph_start)) {
                return Err(ElfError::SegmentOverlapsHeaders { index });
            }
            for other in &segs[..nsegs] {
                if p_filesz != 0 && other.start < end && start < other.end {
                    return Err(ElfError::SegmentsOverlap { first: other.index, second: index });
                }
            }
            if p_type == PT_LOAD {
                if text.is_some() {
                    return Err(ElfError::DuplicateText { index });
                }
                if p_memsz != p_filesz {
                    return Err(ElfError::TextSizeMismatch { filesz: p_filesz, memsz: p_memsz });
                }
                text = Some((index, p_vaddr, data));
            }
            if nsegs == MAX_SEGMENTS {
                return Err(ElfError::TooManySegments { max: MAX_SEGMENTS });
            }
            segs[nsegs] = Segment { index, p_type, start, end };
            nsegs += 1;
        }
        let (_, text_vaddr, text) = text.ok_or(ElfError::MissingText)?;
        if !segs[..nsegs].iter().any(|s| s.p_type == PT_NOTE) {
            return Err(ElfError::MissingNotes);
        }
        if text.is_empty() {
            return Err(ElfError::EmptyText);
        }
        if text.len() % INSTRUCTION_BYTES != 0 {
            return Err(ElfError::TextNotInstructionMultiple { size: text.len() as u32 });
        }
        let count = (text.len() / INSTRUCTION_BYTES) as u32;
        if count > MAX_INSTRUCTIONS {
            return Err(ElfError::TooManyInstructions { count });
        }

        let mut notes = NoteSet::default();
        for s in &segs[..nsegs] {
            if s.p_type == PT_NOTE {
                let seg = bytes.get(s.start..s.end).unwrap_or(&[]);
                notes.scan(seg, s.index)?;
            }
        }
        let info = notes.info.ok_or(ElfError::MissingProgramInfo)?;
        if info.instr_cnt() != count {
            return Err(ElfError::InstructionCountMismatch {
                proginfo: info.instr_cnt(),
                text: count,
            });
        }
        if info.us_code_range() != (count - 1) << 16 {
            return Err(ElfError::BadCodeRange { code_range: info.us_code_range() });
        }
        if info.code_start() > info.code_end() || info.code_end() >= count {
            return Err(ElfError::BadCodeAddr { code_addr: info.us_code_addr() });
        }
        Ok(Self {
            text,
            text_vaddr,
            info,
            inputs: notes.inputs,
            outputs: notes.outputs,
            float32_consts: notes.float32_consts,
            int32_consts: notes.int32_consts,
            cond_out: notes.cond_out,
            early_exit: notes.early_exit,
        })
    }

    /// The raw `.text` bytes (a whole number of 24-byte instruction slots).
    pub fn text(&self) -> &'a [u8] {
        self.text
    }

    /// `p_vaddr` of the text segment (not interpreted; CTM places instructions with
    /// `set_inst_fmt`).
    pub fn text_vaddr(&self) -> u32 {
        self.text_vaddr
    }

    /// The text as little-endian 32-bit words, to copy to the instruction buffer.
    pub fn instruction_words(&self) -> Words<'a> {
        Words { bytes: self.text }
    }

    /// The text as 6-word instruction slots.
    pub fn instructions(&self) -> Instructions<'a> {
        Instructions { bytes: self.text }
    }

    /// Number of instructions (`INSTR_CNT`, equal to the text size / 24).
    pub fn instruction_count(&self) -> u32 {
        self.info.instr_cnt()
    }

    /// The Program Information note.
    pub fn program_info(&self) -> &ProgramInfo {
        &self.info
    }

    /// Input indices the program reads (Inputs note; empty if absent).
    pub fn inputs(&self) -> IndexList<'a> {
        self.inputs
    }

    /// Output indices the program writes (Outputs note; empty if absent).
    pub fn outputs(&self) -> IndexList<'a> {
        self.outputs
    }

    /// Float32 constant indices referenced (empty if the note is absent).
    pub fn float32_constants(&self) -> IndexList<'a> {
        self.float32_consts
    }

    /// Int32 constant indices referenced (empty if the note is absent).
    pub fn int32_constants(&self) -> IndexList<'a> {
        self.int32_consts
    }

    /// Whether the program writes a conditional output value (false if the note is absent).
    pub fn writes_cond_output(&self) -> bool {
        self.cond_out
    }

    /// Whether the program contains an early exit (false if the note is absent).
    pub fn has_early_exit(&self) -> bool {
        self.early_exit
    }
}
