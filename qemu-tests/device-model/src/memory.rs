//! Guest memory as a bus master sees it: bounds-checked DMA reads and writes at guest-physical
//! (bus) addresses.
//!
//! - [`SharedFileMemory`]: QEMU's guest RAM, a `memory-backend-file` (`share=on`) this process
//!   maps too, with q35's guest-physical → file-offset layout ([`RamLayout::q35`]).
//! - [`VecMemory`]: a heap buffer whose bus addresses are its offsets, for in-process tests.
//!
//! An access that is not entirely inside guest RAM is refused with a [`DmaFault`] and touches
//! nothing.

use crate::sys::{self, Mapping};
use std::alloc::{self, Layout};
use std::fmt;
use std::fs::OpenOptions;
use std::io;
use std::os::fd::AsFd;
use std::path::Path;
use std::ptr::NonNull;
use std::sync::Arc;

/// Why a DMA access was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DmaFaultKind {
    /// Some byte of the access is not guest RAM (beyond its end, in the PCI hole, or the
    /// address computation overflowed).
    OutsideRam,
    /// The function's bus-master enable (command register bit 2) is off: the device may not
    /// start bus cycles, as on real hardware.
    BusMasterDisabled,
}

/// A refused DMA access: nothing was read or written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DmaFault {
    /// Bus address of the first byte.
    pub address: u64,
    /// Length in bytes.
    pub len: usize,
    /// Why.
    pub kind: DmaFaultKind,
}

impl fmt::Display for DmaFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let why = match self.kind {
            DmaFaultKind::OutsideRam => "outside guest RAM",
            DmaFaultKind::BusMasterDisabled => "with bus mastering disabled",
        };
        write!(f, "DMA of {} bytes at {:#x} {why}", self.len, self.address)
    }
}

impl std::error::Error for DmaFault {}

/// Memory a device model reaches by DMA.
pub trait GuestMemory: Send {
    /// Bytes of RAM (not counting holes).
    fn ram_size(&self) -> u64;
    /// Copy `buf.len()` bytes at bus address `address` into `buf`, or nothing.
    fn read(&self, address: u64, buf: &mut [u8]) -> Result<(), DmaFault>;
    /// Copy `data` to bus address `address`, or nothing.
    fn write(&mut self, address: u64, data: &[u8]) -> Result<(), DmaFault>;
}

/// Where guest RAM sits in guest-physical space, as chunks of the RAM file.
///
/// q35 (QEMU `hw/i386/pc_q35.c`, `pc_q35_init`): with less than 2.75 GiB
/// (`0xB000_0000`) of RAM all of it is below 4 GiB at its file offset (identity). With more,
/// the first 2 GiB are at 0 and the rest at 4 GiB (file offset 2 GiB onwards); the range in
/// between is the PCI hole and MMCONFIG. The `max-ram-below-4g` machine option changes this
/// split and is not supported. (The legacy VGA window 0xA0000-0xBFFFF is RAM in the file, and
/// is treated as RAM here.)
///
/// Arm `virt` (QEMU `hw/arm/virt.c`, `VIRT_MEM`): all RAM in one chunk from 0x4000_0000
/// ([`virt`](Self::virt)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RamLayout {
    /// Guest-physical address of file offset 0.
    base: u64,
    below_4g: u64,
    above_4g: u64,
}

const FOUR_GIB: u64 = 1 << 32;
/// Where Arm `virt` puts RAM (`VIRT_MEM`).
pub const VIRT_RAM_BASE: u64 = 0x4000_0000;

impl RamLayout {
    /// All RAM at bus address = file offset.
    pub const fn identity(size: u64) -> Self {
        RamLayout { base: 0, below_4g: size, above_4g: 0 }
    }

    /// QEMU Arm `virt` machine with `ram_size` bytes: one chunk at [`VIRT_RAM_BASE`].
    pub const fn virt(ram_size: u64) -> Self {
        RamLayout { base: VIRT_RAM_BASE, below_4g: ram_size, above_4g: 0 }
    }

    /// QEMU q35 machine with `ram_size` bytes.
    pub const fn q35(ram_size: u64) -> Self {
        if ram_size >= 0xB000_0000 {
            RamLayout { base: 0, below_4g: 0x8000_0000, above_4g: ram_size - 0x8000_0000 }
        } else {
            RamLayout::identity(ram_size)
        }
    }

    /// Total RAM bytes.
    pub const fn size(&self) -> u64 {
        self.below_4g + self.above_4g
    }

