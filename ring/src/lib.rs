//! `baregpu-ring`: command-stream writers and DMA command rings, written once and made
//! family-specific by small traits.
//!
//! - [`stream`]: the [`StreamUnit`](stream::StreamUnit) a stream is made of (`u32` dwords for
//!   PM4 and pushbuffers, `u8` for byte records such as VideoCore IV control lists), the
//!   reserve-then-push [`CommandSink`](stream::CommandSink) and [`SliceSink`](stream::SliceSink).
//! - [`ring`]: the [`CommandRing`](ring::CommandRing) over a
//!   [`DmaRegion`](baregpu_hal::dma::DmaRegion): cached read pointer refreshed through a
//!   [`ReadPointer`](ring::ReadPointer) policy (the CP's write-back dword, or a register),
//!   typed back-pressure, wrap, filler padding, one doorbell per
//!   [`commit`](ring::CommandRing::commit), written to an absolute register or one in a block
//!   instance (a channel's USER area); generic over the family's
//!   [`CommandProcessorRing`](ring::CommandProcessorRing) (doorbell and base registers, size
//!   encoding, alignment, filler). The generic modules name no family; every family module is
//!   behind its feature, like `baregpu-regs`'.
//! - [`pm4`]: AMD PM4 packet encoders and the [`Pm4Writer`](pm4::Pm4Writer) that writes whole
//!   packets of typed register values into a sink, generic over the family's
//!   [`Pm4Family`](pm4::Pm4Family) (which packet writes a register); type-3 packets come from
//!   the generated, document-checked tables (`baregpu_regs::<family>::packets`).
//! - [`ib`]: indirect buffers built in DMA memory, generic over the family's
//!   [`IndirectBuffers`](ib::IndirectBuffers).
//! - `r5xx` (feature `r5xx`): the Radeon R5xx implementations (amd-r5xx-acceleration §5, §6):
//!   CP_RB_* ring registers, type-0/type-1 register writes, IB1/IB2 through
//!   CP_IB_BASE/CP_IB_BUFSZ; its shorthands `R5xxRing`, `R5xxIb`, `CommandRing::new`,
//!   `Pm4Writer::new` and `IndirectBuffer::new`.
//! - `evergreen` (feature `evergreen`): the Evergreen/Cayman implementations
//!   (amd-evergreen-cayman-acceleration §9): 40-bit CP_RB_* setup, `SET_*_REG` register writes
//!   by range, `INDIRECT_BUFFER`.
//! - `vc4` (feature `vc4`): the VideoCore IV control-list writer (broadcom-videocore-iv-3d
//!   §9) over the `u8` stream unit: records packed from the generated record table, the list
//!   buffer bounds-checked, every address field through one caller-implemented relocation hook.
//!
//! - `nvidia` (feature `nvidia`): nVidia pushbuffers (nvidia-hardware-envytools §2.8) over
//!   the `u32` unit: the `PushbufferWriter` (method headers, jumps, calls, returns and the
//!   puller's methods from the generated tables), the DMA-mode pushbuffer ring (doorbell
//!   `DMA_PUT`, read pointer `DMA_GET`, a jump back before the end) and the IB-mode
//!   `IbChannel` (entries pointing at segments, back-pressure on `IB_GET`, one `IB_PUT` per
//!   batch), both on the generic ring with the channel's USER block.
//!
//! No allocation anywhere: the crate is `no_std` and does not link `alloc`, so no submit path
//! can allocate. No `unsafe` either: DMA memory is reached through `DmaRegion`'s safe,
//! bounds-checked volatile accessors.
//!
//! ```
//! # fn f(ring: &mut baregpu_ring::r5xx::R5xxRing, io: &impl baregpu_hal::RegisterIo,
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
// docs.rs (`--cfg docsrs`) marks each feature-gated item with the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

#[cfg(test)]
extern crate std;

#[cfg(feature = "evergreen")]
pub mod evergreen;
pub mod ib;
#[cfg(feature = "nvidia")]
pub mod nvidia;
pub mod pm4;
#[cfg(feature = "r5xx")]
pub mod r5xx;
pub mod ring;
pub mod stream;
#[cfg(feature = "vc4")]
pub mod vc4;
