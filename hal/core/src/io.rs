//! Register access: the one trait drivers program against.
//!
//! [`RegisterIo`] moves raw 32-bit values at byte offsets of a device's register window. Real
//! hardware implements it with [`crate::MmioRegion`]; host tests implement it with an
//! in-process device model; the QEMU harness implements it with a mailbox to an out-of-process
//! model. Drivers never see which. [`RegisterIoExt`] adds typed access to the generated
//! registers, so a driver writes `io.modify::<CP_RB_CNTL>(|r| r.with_rb_no_update(true))` and
//! never an offset or a mask.
//!
//! # Bases
//!
//! Typed access checks where a register lives. A [`RegisterIo`] accepts only
//! [`Absolute`] registers. Registers of a block that exists once per engine or channel (the
//! falcon IO space, the PFIFO USER area) are reached through a [`BlockIo`] of one instance of
//! that block, which accepts only that block's registers:
//!
//! ```text
//! let pdaemon = bar0.at::<falcon::Pdaemon>();       // falcon IO space at 0x10a000
//! pdaemon.write(falcon::CODE_INDEX::RESET.with_write_autoincrement(true));
//! let user = bar0.at_index::<pfifo_user::UserG80>(3)?; // channel 3's USER area
//! // bar0.read::<falcon::CODE_INDEX>() does not compile: CODE_INDEX is not absolute.
//! ```
//!
//! (The generated instances live in `baregpu-regs`; its crate documentation has the compiled
//! examples and the `compile_fail` checks.)

use crate::register::{
    Absolute, Array, Base, Family, IndexOutOfRange, Instance, InstanceArray, Readable, Register,
    Scalar, Writable,
};
use core::fmt;
use core::marker::PhantomData;

/// 32-bit register access at byte offsets.
///
/// Accesses are performed in program order, each exactly once: implementations must not merge,
/// reorder or elide them (MMIO reads have side effects, e.g. FIFO pops or clear-on-read status).
///
/// # What an implementation must guarantee (porting guide)
///
/// - **One access per call**: a single 32-bit load or store at `offset` (never split into
///   bytes, never cached, never speculated). Over MMIO that means device memory: x86 UC
///   (page attributes PCD/PWT or an UC MTRR), Arm Device-nGnRE; [`MmioRegion`](crate::MmioRegion)
///   does the access, the mapping is the platform's.
/// - **Program order** between the accesses made through one `RegisterIo` (and the
///   [`BlockIo`]s derived from it); a read returns only after the device answered. Writes may
///   be posted (PCI semantics) as long as they reach the device in order and a later read
///   of the same device is not answered before them.
/// - **No ordering against normal memory is required**: where DMA memory and registers must be
///   ordered (buffer writes before a doorbell, a fence read before the data it guards) the
///   drivers call [`dma_wmb`](crate::barrier::dma_wmb) / [`dma_rmb`](crate::barrier::dma_rmb)
///   themselves.
/// - **An absent or failed device reads all-ones** (`0xFFFF_FFFF`) and drops writes, like a
///   PCI master abort; never panic or block without bound. Drivers report all-ones as
///   `DeviceGone`. Offsets come from the generated register types and are 4-byte aligned.
/// - **Callable from any context the driver is used in**, including interrupt handlers if the
///   driver's interrupt entry point is; `&self` access, so an implementation shared between CPUs
///   serialises itself (a plain `MmioRegion` needs nothing: each access is independent).
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

/// Typed register access: implemented by every [`RegisterIo`] (for [`Absolute`] registers) and
/// by [`BlockIo`] (for the registers of one block instance).
pub trait RegisterIoExt {
    /// The base kind of the registers this accepts.
    type Base: Base;
    /// The family whose registers this accepts: [`AnyFamily`] for a bare [`RegisterIo`], the
    /// driver's family for a [`FamilyIo`].
    type Family: 'static;
    /// The raw access underneath.
    type Io: RegisterIo + ?Sized;

    /// The raw access and the offset typed offsets are added to (0 for a [`RegisterIo`]).
    #[doc(hidden)]
    fn window(&self) -> (&Self::Io, usize);

    /// Read a register.
    fn read<R: Readable + Scalar + RegisterOf<Self>>(&self) -> R {
        let (io, base) = self.window();
        R::from_raw(io.read32(base + R::OFFSET))
    }

    /// Write a register.
    fn write<R: Writable + Scalar + RegisterOf<Self>>(&self, value: R) {
        let (io, base) = self.window();
        io.write32(base + R::OFFSET, value.to_raw())
    }

    /// Read-modify-write a register; returns the value written.
    fn modify<R: Readable + Writable + Scalar + RegisterOf<Self>>(
        &self,
        f: impl FnOnce(R) -> R,
    ) -> R {
        let value = f(self.read::<R>());
        self.write(value);
        value
    }

