//! PIO (push) submission through the primary aperture (§5.3, §5.11).
//!
//! "The act of writing to a location in the aperture causes that data to be enqueued to the
//! Command Stream Queue ... in the order in which it was received" (§5.11): the driver writes
//! packet dwords to `CP_CSQ_APER_PRIMARY[i]` (0x1000-0x11FC, 128 instances), cycling `i`, so
//! each write is a plain dword store. The primary queue holds
//! [`PIO_PRIMARY_QUEUE_DWORDS`](crate::consts::PIO_PRIMARY_QUEUE_DWORDS) dwords (the
//! `CP_CSQ_MODE.INDIRECT1_START` split the driver programs); before a packet the sink makes
//! sure it fits, re-reading `CP_CSQ_AVAIL` only when its local estimate is too small, bounded
//! by `submit_timeout`.
//!
//! # What `CSQ_CNT_PRIMARY` counts
//!
//! §11.1 `CP_CSQ_AVAIL` ("Command Stream Queue Available Counts"): `CSQ_CNT_PRIMARY` is the
//! "Count of available dwords in the queue for the Primary Stream". The driver reads it as the
//! **free** dwords the host may still write, not the dwords waiting for the CP:
//!
//! - the register is the host's flow control for the push model (§5.3, §5.11), and the queue
//!   contents are reported elsewhere: `CP_CSQ_STAT` gives the primary queue's read and write
//!   pointers (§11.1), from which the dwords waiting follow;
//! - the document uses "available" for room to write: "the host will have to poll the Read
//!   Pointer until space becomes available" (§5.4);
//! - the same naming in the family's other FIFO counters means free entries:
//!   `RBBM_STATUS.CMDFIFO_AVAIL` (Linux r100.c `r100_rbbm_fifo_wait_for_entry` waits until it
//!   is at least the entries it needs), and the Rage 128 PM4 FIFO count that `CP_CSQ_CNTL`'s
//!   encodings stay compatible with (§11.1) reads as the FIFO size when the queue is empty
//!   (Linux r128_cce.c `r128_do_cce_idle` waits for it to reach `cce_fifo_size`).
//!
//! So the queue is empty when the count equals the primary queue's size, and a packet of `n`
//! dwords fits when the count is at least `n`. A register reading all-ones (count 1023) is
//! checked against the liveness register before it is believed.
//!
//! Switching modes "must be carefully controlled" (§5.3): [`PioSession`] first waits for the
//! ring to drain, switches `CP_CSQ_CNTL.CSQ_MODE` to primary PIO + indirect BM (indirect buffers
//! still work), and on [`finish`](PioSession::finish) waits for the queue to drain and switches
//! back to primary BM + indirect BM.

use baregpu_regs::r5xx::Family;
use core::time::Duration;

use baregpu_hal::dma::DmaAllocator;
use baregpu_hal::time::{Clock, poll_until};
use baregpu_hal::{Array, RegisterIo, RegisterIoExt};
use baregpu_regs::r5xx::cp::{CP_CSQ_APER_PRIMARY, CP_CSQ_AVAIL, CP_CSQ_CNTL, cp_csq_cntl};
use baregpu_ring::pm4::{CommandSink, NoSpace, Pm4Error, Pm4Writer};

use crate::consts::PIO_PRIMARY_QUEUE_DWORDS;
use crate::error::{DeviceGone, SubmitError};
use crate::liveness::reads_all_ones;
use crate::r5xx::fences;
use crate::r5xx::{Bar, R5xx};
use baregpu_gpu::{Fence, Timeline};

const APERTURE_SLOTS: usize = <CP_CSQ_APER_PRIMARY as Array>::COUNT;

/// Dwords still queued for the CP by one `CP_CSQ_AVAIL` read (see the module documentation),
/// or [`DeviceGone`] when it reads all-ones and the device is gone.
fn queued(io: &Bar<impl RegisterIo>) -> Result<usize, DeviceGone> {
    let avail = io.read::<CP_CSQ_AVAIL>();
    if avail.raw() == u32::MAX && reads_all_ones(io) {
        return Err(DeviceGone);
    }
    Ok(PIO_PRIMARY_QUEUE_DWORDS.saturating_sub(usize::from(avail.csq_cnt_primary())))
}

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

/// A [`CommandSink`] writing to the primary PIO aperture (see the module documentation).
pub struct PioSink<'s, IO: RegisterIo, C: Clock> {
    io: &'s Bar<IO>,
    clock: &'s C,
    timeout: Duration,
    st: &'s mut PioState,
}

impl<IO: RegisterIo, C: Clock> PioSink<'_, IO, C> {
    fn queued_now(&mut self) -> Option<usize> {
        match queued(self.io) {
            Ok(q) => {
                self.st.queued = q;
                Some(q)
            }
            Err(DeviceGone) => {
                self.st.gone = true;
                None
            }
        }
    }
}

impl<IO: RegisterIo, C: Clock> CommandSink for PioSink<'_, IO, C> {
    fn reserve(&mut self, dwords: usize) -> Result<(), NoSpace> {
        let limit = PIO_PRIMARY_QUEUE_DWORDS;
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
        let written = self.io.write_at(self.st.slot, value);
        debug_assert!(written.is_ok(), "aperture slot {} of {APERTURE_SLOTS}", self.st.slot);
        self.st.slot = (self.st.slot + 1) % APERTURE_SLOTS;
        self.st.granted -= 1;
        self.st.queued += 1;
        self.st.written += 1;
        Ok(())
    }
}

