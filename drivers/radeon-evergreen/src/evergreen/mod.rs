//! The running GPU: the [`Evergreen`] handle, its counters and accessors. Each concern is a
//! child module that adds to it, in the layout of the R5xx driver: [`bringup`] (init,
//! microcode, CP programming, ring and IB tests, shutdown), [`submit`] (batches on the ring,
//! the packet methods of [`Submission`]), [`fences`] (the 64-bit timeline, bounded waits),
//! [`interrupts`] (opt-in IH ring), [`recovery`] (soft reset, full recovery). Compute
//! ([`crate::compute`]) and GPU-side synchronisation ([`crate::sync`]) sit on top and reach the
//! device only through [`Submission`] and methods.

pub(crate) mod bringup;
pub(crate) mod fences;
pub(crate) mod interrupts;
mod queue;
pub(crate) mod recovery;
pub(crate) mod submit;

use baregpu_firmware::amd::evergreen::UploadReport;
use baregpu_gpu::Timeline;
use baregpu_hal::dma::{BusAddress, DmaAllocator, DmaBuffer, DmaRegion};
use baregpu_hal::time::Clock;
use baregpu_hal::{FamilyIo, RegisterIo, RegisterIoExt};
use baregpu_regs::evergreen::cp::CP_ME_CNTL;
use baregpu_regs::evergreen::{Chipset, Family};
use baregpu_ring::evergreen::EvergreenRing;

use crate::config::RingConfig;
use crate::error::DeviceGone;
use crate::irq::IhRing;
use crate::liveness;

/// Counters for tests and benchmarks: the shared [`baregpu_gpu::Stats`] (`resets` counts
/// every `GRBM_SOFT_RESET`, bring-up's included; `firmware_uploads` every PFP/ME/RLC upload).
pub use baregpu_gpu::Stats;

/// The command ring the driver owns: ring memory and the write-back page (read pointer at
/// [`WB_RPTR_OFFSET`](crate::WB_RPTR_OFFSET), fence at [`WB_FENCE_OFFSET`](crate::WB_FENCE_OFFSET),
/// IH write pointer at [`WB_IH_WPTR_OFFSET`](crate::WB_IH_WPTR_OFFSET)), both given back to
/// their allocator when the ring is dropped.
pub type Ring<'d, A> = EvergreenRing<DmaBuffer<'d, A>, DmaBuffer<'d, A>>;

/// The register BAR as the driver holds it: bound to the Evergreen family, so a register of
/// another family (R5xx's `CP_RB_CNTL`) does not compile against it.
///
/// ```
/// # use baregpu_radeon_evergreen::{Bar, hal::{RegisterIo, RegisterIoExt}, regs};
/// fn ring_control(bar: &Bar<impl RegisterIo>) -> regs::cp::CP_RB_CNTL {
///     bar.read::<regs::cp::CP_RB_CNTL>()
/// }
/// ```
///
/// ```compile_fail,E0277
/// # use baregpu_radeon_evergreen::{Bar, hal::{RegisterIo, RegisterIoExt}};
/// fn ring_control(bar: &Bar<impl RegisterIo>) -> baregpu_regs::r5xx::cp::CP_RB_CNTL {
///     bar.read::<baregpu_regs::r5xx::cp::CP_RB_CNTL>()
/// }
/// ```
pub type Bar<IO> = FamilyIo<Family, IO>;

/// A Radeon Evergreen (Cypress) or Cayman, brought up and running its ring.
///
/// `IO` is the register BAR, `C` the clock that bounds every wait, `A` the allocator the ring,
/// write-back page and interrupt ring came from (borrowed for `'d`). Dropping the driver (or
/// [`shutdown`](Self::shutdown)) stops the CP and the interrupt ring first and then gives the
/// memory back, so the GPU never reads or writes freed memory.
pub struct Evergreen<'d, IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> {
    /// The BAR, bound to Evergreen: another family's register does not compile against it.
    io: Bar<IO>,
    clock: C,
    dma: &'d A,
    chip: Chipset,
    config: RingConfig,
    ring: Ring<'d, A>,
    ih: IhRing<'d, A>,
    timeline: Timeline,
    upload: UploadReport,
    stats: Stats,
}

impl<'d, IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> Evergreen<'d, IO, C, A> {
    /// The allocator the driver's memory comes from (and goes back to).
    pub fn dma(&self) -> &'d A {
        self.dma
    }

    /// The chipset.
    pub fn chip(&self) -> Chipset {
        self.chip
    }

    /// The register BAR, bound to the Evergreen family (for tests and tools; the driver owns
    /// the CP registers). [`FamilyIo::raw`] is the untyped window underneath.
    pub fn io(&self) -> &Bar<IO> {
        &self.io
    }

    /// The clock.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// The configuration.
    pub fn config(&self) -> &RingConfig {
        &self.config
    }

    /// The command ring (pointers, counters, memory).
    pub fn ring(&self) -> &Ring<'d, A> {
        &self.ring
    }

    /// The last firmware upload's counts.
    pub fn upload_report(&self) -> UploadReport {
        self.upload
    }

    /// Counters.
    pub fn stats(&self) -> Stats {
        Stats { fences: self.timeline.last_emitted(), ..self.stats }
    }

    /// `Err(DeviceGone)` if the device reads all-ones (`GRBM_STATUS` has reserved bits a live
    /// chip never sets; Linux radeon evergreend.h).
    pub fn check_alive(&self) -> Result<(), DeviceGone> {
        liveness::check_alive(&self.io)
    }

    /// The write-back page (read pointer, fence, IH write pointer).
    pub(crate) fn writeback(&self) -> &DmaRegion {
        self.ring.writeback().0
    }

    /// Bus address of `offset` in the write-back page.
    pub(crate) fn wb_address(&self, offset: usize) -> BusAddress {
        BusAddress(self.writeback().bus_address().0 + offset as u64)
    }

    /// What the driver does before its memory goes back: the IH ring off (no more vectors or
    /// write-pointer write-backs, Linux radeon r600.c `r600_disable_interrupts`), then the ME
    /// and PFP halted (no more ring or IB fetches, read-pointer or fence write-backs; Linux
    /// radeon evergreen.c `evergreen_cp_stop` via `r700_cp_stop`).
    fn stop(&mut self) {
        self.disable_interrupts();
        self.halt_cp();
    }

    /// `CP_ME_CNTL`: ME and PFP halted (Linux radeon `r700_cp_stop`).
    fn halt_cp(&self) {
        self.io.write(CP_ME_CNTL::RESET.with_me_halt(true).with_pfp_halt(true));
    }
}

impl<IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> Drop for Evergreen<'_, IO, C, A> {
    fn drop(&mut self) {
        // Before the ring, write-back and interrupt-ring buffers (fields) are given back.
        self.stop();
    }
}
