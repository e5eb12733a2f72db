//! QPU shader validation: the rules of Linux vc4_validate_shaders.c over the instruction
//! encoding of broadcom-videocore-iv-3d §3, so that a shader from an untrusted program can
//! neither run past its code, write a register that reaches memory or the host, nor read
//! uniforms from anywhere but the stream its shader record names. Instructions are decoded
//! with `baregpu-qpu-asm`'s typed model; a word it cannot decode (a reserved encoding) is
//! refused.

use core::fmt;

use baregpu_qpu_asm::isa::{
    AddOp, Alu, Branch, Cond, DecodeError, File, Instruction, LoadImmKind, Mux, Packing, RaddrB,
    Reg, Signal,
};

/// Register file entries (0-31); a threaded shader has half of each file (§3 "Threads").
const THREADED_FILE_END: u8 = 16;
/// Accumulators r0-r3 as write addresses (§3 Table 14).
const ACCUMULATORS: [Reg; 4] = [Reg::ACC0, Reg::ACC1, Reg::ACC2, Reg::ACC3];
/// TMU0_S..TMU1_B (§3 Table 14, §4 Table 20): four registers per TMU, S first.
const TMU_WRITES: core::ops::Range<u8> = Reg::TMU0_S.index()..Reg::TMU1_S.index() + 4;

/// Bytes of one QPU instruction (two 32-bit words, §3).
pub const INSTRUCTION_BYTES: usize = 8;
/// Instructions that run after the thread end signal (§3: "two delay slots").
pub const THREAD_END_DELAY_SLOTS: usize = 2;
/// Instructions a branch's delay slots take (§3 "Branches": three always execute).
const BRANCH_DELAY_SLOTS: usize = 3;
/// Least distance between two thread switch or end signals, and from one to a branch (Linux
/// vc4_validate_shaders.c).
const THREAD_SWITCH_SPACING: usize = 3;
/// Least distance between two branches (Linux vc4_validate_shaders.c: a branch in another's
/// delay slots is refused).
const BRANCH_SPACING: usize = 4;
/// TMU parameter writes per lookup, the retiring `S` write included (§4: S, T, R, B).
pub const MAX_TMU_PARAMETERS: u32 = 4;
/// Uniform-address writes a shader may hold (the validator's bound: the list validator checks
/// each, and keeps them in a fixed array).
pub const MAX_UNIFORM_ADDRESS_WRITES: usize = 4;

/// What a valid shader does, for the list validator's checks of its shader record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ShaderInfo {
    /// Instructions that run, up to the thread end's last delay slot.
    pub instructions: usize,
    /// The shader switches threads (signals 2 or 6): it must run as a threaded fragment
    /// shader, and uses only registers 0-15 of each file.
    pub threaded: bool,
    /// Uniforms read from the uniforms stream (by position, counting each read).
    pub uniforms: u32,
    /// TMU lookups (texture or general memory fetches) the shader starts.
    pub tmu_lookups: u32,
    /// Uniform-address writes: the stream position (in uniforms) of the uniform each one
    /// adds its offset to. That uniform must hold the stream's own start address.
    pub uniform_address_writes: [u32; MAX_UNIFORM_ADDRESS_WRITES],
    /// How many of [`ShaderInfo::uniform_address_writes`] are used.
    pub uniform_address_write_count: usize,
}

