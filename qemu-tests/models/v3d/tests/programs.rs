//! QPU user programs through the SRQ (§3, §7, §10), each instruction encoded by hand from the
//! §3 bit layouts (`common::I`), each test citing what it checks.
mod common;
use common::*;
use gpu_device_model::Activity;
use v3d_model::qpu::{PROGRAM_INSTRUCTION_LIMIT, QpuFaultKind};
use v3d_model::{INSTRUCTIONS_PER_TICK, MAX_UNITS_PER_TICK};

/// GPU_FFT-style (hello_fft) memory writer: VPM write setup, element numbers to the VPM, VDW setup, the
/// destination uniform to VPM_ST_ADDR, wait, end.
fn writer() -> Vec<u64> {
    let mut p = vec![ldi_b(VPM_SETUP, vpm_write_setup(0)), w(mov_a(VPM, ELEM))];
    p.extend(store_row(0));
    p.extend(end());
    p
}

#[test]
fn identity_describes_the_bcm2835_and_read_only_writes_are_counted() {
    // §10 Tables 79-81: "V3D" technology version 2; 3 slices of 4 QPUs, 2 TMUs per slice,
    // 16 semaphores, 12 KiB VPM, HDR; full-size double-buffered tile buffer.
    let mut b = Bench::new();
    assert_eq!(b.rd(IDENT0), 0x0244_3356);
    let ident1 = b.rd(IDENT1);
    assert_eq!(ident1 >> 4 & 0xF, 3, "slices");
    assert_eq!(ident1 >> 8 & 0xF, 4, "QPUs per slice");
    assert_eq!(ident1 >> 28, 12, "VPM KiB");
    assert_eq!(b.rd(IDENT2) >> 4 & 0xF, 2, "full-size tile buffer");
    let dropped = b.model().stats().writes_dropped;
    b.wr(IDENT1, 0);
    b.wr(0x0FF0, 1); // a hole
    assert_eq!(b.rd(IDENT1), ident1);
    assert_eq!(b.model().stats().writes_dropped, dropped + 2);
    b.wr(SCRATCH, 0xDEAD_BEEF);
    assert_eq!(b.rd(SCRATCH), 0xDEAD_BEEF);
    // L2CACTL: L2CENA reads back (Table 71), SRQUL keeps only its 12 bits (Table 67).
    b.wr(L2CACTL, 1);
    assert_eq!(b.rd(L2CACTL), 1);
    b.wr(L2CACTL, 2);
    assert_eq!(b.rd(L2CACTL), 0);
    b.wr(SRQUL, u32::MAX);
    assert_eq!(b.rd(SRQUL), 0xFFF);
    // GPU_FFT's user-program set-up (DBCFG 0, DBQITE 0, DBQITC ~0, L2CACTL 4, SLCACTL ~0,
    // SRQCS resets) writes only registers the model has: nothing is dropped.
    let dropped = b.model().stats().writes_dropped;
    for (r, v) in [(DBCFG, 0), (DBQITE, 0), (DBQITC, !0), (L2CACTL, 4), (SLCACTL, !0)] {
        b.wr(r, v);
    }
    b.wr(SRQCS, 1 << 7 | 1 << 8 | 1 << 16);
    assert_eq!(b.model().stats().writes_dropped, dropped);
}

#[test]
fn a_user_program_writes_memory_through_the_vdw_and_counts_its_completion() {
    // §7 "QPU Control of VCD and VDW"; §10 Table 68: QPURQCC counts completions.
    let mut b = Bench::new();
    b.code(CODE, &writer());
    b.put(UNIFORMS, &[OUT]);
    b.submit(CODE, UNIFORMS, 1);
    assert_eq!(b.rd(SRQCS) & 0x3F, 1, "queued until a tick dispatches it");
    assert_eq!(b.rd(SRQCS) >> 8 & 0xFF, 1, "one request made");
    b.run(1000);
    assert_eq!(b.peek_n(OUT, 16), (0..16).collect::<Vec<_>>());
    assert_eq!(b.completed(), 1);
    assert_eq!(b.rd(SRQCS) & 0x3F, 0);
    // Writing 1 to bit 16 resets the count.
    b.wr(SRQCS, 1 << 16);
    assert_eq!(b.completed(), 0);
    assert_eq!(b.model().fault(), None);
}

