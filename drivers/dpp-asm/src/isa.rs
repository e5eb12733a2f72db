//! Typed encoders (and decoders) for the DPP instruction words.
//!
//! The ATI CTM guide (`ati-ctm-guide` chapter 3) names every instruction field but, OCR'd from a
//! manual whose register tables were dropped, gives no bit positions. The positions come from
//! the fragment-shader register reference of the same hardware, `amd-r5xx-acceleration` §11.10
//! (`US_CMN_INST`, `US_ALU_RGB_ADDR`, `US_ALU_ALPHA_ADDR`, `US_ALU_RGB_INST`, `US_ALU_ALPHA_INST`,
//! `US_ALU_RGBA_INST`, `US_FC_INST`, `US_FC_ADDR`, `US_TEX_INST`, `US_TEX_ADDR`,
//! `US_TEX_ADDR_DXDY`), and the order of the six words of one instruction slot from
//! `amd-r5xx-acceleration` §8.8.1:
//!
//! | word | ALU / OUTPUT | TEX | FC |
//! |---|---|---|---|
//! | 0 | `CMN_INST` | `CMN_INST` | `CMN_INST` |
//! | 1 | `ALU_RGB_ADDR` | `TEX_INST` | 0 |
//! | 2 | `ALU_ALPHA_ADDR` | `TEX_ADDR` | `FC_INST` |
//! | 3 | `ALU_RGB_INST` | `TEX_ADDR_DXDY` | `FC_ADDR` |
//! | 4 | `ALU_ALPHA_INST` | 0 | 0 |
//! | 5 | `ALU_RGBA_INST` | 0 | 0 |
//!
//! (ctm-guide §3.2: "The FC and TEX words overlap with the ALU/OUTPUT words in instruction
//! memory"; unused words are written as zero.)
//!
//! Every encoder checks its operands: an index out of range, a reserved encoding or a
//! combination the guide forbids is an [`EncodeError`], never a truncated field.

/// Number of 32-bit words in one instruction slot (ctm-guide §3.2, r5xx §8.8.1).
pub const WORDS_PER_INST: usize = 6;
/// Instruction slots of the DPP (ctm-guide §3.1: "There are 512 instruction slots").
pub const MAX_INSTRUCTIONS: usize = 512;
/// Temporary registers per processor (ctm-guide §3.3.1).
pub const NUM_TEMPS: u16 = 128;
/// Float constant registers (ctm-guide §3.3.1).
pub const NUM_CONSTS: u16 = 256;
/// Program inputs (texture ids, `TEX_ID` 19:16; ctm-guide §2.1.4 "up to 16 distinct program inputs").
pub const NUM_INPUTS: u8 = 16;
/// Program outputs (render targets A-D, ctm-guide §3.3.8 and §2.1.4 "up to 4 distinct program outputs").
pub const NUM_OUTPUTS: u8 = 4;
/// Integer and boolean constants addressable by flow control (ctm-guide §3.5.3 "Address Fields").
pub const NUM_FC_CONSTS: u8 = 32;

/// One encoded instruction slot.
pub type Words = [u32; WORDS_PER_INST];

/// Why an instruction could not be encoded or decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum EncodeError {
    /// A numeric field is larger than the documented range.
    OutOfRange {
        /// Field name as in the documents.
        field: &'static str,
        /// The rejected value.
        value: u32,
        /// Largest allowed value.
        max: u32,
    },
    /// A field holds a value the documents mark reserved or unused.
    Reserved {
        /// Field name as in the documents.
        field: &'static str,
        /// The rejected raw value.
        value: u32,
    },
    /// The guide forbids this combination of operands; the text says which rule.
    Invalid(&'static str),
}

impl core::fmt::Display for EncodeError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::OutOfRange { field, value, max } => {
                write!(f, "{field} = {value} is out of range (max {max})")
            }
            Self::Reserved { field, value } => write!(f, "{field} = {value} is reserved"),
            Self::Invalid(why) => f.write_str(why),
        }
    }
}

impl core::error::Error for EncodeError {}

fn check(field: &'static str, value: u32, max: u32) -> Result<u32, EncodeError> {
    if value > max { Err(EncodeError::OutOfRange { field, value, max }) } else { Ok(value) }
}

#[inline]
fn bits(word: u32, lo: u32, width: u32) -> u32 {
    (word >> lo) & ((1 << width) - 1)
}

#[inline]
fn bit(word: u32, pos: u32) -> bool {
    word & (1 << pos) != 0
}

