//! `baregpu-hal`: what every driver of this framework stands on.
//!
//! - [`io`]: the [`RegisterIo`] trait (32-bit register access at byte offsets) and typed access
//!   to generated registers ([`RegisterIoExt::read`], [`write`](RegisterIoExt::write),
//!   [`modify`](RegisterIoExt::modify), and [`at`](RegisterIoExt::at) for engine and channel
//!   blocks); the same driver code runs on real MMIO ([`MmioRegion`]) and on an in-process
//!   device model.
//! - [`register`]: the traits generated registers implement: family and base in the type,
//!   chipset ranges, field descriptions.
//! - [`mmio`]: a register region over `volatile` raw pointers (no reference to MMIO is created).
//! - [`dma`]: DMA-able memory with CPU pointer and bus address, owned by a
//!   [`DmaBuffer`](dma::DmaBuffer) that gives it back to its allocator on drop, and the
//!   barriers a driver needs before it rings a doorbell ([`barrier`]).
//! - [`time`]: a monotonic clock and bounded polling ([`time::poll_until`]).
//! - [`pci`]: discovery, BAR decoding and the device match table, over `pci_types`.
//! - [`error`](mod@error): [`Chain`](error::Chain) prints an error with its sources on one line.
//! - [`log`]: logging macros that forward to `defmt` when the `defmt` feature is on.
#![no_std]
// docs.rs (`--cfg docsrs`) marks each feature-gated item with the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

#[cfg(feature = "alloc")]
extern crate alloc;

pub mod barrier;
pub mod dma;
pub mod error;
pub mod io;
pub mod log;
pub mod mmio;
pub mod pci;
pub mod register;
pub mod time;

pub use io::{BlockIo, FamilyIo, RegisterIo, RegisterIoExt};
pub use mmio::MmioRegion;
pub use register::{
    Absolute, AddressFieldError, Array, Base, ChipRange, Chipsets, Family, FieldOverflow,
    FieldSpec, IndexOutOfRange, Instance, InstanceArray, InvalidEnumValue, Readable, Register,
    RegisterSpec, Scalar, UnknownChipset, Writable,
};

#[cfg(feature = "defmt")]
#[doc(hidden)]
pub use defmt as __defmt;
