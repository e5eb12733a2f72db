//! R5xx command-processor MicroEngine microcode: parse, upload, read back.
//!
//! # The MicroEngine RAM (amd-r5xx-acceleration §5.12, §5.13, §11.1)
//!
//! The CP MicroEngine runs from an internal RAM of 40-bit entries addressed by the 8-bit
//! `CP_ME_RAM_ADDR.ME_RAM_ADDR` field, so it has at most 256 entries.
//!
//! - Writing (§5.12): load `CP_ME_RAM_ADDR` with the first address, then write
//!   `CP_ME_RAM_DATAH` (its low 8 bits go to the top of a 40-bit holding register) and
//!   `CP_ME_RAM_DATAL` (32 bits); the `DATAL` write commits the 40-bit entry and auto-increments
//!   the address. Repeating the pair fills successive entries without reloading the address.
//! - Reading (§5.13): writing `CP_ME_RAM_RADDR` (a mirror of the same address register, "read
//!   mode") loads the entry at that address into the holding register and auto-increments; the
//!   host then reads `DATAH` then `DATAL`, and the end of the `DATAL` read loads the next entry
//!   and auto-increments again.
//!
//! # The image (`radeon/R520_cp.bin`)
//!
//! Per Linux `radeon` r100.c (r100_cp_load_microcode): 256 entries of 8 bytes,
//! each entry two big-endian 32-bit words, the high word first (written to `DATAH`), then the low
//! word (written to `DATAL`), uploaded from address 0. The same file serves R520, RV515, RV530,
//! RV560, RV570 and R580. Entries 0xFC-0xFF are the `WAIT_SEMAPHORE` slots (§6.2.4.1); the image
//! initialises them like any other entry (the shipped file has them zero).
//!
//! # What the caller must do
//!
//! Before [`upload`] (Linux brings the CP up in this order: wait idle, load microcode, program
//! the ring, enable the command streams; Linux radeon r100.c):
//!
//! 1. Stop the command streams: `CP_CSQ_CNTL.CSQ_MODE` = 0, "Primary Disabled, Indirect
//!    Disabled" (§11.1; the reset value). [`upload`] checks this and returns
//!    [`LoadError::CommandStreamsEnabled`] otherwise: the ME must not execute packets out of a
//!    RAM that is half rewritten. R5xx has no ME halt bit (unlike Evergreen's `ME_HALT`).
//! 2. Let the engine drain: `CP_ME_CNTL.ME_BUSY` must read 0 ("MicroEngine not busy", §11.1);
//!    [`upload`] checks it once and returns [`LoadError::MicroEngineBusy`] rather than waiting,
//!    because this crate has no clock: poll [`check_ready`] with the HAL's bounded
//!    `poll_until`. (Linux additionally waits for the whole GUI to go idle through
//!    `RBBM_STATUS`, 0xE40, which §11 does not list.)
//! 3. Have exclusive use of the `CP_ME_RAM_*` registers for the duration: the address register
//!    is shared with semaphore writes (§6.2.4.1) and an interleaved access would move the
//!    auto-increment address under the upload.
//!
//! After a successful [`upload`], program the ring (`CP_RB_*`), then set `CP_CSQ_CNTL.CSQ_MODE`
//! to start fetching, and run a ring test. Leave `CP_ME_CNTL.ME_MODE` at its reset value
//! (free-running, §11.1); single-step mode would stop the ME after every instruction. On a
//! reload (after a GPU reset, say), disable the command streams first, as above.
//!
//! ```
//! use baregpu_firmware::amd::{CpMicrocode, r5xx};
//!
//! /// `file` is `radeon/R520_cp.bin` as the OS read it; `io` the R5xx register BAR.
//! fn load_cp_microcode(
//!     io: &impl baregpu_hal::RegisterIo,
//!     file: &[u8],
//! ) -> Result<r5xx::UploadReport, Box<dyn core::error::Error>> {
//!     let fw = CpMicrocode::parse(file)?; // no register touched if this fails
//!     // CP_CSQ_CNTL.CSQ_MODE = 0 and the engine idle: `upload` checks both.
//!     let report = r5xx::upload(io, &fw)?; // 1 + 512 writes, then read back and compared
//!     // Now program CP_RB_*, then enable CP_CSQ_CNTL.CSQ_MODE, then run a ring test.
//!     Ok(report)
//! }
//! ```

