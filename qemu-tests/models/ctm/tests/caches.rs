//! The MC caches (CTM guide §2.1.4) and the pipelining rule (§2.2), tested from the guide's
//! text: every invalidate and flush command makes an observable difference, and the
//! commands Table 3 marks as not pipelined need a wait_for_idle after a start_program.
mod common;
use common::*;
use ctm_model::{CtmEngine, CtmError, CtmErrorKind, ExecSummary, FlatMemory, Memory, op};

/// One engine and its memory, fed several command buffers in a row.
struct Gpu {
    e: CtmEngine,
    m: FlatMemory,
}

impl Gpu {
    fn new() -> Self {
        Self { e: CtmEngine::new(), m: mem() }
    }
    fn exec(&mut self, cmds: &[Vec<u32>]) -> Result<ExecSummary, CtmError> {
        let words: Vec<u32> = cmds.iter().flatten().copied().collect();
        self.e.execute(&words, &mut self.m)
    }
    fn ok(&mut self, cmds: &[Vec<u32>]) {
        self.exec(cmds).unwrap();
    }
    fn f32s(&mut self, base: u32, n: u32) -> Vec<f32> {
        (0..n).map(|k| self.m.read_f32(base + 4 * k).unwrap()).collect()
    }
    fn fill(&mut self, base: u32, values: &[f32]) {
        for (k, v) in values.iter().enumerate() {
            self.m.write_f32(base + 4 * k as u32, *v).unwrap();
        }
    }
}

fn c(cmd: [u32; 2]) -> Vec<u32> {
    cmd.to_vec()
}

/// out0 = input `id` at (i, j): TEX r3 = in[r0.xy] (unscaled), OUTPUT r3.
fn copy(id: u32) -> [[u32; 6]; 2] {
    [tex(id, 0, 3), out_r3()]
}

fn set_consts(g: &mut Gpu, c0: [f32; 4]) {
    g.fill(CONST_BASE, &c0);
    g.fill(CONST_BASE + 16, &[1.0; 4]);
    g.fill(CONST_BASE + 32, &[0.0; 4]);
}

/// Every invalidate except `keep`'s: issuing them must not refresh `keep`'s cache.
fn other_invalidates(keep: [u32; 2]) -> Vec<Vec<u32>> {
    [INV_INST, INV_CONSTF, INV_CONSTI, INV_CONSTB, INV_COND_OUT, INV_INP]
        .into_iter()
        .filter(|x| *x != keep)
        .map(c)
        .collect()
}

fn then(mut a: Vec<Vec<u32>>, b: &[[u32; 2]]) -> Vec<Vec<u32>> {
    a.extend(b.iter().copied().map(c));
    a
}

// §2.1.4 Input Parameters: "The input read cache ... must be invalidated to guarantee correct
// reading of data that has changed in memory. The input read cache is invalidated with the
// inv_inp_cache command."
#[test]
fn input_cache_serves_old_data_until_inv_inp_cache() {
    let mut g = Gpu::new();
    load_program(&mut g.m, &copy(0));
    g.fill(IN0, &[0.0, 1.0, 2.0, 3.0]);
    let setup = vec![
        set_inst_fmt(),
        set_inp(0, IN0, fmt(64, 0, F32X1), 1),
        set_out(0, OUT0, fmt(64, 0, F32X1), 1),
        set_domain(0, 0, 3, 0),
    ];
    g.ok(&then(setup, &[INV_INP, START, FLUSH_OUT, WAIT_FOR_IDLE]));
    assert_eq!(g.f32s(OUT0, 4), [0.0, 1.0, 2.0, 3.0]);
    // The host changes the input, and clears the output to see it rewritten.
    g.fill(IN0, &[10.0, 11.0, 12.0, 13.0]);
    g.fill(OUT0, &[-1.0; 4]);
    // Without inv_inp_cache (the other invalidates do not help): the old input.
    g.ok(&then(other_invalidates(INV_INP), &[START, FLUSH_OUT, WAIT_FOR_IDLE]));
    assert_eq!(g.f32s(OUT0, 4), [0.0, 1.0, 2.0, 3.0]);
    // With it: the new input.
    g.ok(&[c(INV_INP), c(START), c(FLUSH_OUT), c(WAIT_FOR_IDLE)]);
    assert_eq!(g.f32s(OUT0, 4), [10.0, 11.0, 12.0, 13.0]);
    assert_eq!(g.e.cache_ops.inv_inp, 2);
}

