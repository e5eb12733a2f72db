//! Emulated Radeon R5xx (R520, PCI 1002:7100) command processor, written from
//! `amd-r5xx-acceleration` §5 (Command Processor), §6 (PM4) and §11.1 (CP registers), plus the
//! facts the document omits from the public Linux radeon driver (r100.c, r300_reg.h, rs600d.h),
//! named where used. Independent of any driver: the PM4 decoder is this crate's own.
//!
//! # What is emulated
//!
//! - **Register file** (BAR0, 64 KiB) from the generated database `baregpu_regs::r5xx::REGISTERS`:
//!   write masks, reset values, read-only and write-only registers and fields
//!   (module `regfile`). Side-effect registers are handled explicitly below.
//! - **ME RAM** (§5.12, §5.13): 256 × 40 bits behind `CP_ME_RAM_ADDR`/`RADDR`/`DATAH`/`DATAL`
//!   with the holding register and auto-increment on both paths.
//! - **Ring buffer** (§5.4): bus-master fetch from `CP_RB_BASE` of `2^(RB_BUFSZ+1)` dwords
//!   (values 0 and 1 give 8 dwords, above 22 clamp to 22, §11.1), in `MAX_FETCH` chunks, with
//!   wrap; equal pointers mean empty; `CP_RB_RPTR` is the fetch pointer. The host copy of the
//!   read pointer (at `CP_RB_RPTR_ADDR`, swapped by `RB_RPTR_SWAP`) is written every
//!   `2^RB_BLKSZ` quadwords fetched and whenever the ring becomes empty, unless
//!   `RB_NO_UPDATE`. `BUF_SWAP` applies to ring and indirect-buffer data. Writing `CP_RB_WPTR`
//!   is the doorbell and, with `RB_RPTR_WR_ENA`, transfers `CP_RB_RPTR_WR` to the read pointer
//!   (§5.8). `CP_RB_WPTR_DELAY` is stored but the write is never delayed (the model's memory is
//!   coherent: the Rage128 behaviour of §5.5 with both fields 0).
//! - **PM4** (§6): all four packet types. Type-0/1 writes go to the register file with side
//!   effects; type 2 is skipped; type-3 NOP skips its body, WAIT_SEMAPHORE and WAIT_MEM wait,
//!   the documented 2D/3D drawing packets are consumed (no rendering engine is emulated, so
//!   the destination caches §10.5.3 / `RB3D_DSTCACHE_CTLSTAT` / `ZB_ZCACHE_CTLSTAT` flush
//!   never hold data; the CTM output cache is modelled and needs its flush, `ctm_model`),
//!   PRED_EXEC/COND_EXEC/INDX_BUFFER stop the CP with [`error_code::UNSUPPORTED_PACKET`] and
//!   any opcode not in §6.2.1 with [`error_code::UNKNOWN_OPCODE`]. Every type-3 body count is
//!   checked against its §6.2 table (`baregpu_regs::r5xx::packets`, [`pm4::body_len`]):
//!   exactly the table's dwords where it lists them all, at least the dwords before an open
//!   list, WAIT_SEMAPHORE's reset dword optional, 3D_LOAD_VBPNTR's length from
//!   VTX_NUM_ARRAYS; anything else is [`error_code::INVALID_PACKET`].
//! - **Indirect buffers** (§5.6, §5.10): a type-0/1 write of `CP_IB_BUFSZ` from the primary
//!   stream starts IB1 at `CP_IB_BASE`; a write of `CP_IB2_BUFSZ` from IB1 starts IB2; each
//!   returns to its parent when its size is exhausted. The BUFSZ write must be the last register
//!   write of its packet ([`error_code::IB_SEQUENCE`]); IB1 only from the primary stream and
//!   IB2 only from IB1 ([`error_code::IB_NESTING`]). A packet may not straddle the end of an
//!   indirect buffer ([`error_code::INVALID_PACKET`]). BUFSZ written by MMIO is only stored.
//! - **Delivery modes** (§5.11, §11.1 `CP_CSQ_CNTL.CSQ_MODE`, `CP_CSQ_MODE`): each stream is
//!   off, PIO or bus master. `CP_CSQ_MODE.CSQ_*_ENABLE` overrides `CSQ_MODE` for its stream.
//!   CSQ_MODE 1 = primary PIO; 2 = primary BM; 3, 5, 7 = primary PIO + indirect BM; 4, 6, 8 =
//!   primary BM + indirect BM; 15 = both PIO; 0 = both off; writing a reserved 9-14 fails the
//!   device with [`error_code::BAD_CONFIGURATION`] (the document gives them no meaning). "Indirect"
//!   covers IB1 and IB2. In PIO mode the apertures (`CP_CSQ_APER_PRIMARY` 0x1000-0x11FC,
//!   `CP_CSQ_APER_INDIRECT` 0x1300-0x13FC, `CP_CSQ_APER_INDIRECT2` 0x1200-0x12FC) enqueue dwords
//!   in write order, whatever the offset; an IB in PIO mode is still started by its BUFSZ
//!   write and consumes BUFSZ dwords from its queue. Aperture writes to a stream that is not in
//!   PIO mode are dropped (counted in [`Stats::pio_dropped`]). The PIO queues are the command
//!   cache split by `CP_CSQ_MODE` (§11.1): the primary queue holds `INDIRECT1_START` double
//!   octwords (8 dwords each), indirect queue 1 `INDIRECT2_START - INDIRECT1_START`, indirect
//!   queue 2 the rest up to location 0x5F ([`COMMAND_CACHE_DOUBLE_OCTWORDS`]); an unprogrammed
//!   split (reset 0) leaves the primary queue no room. A write to a full queue fails the device
//!   ([`error_code::PIO_OVERFLOW`]: real hardware would stall the bus).
//! - **When the CP runs**: a known microcode image in the ME RAM (module [`microcode`]: every
//!   code entry written since power-on, and the rebuilt image's SHA-256 in [`KNOWN_IMAGES`]; any
//!   other image runs nothing), `CP_ME_CNTL.ME_MODE` = 1 (free-running; in single-step mode the
//!   model does not run: it does not execute microcode instructions, so `ME_STEP` has no
//!   effect), the primary stream not off, `RBBM_SOFT_RESET.SOFT_RESET_CP` de-asserted, no CP
//!   error or hang. Otherwise nothing is fetched and PIO data stays queued.
//! - **Microcode writes and resets need the streams off** (§5.8 step 1 "effectively disabling
//!   the CP"; §5.12): a `CP_ME_RAM_DATAL` write of a code entry (not a 0xFC-0xFF semaphore,
//!   §6.2.4.1) while a stream is enabled fails the device with
//!   [`error_code::ME_RAM_WRITE_WHILE_RUNNING`] (the ME would execute a half-written RAM);
//!   asserting `SOFT_RESET_CP` while a stream is enabled fails it with
//!   [`error_code::RESET_WHILE_RUNNING`].
//! - **Scratch registers** (§5.9): a write of `SCRATCH_REGn` (by MMIO or by a packet) is copied
//!   to guest memory at `(SCRATCH_ADDR & !3) + 4n` when `SCRATCH_UMSK` bit n is set.
//! - **Bus address 0** is an address never programmed (every address register resets to 0), a
//!   model decision the same in every model: `CP_RB_RPTR_ADDR` and `SCRATCH_ADDR` = 0 with
//!   write-back on are a [`error_code::DMA_WRITE_FAULT`] at the first write-back instead of a
//!   write to bus address 0, which on hardware would corrupt whatever lives there; a ring at
//!   `CP_RB_BASE` 0, an indirect buffer at 0 and a WAIT_MEM semaphore at 0 are a
//!   [`error_code::DMA_FETCH_FAULT`].
//! - **Microcode past the end**: a `CP_ME_RAM_DATAL` commit after the write address wrapped
//!   past entry 255 (without a new `CP_ME_RAM_ADDR`) fails the device with
//!   [`error_code::UCODE_OVERFLOW`] instead of overwriting entry 0.
//! - **Interrupts**: mailbox line [`IRQ_LINE`] follows `GEN_INT_STATUS & GEN_INT_CNTL` for the
//!   software interrupt and the scratch interrupt. Bits from the register database (fields from
//!   Linux `rs600d.h`, the R5xx-class IGP header, and `radeon_reg.h`): `GEN_INT_CNTL.SW_INT_EN`
//!   bit 25, `SCRATCH_INT_MASK` bit 18; `GEN_INT_STATUS.SW_INT` bit 25 (status, write 1 to
//!   clear), `SW_INT_SET` bit 26 (write 1 to raise `SW_INT`; reads 0), `SCRATCH_INT_STAT`
//!   bit 18 (write 1 to clear). `GEN_INT_STATUS` is handled explicitly (write-1-to-clear and
//!   the `SW_INT_SET` trigger are not plain stores): it reads bits 25 and 18, bit 26 reads 0.
//!   The §5.9/§10.1.13 scratch-compare interrupt needs "DRV_REGS" and a condition whose
//!   registers neither the document nor the public drivers give; the compare logic is modelled
//!   (condition "greater than or equal", pair 2k/2k+1 as a 64-bit value with 2k+1 high) but can
//!   only be armed through [`R5xxModel::set_scratch_compare`], a white-box hook.
//! - **Soft reset** (`RBBM_SOFT_RESET.SOFT_RESET_CP`, §5.8): while the bit is set the CP is
//!   held in reset; asserting it clears the read pointer, the command queues, IB state, the
//!   packet in progress, waits, the ME RAM ports and the CP error. It keeps the ring
//!   configuration, `CP_RB_WPTR` (hence §5.8 step 5), `CP_CSQ_CNTL`/`CP_CSQ_MODE` (hence step 1)
//!   and the ME RAM contents (§5.8's sequence has no microcode reload).
//! - **Status**: `CP_RB_RPTR`, `CP_STAT`, `CP_CSQ_STAT`, `CP_CSQ2_STAT`, `CP_CSQ_AVAIL`
//!   (§11.1 "count of available dwords": free dwords per queue, its share of the command
//!   cache minus the dwords it holds), `CP_ME_CNTL.ME_BUSY` and `RBBM_STATUS` (Linux `r100d.h` /
//!   `rv515d.h`: `CMDFIFO_AVAIL` 6:0, reported as 64 free entries; `CP_CMDSTRM_BUSY` bit 16;
//!   `GUI_ACTIVE` bit 31) are computed. `CP_CSQ_DATA` reads 0 (debug port, not modelled).
//!
//! - **Type-0/1 writes to holes**: offsets no database register occupies, offsets beyond the
//!   64 KiB register space and the PIO apertures (a host-only path) are dropped without error,
//!   like writes into a hole of the register backbone; so are writes to read-only registers
//!   (their fields keep the hardware's value). Both are counted in [`Stats::writes_dropped`]: a
//!   valid stream drops none.
//! - **WAIT_MEM with a bad semaphore** (§6.2.5.2: "If both ordinal 3 (SEM_LEN) and the DWORD
//!   in memory following the semaphore value is not equal to two, the CP micro-engine will
//!   become confused and ultimately hang the hardware"): SEM_LEN other than 2, or a second
//!   semaphore dword other than 2 when the CP reads it, hangs the CP ([`Hang`]): it stops where
//!   it is and reports busy, with no error code, until a soft reset — what a driver sees as a
//!   fence that never signals.
//!
//! # Fault injection
//!
//! [`Faults`] (set with [`R5xxModel::with_faults`] / [`R5xxModel::set_faults`], the mailbox
//! inject switches `gpu_mailbox::r5xx_faults`, or parsed from
//! `cp-stall,all-ones,me-ram-corrupt=N,dma-fault,slow=N` by model-server's `--fault` option).
//!
//! # Errors
//!
//! A CP error stops the CP like a hung micro-engine: `RBBM_STATUS.GUI_ACTIVE` and
//! `CP_CMDSTRM_BUSY`, `CP_STAT.CP_BUSY`/`CMDSTRM_BUSY`/`CSI_BUSY` and `CP_ME_CNTL.ME_BUSY` stay
//! set and the read pointer stops. The document has no CP error register, so the cause is the
//! mailbox header's error code ([`error_code`], via [`DeviceContext::fail`]). The framework
//! freezes a failed device's engines until its function-level reset (mailbox `Reset`, which is
//! power-on: microcode must be reloaded); `RBBM_SOFT_RESET` clears the model's CP error but
//! cannot lift the framework's freeze.
//!
//! # Work per tick
//!
//! A [`tick`](GpuModel::tick) is one fetch: at most one bus-master read of command data (one
//! `MAX_FETCH` chunk of the ring, 8-64 dwords, or of an indirect buffer) and at most
//! [`DWORDS_PER_TICK`] parsed dwords; it stops at the first dword that needs a second fetch.
//! So under the framework's pacing ([`gpu_device_model::pacing`]) a doorbell is normally
//! served over several ticks and a driver sees partly consumed rings and fences in flight; run
//! to idle, a ring of 8 M dwords still takes only a few hundred thousand cheap ticks. It reports
//! [`Activity::Busy`] while there is more, [`Activity::Waiting`] inside
//! WAIT_SEMAPHORE/WAIT_MEM. A CTM command buffer started by a `CTM_CB_SIZE` write runs
//! [`CTM_UNITS_PER_TICK`] work units per tick (plus at most [`ctm_model::MAX_STEP_UNITS`] of
//! cache write-backs), while the CP waits for it before its next dword: a kernel of any length
//! keeps pacing, hang detection and other requests working, and a buffer that reaches the
//! CTM engine's per-buffer budget (`ctm_model::Limits::per_buffer`) fails with its typed code.

