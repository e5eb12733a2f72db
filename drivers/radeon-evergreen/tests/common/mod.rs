//! Shared fixtures: the emulated Cypress and Cayman in-process under the default seeded pacing,
//! a clock that runs them, a counting register interface and the real microcode.
#![allow(dead_code)]

pub mod dispatch;
pub mod ih;

use std::cell::Cell;
use std::time::Duration;

use baregpu_radeon_evergreen::hal::RegisterIo;
use baregpu_radeon_evergreen::hal::dma::{DmaBuffer, DmaLayout};
use baregpu_radeon_evergreen::pm4::PacketError;
use baregpu_radeon_evergreen::regs::Chipset;
use baregpu_radeon_evergreen::{Evergreen, RingConfig, Submission};
use baregpu_radeon_evergreen::{EvergreenFirmware, EvergreenUcode};
use evergreen_model::{Asic, EvergreenModel, Faults};
use gpu_contract::{Fixture, InProcessDevice};
use gpu_device_model::{InProcess, Pacing};

/// The emulated device.
pub type Gpu = InProcess<EvergreenModel>;
/// The test clock: each reading runs the model and advances 10 µs.
pub type ModelClock<'a> = gpu_device_model::ModelClock<'a, EvergreenModel>;
/// The driver over it, its memory from the device's allocator.
pub type Driver<'a> = Evergreen<'a, &'a Gpu, ModelClock<'a>, Gpu>;
/// DMA memory from the device's allocator, given back on drop.
pub type Buffer<'a> = DmaBuffer<'a, Gpu>;

/// Both chips, as (driver chipset, model ASIC).
pub const CHIPS: [(Chipset, Asic); 2] =
    [(Chipset::CYPRESS, Asic::Cypress), (Chipset::CAYMAN, Asic::Cayman)];

/// Fence timeout used by tests (simulated time).
pub const FENCE_TIMEOUT: Duration = Duration::from_millis(200);

pub fn gpu(asic: Asic) -> Gpu {
    InProcess::new(EvergreenModel::new(asic)).expect("in-process Evergreen")
}

pub fn gpu_with(asic: Asic, faults: Faults) -> Gpu {
    InProcess::new(EvergreenModel::with_faults(asic, faults)).expect("in-process Evergreen")
}

pub fn set_faults(gpu: &Gpu, f: impl FnOnce(&mut Faults)) {
    let mut faults = gpu.model().faults();
    f(&mut faults);
    gpu.model_mut().set_faults(faults);
}

/// The three images of `chip` from the system's firmware directory (Debian
/// firmware-amd-graphics, installed by scripts/setup.sh).
pub struct Images(pub [Vec<u8>; 3], pub &'static EvergreenUcode);

impl Images {
    pub fn of(chip: Chipset) -> Images {
        let ucode = EvergreenUcode::of(chip).expect("microcode of a listed chip");
        let read = |file: &str| {
            let path = format!("/lib/firmware/{file}");
            std::fs::read(&path).unwrap_or_else(|e| {
                panic!(
                    "{path}: {e}; install it with `bash scripts/setup.sh` (firmware-amd-graphics)"
                )
            })
        };
        Images([read(ucode.pfp_file()), read(ucode.me_file()), read(ucode.rlc_file())], ucode)
    }

    pub fn parse(&self) -> EvergreenFirmware<'_> {
        EvergreenFirmware::parse(self.1, &self.0[0], &self.0[1], &self.0[2]).expect("valid images")
    }
}

pub fn init<'a>(gpu: &'a Gpu, chip: Chipset, images: &Images, config: RingConfig) -> Driver<'a> {
    try_init(gpu, chip, images, config).expect("init")
}

/// [`init`] that may fail (the model's clock, the device's allocator).
pub fn try_init<'a>(
    gpu: &'a Gpu,
    chip: Chipset,
    images: &Images,
    config: RingConfig,
) -> Result<Driver<'a>, baregpu_radeon_evergreen::InitError> {
    Evergreen::init(gpu, ModelClock::new(gpu), gpu, chip, &images.parse(), config)
}

/// A 4 KiB ring (1024 dwords: wraps quickly).
pub fn small_ring() -> RingConfig {
    RingConfig::with_ring_bytes(4096)
}

