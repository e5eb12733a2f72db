//! Submission and fences on one IB-mode channel: the family-generic [`GpuQueue`] over
//! `baregpu_ring::nvidia::IbChannel` (commands into the main pushbuffer, one IB entry run per
//! batch, one `IB_PUT` write).
//!
//! A fence is three puller methods (nvidia-hardware-envytools §2.8.4): `REF_CNT` with the
//! sequence number (the channel's USER `REF` follows completed work), a G84+ semaphore release
//! of the sequence number to the queue's fence memory (16 bytes: "semaphore_sequence, 0,
//! PTIMER timestamp"), which the driver polls, and `NOTIFY_INTR`, which interrupts only while
//! fence interrupts are on (`PFIFO.INTR_EN.NOTIFY`). Another channel waits for the fence with
//! [`Submission::wait_for`] (semaphore acquire >=, 32-bit wrapping compare) or
//! [`Submission::wait_equal`] (acquire equal).
//!
//! The queue shares the GPU with other queues through a `RefCell` (one thread drives a GPU;
//! borrows never outlive a call).

use core::cell::RefCell;
use core::fmt;
use core::time::Duration;

use baregpu_gpu::liveness::{Unfinished, poll_healthy};
use baregpu_gpu::recovery::{self, Recovery};
use baregpu_gpu::wait::{self, FenceSource};
use baregpu_gpu::{
    Allowance, Budget, DeviceGone, Fence, FenceError, GpuQueue, Overrun, ResetReport, Stats,
    TestError, Timeline,
};
use baregpu_hal::dma::{BusAddress, DmaRegion};
use baregpu_hal::io::BlockIo;
use baregpu_hal::register::InstanceArray;
use baregpu_hal::time::Clock;
use baregpu_hal::{RegisterIo, RegisterIoExt};
use baregpu_regs::nvidia::packets as pb;
use baregpu_regs::nvidia::pfifo_user::{self, IB_GET, REF, UserG80};
use baregpu_regs::pushbuffer::PusherMode;
use baregpu_ring::nvidia::{
    IbChannel, IbSubmitError, MgetRptr, Pushbuffer, PushbufferError, PushbufferWriter,
};
use baregpu_ring::ring::{CommandRing, RingConfigError, WaitError as RingWaitError};

use crate::channel::{ChannelId, IbRing};
use crate::error::ChannelError;
use crate::memory::ADDRESS_LIMIT;
use crate::tesla::Tesla;
use crate::tesla::channels::SEMAPHORE_DMA_HANDLE;

/// Words one fence takes: `REF_CNT` (2), the semaphore release (5), `NOTIFY_INTR` (2).
pub const FENCE_WORDS: usize = 9;
/// Bytes of fence memory a queue needs: the fence semaphore (16 bytes, §2.8.4 "the
/// following 16-byte structure") and the ring test's (16 more).
pub const FENCE_MEMORY_BYTES: usize = 32;
/// Where the ring test's semaphore is in the fence memory.
const TEST_SEMAPHORE: usize = 16;
/// The value the ring test releases.
const RING_TEST_VALUE: u32 = 0x600d_f00d;

/// A channel's USER block (doorbell `IB_PUT`, read pointers), owned by the queue.
pub type UserIo<IO> = BlockIo<IO, pfifo_user::Block>;
type Main<'q, IO> = CommandRing<&'q DmaRegion, MgetRptr<UserIo<IO>>, Pushbuffer>;

/// Timeouts of a queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct QueueConfig {
    /// How long a submission waits for room in the main pushbuffer and the IB ring.
    pub submit_timeout: Duration,
    /// How long the ring test of a reset waits.
    pub test_timeout: Duration,
}

impl Default for QueueConfig {
    fn default() -> Self {
        QueueConfig {
            submit_timeout: Duration::from_millis(500),
            test_timeout: Duration::from_millis(100),
        }
    }
}

/// Why a submission failed. Nothing of it reached the device: the main pushbuffer's write
/// pointer is back where the batch began and no `IB_PUT` was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum SubmitError {
    /// The closure wrote past its reservation.
    Overrun(Overrun),
    /// The closure's command could not be written.
    Build(PushbufferError),
    /// No room in the main pushbuffer within the submit timeout (or never).
    NoRoom(RingWaitError),
    /// The IB ring took no entries (full past the timeout, or a hostile `IB_GET`).
    Ib(IbSubmitError),
    /// The device reads all-ones.
    DeviceGone(DeviceGone),
}

