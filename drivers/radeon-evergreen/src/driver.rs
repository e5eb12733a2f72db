//! The driver: bring-up, submission, fences, ring and IB tests, hang detection and recovery.

use core::time::Duration;

use baregpu_firmware::amd::evergreen::{self, EvergreenFirmware, EvergreenUcode, UploadReport};
use baregpu_hal::dma::{BusAddress, DmaAllocator, DmaBuffer, DmaLayout, DmaRegion};
use baregpu_hal::register::{Array, Register};
use baregpu_hal::time::{Clock, poll_until};
use baregpu_hal::{RegisterIo, RegisterIoExt};
use baregpu_regs::evergreen::Chipset;
use baregpu_regs::evergreen::cp::{
    CP_DEBUG, CP_ME_CNTL, CP_RB_CNTL, CP_RB_RPTR, CP_RB_RPTR_WR, CP_RB_WPTR, CP_RB_WPTR_DELAY,
    CP_SEM_WAIT_TIMER, SCRATCH_REG0, SCRATCH_UMSK,
};
use baregpu_regs::evergreen::grbm::{GRBM_SOFT_RESET, GRBM_STATUS};
use baregpu_regs::evergreen::rlc::RLC_CNTL;
use baregpu_ring::evergreen::{
    Evergreen as EvergreenFamily, EvergreenIb, EvergreenRing, IB_PACKET_DWORDS, IbDescriptor,
    MAX_RING_DWORDS, MIN_RING_DWORDS, SUBMIT_ALIGN,
};
use baregpu_ring::pm4::{CommandSink, Pm4Writer, SliceSink};
use baregpu_ring::ring::CommandRing;

use crate::error::{
    ConfigError, DeviceGone, FenceError, InitError, ScratchError, SubmitError, TestError,
};
use crate::irq::IhRing;
use crate::pm4::{self, Compare, PacketError, PredOp, opcode};

/// Bytes of the write-back page: the CP's read pointer, the fence, the IH write pointer.
pub const WRITEBACK_BYTES: usize = 4096;
/// Offset of the command ring's read-pointer write-back (`CP_RB_RPTR_ADDR`).
pub const WB_RPTR_OFFSET: usize = 0;
/// Offset of the 64-bit fence sequence (`EVENT_WRITE_EOP` DATA_SEL 2, quadword aligned).
pub const WB_FENCE_OFFSET: usize = 64;
/// Offset of the interrupt ring's write-pointer write-back (`IH_RB_WPTR_ADDR_LO/HI`).
pub const WB_IH_WPTR_OFFSET: usize = 128;

/// Scratch register used by the ring test and the IB test (Linux radeon uses a free scratch
/// register the same way).
pub const TEST_SCRATCH: usize = 0;
const _: () = assert!(TEST_SCRATCH < <SCRATCH_REG0 as Array>::COUNT);
/// Value written to the scratch register before a test.
pub const TEST_SEED: u32 = 0xCAFE_DEAD;
/// Value the test packets write.
pub const TEST_VALUE: u32 = 0xDEAD_BEEF;

/// How long `GRBM_SOFT_RESET` is held (Linux radeon evergreen.c holds it for 50 µs).
const SOFT_RESET_HOLD: Duration = Duration::from_micros(50);

/// Sizes and timeouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RingConfig {
    /// Command ring bytes (power of two, 4 KiB ..= 1 MiB: `baregpu_ring::evergreen` limits).
    pub ring_bytes: usize,
    /// Interrupt ring bytes (power of two, 256 B ..= 256 KiB; 16-byte vectors).
    pub ih_ring_bytes: usize,
    /// How long a submission waits for ring space.
    pub submit_timeout: Duration,
    /// How long the ring and IB tests wait.
    pub test_timeout: Duration,
}

impl Default for RingConfig {
    fn default() -> Self {
        RingConfig {
            ring_bytes: 64 * 1024,
            ih_ring_bytes: 4096,
            submit_timeout: Duration::from_millis(100),
            test_timeout: Duration::from_millis(100),
        }
    }
}