macro_rules! raw_enum {
    ($(#[$m:meta])* $name:ident : $field:literal { $($(#[$vm:meta])* $v:ident = $n:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[cfg_attr(feature = "defmt", derive(defmt::Format))]
        pub enum $name { $($(#[$vm])* $v = $n),+ }
        impl $name {
            /// The raw field value.
            pub const fn raw(self) -> u32 { self as u32 }
            /// Decodes a raw field value; reserved values are an error.
            pub fn from_raw(v: u32) -> Result<Self, EncodeError> {
                match v { $($n => Ok(Self::$v),)+ _ => Err(EncodeError::Reserved { field: $field, value: v }) }
            }
        }
    };
}

raw_enum! {
    /// `CMN_INST.TYPE` (1:0), ctm-guide §3.1.
    InstType: "TYPE" {
        /// `INST_TYPE_ALU`: may set predicate bits.
        Alu = 0,
        /// `INST_TYPE_OUTPUT`: may write the output registers.
        Output = 1,
        /// `INST_TYPE_FC`.
        Fc = 2,
        /// `INST_TYPE_TEX`.
        Tex = 3,
    }
}

raw_enum! {
    /// `RGB_PRED_SEL` / `ALPHA_PRED_SEL` (3 bits), ctm-guide §3.3.6; values 6 and 7 are reserved.
    PredSel: "PRED_SEL" {
        /// No predication.
        None = 0,
        /// Per-channel predication.
        Rgba = 1,
        /// Replicate the R predicate bit.
        Rrrr = 2,
        /// Replicate the G predicate bit.
        Gggg = 3,
        /// Replicate the B predicate bit.
        Bbbb = 4,
        /// Replicate the A predicate bit.
        Aaaa = 5,
    }
}

raw_enum! {
    /// Compare-against-zero function: the `TARGET` field of ALU (non-output) instructions when
    /// setting predicate bits (ctm-guide §3.3.9 `PRED_OP_*`) and `ALU_RESULT_OP` (§3.3.10).
    CmpOp: "PRED_OP" {
        /// Set when the channel is zero.
        Equal = 0,
        /// Set when the channel is negative.
        Less = 1,
        /// Set when the channel is non-negative.
        GreaterEqual = 2,
        /// Set when the channel is non-zero.
        NotEqual = 3,
    }
}

raw_enum! {
    /// Input select `RGB_SEL_x` / `ALPHA_SEL_x`, ctm-guide §3.3.3 "Select".
    SrcSel: "SEL" {
        /// Source 0.
        Src0 = 0,
        /// Source 1.
        Src1 = 1,
        /// Source 2.
        Src2 = 2,
        /// The presubtract result.
        SrcP = 3,
    }
}

raw_enum! {
    /// Per-component swizzle select, ctm-guide §3.3.3 "Swizzle"; 7 is unused.
    Swz: "SWIZ" {
        /// Red.
        R = 0,
        /// Green.
        G = 1,
        /// Blue.
        B = 2,
        /// Alpha.
        A = 3,
        /// The constant 0.
        Zero = 4,
        /// The constant 0.5.
        Half = 5,
        /// The constant 1.
        One = 6,
    }
}

raw_enum! {
    /// Input modifier `IMOD_*`, ctm-guide §3.3.3 "Input Modifier".
    InputMod: "MOD" {
        /// No modification.
        Off = 0,
        /// Negate.
        Neg = 1,
        /// Absolute value.
        Abs = 2,
        /// Negative absolute value.
        Nab = 3,
    }
}

raw_enum! {
    /// Presubtract `SRCP_OP` (31:30 of the ADDR words), ctm-guide §3.3.2.
    Presub: "SRCP_OP" {
        /// `1 - 2*src0`.
        Bias = 0,
        /// `src1 - src0`.
        Sub = 1,
        /// `src1 + src0`.
        Add = 2,
        /// `1 - src0`.
        Inv = 3,
    }
}

raw_enum! {
    /// Output modifier `OMOD` (28:26), ctm-guide §3.3.5.
    Omod: "OMOD" {
        /// Multiply by 1.
        U1 = 0,
        /// Multiply by 2.
        U2 = 1,
        /// Multiply by 4.
        U4 = 2,
        /// Multiply by 8.
        U8 = 3,
        /// Divide by 2.
        D2 = 4,
        /// Divide by 4.
        D4 = 5,
        /// Divide by 8.
        D8 = 6,
        /// No modification and no clamping; only MIN/MAX/CMP/CND.
        Disabled = 7,
    }
}

raw_enum! {
    /// RGB (vector) operation `RGB_OP` (`ALU_RGBA_INST` 3:0), ctm-guide §3.3.4; values from
    /// r5xx §11.10. 6 is reserved; `MDH` is only in r5xx §11.10.
    RgbOp: "RGB_OP" {
        /// `A*B + C`.
        Mad = 0,
        /// Three-component dot product, broadcast.
        Dp3 = 1,
        /// Four-component dot product (4th component from the alpha inputs).
        Dp4 = 2,
        /// `A.r*B.r + A.g*B.g + C.b`.
        D2a = 3,
        /// Minimum.
        Min = 4,
        /// Maximum.
        Max = 5,
        /// `C > 0.5 ? A : B`.
        Cnd = 7,
        /// `C >= 0 ? A : B`.
        Cmp = 8,
        /// `A - floor(A)`.
        Frc = 9,
        /// Replicate the alpha unit's transcendental result.
        Sop = 10,
        /// r5xx §11.10: `A*B + C` with A/C from neighbouring pixels.
        Mdh = 11,
    }
}

raw_enum! {
    /// Alpha (scalar) operation `ALPHA_OP` (`ALU_ALPHA_INST` 3:0), ctm-guide §3.3.4; values from
    /// r5xx §11.10. 4 is reserved; `MDH`/`MDV` are only in r5xx §11.10.
    AlphaOp: "ALPHA_OP" {
        /// `A*B + C`.
        Mad = 0,
        /// Copy the RGB unit's dot product.
        Dp = 1,
        /// Minimum.
        Min = 2,
        /// Maximum.
        Max = 3,
        /// `C > 0.5 ? A : B`.
        Cnd = 5,
        /// `C >= 0 ? A : B`.
        Cmp = 6,
        /// `A - floor(A)`.
        Frc = 7,
        /// `2^A`.
        Ex2 = 8,
        /// `log2(A)`.
        Ln2 = 9,
        /// `1/A`.
        Rcp = 10,
        /// `1/sqrt(A)`.
        Rsq = 11,
        /// `sin(2 pi A)`.
        Sin = 12,
        /// `cos(2 pi A)`.
        Cos = 13,
        /// r5xx §11.10.
        Mdh = 14,
        /// r5xx §11.10.
        Mdv = 15,
    }
}

impl RgbOp {
    /// Whether `OMOD_DISABLED` is allowed (ctm-guide §3.3.5: only MIN, MAX, CMP, CND).
    pub const fn allows_omod_disabled(self) -> bool {
        matches!(self, Self::Min | Self::Max | Self::Cmp | Self::Cnd)
    }
    /// DP3, DP4 and D2A: the ops `OP_ALPHA_DP` can copy (§3.3.4).
    pub const fn is_dot(self) -> bool {
        matches!(self, Self::Dp3 | Self::Dp4 | Self::D2a)
    }
}

impl AlphaOp {
    /// See [`RgbOp::allows_omod_disabled`].
    pub const fn allows_omod_disabled(self) -> bool {
        matches!(self, Self::Min | Self::Max | Self::Cmp | Self::Cnd)
    }
    /// EX2, LN2, RCP, RSQ, SIN, COS: the ops `OP_RGB_SOP` can copy (§3.3.4).
    pub const fn is_transcendental(self) -> bool {
        matches!(self, Self::Ex2 | Self::Ln2 | Self::Rcp | Self::Rsq | Self::Sin | Self::Cos)
    }
}

raw_enum! {
    /// Texture operation `TEX_INST.INST` (24:22), ctm-guide §3.4.1 with values from r5xx §11.10.
    TexOp: "INST" {
        /// `TEX_INST_NOP` (may acquire the semaphore).
        Nop = 0,
        /// `TEX_INST_LOOKUP` (r5xx `LD`).
        Lookup = 1,
        /// `TEX_INST_KILL_LT_0` (r5xx `TEXKILL`).
        KillLt0 = 2,
        /// `TEX_INST_LOOKUP_PROJ`.
        LookupProj = 3,
        /// r5xx `LODBIAS`.
        LodBias = 4,
        /// r5xx `LOD`.
        Lod = 5,
        /// r5xx `DXDY` (the only op using `TEX_ADDR_DXDY`).
        Dxdy = 6,
        /// `TEX_INST_LOOKUP_UNCACHED`. Judgement call: the guide gives no value and r5xx §11.10
        /// lists 0-6 only, so the one value no documented op uses (7) is taken.
        LookupUncached = 7,
    }
}

raw_enum! {
    /// Flow-control loop-stack operation `FC_INST.OP` (2:0), ctm-guide §3.5.3.
    FcOp: "OP" {
        /// `FC_OP_JUMP`.
        Jump = 0,
        /// `FC_OP_LOOP`.
        Loop = 1,
        /// `FC_OP_ENDLOOP`.
        EndLoop = 2,
        /// `FC_OP_REP`.
        Rep = 3,
        /// `FC_OP_ENDREP`.
        EndRep = 4,
        /// `FC_OP_BREAKLOOP`.
        BreakLoop = 5,
        /// `FC_OP_BREAKREP`.
        BreakRep = 6,
        /// `FC_OP_CONTINUE`.
        Continue = 7,
    }
}

raw_enum! {
    /// Address-stack operation `A_OP` (7:6), ctm-guide §3.5.3; 3 is reserved.
    AOp: "A_OP" {
        /// `FC_A_OP_NONE`.
        None = 0,
        /// `FC_A_OP_POP`.
        Pop = 1,
        /// `FC_A_OP_PUSH`.
        Push = 2,
    }
}

raw_enum! {
    /// Branch-counter operation `B_OP0` (25:24) / `B_OP1` (27:26), ctm-guide §3.5.3; 3 is reserved.
    BOp: "B_OP" {
        /// `FC_B_OP_NONE`.
        None = 0,
        /// `FC_B_OP_DECR` (by `B_POP_CNT`).
        Decr = 1,
        /// `FC_B_OP_INCR` (by 1).
        Incr = 2,
    }
}

raw_enum! {
    /// Channel select of texture coordinate / result swizzles (2 bits), r5xx §11.10 `US_TEX_ADDR`.
    /// ctm-guide §3.4: texture swizzles cannot select constants.
    Chan: "TEX_SWIZ" {
        /// Red / x.
        R = 0,
        /// Green / y.
        G = 1,
        /// Blue / z.
        B = 2,
        /// Alpha / w.
        A = 3,
    }
}

/// Identity texture swizzle.
pub const CHAN_XYZW: [Chan; 4] = [Chan::R, Chan::G, Chan::B, Chan::A];

/// A predicate select plus its inversion bit (ctm-guide §3.3.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Pred {
    /// `*_PRED_SEL`.
    pub sel: PredSelOpt,
    /// `*_PRED_INV`; must be clear when `sel` is none ("Should be zero if ... NONE").
    pub inv: bool,
}

/// [`PredSel`] with a `Default` of [`PredSel::None`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct PredSelOpt(pub Option<PredSel>);

impl Pred {
    /// No predication.
    pub const NONE: Self = Self { sel: PredSelOpt(None), inv: false };
    /// Predicated by `sel`, optionally inverted.
    pub const fn new(sel: PredSel, inv: bool) -> Self {
        Self { sel: PredSelOpt(Some(sel)), inv }
    }
    fn encode(self) -> Result<(u32, u32), EncodeError> {
        let sel = self.sel.0.unwrap_or(PredSel::None);
        if sel == PredSel::None && self.inv {
            return Err(EncodeError::Invalid(
                "PRED_INV set with PRED_SEL = NONE (ctm-guide §3.3.6)",
            ));
        }
        Ok((sel.raw(), self.inv as u32))
    }
    /// The inverse of [`Pred::encode`], with the same rule: ctm-guide §3.3.6 says `*_PRED_INV`
    /// "Should be zero if *_PRED_SEL is set to NONE", so such a slot is refused on both sides.
    fn decode(sel: u32, inv: bool) -> Result<Self, EncodeError> {
        let sel = PredSel::from_raw(sel)?;
        let pred =
            Self { sel: PredSelOpt(if sel == PredSel::None { None } else { Some(sel) }), inv };
        pred.encode()?;
        Ok(pred)
    }
}

/// A temporary register address with optional relative (`+aL`) addressing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct TempReg {
    /// Register index, 0..=127 (ctm-guide §3.3.1).
    pub index: u8,
    /// Add the loop variable aL (ctm-guide §3.3.7, §3.4).
    pub rel: bool,
}

impl TempReg {
    /// Plain temporary `r<index>`.
    pub const fn new(index: u8) -> Self {
        Self { index, rel: false }
    }
    fn check(self, field: &'static str) -> Result<u32, EncodeError> {
        check(field, self.index.into(), u32::from(NUM_TEMPS) - 1)
    }
}

/// One ALU source address (ctm-guide §3.3.1 table: `ADDRn[7]`, `ADDRn[6:0]`, `ADDRn_CONST`,
/// `ADDRn_REL`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Source {
    /// Temporary register N (0..=127), optionally + aL.
    Temp(TempReg),
    /// Constant register N (0..=255), optionally + aL: `ADDR[7:0] = N`, `CONST = 1`.
    Const {
        /// Index 0..=255.
        index: u8,
        /// Add aL.
        rel: bool,
    },
    /// Inline constant: 7-bit unsigned float (4-bit exponent, bias 7, 3-bit mantissa);
    /// `ADDR[7] = 1`, `CONST = 0`, relative addressing impossible.
    Inline(u8),
}

impl Default for Source {
    fn default() -> Self {
        Self::Temp(TempReg::new(0))
    }
}

impl Source {
    /// Returns the 10-bit `{REL, CONST, ADDR[7:0]}` group.
    fn encode(self) -> Result<u32, EncodeError> {
        Ok(match self {
            Self::Temp(t) => t.check("ADDR (temporary)")? | (t.rel as u32) << 9,
            Self::Const { index, rel } => u32::from(index) | 1 << 8 | (rel as u32) << 9,
            Self::Inline(v) => check("ADDR (inline constant)", v.into(), 127)? | 1 << 7,
        })
    }
    fn decode(g: u32) -> Result<Self, EncodeError> {
        let addr = bits(g, 0, 8);
        let konst = bit(g, 8);
        let rel = bit(g, 9);
        Ok(if konst {
            Self::Const { index: addr as u8, rel }
        } else if addr & 0x80 != 0 {
            if rel {
                return Err(EncodeError::Invalid(
                    "aL may not be added to an inline constant (ctm-guide §3.3.1)",
                ));
            }
            Self::Inline((addr & 0x7f) as u8)
        } else {
            Self::Temp(TempReg { index: addr as u8, rel })
        })
    }
}

/// Value of a 7-bit inline constant (ctm-guide §3.3.1): exponent bits 6:3 (bias 7), mantissa
/// bits 2:0, denormals when the exponent is 0, except that 0x0 means 2^-10.
pub fn inline_const_value(code: u8) -> f32 {
    let e = i32::from((code >> 3) & 0xf);
    let m = f32::from(code & 7);
    if code & 0x7f == 0 {
        return 1.0 / 1024.0;
    }
    let (mant, exp) = if e == 0 { (m / 8.0, -6) } else { (1.0 + m / 8.0, e - 7) };
    let mut scale = 1.0f32;
    if exp >= 0 {
        for _ in 0..exp {
            scale *= 2.0;
        }
    } else {
        for _ in 0..-exp {
            scale *= 0.5;
        }
    }
    mant * scale
}

/// The inline-constant code representing `value` exactly, if any (see [`inline_const_value`]).
pub fn inline_const_from_f32(value: f32) -> Option<u8> {
    (0u8..128).find(|&c| inline_const_value(c) == value)
}

/// The three source addresses and presubtract of one unit (`ALU_RGB_ADDR` / `ALU_ALPHA_ADDR`,
/// r5xx §11.10: `ADDR0` 7:0, `ADDR0_CONST` 8, `ADDR0_REL` 9, `ADDR1` 17:10 (+18, 19),
/// `ADDR2` 27:20 (+28, 29), `SRCP_OP` 31:30).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct SourceAddrs {
    /// src0, src1, src2.
    pub src: [Source; 3],
    /// Presubtract producing srcp from src0/src1 (ctm-guide §3.3.2).
    pub presub: PresubOpt,
}

