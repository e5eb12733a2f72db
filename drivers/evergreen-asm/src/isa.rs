//! Typed encoders and decoders for the control-flow (CF), RAT-export and vertex-fetch
//! instruction words of the Evergreen and Cayman shader core. The ALU words are in [`crate::alu`].
//!
//! Bit layouts: amd-evergreen-cayman-acceleration §3 and §4 name the instructions but give no
//! encodings; the positions here are the public ones of Mesa (`sb_bc_fmt_def.inc`, `eg_asm.c`) and
//! LLVM (`R600InstrFormats.td`), cross-checked against each other:
//!
//! | word | bits |
//! |---|---|
//! | `CF_WORD0` | `ADDR` 23:0, `JUMPTABLE_SEL` 26:24, 31:27 reserved |
//! | `CF_WORD1` | `POP_COUNT` 2:0, `CF_CONST` 7:3, `COND` 9:8, `COUNT` 15:10, 19:16 reserved, `VALID_PIXEL_MODE` 20, `END_OF_PROGRAM` 21 (Evergreen; reserved on Cayman), `CF_INST` 29:22, `WHOLE_QUAD_MODE` 30 (Evergreen; reserved on Cayman), `BARRIER` 31 |
//! | `CF_ALU_WORD0` | `ADDR` 21:0, `KCACHE_BANK0` 25:22, `KCACHE_BANK1` 29:26, `KCACHE_MODE0` 31:30 |
//! | `CF_ALU_WORD1` | `KCACHE_MODE1` 1:0, `KCACHE_ADDR0` 9:2, `KCACHE_ADDR1` 17:10, `COUNT` 24:18, `ALT_CONST` 25, `CF_INST` 29:26, `WHOLE_QUAD_MODE` 30, `BARRIER` 31 |
//! | `CF_ALLOC_EXPORT_WORD0_RAT` | `RAT_ID` 3:0, `RAT_INST` 9:4, 10 reserved, `RAT_INDEX_MODE` 12:11, `TYPE` 14:13, `RW_GPR` 21:15, `RW_REL` 22, `INDEX_GPR` 29:23, `ELEM_SIZE` 31:30 |
//! | `CF_ALLOC_EXPORT_WORD1_BUF` | `ARRAY_SIZE` 11:0, `COMP_MASK` 15:12, `BURST_COUNT` 19:16, `VALID_PIXEL_MODE` 20, `END_OF_PROGRAM` 21 (Evergreen), `CF_INST` 29:22, `MARK` 30, `BARRIER` 31 |
//! | `VTX_WORD0` | `VC_INST` 4:0, `FETCH_TYPE` 6:5, `FETCH_WHOLE_QUAD` 7, `BUFFER_ID` 15:8, `SRC_GPR` 22:16, `SRC_REL` 23, `SRC_SEL_X` 25:24, then Evergreen `MEGA_FETCH_COUNT` 31:26 / Cayman `SRC_SEL_Y` 27:26, `STRUCTURED_READ` 29:28, `LDS_REQ` 30, `COALESCED_READ` 31 |
//! | `VTX_WORD1` | `DST_GPR` 6:0, `DST_REL` 7, 8 reserved, `DST_SEL_X/Y/Z/W` 11:9/14:12/17:15/20:18, `USE_CONST_FIELDS` 21, `DATA_FORMAT` 27:22, `NUM_FORMAT_ALL` 29:28, `FORMAT_COMP_ALL` 30, `SRF_MODE_ALL` 31 |
//! | `VTX_WORD2` | `OFFSET` 15:0, `ENDIAN_SWAP` 17:16, `CONST_BUF_NO_STRIDE` 18, `MEGA_FETCH` 19 (Evergreen; reserved on Cayman), `ALT_CONST` 20, `BUFFER_INDEX_MODE` 22:21, 31:23 reserved |
//!
//! A normal CF word and an ALU CF word are told apart by bit 29 of the second word: the 4-bit
//! ALU `CF_INST` values (8-15) all set it, the 8-bit normal ones (below 0x80) never do.
//!
//! Every encoder checks its fields: a value wider than its field, a reserved enumeration value
//! or a field the chip does not have is an [`EncodeError`], never a silently truncated word.
//! Decoders reject set reserved bits, so `decode(encode(x)) == x` for every encodable `x`.

use core::fmt;

/// The shader-core generation a program is assembled for (amd-evergreen-cayman §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Chip {
    /// Evergreen (Cypress, HD 5870): five ALU slots x, y, z, w and the transcendental slot t,
    /// vertex fetches in VC clauses, `END_OF_PROGRAM` bits.
    Evergreen,
    /// Cayman (HD 6970): four ALU slots x, y, z, w (§4.2: the t slot is removed), vertex
    /// fetches in TC clauses (§4.1), the program ends with `CF_END`.
    Cayman,
}

impl Chip {
    /// Both chips, for tests and tools that run a program on each.
    pub const ALL: [Chip; 2] = [Chip::Evergreen, Chip::Cayman];

    /// Human-readable name.
    pub const fn name(self) -> &'static str {
        match self {
            Chip::Evergreen => "Evergreen",
            Chip::Cayman => "Cayman",
        }
    }

    /// Whether the chip has the transcendental slot t (§4.2: Cayman does not).
    pub const fn has_trans_slot(self) -> bool {
        matches!(self, Chip::Evergreen)
    }
}

