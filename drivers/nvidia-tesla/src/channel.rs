//! A PFIFO channel's memory: ids, the G84+ channel structure, RAMFC, RAMHT, engine objects.
//!
//! Layouts: nvidia-hardware-envytools §2.7.8 (channel structure, DMA objects, engine context
//! objects), §2.8.1 (what a channel consists of), §2.8.4 (RAMHT and the FIFO objects); the RAMFC
//! word offsets, the RAMHT hash and the values the documents leave out from envytools rnndb
//! (G80_RAMFC) and Linux nouveau (nvkm/engine/fifo/nv50.c, g84.c, core/ramht.c), cited per item.

use core::fmt;

use baregpu_hal::register::Register;

use crate::error::ChannelError;
use crate::memory::{ADDRESS_LIMIT, Access, DmaObject, Target, VramBlock};

/// Channel ids the driver hands out: "Chid 0 is PIO-only" (§2.8.1: "On G80:GF100 only channel
/// 0 supports PIO mode") and 127 is PFIFO's "invalid" channel (Linux nouveau nv50.c).
pub const FIRST_CHANNEL: u8 = 1;
/// The last usable channel id.
pub const LAST_CHANNEL: u8 = 126;
/// Entries of the channel table (`PFIFO.CHAN_TABLE`).
pub const CHANNEL_SLOTS: usize = 128;

/// A channel id, 1..=126.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ChannelId(u8);

impl ChannelId {
    /// `id`, or [`ChannelError::BadId`] outside 1..=126.
    pub const fn new(id: u8) -> Result<Self, ChannelError> {
        if id >= FIRST_CHANNEL && id <= LAST_CHANNEL {
            Ok(ChannelId(id))
        } else {
            Err(ChannelError::BadId { id })
        }
    }

    /// The number.
    pub const fn get(self) -> u8 {
        self.0
    }
}

impl fmt::Display for ChannelId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "channel {}", self.0)
    }
}

/// The PFIFO engine an object belongs to (rnndb g80_pfifo.xml `nv50_pfifo_engine`; the RAMHT
/// context's engine field, §2.8.4 "engine id").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Engine {
    /// Software: DMA objects and methods the driver handles.
    Software,
    /// PGRAPH.
    Graph,
    /// PCOPY (GT215+).
    Copy,
}

impl Engine {
    /// Its PFIFO engine id (0 SW, 1 PGRAPH, 3 PCOPY on GT215).
    pub const fn id(self) -> u32 {
        match self {
            Engine::Software => 0,
            Engine::Graph => 1,
            Engine::Copy => 3,
        }
    }
}

/// Sizes and offsets of the G84+ channel structure (§2.7.8: "0x000-0x200: DMA objects for fifo
/// engines' contexts, 0x200-0x4200: page directory"; RAMHT placement, RAMFC and CACHE as
/// separate objects from Linux nouveau g84.c / chang84.c).
pub mod layout {
    /// The channel structure ("has to be aligned to 0x1000 bytes"; objects up to 0xffff0).
    pub const INSTANCE_BYTES: u64 = 0x1_0000;
    /// Its alignment.
    pub const INSTANCE_ALIGN: u64 = 0x1000;
    /// The page directory's end: objects the driver adds go after it (no VM: the directory
    /// stays unused, but its space is the hardware's).
    pub const OBJECTS_START: u64 = 0x4200;
    /// RAMHT inside the channel structure (nouveau: 0x8000 bytes at 0x8000).
    pub const RAMHT_OFFSET: u64 = 0x8000;
    /// RAMFC, a separate G84+ object (nouveau g84.c: 0x100 bytes, aligned 0x100).
    pub const RAMFC_BYTES: u64 = 0x100;
    /// Its alignment (`CHAN_TABLE.RAMFC` holds address >> 8).
    pub const RAMFC_ALIGN: u64 = 0x100;
    /// PFIFO CACHE save area, a separate G84+ object (nouveau g84.c: 0x1000 bytes, aligned 0x400).
    pub const CACHE_BYTES: u64 = 0x1000;
    /// Its alignment (RAMFC `CACHE_INST` holds address >> 10).
    pub const CACHE_ALIGN: u64 = 0x400;
    /// Channel objects are addressed in 0x10-byte units ("16-bit offsets ... in 0x10-byte units").
    pub const OBJECT_UNIT: u64 = 0x10;
    /// The playlist: one 32-bit channel id per entry, every channel (aligned 0x1000:
    /// `PLAYLIST.ADDR` holds address >> 12).
    pub const PLAYLIST_BYTES: u64 = 4 * super::CHANNEL_SLOTS as u64;
    /// Its alignment.
    pub const PLAYLIST_ALIGN: u64 = 0x1000;
}

