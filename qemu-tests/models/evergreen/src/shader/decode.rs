//! The decoder: CF words, ALU words and groups (with the VLIW slot rules), vertex fetch words
//! and RAT export words, for Evergreen and Cayman. Layouts: Mesa
//! `sb_bc_fmt_def.inc`, LLVM `R600InstrFormats.td`). Every word is decoded in full: an unknown
//! opcode, a reserved value or a field the model does not implement is a typed error, never
//! ignored.

use super::error::ShaderErrorKind as E;
use super::isa::{
    AluOp, Chip, CmSlots, EgSlots, Kind, alu_cf_inst, cf_inst, fetch_format, field, flag, rat_inst,
    src_sel,
};

/// CF COND (CF_WORD1 9:8): which threads a conditional CF instruction considers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cond {
    /// The active threads.
    Active,
    /// None.
    AlwaysFalse,
    /// The active threads if boolean constant CF_CONST is set.
    Bool,
    /// The active threads if boolean constant CF_CONST is clear.
    NotBool,
}

/// A flow-control CF instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlowOp {
    /// JUMP.
    Jump,
    /// PUSH.
    Push,
    /// ELSE.
    Else,
    /// POP.
    Pop,
    /// LOOP_START_DX10.
    LoopStartDx10,
    /// LOOP_START_NO_AL.
    LoopStartNoAl,
    /// LOOP_END.
    LoopEnd,
    /// LOOP_BREAK.
    LoopBreak,
    /// LOOP_CONTINUE.
    LoopContinue,
}

/// Fields of a flow-control instruction (CF_WORD0/1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flow {
    /// The operation.
    pub op: FlowOp,
    /// ADDR: target CF index (64-bit units from the program start).
    pub addr: u32,
    /// POP_COUNT.
    pub pop_count: u32,
    /// CF_CONST: boolean or loop constant index.
    pub cf_const: u32,
    /// COND.
    pub cond: Cond,
}

/// What an ALU clause does to the stack around its groups (CF_ALU_WORD1 CF_INST).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AluCfKind {
    /// ALU (and Cayman ALU_VALID_PIXEL_MODE: all compute threads are valid).
    Plain,
    /// ALU_PUSH_BEFORE.
    PushBefore,
    /// ALU_POP_AFTER / ALU_POP2_AFTER: pops after the clause.
    PopAfter(u32),
    /// ALU_ELSE_AFTER.
    ElseAfter,
}

/// One kcache set of an ALU clause (CF_ALU_WORD0/1 KCACHE_BANK/MODE/ADDR).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kcache {
    /// Constant buffer (KCACHE_BANK).
    pub bank: u32,
    /// Constants locked: 0 (NOP), 16 (LOCK_1) or 32 (LOCK_2).
    pub constants: u32,
    /// First constant: KCACHE_ADDR * 16.
    pub first: u32,
}

/// An ALU clause CF instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AluCf {
    /// Stack behaviour.
    pub kind: AluCfKind,
    /// ADDR (64-bit units).
    pub addr: u32,
    /// 64-bit slots in the clause, literals included (COUNT + 1).
    pub slots: u32,
    /// Kcache sets 0 and 1.
    pub kcache: [Kcache; 2],
}

/// A RAT operation the model performs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RatOp {
    /// STORE_RAW (Evergreen) / STORE_DWORD (Cayman): COMP_MASK components of RW_GPR to dwords
    /// index + c.
    Store,
    /// Atomic ADD of RW_GPR.x to dword index.
    Add,
}

/// A MEM_RAT / MEM_RAT_CACHELESS export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RatExport {
    /// RAT_ID: colour buffer.
    pub rat: u32,
    /// Operation.
    pub op: RatOp,
    /// RW_GPR: data.
    pub rw_gpr: u32,
    /// INDEX_GPR: dword index in its x channel.
    pub index_gpr: u32,
    /// COMP_MASK.
    pub comp_mask: u32,
    /// `MEM_RAT` (through the colour-buffer cache) rather than `MEM_RAT_CACHELESS`.
    pub cached: bool,
}

