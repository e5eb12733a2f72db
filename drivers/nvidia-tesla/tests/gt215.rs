//! End to end against the emulated GT215 (`gt215-model`, in process, written from the
//! documents independently of this driver): probe, PFIFO bring-up, fences on two IB-mode
//! channels with the main pushbuffer wrapping, a cross-channel semaphore wait, a pusher fault
//! and the queue's reset, the falcon mailbox on PDAEMON and PCOPY, and the copy engine (this
//! project's falcon firmware) copying a buffer through PFIFO; and the model's faults (a stalled
//! pusher, a slow one, a device gone, a falcon that never halts, a DMA fault), each a typed
//! error and, where the driver can, recovered. Each runs under more than one engine pacing:
//! the results must not depend on when the engines run.

use std::cell::RefCell;
use std::time::Duration;

use baregpu_falcon_asm::assemble;
use baregpu_falcon_asm::programs;
use baregpu_nvidia_tesla::firmware::falcon::FalconImage;
use baregpu_nvidia_tesla::gpu::{FenceError, FenceFailure, FenceStatus, GpuQueue};
use baregpu_nvidia_tesla::hal::time::poll_until;
use baregpu_nvidia_tesla::regs::Chipset;
use baregpu_nvidia_tesla::regs::falcon::{Pcopy0, Pdaemon};
use baregpu_nvidia_tesla::regs::pfifo::cache1_dma_state_g80_until_gf100::ErrorCode as PusherErrorKind;
use baregpu_nvidia_tesla::{
    FalconError, FencePoint, FifoError, InitError, Queue, QueueError, SubmitError, Tesla,
    TeslaConfig, pci,
};
use gpu_device_model::{InProcess, ModelClock, Pacing};
use gt215_model::{Faults, Gt215};

mod model;
use model::*;

/// The pacings a result must not depend on.
const PACINGS: [Pacing; 2] = [Pacing::RunToIdle, Pacing::Seeded(7)];

#[test]
fn the_emulated_gt240_probes_as_a_gt215_and_comes_up() {
    let m = model(Pacing::RunToIdle, Faults::default());
    let probed = pci::probe(m, m.pci_address()).unwrap();
    assert_eq!(probed.gpu.chip, Chipset::GT215);
    assert!(probed.vram_aperture.is_some() && probed.ramin_aperture.is_some());
    let gpu = bring_up(m);
    assert_eq!(gpu.identity().chipset, Chipset::GT215);
    gpu.check_alive().unwrap();
}

#[test]
fn a_device_that_reads_all_ones_is_refused_at_bring_up() {
    let m = model(Pacing::RunToIdle, Faults { registers_all_ones: true, ..Faults::default() });
    let e = Tesla::init(m, ModelClock::new(m), TeslaConfig::new(1 << 20, 1 << 20)).err();
    assert!(matches!(e, Some(InitError::DeviceGone(_))), "{e:?}");
}