#![forbid(unsafe_code)]

mod faults;
mod me_ram;
pub mod microcode;
pub mod pm4;
mod regfile;

pub use faults::{Faults, MAX_SLOW_TICKS};
pub use gpu_device_model::faults::BadFault;
pub use me_ram::{ME_RAM_ENTRIES, ME_RAM_ENTRY_MASK, SEMAPHORE_SLOTS};
pub use microcode::{KNOWN_IMAGES, KnownImage};

use baregpu_hal::register::{Array, Register};
use baregpu_regs::r5xx::{cp, rbbm, us};
use ctm_model::{CtmEngine, DmaMemory};
use gpu_device_model::{Activity, DeviceContext, GpuModel, PciIdentity, RegisterBar};
use me_ram::MeRam;
use pm4::{Class, Header};
use regfile::{REG_SPACE, RegisterFile};
use std::collections::VecDeque;

/// PCI vendor ID (ATI/AMD).
pub const VENDOR_ID: u16 = 0x1002;
/// PCI device ID: R520 (Radeon X1800 XT), Linux radeon_pciids / PCI ID database.
pub const DEVICE_ID: u16 = 0x7100;
/// PCI class: display controller, VGA compatible.
pub const CLASS: u32 = 0x03_0000;
/// BAR0: the register space.
pub const REGISTER_BAR: u8 = 0;
/// BAR0 size.
pub const REGISTER_BAR_SIZE: u64 = REG_SPACE as u64;
/// The register BAR as the framework dispatches it.
const BAR: RegisterBar = RegisterBar::new(REGISTER_BAR, REGISTER_BAR_SIZE);

/// The mailbox interrupt line the GPU drives.
pub const IRQ_LINE: u32 = 1 << 0;

/// Dwords parsed per [`tick`](GpuModel::tick) at most (one fetch is at most 64).
pub const DWORDS_PER_TICK: u32 = 64;

/// CTM work units (instructions, domain elements, commands, cache lines written back; see
/// `ctm_model`'s "Work units and slices") the CTM units do per tick. A 64 x 64 SAXPY takes a
/// handful of ticks; the per-buffer budget of 2^28 units, 2^14 ticks: far below the
/// framework's hang threshold ([`gpu_device_model::TICK_BUDGET`]), so a long kernel is slow,
/// not hung.
pub const CTM_UNITS_PER_TICK: u64 = 1 << 14;

/// The command cache the three queues share: locations 0..=0x5F of one double octword each
/// (§11.1 `CP_CSQ_MODE`: "Indirect Queue #2 will reside in locations INDIRECT2_START to 0x5f").
pub const COMMAND_CACHE_DOUBLE_OCTWORDS: u32 = 0x60;

/// Dwords in a double octword (32 bytes, §11.1 `MAX_FETCH`).
pub const DWORDS_PER_DOUBLE_OCTWORD: u32 = 8;

/// Error codes in the mailbox header (`DeviceContext::fail`): the framework's shared
/// command-processor vocabulary (`gpu_device_model::cp_error`), with what raises each here.
/// CTM errors use `ctm_model::CtmError::code` (0x100 and up).
pub mod error_code {
    /// A reserved `CP_CSQ_CNTL.CSQ_MODE` (9-14, §11.1) written.
    pub use gpu_device_model::cp_error::BAD_CONFIGURATION;
    /// A command fetch (ring, IB, WAIT_MEM semaphore) outside guest memory, with bus mastering
    /// off or from an unprogrammed `CP_RB_BASE` 0; also the injected
    /// [`Faults::dma_fault_next_fetch`](crate::Faults).
    pub use gpu_device_model::cp_error::DMA_FETCH_FAULT;
    /// A write-back (read pointer, scratch register) outside guest memory, with bus mastering
    /// off, or to an unprogrammed address 0.
    pub use gpu_device_model::cp_error::DMA_WRITE_FAULT;
    /// `CP_IB_BUFSZ` written from an indirect buffer, `CP_IB2_BUFSZ` from anywhere but IB1, or
    /// WAIT_MEM inside IB2 (§5.6, §5.10, §6.2.5.2).
    pub use gpu_device_model::cp_error::IB_NESTING;
    /// A BUFSZ write that is not the last register write of its type-0/1 packet (§5.10).
    pub use gpu_device_model::cp_error::IB_SEQUENCE;
    /// A packet the CP cannot parse: a WAIT_SEMAPHORE/WAIT_MEM with a bad body (§6.2.4.1,
    /// §6.2.5.2), a body count outside the packet's table (§6.2), or a packet running past the
    /// end of an indirect buffer.
    pub use gpu_device_model::cp_error::INVALID_PACKET;
    /// A PIO aperture write to a full queue.
    pub use gpu_device_model::cp_error::PIO_OVERFLOW;
    /// `RBBM_SOFT_RESET.SOFT_RESET_CP` asserted while a command stream is enabled (§5.8 step
    /// 1: disable `CP_CSQ_CNTL` and `CP_CSQ_MODE` first).
    pub use gpu_device_model::cp_error::RESET_WHILE_RUNNING;
    /// An indirect buffer started while its stream is off (§5.11 delivery mode OFF).
    pub use gpu_device_model::cp_error::STREAM_DISABLED;
    /// An ME RAM entry committed after the write address wrapped past entry 255.
    pub use gpu_device_model::cp_error::UCODE_OVERFLOW;
    /// A microcode entry (`CP_ME_RAM_DATAL` commit below the semaphore slots) written while a
    /// command stream is enabled (§5.8 step 1, §5.12).
    pub use gpu_device_model::cp_error::UCODE_WRITE_WHILE_RUNNING as ME_RAM_WRITE_WHILE_RUNNING;
    /// A type-3 opcode not in §6.2.1.
    pub use gpu_device_model::cp_error::UNKNOWN_OPCODE;
    /// A documented type-3 packet the model does not emulate (PRED_EXEC, COND_EXEC,
    /// INDX_BUFFER).
    pub use gpu_device_model::cp_error::UNSUPPORTED_PACKET;
}