impl fmt::Display for Chip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a word could not be encoded or decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum EncodeError {
    /// A numeric field is wider than its bit field.
    OutOfRange {
        /// Field name as in the bit layouts.
        field: &'static str,
        /// The rejected value.
        value: u32,
        /// Largest value the field holds.
        max: u32,
    },
    /// A field holds a value that is reserved, or outside the subset this crate supports.
    Reserved {
        /// Field name as in the bit layouts.
        field: &'static str,
        /// The rejected raw value.
        value: u32,
    },
    /// The field or instruction does not exist on this chip.
    NotOnChip {
        /// What was used.
        what: &'static str,
        /// The chip that lacks it.
        chip: Chip,
    },
    /// A combination the encoding cannot express; the text says which.
    Invalid(&'static str),
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::OutOfRange { field, value, max } => {
                write!(f, "{field} = {value} is out of range (max {max})")
            }
            Self::Reserved { field, value } => {
                write!(f, "{field} = {value:#x} is reserved or not in the supported subset")
            }
            Self::NotOnChip { what, chip } => write!(f, "{what} does not exist on {chip}"),
            Self::Invalid(why) => f.write_str(why),
        }
    }
}

impl core::error::Error for EncodeError {}

/// `value` placed at bit `lo` of a `width`-bit field, or `OutOfRange`.
pub(crate) fn put(
    field: &'static str,
    value: u32,
    lo: u32,
    width: u32,
) -> Result<u32, EncodeError> {
    let max = (1u32 << width) - 1;
    if value > max { Err(EncodeError::OutOfRange { field, value, max }) } else { Ok(value << lo) }
}

pub(crate) const fn flag(b: bool, pos: u32) -> u32 {
    (b as u32) << pos
}

pub(crate) const fn get(word: u32, lo: u32, width: u32) -> u32 {
    (word >> lo) & ((1u32 << width) - 1)
}

pub(crate) const fn bit(word: u32, pos: u32) -> bool {
    word & (1 << pos) != 0
}

/// Reserved bits `lo..lo+width` of a decoded word must be zero.
pub(crate) fn reserved(
    field: &'static str,
    word: u32,
    lo: u32,
    width: u32,
) -> Result<(), EncodeError> {
    match get(word, lo, width) {
        0 => Ok(()),
        value => Err(EncodeError::Reserved { field, value }),
    }
}

/// A field that exists only on `owner` must be clear on other chips.
pub(crate) fn only_on(
    chip: Chip,
    owner: Chip,
    what: &'static str,
    used: bool,
) -> Result<(), EncodeError> {
    if used && chip != owner { Err(EncodeError::NotOnChip { what, chip }) } else { Ok(()) }
}

