//! PIO (push) submission through the primary aperture (§5.3, §5.11).
//!
//! "The act of writing to a location in the aperture causes that data to be enqueued to the
//! Command Stream Queue ... in the order in which it was received" (§5.11): the driver writes
//! packet dwords to `CP_CSQ_APER_PRIMARY[i]` (0x1000-0x11FC, 128 instances), cycling `i`, so
//! each write is a plain dword store. The primary queue holds
//! [`PIO_PRIMARY_QUEUE_DWORDS`](crate::consts::PIO_PRIMARY_QUEUE_DWORDS) dwords (the
//! `CP_CSQ_MODE.INDIRECT1_START` split the driver programs); before a packet the sink makes
//! sure it fits, re-reading `CP_CSQ_AVAIL.CSQ_CNT_PRIMARY` ("count of available dwords in the
//! queue", read as dwords waiting for the CP, which is how the emulated device reports it) only
//! when its local estimate is too small, bounded by `submit_timeout`.
//!
//! Switching modes "must be carefully controlled" (§5.3): [`PioSession`] first waits for the
//! ring to drain, switches `CP_CSQ_CNTL.CSQ_MODE` to primary PIO + indirect BM (indirect buffers
//! still work), and on [`finish`](PioSession::finish) waits for the queue to drain and switches
//! back to primary BM + indirect BM.

use core::time::Duration;

use baregpu_hal::time::{Clock, poll_until};
use baregpu_hal::{Array, RegisterIo, RegisterIoExt};
use baregpu_regs::r5xx::cp::{
    CP_CSQ_APER_PRIMARY, CP_CSQ_AVAIL, CP_CSQ_CNTL, SCRATCH_REG0, cp_csq_cntl,
};
use baregpu_ring::pm4::{CommandSink, NoSpace, Pm4Error, Pm4Writer};

use crate::driver::{FENCE_SCRATCH, Fence, R5xx, consts};
use crate::error::SubmitError;

const APERTURE_SLOTS: usize = <CP_CSQ_APER_PRIMARY as Array>::COUNT;

#[derive(Debug, Default)]
struct PioState {
    /// Dwords believed queued (upper bound: the last CSQ_AVAIL read plus writes since).
    queued: usize,
    /// Pushes left in the current grant.
    granted: usize,
    /// Next aperture instance.
    slot: usize,
    /// Dwords written.
    written: u64,
    /// The device read all-ones while waiting for space.
    gone: bool,
}

fn is_gone(io: &impl RegisterIo) -> bool {
    io.read::<baregpu_regs::r5xx::cp::CP_RB_RPTR>().raw() == u32::MAX
}

/// A [`CommandSink`] writing to the primary PIO aperture (see the module documentation).
pub struct PioSink<'s, IO: RegisterIo, C: Clock> {
    io: &'s IO,
    clock: &'s C,
    timeout: Duration,
    st: &'s mut PioState,
}

impl<IO: RegisterIo, C: Clock> PioSink<'_, IO, C> {
    fn queued_now(&mut self) -> Option<usize> {
        let avail = self.io.read::<CP_CSQ_AVAIL>();
        if avail.raw() == u32::MAX && is_gone(self.io) {
            self.st.gone = true;
            return None;
        }
        self.st.queued = usize::from(avail.csq_cnt_primary());
        Some(self.st.queued)
    }
}

impl<IO: RegisterIo, C: Clock> CommandSink for PioSink<'_, IO, C> {
    fn reserve(&mut self, dwords: usize) -> Result<(), NoSpace> {
        let limit = consts::PIO_PRIMARY_QUEUE_DWORDS;
        if dwords > limit {
            return Err(NoSpace { needed: dwords, free: limit });
        }
        if self.st.queued + dwords > limit {
            let (clock, timeout) = (self.clock, self.timeout);
            // Bounded by `submit_timeout` (default 100 ms): a CP that parses nothing from its
            // queue for that long is stalled; overflowing it instead would stall the bus.
            let polled = poll_until(clock, timeout, || match self.queued_now() {
                None => Some(false),
                Some(q) => (q + dwords <= limit).then_some(true),
            });
            if polled != Ok(true) {
                let free = limit.saturating_sub(self.st.queued);
                return Err(NoSpace { needed: dwords, free });
            }
        }
        self.st.granted = dwords;
        Ok(())
    }

    fn push(&mut self, dword: u32) -> Result<(), NoSpace> {
        if self.st.granted == 0 {
            return Err(NoSpace { needed: 1, free: 0 });
        }
        let value = CP_CSQ_APER_PRIMARY::RESET.with_cp_csq_aper_primary(dword);
        // `slot < APERTURE_SLOTS` always: the index cannot be out of range.
        let _ = self.io.write_at(self.st.slot, value);
        self.st.slot = (self.st.slot + 1) % APERTURE_SLOTS;
        self.st.granted -= 1;
        self.st.queued += 1;
        self.st.written += 1;
        Ok(())
    }
}

