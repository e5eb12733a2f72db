//! The PVH `hvm_start_info` (Xen `arch-x86/hvm/start_info.h`): command line and memory map,
//! copied into kernel memory at boot so nothing later depends on the firmware's copy.

use crate::cmdline::{Cmdline, MAX_CMDLINE};
use core::mem::size_of;
use core::ptr;

const HVM_START_MAGIC: u32 = 0x336E_C578;
/// Memory-map entry type of usable RAM (E820 type 1).
pub const MEMMAP_RAM: u32 = 1;
const MAX_MEMMAP: usize = 32;

#[repr(C)]
struct HvmStartInfo {
    magic: u32,
    version: u32,
    flags: u32,
    nr_modules: u32,
    modlist_paddr: u64,
    cmdline_paddr: u64,
    rsdp_paddr: u64,
    memmap_paddr: u64,
    memmap_entries: u32,
    reserved: u32,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct HvmMemmapEntry {
    addr: u64,
    size: u64,
    kind: u32,
    reserved: u32,
}

/// One memory-map range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, defmt::Format)]
pub struct MemoryRange {
    /// First byte.
    pub start: u64,
    /// Length in bytes.
    pub size: u64,
    /// E820 type ([`MEMMAP_RAM`] = usable).
    pub kind: u32,
}

impl MemoryRange {
    /// One past the last byte.
    pub fn end(&self) -> u64 {
        self.start.saturating_add(self.size)
    }
}

/// What the kernel keeps from the start info.
pub struct BootInfo {
    /// The kernel command line (`-append`).
    pub cmdline: Cmdline,
    memmap: [MemoryRange; MAX_MEMMAP],
    memmap_len: usize,
}

/// The start info is unusable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, defmt::Format)]
pub enum BootInfoError {
    /// Null pointer or wrong magic: not booted through PVH.
    BadMagic(u32),
    /// Version 0 has no memory map.
    NoMemoryMap,
}

impl BootInfo {
    /// Copy what the kernel needs out of the start info at physical address `start_info`.
    ///
    /// # Safety
    /// `start_info` must be the pointer the PVH loader passed in `%ebx` (identity mapped, with
    /// the command line and memory map it points to still intact).
    pub unsafe fn parse(start_info: u32) -> Result<BootInfo, BootInfoError> {
        let info_ptr = start_info as usize as *const HvmStartInfo;
        if info_ptr.is_null() {
            return Err(BootInfoError::BadMagic(0));
        }
        // SAFETY: per the contract the structure is mapped and readable; read unaligned-safe.
        let info = unsafe { ptr::read_unaligned(info_ptr) };
        if info.magic != HVM_START_MAGIC {
            return Err(BootInfoError::BadMagic(info.magic));
        }
        if info.version < 1 || info.memmap_paddr == 0 {
            return Err(BootInfoError::NoMemoryMap);
        }
        let mut boot = BootInfo {
            cmdline: Cmdline::new(),
            memmap: [MemoryRange { start: 0, size: 0, kind: 0 }; MAX_MEMMAP],
            memmap_len: 0,
        };
        if info.cmdline_paddr != 0 {
            let base = info.cmdline_paddr as usize as *const u8;
            for i in 0..MAX_CMDLINE {
                // SAFETY: the NUL-terminated command line is mapped; reading stops at NUL or
                // after MAX_CMDLINE bytes.
                let byte = unsafe { ptr::read(base.add(i)) };
                if byte == 0 || !boot.cmdline.push(byte) {
                    break;
                }
            }
        }
        let entries = (info.memmap_entries as usize).min(MAX_MEMMAP);
        let map = info.memmap_paddr as usize as *const HvmMemmapEntry;
        for i in 0..entries {
            // SAFETY: the loader provides `memmap_entries` entries at `memmap_paddr`.
            let e = unsafe { ptr::read_unaligned(map.add(i)) };
            boot.memmap[i] = MemoryRange { start: e.addr, size: e.size, kind: e.kind };
        }
        boot.memmap_len = entries;
        const _: () = assert!(size_of::<HvmMemmapEntry>() == 24);
        Ok(boot)
    }

    /// The memory map.
    pub fn memory_map(&self) -> &[MemoryRange] {
        &self.memmap[..self.memmap_len]
    }
}