/// Defines a field enumeration with its raw values; undocumented values decode as `Reserved`.
macro_rules! raw_enum {
    ($(#[$m:meta])* $name:ident : $field:literal { $($(#[$vm:meta])* $v:ident = $n:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[cfg_attr(feature = "defmt", derive(defmt::Format))]
        pub enum $name { $($(#[$vm])* $v = $n),+ }
        impl $name {
            /// Every value, in encoding order.
            pub const ALL: &'static [$name] = &[$($name::$v),+];
            /// The raw field value.
            pub const fn raw(self) -> u32 { self as u32 }
            /// Decodes a raw field value; values outside the table are `Reserved`.
            pub fn from_raw(value: u32) -> Result<Self, $crate::isa::EncodeError> {
                match value {
                    $($n => Ok(Self::$v),)+
                    _ => Err($crate::isa::EncodeError::Reserved { field: $field, value }),
                }
            }
        }
    };
}
pub(crate) use raw_enum;

raw_enum! {
    /// A vector channel: the 2-bit `*_CHAN` / `*_SEL` fields and the ALU slot of a dst channel.
    Chan: "CHAN" {
        /// x (bank 0).
        X = 0,
        /// y (bank 1).
        Y = 1,
        /// z (bank 2).
        Z = 2,
        /// w (bank 3).
        W = 3,
    }
}

impl Chan {
    /// The channel with index `i & 3`.
    pub const fn from_index(i: usize) -> Chan {
        match i & 3 {
            0 => Chan::X,
            1 => Chan::Y,
            2 => Chan::Z,
            _ => Chan::W,
        }
    }
    /// 0 for x … 3 for w.
    pub const fn index(self) -> usize {
        self as usize
    }
    /// `'x'`, `'y'`, `'z'` or `'w'`.
    pub const fn letter(self) -> char {
        ['x', 'y', 'z', 'w'][self as usize]
    }
}

raw_enum! {
    /// `CF_INST` of a normal CF word (`CF_WORD1` 29:22), Mesa `r600_isa.c` EG/CM columns.
    /// Only the instructions of the supported subset are listed.
    CfInst: "CF_INST" {
        /// No operation (on Evergreen it carries `END_OF_PROGRAM` after an ALU clause, a
        /// `LOOP_END` or a `POP`).
        Nop = 0x00,
        /// Texture-cache fetch clause (Cayman: vertex fetches too, §4.1).
        Tc = 0x01,
        /// Vertex-cache fetch clause (Evergreen only, §4.1).
        Vc = 0x02,
        /// End of a loop: jump back to `ADDR` while any thread is still in the loop.
        LoopEnd = 0x05,
        /// Start of a DX10 loop (runs until every thread breaks); `ADDR` is the CF
        /// instruction after the matching `LOOP_END`.
        LoopStartDx10 = 0x06,
        /// The active threads leave the innermost loop; `ADDR` is its `LOOP_END`.
        LoopBreak = 0x09,
        /// Jump to `ADDR` if no thread is active, popping `POP_COUNT` stack entries when taken.
        Jump = 0x0A,
        /// Push the active mask; jump to `ADDR` if no thread is active.
        Push = 0x0B,
        /// Invert the active mask relative to the stack top; jump to `ADDR` (popping
        /// `POP_COUNT`) if no thread is active afterwards.
        Else = 0x0D,
        /// Pop `POP_COUNT` stack entries.
        Pop = 0x0E,
        /// End of program (Cayman only, §4.1 "END_OF_PROGRAM bit replaced with CF_INST_END").
        CfEnd = 0x20,
    }
}

impl CfInst {
    /// Whether the instruction exists on `chip` (VC is Evergreen only, CF_END Cayman only).
    pub const fn exists_on(self, chip: Chip) -> bool {
        match self {
            CfInst::Vc => matches!(chip, Chip::Evergreen),
            CfInst::CfEnd => matches!(chip, Chip::Cayman),
            _ => true,
        }
    }
    /// The mnemonic of the text syntax.
    pub const fn mnemonic(self) -> &'static str {
        match self {
            CfInst::Nop => "nop",
            CfInst::Tc => "tc",
            CfInst::Vc => "vc",
            CfInst::LoopEnd => "loop_end",
            CfInst::LoopStartDx10 => "loop_start_dx10",
            CfInst::LoopBreak => "loop_break",
            CfInst::Jump => "jump",
            CfInst::Push => "push",
            CfInst::Else => "else",
            CfInst::Pop => "pop",
            CfInst::CfEnd => "cf_end",
        }
    }
}

raw_enum! {
    /// `COND` (`CF_WORD1` 9:8): which threads a flow-control instruction considers.
    CfCond: "COND" {
        /// The active threads.
        Active = 0,
        /// No thread (always false).
        False = 1,
        /// Active threads where the boolean constant `CF_CONST` is set.
        Bool = 2,
        /// Active threads where the boolean constant `CF_CONST` is clear.
        NotBool = 3,
    }
}

/// A normal control-flow instruction: `CF_WORD0` + `CF_WORD1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CfWord {
    /// `CF_INST`.
    pub inst: CfInst,
    /// `ADDR` (24 bits): a clause start or a CF jump target, in 64-bit units from the program
    /// start.
    pub addr: u32,
    /// `JUMPTABLE_SEL` (3 bits).
    pub jumptable_sel: u8,
    /// `POP_COUNT` (3 bits).
    pub pop_count: u8,
    /// `CF_CONST` (5 bits): loop or boolean constant.
    pub cf_const: u8,
    /// `COND`.
    pub cond: CfCond,
    /// `COUNT` (6 bits): fetch instructions in the clause minus one.
    pub count: u8,
    /// `VALID_PIXEL_MODE`.
    pub valid_pixel_mode: bool,
    /// `END_OF_PROGRAM` (Evergreen only).
    pub end_of_program: bool,
    /// `WHOLE_QUAD_MODE` (Evergreen only; §4.1: removed from these instructions on Cayman).
    pub whole_quad_mode: bool,
    /// `BARRIER`: wait for earlier CF instructions to complete.
    pub barrier: bool,
}

impl CfWord {
    /// A word with every field zero except `CF_INST` and `BARRIER` (set).
    pub const fn new(inst: CfInst) -> Self {
        Self {
            inst,
            addr: 0,
            jumptable_sel: 0,
            pop_count: 0,
            cf_const: 0,
            cond: CfCond::Active,
            count: 0,
            valid_pixel_mode: false,
            end_of_program: false,
            whole_quad_mode: false,
            barrier: true,
        }
    }

    /// Encodes both words for `chip`.
    pub fn encode(&self, chip: Chip) -> Result<[u32; 2], EncodeError> {
        if !self.inst.exists_on(chip) {
            return Err(EncodeError::NotOnChip { what: self.inst.mnemonic(), chip });
        }
        only_on(chip, Chip::Evergreen, "END_OF_PROGRAM", self.end_of_program)?;
        only_on(chip, Chip::Evergreen, "WHOLE_QUAD_MODE (CF_WORD1)", self.whole_quad_mode)?;
        let w0 = put("ADDR", self.addr, 0, 24)?
            | put("JUMPTABLE_SEL", self.jumptable_sel.into(), 24, 3)?;
        let w1 = put("POP_COUNT", self.pop_count.into(), 0, 3)?
            | put("CF_CONST", self.cf_const.into(), 3, 5)?
            | self.cond.raw() << 8
            | put("COUNT", self.count.into(), 10, 6)?
            | flag(self.valid_pixel_mode, 20)
            | flag(self.end_of_program, 21)
            | self.inst.raw() << 22
            | flag(self.whole_quad_mode, 30)
            | flag(self.barrier, 31);
        Ok([w0, w1])
    }

    /// Decodes both words for `chip`.
    pub fn decode(w: [u32; 2], chip: Chip) -> Result<Self, EncodeError> {
        reserved("CF_WORD0 31:27", w[0], 27, 5)?;
        reserved("CF_WORD1 19:16", w[1], 16, 4)?;
        if chip == Chip::Cayman {
            reserved("CF_WORD1 21 (Cayman)", w[1], 21, 1)?;
            reserved("CF_WORD1 30 (Cayman)", w[1], 30, 1)?;
        }
        let inst = CfInst::from_raw(get(w[1], 22, 8))?;
        if !inst.exists_on(chip) {
            return Err(EncodeError::NotOnChip { what: inst.mnemonic(), chip });
        }
        Ok(Self {
            inst,
            addr: get(w[0], 0, 24),
            jumptable_sel: get(w[0], 24, 3) as u8,
            pop_count: get(w[1], 0, 3) as u8,
            cf_const: get(w[1], 3, 5) as u8,
            cond: CfCond::from_raw(get(w[1], 8, 2))?,
            count: get(w[1], 10, 6) as u8,
            valid_pixel_mode: bit(w[1], 20),
            end_of_program: bit(w[1], 21),
            whole_quad_mode: bit(w[1], 30),
            barrier: bit(w[1], 31),
        })
    }
}

raw_enum! {
    /// `CF_INST` of an ALU clause (`CF_ALU_WORD1` 29:26).
    AluCfInst: "CF_INST (ALU)" {
        /// `CF_INST_ALU`.
        Alu = 8,
        /// `CF_INST_ALU_PUSH_BEFORE`: push the active mask, then run the clause.
        AluPushBefore = 9,
        /// `CF_INST_ALU_POP_AFTER`: run the clause, then pop one entry.
        AluPopAfter = 10,
        /// `CF_INST_ALU_POP2_AFTER`: run the clause, then pop two entries.
        AluPop2After = 11,
        /// `CF_INST_ALU_ELSE_AFTER`: run the clause, then act as `ELSE`.
        AluElseAfter = 15,
    }
}

impl AluCfInst {
    /// The mnemonic of the text syntax.
    pub const fn mnemonic(self) -> &'static str {
        match self {
            AluCfInst::Alu => "alu",
            AluCfInst::AluPushBefore => "alu_push_before",
            AluCfInst::AluPopAfter => "alu_pop_after",
            AluCfInst::AluPop2After => "alu_pop2_after",
            AluCfInst::AluElseAfter => "alu_else_after",
        }
    }
}

raw_enum! {
    /// `KCACHE_MODE`: how many 16-constant lines of a constant buffer a kcache set locks.
    KcacheMode: "KCACHE_MODE" {
        /// Set unused.
        Nop = 0,
        /// `LOCK_1`: the line at `ADDR` (16 constants, `SRC_SEL` base + 0..15).
        Lock1 = 1,
        /// `LOCK_2`: the lines at `ADDR` and `ADDR + 1` (32 constants).
        Lock2 = 2,
    }
}

/// One kcache set of an ALU clause: which constant-buffer lines `SRC_SEL` 128-159 (set 0) or
/// 160-191 (set 1) read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Kcache {
    /// `KCACHE_BANK` (4 bits): the constant buffer.
    pub bank: u8,
    /// `KCACHE_MODE`.
    pub mode: KcacheMode,
    /// `KCACHE_ADDR` (8 bits): the first locked line, in units of 16 constants (256 bytes).
    pub addr: u8,
}

