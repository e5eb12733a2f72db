//! Submission on the ring (§5.4): reserve space with back-pressure, write packets with
//! `baregpu-ring`'s [`Pm4Writer`], pad to 16 dwords with type-2 packets, one doorbell
//! (`CP_RB_WPTR`) per batch. [`R5xx::submit`] is the shared all-or-nothing protocol
//! ([`baregpu_gpu::submit`]) over this family's [`Batch`]: a closure is held to its
//! reservation, and one that fails or overruns leaves nothing in the ring.

use baregpu_gpu::submit::{self as protocol, Allowance, Batch, Budget};
use baregpu_gpu::{Checkpoint, Fence, Overrun};
use baregpu_hal::RegisterIo;
use baregpu_hal::dma::DmaAllocator;
use baregpu_hal::time::Clock;
use baregpu_regs::r5xx::Family;
use baregpu_regs::r5xx::rbbm::GEN_INT_STATUS;
use baregpu_ring::pm4::{Pm4Writer, pad_count};
use baregpu_ring::r5xx::{IB_PACKET_DWORDS, IbDescriptor, SUBMIT_ALIGN};
use baregpu_ring::ring::WaitError;

use super::{R5xx, Ring, fences};
use crate::consts::{FENCE_DWORDS, REG_WRITE_DWORDS};
use crate::error::{DeviceGone, SubmitError};
use baregpu_gpu::liveness::{Unfinished, poll_healthy};

impl<'d, IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> R5xx<'d, IO, C, A> {
    /// Start an open-ended batch: each packet method (and each [`Submission::reserve`])
    /// reserves ring space with back-pressure and adds it to what the batch may write; packets
    /// reach the CP with one doorbell at [`Submission::flush`] (or when it is dropped).
    pub fn begin(&mut self) -> Submission<'_, 'd, IO, C, A> {
        let checkpoint = self.timeline.checkpoint();
        Submission {
            gpu: self,
            allowance: Allowance::new(0),
            fixed: false,
            checkpoint,
            flushed: false,
        }
    }

    /// One batch, all or nothing: reserve `dwords` of ring space (blocking up to
    /// `submit_timeout`), let `build` emit packets within them, pad to 16 dwords and ring the
    /// doorbell once.
    ///
    /// `build` is held to `dwords`: a write past them writes nothing and the submission fails
    /// with [`SubmitError::Overrun`]. If `build` fails or overruns, nothing it wrote reaches
    /// the CP: the ring's write pointer goes back to where the batch began, its fence numbers
    /// are taken back, and no doorbell is rung.
    pub fn submit<T>(
        &mut self,
        dwords: usize,
        build: impl FnOnce(&mut Submission<'_, 'd, IO, C, A>) -> Result<T, SubmitError>,
    ) -> Result<T, SubmitError> {
        let checkpoint = self.timeline.checkpoint();
        let mut s = Submission {
            gpu: self,
            allowance: Allowance::new(0),
            fixed: true,
            checkpoint,
            flushed: false,
        };
        protocol::submit(&mut s, dwords, build)
    }

    /// A batch holding just a fence.
    pub fn emit_fence(&mut self) -> Result<Fence, SubmitError> {
        self.submit(FENCE_DWORDS, |s| s.fence())
    }

    fn ring_wait_error(&self, e: WaitError) -> SubmitError {
        if matches!(e, WaitError::TimedOut { .. }) && self.device_gone() {
            SubmitError::DeviceGone(DeviceGone)
        } else {
            SubmitError::RingFull(e)
        }
    }

    /// Wait until the CP consumed everything committed to the ring (its written-back read
    /// pointer equals the committed write pointer), bounded by `submit_timeout`, checking the
    /// device's liveness while it polls.
    pub fn wait_ring_idle(&mut self) -> Result<(), SubmitError> {
        let target = self.ring.committed();
        let ring = &mut self.ring;
        let io = &self.io;
        let consumed = || {
            // A bad writeback value keeps the cached pointer: no progress this poll.
            let _bad_pointer_is_no_progress = ring.refresh_rptr();
            (ring.cached_rptr() == target).then_some(())
        };
        let health = || crate::liveness::check_alive(io).err();
        // Bounded by `submit_timeout`: the same budget as waiting for ring space.
        match poll_healthy(&self.clock, self.config.submit_timeout, consumed, health) {
            Ok(()) => Ok(()),
            Err(Unfinished::Unhealthy(gone)) => Err(gone.into()),
            Err(Unfinished::TimedOut(waited)) => Err(SubmitError::RingFull(WaitError::TimedOut {
                needed: self.ring.capacity(),
                free: self.ring.free_dwords(),
                waited,
            })),
        }
    }
}