/// [`Presub`] defaulting to `BIAS` (raw 0) for unused presubtracts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct PresubOpt(pub Presub);

impl Default for PresubOpt {
    fn default() -> Self {
        Self(Presub::Bias)
    }
}

impl SourceAddrs {
    /// Encodes the ADDR word.
    pub fn encode(&self) -> Result<u32, EncodeError> {
        let mut w = 0;
        for (i, s) in self.src.iter().enumerate() {
            w |= s.encode()? << (10 * i);
        }
        Ok(w | self.presub.0.raw() << 30)
    }
    /// Decodes an ADDR word.
    pub fn decode(w: u32) -> Result<Self, EncodeError> {
        Ok(Self {
            src: [
                Source::decode(bits(w, 0, 10))?,
                Source::decode(bits(w, 10, 10))?,
                Source::decode(bits(w, 20, 10))?,
            ],
            presub: PresubOpt(Presub::from_raw(bits(w, 30, 2))?),
        })
    }
}

/// An RGB input: select, three swizzles, modifier (ctm-guide §3.3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct RgbInput {
    /// `RGB_SEL_x`.
    pub sel: SrcSel,
    /// `RED_SWIZ_x`, `GREEN_SWIZ_x`, `BLUE_SWIZ_x`.
    pub swz: [Swz; 3],
    /// `RGB_MOD_x`.
    pub modifier: InputMod,
}

