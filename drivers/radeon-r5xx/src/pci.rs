//! Finding an R5xx on the PCI bus and enabling it.
//!
//! [`probe`] identifies the function by the R5xx chipset table's PCI IDs
//! ([`baregpu_regs::r5xx::PCI_IDS`], from Linux drm_pciids.h) and checks the register BAR
//! (the HAL's [`probe_gpu`](baregpu_hal::pci::probe_gpu), shared by every family's driver);
//! [`enable`] turns on memory decoding and bus mastering in the command register, which the CP
//! needs to fetch the ring and write back its read pointer and scratch registers (§5.4, §5.9).

use baregpu_hal::pci::{self, ConfigRegionAccess, GpuProbeError, PciAddress, PciMatch, ProbedGpu};
use baregpu_regs::r5xx::{Chipset, PCI_IDS};

pub use baregpu_hal::pci::RegisterBar;

/// Smallest usable register BAR: 64 KiB, the span of the §11 `MMReg` offsets (all below
/// 0x10000).
pub const MIN_REGISTER_BAR_SIZE: u64 = 64 * 1024;

/// A supported R5xx found by [`probe`]: its function, chipset, name and register BAR (map it
/// and hand the mapping to [`crate::R5xx::init`]).
pub type Probed = ProbedGpu<Chipset>;

/// Why a function is not an R5xx this driver can run.
pub type ProbeError = GpuProbeError;

/// Probe `addr`: an R5xx from the chipset table ([`baregpu_regs::r5xx::PCI_IDS`]) with a
/// register BAR (the first non-prefetchable memory BAR: BAR0 on the emulated R520, BAR2 on real
/// X1000 boards) of at least [`MIN_REGISTER_BAR_SIZE`]. Reads configuration space only; touches
/// no register.
pub fn probe(cfg: &impl ConfigRegionAccess, addr: PciAddress) -> Result<Probed, ProbeError> {
    probe_with(cfg, addr, PCI_IDS)
}

/// [`probe`] against `table` instead of [`PCI_IDS`]: for a board whose device ID the generated
/// table lacks (a late revision, an OEM or FirePro ID), listed as the chipset it is. The table
/// is searched in order; extend the generated one by putting it after your own entries.
///
/// ```
/// use baregpu_hal::pci::PciMatch;
/// use baregpu_regs::r5xx::Chipset;
/// static MY_IDS: &[PciMatch<Chipset>] = &[
///     PciMatch { vendor: 0x1002, first: 0xBEEF, last: 0xBEEF, chipset: Chipset::R520, name: Some("my board") },
/// ];
/// # fn f(cfg: &impl baregpu_hal::pci::ConfigRegionAccess, addr: baregpu_hal::pci::PciAddress) {
/// let probed = baregpu_radeon_r5xx::pci::probe_with(cfg, addr, MY_IDS);
/// # }
/// ```
pub fn probe_with(
    cfg: &impl ConfigRegionAccess,
    addr: PciAddress,
    table: &[PciMatch<Chipset>],
) -> Result<Probed, ProbeError> {
    pci::probe_gpu(cfg, addr, table, MIN_REGISTER_BAR_SIZE, Chipset::name)
}

/// Enable memory decoding and bus mastering in the command register of `addr`. Call it before
/// [`crate::R5xx::init`]. Returns the command register as written.
pub fn enable(cfg: &impl ConfigRegionAccess, addr: PciAddress) -> Result<u16, ProbeError> {
    Ok(pci::enable_memory_and_bus_master(cfg, addr)?)
}