    /// File offset of `len` bytes at `address`, if they are all RAM in one chunk.
    pub fn translate(&self, address: u64, len: usize) -> Result<u64, DmaFault> {
        let fault = DmaFault { address, len, kind: DmaFaultKind::OutsideRam };
        let end = address.checked_add(len as u64).ok_or(fault)?;
        if self.base != 0 {
            // One chunk at `base` (virt).
            let offset = address.checked_sub(self.base).ok_or(fault)?;
            return if end - self.base <= self.below_4g { Ok(offset) } else { Err(fault) };
        }
        if end <= self.below_4g {
            Ok(address)
        } else if address >= FOUR_GIB && end - FOUR_GIB <= self.above_4g {
            Ok(address - FOUR_GIB + self.below_4g)
        } else {
            Err(fault)
        }
    }
}

/// Why guest memory could not be set up.
#[derive(Debug)]
pub enum MemoryError {
    /// Zero bytes requested.
    ZeroSize,
    /// The size does not fit this host's address space.
    TooLarge(u64),
    /// An existing, non-empty guest RAM file is smaller than the guest RAM: it is someone's
    /// data, or another guest's RAM, so it is neither extended nor used (QEMU's
    /// `memory-backend-file` refuses such a file too).
    FileTooSmall {
        /// The file's size in bytes.
        found: u64,
        /// The guest RAM size.
        needed: u64,
    },
    /// Opening, sizing or mapping the file failed.
    Io {
        /// What was being done.
        context: &'static str,
        /// The OS error.
        source: io::Error,
    },
}

impl fmt::Display for MemoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MemoryError::ZeroSize => write!(f, "guest memory size is zero"),
            MemoryError::TooLarge(s) => write!(f, "guest memory size {s:#x} is too large"),
            MemoryError::FileTooSmall { found, needed } => write!(
                f,
                "the existing guest RAM file has {found} bytes, fewer than the {needed} of guest \
                 RAM (not extended: remove it or give a size that fits)"
            ),
            MemoryError::Io { context, source } => write!(f, "{context}: {source}"),
        }
    }
}

impl std::error::Error for MemoryError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            MemoryError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// QEMU's guest RAM file, mapped shared.
#[derive(Debug)]
pub struct SharedFileMemory {
    map: Mapping,
    layout: RamLayout,
    created: bool,
}

impl SharedFileMemory {
    /// Map the RAM file of a q35 guest with `ram_size` bytes (QEMU `-m`). The file is created
    /// if absent (or sized if empty), so the server may start before QEMU: QEMU's
    /// `memory-backend-file,mem-path=PATH,share=on,size=ram_size` then uses the same file.
    pub fn open_q35(path: &Path, ram_size: u64) -> Result<Self, MemoryError> {
        Self::open(path, RamLayout::q35(ram_size))
    }

    /// Map the RAM file with an explicit layout. A file this call creates is removed again
    /// when mapping it fails; an existing non-empty file smaller than the layout is
    /// [`MemoryError::FileTooSmall`] and left as it is.
    pub fn open(path: &Path, layout: RamLayout) -> Result<Self, MemoryError> {
        let size = layout.size();
        if size == 0 {
            return Err(MemoryError::ZeroSize);
        }
        let len = usize::try_from(size).map_err(|_| MemoryError::TooLarge(size))?;
        let io = |context| move |source| MemoryError::Io { context, source };
        let mut options = OpenOptions::new();
        options.read(true).write(true);
        let (file, created) = match options.clone().create_new(true).open(path) {
            Ok(file) => (file, true),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                (options.open(path).map_err(io("opening the guest RAM file"))?, false)
            }
            Err(e) => return Err(io("creating the guest RAM file")(e)),
        };
        let mapped = (|| {
            let found = file.metadata().map_err(io("reading the guest RAM file size"))?.len();
            if found == 0 {
                file.set_len(size).map_err(io("sizing the guest RAM file"))?;
            } else if found < size {
                return Err(MemoryError::FileTooSmall { found, needed: size });
            }
            Mapping::new(file.as_fd(), len).map_err(io("mapping the guest RAM file"))
        })();
        match mapped {
            Ok(map) => Ok(SharedFileMemory { map, layout, created }),
            Err(e) => {
                if created {
                    let _ = std::fs::remove_file(path);
                }
                Err(e)
            }
        }
    }

    /// Whether [`open`](Self::open) created the file (so whoever gives up on it before QEMU
    /// uses it removes it, see `model-server`).
    pub fn created(&self) -> bool {
        self.created
    }

    /// The guest-physical layout.
    pub fn layout(&self) -> RamLayout {
        self.layout
    }
}

impl GuestMemory for SharedFileMemory {
    fn ram_size(&self) -> u64 {
        self.layout.size()
    }

