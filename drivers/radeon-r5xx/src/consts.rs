//! Protocol constants, each with its source: the command-cache split, ring-control values, the
//! writeback page layout and the scratch registers the driver reserves.

use baregpu_hal::Array;
use baregpu_regs::r5xx::cp::SCRATCH_REG0;
use baregpu_regs::r5xx::cp::cp_rb_cntl::MaxFetch;

/// `CP_RB_CNTL.RB_BLKSZ` upper bound: log2 quadwords between read-pointer writebacks
/// (§5.4, §11.1). Linux r100.c uses one GPU page, `log2(4096 / 8)` = 9; the driver lowers it
/// for small rings (see [`crate::RingConfig`]) so a ring gets at least 4 updates per pass.
pub const LINUX_RB_BLKSZ: u8 = 9;

/// `CP_RB_CNTL.MAX_FETCH` (§11.1): 2 double octwords (64 bytes) per CP memory read, Linux
/// r100.c `max_fetch = 1`.
pub const MAX_FETCH: MaxFetch = MaxFetch::V2DoubleOctwords;

/// `CP_CSQ_MODE.INDIRECT1_START` (§11.1): the primary queue gets the command-cache
/// locations 0..16, i.e. 16 double octwords (Linux r100.c `indirect1_start = 16`). §11.1
/// requires at least twice MAX_FETCH (4 double octwords).
pub const INDIRECT1_START: u8 = 16;

/// `CP_CSQ_MODE.INDIRECT2_START` (§11.1): indirect queue 1 gets locations 16..80 and
/// indirect queue 2 80..0x5F (Linux r100.c `indirect2_start = 80`).
pub const INDIRECT2_START: u8 = 80;

/// Dwords in a double octword (32 bytes, §11.1 MAX_FETCH "1 double octword (32 bytes)").
pub const DWORDS_PER_DOUBLE_OCTWORD: usize = 8;

/// Capacity of the primary PIO queue in dwords: [`INDIRECT1_START`] double octwords
/// (§11.1 `CP_CSQ_MODE.INDIRECT1_START` "is also the size in double octwords of the Primary
/// Queue cache") = 128 dwords.
pub const PIO_PRIMARY_QUEUE_DWORDS: usize = INDIRECT1_START as usize * DWORDS_PER_DOUBLE_OCTWORD;

// §11.1 CP_CSQ_MODE: each queue at least twice MAX_FETCH (2 double octwords here), the
// indirect-2 queue ends at 0x5F.
const _: () = assert!(INDIRECT1_START >= 2 * 2 && INDIRECT2_START - INDIRECT1_START >= 4);
const _: () = assert!(INDIRECT2_START < 0x5F - 4);

/// Polls between two all-ones checks while waiting on DMA memory (the shared layer's value).
pub use baregpu_gpu::liveness::LIVENESS_CHECK_EVERY;

/// Byte size of the writeback page (one GPU page, Linux `RADEON_GPU_PAGE_SIZE`).
pub const WRITEBACK_BYTES: usize = 4096;
/// Offset of the scratch writeback area in the writeback page: `SCRATCH_ADDR` points here and
/// the CP writes `SCRATCH_REGn` to `+ 4n` (§5.9). Linux radeon.h `RADEON_WB_SCRATCH_OFFSET` 0.
pub const WB_SCRATCH_OFFSET: usize = 0;
/// Offset of the read-pointer writeback dword (`CP_RB_RPTR_ADDR`, §5.4). Linux radeon.h
/// `RADEON_WB_CP_RPTR_OFFSET` 1024.
pub const WB_RPTR_OFFSET: usize = 1024;

/// Scratch register of the ring and IB tests (Linux r100.c `r100_ring_test`).
pub const RING_TEST_SCRATCH: usize = 0;
/// Scratch register carrying fence sequence numbers (§5.9).
pub const FENCE_SCRATCH: usize = 1;
/// First scratch register free for the caller (2..8, all written back).
pub const USER_SCRATCH: usize = 2;
/// Value the ring test writes by MMIO first (Linux r100.c `r100_ring_test`).
pub const RING_TEST_SEED: u32 = 0xCAFE_DEAD;
/// Value the ring test's type-0 packet writes (Linux r100.c `r100_ring_test`).
pub const RING_TEST_VALUE: u32 = 0xDEAD_BEEF;

/// `SCRATCH_REG0..7` (§11.1).
pub(crate) const SCRATCH_COUNT: usize = <SCRATCH_REG0 as Array>::COUNT;
const _: () = assert!(FENCE_SCRATCH < SCRATCH_COUNT && USER_SCRATCH < SCRATCH_COUNT);
const _: () = assert!(WB_SCRATCH_OFFSET + 4 * SCRATCH_COUNT <= WB_RPTR_OFFSET);
const _: () = assert!(WB_RPTR_OFFSET + 4 <= WRITEBACK_BYTES);

/// Dwords of one fence: a type-0 header and the scratch value (§6.1.1).
pub const FENCE_DWORDS: usize = 2;
/// Dwords of one single-register write (type-0 header + value, §6.1.1).
pub const REG_WRITE_DWORDS: usize = 2;

#[cfg(test)]
mod tests {
    #[test]
    fn pio_queue_is_the_primary_share_of_the_command_cache() {
        // §11.1: INDIRECT1_START double octwords of 8 dwords.
        assert_eq!(super::PIO_PRIMARY_QUEUE_DWORDS, 128);
    }
}
