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

pub mod v3d_scenes;

/// The project-defined PCI face of a device that is not PCI on real hardware (the VideoCore IV
/// V3D sits on the BCM2835's system bus): the framework's `PlatformDevice` presents its
/// register window as BAR0 of a PCI function with these IDs, so the same harness (QEMU's
/// mailbox transport, in-process tests) and the same PCI probe serve it. The IDs are the
/// project's, not a vendor's: QEMU's test vendor ID, as the self-test device uses.
pub mod platform {
    /// PCI vendor ID (QEMU's test vendor).
    pub const VENDOR: u16 = 0x1234;
    /// PCI class code: display controller, other (0x0380).
    pub const CLASS: u32 = 0x03_8000;
    /// The BAR holding the register window.
    pub const REGISTER_BAR: u8 = 0;
    /// Device ID of the VideoCore IV V3D.
    pub const DEVICE_V3D: u16 = 0x3D04;
    /// Device ID of the framework's own test device (a two-register window).
    pub const DEVICE_TEST: u16 = 0x3D00;
}

/// The fault-injection switches every GPU model shares for [`Op::Inject`] (bits 4:0); the
/// family modules ([`r5xx_faults`], [`evergreen_faults`]) place their parameters above them.
/// Each imitates a way real hardware fails.
pub mod gpu_faults {
    /// The command processor stops fetching: its read pointer never advances (a hung engine).
    pub const CP_STALL: u32 = 1 << 0;
    /// Every register read returns all-ones and writes are dropped (the device is gone).
    pub const ALL_ONES: u32 = 1 << 1;
    /// Microcode read-back of one word (the family module says where its index is) has bit 0
    /// flipped.
    pub const UCODE_CORRUPT: u32 = 1 << 2;
    /// The next ring or indirect-buffer fetch faults on the bus (one-shot).
    pub const DMA_FAULT: u32 = 1 << 3;
    /// The command processor is slow, not hung: at most one packet per N engine ticks (the
    /// family module says where N is; 0 reads as 1).
    pub const SLOW: u32 = 1 << 4;
}

/// Fault-injection switches of the emulated R5xx (`qemu-tests/models/r5xx`), set with
/// [`Op::Inject`]: the shared [`gpu_faults`] and their parameters.
pub mod r5xx_faults {
    pub use super::gpu_faults::{ALL_ONES, CP_STALL, DMA_FAULT, SLOW};
    /// Microengine RAM read-back of the entry in [`ME_RAM_ENTRY_SHIFT`] has bit 0 flipped.
    pub const ME_RAM_CORRUPT: u32 = super::gpu_faults::UCODE_CORRUPT;
    /// Bits 15:8 name the corrupted microengine RAM entry for [`ME_RAM_CORRUPT`].
    pub const ME_RAM_ENTRY_SHIFT: u32 = 8;
    /// Bits 31:16 give N, the engine ticks per packet, for [`SLOW`].
    pub const SLOW_TICKS_SHIFT: u32 = 16;
}

/// Fault switches of the emulated Evergreen/Cayman (`evergreen-model`) for [`Op::Inject`]: the
/// shared [`gpu_faults`] and their parameters.
pub mod evergreen_faults {
    pub use super::gpu_faults::{ALL_ONES, CP_STALL, DMA_FAULT, SLOW, UCODE_CORRUPT};
    /// Bits 16:5 name the corrupted microcode word (PFP, ME and RLC data ports) for
    /// [`UCODE_CORRUPT`].
    pub const UCODE_WORD_SHIFT: u32 = 5;
    /// Width of the word index.
    pub const UCODE_WORD_BITS: u32 = 12;
    /// Bits 31:17 give N for [`SLOW`].
    pub const SLOW_TICKS_SHIFT: u32 = 17;
}

/// Fault switches of the emulated VideoCore IV V3D (`v3d-model`) for [`Op::Inject`]: the shared
/// [`gpu_faults`] (`cp-stall` and `slow` reach both the QPUs and the control-list executor,
/// `dma-fault` the next QPU read and the next list fetch) and the V3D's own.
pub mod v3d_faults {
    pub use super::gpu_faults::{ALL_ONES, CP_STALL, DMA_FAULT, SLOW};
    /// The next QPU host interrupt (`V3D_DBQITC`) latches without reaching the interrupt line,
    /// until the driver clears it.
    pub const MISSED_IRQ: u32 = 1 << 5;
    /// The binner is never given memory, whatever `V3D_BPOA`/`V3D_BPOS` give (OUTOMEM stays
    /// raised).
    pub const OUTOMEM_STORM: u32 = 1 << 6;
    /// Bits 31:16 give N for [`SLOW`].
    pub const SLOW_TICKS_SHIFT: u32 = 16;
}

