//! Finding an R5xx on the PCI bus and enabling it.
//!
//! [`probe`] identifies the function by the R5xx chipset table's PCI IDs
//! ([`baregpu_regs::r5xx::PCI_IDS`], from Linux drm_pciids.h) and checks the register BAR
//! (the HAL's [`probe_gpu`](baregpu_hal::pci::probe_gpu), shared by every family's driver);
//! [`enable`] turns on memory decoding and bus mastering in the command register, which the CP
//! needs to fetch the ring and write back its read pointer and scratch registers (§5.4, §5.9).

use baregpu_hal::pci::{self, ConfigRegionAccess, GpuProbeError, PciAddress, ProbedGpu};
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
    pci::probe_gpu(cfg, addr, PCI_IDS, MIN_REGISTER_BAR_SIZE, Chipset::name)
}

/// Enable memory decoding and bus mastering in the command register of `addr`. Call it before
/// [`crate::R5xx::init`]. Returns the command register as written.
pub fn enable(cfg: &impl ConfigRegionAccess, addr: PciAddress) -> Result<u16, ProbeError> {
    Ok(pci::enable_memory_and_bus_master(cfg, addr)?)
}
