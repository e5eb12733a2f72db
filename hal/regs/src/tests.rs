//! Generated accessors, checked on the fixture database (`fixture/fixture.toml`), whose bit
//! layouts are written by hand so every expected value below is computed from the TOML.

use crate::fixture::{Chipset, PCI_IDS, REGISTERS, ctl, engine, identify_pci};
use baregpu_hal::dma::BusAddress;
use baregpu_hal::register::{
    AddressFieldError, AddressProblem, FieldOverflow, InvalidEnumValue, UnknownChipset,
};
use baregpu_hal::{Array, Instance, InstanceArray, Register, RegisterIo, RegisterIoExt};
use core::cell::RefCell;
use std::collections::BTreeMap;
use std::format;
use std::string::ToString;
use std::vec::Vec;

/// Records every access, like a bus analyser.
#[derive(Default)]
struct Recorder {
    regs: RefCell<BTreeMap<usize, u32>>,
    log: RefCell<Vec<(char, usize, u32)>>,
}

impl RegisterIo for Recorder {
    fn read32(&self, offset: usize) -> u32 {
        let v = self.regs.borrow().get(&offset).copied().unwrap_or(0);
        self.log.borrow_mut().push(('r', offset, v));
        v
    }
    fn write32(&self, offset: usize, value: u32) {
        self.regs.borrow_mut().insert(offset, value);
        self.log.borrow_mut().push(('w', offset, value));
    }
}

#[test]
fn fields_pack_into_their_documented_bits() {
    let r = ctl::RB_CNTL::from_raw(0).with_rb_bufsz(0x2a).with_rb_blksz(3);
    assert_eq!(r.raw(), 0x2a | (3 << 8));
    assert_eq!(r.rb_bufsz(), 0x2a);
    assert_eq!(r.rb_blksz(), 3);
    // Setting one field leaves the others alone.
    let r = r.with_rb_bufsz(1);
    assert_eq!(r.raw(), 1 | (3 << 8));
}

#[test]
fn with_truncates_and_try_with_rejects_values_wider_than_the_field() {
    let r = ctl::RB_CNTL::from_raw(0).with_rb_bufsz(0x41); // 6-bit field
    assert_eq!(r.rb_bufsz(), 0x01);
    assert_eq!(r.raw() >> 6, 0, "no bit leaks into the neighbouring field");
    assert_eq!(
        ctl::RB_CNTL::from_raw(0).try_with_rb_bufsz(0x40),
        Err(FieldOverflow::new("RB_CNTL", "RB_BUFSZ", 0x40, 6))
    );
    assert_eq!(ctl::RB_CNTL::from_raw(0).try_with_rb_bufsz(0x3f).map(|r| r.raw()), Ok(0x3f));
}

#[test]
fn reset_value_comes_from_field_defaults() {
    assert_eq!(ctl::RB_CNTL::RESET.raw(), 0x8);
    assert_eq!(<ctl::RB_CNTL as Register>::RESET_RAW, 0x8);
    assert_eq!(ctl::RB_CNTL::default(), ctl::RB_CNTL::RESET);
}

#[test]
fn every_field_has_a_spec_constant_with_its_position() {
    let f = ctl::RB_CNTL::RB_BLKSZ;
    assert_eq!((f.name, f.lsb, f.width, f.readable, f.writable), ("RB_BLKSZ", 8, 6, true, true));
    assert_eq!(f.mask(), 0x3f << 8);
    assert_eq!(f.place(0x41), 1 << 8, "placed values are truncated to the width");
    assert_eq!(ctl::RB_CNTL::BUSY.mask(), 1 << 30);
    let (busy, kick) = (ctl::RB_CNTL::BUSY, ctl::RB_CNTL::KICK);
    assert_eq!((busy.readable, busy.writable), (true, false), "BUSY is read-only");
    assert_eq!((kick.readable, kick.writable), (false, true), "KICK is write-only");
    // FIELDS lists the same constants, lowest bit first.
    assert_eq!(ctl::RB_CNTL::FIELDS[1], ctl::RB_CNTL::RB_BLKSZ);
    // A whole-register field is named after its register.
    assert_eq!(ctl::STATUS::STATUS.mask(), u32::MAX);
}

