//! Emulated Radeon Evergreen (Cypress, PCI 1002:6898) and Northern Islands (Cayman, PCI
//! 1002:6718) GPU, written from the AMD "Evergreen/Cayman acceleration" document
//! (`amd-evergreen-cayman-acceleration`: §3 compute, §4 Cayman shader changes, §8.6 RATs, §9
//! PM4) and the public facts it omits (Linux radeon evergreend.h / evergreen.c / ni.c /
//! r600.c, Mesa r600, LLVM R600 backend: cited where used), independently of the project's
//! driver, ring encoder and assembler.
//!
//! # What is emulated
//!
//! - **Register file** (BAR0, 256 KiB) from the generated database
//!   (`baregpu_regs::evergreen::REGISTERS`) per chip: write masks, read-only registers, holes
//!   ([`Stats::writes_dropped`]); the SET_* constant files as plain storage ([`regfile`]).
//! - **Microcode** ([`chip`]): PFP, ME and RLC RAMs of the chip's image size behind their
//!   upload ports, auto-increment on write and read-back; the CP parses packets only with the
//!   chip's known PFP and ME images (SHA-256), un-halted (`CP_ME_CNTL` ME_HALT / PFP_HALT,
//!   halted at power-on). Writing microcode while the engine runs is an error state.
//! - **Ring** (`CP_RB_BASE` = address >> 8, `CP_RB_CNTL.RB_BUFSZ` = log2 quad-words so
//!   2^(RB_BUFSZ+1) dwords, `RB_BLKSZ` write-back block, `RB_NO_UPDATE`, `BUF_SWAP`,
//!   `RB_RPTR_WR_ENA` + `CP_RB_RPTR_WR`; Linux radeon evergreen.c `evergreen_cp_resume`):
//!   fetched at most [`DWORDS_PER_TICK`] dwords per tick, so a driver sees partly consumed
//!   rings. The read pointer is written to `CP_RB_RPTR_ADDR(_HI)` every block and whenever the
//!   ring runs empty. Bus address 0 (an address register never programmed) is a DMA fault
//!   for every fetch and store; `RB_BUFSZ` outside 2..=22 is refused, not clamped.
//! - **PM4** ([`pm4`], §9): type 0 writes registers (§9.1.1), type 1 is an error (§9.1.2),
//!   type 2 is a one-dword filler (§9.1.3), type 3 by opcode with its body size checked (a
//!   bad count or an unknown opcode is an error state). ME_INITIALIZE must come first (§9.2.1).
//!   SET_*_REG / SET_* constants with range checks (§9.4.13-§9.4.19), INDIRECT_BUFFER up to
//!   IB2 (§9.3.1), NOP, SURFACE_SYNC (coherent at once), EVENT_WRITE (ZPASS_DONE writes a zero
//!   count), EVENT_WRITE_EOP (32/64-bit data, clock, INT_SEL interrupt), EVENT_WRITE_EOS
//!   (DATA), MEM_WRITE, WAIT_REG_MEM (a poll per POLL_INTERVAL, at most one per tick),
//!   MEM_SEMAPHORE (§9.6.4: a signal
//!   increments the 64-bit semaphore or writes 1 once the work before it is done; a wait
//!   stops the CP, one poll per tick, until the semaphore is not zero, then decrements it),
//!   COND_EXEC, PRED_EXEC (selects on the device ID ME_INITIALIZE gave:
//!   [`pm4::device_selected`]), COND_WRITE, SET_PREDICATION (ZPASS) with predicated packets
//!   skipped (§9.5), CP_DMA fill and copy (Linux radeon evergreend.h layout; bounded bytes per
//!   tick), DISPATCH_DIRECT / DISPATCH_INDIRECT (with SET_BASE), CLEAR_STATE, CONTEXT_CONTROL,
//!   PREAMBLE_CNTL, MODE_CONTROL, PFP_SYNC_ME, DEALLOC_STATE (Cayman). Drawing and stream-out
//!   packets (STRMOUT_BUFFER_UPDATE) are an error state (no rendering engine).
//! - **Scratch registers**: a write of `SCRATCH_REGn` is copied to `(SCRATCH_ADDR << 8) + 4n`
//!   when `SCRATCH_UMSK` bit n is set.
//! - **IH ring** ([`ih`]) with EOP vectors (source 181), overflow, write-pointer write-back
//!   and the host interrupt line [`IRQ_LINE`].
//! - **Soft reset**: `GRBM_SOFT_RESET.SOFT_RESET_CP` needs the ME and PFP halted (Linux radeon
//!   evergreen.c halts them before every reset) and clears the CP state (read pointer,
//!   packets, IBs, work, ME_INITIALIZE, predication, the CP error); the microcode and the ring
//!   registers stay. (A device the framework froze in its error state stays frozen until the
//!   mailbox function-level reset, which is power-on: microcode must be reloaded.) `SRBM_SOFT_RESET.SOFT_RESET_IH` clears the IH write pointer.
//! - **Compute**: DISPATCH_* builds a [`shader::DispatchState`] from the LS/CS registers
//!   (§3.1: compute runs on the LS resources), the CS fetch resources, the CB0-11 RATs and the
//!   loop constants, and runs a [`shader::Dispatch`] for [`SHADER_UNITS_PER_TICK`] units per
//!   tick; the CP waits for it (in order) before the next packet, so EVENT_WRITE_EOP after a
//!   dispatch is its end of pipe. A shader-core error is the CP's error state (its code).
//!
//! # Errors
//!
//! A CP error stops the CP: `GRBM_STATUS.GUI_ACTIVE`/`CP_BUSY` stay set, the read pointer
//! stops; the cause is the mailbox header's error code ([`error_code`]).
//!
//! # Work per tick
//!
//! A tick does one bounded thing: continue the work in progress (one poll, one DMA slice of
//! [`DMA_BYTES_PER_TICK`], one shader step of [`SHADER_UNITS_PER_TICK`]) or fetch at most
//! [`DWORDS_PER_TICK`] dwords and run the packets they complete (each bounded: the largest
//! collected body is 8 dwords, SET_* and NOP bodies are consumed dword by dword). No tick runs
//! more than [`MAX_UNITS_PER_TICK`] work units ([`Stats::max_tick_units`]).
#![forbid(unsafe_code)]

pub mod chip;
mod faults;
mod gpu;
pub mod ih;
pub mod pm4;
pub mod regfile;
pub mod shader;

pub use chip::{Asic, Engine, KnownImage};
pub use faults::{Faults, MAX_SLOW_TICKS};
pub use gpu::*;
pub use gpu_device_model::faults::BadFault;
