//! Image validation errors, shared by every microcode format.

use core::fmt;

/// A microcode image that must not be uploaded. Returned by the `parse` functions, before any
/// register access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum FirmwareError {
    /// The image has no bytes at all (a missing or truncated-to-zero file).
    Empty,
    /// The length is not a whole number of entries: `len` bytes with `entry_bytes`-byte entries
    /// (8 for an R5xx MicroEngine RAM entry, 4 for an Evergreen dword). Linux `radeon` rejects
    /// such files too.
    TruncatedEntry {
        /// Image length in bytes.
        len: usize,
        /// Size of one entry in bytes.
        entry_bytes: usize,
    },
    /// Whole entries, but not as many as the part's RAM holds. Both sizes are in bytes.
    WrongSize {
        /// Size the firmware kind requires, in bytes.
        expected: usize,
        /// Size of the image, in bytes.
        found: usize,
    },
    /// An R5xx MicroEngine RAM entry whose high word does not fit the 8-bit
    /// `CP_ME_RAM_DATAH.ME_RAM_DATAH` field (amd-r5xx-acceleration §11.1): the RAM is 40 bits
    /// wide (§5.12), so the bits above would be silently dropped by the hardware.
    EntryOutOfRange {
        /// Index of the first offending entry (0-based).
        index: usize,
        /// Its high word as stored in the image.
        high: u32,
    },
}

impl fmt::Display for FirmwareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            FirmwareError::Empty => f.write_str("microcode image is empty"),
            FirmwareError::TruncatedEntry { len, entry_bytes } => write!(
                f,
                "microcode image of {len} bytes is not a whole number of {entry_bytes}-byte \
                 entries ({} trailing bytes)",
                len % entry_bytes
            ),
            FirmwareError::WrongSize { expected, found } => {
                write!(f, "microcode image is {found} bytes; this part needs exactly {expected}")
            }
            FirmwareError::EntryOutOfRange { index, high } => write!(
                f,
                "microcode entry {index}: high word {high:#x} does not fit the 8-bit \
                 CP_ME_RAM_DATAH field (40-bit MicroEngine RAM)"
            ),
        }
    }
}

impl core::error::Error for FirmwareError {}
