//! The driver against the emulated R520 (`r5xx-model`) in-process: probe, bring-up with the
//! real microcode, ring/IB tests, submission, fences, PIO, interrupts, faults and recovery.

mod common;

use baregpu_radeon_r5xx::gpu::GpuQueue;
use std::time::Duration;

use baregpu_firmware::FirmwareError;
use baregpu_firmware::amd::{CpMicrocode, LoadError, r5xx as fw};
use baregpu_hal::dma::{DmaAllocator, DmaLayout};
use baregpu_hal::pci::{ConfigRegionAccess, PciAddress, PciError};
use baregpu_hal::{Register, RegisterIo, RegisterIoExt};
use baregpu_radeon_r5xx::{
    DeviceGone, FenceError, FenceFailure, FenceStatus, InitError, Interrupts, R5xx, ResetError,
    RingConfig, SubmitError, TestError, USER_SCRATCH, consts, pci,
};
use baregpu_regs::r5xx::Chipset;
use baregpu_regs::r5xx::cp::{
    CP_CSQ_AVAIL, CP_CSQ_CNTL, CP_ME_RAM_ADDR, CP_ME_RAM_DATAH, CP_ME_RAM_DATAL, CP_RB_RPTR,
    CP_RB_WPTR, SCRATCH_REG0,
};
use baregpu_regs::r5xx::rbbm::GEN_INT_STATUS;
use baregpu_ring::ib::IndirectBuffer;
use baregpu_ring::pm4::CommandSink;
use baregpu_ring::r5xx::SUBMIT_ALIGN;
use baregpu_ring::ring::WaitError;
use common::*;
use gpu_device_model::DMA_BASE;
use r5xx_model::{IRQ_LINE, ScratchCompare, error_code};

fn scratch(v: u32) -> SCRATCH_REG0 {
    SCRATCH_REG0::RESET.with_scratch_reg0(v)
}

// --- probe ---------------------------------------------------------------------------------

#[test]
fn probe_finds_the_r520_and_its_register_bar() {
    let gpu = gpu();
    let p = pci::probe(&gpu, gpu.pci_address()).unwrap();
    assert_eq!((p.function.vendor, p.function.device), (0x1002, 0x7100));
    assert_eq!((p.chip, p.name), (Chipset::R520, "Radeon X1800 XT"));
    assert_eq!(p.registers.slot, 0);
    assert_eq!(p.registers.size, 64 * 1024);
    assert_eq!(
        pci::probe(&gpu, PciAddress::new(0, 0, 9, 0)),
        Err(pci::ProbeError::Pci(PciError::NoDevice))
    );
}

/// Configuration space with other IDs in dword 0.
struct OtherIds<'a>(&'a Gpu, u32);

impl ConfigRegionAccess for OtherIds<'_> {
    unsafe fn read(&self, address: PciAddress, offset: u16) -> u32 {
        // SAFETY: forwarded to the in-process device, which has no safety requirements.
        let v = unsafe { ConfigRegionAccess::read(self.0, address, offset) };
        if offset == 0 { self.1 } else { v }
    }
    unsafe fn write(&self, address: PciAddress, offset: u16, value: u32) {
        // SAFETY: as above.
        unsafe { ConfigRegionAccess::write(self.0, address, offset, value) }
    }
}

#[test]
fn probe_rejects_unknown_and_other_family_ids() {
    let gpu = gpu();
    let intel = OtherIds(&gpu, 0x1234_8086);
    assert_eq!(
        pci::probe(&intel, gpu.pci_address()),
        Err(pci::ProbeError::NotSupported { vendor: 0x8086, device: 0x1234 })
    );
    let cypress = OtherIds(&gpu, 0x6898_1002); // Evergreen: in the table, not R5xx
    assert_eq!(
        pci::probe(&cypress, gpu.pci_address()),
        Err(pci::ProbeError::NotSupported { vendor: 0x1002, device: 0x6898 })
    );
    let rv515 = OtherIds(&gpu, 0x7146_1002);
    assert_eq!(pci::probe(&rv515, gpu.pci_address()).unwrap().chip, Chipset::RV515);
}

#[test]
fn enable_turns_on_decoding_and_bus_mastering_before_init() {
    let gpu = gpu_disabled();
    let fw = firmware();
    // Memory decoding off: BAR0 master-aborts, registers read all-ones.
    let err = R5xx::init(&gpu, ModelClock::new(&gpu), &gpu, &fw, small_ring()).unwrap_err();
    assert_eq!(err, InitError::DeviceGone(DeviceGone));
    let command = pci::enable(&gpu, gpu.pci_address()).unwrap();
    assert_eq!(command & 0b110, 0b110, "memory space + bus master");
    let mut drv = R5xx::init(&gpu, ModelClock::new(&gpu), &gpu, &fw, small_ring()).unwrap();
    let f = drv.emit_fence().unwrap();
    drv.wait(&f, FENCE_TIMEOUT).unwrap();
}

// --- bring-up ------------------------------------------------------------------------------

#[test]
fn init_uploads_the_real_microcode_with_1_plus_512_writes_and_passes_the_ring_test() {
    let gpu = gpu();
    let rec = Recording::new(&gpu);
    let fw = firmware();
    let drv = R5xx::init(&rec, ModelClock::new(&gpu), &gpu, &fw, small_ring()).unwrap();
    assert_eq!(rec.writes_to(CP_ME_RAM_ADDR::OFFSET), 1);
    assert_eq!(rec.writes_to(CP_ME_RAM_DATAH::OFFSET), 256);
    assert_eq!(rec.writes_to(CP_ME_RAM_DATAL::OFFSET), 256);
    let report = drv.upload_report();
    assert_eq!((report.entries, report.load_writes, report.verify_writes), (256, 513, 1));
    assert!(gpu.model().microcode_loaded());
    // Entry 5 as the model holds it equals the image's big-endian (high, low) words.
    let e = 5 * 8;
    let high = u64::from(u32::from_be_bytes(fw[e..e + 4].try_into().unwrap()));
    let low = u64::from(u32::from_be_bytes(fw[e + 4..e + 8].try_into().unwrap()));
    assert_eq!(gpu.model().me_ram_entry(5), high << 32 | low);
    // Ring test ran: the scratch register holds the packet's value, written back too.
    assert_eq!(gpu.read_at::<SCRATCH_REG0>(0).unwrap().scratch_reg0(), 0xDEAD_BEEF);
    assert_eq!(drv.scratch_writeback(0), Some(0xDEAD_BEEF));
    assert_clean(&gpu);
    assert_eq!(drv.stats().doorbells, 1, "the ring test is one batch");
}

