//! Liveness: the one all-ones check of this family (the health-checked poll loop is the
//! shared [`baregpu_gpu::liveness::poll_healthy`]).

use baregpu_hal::{RegisterIo, RegisterIoExt};
use baregpu_regs::evergreen::grbm::GRBM_STATUS;

use crate::Bar;
use crate::error::DeviceGone;

/// `Err(DeviceGone)` if the device reads all-ones (`GRBM_STATUS` has reserved bits a live chip
/// never sets; Linux radeon evergreend.h).
pub(crate) fn check_alive(io: &Bar<impl RegisterIo>) -> Result<(), DeviceGone> {
    if io.read::<GRBM_STATUS>().raw() == u32::MAX { Err(DeviceGone) } else { Ok(()) }
}
