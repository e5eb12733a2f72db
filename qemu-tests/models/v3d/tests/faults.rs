//! Injected faults (checklist item 7), interrupt enables (§10 Tables 75-77) and pacing
//! (checklist item 9): the same programs give the same memory run to idle, under seeded
//! pacing and threaded.
mod common;
use baregpu_hal::RegisterIo;
use common::*;
use gpu_device_model::{InProcess, InProcessOptions, Pacing, PlatformDevice};
use gpu_mailbox::{ModelState, Op, Status, platform};
use v3d_model::{Faults, V3d};

/// Store `value` 16 times through VPM row `row` (concurrent programs need their own rows: the
/// user VPM is shared, §7).
fn writer_at(value: u32, row: u32) -> Vec<u64> {
    let mut p = vec![ldi(R0, value), ldi_b(VPM_SETUP, vpm_write_setup(row)), w(mov(VPM, M_R0))];
    p.extend(store_row(row));
    p.extend(end());
    p
}

fn writer(value: u32) -> Vec<u64> {
    writer_at(value, 0)
}

fn host_interrupt() -> Vec<u64> {
    let mut p = vec![ldi(HOST_INT, 1)];
    p.extend(end());
    p
}

#[test]
fn all_ones_reads_ones_and_drops_writes() {
    let mut b = Bench::with(V3d::with_faults("all-ones".parse().unwrap()));
    assert_eq!(b.rd(IDENT0), u32::MAX);
    b.wr(SCRATCH, 5);
    assert_eq!(b.dev.handle(Op::Inject as u32, 0, 0, 0).0, Status::Ok);
    assert_eq!((b.rd(IDENT0), b.rd(SCRATCH)), (0x0244_3356, 0));
}

#[test]
fn a_stalled_v3d_never_runs_a_program() {
    let mut b = Bench::with(V3d::with_faults("cp-stall".parse().unwrap()));
    b.code(CODE, &writer(7));
    b.put(UNIFORMS, &[OUT]);
    b.submit(CODE, UNIFORMS, 1);
    b.run(1000);
    assert_eq!((b.completed(), b.peek(OUT)), (0, 0));
    assert_eq!(b.rd(SRQCS) & 0x3F, 1, "still queued");
}

#[test]
fn a_bus_fault_on_the_next_fetch_stops_the_program_with_its_code() {
    let mut b = Bench::new();
    let (status, _) = b.dev.handle(Op::Inject as u32, 0, 0, gpu_mailbox::gpu_faults::DMA_FAULT);
    assert_eq!(status, Status::Ok);
    b.code(CODE, &writer(7));
    b.put(UNIFORMS, &[OUT]);
    b.submit(CODE, UNIFORMS, 1);
    b.run(1000);
    assert_eq!(b.model().fault().map(|f| f.code()), Some(0x3D04));
    assert_eq!(b.dev.state(), ModelState::Error);
    assert_eq!(b.completed(), 0);
}

#[test]
fn unprogrammed_addresses_are_bus_faults() {
    // Checklist item 6: code at address 0 (SRQPC never programmed) and a VDW store to 0.
    let mut b = Bench::new();
    b.submit(0, 0, 0);
    b.run(100);
    assert_eq!(b.model().fault().map(|f| (f.code(), f.pc)), Some((0x3D04, 0)));
    let mut b = Bench::new();
    b.code(CODE, &writer(7));
    b.put(UNIFORMS, &[0]);
    b.submit(CODE, UNIFORMS, 1);
    b.run(100);
    assert_eq!(b.model().fault().map(|f| f.code()), Some(0x3D05));
}

#[test]
fn a_slow_v3d_finishes_later_with_the_same_result() {
    let mut fast = Bench::new();
    let mut slow = Bench::with(V3d::with_faults("slow=5".parse().unwrap()));
    let mut ticks = vec![];
    for b in [&mut fast, &mut slow] {
        b.code(CODE, &writer(9));
        b.put(UNIFORMS, &[OUT]);
        b.submit(CODE, UNIFORMS, 1);
        let mut n = 0;
        while b.completed() == 0 {
            b.dev.tick_engines(1);
            n += 1;
            assert!(n < 10_000);
        }
        ticks.push(n);
        assert_eq!(b.peek(OUT), 9);
    }
    assert!(ticks[1] >= 4 * ticks[0], "{ticks:?}");
}

