//! The ivshmem function as both architectures set it up: finding the `i`-th one on QEMU's bus
//! ([`HOST`]), programming a memory BAR, enabling decoding and bus mastering, mapping a BAR.
//! Where BARs come from (x86_64: firmware, moved if unreachable; aarch64: assigned by the
//! kernel) and interrupts are each architecture's `ivshmem` module.

use crate::pci::HOST;
use baregpu_hal::MmioRegion;
use baregpu_hal::pci::{self, ConfigRegionAccess, PciAddress, PciFunction};
use core::ptr::NonNull;
use gpu_mailbox::{IVSHMEM_DEVICE, IVSHMEM_VENDOR};

/// Buses scanned for ivshmem functions (QEMU puts `-device`s on bus 0; a few more cost ~1 ms
/// each under TCG and cover a device behind a root port).
pub const LAST_BUS: u8 = 3;

const REG_COMMAND: u16 = 0x04;
const REG_BAR0: u16 = 0x10;
const COMMAND_IO: u32 = 1 << 0;
const COMMAND_MEMORY: u32 = 1 << 1;
const COMMAND_BUS_MASTER: u32 = 1 << 2;

/// The ivshmem function, enabled, with its register BAR and shared memory mapped.
pub struct Ivshmem {
    /// Which ivshmem function (0 = first in bus order); selects its mailbox slot (and on
    /// x86_64 its IDT vector).
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
    // SAFETY: only an ivshmem function's command and BAR registers are written, in the order
    // the PCI spec allows (decoding off while a BAR moves).
    unsafe { HOST.write(address, offset, value) }
}

/// Ivshmem function `index` (in bus order: QEMU's `-device` order); `each` sees every function
/// on the scanned buses.
pub fn find_nth(index: usize, mut each: impl FnMut(&PciFunction)) -> Option<PciFunction> {
    let (mut found, mut seen) = (None, 0);
    pci::scan(&HOST, LAST_BUS, |f| {
        if (f.vendor, f.device) == (IVSHMEM_VENDOR, IVSHMEM_DEVICE) {
            if seen == index {
                found = Some(f);
            }
            seen += 1;
        }
        each(&f);
    });
    let function = found?;
    defmt::info!(
        "ivshmem {=usize}: found {=u16:04x}:{=u16:04x} at {=u8:02x}:{=u8:02x}.{=u8}",
        index,
        function.vendor,
        function.device,
        function.address.bus(),
        function.address.device(),
        function.address.function()
    );
    Some(function)
}

/// Program memory BAR `slot` (32- or 64-bit) to `new`, with decoding off meanwhile.
pub fn move_bar(address: PciAddress, slot: u8, new: u64) {
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

/// Turn on memory decoding and bus mastering.
pub fn enable(address: PciAddress) {
    let command = cfg_read(address, REG_COMMAND) & 0xFFFF;
    cfg_write(address, REG_COMMAND, command | COMMAND_MEMORY | COMMAND_BUS_MASTER);
}

/// `size` bytes of a BAR at `address` as an MMIO region (`None` for address 0).
///
/// # Safety
/// The range must be device memory reachable at that CPU address (x86_64: below 4 GiB in the
/// uncached part of the identity map; aarch64: any, the MMU is off), used only by the mailbox.
pub unsafe fn map(address: u64, size: u64) -> Option<MmioRegion> {
    let ptr = NonNull::new(address as usize as *mut u32)?;
    // SAFETY: the caller's contract.
    Some(unsafe { MmioRegion::new(ptr, size as usize) })
}
