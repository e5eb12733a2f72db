//! Submission against the scripted register file: the ORDER and VALUES of the register writes
//! the document requires (caches cleared before a job, CTnCS then CTnCA then CTnEA, thread 0
//! before thread 1, SRQUA/SRQUL before SRQPC, OUTOMEM refilled BPOA then BPOS), completion
//! from the counters, and every typed error (timeout, queue full, pool exhausted, busy, device
//! gone).
//!
//! The end-to-end tests (jobs rendered and programs run by an emulated V3D) wait for the
//! device model (`qemu-tests/models/v3d`).

mod common;

use core::time::Duration;

use baregpu_hal::dma::BusAddress;
use baregpu_videocore_v3d::gpu::{FenceFailure, FenceStatus, GpuQueue};
use baregpu_videocore_v3d::regs::v3d::*;
use baregpu_videocore_v3d::{
    BuildError, DeviceGone, FenceError, InitError, OverflowPool, SubmitError, UserProgram, V3d,
    V3dConfig, WaitError,
};
use common::*;

const MS: Duration = Duration::from_millis(1);

fn up<'p>(fake: &'p FakeV3d, pool: Option<OverflowPool<'p>>) -> V3d<'p, &'p FakeV3d, StepClock> {
    let v3d = V3d::init(fake, StepClock::default(), pool, V3dConfig::default()).unwrap();
    fake.clear_log();
    v3d
}

/// Bump an 8-bit counter register as the hardware does.
fn bump(regs: &mut std::collections::HashMap<usize, u32>, offset: usize, by: u32) {
    let v = regs.get(&offset).copied().unwrap_or(0);
    regs.insert(offset, (v & !0xff) | ((v + by) & 0xff));
}

/// A V3D that finishes a job as soon as the rendering thread is started.
fn instant_frames(fake: &FakeV3d) {
    fake.on_write(|regs, o, _| {
        if o == off::<V3D_CT1EA>() {
            bump(regs, off::<V3D_BFC>(), 1);
            bump(regs, off::<V3D_RFC>(), 1);
        }
    });
}

#[test]
fn a_render_job_clears_the_caches_then_starts_thread_0_then_thread_1_ca_before_ea() {
    let fake = FakeV3d::default();
    let mut v3d = up(&fake, None);
    let bufs = Buffers::new();
    let tris = one_triangle();
    let fence = v3d.render(&triangle_job(&tris), &bufs.memory()).unwrap();
    let built_end_bin = BIN_BUS + baregpu_videocore_v3d::job::BINNING_LIST_BYTES as u64;
    let render_len = baregpu_videocore_v3d::job::rendering_list_bytes(6) as u64;
    let run = V3D_CT0CS::CTRUN.set(0, 1);
    assert_eq!(
        fake.log(),
        [
            (off::<V3D_L2CACTL>(), V3D_L2CACTL::L2CCLR.set(0, 1)),
            (off::<V3D_SLCACTL>(), 0x0707_0707),
            (off::<V3D_BPOA>(), 0),
            (off::<V3D_BPOS>(), 0),
            (off::<V3D_CT0CS>(), run),
            (off::<V3D_CT0CA>(), BIN_BUS as u32),
            (off::<V3D_CT0EA>(), built_end_bin as u32),
            (off::<V3D_CT1CS>(), run),
            (off::<V3D_CT1CA>(), RENDER_BUS as u32),
            (off::<V3D_CT1EA>(), (RENDER_BUS + render_len) as u32),
        ]
    );
    // Pending until the frame counter moves; then signalled.
    assert_eq!(v3d.fence_status(&fence), FenceStatus::Pending);
    fake.set(off::<V3D_RFC>(), 1);
    assert_eq!(v3d.fence_status(&fence), FenceStatus::Signalled);
    assert_eq!(v3d.stats().doorbells, 2);
}

