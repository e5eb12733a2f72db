//! x86_64 platform: serial console, GDT/TSS, IDT and exceptions, PICs, local APIC, QEMU exit.

pub mod exit;
pub mod gdt;
pub mod idt;
pub mod lapic;
pub mod pic;
pub mod serial;

/// Interrupt masking as the shared code (logger, DMA pool, mailbox) uses it.
pub use x86_64::instructions::interrupts as irq;

/// Descriptor tables and interrupt controllers, interrupts left disabled.
pub fn init() -> Result<(), lapic::LapicError> {
    x86_64::instructions::interrupts::disable();
    gdt::init();
    idt::init();
    pic::remap_and_mask();
    lapic::init()
}
