//! The ivshmem-doorbell PCI functions that carry the mailboxes (one per emulated GPU, in bus
//! order): discovery on QEMU's bus, BAR placement, memory + bus-master enable, and MSI-X
//! delivery of [`VECTOR_IRQ`] to the LAPIC, each function on its own IDT vector.
//!
//! BAR placement: the kernel identity-maps only the first 4 GiB (3..4 GiB uncached). SeaBIOS
//! places ivshmem's BARs there (BAR2, 64-bit prefetchable 1 MiB, lands near 0xFEA0_0000). A BAR
//! the firmware left unassigned or put above 4 GiB is moved into the 32-bit PCI window
//! `[WINDOW_START, WINDOW_END)` (q35: ECAM ends at 0xC000_0000, the IOAPIC starts at
//! 0xFEC0_0000): to the highest naturally aligned gap that no memory BAR of any function on the
//! scanned buses decodes. Command-line flag `ivshmem.relocate` forces this path for BAR2 so it
//! stays tested.

use crate::arch::{idt, lapic};
use crate::pci::PortConfig;
use baregpu_hal::MmioRegion;
use baregpu_hal::pci::{self, ConfigRegionAccess, PciAddress, PciFunction};
use baregpu_platform::msi::Msix;
use core::ptr::NonNull;
use gpu_mailbox::{IVSHMEM_DEVICE, IVSHMEM_VENDOR, SHMEM_SIZE, VECTOR_IRQ, VECTORS};

/// Buses scanned for the ivshmem function (q35 without bridges uses bus 0 only; a few more
/// cost ~1 ms each under TCG and cover a device behind a root port).
const LAST_BUS: u8 = 3;
/// First address of the 32-bit PCI MMIO window used for relocation (end of q35's ECAM).
const WINDOW_START: u64 = 0xC000_0000;
/// End of that window (the IOAPIC).
const WINDOW_END: u64 = 0xFEC0_0000;

const REG_COMMAND: u16 = 0x04;
const REG_BAR0: u16 = 0x10;
const COMMAND_MEMORY: u32 = 1 << 1;
const COMMAND_BUS_MASTER: u32 = 1 << 2;
const COMMAND_IO: u32 = 1 << 0;

/// Why the ivshmem function cannot carry the mailbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, defmt::Format)]
pub enum IvshmemError {
    /// No 1af4:1110 function number `index` (counting from 0 in bus order) on the scanned
    /// buses (QEMU started without that many `-device ivshmem-doorbell`).
    NotFound {
        /// The function asked for.
        index: usize,
    },
    /// Only [`MAX_MAILBOXES`](super::MAX_MAILBOXES) ivshmem functions have an IDT vector.
    TooMany {
        /// The function asked for.
        index: usize,
    },
    /// Probing the function failed.
    Probe(pci::PciError),
    /// A BAR the mailbox needs is missing or not a memory BAR.
    MissingBar(u8),
    /// BAR2 is smaller than the mailbox's shared memory.
    SharedMemoryTooSmall(u64),
    /// No room below 4 GiB to place a BAR.
    NoRoomBelow4G {
        /// BAR slot.
        slot: u8,
        /// BAR size.
        size: u64,
    },
    /// The function has no MSI-X capability, or fewer entries than [`VECTORS`].
    NoMsix,
    /// The MSI-X table does not fit its BAR.
    BadMsixTable,
}

/// The ivshmem function, enabled, with its register BAR and shared memory mapped.
pub struct Ivshmem {
    /// Which ivshmem function (0 = first in bus order); selects its IDT vector and mailbox slot.
    pub index: usize,
    /// BAR0: IVPOSITION, DOORBELL.
    pub registers: MmioRegion,
    /// BAR2: the shared memory holding the mailbox.
    pub shared: MmioRegion,
}

fn cfg_read(address: PciAddress, offset: u16) -> u32 {
    // SAFETY: offsets below 0x100 of an existing function's header are valid to read.
    unsafe { PortConfig.read(address, offset) }
}

