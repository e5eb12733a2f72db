//! Whole-program checks of the §3 "Summary of Instruction Restrictions" (and the other
//! restrictions §3 states), each a [`Rule`] with the sentence it comes from.
//!
//! Conventions where the document is silent: a pipe writes when its condition is not never,
//! its destination is not `nop` and (ALU) its operation is not `nop`; an instruction reads
//! every address in its raddr fields (the read ports read whether or not a mux uses them);
//! a branch's link write counts as a write; a conditional thread end still ends the thread.

use core::fmt;

use crate::isa::{
    AddOp, DecodeError, File, Instruction, MulOp, Mux, RaddrB, Reg, Signal, SmallImm,
};

/// What kind of program is checked: the fragment-shader rules apply to fragment shaders only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum ProgramKind {
    /// A fragment shader (scoreboard and tile-buffer rules).
    Fragment,
    /// A vertex or coordinate shader.
    Vertex,
    /// A user program started through the QPU scheduler's request queue.
    User,
}

/// A broken rule (the §3 sentence in each variant's documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Rule {
    /// The word is no instruction.
    Decode(DecodeError),
    /// "The behavior is undefined if both ALUs write to the same accumulator or I/O
    /// register." (Both writing one register-file location cannot be encoded: the add pipe
    /// writes side A and the mul pipe side B, or the reverse with ws.)
    SameDestination(Reg),
    /// "An instruction must not read from a location in physical regfile A or B that was
    /// written to by the previous instruction."
    ReadAfterWrite(File, u8),
    /// "After an SFU lookup instruction, accumulator r4 must not be read in the following two
    /// instructions. Any other instruction that results in r4 being written (that is, TMU read,
    /// TLB read, SFU lookup) cannot occur in the two instructions following an SFU lookup."
    R4AfterSfu,
    /// "A single instruction can only perform a maximum of one of the following closely
    /// coupled peripheral accesses in a single instruction: TMU write, TMU read, TLB write, TLB
    /// read, TLB combined color read and write, SFU write, Mutex read or Semaphore access."
    CloselyCoupled,
    /// "QPU programs are terminated by a Program End (thread end) signalled instruction. Two
    /// delay-slot instructions are executed after the Program End instruction": the program's
    /// third-last instruction must end the thread.
    MissingThreadEnd,
    /// A thread end whose two delay slots are not both inside the program, or one inside the
    /// delay slots of another thread end.
    ThreadEndDelaySlots,
    /// "The last three instructions of any program (Thread End plus the following two
    /// delay-slot instructions) must not do varyings read, uniforms read or any kind of VPM,
    /// VDR, or VDW read or write."
    EndAccessesIo,
    /// "The Thread End instruction must not write to either physical regfile A or B."
    ThreadEndWritesRegfile,
    /// "The Thread End instruction and the following two delay slot instructions must not
    /// write or read address 14 in either regfile A or B."
    EndTouches14,
    /// "The final program instruction (the second delay slot instruction) must not do a TLB Z
    /// write."
    FinalTlbZ,
    /// "A scoreboard wait must not occur in the first two instructions of a fragment shader.
    /// This is either the explicit Wait for Scoreboard signal or an implicit wait with the
    /// first tile-buffer read or write instruction."
    EarlyScoreboardWait,
    /// "If TMU_NOSWAP is written, the write must be three instructions before the first TMU
    /// write instruction."
    NoSwapTooLate,
    /// "An instruction that does a vector rotate by r5 must not immediately follow an
    /// instruction that writes to r5."
    RotateAfterR5Write,
    /// "An instruction that does a vector rotate must not immediately follow an instruction
    /// that writes to the accumulator that is being rotated."
    RotateAfterAccumulatorWrite,
    /// "After an instruction that does a TLB Z write, the multisample mask must not be read as
    /// an instruction input argument in the following two instruction."
    MsFlagsAfterTlbZ,
    /// A branch in the delay slots of a branch: "three 'delay slot' instructions following a
    /// branch instruction are always executed" (Linux's vc4 shader validator also requires
    /// branches at least four instructions apart).
    BranchInDelaySlot,
    /// A branch whose three delay slots are not inside the program.
    BranchDelaySlots,
    /// A relative branch whose target is not a whole instruction inside the program.
    BranchTarget,
    /// A thread switch or end within the two delay slots of a thread switch ("the thread stops
    /// running after a further two delays slot instructions").
    ThreadSwitchInDelaySlot,
    /// "The final thread switch instruction of a shader must use the Last Thread Switch
    /// signal."
    LastThreadSwitch,
    /// "This instruction can stall due to external arbitration, the waddr_add and waddr_mul
    /// must not address closely coupled peripherals that can stall, that is, TLB, TMU, or SFU."
    SemaphoreWritesPeripheral,
    /// "There must be at least two nonuniform-accessing instructions following a pointer
    /// change before uniforms can be accessed once more."
    UniformAfterAddressWrite,
}

