//! Submission on the ring (§9.1): the shared all-or-nothing protocol
//! ([`baregpu_gpu::submit`]) over this family's [`Batch`]: reserve with back-pressure, let the
//! closure write packets held to its reservation, pad to 16 dwords with type-2 fillers, one
//! doorbell; a closure that fails or overruns leaves nothing in the ring. The packet methods of
//! [`Submission`] (the compute and synchronisation ones live in [`crate::compute`] and
//! [`crate::sync`]).

use baregpu_gpu::submit::{self as protocol, Allowance, Batch, Budget};
use baregpu_gpu::{Checkpoint, Overrun, Timeline};
use baregpu_hal::dma::{BusAddress, DmaAllocator};
use baregpu_hal::time::Clock;
use baregpu_hal::{RegisterIo, RegisterIoExt};
use baregpu_ring::evergreen::{IbDescriptor, SUBMIT_ALIGN};
use baregpu_ring::pm4::{CommandSink, SliceSink};

use super::{Bar, Evergreen, Ring, Stats};
use crate::consts::{COND_EXEC_MAX_DWORDS, WB_FENCE_OFFSET, scratch_offset};
use crate::error::SubmitError;
use crate::pm4::{self, Compare, PacketError, PredOp, opcode};

impl<'d, IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> Evergreen<'d, IO, C, A> {
    /// One batch, all or nothing: reserve `dwords` (plus padding) with back-pressure, let
    /// `build` write packets within them, pad to 16 dwords with type-2 fillers, ring the
    /// doorbell once.
    ///
    /// `build` is held to `dwords`: a packet past them writes nothing and the submission fails
    /// with [`SubmitError::Overrun`]. If `build` fails or overruns, nothing it wrote reaches the
    /// CP: the write pointer goes back to where the batch began, its fence numbers are taken
    /// back, no doorbell is rung.
    pub fn submit<T>(
        &mut self,
        dwords: usize,
        build: impl FnOnce(&mut Submission<'_, 'd, A>) -> Result<T, PacketError>,
    ) -> Result<T, SubmitError> {
        let fence_addr = self.wb_address(WB_FENCE_OFFSET);
        let fence_irq = self.ih.enabled();
        let checkpoint = self.timeline.checkpoint();
        let mut batch = Open {
            io: &self.io,
            clock: &self.clock,
            timeout: self.config.submit_timeout,
            stats: &mut self.stats,
            checkpoint,
            s: Submission {
                ring: &mut self.ring,
                allowance: Allowance::new(0),
                timeline: &mut self.timeline,
                fence_addr,
                fence_irq,
            },
        };
        protocol::submit(&mut batch, dwords, |b| build(&mut b.s).map_err(SubmitError::from))
    }
}

/// One batch being built: what the protocol needs besides the [`Submission`] the closure gets.
struct Open<'a, 'd, IO, C, A: DmaAllocator + ?Sized> {
    io: &'a Bar<IO>,
    clock: &'a C,
    timeout: core::time::Duration,
    stats: &'a mut Stats,
    checkpoint: Checkpoint,
    s: Submission<'a, 'd, A>,
}

impl<IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> Batch for Open<'_, '_, IO, C, A> {
    type Error = SubmitError;

    fn open(&mut self, units: usize) -> Result<(), SubmitError> {
        crate::liveness::check_alive(self.io)?;
        // Room for the padding after the packets too (at most SUBMIT_ALIGN - 1 fillers).
        let need = units + SUBMIT_ALIGN;
        self.s
            .ring
            .reserve_blocking(need, self.clock, self.timeout)
            .map_err(SubmitError::RingFull)?;
        self.s.allowance = Allowance::new(units);
        self.checkpoint = self.s.timeline.checkpoint();
        Ok(())
    }

    fn overrun(&self) -> Option<Overrun> {
        self.s.allowance.overrun()
    }

    fn discard(&mut self) {
        self.s.ring.discard_uncommitted();
        self.s.timeline.rollback(self.checkpoint);
        self.stats.discarded += 1;
    }

    fn commit(&mut self) -> Result<(), SubmitError> {
        self.s
            .ring
            .pad_to(SUBMIT_ALIGN)
            .map_err(|_| SubmitError::Packet(PacketError::BadLength { dwords: SUBMIT_ALIGN }))?;
        let doorbell = self.s.ring.commit();
        self.io.write(doorbell);
        self.stats.doorbells += 1;
        self.stats.submissions += 1;
        Ok(())
    }
}

