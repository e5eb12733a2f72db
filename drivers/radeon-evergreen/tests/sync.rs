//! `MEM_SEMAPHORE` (§9.6.4) and `PRED_EXEC` (§9.5.4) against the emulated Cypress and Cayman:
//! the waited work and the skipped work, seen from the host.

mod common;

use baregpu_radeon_evergreen::gpu::GpuQueue;
use std::time::Duration;

use baregpu_hal::dma::{BusAddress, DmaRegion};
use baregpu_hal::register::Array;
use baregpu_radeon_evergreen::pm4::{self, PacketError};
use baregpu_radeon_evergreen::sync::{
    PRED_EXEC_DWORDS, PRED_EXEC_MAX_DWORDS, SEMAPHORE_SIGNAL_DWORDS, SEMAPHORE_WAIT_DWORDS,
    Semaphore,
};
use baregpu_radeon_evergreen::{FENCE_DWORDS, FenceError};
use baregpu_regs::evergreen::cp::SCRATCH_REG0;
use common::*;

/// Long enough for the CP to run far past a wait that did not hold (simulated time).
const STALLED: Duration = Duration::from_millis(2);

fn bus(r: &DmaRegion, offset: usize) -> BusAddress {
    BusAddress(r.bus_address().0 + offset as u64)
}

/// The 64-bit counter at the start of `r`.
fn count(r: &DmaRegion) -> u64 {
    u64::from(r.read_u32(0).unwrap()) | u64::from(r.read_u32(4).unwrap()) << 32
}

fn scratch(n: usize) -> usize {
    <SCRATCH_REG0 as Array>::offset_of(n).unwrap()
}

fn timed_out(r: Result<(), FenceError>) -> bool {
    matches!(r, Err(FenceError::Timeout { .. }))
}

#[test]
fn a_semaphore_wait_holds_the_fence_until_the_host_signals() {
    for (chip, asic) in CHIPS {
        let gpu = gpu(asic);
        let mut drv = init(&gpu, chip, &Images::of(chip), Default::default());
        let mem = alloc(&gpu, 256);
        let sem = Semaphore::new(chip, bus(&mem, 0)).unwrap();
        let f = drv
            .submit(SEMAPHORE_WAIT_DWORDS + 3 + FENCE_DWORDS, |s| {
                s.semaphore_wait(&sem)?;
                s.set_scratch(3, 0x5E3A)?;
                s.fence()
            })
            .unwrap();
        assert!(timed_out(drv.wait(&f, STALLED)), "{chip:?}: the fence passed the wait");
        assert!(!drv.signalled(&f));
        assert_ne!(drv.scratch(3), Ok(0x5E3A), "{chip:?}: ran past the wait");
        // The host signals: the CP takes the count and goes on.
        mem.write_u32(0, 1).unwrap();
        drv.wait(&f, FENCE_TIMEOUT).expect("released");
        assert_eq!(drv.scratch(3), Ok(0x5E3A));
        assert_eq!(count(&mem), 0, "{chip:?}: the wait took its count");
        assert!(gpu.model().stats().semaphore_polls > 1);
        assert_clean(&gpu);
    }
}

#[test]
fn a_signal_submitted_first_releases_a_later_wait_one_count_each() {
    for (chip, asic) in CHIPS {
        let gpu = gpu(asic);
        let mut drv = init(&gpu, chip, &Images::of(chip), Default::default());
        let mem = alloc(&gpu, 256);
        let sem = Semaphore::new(chip, bus(&mem, 0)).unwrap();
        // Two signals, after the CP has done a CP DMA fill (bottom of pipe: after that work).
        let dst = alloc(&gpu, 4096);
        let f = drv
            .submit(6 + 2 * SEMAPHORE_SIGNAL_DWORDS + FENCE_DWORDS, |s| {
                s.cp_dma_fill(0xF111_F111, bus(&dst, 0), 4096)?;
                s.semaphore_signal(&sem)?;
                s.semaphore_signal(&sem)?;
                s.fence()
            })
            .unwrap();
        drv.wait(&f, FENCE_TIMEOUT).unwrap();
        assert_eq!((count(&mem), dst.read_u32(4092)), (2, Ok(0xF111_F111)), "{chip:?}");
        // A second submission's two waits take both counts; a third wait stalls its fence.
        let g = drv
            .submit(2 * SEMAPHORE_WAIT_DWORDS + 3 + FENCE_DWORDS, |s| {
                s.semaphore_wait(&sem)?;
                s.semaphore_wait(&sem)?;
                s.set_scratch(4, 2)?;
                s.fence()
            })
            .unwrap();
        drv.wait(&g, FENCE_TIMEOUT).expect("two signals, two waits");
        assert_eq!((drv.scratch(4), count(&mem)), (Ok(2), 0));
        let h = drv
            .submit(SEMAPHORE_WAIT_DWORDS + 3 + FENCE_DWORDS, |s| {
                s.semaphore_wait(&sem)?;
                s.set_scratch(4, 3)?;
                s.fence()
            })
            .unwrap();
        assert!(timed_out(drv.wait(&h, STALLED)), "{chip:?}: a third wait had no count");
        assert_eq!(drv.scratch(4), Ok(2));
        // A signal queued behind the wait on the same ring cannot release it: the CP parses
        // the ring in order and is stopped at the wait. Only the host can.
        let i = drv
            .submit(SEMAPHORE_SIGNAL_DWORDS + FENCE_DWORDS, |s| {
                s.semaphore_signal(&sem)?;
                s.fence()
            })
            .unwrap();
        assert!(timed_out(drv.wait(&i, STALLED)));
        assert!(!drv.signalled(&h) && count(&mem) == 0);
        mem.write_u32(0, 1).unwrap();
        drv.wait(&i, FENCE_TIMEOUT).expect("the host released the wait");
        assert_eq!(drv.scratch(4), Ok(3));
        assert_eq!(count(&mem), 1, "{chip:?}: the queued signal ran after the wait");
        assert_eq!(gpu.model().stats().semaphore_signals, 3);
        assert_clean(&gpu);
    }
}

