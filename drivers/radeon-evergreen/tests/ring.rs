//! Submission, fences, interrupts, GPU-side waits, CP DMA, predication, hangs and recovery
//! against the emulated Cypress and Cayman.

mod common;

use baregpu_radeon_evergreen::gpu::GpuQueue;
use std::time::Duration;

use baregpu_hal::dma::BusAddress;
use baregpu_hal::time::poll_until;
use baregpu_radeon_evergreen::pm4::{Compare, PredOp, opcode};
use baregpu_radeon_evergreen::{FENCE_DWORDS, FenceError, SubmitError, WB_FENCE_OFFSET};
use common::*;

fn bus(r: &baregpu_hal::dma::DmaRegion, offset: usize) -> BusAddress {
    BusAddress(r.bus_address().0 + offset as u64)
}

#[test]
fn fences_signal_in_order_with_one_doorbell_per_batch_and_the_ring_wraps() {
    for (chip, asic) in CHIPS {
        let gpu = gpu(asic);
        let mut drv = init(&gpu, chip, &Images::of(chip), small_ring());
        let before = drv.stats().doorbells;
        let mut last = None;
        // 1024-dword ring, ~32 dwords per batch: 200 batches wrap it several times.
        for i in 0..200u32 {
            let f = drv
                .submit(3 + FENCE_DWORDS, |s| {
                    s.set_scratch(1, i)?;
                    s.fence()
                })
                .expect("submit");
            last = Some(f);
        }
        let last = last.unwrap();
        assert_eq!(drv.stats().doorbells - before, 200, "one doorbell per batch");

        assert!(drv.ring().head() < 1024 && drv.stats().submissions > 32);
        drv.wait(&last, FENCE_TIMEOUT).expect("last fence");
        assert_eq!(drv.last_signalled(), last.seq());
        assert_eq!(drv.scratch(1), Ok(199));
        assert_clean(&gpu);
    }
}

#[test]
fn large_batches_wait_for_the_cp_and_never_overwrite_unconsumed_dwords() {
    for (chip, asic) in CHIPS {
        let gpu = gpu(asic);
        let mut drv = init(&gpu, chip, &Images::of(chip), small_ring());
        // 300-dword batches in a 1024-dword ring: every fourth batch waits for the CP.
        let mut last = None;
        for i in 0..40u32 {
            let f = drv
                .submit(300 + FENCE_DWORDS, |s| {
                    for j in 0..100 {
                        s.set_scratch(7, i * 1000 + j)?;
                    }
                    s.fence()
                })
                .expect("submit");
            last = Some(f);
        }
        drv.wait(&last.unwrap(), FENCE_TIMEOUT).expect("last fence");
        assert_eq!(drv.scratch(7), Ok(39 * 1000 + 99), "{chip:?}: every dword ran in order");
        // Back-pressure was real: under seeded pacing the driver saw the CP part-way.
        let (partial, reads) = (drv.ring().partial_reads(), drv.ring().rptr_reads());
        println!("{chip:?}: ring reads that saw the CP part-way: {partial} of {reads}");
        if stepwise(&gpu) {
            assert!(partial > 0, "no partial consumption in {reads} read-pointer reads");
        }
        assert_clean(&gpu);
    }
}

#[test]
fn a_hung_cp_times_out_as_hung_and_reset_recovers() {
    for (chip, asic) in CHIPS {
        let gpu = gpu(asic);
        let mut drv = init(&gpu, chip, &Images::of(chip), small_ring());
        set_faults(&gpu, |f| f.cp_stall = true);
        let fence = drv.fence().expect("submit");
        match drv.wait(&fence, Duration::from_millis(5)) {
            Err(FenceError::Timeout { seq, progressed: false, .. }) => {
                assert_eq!(seq, fence.seq())
            }
            other => panic!("{chip:?}: {other:?}"),
        }
        // Back-pressure: the stalled CP never frees the ring, the submission times out.
        let mut full = None;
        for _ in 0..200 {
            if let Err(e) = drv.fence() {
                full = Some(e);
                break;
            }
        }
        assert!(matches!(full, Some(SubmitError::RingFull(_))), "{chip:?}: {full:?}");
        set_faults(&gpu, |f| f.cp_stall = false);
        drv.reset().expect("soft reset and ring test");
        let f = drv.fence().expect("after reset");
        drv.wait(&f, FENCE_TIMEOUT).expect("fence after reset");
        assert!(drv.stats().resets >= 2);
    }
}

