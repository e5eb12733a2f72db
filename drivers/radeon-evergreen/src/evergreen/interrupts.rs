//! Interrupts, opt-in as in the R5xx driver: bring-up leaves the IH ring and the CP's
//! end-of-pipe interrupt off and fences ask for none; [`Evergreen::enable_interrupts`] turns
//! both on, and fences submitted afterwards set `EVENT_WRITE_EOP`'s INT_SEL. The IH ring itself
//! is [`crate::irq`].

use baregpu_hal::RegisterIo;
use baregpu_hal::dma::DmaAllocator;
use baregpu_hal::time::Clock;

use super::Evergreen;
use crate::error::{DeviceGone, InitError};
use crate::irq::IrqReport;

impl<IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> Evergreen<'_, IO, C, A> {
    /// Set up and enable the IH ring and the CP's end-of-pipe interrupt; fences submitted from
    /// now on ask for an interrupt. Kept across [`reset`](Self::reset) and
    /// [`recover`](Self::recover).
    pub fn enable_interrupts(&mut self) -> Result<(), InitError> {
        self.ih.enable(&self.io, self.ring.writeback().0)
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
    pub fn handle_interrupts(&mut self) -> Result<IrqReport, DeviceGone> {
        let mut report = self.ih.process(&self.io)?;
        report.completed = self.poll_completed();
        Ok(report)
    }
}
