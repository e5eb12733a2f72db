//! Type-0 PCI configuration space emulation (PCI Local Bus Specification 3.0, §6.1-§6.2).
//!
//! Built from a [`PciIdentity`]: IDs, class and subsystem are read-only; the command register
//! has the memory-space, I/O-space (only with an I/O BAR), bus-master and INTx-disable bits
//! writable; BARs follow the sizing protocol (write all-ones, read back the size mask; a 64-bit
//! BAR takes two slots); the interrupt line is read/write and the pin read-only. There is no
//! capability list, expansion ROM or BIST: everything else reads 0 and ignores writes.

use crate::model::{BarKind, IdentityError, PciIdentity};

/// Configuration space size (conventional PCI).
pub const CONFIG_SIZE: u32 = 256;

/// Command register: I/O space enable.
pub const COMMAND_IO: u16 = 1 << 0;
/// Command register: memory space enable.
pub const COMMAND_MEMORY: u16 = 1 << 1;
/// Command register: bus master enable.
pub const COMMAND_BUS_MASTER: u16 = 1 << 2;
/// Command register: INTx emulation disable.
pub const COMMAND_INTX_DISABLE: u16 = 1 << 10;

const OFFSET_COMMAND: u32 = 0x04;
const OFFSET_BAR0: u32 = 0x10;
const OFFSET_INTERRUPT: u32 = 0x3C;

/// A configuration access at an offset that is not a dword inside the 256-byte space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadConfigOffset(pub u32);

/// The configuration space of one emulated function.
#[derive(Debug, Clone)]
pub struct ConfigSpace {
    identity: PciIdentity,
    command: u16,
    /// Address bits written to each BAR slot (already masked to the BAR's size).
    bars: [u32; 6],
    interrupt_line: u8,
}

impl ConfigSpace {
    /// Power-on configuration space for `identity` (decoding off, BARs at 0).
    pub fn new(identity: PciIdentity) -> Result<Self, IdentityError> {
        identity.validate()?;
        Ok(ConfigSpace { identity, command: 0, bars: [0; 6], interrupt_line: 0 })
    }

    /// The identity this space was built from.
    pub fn identity(&self) -> &PciIdentity {
        &self.identity
    }

    /// The command register.
    pub fn command(&self) -> u16 {
        self.command
    }

    /// Whether memory-space decoding is on.
    pub fn memory_enabled(&self) -> bool {
        self.command & COMMAND_MEMORY != 0
    }

    /// Whether I/O-space decoding is on.
    pub fn io_enabled(&self) -> bool {
        self.command & COMMAND_IO != 0
    }

    /// Whether the function may master the bus (DMA).
    pub fn bus_master_enabled(&self) -> bool {
        self.command & COMMAND_BUS_MASTER != 0
    }

    /// Whether accesses to BAR `slot` are decoded now: the slot holds a BAR (not the upper
    /// half of a 64-bit one) and the matching command bit is set. Real hardware does not
    /// respond to a BAR whose decoding is off (the access master-aborts).
    pub fn decodes(&self, slot: u8) -> bool {
        match self.identity.bars.get(usize::from(slot)).copied().flatten() {
            Some(bar) if bar.is_io() => self.io_enabled(),
            Some(_) => self.memory_enabled(),
            None => false,
        }
    }

    /// Size in bytes of BAR `slot`, if there is one.
    pub fn bar_size(&self, slot: u8) -> Option<u64> {
        Some(self.identity.bars.get(usize::from(slot)).copied().flatten()?.size)
    }

    /// The address programmed into BAR `slot` (both halves for a 64-bit BAR).
    pub fn bar_address(&self, slot: u8) -> Option<u64> {
        let i = usize::from(slot);
        let bar = self.identity.bars.get(i).copied().flatten()?;
        Some(match bar.kind {
            BarKind::Memory64 { .. } => u64::from(self.bars[i]) | u64::from(self.bars[i + 1]) << 32,
            _ => u64::from(self.bars[i]),
        })
    }

    /// Program every BAR like firmware does: naturally aligned, in slot order, from `base`
    /// (memory BARs) and `0xC000` (I/O BARs). For in-process tests that probe the function.
    pub fn assign_bars(&mut self, base: u64) {
        let mut memory = base;
        let mut io = 0xC000u64;
        for slot in 0..6u8 {
            let Some(bar) = self.identity.bars[usize::from(slot)] else { continue };
            let next = if bar.is_io() { &mut io } else { &mut memory };
            let address = next.next_multiple_of(bar.size);
            *next = address + bar.size;
            let offset = OFFSET_BAR0 + u32::from(slot) * 4;
            self.write_bar(offset, address as u32);
            if matches!(bar.kind, BarKind::Memory64 { .. }) {
                self.write_bar(offset + 4, (address >> 32) as u32);
            }
        }
    }

