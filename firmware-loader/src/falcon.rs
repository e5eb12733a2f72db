//! nVidia falcon code and data upload (nvidia-hardware-envytools §2.10, v3+ falcons): a
//! [`FalconImage`] (IMEM code with the virtual page it starts at, DMEM data, entry point),
//! checked on its own when made and against the engine's segment sizes (`UC_CAPS`) before any
//! register is written, then written through the engine's IO ports and read back by
//! [`FalconLoader::upload`]. The loader never starts the falcon: the driver sets the entry
//! point and starts it.
//!
//! # The ports (§2.10.7 "Code upload and peeking", §2.10.4 "Accessing data segment through IO")
//!
//! - Code: `CODE_INDEX` selects the physical code address (bits 2-15) with the write (bit 24)
//!   or read (bit 25) auto-increment flag; each `CODE` write stores a 32-bit LE word and moves
//!   on by 4. Writing word 0 of a page samples `CODE_VIRT` as the page's virtual page index
//!   (its TLB entry goes busy) and writing word 0x3f completes it (usable). So the upload is
//!   `CODE_INDEX` once, then per 0x100-byte page `CODE_VIRT` and 0x40 `CODE` writes.
//! - Data: `DATA_INDEX[0]` (bits 2-15, the same auto-increment flags), then one `DATA[0]` write
//!   per word.
//! - Sizes: "The number of physical pages in the code segment can be determined by looking at
//!   UC_CAPS register, bits 0-8" (§2.10.7); the data segment's size is "UC_CAPS register, bits
//!   9-16 shifted left by 8" (§2.10.4).
//!
//! The floor, counted by [`FalconUploadReport`]: 1 + pages + code words + 1 + data words
//! writes to load; 2 more (the two index registers in read mode) to verify.
//!
//! ```
//! use baregpu_firmware::falcon::{FalconImage, FalconImageError};
//!
//! let code = [0u8; 0x200]; // two pages
//! let image = FalconImage::new(&code, 0x10, &[0u8; 64], 0x1000)?; // mapped at 0x1000
//! assert_eq!(image.code_pages(), 2);
//! // Code that is not whole pages, or an entry outside it, never reaches a device:
//! assert!(matches!(FalconImage::new(&code[..0x180], 0, &[], 0), Err(FalconImageError::CodeNotPages { .. })));
//! assert!(matches!(FalconImage::new(&code, 0x10, &[], 0x1200), Err(FalconImageError::EntryOutsideCode { .. })));
//! // baregpu_firmware::falcon::FalconLoader::<_, falcon::Pdaemon>::new(&bar0).upload(&image)?
//! # Ok::<(), FalconImageError>(())
//! ```

use core::fmt;
use core::marker::PhantomData;

use baregpu_hal::register::Instance;
use baregpu_hal::{RegisterIo, RegisterIoExt};
use baregpu_regs::nvidia::falcon::{self, CODE, CODE_INDEX, CODE_VIRT, DATA, DATA_INDEX, UC_CAPS};

use crate::counting::Counting;

/// Bytes per code page (§2.10.7: "The page size is 0x100 bytes").
pub const PAGE_BYTES: usize = 0x100;
/// Words per code page.
pub const PAGE_WORDS: usize = PAGE_BYTES / 4;
/// Virtual page indices a TLB entry holds (PTLB: "bits 8-23: virtual page index").
pub const VIRTUAL_PAGES: usize = 1 << 16;
/// The code and data addresses the index registers reach (bits 2-15).
pub const PORT_REACH: usize = 1 << (CODE_INDEX::ADDRESS.lsb + CODE_INDEX::ADDRESS.width);

/// An image that cannot be a falcon's, whatever the engine (found before any register access).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum FalconImageError {
    /// No code.
    EmptyCode,
    /// Code that is not whole 0x100-byte pages (a page is complete only when its last word is
    /// written, §2.10.7).
    CodeNotPages {
        /// Code length in bytes.
        bytes: usize,
    },
    /// Data that is not whole 32-bit words (`DATA` writes words).
    DataNotWords {
        /// Data length in bytes.
        bytes: usize,
    },
    /// Code or data past what the 14-bit port address reaches (64 KiB).
    BeyondPorts {
        /// Segment length in bytes.
        bytes: usize,
    },
    /// Virtual pages past the 16-bit virtual page index.
    VirtualPagesOutOfRange {
        /// First virtual page.
        first: u32,
        /// Pages.
        pages: usize,
    },
    /// An entry point outside the code's virtual range.
    EntryOutsideCode {
        /// The entry point (a virtual code address).
        entry: u32,
        /// First virtual address of the code.
        start: u32,
        /// One past its last.
        end: u32,
    },
}

