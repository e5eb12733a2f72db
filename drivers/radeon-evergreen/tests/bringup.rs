//! Bring-up against the emulated Cypress and Cayman: firmware, ring, ring and IB tests.

mod common;

use baregpu_firmware::amd::evergreen::{EvergreenFirmware, UploadReport};
use baregpu_radeon_evergreen::{Evergreen, InitError, RingConfig, TEST_SCRATCH, TEST_VALUE};
use baregpu_regs::evergreen::Chipset;
use common::*;

#[test]
fn init_uploads_firmware_at_the_write_floor_and_passes_ring_and_ib_tests() {
    for (chip, asic) in CHIPS {
        let gpu = gpu(asic);
        let images = Images::of(chip);
        let io = Counting::new(&gpu);
        let drv = Evergreen::init(
            &io,
            ModelClock::new(&gpu),
            &gpu,
            chip,
            &images.parse(),
            RingConfig::default(),
        )
        .unwrap_or_else(|e| panic!("{chip:?}: {e}"));
        let u = EvergreenUcode::of(chip).expect("microcode of a listed chip");
        assert_eq!(
            drv.upload_report(),
            UploadReport {
                pfp_writes: 1 + u.pfp_dwords(),
                me_writes: 1 + u.me_dwords(),
                rlc_writes: 1 + u.rlc_dwords(),
                verify_writes: 3,
                reads: 1 + u.pfp_dwords() + u.me_dwords() + u.rlc_dwords(),
            },
            "{chip:?}"
        );
        // Seen independently at the register interface: per image one address write for the
        // load and one for the read-back, and one data write per word.
        use baregpu_regs::evergreen::cp::{
            CP_ME_RAM_DATA, CP_ME_RAM_RADDR, CP_ME_RAM_WADDR, CP_PFP_UCODE_ADDR, CP_PFP_UCODE_DATA,
        };
        use baregpu_regs::evergreen::rlc::{RLC_UCODE_ADDR, RLC_UCODE_DATA};
        assert_eq!(io.writes_to::<CP_PFP_UCODE_DATA>(), u.pfp_dwords());
        assert_eq!(io.writes_to::<CP_ME_RAM_DATA>(), u.me_dwords());
        assert_eq!(io.writes_to::<RLC_UCODE_DATA>(), u.rlc_dwords());
        assert_eq!(io.writes_to::<CP_PFP_UCODE_ADDR>(), 2);
        assert_eq!(io.writes_to::<CP_ME_RAM_WADDR>() + io.writes_to::<CP_ME_RAM_RADDR>(), 2);
        assert_eq!(io.writes_to::<RLC_UCODE_ADDR>(), 2);
        // The IB test ran last: its scratch value is there, the ring test's before it.
        assert_eq!(drv.scratch(TEST_SCRATCH), Ok(TEST_VALUE));
        assert!(drv.stats().doorbells >= 3, "ME_INITIALIZE, ring test, IB test");
        assert!(gpu.model().me_initialized());
        assert_eq!(gpu.model().stats().ibs_started, 1);
        assert_clean(&gpu);
    }
}

use baregpu_firmware::amd::evergreen::EvergreenUcode;

#[test]
fn the_other_chips_firmware_is_refused_before_any_register_access() {
    let cypress = Images::of(Chipset::CYPRESS);
    let gpu = gpu(evergreen_model::Asic::Cayman);
    let io = Counting::new(&gpu);
    let r = Evergreen::init(
        &io,
        ModelClock::new(&gpu),
        &gpu,
        Chipset::CAYMAN,
        &cypress.parse(),
        RingConfig::default(),
    );
    assert_eq!(
        r.err(),
        Some(InitError::WrongChip { device: Chipset::CAYMAN, firmware: "CYPRESS" })
    );
    assert_eq!((io.reads.get(), io.writes.get()), (0, 0));
    // And the Cypress files do not even parse as Cayman images (sizes differ).
    let wrong = EvergreenFirmware::parse(
        &EvergreenUcode::CAYMAN,
        &cypress.0[0],
        &cypress.0[1],
        &cypress.0[2],
    );
    assert!(wrong.is_err());
}

#[test]
fn a_device_that_reads_all_ones_is_gone_without_writes() {
    for (chip, asic) in CHIPS {
        let gpu = gpu_with(
            asic,
            evergreen_model::Faults { registers_all_ones: true, ..Default::default() },
        );
        let io = Counting::new(&gpu);
        let r = Evergreen::init(
            &io,
            ModelClock::new(&gpu),
            &gpu,
            chip,
            &Images::of(chip).parse(),
            RingConfig::default(),
        );
        assert_eq!(r.err(), Some(InitError::DeviceGone(baregpu_radeon_evergreen::DeviceGone)));
        assert_eq!(io.writes.get(), 0);
    }
}

#[test]
fn corrupted_microcode_read_back_fails_init_with_the_word() {
    for (chip, asic) in CHIPS {
        let gpu = gpu_with(
            asic,
            evergreen_model::Faults { ucode_corrupt: Some(17), ..Default::default() },
        );
        let images = Images::of(chip);
        let r = try_init(&gpu, chip, &images, RingConfig::default());
        match r.err() {
            Some(InitError::Firmware(baregpu_firmware::amd::evergreen::LoadError::Readback {
                image: baregpu_firmware::amd::evergreen::Image::Pfp,
                index: 17,
                expected,
                found,
            })) => assert_eq!(found, expected ^ 1),
            other => panic!("{chip:?}: {other:?}"),
        }
    }
}

#[test]
fn bad_ring_sizes_are_refused_before_any_register_access() {
    let gpu = gpu(evergreen_model::Asic::Cypress);
    let io = Counting::new(&gpu);
    let images = Images::of(Chipset::CYPRESS);
    let r = Evergreen::init(
        &io,
        ModelClock::new(&gpu),
        &gpu,
        Chipset::CYPRESS,
        &images.parse(),
        RingConfig::with_ring_bytes(3000),
    );
    assert!(matches!(r.err(), Some(InitError::Config(_))));
    assert_eq!((io.reads.get(), io.writes.get()), (0, 0));
}

#[test]
fn init_tests_the_interrupt_path_and_a_flipped_rlc_bit_fails_it() {
    use baregpu_radeon_evergreen::TestError;
    use baregpu_radeon_evergreen::irq::source;
    use evergreen_model::Engine;
    for (chip, asic) in CHIPS {
        // A good bring-up saw its fence's end-of-pipe vector.
        let gpu = common::gpu(asic);
        let drv = init(&gpu, chip, &Images::of(chip), RingConfig::default());
        assert!(gpu.model().stats().ih_entries >= 1, "{chip:?}: the test's vector");
        drop(drv);
        // One bit flipped in the RLC image: the upload reads back what was written, but the
        // RLC does not hold the chip's known image, so the IH delivers nothing.
        let gpu = common::gpu(asic);
        let mut images = Images::of(chip);
        images.0[2][100] ^= 1 << 3;
        let r = try_init(&gpu, chip, &images, RingConfig::default());
        assert!(gpu.model_mut().microcode(Engine::Rlc).is_none(), "{chip:?}: unknown RLC image");
        assert!(gpu.model_mut().microcode(Engine::Me).is_some(), "{chip:?}: the CP still runs");
        match r.err() {
            Some(InitError::Test(TestError::NoInterrupt { source: s, .. })) => {
                assert_eq!(s, source::CP_EOP, "{chip:?}")
            }
            other => panic!("{chip:?}: {other:?}"),
        }
    }
}