    /// Read instance `index` of a register array.
    fn read_at<R: Readable + Array + RegisterOf<Self>>(
        &self,
        index: usize,
    ) -> Result<R, IndexOutOfRange> {
        let (io, base) = self.window();
        Ok(R::from_raw(io.read32(base + R::offset_of(index)?)))
    }

    /// Write instance `index` of a register array.
    fn write_at<R: Writable + Array + RegisterOf<Self>>(
        &self,
        index: usize,
        value: R,
    ) -> Result<(), IndexOutOfRange> {
        let (io, base) = self.window();
        io.write32(base + R::offset_of(index)?, value.to_raw());
        Ok(())
    }

    /// Read instance `I` of a register array, `I` checked against the documented count at
    /// compile time (no `Result` to ignore for an index that cannot be out of range).
    fn read_nth<R: Readable + Array + RegisterOf<Self>, const I: usize>(&self) -> R {
        const { assert!(I < R::COUNT, "register array index out of range") };
        let (io, base) = self.window();
        R::from_raw(io.read32(base + R::OFFSET + I * R::STRIDE))
    }

    /// Write instance `I` of a register array, `I` checked against the documented count at
    /// compile time.
    fn write_nth<R: Writable + Array + RegisterOf<Self>, const I: usize>(&self, value: R) {
        const { assert!(I < R::COUNT, "register array index out of range") };
        let (io, base) = self.window();
        io.write32(base + R::OFFSET + I * R::STRIDE, value.to_raw());
    }

    /// Read-modify-write instance `index` of a register array; returns the value written.
    fn modify_at<R: Readable + Writable + Array + RegisterOf<Self>>(
        &self,
        index: usize,
        f: impl FnOnce(R) -> R,
    ) -> Result<R, IndexOutOfRange> {
        let value = f(self.read_at::<R>(index)?);
        self.write_at(index, value)?;
        Ok(value)
    }

    /// The registers of block instance `I` (a falcon engine): a view whose typed accesses take
    /// only registers of `I`'s block, at `I::BASE`.
    fn at<I: Instance>(&self) -> BlockIo<&Self::Io, I::Block>
    where
        Self: RegisterIoExt<Base = Absolute>,
        Self::Family: Accepts<I::Family>,
    {
        let (io, base) = self.window();
        BlockIo::new(io, base + I::BASE)
    }

    /// The registers of instance `index` of `A` (channel `index`'s USER area), or an error if
    /// the index is not valid.
    fn at_index<A: InstanceArray>(
        &self,
        index: usize,
    ) -> Result<BlockIo<&Self::Io, A::Block>, IndexOutOfRange>
    where
        Self: RegisterIoExt<Base = Absolute>,
        Self::Family: Accepts<A::Family>,
    {
        let (io, base) = self.window();
        Ok(BlockIo::new(io, base + A::base_of(index)?))
    }
}

impl<T: RegisterIo + ?Sized> RegisterIoExt for T {
    type Base = Absolute;
    type Family = AnyFamily;
    type Io = T;

    #[inline(always)]
    fn window(&self) -> (&T, usize) {
        (self, 0)
    }
}

/// A register that window `W` accepts: its base is `W`'s, and its family is `W`'s (a
/// [`FamilyIo`]) or any (a bare [`RegisterIo`]). Implemented for every such register; the bound
/// of [`RegisterIoExt`]'s typed accesses.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a register of this register window's family and base",
    label = "another family's register, or a block register on the whole window",
    note = "a `FamilyIo<F, _>` (a driver's BAR) takes only registers whose `Register::Family` is `F`"
)]
pub trait RegisterOf<W: RegisterIoExt + ?Sized>: Register<Base = W::Base> {}

impl<W, R> RegisterOf<W> for R
where
    W: RegisterIoExt + ?Sized,
    R: Register<Base = W::Base>,
    W::Family: Accepts<R::Family>,
{
}

/// Whether a window typed by `Self` (a [`Family`] marker, or [`AnyFamily`]) takes registers of
/// family `F`: a family takes its own, [`AnyFamily`] takes all.
pub trait Accepts<F: Family> {}

impl<F: Family> Accepts<F> for F {}

impl<F: Family> Accepts<F> for AnyFamily {}

/// The family of a window not bound to one (a bare [`RegisterIo`], a [`BlockIo`], whose block
/// marker is one family's already): typed accesses take any family's registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnyFamily {}