/// A decoded CF instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CfInst {
    /// NOP.
    Nop,
    /// TC / VC fetch clause: `count` vertex fetches at ADDR.
    Fetch {
        /// ADDR (64-bit units).
        addr: u32,
        /// Instructions (COUNT + 1).
        count: u32,
    },
    /// Flow control.
    Flow(Flow),
    /// WAIT_ACK: the model completes writes immediately.
    WaitAck,
    /// CF_END (Cayman).
    End,
    /// ALU clause.
    Alu(AluCf),
    /// RAT export.
    Rat(RatExport),
}

/// A CF instruction and its END_OF_PROGRAM bit (Evergreen).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodedCf {
    /// The instruction.
    pub inst: CfInst,
    /// END_OF_PROGRAM (always false on Cayman, which ends with CF_END).
    pub end_of_program: bool,
}

fn unsupported(field: &'static str, value: u32) -> E {
    E::UnsupportedField { field, value }
}

fn reserved(field: &'static str, value: u32) -> E {
    E::ReservedField { field, value }
}

/// Decode the CF instruction in words `w0`, `w1`.
pub fn decode_cf(w0: u32, w1: u32, chip: Chip) -> Result<DecodedCf, E> {
    // CF_ALU_WORD1 CF_INST is 4 bits at 29:26 and always >= 8; every CF_WORD1 and export
    // CF_INST (8 bits at 29:22) is below 0x80. Bit 29 tells them apart.
    if flag(w1, 29) {
        return decode_alu_cf(w0, w1, chip)
            .map(|a| DecodedCf { inst: CfInst::Alu(a), end_of_program: false });
    }
    let inst = field(w1, 22, 8);
    if inst >= 0x40 {
        return decode_export(w0, w1, inst, chip);
    }
    // CF_WORD1: POP_COUNT 2:0, CF_CONST 7:3, COND 9:8, COUNT 15:10, VALID_PIXEL_MODE 20,
    // END_OF_PROGRAM 21, CF_INST 29:22, WHOLE_QUAD_MODE 30, BARRIER 31.
    if flag(w1, 30) {
        return Err(unsupported("WHOLE_QUAD_MODE", 1));
    }
    let eop = flag(w1, 21);
    if eop && chip == Chip::Cayman {
        // §4.1: "END_OF_PROGRAM bit replaced with CF_INST_END".
        return Err(reserved("END_OF_PROGRAM (Cayman)", 1));
    }
    let cond = match field(w1, 8, 2) {
        0 => Cond::Active,
        1 => Cond::AlwaysFalse,
        2 => Cond::Bool,
        _ => Cond::NotBool,
    };
    // CF_WORD0: ADDR 23:0, JUMPTABLE_SEL 26:24.
    let addr = field(w0, 0, 24);
    let flow = |op| {
        CfInst::Flow(Flow { op, addr, pop_count: field(w1, 0, 3), cf_const: field(w1, 3, 5), cond })
    };
    let decoded = match inst {
        cf_inst::NOP => CfInst::Nop,
        cf_inst::TC => CfInst::Fetch { addr, count: field(w1, 10, 6) + 1 },
        cf_inst::VC if chip == Chip::Evergreen => {
            CfInst::Fetch { addr, count: field(w1, 10, 6) + 1 }
        }
        cf_inst::CF_END if chip == Chip::Cayman => CfInst::End,
        cf_inst::VC | cf_inst::CF_END => return Err(E::CfInstNotOnChip { inst, chip }),
        cf_inst::LOOP_END => flow(FlowOp::LoopEnd),
        cf_inst::LOOP_START_DX10 => flow(FlowOp::LoopStartDx10),
        cf_inst::LOOP_START_NO_AL => flow(FlowOp::LoopStartNoAl),
        cf_inst::LOOP_CONTINUE => flow(FlowOp::LoopContinue),
        cf_inst::LOOP_BREAK => flow(FlowOp::LoopBreak),
        cf_inst::JUMP => flow(FlowOp::Jump),
        cf_inst::PUSH => flow(FlowOp::Push),
        cf_inst::ELSE => flow(FlowOp::Else),
        cf_inst::POP => flow(FlowOp::Pop),
        cf_inst::WAIT_ACK => CfInst::WaitAck,
        // GDS 0x03, LOOP_START 0x04, CALL 0x12, CALL_FS 0x13, RETURN 0x14, EMIT/CUT 0x15-0x17,
        // KILL 0x18, TC_ACK/VC_ACK 0x1B/0x1C, JUMPTABLE 0x1D, GLOBAL_WAVE_SYNC 0x1E, HALT 0x1F.
        0x03
        | cf_inst::LOOP_START
        | cf_inst::CALL
        | cf_inst::CALL_FS
        | cf_inst::RETURN
        | 0x15..=0x18
        | 0x1B..=0x1F => return Err(E::UnsupportedCfInst(inst)),
        // Cayman's LDS_DEALLOC, PUSH_WQM, POP_WQM, ELSE_WQM, JUMP_ANY (Mesa r600_isa.c).
        0x21..=0x25 if chip == Chip::Cayman => return Err(E::UnsupportedCfInst(inst)),
        _ => return Err(E::UnknownCfInst(inst)),
    };
    if let CfInst::Flow(f) = decoded {
        let active_only = matches!(
            f.op,
            FlowOp::Pop | FlowOp::LoopStartDx10 | FlowOp::LoopStartNoAl | FlowOp::LoopEnd
        );
        if active_only && f.cond != Cond::Active {
            return Err(unsupported("COND on POP/LOOP_START/LOOP_END", field(w1, 8, 2)));
        }
    }
    Ok(DecodedCf { inst: decoded, end_of_program: eop })
}