/// RAMHT (§2.8.4 "a big hash table that associates arbitrary 32-bit handles with FIFO objects
/// and engine ids"): 4096 entries of {handle, context} (Linux nouveau core/ramht.c).
pub mod ramht {
    /// Entries.
    pub const ENTRIES: u32 = 4096;
    /// log2(ENTRIES): the hash's width.
    pub const BITS: u32 = 12;
    /// Bytes per entry: the handle word, then the context word.
    pub const ENTRY_BYTES: u64 = 8;
    /// Bytes of the table.
    pub const BYTES: u64 = ENTRIES as u64 * ENTRY_BYTES;
    /// Context: engine id at bit 20, object offset >> 4 below (nouveau nv50 ramht).
    pub const CONTEXT_ENGINE_SHIFT: u32 = 20;

    /// The slot a handle hashes to: the XOR of its 12-bit pieces (Linux nouveau core/ramht.c).
    /// nouveau hashes in no channel id on NV50 (it passes 0); whether G84 folds one in could
    /// not be confirmed, so neither does this driver.
    pub const fn hash(handle: u32) -> u32 {
        let mut h = 0;
        let mut rest = handle;
        while rest != 0 {
            h ^= rest & (ENTRIES - 1);
            rest >>= BITS;
        }
        h
    }

    /// The context word of an object of `engine` at `offset` in the channel structure.
    pub const fn context(engine: u32, offset: u64) -> u32 {
        engine << CONTEXT_ENGINE_SHIFT | (offset >> 4) as u32
    }
}

/// The values Linux nouveau (nvkm/engine/fifo/nv50.c, g84.c, gpfifog84.c) writes to a new
/// channel's RAMFC where the documents give none (the words are `regs::ramfc`, from envytools
/// rnndb G80_RAMFC).
pub mod ramfc {
    /// `DMA_FETCH.SETTINGS` (fetch sizes; the fields are not documented).
    pub const FETCH_SETTINGS: u32 = 0x003f_6078;
    /// `DMA_TIMESLICE` (also `PFIFO.UNK044` at init).
    pub const TIMESLICE: u32 = 0x0100_3fff;
    /// `ACQUIRE_TIMEOUT`: the largest positive value (acquires wait on).
    pub const ACQUIRE_TIMEOUT: u32 = 0x7fff_ffff;
    /// `SLI.ENABLE` (both bits) and `SLI.MASK` (every GPU of the mask).
    pub const SLI_ENABLE: u8 = 3;
    /// `SLI.MASK`.
    pub const SLI_MASK: u16 = 0xfff;
    /// `RAMHT.SEARCH` (undocumented).
    pub const RAMHT_SEARCH: u8 = 4;
    /// `RAMHT.BITS` counts from a 512-entry table (log2 512).
    pub const RAMHT_BITS_BASE: u32 = 9;
}

/// Where a channel's pieces are (VRAM linear addresses).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ChannelMemory {
    /// The channel structure (engine context objects, page directory, objects, RAMHT).
    pub instance: VramBlock,
    /// RAMFC.
    pub ramfc: VramBlock,
    /// The CACHE save area.
    pub cache: VramBlock,
}

impl ChannelMemory {
    /// RAMHT's address.
    pub fn ramht(&self) -> u64 {
        self.instance.address + layout::RAMHT_OFFSET
    }
}

/// The IB ring a channel fetches from (§2.8.3: "a circular buffer of 8-byte structures called
/// IB entries ... The size has to be a power of two"), at a bus address (the pushbuffer DMA
/// object is linear system memory from 0, see [`crate::memory`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct IbRing {
    /// Bus address of entry 0 (8-byte aligned, below 2^40).
    pub address: u64,
    /// Entries: a power of two, 2..=65536 (the range the ring writer takes; §2.8.3 says "???").
    pub entries: u32,
}

