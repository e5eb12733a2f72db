//! Submission closures that fail or overrun their reservation at random points, on both Radeon
//! drivers over their in-process models (the R520, the Cypress or the Cayman, picked by the
//! first byte), through the contract suite's `gpu_contract::run_plan` and the fixtures the
//! drivers' own contract tests use.
//!
//! Each following pair of bytes is one submission: marker writes (a scratch register), a fence,
//! and the closure failing after some of the writes, or reserving too little (an overrun).
//!
//! Asserts (issue #17 §2, #24 §3): a submission succeeds exactly when its closure neither
//! fails nor overruns; nothing of a failed one reaches the command processor (the marker holds
//! the last successful value after the device ran, and only successes rang a doorbell); the
//! last successful fence signals; no panic.
#![no_main]

use gpu_contract::{Step, run_plan};
use libfuzzer_sys::fuzz_target;

#[path = "../../drivers/radeon-r5xx/tests/common/mod.rs"]
mod r5xx;

#[path = "../../drivers/radeon-evergreen/tests/common/mod.rs"]
mod evergreen;

/// Two bytes as one submission: 1-5 markers; bit 3 of the second: fail after
/// `second % 7` writes; bits 4-5 both set: reserve room for 1-2 markers fewer and no fence.
fn step(pair: &[u8]) -> Step {
    let (a, b) = (pair[0], pair.get(1).copied().unwrap_or(0));
    Step {
        markers: 1 + usize::from(a % 5),
        fail_after: (b & 0x08 != 0).then_some(usize::from(b % 7)),
        short: if b & 0x30 == 0x30 { 1 + usize::from(b >> 7) } else { 0 },
    }
}

fuzz_target!(|bytes: &[u8]| {
    let Some((&family, rest)) = bytes.split_first() else { return };
    let plan: Vec<Step> = rest.chunks(2).take(32).map(step).collect();
    let mut tag = 0;
    let outcome = match family % 3 {
        0 => {
            let gpu = r5xx::gpu();
            let drv = r5xx::init(&gpu, r5xx::small_ring());
            run_plan(&mut r5xx::R5xxFixture { gpu: &gpu, drv }, &plan, &mut tag)
        }
        n => {
            let (chip, asic) = evergreen::CHIPS[usize::from(n - 1)];
            let gpu = evergreen::gpu(asic);
            let images = evergreen::Images::of(chip);
            let drv = evergreen::init(&gpu, chip, &images, evergreen::small_ring());
            run_plan(&mut evergreen::EvergreenFixture { gpu: &gpu, drv }, &plan, &mut tag)
        }
    };
    if let Err(broken) = outcome {
        panic!("family {}: {broken}", family % 3);
    }
});
