//! A PFIFO channel's memory: ids, the G84+ channel structure, RAMFC, RAMHT, engine objects.
//!
//! Layouts: nvidia-hardware-envytools §2.7.8 (channel structure, DMA objects, engine context
//! objects), §2.8.1 (what a channel consists of), §2.8.4 (RAMHT and the FIFO objects); the RAMFC
//! word offsets, the RAMHT hash and the values the documents leave out from envytools rnndb
//! (G80_RAMFC) and Linux nouveau (nvkm/engine/fifo/nv50.c, g84.c, core/ramht.c), cited per item.

use core::fmt;

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

/// RAMFC word offsets (envytools rnndb fifo G80_RAMFC) and the values Linux nouveau
/// (nv50.c, g84.c, gpfifog84.c) writes for an IB-mode channel.
pub mod ramfc {
    /// `IB_PUT`, `IB_GET`: zero in a new channel.
    pub const IB_PUT: u64 = 0x00;
    /// `IB_GET`.
    pub const IB_GET: u64 = 0x04;
    /// `DMA_PUT` (DMA mode: the pushbuffer's end, a byte offset in its DMA object).
    pub const DMA_PUT: u64 = 0x08;
    /// `DMA_PUT_HIGH`.
    pub const DMA_PUT_HIGH: u64 = 0x0c;
    /// `DMA_GET` (DMA mode: where the pusher reads).
    pub const DMA_GET: u64 = 0x10;
    /// `DMA_GET_HIGH`.
    pub const DMA_GET_HIGH: u64 = 0x14;
    /// `DMA_LIMIT`: nouveau leaves it all-ones; the DMA object's limit bounds the pushbuffer.
    pub const DMA_LIMIT: u64 = 0x4c;
    /// `DMA_FETCH`: nouveau's fetch settings with `IB_ENABLE` (bit 30, rnndb DMA_FETCH).
    pub const DMA_FETCH: u64 = 0x3c;
    /// nouveau's DMA_FETCH value without IB_ENABLE (fetch sizes; the fields are not documented).
    pub const DMA_FETCH_SETTINGS: u32 = 0x003f_6078;
    /// `DMA_FETCH.IB_ENABLE`.
    pub const DMA_FETCH_IB_ENABLE: u32 = 1 << 30;
    /// `DMA_TIMESLICE`.
    pub const DMA_TIMESLICE: u64 = 0x44;
    /// nouveau's timeslice (the value PFIFO.UNK044 gets at init too).
    pub const TIMESLICE: u32 = 0x0100_3fff;
    /// `DMA_INSTANCE`: the pushbuffer DMA object's offset in the channel structure >> 4.
    pub const DMA_INSTANCE: u64 = 0x48;
    /// `IB_ADDRESS_LOW`.
    pub const IB_ADDRESS_LOW: u64 = 0x50;
    /// `IB_CONFIG`: IB address bits 32-39, log2(entries) at bit 16.
    pub const IB_CONFIG: u64 = 0x54;
    /// Where `IB_CONFIG` holds log2 of the IB ring's entries.
    pub const IB_ORDER_SHIFT: u32 = 16;
    /// `ACQUIRE_TIMEOUT`.
    pub const ACQUIRE_TIMEOUT: u64 = 0x60;
    /// nouveau's semaphore acquire timeout (the largest positive value: acquires wait on).
    pub const ACQUIRE_TIMEOUT_VALUE: u32 = 0x7fff_ffff;
    /// `SLI`.
    pub const SLI: u64 = 0x7c;
    /// nouveau's SLI word: SLI conditional commands enabled, every GPU of the mask (0xfff).
    pub const SLI_VALUE: u32 = 0x3000_0fff;
    /// `RAMHT`: (log2(entries) - 9) << 27 | search 4 << 24 | offset >> 4.
    pub const RAMHT: u64 = 0x80;
    /// Where `RAMHT` holds log2(entries) - 9.
    pub const RAMHT_BITS_SHIFT: u32 = 27;
    /// The smallest table RAMHT's size field counts from (log2 512).
    pub const RAMHT_BITS_BASE: u32 = 9;
    /// nouveau's RAMHT search setting (4 at bit 24; undocumented).
    pub const RAMHT_SEARCH: u32 = 4 << 24;
    /// `CACHE_INST` (G84+): CACHE address >> 10.
    pub const CACHE_INST: u64 = 0x88;
    /// `CHAN_INST` (G84+): channel structure address >> 12.
    pub const CHAN_INST: u64 = 0x98;
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

/// The RAMFC words of a new channel, as (offset, value) pairs: `pushbuffer_object` is the
/// offset of the pushbuffer DMA object in the channel structure.
pub fn ramfc_words(
    memory: &ChannelMemory,
    pusher: &Pusher,
    pushbuffer_object: u64,
) -> Result<[(u64, u32); RAMFC_WORDS], ChannelError> {
    pusher.object()?;
    let ramht_size = (ramht::BITS - ramfc::RAMHT_BITS_BASE) << ramfc::RAMHT_BITS_SHIFT;
    // IB mode: the IB ring; DMA mode: DMA_GET = DMA_PUT = 0 (the object starts at the
    // pushbuffer) and no limit but the object's.
    let mode: [(u64, u32); 3] = match pusher {
        Pusher::Ib(ib) => [
            (ramfc::DMA_FETCH, ramfc::DMA_FETCH_SETTINGS | ramfc::DMA_FETCH_IB_ENABLE),
            (ramfc::IB_ADDRESS_LOW, ib.address as u32),
            (ramfc::IB_CONFIG, (ib.address >> 32) as u32 | ib.order()? << ramfc::IB_ORDER_SHIFT),
        ],
        Pusher::Dma(_) => [
            (ramfc::DMA_FETCH, ramfc::DMA_FETCH_SETTINGS),
            (ramfc::DMA_LIMIT, u32::MAX),
            (ramfc::DMA_GET, 0),
        ],
    };
    Ok([
        (ramfc::IB_PUT, 0),
        (ramfc::IB_GET, 0),
        (ramfc::DMA_PUT, 0),
        mode[0],
        mode[1],
        mode[2],
        (ramfc::DMA_TIMESLICE, ramfc::TIMESLICE),
        (ramfc::DMA_INSTANCE, (pushbuffer_object >> 4) as u32),
        (ramfc::ACQUIRE_TIMEOUT, ramfc::ACQUIRE_TIMEOUT_VALUE),
        (ramfc::SLI, ramfc::SLI_VALUE),
        (ramfc::RAMHT, ramht_size | ramfc::RAMHT_SEARCH | (layout::RAMHT_OFFSET >> 4) as u32),
        (ramfc::CACHE_INST, (memory.cache.address >> 10) as u32),
        (ramfc::CHAN_INST, (memory.instance.address >> 12) as u32),
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
