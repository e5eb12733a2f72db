//! Compute dispatch (amd-evergreen-cayman-acceleration §3.2, §8.6, §9.3.12, §9.3.13): the state
//! a compute shader needs, emitted in the order of Mesa r600 evergreen_compute.c, with the kernel
//! ABI of `baregpu-evergreen-asm` (constant buffer 0 = dispatch dimensions then arguments,
//! fetch buffer 1 = global reads, RAT 0 = global writes).

use core::fmt;

use baregpu_evergreen_asm::abi::{self, AbiError};
use baregpu_hal::RegisterIo;
use baregpu_hal::dma::{BusAddress, DmaAllocator, DmaRegion};
use baregpu_hal::register::{Array, Register};
use baregpu_hal::time::Clock;
use baregpu_regs::evergreen::Chipset;
use baregpu_regs::evergreen::cb::{
    CB_COLOR0_ATTRIB, CB_COLOR0_BASE, CB_COLOR0_DIM, CB_COLOR0_INFO, CB_COLOR0_PITCH,
    CB_TARGET_MASK, cb_color0_info,
};
use baregpu_regs::evergreen::cp::CP_COHER_CNTL;
use baregpu_regs::evergreen::db::DB_RENDER_CONTROL;
use baregpu_regs::evergreen::packets::event_write::EventIndex;
use baregpu_regs::evergreen::packets::set_base;
use baregpu_regs::evergreen::spi::{
    SPI_COMPUTE_INPUT_CNTL, SPI_COMPUTE_NUM_THREAD_X, SPI_LDS_MGMT_CAYMAN_ONWARD,
};
use baregpu_regs::evergreen::sq::{
    SQ_ALU_CONST_BUFFER_SIZE_LS_0, SQ_ALU_CONST_CACHE_LS_0,
    SQ_DYN_GPR_RESOURCE_LIMIT_1_CYPRESS_UNTIL_CAYMAN, SQ_LDS_ALLOC, SQ_LDS_RESOURCE_MGMT,
    SQ_LOOP_CONST_0, SQ_PGM_RESOURCES_LS, SQ_PGM_START_LS, SQ_STACK_RESOURCE_MGMT_3,
    SQ_THREAD_RESOURCE_MGMT_2, SQ_THREAD_RESOURCE_MGMT_CYPRESS_UNTIL_CAYMAN,
    SQ_VTX_CONSTANT_WORD0_0,
};
use baregpu_regs::evergreen::vgt::{
    VGT_COMPUTE_START_X, VGT_COMPUTE_THREAD_GROUP_SIZE, VGT_DISPATCH_INITIATOR, VGT_GS_MODE,
    VGT_NUM_INDICES, VGT_PRIMITIVE_TYPE, VGT_SHADER_STAGES_EN, vgt_gs_mode, vgt_primitive_type,
    vgt_shader_stages_en,
};

use crate::error::SubmitError;
use crate::pm4::{self, PacketError, event, opcode};
use crate::{Evergreen, FENCE_DWORDS, Fence, Submission};

/// Threads per wave (the shader core runs 64 threads per wave; Mesa r600 divides the group by
/// 16 threads x 4 quad pipes).
pub const WAVE_THREADS: u32 = 64;
/// Most threads in a group (OpenCL on Evergreen/Cayman: 256, Mesa r600 `max_threads_per_block`).
pub const MAX_GROUP_THREADS: u32 = 256;
/// Most LDS dwords a group may allocate (32 KiB per SIMD; `SQ_LDS_RESOURCE_MGMT` gives the LS
/// stage 8192 dwords, Mesa r600).
pub const MAX_LDS_DWORDS: u32 = 8192;
/// Most GPRs a program may use (`NUM_GPRS` 7:0, the register file has 128 per thread... minus
/// the clause temporaries, Mesa r600 limits compute to 124).
pub const MAX_GPRS: u8 = 124;
/// Most elements RAT 0 can cover as one linear row: `CB_COLOR0_PITCH.TILE_MAX` (pitch / 8 - 1)
/// is 11 bits, so the pitch is at most 16384 elements (`CB_COLOR0_DIM.WIDTH_MAX` would allow
/// 65536).
pub const MAX_RAT_DWORDS: usize = 1 << 14;
/// Fetch resource index of compute constant buffer 0 (Mesa r600 puts compute resources at 816).
pub const CS_RESOURCE_BASE: usize = 816;
/// Loop constant the compute stage uses (Mesa r600: loop constant 160 = LS/CS 0).
pub const CS_LOOP_CONST: usize = 160;
/// Dwords a dispatch submission may take (state + dispatch + flushes + fence).
pub const DISPATCH_DWORDS: usize = 192;
/// Most kernel argument dwords (`cb0` holds 9 dispatch dwords before them).
pub const MAX_ARGS: usize = 55;

