//! Finding an NV50-family GPU on the PCI bus: the chipset table's PCI IDs
//! ([`baregpu_regs::nvidia::PCI_IDS`], nvidia-hardware-envytools §2.3) and its three memory
//! apertures (§2.4.1): BAR0 the 16 MiB MMIO registers, BAR1 the VRAM aperture (prefetchable,
//! 64-bit on PCIe), then the RAMIN aperture ("BAR2 slot on native PCIE, BAR3 on native
//! PCI/AGP"): the memory BAR after the VRAM aperture, whichever slot it has.
//!
//! The chipset the PCI ID names is checked against what the driver runs ([`support`]) before
//! the kernel maps anything; [`crate::Tesla::init`] checks `PMC.BOOT_0` again.

use baregpu_hal::pci::{self, ConfigRegionAccess, GpuProbeError, PciAddress, ProbedGpu};
use baregpu_regs::nvidia::{Chipset, PCI_IDS};

use crate::error::ProbeError;
use crate::identity::support;

/// The MMIO registers span 16 MiB ("a 16MB area", §2.4.1): PMEM at 0x700000 and the channel
/// control areas at 0xc00000 lie near its top.
pub const MIN_REGISTER_BAR_SIZE: u64 = 16 << 20;

/// A supported GPU and its apertures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Probed {
    /// The function, chipset, name and register BAR (BAR0).
    pub gpu: ProbedGpu<Chipset>,
    /// The VRAM aperture (bus address, size), if decoded.
    pub vram_aperture: Option<(u64, u64)>,
    /// The RAMIN aperture (bus address, size), if decoded.
    pub ramin_aperture: Option<(u64, u64)>,
}

/// Why a function is not a GPU this driver runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum PciProbeError {
    /// Not an nVidia GPU of the table, or no usable register BAR.
    Probe(GpuProbeError),
    /// A known nVidia chip the driver cannot run ([`ProbeError::Unsupported`]).
    Chip(ProbeError),
}

impl core::fmt::Display for PciProbeError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            PciProbeError::Probe(_) => f.write_str("PCI probe failed"),
            PciProbeError::Chip(_) => f.write_str("the chip is not supported"),
        }
    }
}

impl core::error::Error for PciProbeError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            PciProbeError::Probe(e) => Some(e),
            PciProbeError::Chip(e) => Some(e),
        }
    }
}

impl From<GpuProbeError> for PciProbeError {
    fn from(e: GpuProbeError) -> Self {
        PciProbeError::Probe(e)
    }
}

/// Probe `addr`. Reads configuration space only; touches no register.
pub fn probe(cfg: &impl ConfigRegionAccess, addr: PciAddress) -> Result<Probed, PciProbeError> {
    let gpu = pci::probe_gpu(cfg, addr, PCI_IDS, MIN_REGISTER_BAR_SIZE, Chipset::name)?;
    let chipset = gpu.chip;
    support(chipset)
        .map_err(|missing| PciProbeError::Chip(ProbeError::Unsupported { chipset, missing }))?;
    let after = |first: usize| (first..6).find_map(|s| gpu.function.memory_bar(s).map(|b| (s, b)));
    let vram = after(gpu.registers.slot + 1);
    let ramin = vram.and_then(|(slot, _)| after(slot + 1));
    Ok(Probed { gpu, vram_aperture: vram.map(|v| v.1), ramin_aperture: ramin.map(|r| r.1) })
}

/// Enable memory decoding and bus mastering (PFIFO fetches IB entries and pushbuffers from
/// system memory). Returns the command register as written.
pub fn enable(cfg: &impl ConfigRegionAccess, addr: PciAddress) -> Result<u16, PciProbeError> {
    pci::enable_memory_and_bus_master(cfg, addr)
        .map_err(|e| PciProbeError::Probe(GpuProbeError::Pci(e)))
}