/// A rule broken at an instruction index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct RuleError {
    /// The instruction (from 0).
    pub index: usize,
    /// The rule.
    pub rule: Rule,
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Decode(e) => write!(f, "{e}"),
            Self::SameDestination(r) => {
                write!(f, "both pipes write accumulator or I/O register {}", r.index())
            }
            Self::ReadAfterWrite(file, n) => {
                write!(f, "reads r{}{n}, written by the previous instruction", side(*file))
            }
            Self::R4AfterSfu => {
                f.write_str("r4 read or written within two instructions of an SFU write")
            }
            Self::CloselyCoupled => f.write_str("more than one closely-coupled peripheral access"),
            Self::MissingThreadEnd => {
                f.write_str("the third-last instruction does not end the thread")
            }
            Self::ThreadEndDelaySlots => f.write_str("a thread end without two delay slots"),
            Self::EndAccessesIo => {
                f.write_str("varying, uniform or VPM access in the last three instructions")
            }
            Self::ThreadEndWritesRegfile => f.write_str("the thread end writes a register file"),
            Self::EndTouches14 => {
                f.write_str("regfile address 14 used in the last three instructions")
            }
            Self::FinalTlbZ => f.write_str("TLB Z write in the final instruction"),
            Self::EarlyScoreboardWait => {
                f.write_str("scoreboard wait in the first two instructions of a fragment shader")
            }
            Self::NoSwapTooLate => f.write_str("TMU write within three instructions of TMU_NOSWAP"),
            Self::RotateAfterR5Write => f.write_str("rotation by r5 right after a write to r5"),
            Self::RotateAfterAccumulatorWrite => {
                f.write_str("rotation of an accumulator written by the previous instruction")
            }
            Self::MsFlagsAfterTlbZ => {
                f.write_str("MS_FLAGS read within two instructions of a TLB Z write")
            }
            Self::BranchInDelaySlot => f.write_str("branch in a branch delay slot"),
            Self::BranchDelaySlots => f.write_str("branch delay slots past the end of the program"),
            Self::BranchTarget => f.write_str("branch target outside the program"),
            Self::ThreadSwitchInDelaySlot => {
                f.write_str("thread switch or end in the delay slots of a thread switch")
            }
            Self::LastThreadSwitch => {
                f.write_str("the final thread switch is not a last thread switch")
            }
            Self::SemaphoreWritesPeripheral => {
                f.write_str("semaphore instruction writes TLB, TMU or SFU")
            }
            Self::UniformAfterAddressWrite => {
                f.write_str("uniform read within two instructions of a uniforms-address write")
            }
        }
    }
}

fn side(f: File) -> char {
    match f {
        File::A => 'a',
        File::B => 'b',
    }
}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "instruction {}: {}", self.index, self.rule)
    }
}

impl core::error::Error for RuleError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match &self.rule {
            Rule::Decode(e) => Some(e),
            _ => None,
        }
    }
}