fn decode_alu_cf(w0: u32, w1: u32, chip: Chip) -> Result<AluCf, E> {
    // CF_ALU_WORD1: KCACHE_MODE1 1:0, KCACHE_ADDR0 9:2, KCACHE_ADDR1 17:10, COUNT 24:18,
    // ALT_CONST 25, CF_INST 29:26, WHOLE_QUAD_MODE 30, BARRIER 31.
    let inst = field(w1, 26, 4);
    let kind = match inst {
        alu_cf_inst::ALU => AluCfKind::Plain,
        alu_cf_inst::PUSH_BEFORE => AluCfKind::PushBefore,
        alu_cf_inst::POP_AFTER => AluCfKind::PopAfter(1),
        alu_cf_inst::POP2_AFTER => AluCfKind::PopAfter(2),
        alu_cf_inst::ELSE_AFTER => AluCfKind::ElseAfter,
        alu_cf_inst::BREAK_OR_VALID_PIXEL_MODE if chip == Chip::Cayman => AluCfKind::Plain,
        alu_cf_inst::CONTINUE if chip == Chip::Cayman => return Err(E::UnknownAluCfInst(inst)),
        _ => return Err(E::UnsupportedCfInst(inst)),
    };
    if flag(w1, 25) {
        return Err(unsupported("ALT_CONST", 1));
    }
    if flag(w1, 30) {
        return Err(unsupported("WHOLE_QUAD_MODE", 1));
    }
    // CF_ALU_WORD0: ADDR 21:0, KCACHE_BANK0 25:22, KCACHE_BANK1 29:26, KCACHE_MODE0 31:30.
    let kcache = |bank: u32, mode: u32, addr: u32| -> Result<Kcache, E> {
        let constants = match mode {
            0 => 0,
            1 => 16,
            2 => 32,
            // LOCK_LOOP_INDEX: lines chosen by the loop index (not modelled).
            _ => return Err(unsupported("KCACHE_MODE LOCK_LOOP_INDEX", 3)),
        };
        Ok(Kcache { bank, constants, first: addr * 16 })
    };
    Ok(AluCf {
        kind,
        addr: field(w0, 0, 22),
        slots: field(w1, 18, 7) + 1,
        kcache: [
            kcache(field(w0, 22, 4), field(w0, 30, 2), field(w1, 2, 8))?,
            kcache(field(w0, 26, 4), field(w1, 0, 2), field(w1, 10, 8))?,
        ],
    })
}

