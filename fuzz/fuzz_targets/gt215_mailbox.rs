//! The emulated GT215 (gt215-model) through raw mailbox requests, as a hostile guest would send
//! them (`gpu_device_model::Device::handle`: any op, BAR, offset, value), aimed at its register
//! blocks (PMC, PBUS/PFIFO, PTIMER, the PCOPY and PDAEMON falcon windows, the PMEM window, the
//! channel control areas, VRAM through BAR1), interleaved with guest RAM writes (pushbuffers,
//! IB entries, xfer sources) and polls, under seeded engine pacing.
//!
//! The first byte seeds the pacing; its bit 0 starts with PFIFO and PCOPY enabled and the
//! pusher and puller on, so the engines run what the fuzzer writes from the first request.
//!
//! Asserts: no panic; no memory access outside guest RAM; every request settles within its work
//! bound (at most `SEEDED_MAX_TICKS` ticks of at most `2 * INSNS_PER_TICK` falcon instructions
//! and `PUSHER_WORDS_PER_TICK` pushbuffer words each).
#![no_main]

use gpu_device_model::pacing::SEEDED_MAX_TICKS;
use gpu_device_model::{Device, Pacing};
use gpu_mailbox::Op;
use gt215_model::Gt215;
use gt215_model::falcon::INSNS_PER_TICK;
use gt215_model::pfifo::PUSHER_WORDS_PER_TICK;
use libfuzzer_sys::fuzz_target;

#[path = "watched_memory.rs"]
mod watched_memory;
use watched_memory::{RAM, Watched};

/// BAR0 bases the region byte selects (then BAR1 for VRAM): PMC, PBUS/PFIFO, PTIMER, PCOPY,
/// PDAEMON, the PMEM window, the channel control areas.
const BASES: [u32; 7] = [0x0, 0x1000, 0x9000, 0x10_4000, 0x10_a000, 0x70_0000, 0xc0_0000];

fuzz_target!(|bytes: &[u8]| {
    let Some((&flags, requests)) = bytes.split_first() else { return };
    let mut device = Device::new(Gt215::new(), Box::new(Watched::new())).unwrap();
    device.set_pacing(Pacing::Seeded(u64::from(flags)));
    if flags & 1 != 0 {
        // PMC.ENABLE PFIFO | PCOPY, CACHE1_PUSH0, CACHE1_PULL0.
        for (address, value) in [(0x200, 1 << 8 | 1 << 13), (0x3200, 1), (0x3250, 1)] {
            let _ = device.handle(Op::MmioWrite as u32, 0, address, value);
        }
    }
    let insn_bound = u64::from(SEEDED_MAX_TICKS) * 2 * u64::from(INSNS_PER_TICK);
    let word_bound = u64::from(SEEDED_MAX_TICKS) * u64::from(PUSHER_WORDS_PER_TICK);
    // Requests of 8 bytes: kind, region, 16-bit dword index, 32-bit value.
    for r in requests.chunks_exact(8) {
        let (kind, region) = (r[0], usize::from(r[1]) % (BASES.len() + 1));
        let index = u32::from(u16::from_le_bytes([r[2], r[3]]));
        let value = u32::from_le_bytes([r[4], r[5], r[6], r[7]]);
        let before = (device.model().stats().falcon_insns, device.model().pfifo().stats().words);
        match kind % 10 {
            k @ 0..=7 => {
                let op = if kind >= 250 { u32::from(kind) } else { u32::from(k) };
                let (bar, address) = match (op, BASES.get(region)) {
                    (1 | 2, Some(&base)) => (0, base + index * 4 % 0x10_0000),
                    (1 | 2, None) => (1, index * 4),
                    _ => (u32::from(r[1] % 4), index),
                };
                let _ = device.handle(op, bar, address, value);
            }
            8 => {
                let address = u64::from(index) * 4 % RAM as u64;
                let _ = device.memory_mut().write(address, &value.to_le_bytes());
            }
            _ => {
                let _ = device.poll();
            }
        }
        let insns = device.model().stats().falcon_insns - before.0;
        let words = device.model().pfifo().stats().words - before.1;
        assert!(insns <= insn_bound, "one request ran {insns} falcon instructions");
        assert!(words <= word_bound, "one request decoded {words} pushbuffer words");
    }
});
