//! `gpu-device-model`: the host-side framework for emulated GPUs.
//!
//! A device model implements [`GpuModel`] (its PCI identity, BAR register behaviour, engines
//! that run on their own, reset). The framework supplies everything around it:
//!
//! - [`ConfigSpace`]: type-0 PCI configuration space (IDs, command register, BAR sizing).
//! - [`GuestMemory`]: bounds-checked DMA to guest RAM — QEMU's shared RAM file
//!   ([`SharedFileMemory`], q35 layout) or a heap buffer ([`VecMemory`]).
//! - [`PlatformDevice`]: a device that is not PCI on real hardware (a [`PlatformModel`]: a
//!   register window) presented as a PCI function with project-defined IDs.
//! - [`RegisterBar`]: the register BAR dispatch every GPU model shares.
//! - [`DeviceContext`]: what a model may do during a callback (DMA, interrupt lines,
//!   [`fail`](DeviceContext::fail) into the error state).
//! - [`Device`]: model + config space + memory + interrupt latch + error state, answering the
//!   mailbox operations of `gpu-mailbox`.
//! - [`InProcess`]: a device host tests drive through the kernel's own traits
//!   (`baregpu_hal::RegisterIo`, `pci_types::ConfigRegionAccess`, `baregpu_hal::dma::DmaAllocator`).
//! - [`cp_error`]: the command-processor error codes every model reports, one meaning each.
//! - [`faults`]: the injected faults every GPU model shares, parsed and encoded once.
//! - [`pacing`]: how the engines advance against requests and time ([`Pacing`]: run to idle,
//!   seeded pseudo-random partial progress, or an engine thread), the same for every model.
//! - [`transport`]: the ivshmem server QEMU's `ivshmem-doorbell` connects to, serving the
//!   mailbox; and a fake QEMU client for tests.
//!
//! Nothing the guest sends can panic the framework: bad operations, offsets and DMA become
//! mailbox statuses and the error state.

mod config;
mod context;
pub mod cp_error;
mod device;
mod engine;
pub mod faults;
mod in_process;
mod memory;
mod model;
mod null_io;
pub mod pacing;
mod platform;
pub mod regfile;
mod register_bar;
pub mod sys;
pub mod transport;

pub use config::{
    BadConfigOffset, COMMAND_BUS_MASTER, COMMAND_INTX_DISABLE, COMMAND_IO, COMMAND_MEMORY,
    CONFIG_SIZE, ConfigSpace,
};
pub use context::DeviceContext;
pub use device::{Device, TICK_BUDGET, error_code};
pub use in_process::{
    BAR_WINDOW, BarIo, DMA_BASE, Guard, InProcess, InProcessError, InProcessOptions,
    MODEL_CLOCK_STEP_NS, ModelClock,
};
pub use memory::{
    DmaFault, DmaFaultKind, GuestMemory, MemoryError, RamLayout, SharedFileMemory, VecMemory,
};
pub use model::{Activity, BarKind, BarSpec, GpuModel, IdentityError, PciIdentity};
pub use null_io::NullAfterInit;
pub use pacing::{BadPacing, PACING_ENV, Pacing, SeededPacer};
pub use platform::{PlatformDevice, PlatformModel};
pub use register_bar::RegisterBar;

/// Parse a number as the command-line options and fault lists of every model write it:
/// decimal, or hexadecimal after `0x`/`0X`.
pub fn parse_number(text: &str) -> Option<u64> {
    match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}