#[test]
fn a_semaphore_needs_a_quadword_aligned_40_bit_address() {
    for (chip, _) in CHIPS {
        for bad in [BusAddress(0x1_0004), BusAddress(0x1_0001), BusAddress(1 << 40)] {
            assert_eq!(
                Semaphore::new(chip, bad),
                Err(PacketError::BadAddress { address: bad.0, align: 8 })
            );
        }
        assert!(Semaphore::new(chip, BusAddress(0xFF_FFFF_FFF8)).is_ok());
    }
}

#[test]
fn pred_exec_runs_its_packets_only_on_the_selected_device() {
    for (chip, asic) in CHIPS {
        let gpu = gpu(asic);
        let mut drv = init(&gpu, chip, &Images::of(chip), Default::default());
        let this = pm4::device_select(pm4::DEVICE_ID).unwrap();
        let other = pm4::device_select(2).unwrap();
        let skipped_before = gpu.model().stats().packets_skipped;
        let f = drv
            .submit(3 * (PRED_EXEC_DWORDS + 3) + 9 + FENCE_DWORDS, |s| {
                for n in [5, 6, 7] {
                    s.set_scratch(n, 0)?;
                }
                // Another device's packets: skipped here.
                s.pred_exec(other, |p| pm4::set_regs(p, scratch(5), &[0x0555], false))?;
                // This device's: run.
                s.pred_exec(this, |p| pm4::set_regs(p, scratch(6), &[0x0666], false))?;
                // Both devices (a mask of two IDs): run.
                s.pred_exec(this | other, |p| pm4::set_regs(p, scratch(7), &[0x0777], false))?;
                s.fence()
            })
            .unwrap();
        drv.wait(&f, FENCE_TIMEOUT).unwrap();
        let got = [5, 6, 7].map(|n| drv.scratch(n).unwrap());
        assert_eq!(got, [0, 0x0666, 0x0777], "{chip:?}");
        assert_eq!(gpu.model().stats().packets_skipped - skipped_before, 1);
        assert_clean(&gpu);
    }
}

#[test]
fn pred_exec_counts_several_packets_and_refuses_what_does_not_fit() {
    for (chip, asic) in CHIPS {
        let gpu = gpu(asic);
        let mut drv = init(&gpu, chip, &Images::of(chip), Default::default());
        let other = pm4::device_select(4).unwrap();
        // Three packets (3 + 3 + 4 dwords) skipped as one EXEC_COUNT of 10: the packet after
        // them is parsed from the right dword and runs.
        let f = drv
            .submit(PRED_EXEC_DWORDS + 10 + 3 + FENCE_DWORDS, |s| {
                s.pred_exec(other, |p| {
                    pm4::set_regs(p, scratch(1), &[0x11], false)?;
                    pm4::set_regs(p, scratch(2), &[0x22], false)?;
                    pm4::set_regs(p, scratch(3), &[0x33, 0x44], false)
                })?;
                s.set_scratch(5, 0x55)?;
                s.fence()
            })
            .unwrap();
        drv.wait(&f, FENCE_TIMEOUT).unwrap();
        let got = [1, 2, 3, 4, 5].map(|n| drv.scratch(n).unwrap());
        assert_eq!(got, [0, 0, 0, 0, 0x55], "{chip:?}");
        // Nothing to predicate: no packet at all (EXEC_COUNT 0 would be an invalid packet).
        let packets = gpu.model().stats().packets[3];
        let f = drv.submit(FENCE_DWORDS, |s| {
            s.pred_exec(other, |_| Ok(()))?;
            s.fence()
        });
        drv.wait(&f.unwrap(), FENCE_TIMEOUT).unwrap();
        assert_eq!(gpu.model().stats().packets[3] - packets, 2, "only the fence's two packets");
        // More than the staging holds: NoSpace, nothing of it on the ring.
        let too_big = [0u32; PRED_EXEC_MAX_DWORDS];
        let r = drv.submit(PRED_EXEC_MAX_DWORDS + 8, |s| {
            s.pred_exec(other, |p| pm4::set_regs(p, scratch(0), &too_big, false))
        });
        assert!(
            matches!(
                r,
                Err(baregpu_radeon_evergreen::SubmitError::Packet(PacketError::NoSpace(_)))
            ),
            "{r:?}"
        );
        let f = drv.fence().unwrap();
        drv.wait(&f, FENCE_TIMEOUT).unwrap();
        assert_clean(&gpu);
    }
}
