//! Probe: which GPU the register window belongs to, from `PMC.BOOT_0` (nvidia-hardware-envytools
//! §2.2.1: "You can get the GPU id of a card by reading from its PMC area"; the id table is
//! §2.2.3), and whether this driver can run it. One register read, no write.
//!
//! What the driver needs, and which NV50-family chips lack it (§2.2.2 order, ranges
//! left-inclusive as the document writes them):
//!
//! - falcon engines (§2.10.1): none on G80, G84-G96 and G200 (their video engines are VP2,
//!   not falcons);
//! - the v3 falcons PCOPY and PDAEMON (§2.10.1: `PCOPY[0]` `GT215:GK104`, PDAEMON `GT215-`):
//!   G98, MCP77 and MCP79 have only the v0 video falcons;
//! - on-board VRAM for the channel structures (§2.1.1: IGPs "don't have on-board memory or
//!   memory controller, sharing the main system RAM instead"): MCP89 is an IGP.
//!
//! GT215, GT216 and GT218 have all of it. Decision: the driver accepts the three (§2.10.1 lists
//! the same falcon units and §2.8 the same PFIFO for them); it is tested against GT215 only.

use baregpu_hal::RegisterIoExt;
use baregpu_regs::nvidia::Chipset;
use baregpu_regs::nvidia::pmc::BOOT_0;

use crate::Bar;
pub use crate::error::Missing;
use crate::error::{DeviceGone, ProbeError};

/// The chip, decoded from `PMC.BOOT_0`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct Identity {
    /// The chipset (`BOOT_0.CHIPSET`, the §2.2.3 GPU id).
    pub chipset: Chipset,
    /// `BOOT_0` as read (the low bits hold the stepping).
    pub boot0: u32,
}

impl Identity {
    /// Decode `BOOT_0` and check the chip is one the driver runs.
    ///
    /// All-ones is [`ProbeError::DeviceGone`]; an id the §2.2.3 table lacks is
    /// [`ProbeError::UnknownChipset`]; a known chip this driver cannot run is
    /// [`ProbeError::Unsupported`] naming what it lacks ([`support`]).
    pub fn decode(boot0: u32) -> Result<Identity, ProbeError> {
        if boot0 == u32::MAX {
            return Err(ProbeError::DeviceGone(DeviceGone));
        }
        let reg = BOOT_0::from_raw(boot0);
        let chipset =
            reg.chipset().map_err(|_| ProbeError::UnknownChipset { id: reg.chipset_raw() })?;
        support(chipset).map_err(|missing| ProbeError::Unsupported { chipset, missing })?;
        Ok(Identity { chipset, boot0 })
    }
}

/// Whether the driver runs `chipset`, or what it lacks (see the [module docs](self)).
pub fn support(chipset: Chipset) -> Result<(), Missing> {
    use Chipset::*;
    match chipset {
        GT215 | GT216 | GT218 => Ok(()),
        MCP89 => Err(Missing::Vram),
        G98 | MCP77 | MCP79 => Err(Missing::CopyEngineAndDaemon),
        G80 | G84 | G86 | G92 | G94 | G96 | G200 => Err(Missing::Falcon),
        _ => Err(Missing::NotTesla),
    }
}

/// Read `PMC.BOOT_0` and decode it ([`Identity::decode`]). One read, no write.
pub fn probe(io: &Bar<impl baregpu_hal::RegisterIo>) -> Result<Identity, ProbeError> {
    Identity::decode(io.read::<BOOT_0>().raw())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn boot0(id: u32) -> u32 {
        BOOT_0::CHIPSET.set(0, id)
    }

    #[test]
    fn gt215_decodes_and_is_supported() {
        let id = Identity::decode(boot0(0xa3) | 0xa2).unwrap();
        assert_eq!(id.chipset, Chipset::GT215);
    }

    #[test]
    fn every_nv50_family_chip_is_identified_and_the_refusals_name_what_is_missing() {
        let cases = [
            (0x50, Missing::Falcon),
            (0x84, Missing::Falcon),
            (0x96, Missing::Falcon),
            (0xa0, Missing::Falcon),
            (0x98, Missing::CopyEngineAndDaemon),
            (0xaa, Missing::CopyEngineAndDaemon),
            (0xac, Missing::CopyEngineAndDaemon),
            (0xaf, Missing::Vram),
            (0xc0, Missing::NotTesla),
            (0x40, Missing::NotTesla),
        ];
        for (id, missing) in cases {
            match Identity::decode(boot0(id)) {
                Err(ProbeError::Unsupported { missing: m, chipset }) => {
                    assert_eq!(m, missing, "{chipset:?}");
                    assert_eq!(chipset.id(), Some(id));
                }
                other => panic!("{id:#x}: {other:?}"),
            }
        }
        for id in [0xa3, 0xa5, 0xa8] {
            assert!(Identity::decode(boot0(id)).is_ok(), "{id:#x}");
        }
    }

    #[test]
    fn all_ones_and_unknown_ids_are_typed_errors() {
        assert_eq!(Identity::decode(u32::MAX), Err(ProbeError::DeviceGone(DeviceGone)));
        assert_eq!(Identity::decode(boot0(0x1ff)), Err(ProbeError::UnknownChipset { id: 0x1ff }));
    }
}
