//! What the command processor hands the shader core for one dispatch: the raw register values it
//! collected from SET_*_REG / SET_RESOURCE / SET_LOOP_CONST packets and the DISPATCH_DIRECT
//! group counts. The core interprets the fields itself (one place for every field layout).

use super::error::ShaderErrorKind;
use super::isa::{Chip, field, flag};

/// First fetch-resource slot of the compute stage: a vertex fetch with BUFFER_ID `b` reads
/// resource slot `CS_RESOURCE_BASE + b` (SET_RESOURCE dw1 = slot * 8).
///
/// Decision (an open question): amd-evergreen-cayman §3.1 says a CS "runs on resources shared
/// with LS shader", which would put BUFFER_ID 0 at the LS base 656. Mesa's Evergreen compute
/// path binds its compute vertex and constant buffers at 816 + n, a CS block of its own after
/// PS 0, VS 176, GS 336, HS 496 and LS 656 (Mesa evergreend.h), and that driver (clover) ran
/// OpenCL kernels on real Evergreen and Cayman boards; if BUFFER_ID 0 read slot 656 there, its
/// kernels would have fetched unset resources. The model follows the working driver: 816. The
/// CS does share the LS program and constant-cache registers (SQ_PGM_*_LS,
/// SQ_ALU_CONST_*_LS), which is what §3.1's sentence fits.
pub const CS_RESOURCE_BASE: usize = 816;
/// Fetch-resource slots of the compute stage (816..992; the fetch shader's block starts at 992).
pub const CS_RESOURCE_COUNT: usize = 176;
/// Colour buffers usable as RATs (CB0-CB11, §3.1).
pub const RAT_COUNT: usize = 12;
/// Threads per thread group the model accepts: the wave list of a group is bounded (16 waves of
/// 64). OpenCL on these chips reports 256; the hardware field limit is not in the documents.
pub const MAX_GROUP_THREADS: u32 = 1024;
/// Local data share per SIMD on Evergreen/Cayman: 32 KiB = 8192 dwords.
pub const MAX_LDS_DWORDS: u32 = 8192;
/// Threads per wave (wavefront) on both chips.
pub const WAVE_SIZE: u32 = 64;

/// The CB_COLORn registers of one colour buffer bound as a RAT (raw values, amd-evergreen-cayman
/// §8.6; field layout from Mesa evergreend.h / evergreen_state.c).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RatRegs {
    /// CB_COLORn_BASE: address >> 8.
    pub base: u32,
    /// CB_COLORn_PITCH.
    pub pitch: u32,
    /// CB_COLORn_SLICE.
    pub slice: u32,
    /// CB_COLORn_VIEW.
    pub view: u32,
    /// CB_COLORn_INFO.
    pub info: u32,
    /// CB_COLORn_ATTRIB.
    pub attrib: u32,
    /// CB_COLORn_DIM: WIDTH_MAX 15:0, HEIGHT_MAX 31:16.
    pub dim: u32,
}

/// Everything one dispatch reads. Register names and addresses: Mesa evergreend.h and
/// evergreen_compute.c.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DispatchState {
    /// Which chip's encodings and rules apply.
    pub chip: Chip,
    /// SQ_PGM_START_LS (0x288D0): program address >> 8 (the CS uses the LS program registers).
    pub pgm_start: u32,
    /// SQ_PGM_RESOURCES_LS (0x288D4): NUM_GPRS 7:0, STACK_SIZE 15:8, DX10_CLAMP 21.
    pub pgm_resources: u32,
    /// SPI_COMPUTE_INPUT_CNTL (0x286E8): TID_IN_GROUP_ENA bit 0 loads R0.xyz with the thread id
    /// in the group, TGID_ENA bit 1 loads R1.xyz with the group id (Mesa r600_shader.c, LLVM
    /// R600ISelLowering). Decision (an open question: §3.2 says program both 0, Mesa programs
    /// 7): the ids are loaded only when enabled, since the kernels that read them ran on
    /// hardware with the enables set and nothing shows the hardware loads them without.
    pub input_cntl: u32,
    /// SPI_COMPUTE_NUM_THREAD_X/Y/Z (0x286EC/F0/F4): threads per group.
    pub num_threads: [u32; 3],
    /// SQ_LDS_ALLOC (0x288E8): SIZE 13:0 in dwords.
    pub lds_alloc: u32,
    /// SQ_ALU_CONST_CACHE_LS_0..15 (0x28F40 + 4n): constant buffer n address >> 8.
    pub const_cache: [u32; 16],
    /// SQ_ALU_CONST_BUFFER_SIZE_LS_0..15 (0x28FC0 + 4n): constant buffer n size in 256-byte
    /// units (16 constants of 16 bytes).
    pub const_size: [u32; 16],
    /// The CS fetch resources, element `b` = resource slot [`CS_RESOURCE_BASE`] + `b` (8 dwords
    /// each). Missing entries read as unset (invalid) resources.
    pub resources: Vec<[u32; 8]>,
    /// CB0-CB11.
    pub rats: [RatRegs; RAT_COUNT],
    /// SQ_LOOP_CONST_160..191 (the LS/CS loop constants; Mesa programs 160 = 0x01000FFF):
    /// COUNT 11:0, INIT 23:12, INC 31:24. CF_CONST indexes them.
    pub loop_consts: [u32; 32],
    /// The LS/CS SQ_BOOL_CONST word: bit n is boolean constant n (CF COND BOOL / NOT_BOOL).
    pub bool_consts: u32,
    /// DISPATCH_DIRECT thread-group counts X, Y, Z.
    pub groups: [u32; 3],
}