// §2.1.4: "The input read cache is shared among all 16 program inputs".
#[test]
fn input_cache_is_shared_by_the_16_inputs() {
    let mut g = Gpu::new();
    // Program A (slots 0-1) reads input 0, program B (slots 2-3) input 15; both map IN0.
    load_program(&mut g.m, &[copy(0), copy(15)].concat());
    g.fill(IN0, &[0.0, 1.0, 2.0, 3.0]);
    g.ok(&[
        set_inst_fmt(),
        set_inp(0, IN0, fmt(64, 0, F32X1), 1),
        set_inp(15, IN0, fmt(64, 0, F32X1), 1),
        set_out(0, OUT0, fmt(64, 0, F32X1), 1),
        set_domain(0, 0, 3, 0),
        c(INV_INP),
        c(START),
        c(FLUSH_OUT),
        c(WAIT_FOR_IDLE),
    ]);
    assert_eq!(g.f32s(OUT0, 4), [0.0, 1.0, 2.0, 3.0]);
    g.fill(IN0, &[10.0, 11.0, 12.0, 13.0]);
    g.e.program.start = 2;
    // Input 15's reads hit the lines input 0's reads brought in.
    g.ok(&[c(START), c(FLUSH_OUT), c(WAIT_FOR_IDLE)]);
    assert_eq!(g.f32s(OUT0, 4), [0.0, 1.0, 2.0, 3.0]);
    g.ok(&[c(INV_INP), c(START), c(FLUSH_OUT), c(WAIT_FOR_IDLE)]);
    assert_eq!(g.f32s(OUT0, 4), [10.0, 11.0, 12.0, 13.0]);
}

// Model choice (cache.rs): lines of LINE_BYTES, tagged by MC address, filled whole.
#[test]
fn input_cache_fills_whole_lines() {
    assert_eq!(ctm_model::cache::LINE_BYTES, 64);
    let mut g = Gpu::new();
    load_program(&mut g.m, &copy(0));
    let init: Vec<f32> = (0..17).map(|k| k as f32).collect();
    g.fill(IN0, &init);
    g.ok(&[
        set_inst_fmt(),
        set_inp(0, IN0, fmt(64, 0, F32X1), 1),
        set_out(0, OUT0, fmt(64, 0, F32X1), 1),
        set_domain(0, 0, 0, 0),
        c(INV_INP),
        c(START),
        c(FLUSH_OUT),
        c(WAIT_FOR_IDLE),
    ]);
    // Reading element 0 brought in IN0..IN0+64 (elements 0-15), not element 16.
    let input = &g.e.caches().input;
    assert!(input.holds(IN0 + 4) && input.holds(IN0 + 63) && !input.holds(IN0 + 64));
    g.m.write_f32(IN0 + 4, 101.0).unwrap();
    g.m.write_f32(IN0 + 64, 116.0).unwrap();
    g.ok(&[set_domain(0, 0, 16, 0), c(START), c(FLUSH_OUT), c(WAIT_FOR_IDLE)]);
    let out = g.f32s(OUT0, 17);
    assert_eq!((out[1], out[16]), (1.0, 116.0));
}

