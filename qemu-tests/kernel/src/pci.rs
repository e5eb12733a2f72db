//! PCI configuration access: QEMU's real bus through configuration mechanism #1 (ports
//! 0xCF8/0xCFC, segment 0, 256-byte headers), and [`Platform`], which routes segment 0 there
//! and the mailbox's virtual segment to the emulated GPU.

use crate::mailbox::{MailboxConfig, VIRTUAL_SEGMENT};
use baregpu_hal::pci::{ConfigRegionAccess, PciAddress};
use spin::Mutex;
use x86_64::instructions::interrupts::without_interrupts;
use x86_64::instructions::port::Port;

const CONFIG_ADDRESS: u16 = 0xCF8;
const CONFIG_DATA: u16 = 0xCFC;

/// Serialises the address/data port pair.
static PORT_LOCK: Mutex<()> = Mutex::new(());

/// Configuration mechanism #1 on segment 0. Other segments and offsets past 0xFF read
/// all-ones and ignore writes.
#[derive(Debug, Clone, Copy, Default)]
pub struct PortConfig;

impl PortConfig {
    fn address(address: PciAddress, offset: u16) -> Option<u32> {
        if address.segment() != 0 || offset > 0xFC {
            return None;
        }
        Some(
            0x8000_0000
                | u32::from(address.bus()) << 16
                | u32::from(address.device()) << 11
                | u32::from(address.function()) << 8
                | u32::from(offset & 0xFC),
        )
    }
}

impl ConfigRegionAccess for PortConfig {
    unsafe fn read(&self, address: PciAddress, offset: u16) -> u32 {
        let Some(cf8) = Self::address(address, offset) else { return u32::MAX };
        without_interrupts(|| {
            let _guard = PORT_LOCK.lock();
            // SAFETY: 0xCF8/0xCFC are the PCI configuration ports, owned by this type and
            // serialised by PORT_LOCK with interrupts off.
            unsafe {
                Port::<u32>::new(CONFIG_ADDRESS).write(cf8);
                Port::<u32>::new(CONFIG_DATA).read()
            }
        })
    }

    unsafe fn write(&self, address: PciAddress, offset: u16, value: u32) {
        let Some(cf8) = Self::address(address, offset) else { return };
        without_interrupts(|| {
            let _guard = PORT_LOCK.lock();
            // SAFETY: as in `read`; the caller vouches for the write's effect on the device.
            unsafe {
                Port::<u32>::new(CONFIG_ADDRESS).write(cf8);
                Port::<u32>::new(CONFIG_DATA).write(value);
            }
        })
    }
}

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