/// A kernel in GPU-visible memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kernel {
    /// Bus address of the first CF word (256-byte aligned: `SQ_PGM_START_LS` holds address >> 8).
    pub code: BusAddress,
    /// GPRs (`SQ_PGM_RESOURCES_LS.NUM_GPRS`; the assembler's `ProgramInfo::num_gprs`).
    pub num_gprs: u8,
    /// Stack entries (`STACK_SIZE`; the assembler's `ProgramInfo::stack_depth`).
    pub stack_size: u8,
}

/// One dispatch.
#[derive(Debug, Clone, Copy)]
pub struct Dispatch<'a> {
    /// The program.
    pub kernel: Kernel,
    /// Thread groups in x, y, z (`DISPATCH_DIRECT` DIM_X..Z).
    pub groups: [u32; 3],
    /// Threads per group in x, y, z (`SPI_COMPUTE_NUM_THREAD_*`).
    pub local: [u32; 3],
    /// Kernel arguments (cb0 dword 9 on).
    pub args: &'a [u32],
    /// Memory for constant buffer 0 (256-byte aligned, at least 256 bytes): the driver writes
    /// the dispatch dimensions and `args` there.
    pub constants: &'a DmaRegion,
    /// Global memory: read through fetch buffer 1 and written through RAT 0 (256-byte aligned).
    pub global: &'a DmaRegion,
    /// LDS dwords per group.
    pub lds_dwords: u32,
    /// `DISPATCH_INDIRECT`: the group counts are read from this 12-byte `{x, y, z}` structure
    /// in memory (§9.3.13) instead of `groups` (which still fill cb0).
    pub indirect: Option<BusAddress>,
}

impl<'a> Dispatch<'a> {
    /// `groups` thread groups of `local` threads running `kernel`, with cb0 in `constants` and
    /// global memory `global`; no arguments, no LDS, group counts from `groups`
    /// (`DISPATCH_DIRECT`). The limits are checked by [`Evergreen::dispatch`](crate::Evergreen::dispatch),
    /// which refuses with a [`DispatchError`] before anything is submitted.
    pub const fn new(
        kernel: Kernel,
        groups: [u32; 3],
        local: [u32; 3],
        constants: &'a DmaRegion,
        global: &'a DmaRegion,
    ) -> Dispatch<'a> {
        Dispatch {
            kernel,
            groups,
            local,
            args: &[],
            constants,
            global,
            lds_dwords: 0,
            indirect: None,
        }
    }

    /// With kernel arguments (cb0 dword 9 on; at most [`MAX_ARGS`]).
    pub const fn with_args(self, args: &'a [u32]) -> Dispatch<'a> {
        Dispatch { args, ..self }
    }

    /// With `dwords` of LDS per group (at most [`MAX_LDS_DWORDS`]).
    pub const fn with_lds_dwords(self, dwords: u32) -> Dispatch<'a> {
        Dispatch { lds_dwords: dwords, ..self }
    }

    /// `DISPATCH_INDIRECT`: the group counts are read from the 12-byte `{x, y, z}` at `counts`
    /// (§9.3.13) when the dispatch runs.
    pub const fn with_indirect(self, counts: BusAddress) -> Dispatch<'a> {
        Dispatch { indirect: Some(counts), ..self }
    }
}