#[test]
fn a_slow_cp_is_told_apart_from_a_hung_one() {
    let (chip, asic) = CHIPS[0];
    let gpu = gpu(asic);
    let mut drv = init(&gpu, chip, &Images::of(chip), small_ring());
    set_faults(&gpu, |f| f.slow = Some(20));
    let mut last = None;
    for i in 0..20 {
        last = Some(drv.submit(3 + FENCE_DWORDS, |s| {
            s.set_scratch(2, i)?;
            s.fence()
        }));
    }
    let f = last.unwrap().unwrap();
    match drv.wait(&f, Duration::from_millis(1)) {
        Err(FenceError::Timeout { progressed: true, .. }) => {}
        // Run-to-idle finishes every doorbell before the write returns: nothing is left slow;
        // an engine thread on the wall clock may finish within the millisecond, or not be
        // scheduled in it.
        Ok(()) if !stepwise(&gpu) => {}
        Err(FenceError::Timeout { .. }) if paced(&gpu) && !stepwise(&gpu) => {}
        other => panic!("{other:?}"),
    }
    set_faults(&gpu, |f| f.slow = None);
    drv.wait(&f, FENCE_TIMEOUT).expect("it finishes");
}

#[test]
fn eop_interrupts_arrive_through_the_ih_ring() {
    for (chip, asic) in CHIPS {
        let gpu = gpu(asic);
        let mut drv = init(&gpu, chip, &Images::of(chip), Default::default());
        drv.enable_interrupts().unwrap(); // opt-in
        let mut last = None;
        for _ in 0..5 {
            last = Some(drv.fence().unwrap());
        }
        drv.wait(&last.unwrap(), FENCE_TIMEOUT).unwrap();
        // The interrupt write follows the fence write; give the engine a moment.
        let mut eop = 0;
        for _ in 0..100 {
            eop += drv.handle_interrupts().unwrap().eop;
            if eop >= 5 {
                break;
            }
            gpu.poll();
        }
        // At least the five fences' vectors; a vector of a fence from before the opt-in (still
        // in the pipe when the IH ring was enabled, under long in-flight windows) may come too.
        assert!((5..=6).contains(&eop), "{chip:?}: {eop}");
        assert!(gpu.take_interrupts() != 0 || gpu.model().stats().ih_entries >= 5);
        assert_clean(&gpu);
    }
}

#[test]
fn interrupts_are_opt_in_and_polled_fences_cost_none() {
    // Issue #17 §2: bring-up used to enable the IH ring and every fence asked for an EOP
    // interrupt, so a driver that only polls took an interrupt per fence.
    for (chip, asic) in CHIPS {
        let gpu = gpu(asic);
        let mut drv = init(&gpu, chip, &Images::of(chip), Default::default());
        assert!(!drv.interrupts_enabled(), "{chip:?}: off after init");
        // Bring-up tested the interrupt path once (one vector); nothing after that.
        let tested = gpu.model().stats().ih_entries;
        gpu.take_interrupts();
        let mut last = None;
        for _ in 0..5 {
            last = Some(drv.fence().unwrap());
        }
        drv.wait(&last.unwrap(), FENCE_TIMEOUT).unwrap();
        for _ in 0..50 {
            gpu.poll();
        }
        assert_eq!(gpu.model().stats().ih_entries, tested, "{chip:?}: no vector written");
        assert_eq!(gpu.take_interrupts(), 0, "{chip:?}: no interrupt raised");
        // Opted in, the next fences interrupt.
        drv.enable_interrupts().unwrap();
        let f = drv.fence().unwrap();
        drv.wait(&f, FENCE_TIMEOUT).unwrap();
        let mut eop = 0;
        for _ in 0..100 {
            eop += drv.handle_interrupts().unwrap().eop;
            if eop >= 1 {
                break;
            }
            gpu.poll();
        }
        // One vector for the one fence; the interrupt test's fence when opting in may deliver
        // its own vector late (an engine thread on the wall clock).
        assert!((1..=2).contains(&eop), "{chip:?}: {eop} EOP vectors after opting in");
        assert_clean(&gpu);
    }
}