#[test]
fn fences_signal_in_order_across_a_wrapping_pushbuffer_and_another_channel_waits_for_them() {
    for pacing in PACINGS {
        let m = model(pacing, Faults::default());
        let gpu: &'static RefCell<Gpu> = Box::leak(Box::new(RefCell::new(bring_up(m))));
        let mut a = queue(m, gpu, 1);
        let mut b = queue(m, gpu, 2);
        let mut fences = Vec::new();
        let before = m.model().pfifo().stats();
        for _ in 0..300 {
            fences.push(a.submit_fence().unwrap());
        }
        let last = *fences.last().unwrap();
        a.wait(&last, Duration::from_secs(10)).unwrap();
        // Counted by the model: one IB_PUT write per batch; one IB entry per batch, two for a
        // batch that wraps the 4 KiB main pushbuffer (its words split at the end).
        let after = m.model().pfifo().stats();
        assert_eq!(after.ib_put_writes - before.ib_put_writes, 300, "{pacing:?}");
        let entries = after.ib_entries - before.ib_entries;
        assert!((300..=310).contains(&entries), "{entries} IB entries ({pacing:?})");
        assert!(fences.iter().all(|f| a.fence_status(f) == FenceStatus::Signalled));
        assert_eq!(a.ref_count(), last.seq() as u32, "REF_CNT follows the fences ({pacing:?})");
        assert_eq!(a.stats().doorbells, 301, "one IB_PUT per batch (and the setup batch)");

        // B waits (acquire >=) for A's next fence, which A has not reached: B stalls.
        let next = FencePoint { value: last.seq() as u32 + 1, ..a.fence_point(&last) };
        let fb = b.submit(5 + 9, |s| {
            s.wait_for(next)?;
            s.fence()
        });
        let fb = fb.unwrap();
        let stalled = b.wait(&fb, Duration::from_millis(5)).unwrap_err();
        assert!(matches!(stalled, FenceError::Timeout { .. }), "{stalled:?}");
        let fa = a.submit_fence().unwrap();
        a.wait(&fa, Duration::from_secs(10)).unwrap();
        b.wait(&fb, Duration::from_secs(10)).unwrap();
    }
}

#[test]
fn a_pusher_fault_is_a_typed_error_on_its_channel_and_the_queue_reset_recovers_it() {
    for pacing in PACINGS {
        let (m, gpu, mut q) = running_queue(pacing, 3);
        // Method 0x0004 is no puller method (§2.8.4's list): INVALID_MTHD (§2.8.3 errors).
        q.submit(2, |s| s.writer().methods(0, 0x0004, &[0])).unwrap();
        let lost = q.submit_fence().unwrap();
        let fault = first_fault(m, gpu);
        assert!(matches!(fault, FifoError::DmaPusher { channel: 3, .. }), "{fault:?} ({pacing:?})");
        assert_eq!(q.fault(), Some(fault));
        let report = q.reset().unwrap();
        assert_eq!(report.lost.map(|l| l.contains(lost.seq())), Some(true));
        assert_eq!(q.fault(), None);
        let after = q.submit_fence().unwrap();
        q.wait(&after, Duration::from_secs(10)).unwrap();
    }
}

#[test]
fn the_mailbox_echo_answers_on_pdaemon_and_pcopy() {
    for pacing in PACINGS {
        let m = model(pacing, Faults::default());
        let gpu = bring_up(m);
        let mut code = [0u8; 0x400];
        let image = programs::mailbox_echo();
        let len = falcon_image(&image, &mut code);
        let fw = FalconImage::new(&code[..len], 0, image.data(), image.entry).unwrap();

        let daemon = gpu.falcon::<Pdaemon>().unwrap();
        daemon.enable().unwrap();
        daemon.boot(&fw).unwrap();
        daemon.write_mailbox(41);
        daemon.wait_halted(Duration::from_secs(10)).unwrap();
        assert_eq!(daemon.read_mailbox().unwrap(), 42, "{pacing:?}");

        let copy = gpu.falcon::<Pcopy0>().unwrap();
        copy.enable().unwrap();
        copy.enable_interrupts().unwrap();
        let report = copy.boot(&fw).unwrap();
        assert_eq!(report.load_writes, 1 + 1 + 64, "CODE_INDEX, one CODE_VIRT, 64 words");
        copy.write_mailbox(99);
        copy.wait_halted(Duration::from_secs(10)).unwrap();
        assert_eq!(copy.read_mailbox().unwrap(), 100);
        assert!(copy.handle_interrupts().unwrap().exit);
    }
}

