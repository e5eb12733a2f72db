//! Evergreen / Cayman CP microcode: the PFP (prefetch parser), ME (micro engine) and RLC
//! (run-list controller) images, parsed, uploaded and read back.
//!
//! Images are arrays of big-endian 32-bit words of an exact length per chip (Linux radeon
//! evergreen.c / ni.c, `EVERGREEN_PFP_UCODE_SIZE` 1120, `EVERGREEN_PM4_UCODE_SIZE` 1376,
//! `EVERGREEN_RLC_UCODE_SIZE` 768, `CAYMAN_PFP_UCODE_SIZE` / `CAYMAN_PM4_UCODE_SIZE` 2176,
//! `CAYMAN_RLC_UCODE_SIZE` 1024). Every 32-bit value is a legal word (the data ports are 32 bits
//! wide), so size is the whole validation: an image of the other chip has the other size and
//! is rejected. The three images are distinct types so one cannot be uploaded into another's
//! RAM, and [`EvergreenFirmware`] holds a set parsed against one chip.
//!
//! # Upload ([`upload`], Linux radeon evergreen.c `evergreen_cp_load_microcode`, `r600_rlc_resume`)
//!
//! 1. Halt the ME and the PFP (`CP_ME_CNTL.ME_HALT`, `PFP_HALT`) and stop the RLC
//!    (`RLC_CNTL` = 0): neither may run from a RAM being rewritten.
//! 2. `CP_PFP_UCODE_ADDR` = 0, the PFP words through `CP_PFP_UCODE_DATA`; `CP_ME_RAM_WADDR` = 0,
//!    the ME words through `CP_ME_RAM_DATA`; `RLC_UCODE_ADDR` = 0, the RLC words through
//!    `RLC_UCODE_DATA`. Each data port auto-increments its address, so an image costs one address
//!    write plus one write per word.
//! 3. Read back: the address register (`CP_ME_RAM_RADDR` for the ME) = 0, then one read of the
//!    data port per word, compared with the image.
//!
//! The engines stay halted: the driver programs the ring, writes `ME_INITIALIZE` and only then
//! clears the halt bits (Linux `evergreen_cp_start`), and enables the RLC.

use crate::counting::Counting;
use core::fmt;

use baregpu_hal::{RegisterIo, RegisterIoExt};
use baregpu_regs::evergreen::Chipset;
use baregpu_regs::evergreen::cp::{
    CP_ME_CNTL, CP_ME_RAM_DATA, CP_ME_RAM_RADDR, CP_ME_RAM_WADDR, CP_PFP_UCODE_ADDR,
    CP_PFP_UCODE_DATA,
};
use baregpu_regs::evergreen::rlc::{RLC_CNTL, RLC_UCODE_ADDR, RLC_UCODE_DATA};

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
    rlc_file: &'static str,
    rlc_dwords: usize,
}

impl EvergreenUcode {
    /// Cypress (HD 5850/5870): `radeon/CYPRESS_pfp.bin` 1120 dwords, `radeon/CYPRESS_me.bin`
    /// 1376 dwords, `radeon/CYPRESS_rlc.bin` 768 dwords (Linux radeon evergreen.c).
    pub const CYPRESS: EvergreenUcode = EvergreenUcode::new(
        "CYPRESS",
        ("radeon/CYPRESS_pfp.bin", 1120),
        ("radeon/CYPRESS_me.bin", 1376),
        ("radeon/CYPRESS_rlc.bin", 768),
    );

    /// Cayman (HD 6950/6970): `radeon/CAYMAN_pfp.bin` and `radeon/CAYMAN_me.bin`, 2176 dwords
    /// each, `radeon/CAYMAN_rlc.bin` 1024 dwords (Linux radeon ni.c).
    pub const CAYMAN: EvergreenUcode = EvergreenUcode::new(
        "CAYMAN",
        ("radeon/CAYMAN_pfp.bin", 2176),
        ("radeon/CAYMAN_me.bin", 2176),
        ("radeon/CAYMAN_rlc.bin", 1024),
    );