impl DispatchState {
    /// Everything zero / unset on `chip`.
    pub fn new(chip: Chip) -> Self {
        Self {
            chip,
            pgm_start: 0,
            pgm_resources: 0,
            input_cntl: 0,
            num_threads: [0; 3],
            lds_alloc: 0,
            const_cache: [0; 16],
            const_size: [0; 16],
            resources: Vec::new(),
            rats: [RatRegs::default(); RAT_COUNT],
            loop_consts: [0; 32],
            bool_consts: 0,
            groups: [0; 3],
        }
    }

    /// Program address in bytes.
    pub fn program_address(&self) -> u64 {
        u64::from(self.pgm_start) << 8
    }

    /// NUM_GPRS.
    pub fn num_gprs(&self) -> u32 {
        field(self.pgm_resources, 0, 8)
    }

    /// STACK_SIZE (entries of four elements).
    pub fn stack_size(&self) -> u32 {
        field(self.pgm_resources, 8, 8)
    }

    /// DX10_CLAMP: CLAMP turns NaN into 0.
    pub fn dx10_clamp(&self) -> bool {
        flag(self.pgm_resources, 21)
    }

    /// Threads per group.
    pub fn group_threads(&self) -> u32 {
        self.num_threads.iter().fold(1u32, |a, &n| a.saturating_mul(n))
    }

    /// Checks made before any wave starts.
    pub(crate) fn validate(&self) -> Result<(), ShaderErrorKind> {
        let t = self.group_threads();
        if self.num_threads.contains(&0) || t > MAX_GROUP_THREADS {
            return Err(ShaderErrorKind::InvalidGroupSize { size: self.num_threads });
        }
        if self.num_gprs() > 128 {
            return Err(ShaderErrorKind::InvalidGprCount(self.num_gprs()));
        }
        let lds = field(self.lds_alloc, 0, 14);
        if lds > MAX_LDS_DWORDS {
            return Err(ShaderErrorKind::InvalidLdsSize(lds));
        }
        Ok(())
    }
}

/// A vertex-fetch buffer resource (Mesa evergreen_state.c layout).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BufferResource {
    pub base: u64,
    pub size: u64,
    pub stride: u64,
    pub data_format: u32,
    pub num_format: u32,
    pub dst_sel: [u32; 4],
}

impl BufferResource {
    /// Interpret resource `id` of the CS block.
    pub fn parse(words: &[u32; 8], id: u32) -> Result<Self, ShaderErrorKind> {
        // W7 TYPE 31:30: 3 = SQ_TEX_VTX_VALID_BUFFER. Anything else (an unset, zeroed slot
        // included) is not a buffer.
        if field(words[7], 30, 2) != 3 {
            return Err(ShaderErrorKind::InvalidResource(id));
        }
        let w2 = words[2];
        if field(w2, 30, 2) != 0 {
            return Err(ShaderErrorKind::UnsupportedField {
                field: "resource ENDIAN_SWAP",
                value: field(w2, 30, 2),
            });
        }
        let mut dst_sel = [0; 4];
        for (c, s) in dst_sel.iter_mut().enumerate() {
            *s = field(words[3], 3 + 3 * c as u32, 3);
            // 0-3 X..W, 4 zero, 5 one; 6 reserved, 7 "mask" has no meaning for a fetched value.
            if *s > 5 {
                return Err(ShaderErrorKind::UnsupportedField {
                    field: "resource DST_SEL",
                    value: *s,
                });
            }
        }
        Ok(Self {
            base: u64::from(words[0]) | (u64::from(field(w2, 0, 8)) << 32),
            size: u64::from(words[1]) + 1,
            stride: u64::from(field(w2, 8, 11)),
            data_format: field(w2, 20, 6),
            num_format: field(w2, 26, 2),
            dst_sel,
        })
    }
}

