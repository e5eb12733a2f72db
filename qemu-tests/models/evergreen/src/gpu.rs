//! The emulated GPU: register file, microcode RAMs, command processor, IH ring, CP DMA and the
//! compute dispatches it hands to the shader core. See the crate documentation for what is
//! emulated and the decisions where the document is silent.

use crate::cache::{Caches, Range};
use crate::chip::{Asic, Engine, KnownImage, UcodeRam};
use crate::faults::Faults;
use crate::ih::{self, Ih};
use crate::pm4::{self, Shape};
use crate::regfile::REG_SPACE;
use crate::shader::{
    CS_RESOURCE_BASE, CS_RESOURCE_COUNT, Dispatch, DispatchState, Limits, MemoryFault, Path,
    RAT_COUNT, RatRegs, ShaderMemory, StepResult,
};
use baregpu_hal::register::{Array, Register};
use baregpu_regs::evergreen::Chipset;
use baregpu_regs::evergreen::{cb, cp, grbm, ih as ihr, rlc, spi, sq, srbm};
use gpu_device_model::regfile::RegisterFile;
use gpu_device_model::{Activity, DeviceContext, GpuModel, PciIdentity, RegisterBar};
use std::collections::VecDeque;

/// PCI vendor ID (ATI/AMD).
pub const VENDOR_ID: u16 = 0x1002;
/// PCI class: display controller, VGA compatible.
pub const CLASS: u32 = 0x03_0000;
/// BAR0: the register space (the model's choice of BAR, as for the R5xx model).
pub const REGISTER_BAR: u8 = 0;
/// BAR0 size.
pub const REGISTER_BAR_SIZE: u64 = REG_SPACE as u64;
/// The register BAR as the framework dispatches it.
const BAR: RegisterBar = RegisterBar::new(REGISTER_BAR, REGISTER_BAR_SIZE);
/// The mailbox interrupt line the GPU drives (delivered as MSI-X by the QEMU harness).
pub const IRQ_LINE: u32 = 1 << 0;

/// Command dwords fetched per tick at most.
pub const DWORDS_PER_TICK: u32 = 32;
/// Shader work units ([`crate::shader::Dispatch::step`]) per tick at most.
pub const SHADER_UNITS_PER_TICK: u64 = 256;
/// CP DMA bytes per tick at most.
pub const DMA_BYTES_PER_TICK: u32 = 4096;
/// Dispatches the shader core runs at once; a further DISPATCH_* stalls the CP until one ends.
pub const MAX_DISPATCHES_IN_FLIGHT: usize = 2;
/// CP DMA transfers queued at once; a further CP_DMA stalls the CP until one ends.
pub const MAX_DMA_IN_FLIGHT: usize = 2;
/// End-of-pipe events (EOP, EOS, semaphore signals, cache flushes) in flight; a further one
/// stalls the CP.
pub const MAX_PIPE_EVENTS: usize = 8;
/// Work units one tick may run at most. Each fetched dword, shader unit (one instruction of one
/// wave, with the cache lines its exports evict), poll, cache line a flush writes back or 64
/// DMA bytes is one unit. The CP and the engines beside it each do one
/// bounded thing per tick: the CP fetches at most [`DWORDS_PER_TICK`] dwords (+ the packet they
/// complete, whose own work is at most a flush of the colour-buffer cache) or polls once; the
/// DMA engine moves one [`DMA_BYTES_PER_TICK`] slice; the shader core runs one step of
/// [`SHADER_UNITS_PER_TICK`]; the end of the pipe retires one event (which may flush the
/// colour-buffer cache).
pub const MAX_UNITS_PER_TICK: u64 = DWORDS_PER_TICK as u64
    + 1
    + DMA_BYTES_PER_TICK as u64 / 64
    + SHADER_UNITS_PER_TICK
    + 2 * crate::cache::CACHE_LINES as u64;

/// VGT_EVENT_INITIATOR event types the model acts on (Linux radeon evergreend.h; §9.6.1 and
/// §9.6.2 name them).
pub mod event {
    /// CACHE_FLUSH_TS: end-of-pipe event after the CB/DB/SX caches are flushed (§9.6.2).
    pub const CACHE_FLUSH_TS: u32 = 0x04;
    /// CACHE_FLUSH: the CB/DB caches are flushed when the event reaches the end of the pipe.
    pub const CACHE_FLUSH: u32 = 0x06;
    /// CS_PARTIAL_FLUSH (EVENT_INDEX 4, §9.6.1): the CP waits until the compute shaders
    /// before it are done.
    pub const CS_PARTIAL_FLUSH: u32 = 0x07;
    /// CACHE_FLUSH_AND_INV_EVENT_TS (§9.6.2 "Cache Flush And Inval TS").
    pub const CACHE_FLUSH_AND_INV_TS: u32 = 0x14;
    /// CACHE_FLUSH_AND_INV_EVENT.
    pub const CACHE_FLUSH_AND_INV: u32 = 0x16;
    /// EVENT_INDEX of the partial flushes (§9.6.1 "0100: CS_PARTIAL_FLUSH, ...").
    pub const INDEX_PARTIAL_FLUSH: u32 = 4;

    /// Whether an event flushes the colour-buffer cache when it reaches the end of the pipe.
    pub const fn flushes(event_type: u32) -> bool {
        matches!(
            event_type,
            CACHE_FLUSH_TS | CACHE_FLUSH | CACHE_FLUSH_AND_INV_TS | CACHE_FLUSH_AND_INV
        )
    }
}

/// Error codes in the mailbox header (`DeviceContext::fail`): the framework's shared
/// command-processor vocabulary (`gpu_device_model::cp_error`), with what raises each here.
/// Shader-core errors use [`crate::shader::ShaderError::code`] (0x31xx and up).
pub mod error_code {
    /// `CP_RB_CNTL.RB_BUFSZ` or `IH_RB_CNTL.IH_IB_SIZE` outside the sizes the CP and IH
    /// support, when the ring is used.
    pub use gpu_device_model::cp_error::BAD_CONFIGURATION;
    /// A command fetch outside guest memory, with bus mastering off or from an unprogrammed
    /// `CP_RB_BASE` 0 (also the injected `dma-fault`).
    pub use gpu_device_model::cp_error::DMA_FETCH_FAULT;
    /// A write-back or packet write outside guest memory, or to an unprogrammed address 0.
    pub use gpu_device_model::cp_error::DMA_WRITE_FAULT;
    /// INDIRECT_BUFFER deeper than IB2.
    pub use gpu_device_model::cp_error::IB_NESTING;
    /// A type-1 packet (§9.1.2), a count that does not fit the opcode's body (§9.2-§9.7), a
    /// reserved field value (EVENT_INDEX/EVENT_TYPE of EOP and EOS, IB_SIZE 0 or its reserved
    /// bits), a packet running past the end of an indirect buffer.
    pub use gpu_device_model::cp_error::INVALID_PACKET;
    /// A packet before ME_INITIALIZE (§9.2.1: sent "immediately after loading the microcode").
    pub use gpu_device_model::cp_error::ME_NOT_INITIALIZED;
    /// A DISPATCH_* or DEALLOC_STATE without the compute bit (§9.1.4 bit 1, §9.3.12), or
    /// DISPATCH_INITIATOR without COMPUTE_SHADER_EN (§3.2 step 11).
    pub use gpu_device_model::cp_error::NOT_COMPUTE;
    /// A SET_*_REG / SET_* constant write outside the packet's register range (§9.4.13-§9.4.19).
    pub use gpu_device_model::cp_error::REG_RANGE;
    /// `GRBM_SOFT_RESET.SOFT_RESET_CP` asserted while the ME or PFP runs.
    pub use gpu_device_model::cp_error::RESET_WHILE_RUNNING;
    /// A PFP, ME or RLC word written past the end of its RAM.
    pub use gpu_device_model::cp_error::UCODE_OVERFLOW;
    /// A microcode word written while its engine runs (ME/PFP not halted, RLC enabled).
    pub use gpu_device_model::cp_error::UCODE_WRITE_WHILE_RUNNING;
    /// A type-3 opcode the chip does not have.
    pub use gpu_device_model::cp_error::UNKNOWN_OPCODE;
    /// A documented packet or mode the model does not emulate (drawing, GDS, register-space
    /// CP DMA, PrimCount predication).
    pub use gpu_device_model::cp_error::UNSUPPORTED_PACKET;
}

const fn off<R: Register>() -> u32 {
    R::OFFSET as u32
}
const ME_CNTL: u32 = off::<cp::CP_ME_CNTL>();
const PFP_ADDR: u32 = off::<cp::CP_PFP_UCODE_ADDR>();
const PFP_DATA: u32 = off::<cp::CP_PFP_UCODE_DATA>();
const ME_RADDR: u32 = off::<cp::CP_ME_RAM_RADDR>();
const ME_WADDR: u32 = off::<cp::CP_ME_RAM_WADDR>();
const ME_DATA: u32 = off::<cp::CP_ME_RAM_DATA>();
const RLC_CNTL: u32 = off::<rlc::RLC_CNTL>();
const RLC_ADDR: u32 = off::<rlc::RLC_UCODE_ADDR>();
const RLC_DATA: u32 = off::<rlc::RLC_UCODE_DATA>();
const RB_BASE: u32 = off::<cp::CP_RB_BASE>();
const RB_CNTL: u32 = off::<cp::CP_RB_CNTL>();
const RB_RPTR: u32 = off::<cp::CP_RB_RPTR>();
const RB_RPTR_WR: u32 = off::<cp::CP_RB_RPTR_WR>();
const RB_RPTR_ADDR: u32 = off::<cp::CP_RB_RPTR_ADDR>();
const RB_RPTR_ADDR_HI: u32 = off::<cp::CP_RB_RPTR_ADDR_HI>();
const RB_WPTR: u32 = off::<cp::CP_RB_WPTR>();
const CP_INT_CNTL: u32 = off::<cp::CP_INT_CNTL>();
const COHER_CNTL: u32 = off::<cp::CP_COHER_CNTL>();
const COHER_SIZE: u32 = off::<cp::CP_COHER_SIZE>();
const COHER_BASE: u32 = off::<cp::CP_COHER_BASE>();
const SCRATCH_REG0: u32 = off::<cp::SCRATCH_REG0>();
const SCRATCH_COUNT: u32 = <cp::SCRATCH_REG0 as Array>::COUNT as u32;
const SCRATCH_UMSK: u32 = off::<cp::SCRATCH_UMSK>();
const SCRATCH_ADDR: u32 = off::<cp::SCRATCH_ADDR>();
const GRBM_SOFT_RESET: u32 = off::<grbm::GRBM_SOFT_RESET>();
const GRBM_STATUS: u32 = off::<grbm::GRBM_STATUS>();
const SRBM_SOFT_RESET: u32 = off::<srbm::SRBM_SOFT_RESET>();
const IH_RB_CNTL: u32 = off::<ihr::IH_RB_CNTL>();
const IH_RB_BASE: u32 = off::<ihr::IH_RB_BASE>();
const IH_RB_RPTR: u32 = off::<ihr::IH_RB_RPTR>();
const IH_RB_WPTR: u32 = off::<ihr::IH_RB_WPTR>();
const IH_WPTR_ADDR_LO: u32 = off::<ihr::IH_RB_WPTR_ADDR_LO>();
const IH_WPTR_ADDR_HI: u32 = off::<ihr::IH_RB_WPTR_ADDR_HI>();
const IH_CNTL: u32 = off::<ihr::IH_CNTL>();
const VGT_EVENT_INITIATOR: u32 = off::<baregpu_regs::evergreen::vgt::VGT_EVENT_INITIATOR>();
const VGT_DISPATCH_INITIATOR: u32 = off::<baregpu_regs::evergreen::vgt::VGT_DISPATCH_INITIATOR>();
const PGM_START_LS: u32 = off::<sq::SQ_PGM_START_LS>();
const PGM_RESOURCES_LS: u32 = off::<sq::SQ_PGM_RESOURCES_LS>();
const LDS_ALLOC: u32 = off::<sq::SQ_LDS_ALLOC>();
const CONST_CACHE_LS: u32 = off::<sq::SQ_ALU_CONST_CACHE_LS_0>();
const CONST_SIZE_LS: u32 = off::<sq::SQ_ALU_CONST_BUFFER_SIZE_LS_0>();
const RESOURCE0: u32 = off::<sq::SQ_VTX_CONSTANT_WORD0_0>();
const RESOURCE_STRIDE: u32 = <sq::SQ_VTX_CONSTANT_WORD0_0 as Array>::STRIDE as u32;
const LOOP_CONST0: u32 = off::<sq::SQ_LOOP_CONST_0>();
const INPUT_CNTL: u32 = off::<spi::SPI_COMPUTE_INPUT_CNTL>();
const NUM_THREAD: [u32; 3] = [
    off::<spi::SPI_COMPUTE_NUM_THREAD_X>(),
    off::<spi::SPI_COMPUTE_NUM_THREAD_Y>(),
    off::<spi::SPI_COMPUTE_NUM_THREAD_Z>(),
];
const CB_COLOR0_BASE: u32 = off::<cb::CB_COLOR0_BASE>();
const CB_COLOR0_STRIDE: u32 = <cb::CB_COLOR0_BASE as Array>::STRIDE as u32;
const CB_COLOR8_BASE: u32 = off::<cb::CB_COLOR8_BASE>();
const CB_COLOR8_STRIDE: u32 = <cb::CB_COLOR8_BASE as Array>::STRIDE as u32;

