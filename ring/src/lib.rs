//! `baregpu-ring`: command-stream writers and DMA command rings.
//!
//! For the Radeon R5xx Command Processor (amd-r5xx-acceleration §5, §6):
//!
//! - [`pm4`]: PM4 packet encoders (types 0-3, §6.1), the type-3 opcodes of §6.2.1, the
//!   [`CommandSink`](pm4::CommandSink) trait and the [`Pm4Writer`](pm4::Pm4Writer) that writes
//!   whole packets of typed register values (`baregpu_regs::r5xx`) into a sink.
//! - [`ring`]: the ring buffer (§5.4) over a [`DmaRegion`](baregpu_hal::dma::DmaRegion): cached
//!   read pointer refreshed from the CP's writeback dword, typed back-pressure, type-2 padding,
//!   one doorbell per [`commit`](ring::CommandRing::commit).
//! - [`ib`]: indirect buffers (§5.6, §5.10) and their 3-dword IB1/IB2 emission.
//!
//! No allocation anywhere: the crate is `no_std` and does not link `alloc`, so no submit path
//! can allocate. No `unsafe` either: DMA memory is reached through `DmaRegion`'s safe,
//! bounds-checked volatile accessors.
//!
//! ```
//! # fn f(ring: &mut baregpu_ring::ring::CommandRing, io: &impl baregpu_hal::RegisterIo,
//! #      ib: baregpu_ring::r5xx::IbDescriptor) -> Result<(), baregpu_ring::pm4::Pm4Error> {
//! use baregpu_regs::r5xx::cp::SCRATCH_REG0;
//! let mut w = ring.writer();
//! w.indirect_buffer(ib)?; // CP_IB_BASE, CP_IB_BUFSZ
//! w.write_reg_at(1, SCRATCH_REG0::from_raw(42))?; // fence (§5.9)
//! ring.pad_to(baregpu_ring::r5xx::SUBMIT_ALIGN).ok();
//! ring.kick(io); // dma_wmb + CP_RB_WPTR
//! # Ok(()) }
//! ```
#![no_std]
#![forbid(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

#[cfg(test)]
extern crate std;

#[cfg(feature = "evergreen")]
pub mod evergreen;
pub mod ib;
pub mod pm4;
pub mod r5xx;
pub mod ring;
pub mod stream;
