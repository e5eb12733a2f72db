//! A validator for VideoCore IV V3D work from untrusted programs. The V3D has no MMU: a
//! binning control list, a shader record or a QPU shader reads and writes bus addresses
//! directly, so a kernel that takes them from user programs must check every address and
//! every instruction before the V3D sees them. The rules are those of Linux vc4_validate.c
//! (control lists, shader records) and Linux vc4_validate_shaders.c (QPU code), over
//! broadcom-videocore-iv-3d §3 (QPU instruction encoding) and §9 (control records, Tables 38,
//! 45, 46), with the records walked through the generated, document-checked table of
//! `baregpu_regs::vc4::packets`.
//!
//! - [`validate_binning_list`]: a binning list against the [`Buffers`] handed in with it;
//!   every rejection a [`ListError`] naming the byte offset and the [`ListRule`].
//! - [`validate_shader`]: one shader; a [`ShaderError`] names the instruction's byte offset
//!   and the [`ShaderRule`].
//!
//! The rendering list is not validated: like Linux, a kernel builds it itself from the frame
//! buffer and the tile layout [`ListSummary`] reports.
//!
//! Safe Rust, `no_std`, no allocation; the validator reads only what the caller hands in.
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

mod buffers;
mod list;
pub mod sample;
mod shader;

pub use buffers::{Buffer, Buffers, Purposes};
pub use list::{
    BINNER_BOUNDARY, ListError, ListRule, ListSummary, MAX_ATTRIBUTES, NV_RECORD_BYTES, Options,
    SHADER_RECORD_ALIGN, TILE_STATE_BYTES_PER_TILE, validate_binning_list,
};
pub use shader::{
    INSTRUCTION_BYTES, MAX_TMU_PARAMETERS, MAX_UNIFORM_ADDRESS_WRITES, ShaderError, ShaderInfo,
    ShaderRule, THREAD_END_DELAY_SLOTS, validate_shader,
};