impl Default for RgbInput {
    fn default() -> Self {
        Self { sel: SrcSel::Src0, swz: [Swz::R, Swz::G, Swz::B], modifier: InputMod::Off }
    }
}

impl RgbInput {
    /// The constant `v` (swizzle Zero/Half/One) in all channels.
    pub const fn constant(v: Swz) -> Self {
        Self { sel: SrcSel::Src0, swz: [v, v, v], modifier: InputMod::Off }
    }
    /// 11-bit group `{MOD[1:0], B[2:0], G[2:0], R[2:0], SEL[1:0]}` (r5xx `US_ALU_RGB_INST` 12:0).
    fn encode(self) -> u32 {
        self.sel.raw()
            | self.swz[0].raw() << 2
            | self.swz[1].raw() << 5
            | self.swz[2].raw() << 8
            | self.modifier.raw() << 11
    }
    fn decode(g: u32) -> Result<Self, EncodeError> {
        Ok(Self {
            sel: SrcSel::from_raw(bits(g, 0, 2))?,
            swz: [
                Swz::from_raw(bits(g, 2, 3))?,
                Swz::from_raw(bits(g, 5, 3))?,
                Swz::from_raw(bits(g, 8, 3))?,
            ],
            modifier: InputMod::from_raw(bits(g, 11, 2))?,
        })
    }
}

/// An alpha input: select, one swizzle, modifier (ctm-guide §3.3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct AlphaInput {
    /// `ALPHA_SEL_x`.
    pub sel: SrcSel,
    /// `ALPHA_SWIZ_x`.
    pub swz: Swz,
    /// `ALPHA_MOD_x`.
    pub modifier: InputMod,
}

impl Default for AlphaInput {
    fn default() -> Self {
        Self { sel: SrcSel::Src0, swz: Swz::A, modifier: InputMod::Off }
    }
}

impl AlphaInput {
    /// The constant `v`.
    pub const fn constant(v: Swz) -> Self {
        Self { sel: SrcSel::Src0, swz: v, modifier: InputMod::Off }
    }
    /// 7-bit group `{MOD[1:0], SWIZ[2:0], SEL[1:0]}`.
    fn encode(self) -> u32 {
        self.sel.raw() | self.swz.raw() << 2 | self.modifier.raw() << 5
    }
    fn decode(g: u32) -> Result<Self, EncodeError> {
        Ok(Self {
            sel: SrcSel::from_raw(bits(g, 0, 2))?,
            swz: Swz::from_raw(bits(g, 2, 3))?,
            modifier: InputMod::from_raw(bits(g, 5, 2))?,
        })
    }
}

/// The `TARGET` field (30:29 of `ALU_RGB_INST` / `ALU_ALPHA_INST`): a render target for OUTPUT
/// instructions (ctm-guide §3.3.8), a predicate compare for ALU instructions (§3.3.9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Target {
    /// Output: render target 0..=3 (A-D; in uncached (UMRT) programs the RGB target selects the
    /// UMRT write kind in the order the guide lists them — a judgement call, the guide gives no
    /// values).
    Output(u8),
    /// ALU: how to set predicate bits from the result.
    Pred(CmpOp),
}

impl Default for Target {
    fn default() -> Self {
        Self::Pred(CmpOp::Equal)
    }
}

/// Settings shared by both halves of an ALU/OUTPUT instruction (`CMN_INST`, r5xx §11.10:
/// TYPE 1:0, TEX_SEM_WAIT 2, RGB_PRED_SEL 5:3, RGB_PRED_INV 6, WRITE_INACTIVE 7, LAST 8, NOP 9,
/// ALU_WAIT 10, RGB_WMASK 13:11, ALPHA_WMASK 14, RGB_OMASK 17:15, ALPHA_OMASK 18, RGB_CLAMP 19,
/// ALPHA_CLAMP 20, ALU_RESULT_SEL 21, ALPHA_PRED_INV 22, ALU_RESULT_OP 24:23,
/// ALPHA_PRED_SEL 27:25, STAT_WE 31:28 (always 0: a statistics feature the guide does not use)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct AluCommon {
    /// Wait for the texture semaphore before issuing (ctm-guide §3.4.2).
    pub tex_sem_wait: bool,
    /// Ignore the flow-control processor mask when writing (§3.3.6).
    pub write_inactive: bool,
    /// `LAST`: processors may terminate after this instruction (r5xx §8 "LAST bit"); an early exit.
    pub last: bool,
    /// Insert a NOP after this instruction (§3.3.2 presubtract hazard).
    pub nop: bool,
}

