//! ATI CTM compute on the R5xx command processor: DPP programs in DMA memory, CTM command
//! buffers handed to the CTM units through the CP ring, completion through fences.
//!
//! The CTM guide leaves submission to the proprietary "CTM Device Interface" (ch. 5:
//! `amSubmitCommandBuffer(addr, size)`, `amCommandBufferConsumed`). This driver uses the
//! project's definition of that interface (register database, CP block): a type-0 packet
//! writes `CTM_CB_BASE` then `CTM_CB_SIZE` (the §5.10 indirect-buffer convention: the size
//! write is the packet's last and starts the transfer); the CP resumes after the CTM
//! Processor Execution Unit consumed the buffer, so a fence after it signals "consumed".
//! `CTM_STATUS` reports buffers consumed and the first CTM error. Real R5xx boards do not
//! have these registers (README, "CTM submission").
//!
//! Program loading (CTM guide §4.1.4): the loader's `dpp_proginfo` words are the shader-unit
//! registers of the same names (`US_CONFIG`, `US_PIXSIZE`, `US_FC_CTRL`, `US_CODE_ADDR`,
//! `US_CODE_RANGE`, `FG_DEPTH_SRC`, amd-r5xx-acceleration §11.10), written by type-0 packets
//! before the command buffer. They are not pipelined state: [`Submission::ctm_dispatch`]
//! writes them in ring order, after everything before it has been consumed.
//!
//! Programs and command buffers own their DMA memory ([`DmaBuffer`]): it goes back to the
//! allocator when they are dropped, which must wait until the device is done with them (the
//! fence of the last dispatch that used them).
//!
//! MC addresses (§2.1.4) are bus addresses: programs, command buffers and data surfaces live
//! in DMA memory below 4 GiB, 2 KiB aligned where a CTM base address points at them.

use core::fmt;
use core::time::Duration;

use baregpu_ati_ctm::command::{DataFormat, Format, GpuAddress, Tiling};
use baregpu_ati_ctm::elf::{DppExecutable, INSTRUCTION_BYTES};
use baregpu_hal::dma::{DmaAllocator, DmaBuffer, DmaError, DmaLayout, DmaRegion};
use baregpu_hal::time::Clock;
use baregpu_hal::{RegisterIo, RegisterIoExt};
use baregpu_regs::r5xx::cp::{CTM_CB_BASE, CTM_CB_SIZE, CTM_STATUS};
use baregpu_regs::r5xx::fg::FG_DEPTH_SRC;
use baregpu_regs::r5xx::us::{
    US_CODE_ADDR, US_CODE_OFFSET, US_CODE_RANGE, US_CONFIG, US_FC_CTRL, US_PIXSIZE,
};

use crate::consts::FENCE_DWORDS;
use crate::error::{FenceError, SubmitError};
use crate::liveness;
use crate::r5xx::R5xx;
use crate::r5xx::submit::Submission;
use baregpu_gpu::Fence;

/// Ring dwords of one [`Submission::ctm_dispatch`]: five type-0 packets (US_CONFIG +
/// US_PIXSIZE: 3, US_FC_CTRL: 2, US_CODE_ADDR..US_CODE_OFFSET: 4, FG_DEPTH_SRC: 2,
/// CTM_CB_BASE + CTM_CB_SIZE: 3).
pub const DISPATCH_DWORDS: usize = 3 + 2 + 4 + 2 + 3;

/// Largest command buffer: `CTM_CB_SIZE.SIZE` is 23 bits of dwords.
pub const MAX_COMMAND_DWORDS: usize = CTM_CB_SIZE::SIZE.mask() as usize;

/// Why a program or command buffer could not be placed in DMA memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum CtmLoadError {
    /// The DMA allocation failed.
    Dma(DmaError),
    /// The allocator returned memory the CTM units cannot address (above 4 GiB, or not 2 KiB
    /// aligned).
    Unaddressable {
        /// Bus address of the allocation.
        bus: u64,
    },
    /// More command words than the buffer holds (or than `CTM_CB_SIZE` can express).
    TooLarge {
        /// Words offered.
        words: usize,
        /// Capacity.
        capacity: usize,
    },
}

