//! The VideoCore mailbox property interface (channel 8).
//!
//! Facts (Linux bcm2835-mailbox; raspberrypi/firmware wiki "Mailboxes",
//! "Accessing mailboxes", "Mailbox property interface"):
//! - Mailbox 0 (VideoCore -> ARM): READ +0x00, STATUS +0x18 (EMPTY bit 30). Mailbox 1
//!   (ARM -> VideoCore): WRITE +0x20, STATUS +0x38 (FULL bit 31). The sender checks the FULL bit
//!   of the mailbox it writes (mailbox 1, as Linux's `bcm2835-mailbox` does); many tutorials poll
//!   +0x18 for both, which only works because mailbox 0 is rarely full.
//! - Message word = bus address of a 16-byte aligned buffer | channel (8). The reply is the same
//!   word on mailbox 0.
//! - Buffer: total size in bytes, request code 0 (reply 0x80000000 = success, 0x80000001 = parse
//!   error), tags, end tag 0. Tag: id, value buffer size in bytes, request/response code (bit 31
//!   set by the firmware, bits 30:0 = response value length), value buffer. A response longer
//!   than the value buffer is truncated by the firmware.
//!
//! Coherency: the buffer is on the stack; the image runs with the MMU and data cache off
//! (boot.rs), so CPU accesses go straight to RAM and the VideoCore reads them through the
//! uncached 0xC0000000 bus alias of ARM physical RAM (Pi 2/3). With the data cache on, the
//! buffer would have to be cleaned before the send and invalidated before reading the reply.

use baregpu_hal::barrier::{dma_rmb, dma_wmb};
use baregpu_hal::dma::{BusAddress, DmaError, DmaRegion};
use baregpu_hal::time::{Clock, TimedOut, poll_until};
use baregpu_hal::{MmioRegion, RegisterIo};
use core::fmt;
use core::ptr::NonNull;
use core::time::Duration;

const READ: usize = 0x00;
const STATUS0: usize = 0x18;
const WRITE: usize = 0x20;
const STATUS1: usize = 0x38;
const FULL: u32 = 1 << 31;
const EMPTY: u32 = 1 << 30;

/// The property channel (ARM -> VideoCore).
pub const PROPERTY_CHANNEL: u32 = 8;
/// Buffer request code.
pub const REQUEST: u32 = 0;
/// Buffer response code: the request was processed.
pub const RESPONSE_SUCCESS: u32 = 0x8000_0000;
/// Buffer response code: the firmware could not parse the request.
pub const RESPONSE_ERROR: u32 = 0x8000_0001;
/// Set by the firmware in a tag's request/response code when it answered the tag.
pub const TAG_RESPONSE: u32 = 1 << 31;

/// Bus alias of ARM physical RAM that bypasses the VideoCore L2 cache (Pi 2/3).
pub const BUS_UNCACHED_ALIAS: u32 = 0xC000_0000;
/// Mask turning any bus alias of RAM back into an ARM physical address.
pub const BUS_TO_ARM_MASK: u32 = 0x3FFF_FFFF;

/// How long the VideoCore may leave mailbox 1 full.
pub const SEND_TIMEOUT: Duration = Duration::from_millis(100);
/// How long a property call may take (a mode set for a framebuffer is the slowest).
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(1);

