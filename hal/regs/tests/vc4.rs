//! The generated V3D registers used the way a VideoCore IV driver uses them
//! (broadcom-videocore-iv-3d §10), over a recording bus.
#![cfg(feature = "vc4")]

mod common;

use baregpu_hal::dma::BusAddress;
use baregpu_hal::{Register, RegisterIoExt};
use baregpu_regs::vc4::Chipset;
use baregpu_regs::vc4::v3d::{
    V3D_CT0CA, V3D_CT0CS, V3D_CT0EA, V3D_IDENT0, V3D_INTCTL, V3D_PCS, V3D_SRQCS, v3d_ct0cs,
};
use common::{Access, Recorder};

/// ARM physical base of V3D on the Pi 2/3 (Linux bcm2837.dtsi: bus 0x7ec00000).
const V3D_BASE_PI2: usize = 0x3FC0_0000;

#[test]
fn ident0_reset_value_reads_as_v3d_version_2() {
    let ident = V3D_IDENT0::RESET;
    assert_eq!(ident.raw(), 0x0244_3356);
    assert_eq!(ident.idstr(), 0x44_3356); // "V3D", 'V' in the low byte
    assert_eq!(ident.tver(), 2);
    assert_eq!(format!("{ident:?}"), "V3D_IDENT0 { IDSTR: 0x443356, TVER: 0x2 }");
}

#[test]
fn control_list_kick_writes_current_then_end_address_relative_to_the_base() {
    // The register window is the V3D block itself (mapped at `Chipset::mmio_base`).
    let v3d = Recorder::default();
    // The end-address write starts the thread (Table 50), so it must come last.
    v3d.write(V3D_CT0CA::from_raw(0).try_with_ctlca(BusAddress(0x1000_0000)).unwrap());
    v3d.write(V3D_CT0EA::from_raw(0).try_with_ctlea(BusAddress(0x1000_0100)).unwrap());
    assert_eq!(v3d.writes(), [(0x110, 0x1000_0000), (0x108, 0x1000_0100)]);
    assert_eq!(V3D_CT0CA::from_raw(0x1000_0000).ctlca(), BusAddress(0x1000_0000));
}

#[test]
fn the_v3d_window_is_where_each_soc_maps_it() {
    // Appendix B Table 95 lists the BCM2835; the Pi 2/3 SoCs come from their device trees.
    assert_eq!(Chipset::BCM2835.mmio_base(), Some(0x2000_0000 + 0xC0_0000));
    assert_eq!(Chipset::BCM2836.mmio_base(), Some(V3D_BASE_PI2 as u64));
    assert_eq!(Chipset::BCM2837.mmio_base(), Some(V3D_BASE_PI2 as u64));
    assert_eq!(Chipset::BCM21553.mmio_base(), None, "Table 95 gives only its bus address");
}

#[test]
fn thread_status_decodes_run_state_and_error() {
    // CTRUN (bit 5) = running, CTERR (bit 3) set, CTSEMA (14:12) = 3.
    let cs = V3D_CT0CS::from_raw((1 << 5) | (1 << 3) | (3 << 12));
    assert_eq!(cs.ctrun(), v3d_ct0cs::Ctrun::from_raw(1).unwrap());
    assert!(cs.cterr());
    assert_eq!(cs.ctsema(), 3);
    // CTRSTA (bit 15) is write-only: writing it resets the thread.
    assert_eq!(V3D_CT0CS::from_raw(0).with_ctrsta(true).raw(), 1 << 15);
    assert_eq!(<V3D_CT0CS as Register>::WRITE_MASK & (1 << 15), 1 << 15);
    assert_eq!(<V3D_CT0CS as Register>::WRITE_MASK & (1 << 3), 0, "CTERR is read-only");
}

#[test]
fn interrupt_acknowledge_is_a_write_of_the_pending_bits() {
    let bus = Recorder::with(&[(0x30, 0b101)]);
    let pending = bus.read::<V3D_INTCTL>();
    assert!(pending.int_frdone() && pending.int_outomem() && !pending.int_fldone());
    bus.write(pending); // INTCTL is write-1-to-clear
    assert_eq!(bus.log.borrow()[..], [Access::Read(0x30, 0b101), Access::Write(0x30, 0b101)]);
}

#[test]
fn pipeline_status_and_user_program_counters_decode() {
    assert!(V3D_PCS::from_raw(1 << 8).bmoom());
    let srqcs = V3D_SRQCS::from_raw(0x0004_0000 | 0x0200 | 5);
    assert_eq!((srqcs.qpurqcc(), srqcs.qpurqcm(), srqcs.qpurql()), (4, 2, 5));
}
