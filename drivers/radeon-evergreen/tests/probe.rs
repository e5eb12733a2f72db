//! PCI probe: the chipset table decides, the register BAR is the first non-prefetchable memory
//! BAR (BAR2 behind the 64-bit VRAM aperture on real boards), unknown IDs are refused.

use baregpu_hal::pci::{PciAddress, PciError};
use baregpu_radeon_evergreen::pci::{self, ProbeError};
use baregpu_regs::evergreen::Chipset;
use gpu_device_model::{BarSpec, DeviceContext, GpuModel, InProcess, PciIdentity};

/// Configuration space only: a board layout with the given IDs and register BAR size.
struct Board {
    device: u16,
    vendor: u16,
    register_bar: u64,
}

impl GpuModel for Board {
    fn pci_identity(&self) -> PciIdentity {
        PciIdentity::new(self.vendor, self.device, 0x03_0000)
            .with_bar(0, BarSpec::mem64_prefetchable(256 << 20))
            .with_bar(2, BarSpec::mem32(self.register_bar))
    }
    fn mmio_read(&mut self, _bar: u8, _offset: u32, _dev: &mut DeviceContext<'_>) -> u32 {
        0
    }
    fn mmio_write(&mut self, _bar: u8, _offset: u32, _value: u32, _dev: &mut DeviceContext<'_>) {}
    fn reset(&mut self) {}
}

fn board(vendor: u16, device: u16, register_bar: u64) -> InProcess<Board> {
    InProcess::new(Board { vendor, device, register_bar }).expect("in-process board")
}

#[test]
fn cypress_and_cayman_ids_name_their_chip_and_bar2() {
    for (device, chip, name) in [
        (0x6898, Chipset::CYPRESS, "Radeon HD 5870"),
        (0x6899, Chipset::CYPRESS, "Radeon HD 5850"),
        (0x6718, Chipset::CAYMAN, "Radeon HD 6970"),
        (0x6719, Chipset::CAYMAN, "Radeon HD 6950"),
    ] {
        let b = board(0x1002, device, 128 << 10);
        let p = pci::probe(&b, b.pci_address()).expect("supported");
        assert_eq!((p.chip, p.name), (chip, name));
        assert_eq!(p.registers.slot, 2, "BAR0-1 are the prefetchable VRAM aperture");
        assert_eq!(p.registers.size, 128 << 10);
    }
}

#[test]
fn unknown_ids_are_not_supported() {
    for (vendor, device) in [(0x1002, 0x7100), (0x1002, 0x68A0), (0x8086, 0x6898)] {
        let b = board(vendor, device, 128 << 10);
        assert_eq!(
            pci::probe(&b, b.pci_address()),
            Err(ProbeError::NotSupported { vendor, device })
        );
    }
    let b = board(0x1002, 0x6898, 128 << 10);
    assert_eq!(
        pci::probe(&b, PciAddress::new(0, 0, 9, 0)),
        Err(ProbeError::Pci(PciError::NoDevice))
    );
}

#[test]
fn a_register_bar_below_64_kib_is_refused() {
    let b = board(0x1002, 0x6718, 4096);
    assert_eq!(
        pci::probe(&b, b.pci_address()),
        Err(ProbeError::RegisterBarTooSmall { size: 4096 })
    );
}

#[test]
fn enable_turns_on_decoding_and_bus_mastering() {
    let b = board(0x1002, 0x6898, 128 << 10);
    let command = pci::enable(&b, b.pci_address()).expect("endpoint");
    assert_eq!(command & 0b110, 0b110, "memory space and bus master bits");
}