/// Property tag ids used here (firmware wiki "Mailbox property interface").
pub mod tag {
    /// Get board revision: response u32 revision.
    pub const GET_BOARD_REVISION: u32 = 0x0001_0002;
    /// Get ARM memory: response u32 base, u32 size in bytes.
    pub const GET_ARM_MEMORY: u32 = 0x0001_0005;
    /// Get clock rate: request u32 clock id; response u32 clock id, u32 rate in Hz.
    pub const GET_CLOCK_RATE: u32 = 0x0003_0002;
    /// Allocate framebuffer: request u32 alignment; response u32 bus address, u32 size.
    pub const ALLOCATE_BUFFER: u32 = 0x0004_0001;
    /// Get pitch: response u32 bytes per line.
    pub const GET_PITCH: u32 = 0x0004_0008;
    /// Set physical (display) width/height: request and response u32 width, u32 height.
    pub const SET_PHYSICAL_SIZE: u32 = 0x0004_8003;
    /// Set virtual (buffer) width/height: request and response u32 width, u32 height.
    pub const SET_VIRTUAL_SIZE: u32 = 0x0004_8004;
    /// Set depth: request and response u32 bits per pixel.
    pub const SET_DEPTH: u32 = 0x0004_8005;
    /// Set pixel order: request and response u32 (0 BGR, 1 RGB).
    pub const SET_PIXEL_ORDER: u32 = 0x0004_8006;
    /// Set alpha mode: request and response u32 (0 enabled, 1 reversed, 2 ignored).
    pub const SET_ALPHA_MODE: u32 = 0x0004_8007;
    /// Set virtual offset: request and response u32 x, u32 y.
    pub const SET_VIRTUAL_OFFSET: u32 = 0x0004_8009;
    /// Enable QPU: request u32 (1 enable, 0 disable); response u32 status, 0 on success. The
    /// firmware powers the V3D (its power domain and clock) up or down; the Raspberry Pi
    /// hello_fft sample (mailbox.c `qpu_enable`) uses it before touching the V3D.
    pub const ENABLE_QPU: u32 = 0x0003_0012;
}

/// Firmware clock ids (firmware wiki "Clocks").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum ClockId {
    /// EMMC controller.
    Emmc = 1,
    /// PL011 UART reference clock.
    Uart = 2,
    /// ARM core clock.
    Arm = 3,
    /// VideoCore core clock.
    Core = 4,
}

/// Capacity of one property message, in 32-bit words (header and end tag included).
pub const MAX_WORDS: usize = 64;

/// Why a property call failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MailboxError {
    /// Mailbox 1 stayed FULL: the VideoCore did not take the message.
    SendTimeout(TimedOut),
    /// No reply for our buffer on channel 8 in time; `stray` other words were read and dropped.
    ReplyTimeout {
        /// The wait.
        waited: TimedOut,
        /// Words from other channels or buffers that were discarded meanwhile.
        stray: u32,
    },
    /// The tags do not fit [`MAX_WORDS`].
    MessageTooLarge {
        /// Words the message would need.
        words: usize,
    },
    /// The buffer is not 16-byte aligned or not in the first GiB, so it has no bus address.
    NotBusAddressable {
        /// ARM physical address of the buffer.
        addr: usize,
    },
    /// Copying the message to or from the DMA buffer failed (a bug in this module).
    Dma(DmaError),
    /// The buffer response code was not 0x80000000 (0x80000001: parse error, 0: unanswered).
    BadResponseCode(u32),
    /// The firmware did not set bit 31 of the tag's code: the tag is unknown or was skipped.
    TagNotAnswered {
        /// Tag id.
        tag: u32,
    },
    /// The response is longer than the value buffer: the firmware truncated it.
    TagTruncated {
        /// Tag id.
        tag: u32,
        /// Response length in bytes.
        len: u32,
        /// Value buffer size in bytes.
        capacity: u32,
    },
    /// The response is shorter than the tag's documented response.
    TagShort {
        /// Tag id.
        tag: u32,
        /// Response length in bytes.
        len: u32,
        /// Documented length in bytes.
        expected: u32,
    },
    /// A response value contradicts the request (e.g. another clock id echoed back).
    Mismatch {
        /// Tag id.
        tag: u32,
        /// What was compared.
        what: &'static str,
        /// Value sent.
        requested: u32,
        /// Value answered.
        got: u32,
    },
}

