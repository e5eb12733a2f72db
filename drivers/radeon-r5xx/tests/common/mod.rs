//! Shared fixtures: the emulated R520 in-process, a clock that runs it, a recording register
//! interface and the real microcode.
#![allow(dead_code)]

use std::cell::Cell;
use std::time::Duration;

use baregpu_radeon_r5xx::hal::RegisterIo;
use baregpu_radeon_r5xx::regs::cp::SCRATCH_REG0;
use baregpu_radeon_r5xx::ring::pm4::{NoSpace, Pm4Error};
use baregpu_radeon_r5xx::{R5xx, RingConfig, Submission, SubmitError, USER_SCRATCH};
use gpu_contract::{Fixture, InProcessDevice};
use gpu_device_model::{InProcess, InProcessOptions, Pacing};
use r5xx_model::{Faults, R5xxModel};

/// The emulated device.
pub type Gpu = InProcess<R5xxModel>;
/// The driver over it.
pub type Driver<'a> = R5xx<'a, &'a Gpu, ModelClock<'a>, Gpu>;

/// The test clock: each reading runs the model and advances 10 µs.
pub type ModelClock<'a> = gpu_device_model::ModelClock<'a, R5xxModel>;

/// A register interface that counts accesses per offset class and forwards them.
pub struct Recording<'a> {
    pub inner: &'a Gpu,
    pub reads: Cell<usize>,
    pub writes: Cell<usize>,
    pub log: std::cell::RefCell<Vec<(bool, usize, u32)>>,
}

impl<'a> Recording<'a> {
    pub fn new(inner: &'a Gpu) -> Self {
        Recording {
            inner,
            reads: Cell::new(0),
            writes: Cell::new(0),
            log: std::cell::RefCell::new(Vec::new()),
        }
    }

    /// Writes to `offset` so far.
    pub fn writes_to(&self, offset: usize) -> usize {
        self.log.borrow().iter().filter(|(w, o, _)| *w && *o == offset).count()
    }

    pub fn accesses(&self) -> usize {
        self.reads.get() + self.writes.get()
    }
}

impl RegisterIo for Recording<'_> {
    fn read32(&self, offset: usize) -> u32 {
        self.reads.set(self.reads.get() + 1);
        let v = self.inner.read32(offset);
        self.log.borrow_mut().push((false, offset, v));
        v
    }
    fn write32(&self, offset: usize, value: u32) {
        self.writes.set(self.writes.get() + 1);
        self.log.borrow_mut().push((true, offset, value));
        self.inner.write32(offset, value)
    }
}

/// `radeon/R520_cp.bin` from the system's firmware directory.
pub fn firmware() -> Vec<u8> {
    let path = "/lib/firmware/radeon/R520_cp.bin";
    std::fs::read(path).unwrap_or_else(|e| {
        panic!("{path}: {e}; install it with `bash scripts/setup.sh` (firmware-amd-graphics)")
    })
}

pub fn gpu() -> Gpu {
    InProcess::new(R5xxModel::new()).expect("in-process R5xx")
}

pub fn gpu_with(faults: Faults) -> Gpu {
    InProcess::new(R5xxModel::with_faults(faults)).expect("in-process R5xx")
}

pub fn gpu_disabled() -> Gpu {
    let options = InProcessOptions { enable: false, ..InProcessOptions::default() };
    InProcess::with_options(R5xxModel::new(), options).expect("in-process R5xx")
}

/// A driver with a 4 KiB ring (1024 dwords: wraps quickly).
pub fn small_ring() -> RingConfig {
    RingConfig::with_ring_bytes(4096)
}

pub fn init<'a>(gpu: &'a Gpu, config: RingConfig) -> Driver<'a> {
    R5xx::init(gpu, ModelClock::new(gpu), gpu, &firmware(), config).expect("init")
}

pub fn set_faults(gpu: &Gpu, f: impl FnOnce(&mut Faults)) {
    let mut faults = gpu.model().faults();
    f(&mut faults);
    gpu.model_mut().set_faults(faults);
}

/// Fence timeout used by tests (simulated time).
pub const FENCE_TIMEOUT: Duration = Duration::from_millis(50);

/// Whether the engines run on their own time (any pacing but run-to-idle, which finishes
/// every doorbell before the write returns and can show no partial progress).
pub fn paced(gpu: &Gpu) -> bool {
    gpu.device().pacing() != Pacing::RunToIdle
}

/// Whether every access shows the engines part-way, reproducibly (seeded pacing): run to idle
/// finishes every doorbell before the write returns, and an engine thread on the wall clock
/// (threaded) may finish a whole batch between two accesses.
pub fn stepwise(gpu: &Gpu) -> bool {
    matches!(gpu.device().pacing(), Pacing::Seeded(_))
}

/// Under seeded pacing, the driver's reads of the written-back read pointer saw the CP
/// part-way (past where it was, short of the committed write pointer: it was still
/// consuming). Prints the figures either way.
pub fn assert_partial_consumption(gpu: &Gpu, ring: &baregpu_radeon_r5xx::Ring<'_, Gpu>) {
    let (partial, reads) = (ring.partial_reads(), ring.rptr_reads());
    println!("ring reads that saw the CP part-way: {partial} of {reads}");
    if stepwise(gpu) {
        assert!(partial > 0, "no partial consumption observed in {reads} ring reads");
    }
}

/// The streams so far were valid: every register write they made landed (the model dropped
/// none: no write to a hole, a read-only register or an aperture) and the device is healthy.
pub fn assert_clean(gpu: &Gpu) {
    let dropped = gpu.model().stats().writes_dropped;
    assert_eq!(dropped, 0, "the model dropped {dropped} register writes of a valid stream");
    assert_eq!(gpu.error_code(), 0, "device error state");
}

/// The driver over its model, for the family-generic contract suite (`gpu-contract`) and the
/// `submission_closures` fuzz target.
pub struct R5xxFixture<'a> {
    pub gpu: &'a Gpu,
    pub drv: Driver<'a>,
}

impl<'a> Fixture for R5xxFixture<'a> {
    type Queue = Driver<'a>;

    fn queue(&mut self) -> &mut Driver<'a> {
        &mut self.drv
    }
    type Model = R5xxModel;

    fn device(&self) -> InProcessDevice<'_, Self::Model> {
        InProcessDevice::new(self.gpu, |m| m.faults().switches())
    }
    /// A type-0 write of the user scratch register (written back, §5.9).
    const MARKER_UNITS: usize = 2;
    fn write_marker(
        s: &mut Submission<'_, 'a, &'a Gpu, ModelClock<'a>, Gpu>,
        value: u32,
    ) -> Result<(), SubmitError> {
        s.reserve(2)?;
        s.writer().write_reg_at(USER_SCRATCH, SCRATCH_REG0::RESET.with_scratch_reg0(value))?;
        Ok(())
    }
    fn read_marker(&self) -> u32 {
        self.drv.scratch_writeback(USER_SCRATCH).expect("a scratch register")
    }
    fn closure_error() -> SubmitError {
        SubmitError::Packet(Pm4Error::NoSpace(NoSpace { needed: 1, free: 0 }))
    }
    fn ring_units(&self) -> usize {
        self.drv.ring().size_dwords()
    }
    const TIMEOUT: Duration = FENCE_TIMEOUT;
}

/// Run `test` on a fresh R520 and driver (small ring).
pub fn with_r5xx(test: impl Fn(&mut R5xxFixture<'_>)) {
    let gpu = gpu();
    let drv = init(&gpu, small_ring());
    test(&mut R5xxFixture { gpu: &gpu, drv });
}
