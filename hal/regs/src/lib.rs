//! Typed register blocks for every supported GPU family, generated from the register database in
//! `hal/regdb/` (see its README for the format and the extraction) and checked in under
//! `src/generated/` (`cargo xtask regen` rewrites them; a test fails when they are stale).
//!
//! Enable the family you drive; none is on by default:
//!
//! | feature | module | document |
//! |---|---|---|
//! | `r5xx` | `r5xx` | amd-r5xx-acceleration §11 |
//! | `vc4` | `vc4` | broadcom-videocore-iv-3d §10 (registers), §9 (control records) |
//! | `evergreen` | `evergreen` | amd-evergreen-cayman-acceleration |
//! | `nvidia` | `nvidia` | nvidia-hardware-envytools |
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
//! # Fields
//!
//! Every field has a [`FieldSpec`](baregpu_hal::FieldSpec) constant on its register type, with
//! the document's description: its position, width and mask, for code that composes or decodes
//! raw values (a device model building a read-only status word):
//!
//! ```
//! # #[cfg(feature = "r5xx")] {
//! use baregpu_regs::r5xx::cp::CP_ME_CNTL;
//! assert_eq!((CP_ME_CNTL::ME_BUSY.lsb, CP_ME_CNTL::ME_BUSY.width), (29, 1));
//! assert_eq!(CP_ME_CNTL::ME_BUSY.mask(), 1 << 29);
//! # }
//! ```
//!
//! Fields that hold a bus address take and give a [`BusAddress`](baregpu_hal::dma::BusAddress),
//! never a `u32`: the setter rejects an address the field cannot hold instead of truncating it.
//!
//! ```
//! # #[cfg(feature = "r5xx")] {
//! use baregpu_hal::dma::BusAddress;
//! use baregpu_regs::r5xx::cp::CP_RB_BASE;
//! let base = CP_RB_BASE::RESET.try_with_rb_base(BusAddress(0x0010_0000)).unwrap();
//! assert_eq!(base.raw(), 0x0010_0000); // bits 31:2 hold address bits 31:2
//! assert!(CP_RB_BASE::RESET.try_with_rb_base(BusAddress(0x0010_0002)).is_err()); // misaligned
//! assert!(CP_RB_BASE::RESET.try_with_rb_base(BusAddress(1 << 32)).is_err()); // out of reach
//! assert_eq!(base.rb_base(), BusAddress(0x0010_0000));
//! # }
//! ```
//!
//! # Families, bases and chipsets in the type
//!
//! Every register knows its family (`Register::Family`, e.g. `r5xx::Family`) and where its
//! offset counts from (`Register::Base`). Registers of a block that exists once per engine or
//! channel (the nVidia falcon IO space, the PFIFO USER area) are reached only through one of the
//! block's generated instances:
//!
//! ```
//! # #[cfg(feature = "nvidia")] {
//! use baregpu_hal::{RegisterIo, RegisterIoExt};
//! use baregpu_regs::nvidia::falcon::{CODE_INDEX, Pdaemon, UC_CTRL};
//! use baregpu_regs::nvidia::pfifo_user::{DMA_PUT, UserG80};
//!
//! fn start_pdaemon(bar0: &impl RegisterIo) {
//!     let pdaemon = bar0.at::<Pdaemon>(); // the falcon IO space at BAR0 + 0x10a000
//!     pdaemon.write(CODE_INDEX::RESET.with_write_autoincrement(true));
//!     pdaemon.write(UC_CTRL::RESET.with_start(true));
//! }
//!
//! fn kick(bar0: &impl RegisterIo, channel: usize, put: u32) -> Result<(), baregpu_hal::IndexOutOfRange> {
//!     bar0.at_index::<UserG80>(channel)?.write(DMA_PUT::from_raw(put)); // 0xc00000 + 0x2000 * channel
//!     Ok(())
//! }
//! # }
//! ```
//!
//! Chipsets are enums, decoded from what the hardware reports and checked against a layout's
//! range (envytools notation: `GT215:GF100` is GT215 up to, not including, GF100):
//!
//! ```
//! # #[cfg(feature = "nvidia")] {
//! use baregpu_hal::Register;
//! use baregpu_regs::nvidia::{Chipset, pdaemon, pmc::BOOT_0};
//!
//! let chip = BOOT_0::from_raw(0x0a30_00a1).chipset().unwrap(); // GPU id 0xa3
//! assert_eq!(chip, Chipset::GT215);
//! assert!(pdaemon::COUNTER_MASK_GT215_UNTIL_GF100::exists_on(chip));
//! assert!(!pdaemon::COUNTER_MASK_GF100_ONWARD::exists_on(chip));
//! assert!(BOOT_0::from_raw(0x0ff0_0000).chipset().is_err()); // id 0xff: not in the table
//! # }
//! ```
//!
//! The type-name suffix of a chip-specific layout comes from its range alone: `A` gives `_A`,
//! `A:B` gives `_A_UNTIL_B`, `A-` gives `_A_ONWARD`, several ranges are joined with `_AND_`.
//!
//! # What does not compile
//!
//! (Each check names the error it expects: E0277 for a missing access right or a register of
//! another family, E0271 for one of another base.) Writing a read-only register:
//!
//! ```compile_fail,E0277
//! # use baregpu_hal::{RegisterIo, RegisterIoExt};
//! fn f(io: &impl RegisterIo) { io.write(baregpu_regs::r5xx::cp::CP_CSQ_STAT::from_raw(0)); }
//! ```
//!
//! reading a write-only one,
//!
//! ```compile_fail,E0277
//! # use baregpu_hal::{RegisterIo, RegisterIoExt};
//! fn f(io: &impl RegisterIo) { let _ = io.read::<baregpu_regs::r5xx::cp::CP_CSQ_ADDR>(); }
//! ```
//!
//! reading an array without an index,
//!
//! ```compile_fail,E0277
//! # use baregpu_hal::{RegisterIo, RegisterIoExt};
//! fn f(io: &impl RegisterIo) { let _ = io.read::<baregpu_regs::r5xx::cp::SCRATCH_REG0>(); }
//! ```
//!
//! reading a falcon register at its offset from BAR0 (it lives in an engine's IO space),
//!
//! ```compile_fail,E0271
//! # use baregpu_hal::{RegisterIo, RegisterIoExt};
//! fn f(bar0: &impl RegisterIo) { let _ = bar0.read::<baregpu_regs::nvidia::falcon::CODE_INDEX>(); }
//! ```
//!
//! a register of one block instance through another block's view,
//!
//! ```compile_fail,E0271
//! # use baregpu_hal::{RegisterIo, RegisterIoExt};
//! # use baregpu_regs::nvidia::{falcon::Pdaemon, pfifo_user::DMA_PUT};
//! fn f(bar0: &impl RegisterIo) { bar0.at::<Pdaemon>().write(DMA_PUT::from_raw(0)); }
//! ```
//!
//! or, on a BAR bound to its family (a [`FamilyIo`](baregpu_hal::FamilyIo), what each driver
//! holds), reading or writing another family's register: an R5xx BAR takes R5xx's
//! `CP_RB_CNTL`
//!
//! ```
//! # use baregpu_hal::{FamilyIo, RegisterIo, RegisterIoExt};
//! # use baregpu_regs::r5xx;
//! fn f(bar: &FamilyIo<r5xx::Family, impl RegisterIo>) {
//!     let _ = bar.read::<r5xx::cp::CP_RB_CNTL>();
//!     bar.write(r5xx::cp::CP_RB_CNTL::from_raw(0));
//! }
//! ```
//!
//! but neither reads
//!
//! ```compile_fail,E0277
//! # use baregpu_hal::{FamilyIo, RegisterIo, RegisterIoExt};
//! # use baregpu_regs::{evergreen, r5xx};
//! fn f(bar: &FamilyIo<r5xx::Family, impl RegisterIo>) {
//!     let _ = bar.read::<evergreen::cp::CP_RB_CNTL>();
//! }
//! ```
//!
//! nor writes Evergreen's:
//!
//! ```compile_fail,E0277
//! # use baregpu_hal::{FamilyIo, RegisterIo, RegisterIoExt};
//! # use baregpu_regs::{evergreen, r5xx};
//! fn f(bar: &FamilyIo<r5xx::Family, impl RegisterIo>) {
//!     bar.write(evergreen::cp::CP_RB_CNTL::from_raw(0));
//! }
//! ```
//!
//! (A register of another family in an R5xx PM4 stream is rejected by `baregpu-ring`'s
//! `Pm4Writer`, whose own documentation has that check.)
#![no_std]
// docs.rs (`--cfg docsrs`) marks each feature-gated item with the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]