// §2.1.4 Output Parameters: "The output write cache ... must be flushed to guarantee that any
// data written by the processors are placed in memory. The output write cache is flushed with
// the flush_out_cache command."
#[test]
fn outputs_reach_memory_only_at_flush_out_cache() {
    let mut g = Gpu::new();
    load_program(&mut g.m, &copy(0));
    g.fill(IN0, &[0.0, 1.0, 2.0, 3.0]);
    g.m.write_words(OUT0, &[0xdead_beef; 4]).unwrap();
    g.ok(&[
        set_inst_fmt(),
        set_inp(0, IN0, fmt(64, 0, F32X1), 1),
        set_out(0, OUT0, fmt(64, 0, F32X1), 1),
        set_domain(0, 0, 3, 0),
        c(INV_INP),
        c(START),
        c(WAIT_FOR_IDLE),
    ]);
    // wait_for_idle is not a flush: the 4 outputs are still pending in the cache.
    assert_eq!(g.f32s(OUT0, 4).iter().map(|v| v.to_bits()).collect::<Vec<_>>(), [0xdead_beef; 4]);
    assert_eq!(g.e.pending_output_bytes(), 16);
    assert!(g.e.caches().output.is_dirty(OUT0 + 12));
    // The flush, in a later command buffer, puts them in memory.
    g.ok(&[c(FLUSH_OUT)]);
    assert_eq!(g.f32s(OUT0, 4), [0.0, 1.0, 2.0, 3.0]);
    assert_eq!(g.e.pending_output_bytes(), 0);
    assert_eq!(g.e.cache_ops.flush_out, 1);
}

// §2.1.4: with set_out_mask, "If the writemask for a given output channel is 0, then its values
// are not updated": two masked programs before one flush update disjoint channels.
#[test]
fn masked_output_writes_merge_in_the_output_cache() {
    let mut g = Gpu::new();
    load_program(&mut g.m, &[CONST_OUT]);
    set_consts(&mut g, [1.0, 2.0, 3.0, 4.0]);
    g.m.write_words(OUT0, &[0xdead; 4]).unwrap();
    g.ok(&[
        set_inst_fmt(),
        set_constf(F32X4),
        set_out(0, OUT0, fmt(64, 0, F32X4), 1),
        vec![0xC000_1900, 0x5],
        c(START),
    ]);
    assert_eq!(g.e.pending_output_bytes(), 8);
    set_consts(&mut g, [10.0, 20.0, 30.0, 40.0]);
    g.ok(&[c(INV_CONSTF), vec![0xC000_1900, 0xA], c(START), c(WAIT_FOR_IDLE)]);
    assert_eq!(g.e.pending_output_bytes(), 16);
    let words =
        |g: &mut Gpu| (0..4).map(|k| g.m.read_u32(OUT0 + 4 * k).unwrap()).collect::<Vec<_>>();
    assert_eq!(words(&mut g), [0xdead; 4]);
    g.ok(&[c(FLUSH_OUT)]);
    assert_eq!(g.f32s(OUT0, 4), [1.0, 20.0, 3.0, 40.0]);
    // A single masked channel never touches its neighbours' bytes.
    g.m.write_words(OUT0, &[0xdead; 4]).unwrap();
    g.ok(&[vec![0xC000_1900, 0x2], c(START), c(FLUSH_OUT)]);
    assert_eq!(words(&mut g), [0xdead, 20f32.to_bits(), 0xdead, 0xdead]);
}

// §2.1.4 Floating Point, Integer, and Boolean Constant Parameters: "The constant read caches
// must be invalidated to guarantee that data that has changed in memory is properly read."
#[test]
fn constf_cache_serves_old_constants_until_inv_constf_cache() {
    let mut g = Gpu::new();
    load_program(&mut g.m, &[CONST_OUT]);
    set_consts(&mut g, [1.0, 2.0, 3.0, 4.0]);
    g.ok(&[
        set_inst_fmt(),
        set_constf(F32X4),
        set_out(0, OUT0, fmt(64, 0, F32X4), 1),
        c(START),
        c(FLUSH_OUT),
    ]);
    assert_eq!(g.f32s(OUT0, 4), [1.0, 2.0, 3.0, 4.0]);
    set_consts(&mut g, [5.0, 6.0, 7.0, 8.0]);
    g.ok(&then(other_invalidates(INV_CONSTF), &[START, FLUSH_OUT]));
    assert_eq!(g.f32s(OUT0, 4), [1.0, 2.0, 3.0, 4.0]);
    g.ok(&[c(INV_CONSTF), c(START), c(FLUSH_OUT)]);
    assert_eq!(g.f32s(OUT0, 4), [5.0, 6.0, 7.0, 8.0]);
}