impl From<DmaError> for CtmLoadError {
    fn from(e: DmaError) -> Self {
        CtmLoadError::Dma(e)
    }
}

impl fmt::Display for CtmLoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CtmLoadError::Dma(_) => f.write_str("DMA memory for CTM"),
            CtmLoadError::Unaddressable { bus } => {
                write!(f, "bus address {bus:#x} is not a 2 KiB-aligned 32-bit MC address")
            }
            CtmLoadError::TooLarge { words, capacity } => {
                write!(f, "{words} command words do not fit in {capacity}")
            }
        }
    }
}

impl core::error::Error for CtmLoadError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            CtmLoadError::Dma(e) => Some(e),
            _ => None,
        }
    }
}

/// Allocate `bytes` of DMA memory the CTM units can address: a 2 KiB-aligned bus address
/// below 4 GiB, returned with it as a CTM base address (programs, command buffers, surfaces).
/// Memory that does not qualify is given back (dropped).
pub fn allocate<'d, A: DmaAllocator + ?Sized>(
    dma: &'d A,
    bytes: usize,
) -> Result<(DmaBuffer<'d, A>, GpuAddress), CtmLoadError> {
    let layout = DmaLayout::new(bytes, GpuAddress::ALIGN as usize)?;
    let buffer = DmaBuffer::allocate(dma, layout)?;
    let bus = buffer.bus_address().0;
    let address = u32::try_from(bus).ok().and_then(|a| GpuAddress::new(a).ok());
    let address = address.ok_or(CtmLoadError::Unaddressable { bus })?;
    Ok((buffer, address))
}

/// A DPP program (CTM guide ch. 4) copied into DMA memory, with the shader-unit registers its
/// Program Information note sets. Its memory is given back when it is dropped.
#[derive(Debug)]
pub struct CtmProgram<'d, A: DmaAllocator + ?Sized> {
    region: DmaBuffer<'d, A>,
    address: GpuAddress,
    instructions: u32,
    info: baregpu_ati_ctm::elf::ProgramInfo,
}

impl<'d, A: DmaAllocator + ?Sized> CtmProgram<'d, A> {
    /// Copy the `.text` of an already validated executable into DMA memory.
    pub fn load(exe: &DppExecutable<'_>, dma: &'d A) -> Result<Self, CtmLoadError> {
        let instructions = exe.instruction_count();
        let bytes = (instructions as usize * INSTRUCTION_BYTES).max(INSTRUCTION_BYTES);
        let (region, address) = allocate(dma, bytes)?;
        region.zero();
        for (k, word) in exe.instruction_words().enumerate() {
            region.write_u32(4 * k, word)?;
        }
        Ok(CtmProgram { region, address, instructions, info: *exe.program_info() })
    }

    /// Where the instructions are: the base address for `set_inst_fmt`.
    pub fn address(&self) -> GpuAddress {
        self.address
    }

    /// The instruction format for `set_inst_fmt`: linear 32-bit elements, instruction `pc`
    /// word `k` at element `(6 * pc + k, 0)` (§2.1.1).
    pub fn format(&self) -> Format {
        // Infallible: a pitch of 4 is a multiple of 4 and in range.
        Format::new(4, Tiling::Linear, DataFormat::Float32x1).unwrap_or_else(|_| unreachable!())
    }

    /// Number of instructions.
    pub fn instructions(&self) -> u32 {
        self.instructions
    }

    /// The Program Information note (§4.1.4).
    pub fn info(&self) -> &baregpu_ati_ctm::elf::ProgramInfo {
        &self.info
    }

    /// The DMA memory holding the instructions.
    pub fn memory(&self) -> &DmaRegion {
        &self.region
    }
}

