//! Text output on COM1 (16550 UART at I/O port 0x3F8), where QEMU's `-serial` captures it.

use core::fmt;
use x86_64::instructions::port::Port;

const COM1: u16 = 0x3F8;
/// Line status register: bit 5, transmit holding register empty.
const LSR_THR_EMPTY: u8 = 1 << 5;
/// Bound on the wait for room in the transmitter (a missing UART must not hang the kernel).
const MAX_POLLS: u32 = 100_000;

/// COM1 as a [`fmt::Write`].
pub struct Serial;

impl Serial {
    /// 115200 8N1, FIFO on, interrupts off.
    pub fn init() -> Serial {
        for (offset, value) in [(1, 0x00), (3, 0x80), (0, 0x01), (1, 0x00), (3, 0x03), (2, 0xC7)] {
            // SAFETY: COM1's registers belong to this module; the sequence is the 16550's
            // divisor-latch set-up (divisor 1), then 8N1 and the FIFO.
            unsafe { Port::<u8>::new(COM1 + offset).write(value) };
        }
        Serial
    }

    fn write_byte(&mut self, byte: u8) {
        for _ in 0..MAX_POLLS {
            // SAFETY: reading the line status register has no side effect on the transmitter.
            if unsafe { Port::<u8>::new(COM1 + 5).read() } & LSR_THR_EMPTY != 0 {
                break;
            }
        }
        // SAFETY: the transmit holding register of COM1, owned by this module.
        unsafe { Port::<u8>::new(COM1).write(byte) };
    }
}

impl fmt::Write for Serial {
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
