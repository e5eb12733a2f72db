//! The typed instruction model and its 64-bit encoding (VideoCore IV 3D §3 "QPU Instruction
//! Encoding").
//!
//! The document's figure 3 is damaged; the bit positions are those of Mesa's
//! `vc4_qpu_defines.h` (ALU: sig 63:60, unpack 59:57, pm 56, pack 55:52, cond_add 51:49,
//! cond_mul 48:46, sf 45, ws 44, waddr_add 43:38, waddr_mul 37:32, op_mul 31:29, op_add 28:24,
//! raddr_a 23:18, raddr_b / small immediate 17:12, add_a 11:9, add_b 8:6, mul_a 5:3,
//! mul_b 2:0; branch: cond_br 55:52, rel 51, reg 50, raddr_a 49:45, immediate 31:0), which agree
//! with the field widths of the document's tables 1 and 10.
//!
//! Every field of a word is a field of the model, so [`Instruction::decode`] followed by
//! [`Instruction::encode`] gives the word back exactly. Words the document gives no meaning
//! (reserved opcodes, conditions, pack modes and load-immediate modes, bits the branch and
//! semaphore forms leave unused, a small-immediate rotation read as an ALU operand) are
//! [`DecodeError`]s.

use core::fmt;

macro_rules! field_enum {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $v:ident = $n:expr => $text:literal),* $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[cfg_attr(feature = "defmt", derive(defmt::Format))]
        pub enum $name { $($(#[$vm])* $v = $n),* }
        impl $name {
            /// Every value, in encoding order.
            pub const ALL: &'static [Self] = &[$(Self::$v),*];
            /// The field value.
            pub const fn bits(self) -> u8 { self as u8 }
            /// The value of a field, or `None` for a reserved one.
            pub const fn from_bits(bits: u8) -> Option<Self> {
                match bits { $($n => Some(Self::$v),)* _ => None }
            }
            /// The text name.
            pub const fn name(self) -> &'static str {
                match self { $(Self::$v => $text),* }
            }
            /// By text name.
            pub fn from_name(name: &str) -> Option<Self> {
                Self::ALL.iter().copied().find(|v| v.name() == name)
            }
        }
    };
}

field_enum! {
    /// An ALU pipe's write condition, `cond_add`/`cond_mul` (§3 table 2). The text suffix is
    /// the name (`.ifz`); `always` and `never` are the defaults and rarely written.
    Cond {
        /// Never: the pipe writes nothing (the default for a `nop` pipe).
        Never = 0 => "never",
        /// Always (the default for an operation).
        Always = 1 => "always",
        /// Z set.
        Zs = 2 => "ifz",
        /// Z clear.
        Zc = 3 => "ifnz",
        /// N set.
        Ns = 4 => "ifn",
        /// N clear.
        Nc = 5 => "ifnn",
        /// C set.
        Cs = 6 => "ifc",
        /// C clear.
        Cc = 7 => "ifnc",
    }
}

field_enum! {
    /// A branch condition over the 16 elements' flags, `cond_br` (§3 table 11); 12-14 are
    /// reserved.
    BranchCond {
        /// All Z set.
        AllZ = 0 => "allz",
        /// All Z clear.
        AllNz = 1 => "allnz",
        /// Any Z set.
        AnyZ = 2 => "anyz",
        /// Any Z clear.
        AnyNz = 3 => "anynz",
        /// All N set.
        AllN = 4 => "alln",
        /// All N clear.
        AllNn = 5 => "allnn",
        /// Any N set.
        AnyN = 6 => "anyn",
        /// Any N clear.
        AnyNn = 7 => "anynn",
        /// All C set.
        AllC = 8 => "allc",
        /// All C clear.
        AllNc = 9 => "allnc",
        /// Any C set.
        AnyC = 10 => "anyc",
        /// Any C clear.
        AnyNc = 11 => "anync",
        /// Always (unconditional).
        Always = 15 => "always",
    }
}

field_enum! {
    /// The signal of an ALU instruction (§3 table 4, values 0-12). Values 13-15 select the
    /// instruction form instead: small immediate ([`RaddrB::Imm`]), load immediate and
    /// semaphore ([`Instruction::LoadImm`], [`Instruction::Semaphore`]), branch.
    Signal {
        /// Software breakpoint.
        Breakpoint = 0 => "bkpt",
        /// No signal.
        None = 1 => "nosig",
        /// Thread switch (not last); two delay slots follow.
        ThreadSwitch = 2 => "thrsw",
        /// Program end (thread end); two delay slots follow.
        ProgramEnd = 3 => "thrend",
        /// Wait for the scoreboard before accessing the tile buffer.
        ScoreboardWait = 4 => "sbwait",
        /// Scoreboard unlock.
        ScoreboardUnlock = 5 => "sbdone",
        /// The last thread switch of a shader.
        LastThreadSwitch = 6 => "lthrsw",
        /// Coverage load from the tile buffer to r4.
        CoverageLoad = 7 => "loadcv",
        /// Colour load from the tile buffer to r4.
        ColourLoad = 8 => "loadc",
        /// Colour load and program end.
        ColourLoadEnd = 9 => "ldcend",
        /// Load data from TMU0 to r4.
        LoadTmu0 = 10 => "ldtmu0",
        /// Load data from TMU1 to r4.
        LoadTmu1 = 11 => "ldtmu1",
        /// Alpha-mask load from the tile buffer to r4.
        AlphaMaskLoad = 12 => "loadam",
    }
}

