//! The CP driver: bring-up, submission, fences, interrupts, reset and recovery.

use core::time::Duration;

use baregpu_firmware::amd::{CpMicrocode, LoadError, UploadReport, r5xx as fw};
use baregpu_hal::barrier::dma_rmb;
use baregpu_hal::dma::{DmaAllocator, DmaLayout, DmaRegion};
use baregpu_hal::time::{Clock, poll_until};
use baregpu_hal::{Array, RegisterIo, RegisterIoExt};
use baregpu_regs::r5xx::cp::{
    CP_CSQ_CNTL, CP_CSQ_MODE, CP_RB_CNTL, CP_RB_RPTR, CP_RB_RPTR_WR, CP_RB_WPTR, CP_RB_WPTR_DELAY,
    SCRATCH_ADDR, SCRATCH_REG0, SCRATCH_UMSK, cp_csq_cntl, cp_rb_cntl,
};
use baregpu_regs::r5xx::rbbm::{GEN_INT_CNTL, GEN_INT_STATUS, RBBM_SOFT_RESET};
use baregpu_ring::ib::IndirectBuffer;
use baregpu_ring::pm4::{Pm4Writer, pad_count};
use baregpu_ring::r5xx::{
    IB_PACKET_DWORDS, IbDescriptor, MAX_RING_DWORDS, MIN_RING_DWORDS, SUBMIT_ALIGN,
};
use baregpu_ring::ring::{CommandRing, RingConfigError, WaitError};

use crate::error::{
    ConfigError, DeviceGone, FenceError, InitError, ResetError, SubmitError, TestError,
};
use crate::pio::PioSession;

/// Protocol constants, each with its source.
pub mod consts {
    use baregpu_regs::r5xx::cp::cp_rb_cntl::MaxFetch;

    /// `CP_RB_CNTL.RB_BLKSZ` upper bound: log2 quadwords between read-pointer writebacks
    /// (§5.4, §11.1). Linux r100.c uses one GPU page, `log2(4096 / 8)` = 9; the driver lowers it
    /// for small rings (see [`crate::RingConfig`]) so a ring gets at least 4 updates per pass.
    pub const LINUX_RB_BLKSZ: u8 = 9;

    /// `CP_RB_CNTL.MAX_FETCH` (§11.1): 2 double octwords (64 bytes) per CP memory read, Linux
    /// r100.c `max_fetch = 1`.
    pub const MAX_FETCH: MaxFetch = MaxFetch::V2DoubleOctwords;

    /// `CP_CSQ_MODE.INDIRECT1_START` (§11.1): the primary queue gets the command-cache
    /// locations 0..16, i.e. 16 double octwords (Linux r100.c `indirect1_start = 16`). §11.1
    /// requires at least twice MAX_FETCH (4 double octwords).
    pub const INDIRECT1_START: u8 = 16;

    /// `CP_CSQ_MODE.INDIRECT2_START` (§11.1): indirect queue 1 gets locations 16..80 and
    /// indirect queue 2 80..0x5F (Linux r100.c `indirect2_start = 80`).
    pub const INDIRECT2_START: u8 = 80;

    /// Dwords in a double octword (32 bytes, §11.1 MAX_FETCH "1 double octword (32 bytes)").
    pub const DWORDS_PER_DOUBLE_OCTWORD: usize = 8;

    /// Capacity of the primary PIO queue in dwords: [`INDIRECT1_START`] double octwords
    /// (§11.1 `CP_CSQ_MODE.INDIRECT1_START` "is also the size in double octwords of the Primary
    /// Queue cache") = 128 dwords.
    pub const PIO_PRIMARY_QUEUE_DWORDS: usize =
        INDIRECT1_START as usize * DWORDS_PER_DOUBLE_OCTWORD;

    // §11.1 CP_CSQ_MODE: each queue at least twice MAX_FETCH (2 double octwords here), the
    // indirect-2 queue ends at 0x5F.
    const _: () = assert!(INDIRECT1_START >= 2 * 2 && INDIRECT2_START - INDIRECT1_START >= 4);
    const _: () = assert!(INDIRECT2_START < 0x5F - 4);

    /// Polls between two all-ones checks while waiting on DMA memory (fences, ring space): a
    /// device that fell off the bus is reported within 64 polls instead of only at the deadline.
    pub const LIVENESS_CHECK_EVERY: u64 = 64;
}

/// Byte size of the writeback page (one GPU page, Linux `RADEON_GPU_PAGE_SIZE`).
pub const WRITEBACK_BYTES: usize = 4096;
/// Offset of the scratch writeback area in the writeback page: `SCRATCH_ADDR` points here and
/// the CP writes `SCRATCH_REGn` to `+ 4n` (§5.9). Linux radeon.h `RADEON_WB_SCRATCH_OFFSET` 0.
pub const WB_SCRATCH_OFFSET: usize = 0;
/// Offset of the read-pointer writeback dword (`CP_RB_RPTR_ADDR`, §5.4). Linux radeon.h
/// `RADEON_WB_CP_RPTR_OFFSET` 1024.
pub const WB_RPTR_OFFSET: usize = 1024;

