//! Bring-up: probe, then PFIFO initialised in the order of Linux nouveau
//! nvkm/engine/fifo/nv50.c (the documents give none): PFIFO reset through `PMC.ENABLE`, the
//! two undocumented settings, interrupts acknowledged and enabled, every channel table entry
//! cleared, an empty playlist, pusher and puller access, then channel switching.

use core::cell::Cell;

use baregpu_hal::time::Clock;
use baregpu_hal::{RegisterIo, RegisterIoExt};
use baregpu_regs::nvidia::pfifo::{
    CACHE1_PULL0_G80_UNTIL_GF100 as CACHE1_PULL0, CACHE1_PUSH0_G80_UNTIL_GF100 as CACHE1_PUSH0,
    CACHES_G80_UNTIL_GF100 as CACHES, CHAN_TABLE_G84_UNTIL_GF100 as CHAN_TABLE,
    INTR_EN_G80_UNTIL_GF100 as INTR_EN, INTR_G80_UNTIL_GF100 as INTR,
    UNK044_G80_UNTIL_GF100 as UNK044, UNK50C_G80_UNTIL_GF100 as UNK50C,
};
use baregpu_regs::nvidia::pmc::{ENABLE, INTR_MASK_GT215_ONWARD as INTR_MASK};

use super::{ChannelSlot, Tesla, TeslaConfig};
use crate::Bar;
use crate::channel::{CHANNEL_SLOTS, layout, ramfc};
use crate::error::InitError;
use crate::identity::probe;
use crate::memory::VramArena;

/// The value Linux nouveau nv50.c writes to `PFIFO.UNK50C` at init (undocumented).
const UNK50C_NOUVEAU: u32 = 0x6f3c_fc34;

/// Every PFIFO interrupt the driver handles, enabled at init: nouveau enables all but
/// `NOTIFY` (bit 30, non-stall), which [`Tesla::set_notify_interrupts`] turns on.
pub(crate) const ENABLED_INTERRUPTS: INTR_EN = INTR_EN::RESET
    .with_cache_error(true)
    .with_bar_fault(true)
    .with_peephole_fault(true)
    .with_pio_error(true)
    .with_dma_pusher(true)
    .with_semaphore(true);

impl<IO: RegisterIo, C: Clock> Tesla<IO, C> {
    /// Probe the GPU at `io` (`PMC.BOOT_0`: an unsupported, unknown or absent chip is an
    /// [`InitError`] before any write) and bring PFIFO up: reset through `PMC.ENABLE` (off,
    /// then on: no engine register is touched before), `UNK50C`, `UNK044`, `INTR` acknowledged,
    /// `INTR_EN`, every `CHAN_TABLE` entry cleared, an empty playlist in the driver's VRAM
    /// (`PLAYLIST`, then `PLAYLIST_LEN`), `CACHE1_PUSH0`, `CACHE1_PULL0`, `CACHES.REASSIGN`;
    /// then every PMC line masked from the PCI interrupt (`PMC.INTR_MASK`, GT215) until
    /// [`enable_interrupts`](Self::enable_interrupts).
    pub fn init(io: IO, clock: C, config: TeslaConfig) -> Result<Self, InitError> {
        let io = Bar::new(io);
        let identity = probe(&io)?;
        let mut vram = VramArena::new(config.vram.address, config.vram.size);
        let playlist = vram.alloc(layout::PLAYLIST_BYTES, layout::PLAYLIST_ALIGN)?;
        let tesla = Tesla {
            io,
            clock,
            identity,
            config,
            window: Cell::new(None),
            vram,
            playlist,
            channels: [ChannelSlot::EMPTY; CHANNEL_SLOTS],
        };
        tesla.reset_pfifo();
        tesla.init_pfifo()?;
        Ok(tesla)
    }

    /// PFIFO held in reset and released (`PMC.ENABLE.PFIFO` off, then on): its state starts
    /// from the hardware defaults.
    fn reset_pfifo(&self) {
        self.io.modify::<ENABLE>(|e| e.with_pfifo(false));
        self.io.modify::<ENABLE>(|e| e.with_pfifo(true));
    }

    fn init_pfifo(&self) -> Result<(), InitError> {
        self.io.write(UNK50C::RESET.with_value(UNK50C_NOUVEAU));
        self.io.write(UNK044::RESET.with_value(ramfc::TIMESLICE));
        // Acknowledge whatever is pending (every bit, as nouveau does).
        self.io.write(INTR::from_raw(u32::MAX));
        self.io.write(ENABLED_INTERRUPTS);
        for i in 0..CHANNEL_SLOTS {
            // In range: CHANNEL_SLOTS is the table's count.
            let _ = self.io.write_at(i, CHAN_TABLE::RESET);
        }
        self.write_playlist()?;
        self.io.write(CACHE1_PUSH0::RESET.with_access(true));
        self.io.write(CACHE1_PULL0::RESET.with_access(true));
        self.io.write(CACHES::RESET.with_reassign(true));
        // No line reaches the PCI interrupt until the kernel asks (`enable_interrupts`).
        self.io.write(INTR_MASK::RESET);
        super::check_alive(&self.io)?;
        Ok(())
    }
}