    /// The descriptor of a chipset of the Evergreen register database; `None` for a chipset
    /// added to the database after this crate knew its microcode (`Chipset` is
    /// non-exhaustive: pass a descriptor from [`new`](Self::new) for it).
    pub const fn of(chip: Chipset) -> Option<&'static EvergreenUcode> {
        match chip {
            Chipset::CYPRESS => Some(&EvergreenUcode::CYPRESS),
            Chipset::CAYMAN => Some(&EvergreenUcode::CAYMAN),
            _ => None,
        }
    }

    /// A descriptor for another chip: `(file, dwords)` of the PFP, ME and RLC images.
    ///
    /// # Panics
    ///
    /// If a size is 0 (in a `const`, a compile-time error).
    pub const fn new(
        chip: &'static str,
        pfp: (&'static str, usize),
        me: (&'static str, usize),
        rlc: (&'static str, usize),
    ) -> Self {
        assert!(pfp.1 > 0 && me.1 > 0 && rlc.1 > 0, "microcode sizes must be non-zero");
        EvergreenUcode {
            chip,
            pfp_file: pfp.0,
            pfp_dwords: pfp.1,
            me_file: me.0,
            me_dwords: me.1,
            rlc_file: rlc.0,
            rlc_dwords: rlc.1,
        }
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
    /// RLC image path under the firmware directory.
    pub const fn rlc_file(&self) -> &'static str {
        self.rlc_file
    }
    /// RLC image size in dwords.
    pub const fn rlc_dwords(&self) -> usize {
        self.rlc_dwords
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

dword_image!(
    /// A validated Evergreen/Cayman RLC (run-list controller) image, e.g. `CYPRESS_rlc.bin`,
    /// borrowed from the file's bytes. Uploaded through `RLC_UCODE_ADDR`/`RLC_UCODE_DATA`.
    RlcMicrocode,
    rlc_dwords,
    "an RLC"
);

/// The three images of one chip, each validated against the same [`EvergreenUcode`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EvergreenFirmware<'a> {
    /// Prefetch parser image.
    pub pfp: PfpMicrocode<'a>,
    /// Micro engine image.
    pub me: MeMicrocode<'a>,
    /// Run-list controller image.
    pub rlc: RlcMicrocode<'a>,
}

impl<'a> EvergreenFirmware<'a> {
    /// Parse the PFP, ME and RLC files of `chip` (see the `parse` functions of each image). The
    /// first error is returned with the image it concerns; nothing touches a register.
    pub fn parse(
        chip: &'static EvergreenUcode,
        pfp: &'a [u8],
        me: &'a [u8],
        rlc: &'a [u8],
    ) -> Result<Self, ImageError> {
        let image = |which| move |error| ImageError { image: which, error };
        Ok(EvergreenFirmware {
            pfp: PfpMicrocode::parse(pfp, chip).map_err(image(Image::Pfp))?,
            me: MeMicrocode::parse(me, chip).map_err(image(Image::Me))?,
            rlc: RlcMicrocode::parse(rlc, chip).map_err(image(Image::Rlc))?,
        })
    }

    /// The chip the set was validated against.
    pub fn chip(&self) -> &'static EvergreenUcode {
        self.pfp.chip()
    }
}

/// Which of the three images.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Image {
    /// The prefetch parser image (`*_pfp.bin`).
    Pfp,
    /// The micro engine image (`*_me.bin`).
    Me,
    /// The run-list controller image (`*_rlc.bin`).
    Rlc,
}

impl fmt::Display for Image {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Image::Pfp => "PFP",
            Image::Me => "ME",
            Image::Rlc => "RLC",
        })
    }
}

/// An image of an [`EvergreenFirmware`] set that did not parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct ImageError {
    /// The image.
    pub image: Image,
    /// Why.
    pub error: FirmwareError,
}

impl ImageError {
    /// `image` did not parse, for `error`.
    pub const fn new(image: Image, error: FirmwareError) -> ImageError {
        ImageError { image, error }
    }
}

impl fmt::Display for ImageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The parse error is the source, not repeated here.
        write!(f, "the {} image is not valid", self.image)
    }
}

impl core::error::Error for ImageError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// Why an upload failed after validation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum LoadError {
    /// `CP_ME_CNTL` read 0xFFFF_FFFF: the device is not answering (nothing was written when
    /// `image` is `None`; otherwise seen during the read-back of `image`).
    DeviceGone {
        /// The image whose read-back saw it, or `None` before the upload.
        image: Option<Image>,
    },
    /// Word `index` of `image` read back differently from the image.
    Readback {
        /// The image.
        image: Image,
        /// Word index (RAM address).
        index: usize,
        /// The image's word.
        expected: u32,
        /// What the data port returned.
        found: u32,
    },
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::DeviceGone { image: None } => {
                f.write_str("device is not answering (CP_ME_CNTL reads 0xffffffff)")
            }
            LoadError::DeviceGone { image: Some(i) } => {
                write!(f, "device stopped answering during the {i} read-back")
            }
            LoadError::Readback { image, index, expected, found } => write!(
                f,
                "{image} word {index} read back {found:#010x}, the image has {expected:#010x}"
            ),
        }
    }
}

impl core::error::Error for LoadError {}

