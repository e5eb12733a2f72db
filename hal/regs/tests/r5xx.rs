//! The generated R5xx registers used the way the CP bring-up of amd-r5xx-acceleration §5 uses
//! them, over a recording bus: every offset and bit below is read off §11.1 by hand.
#![cfg(feature = "r5xx")]

mod common;

use baregpu_hal::{Array, Register, RegisterIoExt};
use baregpu_regs::r5xx::cp::{
    CP_CSQ_CNTL, CP_CSQ_STAT, CP_ME_CNTL, CP_ME_RAM_ADDR, CP_ME_RAM_DATAH, CP_ME_RAM_DATAL,
    CP_RB_CNTL, SCRATCH_REG0, cp_csq_cntl, cp_me_cntl, cp_rb_cntl,
};
use baregpu_regs::r5xx::tx::TX_FILTER0;
use common::{Access, Recorder};

#[test]
fn microcode_upload_sequence_hits_addr_then_datah_datal() {
    // §5.12: write the start address, then each entry as DATAH then DATAL (auto-increment).
    let bus = Recorder::default();
    bus.write(CP_ME_RAM_ADDR::from_raw(0).with_me_ram_addr(0));
    for (hi, lo) in [(0x12, 0x3456_789A), (0x00, 0xFFFF_FFFF)] {
        bus.write(CP_ME_RAM_DATAH::from_raw(0).with_me_ram_datah(hi));
        bus.write(CP_ME_RAM_DATAL::from_raw(lo));
    }
    assert_eq!(
        bus.writes(),
        [(0x7D4, 0), (0x7DC, 0x12), (0x7E0, 0x3456_789A), (0x7DC, 0), (0x7E0, 0xFFFF_FFFF)]
    );
}

#[test]
fn ring_control_packs_size_block_size_and_no_update() {
    // CP_RB_CNTL: RB_BUFSZ 5:0, RB_BLKSZ 13:8, BUF_SWAP 17:16, MAX_FETCH 19:18, RB_NO_UPDATE 27.
    let cntl = CP_RB_CNTL::RESET
        .try_with_rb_bufsz(13)
        .and_then(|r| r.try_with_rb_blksz(4))
        .unwrap()
        .with_max_fetch(cp_rb_cntl::MaxFetch::V4DoubleOctwords)
        .with_rb_no_update(cp_rb_cntl::RbNoUpdate::DoNotWriteToHostsCopyOfRead);
    assert_eq!(cntl.raw(), 13 | (4 << 8) | (2 << 18) | (1 << 27));
    assert_eq!(<CP_RB_CNTL as Register>::OFFSET, 0x704);
    // A ring size that does not fit RB_BUFSZ is an error, not a silently smaller ring.
    assert!(CP_RB_CNTL::RESET.try_with_rb_bufsz(64).is_err());
}

#[test]
fn me_cntl_reset_is_free_running_and_mode_is_typed() {
    // ME_MODE bit 30 defaults to 1 (free-running).
    assert_eq!(CP_ME_CNTL::RESET.me_mode(), cp_me_cntl::MeMode::FreeRunningMode);
    let single = CP_ME_CNTL::RESET.with_me_mode(cp_me_cntl::MeMode::SingleStepMode);
    assert_eq!(single.raw() & (1 << 30), 0);
}

#[test]
fn csq_mode_reads_documented_values_and_rejects_others() {
    let cntl = CP_CSQ_CNTL::from_raw(0).with_csq_mode(cp_csq_cntl::CsqMode::PrimaryBmIndirectBm);
    assert_eq!(cntl.raw(), 4 << 28);
    assert_eq!(cntl.csq_mode(), Ok(cp_csq_cntl::CsqMode::PrimaryBmIndirectBm));
    // 0xA..0xE are not listed in §11.1.
    assert!(CP_CSQ_CNTL::from_raw(0xA << 28).csq_mode().is_err());
}

#[test]
fn read_only_status_decodes_queue_pointers() {
    let bus = Recorder::with(&[(0x7F8, 5 | (9 << 10) | (2 << 20))]);
    let stat = bus.read::<CP_CSQ_STAT>();
    assert_eq!((stat.csq_rptr_primary(), stat.csq_wptr_primary()), (5, 9));
    assert_eq!(stat.csq_rptr_indirect(), 2);
    assert_eq!(<CP_CSQ_STAT as Register>::WRITE_MASK, 0);
    assert_eq!(bus.log.borrow()[..], [Access::Read(0x7F8, 5 | (9 << 10) | (2 << 20))]);
}

#[test]
fn fence_scratch_registers_and_texture_filters_are_bounded_arrays() {
    assert_eq!(<SCRATCH_REG0 as Array>::offset_of(7), Ok(0x15E0 + 28));
    assert!(<SCRATCH_REG0 as Array>::offset_of(8).is_err());
    assert_eq!(<TX_FILTER0 as Array>::COUNT, 16);
    assert_eq!(<TX_FILTER0 as Array>::offset_of(15), Ok(0x4400 + 15 * 4));
}

#[test]
fn the_family_table_lists_every_documented_register() {
    let spec = baregpu_regs::r5xx::REGISTERS;
    assert!(spec.len() >= 280, "{}", spec.len());
    let me_ram = spec.iter().find(|r| r.name == "CP_ME_RAM_ADDR").unwrap();
    assert_eq!((me_ram.offset, me_ram.source), (0x7D4, "amd-r5xx-acceleration §11.1"));
    // Every write mask lies inside the documented fields.
    for r in spec {
        let fields = r.fields.iter().fold(0, |m, f| m | f.mask());
        assert_eq!(r.write_mask & !fields, 0, "{}", r.name);
    }
}

#[test]
fn packet_body_sizes_come_from_the_document_tables() {
    use baregpu_regs::packet::BodyLen;
    use baregpu_regs::r5xx::packets as p;
    let exactly = |n| BodyLen { min: n, max: Some(n) };
    let at_least = |n| BodyLen { min: n, max: None };
    // §6.2.5.2 WAIT_MEM: SEM_ADDR, SEM_LEN; §6.2.3 SET_SCISSORS: two corners.
    assert_eq!(p::WAIT_MEM.body_len(), exactly(2));
    assert_eq!(p::SET_SCISSORS.body_len(), exactly(2));
    assert_eq!(p::_3D_CLEAR_HIZ.body_len(), exactly(3));
    // Vertex data "4 to end" after VAP_VTX_FMT and VAP_VF_CNTL.
    assert_eq!(p::_3D_DRAW_IMMD.body_len(), at_least(2));
    // LOAD_PALETTE: SCALE_DATATYPE, COLOR_1 and COLOR_2 are numbered rows, then COLOR_n.
    assert_eq!(p::LOAD_PALETTE.body_len(), at_least(3));
    // {SETTINGS} says what follows; NOP's DATA_BLOCK may be a single dword.
    assert_eq!(p::BITBLT.body_len(), at_least(1));
    assert_eq!(p::NOP.body_len(), at_least(1));
    assert!(exactly(2).accepts(2) && !exactly(2).accepts(3) && !exactly(2).accepts(1));
    assert!(at_least(2).accepts(100) && !at_least(2).accepts(1));
}