/// Packets of one submission, written into the reserved part of the driver's ring (whose memory
/// came from an `A` for `'d`), held to the reservation.
pub struct Submission<'a, 'd, A: DmaAllocator + ?Sized> {
    ring: &'a mut Ring<'d, A>,
    allowance: Allowance,
    timeline: &'a mut Timeline,
    fence_addr: BusAddress,
    /// Whether fences ask for an end-of-pipe interrupt (the caller enabled interrupts).
    fence_irq: bool,
}

impl<'d, A: DmaAllocator + ?Sized> Submission<'_, 'd, A> {
    /// The ring as a raw packet sink held to the reservation (for packets this API does not
    /// name).
    pub fn sink(&mut self) -> Budget<&mut Ring<'d, A>, &mut Allowance> {
        Budget::with_allowance(&mut *self.ring, &mut self.allowance)
    }

    /// The timeline, the fence address and whether fences ask for an interrupt.
    pub(super) fn fence_parts(&self) -> (&Timeline, BusAddress, bool) {
        (self.timeline, self.fence_addr, self.fence_irq)
    }

    /// Take the next fence number (its packet was written).
    pub(super) fn emit_fence(&mut self) -> baregpu_gpu::Fence {
        self.timeline.emit()
    }

    /// Dwords the submission may still write.
    pub fn dwords_left(&self) -> usize {
        self.allowance.left()
    }

    /// A type-3 packet (graphics shader type).
    pub fn packet(&mut self, op: pm4::EvergreenPacket, body: &[u32]) -> Result<(), PacketError> {
        pm4::packet(&mut self.sink(), op, body, false)
    }

    /// A type-3 packet with SHADER_TYPE compute (§9.1.4 bit 1).
    pub fn compute_packet(
        &mut self,
        op: pm4::EvergreenPacket,
        body: &[u32],
    ) -> Result<(), PacketError> {
        pm4::packet(&mut self.sink(), op, body, true)
    }

    /// Consecutive registers from byte offset `first` through their `SET_*` packet.
    pub fn set_regs(
        &mut self,
        first: usize,
        values: &[u32],
        compute: bool,
    ) -> Result<(), PacketError> {
        pm4::set_regs(&mut self.sink(), first, values, compute)
    }

    /// `SET_CONFIG_REG` of scratch register `n` (§9.4.14).
    pub fn set_scratch(&mut self, n: usize, value: u32) -> Result<(), PacketError> {
        pm4::set_regs(&mut self.sink(), scratch_offset(n)?, &[value], false)
    }

    /// `INDIRECT_BUFFER` (§9.3.1, the ring's writer): the CP runs `ib`, then continues here.
    pub fn indirect_buffer(&mut self, ib: IbDescriptor) -> Result<(), PacketError> {
        let mut sink = self.sink();
        Ok(baregpu_ring::pm4::Pm4Writer::<_, baregpu_regs::evergreen::Family>::with_family(
            &mut sink,
        )
        .indirect_buffer(ib)?)
    }

    /// `WAIT_REG_MEM` (§9.6.8): the ME waits until `(*address & mask) <compare> reference`.
    pub fn wait_mem(
        &mut self,
        address: BusAddress,
        compare: Compare,
        reference: u32,
        mask: u32,
    ) -> Result<(), PacketError> {
        let body = pm4::wait_mem(address, compare, reference, mask)?;
        self.packet(opcode::WAIT_REG_MEM, &body)
    }

    /// `COND_EXEC` (§9.5.1): the packets `build` writes run only if the dword at `address` is
    /// not zero. The EXEC_COUNT is what `build` wrote.
    pub fn cond_exec(
        &mut self,
        address: BusAddress,
        max_dwords: usize,
        build: impl FnOnce(&mut SliceSink<'_>) -> Result<(), PacketError>,
    ) -> Result<(), PacketError> {
        let mut buf = [0u32; COND_EXEC_MAX_DWORDS];
        let mut staging = SliceSink::new(&mut buf[..max_dwords.min(COND_EXEC_MAX_DWORDS)]);
        build(&mut staging)?;
        let inner = staging.written();
        let body = pm4::cond_exec(address, inner.len())?;
        let mut sink = self.sink();
        sink.reserve(4 + inner.len())?;
        sink.push(pm4::header(opcode::COND_EXEC, body.len(), false, false)?)?;
        sink.push_slice(&body)?;
        sink.push_slice(inner)?;
        Ok(())
    }

    /// `MEM_WRITE` (§9.7.1): 64-bit `value` to the quadword at `address`, at the top of the
    /// pipe.
    pub fn mem_write(&mut self, address: BusAddress, value: u64) -> Result<(), PacketError> {
        let body = pm4::mem_write(address, value)?;
        self.packet(opcode::MEM_WRITE, &body)
    }

    /// `COND_WRITE` (§9.5.2): write `data` to `write` if `(*poll & mask) <compare> reference`;
    /// the CP continues either way.
    pub fn cond_write(
        &mut self,
        poll: BusAddress,
        compare: Compare,
        reference: u32,
        mask: u32,
        write: BusAddress,
        data: u32,
    ) -> Result<(), PacketError> {
        let body = pm4::cond_write(poll, compare, reference, mask, write, data)?;
        self.packet(opcode::COND_WRITE, &body)
    }

    /// `PFP_SYNC_ME` (§9.6.5): the PFP waits until the ME has caught up.
    pub fn pfp_sync_me(&mut self) -> Result<(), PacketError> {
        self.packet(opcode::PFP_SYNC_ME, &[0])
    }

    /// `EVENT_WRITE_EOS` (§9.6.3): `data` to `address` once the compute shaders before it are
    /// done (CS_DONE).
    pub fn eos_write(&mut self, address: BusAddress, data: u32) -> Result<(), PacketError> {
        let body = pm4::eos_write(address, data)?;
        self.compute_packet(opcode::EVENT_WRITE_EOS, &body)
    }

    /// `SET_PREDICATION` (§9.5.3).
    pub fn set_predication(
        &mut self,
        address: BusAddress,
        op: PredOp,
        draw_if_visible: bool,
    ) -> Result<(), PacketError> {
        let body = pm4::set_predication(address, op, draw_if_visible)?;
        self.packet(opcode::SET_PREDICATION, &body)
    }

    /// A predicated type-3 packet (§9.1.4 bit 0): skipped while the predicate is false.
    pub fn predicated_packet(
        &mut self,
        op: pm4::EvergreenPacket,
        body: &[u32],
    ) -> Result<(), PacketError> {
        if body.is_empty() || body.len() > pm4::MAX_BODY_DWORDS {
            return Err(PacketError::BadLength { dwords: body.len() });
        }
        self.sink().write_packet(pm4::header(op, body.len(), false, true)?, body)?;
        Ok(())
    }

    /// `CP_DMA` copy of `bytes` from `src` to `dst` (Linux radeon evergreend.h), split into
    /// transfers of at most [`pm4::CP_DMA_MAX_BYTES`]; the last one with CP_SYNC. Every
    /// transfer is checked, and the room for all of them, before the first is written: it is
    /// written whole or not at all.
    pub fn cp_dma_copy(
        &mut self,
        src: BusAddress,
        dst: BusAddress,
        bytes: usize,
    ) -> Result<(), PacketError> {
        let chunk = |done: usize, n: usize| {
            let at = |a: BusAddress| {
                a.0.checked_add(done as u64)
                    .map(BusAddress)
                    .ok_or(PacketError::BadAddress { address: a.0, align: 1 })
            };
            pm4::cp_dma_copy(at(src)?, at(dst)?, n, done + n == bytes)
        };
        self.cp_dma(bytes, chunk)
    }

    /// `CP_DMA` fill of `bytes` (a multiple of 4) at `dst` with `value`; written whole or not
    /// at all, as [`cp_dma_copy`](Self::cp_dma_copy).
    pub fn cp_dma_fill(
        &mut self,
        value: u32,
        dst: BusAddress,
        bytes: usize,
    ) -> Result<(), PacketError> {
        let chunk = |done: usize, n: usize| {
            let at = dst
                .0
                .checked_add(done as u64)
                .map(BusAddress)
                .ok_or(PacketError::BadAddress { address: dst.0, align: 4 })?;
            pm4::cp_dma_fill(value, at, n, done + n == bytes)
        };
        self.cp_dma(bytes, chunk)
    }

    /// `CP_DMA` transfers over `bytes` in pieces of at most [`pm4::CP_DMA_MAX_BYTES`] (dword
    /// multiples): every body built (checked) first, the room for all of them reserved, then
    /// written.
    fn cp_dma(
        &mut self,
        bytes: usize,
        chunk: impl Fn(usize, usize) -> Result<[u32; 5], PacketError>,
    ) -> Result<(), PacketError> {
        let step = pm4::CP_DMA_MAX_BYTES & !3;
        let pieces = || (0..bytes).step_by(step).map(|done| (done, (bytes - done).min(step)));
        let mut packets = 0;
        for (done, n) in pieces() {
            chunk(done, n)?;
            packets += 1;
        }
        if packets == 0 {
            // A zero-byte transfer is the packet builder's to refuse.
            chunk(0, 0)?;
        }
        let header = pm4::header(opcode::CP_DMA, 5, false, false)?;
        let mut sink = self.sink();
        sink.reserve(packets * 6)?;
        for (done, n) in pieces() {
            sink.write_packet(header, &chunk(done, n)?)?;
        }
        Ok(())
    }
}
