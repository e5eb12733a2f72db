//! The binner's overflow pool: caller-provided memory handed to the binner block by block
//! through `V3D_BPOA` then `V3D_BPOS` (broadcom-videocore-iv-3d §10, Tables 60-61) whenever
//! it runs out of tile allocation memory (OUTOMEM, Table 75).

use core::cell::Cell;
use core::marker::PhantomData;

use baregpu_hal::dma::{BusAddress, DmaRegion};

use crate::error::{JobBuffer, JobError};
use crate::job::within_binner_boundary;

/// Overflow memory for the binner, cut into equal blocks. Blocks are handed out in order
/// during a job and all given back when the next job starts (the previous job's binning has
/// finished by then).
///
/// It keeps the region's bus address and size, borrowed for `'p` so the memory outlives the
/// pool, but holds no reference to it: the driver stays `Send` (a kernel keeps it in a
/// `static` for its interrupt handler; a `DmaRegion` is not `Sync`).
#[derive(Debug)]
pub struct OverflowPool<'p> {
    base: BusAddress,
    size: usize,
    block_bytes: u32,
    next: Cell<u32>,
    region: PhantomData<&'p ()>,
}

impl<'p> OverflowPool<'p> {
    /// `region` cut into blocks of `block_bytes`. Refused when a block is empty or larger
    /// than the region, or the region crosses a 256 MiB boundary (the binner cannot, Linux
    /// vc4_v3d.c).
    pub fn new(region: &'p DmaRegion, block_bytes: u32) -> Result<Self, JobError> {
        let size = region.size();
        if block_bytes == 0 || block_bytes as usize > size {
            return Err(JobError::BufferTooSmall {
                buffer: JobBuffer::OverflowPool,
                needed: (block_bytes as usize).max(1),
                size,
            });
        }
        within_binner_boundary(JobBuffer::OverflowPool, region.bus_address(), size)?;
        Ok(OverflowPool {
            base: region.bus_address(),
            size,
            block_bytes,
            next: Cell::new(0),
            region: PhantomData,
        })
    }

    /// Blocks in the pool.
    pub fn blocks(&self) -> u32 {
        (self.size / self.block_bytes as usize) as u32
    }

    /// Bytes per block.
    pub fn block_bytes(&self) -> u32 {
        self.block_bytes
    }

    /// Blocks handed out since the last [`reset`](Self::reset).
    pub fn handed_out(&self) -> u32 {
        self.next.get()
    }

    /// The next block (bus address and size), or `None` when every block is in use.
    pub fn take(&self) -> Option<(BusAddress, u32)> {
        let n = self.next.get();
        if n >= self.blocks() {
            return None;
        }
        self.next.set(n + 1);
        let offset = u64::from(n) * u64::from(self.block_bytes);
        Some((BusAddress(self.base.0 + offset), self.block_bytes))
    }

    /// Every block free again.
    pub fn reset(&self) {
        self.next.set(0);
    }
}