impl From<DeviceGone> for SubmitError {
    fn from(e: DeviceGone) -> Self {
        SubmitError::DeviceGone(e)
    }
}

impl From<PushbufferError> for SubmitError {
    fn from(e: PushbufferError) -> Self {
        SubmitError::Build(e)
    }
}

impl fmt::Display for SubmitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SubmitError::Overrun(_) => f.write_str("the submission wrote past its reservation"),
            SubmitError::Build(_) => f.write_str("a command could not be written"),
            SubmitError::NoRoom(_) => f.write_str("no room in the main pushbuffer"),
            SubmitError::Ib(_) => f.write_str("the IB ring took no entries"),
            SubmitError::DeviceGone(_) => f.write_str("device gone"),
        }
    }
}

impl core::error::Error for SubmitError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            SubmitError::Overrun(e) => Some(e),
            SubmitError::Build(e) => Some(e),
            SubmitError::NoRoom(e) => Some(e),
            SubmitError::Ib(e) => Some(e),
            SubmitError::DeviceGone(e) => Some(e),
        }
    }
}

/// Why a queue could not be set up or reset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum QueueError {
    /// The fence memory is smaller than [`FENCE_MEMORY_BYTES`], or its address is not
    /// 16-byte aligned below 2^40.
    FenceMemory {
        /// Its bus address.
        address: u64,
        /// Its size.
        size: usize,
    },
    /// The main pushbuffer or the IB ring cannot be used (size, alignment, address).
    Ring(RingConfigError),
    /// The channel could not be created, enabled or recovered.
    Channel(ChannelError),
    /// The setup or test batch could not be submitted.
    Submit(SubmitError),
    /// The ring test after a reset failed.
    Test(TestError<SubmitError>),
    /// The device reads all-ones.
    DeviceGone(DeviceGone),
}

impl From<DeviceGone> for QueueError {
    fn from(e: DeviceGone) -> Self {
        QueueError::DeviceGone(e)
    }
}

impl From<ChannelError> for QueueError {
    fn from(e: ChannelError) -> Self {
        match e {
            ChannelError::DeviceGone(g) => QueueError::DeviceGone(g),
            e => QueueError::Channel(e),
        }
    }
}

impl From<TestError<SubmitError>> for QueueError {
    fn from(e: TestError<SubmitError>) -> Self {
        QueueError::Test(e)
    }
}

impl fmt::Display for QueueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueueError::FenceMemory { address, size } => write!(
                f,
                "fence memory of {size} bytes at {address:#x} ({FENCE_MEMORY_BYTES} bytes, 16-byte aligned, below 2^40)"
            ),
            QueueError::Ring(_) => f.write_str("the pushbuffer or IB ring cannot be used"),
            QueueError::Channel(_) => f.write_str("the channel"),
            QueueError::Submit(_) => f.write_str("the setup batch"),
            QueueError::Test(_) => f.write_str("the ring test failed"),
            QueueError::DeviceGone(_) => f.write_str("device gone"),
        }
    }
}

impl core::error::Error for QueueError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            QueueError::Ring(e) => Some(e),
            QueueError::Channel(e) => Some(e),
            QueueError::Submit(e) => Some(e),
            QueueError::Test(e) => Some(e),
            QueueError::DeviceGone(e) => Some(e),
            QueueError::FenceMemory { .. } => None,
        }
    }
}

/// Where and what another channel waits for to pass a fence of this queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct FencePoint {
    /// The fence semaphore's bus address.
    pub address: BusAddress,
    /// The fence's sequence number, low 32 bits.
    pub value: u32,
}

/// One batch being built: pushbuffer commands through [`writer`](Self::writer), fences, waits
/// on other queues' fences. Everything it writes is held to the submission's reservation.
pub struct Submission<'s, 'q, IO: RegisterIo> {
    writer: PushbufferWriter<Budget<&'s mut Main<'q, IO>, &'s mut Allowance>>,
    timeline: &'s mut Timeline,
    fence_address: BusAddress,
}