#[test]
fn malformed_firmware_is_a_typed_error_before_any_register_access_or_allocation() {
    let gpu = gpu();
    let rec = Recording::new(&gpu);
    let real = firmware();
    let mut bad_high = real.clone();
    bad_high[8] = 0x01; // entry 1's high word 0x01xx_xxxx does not fit ME_RAM_DATAH (8 bits)
    let cases: [(&[u8], FirmwareError); 3] = [
        (&[], FirmwareError::Empty),
        (&real[..2047], FirmwareError::TruncatedEntry { len: 2047, entry_bytes: 8 }),
        (
            &bad_high,
            FirmwareError::EntryOutOfRange {
                index: 1,
                high: u32::from_be_bytes(bad_high[8..12].try_into().unwrap()),
            },
        ),
    ];
    for (image, expected) in cases {
        let err = R5xx::init(&rec, ModelClock::new(&gpu), &gpu, image, small_ring()).unwrap_err();
        assert_eq!(err, InitError::Firmware(expected));
        assert_eq!(rec.accesses(), 0, "no register touched for {expected:?}");
    }
    let err =
        R5xx::init(&rec, ModelClock::new(&gpu), &gpu, &real, RingConfig::with_ring_bytes(3000))
            .unwrap_err();
    assert!(matches!(err, InitError::Config(_)), "{err:?}");
    assert_eq!(rec.accesses(), 0);
    // Nothing was allocated either: the bump allocator still starts at its base.
    let r = gpu.allocate(DmaLayout::new(4, 4).unwrap()).unwrap();
    assert_eq!(r.bus_address().0, DMA_BASE);
}

#[test]
fn ring_and_ib_tests_can_be_rerun() {
    let gpu = gpu();
    let mut drv = init(&gpu, small_ring());
    drv.ring_test().unwrap();
    let regions = gpu.dma_outstanding();
    drv.ib_test().unwrap();
    assert_eq!(gpu.model().stats().ibs_started, [1, 0]);
    assert_eq!(gpu.dma_outstanding(), regions, "the IB test's buffer went back");
    drv.ring_test().unwrap();
    assert_clean(&gpu);
}

