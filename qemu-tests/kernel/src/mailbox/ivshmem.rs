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

use super::function::{self, Ivshmem};
use crate::arch::{idt, lapic};
use crate::pci::PortConfig;
use baregpu_hal::MmioRegion;
use baregpu_hal::pci::{self, PciFunction};
use baregpu_platform::msi::Msix;
use gpu_mailbox::{SHMEM_SIZE, VECTOR_IRQ, VECTORS};

/// First address of the 32-bit PCI MMIO window used for relocation (end of q35's ECAM).
const WINDOW_START: u64 = 0xC000_0000;
/// End of that window (the IOAPIC).
const WINDOW_END: u64 = 0xFEC0_0000;

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

/// Find the first ivshmem function, place and enable it, route MSI-X vector [`VECTOR_IRQ`] to
/// [`idt::MAILBOX_VECTORS`]`[0]` on this CPU.
pub fn attach(force_relocate: bool) -> Result<Ivshmem, IvshmemError> {
    attach_nth(0, force_relocate)
}

/// [`attach`] for ivshmem function `index` (in bus order: QEMU's `-device` order), whose
/// MSI-X vector goes to [`idt::MAILBOX_VECTORS`]`[index]`.
pub fn attach_nth(index: usize, force_relocate: bool) -> Result<Ivshmem, IvshmemError> {
    let vector = *idt::MAILBOX_VECTORS.get(index).ok_or(IvshmemError::TooMany { index })?;
    let mut used = UsedRanges { ranges: [(0, 0); MAX_USED_RANGES], len: 0 };
    let mut function = function::find_nth(index, |f| {
        for slot in 0..6 {
            if let Some((address, size)) = f.memory_bar(slot) {
                used.add(address, size);
            }
        }
    })
    .ok_or(IvshmemError::NotFound { index })?;

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
        function::move_bar(function.address, slot, new);
        used.add(new, size);
        function = pci::probe(&PortConfig, function.address).map_err(IvshmemError::Probe)?;
    }

    function::enable(function.address);

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
    // SAFETY: the BAR lies below 4 GiB in the identity map (checked or moved in `attach`), in the
    // uncached 3..4 GiB window QEMU's PCI MMIO uses; only the mailbox accesses it.
    unsafe { function::map(address, size) }.ok_or(IvshmemError::MissingBar(slot))
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
