//! The register-access mailbox: how the test kernel reaches an emulated GPU that runs as a host
//! process beside QEMU.
//!
//! Transport (measured in `qemu-tests/README.md`): QEMU's `ivshmem-doorbell` PCI device
//! (1af4:1110) connects to the device-model process, which acts as the ivshmem server and as
//! peer [`MODEL_PEER`]. Its BAR2 is a shared memory the model also maps; the mailbox below lives
//! at its start. Guest RAM is a shared file the model maps too, so model DMA reaches real
//! guest-physical addresses.
//!
//! One request at a time (the kernel serialises with interrupts off):
//!
//! 1. the guest writes [`request::OP`], [`request::BAR`], [`request::ADDRESS`],
//!    [`request::VALUE`], then (after a release fence) [`request::SEQ`] = previous + 1;
//! 2. the guest writes `(MODEL_PEER << 16) | VECTOR_REQUEST` to the ivshmem DOORBELL register
//!    ([`IVSHMEM_DOORBELL`] in BAR0);
//! 3. the model performs the access with all its side effects, writes [`completion::STATUS`] and
//!    [`completion::VALUE`], then [`completion::SEQ`] = the request's sequence number;
//! 4. the guest polls [`completion::SEQ`] (bounded), reads the result.
//!
//! Device interrupts: the model sets bits in [`IRQ_STATUS`] and signals MSI-X vector
//! [`VECTOR_IRQ`]; the guest's handler calls the driver, which acknowledges in the device's own
//! registers (through the mailbox) and then clears the line with [`Op::IrqAck`].
//!
//! All fields are little-endian `u32` at the byte offsets given here.
#![no_std]
#![forbid(unsafe_code)]

/// ivshmem-doorbell PCI vendor ID (Red Hat, Inc.).
pub const IVSHMEM_VENDOR: u16 = 0x1AF4;
/// ivshmem-doorbell PCI device ID.
pub const IVSHMEM_DEVICE: u16 = 0x1110;
/// BAR0 offset of the ivshmem IVPOSITION register (the guest's own peer ID).
pub const IVSHMEM_IVPOSITION: usize = 0x08;
/// BAR0 offset of the ivshmem DOORBELL register: write `(peer << 16) | vector`.
pub const IVSHMEM_DOORBELL: usize = 0x0C;
/// The model's ivshmem peer ID; QEMU gets the next ones.
pub const MODEL_PEER: u32 = 0;
/// Doorbell vector the guest rings to post a request.
pub const VECTOR_REQUEST: u32 = 0;
/// Guest MSI-X vector the model signals for device interrupts.
pub const VECTOR_IRQ: u32 = 1;
/// ivshmem vectors configured on both sides.
pub const VECTORS: u32 = 2;
/// Size of the shared memory (ivshmem requires a power of two).
pub const SHMEM_SIZE: usize = 1 << 20;

/// [`header::MAGIC`] value, written by the model once it serves requests ("GPMB").
pub const MAGIC: u32 = 0x424D_5047;
/// Protocol version.
pub const VERSION: u32 = 1;

/// Written by the model at start-up.
pub mod header {
    /// [`crate::MAGIC`] once the model is ready.
    pub const MAGIC: usize = 0x00;
    /// [`crate::VERSION`].
    pub const VERSION: usize = 0x04;
    /// [`crate::ModelState`] as u32.
    pub const STATE: usize = 0x08;
    /// Model-defined error code when `STATE` is `Error` (0 otherwise).
    pub const ERROR: usize = 0x0C;
    /// Requests served so far (for the harness's performance report).
    pub const SERVED: usize = 0x10;
}

/// Written by the guest; `SEQ` last.
pub mod request {
    /// [`crate::Op`] as u32.
    pub const OP: usize = 0x40;
    /// BAR index for MMIO operations.
    pub const BAR: usize = 0x44;
    /// Byte offset in the BAR, or in configuration space.
    pub const ADDRESS: usize = 0x48;
    /// Value to write.
    pub const VALUE: usize = 0x4C;
    /// Sequence number; writing it publishes the request.
    pub const SEQ: usize = 0x50;
}

/// Written by the model; `SEQ` last.
pub mod completion {
    /// [`crate::Status`] as u32.
    pub const STATUS: usize = 0x80;
    /// Value read (all-ones when `STATUS` is not `Ok`).
    pub const VALUE: usize = 0x84;
    /// Sequence number of the request this completes.
    pub const SEQ: usize = 0x88;
}

/// Device interrupt lines asserted by the model (bit mask), cleared by [`Op::IrqAck`].
pub const IRQ_STATUS: usize = 0xC0;

/// Request operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum Op {
    /// Read a 32-bit register: `BAR`, `ADDRESS`.
    MmioRead = 1,
    /// Write a 32-bit register: `BAR`, `ADDRESS`, `VALUE`.
    MmioWrite = 2,
    /// Read a configuration dword at `ADDRESS`.
    ConfigRead = 3,
    /// Write a configuration dword at `ADDRESS`.
    ConfigWrite = 4,
    /// Function-level reset of the device model.
    Reset = 5,
    /// Clear the `IRQ_STATUS` bits set in `VALUE`.
    IrqAck = 6,
    /// Harness only: set the model's fault-injection switches to `VALUE` (model-defined bits,
    /// 0 clears them; e.g. [`r5xx_faults`]). Real hardware has no such operation: only test
    /// cases use it, to make a device misbehave at a chosen moment. `BadOp` if the model has no
    /// switches.
    Inject = 7,
}

