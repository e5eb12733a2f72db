//! QPU shader validation: the rules of Linux vc4_validate_shaders.c over the instruction
//! encoding of broadcom-videocore-iv-3d §3, so that a shader from an untrusted program can
//! neither run past its code, write a register that reaches memory or the host, nor read
//! uniforms from anywhere but the stream its shader record names.

use core::fmt;

use crate::qpu::{self, Inst, reg, sig};

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

impl core::error::Error for ShaderError {}

fn fail<T>(ip: usize, rule: ShaderRule) -> Result<T, ShaderError> {
    Err(ShaderError { offset: ip * INSTRUCTION_BYTES, rule })
}

/// What the first pass finds: where the code ends, whether it is threaded, where branches
/// start to make the uniform position unknown.
struct Shape {
    instructions: usize,
    threaded: bool,
    /// The first instruction a branch may reach: the first branch or the least target.
    first_branch_reach: usize,
}

fn shape(code: &[u8]) -> Result<Shape, ShaderError> {
    let whole = code.len() / INSTRUCTION_BYTES;
    let mut end = None;
    let mut threaded = false;
    let mut reach = usize::MAX;
    for ip in 0..whole {
        let inst = Inst::at(code, ip * INSTRUCTION_BYTES);
        match inst.sig() {
            sig::PROG_END => {
                end = Some(ip);
                break;
            }
            sig::THREAD_SWITCH | sig::LAST_THREAD_SWITCH => threaded = true,
            sig::BRANCH => {
                let target = branch_target(ip, inst).unwrap_or(0).max(0) as usize;
                reach = reach.min(ip).min(target);
            }
            _ => {}
        }
    }
    let Some(end) = end else {
        return Err(ShaderError { offset: code.len(), rule: ShaderRule::MissingThreadEnd });
    };
    let instructions = end + 1 + THREAD_END_DELAY_SLOTS;
    if instructions > whole {
        return fail(end, ShaderRule::ThreadEndDelaySlotsOutside);
    }
    Ok(Shape { instructions, threaded, first_branch_reach: reach })
}

/// The instruction a relative branch at `ip` goes to (§3: relative to PC+4, after its three
/// delay slots), `None` when the offset is not a whole instruction.
fn branch_target(ip: usize, inst: Inst) -> Option<i64> {
    let offset = i64::from(inst.immediate() as i32);
    if offset % INSTRUCTION_BYTES as i64 != 0 {
        return None;
    }
    Some((ip + 1 + BRANCH_DELAY_SLOTS) as i64 + offset / INSTRUCTION_BYTES as i64)
}

/// Load-immediate values still held by accumulators r0-r3 and the two register files.
struct LiveImmediates {
    acc: [Option<u32>; 4],
    file: [[Option<u32>; reg::FILE_END as usize]; 2],
}

impl LiveImmediates {
    fn slot(&mut self, waddr: u8, file_b: bool) -> Option<&mut Option<u32>> {
        match waddr {
            w if w < reg::FILE_END => Some(&mut self.file[usize::from(file_b)][usize::from(w)]),
            w if (reg::ACC0..reg::ACC0 + 4).contains(&w) => {
                Some(&mut self.acc[usize::from(w - reg::ACC0)])
            }
            _ => None,
        }
    }

    /// Record the instruction's writes: a load immediate of one 32-bit value, written
    /// unconditionally, makes its destination live; every other write kills it.
    fn update(&mut self, inst: Inst) {
        let ldi = inst.sig() == sig::LOAD_IMM && inst.unpack() == 0 && inst.pack() == 0;
        for ((waddr, file_b), cond) in
            inst.writes().into_iter().zip([inst.cond_add(), inst.cond_mul()])
        {
            let value = (ldi && cond == qpu::COND_ALWAYS).then_some(inst.immediate());
            if let Some(slot) = self.slot(waddr, file_b) {
                *slot = value;
            }
        }
    }

    /// The live immediate an ALU input mux reads.
    fn read(&self, inst: Inst, mux: u8) -> Option<u32> {
        match mux {
            0..=3 => self.acc[usize::from(mux)],
            qpu::MUX_A if inst.raddr_a() < reg::FILE_END => {
                self.file[0][usize::from(inst.raddr_a())]
            }
            qpu::MUX_B if inst.reads_b() && inst.raddr_b() < reg::FILE_END => {
                self.file[1][usize::from(inst.raddr_b())]
            }
            _ => None,
        }
    }
}

/// Whether mux `mux` of `inst` reads the uniform stream.
fn mux_reads_uniform(inst: Inst, mux: u8) -> bool {
    (mux == qpu::MUX_A && inst.raddr_a() == reg::UNIFORM_READ)
        || (mux == qpu::MUX_B && inst.reads_b() && inst.raddr_b() == reg::UNIFORM_READ)
}

/// Whether `inst` is the accepted uniform-address write: `add unifs_addr, rX, unif` with `rX`
/// a live immediate equal to the stream bytes before this uniform plus 4 (so the stream goes
/// on right after it, from the address the uniform holds).
fn uniform_address_write_ok(inst: Inst, live: &LiveImmediates, uniforms_before: u32) -> bool {
    let plain = inst.sig() == sig::NONE
        && inst.waddr_mul() == reg::NOP
        && inst.cond_add() == qpu::COND_ALWAYS
        && inst.pack() == 0
        && !inst.pm()
        && inst.unpack() == 0
        && inst.op_add() == qpu::OP_ADD_ADD;
    let expected = (uniforms_before + 1) * 4;
    let (a, b) = (inst.add_a(), inst.add_b());
    plain
        && ((mux_reads_uniform(inst, b) && live.read(inst, a) == Some(expected))
            || (mux_reads_uniform(inst, a) && live.read(inst, b) == Some(expected)))
}