#[test]
fn a_frame_that_never_completes_times_out_and_a_second_job_waits_then_fails_busy() {
    let fake = FakeV3d::default();
    let mut v3d = up(&fake, None);
    let bufs = Buffers::new();
    let tris = one_triangle();
    let fence = v3d.render(&triangle_job(&tris), &bufs.memory()).unwrap();
    match v3d.wait(&fence, MS) {
        Err(WaitError::Fence(FenceError::Timeout { seq: 1, progressed: false, .. })) => {}
        other => panic!("{other:?}"),
    }
    fake.clear_log();
    let err = v3d.render(&triangle_job(&tris), &bufs.memory()).unwrap_err();
    assert!(matches!(err, SubmitError::Busy(_)), "{err:?}");
    let starts = [off::<V3D_CT0CA>(), off::<V3D_CT0EA>(), off::<V3D_CT1CA>(), off::<V3D_CT1EA>()];
    assert!(fake.log().iter().all(|(o, _)| !starts.contains(o)), "nothing started");
    assert_eq!(v3d.timeline().last_emitted(), 1, "the refused job's fence number is unused");
    // Once the first frame is done, the next job starts and gets fence 2.
    fake.set(off::<V3D_RFC>(), 1);
    let next = v3d.render(&triangle_job(&tris), &bufs.memory()).unwrap();
    assert_eq!(next.seq(), 2);
}

#[test]
fn completion_counts_extend_past_the_8_bit_counter() {
    let fake = FakeV3d::default();
    instant_frames(&fake);
    fake.set(off::<V3D_RFC>(), 250);
    let mut v3d = up(&fake, None);
    // Bring-up clears the counter (writing 1, Table 57): model that.
    fake.set(off::<V3D_RFC>(), 0);
    let bufs = Buffers::new();
    let tris = one_triangle();
    for n in 1..=300u64 {
        let fence = v3d.render(&triangle_job(&tris), &bufs.memory()).unwrap();
        v3d.wait(&fence, MS).unwrap();
        assert_eq!(v3d.frames_rendered(), n);
    }
}

#[test]
fn out_of_memory_is_refilled_bpoa_then_bpos_and_an_exhausted_pool_is_a_typed_error() {
    let fake = FakeV3d::default();
    // The binner runs out of memory twice per job (PCS.BMOOM, cleared by a BPOS write), then
    // finishes once it got two blocks.
    let bmoom = V3D_PCS::BMOOM.set(0, 1);
    let given = std::rc::Rc::new(core::cell::Cell::new(0));
    let g = given.clone();
    fake.on_write(move |regs, o, v| {
        if o == off::<V3D_CT1EA>() {
            g.set(0);
            regs.insert(off::<V3D_PCS>(), bmoom);
        }
        if o == off::<V3D_BPOS>() && v != 0 {
            g.set(g.get() + 1);
            if g.get() == 2 {
                regs.insert(off::<V3D_PCS>(), 0);
                bump(regs, off::<V3D_RFC>(), 1);
            }
        }
    });
    let pool_mem = region(3 * 4096, 0x0800_0000);
    let pool = OverflowPool::new(&pool_mem, 4096).unwrap();
    let mut v3d = up(&fake, Some(pool));
    let bufs = Buffers::new();
    let tris = one_triangle();
    let fence = v3d.render(&triangle_job(&tris), &bufs.memory()).unwrap();
    fake.clear_log();
    v3d.wait(&fence, MS).unwrap();
    let refills: Vec<(usize, u32)> = fake
        .log()
        .into_iter()
        .filter(|(o, _)| [off::<V3D_BPOA>(), off::<V3D_BPOS>(), off::<V3D_INTCTL>()].contains(o))
        .collect();
    let ack = V3D_INTCTL::INT_OUTOMEM.set(0, 1);
    assert_eq!(
        refills,
        [
            (off::<V3D_BPOA>(), 0x0800_0000),
            (off::<V3D_BPOS>(), 4096),
            (off::<V3D_INTCTL>(), ack),
            (off::<V3D_BPOA>(), 0x0800_1000),
            (off::<V3D_BPOS>(), 4096),
            (off::<V3D_INTCTL>(), ack),
        ]
    );

    // The next job starts with the pool whole again; a third request finds it empty when
    // the pool holds only two blocks.
    let small_mem = region(2 * 4096, 0x0900_0000);
    let fake2 = FakeV3d::default();
    fake2.on_write(move |regs, o, _| {
        if o == off::<V3D_CT1EA>() || o == off::<V3D_BPOS>() {
            regs.insert(off::<V3D_PCS>(), bmoom); // never satisfied
        }
    });
    let mut v3d2 = V3d::init(
        &fake2,
        StepClock::default(),
        Some(OverflowPool::new(&small_mem, 4096).unwrap()),
        V3dConfig::default(),
    )
    .unwrap();
    let fence = v3d2.render(&triangle_job(&tris), &bufs.memory()).unwrap();
    assert_eq!(v3d2.wait(&fence, MS), Err(WaitError::OverflowPoolExhausted { blocks: 2 }));

    // Without a pool the first request is already unanswerable.
    let fake3 = FakeV3d::default();
    fake3.on_write(move |regs, o, _| {
        if o == off::<V3D_CT1EA>() {
            regs.insert(off::<V3D_PCS>(), bmoom);
        }
    });
    let mut v3d3 = up(&fake3, None);
    let fence = v3d3.render(&triangle_job(&tris), &bufs.memory()).unwrap();
    assert_eq!(v3d3.wait(&fence, MS), Err(WaitError::OverflowPoolExhausted { blocks: 0 }));
    assert!(fake3.writes_to(off::<V3D_BPOS>()).iter().all(|&v| v == 0));
}

