//! Hostile programs (checklist item 3, "no guest input panics the model"): random instruction
//! words as user programs and as fragment shaders, random uniforms. Each run ends (a thread
//! end, a typed fault, the instruction limit, or a stall), no tick runs more than
//! `MAX_UNITS_PER_TICK` units, and nothing panics.
mod common;
use common::*;
use gpu_device_model::Activity;
use proptest::prelude::*;
use v3d_model::MAX_UNITS_PER_TICK;
use v3d_model::shading::{FragmentBatch, LANES, ShadingStep, VaryingInput};

/// Instruction words biased toward valid ones: a random word with its signal drawn from the
/// common values and its write addresses from the register space.
fn word() -> impl Strategy<Value = u64> {
    (any::<u64>(), 0u64..16, prop::bool::ANY)
        .prop_map(|(w, sig, keep)| if keep { w } else { (w & !(0xF << 60)) | (sig.min(15)) << 60 })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_user_programs_end_or_fault_within_the_tick_bound(
        program in prop::collection::vec(word(), 1..40),
        uniforms in prop::collection::vec(prop_oneof![Just(OUT), Just(DATA), any::<u32>()], 8),
        length in 0u32..2048,
        vpm in 0u32..32,
    ) {
        let mut b = Bench::new();
        b.wr(VPMBASE, vpm);
        b.code(CODE, &program);
        b.put(UNIFORMS, &uniforms);
        b.dev.model_mut().model_mut().qpus.shared.instruction_limit = 20_000;
        b.submit(CODE, UNIFORMS, length);
        b.submit(CODE, UNIFORMS, length);
        let mut ticks = 0;
        while b.dev.tick_engines(1) == Activity::Busy {
            ticks += 1;
            prop_assert!(ticks < 1_000, "two programs of at most 20000 instructions");
        }
        prop_assert!(b.model().stats().max_tick_units <= MAX_UNITS_PER_TICK);
    }

    #[test]
    fn random_fragment_shaders_end_or_fault(
        program in prop::collection::vec(word(), 1..40),
        varyings in 0usize..4,
        single_threaded in prop::bool::ANY,
        coverage in any::<u16>(),
    ) {
        let batch = FragmentBatch {
            code_address: CODE,
            uniforms_address: UNIFORMS,
            single_threaded,
            x: [1; LANES],
            y: [2; LANES],
            coverage,
            reverse: false,
            w: [1.0; LANES],
            z: [0; LANES],
            varyings: vec![VaryingInput { partial: [0.5; LANES], c: 1.0 }; varyings],
            tile_colour: [7; LANES],
        };
        // At most 1000 instructions at 4 a tick: done (finished or faulted) within 251 ticks.
        let (result, _) = shade_with(&program, batch, Some(1000), 300);
        let result = result.expect("ended within the instruction limit");
        prop_assert!(matches!(result, ShadingStep::Done(_) | ShadingStep::Fault(_)));
    }
}