/// Why the CP hung (it stops and reports busy, with no error code, until a soft reset).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hang {
    /// WAIT_MEM's SEM_LEN was not 2 (§6.2.5.2).
    WaitMemLength(u32),
    /// The dword after a WAIT_MEM semaphore was not 2 when the CP read it (§6.2.5.2).
    WaitMemFixedWord(u32),
}

// Register offsets (bytes) the model acts on, from the generated database.
const fn off<R: Register>() -> u32 {
    R::OFFSET as u32
}
const RB_BASE: u32 = off::<cp::CP_RB_BASE>();
const RB_CNTL: u32 = off::<cp::CP_RB_CNTL>();
const RB_RPTR_ADDR: u32 = off::<cp::CP_RB_RPTR_ADDR>();
const RB_RPTR: u32 = off::<cp::CP_RB_RPTR>();
const RB_WPTR: u32 = off::<cp::CP_RB_WPTR>();
const RB_RPTR_WR: u32 = off::<cp::CP_RB_RPTR_WR>();
const IB_BASE: u32 = off::<cp::CP_IB_BASE>();
const IB_BUFSZ: u32 = off::<cp::CP_IB_BUFSZ>();
const IB2_BASE: u32 = off::<cp::CP_IB2_BASE>();
const IB2_BUFSZ: u32 = off::<cp::CP_IB2_BUFSZ>();
const CSQ_CNTL: u32 = off::<cp::CP_CSQ_CNTL>();
const CSQ_MODE: u32 = off::<cp::CP_CSQ_MODE>();
const CSQ_AVAIL: u32 = off::<cp::CP_CSQ_AVAIL>();
const CSQ_STAT: u32 = off::<cp::CP_CSQ_STAT>();
const CSQ2_STAT: u32 = off::<cp::CP_CSQ2_STAT>();
const CSQ_DATA: u32 = off::<cp::CP_CSQ_DATA>();
const CP_STAT: u32 = off::<cp::CP_STAT>();
const ME_CNTL: u32 = off::<cp::CP_ME_CNTL>();
const ME_RAM_ADDR: u32 = off::<cp::CP_ME_RAM_ADDR>();
const ME_RAM_RADDR: u32 = off::<cp::CP_ME_RAM_RADDR>();
const ME_RAM_DATAH: u32 = off::<cp::CP_ME_RAM_DATAH>();
const ME_RAM_DATAL: u32 = off::<cp::CP_ME_RAM_DATAL>();
const SCRATCH_UMSK: u32 = off::<cp::SCRATCH_UMSK>();
const SCRATCH_ADDR: u32 = off::<cp::SCRATCH_ADDR>();
const SCRATCH_REG0: u32 = off::<cp::SCRATCH_REG0>();
const SCRATCH_COUNT: u32 = <cp::SCRATCH_REG0 as Array>::COUNT as u32;
const SCRATCH_STRIDE: u32 = <cp::SCRATCH_REG0 as Array>::STRIDE as u32;
const APER_PRIMARY: u32 = off::<cp::CP_CSQ_APER_PRIMARY>();
const APER_INDIRECT: u32 = off::<cp::CP_CSQ_APER_INDIRECT>();
const APER_INDIRECT2: u32 = off::<cp::CP_CSQ_APER_INDIRECT2>();
const APER_PRIMARY_LEN: u32 = aper_len::<cp::CP_CSQ_APER_PRIMARY>();
const APER_INDIRECT_LEN: u32 = aper_len::<cp::CP_CSQ_APER_INDIRECT>();
const APER_INDIRECT2_LEN: u32 = aper_len::<cp::CP_CSQ_APER_INDIRECT2>();
const fn aper_len<R: Array>() -> u32 {
    (R::COUNT * R::STRIDE) as u32
}
const CTM_CB_BASE: u32 = off::<cp::CTM_CB_BASE>();
const CTM_CB_SIZE: u32 = off::<cp::CTM_CB_SIZE>();
const CTM_STATUS: u32 = off::<cp::CTM_STATUS>();
const GEN_INT_CNTL: u32 = off::<rbbm::GEN_INT_CNTL>();
const US_CODE_ADDR: u32 = off::<us::US_CODE_ADDR>();
const US_CODE_OFFSET: u32 = off::<us::US_CODE_OFFSET>();
const US_FC_CTRL: u32 = off::<us::US_FC_CTRL>();
const GEN_INT_STATUS: u32 = off::<rbbm::GEN_INT_STATUS>();
const RBBM_SOFT_RESET: u32 = off::<rbbm::RBBM_SOFT_RESET>();
const RBBM_STATUS: u32 = off::<rbbm::RBBM_STATUS>();

/// `GEN_INT_STATUS.SCRATCH_INT_STAT` (write 1 to clear), also `GEN_INT_CNTL.SCRATCH_INT_MASK`.
pub const GEN_INT_SCRATCH: u32 = rbbm::GEN_INT_STATUS::RESET.with_scratch_int_stat(true).raw();
/// `GEN_INT_STATUS.SW_INT` (write 1 to clear), also `GEN_INT_CNTL.SW_INT_EN`.
pub const GEN_INT_SW: u32 = rbbm::GEN_INT_STATUS::RESET.with_sw_int(true).raw();
/// `GEN_INT_STATUS.SW_INT_SET` (write 1 to raise `SW_INT`; reads 0; Linux `RADEON_SW_INT_FIRE`).
pub const GEN_INT_SW_SET: u32 = rbbm::GEN_INT_STATUS::RESET.with_sw_int_set(true).raw();
// The line is `status & enable`: each enable bit sits on its status bit.
const _: () =
    assert!(rbbm::GEN_INT_CNTL::RESET.with_scratch_int_mask(true).raw() == GEN_INT_SCRATCH);
const _: () = assert!(rbbm::GEN_INT_CNTL::RESET.with_sw_int_en(true).raw() == GEN_INT_SW);

/// `RBBM_STATUS` as the model reports it when idle: `CMDFIFO_AVAIL` = 64 free command FIFO
/// entries (a model choice within the 7-bit field).
pub const RBBM_CMDFIFO_AVAIL: u32 = rbbm::RBBM_STATUS::CMDFIFO_AVAIL.place(64);
/// `RBBM_STATUS.CP_CMDSTRM_BUSY`.
pub const RBBM_CP_CMDSTRM_BUSY: u32 = rbbm::RBBM_STATUS::CP_CMDSTRM_BUSY.mask();
/// `RBBM_STATUS.GUI_ACTIVE`.
pub const RBBM_GUI_ACTIVE: u32 = rbbm::RBBM_STATUS::GUI_ACTIVE.mask();

/// One of the three command streams (§5.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// The primary stream (ring buffer or primary aperture).
    Primary,
    /// Indirect buffer 1.
    Indirect1,
    /// Indirect buffer 2.
    Indirect2,
}

/// How a stream is delivered (§5.11).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// Disabled.
    Off,
    /// Host writes (push, programmed I/O).
    Pio,
    /// CP fetches from memory (pull, bus master).
    BusMaster,
}

/// The white-box scratch-compare setting (§5.9, §10.1.13): raise `SCRATCH_INT_STAT` when the
/// pair `2*pair`/`2*pair+1` is written back and `(reg[2p+1] << 32 | reg[2p]) >= reference`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScratchCompare {
    /// Pair 0..=3 (registers 0-1, 2-3, 4-5, 6-7).
    pub pair: u8,
    /// The driver's 64-bit reference ("DRV_REGS").
    pub reference: u64,
}

/// Counters for white-box tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Packets parsed, by type.
    pub packets: [u64; 4],
    /// Type-3 packets consumed without effect (drawing packets).
    pub consumed: u64,
    /// Indirect buffers started: [IB1, IB2].
    pub ibs_started: [u64; 2],
    /// Read-pointer write-backs.
    pub rptr_writebacks: u64,
    /// Scratch write-backs.
    pub scratch_writebacks: u64,
    /// Aperture writes dropped because the stream was not in PIO mode.
    pub pio_dropped: u64,
    /// Register writes dropped: a hole, a read-only register, or an aperture from a packet.
    pub writes_dropped: u64,
    /// CTM work units done (see [`CTM_UNITS_PER_TICK`]).
    pub ctm_units: u64,
}

/// An active indirect buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Ib {
    /// Next fetch address (bus master).
    fetch_address: u64,
    /// Dwords still to fetch (bus master).
    to_fetch: u32,
    /// Dwords the parser still reads from this buffer.
    to_consume: u32,
    delivery: Delivery,
}