#[test]
fn a_pool_crossing_a_256_mib_boundary_or_smaller_than_a_block_is_refused() {
    let crossing = region(8192, 0x1000_0000 - 4096);
    assert!(OverflowPool::new(&crossing, 4096).is_err());
    let small = region(1024, 0x0800_0000);
    assert!(OverflowPool::new(&small, 4096).is_err());
    assert!(OverflowPool::new(&small, 0).is_err());
}

fn program(n: u64) -> UserProgram {
    UserProgram {
        code: BusAddress(SHADER_BUS + n * 0x100),
        uniforms: BusAddress(UNIFORMS_BUS + n * 0x10),
        uniforms_len: 4,
    }
}

#[test]
fn user_programs_clear_the_caches_then_write_uniforms_length_code_and_complete_by_count() {
    let fake = FakeV3d::default();
    let mut v3d = up(&fake, None);
    let fence = v3d
        .submit(4, |s| {
            s.program(&program(0))?;
            s.program(&program(1))?;
            s.program(&program(2))?;
            s.fence()
        })
        .unwrap();
    // The caches do not snoop memory: cleared once before the programs read their code and
    // uniforms (Tables 71-72).
    let slices = v3d.identity().slice_mask();
    let mut expected = vec![
        (off::<V3D_L2CACTL>(), V3D_L2CACTL::RESET.with_l2cclr(true).raw()),
        (
            off::<V3D_SLCACTL>(),
            V3D_SLCACTL::RESET
                .with_iccs(slices)
                .with_uccs(slices)
                .with_t0ccs(slices)
                .with_t1ccs(slices)
                .raw(),
        ),
    ];
    for n in 0..3 {
        expected.push((off::<V3D_SRQUA>(), (UNIFORMS_BUS + n * 0x10) as u32));
        expected.push((off::<V3D_SRQUL>(), 4));
        expected.push((off::<V3D_SRQPC>(), (SHADER_BUS + n * 0x100) as u32));
    }
    assert_eq!(fake.log(), expected);
    // QPURQCC counts completions (Table 68, bits 23:16).
    fake.set(off::<V3D_SRQCS>(), V3D_SRQCS::QPURQCC.set(0, 2));
    assert_eq!(v3d.fence_status(&fence), FenceStatus::Pending);
    fake.set(off::<V3D_SRQCS>(), V3D_SRQCS::QPURQCC.set(0, 3));
    assert_eq!(v3d.wait(&fence, MS), Ok(()));
    assert_eq!(v3d.programs_completed(), 3);
}

