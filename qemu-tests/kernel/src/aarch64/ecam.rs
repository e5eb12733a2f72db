//! `virt`'s PCIe configuration space: the high ECAM window at 0x40_1000_0000, 256 MiB for
//! buses 0-255 (QEMU `hw/arm/virt.c`, `VIRT_HIGH_PCIE_ECAM`, used since machine version 3.0
//! when the CPU has 40 or more physical address bits, as the Cortex-A53 does; the low
//! `VIRT_PCIE_ECAM` window at 0x3F00_0000 is then not mapped).

use baregpu_platform::pci::Ecam;
use core::ptr::NonNull;

/// Base of the high ECAM window.
const BASE: usize = 0x40_1000_0000;

/// QEMU's PCI bus (segment 0).
// SAFETY: with the MMU off the window is Device memory, and nothing else touches it.
pub static HOST: Ecam =
    unsafe { Ecam::new(NonNull::new_unchecked(BASE as *mut u8), 0, 0, u8::MAX) };
