//! One ALU instruction group: slot placement, Cayman replication and the per-group rules.
//!
//! Placement follows how the hardware decodes a group (evergreen-compute A4/A8): on Evergreen
//! the vector slot of an instruction is its `DST_CHAN`, and an instruction goes to t when its
//! opcode is t-only or when its channel's vector slot is already taken by an earlier
//! instruction of the group. The builder therefore places explicit slots first, then the
//! opcodes with one possible unit, then the rest (vector slot if free, else t), and emits x, y,
//! z, w, t in that order so that the decoder reconstructs the same slots. On Cayman the slot
//! is always `DST_CHAN`; §4.2's multi-slot opcodes are expanded here.
//!
//! Read ports (Mesa `r600_asm.c` `check_and_set_bank_swizzle`, the R700/Evergreen rules): a
//! group reads its GPR operands over three cycles; in each cycle each channel (bank) delivers
//! one GPR for the whole group. `BANK_SWIZZLE` picks which cycle reads each source
//! (`ALU_VEC_012` … `ALU_VEC_210` in the vector slots; `ALU_SCL_210/122/212/221` in t, whose
//! constant operands occupy its first cycles). Source 1 equal to source 0 shares its read.
//! Constants come through two kcache read ports per group, one per (constant, channel pair
//! xy/zw). PV, PS, literals and inline constants need no port. The builder tries every
//! swizzle combination (x's most significant, each from 0) and keeps the first that fits.

use crate::alu::{CmUnit, EgUnit, Omod};
use crate::error::ErrorKind;
use crate::isa::{Chan, Chip};
use crate::program::{AluInst, Slot, Src};

/// Cycle of source 0/1/2 under vector bank swizzle 0-5.
const VEC_CYCLES: [[u8; 3]; 6] = [[0, 1, 2], [0, 2, 1], [1, 2, 0], [1, 0, 2], [2, 0, 1], [2, 1, 0]];
/// Cycle of source 0/1/2 under t-slot bank swizzle 0-3.
const SCL_CYCLES: [[u8; 3]; 4] = [[2, 1, 0], [1, 2, 2], [2, 1, 2], [2, 2, 1]];

/// One slot of a placed group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Placed {
    /// The instruction as written (a Cayman copy keeps the original destination channel).
    pub inst: AluInst,
    /// `DST_CHAN` of this slot's word.
    pub dst_chan: Chan,
    /// `WRITE_MASK` of this slot's word.
    pub write: bool,
    /// Literal index of each literal source.
    pub lit: [u8; 3],
    /// `BANK_SWIZZLE`.
    pub bank_swizzle: u8,
    /// Index of the written instruction this slot came from.
    pub origin: u8,
}

/// A placed group.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Group {
    pub slots: [Option<Placed>; 5],
    pub literals: [u32; 4],
    pub nlit: usize,
}

type R<T> = Result<T, (ErrorKind, usize)>;

/// Places `insts` as one group for `chip` and checks the group rules; an error names the index
/// of the instruction at fault.
pub(crate) fn build(chip: Chip, insts: &[AluInst]) -> R<Group> {
    if insts.is_empty() {
        return Err((ErrorKind::EmptyGroup, 0));
    }
    if insts.len() > u8::MAX as usize {
        return Err((ErrorKind::Capacity("instructions in a group"), u8::MAX as usize));
    }
    for (i, inst) in insts.iter().enumerate() {
        check_inst(chip, inst).map_err(|k| (k, i))?;
    }
    let mut g = Group { slots: [None; 5], literals: [0; 4], nlit: 0 };
    // Explicit slots first, then single-unit opcodes, then the flexible ones.
    for pass in 0..3 {
        for (i, inst) in insts.iter().enumerate() {
            if placement_pass(chip, inst) == pass {
                place(chip, &mut g, inst, i).map_err(|k| (k, i))?;
            }
        }
    }
    // An explicit t for an opcode that also runs in a vector slot decodes as t only when
    // its channel's vector slot is taken.
    if let Some(t) = g.slots[4]
        && t.inst.slot == Some(Slot::T)
        && t.inst.op.evergreen_unit() == EgUnit::Any
        && g.slots[t.inst.dst.chan.index()].is_none()
    {
        return Err((ErrorKind::AmbiguousTransSlot, t.origin.into()));
    }
    check_group(chip, &mut g, insts)?;
    Ok(g)
}