/// A shader rule (Linux vc4_validate_shaders.c) an instruction breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum ShaderRule {
    /// A word that is no instruction (a reserved encoding, §3; the error is the `source()`).
    Undecodable(DecodeError),
    /// No thread end signal (3) in the code.
    MissingThreadEnd,
    /// The code ends before the thread end's two delay slots.
    ThreadEndDelaySlotsOutside,
    /// A signal the validator refuses (0 breakpoint, 7 coverage load, 9 colour load and end,
    /// 12 alpha-mask load).
    ForbiddenSignal {
        /// The signal (§3 Table 4).
        signal: u8,
    },
    /// A thread switch or end less than three instructions after the previous one.
    ThreadSwitchTooClose,
    /// A branch less than three instructions after a thread switch.
    BranchNearThreadSwitch,
    /// A threaded shader names register file entry 16-31.
    ThreadedRegister {
        /// The register address.
        register: u8,
    },
    /// A write to a register that reaches the host or memory outside the validator's view
    /// (HOST_INT, TMU_NOSWAP, TLB_ALPHA_MASK, MUTEX_RELEASE, VPM_LD_ADDR/VPM_ST_ADDR).
    ForbiddenWrite {
        /// The write address (§3 Table 14).
        register: u8,
    },
    /// More than four TMU parameter writes for one lookup.
    TooManyTmuParameters,
    /// A uniform read in an instruction that writes a TMU parameter (the TMU reads its
    /// configuration from the same stream).
    UniformInTmuSetup,
    /// A TMU lookup with only the `S` write: a direct memory read at an address the shader
    /// computed, which the validator cannot bound (Linux accepts a clamped form; this
    /// validator refuses every direct read).
    DirectTmuLookup,
    /// A write to UNIFORMS_ADDRESS not of the one accepted form: no signal, add unit,
    /// unconditional, no pack or unpack, `add unifs_addr, rX, unif` with `rX` a live load
    /// immediate equal to the stream bytes read so far plus 4.
    UniformAddressForm,
    /// More uniform-address writes than [`MAX_UNIFORM_ADDRESS_WRITES`].
    TooManyUniformAddressWrites,
    /// A uniform read after a branch or its target: the stream position is then not known.
    UniformAfterBranch,
    /// A branch not relative to the program counter.
    BranchNotRelative,
    /// A branch that adds a register to its target.
    BranchViaRegister,
    /// A branch offset that is not a whole instruction.
    BranchMisaligned,
    /// A branch target outside the shader.
    BranchOutside,
    /// A branch to the thread end's instruction or its delay slots.
    BranchToEnd,
    /// A branch in the delay slots of the previous one (less than four apart).
    BranchTooClose,
}

impl fmt::Display for ShaderRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShaderRule::Undecodable(_) => f.write_str("not an instruction"),
            ShaderRule::MissingThreadEnd => f.write_str("no thread end signal in the code"),
            ShaderRule::ThreadEndDelaySlotsOutside => {
                f.write_str("the code ends before the thread end's two delay slots")
            }
            ShaderRule::ForbiddenSignal { signal } => write!(f, "signal {signal} is refused"),
            ShaderRule::ThreadSwitchTooClose => {
                f.write_str("thread switch less than 3 instructions after the previous one")
            }
            ShaderRule::BranchNearThreadSwitch => {
                f.write_str("branch less than 3 instructions after a thread switch")
            }
            ShaderRule::ThreadedRegister { register } => {
                write!(f, "threaded shader uses register {register} (only 0-15 allowed)")
            }
            ShaderRule::ForbiddenWrite { register } => {
                write!(f, "write to register address {register} is refused")
            }
            ShaderRule::TooManyTmuParameters => f.write_str("more than 4 TMU parameters"),
            ShaderRule::UniformInTmuSetup => f.write_str("uniform read in a TMU parameter write"),
            ShaderRule::DirectTmuLookup => f.write_str("direct TMU memory read"),
            ShaderRule::UniformAddressForm => {
                f.write_str("uniforms address write not of the accepted form")
            }
            ShaderRule::TooManyUniformAddressWrites => {
                f.write_str("too many uniforms address writes")
            }
            ShaderRule::UniformAfterBranch => f.write_str("uniform read after a branch"),
            ShaderRule::BranchNotRelative => f.write_str("branch not relative"),
            ShaderRule::BranchViaRegister => f.write_str("branch through a register"),
            ShaderRule::BranchMisaligned => f.write_str("branch offset not a whole instruction"),
            ShaderRule::BranchOutside => f.write_str("branch target outside the shader"),
            ShaderRule::BranchToEnd => f.write_str("branch to the thread end or its delay slots"),
            ShaderRule::BranchTooClose => f.write_str("branch in another branch's delay slots"),
        }
    }
}

/// A shader refused: the byte offset of the instruction and the rule it breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ShaderError {
    /// Byte offset of the instruction in the code (the code's length for a missing end).
    pub offset: usize,
    /// The rule.
    pub rule: ShaderRule,
}

impl fmt::Display for ShaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "shader byte {:#x}: {}", self.offset, self.rule)
    }
}

impl core::error::Error for ShaderError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match &self.rule {
            ShaderRule::Undecodable(e) => Some(e),
            _ => None,
        }
    }
}

fn fail<T>(ip: usize, rule: ShaderRule) -> Result<T, ShaderError> {
    Err(ShaderError { offset: ip * INSTRUCTION_BYTES, rule })
}

/// The instruction at index `ip` of `code` (which holds it).
fn decode(code: &[u8], ip: usize) -> Result<Instruction, ShaderError> {
    let at = ip * INSTRUCTION_BYTES;
    let mut word = [0u8; INSTRUCTION_BYTES];
    word.copy_from_slice(&code[at..at + INSTRUCTION_BYTES]);
    Instruction::decode(u64::from_le_bytes(word))
        .map_err(|e| ShaderError { offset: at, rule: ShaderRule::Undecodable(e) })
}