/// A dispatch the hardware cannot run as asked (§3.2 state requirements); nothing was
/// submitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum DispatchError {
    /// A group of more than [`MAX_GROUP_THREADS`] threads.
    GroupTooLarge {
        /// Threads asked for (`u64::MAX` if the product of the dimensions exceeds it).
        threads: u64,
    },
    /// A zero group count or group dimension.
    EmptyDispatch,
    /// More LDS than [`MAX_LDS_DWORDS`].
    LdsTooLarge {
        /// Dwords asked for.
        dwords: u32,
    },
    /// A kernel using 0, 1 (R0 and R1 hold the thread start state) or more than
    /// [`MAX_GPRS`] GPRs.
    BadGprCount {
        /// The kernel's count.
        num_gprs: u8,
    },
    /// An address a register holds >> 8 that is not 256-byte aligned, or beyond 40 bits.
    Misaligned {
        /// The address.
        address: BusAddress,
    },
    /// Global memory larger than RAT 0 can cover ([`MAX_RAT_DWORDS`]).
    GlobalTooLarge {
        /// Bytes.
        bytes: usize,
    },
    /// Global memory that is not a whole, non-zero number of dwords: RAT 0 is an array of
    /// 32-bit elements (`COLOR_32`) and must hold at least one (`CB_COLOR0_DIM.WIDTH_MAX` is
    /// the element count - 1, the pitch a multiple of 8 elements).
    BadGlobalSize {
        /// Bytes.
        bytes: usize,
    },
    /// Memory (constant buffer 0 or global memory) whose last byte lies beyond the 40-bit
    /// address space of the fetch resources and RATs.
    BeyondAddressSpace {
        /// The first byte.
        address: BusAddress,
        /// Bytes.
        bytes: usize,
    },
    /// The `DISPATCH_INDIRECT` group counts are not at an address `SET_BASE` can name (aligned
    /// to its `ADDRESS_LO` field, 8 bytes) whose 12 bytes lie in the 40-bit address space
    /// (§9.3.13).
    BadIndirect {
        /// The address.
        address: BusAddress,
    },
    /// The constant buffer memory is too small, or too many arguments.
    Constants(AbiError),
    /// Submission failed.
    Submit(SubmitError),
}

impl From<SubmitError> for DispatchError {
    fn from(e: SubmitError) -> Self {
        DispatchError::Submit(e)
    }
}

impl From<AbiError> for DispatchError {
    fn from(e: AbiError) -> Self {
        DispatchError::Constants(e)
    }
}

impl fmt::Display for DispatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DispatchError::GroupTooLarge { threads } => {
                write!(f, "a group of {threads} threads (at most {MAX_GROUP_THREADS})")
            }
            DispatchError::EmptyDispatch => f.write_str("a dispatch with a zero dimension"),
            DispatchError::LdsTooLarge { dwords } => {
                write!(f, "{dwords} LDS dwords per group (at most {MAX_LDS_DWORDS})")
            }
            DispatchError::BadGprCount { num_gprs } => {
                write!(f, "a kernel with {num_gprs} GPRs (2..={MAX_GPRS})")
            }
            DispatchError::Misaligned { address } => {
                write!(f, "{address} is not a 256-byte aligned 40-bit address")
            }
            DispatchError::GlobalTooLarge { bytes } => {
                write!(
                    f,
                    "{bytes} bytes of global memory (RAT 0 covers {} bytes)",
                    MAX_RAT_DWORDS * 4
                )
            }
            DispatchError::BadGlobalSize { bytes } => {
                write!(f, "{bytes} bytes of global memory (RAT 0 needs whole 32-bit elements)")
            }
            DispatchError::BeyondAddressSpace { address, bytes } => {
                write!(f, "{bytes} bytes at {address} reach past the 40-bit address space")
            }
            DispatchError::BadIndirect { address } => {
                write!(
                    f,
                    "indirect group counts at {address}: not 8-byte aligned below the 40-bit limit"
                )
            }
            DispatchError::Constants(_) => {
                f.write_str("constant buffer 0 cannot hold the dispatch")
            }
            DispatchError::Submit(_) => f.write_str("dispatch submission failed"),
        }
    }
}

impl core::error::Error for DispatchError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            DispatchError::Constants(e) => Some(e),
            DispatchError::Submit(e) => Some(e),
            _ => None,
        }
    }
}

/// The 40-bit address space of the fetch resources, RATs and CP packets (`*_HI` 7:0).
const ADDRESS_LIMIT: u64 = 1 << 40;

fn aligned256(address: BusAddress) -> Result<BusAddress, DispatchError> {
    if !address.0.is_multiple_of(256) || address.0 >> 40 != 0 {
        return Err(DispatchError::Misaligned { address });
    }
    Ok(address)
}

