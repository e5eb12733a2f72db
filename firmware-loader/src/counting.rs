//! The register counter behind every upload report.

use core::cell::Cell;

use baregpu_hal::RegisterIo;

/// A [`RegisterIo`] that counts what passes through, so an upload report states what was done
/// rather than what was meant.
pub(crate) struct Counting<'a, IO> {
    io: &'a IO,
    /// Register reads so far.
    pub(crate) reads: Cell<usize>,
    /// Register writes so far.
    pub(crate) writes: Cell<usize>,
}

impl<'a, IO: RegisterIo> Counting<'a, IO> {
    pub(crate) fn new(io: &'a IO) -> Self {
        Counting { io, reads: Cell::new(0), writes: Cell::new(0) }
    }
}

impl<IO: RegisterIo> RegisterIo for Counting<'_, IO> {
    fn read32(&self, offset: usize) -> u32 {
        self.reads.set(self.reads.get() + 1);
        self.io.read32(offset)
    }
    fn write32(&self, offset: usize, value: u32) {
        self.writes.set(self.writes.get() + 1);
        self.io.write32(offset, value)
    }
}
