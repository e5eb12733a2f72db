//! Memory for channel structures, VM-less.
//!
//! # Which setup, and why it needs no VM
//!
//! nvidia-hardware-envytools §2.7.8: a DMA object is either *paged* (looked up in the channel's
//! page tables) or *unpaged*: "Unpaged DMA objects directly specify the target space and all
//! attributes, merely adding the base address and checking the limit" (targets VRAM,
//! SYSRAM_SNOOP, SYSRAM_NOSNOOP). Every DMA object this driver makes is unpaged, so no page
//! directory or page table is ever written and the page directory area of a channel structure
//! stays unused:
//!
//! - the pushbuffer object (IB ring and segments, §2.8.3 "accessed through dma_pushbuffer")
//!   and the semaphore object (§2.8.4 `DMA_SEMAPHORE`) are linear system memory from bus
//!   address 0, so IB entries and semaphore addresses are plain bus addresses;
//! - the channel structure, RAMFC, CACHE, RAMHT and the playlist live in VRAM at linear
//!   addresses the channel table, `PLAYLIST` and RAMFC hold directly (§2.7.8 "channel
//!   descriptor": a linear address and a target, no VM).
//!
//! The CPU writes those VRAM structures through the BAR0 PMEM window ([`Pmem`]: 1 MiB of
//! memory at the address `PBUS.PMEM_WINDOW` selects, envytools rnndb bus/pbus.xml), which needs
//! no BAR1/BAR3 mapping: BAR1 and BAR3 go through the VM on G80+ once their DMA object is set
//! (§2.4.1), so the driver leaves them alone.
//!
//! [`VramArena`] hands out the VRAM range the caller gives it; [`DmaObject`] encodes the
//! §2.7.8 DMA object words.

use core::cell::Cell;

use baregpu_hal::register::Array;
use baregpu_hal::{RegisterIo, RegisterIoExt};
use baregpu_regs::nvidia::pbus::PMEM_WINDOW_G80_ONWARD as PMEM_WINDOW;
use baregpu_regs::nvidia::pbus::pmem_window_g80_onward::Target as WindowTarget;
use baregpu_regs::nvidia::pmem::DATA_G80_UNTIL_GF100 as PMEM_DATA;

use crate::Bar;
use crate::error::MemoryError;

/// Bytes the PMEM window shows (`PMEM_DATA::COUNT` words).
pub const PMEM_WINDOW_BYTES: u64 = (PMEM_DATA::COUNT * PMEM_DATA::STRIDE) as u64;
/// The window moves in 64 KiB steps (`PMEM_WINDOW.BASE` holds address bits 16-39).
pub const PMEM_WINDOW_GRANULE: u64 = 1 << PMEM_WINDOW_SHIFT;
const PMEM_WINDOW_SHIFT: u32 = 16;

/// VRAM through the BAR0 PMEM window: 32-bit words at VRAM linear addresses, the window
/// moved (one `PMEM_WINDOW` write) only when an access falls outside it.
#[derive(Debug)]
pub struct Pmem<'a, IO: RegisterIo> {
    io: &'a Bar<IO>,
    window: &'a Cell<Option<u64>>,
}

impl<'a, IO: RegisterIo> Pmem<'a, IO> {
    /// The window over `io`; `window` remembers where it points between uses.
    pub(crate) fn new(io: &'a Bar<IO>, window: &'a Cell<Option<u64>>) -> Self {
        Pmem { io, window }
    }

    fn index(&self, address: u64) -> Result<usize, MemoryError> {
        if !address.is_multiple_of(4) {
            return Err(MemoryError::Unaligned { address });
        }
        let base = address & !(PMEM_WINDOW_GRANULE - 1);
        let in_window = |b: u64| address >= b && address + 4 <= b + PMEM_WINDOW_BYTES;
        let base = match self.window.get() {
            Some(b) if in_window(b) => b,
            _ => {
                let reg = PMEM_WINDOW::RESET
                    .with_target(WindowTarget::Vram)
                    .try_with_base((base >> PMEM_WINDOW_SHIFT) as u32)
                    .map_err(|_| MemoryError::OutOfReach { address })?;
                self.io.write(reg);
                self.window.set(Some(base));
                base
            }
        };
        Ok(((address - base) / 4) as usize)
    }

    /// Write the word at VRAM `address` (4-byte aligned).
    pub fn write32(&self, address: u64, value: u32) -> Result<(), MemoryError> {
        let i = self.index(address)?;
        self.io
            .write_at(i, PMEM_DATA::from_raw(value))
            .map_err(|_| MemoryError::OutOfReach { address })
    }