/// One register write of an instruction: where, which side, under which condition.
#[derive(Clone, Copy)]
struct Write {
    reg: Reg,
    side: File,
    cond: Cond,
}

/// The add pipe's write, then the mul pipe's (a branch writes its link address, if taken).
fn writes(inst: &Instruction) -> [Write; 2] {
    let (add, mul, ws, conds) = match inst {
        Instruction::Alu(a) => {
            (a.wb.waddr_add, a.wb.waddr_mul, a.wb.ws, (a.wb.cond_add, a.wb.cond_mul))
        }
        Instruction::LoadImm(l) => {
            (l.wb.waddr_add, l.wb.waddr_mul, l.wb.ws, (l.wb.cond_add, l.wb.cond_mul))
        }
        Instruction::Semaphore(m) => {
            (m.wb.waddr_add, m.wb.waddr_mul, m.wb.ws, (m.wb.cond_add, m.wb.cond_mul))
        }
        Instruction::Branch(b) => (b.waddr_add, b.waddr_mul, b.ws, (Cond::Always, Cond::Always)),
    };
    let (add_side, mul_side) = if ws { (File::B, File::A) } else { (File::A, File::B) };
    [
        Write { reg: add, side: add_side, cond: conds.0 },
        Write { reg: mul, side: mul_side, cond: conds.1 },
    ]
}

/// The register-file B read address of an ALU instruction (none for a small immediate).
fn raddr_b(a: &Alu) -> Option<Reg> {
    match a.raddr_b {
        RaddrB::Reg(r) => Some(r),
        RaddrB::Imm(_) => None,
    }
}

/// Uniforms an ALU instruction reads (a read through each file's address counts).
fn uniform_reads(a: &Alu) -> u32 {
    u32::from(a.raddr_a == Reg::UNIFORM_READ) + u32::from(raddr_b(a) == Some(Reg::UNIFORM_READ))
}

/// The instruction a relative branch at `ip` goes to (§3: relative to PC+4, after its three
/// delay slots), `None` when the offset is not a whole instruction.
fn branch_target(ip: usize, b: &Branch) -> Option<i64> {
    let offset = i64::from(b.immediate);
    if offset % INSTRUCTION_BYTES as i64 != 0 {
        return None;
    }
    Some((ip + 1 + BRANCH_DELAY_SLOTS) as i64 + offset / INSTRUCTION_BYTES as i64)
}

/// Load-immediate values still held by accumulators r0-r3 and the two register files.
struct LiveImmediates {
    acc: [Option<u32>; 4],
    file: [[Option<u32>; 32]; 2],
}

impl LiveImmediates {
    fn slot(&mut self, reg: Reg, side: File) -> Option<&mut Option<u32>> {
        if reg.is_file() {
            return Some(&mut self.file[usize::from(side == File::B)][usize::from(reg.index())]);
        }
        let acc = ACCUMULATORS.iter().position(|&r| r == reg)?;
        Some(&mut self.acc[acc])
    }

    /// Record the instruction's writes: a load immediate of one 32-bit value, written
    /// unconditionally, makes its destination live; every other write kills it.
    fn update(&mut self, inst: &Instruction) {
        let value = match inst {
            Instruction::LoadImm(l)
                if l.kind == LoadImmKind::Word && l.packing == Packing::NONE =>
            {
                Some(l.value)
            }
            _ => None,
        };
        for w in writes(inst) {
            if let Some(slot) = self.slot(w.reg, w.side) {
                *slot = value.filter(|_| w.cond == Cond::Always);
            }
        }
    }

    /// The live immediate an ALU input mux reads.
    fn read(&self, a: &Alu, mux: Mux) -> Option<u32> {
        let file = |side: usize, r: Reg| {
            r.is_file().then(|| self.file[side][usize::from(r.index())]).flatten()
        };
        match mux {
            Mux::R0 | Mux::R1 | Mux::R2 | Mux::R3 => self.acc[usize::from(mux.bits())],
            Mux::A => file(0, a.raddr_a),
            Mux::B => raddr_b(a).and_then(|r| file(1, r)),
            Mux::R4 | Mux::R5 => None,
        }
    }
}

/// Whether mux `mux` of `a` reads the uniform stream.
fn mux_reads_uniform(a: &Alu, mux: Mux) -> bool {
    (mux == Mux::A && a.raddr_a == Reg::UNIFORM_READ)
        || (mux == Mux::B && raddr_b(a) == Some(Reg::UNIFORM_READ))
}

