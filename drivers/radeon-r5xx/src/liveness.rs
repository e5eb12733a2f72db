//! Liveness: the one all-ones check of this family (the health-checked poll loop that runs it
//! is the shared [`baregpu_gpu::liveness::poll_healthy`]).

use baregpu_hal::{RegisterIo, RegisterIoExt};

use crate::Bar;
use baregpu_regs::r5xx::cp::CP_RB_RPTR;

use crate::error::DeviceGone;

/// Whether the device reads all-ones: one read of `CP_RB_RPTR`, whose bits 31:23 are not
/// implemented (§11.1), so a live CP never returns 0xFFFF_FFFF there.
pub(crate) fn reads_all_ones(io: &Bar<impl RegisterIo>) -> bool {
    io.read::<CP_RB_RPTR>().raw() == u32::MAX
}

/// [`DeviceGone`] if the device reads all-ones ([`reads_all_ones`]).
pub(crate) fn check_alive(io: &Bar<impl RegisterIo>) -> Result<(), DeviceGone> {
    if reads_all_ones(io) { Err(DeviceGone) } else { Ok(()) }
}
