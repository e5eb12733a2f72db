//! Bring-up: microcode, CP programming in the Linux order (radeon evergreen.c
//! `evergreen_cp_resume`, `evergreen_cp_start`), the ring and IB tests, shutdown.

use baregpu_firmware::amd::evergreen::{self, EvergreenFirmware, EvergreenUcode, UploadReport};
use baregpu_gpu::liveness::{Unfinished, poll_healthy};
use baregpu_gpu::{GpuQueue, Timeline};
use baregpu_hal::dma::{DmaAllocator, DmaBuffer, DmaLayout, DmaRegion};
use baregpu_hal::time::Clock;
use baregpu_hal::{RegisterIo, RegisterIoExt};
use baregpu_regs::evergreen::cp::{
    CP_DEBUG, CP_ME_CNTL, CP_RB_CNTL, CP_RB_RPTR_WR, CP_RB_WPTR, CP_RB_WPTR_DELAY,
    CP_SEM_WAIT_TIMER, SCRATCH_REG0, SCRATCH_UMSK,
};
use baregpu_regs::evergreen::grbm::GRBM_SOFT_RESET;
use baregpu_regs::evergreen::rlc::RLC_CNTL;
use baregpu_regs::evergreen::{Chipset, Family};
use baregpu_ring::evergreen::{EvergreenIb, IB_PACKET_DWORDS};
use baregpu_ring::pm4::Pm4Writer;
use baregpu_ring::ring::CommandRing;

use super::{Bar, Evergreen, Stats};
use crate::config::RingConfig;
use crate::consts::{
    FENCE_DWORDS, SOFT_RESET_HOLD, TEST_SCRATCH, TEST_SEED, TEST_VALUE, WB_RPTR_OFFSET,
    WRITEBACK_BYTES,
};
use crate::error::{DeviceGone, InitError, ScratchError, SubmitError, TestError};
use crate::irq::IhRing;
use crate::pm4::{self, PacketError, opcode};
use baregpu_gpu::Fence;

impl<'d, IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> Evergreen<'d, IO, C, A> {
    /// Bring the GPU up: check the firmware set is `chip`'s and the configuration is sane
    /// (nothing touched otherwise), allocate the rings from `dma` (the driver keeps them until
    /// it is dropped), upload and read back PFP, ME and RLC with the engines halted, program the
    /// ring, write `ME_INITIALIZE` (§9.2.1), un-halt, run the ring test and the IB test.
    ///
    /// Then the interrupt path is tested once (a fence's end-of-pipe vector must arrive,
    /// [`TestError::NoInterrupt`](crate::TestError::NoInterrupt) otherwise) and switched off
    /// again: interrupts are opt-in ([`enable_interrupts`](Self::enable_interrupts)), fences
    /// ask for none until then.
    ///
    /// On any failure after the allocation the CP and the interrupt ring are stopped and the
    /// memory goes back to `dma`.
    pub fn init(
        io: IO,
        clock: C,
        dma: &'d A,
        chip: Chipset,
        firmware: &EvergreenFirmware<'_>,
        config: RingConfig,
    ) -> Result<Self, InitError> {
        if EvergreenUcode::of(chip) != Some(firmware.chip()) {
            return Err(InitError::WrongChip { device: chip, firmware: firmware.chip().chip() });
        }
        config.validate().map_err(InitError::Config)?;
        // From here on the BAR takes only Evergreen registers.
        let io = Bar::new(io);
        crate::liveness::check_alive(&io)?;
        // Each buffer goes back to `dma` on an early return (DmaBuffer's drop).
        let allocate = |bytes| {
            DmaLayout::new(bytes, 4096)
                .and_then(|layout| DmaBuffer::allocate(dma, layout))
                .map_err(InitError::Dma)
        };
        let ring_mem = allocate(config.ring_bytes)?;
        let wb_mem = allocate(WRITEBACK_BYTES)?;
        let ih_mem = allocate(config.ih_ring_bytes)?;
        wb_mem.zero();
        ih_mem.zero();
        // A ring `with_family` refuses drops (frees) its two buffers; the CP was not started.
        let ring =
            CommandRing::with_family(ring_mem, wb_mem, WB_RPTR_OFFSET).map_err(InitError::Ring)?;
        let mut gpu = Evergreen {
            io,
            clock,
            dma,
            chip,
            config,
            ring,
            ih: IhRing::new(ih_mem),
            timeline: Timeline::new(),
            upload: UploadReport::default(),
            stats: Stats::default(),
        };
        // On error `gpu` is dropped: CP halted, interrupts off, memory given back.
        gpu.bring_up(firmware)?;
        Ok(gpu)
    }