/// Whether `a` is the accepted uniform-address write: `add unifs_addr, rX, unif` with `rX` a
/// live immediate equal to the stream bytes before this uniform plus 4 (so the stream goes
/// on right after it, from the address the uniform holds).
fn uniform_address_write_ok(a: &Alu, live: &LiveImmediates, uniforms_before: u32) -> bool {
    let plain = a.sig == Signal::None
        && a.wb.waddr_mul == Reg::NOP
        && a.wb.cond_add == Cond::Always
        && a.packing == Packing::NONE
        && a.op_add == AddOp::Add;
    let expected = (uniforms_before + 1) * 4;
    plain
        && ((mux_reads_uniform(a, a.add_b) && live.read(a, a.add_a) == Some(expected))
            || (mux_reads_uniform(a, a.add_a) && live.read(a, a.add_b) == Some(expected)))
}

fn is_forbidden_write(reg: Reg) -> bool {
    [Reg::HOST_INT, Reg::TMU_NOSWAP, Reg::TLB_ALPHA_MASK, Reg::MUTEX, Reg::VPM_ADDR].contains(&reg)
}

/// A branch target seen so far, with the branch's instruction (checked against the end once
/// it is known).
#[derive(Clone, Copy)]
struct Target {
    branch: usize,
    target: i64,
}