impl fmt::Display for MailboxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MailboxError::SendTimeout(t) => write!(f, "mailbox 1 stayed full: {t}"),
            MailboxError::ReplyTimeout { waited, stray } => {
                write!(f, "no property reply: {waited}, {stray} stray words dropped")
            }
            MailboxError::MessageTooLarge { words } => {
                write!(f, "property message needs {words} words, capacity {MAX_WORDS}")
            }
            MailboxError::NotBusAddressable { addr } => {
                write!(f, "buffer at {addr:#x} is not 16-byte aligned below 1 GiB")
            }
            MailboxError::Dma(e) => write!(f, "mailbox buffer: {e}"),
            MailboxError::BadResponseCode(c) => write!(f, "buffer response code {c:#010x}"),
            MailboxError::TagNotAnswered { tag } => write!(f, "tag {tag:#010x} not answered"),
            MailboxError::TagTruncated { tag, len, capacity } => {
                write!(f, "tag {tag:#010x}: {len}-byte response truncated to {capacity}")
            }
            MailboxError::TagShort { tag, len, expected } => {
                write!(f, "tag {tag:#010x}: {len}-byte response, expected {expected}")
            }
            MailboxError::Mismatch { tag, what, requested, got } => {
                write!(f, "tag {tag:#010x}: {what} {got:#x}, requested {requested:#x}")
            }
        }
    }
}

/// No `source()`: the one wrapped error (`Dma`) is printed in the message, as every caller of
/// this image prints a `MailboxError` alone.
impl core::error::Error for MailboxError {}

impl From<DmaError> for MailboxError {
    fn from(e: DmaError) -> Self {
        MailboxError::Dma(e)
    }
}

/// Where one tag's value lives in a [`Message`] (returned by [`Message::push`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    tag: u32,
    value: usize,
    capacity: u32,
    response: u32,
}

impl Slot {
    /// The tag id.
    pub const fn tag(&self) -> u32 {
        self.tag
    }
}

/// A property message under construction, then the reply.
#[derive(Debug, Clone)]
pub struct Message {
    words: [u32; MAX_WORDS],
    len: usize,
}

impl Default for Message {
    fn default() -> Self {
        Self::new()
    }
}

impl Message {
    /// An empty request (size and request code; the end tag is added by [`Message::words`]).
    pub const fn new() -> Self {
        let mut words = [0; MAX_WORDS];
        words[1] = REQUEST;
        Message { words, len: 2 }
    }

    /// Append `tag` with `request` values and room for a `response_words` response.
    pub fn push(
        &mut self,
        tag: u32,
        request: &[u32],
        response_words: usize,
    ) -> Result<Slot, MailboxError> {
        let value_words = request.len().max(response_words);
        // id, size, code, value buffer, plus the end tag.
        let needed = self.len + 3 + value_words + 1;
        if needed > MAX_WORDS {
            return Err(MailboxError::MessageTooLarge { words: needed });
        }
        let capacity = (value_words * 4) as u32;
        let value = self.len + 3;
        self.words[self.len] = tag;
        self.words[self.len + 1] = capacity;
        self.words[self.len + 2] = 0;
        self.words[value..value + value_words].fill(0);
        self.words[value..value + request.len()].copy_from_slice(request);
        self.len = value + value_words;
        Ok(Slot { tag, value, capacity, response: (response_words * 4) as u32 })
    }

    /// The complete buffer: total size, code, tags and the end tag.
    pub fn words(&mut self) -> &[u32] {
        self.words[self.len] = 0;
        self.words[0] = ((self.len + 1) * 4) as u32;
        &self.words[..=self.len]
    }

    fn reply_mut(&mut self) -> &mut [u32] {
        &mut self.words[..=self.len]
    }

    /// The buffer response code (word 1).
    pub fn response_code(&self) -> u32 {
        self.words[1]
    }

    /// The response value of the tag at `slot`, after checking its response bit and length.
    pub fn value(&self, slot: Slot) -> Result<&[u32], MailboxError> {
        let tag = slot.tag;
        let code = self.words[slot.value - 1];
        if code & TAG_RESPONSE == 0 {
            return Err(MailboxError::TagNotAnswered { tag });
        }
        let len = code & !TAG_RESPONSE;
        if len > slot.capacity {
            return Err(MailboxError::TagTruncated { tag, len, capacity: slot.capacity });
        }
        if len < slot.response {
            return Err(MailboxError::TagShort { tag, len, expected: slot.response });
        }
        Ok(&self.words[slot.value..slot.value + slot.response as usize / 4])
    }
}

/// `#[repr(align(16))]` storage for one message: the mailbox word keeps only bits 31:4.
#[repr(C, align(16))]
struct Aligned([u32; MAX_WORDS]);