#[test]
fn write_mask_covers_exactly_the_writable_fields() {
    // RB_BUFSZ 5:0, RB_BLKSZ 13:8, MODE 17:16, FORMAT 23:20, KICK 31 (BUSY 30 is read-only).
    let expected = 0x3f | (0x3f << 8) | (0x3 << 16) | (0xf << 20) | (1 << 31);
    assert_eq!(<ctl::RB_CNTL as Register>::WRITE_MASK, expected);
    assert_eq!(<ctl::STATUS as Register>::WRITE_MASK, 0);
    assert_eq!(<ctl::HALF as Register>::WRITE_MASK, 0xffff, "16-bit register");
}

#[test]
fn complete_enumerations_read_as_the_enum_itself() {
    use ctl::rb_cntl::Mode;
    let r = ctl::RB_CNTL::from_raw(2 << 16);
    assert_eq!(r.mode(), Mode::Bm);
    assert_eq!(r.with_mode(Mode::Pio).raw(), 1 << 16);
    assert_eq!(r.mode_raw(), 2);
}

#[test]
fn partial_enumerations_report_undocumented_values() {
    use ctl::rb_cntl::Format;
    let r = ctl::RB_CNTL::from_raw(0).with_format(Format::V8bpp);
    assert_eq!(r.format(), Ok(Format::V8bpp));
    assert_eq!(r.with_format(Format::Type).raw(), 4 << 20);
    let bad = ctl::RB_CNTL::from_raw(7 << 20);
    assert_eq!(
        bad.format(),
        Err(InvalidEnumValue { register: "RB_CNTL", field: "FORMAT", value: 7 })
    );
    assert_eq!(bad.format_raw(), 7);
}

#[test]
fn read_only_and_write_only_fields_get_only_their_accessor() {
    // BUSY is read-only (a getter exists), KICK write-only (a setter exists).
    let r = ctl::RB_CNTL::from_raw(1 << 30);
    assert!(r.busy());
    assert_eq!(ctl::RB_CNTL::from_raw(0).with_kick(true).raw(), 1 << 31);
}

#[test]
fn typed_access_reads_writes_and_modifies_at_the_register_offset() {
    let io = Recorder::default();
    io.write(ctl::RB_CNTL::RESET.with_rb_blksz(2));
    let offset = ctl::BASE + 0x4;
    assert_eq!(<ctl::RB_CNTL as Register>::OFFSET, offset);
    assert_eq!(io.regs.borrow()[&offset], 0x8 | (2 << 8));
    let written = io.modify::<ctl::RB_CNTL>(|r| r.with_rb_bufsz(4));
    assert_eq!(written.raw(), 4 | (2 << 8));
    // modify is exactly one read then one write, in that order.
    let log = io.log.borrow();
    assert_eq!(log[1..], [('r', offset, 0x8 | (2 << 8)), ('w', offset, 4 | (2 << 8))]);
}

#[test]
fn arrays_are_indexed_and_bounds_checked() {
    let io = Recorder::default();
    io.write_at(3, ctl::CTRS::from_raw(0).with_sel(9)).unwrap();
    assert_eq!(io.regs.borrow()[&(0x1000 + 0x104 + 3 * 8)], 9);
    let err = io.write_at(4, ctl::CTRS::from_raw(0)).unwrap_err();
    assert_eq!((err.register, err.index, err.count), ("CTRS", 4, 4));
    assert!(io.read_at::<ctl::CTR>(4).is_err());
    assert_eq!(<ctl::CTR as Array>::offset_of(1), Ok(0x1108));
}

#[test]
fn relative_blocks_are_accessed_through_their_instances() {
    let io = Recorder::default();
    let daemon = io.at::<engine::Daemon>();
    assert_eq!(daemon.base(), 0x10a000);
    daemon.write(engine::CODE_INDEX::from_raw(0).with_write_autoinc(true));
    assert_eq!(io.regs.borrow()[&(0x10a000 + 0x180)], 1 << 24);
    assert_eq!(engine::CODE_INDEX::IO_ADDRESS, 0x6000);
    assert_eq!(engine::CODE_INDEX::UNITS, engine::Units::V3Plus);
    assert_eq!(<engine::Daemon as Instance>::NAME, "DAEMON");
}