/// What one instruction does, for the rules.
#[derive(Clone, Copy, Default)]
struct Effects {
    /// Writes: (side, address), up to one per pipe.
    writes: [Option<(File, Reg)>; 2],
    /// Reads through the raddr fields.
    reads: [Option<(File, Reg)>; 2],
    /// Muxes of executing operations.
    muxes: [Option<Mux>; 4],
    sig: Option<Signal>,
    branch: bool,
    semaphore: bool,
    rotate: Option<SmallImm>,
    /// The mul pipe's operands (for the rotated accumulator).
    mul_operands: [Option<Mux>; 2],
}

impl Effects {
    fn of(insn: &Instruction) -> Self {
        let mut fx = Self::default();
        let wb = match insn {
            Instruction::Alu(a) => {
                fx.sig = Some(a.sig);
                let (add_on, mul_on) = (a.op_add != AddOp::Nop, a.op_mul != MulOp::Nop);
                if add_on {
                    fx.muxes[0] = Some(a.add_a);
                    fx.muxes[1] = Some(a.add_b);
                }
                if mul_on {
                    fx.muxes[2] = Some(a.mul_a);
                    fx.muxes[3] = Some(a.mul_b);
                    fx.mul_operands = [Some(a.mul_a), Some(a.mul_b)];
                }
                if a.raddr_a != Reg::NOP {
                    fx.reads[0] = Some((File::A, a.raddr_a));
                }
                match a.raddr_b {
                    RaddrB::Reg(r) if r != Reg::NOP => fx.reads[1] = Some((File::B, r)),
                    RaddrB::Imm(s) if s.rotation().is_some() => fx.rotate = Some(s),
                    _ => {}
                }
                Some((a.wb, add_on, mul_on))
            }
            Instruction::LoadImm(l) => Some((l.wb, true, true)),
            Instruction::Semaphore(s) => {
                fx.semaphore = true;
                Some((s.wb, true, true))
            }
            Instruction::Branch(b) => {
                fx.branch = true;
                if b.reg {
                    fx.reads[0] = Some((File::A, Reg::raw(b.raddr_a)));
                }
                let (add_side, mul_side) =
                    if b.ws { (File::B, File::A) } else { (File::A, File::B) };
                for (i, (side, r)) in
                    [(add_side, b.waddr_add), (mul_side, b.waddr_mul)].into_iter().enumerate()
                {
                    if r != Reg::NOP {
                        fx.writes[i] = Some((side, r));
                    }
                }
                None
            }
        };
        if let Some((wb, add_on, mul_on)) = wb {
            use crate::isa::Cond;
            if add_on && wb.cond_add != Cond::Never && wb.waddr_add != Reg::NOP {
                fx.writes[0] = Some((wb.add_side(), wb.waddr_add));
            }
            if mul_on && wb.cond_mul != Cond::Never && wb.waddr_mul != Reg::NOP {
                fx.writes[1] = Some((wb.mul_side(), wb.waddr_mul));
            }
        }
        fx
    }
    fn writes(&self) -> impl Iterator<Item = (File, Reg)> + '_ {
        self.writes.iter().flatten().copied()
    }
    fn reads(&self) -> impl Iterator<Item = (File, Reg)> + '_ {
        self.reads.iter().flatten().copied()
    }
    fn writes_any(&self, f: impl Fn(u8) -> bool) -> bool {
        self.writes().any(|(_, r)| f(r.index()))
    }
    fn reads_any(&self, f: impl Fn(u8) -> bool) -> bool {
        self.reads().any(|(_, r)| f(r.index()))
    }
    fn sfu_write(&self) -> bool {
        self.writes_any(|r| (52..=55).contains(&r))
    }
    fn tmu_write(&self) -> bool {
        self.writes_any(|r| (56..=63).contains(&r))
    }
    fn tlb_write(&self) -> bool {
        self.writes_any(|r| (43..=47).contains(&r))
    }
    fn reads_mux(&self, m: Mux) -> bool {
        self.muxes.contains(&Some(m))
    }
    fn ends_thread(&self) -> bool {
        self.sig.is_some_and(Signal::ends_thread)
    }
    fn switches_thread(&self) -> bool {
        matches!(self.sig, Some(Signal::ThreadSwitch | Signal::LastThreadSwitch))
    }
    /// Tile-buffer accesses (a fragment shader's implicit scoreboard wait).
    fn tile_buffer(&self) -> bool {
        self.tlb_write()
            || matches!(
                self.sig,
                Some(
                    Signal::ScoreboardWait
                        | Signal::CoverageLoad
                        | Signal::ColourLoad
                        | Signal::ColourLoadEnd
                        | Signal::AlphaMaskLoad
                )
            )
    }
    fn closely_coupled(&self) -> usize {
        let writes = self.writes().filter(|(_, r)| matches!(r.index(), 43..=47 | 52..=63)).count();
        let sig = matches!(
            self.sig,
            Some(
                Signal::LoadTmu0
                    | Signal::LoadTmu1
                    | Signal::CoverageLoad
                    | Signal::ColourLoad
                    | Signal::ColourLoadEnd
                    | Signal::AlphaMaskLoad
            )
        ) as usize;
        let mutex = self.reads().filter(|(_, r)| *r == Reg::MUTEX).count();
        writes + sig + mutex + self.semaphore as usize
    }
    fn io_at_end(&self) -> bool {
        self.reads_any(|r| matches!(r, 32 | 35 | 48..=50))
            || self.writes_any(|r| matches!(r, 48..=50))
    }
}