/// The bus address the VideoCore uses for ARM physical RAM at `addr` (uncached alias).
pub fn arm_to_bus(addr: usize) -> Result<BusAddress, MailboxError> {
    if addr.is_multiple_of(16) && addr <= BUS_TO_ARM_MASK as usize {
        Ok(BusAddress(u64::from(addr as u32 | BUS_UNCACHED_ALIAS)))
    } else {
        Err(MailboxError::NotBusAddressable { addr })
    }
}

/// The ARM physical address of a VideoCore bus address (any of the four RAM aliases).
pub const fn bus_to_arm(bus: u32) -> usize {
    (bus & BUS_TO_ARM_MASK) as usize
}

/// The mailbox, over any register access (real MMIO on the Pi) and clock.
#[derive(Debug)]
pub struct Mailbox<IO, C> {
    io: IO,
    clock: C,
}

impl<'c, C: Clock> Mailbox<MmioRegion, &'c C> {
    /// The BCM2837 mailbox at [`crate::soc::MAILBOX`].
    pub fn bcm2837(clock: &'c C) -> Self {
        // SAFETY: the mailbox block (both mailboxes) is 0x40 bytes of registers; this image has a
        // single mailbox user.
        Mailbox::new(unsafe { crate::soc::region(crate::soc::MAILBOX, 0x40) }, clock)
    }
}

impl<IO: RegisterIo, C: Clock> Mailbox<IO, C> {
    /// A mailbox whose offset 0 is mailbox 0's READ register.
    pub const fn new(io: IO, clock: C) -> Self {
        Mailbox { io, clock }
    }

    /// Send `msg` on the property channel and wait for the reply, which replaces its contents.
    /// Succeeds when the buffer response code is 0x80000000; tags are checked by
    /// [`Message::value`].
    pub fn call(&mut self, msg: &mut Message) -> Result<(), MailboxError> {
        let mut backing = Aligned([0; MAX_WORDS]);
        let cpu = NonNull::from(&mut backing).cast::<u8>();
        let bus = arm_to_bus(cpu.as_ptr().addr())?;
        // SAFETY: `backing` outlives `buf` (both end with this call), is 16-byte aligned and is
        // accessed only through `buf`; with the data cache off (boot.rs) the VideoCore sees the
        // same bytes at `bus`, the uncached alias of its ARM physical address.
        let buf = unsafe { DmaRegion::from_raw_parts(cpu, bus, core::mem::size_of::<Aligned>()) };
        buf.write_slice(0, msg.words())?;
        // The buffer must be in memory before the VideoCore sees the doorbell word.
        dma_wmb();
        let word = bus.low() | PROPERTY_CHANNEL;
        poll_until(&self.clock, SEND_TIMEOUT, || {
            (self.io.read32(STATUS1) & FULL == 0).then_some(())
        })
        .map_err(MailboxError::SendTimeout)?;
        self.io.write32(WRITE, word);
        let mut stray = 0u32;
        poll_until(&self.clock, REPLY_TIMEOUT, || {
            if self.io.read32(STATUS0) & EMPTY != 0 {
                return None;
            }
            let reply = self.io.read32(READ);
            if reply == word {
                Some(())
            } else {
                stray += 1;
                None
            }
        })
        .map_err(|waited| MailboxError::ReplyTimeout { waited, stray })?;
        dma_rmb();
        buf.read_slice(0, msg.reply_mut())?;
        match msg.response_code() {
            RESPONSE_SUCCESS => Ok(()),
            code => Err(MailboxError::BadResponseCode(code)),
        }
    }

    /// Board revision code (tag 0x00010002), e.g. 0xA02082 for a Pi 3 Model B.
    pub fn board_revision(&mut self) -> Result<u32, MailboxError> {
        let mut msg = Message::new();
        let slot = msg.push(tag::GET_BOARD_REVISION, &[], 1)?;
        self.call(&mut msg)?;
        Ok(msg.value(slot)?[0])
    }

