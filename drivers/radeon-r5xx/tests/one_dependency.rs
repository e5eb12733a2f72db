//! One dependency is enough to use the driver: everything its API names (the HAL traits, the
//! R5xx registers, the ring's packet writer and errors, the firmware types) is reached here
//! through `baregpu_radeon_r5xx`'s re-exports only. The device side is the emulated R520.

use baregpu_radeon_r5xx::gpu::GpuQueue;
use std::time::Duration;

use baregpu_radeon_r5xx::hal::RegisterIoExt;
use baregpu_radeon_r5xx::regs::cp::{CP_ME_CNTL, cp_me_cntl::MeBusy};
use baregpu_radeon_r5xx::ring::pm4::Pm4Error;
use baregpu_radeon_r5xx::{
    FirmwareError, InitError, R5xx, RingConfig, SubmitError, UploadReport, firmware,
};
use gpu_device_model::{InProcess, ModelClock};
use r5xx_model::R5xxModel;

fn microcode() -> Vec<u8> {
    let path = "/lib/firmware/radeon/R520_cp.bin";
    std::fs::read(path).unwrap_or_else(|e| {
        panic!("{path}: {e}; install it with `bash scripts/setup.sh` (firmware-amd-graphics)")
    })
}

#[test]
fn a_kernel_drives_the_r520_naming_only_the_driver_crate() {
    let gpu = InProcess::new(R5xxModel::new()).expect("in-process R5xx");
    let image = microcode();

    // A truncated image is refused before any register access, with the firmware crate's error.
    let truncated = &image[..7];
    assert_eq!(
        firmware::amd::CpMicrocode::parse(truncated).err(),
        Some(FirmwareError::TruncatedEntry { len: 7, entry_bytes: 8 })
    );
    match R5xx::init(&gpu, ModelClock::new(&gpu), &gpu, truncated, RingConfig::default()) {
        Err(e) => assert_eq!(
            e,
            InitError::Firmware(FirmwareError::TruncatedEntry { len: 7, entry_bytes: 8 })
        ),
        Ok(_) => panic!("a 7-byte image was accepted"),
    }

    let mut drv =
        R5xx::init(&gpu, ModelClock::new(&gpu), &gpu, &image, RingConfig::default()).expect("init");
    let report: UploadReport = drv.upload_report();
    assert_eq!(report.entries, 256, "every MicroEngine RAM entry written and verified");
    assert_eq!(report.load_writes, 1 + 2 * 256);

    // Typed registers through the re-exported HAL trait and register module.
    assert_eq!(gpu.read::<CP_ME_CNTL>().me_busy(), MeBusy::MicroengineNotBusy);

    // Packets through the re-exported ring's writer; its error converts into the driver's.
    let fence = drv
        .submit(8, |s| {
            let nop: Result<(), Pm4Error> = s.writer().nop(&[0xdead_beef; 3]);
            nop.map_err(SubmitError::from)?;
            s.fence()
        })
        .expect("submit");
    drv.wait(&fence, Duration::from_millis(50)).expect("fence signalled");
    assert!(drv.signalled(&fence));
}
