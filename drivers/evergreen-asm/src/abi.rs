//! The compute-kernel ABI: what the driver sets up before a dispatch and what a kernel (and an
//! emulated shader core, from the hardware's side) may rely on. The convention is Clover's, as
//! the LLVM R600 backend compiles OpenCL kernels against it (evergreen-compute A3, A6).
//!
//! | what | where |
//! |---|---|
//! | thread id in the group | `R0.x`, `R0.y`, `R0.z` (thread start state) |
//! | group id | `R1.x`, `R1.y`, `R1.z` |
//! | group counts (x, y, z) | constant buffer 0, dwords 0-2 (`cb0[0].x/y/z`) |
//! | global size (x, y, z) | cb0 dwords 3-5 (`cb0[0].w`, `cb0[1].x/y`) |
//! | local (group) size (x, y, z) | cb0 dwords 6-8 (`cb0[1].z/w`, `cb0[2].x`) |
//! | kernel arguments | cb0 dword 9 on (`cb0[2].y` is the first), one dword each |
//! | global reads | vertex fetch from fetch buffer 1 (`vb1`): a `STRIDE` 1 buffer over global memory, so the index register holds the byte address |
//! | global writes and atomics | RAT 0 (colour buffer 0 as a RAT) with the dword index (byte address / 4) in the index register's x |
//!
//! Global id x = `R1.x * local_size_x + R0.x` (A6). Pointer arguments are byte addresses in
//! the global memory that both fetch buffer 1 and RAT 0 cover from the same base.
//!
//! The driver's side (evergreen-compute A2/A3): `SPI_COMPUTE_INPUT_CNTL` must enable the
//! thread-id-in-group and group-id inputs so the thread start state above is loaded. The
//! document's §3.2 lists 0 for these bits while Mesa programs 7 (TID_IN_GROUP, TGID,
//! DISABLE_INDEX_PACK); this crate's kernels read R0/R1 as Mesa and LLVM expect, so they
//! need Mesa's value — the one "could not confirm" item that decides whether R0/R1 hold ids.
//! Which hardware resource `BUFFER_ID` 1 selects (Mesa puts compute resources at 816, the
//! document says compute shares the LS resources) is the driver's business: kernels only
//! name buffer 1.

/// GPR holding the thread id in the group (x, y, z).
pub const THREAD_ID_GPR: u8 = 0;
/// GPR holding the group id (x, y, z).
pub const GROUP_ID_GPR: u8 = 1;
/// Constant buffer of the dispatch constants and arguments.
pub const DISPATCH_CB: u8 = 0;
/// Dword of cb0 holding the group count in x (y, z follow).
pub const CB0_GROUP_COUNT: usize = 0;
/// Dword of cb0 holding the global size in x (y, z follow).
pub const CB0_GLOBAL_SIZE: usize = 3;
/// Dword of cb0 holding the local (group) size in x (y, z follow).
pub const CB0_LOCAL_SIZE: usize = 6;
/// Dword of cb0 holding the first kernel argument.
pub const CB0_ARGS: usize = 9;
/// Fetch buffer (`BUFFER_ID`) through which kernels read global memory.
pub const GLOBAL_FETCH_BUFFER: u8 = 1;
/// RAT through which kernels write global memory.
pub const GLOBAL_RAT: u8 = 0;

/// Why [`dispatch_constants`] failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum AbiError {
    /// `out` is shorter than the 9 dispatch dwords plus the arguments.
    BufferTooSmall {
        /// Dwords needed.
        needed: usize,
    },
    /// A global size (groups × local size) does not fit 32 bits.
    GlobalSizeOverflow,
}

impl core::fmt::Display for AbiError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            AbiError::BufferTooSmall { needed } => {
                write!(f, "constant buffer needs {needed} dwords")
            }
            AbiError::GlobalSizeOverflow => f.write_str("global size does not fit 32 bits"),
        }
    }
}

impl core::error::Error for AbiError {}

/// Fills constant buffer 0 for a dispatch of `groups` groups of `local` threads with the
/// kernel arguments `args`; returns the dwords written (9 + `args.len()`).
pub fn dispatch_constants(
    groups: [u32; 3],
    local: [u32; 3],
    args: &[u32],
    out: &mut [u32],
) -> Result<usize, AbiError> {
    let needed = CB0_ARGS + args.len();
    if out.len() < needed {
        return Err(AbiError::BufferTooSmall { needed });
    }
    for d in 0..3 {
        out[CB0_GROUP_COUNT + d] = groups[d];
        out[CB0_GLOBAL_SIZE + d] =
            groups[d].checked_mul(local[d]).ok_or(AbiError::GlobalSizeOverflow)?;
        out[CB0_LOCAL_SIZE + d] = local[d];
    }
    out[CB0_ARGS..needed].copy_from_slice(args);
    Ok(needed)
}
