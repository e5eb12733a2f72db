//! Bring-up: microcode, ring programming in the Linux order (Linux r100.c `r100_cp_init`), the
//! ring and IB tests, shutdown.

use baregpu_firmware::amd::{CpMicrocode, LoadError, UploadReport, r5xx as fw};
use baregpu_gpu::Timeline;
use baregpu_hal::dma::{DmaAllocator, DmaBuffer, DmaLayout};
use baregpu_hal::time::{Clock, poll_until};
use baregpu_hal::{RegisterIo, RegisterIoExt};
use baregpu_regs::r5xx::cp::{
    CP_CSQ_CNTL, CP_CSQ_MODE, CP_RB_CNTL, CP_RB_RPTR_WR, CP_RB_WPTR, CP_RB_WPTR_DELAY,
    SCRATCH_ADDR, SCRATCH_REG0, SCRATCH_UMSK, cp_csq_cntl, cp_rb_cntl,
};
use baregpu_regs::r5xx::rbbm::RBBM_SOFT_RESET;
use baregpu_ring::ib::IndirectBuffer;
use baregpu_ring::r5xx::{IB_PACKET_DWORDS, SUBMIT_ALIGN};
use baregpu_ring::ring::{CommandRing, RingConfigError};

use super::interrupts::Interrupts;
use super::{Bar, R5xx, Stats};
use crate::config::RingConfig;
use crate::consts::{
    self, REG_WRITE_DWORDS, RING_TEST_SCRATCH, RING_TEST_SEED, RING_TEST_VALUE, SCRATCH_COUNT,
    WB_RPTR_OFFSET, WB_SCRATCH_OFFSET, WRITEBACK_BYTES,
};
use crate::error::{InitError, SubmitError, TestError};

impl<'d, IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> R5xx<'d, IO, C, A> {
    /// Bring the CP up and run the ring test.
    ///
    /// Order (Linux r100.c `r100_cp_init`, §5.8, §5.12, §5.13):
    /// 1. parse `firmware` (`radeon/R520_cp.bin`) and check `config`: a malformed image or an
    ///    unusable ring size fails here with **no register access and no allocation**;
    /// 2. allocate the ring (`config.ring_bytes`, page-aligned) and the writeback page from
    ///    `dma` (the driver keeps them, and gives them back when it is dropped);
    /// 3. one read to detect a device reading all-ones ([`InitError::DeviceGone`]);
    /// 4. stop the streams (`CP_CSQ_CNTL` = `CP_CSQ_MODE` = 0) and pulse
    ///    `RBBM_SOFT_RESET.SOFT_RESET_CP` (§5.8 steps 1-2: whatever ran before us is stopped);
    /// 5. wait for `CP_ME_CNTL.ME_BUSY` = 0, bounded by `config.idle_timeout`;
    /// 6. upload the microcode (1 + 512 writes) and verify it by read-back
    ///    ([`InitError::Microcode`] on a mismatch);
    /// 7. program the ring, writeback and scratch registers and enable primary + indirect bus
    ///    mastering (the Linux order: Linux r100.c `r100_cp_init`);
    /// 8. ring test (Linux r100.c `r100_ring_test`): `SCRATCH_REG0` = 0xCAFEDEAD by MMIO, then
    ///    a type-0 write of 0xDEADBEEF through the ring, polled (bounded by
    ///    `config.test_timeout`).
    ///
    /// The PCI function must already decode memory and master the bus ([`crate::pci::enable`]).
    /// On any failure the memory is given back to `dma` (after step 3, with the streams
    /// stopped first).
    pub fn init(
        io: IO,
        clock: C,
        dma: &'d A,
        firmware: &[u8],
        config: RingConfig,
    ) -> Result<Self, InitError> {
        let microcode = CpMicrocode::parse(firmware)?;
        config.validate().map_err(InitError::Config)?;

        let ring_layout =
            DmaLayout::new(config.ring_bytes, WRITEBACK_BYTES).map_err(InitError::Dma)?;
        let wb_layout = DmaLayout::new(WRITEBACK_BYTES, WRITEBACK_BYTES).map_err(InitError::Dma)?;
        let ring_mem = DmaBuffer::allocate(dma, ring_layout).map_err(InitError::Dma)?;
        let wb_mem = DmaBuffer::allocate(dma, wb_layout).map_err(InitError::Dma)?;
        wb_mem.zero();
        // On error `new` drops (frees) both buffers.
        let ring = CommandRing::new(ring_mem, wb_mem, WB_RPTR_OFFSET).map_err(InitError::Ring)?;
        // The scratch area shares the page whose RPTR dword the ring just accepted, so
        // SCRATCH_ADDR reaches it; its setter checks that anyway (it never truncates).
        let scratch = ring.writeback().0.bus_address().checked_offset(WB_SCRATCH_OFFSET as u64);
        let scratch_addr = scratch
            .and_then(|a| SCRATCH_ADDR::RESET.try_with_scratch_addr(a).ok())
            .ok_or(InitError::Ring(RingConfigError::BadWriteback {
                offset: WB_SCRATCH_OFFSET,
                address: scratch,
            }))?;
        let mut gpu = R5xx {
            io: Bar::new(io),
            clock,
            dma,
            config,
            ring,
            scratch_addr,
            timeline: Timeline::starting_at(config.timeline_start),
            interrupts: Interrupts::default(),
            upload: UploadReport { entries: 0, load_writes: 0, verify_writes: 0, reads: 0 },
            stats: Stats::default(),
        };
        // On error `gpu` is dropped: streams stopped, memory given back.
        gpu.bring_up(&microcode)?;
        Ok(gpu)
    }