/// Scratch register of the ring and IB tests (hardware-facts.md).
pub const RING_TEST_SCRATCH: usize = 0;
/// Scratch register carrying fence sequence numbers (§5.9).
pub const FENCE_SCRATCH: usize = 1;
/// First scratch register free for the caller (2..8, all written back).
pub const USER_SCRATCH: usize = 2;
/// Value the ring test writes by MMIO first (hardware-facts.md, Linux r100_ring_test).
pub const RING_TEST_SEED: u32 = 0xCAFE_DEAD;
/// Value the ring test's type-0 packet writes (hardware-facts.md, Linux r100_ring_test).
pub const RING_TEST_VALUE: u32 = 0xDEAD_BEEF;

const SCRATCH_COUNT: usize = <SCRATCH_REG0 as Array>::COUNT;
const _: () = assert!(FENCE_SCRATCH < SCRATCH_COUNT && USER_SCRATCH < SCRATCH_COUNT);
const _: () = assert!(WB_SCRATCH_OFFSET + 4 * SCRATCH_COUNT <= WB_RPTR_OFFSET);
const _: () = assert!(WB_RPTR_OFFSET + 4 <= WRITEBACK_BYTES);

/// Dwords of one fence: a type-0 header and the scratch value (§6.1.1).
pub(crate) const FENCE_DWORDS: usize = 2;
/// Dwords of one single-register write (type-0 header + value).
const REG_WRITE_DWORDS: usize = 2;

/// The ring type the driver owns: ring memory and the writeback page (RPTR dword at
/// [`WB_RPTR_OFFSET`], scratch area at [`WB_SCRATCH_OFFSET`]).
pub type Ring = CommandRing<DmaRegion, DmaRegion>;

/// Ring size and timeouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RingConfig {
    /// Ring size in bytes: a power of two from 32 B to 32 MiB (§11.1 RB_BUFSZ 2..=22 gives
    /// 2^(RB_BUFSZ+1) dwords).
    pub ring_bytes: usize,
    /// Longest wait for ring space (back-pressure) or PIO queue space before a submission fails.
    pub submit_timeout: Duration,
    /// Longest wait for the MicroEngine to idle (`CP_ME_CNTL.ME_BUSY`) before the upload.
    pub idle_timeout: Duration,
    /// Longest wait for the ring/IB test scratch value.
    pub test_timeout: Duration,
}

impl RingConfig {
    /// 64 KiB ring, all timeouts [`RingConfig::DEFAULT_TIMEOUT`].
    pub const DEFAULT: RingConfig = RingConfig {
        ring_bytes: 64 * 1024,
        submit_timeout: Self::DEFAULT_TIMEOUT,
        idle_timeout: Self::DEFAULT_TIMEOUT,
        test_timeout: Self::DEFAULT_TIMEOUT,
    };

    /// 100 ms: Linux radeon's `usec_timeout` (100000 µs) for ring tests and idle waits. A
    /// healthy CP consumes a whole 64 KiB ring of register writes in well under a millisecond,
    /// so anything slower is a hang, and 100 ms keeps a dead device's error path short.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(100);

    /// A ring of `ring_bytes` with the default timeouts.
    pub const fn with_ring_bytes(ring_bytes: usize) -> Self {
        RingConfig { ring_bytes, ..Self::DEFAULT }
    }

    fn validate(&self) -> Result<(), ConfigError> {
        let bytes = self.ring_bytes;
        let dwords = bytes / 4;
        if !bytes.is_multiple_of(4)
            || !dwords.is_power_of_two()
            || !(MIN_RING_DWORDS..=MAX_RING_DWORDS).contains(&dwords)
        {
            return Err(ConfigError::BadRingSize { bytes });
        }
        Ok(())
    }
}

impl Default for RingConfig {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// A point in the command stream: done once the CP wrote `seq` back from the fence scratch
/// register (§5.9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fence {
    seq: u32,
}

impl Fence {
    pub(crate) const fn new(seq: u32) -> Self {
        Fence { seq }
    }

    /// Sequence number (monotonically increasing, wrapping).
    pub const fn seq(&self) -> u32 {
        self.seq
    }
}

/// `true` if `seq` is at or before `last` in wrapping order (fewer than 2^31 apart).
const fn seq_reached(last: u32, seq: u32) -> bool {
    (last.wrapping_sub(seq) as i32) >= 0
}

/// Interrupt sources (`GEN_INT_CNTL` enables, `GEN_INT_STATUS` status; bits from the register
/// database, Linux rs600d.h).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Interrupts {
    /// The software interrupt (fired by a `GEN_INT_STATUS` write, from the host or a packet).
    pub software: bool,
    /// The R5xx scratch interrupt (§5.9: a scratch pair written back ≥ the driver's value).
    pub scratch: bool,
}

impl Interrupts {
    /// Whether any source is set.
    pub const fn any(self) -> bool {
        self.software || self.scratch
    }

    fn cntl(self) -> GEN_INT_CNTL {
        GEN_INT_CNTL::RESET.with_sw_int_en(self.software).with_scratch_int_mask(self.scratch)
    }

    fn from_status(status: GEN_INT_STATUS) -> Self {
        Interrupts { software: status.sw_int(), scratch: status.scratch_int_stat() }
    }

    /// The write-1-to-clear acknowledgement of these sources.
    fn ack(self) -> GEN_INT_STATUS {
        GEN_INT_STATUS::RESET.with_sw_int(self.software).with_scratch_int_stat(self.scratch)
    }
}