    fn read(&self, address: u64, buf: &mut [u8]) -> Result<(), DmaFault> {
        let offset = self.layout.translate(address, buf.len())? as usize;
        // SAFETY: `translate` checked `offset + len <= layout.size() == map.len()`; the
        // mapping starts on a page and covers whole pages, so the aligned words overlapping
        // the range are mapped too.
        unsafe { sys::copy_from_shared(self.map.as_ptr().add(offset), buf) };
        Ok(())
    }

    fn write(&mut self, address: u64, data: &[u8]) -> Result<(), DmaFault> {
        let offset = self.layout.translate(address, data.len())? as usize;
        // SAFETY: as in `read`.
        unsafe { sys::copy_to_shared(self.map.as_ptr().add(offset), data) };
        Ok(())
    }
}

/// Zeroed, page-aligned heap memory that never moves.
#[derive(Debug)]
struct RawBuf {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: the buffer is plain memory owned by this struct; after the zeroed allocation every
// access goes through raw pointers with atomic operations (`sys::copy_*_shared`, and the
// `DmaRegion`s an `InProcess` hands out), which are valid from any thread.
unsafe impl Send for RawBuf {}
// SAFETY: as above: shared handles only ever access the bytes atomically.
unsafe impl Sync for RawBuf {}

impl Drop for RawBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `VecMemory::new` with this layout, freed once.
        unsafe { alloc::dealloc(self.ptr.as_ptr(), self.layout) };
    }
}

/// Heap-backed guest memory for in-process tests: bus address = offset.
///
/// The bytes never move while any handle lives, so an allocator may hand out CPU pointers into
/// them (see [`crate::InProcess`]); both sides use raw-pointer atomic accesses only, so a
/// driver thread and the model may touch the same bytes concurrently without a data race.
#[derive(Debug)]
pub struct VecMemory {
    buf: Arc<RawBuf>,
    size: usize,
}

impl VecMemory {
    /// `size` zeroed bytes, page-aligned.
    pub fn new(size: usize) -> Result<Self, MemoryError> {
        if size == 0 {
            return Err(MemoryError::ZeroSize);
        }
        // Whole words: the shared-memory copies access the aligned 32-bit words overlapping
        // a range, so the last byte's word must be allocated too.
        let layout = Layout::from_size_align(size.next_multiple_of(4), 4096)
            .map_err(|_| MemoryError::TooLarge(size as u64))?;
        // SAFETY: non-zero size (checked above).
        let ptr = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(ptr).unwrap_or_else(|| alloc::handle_alloc_error(layout));
        Ok(VecMemory { buf: Arc::new(RawBuf { ptr, layout }), size })
    }

    /// Size in bytes.
    pub fn len(&self) -> usize {
        self.size
    }

    /// Never true.
    pub fn is_empty(&self) -> bool {
        self.size == 0
    }

    /// First byte (bus address 0).
    pub(crate) fn base(&self) -> NonNull<u8> {
        self.buf.ptr
    }

    /// Another handle to the same bytes (crate-internal: keeps the single-owner discipline).
    pub(crate) fn share(&self) -> VecMemory {
        VecMemory { buf: Arc::clone(&self.buf), size: self.size }
    }

    fn check(&self, address: u64, len: usize) -> Result<usize, DmaFault> {
        RamLayout::identity(self.size as u64).translate(address, len).map(|o| o as usize)
    }
}

impl GuestMemory for VecMemory {
    fn ram_size(&self) -> u64 {
        self.size as u64
    }

    fn read(&self, address: u64, buf: &mut [u8]) -> Result<(), DmaFault> {
        let offset = self.check(address, buf.len())?;
        // SAFETY: `offset + len <= size` (checked) and the allocation is page-aligned and
        // whole words long, so every aligned word overlapping the range is in it; the bytes
        // are only accessed with 32-bit atomics (a driver's `DmaRegion` into them, possibly
        // on another thread, too).
        unsafe { sys::copy_from_shared(self.buf.ptr.as_ptr().add(offset), buf) };
        Ok(())
    }