fn decode_export(w0: u32, w1: u32, inst: u32, chip: Chip) -> Result<DecodedCf, E> {
    match inst {
        cf_inst::MEM_RAT | cf_inst::MEM_RAT_CACHELESS => {}
        // MEM_STREAMn_BUFm 0x40-0x4F, MEM_SCRATCH 0x50, MEM_RING 0x52, EXPORT 0x53,
        // EXPORT_DONE 0x54, MEM_EXPORT 0x55, MEM_RING1-3 0x58-0x5A, MEM_MEM_COMBINED 0x5B,
        // MEM_RAT_COMBINED_CACHELESS 0x5C: defined, not modelled (a compute shader writes
        // memory through RATs).
        0x40..=0x50 | 0x52..=0x55 | 0x58..=0x5C => return Err(E::UnsupportedCfInst(inst)),
        _ => return Err(E::UnknownCfInst(inst)),
    }
    // WORD0_RAT: RAT_ID 3:0, RAT_INST 9:4, RAT_INDEX_MODE 12:11, TYPE 14:13, RW_GPR 21:15,
    // RW_REL 22, INDEX_GPR 29:23, ELEM_SIZE 31:30.
    let rat = field(w0, 0, 4);
    let op = match (field(w0, 4, 6), chip) {
        (rat_inst::STORE_RAW, Chip::Evergreen) | (rat_inst::STORE_DWORD, Chip::Cayman) => {
            RatOp::Store
        }
        (rat_inst::ADD, _) => RatOp::Add,
        (other, chip) => return Err(E::UnsupportedRatInst { inst: other, chip }),
    };
    if field(w0, 11, 2) != 0 {
        return Err(unsupported("RAT_INDEX_MODE", field(w0, 11, 2)));
    }
    // TYPE: 1 WRITE_IND, 3 WRITE_IND_ACK (the ack completes at once in the model); the
    // non-indexed types 0/2 are not modelled.
    let ty = field(w0, 13, 2);
    if ty & 1 == 0 {
        return Err(unsupported("export TYPE (non-indexed)", ty));
    }
    if flag(w0, 22) {
        return Err(unsupported("RW_REL", 1));
    }
    // ELEM_SIZE: LLVM and Mesa write dword-indexed RATs with 0; whether another value scales
    // the index is not documented, so the model refuses it rather than guess.
    if field(w0, 30, 2) != 0 {
        return Err(unsupported("ELEM_SIZE", field(w0, 30, 2)));
    }
    // WORD1_BUF: ARRAY_SIZE 11:0, COMP_MASK 15:12, BURST_COUNT 19:16, VALID_PIXEL_MODE 20,
    // END_OF_PROGRAM 21, CF_INST 29:22, MARK 30, BARRIER 31.
    if field(w1, 16, 4) != 0 {
        return Err(unsupported("BURST_COUNT", field(w1, 16, 4)));
    }
    let eop = flag(w1, 21);
    if eop && chip == Chip::Cayman {
        return Err(reserved("END_OF_PROGRAM (Cayman)", 1));
    }
    Ok(DecodedCf {
        inst: CfInst::Rat(RatExport {
            rat,
            op,
            rw_gpr: field(w0, 15, 7),
            index_gpr: field(w0, 23, 7),
            comp_mask: field(w1, 12, 4),
            cached: inst == cf_inst::MEM_RAT,
        }),
        end_of_program: eop,
    })
}

/// An ALU source operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Src {
    /// SRC_SEL.
    pub sel: u32,
    /// SRC_CHAN.
    pub chan: u8,
    /// SRC_NEG.
    pub neg: bool,
    /// SRC_ABS (OP2 sources 0 and 1 only).
    pub abs: bool,
}

/// PRED_SEL (ALU_WORD0 30:29).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PredSel {
    /// Not predicated.
    Off,
    /// Runs where the predicate is 0.
    Zero,
    /// Runs where the predicate is 1.
    One,
}

/// One ALU instruction (ALU_WORD0 + WORD1_OP2 or WORD1_OP3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AluInst {
    /// Operation.
    pub op: AluOp,
    /// Sources (the first `op.info().srcs` are meaningful).
    pub src: [Src; 3],
    /// DST_GPR.
    pub dst_gpr: u32,
    /// DST_CHAN.
    pub dst_chan: u8,
    /// Writes the GPR (OP2 WRITE_MASK; OP3 always writes).
    pub write: bool,
    /// CLAMP to [0, 1].
    pub clamp: bool,
    /// OMOD: 0 none, 1 x2, 2 x4, 3 /2.
    pub omod: u32,
    /// UPDATE_EXEC_MASK.
    pub update_exec_mask: bool,
    /// UPDATE_PRED.
    pub update_pred: bool,
    /// PRED_SEL.
    pub pred_sel: PredSel,
    /// LAST: ends the group.
    pub last: bool,
}

impl AluInst {
    /// The meaningful sources.
    pub fn sources(&self) -> &[Src] {
        &self.src[..self.op.info().srcs]
    }

