//! Evergreen / Cayman CP microcode: the PFP (prefetch parser) and ME (micro engine) images.
//!
//! Parsing and validation only; the upload (halt ME+PFP through `CP_ME_CNTL`, then
//! `CP_PFP_UCODE_ADDR` = 0 and the PFP words through `CP_PFP_UCODE_DATA`, then
//! `CP_ME_RAM_WADDR` = 0 and the ME words through `CP_ME_RAM_DATA`, each auto-incrementing)
//! arrives with the Evergreen driver.
//!
//! Images are arrays of big-endian 32-bit words of an exact length per chip
//! (shared/design/hardware-facts.md, from Linux `radeon`): CYPRESS_pfp.bin 1120 dwords,
//! CYPRESS_me.bin 1376; CAYMAN_pfp.bin and CAYMAN_me.bin 2176 each. Every 32-bit value is a
//! legal word (the data ports are 32 bits wide), so size is the whole validation. The PFP and ME
//! images are distinct types so one cannot be uploaded into the other's RAM.

use crate::FirmwareError;

/// Bytes per microcode word.
pub const WORD_BYTES: usize = 4;

/// A chip's CP microcode files and their exact sizes in dwords.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct EvergreenUcode {
    chip: &'static str,
    pfp_file: &'static str,
    pfp_dwords: usize,
    me_file: &'static str,
    me_dwords: usize,
}

impl EvergreenUcode {
    /// Cypress (HD 5850/5870): `radeon/CYPRESS_pfp.bin` 1120 dwords, `radeon/CYPRESS_me.bin`
    /// 1376 dwords.
    pub const CYPRESS: EvergreenUcode = EvergreenUcode::new(
        "CYPRESS",
        "radeon/CYPRESS_pfp.bin",
        1120,
        "radeon/CYPRESS_me.bin",
        1376,
    );

    /// Cayman (HD 6950/6970): `radeon/CAYMAN_pfp.bin` and `radeon/CAYMAN_me.bin`, 2176 dwords
    /// each.
    pub const CAYMAN: EvergreenUcode =
        EvergreenUcode::new("CAYMAN", "radeon/CAYMAN_pfp.bin", 2176, "radeon/CAYMAN_me.bin", 2176);

    /// A descriptor for another chip.
    ///
    /// # Panics
    ///
    /// If either size is 0 (in a `const`, a compile-time error).
    pub const fn new(
        chip: &'static str,
        pfp_file: &'static str,
        pfp_dwords: usize,
        me_file: &'static str,
        me_dwords: usize,
    ) -> Self {
        assert!(pfp_dwords > 0 && me_dwords > 0, "microcode sizes must be non-zero");
        EvergreenUcode { chip, pfp_file, pfp_dwords, me_file, me_dwords }
    }

    /// Chip name, e.g. `"CYPRESS"`.
    pub const fn chip(&self) -> &'static str {
        self.chip
    }
    /// PFP image path under the firmware directory.
    pub const fn pfp_file(&self) -> &'static str {
        self.pfp_file
    }
    /// PFP image size in dwords.
    pub const fn pfp_dwords(&self) -> usize {
        self.pfp_dwords
    }
    /// ME image path under the firmware directory.
    pub const fn me_file(&self) -> &'static str {
        self.me_file
    }
    /// ME image size in dwords.
    pub const fn me_dwords(&self) -> usize {
        self.me_dwords
    }
}

/// Validate a big-endian dword image of exactly `dwords` words.
fn parse_words(bytes: &[u8], dwords: usize) -> Result<(), FirmwareError> {
    if bytes.is_empty() {
        return Err(FirmwareError::Empty);
    }
    if !bytes.len().is_multiple_of(WORD_BYTES) {
        return Err(FirmwareError::TruncatedEntry { len: bytes.len(), entry_bytes: WORD_BYTES });
    }
    let expected = dwords * WORD_BYTES;
    if bytes.len() != expected {
        return Err(FirmwareError::WrongSize { expected, found: bytes.len() });
    }
    Ok(())
}

fn word_at(bytes: &[u8], index: usize) -> Option<u32> {
    let b = bytes.get(index.checked_mul(WORD_BYTES)?..)?.get(..WORD_BYTES)?;
    Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

macro_rules! dword_image {
    ($(#[$doc:meta])* $name:ident, $dwords:ident, $what:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $name<'a> {
            chip: &'static EvergreenUcode,
            bytes: &'a [u8],
        }

        impl<'a> $name<'a> {
            #[doc = concat!("Validate `bytes` as ", $what, " image for `chip`: not empty \
                ([`FirmwareError::Empty`]), whole dwords ([`FirmwareError::TruncatedEntry`]), \
                exactly the chip's dword count ([`FirmwareError::WrongSize`], in bytes). \
                Never panics.")]
            pub fn parse(
                bytes: &'a [u8],
                chip: &'static EvergreenUcode,
            ) -> Result<Self, FirmwareError> {
                parse_words(bytes, chip.$dwords)?;
                Ok($name { chip, bytes })
            }

            /// The chip descriptor the image was validated against.
            pub fn chip(&self) -> &'static EvergreenUcode {
                self.chip
            }

            /// Number of dwords.
            pub fn len(&self) -> usize {
                self.bytes.len() / WORD_BYTES
            }

            /// Always `false`: an empty image does not parse. Here for API symmetry.
            pub fn is_empty(&self) -> bool {
                self.bytes.is_empty()
            }

            /// Word `index` (host order), or `None` past the end.
            pub fn word(&self, index: usize) -> Option<u32> {
                word_at(self.bytes, index)
            }

            /// The words in upload order (host order).
            pub fn words(&self) -> impl ExactSizeIterator<Item = u32> + 'a {
                self.bytes
                    .chunks_exact(WORD_BYTES)
                    .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
            }

            /// The raw image bytes (big-endian words).
            pub fn as_bytes(&self) -> &'a [u8] {
                self.bytes
            }
        }
    };
}

dword_image!(
    /// A validated Evergreen/Cayman PFP (prefetch parser) image, e.g. `CYPRESS_pfp.bin`,
    /// borrowed from the file's bytes. Uploaded through `CP_PFP_UCODE_ADDR`/`DATA`.
    PfpMicrocode,
    pfp_dwords,
    "a PFP"
);

dword_image!(
    /// A validated Evergreen/Cayman ME (micro engine) image, e.g. `CYPRESS_me.bin`, borrowed
    /// from the file's bytes. Uploaded through `CP_ME_RAM_WADDR`/`CP_ME_RAM_DATA`.
    MeMicrocode,
    me_dwords,
    "an ME"
);