    /// Power-on state: decoding off, BARs and interrupt line cleared.
    pub fn reset(&mut self) {
        self.command = 0;
        self.bars = [0; 6];
        self.interrupt_line = 0;
    }

    fn check(offset: u32) -> Result<usize, BadConfigOffset> {
        if offset < CONFIG_SIZE && offset.is_multiple_of(4) {
            Ok((offset / 4) as usize)
        } else {
            Err(BadConfigOffset(offset))
        }
    }

    fn command_mask(&self) -> u16 {
        let has_io = self.identity.bars.iter().flatten().any(|b| b.is_io());
        COMMAND_MEMORY
            | COMMAND_BUS_MASTER
            | COMMAND_INTX_DISABLE
            | if has_io { COMMAND_IO } else { 0 }
    }

    /// Read the dword at `offset` (0..256, dword-aligned).
    pub fn read(&self, offset: u32) -> Result<u32, BadConfigOffset> {
        let id = &self.identity;
        Ok(match Self::check(offset)? {
            0 => u32::from(id.vendor) | u32::from(id.device) << 16,
            // Status (upper half) reads 0: no capabilities, no errors latched.
            1 => u32::from(self.command),
            2 => u32::from(id.revision) | id.class << 8,
            // Cache line, latency, header type 0 (single function), BIST: all 0.
            3 => 0,
            i @ 4..=9 => self.read_bar(i - 4),
            11 => u32::from(id.subsystem_vendor) | u32::from(id.subsystem) << 16,
            15 => u32::from(self.interrupt_line) | u32::from(id.interrupt_pin) << 8,
            _ => 0,
        })
    }

    fn read_bar(&self, slot: usize) -> u32 {
        if let Some(bar) = self.identity.bars[slot] {
            let flags = match bar.kind {
                BarKind::Io => 0b01,
                BarKind::Memory32 { prefetchable } => u32::from(prefetchable) << 3,
                BarKind::Memory64 { prefetchable } => 0b100 | u32::from(prefetchable) << 3,
            };
            self.bars[slot] | flags
        } else if slot > 0
            && matches!(self.identity.bars[slot - 1], Some(b) if matches!(b.kind, BarKind::Memory64 { .. }))
        {
            self.bars[slot]
        } else {
            0
        }
    }

    /// Write the dword at `offset`; read-only bits keep their value.
    pub fn write(&mut self, offset: u32, value: u32) -> Result<(), BadConfigOffset> {
        match Self::check(offset)? {
            1 => self.command = value as u16 & self.command_mask(),
            4..=9 => self.write_bar(offset, value),
            15 => self.interrupt_line = value as u8,
            _ => {}
        }
        Ok(())
    }

    fn write_bar(&mut self, offset: u32, value: u32) {
        let slot = ((offset - OFFSET_BAR0) / 4) as usize;
        let mask = if let Some(bar) = self.identity.bars[slot] {
            let size_mask = !(bar.size - 1);
            match bar.kind {
                BarKind::Io => size_mask as u32 & !0b11,
                _ => size_mask as u32 & !0xF,
            }
        } else if slot > 0 {
            match self.identity.bars[slot - 1] {
                // Upper half of a 64-bit BAR: the high bits of the size mask.
                Some(b) if matches!(b.kind, BarKind::Memory64 { .. }) => {
                    (!(b.size - 1) >> 32) as u32
                }
                _ => 0,
            }
        } else {
            0
        };
        self.bars[slot] = value & mask;
    }

    /// Offset of the command register (for tests and tools).
    pub const COMMAND: u32 = OFFSET_COMMAND;
    /// Offset of BAR0.
    pub const BAR0: u32 = OFFSET_BAR0;
    /// Offset of the interrupt line/pin dword.
    pub const INTERRUPT: u32 = OFFSET_INTERRUPT;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::BarSpec;

    fn space() -> ConfigSpace {
        let mut id = PciIdentity::new(0x1002, 0x7100, 0x030000)
            .with_bar(0, BarSpec::mem32(0x1_0000))
            .with_bar(2, BarSpec::mem64_prefetchable(0x1000_0000))
            .with_bar(4, BarSpec::io(0x100));
        id.revision = 3;
        id.subsystem_vendor = 0x1458;
        id.subsystem = 0x2102;
        ConfigSpace::new(id).unwrap()
    }