use crate::counting::Counting;
use core::fmt;

use baregpu_hal::{RegisterIo, RegisterIoExt};
use baregpu_regs::r5xx::cp::{
    CP_CSQ_CNTL, CP_ME_CNTL, CP_ME_RAM_ADDR, CP_ME_RAM_DATAH, CP_ME_RAM_DATAL, CP_ME_RAM_RADDR,
    cp_me_cntl,
};

use crate::FirmwareError;

/// Width in bits of the MicroEngine RAM address, `CP_ME_RAM_ADDR.ME_RAM_ADDR` (§11.1): 8.
pub const ME_RAM_ADDR_BITS: u32 = CP_ME_RAM_ADDR::ME_RAM_ADDR.width;

/// Number of MicroEngine RAM entries the 8-bit address can reach: 256.
pub const ME_RAM_ENTRIES: usize = 1 << ME_RAM_ADDR_BITS;

/// Width in bits of the high part of an entry, `CP_ME_RAM_DATAH.ME_RAM_DATAH` (§11.1): 8, the
/// top of the 40-bit entry (§5.12).
pub const ME_RAM_HIGH_BITS: u32 = CP_ME_RAM_DATAH::ME_RAM_DATAH.width;

/// Bytes per entry in the image file: two big-endian 32-bit words, high then low.
pub const ENTRY_BYTES: usize = 8;

/// Which CP microcode image a part takes, and its exact size: the per-family descriptor that
/// [`CpMicrocode::parse_for`] validates against. Later R1xx-R4xx families plug in as further
/// constants once their sizes are confirmed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CpFirmwareKind {
    name: &'static str,
    file: &'static str,
    entries: usize,
}

impl CpFirmwareKind {
    /// R520 and the R5xx family (RV515, RV530, RV560, RV570, R580): `radeon/R520_cp.bin`,
    /// 256 entries = 2048 bytes (Linux `radeon` r100.c).
    pub const R520: CpFirmwareKind = CpFirmwareKind::new("R520", "radeon/R520_cp.bin", 256);

    /// A descriptor for an image of exactly `entries` MicroEngine RAM entries.
    ///
    /// # Panics
    ///
    /// If `entries` is 0 or more than [`ME_RAM_ENTRIES`] (the RAM cannot hold it); in a `const`
    /// this is a compile-time error.
    pub const fn new(name: &'static str, file: &'static str, entries: usize) -> Self {
        assert!(entries > 0 && entries <= ME_RAM_ENTRIES, "entries must be 1..=256");
        CpFirmwareKind { name, file, entries }
    }

    /// Family name, e.g. `"R520"`.
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// Path of the image under the firmware directory, e.g. `"radeon/R520_cp.bin"`.
    pub const fn file(&self) -> &'static str {
        self.file
    }

    /// Number of MicroEngine RAM entries in the image.
    pub const fn entries(&self) -> usize {
        self.entries
    }

    /// Exact size of the image in bytes.
    pub const fn image_bytes(&self) -> usize {
        self.entries * ENTRY_BYTES
    }
}

/// One 40-bit MicroEngine RAM entry (§5.12): `high` goes to `CP_ME_RAM_DATAH`, `low` to
/// `CP_ME_RAM_DATAL`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct MeRamEntry {
    /// Bits 39:32.
    pub high: u8,
    /// Bits 31:0.
    pub low: u32,
}

impl MeRamEntry {
    /// The entry as a 40-bit number.
    pub const fn to_u64(self) -> u64 {
        ((self.high as u64) << 32) | self.low as u64
    }
}

