//! Recovery through the shared protocol ([`baregpu_gpu::recovery`]): the soft reset with a
//! ring restart, and full recovery with a microcode reload when the read-back fails; the fences
//! of the lost work complete with an error only once the ring test passed.

use baregpu_firmware::amd::evergreen::{self, EvergreenFirmware, EvergreenUcode};
use baregpu_gpu::recovery::{self, Recovery};
use baregpu_gpu::wait::FenceSource;
use baregpu_gpu::{ResetReport, Timeline};
use baregpu_hal::RegisterIo;
use baregpu_hal::dma::DmaAllocator;
use baregpu_hal::time::Clock;

use super::Evergreen;
use crate::consts::WB_FENCE_OFFSET;
use crate::error::{DeviceGone, InitError, TestError};

/// What [`Evergreen::recover`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecoverReport {
    /// Whether the microcode read-back failed and the images were uploaded again.
    pub reloaded_firmware: bool,
    /// What happened to the fences in flight, as for [`Evergreen::reset`].
    pub fences: ResetReport,
}

impl<IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> Evergreen<'_, IO, C, A> {
    /// Recover from a hang: halt the ME and PFP, soft-reset the CP and its blocks
    /// (`GRBM_SOFT_RESET`), reprogram and restart the ring, ring test. Only once the ring test
    /// passed does every fence of the discarded work complete with
    /// [`FenceFailure::Lost`](baregpu_gpu::FenceFailure::Lost) (waiters see
    /// [`FenceError::Failed`](crate::FenceError::Failed)); a failed reset leaves them pending.
    pub fn reset(&mut self) -> Result<ResetReport, InitError> {
        let ((), report) = recovery::recover(self, |gpu: &mut Self| {
            gpu.halt_cp();
            gpu.start_cp()
        })?;
        self.after_recovery(&report);
        Ok(report)
    }

    /// Full recovery: read the microcode back (a function-level reset or power loss clears the
    /// RAMs); if it does not match, upload it again; then restart as [`reset`](Self::reset)
    /// does, and re-enable the interrupt ring if it was enabled.
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
        let (reloaded_firmware, fences) = recovery::recover(self, |gpu: &mut Self| {
            gpu.halt_cp();
            let reloaded = match evergreen::verify(gpu.io.raw(), firmware) {
                Ok(()) => false,
                Err(evergreen::LoadError::DeviceGone { .. }) => {
                    return Err(InitError::DeviceGone(DeviceGone));
                }
                Err(_) => {
                    gpu.load_firmware(firmware)?;
                    true
                }
            };
            gpu.start_cp()?;
            Ok(reloaded)
        })?;
        self.after_recovery(&fences);
        if self.interrupts_enabled() {
            self.enable_interrupts()?;
        }
        Ok(RecoverReport { reloaded_firmware, fences })
    }

    /// Once the ring test passed and the lost fences failed: the fence write-back takes the
    /// last emitted number, so the memory and the timeline agree again.
    fn after_recovery(&mut self, report: &ResetReport) {
        let last = self.timeline.last_emitted();
        let _ = self.writeback().write_u32(WB_FENCE_OFFSET, last as u32);
        let _ = self.writeback().write_u32(WB_FENCE_OFFSET + 4, (last >> 32) as u32);
        self.stats.failed_fences += report.lost.map_or(0, |r| r.count());
    }
}

impl<IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> Recovery for Evergreen<'_, IO, C, A> {
    type TestError = TestError;

    fn check_alive(&self) -> Result<(), DeviceGone> {
        crate::liveness::check_alive(&self.io)
    }

    fn ring_test(&mut self) -> Result<(), TestError> {
        Evergreen::ring_test(self)
    }

    fn timeline(&self) -> &Timeline {
        &self.timeline
    }

    fn read_completed(&self) -> u64 {
        FenceSource::read_completed(self)
    }
}
