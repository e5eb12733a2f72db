//! The interrupt self-test run when the software interrupt is enabled: a type-0 write of
//! `GEN_INT_STATUS.SW_INT_SET` from the ring (Linux `RADEON_SW_INT_FIRE`) must set
//! `GEN_INT_STATUS.SW_INT`, which the test then acknowledges. A CP that cannot raise it, or an
//! interrupt path that never latches it, is a typed error ([`TestError::NoInterrupt`]) at the
//! point interrupts are turned on, not a driver whose interrupts silently never come.

use baregpu_hal::dma::DmaAllocator;
use baregpu_hal::time::{Clock, poll_until};
use baregpu_hal::{RegisterIo, RegisterIoExt};
use baregpu_regs::r5xx::rbbm::GEN_INT_STATUS;

use super::R5xx;
use crate::consts::REG_WRITE_DWORDS;
use crate::error::TestError;

impl<IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> R5xx<'_, IO, C, A> {
    /// Fire the software interrupt from the ring and wait (at most `test_timeout`) for
    /// `GEN_INT_STATUS.SW_INT`; acknowledge it. [`TestError::NoInterrupt`] if it never sets.
    pub fn interrupt_test(&mut self) -> Result<(), TestError> {
        self.submit(REG_WRITE_DWORDS, |s| s.software_interrupt())?;
        let polled = poll_until(&self.clock, self.config.test_timeout, || {
            let status = self.io.read::<GEN_INT_STATUS>();
            if status.raw() == u32::MAX {
                return self.check_alive().err().map(|gone| Err(TestError::DeviceGone(gone)));
            }
            status.sw_int().then_some(Ok(()))
        });
        match polled {
            Ok(r) => r?,
            Err(waited) => {
                self.check_alive()?;
                let source = GEN_INT_STATUS::RESET.with_sw_int(true).raw().trailing_zeros();
                return Err(TestError::NoInterrupt { source, waited });
            }
        }
        self.io.write(GEN_INT_STATUS::RESET.with_sw_int(true));
        Ok(())
    }
}