/// `CP_RB_CNTL.RB_BUFSZ` range (log2 quad-words): 8 dwords to 8 M dwords, the sizes the R5xx
/// document gives for the same field (§11.1); the Evergreen document is silent and the model
/// refuses a value outside instead of clamping it.
pub const RB_MIN_LOG2_QWORDS: u32 = 2;
/// Largest `CP_RB_CNTL.RB_BUFSZ`.
pub const RB_MAX_LOG2_QWORDS: u32 = 22;
/// Largest `IH_RB_CNTL.IH_IB_SIZE` (log2 dwords: a 256 KiB IH ring, a model decision; the
/// smallest is 2, one 16-byte vector).
pub const IH_MAX_LOG2_DWORDS: u32 = 16;
/// The EOP events of §9.6.2 (with EVENT_INDEX 5): CACHE_FLUSH_TS 0x04,
/// CACHE_FLUSH_AND_INV_EVENT_TS 0x14, BOTTOM_OF_PIPE_TS 0x15 (event numbers from Linux
/// radeon evergreend.h).
const EOP_EVENTS: [u32; 3] = [0x04, 0x14, 0x15];
/// The EOS events of §9.6.3 (with EVENT_INDEX 6): CS_DONE 0x2F, PS_DONE 0x30 (Mesa r600
/// evergreend.h).
const EOS_EVENTS: [u32; 2] = [0x2F, 0x30];

/// `CP_ME_CNTL` halt bits (ME 28, PFP 26).
pub const ME_HALT: u32 = cp::CP_ME_CNTL::ME_HALT.mask();
/// `CP_ME_CNTL.PFP_HALT`.
pub const PFP_HALT: u32 = cp::CP_ME_CNTL::PFP_HALT.mask();
/// `CP_INT_CNTL.TIME_STAMP_INT_ENABLE`: EOP interrupts reach the IH ring.
pub const TIME_STAMP_INT_ENABLE: u32 = cp::CP_INT_CNTL::TIME_STAMP_INT_ENABLE.mask();
/// Loop constant of the LS/CS stage 0 (Mesa evergreen_compute.c programs loop constant 160).
pub const CS_LOOP_CONST_BASE: u32 = 160;
/// SQ_BOOL_CONST word of the LS/CS stage: the sixth of the six words 0x3A500-0x3A517 (PS, VS,
/// GS, ES, HS, LS in the stage order of Mesa's resource blocks). A model decision: no public
/// source names the word per stage.
pub const CS_BOOL_CONST_WORD: u32 = 5;

/// Counters for white-box tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Packets parsed, by type (0-3).
    pub packets: [u64; 4],
    /// Type-3 packets skipped: COND_EXEC / PRED_EXEC false, or predicated off (§9.5).
    pub packets_skipped: u64,
    /// Register writes dropped: holes, read-only registers (MMIO and packets alike).
    pub writes_dropped: u64,
    /// Read-pointer write-backs.
    pub rptr_writebacks: u64,
    /// Scratch write-backs.
    pub scratch_writebacks: u64,
    /// Indirect buffers started.
    pub ibs_started: u64,
    /// IH entries written.
    pub ih_entries: u64,
    /// IH entries dropped (IH off, or ring full without overflow enabled).
    pub ih_dropped: u64,
    /// WAIT_REG_MEM polls.
    pub polls: u64,
    /// MEM_SEMAPHORE signals (§9.6.4).
    pub semaphore_signals: u64,
    /// MEM_SEMAPHORE wait polls (one per tick while the semaphore is 0).
    pub semaphore_polls: u64,
    /// CP DMA bytes moved.
    pub dma_bytes: u64,
    /// Dispatches started.
    pub dispatches: u64,
    /// Work units run (see [`MAX_UNITS_PER_TICK`]).
    pub units: u64,
    /// The most work units one tick ran.
    pub max_tick_units: u64,
    /// Ticks the CP spent waiting for an engine (CP_SYNC, CS_PARTIAL_FLUSH, SURFACE_SYNC, a
    /// full engine queue).
    pub engine_waits: u64,
    /// End-of-pipe events retired (EOP, EOS, semaphore signals, cache flushes).
    pub pipe_events: u64,
    /// Colour-buffer cache lines written back (flushes and evictions).
    pub lines_written_back: u64,
}

/// An active indirect buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Ib {
    address: u64,
    remaining: u32,
}

/// The packet being parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Packet {
    Header,
    /// Type-0: consecutive register writes (§9.1.1).
    Type0 {
        register: u32,
        remaining: u32,
    },
    /// Dwords consumed without effect (NOP body, a predicated-off packet).
    Skip {
        remaining: u32,
    },
    /// A SET_* packet: the offset word, then data dwords written as they arrive.
    Set {
        range: (u32, u32),
        next: Option<u32>,
        remaining: u32,
        legacy_zero: bool,
    },
    /// A fixed-size body collected before the packet runs.
    Collect {
        header: u32,
        need: usize,
        got: usize,
        body: [u32; pm4::MAX_COLLECT],
    },
    /// A collected packet waiting for an engine before it can run (a full queue,
    /// CS_PARTIAL_FLUSH, SURFACE_SYNC of a surface being written).
    Ready {
        header: u32,
        need: usize,
        body: [u32; pm4::MAX_COLLECT],
    },
}

/// A wait a packet left the CP in: it parses nothing until the wait ends.
#[derive(Debug, Clone)]
enum Work {
    /// WAIT_REG_MEM (§9.6.8): one poll every `interval` ticks; `idle` ticks left before the
    /// next poll.
    Wait {
        memory: bool,
        address: u64,
        function: u32,
        reference: u32,
        mask: u32,
        interval: u32,
        idle: u32,
    },
    /// MEM_SEMAPHORE wait (§9.6.4): one poll of the 64-bit semaphore per tick.
    SemaphoreWait { address: u64 },
    /// CP_DMA with CP_SYNC: until the DMA engine is idle.
    DmaSync,
}

/// A CP DMA transfer: `fill` is the value (SRC_SEL DATA), else `src` is the source address.
#[derive(Debug, Clone)]
struct DmaJob {
    fill: Option<u32>,
    src: u64,
    dst: u64,
    remaining: u32,
}

/// An event travelling down the pipe behind the dispatches issued before it: it takes effect
/// once all of them are done ("end of pipe", §9.6.2; "bottom of pipe", §9.6.4).
#[derive(Debug, Clone)]
struct PipeEvent {
    /// Dispatches with a lower id must be done first.
    after: u64,
    /// The tick it entered the pipe: it reaches the end on a later tick at the earliest, so
    /// a fence can be in flight after the CP has parsed the whole ring.
    since: u64,
    what: PipeAction,
}

#[derive(Debug, Clone)]
enum PipeAction {
    /// EVENT_WRITE_EOP (§9.6.2): flush the caches if the event says so, write, interrupt.
    Eop { flush: bool, address: u64, data_sel: u32, int_sel: u32, data: [u32; 2] },
    /// EVENT_WRITE_EOS (§9.6.3) CS Done: write DATA.
    Eos { address: u64, data: u32 },
    /// MEM_SEMAPHORE signal (§9.6.4).
    Signal { address: u64, write_one: bool },
    /// EVENT_WRITE CACHE_FLUSH(_AND_INV): flush the colour-buffer cache.
    Flush,
    /// The interrupt of an INT_SEL 2 EOP: sent when the write confirm comes back from the
    /// memory controller, one tick after the write.
    Confirmed,
}

/// The engines beside the CP: the shader core's dispatches, the DMA engine and the events in
/// the pipe. The CP hands them work and goes on parsing.
#[derive(Debug, Clone, Default)]
struct Engines {
    /// Dispatches in flight with their ids, oldest first.
    dispatches: VecDeque<(u64, Box<Dispatch>)>,
    next_dispatch: u64,
    /// Which in-flight dispatch the shader core steps next (round robin: dispatches overlap).
    turn: usize,
    dma: VecDeque<DmaJob>,
    pipe: VecDeque<PipeEvent>,
}

impl Engines {
    fn busy(&self) -> bool {
        !self.dispatches.is_empty() || !self.dma.is_empty() || !self.pipe.is_empty()
    }
}

/// Command-processor state cleared by a CP soft reset.
#[derive(Debug, Clone)]
struct Cp {
    rptr: u32,
    since_writeback: u32,
    written_back: Option<u32>,
    ibs: Vec<Ib>,
    packet: Packet,
    work: Option<Work>,
    engines: Engines,
    me_initialized: bool,
    /// The device ID ME_INITIALIZE gave (§9.2.1 DW5 23:16), which PRED_EXEC selects on.
    device_id: u8,
    /// SET_PREDICATION result: `Some(false)` skips predicated packets.
    predicate: Option<bool>,
    /// SET_BASE index 1 (DISPATCH_INDIRECT data base).
    indirect_base: u64,
    error: Option<u32>,
    slow_ticks: u32,
}

impl Cp {
    fn new() -> Self {
        Cp {
            rptr: 0,
            since_writeback: 0,
            // Nothing fetched yet: nothing to write back.
            written_back: Some(0),
            ibs: Vec::new(),
            packet: Packet::Header,
            work: None,
            engines: Engines::default(),
            me_initialized: false,
            device_id: 0,
            predicate: None,
            indirect_base: 0,
            error: None,
            slow_ticks: 0,
        }
    }
}

/// Why parsing stopped.
struct Failed;

/// The emulated Evergreen/Cayman GPU: a [`GpuModel`] with BAR0 = 256 KiB of registers.
///
/// Bring-up a driver performs (each step is required by the model):
/// 1. Memory decoding and bus mastering (PCI command register).
/// 2. With `CP_ME_CNTL` = ME_HALT | PFP_HALT (the power-on value) and the RLC off: PFP words
///    through `CP_PFP_UCODE_ADDR` = 0 / `CP_PFP_UCODE_DATA`, ME words through `CP_ME_RAM_WADDR`
///    = 0 / `CP_ME_RAM_DATA`, RLC words through `RLC_UCODE_ADDR` = 0 / `RLC_UCODE_DATA` (each
///    auto-increments; read back with `CP_PFP_UCODE_ADDR` / `CP_ME_RAM_RADDR` /
///    `RLC_UCODE_ADDR` and the data port); `RLC_CNTL.RLC_ENABLE` = 1.
/// 3. Ring: `CP_RB_CNTL` (RB_BUFSZ = log2(bytes / 8), RB_BLKSZ), `CP_RB_BASE` = address >> 8,
///    `CP_RB_RPTR_ADDR(_HI)`; `CP_RB_WPTR` = 0.
/// 4. Un-halt (`CP_ME_CNTL` = 0), then ME_INITIALIZE first on the ring.
/// 5. IH: `IH_RB_BASE`, `IH_RB_CNTL` (size, write-back, overflow, enable), `IH_CNTL.ENABLE_INTR`,
///    `CP_INT_CNTL.TIME_STAMP_INT_ENABLE` for EOP interrupts.
#[derive(Debug, Clone)]
pub struct EvergreenModel {
    asic: Asic,
    regs: RegisterFile<Chipset>,
    pfp: UcodeRam,
    me: UcodeRam,
    rlc: UcodeRam,
    cp: Cp,
    ih: Ih,
    faults: Faults,
    stats: Stats,
    limits: Limits,
    caches: Caches,
    /// The 64-bit GPU clock EVENT_WRITE_EOP DATA_SEL 3 sends: ticks since power-on.
    clock: u64,
    tick_units: u64,
}

