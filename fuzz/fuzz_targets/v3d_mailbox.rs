//! The emulated VideoCore IV V3D (v3d-model, behind the project-defined PCI wrapper) through
//! raw mailbox requests, as a hostile guest would send them (`gpu_device_model::Device::handle`:
//! any op, BAR, offset, value), interleaved with guest writes to its RAM (QPU code, uniforms,
//! VPM DMA data) and timer polls, under seeded engine pacing.
//!
//! Asserts: no panic; no memory access outside guest RAM; every request settles within its work
//! bound (at most `SEEDED_MAX_TICKS` ticks of at most `MODEL_UNITS_PER_TICK` units each: the
//! user programs' and VPM DMA's, and the control-list executor's with its fragment shading).
#![no_main]

use gpu_device_model::pacing::SEEDED_MAX_TICKS;
use gpu_device_model::{Device, Pacing, PlatformDevice};
use gpu_mailbox::platform;
use libfuzzer_sys::fuzz_target;
use v3d_model::{MODEL_UNITS_PER_TICK, V3d};

#[path = "mailbox_requests.rs"]
mod mailbox_requests;
#[path = "watched_memory.rs"]
mod watched_memory;
use mailbox_requests::replay;
use watched_memory::Watched;

fuzz_target!(|bytes: &[u8]| {
    let Some((&seed, requests)) = bytes.split_first() else { return };
    let model = PlatformDevice::new(V3d::new(), platform::DEVICE_V3D);
    let mut device = Device::new(model, Box::new(Watched::new())).unwrap();
    device.set_pacing(Pacing::Seeded(u64::from(seed)));
    let bound = u64::from(SEEDED_MAX_TICKS) * MODEL_UNITS_PER_TICK;
    // MMIO offsets are dword indices into the 4 KiB register window.
    let mmio = |offset: u32| (offset & 0x3FF) << 2;
    let units = |m: &PlatformDevice<V3d>| m.model().stats().units + m.model().cle.stats().units;
    replay(&mut device, requests, mmio, units, bound);
});