impl Kcache {
    /// An unused set.
    pub const NONE: Kcache = Kcache { bank: 0, mode: KcacheMode::Nop, addr: 0 };

    /// Whether this set covers constant `index` (16-byte units) of `bank`, and at which offset.
    pub fn offset_of(&self, bank: u8, index: u16) -> Option<u8> {
        let lines = match self.mode {
            KcacheMode::Nop => return None,
            KcacheMode::Lock1 => 1,
            KcacheMode::Lock2 => 2,
        };
        let first = u16::from(self.addr) * 16;
        (bank == self.bank && index >= first && index < first + 16 * lines)
            .then(|| (index - first) as u8)
    }
}

impl Default for Kcache {
    fn default() -> Self {
        Kcache::NONE
    }
}

/// An ALU clause instruction: `CF_ALU_WORD0` + `CF_ALU_WORD1` (no `END_OF_PROGRAM` bit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CfAluWord {
    /// `CF_INST`.
    pub inst: AluCfInst,
    /// `ADDR` (22 bits): first ALU slot of the clause, in 64-bit units from the program start.
    pub addr: u32,
    /// Kcache sets 0 and 1.
    pub kcache: [Kcache; 2],
    /// `COUNT` (7 bits): 64-bit slots in the clause (instructions and literal pairs) minus one.
    pub count: u8,
    /// `ALT_CONST`.
    pub alt_const: bool,
    /// `WHOLE_QUAD_MODE`.
    pub whole_quad_mode: bool,
    /// `BARRIER`.
    pub barrier: bool,
}

impl CfAluWord {
    /// Encodes both words (identical layout on both chips).
    pub fn encode(&self) -> Result<[u32; 2], EncodeError> {
        let [k0, k1] = self.kcache;
        let w0 = put("ADDR (ALU)", self.addr, 0, 22)?
            | put("KCACHE_BANK0", k0.bank.into(), 22, 4)?
            | put("KCACHE_BANK1", k1.bank.into(), 26, 4)?
            | k0.mode.raw() << 30;
        let w1 = k1.mode.raw()
            | put("KCACHE_ADDR0", k0.addr.into(), 2, 8)?
            | put("KCACHE_ADDR1", k1.addr.into(), 10, 8)?
            | put("COUNT (ALU)", self.count.into(), 18, 7)?
            | flag(self.alt_const, 25)
            | self.inst.raw() << 26
            | flag(self.whole_quad_mode, 30)
            | flag(self.barrier, 31);
        Ok([w0, w1])
    }

    /// Decodes both words.
    pub fn decode(w: [u32; 2]) -> Result<Self, EncodeError> {
        let k0 = Kcache {
            bank: get(w[0], 22, 4) as u8,
            mode: KcacheMode::from_raw(get(w[0], 30, 2))?,
            addr: get(w[1], 2, 8) as u8,
        };
        let k1 = Kcache {
            bank: get(w[0], 26, 4) as u8,
            mode: KcacheMode::from_raw(get(w[1], 0, 2))?,
            addr: get(w[1], 10, 8) as u8,
        };
        Ok(Self {
            inst: AluCfInst::from_raw(get(w[1], 26, 4))?,
            addr: get(w[0], 0, 22),
            kcache: [k0, k1],
            count: get(w[1], 18, 7) as u8,
            alt_const: bit(w[1], 25),
            whole_quad_mode: bit(w[1], 30),
            barrier: bit(w[1], 31),
        })
    }
}