/// A register window bound to GPU family `F`: typed accesses take only `F`'s registers, so a
/// driver holding `FamilyIo<r5xx::Family, _>` cannot read or write an Evergreen register on
/// its BAR (it does not compile). It is not a [`RegisterIo`] itself (that would give it
/// untyped family-free access again); [`raw`](Self::raw) is the explicit way down.
///
/// ```
/// use baregpu_hal::io::{FamilyIo, RegisterIo, RegisterIoExt};
/// # use baregpu_hal::register::{Absolute, Family, Readable, Register, Scalar, Writable};
/// # enum Gpu {}
/// # impl Family for Gpu { const NAME: &'static str = "gpu"; type Chipset = u8; }
/// # #[derive(Clone, Copy)] struct SCRATCH(u32);
/// # impl Register for SCRATCH {
/// #     type Family = Gpu; type Base = Absolute; const NAME: &'static str = "SCRATCH";
/// #     const OFFSET: usize = 0x10; const WRITE_MASK: u32 = !0; const RESET_RAW: u32 = 0;
/// #     fn from_raw(raw: u32) -> Self { SCRATCH(raw) } fn to_raw(self) -> u32 { self.0 }
/// # }
/// # impl Readable for SCRATCH {} impl Writable for SCRATCH {} impl Scalar for SCRATCH {}
/// # struct Bus(core::cell::Cell<u32>);
/// # impl RegisterIo for Bus {
/// #     fn read32(&self, _: usize) -> u32 { self.0.get() }
/// #     fn write32(&self, _: usize, v: u32) { self.0.set(v) }
/// # }
/// let bar = FamilyIo::<Gpu, _>::new(Bus(Default::default()));
/// bar.write(SCRATCH(7));
/// assert_eq!(bar.read::<SCRATCH>().0, 7);
/// ```
///
/// The generated registers carry their family; the compile-time check with two real families
/// is in `baregpu-regs` (an R5xx window rejects Evergreen's `CP_RB_CNTL`).
pub struct FamilyIo<F, IO> {
    io: IO,
    family: PhantomData<fn() -> F>,
}

impl<F: Family, IO: RegisterIo> FamilyIo<F, IO> {
    /// Bind register window `io` to family `F` (what a driver does with the BAR it is given).
    pub const fn new(io: IO) -> Self {
        FamilyIo { io, family: PhantomData }
    }

    /// The untyped register window underneath (raw 32-bit access, any family's registers).
    pub const fn raw(&self) -> &IO {
        &self.io
    }

    /// Give the register window back.
    pub fn into_inner(self) -> IO {
        self.io
    }
}

impl<F: Family, IO: RegisterIo> RegisterIoExt for FamilyIo<F, IO> {
    type Base = Absolute;
    type Family = F;
    type Io = IO;

    #[inline(always)]
    fn window(&self) -> (&IO, usize) {
        (&self.io, 0)
    }
}

impl<F, IO: Clone> Clone for FamilyIo<F, IO> {
    fn clone(&self) -> Self {
        FamilyIo { io: self.io.clone(), family: PhantomData }
    }
}

impl<F, IO: Copy> Copy for FamilyIo<F, IO> {}

impl<F: Family, IO: fmt::Debug> fmt::Debug for FamilyIo<F, IO> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FamilyIo").field("family", &F::NAME).field("io", &self.io).finish()
    }
}

/// The registers of one instance of block `B`, at `base` in `io`'s register window (see
/// [`RegisterIoExt::at`]). Typed accesses take only registers whose base is `B`.
pub struct BlockIo<IO, B> {
    io: IO,
    base: usize,
    block: PhantomData<fn() -> B>,
}

impl<IO: RegisterIo, B: Base> BlockIo<IO, B> {
    /// A view of block `B` at `base` in `io`'s register window. Prefer
    /// [`RegisterIoExt::at`]/[`at_index`](RegisterIoExt::at_index), which take the base from
    /// the register database; this is for an instance the database does not list.
    pub const fn new(io: IO, base: usize) -> Self {
        BlockIo { io, base, block: PhantomData }
    }

    /// Offset of the instance in the register window.
    pub const fn base(&self) -> usize {
        self.base
    }

    /// The register window underneath.
    pub const fn io(&self) -> &IO {
        &self.io
    }

    /// Read the raw 32-bit value at byte `offset` of the instance (for registers the database
    /// does not describe, such as engine-specific falcon IO registers).
    pub fn read32(&self, offset: usize) -> u32 {
        self.io.read32(self.base + offset)
    }

    /// Write the raw 32-bit value at byte `offset` of the instance.
    pub fn write32(&self, offset: usize, value: u32) {
        self.io.write32(self.base + offset, value)
    }
}

impl<IO: RegisterIo, B: Base> RegisterIoExt for BlockIo<IO, B> {
    type Base = B;
    // A block's registers are its family's already (the block marker is generated per family).
    type Family = AnyFamily;
    type Io = IO;

    #[inline(always)]
    fn window(&self) -> (&IO, usize) {
        (&self.io, self.base)
    }
}