    fn bring_up(&mut self, microcode: &CpMicrocode<'_>) -> Result<(), InitError> {
        self.check_alive()?;
        self.stop_and_soft_reset();
        self.wait_me_idle()?;
        self.upload = fw::upload(self.io.raw(), microcode)?;
        self.program();
        // The fence scratch register and its writeback start at the timeline's start.
        self.sync_fence_scratch();
        self.ring_test()?;
        Ok(())
    }

    /// Stop the CP (`CP_CSQ_CNTL` = 0, hardware idle) and give the ring and writeback memory
    /// back to the allocator: the streams are disabled first (§5.8 step 1), so the CP fetches
    /// nothing from freed memory. Dropping the driver does the same.
    pub fn shutdown(self) {
        drop(self);
    }

    /// §5.8 steps 1-2: disable both streams, then assert and de-assert the CP soft reset.
    pub(super) fn stop_and_soft_reset(&self) {
        self.stop_streams();
        self.io.write(RBBM_SOFT_RESET::RESET.with_soft_reset_cp(true));
        // Read back so the assert reaches the device before the de-assert (posted writes;
        // Linux r100_asic_reset reads RBBM_SOFT_RESET back the same way).
        self.io.read::<RBBM_SOFT_RESET>();
        self.io.write(RBBM_SOFT_RESET::RESET);
        self.io.read::<RBBM_SOFT_RESET>();
    }

    /// Wait for `baregpu_firmware`'s readiness check: ME idle, streams off.
    pub(super) fn wait_me_idle(&self) -> Result<(), InitError> {
        // Bounded by `idle_timeout` (default 100 ms, Linux `usec_timeout`): after the soft
        // reset the ME has nothing to drain, so a busy ME this long is a hang.
        let polled = poll_until(&self.clock, self.config.idle_timeout, || {
            match fw::check_ready(self.io.raw()) {
                Ok(()) => Some(Ok(())),
                Err(LoadError::MicroEngineBusy) => None,
                Err(e) => Some(Err(e)),
            }
        });
        match polled {
            Ok(r) => r.map_err(InitError::from),
            Err(waited) => {
                self.check_alive()?;
                Err(InitError::MicroEngineBusy(waited))
            }
        }
    }

    fn rb_cntl(&self) -> CP_RB_CNTL {
        let bufsz = self.ring.rb_bufsz();
        // At least 4 writebacks per pass over a small ring (bufsz - 2), one page (Linux) on
        // big ones. RB_BLKSZ is log2 quadwords, RB_BUFSZ log2 quadwords too (§11.1).
        let blksz = consts::LINUX_RB_BLKSZ.min(bufsz.saturating_sub(2));
        CP_RB_CNTL::RESET
            .with_rb_bufsz(bufsz)
            .with_rb_blksz(blksz)
            .with_max_fetch(consts::MAX_FETCH)
            .with_rb_no_update(cp_rb_cntl::RbNoUpdate::WriteToHostsCopyOfReadPointerIn)
    }