/// DMA memory of `bytes`, 256-byte aligned, zeroed.
pub fn alloc(gpu: &Gpu, bytes: usize) -> Buffer<'_> {
    let r = DmaBuffer::allocate(gpu, DmaLayout::new(bytes, 256).unwrap()).expect("DMA memory");
    r.zero();
    r
}

/// Whether the engines run on their own time (any pacing but run-to-idle).
pub fn paced(gpu: &Gpu) -> bool {
    gpu.device().pacing() != Pacing::RunToIdle
}

/// Whether every access shows the engines part-way, reproducibly (seeded pacing): run to idle
/// finishes every doorbell before the write returns, and an engine thread on the wall clock
/// (threaded) may finish a whole batch between two accesses.
pub fn stepwise(gpu: &Gpu) -> bool {
    matches!(gpu.device().pacing(), Pacing::Seeded(_))
}

/// The streams so far were valid: the model dropped no register write and has no error.
pub fn assert_clean(gpu: &Gpu) {
    let dropped = gpu.model().stats().writes_dropped;
    assert_eq!(dropped, 0, "the model dropped {dropped} register writes of a valid stream");
    assert_eq!(gpu.error_code(), 0, "device error state");
}

/// A register interface that counts writes and forwards them.
pub struct Counting<'a> {
    pub inner: &'a Gpu,
    pub writes: Cell<usize>,
    pub reads: Cell<usize>,
    /// Writes per register offset.
    pub per_offset: std::cell::RefCell<std::collections::HashMap<usize, usize>>,
}

impl<'a> Counting<'a> {
    pub fn new(inner: &'a Gpu) -> Self {
        Counting {
            inner,
            writes: Cell::new(0),
            reads: Cell::new(0),
            per_offset: Default::default(),
        }
    }

    /// Writes to register `R`.
    pub fn writes_to<R: baregpu_radeon_evergreen::hal::Register>(&self) -> usize {
        self.per_offset.borrow().get(&R::OFFSET).copied().unwrap_or(0)
    }
}

impl RegisterIo for Counting<'_> {
    fn read32(&self, offset: usize) -> u32 {
        self.reads.set(self.reads.get() + 1);
        self.inner.read32(offset)
    }
    fn write32(&self, offset: usize, value: u32) {
        self.writes.set(self.writes.get() + 1);
        *self.per_offset.borrow_mut().entry(offset).or_default() += 1;
        self.inner.write32(offset, value)
    }
}

/// The scratch register the suite writes (the ring and IB tests use 0).
const MARKER_SCRATCH: usize = 1;

/// The driver over its model, for the family-generic contract suite (`gpu-contract`) and the
/// `submission_closures` fuzz target.
pub struct EvergreenFixture<'a> {
    pub gpu: &'a Gpu,
    pub drv: Driver<'a>,
}

impl<'a> Fixture for EvergreenFixture<'a> {
    type Queue = Driver<'a>;

    fn queue(&mut self) -> &mut Driver<'a> {
        &mut self.drv
    }
    type Model = EvergreenModel;

    fn device(&self) -> InProcessDevice<'_, Self::Model> {
        InProcessDevice::new(self.gpu, |m| m.faults().switches())
    }
    /// `SET_CONFIG_REG` of a scratch register (§9.4.14): header, offset, value.
    const MARKER_UNITS: usize = 3;
    fn write_marker(s: &mut Submission<'_, 'a, Gpu>, value: u32) -> Result<(), PacketError> {
        s.set_scratch(MARKER_SCRATCH, value)
    }
    fn read_marker(&self) -> u32 {
        self.drv.scratch(MARKER_SCRATCH).expect("a scratch register")
    }
    fn closure_error() -> PacketError {
        PacketError::BadLength { dwords: 0 }
    }
    fn ring_units(&self) -> usize {
        self.drv.ring().size_dwords()
    }
    const TIMEOUT: Duration = FENCE_TIMEOUT;
}

/// Run `test` on a fresh Cypress and a fresh Cayman with their drivers (small ring).
pub fn with_evergreen(test: impl Fn(&mut EvergreenFixture<'_>)) {
    for (chip, asic) in CHIPS {
        let gpu = gpu(asic);
        let drv = init(&gpu, chip, &Images::of(chip), small_ring());
        test(&mut EvergreenFixture { gpu: &gpu, drv });
    }
}