fn check_inst(chip: Chip, inst: &AluInst) -> Result<(), ErrorKind> {
    let op = inst.op;
    if inst.dst.gpr > 127 {
        return Err(ErrorKind::BadSource("destination GPR over 127"));
    }
    if op.is_op3() {
        if !inst.dst.write {
            return Err(ErrorKind::Op3AlwaysWrites);
        }
        if inst.omod != Omod::Off || inst.sources().iter().any(|s| s.abs) {
            return Err(ErrorKind::Op3Modifier);
        }
    }
    if (inst.update_exec_mask || inst.update_pred) && !op.is_pred_set() {
        return Err(ErrorKind::UpdateOnNonPredSet);
    }
    if chip == Chip::Cayman && inst.update_exec_mask && inst.omod != Omod::Off {
        return Err(ErrorKind::ExecMaskOmodOnCayman);
    }
    for s in inst.sources() {
        match s.src {
            Src::Gpr { index, .. } if index > 127 => {
                return Err(ErrorKind::BadSource("GPR index over 127"));
            }
            Src::Const { buffer, .. } if buffer > 15 => {
                return Err(ErrorKind::BadSource("constant buffer over 15"));
            }
            Src::Const { index, .. } if index > 4095 => {
                return Err(ErrorKind::BadSource("constant index over 4095"));
            }
            Src::Ps if chip == Chip::Cayman => return Err(ErrorKind::PsOnCayman),
            _ => {}
        }
    }
    Ok(())
}

fn placement_pass(chip: Chip, inst: &AluInst) -> u8 {
    if inst.slot.is_some() {
        return 0;
    }
    let flexible = match chip {
        Chip::Evergreen => inst.op.evergreen_unit() == EgUnit::Any,
        Chip::Cayman => inst.op.cayman_unit() == CmUnit::Vector,
    };
    if flexible { 2 } else { 1 }
}

fn occupy(
    g: &mut Group,
    inst: &AluInst,
    slot: Slot,
    dst_chan: Chan,
    write: bool,
    i: usize,
) -> Result<(), ErrorKind> {
    let cell = &mut g.slots[slot.index()];
    if cell.is_some() {
        return Err(ErrorKind::SlotTaken(slot));
    }
    *cell = Some(Placed {
        inst: *inst,
        dst_chan,
        write,
        lit: [0; 3],
        bank_swizzle: 0,
        origin: i as u8,
    });
    Ok(())
}

fn place(chip: Chip, g: &mut Group, inst: &AluInst, i: usize) -> Result<(), ErrorKind> {
    let chan = inst.dst.chan;
    let own = Slot::of_chan(chan);
    let write = inst.dst.write;
    match chip {
        Chip::Evergreen => {
            let unit = inst.op.evergreen_unit();
            let slot = match inst.slot {
                Some(Slot::T) if unit == EgUnit::Vector => {
                    return Err(ErrorKind::VectorOnlyOp(inst.op));
                }
                Some(Slot::T) => Slot::T,
                Some(_) if unit == EgUnit::Trans => return Err(ErrorKind::TransOnlyOp(inst.op)),
                Some(s) if s != own => return Err(ErrorKind::SlotChannelMismatch),
                Some(s) => s,
                None => match unit {
                    EgUnit::Trans => Slot::T,
                    EgUnit::Vector => own,
                    EgUnit::Any if g.slots[own.index()].is_none() => own,
                    EgUnit::Any if g.slots[4].is_none() => Slot::T,
                    EgUnit::Any => own,
                },
            };
            occupy(g, inst, slot, chan, write, i)
        }
        Chip::Cayman => {
            let unit = inst.op.cayman_unit();
            match inst.slot {
                Some(Slot::T) => return Err(ErrorKind::NoTransSlotOnCayman),
                Some(_) if unit != CmUnit::Vector => {
                    return Err(ErrorKind::ReplicatedOpSlot(inst.op));
                }
                Some(s) if s != own => return Err(ErrorKind::SlotChannelMismatch),
                _ => {}
            }
            let copies: &[Slot] = match unit {
                CmUnit::Vector => return occupy(g, inst, own, chan, write, i),
                CmUnit::Replicated => &[Slot::X, Slot::Y, Slot::Z, Slot::W],
                CmUnit::Xyz if chan == Chan::W => &[Slot::X, Slot::Y, Slot::Z, Slot::W],
                CmUnit::Xyz => &[Slot::X, Slot::Y, Slot::Z],
            };
            for &s in copies {
                let c = Chan::from_index(s.index());
                occupy(g, inst, s, c, write && c == chan, i)?;
            }
            Ok(())
        }
    }
}

