//! Typed QPU faults: what hardware would not do (an encoding §3 reserves, a §3 restriction
//! broken at run time, a bus fault), what the model does not emulate, and the instruction
//! budget. [`QpuFaultKind::code`] gives the stable number the model reports in the device's
//! error state (`gpu_device_model::cp_error`: model ranges above `MODEL_BASE`).

use core::fmt;

/// What went wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum QpuFaultKind {
    /// A field holds a value §3 reserves (op_add 9-11/25-29, cond_br 12-14, load immediate
    /// modes 2/5-7, mul pack 1-2/8-15 with pm set, small immediate read of regfile B, ...).
    ReservedEncoding {
        /// Field name as in §3.
        field: &'static str,
        /// Its value.
        value: u8,
    },
    /// A §3 "Summary of Instruction Restrictions" rule (or another documented rule) broken at
    /// run time: the hardware result is undefined, so the model stops.
    Restriction(&'static str),
    /// A documented feature the model does not emulate.
    Unsupported(&'static str),
    /// A code, uniform, TMU or VPM DMA access faulted on the bus (or hit address 0).
    Bus {
        /// The bus address.
        address: u32,
        /// A write (VDW store) rather than a read.
        write: bool,
    },
    /// The program ran more than its instruction limit without ending.
    BudgetExhausted {
        /// The limit.
        limit: u64,
    },
}

impl QpuFaultKind {
    /// A stable nonzero code for the device's error state: 0x3D01 reserved encoding, 0x3D02
    /// restriction, 0x3D03 unsupported, 0x3D04 bus read, 0x3D05 bus write, 0x3D06 budget.
    pub fn code(&self) -> u32 {
        match self {
            QpuFaultKind::ReservedEncoding { .. } => 0x3D01,
            QpuFaultKind::Restriction(_) => 0x3D02,
            QpuFaultKind::Unsupported(_) => 0x3D03,
            QpuFaultKind::Bus { write: false, .. } => 0x3D04,
            QpuFaultKind::Bus { write: true, .. } => 0x3D05,
            QpuFaultKind::BudgetExhausted { .. } => 0x3D06,
        }
    }

    /// A short static description (the renderer's `ShaderFault::reason`).
    pub fn reason(&self) -> &'static str {
        match self {
            QpuFaultKind::ReservedEncoding { field, .. } => field,
            QpuFaultKind::Restriction(r) | QpuFaultKind::Unsupported(r) => r,
            QpuFaultKind::Bus { write: false, .. } => "bus fault on a QPU read",
            QpuFaultKind::Bus { write: true, .. } => "bus fault on a VPM DMA store",
            QpuFaultKind::BudgetExhausted { .. } => "instruction budget of the program exhausted",
        }
    }
}

/// A QPU fault and where it happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QpuFault {
    /// What went wrong.
    pub kind: QpuFaultKind,
    /// The QPU (0-11).
    pub qpu: u8,
    /// Bus address of the instruction.
    pub pc: u32,
}

impl QpuFault {
    /// The stable error code ([`QpuFaultKind::code`]).
    pub fn code(&self) -> u32 {
        self.kind.code()
    }
}

impl fmt::Display for QpuFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "QPU {} fault {:#06x} at {:#010x}: ", self.qpu, self.code(), self.pc)?;
        match self.kind {
            QpuFaultKind::ReservedEncoding { field, value } => {
                write!(f, "reserved {field} value {value}")
            }
            QpuFaultKind::Restriction(r) => write!(f, "{r}"),
            QpuFaultKind::Unsupported(r) => write!(f, "not emulated: {r}"),
            QpuFaultKind::Bus { address, write } => {
                write!(f, "bus fault on {} {address:#010x}", if write { "store" } else { "load" })
            }
            QpuFaultKind::BudgetExhausted { limit } => {
                write!(f, "no thread end within {limit} instructions")
            }
        }
    }
}

impl std::error::Error for QpuFault {}
