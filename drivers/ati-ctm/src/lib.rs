//! ATI CTM ("Close To the Metal", CTM Guide 1.01) for Radeon R5xx: the host-side library.
//!
//! * [`command`]: typed builders for every command of Table 3 (§2.2.1–§2.2.3) into a
//!   [`CommandBuffer`] over caller memory (or any [`CommandSink`]); all-or-nothing on lack of
//!   space; typed parameters ([`GpuAddress`], [`Format`], [`Domain`], ...) that reject what
//!   the hardware would silently misread ([`CtmError`]).
//! * [`addressing`]: the Memory Controller's `(x, y)` → address translation of §2.1.4
//!   (Table 1 linear, Table 2 tiled), to place inputs and find outputs.
//! * [`elf`]: the DPP executable loader of ch. 4 ([`DppExecutable::parse`]).
//! * [`submit`]: why a CTM buffer is not a PM4 indirect buffer, and how the project submits
//!   it (the R5xx driver's `baregpu_radeon_r5xx::ctm` module); this crate submits nothing.
//!
//! `no_std`, no allocation, no `unsafe`.
//!
//! # Example
//!
//! ```
//! use baregpu_ati_ctm::command::*;
//!
//! let mut mem = [0u32; 64];
//! let mut cb = CommandBuffer::new(&mut mem);
//! let f32x4 = Format::new(256, Tiling::Linear, DataFormat::Float32x4)?;
//! cb.set_inst_fmt(GpuAddress::new(0x10_0000)?, f32x4)?;
//! cb.set_inp_fmt(InputIndex::new(0)?, GpuAddress::new(0x20_0000)?, f32x4, Height::new(256)?)?;
//! cb.set_out_fmt(OutputIndex::new(0)?, GpuAddress::new(0x30_0000)?, f32x4, Height::new(256)?)?;
//! cb.set_out_mask(OutputMask::ALL)?;
//! cb.set_cond_loc(CondLoc::Dpp)?;
//! cb.set_cond_test(CondTest::Always)?;
//! cb.inv_inst_cache()?;
//! cb.inv_inp_cache()?;
//! cb.set_domain(Domain::of_size(256, 256)?)?;
//! cb.start_program()?;
//! cb.wait_for_idle()?;
//! cb.flush_out_cache()?;
//! assert_eq!(cb.as_words()[0], opcode::SET_INST_FMT);
//! # Ok::<(), CtmError>(())
//! ```
//!
//! # Reading of ambiguous document text
//!
//! * Opcode words are emitted exactly as printed in Table 3, followed by the parameters the
//!   table and §2.2.x list. For `init_perf_counters` (x'C0010200) and `read_perf_counters`
//!   (x'C0010500) bits 29:16 would announce two parameters while one is documented; one is
//!   emitted ([`Opcode::param_count`]).
//! * Pitch (§2.2.2): "given in multiples of 4 (the lowest two bits of the pitch must be zero)"
//!   in bits 12:2: the word's bits 12:0 are the pitch in elements, which must be a multiple of
//!   4 (max 8188).
//! * Data format value "> 5 - Reserved" is read as 5..=7 reserved (0..=4 are named).
//! * `set_cond_test` has eight values including Not Equal (6), which §2.1.3's operator list
//!   omits; §2.2.3 is followed. `set_cond_loc`: 0 = DPP, 1 = PE.
//! * `set_out_fmt` parameter 3 is the output's height (the text says "the given input", a
//!   copy-paste slip).
//! * Superfine tiling is only accepted on `set_inp_fmt` and only with single-channel formats
//!   (§2.1.4: ignored for other clients, undefined for multi-channel data).
//! * A domain with `i0 > i1` or `j0 > j1` is rejected (the rectangle would be empty).
//! * `read_perf_counters` takes a 2K-aligned address like every base address.

#![no_std]
// docs.rs (`--cfg docsrs`) marks each feature-gated item with the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]

pub mod addressing;
pub mod command;
pub mod elf;
pub mod submit;

pub use command::{
    CommandBuffer, CommandSink, CtmCommands, CtmError, DataFormat, Domain, Format, GpuAddress,
    Opcode, Tiling,
};
pub use elf::{DppExecutable, ElfError};
