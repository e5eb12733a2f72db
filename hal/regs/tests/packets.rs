//! The generated packet modules: field-by-field pack/unpack round trips, the checks the typed
//! bodies make, and the human-readable stream decode.

use baregpu_hal::dma::BusAddress;
use baregpu_regs::evergreen::packets::{self as eg, event_write_eop as eop};
use baregpu_regs::packet::{FieldKind, decode};
use baregpu_regs::r5xx::packets as r5;
use proptest::prelude::*;

proptest! {
    /// Every field of every packet: a value put into a body reads back, and leaves the other
    /// (non-alias) fields as they were.
    #[test]
    fn every_field_round_trips(seed in any::<u64>(), fill in any::<u32>()) {
        for p in eg::ALL {
            for (i, f) in p.fields.iter().enumerate() {
                let mut body = [fill; 16];
                let before = body;
                let width_mask = if f.spec.width == 32 { u32::MAX } else { (1 << f.spec.width) - 1 };
                let value = (seed.rotate_left(i as u32) as u32) & width_mask;
                f.put(p.name, &mut body, value).unwrap();
                prop_assert_eq!(f.get(&body), value, "{}.{}", p.name, f.name());
                for other in p.fields.iter().filter(|o| o.name() != f.name()) {
                    let aliased = matches!(other.kind, FieldKind::Alias(of) if of == f.name())
                        || matches!(f.kind, FieldKind::Alias(of) if of == other.name());
                    if !aliased {
                        prop_assert_eq!(other.get(&body), other.get(&before), "{} moved {}", f.name(), other.name());
                    }
                }
                if width_mask != u32::MAX {
                    prop_assert!(f.put(p.name, &mut body, width_mask + 1).is_err());
                }
            }
        }
        for p in r5::ALL {
            for f in p.fields {
                let mut body = [fill; 24];
                let width_mask = if f.spec.width == 32 { u32::MAX } else { (1 << f.spec.width) - 1 };
                f.put(p.name, &mut body, seed as u32 & width_mask).unwrap();
                prop_assert_eq!(f.get(&body), seed as u32 & width_mask);
            }
        }
    }

    /// The typed EOP body: what the builders write, `unpack` reads back.
    #[test]
    fn eop_body_round_trips(address in 0u64..(1 << 38), event in 0u32..64, data in any::<u64>()) {
        let address = BusAddress(address << 2);
        let body = eop::Body::new()
            .with_event_type(event).unwrap()
            .with_event_index(eop::EventIndex::Eop)
            .with_address(address).unwrap()
            .with_data_sel(eop::DataSel::Data64)
            .with_int_sel(eop::IntSel::OnConfirm)
            .with_data_lo(data as u32).unwrap()
            .with_data_hi((data >> 32) as u32).unwrap();
        let back = eop::Body::unpack(body.dwords()).unwrap();
        prop_assert_eq!(back.address(), address);
        prop_assert_eq!(back.event_type(), event);
        prop_assert_eq!(back.data_sel(), Ok(eop::DataSel::Data64));
        prop_assert_eq!(back.int_sel(), Ok(eop::IntSel::OnConfirm));
        prop_assert_eq!(u64::from(back.data_lo()) | u64::from(back.data_hi()) << 32, data);
    }
}

#[test]
fn eop_fields_sit_where_the_document_puts_them() {
    // §9.6.2 DW4: DATA_SEL 31:29, INT_SEL 25:24, ADDRESS_HI 7:0.
    let body = eop::Body::new()
        .with_data_sel(eop::DataSel::Data64)
        .with_int_sel(eop::IntSel::OnConfirm)
        .with_address(BusAddress(0x12_3456_7808))
        .unwrap();
    assert_eq!(body.dwords()[1..3], [0x3456_7808, 2 << 29 | 2 << 24 | 0x12]);
}

#[test]
fn typed_bodies_refuse_what_does_not_fit() {
    // EVENT_TYPE is 6 bits; the address is dword-aligned and 40 bits.
    assert!(eop::Body::new().with_event_type(64).is_err());
    assert!(eop::Body::new().with_address(BusAddress(0x1002)).is_err());
    assert!(eop::Body::new().with_address(BusAddress(1 << 40)).is_err());
    // A 4-dword body is not an EVENT_WRITE_EOP.
    let e = eop::Body::unpack(&[0; 4]).unwrap_err();
    assert_eq!((e.packet, e.dwords, e.min, e.max), ("EVENT_WRITE_EOP", 4, 5, 5));
    // An undocumented DATA_SEL value reads back as an error, not a guess.
    let raw = eop::Body([0, 0, 7 << 29, 0, 0]);
    assert_eq!(raw.data_sel().unwrap_err().value, 7);
}

#[test]
fn packets_know_their_body_lengths() {
    assert!(eg::DISPATCH_DIRECT.check_body(4).is_ok());
    let e = eg::DISPATCH_DIRECT.check_body(3).unwrap_err();
    assert_eq!(e.to_string(), "DISPATCH_DIRECT takes a 4-dword body, not 3");
    assert!(eg::EVENT_WRITE.check_body(1).is_ok() && eg::EVENT_WRITE.check_body(3).is_ok());
    assert!(eg::EVENT_WRITE.check_body(2).is_err());
    assert!(eg::SET_CONFIG_REG.check_body(200).is_ok());
    assert!(eg::NOP.check_body(0).is_err());
}

#[test]
fn set_packets_carry_their_register_ranges() {
    let config = eg::SET_CONFIG_REG.register_range.unwrap();
    assert_eq!((config.start, config.end, config.legacy_zero), (0x8000, 0xAC00, true));
    assert!(eg::SET_CONTEXT_REG.register_range.unwrap().contains(0x28000));
    assert!(eg::NOP.register_range.is_none());
}

#[test]
fn decode_names_packets_and_fields() {
    let eop = eop::Body::new()
        .with_event_type(0x14)
        .unwrap()
        .with_event_index(eop::EventIndex::Eop)
        .with_address(BusAddress(0x1000))
        .unwrap()
        .with_data_sel(eop::DataSel::Data64)
        .with_int_sel(eop::IntSel::OnConfirm)
        .with_data_lo(7)
        .unwrap();
    let mut stream = vec![0xC004_4700];
    stream.extend_from_slice(eop.dwords());
    stream.extend_from_slice(&[0xC001_6800, 0x140, 7, 0x8000_0000, 0xC000_EE00, 1]);
    let text = decode(eg::ALL, &stream).to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "    0: c0044700 EVENT_WRITE_EOP (5 dwords) EVENT_INDEX=EOP EVENT_TYPE=0x14 \
         ADDRESS_LO=0x400 DATA_SEL=DATA64 INT_SEL=ON_CONFIRM ADDRESS_HI=0x0 DATA_LO=0x7 DATA_HI=0x0"
    );
    assert_eq!(lines[1], "    6: c0016800 SET_CONFIG_REG (2 dwords) REG_OFFSET=0x140 data: 0x7");
    assert_eq!(lines[2], "    9: 80000000 TYPE2 filler");
    assert_eq!(lines[3], "   10: c000ee00 TYPE3 unknown opcode 0xee (1 dwords)");
    // A stream cut inside a packet says so.
    let cut = decode(eg::ALL, &stream[..3]).to_string();
    assert!(cut.contains("[stream ends inside the packet]"), "{cut}");
    // A body the layout does not take is flagged.
    let short = decode(eg::ALL, &[0xC002_1500, 1, 1, 1]).to_string();
    assert!(short.contains("DISPATCH_DIRECT (3 dwords) [body does not fit the layout]"), "{short}");
}
