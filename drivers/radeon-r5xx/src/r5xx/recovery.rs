//! Recovery: the §5.8 soft reset with a ring restart, and full re-bring-up with a microcode
//! reload when the MicroEngine RAM lost it.

use baregpu_firmware::amd::{CpMicrocode, LoadError, r5xx as fw};
use baregpu_hal::RegisterIo;
use baregpu_hal::dma::DmaAllocator;
use baregpu_hal::time::Clock;

use super::R5xx;
use crate::error::{DeviceGone, InitError, ResetError};

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
#[non_exhaustive]
pub struct RecoverReport {
    /// Whether the MicroEngine RAM failed its read-back (§5.13) and was reloaded.
    pub microcode_reloaded: bool,
    /// Fences, as for [`R5xx::reset`].
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
    /// runs, and once it passed the emitted fences are forced signalled (see [`ResetReport`]).
    /// The microcode is kept (§5.8 has no reload). If the ring test fails, the CP did not come
    /// back: use a function-level reset of the device and [`recover`](Self::recover).
    pub fn reset(&mut self) -> Result<ResetReport, ResetError> {
        self.check_alive()?;
        self.stop_and_soft_reset();
        self.program();
        self.ring_test()?;
        // Only once the CP is back: a failed reset leaves the fences honest (unsignalled).
        let report = self.abandon_fences();
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
            Err(LoadError::DeviceGone { .. }) => return Err(DeviceGone.into()),
            Err(_) => {
                self.upload = fw::upload(&self.io, &microcode)?;
                true
            }
        };
        self.program();
        self.ring_test()?;
        let fences = self.abandon_fences();
        self.stats.recoveries += 1;
        Ok(RecoverReport { microcode_reloaded, fences })
    }

    fn abandon_fences(&mut self) -> ResetReport {
        let (completed, abandoned_until) = self.force_fence_completion();
        ResetReport { completed, abandoned_until }
    }
}
