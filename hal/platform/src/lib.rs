//! `baregpu-platform`: what a bare-metal kernel otherwise writes by hand to host the baregpu
//! drivers.
//!
//! The drivers ask the kernel for three things (the traits of `baregpu-hal`): a
//! [`RegisterIo`](baregpu_hal::RegisterIo) for the GPU's registers, a
//! [`DmaAllocator`](baregpu_hal::dma::DmaAllocator) and a [`Clock`](baregpu_hal::time::Clock),
//! plus PCI configuration access to find the GPU. This crate has ready implementations:
//!
//! - [`dma::BumpDma`]: a `Sync` bump allocator over one physically contiguous memory region
//!   (lock-free, so a driver behind a `static` lock may use it from an interrupt handler);
//! - [`pci::Ecam`] (PCIe enhanced configuration access, any architecture) and, with the
//!   `x86_64` feature, `pci::PortConfig` (configuration mechanism #1, ports 0xCF8/0xCFC);
//! - `clock::TscClock` (`x86_64`: the TSC calibrated against PIT channel 2) and
//!   `clock::CounterClock` (`aarch64`: the generic timer's virtual counter);
//! - [`msi`]: MSI and MSI-X set-up over `pci_types`' capability parsing, and the x86 local
//!   APIC message format;
//! - [`mmio`]: a BAR remapped uncached through an offset page table (`x86_64`), or the hook
//!   other architectures implement;
//! - [`boot`] (feature `bootloader_api`): rust-osdev `bootloader` 0.11's boot information as
//!   a DMA pool and BAR mappings through its physical-memory map.
//!
//! ```
//! use baregpu_hal::dma::{DmaAllocator, DmaLayout, BusAddress};
//! use baregpu_platform::dma::BumpDma;
//! # #[repr(C, align(64))] struct Pool([u8; 64 * 1024]);
//! # let memory: &'static mut Pool = Box::leak(Box::new(Pool([0; 64 * 1024])));
//! # let cpu = core::ptr::NonNull::new(memory.0.as_mut_ptr()).unwrap();
//! # let (bus, size) = (BusAddress(0x10_0000), 64 * 1024);
//! // In a kernel: `cpu` maps `size` bytes of RAM that devices reach at `bus`.
//! // SAFETY: the memory is RAM reserved for DMA, mapped at `cpu`, seen by devices at `bus`.
//! let dma = unsafe { BumpDma::new(cpu, bus, size) }?;
//! let ring = dma.allocate(DmaLayout::new(4096, 4096)?)?;
//! assert_eq!(ring.bus_address().0 % 4096, 0);
//! # Ok::<(), Box<dyn core::error::Error>>(())
//! ```
//!
//! Architecture features compile only on their architecture (so the documentation of each
//! target shows its own: `TscClock`, `PortConfig` and `map_uncached` on x86_64, `CounterClock`
//! on aarch64) (`--all-features` builds on
//! every target): `x86_64` needs `target_arch = "x86_64"`, `aarch64` needs
//! `target_arch = "aarch64"`.
#![no_std]
// docs.rs (`--cfg docsrs`) marks each feature- and architecture-gated item with what it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

#[cfg(feature = "bootloader_api")]
pub mod boot;
pub mod clock;
pub mod dma;
pub mod mmio;
pub mod msi;
pub mod pci;