fn is_forbidden_write(waddr: u8) -> bool {
    matches!(
        waddr,
        reg::HOST_INT
            | reg::TMU_NOSWAP
            | reg::TLB_ALPHA_MASK
            | reg::MUTEX_RELEASE
            | reg::VPM_DMA_ADDR
    )
}

/// Validate the shader whose code starts at byte 0 of `code` (the rest of its buffer after
/// it: the code must end, with its delay slots, inside).
pub fn validate_shader(code: &[u8]) -> Result<ShaderInfo, ShaderError> {
    let shape = shape(code)?;
    let mut info = ShaderInfo {
        instructions: shape.instructions,
        threaded: shape.threaded,
        uniforms: 0,
        tmu_lookups: 0,
        uniform_address_writes: [0; MAX_UNIFORM_ADDRESS_WRITES],
        uniform_address_write_count: 0,
    };
    let mut live = LiveImmediates { acc: [None; 4], file: [[None; reg::FILE_END as usize]; 2] };
    let mut last_switch: Option<usize> = None;
    let mut last_branch: Option<usize> = None;
    let mut tmu_parameters = [0u32; 2];
    for ip in 0..shape.instructions {
        let inst = Inst::at(code, ip * INSTRUCTION_BYTES);
        let signal = inst.sig();
        match signal {
            sig::BREAKPOINT | sig::COVERAGE_LOAD | sig::COLOR_LOAD_END | sig::ALPHA_MASK_LOAD => {
                return fail(ip, ShaderRule::ForbiddenSignal { signal });
            }
            sig::THREAD_SWITCH | sig::LAST_THREAD_SWITCH | sig::PROG_END => {
                if last_switch.is_some_and(|last| ip < last + THREAD_SWITCH_SPACING) {
                    return fail(ip, ShaderRule::ThreadSwitchTooClose);
                }
                last_switch = Some(ip);
            }
            sig::BRANCH => {
                check_branch(ip, inst, &shape, last_switch, last_branch)?;
                last_branch = Some(ip);
            }
            _ => {}
        }
        // Register file entries a threaded shader may not name (it has half of each file).
        if shape.threaded {
            let mut named = [None; 4];
            if inst.is_alu() {
                named[0] = Some(inst.raddr_a());
                named[1] = inst.reads_b().then_some(inst.raddr_b());
            }
            named[2] = Some(inst.waddr_add());
            named[3] = Some(inst.waddr_mul());
            for r in named.into_iter().flatten() {
                if (reg::THREADED_FILE_END..reg::FILE_END).contains(&r) {
                    return fail(ip, ShaderRule::ThreadedRegister { register: r });
                }
            }
        }
        let reads_uniform = inst.reads_uniform();
        if reads_uniform && ip >= shape.first_branch_reach {
            return fail(ip, ShaderRule::UniformAfterBranch);
        }
        for (unit, (waddr, _)) in inst.writes().into_iter().enumerate() {
            if is_forbidden_write(waddr) {
                return fail(ip, ShaderRule::ForbiddenWrite { register: waddr });
            }
            if (reg::TMU0_S..reg::TMU_END).contains(&waddr) {
                if reads_uniform {
                    return fail(ip, ShaderRule::UniformInTmuSetup);
                }
                let tmu = usize::from(waddr >= reg::TMU1_S);
                tmu_parameters[tmu] += 1;
                if tmu_parameters[tmu] > MAX_TMU_PARAMETERS {
                    return fail(ip, ShaderRule::TooManyTmuParameters);
                }
                // The S write retires the lookup (§4 Table 20).
                if (waddr - reg::TMU0_S).is_multiple_of(4) {
                    if tmu_parameters[tmu] == 1 {
                        return fail(ip, ShaderRule::DirectTmuLookup);
                    }
                    tmu_parameters[tmu] = 0;
                    info.tmu_lookups += 1;
                }
            }
            if waddr == reg::UNIFORMS_ADDRESS {
                if unit != 0 || !uniform_address_write_ok(inst, &live, info.uniforms) {
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
        if reads_uniform {
            let both = inst.raddr_a() == reg::UNIFORM_READ
                && inst.reads_b()
                && inst.raddr_b() == reg::UNIFORM_READ;
            info.uniforms += 1 + u32::from(both);
        }
        live.update(inst);
    }
    Ok(info)
}

fn check_branch(
    ip: usize,
    inst: Inst,
    shape: &Shape,
    last_switch: Option<usize>,
    last_branch: Option<usize>,
) -> Result<(), ShaderError> {
    if last_switch.is_some_and(|last| ip < last + THREAD_SWITCH_SPACING) {
        return fail(ip, ShaderRule::BranchNearThreadSwitch);
    }
    if !inst.branch_rel() {
        return fail(ip, ShaderRule::BranchNotRelative);
    }
    if inst.branch_reg() {
        return fail(ip, ShaderRule::BranchViaRegister);
    }
    let Some(target) = branch_target(ip, inst) else {
        return fail(ip, ShaderRule::BranchMisaligned);
    };
    let end = shape.instructions as i64;
    if target < 0 || target >= end {
        return fail(ip, ShaderRule::BranchOutside);
    }
    if target >= end - (1 + THREAD_END_DELAY_SLOTS) as i64 {
        return fail(ip, ShaderRule::BranchToEnd);
    }
    if last_branch.is_some_and(|last| ip < last + BRANCH_SPACING) {
        return fail(ip, ShaderRule::BranchTooClose);
    }
    Ok(())
}
