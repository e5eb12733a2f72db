//! What a device model implements: [`GpuModel`], and the PCI identity it presents.

use crate::context::DeviceContext;

/// Whether a model's self-running engines (ring fetchers, DMA engines) have work left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activity {
    /// Nothing to do until the next register access.
    Idle,
    /// Work can make progress right now: tick again immediately. A model that stays `Busy`
    /// for [`crate::TICK_BUDGET`] ticks in a row is treated as hung: it enters the error state
    /// ([`crate::error_code::HUNG`]) and the request that started the work completes with
    /// mailbox `ModelError`.
    Busy,
    /// Blocked on something outside the device (e.g. polling a semaphore in guest memory the
    /// driver will write later): tick again periodically, not immediately.
    Waiting,
}

/// The kind of a base address register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BarKind {
    /// 32-bit memory BAR.
    Memory32 {
        /// Prefetchable (no read side effects).
        prefetchable: bool,
    },
    /// 64-bit memory BAR: occupies its slot and the next one.
    Memory64 {
        /// Prefetchable (no read side effects).
        prefetchable: bool,
    },
    /// I/O port BAR.
    Io,
}

/// One base address register: size (a power of two) and kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BarSpec {
    /// Size in bytes: a power of two, at least 16 for memory and 4 for I/O, at most 256 for
    /// I/O and 2 GiB for 32-bit memory.
    pub size: u64,
    /// Memory or I/O, width, prefetchability.
    pub kind: BarKind,
}

impl BarSpec {
    /// A non-prefetchable 32-bit memory BAR (register space).
    pub const fn mem32(size: u64) -> Self {
        BarSpec { size, kind: BarKind::Memory32 { prefetchable: false } }
    }

    /// A prefetchable 64-bit memory BAR (VRAM aperture).
    pub const fn mem64_prefetchable(size: u64) -> Self {
        BarSpec { size, kind: BarKind::Memory64 { prefetchable: true } }
    }

    /// An I/O port BAR.
    pub const fn io(size: u64) -> Self {
        BarSpec { size, kind: BarKind::Io }
    }

    /// Whether this is an I/O BAR.
    pub const fn is_io(&self) -> bool {
        matches!(self.kind, BarKind::Io)
    }
}

/// What the PCI function reports in its type-0 configuration header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PciIdentity {
    /// Vendor ID.
    pub vendor: u16,
    /// Device ID.
    pub device: u16,
    /// Revision ID.
    pub revision: u8,
    /// Class code, subclass and programming interface (24 bits, e.g. `0x030000`).
    pub class: u32,
    /// Subsystem vendor ID.
    pub subsystem_vendor: u16,
    /// Subsystem ID.
    pub subsystem: u16,
    /// Interrupt pin: 0 none, 1..=4 INTA#..INTD#.
    pub interrupt_pin: u8,
    /// BARs by slot. The slot after a [`BarKind::Memory64`] BAR must be `None`; the mailbox
    /// names a BAR by its slot.
    pub bars: [Option<BarSpec>; 6],
}

impl PciIdentity {
    /// A function with the given IDs and class, revision 0, no subsystem, INTA#, no BARs.
    pub const fn new(vendor: u16, device: u16, class: u32) -> Self {
        PciIdentity {
            vendor,
            device,
            revision: 0,
            class,
            subsystem_vendor: 0,
            subsystem: 0,
            interrupt_pin: 1,
            bars: [None; 6],
        }
    }

    /// The same identity with BAR `slot` set.
    pub const fn with_bar(mut self, slot: usize, bar: BarSpec) -> Self {
        self.bars[slot] = Some(bar);
        self
    }

    /// Check the BAR list: power-of-two sizes within the limits of their kind, and a free upper
    /// slot after every 64-bit BAR.
    pub fn validate(&self) -> Result<(), IdentityError> {
        if self.class > 0xFF_FFFF {
            return Err(IdentityError::ClassTooWide(self.class));
        }
        if self.interrupt_pin > 4 {
            return Err(IdentityError::BadInterruptPin(self.interrupt_pin));
        }
        for (slot, bar) in self.bars.iter().enumerate() {
            let Some(bar) = bar else { continue };
            let (min, max) = match bar.kind {
                BarKind::Io => (4, 256),
                BarKind::Memory32 { .. } => (16, 1 << 31),
                BarKind::Memory64 { .. } => (16, 1 << 63),
            };
            if !bar.size.is_power_of_two() || bar.size < min || bar.size > max {
                return Err(IdentityError::BadBarSize { slot: slot as u8, size: bar.size });
            }
            if matches!(bar.kind, BarKind::Memory64 { .. })
                && (slot == 5 || self.bars[slot + 1].is_some())
            {
                return Err(IdentityError::NoUpperSlot { slot: slot as u8 });
            }
        }
        Ok(())
    }
}

/// Why a [`PciIdentity`] cannot be emulated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdentityError {
    /// A BAR size is not a power of two or outside its kind's limits.
    BadBarSize {
        /// BAR slot.
        slot: u8,
        /// The size given.
        size: u64,
    },
    /// A 64-bit BAR sits in slot 5 or its upper slot is used by another BAR.
    NoUpperSlot {
        /// BAR slot.
        slot: u8,
    },
    /// The class code does not fit 24 bits.
    ClassTooWide(u32),
    /// The interrupt pin is not 0..=4.
    BadInterruptPin(u8),
}