impl EvergreenModel {
    /// `asic` at power-on, no faults.
    pub fn new(asic: Asic) -> Self {
        Self::with_faults(asic, Faults::default())
    }

    /// `asic` at power-on with `faults` injected.
    pub fn with_faults(asic: Asic, faults: Faults) -> Self {
        let mut regs = crate::regfile::new(asic.chipset());
        // Power-on: ME and PFP halted, so nothing runs before microcode (a model decision:
        // Linux radeon halts them before every upload, evergreen.c cp_load_microcode).
        regs.set(ME_CNTL, ME_HALT | PFP_HALT);
        EvergreenModel {
            asic,
            regs,
            pfp: UcodeRam::new(asic.image(Engine::Pfp)),
            me: UcodeRam::new(asic.image(Engine::Me)),
            rlc: UcodeRam::new(asic.image(Engine::Rlc)),
            cp: Cp::new(),
            ih: Ih::default(),
            faults,
            stats: Stats::default(),
            limits: Limits::default(),
            caches: Caches::default(),
            clock: 0,
            tick_units: 0,
        }
    }

    /// The chip.
    pub fn asic(&self) -> Asic {
        self.asic
    }

    /// Shader-core limits for later dispatches (tests shrink them).
    pub fn set_limits(&mut self, limits: Limits) {
        self.limits = limits;
    }

    /// The injected faults.
    pub fn faults(&self) -> Faults {
        self.faults
    }

    /// Change the injected faults.
    pub fn set_faults(&mut self, faults: Faults) {
        self.faults = faults;
    }

    /// Counters.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// The CP error code, if the CP stopped on an error.
    pub fn cp_error(&self) -> Option<u32> {
        self.cp.error
    }