impl Signal {
    /// Ends the thread (program end or colour load and end): two delay slots follow.
    pub const fn ends_thread(self) -> bool {
        matches!(self, Self::ProgramEnd | Self::ColourLoadEnd)
    }
    /// Writes r4 (tile buffer and TMU loads, §3 "Signaling Bits").
    pub const fn loads_r4(self) -> bool {
        matches!(
            self,
            Self::CoverageLoad
                | Self::ColourLoad
                | Self::ColourLoadEnd
                | Self::LoadTmu0
                | Self::LoadTmu1
                | Self::AlphaMaskLoad
        )
    }
}

/// The raw signal field values of the three instruction forms that are not ALU signals.
pub mod sig {
    /// ALU instruction whose raddr_b field is a small immediate or rotation.
    pub const SMALL_IMMEDIATE: u8 = 13;
    /// Load immediate (and semaphore, by its mode).
    pub const LOAD_IMMEDIATE: u8 = 14;
    /// Branch.
    pub const BRANCH: u8 = 15;
}

field_enum! {
    /// The add pipe's operation, `op_add` (§3 table 12; 9-11 and 25-29 are reserved).
    AddOp {
        /// No operation.
        Nop = 0 => "nop",
        /// Float add.
        Fadd = 1 => "fadd",
        /// Float subtract.
        Fsub = 2 => "fsub",
        /// Float min.
        Fmin = 3 => "fmin",
        /// Float max.
        Fmax = 4 => "fmax",
        /// Float min of absolute values.
        Fminabs = 5 => "fminabs",
        /// Float max of absolute values.
        Fmaxabs = 6 => "fmaxabs",
        /// Float to signed integer.
        Ftoi = 7 => "ftoi",
        /// Signed integer to float.
        Itof = 8 => "itof",
        /// Integer add.
        Add = 12 => "add",
        /// Integer subtract.
        Sub = 13 => "sub",
        /// Logical shift right.
        Shr = 14 => "shr",
        /// Arithmetic shift right.
        Asr = 15 => "asr",
        /// Rotate right.
        Ror = 16 => "ror",
        /// Shift left.
        Shl = 17 => "shl",
        /// Integer min.
        Min = 18 => "min",
        /// Integer max.
        Max = 19 => "max",
        /// Bitwise AND.
        And = 20 => "and",
        /// Bitwise OR (`mov` when both operands are the same).
        Or = 21 => "or",
        /// Bitwise XOR.
        Xor = 22 => "xor",
        /// Bitwise NOT.
        Not = 23 => "not",
        /// Count leading zeros.
        Clz = 24 => "clz",
        /// Saturating add per 8-bit element.
        V8adds = 30 => "v8adds",
        /// Saturating subtract per 8-bit element.
        V8subs = 31 => "v8subs",
    }
}

field_enum! {
    /// The mul pipe's operation, `op_mul` (§3 table 13).
    MulOp {
        /// No operation.
        Nop = 0 => "nop",
        /// Float multiply.
        Fmul = 1 => "fmul",
        /// 24-bit integer multiply.
        Mul24 = 2 => "mul24",
        /// Multiply of 8-bit elements in [0, 1.0].
        V8muld = 3 => "v8muld",
        /// Min per 8-bit element (`mov` when both operands are the same).
        V8min = 4 => "v8min",
        /// Max per 8-bit element.
        V8max = 5 => "v8max",
        /// Saturating add per 8-bit element.
        V8adds = 6 => "v8adds",
        /// Saturating subtract per 8-bit element.
        V8subs = 7 => "v8subs",
    }
}

field_enum! {
    /// An ALU input mux, `add_a`/`add_b`/`mul_a`/`mul_b` (§3 table 3).
    Mux {
        /// Accumulator r0.
        R0 = 0 => "r0",
        /// Accumulator r1.
        R1 = 1 => "r1",
        /// Accumulator r2.
        R2 = 2 => "r2",
        /// Accumulator r3.
        R3 = 3 => "r3",
        /// Accumulator r4 (loads, SFU results).
        R4 = 4 => "r4",
        /// Accumulator r5.
        R5 = 5 => "r5",
        /// The value read from register file A at `raddr_a`.
        A = 6 => "a",
        /// The value read from register file B at `raddr_b`, or the small immediate.
        B = 7 => "b",
    }
}

/// A register-file side: A or B (§3 table 14 has a column per side).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum File {
    /// Register file A.
    A,
    /// Register file B.
    B,
}

/// A 6-bit register address (§3 table 14): 0-31 the physical register file of the side it is
/// used on, 32-63 accumulators and I/O registers. The same number reads and writes different
/// things; [`Reg::read_name`] and [`Reg::write_name`] say what, per side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Reg(u8);

/// Write names of addresses 32-63 (side A, side B), §3 table 14.
const WRITE_NAMES: [(&str, &str); 32] = [
    ("r0", "r0"),
    ("r1", "r1"),
    ("r2", "r2"),
    ("r3", "r3"),
    ("tmu_noswap", "tmu_noswap"),
    ("r5", "r5"),
    ("host_int", "host_int"),
    ("nop", "nop"),
    ("unif_addr", "unif_addr"),
    ("quad_x", "quad_y"),
    ("ms_flags", "rev_flag"),
    ("tlb_stencil", "tlb_stencil"),
    ("tlb_z", "tlb_z"),
    ("tlb_color_ms", "tlb_color_ms"),
    ("tlb_color_all", "tlb_color_all"),
    ("tlb_alpha_mask", "tlb_alpha_mask"),
    ("vpm", "vpm"),
    ("vr_setup", "vw_setup"),
    ("vr_addr", "vw_addr"),
    ("mutex_release", "mutex_release"),
    ("sfu_recip", "sfu_recip"),
    ("sfu_recipsqrt", "sfu_recipsqrt"),
    ("sfu_exp", "sfu_exp"),
    ("sfu_log", "sfu_log"),
    ("tmu0_s", "tmu0_s"),
    ("tmu0_t", "tmu0_t"),
    ("tmu0_r", "tmu0_r"),
    ("tmu0_b", "tmu0_b"),
    ("tmu1_s", "tmu1_s"),
    ("tmu1_t", "tmu1_t"),
    ("tmu1_r", "tmu1_r"),
    ("tmu1_b", "tmu1_b"),
];

