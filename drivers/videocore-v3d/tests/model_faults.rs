//! Every fault the emulated V3D injects (`v3d_model::faults`), reaching the driver as its
//! typed error, and the recovery that brings service back: all-ones, a stalled and a slow
//! engine, a bus fault on a fetch, a missed interrupt, an out-of-memory storm.

mod emulated;

use baregpu_videocore_v3d::gpu::GpuQueue;
use std::time::Duration;

use baregpu_qpu_asm::programs::{self, VPM_STORE};
use baregpu_videocore_v3d::gpu::{FenceError, FenceFailure, FenceStatus};
use baregpu_videocore_v3d::{
    InitError, NvVertex, OverflowPool, ProbeError, SubmitError, UserProgram, V3d, WaitError,
};
use emulated::*;

/// A user program writing the element numbers to `out` (VPM_STORE), with its buffers.
struct Store<'a> {
    code: Buffer<'a>,
    uniforms: Buffer<'a>,
    out: Buffer<'a>,
}

impl<'a> Store<'a> {
    fn new(gpu: &'a Gpu) -> Self {
        let code = program_code(gpu, VPM_STORE);
        let out = alloc(gpu, 64);
        let uniforms = upload(gpu, &[out.bus_address().0 as u32]);
        Store { code, uniforms, out }
    }

    fn program(&self) -> UserProgram {
        user_program(&self.code, &self.uniforms, 1)
    }

    fn stored(&self) -> bool {
        read_words(&self.out, 16) == (0..16).collect::<Vec<u32>>()
    }
}

const W: u16 = 128;
const H: u16 = 128;

fn triangle() -> [[NvVertex; 3]; 1] {
    [[NvVertex::at(4.0, 4.0), NvVertex::at(120.0, 20.0), NvVertex::at(60.0, 124.0)]]
}

const COLOUR: u32 = 0xFF11_2233;

/// A constant-colour frame of `W` x `H` for one triangle.
fn frame_of(gpu: &Gpu, tile_alloc: usize) -> Frame<'_> {
    let mut out = [0u64; 8];
    let code = programs::constant_colour(COLOUR, &mut out).unwrap();
    Frame::new(gpu, (W, H), (1, 0), tile_alloc, code)
}

fn submit(frame: &Frame<'_>, v3d: &mut Driver<'_>) -> baregpu_videocore_v3d::Fence {
    let tris = triangle();
    v3d.render(&frame.job(0, &tris, 0), &frame.buffers.memory()).expect("submitted")
}

/// Pixels of the colour (the triangle drawn).
fn drawn(frame: &Frame<'_>) -> usize {
    frame.pixels().iter().filter(|&&p| p == COLOUR).count()
}

#[test]
fn all_ones_is_device_gone_at_probe_and_ends_a_wait_early() {
    let gpu = gpu();
    set_faults(&gpu, |f| f.registers_all_ones = true);
    match V3d::init(&gpu, ModelClock::new(&gpu), None, Default::default()) {
        Err(InitError::DeviceGone(_) | InitError::Probe(ProbeError::DeviceGone(_))) => {}
        other => panic!("expected DeviceGone at probe, got {:?}", other.err()),
    }
    set_faults(&gpu, |f| f.registers_all_ones = false);
    let mut v3d = driver(&gpu, None);
    v3d.reserve_user_vpm(256).unwrap();
    let store = Store::new(&gpu);
    set_faults(&gpu, |f| f.cp_stall = true);
    let fence = v3d.run_program(&store.program()).unwrap();
    set_faults(&gpu, |f| f.registers_all_ones = true);
    // An hour's timeout: the health check ends the wait at once.
    match v3d.wait(&fence, Duration::from_secs(3600)) {
        Err(WaitError::Fence(FenceError::DeviceGone(_))) => {}
        other => panic!("expected DeviceGone, got {other:?}"),
    }
    assert_eq!(v3d.fence_status(&fence), FenceStatus::Failed(FenceFailure::DeviceGone));
    assert!(matches!(v3d.run_program(&store.program()), Err(SubmitError::DeviceGone(_))));
    // The device answers again: a reset brings service back.
    set_faults(&gpu, |f| {
        f.registers_all_ones = false;
        f.cp_stall = false;
    });
    v3d.reset().expect("reset");
    let fence = v3d.run_program(&store.program()).unwrap();
    v3d.wait(&fence, TIMEOUT).expect("service restored");
    assert!(store.stored());
}