impl Op {
    /// The operation for a raw value.
    pub const fn from_u32(v: u32) -> Option<Op> {
        match v {
            1 => Some(Op::MmioRead),
            2 => Some(Op::MmioWrite),
            3 => Some(Op::ConfigRead),
            4 => Some(Op::ConfigWrite),
            5 => Some(Op::Reset),
            6 => Some(Op::IrqAck),
            7 => Some(Op::Inject),
            _ => None,
        }
    }
}

/// Completion status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum Status {
    /// Done.
    Ok = 0,
    /// Unknown operation.
    BadOp = 1,
    /// The address is outside the BAR or configuration space, or not dword-aligned (reads
    /// return all-ones, writes are dropped, like a master abort).
    BadAddress = 2,
    /// The model hung while performing this request (its tick budget ran out): its side
    /// effects are incomplete; the model is in its error state.
    ModelError = 3,
}

impl Status {
    /// The status for a raw value.
    pub const fn from_u32(v: u32) -> Option<Status> {
        match v {
            0 => Some(Status::Ok),
            1 => Some(Status::BadOp),
            2 => Some(Status::BadAddress),
            3 => Some(Status::ModelError),
            _ => None,
        }
    }
}

/// Model life cycle, in `header::STATE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum ModelState {
    /// Not ready yet.
    Starting = 0,
    /// Serving requests.
    Ready = 1,
    /// Error state: the model recorded a fault (DMA outside guest RAM or without bus
    /// mastering, invalid command, hang, injected fault); code in `header::ERROR`. Requests are
    /// still performed, like hardware whose status registers report the fault; engines stay
    /// stopped until `Op::Reset`.
    Error = 2,
}

/// The self-test device's datasheet: a small PCI function whose registers have side effects,
/// which does DMA in both directions and raises interrupts. It exists to test the harness itself;
/// its model (`qemu-tests/models/selftest`) and the kernel's test cases are both written from
/// this description.
///
/// BAR0 is 4 KiB of 32-bit registers. Reset values are 0 unless stated.
pub mod selftest {
    /// PCI vendor ID (QEMU's test vendor).
    pub const VENDOR: u16 = 0x1234;
    /// PCI device ID.
    pub const DEVICE: u16 = 0x5E1F;
    /// PCI class code (0xFF0000: unassigned class).
    pub const CLASS: u32 = 0xFF_0000;
    /// BAR0 size in bytes.
    pub const BAR0_SIZE: u32 = 0x1000;

    /// Read-only identification; reads [`ID_VALUE`].
    pub const ID: usize = 0x00;
    /// Value of [`ID`].
    pub const ID_VALUE: u32 = 0x5E1F_7E57;
    /// Read/write scratch register.
    pub const SCRATCH: usize = 0x04;
    /// Read-only; every read returns the number of earlier reads of this register (read side
    /// effect: 0, 1, 2, ...). Reset clears it.
    pub const COUNTER: usize = 0x08;
    /// Read/write; reads return the bitwise complement of the last value written (write side
    /// effect).
    pub const INVERT: usize = 0x0C;
    /// Guest-physical (bus) address of a DMA transfer, low 32 bits.
    pub const DMA_ADDR_LO: usize = 0x10;
    /// Bus address, high 32 bits.
    pub const DMA_ADDR_HI: usize = 0x14;
    /// Transfer length in bytes: a multiple of 4, at most [`BUFFER_SIZE`].
    pub const DMA_LEN: usize = 0x18;
    /// Write a `DMA_CMD_*` value to start a transfer; it completes before the write's
    /// completion is posted (the model is synchronous), setting `DMA_STATUS`.
    pub const DMA_CMD: usize = 0x1C;
    /// Copy guest memory into the device buffer.
    pub const DMA_CMD_TO_DEVICE: u32 = 1;
    /// Copy the device buffer into guest memory.
    pub const DMA_CMD_FROM_DEVICE: u32 = 2;
    /// Read-only transfer status: [`DMA_STATUS_DONE`] or [`DMA_STATUS_FAULT`].
    pub const DMA_STATUS: usize = 0x20;
    /// The last transfer completed.
    pub const DMA_STATUS_DONE: u32 = 1 << 0;
    /// The last transfer touched memory outside guest RAM or had a bad length: nothing was
    /// transferred, and the model entered its error state (mailbox `ModelState::Error`) until
    /// reset.
    pub const DMA_STATUS_FAULT: u32 = 1 << 1;
    /// Read-only: wrapping sum of the device buffer's dwords over the last transfer's length.
    pub const CHECKSUM: usize = 0x24;
    /// Interrupt status, write 1 to clear: [`IRQ_DMA_DONE`], [`IRQ_SOFTWARE`].
    pub const IRQ_STATUS: usize = 0x30;
    /// Interrupt enable mask (same bits). The interrupt line is asserted while
    /// `IRQ_STATUS & IRQ_ENABLE != 0`; the model signals the guest when it becomes asserted.
    pub const IRQ_ENABLE: usize = 0x34;
    /// Write 1 to set [`IRQ_SOFTWARE`] in `IRQ_STATUS`.
    pub const IRQ_RAISE: usize = 0x38;
    /// A DMA transfer completed.
    pub const IRQ_DMA_DONE: u32 = 1 << 0;
    /// Raised through `IRQ_RAISE`.
    pub const IRQ_SOFTWARE: u32 = 1 << 1;
    /// The device buffer, also readable and writable directly through BAR0.
    pub const BUFFER: usize = 0x800;
    /// Device buffer size in bytes.
    pub const BUFFER_SIZE: u32 = 0x800;
}

