//! DMA-able memory: a CPU pointer and the bus address the device uses for the same bytes.

use core::fmt;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicU32, Ordering};

/// An address as a bus master (the GPU) sees it. Not a CPU pointer: on the Pi the bus address
/// of RAM differs from its ARM physical address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct BusAddress(pub u64);

impl BusAddress {
    /// The address `bytes` further on, or `None` if that passes the top of the 64-bit bus
    /// space. (There is deliberately no unchecked `offset`: bus addresses come from
    /// allocators and device fields, and a wrapped sum would name unrelated memory.)
    pub const fn checked_offset(self, bytes: u64) -> Option<BusAddress> {
        match self.0.checked_add(bytes) {
            Some(a) => Some(BusAddress(a)),
            None => None,
        }
    }

    /// Whether the `bytes` bytes starting here end at or below `limit` (exclusive end
    /// address, e.g. `1 << 32` for a 32-bit address field); `false` if the end overflows.
    pub const fn fits_below(self, bytes: u64, limit: u64) -> bool {
        match self.0.checked_add(bytes) {
            Some(end) => end <= limit,
            None => false,
        }
    }
    /// Low 32 bits.
    pub const fn low(self) -> u32 {
        self.0 as u32
    }
    /// High 32 bits.
    pub const fn high(self) -> u32 {
        (self.0 >> 32) as u32
    }
}

impl fmt::Display for BusAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bus:{:#x}", self.0)
    }
}

/// Size, alignment and addressing limit of a DMA allocation.
///
/// Built by [`new`](Self::new), which checks the size and the power-of-two alignment (a
/// literal could bypass the check, so there is none: the type is non-exhaustive).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct DmaLayout {
    /// Bytes.
    pub size: usize,
    /// Alignment of the bus address (a power of two), e.g. 4 KiB for a ring base.
    pub align: usize,
    /// Highest bus address the device can reach (inclusive), e.g. `u32::MAX` for 32-bit masters.
    pub max_address: u64,
}

impl DmaLayout {
    /// `size` bytes aligned to `align`, anywhere in a 32-bit bus space.
    pub const fn new(size: usize, align: usize) -> Result<Self, DmaError> {
        if size == 0 {
            return Err(DmaError::ZeroSize);
        }
        if !align.is_power_of_two() {
            return Err(DmaError::BadAlignment(align));
        }
        Ok(DmaLayout { size, align, max_address: u32::MAX as u64 })
    }

    /// The same layout with another addressing limit.
    pub const fn with_max_address(self, max_address: u64) -> Self {
        DmaLayout { max_address, ..self }
    }
}

/// Why a DMA allocation or access failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum DmaError {
    /// A zero-byte allocation was requested.
    ZeroSize,
    /// The alignment is not a power of two.
    BadAlignment(usize),
    /// No free memory satisfies the layout.
    OutOfMemory,
    /// An access at `offset` of `len` bytes does not fit a region of `size` bytes, or is not
    /// aligned to its element size.
    OutOfBounds {
        /// Byte offset of the access.
        offset: usize,
        /// Bytes accessed.
        len: usize,
        /// Region size.
        size: usize,
    },
}

impl fmt::Display for DmaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DmaError::ZeroSize => write!(f, "zero-sized DMA allocation"),
            DmaError::BadAlignment(a) => write!(f, "DMA alignment {a} is not a power of two"),
            DmaError::OutOfMemory => write!(f, "no DMA memory left for the request"),
            DmaError::OutOfBounds { offset, len, size } => {
                write!(
                    f,
                    "DMA access of {len} bytes at {offset} outside a {size}-byte region or misaligned"
                )
            }
        }
    }
}

impl core::error::Error for DmaError {}

/// A block of memory both the CPU and a device access.
///
/// The device may read or write it at any time, so every CPU access is one relaxed 32-bit
/// atomic load or store through a raw pointer: never a plain read or write, never a reference
/// to the bytes. Real DMA memory is outside the Rust memory model; the atomics make the
/// in-process models (which write the same bytes from the device side, possibly from another
/// thread) race-free as well, which Miri checks. Ordering against the device is the job of
/// [`crate::barrier`]. Accesses are bounds-checked.
#[derive(Debug)]
pub struct DmaRegion {
    cpu: NonNull<u8>,
    bus: BusAddress,
    size: usize,
}

