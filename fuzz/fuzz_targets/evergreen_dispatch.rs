//! Evergreen/Cayman compute dispatch with hostile parameters, on the emulated chip in process
//! (first byte, bit 0: Cayman): global memory sizes of 0-64 bytes or around RAT 0's upper
//! bound (bit 1), group counts, group sizes and LDS from tables of edge values, and an indirect
//! address that may be misaligned or near 2^40, for a kernel that stores past the end of its
//! buffer.
//!
//! Asserts (`drivers/radeon-evergreen/tests/common/dispatch.rs`, shared with
//! `tests/dispatch_bounds.rs`): a refused dispatch submitted nothing and wrote neither cb0 nor
//! global memory; a size RAT 0 cannot cover is refused; an accepted dispatch small enough to
//! wait for completes with its in-buffer stores landed; no byte outside the global buffer
//! changes.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../drivers/radeon-evergreen/tests/common/mod.rs"]
mod common;
use common::dispatch::{Bench, MAX_TRIED, Shape};
use common::{CHIPS, gpu};

const GROUPS: [u32; 8] = [0, 1, 2, 3, 4, 17, 1 << 26, u32::MAX];
const LOCAL: [u32; 8] = [0, 1, 2, 16, 64, 256, 257, u32::MAX];
const LDS: [u32; 4] = [0, 64, 8192, 8193];

fuzz_target!(|bytes: &[u8]| {
    let Some((head, _)) = bytes.split_first_chunk::<12>() else { return };
    let (chip, asic) = CHIPS[usize::from(head[0] & 1)];
    let pick = |table: &[u32], b: u8| table[usize::from(b) % table.len()];
    let bytes = if head[0] & 2 == 0 {
        usize::from(head[1]) % 65
    } else {
        MAX_TRIED - 128 + usize::from(head[1]) % 129
    };
    let first = u32::from_le_bytes([head[2], head[3], 0, 0]);
    let groups = [pick(&GROUPS, head[4]), pick(&GROUPS, head[5]), pick(&GROUPS, head[5] >> 3)];
    let local = [pick(&LOCAL, head[6]), pick(&LOCAL, head[7]), pick(&LOCAL, head[7] >> 3)];
    let indirect = match head[9] % 4 {
        0 | 1 => None,
        2 => Some(u64::from(head[10])),
        _ => Some((1 << 40) - u64::from(head[10])),
    };
    let shape = Shape { bytes, first, groups, local, lds_dwords: pick(&LDS, head[8]), indirect };
    let gpu = gpu(asic);
    let mut bench = Bench::new(&gpu, chip);
    if let Err(e) = bench.run(&shape) {
        panic!("{chip:?}: {e}");
    }
});
