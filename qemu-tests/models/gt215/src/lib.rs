//! `gt215-model`: an emulated nVidia GT215 (GeForce GT 240, PCI 10de:0ca3) for the project's
//! nVidia Tesla driver tests, written from the envytools nVidia hardware documentation
//! (`nvidia-hardware-envytools`, cited by section) and, where it is silent, from the public
//! facts it omits (envytools rnndb, cited by origin). It never imports a driver, the pushbuffer
//! writer, the falcon loader or the falcon assembler: its tests write instruction bytes by hand
//! from the §2.10 encodings.
//!
//! What it emulates:
//! - **PCI** (§2.4.1): BAR0 (16 MiB of MMIO registers, 32-bit), BAR1 (the VRAM aperture,
//!   64-bit prefetchable, mapping VRAM directly: "G80+ cards with BAR1 VM disabled"), BAR3
//!   (the RAMIN aperture in the slot after BAR1's pair, 16 MiB, "works like BAR1").
//! - **PMC** (§2.4.1, envytools rnndb bus/pmc.xml): `BOOT_0` with GT215's id 0xa3 (§2.2.3),
//!   `ENABLE` holding PFIFO and PCOPY in reset, `INTR` aggregating the engines' lines,
//!   `INTR_MASK` deciding the PCI interrupt.
//! - **PTIMER** (§2.10.11): `TIME_LOW`/`TIME_HIGH` in nanoseconds, advanced by the engine
//!   ticks the framework's pacing gives ([`TIMER_NS_PER_TICK`]).
//! - **VRAM** ([`VRAM_SIZE`]) behind BAR1, BAR3 and BAR0's PMEM window at 0x700000 (base from
//!   `PBUS.PMEM_WINDOW`, envytools rnndb bus/pbus.xml).
//! - **PFIFO** (§2.8, [`pfifo`]): the channel table, RAMFC/RAMHT/DMA objects in VRAM, the
//!   DMA pusher in DMA and IB modes with its DMA_PUSHER errors, the puller's REF_CNT and
//!   semaphores, PCOPY's methods delivered to its falcon, bounded by
//!   [`pfifo::PUSHER_WORDS_PER_TICK`].
//! - **Falcons** (§2.10): the v3 falcons PCOPY (0x104000) and PDAEMON (0x10a000) executing the
//!   ISA with this crate's own decoder ([`falcon`]), bounded by [`falcon::INSNS_PER_TICK`].
//!
//! Decisions where the document is silent are listed in the crate README and pinned by tests.

#![forbid(unsafe_code)]

pub mod falcon;
mod faults;
mod gpu;
pub mod pfifo;
mod vram;

pub use faults::{Faults, MAX_SLOW_TICKS};
pub use gpu::{
    BAR0, BAR0_SIZE, BAR1, BAR3, BAR3_SIZE, CHIPSET_ID, DEVICE_ID, Gt215, PMEM_WINDOW_BASE,
    PMEM_WINDOW_SIZE, Stats, TIMER_NS_PER_TICK, VENDOR_ID, VRAM_SIZE, YIELD_EVERY,
};