/// Read names of addresses 32-63 (side A, side B; "" where the table defines nothing).
const READ_NAMES: [(&str, &str); 32] = {
    let mut t = [("", ""); 32];
    t[0] = ("unif", "unif");
    t[3] = ("vary", "vary");
    t[6] = ("elem_num", "qpu_num");
    t[7] = ("nop", "nop");
    t[9] = ("x_coord", "y_coord");
    t[10] = ("ms_flags", "rev_flag");
    t[16] = ("vpm", "vpm");
    t[17] = ("vr_busy", "vw_busy");
    t[18] = ("vr_wait", "vw_wait");
    t[19] = ("mutex_acq", "mutex_acq");
    t
};

impl Reg {
    /// `r0` (ACC0) as a write address.
    pub const ACC0: Self = Self(32);
    /// `r1` (ACC1) as a write address.
    pub const ACC1: Self = Self(33);
    /// `r2` (ACC2) as a write address.
    pub const ACC2: Self = Self(34);
    /// `r3` (ACC3) as a write address.
    pub const ACC3: Self = Self(35);
    /// TMU_NOSWAP (write).
    pub const TMU_NOSWAP: Self = Self(36);
    /// `r5` (ACC5) as a write address.
    pub const ACC5: Self = Self(37);
    /// HOST_INT (write).
    pub const HOST_INT: Self = Self(38);
    /// No read / no write.
    pub const NOP: Self = Self(39);
    /// UNIFORMS_ADDRESS (write).
    pub const UNIFORMS_ADDRESS: Self = Self(40);
    /// TLB_STENCIL_SETUP (write).
    pub const TLB_STENCIL_SETUP: Self = Self(43);
    /// TLB_Z (write).
    pub const TLB_Z: Self = Self(44);
    /// TLB_COLOUR_MS (write).
    pub const TLB_COLOUR_MS: Self = Self(45);
    /// TLB_COLOUR_ALL (write).
    pub const TLB_COLOUR_ALL: Self = Self(46);
    /// TLB_ALPHA_MASK (write).
    pub const TLB_ALPHA_MASK: Self = Self(47);
    /// VPM_WRITE / VPM_READ.
    pub const VPM: Self = Self(48);
    /// VPMVCD_RD_SETUP (side A) / VPMVCD_WR_SETUP (side B) writes; VPM_LD_BUSY / VPM_ST_BUSY
    /// reads.
    pub const VPM_SETUP: Self = Self(49);
    /// VPM_LD_ADDR (A) / VPM_ST_ADDR (B) writes, which start a DMA; VPM_LD_WAIT / VPM_ST_WAIT
    /// reads.
    pub const VPM_ADDR: Self = Self(50);
    /// MUTEX_ACQUIRE (read) / MUTEX_RELEASE (write).
    pub const MUTEX: Self = Self(51);
    /// SFU_RECIP (write).
    pub const SFU_RECIP: Self = Self(52);
    /// SFU_RECIPSQRT (write).
    pub const SFU_RECIPSQRT: Self = Self(53);
    /// SFU_EXP (write).
    pub const SFU_EXP: Self = Self(54);
    /// SFU_LOG (write).
    pub const SFU_LOG: Self = Self(55);
    /// TMU0_S (write; retiring).
    pub const TMU0_S: Self = Self(56);
    /// TMU1_S (write; retiring).
    pub const TMU1_S: Self = Self(60);
    /// UNIFORM_READ.
    pub const UNIFORM_READ: Self = Self(32);
    /// VARYING_READ.
    pub const VARYING_READ: Self = Self(35);
    /// ELEMENT_NUMBER (side A) / QPU_NUMBER (side B) reads.
    pub const ELEMENT_QPU_NUMBER: Self = Self(38);
    /// MS_FLAGS (A) / REV_FLAG (B).
    pub const MS_REV_FLAGS: Self = Self(42);

