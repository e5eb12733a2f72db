//! PFIFO (nvidia-hardware-envytools §2.8): the channel table, RAMFC/RAMHT/DMA objects in VRAM,
//! the channels' control areas (USER), the DMA pusher in DMA and IB modes with the §2.8.3
//! pseudocode and its DMA_PUSHER errors, and the puller's builtin methods (§2.8.4: OBJECT,
//! REF_CNT, the G84 semaphores, the old-style semaphores, NOTIFY_INTR), delivering PCOPY's
//! methods to its falcon's method FIFO.
//!
//! Model decisions where the document is silent (also in the crate README):
//! - A channel's pointers (DMA_PUT/GET, IB_PUT/GET, REF) live in its RAMFC in VRAM
//!   (envytools rnndb G80_RAMFC offsets); the command being decoded, the bound engines and
//!   the semaphore state are kept by the model per channel (no CACHE residency, no context
//!   switch to observe). CACHE1's registers show the channel in `CACHE1_PUSH1.CHID`.
//! - Methods go from pusher to puller directly (no CACHE queue): a method PCOPY's full FIFO
//!   cannot take stalls the pusher before it consumes the word.
//! - Every enabled channel of the channel table is serviced, round-robin; the playlist is not
//!   modelled.
//! - DMA objects are unpaged only (§2.7.8 target 1 VRAM, 2/3 SYSRAM = guest memory); a paged
//!   object faults (the model has no page tables: the VM-less setup).
//! - RAMHT (RAMFC 0x80: entries = 512 << bits 31:27, at most 4096; instance offset >> 4 in
//!   bits 23:0): 8-byte {handle, context} entries, context = engine << 20 | object offset >> 4,
//!   hash = XOR of the handle's log2(entries)-bit pieces (nouveau's G80 hash with channel id 0),
//!   linear probing until an empty entry.
//! - Methods for engines the model does not emulate (PGRAPH, the video engines) raise
//!   CACHE_ERROR like SOFTWARE's: a driver never sees them "run".

use crate::falcon::Falcon;
use crate::vram::Vram;
use baregpu_hal::register::Register;
use baregpu_regs::nvidia::pfifo as p;
use baregpu_regs::nvidia::pfifo_user as u;
use gpu_device_model::{Activity, DeviceContext};

/// Command words the pusher decodes per tick at most (over all channels).
pub const PUSHER_WORDS_PER_TICK: u32 = 32;
/// Channels (§2.8.3: G80 channels 1-126 have DMA control areas; 0 is PIO-only, 127 invalid).
pub const CHANNELS: usize = 128;
/// BAR0 offset of channel 0's control area (§2.8.3: "0xc00000 + 0x2000 * channel ID").
pub const USER_BASE: u32 = 0xc0_0000;
/// Bytes of one control area.
pub const USER_STRIDE: u32 = 0x2000;
/// Largest RAMHT the model accepts (entries).
pub const MAX_RAMHT_ENTRIES: u32 = 4096;

/// RAMFC word offsets, from the shared register database (`baregpu_regs::nvidia::ramfc`: the
/// envytools rnndb fifo/g80_pfifo.xml G80_RAMFC words, each with its source; §2.8 lists the
/// state RAMFC saves but not its layout).
pub mod ramfc {
    use baregpu_hal::register::Register;
    use baregpu_regs::nvidia::ramfc as t;

    const fn at<R: Register>() -> u64 {
        R::OFFSET as u64
    }

    /// ib_put.
    pub const IB_PUT: u64 = at::<t::IB_PUT>();
    /// ib_get.
    pub const IB_GET: u64 = at::<t::IB_GET>();
    /// dma_put, low 32 bits.
    pub const DMA_PUT: u64 = at::<t::DMA_PUT>();
    /// dma_put bits 32-39.
    pub const DMA_PUT_HIGH: u64 = at::<t::DMA_PUT_HIGH>();
    /// dma_get, low 32 bits.
    pub const DMA_GET: u64 = at::<t::DMA_GET>();
    /// dma_get bits 32-39.
    pub const DMA_GET_HIGH: u64 = at::<t::DMA_GET_HIGH>();
    /// DMA fetch control ([`IB_ENABLE`]).
    pub const DMA_FETCH: u64 = at::<t::DMA_FETCH>();
    /// The pushbuffer DMA object's selector (instance offset >> 4).
    pub const DMA_INSTANCE: u64 = at::<t::DMA_INSTANCE>();
    /// IB address bits 0-31.
    pub const IB_ADDRESS_LOW: u64 = at::<t::IB_ADDRESS_LOW>();
    /// IB address bits 32-39 and log2 of the entry count.
    pub const IB_CONFIG: u64 = at::<t::IB_CONFIG>();
    /// The reference counter.
    pub const REF: u64 = at::<t::REF>();
    /// RAMHT: entries = 512 << bits 31:27; instance offset >> 4 in bits 23:0.
    pub const RAMHT: u64 = at::<t::RAMHT>();
    /// The channel structure (instance) address >> 12 [G84].
    pub const CHAN_INST: u64 = at::<t::CHAN_INST>();
    /// DMA_FETCH's IB mode bit.
    pub const IB_ENABLE: u32 = t::DMA_FETCH::IB_ENABLE.set(0, 1);
    /// IB_CONFIG's fields.
    pub use t::IB_CONFIG as IbConfig;
}

/// Engine ids of the NV4:GF100 PFIFO (§2.8.1 table).
pub mod engine {
    /// The SOFTWARE pseudo-engine.
    pub const SOFTWARE: u32 = 0;
    /// PCOPY (GT215-).
    pub const PCOPY: u32 = 3;
}

/// Puller builtin methods (§2.8.4 table).
mod mthd {
    pub const OBJECT: u32 = 0x0000;
    pub const SEMAPHORE_ADDRESS_HIGH: u32 = 0x0010;
    pub const SEMAPHORE_ADDRESS_LOW: u32 = 0x0014;
    pub const SEMAPHORE_SEQUENCE: u32 = 0x0018;
    pub const SEMAPHORE_TRIGGER: u32 = 0x001c;
    pub const NOTIFY_INTR: u32 = 0x0020;
    pub const WRCACHE_FLUSH: u32 = 0x0024;
    pub const REF_CNT: u32 = 0x0050;
    pub const DMA_SEMAPHORE: u32 = 0x0060;
    pub const SEMAPHORE_OFFSET: u32 = 0x0064;
    pub const SEMAPHORE_ACQUIRE: u32 = 0x0068;
    pub const SEMAPHORE_RELEASE: u32 = 0x006c;
    pub const YIELD: u32 = 0x0080;
    /// Methods whose parameter is an object handle the puller looks up (§2.8.4).
    pub const HANDLES: core::ops::Range<u32> = 0x180..0x200;
}

