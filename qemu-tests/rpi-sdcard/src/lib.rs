//! A flashable Raspberry Pi SD-card image and its read-back.
//!
//! Layout: an MBR (built with `mbrman`) with one primary partition, type 0x0C (FAT32 with LBA
//! addressing) and the active (bootable) flag, starting at 1 MiB as partitioning tools align
//! it; in it a FAT32 file system (formatted and filled with `fatfs`) holding the boot files at
//! its root. The Pi's boot ROM reads `bootcode.bin` from the first FAT partition of an MBR
//! card, which loads `start.elf` (with `fixup.dat`), which reads `config.txt` and loads the
//! kernel (Raspberry Pi documentation "The boot folder"). The active flag is not needed by the
//! ROM but is what flashing guides and some card readers expect of a boot partition.
//!
//! The partition is formatted and filled in memory (`fatfs` issues one small read, write or
//! seek per sector it touches: through a file that was ~10,000 system calls per image), then
//! the image file is sized (sparse where the file system supports it) and only the MBR and the
//! partition's bytes up to the last one written go to it. No timestamps are taken from the clock (FAT's default date), and the disk
//! signature and volume id are fixed, so the same files give the same bytes.
#![forbid(unsafe_code)]

use std::cell::Cell;
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, Cursor, Read, Seek, SeekFrom, Write};
use std::path::Path;

/// Bytes per sector (the only size SD cards and the boot ROM use).
pub const SECTOR_BYTES: u64 = 512;
/// First sector of the partition: 1 MiB, the alignment partitioning tools use.
pub const PARTITION_START_LBA: u32 = 2048;
/// Sectors of the partition: 64 MiB, room for the firmware and a kernel, and enough clusters
/// (131,072 of 512 bytes) for FAT32, whose minimum is 65,525.
pub const PARTITION_SECTORS: u32 = 131_072;
/// Bytes per cluster.
pub const CLUSTER_BYTES: u32 = 512;
/// MBR partition type: FAT32 with LBA addressing.
pub const PARTITION_TYPE_FAT32_LBA: u8 = 0x0C;
/// The image's size in bytes.
pub const IMAGE_BYTES: u64 = (PARTITION_START_LBA as u64 + PARTITION_SECTORS as u64) * SECTOR_BYTES;
/// The volume label, as FAT stores it (11 bytes, space padded).
pub const VOLUME_LABEL: [u8; 11] = *b"BAREGPU-PI ";
/// CHS geometry written beside the LBA fields: heads, sectors per track, cylinders.
const CHS_HEADS: u8 = 255;
const CHS_SECTORS: u8 = 63;
const CHS_MAX_CYLINDERS: u16 = 1023;
/// Fixed volume id and disk signature, for a reproducible image.
const VOLUME_ID: u32 = 0xB0A7_2022;

/// One file for the root of the partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootFile {
    /// Name at the root (8.3 or a long name).
    pub name: String,
    /// Contents.
    pub bytes: Vec<u8>,
}

/// Why an image could not be built or read back.
#[derive(Debug)]
#[non_exhaustive]
pub enum SdCardError {
    /// Reading or writing the image file, or a file system operation, failed.
    Io {
        /// What was being done.
        what: &'static str,
        /// The error.
        source: io::Error,
    },
    /// Writing or reading the partition table failed.
    Mbr(mbrman::Error),
    /// The files do not fit the partition.
    TooLarge {
        /// Bytes of all files.
        bytes: u64,
    },
    /// A file name was given twice.
    DuplicateName(String),
    /// The image has not exactly one partition.
    PartitionCount(usize),
}

impl fmt::Display for SdCardError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SdCardError::Io { what, .. } => write!(f, "{what}"),
            SdCardError::Mbr(_) => f.write_str("partition table"),
            SdCardError::TooLarge { bytes } => write!(
                f,
                "{bytes} bytes of boot files do not fit a {} MiB partition",
                PARTITION_BYTES >> 20
            ),
            SdCardError::DuplicateName(n) => write!(f, "boot file {n:?} given twice"),
            SdCardError::PartitionCount(n) => write!(f, "{n} partitions, expected exactly one"),
        }
    }
}

impl std::error::Error for SdCardError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SdCardError::Io { source, .. } => Some(source),
            SdCardError::Mbr(e) => Some(e),
            _ => None,
        }
    }
}

fn io(what: &'static str) -> impl FnOnce(io::Error) -> SdCardError {
    move |source| SdCardError::Io { what, source }
}