impl fmt::Display for MeRamEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#04x}_{:08x}", self.high, self.low)
    }
}

/// A validated R5xx CP MicroEngine image, borrowed from the file's bytes (no copy).
///
/// Only [`parse`](Self::parse)/[`parse_for`](Self::parse_for) create one, so holding a
/// `CpMicrocode` means: exactly the kind's number of entries, every high word within 8 bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpMicrocode<'a> {
    kind: &'static CpFirmwareKind,
    bytes: &'a [u8],
}

impl<'a> CpMicrocode<'a> {
    /// Validate an R520-family image (`radeon/R520_cp.bin`); see [`parse_for`](Self::parse_for).
    pub fn parse(bytes: &'a [u8]) -> Result<Self, FirmwareError> {
        Self::parse_for(bytes, &CpFirmwareKind::R520)
    }

    /// Validate `bytes` as the image `kind` describes. Checks, in order:
    ///
    /// 1. not empty ([`FirmwareError::Empty`]);
    /// 2. a whole number of 8-byte entries ([`FirmwareError::TruncatedEntry`]);
    /// 3. exactly `kind.image_bytes()` ([`FirmwareError::WrongSize`]);
    /// 4. every entry's big-endian high word fits the 8-bit `ME_RAM_DATAH` field
    ///    (§11.1; [`FirmwareError::EntryOutOfRange`] names the first bad entry).
    ///
    /// Never panics, whatever the bytes.
    pub fn parse_for(
        bytes: &'a [u8],
        kind: &'static CpFirmwareKind,
    ) -> Result<Self, FirmwareError> {
        if bytes.is_empty() {
            return Err(FirmwareError::Empty);
        }
        if !bytes.len().is_multiple_of(ENTRY_BYTES) {
            return Err(FirmwareError::TruncatedEntry {
                len: bytes.len(),
                entry_bytes: ENTRY_BYTES,
            });
        }
        if bytes.len() != kind.image_bytes() {
            return Err(FirmwareError::WrongSize {
                expected: kind.image_bytes(),
                found: bytes.len(),
            });
        }
        for (index, chunk) in bytes.chunks_exact(ENTRY_BYTES).enumerate() {
            let high = be32(&chunk[..4]);
            if high >> ME_RAM_HIGH_BITS != 0 {
                return Err(FirmwareError::EntryOutOfRange { index, high });
            }
        }
        Ok(CpMicrocode { kind, bytes })
    }

    /// The descriptor the image was validated against.
    pub fn kind(&self) -> &'static CpFirmwareKind {
        self.kind
    }

    /// Number of entries (always `kind().entries()`).
    pub fn len(&self) -> usize {
        self.bytes.len() / ENTRY_BYTES
    }

    /// Always `false`: an empty image does not parse. Here for API symmetry.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Entry `index`, or `None` past the end.
    pub fn entry(&self, index: usize) -> Option<MeRamEntry> {
        let chunk = self.bytes.get(index.checked_mul(ENTRY_BYTES)?..)?.get(..ENTRY_BYTES)?;
        Some(decode_entry(chunk))
    }

    /// The entries in RAM order, from address 0.
    pub fn entries(&self) -> impl ExactSizeIterator<Item = MeRamEntry> + 'a {
        self.bytes.chunks_exact(ENTRY_BYTES).map(decode_entry)
    }

    /// The raw image bytes.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// Decode a validated 8-byte chunk (the high word is known to fit 8 bits).
fn decode_entry(chunk: &[u8]) -> MeRamEntry {
    MeRamEntry { high: be32(&chunk[..4]) as u8, low: be32(&chunk[4..8]) }
}