/// DMA_PUSHER error kinds (§2.8.3 "Errors"), as `CACHE1_DMA_STATE.ERROR` reports them.
pub mod pusher_error {
    /// A call while a subroutine is active.
    pub const CALL_SUBR_ACTIVE: u32 = 1;
    /// A special method the puller does not have.
    pub const INVALID_MTHD: u32 = 2;
    /// A return with no subroutine active.
    pub const RET_SUBR_INACTIVE: u32 = 3;
    /// A command word no form matches.
    pub const INVALID_CMD: u32 = 4;
    /// A zero-length IB entry.
    pub const IB_EMPTY: u32 = 5;
    /// A pushbuffer or IB read that faulted.
    pub const MEM_FAULT: u32 = 6;
}

/// G80:GF100 SEMAPHORE error subtypes (§2.8.4).
pub mod semaphore_error {
    /// Address not divisible by 4.
    pub const ADDRESS_UNALIGNED: u32 = 1;
    /// Acquire/release without a DMA object, or an unknown trigger operation.
    pub const INVALID_STATE: u32 = 2;
    /// A >40-bit address or >16-bit offset.
    pub const ADDRESS_TOO_LARGE: u32 = 3;
    /// The semaphore access faulted.
    pub const MEM_FAULT: u32 = 4;
}

/// Why a channel stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelError {
    /// A DMA_PUSHER error ([`pusher_error`]).
    Pusher(u32),
    /// A SEMAPHORE error ([`semaphore_error`]).
    Semaphore(u32),
    /// A method the bound engine cannot take (SOFTWARE, an engine not emulated, an unbound
    /// subchannel, a handle RAMHT does not have).
    Cache,
}

/// A semaphore acquire waiting for memory (§2.8.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Acquire {
    address: u64,
    value: u32,
    /// 1 equal, 4 greater or equal.
    op: u32,
}

/// The model's per-channel pusher and puller state (see the module decisions).
#[derive(Debug, Clone, Copy, Default)]
struct Channel {
    mthd: u32,
    subc: u32,
    mcnt: u32,
    ni: bool,
    lenp: bool,
    subr_active: bool,
    subr_return: u32,
    engines: [u32; 8],
    sem_address: u64,
    sem_sequence: u32,
    dma_semaphore: u32,
    sem_offset: Option<u32>,
    acquire: Option<Acquire>,
    /// Waiting for PCOPY to drain before REF_CNT writes this value.
    ref_pending: Option<u32>,
    /// dma_mget and dma_mget_val (IB mode: the main pushbuffer's last read address).
    mget: u64,
    mget_val: bool,
    /// The current IB entry's NOT_MAIN.
    nonmain: bool,
    /// Read shadows of DMA_GET_HIGH and DMA_MGET_HIGH, write shadow of DMA_PUT_HIGH.
    get_high_rs: u32,
    mget_high_rs: u32,
    put_high_ws: u32,
    error: Option<ChannelError>,
}

impl Channel {
    /// Forgets the pusher's state and the channel's error, keeping the puller's: the two
    /// tables of §2.8.3 "Pusher state" (command decoding, subroutine, IB position and
    /// `dma_mget`, the read/write shadows) and §2.8.4 "Puller state" (`engines`, the acquire,
    /// `dma_semaphore`, `semaphore_offset`/`_off_val`, `semaphore_address`/`_sequence`; the
    /// model's REF_CNT waiting for PCOPY is a puller method in progress).
    fn clear_pusher_state(&mut self) {
        *self = Self {
            engines: self.engines,
            sem_address: self.sem_address,
            sem_sequence: self.sem_sequence,
            dma_semaphore: self.dma_semaphore,
            sem_offset: self.sem_offset,
            acquire: self.acquire,
            ref_pending: self.ref_pending,
            ..Self::default()
        };
    }
}

/// An unpaged DMA object (§2.7.8 "DMA objects").
#[derive(Debug, Clone, Copy)]
struct DmaObj {
    target: u32,
    base: u64,
    limit: u64,
}

/// What a memory access through a DMA object hit.
enum Place {
    Vram(u64),
    Sysram(u64),
}

/// Counters for white-box tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PfifoStats {
    /// Command words the pusher decoded.
    pub words: u64,
    /// IB entries fetched.
    pub ib_entries: u64,
    /// Host writes of a channel's `IB_PUT` the pusher took (the doorbell).
    pub ib_put_writes: u64,
    /// Methods the puller executed or delivered.
    pub methods: u64,
    /// Most command words one tick decoded.
    pub max_tick_words: u32,
}

fn off<R: Register>() -> u32 {
    R::OFFSET as u32
}

/// PFIFO.
pub struct Pfifo {
    intr: u32,
    intr_en: u32,
    table: [u32; CHANNELS],
    push_access: bool,
    pull_access: bool,
    /// CACHE1_PUSH1: the channel CACHE1 shows.
    current: u32,
    channels: Box<[Channel; CHANNELS]>,
    next: usize,
    stats: PfifoStats,
}

impl Default for Pfifo {
    fn default() -> Self {
        Self::new()
    }
}

/// Everything a pusher step reaches besides PFIFO itself.
pub(crate) struct Env<'a, 'b> {
    /// VRAM.
    pub(crate) vram: &'a mut Vram,
    /// PCOPY's falcon (the only PFIFO engine emulated), `None` while PMC holds it in reset.
    pub(crate) pcopy: Option<&'a mut Falcon>,
    /// PTIMER time for semaphore releases.
    pub(crate) time: u64,
    /// Guest memory.
    pub(crate) dev: &'a mut DeviceContext<'b>,
    /// One-shot injected fault of the next pushbuffer or IB fetch.
    pub(crate) dma_fault: &'a mut bool,
}

impl Pfifo {
    /// PFIFO after reset: no channel enabled, pusher and puller off.
    pub fn new() -> Self {
        Pfifo {
            intr: 0,
            intr_en: 0,
            table: [0; CHANNELS],
            push_access: false,
            pull_access: false,
            current: 0,
            channels: Box::new([Channel::default(); CHANNELS]),
            next: 0,
            stats: PfifoStats::default(),
        }
    }

