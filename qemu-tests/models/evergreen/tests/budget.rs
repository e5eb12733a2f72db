//! Bounded work: `Dispatch::step(budget)` runs at most `budget` work units (one instruction for
//! one wave), so the command processor's tick never runs unbounded guest-controlled work; a
//! runaway program ends on the wave budget and an oversized dispatch on the dispatch budget,
//! with typed errors and their location.
mod common;
use common::*;
use proptest::prelude::*;

/// CF0 JUMP @0 with COND ALWAYS_FALSE (1<<8): WORD1 = 0x0A<<22 (0x0280_0000) | 0x100 | BARRIER.
/// No thread ever passes, so it always jumps: to itself.
const JUMP_SELF: [Slot; 1] = [[0, 0x8280_0100]];

/// An endless DX10 loop whose body is an ALU clause: CF0 LOOP_START_DX10 @3, CF1 ALU @4 (1
/// slot), CF2 LOOP_END @1; @4 ADD_INT R2.x = R2.x + 1. Nothing ever breaks.
const ENDLESS_LOOP: [Slot; 3] = [[3, 0x8180_0000], [4, 0xA000_0000], [1, 0x8140_0000]];
const ENDLESS_BODY: [Slot; 1] = [[0x801F_4002, 0x0040_1A10]];

fn dispatch(s: DispatchState, limits: Limits) -> Dispatch {
    Dispatch::new(s, limits).unwrap()
}

#[test]
fn a_step_runs_exactly_its_budget_of_a_hostile_program() {
    for chip in CHIPS {
        let mut m = mem();
        load_program(&mut m, &ENDLESS_LOOP, 4, &ENDLESS_BODY);
        let mut d = dispatch(state(chip), Limits { wave_units: 1000, dispatch_units: 1 << 20 });
        assert_eq!(d.step(&mut m, 0), StepResult::Running);
        assert_eq!(d.stats().units, 0, "a zero budget does nothing");
        for k in 1..=10 {
            assert_eq!(d.step(&mut m, 100), StepResult::Running, "{chip:?} step {k}");
            assert_eq!(d.stats().units, 100 * k, "{chip:?}: each step advances exactly 100 units");
        }
        // Every iteration is 3 units (ALU CF, its group, LOOP_END): 333 groups in 1000 units.
        assert_eq!(d.stats().alu_groups, 333);
        // The wave has used its 1000 units: the next step stops it.
        let StepResult::Error(e) = d.step(&mut m, 100) else { panic!("{chip:?}: still running") };
        assert_eq!(e.kind, ShaderErrorKind::WaveBudgetExceeded { limit: 1000 });
        assert_eq!(e.code(), 0x3501);
        let at = e.at.unwrap();
        assert_eq!((at.group, at.wave), ([0, 0, 0], 0));
        assert_eq!(d.stats().units, 1000, "nothing ran past the limit");
        // Sticky.
        assert_eq!(d.step(&mut m, 100), StepResult::Error(e));
    }
}

#[test]
fn the_default_wave_budget_stops_a_jump_to_itself() {
    let mut m = mem();
    load_program(&mut m, &JUMP_SELF, 2, &[]);
    let err = run(state(Chip::Evergreen), &mut m).unwrap_err();
    assert_eq!(
        err.kind,
        ShaderErrorKind::WaveBudgetExceeded { limit: Limits::default().wave_units }
    );
    assert_eq!(err.at.map(|a| a.cf), Some(0));
}

/// The largest grid DISPATCH_DIRECT can ask for (2^32 - 1 groups in each dimension, 1024
/// threads each): every step still runs at most its budget, and the dispatch budget ends it.
#[test]
fn a_maximal_grid_is_bounded_per_step_and_in_total() {
    for chip in CHIPS {
        let mut m = mem();
        // NOP with END_OF_PROGRAM (Evergreen) / CF_END (Cayman): one unit per wave.
        let end: [Slot; 1] =
            if chip == Chip::Evergreen { [[0, 0x8020_0000]] } else { [[0, 0x8800_0000]] };
        load_program(&mut m, &end, 2, &[]);
        let mut s = state(chip);
        s.groups = [u32::MAX; 3];
        s.num_threads = [1024, 1, 1];
        let mut d = dispatch(s, Limits { wave_units: 1 << 20, dispatch_units: 10_000 });
        for k in 1..=100 {
            assert_eq!(d.step(&mut m, 100), StepResult::Running);
            assert_eq!((d.stats().units, d.stats().waves), (100 * k, 100 * k));
        }
        assert_eq!(
            d.step(&mut m, 100),
            StepResult::Error(ShaderError {
                kind: ShaderErrorKind::DispatchBudgetExceeded { limit: 10_000 },
                // Wave 10000 = group 625 (16 waves of 64 per group), wave 0.
                at: Some(evergreen_model::shader::Location { group: [625, 0, 0], wave: 0, cf: 0 }),
            })
        );
    }
}