#[test]
fn numbered_instances_are_indexed_from_their_first_valid_index() {
    let io = Recorder::default();
    // CHANNELS: indices 1..4 at 0xc00000 + i * 0x2000.
    io.at_index::<engine::Channels>(3).unwrap().write(engine::CODE_INDEX::from_raw(7));
    assert_eq!(io.regs.borrow()[&(0xc0_0000 + 3 * 0x2000 + 0x180)], 7);
    let below = io.at_index::<engine::Channels>(0).unwrap_err();
    assert_eq!((below.index, below.first, below.count), (0, 1, 3));
    assert!(io.at_index::<engine::Channels>(4).is_err());
    assert_eq!(<engine::Channels as InstanceArray>::base_of(1), Ok(0xc0_2000));
    assert_eq!(below.to_string(), "CHANNELS[0] is outside the valid indices 1..4");
}

#[test]
fn chip_specific_layouts_are_distinct_types_named_by_their_range() {
    let old = engine::CFG0_NV43_UNTIL_G70::from_raw(0x3fff);
    let new = engine::CFG0_G70_UNTIL_G80::from_raw(0x3fff);
    assert_eq!(old.sensor(), 0xff);
    assert_eq!(new.sensor(), 0x3fff);
    assert!(engine::CFG0_G70_UNTIL_G80::exists_on(Chipset::G70));
    assert!(!engine::CFG0_G70_UNTIL_G80::exists_on(Chipset::G80), "G70:G80 excludes G80");
    assert!(!engine::CFG0_G70_UNTIL_G80::exists_on(Chipset::NV43));
    assert!(ctl::RB_CNTL::exists_on(Chipset::NV43), "no range: every chipset");
}

#[test]
fn instances_know_their_chipsets() {
    let daemon = <engine::Daemon as Instance>::CHIPSETS;
    assert!(!daemon.contains(Chipset::NV43) && daemon.contains(Chipset::G70));
    assert!(daemon.contains(Chipset::G80), "G70- is open-ended");
    let channels = <engine::Channels as InstanceArray>::CHIPSETS;
    assert!(channels.contains(Chipset::NV43) && !channels.contains(Chipset::G70));
    assert!(channels.contains(Chipset::G80));
}

#[test]
fn chipsets_are_ordered_as_the_database_lists_them_and_decode_from_their_ids() {
    assert_eq!(Chipset::ALL, [Chipset::NV43, Chipset::G70, Chipset::G80]);
    assert!(Chipset::NV43 < Chipset::G70 && Chipset::G70 < Chipset::G80);
    assert_eq!(Chipset::G80.name(), "G80");
    assert_eq!(Chipset::from_id(0x47), Ok(Chipset::G70));
    assert_eq!(Chipset::G70.id(), Some(0x47));
    assert_eq!(Chipset::from_id(0x99), Err(UnknownChipset { family: "fixture", id: 0x99 }));
    let id = ctl::ID::from_raw(0x0500_0000 | 0xfff);
    assert_eq!(id.chip(), Ok(Chipset::G80));
    assert_eq!(id.chip_raw(), 0x50);
}

#[test]
fn pci_ids_identify_chipsets() {
    assert_eq!(
        identify_pci(0x10de, 0x0145).map(|m| (m.chipset, m.name)),
        Some((Chipset::NV43, Some("Fixture 43")))
    );
    assert_eq!(identify_pci(0x10de, 0x019f).map(|m| m.chipset), Some(Chipset::G80));
    assert_eq!(identify_pci(0x10de, 0x0150), None);
    assert_eq!(identify_pci(0x1002, 0x0145), None, "the vendor must match too");
    assert_eq!(PCI_IDS.len(), 2);
}