impl IbRing {
    /// Bytes per IB entry.
    pub const ENTRY_BYTES: u64 = 8;
    /// Most entries.
    pub const MAX_ENTRIES: u32 = 1 << 16;

    /// log2(entries), or [`ChannelError::BadIbRing`].
    pub fn order(&self) -> Result<u32, ChannelError> {
        let bad = ChannelError::BadIbRing { entries: self.entries, address: self.address };
        let fits = self.address.checked_add(u64::from(self.entries) * Self::ENTRY_BYTES);
        if !self.entries.is_power_of_two()
            || self.entries < 2
            || self.entries > Self::MAX_ENTRIES
            || !self.address.is_multiple_of(Self::ENTRY_BYTES)
            || fits.is_none_or(|end| end > ADDRESS_LIMIT)
        {
            return Err(bad);
        }
        Ok(self.entries.trailing_zeros())
    }
}

/// The pushbuffer of an NV4-style DMA-mode channel (§2.8.3): read linearly from `address`,
/// wrapped by the writer's jumps. Its DMA object starts at `address` (jump targets and
/// `DMA_PUT`/`DMA_GET` are byte offsets in the object, the convention of
/// `baregpu_ring::nvidia::Pushbuffer`), so `DMA_PUT` = `DMA_GET` = 0 in a new channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct DmaPushbuffer {
    /// Bus address of its first byte (4-byte aligned, below 2^40).
    pub address: u64,
    /// Its size in bytes (a multiple of 4, not 0).
    pub bytes: u64,
}

impl DmaPushbuffer {
    /// The pushbuffer DMA object: `address..address + bytes`, read-only system memory, or
    /// [`ChannelError::BadPushbuffer`].
    pub fn object(&self) -> Result<DmaObject, ChannelError> {
        let bad = ChannelError::BadPushbuffer { address: self.address, bytes: self.bytes };
        if self.bytes == 0 || !self.bytes.is_multiple_of(4) || !self.address.is_multiple_of(4) {
            return Err(bad);
        }
        let limit = self.address.checked_add(self.bytes - 1).ok_or(bad)?;
        let object = DmaObject {
            target: Target::SysramSnoop,
            access: Access::ReadOnly,
            base: self.address,
            limit,
        };
        object.words().map_err(|_| bad)?;
        Ok(object)
    }
}

/// How a channel's pusher fetches commands (§2.8.3: "two modes of DMA command submission").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Pusher {
    /// IB mode: a ring of IB entries; the pushbuffer DMA object is all of system memory.
    Ib(IbRing),
    /// NV4-style DMA mode: one pushbuffer read linearly.
    Dma(DmaPushbuffer),
}

impl From<IbRing> for Pusher {
    fn from(ib: IbRing) -> Self {
        Pusher::Ib(ib)
    }
}

impl From<DmaPushbuffer> for Pusher {
    fn from(pb: DmaPushbuffer) -> Self {
        Pusher::Dma(pb)
    }
}

impl Pusher {
    /// The pushbuffer DMA object the channel reads through, or why the setup is unusable.
    pub fn object(&self) -> Result<DmaObject, ChannelError> {
        match self {
            Pusher::Ib(ib) => ib.order().map(|_| DmaObject::linear_sysram(Access::ReadOnly)),
            Pusher::Dma(pb) => pb.object(),
        }
    }
}

/// Words of RAMFC the driver writes for a new channel.
pub const RAMFC_WORDS: usize = 13;

/// A RAMFC word as (offset in RAMFC, value).
fn word<R: Register>(value: R) -> (u64, u32) {
    (R::OFFSET as u64, value.to_raw())
}