    /// Counters.
    pub fn stats(&self) -> PfifoStats {
        self.stats
    }

    /// Why channel `chid` stopped, if it did.
    pub fn channel_error(&self, chid: usize) -> Option<ChannelError> {
        self.channels.get(chid).and_then(|c| c.error)
    }

    /// Whether the PMC PFIFO line is active.
    pub fn pmc_line(&self) -> bool {
        self.intr & self.intr_en != 0
    }

    fn ramfc(&self, chid: usize) -> Option<u64> {
        let entry = *self.table.get(chid)?;
        type T = p::CHAN_TABLE_G84_UNTIL_GF100;
        (T::ENABLE.get(entry) != 0 && T::TARGET.get(entry) == 0)
            .then(|| u64::from(T::RAMFC.get(entry)) << 8)
    }

    fn field(&self, vram: &Vram, chid: usize, offset: u64) -> u32 {
        self.ramfc(chid).and_then(|r| vram.read_u32(r + offset)).unwrap_or(0)
    }

    fn set_field(&self, vram: &mut Vram, chid: usize, offset: u64, value: u32) -> bool {
        self.ramfc(chid).is_some_and(|r| vram.write_u32(r + offset, value))
    }

    /// Whether BAR0 `offset` is PFIFO's (its registers or a control area).
    pub(crate) fn owns(offset: u32) -> bool {
        (0x2000..0x4000).contains(&offset)
            || (USER_BASE..USER_BASE + CHANNELS as u32 * USER_STRIDE).contains(&offset)
    }

    fn cache1_state(&self) -> u32 {
        type S = p::CACHE1_DMA_STATE_G80_UNTIL_GF100;
        let c = &self.channels[self.current as usize];
        let error = match c.error {
            Some(ChannelError::Pusher(e)) => e,
            _ => 0,
        };
        let v = S::METHOD.set(0, c.mthd >> 2);
        let v = S::SUBCHANNEL.set(v, c.subc);
        let v = S::METHOD_COUNT.set(v, c.mcnt.min(0x7ff));
        S::ERROR_CODE.set(v, error)
    }

    /// A BAR0 read of PFIFO's `offset`.
    pub(crate) fn read(&mut self, offset: u32, vram: &Vram) -> u32 {
        if offset >= USER_BASE {
            return self.user_read(offset, vram);
        }
        let cur = self.current as usize;
        let r = offset; // the database offsets of an absolute block include its base
        match r {
            _ if r == off::<p::INTR_G80_UNTIL_GF100>() => self.intr,
            _ if r == off::<p::INTR_EN_G80_UNTIL_GF100>() => self.intr_en,
            _ if (off::<p::CHAN_TABLE_G84_UNTIL_GF100>()
                ..off::<p::CHAN_TABLE_G84_UNTIL_GF100>() + 4 * CHANNELS as u32)
                .contains(&r) =>
            {
                self.table[((r - off::<p::CHAN_TABLE_G84_UNTIL_GF100>()) / 4) as usize]
            }
            _ if r == off::<p::CACHE1_PUSH0_G80_UNTIL_GF100>() => u32::from(self.push_access),
            _ if r == off::<p::CACHE1_PULL0_G80_UNTIL_GF100>() => u32::from(self.pull_access),
            _ if r == off::<p::CACHE1_PUSH1_G80_UNTIL_GF100>() => {
                p::CACHE1_PUSH1_G80_UNTIL_GF100::MODE.set(self.current, 1)
            }
            _ if r == off::<p::CACHE1_DMA_STATE_G80_UNTIL_GF100>() => self.cache1_state(),
            _ if r == off::<p::CACHE1_DMA_PUT_G80_UNTIL_GF100>() => {
                self.field(vram, cur, ramfc::DMA_PUT)
            }
            _ if r == off::<p::CACHE1_DMA_GET_G80_UNTIL_GF100>() => {
                self.field(vram, cur, ramfc::DMA_GET)
            }
            _ if r == off::<p::CACHE1_REF_G80_UNTIL_GF100>() => self.field(vram, cur, ramfc::REF),
            _ if r == off::<p::CACHE1_IB_PUT_G80_UNTIL_GF100>() => {
                self.field(vram, cur, ramfc::IB_PUT)
            }
            _ if r == off::<p::CACHE1_IB_GET_G80_UNTIL_GF100>() => {
                self.field(vram, cur, ramfc::IB_GET)
            }
            _ => 0,
        }
    }

    /// A BAR0 write of PFIFO's `offset`; false if it did nothing (a hole, a read-only word,
    /// a disabled channel's control area).
    pub(crate) fn write(&mut self, offset: u32, value: u32, vram: &mut Vram) -> bool {
        if offset >= USER_BASE {
            return self.user_write(offset, value, vram);
        }
        let cur = self.current as usize;
        let r = offset; // the database offsets of an absolute block include its base
        let table = off::<p::CHAN_TABLE_G84_UNTIL_GF100>();
        match r {
            _ if r == off::<p::INTR_G80_UNTIL_GF100>() => self.intr &= !value,
            _ if r == off::<p::INTR_EN_G80_UNTIL_GF100>() => {
                self.intr_en = value & p::INTR_EN_G80_UNTIL_GF100::WRITE_MASK;
            }
            _ if (table..table + 4 * CHANNELS as u32).contains(&r) => {
                type T = p::CHAN_TABLE_G84_UNTIL_GF100;
                let chid = ((r - table) / 4) as usize;
                let value = value & T::WRITE_MASK;
                // Disabling keeps the channel's state: the hardware unloads pusher, CACHE and
                // puller state to RAMFC and reloads it when the channel runs again (§2.8
                // "Overall operation"). An entry naming another RAMFC is another channel,
                // whose state the driver has just written fresh.
                if T::RAMFC.get(value) != T::RAMFC.get(self.table[chid]) {
                    self.channels[chid] = Channel::default();
                }
                self.table[chid] = value;
            }
            _ if r == off::<p::CACHE1_PUSH0_G80_UNTIL_GF100>() => self.push_access = value & 1 != 0,
            _ if r == off::<p::CACHE1_PULL0_G80_UNTIL_GF100>() => self.pull_access = value & 1 != 0,
            _ if r == off::<p::CACHE1_PUSH1_G80_UNTIL_GF100>() => {
                self.current = p::CACHE1_PUSH1_G80_UNTIL_GF100::CHID.get(value);
            }
            _ if r == off::<p::CACHE1_DMA_STATE_G80_UNTIL_GF100>() => {
                // Recovery (§2.8.3): clearing the state lets the channel go on; its command
                // decoding starts afresh at DMA_GET. Only the pusher's state goes: the
                // puller's (bound engines, semaphore DMA object, address and sequence, an
                // acquire in progress) survives.
                if p::CACHE1_DMA_STATE_G80_UNTIL_GF100::ERROR_CODE.get(value) == 0 {
                    self.channels[cur].clear_pusher_state();
                }
            }
            _ if r == off::<p::CACHE1_DMA_GET_G80_UNTIL_GF100>() => {
                return self.set_field(vram, cur, ramfc::DMA_GET, value);
            }
            _ if r == off::<p::CACHE1_DMA_PUT_G80_UNTIL_GF100>() => {
                return self.set_field(vram, cur, ramfc::DMA_PUT, value);
            }
            _ if r == off::<p::CACHE1_REF_G80_UNTIL_GF100>() => {
                return self.set_field(vram, cur, ramfc::REF, value);
            }
            _ if r == off::<p::CACHE1_IB_GET_G80_UNTIL_GF100>() => {
                return self.set_field(vram, cur, ramfc::IB_GET, value);
            }
            _ if r == off::<p::CACHE1_IB_PUT_G80_UNTIL_GF100>() => {
                return self.set_field(vram, cur, ramfc::IB_PUT, value);
            }
            _ => return false,
        }
        true
    }