/// The §3.5 loop of the engine tests: r3 += c[aL].r, int constant 0 = (count, 0, 1).
fn loop_setup(g: &mut Gpu, count: u32) -> Vec<Vec<u32>> {
    let prog = [
        fc(0, 1, 0, 0, 0, 0, 0, 0, 0, 3),
        add_r3((1 << 28) | (1 << 29)),
        fc(0, 2, 0xff, 1, 0, 0, 0, 0, 0, 1),
        out_r3(),
    ];
    load_program(&mut g.m, &prog);
    g.m.write_u32(ICONST_BASE, 0x0001_0000 | count).unwrap();
    g.m.write_f32(CONST_BASE, 1.0).unwrap();
    g.m.write_f32(CONST_BASE + 16, 10.0).unwrap();
    g.m.write_f32(CONST_BASE + 32, 100.0).unwrap();
    vec![
        set_inst_fmt(),
        set_constf(F32X4),
        vec![0xC001_0F00, ICONST_BASE, fmt(32, 0, U8X4)],
        set_out(0, OUT0, fmt(64, 0, F32X4), 1),
    ]
}

#[test]
fn consti_cache_serves_old_loop_counts_until_inv_consti_cache() {
    let mut g = Gpu::new();
    let setup = loop_setup(&mut g, 3);
    g.ok(&then(setup, &[START, FLUSH_OUT]));
    assert_eq!(g.m.read_f32(OUT0).unwrap(), 111.0);
    g.m.write_u32(ICONST_BASE, 0x0001_0002).unwrap(); // count 2
    g.ok(&then(other_invalidates(INV_CONSTI), &[START, FLUSH_OUT]));
    assert_eq!(g.m.read_f32(OUT0).unwrap(), 111.0);
    g.ok(&[c(INV_CONSTI), c(START), c(FLUSH_OUT)]);
    assert_eq!(g.m.read_f32(OUT0).unwrap(), 11.0);
}

#[test]
fn constb_cache_serves_old_booleans_until_inv_constb_cache() {
    let mut g = Gpu::new();
    // Jump over the add (r3 += c1 = 1) iff boolean 0 (0xaa: jump iff the boolean).
    let prog = [fc(0, 0, 0xaa, 0, 0, 0, 0, 0, 0, 2), add_r3((1 << 20) | (1 << 28)), out_r3()];
    load_program(&mut g.m, &prog);
    g.m.write_f32(BCONST_BASE, 1.0).unwrap();
    g.m.write_f32(CONST_BASE + 16, 1.0).unwrap();
    g.ok(&[
        set_inst_fmt(),
        set_constf(F32X4),
        vec![0xC001_1000, BCONST_BASE, fmt(32, 0, F32X1)],
        set_out(0, OUT0, fmt(64, 0, F32X4), 1),
        c(START),
        c(FLUSH_OUT),
    ]);
    assert_eq!(g.m.read_f32(OUT0).unwrap(), 0.0);
    g.m.write_f32(BCONST_BASE, 0.0).unwrap();
    g.ok(&then(other_invalidates(INV_CONSTB), &[START, FLUSH_OUT]));
    assert_eq!(g.m.read_f32(OUT0).unwrap(), 0.0);
    g.ok(&[c(INV_CONSTB), c(START), c(FLUSH_OUT)]);
    assert_eq!(g.m.read_f32(OUT0).unwrap(), 1.0);
}

// §2.1.4 Instruction Parameters: "The instruction read cache must be invalidated to guarantee
// that data that has changed in memory is properly read."
#[test]
fn inst_cache_runs_the_old_program_until_inv_inst_cache() {
    let mut g = Gpu::new();
    load_program(&mut g.m, &[CONST_OUT]);
    set_consts(&mut g, [1.0, 2.0, 3.0, 4.0]);
    g.ok(&[
        set_inst_fmt(),
        set_constf(F32X4),
        set_out(0, OUT0, fmt(64, 0, F32X4), 1),
        c(START),
        c(FLUSH_OUT),
    ]);
    assert_eq!(g.m.read_f32(OUT0).unwrap(), 1.0);
    // A new program at the same place: the same, with RGB OMOD x2 (ALU_RGB_INST 28:26 = 1).
    let mut doubled = CONST_OUT;
    doubled[3] |= 1 << 26;
    load_program(&mut g.m, &[doubled]);
    g.ok(&then(other_invalidates(INV_INST), &[START, FLUSH_OUT]));
    assert_eq!(g.m.read_f32(OUT0).unwrap(), 1.0);
    g.ok(&[c(INV_INST), c(START), c(FLUSH_OUT)]);
    assert_eq!(g.m.read_f32(OUT0).unwrap(), 2.0);
}

