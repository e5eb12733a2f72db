//! Interrupts: `PMC.INTR` routes to the engine that raised them (PFIFO, PCOPY, PDAEMON lines,
//! envytools rnndb bus/pmc.xml); PFIFO's error interrupts are decoded into [`FifoError`]s
//! (nvidia-hardware-envytools §2.8.3 DMA_PUSHER error codes, §2.8.4 SEMAPHORE and
//! CACHE_ERROR), acknowledged, and the faulting channel recovered on request.

use baregpu_hal::register::FieldSpec;
use baregpu_hal::time::Clock;
use baregpu_hal::{RegisterIo, RegisterIoExt};
use baregpu_regs::nvidia::pfifo::{
    CACHE1_DMA_GET_G80_UNTIL_GF100 as CACHE1_DMA_GET,
    CACHE1_DMA_PUT_G80_UNTIL_GF100 as CACHE1_DMA_PUT,
    CACHE1_DMA_STATE_G80_UNTIL_GF100 as CACHE1_DMA_STATE,
    CACHE1_IB_GET_G80_UNTIL_GF100 as CACHE1_IB_GET, CACHE1_IB_PUT_G80_UNTIL_GF100 as CACHE1_IB_PUT,
    CACHE1_PUSH1_G80_UNTIL_GF100 as CACHE1_PUSH1, INTR_EN_G80_UNTIL_GF100 as INTR_EN,
    INTR_G80_UNTIL_GF100 as INTR,
};
use baregpu_regs::nvidia::pmc::{INTR as PMC_INTR, INTR_MASK_GT215_ONWARD as INTR_MASK};

use super::Tesla;
use super::bringup::ENABLED_INTERRUPTS;
use crate::channel::ChannelId;
use crate::error::{ChannelError, DeviceGone, FifoError};

/// Faults one [`Tesla::handle_interrupts`] reports at most (one per PFIFO error kind).
pub const MAX_FAULTS: usize = 4;

/// What one call of the interrupt handler found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct IrqReport {
    /// PFIFO errors, acknowledged; recover their channels with
    /// [`Tesla::recover_channel`].
    pub faults: [Option<FifoError>; MAX_FAULTS],
    /// A channel executed `NOTIFY_INTR` (§2.8.4; only while notify interrupts are on).
    pub notify: bool,
    /// The PCOPY line is raised (its falcon's `INTR` says why).
    pub pcopy: bool,
    /// The PDAEMON line is raised.
    pub pdaemon: bool,
}

impl IrqReport {
    /// The faults found.
    pub fn faults(&self) -> impl Iterator<Item = FifoError> + '_ {
        self.faults.iter().flatten().copied()
    }

    fn push(&mut self, fault: FifoError) {
        if let Some(slot) = self.faults.iter_mut().find(|f| f.is_none()) {
            *slot = Some(fault);
        }
    }
}

impl<IO: RegisterIo, C: Clock> Tesla<IO, C> {
    /// Ask for an interrupt when a channel executes `NOTIFY_INTR` (`INTR_EN.NOTIFY`), or not.
    pub fn set_notify_interrupts(&self, enabled: bool) {
        self.io.write(ENABLED_INTERRUPTS.with_notify(enabled));
    }

    /// Let PFIFO's line through to the PCI interrupt (`PMC.INTR_MASK.PFIFO`; bring-up masks
    /// every line): PFIFO errors, and fences while notify interrupts are on, interrupt.
    pub fn enable_interrupts(&self) -> Result<(), DeviceGone> {
        self.check_alive()?;
        self.unmask_line(INTR_MASK::PFIFO, true);
        Ok(())
    }

    /// Mask every PMC line from the PCI interrupt again.
    pub fn disable_interrupts(&self) {
        self.io.write(INTR_MASK::RESET);
    }

    /// Let one PMC line through (`true`) or mask it.
    pub(crate) fn unmask_line(&self, line: FieldSpec, through: bool) {
        self.io.modify::<INTR_MASK>(|m| INTR_MASK::from_raw(line.set(m.raw(), u32::from(through))));
    }

    /// The interrupt handler: read `PMC.INTR`, decode and acknowledge PFIFO's interrupts
    /// (`DMA_PUSHER`: the channel from `CACHE1_PUSH1.CHID`, the error from
    /// `CACHE1_DMA_STATE.ERROR_CODE`, the bad command skipped and the error cleared so the
    /// channel goes on; `SEMAPHORE`,
    /// `CACHE_ERROR`: the channel; `NOTIFY`), and report the falcon lines. All-ones is
    /// [`DeviceGone`].
    pub fn handle_interrupts(&mut self) -> Result<IrqReport, DeviceGone> {
        let pmc = self.io.read::<PMC_INTR>();
        if pmc.raw() == u32::MAX {
            return Err(DeviceGone);
        }
        let mut report = IrqReport {
            pcopy: pmc.pcopy_gt215(),
            pdaemon: pmc.pdaemon_gt215(),
            ..IrqReport::default()
        };
        if pmc.pfifo() {
            self.handle_pfifo(&mut report)?;
        }
        for fault in report.faults() {
            if let Some(slot) = fault.channel().and_then(|c| self.channels.get_mut(usize::from(c)))
            {
                slot.fault = Some(fault);
            }
        }
        Ok(report)
    }