/// Fault-injection switches of the emulated R5xx (`qemu-tests/models/r5xx`), set with
/// [`Op::Inject`]. Each imitates a way real hardware fails.
pub mod r5xx_faults {
    /// The command processor stops fetching: `CP_RB_RPTR` never advances (a hung engine).
    pub const CP_STALL: u32 = 1 << 0;
    /// Every register read returns all-ones and writes are dropped (the device is gone).
    pub const ALL_ONES: u32 = 1 << 1;
    /// Microengine RAM read-back of the entry in [`ME_RAM_ENTRY_SHIFT`] has bit 0 flipped.
    pub const ME_RAM_CORRUPT: u32 = 1 << 2;
    /// The next ring or indirect-buffer fetch faults on the bus (one-shot).
    pub const DMA_FAULT: u32 = 1 << 3;
    /// Bits 15:8 name the corrupted microengine RAM entry for [`ME_RAM_CORRUPT`].
    pub const ME_RAM_ENTRY_SHIFT: u32 = 8;
    /// The command processor is slow, not hung: it completes at most one packet per N engine
    /// ticks, N in bits 31:16 ([`SLOW_TICKS_SHIFT`]; 0 reads as 1).
    pub const SLOW: u32 = 1 << 4;
    /// Bits 31:16 give N, the engine ticks per packet, for [`SLOW`].
    pub const SLOW_TICKS_SHIFT: u32 = 16;
}

/// Fault switches of the emulated Evergreen/Cayman (`evergreen-model`) for [`Op::Inject`].
pub mod evergreen_faults {
    /// The command processor stops fetching: `CP_RB_RPTR` never advances (a hung engine).
    pub const CP_STALL: u32 = 1 << 0;
    /// Every register read returns all-ones and writes are dropped (the device is gone).
    pub const ALL_ONES: u32 = 1 << 1;
    /// Microcode read-back (PFP, ME and RLC data ports) of the word in bits 16:5
    /// ([`UCODE_WORD_SHIFT`]) has bit 0 flipped.
    pub const UCODE_CORRUPT: u32 = 1 << 2;
    /// The next ring or indirect-buffer fetch faults on the bus (one-shot).
    pub const DMA_FAULT: u32 = 1 << 3;
    /// The command processor is slow, not hung: at most one packet per N engine ticks, N in
    /// bits 31:17 ([`SLOW_TICKS_SHIFT`]; 0 reads as 1).
    pub const SLOW: u32 = 1 << 4;
    /// Bits 16:5 name the corrupted microcode word for [`UCODE_CORRUPT`].
    pub const UCODE_WORD_SHIFT: u32 = 5;
    /// Width of the word index.
    pub const UCODE_WORD_BITS: u32 = 12;
    /// Bits 31:17 give N for [`SLOW`].
    pub const SLOW_TICKS_SHIFT: u32 = 17;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_do_not_overlap_and_fit_the_shared_memory() {
        let offsets = [
            header::MAGIC,
            header::VERSION,
            header::STATE,
            header::ERROR,
            header::SERVED,
            request::OP,
            request::BAR,
            request::ADDRESS,
            request::VALUE,
            request::SEQ,
            completion::STATUS,
            completion::VALUE,
            completion::SEQ,
            IRQ_STATUS,
        ];
        for (i, a) in offsets.iter().enumerate() {
            assert_eq!(a % 4, 0);
            assert!(a + 4 <= SHMEM_SIZE);
            for b in &offsets[i + 1..] {
                assert_ne!(a, b);
            }
        }
        // Request and completion live in different cache lines from each other and the header.
        assert_eq!((request::OP / 64, completion::STATUS / 64), (1, 2));
        assert!(SHMEM_SIZE.is_power_of_two());
    }

    #[test]
    fn op_and_status_round_trip() {
        for op in
            [Op::MmioRead, Op::MmioWrite, Op::ConfigRead, Op::ConfigWrite, Op::Reset, Op::IrqAck]
        {
            assert_eq!(Op::from_u32(op as u32), Some(op));
        }
        assert_eq!(Op::from_u32(0), None);
        for s in [Status::Ok, Status::BadOp, Status::BadAddress, Status::ModelError] {
            assert_eq!(Status::from_u32(s as u32), Some(s));
        }
    }
}