/// The packet being parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Packet {
    /// Expecting a header.
    Header,
    Type0 {
        register: u32,
        one_reg_wr: bool,
        remaining: u32,
    },
    Type1 {
        second: u32,
        first_done: bool,
        first: u32,
    },
    Type3 {
        opcode: u8,
        class: Class,
        remaining: u32,
        total: u32,
        body: [u32; 2],
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wait {
    Semaphore { slot: u8, reset: Option<u32> },
    Memory { address: u64 },
}

/// Command processor state cleared by a CP soft reset.
#[derive(Debug, Clone)]
struct Cp {
    rptr: u32,
    since_writeback: u32,
    queues: [VecDeque<u32>; 3],
    /// Enqueue/dequeue counters per stream (CSQ_STAT / CSQ2_STAT pointers, 10 bits).
    queue_wptr: [u32; 3],
    queue_rptr: [u32; 3],
    ib1: Option<Ib>,
    ib2: Option<Ib>,
    packet: Packet,
    pending_ib: Option<Stream>,
    wait: Option<Wait>,
    error: Option<u32>,
    hang: Option<Hang>,
    /// A fetch (ring or IB) happened in the current tick: the next one waits for a new tick.
    fetched: bool,
    /// Packets completed since the CP soft reset.
    packets_done: u64,
    /// Ticks since the last packet under the `slow` fault.
    slow_ticks: u32,
}

impl Cp {
    fn new() -> Self {
        Cp {
            rptr: 0,
            since_writeback: 0,
            queues: [VecDeque::new(), VecDeque::new(), VecDeque::new()],
            queue_wptr: [0; 3],
            queue_rptr: [0; 3],
            ib1: None,
            ib2: None,
            packet: Packet::Header,
            pending_ib: None,
            wait: None,
            error: None,
            hang: None,
            fetched: false,
            packets_done: 0,
            slow_ticks: 0,
        }
    }

    fn active(&self) -> Stream {
        if self.ib2.is_some() {
            Stream::Indirect2
        } else if self.ib1.is_some() {
            Stream::Indirect1
        } else {
            Stream::Primary
        }
    }

    fn push(&mut self, s: Stream, v: u32) {
        let i = s as usize;
        self.queues[i].push_back(v);
        self.queue_wptr[i] = self.queue_wptr[i].wrapping_add(1);
    }

    fn pop(&mut self, s: Stream) -> Option<u32> {
        let i = s as usize;
        let v = self.queues[i].pop_front()?;
        self.queue_rptr[i] = self.queue_rptr[i].wrapping_add(1);
        Some(v)
    }
}

/// Where a register write comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    /// The host, through BAR0.
    Mmio,
    /// A type-0/1 packet from `stream`; `last` = the packet's last register write.
    Packet { stream: Stream, last: bool },
}

/// Why parsing stopped for now.
enum Stop {
    /// The CP failed (already reported).
    Failed,
}

/// What the parser gets next.
enum Next {
    /// A dword of the active stream.
    Word(u32),
    /// The active stream has nothing: the CP is idle until the host gives it more.
    Starved,
    /// The next dword needs a second fetch: it waits for the next tick.
    Later,
}

/// The emulated R5xx: a [`GpuModel`] with BAR0 = 64 KiB of registers.
///
/// Bring-up a driver must perform (each step is required by the model):
/// 1. Enable memory decoding and bus mastering (PCI command register).
/// 2. With the streams off, upload a known microcode image ([`KNOWN_IMAGES`]), all 256 ME RAM
///    entries: `CP_ME_RAM_ADDR` = 0, then per entry `DATAH` then `DATAL` (§5.12). Leave
///    `CP_ME_CNTL.ME_MODE` = 1 (its reset value).
/// 3. `CP_RB_CNTL` (RB_BUFSZ = log2(ring bytes / 8), RB_BLKSZ, MAX_FETCH, RB_NO_UPDATE),
///    `CP_RB_BASE`, `CP_RB_RPTR_ADDR`; optionally RB_RPTR_WR_ENA + `CP_RB_RPTR_WR` +
///    `CP_RB_WPTR` to set the read pointer (§5.8).
/// 4. `SCRATCH_ADDR`/`SCRATCH_UMSK` for fences; `GEN_INT_CNTL` bit 25 for the software
///    interrupt.
/// 5. `CP_CSQ_CNTL.CSQ_MODE` = 2 (primary BM) or 4 (primary + indirect BM), or 1/15 for PIO
///    with the queue split in `CP_CSQ_MODE`.
/// 6. Write packets at `RB_BASE + 4 * WPTR`, then write `CP_RB_WPTR` (the doorbell).
#[derive(Debug, Clone)]
pub struct R5xxModel {
    regs: RegisterFile,
    me: MeRam,
    cp: Cp,
    faults: Faults,
    compare: Option<ScratchCompare>,
    stats: Stats,
    ctm: Ctm,
    /// The CTM units' work bounds, kept across resets (a property of the emulated part).
    ctm_limits: ctm_model::Limits,
}

/// The CTM units behind the project's CTM device interface (`CTM_CB_BASE`/`CTM_CB_SIZE`/
/// `CTM_STATUS`, see the crate docs).
#[derive(Debug, Clone, Default)]
struct Ctm {
    engine: CtmEngine,
    /// Command buffers consumed (CTM_STATUS.CONSUMED, 16 bits, wraps).
    consumed: u16,
    /// The first CTM error (CTM_STATUS.ERROR_CODE).
    error: Option<u32>,
}

impl Default for R5xxModel {
    fn default() -> Self {
        Self::new()
    }
}

/// Apply a `BUF_SWAP` / `RB_RPTR_SWAP` encoding (§11.1 `CP_RB_CNTL.BUF_SWAP`).
pub const fn swap(value: u32, mode: u32) -> u32 {
    match mode & 3 {
        0 => value,
        // 16-bit swap: 0xAABBCCDD -> 0xBBAADDCC.
        1 => ((value & 0x00FF_00FF) << 8) | ((value >> 8) & 0x00FF_00FF),
        // 32-bit swap: 0xAABBCCDD -> 0xDDCCBBAA.
        2 => value.swap_bytes(),
        // Half-dword swap: 0xAABBCCDD -> 0xCCDDAABB.
        _ => value.rotate_left(16),
    }
}

impl R5xxModel {
    /// A device in its power-on state, no faults.
    pub fn new() -> Self {
        Self::with_faults(Faults::default())
    }

    /// A device in its power-on state with `faults` injected.
    pub fn with_faults(faults: Faults) -> Self {
        R5xxModel {
            regs: regfile::new(),
            me: MeRam::new(),
            cp: Cp::new(),
            faults,
            compare: None,
            stats: Stats::default(),
            ctm: Ctm::default(),
            ctm_limits: ctm_model::Limits::default(),
        }
    }

    /// Change the CTM units' work bounds (per element, per dispatch, per command buffer; the
    /// defaults are `ctm_model::Limits::default()`): tests of the budget errors use small ones.
    pub fn set_ctm_limits(&mut self, limits: ctm_model::Limits) {
        self.ctm_limits = limits;
        self.ctm.engine.limits = limits;
    }

    /// The CTM engine (unit state, cache and synchronisation counters, performance counters),
    /// for white-box tests.
    pub fn ctm(&self) -> &CtmEngine {
        &self.ctm.engine
    }

    /// CTM command buffers consumed since reset.
    pub fn ctm_consumed(&self) -> u16 {
        self.ctm.consumed
    }

    /// The injected faults.
    pub fn faults(&self) -> Faults {
        self.faults
    }

    /// Change the injected faults (takes effect at the next access or tick).
    pub fn set_faults(&mut self, faults: Faults) {
        self.faults = faults;
    }

    /// The CP error code, if the CP stopped on an error (see [`error_code`]).
    pub fn cp_error(&self) -> Option<u32> {
        self.cp.error
    }

    /// Whether the ME RAM holds a known microcode image ([`microcode`]).
    pub fn microcode_loaded(&self) -> bool {
        self.me.identity().is_some()
    }