    /// The known image `engine`'s RAM holds, if it holds one.
    pub fn microcode(&mut self, engine: Engine) -> Option<&'static KnownImage> {
        let ram = match engine {
            Engine::Pfp => &mut self.pfp,
            Engine::Me => &mut self.me,
            Engine::Rlc => &mut self.rlc,
        };
        ram.known().then(|| self.asic.image(engine))
    }

    /// Word `index` of `engine`'s RAM (white-box).
    pub fn ucode_word(&self, engine: Engine, index: usize) -> Option<u32> {
        match engine {
            Engine::Pfp => self.pfp.word(index),
            Engine::Me => self.me.word(index),
            Engine::Rlc => self.rlc.word(index),
        }
    }

    /// The CP's read pointer in dwords.
    pub fn rptr(&self) -> u32 {
        self.cp.rptr
    }

    /// Whether a dispatch, DMA, end-of-pipe event or CP wait is in progress.
    pub fn work_in_progress(&self) -> bool {
        self.cp.work.is_some() || self.cp.engines.busy()
    }

    /// Dispatches the shader core is running.
    pub fn dispatches_in_flight(&self) -> usize {
        self.cp.engines.dispatches.len()
    }

    /// Colour-buffer cache lines holding RAT writes memory does not have yet.
    pub fn dirty_cache_lines(&self) -> usize {
        self.caches.cb.dirty_lines()
    }

    /// Whether ME_INITIALIZE has run since the last CP reset.
    pub fn me_initialized(&self) -> bool {
        self.cp.me_initialized
    }

    /// The device ID the last ME_INITIALIZE gave (§9.2.1 DW5 23:16; 0 before one ran).
    pub fn device_id(&self) -> u8 {
        self.cp.device_id
    }

    /// The raw stored value of a register (white-box).
    pub fn register(&self, offset: u32) -> u32 {
        self.regs.stored(offset)
    }

    // ---------------------------------------------------------------------------------------
    // State queries

    fn halted(&self) -> (bool, bool) {
        let c = self.regs.stored(ME_CNTL);
        (c & ME_HALT != 0, c & PFP_HALT != 0)
    }

    fn rlc_enabled(&self) -> bool {
        rlc::RLC_CNTL::RLC_ENABLE.get(self.regs.stored(RLC_CNTL)) != 0
    }

    fn in_soft_reset(&self) -> bool {
        grbm::GRBM_SOFT_RESET::SOFT_RESET_CP.get(self.regs.stored(GRBM_SOFT_RESET)) != 0
    }

    /// Whether the CP parses packets now: known PFP and ME images, both un-halted, not in
    /// reset, no error, no stall or bus fault.
    fn running(&mut self) -> bool {
        let (me_halt, pfp_halt) = self.halted();
        !self.faults.cp_stall
            && !self.faults.registers_all_ones
            && self.cp.error.is_none()
            && !self.in_soft_reset()
            && !me_halt
            && !pfp_halt
            && self.pfp.known()
            && self.me.known()
    }

    fn ring_dwords(&self) -> u32 {
        1 << (self.ring_log2_qwords().clamp(RB_MIN_LOG2_QWORDS, RB_MAX_LOG2_QWORDS) + 1)
    }

    fn ring_log2_qwords(&self) -> u32 {
        cp::CP_RB_CNTL::RB_BUFSZ.get(self.regs.stored(RB_CNTL))
    }

    fn block_dwords(&self) -> u32 {
        let blksz = cp::CP_RB_CNTL::RB_BLKSZ.get(self.regs.stored(RB_CNTL));
        1u32 << (blksz.min(22) + 1)
    }

    fn wptr(&self) -> u32 {
        self.regs.stored(RB_WPTR) & (self.ring_dwords() - 1)
    }

    fn ring_pending(&self) -> bool {
        self.cp.rptr != self.wptr()
    }

    fn busy(&self) -> bool {
        self.cp.error.is_some()
            || (!self.in_soft_reset()
                && (self.ring_pending()
                    || !self.cp.ibs.is_empty()
                    || self.cp.work.is_some()
                    || self.cp.engines.busy()
                    || self.cp.packet != Packet::Header))
    }

    /// `GRBM_STATUS` from what each block is doing (Linux radeon evergreend.h fields):
    /// CP_BUSY while the CP has commands to fetch or parse or waits in a packet
    /// (WAIT_REG_MEM, a semaphore, CP_SYNC, a packet waiting for an engine), or has failed;
    /// GUI_ACTIVE while the CP or an engine beside it (dispatches, CP DMA, end-of-pipe events)
    /// works; CP_COHERENCY_BUSY while a SURFACE_SYNC waits for the dispatches writing its
    /// surface. CMDFIFO_AVAIL reports the 15 free entries of an idle command FIFO (the model
    /// has no FIFO to fill).
    fn grbm_status(&self) -> u32 {
        use grbm::GRBM_STATUS as S;
        let waiting = self.cp.work.is_some();
        let engines = self.cp.engines.busy();
        let syncing = matches!(self.cp.packet, Packet::Ready { header, .. }
            if pm4::opcode(header) == pm4::SURFACE_SYNC);
        let running = !self.in_soft_reset();
        let cp = self.cp.error.is_some()
            || (running
                && (self.ring_pending()
                    || !self.cp.ibs.is_empty()
                    || self.cp.packet != Packet::Header
                    || waiting));
        S::CMDFIFO_AVAIL.place(0xF)
            | S::CP_BUSY.place(u32::from(cp))
            | S::GUI_ACTIVE.place(u32::from(cp || (running && engines)))
            | S::CP_COHERENCY_BUSY.place(u32::from(running && syncing))
    }

    fn fail(&mut self, code: u32, dev: &mut DeviceContext<'_>) -> Failed {
        self.cp.error.get_or_insert(code);
        dev.fail(code);
        Failed
    }

    /// CP soft reset: packet state, IBs, work, ME_INITIALIZE, predication, the read pointer
    /// and the CP error; the microcode RAMs and the ring registers stay.
    fn soft_reset_cp(&mut self) {
        self.cp = Cp::new();
    }

    // ---------------------------------------------------------------------------------------
    // Registers

    fn read_register(&mut self, offset: u32) -> u32 {
        match offset {
            RB_RPTR => self.cp.rptr,
            PFP_DATA => {
                let v = self.pfp.read(self.faults.ucode_corrupt);
                self.pfp.write_address = self.pfp.read_address;
                v
            }
            PFP_ADDR => self.pfp.write_address as u32,
            ME_DATA => self.me.read(self.faults.ucode_corrupt),
            ME_WADDR => self.me.write_address as u32,
            ME_RADDR => self.me.read_address as u32,
            RLC_DATA => {
                let v = self.rlc.read(self.faults.ucode_corrupt);
                self.rlc.write_address = self.rlc.read_address;
                v
            }
            RLC_ADDR => self.rlc.write_address as u32,
            GRBM_STATUS => self.grbm_status(),
            IH_RB_WPTR => {
                use ihr::IH_RB_WPTR as W;
                W::WPTR_OFFSET.place(self.ih.wptr >> 2)
                    | W::RB_OVERFLOW.place(u32::from(self.ih.overflow))
            }
            _ => self.regs.read(offset),
        }
    }

    /// A register write from the host or a packet, with its side effects.
    fn write_register(
        &mut self,
        offset: u32,
        value: u32,
        dev: &mut DeviceContext<'_>,
    ) -> Result<(), Failed> {
        let (me_halt, pfp_halt) = self.halted();
        match offset {
            PFP_ADDR => {
                self.pfp.write_address = value as usize;
                self.pfp.read_address = value as usize;
                return Ok(());
            }
            PFP_DATA => {
                if !pfp_halt || !me_halt {
                    return Err(self.fail(error_code::UCODE_WRITE_WHILE_RUNNING, dev));
                }
                if !self.pfp.write(value) {
                    return Err(self.fail(error_code::UCODE_OVERFLOW, dev));
                }
                self.pfp.read_address = self.pfp.write_address;
                return Ok(());
            }
            ME_WADDR => {
                self.me.write_address = value as usize;
                return Ok(());
            }
            ME_RADDR => {
                self.me.read_address = value as usize;
                return Ok(());
            }
            ME_DATA => {
                if !pfp_halt || !me_halt {
                    return Err(self.fail(error_code::UCODE_WRITE_WHILE_RUNNING, dev));
                }
                if !self.me.write(value) {
                    return Err(self.fail(error_code::UCODE_OVERFLOW, dev));
                }
                return Ok(());
            }
            RLC_ADDR => {
                self.rlc.write_address = value as usize;
                self.rlc.read_address = value as usize;
                return Ok(());
            }
            RLC_DATA => {
                if self.rlc_enabled() {
                    return Err(self.fail(error_code::UCODE_WRITE_WHILE_RUNNING, dev));
                }
                if !self.rlc.write(value) {
                    return Err(self.fail(error_code::UCODE_OVERFLOW, dev));
                }
                self.rlc.read_address = self.rlc.write_address;
                return Ok(());
            }
            RB_RPTR_WR => {
                self.regs.write(offset, value);
                if cp::CP_RB_CNTL::RB_RPTR_WR_ENA.get(self.regs.stored(RB_CNTL)) != 0 {
                    self.cp.rptr = value & (self.ring_dwords() - 1);
                    self.cp.written_back = None;
                }
                return Ok(());
            }
            GRBM_SOFT_RESET => {
                let was = self.in_soft_reset();
                self.regs.write(offset, value);
                if !was && self.in_soft_reset() {
                    if !(me_halt && pfp_halt) {
                        return Err(self.fail(error_code::RESET_WHILE_RUNNING, dev));
                    }
                    self.soft_reset_cp();
                }
                return Ok(());
            }
            SRBM_SOFT_RESET => {
                self.regs.write(offset, value);
                if srbm::SRBM_SOFT_RESET::SOFT_RESET_IH.get(value) != 0 {
                    self.ih = Ih::default();
                    self.update_irq(dev);
                }
                return Ok(());
            }
            IH_RB_CNTL => {
                let clear = ihr::IH_RB_CNTL::IH_WPTR_OVERFLOW_CLEAR;
                if clear.get(value) != 0 {
                    self.ih.overflow = false;
                }
                self.regs.write(offset, value & !clear.mask());
                self.update_irq(dev);
                return Ok(());
            }
            IH_RB_RPTR | IH_CNTL => {
                self.regs.write(offset, value);
                self.update_irq(dev);
                return Ok(());
            }
            _ => {}
        }
        if !self.regs.accepts(offset) {
            self.stats.writes_dropped += 1;
            return Ok(());
        }
        self.regs.write(offset, value);
        if let Some(n) = Self::scratch_index(offset) {
            self.scratch_writeback(n, value, dev)?;
        }
        Ok(())
    }

    fn scratch_index(offset: u32) -> Option<u32> {
        let d = offset.checked_sub(SCRATCH_REG0)?;
        (d.is_multiple_of(4) && d / 4 < SCRATCH_COUNT).then_some(d / 4)
    }

    /// Scratch register `n` copied to `(SCRATCH_ADDR << 8) + 4n` when `SCRATCH_UMSK` bit n is
    /// set (Linux radeon r600.c / evergreen.c: SCRATCH_ADDR = address >> 8, SCRATCH_UMSK =
    /// 0xFF with write-back).
    fn scratch_writeback(
        &mut self,
        n: u32,
        value: u32,
        dev: &mut DeviceContext<'_>,
    ) -> Result<(), Failed> {
        if self.regs.stored(SCRATCH_UMSK) & (1 << n) == 0 {
            return Ok(());
        }
        let base = u64::from(self.regs.stored(SCRATCH_ADDR)) << 8;
        if base == 0 {
            return Err(self.fail(error_code::DMA_WRITE_FAULT, dev));
        }
        self.stats.scratch_writebacks += 1;
        self.dma_write(base + 4 * u64::from(n), value, dev)
    }

    /// A packet or write-back store. Bus address 0 is an address never programmed (every
    /// address register resets to 0): refused as a fault instead of overwriting whatever lives
    /// there (a model decision, the same in every model).
    fn dma_write(
        &mut self,
        address: u64,
        value: u32,
        dev: &mut DeviceContext<'_>,
    ) -> Result<(), Failed> {
        if address == 0 {
            return Err(self.fail(error_code::DMA_WRITE_FAULT, dev));
        }
        dev.dma_write_u32(address, value).map_err(|_| self.fail(error_code::DMA_WRITE_FAULT, dev))
    }

    /// A packet or command read; bus address 0 (unprogrammed) is a fault, as for stores.
    fn dma_read(&mut self, address: u64, dev: &mut DeviceContext<'_>) -> Result<u32, Failed> {
        if address == 0 {
            return Err(self.fail(error_code::DMA_FETCH_FAULT, dev));
        }
        dev.dma_read_u32(address).map_err(|_| self.fail(error_code::DMA_FETCH_FAULT, dev))
    }

    /// A little-endian 64-bit value (a semaphore) as two dword reads.
    fn dma_read_u64(&mut self, address: u64, dev: &mut DeviceContext<'_>) -> Result<u64, Failed> {
        let lo = self.dma_read(address, dev)?;
        let hi = self.dma_read(address + 4, dev)?;
        Ok(u64::from(lo) | u64::from(hi) << 32)
    }

    fn dma_write_u64(
        &mut self,
        address: u64,
        value: u64,
        dev: &mut DeviceContext<'_>,
    ) -> Result<(), Failed> {
        self.dma_write(address, value as u32, dev)?;
        self.dma_write(address + 4, (value >> 32) as u32, dev)
    }

    // ---------------------------------------------------------------------------------------
    // IH ring

    fn ih_pending(&self) -> bool {
        let rptr = ihr::IH_RB_RPTR::RPTR_OFFSET.get(self.regs.stored(IH_RB_RPTR)) << 2;
        let cntl = self.regs.stored(IH_RB_CNTL);
        ihr::IH_RB_CNTL::IH_RB_ENABLE.get(cntl) != 0
            && ihr::IH_CNTL::ENABLE_INTR.get(self.regs.stored(IH_CNTL)) != 0
            && self.ih.wptr != rptr
    }

    fn update_irq(&self, dev: &mut DeviceContext<'_>) {
        dev.set_irq(IRQ_LINE, self.ih_pending());
    }

    /// The IH ring's size in bytes: `IH_IB_SIZE` is log2 dwords, 2..=[`IH_MAX_LOG2_DWORDS`]
    /// (`None` outside: the IH refuses a size it does not have instead of clamping it).
    fn ih_size(&self) -> Option<u32> {
        let log = ihr::IH_RB_CNTL::IH_IB_SIZE.get(self.regs.stored(IH_RB_CNTL));
        (2..=IH_MAX_LOG2_DWORDS).contains(&log).then(|| 4u32 << log)
    }

    /// Write one IH vector (see [`crate::ih`]).
    fn ih_push(
        &mut self,
        source: u32,
        data: u32,
        dev: &mut DeviceContext<'_>,
    ) -> Result<(), Failed> {
        use ihr::IH_RB_CNTL as C;
        let cntl = self.regs.stored(IH_RB_CNTL);
        let on = C::IH_RB_ENABLE.get(cntl) != 0
            && ihr::IH_CNTL::ENABLE_INTR.get(self.regs.stored(IH_CNTL)) != 0
            && self.rlc_enabled()
            && self.rlc.known();
        if !on {
            self.stats.ih_dropped += 1;
            return Ok(());
        }
        let Some(size) = self.ih_size() else {
            return Err(self.fail(error_code::BAD_CONFIGURATION, dev));
        };
        let wptr = self.ih.wptr % size;
        let rptr = (ihr::IH_RB_RPTR::RPTR_OFFSET.get(self.regs.stored(IH_RB_RPTR)) << 2) % size;
        if (wptr + ih::ENTRY_BYTES) % size == rptr {
            if C::IH_WPTR_OVERFLOW_ENABLE.get(cntl) == 0 {
                self.stats.ih_dropped += 1;
                return Ok(());
            }
            self.ih.overflow = true;
        }
        let base = u64::from(self.regs.stored(IH_RB_BASE)) << 8;
        if base == 0 {
            // An IH ring never placed (IH_RB_BASE resets to 0).
            return Err(self.fail(error_code::DMA_WRITE_FAULT, dev));
        }
        let entry = [source & 0xFF, data & 0x0FFF_FFFF, 0, 0];
        let bytes: Vec<u8> = entry.iter().flat_map(|w| w.to_le_bytes()).collect();
        dev.dma_write(base + u64::from(wptr), &bytes)
            .map_err(|_| self.fail(error_code::DMA_WRITE_FAULT, dev))?;
        self.ih.wptr = (wptr + ih::ENTRY_BYTES) % size;
        self.stats.ih_entries += 1;
        if C::IH_WPTR_WRITEBACK_ENABLE.get(cntl) != 0 {
            let address = u64::from(self.regs.stored(IH_WPTR_ADDR_LO) & !3)
                | u64::from(self.regs.stored(IH_WPTR_ADDR_HI) & 0xFF) << 32;
            if address == 0 {
                return Err(self.fail(error_code::DMA_WRITE_FAULT, dev));
            }
            let value = self.ih.wptr | u32::from(self.ih.overflow);
            self.dma_write(address, value, dev)?;
        }
        self.update_irq(dev);
        Ok(())
    }

    // ---------------------------------------------------------------------------------------
    // Fetch

    /// Write the read pointer back (unless RB_NO_UPDATE). Address 0 is a DMA fault.
    fn rptr_writeback(&mut self, dev: &mut DeviceContext<'_>) -> Result<(), Failed> {
        self.cp.since_writeback = 0;
        let cntl = self.regs.stored(RB_CNTL);
        if cp::CP_RB_CNTL::RB_NO_UPDATE.get(cntl) != 0 || self.cp.written_back == Some(self.cp.rptr)
        {
            return Ok(());
        }
        let lo = self.regs.stored(RB_RPTR_ADDR);
        let address =
            u64::from(lo & !3) | u64::from(self.regs.stored(RB_RPTR_ADDR_HI) & 0xFF) << 32;
        if address == 0 {
            return Err(self.fail(error_code::DMA_WRITE_FAULT, dev));
        }
        let value = swap(self.cp.rptr, cp::CP_RB_RPTR_ADDR::RB_RPTR_SWAP.get(lo));
        self.dma_write(address, value, dev)?;
        self.cp.written_back = Some(self.cp.rptr);
        self.stats.rptr_writebacks += 1;
        Ok(())
    }

    /// The next command dword: from the innermost indirect buffer, else the ring. `None`: the
    /// ring is empty.
    fn fetch(&mut self, dev: &mut DeviceContext<'_>) -> Result<Option<u32>, Failed> {
        while let Some(ib) = self.cp.ibs.last().copied() {
            if ib.remaining == 0 {
                self.cp.ibs.pop();
                if !matches!(self.cp.packet, Packet::Header) {
                    // §9.3.1: an IB holds whole packets.
                    return Err(self.fail(error_code::INVALID_PACKET, dev));
                }
                continue;
            }
            let w = self.fetch_at(ib.address, dev)?;
            let top = self.cp.ibs.last_mut().expect("checked above");
            top.address += 4;
            top.remaining -= 1;
            return Ok(Some(w));
        }
        if !self.ring_pending() {
            self.rptr_writeback(dev)?;
            return Ok(None);
        }
        // A ring of a size the CP does not have, or never placed (CP_RB_BASE resets to 0), is
        // refused rather than clamped or fetched from bus address 0.
        if !(RB_MIN_LOG2_QWORDS..=RB_MAX_LOG2_QWORDS).contains(&self.ring_log2_qwords()) {
            return Err(self.fail(error_code::BAD_CONFIGURATION, dev));
        }
        let base = u64::from(self.regs.stored(RB_BASE)) << 8;
        if base == 0 {
            return Err(self.fail(error_code::DMA_FETCH_FAULT, dev));
        }
        let w = self.fetch_at(base + 4 * u64::from(self.cp.rptr), dev)?;
        self.cp.rptr = (self.cp.rptr + 1) & (self.ring_dwords() - 1);
        self.cp.since_writeback += 1;
        if self.cp.since_writeback >= self.block_dwords() {
            self.rptr_writeback(dev)?;
        }
        Ok(Some(w))
    }

    fn fetch_at(&mut self, address: u64, dev: &mut DeviceContext<'_>) -> Result<u32, Failed> {
        if std::mem::take(&mut self.faults.dma_fault_next_fetch) {
            return Err(self.fail(error_code::DMA_FETCH_FAULT, dev));
        }
        let w = self.dma_read(address, dev)?;
        let swap_mode = cp::CP_RB_CNTL::BUF_SWAP.get(self.regs.stored(RB_CNTL));
        Ok(swap(w, swap_mode))
    }

    // ---------------------------------------------------------------------------------------
    // Packets

    /// Feed one dword to the packet state machine. `Ok(true)`: a packet completed.
    fn feed(&mut self, w: u32, dev: &mut DeviceContext<'_>) -> Result<bool, Failed> {
        match std::mem::replace(&mut self.cp.packet, Packet::Header) {
            Packet::Header => self.header(w, dev),
            Packet::Type0 { register, remaining } => {
                self.write_register(register, w, dev)?;
                if remaining > 1 {
                    self.cp.packet =
                        Packet::Type0 { register: register + 4, remaining: remaining - 1 };
                    return Ok(false);
                }
                Ok(true)
            }
            Packet::Skip { remaining } => {
                if remaining > 1 {
                    self.cp.packet = Packet::Skip { remaining: remaining - 1 };
                    return Ok(false);
                }
                Ok(true)
            }
            Packet::Set { range, next, remaining, legacy_zero } => {
                let register = match next {
                    None => {
                        // §9.4.13-§9.4.19: REG_OFFSET / CONST_OFFSET in dwords (every SET_*
                        // packet has the same offset dword, as the table says); the bits
                        // above it "must be programmed to zero" where the packet says so.
                        let offset =
                            baregpu_regs::evergreen::packets::set_config_reg::REG_OFFSET.spec;
                        if legacy_zero && w & !offset.mask() != 0 {
                            return Err(self.fail(error_code::INVALID_PACKET, dev));
                        }
                        let start = range.0 + 4 * offset.get(w);
                        // The whole packet must fit the range (the data dwords still to come).
                        if u64::from(start) + 4 * u64::from(remaining - 1) > u64::from(range.1) {
                            return Err(self.fail(error_code::REG_RANGE, dev));
                        }
                        self.cp.packet = Packet::Set {
                            range,
                            next: Some(start),
                            remaining: remaining - 1,
                            legacy_zero,
                        };
                        return Ok(false);
                    }
                    Some(r) => r,
                };
                self.write_register(register, w, dev)?;
                if remaining > 1 {
                    self.cp.packet = Packet::Set {
                        range,
                        next: Some(register + 4),
                        remaining: remaining - 1,
                        legacy_zero,
                    };
                    return Ok(false);
                }
                Ok(true)
            }
            Packet::Collect { header, need, got, mut body } => {
                body[got] = w;
                if got + 1 < need {
                    self.cp.packet = Packet::Collect { header, need, got: got + 1, body };
                    return Ok(false);
                }
                self.cp.packet = Packet::Ready { header, need, body };
                self.run_ready(dev)
            }
            // The fetch loop runs a waiting packet before it fetches.
            ready @ Packet::Ready { .. } => {
                self.cp.packet = ready;
                Ok(false)
            }
        }
    }

    /// Run the collected packet if nothing it depends on is still in flight. `Ok(true)`: it
    /// ran; `Ok(false)`: it waits (the CP stalls on it).
    fn run_ready(&mut self, dev: &mut DeviceContext<'_>) -> Result<bool, Failed> {
        let Packet::Ready { header, need, body } = self.cp.packet else { return Ok(true) };
        if self.must_wait(header, &body[..need]) {
            self.stats.engine_waits += 1;
            return Ok(false);
        }
        self.cp.packet = Packet::Header;
        self.execute(header, &body[..need], dev)?;
        Ok(true)
    }

    /// Whether a collected packet must wait for the engines: where the stream asks
    /// (CS_PARTIAL_FLUSH, §9.6.1; SURFACE_SYNC of the colour buffers, §9.6.7; a semaphore wait
    /// with WAIT_ON_SIGNAL, §9.6.4) and where an engine's queue is full.
    fn must_wait(&self, h: u32, b: &[u32]) -> bool {
        let e = &self.cp.engines;
        let pipe_full = e.pipe.len() >= MAX_PIPE_EVENTS;
        match pm4::opcode(h) {
            pm4::DISPATCH_DIRECT | pm4::DISPATCH_INDIRECT => {
                e.dispatches.len() >= MAX_DISPATCHES_IN_FLIGHT
            }
            pm4::CP_DMA => e.dma.len() >= MAX_DMA_IN_FLIGHT,
            pm4::EVENT_WRITE => {
                let (index, kind) = ((b[0] >> 8) & 0xF, b[0] & 0x3F);
                let partial =
                    index == event::INDEX_PARTIAL_FLUSH && kind == event::CS_PARTIAL_FLUSH;
                (partial && !e.dispatches.is_empty()) || (event::flushes(kind) && pipe_full)
            }
            pm4::EVENT_WRITE_EOP | pm4::EVENT_WRITE_EOS => pipe_full,
            pm4::MEM_SEMAPHORE => {
                let signal = b[1] >> 29 == 6;
                let wait_on_signal = b[1] & (1 << 12) != 0;
                (signal && pipe_full) || (!signal && wait_on_signal && !e.pipe.is_empty())
            }
            pm4::SURFACE_SYNC => {
                // The CB and DB finish the surface (every dispatch writing through them) before
                // the CP's sync of it completes.
                use cp::CP_COHER_CNTL as C;
                let writers = C::CB_ACTION_ENA.mask() | C::DB_ACTION_ENA.mask();
                b[0] & writers != 0 && !e.dispatches.is_empty()
            }
            _ => false,
        }
    }

    fn header(&mut self, h: u32, dev: &mut DeviceContext<'_>) -> Result<bool, Failed> {
        let count = pm4::count(h);
        match pm4::packet_type(h) {
            0 => {
                self.stats.packets[0] += 1;
                if !self.cp.me_initialized {
                    return Err(self.fail(error_code::ME_NOT_INITIALIZED, dev));
                }
                // §9.1.1: BASE_INDEX 15:0 is a dword register index; N = COUNT + 1 writes.
                let register = (h & 0xFFFF) << 2;
                self.cp.packet = Packet::Type0 { register, remaining: count + 1 };
                Ok(false)
            }
            1 => {
                // §9.1.2: "Type-1 packets are not supported by any R6xx+ families."
                self.stats.packets[1] += 1;
                Err(self.fail(error_code::INVALID_PACKET, dev))
            }
            2 => {
                // §9.1.3: a one-dword filler.
                self.stats.packets[2] += 1;
                Ok(true)
            }
            _ => {
                self.stats.packets[3] += 1;
                let opcode = pm4::opcode(h);
                let Some(shape) = pm4::shape(opcode, self.asic) else {
                    return Err(self.fail(error_code::UNKNOWN_OPCODE, dev));
                };
                if !self.cp.me_initialized && opcode != pm4::ME_INITIALIZE && opcode != pm4::NOP {
                    return Err(self.fail(error_code::ME_NOT_INITIALIZED, dev));
                }
                let body = count + 1;
                if !shape.accepts(body) {
                    return Err(self.fail(error_code::INVALID_PACKET, dev));
                }
                if pm4::predicated(h) && self.cp.predicate == Some(false) {
                    // §9.1.4 bit 0: the predicated version of the packet; the predicate set by
                    // SET_PREDICATION (§9.5.3) says skip.
                    self.stats.packets_skipped += 1;
                    self.cp.packet = Packet::Skip { remaining: body };
                    return Ok(false);
                }
                self.cp.packet = match shape {
                    Shape::Unsupported => {
                        return Err(self.fail(error_code::UNSUPPORTED_PACKET, dev));
                    }
                    Shape::Any => Packet::Skip { remaining: body },
                    Shape::Set { start, end, legacy_zero } => {
                        if body < 2 {
                            return Err(self.fail(error_code::INVALID_PACKET, dev));
                        }
                        Packet::Set {
                            range: (start, end),
                            next: None,
                            remaining: body,
                            legacy_zero,
                        }
                    }
                    Shape::Fixed(_) => Packet::Collect {
                        header: h,
                        need: body as usize,
                        got: 0,
                        body: [0; pm4::MAX_COLLECT],
                    },
                };
                Ok(false)
            }
        }
    }

    /// Run a collected type-3 packet: its body read through the checked packet table
    /// (`baregpu_regs::evergreen::packets`), fields by name.
    fn execute(&mut self, h: u32, b: &[u32], dev: &mut DeviceContext<'_>) -> Result<(), Failed> {
        use baregpu_regs::evergreen::packets as p;
        let bad = error_code::INVALID_PACKET;
        // `shape()` collected a body the packet's layout takes, so `unpack` cannot fail; a
        // failure would be the model's own error, reported as an invalid packet.
        macro_rules! body {
            ($packet:ident) => {
                match p::$packet::Body::unpack(b) {
                    Ok(body) => body,
                    Err(_) => return Err(self.fail(bad, dev)),
                }
            };
        }
        match pm4::opcode(h) {
            pm4::ME_INITIALIZE => {
                let init = body!(me_initialize);
                // §9.2.1 DW4: MAX_CONTEXT 1..=7 ("Max context of 0 is not valid").
                if !(1..=7).contains(&init.max_context()) {
                    return Err(self.fail(bad, dev));
                }
                self.cp.me_initialized = true;
                // DW5 Device-ID: PRED_EXEC selects on it (§9.5.4).
                self.cp.device_id = init.device_id() as u8;
            }
            pm4::INDIRECT_BUFFER => {
                // §9.3.1: IB_BASE_LO 31:2 (1:0 swap), IB_BASE_HI, IB_SIZE dwords.
                let ib = body!(indirect_buffer);
                if self.cp.ibs.len() >= 2 {
                    return Err(self.fail(error_code::IB_NESTING, dev));
                }
                if p::indirect_buffer::IB_BASE_LO.bits_below(&ib.0) != 0 {
                    return Err(self.fail(error_code::UNSUPPORTED_PACKET, dev));
                }
                // DW4 23:20 lie between IB_SIZE and VMID: reserved. An IB of no dwords is
                // refused (a model decision: the document gives no meaning to size 0).
                use p::indirect_buffer::{IB_SIZE, VMID};
                let size = ib.ib_size();
                let reserved = ib.0[IB_SIZE.index()] & !(IB_SIZE.spec.mask() | VMID.spec.mask());
                if size == 0 || reserved != 0 {
                    return Err(self.fail(bad, dev));
                }
                let at = ib.ib_base().0;
                if at == 0 {
                    return Err(self.fail(error_code::DMA_FETCH_FAULT, dev));
                }
                self.cp.ibs.push(Ib { address: at, remaining: size });
                self.stats.ibs_started += 1;
            }
            pm4::SURFACE_SYNC => {
                // §9.6.7: COHER_CNTL, COHER_SIZE, COHER_BASE, POLL_INTERVAL. The colour-buffer
                // writers are done (`must_wait`); the actions apply to the range now.
                let sync = body!(surface_sync);
                let (cntl, size, base) = (sync.coher_cntl(), sync.coher_size(), sync.coher_base());
                self.write_register(COHER_CNTL, cntl, dev)?;
                self.write_register(COHER_SIZE, size, dev)?;
                self.write_register(COHER_BASE, base, dev)?;
                self.surface_sync(cntl, size, base, dev)?;
            }
            pm4::EVENT_WRITE => self.event_write(b, dev)?,
            pm4::EVENT_WRITE_EOP => self.event_write_eop(b, dev)?,
            pm4::EVENT_WRITE_EOS => {
                // §9.6.3: CMD STORE_DATA stores DATA; the other commands read GDS / append
                // counters the model does not have.
                let eos = body!(event_write_eos);
                if eos.event_index() != Ok(p::event_write_eos::EventIndex::Eos)
                    || !EOS_EVENTS.contains(&eos.event_type())
                {
                    return Err(self.fail(bad, dev));
                }
                self.write_register(VGT_EVENT_INITIATOR, eos.event_type(), dev)?;
                if eos.cmd() != Ok(p::event_write_eos::Cmd::StoreData) {
                    return Err(self.fail(error_code::UNSUPPORTED_PACKET, dev));
                }
                if p::event_write_eos::ADDRESS_LO.bits_below(&eos.0) != 0 {
                    return Err(self.fail(bad, dev));
                }
                // "end-of-shader event": written once the compute shaders before it are done.
                let what = PipeAction::Eos { address: eos.address().0, data: eos.data() };
                self.send_down_pipe(what);
            }
            pm4::MEM_WRITE => {
                // §9.7.1: QWORD-aligned ADDRESS_LO 31:3 over SWAP 1:0 (bit 2 reserved).
                use p::mem_write::{ADDRESS_LO, CntrSel, SWAP};
                let write = body!(mem_write);
                if ADDRESS_LO.bits_below(&write.0) & !SWAP.spec.mask() != 0 {
                    return Err(self.fail(bad, dev));
                }
                let at = write.address().0;
                let (lo, hi) = if write.cntr_sel() == Ok(CntrSel::Counter) {
                    (self.clock as u32, (self.clock >> 32) as u32)
                } else {
                    (write.data_lo(), write.data_hi())
                };
                self.dma_write(at, lo, dev)?;
                if !write.data32() {
                    self.dma_write(at + 4, hi, dev)?;
                }
            }
            pm4::WAIT_REG_MEM => {
                // §9.6.8: FUNCTION 111 reserved; the PFP polls memory with >= only.
                use p::wait_reg_mem::{Engine, Function, MemSpace};
                let wait = body!(wait_reg_mem);
                let Ok(function) = wait.function() else { return Err(self.fail(bad, dev)) };
                let memory = wait.mem_space() == Ok(MemSpace::Memory);
                let pfp = wait.engine() == Ok(Engine::Pfp);
                if pfp && (!memory || function != Function::GreaterEqual) {
                    return Err(self.fail(bad, dev));
                }
                // A register poll names the register by its dword address.
                let at = if memory {
                    wait.poll_address().0
                } else {
                    u64::from(wait.poll_register()) * 4
                };
                // POLL_INTERVAL: 16 * interval clocks between polls, at least 4.
                let interval = poll_ticks(wait.poll_interval());
                self.cp.work = Some(Work::Wait {
                    memory,
                    address: at,
                    function: function as u32,
                    reference: wait.reference(),
                    mask: wait.mask(),
                    interval,
                    idle: 0,
                });
            }
            pm4::COND_EXEC => {
                // §9.5.1: EXEC_COUNT dwords skipped if the boolean is zero.
                let cond = body!(cond_exec);
                let v = self.dma_read(cond.bool_addr().0, dev)?;
                let n = cond.exec_count();
                if v == 0 && n > 0 {
                    self.stats.packets_skipped += 1;
                    self.cp.packet = Packet::Skip { remaining: n };
                }
            }
            pm4::PRED_EXEC => self.pred_exec(body!(pred_exec), dev)?,
            pm4::MEM_SEMAPHORE => self.mem_semaphore(body!(mem_semaphore), dev)?,
            pm4::SET_PREDICATION => self.set_predication(body!(set_predication), dev)?,
            pm4::COND_WRITE => {
                // §9.5.2: FUNCTION 111 reserved; poll and write in memory or a register.
                use p::cond_write::{PollSpace, WriteSpace};
                let cond = body!(cond_write);
                let Ok(function) = cond.function() else { return Err(self.fail(bad, dev)) };
                let polled = if cond.poll_space() == Ok(PollSpace::Memory) {
                    self.dma_read(cond.poll_address().0, dev)?
                } else {
                    self.read_register(cond.poll_register() * 4)
                };
                if compare(function as u32, polled & cond.mask(), cond.reference()) {
                    if cond.write_space() == Ok(WriteSpace::Memory) {
                        self.dma_write(cond.write_address().0, cond.write_data(), dev)?;
                    } else {
                        self.write_register(cond.write_register() * 4, cond.write_data(), dev)?;
                    }
                }
            }
            pm4::CP_DMA => self.cp_dma(body!(cp_dma), dev)?,
            pm4::SET_BASE => {
                // Linux radeon evergreen_cs.c: base index 1 = the indirect-draw/dispatch data
                // base, a QWORD address (the document does not list SET_BASE).
                use p::set_base::{ADDRESS_LO, BaseIndex};
                let base = body!(set_base);
                if base.base_index() != Ok(BaseIndex::Indirect)
                    || ADDRESS_LO.bits_below(&base.0) != 0
                {
                    return Err(self.fail(bad, dev));
                }
                self.cp.indirect_base = base.address().0;
            }
            pm4::DISPATCH_DIRECT => {
                let d = body!(dispatch_direct);
                self.dispatch(h, [d.dim_x(), d.dim_y(), d.dim_z()], d.dispatch_initiator(), dev)?;
            }
            pm4::DISPATCH_INDIRECT => {
                // §9.3.13: DATA_OFFSET (bits 1:0 = 00) to {DIM_X, DIM_Y, DIM_Z}, from the
                // SET_BASE address.
                let d = body!(dispatch_indirect);
                if !d.data_offset().is_multiple_of(4) {
                    return Err(self.fail(bad, dev));
                }
                let at = self.cp.indirect_base.wrapping_add(u64::from(d.data_offset()));
                let mut dims = [0; 3];
                for (i, dim) in dims.iter_mut().enumerate() {
                    *dim = self.dma_read(at + 4 * i as u64, dev)?;
                }
                self.dispatch(h, dims, d.dispatch_initiator(), dev)?;
            }
            pm4::DEALLOC_STATE => {
                // §9.4.2: "Shader type should always be '1'".
                if !pm4::compute(h) {
                    return Err(self.fail(error_code::NOT_COMPUTE, dev));
                }
            }
            // §9.2.2: PREAMBLE_CNTL commands 0-3 (1xxx / x1xx reserved); §9.4.3: MODE_CONTROL
            // CMD 001 is the only command.
            pm4::PREAMBLE_CNTL if body!(preamble_cntl).cmd().is_err() => {
                return Err(self.fail(bad, dev));
            }
            pm4::MODE_CONTROL if body!(mode_control).cmd() != 1 => return Err(self.fail(bad, dev)),
            // CLEAR_STATE (§9.4.1), CONTEXT_CONTROL (§9.4.4), PFP_SYNC_ME (§9.6.5): no state the
            // model keeps (no shadowing, no clear-state image).
            _ => {}
        }
        Ok(())
    }

    fn pred_exec(
        &mut self,
        pred: baregpu_regs::evergreen::packets::pred_exec::Body,
        dev: &mut DeviceContext<'_>,
    ) -> Result<(), Failed> {
        // §9.5.4: device_select (a mask of device IDs, `pm4::device_selected`), exec_count =
        // "the exact number of DWords for the subsequent packets": none is not a count of
        // packets, and inside an indirect buffer they must lie in it (§9.3.1). The ring has no
        // end: a count reaching past what the driver wrote waits for more.
        let n = pred.exec_count();
        let past_ib = self.cp.ibs.last().is_some_and(|ib| n > ib.remaining);
        if n == 0 || past_ib {
            return Err(self.fail(error_code::INVALID_PACKET, dev));
        }
        if !pm4::device_selected(pred.device_select() as u8, self.cp.device_id) {
            // "The CP will start parsing the DWord immediately following EXEC_COUNT DWords":
            // the skipped dwords are not parsed.
            self.stats.packets_skipped += 1;
            self.cp.packet = Packet::Skip { remaining: n };
        }
        Ok(())
    }

    fn mem_semaphore(
        &mut self,
        sem: baregpu_regs::evergreen::packets::mem_semaphore::Body,
        dev: &mut DeviceContext<'_>,
    ) -> Result<(), Failed> {
        // §9.6.4: QWORD-aligned address; SEM_SEL signal or wait, SIGNAL_TYPE (0 increment, or a
        // wait; 1 write '1'), USE_MAILBOX, WAIT_ON_SIGNAL ("in cayman it is reserved and should
        // be set to zero").
        use baregpu_regs::evergreen::packets::mem_semaphore::{ADDRESS_LO, SemSel};
        let write_one = sem.signal_type();
        let wait_on_signal = sem.wait_on_signal();
        let sel = sem.sem_sel();
        let signal = sel == Ok(SemSel::Signal);
        let reserved = (wait_on_signal && self.asic == Asic::Cayman) || (!signal && write_one);
        if ADDRESS_LO.bits_below(&sem.0) != 0 || sel.is_err() || reserved {
            return Err(self.fail(error_code::INVALID_PACKET, dev));
        }
        if sem.use_mailbox() {
            // A signal held until a mailbox write: the model has no mailbox.
            return Err(self.fail(error_code::UNSUPPORTED_PACKET, dev));
        }
        // WAIT_ON_SIGNAL: the packet waited for the pipe to drain (`must_wait`).
        let at = sem.address().0;
        if signal {
            // "Executed at the bottom of pipe (after whatever work before it has been
            // completed)", whichever block CLIENT_CODE names (CP, CB, DB, SX).
            self.send_down_pipe(PipeAction::Signal { address: at, write_one });
        } else {
            // "Wait Semaphores are executed at the top of pipe (CP)": the CP stops here until
            // the semaphore is not zero, then takes one count (a counting semaphore: Linux
            // radeon r600/evergreen semaphore emit pairs each wait with one signal).
            self.cp.work = Some(Work::SemaphoreWait { address: at });
        }
        Ok(())
    }

    fn event_write(&mut self, b: &[u32], dev: &mut DeviceContext<'_>) -> Result<(), Failed> {
        // §9.6.1: 3 dwords for EVENT_INDEX 1-3 (ZPASS_DONE, SAMPLE_PIPELINESTAT,
        // SAMPLE_STREAMOUTSTATS), 1 for the others; index 5 belongs to EVENT_WRITE_EOP, 6+
        // reserved.
        use baregpu_regs::evergreen::packets::event_write::{
            ADDRESS_HI, ADDRESS_LO, EVENT_INDEX, EVENT_TYPE, EventIndex,
        };
        use baregpu_regs::packet::get_address;
        let index = EVENT_INDEX.get(b);
        let long = (1..=3).contains(&index);
        if index >= EventIndex::Eop as u32 || long != (b.len() == 3) {
            return Err(self.fail(error_code::INVALID_PACKET, dev));
        }
        self.write_register(VGT_EVENT_INITIATOR, EVENT_TYPE.get(b), dev)?;
        // CS_PARTIAL_FLUSH waited for the dispatches (`must_wait`); a cache flush takes effect
        // at the end of the pipe.
        if index == 0 && event::flushes(EVENT_TYPE.get(b)) {
            self.send_down_pipe(PipeAction::Flush);
        }
        if index == EventIndex::ZpassDone as u32 {
            // ZPASS_DONE: the DB writes its 64-bit sample count at the QWORD address. No pixel
            // is ever drawn here: 0 with bit 63 (the result-valid bit Mesa r600_query.c
            // waits for).
            if ADDRESS_LO.bits_below(b) != 0 {
                return Err(self.fail(error_code::INVALID_PACKET, dev));
            }
            let at = get_address(&[ADDRESS_LO, ADDRESS_HI], b).0;
            self.dma_write(at, 0, dev)?;
            self.dma_write(at + 4, 1 << 31, dev)?;
        } else if long {
            return Err(self.fail(error_code::UNSUPPORTED_PACKET, dev));
        }
        Ok(())
    }

    fn event_write_eop(&mut self, b: &[u32], dev: &mut DeviceContext<'_>) -> Result<(), Failed> {
        // §9.6.2, through the checked packet table. The event goes down the pipe: written once
        // the dispatches before it are done (`PipeAction::Eop`), while the CP goes on parsing.
        use baregpu_regs::evergreen::packets::event_write_eop::{
            ADDRESS_LO, Body, DataSel, EventIndex, IntSel,
        };
        let bad = error_code::INVALID_PACKET;
        let Ok(eop) = Body::unpack(b) else { return Err(self.fail(bad, dev)) };
        // DW2: EVENT_INDEX 5 ("reserved for EVENT_WRITE_EOP time stamp/fence event types")
        // with one of the three end-of-pipe events §9.6.2 lists.
        if eop.event_index() != Ok(EventIndex::Eop) || !EOP_EVENTS.contains(&eop.event_type()) {
            return Err(self.fail(bad, dev));
        }
        let (Ok(data_sel), Ok(int_sel)) = (eop.data_sel(), eop.int_sel()) else {
            return Err(self.fail(bad, dev));
        };
        // ADDRESS_LO bits below the field are "Reserved & must be programmed to zero".
        let reserved = eop.0[ADDRESS_LO.index()] & !ADDRESS_LO.spec.mask() != 0;
        if reserved || (int_sel == IntSel::Interrupt && data_sel != DataSel::None) {
            return Err(self.fail(bad, dev));
        }
        // 64-bit data, clock and counter need a quadword address (DW3 [31:3]).
        let at = eop.address().0;
        if data_sel as u32 >= DataSel::Data64 as u32 && !at.is_multiple_of(8) {
            return Err(self.fail(bad, dev));
        }
        // DW2: EVENT_INDEX 5 ("reserved for EVENT_WRITE_EOP time stamp/fence event types")
        // with one of the three end-of-pipe events §9.6.2 lists.
        if eop.event_index() != Ok(EventIndex::Eop) || !EOP_EVENTS.contains(&eop.event_type()) {
            return Err(self.fail(bad, dev));
        }
        self.write_register(VGT_EVENT_INITIATOR, eop.event_type(), dev)?;
        self.send_down_pipe(PipeAction::Eop {
            flush: event::flushes(eop.event_type()),
            address: at,
            data_sel: data_sel as u32,
            int_sel: int_sel as u32,
            data: [eop.data_lo(), eop.data_hi()],
        });
        Ok(())
    }

    /// Queue an event behind the dispatches issued so far.
    fn send_down_pipe(&mut self, what: PipeAction) {
        let after = self.cp.engines.next_dispatch;
        self.cp.engines.pipe.push_back(PipeEvent { after, since: self.clock, what });
    }

    /// §9.6.7 SURFACE_SYNC's actions on COHER_BASE (256-byte units) + COHER_SIZE (256-byte
    /// units; 0xFFFFFFFF is everything, as Linux radeon's fences use it).
    fn surface_sync(
        &mut self,
        cntl: u32,
        size: u32,
        base: u32,
        dev: &mut DeviceContext<'_>,
    ) -> Result<(), Failed> {
        use cp::CP_COHER_CNTL as C;
        let start = u64::from(base) << 8;
        let range = if size == u32::MAX {
            Range::ALL
        } else {
            Range { start, end: start + (u64::from(size) << 8) }
        };
        if C::TC_ACTION_ENA.get(cntl) != 0 || C::VC_ACTION_ENA.get(cntl) != 0 {
            self.caches.tc.invalidate(range);
        }
        if C::SH_ACTION_ENA.get(cntl) != 0 {
            self.caches.sh.invalidate(range);
        }
        if C::CB_ACTION_ENA.get(cntl) != 0 {
            // CB0-7 DEST_BASE_ENA bits 6-13, CB8-11 bits 15-18 (CP_COHER_CNTL).
            let cbs = (cntl >> 6) & 0xFF | ((cntl >> 15) & 0xF) << 8;
            self.flush_cb(cbs, range, dev)?;
        }
        Ok(())
    }

    /// Write back the colour-buffer cache lines of `cbs` in `range`.
    fn flush_cb(
        &mut self,
        cbs: u32,
        range: Range,
        dev: &mut DeviceContext<'_>,
    ) -> Result<(), Failed> {
        let n = self
            .caches
            .cb
            .flush(&mut DevMemory { dev }, cbs, range)
            .map_err(|_| self.fail(error_code::DMA_WRITE_FAULT, dev))?;
        self.stats.lines_written_back += n;
        self.tick_units += n;
        Ok(())
    }

    fn set_predication(
        &mut self,
        pred: baregpu_regs::evergreen::packets::set_predication::Body,
        dev: &mut DeviceContext<'_>,
    ) -> Result<(), Failed> {
        // §9.5.3: START_ADDR (16-byte aligned), PRED_OP, HINT, PREDICATION_BOOLEAN.
        use baregpu_regs::evergreen::packets::set_predication::{PredOp, START_ADDR_LO};
        match pred.pred_op() {
            Ok(PredOp::Clear) => self.cp.predicate = None,
            Ok(PredOp::Zpass) => {
                // ZPASS: the DB0 record at START_ADDR holds a begin and an end 64-bit sample
                // count (Mesa r600_query.c layout); visible = they differ. BOOLEAN 1 = draw if
                // visible, 0 = draw if not visible.
                if START_ADDR_LO.bits_below(&pred.0) != 0 {
                    return Err(self.fail(error_code::INVALID_PACKET, dev));
                }
                let at = pred.start_addr().0;
                let mut words = [0u32; 4];
                for (i, w) in words.iter_mut().enumerate() {
                    *w = self.dma_read(at + 4 * i as u64, dev)?;
                }
                let begin = u64::from(words[0]) | u64::from(words[1] & 0x7FFF_FFFF) << 32;
                let end = u64::from(words[2]) | u64::from(words[3] & 0x7FFF_FFFF) << 32;
                let visible = begin != end;
                self.cp.predicate = Some(visible == pred.predication_boolean());
            }
            Ok(PredOp::Primcount) => return Err(self.fail(error_code::UNSUPPORTED_PACKET, dev)),
            Err(_) => return Err(self.fail(error_code::INVALID_PACKET, dev)),
        }
        Ok(())
    }

    fn cp_dma(
        &mut self,
        dma: baregpu_regs::evergreen::packets::cp_dma::Body,
        dev: &mut DeviceContext<'_>,
    ) -> Result<(), Failed> {
        // Linux radeon evergreend.h / evergreen_cs.c (the document has no CP_DMA): SRC_SEL
        // memory or DATA (the fill dword in the source-address dword), DST_SEL memory,
        // COMMAND flags (no-increment and register-space bits) clear, BYTE_COUNT.
        use baregpu_regs::evergreen::packets::cp_dma::{DstSel, SRC_ADDRESS_LO, SrcSel};
        let bytes = dma.byte_count();
        let Ok(src_sel) = dma.src_sel() else {
            return Err(self.fail(error_code::INVALID_PACKET, dev));
        };
        if src_sel == SrcSel::Gds || dma.dst_sel() != Ok(DstSel::Memory) || dma.command_flags() != 0
        {
            return Err(self.fail(error_code::UNSUPPORTED_PACKET, dev));
        }
        let fill = (src_sel == SrcSel::Data).then_some(SRC_ADDRESS_LO.get(&dma.0));
        // "non mem to mem copies requires dw aligned count" (evergreen_cs.c).
        if fill.is_some() && !bytes.is_multiple_of(4) {
            return Err(self.fail(error_code::INVALID_PACKET, dev));
        }
        let (src, dst) = (dma.src_address().0, dma.dst_address().0);
        // Bus address 0: never programmed (see `dma_write`).
        if fill.is_none() && src == 0 {
            return Err(self.fail(error_code::DMA_FETCH_FAULT, dev));
        }
        if dst == 0 {
            return Err(self.fail(error_code::DMA_WRITE_FAULT, dev));
        }
        if bytes > 0 {
            // The DMA engine moves the bytes over the next ticks while the CP parses on.
            self.cp.engines.dma.push_back(DmaJob { fill, src, dst, remaining: bytes });
        }
        // CP_SYNC (bit 31): the CP waits until the engine is done (Linux radeon evergreend.h
        // PACKET3_CP_DMA_CP_SYNC, "ensure that the CP DMA is complete before the CP proceeds").
        if dma.cp_sync() {
            self.cp.work = Some(Work::DmaSync);
        }
        Ok(())
    }

    fn dispatch(
        &mut self,
        h: u32,
        groups: [u32; 3],
        initiator: u32,
        dev: &mut DeviceContext<'_>,
    ) -> Result<(), Failed> {
        use baregpu_regs::evergreen::vgt::VGT_DISPATCH_INITIATOR as I;
        // §9.3.12: the compute bit is set on dispatches; §3.2 step 11: COMPUTE_SHADER_EN = 1.
        self.write_register(VGT_DISPATCH_INITIATOR, initiator, dev)?;
        if !pm4::compute(h) || I::COMPUTE_SHADER_EN.get(initiator) == 0 {
            return Err(self.fail(error_code::NOT_COMPUTE, dev));
        }
        let state = self.dispatch_state(groups);
        match Dispatch::new(state, self.limits) {
            Ok(d) => {
                self.stats.dispatches += 1;
                let e = &mut self.cp.engines;
                e.dispatches.push_back((e.next_dispatch, Box::new(d)));
                e.next_dispatch += 1;
                Ok(())
            }
            Err(e) => Err(self.fail(e.code(), dev)),
        }
    }

    /// The compute state from the registers (the CS runs on the LS program and constant
    /// registers, §3.1).
    fn dispatch_state(&self, groups: [u32; 3]) -> DispatchState {
        let r = |o: u32| self.regs.stored(o);
        let mut s = DispatchState::new(self.asic.shader_chip());
        s.pgm_start = r(PGM_START_LS);
        s.pgm_resources = r(PGM_RESOURCES_LS);
        s.input_cntl = r(INPUT_CNTL);
        s.num_threads = NUM_THREAD.map(r);
        s.lds_alloc = r(LDS_ALLOC);
        for n in 0..16 {
            s.const_cache[n] = r(CONST_CACHE_LS + 4 * n as u32);
            s.const_size[n] = r(CONST_SIZE_LS + 4 * n as u32);
        }
        s.resources = (0..CS_RESOURCE_COUNT)
            .map(|b| {
                let at = RESOURCE0 + RESOURCE_STRIDE * (CS_RESOURCE_BASE + b) as u32;
                std::array::from_fn(|i| r(at + 4 * i as u32))
            })
            .collect();
        for n in 0..RAT_COUNT {
            let base = if n < 8 {
                CB_COLOR0_BASE + CB_COLOR0_STRIDE * n as u32
            } else {
                CB_COLOR8_BASE + CB_COLOR8_STRIDE * (n - 8) as u32
            };
            // BASE, PITCH, SLICE, VIEW, INFO, ATTRIB, DIM at consecutive dwords (Linux radeon
            // evergreend.h CB_COLOR0_*).
            s.rats[n] = RatRegs {
                base: r(base),
                pitch: r(base + 4),
                slice: r(base + 8),
                view: r(base + 12),
                info: r(base + 16),
                attrib: r(base + 20),
                dim: r(base + 24),
            };
        }
        for i in 0..32 {
            s.loop_consts[i] = r(LOOP_CONST0 + 4 * (CS_LOOP_CONST_BASE + i as u32));
        }
        s.bool_consts = r(crate::regfile::CONSTANT_FILES[2].0 + 4 * CS_BOOL_CONST_WORD);
        s.groups = groups;
        s
    }

    // ---------------------------------------------------------------------------------------
    // Work in progress

    /// Advance the CP's wait by one poll. `Ok(Some(activity))`: still waiting.
    fn advance_work(&mut self, dev: &mut DeviceContext<'_>) -> Result<Option<Activity>, Failed> {
        let Some(work) = self.cp.work.take() else { return Ok(None) };
        match work {
            Work::Wait { memory, address, function, reference, mask, interval, idle } => {
                if idle > 0 {
                    let idle = idle - 1;
                    let wait =
                        Work::Wait { memory, address, function, reference, mask, interval, idle };
                    self.cp.work = Some(wait);
                    return Ok(Some(Activity::Waiting));
                }
                self.stats.polls += 1;
                self.tick_units += 1;
                let v = if memory {
                    self.dma_read(address, dev)?
                } else {
                    self.read_register(address as u32)
                };
                if compare(function, v & mask, reference) {
                    return Ok(None);
                }
                let idle = interval - 1;
                let wait =
                    Work::Wait { memory, address, function, reference, mask, interval, idle };
                self.cp.work = Some(wait);
                Ok(Some(Activity::Waiting))
            }
            Work::SemaphoreWait { address } => {
                self.stats.semaphore_polls += 1;
                self.tick_units += 1;
                let v = self.dma_read_u64(address, dev)?;
                if v == 0 {
                    self.cp.work = Some(Work::SemaphoreWait { address });
                    return Ok(Some(Activity::Waiting));
                }
                self.dma_write_u64(address, v - 1, dev)?;
                Ok(None)
            }
            Work::DmaSync => {
                if self.cp.engines.dma.is_empty() {
                    return Ok(None);
                }
                self.stats.engine_waits += 1;
                self.cp.work = Some(Work::DmaSync);
                Ok(Some(Activity::Busy))
            }
        }
    }

    /// The CP's share of a tick: continue its wait, run a packet that waited for an engine,
    /// or fetch.
    fn run_cp(&mut self, dev: &mut DeviceContext<'_>) -> Result<Activity, Failed> {
        let had_work = self.cp.work.is_some();
        if let Some(activity) = self.advance_work(dev)? {
            return Ok(activity);
        }
        if had_work {
            // The wait ended within this tick: fetch again on the next tick.
            return Ok(Activity::Busy);
        }
        if !self.run_ready(dev)? {
            return Ok(Activity::Busy);
        }
        let one_packet = self.faults.slow.is_some();
        for _ in 0..DWORDS_PER_TICK {
            let Some(w) = self.fetch(dev)? else { return Ok(Activity::Idle) };
            self.tick_units += 1;
            let done = self.feed(w, dev)?;
            if matches!(self.cp.packet, Packet::Ready { .. }) {
                // Stalled on an engine.
                break;
            }
            if done && (self.cp.work.is_some() || one_packet) {
                break;
            }
        }
        Ok(Activity::Busy)
    }

    /// The engines' share of a tick: one DMA slice, one shader step, one end-of-pipe event.
    fn run_engines(&mut self, dev: &mut DeviceContext<'_>) -> Result<(), Failed> {
        self.run_dma(dev)?;
        self.run_shader(dev)?;
        self.run_pipe(dev)
    }

    fn run_dma(&mut self, dev: &mut DeviceContext<'_>) -> Result<(), Failed> {
        let Some(job) = self.cp.engines.dma.front_mut() else { return Ok(()) };
        let n = job.remaining.min(DMA_BYTES_PER_TICK);
        let (fill, src, dst) = (job.fill, job.src, job.dst);
        job.remaining -= n;
        if fill.is_none() {
            job.src += u64::from(n);
        }
        job.dst += u64::from(n);
        if job.remaining == 0 {
            self.cp.engines.dma.pop_front();
        }
        let mut buf = vec![0u8; n as usize];
        match fill {
            Some(v) => {
                for c in buf.chunks_exact_mut(4) {
                    c.copy_from_slice(&v.to_le_bytes());
                }
            }
            // The DMA engine reads and writes memory, not the shader core's caches.
            None => dev
                .dma_read(src, &mut buf)
                .map_err(|_| self.fail(error_code::DMA_FETCH_FAULT, dev))?,
        }
        dev.dma_write(dst, &buf).map_err(|_| self.fail(error_code::DMA_WRITE_FAULT, dev))?;
        self.stats.dma_bytes += u64::from(n);
        self.tick_units += u64::from(n.div_ceil(64));
        Ok(())
    }

    fn run_shader(&mut self, dev: &mut DeviceContext<'_>) -> Result<(), Failed> {
        let e = &mut self.cp.engines;
        if e.dispatches.is_empty() {
            return Ok(());
        }
        // Dispatches in flight share the shader core: one step each in turn, so a dispatch
        // issued without a CS_PARTIAL_FLUSH runs beside the one before it.
        let index = e.turn % e.dispatches.len();
        e.turn = e.turn.wrapping_add(1);
        let d = &mut e.dispatches[index].1;
        let before = d.stats().units;
        let mut memory = CachedMemory { dev, caches: &mut self.caches, written_back: 0 };
        let result = d.step(&mut memory, SHADER_UNITS_PER_TICK);
        // Lines an export evicts are part of that export's work (one unit: one instruction
        // of one wave, at most 64 lanes of memory accesses).
        self.stats.lines_written_back += memory.written_back;
        self.tick_units += d.stats().units - before;
        match result {
            StepResult::Running => Ok(()),
            StepResult::Done => {
                self.cp.engines.dispatches.remove(index);
                Ok(())
            }
            StepResult::Error(e) => Err(self.fail(e.code(), dev)),
        }
    }

    /// Retire the oldest end-of-pipe event once the dispatches before it are done.
    fn run_pipe(&mut self, dev: &mut DeviceContext<'_>) -> Result<(), Failed> {
        let e = &self.cp.engines;
        let Some(head) = e.pipe.front() else { return Ok(()) };
        if head.since >= self.clock || e.dispatches.iter().any(|(id, _)| *id < head.after) {
            return Ok(());
        }
        let event = self.cp.engines.pipe.pop_front().expect("checked above");
        self.stats.pipe_events += 1;
        let interrupts = self.regs.stored(CP_INT_CNTL) & TIME_STAMP_INT_ENABLE != 0;
        match event.what {
            PipeAction::Eop { flush, address, data_sel, int_sel, data } => {
                if flush {
                    // "the CBs, DBs, and SX have completed flushing their caches" (§9.6.2).
                    self.flush_cb(u32::MAX, Range::ALL, dev)?;
                }
                let (lo, hi) = match data_sel {
                    3 => (self.clock as u32, (self.clock >> 32) as u32),
                    // CP_PERFCOUNTER: not modelled, counts 0.
                    4 => (0, 0),
                    _ => (data[0], data[1]),
                };
                if data_sel >= 1 {
                    self.dma_write(address, lo, dev)?;
                }
                if data_sel >= 2 {
                    self.dma_write(address + 4, hi, dev)?;
                }
                match int_sel {
                    // "Send Interrupt when Write Confirm is received from the MC": the tick
                    // after the write.
                    2 => self.cp.engines.pipe.push_front(PipeEvent {
                        after: 0,
                        since: self.clock,
                        what: PipeAction::Confirmed,
                    }),
                    1 if interrupts => self.ih_push(ih::SRC_CP_EOP, 0, dev)?,
                    _ => {}
                }
            }
            PipeAction::Confirmed => {
                if interrupts {
                    self.ih_push(ih::SRC_CP_EOP, 0, dev)?;
                }
            }
            PipeAction::Eos { address, data } => self.dma_write(address, data, dev)?,
            PipeAction::Signal { address, write_one } => {
                let v = self.dma_read_u64(address, dev)?;
                let v = if write_one { 1 } else { v.wrapping_add(1) };
                self.dma_write_u64(address, v, dev)?;
                self.stats.semaphore_signals += 1;
            }
            PipeAction::Flush => self.flush_cb(u32::MAX, Range::ALL, dev)?,
        }
        Ok(())
    }

    fn run(&mut self, dev: &mut DeviceContext<'_>) -> Result<Activity, Failed> {
        let cp = self.run_cp(dev)?;
        // Engines that worked this tick may have released what the CP waits for (a semaphore
        // signal, a fence it polls): busy, not waiting, until a tick finds them idle.
        let engines_worked = self.cp.engines.busy();
        self.run_engines(dev)?;
        Ok(if engines_worked || self.cp.engines.busy() { Activity::Busy } else { cp })
    }
}

