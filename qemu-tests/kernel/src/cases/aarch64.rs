//! `aarch64-*`: the kernel on QEMU `virt`: its own services, the PCI bus through ECAM, and the
//! self-test device through the polled mailbox, with the same case code as x86_64.

use super::{CaseError, boot, expect, expect_eq, selftest};
use crate::Kernel;
use crate::aarch64::unaligned_load;
use crate::mailbox;
use crate::pci::HOST;
use baregpu_hal::pci::{self, ConfigRegionAccess, PciAddress};

/// QEMU's PCIe host bridge (`gpex-pcihost`, Red Hat 1b36:0008) at 00:00.0 of `virt`.
const GPEX_ID: u32 = 0x0008_1B36;

/// `aarch64-boot`: heap, DMA pool and generic-timer clock (the `boot` checks), the PCI bus
/// through ECAM (host bridge at 00:00.0), and the ivshmem function found, its BARs assigned
/// from the PCI MMIO window and its mailbox answering.
pub fn boot(kernel: &Kernel) -> Result<(), CaseError> {
    boot::run(kernel)?;
    // SAFETY: reading the ID dword of 00:00.0 has no side effects.
    let id = unsafe { HOST.read(PciAddress::new(0, 0, 0, 0), 0) };
    expect_eq("ecam: 00:00.0 is QEMU's PCIe host bridge", id, GPEX_ID)?;
    let mut functions = 0u32;
    pci::scan(&HOST, 0, |_| functions += 1);
    defmt::info!("ecam: {=u32} functions on bus 0", functions);
    expect_eq("ecam: one ivshmem function on the bus", mailbox::ivshmem_count() as u64, 1u64)?;
    let ivshmem = mailbox::attach(false).map_err(CaseError::Ivshmem)?;
    let mailbox = mailbox::Mailbox::connect(ivshmem)?;
    expect("mailbox: the model answers a reset", mailbox.reset().is_ok())
}

/// `aarch64-selftest`: the x86_64 `selftest-registers` and `selftest-dma` cases.
pub fn selftest(kernel: &Kernel) -> Result<(), CaseError> {
    selftest::registers(kernel)?;
    selftest::dma(kernel)
}

/// `aarch64-fail-exception`: an unaligned load with the MMU off is an alignment fault, which
/// must be reported and end the case with status 35.
pub fn fail_exception(kernel: &Kernel) -> Result<(), CaseError> {
    let address = kernel.dma as *const _ as usize | 1;
    let value = unaligned_load(address);
    defmt::error!("unaligned load returned {=u32:#x}", value);
    Err(CaseError::Check("unaligned load did not fault"))
}
