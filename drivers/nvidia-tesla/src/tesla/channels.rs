//! Channels: their structures placed in the driver's VRAM and written through PMEM, the
//! channel table, the playlist, enable, disable and unload (Linux nouveau nv50.c / g84.c order:
//! RAMFC written, channel table entry bound, then enabled and added to the playlist; a channel
//! is taken off the playlist and unloaded before its table entry is cleared).

use baregpu_hal::time::{Clock, poll_until};
use baregpu_hal::{RegisterIo, RegisterIoExt};
use baregpu_regs::nvidia::pfifo::chan_table_g84_until_gf100::Target as ChanTarget;
use baregpu_regs::nvidia::pfifo::playlist_g80_until_gf100::Target as PlaylistTarget;
use baregpu_regs::nvidia::pfifo::{
    CHAN_TABLE_G84_UNTIL_GF100 as CHAN_TABLE, CHANNEL_UNLOAD_G80_UNTIL_GF100 as CHANNEL_UNLOAD,
    PLAYLIST_G80_UNTIL_GF100 as PLAYLIST, PLAYLIST_LEN_G80_UNTIL_GF100 as PLAYLIST_LEN,
};

use super::{ChannelSlot, Tesla, check_alive};
use crate::channel::{ChannelId, ChannelMemory, Engine, Pusher, layout, ramfc_words, ramht};
use crate::error::{ChannelError, MemoryError};
use crate::memory::{Access, DmaObject};

/// The handle of the semaphore DMA object every channel gets (linear system memory, read-write;
/// bind it with the `DMA_SEMAPHORE` method, §2.8.4). Handles are the driver's choice.
pub const SEMAPHORE_DMA_HANDLE: u32 = 0xbeef_0001;

/// Bytes of the object space of a channel structure (after the page directory, before RAMHT).
const OBJECT_SPACE_END: u64 = layout::RAMHT_OFFSET;

impl<IO: RegisterIo, C: Clock> Tesla<IO, C> {
    fn slot(&self, id: ChannelId) -> &ChannelSlot {
        &self.channels[usize::from(id.get())]
    }

    fn slot_mut(&mut self, id: ChannelId) -> &mut ChannelSlot {
        &mut self.channels[usize::from(id.get())]
    }

    /// Create channel `id` with `pusher` (an [`IbRing`](crate::IbRing) for IB mode, a
    /// [`DmaPushbuffer`](crate::channel::DmaPushbuffer) for DMA mode), disabled: its channel
    /// structure, RAMFC and CACHE placed in the driver's VRAM (once per id, reused when the
    /// id is created again), engine context objects and RAMHT cleared, the pushbuffer DMA
    /// object (read-only system memory: all of it in IB mode, the pushbuffer in DMA mode) and
    /// the semaphore DMA object ([`SEMAPHORE_DMA_HANDLE`]) written, RAMFC filled, and the
    /// channel table entry pointed at the RAMFC (not enabled:
    /// [`enable_channel`](Self::enable_channel)). A bad pusher setup or a full VRAM range
    /// leaves the channel table untouched.
    pub fn create_channel(
        &mut self,
        id: ChannelId,
        pusher: impl Into<Pusher>,
    ) -> Result<(), ChannelError> {
        let pusher = pusher.into();
        check_alive(&self.io)?;
        if self.slot(id).pusher.is_some() {
            return Err(ChannelError::InUse { id: id.get() });
        }
        let object = pusher.object()?;
        let memory = match self.slot(id).memory {
            Some(m) => m,
            None => self.place_channel()?,
        };
        let pmem = self.pmem();
        pmem.zero(memory.instance.address, layout::OBJECTS_START)?;
        pmem.zero(memory.ramht(), ramht::BYTES)?;
        pmem.zero(memory.ramfc.address, layout::RAMFC_BYTES)?;
        let pushbuffer = layout::OBJECTS_START;
        pmem.write_words(memory.instance.address + pushbuffer, &object.words()?)?;
        for (offset, value) in ramfc_words(&memory, &pusher, pushbuffer)? {
            pmem.write32(memory.ramfc.address + offset, value)?;
        }
        *self.slot_mut(id) = ChannelSlot {
            memory: Some(memory),
            pusher: Some(pusher),
            next_object: pushbuffer + DmaObject::BYTES.next_multiple_of(layout::OBJECT_UNIT),
            enabled: false,
            fault: None,
        };
        self.add_dma_object(id, SEMAPHORE_DMA_HANDLE, DmaObject::linear_sysram(Access::ReadWrite))?;
        self.io
            .write_at(usize::from(id.get()), self.table_entry(&memory, false)?)
            .map_err(|_| ChannelError::BadId { id: id.get() })?;
        Ok(())
    }