/// Validate the shader whose code starts at byte 0 of `code` (the rest of its buffer after
/// it: the code must end, with its delay slots, inside).
///
/// One pass, one decode per instruction: the rules that need the whole program (threading,
/// branch targets against the end, uniforms after a branch) keep what they need (the first
/// register a threaded shader may not name, the least and greatest branch targets, the last
/// uniform read) and are judged at the end.
pub fn validate_shader(code: &[u8]) -> Result<ShaderInfo, ShaderError> {
    let mut info = ShaderInfo {
        instructions: 0,
        threaded: false,
        uniforms: 0,
        tmu_lookups: 0,
        uniform_address_writes: [0; MAX_UNIFORM_ADDRESS_WRITES],
        uniform_address_write_count: 0,
    };
    let mut live = LiveImmediates { acc: [None; 4], file: [[None; 32]; 2] };
    let mut last_switch: Option<usize> = None;
    let mut last_branch: Option<usize> = None;
    let mut tmu_parameters = [0u32; 2];
    let mut upper_register: Option<(usize, u8)> = None;
    let (mut lowest, mut highest): (Option<Target>, Option<Target>) = (None, None);
    let mut branch_reach = usize::MAX;
    let mut last_uniform: Option<usize> = None;
    let mut end: Option<usize> = None;
    let whole = code.len() / INSTRUCTION_BYTES;
    let mut ip = 0;
    while end.is_none_or(|e| ip <= e + THREAD_END_DELAY_SLOTS) {
        if ip == whole {
            return match end {
                None => Err(ShaderError { offset: code.len(), rule: ShaderRule::MissingThreadEnd }),
                Some(e) => fail(e, ShaderRule::ThreadEndDelaySlotsOutside),
            };
        }
        let inst = decode(code, ip)?;
        match &inst {
            Instruction::Alu(a) => match a.sig {
                Signal::Breakpoint
                | Signal::CoverageLoad
                | Signal::ColourLoadEnd
                | Signal::AlphaMaskLoad => {
                    return fail(ip, ShaderRule::ForbiddenSignal { signal: a.sig.bits() });
                }
                Signal::ThreadSwitch | Signal::LastThreadSwitch | Signal::ProgramEnd => {
                    if last_switch.is_some_and(|last| ip < last + THREAD_SWITCH_SPACING) {
                        return fail(ip, ShaderRule::ThreadSwitchTooClose);
                    }
                    last_switch = Some(ip);
                    if a.sig == Signal::ProgramEnd {
                        end = end.or(Some(ip));
                    } else if end.is_none() {
                        info.threaded = true;
                    }
                }
                _ => {}
            },
            Instruction::Branch(b) => {
                let target = check_branch(ip, b, last_switch, last_branch)?;
                last_branch = Some(ip);
                branch_reach = branch_reach.min(ip).min(target.max(0) as usize);
                let t = Target { branch: ip, target };
                lowest = Some(lowest.map_or(t, |l| if target < l.target { t } else { l }));
                highest = Some(highest.map_or(t, |h| if target > h.target { t } else { h }));
            }
            Instruction::LoadImm(_) | Instruction::Semaphore(_) => {}
        }
        let alu = match &inst {
            Instruction::Alu(a) => Some(a),
            _ => None,
        };
        // Register file entries 16-31, which a threaded shader may not name (it has half of
        // each file): the first one is kept until the whole shader says whether it is.
        if upper_register.is_none() {
            let reads = alu.map_or([None, None], |a| [Some(a.raddr_a), raddr_b(a)]);
            let [w0, w1] = writes(&inst);
            upper_register = reads
                .into_iter()
                .flatten()
                .chain([w0.reg, w1.reg])
                .find(|r| r.is_file() && r.index() >= THREADED_FILE_END)
                .map(|r| (ip, r.index()));
        }
        let uniforms = alu.map_or(0, uniform_reads);
        if uniforms > 0 {
            if ip >= branch_reach {
                return fail(ip, ShaderRule::UniformAfterBranch);
            }
            last_uniform = Some(ip);
        }
        for (unit, w) in writes(&inst).into_iter().enumerate() {
            if is_forbidden_write(w.reg) {
                return fail(ip, ShaderRule::ForbiddenWrite { register: w.reg.index() });
            }
            if TMU_WRITES.contains(&w.reg.index()) {
                if uniforms > 0 {
                    return fail(ip, ShaderRule::UniformInTmuSetup);
                }
                let tmu = usize::from(w.reg.index() >= Reg::TMU1_S.index());
                tmu_parameters[tmu] += 1;
                if tmu_parameters[tmu] > MAX_TMU_PARAMETERS {
                    return fail(ip, ShaderRule::TooManyTmuParameters);
                }
                // The S write retires the lookup (§4 Table 20).
                if (w.reg.index() - Reg::TMU0_S.index()).is_multiple_of(4) {
                    if tmu_parameters[tmu] == 1 {
                        return fail(ip, ShaderRule::DirectTmuLookup);
                    }
                    tmu_parameters[tmu] = 0;
                    info.tmu_lookups += 1;
                }
            }
            if w.reg == Reg::UNIFORMS_ADDRESS {
                let ok = unit == 0
                    && alu.is_some_and(|a| uniform_address_write_ok(a, &live, info.uniforms));
                if !ok {
                    return fail(ip, ShaderRule::UniformAddressForm);
                }
                let n = info.uniform_address_write_count;
                if n == MAX_UNIFORM_ADDRESS_WRITES {
                    return fail(ip, ShaderRule::TooManyUniformAddressWrites);
                }
                info.uniform_address_writes[n] = info.uniforms;
                info.uniform_address_write_count += 1;
            }
        }
        info.uniforms += uniforms;
        live.update(&inst);
        ip += 1;
    }
    info.instructions = ip;
    // The rules that needed the whole shader.
    if let (true, Some((at, register))) = (info.threaded, upper_register) {
        return fail(at, ShaderRule::ThreadedRegister { register });
    }
    let end = ip as i64;
    if let Some(l) = lowest.filter(|l| l.target < 0) {
        return fail(l.branch, ShaderRule::BranchOutside);
    }
    if let Some(h) = highest {
        if h.target >= end {
            return fail(h.branch, ShaderRule::BranchOutside);
        }
        if h.target >= end - (1 + THREAD_END_DELAY_SLOTS) as i64 {
            return fail(h.branch, ShaderRule::BranchToEnd);
        }
    }
    // A backward branch reaches uniform reads before it.
    if let Some(at) = last_uniform.filter(|&at| at >= branch_reach) {
        return fail(at, ShaderRule::UniformAfterBranch);
    }
    Ok(info)
}

/// The rules a branch breaks on its own (its target is judged once the end is known); its
/// target.
fn check_branch(
    ip: usize,
    b: &Branch,
    last_switch: Option<usize>,
    last_branch: Option<usize>,
) -> Result<i64, ShaderError> {
    if last_switch.is_some_and(|last| ip < last + THREAD_SWITCH_SPACING) {
        return fail(ip, ShaderRule::BranchNearThreadSwitch);
    }
    if !b.rel {
        return fail(ip, ShaderRule::BranchNotRelative);
    }
    if b.reg {
        return fail(ip, ShaderRule::BranchViaRegister);
    }
    let Some(target) = branch_target(ip, b) else {
        return fail(ip, ShaderRule::BranchMisaligned);
    };
    if last_branch.is_some_and(|last| ip < last + BRANCH_SPACING) {
        return fail(ip, ShaderRule::BranchTooClose);
    }
    Ok(target)
}
