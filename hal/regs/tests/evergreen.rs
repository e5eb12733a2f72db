//! The generated Evergreen/Cayman registers used the way the CP bring-up and the compute state
//! setup of amd-evergreen-cayman-acceleration §3.2 use them, over a recording bus.
#![cfg(feature = "evergreen")]

mod common;

use baregpu_hal::{Array, Register, RegisterIoExt};
use baregpu_regs::evergreen::cb::CB_COLOR0_INFO;
use baregpu_regs::evergreen::cp::{CP_ME_CNTL, SCRATCH_REG0};
use baregpu_regs::evergreen::vgt::{VGT_GS_MODE, vgt_gs_mode};
use common::{Access, Recorder};

#[test]
fn halting_the_micro_engines_is_one_read_modify_write_of_cp_me_cntl() {
    let bus = Recorder::with(&[(0x86D8, 0x0000_00FF)]);
    bus.modify::<CP_ME_CNTL>(|r| r.with_me_halt(true).with_pfp_halt(true));
    // ME_HALT bit 28, PFP_HALT bit 26 (Linux radeon evergreend.h); other bits preserved.
    assert_eq!(
        bus.log.borrow()[..],
        [Access::Read(0x86D8, 0xFF), Access::Write(0x86D8, 0xFF | (1 << 28) | (1 << 26))]
    );
}

#[test]
fn scratch_registers_are_an_array_of_eight() {
    let bus = Recorder::default();
    for i in 0..8 {
        bus.write_at(i, SCRATCH_REG0::from_raw(0xCAFE_0000 | i as u32)).unwrap();
    }
    assert_eq!(bus.writes()[7], (0x8500 + 7 * 4, 0xCAFE_0007));
    assert!(bus.write_at(8, SCRATCH_REG0::from_raw(0)).is_err());
}

#[test]
fn colour_buffer_registers_of_mrt0_to_7_are_0x3c_apart() {
    assert_eq!(<CB_COLOR0_INFO as Register>::OFFSET, 0x28C70);
    assert_eq!(<CB_COLOR0_INFO as Array>::offset_of(1), Ok(0x28C70 + 0x3C));
    assert_eq!(<CB_COLOR0_INFO as Array>::COUNT, 8);
}

#[test]
fn compute_mode_geometry_setup_packs_documented_fields() {
    // §3.2 item 8: VGT_GS_MODE.MODE = GS_OFF, COMPUTE_MODE = 1, PARTIAL_THD_AT_EOI = 1.
    let gs = VGT_GS_MODE::RESET
        .with_mode(vgt_gs_mode::Mode::GsOff)
        .with_compute_mode(true)
        .with_partial_thd_at_eoi(true);
    assert_eq!(gs.raw(), (1 << 14) | (1 << 17));
    assert_eq!(gs.mode(), Ok(vgt_gs_mode::Mode::GsOff));
    assert!(VGT_GS_MODE::from_raw(3).mode().is_err(), "value 3 is not documented");
}
