//! Shared fixture: the emulated R520 in-process and a driver on it.
#![allow(dead_code)]

use std::cell::Cell;

use gpu_device_model::InProcess;
use gpu_hal::time::Clock;
use r5xx_model::R5xxModel;
use radeon_r5xx::{R5xx, RingConfig};

pub type Gpu = InProcess<R5xxModel>;

/// A clock that lets the model run at every reading (time advances 10 µs per reading).
pub struct ModelClock<'a> {
    gpu: &'a Gpu,
    now: Cell<u64>,
}

impl Clock for ModelClock<'_> {
    fn now_ns(&self) -> u64 {
        self.gpu.poll();
        let t = self.now.get();
        self.now.set(t + 10_000);
        t
    }
}

pub fn firmware() -> Vec<u8> {
    std::fs::read("/lib/firmware/radeon/R520_cp.bin")
        .expect("radeon/R520_cp.bin: run `bash scripts/setup.sh` (firmware-amd-graphics)")
}

pub fn with_driver<T>(f: impl FnOnce(&Gpu, &mut R5xx<&Gpu, ModelClock<'_>>) -> T) -> T {
    let gpu = InProcess::new(R5xxModel::new()).expect("in-process R5xx");
    let clock = ModelClock { gpu: &gpu, now: Cell::new(0) };
    let mut drv = R5xx::init(&gpu, clock, &gpu, &firmware(), RingConfig::default()).expect("init");
    f(&gpu, &mut drv)
}
