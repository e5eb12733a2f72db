//! The emulated Evergreen/Cayman (evergreen-model) through raw mailbox requests, as a hostile
//! guest would send them (`gpu_device_model::Device::handle`: any op, BAR, offset, value),
//! interleaved with guest writes to its RAM (rings, indirect buffers, shader programs) and timer
//! polls, under seeded engine pacing.
//!
//! The first byte picks the chip (bit 0: Cayman) and whether the device starts with the real
//! PFP/ME/RLC images from /lib/firmware/radeon loaded (bit 1), so the command processor
//! actually parses what the fuzzer writes (without a known image it fetches nothing). The
//! images are uploaded through the mailbox once per chip and process; each input starts from a
//! clone of that loaded model instead of repeating the ~3300-write upload.
//!
//! Asserts: no panic; no memory access outside guest RAM; every request settles within its work
//! bound (at most `SEEDED_MAX_TICKS` ticks of at most `MAX_UNITS_PER_TICK` units each).
#![no_main]

use evergreen_model::{Asic, Engine, EvergreenModel, MAX_UNITS_PER_TICK};
use gpu_device_model::pacing::SEEDED_MAX_TICKS;
use gpu_device_model::{Device, Pacing};
use gpu_mailbox::Op;
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

#[path = "mailbox_requests.rs"]
mod mailbox_requests;
#[path = "watched_memory.rs"]
mod watched_memory;
use mailbox_requests::replay;
use watched_memory::Watched;

/// `asic` with its images uploaded through the mailbox as a driver would (each image absent
/// from /lib/firmware is left out), built once per process.
fn loaded(asic: Asic) -> &'static EvergreenModel {
    static CYPRESS: OnceLock<EvergreenModel> = OnceLock::new();
    static CAYMAN: OnceLock<EvergreenModel> = OnceLock::new();
    let cell = if asic == Asic::Cypress { &CYPRESS } else { &CAYMAN };
    cell.get_or_init(|| {
        let mut device = Device::new(EvergreenModel::new(asic), Box::new(Watched::new())).unwrap();
        // PFP 0xC150/0xC154, ME 0xC15C/0xC160, RLC 0x3F2C/0x3F30 (Linux radeon evergreend.h).
        let ports = [
            (Engine::Pfp, 0xC150, 0xC154),
            (Engine::Me, 0xC15C, 0xC160),
            (Engine::Rlc, 0x3F2C, 0x3F30),
        ];
        for (engine, addr, data) in ports {
            let Ok(bytes) = std::fs::read(format!("/lib/firmware/{}", asic.image(engine).file))
            else {
                continue;
            };
            let _ = device.handle(Op::MmioWrite as u32, 0, addr, 0);
            for c in bytes.chunks_exact(4) {
                let w = u32::from_be_bytes([c[0], c[1], c[2], c[3]]);
                let _ = device.handle(Op::MmioWrite as u32, 0, data, w);
            }
        }
        device.model().clone()
    })
}

fuzz_target!(|bytes: &[u8]| {
    let Some((&flags, requests)) = bytes.split_first() else { return };
    let asic = if flags & 1 == 0 { Asic::Cypress } else { Asic::Cayman };
    let model = if flags & 2 != 0 { loaded(asic).clone() } else { EvergreenModel::new(asic) };
    let mut device = Device::new(model, Box::new(Watched::new())).unwrap();
    device.set_pacing(Pacing::Seeded(u64::from(flags)));
    let bound = u64::from(SEEDED_MAX_TICKS) * MAX_UNITS_PER_TICK;
    // MMIO offsets are dword indices.
    replay(&mut device, requests, |offset| offset << 2, |m| m.stats().units, bound);
});
