//! The running command processor: the [`R5xx`] handle, its counters and accessors. Each
//! concern is a child module that adds to it: [`bringup`] (init, ring programming, ring and IB
//! tests, shutdown), [`submit`] (batches on the ring), [`fences`] (sequence numbers and bounded
//! waits), [`interrupts`], [`recovery`] (§5.8 soft reset, full recovery). PIO ([`crate::pio`])
//! and CTM ([`crate::ctm`]) sit on top and reach the device only through methods.

pub(crate) mod bringup;
pub(crate) mod fences;
pub(crate) mod interrupts;
mod irq_test;
mod queue;
pub(crate) mod recovery;
pub(crate) mod submit;

use core::time::Duration;

use baregpu_firmware::amd::UploadReport;
use baregpu_gpu::Timeline;
use baregpu_hal::dma::{DmaAllocator, DmaBuffer};
use baregpu_hal::time::Clock;
use baregpu_hal::{FamilyIo, RegisterIo, RegisterIoExt};
use baregpu_regs::r5xx::Family;
use baregpu_regs::r5xx::cp::{CP_CSQ_CNTL, CP_CSQ_MODE, SCRATCH_ADDR};
use baregpu_ring::r5xx::R5xxRing;

use crate::config::RingConfig;
use crate::error::DeviceGone;
use crate::liveness;

use interrupts::Interrupts;

/// The ring type the driver owns: ring memory and the writeback page (RPTR dword at
/// [`WB_RPTR_OFFSET`](crate::WB_RPTR_OFFSET), scratch area at
/// [`WB_SCRATCH_OFFSET`](crate::WB_SCRATCH_OFFSET)), both given back to their allocator when
/// the ring is dropped.
pub type Ring<'d, A> = R5xxRing<DmaBuffer<'d, A>, DmaBuffer<'d, A>>;

/// Counters for tests, benchmarks and logs: the shared [`baregpu_gpu::Stats`] (`submissions`
/// counts batches that carried packets, `doorbells` the `CP_RB_WPTR` writes (the §5.8 pointer
/// resets are not counted), `padding_units` the type-2 dwords, `direct_units` the dwords
/// written through the PIO aperture, `resets`/`recoveries` the successful ones).
pub use baregpu_gpu::Stats;

/// The register BAR as the driver holds it: bound to the R5xx family, so a register of
/// another family (Evergreen's `CP_RB_CNTL`) does not compile against it.
///
/// ```
/// # use baregpu_radeon_r5xx::{Bar, hal::{RegisterIo, RegisterIoExt}, regs};
/// fn reset_ring_control(bar: &Bar<impl RegisterIo>) {
///     bar.write(regs::cp::CP_RB_CNTL::RESET);
/// }
/// ```
///
/// ```compile_fail,E0277
/// # use baregpu_radeon_r5xx::{Bar, hal::{RegisterIo, RegisterIoExt}};
/// fn reset_ring_control(bar: &Bar<impl RegisterIo>) {
///     bar.write(baregpu_regs::evergreen::cp::CP_RB_CNTL::RESET);
/// }
/// ```
pub type Bar<IO> = FamilyIo<Family, IO>;

/// A running R5xx command processor.
///
/// `IO` is the register BAR (real MMIO, an in-process model, the QEMU mailbox), `C` the clock
/// that bounds every wait, `A` the allocator the ring and writeback memory came from (borrowed
/// for `'d`). Dropping the driver stops the CP's streams (§5.8 step 1) and then gives the
/// memory back, so the CP never fetches freed memory.
pub struct R5xx<'d, IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> {
    /// The BAR, bound to R5xx: another family's register does not compile against it.
    io: Bar<IO>,
    clock: C,
    dma: &'d A,
    config: RingConfig,
    ring: Ring<'d, A>,
    /// `SCRATCH_ADDR` for the writeback page's scratch area (checked at `init`).
    scratch_addr: SCRATCH_ADDR,
    timeline: Timeline,
    interrupts: Interrupts,
    upload: UploadReport,
    stats: Stats,
}

/// What the PIO path borrows from the driver while a session writes to the aperture: the
/// registers and clock shared, the fence sequence and the PIO counter exclusively.
pub(crate) struct PioParts<'g, IO, C> {
    pub(crate) io: &'g Bar<IO>,
    pub(crate) clock: &'g C,
    pub(crate) timeout: Duration,
    pub(crate) timeline: &'g mut Timeline,
    pub(crate) pio_dwords: &'g mut u64,
}

impl<IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> core::fmt::Debug for R5xx<'_, IO, C, A> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("R5xx")
            .field("config", &self.config)
            .field("ring", &self.ring)
            .field("timeline", &self.timeline)
            .field("interrupts", &self.interrupts)
            .field("upload", &self.upload)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl<'d, IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> R5xx<'d, IO, C, A> {
    /// The register BAR, bound to the R5xx family (its typed accesses take only R5xx
    /// registers; [`FamilyIo::raw`] is the untyped window underneath).
    pub fn io(&self) -> &Bar<IO> {
        &self.io
    }

    /// The clock.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// The allocator the driver's memory comes from (and goes back to).
    pub fn dma(&self) -> &'d A {
        self.dma
    }

    /// The configuration in use.
    pub fn config(&self) -> &RingConfig {
        &self.config
    }

    /// The ring (head, committed write pointer, cached read pointer, memory), for inspection.
    pub fn ring(&self) -> &Ring<'d, A> {
        &self.ring
    }

    /// What the microcode upload did (1 + 2 × 256 load writes for R520).
    pub fn upload_report(&self) -> UploadReport {
        self.upload
    }

    /// Counters.
    pub fn stats(&self) -> Stats {
        Stats { doorbells: self.ring.commits(), fences: self.timeline.last_emitted(), ..self.stats }
    }

    /// Whether the device reads all-ones (one read of `CP_RB_RPTR`, whose bits 31:23 are not
    /// implemented, §11.1).
    pub fn device_gone(&self) -> bool {
        liveness::reads_all_ones(&self.io)
    }

    fn check_alive(&self) -> Result<(), DeviceGone> {
        liveness::check_alive(&self.io)
    }

    /// The split borrow a PIO session writes through (see [`PioParts`]).
    pub(crate) fn pio_parts(&mut self) -> PioParts<'_, IO, C> {
        PioParts {
            io: &self.io,
            clock: &self.clock,
            timeout: self.config.submit_timeout,
            timeline: &mut self.timeline,
            pio_dwords: &mut self.stats.direct_units,
        }
    }

    /// §5.8 step 1: both streams off, so the CP fetches nothing more from the ring or the
    /// indirect buffers.
    fn stop_streams(&self) {
        self.io.write(CP_CSQ_CNTL::RESET);
        self.io.write(CP_CSQ_MODE::RESET);
    }
}

impl<IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> Drop for R5xx<'_, IO, C, A> {
    fn drop(&mut self) {
        // Before the ring and writeback buffers (fields) are given back.
        self.stop_streams();
    }
}