impl<'d, IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> R5xx<'d, IO, C, A> {
    /// Switch the primary stream to PIO (§5.11) for a while; see [`PioSession`].
    pub fn pio(&mut self) -> Result<PioSession<'_, 'd, IO, C, A>, SubmitError> {
        PioSession::start(self)
    }
}

/// The primary stream in PIO mode (see the module documentation). Dropping it without
/// [`finish`](Self::finish) switches back to bus mastering too (ignoring errors).
pub struct PioSession<'a, 'd, IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> {
    gpu: &'a mut R5xx<'d, IO, C, A>,
    st: PioState,
    finished: bool,
}

impl<'a, 'd, IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> PioSession<'a, 'd, IO, C, A> {
    fn start(gpu: &'a mut R5xx<'d, IO, C, A>) -> Result<Self, SubmitError> {
        // §5.3: switch only with the ring drained, so no ring dword is stranded.
        gpu.wait_ring_idle()?;
        gpu.io()
            .write(CP_CSQ_CNTL::RESET.with_csq_mode(cp_csq_cntl::CsqMode::PrimaryPioIndirectBm));
        Ok(PioSession { gpu, st: PioState::default(), finished: false })
    }

    /// A PM4 writer into the aperture. A packet that finds no queue space within the submit
    /// timeout fails with `Pm4Error::NoSpace` and writes nothing; [`packets`](Self::packets)
    /// turns that into a typed [`SubmitError`].
    pub fn writer(&mut self) -> Pm4Writer<PioSink<'_, IO, C>, Family> {
        let parts = self.gpu.pio_parts();
        Pm4Writer::new(PioSink {
            io: parts.io,
            clock: parts.clock,
            timeout: parts.timeout,
            st: &mut self.st,
        })
    }

    /// Run `f` on a writer and the fence sequence, counting the dwords it pushed.
    fn write<T>(
        &mut self,
        f: impl FnOnce(&mut Pm4Writer<PioSink<'_, IO, C>, Family>, &mut Timeline) -> Result<T, Pm4Error>,
    ) -> Result<T, SubmitError> {
        let before = self.st.written;
        let parts = self.gpu.pio_parts();
        let sink =
            PioSink { io: parts.io, clock: parts.clock, timeout: parts.timeout, st: &mut self.st };
        let result = f(&mut Pm4Writer::new(sink), parts.timeline);
        *parts.pio_dwords += self.st.written - before;
        result.map_err(|e| self.map_error(e))
    }

    /// Run `f` on a writer, mapping a full queue to [`SubmitError::PioQueueFull`] and an
    /// all-ones device to [`SubmitError::DeviceGone`].
    pub fn packets<T>(
        &mut self,
        f: impl FnOnce(&mut Pm4Writer<PioSink<'_, IO, C>, Family>) -> Result<T, Pm4Error>,
    ) -> Result<T, SubmitError> {
        self.write(|w, _| f(w))
    }

    fn map_error(&self, e: Pm4Error) -> SubmitError {
        match e {
            _ if self.st.gone => SubmitError::DeviceGone(DeviceGone),
            Pm4Error::NoSpace(NoSpace { needed, free }) => {
                SubmitError::PioQueueFull { needed, free }
            }
            e => SubmitError::Packet(e),
        }
    }

    /// A fence through the aperture, the same packet as on the ring (§5.9); wait for it with
    /// [`GpuQueue::wait`](baregpu_gpu::GpuQueue::wait) after [`finish`](Self::finish).
    pub fn fence(&mut self) -> Result<Fence, SubmitError> {
        self.write(|w, timeline| fences::emit(timeline, w))
    }

    /// Dwords written through the aperture in this session.
    pub fn dwords_written(&self) -> u64 {
        self.st.written
    }

    /// Wait (bounded by `submit_timeout`) until the CP parsed everything queued, then switch
    /// the primary stream back to bus mastering (`CSQ_MODE` = primary BM + indirect BM). The
    /// mode is switched back even on a timeout ([`SubmitError::PioDrainTimeout`]: the CP is
    /// stuck, reset it).
    pub fn finish(mut self) -> Result<(), SubmitError> {
        self.end()
    }

    fn end(&mut self) -> Result<(), SubmitError> {
        if self.finished {
            return Ok(());
        }
        self.finished = true;
        let io = self.gpu.io();
        let mut last = self.st.queued;
        // Bounded by `submit_timeout`, like every wait for the CP to consume commands.
        let drained =
            poll_until(self.gpu.clock(), self.gpu.config().submit_timeout, || match queued(io) {
                Err(gone) => Some(Err(gone)),
                Ok(q) => {
                    last = q;
                    (q == 0).then_some(Ok(()))
                }
            });
        io.write(CP_CSQ_CNTL::RESET.with_csq_mode(cp_csq_cntl::CsqMode::PrimaryBmIndirectBm));
        match drained {
            Ok(r) => Ok(r?),
            Err(waited) => Err(SubmitError::PioDrainTimeout { queued: last, waited }),
        }
    }
}

impl<IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> Drop for PioSession<'_, '_, IO, C, A> {
    fn drop(&mut self) {
        // Errors were the caller's to see through `finish`; a dropped session still hands
        // the primary stream back to bus mastering.
        let _best_effort = self.end();
    }
}