#[test]
fn the_copy_engine_firmware_copies_a_buffer_through_pfifo_and_releases_its_semaphore() {
    for pacing in PACINGS {
        let mut rig = CopyRig::new(pacing, 4096);
        let expected: Vec<u32> = (0..1024u32).map(|i| i.wrapping_mul(0x9e37_79b9)).collect();
        rig.src.write_slice(0, &expected).unwrap();
        rig.copy(4096);
        let mut copied = vec![0u32; 1024];
        rig.dst.read_slice(0, &mut copied).unwrap();
        assert_eq!(copied, expected, "{pacing:?}");
        assert_eq!(rig.sem.read_u32(0).unwrap(), 1, "the semaphore released ({pacing:?})");
        // Its work done, the firmware sleeps on the empty FIFO: the model is idle.
        let model = rig.m.model();
        let pcopy = model.falcon(gt215_model::falcon::Engine::Pcopy);
        assert_eq!(pcopy.state(), gt215_model::falcon::State::Sleeping, "{pacing:?}");
        assert!(!pcopy.busy(), "{pacing:?}");
    }
}

type ModelQueue = Queue<'static, &'static InProcess<Gt215>, ModelClock<'static, Gt215>>;

/// The model, the driver on it and a queue on `channel` that has completed one fence.
fn running_queue(
    pacing: Pacing,
    channel: u8,
) -> (&'static InProcess<Gt215>, &'static RefCell<Gpu>, ModelQueue) {
    let m = model(pacing, Faults::default());
    let gpu: &'static RefCell<Gpu> = Box::leak(Box::new(RefCell::new(bring_up(m))));
    let mut q = queue(m, gpu, channel);
    let ok = q.submit_fence().unwrap();
    q.wait(&ok, Duration::from_secs(10)).unwrap();
    (m, gpu, q)
}

/// The channel's first fault, from the driver's interrupt handling (bounded).
fn first_fault(m: &'static InProcess<Gt215>, gpu: &RefCell<Gpu>) -> FifoError {
    poll_until(&ModelClock::new(m), Duration::from_secs(10), || {
        gpu.borrow_mut().handle_interrupts().unwrap().faults().next()
    })
    .unwrap()
}

#[test]
fn a_stalled_pusher_is_a_bounded_timeout_and_the_queue_reset_recovers_the_channel() {
    for pacing in PACINGS {
        let (m, _, mut q) = running_queue(pacing, 1);
        m.model_mut().set_faults(Faults { cp_stall: true, ..Faults::default() });
        let stuck = q.submit_fence().unwrap();
        let e = q.wait(&stuck, Duration::from_millis(20)).unwrap_err();
        assert!(matches!(e, FenceError::Timeout { progressed: false, .. }), "{e:?} ({pacing:?})");
        // A reset while the pusher still stands fails its ring test (bounded, typed); once the
        // pusher moves again a reset recovers the channel, the stuck work lost.
        let e = q.reset().unwrap_err();
        assert!(matches!(e, QueueError::Test(_)), "{e:?} ({pacing:?})");
        m.model_mut().set_faults(Faults::default());
        q.reset().unwrap();
        let status = q.fence_status(&stuck);
        assert_eq!(status, FenceStatus::Failed(FenceFailure::Lost), "{pacing:?}");
        let after = q.submit_fence().unwrap();
        q.wait(&after, Duration::from_secs(10)).unwrap();
    }
}

#[test]
fn a_slow_pusher_completes_every_fence_in_order() {
    for pacing in PACINGS {
        let m = model(pacing, Faults { slow: Some(50), ..Faults::default() });
        let gpu: &'static RefCell<Gpu> = Box::leak(Box::new(RefCell::new(bring_up(m))));
        let mut q = queue(m, gpu, 2);
        let fences: Vec<_> = (0..20).map(|_| q.submit_fence().unwrap()).collect();
        let last = fences.last().unwrap();
        q.wait(last, Duration::from_secs(30)).unwrap();
        assert!(fences.iter().all(|f| q.fence_status(f) == FenceStatus::Signalled), "{pacing:?}");
        assert_eq!(q.ref_count(), last.seq() as u32, "{pacing:?}");
    }
}

