//! Leaving QEMU through `isa-debug-exit` (`-device isa-debug-exit,iobase=0xf4,iosize=0x04`).
//!
//! QEMU exits with status `(value << 1) | 1`: [`Exit::Success`] (0x10) gives 33,
//! [`Exit::Failure`] (0x11) gives 35. Any other status (0 from a guest shutdown or triple fault
//! with `-no-reboot`, 1 from a QEMU error, a signal) means the kernel never reported.

use x86_64::instructions::port::Port;

const ISA_DEBUG_EXIT: u16 = 0xF4;

/// The value written to the exit port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, defmt::Format)]
#[repr(u32)]
pub enum Exit {
    /// The case passed: QEMU exit status 33.
    Success = 0x10,
    /// The case failed (check, exception, panic): QEMU exit status 35.
    Failure = 0x11,
}

/// Stop the machine with `code`.
pub fn exit(code: Exit) -> ! {
    x86_64::instructions::interrupts::disable();
    // SAFETY: the isa-debug-exit port only terminates QEMU; nothing else decodes it.
    unsafe { Port::<u32>::new(ISA_DEBUG_EXIT).write(code as u32) };
    // Without the device (run outside the harness) the write does nothing: park the CPU.
    loop {
        x86_64::instructions::hlt();
    }
}