impl<'s, 'q, IO: RegisterIo> Submission<'s, 'q, IO> {
    /// The command writer (methods, object binds), in IB mode.
    pub fn writer(
        &mut self,
    ) -> &mut PushbufferWriter<Budget<&'s mut Main<'q, IO>, &'s mut Allowance>> {
        &mut self.writer
    }

    /// A fence ([`FENCE_WORDS`] words): signalled once everything before it executed.
    pub fn fence(&mut self) -> Result<Fence, PushbufferError> {
        let seq = self.timeline.peek_next() as u32;
        self.writer.ref_cnt(seq)?;
        self.writer.semaphore_release(self.fence_address, seq)?;
        self.writer.methods(0, pb::NOTIFY_INTR.method, &[0])?;
        Ok(self.timeline.emit())
    }

    /// Hold this channel until the other queue's fence `point` signalled (semaphore acquire
    /// >=: `(int32)(value - sequence) >= 0`, §2.8.4). 5 words.
    pub fn wait_for(&mut self, point: FencePoint) -> Result<(), PushbufferError> {
        self.writer.semaphore_acquire_geq(point.address, point.value)
    }

    /// Hold this channel until the semaphore at `point` equals its value exactly (acquire
    /// equal). 5 words.
    pub fn wait_equal(&mut self, point: FencePoint) -> Result<(), PushbufferError> {
        self.writer.semaphore_acquire(point.address, point.value)
    }
}

/// One IB-mode channel as a GPU queue.
pub struct Queue<'q, IO: RegisterIo + Clone, C: Clock> {
    gpu: &'q RefCell<Tesla<IO, C>>,
    id: ChannelId,
    main: &'q DmaRegion,
    ib: &'q DmaRegion,
    fences: &'q DmaRegion,
    channel: IbChannel<&'q DmaRegion, &'q DmaRegion, UserIo<IO>>,
    user: UserIo<IO>,
    timeline: Timeline,
    config: QueueConfig,
    stats: Stats,
}

impl<'q, IO: RegisterIo + Clone, C: Clock> Queue<'q, IO, C> {
    /// Create channel `id` on `gpu` fetching from the IB ring `ib` (a power of two of 8-byte
    /// entries) and the main pushbuffer `main`, with fences written to `fences`
    /// ([`FENCE_MEMORY_BYTES`], zeroed here); enable it and bind its semaphore DMA object
    /// (one setup batch).
    pub fn new(
        gpu: &'q RefCell<Tesla<IO, C>>,
        id: ChannelId,
        main: &'q DmaRegion,
        ib: &'q DmaRegion,
        fences: &'q DmaRegion,
        config: QueueConfig,
    ) -> Result<Self, QueueError> {
        let address = fences.bus_address();
        if fences.size() < FENCE_MEMORY_BYTES
            || !address.0.is_multiple_of(16)
            || !address.fits_below(FENCE_MEMORY_BYTES as u64, ADDRESS_LIMIT)
        {
            return Err(QueueError::FenceMemory { address: address.0, size: fences.size() });
        }
        let user = user_block(gpu, id)?;
        let channel = IbChannel::new(main, ib, user.clone()).map_err(QueueError::Ring)?;
        fences.zero();
        let ring = ib_ring(ib);
        {
            let mut g = gpu.borrow_mut();
            g.create_channel(id, ring)?;
            g.enable_channel(id)?;
        }
        let mut queue = Queue {
            gpu,
            id,
            main,
            ib,
            fences,
            channel,
            user,
            timeline: Timeline::new(),
            config,
            stats: Stats::default(),
        };
        queue.bind_semaphore_object().map_err(QueueError::Submit)?;
        Ok(queue)
    }

    /// The channel.
    pub fn channel(&self) -> ChannelId {
        self.id
    }

    /// What another channel waits for to pass `fence` ([`Submission::wait_for`]).
    pub fn fence_point(&self, fence: &Fence) -> FencePoint {
        FencePoint { address: self.fences.bus_address(), value: fence.seq() as u32 }
    }

    /// The last PFIFO error that named this queue's channel (recorded by the interrupt
    /// handler, cleared by [`reset`](Self::reset)).
    pub fn fault(&self) -> Option<crate::error::FifoError> {
        self.gpu.borrow().channel_fault(self.id)
    }

    /// Batches that waited for the pusher to read the IB ring (back-pressure on `IB_GET`).
    pub fn ib_waits(&self) -> u64 {
        self.channel.ib_waits()
    }

    /// The channel's reference counter (USER `REF`): the sequence of the last `REF_CNT` it
    /// executed.
    pub fn ref_count(&self) -> u32 {
        self.user.read::<REF>().raw()
    }