/// What [`upload`] did, counted at the register interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct UploadReport {
    /// Register writes that loaded the PFP: 1 address + 1 per word.
    pub pfp_writes: usize,
    /// Register writes that loaded the ME: 1 address + 1 per word.
    pub me_writes: usize,
    /// Register writes that loaded the RLC: 1 address + 1 per word.
    pub rlc_writes: usize,
    /// Register writes of the read-back (one address write per image).
    pub verify_writes: usize,
    /// Register reads (the liveness read of `CP_ME_CNTL` + one per word read back).
    pub reads: usize,
}

/// Halt the ME and PFP (`CP_ME_CNTL`) and stop the RLC (`RLC_CNTL` = 0). Two writes, after one
/// read of `CP_ME_CNTL` that must not be all-ones ([`LoadError::DeviceGone`], nothing written).
pub fn halt(io: &impl RegisterIo) -> Result<(), LoadError> {
    if io.read::<CP_ME_CNTL>().raw() == u32::MAX {
        return Err(LoadError::DeviceGone { image: None });
    }
    io.write(CP_ME_CNTL::RESET.with_me_halt(true).with_pfp_halt(true));
    io.write(RLC_CNTL::RESET);
    Ok(())
}

/// Write the three images with auto-increment, without checks or read-back: per image one
/// address write (0) and one data write per word. The engines must be halted ([`halt`]).
pub fn load(io: &impl RegisterIo, fw: &EvergreenFirmware<'_>) {
    load_pfp(io, &fw.pfp);
    load_me(io, &fw.me);
    load_rlc(io, &fw.rlc);
}

fn load_pfp(io: &impl RegisterIo, pfp: &PfpMicrocode<'_>) {
    io.write(CP_PFP_UCODE_ADDR::RESET);
    for w in pfp.words() {
        io.write(CP_PFP_UCODE_DATA::RESET.with_cp_pfp_ucode_data(w));
    }
}

fn load_me(io: &impl RegisterIo, me: &MeMicrocode<'_>) {
    io.write(CP_ME_RAM_WADDR::RESET);
    for w in me.words() {
        io.write(CP_ME_RAM_DATA::RESET.with_cp_me_ram_data(w));
    }
}

fn load_rlc(io: &impl RegisterIo, rlc: &RlcMicrocode<'_>) {
    io.write(RLC_UCODE_ADDR::RESET);
    for w in rlc.words() {
        io.write(RLC_UCODE_DATA::RESET.with_rlc_ucode_data(w));
    }
}

/// Read the three RAMs back (address register = 0, then one data-port read per word) and
/// compare them with `fw`. Stops at the first mismatch: [`LoadError::DeviceGone`] when the word
/// read all-ones and `CP_ME_CNTL` does too, [`LoadError::Readback`] otherwise.
pub fn verify(io: &impl RegisterIo, fw: &EvergreenFirmware<'_>) -> Result<(), LoadError> {
    let check = |image, index, expected: u32, found: u32| {
        if found == expected {
            Ok(())
        } else if found == u32::MAX && io.read::<CP_ME_CNTL>().raw() == u32::MAX {
            Err(LoadError::DeviceGone { image: Some(image) })
        } else {
            Err(LoadError::Readback { image, index, expected, found })
        }
    };
    io.write(CP_PFP_UCODE_ADDR::RESET);
    for (i, w) in fw.pfp.words().enumerate() {
        check(Image::Pfp, i, w, io.read::<CP_PFP_UCODE_DATA>().raw())?;
    }
    io.write(CP_ME_RAM_RADDR::RESET);
    for (i, w) in fw.me.words().enumerate() {
        check(Image::Me, i, w, io.read::<CP_ME_RAM_DATA>().raw())?;
    }
    io.write(RLC_UCODE_ADDR::RESET);
    for (i, w) in fw.rlc.words().enumerate() {
        check(Image::Rlc, i, w, io.read::<RLC_UCODE_DATA>().raw())?;
    }
    Ok(())
}

/// [`halt`], [`load`] and [`verify`]: the engines are left halted (see the
/// [module documentation](self)). The report counts what reached the register interface.
pub fn upload(io: &impl RegisterIo, fw: &EvergreenFirmware<'_>) -> Result<UploadReport, LoadError> {
    let io = Counting::new(io);
    halt(&io)?;
    let writes = || io.writes.get();
    let start = writes();
    load_pfp(&io, &fw.pfp);
    let pfp_end = writes();
    load_me(&io, &fw.me);
    let me_end = writes();
    load_rlc(&io, &fw.rlc);
    let rlc_end = writes();
    verify(&io, fw)?;
    Ok(UploadReport {
        pfp_writes: pfp_end - start,
        me_writes: me_end - pfp_end,
        rlc_writes: rlc_end - me_end,
        verify_writes: writes() - rlc_end,
        reads: io.reads.get(),
    })
}
