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

#[path = "mailbox_requests.rs"]
mod mailbox_requests;
#[path = "watched_memory.rs"]
mod watched_memory;
use mailbox_requests::replay;
use watched_memory::Watched;

fuzz_target!(|bytes: &[u8]| {
    let memory = Watched::new();
    let mut device = Device::new(R5xxModel::new(), Box::new(memory)).unwrap();
    device.set_pacing(Pacing::DEFAULT);
    // MMIO offsets are byte offsets (unaligned ones are the framework's to refuse).
    replay(&mut device, bytes, |offset| offset, |m| m.stats().ctm_units, UNITS_PER_REQUEST);
});