/// `R520_cp.bin` altered: none of these is microcode the model knows.
fn altered_images() -> [(&'static str, Vec<u8>); 3] {
    let real = firmware();
    let reversed: Vec<u8> = real.chunks_exact(8).rev().flatten().copied().collect();
    let mut flipped = real.clone();
    flipped[0x40 * 8 + 7] ^= 1 << 3; // entry 0x40, DATAL bit 3
    let mut truncated = real[..1024].to_vec();
    truncated.resize(2048, 0);
    [("reversed", reversed), ("bit-flipped", flipped), ("truncated and padded", truncated)]
}

#[test]
fn microcode_the_device_does_not_run_is_a_ring_test_timeout_and_leaves_it_stopped() {
    // Each image parses (256 entries, 8-bit high words) and reads back as written, but it is
    // not microcode that runs PM4: the ring test times out, bounded by test_timeout.
    for (what, image) in altered_images() {
        let gpu = gpu();
        let err = R5xx::init(&gpu, ModelClock::new(&gpu), &gpu, &image, small_ring()).unwrap_err();
        match err {
            InitError::RingTest(TestError::Mismatch { expected, found, waited }) => {
                assert_eq!((expected, found), (0xDEAD_BEEF, 0xCAFE_DEAD), "{what}");
                assert!(waited.waited_us >= 100_000, "{what}: {waited:?}");
            }
            e => panic!("{what}: expected a ring-test timeout, got {e:?}"),
        }
        assert!(!gpu.model().microcode_loaded(), "{what}");
        assert_eq!(gpu.read32(CP_CSQ_CNTL::OFFSET), 0, "{what}: streams left off");
        assert_eq!(gpu.read32(CP_RB_RPTR::OFFSET), 0, "{what}: nothing fetched");
        assert_clean(&gpu);
        // The same device comes up with the real image.
        let mut drv = init(&gpu, small_ring());
        let f = drv.emit_fence().unwrap();
        drv.wait(&f, FENCE_TIMEOUT).unwrap();
    }
}

#[test]
fn microcode_cannot_be_loaded_while_the_streams_run() {
    // The loader checks first (§5.8 step 1): a typed error, nothing written.
    let gpu = gpu();
    let mut drv = init(&gpu, small_ring());
    let image = firmware();
    let microcode = CpMicrocode::parse(&image).unwrap();
    assert_eq!(fw::upload(&gpu, &microcode), Err(LoadError::CommandStreamsEnabled { csq_mode: 4 }));
    assert_clean(&gpu);
    // Loading without the check: the device records the violation (error state), the next
    // fence times out, and a function-level reset plus recover brings it back.
    let before = drv.emit_fence().unwrap();
    drv.wait(&before, FENCE_TIMEOUT).unwrap();
    fw::load(&gpu, &microcode);
    assert_eq!(gpu.error_code(), r5xx_model::error_code::ME_RAM_WRITE_WHILE_RUNNING);
    let lost = drv.emit_fence().unwrap();
    assert!(matches!(drv.wait(&lost, FENCE_TIMEOUT), Err(FenceError::Timeout { .. })));
    gpu.reset();
    drv.recover(&image).unwrap();
    let f = drv.emit_fence().unwrap();
    drv.wait(&f, FENCE_TIMEOUT).unwrap();
    assert_clean(&gpu);
}

// --- indirect buffers ------------------------------------------------------------------------

#[test]
fn ib1_takes_three_ring_dwords_and_runs_a_padded_scratch_write() {
    let gpu = gpu();
    let mut drv = init(&gpu, small_ring());
    let region = gpu.allocate(DmaLayout::new(256, 64).unwrap()).unwrap();
    let mut ib = IndirectBuffer::new(&region).unwrap();
    ib.writer().write_reg_at(USER_SCRATCH, scratch(0x1B1)).unwrap();
    assert_eq!(ib.pad_to(SUBMIT_ALIGN), Ok(14));
    let desc = ib.descriptor().unwrap();
    assert_eq!(desc.dwords(), 16);

    let fence = drv
        .submit(8, |s| {
            let before = s.ring().head();
            s.indirect_buffer(desc)?;
            assert_eq!(s.ring().head() - before, 3, "IB1 = type-0 CP_IB_BASE + CP_IB_BUFSZ");
            s.fence()
        })
        .unwrap();
    drv.wait(&fence, FENCE_TIMEOUT).unwrap();
    assert_eq!(drv.scratch_writeback(USER_SCRATCH), Some(0x1B1));
    assert_eq!(gpu.model().stats().ibs_started, [1, 0]);
    assert_eq!(drv.stats().indirect_buffers, 1);
    assert_clean(&gpu);
}

#[test]
fn ib2_started_from_inside_an_ib1_returns_to_it() {
    let gpu = gpu();
    let mut drv = init(&gpu, small_ring());
    let mem2 = gpu.allocate(DmaLayout::new(64, 64).unwrap()).unwrap();
    let mut ib2 = IndirectBuffer::new(&mem2).unwrap();
    ib2.writer().write_reg_at(USER_SCRATCH + 1, scratch(0x2B2)).unwrap();
    ib2.pad_to(SUBMIT_ALIGN).unwrap();

    let mem1 = gpu.allocate(DmaLayout::new(256, 64).unwrap()).unwrap();
    let mut ib1 = IndirectBuffer::new(&mem1).unwrap();
    let before = ib1.len();
    ib1.writer().indirect_buffer2(ib2.descriptor().unwrap()).unwrap();
    assert_eq!(ib1.len() - before, 3, "IB2 = type-0 CP_IB2_BASE + CP_IB2_BUFSZ (§5.10)");
    // After IB2 is exhausted the CP continues in IB1 (§5.10).
    ib1.writer().write_reg_at(USER_SCRATCH, scratch(0x1B1)).unwrap();
    ib1.pad_to(SUBMIT_ALIGN).unwrap();

    let fence = drv
        .submit(8, |s| {
            s.indirect_buffer(ib1.descriptor()?)?;
            s.fence()
        })
        .unwrap();
    drv.wait(&fence, FENCE_TIMEOUT).unwrap();
    assert_eq!(drv.scratch_writeback(USER_SCRATCH + 1), Some(0x2B2));
    assert_eq!(drv.scratch_writeback(USER_SCRATCH), Some(0x1B1));
    assert_eq!(gpu.model().stats().ibs_started, [1, 1]);
    assert_clean(&gpu);
}

// --- submission ----------------------------------------------------------------------------

#[test]
fn ten_thousand_submissions_wrap_a_4k_ring_with_ordered_fences() {
    let gpu = gpu();
    let mut drv = init(&gpu, small_ring());
    assert_eq!(drv.ring().size_dwords(), 1024);
    let doorbells = drv.stats().doorbells;
    let start = u64::from(drv.ring().head());
    let mut last = drv.last_signalled();
    let mut pending = Vec::new();
    for i in 0..10_000u32 {
        let fence = drv
            .submit(2 + (2 + i as usize % 4) + 2, |s| {
                s.writer().write_reg_at(USER_SCRATCH, scratch(i))?;
                // A variable-length NOP so packets straddle the ring's end at varying places.
                let body = [i; 4];
                s.writer().nop(&body[..=(i as usize % 4)])?;
                s.fence()
            })
            .unwrap();
        assert_eq!(fence.seq(), last + 1 + pending.len() as u64);
        pending.push(fence);
        if i % 100 == 99 {
            // Wait on the newest: all earlier ones must be signalled too, in order.
            drv.wait(pending.last().unwrap(), FENCE_TIMEOUT).unwrap();
            for f in &pending {
                assert!(drv.signalled(f));
            }
            assert!(drv.last_signalled() > last);
            last = drv.last_signalled();
            pending.clear();
            assert_eq!(drv.scratch_writeback(USER_SCRATCH), Some(i));
        }
    }
    let stats = drv.stats();
    assert_eq!(stats.doorbells - doorbells, 10_000, "one doorbell per submission");
    assert_eq!(stats.fences, 10_000);
    assert_eq!(drv.last_signalled(), 10_000);
    // 10,000 × 16 padded dwords through a 1024-dword ring: it wrapped over 150 times.
    let dwords = 10_000u64 * 16;
    assert!(dwords / 1024 > 150);
    assert_eq!(u64::from(drv.ring().head()), (start + dwords) % 1024);
    // The driver never overwrote a dword the CP had not consumed: the CP parsed exactly the
    // packets written (the ring test's write, then per submission two type-0 writes and a NOP,
    // and every padding filler), none cut short, none lost.
    drv.wait_ring_idle().unwrap();
    let parsed = gpu.model().stats().packets;
    assert_eq!(parsed, [1 + 20_000, 0, drv.stats().padding_units, 10_000]);
    assert_clean(&gpu);
    // Waits for ring space ran against a CP that was still working: they saw its read pointer
    // part-way between where it was and the committed write pointer.
    assert_partial_consumption(&gpu, drv.ring());
}

#[test]
fn fences_signal_one_after_another_while_the_cp_works_through_a_batch() {
    // One doorbell for 48 fences; the CP consumes them over a dozen ticks (one MAX_FETCH chunk
    // of 16 dwords, 4 fences, per tick), so a waiter sees them signal in order, a few at a time.
    let gpu = gpu();
    let mut drv = init(&gpu, small_ring());
    let fences = drv
        .submit(48 * 4, |s| {
            (0..48)
                .map(|i| {
                    s.writer().write_reg_at(USER_SCRATCH, scratch(i))?;
                    s.fence()
                })
                .collect::<Result<Vec<_>, _>>()
        })
        .unwrap();
    let last = *fences.last().unwrap();
    let mut seen = vec![drv.last_signalled()];
    let clock = ModelClock::new(&gpu);
    let polled = baregpu_hal::time::poll_until(&clock, FENCE_TIMEOUT, || {
        let now = drv.last_signalled();
        if seen.last() != Some(&now) {
            seen.push(now);
        }
        drv.signalled(&last).then_some(())
    });
    polled.unwrap();
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "in order: {seen:?}");
    if stepwise(&gpu) {
        assert!(seen[0] < last.seq(), "in flight when the doorbell write returned: {seen:?}");
        assert!(seen.len() > 3, "signalled a few at a time, not all at once: {seen:?}");
    }
    // The ring drains part by part too: 200 fences are 400 dwords, and the CP writes its read
    // pointer back every RB_BLKSZ = 2^7 quadwords (256 dwords) on this ring, and when empty.
    drv.submit(200 * 2, |s| (0..200).try_for_each(|_| s.fence().map(drop))).unwrap();
    drv.wait_ring_idle().unwrap();
    assert_partial_consumption(&gpu, drv.ring());
    assert_clean(&gpu);
}