// SAFETY: the region owns its memory; every access is a 32-bit atomic operation through a raw
// pointer, valid from any thread and race-free against a device model doing the same.
unsafe impl Send for DmaRegion {}

impl DmaRegion {
    /// Wrap memory an allocator handed out.
    ///
    /// # Safety
    /// `cpu..cpu + size` must be valid for reads and writes, owned by the returned region until
    /// it is given back to its allocator, 4-byte aligned, and visible to the device at `bus`
    /// (coherent, or kept coherent by the allocator's platform).
    pub const unsafe fn from_raw_parts(cpu: NonNull<u8>, bus: BusAddress, size: usize) -> Self {
        DmaRegion { cpu, bus, size }
    }

    /// A second handle to the same memory, for [`DmaBuffer`]'s hand-back: the caller forgets
    /// or drops (no destructor) one of the two before the memory is given back.
    const fn duplicate(&self) -> DmaRegion {
        DmaRegion { cpu: self.cpu, bus: self.bus, size: self.size }
    }

    /// Bus address of byte 0.
    pub const fn bus_address(&self) -> BusAddress {
        self.bus
    }

    /// CPU address of byte 0 (for handing back to the allocator, or for logging).
    pub const fn cpu_ptr(&self) -> NonNull<u8> {
        self.cpu
    }

    /// Size in bytes.
    pub const fn size(&self) -> usize {
        self.size
    }

    /// Check that `len` bytes at `offset` lie inside the region and are dword-aligned.
    #[inline]
    fn check(&self, offset: usize, len: usize) -> Result<(), DmaError> {
        let fits = offset.checked_add(len).is_some_and(|end| end <= self.size);
        if fits && offset.is_multiple_of(4) {
            Ok(())
        } else {
            Err(DmaError::OutOfBounds { offset, len, size: self.size })
        }
    }

    #[inline]
    fn word(&self, offset: usize) -> Result<&AtomicU32, DmaError> {
        self.check(offset, 4)?;
        // SAFETY: in bounds (checked above) of memory the constructor's contract keeps valid.
        let ptr = unsafe { self.cpu.add(offset) }.cast::<u32>();
        // SAFETY: aligned (region and offset are 4-byte aligned), valid for `&self`, and only
        // ever accessed atomically by this region and by device models (see the type docs).
        Ok(unsafe { AtomicU32::from_ptr(ptr.as_ptr()) })
    }

    /// `count` consecutive dwords from byte `offset` as atomics, checked once: a run of stores
    /// (a command-ring packet) pays one bounds check, not one per dword. Relaxed loads and
    /// stores on them are the same accesses [`read_u32`](Self::read_u32) and
    /// [`write_u32`](Self::write_u32) make.
    #[inline(always)]
    pub fn words(&self, offset: usize, count: usize) -> Result<&[AtomicU32], DmaError> {
        let len = count.saturating_mul(4);
        self.check(offset, len)?;
        // SAFETY: `len` bytes from `offset` are in bounds (checked above) of memory the
        // constructor's contract keeps valid for `&self`; 4-byte aligned (region and offset);
        // `AtomicU32` has `u32`'s layout and the words are only ever accessed atomically by
        // this region and by device models (see the type docs), as in `word`.
        Ok(unsafe {
            core::slice::from_raw_parts(self.cpu.add(offset).cast::<AtomicU32>().as_ptr(), count)
        })
    }

    /// Read the dword at byte `offset`.
    #[inline]
    pub fn read_u32(&self, offset: usize) -> Result<u32, DmaError> {
        Ok(self.word(offset)?.load(Ordering::Relaxed))
    }

    /// Write the dword at byte `offset`.
    #[inline]
    pub fn write_u32(&self, offset: usize, value: u32) -> Result<(), DmaError> {
        self.word(offset)?.store(value, Ordering::Relaxed);
        Ok(())
    }

