//! The nVidia pushbuffer tables (`baregpu_regs::nvidia::packets`) against words encoded by hand
//! from nvidia-hardware-envytools §2.8.3/§2.8.4 (the pusher pseudocode's masks and shifts, the
//! IB entry's bit lists), not from the tables: packing through the table's fields gives those
//! words, unpacking them gives the fields back, and the decoder names them.

use baregpu_hal::dma::BusAddress;
use baregpu_regs::nvidia::packets::{self as pb, ib_entry, increasing_methods as inc};
use baregpu_regs::pushbuffer::{
    PusherMode, address_part, decode_entries, decode_pushbuffer, find_command, get_address,
    method_param, put_address,
};

/// `(word >> 2) & 0x7ff` method, `(word >> 13) & 7` subchannel, `(word >> 18) & 0x7ff` count.
fn by_hand(top: u32, method: u32, subc: u32, count: u32) -> u32 {
    top << 29 | count << 18 | subc << 13 | method
}

#[test]
fn method_headers_pack_to_the_documents_bits() {
    let mut w = [pb::INCREASING_METHODS.value];
    inc::METHOD.put("t", &mut w, 0x50 >> 2).unwrap();
    inc::SUBCHANNEL.put("t", &mut w, 5).unwrap();
    inc::COUNT.put("t", &mut w, 3).unwrap();
    assert_eq!(w[0], by_hand(0, 0x50, 5, 3));
    assert_eq!(w[0], 0x000c_a050);
    let mut n = [pb::NON_INCREASING_METHODS.value];
    put_address("t", &[pb::non_increasing_methods::METHOD], &mut n, BusAddress(0x104)).unwrap();
    assert_eq!(n[0], by_hand(2, 0x104, 0, 0));
    // The count field is 11 bits: 2047 fits, 2048 does not.
    assert!(inc::COUNT.put("t", &mut w, 0x7ff).is_ok());
    assert!(inc::COUNT.put("t", &mut w, 0x800).is_err());
    // A method past 0x1ffc or not 4-aligned is refused by the address field.
    assert!(put_address("t", &[inc::METHOD], &mut w, BusAddress(0x2000)).is_err());
    assert!(put_address("t", &[inc::METHOD], &mut w, BusAddress(0x52)).is_err());
}

#[test]
fn the_pusher_recognises_each_form_in_its_mode_only() {
    let t = pb::COMMANDS;
    let name = |w, m| find_command(t, w, m).map(|c| c.name);
    let (dma, ib) = (Some(PusherMode::Dma), Some(PusherMode::Ib));
    assert_eq!(name(0x2000_1000, dma), Some("OLD_JUMP")); // 001 J..J 00
    assert_eq!(name(0x0000_1001, dma), Some("JUMP")); // J..J 01
    assert_eq!(name(0x0000_1002, dma), Some("CALL")); // J..J 10
    assert_eq!(name(0x0002_0000, dma), Some("RETURN"));
    assert_eq!(name(0x0003_0000 | 5 << 13 | 0x18, ib), Some("LONG_NON_INCREASING_METHODS"));
    assert_eq!(name(by_hand(0, 0x50, 0, 1), ib), Some("INCREASING_METHODS"));
    assert_eq!(name(by_hand(2, 0x50, 0, 1), dma), Some("NON_INCREASING_METHODS"));
    // IB mode has no jumps; DMA mode has no long form; 0x6000_0000 is no pre-GF100 form.
    assert_eq!(name(0x0000_1001, ib), None);
    assert_eq!(name(0x0003_0000, dma), None);
    assert_eq!(name(0x6000_0000, None), None);
    let jump = pb::JUMP;
    let target = jump.field("TARGET").unwrap();
    assert_eq!(get_address(&[*target], &[0x0012_3401]), BusAddress(0x0012_3400));
    let long = pb::LONG_NON_INCREASING_METHODS.field("COUNT").unwrap();
    assert_eq!(long.get(&[0x0003_0000, 0xab12_3456]), 0x12_3456); // count: next word 23:0
}

