//! The DPP array interpreter (CTM guide ch. 3): one processor run per domain element.
//!
//! Instruction words are laid out as in §3.2 (ALU/OUTPUT: CMN, ALU_RGB_ADDR, ALU_ALPHA_ADDR,
//! ALU_RGB_INST, ALU_ALPHA_INST, ALU_RGBA_INST; TEX and FC words overlap them), with the field
//! positions of the matching US_* registers in amd-r5xx-acceleration §11.10 (the CTM guide
//! names the fields but defers their bit positions to that register reference). The FC words
//! FC_INST and FC_ADDR share the slots of ALU_ALPHA_ADDR and ALU_RGB_INST (words 2 and 3), the
//! TEX words TEX_INST, TEX_ADDR, TEX_ADDR_DXDY those of words 1, 2 and 3 — the overlap §3.2
//! describes, as the register offsets show (US_FC_INST and US_ALU_ALPHA_ADDR are both
//! 0x9800-0x9ffc, and so on).
//!
//! Each element runs on its own processor group of one, so §3.5.1's group decisions reduce
//! to that processor's own wish (JUMP_ANY only matters while it is inactive), and the result
//! is the SIMD result §2.1.2 promises.

// Channel loops index several parallel arrays (inputs, masks, results) by channel number.
#![allow(clippy::needless_range_loop)]

use crate::cache::{CachedMemory, Caches};
use crate::error::DppError;
use crate::fp::{compare_zero, ftz, inline_const, output_modifier, transcendental};
use crate::mc::{self, DataFormat, SurfaceFormat};
use crate::memory::Memory;

/// Instruction slots (§3.1).
pub const INSTRUCTION_SLOTS: u32 = 512;
/// 32-bit words per instruction slot (§3.2: six for ALU/OUTPUT; FC and TEX overlap them).
pub const WORDS_PER_INSTRUCTION: u32 = 6;
/// Temporary registers (§3.3.1).
pub const TEMPS: usize = 128;
/// Constant registers (§3.3.1).
pub const CONSTS: usize = 256;
/// Loop and address stack size in full flow control mode (§3.5.2).
pub const STACK_DEPTH: usize = 4;

/// Per-program information the ABI carries (§4.1.4 dpp_proginfo) rather than the command
/// stream: the R5xx model sets it (from the loader's US_CODE_ADDR etc.) before start_program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProgramInfo {
    /// First instruction (US_CODE_ADDR bits 15:0 / START_ADDR).
    pub start: u32,
    /// Last instruction: execution stops after it (US_CODE_ADDR bits 31:16 / END_ADDR).
    /// Instructions with LAST set also end the program for an active processor.
    pub end: u32,
    /// Added to non-global jump addresses (US_CODE_OFFSET).
    pub code_offset: u32,
    /// US_FC_CTRL bit 31: full flow control (loops, subroutines, stacks of 4, counter 0-31).
    /// Partial mode: no loops/subroutines, branch counter 0-3.
    pub full_flow_control: bool,
    /// US_CONFIG bit 0: uncached (UMRT) output writes — not modelled (start_program fails).
    pub uncached_output: bool,
}

impl Default for ProgramInfo {
    fn default() -> Self {
        Self {
            start: 0,
            end: INSTRUCTION_SLOTS - 1,
            code_offset: 0,
            full_flow_control: true,
            uncached_output: false,
        }
    }
}

/// Bounds that keep a malicious program or command buffer from hanging the model server.
///
/// Work is counted in work units (see [`crate::engine`]'s "Work units and slices"): one per
/// DPP instruction executed, domain element visited, command consumed and cache line written
/// back to memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Instructions one element may execute ([`crate::DppError::InstructionBudgetExceeded`]).
    pub per_element: u32,
    /// The per-dispatch limit: instructions one start_program may execute over its whole
    /// domain ([`crate::DppError::ProgramBudgetExceeded`]). With at most 4096 x 4096 domain
    /// elements, one dispatch costs at most `per_program + 2^24` work units (plus write-backs).
    pub per_program: u64,
    /// Work units one command buffer may take in all, over every slice
    /// ([`crate::CtmErrorKind::BufferBudgetExceeded`]).
    pub per_buffer: u64,
}

impl Default for Limits {
    /// 65,536 instructions per element, 2^26 per dispatch, 2^28 work units per command buffer
    /// (four dispatches at their limit; about half a minute of interpreter time, spread over
    /// as many slices as the caller's per-slice budget makes).
    fn default() -> Self {
        Self { per_element: 65_536, per_program: 1 << 26, per_buffer: 1 << 28 }
    }
}

