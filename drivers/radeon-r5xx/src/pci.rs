//! Finding an R5xx on the PCI bus and enabling it.
//!
//! [`probe`] identifies the function by the R5xx chipset table's PCI IDs
//! ([`baregpu_regs::r5xx::PCI_IDS`], from Linux drm_pciids.h) and checks the register BAR; [`enable`] turns on memory
//! decoding and bus mastering in the command register, which the CP needs to fetch the ring and
//! write back its read pointer and scratch registers (§5.4, §5.9).

use core::fmt;

use baregpu_hal::pci::{self, Bar, ConfigRegionAccess, PciAddress, PciError, PciFunction};
use baregpu_regs::r5xx::{Chipset, identify_pci};
use pci_types::{CommandRegister, EndpointHeader, PciHeader};

/// Smallest usable register BAR: 64 KiB, the span of the §11 `MMReg` offsets (all below
/// 0x10000).
pub const MIN_REGISTER_BAR_SIZE: u64 = 64 * 1024;

/// Which BAR holds the registers: the first **non-prefetchable memory** BAR.
///
/// The emulated R520 (`r5xx-model`) has its 64 KiB register file at BAR0. Real X1000 boards
/// put the prefetchable VRAM aperture at BAR0 (64-bit, slots 0-1) and the registers at BAR2
/// (Linux `radeon_device.c`: `rmmio_base = pci_resource_start(pdev, 2)` before Bonaire).
/// Registers have read side effects, so they are never prefetchable; VRAM always is. Picking
/// the first non-prefetchable memory BAR finds the register file in both layouts.
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
    /// BAR slot (0 on the emulated R520, 2 on real boards; see [`register_bar`]).
    pub slot: usize,
    /// Bus address of register offset 0.
    pub address: u64,
    /// Size in bytes (at least [`MIN_REGISTER_BAR_SIZE`]).
    pub size: u64,
}

/// A supported R5xx found by [`probe`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Probed {
    /// What probing found (IDs, class, BARs, interrupt pin).
    pub function: PciFunction,
    /// The chipset its PCI IDs name.
    pub chip: Chipset,
    /// Marketing name of its PCI ID range, for logs (the chipset name where the table has none).
    pub name: &'static str,
    /// The register BAR (map it and hand the mapping to [`crate::R5xx::init`]).
    pub registers: RegisterBar,
}

/// Why a function is not an R5xx this driver can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum ProbeError {
    /// Probing failed (no function, not an endpoint, bad BAR).
    Pci(PciError),
    /// The IDs are not an R5xx in the chipset table.
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
                write!(f, "{vendor:04x}:{device:04x} is not a supported Radeon R5xx")
            }
            ProbeError::NoRegisterBar => write!(f, "no non-prefetchable memory BAR for registers"),
            ProbeError::RegisterBarTooSmall { size } => write!(
                f,
                "register BAR of {size:#x} bytes is smaller than {MIN_REGISTER_BAR_SIZE:#x}"
            ),
        }
    }
}

/// Probe `addr`: an R5xx from the chipset table ([`baregpu_regs::r5xx::PCI_IDS`]) with a register BAR
/// ([`register_bar`]) of at least [`MIN_REGISTER_BAR_SIZE`]. Reads configuration space only
/// (BAR sizing with decoding briefly off, as `baregpu_hal::pci::probe` does); touches no register.
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
/// and indirect buffers and writes back RPTR and scratch values, §5.4, §5.9) in the command
/// register of `addr`. Call it before [`crate::R5xx::init`]; Linux turns bus mastering on
/// before the CP bring-up (radeon_device.c `pci_set_master`). Returns the command register as
/// written.
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

impl core::error::Error for ProbeError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            ProbeError::Pci(e) => Some(e),
            _ => None,
        }
    }
}
