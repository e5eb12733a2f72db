//! COM1 (16550 UART at port 0x3F8): the byte sink of the defmt logger.

use x86_64::instructions::port::Port;

const COM1: u16 = 0x3F8;
/// Line status register bit: transmit holding register empty.
const LSR_THR_EMPTY: u8 = 1 << 5;
/// Polls of the line status register before a byte is written regardless. QEMU's UART is always
/// ready; on a real 16550 at 115200 baud one byte takes ~87 µs, far less than this many port
/// reads, so the bound only matters if the UART is absent (then bytes are dropped, not hung on).
const THR_POLLS: u32 = 100_000;

/// Program COM1 for 115200 baud, 8N1, FIFOs on, interrupts off.
pub fn init() {
    // SAFETY: ports 0x3F8..0x3FF belong to COM1, which only this module touches.
    unsafe {
        Port::<u8>::new(COM1 + 1).write(0x00); // IER: no interrupts
        Port::<u8>::new(COM1 + 3).write(0x80); // LCR: DLAB
        Port::<u8>::new(COM1).write(0x01); // divisor 1 = 115200 baud
        Port::<u8>::new(COM1 + 1).write(0x00);
        Port::<u8>::new(COM1 + 3).write(0x03); // 8N1
        Port::<u8>::new(COM1 + 2).write(0xC7); // FIFO on, cleared, 14-byte threshold
        Port::<u8>::new(COM1 + 4).write(0x03); // DTR | RTS
    }
}

/// Write raw bytes (defmt frames are binary: no newline translation).
pub fn write(bytes: &[u8]) {
    for &b in bytes {
        // SAFETY: COM1 ports as above; reading LSR and writing THR have no other effect.
        unsafe {
            let mut lsr = Port::<u8>::new(COM1 + 5);
            let mut polls = 0;
            while lsr.read() & LSR_THR_EMPTY == 0 && polls < THR_POLLS {
                polls += 1;
            }
            Port::<u8>::new(COM1).write(b);
        }
    }
}