/// The surfaces a program reads (MC state set by commands, §2.2.2).
#[derive(Debug, Clone, Copy, Default)]
pub struct Surfaces {
    /// set_inst_fmt.
    pub inst: Option<SurfaceFormat>,
    /// set_inp_fmt, per input.
    pub inputs: [Option<SurfaceFormat>; 16],
    /// set_constf_fmt.
    pub constf: Option<SurfaceFormat>,
    /// set_consti_fmt.
    pub consti: Option<SurfaceFormat>,
    /// set_constb_fmt.
    pub constb: Option<SurfaceFormat>,
}

/// What one element produced.
#[derive(Debug, Clone, Copy)]
pub struct ElementResult {
    /// TEXKILL killed the processor: nothing is output.
    pub killed: bool,
    /// Render targets A-D (outputs 0-3), channels c0-c3 = r, g, b, a.
    pub outputs: [[f32; 4]; 4],
    /// Channels written per output (bit n = cn).
    pub written: [u32; 4],
    /// The conditional value written with W_OMASK, if any (§2.1.1 "specified directly in an
    /// instruction in the program").
    pub w: Option<f32>,
    /// Instructions executed.
    pub instructions: u32,
}

#[derive(Debug, Clone, Copy)]
struct LoopFrame {
    remaining: u32,
    al: i32,
    inc: i32,
}

/// One processor's state for the element it is running: kept between slices.
#[derive(Debug, Clone)]
struct Thread {
    pc: u32,
    temps: [[f32; 4]; TEMPS],
    pred: [bool; 4],
    alu_result: bool,
    active: bool,
    branch_cnt: i32,
    loops: Vec<LoopFrame>,
    addrs: Vec<u32>,
    out: ElementResult,
}

impl Thread {
    fn al(&self) -> i32 {
        self.loops.last().map_or(0, |f| f.al)
    }
}

fn field(w: u32, lo: u32, bits: u32) -> u32 {
    (w >> lo) & ((1 << bits) - 1)
}

fn flag(w: u32, b: u32) -> bool {
    (w >> b) & 1 != 0
}

/// Result of an ALU unit before the output modifier.
#[derive(Clone, Copy)]
enum Res {
    /// Non-transcendental arithmetic with extra range (§3.6.2).
    Calc(f64),
    /// One of the first two arguments, bit exact (MIN/MAX/CND/CMP).
    Sel(f32),
    /// Transcendental (already an f32, §3.6.3).
    Trans(f32),
}

fn finish(r: Res, omod: u32, clamp: bool) -> Result<f32, DppError> {
    if omod == 7 {
        // §3.3.5 OMOD_DISABLED: result copied exactly, no clamp; only MIN/MAX/CMP/CND.
        return match r {
            Res::Sel(v) => Ok(v),
            _ => Err(DppError::Reserved("OMOD_DISABLED on an op other than MIN/MAX/CMP/CND")),
        };
    }
    let v = match r {
        Res::Calc(x) => x,
        Res::Sel(v) => f64::from(ftz(v)),
        Res::Trans(v) => f64::from(v),
    };
    Ok(output_modifier(v, omod, clamp))
}

fn swizzle(src: &[f32; 4], s: u32) -> f32 {
    match s {
        0..=3 => src[s as usize],
        5 => 0.5,
        6 => 1.0,
        _ => 0.0, // 4 - Zero, 7 - Unused
    }
}

fn modify(v: f32, m: u32) -> f32 {
    match m {
        0 => v,
        1 => -v,
        2 => v.abs(),
        _ => -v.abs(),
    }
}

/// §3.3.6 predicate select: NONE, RGBA, RRRR, GGGG, BBBB, AAAA; returns the per-channel mask.
fn pred_mask(pred: &[bool; 4], sel: u32, inv: bool) -> Result<[bool; 4], DppError> {
    let m = match sel {
        0 => return Ok([true; 4]),
        1 => *pred,
        2..=5 => [pred[sel as usize - 2]; 4],
        _ => return Err(DppError::Reserved("predicate select 6/7")),
    };
    Ok(if inv { m.map(|b| !b) } else { m })
}

/// What one start_program keeps between slices: the decoded per-slot and per-index copies of
/// what the MC caches served (no invalidate command can be consumed during a start_program,
/// so they only save decoding), the instruction count and the element in flight.
#[derive(Debug, Clone)]
pub struct ProgramRun {
    insts: Vec<Option<[u32; 6]>>,
    constf: Vec<Option<[f32; 4]>>,
    consti: [Option<[i32; 3]>; 32],
    constb: [Option<bool>; 32],
    /// Instructions executed so far in this start_program.
    pub executed: u64,
    /// The element being run, when a slice ended in the middle of it.
    thread: Option<Box<Thread>>,
}

impl Default for ProgramRun {
    fn default() -> Self {
        Self {
            insts: vec![None; INSTRUCTION_SLOTS as usize],
            constf: vec![None; CONSTS],
            consti: [None; 32],
            constb: [None; 32],
            executed: 0,
            thread: None,
        }
    }
}

impl ProgramRun {
    /// Whether an element was left in the middle of its program by the last step.
    pub fn element_in_flight(&self) -> bool {
        self.thread.is_some()
    }
}

