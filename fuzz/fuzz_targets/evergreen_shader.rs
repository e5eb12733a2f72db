//! The emulated Evergreen/Cayman shader core (evergreen-model) on arbitrary program words and
//! dispatch state: a hostile kernel as a guest could place it in memory.
//!
//! Asserts: no panic; every `Dispatch::step` does at most its budget of work units (so the
//! command processor's tick stays bounded); a dispatch ends (done or a typed error) within
//! its dispatch budget.
#![no_main]

use evergreen_model::shader::{Chip, Dispatch, DispatchState, FlatMemory, Limits, StepResult};
use libfuzzer_sys::fuzz_target;

const BUDGET: u64 = 64;
const LIMITS: Limits = Limits { wave_units: 2_000, dispatch_units: 20_000 };

fuzz_target!(|bytes: &[u8]| {
    if bytes.len() < 8 {
        return;
    }
    let (head, program) = bytes.split_at(8);
    let chip = if head[0] & 1 == 0 { Chip::Evergreen } else { Chip::Cayman };
    let mut mem = FlatMemory::new(0, 1 << 16);
    let words: Vec<u32> = program
        .chunks_exact(4)
        .take(4096)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        .collect();
    if mem.write_words(0x1000, &words).is_err() {
        return;
    }
    let mut state = DispatchState::new(chip);
    state.pgm_start = 0x1000 >> 8;
    state.pgm_resources = u32::from(head[1]) | u32::from(head[2]) << 8;
    state.input_cntl = u32::from(head[3]);
    state.num_threads = [u32::from(head[4] % 128) + 1, u32::from(head[5] % 3) + 1, 1];
    state.groups = [u32::from(head[6] % 4) + 1, u32::from(head[7] % 2) + 1, 1];
    let Ok(mut d) = Dispatch::new(state, LIMITS) else { return };
    let mut steps = 0u64;
    loop {
        let before = d.stats().units;
        let r = d.step(&mut mem, BUDGET);
        let units = d.stats().units - before;
        assert!(units <= BUDGET, "a step did {units} units > {BUDGET}");
        steps += 1;
        match r {
            StepResult::Running => {
                assert!(steps * BUDGET <= LIMITS.dispatch_units + BUDGET, "past the budget");
            }
            StepResult::Done | StepResult::Error(_) => break,
        }
    }
});