#[test]
fn a_batch_rings_one_doorbell_and_is_padded_to_16_dwords() {
    let gpu = gpu();
    let rec = Recording::new(&gpu);
    let mut drv = R5xx::init(&rec, ModelClock::new(&gpu), &gpu, &firmware(), small_ring()).unwrap();
    let wptr_writes = rec.writes_to(CP_RB_WPTR::OFFSET);
    let doorbells = drv.stats().doorbells;
    let mut s = drv.begin();
    let mut fences = Vec::new();
    for i in 0..20 {
        s.reserve(2).unwrap();
        s.writer().write_reg_at(USER_SCRATCH, scratch(i)).unwrap();
        fences.push(s.fence().unwrap());
    }
    assert_eq!(s.ring().pending_dwords(), 80);
    s.flush().unwrap();
    if stepwise(&gpu) {
        // The doorbell write advanced the CP by at most three 16-dword fetches.
        assert!(!drv.signalled(fences.last().unwrap()), "in flight after the doorbell");
    }
    assert_eq!(rec.writes_to(CP_RB_WPTR::OFFSET) - wptr_writes, 1);
    assert_eq!(drv.stats().doorbells - doorbells, 1);
    assert_eq!(drv.ring().head() % 16, 0);
    drv.wait(fences.last().unwrap(), FENCE_TIMEOUT).unwrap();
    assert_eq!(drv.scratch_writeback(USER_SCRATCH), Some(19));
    // An empty batch rings nothing; a dropped one is flushed.
    drv.begin().flush().unwrap();
    assert_eq!(rec.writes_to(CP_RB_WPTR::OFFSET) - wptr_writes, 1);
    let f = {
        let mut s = drv.begin();
        s.fence().unwrap()
    };
    assert_eq!(rec.writes_to(CP_RB_WPTR::OFFSET) - wptr_writes, 2);
    drv.wait(&f, FENCE_TIMEOUT).unwrap();
    assert_clean(&gpu);
}

#[test]
fn back_pressure_waits_for_a_working_cp_and_never_overwrites_what_it_has_not_read() {
    // 64-dword batches into a 1024-dword ring, never waiting on a fence: the driver must wait
    // for ring space while the CP consumes at its own pace.
    let gpu = gpu();
    let mut drv = init(&gpu, small_ring());
    let mut fences = Vec::new();
    for i in 0..200u32 {
        let f = drv
            .submit(64, |s| {
                for k in 0..15 {
                    s.writer().write_reg_at(USER_SCRATCH, scratch(i * 16 + k))?;
                }
                s.fence()
            })
            .unwrap();
        fences.push(f);
    }
    drv.wait(fences.last().unwrap(), FENCE_TIMEOUT).unwrap();
    assert!(fences.iter().all(|f| drv.signalled(f)));
    assert_eq!(drv.scratch_writeback(USER_SCRATCH), Some(199 * 16 + 14));
    drv.wait_ring_idle().unwrap();
    // Exactly what was written was parsed: 16 type-0 packets per batch (+ the ring test's).
    let parsed = gpu.model().stats().packets;
    assert_eq!(parsed, [1 + 200 * 16, 0, drv.stats().padding_units, 0]);
    assert_clean(&gpu);
    assert!(drv.ring().rptr_reads() > 0, "200 × 64 dwords through 1024 must wait for space");
    assert_partial_consumption(&gpu, drv.ring());
}

#[test]
fn back_pressure_times_out_without_overwriting_unconsumed_ring_memory() {
    let gpu = gpu();
    let mut drv = init(&gpu, small_ring());
    set_faults(&gpu, |f| f.cp_stall = true);
    // Fill the ring: 63 batches of 16 dwords fit in 1023 free dwords.
    let mut fences = Vec::new();
    let mut full = None;
    for _ in 0..100 {
        match drv.submit(8, |s| {
            s.writer().nop(&[0; 5])?;
            s.fence()
        }) {
            Ok(f) => fences.push(f),
            Err(e) => {
                full = Some(e);
                break;
            }
        }
    }
    let err = full.expect("the ring must fill up");
    assert!(
        matches!(err, SubmitError::RingFull(WaitError::TimedOut { .. })),
        "typed back-pressure error, got {err:?}"
    );
    let ring_bytes = drv.ring().size_dwords() * 4;
    let snapshot = |drv: &Driver<'_>| {
        let mut words = vec![0u32; ring_bytes / 4];
        drv.ring().buffer().read_slice(0, &mut words).unwrap();
        words
    };
    let before = snapshot(&drv);
    let head = drv.ring().head();
    for _ in 0..3 {
        let e = drv.emit_fence().unwrap_err();
        assert!(matches!(e, SubmitError::RingFull(_)), "{e:?}");
    }
    assert_eq!(snapshot(&drv), before, "unconsumed ring dwords were never overwritten");
    assert_eq!(drv.ring().head(), head);
    let e = drv.wait(fences.last().unwrap(), FENCE_TIMEOUT).unwrap_err();
    assert!(matches!(e, FenceError::Timeout { .. }), "{e:?}");
    // Clear the fault, reset: usable again.
    set_faults(&gpu, |f| f.cp_stall = false);
    drv.reset().unwrap();
    let f = drv.emit_fence().unwrap();
    drv.wait(&f, FENCE_TIMEOUT).unwrap();
}