raw_enum! {
    /// `CF_INST` of a RAT export (`CF_ALLOC_EXPORT_WORD1_BUF` 29:22).
    RatCfInst: "CF_INST (RAT)" {
        /// `CF_INST_MEM_RAT`: through the colour-buffer cache.
        MemRat = 0x56,
        /// `CF_INST_MEM_RAT_CACHELESS` (Mesa: `MEM_RAT_NOCACHE`).
        MemRatCacheless = 0x57,
    }
}

raw_enum! {
    /// `RAT_INST`: the operation a RAT export performs (only the supported subset).
    RatInst: "RAT_INST" {
        /// `STORE_RAW` (Evergreen): write the `COMP_MASK` channels of `RW_GPR` at dword
        /// `INDEX_GPR.x`.
        StoreRaw = 2,
        /// `ADD`: atomically add `RW_GPR.x` to the dword at `INDEX_GPR.x` (no return value).
        Add = 7,
        /// `STORE_DWORD` (Cayman): the Cayman form of the cacheless global store, same operands
        /// as `STORE_RAW`.
        StoreDword = 0x14,
    }
}

impl RatInst {
    /// The mnemonic of the text syntax.
    pub const fn mnemonic(self) -> &'static str {
        match self {
            RatInst::StoreRaw => "store_raw",
            RatInst::Add => "add",
            RatInst::StoreDword => "store_dword",
        }
    }

    /// The global dword store of `chip`: `STORE_RAW` on Evergreen, `STORE_DWORD` on Cayman
    /// (LLVM R600 backend: `RAT_WRITE_CACHELESS_32_eg` uses RAT_INST 2, Cayman's
    /// `RAT_STORE_DWORD` uses 0x14; neither chip's compiler emits the other's form, so each is
    /// accepted on its own chip only).
    pub const fn store_for(chip: Chip) -> RatInst {
        match chip {
            Chip::Evergreen => RatInst::StoreRaw,
            Chip::Cayman => RatInst::StoreDword,
        }
    }

    /// Whether `chip` has this operation (the stores are chip-specific, see
    /// [`store_for`](Self::store_for)).
    fn check_chip(self, chip: Chip) -> Result<(), EncodeError> {
        only_on(chip, Chip::Evergreen, "STORE_RAW", matches!(self, RatInst::StoreRaw))?;
        only_on(chip, Chip::Cayman, "STORE_DWORD", matches!(self, RatInst::StoreDword))
    }
}

raw_enum! {
    /// `TYPE` of an export (`CF_ALLOC_EXPORT_WORD0` 14:13).
    ExportType: "TYPE" {
        /// `EXPORT_WRITE`: address from `ARRAY_BASE`.
        Write = 0,
        /// `EXPORT_WRITE_IND`: address from `INDEX_GPR` (what RAT stores use).
        WriteInd = 1,
        /// `EXPORT_WRITE_ACK`.
        WriteAck = 2,
        /// `EXPORT_WRITE_IND_ACK`.
        WriteIndAck = 3,
    }
}

/// A RAT export: `CF_ALLOC_EXPORT_WORD0_RAT` + `CF_ALLOC_EXPORT_WORD1_BUF`
/// (amd-evergreen-cayman §8.6: compute shaders write RATs through the CB).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct RatExport {
    /// `CF_INST`.
    pub cf_inst: RatCfInst,
    /// `RAT_ID` (4 bits): the RAT, i.e. colour buffer n.
    pub rat_id: u8,
    /// `RAT_INST`.
    pub rat_inst: RatInst,
    /// `RAT_INDEX_MODE` (2 bits).
    pub rat_index_mode: u8,
    /// `TYPE`.
    pub export_type: ExportType,
    /// `RW_GPR` (7 bits): the data register.
    pub rw_gpr: u8,
    /// `RW_REL`.
    pub rw_rel: bool,
    /// `INDEX_GPR` (7 bits): the register whose x holds the dword index.
    pub index_gpr: u8,
    /// `ELEM_SIZE` (2 bits).
    pub elem_size: u8,
    /// `ARRAY_SIZE` (12 bits).
    pub array_size: u16,
    /// `COMP_MASK` (4 bits): bit 0 = x … bit 3 = w.
    pub comp_mask: u8,
    /// `BURST_COUNT` (4 bits): exports minus one.
    pub burst_count: u8,
    /// `VALID_PIXEL_MODE`.
    pub valid_pixel_mode: bool,
    /// `END_OF_PROGRAM` (Evergreen only).
    pub end_of_program: bool,
    /// `MARK`: request an acknowledge.
    pub mark: bool,
    /// `BARRIER`.
    pub barrier: bool,
}

impl RatExport {
    /// An indexed RAT operation with the defaults LLVM uses for global stores (`TYPE`
    /// `WRITE_IND`, `ELEM_SIZE` 0, `ARRAY_SIZE` 0, one export, `BARRIER`): writes the `mask`
    /// channels of `data` (or adds `data.x`) at dword index `index.x` of RAT `rat`.
    pub const fn indexed(
        cf_inst: RatCfInst,
        rat_inst: RatInst,
        rat: u8,
        index: u8,
        data: u8,
        mask: u8,
    ) -> Self {
        Self {
            cf_inst,
            rat_id: rat,
            rat_inst,
            rat_index_mode: 0,
            export_type: ExportType::WriteInd,
            rw_gpr: data,
            rw_rel: false,
            index_gpr: index,
            elem_size: 0,
            array_size: 0,
            comp_mask: mask,
            burst_count: 0,
            valid_pixel_mode: false,
            end_of_program: false,
            mark: false,
            barrier: true,
        }
    }