    /// Whether the instruction writes a GPR.
    pub fn writes_gpr(&self) -> bool {
        self.write && self.op != AluOp::Nop
    }
}

fn check_sel(sel: u32, chip: Chip) -> Result<(), E> {
    match sel {
        0..=src_sel::GPR_LAST | src_sel::KCACHE0..src_sel::KCACHE_END => Ok(()),
        src_sel::ZERO..=src_sel::PV => Ok(()),
        src_sel::PS if chip == Chip::Evergreen => Ok(()),
        src_sel::PS => Err(E::PsOnCayman),
        _ => Err(E::UnsupportedSrcSel(sel)),
    }
}

/// Decode one ALU instruction.
pub fn decode_alu(w0: u32, w1: u32, chip: Chip) -> Result<AluInst, E> {
    // ALU_WORD0: SRC0_SEL 8:0, SRC0_REL 9, SRC0_CHAN 11:10, SRC0_NEG 12, SRC1_SEL 21:13,
    // SRC1_REL 22, SRC1_CHAN 24:23, SRC1_NEG 25, INDEX_MODE 28:26, PRED_SEL 30:29, LAST 31.
    // OP3 opcodes are >= 4 in ALU_INST 17:13, OP2 opcodes < 0x100 in 17:7: bits 17:15 decide.
    let is_op3 = field(w1, 15, 3) != 0;
    let code = if is_op3 { field(w1, 13, 5) } else { field(w1, 7, 11) };
    let op = AluOp::from_code(is_op3, code).ok_or(E::UnknownAluOp { op3: is_op3, inst: code })?;
    let info = op.info();
    let mut src = [
        Src { sel: field(w0, 0, 9), chan: field(w0, 10, 2) as u8, neg: flag(w0, 12), abs: false },
        Src { sel: field(w0, 13, 9), chan: field(w0, 23, 2) as u8, neg: flag(w0, 25), abs: false },
        Src::default(),
    ];
    let mut rel = [flag(w0, 9), flag(w0, 22), false];
    let pred_sel = match field(w0, 29, 2) {
        0 => PredSel::Off,
        2 => PredSel::Zero,
        3 => PredSel::One,
        v => return Err(reserved("PRED_SEL", v)),
    };
    // Common tail of both WORD1 formats: BANK_SWIZZLE 20:18, DST_GPR 27:21, DST_REL 28,
    // DST_CHAN 30:29, CLAMP 31.
    let bank_swizzle = field(w1, 18, 3);
    if bank_swizzle > 5 {
        return Err(reserved("BANK_SWIZZLE", bank_swizzle));
    }
    let mut inst = AluInst {
        op,
        src,
        dst_gpr: field(w1, 21, 7),
        dst_chan: field(w1, 29, 2) as u8,
        write: true,
        clamp: flag(w1, 31),
        omod: 0,
        update_exec_mask: false,
        update_pred: false,
        pred_sel,
        last: flag(w0, 31),
    };
    if is_op3 {
        // WORD1_OP3: SRC2_SEL 8:0, SRC2_REL 9, SRC2_CHAN 11:10, SRC2_NEG 12, ALU_INST 17:13.
        src[2] = Src {
            sel: field(w1, 0, 9),
            chan: field(w1, 10, 2) as u8,
            neg: flag(w1, 12),
            abs: false,
        };
        rel[2] = flag(w1, 9);
    } else {
        // WORD1_OP2: SRC0_ABS 0, SRC1_ABS 1, UPDATE_EXEC_MASK 2, UPDATE_PRED 3, WRITE_MASK 4,
        // OMOD 6:5, ALU_INST 17:7.
        src[0].abs = flag(w1, 0);
        src[1].abs = flag(w1, 1);
        inst.update_exec_mask = flag(w1, 2);
        inst.update_pred = flag(w1, 3);
        inst.write = flag(w1, 4);
        inst.omod = field(w1, 5, 2);
    }
    inst.src = src;
    if op == AluOp::Nop {
        return Ok(inst);
    }
    if flag(w1, 28) || rel[..info.srcs].iter().any(|&r| r) {
        return Err(unsupported("SRC_REL/DST_REL (relative addressing)", 1));
    }
    for s in &src[..info.srcs] {
        check_sel(s.sel, chip)?;
    }
    let int_src = matches!(info.kind, Kind::Int | Kind::IntToFloat);
    if int_src && src[..info.srcs].iter().any(|s| s.neg || s.abs) {
        return Err(unsupported("SRC_NEG/SRC_ABS on an integer operation", 1));
    }
    let int_dst = matches!(info.kind, Kind::Int | Kind::FloatToInt);
    if int_dst && (inst.clamp || inst.omod != 0) {
        return Err(unsupported("CLAMP/OMOD on an integer result", 1));
    }
    if !op.is_pred_set() && (inst.update_exec_mask || inst.update_pred) {
        return Err(unsupported("UPDATE_EXEC_MASK/UPDATE_PRED on a non-PRED_SET operation", 1));
    }
    Ok(inst)
}

