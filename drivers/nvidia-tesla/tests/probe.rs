//! PCI probe: the §2.3 table names the chip, chips the driver cannot run are refused before
//! anything is mapped, and the three apertures are found where §2.4.1 puts them (BAR0
//! registers, BAR1 VRAM, then the RAMIN aperture: BAR2 on PCIe, BAR3 on PCI/AGP).

use baregpu_nvidia_tesla::hal::pci::GpuProbeError;
use baregpu_nvidia_tesla::pci::{self, PciProbeError};
use baregpu_nvidia_tesla::regs::Chipset;
use baregpu_nvidia_tesla::{Missing, ProbeError};
use gpu_device_model::{BarSpec, DeviceContext, GpuModel, InProcess, PciIdentity};

/// Configuration space only.
struct Board {
    device: u16,
}

/// The RAMIN aperture's slot on this PCIe layout: 3, after the 64-bit VRAM BAR (slots 1-2).
const RAMIN_SLOT: usize = 3;

impl GpuModel for Board {
    fn pci_identity(&self) -> PciIdentity {
        PciIdentity::new(0x10de, self.device, 0x03_0000)
            .with_bar(0, BarSpec::mem32(16 << 20))
            .with_bar(1, BarSpec::mem64_prefetchable(256 << 20))
            .with_bar(RAMIN_SLOT, BarSpec::mem64_prefetchable(32 << 20))
    }
    fn mmio_read(&mut self, _bar: u8, _offset: u32, _dev: &mut DeviceContext<'_>) -> u32 {
        0
    }
    fn mmio_write(&mut self, _bar: u8, _offset: u32, _value: u32, _dev: &mut DeviceContext<'_>) {}
    fn reset(&mut self) {}
}

fn board(device: u16) -> InProcess<Board> {
    InProcess::new(Board { device }).expect("in-process board")
}

#[test]
fn a_gt240_is_a_gt215_with_its_registers_vram_and_ramin_apertures() {
    let b = board(0x0ca3);
    let p = pci::probe(&b, b.pci_address()).expect("supported");
    assert_eq!(p.gpu.chip, Chipset::GT215);
    assert_eq!((p.gpu.registers.slot, p.gpu.registers.size), (0, 16 << 20));
    assert_eq!(p.vram_aperture.map(|(_, size)| size), Some(256 << 20));
    assert_eq!(p.ramin_aperture.map(|(_, size)| size), Some(32 << 20));
}

#[test]
fn other_nv50_chips_are_refused_naming_what_they_lack_and_foreign_ids_are_not_ours() {
    for (device, chipset, missing) in [
        (0x0600, Chipset::G92, Missing::Falcon),
        (0x06e0, Chipset::G98, Missing::CopyEngineAndDaemon),
    ] {
        let b = board(device);
        assert_eq!(
            pci::probe(&b, b.pci_address()),
            Err(PciProbeError::Chip(ProbeError::Unsupported { chipset, missing }))
        );
    }
    let b = board(0xffee);
    assert!(matches!(
        pci::probe(&b, b.pci_address()),
        Err(PciProbeError::Probe(GpuProbeError::NotSupported { vendor: 0x10de, device: 0xffee }))
    ));
}
