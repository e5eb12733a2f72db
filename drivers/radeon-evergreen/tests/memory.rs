//! The driver's DMA memory: the ring, write-back page and interrupt ring go back to their
//! allocator on every init failure, on shutdown and on drop, and only once the GPU can no
//! longer touch them (ME and PFP halted, interrupt ring off); the IB test's buffer goes back
//! after its fence, and is kept when the fence never came (the CP might still fetch it).

mod common;

use baregpu_radeon_evergreen::gpu::GpuQueue;
use std::cell::Cell;

use baregpu_hal::Register;
use baregpu_hal::dma::{DmaAllocator, DmaError, DmaLayout, DmaRegion};
use baregpu_radeon_evergreen::{Evergreen, FenceError, InitError, RingConfig, TestError};
use baregpu_regs::evergreen::Chipset;
use baregpu_regs::evergreen::cp::CP_ME_CNTL;
use baregpu_regs::evergreen::ih::IH_RB_CNTL;
use common::*;

/// The device's allocator, watched: refuses allocation number `fail_at` (counting from 0) and,
/// at every deallocation, records whether the GPU could still use memory (ME or PFP running,
/// or the interrupt ring enabled) by the model's register file.
struct Watched<'a> {
    gpu: &'a Gpu,
    fail_at: Option<usize>,
    allocations: Cell<usize>,
    freed: Cell<usize>,
    freed_while_running: Cell<usize>,
}

impl<'a> Watched<'a> {
    fn new(gpu: &'a Gpu) -> Self {
        Watched::failing_at(gpu, None)
    }

    fn failing_at(gpu: &'a Gpu, fail_at: Option<usize>) -> Self {
        Watched {
            gpu,
            fail_at,
            allocations: Cell::new(0),
            freed: Cell::new(0),
            freed_while_running: Cell::new(0),
        }
    }

    /// Whether the CP or the IH may still read or write memory.
    fn gpu_running(&self) -> bool {
        let model = self.gpu.model();
        let me = CP_ME_CNTL::from_raw(model.register(CP_ME_CNTL::OFFSET as u32));
        let ih = IH_RB_CNTL::from_raw(model.register(IH_RB_CNTL::OFFSET as u32));
        !(me.me_halt() && me.pfp_halt()) || ih.ih_rb_enable()
    }
}

impl DmaAllocator for Watched<'_> {
    fn allocate(&self, layout: DmaLayout) -> Result<DmaRegion, DmaError> {
        let n = self.allocations.get();
        self.allocations.set(n + 1);
        if Some(n) == self.fail_at {
            return Err(DmaError::OutOfMemory);
        }
        self.gpu.allocate(layout)
    }

    fn deallocate(&self, region: DmaRegion) {
        self.freed.set(self.freed.get() + 1);
        if self.gpu_running() {
            self.freed_while_running.set(self.freed_while_running.get() + 1);
        }
        self.gpu.deallocate(region);
    }
}

type Watching<'a> = Evergreen<'a, &'a Gpu, ModelClock<'a>, Watched<'a>>;

fn init_watched<'a>(
    gpu: &'a Gpu,
    dma: &'a Watched<'a>,
    chip: Chipset,
    images: &Images,
) -> Result<Watching<'a>, InitError> {
    Evergreen::init(gpu, ModelClock::new(gpu), dma, chip, &images.parse(), small_ring())
}

#[test]
fn every_allocation_failure_in_init_gives_back_what_was_allocated() {
    for (chip, asic) in CHIPS {
        let images = Images::of(chip);
        // Allocations 0, 1, 2: ring, write-back page, interrupt ring (nothing touched yet);
        // 3: the IB test's buffer, with the CP already running.
        for fail_at in 0..4 {
            let gpu = gpu(asic);
            let dma = Watched::failing_at(&gpu, Some(fail_at));
            let r = init_watched(&gpu, &dma, chip, &images);
            let expected = if fail_at < 3 {
                InitError::Dma(DmaError::OutOfMemory)
            } else {
                InitError::Test(TestError::Dma(DmaError::OutOfMemory))
            };
            assert_eq!(r.err(), Some(expected), "{chip:?}, allocation {fail_at} refused");
            assert_eq!(gpu.dma_outstanding(), 0, "{chip:?}, allocation {fail_at}: all given back");
            assert_eq!(
                dma.freed.get(),
                fail_at,
                "{chip:?}: the buffers allocated before, once each"
            );
            assert_eq!(dma.freed_while_running.get(), 0, "{chip:?}: freed under a running CP");
        }
        // With every allocation granted init succeeds: the failures above were the refusals.
        let gpu = gpu(asic);
        let dma = Watched::new(&gpu);
        let drv = init_watched(&gpu, &dma, chip, &images).expect("init");
        assert_eq!(dma.allocations.get(), 4, "ring, write-back, IH ring, IB test buffer");
        drop(drv);
    }
}

