//! A property of submission and completion, over the scripted register file: whatever mix of
//! program batches (some closures failing part-way) and completions happens, a fence is
//! signalled exactly when every program queued before it completed, a failed closure queues
//! nothing and takes its fence numbers back, and the 8-bit completion counter is extended
//! without loss.

mod common;

use baregpu_videocore_v3d::gpu::GpuQueue;
use core::cell::Cell;
use std::rc::Rc;

use baregpu_hal::dma::BusAddress;
use baregpu_videocore_v3d::gpu::FenceStatus;
use baregpu_videocore_v3d::regs::v3d::*;
use baregpu_videocore_v3d::{BuildError, SubmitError, UserProgram, V3d, V3dConfig};
use common::*;
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Step {
    /// A batch of `programs` programs and a fence; the closure fails after `fail_after` of
    /// them when that is smaller.
    Batch { programs: usize, fail_after: usize },
    /// `n` of the queued programs complete.
    Complete(u32),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (1usize..6, 0usize..8)
            .prop_map(|(programs, fail_after)| Step::Batch { programs, fail_after }),
        (0u32..12).prop_map(Step::Complete),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn fences_signal_exactly_when_their_programs_completed(steps in prop::collection::vec(step(), 1..60)) {
        let fake = FakeV3d::default();
        // The queue: programs queued and not completed (the device's QPURQL), and the
        // completion counter (QPURQCC) wrapping at 256.
        let queued = Rc::new(Cell::new(0u32));
        let q = queued.clone();
        fake.on_write(move |_, o, _| {
            if o == off::<V3D_SRQPC>() {
                q.set(q.get() + 1);
            }
        });
        let completed = Rc::new(Cell::new(0u64));
        let (q, c) = (queued.clone(), completed.clone());
        fake.on_read(move |_, o| {
            (o == off::<V3D_SRQCS>()).then(|| {
                let raw = V3D_SRQCS::QPURQL.set(0, q.get());
                V3D_SRQCS::QPURQCC.set(raw, (c.get() % 256) as u32)
            })
        });
        let mut v3d = V3d::init(&fake, StepClock::default(), None, V3dConfig::default()).unwrap();
        let program = UserProgram { code: BusAddress(SHADER_BUS), uniforms: BusAddress(0), uniforms_len: 0 };
        // Each fence and the number of programs queued before it.
        let mut fences = Vec::new();
        let mut total_queued = 0u64;
        for step in steps {
            match step {
                Step::Batch { programs, fail_after } => {
                    let before = fake.writes_to(off::<V3D_SRQPC>()).len();
                    let emitted = v3d.timeline().last_emitted();
                    let result = v3d.submit(programs + 1, |s| {
                        for n in 0..programs {
                            if n == fail_after {
                                return Err(BuildError::BadProgram);
                            }
                            s.program(&program)?;
                        }
                        s.fence()
                    });
                    let written = fake.writes_to(off::<V3D_SRQPC>()).len() - before;
                    match result {
                        Ok(fence) => {
                            prop_assert_eq!(written, programs);
                            total_queued += programs as u64;
                            fences.push((fence, total_queued));
                        }
                        Err(SubmitError::Build(BuildError::BadProgram)) => {
                            prop_assert!(fail_after < programs);
                            prop_assert_eq!(written, 0, "a failed closure queues nothing");
                            prop_assert_eq!(v3d.timeline().last_emitted(), emitted);
                        }
                        Err(SubmitError::QueueFull(_)) => {
                            prop_assert_eq!(written, 0, "a full queue takes nothing");
                            prop_assert_eq!(v3d.timeline().last_emitted(), emitted);
                        }
                        Err(e) => prop_assert!(false, "{e:?}"),
                    }
                }
                Step::Complete(n) => {
                    let n = n.min(queued.get());
                    queued.set(queued.get() - n);
                    completed.set(completed.get() + u64::from(n));
                }
            }
            for (fence, needs) in &fences {
                let expected = if completed.get() >= *needs {
                    FenceStatus::Signalled
                } else {
                    FenceStatus::Pending
                };
                prop_assert_eq!(v3d.fence_status(fence), expected);
            }
        }
        prop_assert_eq!(v3d.programs_completed(), completed.get());
    }
}