    /// Address `n` (0-63), or `None` past 63.
    pub const fn new(n: u8) -> Option<Self> {
        if n < 64 { Some(Self(n)) } else { None }
    }
    /// Physical register-file location `n` (0-31), or `None` past 31.
    pub const fn file(n: u8) -> Option<Self> {
        if n < 32 { Some(Self(n)) } else { None }
    }
    pub(crate) const fn raw(n: u8) -> Self {
        Self(n & 63)
    }
    /// The address.
    pub const fn index(self) -> u8 {
        self.0
    }
    /// A physical register-file location (0-31), not an accumulator or I/O register.
    pub const fn is_file(self) -> bool {
        self.0 < 32
    }
    /// Writes to it land in different registers on side A and side B (regfile locations,
    /// QUAD_X/Y, MS_FLAGS/REV_FLAG, the VPM read/write setup and address registers).
    pub const fn write_is_sided(self) -> bool {
        self.0 < 32 || matches!(self.0, 41 | 42 | 49 | 50)
    }
    /// Reads of it return different things on side A and side B.
    pub const fn read_is_sided(self) -> bool {
        self.0 < 32 || matches!(self.0, 38 | 41 | 42 | 49 | 50)
    }
    /// The §3 table 14 write name on `side`, `None` for a regfile location.
    pub const fn write_name(self, side: File) -> Option<&'static str> {
        if self.0 < 32 {
            return None;
        }
        let (a, b) = WRITE_NAMES[(self.0 - 32) as usize];
        Some(match side {
            File::A => a,
            File::B => b,
        })
    }
    /// The §3 table 14 read name on `side`, `None` for a regfile location or an address the
    /// table defines no read for.
    pub const fn read_name(self, side: File) -> Option<&'static str> {
        if self.0 < 32 {
            return None;
        }
        let (a, b) = READ_NAMES[(self.0 - 32) as usize];
        let n = match side {
            File::A => a,
            File::B => b,
        };
        if n.is_empty() { None } else { Some(n) }
    }
    /// A write name: the address and the side it is limited to (`None` when both sides mean
    /// the same register).
    pub fn from_write_name(name: &str) -> Option<(Self, Option<File>)> {
        let i = WRITE_NAMES.iter().position(|(a, b)| *a == name || *b == name)?;
        let (a, b) = WRITE_NAMES[i];
        let side = if a == b {
            None
        } else if a == name {
            Some(File::A)
        } else {
            Some(File::B)
        };
        Some((Self(32 + i as u8), side))
    }
    /// A read name: the address and the side it is limited to (`None` when both sides read
    /// the same thing).
    pub fn from_read_name(name: &str) -> Option<(Self, Option<File>)> {
        let i = READ_NAMES.iter().position(|(a, b)| !a.is_empty() && (*a == name || *b == name))?;
        let (a, b) = READ_NAMES[i];
        let side = if a == b {
            None
        } else if a == name {
            Some(File::A)
        } else {
            Some(File::B)
        };
        Some((Self(32 + i as u8), side))
    }
}

field_enum! {
    /// The unpack field (§3 tables 6 and 8): for a regfile-A read when pm is 0, for an r4 read
    /// when pm is 1. The text suffix is the name (`ra3.16a`, `r4.8c`).
    Unpack {
        /// No unpack.
        None = 0 => "nounpack",
        /// 16-bit a (low half) to 32.
        U16a = 1 => "16a",
        /// 16-bit b (high half) to 32.
        U16b = 2 => "16b",
        /// Byte d replicated across the word.
        U8dr = 3 => "8dr",
        /// Byte a to 32.
        U8a = 4 => "8a",
        /// Byte b to 32.
        U8b = 5 => "8b",
        /// Byte c to 32.
        U8c = 6 => "8c",
        /// Byte d to 32.
        U8d = 7 => "8d",
    }
}

field_enum! {
    /// The regfile-A pack of a write to side A, pm = 0 (§3 table 7). Text suffix on the
    /// destination: `ra3.16a`, `ra3.8a.sat`.
    APack {
        /// No pack.
        None = 0 => "nopack",
        /// 32 to 16a.
        P16a = 1 => "16a",
        /// 32 to 16b.
        P16b = 2 => "16b",
        /// 32 to 8888 (byte replicated).
        P8888 = 3 => "8888",
        /// 32 to 8a.
        P8a = 4 => "8a",
        /// 32 to 8b.
        P8b = 5 => "8b",
        /// 32 to 8c.
        P8c = 6 => "8c",
        /// 32 to 8d.
        P8d = 7 => "8d",
        /// Saturate 32.
        Sat = 8 => "sat",
        /// 16a with saturation.
        P16aSat = 9 => "16a.sat",
        /// 16b with saturation.
        P16bSat = 10 => "16b.sat",
        /// 8888 with saturation.
        P8888Sat = 11 => "8888.sat",
        /// 8a with saturation.
        P8aSat = 12 => "8a.sat",
        /// 8b with saturation.
        P8bSat = 13 => "8b.sat",
        /// 8c with saturation.
        P8cSat = 14 => "8c.sat",
        /// 8d with saturation.
        P8dSat = 15 => "8d.sat",
    }
}

field_enum! {
    /// The mul pipe's float-to-colour conversion, pm = 1 (§3 table 9; 1, 2 and 8-15 are
    /// reserved). Text suffix on the mul destination: `r0.c8888`, `ra2.c8a`.
    MulPack {
        /// No conversion.
        None = 0 => "nopack",
        /// Colour replicated in all four bytes.
        C8888 = 3 => "c8888",
        /// Colour to byte a.
        C8a = 4 => "c8a",
        /// Colour to byte b.
        C8b = 5 => "c8b",
        /// Colour to byte c.
        C8c = 6 => "c8c",
        /// Colour to byte d.
        C8d = 7 => "c8d",
    }
}

/// The pm bit with the pack and unpack fields it selects (§3 "Pack/Unpack Bits").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Packing {
    /// pm = 0: the regfile-A unpack of side-A reads and the pack of side-A writes.
    RegfileA {
        /// Unpack of a regfile-A read.
        unpack: Unpack,
        /// Pack of a write to side A.
        pack: APack,
    },
    /// pm = 1: the r4 unpack and the mul pipe's colour conversion.
    MulR4 {
        /// Unpack of an r4 read.
        unpack: Unpack,
        /// The mul pipe's colour conversion.
        pack: MulPack,
    },
}

impl Packing {
    /// pm = 0, no unpack, no pack.
    pub const NONE: Self = Self::RegfileA { unpack: Unpack::None, pack: APack::None };
    /// The pm bit.
    pub const fn pm(self) -> bool {
        matches!(self, Self::MulR4 { .. })
    }
    /// The unpack field.
    pub const fn unpack(self) -> Unpack {
        match self {
            Self::RegfileA { unpack, .. } | Self::MulR4 { unpack, .. } => unpack,
        }
    }
    const fn pack_bits(self) -> u8 {
        match self {
            Self::RegfileA { pack, .. } => pack.bits(),
            Self::MulR4 { pack, .. } => pack.bits(),
        }
    }
}