/// Which channel supplies the ALU result (`ALU_RESULT_SEL`, ctm-guide §3.3.10).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum AluResultSel {
    /// `ALU_RESULT_SEL_RED`.
    Red = 0,
    /// `ALU_RESULT_SEL_ALPHA`.
    Alpha = 1,
}

/// The RGB half of an ALU instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct RgbHalf {
    /// Operation.
    pub op: RgbOp,
    /// Inputs A, B, C.
    pub inputs: [RgbInput; 3],
    /// Output modifier.
    pub omod: Omod,
    /// Clamp to [0, 1] (`RGB_CLAMP`).
    pub clamp: bool,
    /// Destination temporary (`RGB_ADDRD`, `RGB_ADDRD_REL`).
    pub dst: TempReg,
    /// `RGB_WMASK` (bit 0 R, 1 G, 2 B).
    pub wmask: u8,
    /// `RGB_OMASK`: output channels or predicate bits.
    pub omask: u8,
    /// `TARGET`.
    pub target: Target,
    /// Predicate applied to the RGB writes.
    pub pred: Pred,
}

impl Default for RgbHalf {
    fn default() -> Self {
        Self {
            op: RgbOp::Mad,
            inputs: [RgbInput::constant(Swz::Zero); 3],
            omod: Omod::U1,
            clamp: false,
            dst: TempReg::default(),
            wmask: 0,
            omask: 0,
            target: Target::default(),
            pred: Pred::NONE,
        }
    }
}

/// The alpha half of an ALU instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct AlphaHalf {
    /// Operation.
    pub op: AlphaOp,
    /// Inputs A, B, C.
    pub inputs: [AlphaInput; 3],
    /// Output modifier.
    pub omod: Omod,
    /// Clamp to [0, 1] (`ALPHA_CLAMP`).
    pub clamp: bool,
    /// Destination temporary (`ALPHA_ADDRD`, `ALPHA_ADDRD_REL`).
    pub dst: TempReg,
    /// `ALPHA_WMASK`.
    pub wmask: bool,
    /// `ALPHA_OMASK`.
    pub omask: bool,
    /// `TARGET`.
    pub target: Target,
    /// Predicate applied to the alpha writes.
    pub pred: Pred,
}

impl Default for AlphaHalf {
    fn default() -> Self {
        Self {
            op: AlphaOp::Mad,
            inputs: [AlphaInput::constant(Swz::Zero); 3],
            omod: Omod::U1,
            clamp: false,
            dst: TempReg::default(),
            wmask: false,
            omask: false,
            target: Target::default(),
            pred: Pred::NONE,
        }
    }
}

/// An ALU or OUTPUT instruction (ctm-guide §3.3), six words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct AluInst {
    /// OUTPUT rather than ALU: the OMASKs write outputs, not predicate bits (§3.1).
    pub output: bool,
    /// Shared `CMN_INST` flags.
    pub common: AluCommon,
    /// `ALU_RGB_ADDR`.
    pub rgb_addr: SourceAddrs,
    /// `ALU_ALPHA_ADDR`.
    pub alpha_addr: SourceAddrs,
    /// RGB half.
    pub rgb: RgbHalf,
    /// Alpha half.
    pub alpha: AlphaHalf,
    /// `W_OMASK` (`ALU_ALPHA_INST` 31): write alpha to the W output, which CTM exports as the
    /// conditional output value (ctm-guide §4.1.4 `FG_DEPTH_SRC`). OUTPUT only.
    pub w_omask: bool,
    /// Write the ALU result (`ALU_WMASK`, §3.3.10) from this channel with this compare.
    pub alu_result: Option<(AluResultSel, CmpOp)>,
}

fn encode_target(t: Target, output: bool) -> Result<u32, EncodeError> {
    match (t, output) {
        (Target::Output(n), true) => check("TARGET (render target)", n.into(), 3),
        (Target::Pred(op), false) => Ok(op.raw()),
        (Target::Output(_), false) => Err(EncodeError::Invalid(
            "render target on an ALU instruction: only OUTPUT instructions write outputs (ctm-guide §3.1)",
        )),
        (Target::Pred(_), true) => Err(EncodeError::Invalid(
            "predicate compare on an OUTPUT instruction: only ALU instructions set predicates (ctm-guide §3.1)",
        )),
    }
}

fn decode_target(raw: u32, output: bool) -> Result<Target, EncodeError> {
    Ok(if output { Target::Output(raw as u8) } else { Target::Pred(CmpOp::from_raw(raw)?) })
}

