//! The interrupt self-test at bring-up: a fence whose `EVENT_WRITE_EOP` asks for an interrupt
//! once its write is confirmed (§9.6.2 INT_SEL 2) must put a CP end-of-pipe vector
//! ([`source::CP_EOP`]) in the IH ring. The IH is driven by the RLC (Linux radeon loads the
//! RLC before it enables the IH, evergreen.c `evergreen_startup`), so a damaged RLC image or a
//! dead interrupt path fails bring-up here, with a typed error, instead of leaving a driver
//! whose fences never interrupt.

use baregpu_hal::RegisterIo;
use baregpu_hal::dma::DmaAllocator;
use baregpu_hal::time::{Clock, Deadline, TimedOut};

use crate::driver::Evergreen;
use crate::error::TestError;
use crate::irq::source;

impl<IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> Evergreen<'_, IO, C, A> {
    /// Submit a fence with its interrupt and consume the IH ring until an end-of-pipe vector
    /// arrives (at most `test_timeout`; the vectors are acknowledged as they come, so the
    /// interrupt line is not left asserted): [`TestError::NoInterrupt`] if none does. The
    /// vector follows the fence's write (INT_SEL 2), so the fence has signalled by then.
    pub fn interrupt_test(&mut self) -> Result<(), TestError> {
        let fence = self.fence()?;
        let start_ns = self.clock.now_ns();
        let deadline = Deadline::after(&self.clock, self.config().test_timeout);
        let mut polls = 0;
        loop {
            let expired = deadline.expired(&self.clock);
            polls += 1;
            if self.handle_interrupts()?.eop > 0 {
                // The write is confirmed before the interrupt (INT_SEL 2): the fence has
                // signalled, which `wait` confirms at once.
                self.wait(&fence, self.config().test_timeout)?;
                return Ok(());
            }
            if expired {
                let waited_us = self.clock.now_ns().saturating_sub(start_ns) / 1000;
                let waited = TimedOut::new(waited_us, polls);
                return Err(TestError::NoInterrupt { source: source::CP_EOP, waited });
            }
            core::hint::spin_loop();
        }
    }
}