    /// Allocate a channel's structure, RAMFC and CACHE, all or nothing.
    fn place_channel(&mut self) -> Result<ChannelMemory, ChannelError> {
        let mut arena = self.vram;
        let instance = arena.alloc(layout::INSTANCE_BYTES, layout::INSTANCE_ALIGN)?;
        let ramfc = arena.alloc(layout::RAMFC_BYTES, layout::RAMFC_ALIGN)?;
        let cache = arena.alloc(layout::CACHE_BYTES, layout::CACHE_ALIGN)?;
        self.vram = arena;
        Ok(ChannelMemory { instance, ramfc, cache })
    }

    fn table_entry(
        &self,
        memory: &ChannelMemory,
        enable: bool,
    ) -> Result<CHAN_TABLE, ChannelError> {
        let address = memory.ramfc.address;
        CHAN_TABLE::RESET
            .with_target(ChanTarget::Vram)
            .with_enable(enable)
            .try_with_ramfc((address >> 8) as u32)
            .map_err(|_| ChannelError::Memory(MemoryError::OutOfReach { address }))
    }

    /// Put an unpaged DMA object in channel `id`'s structure and its `handle` in RAMHT
    /// (engine: software, §2.8.4: methods 0x180-0x1fc and `DMA_SEMAPHORE` look handles up).
    /// Returns the object's offset in the channel structure.
    pub fn add_dma_object(
        &mut self,
        id: ChannelId,
        handle: u32,
        object: DmaObject,
    ) -> Result<u64, ChannelError> {
        let words = object.words()?;
        self.put_object(id, handle, Engine::Software, &words)
    }

    /// Put an engine object of `class` (its first word, §2.8.4: "The first few bits of a FIFO
    /// object determine its 'class'", 16 bits on G80) in channel `id`'s structure and `handle`
    /// in its RAMHT for `engine`; method 0 (`OBJECT`) binds it to a subchannel and the engine
    /// gets its offset. Returns the offset.
    pub fn add_engine_object(
        &mut self,
        id: ChannelId,
        handle: u32,
        engine: Engine,
        class: u16,
    ) -> Result<u64, ChannelError> {
        self.put_object(id, handle, engine, &[u32::from(class), 0, 0, 0])
    }

    /// Write `words` at the next free object offset of channel `id`'s structure (in 0x10-byte
    /// units) and `handle` in its RAMHT for `engine`; the RAMHT slot is found before anything
    /// is written. Returns the offset.
    fn put_object(
        &mut self,
        id: ChannelId,
        handle: u32,
        engine: Engine,
        words: &[u32],
    ) -> Result<u64, ChannelError> {
        let slot = *self.slot(id);
        let (Some(memory), Some(_)) = (slot.memory, slot.pusher) else {
            return Err(ChannelError::NotCreated { id: id.get() });
        };
        let offset = slot.next_object;
        let next = offset + (4 * words.len() as u64).next_multiple_of(layout::OBJECT_UNIT);
        if next > OBJECT_SPACE_END {
            return Err(ChannelError::NoObjectSpace);
        }
        let entry = self.ramht_slot(&memory, handle)?;
        let pmem = self.pmem();
        pmem.write_words(memory.instance.address + offset, words)?;
        pmem.write32(entry + 4, ramht::context(engine.id(), offset))?;
        pmem.write32(entry, handle)?;
        self.slot_mut(id).next_object = next;
        Ok(offset)
    }

    /// Put `handle` in channel `id`'s RAMHT for an engine object of `engine` at `offset` in the
    /// channel structure (method 0, `OBJECT`, binds it to a subchannel, §2.8.4).
    pub fn bind_object(
        &mut self,
        id: ChannelId,
        handle: u32,
        engine: Engine,
        offset: u64,
    ) -> Result<(), ChannelError> {
        let slot = *self.slot(id);
        let (Some(memory), Some(_)) = (slot.memory, slot.pusher) else {
            return Err(ChannelError::NotCreated { id: id.get() });
        };
        let entry = self.ramht_slot(&memory, handle)?;
        let pmem = self.pmem();
        pmem.write32(entry + 4, ramht::context(engine.id(), offset))?;
        pmem.write32(entry, handle)?;
        Ok(())
    }