/// What [`Runner::step`] did.
#[derive(Debug, Clone, Copy)]
pub struct Step {
    /// Instructions executed by this call.
    pub instructions: u64,
    /// The element's result once its program has ended; `None` when the budget ran out first
    /// (the element continues at the next step).
    pub result: Option<ElementResult>,
}

/// Runs a program over elements, a bounded number of instructions at a time. Instructions,
/// constants and inputs are read through the engine's MC caches ([`Caches`], CTM guide
/// §2.1.4), which outlive the runner; what must survive between slices is in [`ProgramRun`].
pub struct Runner<'a> {
    mem: &'a mut dyn Memory,
    caches: &'a mut Caches,
    surf: &'a Surfaces,
    info: ProgramInfo,
    limits: Limits,
    run: &'a mut ProgramRun,
}

impl<'a> Runner<'a> {
    /// A runner continuing `run`, reading memory through `caches`.
    pub fn new(
        mem: &'a mut dyn Memory,
        caches: &'a mut Caches,
        surf: &'a Surfaces,
        info: ProgramInfo,
        limits: Limits,
        run: &'a mut ProgramRun,
    ) -> Self {
        Self { mem, caches, surf, info, limits, run }
    }

    /// Memory and the caches, for the engine's CO and output stage.
    pub fn parts(&mut self) -> (&mut dyn Memory, &mut Caches) {
        (&mut *self.mem, &mut *self.caches)
    }

    /// Instruction `pc`: word k at element (pc*6 + k, 0) of the instruction surface, 4-byte
    /// elements (judgement call: §2.1.1 gives (x, y) = (pc, 0), but an instruction is 24
    /// bytes, wider than any data format; 512*6 words still fit x[11:0]).
    fn fetch(&mut self, pc: u32) -> Result<[u32; 6], DppError> {
        if pc >= INSTRUCTION_SLOTS {
            return Err(DppError::PcOutOfRange);
        }
        if let Some(w) = self.run.insts[pc as usize] {
            return Ok(w);
        }
        let f = self.surf.inst.ok_or(DppError::InstructionsNotConfigured)?;
        let mut w = [0u32; 6];
        for (k, word) in w.iter_mut().enumerate() {
            let x = pc * WORDS_PER_INSTRUCTION + k as u32;
            let a = mc::translate(f.base, f.pitch, f.tiling.is_tiled(), 4, x, 0);
            *word = CachedMemory::new(&mut self.caches.inst, self.mem).read_u32(a)?;
        }
        self.run.insts[pc as usize] = Some(w);
        Ok(w)
    }

    fn const_f(&mut self, idx: usize) -> Result<[f32; 4], DppError> {
        if let Some(v) = self.run.constf[idx] {
            return Ok(v);
        }
        let f = self.surf.constf.ok_or(DppError::ConstantsNotConfigured("f"))?;
        let mut m = CachedMemory::new(&mut self.caches.constf, self.mem);
        let v = mc::read_element(&mut m, f.address(idx as u32, 0), f.format)?;
        self.run.constf[idx] = Some(v);
        Ok(v)
    }

    /// Integer constant (§3.5.3 INT_ADDR): red = iteration count, green = aL initial value,
    /// blue = aL increment. UINT8_4 elements are the raw bytes (blue signed, as in
    /// US_FC_INT_CONST KR/KG/KB); float formats are converted (saturating); UINT16_1 gives
    /// only the count.
    fn const_i(&mut self, idx: usize) -> Result<[i32; 3], DppError> {
        if let Some(v) = self.run.consti[idx] {
            return Ok(v);
        }
        let f = self.surf.consti.ok_or(DppError::ConstantsNotConfigured("i"))?;
        let mut m = CachedMemory::new(&mut self.caches.consti, self.mem);
        let raw = mc::read_raw(&mut m, f.address(idx as u32, 0), f.format)?;
        let fl = |i: usize| {
            f32::from_le_bytes([raw[4 * i], raw[4 * i + 1], raw[4 * i + 2], raw[4 * i + 3]]) as i32
        };
        let v = match f.format {
            DataFormat::Uint8x4 => [i32::from(raw[0]), i32::from(raw[1]), i32::from(raw[2] as i8)],
            DataFormat::Uint16x1 => [i32::from(u16::from_le_bytes([raw[0], raw[1]])), 0, 0],
            DataFormat::Float32x1 => [fl(0), 0, 0],
            DataFormat::Float32x2 => [fl(0), fl(1), 0],
            DataFormat::Float32x4 => [fl(0), fl(1), fl(2)],
        };
        self.run.consti[idx] = Some(v);
        Ok(v)
    }