/// `region`'s 256-byte aligned base, if all its bytes lie in the 40-bit address space.
fn memory40(region: &DmaRegion) -> Result<BusAddress, DispatchError> {
    let address = aligned256(region.bus_address())?;
    let bytes = region.size();
    if !address.fits_below(bytes as u64, ADDRESS_LIMIT) {
        return Err(DispatchError::BeyondAddressSpace { address, bytes });
    }
    Ok(address)
}

/// A dispatch checked against every limit, with the values its packets carry: once this
/// exists, emitting the dispatch cannot fail for anything the caller asked.
struct Checked {
    /// Threads per group (1..=[`MAX_GROUP_THREADS`]).
    threads: u32,
    /// Waves per group.
    waves: u32,
    cb: BusAddress,
    /// Bytes of cb0 the resource covers (a multiple of 256, within `constants`).
    cb_bytes: usize,
    /// cb0's contents and dword count.
    cb0: [u32; abi::CB0_ARGS + MAX_ARGS],
    cb0_dwords: usize,
    global: BusAddress,
    /// Bytes of global memory (a multiple of 4, 4..=[`MAX_RAT_DWORDS`] × 4).
    global_bytes: usize,
    /// The `SET_BASE` body naming the indirect group counts.
    indirect: Option<set_base::Body>,
}

impl Checked {
    fn new(d: &Dispatch<'_>) -> Result<Checked, DispatchError> {
        // Three u32 dimensions can overflow u64: saturate (any such group is too large).
        let threads = d.local.iter().fold(1u64, |t, &v| t.saturating_mul(v.into()));
        if d.local.contains(&0) || (d.indirect.is_none() && d.groups.contains(&0)) {
            return Err(DispatchError::EmptyDispatch);
        }
        if threads > MAX_GROUP_THREADS as u64 {
            return Err(DispatchError::GroupTooLarge { threads });
        }
        if d.lds_dwords > MAX_LDS_DWORDS {
            return Err(DispatchError::LdsTooLarge { dwords: d.lds_dwords });
        }
        if !(2..=MAX_GPRS).contains(&d.kernel.num_gprs) {
            return Err(DispatchError::BadGprCount { num_gprs: d.kernel.num_gprs });
        }
        aligned256(d.kernel.code)?;
        let cb = memory40(d.constants)?;
        let global = memory40(d.global)?;
        let global_bytes = d.global.size();
        if global_bytes > MAX_RAT_DWORDS * 4 {
            return Err(DispatchError::GlobalTooLarge { bytes: global_bytes });
        }
        if global_bytes == 0 || !global_bytes.is_multiple_of(4) {
            return Err(DispatchError::BadGlobalSize { bytes: global_bytes });
        }
        let indirect = match d.indirect {
            None => None,
            Some(address) if !address.fits_below(12, ADDRESS_LIMIT) => {
                return Err(DispatchError::BadIndirect { address });
            }
            Some(address) => Some(
                set_base::Body::new()
                    .with_base_index(set_base::BaseIndex::Indirect)
                    .with_address(address)
                    .map_err(|_| DispatchError::BadIndirect { address })?,
            ),
        };
        let mut cb0 = [0u32; abi::CB0_ARGS + MAX_ARGS];
        let cb0_dwords = abi::dispatch_constants(d.groups, d.local, d.args, &mut cb0)?;
        let cb_bytes = (cb0_dwords * 4).next_multiple_of(256);
        if d.constants.size() < cb_bytes {
            return Err(AbiError::BufferTooSmall { needed: cb_bytes / 4 }.into());
        }
        let threads = threads as u32;
        Ok(Checked {
            threads,
            waves: threads.div_ceil(WAVE_THREADS),
            cb,
            cb_bytes,
            cb0,
            cb0_dwords,
            global,
            global_bytes,
            indirect,
        })
    }
}

/// Copy `words` (an assembled program) to the start of `region` and describe it.
pub fn load_kernel(
    region: &DmaRegion,
    words: &[u32],
    num_gprs: u8,
    stack_size: u8,
) -> Result<Kernel, DispatchError> {
    let code = aligned256(region.bus_address())?;
    region.write_slice(0, words).map_err(|_| {
        DispatchError::Submit(SubmitError::Packet(PacketError::BadLength { dwords: words.len() }))
    })?;
    Ok(Kernel { code, num_gprs, stack_size })
}