/// GPU clocks one engine tick stands for: the shortest WAIT_REG_MEM poll interval (§9.6.8: 16
/// clocks per POLL_INTERVAL unit, at least 4 units), so the minimum interval polls every tick.
pub const CLOCKS_PER_TICK: u32 = 64;

/// Ticks between WAIT_REG_MEM polls for a POLL_INTERVAL (§9.6.8: "A value less than 0x04 will be
/// forced to 0x04").
fn poll_ticks(poll_interval: u32) -> u32 {
    (16 * poll_interval.max(4)).div_ceil(CLOCKS_PER_TICK)
}

/// §9.6.8 / §9.5.2 FUNCTION: 0 always, 1 <, 2 <=, 3 ==, 4 !=, 5 >=, 6 > (masked value against
/// the reference).
fn compare(function: u32, value: u32, reference: u32) -> bool {
    match function {
        0 => true,
        1 => value < reference,
        2 => value <= reference,
        3 => value == reference,
        4 => value != reference,
        5 => value >= reference,
        6 => value > reference,
        _ => false,
    }
}

/// A swap code (`BUF_SWAP`, `RB_RPTR_SWAP`): 0 none, 1 16-bit, 2 32-bit, 3 half-dword.
pub const fn swap(value: u32, mode: u32) -> u32 {
    match mode & 3 {
        0 => value,
        1 => ((value & 0x00FF_00FF) << 8) | ((value >> 8) & 0x00FF_00FF),
        2 => value.swap_bytes(),
        _ => value.rotate_left(16),
    }
}