    #[test]
    fn ids_class_subsystem_and_pin_are_read_only() {
        let mut c = space();
        for off in [0x00, 0x08, 0x2C] {
            let before = c.read(off).unwrap();
            c.write(off, 0xDEAD_BEEF).unwrap();
            assert_eq!(c.read(off).unwrap(), before);
        }
        assert_eq!(c.read(0x00), Ok(0x7100_1002));
        assert_eq!(c.read(0x08), Ok(0x0300_0003));
        assert_eq!(c.read(0x2C), Ok(0x2102_1458));
        c.write(0x3C, 0xFFFF_FF0B).unwrap();
        assert_eq!(c.read(0x3C), Ok(0x0000_010B), "line writable, pin 1 read-only");
        assert_eq!(c.read(0x0C), Ok(0), "header type 0, single function");
    }

    #[test]
    fn command_register_keeps_only_implemented_bits_and_status_reads_zero() {
        let mut c = space();
        c.write(0x04, 0xFFFF_FFFF).unwrap();
        assert_eq!(c.read(0x04), Ok(0x0407));
        assert!(c.memory_enabled() && c.io_enabled() && c.bus_master_enabled());
        let no_io =
            ConfigSpace::new(PciIdentity::new(1, 2, 0).with_bar(0, BarSpec::mem32(16))).unwrap();
        let mut no_io = no_io;
        no_io.write(0x04, 0x7).unwrap();
        assert_eq!(no_io.read(0x04), Ok(0x6), "no I/O BAR: I/O enable hardwired to 0");
    }

    #[test]
    fn bar_sizing_protocol_including_64_bit_bars() {
        let mut c = space();
        for slot in 0..6 {
            c.write(0x10 + slot * 4, u32::MAX).unwrap();
        }
        assert_eq!(c.read(0x10), Ok(0xFFFF_0000));
        assert_eq!(c.read(0x14), Ok(0), "unimplemented BAR reads 0");
        assert_eq!(c.read(0x18), Ok(0xF000_000C), "64-bit prefetchable");
        assert_eq!(c.read(0x1C), Ok(0xFFFF_FFFF), "upper half of a 256 MiB BAR");
        assert_eq!(c.read(0x20), Ok(0xFFFF_FF01), "256-port I/O BAR");
        assert_eq!(c.read(0x24), Ok(0));
        c.write(0x18, 0xC000_0000).unwrap();
        c.write(0x1C, 0x1).unwrap();
        assert_eq!(c.bar_address(2), Some(0x1_C000_0000));
        c.write(0x10, 0xE000_1234).unwrap();
        assert_eq!(c.read(0x10), Ok(0xE000_0000), "low bits below the size are hardwired");
    }

    #[test]
    fn large_64_bit_bar_masks_its_upper_half() {
        let id = PciIdentity::new(1, 2, 0).with_bar(0, BarSpec::mem64_prefetchable(1 << 33));
        let mut c = ConfigSpace::new(id).unwrap();
        c.write(0x10, u32::MAX).unwrap();
        c.write(0x14, u32::MAX).unwrap();
        assert_eq!((c.read(0x10), c.read(0x14)), (Ok(0x0000_000C), Ok(0xFFFF_FFFE)));
    }

    #[test]
    fn decoding_follows_the_command_register() {
        let mut c = space();
        assert!(!c.decodes(0) && !c.decodes(4));
        c.write(0x04, u32::from(COMMAND_MEMORY)).unwrap();
        assert!(c.decodes(0) && c.decodes(2) && !c.decodes(3) && !c.decodes(4) && !c.decodes(9));
        c.write(0x04, u32::from(COMMAND_IO)).unwrap();
        assert!(!c.decodes(0) && c.decodes(4));
    }

    #[test]
    fn unaligned_and_out_of_range_offsets_are_rejected_and_the_rest_reads_zero() {
        let mut c = space();
        assert_eq!(c.read(0x02), Err(BadConfigOffset(2)));
        assert_eq!(c.read(0x100), Err(BadConfigOffset(0x100)));
        assert_eq!(c.write(0x101, 0), Err(BadConfigOffset(0x101)));
        for off in [0x28, 0x30, 0x34, 0x40, 0xFC] {
            c.write(off, u32::MAX).unwrap();
            assert_eq!(c.read(off), Ok(0), "offset {off:#x}");
        }
    }

    #[test]
    fn assign_bars_is_naturally_aligned_and_reset_clears() {
        let mut c = space();
        c.assign_bars(0xE000_0000);
        assert_eq!(c.bar_address(0), Some(0xE000_0000));
        assert_eq!(c.bar_address(2), Some(0xF000_0000));
        assert_eq!(c.bar_address(4), Some(0xC000));
        c.write(0x04, 2).unwrap();
        c.reset();
        assert_eq!((c.command(), c.bar_address(0)), (0, Some(0)));
    }
}
