//! Hostile IH write pointers (#24 §2): `IH_RB_WPTR` values the IH could not have written
//! (every value mod 16, beyond the ring, with the overflow bit) on both chips. Each is refused
//! or handled, and afterwards the driver and the IH stay in step: the read pointer is a vector
//! boundary, every later fence's EOP vector is counted exactly once and nothing else is.

mod common;

use baregpu_radeon_evergreen::gpu::GpuQueue;
use std::cell::Cell;

use baregpu_hal::{Register, RegisterIo};
use baregpu_radeon_evergreen::irq::source;
use baregpu_radeon_evergreen::{Evergreen, InitError, RingConfig, TestError};
use baregpu_regs::evergreen::cp::CP_INT_CNTL;
use common::ih::{IH_BYTES, PlantedWptr, assert_in_step, driver, impossible_or_flags, plant};
use common::*;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

#[test]
fn every_write_pointer_mod_16_beyond_the_ring_or_overflowed_leaves_the_ring_in_step() {
    for (chip, asic) in CHIPS {
        let gpu = gpu(asic);
        let io = PlantedWptr { gpu: &gpu, next: Cell::new(None) };
        let mut drv = driver(&gpu, &io, chip);
        assert_in_step(&gpu, &mut drv, "before").unwrap_or_else(|e| panic!("{e}"));
        // Every value mod 16 around the IH's own offset: 1 is the overflow bit, 2 a reserved
        // bit; 4, 8 and 12 are byte offsets inside a vector.
        for k in 0..16u32 {
            plant(&gpu, &io, &mut drv, |real| (real & !0xF) + k)
                .unwrap_or_else(|e| panic!("{asic:?}, +{k}: {e}"));
        }
        // Beyond the ring (IH_IB_SIZE is 256 bytes here; WPTR_OFFSET has 16 bits), with and
        // without the overflow bit, and the highest offset the field holds.
        for v in [IH_BYTES as u32, IH_BYTES as u32 + 16, 0x3_FFF0, 0x3_FFFC, 0x3_FFFD, 0x101] {
            plant(&gpu, &io, &mut drv, |_| v).unwrap_or_else(|e| panic!("{asic:?}, {v:#x}: {e}"));
        }
    }
}

#[test]
fn arbitrary_write_pointers_never_desynchronise_the_ring() {
    for (chip, asic) in CHIPS {
        let gpu = gpu(asic);
        let io = PlantedWptr { gpu: &gpu, next: Cell::new(None) };
        let drv = std::cell::RefCell::new(driver(&gpu, &io, chip));
        // Any value except a different vector boundary inside the ring, which the IH could
        // have written and which the driver must therefore believe.
        let hostile = prop_oneof![
            (0u32..16).prop_map(|k| (k, None)),
            any::<u32>().prop_map(|v| (0, Some(v))),
        ];
        TestRunner::new(Config { cases: 64, source_file: Some(file!()), ..Config::default() })
            .run(&hostile, |(k, v)| {
                let planted = move |real: u32| match v {
                    Some(v) => impossible_or_flags(v, real),
                    None => (real & !0xF) + k,
                };
                plant(&gpu, &io, &mut drv.borrow_mut(), planted).map_err(TestCaseError::fail)
            })
            .unwrap_or_else(|e| panic!("{asic:?}: {e}"));
    }
}

/// The emulated GPU, except that writes to `CP_INT_CNTL` are dropped once `dead` is set: the
/// CP then asks the IH for no end-of-pipe interrupt.
struct DeadEopInterrupt<'g> {
    gpu: &'g Gpu,
    dead: Cell<bool>,
}

impl RegisterIo for DeadEopInterrupt<'_> {
    fn read32(&self, offset: usize) -> u32 {
        self.gpu.read32(offset)
    }
    fn write32(&self, offset: usize, value: u32) {
        if !(self.dead.get() && offset == CP_INT_CNTL::OFFSET) {
            self.gpu.write32(offset, value)
        }
    }
}

/// `IH_RB_WPTR` is read-only: after bring-up's interrupt test (and after a disable), the IH's
/// write pointer stays past vectors the ring memory still holds. Enabling must start reading
/// there: an interrupt test that read from 0 passed on bring-up's stale end-of-pipe vector even
/// with the interrupt path dead, and left a live test's own vector unread (the test kernel's
/// first fence then "interrupted" before it signalled).
#[test]
fn enabling_interrupts_again_tests_the_path_afresh_and_leaves_no_vector_unread() {
    for (chip, asic) in CHIPS {
        let gpu = gpu(asic);
        let io = DeadEopInterrupt { gpu: &gpu, dead: Cell::new(false) };
        let config = RingConfig { ih_ring_bytes: IH_BYTES, ..Default::default() };
        let fw = Images::of(chip);
        let mut drv = Evergreen::init(&io, ModelClock::new(&gpu), &gpu, chip, &fw.parse(), config)
            .expect("init");
        for round in 0..3 {
            drv.enable_interrupts().expect("interrupts (opt-in)");
            // Let the engines finish whatever the interrupt test left in flight.
            for _ in 0..20 {
                gpu.poll();
            }
            let left = drv.handle_interrupts().expect("in step");
            assert_eq!(
                (left.vectors, left.eop),
                (0, 0),
                "{asic:?}, enable #{round}: the interrupt test consumed its own vector"
            );
            let f = drv.fence().unwrap();
            drv.wait(&f, FENCE_TIMEOUT).unwrap();
            drv.disable_interrupts();
        }
        io.dead.set(true);
        match drv.enable_interrupts() {
            Err(InitError::Test(TestError::NoInterrupt { source: s, .. })) => {
                assert_eq!(s, source::CP_EOP, "{asic:?}")
            }
            other => panic!("{asic:?}: a dead EOP interrupt passed the test: {other:?}"),
        }
    }
}