/// The trait implementations of one generated register, its `Default`, `Debug`,
/// `defmt::Format` and `SPEC`; used by the generated modules (the item macros keep them small).
#[cfg_attr(
    not(any(feature = "r5xx", feature = "vc4", feature = "evergreen", feature = "nvidia")),
    allow(unused_macros)
)]
macro_rules! register {
    (
        $ty:ident: $name:literal in $block:literal ($base:ty, $relative:literal) at $offset:literal,
        $readable:tt $writable:tt $kind:ident $(($count:literal, $stride:literal))?,
        mask $mask:literal, reset $reset:literal, $(chipsets $chipsets:expr,)? source $source:literal
    ) => {
        impl Default for $ty {
            #[inline]
            fn default() -> Self {
                Self::RESET
            }
        }
        impl baregpu_hal::register::Register for $ty {
            type Family = Family;
            type Base = $base;
            const NAME: &'static str = $name;
            const OFFSET: usize = $offset;
            const WRITE_MASK: u32 = $mask;
            const RESET_RAW: u32 = $reset;
            $(const CHIPSETS: baregpu_hal::register::Chipsets<Chipset> = $chipsets;)?
            #[inline]
            fn from_raw(raw: u32) -> Self {
                Self(raw)
            }
            #[inline]
            fn to_raw(self) -> u32 {
                self.0
            }
        }
        register!(@readable $ty $readable);
        register!(@writable $ty $writable);
        register!(@kind $ty $kind $(($count, $stride))?);
        impl core::fmt::Debug for $ty {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                baregpu_hal::register::debug_fields(f, $name, self.0, Self::FIELDS)
            }
        }
        #[cfg(feature = "defmt")]
        impl defmt::Format for $ty {
            fn format(&self, f: defmt::Formatter<'_>) {
                baregpu_hal::register::defmt_fields(f, $name, self.0, Self::FIELDS)
            }
        }
        impl $ty {
            /// This register's entry of the family's `REGISTERS` table.
            pub const SPEC: baregpu_hal::register::RegisterSpec<Chipset> =
                baregpu_hal::register::RegisterSpec {
                    name: $name,
                    block: $block,
                    offset: $offset,
                    relative: $relative,
                    count: register!(@count $kind $(($count, $stride))?),
                    stride: register!(@stride $kind $(($count, $stride))?),
                    readable: $readable,
                    writable: $writable,
                    write_mask: $mask,
                    reset: $reset,
                    chipsets: <$ty as baregpu_hal::register::Register>::CHIPSETS,
                    source: $source,
                    fields: Self::FIELDS,
                };
        }
    };
    (@readable $ty:ident true) => { impl baregpu_hal::register::Readable for $ty {} };
    (@readable $ty:ident false) => {};
    (@writable $ty:ident true) => { impl baregpu_hal::register::Writable for $ty {} };
    (@writable $ty:ident false) => {};
    (@kind $ty:ident scalar) => { impl baregpu_hal::register::Scalar for $ty {} };
    (@kind $ty:ident array($count:literal, $stride:literal)) => {
        impl baregpu_hal::register::Array for $ty {
            const COUNT: usize = $count;
            const STRIDE: usize = $stride;
        }
    };
    (@count scalar) => { 1 };
    (@count array($count:literal, $stride:literal)) => { $count };
    (@stride scalar) => { 0 };
    (@stride array($count:literal, $stride:literal)) => { $stride };
}

