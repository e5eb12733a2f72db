//! Hostile dispatch parameters (#24 §1): every global-memory size from 0 to 64 bytes and
//! around RAT 0's upper bound, on both chips, with a kernel whose writes run past the end of
//! the buffer. A size the hardware cannot cover is a typed `DispatchError` before anything
//! is written; an accepted one runs, and no byte outside the buffer changes.

mod common;

use baregpu_hal::dma::BusAddress;
use baregpu_radeon_evergreen::compute::{Dispatch, DispatchError, MAX_RAT_DWORDS};
use common::dispatch::{Bench, Shape};
use common::*;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

/// Threads of [`Shape::stores`].
const THREADS: u32 = 256;

/// Run `s`: the bench's checks, and the typed error its global-memory size calls for.
fn check(bench: &mut Bench<'_>, s: Shape) -> Result<(), TestCaseError> {
    let result = bench.run(&s).map_err(TestCaseError::fail)?;
    prop_assert_eq!(result.err(), s.size_error(), "{:?}", s);
    Ok(())
}

/// Sizes 0..=64 bytes and 64 bytes either side of RAT 0's upper bound.
fn hostile_size() -> impl Strategy<Value = usize> {
    let top = MAX_RAT_DWORDS * 4;
    prop_oneof![0usize..=64, (top - 64)..=(top + 64)]
}

/// The first element the kernel stores to: at the start of the buffer or straddling its end.
fn first_element(bytes: usize) -> impl Strategy<Value = u32> {
    let elements = (bytes / 4) as u32;
    prop_oneof![Just(0), elements.saturating_sub(THREADS)..=elements + THREADS]
}

#[test]
fn every_small_global_size_is_refused_or_stays_inside_its_buffer_on_both_chips() {
    for (chip, asic) in CHIPS {
        let gpu = gpu(asic);
        let mut bench = Bench::new(&gpu, chip);
        for bytes in 0..=64 {
            check(&mut bench, Shape::stores(bytes, 0))
                .unwrap_or_else(|e| panic!("{chip:?}, {bytes} bytes: {e}"));
        }
    }
}

#[test]
fn hostile_global_sizes_never_reach_memory_outside_the_buffer_on_both_chips() {
    for (chip, asic) in CHIPS {
        let gpu = gpu(asic);
        let bench = std::cell::RefCell::new(Bench::new(&gpu, chip));
        // The seed comes from PROPTEST_RNG_SEED (fixed under `cargo xtask test`); a failure
        // prints the minimal (size, first element) and saves the `cc` line that replays it
        // beside this file, as the proptest! macro does.
        let mut runner =
            TestRunner::new(Config { cases: 48, source_file: Some(file!()), ..Config::default() });
        let cases = hostile_size().prop_flat_map(|b| (Just(b), first_element(b)));
        runner
            .run(&cases, |(bytes, first)| {
                check(&mut bench.borrow_mut(), Shape::stores(bytes, first))
            })
            .unwrap_or_else(|e| panic!("{chip:?}: {e}"));
    }
}

#[test]
fn memory_reaching_past_40_bits_is_refused_before_anything_is_written() {
    for (chip, asic) in CHIPS {
        let gpu = gpu(asic);
        let mut bench = Bench::new(&gpu, chip);
        let high = BusAddress((1 << 40) - 256);
        let global = bench.view(high, 512);
        let cb = bench.view(high, 512);
        let submissions = bench.drv.stats().submissions;
        let d = Dispatch {
            kernel: bench.kernel,
            groups: [1, 1, 1],
            local: [64, 1, 1],
            args: &[0],
            constants: &bench.cb,
            global: &global,
            lds_dwords: 0,
            indirect: None,
        };
        let beyond = DispatchError::BeyondAddressSpace { address: high, bytes: 512 };
        assert_eq!(bench.drv.dispatch(&d).err(), Some(beyond), "{chip:?}: global memory");
        let d = Dispatch { constants: &cb, global: &bench.arena, ..d };
        assert_eq!(bench.drv.dispatch(&d).err(), Some(beyond), "{chip:?}: constants");
        assert_eq!(bench.drv.stats().submissions, submissions, "{chip:?}: nothing submitted");
        let mut words = [0u32; 128];
        cb.read_slice(0, &mut words).unwrap();
        assert_eq!(words, [0; 128], "{chip:?}: cb0 not written");
    }
}