/// A buffer fetch resource (Mesa r600 evergreen_state.c buffer resource; LLVM R600 backend):
/// base, size - 1, stride and format, XYZW swizzle, TYPE 3 = valid buffer.
fn buffer_resource(base: BusAddress, bytes: usize, stride: u16, data_format: u8) -> [u32; 8] {
    use baregpu_regs::evergreen::sq::{
        SQ_VTX_CONSTANT_WORD2_0, SQ_VTX_CONSTANT_WORD3_0, SQ_VTX_CONSTANT_WORD7_0,
    };
    let w2 = SQ_VTX_CONSTANT_WORD2_0::RESET.with_stride(stride).with_data_format(data_format).raw()
        | (base.high() & 0xFF);
    let w3 = SQ_VTX_CONSTANT_WORD3_0::RESET
        .with_dst_sel_x(0)
        .with_dst_sel_y(1)
        .with_dst_sel_z(2)
        .with_dst_sel_w(3)
        .raw();
    let w7 = SQ_VTX_CONSTANT_WORD7_0::RESET.with_type_field(3).raw();
    [base.low(), bytes.saturating_sub(1) as u32, w2, w3, 0, 0, 0, w7]
}

/// `FMT_32` (Mesa r600 evergreend.h `V_028C70_COLOR_32` / vertex `FMT_32` 0xD).
const FMT_32: u8 = 0x0D;
/// `FMT_32_32_32_32_FLOAT` (0x23, Mesa r600), the constant-buffer view.
const FMT_32_32_32_32_FLOAT: u8 = 0x23;

fn reg<R: Register>() -> usize {
    R::OFFSET
}

fn at<R: Array>(index: usize) -> Result<usize, PacketError> {
    R::offset_of(index).map_err(|_| PacketError::OutOfRange { offset: R::OFFSET })
}

impl<IO: RegisterIo, C: Clock, A: DmaAllocator + ?Sized> Evergreen<'_, IO, C, A> {
    /// Check `d`, write cb0, and submit the dispatch with its state, cache flushes and a fence.
    ///
    /// Every parameter is checked first: a dispatch the hardware cannot run as asked is a
    /// [`DispatchError`] before cb0, the ring or a register is written.
    pub fn dispatch(&mut self, d: &Dispatch<'_>) -> Result<Fence, DispatchError> {
        let c = Checked::new(d)?;
        d.constants.write_slice(0, &c.cb0[..c.cb0_dwords]).map_err(|_| {
            DispatchError::Constants(AbiError::BufferTooSmall { needed: c.cb0_dwords })
        })?;
        let chip = self.chip();
        let fence = self.submit(DISPATCH_DWORDS + FENCE_DWORDS, |s| {
            emit_dispatch(s, chip, d, &c)?;
            s.fence()
        })?;
        Ok(fence)
    }
}