#[test]
fn ib_entries_pack_to_the_documents_words() {
    // Word 0: address bits 31:2; word 1: bits 39:32 in 7:0, NOT_MAIN bit 9, SIZE 30:10.
    let address = 0x12_3456_7890u64;
    let mut e = [0u32; 2];
    put_address("t", ib_entry::FIELDS, &mut e, BusAddress(address)).unwrap();
    ib_entry::SIZE.put("t", &mut e, 100).unwrap();
    ib_entry::NOT_MAIN.put("t", &mut e, 1).unwrap();
    assert_eq!(e, [0x3456_7890, 0x12 | 1 << 9 | 100 << 10]);
    assert_eq!(get_address(ib_entry::FIELDS, &e), BusAddress(address));
    assert_eq!(ib_entry::SIZE.get(&e), 100);
    // 40 bits of reach, 4-byte alignment.
    assert!(put_address("t", ib_entry::FIELDS, &mut e, BusAddress(1 << 40)).is_err());
    assert!(put_address("t", ib_entry::FIELDS, &mut e, BusAddress(0x1002)).is_err());
    let text = decode_entries(&pb::IB_ENTRY, &e).to_string();
    assert!(text.contains("address=0x1234567890") && text.contains("NOT_MAIN=true"), "{text}");
}

#[test]
fn semaphore_methods_split_the_address_by_the_table() {
    use pb::{semaphore_address_high as hi, semaphore_address_low as lo};
    let parts = [hi::ADDRESS_HIGH, lo::ADDRESS_LOW];
    let a = BusAddress(0xab_cdef_0124);
    assert_eq!(address_part("SEMAPHORE", &parts, 0, a).unwrap(), 0xab);
    assert_eq!(address_part("SEMAPHORE", &parts, 1, a).unwrap(), 0xcdef_0124);
    assert!(address_part("SEMAPHORE", &parts, 1, BusAddress(0x1001)).is_err()); // 4-byte aligned
    assert!(address_part("SEMAPHORE", &parts, 1, BusAddress(1 << 40)).is_err()); // 40 bits
    use pb::semaphore_trigger::{OPERATION, Operation};
    let geq = method_param(&pb::SEMAPHORE_TRIGGER, &OPERATION, Operation::AcquireGequal as u32);
    assert_eq!(geq, Ok(4));
    assert_eq!(pb::REF_CNT.method, 0x50);
}

#[test]
fn a_pushbuffer_decodes_to_named_methods() {
    // REF_CNT = 7 on subchannel 0, then SEMAPHORE_ADDRESS_HIGH..TRIGGER in one increasing
    // header, then a non-increasing engine method.
    let words = [
        by_hand(0, 0x50, 0, 1),
        7,
        by_hand(0, 0x10, 0, 4),
        0x12,
        0x3456_7890,
        9,
        2,
        by_hand(2, 0x104, 3, 2),
        0xa,
        0xb,
    ];
    let text = decode_pushbuffer(pb::COMMANDS, pb::METHODS, &words).to_string();
    for want in [
        "REF_CNT VALUE=0x7",
        "SEMAPHORE_ADDRESS_HIGH ADDRESS_HIGH=0x1200000000",
        "SEMAPHORE_ADDRESS_LOW ADDRESS_LOW=0x34567890",
        "SEMAPHORE_SEQUENCE VALUE=0x9",
        "SEMAPHORE_TRIGGER OPERATION=WRITE_LONG",
        "NON_INCREASING_METHODS SUBCHANNEL=0x3 x2",
        "mthd 0x0104 = 0xa",
        "mthd 0x0104 = 0xb",
    ] {
        assert!(text.contains(want), "{want:?} not in\n{text}");
    }
    let cut = decode_pushbuffer(pb::COMMANDS, pb::METHODS, &words[..3]).to_string();
    assert!(cut.contains("stream ends after 0 of 4"), "{cut}");
}