/// The write-back fields every non-branch form shares: destinations, conditions, the
/// set-flags and write-swap bits (§3 table 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct WriteBack {
    /// The add pipe's destination (side A unless `ws`).
    pub waddr_add: Reg,
    /// The mul pipe's destination (side B unless `ws`).
    pub waddr_mul: Reg,
    /// The add pipe's condition.
    pub cond_add: Cond,
    /// The mul pipe's condition.
    pub cond_mul: Cond,
    /// Set flags (from the add pipe unless it is a nop or never, then from the mul pipe).
    pub sf: bool,
    /// Write swap: add to side B, mul to side A.
    pub ws: bool,
}

impl WriteBack {
    /// Nothing written: both destinations `nop`, both conditions never.
    pub const NONE: Self = Self {
        waddr_add: Reg::NOP,
        waddr_mul: Reg::NOP,
        cond_add: Cond::Never,
        cond_mul: Cond::Never,
        sf: false,
        ws: false,
    };
    /// The side the add pipe writes.
    pub const fn add_side(&self) -> File {
        if self.ws { File::B } else { File::A }
    }
    /// The side the mul pipe writes.
    pub const fn mul_side(&self) -> File {
        if self.ws { File::A } else { File::B }
    }
}

/// A small immediate, the 6-bit field in place of raddr_b under signal 13 (§3 table 5):
/// 0-15 and -16..-1, powers of two 1.0-128.0 and 1/256-1/2, or a rotation of the mul output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct SmallImm(u8);

impl SmallImm {
    /// Rotation of the mul output by r5 element 0 bits 3:0 (value 48).
    pub const ROTATE_R5: Self = Self(48);
    /// The raw field, or `None` past 63.
    pub const fn from_bits(bits: u8) -> Option<Self> {
        if bits < 64 { Some(Self(bits)) } else { None }
    }
    /// The field value.
    pub const fn bits(self) -> u8 {
        self.0
    }
    /// The integer immediate `v` (-16..=15).
    pub const fn int(v: i8) -> Option<Self> {
        if v >= 0 && v <= 15 {
            Some(Self(v as u8))
        } else if v >= -16 && v < 0 {
            Some(Self((v + 32) as u8))
        } else {
            None
        }
    }
    /// The float immediate with bits `f` (1.0-128.0, 1/256-1/2 powers of two).
    pub fn float(f: f32) -> Option<Self> {
        (32..48).map(Self).find(|s| s.value() == Some(f.to_bits()))
    }
    /// A rotation of the mul output by `n` (1-15) elements upwards.
    pub const fn rotate(n: u8) -> Option<Self> {
        if n >= 1 && n <= 15 { Some(Self(48 + n)) } else { None }
    }
    /// The 32-bit value the B mux reads, or `None` for a rotation.
    pub const fn value(self) -> Option<u32> {
        match self.0 {
            0..=15 => Some(self.0 as u32),
            16..=31 => Some((self.0 as i32 - 32) as u32),
            // 2^(n-32) for 32-39, 2^(n-48) for 40-47: exponent field 127 + e.
            32..=39 => Some((127 + self.0 as u32 - 32) << 23),
            40..=47 => Some((127 + self.0 as u32 - 48) << 23),
            _ => None,
        }
    }
    /// The rotation: `Some(None)` by r5, `Some(Some(n))` by n; `None` for an immediate.
    pub const fn rotation(self) -> Option<Option<u8>> {
        match self.0 {
            48 => Some(None),
            49..=63 => Some(Some(self.0 - 48)),
            _ => None,
        }
    }
}

/// What the raddr_b field holds: a register-file B / I/O read address, or (signal 13) a small
/// immediate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum RaddrB {
    /// A read address on side B.
    Reg(Reg),
    /// A small immediate or mul-output rotation (§3 "Small Immediate").
    Imm(SmallImm),
}

/// An ALU instruction (§3 "ALU Instructions").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Alu {
    /// The signal; must be [`Signal::None`] when `raddr_b` is a small immediate.
    pub sig: Signal,
    /// pm, pack and unpack.
    pub packing: Packing,
    /// Destinations, conditions, sf, ws.
    pub wb: WriteBack,
    /// The add operation.
    pub op_add: AddOp,
    /// The mul operation.
    pub op_mul: MulOp,
    /// The read address on side A.
    pub raddr_a: Reg,
    /// The read address on side B, or a small immediate.
    pub raddr_b: RaddrB,
    /// The add pipe's A operand.
    pub add_a: Mux,
    /// The add pipe's B operand.
    pub add_b: Mux,
    /// The mul pipe's A operand.
    pub mul_a: Mux,
    /// The mul pipe's B operand.
    pub mul_b: Mux,
}

impl Alu {
    /// The canonical no-op (Mesa's `qpu_NOP`: hi 0x100009E7, lo 0x009E7000).
    pub const NOP: Self = Self {
        sig: Signal::None,
        packing: Packing::NONE,
        wb: WriteBack::NONE,
        op_add: AddOp::Nop,
        op_mul: MulOp::Nop,
        raddr_a: Reg::NOP,
        raddr_b: RaddrB::Reg(Reg::NOP),
        add_a: Mux::R0,
        add_b: Mux::R0,
        mul_a: Mux::R0,
        mul_b: Mux::R0,
    };
    /// The no-op with a signal.
    pub const fn signal(sig: Signal) -> Self {
        Self { sig, ..Self::NOP }
    }
}