#[test]
fn a_missed_interrupt_latches_without_reaching_the_line() {
    let faults = Faults { missed_irq: true, ..Faults::default() };
    let mut b = Bench::with(V3d::with_faults(faults));
    b.code(CODE, &host_interrupt());
    b.wr(DBQITE, 0xFFF);
    b.submit(CODE, 0, 0);
    b.run(100);
    assert_eq!((b.rd(DBQITC), b.dev.irq_status()), (1, 0), "latched, no interrupt");
    assert_eq!(b.model().stats().interrupts_missed, 1);
    // The driver's recovery: clear it; the next one arrives (the fault is one-shot).
    b.wr(DBQITC, 1);
    b.submit(CODE, 0, 0);
    b.run(100);
    assert_eq!((b.rd(DBQITC), b.dev.irq_status()), (1, 1));
}

#[test]
fn interrupt_enables_set_and_clear_by_writing_ones() {
    // §10 Tables 76-77: INTENA sets enable bits, INTDIS clears them; both read the enables.
    let mut b = Bench::new();
    b.wr(INTENA, 0b1011);
    b.wr(INTDIS, 0b0010);
    assert_eq!((b.rd(INTENA), b.rd(INTDIS)), (0b1001, 0b1001));
    b.wr(INTENA, 0xFFFF_FFF0);
    assert_eq!(b.rd(INTENA), 0b1001, "bits 31:4 reserved");
    assert_eq!(b.rd(INTCTL), 0);
}

fn in_process(pacing: Pacing) -> InProcess<PlatformDevice<V3d>> {
    let options = InProcessOptions { pacing: Some(pacing), ..InProcessOptions::default() };
    InProcess::with_options(PlatformDevice::new(V3d::new(), platform::DEVICE_V3D), options).unwrap()
}

#[test]
fn results_do_not_depend_on_the_pacing() {
    // Twelve programs (one per QPU, then queued) each storing its own value, plus a
    // host interrupt; the driver polls SRQCS's completion count.
    let mut results = vec![];
    let mut busy_polls_paced = 0;
    for pacing in [
        Pacing::RunToIdle,
        Pacing::Seeded(1),
        Pacing::Seeded(2),
        Pacing::Seeded(3),
        Pacing::Threaded { ticks_per_ms: 50 },
    ] {
        let gpu = in_process(pacing);
        let put = |a: u32, words: &[u32]| {
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            gpu.write_memory(u64::from(a), &bytes).unwrap();
        };
        gpu.write32(VPMBASE as usize, 16);
        // Code and uniforms written before the first request: the slice caches do not snoop,
        // so a uniform written after its line was cached would be read stale.
        for k in 0..14u32 {
            let p: Vec<u32> =
                writer_at(k + 1, k).iter().flat_map(|&i| [i as u32, (i >> 32) as u32]).collect();
            put(CODE + 0x100 * k, &p);
            put(UNIFORMS + 4 * k, &[OUT + 64 * k]);
        }
        for k in 0..14u32 {
            gpu.write32(SRQUA as usize, UNIFORMS + 4 * k);
            gpu.write32(SRQUL as usize, 1);
            gpu.write32(SRQPC as usize, CODE + 0x100 * k);
        }
        let mut polls = 0;
        while gpu.read32(SRQCS as usize) >> 16 & 0xFF != 14 {
            polls += 1;
            assert!(
                polls < 1_000_000,
                "{pacing:?}: never done: {:#x} {:?}",
                gpu.read32(SRQCS as usize),
                gpu.state()
            );
            if matches!(pacing, Pacing::Threaded { .. }) {
                std::thread::sleep(std::time::Duration::from_micros(100));
            }
        }
        if matches!(pacing, Pacing::Seeded(_)) {
            busy_polls_paced += polls;
        }
        let mut out = vec![0u8; 64 * 14];
        gpu.read_memory(u64::from(OUT), &mut out).unwrap();
        assert_eq!(gpu.model().model().fault(), None);
        results.push(out);
    }
    assert!(results.windows(2).all(|w| w[0] == w[1]));
    assert_eq!(u32::from_le_bytes(results[0][64 * 13..64 * 13 + 4].try_into().unwrap()), 14);
    assert!(busy_polls_paced > 0, "seeded pacing showed the programs in progress");
}