/// Conditional output at the DPP (§2.1.3): out0 (FLOAT32_1) = 7 where `v op b` passes, b the
/// FLOAT32_1 conditional buffer at COND, v = cond_val (the program writes no W).
fn cond_setup(g: &mut Gpu, write_back: bool) -> Vec<Vec<u32>> {
    load_program(&mut g.m, &[CONST_OUT]);
    set_consts(g, [7.0; 4]);
    g.fill(COND, &[0.0, 1.0, 2.0, 3.0, 4.0]);
    vec![
        set_inst_fmt(),
        set_constf(F32X4),
        set_out(0, OUT0, fmt(64, 0, F32X1), 1),
        vec![0xC002_0D00, COND, fmt(64, 0, F32X1), 1],
        set_domain(0, 0, 4, 0),
        vec![0xC000_1C00, 0],
        vec![0xC000_1A00, u32::from(write_back)],
    ]
}

/// set_cond_val v, set_cond_test `test`, start_program, flush_out_cache: the passing elements.
fn cond_pass(g: &mut Gpu, v: f32, test: u32, extra: &[[u32; 2]]) -> Vec<bool> {
    g.fill(OUT0, &[0.0; 5]);
    let mut cmds: Vec<Vec<u32>> = extra.iter().copied().map(c).collect();
    cmds.push(vec![0xC000_0600, v.to_bits()]);
    cmds.push(vec![0xC000_1B00, test]);
    cmds.extend([c(START), c(FLUSH_OUT), c(WAIT_FOR_IDLE)]);
    g.ok(&cmds);
    g.f32s(OUT0, 5).iter().map(|o| *o == 7.0).collect()
}

const GE: u32 = 4;
const EQ: u32 = 3;
const ALWAYS: u32 = 7;

// §2.1.4 Conditional Operation Parameters: "The conditional output cache must be flushed to
// guarantee that any data written by the conditional output block is placed in memory."
#[test]
fn cond_output_writes_reach_memory_only_at_flush_cond_out_cache() {
    let mut g = Gpu::new();
    let setup = cond_setup(&mut g, true);
    g.ok(&setup);
    // 2 >= b passes for b = 0, 1, 2, and the CO writes v = 2 there (§2.1.3).
    assert_eq!(cond_pass(&mut g, 2.0, GE, &[]), [true, true, true, false, false]);
    assert_eq!(g.f32s(COND, 5), [0.0, 1.0, 2.0, 3.0, 4.0]);
    assert_eq!(g.e.pending_cond_out_bytes(), 12);
    // flush_out_cache is not flush_cond_out_cache.
    g.ok(&[c(FLUSH_OUT)]);
    assert_eq!(g.f32s(COND, 5), [0.0, 1.0, 2.0, 3.0, 4.0]);
    g.ok(&[c(FLUSH_COND_OUT)]);
    assert_eq!(g.f32s(COND, 5), [2.0, 2.0, 2.0, 3.0, 4.0]);
    assert_eq!(g.e.pending_cond_out_bytes(), 0);
}

// §2.1.4: CO read requests are satisfied from the conditional output cache when the data is
// there — including data the CO itself wrote and has not flushed.
#[test]
fn cond_output_reads_see_the_cos_own_pending_writes() {
    let mut g = Gpu::new();
    let setup = cond_setup(&mut g, true);
    g.ok(&setup);
    assert_eq!(cond_pass(&mut g, 2.0, GE, &[]), [true, true, true, false, false]);
    // Memory still says b = 0, 1, 2, 3, 4 (2 == b only at 2); the cache says 2, 2, 2, 3, 4.
    assert_eq!(cond_pass(&mut g, 2.0, EQ, &[]), [true, true, true, false, false]);
    assert_eq!(g.f32s(COND, 5), [0.0, 1.0, 2.0, 3.0, 4.0]);
}