#[test]
fn vector_add_loads_through_the_vdr_and_stores_through_the_vdw() {
    // §7 Tables 33, 36: two VDR loads, a VPM block read of two rows, add, write, VDW store.
    let mut b = Bench::new();
    let a: Vec<u32> = (0..16).map(|i| i * 3).collect();
    let c: Vec<u32> = (0..16).map(|i| 1000 - i).collect();
    b.put(DATA, &a);
    b.put(DATA + 0x100, &c);
    let mut p = vec![
        ldi(VPM_SETUP, vdr_setup(0)),
        w(mov_a(VPM_DMA_ADDR, UNIF)),
        w(I { raddr_a: VPM_WAIT, ..NOP }),
        ldi(VPM_SETUP, vdr_setup(1)),
        w(mov_a(VPM_DMA_ADDR, UNIF)),
        w(I { raddr_a: VPM_WAIT, ..NOP }),
        ldi(VPM_SETUP, vpm_read_setup(2, 0)),
        w(NOP),
        w(NOP),
        w(mov_a(R0, VPM)),
        w(mov_a(R1, VPM)),
        w(add_op(12, R2, M_R0, M_R1)),
    ];
    p.extend(store_vector(M_R2, 2));
    b.run_program(&p, &[DATA, DATA + 0x100, OUT]);
    let sum: Vec<u32> = a.iter().zip(&c).map(|(x, y)| x + y).collect();
    assert_eq!(b.peek_n(OUT, 16), sum);
    assert_eq!(b.completed(), 1);
}

#[test]
fn a_semaphore_orders_two_qpus() {
    // §3 "Semaphore Instruction": an acquire stalls at 0 until another QPU releases. The
    // consumer (queued first, so it runs first) waits on semaphore 3, then reads what the
    // producer stored with a TMU general-memory lookup (§4: S alone, the address).
    let mut b = Bench::new();
    b.put(DATA, &[0; 16]);
    let mut consumer = vec![
        sema(true, 3),
        w(mov_a(TMU0_S, UNIF)),
        w(I { sig: 10, ..NOP }),
        ldi_b(VPM_SETUP, vpm_write_setup(5)),
        w(mov(VPM, M_R4)),
    ];
    consumer.extend(store_row(5));
    consumer.extend(end());
    let mut producer =
        vec![ldi(R0, 0x5EAF00D), ldi_b(VPM_SETUP, vpm_write_setup(6)), w(mov(VPM, M_R0))];
    producer.extend(store_row(6));
    producer.push(sema(false, 3));
    producer.extend(end());
    b.code(CODE, &consumer);
    b.code(CODE2, &producer);
    b.put(UNIFORMS, &[DATA, OUT]);
    b.put(UNIFORMS2, &[DATA]);
    b.submit(CODE, UNIFORMS, 2);
    // Alone, the consumer waits: the model reports Waiting, never Busy forever.
    assert_eq!(b.dev.tick_engines(10_000), Activity::Waiting);
    assert_eq!(b.completed(), 0);
    b.submit(CODE2, UNIFORMS2, 1);
    b.run(10_000);
    assert_eq!(b.model().fault(), None);
    assert_eq!(b.completed(), 2);
    assert_eq!(b.peek_n(OUT, 16), vec![0x5EAF00D; 16], "the consumer saw the producer's store");
    assert_eq!(b.model().qpus.shared.semaphores[3], 0);
}

#[test]
fn a_host_interrupt_latches_in_dbqitc_and_reaches_the_line_when_enabled() {
    // §3 "Host Interrupt", §10 Tables 73-74.
    let mut b = Bench::new();
    let mut p = vec![ldi(HOST_INT, 1)];
    p.extend(end());
    b.code(CODE, &p);
    b.wr(DBQITE, 1);
    b.submit(CODE, 0, 0);
    b.run(100);
    assert_eq!(b.rd(DBQITC), 1, "QPU 0 raised it");
    assert_eq!(b.dev.irq_status(), 1);
    b.wr(DBQITC, 1);
    assert_eq!(b.rd(DBQITC), 0);
    // Not enabled: latched but no interrupt.
    let mut b = Bench::new();
    b.code(CODE, &p);
    b.submit(CODE, 0, 0);
    b.run(100);
    assert_eq!((b.rd(DBQITC), b.dev.irq_status()), (1, 0));
}

