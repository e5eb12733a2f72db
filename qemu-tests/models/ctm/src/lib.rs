//! Emulated CTM units and DPP array interpreter, written from the ATI CTM Guide 1.01
//! (`ati-ctm-guide.txt`; field positions of the ch. 3 instruction words from the US_* register
//! tables of `amd-r5xx-acceleration.txt` §11.10, which the CTM guide's field names refer to).
//!
//! ```no_run
//! use ctm_model::{CtmEngine, FlatMemory};
//! let mut engine = CtmEngine::new();
//! let mut mem = FlatMemory::new(0, 1 << 20);
//! let words: Vec<u32> = vec![/* command buffer */];
//! match engine.execute(&words, &mut mem) {
//!     Ok(summary) => println!("{} commands", summary.commands),
//!     Err(e) => println!("error state {:#x}: {e}", e.code()),
//! }
//! ```
//!
//! A device model runs a buffer incrementally instead, a bounded number of work units per
//! tick (see [`engine`]'s "Work units and slices"):
//!
//! ```no_run
//! # use ctm_model::{CtmEngine, FlatMemory, Progress};
//! # let mut engine = CtmEngine::new();
//! # let mut mem = FlatMemory::new(0, 1 << 20);
//! engine.begin(0x1000, 64).unwrap();
//! loop {
//!     let slice = engine.advance(4096, &mut mem); // at most 4096 units (plus write-backs)
//!     match slice.result {
//!         Ok(Progress::Running) => continue, // next tick
//!         Ok(_) => break,
//!         Err(e) => { println!("CTM_STATUS error {:#x}", e.code()); break }
//!     }
//! }
//! ```
//!
//! # Caches and synchronisation: what a driver must issue
//!
//! The model behaves like strict hardware, so the commands a driver could forget on a
//! forgiving emulator have observable effects here:
//!
//! - **MC caches (CTM guide §2.1.4)**, owned by the [`CtmEngine`] and persisting across
//!   start_program commands and command buffers ([`cache`] has the details):
//!   - instructions and the float, integer and boolean constants are served from their read
//!     caches once fetched: a program or constant changed in memory keeps its old value until
//!     inv_inst_cache / inv_constf_cache / inv_consti_cache / inv_constb_cache;
//!   - inputs are read through the input read cache shared by all 16 inputs (line-granular,
//!     [`cache::LINE_BYTES`]-byte lines): input data changed in memory is seen only after
//!     inv_inp_cache;
//!   - program outputs are written into the output write cache and reach memory only at
//!     flush_out_cache (the model never evicts below a generous capacity, so unflushed
//!     outputs are never visible in memory);
//!   - the CO reads and writes the conditional output buffer through the conditional output
//!     cache: it sees its own pending writes, sees memory changes only after
//!     inv_cond_out_cache, and its writes reach memory only at flush_cond_out_cache
//!     (an invalidate keeps pending writes).
//! - **Pipelining (CTM guide §2.2)**: the commands Table 3 marks as not pipelined
//!   (read_perf_counters, set_inst_fmt, set_inp_fmt, set_out_fmt, set_cond_out_fmt,
//!   set_constf_fmt, set_consti_fmt, set_constb_fmt) "must follow a wait_for_idle command and
//!   precede any subsequent start_program command". The engine considers that a program may
//!   be executing from a start_program until the next wait_for_idle (also across command
//!   buffers) and refuses such a command meanwhile with [`CtmErrorKind::NotIdle`] (error
//!   code 0x106) instead of leaving it undefined.
//!
//! A typical pass is therefore: set_*_fmt, inv_inp_cache (and the other invalidates when
//! instructions or constants changed), start_program, flush_out_cache (and
//! flush_cond_out_cache with conditional output), wait_for_idle.
//!
//! # Modules
//!
//! - [`engine`]: PE command decoding (Table 3), unit state, CO tests, output stage, counters,
//!   the pipelining rule.
//! - [`cache`]: the MC's instruction, constant, input, output and conditional output caches.
//! - [`mc`]: MC formats and Tables 1-2 address translation.
//! - [`dpp`]: the ch. 3 interpreter.
//! - [`fp`]: §3.6 floating point.
//! - [`memory`]: the [`Memory`] trait, [`FlatMemory`], [`DmaMemory`] for a `DeviceContext`.

#![forbid(unsafe_code)]

pub mod cache;
pub mod dpp;
pub mod engine;
pub mod error;
pub mod fp;
pub mod mc;
pub mod memory;

pub use cache::{Caches, LineCache};
pub use dpp::{Limits, ProgramInfo, ProgramRun};
pub use engine::{
    CacheOps, CondLocation, CondTest, CtmEngine, CtmState, Domain, ExecSummary, MAX_STEP_UNITS,
    PerfCounters, Progress, Slice, op,
};
pub use error::{CtmError, CtmErrorKind, DppError};
pub use mc::{DataFormat, SurfaceFormat, Tiling};
pub use memory::{DmaMemory, FlatMemory, MemFault, Memory};