    /// The channel and register offset of a control-area access, for channels 1-126.
    fn user_slot(offset: u32) -> Option<(usize, u32)> {
        let chid = ((offset - USER_BASE) / USER_STRIDE) as usize;
        (1..CHANNELS - 1).contains(&chid).then(|| (chid, (offset - USER_BASE) % USER_STRIDE))
    }

    /// A control-area read (§2.8.3 table). Reading DMA_GET or DMA_MGET latches its high
    /// part into the read shadow DMA_GET_HIGH / DMA_MGET_HIGH return, so a low-then-high read
    /// pair is one 40-bit value.
    fn user_read(&mut self, offset: u32, vram: &Vram) -> u32 {
        let Some((chid, r)) = Self::user_slot(offset) else { return 0 };
        let plain = match r {
            _ if r == off::<u::DMA_PUT>() => Some(ramfc::DMA_PUT),
            _ if r == off::<u::REF>() => Some(ramfc::REF),
            _ if r == off::<u::DMA_PUT_HIGH>() => Some(ramfc::DMA_PUT_HIGH),
            _ if r == off::<u::IB_GET>() => Some(ramfc::IB_GET),
            _ if r == off::<u::IB_PUT>() => Some(ramfc::IB_PUT),
            _ => None,
        };
        if let Some(field) = plain {
            return self.field(vram, chid, field);
        }
        let get = self.field(vram, chid, ramfc::DMA_GET);
        let get_high = self.field(vram, chid, ramfc::DMA_GET_HIGH);
        let c = &mut self.channels[chid];
        match r {
            _ if r == off::<u::DMA_GET>() => {
                c.get_high_rs = get_high;
                get
            }
            _ if r == off::<u::DMA_GET_HIGH>() => c.get_high_rs,
            // "connected to subr_return when subroutine active, dma_get when inactive"
            _ if r == off::<u::DMA_CGET_NV40_ONWARD>() => {
                if c.subr_active {
                    c.subr_return
                } else {
                    get
                }
            }
            _ if r == off::<u::DMA_MGET>() => {
                c.mget_high_rs = (c.mget >> 32) as u32 & 0xff | u32::from(c.mget_val) << 31;
                c.mget as u32
            }
            _ if r == off::<u::DMA_MGET_HIGH>() => c.mget_high_rs,
            _ => 0,
        }
    }

    /// A control-area write: DMA_PUT (with the DMA_PUT_HIGH write shadow, "first write the
    /// high part, then the low part") outside IB mode, IB_PUT in IB mode.
    fn user_write(&mut self, offset: u32, value: u32, vram: &mut Vram) -> bool {
        let Some((chid, r)) = Self::user_slot(offset) else { return false };
        let ib = self.field(vram, chid, ramfc::DMA_FETCH) & ramfc::IB_ENABLE != 0;
        if r == off::<u::DMA_PUT_HIGH>() && !ib {
            self.channels[chid].put_high_ws = value & 0xff;
            true
        } else if r == off::<u::DMA_PUT>() && !ib {
            let high = self.channels[chid].put_high_ws;
            self.set_field(vram, chid, ramfc::DMA_PUT_HIGH, high)
                && self.set_field(vram, chid, ramfc::DMA_PUT, value)
        } else if r == off::<u::IB_PUT>() && ib {
            // ib_put counts entries in 0..2^ib_order (§2.8.3 "IB mode"): a value past the
            // end is refused, not wrapped.
            let order = ramfc::IbConfig::ORDER.get(self.field(vram, chid, ramfc::IB_CONFIG));
            let taken = value < 1 << order && self.set_field(vram, chid, ramfc::IB_PUT, value);
            self.stats.ib_put_writes += u64::from(taken);
            taken
        } else {
            false
        }
    }

    /// Whether the pusher has work: an enabled channel with words or IB entries pending, or
    /// a channel waiting on a semaphore or on PCOPY.
    pub(crate) fn busy(&self, vram: &Vram) -> bool {
        self.push_access && self.pull_access && (0..CHANNELS).any(|c| self.pending(vram, c))
    }

    fn pending(&self, vram: &Vram, chid: usize) -> bool {
        let ch = &self.channels[chid];
        if self.ramfc(chid).is_none() || ch.error.is_some() {
            return false;
        }
        let f = |o| self.field(vram, chid, o);
        let ib = f(ramfc::DMA_FETCH) & ramfc::IB_ENABLE != 0;
        ch.acquire.is_some()
            || ch.ref_pending.is_some()
            || f(ramfc::DMA_GET) != f(ramfc::DMA_PUT)
            || f(ramfc::DMA_GET_HIGH) != f(ramfc::DMA_PUT_HIGH)
            || (ib && f(ramfc::IB_GET) != f(ramfc::IB_PUT))
    }