pub mod packet;
pub mod pushbuffer;

/// Radeon R5xx (R520 … R580) registers: amd-r5xx-acceleration §11, plus facts the document
/// omits from public drivers (named in each register's source).
#[cfg(feature = "r5xx")]
#[allow(clippy::all, rustdoc::all)]
#[rustfmt::skip]
#[path = "generated/r5xx.rs"]
pub mod r5xx;

/// VideoCore IV V3D registers: broadcom-videocore-iv-3d §10 (Table 48 and the per-register
/// tables). The V3D block is absolute: its offsets count from the start of the V3D register
/// window, which a platform maps at [`vc4::Chipset::mmio_base`] (the Pi 1's BCM2835 at ARM
/// physical 0x20c00000, the Pi 2/3's BCM2836/7 at 0x3fc00000).
#[cfg(feature = "vc4")]
#[allow(clippy::all, rustdoc::all)]
#[rustfmt::skip]
#[path = "generated/vc4.rs"]
pub mod vc4;

/// Radeon Evergreen / Cayman registers named by amd-evergreen-cayman-acceleration, with offsets
/// from the document or from the public sources each register names.
#[cfg(feature = "evergreen")]
#[allow(clippy::all, rustdoc::all)]
#[rustfmt::skip]
#[path = "generated/evergreen.rs"]
pub mod evergreen;

/// nVidia PMC, PTIMER, PFIFO and falcon registers: nvidia-hardware-envytools. Chip-specific
/// layouts (`[G80:GF100]`) are separate types whose `Register::CHIPSETS` gives the range; the
/// falcon IO space and the PFIFO USER area are relative blocks reached through their instances
/// (`io.at::<falcon::Pdaemon>()`).
#[cfg(feature = "nvidia")]
#[allow(clippy::all, rustdoc::all)]
#[rustfmt::skip]
#[path = "generated/nvidia.rs"]
pub mod nvidia;

#[cfg(test)]
extern crate std;

/// The generator fixture (`fixture/fixture.toml`), compiled only for this crate's tests.
#[cfg(test)]
#[allow(clippy::all, rustdoc::all, dead_code, missing_docs)]
#[rustfmt::skip]
#[path = "generated/fixture.rs"]
pub mod fixture;

#[cfg(test)]
mod tests;

/// The crate README's examples, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
