//! Raspberry Pi 3 (BCM2837, VideoCore IV) bare-metal support for the QEMU `raspi3b` check and
//! real boards: PL011 log, system timer, mailbox property interface, firmware framebuffer and
//! the test pattern. The boot code, panic and exception handlers live in the `kernel8` binary.
//!
//! Everything assumes the MMU and data cache are off (see `src/boot.rs`): peripheral addresses
//! are ARM physical addresses and DMA buffers need no cache maintenance.
#![cfg_attr(not(test), no_std)]
#![deny(clippy::unwrap_used, clippy::expect_used)]
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod framebuffer;
pub mod mailbox;
pub mod pattern;
pub mod soc;
pub mod timer;
pub mod uart;
pub mod v3d;
