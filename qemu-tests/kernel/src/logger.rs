//! The defmt global logger: rzCOBS-encoded frames on COM1, timestamped in microseconds since
//! boot (the kernel clock; 0 until it is set up). Decode on the host with the kernel ELF, e.g.
//! `defmt-print -e test-kernel < serial.bin`.
//!
//! A frame is written with interrupts disabled. A nested `acquire` (an exception raised while a
//! frame is open, which then fails the case) does not deadlock: it terminates the open frame
//! with a zero byte, which the decoder treats as the end of a corrupt frame, and starts anew.

use crate::arch::irq as interrupts;
use crate::arch::serial;
use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicBool, Ordering};

#[defmt::global_logger]
struct Logger;

struct EncoderCell(UnsafeCell<defmt::Encoder>);
// SAFETY: the encoder is touched only between `acquire` and `release`, with interrupts disabled
// on the kernel's single CPU; a nested acquire resets it before use (see module docs).
unsafe impl Sync for EncoderCell {}

static ENCODER: EncoderCell = EncoderCell(UnsafeCell::new(defmt::Encoder::new()));
static TAKEN: AtomicBool = AtomicBool::new(false);
static RESTORE_INTERRUPTS: AtomicBool = AtomicBool::new(false);

/// Start the console. The leading zero byte ends whatever the firmware printed on the port, so
/// the decoder starts in sync with the first frame.
pub fn init() {
    serial::init();
    serial::write(&[0]);
}

fn encoder() -> *mut defmt::Encoder {
    ENCODER.0.get()
}

// SAFETY: `acquire` disables interrupts and marks the logger taken; frames are never interleaved
// (a nested acquire abandons the outer frame explicitly).
unsafe impl defmt::Logger for Logger {
    fn acquire() {
        let enabled = interrupts::are_enabled();
        interrupts::disable();
        if TAKEN.swap(true, Ordering::Acquire) {
            // Nested (exception while logging): end the broken frame, keep the outer IF state.
            serial::write(&[0]);
        } else {
            RESTORE_INTERRUPTS.store(enabled, Ordering::Relaxed);
        }
        // SAFETY: exclusive access, see `EncoderCell`.
        unsafe {
            *encoder() = defmt::Encoder::new();
            (*encoder()).start_frame(serial::write);
        }
    }

    unsafe fn flush() {}

    unsafe fn release() {
        // SAFETY: called after `acquire` by defmt's contract; exclusive access as above.
        unsafe { (*encoder()).end_frame(serial::write) };
        TAKEN.store(false, Ordering::Release);
        if RESTORE_INTERRUPTS.load(Ordering::Relaxed) {
            interrupts::enable();
        }
    }

    unsafe fn write(bytes: &[u8]) {
        // SAFETY: called between `acquire` and `release` by defmt's contract.
        unsafe { (*encoder()).write(bytes, serial::write) };
    }
}

defmt::timestamp!("{=u64:us}", crate::clock::now_us());