    /// `DMA_SEMAPHORE` = the channel's semaphore object, as its own batch.
    fn bind_semaphore_object(&mut self) -> Result<(), SubmitError> {
        self.submit(2, |s| s.writer.dma_semaphore(SEMAPHORE_DMA_HANDLE))
    }

    /// One batch of at most `units` words, all or nothing: room waited for (bounded), `build`
    /// writes, then the main words go out as IB entries with one `IB_PUT` write. A failed or
    /// overrunning `build`, or no room, leaves nothing behind.
    pub fn submit<T>(
        &mut self,
        units: usize,
        build: impl FnOnce(&mut Submission<'_, 'q, IO>) -> Result<T, PushbufferError>,
    ) -> Result<T, SubmitError> {
        let gpu = self.gpu.borrow();
        gpu.check_alive()?;
        let clock = gpu.clock();
        let timeout = self.config.submit_timeout;
        let ring = self.channel.writer().into_sink();
        ring.reserve_blocking(units, clock, timeout).map_err(SubmitError::NoRoom)?;
        let checkpoint = self.timeline.checkpoint();
        let mut allowance = Allowance::new(units);
        let mut s = Submission {
            writer: PushbufferWriter::new(
                Budget::with_allowance(ring, &mut allowance),
                PusherMode::Ib,
            ),
            timeline: &mut self.timeline,
            fence_address: self.fences.bus_address(),
        };
        let built = build(&mut s);
        let failure = match (built, allowance.overrun()) {
            (_, Some(overrun)) => SubmitError::Overrun(overrun),
            (Err(e), None) => SubmitError::Build(e),
            (Ok(value), None) => match self.channel.submit_blocking(clock, timeout) {
                Ok(n) => {
                    if n > 0 {
                        self.stats.submissions += 1;
                        self.stats.doorbells += 1;
                    }
                    return Ok(value);
                }
                Err(e) => SubmitError::Ib(e),
            },
        };
        self.channel.writer().into_sink().discard_uncommitted();
        self.timeline.rollback(checkpoint);
        self.stats.discarded += 1;
        Err(failure)
    }

    /// The channel recovered (disabled, unloaded, RAMFC rewritten, enabled: see
    /// [`Tesla::recover_channel`]), its rings emptied, the semaphore object bound again and a
    /// ring test run; then the fences of the lost work fail.
    pub fn reset(&mut self) -> Result<ResetReport, QueueError> {
        recovery::recover(self, |q| {
            q.gpu.borrow_mut().recover_channel(q.id)?;
            q.channel = IbChannel::new(q.main, q.ib, q.user.clone()).map_err(QueueError::Ring)?;
            q.bind_semaphore_object().map_err(QueueError::Submit)?;
            q.stats.resets += 1;
            Ok::<(), QueueError>(())
        })
        .map(|((), report)| {
            self.stats.failed_fences += report.lost.map_or(0, |l| l.count());
            report
        })
    }

    /// A value released through the channel and read back (bounded).
    fn test_ring(&mut self) -> Result<(), TestError<SubmitError>> {
        let address = BusAddress(self.fences.bus_address().0 + TEST_SEMAPHORE as u64);
        let _ = self.fences.write_u32(TEST_SEMAPHORE, 0);
        self.submit(5, |s| s.writer.semaphore_release(address, RING_TEST_VALUE))
            .map_err(TestError::Submit)?;
        let gpu = self.gpu.borrow();
        let fences = self.fences;
        let mut found = 0;
        poll_healthy(
            gpu.clock(),
            self.config.test_timeout,
            || {
                found = fences.read_u32(TEST_SEMAPHORE).unwrap_or(0);
                (found == RING_TEST_VALUE).then_some(())
            },
            || gpu.check_alive().err(),
        )
        .map_err(|e| match e {
            Unfinished::Unhealthy(gone) => TestError::DeviceGone(gone),
            Unfinished::TimedOut(waited) => {
                TestError::Mismatch { expected: RING_TEST_VALUE, found, waited }
            }
        })
    }
}

/// The channel's USER block in BAR0 (G80:GF100 areas, §2.8.3).
fn user_block<IO: RegisterIo + Clone, C: Clock>(
    gpu: &RefCell<Tesla<IO, C>>,
    id: ChannelId,
) -> Result<UserIo<IO>, QueueError> {
    let base = UserG80::base_of(usize::from(id.get()))
        .map_err(|_| QueueError::Channel(ChannelError::BadId { id: id.get() }))?;
    Ok(BlockIo::new(gpu.borrow().io().raw().clone(), base))
}

