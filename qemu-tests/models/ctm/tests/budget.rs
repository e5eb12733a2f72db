//! Guest-controlled work is bounded: a command buffer is consumed in slices of at most a
//! given number of work units (counted, not timed), an element's program can stop and resume
//! between slices, and a buffer that exceeds its budget ends with a typed error whose code the
//! R5xx model puts in CTM_STATUS.

mod common;

use common::*;
use ctm_model::{
    CtmEngine, CtmError, CtmErrorKind, DppError, ExecSummary, FlatMemory, Limits, MAX_STEP_UNITS,
    Memory, Progress,
};

/// ALU instruction with LAST set and nothing written (CMN TYPE 0, LAST bit 8): one
/// instruction per element.
const ALU_LAST: [u32; 6] = [1 << 8, 0, 0, 0, 0, 0];
/// FC JUMP to slot 0 whatever the condition (JUMP_FUNC 0xff, §3.5.3): a program that never
/// ends on its own.
fn jump_self() -> [u32; 6] {
    fc(0, 0, 0xff, 0, 0, 0, 0, 0, 0, 0)
}

const CB: u32 = 0x10_0000;

/// Put `cmds` at [`CB`] in `m` and begin them as a command buffer.
fn begin(e: &mut CtmEngine, m: &mut FlatMemory, cmds: &[Vec<u32>]) -> usize {
    let words: Vec<u32> = cmds.iter().flatten().copied().collect();
    m.write_words(CB, &words).unwrap();
    e.begin(CB, words.len() as u32).unwrap();
    words.len()
}

/// Advance in slices of `budget` units until the buffer ends; every slice must stay within
/// its budget (plus `slack` for cache write-backs). Returns the outcome, the number of slices
/// and the units done in all.
fn drain_with(
    e: &mut CtmEngine,
    m: &mut FlatMemory,
    budget: u64,
    slack: u64,
) -> (Result<ExecSummary, CtmError>, u64, u64) {
    let (mut slices, mut total) = (0u64, 0u64);
    loop {
        let s = e.advance(budget, m);
        let limit = budget + slack;
        assert!(s.units <= limit, "slice {slices} did {} units, budget {budget}", s.units);
        slices += 1;
        total += s.units;
        match s.result {
            Ok(Progress::Running) => assert!(e.in_flight()),
            Ok(Progress::Done(summary)) => return (Ok(summary), slices, total),
            Ok(Progress::Idle) => panic!("nothing in flight"),
            Err(err) => {
                assert!(!e.in_flight(), "a failed buffer is no longer in flight");
                return (Err(err), slices, total);
            }
        }
    }
}

/// [`drain_with`] for work without write-backs: every slice within its exact budget.
fn drain(
    e: &mut CtmEngine,
    m: &mut FlatMemory,
    budget: u64,
) -> (Result<ExecSummary, CtmError>, u64, u64) {
    drain_with(e, m, budget, 0)
}

fn big_memory() -> FlatMemory {
    FlatMemory::new(0, 0x200_0000)
}

#[test]
fn full_domain_start_program_runs_in_slices_until_the_buffer_budget() {
    let mut m = big_memory();
    load_program(&mut m, &[ALU_LAST]);
    let mut e = CtmEngine::new();
    e.limits.per_buffer = 1 << 20;
    begin(&mut e, &mut m, &[set_inst_fmt(), set_domain(0, 0, 4095, 4095), START.to_vec()]);
    let (r, slices, total) = drain(&mut e, &mut m, 4096);
    let err = r.unwrap_err();
    // Offset 8: the start_program after set_inst_fmt (3 words) and set_domain (5 words).
    assert_eq!(err.offset, 8);
    assert!(matches!(err.kind, CtmErrorKind::BufferBudgetExceeded { units } if units == 1 << 20));
    assert_eq!(err.code(), 0x107);
    assert_eq!(total, 1 << 20, "the buffer did exactly its budget");
    assert_eq!(slices, (1 << 20) / 4096 + 1, "full slices, then the one reporting the error");
    // Two units per element (visit + one instruction), after 2 command units.
    assert_eq!(e.cache_ops.start_program, 1);
}

#[test]
fn a_program_running_to_the_per_dispatch_limit_is_cut_into_slices() {
    let mut m = big_memory();
    load_program(&mut m, &[jump_self()]);
    let mut e = CtmEngine::new();
    e.limits = Limits { per_element: u32::MAX, per_program: 1 << 18, per_buffer: 1 << 28 };
    begin(&mut e, &mut m, &[set_inst_fmt(), set_domain(0, 0, 0, 0), START.to_vec()]);
    let (r, slices, total) = drain(&mut e, &mut m, 1000);
    let err = r.unwrap_err();
    assert_eq!(
        (err.offset, err.kind),
        (8, CtmErrorKind::Program { i: 0, j: 0, pc: 0, error: DppError::ProgramBudgetExceeded })
    );
    assert_eq!(err.code(), 0x202);
    // One element's program spans hundreds of slices: 2^18 instructions, the element visit
    // and the two commands before it.
    assert_eq!(total, (1 << 18) + 1 + 2 + 1);
    assert!(slices > (1 << 18) / 1000, "{slices} slices");
}

#[test]
fn millions_of_commands_are_consumed_a_slice_at_a_time() {
    let mut m = big_memory();
    let n = 2_000_000u32;
    let mut words = Vec::with_capacity(2 * n as usize);
    for k in 0..n {
        words.extend([0xC000_0600, k]); // set_cond_val k
    }
    m.write_words(CB, &words).unwrap();
    let mut e = CtmEngine::new();
    e.begin(CB, words.len() as u32).unwrap();
    let (r, slices, total) = drain(&mut e, &mut m, 1 << 16);
    assert_eq!(r.unwrap().commands, n);
    assert_eq!((total, slices), (u64::from(n), u64::from(n).div_ceil(1 << 16)));
    assert_eq!(e.state.cond_val, n - 1);
}