    /// The known microcode image the ME RAM holds, if any.
    pub fn microcode(&self) -> Option<&'static KnownImage> {
        self.me.identity()
    }

    /// Why the CP hung, if it did (cleared by a CP soft reset).
    pub fn hang(&self) -> Option<Hang> {
        self.cp.hang
    }

    /// Dwords a PIO queue holds (§11.1 `CP_CSQ_MODE` split; see the crate docs).
    pub fn queue_capacity(&self, stream: Stream) -> usize {
        let mode = cp::CP_CSQ_MODE::from_raw(self.regs.stored(CSQ_MODE));
        let i1 = u32::from(mode.indirect1_start());
        let i2 = u32::from(mode.indirect2_start());
        let double_octwords = match stream {
            Stream::Primary => i1,
            Stream::Indirect1 => i2.saturating_sub(i1),
            Stream::Indirect2 => COMMAND_CACHE_DOUBLE_OCTWORDS.saturating_sub(i2),
        };
        (double_octwords.min(COMMAND_CACHE_DOUBLE_OCTWORDS) * DWORDS_PER_DOUBLE_OCTWORD) as usize
    }

    /// Whether any command stream is enabled (§5.8 step 1 disables them all).
    fn streams_enabled(&self) -> bool {
        [Stream::Primary, Stream::Indirect1, Stream::Indirect2]
            .iter()
            .any(|&s| self.delivery(s) != Delivery::Off)
    }

    /// One ME RAM entry (40 bits), without the ports' side effects.
    pub fn me_ram_entry(&self, index: u8) -> u64 {
        self.me.entry(index)
    }

    /// The CP's read pointer (what `CP_RB_RPTR` reads).
    pub fn rptr(&self) -> u32 {
        self.cp.rptr
    }

    /// Which stream the parser reads from.
    pub fn active_stream(&self) -> Stream {
        self.cp.active()
    }

    /// Counters.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// Arm (or disarm) the scratch-compare interrupt (white-box: see the crate docs).
    pub fn set_scratch_compare(&mut self, compare: Option<ScratchCompare>) {
        self.compare = compare;
    }

    /// How `stream` is delivered now (§5.11, §11.1 `CP_CSQ_CNTL`, `CP_CSQ_MODE`).
    pub fn delivery(&self, stream: Stream) -> Delivery {
        let mode = cp::CP_CSQ_MODE::from_raw(self.regs.stored(CSQ_MODE));
        let pick = |bm: bool| if bm { Delivery::BusMaster } else { Delivery::Pio };
        let override_ = match stream {
            Stream::Primary => {
                mode.csq_primary_enable().then(|| pick(mode.csq_primary_mode_raw() == 1))
            }
            Stream::Indirect1 => {
                mode.csq_indirect1_enable().then(|| pick(mode.csq_indirect1_mode_raw() == 1))
            }
            Stream::Indirect2 => {
                mode.csq_indirect2_enable().then(|| pick(mode.csq_indirect2_mode_raw() == 1))
            }
        };
        if let Some(d) = override_ {
            return d;
        }
        let csq = cp::CP_CSQ_CNTL::from_raw(self.regs.stored(CSQ_CNTL)).csq_mode_raw();
        match (stream, csq) {
            (Stream::Primary, 1 | 3 | 5 | 7 | 15) => Delivery::Pio,
            (Stream::Primary, 2 | 4 | 6 | 8) => Delivery::BusMaster,
            (Stream::Indirect1 | Stream::Indirect2, 3..=8) => Delivery::BusMaster,
            (Stream::Indirect1 | Stream::Indirect2, 15) => Delivery::Pio,
            _ => Delivery::Off,
        }
    }

    fn rb_cntl(&self) -> cp::CP_RB_CNTL {
        cp::CP_RB_CNTL::from_raw(self.regs.stored(RB_CNTL))
    }

    /// Ring size in dwords (§11.1 RB_BUFSZ).
    fn ring_dwords(&self) -> u32 {
        let log = self.rb_cntl().rb_bufsz().clamp(2, 22);
        1 << (u32::from(log) + 1)
    }

    /// Dwords per read-pointer write-back block (RB_BLKSZ, log2 quadwords).
    fn block_dwords(&self) -> u32 {
        let log = u32::from(self.rb_cntl().rb_blksz()) + 1;
        1u32.checked_shl(log).unwrap_or(u32::MAX)
    }

    /// MAX_FETCH in dwords: 1, 2, 4 or 8 double octwords of 32 bytes.
    fn fetch_dwords(&self) -> u32 {
        8 << self.rb_cntl().max_fetch_raw()
    }

    fn wptr(&self) -> u32 {
        self.regs.stored(RB_WPTR) & (self.ring_dwords() - 1)
    }

    fn in_soft_reset(&self) -> bool {
        rbbm::RBBM_SOFT_RESET::from_raw(self.regs.stored(RBBM_SOFT_RESET)).soft_reset_cp()
    }

    fn me_free_running(&self) -> bool {
        cp::CP_ME_CNTL::from_raw(self.regs.stored(ME_CNTL)).me_mode()
            == cp::cp_me_cntl::MeMode::FreeRunningMode
    }

    /// Whether the CP parses packets now.
    fn running(&self) -> bool {
        !self.faults.cp_stall
            && !self.faults.registers_all_ones
            && self.cp.error.is_none()
            && self.cp.hang.is_none()
            && !self.in_soft_reset()
            && self.me_free_running()
            && self.delivery(Stream::Primary) != Delivery::Off
            && self.me.identity().is_some()
    }

    /// Work is queued or in progress somewhere in the CP.
    fn pending(&self) -> bool {
        let ring = self.delivery(Stream::Primary) == Delivery::BusMaster
            && (self.cp.rptr & (self.ring_dwords() - 1)) != self.wptr();
        ring || self.cp.queues.iter().any(|q| !q.is_empty())
            || self.cp.ib1.is_some()
            || self.cp.ib2.is_some()
            || self.cp.packet != Packet::Header
            || self.cp.wait.is_some()
            || self.ctm.engine.in_flight()
    }

    /// The CP looks busy: a failed or hung CP, or pending work while enabled.
    fn busy(&self) -> bool {
        self.cp.error.is_some()
            || self.cp.hang.is_some()
            || (self.pending()
                && !self.in_soft_reset()
                && self.delivery(Stream::Primary) != Delivery::Off)
    }

    fn fail(&mut self, code: u32, dev: &mut DeviceContext<'_>) -> Stop {
        self.cp.error.get_or_insert(code);
        dev.fail(code);
        Stop::Failed
    }

    fn update_irq(&self, dev: &mut DeviceContext<'_>) {
        let status = self.regs.stored(GEN_INT_STATUS);
        let enable = self.regs.stored(GEN_INT_CNTL);
        dev.set_irq(IRQ_LINE, status & enable & (GEN_INT_SW | GEN_INT_SCRATCH) != 0);
    }

    /// CP soft reset (§5.8 step 2): see the crate docs for what is kept.
    fn soft_reset_cp(&mut self) {
        self.cp = Cp::new();
        self.me.reset_ports();
        // The CTM units are fed by the CP and reset with it (unit state, caches, counters).
        self.ctm = Ctm::default();
        self.ctm.engine.limits = self.ctm_limits;
    }

    // ---------------------------------------------------------------------------------------
    // Register access

    fn aperture(offset: u32) -> Option<Stream> {
        let inside = |base: u32, len: u32| offset >= base && offset - base < len;
        if inside(APER_PRIMARY, APER_PRIMARY_LEN) {
            Some(Stream::Primary)
        } else if inside(APER_INDIRECT, APER_INDIRECT_LEN) {
            Some(Stream::Indirect1)
        } else if inside(APER_INDIRECT2, APER_INDIRECT2_LEN) {
            Some(Stream::Indirect2)
        } else {
            None
        }
    }

    fn scratch_index(offset: u32) -> Option<u32> {
        let delta = offset.checked_sub(SCRATCH_REG0)?;
        (delta.is_multiple_of(SCRATCH_STRIDE) && delta / SCRATCH_STRIDE < SCRATCH_COUNT)
            .then_some(delta / SCRATCH_STRIDE)
    }

    fn read_register(&mut self, offset: u32) -> u32 {
        match offset {
            RB_RPTR => self.cp.rptr,
            ME_RAM_ADDR => u32::from(self.me.address()),
            ME_RAM_DATAH => self.me.read_high(),
            ME_RAM_DATAL => self.me.read_low(self.faults.me_ram_corrupt),
            ME_CNTL => {
                let busy = cp::CP_ME_CNTL::ME_BUSY.place(u32::from(self.busy()));
                self.regs.read(ME_CNTL) | busy
            }
            CP_STAT => self.cp_stat(),
            // Read-only registers: the model places their fields from the database (pointers
            // wrap in their 10-bit fields, as the hardware's queue pointers do).
            CSQ_STAT => {
                use cp::CP_CSQ_STAT as R;
                let [p, i1, _] = self.cp.queue_rptr;
                let [pw, _, _] = self.cp.queue_wptr;
                R::CSQ_RPTR_PRIMARY.place(p)
                    | R::CSQ_WPTR_PRIMARY.place(pw)
                    | R::CSQ_RPTR_INDIRECT.place(i1)
            }
            CSQ2_STAT => {
                use cp::CP_CSQ2_STAT as R;
                let [_, i1w, i2w] = self.cp.queue_wptr;
                let i2 = self.cp.queue_rptr[2];
                R::CSQ_WPTR_INDIRECT.place(i1w)
                    | R::CSQ_RPTR_INDIRECT2.place(i2)
                    | R::CSQ_WPTR_INDIRECT2.place(i2w)
            }
            CSQ_AVAIL => {
                use cp::CP_CSQ_AVAIL as R;
                // §11.1: "Count of available dwords in the queue": the room left for the host
                // to write (the queue's share of the command cache minus what it holds), the
                // flow control of the push model; the dwords held are CP_CSQ_STAT's pointers.
                // A count saturates at its field's maximum instead of wrapping.
                let n = |s: Stream, f: baregpu_hal::FieldSpec| {
                    let max = f.mask() >> f.lsb;
                    let free =
                        self.queue_capacity(s).saturating_sub(self.cp.queues[s as usize].len());
                    f.place((free as u32).min(max))
                };
                n(Stream::Primary, R::CSQ_CNT_PRIMARY)
                    | n(Stream::Indirect1, R::CSQ_CNT_INDIRECT)
                    | n(Stream::Indirect2, R::CSQ_CNT_INDIRECT2)
            }
            CSQ_DATA => 0,
            CTM_STATUS => {
                use cp::CTM_STATUS as R;
                R::CONSUMED.place(u32::from(self.ctm.consumed))
                    | R::ERROR_CODE.place(self.ctm.error.unwrap_or(0))
                    | R::ERROR.place(u32::from(self.ctm.error.is_some()))
            }
            // The status bits; SW_INT_SET is a write-1-to-raise trigger and reads 0.
            GEN_INT_STATUS => self.regs.stored(GEN_INT_STATUS) & (GEN_INT_SW | GEN_INT_SCRATCH),
            RBBM_STATUS => {
                let busy = if self.busy() { RBBM_GUI_ACTIVE | RBBM_CP_CMDSTRM_BUSY } else { 0 };
                RBBM_CMDFIFO_AVAIL | busy
            }
            _ => self.regs.read(offset),
        }
    }

    fn cp_stat(&self) -> u32 {
        use cp::CP_STAT as R;
        let bit = |b: bool, f: baregpu_hal::FieldSpec| f.place(u32::from(b));
        let ring = self.delivery(Stream::Primary) == Delivery::BusMaster
            && (self.cp.rptr & (self.ring_dwords() - 1)) != self.wptr();
        let fetching = |ib: &Option<Ib>| ib.is_some_and(|ib| ib.to_fetch > 0);
        let q = |s: Stream| !self.cp.queues[s as usize].is_empty();
        let csi = self.cp.packet != Packet::Header || self.cp.wait.is_some();
        let failed = self.cp.error.is_some() || self.cp.hang.is_some();
        let busy = self.busy();
        bit(ring, R::CSF_PRIMARY_BUSY)
            | bit(fetching(&self.cp.ib1), R::CSF_INDIRECT_BUSY)
            | bit(q(Stream::Primary), R::CSQ_PRIMARY_BUSY)
            | bit(q(Stream::Indirect1), R::CSQ_INDIRECT_BUSY)
            | bit(csi || failed, R::CSI_BUSY)
            | bit(fetching(&self.cp.ib2), R::CSF_INDIRECT2_BUSY)
            | bit(q(Stream::Indirect2), R::CSQ_INDIRECT2_BUSY)
            | bit(busy, R::CMDSTRM_BUSY)
            | bit(busy, R::CP_BUSY)
    }

    /// A register write from the host or a packet, with its side effects.
    fn write_register(
        &mut self,
        offset: u32,
        value: u32,
        source: Source,
        dev: &mut DeviceContext<'_>,
    ) -> Result<(), Stop> {
        if let Some(stream) = Self::aperture(offset) {
            return match source {
                Source::Mmio => self.pio_write(stream, value, dev),
                Source::Packet { .. } => {
                    self.stats.writes_dropped += 1;
                    Ok(())
                }
            };
        }
        if self.regs.spec(offset).is_none() {
            // A hole in the register backbone: the write goes nowhere.
            self.stats.writes_dropped += 1;
            return Ok(());
        }
        if !self.regs.accepts(offset) && !matches!(offset, GEN_INT_STATUS) {
            // A read-only register (its write has no effect, GEN_INT_STATUS's write-1-to-clear
            // bits aside): counted, so a stream that writes one is not clean.
            self.stats.writes_dropped += 1;
            return Ok(());
        }
        match offset {
            RB_WPTR => {
                self.regs.write(offset, value);
                if self.rb_cntl().rb_rptr_wr_ena() {
                    // §5.8: the writable read pointer is transferred to the active one.
                    self.cp.rptr = self.regs.stored(RB_RPTR_WR) & (self.ring_dwords() - 1);
                    self.cp.since_writeback = 0;
                    if self.delivery(Stream::Primary) == Delivery::BusMaster {
                        // Prefetched dwords belong to the old position.
                        self.cp.queues[0].clear();
                    }
                }
            }
            ME_RAM_ADDR => {
                let v = self.regs.write(offset, value);
                self.me.set_write_address(v as u8);
            }
            ME_RAM_RADDR => {
                let v = self.regs.write(offset, value);
                self.me.set_read_address(v as u8, self.faults.me_ram_corrupt);
            }
            ME_RAM_DATAH => self.me.write_high(self.regs.write(offset, value)),
            ME_RAM_DATAL => {
                let code = self.me.addresses_code();
                if !self.me.write_low(self.regs.write(offset, value)) {
                    return Err(self.fail(error_code::UCODE_OVERFLOW, dev));
                }
                if code && self.streams_enabled() {
                    // §5.8 step 1 / §5.12: the ME would run a half-written RAM.
                    return Err(self.fail(error_code::ME_RAM_WRITE_WHILE_RUNNING, dev));
                }
            }
            IB_BUFSZ | IB2_BUFSZ => {
                self.regs.write(offset, value);
                if let Source::Packet { stream, last } = source {
                    self.request_ib(offset == IB2_BUFSZ, stream, last, dev)?;
                }
            }
            CTM_CB_SIZE => {
                let size = self.regs.write(offset, value);
                if let Source::Packet { .. } = source {
                    self.ctm_submit(size, dev)?;
                }
            }
            CSQ_CNTL => {
                self.regs.write(offset, value);
                let mode = cp::CP_CSQ_CNTL::from_raw(self.regs.stored(CSQ_CNTL)).csq_mode_raw();
                if (9..=14).contains(&mode) {
                    // §11.1 lists CSQ_MODE 0-8 and 15; the rest are reserved.
                    return Err(self.fail(error_code::BAD_CONFIGURATION, dev));
                }
            }
            GEN_INT_CNTL => {
                self.regs.write(offset, value);
                self.update_irq(dev);
            }
            GEN_INT_STATUS => {
                // Write 1 to clear SW_INT and SCRATCH_INT_STAT; write 1 to SW_INT_SET to
                // raise SW_INT (Linux rs600d.h / r100.c).
                let mut status = self.regs.stored(offset);
                status &= !(value & (GEN_INT_SW | GEN_INT_SCRATCH));
                if value & GEN_INT_SW_SET != 0 {
                    status |= GEN_INT_SW;
                }
                self.regs.set(offset, status);
                self.update_irq(dev);
            }
            RBBM_SOFT_RESET => {
                self.regs.write(offset, value);
                if self.in_soft_reset() {
                    if self.streams_enabled() {
                        // §5.8 step 1 comes first: "effectively disabling the CP".
                        return Err(self.fail(error_code::RESET_WHILE_RUNNING, dev));
                    }
                    self.soft_reset_cp();
                }
            }
            _ => {
                let stored = self.regs.write(offset, value);
                if let Some(n) = Self::scratch_index(offset) {
                    self.scratch_writeback(n, stored, dev)?;
                }
            }
        }
        Ok(())
    }

    /// §5.9: copy SCRATCH_REGn to `SCRATCH_ADDR + 4n` under SCRATCH_UMSK; then the R5xx
    /// scratch compare.
    fn scratch_writeback(
        &mut self,
        n: u32,
        value: u32,
        dev: &mut DeviceContext<'_>,
    ) -> Result<(), Stop> {
        if self.regs.stored(SCRATCH_UMSK) & (1 << n) == 0 || dev.failed() {
            return Ok(());
        }
        let base = cp::SCRATCH_ADDR::from_raw(self.regs.stored(SCRATCH_ADDR)).scratch_addr();
        // SCRATCH_ADDR 0 is its reset value: the copy's place was never programmed.
        let address = base.checked_offset(u64::from(n) * 4).filter(|_| base.0 != 0);
        if address.is_none_or(|a| dev.dma_write_u32(a.0, value).is_err()) {
            return Err(self.fail(error_code::DMA_WRITE_FAULT, dev));
        }
        self.stats.scratch_writebacks += 1;
        if let Some(c) = self.compare
            && u32::from(c.pair) == n / 2
        {
            let lo = self.regs.stored(SCRATCH_REG0 + (n & !1) * SCRATCH_STRIDE);
            let hi = self.regs.stored(SCRATCH_REG0 + (n | 1) * SCRATCH_STRIDE);
            if (u64::from(hi) << 32 | u64::from(lo)) >= c.reference {
                let status = self.regs.stored(GEN_INT_STATUS) | GEN_INT_SCRATCH;
                self.regs.set(GEN_INT_STATUS, status);
                self.update_irq(dev);
            }
        }
        Ok(())
    }

    /// A `CTM_CB_SIZE` write from a command stream: the PE starts consuming the command buffer
    /// at `CTM_CB_BASE` (CTM guide §2.2); the CP parses its next dword once the buffer is
    /// consumed ([`CTM_UNITS_PER_TICK`] per tick). MC addresses are
    /// bus addresses (§2.1.4 leaves the mapping to the system).
    fn ctm_submit(&mut self, size: u32, dev: &mut DeviceContext<'_>) -> Result<(), Stop> {
        if let Some(code) = self.ctm.error {
            // The CTM units stay stopped until the CP is reset.
            return Err(self.fail(code, dev));
        }
        // ADDR holds address bits 31:2: the whole address fits the low 32 bits.
        let base = cp::CTM_CB_BASE::from_raw(self.regs.stored(CTM_CB_BASE)).addr().low();
        // Program loading (CTM guide §4.1.4): the dpp_proginfo registers, as the R5xx
        // shader unit interprets them (§11.10): START/END relative to OFFSET_ADDR.
        let code_addr = us::US_CODE_ADDR::from_raw(self.regs.stored(US_CODE_ADDR));
        let code_offset = us::US_CODE_OFFSET::from_raw(self.regs.stored(US_CODE_OFFSET));
        let fc = us::US_FC_CTRL::from_raw(self.regs.stored(US_FC_CTRL));
        let offset = u32::from(code_offset.offset_addr());
        self.ctm.engine.program = ctm_model::ProgramInfo {
            start: offset + u32::from(code_addr.start_addr()),
            end: offset + u32::from(code_addr.end_addr()),
            code_offset: offset,
            full_flow_control: fc.full_fc_en()
                == us::us_fc_ctrl::FullFcEn::UseFullPixelShader30FlowControl,
            // US_CONFIG bit 0 (uncached output, CTM guide §4.1.4) is reserved in §11.10: the
            // register file masks it, so outputs are always cached.
            uncached_output: false,
        };
        // The CP waits for the CTM units before its next dword; `run` advances them.
        if let Err(e) = self.ctm.engine.begin(base, size) {
            self.ctm.error = Some(e.code());
            return Err(self.fail(e.code(), dev));
        }
        Ok(())
    }

    /// One tick of the CTM units: [`CTM_UNITS_PER_TICK`] work units of the buffer in flight.
    /// `Ok(true)` when the buffer is consumed (the CP may go on).
    fn ctm_advance(&mut self, dev: &mut DeviceContext<'_>) -> Result<bool, Stop> {
        let slice = {
            let mut mem = DmaMemory::new(dev, 0);
            self.ctm.engine.advance(CTM_UNITS_PER_TICK, &mut mem)
        };
        self.stats.ctm_units += slice.units;
        match slice.result {
            Ok(ctm_model::Progress::Running) => Ok(false),
            Ok(ctm_model::Progress::Done(_)) => {
                self.ctm.consumed = self.ctm.consumed.wrapping_add(1);
                Ok(true)
            }
            Ok(ctm_model::Progress::Idle) => Ok(true),
            Err(e) => {
                self.ctm.error = Some(e.code());
                Err(self.fail(e.code(), dev))
            }
        }
    }

    /// §5.11: a host write to a stream's aperture.
    fn pio_write(
        &mut self,
        stream: Stream,
        value: u32,
        dev: &mut DeviceContext<'_>,
    ) -> Result<(), Stop> {
        if self.delivery(stream) != Delivery::Pio || self.in_soft_reset() {
            self.stats.pio_dropped += 1;
            return Ok(());
        }
        if self.cp.queues[stream as usize].len() >= self.queue_capacity(stream) {
            return Err(self.fail(error_code::PIO_OVERFLOW, dev));
        }
        self.cp.push(stream, value);
        Ok(())
    }

    /// §5.6/§5.10: a BUFSZ write from a packet.
    fn request_ib(
        &mut self,
        ib2: bool,
        from: Stream,
        last: bool,
        dev: &mut DeviceContext<'_>,
    ) -> Result<(), Stop> {
        let (parent, target) = if ib2 {
            (Stream::Indirect1, Stream::Indirect2)
        } else {
            (Stream::Primary, Stream::Indirect1)
        };
        if from != parent {
            return Err(self.fail(error_code::IB_NESTING, dev));
        }
        if !last || self.cp.pending_ib.is_some() {
            return Err(self.fail(error_code::IB_SEQUENCE, dev));
        }
        if self.delivery(target) == Delivery::Off {
            return Err(self.fail(error_code::STREAM_DISABLED, dev));
        }
        self.cp.pending_ib = Some(target);
        Ok(())
    }

    /// Start the IB requested by the packet that just ended.
    fn start_ib(&mut self, target: Stream) {
        let (base, size) = match target {
            Stream::Indirect2 => (
                cp::CP_IB2_BASE::from_raw(self.regs.stored(IB2_BASE)).ib2_base(),
                self.regs.stored(IB2_BUFSZ),
            ),
            _ => (
                cp::CP_IB_BASE::from_raw(self.regs.stored(IB_BASE)).ib_base(),
                self.regs.stored(IB_BUFSZ),
            ),
        };
        let ib = Ib {
            fetch_address: base.0,
            to_fetch: size,
            to_consume: size,
            delivery: self.delivery(target),
        };
        if target == Stream::Indirect2 {
            self.cp.ib2 = Some(ib);
            self.stats.ibs_started[1] += 1;
        } else {
            self.cp.ib1 = Some(ib);
            self.stats.ibs_started[0] += 1;
        }
    }

    // ---------------------------------------------------------------------------------------
    // Fetch

    /// Read `n` dwords of command data at `address` (BUF_SWAP applied) into `stream`'s queue.
    fn fetch(
        &mut self,
        stream: Stream,
        address: u64,
        n: u32,
        dev: &mut DeviceContext<'_>,
    ) -> Result<(), Stop> {
        if std::mem::take(&mut self.faults.dma_fault_next_fetch) {
            return Err(self.fail(error_code::DMA_FETCH_FAULT, dev));
        }
        let mut bytes = [0u8; 256];
        let len = (n as usize * 4).min(bytes.len());
        // Bus address 0: an indirect buffer (or ring) never placed.
        if address == 0 || dev.dma_read(address, &mut bytes[..len]).is_err() {
            return Err(self.fail(error_code::DMA_FETCH_FAULT, dev));
        }
        let mode = self.rb_cntl().buf_swap_raw();
        for c in bytes[..len].chunks_exact(4) {
            self.cp.push(stream, swap(u32::from_le_bytes([c[0], c[1], c[2], c[3]]), mode));
        }
        Ok(())
    }

    /// §5.4: fetch the next chunk of the ring into the primary queue.
    fn fetch_ring(&mut self, dev: &mut DeviceContext<'_>) -> Result<(), Stop> {
        let size = self.ring_dwords();
        let rptr = self.cp.rptr & (size - 1);
        let wptr = self.wptr();
        if rptr == wptr {
            return Ok(());
        }
        let available = wptr.wrapping_sub(rptr) & (size - 1);
        let n = available.min(self.fetch_dwords()).min(size - rptr);
        let base = cp::CP_RB_BASE::from_raw(self.regs.stored(RB_BASE)).rb_base().0;
        if base == 0 {
            // CP_RB_BASE keeps its reset value: the ring was never placed.
            return Err(self.fail(error_code::DMA_FETCH_FAULT, dev));
        }
        self.fetch(Stream::Primary, base + u64::from(rptr) * 4, n, dev)?;
        self.cp.rptr = (rptr + n) & (size - 1);
        self.cp.since_writeback = self.cp.since_writeback.saturating_add(n);
        if self.cp.since_writeback >= self.block_dwords() || self.cp.rptr == wptr {
            self.cp.since_writeback = 0;
            self.writeback_rptr(dev)?;
        }
        Ok(())
    }

    /// §5.4: bus-master write of the read pointer to the host's copy.
    fn writeback_rptr(&mut self, dev: &mut DeviceContext<'_>) -> Result<(), Stop> {
        if self.rb_cntl().rb_no_update_raw() == 1 {
            return Ok(());
        }
        let addr = cp::CP_RB_RPTR_ADDR::from_raw(self.regs.stored(RB_RPTR_ADDR));
        let address = addr.rb_rptr_addr().0;
        let value = swap(self.cp.rptr, u32::from(addr.rb_rptr_swap()));
        // Address 0 is the reset value: the driver never said where the copy goes.
        if address == 0 || dev.dma_write_u32(address, value).is_err() {
            return Err(self.fail(error_code::DMA_WRITE_FAULT, dev));
        }
        self.stats.rptr_writebacks += 1;
        Ok(())
    }

    /// The next dword for the parser from the active stream, fetching when its queue is empty
    /// (one fetch per tick: a second one waits for the next tick).
    fn next_dword(&mut self, dev: &mut DeviceContext<'_>) -> Result<Next, Stop> {
        let stream = self.cp.active();
        let chunk = self.fetch_dwords();
        let word = |w: Option<u32>| w.map_or(Next::Starved, Next::Word);
        let empty = self.cp.queues[stream as usize].is_empty();
        let ib = match stream {
            Stream::Primary => {
                if empty && self.delivery(Stream::Primary) == Delivery::BusMaster {
                    let ring_empty = (self.cp.rptr & (self.ring_dwords() - 1)) == self.wptr();
                    if !ring_empty && std::mem::replace(&mut self.cp.fetched, true) {
                        return Ok(Next::Later);
                    }
                    self.fetch_ring(dev)?;
                }
                return Ok(word(self.cp.pop(Stream::Primary)));
            }
            Stream::Indirect1 => self.cp.ib1,
            Stream::Indirect2 => self.cp.ib2,
        };
        let Some(mut ib) = ib else { return Ok(Next::Starved) };
        if ib.to_consume == 0 {
            // Exhausted in the middle of a packet (boundaries are handled in `end_packet`).
            return Err(self.fail(error_code::INVALID_PACKET, dev));
        }
        if empty && ib.delivery == Delivery::BusMaster {
            let n = ib.to_fetch.min(chunk);
            if n > 0 {
                if std::mem::replace(&mut self.cp.fetched, true) {
                    return Ok(Next::Later);
                }
                self.fetch(stream, ib.fetch_address, n, dev)?;
                ib.fetch_address = ib.fetch_address.saturating_add(u64::from(n) * 4);
                ib.to_fetch -= n;
            }
        }
        let next = self.cp.pop(stream);
        if next.is_some() {
            ib.to_consume -= 1;
        }
        match stream {
            Stream::Indirect2 => self.cp.ib2 = Some(ib),
            _ => self.cp.ib1 = Some(ib),
        }
        Ok(word(next))
    }

    // ---------------------------------------------------------------------------------------
    // Parse

    /// A packet ended: start a requested IB, then return from exhausted IBs.
    fn end_packet(&mut self) {
        self.cp.packet = Packet::Header;
        self.cp.packets_done += 1;
        if let Some(target) = self.cp.pending_ib.take() {
            self.start_ib(target);
        }
        loop {
            if self.cp.ib2.is_some_and(|ib| ib.to_consume == 0) {
                self.cp.ib2 = None;
            } else if self.cp.ib2.is_none() && self.cp.ib1.is_some_and(|ib| ib.to_consume == 0) {
                self.cp.ib1 = None;
            } else {
                break;
            }
        }
    }

    /// Write from a packet to dword register `index`.
    fn packet_write(
        &mut self,
        index: u32,
        value: u32,
        stream: Stream,
        last: bool,
        dev: &mut DeviceContext<'_>,
    ) -> Result<(), Stop> {
        match index.checked_mul(4).filter(|&o| o < REG_SPACE) {
            Some(offset) => {
                self.write_register(offset, value, Source::Packet { stream, last }, dev)
            }
            None => {
                self.stats.writes_dropped += 1;
                Ok(())
            }
        }
    }

    fn parse(
        &mut self,
        word: u32,
        stream: Stream,
        dev: &mut DeviceContext<'_>,
    ) -> Result<(), Stop> {
        match self.cp.packet {
            Packet::Header => match Header::decode(word) {
                Header::Type0 { base_index, one_reg_wr, count } => {
                    self.stats.packets[0] += 1;
                    self.cp.packet =
                        Packet::Type0 { register: base_index, one_reg_wr, remaining: count };
                }
                Header::Type1 { reg_index1, reg_index2 } => {
                    self.stats.packets[1] += 1;
                    self.cp.packet =
                        Packet::Type1 { first: reg_index1, second: reg_index2, first_done: false };
                }
                Header::Type2 => {
                    self.stats.packets[2] += 1;
                    self.end_packet();
                }
                Header::Type3 { opcode, count } => {
                    self.stats.packets[3] += 1;
                    let class = pm4::classify(opcode);
                    match class {
                        Class::Unknown => return Err(self.fail(error_code::UNKNOWN_OPCODE, dev)),
                        Class::Unsupported => {
                            return Err(self.fail(error_code::UNSUPPORTED_PACKET, dev));
                        }
                        _ => {}
                    }
                    if !pm4::body_len(opcode).is_some_and(|len| len.accepts(count)) {
                        // §6.2: a body that does not fit the packet's table.
                        return Err(self.fail(error_code::INVALID_PACKET, dev));
                    }
                    self.cp.packet = Packet::Type3 {
                        opcode,
                        class,
                        remaining: count,
                        total: count,
                        body: [0; 2],
                    };
                }
            },
            Packet::Type0 { register, one_reg_wr, remaining } => {
                let remaining = remaining - 1;
                let next = if one_reg_wr { register } else { register.saturating_add(1) };
                self.cp.packet = Packet::Type0 { register: next, one_reg_wr, remaining };
                self.packet_write(register, word, stream, remaining == 0, dev)?;
                if remaining == 0 {
                    self.end_packet();
                }
            }
            Packet::Type1 { first, second, first_done } => {
                if first_done {
                    self.packet_write(second, word, stream, true, dev)?;
                    self.end_packet();
                } else {
                    self.cp.packet = Packet::Type1 { first, second, first_done: true };
                    self.packet_write(first, word, stream, false, dev)?;
                }
            }
            Packet::Type3 { opcode, class, remaining, total, mut body } => {
                let index = total - remaining;
                if let Some(slot) = body.get_mut(index as usize) {
                    *slot = word;
                }
                let remaining = remaining - 1;
                self.cp.packet = Packet::Type3 { opcode, class, remaining, total, body };
                if remaining == 0 {
                    if !pm4::body_consistent(opcode, total, body[0]) {
                        return Err(self.fail(error_code::INVALID_PACKET, dev));
                    }
                    self.execute(class, total, body, stream, dev)?;
                    self.end_packet();
                }
            }
        }
        Ok(())
    }

    /// A complete type-3 packet (§6.2).
    fn execute(
        &mut self,
        class: Class,
        count: u32,
        body: [u32; 2],
        stream: Stream,
        dev: &mut DeviceContext<'_>,
    ) -> Result<(), Stop> {
        match class {
            Class::Nop => {}
            Class::Consumed => self.stats.consumed += 1,
            Class::WaitSemaphore => {
                // §6.2.4.1: offset 0xFC-0xFF, optional reset value (the table's lengths).
                use baregpu_regs::r5xx::packets::{WAIT_SEMAPHORE, wait_semaphore as w};
                let body = &body[..(count as usize).min(body.len())];
                let slot = w::SEMAPHORE_OFFSET.get(body);
                if !(0xFC..=0xFF).contains(&slot)
                    || WAIT_SEMAPHORE.check_body(count as usize).is_err()
                {
                    return Err(self.fail(error_code::INVALID_PACKET, dev));
                }
                let reset = (count == 2).then_some(w::SEMAPHORE_RESET.get(body));
                self.cp.wait = Some(Wait::Semaphore { slot: slot as u8, reset });
            }
            Class::WaitMem => {
                // §6.2.5.2: SEM_ADDR[31:2], SEM_LEN; uses IB2, so not from IB2.
                use baregpu_regs::r5xx::packets::{WAIT_MEM, wait_mem::Body};
                if stream == Stream::Indirect2 {
                    return Err(self.fail(error_code::IB_NESTING, dev));
                }
                let body = &body[..(count as usize).min(body.len())];
                let (Ok(()), Ok(wait)) = (WAIT_MEM.check_body(count as usize), Body::unpack(body))
                else {
                    return Err(self.fail(error_code::INVALID_PACKET, dev));
                };
                self.regs.write(IB2_BASE, wait.0[0]);
                self.regs.write(IB2_BUFSZ, wait.sem_len());
                if wait.sem_len() != 2 {
                    // "the CP micro-engine will become confused and ultimately hang".
                    self.cp.hang = Some(Hang::WaitMemLength(wait.sem_len()));
                    return Ok(());
                }
                let address = wait.sem_addr().0;
                if address == 0 {
                    // SEM_ADDR 0: no semaphore was placed there.
                    return Err(self.fail(error_code::DMA_FETCH_FAULT, dev));
                }
                self.cp.wait = Some(Wait::Memory { address });
            }
            Class::Unsupported | Class::Unknown => {
                // Rejected at the header.
                return Err(self.fail(error_code::INVALID_PACKET, dev));
            }
        }
        Ok(())
    }

    /// Whether a wait is satisfied (and apply its completion).
    fn wait_done(&mut self, wait: Wait, dev: &mut DeviceContext<'_>) -> Result<bool, Stop> {
        match wait {
            Wait::Semaphore { slot, reset } => {
                if self.me.semaphore(slot) != 0 {
                    return Ok(false);
                }
                if let Some(v) = reset {
                    self.me.set_semaphore(slot, v);
                }
            }
            Wait::Memory { address } => {
                // The semaphore and its fixed second dword (§6.2.5.2), read through IB2.
                let mut sem = [0u8; 8];
                if dev.dma_read(address, &mut sem).is_err() {
                    return Err(self.fail(error_code::DMA_FETCH_FAULT, dev));
                }
                let [v0, v1, v2, v3, f0, f1, f2, f3] = sem;
                let fixed = u32::from_le_bytes([f0, f1, f2, f3]);
                if fixed != 2 {
                    self.cp.hang = Some(Hang::WaitMemFixedWord(fixed));
                    return Ok(false);
                }
                if u32::from_le_bytes([v0, v1, v2, v3]) != 0 {
                    return Ok(false);
                }
            }
        }
        self.cp.wait = None;
        Ok(true)
    }

    /// One tick (see "Work per tick" in the crate docs).
    fn run(&mut self, dev: &mut DeviceContext<'_>) -> Result<Activity, Stop> {
        if let Some(w) = self.cp.wait
            && !self.wait_done(w, dev)?
        {
            // A hung CP has nothing left to tick; its status shows busy.
            let hung = self.cp.hang.is_some();
            return Ok(if hung { Activity::Idle } else { Activity::Waiting });
        }
        let slow = self.faults.slow.map(u32::from);
        if let Some(ticks) = slow {
            // One packet per `ticks` ticks: the ticks in between only pass time.
            self.cp.slow_ticks = self.cp.slow_ticks.saturating_add(1);
            if self.cp.slow_ticks < ticks {
                return Ok(if self.pending() { Activity::Busy } else { Activity::Idle });
            }
        }
        if self.ctm.engine.in_flight() && !self.ctm_advance(dev)? {
            return Ok(Activity::Busy);
        }
        self.cp.fetched = false;
        let done = self.cp.packets_done;
        for _ in 0..DWORDS_PER_TICK {
            let stream = self.cp.active();
            let word = match self.next_dword(dev)? {
                Next::Word(w) => w,
                Next::Starved => return Ok(Activity::Idle),
                Next::Later => return Ok(Activity::Busy),
            };
            self.parse(word, stream, dev)?;
            if self.cp.hang.is_some() {
                return Ok(Activity::Idle);
            }
            if self.ctm.engine.in_flight() {
                // A CTM buffer started: its work begins on the next tick.
                return Ok(Activity::Busy);
            }
            if self.cp.wait.is_some() {
                // Check it on the next tick (it may already be satisfied).
                return Ok(Activity::Busy);
            }
            if slow.is_some() && self.cp.packets_done != done {
                self.cp.slow_ticks = 0;
                return Ok(Activity::Busy);
            }
        }
        Ok(Activity::Busy)
    }
}