/// Checks a whole program against the §3 rules ([`Rule`]); the first broken rule with the
/// index of the instruction that breaks it.
pub fn check(words: &[u64], kind: ProgramKind) -> Result<(), RuleError> {
    let err = |index, rule| Err(RuleError { index, rule });
    let fx_at = |i: usize| -> Result<Effects, RuleError> {
        Instruction::decode(words[i])
            .map(|insn| Effects::of(&insn))
            .map_err(|e| RuleError { index: i, rule: Rule::Decode(e) })
    };
    let len = words.len();
    if len < 3 || !fx_at(len - 3)?.ends_thread() {
        return err(len.saturating_sub(3), Rule::MissingThreadEnd);
    }
    let mut prev = Effects::default();
    let mut sfu_at: Option<usize> = None;
    let mut tlbz_at: Option<usize> = None;
    let mut unif_addr_at: Option<usize> = None;
    let mut noswap_at: Option<usize> = None;
    let mut branch_at: Option<usize> = None;
    let mut switch_at: Option<usize> = None;
    let mut end_at: Option<usize> = None;
    let mut tmu_written = false;
    let mut last_switch: Option<(usize, Signal)> = None;
    for (i, &word) in words.iter().enumerate() {
        let fx = fx_at(i)?;
        let near = |at: Option<usize>, n: usize| at.is_some_and(|a| i > a && i - a <= n);
        let [w0, w1] = fx.writes;
        if let (Some((s0, r0)), Some((s1, r1))) = (w0, w1)
            && r0 == r1
            && !(r0.write_is_sided() && s0 != s1)
        {
            return err(i, Rule::SameDestination(r0));
        }
        for (file, r) in fx.reads() {
            if r.is_file() && prev.writes().any(|w| w == (file, r)) {
                return err(i, Rule::ReadAfterWrite(file, r.index()));
            }
        }
        let r4_write = fx.sfu_write() || fx.sig.is_some_and(Signal::loads_r4);
        if near(sfu_at, 2) && (fx.reads_mux(Mux::R4) || r4_write) {
            return err(i, Rule::R4AfterSfu);
        }
        if fx.semaphore && fx.writes_any(|r| matches!(r, 43..=47 | 52..=63)) {
            return err(i, Rule::SemaphoreWritesPeripheral);
        }
        if fx.closely_coupled() > 1 {
            return err(i, Rule::CloselyCoupled);
        }
        if kind == ProgramKind::Fragment && i < 2 && fx.tile_buffer() {
            return err(i, Rule::EarlyScoreboardWait);
        }
        if fx.tmu_write() {
            if noswap_at.is_some_and(|n| i < n + 3) {
                return err(i, Rule::NoSwapTooLate);
            }
            tmu_written = true;
        }
        if fx.writes_any(|r| r == Reg::TMU_NOSWAP.index()) {
            if tmu_written {
                return err(i, Rule::NoSwapTooLate);
            }
            noswap_at = Some(i);
        }
        if let Some(rot) = fx.rotate {
            if rot.rotation() == Some(None) && prev.writes_any(|r| r == Reg::ACC5.index()) {
                return err(i, Rule::RotateAfterR5Write);
            }
            let rotated = |m: Mux| prev.writes_any(|r| m.bits() < 4 && r == 32 + m.bits());
            if fx.mul_operands.iter().flatten().any(|&m| rotated(m)) {
                return err(i, Rule::RotateAfterAccumulatorWrite);
            }
        }
        if near(tlbz_at, 2) && fx.reads().any(|r| r == (File::A, Reg::MS_REV_FLAGS)) {
            return err(i, Rule::MsFlagsAfterTlbZ);
        }
        if near(unif_addr_at, 2) && fx.reads_any(|r| r == Reg::UNIFORM_READ.index()) {
            return err(i, Rule::UniformAfterAddressWrite);
        }
        if fx.branch {
            if near(branch_at, 3) {
                return err(i, Rule::BranchInDelaySlot);
            }
            if i + 3 >= len {
                return err(i, Rule::BranchDelaySlots);
            }
            if let Ok(Instruction::Branch(b)) = Instruction::decode(word)
                && b.rel
                && !b.reg
                && !b.target(i).is_some_and(|t| (0..len as i64).contains(&t))
            {
                return err(i, Rule::BranchTarget);
            }
            branch_at = Some(i);
        }
        if (fx.switches_thread() || fx.ends_thread()) && near(switch_at, 2) {
            return err(i, Rule::ThreadSwitchInDelaySlot);
        }
        if fx.switches_thread() {
            if let Some((_, Signal::LastThreadSwitch)) = last_switch {
                return err(i, Rule::LastThreadSwitch);
            }
            last_switch = fx.sig.map(|s| (i, s));
            switch_at = Some(i);
        }
        if fx.ends_thread() {
            if i + 2 >= len || near(end_at, 2) {
                return err(i, Rule::ThreadEndDelaySlots);
            }
            if fx.writes().any(|(_, r)| r.is_file()) {
                return err(i, Rule::ThreadEndWritesRegfile);
            }
            for j in i..i + 3 {
                let slot = fx_at(j)?;
                if slot.io_at_end() {
                    return err(j, Rule::EndAccessesIo);
                }
                if slot.reads().chain(slot.writes()).any(|(_, r)| r.index() == 14) {
                    return err(j, Rule::EndTouches14);
                }
            }
            end_at = Some(i);
            if i + 3 == len && fx_at(i + 2)?.writes_any(|r| r == Reg::TLB_Z.index()) {
                return err(i + 2, Rule::FinalTlbZ);
            }
        }
        if fx.sfu_write() {
            sfu_at = Some(i);
        }
        if fx.writes_any(|r| r == Reg::TLB_Z.index()) {
            tlbz_at = Some(i);
        }
        if fx.writes_any(|r| r == Reg::UNIFORMS_ADDRESS.index()) {
            unif_addr_at = Some(i);
        }
        prev = fx;
    }
    if let Some((i, Signal::ThreadSwitch)) = last_switch {
        return err(i, Rule::LastThreadSwitch);
    }
    Ok(())
}