    /// Write consecutive dwords starting at byte `offset`; nothing is written if they don't fit.
    #[inline]
    pub fn write_slice(&self, offset: usize, words: &[u32]) -> Result<(), DmaError> {
        for (slot, &w) in self.words(offset, words.len())?.iter().zip(words) {
            slot.store(w, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Read consecutive dwords starting at byte `offset` into `out`.
    #[inline]
    pub fn read_slice(&self, offset: usize, out: &mut [u32]) -> Result<(), DmaError> {
        let words = self.words(offset, out.len())?;
        for (w, slot) in out.iter_mut().zip(words) {
            *w = slot.load(Ordering::Relaxed);
        }
        Ok(())
    }

    /// Set every byte to zero.
    pub fn zero(&self) {
        for offset in (0..self.size & !3).step_by(4) {
            let _ = self.write_u32(offset, 0);
        }
    }
}

/// A source of DMA memory: the test kernel's identity-mapped allocator, a hobby OS's page
/// allocator, or a host test's shared buffer.
///
/// Drivers allocate through [`DmaBuffer::allocate`], which gives the memory back on drop; the
/// two methods here are what an allocator implements.
///
/// # What an implementation must guarantee (porting guide)
///
/// - **Placement**: `layout.size` bytes whose *bus* address is aligned to `layout.align` and
///   ends at or below `layout.max_address` (32-bit masters: `u32::MAX`); the CPU pointer and the
///   bus address name the same bytes (on the Pi the bus address is the VideoCore alias of the
///   ARM physical address; behind an IOMMU it is the IOVA). Physically contiguous: the device
///   walks the range linearly.
/// - **Coherence, no cache maintenance**: the drivers access DMA memory only through
///   [`DmaRegion`]'s 32-bit accessors and order it with [`dma_wmb`](crate::barrier::dma_wmb) /
///   [`dma_rmb`](crate::barrier::dma_rmb); they never clean or invalidate caches. So the memory
///   must be coherent with the device as mapped: on x86 and on PCIe with snooping, normal
///   write-back RAM is; on a non-coherent platform (the Raspberry Pi's VideoCore, most Arm
///   SoCs without an ACE/CHI port for the GPU) map it Normal Non-cacheable (or Device) for the
///   CPU, as Linux's `dma_alloc_coherent` does. The regions are small (rings, write-back
///   words, command buffers), so uncached costs little.
/// - **Contents**: need not be zeroed. The drivers zero what the device reads before they write
///   it (write-back words, CTM buffers) and write every ring dword before committing it.
/// - **Context**: called from the driver's set-up and teardown paths (`init`, the ring and IB
///   tests, CTM buffer set-up and release, `shutdown`), never from submit, wait or interrupt
///   handling; it need not be usable in interrupt context. `&self`: use interior mutability,
///   and a lock if the allocator is shared between CPUs.
/// - **Failure**: return [`DmaError`] (typically `OutOfMemory`) and never panic; the drivers
///   give back what they already allocated and report the error.
pub trait DmaAllocator {
    /// Allocate memory satisfying `layout`.
    fn allocate(&self, layout: DmaLayout) -> Result<DmaRegion, DmaError>;
    /// Return memory from [`allocate`](Self::allocate): `region` is exactly the region it
    /// returned (same CPU pointer, bus address and size; never split or resized), given back
    /// once, after the device was stopped from accessing it (ring stopped, or the wait for
    /// its use completed). A region whose device use could not be confirmed finished (a
    /// timed-out ring test) is leaked, never deallocated.
    fn deallocate(&self, region: DmaRegion);
}

/// DMA memory owned until dropped: a [`DmaRegion`] and the allocator it came from, given back
/// to that allocator when the buffer goes out of scope (also on every early return of an error
/// path). No `alloc` needed: the buffer borrows its allocator for `'a`.
///
/// Dereferences to the region. Drop it only once the device no longer accesses the memory
/// (after the fence of the last command that used it, or with the engine stopped);
/// [`into_raw`](Self::into_raw) is the escape hatch for memory a device may still touch (it is
/// then never given back, unless the caller does so with [`DmaAllocator::deallocate`]).
pub struct DmaBuffer<'a, A: DmaAllocator + ?Sized> {
    allocator: &'a A,
    region: DmaRegion,
}

impl<'a, A: DmaAllocator + ?Sized> DmaBuffer<'a, A> {
    /// Allocate memory satisfying `layout` from `allocator`.
    pub fn allocate(allocator: &'a A, layout: DmaLayout) -> Result<Self, DmaError> {
        Ok(DmaBuffer { region: allocator.allocate(layout)?, allocator })
    }

    /// Take ownership of `region`, which `allocator` handed out and nothing else frees.
    pub fn adopt(allocator: &'a A, region: DmaRegion) -> Self {
        DmaBuffer { allocator, region }
    }

    /// The allocator the memory goes back to.
    pub fn allocator(&self) -> &'a A {
        self.allocator
    }

    /// Give up ownership without freeing: the region stays allocated (leaked unless the caller
    /// hands it to the allocator's [`deallocate`](DmaAllocator::deallocate)). For memory a
    /// device may still access, e.g. an indirect buffer whose fetch timed out.
    pub fn into_raw(self) -> DmaRegion {
        let region = self.region.duplicate();
        core::mem::forget(self);
        region
    }
}

impl<A: DmaAllocator + ?Sized> core::ops::Deref for DmaBuffer<'_, A> {
    type Target = DmaRegion;
    fn deref(&self) -> &DmaRegion {
        &self.region
    }
}