#[test]
fn the_sfu_result_arrives_in_r4_three_instructions_later() {
    // §3 "Special Functions Unit": write N, r4 untouched at N+1 and N+2, read at N+3.
    let mut p = vec![ldi(R0, 4.0f32.to_bits()), ldi_b(VPM_SETUP, vpm_write_setup(0))];
    for sfu in [SFU_RECIP, SFU_RECIPSQRT, SFU_EXP, SFU_LOG] {
        p.extend([w(mov(sfu, M_R0)), w(NOP), w(NOP), w(mov(VPM, M_R4))]);
    }
    p.extend(store_rows(4, 0));
    let b = run_user(&p);
    let row = |r: u32| f32::from_bits(b.peek(OUT + 64 * r));
    assert_eq!([row(0), row(1), row(2), row(3)], [0.25, 0.5, 16.0, 2.0]);
}

#[test]
fn reading_r4_too_early_after_an_sfu_write_faults() {
    let mut b = Bench::new();
    let mut p = vec![ldi(R0, 4.0f32.to_bits()), w(mov(SFU_RECIP, M_R0)), w(NOP), w(mov(R1, M_R4))];
    p.extend(end());
    b.code(CODE, &p);
    b.submit(CODE, 0, 0);
    b.run(100);
    let f = b.model().fault().expect("fault");
    assert_eq!((f.code(), f.pc), (0x3D02, CODE + 24));
    assert_eq!(b.dev.error_code(), 0x3D02, "reported in the device's error state");
}

#[test]
fn a_relative_branch_loops_with_three_delay_slots() {
    // §3 "Branches": condition on all/any lanes, PC-relative targets from the instruction
    // after the delay slots, three delay slots always run. Loop 10 times: r0 += 3 (small
    // immediate 3), r1 -= 1 with flags, branch back while any Z is clear; the first delay slot
    // counts in r2.
    let imm = |v: u64| I { sig: 13, raddr_b: v, ..NOP };
    let mut p = vec![ldi(R0, 0), ldi(R1, 10), ldi(R2, 0)];
    let body = p.len() as i32;
    p.push(w(add_op(12, R0, M_R0, M_B)).with(imm(3)));
    p.push(w(I { sf: 1, ..add_op(13, R1, M_R1, M_B) }).with(imm(1)));
    let here = p.len() as i32;
    // Target = (branch + 4 instructions) + imm: back to `body`.
    p.push(branch(3, true, (body - (here + 4)) * 8));
    p.push(w(add_op(12, R2, M_R2, M_B)).with(imm(1)));
    p.extend([w(NOP), w(NOP)]);
    p.extend([ldi_b(VPM_SETUP, vpm_write_setup(0)), w(mov(VPM, M_R0)), w(mov(VPM, M_R2))]);
    p.extend(store_rows(2, 0));
    let b = run_user(&p);
    assert_eq!((b.peek(OUT), b.peek(OUT + 64)), (30, 10));
}

trait With {
    fn with(self, fields: I) -> u64;
}
impl With for u64 {
    /// Merge the signal and raddr_b of `fields` (a small-immediate signal).
    fn with(self, fields: I) -> u64 {
        (self & !(0xF << 60) & !(0x3F << 12)) | fields.sig << 60 | fields.raddr_b << 12
    }
}

#[test]
fn an_endless_program_never_stalls_a_tick_and_ends_on_its_instruction_limit() {
    // Checklist item 3: a branch to itself runs INSTRUCTIONS_PER_TICK attempts per tick.
    let mut b = Bench::new();
    let p = vec![branch(15, true, -32), w(NOP), w(NOP), w(NOP)];
    b.code(CODE, &p);
    b.submit(CODE, 0, 0);
    for _ in 0..100 {
        assert_eq!(b.dev.tick_engines(1), Activity::Busy);
    }
    let s = b.model().stats();
    assert_eq!(s.instructions, 100 * u64::from(INSTRUCTIONS_PER_TICK));
    assert!(s.max_tick_units <= MAX_UNITS_PER_TICK);
    // Registers still answer while it runs.
    assert_eq!(b.rd(SRQCS) >> 16 & 0xFF, 0);
    // The limit (lowered from PROGRAM_INSTRUCTION_LIMIT for the test's speed) ends it.
    let limit = 100_000;
    b.dev.model_mut().model_mut().qpus.shared.instruction_limit = limit;
    let ticks = limit / u64::from(INSTRUCTIONS_PER_TICK) + 10;
    b.run(ticks as u32);
    let fault = b.model().fault().expect("stopped");
    assert_eq!(fault.kind, QpuFaultKind::BudgetExhausted { limit });
    assert_eq!(fault.code(), 0x3D06);
    assert_eq!(b.model().stats().instructions, limit);
    assert!(PROGRAM_INSTRUCTION_LIMIT > limit);
    assert!(b.model().stats().max_tick_units <= MAX_UNITS_PER_TICK);
}