fn emit_dispatch<A: DmaAllocator + ?Sized>(
    s: &mut Submission<'_, '_, A>,
    chip: Chipset,
    d: &Dispatch<'_>,
    c: &Checked,
) -> Result<(), PacketError> {
    let Checked { threads, waves, cb, cb_bytes, global, global_bytes, .. } = *c;
    // 1. Drain earlier compute work, point primitives (§3.2 item 11).
    s.compute_packet(
        opcode::EVENT_WRITE,
        &pm4::event_write(event::CS_PARTIAL_FLUSH, EventIndex::PartialFlush)?,
    )?;
    let prim =
        VGT_PRIMITIVE_TYPE::RESET.with_prim_type(vgt_primitive_type::PrimType::DiPtPointlist);
    s.set_regs(reg::<VGT_PRIMITIVE_TYPE>(), &[prim.raw()], true)?;
    // 2. Compute resources (§3.2 items 6, 7; Mesa r600 evergreen_compute.c values).
    if chip == Chipset::CYPRESS {
        let threads_mgmt = SQ_THREAD_RESOURCE_MGMT_2::RESET.with_num_ls_threads(128);
        let stack = SQ_STACK_RESOURCE_MGMT_3::RESET.with_num_ls_stack_entries(512);
        // SQ_THREAD_RESOURCE_MGMT .. SQ_STACK_RESOURCE_MGMT_3: five consecutive registers.
        s.set_regs(
            reg::<SQ_THREAD_RESOURCE_MGMT_CYPRESS_UNTIL_CAYMAN>(),
            &[0, threads_mgmt.raw(), 0, 0, stack.raw()],
            true,
        )?;
        let lds = SQ_LDS_RESOURCE_MGMT::RESET.with_num_ls_lds(MAX_LDS_DWORDS as u16);
        s.set_regs(reg::<SQ_LDS_RESOURCE_MGMT>(), &[lds.raw()], true)?;
        // 0x1E in each of the six 5-bit stage limits (Mesa r600).
        let limits = (0..6).fold(0u32, |v, i| v | (0x1E << (5 * i)));
        s.set_regs(reg::<SQ_DYN_GPR_RESOURCE_LIMIT_1_CYPRESS_UNTIL_CAYMAN>(), &[limits], true)?;
    } else {
        // Cayman splits the LDS in SPI_LDS_MGMT instead: NUM_LS_LDS (bits 15:8) = 255 (Mesa r600
        // evergreen_compute.c; the database has the register, not its fields).
        let lds = SPI_LDS_MGMT_CAYMAN_ONWARD::RESET.with_spi_lds_mgmt(255 << 8);
        s.set_regs(reg::<SPI_LDS_MGMT_CAYMAN_ONWARD>(), &[lds.raw()], true)?;
    }
    // §3.2 item 4: no colour output from the DB.
    s.set_regs(
        reg::<DB_RENDER_CONTROL>(),
        &[DB_RENDER_CONTROL::RESET.with_color_disable(true).raw()],
        true,
    )?;
    // 3. VGT in compute mode, the CS stage on (§3.2 item 8); thread and group ids loaded into
    //    R0/R1 (Mesa's 7, which the kernel ABI needs; §3.2 item 10 lists 0).
    let gs = VGT_GS_MODE::RESET
        .with_mode(vgt_gs_mode::Mode::GsOff)
        .with_compute_mode(true)
        .with_partial_thd_at_eoi(true);
    s.set_regs(reg::<VGT_GS_MODE>(), &[gs.raw()], true)?;
    let stages = VGT_SHADER_STAGES_EN::RESET
        .with_ls_en(vgt_shader_stages_en::LsEn::CsStageOn)
        .with_hs_en(vgt_shader_stages_en::HsEn::HsStageOff)
        .with_es_en(vgt_shader_stages_en::EsEn::EsStageOff)
        .with_gs_en(vgt_shader_stages_en::GsEn::GsStageOff)
        .with_vs_en(vgt_shader_stages_en::VsEn::VsStageReal);
    s.set_regs(reg::<VGT_SHADER_STAGES_EN>(), &[stages.raw()], true)?;
    let input = SPI_COMPUTE_INPUT_CNTL::RESET
        .with_tid_in_group_ena(true)
        .with_tgid_ena(true)
        .with_disable_index_pack(true);
    s.set_regs(reg::<SPI_COMPUTE_INPUT_CNTL>(), &[input.raw()], true)?;
    // 4. Loop constant of the CS stage: count 0xFFF, init 0, increment 1 (Mesa r600).
    s.set_regs(at::<SQ_LOOP_CONST_0>(CS_LOOP_CONST)?, &[0x0100_0FFF], true)?;
    // 5. Caches coherent before the state that names memory; RAT 0; fetch resources; cb0.
    s.compute_packet(opcode::SURFACE_SYNC, &pm4::surface_sync_all(crate::COHER_TC_VC_SH)?)?;
    // 1..=MAX_RAT_DWORDS elements (checked): TILE_MAX = pitch / 8 - 1 and WIDTH_MAX =
    // elements - 1 fit their 11 and 16 bits without wrapping.
    let elements = global_bytes / 4;
    let pitch = elements.next_multiple_of(64);
    let info = CB_COLOR0_INFO::RESET
        .with_endian(cb_color0_info::Endian::EndianNone)
        .with_format(cb_color0_info::Format::Color32)
        .with_array_mode(cb_color0_info::ArrayMode::ArrayLinearAligned)
        .with_number_type(cb_color0_info::NumberType::NumberUint)
        .with_source_format(cb_color0_info::SourceFormat::Export4c32bpc)
        .with_rat(true)
        .with_resource_type(cb_color0_info::ResourceType::Buffer);
    let rat = [
        CB_COLOR0_BASE::RESET
            .try_with_base_256b(global)
            .map_err(|_| PacketError::BadAddress { address: global.0, align: 256 })?
            .raw(),
        CB_COLOR0_PITCH::RESET.with_tile_max((pitch / 8 - 1) as u16).raw(),
        0, // SLICE
        0, // VIEW
        info.raw(),
        CB_COLOR0_ATTRIB::RESET.with_non_disp_tiling_order(true).raw(),
        CB_COLOR0_DIM::RESET.with_width_max((elements - 1) as u16).raw(),
    ];
    s.set_regs(at::<CB_COLOR0_BASE>(abi::GLOBAL_RAT as usize)?, &rat, true)?;
    let mask = CB_TARGET_MASK::RESET.with_target0_enable(0xF);
    s.set_regs(reg::<CB_TARGET_MASK>(), &[mask.raw()], true)?;
    let fetch = buffer_resource(global, global_bytes, 1, FMT_32);
    let fetch_index = CS_RESOURCE_BASE + abi::GLOBAL_FETCH_BUFFER as usize;
    s.set_regs(at::<SQ_VTX_CONSTANT_WORD0_0>(fetch_index)?, &fetch, true)?;
    let consts = buffer_resource(cb, cb_bytes, 16, FMT_32_32_32_32_FLOAT);
    s.set_regs(at::<SQ_VTX_CONSTANT_WORD0_0>(CS_RESOURCE_BASE)?, &consts, true)?;
    s.set_regs(at::<SQ_ALU_CONST_BUFFER_SIZE_LS_0>(0)?, &[(cb_bytes / 256) as u32], true)?;
    s.set_regs(at::<SQ_ALU_CONST_CACHE_LS_0>(0)?, &[(cb.0 >> 8) as u32], true)?;
    // 6. The program (§3.2: LS resources).
    let resources = SQ_PGM_RESOURCES_LS::RESET
        .with_num_gprs(d.kernel.num_gprs)
        .with_stack_size(d.kernel.stack_size)
        .with_dx10_clamp(true);
    s.set_regs(
        reg::<SQ_PGM_START_LS>(),
        &[(d.kernel.code.0 >> 8) as u32, resources.raw(), 0],
        true,
    )?;
    // 7. Group size and start (§3.2 item 11).
    s.set_regs(reg::<VGT_NUM_INDICES>(), &[threads], true)?;
    s.set_regs(reg::<VGT_COMPUTE_START_X>(), &[0, 0, 0], true)?;
    s.set_regs(reg::<VGT_COMPUTE_THREAD_GROUP_SIZE>(), &[threads], true)?;
    // 8. Block dimensions, LDS (§3.2 item 7: SIZE | NUM_WAVES << 14, Mesa r600).
    s.set_regs(reg::<SPI_COMPUTE_NUM_THREAD_X>(), &d.local, true)?;
    s.set_regs(reg::<SQ_LDS_ALLOC>(), &[d.lds_dwords | (waves << 14)], true)?;
    // 9. Dispatch (§9.3.12, §9.3.13).
    let initiator = VGT_DISPATCH_INITIATOR::RESET.with_compute_shader_en(true).raw();
    match c.indirect {
        None => s.compute_packet(
            opcode::DISPATCH_DIRECT,
            &[d.groups[0], d.groups[1], d.groups[2], initiator],
        )?,
        Some(base) => {
            // §9.3.13 DATA_OFFSET is a byte offset; Linux radeon evergreen_cs.c requires a
            // SET_BASE (index 1) first and checks offset + 12 against that buffer.
            s.compute_packet(opcode::SET_BASE, base.dwords())?;
            s.compute_packet(opcode::DISPATCH_INDIRECT, &[0, initiator])?
        }
    }
    // 10. Make the RAT writes visible, invalidate the read caches (§9.6.7); Cayman frees the
    //     compute state (§9.4.2; Mesa r600 does it after every dispatch).
    let flush = CP_COHER_CNTL::RESET
        .with_tc_action_ena(true)
        .with_vc_action_ena(true)
        .with_sh_action_ena(true)
        .with_cb_action_ena(true)
        .with_cb0_dest_base_ena(true)
        .raw();
    s.compute_packet(opcode::SURFACE_SYNC, &pm4::surface_sync_all(flush)?)?;
    if chip == Chipset::CAYMAN {
        s.compute_packet(
            opcode::EVENT_WRITE,
            &pm4::event_write(event::CS_PARTIAL_FLUSH, EventIndex::PartialFlush)?,
        )?;
        s.compute_packet(opcode::DEALLOC_STATE, &[0])?;
    }
    Ok(())
}
