//! Interrupts, opt-in as in the R5xx driver: bring-up tests the interrupt path once and
//! leaves the IH ring and the CP's end-of-pipe interrupt off, so fences ask for none;
//! [`Evergreen::enable_interrupts`] turns both on (and tests them again), and fences submitted
//! afterwards set `EVENT_WRITE_EOP`'s INT_SEL. The IH ring itself is [`crate::irq`].

use baregpu_gpu::GpuQueue;
use baregpu_hal::RegisterIo;
use baregpu_hal::dma::DmaAllocator;
use baregpu_hal::time::{Clock, Deadline, TimedOut};

use super::Evergreen;
use crate::error::{InitError, TestError};
use crate::irq::{IrqError, IrqReport, source};

impl<IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> Evergreen<'_, IO, C, A> {
    /// Set up and enable the IH ring and the CP's end-of-pipe interrupt, then run the
    /// [`interrupt_test`](Self::interrupt_test); fences submitted from now on ask for an
    /// interrupt. Kept across [`reset`](Self::reset) and [`recover`](Self::recover).
    pub fn enable_interrupts(&mut self) -> Result<(), InitError> {
        self.ih.enable(&self.io, self.ring.writeback().0)?;
        Ok(self.interrupt_test()?)
    }

    /// Disable the IH ring and the CP interrupts; fences submitted from now on ask for none.
    pub fn disable_interrupts(&mut self) {
        self.ih.disable(&self.io);
    }

    /// Whether the IH ring is running.
    pub fn interrupts_enabled(&self) -> bool {
        self.ih.enabled()
    }

    /// The interrupt handler: consume the pending interrupt vectors (at most one ring's worth:
    /// bounded), move `IH_RB_RPTR` past them, handle an overflow, then record the fence
    /// write-back on the timeline ([`IrqReport::completed`]). Call it from the interrupt
    /// handler or poll it.
    ///
    /// The read pointer only ever moves by whole vectors: a write pointer that is not a vector
    /// boundary inside the ring is [`IrqError::BadWritePointer`] and consumes nothing.
    pub fn handle_interrupts(&mut self) -> Result<IrqReport, IrqError> {
        let mut report = self.ih.process(&self.io)?;
        report.completed = self.poll_completed();
        Ok(report)
    }

    /// The interrupt self-test: a fence whose `EVENT_WRITE_EOP` asks for an interrupt once its
    /// write is confirmed (§9.6.2 INT_SEL 2) must put a CP end-of-pipe vector
    /// ([`source::CP_EOP`]) in the IH ring. The IH is driven by the RLC (Linux radeon loads the
    /// RLC before it enables the IH, evergreen.c `evergreen_startup`), so a damaged RLC image
    /// or a dead interrupt path is a typed error here ([`TestError::NoInterrupt`]) instead of
    /// fences whose interrupts never come. The vectors are consumed as they come (at most
    /// `test_timeout`), so the interrupt line is not left asserted. Needs the IH ring enabled.
    pub fn interrupt_test(&mut self) -> Result<(), TestError> {
        let fence = self.fence()?;
        let start_ns = self.clock.now_ns();
        let deadline = Deadline::after(&self.clock, self.config().test_timeout);
        let mut polls = 0;
        loop {
            let expired = deadline.expired(&self.clock);
            polls += 1;
            let eop = match self.handle_interrupts() {
                Ok(report) => report.eop,
                Err(IrqError::DeviceGone(gone)) => return Err(gone.into()),
                // Nothing consumed and the ring resynchronised: poll again.
                Err(_) => 0,
            };
            if eop > 0 {
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
