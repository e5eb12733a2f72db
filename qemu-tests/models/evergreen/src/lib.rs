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
//!   IB2 (§9.3.1), NOP, SURFACE_SYNC (the caches' actions, see below), EVENT_WRITE
//!   (CS_PARTIAL_FLUSH waits, cache flushes at the end of the pipe, ZPASS_DONE writes a zero
//!   count), EVENT_WRITE_EOP (32/64-bit data, clock, INT_SEL interrupt, at the end of the
//!   pipe), EVENT_WRITE_EOS (DATA, at the end of the shaders), MEM_WRITE (top of the pipe:
//!   at once), WAIT_REG_MEM (a poll per POLL_INTERVAL, at most one per tick), MEM_SEMAPHORE
//!   (§9.6.4: a signal increments the 64-bit semaphore or writes 1 at the bottom of the pipe;
//!   a wait stops the CP, one poll per tick, until the semaphore is not zero, then decrements
//!   it),
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
//!   loop constants, and hands a [`shader::Dispatch`] to the shader core, which runs
//!   [`SHADER_UNITS_PER_TICK`] units per tick. A shader-core error is the CP's error state
//!   (its code).
//!
//! # Engines beside the CP
//!
//! The CP hands work to engines and parses on; it waits only where the stream asks:
//!
//! - **Shader core**: up to [`MAX_DISPATCHES_IN_FLIGHT`] dispatches, stepped in turn (a
//!   dispatch issued without a partial flush overlaps the one before it). EVENT_WRITE
//!   CS_PARTIAL_FLUSH (§9.6.1) stops the CP until every dispatch before it is done.
//! - **DMA engine**: CP_DMA transfers in order, [`DMA_BYTES_PER_TICK`] per tick; the CP waits
//!   for them only on CP_SYNC (bit 31 of the second dword). The engine reads and writes memory,
//!   not the shader caches.
//! - **End of pipe**: EOP (§9.6.2), EOS (§9.6.3), semaphore signals (§9.6.4) and the
//!   CACHE_FLUSH(_AND_INV) events take effect in order once every dispatch issued before them
//!   is done, on the tick after they entered the pipe at the earliest; the cache-flush EOP events first write the colour-buffer cache back. INT_SEL 2
//!   sends the interrupt the tick after the write ("when Write Confirm is received").
//!   MEM_WRITE is a top-of-pipe write (§9.7.1): it can land before the work ahead of it ends.
//! - **Caches** ([`cache`]): MEM_RAT exports stay in the colour-buffer cache until a flush
//!   (SURFACE_SYNC with CB_ACTION_ENA and the colour buffer's DEST_BASE_ENA, a cache-flush
//!   event, or an eviction); vertex fetches and program/constant reads are served from
//!   read-only caches until TC/VC_ACTION_ENA or SH_ACTION_ENA invalidates them. SURFACE_SYNC
//!   with CB_ACTION_ENA or DB_ACTION_ENA waits for the dispatches in flight (the writers of
//!   the surface) first.
//!
//! A queue that is full (dispatches, DMA transfers, [`MAX_PIPE_EVENTS`] pipe events) stalls
//! the CP on the packet until there is room.
//!
//! # Errors
//!
//! A CP error stops the CP: `GRBM_STATUS.GUI_ACTIVE`/`CP_BUSY` stay set, the read pointer
//! stops; the cause is the mailbox header's error code ([`error_code`]).
//!
//! # Work per tick
//!
//! In a tick the CP does one bounded thing (one poll, or fetch at most [`DWORDS_PER_TICK`]
//! dwords and run the packets they complete: the largest collected body is 8 dwords, SET_* and
//! NOP bodies are consumed dword by dword), and beside it the DMA engine moves one slice of
//! [`DMA_BYTES_PER_TICK`], the shader core runs one step of [`SHADER_UNITS_PER_TICK`] and the
//! end of the pipe retires one event (a cache flush writes back at most the cache's lines). No
//! tick runs more than [`MAX_UNITS_PER_TICK`] work units ([`Stats::max_tick_units`]).
#![forbid(unsafe_code)]

pub mod cache;
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