impl<A: DmaAllocator + ?Sized> core::borrow::Borrow<DmaRegion> for DmaBuffer<'_, A> {
    fn borrow(&self) -> &DmaRegion {
        &self.region
    }
}

impl<A: DmaAllocator + ?Sized> fmt::Debug for DmaBuffer<'_, A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("DmaBuffer").field(&self.region).finish()
    }
}

impl<A: DmaAllocator + ?Sized> Drop for DmaBuffer<'_, A> {
    fn drop(&mut self) {
        // The buffer's own handle is dropped right after (a `DmaRegion` has no destructor), so
        // the memory is given back exactly once.
        self.allocator.deallocate(self.region.duplicate());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_rejects_zero_size_and_non_power_of_two_alignment() {
        assert_eq!(DmaLayout::new(0, 4), Err(DmaError::ZeroSize));
        assert_eq!(DmaLayout::new(64, 12), Err(DmaError::BadAlignment(12)));
        let l = DmaLayout::new(4096, 4096).unwrap();
        assert_eq!(l.max_address, u64::from(u32::MAX));
    }

    #[test]
    fn region_accesses_are_bounds_checked_and_all_or_nothing() {
        let mut backing = [0u32; 4];
        let cpu = NonNull::from(&mut backing).cast::<u8>();
        // SAFETY: `backing` outlives the region and is only accessed through it.
        let r = unsafe { DmaRegion::from_raw_parts(cpu, BusAddress(0x1000), 16) };
        r.write_u32(12, 5).unwrap();
        assert_eq!(r.read_u32(12), Ok(5));
        assert!(matches!(r.write_u32(16, 1), Err(DmaError::OutOfBounds { offset: 16, .. })));
        assert!(r.read_u32(2).is_err());
        // Three words at offset 8 do not fit: nothing is written.
        assert!(r.write_slice(8, &[1, 2, 3]).is_err());
        assert_eq!(r.read_u32(8), Ok(0));
        r.write_slice(0, &[9, 8]).unwrap();
        let mut out = [0; 4];
        r.read_slice(0, &mut out).unwrap();
        assert_eq!(out, [9, 8, 0, 5]);
        assert_eq!(r.bus_address().checked_offset(8), Some(BusAddress(0x1008)));
        r.zero();
        r.read_slice(0, &mut out).unwrap();
        assert_eq!(out, [0; 4]);
    }

    #[test]
    fn a_run_of_words_is_checked_once_and_reaches_the_same_memory() {
        let mut backing = [0u32; 4];
        let cpu = NonNull::from(&mut backing).cast::<u8>();
        // SAFETY: `backing` outlives the region and is only accessed through it.
        let r = unsafe { DmaRegion::from_raw_parts(cpu, BusAddress(0x1000), 16) };
        let run = r.words(4, 3).unwrap();
        run[2].store(7, Ordering::Relaxed);
        assert_eq!(r.read_u32(12), Ok(7), "word 2 of a run from byte 4 is byte 12");
        assert_eq!(r.words(16, 0).map(<[_]>::len), Ok(0), "an empty run at the end");
        let too_long = r.words(4, 4).unwrap_err();
        assert_eq!(too_long, DmaError::OutOfBounds { offset: 4, len: 16, size: 16 });
        assert!(r.words(2, 1).is_err(), "misaligned");
        assert!(r.words(0, usize::MAX).is_err(), "a count whose byte length overflows");
    }

    /// An allocator over one 64-byte array that records what it gets back.
    struct Recorder {
        backing: core::cell::UnsafeCell<[u32; 16]>,
        allocated: core::cell::Cell<usize>,
        freed: core::cell::RefCell<[Option<u64>; 4]>,
    }

    impl Recorder {
        fn new() -> Self {
            Recorder {
                backing: core::cell::UnsafeCell::new([0; 16]),
                allocated: core::cell::Cell::new(0),
                freed: core::cell::RefCell::new([None; 4]),
            }
        }
        fn freed(&self) -> usize {
            self.freed.borrow().iter().flatten().count()
        }
    }

    impl DmaAllocator for Recorder {
        fn allocate(&self, layout: DmaLayout) -> Result<DmaRegion, DmaError> {
            // Four 16-byte slots, handed out in order.
            let slot = self.allocated.get();
            if layout.size > 16 || slot >= 4 {
                return Err(DmaError::OutOfMemory);
            }
            self.allocated.set(slot + 1);
            let base = NonNull::new(self.backing.get().cast::<u8>()).unwrap();
            // SAFETY: slot `slot` (16 bytes, 4-byte aligned) of the backing array is handed out
            // once and only accessed through the region.
            let cpu = unsafe { base.add(16 * slot) };
            // SAFETY: see above; the array outlives every region of this test.
            Ok(unsafe { DmaRegion::from_raw_parts(cpu, BusAddress(0x1000 * slot as u64), 16) })
        }
        fn deallocate(&self, region: DmaRegion) {
            let slot = (region.bus_address().0 / 0x1000) as usize;
            let mut freed = self.freed.borrow_mut();
            assert!(freed[slot].is_none(), "slot {slot} freed twice");
            freed[slot] = Some(region.bus_address().0);
        }
    }

    #[test]
    fn buffers_give_their_memory_back_once_on_drop_and_never_after_into_raw() {
        let dma = Recorder::new();
        let layout = DmaLayout::new(16, 4).unwrap();
        {
            let a = DmaBuffer::allocate(&dma, layout).unwrap();
            a.write_u32(4, 7).unwrap();
            assert_eq!(a.read_u32(4), Ok(7), "derefs to its region");
            assert_eq!(dma.freed(), 0);
        }
        assert_eq!(*dma.freed.borrow(), [Some(0), None, None, None], "dropped: freed once");
        let kept = DmaBuffer::allocate(&dma, layout).unwrap().into_raw();
        assert_eq!(dma.freed(), 1, "into_raw keeps the memory allocated");
        assert_eq!(kept.bus_address(), BusAddress(0x1000));
        let adopted = DmaBuffer::adopt(&dma, kept);
        drop(adopted);
        assert_eq!(dma.freed.borrow()[1], Some(0x1000), "an adopted region is freed on drop");
        // An early return on an error path frees what was allocated before it.
        let two = || -> Result<(), DmaError> {
            let _first = DmaBuffer::allocate(&dma, layout)?;
            let _second = DmaBuffer::allocate(&dma, DmaLayout::new(64, 4)?)?;
            Ok(())
        };
        assert_eq!(two(), Err(DmaError::OutOfMemory));
        assert_eq!(dma.freed(), 3, "the first buffer was given back when the second failed");
    }

    /// The top of each width a bus address or address field holds (32-bit CP registers,
    /// 40-bit masters, the 64-bit bus) minus `below`.
    fn near_top() -> impl proptest::strategy::Strategy<Value = u64> {
        use proptest::prelude::*;
        (prop_oneof![Just(32u32), Just(40), Just(64)], 0u64..=4096).prop_map(|(width, below)| {
            let top = if width == 64 { u64::MAX } else { (1u64 << width) - 1 };
            top - below
        })
    }

    proptest::proptest! {
        /// `checked_offset` is the exact sum or `None`, never a wrapped address, and
        /// `fits_below` agrees with it.
        #[test]
        fn offsets_near_the_top_are_exact_or_refused(a in near_top(), bytes in 0u64..=8192) {
            let sum = u128::from(a) + u128::from(bytes);
            match BusAddress(a).checked_offset(bytes) {
                Some(b) => proptest::prop_assert_eq!(u128::from(b.0), sum),
                None => proptest::prop_assert!(sum > u128::from(u64::MAX)),
            }
            for limit in [1u64 << 32, 1 << 40, u64::MAX] {
                proptest::prop_assert_eq!(
                    BusAddress(a).fits_below(bytes, limit),
                    sum <= u128::from(limit)
                );
            }
        }
    }
}