/// Guest memory (bus-master accesses of the device), no caches.
struct DevMemory<'a, 'b> {
    dev: &'a mut DeviceContext<'b>,
}

/// Guest memory as the shader core sees it: each unit through its cache ([`crate::cache`]).
struct CachedMemory<'a, 'b> {
    dev: &'a mut DeviceContext<'b>,
    caches: &'a mut Caches,
    /// Colour-buffer lines evicted (written back) by the accesses.
    written_back: u64,
}

impl ShaderMemory for CachedMemory<'_, '_> {
    fn read(&mut self, address: u64, buf: &mut [u8]) -> Result<(), MemoryFault> {
        DevMemory { dev: self.dev }.read(address, buf)
    }
    fn write(&mut self, address: u64, data: &[u8]) -> Result<(), MemoryFault> {
        DevMemory { dev: self.dev }.write(address, data)
    }
    fn read_via(&mut self, path: Path, address: u64, buf: &mut [u8]) -> Result<(), MemoryFault> {
        let mut memory = DevMemory { dev: self.dev };
        match path {
            Path::Instruction | Path::Constant => {
                self.caches.sh.read(&mut memory, address, buf).map(drop)
            }
            Path::Fetch => self.caches.tc.read(&mut memory, address, buf).map(drop),
            Path::Rat { .. } => self.caches.cb.read(&mut memory, address, buf),
            Path::RatCacheless => memory.read(address, buf),
        }
    }
    fn write_via(&mut self, path: Path, address: u64, data: &[u8]) -> Result<(), MemoryFault> {
        let mut memory = DevMemory { dev: self.dev };
        match path {
            Path::Rat { cb } => {
                self.written_back += self.caches.cb.write(&mut memory, cb, address, data)?;
                Ok(())
            }
            _ => {
                memory.write(address, data)?;
                // A newer write than what the colour-buffer cache holds for these bytes.
                self.caches.cb.forget(address, data.len());
                Ok(())
            }
        }
    }
}

