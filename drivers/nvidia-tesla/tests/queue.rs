//! Submission and fences on IB-mode channels against the scripted register file: what reaches
//! the pushbuffer and the IB ring, one `IB_PUT` per batch, all-or-nothing submission, fences
//! signalled from the semaphore memory, cross-channel waits, and the reset protocol.

mod common;

use std::cell::RefCell;
use std::time::Duration;

use baregpu_nvidia_tesla::gpu::{FenceError, FenceFailure, FenceStatus, GpuQueue};
use baregpu_nvidia_tesla::hal::dma::DmaRegion;
use baregpu_nvidia_tesla::ring::nvidia::PushbufferError;
use baregpu_nvidia_tesla::{Queue, QueueConfig, SubmitError, Tesla};
use common::*;

const MAIN_BUS: u64 = 0x9000_0000;
const IB_BUS: u64 = 0x8000_0000;

struct Rig {
    fake: &'static Fake,
    gpu: &'static RefCell<Tesla<&'static Fake, StepClock>>,
}

fn rig() -> Rig {
    let fake: &'static Fake = Box::leak(Box::new(Fake::gt215()));
    let gpu = Tesla::init(fake, StepClock::default(), config()).unwrap();
    Rig { fake, gpu: Box::leak(Box::new(RefCell::new(gpu))) }
}

struct Memory {
    main: &'static DmaRegion,
    ib: &'static DmaRegion,
    fences: &'static DmaRegion,
}

fn memory(n: u64) -> Memory {
    Memory {
        main: region(4096, MAIN_BUS + n * 0x10_0000),
        ib: region(512 * 8, IB_BUS + n * 0x10_0000),
        fences: region(32, 0xa000_0000 + n * 0x1000),
    }
}

fn queue(r: &Rig, channel: u8, m: &Memory) -> Queue<'static, &'static Fake, StepClock> {
    Queue::new(r.gpu, id(channel), m.main, m.ib, m.fences, QueueConfig::default()).unwrap()
}

fn ib_puts(fake: &Fake, channel: u8) -> Vec<u32> {
    let at = user(channel) + USER_IB_PUT;
    fake.writes.borrow().iter().filter(|(o, _)| *o == at).map(|(_, v)| *v).collect()
}

#[test]
fn a_new_queue_enables_its_channel_and_binds_the_semaphore_object_in_one_batch() {
    let r = rig();
    let m = memory(0);
    let q = queue(&r, 4, &m);
    assert_eq!(r.gpu.borrow().channel_state(id(4)), Some(true));
    // DMA_SEMAPHORE (0x60) on subchannel 0, one word: the semaphore object's handle.
    assert_eq!(words(m.main, 2), [0x0004_0060, baregpu_nvidia_tesla::SEMAPHORE_DMA_HANDLE]);
    // One IB entry for those 2 words at the main pushbuffer's address, one IB_PUT write.
    let e = words(m.ib, 2);
    assert_eq!(e[0], MAIN_BUS as u32);
    assert_eq!(e[1] >> 10, 2, "size in words at bit 10");
    assert_eq!(ib_puts(r.fake, 4), [1]);
    assert_eq!(q.stats().doorbells, 1);
}

#[test]
fn a_fence_is_ref_cnt_a_semaphore_release_and_notify_in_one_batch() {
    let r = rig();
    let m = memory(0);
    let mut q = queue(&r, 4, &m);
    let f = q.submit_fence().unwrap();
    let w = words(m.main, 11);
    assert_eq!(&w[2..4], [0x0004_0050, 1], "REF_CNT 1");
    // SEMAPHORE_ADDRESS_HIGH..TRIGGER: 4 increasing methods from 0x10.
    assert_eq!(w[4], 0x0010_0010);
    assert_eq!(&w[5..9], [0, 0xa000_0000, 1, 2], "address, sequence 1, WRITE_LONG");
    assert_eq!(&w[9..11], [0x0004_0020, 0], "NOTIFY_INTR");
    assert_eq!(ib_puts(r.fake, 4), [1, 2], "one IB_PUT per batch");
    assert_eq!(q.fence_status(&f), FenceStatus::Pending);
    m.fences.write_u32(0, 1).unwrap(); // the semaphore release landed
    assert_eq!(q.fence_status(&f), FenceStatus::Signalled);
    q.wait(&f, Duration::from_millis(1)).unwrap();
}

#[test]
fn a_fence_that_never_signals_times_out_bounded() {
    let r = rig();
    let m = memory(0);
    let mut q = queue(&r, 4, &m);
    let f = q.submit_fence().unwrap();
    let e = q.wait(&f, Duration::from_millis(2)).unwrap_err();
    assert!(matches!(e, FenceError::Timeout { seq: 1, progressed: false, .. }), "{e:?}");
}