#[test]
fn a_device_gone_mid_run_is_a_typed_device_gone_everywhere() {
    for pacing in PACINGS {
        let (m, gpu, mut q) = running_queue(pacing, 1);
        m.model_mut().set_faults(Faults { registers_all_ones: true, ..Faults::default() });
        assert!(gpu.borrow().check_alive().is_err(), "{pacing:?}");
        let e = q.submit_fence().err();
        assert!(matches!(e, Some(SubmitError::DeviceGone(_))), "{e:?} ({pacing:?})");
        let daemon = gpu.borrow();
        let e = daemon.falcon::<Pdaemon>().and_then(|f| f.enable()).err();
        assert!(matches!(e, Some(FalconError::DeviceGone(_))), "{e:?} ({pacing:?})");
    }
}

#[test]
fn a_falcon_that_never_halts_is_a_typed_timeout_and_a_pmc_reset_recovers_it() {
    for pacing in PACINGS {
        let m = model(pacing, Faults::default());
        let gpu = bring_up(m);
        let mut code = [0u8; 0x100];
        let len = assemble("spin:\n    bra spin\n", &mut code).unwrap();
        assert!(len <= code.len());
        let fw = FalconImage::new(&code, 0, &[], 0).unwrap();
        let copy = gpu.falcon::<Pcopy0>().unwrap();
        copy.enable().unwrap();
        copy.boot(&fw).unwrap();
        // A short bound: under run-to-idle every register access runs the spinning falcon to
        // the model's yield point (`YIELD_EVERY` ticks of `INSNS_PER_TICK` instructions).
        let e = copy.wait_halted(Duration::from_micros(200)).unwrap_err();
        assert!(matches!(e, FalconError::NotHalted(_)), "{e:?} ({pacing:?})");
        assert!(!copy.halted().unwrap());
        let e = copy.load(&fw).unwrap_err();
        assert!(matches!(e, FalconError::Running), "{e:?} ({pacing:?})");

        // Recovery: reset through PMC.ENABLE, then the mailbox echo uploaded and answering.
        copy.reset().unwrap();
        assert!(copy.halted().unwrap(), "stopped after the reset ({pacing:?})");
        let echo = programs::mailbox_echo();
        let mut code = [0u8; 0x400];
        let len = falcon_image(&echo, &mut code);
        let fw = FalconImage::new(&code[..len], 0, echo.data(), echo.entry).unwrap();
        copy.boot(&fw).unwrap();
        copy.write_mailbox(7);
        copy.wait_halted(Duration::from_secs(10)).unwrap();
        assert_eq!(copy.read_mailbox().unwrap(), 8, "{pacing:?}");
    }
}

#[test]
fn a_falcon_without_a_pmc_enable_bit_has_no_reset() {
    let gpu = bring_up(model(PACINGS[0], Faults::default()));
    let daemon = gpu.falcon::<Pdaemon>().unwrap();
    assert_eq!(daemon.reset(), Err(FalconError::NoResetBit { engine: "PDAEMON" }));
}

#[test]
fn a_dma_fault_on_a_pushbuffer_fetch_is_a_typed_mem_fault_and_the_reset_recovers_it() {
    for pacing in PACINGS {
        let (m, gpu, mut q) = running_queue(pacing, 4);
        m.model_mut().set_faults(Faults { dma_fault_next_fetch: true, ..Faults::default() });
        let lost = q.submit_fence().unwrap();
        let fault = first_fault(m, gpu);
        assert!(
            matches!(fault, FifoError::DmaPusher { channel: 4, error: PusherErrorKind::MemFault }),
            "{fault:?} ({pacing:?})"
        );
        assert_eq!(q.fault(), Some(fault));
        let report = q.reset().unwrap();
        assert_eq!(report.lost.map(|l| l.contains(lost.seq())), Some(true), "{pacing:?}");
        let after = q.submit_fence().unwrap();
        q.wait(&after, Duration::from_secs(10)).unwrap();
    }
}