/// Counters for tests, benchmarks and logs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Flushed submissions (batches) that carried packets.
    pub batches: u64,
    /// `CP_RB_WPTR` doorbell writes (one per batch; the §5.8 pointer resets are not counted).
    pub doorbells: u64,
    /// Fences emitted (ring and PIO).
    pub fences: u64,
    /// IB1 packets emitted from the ring.
    pub indirect_buffers: u64,
    /// Type-2 padding dwords written to the ring.
    pub padding_dwords: u64,
    /// Dwords written through the PIO aperture.
    pub pio_dwords: u64,
    /// Successful [`R5xx::reset`]s.
    pub resets: u64,
    /// Successful [`R5xx::recover`]s.
    pub recoveries: u64,
}

/// What [`R5xx::reset`] did to the fences in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResetReport {
    /// The last fence the CP signalled before the reset: fences up to here completed.
    pub completed: u32,
    /// The last fence emitted before the reset. Fences in `completed + 1..=abandoned_until`
    /// were **abandoned** (their packets were discarded with the ring contents); they now
    /// read as signalled so no waiter blocks forever (Linux `radeon_fence_driver_force_completion`
    /// does the same). Equal to `completed` when nothing was lost.
    pub abandoned_until: u32,
}

/// What [`R5xx::recover`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecoverReport {
    /// Whether the MicroEngine RAM failed its read-back (§5.13) and was reloaded.
    pub microcode_reloaded: bool,
    /// Fences, as for [`R5xx::reset`].
    pub fences: ResetReport,
}

/// A running R5xx command processor.
///
/// `IO` is the register BAR (real MMIO, an in-process model, the QEMU mailbox), `C` the clock
/// that bounds every wait.
pub struct R5xx<IO: RegisterIo, C: Clock> {
    pub(crate) io: IO,
    pub(crate) clock: C,
    pub(crate) config: RingConfig,
    pub(crate) ring: Ring,
    /// `SCRATCH_ADDR` for the writeback page's scratch area (checked at `init`).
    scratch_addr: SCRATCH_ADDR,
    /// Last fence sequence number emitted.
    pub(crate) seq: u32,
    interrupts: Interrupts,
    upload: UploadReport,
    pub(crate) stats: Stats,
}

impl<IO: RegisterIo, C: Clock> core::fmt::Debug for R5xx<IO, C> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("R5xx")
            .field("config", &self.config)
            .field("ring_head", &self.ring.head())
            .field("seq", &self.seq)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

/// Whether the device reads all-ones: `CP_RB_RPTR` holds `RB_RPTR` in bits 22:0 only (§11.1),
/// so a live CP never returns 0xFFFF_FFFF from it, while a PCI read nobody answers does.
fn gone(io: &impl RegisterIo) -> bool {
    io.read::<CP_RB_RPTR>().raw() == u32::MAX
}

impl<IO: RegisterIo, C: Clock> R5xx<IO, C> {
    /// Bring the CP up and run the ring test.
    ///
    /// Order (hardware-facts.md "Linux CP bring-up order", §5.8, §5.12, §5.13):
    /// 1. parse `firmware` (`radeon/R520_cp.bin`) and check `config`: a malformed image or an
    ///    unusable ring size fails here with **no register access and no allocation**;
    /// 2. allocate the ring (`config.ring_bytes`, page-aligned) and the writeback page;
    /// 3. one read to detect a device reading all-ones ([`InitError::DeviceGone`]);
    /// 4. stop the streams (`CP_CSQ_CNTL` = `CP_CSQ_MODE` = 0) and pulse
    ///    `RBBM_SOFT_RESET.SOFT_RESET_CP` (§5.8 steps 1-2: whatever ran before us is stopped);
    /// 5. wait for `CP_ME_CNTL.ME_BUSY` = 0, bounded by `config.idle_timeout`;
    /// 6. upload the microcode (1 + 512 writes) and verify it by read-back
    ///    ([`InitError::Microcode`] on a mismatch);
    /// 7. program the ring, writeback and scratch registers and enable primary + indirect bus
    ///    mastering (the Linux order of hardware-facts.md);
    /// 8. ring test (hardware-facts.md): `SCRATCH_REG0` = 0xCAFEDEAD by MMIO, then a type-0
    ///    write of 0xDEADBEEF through the ring, polled (bounded by `config.test_timeout`).
    ///
    /// The PCI function must already decode memory and master the bus ([`crate::pci::enable`]).
    /// On failure after step 2 the memory is given back to `dma`.
    pub fn init(
        io: IO,
        clock: C,
        dma: &impl DmaAllocator,
        firmware: &[u8],
        config: RingConfig,
    ) -> Result<Self, InitError> {
        let microcode = CpMicrocode::parse(firmware)?;
        config.validate().map_err(InitError::Config)?;

        let ring_layout =
            DmaLayout::new(config.ring_bytes, WRITEBACK_BYTES).map_err(InitError::Dma)?;
        let wb_layout = DmaLayout::new(WRITEBACK_BYTES, WRITEBACK_BYTES).map_err(InitError::Dma)?;
        let ring_mem = dma.allocate(ring_layout).map_err(InitError::Dma)?;
        let wb_mem = match dma.allocate(wb_layout) {
            Ok(m) => m,
            Err(e) => {
                dma.deallocate(ring_mem);
                return Err(InitError::Dma(e));
            }
        };
        wb_mem.zero();
        let ring = match CommandRing::new(ring_mem, wb_mem, WB_RPTR_OFFSET) {
            Ok(r) => r,
            Err(e) => {
                // `new` consumed the regions only on success; on error they are dropped here,
                // so allocate-and-fail leaks bump memory at worst (never reused by the CP).
                return Err(InitError::Ring(e));
            }
        };
        // The scratch area shares the page whose RPTR dword the ring just accepted, so
        // SCRATCH_ADDR reaches it; its setter checks that anyway (it never truncates).
        let scratch = ring.writeback().0.bus_address().checked_offset(WB_SCRATCH_OFFSET as u64);
        let scratch_addr = match scratch
            .and_then(|a| SCRATCH_ADDR::RESET.try_with_scratch_addr(a).ok())
        {
            Some(r) => r,
            None => {
                let (ring_mem, wb_mem) = ring.into_parts();
                dma.deallocate(ring_mem);
                dma.deallocate(wb_mem);
                let bad =
                    RingConfigError::BadWriteback { offset: WB_SCRATCH_OFFSET, address: scratch };
                return Err(InitError::Ring(bad));
            }
        };
        let mut gpu = R5xx {
            io,
            clock,
            config,
            ring,
            scratch_addr,
            seq: 0,
            interrupts: Interrupts::default(),
            upload: UploadReport { entries: 0, load_writes: 0, verify_writes: 0, reads: 0 },
            stats: Stats::default(),
        };
        match gpu.bring_up(&microcode) {
            Ok(()) => Ok(gpu),
            Err(e) => {
                gpu.release(dma);
                Err(e)
            }
        }
    }