#[test]
fn ih_overflow_is_detected_and_cleared() {
    for (chip, asic) in CHIPS {
        let gpu = gpu(asic);
        let config =
            baregpu_radeon_evergreen::RingConfig { ih_ring_bytes: 256, ..Default::default() };
        let mut drv = init(&gpu, chip, &Images::of(chip), config);
        drv.enable_interrupts().unwrap();
        // 256 bytes hold 16 vectors: 40 fences overflow it.
        let mut last = None;
        for _ in 0..40 {
            last = Some(drv.fence().unwrap());
        }
        drv.wait(&last.unwrap(), FENCE_TIMEOUT).unwrap();
        for _ in 0..50 {
            gpu.poll();
        }
        let r = drv.handle_interrupts().unwrap();
        assert!(r.overflowed, "{chip:?}: {r:?}");
        assert!(r.vectors < 16);
        // After the overflow clear, new vectors arrive normally.
        let f = drv.fence().unwrap();
        drv.wait(&f, FENCE_TIMEOUT).unwrap();
        let mut n = 0;
        for _ in 0..50 {
            let r = drv.handle_interrupts().unwrap();
            assert!(!r.overflowed);
            n += r.eop;
            if n > 0 {
                break;
            }
            gpu.poll();
        }
        assert_eq!(n, 1, "{chip:?}");
    }
}

#[test]
fn wait_reg_mem_holds_later_packets_until_memory_matches() {
    for (chip, asic) in CHIPS {
        let gpu = gpu(asic);
        let mut drv = init(&gpu, chip, &Images::of(chip), Default::default());
        let flag = alloc(&gpu, 256);
        let f = drv
            .submit(7 + 3 + FENCE_DWORDS, |s| {
                s.wait_mem(bus(&flag, 0), Compare::Equal, 0x55, 0xFF)?;
                s.set_scratch(3, 0xABCD)?;
                s.fence()
            })
            .unwrap();
        assert!(matches!(drv.wait(&f, Duration::from_millis(2)), Err(FenceError::Timeout { .. })));
        assert_ne!(drv.scratch(3), Ok(0xABCD), "{chip:?}: ran past the wait");
        flag.write_u32(0, 0x1255).unwrap();
        drv.wait(&f, FENCE_TIMEOUT).expect("released");
        assert_eq!(drv.scratch(3), Ok(0xABCD));
        assert!(gpu.model().stats().polls > 1);
    }
}

#[test]
fn cp_dma_fill_and_copy_match_the_cpu() {
    for (chip, asic) in CHIPS {
        let gpu = gpu(asic);
        let mut drv = init(&gpu, chip, &Images::of(chip), Default::default());
        let src = alloc(&gpu, 64 * 1024);
        let dst = alloc(&gpu, 64 * 1024);
        let words: Vec<u32> =
            (0..16 * 1024u32).map(|i| i.wrapping_mul(0x9E37_79B9) ^ 0x5A5A).collect();
        src.write_slice(0, &words).unwrap();
        let f = drv
            .submit(6 * 3 + FENCE_DWORDS, |s| {
                s.cp_dma_fill(0xFEED_F00D, bus(&dst, 0), 32 * 1024)?;
                s.cp_dma_copy(bus(&src, 4), bus(&dst, 32 * 1024), 16 * 1024)?;
                s.fence()
            })
            .unwrap();
        drv.wait(&f, FENCE_TIMEOUT).unwrap();
        let mut out = vec![0u32; 16 * 1024];
        dst.read_slice(0, &mut out).unwrap();
        assert!(out[..8 * 1024].iter().all(|&w| w == 0xFEED_F00D), "{chip:?}: fill");
        assert_eq!(&out[8 * 1024..12 * 1024], &words[1..4 * 1024 + 1], "{chip:?}: copy");
        assert!(out[12 * 1024..].iter().all(|&w| w == 0), "{chip:?}: nothing past the copy");
        assert_eq!(gpu.model().stats().dma_bytes, 48 * 1024);
        assert_clean(&gpu);
    }
}