/// A batch of packets on the ring: reserve space, write packets, [`flush`](Self::flush) once.
///
/// In [`R5xx::submit`] the batch holds the closure to the dwords it reserved: every packet
/// method and [`reserve`](Self::reserve) take from them, and a packet that does not fit fails
/// and fails the submission ([`SubmitError::Overrun`]). In an open-ended batch
/// ([`R5xx::begin`]) each packet method reserves its own room with back-pressure (blocking up to
/// `submit_timeout`), and packets written through [`writer`](Self::writer) use the room
/// granted by [`reserve`](Self::reserve) (a packet that does not fit fails with
/// [`Pm4Error::NoSpace`](baregpu_ring::pm4::Pm4Error::NoSpace) and writes nothing).
///
/// Dropping an unflushed open-ended batch flushes it (ignoring errors), so emitted fences
/// always reach the CP.
pub struct Submission<'a, 'd, IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> {
    gpu: &'a mut R5xx<'d, IO, C, A>,
    /// What the batch may still write.
    allowance: Allowance,
    /// `R5xx::submit`: the reservation is fixed at the start.
    fixed: bool,
    /// The fence timeline where the batch began (rolled back when it is discarded).
    checkpoint: Checkpoint,
    flushed: bool,
}

impl<'d, IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> Submission<'_, 'd, IO, C, A> {
    /// Room for `dwords` more. In [`R5xx::submit`]: whether they fit in what is left of the
    /// reservation ([`SubmitError::Overrun`] otherwise, and the submission fails). In an
    /// open-ended batch: wait (up to `submit_timeout`) until `dwords` plus the type-2 padding
    /// after them are free and add them to the batch. Never overwrites dwords the CP has not
    /// consumed: on timeout the ring is untouched and the error is [`SubmitError::RingFull`]
    /// (or [`SubmitError::DeviceGone`]).
    pub fn reserve(&mut self, dwords: usize) -> Result<(), SubmitError> {
        if self.fixed {
            self.allowance.check(dwords).map_err(|_| self.overrun_error(dwords))?;
            // Grant them for `push` (the ring space was reserved when the batch opened).
            return self.gpu.ring.reserve(dwords).map_err(|e| SubmitError::Packet(e.into()));
        }
        self.reserve_ring(dwords)?;
        self.allowance.grow(dwords);
        Ok(())
    }

    fn overrun_error(&self, dwords: usize) -> SubmitError {
        let attempted = self.allowance.written() + dwords;
        let reserved = self.allowance.written() + self.allowance.left();
        self.allowance.overrun().unwrap_or(Overrun { reserved, attempted }).into()
    }

    /// Wait until `dwords` plus the padding after them are free in the ring.
    fn reserve_ring(&mut self, dwords: usize) -> Result<(), SubmitError> {
        let gpu = &mut *self.gpu;
        // Room for the type-2 padding that follows `dwords` too, so a batch that stays within
        // its reservations can always be flushed (never left half-padded in the ring).
        let end = gpu.ring.head() as usize + dwords;
        let pad = pad_count(end, SUBMIT_ALIGN.min(gpu.ring.size_dwords())).unwrap_or(0);
        let dwords = dwords + pad;
        // Bounded by `submit_timeout` (default 100 ms): a CP that frees no ring space for that
        // long is stalled; the caller gets a typed error and can reset.
        match gpu.ring.reserve_blocking(dwords, &gpu.clock, gpu.config.submit_timeout) {
            Ok(()) => Ok(()),
            Err(e) => Err(gpu.ring_wait_error(e)),
        }
    }

    /// Whether fence interrupts are on (the software interrupt enabled), for the
    /// [`GpuQueue`](baregpu_gpu::GpuQueue) fence.
    pub(crate) fn fence_interrupts(&self) -> bool {
        self.gpu.interrupts.software
    }

    /// The ring (e.g. its head, to count the dwords a packet took).
    pub fn ring(&self) -> &Ring<'d, A> {
        &self.gpu.ring
    }

    /// A PM4 writer on the ring, held to what the batch may still write.
    pub fn writer(&mut self) -> Pm4Writer<Budget<&mut Ring<'d, A>, &mut Allowance>, Family> {
        Pm4Writer::new(Budget::with_allowance(&mut self.gpu.ring, &mut self.allowance))
    }

    /// Start `ib` as indirect buffer 1: one type-0 packet writing `CP_IB_BASE` then
    /// `CP_IB_BUFSZ`, 3 ring dwords (§5.10: the BUFSZ write is the packet's last).
    pub fn indirect_buffer(&mut self, ib: IbDescriptor) -> Result<(), SubmitError> {
        self.reserve(IB_PACKET_DWORDS)?;
        self.writer().indirect_buffer(ib)?;
        self.gpu.stats.indirect_buffers += 1;
        Ok(())
    }

    /// A fence: the next sequence number's low 32 bits written to `SCRATCH_REG1` by a type-0
    /// packet (2 dwords), which the CP writes back to the writeback page when it parses it
    /// (§5.9).
    pub fn fence(&mut self) -> Result<Fence, SubmitError> {
        self.reserve(FENCE_DWORDS)?;
        let gpu = &mut *self.gpu;
        let mut w = Pm4Writer::new(Budget::with_allowance(&mut gpu.ring, &mut self.allowance));
        Ok(fences::emit(&mut gpu.timeline, &mut w)?)
    }

    /// Fire the software interrupt when the CP gets here: a type-0 write of
    /// `GEN_INT_STATUS.SW_INT_SET` (bit 26, Linux `RADEON_SW_INT_FIRE`).
    pub fn software_interrupt(&mut self) -> Result<(), SubmitError> {
        self.reserve(REG_WRITE_DWORDS)?;
        self.writer().write_reg(GEN_INT_STATUS::RESET.with_sw_int_set(true))?;
        Ok(())
    }

    /// Pad to 16 dwords with type-2 packets (Linux r100.c `r100_ring_start` /
    /// `radeon_ring_commit` align submissions to 16 dwords) and ring the doorbell once
    /// (`dma_wmb`, then `CP_RB_WPTR`). An empty batch rings nothing.
    pub fn flush(mut self) -> Result<(), SubmitError> {
        self.finish()
    }

    fn finish(&mut self) -> Result<(), SubmitError> {
        if self.flushed {
            return Ok(());
        }
        self.flushed = true;
        if self.gpu.ring.pending_dwords() == 0 {
            return Ok(());
        }
        // The padding was reserved with the packets: this finds the room at once.
        self.reserve_ring(0)?;
        let written = self.gpu.ring.pad_to(SUBMIT_ALIGN)?;
        let gpu = &mut *self.gpu;
        gpu.ring.kick(&gpu.io);
        gpu.stats.padding_units += written as u64;
        gpu.stats.submissions += 1;
        Ok(())
    }
}

impl<IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> Batch for Submission<'_, '_, IO, C, A> {
    type Error = SubmitError;

    fn open(&mut self, units: usize) -> Result<(), SubmitError> {
        // No register read on the submit path: a gone device shows in the bounded waits (ring
        // space, fences), which check liveness while they poll.
        self.reserve_ring(units)?;
        self.allowance = Allowance::new(units);
        self.checkpoint = self.gpu.timeline.checkpoint();
        Ok(())
    }

    fn overrun(&self) -> Option<Overrun> {
        self.allowance.overrun()
    }

    fn discard(&mut self) {
        self.flushed = true;
        let gpu = &mut *self.gpu;
        gpu.ring.discard_uncommitted();
        gpu.timeline.rollback(self.checkpoint);
        gpu.stats.discarded += 1;
    }

    fn commit(&mut self) -> Result<(), SubmitError> {
        self.finish()
    }
}

impl<IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> Drop for Submission<'_, '_, IO, C, A> {
    fn drop(&mut self) {
        // Errors were the caller's to see through `flush`; a dropped batch is flushed best
        // effort so the fences in it reach the CP.
        let _best_effort = self.finish();
    }
}
