//! Interrupts, opt-in (off after bring-up: polled fences cost no interrupt): the pipeline's
//! frame done, flush done, out of memory and overspill interrupts (`V3D_INTCTL`,
//! `V3D_INTENA`, `V3D_INTDIS`, Tables 75-77) and the QPUs' host interrupts (`V3D_DBQITE`,
//! `V3D_DBQITC`, Tables 73-74).

use baregpu_gpu::GpuQueue;
use baregpu_hal::time::Clock;
use baregpu_hal::{RegisterIo, RegisterIoExt};
use baregpu_regs::vc4::v3d::{V3D_DBQITC, V3D_DBQITE, V3D_INTCTL, V3D_INTDIS, V3D_INTENA};

use super::V3d;
use crate::error::DeviceGone;

/// What one [`V3d::handle_interrupts`] call found and acknowledged.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct IrqReport {
    /// A frame was rendered (`INT_FRDONE`).
    pub frame_done: bool,
    /// A binning list flushed its tile lists (`INT_FLDONE`).
    pub flush_done: bool,
    /// The binner ran out of memory (`INT_OUTOMEM`), refilled from the pool when it had a
    /// block.
    pub out_of_memory: bool,
    /// The binner started on its overspill block (`INT_SPILLUSE`).
    pub spill_used: bool,
    /// QPUs whose host interrupt was latched (bit n: QPU n).
    pub qpus: u16,
    /// Every fence up to here is complete.
    pub completed: u64,
}

/// Every pipeline interrupt set in one `V3D_INTCTL` value.
const ALL_PIPELINE: V3D_INTCTL = V3D_INTCTL::RESET
    .with_int_frdone(true)
    .with_int_fldone(true)
    .with_int_outomem(true)
    .with_int_spilluse(true);

impl<IO: RegisterIo, C: Clock> V3d<'_, IO, C> {
    /// Enable the frame done, flush done and out-of-memory interrupts and every QPU's host
    /// interrupt, after acknowledging any latched one.
    pub fn enable_interrupts(&mut self) -> Result<(), DeviceGone> {
        self.check_alive()?;
        self.io.write(ALL_PIPELINE);
        let qpus = self.identity.qpu_mask();
        self.io.write(V3D_DBQITC::RESET.with_ic_qpu(qpus));
        self.io.write(
            V3D_INTENA::RESET.with_ei_frdone(true).with_ei_fldone(true).with_ei_outomem(true),
        );
        self.io.write(V3D_DBQITE::RESET.with_ie_qpu(qpus));
        self.interrupts = true;
        Ok(())
    }

    /// Disable and acknowledge every pipeline and QPU interrupt.
    pub fn disable_interrupts(&self) {
        self.io.write(
            V3D_INTDIS::RESET
                .with_di_frdone(true)
                .with_di_fldone(true)
                .with_di_outomem(true)
                .with_di_spilluse(true),
        );
        self.io.write(V3D_DBQITE::RESET);
        self.io.write(ALL_PIPELINE);
        self.io.write(V3D_DBQITC::RESET.with_ic_qpu(self.identity.qpu_mask()));
    }

    /// Whether interrupts are enabled.
    pub fn interrupts_enabled(&self) -> bool {
        self.interrupts
    }

    /// The interrupt handler: read what is latched, refill the binner on out-of-memory
    /// (before acknowledging it: the condition is level-triggered, Table 75), acknowledge
    /// the rest (write 1 to clear), record fence completion.
    pub fn handle_interrupts(&mut self) -> Result<IrqReport, DeviceGone> {
        let status = self.io.read::<V3D_INTCTL>();
        let qpus = self.io.read::<V3D_DBQITC>();
        if status.raw() == u32::MAX || qpus.raw() == u32::MAX {
            self.check_alive()?;
        }
        if status.int_outomem() {
            self.service_out_of_memory();
        }
        let ack = V3D_INTCTL::RESET
            .with_int_frdone(status.int_frdone())
            .with_int_fldone(status.int_fldone())
            .with_int_spilluse(status.int_spilluse());
        if ack.raw() != 0 {
            self.io.write(ack);
        }
        let latched = qpus.ic_qpu() & self.identity.qpu_mask();
        if latched != 0 {
            self.io.write(V3D_DBQITC::RESET.with_ic_qpu(latched));
        }
        Ok(IrqReport {
            frame_done: status.int_frdone(),
            flush_done: status.int_fldone(),
            out_of_memory: status.int_outomem(),
            spill_used: status.int_spilluse(),
            qpus: latched,
            completed: self.poll_completed(),
        })
    }
}