#[test]
fn address_fields_take_bus_addresses_and_never_truncate() {
    let r = ctl::RING_BASE::from_raw(0).with_swap(2);
    let r = r.try_with_addr(BusAddress(0x1234_5670)).unwrap();
    assert_eq!(r.raw(), 0x1234_5670 | 2, "bits 31:2 hold address bits 31:2; SWAP kept");
    assert_eq!(r.addr(), BusAddress(0x1234_5670));
    assert_eq!(
        r.try_with_addr(BusAddress(0x1001)),
        Err(AddressFieldError {
            register: "RING_BASE",
            field: "ADDR",
            address: BusAddress(0x1001),
            problem: AddressProblem::Misaligned { align: 4 },
        })
    );
    let err = r.try_with_addr(BusAddress(0x1_0000_0000)).unwrap_err();
    assert_eq!(err.problem, AddressProblem::OutOfReach { limit: 0x1_0000_0000 });
    assert_eq!(
        err.to_string(),
        "bus:0x100000000 is beyond RING_BASE.ADDR, which reaches addresses below 0x100000000"
    );
    // A 32-bit field holding address bits 39:8 reaches 1 TiB, 256-byte aligned.
    let wide = ctl::WIDE_BASE::RESET.try_with_base(BusAddress(0xAB_CDEF_0100)).unwrap();
    assert_eq!(wide.raw(), 0xABCD_EF01);
    assert_eq!(wide.base(), BusAddress(0xAB_CDEF_0100));
    assert!(wide.try_with_base(BusAddress(0x100_0000_0000)).is_err());
    assert!(wide.try_with_base(BusAddress(0x180)).is_err());
}

#[test]
fn keyword_and_whole_register_fields_get_usable_names() {
    assert_eq!(ctl::HALF::from_raw(0).with_type_field(0xbeef).type_field(), 0xbeef);
    assert_eq!(ctl::STATUS::from_raw(0x1234_5678).status(), 0x1234_5678);
}

#[test]
fn debug_prints_fields_by_name() {
    let r = ctl::RB_CNTL::from_raw(0x8 | (1 << 16));
    let s = format!("{r:?}");
    assert_eq!(
        s,
        "RB_CNTL { RB_BUFSZ: 0x8, RB_BLKSZ: 0x0, MODE: 0x1, FORMAT: 0x0, BUSY: 0x0, KICK: 0x0 }"
    );
}

#[test]
fn the_spec_table_lists_every_register_with_its_masks() {
    assert_eq!(REGISTERS.len(), 13);
    let ctrs = REGISTERS.iter().find(|r| r.name == "CTRS").unwrap();
    assert_eq!((ctrs.offset, ctrs.count, ctrs.stride), (0x1104, 4, 8));
    assert_eq!(ctrs.instance_at(0x1104 + 16), Some(2));
    assert_eq!(ctrs.instance_at(0x1100), None);
    let status = REGISTERS.iter().find(|r| r.name == "STATUS").unwrap();
    assert!(status.readable && !status.writable);
    let code = REGISTERS.iter().find(|r| r.name == "CODE_INDEX").unwrap();
    assert!(code.relative);
    assert_eq!(code.offset, 0x180);
    let old = REGISTERS.iter().find(|r| r.name == "CFG0").unwrap();
    assert!(old.chipsets.contains(Chipset::NV43) && !old.chipsets.contains(Chipset::G70));
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Setting a field then reading it gives the value back (masked to the width), and no
        /// other bit of the register changes.
        #[test]
        fn set_then_get_round_trips_and_touches_nothing_else(raw: u32, v: u8) {
            let r = ctl::RB_CNTL::from_raw(raw).with_rb_blksz(v);
            prop_assert_eq!(r.rb_blksz(), v & 0x3f);
            prop_assert_eq!(r.raw() & !(0x3f << 8), raw & !(0x3f << 8));
        }

        /// Every spec field extracts and inserts exactly like the generated accessors.
        #[test]
        fn field_specs_agree_with_accessors(raw: u32) {
            let r = ctl::RB_CNTL::from_raw(raw);
            prop_assert_eq!(ctl::RB_CNTL::RB_BUFSZ.get(raw), u32::from(r.rb_bufsz()));
            prop_assert_eq!(ctl::RB_CNTL::RB_BLKSZ.get(raw), u32::from(r.rb_blksz()));
            prop_assert_eq!(ctl::RB_CNTL::MODE.get(raw), r.mode_raw());
            prop_assert_eq!(ctl::RB_CNTL::RB_BLKSZ.set(raw, 5), r.with_rb_blksz(5).raw());
        }

        /// An address field holds exactly the aligned addresses below its reach, and gives
        /// them back unchanged.
        #[test]
        fn address_fields_round_trip_or_reject(address: u64) {
            let r = ctl::RING_BASE::RESET.try_with_addr(BusAddress(address));
            let fits = address % 4 == 0 && address < 1 << 32;
            prop_assert_eq!(r.is_ok(), fits);
            if let Ok(r) = r {
                prop_assert_eq!(r.addr(), BusAddress(address));
            }
        }
    }
}
