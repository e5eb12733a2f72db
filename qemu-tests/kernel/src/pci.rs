//! PCI configuration access: QEMU's real bus ([`HOST`]: on x86_64 configuration mechanism #1,
//! ports 0xCF8/0xCFC, `baregpu_platform::pci::PortConfig`; on aarch64 `virt`'s ECAM,
//! `baregpu_platform::pci::Ecam`), and [`Platform`], which routes segment 0 there and the
//! mailbox's virtual segment to the emulated GPU.

#[cfg(target_arch = "aarch64")]
pub use crate::aarch64::ecam::HOST;
use crate::mailbox::{MailboxConfig, VIRTUAL_SEGMENT};
use baregpu_hal::pci::{ConfigRegionAccess, PciAddress};
#[cfg(target_arch = "x86_64")]
pub use baregpu_platform::pci::PortConfig;

/// QEMU's own PCI bus (segment 0).
#[cfg(target_arch = "x86_64")]
pub const HOST: PortConfig = PortConfig;

/// All configuration spaces the kernel knows: segment 0 is QEMU's bus, segment
/// [`VIRTUAL_SEGMENT`] holds the emulated GPU behind the mailbox (if one is attached), at its
/// [`Mailbox::function`](crate::mailbox::Mailbox::function).
#[derive(Clone, Copy)]
pub struct Platform {
    /// The mailbox's virtual function, if a device model is attached.
    pub mailbox: Option<MailboxConfig>,
}

impl ConfigRegionAccess for Platform {
    unsafe fn read(&self, address: PciAddress, offset: u16) -> u32 {
        match (address.segment(), self.mailbox) {
            // SAFETY: forwarded with the caller's guarantees.
            (0, _) => unsafe { HOST.read(address, offset) },
            // SAFETY: forwarded with the caller's guarantees.
            (VIRTUAL_SEGMENT, Some(m)) => unsafe { m.read(address, offset) },
            _ => u32::MAX,
        }
    }

    unsafe fn write(&self, address: PciAddress, offset: u16, value: u32) {
        match (address.segment(), self.mailbox) {
            // SAFETY: forwarded with the caller's guarantees.
            (0, _) => unsafe { HOST.write(address, offset, value) },
            // SAFETY: forwarded with the caller's guarantees.
            (VIRTUAL_SEGMENT, Some(m)) => unsafe { m.write(address, offset, value) },
            _ => {}
        }
    }
}