/// Slot index of the Evergreen t slot in [`AluGroup::slots`].
pub const T_SLOT: usize = 4;

/// One instruction group: up to x, y, z, w (and t on Evergreen), with its literals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AluGroup {
    /// Slots x, y, z, w, t.
    pub slots: [Option<AluInst>; 5],
    /// Literal dwords following the group (unused ones 0).
    pub literals: [u32; 4],
}

/// Decode the ALU clause in `words` (two per 64-bit slot) into groups, checking the VLIW rules.
pub fn decode_clause(words: &[u32], chip: Chip) -> Result<Vec<AluGroup>, E> {
    let slots = words.len() / 2;
    let word = |i: usize| (words[2 * i], words[2 * i + 1]);
    let mut groups = Vec::new();
    let mut i = 0;
    while i < slots {
        let mut insts = Vec::with_capacity(5);
        let max = if chip == Chip::Evergreen { 5 } else { 4 };
        loop {
            if i >= slots {
                return Err(E::ClauseEndsMidGroup);
            }
            let (w0, w1) = word(i);
            i += 1;
            let inst = decode_alu(w0, w1, chip)?;
            if insts.len() == max {
                return Err(E::GroupTooLong);
            }
            insts.push(inst);
            if inst.last {
                break;
            }
        }
        // Literals: as many dwords as the highest literal channel read needs, padded to an
        // even count (one or two 64-bit slots), counted in the clause's COUNT.
        let lits = insts
            .iter()
            .flat_map(|x| x.sources().iter())
            .filter(|s| s.sel == src_sel::LITERAL)
            .map(|s| usize::from(s.chan) + 1)
            .max()
            .unwrap_or(0);
        let lit_slots = lits.div_ceil(2);
        if i + lit_slots > slots {
            return Err(E::LiteralOutsideClause);
        }
        let mut literals = [0; 4];
        for (k, l) in literals.iter_mut().enumerate().take(lit_slots * 2) {
            *l = words[2 * i + k];
        }
        i += lit_slots;
        groups.push(AluGroup { slots: assign_slots(&insts, chip)?, literals });
    }
    Ok(groups)
}

/// Place a group's instructions in their slots (the Mesa r600 assembler's rules: vector slot =
/// DST_CHAN in x, y, z, w order; on Evergreen a t-only operation, or an instruction whose
/// DST_CHAN does not come after the previous one, goes to t, which is last) and check the
/// chip's rules.
fn assign_slots(insts: &[AluInst], chip: Chip) -> Result<[Option<AluInst>; 5], E> {
    let mut slots: [Option<AluInst>; 5] = [None; 5];
    let mut prev: Option<u8> = None;
    for inst in insts {
        if slots[T_SLOT].is_some() {
            return Err(E::InstructionAfterTrans);
        }
        let info = inst.op.info();
        let in_order = prev.is_none_or(|p| inst.dst_chan > p);
        match chip {
            Chip::Evergreen => {
                if info.eg == EgSlots::Trans || !in_order {
                    if info.eg == EgSlots::Vector {
                        return Err(E::VectorOnlyInTrans(inst.op));
                    }
                    slots[T_SLOT] = Some(*inst);
                    continue;
                }
            }
            Chip::Cayman if !in_order => return Err(E::SlotOrder { chan: inst.dst_chan }),
            Chip::Cayman => {}
        }
        slots[usize::from(inst.dst_chan)] = Some(*inst);
        prev = Some(inst.dst_chan);
    }
    if chip == Chip::Cayman {
        check_cayman_replication(&slots)?;
    }
    // One writer per GPR channel, one predicate and one exec-mask update per group.
    let present: Vec<&AluInst> = slots.iter().flatten().collect();
    for (k, a) in present.iter().enumerate() {
        for b in &present[k + 1..] {
            if a.writes_gpr()
                && b.writes_gpr()
                && a.dst_gpr == b.dst_gpr
                && a.dst_chan == b.dst_chan
            {
                return Err(E::WriteConflict { gpr: a.dst_gpr as u8, chan: a.dst_chan });
            }
        }
    }
    if present.iter().filter(|x| x.update_pred).count() > 1
        || present.iter().filter(|x| x.update_exec_mask).count() > 1
    {
        return Err(E::PredicateConflict);
    }
    Ok(slots)
}

