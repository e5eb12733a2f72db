//! Shared fixture: the emulated R520 in-process and a driver on it.
#![allow(dead_code)]

use baregpu_radeon_r5xx::{R5xx, RingConfig};
use gpu_device_model::InProcess;
use r5xx_model::R5xxModel;

pub type Gpu = InProcess<R5xxModel>;
/// The test clock, driving the model.
pub type ModelClock<'a> = gpu_device_model::ModelClock<'a, R5xxModel>;

pub fn firmware() -> Vec<u8> {
    std::fs::read("/lib/firmware/radeon/R520_cp.bin")
        .expect("radeon/R520_cp.bin: run `bash scripts/setup.sh` (firmware-amd-graphics)")
}

/// The driver over the in-process device, which is also its DMA allocator.
pub type Driver<'a> = R5xx<'a, &'a Gpu, ModelClock<'a>, Gpu>;

pub fn with_driver<T>(f: impl FnOnce(&Gpu, &mut Driver<'_>) -> T) -> T {
    let gpu = InProcess::new(R5xxModel::new()).expect("in-process R5xx");
    let clock = ModelClock::new(&gpu);
    let mut drv = R5xx::init(&gpu, clock, &gpu, &firmware(), RingConfig::default()).expect("init");
    f(&gpu, &mut drv)
}
