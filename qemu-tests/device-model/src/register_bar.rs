//! The register BAR every GPU model presents: one 32-bit memory BAR holding the register space,
//! every access forwarded to the model's register file unless the device has fallen off the
//! bus. Written once here so each model's `GpuModel` BAR methods are one line.

use crate::model::{BarSpec, PciIdentity};

/// A model's register BAR: its slot and size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegisterBar {
    /// The BAR slot (0..=5).
    pub slot: u8,
    /// Bytes of register space (a power of two).
    pub size: u64,
}

impl RegisterBar {
    /// A register BAR in `slot` of `size` bytes.
    pub const fn new(slot: u8, size: u64) -> Self {
        RegisterBar { slot, size }
    }

    /// `identity` with this BAR as a non-prefetchable 32-bit memory BAR.
    pub const fn present(&self, identity: PciIdentity) -> PciIdentity {
        identity.with_bar(self.slot as usize, BarSpec::mem32(self.size))
    }

    /// A read of `bar` at a register offset: all-ones while the device is `gone` (a device
    /// that fell off the bus), 0 for another BAR, else what `read` returns.
    pub fn read(&self, bar: u8, gone: bool, read: impl FnOnce() -> u32) -> u32 {
        if gone {
            u32::MAX
        } else if bar != self.slot {
            0
        } else {
            read()
        }
    }

    /// A write of `bar`: dropped while the device is `gone` or for another BAR, else `write`
    /// runs (its failures go to the model's error state through `DeviceContext::fail`).
    pub fn write(&self, bar: u8, gone: bool, write: impl FnOnce()) {
        if !gone && bar == self.slot {
            write();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accesses_reach_the_registers_only_on_the_bar_and_while_the_device_is_there() {
        let bar = RegisterBar::new(0, 0x1_0000);
        let id = bar.present(PciIdentity::new(0x1002, 0x7100, 0x03_0000));
        assert_eq!(id.bars[0], Some(BarSpec::mem32(0x1_0000)));
        assert_eq!(bar.read(0, false, || 7), 7);
        assert_eq!(bar.read(2, false, || 7), 0);
        assert_eq!(bar.read(0, true, || 7), u32::MAX);
        let mut wrote = 0;
        bar.write(0, false, || wrote += 1);
        bar.write(1, false, || wrote += 1);
        bar.write(0, true, || wrote += 1);
        assert_eq!(wrote, 1);
    }
}