/// A window of `len` bytes at `start` of a file, as `fatfs` wants its volume: offsets count
/// from the partition's first byte. `written`, if given, follows the end of the highest write.
struct Partition<'w, F> {
    inner: F,
    start: u64,
    len: u64,
    pos: u64,
    written: Option<&'w Cell<u64>>,
}

impl<'w, F: Seek> Partition<'w, F> {
    fn new(mut inner: F, start: u64, len: u64) -> io::Result<Self> {
        inner.seek(SeekFrom::Start(start))?;
        Ok(Partition { inner, start, len, pos: 0, written: None })
    }

    fn tracking(mut self, written: &'w Cell<u64>) -> Self {
        self.written = Some(written);
        self
    }

    /// Bytes left before the partition's end, at most `want`.
    fn room(&self, want: usize) -> usize {
        (self.len.saturating_sub(self.pos)).min(want as u64) as usize
    }
}

impl<F: Read + Seek> Read for Partition<'_, F> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.room(buf.len());
        let n = self.inner.read(&mut buf[..n])?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl<F: Write + Seek> Write for Partition<'_, F> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.room(buf.len());
        if n == 0 && !buf.is_empty() {
            return Err(io::Error::new(io::ErrorKind::WriteZero, "past the partition's end"));
        }
        let n = self.inner.write(&buf[..n])?;
        self.pos += n as u64;
        if let Some(w) = self.written {
            w.set(w.get().max(self.pos));
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

impl<F: Seek> Seek for Partition<'_, F> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target = match to {
            SeekFrom::Start(n) => Some(n),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
            SeekFrom::End(d) => self.len.checked_add_signed(d),
        };
        let target = target.filter(|&t| t <= self.len).ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "seek outside the partition")
        })?;
        self.inner.seek(SeekFrom::Start(self.start + target))?;
        self.pos = target;
        Ok(target)
    }
}

const PARTITION_OFFSET: u64 = PARTITION_START_LBA as u64 * SECTOR_BYTES;
const PARTITION_BYTES: u64 = PARTITION_SECTORS as u64 * SECTOR_BYTES;

/// Write the image of `files` to `path` (replacing it).
pub fn write_image(path: &Path, files: &[BootFile]) -> Result<(), SdCardError> {
    let total: u64 = files.iter().map(|f| f.bytes.len() as u64).sum();
    // Each file also rounds up to a cluster; the FATs and directory take the rest.
    let clusters: u64 =
        files.iter().map(|f| (f.bytes.len() as u64).div_ceil(u64::from(CLUSTER_BYTES))).sum();
    if clusters * u64::from(CLUSTER_BYTES) > PARTITION_BYTES * 9 / 10 {
        return Err(SdCardError::TooLarge { bytes: total });
    }
    for (i, f) in files.iter().enumerate() {
        if files[..i].iter().any(|g| g.name.eq_ignore_ascii_case(&f.name)) {
            return Err(SdCardError::DuplicateName(f.name.clone()));
        }
    }
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .map_err(io("creating the image file"))?;
    file.set_len(IMAGE_BYTES).map_err(io("sizing the image file"))?;

    let mut mbr = mbrman::MBR::new_from(&mut file, SECTOR_BYTES as u32, VOLUME_ID.to_le_bytes())
        .map_err(SdCardError::Mbr)?;
    // CHS addresses too, in the 255-head, 63-sector geometry partitioning tools assume for
    // LBA disks (the ROM uses the LBA fields; the image ends well before CHS's 1024 cylinders).
    let chs = |lba| mbrman::CHS::from_lba_exact(lba, CHS_MAX_CYLINDERS, CHS_HEADS, CHS_SECTORS);
    let first_chs = chs(PARTITION_START_LBA).map_err(SdCardError::Mbr)?;
    let last_chs = chs(PARTITION_START_LBA + PARTITION_SECTORS - 1).map_err(SdCardError::Mbr)?;
    mbr[1] = mbrman::MBRPartitionEntry {
        boot: mbrman::BOOT_ACTIVE,
        first_chs,
        sys: PARTITION_TYPE_FAT32_LBA,
        last_chs,
        starting_lba: PARTITION_START_LBA,
        sectors: PARTITION_SECTORS,
    };
    mbr.write_into(&mut file).map_err(SdCardError::Mbr)?;

    let partition = fat32_partition(files)?;
    file.seek(SeekFrom::Start(PARTITION_OFFSET)).map_err(io("seeking to the partition"))?;
    file.write_all(&partition).map_err(io("writing the partition"))
}

