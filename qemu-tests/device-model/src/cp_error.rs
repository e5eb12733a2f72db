//! The command-processor error vocabulary every model reports in the mailbox header
//! (`DeviceContext::fail`): one number, one meaning, whatever the family, so a harness or a
//! test reads a code the same way for every GPU. A model uses the codes that apply to its
//! command processor and documents which of its checks give each one; codes a family has no
//! use for are simply never reported. Model-specific engines (a shader core, the CTM units)
//! use their own ranges above [`MODEL_BASE`].

/// A packet the command processor cannot parse: a reserved packet type, a body count that
/// does not fit the packet's layout, a reserved field value, a packet running past the end of
/// an indirect buffer.
pub const INVALID_PACKET: u32 = 1;
/// A command or data fetch outside guest memory, with bus mastering off, or from an
/// unprogrammed address 0 (also the injected `dma-fault`).
pub const DMA_FETCH_FAULT: u32 = 2;
/// A write-back or packet write outside guest memory, with bus mastering off, or to an
/// unprogrammed address 0.
pub const DMA_WRITE_FAULT: u32 = 3;
/// Indirect buffers nested deeper than the hardware allows, or started from the wrong level.
pub const IB_NESTING: u32 = 4;
/// A type-3 opcode the chip does not have.
pub const UNKNOWN_OPCODE: u32 = 5;
/// A documented packet or mode the model does not emulate.
pub const UNSUPPORTED_PACKET: u32 = 6;
/// A register write from a packet outside the packet's register range.
pub const REG_RANGE: u32 = 7;
/// A packet before the micro-engine's initialisation packet.
pub const ME_NOT_INITIALIZED: u32 = 8;
/// Microcode written while its engine runs (or while a command stream is enabled).
pub const UCODE_WRITE_WHILE_RUNNING: u32 = 9;
/// A command-processor soft reset while the engines run.
pub const RESET_WHILE_RUNNING: u32 = 10;
/// A compute packet without the compute bit or shader enable.
pub const NOT_COMPUTE: u32 = 11;
/// An indirect-buffer start that is not the last register write of its packet.
pub const IB_SEQUENCE: u32 = 12;
/// A programmed-I/O write to a full command queue.
pub const PIO_OVERFLOW: u32 = 13;
/// An indirect buffer started while its command stream is off.
pub const STREAM_DISABLED: u32 = 14;
/// A register the engine uses holds a reserved or out-of-range value (a ring size outside
/// the documented range, a reserved delivery mode): the engine refuses it instead of guessing.
pub const BAD_CONFIGURATION: u32 = 15;
/// A microcode word written past the end of its RAM.
pub const UCODE_OVERFLOW: u32 = 16;

/// First code of the model-specific ranges (shader cores, compute units).
pub const MODEL_BASE: u32 = 0x100;

/// The short name of a shared code, for logs and test failures.
pub const fn name(code: u32) -> Option<&'static str> {
    Some(match code {
        INVALID_PACKET => "invalid packet",
        DMA_FETCH_FAULT => "DMA fetch fault",
        DMA_WRITE_FAULT => "DMA write fault",
        IB_NESTING => "indirect buffer nesting",
        UNKNOWN_OPCODE => "unknown opcode",
        UNSUPPORTED_PACKET => "unsupported packet",
        REG_RANGE => "register outside the packet's range",
        ME_NOT_INITIALIZED => "packet before initialisation",
        UCODE_WRITE_WHILE_RUNNING => "microcode written while running",
        RESET_WHILE_RUNNING => "soft reset while running",
        NOT_COMPUTE => "not a compute packet",
        IB_SEQUENCE => "indirect-buffer start out of sequence",
        PIO_OVERFLOW => "PIO queue overflow",
        STREAM_DISABLED => "command stream disabled",
        BAD_CONFIGURATION => "reserved or out-of-range configuration",
        UCODE_OVERFLOW => "microcode past the end of its RAM",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_shared_code_has_one_name_and_stays_below_the_model_ranges() {
        let names: Vec<_> = (0..super::MODEL_BASE).filter_map(super::name).collect();
        assert_eq!(names.len(), 16);
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len());
        assert_eq!(super::name(0), None);
    }
}
