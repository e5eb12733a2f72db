//! The emulated Evergreen/Cayman (evergreen-model) through raw mailbox requests, as a hostile
//! guest would send them (`gpu_device_model::Device::handle`: any op, BAR, offset, value),
//! interleaved with guest writes to its RAM (rings, indirect buffers, shader programs) and timer
//! polls, under seeded engine pacing.
//!
//! The first byte picks the chip (bit 0: Cayman) and whether the real PFP/ME/RLC images from
//! /lib/firmware/radeon are uploaded first (bit 1), so the command processor actually parses
//! what the fuzzer writes (without a known image it fetches nothing).
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

#[path = "watched_memory.rs"]
mod watched_memory;
use watched_memory::{RAM, Watched};

/// The chip's images as (data port, address port, words), read once; empty if absent.
fn images(asic: Asic) -> &'static [(u32, u32, Vec<u32>)] {
    static CYPRESS: OnceLock<Vec<(u32, u32, Vec<u32>)>> = OnceLock::new();
    static CAYMAN: OnceLock<Vec<(u32, u32, Vec<u32>)>> = OnceLock::new();
    let cell = if asic == Asic::Cypress { &CYPRESS } else { &CAYMAN };
    cell.get_or_init(|| {
        // PFP 0xC150/0xC154, ME 0xC15C/0xC160, RLC 0x3F2C/0x3F30 (Linux radeon evergreend.h).
        let ports = [
            (Engine::Pfp, 0xC150, 0xC154),
            (Engine::Me, 0xC15C, 0xC160),
            (Engine::Rlc, 0x3F2C, 0x3F30),
        ];
        ports
            .iter()
            .filter_map(|&(engine, addr, data)| {
                let bytes =
                    std::fs::read(format!("/lib/firmware/{}", asic.image(engine).file)).ok()?;
                let words = bytes
                    .chunks_exact(4)
                    .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
                    .collect();
                Some((addr, data, words))
            })
            .collect()
    })
}

fuzz_target!(|bytes: &[u8]| {
    let Some((&flags, requests)) = bytes.split_first() else { return };
    let asic = if flags & 1 == 0 { Asic::Cypress } else { Asic::Cayman };
    let memory = Watched::new();
    let mut device = Device::new(EvergreenModel::new(asic), Box::new(memory)).unwrap();
    device.set_pacing(Pacing::Seeded(u64::from(flags)));
    if flags & 2 != 0 {
        for (addr, data, words) in images(asic) {
            let _ = device.handle(Op::MmioWrite as u32, 0, *addr, 0);
            for &w in words {
                let _ = device.handle(Op::MmioWrite as u32, 0, *data, w);
            }
        }
    }
    let bound = u64::from(SEEDED_MAX_TICKS) * MAX_UNITS_PER_TICK;
    // Requests of 8 bytes: kind, BAR, 16-bit offset (a dword index for MMIO), 32-bit value.
    for r in requests.chunks_exact(8) {
        let (kind, bar) = (r[0], u32::from(r[1] % 4));
        let offset = u32::from(u16::from_le_bytes([r[2], r[3]]));
        let value = u32::from_le_bytes([r[4], r[5], r[6], r[7]]);
        let before = device.model().stats().units;
        match kind % 10 {
            k @ 0..=7 => {
                let op = if kind >= 250 { u32::from(kind) } else { u32::from(k) };
                let address = if op == 1 || op == 2 { offset << 2 } else { offset };
                let _ = device.handle(op, bar, address, value);
            }
            8 => {
                let address = u64::from(offset) * 4 % RAM as u64;
                let _ = device.memory_mut().write(address, &value.to_le_bytes());
            }
            _ => {
                let _ = device.poll();
            }
        }
        let units = device.model().stats().units - before;
        assert!(units <= bound, "one request ran {units} work units (bound {bound})");
    }
});