#[test]
fn a_full_queue_is_back_pressure_then_queue_full_and_a_rejected_request_is_reported() {
    let fake = FakeV3d::default();
    let mut v3d = up(&fake, None);
    // 15 queued: one more fits, two do not.
    fake.set(off::<V3D_SRQCS>(), V3D_SRQCS::QPURQL.set(0, 15));
    let err = v3d
        .submit(2, |s| {
            s.program(&program(0))?;
            s.program(&program(1))
        })
        .unwrap_err();
    assert!(matches!(err, SubmitError::QueueFull(_)), "{err:?}");
    assert!(fake.writes_to(off::<V3D_SRQPC>()).is_empty(), "nothing queued");
    v3d.run_program(&program(0)).unwrap();
    assert_eq!(fake.writes_to(off::<V3D_SRQPC>()).len(), 1);

    // More than the queue holds in one submission.
    let err = v3d
        .submit(17, |s| {
            for n in 0..17 {
                s.program(&program(n))?;
            }
            Ok(())
        })
        .unwrap_err();
    assert_eq!(err, SubmitError::Build(BuildError::TooManyPrograms));

    // The queue refuses a request (QPURQERR): reported, and the error bit cleared.
    fake.set(off::<V3D_SRQCS>(), V3D_SRQCS::QPURQERR.set(0, 1));
    fake.clear_log();
    assert_eq!(v3d.run_program(&program(1)).unwrap_err(), SubmitError::QueueError);
    assert_eq!(
        fake.writes_to(off::<V3D_SRQCS>()),
        [V3D_SRQCS::QPURQERR.set(0, 1)],
        "error cleared by writing 1"
    );
}

#[test]
fn a_fence_after_a_job_and_programs_waits_for_both_counts() {
    let fake = FakeV3d::default();
    let mut v3d = up(&fake, None);
    let bufs = Buffers::new();
    let tris = one_triangle();
    let (first, both) = v3d
        .submit(4, |s| {
            s.render(&triangle_job(&tris), &bufs.memory())?;
            let first = s.fence()?;
            s.program(&program(0))?;
            Ok((first, s.fence()?))
        })
        .unwrap();
    fake.set(off::<V3D_SRQCS>(), V3D_SRQCS::QPURQCC.set(0, 1));
    assert_eq!(v3d.fence_status(&first), FenceStatus::Pending);
    assert_eq!(v3d.fence_status(&both), FenceStatus::Pending, "the frame is not done");
    fake.set(off::<V3D_RFC>(), 1);
    assert_eq!(v3d.fence_status(&first), FenceStatus::Signalled);
    assert_eq!(v3d.fence_status(&both), FenceStatus::Signalled);
}

#[test]
fn a_failing_or_overrunning_closure_reaches_the_device_with_nothing() {
    let fake = FakeV3d::default();
    let mut v3d = up(&fake, None);
    let bufs = Buffers::new();
    let tris = one_triangle();
    let err = v3d
        .submit(1, |s| {
            s.program(&program(0))?;
            s.fence()
        })
        .unwrap_err();
    assert!(matches!(err, SubmitError::Overrun(_)), "{err:?}");
    let err = v3d
        .submit(3, |s| {
            s.render(&triangle_job(&tris), &bufs.memory())?;
            s.render(&triangle_job(&tris), &bufs.memory())
        })
        .unwrap_err();
    assert_eq!(err, SubmitError::Build(BuildError::OneRenderJobPerSubmission));
    assert!(fake.log().is_empty(), "{:x?}", fake.log());
    assert_eq!(v3d.timeline().last_emitted(), 0);
    assert_eq!(v3d.stats().discarded, 2);
}

#[test]
fn interrupts_are_enabled_acknowledged_and_handled_with_the_refill_first() {
    let fake = FakeV3d::default();
    let pool_mem = region(4096, 0x0800_0000);
    let mut v3d = up(&fake, Some(OverflowPool::new(&pool_mem, 4096).unwrap()));
    v3d.enable_interrupts().unwrap();
    assert_eq!(
        fake.log(),
        [
            (off::<V3D_INTCTL>(), 0xf),
            (off::<V3D_DBQITC>(), 0xfff),
            (off::<V3D_INTENA>(), 0x7),
            (off::<V3D_DBQITE>(), 0xfff),
        ]
    );
    fake.clear_log();
    let frdone = V3D_INTCTL::INT_FRDONE.set(0, 1);
    fake.set(off::<V3D_INTCTL>(), frdone | V3D_INTCTL::INT_OUTOMEM.set(0, 1));
    fake.set(off::<V3D_PCS>(), V3D_PCS::BMOOM.set(0, 1));
    fake.set(off::<V3D_DBQITC>(), 0b101);
    let report = v3d.handle_interrupts().unwrap();
    assert!(report.frame_done && report.out_of_memory && !report.flush_done);
    assert_eq!(report.qpus, 0b101);
    let log = fake.log();
    let bpos = log.iter().position(|w| *w == (off::<V3D_BPOS>(), 4096)).unwrap();
    let oom_ack = log.iter().position(|w| *w == (off::<V3D_INTCTL>(), 0x4)).unwrap();
    let frame_ack = log.iter().position(|w| *w == (off::<V3D_INTCTL>(), frdone)).unwrap();
    assert!(bpos < oom_ack, "out-of-memory acknowledged after the refill: {log:x?}");
    assert!(frame_ack > 0);
    assert!(log.contains(&(off::<V3D_DBQITC>(), 0b101)));
}