impl RingConfig {
    /// The default with a ring of `bytes`.
    pub fn with_ring_bytes(bytes: usize) -> Self {
        RingConfig { ring_bytes: bytes, ..RingConfig::default() }
    }

    fn validate(&self) -> Result<(), ConfigError> {
        let b = self.ring_bytes;
        let dwords = MIN_RING_DWORDS * 4..=MAX_RING_DWORDS * 4;
        if !b.is_power_of_two() || !dwords.contains(&b) {
            return Err(ConfigError::BadRingSize { bytes: b });
        }
        let ih = self.ih_ring_bytes;
        if !ih.is_power_of_two() || !(256..=256 << 10).contains(&ih) {
            return Err(ConfigError::BadIhRingSize { bytes: ih });
        }
        Ok(())
    }
}

/// A submitted fence: done when the write-back sequence reaches `seq`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Fence {
    /// Sequence number (64-bit, never wraps in practice).
    pub seq: u64,
}

/// Counters for tests and benchmarks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stats {
    /// Doorbells (`CP_RB_WPTR` writes).
    pub doorbells: u64,
    /// Submissions.
    pub submissions: u64,
    /// Fences emitted.
    pub fences: u64,
    /// Soft resets.
    pub resets: u64,
    /// Firmware uploads.
    pub uploads: u64,
}

/// What [`Evergreen::recover`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RecoverReport {
    /// Whether the microcode read-back failed and the images were uploaded again.
    pub reloaded_firmware: bool,
}

/// The command ring the driver owns: ring memory and the write-back page (read pointer at
/// [`WB_RPTR_OFFSET`], fence at [`WB_FENCE_OFFSET`], IH write pointer at [`WB_IH_WPTR_OFFSET`]),
/// both given back to their allocator when the ring is dropped.
pub(crate) type Ring<'d, A> = EvergreenRing<DmaBuffer<'d, A>, DmaBuffer<'d, A>>;

/// A Radeon Evergreen (Cypress) or Cayman, brought up and running its ring.
///
/// `IO` is the register BAR, `C` the clock that bounds every wait, `A` the allocator the ring,
/// write-back page and interrupt ring came from (borrowed for `'d`). Dropping the driver (or
/// [`shutdown`](Self::shutdown)) stops the CP and the interrupt ring first and then gives the
/// memory back, so the GPU never reads or writes freed memory.
pub struct Evergreen<'d, IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> {
    pub(crate) io: IO,
    pub(crate) clock: C,
    dma: &'d A,
    chip: Chipset,
    config: RingConfig,
    ring: Ring<'d, A>,
    pub(crate) ih: IhRing<'d, A>,
    seq: u64,
    upload: UploadReport,
    stats: Stats,
}

