//! PM4 encoders against dwords computed by hand from amd-r5xx-acceleration §6.1 (the
//! arithmetic is in the comments), and every error case.

use baregpu_hal::IndexOutOfRange;
use baregpu_regs::r5xx::cb::RB3D_COLOR_CLEAR_VALUE_AR;
use baregpu_regs::r5xx::cp::{CP_IB_BASE, CP_IB_BUFSZ, CP_IB2_BASE, CP_IB2_BUFSZ, SCRATCH_REG0};
use baregpu_regs::r5xx::ga::GA_US_VECTOR_DATA;
use baregpu_regs::r5xx::packets;
use baregpu_regs::r5xx::rbbm::WAIT_UNTIL;
use baregpu_regs::r5xx::us::US_ALU_RGB_ADDR;
use baregpu_ring::pm4::{
    MAX_BODY_DWORDS, NoSpace, Opcode, PadError, Pm4Error, Pm4Writer, SliceSink, TYPE0_MAX_OFFSET,
    TYPE1_MAX_OFFSET, TYPE2, pad_count, type0_header, type1_header, type3_header,
};
use baregpu_ring::r5xx;

/// Run `f` on a writer over a 64-dword buffer and return what it wrote.
fn encode(
    f: impl FnOnce(&mut Pm4Writer<SliceSink<'_>, r5xx::Family>) -> Result<(), Pm4Error>,
) -> Vec<u32> {
    let mut buf = [0u32; 64];
    let mut w = Pm4Writer::new(SliceSink::new(&mut buf));
    f(&mut w).unwrap();
    w.sink().written().to_vec()
}

#[test]
fn type0_two_consecutive_registers_at_0x738() {
    // TYPE 0, COUNT = 2 - 1 = 1 -> 1 << 16, BASE_INDEX = 0x738 >> 2 = 0x1CE:
    // (1 << 16) | 0x1CE = 0x000101CE.
    let got =
        encode(|w| w.write_regs((CP_IB_BASE::from_raw(0x0010_0000), CP_IB_BUFSZ::from_raw(16))));
    assert_eq!(got, [0x0001_01CE, 0x0010_0000, 16]);
    assert_eq!(type0_header(0x738, 2, false), Ok(0x0001_01CE));
}

#[test]
fn type0_single_registers() {
    // WAIT_UNTIL 0x1720: COUNT 0, BASE_INDEX 0x1720 >> 2 = 0x5C8 -> 0x000005C8.
    assert_eq!(encode(|w| w.write_reg(WAIT_UNTIL::from_raw(7))), [0x0000_05C8, 7]);
    // SCRATCH_REG0[1] = 0x15E0 + 4 = 0x15E4: 0x15E4 >> 2 = 0x579 -> 0x00000579.
    assert_eq!(encode(|w| w.write_reg_at(1, SCRATCH_REG0::from_raw(42))), [0x0000_0579, 42]);
    // SCRATCH_REG0[2..=4]: BASE_INDEX 0x15E8 >> 2 = 0x57A, COUNT 3 - 1 = 2 -> 0x0002057A.
    let vals = [1, 2, 3].map(SCRATCH_REG0::from_raw);
    assert_eq!(encode(|w| w.write_reg_array(2, &vals)), [0x0002_057A, 1, 2, 3]);
}

#[test]
fn type0_one_reg_wr_data_port() {
    // GA_US_VECTOR_DATA 0x4254: BASE_INDEX 0x4254 >> 2 = 0x1095, ONE_REG_WR 1 << 15 = 0x8000,
    // COUNT 3 - 1 = 2 -> 0x20000: 0x00020000 | 0x8000 | 0x1095 = 0x00029095.
    let vals = [0xA, 0xB, 0xC].map(GA_US_VECTOR_DATA::from_raw);
    assert_eq!(encode(|w| w.write_reg_repeated(&vals)), [0x0002_9095, 0xA, 0xB, 0xC]);
}

#[test]
fn type0_one_reg_wr_to_an_array_instance() {
    // SCRATCH_REG0[3] as a data port: BASE_INDEX 0x15EC >> 2 = 0x57B, ONE_REG_WR 0x8000,
    // COUNT 2 - 1 -> 0x00018000 | 0x57B.
    let vals = [7, 8].map(SCRATCH_REG0::from_raw);
    assert_eq!(encode(|w| w.write_reg_at_repeated(3, &vals)), [0x0001_857B, 7, 8]);
    // An instance past the array is refused, nothing written.
    assert!(matches!(
        encode_err(|w| w.write_reg_at_repeated(8, &vals)),
        Pm4Error::Index(IndexOutOfRange { .. })
    ));
}

#[test]
fn type0_index_limits() {
    // The last dword address BASE_INDEX reaches: 0x1FFF -> byte 0x7FFC (= TYPE0_MAX_OFFSET).
    assert_eq!(TYPE0_MAX_OFFSET, 0x7FFC);
    assert_eq!(type0_header(0x7FFC, 1, false), Ok(0x0000_1FFF));
    // Bits 14:13 (reserved) are never set: byte 0x8000 would need index 0x2000.
    assert_eq!(
        type0_header(0x8000, 1, false),
        Err(Pm4Error::RegisterOutOfRange { offset: 0x8000, max: 0x7FFC })
    );
    // A run whose last register leaves the window: 0x7FF8, 0x7FFC, 0x8000.
    assert_eq!(
        type0_header(0x7FF8, 3, false),
        Err(Pm4Error::RegisterOutOfRange { offset: 0x8000, max: 0x7FFC })
    );
    // The same count to one register is fine: COUNT 2 << 16 | ONE_REG_WR | 0x1FFF.
    assert_eq!(type0_header(0x7FFC, 3, true), Ok(0x0002_9FFF));
    // A generated register beyond the window (R500 US_ALU_RGB_ADDR[0] at 0x9000).
    let err = encode_err(|w| w.write_reg_at(0, US_ALU_RGB_ADDR::from_raw(0)));
    assert_eq!(err, Pm4Error::RegisterOutOfRange { offset: 0x9000, max: 0x7FFC });
}

fn encode_err(
    f: impl FnOnce(&mut Pm4Writer<SliceSink<'_>, r5xx::Family>) -> Result<(), Pm4Error>,
) -> Pm4Error {
    let mut buf = [0u32; 64];
    let mut w = Pm4Writer::new(SliceSink::new(&mut buf));
    let err = f(&mut w).unwrap_err();
    assert!(w.sink().is_empty(), "nothing may be written on error");
    err
}

#[test]
fn type0_errors() {
    assert_eq!(type0_header(0x15E2, 1, false), Err(Pm4Error::UnalignedRegister { offset: 0x15E2 }));
    assert_eq!(type0_header(0x738, 0, false), Err(Pm4Error::BadCount { count: 0 }));
    assert_eq!(type0_header(0, 0x4001, true), Err(Pm4Error::BadCount { count: 0x4001 }));
    // COUNT = 0x4000 - 1 = 0x3FFF -> 0x3FFF0000 | ONE_REG_WR 0x8000 | 0x1CE.
    assert_eq!(type0_header(0x738, MAX_BODY_DWORDS, true), Ok(0x3FFF_81CE));
    // Array index past the 8 scratch registers.
    assert_eq!(
        encode_err(|w| w.write_reg_at(8, SCRATCH_REG0::from_raw(0))),
        Pm4Error::Index(IndexOutOfRange { register: "SCRATCH_REG0", index: 8, first: 0, count: 8 })
    );
    // A run SCRATCH_REG0[7..=8] leaves the array.
    let vals = [1, 2].map(SCRATCH_REG0::from_raw);
    assert_eq!(
        encode_err(|w| w.write_reg_array(7, &vals)),
        Pm4Error::Index(IndexOutOfRange { register: "SCRATCH_REG0", index: 8, first: 0, count: 8 })
    );
    assert_eq!(
        encode_err(|w| w.write_reg_array::<SCRATCH_REG0>(0, &[])),
        Pm4Error::BadCount { count: 0 }
    );
    assert_eq!(
        encode_err(|w| w.write_reg_repeated::<WAIT_UNTIL>(&[])),
        Pm4Error::BadCount { count: 0 }
    );
}

#[test]
fn type1_two_registers() {
    // REG_INDEX1 = 0x730 >> 2 = 0x1CC, REG_INDEX2 = 0x734 >> 2 = 0x1CD << 11 = 0xE6800, TYPE 1:
    // 0x40000000 | 0xE6800 | 0x1CC = 0x400E69CC.
    let got =
        encode(|w| w.write_reg_pair(CP_IB2_BASE::from_raw(0x2000), CP_IB2_BUFSZ::from_raw(4)));
    assert_eq!(got, [0x400E_69CC, 0x2000, 4]);
    // The reach of 11-bit indices: 0x7FF -> byte 0x1FFC.
    assert_eq!(TYPE1_MAX_OFFSET, 0x1FFC);
    // 0x7FF | 0x7FF << 11 = 0x3FFFFF, | 1 << 30.
    assert_eq!(type1_header(0x1FFC, 0x1FFC), Ok(0x403F_FFFF));
    assert_eq!(
        type1_header(0x2000, 0),
        Err(Pm4Error::RegisterOutOfRange { offset: 0x2000, max: 0x1FFC })
    );
    assert_eq!(type1_header(0, 0x6), Err(Pm4Error::UnalignedRegister { offset: 6 }));
    // RB3D_COLOR_CLEAR_VALUE_AR (0x46C0) is out of type-1 reach.
    let err = encode_err(|w| {
        w.write_reg_pair(RB3D_COLOR_CLEAR_VALUE_AR::from_raw(0), WAIT_UNTIL::from_raw(0))
    });
    assert_eq!(err, Pm4Error::RegisterOutOfRange { offset: 0x46C0, max: 0x1FFC });
}

#[test]
fn type2_filler() {
    // TYPE 2 in bits 31:30: 2 << 30 = 0x80000000.
    assert_eq!(TYPE2, 0x8000_0000);
    assert_eq!(encode(|w| w.type2()), [0x8000_0000]);
    assert_eq!(encode(|w| w.filler(3)), [0x8000_0000; 3]);
    assert_eq!(encode(|w| w.filler(0)), [0u32; 0]);
}

#[test]
fn type3_packets() {
    // NOP with 2 body dwords: 3 << 30 = 0xC0000000, COUNT 1 << 16, IT_OPCODE 0x10 << 8 = 0x1000:
    // 0xC0011000.
    assert_eq!(encode(|w| w.nop(&[0xDEAD, 0xBEEF])), [0xC001_1000, 0xDEAD, 0xBEEF]);
    // 3D_DRAW_INDX_2 with a 1-dword body (VAP_VF_CNTL only, §6.2.3.11 note): COUNT 0,
    // 0x36 << 8 = 0x3600 -> 0xC0003600.
    assert_eq!(encode(|w| w.packet(packets::_3D_DRAW_INDX_2, &[5])), [0xC000_3600, 5]);
    // PAINT_MULTI (0x9A), 3 dwords: 0xC0000000 | 2 << 16 | 0x9A00 = 0xC0029A00.
    assert_eq!(type3_header(Opcode::of(packets::PAINT_MULTI), 3), Ok(0xC002_9A00));
    // Largest body: COUNT 0x3FFF -> 0xC0000000 | 0x3FFF0000 | 0x1000 = 0xFFFF1000.
    assert_eq!(type3_header(Opcode::of(packets::NOP), 0x4000), Ok(0xFFFF_1000));
    assert_eq!(
        type3_header(Opcode::of(packets::NOP), 0x4001),
        Err(Pm4Error::BadCount { count: 0x4001 })
    );
    assert_eq!(encode_err(|w| w.packet(packets::NOP, &[])), Pm4Error::BadCount { count: 0 });
    // Raw opcodes for microcode-specific packets.
    assert_eq!(type3_header(Opcode::new(0xFF), 1), Ok(0xC000_FF00));
}

#[test]
fn gui_control_is_the_opcode_msb() {
    // §6.2: the MSB of IT_OPCODE says whether the body starts with GUI_CONTROL.
    assert!(Opcode::of(packets::PAINT).needs_gui_control());
    assert!(Opcode::of(packets::TRANS_BITBLT).needs_gui_control());
    assert!(!Opcode::of(packets::NEXTCHAR).needs_gui_control());
    assert!(!Opcode::of(packets::_3D_DRAW_VBUF).needs_gui_control());
}

#[test]
fn a_packet_is_written_whole_or_not_at_all() {
    let mut buf = [0u32; 4];
    let mut w = Pm4Writer::new(SliceSink::new(&mut buf));
    w.write_reg(WAIT_UNTIL::from_raw(1)).unwrap(); // 2 dwords
    let err = w.write_regs((CP_IB_BASE::from_raw(0), CP_IB_BUFSZ::from_raw(1))).unwrap_err();
    assert_eq!(err, Pm4Error::NoSpace(NoSpace { needed: 3, free: 2 }));
    assert_eq!(w.sink().len(), 2);
    w.nop(&[9]).unwrap(); // exactly fits
    assert_eq!(w.sink().written(), [0x0000_05C8, 1, 0xC000_1000, 9]);
    assert_eq!(w.type2(), Err(Pm4Error::NoSpace(NoSpace { needed: 1, free: 0 })));
}

#[test]
fn pushes_outside_a_grant_are_refused() {
    use baregpu_ring::pm4::CommandSink;
    let mut buf = [0u32; 8];
    let mut sink = SliceSink::new(&mut buf);
    assert_eq!(sink.push(1), Err(NoSpace { needed: 1, free: 0 }));
    sink.reserve(2).unwrap();
    assert_eq!(sink.push_slice(&[1, 2, 3]), Err(NoSpace { needed: 3, free: 2 }));
    sink.push_slice(&[1, 2]).unwrap();
    assert_eq!(sink.push(3), Err(NoSpace { needed: 1, free: 0 }));
    assert_eq!(sink.reserve(7), Err(NoSpace { needed: 7, free: 6 }));
    assert_eq!(sink.written(), [1, 2]);
}

#[test]
fn padding_counts() {
    assert_eq!(pad_count(0, 16), Ok(0));
    assert_eq!(pad_count(3, 16), Ok(13));
    assert_eq!(pad_count(17, 16), Ok(15));
    assert_eq!(pad_count(5, 1), Ok(0));
    assert_eq!(pad_count(5, 12), Err(PadError::BadAlignment { alignment: 12 }));
    assert_eq!(pad_count(5, 0), Err(PadError::BadAlignment { alignment: 0 }));
}
