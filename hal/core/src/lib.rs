//! `baregpu-hal`: what every driver of this framework stands on.
//!
//! - [`io`]: the [`RegisterIo`] trait (32-bit register access at byte offsets) and typed access
//!   to generated registers ([`RegisterIoExt::read`], [`write`](RegisterIoExt::write),
//!   [`modify`](RegisterIoExt::modify)); the same driver code runs on real MMIO ([`MmioRegion`])
//!   and on an in-process device model.
//! - [`mmio`]: a register region over `volatile` raw pointers (no reference to MMIO is created).
//! - [`dma`]: DMA-able memory with CPU pointer and bus address, and the barriers a driver needs
//!   before it rings a doorbell ([`barrier`]).
//! - [`time`]: a monotonic clock and bounded polling ([`time::poll_until`]).
//! - [`pci`]: discovery, BAR decoding and the device match table, over `pci_types`.
//! - [`log`]: logging macros that forward to `defmt` when the `defmt` feature is on.
#![no_std]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

#[cfg(feature = "alloc")]
extern crate alloc;

pub mod barrier;
pub mod dma;
pub mod io;
pub mod log;
pub mod mmio;
pub mod pci;
pub mod register;
pub mod time;

pub use io::{RegisterIo, RegisterIoExt, Relative};
pub use mmio::MmioRegion;
pub use register::{
    Array, FieldOverflow, FieldSpec, IndexOutOfRange, InvalidEnumValue, Readable, Register,
    RegisterSpec, Scalar, Writable,
};

#[cfg(feature = "defmt")]
#[doc(hidden)]
pub use defmt as __defmt;