/// The IB ring's description for RAMFC.
fn ib_ring(ib: &DmaRegion) -> IbRing {
    IbRing { address: ib.bus_address().0, entries: (ib.size() as u64 / IbRing::ENTRY_BYTES) as u32 }
}

impl<IO: RegisterIo + Clone, C: Clock> Drop for Queue<'_, IO, C> {
    /// The channel destroyed (off the playlist, unloaded, its table entry cleared): nothing
    /// fetches from or releases semaphores into the queue's memory once it is gone. Best
    /// effort: a GPU that is gone or borrowed elsewhere is left as it is.
    fn drop(&mut self) {
        if let Ok(mut gpu) = self.gpu.try_borrow_mut() {
            let _ = gpu.destroy_channel(self.id);
        }
    }
}

impl<IO: RegisterIo + Clone, C: Clock> FenceSource for Queue<'_, IO, C> {
    fn read_completed(&self) -> u64 {
        match self.fences.read_u32(0) {
            Ok(raw) => self.timeline.extend32(raw),
            Err(_) => self.timeline.last_signalled(),
        }
    }

    /// `IB_GET` and `REF` move while the channel works.
    fn progress_marker(&self) -> u64 {
        u64::from(self.user.read::<IB_GET>().raw()) << 32 | u64::from(self.ref_count())
    }

    fn check_alive(&self) -> Result<(), DeviceGone> {
        self.gpu.borrow().check_alive()
    }
}

impl<IO: RegisterIo + Clone, C: Clock> Recovery for Queue<'_, IO, C> {
    type TestError = TestError<SubmitError>;

    fn check_alive(&self) -> Result<(), DeviceGone> {
        self.gpu.borrow().check_alive()
    }

    fn ring_test(&mut self) -> Result<(), Self::TestError> {
        self.test_ring()
    }

    fn timeline(&self) -> &Timeline {
        &self.timeline
    }

    fn read_completed(&self) -> u64 {
        FenceSource::read_completed(self)
    }
}

impl<'q, IO: RegisterIo + Clone, C: Clock> GpuQueue for Queue<'q, IO, C> {
    type Submission<'s>
        = Submission<'s, 'q, IO>
    where
        Self: 's;
    type BuildError = PushbufferError;
    type SubmitError = SubmitError;
    type ResetError = QueueError;

    const FENCE_UNITS: usize = FENCE_WORDS;

    fn submit<T>(
        &mut self,
        units: usize,
        build: impl FnOnce(&mut Submission<'_, 'q, IO>) -> Result<T, PushbufferError>,
    ) -> Result<T, SubmitError> {
        Queue::submit(self, units, build)
    }

    fn fence(submission: &mut Submission<'_, 'q, IO>) -> Result<Fence, PushbufferError> {
        submission.fence()
    }

    fn timeline(&self) -> &Timeline {
        &self.timeline
    }

    /// Reads the fence semaphore (memory), no register access.
    fn poll_completed(&self) -> u64 {
        self.timeline.observe(FenceSource::read_completed(self))
    }

    fn wait(&self, fence: &Fence, timeout: Duration) -> Result<(), FenceError> {
        let gpu = self.gpu.borrow();
        wait::wait(self, &self.timeline, gpu.clock(), fence, timeout)
    }

    /// `PFIFO.INTR_EN.NOTIFY` (and PFIFO's PMC line let through): every fence's
    /// `NOTIFY_INTR` interrupts while on.
    fn set_fence_interrupts(&mut self, enabled: bool) -> Result<(), QueueError> {
        let gpu = self.gpu.borrow();
        gpu.check_alive()?;
        gpu.set_notify_interrupts(enabled);
        if enabled {
            gpu.enable_interrupts()?;
        }
        Ok(())
    }

    fn handle_interrupts(&mut self) -> Result<u64, DeviceGone> {
        self.gpu.borrow_mut().handle_interrupts()?;
        Ok(self.poll_completed())
    }

    fn reset(&mut self) -> Result<ResetReport, QueueError> {
        Queue::reset(self)
    }

    fn check_alive(&self) -> Result<(), DeviceGone> {
        self.gpu.borrow().check_alive()
    }

    fn stats(&self) -> Stats {
        Stats { fences: self.timeline.last_emitted(), ..self.stats }
    }
}
