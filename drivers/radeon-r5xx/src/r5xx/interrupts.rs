//! Interrupts: `GEN_INT_CNTL` enables, `GEN_INT_STATUS` status and acknowledgement (bits from
//! the register database, Linux rs600d.h).

use baregpu_hal::dma::DmaAllocator;
use baregpu_hal::time::Clock;
use baregpu_hal::{RegisterIo, RegisterIoExt};
use baregpu_regs::r5xx::rbbm::{GEN_INT_CNTL, GEN_INT_STATUS};

use super::R5xx;
use crate::error::{DeviceGone, TestError};

/// Interrupt sources (`GEN_INT_CNTL` enables, `GEN_INT_STATUS` status; bits from the register
/// database, Linux rs600d.h).
///
/// Non-exhaustive (a source may be added): build one from [`NONE`](Self::NONE) with
/// [`with_software`](Self::with_software) / [`with_scratch`](Self::with_scratch).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct Interrupts {
    /// The software interrupt (fired by a `GEN_INT_STATUS` write, from the host or a packet).
    pub software: bool,
    /// The R5xx scratch interrupt (§5.9: a scratch pair written back ≥ the driver's value).
    pub scratch: bool,
}

impl Interrupts {
    /// No source.
    pub const NONE: Interrupts = Interrupts { software: false, scratch: false };

    /// With the software interrupt set or cleared.
    pub const fn with_software(self, software: bool) -> Interrupts {
        Interrupts { software, ..self }
    }

    /// With the scratch interrupt set or cleared.
    pub const fn with_scratch(self, scratch: bool) -> Interrupts {
        Interrupts { scratch, ..self }
    }

    /// Whether any source is set.
    pub const fn any(self) -> bool {
        self.software || self.scratch
    }

    /// The `GEN_INT_CNTL` value enabling these sources.
    pub(crate) fn cntl(self) -> GEN_INT_CNTL {
        GEN_INT_CNTL::RESET.with_sw_int_en(self.software).with_scratch_int_mask(self.scratch)
    }

    fn from_status(status: GEN_INT_STATUS) -> Self {
        Interrupts { software: status.sw_int(), scratch: status.scratch_int_stat() }
    }

    /// The write-1-to-clear acknowledgement of these sources.
    fn ack(self) -> GEN_INT_STATUS {
        GEN_INT_STATUS::RESET.with_sw_int(self.software).with_scratch_int_stat(self.scratch)
    }

    /// The sources set in both.
    const fn and(self, other: Interrupts) -> Interrupts {
        Interrupts {
            software: self.software && other.software,
            scratch: self.scratch && other.scratch,
        }
    }
}

impl<IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> R5xx<'_, IO, C, A> {
    /// Enable interrupt sources in `GEN_INT_CNTL` (kept across [`reset`](Self::reset) and
    /// [`recover`](Self::recover)). Enabling the software interrupt runs the
    /// [`interrupt_test`](Self::interrupt_test) (a software interrupt fired from the ring must
    /// arrive; its vector is acknowledged): [`TestError::NoInterrupt`] if it does not, with the
    /// sources left enabled.
    pub fn enable_interrupts(&mut self, which: Interrupts) -> Result<(), TestError> {
        self.interrupts = which;
        self.io.write(which.cntl());
        if which.software { self.interrupt_test() } else { Ok(()) }
    }

    /// Fire the software interrupt from the host (`GEN_INT_STATUS.SW_INT_SET`, bit 26, Linux
    /// `RADEON_SW_INT_FIRE`).
    pub fn raise_software_interrupt(&self) {
        self.io.write(GEN_INT_STATUS::RESET.with_sw_int_set(true));
    }

    /// The interrupt handler: read `GEN_INT_STATUS`, acknowledge (write 1) the enabled sources
    /// that fired, and return them. Sources not enabled are neither reported nor acknowledged.
    pub fn handle_interrupts(&mut self) -> Result<Interrupts, DeviceGone> {
        let status = self.io.read::<GEN_INT_STATUS>();
        if status.raw() == u32::MAX {
            // Bits 31:27 are not status bits (Linux rs600d.h); all-ones is a dead bus, which
            // the CP_RB_RPTR check confirms.
            self.check_alive()?;
        }
        let fired = Interrupts::from_status(status).and(self.interrupts);
        if fired.any() {
            self.io.write(fired.ack());
        }
        Ok(fired)
    }
}