impl ShaderMemory for DevMemory<'_, '_> {
    fn read(&mut self, address: u64, buf: &mut [u8]) -> Result<(), MemoryFault> {
        let len = buf.len();
        self.dev.dma_read(address, buf).map_err(|_| MemoryFault { address, len })
    }
    fn write(&mut self, address: u64, data: &[u8]) -> Result<(), MemoryFault> {
        self.dev.dma_write(address, data).map_err(|_| MemoryFault { address, len: data.len() })
    }
}

impl GpuModel for EvergreenModel {
    fn pci_identity(&self) -> PciIdentity {
        BAR.present(PciIdentity::new(VENDOR_ID, self.asic.device_id(), CLASS))
    }

    fn mmio_read(&mut self, bar: u8, offset: u32, _dev: &mut DeviceContext<'_>) -> u32 {
        BAR.read(bar, self.faults.registers_all_ones, || self.read_register(offset))
    }

    fn mmio_write(&mut self, bar: u8, offset: u32, value: u32, dev: &mut DeviceContext<'_>) {
        // A failure is recorded in the CP error and the device's error state.
        BAR.write(bar, self.faults.registers_all_ones, || {
            let _ = self.write_register(offset, value, dev);
        });
    }

    fn tick(&mut self, dev: &mut DeviceContext<'_>) -> Activity {
        self.clock += 1;
        if !self.running() {
            return Activity::Idle;
        }
        if let Some(n) = self.faults.slow {
            self.cp.slow_ticks += 1;
            if self.cp.slow_ticks < u32::from(n) {
                return if self.busy() { Activity::Busy } else { Activity::Idle };
            }
            self.cp.slow_ticks = 0;
        }
        self.tick_units = 0;
        let activity = self.run(dev).unwrap_or(Activity::Idle);
        self.stats.units += self.tick_units;
        self.stats.max_tick_units = self.stats.max_tick_units.max(self.tick_units);
        activity
    }

    fn reset(&mut self) {
        let limits = self.limits;
        *self = Self::with_faults(self.asic, self.faults);
        self.limits = limits;
    }

    fn inject(&mut self, switches: u32) -> bool {
        self.faults = Faults::from_switches(switches);
        true
    }
}
