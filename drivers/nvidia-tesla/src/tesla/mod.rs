//! The running GPU: the [`Tesla`] handle. Each concern is a child module: [`bringup`] (probe,
//! PMC enable, PFIFO init in the documented order), [`channels`] (channel structures, RAMHT,
//! channel table, playlist, enable/disable/unload), [`interrupts`] (PMC routing, PFIFO faults
//! decoded, channel recovery).

pub(crate) mod bringup;
pub(crate) mod channels;
pub(crate) mod interrupts;

use core::cell::Cell;
use core::time::Duration;

use baregpu_hal::time::Clock;
use baregpu_hal::{RegisterIo, RegisterIoExt};
use baregpu_regs::nvidia::pfifo::CHAN_TABLE_G84_UNTIL_GF100 as CHAN_TABLE;
use baregpu_regs::nvidia::pmc::BOOT_0;

use crate::Bar;
use crate::channel::{CHANNEL_SLOTS, ChannelMemory, Pusher};
use crate::error::{DeviceGone, FifoError};
use crate::identity::Identity;
use crate::memory::{Pmem, VramArena, VramBlock};

/// What the driver may use, and how long it waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct TeslaConfig {
    /// The VRAM range the driver places channel structures, RAMFC, RAMHT and the playlist in
    /// (linear VRAM addresses; the kernel keeps it from everything else).
    pub vram: VramBlock,
    /// How long a channel unload may take.
    pub unload_timeout: Duration,
}

impl TeslaConfig {
    /// The driver's VRAM at `address`, `size` bytes; default timeouts.
    pub const fn new(address: u64, size: u64) -> Self {
        TeslaConfig {
            vram: VramBlock { address, size },
            unload_timeout: Duration::from_millis(100),
        }
    }
}

/// One channel's state as the driver keeps it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ChannelSlot {
    /// Its memory, kept for the id once placed (a channel created again reuses it).
    pub(crate) memory: Option<ChannelMemory>,
    /// How the pusher fetches, while the channel exists.
    pub(crate) pusher: Option<Pusher>,
    /// The next free object offset in the channel structure.
    pub(crate) next_object: u64,
    /// In the playlist.
    pub(crate) enabled: bool,
    /// The last PFIFO error that named the channel, until it is recovered.
    pub(crate) fault: Option<FifoError>,
}

impl ChannelSlot {
    const EMPTY: ChannelSlot =
        ChannelSlot { memory: None, pusher: None, next_object: 0, enabled: false, fault: None };
}

/// An NV50-family GPU (GT215, GT216, GT218), probed, with PFIFO brought up.
///
/// `IO` is the BAR0 register window, `C` the clock bounding every wait.
pub struct Tesla<IO: RegisterIo, C: Clock> {
    io: Bar<IO>,
    clock: C,
    identity: Identity,
    config: TeslaConfig,
    /// Where the PMEM window points.
    window: Cell<Option<u64>>,
    vram: VramArena,
    playlist: VramBlock,
    channels: [ChannelSlot; CHANNEL_SLOTS],
}

impl<IO: RegisterIo, C: Clock> Tesla<IO, C> {
    /// What `PMC.BOOT_0` said at bring-up.
    pub fn identity(&self) -> &Identity {
        &self.identity
    }

    /// The register window, bound to the nVidia family (for tests and tools).
    pub fn io(&self) -> &Bar<IO> {
        &self.io
    }

    /// The clock.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// The configuration.
    pub fn config(&self) -> &TeslaConfig {
        &self.config
    }

    /// VRAM through the PMEM window.
    pub fn pmem(&self) -> Pmem<'_, IO> {
        Pmem::new(&self.io, &self.window)
    }

    /// Bytes of the driver's VRAM not handed out yet.
    pub fn vram_free(&self) -> u64 {
        self.vram.free()
    }

    /// `Err(DeviceGone)` if the GPU reads all-ones (`PMC.BOOT_0` never does: its chipset field
    /// holds a §2.2.3 id).
    pub fn check_alive(&self) -> Result<(), DeviceGone> {
        check_alive(&self.io)
    }
}

/// `Err(DeviceGone)` if `PMC.BOOT_0` reads all-ones.
pub(crate) fn check_alive(io: &Bar<impl RegisterIo>) -> Result<(), DeviceGone> {
    if io.read::<BOOT_0>().raw() == u32::MAX { Err(DeviceGone) } else { Ok(()) }
}

impl<IO: RegisterIo, C: Clock> Drop for Tesla<IO, C> {
    /// Every channel stopped (an empty playlist, then every table entry disabled): no
    /// pushbuffer in the caller's memory runs on after the driver is gone.
    fn drop(&mut self) {
        for slot in &mut self.channels {
            slot.enabled = false;
        }
        let _ = self.write_playlist();
        for (i, slot) in self.channels.iter().enumerate() {
            if slot.pusher.is_some() {
                let _ = self.io.write_at(i, CHAN_TABLE::RESET);
            }
        }
    }
}