    /// Boolean constant (§3.5.3 BOOL_ADDR): true when its element is not all zero bits.
    fn const_b(&mut self, idx: usize) -> Result<bool, DppError> {
        if let Some(v) = self.run.constb[idx] {
            return Ok(v);
        }
        let f = self.surf.constb.ok_or(DppError::ConstantsNotConfigured("b"))?;
        let mut m = CachedMemory::new(&mut self.caches.constb, self.mem);
        let raw = mc::read_raw(&mut m, f.address(idx as u32, 0), f.format)?;
        let v = raw[..f.format.bpe() as usize].iter().any(|b| *b != 0);
        self.run.constb[idx] = Some(v);
        Ok(v)
    }

    /// Input fetch (§3.4, §2.1.4): input `id` at element coordinates (s, t), 2x2 superfine
    /// for single-channel formats, through the input read cache shared by the 16 inputs.
    fn texel(&mut self, id: u32, s: f32, t: f32, unscaled: bool) -> Result<[f32; 4], DppError> {
        let f = self.surf.inputs[id as usize].ok_or(DppError::InputNotConfigured(id as u8))?;
        let w = f.pitch.max(1);
        let h = f.height.max(1);
        // §3.6.4: NaN coordinates become +Inf; denormals flush.
        let fix = |v: f32| if v.is_nan() { f32::INFINITY } else { ftz(v) };
        let (s, t) = (fix(s), fix(t));
        let (s, t) = if unscaled { (s, t) } else { (s * w as f32, t * h as f32) };
        // Judgement call: out-of-range coordinates clamp to the edge.
        let cx = |v: f32| (v.floor() as i64).clamp(0, i64::from(w) - 1) as u32;
        let cy = |v: f32| (v.floor() as i64).clamp(0, i64::from(h) - 1) as u32;
        let (x, y) = (cx(s), cy(t));
        let mut m = CachedMemory::new(&mut self.caches.input, self.mem);
        if f.tiling.is_superfine() && f.format.channels() == 1 {
            // (x+1, y), (x, y+1), (x+1, y+1), (x, y) → c0, c1, c2, c3
            let x1 = (x + 1).min(w - 1);
            let y1 = (y + 1).min(h - 1);
            let mut out = [0.0; 4];
            for (c, (px, py)) in [(x1, y), (x, y1), (x1, y1), (x, y)].into_iter().enumerate() {
                out[c] = mc::read_element(&mut m, f.address(px, py), f.format)?[0];
            }
            return Ok(out);
        }
        Ok(mc::read_element(&mut m, f.address(x, y), f.format)?)
    }

    /// Run the program for element (i, j) for at most `budget` instructions, starting it
    /// unless a previous step left it in flight. The processor starts with r0 = (i, j, 0, 0)
    /// and all other temporaries zero (judgement call: the guide does not say how a program
    /// learns its index pair; this makes an UNSCALED lookup at r0 fetch element (i, j)).
    pub fn step(&mut self, i: u32, j: u32, budget: u64) -> Result<Step, (u32, DppError)> {
        if self.info.uncached_output {
            return Err((self.info.start, DppError::Unsupported("uncached (UMRT) output")));
        }
        let mut t = match self.run.thread.take() {
            Some(t) => t,
            None => Box::new(self.thread(i, j)),
        };
        let mut instructions = 0;
        while instructions < budget {
            instructions += 1;
            if let Some(out) = self.instruction(&mut t)? {
                return Ok(Step { instructions, result: Some(out) });
            }
        }
        self.run.thread = Some(t);
        Ok(Step { instructions, result: None })
    }

    /// A processor at the program start for element (i, j).
    fn thread(&self, i: u32, j: u32) -> Thread {
        let mut t = Thread {
            pc: self.info.start,
            temps: [[0.0; 4]; TEMPS],
            pred: [false; 4],
            alu_result: false,
            active: true,
            branch_cnt: 0,
            loops: Vec::with_capacity(STACK_DEPTH),
            addrs: Vec::with_capacity(STACK_DEPTH),
            out: ElementResult {
                killed: false,
                outputs: [[0.0; 4]; 4],
                written: [0; 4],
                w: None,
                instructions: 0,
            },
        };
        t.temps[0] = [i as f32, j as f32, 0.0, 0.0];
        t
    }

    /// Execute the instruction at `t.pc`; the element's result when the program ends.
    fn instruction(&mut self, t: &mut Thread) -> Result<Option<ElementResult>, (u32, DppError)> {
        let pc = t.pc;
        if t.out.instructions >= self.limits.per_element {
            return Err((pc, DppError::InstructionBudgetExceeded));
        }
        if self.run.executed >= self.limits.per_program {
            return Err((pc, DppError::ProgramBudgetExceeded));
        }
        t.out.instructions += 1;
        self.run.executed += 1;
        let w = self.fetch(pc).map_err(|e| (pc, e))?;
        let cmn = w[0];
        let next = match cmn & 3 {
            0 | 1 => self.alu(t, &w, cmn & 3 == 1).map(|()| pc + 1),
            2 => self.flow(t, &w, pc),
            _ => self.tex(t, &w).map(|()| pc + 1),
        }
        .map_err(|e| (pc, e))?;
        if t.out.killed || pc == self.info.end || (flag(cmn, 8) && t.active) {
            return Ok(Some(t.out));
        }
        t.pc = next;
        Ok(None)
    }

