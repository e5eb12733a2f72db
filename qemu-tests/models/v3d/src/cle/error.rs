//! Why the control-list executor stopped: a code from the framework's shared vocabulary
//! ([`gpu_device_model::cp_error`]) or one of the executor's own ([`code`]), and what it saw.

use core::fmt;

use gpu_device_model::{DmaFault, cp_error};

/// The executor's own error codes (the shared ones are `gpu_device_model::cp_error`'s). They sit
/// in the `0x4xx` range above [`cp_error::MODEL_BASE`], apart from the QPUs' codes.
pub mod code {
    /// An Increment Semaphore record found the other thread's 3-bit counting semaphore
    /// (CTnCS.CTSEMA, §10 Table 49) already at 7.
    pub const SEMAPHORE_OVERFLOW: u32 = 0x400;
    /// A fragment shader the renderer started faulted on the QPUs
    /// ([`crate::shading::ShadingStep::Fault`]).
    pub const FRAGMENT_SHADER_FAULT: u32 = 0x401;
}

/// A control-list error: the device enters its error state with [`code`](Self::code) and the
/// thread that met it stops with CTnCS.CTERR set.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CleError {
    /// The mailbox error code (`cp_error::*` or [`code`]).
    pub code: u32,
    /// What was wrong, for logs and test failures.
    pub reason: String,
}

impl CleError {
    pub(crate) fn new(code: u32, reason: impl Into<String>) -> Self {
        CleError { code, reason: reason.into() }
    }

    /// A record the executor cannot parse: a reserved value, a record in the wrong list, a
    /// record out of sequence or across the end address.
    pub(crate) fn invalid(reason: impl Into<String>) -> Self {
        Self::new(cp_error::INVALID_PACKET, reason)
    }

    /// A documented record or mode the model does not emulate.
    pub(crate) fn unsupported(reason: impl Into<String>) -> Self {
        Self::new(cp_error::UNSUPPORTED_PACKET, reason)
    }

    /// A configuration value outside what the document allows.
    pub(crate) fn config(reason: impl Into<String>) -> Self {
        Self::new(cp_error::BAD_CONFIGURATION, reason)
    }

    /// A read from memory that faulted, or from the unprogrammed address 0.
    pub(crate) fn fetch(what: &str, fault: Option<DmaFault>, address: u64) -> Self {
        Self::new(cp_error::DMA_FETCH_FAULT, dma_reason(what, fault, address))
    }

    /// A write to memory that faulted, or to the unprogrammed address 0.
    pub(crate) fn store(what: &str, fault: Option<DmaFault>, address: u64) -> Self {
        Self::new(cp_error::DMA_WRITE_FAULT, dma_reason(what, fault, address))
    }
}

fn dma_reason(what: &str, fault: Option<DmaFault>, address: u64) -> String {
    match fault {
        Some(f) => format!("{what}: {f}"),
        None => format!("{what} at the unprogrammed address {address:#x}"),
    }
}

impl fmt::Display for CleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self.code {
            code::SEMAPHORE_OVERFLOW => Some("semaphore overflow"),
            code::FRAGMENT_SHADER_FAULT => Some("fragment shader fault"),
            c => cp_error::name(c),
        };
        write!(f, "{} ({:#x}): {}", name.unwrap_or("error"), self.code, self.reason)
    }
}

impl std::error::Error for CleError {}

/// Read `buf.len()` bytes at `address`, refusing address 0 (never programmed).
pub(crate) fn read(
    dev: &mut gpu_device_model::DeviceContext<'_>,
    what: &str,
    address: u64,
    buf: &mut [u8],
) -> Result<(), CleError> {
    if address == 0 {
        return Err(CleError::fetch(what, None, address));
    }
    dev.dma_read(address, buf).map_err(|f| CleError::fetch(what, Some(f), address))
}

/// Write `data` at `address`, refusing address 0 (never programmed).
pub(crate) fn write(
    dev: &mut gpu_device_model::DeviceContext<'_>,
    what: &str,
    address: u64,
    data: &[u8],
) -> Result<(), CleError> {
    if address == 0 {
        return Err(CleError::store(what, None, address));
    }
    dev.dma_write(address, data).map_err(|f| CleError::store(what, Some(f), address))
}