    /// One pusher tick: up to [`PUSHER_WORDS_PER_TICK`] words of the next channel with work.
    pub(crate) fn step(&mut self, env: &mut Env<'_, '_>) -> Activity {
        if !self.push_access || !self.pull_access {
            // With the puller off nothing can take the methods: the pusher stands still.
            return Activity::Idle;
        }
        let mut words = 0;
        let (mut progressed, mut blocked) = (false, false);
        for i in 0..CHANNELS {
            let chid = (self.next + i) % CHANNELS;
            if words >= PUSHER_WORDS_PER_TICK {
                break;
            }
            if !self.pending(env.vram, chid) {
                continue;
            }
            while words < PUSHER_WORDS_PER_TICK {
                match self.step_channel(chid, env) {
                    Ok(Progress::Word) => {
                        words += 1;
                        progressed = true;
                    }
                    Ok(Progress::Idle) => break,
                    Ok(Progress::Blocked) => {
                        blocked = true;
                        break;
                    }
                    Err(e) => {
                        self.fail(chid, e);
                        progressed = true;
                        break;
                    }
                }
            }
        }
        // The next tick starts with the next channel: no channel starves another.
        self.next = (self.next + 1) % CHANNELS;
        self.stats.words += u64::from(words);
        self.stats.max_tick_words = self.stats.max_tick_words.max(words);
        if progressed {
            Activity::Busy
        } else if blocked {
            Activity::Waiting
        } else {
            Activity::Idle
        }
    }

    fn fail(&mut self, chid: usize, error: ChannelError) {
        self.channels[chid].error = Some(error);
        self.current = chid as u32;
        type I = p::INTR_G80_UNTIL_GF100;
        let bit = match error {
            ChannelError::Pusher(_) => I::DMA_PUSHER,
            ChannelError::Semaphore(_) => I::SEMAPHORE,
            ChannelError::Cache => I::CACHE_ERROR,
        };
        self.intr = bit.set(self.intr, 1);
    }

    fn dmaobj(&self, vram: &Vram, chid: usize, selector: u32) -> Option<DmaObj> {
        if selector == 0 {
            return None; // NULL_DMAOBJ (§2.7.8)
        }
        let inst = u64::from(self.field(vram, chid, ramfc::CHAN_INST)) << 12;
        let at = inst + (u64::from(selector & 0xffff) << 4);
        let w = |i: u64| vram.read_u32(at + 4 * i);
        let (w0, w1, w2, w3) = (w(0)?, w(1)?, w(2)?, w(3)?);
        Some(DmaObj {
            target: w0 >> 16 & 3,
            base: u64::from(w2) | u64::from(w3 & 0xff) << 32,
            limit: u64::from(w1) | u64::from(w3 >> 24) << 32,
        })
    }

    /// Translate `logical` through a DMA object (§2.7.8): unpaged only, the address below
    /// the limit.
    fn place(obj: DmaObj, logical: u64) -> Option<Place> {
        let address = obj.base.checked_add(logical)?;
        if address >= obj.limit || address & 3 != 0 {
            return None;
        }
        match obj.target {
            1 => Some(Place::Vram(address)),
            2 | 3 if address != 0 => Some(Place::Sysram(address)),
            _ => None,
        }
    }

    fn read_place(env: &mut Env<'_, '_>, place: Place) -> Option<u32> {
        match place {
            Place::Vram(a) => env.vram.read_u32(a),
            Place::Sysram(a) => env.dev.dma_read_u32(a).ok(),
        }
    }

    fn write_place(env: &mut Env<'_, '_>, place: Place, value: u32) -> bool {
        match place {
            Place::Vram(a) => env.vram.write_u32(a, value),
            Place::Sysram(a) => env.dev.dma_write_u32(a, value).is_ok(),
        }
    }

    /// A pushbuffer or IB word at logical `address` of the channel's pushbuffer object.
    fn fetch(&self, env: &mut Env<'_, '_>, chid: usize, address: u64) -> Result<u32, ChannelError> {
        let fault = ChannelError::Pusher(pusher_error::MEM_FAULT);
        if std::mem::take(env.dma_fault) {
            return Err(fault);
        }
        let selector = self.field(env.vram, chid, ramfc::DMA_INSTANCE);
        let obj = self.dmaobj(env.vram, chid, selector).ok_or(fault)?;
        let place = Self::place(obj, address).ok_or(fault)?;
        Self::read_place(env, place).ok_or(fault)
    }

    fn get(&self, vram: &Vram, chid: usize) -> u64 {
        u64::from(self.field(vram, chid, ramfc::DMA_GET))
            | u64::from(self.field(vram, chid, ramfc::DMA_GET_HIGH) & 0xff) << 32
    }

    fn set_get(&self, vram: &mut Vram, chid: usize, get: u64) {
        self.set_field(vram, chid, ramfc::DMA_GET, get as u32);
        self.set_field(vram, chid, ramfc::DMA_GET_HIGH, (get >> 32) as u32 & 0xff);
    }

