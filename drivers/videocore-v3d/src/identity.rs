//! Probe: what the V3D says it is (broadcom-videocore-iv-3d §10, V3D identity registers,
//! Tables 79-81), decoded into an [`Identity`]. Nothing is written.

use baregpu_hal::{RegisterIo, RegisterIoExt};
use baregpu_regs::vc4::v3d::v3d_ident2::Tlbsz;
use baregpu_regs::vc4::v3d::{V3D_IDENT0, V3D_IDENT1, V3D_IDENT2};

use crate::Bar;
use crate::error::{DeviceGone, ProbeError};

/// Bytes per VPMSZ unit (Table 80: "multiples of 1K").
const VPM_UNIT_BYTES: u32 = 1024;
/// `VPMSZ` reads 0 for 16 units (Table 80: "0 => 16K"): the field is four bits wide.
const VPM_UNITS_WHEN_ZERO: u32 = 16;

/// Tile buffer size (`V3D_IDENT2.TLBSZ`, Table 81).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum TileBufferSize {
    /// A quarter of the full size.
    Quarter,
    /// Half the full size.
    Half,
    /// Full size (32x32 multisample, 64x64 pixels without).
    Full,
}

/// The V3D's identity and configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct Identity {
    /// Technology version (`IDENT0.TVER`, 2 on the VideoCore IV).
    pub tech_version: u8,
    /// Revision (`IDENT1.REV`).
    pub revision: u8,
    /// Slices (`IDENT1.NSLC`).
    pub slices: u8,
    /// QPUs per slice (`IDENT1.QUPS`).
    pub qpus_per_slice: u8,
    /// TMUs per slice (`IDENT1.TUPS`).
    pub tmus_per_slice: u8,
    /// Semaphores (`IDENT1.NSEM`).
    pub semaphores: u8,
    /// HDR rendering supported (`IDENT1.HDRT`).
    pub hdr: bool,
    /// VPM memory in bytes (`IDENT1.VPMSZ`).
    pub vpm_bytes: u32,
    /// VRI memory full size (`IDENT2.VRISZ`; half size otherwise).
    pub vri_full: bool,
    /// Tile buffer size (`IDENT2.TLBSZ`).
    pub tile_buffer: TileBufferSize,
    /// Tile buffer double-buffer mode supported (`IDENT2.TLBDB`).
    pub tile_double_buffer: bool,
}

impl Identity {
    /// Decode the three identity registers as read.
    ///
    /// All-ones in `IDENT0` is [`ProbeError::DeviceGone`]; an `IDENT0` that does not read
    /// "V3D" (a powered-off block reads zero) is [`ProbeError::NotV3d`]; a version other than
    /// the document's is [`ProbeError::UnsupportedVersion`]; no slices or QPUs, or an
    /// undocumented tile buffer size, is [`ProbeError::BadConfiguration`].
    pub fn decode(ident0: u32, ident1: u32, ident2: u32) -> Result<Identity, ProbeError> {
        if ident0 == u32::MAX {
            return Err(ProbeError::DeviceGone(DeviceGone));
        }
        let id0 = V3D_IDENT0::from_raw(ident0);
        // The reset value is the documented identity: "V3D" and technology version 2.
        if id0.idstr() != V3D_IDENT0::RESET.idstr() {
            return Err(ProbeError::NotV3d { ident0 });
        }
        if id0.tver() != V3D_IDENT0::RESET.tver() {
            return Err(ProbeError::UnsupportedVersion { version: id0.tver() });
        }
        let id1 = V3D_IDENT1::from_raw(ident1);
        if id1.nslc() == 0 || id1.qups() == 0 || ident1 == u32::MAX {
            return Err(ProbeError::BadConfiguration { register: "V3D_IDENT1", raw: ident1 });
        }
        let id2 = V3D_IDENT2::from_raw(ident2);
        let bad2 = ProbeError::BadConfiguration { register: "V3D_IDENT2", raw: ident2 };
        let tile_buffer = match id2.tlbsz().map_err(|_| bad2)? {
            Tlbsz::Quarter => TileBufferSize::Quarter,
            Tlbsz::Half => TileBufferSize::Half,
            Tlbsz::Full => TileBufferSize::Full,
        };
        let vpm_units = match u32::from(id1.vpmsz()) {
            0 => VPM_UNITS_WHEN_ZERO,
            n => n,
        };
        Ok(Identity {
            tech_version: id0.tver(),
            revision: id1.rev(),
            slices: id1.nslc(),
            qpus_per_slice: id1.qups(),
            tmus_per_slice: id1.tups(),
            semaphores: id1.nsem(),
            hdr: id1.hdrt_raw() != 0,
            vpm_bytes: vpm_units * VPM_UNIT_BYTES,
            vri_full: id2.vrisz_raw() != 0,
            tile_buffer,
            tile_double_buffer: id2.tlbdb_raw() != 0,
        })
    }

    /// QPUs in the system (slices x QPUs per slice).
    pub fn qpus(&self) -> u32 {
        u32::from(self.slices) * u32::from(self.qpus_per_slice)
    }

    /// One bit per slice, as the cache-clear fields of `V3D_SLCACTL` take them (Table 72:
    /// "1 bit per slice in system config").
    pub fn slice_mask(&self) -> u8 {
        ((1u32 << self.slices.min(4)) - 1) as u8
    }

    /// One bit per QPU, as `V3D_DBQITE`/`V3D_DBQITC` take them (Tables 73-74).
    pub fn qpu_mask(&self) -> u16 {
        ((1u32 << self.qpus().min(16)) - 1) as u16
    }
}

/// Read `V3D_IDENT0`, `V3D_IDENT1`, `V3D_IDENT2` and decode them ([`Identity::decode`]).
/// Three reads, no write, never a wait.
pub fn probe(io: &Bar<impl RegisterIo>) -> Result<Identity, ProbeError> {
    let ident0 = io.read::<V3D_IDENT0>().raw();
    if ident0 == u32::MAX {
        return Err(ProbeError::DeviceGone(DeviceGone));
    }
    let ident1 = io.read::<V3D_IDENT1>().raw();
    let ident2 = io.read::<V3D_IDENT2>().raw();
    Identity::decode(ident0, ident1, ident2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_reset_values_decode_to_the_reference_configuration() {
        let id = Identity::decode(
            V3D_IDENT0::RESET.raw(),
            V3D_IDENT1::RESET.raw(),
            V3D_IDENT2::RESET.raw(),
        )
        .unwrap();
        assert_eq!((id.slices, id.qpus_per_slice, id.tmus_per_slice), (3, 4, 2));
        assert_eq!(id.qpus(), 12);
        assert_eq!(id.vpm_bytes, 12 * 1024);
        assert_eq!(id.tile_buffer, TileBufferSize::Full);
        assert!(id.hdr && id.vri_full && id.tile_double_buffer);
        assert_eq!((id.slice_mask(), id.qpu_mask()), (0b111, 0xfff));
    }

    #[test]
    fn a_vpm_size_of_zero_means_16k() {
        let ident1 = V3D_IDENT1::VPMSZ.set(V3D_IDENT1::RESET.raw(), 0);
        let id = Identity::decode(V3D_IDENT0::RESET.raw(), ident1, V3D_IDENT2::RESET.raw());
        assert_eq!(id.unwrap().vpm_bytes, 16 * 1024);
    }
}
