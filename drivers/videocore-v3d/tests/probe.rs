//! Probe and bring-up against the scripted register file: the identity decoded from
//! IDENT0/1/2, every refusal typed and made before any write, never a hang; bring-up's writes.

mod common;

use baregpu_videocore_v3d::regs::v3d::*;
use baregpu_videocore_v3d::{
    Bar, DeviceGone, Identity, InitError, ProbeError, TileBufferSize, V3d, V3dConfig,
};
use common::*;

fn init(fake: &FakeV3d) -> Result<V3d<'static, &FakeV3d, StepClock>, InitError> {
    V3d::init(fake, StepClock::default(), None, V3dConfig::default())
}

#[test]
fn a_v3d_with_another_configuration_decodes_field_by_field() {
    // Revision 2, 4 slices, 4 QPUs and 2 TMUs per slice, 16 semaphores, no HDR, 8 KiB VPM;
    // half-size VRI, half tile buffer, no double buffer.
    let ident1 = V3D_IDENT1::RESET.raw();
    let ident1 = V3D_IDENT1::REV.set(ident1, 2);
    let ident1 = V3D_IDENT1::NSLC.set(ident1, 4);
    let ident1 = V3D_IDENT1::HDRT.set(ident1, 0);
    let ident1 = V3D_IDENT1::VPMSZ.set(ident1, 8);
    let ident2 = V3D_IDENT2::VRISZ.set(0, 0);
    let ident2 = V3D_IDENT2::TLBSZ.set(ident2, 1);
    let fake = FakeV3d::with_identity(V3D_IDENT0::RESET.raw(), ident1, ident2);
    let id = baregpu_videocore_v3d::identity::probe(&Bar::new(&fake)).unwrap();
    assert_eq!(id.tech_version, 2);
    assert_eq!((id.revision, id.slices, id.qpus_per_slice, id.tmus_per_slice), (2, 4, 4, 2));
    assert_eq!(id.qpus(), 16);
    assert_eq!(id.semaphores, 16);
    assert!(!id.hdr);
    assert_eq!(id.vpm_bytes, 8 * 1024);
    assert!(!id.vri_full);
    assert_eq!(id.tile_buffer, TileBufferSize::Half);
    assert!(!id.tile_double_buffer);
    assert!(fake.log().is_empty(), "probe writes nothing");
}

#[test]
fn a_missing_powered_off_or_foreign_device_is_a_typed_error_before_any_write() {
    let cases: [(u32, u32, u32, ProbeError); 5] = [
        (u32::MAX, u32::MAX, u32::MAX, ProbeError::DeviceGone(DeviceGone)),
        (0, 0, 0, ProbeError::NotV3d { ident0: 0 }),
        (0x0244_3357, V3D_IDENT1::RESET.raw(), 0x121, ProbeError::NotV3d { ident0: 0x0244_3357 }),
        (
            V3D_IDENT0::TVER.set(V3D_IDENT0::RESET.raw(), 3),
            V3D_IDENT1::RESET.raw(),
            0x121,
            ProbeError::UnsupportedVersion { version: 3 },
        ),
        (
            V3D_IDENT0::RESET.raw(),
            V3D_IDENT1::NSLC.set(V3D_IDENT1::RESET.raw(), 0),
            0x121,
            ProbeError::BadConfiguration {
                register: "V3D_IDENT1",
                raw: V3D_IDENT1::NSLC.set(V3D_IDENT1::RESET.raw(), 0),
            },
        ),
    ];
    for (i0, i1, i2, expected) in cases {
        let fake = FakeV3d::with_identity(i0, i1, i2);
        assert_eq!(Identity::decode(i0, i1, i2), Err(expected));
        let err = init(&fake).err().unwrap();
        assert_eq!(err, InitError::from(expected));
        assert!(fake.log().is_empty(), "{expected:?}: no register written");
    }
    // An undocumented tile buffer size.
    let bad2 = V3D_IDENT2::TLBSZ.set(0x121, 3);
    assert_eq!(
        Identity::decode(V3D_IDENT0::RESET.raw(), V3D_IDENT1::RESET.raw(), bad2),
        Err(ProbeError::BadConfiguration { register: "V3D_IDENT2", raw: bad2 })
    );
    // All-ones at bring-up is the shared DeviceGone, as `source()`.
    let gone = FakeV3d::default();
    gone.all_ones.set(true);
    let err = init(&gone).err().unwrap();
    assert_eq!(err, InitError::DeviceGone(DeviceGone));
    assert!(core::error::Error::source(&err).is_some());
}

#[test]
fn bring_up_tests_the_registers_stops_both_threads_and_leaves_interrupts_off() {
    let fake = FakeV3d::default();
    let v3d = init(&fake).unwrap();
    assert_eq!(v3d.identity().qpus(), 12);
    let log = fake.log();
    let pos = |o: usize, v: u32| log.iter().position(|&w| w == (o, v)).unwrap_or(usize::MAX);
    let scratch = pos(off::<V3D_SCRATCH>(), 0x5a5a_a5a5);
    let ct0 = pos(off::<V3D_CT0CS>(), V3D_CT0CS::RESET.with_ctrsta(true).raw());
    let ct1 = pos(off::<V3D_CT1CS>(), V3D_CT1CS::RESET.with_ctrsta(true).raw());
    let rfc = pos(off::<V3D_RFC>(), 1);
    let srq = pos(off::<V3D_SRQCS>(), (1 << 16) | (1 << 8) | (1 << 7) | 1);
    let intdis = pos(off::<V3D_INTDIS>(), 0xf);
    let dbqite = pos(off::<V3D_DBQITE>(), 0);
    let l2 = pos(off::<V3D_L2CACTL>(), V3D_L2CACTL::L2CCLR.set(0, 1));
    // Every slice's four caches (3 slices: bits 2:0 of each field, Table 72).
    let slc = pos(off::<V3D_SLCACTL>(), 0x0707_0707);
    for (name, at) in [
        ("scratch", scratch),
        ("ct0", ct0),
        ("ct1", ct1),
        ("rfc", rfc),
        ("srqcs", srq),
        ("intdis", intdis),
        ("dbqite", dbqite),
        ("l2", l2),
        ("slc", slc),
    ] {
        assert_ne!(at, usize::MAX, "{name} not written: {log:x?}");
    }
    assert!(scratch < ct0 && ct0 < ct1 && ct1 < intdis && intdis < l2 && l2 < slc, "{log:x?}");
    assert!(!v3d.interrupts_enabled());
    assert!(fake.writes_to(off::<V3D_INTENA>()).is_empty(), "interrupts stay off");
}

#[test]
fn a_scratch_register_that_does_not_hold_its_value_fails_bring_up() {
    let fake = FakeV3d::default();
    fake.on_read(|_, o| (o == off::<V3D_SCRATCH>()).then_some(0));
    assert_eq!(
        init(&fake).err().unwrap(),
        InitError::ScratchMismatch { expected: 0x5a5a_a5a5, found: 0 }
    );
}