    /// One word (or one IB entry, or one retry of a blocked puller method).
    fn step_channel(
        &mut self,
        chid: usize,
        env: &mut Env<'_, '_>,
    ) -> Result<Progress, ChannelError> {
        if let Some(a) = self.channels[chid].acquire {
            if !self.acquire_done(env, chid, a)? {
                return Ok(Progress::Blocked);
            }
            self.channels[chid].acquire = None;
        }
        if let Some(value) = self.channels[chid].ref_pending {
            if !env.pcopy.as_ref().is_none_or(|f| f.method_fifo_empty()) {
                return Ok(Progress::Blocked);
            }
            self.set_field(env.vram, chid, ramfc::REF, value);
            self.channels[chid].ref_pending = None;
        }
        let get = self.get(env.vram, chid);
        let put = u64::from(self.field(env.vram, chid, ramfc::DMA_PUT))
            | u64::from(self.field(env.vram, chid, ramfc::DMA_PUT_HIGH) & 0xff) << 32;
        let ib = self.field(env.vram, chid, ramfc::DMA_FETCH) & ramfc::IB_ENABLE != 0;
        if get != put {
            let c = self.channels[chid];
            // A data word for PCOPY that its full FIFO cannot take waits before it is read.
            let to_engine = c.mthd == mthd::OBJECT
                || (c.mthd >= 0x100 && c.engines[c.subc as usize] == engine::PCOPY);
            if c.mcnt != 0
                && !c.lenp
                && to_engine
                && env.pcopy.as_ref().is_some_and(|f| !f.method_fifo_free())
            {
                return Ok(Progress::Blocked);
            }
            let word = self.fetch(env, chid, get)?;
            self.set_get(env.vram, chid, get + 4);
            let c = &mut self.channels[chid];
            if !c.nonmain {
                (c.mget, c.mget_val) = (get + 4, true);
            }
            self.word(env, chid, word, ib)?;
            return Ok(Progress::Word);
        }
        if !ib {
            return Ok(Progress::Idle);
        }
        let ib_get = self.field(env.vram, chid, ramfc::IB_GET);
        let ib_put = self.field(env.vram, chid, ramfc::IB_PUT);
        if ib_get == ib_put {
            return Ok(Progress::Idle);
        }
        // §2.8.3 pseudocode: read entry #ib_get, advance ib_get (wrapping at 2^ib_order).
        let config = self.field(env.vram, chid, ramfc::IB_CONFIG);
        let order = ramfc::IbConfig::ORDER.get(config);
        let ib_address = u64::from(self.field(env.vram, chid, ramfc::IB_ADDRESS_LOW))
            | u64::from(ramfc::IbConfig::ADDRESS_HIGH.get(config)) << 32;
        let entry = ib_address + u64::from(ib_get) * 8;
        let low = self.fetch(env, chid, entry)?;
        let high = self.fetch(env, chid, entry + 4)?;
        // ib_get comes from RAMFC, which the host may have written with anything.
        let next = if u64::from(ib_get) + 1 >= 1u64 << order { 0 } else { ib_get + 1 };
        self.set_field(env.vram, chid, ramfc::IB_GET, next);
        self.stats.ib_entries += 1;
        let (start, len) = ib_entry(low, high);
        if len == 0 {
            return Err(ChannelError::Pusher(pusher_error::IB_EMPTY));
        }
        let c = &mut self.channels[chid];
        c.nonmain = high >> 9 & 1 != 0;
        if !c.nonmain {
            c.mget = start;
        }
        let end = start + u64::from(len) * 4;
        self.set_get(env.vram, chid, start);
        self.set_field(env.vram, chid, ramfc::DMA_PUT, end as u32);
        self.set_field(env.vram, chid, ramfc::DMA_PUT_HIGH, (end >> 32) as u32 & 0xff);
        Ok(Progress::Word)
    }

    /// The §2.8.3 pusher's handling of one command-stream word (pre-GF100 forms).
    fn word(
        &mut self,
        env: &mut Env<'_, '_>,
        chid: usize,
        word: u32,
        ib: bool,
    ) -> Result<(), ChannelError> {
        let c = &mut self.channels[chid];
        if c.lenp {
            c.lenp = false;
            c.mcnt = word & 0xff_ffff;
            return Ok(());
        }
        if c.mcnt != 0 {
            let (subc, m, ni) = (c.subc, c.mthd, c.ni);
            if !puller_knows(m) {
                return Err(ChannelError::Pusher(pusher_error::INVALID_MTHD));
            }
            let c = &mut self.channels[chid];
            if !ni {
                c.mthd = (c.mthd + 4) & 0x1ffc;
            }
            c.mcnt -= 1;
            return self.method(env, chid, subc, m, word);
        }
        let get = self.get(env.vram, chid);
        let c = &mut self.channels[chid];
        let jump = match classify(word, ib) {
            Some(Cmd::OldJump(target) | Cmd::Jump(target)) => Some(target),
            Some(Cmd::Call(target)) => {
                if c.subr_active {
                    return Err(ChannelError::Pusher(pusher_error::CALL_SUBR_ACTIVE));
                }
                c.subr_return = get as u32;
                c.subr_active = true;
                Some(target)
            }
            Some(Cmd::Return) => {
                if !c.subr_active {
                    return Err(ChannelError::Pusher(pusher_error::RET_SUBR_INACTIVE));
                }
                c.subr_active = false;
                Some(c.subr_return)
            }
            Some(Cmd::Methods { mthd, subc, count, ni }) => {
                (c.mthd, c.subc, c.mcnt, c.ni) = (mthd, subc, count, ni);
                None
            }
            Some(Cmd::LongNonIncreasing { mthd, subc }) => {
                // The count is the next word.
                (c.mthd, c.subc, c.lenp, c.ni) = (mthd, subc, true, true);
                None
            }
            // SLI conditionals need sli_enable, which the model never sets.
            None => return Err(ChannelError::Pusher(pusher_error::INVALID_CMD)),
        };
        if let Some(target) = jump {
            self.set_get(env.vram, chid, u64::from(target));
        }
        Ok(())
    }