/// The kind of a load immediate, the unpack field of signal 14 (§3 "Load Immediate").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum LoadImmKind {
    /// Mode 0: the 32-bit value in every element.
    Word,
    /// Mode 1: per-element signed 2-bit values (element i: bit 16+i sign, bit i low).
    PerElementSigned,
    /// Mode 3: per-element unsigned 2-bit values (element i: bit 16+i high, bit i low).
    PerElementUnsigned,
}

impl LoadImmKind {
    const fn mode(self) -> u8 {
        match self {
            Self::Word => 0,
            Self::PerElementSigned => 1,
            Self::PerElementUnsigned => 3,
        }
    }
}

/// A load immediate (§3 "Load Immediate Instructions"): both pipes output the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct LoadImm {
    /// Word or per-element.
    pub kind: LoadImmKind,
    /// The immediate (bits 31:0).
    pub value: u32,
    /// pm and pack (the unpack field holds the kind, so it is always `Unpack::None` here).
    pub packing: Packing,
    /// Destinations, conditions, sf, ws.
    pub wb: WriteBack,
}

impl LoadImm {
    /// `value` into `dst` by the add pipe (side A for a regfile location), the mul pipe idle.
    pub const fn word(dst: Reg, value: u32) -> Self {
        Self {
            kind: LoadImmKind::Word,
            value,
            packing: Packing::NONE,
            wb: WriteBack { waddr_add: dst, cond_add: Cond::Always, ..WriteBack::NONE },
        }
    }
    /// The per-element encoding of 16 signed values in -2..=1, or `None` if one is outside.
    pub fn per_element_signed(values: [i8; 16]) -> Option<u32> {
        let mut v = 0u32;
        for (i, &e) in values.iter().enumerate() {
            if !(-2..=1).contains(&e) {
                return None;
            }
            let bits = (e as u32) & 3;
            v |= (bits >> 1) << (16 + i) | (bits & 1) << i;
        }
        Some(v)
    }
    /// The per-element encoding of 16 unsigned values in 0..=3, or `None` if one is outside.
    pub fn per_element_unsigned(values: [u8; 16]) -> Option<u32> {
        let mut v = 0u32;
        for (i, &e) in values.iter().enumerate() {
            if e > 3 {
                return None;
            }
            v |= (e as u32 >> 1) << (16 + i) | (e as u32 & 1) << i;
        }
        Some(v)
    }
    /// Element `i`'s value (a 2-bit field sign-extended for [`LoadImmKind::PerElementSigned`];
    /// the whole word for [`LoadImmKind::Word`]).
    pub fn element(&self, i: usize) -> i64 {
        let two = ((self.value >> (16 + (i & 15)) & 1) << 1 | (self.value >> (i & 15) & 1)) as i64;
        match self.kind {
            LoadImmKind::Word => self.value as i64,
            LoadImmKind::PerElementSigned => {
                if two >= 2 {
                    two - 4
                } else {
                    two
                }
            }
            LoadImmKind::PerElementUnsigned => two,
        }
    }
}

/// A semaphore instruction (§3 "Semaphore Instruction"): signal 14 with load-immediate mode 4,
/// semaphore number in bits 3:0, sa in bit 4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Semaphore {
    /// sa = 1: decrement (acquire; stalls below 0); sa = 0: increment (release; stalls above
    /// 15).
    pub acquire: bool,
    /// The semaphore, 0-15.
    pub index: u8,
    /// pm and pack (unpack is the mode field, always `Unpack::None` here).
    pub packing: Packing,
    /// Destinations (the outputs are not generally useful), conditions, sf, ws.
    pub wb: WriteBack,
}

impl Semaphore {
    /// Acquire (`true`) or release semaphore `index`, writing nothing.
    pub const fn new(acquire: bool, index: u8) -> Self {
        Self { acquire, index: index & 15, packing: Packing::NONE, wb: WriteBack::NONE }
    }
}

/// A branch (§3 "Branch Instruction"): the target is `immediate`, plus PC+4 (the instruction
/// after the three delay slots, in bytes) when `rel`, plus element 0 of regfile A at `raddr_a`
/// when `reg`. The link address (the instruction after the delay slots) is the pipes' output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Branch {
    /// The condition.
    pub cond: BranchCond,
    /// Relative to PC+4.
    pub rel: bool,
    /// Add regfile A element 0 at `raddr_a`.
    pub reg: bool,
    /// The regfile A location (0-31) read when `reg`.
    pub raddr_a: u8,
    /// Link destinations of the add and mul outputs.
    pub waddr_add: Reg,
    /// Link destination of the mul output.
    pub waddr_mul: Reg,
    /// Write swap.
    pub ws: bool,
    /// The signed byte offset or address.
    pub immediate: i32,
}

impl Branch {
    /// A relative branch by `offset` instructions from the instruction after the delay slots,
    /// with no link.
    pub const fn relative(cond: BranchCond, offset: i32) -> Self {
        Self {
            cond,
            rel: true,
            reg: false,
            raddr_a: 0,
            waddr_add: Reg::NOP,
            waddr_mul: Reg::NOP,
            ws: false,
            immediate: offset.wrapping_mul(8),
        }
    }
    /// The instruction index a relative, non-register branch at `index` goes to, if whole.
    pub const fn target(&self, index: usize) -> Option<i64> {
        if !self.rel || self.reg || self.immediate % 8 != 0 {
            return None;
        }
        Some(index as i64 + 4 + (self.immediate / 8) as i64)
    }
}

/// One QPU instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Instruction {
    /// ALU (signals 0-13).
    Alu(Alu),
    /// Load immediate (signal 14, modes 0, 1, 3).
    LoadImm(LoadImm),
    /// Semaphore (signal 14, mode 4).
    Semaphore(Semaphore),
    /// Branch (signal 15).
    Branch(Branch),
}