impl<IO: Clone, B> Clone for BlockIo<IO, B> {
    fn clone(&self) -> Self {
        BlockIo { io: self.io.clone(), base: self.base, block: PhantomData }
    }
}

impl<IO: Copy, B> Copy for BlockIo<IO, B> {}

impl<IO, B: Base> fmt::Debug for BlockIo<IO, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BlockIo({} at {:#x})", B::NAME, self.base)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::register::{Chipsets, Family};
    use core::cell::RefCell;

    /// Records writes as (offset, value).
    #[derive(Default)]
    struct Bus(RefCell<[(usize, u32); 4]>, RefCell<usize>);

    impl RegisterIo for Bus {
        fn read32(&self, offset: usize) -> u32 {
            offset as u32
        }
        fn write32(&self, offset: usize, value: u32) {
            let n = *self.1.borrow();
            self.0.borrow_mut()[n] = (offset, value);
            *self.1.borrow_mut() = n + 1;
        }
    }

    enum Fam {}
    impl Family for Fam {
        const NAME: &'static str = "test";
        type Chipset = u8;
    }
    enum Engine {}
    impl Base for Engine {
        const NAME: &'static str = "ENGINE";
    }
    /// One engine at 0x1000.
    struct E0;
    impl Instance for E0 {
        type Family = Fam;
        type Block = Engine;
        const NAME: &'static str = "E0";
        const BASE: usize = 0x1000;
        const CHIPSETS: Chipsets<u8> = Chipsets::All;
    }
    /// Channels 1..=3 at 0x8000 + i * 0x100.
    struct Channels;
    impl InstanceArray for Channels {
        type Family = Fam;
        type Block = Engine;
        const NAME: &'static str = "CHANNELS";
        const BASE: usize = 0x8000;
        const FIRST: usize = 1;
        const COUNT: usize = 3;
        const STRIDE: usize = 0x100;
        const CHIPSETS: Chipsets<u8> = Chipsets::All;
    }
    /// A register of the engine block at offset 0x10.
    #[derive(Clone, Copy)]
    struct Ctl(u32);
    impl Register for Ctl {
        type Family = Fam;
        type Base = Engine;
        const NAME: &'static str = "CTL";
        const OFFSET: usize = 0x10;
        const WRITE_MASK: u32 = u32::MAX;
        const RESET_RAW: u32 = 0;
        fn from_raw(raw: u32) -> Self {
            Ctl(raw)
        }
        fn to_raw(self) -> u32 {
            self.0
        }
    }
    impl Readable for Ctl {}
    impl Writable for Ctl {}
    impl Scalar for Ctl {}

    /// Four instances of a register of the engine block, 8 bytes apart from 0x20.
    #[derive(Clone, Copy)]
    struct Slot(u32);
    impl Register for Slot {
        type Family = Fam;
        type Base = Engine;
        const NAME: &'static str = "SLOT";
        const OFFSET: usize = 0x20;
        const WRITE_MASK: u32 = u32::MAX;
        const RESET_RAW: u32 = 0;
        fn from_raw(raw: u32) -> Self {
            Slot(raw)
        }
        fn to_raw(self) -> u32 {
            self.0
        }
    }
    impl Readable for Slot {}
    impl Writable for Slot {}
    impl Array for Slot {
        const COUNT: usize = 4;
        const STRIDE: usize = 8;
    }

    #[test]
    fn constant_array_indices_reach_the_same_instance_as_checked_ones() {
        let bus = Bus::default();
        let e0 = bus.at::<E0>();
        e0.write_nth::<Slot, 3>(Slot(5));
        e0.write_at(3, Slot(6)).unwrap();
        assert_eq!(bus.0.borrow()[..2], [(0x1038, 5), (0x1038, 6)]);
        assert_eq!(e0.read_nth::<Slot, 1>().0, 0x1028, "the read reached base + 0x20 + 8");
    }

    #[test]
    fn block_views_add_the_instance_base_to_typed_accesses() {
        let bus = Bus::default();
        let e0 = bus.at::<E0>();
        assert_eq!(e0.base(), 0x1000);
        e0.write(Ctl(7));
        assert_eq!(e0.read::<Ctl>().0, 0x1010, "the read reached base + offset");
        bus.at_index::<Channels>(3).unwrap().write(Ctl(9));
        assert_eq!(bus.0.borrow()[..2], [(0x1010, 7), (0x8000 + 3 * 0x100 + 0x10, 9)]);
        let e = bus.at_index::<Channels>(4).unwrap_err();
        assert_eq!((e.register, e.index, e.first, e.count), ("CHANNELS", 4, 1, 3));
        assert!(bus.at_index::<Channels>(0).is_err(), "index 0 is below FIRST");
    }
}