#[test]
fn cond_exec_skips_its_packets_when_the_boolean_is_zero() {
    for (chip, asic) in CHIPS {
        let gpu = gpu(asic);
        let mut drv = init(&gpu, chip, &Images::of(chip), Default::default());
        let cond = alloc(&gpu, 256);
        let run = |drv: &mut Driver<'_>, value: u32, flag: u32| {
            cond.write_u32(0, flag).unwrap();
            let f = drv
                .submit(4 + 3 + 3 + FENCE_DWORDS, |s| {
                    s.set_scratch(4, 0)?;
                    s.cond_exec(bus(&cond, 0), 8, |inner| {
                        baregpu_radeon_evergreen::pm4::set_regs(inner, 0x8510, &[value], false)
                    })?;
                    s.fence()
                })
                .unwrap();
            drv.wait(&f, FENCE_TIMEOUT).unwrap();
            drv.scratch(4).unwrap()
        };
        assert_eq!(run(&mut drv, 0x1111, 0), 0, "{chip:?}: skipped");
        assert_eq!(run(&mut drv, 0x2222, 1), 0x2222, "{chip:?}: executed");
        assert!(gpu.model().stats().packets_skipped >= 1);
        assert_clean(&gpu);
    }
}

#[test]
fn set_predication_skips_predicated_packets_until_cleared() {
    for (chip, asic) in CHIPS {
        let gpu = gpu(asic);
        let mut drv = init(&gpu, chip, &Images::of(chip), Default::default());
        // ZPASS results: zero counts (nothing visible) at a 16-byte aligned address.
        let zpass = alloc(&gpu, 256);
        let skipped_before = gpu.model().stats().packets_skipped;
        let f = drv
            .submit(3 + 3 + 3 + 3 + 3 + FENCE_DWORDS, |s| {
                s.set_scratch(5, 1)?;
                s.set_predication(bus(&zpass, 0), PredOp::Zpass, true)?;
                // Predicated NOP-free write: SET_CONFIG_REG with PREDICATE set.
                s.predicated_packet(opcode::SET_CONFIG_REG, &[(0x8514 - 0x8000) / 4, 7])?;
                s.set_predication(bus(&zpass, 0), PredOp::Clear, true)?;
                s.predicated_packet(opcode::SET_CONFIG_REG, &[(0x8518 - 0x8000) / 4, 9])?;
                s.fence()
            })
            .unwrap();
        drv.wait(&f, FENCE_TIMEOUT).unwrap();
        assert_eq!(drv.scratch(5), Ok(1), "{chip:?}: predicated off, skipped");
        assert_eq!(drv.scratch(6), Ok(9), "{chip:?}: after clear, executed");
        assert_eq!(gpu.model().stats().packets_skipped - skipped_before, 1);
    }
}

#[test]
fn a_vanished_device_is_reported_as_gone() {
    for (chip, asic) in CHIPS {
        let gpu = gpu(asic);
        let mut drv = init(&gpu, chip, &Images::of(chip), Default::default());
        let f = drv.fence().unwrap();
        drv.wait(&f, FENCE_TIMEOUT).unwrap();
        set_faults(&gpu, |f| f.registers_all_ones = true);
        assert_eq!(
            drv.fence().err(),
            Some(SubmitError::DeviceGone(baregpu_radeon_evergreen::DeviceGone))
        );
        assert_eq!(drv.check_alive(), Err(baregpu_radeon_evergreen::DeviceGone));
        assert!(drv.reset().is_err());
    }
}

#[test]
fn recover_reloads_firmware_only_when_the_read_back_fails() {
    for (chip, asic) in CHIPS {
        let gpu = gpu(asic);
        let images = Images::of(chip);
        let mut drv = init(&gpu, chip, &images, Default::default());
        let r = drv.recover(&images.parse()).expect("recover");
        assert!(!r.reloaded_firmware);
        set_faults(&gpu, |f| f.ucode_corrupt = Some(3));
        let uploads = drv.stats().firmware_uploads;
        // A read-back that fails reloads; the corruption stays in the read path, so the reload's
        // own verification fails too and is reported.
        assert!(drv.recover(&images.parse()).is_err());
        assert_eq!(drv.stats().firmware_uploads, uploads, "verification failed before the count");
        set_faults(&gpu, |f| f.ucode_corrupt = None);
        let r = drv.recover(&images.parse()).expect("recover");
        assert!(!r.reloaded_firmware);
        let f = drv.fence().unwrap();
        drv.wait(&f, FENCE_TIMEOUT).unwrap();
        let _ = WB_FENCE_OFFSET;
    }
}

