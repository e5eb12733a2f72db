//! Message-signalled interrupts: MSI and MSI-X set-up over `pci_types`' capability parsing.
//!
//! A message is a 32-bit write of `data` to `address` that the interrupt controller turns
//! into an interrupt: on x86 the local APIC's window ([`MsiMessage::x86_lapic`]); on aarch64
//! the GIC ITS translater or GICv2m frame named by the device tree. The GPU drivers enable
//! interrupt sources on the device; this module routes them to the CPU.
//!
//! MSI-X is enabled with the function masked, every table entry masked, the chosen entries
//! programmed and unmasked, then the function unmasked (PCI Local Bus Specification 3.0
//! §6.8.2), so no half-programmed entry can fire.

use baregpu_hal::RegisterIo;
use baregpu_hal::pci::{ConfigRegionAccess, PciAddress, PciFunction};
use core::fmt;
use pci_types::capability::{MsiCapability, MsixCapability, PciCapability};
use pci_types::{EndpointHeader, PciHeader};

/// Bytes per MSI-X table entry: address low, address high, data, vector control.
const MSIX_ENTRY_BYTES: usize = 16;
/// Vector control bit 0: the entry is masked.
const MSIX_ENTRY_MASKED: u32 = 1;
/// Base of the x86 local APIC's MSI address window (Intel SDM vol. 3A §11.11.1).
const X86_MSI_WINDOW: u64 = 0xFEE0_0000;

/// One interrupt message: the device writes `data` to `address`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct MsiMessage {
    /// Bus address written.
    pub address: u64,
    /// Value written.
    pub data: u32,
}

impl MsiMessage {
    /// Deliver `vector` to the local APIC with ID `apic_id`: fixed delivery, edge triggered,
    /// physical destination (Intel SDM vol. 3A §11.11.1-2). Vectors 0-15 are reserved.
    pub const fn x86_lapic(apic_id: u8, vector: u8) -> MsiMessage {
        MsiMessage { address: X86_MSI_WINDOW | (apic_id as u64) << 12, data: vector as u32 }
    }
}

/// Why MSI or MSI-X could not be set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum MsiError {
    /// The function is not an endpoint, or has no capability of the kind asked for.
    NoCapability,
    /// An entry number past the end of the MSI-X table.
    NoSuchEntry {
        /// The entry asked for.
        entry: u16,
        /// Entries in the table.
        entries: u16,
    },
    /// The MSI-X table's BAR is missing, not a memory BAR, or too small for the table.
    BadTableBar {
        /// BAR slot the capability names.
        slot: u8,
    },
}

impl fmt::Display for MsiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MsiError::NoCapability => write!(f, "the function has no such interrupt capability"),
            MsiError::NoSuchEntry { entry, entries } => {
                write!(f, "MSI-X entry {entry} is past the table's {entries} entries")
            }
            MsiError::BadTableBar { slot } => {
                write!(f, "the MSI-X table does not fit memory BAR{slot}")
            }
        }
    }
}

impl core::error::Error for MsiError {}

fn capabilities(
    access: &impl ConfigRegionAccess,
    address: PciAddress,
) -> Option<impl Iterator<Item = PciCapability> + '_> {
    let header = EndpointHeader::from_header(PciHeader::new(address), access)?;
    // At most 48 capabilities fit the 192 bytes after the header: bounds a malformed list
    // that points back at itself.
    Some(header.capabilities(access).take(48))
}

/// A function's MSI-X capability and where its table is.
#[derive(Debug, Clone, Copy)]
pub struct Msix {
    capability: MsixCapability,
    address: PciAddress,
    table_bus_address: u64,
}

impl Msix {
    /// Find the MSI-X capability of `function` and locate its table in a memory BAR.
    pub fn find(
        access: &impl ConfigRegionAccess,
        function: &PciFunction,
    ) -> Result<Msix, MsiError> {
        let capability = capabilities(access, function.address)
            .and_then(|mut caps| {
                caps.find_map(|c| match c {
                    PciCapability::MsiX(m) => Some(m),
                    _ => None,
                })
            })
            .ok_or(MsiError::NoCapability)?;
        let slot = capability.table_bar();
        let (bar, bar_size) =
            function.memory_bar(usize::from(slot)).ok_or(MsiError::BadTableBar { slot })?;
        let offset = u64::from(capability.table_offset());
        let bytes = (usize::from(capability.table_size()) * MSIX_ENTRY_BYTES) as u64;
        if offset.checked_add(bytes).is_none_or(|end| end > bar_size) {
            return Err(MsiError::BadTableBar { slot });
        }
        Ok(Msix { capability, address: function.address, table_bus_address: bar + offset })
    }

    /// Entries in the table.
    pub fn entries(&self) -> u16 {
        self.capability.table_size()
    }

    /// Bus (physical) address of the table: map [`table_bytes`](Self::table_bytes) bytes of
    /// it uncached and pass the mapping to [`enable`](Self::enable).
    pub fn table_address(&self) -> u64 {
        self.table_bus_address
    }

    /// Size of the table in bytes.
    pub fn table_bytes(&self) -> usize {
        usize::from(self.entries()) * MSIX_ENTRY_BYTES
    }

    /// Enable MSI-X with `routes` (entry number, message) programmed and unmasked and every
    /// other entry masked. `table` is the table mapped uncached: offset 0 is entry 0.
    ///
    /// Nothing is written when an entry number is out of range.
    pub fn enable(
        &mut self,
        access: &impl ConfigRegionAccess,
        table: &impl RegisterIo,
        routes: &[(u16, MsiMessage)],
    ) -> Result<(), MsiError> {
        let entries = self.entries();
        if let Some(&(entry, _)) = routes.iter().find(|(e, _)| *e >= entries) {
            return Err(MsiError::NoSuchEntry { entry, entries });
        }
        self.capability.set_function_mask(true, access);
        self.capability.set_enabled(true, access);
        for entry in 0..usize::from(entries) {
            table.write32(entry * MSIX_ENTRY_BYTES + 12, MSIX_ENTRY_MASKED);
        }
        for &(entry, message) in routes {
            let at = usize::from(entry) * MSIX_ENTRY_BYTES;
            table.write32(at, message.address as u32);
            table.write32(at + 4, (message.address >> 32) as u32);
            table.write32(at + 8, message.data);
            table.write32(at + 12, 0);
        }
        self.capability.set_function_mask(false, access);
        Ok(())
    }

    /// Disable MSI-X (the function falls back to INTx, if it has a pin).
    pub fn disable(&mut self, access: &impl ConfigRegionAccess) {
        self.capability.set_enabled(false, access);
    }

    /// The function's address.
    pub fn function(&self) -> PciAddress {
        self.address
    }
}

/// Enable plain MSI on `function` with one vector delivering `message`.
pub fn enable_msi(
    access: &impl ConfigRegionAccess,
    function: PciAddress,
    message: MsiMessage,
) -> Result<(), MsiError> {
    let capability: MsiCapability = capabilities(access, function)
        .and_then(|mut caps| {
            caps.find_map(|c| match c {
                PciCapability::Msi(m) => Some(m),
                _ => None,
            })
        })
        .ok_or(MsiError::NoCapability)?;
    capability.set_message_info(message.address, message.data, access);
    capability
        .set_multiple_message_enable(pci_types::capability::MultipleMessageSupport::Int1, access);
    capability.set_enabled(true, access);
    Ok(())
}