    fn source(&mut self, t: &Thread, addr_word: u32, k: u32) -> Result<[f32; 4], DppError> {
        let a = field(addr_word, 10 * k, 8);
        let cst = flag(addr_word, 10 * k + 8);
        let rel = flag(addr_word, 10 * k + 9);
        let al = if rel { t.al() } else { 0 };
        if cst {
            // §3.3.1 constant N (+ aL): ADDR[7] = N / 128, ADDR[6:0] = N % 128.
            self.const_f((a as i32).wrapping_add(al).rem_euclid(CONSTS as i32) as usize)
        } else if a & 0x80 != 0 {
            // Inline constant; aL may not be added.
            Ok([inline_const(a & 0x7f); 4])
        } else {
            Ok(t.temps[(a as i32).wrapping_add(al).rem_euclid(TEMPS as i32) as usize])
        }
    }

    /// ALU / OUTPUT instruction (§3.3).
    fn alu(&mut self, t: &mut Thread, w: &[u32; 6], output: bool) -> Result<(), DppError> {
        let [cmn, rgb_addr, alpha_addr, rgb_inst, alpha_inst, rgba_inst] = *w;
        // Inputs: (sel, [swizzles], modifier).
        let rgb_in = [
            (
                field(rgb_inst, 0, 2),
                [field(rgb_inst, 2, 3), field(rgb_inst, 5, 3), field(rgb_inst, 8, 3)],
                field(rgb_inst, 11, 2),
            ),
            (
                field(rgb_inst, 13, 2),
                [field(rgb_inst, 15, 3), field(rgb_inst, 18, 3), field(rgb_inst, 21, 3)],
                field(rgb_inst, 24, 2),
            ),
            (
                field(rgba_inst, 12, 2),
                [field(rgba_inst, 14, 3), field(rgba_inst, 17, 3), field(rgba_inst, 20, 3)],
                field(rgba_inst, 23, 2),
            ),
        ];
        let alpha_in = [
            (field(alpha_inst, 12, 2), field(alpha_inst, 14, 3), field(alpha_inst, 17, 2)),
            (field(alpha_inst, 19, 2), field(alpha_inst, 21, 3), field(alpha_inst, 24, 2)),
            (field(rgba_inst, 25, 2), field(rgba_inst, 27, 3), field(rgba_inst, 30, 2)),
        ];
        // Which of src0-2 are referenced (srcp uses src0 and src1).
        let mut need = [false; 3];
        for sel in rgb_in.iter().map(|x| x.0).chain(alpha_in.iter().map(|x| x.0)) {
            if sel == 3 {
                need[0] = true;
                need[1] = true;
            } else {
                need[sel as usize] = true;
            }
        }
        // §3.3.3: srcN = {rgb_addrN->r, ->g, ->b, alpha_addrN->a}.
        let mut src = [[0.0f32; 4]; 4];
        for k in 0..3 {
            if need[k] {
                let rgb = self.source(t, rgb_addr, k as u32)?;
                let alpha = self.source(t, alpha_addr, k as u32)?;
                src[k] = [rgb[0], rgb[1], rgb[2], alpha[3]];
            }
        }
        // §3.3.2 presubtract.
        let srcp = |op: u32, a: f32, b: f32| -> f32 {
            let (a, b) = (f64::from(ftz(a)), f64::from(ftz(b)));
            let r = match op {
                0 => 1.0 - 2.0 * a,
                1 => b - a,
                2 => b + a,
                _ => 1.0 - a,
            };
            ftz(r as f32)
        };
        let (rop, aop) = (field(rgb_addr, 30, 2), field(alpha_addr, 30, 2));
        src[3] = [
            srcp(rop, src[0][0], src[1][0]),
            srcp(rop, src[0][1], src[1][1]),
            srcp(rop, src[0][2], src[1][2]),
            srcp(aop, src[0][3], src[1][3]),
        ];
        let rgb_vals: Vec<[f32; 3]> = rgb_in
            .iter()
            .map(|(sel, swz, m)| swz.map(|s| modify(swizzle(&src[*sel as usize], s), *m)))
            .collect();
        let alpha_vals: Vec<f32> = alpha_in
            .iter()
            .map(|(sel, s, m)| modify(swizzle(&src[*sel as usize], *s), *m))
            .collect();
        let (a, b, c) = (rgb_vals[0], rgb_vals[1], rgb_vals[2]);
        let (aa, ab, ac) = (alpha_vals[0], alpha_vals[1], alpha_vals[2]);
        let d = |v: f32| f64::from(ftz(v));

        let rgb_op = field(rgba_inst, 0, 4);
        let alpha_op = field(alpha_inst, 0, 4);
        // §3.3.4 dot products (DP4's fourth pair comes from the alpha unit's A and B inputs).
        let dot = match rgb_op {
            1 => Some(d(a[0]) * d(b[0]) + d(a[1]) * d(b[1]) + d(a[2]) * d(b[2])),
            2 => Some(d(a[0]) * d(b[0]) + d(a[1]) * d(b[1]) + d(a[2]) * d(b[2]) + d(aa) * d(ab)),
            3 => Some(d(a[0]) * d(b[0]) + d(a[1]) * d(b[1]) + d(c[2])),
            _ => None,
        };
        let trans = (8..=13).contains(&alpha_op).then(|| transcendental(alpha_op, aa));
        let scalar = |op: u32, a: f32, b: f32, c: f32| -> Option<Res> {
            Some(match op {
                0 => Res::Calc(d(a) * d(b) + d(c)),
                // MIN: A < B ? A : B; MAX: A > B ? A : B (§3.6.2: NaN or ±0 pairs give B).
                1 => Res::Sel(if ftz(a) < ftz(b) { a } else { b }),
                2 => Res::Sel(if ftz(a) > ftz(b) { a } else { b }),
                3 => Res::Sel(if ftz(c) > 0.5 { a } else { b }),
                4 => Res::Sel(if ftz(c) >= 0.0 { a } else { b }),
                5 => Res::Calc(d(a) - d(a).floor()),
                _ => return None,
            })
        };
        // Map unit opcodes to the shared scalar ops above.
        let rgb_res: [Res; 3] = match rgb_op {
            1..=3 => [Res::Calc(dot.unwrap_or(0.0)); 3],
            10 => match trans {
                Some(v) => [Res::Trans(v); 3],
                None => {
                    return Err(DppError::Reserved("OP_RGB_SOP without a transcendental alpha op"));
                }
            },
            11 => return Err(DppError::Unsupported("OP_RGB_MDH")),
            0 | 4 | 5 | 7 | 8 | 9 => {
                let op = match rgb_op {
                    0 => 0,
                    4 => 1,
                    5 => 2,
                    7 => 3,
                    8 => 4,
                    _ => 5,
                };
                let mut r = [Res::Calc(0.0); 3];
                for ch in 0..3 {
                    r[ch] = scalar(op, a[ch], b[ch], c[ch]).unwrap_or(Res::Calc(0.0));
                }
                r
            }
            _ => return Err(DppError::Reserved("RGB opcode")),
        };
        let alpha_res = match alpha_op {
            1 => match dot {
                Some(v) => Res::Calc(v),
                None => return Err(DppError::Reserved("OP_ALPHA_DP without an RGB dot product")),
            },
            8..=13 => Res::Trans(trans.unwrap_or(f32::NAN)),
            14 | 15 => return Err(DppError::Unsupported("OP_ALPHA_MDH/MDV")),
            0 | 2 | 3 | 5 | 6 | 7 => {
                let op = match alpha_op {
                    0 => 0,
                    2 => 1,
                    3 => 2,
                    5 => 3,
                    6 => 4,
                    _ => 5,
                };
                scalar(op, aa, ab, ac).unwrap_or(Res::Calc(0.0))
            }
            _ => return Err(DppError::Reserved("alpha opcode")),
        };
        // §3.3.5 output modifier and clamp.
        let (rgb_omod, alpha_omod) = (field(rgb_inst, 26, 3), field(alpha_inst, 26, 3));
        let (rgb_clamp, alpha_clamp) = (flag(cmn, 19), flag(cmn, 20));
        let mut rgb = [0.0f32; 3];
        for ch in 0..3 {
            rgb[ch] = finish(rgb_res[ch], rgb_omod, rgb_clamp)?;
        }
        let alpha = finish(alpha_res, alpha_omod, alpha_clamp)?;

        if !t.active && !flag(cmn, 7) {
            return Ok(()); // inactive and not WRITE_INACTIVE: nothing is written
        }
        // §3.3.6 predication with the old predicate bits.
        let rp = pred_mask(&t.pred, field(cmn, 3, 3), flag(cmn, 6))?;
        let asel = field(cmn, 25, 3);
        let ap = pred_mask(&t.pred, if asel == 1 { 5 } else { asel }, flag(cmn, 22))?[3];
        let (rgb_wmask, alpha_wmask) = (field(cmn, 11, 3), flag(cmn, 14));
        let (rgb_omask, alpha_omask) = (field(cmn, 15, 3), flag(cmn, 18));
        // §3.3.7 destinations.
        let dst = |addr: u32, rel: bool| {
            let al = if rel { t.al() } else { 0 };
            (addr as i32).wrapping_add(al).rem_euclid(TEMPS as i32) as usize
        };
        let rgb_dst = dst(field(rgba_inst, 4, 7), flag(rgba_inst, 11));
        let alpha_dst = dst(field(alpha_inst, 4, 7), flag(alpha_inst, 11));
        for ch in 0..3 {
            if rgb_wmask & (1 << ch) != 0 && rp[ch] {
                t.temps[rgb_dst][ch] = rgb[ch];
            }
        }
        if alpha_wmask && ap {
            t.temps[alpha_dst][3] = alpha;
        }
        let (rgb_target, alpha_target) = (field(rgb_inst, 29, 2), field(alpha_inst, 29, 2));
        if output {
            // §3.3.8: cached writes to render targets A-D (outputs 0-3).
            let o = rgb_target as usize;
            for ch in 0..3 {
                if rgb_omask & (1 << ch) != 0 && rp[ch] {
                    t.out.outputs[o][ch] = rgb[ch];
                    t.out.written[o] |= 1 << ch;
                }
            }
            let o = alpha_target as usize;
            if alpha_omask && ap {
                t.out.outputs[o][3] = alpha;
                t.out.written[o] |= 1 << 3;
            }
            if flag(alpha_inst, 31) && ap {
                t.out.w = Some(alpha); // W_OMASK: the conditional value
            }
        } else {
            // §3.3.9: OMASK is the predicate write mask, TARGET the comparison; the old
            // predicate does not mask this write.
            for ch in 0..3 {
                if rgb_omask & (1 << ch) != 0 {
                    t.pred[ch] = compare_zero(rgb[ch], rgb_target);
                }
            }
            if alpha_omask {
                t.pred[3] = compare_zero(alpha, alpha_target);
            }
        }
        // §3.3.10 ALU result.
        if flag(rgb_inst, 31) {
            let v = if flag(cmn, 21) { alpha } else { rgb[0] };
            t.alu_result = compare_zero(v, field(cmn, 23, 2));
        }
        Ok(())
    }