#[test]
fn rewritten_code_runs_stale_until_the_instruction_cache_is_cleared() {
    // §10 Table 72: ICC clears a slice's instruction cache; the model's caches do not snoop.
    let mut b = Bench::new();
    let prog = |v: u32| {
        let mut p = vec![ldi(R0, v), ldi_b(VPM_SETUP, vpm_write_setup(0)), w(mov(VPM, M_R0))];
        p.extend(store_row(0));
        p.extend(end());
        p
    };
    let again = |b: &mut Bench| {
        b.submit(CODE, UNIFORMS, 1);
        b.run(1000);
    };
    b.put(UNIFORMS, &[OUT]);
    b.code(CODE, &prog(1));
    again(&mut b);
    assert_eq!(b.peek(OUT), 1);
    b.code(CODE, &prog(2));
    again(&mut b);
    assert_eq!(b.peek(OUT), 1, "stale code from the instruction cache");
    b.wr(SLCACTL, 0xF);
    again(&mut b);
    assert_eq!(b.peek(OUT), 2);
    // Uniforms likewise (UCC).
    b.put(UNIFORMS, &[OUT2]);
    again(&mut b);
    assert_eq!(b.peek(OUT2), 0, "stale uniform: still stored to OUT");
    b.wr(SLCACTL, 0xF00);
    again(&mut b);
    assert_eq!(b.peek(OUT2), 2);
}

#[test]
fn restrictions_hardware_leaves_undefined_are_faults() {
    // §3 "Summary of Instruction Restrictions".
    let cases: Vec<(&str, Vec<u64>)> = vec![
        (
            "regfile A location read in the instruction after its write",
            vec![w(mov(0, M_R0)), w(I { raddr_a: 0, ..mov(R1, M_A) })],
        ),
        (
            "uniform, varying or VPM access in the last three instructions",
            vec![w(END), w(mov_a(R0, UNIF)), w(NOP)],
        ),
        (
            "thread end instruction writes a physical regfile",
            vec![w(I { sig: 3, ..mov(5, M_R0) }), w(NOP), w(NOP)],
        ),
        (
            "more than one closely coupled peripheral access in one instruction",
            vec![w(I { waddr_mul: SFU_RECIP, cond_mul: 1, ..mov(TMU0_S, M_R0) })],
        ),
        ("op_add", vec![w(add_op(9, R0, M_R0, M_R0))]),
        ("tile buffer access outside a fragment shader", vec![w(mov(TLB_COLOUR_ALL, M_R0))]),
        ("TMU load with no lookup outstanding (the QPU would hang)", vec![w(I { sig: 10, ..NOP })]),
        ("VPM read beyond the vectors set up (undefined data)", vec![w(mov_a(R0, VPM))]),
        (
            "uniform read within two instructions of a uniforms-address write",
            vec![w(mov(UNIF_ADDR, M_R0)), w(NOP), w(mov_a(R1, UNIF))],
        ),
        (
            "both pipes write the same accumulator or I/O register",
            vec![w(I { waddr_mul: R0, cond_mul: 1, ..mov(R0, M_R1) })],
        ),
        ("mutex release by a QPU not holding it", vec![w(mov(MUTEX, M_R0))]),
    ];
    for (reason, mut p) in cases {
        p.extend(end());
        let mut b = Bench::new();
        b.code(CODE, &p);
        b.put(UNIFORMS, &[OUT]);
        b.submit(CODE, UNIFORMS, 4);
        b.run(100);
        let f = b.model().fault().unwrap_or_else(|| panic!("{reason}: no fault"));
        assert_eq!(f.kind.reason(), reason, "{f}");
        assert!(matches!(f.code(), 0x3D01..=0x3D03), "{reason}: {f}");
        assert_eq!(b.completed(), 0, "{reason}");
    }
}