// --- PIO -----------------------------------------------------------------------------------

#[test]
fn pio_mode_pushes_packets_through_the_primary_aperture() {
    let gpu = gpu();
    let mut drv = init(&gpu, small_ring());
    let head = drv.ring().head();
    let f = {
        let mut pio = drv.pio().unwrap();
        pio.packets(|w| {
            w.write_reg_at(USER_SCRATCH, scratch(0x9100))?;
            w.nop(&[1, 2, 3])
        })
        .unwrap();
        let f = pio.fence().unwrap();
        assert_eq!(pio.dwords_written(), 2 + 4 + 2, "scratch write, NOP, fence");
        pio.finish().unwrap();
        f
    };
    drv.wait(&f, FENCE_TIMEOUT).unwrap();
    assert_eq!(drv.scratch_writeback(USER_SCRATCH), Some(0x9100));
    assert_eq!(drv.ring().head(), head, "nothing went through the ring");
    assert_eq!(gpu.model().stats().pio_dropped, 0);
    assert_eq!(drv.stats().direct_units, 8);
    // Back in bus-master mode: the ring works.
    let f = drv.emit_fence().unwrap();
    drv.wait(&f, FENCE_TIMEOUT).unwrap();
    // 200 packets: more than the 128-dword queue (CP_CSQ_MODE.INDIRECT1_START = 16 double
    // octwords, which the model sizes the queue by), fine while the CP drains it.
    let mut pio = drv.pio().unwrap();
    for i in 0..200 {
        pio.packets(|w| w.write_reg_at(USER_SCRATCH, scratch(i))).unwrap();
    }
    pio.finish().unwrap();
    assert_eq!(drv.scratch_writeback(USER_SCRATCH), Some(199));
    assert_clean(&gpu);
}

#[test]
fn pio_respects_the_128_dword_queue_the_driver_programmed() {
    // 400 dwords through the 128-dword primary queue: the driver re-reads CP_CSQ_AVAIL when
    // its estimate says the next packet would not fit, and the model (which would fail the
    // device on dword 129) never overflows.
    let gpu = gpu();
    let rec = Recording::new(&gpu);
    let mut drv = R5xx::init(&rec, ModelClock::new(&gpu), &gpu, &firmware(), small_ring()).unwrap();
    assert_eq!(
        gpu.model().queue_capacity(r5xx_model::Stream::Primary),
        consts::PIO_PRIMARY_QUEUE_DWORDS
    );
    let avail = |rec: &Recording<'_>| {
        rec.log.borrow().iter().filter(|(w, o, _)| !w && *o == CP_CSQ_AVAIL::OFFSET).count()
    };
    let mut pio = drv.pio().unwrap();
    for i in 0..200 {
        pio.packets(|w| w.write_reg_at(USER_SCRATCH, scratch(i))).unwrap();
    }
    pio.finish().unwrap();
    assert!(avail(&rec) >= 3, "400 dwords / 128 needs at least 3 re-reads: {}", avail(&rec));
    assert_eq!(drv.scratch_writeback(USER_SCRATCH), Some(199));
    assert_clean(&gpu);
}

#[test]
fn pio_queue_full_is_a_typed_error_not_an_overflow() {
    let gpu = gpu();
    let mut drv = init(&gpu, small_ring());
    set_faults(&gpu, |f| f.cp_stall = true);
    let mut pio = drv.pio().unwrap();
    let mut err = None;
    for i in 0..100 {
        if let Err(e) = pio.packets(|w| w.write_reg_at(USER_SCRATCH, scratch(i))) {
            err = Some(e);
            break;
        }
    }
    assert_eq!(
        err,
        Some(SubmitError::PioQueueFull { needed: 2, free: 0 }),
        "{} dwords fill the queue",
        consts::PIO_PRIMARY_QUEUE_DWORDS
    );
    // The stalled CP never drains the queue: a drain timeout naming the dwords still queued.
    assert!(matches!(
        pio.finish(),
        Err(SubmitError::PioDrainTimeout { queued: consts::PIO_PRIMARY_QUEUE_DWORDS, .. })
    ));
    assert_eq!(gpu.error_code(), 0, "no PIO_OVERFLOW: the driver never overfilled the queue");
    set_faults(&gpu, |f| f.cp_stall = false);
    drv.reset().unwrap();
    let f = drv.emit_fence().unwrap();
    drv.wait(&f, FENCE_TIMEOUT).unwrap();
}

// --- faults, reset, recovery -----------------------------------------------------------------