    /// Program the ring after the microcode is in, in the order of Linux r100.c
    /// `r100_cp_init`, which also performs §5.8 steps 3-7:
    ///
    /// `CP_RB_WPTR_DELAY` = 0 (§5.5: Rage128 behaviour; the driver orders its writes with
    /// `dma_wmb` instead), `CP_RB_CNTL` (BUFSZ, BLKSZ, MAX_FETCH, writeback on), `CP_RB_BASE`,
    /// `RB_RPTR_WR_ENA` + `CP_RB_RPTR_WR` = 0 + `CP_RB_WPTR` = 0 (RPTR = WPTR = 0: empty),
    /// `CP_RB_RPTR_ADDR`, `SCRATCH_ADDR`/`SCRATCH_UMSK`, final `CP_RB_CNTL` (ENA cleared),
    /// `CP_CSQ_MODE` (queue split), `CP_CSQ_CNTL` = primary BM + indirect BM, `GEN_INT_CNTL`.
    /// The host side of the ring is reset to match (both pointers 0).
    pub(super) fn program(&mut self) {
        let io = &self.io;
        let cntl = self.rb_cntl();
        io.write(CP_RB_WPTR_DELAY::RESET);
        io.write(cntl);
        io.write(self.ring.cp_rb_base());
        io.write(cntl.with_rb_rptr_wr_ena(true));
        io.write(CP_RB_RPTR_WR::RESET.with_rb_rptr_wr(0));
        self.ring.reset();
        io.write(CP_RB_WPTR::RESET.with_rb_wptr(0));
        io.write(self.ring.cp_rb_rptr_addr());
        io.write(self.scratch_addr);
        io.write(SCRATCH_UMSK::RESET.with_scratch_umsk((1 << SCRATCH_COUNT) - 1));
        io.write(cntl);
        io.write(csq_mode());
        io.write(CP_CSQ_CNTL::RESET.with_csq_mode(cp_csq_cntl::CsqMode::PrimaryBmIndirectBm));
        io.write(self.interrupts.cntl());
    }

    /// The ring test (Linux r100.c `r100_ring_test`): `SCRATCH_REG0` = 0xCAFEDEAD by MMIO, a
    /// type-0 write of 0xDEADBEEF through the ring, then poll the register, bounded by
    /// `config.test_timeout`.
    pub fn ring_test(&mut self) -> Result<(), TestError> {
        self.seed_test_scratch();
        self.submit(REG_WRITE_DWORDS, |s| {
            s.writer().write_reg_at(RING_TEST_SCRATCH, test_value())?;
            Ok(())
        })?;
        self.poll_test_scratch()
    }

    /// The IB test (Linux r100.c `r100_ib_test`): the ring test's scratch write inside a
    /// 16-dword indirect buffer padded with type-2 packets, started from the ring as IB1. The
    /// buffer comes from the driver's allocator and goes back when the test ends (the CP is
    /// done with it then; on a timeout it is kept allocated, since the CP might still fetch
    /// it).
    pub fn ib_test(&mut self) -> Result<(), TestError> {
        let layout = DmaLayout::new(SUBMIT_ALIGN * 4, SUBMIT_ALIGN * 4).map_err(TestError::Dma)?;
        let buffer = DmaBuffer::allocate(self.dma, layout).map_err(TestError::Dma)?;
        let mut ib = IndirectBuffer::new(&*buffer).map_err(SubmitError::Ib)?;
        ib.writer().write_reg_at(RING_TEST_SCRATCH, test_value()).map_err(SubmitError::Packet)?;
        ib.pad_to(SUBMIT_ALIGN).map_err(SubmitError::Pad)?;
        let descriptor = ib.descriptor().map_err(SubmitError::Ib)?;
        self.seed_test_scratch();
        self.submit(IB_PACKET_DWORDS, |s| s.indirect_buffer(descriptor))?;
        let result = self.poll_test_scratch();
        if matches!(result, Err(TestError::Mismatch { .. })) {
            // The CP may still fetch the buffer: leak it rather than free it under the device.
            buffer.into_raw();
        }
        result
    }

    fn seed_test_scratch(&self) {
        let seed = SCRATCH_REG0::RESET.with_scratch_reg0(RING_TEST_SEED);
        self.io.write_nth::<SCRATCH_REG0, RING_TEST_SCRATCH>(seed);
    }

    fn poll_test_scratch(&self) -> Result<(), TestError> {
        let mut found = RING_TEST_SEED;
        // Bounded by `test_timeout` (default 100 ms, Linux `usec_timeout` in r100_ring_test).
        let polled = poll_until(&self.clock, self.config.test_timeout, || {
            found = self.io.read_nth::<SCRATCH_REG0, RING_TEST_SCRATCH>().scratch_reg0();
            if found == RING_TEST_VALUE {
                Some(Ok(()))
            } else if found == u32::MAX {
                self.check_alive().err().map(|gone| Err(TestError::DeviceGone(gone)))
            } else {
                None
            }
        });
        match polled {
            Ok(r) => r,
            Err(waited) => {
                self.check_alive()?;
                Err(TestError::Mismatch { expected: RING_TEST_VALUE, found, waited })
            }
        }
    }
}

/// `CP_CSQ_MODE`: the command-cache split of [`consts`], no per-stream override (the enable
/// bits stay 0 so `CP_CSQ_CNTL.CSQ_MODE` decides, §11.1).
const fn csq_mode() -> CP_CSQ_MODE {
    CP_CSQ_MODE::RESET
        .with_indirect1_start(consts::INDIRECT1_START)
        .with_indirect2_start(consts::INDIRECT2_START)
}

const fn test_value() -> SCRATCH_REG0 {
    SCRATCH_REG0::RESET.with_scratch_reg0(RING_TEST_VALUE)
}
