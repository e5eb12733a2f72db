//! Generated accessors, checked on the fixture database (`fixture/fixture.toml`), whose bit
//! layouts are written by hand so every expected value below is computed from the TOML.

use crate::fixture::{REGISTERS, ctl, engine};
use baregpu_hal::register::{FieldOverflow, InvalidEnumValue};
use baregpu_hal::{Array, Register, RegisterIo, RegisterIoExt};
use core::cell::RefCell;
use std::collections::BTreeMap;
use std::format;
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
        Err(FieldOverflow { register: "RB_CNTL", field: "RB_BUFSZ", value: 0x40, width: 6 })
    );
    assert_eq!(ctl::RB_CNTL::from_raw(0).try_with_rb_bufsz(0x3f).map(|r| r.raw()), Ok(0x3f));
}

#[test]
fn reset_value_comes_from_field_defaults() {
    assert_eq!(ctl::RB_CNTL::RESET.raw(), 0x8);
    assert_eq!(<ctl::RB_CNTL as Register>::RESET, 0x8);
    assert_eq!(ctl::RB_CNTL::default(), ctl::RB_CNTL::RESET);
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
fn relative_blocks_are_accessed_through_a_base() {
    let io = Recorder::default();
    let falcon = io.at(0x10a000);
    falcon.write(engine::CODE_INDEX::from_raw(0).with_write_autoinc(true));
    assert_eq!(io.regs.borrow()[&(0x10a000 + 0x180)], 1 << 24);
    assert_eq!(engine::CODE_INDEX::IO_ADDRESS, 0x6000);
}

#[test]
fn chip_variants_become_distinct_types() {
    let old = engine::CFG0_NV43_G70::from_raw(0x3fff);
    let new = engine::CFG0_G70_G80::from_raw(0x3fff);
    assert_eq!(old.sensor(), 0xff);
    assert_eq!(new.sensor(), 0x3fff);
    assert_eq!(engine::CFG0_G70_G80::VARIANT, "G70:G80");
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
    assert_eq!(REGISTERS.len(), 10);
    let ctrs = REGISTERS.iter().find(|r| r.name == "CTRS").unwrap();
    assert_eq!((ctrs.offset, ctrs.count, ctrs.stride), (0x1104, 4, 8));
    assert_eq!(ctrs.instance_at(0x1104 + 16), Some(2));
    assert_eq!(ctrs.instance_at(0x1100), None);
    let status = REGISTERS.iter().find(|r| r.name == "STATUS").unwrap();
    assert!(status.readable && !status.writable);
    let code = REGISTERS.iter().find(|r| r.name == "CODE_INDEX").unwrap();
    assert!(code.relative);
    assert_eq!(code.offset, 0x180);
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
            let spec = ctl::RB_CNTL::FIELDS;
            prop_assert_eq!(spec[0].get(raw), u32::from(r.rb_bufsz()));
            prop_assert_eq!(spec[1].get(raw), u32::from(r.rb_blksz()));
            prop_assert_eq!(spec[2].get(raw), r.mode_raw());
            prop_assert_eq!(spec[1].set(raw, 5), r.with_rb_blksz(5).raw());
        }
    }
}
