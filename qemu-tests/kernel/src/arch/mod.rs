//! x86_64 platform: serial console, GDT/TSS, IDT and exceptions, PICs, local APIC, QEMU exit.

pub mod exit;
pub mod gdt;
pub mod idt;
pub mod lapic;
pub mod pic;
pub mod serial;

/// Descriptor tables and interrupt controllers, interrupts left disabled.
pub fn init() -> Result<(), lapic::LapicError> {
    x86_64::instructions::interrupts::disable();
    gdt::init();
    idt::init();
    pic::remap_and_mask();
    lapic::init()
}
