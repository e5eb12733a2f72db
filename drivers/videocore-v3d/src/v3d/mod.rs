//! The running V3D: the [`V3d`] handle, its counters and accessors. Each concern is a child
//! module, in the layout of the R5xx and Evergreen drivers: [`bringup`] (init, caches, VPM
//! reservation), [`submit`] (batches of render jobs, user programs and fences, and the
//! register writes that start them), [`fences`] (completion counters, the fence table,
//! OUTOMEM refills, bounded waits), [`interrupts`] (opt-in pipeline and QPU interrupts),
//! [`recovery`] (reset), `queue` (`GpuQueue`).

pub(crate) mod bringup;
pub(crate) mod fences;
pub(crate) mod interrupts;
mod queue;
pub(crate) mod recovery;
pub(crate) mod submit;

use core::cell::Cell;
use core::time::Duration;

use baregpu_gpu::{Stats, Timeline};
use baregpu_hal::time::Clock;
use baregpu_hal::{RegisterIo, RegisterIoExt};
use baregpu_regs::vc4::v3d::V3D_IDENT0;

use crate::Bar;
use crate::error::DeviceGone;
use crate::identity::Identity;
use crate::pool::OverflowPool;

use fences::{Counters, FenceTable};
use submit::Staged;

/// Timeouts of the driver's own waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct V3dConfig {
    /// How long a submission waits for the previous render job, for room in the user program
    /// queue or in the fence table before it fails.
    pub submit_timeout: Duration,
    /// How long a reset or a VPM reservation waits for the engine to stop.
    pub idle_timeout: Duration,
}

impl Default for V3dConfig {
    fn default() -> Self {
        V3dConfig {
            submit_timeout: Duration::from_millis(500),
            idle_timeout: Duration::from_millis(100),
        }
    }
}

/// A VideoCore IV V3D, probed and brought up.
///
/// `IO` is the V3D register window, `C` the clock bounding every wait, `'p` the lifetime of
/// the caller's overflow pool. The handle keeps no DMA memory of its own: control lists,
/// tile memory, shaders and user programs live in buffers the caller owns and keeps until
/// their fence signalled.
pub struct V3d<'p, IO: RegisterIo, C: Clock> {
    io: Bar<IO>,
    clock: C,
    identity: Identity,
    config: V3dConfig,
    pool: Option<OverflowPool<'p>>,
    /// Set when the binner asked for memory and the pool had none left (cleared by the next
    /// job or a reset).
    pool_exhausted: Cell<bool>,
    timeline: Timeline,
    counters: Counters,
    fences: FenceTable,
    staged: Staged,
    interrupts: bool,
    stats: Stats,
}

impl<'p, IO: RegisterIo, C: Clock> V3d<'p, IO, C> {
    /// What the V3D said it is at bring-up.
    pub fn identity(&self) -> &Identity {
        &self.identity
    }

    /// The register window, bound to the VideoCore IV family (for tests and tools; the
    /// driver owns the control list, scheduler and interrupt registers).
    pub fn io(&self) -> &Bar<IO> {
        &self.io
    }

    /// The clock.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// The configuration.
    pub fn config(&self) -> &V3dConfig {
        &self.config
    }

    /// The overflow pool, if one was given.
    pub fn overflow_pool(&self) -> Option<&OverflowPool<'p>> {
        self.pool.as_ref()
    }

    /// Counters: submissions, doorbells (`V3D_CTnEA` and `V3D_SRQPC` writes), fences, resets.
    pub fn stats(&self) -> Stats {
        Stats { fences: self.timeline.last_emitted(), ..self.stats }
    }

    /// `Err(DeviceGone)` if the device reads all-ones (`V3D_IDENT0` is a constant that is
    /// never all-ones, Table 79).
    pub fn check_alive(&self) -> Result<(), DeviceGone> {
        check_alive(&self.io)
    }
}

/// `Err(DeviceGone)` if `V3D_IDENT0` reads all-ones.
pub(crate) fn check_alive(io: &Bar<impl RegisterIo>) -> Result<(), DeviceGone> {
    if io.read::<V3D_IDENT0>().raw() == u32::MAX { Err(DeviceGone) } else { Ok(()) }
}

impl<IO: RegisterIo, C: Clock> Drop for V3d<'_, IO, C> {
    /// Both control list threads reset and interrupts disabled: no list the caller's buffers
    /// hold runs on after the driver is gone. (A user program already on a QPU runs to its
    /// end: the document describes no way to stop it.)
    fn drop(&mut self) {
        self.quiesce();
        self.disable_interrupts();
    }
}
