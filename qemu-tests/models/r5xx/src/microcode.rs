//! Microcode identity: which MicroEngine images the model runs.
//!
//! The model cannot execute ME microcode: its instruction set is not documented. What §6 (PM4)
//! describes is what the ME does *with the microcode AMD ships*, so the model parses packets
//! only when the ME RAM holds such an image, recognised by its SHA-256 ([`KNOWN_IMAGES`]). Any
//! other image — reversed, one bit flipped, truncated and padded, all zero — leaves the CP
//! fetching nothing, as unknown microcode would not run our PM4: a driver that uploads it sees
//! its ring test time out (or its read-back differ), never a working device.
//!
//! # The image bytes the model hashes
//!
//! The RAM holds 256 entries of 40 bits (§5.12: DATAH bits 7:0 on top of DATAL). The model
//! rebuilds the firmware file those entries were loaded from, `radeon/R520_cp.bin` in the
//! layout the Linux radeon driver (r100.c) loads: per entry, in order 0..=255, 8 bytes = the
//! entry's bits 39:32 as a big-endian 32-bit word (so its top 24 bits are 0), then bits 31:0 as
//! a big-endian 32-bit word; 2048 bytes in all. Entries 0xFC-0xFF are the four WAIT_SEMAPHORE
//! semaphores (§6.2.4.1), which the driver and the CP rewrite while the ME runs: they are data,
//! not code, and count as 8 zero bytes each (the file ships them zero). The SHA-256 of those
//! 2048 bytes is the file's `sha256sum` for every image in the table.
//!
//! The identity is evaluated when every code entry (0x00-0xFB) has been written since power-on,
//! and again after any later write of a code entry.

use crate::me_ram::{ME_RAM_ENTRIES, SEMAPHORE_SLOTS};
use sha2::{Digest, Sha256};

/// Bytes of a rebuilt image (256 entries × 8).
pub const IMAGE_BYTES: usize = ME_RAM_ENTRIES * 8;

/// A MicroEngine image the model runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownImage {
    /// The firmware file, relative to `/lib/firmware`.
    pub file: &'static str,
    /// Where it comes from.
    pub source: &'static str,
    /// SHA-256 of the file (= of the rebuilt image bytes, see the module documentation).
    pub sha256: [u8; 32],
}

/// The images the model runs.
pub const KNOWN_IMAGES: &[KnownImage] = &[KnownImage {
    file: "radeon/R520_cp.bin",
    source: "Debian firmware-amd-graphics 20230210-5 (bookworm, non-free-firmware), from \
             linux-firmware",
    // 830ce72c50d53c0f324242cdffede681deae05e9b9778d7e75764ffc37647d22
    sha256: [
        0x83, 0x0c, 0xe7, 0x2c, 0x50, 0xd5, 0x3c, 0x0f, 0x32, 0x42, 0x42, 0xcd, 0xff, 0xed, 0xe6,
        0x81, 0xde, 0xae, 0x05, 0xe9, 0xb9, 0x77, 0x8d, 0x7e, 0x75, 0x76, 0x4f, 0xfc, 0x37, 0x64,
        0x7d, 0x22,
    ],
}];

/// The image bytes the RAM's entries stand for (see the module documentation).
pub fn image_bytes(entries: &[u64; ME_RAM_ENTRIES]) -> [u8; IMAGE_BYTES] {
    let mut bytes = [0u8; IMAGE_BYTES];
    for (i, (entry, out)) in entries.iter().zip(bytes.chunks_exact_mut(8)).enumerate() {
        if SEMAPHORE_SLOTS.contains(&i) {
            continue;
        }
        out[..4].copy_from_slice(&((entry >> 32) as u32).to_be_bytes());
        out[4..].copy_from_slice(&(*entry as u32).to_be_bytes());
    }
    bytes
}

/// The known image the entries hold, if any.
pub fn identify(entries: &[u64; ME_RAM_ENTRIES]) -> Option<&'static KnownImage> {
    let digest: [u8; 32] = Sha256::digest(image_bytes(entries)).into();
    KNOWN_IMAGES.iter().find(|k| k.sha256 == digest)
}