impl core::fmt::Display for IdentityError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            IdentityError::BadBarSize { slot, size } => {
                write!(f, "BAR{slot}: size {size:#x} is not a valid power of two for its kind")
            }
            IdentityError::NoUpperSlot { slot } => {
                write!(f, "BAR{slot}: 64-bit BAR without a free upper slot")
            }
            IdentityError::ClassTooWide(c) => write!(f, "class code {c:#x} exceeds 24 bits"),
            IdentityError::BadInterruptPin(p) => write!(f, "interrupt pin {p} is not 0..=4"),
        }
    }
}

impl std::error::Error for IdentityError {}

/// An emulated PCI function's behaviour behind its BARs.
///
/// The framework ([`crate::Device`]) owns configuration space, BAR decoding, bounds checks,
/// interrupt delivery and the error state; the model only sees accesses that hit one of its
/// BARs with memory decoding on, at a dword-aligned offset inside the BAR. Everything the guest
/// sends is untrusted: a model must not panic on any value, and reports invalid programming
/// with [`DeviceContext::fail`].
pub trait GpuModel: Send {
    /// The configuration header to present (read once, when the device is built).
    fn pci_identity(&self) -> PciIdentity;

    /// Read the dword at byte `offset` of BAR `bar`, with its side effects.
    fn mmio_read(&mut self, bar: u8, offset: u32, dev: &mut DeviceContext<'_>) -> u32;

    /// Write the dword at byte `offset` of BAR `bar`, with its side effects.
    fn mmio_write(&mut self, bar: u8, offset: u32, value: u32, dev: &mut DeviceContext<'_>);

    /// Advance engines that run on their own by one small, bounded step (e.g. one fetch of a
    /// command stream): the framework's pacing ([`crate::pacing`]) decides how many ticks
    /// each access, clock reading or millisecond gives, so partial progress is what a driver
    /// normally sees. No tick may run unbounded guest-controlled work. Never called while the
    /// device is in its error state (engines stay frozen until reset, though register
    /// accesses still reach the model).
    ///
    /// A model that runs microcode it cannot execute (its instruction set undocumented) runs
    /// only images it knows by SHA-256 and does nothing with any other (r5xx-model's
    /// `microcode` module is the pattern).
    fn tick(&mut self, dev: &mut DeviceContext<'_>) -> Activity {
        let _ = dev;
        Activity::Idle
    }

    /// Return to the power-on state (the framework clears interrupts and the error state).
    fn reset(&mut self);

    /// Set the harness's fault-injection switches (`gpu_mailbox::Op::Inject`); model-defined
    /// bits, 0 clears. Returns `false` if the model has no switches (the request fails with
    /// `BadOp`).
    fn inject(&mut self, switches: u32) -> bool {
        let _ = switches;
        false
    }
}

impl<M: GpuModel + ?Sized> GpuModel for Box<M> {
    fn pci_identity(&self) -> PciIdentity {
        (**self).pci_identity()
    }
    fn mmio_read(&mut self, bar: u8, offset: u32, dev: &mut DeviceContext<'_>) -> u32 {
        (**self).mmio_read(bar, offset, dev)
    }
    fn mmio_write(&mut self, bar: u8, offset: u32, value: u32, dev: &mut DeviceContext<'_>) {
        (**self).mmio_write(bar, offset, value, dev)
    }
    fn tick(&mut self, dev: &mut DeviceContext<'_>) -> Activity {
        (**self).tick(dev)
    }
    fn reset(&mut self) {
        (**self).reset()
    }
    fn inject(&mut self, switches: u32) -> bool {
        (**self).inject(switches)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_validation_rejects_bad_bars() {
        let ok = PciIdentity::new(1, 2, 0x030000)
            .with_bar(0, BarSpec::mem32(0x1000))
            .with_bar(2, BarSpec::mem64_prefetchable(1 << 28))
            .with_bar(4, BarSpec::io(0x100));
        assert_eq!(ok.validate(), Ok(()));
        let odd = PciIdentity::new(1, 2, 0).with_bar(1, BarSpec::mem32(0x1800));
        assert_eq!(odd.validate(), Err(IdentityError::BadBarSize { slot: 1, size: 0x1800 }));
        let clash = ok.with_bar(3, BarSpec::mem32(16));
        assert_eq!(clash.validate(), Err(IdentityError::NoUpperSlot { slot: 2 }));
        let last = PciIdentity::new(1, 2, 0).with_bar(5, BarSpec::mem64_prefetchable(16));
        assert_eq!(last.validate(), Err(IdentityError::NoUpperSlot { slot: 5 }));
        let io = PciIdentity::new(1, 2, 0).with_bar(0, BarSpec::io(512));
        assert!(io.validate().is_err());
        assert_eq!(
            PciIdentity::new(1, 2, 0x100_0000).validate(),
            Err(IdentityError::ClassTooWide(0x100_0000))
        );
    }
}