#[test]
fn a_buffer_of_many_dispatches_hits_the_buffer_budget() {
    // 100,000 start_programs over a 16x16 domain: 100k x (1 + 256 x 2) units, far over the
    // 2^20 budget set here, stopped after the budget whatever the count.
    let mut m = big_memory();
    load_program(&mut m, &[ALU_LAST]);
    let mut e = CtmEngine::new();
    e.limits.per_buffer = 1 << 20;
    let mut cmds = vec![set_inst_fmt(), set_domain(0, 0, 15, 15)];
    cmds.extend(std::iter::repeat_n(START.to_vec(), 100_000));
    begin(&mut e, &mut m, &cmds);
    let (r, _, total) = drain(&mut e, &mut m, 1 << 14);
    assert!(matches!(r.unwrap_err().kind, CtmErrorKind::BufferBudgetExceeded { .. }));
    assert_eq!(total, 1 << 20);
    assert!(e.cache_ops.start_program < 100_000);
}

/// The same workload gives the same memory, counters and summary whether it is run in one
/// call or one work unit at a time.
#[test]
fn one_unit_slices_give_the_synchronous_result() {
    let setup = |m: &mut FlatMemory| {
        for k in 0..3u32 {
            for ch in 0..4u32 {
                m.write_f32(CONST_BASE + 16 * k + 4 * ch, (k * 4 + ch) as f32 + 0.5).unwrap();
            }
        }
        // r0 = (i, j, 0, 0); out0 = c0 * c1 + c2 per element, after a few loop-free ALU ops.
        let alu = [0, CONST_ADDRS_012, CONST_ADDRS_012, RGB_A_SRC0 | RGB_B_SRC1, 0, RGB_C_SRC2];
        load_program(m, &[alu, alu, CONST_OUT]);
    };
    let cmds = vec![
        vec![0xC001_0200, 1], // init_perf_counters (enabled)
        vec![0xC000_0300, 0], // start_perf_counters
        set_inst_fmt(),
        set_constf(F32X4),
        set_out(0, OUT0, fmt(64, 0, F32X4), 8),
        set_domain(1, 2, 7, 6),
        START.to_vec(),
        FLUSH_OUT.to_vec(),
        WAIT_FOR_IDLE.to_vec(),
    ];
    let words: Vec<u32> = cmds.iter().flatten().copied().collect();

    let mut m1 = big_memory();
    setup(&mut m1);
    let mut e1 = CtmEngine::new();
    let sync = e1.execute(&words, &mut m1).unwrap();

    let mut m2 = big_memory();
    setup(&mut m2);
    let mut e2 = CtmEngine::new();
    begin(&mut e2, &mut m2, &cmds);
    // The flush writes its lines back in one step: the documented slack.
    let (r, slices, total) = drain_with(&mut e2, &mut m2, 1, MAX_STEP_UNITS);
    let sliced = r.unwrap();

    assert_eq!(sliced, sync);
    // 9 commands, 35 elements x (visit + 3 instructions), one slice each; the flush's slice
    // also writes back 5 rows x 7 elements x 16 bytes (at most 35 lines of 64 bytes).
    let lines = total - (9 + 35 * 4);
    assert!((1..=35).contains(&lines), "{lines} lines written back");
    assert_eq!(slices, 9 + 35 * 4, "one slice per unit; the last one reports Done");
    assert_eq!(e2.state.perf, e1.state.perf);
    let mut a = vec![0u8; 64 * 8 * 16];
    let mut b = a.clone();
    m1.read(OUT0, &mut a).unwrap();
    m2.read(OUT0, &mut b).unwrap();
    assert_eq!(a, b);
    assert_ne!(a, vec![0u8; a.len()], "the outputs were written");
}

#[test]
fn begin_refuses_a_second_buffer_and_reset_abandons_the_first() {
    let mut m = big_memory();
    load_program(&mut m, &[ALU_LAST]);
    let mut e = CtmEngine::new();
    begin(&mut e, &mut m, &[set_inst_fmt(), set_domain(0, 0, 63, 63), START.to_vec()]);
    assert!(e.advance(10, &mut m).result == Ok(Progress::Running));
    let err = e.begin(CB, 2).unwrap_err();
    assert_eq!((err.kind, err.code()), (CtmErrorKind::BufferInFlight, 0x108));
    assert!(e.in_flight(), "the first buffer is untouched");
    e.reset();
    assert!(!e.in_flight() && !e.busy());
    assert_eq!(e.advance(10, &mut m).result, Ok(Progress::Idle));
}

#[test]
fn a_fault_fetching_a_command_reports_its_word() {
    let mut m = FlatMemory::new(0, 0x1000);
    let mut e = CtmEngine::new();
    // Two words inside memory (set_cond_val 7), then the buffer runs past the end.
    m.write_words(0xff8, &[0xC000_0600, 7]).unwrap();
    e.begin(0xff8, 4).unwrap();
    let s = e.advance(100, &mut m);
    let err = s.result.unwrap_err();
    assert_eq!(err.offset, 2);
    assert!(matches!(err.kind, CtmErrorKind::Memory(f) if f.address == 0x1000));
    assert_eq!(e.state.cond_val, 7, "commands before the fault took effect");
}