/// Fault switches of the emulated GT215 (`gt215-model`) for [`Op::Inject`]: the shared
/// [`gpu_faults`] (`CP_STALL` stalls the DMA pusher, `DMA_FAULT` faults its next fetch) and the
/// slow tick count.
pub mod gt215_faults {
    pub use super::gpu_faults::{ALL_ONES, CP_STALL, DMA_FAULT, SLOW};
    /// Bits 31:16 give N for [`SLOW`].
    pub const SLOW_TICKS_SHIFT: u32 = 16;
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

/// The guest side of the protocol, shared by every guest that talks to a model (the test
/// kernel, `examples/bootloader-r5xx`): generic over how the guest reaches ivshmem's BARs.
pub mod guest {
    use crate::{
        IVSHMEM_DOORBELL, MAGIC, MODEL_PEER, Op, Status, VECTOR_REQUEST, VERSION, completion,
        header, request,
    };
    use baregpu_hal::RegisterIo;
    use baregpu_hal::barrier::{dma_rmb, dma_wmb};
    use baregpu_hal::time::{Clock, TimedOut, poll_until};
    use core::time::Duration;

    /// Why an exchange failed.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    #[cfg_attr(feature = "defmt", derive(defmt::Format))]
    pub enum ExchangeError {
        /// No completion with the request's sequence number within the timeout.
        TimedOut(TimedOut),
        /// The model completed the request with this status (not [`Status::Ok`]).
        Status(u32),
    }

    /// Why the model's header is not usable.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    #[cfg_attr(feature = "defmt", derive(defmt::Format))]
    pub enum ConnectError {
        /// The header never showed [`MAGIC`] (the last value read).
        NotReady(u32),
        /// The model speaks another protocol version.
        Version(u32),
    }

    /// Wait (at most `timeout`) for the model's header in the shared memory `shared`; returns
    /// the sequence number of the last request served (the next request uses it + 1).
    pub fn connect(
        shared: &impl RegisterIo,
        clock: &impl Clock,
        timeout: Duration,
    ) -> Result<u32, ConnectError> {
        poll_until(clock, timeout, || (shared.read32(header::MAGIC) == MAGIC).then_some(()))
            .map_err(|_| ConnectError::NotReady(shared.read32(header::MAGIC)))?;
        match shared.read32(header::VERSION) {
            VERSION => Ok(shared.read32(request::SEQ)),
            other => Err(ConnectError::Version(other)),
        }
    }

    /// The fields of one request ([`request`]).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Request {
        /// What to do.
        pub op: Op,
        /// BAR of the emulated device (register accesses).
        pub bar: u32,
        /// Byte offset in the BAR or configuration space.
        pub address: u32,
        /// Value to write (ignored by reads).
        pub value: u32,
    }

