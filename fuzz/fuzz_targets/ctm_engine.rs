//! The CTM engine (ctm-model) on hostile command buffers and programs: consumed in slices,
//! every slice stays within its work budget (plus the documented write-back bound), the buffer
//! within its total budget, and it ends Done or with a typed error whose code is an error
//! state; never a panic or an unbounded call.
#![no_main]

use ctm_model::{CtmEngine, FlatMemory, Limits, MAX_STEP_UNITS, Memory, Progress};
use libfuzzer_sys::fuzz_target;

/// Small limits keep each input fast; the bounds hold for any limits.
const LIMITS: Limits = Limits { per_element: 1 << 10, per_program: 1 << 13, per_buffer: 1 << 15 };
const SLICE: u64 = 256;

fuzz_target!(|bytes: &[u8]| {
    // Layout: the first half is memory (instructions, constants, surfaces at MC address 0),
    // the second half the command buffer at 0x10000.
    let words: Vec<u32> =
        bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    let (data, cmds) = words.split_at(words.len() / 2);
    let mut mem = FlatMemory::new(0, 0x2_0000);
    let data: Vec<u8> = data.iter().take(0x4000).flat_map(|w| w.to_le_bytes()).collect();
    mem.write(0, &data).unwrap();
    let cmds: Vec<u8> = cmds.iter().take(0x4000).flat_map(|w| w.to_le_bytes()).collect();
    mem.write(0x1_0000, &cmds).unwrap();
    let mut e = CtmEngine::new();
    e.limits = LIMITS;
    // Two buffers: the second starts from the state the first left (caches, busy flag).
    for _ in 0..2 {
        e.begin(0x1_0000, (cmds.len() / 4) as u32).expect("nothing in flight");
        let mut total = 0u64;
        loop {
            let s = e.advance(SLICE, &mut mem);
            assert!(s.units <= SLICE + MAX_STEP_UNITS, "slice of {} units", s.units);
            total += s.units;
            assert!(total <= LIMITS.per_buffer + MAX_STEP_UNITS, "buffer of {total} units");
            match s.result {
                Ok(Progress::Running) => {}
                Ok(Progress::Done(_)) => break,
                Ok(Progress::Idle) => panic!("the buffer vanished"),
                Err(err) => {
                    assert!(err.code() >= 0x100, "{err}");
                    break;
                }
            }
        }
        assert!(!e.in_flight());
    }
});