    /// The last PFIFO error that named channel `id` since it was created or recovered.
    pub fn channel_fault(&self, id: ChannelId) -> Option<FifoError> {
        self.channels[usize::from(id.get())].fault
    }

    fn handle_pfifo(&self, report: &mut IrqReport) -> Result<(), DeviceGone> {
        let pending = self.io.read::<INTR>();
        if pending.raw() == u32::MAX {
            return Err(DeviceGone);
        }
        let enabled = self.io.read::<INTR_EN>();
        let pending = INTR::from_raw(pending.raw() & enabled.raw());
        let channel = self.io.read::<CACHE1_PUSH1>().chid();
        let mut handled = INTR::RESET;
        if pending.dma_pusher() {
            let state = self.io.read::<CACHE1_DMA_STATE>();
            report.push(match state.error_code() {
                Ok(error) => FifoError::DmaPusher { channel, error },
                Err(_) => FifoError::DmaPusherUnknown { channel, code: state.error_code_raw() },
            });
            self.skip_bad_command();
            handled = handled.with_dma_pusher(true);
        }
        if pending.semaphore() {
            report.push(FifoError::Semaphore { channel });
            handled = handled.with_semaphore(true);
        }
        if pending.cache_error() {
            report.push(FifoError::Cache { channel });
            handled = handled.with_cache_error(true);
        }
        if pending.notify() {
            report.notify = true;
            handled = handled.with_notify(true);
        }
        let other = pending.raw() & !handled.raw();
        if other != 0 {
            report.push(FifoError::Other { bits: other });
        }
        self.io.write(INTR::from_raw(pending.raw()));
        Ok(())
    }

    /// After a DMA_PUSHER error, skip what the pusher could not take (Linux nouveau
    /// nv04_fifo_dma_pusher): the rest of the pushbuffer (`CACHE1_DMA_GET` = `CACHE1_DMA_PUT`)
    /// or, with the segment read, the IB entries it has not fetched (`CACHE1_IB_GET` =
    /// `CACHE1_IB_PUT`); then the error cleared (`CACHE1_DMA_STATE` = 0: the pusher stays
    /// stopped while it is set, §2.8.3's pseudocode throws out of the fetch loop). The channel
    /// goes on with the next submission.
    fn skip_bad_command(&self) {
        let put = self.io.read::<CACHE1_DMA_PUT>().raw();
        if self.io.read::<CACHE1_DMA_GET>().raw() != put {
            self.io.write(CACHE1_DMA_GET::from_raw(put));
        } else {
            let ib_put = self.io.read::<CACHE1_IB_PUT>().raw();
            if self.io.read::<CACHE1_IB_GET>().raw() != ib_put {
                self.io.write(CACHE1_IB_GET::from_raw(ib_put));
            }
        }
        self.io.write(CACHE1_DMA_STATE::RESET);
    }

    /// Recover channel `id` after a fault: disabled and unloaded, its RAMFC written afresh
    /// (`IB_GET` = `IB_PUT` = 0, `DMA_GET` = `DMA_PUT` = 0, no semaphore acquire pending),
    /// enabled again. The work in its rings is dropped; the caller's rings start again at 0,
    /// and puller state (the `DMA_SEMAPHORE` binding, bound objects) is gone: a channel a
    /// [`Queue`](crate::Queue) drives is recovered with its `reset`, which also empties the
    /// queue's rings and binds the semaphore object again.
    pub fn recover_channel(&mut self, id: ChannelId) -> Result<(), ChannelError> {
        let pusher = self.channel_pusher(id).ok_or(ChannelError::NotCreated { id: id.get() })?;
        let was_enabled = self.channel_state(id) == Some(true);
        self.destroy_channel(id)?;
        self.create_channel(id, pusher)?;
        if was_enabled {
            self.enable_channel(id)?;
        }
        Ok(())
    }

    /// How channel `id`'s pusher fetches (what it was created with).
    pub fn channel_pusher(&self, id: ChannelId) -> Option<crate::channel::Pusher> {
        self.channels[usize::from(id.get())].pusher
    }
}