impl AluInst {
    /// Checks the rules of ctm-guide §3.3 and encodes the six words.
    pub fn encode(&self) -> Result<Words, EncodeError> {
        let r = &self.rgb;
        let a = &self.alpha;
        check("RGB_WMASK", r.wmask.into(), 7)?;
        check("RGB_OMASK", r.omask.into(), 7)?;
        r.dst.check("RGB_ADDRD")?;
        a.dst.check("ALPHA_ADDRD")?;
        if r.op == RgbOp::Sop && !a.op.is_transcendental() {
            return Err(EncodeError::Invalid(
                "RGB SOP needs a transcendental alpha op (EX2, LN2, RCP, RSQ, SIN, COS) (ctm-guide §3.3.4)",
            ));
        }
        if a.op == AlphaOp::Dp && !r.op.is_dot() {
            return Err(EncodeError::Invalid(
                "ALPHA DP needs an RGB dot product (DP3, DP4, D2A) (ctm-guide §3.3.4)",
            ));
        }
        if (r.omod == Omod::Disabled && !r.op.allows_omod_disabled())
            || (a.omod == Omod::Disabled && !a.op.allows_omod_disabled())
        {
            return Err(EncodeError::Invalid(
                "OMOD_DISABLED is only valid with MIN, MAX, CMP, CND (ctm-guide §3.3.5)",
            ));
        }
        if (r.omod == Omod::Disabled && r.clamp) || (a.omod == Omod::Disabled && a.clamp) {
            return Err(EncodeError::Invalid(
                "OMOD_DISABLED disables clamping; clamp must be clear (ctm-guide §3.3.5, §3.6.2)",
            ));
        }
        if self.w_omask && !self.output {
            return Err(EncodeError::Invalid(
                "W_OMASK writes an output: OUTPUT instructions only (ctm-guide §3.1)",
            ));
        }
        for s in self.rgb_addr.src.iter().chain(self.alpha_addr.src.iter()) {
            s.encode()?;
        }
        let (rps, rpi) = r.pred.encode()?;
        let (aps, api) = a.pred.encode()?;
        let (res_wm, res_sel, res_op) = match self.alu_result {
            Some((sel, op)) => (1, sel as u32, op.raw()),
            None => (0, 0, 0),
        };
        let c = &self.common;
        let ty = if self.output { InstType::Output } else { InstType::Alu };
        let cmn = ty.raw()
            | (c.tex_sem_wait as u32) << 2
            | rps << 3
            | rpi << 6
            | (c.write_inactive as u32) << 7
            | (c.last as u32) << 8
            | (c.nop as u32) << 9
            | u32::from(r.wmask) << 11
            | (a.wmask as u32) << 14
            | u32::from(r.omask) << 15
            | (a.omask as u32) << 18
            | (r.clamp as u32) << 19
            | (a.clamp as u32) << 20
            | res_sel << 21
            | api << 22
            | res_op << 23
            | aps << 25;
        let rgb_inst = r.inputs[0].encode()
            | r.inputs[1].encode() << 13
            | r.omod.raw() << 26
            | encode_target(r.target, self.output)? << 29
            | res_wm << 31;
        let alpha_inst = a.op.raw()
            | u32::from(a.dst.index) << 4
            | (a.dst.rel as u32) << 11
            | a.inputs[0].encode() << 12
            | a.inputs[1].encode() << 19
            | a.omod.raw() << 26
            | encode_target(a.target, self.output)? << 29
            | (self.w_omask as u32) << 31;
        let rgba_inst = r.op.raw()
            | u32::from(r.dst.index) << 4
            | (r.dst.rel as u32) << 11
            | r.inputs[2].encode() << 12
            | a.inputs[2].encode() << 25;
        Ok([
            cmn,
            self.rgb_addr.encode()?,
            self.alpha_addr.encode()?,
            rgb_inst,
            alpha_inst,
            rgba_inst,
        ])
    }

    /// Decodes the six words of an ALU/OUTPUT slot (inverse of [`AluInst::encode`]).
    pub fn decode(w: &Words) -> Result<Self, EncodeError> {
        let cmn = w[0];
        let output = match InstType::from_raw(bits(cmn, 0, 2))? {
            InstType::Alu => false,
            InstType::Output => true,
            _ => return Err(EncodeError::Invalid("not an ALU/OUTPUT instruction")),
        };
        let alu_result = if bit(w[3], 31) {
            Some((
                if bit(cmn, 21) { AluResultSel::Alpha } else { AluResultSel::Red },
                CmpOp::from_raw(bits(cmn, 23, 2))?,
            ))
        } else {
            None
        };
        let inst = Self {
            output,
            common: AluCommon {
                tex_sem_wait: bit(cmn, 2),
                write_inactive: bit(cmn, 7),
                last: bit(cmn, 8),
                nop: bit(cmn, 9),
            },
            rgb_addr: SourceAddrs::decode(w[1])?,
            alpha_addr: SourceAddrs::decode(w[2])?,
            rgb: RgbHalf {
                op: RgbOp::from_raw(bits(w[5], 0, 4))?,
                inputs: [
                    RgbInput::decode(bits(w[3], 0, 13))?,
                    RgbInput::decode(bits(w[3], 13, 13))?,
                    RgbInput::decode(bits(w[5], 12, 13))?,
                ],
                omod: Omod::from_raw(bits(w[3], 26, 3))?,
                clamp: bit(cmn, 19),
                dst: TempReg { index: bits(w[5], 4, 7) as u8, rel: bit(w[5], 11) },
                wmask: bits(cmn, 11, 3) as u8,
                omask: bits(cmn, 15, 3) as u8,
                target: decode_target(bits(w[3], 29, 2), output)?,
                pred: Pred::decode(bits(cmn, 3, 3), bit(cmn, 6))?,
            },
            alpha: AlphaHalf {
                op: AlphaOp::from_raw(bits(w[4], 0, 4))?,
                inputs: [
                    AlphaInput::decode(bits(w[4], 12, 7))?,
                    AlphaInput::decode(bits(w[4], 19, 7))?,
                    AlphaInput::decode(bits(w[5], 25, 7))?,
                ],
                omod: Omod::from_raw(bits(w[4], 26, 3))?,
                clamp: bit(cmn, 20),
                dst: TempReg { index: bits(w[4], 4, 7) as u8, rel: bit(w[4], 11) },
                wmask: bit(cmn, 14),
                omask: bit(cmn, 18),
                target: decode_target(bits(w[4], 29, 2), output)?,
                pred: Pred::decode(bits(cmn, 25, 3), bit(cmn, 22))?,
            },
            w_omask: bit(w[4], 31),
            alu_result,
        };
        if bits(cmn, 10, 1) != 0 || bits(cmn, 28, 4) != 0 {
            return Err(EncodeError::Invalid("ALU_WAIT/STAT_WE set on an ALU instruction"));
        }
        // The encoder holds the pairing and modifier rules (SOP/DP partners §3.3.4,
        // OMOD_DISABLED §3.3.5, W_OMASK on OUTPUT only §3.1): a slot it refuses is refused here
        // with the same error, so decoding never yields an instruction that cannot be encoded.
        inst.encode()?;
        Ok(inst)
    }
}

/// A flow-control instruction (ctm-guide §3.5.3), words `CMN_INST`, 0, `FC_INST`, `FC_ADDR`.
///
/// `FC_INST` (r5xx §11.10): OP 2:0, B_ELSE 4, JUMP_ANY 5, A_OP 7:6, JUMP_FUNC 15:8,
/// B_POP_CNT 20:16, B_OP0 25:24, B_OP1 27:26, IGNORE_UNCOVERED 28.
/// `FC_ADDR`: BOOL_ADDR 4:0, INT_ADDR 12:8, JUMP_ADDR 24:16, JUMP_GLOBAL 31.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct FcInst {
    /// `TEX_SEM_WAIT` (see the §3.7 erratum).
    pub tex_sem_wait: bool,
    /// `ALU_WAIT`: wait for the ALU when the jump depends on a predicate or the ALU result (§3.2.1).
    pub alu_wait: bool,
    /// Predicate (RGB_PRED_SEL/INV); must be none or a replicate select (§3.5.1).
    pub pred: Pred,
    /// Loop-stack operation.
    pub op: FcOp,
    /// `B_ELSE`.
    pub b_else: bool,
    /// `JUMP_ANY`.
    pub jump_any: bool,
    /// Address-stack operation.
    pub a_op: AOp,
    /// `JUMP_FUNC` 2x2x2 table, bit index `alu_result<<2 | predicate<<1 | boolean`.
    pub jump_func: u8,
    /// `B_POP_CNT` 0..=31.
    pub b_pop_cnt: u8,
    /// `B_OP0` (if stay).
    pub b_op0: BOp,
    /// `B_OP1` (if jump).
    pub b_op1: BOp,
    /// `IGNORE_UNCOVERED`.
    pub ignore_uncovered: bool,
    /// `BOOL_ADDR` 0..=31.
    pub bool_addr: u8,
    /// `INT_ADDR` 0..=31.
    pub int_addr: u8,
    /// `JUMP_ADDR` 0..=511.
    pub jump_addr: u16,
    /// `JUMP_GLOBAL`.
    pub jump_global: bool,
}

