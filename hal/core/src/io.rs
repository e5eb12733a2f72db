//! Register access: the one trait drivers program against.
//!
//! [`RegisterIo`] moves raw 32-bit values at byte offsets. Real hardware implements it with
//! [`crate::MmioRegion`]; host tests implement it with an in-process device model; the QEMU
//! harness implements it with a mailbox to an out-of-process model. Drivers never see which.
//! [`RegisterIoExt`] adds typed access to the generated registers, so a driver writes
//! `io.modify::<CP_RB_CNTL>(|r| r.with_rb_no_update(true))` and never an offset or a mask.

use crate::register::{Array, IndexOutOfRange, Readable, Scalar, Writable};

/// 32-bit register access at byte offsets.
///
/// Accesses are performed in program order, each exactly once: implementations must not merge,
/// reorder or elide them (MMIO reads have side effects, e.g. FIFO pops or clear-on-read status).
pub trait RegisterIo {
    /// Read the 32-bit register at byte `offset`.
    fn read32(&self, offset: usize) -> u32;
    /// Write the 32-bit register at byte `offset`.
    fn write32(&self, offset: usize, value: u32);
}

impl<T: RegisterIo + ?Sized> RegisterIo for &T {
    fn read32(&self, offset: usize) -> u32 {
        (**self).read32(offset)
    }
    fn write32(&self, offset: usize, value: u32) {
        (**self).write32(offset, value)
    }
}

/// Typed register access over any [`RegisterIo`].
pub trait RegisterIoExt: RegisterIo {
    /// Read a register.
    fn read<R: Readable + Scalar>(&self) -> R {
        R::from_raw(self.read32(R::OFFSET))
    }

    /// Write a register.
    fn write<R: Writable + Scalar>(&self, value: R) {
        self.write32(R::OFFSET, value.to_raw())
    }

    /// Read-modify-write a register; returns the value written.
    fn modify<R: Readable + Writable + Scalar>(&self, f: impl FnOnce(R) -> R) -> R {
        let value = f(self.read::<R>());
        self.write(value);
        value
    }

    /// Read instance `index` of a register array.
    fn read_at<R: Readable + Array>(&self, index: usize) -> Result<R, IndexOutOfRange> {
        Ok(R::from_raw(self.read32(R::offset_of(index)?)))
    }

    /// Write instance `index` of a register array.
    fn write_at<R: Writable + Array>(&self, index: usize, value: R) -> Result<(), IndexOutOfRange> {
        self.write32(R::offset_of(index)?, value.to_raw());
        Ok(())
    }

    /// Read-modify-write instance `index` of a register array; returns the value written.
    fn modify_at<R: Readable + Writable + Array>(
        &self,
        index: usize,
        f: impl FnOnce(R) -> R,
    ) -> Result<R, IndexOutOfRange> {
        let value = f(self.read_at::<R>(index)?);
        self.write_at(index, value)?;
        Ok(value)
    }

    /// A view whose offsets are relative to `base`: for blocks that exist once per engine or
    /// channel (falcon IO space, PFIFO channel USER area, V3D on different Pi models).
    fn at(&self, base: usize) -> Relative<&Self> {
        Relative { io: self, base }
    }
}

impl<T: RegisterIo + ?Sized> RegisterIoExt for T {}

/// Register access shifted by a base offset (see [`RegisterIoExt::at`]).
#[derive(Debug, Clone, Copy)]
pub struct Relative<IO> {
    io: IO,
    base: usize,
}

impl<IO: RegisterIo> Relative<IO> {
    /// A view of `io` whose offset 0 is `base`.
    pub const fn new(io: IO, base: usize) -> Self {
        Relative { io, base }
    }

    /// The base offset.
    pub const fn base(&self) -> usize {
        self.base
    }
}

impl<IO: RegisterIo> RegisterIo for Relative<IO> {
    fn read32(&self, offset: usize) -> u32 {
        self.io.read32(self.base + offset)
    }
    fn write32(&self, offset: usize, value: u32) {
        self.io.write32(self.base + offset, value)
    }
}