#[test]
fn cp_stall_is_a_fence_timeout_and_reset_restores_service() {
    let gpu = gpu();
    let mut drv = init(&gpu, small_ring());
    let done = drv.emit_fence().unwrap();
    drv.wait(&done, FENCE_TIMEOUT).unwrap();
    set_faults(&gpu, |f| f.cp_stall = true);
    let stuck = drv.emit_fence().unwrap();
    let err = drv.wait(&stuck, FENCE_TIMEOUT).unwrap_err();
    match err {
        FenceError::Timeout { seq, last_signalled, waited, progressed } => {
            assert_eq!((seq, last_signalled), (stuck.seq(), done.seq()));
            assert!(!progressed, "a stalled CP does not move");
            assert!(waited.waited_us >= 50_000, "{waited:?}");
        }
        e => panic!("expected a timeout, got {e:?}"),
    }
    assert!(!drv.signalled(&stuck));
    // The reset's ring test fails while the fault persists.
    assert!(matches!(drv.reset(), Err(ResetError::RingTest(TestError::Mismatch { .. }))));
    set_faults(&gpu, |f| f.cp_stall = false);
    let report = drv.reset().unwrap();
    assert_eq!(report.completed, done.seq());
    assert_eq!(report.last_emitted(), stuck.seq());
    // The lost fence is no longer pending: it completed with an error, and waiters see it.
    assert_eq!(drv.fence_status(&stuck), FenceStatus::Failed(FenceFailure::Lost));
    assert_eq!(
        drv.wait(&stuck, FENCE_TIMEOUT),
        Err(FenceError::Failed { seq: stuck.seq(), failure: FenceFailure::Lost })
    );
    assert_eq!(drv.stats().failed_fences, 1);
    assert_eq!(drv.ring().head() % 16, 0);
    for i in 0..50 {
        let f = drv
            .submit(4, |s| {
                s.writer().write_reg_at(USER_SCRATCH, scratch(i))?;
                s.fence()
            })
            .unwrap();
        drv.wait(&f, FENCE_TIMEOUT).unwrap();
        assert!(f.seq() > stuck.seq());
    }
    assert_eq!(drv.stats().resets, 1);
}

#[test]
fn a_slow_cp_is_not_a_hung_one() {
    // One packet per 10 engine ticks. Under seeded pacing a clock reading (10 µs of the test
    // clock) gives 1.5 ticks on average: a 16-dword fence batch (scratch write, fence, 12
    // fillers = 14 packets) takes ~1 ms, a full 1024-dword ring of fences (~510 packets)
    // ~35 ms, inside the 50 ms the test waits and the driver's 100 ms defaults. Nothing times
    // out, nothing is reset.
    let gpu = gpu_with(r5xx_model::Faults { slow: Some(10), ..Default::default() });
    let mut drv = init(&gpu, small_ring());
    for i in 0..20 {
        let f = drv
            .submit(4, |s| {
                s.writer().write_reg_at(USER_SCRATCH, scratch(i))?;
                s.fence()
            })
            .unwrap();
        drv.wait(&f, FENCE_TIMEOUT).unwrap();
    }
    // Back-pressure on a slow CP: 80 batches of 64 dwords through 1024 dwords.
    for _ in 0..80 {
        drv.submit(64, |s| (0..31).try_for_each(|_| s.fence().map(drop))).unwrap();
    }
    drv.wait_ring_idle().unwrap();
    // PIO against a slow CP: the queue drains slowly, the driver waits within its timeout.
    let mut pio = drv.pio().unwrap();
    for i in 0..100 {
        pio.packets(|w| w.write_reg_at(USER_SCRATCH, scratch(i))).unwrap();
    }
    let f = pio.fence().unwrap();
    pio.finish().unwrap();
    drv.wait(&f, FENCE_TIMEOUT).unwrap();
    assert_eq!((drv.stats().resets, drv.stats().recoveries), (0, 0));
    assert_clean(&gpu);
}

#[test]
fn a_cp_slower_than_the_timeout_is_reported_and_recovers() {
    // The bound of "not hung": 60,000 ticks per packet makes one fence batch take far longer
    // than 50 ms of the test clock. Run to idle there is no time: the batch completes anyway.
    let gpu = gpu();
    let mut drv = init(&gpu, small_ring());
    set_faults(&gpu, |f| f.slow = Some(60_000));
    let f = drv.emit_fence().unwrap();
    let waited = drv.wait(&f, FENCE_TIMEOUT);
    if paced(&gpu) {
        assert!(matches!(waited, Err(FenceError::Timeout { .. })), "{waited:?}");
        set_faults(&gpu, |f| f.slow = None);
        drv.reset().unwrap();
    } else {
        waited.unwrap();
    }
    let f = drv.emit_fence().unwrap();
    drv.wait(&f, FENCE_TIMEOUT).unwrap();
    assert_clean(&gpu);
}

#[test]
fn a_stream_with_writes_to_no_register_is_counted_by_the_model() {
    // A type-0 packet (§6.1.1) hand-encoded for offset 0x7EC, where no register lives (between
    // CP_VP_ADDR_CNTL and CP_CSQ_ADDR): the CP parses it and the write goes nowhere.
    let gpu = gpu();
    let mut drv = init(&gpu, small_ring());
    let f = drv
        .submit(4, |s| {
            s.reserve(2)?;
            let mut sink = s.writer().into_sink();
            sink.push(0x7EC >> 2).map_err(baregpu_ring::pm4::Pm4Error::from)?;
            sink.push(0x1234).map_err(baregpu_ring::pm4::Pm4Error::from)?;
            s.fence()
        })
        .unwrap();
    drv.wait(&f, FENCE_TIMEOUT).unwrap();
    assert_eq!(gpu.model().stats().writes_dropped, 1);
    assert_eq!(gpu.error_code(), 0, "dropped, not an error: only the count tells");
}

#[test]
fn all_ones_is_device_gone_everywhere_and_never_a_loop() {
    let dead = gpu_with(r5xx_model::Faults { registers_all_ones: true, ..Default::default() });
    let rec = Recording::new(&dead);
    let err =
        R5xx::init(&rec, ModelClock::new(&dead), &dead, &firmware(), small_ring()).unwrap_err();
    assert_eq!(err, InitError::DeviceGone(DeviceGone));
    assert_eq!(dead.dma_outstanding(), 0, "the failed init gave the ring and writeback back");
    assert_eq!(
        (rec.reads.get(), rec.writes.get()),
        (1, 2),
        "one read, then only CP_CSQ_CNTL/CP_CSQ_MODE = 0 on cleanup: no wait, no upload"
    );

    let gpu = gpu();
    let mut drv = init(&gpu, small_ring());
    drv.enable_interrupts(Interrupts::NONE.with_software(true)).unwrap();
    gpu.ack_irq(IRQ_LINE); // the enable's self-test interrupt
    set_faults(&gpu, |f| f.registers_all_ones = true);
    assert!(drv.device_gone());
    let f = drv.emit_fence().unwrap(); // no register read on the submit path
    assert_eq!(drv.wait(&f, Duration::from_secs(3600)), Err(FenceError::DeviceGone(DeviceGone)));
    assert_eq!(drv.reset(), Err(ResetError::DeviceGone(DeviceGone)));
    assert_eq!(drv.recover(&firmware()), Err(InitError::DeviceGone(DeviceGone)));
    assert_eq!(drv.ring_test(), Err(TestError::DeviceGone(DeviceGone)));
    assert_eq!(drv.handle_interrupts(), Err(baregpu_radeon_r5xx::DeviceGone));
    assert!(matches!(drv.pio(), Err(SubmitError::DeviceGone(DeviceGone))));
    // Fill the ring: the back-pressure wait notices too.
    let mut last = Ok(());
    for _ in 0..100 {
        last = drv.submit(8, |s| s.writer().nop(&[0; 7]).map_err(Into::into));
        if last.is_err() {
            break;
        }
    }
    assert_eq!(last, Err(SubmitError::DeviceGone(DeviceGone)));
}