fn cfg_write(address: PciAddress, offset: u16, value: u32) {
    // SAFETY: only the ivshmem function's command, BAR and MSI-X registers are written, in the
    // order the PCI spec allows (decoding off while a BAR moves).
    unsafe { PortConfig.write(address, offset, value) }
}

/// Find the first ivshmem function, place and enable it, route MSI-X vector [`VECTOR_IRQ`] to
/// [`idt::MAILBOX_VECTORS`]`[0]` on this CPU.
pub fn attach(force_relocate: bool) -> Result<Ivshmem, IvshmemError> {
    attach_nth(0, force_relocate)
}

/// [`attach`] for ivshmem function `index` (in bus order: QEMU's `-device` order), whose
/// MSI-X vector goes to [`idt::MAILBOX_VECTORS`]`[index]`.
pub fn attach_nth(index: usize, force_relocate: bool) -> Result<Ivshmem, IvshmemError> {
    let vector = *idt::MAILBOX_VECTORS.get(index).ok_or(IvshmemError::TooMany { index })?;
    let mut found = None;
    let mut seen = 0;
    let mut used = UsedRanges { ranges: [(0, 0); MAX_USED_RANGES], len: 0 };
    pci::scan(&PortConfig, LAST_BUS, |f| {
        if (f.vendor, f.device) == (IVSHMEM_VENDOR, IVSHMEM_DEVICE) {
            if seen == index {
                found = Some(f);
            }
            seen += 1;
        }
        for slot in 0..6 {
            if let Some((address, size)) = f.memory_bar(slot) {
                used.add(address, size);
            }
        }
    });
    let mut function = found.ok_or(IvshmemError::NotFound { index })?;
    defmt::info!(
        "ivshmem {=usize}: found {=u16:04x}:{=u16:04x} at {=u8:02x}:{=u8:02x}.{=u8}",
        index,
        function.vendor,
        function.device,
        function.address.bus(),
        function.address.device(),
        function.address.function()
    );

    for slot in [0u8, 1, 2] {
        let (address, size) =
            function.memory_bar(usize::from(slot)).ok_or(IvshmemError::MissingBar(slot))?;
        let reachable = address != 0 && address + size <= 1 << 32;
        if reachable && !(force_relocate && slot == 2) {
            continue;
        }
        let new = used.find_gap(size).ok_or(IvshmemError::NoRoomBelow4G { slot, size })?;
        defmt::warn!(
            "ivshmem: BAR{=u8} at {=u64:#x} (size {=u64:#x}) unassigned, above 4 GiB or relocation forced: moving it to {=u64:#x}",
            slot,
            address,
            size,
            new
        );
        move_bar(function.address, slot, new);
        used.add(new, size);
        function = pci::probe(&PortConfig, function.address).map_err(IvshmemError::Probe)?;
    }

    let command = cfg_read(function.address, REG_COMMAND) & 0xFFFF;
    cfg_write(function.address, REG_COMMAND, command | COMMAND_MEMORY | COMMAND_BUS_MASTER);

    let (bar0, bar0_size) = function.memory_bar(0).ok_or(IvshmemError::MissingBar(0))?;
    let (bar2, bar2_size) = function.memory_bar(2).ok_or(IvshmemError::MissingBar(2))?;
    if bar2_size < SHMEM_SIZE as u64 {
        return Err(IvshmemError::SharedMemoryTooSmall(bar2_size));
    }
    defmt::info!(
        "ivshmem {=usize}: BAR0 {=u64:#x}+{=u64:#x}, BAR2 {=u64:#x}+{=u64:#x}",
        index,
        bar0,
        bar0_size,
        bar2,
        bar2_size
    );
    setup_msix(&function, index, vector)?;
    Ok(Ivshmem {
        index,
        registers: map(bar0, bar0_size, 0)?,
        shared: map(bar2, SHMEM_SIZE as u64, 2)?,
    })
}