#[test]
fn a_reset_fails_the_lost_fences_after_the_register_test_and_a_gone_device_fails_them_all() {
    let fake = FakeV3d::default();
    let mut v3d = up(&fake, None);
    let bufs = Buffers::new();
    let tris = one_triangle();
    let fence = v3d.render(&triangle_job(&tris), &bufs.memory()).unwrap();
    let report = GpuQueue::reset(&mut v3d).unwrap();
    assert_eq!(report.lost.map(|l| (l.first, l.last)), Some((1, 1)));
    assert_eq!(v3d.fence_status(&fence), FenceStatus::Failed(FenceFailure::Lost));
    assert!(fake.writes_to(off::<V3D_CT0CS>()).contains(&V3D_CT0CS::CTRSTA.set(0, 1)));
    // The engine takes the next job.
    let next = v3d.render(&triangle_job(&tris), &bufs.memory()).unwrap();
    fake.set(off::<V3D_RFC>(), 1);
    assert_eq!(v3d.wait(&next, MS), Ok(()));

    let pending = v3d.run_program(&program(0)).unwrap();
    fake.all_ones.set(true);
    assert_eq!(v3d.wait(&pending, MS), Err(WaitError::Fence(FenceError::DeviceGone(DeviceGone))));
    assert_eq!(v3d.fence_status(&pending), FenceStatus::Failed(FenceFailure::DeviceGone));
    assert_eq!(GpuQueue::reset(&mut v3d).unwrap_err(), InitError::DeviceGone(DeviceGone));
    assert!(matches!(
        v3d.run_program(&program(1)).unwrap_err(),
        SubmitError::DeviceGone(DeviceGone)
    ));
}

#[test]
fn the_user_vpm_reservation_waits_for_an_idle_v3d_and_is_bounded() {
    let fake = FakeV3d::default();
    let mut v3d = up(&fake, None);
    v3d.reserve_user_vpm(1000).unwrap();
    assert_eq!(fake.writes_to(off::<V3D_VPMBASE>()), [4], "1000 bytes in 256-byte units");
    assert_eq!(
        v3d.reserve_user_vpm(16 * 1024).unwrap_err(),
        InitError::VpmTooLarge { bytes: 16 * 1024 }
    );
    fake.set(off::<V3D_PCS>(), V3D_PCS::RMACTIVE.set(0, 1));
    assert!(matches!(v3d.reserve_user_vpm(256).unwrap_err(), InitError::NotIdle(_)));
}

#[test]
fn a_list_error_ends_the_wait_with_its_thread() {
    let fake = FakeV3d::default();
    let mut v3d = up(&fake, None);
    let bufs = Buffers::new();
    let tris = one_triangle();
    let fence = v3d.render(&triangle_job(&tris), &bufs.memory()).unwrap();
    fake.on_read(|_, o| (o == off::<V3D_CT1CS>()).then_some(V3D_CT1CS::CTERR.set(0, 1)));
    assert_eq!(v3d.wait(&fence, MS), Err(WaitError::ControlListError { thread: 1 }));
}