/// §4.2: MULLO/MULHI_INT/UINT occupy all four slots with the same sources; RECIP_IEEE (and the
/// other former t-only transcendentals) occupy x, y, z with the same sources, w optionally.
fn check_cayman_replication(slots: &[Option<AluInst>; 5]) -> Result<(), E> {
    for inst in slots.iter().take(4).flatten() {
        let needed: &[u8] = match inst.op.info().cm {
            CmSlots::Vector => continue,
            CmSlots::AllFour => &[0, 1, 2, 3],
            CmSlots::XyzPlusOptionalW => &[0, 1, 2],
        };
        let reference = match &slots[0] {
            Some(x) if x.op == inst.op => x,
            _ => return Err(E::ReplicationMissing { op: inst.op, slot: 0 }),
        };
        for (slot, s) in slots.iter().take(4).enumerate() {
            match s {
                Some(s) if s.op == inst.op => {
                    if s.sources() != reference.sources() {
                        return Err(E::ReplicationOperands { op: inst.op, slot: slot as u8 });
                    }
                }
                _ if needed.contains(&(slot as u8)) => {
                    return Err(E::ReplicationMissing { op: inst.op, slot: slot as u8 });
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// Buffer data format of a fetch: components and whether they are floats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchFormat {
    /// 32-bit components read (1, 2 or 4).
    pub components: u32,
    /// Float format (SEL_1 gives 1.0 instead of integer 1).
    pub float: bool,
}

impl FetchFormat {
    /// DATA_FORMAT + NUM_FORMAT_ALL: the 32-bit formats of the subset. Integer formats need
    /// NUM_FORMAT_ALL = INT (1, raw bits; LLVM's choice); NORM/SCALED conversions are not
    /// modelled. Float formats pass bits through whatever NUM_FORMAT_ALL says.
    pub fn new(data_format: u32, num_format: u32) -> Result<Self, E> {
        let (components, float) = match data_format {
            fetch_format::FMT_32 => (1, false),
            fetch_format::FMT_32_FLOAT => (1, true),
            fetch_format::FMT_32_32 => (2, false),
            fetch_format::FMT_32_32_FLOAT => (2, true),
            fetch_format::FMT_32_32_32_32 => (4, false),
            fetch_format::FMT_32_32_32_32_FLOAT => (4, true),
            _ => return Err(E::UnsupportedFetchFormat { data_format, num_format }),
        };
        if !float && num_format != 1 {
            return Err(E::UnsupportedFetchFormat { data_format, num_format });
        }
        Ok(Self { components, float })
    }
}

/// A vertex fetch (VTX_WORD0/1/2; the fourth dword is padding).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VtxFetch {
    /// BUFFER_ID.
    pub buffer_id: u32,
    /// SRC_GPR: index source.
    pub src_gpr: u32,
    /// SRC_SEL_X: channel of SRC_GPR holding the index.
    pub src_chan: u8,
    /// DST_GPR.
    pub dst_gpr: u32,
    /// DST_SEL_X/Y/Z/W: 0-3 fetched X..W, 4 zero, 5 one, 7 keep.
    pub dst_sel: [u32; 4],
    /// USE_CONST_FIELDS: format from the resource instead of the instruction.
    pub use_const_fields: bool,
    /// DATA_FORMAT of the instruction.
    pub data_format: u32,
    /// NUM_FORMAT_ALL of the instruction.
    pub num_format: u32,
    /// OFFSET in bytes.
    pub offset: u32,
}

/// Decode a vertex fetch. Evergreen and Cayman differ in VTX_WORD0 31:26 and WORD2 bit 19 (Mesa
/// sb_bc_fmt_def.inc Cayman layouts).
pub fn decode_vtx(w: [u32; 4], chip: Chip) -> Result<VtxFetch, E> {
    // VTX_WORD0: VC_INST 4:0, FETCH_TYPE 6:5, FETCH_WHOLE_QUAD 7, BUFFER_ID 15:8, SRC_GPR 22:16,
    // SRC_REL 23, SRC_SEL_X 25:24; Evergreen MEGA_FETCH_COUNT 31:26; Cayman SRC_SEL_Y 27:26,
    // STRUCTURED_READ 29:28, LDS_REQ 30, COALESCED_READ 31.
    let inst = field(w[0], 0, 5);
    if inst != 0 {
        // 1 = VTX_SEMANTIC; in a TC clause the other values are texture instructions.
        return Err(E::UnsupportedFetchInst(inst));
    }
    match field(w[0], 5, 2) {
        // VERTEX_DATA and NO_INDEX_OFFSET: a compute dispatch has no index offset, so equal.
        0 | 2 => {}
        1 => return Err(unsupported("FETCH_TYPE INSTANCE_DATA", 1)),
        v => return Err(reserved("FETCH_TYPE", v)),
    }
    if flag(w[0], 23) {
        return Err(unsupported("SRC_REL", 1));
    }
    // Evergreen's MEGA_FETCH_COUNT is ignored: the load size comes from DATA_FORMAT (Mesa uses
    // MEGA_FETCH_COUNT values that differ from the load size).
    if chip == Chip::Cayman {
        if field(w[0], 28, 2) != 0 {
            return Err(unsupported("STRUCTURED_READ", field(w[0], 28, 2)));
        }
        if flag(w[0], 30) {
            return Err(unsupported("LDS_REQ", 1));
        }
        if flag(w[0], 31) {
            return Err(unsupported("COALESCED_READ", 1));
        }
    }
    // VTX_WORD1: DST_GPR 6:0, DST_REL 7, DST_SEL_X/Y/Z/W 11:9/14:12/17:15/20:18,
    // USE_CONST_FIELDS 21, DATA_FORMAT 27:22, NUM_FORMAT_ALL 29:28, FORMAT_COMP_ALL 30,
    // SRF_MODE_ALL 31 (both irrelevant to raw 32-bit data).
    if flag(w[1], 7) {
        return Err(unsupported("DST_REL", 1));
    }
    let mut dst_sel = [0; 4];
    for (c, s) in dst_sel.iter_mut().enumerate() {
        *s = field(w[1], 9 + 3 * c as u32, 3);
        if *s == 6 {
            return Err(reserved("DST_SEL", 6));
        }
    }
    // VTX_WORD2: OFFSET 15:0, ENDIAN_SWAP 17:16, CONST_BUF_NO_STRIDE 18, MEGA_FETCH 19
    // (Evergreen; reserved on Cayman), ALT_CONST 20, BUFFER_INDEX_MODE 22:21.
    if field(w[2], 16, 2) != 0 {
        return Err(unsupported("ENDIAN_SWAP", field(w[2], 16, 2)));
    }
    if flag(w[2], 18) {
        return Err(unsupported("CONST_BUF_NO_STRIDE", 1));
    }
    if chip == Chip::Cayman && flag(w[2], 19) {
        return Err(reserved("MEGA_FETCH (Cayman)", 1));
    }
    if flag(w[2], 20) {
        return Err(unsupported("ALT_CONST", 1));
    }
    if field(w[2], 21, 2) != 0 {
        return Err(unsupported("BUFFER_INDEX_MODE", field(w[2], 21, 2)));
    }
    let fetch = VtxFetch {
        buffer_id: field(w[0], 8, 8),
        src_gpr: field(w[0], 16, 7),
        src_chan: field(w[0], 24, 2) as u8,
        dst_gpr: field(w[1], 0, 7),
        dst_sel,
        use_const_fields: flag(w[1], 21),
        data_format: field(w[1], 22, 6),
        num_format: field(w[1], 28, 2),
        offset: field(w[2], 0, 16),
    };
    if !fetch.use_const_fields {
        FetchFormat::new(fetch.data_format, fetch.num_format)?;
    }
    Ok(fetch)
}
