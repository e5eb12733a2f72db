//! BCM2837 (Raspberry Pi 3) addresses, from the BCM2835 ARM Peripherals manual (peripherals at bus 0x7E000000 = ARM 0x3F000000 on
//! Pi 2/3).

use baregpu_hal::MmioRegion;
use core::ptr::NonNull;

/// ARM physical base of the peripheral window (bus 0x7E000000).
pub const PERIPHERAL_BASE: usize = 0x3F00_0000;
/// System timer (free-running 1 MHz counter).
pub const SYSTEM_TIMER: usize = PERIPHERAL_BASE + 0x3000;
/// Mailbox 0 (VC -> ARM) read register; mailbox 1 (ARM -> VC) follows at +0x20.
pub const MAILBOX: usize = PERIPHERAL_BASE + 0xB880;
/// GPIO function select / pull control.
pub const GPIO: usize = PERIPHERAL_BASE + 0x20_0000;
/// PL011 UART0.
pub const UART0: usize = PERIPHERAL_BASE + 0x20_1000;

/// The V3D register window (broadcom-videocore-iv-3d §10), at the BCM2837's address from the
/// register database (`Chipset::mmio_base`: bus 0x7EC00000).
pub const V3D: usize = match baregpu_videocore_v3d::regs::Chipset::BCM2837.mmio_base() {
    Some(base) => base as usize,
    None => panic!("the register database has no V3D address for the BCM2837"),
};
/// Bytes of the V3D window: one 4 KiB page holds every §10 register (the last, `V3D_ERRSTAT`,
/// is at 0xF20).
pub const V3D_WINDOW: usize = 4096;

/// A register block of `len` bytes at the fixed ARM physical address `base`.
///
/// # Safety
/// `base..base + len` must be one of the peripheral blocks above (device memory: the MMU is off,
/// see `boot.rs`), and the caller must not create two owners that disagree on its state.
pub unsafe fn region(base: usize, len: usize) -> MmioRegion {
    let ptr = NonNull::new(base as *mut u32).unwrap_or(NonNull::dangling());
    // SAFETY: forwarded to the caller; with the MMU off the address is the physical device.
    unsafe { MmioRegion::new(ptr, len) }
}