#[test]
fn the_family_generic_interface_submits_programs_with_fences_and_tracks_completion() {
    // `GpuQueue::submit`'s closure takes a submission of any lifetime, so the queue borrows
    // nothing shorter than 'static (as a driver in a kernel's `static` does).
    let fake: &'static FakeV3d = Box::leak(Box::new(FakeV3d::default()));
    // Each queued program completes at once.
    fake.on_write(|regs, o, _| {
        if o == off::<V3D_SRQPC>() {
            let v = regs.get(&off::<V3D_SRQCS>()).copied().unwrap_or(0);
            let done = V3D_SRQCS::from_raw(v).qpurqcc().wrapping_add(1);
            regs.insert(off::<V3D_SRQCS>(), V3D_SRQCS::QPURQCC.set(v, u32::from(done)));
        }
    });
    let mut v3d = up(fake, None);
    let mut last = None;
    for n in 0..40 {
        // Through the trait only, as a scheduler drives any family.
        let fence = GpuQueue::submit(&mut v3d, 2, |s| {
            s.program(&program(n))?;
            <V3d<'_, &FakeV3d, StepClock> as GpuQueue>::fence(s)
        });
        last = Some(fence.unwrap());
    }
    let last = last.unwrap();
    assert_eq!(last.seq(), 40);
    GpuQueue::wait(&v3d, &last, MS).unwrap();
    assert_eq!(GpuQueue::poll_completed(&v3d), 40);
    let empty = v3d.submit_fence().unwrap();
    assert_eq!(v3d.fence_status(&empty), FenceStatus::Signalled, "nothing before it");
    v3d.set_fence_interrupts(true).unwrap();
    assert!(v3d.interrupts_enabled());
    v3d.set_fence_interrupts(false).unwrap();
    assert!(!v3d.interrupts_enabled());
    let stats = GpuQueue::stats(&v3d);
    assert_eq!((stats.submissions, stats.doorbells, stats.fences), (41, 40, 41));
}

#[test]
fn dropping_the_driver_resets_both_control_list_threads() {
    let fake = FakeV3d::default();
    let v3d = up(&fake, None);
    drop(v3d);
    assert_eq!(fake.writes_to(off::<V3D_CT0CS>()), [V3D_CT0CS::CTRSTA.set(0, 1)]);
    assert_eq!(fake.writes_to(off::<V3D_CT1CS>()), [V3D_CT1CS::CTRSTA.set(0, 1)]);
    assert_eq!(fake.writes_to(off::<V3D_DBQITE>()), [0], "QPU interrupts off");
}

#[test]
fn program_fences_signal_only_when_no_started_program_is_still_running() {
    // With two programs running on two QPUs, one completion counted (QPURQCC 1 of QPURQCM 2,
    // none queued) may be the second's: a program's fence signals once no program started
    // before it can still be running.
    let fake = FakeV3d::default();
    let mut v3d = up(&fake, None);
    let (first, second) = v3d
        .submit(4, |s| {
            s.program(&program(0))?;
            let first = s.fence()?;
            s.program(&program(1))?;
            Ok((first, s.fence()?))
        })
        .unwrap();
    let srqcs = |made, queued, done| {
        V3D_SRQCS::QPURQCC.set(V3D_SRQCS::QPURQCM.set(V3D_SRQCS::QPURQL.set(0, queued), made), done)
    };
    // Both running, one completion: it may be the second's, so the first's fence waits too.
    fake.set(off::<V3D_SRQCS>(), srqcs(2, 0, 1));
    assert_eq!(v3d.fence_status(&first), FenceStatus::Pending);
    assert_eq!(v3d.fence_status(&second), FenceStatus::Pending);
    fake.set(off::<V3D_SRQCS>(), srqcs(2, 0, 2));
    assert_eq!(v3d.wait(&second, MS), Ok(()));
    assert_eq!(v3d.fence_status(&first), FenceStatus::Signalled);
    // A third program queued behind a fourth that started is not running: with the only
    // started one complete, the third's fence signals while the fourth still waits.
    let (third, fourth) = v3d
        .submit(4, |s| {
            s.program(&program(2))?;
            let third = s.fence()?;
            s.program(&program(3))?;
            Ok((third, s.fence()?))
        })
        .unwrap();
    fake.set(off::<V3D_SRQCS>(), srqcs(4, 1, 3));
    assert_eq!(v3d.fence_status(&third), FenceStatus::Signalled);
    assert_eq!(v3d.fence_status(&fourth), FenceStatus::Pending);
}
