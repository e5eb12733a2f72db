//! The ivshmem-doorbell PCI functions on aarch64 `virt` (one per emulated GPU, in bus order):
//! discovery through ECAM, BAR assignment, memory + bus-master enable. Polled: MSI-X is left
//! disabled (no GIC ITS set-up), so device interrupts are not delivered.
//!
//! With `-kernel` there is no firmware to assign BARs: each unassigned memory BAR gets the next
//! naturally aligned range of `virt`'s 32-bit PCI MMIO window (`VIRT_PCIE_MMIO`,
//! 0x1000_0000..0x3EFF_0000, QEMU `hw/arm/virt.c`), a bump allocator shared by every function
//! the kernel enables.

use crate::pci::HOST;
use baregpu_hal::MmioRegion;
use baregpu_hal::pci::{self, ConfigRegionAccess, PciAddress};
use core::ptr::NonNull;
use core::sync::atomic::{AtomicU64, Ordering};
use gpu_mailbox::{IVSHMEM_DEVICE, IVSHMEM_VENDOR, SHMEM_SIZE};

/// Buses scanned (`virt` puts `-device`s on bus 0; a few more cover a root port).
const LAST_BUS: u8 = 3;
/// `virt`'s 32-bit PCI MMIO window.
const WINDOW_START: u64 = 0x1000_0000;
const WINDOW_END: u64 = 0x3EFF_0000;
/// Next free address of the window.
static NEXT: AtomicU64 = AtomicU64::new(WINDOW_START);

const REG_COMMAND: u16 = 0x04;
const REG_BAR0: u16 = 0x10;
const COMMAND_MEMORY: u32 = 1 << 1;
const COMMAND_BUS_MASTER: u32 = 1 << 2;

/// Why the ivshmem function cannot carry the mailbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, defmt::Format)]
pub enum IvshmemError {
    /// No 1af4:1110 function number `index` (counting from 0 in bus order).
    NotFound {
        /// The function asked for.
        index: usize,
    },
    /// Probing the function failed.
    Probe(pci::PciError),
    /// A BAR the mailbox needs is missing or not a memory BAR.
    MissingBar(u8),
    /// BAR2 is smaller than the mailbox's shared memory.
    SharedMemoryTooSmall(u64),
    /// The PCI MMIO window has no room left for a BAR.
    NoRoom {
        /// BAR slot.
        slot: u8,
        /// BAR size.
        size: u64,
    },
}

/// The ivshmem function, enabled, with its register BAR and shared memory mapped.
pub struct Ivshmem {
    /// Which ivshmem function (0 = first in bus order); selects its mailbox slot.
    pub index: usize,
    /// BAR0: IVPOSITION, DOORBELL.
    pub registers: MmioRegion,
    /// BAR2: the shared memory holding the mailbox.
    pub shared: MmioRegion,
}

fn cfg_read(address: PciAddress, offset: u16) -> u32 {
    // SAFETY: offsets below 0x100 of an existing function's header are valid to read.
    unsafe { HOST.read(address, offset) }
}

fn cfg_write(address: PciAddress, offset: u16, value: u32) {
    // SAFETY: only the ivshmem function's command and BAR registers are written, with
    // decoding off while a BAR is programmed.
    unsafe { HOST.write(address, offset, value) }
}

/// Every ivshmem function on the scanned buses, in bus order (`aarch64-boot` lists them).
pub fn count() -> usize {
    let mut n = 0;
    pci::scan(&HOST, LAST_BUS, |f| {
        if (f.vendor, f.device) == (IVSHMEM_VENDOR, IVSHMEM_DEVICE) {
            n += 1;
        }
    });
    n
}

/// Find the first ivshmem function, assign and enable its BARs. `relocate` is x86's flag and
/// has no meaning here (every BAR is assigned by the kernel).
pub fn attach(relocate: bool) -> Result<Ivshmem, IvshmemError> {
    attach_nth(0, relocate)
}

/// [`attach`] for ivshmem function `index` (QEMU's `-device` order).
pub fn attach_nth(index: usize, _relocate: bool) -> Result<Ivshmem, IvshmemError> {
    let mut found = None;
    let mut seen = 0;
    pci::scan(&HOST, LAST_BUS, |f| {
        if (f.vendor, f.device) == (IVSHMEM_VENDOR, IVSHMEM_DEVICE) {
            if seen == index {
                found = Some(f.address);
            }
            seen += 1;
        }
    });
    let address = found.ok_or(IvshmemError::NotFound { index })?;
    let mut function = pci::probe(&HOST, address).map_err(IvshmemError::Probe)?;
    defmt::info!(
        "ivshmem {=usize}: found {=u16:04x}:{=u16:04x} at {=u8:02x}:{=u8:02x}.{=u8}",
        index,
        function.vendor,
        function.device,
        address.bus(),
        address.device(),
        address.function()
    );
    for slot in [0u8, 1, 2] {
        let (bar, size) =
            function.memory_bar(usize::from(slot)).ok_or(IvshmemError::MissingBar(slot))?;
        if bar != 0 {
            continue;
        }
        let new = take(size).ok_or(IvshmemError::NoRoom { slot, size })?;
        program_bar(address, slot, new);
        function = pci::probe(&HOST, address).map_err(IvshmemError::Probe)?;
    }
    let command = cfg_read(address, REG_COMMAND) & 0xFFFF;
    cfg_write(address, REG_COMMAND, command | COMMAND_MEMORY | COMMAND_BUS_MASTER);

    let (bar0, bar0_size) = function.memory_bar(0).ok_or(IvshmemError::MissingBar(0))?;
    let (bar2, bar2_size) = function.memory_bar(2).ok_or(IvshmemError::MissingBar(2))?;
    if bar2_size < SHMEM_SIZE as u64 {
        return Err(IvshmemError::SharedMemoryTooSmall(bar2_size));
    }
    defmt::info!(
        "ivshmem {=usize}: BAR0 {=u64:#x}+{=u64:#x}, BAR2 {=u64:#x}+{=u64:#x} (assigned from the PCI MMIO window), polled",
        index,
        bar0,
        bar0_size,
        bar2,
        bar2_size
    );
    Ok(Ivshmem {
        index,
        registers: map(bar0, bar0_size, 0)?,
        shared: map(bar2, SHMEM_SIZE as u64, 2)?,
    })
}

/// The next naturally aligned `size` bytes of the window.
fn take(size: u64) -> Option<u64> {
    let size = size.max(0x1000).next_power_of_two();
    let mut start = 0;
    NEXT.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |next| {
        start = next.checked_next_multiple_of(size)?;
        let end = start.checked_add(size)?;
        (end <= WINDOW_END).then_some(end)
    })
    .ok()?;
    Some(start)
}

fn map(address: u64, size: u64, slot: u8) -> Result<MmioRegion, IvshmemError> {
    let ptr = NonNull::new(address as usize as *mut u32).ok_or(IvshmemError::MissingBar(slot))?;
    // SAFETY: the BAR was assigned in the PCI MMIO window (Device memory with the MMU off) and
    // only the mailbox accesses it.
    Ok(unsafe { MmioRegion::new(ptr, size as usize) })
}

/// Program BAR `slot` (32- or 64-bit memory) to `new`; decoding is still off.
fn program_bar(address: PciAddress, slot: u8, new: u64) {
    let offset = REG_BAR0 + u16::from(slot) * 4;
    let low = cfg_read(address, offset);
    cfg_write(address, offset, (new as u32 & !0xF) | (low & 0xF));
    if (low >> 1) & 0b11 == 0b10 {
        cfg_write(address, offset + 4, (new >> 32) as u32);
    }
}