// §2.1.4: "The conditional output cache must be invalidated to guarantee that data that has
// changed in memory is properly read. The cache can be invalidated with the
// inv_cond_out_cache command."
#[test]
fn cond_output_cache_serves_the_old_buffer_until_inv_cond_out_cache() {
    let mut g = Gpu::new();
    let setup = cond_setup(&mut g, false);
    g.ok(&setup);
    assert_eq!(cond_pass(&mut g, 3.0, EQ, &[]), [false, false, false, true, false]);
    g.m.write_f32(COND + 16, 3.0).unwrap(); // the host changes b[4]
    let others = [INV_INST, INV_CONSTF, INV_CONSTI, INV_CONSTB, INV_INP, FLUSH_COND_OUT];
    assert_eq!(cond_pass(&mut g, 3.0, EQ, &others), [false, false, false, true, false]);
    assert_eq!(cond_pass(&mut g, 3.0, EQ, &[INV_COND_OUT]), [false, false, false, true, true]);
}

// Model choice (cache.rs): inv_cond_out_cache drops clean data only. §2.1.4 gives the
// invalidate the purpose "that data that has changed in memory is properly read" and the
// flush the purpose "that any data written by the conditional output block is placed in
// memory"; nothing says invalidating discards writes.
#[test]
fn pending_cond_output_writes_survive_inv_cond_out_cache() {
    let mut g = Gpu::new();
    let setup = cond_setup(&mut g, true);
    g.ok(&setup);
    assert_eq!(cond_pass(&mut g, 9.0, ALWAYS, &[]), [true; 5]);
    g.ok(&[c(INV_COND_OUT)]);
    assert_eq!(g.e.pending_cond_out_bytes(), 20);
    g.ok(&[c(FLUSH_COND_OUT), c(WAIT_FOR_IDLE)]);
    assert_eq!(g.f32s(COND, 5), [9.0; 5]);
}

// The caches are separate (§2.1.4 has separate flush and invalidate commands): data one pass
// writes (and flushes) is read back by the next pass only after inv_inp_cache, if the input
// cache held the old contents.
#[test]
fn flushed_outputs_are_read_as_inputs_only_after_inv_inp_cache() {
    let mut g = Gpu::new();
    // Slots 0-1: copy input 0 (the buffer at IN1) to OUT0; slot 2: write c0 to output 0.
    load_program(&mut g.m, &[copy(0)[0], copy(0)[1], CONST_OUT]);
    set_consts(&mut g, [5.0; 4]);
    let copy_pass = |g: &mut Gpu, inv: bool| {
        g.e.program.start = 0;
        let mut cmds = vec![c(WAIT_FOR_IDLE), set_out(0, OUT0, fmt(64, 0, F32X1), 1)];
        if inv {
            cmds.push(c(INV_INP));
        }
        cmds.extend([c(START), c(FLUSH_OUT), c(WAIT_FOR_IDLE)]);
        g.ok(&cmds);
        g.f32s(OUT0, 4)
    };
    g.ok(&[
        set_inst_fmt(),
        set_constf(F32X4),
        set_inp(0, IN1, fmt(64, 0, F32X1), 1),
        set_domain(0, 0, 3, 0),
    ]);
    assert_eq!(copy_pass(&mut g, true), [0.0; 4]);
    // Pass 2 writes 5s to IN1 and flushes them: they are in memory.
    g.e.program.start = 2;
    g.ok(&[set_out(0, IN1, fmt(64, 0, F32X1), 1), c(START), c(FLUSH_OUT), c(WAIT_FOR_IDLE)]);
    assert_eq!(g.f32s(IN1, 4), [5.0; 4]);
    // Reading them back needs inv_inp_cache.
    assert_eq!(copy_pass(&mut g, false), [0.0; 4]);
    assert_eq!(copy_pass(&mut g, true), [5.0; 4]);
}

