//! PCI configuration access: QEMU's real bus through configuration mechanism #1 (ports
//! 0xCF8/0xCFC, segment 0, 256-byte headers: `baregpu_platform::pci::PortConfig`), and
//! [`Platform`], which routes segment 0 there and the mailbox's virtual segment to the
//! emulated GPU.

use crate::mailbox::{MailboxConfig, VIRTUAL_SEGMENT};
use baregpu_hal::pci::{ConfigRegionAccess, PciAddress};
pub use baregpu_platform::pci::PortConfig;

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
            (0, _) => unsafe { PortConfig.read(address, offset) },
            // SAFETY: forwarded with the caller's guarantees.
            (VIRTUAL_SEGMENT, Some(m)) => unsafe { m.read(address, offset) },
            _ => u32::MAX,
        }
    }

    unsafe fn write(&self, address: PciAddress, offset: u16, value: u32) {
        match (address.segment(), self.mailbox) {
            // SAFETY: forwarded with the caller's guarantees.
            (0, _) => unsafe { PortConfig.write(address, offset, value) },
            // SAFETY: forwarded with the caller's guarantees.
            (VIRTUAL_SEGMENT, Some(m)) => unsafe { m.write(address, offset, value) },
            _ => {}
        }
    }
}
