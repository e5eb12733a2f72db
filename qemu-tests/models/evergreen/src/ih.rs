//! The interrupt-handler (IH) ring: where the GPU writes interrupt vectors for the host.
//!
//! The document names only the interrupt request (§9.6.2 EVENT_WRITE_EOP `INT_SEL`); the ring
//! is from Linux radeon (evergreend.h registers, r600.c `r600_irq_init`, evergreen.c
//! `evergreen_irq_process` / `evergreen_get_ih_wptr`):
//! - `IH_RB_BASE` = ring address >> 8, `IH_RB_CNTL.IH_IB_SIZE` = log2 of its size in dwords;
//!   `IH_RB_WPTR` / `IH_RB_RPTR` are byte offsets (17:2) into it.
//! - An entry ("vector") is 16 bytes, little-endian dwords: dword 0 bits 7:0 the source id
//!   (181 = CP end-of-pipe event, [`SRC_CP_EOP`]), dword 1 bits 27:0 the source data, dwords 2
//!   and 3 zero on these chips.
//! - With `IH_WPTR_WRITEBACK_ENABLE` the write pointer is also written to
//!   `IH_RB_WPTR_ADDR_HI:LO` after each entry (an unprogrammed address 0 is a DMA fault).
//! - A full ring (write pointer + 16 = read pointer): with `IH_WPTR_OVERFLOW_ENABLE` the entry
//!   overwrites the oldest one and `IH_RB_WPTR.RB_OVERFLOW` is set (Linux then restarts at
//!   write pointer + 16 and clears it with `IH_RB_CNTL.IH_WPTR_OVERFLOW_CLEAR`); without it the
//!   entry is dropped (counted).
//! - Entries are written only while `IH_RB_CNTL.IH_RB_ENABLE`, `IH_CNTL.ENABLE_INTR` and the
//!   RLC (known image, `RLC_CNTL.RLC_ENABLE`) are on; the host interrupt line is asserted while
//!   entries are pending (write pointer != read pointer).

/// Bytes per IH vector.
pub const ENTRY_BYTES: u32 = 16;
/// Source id of the CP end-of-pipe event (Linux radeon evergreen.c `evergreen_irq_process`:
/// 181 "CP EOP event").
pub const SRC_CP_EOP: u32 = 181;

/// The write side of the ring (the GPU's), cleared by `SRBM_SOFT_RESET.SOFT_RESET_IH`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Ih {
    /// Write offset in bytes.
    pub wptr: u32,
    /// `IH_RB_WPTR.RB_OVERFLOW`.
    pub overflow: bool,
}
