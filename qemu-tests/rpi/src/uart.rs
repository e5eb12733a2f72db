//! PL011 UART0 at ARM 0x3F201000 (BCM2835 ARM Peripherals §13, at the Pi 3 peripheral base), 115200 8N1, for the log.
//!
//! Real hardware needs three things QEMU does not check:
//! - GPIO 14/15 in ALT0 (TXD0/RXD0) with pulls off. On the Pi 3 the firmware gives the PL011 to
//!   Bluetooth and GPIO 14/15 to the mini UART unless `dtoverlay=disable-bt` (our `config.txt`);
//!   we set the pins ourselves anyway (BCM2835 ARM Peripherals §6: GPFSEL1, GPPUD, GPPUDCLK0).
//! - The baud divisor for the actual UART reference clock: BAUDDIV = clock / (16 * baud), integer
//!   part in IBRD, fraction * 64 in FBRD. The clock is asked from the firmware (mailbox tag
//!   0x00030002, clock id 2); `config.txt` pins it with `init_uart_clock=48000000`, the firmware
//!   default on the Pi 3 (IBRD 26, FBRD 3). QEMU reports 3 MHz and ignores the divisor.
//! - Transmission waits for FIFO space; every wait is bounded and a byte that cannot be queued
//!   is dropped (logging must never hang the image).

use baregpu_hal::time::{Clock, poll_until};
use baregpu_hal::{MmioRegion, RegisterIo};
use core::fmt;
use core::time::Duration;

use crate::timer::SystemTimer;

const DR: usize = 0x00;
const FR: usize = 0x18;
const IBRD: usize = 0x24;
const FBRD: usize = 0x28;
const LCRH: usize = 0x2C;
const CR: usize = 0x30;
const IMSC: usize = 0x38;
const ICR: usize = 0x44;

const FR_BUSY: u32 = 1 << 3;
const FR_TXFF: u32 = 1 << 5;
const LCRH_FEN: u32 = 1 << 4;
const LCRH_WLEN_8: u32 = 0b11 << 5;
const CR_UARTEN: u32 = 1 << 0;
const CR_TXE: u32 = 1 << 8;
const CR_RXE: u32 = 1 << 9;

const GPFSEL1: usize = 0x04;
const GPPUD: usize = 0x94;
const GPPUDCLK0: usize = 0x98;

/// The UART reference clock the Pi 3 firmware sets by default (and `init_uart_clock` pins).
pub const DEFAULT_UART_CLOCK_HZ: u32 = 48_000_000;
/// The log's line rate.
pub const BAUD: u32 = 115_200;

/// Why the UART could not be configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UartError {
    /// `clock / (16 * baud)` is outside IBRD's 1..=65535.
    BadDivisor {
        /// Reference clock in Hz.
        clock_hz: u32,
        /// Requested line rate.
        baud: u32,
    },
}

/// IBRD and FBRD for `baud` from a `clock_hz` reference: BAUDDIV = clock / (16 * baud), with
/// the fraction rounded to 1/64 (PL011 TRM §3.3.6).
pub fn divisors(clock_hz: u32, baud: u32) -> Result<(u32, u32), UartError> {
    let bad = UartError::BadDivisor { clock_hz, baud };
    if baud == 0 {
        return Err(bad);
    }
    // 64 * clock / (16 * baud) = 4 * clock / baud, rounded.
    let div64 = (4 * u64::from(clock_hz) + u64::from(baud) / 2) / u64::from(baud);
    let ibrd = div64 >> 6;
    if !(1..=0xFFFF).contains(&ibrd) {
        return Err(bad);
    }
    Ok((ibrd as u32, (div64 & 0x3F) as u32))
}

/// The PL011 UART0.
#[derive(Debug)]
pub struct Pl011<'c> {
    io: MmioRegion,
    clock: &'c SystemTimer,
}

impl<'c> Pl011<'c> {
    /// The UART at [`crate::soc::UART0`], as the firmware or a previous owner left it.
    ///
    /// Only one `Pl011` should be live at a time; the panic and exception handlers create their
    /// own after normal execution has stopped.
    pub fn new(clock: &'c SystemTimer) -> Self {
        // SAFETY: the PL011 block is 0x90 bytes of registers; ownership is by convention (see the
        // doc comment), and a second writer can only interleave log bytes.
        Pl011 { io: unsafe { crate::soc::region(crate::soc::UART0, 0x90) }, clock }
    }

    /// Route GPIO 14/15 to the UART and program 8N1 at `baud` from a `clock_hz` reference.
    pub fn init(&mut self, clock_hz: u32, baud: u32) -> Result<(), UartError> {
        let (ibrd, fbrd) = divisors(clock_hz, baud)?;
        self.io.write32(CR, 0);
        // Let a character in flight leave before the line settings change (bounded: ~1 char).
        let _ = poll_until(self.clock, Duration::from_millis(2), || {
            (self.io.read32(FR) & FR_BUSY == 0).then_some(())
        });
        self.route_pins();
        self.io.write32(ICR, 0x7FF);
        self.io.write32(IMSC, 0);
        self.io.write32(IBRD, ibrd);
        self.io.write32(FBRD, fbrd);
        // LCRH must be written after IBRD/FBRD: it latches the divisor.
        self.io.write32(LCRH, LCRH_WLEN_8 | LCRH_FEN);
        self.io.write32(CR, CR_UARTEN | CR_TXE | CR_RXE);
        Ok(())
    }

    /// GPIO 14/15 to ALT0 (function 0b100, GPFSEL1 bits 14:12 and 17:15), pull-up/down off: the
    /// GPPUD/GPPUDCLK0 sequence needs 150 cycles of set-up and hold (BCM2835 ARM Peripherals §6.1).
    fn route_pins(&self) {
        // SAFETY: the GPIO block is 0xB4 bytes of registers; only GPIO 14/15's fields change.
        let gpio = unsafe { crate::soc::region(crate::soc::GPIO, 0xB4) };
        let sel = gpio.read32(GPFSEL1) & !((0b111 << 12) | (0b111 << 15));
        gpio.write32(GPFSEL1, sel | (0b100 << 12) | (0b100 << 15));
        gpio.write32(GPPUD, 0);
        self.clock.delay(Duration::from_micros(5));
        gpio.write32(GPPUDCLK0, (1 << 14) | (1 << 15));
        self.clock.delay(Duration::from_micros(5));
        gpio.write32(GPPUDCLK0, 0);
    }

    /// Queue one byte; dropped if the transmit FIFO stays full for 10 ms.
    pub fn write_byte(&mut self, byte: u8) {
        let space = poll_until(self.clock, Duration::from_millis(10), || {
            (self.io.read32(FR) & FR_TXFF == 0).then_some(())
        });
        if space.is_ok() {
            self.io.write32(DR, u32::from(byte));
        }
    }

    /// Wait (at most 50 ms) until everything queued has left the shift register.
    pub fn flush(&mut self) {
        let _ = poll_until(self.clock, Duration::from_millis(50), || {
            (self.io.read32(FR) & FR_BUSY == 0).then_some(())
        });
    }
}

impl fmt::Write for Pl011<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for byte in s.bytes() {
            if byte == b'\n' {
                self.write_byte(b'\r');
            }
            self.write_byte(byte);
        }
        Ok(())
    }
}