#[test]
fn an_empty_grid_is_done_at_once_and_done_is_sticky() {
    let mut m = mem();
    let mut s = state(Chip::Evergreen);
    s.groups = [4, 0, 1];
    let mut d = dispatch(s, Limits::default());
    assert_eq!(d.step(&mut m, 10), StepResult::Done);
    assert_eq!(d.stats().units, 0);
    // A finished dispatch stays done.
    load_program(&mut m, &[[0, 0x8020_0000]], 2, &[]);
    let mut d = dispatch(state(Chip::Evergreen), Limits::default());
    assert_eq!(d.step(&mut m, 10), StepResult::Done);
    assert_eq!(d.step(&mut m, 10), StepResult::Done);
    assert_eq!(d.stats().units, 1);
}

#[test]
fn dispatch_state_is_checked_before_any_work() {
    let bad = |f: &dyn Fn(&mut DispatchState)| {
        let mut s = state(Chip::Cayman);
        f(&mut s);
        Dispatch::new(s, Limits::default()).err().map(|e| (e.kind, e.at))
    };
    assert_eq!(
        bad(&|s| s.num_threads = [0, 1, 1]),
        Some((ShaderErrorKind::InvalidGroupSize { size: [0, 1, 1] }, None))
    );
    assert_eq!(
        bad(&|s| s.num_threads = [1025, 1, 1]),
        Some((ShaderErrorKind::InvalidGroupSize { size: [1025, 1, 1] }, None))
    );
    // NUM_GPRS 129 (SQ_PGM_RESOURCES 7:0).
    assert_eq!(
        bad(&|s| s.pgm_resources = 129),
        Some((ShaderErrorKind::InvalidGprCount(129), None))
    );
    // SQ_LDS_ALLOC SIZE 8193 dwords (> 32 KiB).
    assert_eq!(bad(&|s| s.lds_alloc = 8193), Some((ShaderErrorKind::InvalidLdsSize(8193), None)));
    assert_eq!(bad(&|_| {}), None);
}

/// GPR accesses are checked against NUM_GPRS; the error names the CF instruction.
#[test]
fn gpr_beyond_num_gprs_is_an_error_with_its_location() {
    // Harness clause: MOV R2.x = 1.0 | LAST, with NUM_GPRS 2 (R0, R1 only).
    let mut m = mem();
    load_harness(&mut m, Chip::Evergreen, &[[0x8000_00F9, 0x0040_0C90]]);
    let mut s = state(Chip::Evergreen);
    s.pgm_resources = 2 | 2 << 8;
    s.num_threads = [65, 1, 1];
    let e = run(s, &mut m).unwrap_err();
    assert_eq!(e.kind, ShaderErrorKind::GprOutOfRange { gpr: 2, num_gprs: 2 });
    assert_eq!(e.at.map(|a| (a.group, a.wave, a.cf)), Some(([0, 0, 0], 0, 0)));
}

/// A memory access outside guest memory is a typed error, not a panic.
#[test]
fn program_outside_memory_faults() {
    let mut m = FlatMemory::new(0, 0x1000);
    let e = run(state(Chip::Evergreen), &mut m).unwrap_err();
    assert!(matches!(e.kind, ShaderErrorKind::Memory(f) if f.address == PROG), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// Random programs on random (but valid) dispatch shapes: no panic, every step runs at most
    /// its budget, and the dispatch ends (done or a typed error) within its unit limit.
    #[test]
    fn random_programs_are_bounded(
        words in proptest::collection::vec(any::<u32>(), 64),
        threads in 1u32..200,
        groups in 1u32..4,
        chip in prop_oneof![Just(Chip::Evergreen), Just(Chip::Cayman)],
        budget in 1u64..64,
    ) {
        let mut m = mem();
        put(&mut m, PROG, &words);
        let mut s = state(chip);
        s.num_threads = [threads, 1, 1];
        s.groups = [groups, 1, 1];
        s.resources = vec![resource(BUF_A, 256, 0x04D0_0400, RES_W3_XYZW); 4];
        let limits = Limits { wave_units: 500, dispatch_units: 2_000 };
        let mut d = Dispatch::new(s, limits).unwrap();
        let mut steps = 0;
        loop {
            let before = d.stats().units;
            let r = d.step(&mut m, budget);
            prop_assert!(d.stats().units - before <= budget);
            steps += 1;
            prop_assert!(steps <= 2_000 / budget + 2, "the dispatch outlived its unit limit");
            if r != StepResult::Running {
                break;
            }
        }
    }
}