/// Why a word is no instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum DecodeError {
    /// op_add 9-11 or 25-29 (§3 table 12: reserved).
    ReservedAddOp(u8),
    /// A pm = 1 pack of 1, 2 or 8-15 (§3 table 9: reserved).
    ReservedMulPack(u8),
    /// Load-immediate mode 2, 5, 6 or 7 (§3 "Load Immediate": modes 0, 1, 3 and the
    /// semaphore's 4 only).
    ReservedLoadImmMode(u8),
    /// cond_br 12-14 (§3 table 11: reserved).
    ReservedBranchCond(u8),
    /// Bits a form leaves unused are set (branch bits 59:56, semaphore bits 31:5): the mask.
    UnusedBitsSet(u64),
    /// An ALU operand reads the B mux while the small-immediate field holds a rotation, which
    /// supplies no value (§3 table 5, 48-63).
    RotationAsOperand,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ReservedAddOp(v) => write!(f, "reserved add opcode {v}"),
            Self::ReservedMulPack(v) => write!(f, "reserved mul pack mode {v}"),
            Self::ReservedLoadImmMode(v) => write!(f, "reserved load-immediate mode {v}"),
            Self::ReservedBranchCond(v) => write!(f, "reserved branch condition {v}"),
            Self::UnusedBitsSet(m) => write!(f, "unused bits set ({m:#018x})"),
            Self::RotationAsOperand => f.write_str("a rotation read as an ALU operand"),
        }
    }
}

impl core::error::Error for DecodeError {}

/// Why an [`Instruction`] cannot be encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum EncodeError {
    /// A signal other than none together with a small immediate: both use the signal field.
    SignalWithSmallImmediate,
    /// An ALU operand reads the B mux while the small-immediate field holds a rotation.
    RotationAsOperand,
    /// A load immediate or semaphore with an unpack: the field holds the mode.
    UnpackInLoadImm,
    /// A semaphore number past 15.
    SemaphoreIndex(u8),
    /// A branch register past regfile location 31 (the field has 5 bits).
    BranchRegister(u8),
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::SignalWithSmallImmediate => {
                f.write_str("a signal cannot go with a small immediate (one field)")
            }
            Self::RotationAsOperand => f.write_str("a rotation read as an ALU operand"),
            Self::UnpackInLoadImm => f.write_str("a load immediate has no unpack"),
            Self::SemaphoreIndex(i) => write!(f, "semaphore {i} past 15"),
            Self::BranchRegister(r) => write!(f, "branch register ra{r} past ra31"),
        }
    }
}

impl core::error::Error for EncodeError {}

const fn get(word: u64, hi: u32, lo: u32) -> u8 {
    ((word >> lo) & ((1 << (hi - lo + 1)) - 1)) as u8
}

const fn writeback_bits(p: Packing, wb: &WriteBack) -> u64 {
    (p.pm() as u64) << 56
        | (p.pack_bits() as u64) << 52
        | (wb.cond_add as u64) << 49
        | (wb.cond_mul as u64) << 46
        | (wb.sf as u64) << 45
        | (wb.ws as u64) << 44
        | (wb.waddr_add.0 as u64) << 38
        | (wb.waddr_mul.0 as u64) << 32
}

fn decode_writeback(w: u64, unpack: Unpack) -> Result<(Packing, WriteBack), DecodeError> {
    let pack = get(w, 55, 52);
    let packing = if w >> 56 & 1 == 1 {
        Packing::MulR4 {
            unpack,
            pack: MulPack::from_bits(pack).ok_or(DecodeError::ReservedMulPack(pack))?,
        }
    } else {
        Packing::RegfileA { unpack, pack: APack::from_bits(pack).unwrap_or(APack::None) }
    };
    let wb = WriteBack {
        waddr_add: Reg(get(w, 43, 38)),
        waddr_mul: Reg(get(w, 37, 32)),
        cond_add: Cond::from_bits(get(w, 51, 49)).unwrap_or(Cond::Never),
        cond_mul: Cond::from_bits(get(w, 48, 46)).unwrap_or(Cond::Never),
        sf: w >> 45 & 1 == 1,
        ws: w >> 44 & 1 == 1,
    };
    Ok((packing, wb))
}

impl Alu {
    fn reads_rotation(&self) -> bool {
        matches!(self.raddr_b, RaddrB::Imm(s) if s.rotation().is_some())
            && [self.add_a, self.add_b, self.mul_a, self.mul_b].contains(&Mux::B)
    }
}