    /// Texture (input) instruction (§3.4).
    fn tex(&mut self, t: &mut Thread, w: &[u32; 6]) -> Result<(), DppError> {
        let [cmn, tex_inst, tex_addr, ..] = *w;
        let op = field(tex_inst, 22, 3);
        if op == 0 {
            return Ok(()); // NOP
        }
        if op == 7 {
            return Err(DppError::Reserved("texture op 7"));
        }
        if !t.active && !flag(cmn, 7) {
            return Ok(());
        }
        let al = t.al();
        let reg = |addr: u32, rel: bool| {
            (addr as i32).wrapping_add(if rel { al } else { 0 }).rem_euclid(TEMPS as i32) as usize
        };
        let src = t.temps[reg(field(tex_addr, 0, 7), flag(tex_addr, 7))];
        let rp = pred_mask(&t.pred, field(cmn, 3, 3), flag(cmn, 6))?;
        let asel = field(cmn, 25, 3);
        let ap = pred_mask(&t.pred, if asel == 1 { 5 } else { asel }, flag(cmn, 22))?[3];
        let mut mask = [false; 4];
        for ch in 0..3 {
            mask[ch] = field(cmn, 11, 3) & (1 << ch) != 0 && rp[ch];
        }
        mask[3] = flag(cmn, 14) && ap;
        if op == 2 {
            // TEXKILL: swizzles ignored; write masks and predication select the channels.
            if (0..4).any(|ch| mask[ch] && ftz(src[ch]) < 0.0) {
                t.out.killed = true;
            }
            return Ok(());
        }
        let coord = |k: u32| src[field(tex_addr, 8 + 2 * k, 2) as usize];
        let (mut s, mut tt) = (coord(0), coord(1));
        if op == 3 {
            // PROJ: S/Q, T/Q
            let q = coord(3);
            s /= q;
            tt /= q;
        }
        // LD, PROJ, and LODBIAS/LOD/DXDY (no mip levels here: the same lookup).
        let texel = self.texel(field(tex_inst, 16, 4), s, tt, flag(tex_inst, 27))?;
        let dst = reg(field(tex_addr, 16, 7), flag(tex_addr, 23));
        for (ch, m) in mask.iter().enumerate() {
            if *m {
                t.temps[dst][ch] = texel[field(tex_addr, 24 + 2 * ch as u32, 2) as usize];
            }
        }
        Ok(())
    }