    /// The RAM the ARM owns (tag 0x00010005); the VideoCore has the rest up to 1 GiB.
    pub fn arm_memory(&mut self) -> Result<ArmMemory, MailboxError> {
        let mut msg = Message::new();
        let slot = msg.push(tag::GET_ARM_MEMORY, &[], 2)?;
        self.call(&mut msg)?;
        let v = msg.value(slot)?;
        Ok(ArmMemory { base: v[0], size: v[1] })
    }

    /// Current rate of `clock` in Hz (tag 0x00030002); 0 means the clock does not exist.
    pub fn clock_rate(&mut self, clock: ClockId) -> Result<u32, MailboxError> {
        let mut msg = Message::new();
        let slot = msg.push(tag::GET_CLOCK_RATE, &[clock as u32], 2)?;
        self.call(&mut msg)?;
        let v = msg.value(slot)?;
        if v[0] != clock as u32 {
            return Err(MailboxError::Mismatch {
                tag: slot.tag,
                what: "clock id",
                requested: clock as u32,
                got: v[0],
            });
        }
        Ok(v[1])
    }
}

impl<IO: RegisterIo, C: Clock> Mailbox<IO, C> {
    /// Ask the firmware to power the V3D and its QPUs up (`true`) or down (tag 0x00030012).
    /// `Ok` only when the firmware answered the tag with the documented 4-byte status and the
    /// status is 0; a firmware that does not know the tag (QEMU's `raspi3b` marks it answered
    /// with an empty response) is [`MailboxError::TagShort`], a non-zero status
    /// [`MailboxError::Mismatch`].
    pub fn enable_qpu(&mut self, enable: bool) -> Result<(), MailboxError> {
        let mut msg = Message::new();
        let slot = msg.push(tag::ENABLE_QPU, &[u32::from(enable)], 1)?;
        self.call(&mut msg)?;
        match msg.value(slot)?[0] {
            0 => Ok(()),
            status => Err(MailboxError::Mismatch {
                tag: slot.tag,
                what: "status",
                requested: 0,
                got: status,
            }),
        }
    }
}

/// The ARM's share of RAM (tag 0x00010005).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArmMemory {
    /// ARM physical base address.
    pub base: u32,
    /// Size in bytes.
    pub size: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_layout_follows_the_property_interface() {
        let mut msg = Message::new();
        let rev = msg.push(tag::GET_BOARD_REVISION, &[], 1).unwrap();
        let clk = msg.push(tag::GET_CLOCK_RATE, &[2], 2).unwrap();
        let words = msg.words().to_vec();
        assert_eq!(
            words,
            [(words.len() * 4) as u32, 0, 0x0001_0002, 4, 0, 0, 0x0003_0002, 8, 0, 2, 0, 0]
        );
        // Unanswered, then answered, truncated and short responses.
        assert_eq!(msg.value(rev), Err(MailboxError::TagNotAnswered { tag: 0x0001_0002 }));
        msg.words[4] = TAG_RESPONSE | 4;
        msg.words[5] = 0xA02082;
        assert_eq!(msg.value(rev), Ok(&[0xA02082][..]));
        msg.words[8] = TAG_RESPONSE | 12;
        assert!(matches!(msg.value(clk), Err(MailboxError::TagTruncated { len: 12, .. })));
        msg.words[8] = TAG_RESPONSE | 4;
        assert!(matches!(msg.value(clk), Err(MailboxError::TagShort { expected: 8, .. })));
    }

    #[test]
    fn overflow_is_an_error_not_a_panic() {
        let mut msg = Message::new();
        assert!(matches!(
            msg.push(tag::GET_BOARD_REVISION, &[0; 60], 1),
            Err(MailboxError::MessageTooLarge { .. })
        ));
    }

    #[test]
    fn bus_addresses_use_the_uncached_alias_and_mask_back() {
        assert_eq!(arm_to_bus(0x8_0010), Ok(BusAddress(0xC008_0010)));
        assert!(arm_to_bus(0x8_0004).is_err());
        assert!(arm_to_bus(0x4000_0000).is_err());
        assert_eq!(bus_to_arm(0xC010_0000), 0x0010_0000);
        assert_eq!(bus_to_arm(0x3C10_0000), 0x3C10_0000);
    }
}
