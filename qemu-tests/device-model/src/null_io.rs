//! A register interface that can be cut off from its device: the floor for measuring a
//! driver's own cost apart from the emulator (the drivers' criterion benches).

use core::cell::Cell;

use baregpu_hal::RegisterIo;

/// Forwards to `io` (bring-up runs against the real model) until [`go_null`](Self::go_null);
/// from then on reads return 0 and writes are dropped and counted.
pub struct NullAfterInit<IO> {
    io: IO,
    null: Cell<bool>,
    dropped: Cell<u64>,
}

impl<IO: RegisterIo> NullAfterInit<IO> {
    /// Forwarding to `io`.
    pub fn new(io: IO) -> Self {
        NullAfterInit { io, null: Cell::new(false), dropped: Cell::new(0) }
    }

    /// Cut the device off.
    pub fn go_null(&self) {
        self.null.set(true);
    }

    /// Writes dropped since [`go_null`](Self::go_null).
    pub fn dropped(&self) -> u64 {
        self.dropped.get()
    }
}

impl<IO: RegisterIo> RegisterIo for NullAfterInit<IO> {
    fn read32(&self, offset: usize) -> u32 {
        if self.null.get() { 0 } else { self.io.read32(offset) }
    }
    fn write32(&self, offset: usize, value: u32) {
        if self.null.get() {
            self.dropped.set(self.dropped.get() + 1);
        } else {
            self.io.write32(offset, value)
        }
    }
}
