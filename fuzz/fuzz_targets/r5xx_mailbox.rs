//! The emulated R5xx (r5xx-model) through raw mailbox requests, as a hostile guest would send
//! them (`gpu_device_model::Device::handle`: any op, BAR, offset, value), interleaved with
//! guest writes to its RAM (ring contents, microcode images, command buffers) and timer polls.
//!
//! Asserts: no panic; no memory access outside guest RAM (every access the framework performs
//! is checked against the RAM size here, and AddressSanitizer checks the raw copies); every
//! request returns, and settles within its work bound: under seeded pacing a request advances
//! the engines by at most `SEEDED_MAX_TICKS` ticks, and a tick does at most one ring fetch and
//! `CTM_UNITS_PER_TICK` (+ `MAX_STEP_UNITS`) CTM work units, however long a command buffer the
//! guest submits.
#![no_main]

use gpu_device_model::pacing::SEEDED_MAX_TICKS;
use gpu_device_model::{Device, Pacing};
use libfuzzer_sys::fuzz_target;
use r5xx_model::{CTM_UNITS_PER_TICK, R5xxModel};

/// CTM work units one request (or timer poll) may cause.
const UNITS_PER_REQUEST: u64 =
    SEEDED_MAX_TICKS as u64 * (CTM_UNITS_PER_TICK + ctm_model::MAX_STEP_UNITS);

#[path = "watched_memory.rs"]
mod watched_memory;
use watched_memory::{RAM, Watched};

fuzz_target!(|bytes: &[u8]| {
    let memory = Watched::new();
    let mut device = Device::new(R5xxModel::new(), Box::new(memory)).unwrap();
    device.set_pacing(Pacing::DEFAULT);
    // Requests of 8 bytes: kind, BAR, 16-bit offset, 32-bit value.
    for r in bytes.chunks_exact(8) {
        let before = device.model().stats().ctm_units;
        let (kind, bar) = (r[0], u32::from(r[1] % 4));
        let offset = u32::from(u16::from_le_bytes([r[2], r[3]]));
        let value = u32::from_le_bytes([r[4], r[5], r[6], r[7]]);
        match kind % 10 {
            // Ops 1..=7 (and a few invalid ones through 0 and 8).
            k @ 0..=7 => {
                let op = if kind >= 250 { u32::from(kind) } else { u32::from(k) };
                let _ = device.handle(op, bar, offset, value);
            }
            8 => {
                // The guest writes its RAM: a dword at a 4-aligned address below 256 KiB.
                let address = u64::from(offset) * 4 % RAM as u64;
                let _ = device.memory_mut().write(address, &value.to_le_bytes());
            }
            _ => {
                let _ = device.poll();
            }
        }
        let units = device.model().stats().ctm_units - before;
        assert!(units <= UNITS_PER_REQUEST, "one request did {units} CTM work units");
    }
});
