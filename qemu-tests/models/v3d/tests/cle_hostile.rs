//! Hostile control lists: whatever bytes both threads are given, the model never panics and
//! no tick does more than `MAX_UNITS_PER_TICK` units (checklist item 3).

mod cle_support;

use cle_support::*;
use gpu_device_model::Pacing;
use proptest::prelude::*;
use v3d_model::cle::MAX_UNITS_PER_TICK;

/// Record ids weighted towards the ones with effects, and raw bytes.
fn byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        3 => prop::sample::select(vec![
            0u8, 1, 4, 5, 6, 7, 8, 16, 17, 18, 24, 25, 28, 32, 33, 48, 56, 65, 96, 97, 102, 103,
            112, 113, 114, 115, 128, 129,
        ]),
        1 => any::<u8>(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn random_lists_never_panic_and_every_tick_is_bounded(
        bin in prop::collection::vec(byte(), 1..200),
        render in prop::collection::vec(byte(), 1..200),
        seed in any::<u64>(),
    ) {
        let gpu = gpu(Shader::Constant(0), Pacing::Seeded(seed));
        gpu.device_mut().set_tick_budget(20_000);
        // Addresses in the lists point somewhere in memory (low bytes of each word random).
        run_frame(&gpu, &bin, &render);
        for _ in 0..200 {
            gpu.poll();
        }
        let stats = gpu.model().model().cle.stats().clone();
        prop_assert!(stats.max_tick_units <= MAX_UNITS_PER_TICK, "{stats:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn garbage_vertices_and_huge_draws_stay_bounded(
        vertices in prop::collection::vec(any::<u8>(), 12 * 64),
        draws in prop::collection::vec((0u32..100_000, 0u32..64, any::<bool>()), 1..4),
        seed in any::<u64>(),
    ) {
        let gpu = gpu(Shader::FirstVarying, Pacing::Seeded(seed));
        gpu.device_mut().set_tick_budget(50_000);
        gpu.write_memory(map::VERTICES.into(), &vertices).unwrap();
        gpu.write_memory(map::NV_RECORD.into(), &nv_record(12, 0, map::CODE, 0, map::VERTICES))
            .unwrap();
        let mut records = Vec::new();
        for (count, first, strip) in draws {
            let mut r = triangles(count.min(64 - first), first);
            r[1] = if strip { 5 } else { 4 };
            records.push(r);
        }
        let bin = bin_list(4, 4, 0x2_0000, records.concat());
        run_frame(&gpu, &bin, &render_list(4, 4, 256, 256, 0));
        for _ in 0..2000 {
            gpu.poll();
        }
        let stats = gpu.model().model().cle.stats().clone();
        prop_assert!(stats.max_tick_units <= MAX_UNITS_PER_TICK, "{stats:?}");
    }
}