impl fmt::Display for FalconImageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            FalconImageError::EmptyCode => f.write_str("falcon image has no code"),
            FalconImageError::CodeNotPages { bytes } => {
                write!(f, "falcon code of {bytes} bytes is not whole 0x100-byte pages")
            }
            FalconImageError::DataNotWords { bytes } => {
                write!(f, "falcon data of {bytes} bytes is not whole 32-bit words")
            }
            FalconImageError::BeyondPorts { bytes } => {
                write!(f, "a segment of {bytes} bytes is past the ports' {PORT_REACH:#x}")
            }
            FalconImageError::VirtualPagesOutOfRange { first, pages } => {
                write!(f, "{pages} code pages from virtual page {first:#x} pass page 0xffff")
            }
            FalconImageError::EntryOutsideCode { entry, start, end } => {
                write!(f, "entry point {entry:#x} is outside the code ({start:#x}..{end:#x})")
            }
        }
    }
}

impl core::error::Error for FalconImageError {}

/// A falcon program: code uploaded from physical page 0 and mapped from virtual page
/// `code_virt_page` on, data uploaded from DMEM address 0, and its entry point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FalconImage<'a> {
    code: &'a [u8],
    code_virt_page: u16,
    data: &'a [u8],
    entry: u32,
}

impl<'a> FalconImage<'a> {
    /// An image of `code` (whole 0x100-byte pages, mapped from virtual page
    /// `code_virt_page`), `data` (whole words) and `entry` (a virtual code address inside the
    /// code), or why it cannot be one.
    pub fn new(
        code: &'a [u8],
        code_virt_page: u16,
        data: &'a [u8],
        entry: u32,
    ) -> Result<Self, FalconImageError> {
        if code.is_empty() {
            return Err(FalconImageError::EmptyCode);
        }
        if !code.len().is_multiple_of(PAGE_BYTES) {
            return Err(FalconImageError::CodeNotPages { bytes: code.len() });
        }
        if !data.len().is_multiple_of(4) {
            return Err(FalconImageError::DataNotWords { bytes: data.len() });
        }
        for bytes in [code.len(), data.len()] {
            if bytes > PORT_REACH {
                return Err(FalconImageError::BeyondPorts { bytes });
            }
        }
        let pages = code.len() / PAGE_BYTES;
        let first = u32::from(code_virt_page);
        if first as usize + pages > VIRTUAL_PAGES {
            return Err(FalconImageError::VirtualPagesOutOfRange { first, pages });
        }
        let start = first * PAGE_BYTES as u32;
        let end = start + code.len() as u32;
        if !(start..end).contains(&entry) {
            return Err(FalconImageError::EntryOutsideCode { entry, start, end });
        }
        Ok(FalconImage { code, code_virt_page, data, entry })
    }

    /// The code.
    pub fn code(&self) -> &'a [u8] {
        self.code
    }

    /// Its pages.
    pub fn code_pages(&self) -> usize {
        self.code.len() / PAGE_BYTES
    }

    /// The virtual page the code starts at.
    pub fn code_virt_page(&self) -> u16 {
        self.code_virt_page
    }

    /// The data.
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    /// The entry point (a virtual code address), for the driver to start the falcon at.
    pub fn entry(&self) -> u32 {
        self.entry
    }
}

fn words(bytes: &[u8]) -> impl Iterator<Item = u32> + '_ {
    bytes.chunks_exact(4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
}

/// Which falcon segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Segment {
    /// IMEM.
    Code,
    /// DMEM.
    Data,
}

/// A failed upload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum FalconLoadError {
    /// The engine's segment is smaller than the image's (`UC_CAPS`). Nothing was written.
    TooLarge {
        /// Which segment.
        segment: Segment,
        /// The image's bytes.
        bytes: usize,
        /// The engine's.
        capacity: usize,
    },
    /// `UC_CAPS` reads all-ones: the engine is not answering (not present, powered down,
    /// disabled in PMC, or the device is gone). Nothing was written.
    DeviceGone,
    /// A word read back differs from the image.
    Readback {
        /// Which segment.
        segment: Segment,
        /// Byte offset in it.
        offset: usize,
        /// The image's word.
        expected: u32,
        /// What the port returned.
        found: u32,
    },
}

impl fmt::Display for FalconLoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            FalconLoadError::TooLarge { segment, bytes, capacity } => {
                write!(f, "{segment:?} of {bytes} bytes does not fit the falcon's {capacity}")
            }
            FalconLoadError::DeviceGone => {
                f.write_str("the falcon is not answering (UC_CAPS all-ones)")
            }
            FalconLoadError::Readback { segment, offset, expected, found } => write!(
                f,
                "{segment:?} word at {offset:#x} reads back {found:#010x}, expected {expected:#010x}"
            ),
        }
    }
}

impl core::error::Error for FalconLoadError {}