/// A one-instruction program that outputs nothing.
fn idle_program(g: &mut Gpu) {
    load_program(&mut g.m, &[[OUT_ALL_LAST & !(7 << 15) & !(1 << 18), 0, 0, 0, 0, 0]]);
}

/// One of each Table 3 command marked "Pipelined: no", with valid parameters.
fn non_pipelined() -> Vec<Vec<u32>> {
    vec![
        vec![0xC001_0500, PERF],
        set_inst_fmt(),
        set_inp(3, IN0, fmt(64, 0, F32X1), 1),
        set_out(1, OUT0, fmt(64, 0, F32X1), 1),
        vec![0xC002_0D00, COND, fmt(64, 0, F32X1), 1],
        set_constf(F32X4),
        vec![0xC001_0F00, ICONST_BASE, fmt(32, 0, U8X4)],
        vec![0xC001_1000, BCONST_BASE, fmt(32, 0, F32X1)],
    ]
}

// §2.2: "Some commands will result in undefined behavior if a program is currently executing
// on the processor array. Such a command must follow a wait_for_idle command and precede any
// subsequent start_program command in the command buffer to be predictable."
#[test]
fn non_pipelined_commands_need_wait_for_idle_after_start_program() {
    let mut words: Vec<u32> = non_pipelined().iter().map(|c| c[0]).collect();
    words.sort_unstable();
    let mut table = op::NOT_PIPELINED.to_vec();
    table.sort_unstable();
    assert_eq!(words, table);
    for cmd in non_pipelined() {
        // In the same buffer: refused at its offset (set_inst_fmt 3 words + start 2).
        let mut g = Gpu::new();
        idle_program(&mut g);
        let err = g.exec(&[set_inst_fmt(), c(START), cmd.clone()]).unwrap_err();
        assert_eq!((err.offset, err.kind), (5, CtmErrorKind::NotIdle { word: cmd[0] }));
        assert_eq!(err.code(), 0x106);
        assert!(err.to_string().contains("wait_for_idle"), "{err}");
        assert!(g.e.busy());
        // In the next buffer: still refused (the stream continues), without any effect.
        let before = format!("{:?}", g.e.state);
        let err = g.exec(std::slice::from_ref(&cmd)).unwrap_err();
        assert_eq!((err.offset, err.kind), (0, CtmErrorKind::NotIdle { word: cmd[0] }));
        assert_eq!(format!("{:?}", g.e.state), before);
        // After wait_for_idle: fine.
        g.ok(&[c(WAIT_FOR_IDLE), cmd.clone()]);
        assert!(!g.e.busy());
        // Before any start_program, and between wait_for_idle and the next one: fine.
        let mut g = Gpu::new();
        idle_program(&mut g);
        g.ok(&[cmd.clone(), set_inst_fmt(), c(START), c(WAIT_FOR_IDLE), cmd.clone()]);
        // ... but not after the next start_program.
        let err = g.exec(&[c(START), cmd.clone()]).unwrap_err();
        assert_eq!((err.offset, err.kind), (2, CtmErrorKind::NotIdle { word: cmd[0] }));
        // A reset leaves nothing executing.
        g.e.reset();
        assert!(!g.e.busy());
        g.ok(std::slice::from_ref(&cmd));
    }
}

// §2.2: "Other commands are pipelined within CTM, and can be issued at any time."
#[test]
fn pipelined_commands_may_follow_start_program() {
    let pipelined: Vec<Vec<u32>> = vec![
        vec![0xC001_0200, 1],
        vec![0xC000_0300, 0],
        vec![0xC000_0400, 0],
        vec![0xC000_0600, 0],
        set_domain(0, 0, 0, 0),
        c(START),
        c(INV_INST),
        c(INV_CONSTF),
        c(INV_CONSTI),
        c(INV_CONSTB),
        c(INV_COND_OUT),
        c(INV_INP),
        c(FLUSH_OUT),
        c(FLUSH_COND_OUT),
        vec![0xC000_1900, 0xf],
        vec![0xC000_1A00, 0],
        vec![0xC000_1B00, 7],
        vec![0xC000_1C00, 0],
        c(WAIT_FOR_IDLE),
    ];
    // Together with the non-pipelined ones, that is all of Table 3.
    let mut all: Vec<u32> = pipelined.iter().chain(&non_pipelined()).map(|c| c[0]).collect();
    all.sort_unstable();
    let mut table: Vec<u32> = op::TABLE.iter().map(|(w, _)| *w).collect();
    table.sort_unstable();
    assert_eq!(all, table);
    assert!(pipelined.iter().all(|c| op::is_pipelined(c[0])));
    let mut g = Gpu::new();
    idle_program(&mut g);
    g.ok(&[set_inst_fmt(), c(START)]);
    for cmd in &pipelined {
        g.ok(std::slice::from_ref(cmd));
        assert_eq!(g.e.busy(), cmd[0] != WAIT_FOR_IDLE[0]);
    }
}