#[test]
fn a_failing_or_overrunning_closure_reaches_nothing() {
    let r = rig();
    let m = memory(0);
    let mut q = queue(&r, 4, &m);
    let e = q
        .submit(16, |s| {
            s.writer().methods(1, 0x100, &[1, 2, 3])?;
            Err::<(), _>(PushbufferError::BadSubchannel { subchannel: 9 })
        })
        .unwrap_err();
    assert!(matches!(e, SubmitError::Build(_)));
    let e = q.submit(3, |s| s.writer().methods(1, 0x100, &[1, 2, 3])).unwrap_err();
    assert!(matches!(e, SubmitError::Overrun(_)), "{e:?}");
    assert_eq!(ib_puts(r.fake, 4), [1], "no IB_PUT for either");
    // The next batch starts where the failed ones began.
    q.submit(4, |s| s.writer().methods(1, 0x104, &[7, 8])).unwrap();
    assert_eq!(&words(m.main, 5)[2..5], [0x0008_2104, 7, 8]);
    // The IB ring holds the setup batch and this one (3 words from word 2) only: the
    // discarded words were never part of an entry.
    let e = words(m.ib, 6);
    assert_eq!((e[2], e[3] >> 10), (MAIN_BUS as u32 + 8, 3));
    assert_eq!(&e[4..], [0, 0]);
    assert_eq!(q.stats().discarded, 2);
    assert_eq!(q.timeline().last_emitted(), 0);
}

#[test]
fn a_channel_waits_for_another_channels_fence_with_acquire_geq() {
    let r = rig();
    let (ma, mb) = (memory(0), memory(1));
    let mut a = queue(&r, 1, &ma);
    let mut b = queue(&r, 2, &mb);
    let fa = a.submit_fence().unwrap();
    let point = a.fence_point(&fa);
    b.submit(5, |s| s.wait_for(point)).unwrap();
    let w = words(mb.main, 7);
    assert_eq!(w[2], 0x0010_0010);
    assert_eq!(&w[3..7], [0, 0xa000_0000, 1, 4], "A's semaphore, sequence 1, ACQUIRE_GEQUAL");
    b.submit(5, |s| s.wait_equal(point)).unwrap();
    assert_eq!(words(mb.main, 12)[11], 1, "ACQUIRE_EQUAL");
}

#[test]
fn reset_recovers_the_channel_tests_the_ring_then_fails_the_lost_fences() {
    let r = rig();
    let m = memory(0);
    let mut q = queue(&r, 4, &m);
    let f1 = q.submit_fence().unwrap();
    let f2 = q.submit_fence().unwrap();
    m.fences.write_u32(0, 1).unwrap();
    // The GPU's side of the ring test: a release through the channel lands at +16.
    let fences = m.fences;
    *r.fake.on_write.borrow_mut() = Some(Box::new(move |offset, _| {
        if offset == user(4) + USER_IB_PUT {
            let _ = fences.write_u32(16, 0x600d_f00d);
        }
    }));
    let report = q.reset().unwrap();
    assert_eq!(report.completed, 1);
    assert_eq!(report.lost.map(|l| (l.first, l.last)), Some((2, 2)));
    assert_eq!(q.fence_status(&f1), FenceStatus::Signalled);
    assert_eq!(q.fence_status(&f2), FenceStatus::Failed(FenceFailure::Lost));
    // The rings start again at 0: the rebinding batch is entry 0 of the IB ring again.
    assert_eq!(words(m.main, 2), [0x0004_0060, baregpu_nvidia_tesla::SEMAPHORE_DMA_HANDLE]);
    assert_eq!(*ib_puts(r.fake, 4).last().unwrap(), 2, "rebind + ring test");
}

#[test]
fn a_ring_test_that_never_lands_leaves_the_fences_pending() {
    let r = rig();
    let m = memory(0);
    let mut q = queue(&r, 4, &m);
    let f = q.submit_fence().unwrap();
    assert!(q.reset().is_err());
    assert_eq!(q.fence_status(&f), FenceStatus::Pending);
}

#[test]
fn a_gone_device_fails_submission_and_waits() {
    let r = rig();
    let m = memory(0);
    let mut q = queue(&r, 4, &m);
    let f = q.submit_fence().unwrap();
    r.fake.gone.set(true);
    assert!(matches!(q.submit_fence(), Err(SubmitError::DeviceGone(_))));
    let e = q.wait(&f, Duration::from_millis(5)).unwrap_err();
    assert!(matches!(e, FenceError::DeviceGone(_)), "{e:?}");
    assert_eq!(q.fence_status(&f), FenceStatus::Failed(FenceFailure::DeviceGone));
}

#[test]
fn dropping_a_queue_destroys_its_channel_only() {
    let r = rig();
    let (ma, mb) = (memory(0), memory(1));
    let a = queue(&r, 1, &ma);
    let _b = queue(&r, 2, &mb);
    drop(a);
    assert_eq!(r.gpu.borrow().channel_state(id(1)), None);
    assert_eq!(r.gpu.borrow().channel_state(id(2)), Some(true));
    let w = r.fake.register_writes();
    assert_eq!(*w.last().unwrap(), (CHAN_TABLE + 4, 0), "channel 1's table entry cleared");
}

#[test]
fn dropping_the_gpu_stops_every_channel() {
    let fake = Fake::gt215();
    let mut gpu = Tesla::init(&fake, StepClock::default(), config()).unwrap();
    gpu.create_channel(id(5), IB).unwrap();
    gpu.enable_channel(id(5)).unwrap();
    drop(gpu);
    let w = fake.register_writes();
    let n = w.len();
    assert_eq!(w[n - 2], (PLAYLIST_LEN, 0), "empty playlist first");
    assert_eq!(w[n - 1], (CHAN_TABLE + 4 * 5, 0), "then the table entry");
}
