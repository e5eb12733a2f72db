//! The generated nVidia registers used the way PFIFO and falcon code uses them
//! (nvidia-hardware-envytools §2.8.3, §2.10), over a recording bus.
#![cfg(feature = "nvidia")]

mod common;

use baregpu_hal::{Register, RegisterIoExt};
use baregpu_regs::nvidia::falcon::{CODE, CODE_INDEX, CODE_VIRT, DATA_INDEX};
use baregpu_regs::nvidia::pfifo_user::{DMA_PUT, IB_PUT};
use baregpu_regs::nvidia::pmc::BOOT_0;

/// PDAEMON engine base on GT215 (hardware-facts.md).
const PDAEMON: usize = 0x10_A000;
/// G80 channel USER area of channel 3: BAR0 + 0xC00000 + chid * 0x2000 (hardware-facts.md).
const USER_CH3: usize = 0xC0_0000 + 3 * 0x2000;

#[test]
fn boot_0_decodes_the_chipset() {
    assert_eq!(BOOT_0::from_raw(0x0A30_00A1).chipset(), 0xA3); // GT215
    assert_eq!(<BOOT_0 as Register>::OFFSET, 0);
}

#[test]
fn falcon_code_upload_goes_through_the_engine_base() {
    let bus = common::Recorder::default();
    let falcon = bus.at(PDAEMON);
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
    let falcon = bus.at(PDAEMON);
    falcon.write_at(3, DATA_INDEX::from_raw(0)).unwrap();
    assert_eq!(bus.writes(), [(PDAEMON + 0x1C0 + 3 * 8, 0)]);
    assert!(falcon.write_at(4, DATA_INDEX::from_raw(0)).is_err());
}

#[test]
fn channel_put_pointers_live_in_the_channel_user_area() {
    let bus = common::Recorder::default();
    let user = bus.at(USER_CH3);
    user.write(DMA_PUT::from_raw(0x100));
    user.write(IB_PUT::from_raw(5));
    assert_eq!(bus.writes(), [(USER_CH3 + 0x40, 0x100), (USER_CH3 + 0x8C, 5)]);
}

#[test]
fn chipset_specific_layouts_are_kept_as_variants() {
    let variants: Vec<_> =
        baregpu_regs::nvidia::REGISTERS.iter().filter_map(|r| r.variant).collect();
    assert!(variants.iter().any(|v| v.contains("GF100")), "{variants:?}");
    assert!(variants.len() >= 10);
}