impl Instruction {
    /// The 64-bit word (§3 "QPU Instruction Encoding").
    pub fn encode(&self) -> Result<u64, EncodeError> {
        Ok(match self {
            Self::Alu(a) => {
                let (sig, b) = match a.raddr_b {
                    RaddrB::Reg(r) => (a.sig.bits(), r.0),
                    RaddrB::Imm(_) if a.sig != Signal::None => {
                        return Err(EncodeError::SignalWithSmallImmediate);
                    }
                    RaddrB::Imm(s) => (sig::SMALL_IMMEDIATE, s.0),
                };
                if a.reads_rotation() {
                    return Err(EncodeError::RotationAsOperand);
                }
                (sig as u64) << 60
                    | (a.packing.unpack().bits() as u64) << 57
                    | writeback_bits(a.packing, &a.wb)
                    | (a.op_mul.bits() as u64) << 29
                    | (a.op_add.bits() as u64) << 24
                    | (a.raddr_a.0 as u64) << 18
                    | (b as u64) << 12
                    | (a.add_a.bits() as u64) << 9
                    | (a.add_b.bits() as u64) << 6
                    | (a.mul_a.bits() as u64) << 3
                    | a.mul_b.bits() as u64
            }
            Self::LoadImm(l) => {
                if l.packing.unpack() != Unpack::None {
                    return Err(EncodeError::UnpackInLoadImm);
                }
                (sig::LOAD_IMMEDIATE as u64) << 60
                    | (l.kind.mode() as u64) << 57
                    | writeback_bits(l.packing, &l.wb)
                    | l.value as u64
            }
            Self::Semaphore(s) => {
                if s.packing.unpack() != Unpack::None {
                    return Err(EncodeError::UnpackInLoadImm);
                }
                if s.index > 15 {
                    return Err(EncodeError::SemaphoreIndex(s.index));
                }
                (sig::LOAD_IMMEDIATE as u64) << 60
                    | 4 << 57
                    | writeback_bits(s.packing, &s.wb)
                    | (s.acquire as u64) << 4
                    | s.index as u64
            }
            Self::Branch(b) => {
                if b.raddr_a > 31 {
                    return Err(EncodeError::BranchRegister(b.raddr_a));
                }
                (sig::BRANCH as u64) << 60
                    | (b.cond.bits() as u64) << 52
                    | (b.rel as u64) << 51
                    | (b.reg as u64) << 50
                    | (b.raddr_a as u64) << 45
                    | (b.ws as u64) << 44
                    | (b.waddr_add.0 as u64) << 38
                    | (b.waddr_mul.0 as u64) << 32
                    | b.immediate as u32 as u64
            }
        })
    }

    /// The instruction of a word; [`DecodeError`] for a word the document gives no meaning.
    pub fn decode(w: u64) -> Result<Self, DecodeError> {
        let sig = get(w, 63, 60);
        let unpack_bits = get(w, 59, 57);
        match sig {
            sig::BRANCH => {
                let unused = w & (0xf << 56);
                if unused != 0 {
                    return Err(DecodeError::UnusedBitsSet(unused));
                }
                let c = get(w, 55, 52);
                Ok(Self::Branch(Branch {
                    cond: BranchCond::from_bits(c).ok_or(DecodeError::ReservedBranchCond(c))?,
                    rel: w >> 51 & 1 == 1,
                    reg: w >> 50 & 1 == 1,
                    raddr_a: get(w, 49, 45),
                    ws: w >> 44 & 1 == 1,
                    waddr_add: Reg(get(w, 43, 38)),
                    waddr_mul: Reg(get(w, 37, 32)),
                    immediate: w as u32 as i32,
                }))
            }
            sig::LOAD_IMMEDIATE => {
                let (packing, wb) = decode_writeback(w, Unpack::None)?;
                let kind = match unpack_bits {
                    0 => LoadImmKind::Word,
                    1 => LoadImmKind::PerElementSigned,
                    3 => LoadImmKind::PerElementUnsigned,
                    4 => {
                        let unused = w & 0xffff_ffe0;
                        if unused != 0 {
                            return Err(DecodeError::UnusedBitsSet(unused));
                        }
                        return Ok(Self::Semaphore(Semaphore {
                            acquire: w >> 4 & 1 == 1,
                            index: get(w, 3, 0),
                            packing,
                            wb,
                        }));
                    }
                    m => return Err(DecodeError::ReservedLoadImmMode(m)),
                };
                Ok(Self::LoadImm(LoadImm { kind, value: w as u32, packing, wb }))
            }
            _ => {
                let unpack = Unpack::from_bits(unpack_bits).unwrap_or(Unpack::None);
                let (packing, wb) = decode_writeback(w, unpack)?;
                let op = get(w, 28, 24);
                let b = get(w, 17, 12);
                let (sig, raddr_b) = if sig == sig::SMALL_IMMEDIATE {
                    (Signal::None, RaddrB::Imm(SmallImm(b)))
                } else {
                    (Signal::from_bits(sig).unwrap_or(Signal::None), RaddrB::Reg(Reg(b)))
                };
                let alu = Alu {
                    sig,
                    packing,
                    wb,
                    op_add: AddOp::from_bits(op).ok_or(DecodeError::ReservedAddOp(op))?,
                    op_mul: MulOp::from_bits(get(w, 31, 29)).unwrap_or(MulOp::Nop),
                    raddr_a: Reg(get(w, 23, 18)),
                    raddr_b,
                    add_a: Mux::from_bits(get(w, 11, 9)).unwrap_or(Mux::R0),
                    add_b: Mux::from_bits(get(w, 8, 6)).unwrap_or(Mux::R0),
                    mul_a: Mux::from_bits(get(w, 5, 3)).unwrap_or(Mux::R0),
                    mul_b: Mux::from_bits(get(w, 2, 0)).unwrap_or(Mux::R0),
                };
                if alu.reads_rotation() {
                    return Err(DecodeError::RotationAsOperand);
                }
                Ok(Self::Alu(alu))
            }
        }
    }

    /// The value of the signal field (0-15).
    pub fn signal_bits(&self) -> u8 {
        match self {
            Self::Alu(a) if matches!(a.raddr_b, RaddrB::Imm(_)) => sig::SMALL_IMMEDIATE,
            Self::Alu(a) => a.sig.bits(),
            Self::LoadImm(_) | Self::Semaphore(_) => sig::LOAD_IMMEDIATE,
            Self::Branch(_) => sig::BRANCH,
        }
    }

    /// The ALU signal (none for the other forms).
    pub fn signal(&self) -> Signal {
        match self {
            Self::Alu(a) => a.sig,
            _ => Signal::None,
        }
    }
}