/// The engine's segment sizes, from `UC_CAPS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct FalconCaps {
    /// Code segment bytes (physical pages x 0x100).
    pub code_bytes: usize,
    /// Data segment bytes.
    pub data_bytes: usize,
}

/// What [`FalconLoader::upload`] did, counted at the register interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct FalconUploadReport {
    /// Code pages written and verified.
    pub code_pages: usize,
    /// Data words written and verified.
    pub data_words: usize,
    /// Writes of the load: 1 + pages + code words + 1 + data words (the floor).
    pub load_writes: usize,
    /// Writes of the verify: the two index registers in read mode.
    pub verify_writes: usize,
    /// Reads: `UC_CAPS`, then every word back.
    pub reads: usize,
}

/// Uploads images to the falcon `E` (a generated instance: `falcon::Pdaemon`,
/// `falcon::Pcopy0`) of the register window `IO` (BAR0).
#[derive(Debug)]
pub struct FalconLoader<'io, IO, E> {
    io: &'io IO,
    engine: PhantomData<fn() -> E>,
}

impl<'io, IO, E> FalconLoader<'io, IO, E>
where
    IO: RegisterIo,
    E: Instance<Family = baregpu_regs::nvidia::Family, Block = falcon::Block>,
{
    /// A loader for engine `E` in `io`.
    pub fn new(io: &'io IO) -> Self {
        FalconLoader { io, engine: PhantomData }
    }

    fn caps_of(io: &impl RegisterIo) -> Result<FalconCaps, FalconLoadError> {
        let caps = io.at::<E>().read::<UC_CAPS>();
        if caps.raw() == u32::MAX {
            return Err(FalconLoadError::DeviceGone);
        }
        Ok(FalconCaps {
            code_bytes: usize::from(caps.code_pages()) * PAGE_BYTES,
            // "bits 9-16 shifted left by 8": the field counts 0x100-byte units.
            data_bytes: usize::from(caps.data_size()) * PAGE_BYTES,
        })
    }

    /// The engine's segment sizes (one read of `UC_CAPS`, no write).
    pub fn caps(&self) -> Result<FalconCaps, FalconLoadError> {
        Self::caps_of(self.io)
    }

    /// Check `image` against the engine (one read), write its code and data through the
    /// ports, read both back and compare. The falcon is not started. On a size error nothing
    /// was written; on a read-back error the segments hold an unknown image: do not start it.
    pub fn upload(&self, image: &FalconImage<'_>) -> Result<FalconUploadReport, FalconLoadError> {
        let counted = Counting::new(self.io);
        let caps = Self::caps_of(&counted)?;
        for (segment, bytes, capacity) in [
            (Segment::Code, image.code.len(), caps.code_bytes),
            (Segment::Data, image.data.len(), caps.data_bytes),
        ] {
            if bytes > capacity {
                return Err(FalconLoadError::TooLarge { segment, bytes, capacity });
            }
        }
        let e = counted.at::<E>();
        // Code: the index once, then per page its virtual index and its words (§2.10.7).
        e.write(CODE_INDEX::RESET.with_address(0).with_write_autoincrement(true));
        for (page, bytes) in image.code.chunks(PAGE_BYTES).enumerate() {
            let virt = u32::from(image.code_virt_page) + page as u32;
            e.write(CODE_VIRT::RESET.with_code_virt(virt));
            for w in words(bytes) {
                e.write(CODE::RESET.with_code(w));
            }
        }
        // Data through port 0 (§2.10.4).
        if !image.data.is_empty() {
            e.write_nth::<DATA_INDEX, 0>(
                DATA_INDEX::RESET.with_address(0).with_write_autoincrement(true),
            );
            for w in words(image.data) {
                e.write_nth::<DATA, 0>(DATA::RESET.with_data(w));
            }
        }
        let load_writes = counted.writes.get();
        e.write(CODE_INDEX::RESET.with_address(0).with_read_autoincrement(true));
        for (i, expected) in words(image.code).enumerate() {
            let found = e.read::<CODE>().code();
            if found != expected {
                return Err(FalconLoadError::Readback {
                    segment: Segment::Code,
                    offset: i * 4,
                    expected,
                    found,
                });
            }
        }
        if !image.data.is_empty() {
            e.write_nth::<DATA_INDEX, 0>(
                DATA_INDEX::RESET.with_address(0).with_read_autoincrement(true),
            );
            for (i, expected) in words(image.data).enumerate() {
                let found = e.read_nth::<DATA, 0>().data();
                if found != expected {
                    return Err(FalconLoadError::Readback {
                        segment: Segment::Data,
                        offset: i * 4,
                        expected,
                        found,
                    });
                }
            }
        }
        Ok(FalconUploadReport {
            code_pages: image.code_pages(),
            data_words: image.data.len() / 4,
            load_writes,
            verify_writes: counted.writes.get() - load_writes,
            reads: counted.reads.get(),
        })
    }
}