#[test]
fn corrupt_me_ram_is_a_microcode_readback_error() {
    let gpu = gpu_with(r5xx_model::Faults { me_ram_corrupt: Some(17), ..Default::default() });
    let err = R5xx::init(&gpu, ModelClock::new(&gpu), &gpu, &firmware(), small_ring()).unwrap_err();
    match err {
        InitError::Microcode(LoadError::Readback { index, expected, found }) => {
            assert_eq!(index, 17);
            assert_eq!(found.low ^ expected.low, 1, "bit 0 flipped");
        }
        e => panic!("expected a read-back error, got {e:?}"),
    }
}

#[test]
fn dma_fault_is_detected_and_recovered_after_a_function_level_reset() {
    let gpu = gpu();
    let mut drv = init(&gpu, small_ring());
    let ok = drv.emit_fence().unwrap();
    drv.wait(&ok, FENCE_TIMEOUT).unwrap();
    set_faults(&gpu, |f| f.dma_fault_next_fetch = true);
    let lost = drv.emit_fence().unwrap();
    let err = drv.wait(&lost, FENCE_TIMEOUT).unwrap_err();
    assert!(
        matches!(err, FenceError::Timeout { last_signalled, .. } if last_signalled == ok.seq())
    );
    assert_eq!(gpu.error_code(), error_code::DMA_FETCH_FAULT);
    // A soft reset cannot lift the bus-error state: the ring test says so.
    assert!(matches!(drv.reset(), Err(ResetError::RingTest(_))));
    // The platform's function-level reset (power-on state: microcode gone), then recover.
    gpu.reset();
    assert!(!gpu.model().microcode_loaded());
    let report = drv.recover(&firmware()).unwrap();
    assert!(report.microcode_reloaded);
    assert_eq!(report.fences.completed, ok.seq());
    assert_eq!(drv.fence_status(&lost), FenceStatus::Failed(FenceFailure::Lost));
    for _ in 0..20 {
        let f = drv.emit_fence().unwrap();
        drv.wait(&f, FENCE_TIMEOUT).unwrap();
    }
    drv.ib_test().unwrap();
    assert_eq!(drv.stats().recoveries, 1);
}

#[test]
fn recover_keeps_good_microcode_and_rejects_bad_images_untouched() {
    let gpu = gpu();
    let mut drv = init(&gpu, small_ring());
    let report = drv.recover(&firmware()).unwrap();
    assert!(!report.microcode_reloaded, "read-back matched: no reload");
    assert_eq!(
        drv.recover(&[0u8; 7]),
        Err(InitError::Firmware(FirmwareError::TruncatedEntry { len: 7, entry_bytes: 8 }))
    );
    let f = drv.emit_fence().unwrap();
    drv.wait(&f, FENCE_TIMEOUT).unwrap();
}

#[test]
fn recover_reloads_microcode_after_a_corrupted_readback_and_reports_persistent_corruption() {
    let gpu = gpu();
    let mut drv = init(&gpu, small_ring());
    set_faults(&gpu, |f| f.me_ram_corrupt = Some(3));
    // The read-back keeps failing after the reload: a typed error, not a loop.
    assert!(matches!(
        drv.recover(&firmware()),
        Err(InitError::Microcode(LoadError::Readback { index: 3, .. }))
    ));
    set_faults(&gpu, |f| f.me_ram_corrupt = None);
    let report = drv.recover(&firmware()).unwrap();
    assert!(!report.microcode_reloaded, "the RAM itself was fine");
    let f = drv.emit_fence().unwrap();
    drv.wait(&f, FENCE_TIMEOUT).unwrap();
}

// --- interrupts ----------------------------------------------------------------------------

#[test]
fn software_interrupt_from_the_ring_is_delivered_and_acknowledged() {
    let gpu = gpu();
    let mut drv = init(&gpu, small_ring());
    drv.enable_interrupts(Interrupts::NONE.with_software(true)).unwrap();
    gpu.ack_irq(IRQ_LINE); // the enable's self-test interrupt
    gpu.take_interrupts();
    let f = drv
        .submit(4, |s| {
            let f = s.fence()?;
            s.software_interrupt()?;
            Ok(f)
        })
        .unwrap();
    drv.wait(&f, FENCE_TIMEOUT).unwrap();
    assert_eq!(gpu.take_interrupts(), 1);
    assert_eq!(gpu.irq_status() & IRQ_LINE, IRQ_LINE);
    assert_eq!(drv.handle_interrupts(), Ok(Interrupts::NONE.with_software(true)));
    assert!(!RegisterIoExt::read::<GEN_INT_STATUS>(&gpu).sw_int(), "acked");
    gpu.ack_irq(IRQ_LINE);
    assert_eq!(gpu.irq_status() & IRQ_LINE, 0, "line dropped after the ack");
    assert_eq!(drv.handle_interrupts(), Ok(Interrupts::default()), "nothing pending");
    // From the host too; and not delivered once disabled.
    drv.raise_software_interrupt();
    assert_eq!(gpu.take_interrupts(), 1);
    assert!(drv.handle_interrupts().unwrap().software);
    gpu.ack_irq(IRQ_LINE);
    drv.enable_interrupts(Interrupts::default()).unwrap();
    drv.raise_software_interrupt();
    assert_eq!(gpu.take_interrupts(), 0);
}