fn check_group(chip: Chip, g: &mut Group, insts: &[AluInst]) -> R<()> {
    // One PRED_SET per group.
    if let Some(second) = insts.iter().enumerate().filter(|(_, x)| x.op.is_pred_set()).nth(1) {
        return Err((ErrorKind::PredSetTwice, second.0));
    }
    // Distinct written channels.
    let placed: [Option<Placed>; 5] = g.slots;
    for (a, pa) in placed.iter().enumerate() {
        let Some(pa) = pa else { continue };
        for pb in placed[a + 1..].iter().flatten() {
            if pa.write
                && pb.write
                && pa.inst.dst.gpr == pb.inst.dst.gpr
                && pa.dst_chan == pb.dst_chan
            {
                return Err((ErrorKind::DuplicateWrite, pb.origin.into()));
            }
        }
    }
    // Literals (A4: at most four dwords per group), in slot order.
    for p in g.slots.iter_mut().flatten() {
        for (k, s) in p.inst.src.iter().take(p.inst.op.src_count()).enumerate() {
            if let Src::Literal(v) = s.src {
                let idx = match g.literals[..g.nlit].iter().position(|&x| x == v) {
                    Some(idx) => idx,
                    None if g.nlit == 4 => {
                        return Err((ErrorKind::TooManyLiterals, p.origin.into()));
                    }
                    None => {
                        g.literals[g.nlit] = v;
                        g.nlit += 1;
                        g.nlit - 1
                    }
                };
                p.lit[k] = idx as u8;
            }
        }
    }
    // Two kcache read ports per group: distinct (buffer, constant, channel pair).
    let mut ports: [(u8, u16, u8); 2] = [(0, 0, 0); 2];
    let mut nports = 0;
    for p in g.slots.iter().flatten() {
        for s in p.inst.sources() {
            if let Src::Const { buffer, index, chan } = s.src {
                let key = (buffer, index, chan.index() as u8 / 2);
                if !ports[..nports].contains(&key) {
                    if nports == 2 {
                        return Err((ErrorKind::ConstantReadPorts, p.origin.into()));
                    }
                    ports[nports] = key;
                    nports += 1;
                }
            }
        }
    }
    if chip == Chip::Evergreen
        && let Some(t) = &g.slots[4]
        && t.inst.sources().iter().filter(|s| s.src.is_constant()).count() > 2
    {
        return Err((ErrorKind::TransConstants, t.origin.into()));
    }
    choose_bank_swizzles(g).map_err(|k| (k, insts.len() - 1))
}

/// GPR read ports of one swizzle assignment: `[cycle][channel]` holds the GPR read.
struct Ports([[Option<u8>; 4]; 3]);

impl Ports {
    fn reserve(&mut self, cycle: u8, chan: Chan, gpr: u8) -> bool {
        let cell = &mut self.0[cycle as usize][chan.index()];
        match *cell {
            None => {
                *cell = Some(gpr);
                true
            }
            Some(g) => g == gpr,
        }
    }
}

fn fits(g: &Group, swizzle: &[u8; 5]) -> bool {
    let mut ports = Ports([[None; 4]; 3]);
    for (s, p) in g.slots[..4].iter().enumerate() {
        let Some(p) = p else { continue };
        let srcs = p.inst.sources();
        for (k, op) in srcs.iter().enumerate() {
            if let Src::Gpr { index, chan } = op.src {
                if k == 1 && srcs[0].src == op.src {
                    continue;
                }
                if !ports.reserve(VEC_CYCLES[swizzle[s] as usize][k], chan, index) {
                    return false;
                }
            }
        }
    }
    if let Some(t) = &g.slots[4] {
        let srcs = t.inst.sources();
        let consts = srcs.iter().filter(|s| s.src.is_constant()).count() as u8;
        for (k, op) in srcs.iter().enumerate() {
            let cycle = SCL_CYCLES[swizzle[4] as usize][k];
            match op.src {
                Src::Gpr { index, chan } => {
                    if cycle < consts || !ports.reserve(cycle, chan, index) {
                        return false;
                    }
                }
                Src::Pv(_) | Src::Ps if cycle < consts => return false,
                _ => {}
            }
        }
    }
    true
}

fn choose_bank_swizzles(g: &mut Group) -> Result<(), ErrorKind> {
    let radix = |s: usize| -> u32 {
        match (s, g.slots[s].is_some()) {
            (_, false) => 1,
            (4, true) => 4,
            (_, true) => 6,
        }
    };
    let total: u32 = (0..5).map(radix).product();
    for n in 0..total {
        let mut swizzle = [0u8; 5];
        let mut rest = n;
        for s in (0..5).rev() {
            swizzle[s] = (rest % radix(s)) as u8;
            rest /= radix(s);
        }
        if fits(g, &swizzle) {
            for (p, &z) in g.slots.iter_mut().zip(&swizzle) {
                if let Some(p) = p {
                    p.bank_swizzle = z;
                }
            }
            return Ok(());
        }
    }
    Err(ErrorKind::BankSwizzle)
}
