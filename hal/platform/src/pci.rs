//! PCI configuration access: [`Ecam`] (PCIe memory-mapped configuration, any architecture)
//! and `PortConfig` (x86 configuration mechanism #1, feature `x86_64`), both
//! [`ConfigRegionAccess`] for `baregpu_hal::pci` and the drivers' `pci::probe`.
//!
//! A function that does not exist reads all-ones; offsets outside the space an access method
//! reaches (past 0xFF for ports, past 0xFFF for ECAM) and addresses on other segments or buses
//! read all-ones and ignore writes, as a master abort would.

pub use baregpu_hal::pci::{ConfigRegionAccess, PciAddress};
use core::ptr::NonNull;

/// PCIe enhanced configuration access (PCI Express Base Specification §7.2.2): 4 KiB of
/// configuration space per function at `base + (bus << 20 | device << 15 | function << 12)`.
///
/// The window's physical address and bus range come from the ACPI MCFG table on x86 (q35:
/// 0xB000_0000, buses 0-255) or the device tree's `pci-host-ecam-generic` node on aarch64
/// (QEMU `virt`: 0x40_1000_0000 high, or 0x3F00_0000 low, buses 0-255).
#[derive(Debug, Clone, Copy)]
pub struct Ecam {
    base: NonNull<u8>,
    segment: u16,
    first_bus: u8,
    last_bus: u8,
}

// SAFETY: every access is one aligned volatile 32-bit load or store to device memory, which
// the hardware serialises; the constructor's contract makes the mapping exclusive to ECAM use.
unsafe impl Send for Ecam {}
// SAFETY: as above.
unsafe impl Sync for Ecam {}

impl Ecam {
    /// The ECAM window mapped at `base` for buses `first_bus..=last_bus` of `segment` (`base`
    /// is where `first_bus` starts).
    ///
    /// # Safety
    /// `base` must map the window, `(last_bus - first_bus + 1) << 20` bytes, as device
    /// (uncached) memory for as long as the value and its copies live, and nothing may use
    /// that memory as normal memory.
    pub const unsafe fn new(base: NonNull<u8>, segment: u16, first_bus: u8, last_bus: u8) -> Ecam {
        Ecam { base, segment, first_bus, last_bus }
    }

    /// Byte offset of `offset` of `address` in the window, if the window covers it.
    fn offset_of(&self, address: PciAddress, offset: u16) -> Option<usize> {
        let in_window = address.segment() == self.segment
            && (self.first_bus..=self.last_bus).contains(&address.bus())
            && offset <= 0xFFC;
        in_window.then(|| {
            usize::from(address.bus() - self.first_bus) << 20
                | usize::from(address.device()) << 15
                | usize::from(address.function()) << 12
                | usize::from(offset & 0xFFC)
        })
    }
}

impl ConfigRegionAccess for Ecam {
    unsafe fn read(&self, address: PciAddress, offset: u16) -> u32 {
        let Some(at) = self.offset_of(address, offset) else { return u32::MAX };
        // SAFETY: `at` lies in the window (bus in range, device < 32, function < 8, offset
        // <= 0xFFC, 4-byte aligned), which the constructor's contract maps as device memory.
        unsafe { self.base.add(at).cast::<u32>().read_volatile() }
    }

    unsafe fn write(&self, address: PciAddress, offset: u16, value: u32) {
        let Some(at) = self.offset_of(address, offset) else { return };
        // SAFETY: as in `read`; the caller vouches for the write's effect on the device.
        unsafe { self.base.add(at).cast::<u32>().write_volatile(value) }
    }
}

#[cfg(all(feature = "x86_64", target_arch = "x86_64"))]
pub use ports::PortConfig;

#[cfg(all(feature = "x86_64", target_arch = "x86_64"))]
mod ports {
    use super::{ConfigRegionAccess, PciAddress};
    use core::sync::atomic::{AtomicBool, Ordering};
    use x86_64::instructions::interrupts::without_interrupts;
    use x86_64::instructions::port::Port;

    /// CONFIG_ADDRESS (PCI Local Bus Specification 3.0 §3.2.2.3.2).
    const CONFIG_ADDRESS: u16 = 0xCF8;
    /// CONFIG_DATA.
    const CONFIG_DATA: u16 = 0xCFC;
    /// CONFIG_ADDRESS bit 31: the access is a configuration cycle.
    const ENABLE: u32 = 1 << 31;

    /// Serialises the address/data pair across CPUs (interrupts are off on this one while it
    /// is held, so a handler cannot deadlock on it).
    static PORTS: AtomicBool = AtomicBool::new(false);

    /// x86 configuration mechanism #1 (ports 0xCF8/0xCFC) on segment 0: 256 bytes per
    /// function. `Sync`: each access takes a global spin lock with interrupts disabled.
    #[derive(Debug, Clone, Copy, Default)]
    pub struct PortConfig;

    impl PortConfig {
        fn address(address: PciAddress, offset: u16) -> Option<u32> {
            (address.segment() == 0 && offset <= 0xFC).then(|| {
                ENABLE
                    | u32::from(address.bus()) << 16
                    | u32::from(address.device()) << 11
                    | u32::from(address.function()) << 8
                    | u32::from(offset & 0xFC)
            })
        }

        fn locked<T>(f: impl FnOnce() -> T) -> T {
            without_interrupts(|| {
                while PORTS
                    .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
                    .is_err()
                {
                    core::hint::spin_loop();
                }
                let value = f();
                PORTS.store(false, Ordering::Release);
                value
            })
        }
    }

    impl ConfigRegionAccess for PortConfig {
        unsafe fn read(&self, address: PciAddress, offset: u16) -> u32 {
            let Some(cf8) = Self::address(address, offset) else { return u32::MAX };
            // SAFETY: 0xCF8/0xCFC are the configuration ports; the lock keeps the address
            // and data accesses of one request together.
            Self::locked(|| unsafe {
                Port::<u32>::new(CONFIG_ADDRESS).write(cf8);
                Port::<u32>::new(CONFIG_DATA).read()
            })
        }

        unsafe fn write(&self, address: PciAddress, offset: u16, value: u32) {
            let Some(cf8) = Self::address(address, offset) else { return };
            // SAFETY: as in `read`; the caller vouches for the write's effect on the device.
            Self::locked(|| unsafe {
                Port::<u32>::new(CONFIG_ADDRESS).write(cf8);
                Port::<u32>::new(CONFIG_DATA).write(value);
            })
        }
    }
}
