//! QPU user programs (broadcom-videocore-iv-3d §10, QPU scheduler registers, Tables 65-68):
//! what one request to the user program queue carries.

use baregpu_hal::dma::BusAddress;
use baregpu_regs::vc4::v3d::{V3D_SRQPC, V3D_SRQUA, V3D_SRQUL};

use crate::error::BuildError;

/// Requests the user program queue holds (Table 65: "The FIFO is 16 requests deep").
pub const SRQ_DEPTH: u32 = 16;

/// One user program request: code and uniforms in memory the caller owns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct UserProgram {
    /// Bus address of the first instruction (`V3D_SRQPC`).
    pub code: BusAddress,
    /// Bus address of the uniforms stream (`V3D_SRQUA`; zero disables it).
    pub uniforms: BusAddress,
    /// Uniforms the program may read (`V3D_SRQUL`; 0 disables the stream, above 1023
    /// unlimited, Table 67).
    pub uniforms_len: u16,
}

/// A request as the three registers take it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Request {
    pub(crate) code: V3D_SRQPC,
    pub(crate) uniforms: V3D_SRQUA,
    pub(crate) length: V3D_SRQUL,
}

impl UserProgram {
    /// The register values, or [`BuildError::BadProgram`] when an address does not fit or
    /// the length is wider than `QPURQUL`.
    pub(crate) fn request(&self) -> Result<Request, BuildError> {
        let code =
            V3D_SRQPC::RESET.try_with_qpurqpc(self.code).map_err(|_| BuildError::BadProgram)?;
        let uniforms =
            V3D_SRQUA::RESET.try_with_qpurqua(self.uniforms).map_err(|_| BuildError::BadProgram)?;
        if u32::from(self.uniforms_len) >= 1 << V3D_SRQUL::QPURQUL.width {
            return Err(BuildError::BadProgram);
        }
        let length = V3D_SRQUL::RESET.with_qpurqul(self.uniforms_len);
        Ok(Request { code, uniforms, length })
    }
}