    /// Encodes both words for `chip`.
    pub fn encode(&self, chip: Chip) -> Result<[u32; 2], EncodeError> {
        only_on(chip, Chip::Evergreen, "END_OF_PROGRAM", self.end_of_program)?;
        self.rat_inst.check_chip(chip)?;
        let w0 = put("RAT_ID", self.rat_id.into(), 0, 4)?
            | self.rat_inst.raw() << 4
            | put("RAT_INDEX_MODE", self.rat_index_mode.into(), 11, 2)?
            | self.export_type.raw() << 13
            | put("RW_GPR", self.rw_gpr.into(), 15, 7)?
            | flag(self.rw_rel, 22)
            | put("INDEX_GPR", self.index_gpr.into(), 23, 7)?
            | put("ELEM_SIZE", self.elem_size.into(), 30, 2)?;
        let w1 = put("ARRAY_SIZE", self.array_size.into(), 0, 12)?
            | put("COMP_MASK", self.comp_mask.into(), 12, 4)?
            | put("BURST_COUNT", self.burst_count.into(), 16, 4)?
            | flag(self.valid_pixel_mode, 20)
            | flag(self.end_of_program, 21)
            | self.cf_inst.raw() << 22
            | flag(self.mark, 30)
            | flag(self.barrier, 31);
        Ok([w0, w1])
    }

    /// Decodes both words for `chip`.
    pub fn decode(w: [u32; 2], chip: Chip) -> Result<Self, EncodeError> {
        reserved("CF_ALLOC_EXPORT_WORD0_RAT 10", w[0], 10, 1)?;
        if chip == Chip::Cayman {
            reserved("CF_ALLOC_EXPORT_WORD1_BUF 21 (Cayman)", w[1], 21, 1)?;
        }
        let rat_inst = RatInst::from_raw(get(w[0], 4, 6))?;
        rat_inst.check_chip(chip)?;
        Ok(Self {
            cf_inst: RatCfInst::from_raw(get(w[1], 22, 8))?,
            rat_id: get(w[0], 0, 4) as u8,
            rat_inst,
            rat_index_mode: get(w[0], 11, 2) as u8,
            export_type: ExportType::from_raw(get(w[0], 13, 2))?,
            rw_gpr: get(w[0], 15, 7) as u8,
            rw_rel: bit(w[0], 22),
            index_gpr: get(w[0], 23, 7) as u8,
            elem_size: get(w[0], 30, 2) as u8,
            array_size: get(w[1], 0, 12) as u16,
            comp_mask: get(w[1], 12, 4) as u8,
            burst_count: get(w[1], 16, 4) as u8,
            valid_pixel_mode: bit(w[1], 20),
            end_of_program: bit(w[1], 21),
            mark: bit(w[1], 30),
            barrier: bit(w[1], 31),
        })
    }
}

/// Any CF-program instruction (64 bits), told apart as described in the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum CfInstruction {
    /// `CF_WORD0/1`.
    Cf(CfWord),
    /// `CF_ALU_WORD0/1`.
    Alu(CfAluWord),
    /// A RAT export.
    Rat(RatExport),
}

impl CfInstruction {
    /// Encodes for `chip`.
    pub fn encode(&self, chip: Chip) -> Result<[u32; 2], EncodeError> {
        match self {
            CfInstruction::Cf(c) => c.encode(chip),
            CfInstruction::Alu(a) => a.encode(),
            CfInstruction::Rat(r) => r.encode(chip),
        }
    }

    /// Decodes for `chip`.
    pub fn decode(w: [u32; 2], chip: Chip) -> Result<Self, EncodeError> {
        if bit(w[1], 29) {
            return CfAluWord::decode(w).map(CfInstruction::Alu);
        }
        if RatCfInst::from_raw(get(w[1], 22, 8)).is_ok() {
            return RatExport::decode(w, chip).map(CfInstruction::Rat);
        }
        CfWord::decode(w, chip).map(CfInstruction::Cf)
    }

    /// Whether the instruction ends the program on `chip` (`END_OF_PROGRAM` on Evergreen,
    /// `CF_END` on Cayman).
    pub fn ends_program(&self, chip: Chip) -> bool {
        match (self, chip) {
            (CfInstruction::Cf(c), Chip::Evergreen) => c.end_of_program,
            (CfInstruction::Rat(r), Chip::Evergreen) => r.end_of_program,
            (CfInstruction::Cf(c), Chip::Cayman) => c.inst == CfInst::CfEnd,
            _ => false,
        }
    }
}

raw_enum! {
    /// `VC_INST` (`VTX_WORD0` 4:0).
    VtxInst: "VC_INST" {
        /// `VC_INST_FETCH`: fetch through a buffer resource.
        Fetch = 0,
    }
}

raw_enum! {
    /// `FETCH_TYPE` (`VTX_WORD0` 6:5).
    FetchType: "FETCH_TYPE" {
        /// Index plus the vertex base.
        VertexData = 0,
        /// Index plus the instance base.
        InstanceData = 1,
        /// The index as is (what compute kernels use, LLVM).
        NoIndexOffset = 2,
    }
}

raw_enum! {
    /// `DATA_FORMAT` (`VTX_WORD1` 27:22): only the 32-bit-per-component formats compute uses.
    DataFormat: "DATA_FORMAT" {
        /// `FMT_32`: one dword.
        Fmt32 = 0x0D,
        /// `FMT_32_32`: two dwords.
        Fmt32x2 = 0x1D,
        /// `FMT_32_32_32_32`: four dwords.
        Fmt32x4 = 0x22,
    }
}

