//! [`CheckedWrite`]: a job both Radeon families run whose result the CPU checks (the host
//! tests' and the `multi-gpu-*` QEMU cases' job). The drivers are [`GpuQueue`]s themselves.

use baregpu_hal::RegisterIo;
use baregpu_hal::dma::{BusAddress, DmaAllocator};
use baregpu_hal::time::Clock;
use baregpu_radeon_evergreen::pm4::PacketError;
use baregpu_radeon_evergreen::{Evergreen, Submission as EvergreenSubmission};
use baregpu_radeon_r5xx::consts::{REG_WRITE_DWORDS, USER_SCRATCH};
use baregpu_radeon_r5xx::regs::cp::SCRATCH_REG0;
use baregpu_radeon_r5xx::{R5xx, Submission as R5xxSubmission, SubmitError};

#[cfg(doc)]
use baregpu_gpu::GpuQueue;

use crate::Work;

/// Bytes a [`CheckedWrite`] fills on an Evergreen/Cayman.
pub const FILL_BYTES: usize = 64;
/// `CP_DMA`: a header and a 5-dword body (Linux radeon evergreend.h `PACKET3_CP_DMA`).
const CP_DMA_DWORDS: usize = 6;

/// A job whose result the CPU can check, on either family: an R5xx writes `value` to user
/// scratch register `reg` (`USER_SCRATCH + reg`, which the CP writes back to memory, §5.9); an
/// Evergreen/Cayman fills [`FILL_BYTES`] at `fill` with `value` by CP DMA.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckedWrite {
    /// User scratch register (0 = `USER_SCRATCH`), R5xx.
    pub reg: usize,
    /// The value written.
    pub value: u32,
    /// Where the fill goes, Evergreen/Cayman.
    pub fill: BusAddress,
}

impl<'d, IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> Work<R5xx<'d, IO, C, A>>
    for CheckedWrite
{
    fn units(&self) -> usize {
        REG_WRITE_DWORDS
    }

    fn build(&self, s: &mut R5xxSubmission<'_, 'd, IO, C, A>) -> Result<(), SubmitError> {
        let value = SCRATCH_REG0::RESET.with_scratch_reg0(self.value);
        s.writer().write_reg_at(USER_SCRATCH + self.reg, value)?;
        Ok(())
    }
}

impl<'d, IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> Work<Evergreen<'d, IO, C, A>>
    for CheckedWrite
{
    fn units(&self) -> usize {
        CP_DMA_DWORDS
    }

    fn build(&self, s: &mut EvergreenSubmission<'_, 'd, A>) -> Result<(), PacketError> {
        s.cp_dma_fill(self.value, self.fill, FILL_BYTES)
    }
}