    /// The free RAMHT entry `handle` goes to: its hash, then linear probing (Linux nouveau
    /// core/ramht.c). An entry is free while its context word is 0 (no object has offset 0
    /// and engine software: the engine context objects sit there).
    fn ramht_slot(&self, memory: &ChannelMemory, handle: u32) -> Result<u64, ChannelError> {
        let pmem = self.pmem();
        let start = ramht::hash(handle);
        for i in 0..ramht::ENTRIES {
            let at = memory.ramht() + u64::from((start + i) % ramht::ENTRIES) * ramht::ENTRY_BYTES;
            if pmem.read32(at + 4)? == 0 {
                return Ok(at);
            }
            if pmem.read32(at)? == handle {
                return Err(ChannelError::DuplicateHandle { handle });
            }
        }
        Err(ChannelError::RamhtFull { handle })
    }

    /// Let channel `id` run: its channel table entry enabled, then the playlist rewritten with
    /// it.
    pub fn enable_channel(&mut self, id: ChannelId) -> Result<(), ChannelError> {
        check_alive(&self.io)?;
        let memory = self.created(id)?;
        let _ = self.io.write_at(usize::from(id.get()), self.table_entry(&memory, true)?);
        self.slot_mut(id).enabled = true;
        self.write_playlist()?;
        Ok(())
    }

    /// Stop channel `id`: off the playlist, its table entry disabled, then unloaded (its state
    /// saved to RAMFC: `CHANNEL_UNLOAD` written and polled, bounded, until it is no longer
    /// all-ones, Linux nouveau nv50.c).
    pub fn disable_channel(&mut self, id: ChannelId) -> Result<(), ChannelError> {
        check_alive(&self.io)?;
        let memory = self.created(id)?;
        self.slot_mut(id).enabled = false;
        self.write_playlist()?;
        let _ = self.io.write_at(usize::from(id.get()), self.table_entry(&memory, false)?);
        self.unload(&memory)
    }

    /// Disable channel `id` and clear its table entry; its memory stays for a channel created
    /// with the same id.
    pub fn destroy_channel(&mut self, id: ChannelId) -> Result<(), ChannelError> {
        self.disable_channel(id)?;
        let _ = self.io.write_at(usize::from(id.get()), CHAN_TABLE::RESET);
        self.slot_mut(id).pusher = None;
        Ok(())
    }

    /// Whether channel `id` exists, and whether it is enabled.
    pub fn channel_state(&self, id: ChannelId) -> Option<bool> {
        let slot = self.slot(id);
        slot.pusher.map(|_| slot.enabled)
    }

    /// Where channel `id`'s structures are.
    pub fn channel_memory(&self, id: ChannelId) -> Option<ChannelMemory> {
        self.slot(id).pusher.and(self.slot(id).memory)
    }

    fn created(&self, id: ChannelId) -> Result<ChannelMemory, ChannelError> {
        self.channel_memory(id).ok_or(ChannelError::NotCreated { id: id.get() })
    }

    fn unload(&self, memory: &ChannelMemory) -> Result<(), ChannelError> {
        let instance = (memory.instance.address >> 12) as u32;
        self.io.write(CHANNEL_UNLOAD::RESET.with_instance(instance));
        let io = &self.io;
        poll_until(&self.clock, self.config.unload_timeout, || {
            (io.read::<CHANNEL_UNLOAD>().raw() != u32::MAX).then_some(())
        })
        .map_err(|t| match check_alive(io) {
            Err(gone) => ChannelError::DeviceGone(gone),
            Ok(()) => ChannelError::UnloadTimeout(t),
        })
    }

    /// Write the enabled channels' ids to the playlist, then `PLAYLIST` (its address) and
    /// `PLAYLIST_LEN` (the count, which makes PFIFO load it).
    pub(crate) fn write_playlist(&self) -> Result<(), MemoryError> {
        let pmem = self.pmem();
        let mut count: u8 = 0;
        for (id, slot) in self.channels.iter().enumerate() {
            if slot.enabled {
                pmem.write32(self.playlist.address + 4 * u64::from(count), id as u32)?;
                count += 1;
            }
        }
        let address = self.playlist.address;
        let playlist = PLAYLIST::RESET
            .with_target(PlaylistTarget::Vram)
            .try_with_addr((address >> 12) as u32)
            .map_err(|_| MemoryError::OutOfReach { address })?;
        self.io.write(playlist);
        self.io.write(PLAYLIST_LEN::RESET.with_count(count));
        Ok(())
    }
}