    fn bring_up(&mut self, firmware: &EvergreenFirmware<'_>) -> Result<(), InitError> {
        self.disable_interrupts();
        self.load_firmware(firmware)?;
        self.start_cp()?;
        self.ring_test()?;
        self.ib_test()?;
        // The interrupt path is tested once (a fence's end-of-pipe vector must arrive through
        // the IH ring, `TestError::NoInterrupt` otherwise), then switched off again:
        // interrupts are opt-in, polled fences cost none.
        self.enable_interrupts()?;
        self.disable_interrupts();
        Ok(())
    }

    /// Stop the GPU's use of the driver's memory (the interrupt ring disabled, then the ME and
    /// PFP halted) and give the ring, write-back page and interrupt ring back to the allocator.
    /// Dropping the driver does the same.
    pub fn shutdown(self) {
        drop(self);
    }

    pub(super) fn load_firmware(
        &mut self,
        firmware: &EvergreenFirmware<'_>,
    ) -> Result<(), InitError> {
        // Halted ME/PFP and a stopped RLC before any RAM write; left halted for ME_INITIALIZE.
        self.upload = evergreen::upload(self.io.raw(), firmware)?;
        self.stats.firmware_uploads += 1;
        // Linux radeon evergreen.c `evergreen_rlc_resume`: start the RLC after its upload.
        self.io.write(RLC_CNTL::RESET.with_rlc_enable(true));
        Ok(())
    }

    /// Soft-reset the CP and the blocks a compute or draw can hang (Linux radeon evergreen.c
    /// `evergreen_cp_resume` resets CP, PA, SH, VGT, SPI and SX), hold, release.
    fn soft_reset_cp(&mut self) {
        let reset = GRBM_SOFT_RESET::RESET
            .with_soft_reset_cp(true)
            .with_soft_reset_pa(true)
            .with_soft_reset_sh(true)
            .with_soft_reset_vgt(true)
            .with_soft_reset_spi(true)
            .with_soft_reset_sx(true);
        self.io.write(reset);
        let _ = self.io.read::<GRBM_SOFT_RESET>();
        self.clock.delay(SOFT_RESET_HOLD);
        self.io.write(GRBM_SOFT_RESET::RESET);
        let _ = self.io.read::<GRBM_SOFT_RESET>();
        self.stats.resets += 1;
    }

    /// Program the ring (Linux radeon evergreen.c `evergreen_cp_resume` order), write
    /// `ME_INITIALIZE` and un-halt the ME and PFP (`evergreen_cp_start`).
    pub(super) fn start_cp(&mut self) -> Result<(), InitError> {
        self.soft_reset_cp();
        self.io.write(CP_SEM_WAIT_TIMER::RESET);
        self.io.write(CP_RB_WPTR_DELAY::RESET);
        // RB_BUFSZ = log2(ring quadwords). RB_BLKSZ: the CP writes its read pointer back after
        // every 2^RB_BLKSZ quadwords (and when it runs empty). Linux uses one 4 KiB page (9);
        // on a small ring that is the whole ring, and the driver would see free space only once
        // the CP is idle, so write back at least every eighth of the ring.
        let bufsz = self.ring.rb_bufsz();
        let cntl =
            CP_RB_CNTL::RESET.with_rb_bufsz(bufsz).with_rb_blksz(bufsz.saturating_sub(3).min(9));
        self.io.write(cntl.with_rb_rptr_wr_ena(true));
        self.io.write(CP_RB_RPTR_WR::RESET);
        self.io.write(CP_RB_WPTR::RESET);
        let rptr = self.ring.cp_rb_rptr_addr();
        self.io.write(rptr.low);
        self.io.write(rptr.high);
        // The scratch registers are read by MMIO; no scratch write-back.
        self.io.write(SCRATCH_UMSK::RESET);
        self.io.write(cntl);
        self.io.write(self.ring.cp_rb_base());
        self.io.write(CP_DEBUG::RESET);
        self.ring.reset();
        // §9.2.1: ME_INITIALIZE right after loading the microcode, then the ME runs.
        let dwords = opcode::ME_INITIALIZE.min_dwords + 1;
        self.submit(dwords, |s| s.packet(opcode::ME_INITIALIZE, &pm4::me_initialize()?))
            .map_err(TestError::from)?;
        self.io.write(CP_ME_CNTL::RESET);
        Ok(())
    }