impl<'d, IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> Evergreen<'d, IO, C, A> {
    /// Bring the GPU up: check the firmware set is `chip`'s and the configuration is sane
    /// (nothing touched otherwise), allocate the rings from `dma` (the driver keeps them until
    /// it is dropped), upload and read back PFP, ME and RLC with the engines halted, program the
    /// ring, write `ME_INITIALIZE` (§9.2.1), un-halt, run the ring test and the IB test, set up
    /// the interrupt ring and test it (a fence's end-of-pipe interrupt must arrive,
    /// [`TestError::NoInterrupt`] otherwise).
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
        if io.read::<GRBM_STATUS>().raw() == u32::MAX {
            return Err(InitError::DeviceGone(DeviceGone));
        }
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
            seq: 0,
            upload: UploadReport::default(),
            stats: Stats::default(),
        };
        // On error `gpu` is dropped: CP halted, interrupts off, memory given back.
        gpu.bring_up(firmware)?;
        Ok(gpu)
    }

    fn bring_up(&mut self, firmware: &EvergreenFirmware<'_>) -> Result<(), InitError> {
        self.load_firmware(firmware)?;
        self.start_cp()?;
        self.ring_test()?;
        self.ib_test()?;
        self.init_ih()?;
        Ok(self.interrupt_test()?)
    }

    /// Stop the GPU's use of the driver's memory (the interrupt ring disabled, then the ME and
    /// PFP halted) and give the ring, write-back page and interrupt ring back to the allocator.
    /// Dropping the driver does the same.
    pub fn shutdown(self) {
        drop(self);
    }

    /// What the driver does before its memory goes back: the IH ring off (no more vectors or
    /// write-pointer write-backs, Linux radeon r600.c `r600_disable_interrupts`), then the ME
    /// and PFP halted (no more ring or IB fetches, read-pointer or fence write-backs; Linux
    /// radeon evergreen.c `evergreen_cp_stop` via `r700_cp_stop`).
    fn stop(&mut self) {
        self.disable_interrupts();
        self.halt_cp();
    }

    /// `CP_ME_CNTL`: ME and PFP halted (Linux radeon `r700_cp_stop`).
    fn halt_cp(&self) {
        self.io.write(CP_ME_CNTL::RESET.with_me_halt(true).with_pfp_halt(true));
    }

    /// The allocator the driver's memory comes from (and goes back to).
    pub fn dma(&self) -> &'d A {
        self.dma
    }

    /// The chipset.
    pub fn chip(&self) -> Chipset {
        self.chip
    }

    /// The register interface (for tests and tools; the driver owns the CP registers).
    pub fn io(&self) -> &IO {
        &self.io
    }

    /// The clock.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// The configuration.
    pub fn config(&self) -> &RingConfig {
        &self.config
    }

    /// The command ring (pointers, counters, memory).
    pub fn ring(&self) -> &EvergreenRing<DmaBuffer<'d, A>, DmaBuffer<'d, A>> {
        &self.ring
    }

    /// The last firmware upload's counts.
    pub fn upload_report(&self) -> UploadReport {
        self.upload
    }

    /// Counters.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// `Err(DeviceGone)` if the device reads all-ones (`GRBM_STATUS` has reserved bits a live
    /// chip never sets; Linux radeon evergreend.h).
    pub fn check_alive(&self) -> Result<(), DeviceGone> {
        if self.io.read::<GRBM_STATUS>().raw() == u32::MAX { Err(DeviceGone) } else { Ok(()) }
    }

    /// The write-back page (read pointer, fence, IH write pointer).
    pub(crate) fn writeback(&self) -> &DmaRegion {
        self.ring.writeback().0
    }

    /// Bus address of `offset` in the write-back page.
    pub(crate) fn wb_address(&self, offset: usize) -> BusAddress {
        BusAddress(self.writeback().bus_address().0 + offset as u64)
    }

    fn load_firmware(&mut self, firmware: &EvergreenFirmware<'_>) -> Result<(), InitError> {
        // Halted ME/PFP and a stopped RLC before any RAM write; left halted for ME_INITIALIZE.
        self.upload = evergreen::upload(&self.io, firmware)?;
        self.stats.uploads += 1;
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
    fn start_cp(&mut self) -> Result<(), InitError> {
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

    /// Reserve `dwords` (plus padding) with back-pressure, let `build` write packets, pad to
    /// 16 dwords with type-2 fillers, ring the doorbell once.
    pub fn submit<T>(
        &mut self,
        dwords: usize,
        build: impl FnOnce(&mut Submission<'_, 'd, A>) -> Result<T, PacketError>,
    ) -> Result<T, SubmitError> {
        self.check_alive()?;
        let need = dwords + SUBMIT_ALIGN;
        self.ring
            .reserve_blocking(need, &self.clock, self.config.submit_timeout)
            .map_err(SubmitError::RingFull)?;
        let fence_addr = self.wb_address(WB_FENCE_OFFSET);
        let mut s = Submission { ring: &mut self.ring, seq: &mut self.seq, fence_addr, fences: 0 };
        let out = build(&mut s)?;
        let fences = s.fences;
        self.ring
            .pad_to(SUBMIT_ALIGN)
            .map_err(|_| SubmitError::Packet(PacketError::BadLength { dwords: SUBMIT_ALIGN }))?;
        let doorbell = self.ring.commit();
        self.io.write(doorbell);
        self.stats.doorbells += 1;
        self.stats.submissions += 1;
        self.stats.fences += fences;
        Ok(out)
    }

    /// Submit a fence alone.
    pub fn fence(&mut self) -> Result<Fence, SubmitError> {
        self.submit(FENCE_DWORDS, |s| s.fence())
    }

    /// The last sequence number the CP wrote back.
    pub fn last_signalled(&self) -> u64 {
        let wb = self.writeback();
        let lo = wb.read_u32(WB_FENCE_OFFSET).unwrap_or(0) as u64;
        let hi = wb.read_u32(WB_FENCE_OFFSET + 4).unwrap_or(0) as u64;
        (hi << 32) | lo
    }

    /// Whether `fence` has signalled.
    pub fn signalled(&self, fence: &Fence) -> bool {
        self.last_signalled() >= fence.seq
    }

    /// Wait for `fence`, at most `timeout`. On a timeout, tells a slow CP (read pointer moved)
    /// from a hung one and checks the device is still there.
    pub fn wait(&self, fence: &Fence, timeout: Duration) -> Result<(), FenceError> {
        if fence.seq > self.seq {
            return Err(FenceError::NotSubmitted { seq: fence.seq });
        }
        let rptr_before = self.io.read::<CP_RB_RPTR>().raw();
        let signalled_before = self.last_signalled();
        match poll_until(&self.clock, timeout, || self.signalled(fence).then_some(())) {
            Ok(()) => Ok(()),
            Err(waited) => {
                if self.check_alive().is_err() {
                    return Err(FenceError::DeviceGone(DeviceGone));
                }
                let rptr_after = self.io.read::<CP_RB_RPTR>().raw();
                Err(FenceError::Timeout {
                    seq: fence.seq,
                    last_signalled: self.last_signalled(),
                    waited,
                    cp_progressed: rptr_after != rptr_before
                        || self.last_signalled() != signalled_before,
                })
            }
        }
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
        // In range (the const assertion below): the write cannot fail.
        let _ = self.io.write_at(TEST_SCRATCH, SCRATCH_REG0::from_raw(TEST_SEED));
    }

    fn wait_scratch(&self, expected: u32) -> Result<(), TestError> {
        let mut found = 0;
        poll_until(&self.clock, self.config.test_timeout, || {
            found = self.test_scratch();
            (found == expected).then_some(())
        })
        .map_err(|waited| {
            if found == u32::MAX && self.check_alive().is_err() {
                TestError::DeviceGone(DeviceGone)
            } else {
                TestError::Mismatch { expected, found, waited }
            }
        })
    }

    /// Ring test (Linux radeon r600.c `r600_ring_test`): seed a scratch register by MMIO, have
    /// the CP write [`TEST_VALUE`] there with `SET_CONFIG_REG` (§9.4.14), poll it.
    pub fn ring_test(&mut self) -> Result<(), TestError> {
        self.seed_test_scratch();
        self.submit(3, |s| s.set_scratch(TEST_SCRATCH, TEST_VALUE))?;
        self.wait_scratch(TEST_VALUE)
    }

    /// IB test (Linux radeon r600.c `r600_ib_test`): the scratch write from an indirect buffer
    /// (§9.3.1), then a fence; the scratch register must hold the value once the fence passed.
    /// The buffer comes from the driver's allocator and goes back once the fence has signalled;
    /// if the IB reached the ring and its fence was not seen, it is kept allocated (leaked):
    /// the CP might still fetch it.
    pub fn ib_test(&mut self) -> Result<(), TestError> {
        let layout = DmaLayout::new(256, 256).map_err(TestError::Dma)?;
        let buffer = DmaBuffer::allocate(self.dma, layout).map_err(TestError::Dma)?;
        let fence = match self.submit_ib_test(&buffer) {
            Ok(fence) => fence,
            Err(e) => {
                // `submit` failed before its doorbell, but packets it wrote stay in the ring
                // and go to the CP with the next one: the IB packet may be among them.
                if self.ring.pending_dwords() > 0 {
                    buffer.into_raw();
                }
                return Err(e);
            }
        };
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
        Pm4Writer::<_, EvergreenFamily>::with_family(&mut ib)
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

    /// Recover from a hang: halt the ME and PFP, soft-reset the CP and its blocks
    /// (`GRBM_SOFT_RESET`), reprogram and restart the ring, ring test. Pending fences are
    /// abandoned (the fence sequence jumps past them so later waits do not see stale ones).
    pub fn reset(&mut self) -> Result<(), InitError> {
        self.check_alive()?;
        self.halt_cp();
        self.start_cp()?;
        // Abandoned fences never signal; write the sequence so `signalled` agrees.
        let _ = self.writeback().write_u32(WB_FENCE_OFFSET, self.seq as u32);
        let _ = self.writeback().write_u32(WB_FENCE_OFFSET + 4, (self.seq >> 32) as u32);
        self.ring_test()?;
        Ok(())
    }

    /// Full recovery: read the microcode back (a function-level reset or power loss clears the
    /// RAMs); if it does not match, upload it again; then [`reset`](Self::reset).
    pub fn recover(
        &mut self,
        firmware: &EvergreenFirmware<'_>,
    ) -> Result<RecoverReport, InitError> {
        if EvergreenUcode::of(self.chip) != Some(firmware.chip()) {
            return Err(InitError::WrongChip {
                device: self.chip,
                firmware: firmware.chip().chip(),
            });
        }
        self.check_alive()?;
        self.halt_cp();
        let reloaded = match evergreen::verify(&self.io, firmware) {
            Ok(()) => false,
            Err(evergreen::LoadError::DeviceGone { .. }) => {
                return Err(InitError::DeviceGone(DeviceGone));
            }
            Err(_) => {
                self.load_firmware(firmware)?;
                true
            }
        };
        self.reset()?;
        self.init_ih()?;
        Ok(RecoverReport { reloaded_firmware: reloaded })
    }
}

impl<IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> Drop for Evergreen<'_, IO, C, A> {
    fn drop(&mut self) {
        // Before the ring, write-back and interrupt-ring buffers (fields) are given back.
        self.stop();
    }
}

/// An address as a LO/HI register pair holds it: bits 31:0, and bits 39:32 (as the address
/// with the low 32 bits clear, which the generated HI setters take).
pub(crate) fn split_address(a: BusAddress) -> (BusAddress, BusAddress) {
    (BusAddress(a.0 & 0xFFFF_FFFF), BusAddress(a.0 & !0xFFFF_FFFF))
}

/// Most dwords [`Submission::cond_exec`] stages (on the stack; no allocation).
pub const COND_EXEC_MAX_DWORDS: usize = 64;

/// Byte offset of scratch register `n` (0..8).
fn scratch_offset(n: usize) -> Result<usize, PacketError> {
    <SCRATCH_REG0 as Array>::offset_of(n)
        .map_err(|_| PacketError::OutOfRange { offset: SCRATCH_REG0::OFFSET + 4 * n })
}

/// Dwords of a fence: `SURFACE_SYNC` (5) + `EVENT_WRITE_EOP` (6).
pub const FENCE_DWORDS: usize = 11;

/// Packets of one submission, written into the reserved part of the driver's ring (whose memory
/// came from an `A` for `'d`).
pub struct Submission<'a, 'd, A: DmaAllocator + ?Sized> {
    ring: &'a mut Ring<'d, A>,
    seq: &'a mut u64,
    fence_addr: BusAddress,
    fences: u64,
}

impl<A: DmaAllocator + ?Sized> Submission<'_, '_, A> {
    /// The ring as a raw packet sink (for packets this API does not name).
    pub fn sink(&mut self) -> &mut impl CommandSink {
        &mut *self.ring
    }

    /// A type-3 packet (graphics shader type).
    pub fn packet(&mut self, op: pm4::EvergreenPacket, body: &[u32]) -> Result<(), PacketError> {
        pm4::packet(self.ring, op, body, false)
    }

    /// A type-3 packet with SHADER_TYPE compute (§9.1.4 bit 1).
    pub fn compute_packet(
        &mut self,
        op: pm4::EvergreenPacket,
        body: &[u32],
    ) -> Result<(), PacketError> {
        pm4::packet(self.ring, op, body, true)
    }

    /// Consecutive registers from byte offset `first` through their `SET_*` packet.
    pub fn set_regs(
        &mut self,
        first: usize,
        values: &[u32],
        compute: bool,
    ) -> Result<(), PacketError> {
        pm4::set_regs(self.ring, first, values, compute)
    }

    /// `SET_CONFIG_REG` of scratch register `n` (§9.4.14).
    pub fn set_scratch(&mut self, n: usize, value: u32) -> Result<(), PacketError> {
        pm4::set_regs(self.ring, scratch_offset(n)?, &[value], false)
    }

    /// `INDIRECT_BUFFER` (§9.3.1, the ring's writer): the CP runs `ib`, then continues here.
    pub fn indirect_buffer(&mut self, ib: IbDescriptor) -> Result<(), PacketError> {
        Ok(self.ring.writer().indirect_buffer(ib)?)
    }

    /// A fence: `SURFACE_SYNC` of the texture, vertex and shader caches (§9.6.7), then
    /// `EVENT_WRITE_EOP` writing the next 64-bit sequence number to the write-back page with an
    /// interrupt (§9.6.2). [`FENCE_DWORDS`] dwords.
    pub fn fence(&mut self) -> Result<Fence, PacketError> {
        let seq = *self.seq + 1;
        let eop = pm4::eop_fence(self.fence_addr, seq, true)?;
        self.ring.reserve(FENCE_DWORDS)?;
        self.packet(opcode::SURFACE_SYNC, &pm4::surface_sync_all(COHER_TC_VC_SH)?)?;
        self.packet(opcode::EVENT_WRITE_EOP, &eop)?;
        *self.seq = seq;
        self.fences += 1;
        Ok(Fence { seq })
    }

    /// `WAIT_REG_MEM` (§9.6.8): the ME waits until `(*address & mask) <compare> reference`.
    pub fn wait_mem(
        &mut self,
        address: BusAddress,
        compare: Compare,
        reference: u32,
        mask: u32,
    ) -> Result<(), PacketError> {
        let body = pm4::wait_mem(address, compare, reference, mask)?;
        self.packet(opcode::WAIT_REG_MEM, &body)
    }

    /// `COND_EXEC` (§9.5.1): the packets `build` writes run only if the dword at `address` is
    /// not zero. The EXEC_COUNT is what `build` wrote.
    pub fn cond_exec(
        &mut self,
        address: BusAddress,
        max_dwords: usize,
        build: impl FnOnce(&mut SliceSink<'_>) -> Result<(), PacketError>,
    ) -> Result<(), PacketError> {
        let mut buf = [0u32; COND_EXEC_MAX_DWORDS];
        let mut staging = SliceSink::new(&mut buf[..max_dwords.min(COND_EXEC_MAX_DWORDS)]);
        build(&mut staging)?;
        let inner = staging.written();
        let body = pm4::cond_exec(address, inner.len())?;
        self.ring.reserve(4 + inner.len())?;
        self.ring.push(pm4::header(opcode::COND_EXEC, body.len(), false, false)?)?;
        self.ring.push_slice(&body)?;
        self.ring.push_slice(inner)?;
        Ok(())
    }

    /// `MEM_WRITE` (§9.7.1): 64-bit `value` to the quadword at `address`, at the top of the
    /// pipe.
    pub fn mem_write(&mut self, address: BusAddress, value: u64) -> Result<(), PacketError> {
        let body = pm4::mem_write(address, value)?;
        self.packet(opcode::MEM_WRITE, &body)
    }

    /// `COND_WRITE` (§9.5.2): write `data` to `write` if `(*poll & mask) <compare> reference`;
    /// the CP continues either way.
    pub fn cond_write(
        &mut self,
        poll: BusAddress,
        compare: Compare,
        reference: u32,
        mask: u32,
        write: BusAddress,
        data: u32,
    ) -> Result<(), PacketError> {
        let body = pm4::cond_write(poll, compare, reference, mask, write, data)?;
        self.packet(opcode::COND_WRITE, &body)
    }

    /// `PFP_SYNC_ME` (§9.6.5): the PFP waits until the ME has caught up.
    pub fn pfp_sync_me(&mut self) -> Result<(), PacketError> {
        self.packet(opcode::PFP_SYNC_ME, &[0])
    }

    /// `EVENT_WRITE_EOS` (§9.6.3): `data` to `address` once the compute shaders before it are
    /// done (CS_DONE).
    pub fn eos_write(&mut self, address: BusAddress, data: u32) -> Result<(), PacketError> {
        let body = pm4::eos_write(address, data)?;
        self.compute_packet(opcode::EVENT_WRITE_EOS, &body)
    }

    /// `SET_PREDICATION` (§9.5.3).
    pub fn set_predication(
        &mut self,
        address: BusAddress,
        op: PredOp,
        draw_if_visible: bool,
    ) -> Result<(), PacketError> {
        let body = pm4::set_predication(address, op, draw_if_visible)?;
        self.packet(opcode::SET_PREDICATION, &body)
    }

    /// A predicated type-3 packet (§9.1.4 bit 0): skipped while the predicate is false.
    pub fn predicated_packet(
        &mut self,
        op: pm4::EvergreenPacket,
        body: &[u32],
    ) -> Result<(), PacketError> {
        if body.is_empty() || body.len() > pm4::MAX_BODY_DWORDS {
            return Err(PacketError::BadLength { dwords: body.len() });
        }
        self.ring.write_packet(pm4::header(op, body.len(), false, true)?, body)?;
        Ok(())
    }

    /// `CP_DMA` copy of `bytes` from `src` to `dst` (Linux radeon evergreend.h), split into
    /// transfers of at most [`pm4::CP_DMA_MAX_BYTES`]; the last one with CP_SYNC.
    pub fn cp_dma_copy(
        &mut self,
        src: BusAddress,
        dst: BusAddress,
        bytes: usize,
    ) -> Result<(), PacketError> {
        let mut done = 0;
        while done < bytes {
            let n = (bytes - done).min(pm4::CP_DMA_MAX_BYTES & !3);
            let body = pm4::cp_dma_copy(
                BusAddress(src.0 + done as u64),
                BusAddress(dst.0 + done as u64),
                n,
                done + n == bytes,
            )?;
            self.packet(opcode::CP_DMA, &body)?;
            done += n;
        }
        Ok(())
    }

    /// `CP_DMA` fill of `bytes` (a multiple of 4) at `dst` with `value`.
    pub fn cp_dma_fill(
        &mut self,
        value: u32,
        dst: BusAddress,
        bytes: usize,
    ) -> Result<(), PacketError> {
        let mut done = 0;
        while done < bytes {
            let n = (bytes - done).min(pm4::CP_DMA_MAX_BYTES & !3);
            let body =
                pm4::cp_dma_fill(value, BusAddress(dst.0 + done as u64), n, done + n == bytes)?;
            self.packet(opcode::CP_DMA, &body)?;
            done += n;
        }
        Ok(())
    }
}

/// `CP_COHER_CNTL` TC_ACTION_ENA | VC_ACTION_ENA | SH_ACTION_ENA (Linux radeon evergreen.c
/// fence emission; §9.6.7 refers to the register).
pub const COHER_TC_VC_SH: u32 = baregpu_regs::evergreen::cp::CP_COHER_CNTL::RESET
    .with_tc_action_ena(true)
    .with_vc_action_ena(true)
    .with_sh_action_ena(true)
    .raw();