/// The primary stream in PIO mode (see the module documentation). Dropping it without
/// [`finish`](Self::finish) switches back to bus mastering too (ignoring errors).
pub struct PioSession<'a, IO: RegisterIo, C: Clock> {
    gpu: &'a mut R5xx<IO, C>,
    st: PioState,
    finished: bool,
}

impl<'a, IO: RegisterIo, C: Clock> PioSession<'a, IO, C> {
    pub(crate) fn start(gpu: &'a mut R5xx<IO, C>) -> Result<Self, SubmitError> {
        // §5.3: switch only with the ring drained, so no ring dword is stranded.
        gpu.wait_ring_idle()?;
        gpu.io.write(CP_CSQ_CNTL::RESET.with_csq_mode(cp_csq_cntl::CsqMode::PrimaryPioIndirectBm));
        Ok(PioSession { gpu, st: PioState::default(), finished: false })
    }

    /// A PM4 writer into the aperture. A packet that finds no queue space within the submit
    /// timeout fails with `Pm4Error::NoSpace` and writes nothing; [`packets`](Self::packets)
    /// turns that into a typed [`SubmitError`].
    pub fn writer(&mut self) -> Pm4Writer<PioSink<'_, IO, C>> {
        Pm4Writer::new(PioSink {
            io: &self.gpu.io,
            clock: &self.gpu.clock,
            timeout: self.gpu.config.submit_timeout,
            st: &mut self.st,
        })
    }

    /// Run `f` on a writer, mapping a full queue to [`SubmitError::PioQueueFull`] and an
    /// all-ones device to [`SubmitError::DeviceGone`].
    pub fn packets<T>(
        &mut self,
        f: impl FnOnce(&mut Pm4Writer<PioSink<'_, IO, C>>) -> Result<T, Pm4Error>,
    ) -> Result<T, SubmitError> {
        let before = self.st.written;
        let result = f(&mut self.writer());
        self.gpu.stats.pio_dwords += self.st.written - before;
        result.map_err(|e| self.map_error(e))
    }

    fn map_error(&self, e: Pm4Error) -> SubmitError {
        match e {
            _ if self.st.gone => SubmitError::DeviceGone,
            Pm4Error::NoSpace(NoSpace { needed, free }) => {
                SubmitError::PioQueueFull { needed, free }
            }
            e => SubmitError::Packet(e),
        }
    }

    /// A fence through the aperture (type-0 write of the next sequence number to the fence
    /// scratch register, §5.9); wait for it with [`R5xx::wait`] after [`finish`](Self::finish).
    pub fn fence(&mut self) -> Result<Fence, SubmitError> {
        let seq = self.gpu.seq.wrapping_add(1);
        self.packets(|w| {
            w.write_reg_at(FENCE_SCRATCH, SCRATCH_REG0::RESET.with_scratch_reg0(seq))
        })?;
        self.gpu.seq = seq;
        self.gpu.stats.fences += 1;
        Ok(Fence::new(seq))
    }

    /// Dwords written through the aperture in this session.
    pub fn dwords_written(&self) -> u64 {
        self.st.written
    }

    /// Wait (bounded by `submit_timeout`) until the CP parsed everything queued, then switch
    /// the primary stream back to bus mastering (`CSQ_MODE` = primary BM + indirect BM). The
    /// mode is switched back even on a timeout (the error says the CP is stuck: reset it).
    pub fn finish(mut self) -> Result<(), SubmitError> {
        self.end()
    }

    fn end(&mut self) -> Result<(), SubmitError> {
        if self.finished {
            return Ok(());
        }
        self.finished = true;
        let io = &self.gpu.io;
        let mut gone = false;
        // Bounded by `submit_timeout`, like every wait for the CP to consume commands.
        let drained = poll_until(&self.gpu.clock, self.gpu.config.submit_timeout, || {
            let avail = io.read::<CP_CSQ_AVAIL>();
            if avail.raw() == u32::MAX && is_gone(io) {
                gone = true;
                return Some(());
            }
            (avail.csq_cnt_primary() == 0).then_some(())
        });
        io.write(CP_CSQ_CNTL::RESET.with_csq_mode(cp_csq_cntl::CsqMode::PrimaryBmIndirectBm));
        if gone {
            return Err(SubmitError::DeviceGone);
        }
        drained.map_err(|_| SubmitError::PioQueueFull {
            needed: 0,
            free: consts::PIO_PRIMARY_QUEUE_DWORDS.saturating_sub(self.st.queued),
        })
    }
}

impl<IO: RegisterIo, C: Clock> Drop for PioSession<'_, IO, C> {
    fn drop(&mut self) {
        let _ = self.end();
    }
}