// §2.1.2 / §2.2.1: read_perf_counters (not pipelined) writes total clocks then active clocks.
#[test]
fn read_perf_counters_after_wait_for_idle_writes_consistent_clocks() {
    let mut g = Gpu::new();
    idle_program(&mut g);
    g.m.write_words(PERF, &[0xffff_ffff; 2]).unwrap();
    let read = vec![0xC001_0500, PERF];
    let err = g
        .exec(&[
            vec![0xC001_0200, 1],
            vec![0xC000_0300, 0],
            set_inst_fmt(),
            set_domain(0, 0, 3, 0),
            c(START),
            read.clone(),
        ])
        .unwrap_err();
    assert_eq!((err.offset, err.kind), (14, CtmErrorKind::NotIdle { word: 0xC001_0500 }));
    let perf = |g: &mut Gpu| [g.m.read_u32(PERF).unwrap(), g.m.read_u32(PERF + 4).unwrap()];
    assert_eq!(perf(&mut g), [0xffff_ffff; 2]);
    g.ok(&[c(WAIT_FOR_IDLE), read.clone()]);
    // Since start_perf_counters: set_inst_fmt, set_domain, start_program, wait_for_idle and
    // the read itself (the refused read is not consumed) = 5 command clocks, plus 4 elements
    // x 1 instruction, which are also the active clocks.
    assert_eq!(perf(&mut g), [9, 4]);
    // Stopped counters do not move, whatever runs.
    g.ok(&[vec![0xC000_0400, 0], c(START), c(WAIT_FOR_IDLE), read]);
    assert_eq!(perf(&mut g), [10, 4]);
}

// A failing write-back is reported by the flush that makes it (start_program only filled the
// cache).
#[test]
fn output_write_faults_surface_at_flush_out_cache() {
    let mut g = Gpu::new();
    load_program(&mut g.m, &[CONST_OUT]);
    set_consts(&mut g, [1.0; 4]);
    let outside = 0x20_0000; // past the 1 MiB test memory
    g.ok(&[
        set_inst_fmt(),
        set_constf(F32X4),
        set_out(0, outside, fmt(64, 0, F32X4), 1),
        c(START),
        c(WAIT_FOR_IDLE),
    ]);
    assert_eq!(g.e.pending_output_bytes(), 16);
    let err = g.exec(&[c(INV_INP), c(FLUSH_OUT)]).unwrap_err();
    assert_eq!(err.offset, 2);
    assert!(matches!(err.kind, CtmErrorKind::Memory(f) if f.address == outside));
    assert_eq!(err.code(), 0x105);
    assert_eq!(g.e.pending_output_bytes(), 0);
}

#[test]
fn reset_empties_the_caches() {
    let mut g = Gpu::new();
    load_program(&mut g.m, &copy(0));
    g.ok(&[
        set_inst_fmt(),
        set_inp(0, IN0, fmt(64, 0, F32X1), 1),
        set_out(0, OUT0, fmt(64, 0, F32X1), 1),
        c(START),
    ]);
    assert!(g.e.busy());
    assert!(g.e.pending_output_bytes() > 0);
    assert!(g.e.caches().inst.lines() > 0 && g.e.caches().input.lines() > 0);
    g.e.reset();
    let k = g.e.caches();
    assert_eq!([k.inst.lines(), k.input.lines(), k.output.lines()], [0; 3]);
    assert!(!g.e.busy());
}