/// A failed upload: the device was not ready, is gone, or did not keep the image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum LoadError {
    /// `CP_CSQ_CNTL.CSQ_MODE` is not 0 ("Primary Disabled, Indirect Disabled", §11.1): a command
    /// stream is enabled and the ME could execute a half-written RAM. Nothing was written.
    CommandStreamsEnabled {
        /// The raw `CSQ_MODE` value read.
        csq_mode: u32,
    },
    /// `CP_ME_CNTL.ME_BUSY` reads 1 ("MicroEngine is active", §11.1). Nothing was written; wait
    /// for the engine to drain and retry.
    MicroEngineBusy,
    /// The device reads all-ones: it is not answering (surprise removal, a dead link, a powered
    /// down or unmapped BAR).
    ///
    /// `entry: None`: `CP_ME_CNTL` read 0xFFFF_FFFF before anything was written (nothing was
    /// written). `entry: Some(i)`: entry `i` of the read-back mismatched and both `DATAH` and
    /// `DATAL` read 0xFFFF_FFFF. A live MicroEngine RAM cannot produce that pair: `DATAH` holds
    /// only 8 bits (§11.1), so bits 31:8 of a real read are not all set, while a PCI read that
    /// nobody answers returns all-ones. Entries whose image value is `0xff_ffffffff` compare
    /// equal under the 8-bit mask and are never misreported.
    DeviceGone {
        /// The read-back entry where it was seen, or `None` before the upload.
        entry: Option<usize>,
    },
    /// Entry `index` read back (§5.13) differently from the image.
    Readback {
        /// Entry index (RAM address).
        index: usize,
        /// The image's value.
        expected: MeRamEntry,
        /// What `DATAH` (its 8-bit field) and `DATAL` returned.
        found: MeRamEntry,
    },
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            LoadError::CommandStreamsEnabled { csq_mode } => write!(
                f,
                "CP command streams are enabled (CP_CSQ_CNTL.CSQ_MODE = {csq_mode}); disable \
                 them (CSQ_MODE = 0) before loading the MicroEngine RAM"
            ),
            LoadError::MicroEngineBusy => {
                f.write_str("CP MicroEngine is busy (CP_ME_CNTL.ME_BUSY = 1); wait for it to idle")
            }
            LoadError::DeviceGone { entry: None } => {
                f.write_str("device is not answering: CP_ME_CNTL reads 0xffffffff")
            }
            LoadError::DeviceGone { entry: Some(i) } => {
                write!(f, "device is not answering: MicroEngine RAM entry {i} reads back all-ones")
            }
            LoadError::Readback { index, expected, found } => {
                write!(f, "MicroEngine RAM entry {index} reads back {found}, expected {expected}")
            }
        }
    }
}

impl core::error::Error for LoadError {}

/// What [`upload`] did, counted at the register interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct UploadReport {
    /// Entries written and verified.
    pub entries: usize,
    /// Register writes of the load phase: 1 (`CP_ME_RAM_ADDR`) + 2 per entry (`DATAH`,
    /// `DATAL`); 513 for R520.
    pub load_writes: usize,
    /// Register writes of the verify phase: 1 (`CP_ME_RAM_RADDR`).
    pub verify_writes: usize,
    /// Register reads: 2 readiness checks (`CP_ME_CNTL`, `CP_CSQ_CNTL`) + 2 per entry.
    pub reads: usize,
}

/// Check that the CP is in a state where its MicroEngine RAM may be rewritten (see the
/// [module documentation](self)): reads `CP_ME_CNTL` then `CP_CSQ_CNTL`, writes nothing.
///
/// Errors: [`LoadError::DeviceGone`] (`entry: None`) if `CP_ME_CNTL` reads 0xFFFF_FFFF,
/// [`LoadError::MicroEngineBusy`], [`LoadError::CommandStreamsEnabled`].
pub fn check_ready(io: &impl RegisterIo) -> Result<(), LoadError> {
    let me = io.read::<CP_ME_CNTL>();
    if me.raw() == u32::MAX {
        return Err(LoadError::DeviceGone { entry: None });
    }
    if me.me_busy() == cp_me_cntl::MeBusy::MicroengineIsActive {
        return Err(LoadError::MicroEngineBusy);
    }
    let csq_mode = io.read::<CP_CSQ_CNTL>().csq_mode_raw();
    if csq_mode != 0 {
        return Err(LoadError::CommandStreamsEnabled { csq_mode });
    }
    Ok(())
}