#[test]
fn a_stalled_engine_times_out_without_progress_and_reset_fails_its_frame() {
    let gpu = gpu();
    let mut v3d = driver(&gpu, None);
    let frame = frame_of(&gpu, 64 * 1024);
    set_faults(&gpu, |f| f.cp_stall = true);
    let fence = submit(&frame, &mut v3d);
    match v3d.wait(&fence, TIMEOUT) {
        Err(WaitError::Fence(FenceError::Timeout { progressed, .. })) => {
            assert!(!progressed, "a stalled CLE does not progress");
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert_eq!(drawn(&frame), 0);
    // The reset needs no engine (its register test is V3D_SCRATCH): it abandons the frame.
    let report = v3d.reset().expect("reset");
    assert_eq!(report.lost.map(|l| (l.first, l.last)), Some((fence.seq(), fence.seq())));
    assert_eq!(v3d.fence_status(&fence), FenceStatus::Failed(FenceFailure::Lost));
    set_faults(&gpu, |f| f.cp_stall = false);
    settle(&gpu);
    assert_eq!(drawn(&frame), 0, "the abandoned frame does not run on");
    let again = submit(&frame, &mut v3d);
    v3d.wait(&again, TIMEOUT).expect("rendered after the reset");
    assert!(drawn(&frame) > 4000);
}

#[test]
fn counters_cleared_by_a_platform_reset_lose_the_frame_in_flight_not_complete_it() {
    let gpu = gpu();
    let mut v3d = driver(&gpu, None);
    let frame = frame_of(&gpu, 64 * 1024);
    // Five frames rendered: `V3D_RFC` reads 5.
    for _ in 0..5 {
        let done = submit(&frame, &mut v3d);
        v3d.wait(&done, TIMEOUT).expect("rendered");
    }
    set_faults(&gpu, |f| f.cp_stall = true);
    let fence = submit(&frame, &mut v3d);
    // The platform resets the V3D under the driver: its counters read 0 again, which is not
    // 251 more frames (the driver started one).
    gpu.reset();
    assert_eq!(v3d.fence_status(&fence), FenceStatus::Pending, "the cleared counter is no frame");
    let report = v3d.reset().expect("reset");
    assert_eq!(report.completed, fence.seq() - 1);
    assert_eq!(report.lost.map(|l| (l.first, l.last)), Some((fence.seq(), fence.seq())));
    assert_eq!(v3d.fence_status(&fence), FenceStatus::Failed(FenceFailure::Lost));
    set_faults(&gpu, |f| f.cp_stall = false);
    let again = submit(&frame, &mut v3d);
    v3d.wait(&again, TIMEOUT).expect("rendered after the reset");
}

#[test]
fn a_slow_engine_still_progresses_and_finishes_given_time() {
    let gpu = gpu();
    let mut v3d = driver(&gpu, None);
    let frame = frame_of(&gpu, 64 * 1024);
    set_faults(&gpu, |f| f.slow = Some(50));
    let fence = submit(&frame, &mut v3d);
    // Run to idle finishes the frame inside the submitting write, and an engine thread on the
    // wall clock may finish it between the wait and the check: seeded pacing shows it slow.
    if matches!(gpu.pacing(), gpu_device_model::Pacing::Seeded(_)) {
        match v3d.wait(&fence, Duration::from_micros(500)) {
            Err(WaitError::Fence(FenceError::Timeout { .. })) => {}
            other => panic!("expected a short wait to time out, got {other:?}"),
        }
        assert_eq!(v3d.fence_status(&fence), FenceStatus::Pending, "not failed: still going");
    }
    v3d.wait(&fence, Duration::from_secs(5)).expect("the slow frame completes");
    assert!(drawn(&frame) > 4000);
    assert_eq!(gpu.error_code(), 0);
}

#[test]
fn a_bus_fault_on_a_list_fetch_is_a_control_list_error_and_resets_recover() {
    let gpu = gpu();
    let mut v3d = driver(&gpu, None);
    let frame = frame_of(&gpu, 64 * 1024);
    set_faults(&gpu, |f| f.dma_fault_next_fetch = true);
    let fence = submit(&frame, &mut v3d);
    match v3d.wait(&fence, TIMEOUT) {
        Err(WaitError::ControlListError { thread: 0 }) => {}
        other => panic!("expected the binning thread's error, got {other:?}"),
    }
    // The model's error state needs the platform's function reset, then the driver's.
    assert_ne!(gpu.error_code(), 0, "the model's bus fault");
    gpu.reset();
    v3d.reset().expect("reset");
    assert_eq!(v3d.fence_status(&fence), FenceStatus::Failed(FenceFailure::Lost));
    let again = submit(&frame, &mut v3d);
    v3d.wait(&again, TIMEOUT).expect("rendered after the reset");
    assert!(drawn(&frame) > 4000);
}

#[test]
fn a_bus_fault_in_a_user_program_times_out_and_a_function_reset_recovers() {
    let gpu = gpu();
    let mut v3d = driver(&gpu, None);
    v3d.reserve_user_vpm(256).unwrap();
    let store = Store::new(&gpu);
    set_faults(&gpu, |f| f.dma_fault_next_fetch = true);
    let fence = v3d.run_program(&store.program()).unwrap();
    match v3d.wait(&fence, TIMEOUT) {
        Err(WaitError::Fence(FenceError::Timeout { .. })) => {}
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert_ne!(gpu.error_code(), 0, "the model's bus fault");
    assert!(!store.stored());
    // The platform's function reset (the device's error state), then the driver's.
    gpu.reset();
    v3d.reset().expect("reset");
    assert_eq!(v3d.fence_status(&fence), FenceStatus::Failed(FenceFailure::Lost));
    v3d.reserve_user_vpm(256).unwrap();
    let fence = v3d.run_program(&store.program()).unwrap();
    v3d.wait(&fence, TIMEOUT).expect("service restored");
    assert!(store.stored());
}

#[test]
fn an_out_of_memory_storm_exhausts_the_pool_then_a_reset_recovers() {
    let gpu = gpu();
    let pool_memory = alloc(&gpu, 4096);
    let pool = OverflowPool::new(&pool_memory, 1024).unwrap();
    let mut v3d = driver(&gpu, Some(pool));
    let frame = frame_of(&gpu, 0);
    set_faults(&gpu, |f| f.outomem_storm = true);
    let fence = submit(&frame, &mut v3d);
    match v3d.wait(&fence, TIMEOUT) {
        Err(WaitError::OverflowPoolExhausted { blocks: 4 }) => {}
        other => panic!("expected every block given and the pool exhausted, got {other:?}"),
    }
    set_faults(&gpu, |f| f.outomem_storm = false);
    v3d.reset().expect("reset");
    let again = submit(&frame, &mut v3d);
    v3d.wait(&again, TIMEOUT).expect("rendered after the storm");
    assert!(drawn(&frame) > 4000);
}

/// A user program raising its QPU's host interrupt, then ending.
const HOST_INTERRUPT: &str = "\
    mov host_int, 1
    thrend
    nop
    nop
";

#[test]
fn a_missed_interrupt_still_completes_by_polling_and_the_handler_clears_it() {
    let gpu = gpu();
    let mut v3d = driver(&gpu, None);
    v3d.enable_interrupts().unwrap();
    let code = program_code(&gpu, HOST_INTERRUPT);
    let program =
        UserProgram { code: code.bus_address(), uniforms: code.bus_address(), uniforms_len: 0 };
    set_faults(&gpu, |f| f.missed_irq = true);
    let fence = v3d.run_program(&program).unwrap();
    v3d.wait(&fence, TIMEOUT).expect("polling completes the fence without the interrupt");
    settle(&gpu);
    assert_eq!(gpu.take_interrupts(), 0, "the interrupt never reached the line");
    assert_eq!(gpu.model().model().stats().interrupts_missed, 1);
    // The handler (run on a timer, say) finds the latched QPU bit and clears it.
    let report = v3d.handle_interrupts().unwrap();
    assert_ne!(report.qpus, 0, "latched in V3D_DBQITC");
    assert_eq!(report.completed, fence.seq());
    set_faults(&gpu, |f| f.missed_irq = false);
    // The next program's interrupt reaches the line again.
    let fence = v3d.run_program(&program).unwrap();
    v3d.wait(&fence, TIMEOUT).unwrap();
    settle(&gpu);
    assert!(gpu.take_interrupts() > 0, "delivered");
    assert_ne!(v3d.handle_interrupts().unwrap().qpus, 0);
    // The platform acknowledges its latch: with the source cleared, the line stays down.
    assert_eq!(gpu.ack_irq(u32::MAX), 0, "acknowledged: the line is down");
}