    /// The puller: a builtin method, or delivery to the bound engine (§2.8.4).
    fn method(
        &mut self,
        env: &mut Env<'_, '_>,
        chid: usize,
        subc: u32,
        m: u32,
        data: u32,
    ) -> Result<(), ChannelError> {
        self.stats.methods += 1;
        let sem = |e| Err(ChannelError::Semaphore(e));
        match m {
            mthd::OBJECT => {
                let (engine, object) =
                    self.ramht_lookup(env.vram, chid, data).ok_or(ChannelError::Cache)?;
                self.channels[chid].engines[subc as usize] = engine;
                return self.deliver(env, chid, subc, 0, object);
            }
            mthd::SEMAPHORE_ADDRESS_HIGH => {
                if data > 0xff {
                    return sem(semaphore_error::ADDRESS_TOO_LARGE);
                }
                let c = &mut self.channels[chid];
                c.sem_address = (c.sem_address & 0xffff_ffff) | u64::from(data) << 32;
            }
            mthd::SEMAPHORE_ADDRESS_LOW => {
                if data & 3 != 0 {
                    return sem(semaphore_error::ADDRESS_UNALIGNED);
                }
                let c = &mut self.channels[chid];
                c.sem_address = (c.sem_address & !0xffff_ffff) | u64::from(data);
            }
            mthd::SEMAPHORE_SEQUENCE => self.channels[chid].sem_sequence = data,
            mthd::SEMAPHORE_TRIGGER => {
                let c = self.channels[chid];
                let obj = self
                    .dmaobj(env.vram, chid, c.dma_semaphore)
                    .ok_or(ChannelError::Semaphore(semaphore_error::INVALID_STATE))?;
                match data & 7 {
                    2 => {
                        // WRITE_LONG: sequence, 0, 64-bit PTIMER timestamp (§2.8.4).
                        let words = [c.sem_sequence, 0, env.time as u32, (env.time >> 32) as u32];
                        for (i, w) in words.into_iter().enumerate() {
                            let place = Self::place(obj, c.sem_address + 4 * i as u64)
                                .ok_or(ChannelError::Semaphore(semaphore_error::MEM_FAULT))?;
                            if !Self::write_place(env, place, w) {
                                return sem(semaphore_error::MEM_FAULT);
                            }
                        }
                    }
                    op @ (1 | 4) => {
                        let a = Acquire { address: c.sem_address, value: c.sem_sequence, op };
                        if !self.acquire_done(env, chid, a)? {
                            self.channels[chid].acquire = Some(a);
                        }
                    }
                    _ => return sem(semaphore_error::INVALID_STATE),
                }
            }
            mthd::NOTIFY_INTR => {
                self.intr = p::INTR_G80_UNTIL_GF100::NOTIFY.set(self.intr, 1);
            }
            mthd::WRCACHE_FLUSH | mthd::YIELD => {}
            mthd::REF_CNT => {
                // "it'll also wait for all previously submitted commands to complete
                // execution": PCOPY's FIFO drained.
                self.channels[chid].ref_pending = Some(data);
            }
            mthd::DMA_SEMAPHORE => {
                let (_, object) =
                    self.ramht_lookup(env.vram, chid, data).ok_or(ChannelError::Cache)?;
                self.channels[chid].dma_semaphore = object;
            }
            mthd::SEMAPHORE_OFFSET => {
                if data & 3 != 0 {
                    return sem(semaphore_error::ADDRESS_UNALIGNED);
                }
                if data > 0xffff {
                    return sem(semaphore_error::ADDRESS_TOO_LARGE);
                }
                self.channels[chid].sem_offset = Some(data);
            }
            mthd::SEMAPHORE_ACQUIRE | mthd::SEMAPHORE_RELEASE => {
                let c = self.channels[chid];
                let offset =
                    c.sem_offset.ok_or(ChannelError::Semaphore(semaphore_error::INVALID_STATE))?;
                if m == mthd::SEMAPHORE_RELEASE {
                    let obj = self
                        .dmaobj(env.vram, chid, c.dma_semaphore)
                        .ok_or(ChannelError::Semaphore(semaphore_error::INVALID_STATE))?;
                    let place = Self::place(obj, u64::from(offset))
                        .ok_or(ChannelError::Semaphore(semaphore_error::MEM_FAULT))?;
                    if !Self::write_place(env, place, data) {
                        return sem(semaphore_error::MEM_FAULT);
                    }
                } else {
                    let a = Acquire { address: u64::from(offset), value: data, op: 1 };
                    if !self.acquire_done(env, chid, a)? {
                        self.channels[chid].acquire = Some(a);
                    }
                }
            }
            _ => {
                let data = if mthd::HANDLES.contains(&m) {
                    self.ramht_lookup(env.vram, chid, data).ok_or(ChannelError::Cache)?.1
                } else {
                    data
                };
                return self.deliver(env, chid, subc, m, data);
            }
        }
        Ok(())
    }

    fn deliver(
        &mut self,
        env: &mut Env<'_, '_>,
        chid: usize,
        subc: u32,
        m: u32,
        data: u32,
    ) -> Result<(), ChannelError> {
        let delivered = self.channels[chid].engines[subc as usize] == engine::PCOPY
            && env.pcopy.as_mut().is_some_and(|falcon| falcon.push_method(subc, m, data));
        if delivered { Ok(()) } else { Err(ChannelError::Cache) }
    }

    /// Whether an acquire's condition holds (§2.8.4: equal, or (int32)(value - sequence) >= 0).
    fn acquire_done(
        &self,
        env: &mut Env<'_, '_>,
        chid: usize,
        a: Acquire,
    ) -> Result<bool, ChannelError> {
        let c = self.channels[chid];
        let fault = ChannelError::Semaphore(semaphore_error::MEM_FAULT);
        let obj = self
            .dmaobj(env.vram, chid, c.dma_semaphore)
            .ok_or(ChannelError::Semaphore(semaphore_error::INVALID_STATE))?;
        let place = Self::place(obj, a.address).ok_or(fault)?;
        let word = Self::read_place(env, place).ok_or(fault)?;
        Ok(if a.op == 1 { word == a.value } else { word.wrapping_sub(a.value) as i32 >= 0 })
    }

    /// RAMHT lookup of `handle` (see the module decisions): (engine, object offset >> 4).
    fn ramht_lookup(&self, vram: &Vram, chid: usize, handle: u32) -> Option<(u32, u32)> {
        let config = self.field(vram, chid, ramfc::RAMHT);
        // entries = 512 << bits 31:27; more than the model takes is refused before shifting.
        let log2 = 9 + (config >> 27);
        if 1u64 << log2 > u64::from(MAX_RAMHT_ENTRIES) {
            return None;
        }
        let entries = 1u32 << log2;
        let bits = entries.trailing_zeros();
        let inst = u64::from(self.field(vram, chid, ramfc::CHAN_INST)) << 12;
        let table = inst + (u64::from(config & 0xff_ffff) << 4);
        let mut hash = 0;
        let mut h = handle;
        while h != 0 {
            hash ^= h & (entries - 1);
            h = h.checked_shr(bits).unwrap_or(0);
        }
        for i in 0..entries {
            let at = table + u64::from((hash + i) & (entries - 1)) * 8;
            let (key, context) = (vram.read_u32(at)?, vram.read_u32(at + 4)?);
            if context == 0 {
                return None;
            }
            if key == handle {
                return Some((context >> 20 & 0x7, context & 0xf_ffff));
            }
        }
        None
    }
}

/// A command's first word as the §2.8.3 pusher reads it (pre-GF100 forms).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cmd {
    /// `001J..J` (DMA mode): target bits 2-28.
    OldJump(u32),
    /// `J..J01` (DMA mode).
    Jump(u32),
    /// `J..J10` (DMA mode).
    Call(u32),
    /// `0x00020000` (DMA mode).
    Return,
    /// `000C..C00SSSM..M00` increasing or `010...` non-increasing methods: the first method's
    /// byte address, subchannel, count.
    Methods { mthd: u32, subc: u32, count: u32, ni: bool },
    /// `0000000000000011SSSM..M00` (IB mode): the count is in the next word.
    LongNonIncreasing { mthd: u32, subc: u32 },
}