impl Default for FcInst {
    fn default() -> Self {
        Self {
            tex_sem_wait: false,
            alu_wait: false,
            pred: Pred::NONE,
            op: FcOp::Jump,
            b_else: false,
            jump_any: false,
            a_op: AOp::None,
            jump_func: 0,
            b_pop_cnt: 0,
            b_op0: BOp::None,
            b_op1: BOp::None,
            ignore_uncovered: false,
            bool_addr: 0,
            int_addr: 0,
            jump_addr: 0,
            jump_global: false,
        }
    }
}

impl FcInst {
    /// §3.5.1: "Flow control predication cannot be per-channel. One of the replicate
    /// swizzles must be used": checked by the encoder and the decoder alike.
    fn check_pred(&self) -> Result<(), EncodeError> {
        if self.pred.sel.0 == Some(PredSel::Rgba) {
            return Err(EncodeError::Invalid(
                "flow control predication cannot be per-channel: use a replicate select (ctm-guide §3.5.1)",
            ));
        }
        Ok(())
    }

    /// Encodes the slot.
    pub fn encode(&self) -> Result<Words, EncodeError> {
        self.check_pred()?;
        let (ps, pi) = self.pred.encode()?;
        let cmn = InstType::Fc.raw()
            | (self.tex_sem_wait as u32) << 2
            | ps << 3
            | pi << 6
            | (self.alu_wait as u32) << 10;
        let inst = self.op.raw()
            | (self.b_else as u32) << 4
            | (self.jump_any as u32) << 5
            | self.a_op.raw() << 6
            | u32::from(self.jump_func) << 8
            | check("B_POP_CNT", self.b_pop_cnt.into(), 31)? << 16
            | self.b_op0.raw() << 24
            | self.b_op1.raw() << 26
            | (self.ignore_uncovered as u32) << 28;
        let addr = check("BOOL_ADDR", self.bool_addr.into(), 31)?
            | check("INT_ADDR", self.int_addr.into(), 31)? << 8
            | check("JUMP_ADDR", self.jump_addr.into(), 511)? << 16
            | (self.jump_global as u32) << 31;
        Ok([cmn, 0, inst, addr, 0, 0])
    }

    /// Decodes an FC slot.
    pub fn decode(w: &Words) -> Result<Self, EncodeError> {
        if InstType::from_raw(bits(w[0], 0, 2))? != InstType::Fc {
            return Err(EncodeError::Invalid("not an FC instruction"));
        }
        let i = w[2];
        let a = w[3];
        let inst = Self {
            tex_sem_wait: bit(w[0], 2),
            alu_wait: bit(w[0], 10),
            pred: Pred::decode(bits(w[0], 3, 3), bit(w[0], 6))?,
            op: FcOp::from_raw(bits(i, 0, 3))?,
            b_else: bit(i, 4),
            jump_any: bit(i, 5),
            a_op: AOp::from_raw(bits(i, 6, 2))?,
            jump_func: bits(i, 8, 8) as u8,
            b_pop_cnt: bits(i, 16, 5) as u8,
            b_op0: BOp::from_raw(bits(i, 24, 2))?,
            b_op1: BOp::from_raw(bits(i, 26, 2))?,
            ignore_uncovered: bit(i, 28),
            bool_addr: bits(a, 0, 5) as u8,
            int_addr: bits(a, 8, 5) as u8,
            jump_addr: bits(a, 16, 9) as u16,
            jump_global: bit(a, 31),
        };
        inst.check_pred()?;
        Ok(inst)
    }
}

/// A texture (input fetch) instruction (ctm-guide §3.4): `CMN_INST`, `TEX_INST`, `TEX_ADDR`,
/// `TEX_ADDR_DXDY`.
///
/// `TEX_INST` (r5xx §11.10): TEX_ID 19:16, INST 24:22, TEX_SEM_ACQUIRE 25, IGNORE_UNCOVERED 26,
/// UNSCALED 27. `TEX_ADDR`: SRC_ADDR 6:0, SRC_ADDR_REL 7, SRC_{S,T,R,Q}_SWIZ 9:8..15:14,
/// DST_ADDR 22:16, DST_ADDR_REL 23, DST_{R,G,B,A}_SWIZ 25:24..31:30. `TEX_ADDR_DXDY`: the same
/// layout for DX (low half) and DY (high half).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct TexInst {
    /// Operation.
    pub op: TexOp,
    /// `TEX_ID`: the program input (0..=15) to read.
    pub input: u8,
    /// `TEX_SEM_WAIT`.
    pub tex_sem_wait: bool,
    /// `TEX_SEM_ACQUIRE`; requires `tex_sem_wait` (§3.4.2).
    pub sem_acquire: bool,
    /// `ALU_WAIT`: the coordinates or predicate come from an ALU instruction (§3.2.1).
    pub alu_wait: bool,
    /// `IGNORE_UNCOVERED`.
    pub ignore_uncovered: bool,
    /// `UNSCALED`: coordinates are element indices, not [0, 1] (§3.4).
    pub unscaled: bool,
    /// `WRITE_INACTIVE`.
    pub write_inactive: bool,
    /// Predicate for the RGB results.
    pub rgb_pred: Pred,
    /// Predicate for the alpha result.
    pub alpha_pred: Pred,
    /// `RGB_WMASK`.
    pub rgb_wmask: u8,
    /// `ALPHA_WMASK`.
    pub alpha_wmask: bool,
    /// Coordinate register.
    pub src: TempReg,
    /// Channels of `src` used as S, T, R, Q.
    pub src_swz: [Chan; 4],
    /// Destination register.
    pub dst: TempReg,
    /// Returned channel written to R, G, B, A of `dst`.
    pub dst_swz: [Chan; 4],
    /// DX register (DXDY only).
    pub dx: TempReg,
    /// DX swizzle.
    pub dx_swz: [Chan; 4],
    /// DY register (DXDY only).
    pub dy: TempReg,
    /// DY swizzle.
    pub dy_swz: [Chan; 4],
}