#[test]
fn a_failed_bring_up_halts_the_cp_before_its_memory_goes_back() {
    for (chip, asic) in CHIPS {
        // The microcode read-back fails after the memory was allocated (engines halted).
        let gpu = gpu_with(
            asic,
            evergreen_model::Faults { ucode_corrupt: Some(3), ..Default::default() },
        );
        let dma = Watched::new(&gpu);
        let r = init_watched(&gpu, &dma, chip, &Images::of(chip));
        assert!(matches!(r.err(), Some(InitError::Firmware(_))), "{chip:?}");
        assert_eq!(gpu.dma_outstanding(), 0, "{chip:?}: ring, write-back and IH ring returned");
        assert_eq!((dma.freed.get(), dma.freed_while_running.get()), (3, 0), "{chip:?}");

        // The ring test fails with the CP running (it fetches nothing): stopped, then freed.
        let stalled = common::gpu(asic);
        set_faults(&stalled, |f| f.cp_stall = true);
        let dma = Watched::new(&stalled);
        let r = init_watched(&stalled, &dma, chip, &Images::of(chip));
        let e = r.err();
        assert!(matches!(e, Some(InitError::Test(_))), "{chip:?}: {e:?}");
        assert_eq!(stalled.dma_outstanding(), 0, "{chip:?}: ring, write-back and IH ring returned");
        assert_eq!((dma.freed.get(), dma.freed_while_running.get()), (3, 0), "{chip:?}");
    }
}

#[test]
fn shutdown_and_drop_stop_the_cp_and_the_ih_ring_before_giving_the_memory_back() {
    for (chip, asic) in CHIPS {
        let images = Images::of(chip);
        for shutdown in [true, false] {
            let gpu = gpu(asic);
            let dma = Watched::new(&gpu);
            let mut drv = init_watched(&gpu, &dma, chip, &images).expect("init");
            assert_eq!(gpu.dma_outstanding(), 3, "{chip:?}: ring, write-back page, IH ring");
            // Interrupts are opt-in: this test needs the IH ring running to see it stopped.
            assert!(!drv.interrupts_enabled(), "{chip:?}: interrupts off after init");
            drv.enable_interrupts().expect("IH ring");
            assert!(drv.interrupts_enabled() && dma.gpu_running(), "{chip:?}: running");
            let f = drv.fence().expect("fence");
            drv.wait(&f, FENCE_TIMEOUT).expect("fence signals");
            // The IB test's buffer went back during init, after its fence (the CP running).
            assert_eq!(dma.freed.get(), 1, "{chip:?}: the IB test's buffer");
            dma.freed.set(0);
            dma.freed_while_running.set(0);
            if shutdown {
                drv.shutdown();
            } else {
                drop(drv);
            }
            assert_eq!(gpu.dma_outstanding(), 0, "{chip:?}: the memory went back");
            assert_eq!(dma.freed.get(), 3, "{chip:?}: each buffer once");
            assert_eq!(dma.freed_while_running.get(), 0, "{chip:?}: freed under a running GPU");
            assert_clean(&gpu);
        }
    }
}

#[test]
fn the_ib_test_buffer_goes_back_after_its_fence_and_is_kept_when_the_fence_never_came() {
    for (chip, asic) in CHIPS {
        let gpu = gpu(asic);
        let mut drv = init(&gpu, chip, &Images::of(chip), RingConfig::default());
        let regions = gpu.dma_outstanding();
        drv.ib_test().expect("IB test");
        assert_eq!(gpu.dma_outstanding(), regions, "{chip:?}: the IB test's buffer went back");
        // A stalled CP: the IB is on the ring and may still be fetched after the timeout.
        set_faults(&gpu, |f| f.cp_stall = true);
        let r = drv.ib_test();
        assert!(
            matches!(r, Err(TestError::Fence(FenceError::Timeout { progressed: false, .. }))),
            "{chip:?}: {r:?}"
        );
        assert_eq!(gpu.dma_outstanding(), regions + 1, "{chip:?}: the buffer is kept allocated");
        set_faults(&gpu, |f| f.cp_stall = false);
        drv.reset().expect("reset");
        drop(drv);
        assert_eq!(gpu.dma_outstanding(), 1, "{chip:?}: only the timed-out IB's buffer is left");
    }
}