/// A RAT surface after the §8.6 checks: linear dword array at `base`, `elements` long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RatSurface {
    pub base: u64,
    pub elements: u64,
}

impl RatSurface {
    /// Check CB_COLORn for use as a RAT by a STORE (`atomic` false) or an atomic op.
    pub fn parse(regs: &RatRegs, rat: u32, atomic: bool) -> Result<Self, ShaderErrorKind> {
        let info = regs.info;
        let bad = |rule| Err(ShaderErrorKind::RatState { rat, rule });
        // INFO.RAT (26): "the surface is treated as a Random Access Target" (§8.6).
        if !flag(info, 26) {
            return Err(ShaderErrorKind::RatNotBound(rat));
        }
        if field(info, 24, 2) != 0 {
            return bad("§8.6 rule 2: SOURCE_FORMAT must be 4c_32bpc (0)");
        }
        if field(info, 27, 3) != 0 {
            return bad("RESOURCE_TYPE other than BUFFER is not modelled");
        }
        if !flag(regs.attrib, 4) {
            return bad("§8.6 rule 3a: a BUFFER RAT needs ATTRIB.NON_DISP_TILING_ORDER = 1");
        }
        if field(info, 8, 4) != 1 {
            return bad("§8.6 rule 3b: a BUFFER RAT needs ARRAY_MODE = ARRAY_LINEAR_ALIGNED (1)");
        }
        if flag(info, 17) {
            return bad("§8.6 rule 4: FAST_CLEAR is not permitted for RATs");
        }
        if field(info, 2, 6) != 0x0D {
            return bad("FORMAT other than COLOR_32 is not modelled");
        }
        if field(info, 0, 2) != 0 {
            return bad("ENDIAN other than ENDIAN_NONE is not modelled");
        }
        if atomic && field(info, 12, 3) != 4 {
            return bad("§8.6 rule 6: atomics need NUMBER_TYPE = NUMBER_UINT (4)");
        }
        let width = u64::from(field(regs.dim, 0, 16)) + 1;
        let height = u64::from(field(regs.dim, 16, 16)) + 1;
        Ok(Self { base: u64::from(regs.base) << 8, elements: width * height })
    }
}

/// Work bounds. A work unit is one instruction issued for one wave: a CF instruction, an ALU
/// group, a vertex fetch or a RAT export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Units one wave may run before it is a runaway program.
    pub wave_units: u64,
    /// Units a whole dispatch may run.
    pub dispatch_units: u64,
}

impl Default for Limits {
    /// 2^20 units per wave (a legitimate kernel of this subset runs hundreds; a 4095-iteration
    /// loop of 100 groups fits), 2^26 per dispatch (64 Mi units: 2^20 waves of 64 units).
    fn default() -> Self {
        Self { wave_units: 1 << 20, dispatch_units: 1 << 26 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mesa_r32_uint_rat_passes_the_rules() {
        // Mesa's R32_UINT RAT: INFO 0x04104134, ATTRIB NON_DISP_TILING_ORDER, DIM 255.
        let regs =
            RatRegs { base: 0x12, info: 0x0410_4134, attrib: 0x10, dim: 255, ..Default::default() };
        let s = RatSurface::parse(&regs, 0, true).unwrap();
        assert_eq!(s, RatSurface { base: 0x1200, elements: 256 });
        // Without RAT (bit 26) the CB is a colour target, not a RAT.
        let plain = RatRegs { info: 0x0010_4134, ..regs };
        assert_eq!(RatSurface::parse(&plain, 3, false), Err(ShaderErrorKind::RatNotBound(3)));
        // FLOAT number type: stores allowed, atomics not (§8.6 rule 6).
        let float = RatRegs { info: 0x0410_7134, ..regs };
        assert!(RatSurface::parse(&float, 0, false).is_ok());
        assert!(matches!(
            RatSurface::parse(&float, 0, true),
            Err(ShaderErrorKind::RatState { .. })
        ));
    }
}