impl Default for TexInst {
    fn default() -> Self {
        Self {
            op: TexOp::Lookup,
            input: 0,
            tex_sem_wait: false,
            sem_acquire: false,
            alu_wait: false,
            ignore_uncovered: false,
            unscaled: true,
            write_inactive: false,
            rgb_pred: Pred::NONE,
            alpha_pred: Pred::NONE,
            rgb_wmask: 7,
            alpha_wmask: true,
            src: TempReg::default(),
            src_swz: CHAN_XYZW,
            dst: TempReg::default(),
            dst_swz: CHAN_XYZW,
            dx: TempReg::default(),
            dx_swz: CHAN_XYZW,
            dy: TempReg::default(),
            dy_swz: CHAN_XYZW,
        }
    }
}

fn tex_addr(r: TempReg, swz: [Chan; 4]) -> u32 {
    u32::from(r.index)
        | (r.rel as u32) << 7
        | swz[0].raw() << 8
        | swz[1].raw() << 10
        | swz[2].raw() << 12
        | swz[3].raw() << 14
}

fn tex_addr_decode(h: u32) -> Result<(TempReg, [Chan; 4]), EncodeError> {
    Ok((
        TempReg { index: bits(h, 0, 7) as u8, rel: bit(h, 7) },
        [
            Chan::from_raw(bits(h, 8, 2))?,
            Chan::from_raw(bits(h, 10, 2))?,
            Chan::from_raw(bits(h, 12, 2))?,
            Chan::from_raw(bits(h, 14, 2))?,
        ],
    ))
}

impl TexInst {
    /// §3.4.2: "if you set TEX_SEM_ACQUIRE on a lookup ..., you must also set TEX_SEM_WAIT
    /// for that instruction" (hardware allows one ACQUIRE at a time): checked by the encoder
    /// and the decoder alike.
    fn check_semaphore(&self) -> Result<(), EncodeError> {
        if self.sem_acquire && !self.tex_sem_wait {
            return Err(EncodeError::Invalid(
                "TEX_SEM_ACQUIRE requires TEX_SEM_WAIT on the same instruction (ctm-guide §3.4.2)",
            ));
        }
        Ok(())
    }

    /// Encodes the slot.
    pub fn encode(&self) -> Result<Words, EncodeError> {
        check("TEX_ID", self.input.into(), u32::from(NUM_INPUTS) - 1)?;
        check("RGB_WMASK", self.rgb_wmask.into(), 7)?;
        for (r, f) in [
            (self.src, "SRC_ADDR"),
            (self.dst, "DST_ADDR"),
            (self.dx, "DX_ADDR"),
            (self.dy, "DY_ADDR"),
        ] {
            r.check(f)?;
        }
        self.check_semaphore()?;
        let (rps, rpi) = self.rgb_pred.encode()?;
        let (aps, api) = self.alpha_pred.encode()?;
        let cmn = InstType::Tex.raw()
            | (self.tex_sem_wait as u32) << 2
            | rps << 3
            | rpi << 6
            | (self.write_inactive as u32) << 7
            | (self.alu_wait as u32) << 10
            | u32::from(self.rgb_wmask) << 11
            | (self.alpha_wmask as u32) << 14
            | api << 22
            | aps << 25;
        let inst = u32::from(self.input) << 16
            | self.op.raw() << 22
            | (self.sem_acquire as u32) << 25
            | (self.ignore_uncovered as u32) << 26
            | (self.unscaled as u32) << 27;
        let addr = tex_addr(self.src, self.src_swz) | tex_addr(self.dst, self.dst_swz) << 16;
        let dxdy = tex_addr(self.dx, self.dx_swz) | tex_addr(self.dy, self.dy_swz) << 16;
        Ok([cmn, inst, addr, dxdy, 0, 0])
    }

    /// Decodes a TEX slot.
    pub fn decode(w: &Words) -> Result<Self, EncodeError> {
        let cmn = w[0];
        if InstType::from_raw(bits(cmn, 0, 2))? != InstType::Tex {
            return Err(EncodeError::Invalid("not a TEX instruction"));
        }
        let (src, src_swz) = tex_addr_decode(bits(w[2], 0, 16))?;
        let (dst, dst_swz) = tex_addr_decode(bits(w[2], 16, 16))?;
        let (dx, dx_swz) = tex_addr_decode(bits(w[3], 0, 16))?;
        let (dy, dy_swz) = tex_addr_decode(bits(w[3], 16, 16))?;
        let inst = Self {
            op: TexOp::from_raw(bits(w[1], 22, 3))?,
            input: bits(w[1], 16, 4) as u8,
            tex_sem_wait: bit(cmn, 2),
            sem_acquire: bit(w[1], 25),
            alu_wait: bit(cmn, 10),
            ignore_uncovered: bit(w[1], 26),
            unscaled: bit(w[1], 27),
            write_inactive: bit(cmn, 7),
            rgb_pred: Pred::decode(bits(cmn, 3, 3), bit(cmn, 6))?,
            alpha_pred: Pred::decode(bits(cmn, 25, 3), bit(cmn, 22))?,
            rgb_wmask: bits(cmn, 11, 3) as u8,
            alpha_wmask: bit(cmn, 14),
            src,
            src_swz,
            dst,
            dst_swz,
            dx,
            dx_swz,
            dy,
            dy_swz,
        };
        inst.check_semaphore()?;
        Ok(inst)
    }
}

/// Any DPP instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Instruction {
    /// ALU or OUTPUT.
    Alu(AluInst),
    /// Flow control.
    Fc(FcInst),
    /// Texture / input fetch.
    Tex(TexInst),
}

impl Default for Instruction {
    fn default() -> Self {
        Self::Alu(AluInst::default())
    }
}

impl Instruction {
    /// Encodes the six words of the slot.
    pub fn encode(&self) -> Result<Words, EncodeError> {
        match self {
            Self::Alu(a) => a.encode(),
            Self::Fc(f) => f.encode(),
            Self::Tex(t) => t.encode(),
        }
    }
    /// Decodes a slot by its `TYPE` field.
    pub fn decode(w: &Words) -> Result<Self, EncodeError> {
        Ok(match InstType::from_raw(w[0] & 3)? {
            InstType::Alu | InstType::Output => Self::Alu(AluInst::decode(w)?),
            InstType::Fc => Self::Fc(FcInst::decode(w)?),
            InstType::Tex => Self::Tex(TexInst::decode(w)?),
        })
    }
    /// Whether this is an OUTPUT instruction.
    pub fn is_output(&self) -> bool {
        matches!(self, Self::Alu(a) if a.output)
    }
}
