//! Finding a Cypress or Cayman on the PCI bus and enabling it.
//!
//! [`probe`] identifies the function by the Evergreen chipset table's PCI IDs
//! ([`baregpu_regs::evergreen::PCI_IDS`], from Linux drm_pciids.h) and finds the register BAR
//! (the HAL's [`probe_gpu`](baregpu_hal::pci::probe_gpu), shared by every family's driver);
//! [`enable`] turns on memory decoding and bus mastering, which the CP needs to fetch the ring
//! and write back its read pointer, fences and interrupt vectors.

use baregpu_hal::pci::{self, ConfigRegionAccess, GpuProbeError, PciAddress, PciMatch, ProbedGpu};
use baregpu_regs::evergreen::{Chipset, PCI_IDS};

pub use baregpu_hal::pci::RegisterBar;

/// Smallest usable register BAR: 64 KiB. Every register the driver writes through MMIO (CP,
/// GRBM, RLC, IH, SRBM, scratch) lies below 0x10000 (Linux radeon evergreend.h); the context
/// registers above 0x28000 are written through `SET_CONTEXT_REG` packets, never through MMIO.
pub const MIN_REGISTER_BAR_SIZE: u64 = 64 * 1024;

/// A supported Evergreen/Cayman found by [`probe`]: its function, chipset, name and register
/// BAR (map it and hand the mapping to [`crate::Evergreen::init`]).
pub type Probed = ProbedGpu<Chipset>;

/// Why a function is not a GPU this driver can run.
pub type ProbeError = GpuProbeError;

/// Probe `addr`: a chipset of [`baregpu_regs::evergreen::PCI_IDS`] with a register BAR (the
/// first non-prefetchable memory BAR: BAR2 on real boards, behind the 64-bit VRAM aperture) of
/// at least [`MIN_REGISTER_BAR_SIZE`]. Reads configuration space only; touches no register.
pub fn probe(cfg: &impl ConfigRegionAccess, addr: PciAddress) -> Result<Probed, ProbeError> {
    probe_with(cfg, addr, PCI_IDS)
}

/// [`probe`] against `table` instead of [`PCI_IDS`]: for a board whose device ID the generated
/// table lacks (a late revision, an OEM or FirePro ID), listed as the chipset it is. The table
/// is searched in order; extend the generated one by putting it after your own entries.
///
/// ```
/// use baregpu_hal::pci::PciMatch;
/// use baregpu_regs::evergreen::Chipset;
/// static MY_IDS: &[PciMatch<Chipset>] = &[
///     PciMatch { vendor: 0x1002, first: 0xBEEF, last: 0xBEEF, chipset: Chipset::CYPRESS, name: Some("my board") },
/// ];
/// # fn f(cfg: &impl baregpu_hal::pci::ConfigRegionAccess, addr: baregpu_hal::pci::PciAddress) {
/// let probed = baregpu_radeon_evergreen::pci::probe_with(cfg, addr, MY_IDS);
/// # }
/// ```
pub fn probe_with(
    cfg: &impl ConfigRegionAccess,
    addr: PciAddress,
    table: &[PciMatch<Chipset>],
) -> Result<Probed, ProbeError> {
    pci::probe_gpu(cfg, addr, table, MIN_REGISTER_BAR_SIZE, Chipset::name)
}

/// Enable memory decoding (the register BAR answers) and bus mastering (the CP fetches the ring
/// and indirect buffers and writes back its read pointer, fences and interrupt vectors) in the
/// command register of `addr`. Returns the command register as written.
pub fn enable(cfg: &impl ConfigRegionAccess, addr: PciAddress) -> Result<u16, ProbeError> {
    Ok(pci::enable_memory_and_bus_master(cfg, addr)?)
}