    fn bring_up(&mut self, microcode: &CpMicrocode<'_>) -> Result<(), InitError> {
        self.check_alive()?;
        self.stop_and_soft_reset();
        self.wait_me_idle()?;
        self.upload = fw::upload(&self.io, microcode)?;
        self.program();
        self.ring_test()?;
        Ok(())
    }

    /// Stop the CP (`CP_CSQ_CNTL` = 0, hardware idle) and give the ring and writeback memory
    /// back to `dma`. The CP must not fetch from them afterwards: the streams are disabled
    /// first (§5.8 step 1).
    pub fn shutdown(self, dma: &impl DmaAllocator) {
        self.release(dma);
    }

    fn release(self, dma: &impl DmaAllocator) {
        self.io.write(CP_CSQ_CNTL::RESET);
        self.io.write(CP_CSQ_MODE::RESET);
        let (ring, wb) = self.ring.into_parts();
        dma.deallocate(ring);
        dma.deallocate(wb);
    }

    /// The register BAR.
    pub fn io(&self) -> &IO {
        &self.io
    }

    /// The clock.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// The configuration in use.
    pub fn config(&self) -> &RingConfig {
        &self.config
    }

    /// The ring (head, committed write pointer, cached read pointer, memory), for inspection.
    pub fn ring(&self) -> &Ring {
        &self.ring
    }

    /// What the microcode upload did (1 + 2 × 256 load writes for R520).
    pub fn upload_report(&self) -> UploadReport {
        self.upload
    }

    /// Counters.
    pub fn stats(&self) -> Stats {
        Stats { doorbells: self.ring.commits(), ..self.stats }
    }

    /// Whether the device reads all-ones (one read of `CP_RB_RPTR`, whose bits 31:23 are not
    /// implemented, §11.1).
    pub fn device_gone(&self) -> bool {
        gone(&self.io)
    }

    fn check_alive(&self) -> Result<(), DeviceGone> {
        if self.device_gone() { Err(DeviceGone) } else { Ok(()) }
    }

    // -----------------------------------------------------------------------------------
    // Bring-up pieces

    /// §5.8 steps 1-2: disable both streams, then assert and de-assert the CP soft reset.
    fn stop_and_soft_reset(&self) {
        self.io.write(CP_CSQ_CNTL::RESET);
        self.io.write(CP_CSQ_MODE::RESET);
        self.io.write(RBBM_SOFT_RESET::RESET.with_soft_reset_cp(true));
        // Read back so the assert reaches the device before the de-assert (posted writes;
        // Linux r100_asic_reset reads RBBM_SOFT_RESET back the same way).
        let _ = self.io.read::<RBBM_SOFT_RESET>();
        self.io.write(RBBM_SOFT_RESET::RESET);
        let _ = self.io.read::<RBBM_SOFT_RESET>();
    }

