//! Issue #24 §3 / #17 §2: packets of a failed submission used to run with the next one. Each
//! case here failed that way before; now nothing of the failed submission reaches the CP.

mod common;

use baregpu_radeon_evergreen::FENCE_DWORDS;
use baregpu_radeon_evergreen::compute::{self, Dispatch};
use baregpu_radeon_evergreen::gpu::GpuQueue;
use baregpu_radeon_evergreen::hal::dma::BusAddress;
use baregpu_radeon_evergreen::pm4::{CP_DMA_MAX_BYTES, PacketError};
use common::*;

#[test]
fn a_failed_set_scratch_closure_never_writes_the_register() {
    for (chip, asic) in CHIPS {
        let gpu = gpu(asic);
        let mut drv = init(&gpu, chip, &Images::of(chip), Default::default());
        let r = drv.submit(16, |s| {
            s.set_scratch(2, 0xBAD0_0001)?;
            Err::<(), _>(PacketError::BadLength { dwords: 0 })
        });
        assert!(r.is_err());
        assert_eq!(drv.ring().pending_dwords(), 0, "{chip:?}: the write pointer went back");
        let f = drv.fence().unwrap();
        drv.wait(&f, FENCE_TIMEOUT).unwrap();
        assert_ne!(drv.scratch(2).unwrap(), 0xBAD0_0001, "{chip:?}: ran with the next fence");
        assert_clean(&gpu);
    }
}

#[test]
fn a_dispatch_failing_late_leaves_no_compute_state_in_the_ring() {
    for (chip, asic) in CHIPS {
        let gpu = gpu(asic);
        let mut drv = init(&gpu, chip, &Images::of(chip), Default::default());
        let code = alloc(&gpu, 4096);
        let kernel = compute::load_kernel(&code, &[0; 4], 2, 0).unwrap();
        let (constants, global, dims) = (alloc(&gpu, 256), alloc(&gpu, 4096), alloc(&gpu, 256));
        let (head, doorbells) = (drv.ring().head(), drv.stats().doorbells);
        // The indirect dimensions' address is checked by SET_BASE (quadword aligned), after
        // ~100 dwords of compute state were written.
        let d = Dispatch {
            kernel,
            groups: [1, 1, 1],
            local: [64, 1, 1],
            args: &[],
            constants: &constants,
            global: &global,
            lds_dwords: 0,
            indirect: Some(BusAddress(dims.bus_address().0 + 4)),
        };
        assert!(drv.dispatch(&d).is_err(), "{chip:?}: a misaligned indirect address");
        assert_eq!(drv.ring().head(), head, "{chip:?}: the write pointer went back");
        assert_eq!(drv.stats().doorbells, doorbells, "{chip:?}: no doorbell");
        let f = drv.fence().unwrap();
        drv.wait(&f, FENCE_TIMEOUT).unwrap();
        assert_eq!(gpu.model().stats().dispatches, 0, "{chip:?}: nothing dispatched");
        assert_clean(&gpu);
    }
}

#[test]
fn a_cp_dma_copy_refused_half_way_writes_no_transfer() {
    for (chip, asic) in CHIPS {
        let gpu = gpu(asic);
        let mut drv = init(&gpu, chip, &Images::of(chip), Default::default());
        let dst = alloc(&gpu, 4096);
        let f = drv
            .submit(6 + FENCE_DWORDS, |s| {
                let left = s.dwords_left();
                // Two transfers: the first fits 40 bits, the second's source does not.
                let src = BusAddress((1 << 40) - (CP_DMA_MAX_BYTES as u64 & !3));
                let r = s.cp_dma_copy(src, dst.bus_address(), CP_DMA_MAX_BYTES + 4);
                assert!(r.is_err(), "{chip:?}: the second transfer is out of reach");
                assert_eq!(s.dwords_left(), left, "{chip:?}: not even the first was written");
                s.fence()
            })
            .unwrap();
        drv.wait(&f, FENCE_TIMEOUT).unwrap();
        assert_eq!(dst.read_u32(0), Ok(0), "{chip:?}: nothing copied");
        assert_clean(&gpu);
    }
}
