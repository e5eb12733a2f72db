//! Finding a Cypress or Cayman on the PCI bus and enabling it.
//!
//! [`probe`] identifies the function by the Evergreen chipset table's PCI IDs
//! ([`baregpu_regs::evergreen::PCI_IDS`], from Linux drm_pciids.h) and finds the register BAR;
//! [`enable`] turns on memory decoding and bus mastering, which the CP needs to fetch the ring
//! and write back its read pointer and fences.

use core::fmt;

use baregpu_hal::pci::{self, Bar, ConfigRegionAccess, PciAddress, PciError, PciFunction};
use baregpu_regs::evergreen::{Chipset, identify_pci};
use pci_types::{CommandRegister, EndpointHeader, PciHeader};

/// Smallest usable register BAR: 64 KiB. Every register the driver writes through MMIO (CP,
/// GRBM, RLC, IH, SRBM, scratch) lies below 0x10000 (Linux radeon evergreend.h); the context
/// registers above 0x28000 are written through `SET_CONTEXT_REG` packets, never through MMIO.
pub const MIN_REGISTER_BAR_SIZE: u64 = 64 * 1024;

/// The register BAR: the first **non-prefetchable memory** BAR. Evergreen boards put the
/// prefetchable 64-bit VRAM aperture at BAR0 and the registers at BAR2 (Linux radeon
/// radeon_device.c: `rmmio_base = pci_resource_start(pdev, 2)` before Bonaire); registers have
/// read side effects and are never prefetchable, VRAM always is.
pub fn register_bar(function: &PciFunction) -> Option<(usize, u64, u64)> {
    function.bars.iter().enumerate().find_map(|(slot, bar)| match bar {
        Some(Bar::Memory { address, size, prefetchable: false, .. }) => {
            Some((slot, *address, *size))
        }
        _ => None,
    })
}

/// The register BAR of a probed device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegisterBar {
    /// BAR slot (2 on real boards; see [`register_bar`]).
    pub slot: usize,
    /// Bus address of register offset 0.
    pub address: u64,
    /// Size in bytes (at least [`MIN_REGISTER_BAR_SIZE`]).
    pub size: u64,
}

/// A supported Evergreen/Cayman found by [`probe`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Probed {
    /// What probing found (IDs, class, BARs, interrupt pin).
    pub function: PciFunction,
    /// The chipset its PCI ID names.
    pub chip: Chipset,
    /// Marketing name of its PCI ID, for logs (the chipset name where the table has none).
    pub name: &'static str,
    /// The register BAR (map it and hand the mapping to [`crate::Evergreen::init`]).
    pub registers: RegisterBar,
}

/// Why a function is not a GPU this driver can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum ProbeError {
    /// Probing failed (no function, not an endpoint, bad BAR).
    Pci(PciError),
    /// The IDs are not a Cypress or Cayman of the chipset table.
    NotSupported {
        /// PCI vendor ID.
        vendor: u16,
        /// PCI device ID.
        device: u16,
    },
    /// No non-prefetchable memory BAR (see [`register_bar`]).
    NoRegisterBar,
    /// The register BAR is smaller than [`MIN_REGISTER_BAR_SIZE`].
    RegisterBarTooSmall {
        /// Its size in bytes.
        size: u64,
    },
}

impl From<PciError> for ProbeError {
    fn from(e: PciError) -> Self {
        ProbeError::Pci(e)
    }
}

impl fmt::Display for ProbeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProbeError::Pci(_) => f.write_str("PCI probe failed"),
            ProbeError::NotSupported { vendor, device } => {
                write!(f, "{vendor:04x}:{device:04x} is not a supported Radeon Evergreen/Cayman")
            }
            ProbeError::NoRegisterBar => write!(f, "no non-prefetchable memory BAR for registers"),
            ProbeError::RegisterBarTooSmall { size } => write!(
                f,
                "register BAR of {size:#x} bytes is smaller than {MIN_REGISTER_BAR_SIZE:#x}"
            ),
        }
    }
}

impl core::error::Error for ProbeError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            ProbeError::Pci(e) => Some(e),
            _ => None,
        }
    }
}

/// Probe `addr`: a chipset of [`baregpu_regs::evergreen::PCI_IDS`] with a register BAR
/// ([`register_bar`]) of at least [`MIN_REGISTER_BAR_SIZE`]. Reads configuration space only;
/// touches no register.
pub fn probe(cfg: &impl ConfigRegionAccess, addr: PciAddress) -> Result<Probed, ProbeError> {
    let function = pci::probe(cfg, addr)?;
    let unsupported = ProbeError::NotSupported { vendor: function.vendor, device: function.device };
    let entry = identify_pci(function.vendor, function.device).ok_or(unsupported)?;
    let (slot, address, size) = register_bar(&function).ok_or(ProbeError::NoRegisterBar)?;
    if size < MIN_REGISTER_BAR_SIZE {
        return Err(ProbeError::RegisterBarTooSmall { size });
    }
    Ok(Probed {
        function,
        chip: entry.chipset,
        name: entry.name.unwrap_or(entry.chipset.name()),
        registers: RegisterBar { slot, address, size },
    })
}

/// Enable memory decoding (the register BAR answers) and bus mastering (the CP fetches the ring
/// and indirect buffers and writes back its read pointer, fences and interrupt vectors) in the
/// command register of `addr`. Returns the command register as written.
pub fn enable(cfg: &impl ConfigRegionAccess, addr: PciAddress) -> Result<u16, ProbeError> {
    let mut endpoint =
        EndpointHeader::from_header(PciHeader::new(addr), cfg).ok_or(PciError::NotEndpoint)?;
    let mut written = CommandRegister::empty();
    endpoint.update_command(cfg, |c| {
        written = c | CommandRegister::MEMORY_ENABLE | CommandRegister::BUS_MASTER_ENABLE;
        written
    });
    Ok(written.bits())
}