/// A CTM command buffer (CTM guide §2.2) in DMA memory, given back when it is dropped.
#[derive(Debug)]
pub struct CtmCommandBuffer<'d, A: DmaAllocator + ?Sized> {
    region: DmaBuffer<'d, A>,
    address: GpuAddress,
    /// `CTM_CB_BASE` for the buffer, checked by the register's bus-address setter.
    cb_base: CTM_CB_BASE,
    capacity: usize,
    len: usize,
}

impl<'d, A: DmaAllocator + ?Sized> CtmCommandBuffer<'d, A> {
    /// Room for `capacity` command words.
    pub fn new(dma: &'d A, capacity: usize) -> Result<Self, CtmLoadError> {
        if capacity == 0 || capacity > MAX_COMMAND_DWORDS {
            return Err(CtmLoadError::TooLarge { words: capacity, capacity: MAX_COMMAND_DWORDS });
        }
        let (region, address) = allocate(dma, capacity * 4)?;
        // The CP fetches the buffer at its bus address (MC addresses are bus addresses here).
        let bus = region.bus_address();
        let cb_base = CTM_CB_BASE::RESET
            .try_with_addr(bus)
            .map_err(|_| CtmLoadError::Unaddressable { bus: bus.0 })?;
        Ok(CtmCommandBuffer { region, address, cb_base, capacity, len: 0 })
    }

    /// Replace the contents with `words` (e.g. [`baregpu_ati_ctm::CommandBuffer::as_words`]). Do not
    /// call it while a dispatch of this buffer may still be running.
    pub fn set(&mut self, words: &[u32]) -> Result<(), CtmLoadError> {
        if words.len() > self.capacity {
            return Err(CtmLoadError::TooLarge { words: words.len(), capacity: self.capacity });
        }
        self.region.write_slice(0, words)?;
        self.len = words.len();
        Ok(())
    }

    /// The MC address of the first command.
    pub fn address(&self) -> GpuAddress {
        self.address
    }

    /// Words in the buffer.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer holds no command.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Why the CTM units stopped (`CTM_STATUS.ERROR_CODE`, register database).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum CtmFault {
    /// A word that is not a Table 3 command.
    UnknownCommand,
    /// A Table 3 command with the wrong parameter count.
    BadParameterCount,
    /// The buffer ends inside a command.
    Truncated,
    /// A format word with a reserved data format (§2.2.2).
    ReservedDataFormat,
    /// A command's memory access failed.
    MemoryFault,
    /// A command that is not pipelined while a program may be executing (§2.2: it must follow
    /// a `wait_for_idle`).
    NotIdle,
    /// The command buffer used up the CTM units' work budget for one buffer (the emulated
    /// part's bound on guest-controlled work; split the work into more buffers).
    BufferBudgetExceeded,
    /// A command buffer was submitted while another was still being consumed.
    BufferInFlight,
    /// The DPP program failed; the device's sub-code is kept.
    Program(u8),
    /// A code this driver does not know.
    Other(u16),
}

impl CtmFault {
    fn from_code(code: u16) -> Self {
        match code {
            0x101 => CtmFault::UnknownCommand,
            0x102 => CtmFault::BadParameterCount,
            0x103 => CtmFault::Truncated,
            0x104 => CtmFault::ReservedDataFormat,
            0x105 => CtmFault::MemoryFault,
            0x106 => CtmFault::NotIdle,
            0x107 => CtmFault::BufferBudgetExceeded,
            0x108 => CtmFault::BufferInFlight,
            0x200..=0x2FF => CtmFault::Program((code & 0xFF) as u8),
            other => CtmFault::Other(other),
        }
    }
}

/// `CTM_STATUS`, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CtmStatus {
    /// Command buffers consumed since reset (16 bits, wraps).
    pub consumed: u16,
    /// The first error, if the CTM units stopped.
    pub fault: Option<CtmFault>,
}

/// Why a CTM dispatch did not complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum CtmWaitError {
    /// The CTM units stopped on an error (the CP stopped with them): reset or recover the
    /// device before the next dispatch.
    Fault(CtmFault),
    /// The fence did not signal in time and no CTM error is reported (hung CP): reset.
    Fence(FenceError),
}