/// Write `fw` into the MicroEngine RAM (§5.12) without checks or read-back: `CP_ME_RAM_ADDR` = 0
/// once, then `DATAH`, `DATAL` per entry, relying on the auto-increment. Returns the number of
/// register writes (1 + 2 x entries).
///
/// Prefer [`upload`]; this is for callers that have checked readiness themselves and cannot
/// afford the read-back.
pub fn load(io: &impl RegisterIo, fw: &CpMicrocode<'_>) -> usize {
    io.write(CP_ME_RAM_ADDR::RESET.with_me_ram_addr(0));
    for entry in fw.entries() {
        // `with_me_ram_datah` cannot drop bits: parse guaranteed `high` fits the 8-bit field.
        io.write(CP_ME_RAM_DATAH::RESET.with_me_ram_datah(entry.high));
        io.write(CP_ME_RAM_DATAL::RESET.with_me_ram_datal(entry.low));
    }
    1 + 2 * fw.len()
}

/// Read the MicroEngine RAM back (§5.13) and compare it with `fw`: `CP_ME_RAM_RADDR` = 0 once
/// (loads entry 0 into the holding register), then read `DATAH`, `DATAL` per entry (the end of
/// each `DATAL` read loads the next entry). `DATAH` is compared on its 8-bit field only.
///
/// Stops at the first mismatch: [`LoadError::DeviceGone`] if both halves read all-ones,
/// [`LoadError::Readback`] otherwise.
pub fn verify(io: &impl RegisterIo, fw: &CpMicrocode<'_>) -> Result<(), LoadError> {
    io.write(CP_ME_RAM_RADDR::RESET.with_me_ram_raddr(0));
    for (index, expected) in fw.entries().enumerate() {
        let high = io.read::<CP_ME_RAM_DATAH>();
        let low = io.read::<CP_ME_RAM_DATAL>();
        let found = MeRamEntry { high: high.me_ram_datah(), low: low.me_ram_datal() };
        if found != expected {
            if high.raw() == u32::MAX && low.raw() == u32::MAX {
                return Err(LoadError::DeviceGone { entry: Some(index) });
            }
            return Err(LoadError::Readback { index, expected, found });
        }
    }
    Ok(())
}

/// Load `fw` into the CP MicroEngine RAM and verify it: [`check_ready`], [`load`] (1 + 2 x
/// entries writes: 513 for R520), [`verify`] (1 write, 2 x entries reads).
///
/// See the [module documentation](self) for what the caller must do before and after. On
/// [`LoadError::Readback`] or [`LoadError::DeviceGone`] with an entry the RAM holds a partial or
/// unknown image: do not enable the command streams.
pub fn upload(io: &impl RegisterIo, fw: &CpMicrocode<'_>) -> Result<UploadReport, LoadError> {
    let io = Counting::new(io);
    check_ready(&io)?;
    load(&io, fw);
    let load_writes = io.writes.get();
    verify(&io, fw)?;
    Ok(UploadReport {
        entries: fw.len(),
        load_writes,
        verify_writes: io.writes.get() - load_writes,
        reads: io.reads.get(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_come_from_the_register_database() {
        assert_eq!(ME_RAM_ADDR_BITS, 8);
        assert_eq!(ME_RAM_ENTRIES, 256);
        assert_eq!(ME_RAM_HIGH_BITS, 8);
        assert_eq!(CpFirmwareKind::R520.image_bytes(), 2048);
    }

    #[test]
    fn entry_display_is_40_bits() {
        let e = MeRamEntry { high: 0xc2, low: 0x4200_e000 };
        assert_eq!(e.to_u64(), 0xc2_4200_e000);
        extern crate std;
        assert_eq!(std::format!("{e}"), "0xc2_4200e000");
    }
}