    /// Wait for `baregpu_firmware`'s readiness check: ME idle, streams off.
    fn wait_me_idle(&self) -> Result<(), InitError> {
        // Bounded by `idle_timeout` (default 100 ms, Linux `usec_timeout`): after the soft
        // reset the ME has nothing to drain, so a busy ME this long is a hang.
        let polled =
            poll_until(&self.clock, self.config.idle_timeout, || match fw::check_ready(&self.io) {
                Ok(()) => Some(Ok(())),
                Err(LoadError::MicroEngineBusy) => None,
                Err(e) => Some(Err(e)),
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

    /// Program the ring after the microcode is in, in the Linux order of hardware-facts.md,
    /// which also performs §5.8 steps 3-7:
    ///
    /// `CP_RB_WPTR_DELAY` = 0 (§5.5: Rage128 behaviour; the driver orders its writes with
    /// `dma_wmb` instead), `CP_RB_CNTL` (BUFSZ, BLKSZ, MAX_FETCH, writeback on), `CP_RB_BASE`,
    /// `RB_RPTR_WR_ENA` + `CP_RB_RPTR_WR` = 0 + `CP_RB_WPTR` = 0 (RPTR = WPTR = 0: empty),
    /// `CP_RB_RPTR_ADDR`, `SCRATCH_ADDR`/`SCRATCH_UMSK`, final `CP_RB_CNTL` (ENA cleared),
    /// `CP_CSQ_MODE` (queue split), `CP_CSQ_CNTL` = primary BM + indirect BM, `GEN_INT_CNTL`.
    /// The host side of the ring is reset to match (both pointers 0).
    fn program(&mut self) {
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

    /// Make every emitted fence read as signalled (after a reset discarded the ring): the fence
    /// scratch register and its writeback both take the last emitted sequence number.
    fn force_fence_completion(&mut self) -> ResetReport {
        let completed = self.last_signalled();
        let value = SCRATCH_REG0::RESET.with_scratch_reg0(self.seq);
        let _ = self.io.write_at(FENCE_SCRATCH, value);
        let (wb, _) = self.ring.writeback();
        let _ = wb.write_u32(WB_SCRATCH_OFFSET + 4 * FENCE_SCRATCH, self.seq);
        ResetReport { completed, abandoned_until: self.seq }
    }

    // -----------------------------------------------------------------------------------
    // Tests

    /// The ring test (hardware-facts.md, Linux r100_ring_test): `SCRATCH_REG0` = 0xCAFEDEAD by
    /// MMIO, a type-0 write of 0xDEADBEEF through the ring, then poll the register, bounded by
    /// `config.test_timeout`.
    pub fn ring_test(&mut self) -> Result<(), TestError> {
        self.seed_test_scratch();
        self.submit(REG_WRITE_DWORDS, |s| {
            s.writer().write_reg_at(RING_TEST_SCRATCH, test_value())?;
            Ok(())
        })?;
        self.poll_test_scratch()
    }

    /// The IB test (hardware-facts.md): the ring test's scratch write inside a 16-dword
    /// indirect buffer padded with type-2 packets, started from the ring as IB1. The buffer is
    /// allocated from `dma` and given back when the test ends (the CP is done with it then; on
    /// a timeout it is not given back, since the CP might still fetch it).
    pub fn ib_test(&mut self, dma: &impl DmaAllocator) -> Result<(), TestError> {
        let layout = DmaLayout::new(SUBMIT_ALIGN * 4, SUBMIT_ALIGN * 4).map_err(TestError::Dma)?;
        let region = dma.allocate(layout).map_err(TestError::Dma)?;
        let mut ib = match IndirectBuffer::new(&region) {
            Ok(ib) => ib,
            Err(e) => {
                dma.deallocate(region);
                return Err(TestError::Submit(SubmitError::Ib(e)));
            }
        };
        ib.writer().write_reg_at(RING_TEST_SCRATCH, test_value())?;
        ib.pad_to(SUBMIT_ALIGN).map_err(|e| TestError::Submit(SubmitError::Pad(e)))?;
        let descriptor = ib.descriptor().map_err(|e| TestError::Submit(SubmitError::Ib(e)))?;
        self.seed_test_scratch();
        self.submit(IB_PACKET_DWORDS, |s| s.indirect_buffer(descriptor))?;
        let result = self.poll_test_scratch();
        if !matches!(result, Err(TestError::TimedOut { .. })) {
            dma.deallocate(region);
        }
        result
    }

    fn seed_test_scratch(&self) {
        let _ = self
            .io
            .write_at(RING_TEST_SCRATCH, SCRATCH_REG0::RESET.with_scratch_reg0(RING_TEST_SEED));
    }

    fn poll_test_scratch(&self) -> Result<(), TestError> {
        let mut found = RING_TEST_SEED;
        // Bounded by `test_timeout` (default 100 ms, Linux `usec_timeout` in r100_ring_test).
        let polled = poll_until(&self.clock, self.config.test_timeout, || {
            found = self
                .io
                .read_at::<SCRATCH_REG0>(RING_TEST_SCRATCH)
                .map_or(u32::MAX, |r| r.scratch_reg0());
            if found == RING_TEST_VALUE {
                Some(Ok(()))
            } else if found == u32::MAX && self.device_gone() {
                Some(Err(TestError::DeviceGone))
            } else {
                None
            }
        });
        match polled {
            Ok(r) => r,
            Err(waited) => {
                if self.device_gone() {
                    return Err(TestError::DeviceGone);
                }
                Err(TestError::TimedOut { expected: RING_TEST_VALUE, found, waited })
            }
        }
    }

    // -----------------------------------------------------------------------------------
    // Submission

    /// Start a batch: packets written through the returned [`Submission`] go to the ring and
    /// reach the CP with one doorbell at [`Submission::flush`] (or when it is dropped).
    pub fn begin(&mut self) -> Submission<'_, IO, C> {
        Submission { gpu: self, flushed: false }
    }

    /// One batch: reserve `dwords` of ring space (blocking up to `submit_timeout`), let `build`
    /// emit packets, pad to 16 dwords and ring the doorbell once.
    ///
    /// If `build` fails, the whole packets it already wrote are still submitted (a ring never
    /// holds half a packet); reserve enough to make that impossible.
    pub fn submit<T>(
        &mut self,
        dwords: usize,
        build: impl FnOnce(&mut Submission<'_, IO, C>) -> Result<T, SubmitError>,
    ) -> Result<T, SubmitError> {
        let mut s = self.begin();
        s.reserve(dwords)?;
        let value = build(&mut s)?;
        s.flush()?;
        Ok(value)
    }

    /// A batch holding just a fence.
    pub fn emit_fence(&mut self) -> Result<Fence, SubmitError> {
        self.submit(FENCE_DWORDS, |s| s.fence())
    }

    fn ring_wait_error(&self, e: WaitError) -> SubmitError {
        if matches!(e, WaitError::TimedOut { .. }) && self.device_gone() {
            SubmitError::DeviceGone
        } else {
            SubmitError::RingFull(e)
        }
    }

    /// Switch the primary stream to PIO (§5.11) for a while; see [`PioSession`].
    pub fn pio(&mut self) -> Result<PioSession<'_, IO, C>, SubmitError> {
        PioSession::start(self)
    }

    /// Wait until the CP consumed everything committed to the ring (its written-back read
    /// pointer equals the committed write pointer), bounded by `submit_timeout`.
    pub fn wait_ring_idle(&mut self) -> Result<(), SubmitError> {
        let target = self.ring.committed();
        let mut polls = 0u64;
        let clock = &self.clock;
        let io = &self.io;
        let ring = &mut self.ring;
        // Bounded by `submit_timeout`: the same budget as waiting for ring space.
        let polled = poll_until(clock, self.config.submit_timeout, || {
            let _ = ring.refresh_rptr();
            if ring.cached_rptr() == target {
                return Some(Ok(()));
            }
            polls += 1;
            if polls.is_multiple_of(consts::LIVENESS_CHECK_EVERY) && gone(io) {
                return Some(Err(SubmitError::DeviceGone));
            }
            None
        });
        match polled {
            Ok(r) => r,
            Err(waited) => {
                if gone(io) {
                    return Err(SubmitError::DeviceGone);
                }
                let free = ring.free_dwords();
                Err(SubmitError::RingFull(WaitError::TimedOut {
                    needed: ring.capacity(),
                    free,
                    waited,
                }))
            }
        }
    }

    // -----------------------------------------------------------------------------------
    // Fences

    /// The last fence sequence number the CP wrote back (§5.9: `SCRATCH_ADDR + 4n`), read from
    /// DMA memory (no register access).
    pub fn last_signalled(&self) -> u32 {
        let (wb, _) = self.ring.writeback();
        let value = wb.read_u32(WB_SCRATCH_OFFSET + 4 * FENCE_SCRATCH).unwrap_or(0);
        dma_rmb();
        value
    }

    /// The value the CP last wrote back from `SCRATCH_REG<n>` (§5.9: `SCRATCH_ADDR + 4n`), read
    /// from the writeback page; `None` for `n` ≥ 8. Registers [`USER_SCRATCH`].. are the
    /// caller's to use as markers.
    pub fn scratch_writeback(&self, n: usize) -> Option<u32> {
        if n >= SCRATCH_COUNT {
            return None;
        }
        let (wb, _) = self.ring.writeback();
        let value = wb.read_u32(WB_SCRATCH_OFFSET + 4 * n).ok();
        dma_rmb();
        value
    }

    /// The last fence sequence number emitted.
    pub fn last_emitted(&self) -> u32 {
        self.seq
    }

    /// Whether the CP has passed `fence` (wrapping comparison: valid while fewer than 2^31
    /// fences are outstanding).
    pub fn fence_signalled(&self, fence: &Fence) -> bool {
        seq_reached(self.last_signalled(), fence.seq)
    }

    /// Wait for `fence`, at most `timeout` (the caller's budget for the work before it).
    ///
    /// [`FenceError::Timeout`] carries the last signalled sequence number: the CP is hung or
    /// stalled, call [`reset`](Self::reset). [`FenceError::DeviceGone`] if the registers read
    /// all-ones (checked every [`consts::LIVENESS_CHECK_EVERY`] polls and at the deadline).
    pub fn wait(&self, fence: &Fence, timeout: Duration) -> Result<(), FenceError> {
        self.wait_with(fence, timeout, || self.device_gone().then_some(FenceError::DeviceGone))
    }

    /// The fence wait behind [`wait`](Self::wait): `health` runs every
    /// [`consts::LIVENESS_CHECK_EVERY`] polls and at the deadline, and ends the wait with its
    /// error (device gone, an engine's fault); otherwise the deadline gives
    /// [`FenceError::Timeout`].
    pub(crate) fn wait_with<E: From<FenceError>>(
        &self,
        fence: &Fence,
        timeout: Duration,
        health: impl Fn() -> Option<E>,
    ) -> Result<(), E> {
        let mut polls = 0u64;
        let polled = poll_until(&self.clock, timeout, || {
            if self.fence_signalled(fence) {
                return Some(Ok(()));
            }
            polls += 1;
            if polls.is_multiple_of(consts::LIVENESS_CHECK_EVERY) {
                return health().map(Err);
            }
            None
        });
        match polled {
            Ok(r) => r,
            Err(waited) => Err(health().unwrap_or_else(|| {
                FenceError::Timeout {
                    seq: fence.seq,
                    last_signalled: self.last_signalled(),
                    waited,
                }
                .into()
            })),
        }
    }

    // -----------------------------------------------------------------------------------
    // Interrupts

    /// Enable interrupt sources in `GEN_INT_CNTL` (kept across [`reset`](Self::reset) and
    /// [`recover`](Self::recover)).
    pub fn enable_interrupts(&mut self, which: Interrupts) {
        self.interrupts = which;
        self.io.write(which.cntl());
    }

    /// Fire the software interrupt from the host (`GEN_INT_STATUS.SW_INT_SET`, bit 26, Linux
    /// `RADEON_SW_INT_FIRE`).
    pub fn raise_software_interrupt(&self) {
        self.io.write(GEN_INT_STATUS::RESET.with_sw_int_set(true));
    }

    /// The interrupt handler: read `GEN_INT_STATUS`, acknowledge (write 1) the enabled sources
    /// that fired, and return them. Sources not enabled are neither reported nor acknowledged.
    pub fn handle_interrupt(&mut self) -> Result<Interrupts, DeviceGone> {
        let status = self.io.read::<GEN_INT_STATUS>();
        if status.raw() == u32::MAX {
            // Bits 31:27 are not status bits (Linux rs600d.h); all-ones is a dead bus, which
            // the CP_RB_RPTR check confirms.
            self.check_alive()?;
        }
        let fired = Interrupts::from_status(status);
        let fired = Interrupts {
            software: fired.software && self.interrupts.software,
            scratch: fired.scratch && self.interrupts.scratch,
        };
        if fired.any() {
            self.io.write(fired.ack());
        }
        Ok(fired)
    }

    // -----------------------------------------------------------------------------------
    // Reset and recovery

    /// Soft-reset the CP (§5.8) and restart the ring:
    ///
    /// 1. `CP_CSQ_CNTL` = `CP_CSQ_MODE` = 0; 2. `RBBM_SOFT_RESET.SOFT_RESET_CP` asserted then
    ///    de-asserted; 3. `RB_RPTR_WR_ENA`; 4. `CP_RB_RPTR_WR` = 0; 5. `CP_RB_WPTR` = 0 = RPTR
    ///    (empty); 6. ENA cleared; 7. `CP_CSQ_CNTL` = primary BM + indirect BM (steps 3-7 are
    ///    part of the full reprogramming, which also restores the writeback, scratch and
    ///    interrupt registers).
    ///
    /// The host ring restarts at 0, the unexecuted ring contents are discarded, the ring test
    /// runs, and once it passed the emitted fences are forced signalled (see [`ResetReport`]). The microcode is
    /// kept (§5.8 has no reload). If the ring test fails, the CP did not come back: use a
    /// function-level reset of the device and [`recover`](Self::recover).
    pub fn reset(&mut self) -> Result<ResetReport, ResetError> {
        self.check_alive().map_err(|_| ResetError::DeviceGone)?;
        self.stop_and_soft_reset();
        self.program();
        self.ring_test()?;
        // Only once the CP is back: a failed reset leaves the fences honest (unsignalled).
        let report = self.force_fence_completion();
        self.stats.resets += 1;
        Ok(report)
    }

    /// Full recovery: everything [`init`](Self::init) does, on the memory already allocated.
    ///
    /// Parses `firmware` first (a malformed image touches nothing), stops and soft-resets the
    /// CP, waits for the ME to idle, reads the MicroEngine RAM back (§5.13) and reloads the
    /// microcode if it differs (e.g. after a function-level reset powered it off, or a
    /// corrupted RAM), reprograms the ring, runs the ring test and then forces the emitted
    /// fences signalled.
    pub fn recover(&mut self, firmware: &[u8]) -> Result<RecoverReport, InitError> {
        let microcode = CpMicrocode::parse(firmware)?;
        self.check_alive()?;
        self.stop_and_soft_reset();
        self.wait_me_idle()?;
        let microcode_reloaded = match fw::verify(&self.io, &microcode) {
            Ok(()) => false,
            Err(LoadError::DeviceGone { .. }) => return Err(InitError::DeviceGone),
            Err(_) => {
                self.upload = fw::upload(&self.io, &microcode)?;
                true
            }
        };
        self.program();
        self.ring_test()?;
        let fences = self.force_fence_completion();
        self.stats.recoveries += 1;
        Ok(RecoverReport { microcode_reloaded, fences })
    }
}

/// `CP_CSQ_MODE`: the command-cache split of [`consts`], no per-stream override (the enable
/// bits stay 0 so `CP_CSQ_CNTL.CSQ_MODE` decides, §11.1).
pub(crate) const fn csq_mode() -> CP_CSQ_MODE {
    CP_CSQ_MODE::RESET
        .with_indirect1_start(consts::INDIRECT1_START)
        .with_indirect2_start(consts::INDIRECT2_START)
}

const fn test_value() -> SCRATCH_REG0 {
    SCRATCH_REG0::RESET.with_scratch_reg0(RING_TEST_VALUE)
}

/// A batch of packets on the ring: reserve space, write packets, [`flush`](Self::flush) once.
///
/// Every packet method reserves its own room with back-pressure (blocking up to
/// `submit_timeout`); packets written directly through [`writer`](Self::writer) use the room
/// granted by [`reserve`](Self::reserve) (a packet that does not fit fails with
/// [`Pm4Error::NoSpace`](baregpu_ring::pm4::Pm4Error::NoSpace) and writes nothing).
///
/// Dropping an unflushed submission flushes it (ignoring errors), so emitted fences always
/// reach the CP.
pub struct Submission<'a, IO: RegisterIo, C: Clock> {
    gpu: &'a mut R5xx<IO, C>,
    flushed: bool,
}

impl<IO: RegisterIo, C: Clock> Submission<'_, IO, C> {
    /// Wait (up to `submit_timeout`) until `dwords` plus the type-2 padding after them are free,
    /// then grant them to the writer.
    /// Never overwrites dwords the CP has not consumed: on timeout the ring is untouched and
    /// the error is [`SubmitError::RingFull`] (or [`SubmitError::DeviceGone`]).
    pub fn reserve(&mut self, dwords: usize) -> Result<(), SubmitError> {
        let gpu = &mut *self.gpu;
        // Room for the type-2 padding that follows `dwords` too, so a batch that stays within
        // its reservations can always be flushed (never left half-padded in the ring).
        let end = gpu.ring.head() as usize + dwords;
        let pad = pad_count(end, SUBMIT_ALIGN.min(gpu.ring.size_dwords())).unwrap_or(0);
        let dwords = dwords + pad;
        // Bounded by `submit_timeout` (default 100 ms): a CP that frees no ring space for that
        // long is stalled; the caller gets a typed error and can reset.
        match gpu.ring.reserve_blocking(dwords, &gpu.clock, gpu.config.submit_timeout) {
            Ok(()) => Ok(()),
            Err(e) => Err(gpu.ring_wait_error(e)),
        }
    }

    /// The ring (e.g. its head, to count the dwords a packet took).
    pub fn ring(&self) -> &Ring {
        &self.gpu.ring
    }

    /// A PM4 writer on the ring (use the room from [`reserve`](Self::reserve)).
    pub fn writer(&mut self) -> Pm4Writer<&mut Ring> {
        self.gpu.ring.writer()
    }

    /// Start `ib` as indirect buffer 1: one type-0 packet writing `CP_IB_BASE` then
    /// `CP_IB_BUFSZ`, 3 ring dwords (§5.10: the BUFSZ write is the packet's last).
    pub fn indirect_buffer(&mut self, ib: IbDescriptor) -> Result<(), SubmitError> {
        self.reserve(IB_PACKET_DWORDS)?;
        self.writer().indirect_buffer(ib)?;
        self.gpu.stats.indirect_buffers += 1;
        Ok(())
    }

    /// A fence: the next sequence number written to `SCRATCH_REG1` by a type-0 packet (2
    /// dwords), which the CP writes back to the writeback page when it parses it (§5.9).
    pub fn fence(&mut self) -> Result<Fence, SubmitError> {
        self.reserve(FENCE_DWORDS)?;
        let seq = self.gpu.seq.wrapping_add(1);
        self.writer().write_reg_at(FENCE_SCRATCH, SCRATCH_REG0::RESET.with_scratch_reg0(seq))?;
        self.gpu.seq = seq;
        self.gpu.stats.fences += 1;
        Ok(Fence { seq })
    }

    /// Fire the software interrupt when the CP gets here: a type-0 write of
    /// `GEN_INT_STATUS.SW_INT_SET` (bit 26, Linux `RADEON_SW_INT_FIRE`).
    pub fn software_interrupt(&mut self) -> Result<(), SubmitError> {
        self.reserve(REG_WRITE_DWORDS)?;
        self.writer().write_reg(GEN_INT_STATUS::RESET.with_sw_int_set(true))?;
        Ok(())
    }

    /// Pad to 16 dwords with type-2 packets (hardware-facts.md) and ring the doorbell once
    /// (`dma_wmb`, then `CP_RB_WPTR`). An empty batch rings nothing.
    pub fn flush(mut self) -> Result<(), SubmitError> {
        self.finish()
    }

    fn finish(&mut self) -> Result<(), SubmitError> {
        if self.flushed {
            return Ok(());
        }
        self.flushed = true;
        if self.gpu.ring.pending_dwords() == 0 {
            return Ok(());
        }
        let head = self.gpu.ring.head() as usize;
        let pad = pad_count(head, SUBMIT_ALIGN.min(self.gpu.ring.size_dwords()))?;
        if pad > 0 {
            self.reserve(pad)?;
        }
        let written = self.gpu.ring.pad_to(SUBMIT_ALIGN)?;
        let gpu = &mut *self.gpu;
        gpu.ring.kick(&gpu.io);
        gpu.stats.padding_dwords += written as u64;
        gpu.stats.batches += 1;
        Ok(())
    }
}

impl<IO: RegisterIo, C: Clock> Drop for Submission<'_, IO, C> {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fence_order_wraps() {
        assert!(seq_reached(5, 5));
        assert!(seq_reached(6, 5));
        assert!(!seq_reached(4, 5));
        assert!(seq_reached(2, u32::MAX), "2 comes after 0xffffffff");
        assert!(!seq_reached(u32::MAX, 2));
    }

    #[test]
    fn ring_config_sizes_follow_rb_bufsz() {
        assert!(RingConfig::with_ring_bytes(32).validate().is_ok());
        assert!(RingConfig::with_ring_bytes(32 << 20).validate().is_ok());
        for bad in [0, 16, 4095, 3 * 1024, 64 << 20] {
            assert_eq!(
                RingConfig::with_ring_bytes(bad).validate(),
                Err(ConfigError::BadRingSize { bytes: bad })
            );
        }
    }

    #[test]
    fn pio_queue_is_the_primary_share_of_the_command_cache() {
        // §11.1: INDIRECT1_START double octwords of 8 dwords.
        assert_eq!(consts::PIO_PRIMARY_QUEUE_DWORDS, 128);
    }
}
