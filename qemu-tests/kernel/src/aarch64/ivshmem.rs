//! The ivshmem-doorbell PCI functions on aarch64 `virt` (one per emulated GPU, in bus order):
//! discovery through ECAM, BAR assignment, memory + bus-master enable. Polled: MSI-X is left
//! disabled (no GIC ITS set-up), so device interrupts are not delivered.
//!
//! With `-kernel` there is no firmware to assign BARs: each unassigned memory BAR gets the next
//! naturally aligned range of `virt`'s 32-bit PCI MMIO window (`VIRT_PCIE_MMIO`,
//! 0x1000_0000..0x3EFF_0000, QEMU `hw/arm/virt.c`), a bump allocator shared by every function
//! the kernel enables.

use crate::mailbox::function::{self, Ivshmem};
use crate::pci::HOST;
use baregpu_hal::MmioRegion;
use baregpu_hal::pci;
use core::sync::atomic::{AtomicU64, Ordering};
use gpu_mailbox::SHMEM_SIZE;

/// `virt`'s 32-bit PCI MMIO window.
const WINDOW_START: u64 = 0x1000_0000;
const WINDOW_END: u64 = 0x3EFF_0000;
/// Next free address of the window.
static NEXT: AtomicU64 = AtomicU64::new(WINDOW_START);

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

/// How many ivshmem functions the scanned buses hold (`aarch64-boot` checks it).
pub fn count() -> usize {
    let mut n = 0;
    while function::find_nth(n, |_| {}).is_some() {
        n += 1;
    }
    n
}

/// Find the first ivshmem function, assign and enable its BARs. `relocate` is x86_64's flag
/// and means nothing here (the kernel assigns every BAR).
pub fn attach(relocate: bool) -> Result<Ivshmem, IvshmemError> {
    attach_nth(0, relocate)
}

/// [`attach`] for ivshmem function `index` (QEMU's `-device` order).
pub fn attach_nth(index: usize, _relocate: bool) -> Result<Ivshmem, IvshmemError> {
    let mut function = function::find_nth(index, |_| {}).ok_or(IvshmemError::NotFound { index })?;
    let address = function.address;
    for slot in [0u8, 1, 2] {
        let (bar, size) =
            function.memory_bar(usize::from(slot)).ok_or(IvshmemError::MissingBar(slot))?;
        if bar != 0 {
            continue;
        }
        let new = take(size).ok_or(IvshmemError::NoRoom { slot, size })?;
        function::move_bar(address, slot, new);
        function = pci::probe(&HOST, address).map_err(IvshmemError::Probe)?;
    }
    function::enable(address);

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
    // SAFETY: the BAR was assigned in the PCI MMIO window (Device memory with the MMU off) and
    // only the mailbox accesses it.
    unsafe { function::map(address, size) }.ok_or(IvshmemError::MissingBar(slot))
}