/// The RAMFC words of a new channel, as (offset, value) pairs: `pushbuffer_object` is the
/// offset of the pushbuffer DMA object in the channel structure.
pub fn ramfc_words(
    memory: &ChannelMemory,
    pusher: &Pusher,
    pushbuffer_object: u64,
) -> Result<[(u64, u32); RAMFC_WORDS], ChannelError> {
    use baregpu_regs::nvidia::ramfc as rf;
    pusher.object()?;
    let fetch = rf::DMA_FETCH::RESET.with_settings(ramfc::FETCH_SETTINGS);
    // IB mode: the IB ring; DMA mode: DMA_GET = DMA_PUT = 0 (the object starts at the
    // pushbuffer) and no limit but the object's.
    let mode: [(u64, u32); 3] = match pusher {
        Pusher::Ib(ib) => [
            word(fetch.with_ib_enable(true)),
            word(rf::IB_ADDRESS_LOW::RESET.with_ib_address_low(ib.address as u32)),
            word(
                rf::IB_CONFIG::RESET
                    .with_address_high((ib.address >> 32) as u8)
                    .with_order(ib.order()? as u8),
            ),
        ],
        Pusher::Dma(_) => [
            word(fetch),
            word(rf::DMA_LIMIT::RESET.with_dma_limit(u32::MAX)),
            word(rf::DMA_GET::RESET),
        ],
    };
    let ramht = rf::RAMHT::RESET
        .with_offset((layout::RAMHT_OFFSET >> 4) as u32)
        .with_search(ramfc::RAMHT_SEARCH)
        .with_bits((ramht::BITS - ramfc::RAMHT_BITS_BASE) as u8);
    Ok([
        word(rf::IB_PUT::RESET),
        word(rf::IB_GET::RESET),
        word(rf::DMA_PUT::RESET),
        mode[0],
        mode[1],
        mode[2],
        word(rf::DMA_TIMESLICE::RESET.with_dma_timeslice(ramfc::TIMESLICE)),
        word(rf::DMA_INSTANCE::RESET.with_dma_instance((pushbuffer_object >> 4) as u32)),
        word(rf::ACQUIRE_TIMEOUT::RESET.with_acquire_timeout(ramfc::ACQUIRE_TIMEOUT)),
        word(rf::SLI::RESET.with_enable(ramfc::SLI_ENABLE).with_mask(ramfc::SLI_MASK)),
        word(ramht),
        word(rf::CACHE_INST::RESET.with_cache_inst((memory.cache.address >> 10) as u32)),
        word(rf::CHAN_INST::RESET.with_chan_inst((memory.instance.address >> 12) as u32)),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_0_and_127_are_refused() {
        assert_eq!(ChannelId::new(0), Err(ChannelError::BadId { id: 0 }));
        assert_eq!(ChannelId::new(127), Err(ChannelError::BadId { id: 127 }));
        assert_eq!(ChannelId::new(126).map(ChannelId::get), Ok(126));
        assert_eq!(ChannelId::new(1).map(ChannelId::get), Ok(1));
    }

    #[test]
    fn the_ramht_hash_folds_12_bit_pieces() {
        assert_eq!(ramht::hash(0), 0);
        assert_eq!(ramht::hash(0xabc), 0xabc);
        assert_eq!(ramht::hash(0x1234_5678), 0x678 ^ 0x345 ^ 0x12);
        assert_eq!(ramht::context(Engine::Copy.id(), 0x4200), 0x30_0420);
    }

    #[test]
    fn a_dma_pushbuffer_object_covers_exactly_the_pushbuffer() {
        let pb = DmaPushbuffer { address: 0x8000_0000, bytes: 0x1000 };
        let o = pb.object().unwrap();
        assert_eq!((o.base, o.limit, o.access), (0x8000_0000, 0x8000_0fff, Access::ReadOnly));
        for (address, bytes) in [(0x8000_0000, 0), (0x8000_0002, 0x1000), (1 << 40, 4)] {
            assert!(DmaPushbuffer { address, bytes }.object().is_err(), "{address:#x} {bytes}");
        }
    }

    #[test]
    fn ib_rings_must_be_powers_of_two_and_aligned() {
        assert_eq!(IbRing { address: 0x1000, entries: 512 }.order(), Ok(9));
        for (address, entries) in
            [(0x1000, 0), (0x1000, 1), (0x1000, 3), (0x1004, 4), (0x1000, 1 << 17)]
        {
            assert!(IbRing { address, entries }.order().is_err(), "{address:#x} {entries}");
        }
    }
}
