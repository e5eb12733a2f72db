//! Typed register blocks for every supported GPU family, generated at build time from the
//! register database in `hal/regdb/` (see its README for the format and the extraction).
//!
//! One module per family, one submodule per block, one type per register, keeping the vendor's
//! register names so the documents can be searched for them:
//!
//! ```
//! # #[cfg(feature = "r5xx")] {
//! use baregpu_hal::{Register, RegisterIoExt};
//! use baregpu_regs::r5xx::cp::CP_ME_RAM_ADDR;
//! assert_eq!(CP_ME_RAM_ADDR::OFFSET, 0x7d4); // amd-r5xx-acceleration §11.1
//! # }
//! ```
//!
//! Drivers never write an offset or a mask:
//!
//! ```
//! # #[cfg(feature = "r5xx")] {
//! use baregpu_hal::{RegisterIo, RegisterIoExt};
//! use baregpu_regs::r5xx::cp::{CP_CSQ_ADDR, CP_CSQ_STAT, CP_ME_CNTL, CP_RB_CNTL, SCRATCH_REG0};
//!
//! fn bring_up(io: &impl RegisterIo, log2_qwords: u8) -> Result<(), baregpu_hal::FieldOverflow> {
//!     io.write(CP_RB_CNTL::RESET.try_with_rb_bufsz(log2_qwords)?);
//!     let status = io.read::<CP_CSQ_STAT>(); // read-only: readable, not writable
//!     io.write(CP_CSQ_ADDR::from_raw(0)); // write-only: writable, not readable
//!     let _me = io.read::<CP_ME_CNTL>(); // `{:?}` prints every field by name
//!     let _fence = io.read_at::<SCRATCH_REG0>(7); // arrays: index checked, Err past the end
//!     let _ = status;
//!     Ok(())
//! }
//! # }
//! ```
//!
//! Access rights are checked by the compiler. Writing a read-only register does not build:
//!
//! ```compile_fail
//! # use baregpu_hal::{RegisterIo, RegisterIoExt};
//! fn f(io: &impl RegisterIo) { io.write(baregpu_regs::r5xx::cp::CP_CSQ_STAT::from_raw(0)); }
//! ```
//!
//! nor does reading a write-only one,
//!
//! ```compile_fail
//! # use baregpu_hal::{RegisterIo, RegisterIoExt};
//! fn f(io: &impl RegisterIo) { let _ = io.read::<baregpu_regs::r5xx::cp::CP_CSQ_ADDR>(); }
//! ```
//!
//! nor reading an array without an index:
//!
//! ```compile_fail
//! # use baregpu_hal::{RegisterIo, RegisterIoExt};
//! fn f(io: &impl RegisterIo) { let _ = io.read::<baregpu_regs::r5xx::cp::SCRATCH_REG0>(); }
//! ```
//!
//! Registers that exist once per engine (falcon) or channel (PFIFO USER area) are in blocks
//! marked relative: `io.at(engine_base).read::<CODE_INDEX>()`.
#![no_std]
#![forbid(unsafe_code)]

/// Radeon R5xx (R520 … R580) registers: amd-r5xx-acceleration §11, plus facts the document
/// omits from public drivers (named in each register's source).
#[cfg(feature = "r5xx")]
#[allow(clippy::all, rustdoc::all)]
pub mod r5xx {
    include!(concat!(env!("OUT_DIR"), "/r5xx.rs"));
}

/// VideoCore IV V3D registers: broadcom-videocore-iv-3d §10 (Table 48 and the per-register tables).
#[cfg(feature = "vc4")]
#[allow(clippy::all, rustdoc::all)]
pub mod vc4 {
    include!(concat!(env!("OUT_DIR"), "/vc4.rs"));
}

/// Radeon Evergreen / Cayman registers named by amd-evergreen-cayman-acceleration, with offsets
/// from the document or from the public sources each register names.
#[cfg(feature = "evergreen")]
#[allow(clippy::all, rustdoc::all)]
pub mod evergreen {
    include!(concat!(env!("OUT_DIR"), "/evergreen.rs"));
}

/// nVidia PMC, PTIMER, PFIFO and falcon registers: nvidia-hardware-envytools. Chip-specific
/// layouts (`[G80:GF100]`) are separate types with a `VARIANT` constant.
#[cfg(feature = "nvidia")]
#[allow(clippy::all, rustdoc::all)]
pub mod nvidia {
    include!(concat!(env!("OUT_DIR"), "/nvidia.rs"));
}

#[cfg(test)]
extern crate std;

/// The generator fixture (`fixture/fixture.toml`), compiled only for this crate's tests.
#[cfg(test)]
#[allow(clippy::all, rustdoc::all, dead_code, missing_docs)]
pub mod fixture {
    include!(concat!(env!("OUT_DIR"), "/fixture.rs"));
}

#[cfg(test)]
mod tests;