impl DataFormat {
    /// Bytes one element occupies.
    pub const fn bytes(self) -> u8 {
        match self {
            DataFormat::Fmt32 => 4,
            DataFormat::Fmt32x2 => 8,
            DataFormat::Fmt32x4 => 16,
        }
    }
    /// Components one element has.
    pub const fn components(self) -> usize {
        self.bytes() as usize / 4
    }
}

raw_enum! {
    /// `NUM_FORMAT_ALL` (`VTX_WORD1` 29:28).
    NumFormat: "NUM_FORMAT_ALL" {
        /// Normalised to [0, 1] / [-1, 1].
        Norm = 0,
        /// Integer: the bits unchanged for 32-bit components.
        Int = 1,
        /// Integer converted to float.
        Scaled = 2,
    }
}

raw_enum! {
    /// A destination select of a fetch (`DST_SEL_*`, 3 bits).
    DstSel: "DST_SEL" {
        /// Component x of the fetched element.
        X = 0,
        /// Component y.
        Y = 1,
        /// Component z.
        Z = 2,
        /// Component w.
        W = 3,
        /// The constant 0.
        Zero = 4,
        /// The constant 1.
        One = 5,
        /// Leave the destination channel unwritten.
        Mask = 7,
    }
}

/// A vertex fetch: `VTX_WORD0`..`VTX_WORD2` plus a zero fourth dword (fetch instructions are
/// 128 bits).
///
/// Chip-specific fields: `mega_fetch_count` and `mega_fetch` exist only on Evergreen; Cayman
/// reuses `VTX_WORD0` 31:26 for `src_sel_y`, `structured_read`, `lds_req` and
/// `coalesced_read` (amd-evergreen-cayman §4.1 "coalesced and structured vfetch") and reserves
/// `VTX_WORD2` bit 19. A field of the other chip must be zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct VtxFetch {
    /// `VC_INST`.
    pub inst: VtxInst,
    /// `FETCH_TYPE`.
    pub fetch_type: FetchType,
    /// `FETCH_WHOLE_QUAD`.
    pub fetch_whole_quad: bool,
    /// `BUFFER_ID` (8 bits): resource = the stage's resource base + this.
    pub buffer_id: u8,
    /// `SRC_GPR` (7 bits): the register holding the index.
    pub src_gpr: u8,
    /// `SRC_REL`.
    pub src_rel: bool,
    /// `SRC_SEL_X`: the channel of `SRC_GPR` holding the index.
    pub src_sel_x: Chan,
    /// `MEGA_FETCH_COUNT` (6 bits, Evergreen).
    pub mega_fetch_count: u8,
    /// `SRC_SEL_Y` (Cayman).
    pub src_sel_y: Chan,
    /// `STRUCTURED_READ` (2 bits, Cayman).
    pub structured_read: u8,
    /// `LDS_REQ` (Cayman).
    pub lds_req: bool,
    /// `COALESCED_READ` (Cayman).
    pub coalesced_read: bool,
    /// `DST_GPR` (7 bits).
    pub dst_gpr: u8,
    /// `DST_REL`.
    pub dst_rel: bool,
    /// `DST_SEL_X/Y/Z/W`.
    pub dst_sel: [DstSel; 4],
    /// `USE_CONST_FIELDS`: take format fields from the resource instead.
    pub use_const_fields: bool,
    /// `DATA_FORMAT`.
    pub data_format: DataFormat,
    /// `NUM_FORMAT_ALL`.
    pub num_format: NumFormat,
    /// `FORMAT_COMP_ALL`: components are signed.
    pub format_comp_signed: bool,
    /// `SRF_MODE_ALL`.
    pub srf_mode_all: bool,
    /// `OFFSET` (16 bits): added to the address in bytes.
    pub offset: u16,
    /// `ENDIAN_SWAP` (2 bits).
    pub endian_swap: u8,
    /// `CONST_BUF_NO_STRIDE`.
    pub const_buf_no_stride: bool,
    /// `MEGA_FETCH` (Evergreen).
    pub mega_fetch: bool,
    /// `ALT_CONST`.
    pub alt_const: bool,
    /// `BUFFER_INDEX_MODE` (2 bits).
    pub buffer_index_mode: u8,
}

impl VtxFetch {
    /// A global-memory load as compute kernels issue it: `elements`' components of the element
    /// at byte address `src.src_chan` of fetch buffer `buffer` into `dst` (`dst_sel` per
    /// channel), with the defaults of the LLVM R600 backend: `FETCH_TYPE` 2 (no index offset),
    /// `NUM_FORMAT_ALL` 1 (integer, bits unchanged), unsigned, and on Evergreen `MEGA_FETCH` 1
    /// with `MEGA_FETCH_COUNT` = the element's bytes.
    ///
    /// `MEGA_FETCH_COUNT` is one of evergreen-compute's "could not confirm" items: the
    /// documents never define it, LLVM sets it to the fetch size in bytes (its public encoding
    /// tests: 4 for `VTX_READ_32`, 16 for `VTX_READ_128`) and Mesa uses other values. This
    /// crate follows LLVM, whose kernels are known to run, and a consumer must size loads from
    /// `DATA_FORMAT`, never from this field. Cayman has no such field (its bits are
    /// `SRC_SEL_Y`/`STRUCTURED_READ`/…), so it is 0 there.
    pub const fn load(
        chip: Chip,
        format: DataFormat,
        dst: u8,
        dst_sel: [DstSel; 4],
        src: u8,
        src_chan: Chan,
        buffer: u8,
    ) -> Self {
        let eg = matches!(chip, Chip::Evergreen);
        Self {
            inst: VtxInst::Fetch,
            fetch_type: FetchType::NoIndexOffset,
            fetch_whole_quad: false,
            buffer_id: buffer,
            src_gpr: src,
            src_rel: false,
            src_sel_x: src_chan,
            mega_fetch_count: if eg { format.bytes() } else { 0 },
            src_sel_y: Chan::X,
            structured_read: 0,
            lds_req: false,
            coalesced_read: false,
            dst_gpr: dst,
            dst_rel: false,
            dst_sel,
            use_const_fields: false,
            data_format: format,
            num_format: NumFormat::Int,
            format_comp_signed: false,
            srf_mode_all: false,
            offset: 0,
            endian_swap: 0,
            const_buf_no_stride: false,
            mega_fetch: eg,
            alt_const: false,
            buffer_index_mode: 0,
        }
    }

