//! The request stream the mailbox fuzz targets share (included with `#[path]`, beside
//! `watched_memory.rs`): 8 bytes per request (kind, BAR, 16-bit offset, 32-bit value). Kinds
//! 0-7 (and 250-255 as themselves) are mailbox ops sent to `Device::handle`, 8 writes a guest
//! RAM dword, 9 polls the engines like the server's timer.

use crate::watched_memory::RAM;
use gpu_device_model::{Device, GpuModel};

/// Replay `bytes` on `device`: `mmio` maps a request's offset to the address of an MMIO read
/// or write (op 1 or 2; other ops get the offset unchanged), `units` reads the model's work
/// counter. Asserts that each request ran at most `bound` units (a reset request starts the
/// counter again: then everything counted ran after it).
pub fn replay<M: GpuModel>(
    device: &mut Device<M>,
    bytes: &[u8],
    mmio: fn(u32) -> u32,
    units: fn(&M) -> u64,
    bound: u64,
) {
    for r in bytes.chunks_exact(8) {
        let (kind, bar) = (r[0], u32::from(r[1] % 4));
        let offset = u32::from(u16::from_le_bytes([r[2], r[3]]));
        let value = u32::from_le_bytes([r[4], r[5], r[6], r[7]]);
        let before = units(device.model());
        match kind % 10 {
            // Ops 1..=7 (and a few invalid ones through 0 and 250-255).
            k @ 0..=7 => {
                let op = if kind >= 250 { u32::from(kind) } else { u32::from(k) };
                let address = if op == 1 || op == 2 { mmio(offset) } else { offset };
                let _ = device.handle(op, bar, address, value);
            }
            8 => {
                // The guest writes its RAM: a dword at a 4-aligned address below `RAM`.
                let address = u64::from(offset) * 4 % RAM as u64;
                let _ = device.memory_mut().write(address, &value.to_le_bytes());
            }
            _ => {
                let _ = device.poll();
            }
        }
        let after = units(device.model());
        let ran = if after < before { after } else { after - before };
        assert!(ran <= bound, "one request ran {ran} work units (bound {bound})");
    }
}