    /// Read the word at VRAM `address` (4-byte aligned).
    pub fn read32(&self, address: u64) -> Result<u32, MemoryError> {
        let i = self.index(address)?;
        self.io
            .read_at::<PMEM_DATA>(i)
            .map(PMEM_DATA::raw)
            .map_err(|_| MemoryError::OutOfReach { address })
    }

    /// Write `words` from VRAM `address` on.
    pub fn write_words(&self, address: u64, words: &[u32]) -> Result<(), MemoryError> {
        for (i, w) in words.iter().enumerate() {
            self.write32(address + 4 * i as u64, *w)?;
        }
        Ok(())
    }

    /// Zero `bytes` (a multiple of 4) from VRAM `address` on.
    pub fn zero(&self, address: u64, bytes: u64) -> Result<(), MemoryError> {
        (0..bytes / 4).try_for_each(|i| self.write32(address + 4 * i, 0))
    }
}

/// Width of the addresses DMA objects, channel structures and IB entries hold (§2.7.8: base and
/// limit are bits 0-39, "bits 12-39 of channel memory structure linear address").
pub const ADDRESS_BITS: u32 = 40;
/// The first address past what 40 bits reach.
pub const ADDRESS_LIMIT: u64 = 1 << ADDRESS_BITS;

/// A block of VRAM the arena handed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct VramBlock {
    /// VRAM linear address.
    pub address: u64,
    /// Bytes.
    pub size: u64,
}

/// A bump allocator over the VRAM range the caller reserves for the driver (RAMFC, CACHE,
/// RAMHT, channel structures, the playlist): no free list; [`reset`](Self::reset) takes
/// everything back (the driver calls it only when no channel exists).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct VramArena {
    start: u64,
    end: u64,
    next: u64,
}

impl VramArena {
    /// The VRAM range `start..start + size`.
    pub const fn new(start: u64, size: u64) -> Self {
        VramArena { start, end: start.saturating_add(size), next: start }
    }

    /// `size` bytes aligned to `align` (a power of two).
    pub fn alloc(&mut self, size: u64, align: u64) -> Result<VramBlock, MemoryError> {
        debug_assert!(align.is_power_of_two());
        let address = self.next.next_multiple_of(align);
        match address.checked_add(size) {
            Some(end) if end <= self.end => {
                self.next = end;
                Ok(VramBlock { address, size })
            }
            _ => Err(MemoryError::VramExhausted { size, free: self.free() }),
        }
    }

    /// Bytes never handed out.
    pub fn free(&self) -> u64 {
        self.end - self.next
    }

    /// Take every block back.
    pub fn reset(&mut self) {
        self.next = self.start;
    }
}

/// What memory a DMA object (or a channel structure) points into: the §2.7.8 target
/// specifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Target {
    /// VRAM linear addresses.
    Vram,
    /// System memory bus addresses, snooped by the CPU caches.
    SysramSnoop,
    /// System memory bus addresses, not snooped.
    SysramNoSnoop,
}

/// How an engine may access a DMA object (its class, §2.7.8 word 0 bits 0-15: "0x2
/// [read-only], 0x3 [write-only], or 0x3d [read-write]").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Access {
    /// Class 0x0002.
    ReadOnly,
    /// Class 0x0003.
    WriteOnly,
    /// Class 0x003d.
    ReadWrite,
}

/// The DMA object layout, nvidia-hardware-envytools §2.7.8 ("0x18 bytes long and made of
/// 32-bit LE words").
mod dmaobj {
    pub const WORDS: usize = 6;
    pub const CLASS_READ_ONLY: u32 = 0x0002;
    pub const CLASS_WRITE_ONLY: u32 = 0x0003;
    pub const CLASS_READ_WRITE: u32 = 0x003d;
    /// Word 0 bits 16-17: target (1 VRAM, 2 SYSRAM_SNOOP, 3 SYSRAM_NOSNOOP; 0 is paged).
    pub const TARGET_SHIFT: u32 = 16;
    pub const TARGET_VRAM: u32 = 1;
    pub const TARGET_SYSRAM_SNOOP: u32 = 2;
    pub const TARGET_SYSRAM_NOSNOOP: u32 = 3;
    /// Word 0 bits 18-19: read-only flag (1 read-only, 2 read-write).
    pub const READ_ONLY_SHIFT: u32 = 18;
    pub const READ_ONLY: u32 = 1;
    pub const READ_WRITE: u32 = 2;
    /// Word 0 bits 20-21: supervisor-only flag (1 user-supervisor).
    pub const USER_SHIFT: u32 = 20;
    pub const USER_SUPERVISOR: u32 = 1;
    /// Word 0 bits 22-28: storage type; 0 is linear ("pitch") memory, the only kind the
    /// driver's objects cover.
    pub const STORAGE_LINEAR: u32 = 0;
    /// Word 3: bits 0-7 base bits 32-39, bits 24-31 limit bits 32-39.
    pub const HIGH_LIMIT_SHIFT: u32 = 24;
    pub const HIGH_BYTE: u64 = 0xff;
    /// Addresses are 40 bits.
    pub const ADDRESS_BITS: u32 = super::ADDRESS_BITS;
}