/// The FAT32 file system holding `files`, formatted and filled in memory, up to its last
/// written byte (the rest of the partition is zero).
fn fat32_partition(files: &[BootFile]) -> Result<Vec<u8>, SdCardError> {
    // Zeroed pages are mapped lazily: only what `fatfs` touches costs anything.
    let mut memory = Cursor::new(vec![0u8; PARTITION_BYTES as usize]);
    let written = Cell::new(0);
    let options = fatfs::FormatVolumeOptions::new()
        .fat_type(fatfs::FatType::Fat32)
        .bytes_per_cluster(CLUSTER_BYTES)
        .total_sectors(PARTITION_SECTORS)
        .volume_id(VOLUME_ID)
        .volume_label(VOLUME_LABEL);
    fn volume<'a>(
        memory: &'a mut Cursor<Vec<u8>>,
        written: &'a Cell<u64>,
    ) -> Result<Partition<'a, &'a mut Cursor<Vec<u8>>>, SdCardError> {
        Partition::new(memory, 0, PARTITION_BYTES)
            .map(|p| p.tracking(written))
            .map_err(io("seeking in the partition"))
    }
    fatfs::format_volume(volume(&mut memory, &written)?, options)
        .map_err(io("formatting the FAT32 partition"))?;
    let fs = fatfs::FileSystem::new(volume(&mut memory, &written)?, fatfs::FsOptions::new())
        .map_err(io("mounting the new partition"))?;
    for f in files {
        let mut out = fs.root_dir().create_file(&f.name).map_err(io("creating a boot file"))?;
        out.write_all(&f.bytes).map_err(io("writing a boot file"))?;
        out.flush().map_err(io("writing a boot file"))?;
    }
    fs.unmount().map_err(io("unmounting the partition"))?;
    let mut bytes = memory.into_inner();
    bytes.truncate(written.get() as usize);
    Ok(bytes)
}

/// One partition table entry as read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartitionEntry {
    /// Slot (1-4).
    pub slot: usize,
    /// The active (bootable) flag is set.
    pub bootable: bool,
    /// Partition type byte.
    pub kind: u8,
    /// First sector.
    pub start_lba: u32,
    /// Sectors.
    pub sectors: u32,
}

/// What an image holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contents {
    /// The used primary partitions.
    pub partitions: Vec<PartitionEntry>,
    /// The file system of the (one) partition is FAT32.
    pub fat32: bool,
    /// Its volume label, trimmed.
    pub label: String,
    /// The files at its root, in directory order (directories are left out).
    pub files: Vec<BootFile>,
}

impl Contents {
    /// The file called `name` (case-insensitive, as FAT compares names).
    pub fn file(&self, name: &str) -> Option<&BootFile> {
        self.files.iter().find(|f| f.name.eq_ignore_ascii_case(name))
    }

    /// The root's file names.
    pub fn names(&self) -> Vec<&str> {
        self.files.iter().map(|f| f.name.as_str()).collect()
    }
}

/// Read `path` back: its partition table (exactly one used partition, or
/// [`SdCardError::PartitionCount`]) and the files at the root of that partition's FAT.
pub fn read_image(path: &Path) -> Result<Contents, SdCardError> {
    let mut file = File::open(path).map_err(io("opening the image file"))?;
    let mbr = mbrman::MBR::read_from(&mut file, SECTOR_BYTES as u32).map_err(SdCardError::Mbr)?;
    let partitions: Vec<PartitionEntry> = mbr
        .iter()
        .filter(|(_, p)| p.is_used())
        .map(|(slot, p)| PartitionEntry {
            slot,
            bootable: p.is_active(),
            kind: p.sys,
            start_lba: p.starting_lba,
            sectors: p.sectors,
        })
        .collect();
    let [one] = partitions[..] else {
        return Err(SdCardError::PartitionCount(partitions.len()));
    };
    let volume = Partition::new(
        &mut file,
        u64::from(one.start_lba) * SECTOR_BYTES,
        u64::from(one.sectors) * SECTOR_BYTES,
    )
    .map_err(io("seeking to the partition"))?;
    let fs = fatfs::FileSystem::new(volume, fatfs::FsOptions::new())
        .map_err(io("mounting the partition"))?;
    let fat32 = fs.fat_type() == fatfs::FatType::Fat32;
    let label = fs.volume_label().trim_end().to_string();
    let mut files = Vec::new();
    for entry in fs.root_dir().iter() {
        let entry = entry.map_err(io("reading the root directory"))?;
        if !entry.is_file() {
            continue;
        }
        let mut bytes = Vec::with_capacity(entry.len() as usize);
        entry.to_file().read_to_end(&mut bytes).map_err(io("reading a boot file"))?;
        files.push(BootFile { name: entry.file_name(), bytes });
    }
    Ok(Contents { partitions, fat32, label, files })
}