    /// Flow control instruction (§3.5): returns the next program counter.
    fn flow(&mut self, t: &mut Thread, w: &[u32; 6], pc: u32) -> Result<u32, DppError> {
        let [cmn, _, fc_inst, fc_addr, ..] = *w;
        let op = field(fc_inst, 0, 3);
        let b_else = flag(fc_inst, 4);
        let jump_any = flag(fc_inst, 5);
        let a_op = field(fc_inst, 6, 2);
        let jump_func = field(fc_inst, 8, 8);
        let pop_cnt = field(fc_inst, 16, 5) as i32;
        let (b_op0, b_op1) = (field(fc_inst, 24, 2), field(fc_inst, 26, 2));
        let full = self.info.full_flow_control;
        if !full && (op != 0 || a_op != 0) {
            return Err(DppError::NeedsFullFlowControl);
        }
        if a_op == 3 || b_op0 == 3 || b_op1 == 3 {
            return Err(DppError::Reserved("A_OP/B_OP value 3"));
        }
        // §3.5.1: flow control predication must replicate one bit (or be NONE).
        let pred = match field(cmn, 3, 3) {
            0 => false,
            1 => return Err(DppError::FlowControlPredicate),
            s @ 2..=5 => t.pred[s as usize - 2] ^ flag(cmn, 6),
            _ => return Err(DppError::Reserved("predicate select 6/7")),
        };
        // The boolean is only fetched when JUMP_FUNC depends on it.
        let boolean = if (jump_func & 0x55) << 1 != jump_func & 0xaa {
            self.const_b(field(fc_addr, 0, 5) as usize)?
        } else {
            false
        };
        // B_ELSE first: active → inactive (counter 0, "wants to jump"); counter 0 → active.
        let mut else_deactivated = false;
        if b_else {
            if t.active {
                t.active = false;
                t.branch_cnt = 0;
                else_deactivated = true;
            } else if t.branch_cnt == 0 {
                t.active = true;
            }
        }
        let index = (u32::from(t.alu_result) << 2) | (u32::from(pred) << 1) | u32::from(boolean);
        let want = else_deactivated || (t.active && (jump_func >> index) & 1 != 0);
        // A group of one: its wish when active; with no active processor, JUMP_ANY=0 jumps
        // (universal over nothing) and JUMP_ANY=1 does not.
        let mut jump = if t.active { want } else { !jump_any };
        // Branch-inactive processors inhibit BREAK and CONTINUE.
        if matches!(op, 5..=7) && !t.active {
            jump = false;
        }
        match op {
            1 | 3 => {
                // LOOP / REP: iteration count 0 → jump; else push if staying.
                let [count, init, inc] = self.const_i(field(fc_addr, 8, 5) as usize)?;
                if count <= 0 {
                    jump = true;
                } else if !jump {
                    if t.loops.len() >= STACK_DEPTH {
                        return Err(DppError::LoopStackOverflow);
                    }
                    // REP keeps the enclosing loop's aL visible (§3.5.2).
                    let (al, inc) = if op == 1 { (init, inc) } else { (t.al(), 0) };
                    t.loops.push(LoopFrame { remaining: count as u32, al, inc });
                }
            }
            2 | 4 => {
                // ENDLOOP / ENDREP: count down; at zero never jump; jump → next iteration
                // (ENDLOOP adds the increment to aL), stay → pop.
                let frame = t.loops.last_mut().ok_or(DppError::LoopStackUnderflow)?;
                frame.remaining = frame.remaining.saturating_sub(1);
                if frame.remaining == 0 {
                    jump = false;
                }
                if jump {
                    if op == 2 {
                        frame.al = frame.al.wrapping_add(frame.inc);
                    }
                } else {
                    t.loops.pop();
                }
            }
            // BREAKLOOP / BREAKREP: pop if jump.
            5 | 6 if jump && t.loops.pop().is_none() => {
                return Err(DppError::LoopStackUnderflow);
            }
            _ => {} // JUMP; CONTINUE (jumps to the loop end, which counts the iteration)
        }
        // Branch counter operations (§3.5.3 B_OP0 if stay, B_OP1 if jump).
        let max = if full { 31 } else { 3 };
        match if jump { b_op1 } else { b_op0 } {
            1 => {
                if !t.active {
                    t.branch_cnt -= pop_cnt;
                    if t.branch_cnt < 0 {
                        t.active = true;
                        t.branch_cnt = 0;
                    }
                }
            }
            2 => {
                if !t.active {
                    t.branch_cnt += 1;
                    if t.branch_cnt > max {
                        return Err(DppError::BranchCounterOverflow);
                    }
                } else if want != jump {
                    t.active = false;
                    t.branch_cnt = 0;
                }
            }
            _ => {}
        }
        // The ALU result is consumed by the first flow control instruction (§3.3.10).
        t.alu_result = false;
        if !jump {
            return Ok(pc + 1);
        }
        let jump_addr = field(fc_addr, 16, 9);
        let target = if flag(fc_addr, 31) {
            jump_addr
        } else {
            jump_addr.wrapping_add(self.info.code_offset)
        };
        match a_op {
            1 => t.addrs.pop().ok_or(DppError::AddressStackUnderflow),
            2 => {
                if t.addrs.len() >= STACK_DEPTH {
                    return Err(DppError::AddressStackOverflow);
                }
                t.addrs.push(pc + 1); // the return address
                Ok(target)
            }
            _ => Ok(target),
        }
    }
}