#[test]
fn the_srq_holds_sixteen_requests_and_sets_its_error_bit_beyond() {
    // §10 Tables 65, 68. Every QPU reserved against user programs: nothing dispatches.
    let mut b = Bench::new();
    b.wr(SQRSV0, 0x1111_1111);
    b.wr(SQRSV0 + 4, 0x1111);
    b.code(CODE, &writer());
    b.put(UNIFORMS, &[OUT]);
    for _ in 0..17 {
        b.submit(CODE, UNIFORMS, 1);
    }
    b.run(100);
    let cs = b.rd(SRQCS);
    assert_eq!((cs & 0x3F, cs >> 7 & 1, cs >> 8 & 0xFF), (16, 1, 17));
    // Freeing QPU 5 runs the queue there.
    b.wr(SQRSV0, 0x1101_1111);
    b.run(10_000);
    assert_eq!(b.completed(), 16);
    assert_eq!(b.peek(OUT + 4), 1);
    b.wr(SRQCS, 1 << 7 | 1 << 8);
    assert_eq!(b.rd(SRQCS) & 0xFF80, 0);
}

#[test]
fn load_immediate_per_element_and_mul_pipe_ops() {
    // §3 "Load Immediate" modes 1 (signed) and 3 (unsigned); fmul and the pm colour pack.
    let mut p = vec![
        ldi_elements(R0, 1, 0xAAAA, 0xCCCC),
        ldi_elements(R1, 3, 0xAAAA, 0xCCCC),
        ldi(R2, 0.5f32.to_bits()),
        w(mul_op(1, R3, M_R2, M_R2)),
        ldi_b(VPM_SETUP, vpm_write_setup(0)),
        w(mov(VPM, M_R0)),
        w(mov(VPM, M_R1)),
        w(mov(VPM, M_R3)),
        w(I { pm: 1, pack: 3, ..mul_op(1, VPM, M_R2, M_R2) }),
    ];
    p.extend(store_rows(4, 0));
    let b = run_user(&p);
    // Element i: MS bit = bit i of 0xAAAA, LS bit = bit i of 0xCCCC.
    let two = |i: u32| (0xAAAAu32 >> i & 1) << 1 | (0xCCCC >> i & 1);
    for i in 0..16 {
        let signed = ((two(i) << 30) as i32 >> 30) as u32;
        assert_eq!(b.peek(OUT + 4 * i), signed, "signed lane {i}");
        assert_eq!(b.peek(OUT + 64 + 4 * i), two(i), "unsigned lane {i}");
    }
    assert_eq!(f32::from_bits(b.peek(OUT + 128)), 0.25);
    assert_eq!(b.peek(OUT + 192), 0x4040_4040, "0.25 as 8-bit colour, replicated");
}

#[test]
fn a_texture_lookup_samples_an_lt_texture_through_the_tmu() {
    // §4: T then S written, each reading a configuration uniform (P0: base 0x10_0000, type
    // RGBA8888; P1: width 16, height 4, NEAREST, repeat); the texel arrives in r4 with ldtmu0.
    // Lane i samples s = i/16 (itof of the element number times the small immediate 1/16),
    // t = 0: texel (i, 0), which LT-format (§11) puts in micro-tile i/4, word i%4.
    let mut b = Bench::new();
    for x in 0..16u32 {
        b.put(0x10_0000 + 64 * (x / 4) + 4 * (x % 4), &[0xAB00_0000 | x]);
    }
    let p1 = 4 << 20 | 16 << 8 | 1 << 7 | 1 << 4;
    let mut p = vec![
        w(I { raddr_a: ELEM, ..add_op(8, R0, M_A, M_A) }),
        w(I { sig: 13, raddr_b: 44, ..mul_op(1, R1, M_R0, M_B) }),
        ldi(R2, 0),
        w(mov(57, M_R2)),
        w(mov(TMU0_S, M_R1)),
        w(I { sig: 10, ..NOP }),
    ];
    p.extend(store_vector(M_R4, 0));
    b.run_program(&p, &[0x10_0000, p1, OUT]);
    assert_eq!(b.peek_n(OUT, 16), (0..16).map(|x| 0xAB00_0000 | x).collect::<Vec<_>>());
}