    /// Post `fields` with sequence number `seq` (the previous one + 1): the fields, then
    /// `SEQ`, then the doorbell in ivshmem's BAR0 (`doorbell`); then poll, at most `timeout`,
    /// for a completion carrying `seq`, and return its value. The caller serialises exchanges
    /// (one request at a time; the test kernel also keeps interrupts off).
    pub fn exchange(
        shared: &impl RegisterIo,
        doorbell: &impl RegisterIo,
        clock: &impl Clock,
        timeout: Duration,
        seq: u32,
        fields: Request,
    ) -> Result<u32, ExchangeError> {
        shared.write32(request::OP, fields.op as u32);
        shared.write32(request::BAR, fields.bar);
        shared.write32(request::ADDRESS, fields.address);
        shared.write32(request::VALUE, fields.value);
        dma_wmb(); // the fields before SEQ
        shared.write32(request::SEQ, seq);
        dma_wmb(); // SEQ before the doorbell
        doorbell.write32(IVSHMEM_DOORBELL, (MODEL_PEER << 16) | VECTOR_REQUEST);
        poll_until(clock, timeout, || (shared.read32(completion::SEQ) == seq).then_some(()))
            .map_err(ExchangeError::TimedOut)?;
        dma_rmb(); // SEQ before STATUS and VALUE
        match shared.read32(completion::STATUS) {
            s if s == Status::Ok as u32 => Ok(shared.read32(completion::VALUE)),
            s => Err(ExchangeError::Status(s)),
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use core::cell::{Cell, RefCell};

        /// A model answering in the same call: on the doorbell it completes the posted request
        /// with `status` and the request's value + 1, or never if `answer` is false.
        struct Shared {
            words: RefCell<[u32; 64]>,
            status: u32,
            answer: bool,
            doorbells: Cell<u32>,
        }
        impl RegisterIo for Shared {
            fn read32(&self, offset: usize) -> u32 {
                self.words.borrow()[offset / 4]
            }
            fn write32(&self, offset: usize, value: u32) {
                self.words.borrow_mut()[offset / 4] = value;
            }
        }
        /// ivshmem's BAR0: a write to DOORBELL is the model's turn.
        struct Doorbell<'a>(&'a Shared);
        impl RegisterIo for Doorbell<'_> {
            fn read32(&self, _: usize) -> u32 {
                0
            }
            fn write32(&self, offset: usize, value: u32) {
                assert_eq!(
                    (offset, value),
                    (IVSHMEM_DOORBELL, (MODEL_PEER << 16) | VECTOR_REQUEST)
                );
                let s = self.0;
                s.doorbells.set(s.doorbells.get() + 1);
                if s.answer {
                    let mut w = s.words.borrow_mut();
                    w[completion::STATUS / 4] = s.status;
                    w[completion::VALUE / 4] = w[request::VALUE / 4] + 1;
                    w[completion::SEQ / 4] = w[request::SEQ / 4];
                }
            }
        }
        /// 1 µs per reading.
        struct StepClock(Cell<u64>);
        impl Clock for StepClock {
            fn now_ns(&self) -> u64 {
                self.0.set(self.0.get() + 1000);
                self.0.get()
            }
        }

        fn req(op: Op, bar: u32, address: u32, value: u32) -> Request {
            Request { op, bar, address, value }
        }

        fn shared(status: u32, answer: bool) -> Shared {
            let s =
                Shared { words: RefCell::new([0; 64]), status, answer, doorbells: Cell::new(0) };
            s.words.borrow_mut()[header::MAGIC / 4] = MAGIC;
            s.words.borrow_mut()[header::VERSION / 4] = VERSION;
            s.words.borrow_mut()[request::SEQ / 4] = 41;
            s
        }

        #[test]
        fn a_request_is_posted_rung_once_and_its_completion_value_returned() {
            let s = shared(Status::Ok as u32, true);
            let clock = StepClock(Cell::new(0));
            let t = Duration::from_millis(1);
            assert_eq!(connect(&s, &clock, t), Ok(41));
            let got = exchange(&s, &Doorbell(&s), &clock, t, 42, req(Op::MmioRead, 2, 0x7d4, 9));
            assert_eq!(got, Ok(10));
            assert_eq!(s.doorbells.get(), 1);
            assert_eq!(s.read32(request::OP), Op::MmioRead as u32);
            assert_eq!(s.read32(request::BAR), 2);
            assert_eq!(s.read32(request::ADDRESS), 0x7d4);
        }

        #[test]
        fn a_bad_status_or_no_completion_is_an_error_not_a_hang() {
            let clock = StepClock(Cell::new(0));
            let t = Duration::from_millis(1);
            let s = shared(Status::BadAddress as u32, true);
            let got = exchange(&s, &Doorbell(&s), &clock, t, 42, req(Op::MmioWrite, 0, 0, 0));
            assert_eq!(got, Err(ExchangeError::Status(Status::BadAddress as u32)));
            let s = shared(Status::Ok as u32, false);
            let got = exchange(&s, &Doorbell(&s), &clock, t, 42, req(Op::MmioWrite, 0, 0, 0));
            assert!(matches!(got, Err(ExchangeError::TimedOut(_))));
        }

        #[test]
        fn a_model_without_header_or_of_another_version_is_refused() {
            let clock = StepClock(Cell::new(0));
            let t = Duration::from_millis(1);
            let s = shared(0, true);
            s.words.borrow_mut()[header::VERSION / 4] = VERSION + 1;
            assert_eq!(connect(&s, &clock, t), Err(ConnectError::Version(VERSION + 1)));
            s.words.borrow_mut()[header::MAGIC / 4] = 0;
            assert_eq!(connect(&s, &clock, t), Err(ConnectError::NotReady(0)));
        }
    }
}
