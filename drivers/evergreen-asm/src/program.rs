//! ALU instructions as a program writes them, before slot placement: operands name GPRs,
//! constant-buffer entries and immediate values; the builder turns a group of them into slot
//! instructions, literals and kcache selectors.

use crate::alu::{AluOp, InlineConst, Omod, PredSel};
use crate::isa::Chan;

/// An ALU slot of an instruction group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Slot {
    /// Vector slot x.
    X,
    /// Vector slot y.
    Y,
    /// Vector slot z.
    Z,
    /// Vector slot w.
    W,
    /// The transcendental slot (Evergreen only).
    T,
}

impl Slot {
    /// The slots in encoding order.
    pub const ALL: [Slot; 5] = [Slot::X, Slot::Y, Slot::Z, Slot::W, Slot::T];

    /// The vector slot of a channel.
    pub const fn of_chan(c: Chan) -> Slot {
        match c {
            Chan::X => Slot::X,
            Chan::Y => Slot::Y,
            Chan::Z => Slot::Z,
            Chan::W => Slot::W,
        }
    }
    /// 0 for x … 4 for t.
    pub const fn index(self) -> usize {
        self as usize
    }
    /// `'x'` … `'t'`.
    pub const fn letter(self) -> char {
        ['x', 'y', 'z', 'w', 't'][self as usize]
    }
    /// The channel of a vector slot; `None` for t.
    pub const fn chan(self) -> Option<Chan> {
        match self {
            Slot::X => Some(Chan::X),
            Slot::Y => Some(Chan::Y),
            Slot::Z => Some(Chan::Z),
            Slot::W => Some(Chan::W),
            Slot::T => None,
        }
    }
}

/// What an ALU operand reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Src {
    /// A channel of a GPR (0-127).
    Gpr {
        /// Register.
        index: u8,
        /// Channel.
        chan: Chan,
    },
    /// A channel of constant `index` (16-byte units) of constant buffer `buffer` (0-15); the
    /// builder locks the kcache lines each ALU clause needs.
    Const {
        /// Constant buffer.
        buffer: u8,
        /// Constant (vec4) index, 0-4095.
        index: u16,
        /// Channel.
        chan: Chan,
    },
    /// An inline constant.
    Inline(InlineConst),
    /// A literal dword (the group's literal slots).
    Literal(u32),
    /// A channel of the previous group's vector result.
    Pv(Chan),
    /// The previous group's t-slot result (Evergreen).
    Ps,
}

impl Src {
    /// GPR `index`, channel `chan`.
    pub const fn gpr(index: u8, chan: Chan) -> Src {
        Src::Gpr { index, chan }
    }
    /// Constant `index` of buffer `buffer`, channel `chan`.
    pub const fn cb(buffer: u8, index: u16, chan: Chan) -> Src {
        Src::Const { buffer, index, chan }
    }
    /// A 32-bit immediate: an inline constant when one supplies exactly these bits (0, 1.0,
    /// 1, -1, 0.5), a literal otherwise.
    pub fn value(bits: u32) -> Src {
        InlineConst::from_bits(bits).map_or(Src::Literal(bits), Src::Inline)
    }
    /// A float immediate (see [`Src::value`]).
    pub fn float(v: f32) -> Src {
        Src::value(v.to_bits())
    }
    /// Whether the source goes through the constant/literal path (the t slot's constant
    /// limit counts these).
    pub(crate) const fn is_constant(&self) -> bool {
        matches!(self, Src::Const { .. } | Src::Inline(_) | Src::Literal(_))
    }
}

/// A source with its modifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Operand {
    /// What is read.
    pub src: Src,
    /// Negate (`SRCn_NEG`).
    pub neg: bool,
    /// Absolute value (`SRCn_ABS`, OP2 sources 0 and 1 only).
    pub abs: bool,
}

impl Operand {
    /// `src` without modifiers.
    pub const fn new(src: Src) -> Self {
        Self { src, neg: false, abs: false }
    }
    /// Negated.
    pub const fn neg(mut self) -> Self {
        self.neg = !self.neg;
        self
    }
    /// Absolute value.
    pub const fn abs(mut self) -> Self {
        self.abs = true;
        self
    }
}

impl From<Src> for Operand {
    fn from(src: Src) -> Self {
        Operand::new(src)
    }
}

impl Default for Operand {
    fn default() -> Self {
        Operand::new(Src::gpr(0, Chan::X))
    }
}

/// The destination of an ALU instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Dst {
    /// Register (0-127).
    pub gpr: u8,
    /// Channel: the vector slot of the instruction.
    pub chan: Chan,
    /// Write the GPR (`WRITE_MASK`; OP3 instructions always write).
    pub write: bool,
}

impl Dst {
    /// Write `gpr.chan`.
    pub const fn gpr(gpr: u8, chan: Chan) -> Self {
        Self { gpr, chan, write: true }
    }
    /// Write nothing (the result still reaches PV/PS); `chan` picks the slot.
    pub const fn none(chan: Chan) -> Self {
        Self { gpr: 0, chan, write: false }
    }
}

/// One ALU instruction as written (before slot placement).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct AluInst {
    /// Opcode.
    pub op: AluOp,
    /// Destination.
    pub dst: Dst,
    /// Sources; only the first [`AluOp::src_count`] are used.
    pub src: [Operand; 3],
    /// Output modifier (OP2).
    pub omod: Omod,
    /// Clamp the result to [0, 1].
    pub clamp: bool,
    /// `UPDATE_EXEC_MASK` (`PRED_SET*` only): the threads where the predicate is false become
    /// inactive.
    pub update_exec_mask: bool,
    /// `UPDATE_PRED` (`PRED_SET*` only).
    pub update_pred: bool,
    /// Predication of this instruction.
    pub pred_sel: PredSel,
    /// An explicit slot; `None` lets the builder place it (see the crate docs).
    pub slot: Option<Slot>,
}

impl AluInst {
    /// `op dst, srcs…` with no modifiers (extra operands beyond three are ignored).
    pub fn new(op: AluOp, dst: Dst, srcs: &[Operand]) -> Self {
        let mut src = [Operand::default(); 3];
        for (s, o) in src.iter_mut().zip(srcs) {
            *s = *o;
        }
        Self {
            op,
            dst,
            src,
            omod: Omod::Off,
            clamp: false,
            update_exec_mask: false,
            update_pred: false,
            pred_sel: PredSel::Off,
            slot: None,
        }
    }
    /// With an explicit slot.
    pub const fn in_slot(mut self, slot: Slot) -> Self {
        self.slot = Some(slot);
        self
    }
    /// The used sources.
    pub fn sources(&self) -> &[Operand] {
        &self.src[..self.op.src_count()]
    }
}