/// The command `word` starts in IB mode (`ib`) or DMA mode, in the pseudocode's matching
/// order; `None` is INVALID_CMD.
fn classify(word: u32, ib: bool) -> Option<Cmd> {
    let (mthd, subc) = (word & 0x1ffc, word >> 13 & 7);
    Some(match word {
        _ if word & 0xe000_0003 == 0x2000_0000 && !ib => Cmd::OldJump(word & 0x1fff_fffc),
        _ if word & 3 == 1 && !ib => Cmd::Jump(word & 0xffff_fffc),
        _ if word & 3 == 2 && !ib => Cmd::Call(word & 0xffff_fffc),
        0x0002_0000 if !ib => Cmd::Return,
        _ if word & 0xe003_0003 == 0 || word & 0xe003_0003 == 0x4000_0000 => {
            Cmd::Methods { mthd, subc, count: word >> 18 & 0x7ff, ni: word & 0x4000_0000 != 0 }
        }
        _ if word & 0xffff_0003 == 0x0003_0000 && ib => Cmd::LongNonIncreasing { mthd, subc },
        _ => return None,
    })
}

/// An IB entry (§2.8.3): the pushbuffer's start address (bits 2-39) and its size in words.
fn ib_entry(low: u32, high: u32) -> (u64, u32) {
    (u64::from(low & !3) | u64::from(high & 0xff) << 32, high >> 10 & 0x1f_ffff)
}

/// The special methods the pusher passes (§2.8.3: "it only passes methods 0x100+ and methods
/// in 0..0xfc range that the puller recognises").
fn puller_knows(m: u32) -> bool {
    m >= 0x100
        || matches!(
            m,
            mthd::OBJECT
                | mthd::SEMAPHORE_ADDRESS_HIGH
                | mthd::SEMAPHORE_ADDRESS_LOW
                | mthd::SEMAPHORE_SEQUENCE
                | mthd::SEMAPHORE_TRIGGER
                | mthd::NOTIFY_INTR
                | mthd::WRCACHE_FLUSH
                | mthd::REF_CNT
                | mthd::DMA_SEMAPHORE
                | mthd::SEMAPHORE_OFFSET
                | mthd::SEMAPHORE_ACQUIRE
                | mthd::SEMAPHORE_RELEASE
                | mthd::YIELD
        )
}

enum Progress {
    /// A word or IB entry consumed.
    Word,
    /// Nothing to fetch.
    Idle,
    /// Waiting for memory (a semaphore) or an engine.
    Blocked,
}

#[cfg(test)]
mod tests {
    use super::*;
    use baregpu_regs::nvidia::packets as pk;
    use baregpu_regs::pushbuffer::{PusherMode, find_command};

    /// Words around every form's boundaries and a pseudo-random spread.
    fn words() -> impl Iterator<Item = u32> {
        let edges = [0, 1, 2, 3, 0x0002_0000, 0x0003_0000, 0x0001_0000, 0x2000_0000, 0x4000_0000];
        let mut x = 0x9E37_79B9u32;
        let random = (0..200_000).map(move |_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            // Clear high or low bits now and then, so the rarer forms come up.
            match x % 4 {
                0 => x & 0x0003_ffff,
                1 => x & 0xe003_ffff,
                2 => x & !0x1c00_0000,
                _ => x,
            }
        });
        edges.into_iter().chain(random)
    }

    #[test]
    fn the_command_decoder_agrees_with_the_checked_pushbuffer_tables() {
        for word in words() {
            for (ib, mode) in [(false, PusherMode::Dma), (true, PusherMode::Ib)] {
                let ours = classify(word, ib);
                let table = find_command(pk::COMMANDS, word, Some(mode));
                let name = |c: &Cmd| match c {
                    Cmd::OldJump(_) => "OLD_JUMP",
                    Cmd::Jump(_) => "JUMP",
                    Cmd::Call(_) => "CALL",
                    Cmd::Return => "RETURN",
                    Cmd::Methods { ni: false, .. } => "INCREASING_METHODS",
                    Cmd::Methods { ni: true, .. } => "NON_INCREASING_METHODS",
                    Cmd::LongNonIncreasing { .. } => "LONG_NON_INCREASING_METHODS",
                };
                assert_eq!(ours.as_ref().map(name), table.map(|c| c.name), "{word:#010x} ib {ib}");
                let Some(command) = table else { continue };
                let get = |f: &str| command.field(f).map(|f| f.get(&[word]));
                match ours {
                    Some(Cmd::OldJump(t) | Cmd::Jump(t) | Cmd::Call(t)) => {
                        assert_eq!(Some(t >> 2), get("TARGET"), "{word:#010x}");
                    }
                    Some(Cmd::Methods { mthd, subc, count, .. }) => {
                        assert_eq!(Some(mthd >> 2), get("METHOD"));
                        assert_eq!(Some(subc), get("SUBCHANNEL"));
                        assert_eq!(Some(count), get("COUNT"));
                    }
                    Some(Cmd::LongNonIncreasing { mthd, subc }) => {
                        assert_eq!(Some(mthd >> 2), get("METHOD"));
                        assert_eq!(Some(subc), get("SUBCHANNEL"));
                        assert_eq!(command.words, 2, "the count word follows");
                    }
                    _ => {}
                }
            }
        }
    }

    #[test]
    fn ib_entries_and_puller_methods_agree_with_the_tables() {
        use pk::ib_entry as e;
        for (low, high) in
            [(0x1234_5678, 0xffff_ffff), (0xffff_fffc, 0x0000_0400), (4, 0x7fff_fc12)]
        {
            let (start, len) = ib_entry(low, high);
            let w = [low, high];
            assert_eq!(start >> 2 & 0x3fff_ffff, u64::from(e::ADDRESS_LOW.get(&w)));
            assert_eq!(start >> 32, u64::from(e::ADDRESS_HIGH.get(&w)));
            assert_eq!(len, e::SIZE.get(&w));
        }
        // GT215 has every puller method of the table but GF100's.
        for m in pk::METHODS {
            let on_gt215 = !m.chips.starts_with("GF100");
            assert_eq!(puller_knows(u32::from(m.method)), on_gt215, "{}", m.name);
        }
        let listed = |n: u32| pk::METHODS.iter().any(|m| u32::from(m.method) == n);
        assert!((0..0x100).step_by(4).all(|n| !puller_knows(n) || listed(n)));
    }
}