    /// Encodes the four dwords for `chip`.
    pub fn encode(&self, chip: Chip) -> Result<[u32; 4], EncodeError> {
        let cm_fields = self.src_sel_y != Chan::X
            || self.structured_read != 0
            || self.lds_req
            || self.coalesced_read;
        only_on(chip, Chip::Cayman, "SRC_SEL_Y/STRUCTURED_READ/LDS_REQ/COALESCED_READ", cm_fields)?;
        only_on(chip, Chip::Evergreen, "MEGA_FETCH_COUNT", self.mega_fetch_count != 0)?;
        only_on(chip, Chip::Evergreen, "MEGA_FETCH", self.mega_fetch)?;
        let hi = match chip {
            Chip::Evergreen => put("MEGA_FETCH_COUNT", self.mega_fetch_count.into(), 26, 6)?,
            Chip::Cayman => {
                self.src_sel_y.raw() << 26
                    | put("STRUCTURED_READ", self.structured_read.into(), 28, 2)?
                    | flag(self.lds_req, 30)
                    | flag(self.coalesced_read, 31)
            }
        };
        let w0 = self.inst.raw()
            | self.fetch_type.raw() << 5
            | flag(self.fetch_whole_quad, 7)
            | u32::from(self.buffer_id) << 8
            | put("SRC_GPR", self.src_gpr.into(), 16, 7)?
            | flag(self.src_rel, 23)
            | self.src_sel_x.raw() << 24
            | hi;
        let [sx, sy, sz, sw] = self.dst_sel;
        let w1 = put("DST_GPR", self.dst_gpr.into(), 0, 7)?
            | flag(self.dst_rel, 7)
            | sx.raw() << 9
            | sy.raw() << 12
            | sz.raw() << 15
            | sw.raw() << 18
            | flag(self.use_const_fields, 21)
            | self.data_format.raw() << 22
            | self.num_format.raw() << 28
            | flag(self.format_comp_signed, 30)
            | flag(self.srf_mode_all, 31);
        let w2 = u32::from(self.offset)
            | put("ENDIAN_SWAP", self.endian_swap.into(), 16, 2)?
            | flag(self.const_buf_no_stride, 18)
            | flag(self.mega_fetch, 19)
            | flag(self.alt_const, 20)
            | put("BUFFER_INDEX_MODE", self.buffer_index_mode.into(), 21, 2)?;
        Ok([w0, w1, w2, 0])
    }

    /// Decodes the four dwords for `chip`.
    pub fn decode(w: [u32; 4], chip: Chip) -> Result<Self, EncodeError> {
        reserved("VTX_WORD1 8", w[1], 8, 1)?;
        reserved("VTX_WORD2 31:23", w[2], 23, 9)?;
        if chip == Chip::Cayman {
            reserved("VTX_WORD2 19 (Cayman)", w[2], 19, 1)?;
        }
        if w[3] != 0 {
            return Err(EncodeError::Reserved { field: "fetch dword 3", value: w[3] });
        }
        let eg = chip == Chip::Evergreen;
        Ok(Self {
            inst: VtxInst::from_raw(get(w[0], 0, 5))?,
            fetch_type: FetchType::from_raw(get(w[0], 5, 2))?,
            fetch_whole_quad: bit(w[0], 7),
            buffer_id: get(w[0], 8, 8) as u8,
            src_gpr: get(w[0], 16, 7) as u8,
            src_rel: bit(w[0], 23),
            src_sel_x: Chan::from_index(get(w[0], 24, 2) as usize),
            mega_fetch_count: if eg { get(w[0], 26, 6) as u8 } else { 0 },
            src_sel_y: if eg { Chan::X } else { Chan::from_index(get(w[0], 26, 2) as usize) },
            structured_read: if eg { 0 } else { get(w[0], 28, 2) as u8 },
            lds_req: !eg && bit(w[0], 30),
            coalesced_read: !eg && bit(w[0], 31),
            dst_gpr: get(w[1], 0, 7) as u8,
            dst_rel: bit(w[1], 7),
            dst_sel: [
                DstSel::from_raw(get(w[1], 9, 3))?,
                DstSel::from_raw(get(w[1], 12, 3))?,
                DstSel::from_raw(get(w[1], 15, 3))?,
                DstSel::from_raw(get(w[1], 18, 3))?,
            ],
            use_const_fields: bit(w[1], 21),
            data_format: DataFormat::from_raw(get(w[1], 22, 6))?,
            num_format: NumFormat::from_raw(get(w[1], 28, 2))?,
            format_comp_signed: bit(w[1], 30),
            srf_mode_all: bit(w[1], 31),
            offset: get(w[2], 0, 16) as u16,
            endian_swap: get(w[2], 16, 2) as u8,
            const_buf_no_stride: bit(w[2], 18),
            mega_fetch: eg && bit(w[2], 19),
            alt_const: bit(w[2], 20),
            buffer_index_mode: get(w[2], 21, 2) as u8,
        })
    }
}