    fn write(&mut self, address: u64, data: &[u8]) -> Result<(), DmaFault> {
        let offset = self.check(address, data.len())?;
        // SAFETY: as in `read`.
        unsafe { sys::copy_to_shared(self.buf.ptr.as_ptr().add(offset), data) };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn q35_layout_is_identity_below_2_75_gib_and_split_above() {
        let small = RamLayout::q35(512 << 20);
        assert_eq!(small.translate(0x1000, 16), Ok(0x1000));
        assert_eq!(small.translate((512 << 20) - 4, 4), Ok((512 << 20) - 4));
        assert!(small.translate((512 << 20) - 2, 4).is_err(), "straddles the end");
        let big = RamLayout::q35(4 << 30);
        assert_eq!(big.size(), 4 << 30);
        assert_eq!(big.translate(0x7FFF_FFFC, 4), Ok(0x7FFF_FFFC));
        assert!(big.translate(0x8000_0000, 4).is_err(), "PCI hole");
        assert!(big.translate(0x7FFF_FFFC, 8).is_err(), "runs into the hole");
        assert_eq!(big.translate(1 << 32, 4), Ok(0x8000_0000));
        assert_eq!(big.translate((6 << 30) - 4, 4), Ok((4 << 30) - 4));
        assert!(big.translate(6 << 30, 4).is_err());
        assert!(big.translate(u64::MAX - 1, 4).is_err(), "overflow is a fault, not a panic");
        let fault = big.translate(0x9000_0000, 8).unwrap_err();
        assert_eq!(
            fault,
            DmaFault { address: 0x9000_0000, len: 8, kind: DmaFaultKind::OutsideRam }
        );
    }

    #[test]
    fn virt_layout_puts_file_offset_0_at_1_gib() {
        let virt = RamLayout::virt(256 << 20);
        assert_eq!(virt.size(), 256 << 20);
        assert_eq!(virt.translate(0x4000_0000, 4), Ok(0));
        assert_eq!(virt.translate(0x4FFF_FFFC, 4), Ok(0x0FFF_FFFC));
        assert!(virt.translate(0x3FFF_FFFC, 4).is_err(), "below RAM (the flash and devices)");
        assert!(virt.translate(0x3FFF_FFFE, 4).is_err(), "straddles the start");
        assert!(virt.translate(0x4FFF_FFFE, 4).is_err(), "straddles the end");
        assert!(virt.translate(0xF000_0000, 4).is_err());
        assert!(virt.translate(0x1000, 4).is_err(), "the q35 identity does not apply");
        assert!(virt.translate(u64::MAX - 1, 4).is_err(), "overflow is a fault, not a panic");
    }

    #[test]
    fn vec_memory_is_zeroed_bounds_checked_and_all_or_nothing() {
        let mut m = VecMemory::new(64).unwrap();
        let mut out = [0xFFu8; 8];
        m.read(56, &mut out).unwrap();
        assert_eq!(out, [0; 8]);
        m.write(60, &[1, 2, 3, 4]).unwrap();
        assert!(m.write(62, &[9, 9, 9, 9]).is_err());
        assert!(m.read(61, &mut out).is_err());
        m.read(60, &mut out[..4]).unwrap();
        assert_eq!(&out[..4], &[1, 2, 3, 4], "the refused write changed nothing");
        assert!(matches!(VecMemory::new(0), Err(MemoryError::ZeroSize)));
    }

    #[test]
    #[cfg(not(miri))] // a file-backed mapping: Miri cannot map files
    fn shared_file_memory_maps_and_creates_the_file() {
        let path = std::env::temp_dir().join(format!("gdm-ram-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        {
            let mut m = SharedFileMemory::open_q35(&path, 1 << 20).unwrap();
            m.write(0x1000, b"guest").unwrap();
            assert!(m.write(1 << 20, b"x").is_err());
            let other = SharedFileMemory::open_q35(&path, 1 << 20).unwrap();
            let mut out = [0u8; 5];
            other.read(0x1000, &mut out).unwrap();
            assert_eq!(&out, b"guest", "a second mapping (QEMU's) sees the write");
        }
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 1 << 20);
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(&bytes[0x1000..0x1005], b"guest");
        std::fs::remove_file(&path).unwrap();
    }

    /// An existing file with data, smaller than the guest RAM, is refused and left as it was;
    /// an existing empty one is sized; a file that cannot be mapped is not left behind.
    #[test]
    #[cfg(not(miri))] // file-backed mappings
    fn a_small_existing_file_is_refused_and_a_failed_open_leaves_no_file() {
        let path = std::env::temp_dir().join(format!("gdm-small-{}", std::process::id()));
        std::fs::write(&path, b"someone's data").unwrap();
        let e = SharedFileMemory::open_q35(&path, 1 << 20).unwrap_err();
        assert!(matches!(e, MemoryError::FileTooSmall { found: 14, needed: 0x10_0000 }), "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), b"someone's data", "not extended");
        std::fs::write(&path, b"").unwrap();
        let m = SharedFileMemory::open_q35(&path, 1 << 20).unwrap();
        assert!(!m.created());
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 1 << 20, "an empty file is sized");
        std::fs::remove_file(&path).unwrap();
        // A size no file system holds: created, not sized, removed again.
        assert!(SharedFileMemory::open(&path, RamLayout::identity(1 << 62)).is_err());
        assert!(!path.exists(), "no empty file left behind");
    }
}