#[test]
fn after_a_function_level_reset_recover_reloads_the_firmware_and_runs_again() {
    for (chip, asic) in CHIPS {
        let gpu = gpu(asic);
        let images = Images::of(chip);
        let mut drv = init(&gpu, chip, &images, Default::default());
        let f = drv.fence().unwrap();
        drv.wait(&f, FENCE_TIMEOUT).unwrap();
        // Power-on state: microcode RAMs lost, engines halted, ME not initialised.
        gpu.reset();
        let uploads = drv.stats().firmware_uploads;
        let r = drv.recover(&images.parse()).unwrap_or_else(|e| panic!("{chip:?}: {e}"));
        assert!(r.reloaded_firmware, "{chip:?}");
        assert_eq!(drv.stats().firmware_uploads, uploads + 1);
        assert!(gpu.model().me_initialized());
        let f = drv.submit(3 + FENCE_DWORDS, |s| {
            s.set_scratch(1, 0x600D)?;
            s.fence()
        });
        drv.wait(&f.unwrap(), FENCE_TIMEOUT).unwrap();
        assert_eq!(drv.scratch(1), Ok(0x600D));
        assert_clean(&gpu);
    }
}

#[test]
fn mem_write_cond_write_eos_and_pfp_sync_show_their_effect_in_memory() {
    for (chip, asic) in CHIPS {
        let gpu = gpu(asic);
        let mut drv = init(&gpu, chip, &Images::of(chip), Default::default());
        let mem = alloc(&gpu, 256);
        mem.write_u32(0, 7).unwrap(); // the polled value
        let f = drv
            .submit(64 + FENCE_DWORDS, |s| {
                s.mem_write(bus(&mem, 8), 0x1122_3344_5566_7788)?;
                // Passes (7 == 7): written. Fails (7 > 9 is false): skipped.
                s.cond_write(bus(&mem, 0), Compare::Equal, 7, 0xFF, bus(&mem, 16), 0xAAAA)?;
                s.cond_write(bus(&mem, 0), Compare::Greater, 9, 0xFF, bus(&mem, 20), 0xBBBB)?;
                s.pfp_sync_me()?;
                s.eos_write(bus(&mem, 24), 0xE05)?;
                s.fence()
            })
            .unwrap();
        drv.wait(&f, FENCE_TIMEOUT)
            .unwrap_or_else(|e| panic!("{chip:?}: {e} ({})", gpu.error_code()));
        let mut out = [0u32; 7];
        mem.read_slice(0, &mut out).unwrap();
        assert_eq!(&out[2..4], &[0x5566_7788, 0x1122_3344], "{chip:?}: MEM_WRITE");
        assert_eq!(out[4], 0xAAAA, "{chip:?}: COND_WRITE passed");
        assert_eq!(out[5], 0, "{chip:?}: COND_WRITE failed, skipped");
        assert_eq!(out[6], 0xE05, "{chip:?}: EVENT_WRITE_EOS");
        assert_clean(&gpu);
    }
}

#[test]
fn a_bus_fault_on_a_command_fetch_hangs_the_cp_and_a_function_level_reset_recovers() {
    for (chip, asic) in CHIPS {
        let gpu = gpu(asic);
        let images = Images::of(chip);
        let mut drv = init(&gpu, chip, &images, Default::default());
        set_faults(&gpu, |f| f.dma_fault_next_fetch = true);
        let f = drv.fence().unwrap();
        match drv.wait(&f, Duration::from_millis(5)) {
            Err(FenceError::Timeout { seq, .. }) => assert_eq!(seq, f.seq()),
            other => panic!("{chip:?}: {other:?}"),
        }
        // The model reports the fetch fault (an engine thread on the wall clock may reach the
        // fetch only after the 5 ms).
        let clock = ModelClock::new(&gpu);
        let reported = poll_until(&clock, FENCE_TIMEOUT, || (gpu.error_code() != 0).then_some(()));
        assert!(reported.is_ok(), "{chip:?}: the model reports the fetch fault");
        gpu.reset(); // the platform's function-level reset
        let r = drv.recover(&images.parse()).unwrap_or_else(|e| panic!("{chip:?}: {e}"));
        assert!(r.reloaded_firmware);
        let f = drv.fence().unwrap();
        drv.wait(&f, FENCE_TIMEOUT).expect("fences signal again");
        assert_clean(&gpu);
    }
}