impl fmt::Display for CtmWaitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CtmWaitError::Fault(fault) => write!(f, "CTM units stopped: {fault:?}"),
            CtmWaitError::Fence(_) => f.write_str("CTM dispatch fence"),
        }
    }
}

impl From<FenceError> for CtmWaitError {
    fn from(e: FenceError) -> Self {
        CtmWaitError::Fence(e)
    }
}

impl core::error::Error for CtmWaitError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            CtmWaitError::Fence(e) => Some(e),
            CtmWaitError::Fault(_) => None,
        }
    }
}

impl<IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> Submission<'_, '_, IO, C, A> {
    /// Load `program`'s shader-unit registers, then hand `commands` to the CTM units
    /// ([`DISPATCH_DWORDS`] ring dwords) within this batch. Follow it with
    /// [`fence`](Self::fence) to learn when the buffer was consumed ([`R5xx::ctm_submit`] does
    /// both in a batch of its own).
    pub fn ctm_dispatch<P: DmaAllocator + ?Sized, B: DmaAllocator + ?Sized>(
        &mut self,
        program: &CtmProgram<'_, P>,
        commands: &CtmCommandBuffer<'_, B>,
    ) -> Result<(), SubmitError> {
        self.reserve(DISPATCH_DWORDS)?;
        let info = program.info();
        let mut w = self.writer();
        w.write_regs((
            US_CONFIG::from_raw(info.us_config()),
            US_PIXSIZE::from_raw(info.us_pixsize()),
        ))?;
        w.write_reg(US_FC_CTRL::from_raw(info.us_fc_ctrl()))?;
        w.write_regs((
            US_CODE_ADDR::from_raw(info.us_code_addr()),
            US_CODE_RANGE::from_raw(info.us_code_range()),
            // The program sits at the start of its own instruction surface.
            US_CODE_OFFSET::RESET,
        ))?;
        w.write_reg(FG_DEPTH_SRC::from_raw(info.fg_depth_src()))?;
        let size = CTM_CB_SIZE::RESET.with_size(commands.len() as u32);
        w.write_regs((commands.cb_base, size))?;
        Ok(())
    }
}

impl<IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> R5xx<'_, IO, C, A> {
    /// One batch of its own: [`Submission::ctm_dispatch`] and a fence, one doorbell; returns
    /// the fence to [`ctm_wait`](Self::ctm_wait) on.
    pub fn ctm_submit<P: DmaAllocator + ?Sized, B: DmaAllocator + ?Sized>(
        &mut self,
        program: &CtmProgram<'_, P>,
        commands: &CtmCommandBuffer<'_, B>,
    ) -> Result<Fence, SubmitError> {
        self.submit(DISPATCH_DWORDS + FENCE_DWORDS, |s| {
            s.ctm_dispatch(program, commands)?;
            s.fence()
        })
    }

    /// Read `CTM_STATUS`.
    pub fn ctm_status(&self) -> CtmStatus {
        let status = self.io().read::<CTM_STATUS>();
        CtmStatus {
            consumed: status.consumed(),
            fault: status.error().then(|| CtmFault::from_code(status.error_code())),
        }
    }

    /// Wait for the fence of a dispatch, at most `timeout`. A CTM error is reported as soon as
    /// `CTM_STATUS` shows it (checked every [`LIVENESS_CHECK_EVERY`](baregpu_gpu::liveness::LIVENESS_CHECK_EVERY) polls, with the
    /// all-ones check), not at the deadline; a fence that does not signal without a CTM error
    /// is a hung CP ([`FenceError::Timeout`]). Outputs are in memory only if the command
    /// buffer flushed the output caches (`flush_out_cache`, CTM guide §2.1.4).
    pub fn ctm_wait(&self, fence: &Fence, timeout: Duration) -> Result<(), CtmWaitError> {
        self.wait_with(fence, timeout, || match liveness::check_alive(self.io()) {
            Err(gone) => Some(CtmWaitError::Fence(FenceError::DeviceGone(gone))),
            Ok(()) => self.ctm_status().fault.map(CtmWaitError::Fault),
        })
    }
}