/// Bound on the memory BARs remembered while scanning (6 per function; QEMU's q35 bus has a
/// handful of functions). Extra BARs are ignored, which only matters if a BAR is relocated.
const MAX_USED_RANGES: usize = 64;

/// Memory BAR ranges decoded on the bus, for finding a free place in the 32-bit window.
struct UsedRanges {
    ranges: [(u64, u64); MAX_USED_RANGES],
    len: usize,
}

impl UsedRanges {
    fn add(&mut self, address: u64, size: u64) {
        if self.len < MAX_USED_RANGES && size > 0 {
            self.ranges[self.len] = (address, address + size);
            self.len += 1;
        }
    }

    /// Highest `size`-aligned range of `size` bytes in the window that overlaps no used range
    /// (top-down, like SeaBIOS's own allocation).
    fn find_gap(&self, size: u64) -> Option<u64> {
        let size = size.max(0x1000).next_power_of_two();
        let mut candidate = (WINDOW_END - size) / size * size;
        // Each step moves below one used range, so `len + 1` steps visit every gap.
        for _ in 0..=self.len {
            if candidate < WINDOW_START {
                return None;
            }
            let end = candidate + size;
            match self.ranges[..self.len].iter().find(|&&(s, e)| s < end && candidate < e) {
                None => return Some(candidate),
                Some(&(start, _)) => candidate = start.checked_sub(size)? / size * size,
            }
        }
        None
    }
}

fn map(address: u64, size: u64, slot: u8) -> Result<MmioRegion, IvshmemError> {
    let ptr = NonNull::new(address as usize as *mut u32).ok_or(IvshmemError::MissingBar(slot))?;
    // SAFETY: the BAR lies below 4 GiB in the identity map (checked or moved in `attach`), in the
    // uncached 3..4 GiB window QEMU's PCI MMIO uses; only the mailbox accesses it.
    Ok(unsafe { MmioRegion::new(ptr, size as usize) })
}

/// Program BAR `slot` (32- or 64-bit memory) to `new` with decoding off.
fn move_bar(address: PciAddress, slot: u8, new: u64) {
    let offset = REG_BAR0 + u16::from(slot) * 4;
    let command = cfg_read(address, REG_COMMAND) & 0xFFFF;
    cfg_write(address, REG_COMMAND, command & !(COMMAND_MEMORY | COMMAND_IO));
    let low = cfg_read(address, offset);
    cfg_write(address, offset, (new as u32 & !0xF) | (low & 0xF));
    if (low >> 1) & 0b11 == 0b10 {
        cfg_write(address, offset + 4, (new >> 32) as u32);
    }
    cfg_write(address, REG_COMMAND, command);
}

/// Enable MSI-X with every entry masked except [`VECTOR_IRQ`], which targets this CPU's LAPIC
/// at IDT `vector`. QEMU drops ivshmem interrupts while MSI-X is disabled (no INTx), so this
/// runs before any device interrupt is enabled.
fn setup_msix(function: &PciFunction, index: usize, vector: u8) -> Result<(), IvshmemError> {
    let mut msix = Msix::find(&PortConfig, function).map_err(|_| IvshmemError::NoMsix)?;
    if msix.entries() < VECTORS as u16 {
        return Err(IvshmemError::NoMsix);
    }
    let table = map(msix.table_address(), msix.table_bytes() as u64, 0)?;
    let route = (VECTOR_IRQ as u16, lapic::msi_message(vector));
    msix.enable(&PortConfig, &table, &[route]).map_err(|_| IvshmemError::BadMsixTable)?;
    defmt::info!(
        "ivshmem {=usize}: MSI-X enabled ({=u16} entries), vector {=u32} -> IDT {=u8:#x} on APIC {=u8}",
        index,
        msix.entries(),
        VECTOR_IRQ,
        vector,
        lapic::id()
    );
    Ok(())
}