impl GpuModel for R5xxModel {
    fn pci_identity(&self) -> PciIdentity {
        BAR.present(PciIdentity::new(VENDOR_ID, DEVICE_ID, CLASS))
    }

    fn mmio_read(&mut self, bar: u8, offset: u32, _dev: &mut DeviceContext<'_>) -> u32 {
        BAR.read(bar, self.faults.registers_all_ones, || self.read_register(offset))
    }

    fn mmio_write(&mut self, bar: u8, offset: u32, value: u32, dev: &mut DeviceContext<'_>) {
        // A failure is recorded in the CP error and the device's error state.
        BAR.write(bar, self.faults.registers_all_ones, || {
            let _ = self.write_register(offset, value, Source::Mmio, dev);
        });
    }

    fn tick(&mut self, dev: &mut DeviceContext<'_>) -> Activity {
        if !self.running() {
            return Activity::Idle;
        }
        self.run(dev).unwrap_or(Activity::Idle)
    }

    fn reset(&mut self) {
        let limits = self.ctm_limits;
        *self = R5xxModel::with_faults(self.faults);
        self.set_ctm_limits(limits);
    }

    fn inject(&mut self, switches: u32) -> bool {
        self.faults = Faults::from_switches(switches);
        true
    }
}

#[cfg(test)]
mod tests;
