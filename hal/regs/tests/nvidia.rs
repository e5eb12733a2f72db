//! The generated nVidia registers used the way PFIFO and falcon code uses them
//! (nvidia-hardware-envytools §2.8.3, §2.10), over a recording bus.
#![cfg(feature = "nvidia")]

mod common;

use baregpu_hal::register::UnknownChipset;
use baregpu_hal::{Instance, Register, RegisterIoExt};
use baregpu_regs::nvidia::falcon::{
    CODE, CODE_INDEX, CODE_VIRT, DATA_INDEX, Fecs, Pcopy0, Pdaemon, UPLOAD, Units,
};
use baregpu_regs::nvidia::pdaemon::{MMIO_ERR_GF100_UNTIL_GF119, MMIO_ERR_GF119_ONWARD};
use baregpu_regs::nvidia::pfifo_user::{DMA_PUT, IB_PUT, UserG80};
use baregpu_regs::nvidia::pmc::BOOT_0;
use baregpu_regs::nvidia::{Chipset, identify_pci};

/// PDAEMON engine base (nvidia-hardware-envytools §2.5.2 "BAR0 address: 0x10a000").
const PDAEMON: usize = 0x10_A000;
/// G80 channel USER area of channel 3: BAR0 + 0xC00000 + chid * 0x2000 (§2.8.3).
const USER_CH3: usize = 0xC0_0000 + 3 * 0x2000;

#[test]
fn boot_0_decodes_the_chipset() {
    assert_eq!(BOOT_0::from_raw(0x0A30_00A1).chipset(), Ok(Chipset::GT215));
    assert_eq!(BOOT_0::from_raw(0x0500_00A2).chipset(), Ok(Chipset::G80));
    assert_eq!(BOOT_0::from_raw(0x0C00_0000).chipset(), Ok(Chipset::GF100));
    assert_eq!(BOOT_0::from_raw(0x0AF0_0000).chipset(), Ok(Chipset::MCP89), "0xaf, §2.2.2 table");
    assert_eq!(
        BOOT_0::from_raw(0x0FF0_0000).chipset(),
        Err(UnknownChipset { family: "nvidia", id: 0xFF })
    );
    assert_eq!(BOOT_0::from_raw(0x0A30_00A1).chipset_raw(), 0xA3);
    assert_eq!(<BOOT_0 as Register>::OFFSET, 0);
}

#[test]
fn chipsets_follow_the_document_order_not_the_id_order() {
    // §2.2.2: "G200:GT218 means GPUs G200, MCP77, MCP79, GT215, GT216".
    let g200_gt218: Vec<_> =
        Chipset::ALL.iter().filter(|c| (Chipset::G200..Chipset::GT218).contains(c)).collect();
    assert_eq!(
        g200_gt218,
        [&Chipset::G200, &Chipset::MCP77, &Chipset::MCP79, &Chipset::GT215, &Chipset::GT216]
    );
    // GT215 (id 0xa3) comes after MCP79 (id 0xac) in the list.
    assert!(Chipset::GT215 > Chipset::MCP79);
    assert_eq!(identify_pci(0x10DE, 0x0CA3).map(|m| m.chipset), Some(Chipset::GT215));
    assert_eq!(identify_pci(0x10DE, 0x0191).map(|m| m.chipset), Some(Chipset::G80));
}

#[test]
fn chip_specific_layouts_exist_only_on_their_range() {
    assert!(MMIO_ERR_GF100_UNTIL_GF119::exists_on(Chipset::GF110));
    assert!(!MMIO_ERR_GF100_UNTIL_GF119::exists_on(Chipset::GF119));
    assert!(MMIO_ERR_GF119_ONWARD::exists_on(Chipset::GF119));
    assert!(MMIO_ERR_GF119_ONWARD::exists_on(Chipset::GK104));
    assert!(!MMIO_ERR_GF119_ONWARD::exists_on(Chipset::GT215));
}

#[test]
fn falcon_engines_are_instances_with_their_bases_and_chipsets() {
    assert_eq!(<Pdaemon as Instance>::BASE, PDAEMON);
    assert_eq!(<Pcopy0 as Instance>::BASE, 0x10_4000);
    assert_eq!(<Fecs as Instance>::BASE, 0x40_9000);
    assert!(<Pdaemon as Instance>::CHIPSETS.contains(Chipset::GT215));
    assert!(!<Pdaemon as Instance>::CHIPSETS.contains(Chipset::G98), "PDAEMON is GT215+");
    assert!(<Pcopy0 as Instance>::CHIPSETS.contains(Chipset::GF100));
    assert!(!<Pcopy0 as Instance>::CHIPSETS.contains(Chipset::GK104), "PCOPY[0] is GT215:GK104");
    // Registers limited to classes of falcon units say which.
    assert_eq!(CODE_INDEX::UNITS, Units::V3Plus);
    assert_eq!(UPLOAD::UNITS, Units::V0AndV3);
}

#[test]
fn falcon_code_upload_goes_through_the_engine_base() {
    let bus = common::Recorder::default();
    let falcon = bus.at::<Pdaemon>();
    falcon.write(CODE_INDEX::from_raw(0).with_write_autoincrement(true));
    falcon.write(CODE_VIRT::from_raw(0));
    falcon.write(CODE::from_raw(0xDEAD_BEEF));
    assert_eq!(
        bus.writes(),
        [(PDAEMON + 0x180, 1 << 24), (PDAEMON + 0x188, 0), (PDAEMON + 0x184, 0xDEAD_BEEF)]
    );
    assert_eq!(CODE_INDEX::IO_ADDRESS, 0x6000);
}

#[test]
fn data_ports_are_an_array_of_four_eight_bytes_apart() {
    let bus = common::Recorder::default();
    let falcon = bus.at::<Pdaemon>();
    falcon.write_at(3, DATA_INDEX::from_raw(0)).unwrap();
    assert_eq!(bus.writes(), [(PDAEMON + 0x1C0 + 3 * 8, 0)]);
    assert!(falcon.write_at(4, DATA_INDEX::from_raw(0)).is_err());
}

#[test]
fn channel_put_pointers_live_in_the_channel_user_area() {
    let bus = common::Recorder::default();
    let user = bus.at_index::<UserG80>(3).unwrap();
    user.write(DMA_PUT::from_raw(0x100));
    user.write(IB_PUT::from_raw(5));
    assert_eq!(bus.writes(), [(USER_CH3 + 0x40, 0x100), (USER_CH3 + 0x8C, 5)]);
    // Channel 0 is PIO-only (its area is elsewhere) and 127 is past the DMA channels (§2.8.3).
    assert!(bus.at_index::<UserG80>(0).is_err());
    assert!(bus.at_index::<UserG80>(127).is_err());
    assert!(bus.at_index::<UserG80>(126).is_ok());
}

#[test]
fn chipset_specific_layouts_keep_their_ranges_in_the_spec_table() {
    let specific: Vec<_> = baregpu_regs::nvidia::REGISTERS
        .iter()
        .filter(|r| r.chipsets != baregpu_hal::Chipsets::All)
        .collect();
    assert!(specific.iter().any(|r| r.chipsets.contains(Chipset::GF100)));
    assert!(specific.len() >= 10);
}
