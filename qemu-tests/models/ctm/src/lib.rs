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
//! - [`engine`]: PE command decoding (Table 3), unit state, CO tests, output stage, counters.
//! - [`mc`]: MC formats and Tables 1-2 address translation.
//! - [`dpp`]: the ch. 3 interpreter.
//! - [`fp`]: §3.6 floating point.
//! - [`memory`]: the [`Memory`] trait, [`FlatMemory`], [`DmaMemory`] for a `DeviceContext`.

pub mod dpp;
pub mod engine;
pub mod error;
pub mod fp;
pub mod mc;
pub mod memory;

pub use dpp::{Limits, ProgramInfo};
pub use engine::{
    CacheOps, CondLocation, CondTest, CtmEngine, CtmState, Domain, ExecSummary, PerfCounters, op,
};
pub use error::{CtmError, CtmErrorKind, DppError};
pub use mc::{DataFormat, SurfaceFormat, Tiling};
pub use memory::{DmaMemory, FlatMemory, MemFault, Memory};