#[test]
fn tmu_addressing_is_swapped_alike_for_writes_and_loads_on_qpus_2_and_3() {
    // §4 "QPU Interface": QPU2 and QPU3 of a slice address the other TMU unless TMU_NOSWAP;
    // a lookup written to TMU0_S and loaded with ldtmu0 still meets itself. QPUs 0 and 1 are
    // reserved against user programs (QPURSV bit 0), so the program runs on QPU 2.
    let mut b = Bench::new();
    b.wr(SQRSV0, 0x11);
    b.put(DATA, &[0xC0FFEE]);
    let mut p = vec![w(mov_a(TMU0_S, UNIF)), w(I { sig: 10, ..NOP })];
    p.extend(store_vector(M_R4, 0));
    b.run_program(&p, &[DATA, OUT]);
    assert_eq!(b.peek(OUT), 0xC0FFEE);
}

#[test]
fn performance_counters_count_their_sources_while_enabled() {
    // §10 Tables 82-86. Counter 0 counts valid instructions (16), counter 1 instruction-cache
    // misses (21), counter 2 hits (20), counter 3 uniforms-cache misses (23); counter 4 is
    // mapped but not enabled. The writer runs eight instructions from one 64-byte code line
    // (16 dword fetches: a miss, then 15 hits; the instruction stalled on the VDW wait is
    // fetched once) and reads one uniform.
    const PCTRC: u32 = 0x670;
    const PCTRE: u32 = 0x674;
    let pctr = |n: u32| 0x680 + 8 * n;
    let pctrs = |n: u32| 0x684 + 8 * n;
    let mut b = Bench::new();
    for (n, source) in [(0, 16), (1, 21), (2, 20), (3, 23), (4, 16)] {
        b.wr(pctrs(n), source);
    }
    assert_eq!(b.rd(pctrs(2)), 20);
    b.wr(PCTRE, 0b1111);
    b.code(CODE, &writer());
    b.put(UNIFORMS, &[OUT]);
    b.submit(CODE, UNIFORMS, 1);
    b.run(1000);
    assert_eq!(b.model().fault(), None);
    let counts: Vec<u32> = (0..5).map(|n| b.rd(pctr(n))).collect();
    assert_eq!(counts, [8, 1, 15, 1, 0]);
    // A cleared counter starts again; disabled ones keep their values; counters are writable.
    b.wr(PCTRC, 0b0001);
    b.wr(PCTRE, 0b0001);
    b.wr(pctr(3), 100);
    b.submit(CODE, UNIFORMS, 1);
    b.run(1000);
    let counts: Vec<u32> = (0..4).map(|n| b.rd(pctr(n))).collect();
    assert_eq!(counts, [8, 1, 15, 100], "only counter 0 counted the second run");
    assert_eq!(b.rd(PCTRE), 1);
}

#[test]
fn with_the_l2_enabled_code_stays_stale_until_the_l2_is_cleared_too() {
    // §10 Tables 71-72: with L2CENA set the slice caches fill from the L2, so clearing the
    // instruction cache alone refetches the L2's stale copy; L2CCLR makes the new code seen.
    let mut b = Bench::new();
    b.wr(L2CACTL, 1);
    let prog = |v: u32| {
        let mut p = vec![ldi(R0, v)];
        p.extend(store_vector(M_R0, 0));
        p
    };
    b.run_program(&prog(1), &[OUT]);
    b.run_program(&prog(2), &[OUT]);
    assert_eq!(b.peek(OUT), 1, "stale in the instruction cache");
    b.wr(SLCACTL, 0xF);
    b.run_program(&prog(3), &[OUT]);
    assert_eq!(b.peek(OUT), 1, "stale in the L2");
    b.wr(L2CACTL, 1 << 2);
    b.wr(SLCACTL, 0xF);
    b.run_program(&prog(4), &[OUT]);
    assert_eq!(b.peek(OUT), 4);
    assert_eq!(b.rd(L2CACTL), 1, "clearing leaves the L2 enabled");
}