#[test]
fn enabling_the_software_interrupt_tests_it_from_the_ring() {
    // The self-test's interrupt arrived and was acknowledged.
    let gpu = gpu();
    let mut drv = init(&gpu, small_ring());
    gpu.take_interrupts();
    drv.enable_interrupts(Interrupts::NONE.with_software(true)).unwrap();
    gpu.ack_irq(IRQ_LINE); // the enable's self-test interrupt
    assert_eq!(gpu.take_interrupts(), 1, "the test's interrupt");
    assert!(!RegisterIoExt::read::<GEN_INT_STATUS>(&gpu).sw_int(), "acknowledged");
    // A CP that never runs the test's packet: a typed error, not a silent success.
    let gpu = self::gpu();
    let mut drv = init(&gpu, small_ring());
    set_faults(&gpu, |f| f.cp_stall = true);
    match drv.enable_interrupts(Interrupts::NONE.with_software(true)) {
        Err(TestError::NoInterrupt { waited, .. }) => assert!(waited.polls > 1),
        other => panic!("{other:?}"),
    }
    // The scratch interrupt alone has nothing to fire from the ring: no test.
    let gpu = self::gpu();
    let mut drv = init(&gpu, small_ring());
    set_faults(&gpu, |f| f.cp_stall = true);
    assert_eq!(drv.enable_interrupts(Interrupts::NONE.with_scratch(true)), Ok(()));
}

#[test]
fn scratch_interrupt_fires_on_the_fence_writeback() {
    let gpu = gpu();
    let mut drv = init(&gpu, small_ring());
    drv.enable_interrupts(Interrupts::NONE.with_scratch(true)).unwrap();
    gpu.take_interrupts();
    // White-box arm (§5.9: the compare's DRV_REGS are undocumented): pair 0 = SCRATCH_REG0
    // (low) and SCRATCH_REG1 (fences, high) >= fence 3 in the high word.
    gpu.model_mut().set_scratch_compare(Some(ScratchCompare { pair: 0, reference: 3 << 32 }));
    for _ in 0..2 {
        let f = drv.emit_fence().unwrap();
        drv.wait(&f, FENCE_TIMEOUT).unwrap();
    }
    assert_eq!(drv.last_signalled(), 2);
    assert_eq!(gpu.take_interrupts(), 0);
    let f = drv.emit_fence().unwrap();
    drv.wait(&f, FENCE_TIMEOUT).unwrap();
    assert_eq!(gpu.take_interrupts(), 1);
    assert_eq!(drv.handle_interrupts(), Ok(Interrupts::NONE.with_scratch(true)));
    assert!(!RegisterIoExt::read::<GEN_INT_STATUS>(&gpu).scratch_int_stat(), "acked");
    gpu.ack_irq(IRQ_LINE);
}

#[test]
fn interrupts_survive_reset_and_shutdown_gives_memory_back() {
    let gpu = gpu();
    let mut drv = init(&gpu, small_ring());
    drv.enable_interrupts(Interrupts::NONE.with_software(true)).unwrap();
    gpu.ack_irq(IRQ_LINE); // the enable's self-test interrupt
    drv.reset().unwrap();
    gpu.take_interrupts();
    drv.raise_software_interrupt();
    assert_eq!(gpu.take_interrupts(), 1);
    assert!(drv.handle_interrupts().unwrap().software);
    assert_eq!(gpu.dma_outstanding(), 2, "ring and writeback page");
    drv.shutdown();
    assert!(gpu.read32(baregpu_regs::r5xx::cp::CP_CSQ_CNTL::OFFSET) == 0, "streams off");
    assert_eq!(gpu.dma_outstanding(), 0, "the memory went back to the allocator");
}

#[test]
fn dropping_the_driver_stops_the_cp_before_giving_its_memory_back() {
    let gpu = gpu();
    let drv = init(&gpu, small_ring());
    assert_ne!(gpu.read32(baregpu_regs::r5xx::cp::CP_CSQ_CNTL::OFFSET), 0, "streams on");
    drop(drv);
    assert_eq!(gpu.read32(baregpu_regs::r5xx::cp::CP_CSQ_CNTL::OFFSET), 0, "streams off");
    assert_eq!(gpu.dma_outstanding(), 0);
}

/// Issue #17 §1: R5xx fences were 32-bit (`Fence::seq() -> u32`) and wrapped to 0 after
/// 2^32 - 1; the timeline is 64-bit and the scratch write-back's 32 bits are extended. The
/// timeline starts 3 fences below 2^32 (`RingConfig::timeline_start`: emitting 4 billion
/// fences is not a test).
#[test]
fn fences_cross_2_pow_32_and_keep_their_order() {
    let gpu = gpu();
    let start = (1 << 32) - 3;
    let mut drv = init(&gpu, RingConfig { timeline_start: start, ..RingConfig::default() });
    assert_eq!(drv.last_signalled(), start, "the timeline starts where the config says");
    let mut fences = Vec::new();
    for _ in 0..6 {
        let fence = drv.emit_fence().expect("fence");
        drv.wait(&fence, FENCE_TIMEOUT).expect("signalled");
        assert_eq!(drv.last_signalled(), fence.seq());
        fences.push(fence);
    }
    let seqs: Vec<u64> = fences.iter().map(|f| f.seq()).collect();
    assert_eq!(
        seqs,
        [(1 << 32) - 2, (1 << 32) - 1, 1 << 32, (1 << 32) + 1, (1 << 32) + 2, (1 << 32) + 3]
    );
    assert!(fences.iter().all(|f| drv.signalled(f)));
    // A later fence is pending, not "signalled" by the wrapped low bits of an earlier one.
    RegisterIoExt::write(&gpu, CP_CSQ_CNTL::RESET); // streams off: the CP stops
    let stuck = drv.emit_fence().expect("fence");
    assert_eq!(drv.fence_status(&stuck), FenceStatus::Pending);
}
