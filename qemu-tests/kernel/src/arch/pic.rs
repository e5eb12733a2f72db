//! The legacy 8259 PICs: remapped away from the exception vectors and fully masked. Device
//! interrupts reach the CPU only as MSI(-X) messages to the local APIC.

use x86_64::instructions::port::Port;

/// First vector of the (masked) master PIC; 8 vectors each, slave follows.
pub const PIC_VECTOR_BASE: u8 = 0x20;

/// Remap both PICs to [`PIC_VECTOR_BASE`]`..+16` and mask every line.
pub fn remap_and_mask() {
    // SAFETY: ports 0x20/0x21/0xA0/0xA1 are the two PICs; the ICW1..4 sequence reinitialises
    // them, and masking all lines stops them from delivering anything.
    unsafe {
        let mut master_cmd = Port::<u8>::new(0x20);
        let mut master_data = Port::<u8>::new(0x21);
        let mut slave_cmd = Port::<u8>::new(0xA0);
        let mut slave_data = Port::<u8>::new(0xA1);
        master_cmd.write(0x11); // ICW1: init, ICW4 follows
        slave_cmd.write(0x11);
        master_data.write(PIC_VECTOR_BASE); // ICW2: vector base
        slave_data.write(PIC_VECTOR_BASE + 8);
        master_data.write(0x04); // ICW3: slave on IRQ2
        slave_data.write(0x02);
        master_data.write(0x01); // ICW4: 8086 mode
        slave_data.write(0x01);
        master_data.write(0xFF); // OCW1: mask everything
        slave_data.write(0xFF);
    }
}
