//! The Evergreen/Cayman driver's IH ring under hostile write pointers: the driver runs against
//! the emulated chip in process (first byte, bit 0: Cayman) with a 256-byte IH ring, and each
//! 4 bytes of the rest plant one `IH_RB_WPTR` value for one `handle_interrupts` (a vector
//! boundary inside the ring other than the IH's own is replaced by the IH's offset with the
//! value's flag bits: the driver must believe such a value).
//!
//! Asserts (`drivers/radeon-evergreen/tests/common/ih.rs`, shared with `tests/irq.rs`): an
//! impossible value is `IrqError::BadWritePointer` and a possible one is consumed within one
//! ring's worth of vectors; `IH_RB_RPTR` stays a vector boundary; afterwards one fence gives
//! exactly one EOP vector and leaves the driver's read pointer at the IH's write pointer.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::cell::Cell;

#[path = "../../drivers/radeon-evergreen/tests/common/mod.rs"]
mod common;
use common::ih::{PlantedWptr, driver, impossible_or_flags, plant};
use common::{CHIPS, gpu};

fuzz_target!(|bytes: &[u8]| {
    let Some((&flags, planted)) = bytes.split_first() else { return };
    let (chip, asic) = CHIPS[usize::from(flags & 1)];
    let gpu = gpu(asic);
    let io = PlantedWptr { gpu: &gpu, next: Cell::new(None) };
    let mut drv = driver(&gpu, &io, chip);
    for w in planted.chunks_exact(4).take(32) {
        let v = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
        if let Err(e) = plant(&gpu, &io, &mut drv, |real| impossible_or_flags(v, real)) {
            panic!("{chip:?}: {e}");
        }
    }
});
