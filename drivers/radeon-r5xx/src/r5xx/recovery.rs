//! Recovery: the §5.8 soft reset with a ring restart, and full re-bring-up with a microcode
//! reload when the MicroEngine RAM lost it.

use baregpu_firmware::amd::{CpMicrocode, LoadError, r5xx as fw};
use baregpu_gpu::recovery::{self, Recovery};
use baregpu_gpu::wait::FenceSource;
use baregpu_gpu::{ResetReport, Timeline};
use baregpu_hal::RegisterIo;
use baregpu_hal::dma::DmaAllocator;
use baregpu_hal::time::Clock;

use super::R5xx;
use crate::error::{DeviceGone, InitError, ResetError, TestError};

/// What [`R5xx::recover`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RecoverReport {
    /// Whether the MicroEngine RAM failed its read-back (§5.13) and was reloaded.
    pub microcode_reloaded: bool,
    /// What happened to the fences in flight, as for [`R5xx::reset`].
    pub fences: ResetReport,
}

impl<IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> R5xx<'_, IO, C, A> {
    /// Soft-reset the CP (§5.8) and restart the ring:
    ///
    /// 1. `CP_CSQ_CNTL` = `CP_CSQ_MODE` = 0; 2. `RBBM_SOFT_RESET.SOFT_RESET_CP` asserted then
    ///    de-asserted; 3. `RB_RPTR_WR_ENA`; 4. `CP_RB_RPTR_WR` = 0; 5. `CP_RB_WPTR` = 0 = RPTR
    ///    (empty); 6. ENA cleared; 7. `CP_CSQ_CNTL` = primary BM + indirect BM (steps 3-7 are
    ///    part of the full reprogramming, which also restores the writeback, scratch and
    ///    interrupt registers).
    ///
    /// The host ring restarts at 0, the unexecuted ring contents are discarded, the ring test
    /// runs, and only once it passed every fence of the discarded work completes with
    /// [`FenceFailure::Lost`](baregpu_gpu::FenceFailure::Lost) (see [`ResetReport`]); a failed
    /// reset leaves them pending.
    /// The microcode is kept (§5.8 has no reload). If the ring test fails, the CP did not come
    /// back: use a function-level reset of the device and [`recover`](Self::recover).
    pub fn reset(&mut self) -> Result<ResetReport, ResetError> {
        let ((), report) = recovery::recover(self, |gpu: &mut Self| {
            gpu.stop_and_soft_reset();
            gpu.program();
            Ok::<(), ResetError>(())
        })?;
        self.after_recovery(&report);
        self.stats.resets += 1;
        Ok(report)
    }

    /// Full recovery: everything [`init`](Self::init) does, on the memory already allocated.
    ///
    /// Parses `firmware` first (a malformed image touches nothing), stops and soft-resets the
    /// CP, waits for the ME to idle, reads the MicroEngine RAM back (§5.13) and reloads the
    /// microcode if it differs (e.g. after a function-level reset powered it off, or a
    /// corrupted RAM), reprograms the ring, runs the ring test and then completes the lost
    /// fences with an error, as [`reset`](Self::reset) does.
    pub fn recover(&mut self, firmware: &[u8]) -> Result<RecoverReport, InitError> {
        let microcode = CpMicrocode::parse(firmware)?;
        let (microcode_reloaded, fences) = recovery::recover(self, |gpu: &mut Self| {
            gpu.stop_and_soft_reset();
            gpu.wait_me_idle()?;
            let reloaded = match fw::verify(gpu.io.raw(), &microcode) {
                Ok(()) => false,
                Err(LoadError::DeviceGone { .. }) => return Err(DeviceGone.into()),
                Err(_) => {
                    gpu.upload = fw::upload(gpu.io.raw(), &microcode)?;
                    true
                }
            };
            gpu.program();
            Ok::<bool, InitError>(reloaded)
        })?;
        self.after_recovery(&fences);
        self.stats.recoveries += 1;
        Ok(RecoverReport { microcode_reloaded, fences })
    }

    /// Once the ring test passed and the lost fences failed: the fence scratch register and
    /// its writeback take the last emitted number again.
    fn after_recovery(&mut self, report: &ResetReport) {
        self.sync_fence_scratch();
        self.stats.failed_fences += report.lost.map_or(0, |r| r.count());
    }
}

impl<IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> Recovery for R5xx<'_, IO, C, A> {
    type TestError = TestError;

    fn check_alive(&self) -> Result<(), DeviceGone> {
        crate::liveness::check_alive(&self.io)
    }

    fn ring_test(&mut self) -> Result<(), TestError> {
        R5xx::ring_test(self)
    }

    fn timeline(&self) -> &Timeline {
        &self.timeline
    }

    fn read_completed(&self) -> u64 {
        FenceSource::read_completed(self)
    }
}