    /// Scratch register `n` (0..8) by MMIO.
    pub fn scratch(&self, n: usize) -> Result<u32, ScratchError> {
        let v = self.io.read_at::<SCRATCH_REG0>(n).map_err(ScratchError::NoSuchRegister)?.raw();
        if v == u32::MAX && self.check_alive().is_err() {
            return Err(ScratchError::DeviceGone(DeviceGone));
        }
        Ok(v)
    }

    /// The test scratch register by MMIO (an index the array has, checked at compile time).
    fn test_scratch(&self) -> u32 {
        self.io.read_at::<SCRATCH_REG0>(TEST_SCRATCH).map_or(0, |r| r.raw())
    }

    fn seed_test_scratch(&self) {
        // In range (the const assertion in `consts`): the write cannot fail.
        let _ = self.io.write_at(TEST_SCRATCH, SCRATCH_REG0::from_raw(TEST_SEED));
    }

    /// Poll the test scratch register for `expected`, bounded by `test_timeout`, with the
    /// all-ones check while it polls.
    fn wait_scratch(&self, expected: u32) -> Result<(), TestError> {
        let mut found = 0;
        let polled = poll_healthy(
            &self.clock,
            self.config.test_timeout,
            || {
                found = self.test_scratch();
                (found == expected).then_some(())
            },
            || self.check_alive().err(),
        );
        match polled {
            Ok(()) => Ok(()),
            Err(Unfinished::Unhealthy(gone)) => Err(TestError::DeviceGone(gone)),
            Err(Unfinished::TimedOut(waited)) => {
                Err(TestError::Mismatch { expected, found, waited })
            }
        }
    }

    /// Ring test (Linux radeon r600.c `r600_ring_test`): seed a scratch register by MMIO, have
    /// the CP write [`TEST_VALUE`](crate::TEST_VALUE) there with `SET_CONFIG_REG` (§9.4.14),
    /// poll it.
    pub fn ring_test(&mut self) -> Result<(), TestError> {
        self.seed_test_scratch();
        self.submit(3, |s| s.set_scratch(TEST_SCRATCH, TEST_VALUE))?;
        self.wait_scratch(TEST_VALUE)
    }

    /// IB test (Linux radeon r600.c `r600_ib_test`): the scratch write from an indirect buffer
    /// (§9.3.1), then a fence; the scratch register must hold the value once the fence passed.
    /// The buffer comes from the driver's allocator and goes back once the fence has signalled
    /// (or the submission failed: then nothing of it reached the ring); if its fence was not
    /// seen, it is kept allocated (leaked): the CP might still fetch it.
    pub fn ib_test(&mut self) -> Result<(), TestError> {
        let layout = DmaLayout::new(256, 256).map_err(TestError::Dma)?;
        let buffer = DmaBuffer::allocate(self.dma, layout).map_err(TestError::Dma)?;
        // A failed submission is discarded whole: the IB packet never reached the ring.
        let fence = self.submit_ib_test(&buffer)?;
        if let Err(e) = self.wait(&fence, self.config.test_timeout) {
            // The CP may still fetch the buffer: leak it rather than free it under the device.
            buffer.into_raw();
            return Err(e.into());
        }
        let found = self.test_scratch();
        if found == u32::MAX && self.check_alive().is_err() {
            return Err(TestError::DeviceGone(DeviceGone));
        }
        if found != TEST_VALUE {
            return Err(TestError::IbMismatch { expected: TEST_VALUE, found });
        }
        Ok(())
    }

    /// Write the IB test's packet into `region`, seed the scratch register, submit the IB and
    /// a fence.
    fn submit_ib_test(&mut self, region: &DmaRegion) -> Result<Fence, TestError> {
        let bad = PacketError::BadAddress { address: region.bus_address().0, align: 4 };
        let mut ib = EvergreenIb::with_family(region).map_err(|_| SubmitError::Packet(bad))?;
        Pm4Writer::<_, Family>::with_family(&mut ib)
            .write_reg_at(TEST_SCRATCH, SCRATCH_REG0::from_raw(TEST_VALUE))
            .map_err(|e| SubmitError::Packet(e.into()))?;
        let desc = ib.descriptor().map_err(|_| SubmitError::Packet(bad))?;
        self.seed_test_scratch();
        let fence = self.submit(IB_PACKET_DWORDS + FENCE_DWORDS, |s| {
            s.indirect_buffer(desc)?;
            s.fence()
        })?;
        Ok(fence)
    }
}