/// An unpaged DMA object (§2.7.8): `base..=limit` of `target`, accessed as `access`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct DmaObject {
    /// Memory it points into.
    pub target: Target,
    /// How engines may access it.
    pub access: Access,
    /// First address (VRAM linear or bus address).
    pub base: u64,
    /// Last address (inclusive: "if larger or equal [to limit + 1], DMAOBJ_LIMIT fault").
    pub limit: u64,
}

impl DmaObject {
    /// Bytes a DMA object takes in the channel structure.
    pub const BYTES: u64 = (dmaobj::WORDS * 4) as u64;

    /// All of the 40-bit system memory bus address space, read-write: how the driver binds
    /// pushbuffers and semaphores without a VM (see the [module docs](self)).
    pub const fn linear_sysram(access: Access) -> Self {
        DmaObject {
            target: Target::SysramSnoop,
            access,
            base: 0,
            limit: (1 << dmaobj::ADDRESS_BITS) - 1,
        }
    }

    /// The six words of §2.7.8. Addresses past 40 bits, or a limit below the base, are
    /// [`MemoryError::BadDmaObject`].
    pub fn words(&self) -> Result<[u32; dmaobj::WORDS], MemoryError> {
        use dmaobj::*;
        let max = (1u64 << ADDRESS_BITS) - 1;
        if self.base > max || self.limit > max || self.limit < self.base {
            return Err(MemoryError::BadDmaObject { base: self.base, limit: self.limit });
        }
        let class = match self.access {
            Access::ReadOnly => CLASS_READ_ONLY,
            Access::WriteOnly => CLASS_WRITE_ONLY,
            Access::ReadWrite => CLASS_READ_WRITE,
        };
        let target = match self.target {
            Target::Vram => TARGET_VRAM,
            Target::SysramSnoop => TARGET_SYSRAM_SNOOP,
            Target::SysramNoSnoop => TARGET_SYSRAM_NOSNOOP,
        };
        let ro = if self.access == Access::ReadOnly { READ_ONLY } else { READ_WRITE };
        let word0 = class
            | target << TARGET_SHIFT
            | ro << READ_ONLY_SHIFT
            | USER_SUPERVISOR << USER_SHIFT
            | STORAGE_LINEAR;
        let high = (self.base >> 32 & HIGH_BYTE) as u32
            | ((self.limit >> 32 & HIGH_BYTE) as u32) << HIGH_LIMIT_SHIFT;
        Ok([word0, self.limit as u32, self.base as u32, high, 0, 0])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_arena_aligns_and_refuses_what_does_not_fit() {
        let mut a = VramArena::new(0x1000, 0x3000);
        assert_eq!(a.alloc(0x10, 0x10).unwrap().address, 0x1000);
        assert_eq!(a.alloc(0x100, 0x1000).unwrap().address, 0x2000);
        assert_eq!(a.free(), 0x1f00);
        assert_eq!(
            a.alloc(0x2000, 4),
            Err(MemoryError::VramExhausted { size: 0x2000, free: 0x1f00 })
        );
        a.reset();
        assert_eq!(a.alloc(4, 4).unwrap().address, 0x1000);
    }

    #[test]
    fn an_unpaged_object_encodes_class_target_and_40_bit_addresses() {
        let o = DmaObject {
            target: Target::Vram,
            access: Access::ReadWrite,
            base: 0x12_3456_7000,
            limit: 0x34_0000_0fff,
        };
        let w = o.words().unwrap();
        // class 0x3d, target 1 (VRAM) at 16, read-write 2 at 18, user-supervisor 1 at 20.
        assert_eq!(w[0], 0x3d | 1 << 16 | 2 << 18 | 1 << 20);
        assert_eq!((w[1], w[2], w[3]), (0x0000_0fff, 0x3456_7000, 0x12 | 0x34 << 24));
        let bad = DmaObject { limit: 1 << 40, ..o };
        assert!(matches!(bad.words(), Err(MemoryError::BadDmaObject { .. })));
    }
}
