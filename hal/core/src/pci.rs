//! PCI discovery: enumerate functions, decode BARs, and the shape of the per-family PCI match
//! tables ([`PciMatch`], generated in `baregpu-regs` from the chipset tables) that identify
//! supported GPUs.
//!
//! The platform supplies a [`ConfigRegionAccess`] (x86 port I/O, ECAM, or the QEMU harness's
//! virtual function): drivers probe emulated and real devices the same way. Header fields and
//! the command register go through `pci_types`; BARs are decoded here, each register read once
//! and sized once, because `pci_types` 0.10 `EndpointHeader::bar` reads the BAR again after we
//! checked it (a device that changes in between hits its `panic!` on a reserved type) and
//! shifts by the read-back's trailing zeros unchecked (a 32-bit read-back without address bits,
//! or a 64-bit one reading 0/0, overflows the shift). Hostile configuration space is a typed
//! [`PciError`], never a panic.

use core::fmt;
use pci_types::{CommandRegister, EndpointHeader, HeaderType, PciHeader};
pub use pci_types::{ConfigRegionAccess, PciAddress};

/// One line of a family's PCI match table (generated as `baregpu_regs::<family>::PCI_IDS` from
/// the register database's chipset table): a range of device IDs of one chipset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct PciMatch<C: 'static> {
    /// PCI vendor ID.
    pub vendor: u16,
    /// First device ID of the range.
    pub first: u16,
    /// Last device ID of the range (inclusive).
    pub last: u16,
    /// The chipset (the family's generated `Chipset` enum).
    pub chipset: C,
    /// Marketing name of the range, for logs, where the database gives one.
    pub name: Option<&'static str>,
}

impl<C> PciMatch<C> {
    /// Whether the IDs fall in this entry.
    pub const fn matches(&self, vendor: u16, device: u16) -> bool {
        self.vendor == vendor && self.first <= device && device <= self.last
    }
}

/// Why a function could not be probed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum PciError {
    /// Configuration reads return all-ones: no function there, or the device fell off the bus.
    NoDevice,
    /// The function is a bridge or CardBus header, not an endpoint.
    NotEndpoint,
    /// A memory BAR advertises a reserved type (bits 2:1 = 01 or 11).
    ReservedBarType {
        /// BAR slot.
        slot: u8,
    },
    /// A memory BAR's sizing read-back (all-ones written) has no writable address bit, so it
    /// names no size: a 32-bit BAR reading back only its type bits, or a 64-bit one reading
    /// back 0 in both halves.
    BadBarSize {
        /// BAR slot.
        slot: u8,
    },
    /// A 64-bit memory BAR in slot 5, which has no slot above it for the upper half.
    WideBarInLastSlot,
}

impl fmt::Display for PciError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PciError::NoDevice => write!(f, "no PCI function (config space reads all-ones)"),
            PciError::NotEndpoint => write!(f, "PCI function is not an endpoint"),
            PciError::ReservedBarType { slot } => write!(f, "BAR{slot} has a reserved memory type"),
            PciError::BadBarSize { slot } => {
                write!(f, "BAR{slot} reads back no address bits when sized")
            }
            PciError::WideBarInLastSlot => f.write_str("BAR5 is a 64-bit memory BAR"),
        }
    }
}

impl core::error::Error for PciError {}

/// A decoded base address register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Bar {
    /// Memory BAR (32- or 64-bit) at a bus address.
    Memory {
        /// Bus address.
        address: u64,
        /// Size in bytes.
        size: u64,
        /// 64-bit BAR (occupies two slots).
        wide: bool,
        /// Prefetchable.
        prefetchable: bool,
    },
    /// I/O port BAR.
    Io {
        /// First port.
        port: u32,
    },
}

/// What probing an endpoint found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PciFunction {
    /// Where it lives.
    pub address: PciAddress,
    /// Vendor ID.
    pub vendor: u16,
    /// Device ID.
    pub device: u16,
    /// Revision ID.
    pub revision: u8,
    /// Class, subclass and programming interface (`0x030000` = VGA controller).
    pub class: u32,
    /// Decoded BARs by slot; the upper half of a 64-bit BAR is `None`.
    pub bars: [Option<Bar>; 6],
    /// Interrupt pin (0 = none, 1 = INTA# …).
    pub interrupt_pin: u8,
}

impl PciFunction {
    /// Memory BAR `slot` as (bus address, size).
    pub fn memory_bar(&self, slot: usize) -> Option<(u64, u64)> {
        match self.bars.get(slot).copied().flatten()? {
            Bar::Memory { address, size, .. } => Some((address, size)),
            Bar::Io { .. } => None,
        }
    }
}

/// A GPU's register BAR: slot, bus address and size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct RegisterBar {
    /// BAR slot (0 on the emulated devices, 2 on real Radeon boards; see
    /// [`PciFunction::register_bar`]).
    pub slot: usize,
    /// Bus address of register offset 0.
    pub address: u64,
    /// Size in bytes.
    pub size: u64,
}

impl PciFunction {
    /// The register BAR of a GPU: the first **non-prefetchable memory** BAR.
    ///
    /// Real Radeon boards (R5xx, Evergreen, Cayman) put the prefetchable VRAM aperture at BAR0
    /// (64-bit, slots 0-1) and the registers at BAR2 (Linux `radeon_device.c`: `rmmio_base =
    /// pci_resource_start(pdev, 2)` before Bonaire); the emulated devices have their register
    /// file at BAR0. Registers have read side effects, so they are never prefetchable; VRAM
    /// always is: the first non-prefetchable memory BAR is the register file in both layouts.
    pub fn register_bar(&self) -> Option<RegisterBar> {
        self.bars.iter().enumerate().find_map(|(slot, bar)| match bar {
            Some(Bar::Memory { address, size, prefetchable: false, .. }) => {
                Some(RegisterBar { slot, address: *address, size: *size })
            }
            _ => None,
        })
    }
}

/// A supported GPU found by [`probe_gpu`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbedGpu<C: 'static> {
    /// What probing found (IDs, class, BARs, interrupt pin).
    pub function: PciFunction,
    /// The chipset its PCI ID names (the family's generated `Chipset`).
    pub chip: C,
    /// Marketing name of its PCI ID range, for logs (the chipset name where the table has none).
    pub name: &'static str,
    /// The register BAR (map it and hand the mapping to the driver's `init`).
    pub registers: RegisterBar,
}

/// Why a function is not a GPU a driver can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum GpuProbeError {
    /// Probing failed (no function, not an endpoint, bad BAR).
    Pci(PciError),
    /// The IDs are not in the driver's PCI match table.
    NotSupported {
        /// PCI vendor ID.
        vendor: u16,
        /// PCI device ID.
        device: u16,
    },
    /// No non-prefetchable memory BAR ([`PciFunction::register_bar`]).
    NoRegisterBar,
    /// The register BAR is smaller than the span of the registers the driver writes.
    RegisterBarTooSmall {
        /// Its size in bytes.
        size: u64,
    },
}

impl From<PciError> for GpuProbeError {
    fn from(e: PciError) -> Self {
        GpuProbeError::Pci(e)
    }
}

impl fmt::Display for GpuProbeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GpuProbeError::Pci(_) => f.write_str("PCI probe failed"),
            GpuProbeError::NotSupported { vendor, device } => {
                write!(f, "{vendor:04x}:{device:04x} is not in the driver's PCI table")
            }
            GpuProbeError::NoRegisterBar => {
                f.write_str("no non-prefetchable memory BAR for registers")
            }
            GpuProbeError::RegisterBarTooSmall { size } => {
                write!(f, "register BAR of {size:#x} bytes is too small for the registers")
            }
        }
    }
}

impl core::error::Error for GpuProbeError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            GpuProbeError::Pci(e) => Some(e),
            _ => None,
        }
    }
}

/// Probe `address` for a GPU of `table` (a family's generated `PCI_IDS`) with a register BAR
/// ([`PciFunction::register_bar`]) of at least `min_register_bar` bytes; `chip_name` names a
/// chipset whose table line has no marketing name. Reads configuration space only (BAR sizing
/// with decoding briefly off, as [`probe`] does); touches no register.
pub fn probe_gpu<C: Copy + 'static>(
    access: &impl ConfigRegionAccess,
    address: PciAddress,
    table: &[PciMatch<C>],
    min_register_bar: u64,
    chip_name: fn(C) -> &'static str,
) -> Result<ProbedGpu<C>, GpuProbeError> {
    let function = probe(access, address)?;
    let (vendor, device) = (function.vendor, function.device);
    let entry = table
        .iter()
        .find(|m| m.matches(vendor, device))
        .ok_or(GpuProbeError::NotSupported { vendor, device })?;
    let registers = function.register_bar().ok_or(GpuProbeError::NoRegisterBar)?;
    if registers.size < min_register_bar {
        return Err(GpuProbeError::RegisterBarTooSmall { size: registers.size });
    }
    Ok(ProbedGpu {
        function,
        chip: entry.chipset,
        name: entry.name.unwrap_or_else(|| chip_name(entry.chipset)),
        registers,
    })
}

/// Enable memory decoding (the register BAR answers) and bus mastering (a GPU's command
/// processor fetches its rings and writes back pointers, fences and interrupt vectors) in the
/// command register of `address`. Linux turns bus mastering on before the CP bring-up
/// (radeon_device.c `pci_set_master`). Returns the command register as written.
pub fn enable_memory_and_bus_master(
    access: &impl ConfigRegionAccess,
    address: PciAddress,
) -> Result<u16, PciError> {
    let mut endpoint = EndpointHeader::from_header(PciHeader::new(address), access)
        .ok_or(PciError::NotEndpoint)?;
    let mut written = CommandRegister::empty();
    endpoint.update_command(access, |c| {
        written = c | CommandRegister::MEMORY_ENABLE | CommandRegister::BUS_MASTER_ENABLE;
        written
    });
    Ok(written.bits())
}

const OFFSET_ID: u16 = 0x00;
const OFFSET_BAR0: u16 = 0x10;
const OFFSET_INTERRUPT: u16 = 0x3C;

fn read(access: &impl ConfigRegionAccess, address: PciAddress, offset: u16) -> u32 {
    // SAFETY: offsets used here are inside the 256-byte standard header, valid for every function.
    unsafe { access.read(address, offset) }
}

/// Probe one function: identity, class, interrupt pin and BARs.
///
/// BARs are sized with memory and I/O decoding disabled, then the command register is restored,
/// so a live device never decodes the all-ones sizing pattern as an address.
pub fn probe(
    access: &impl ConfigRegionAccess,
    address: PciAddress,
) -> Result<PciFunction, PciError> {
    let id = read(access, address, OFFSET_ID);
    if id == u32::MAX || id & 0xFFFF == 0xFFFF {
        return Err(PciError::NoDevice);
    }
    let header = PciHeader::new(address);
    if header.header_type(access) != HeaderType::Endpoint {
        return Err(PciError::NotEndpoint);
    }
    let (revision, class, subclass, interface) = header.revision_and_class(access);
    let mut endpoint = EndpointHeader::from_header(header, access).ok_or(PciError::NotEndpoint)?;

    let command = endpoint.command(access);
    endpoint.update_command(access, |c| {
        c.difference(CommandRegister::MEMORY_ENABLE | CommandRegister::IO_ENABLE)
    });
    let bars = decode_bars(access, address);
    endpoint.update_command(access, |_| command);
    let bars = bars?;

    let interrupt_pin = (read(access, address, OFFSET_INTERRUPT) >> 8) as u8;
    Ok(PciFunction {
        address,
        vendor: id as u16,
        device: (id >> 16) as u16,
        revision,
        class: (u32::from(class) << 16) | (u32::from(subclass) << 8) | u32::from(interface),
        bars,
        interrupt_pin,
    })
}

fn decode_bars(
    access: &impl ConfigRegionAccess,
    address: PciAddress,
) -> Result<[Option<Bar>; 6], PciError> {
    let mut bars = [None; 6];
    let mut slot = 0u8;
    while slot < 6 {
        let (bar, slots) = decode_bar(access, address, slot)?;
        bars[usize::from(slot)] = bar;
        slot += slots;
    }
    Ok(bars)
}

/// Write all-ones to the BAR register at `offset`, read back what sticks, write `restore`
/// (the PCI sizing protocol; the caller has decoding off).
fn size_register(
    access: &impl ConfigRegionAccess,
    address: PciAddress,
    offset: u16,
    restore: u32,
) -> u32 {
    // SAFETY: `offset` is one of the six BAR registers of the standard header.
    unsafe {
        access.write(address, offset, u32::MAX);
        let readback = access.read(address, offset);
        access.write(address, offset, restore);
        readback
    }
}

/// Bits 3:0 of a memory BAR: space, type, prefetchable.
const MEMORY_BAR_FLAGS: u32 = 0xF;
/// Bits 1:0 of an I/O BAR: space, reserved.
const IO_BAR_FLAGS: u32 = 0x3;

/// Decode BAR `slot` from one read of its register (and of the upper half of a 64-bit BAR)
/// and one sizing round: the BAR and the slots it occupies. An unimplemented memory BAR
/// (read-back 0) is `None`. I/O BARs are not sized (the drivers use none).
fn decode_bar(
    access: &impl ConfigRegionAccess,
    address: PciAddress,
    slot: u8,
) -> Result<(Option<Bar>, u8), PciError> {
    let offset = OFFSET_BAR0 + u16::from(slot) * 4;
    let raw = read(access, address, offset);
    if raw & 1 == 1 {
        return Ok((Some(Bar::Io { port: raw & !IO_BAR_FLAGS }), 1));
    }
    let prefetchable = raw & 0b1000 != 0;
    let base = raw & !MEMORY_BAR_FLAGS;
    match (raw >> 1) & 0b11 {
        0b00 => {
            let readback = size_register(access, address, offset, raw);
            if readback == 0 {
                return Ok((None, 1));
            }
            let mask = readback & !MEMORY_BAR_FLAGS;
            if mask == 0 {
                return Err(PciError::BadBarSize { slot });
            }
            let size = 1u64 << mask.trailing_zeros();
            Ok((Some(Bar::Memory { address: base.into(), size, wide: false, prefetchable }), 1))
        }
        0b10 => {
            if slot == 5 {
                return Err(PciError::WideBarInLastSlot);
            }
            let upper = read(access, address, offset + 4);
            let low = size_register(access, address, offset, raw);
            let high = size_register(access, address, offset + 4, upper);
            let mask = u64::from(high) << 32 | u64::from(low & !MEMORY_BAR_FLAGS);
            if mask == 0 {
                return Err(PciError::BadBarSize { slot });
            }
            let size = 1u64 << mask.trailing_zeros();
            let address = u64::from(upper) << 32 | u64::from(base);
            Ok((Some(Bar::Memory { address, size, wide: true, prefetchable }), 2))
        }
        _ => Err(PciError::ReservedBarType { slot }),
    }
}

/// Visit every endpoint function on buses `0..=last_bus` of segment 0 (brute force: works
/// without ACPI and finds functions behind bridges the firmware numbered).
pub fn scan(access: &impl ConfigRegionAccess, last_bus: u8, visit: impl FnMut(PciFunction)) {
    scan_segment(access, 0, last_bus, visit)
}

/// [`scan`] on another PCI segment (a second host bridge, or the QEMU harness's virtual
/// segment for emulated GPUs).
pub fn scan_segment(
    access: &impl ConfigRegionAccess,
    segment: u16,
    last_bus: u8,
    mut visit: impl FnMut(PciFunction),
) {
    for bus in 0..=last_bus {
        for device in 0..32u8 {
            let function0 = PciAddress::new(segment, bus, device, 0);
            if read(access, function0, OFFSET_ID) & 0xFFFF == 0xFFFF {
                continue;
            }
            let functions =
                if PciHeader::new(function0).has_multiple_functions(access) { 8 } else { 1 };
            for function in 0..functions {
                if let Ok(f) = probe(access, PciAddress::new(segment, bus, device, function)) {
                    visit(f);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::cell::RefCell;

    /// One endpoint function at 00:03.0 with a 64 KiB 32-bit BAR0, a 256 MiB 64-bit prefetchable
    /// BAR2/3 and an I/O BAR4, following the PCI sizing protocol; everything else reads all-ones.
    struct FakeConfig {
        regs: RefCell<[u32; 64]>,
        sizes: [u32; 6],
        decode_enabled_while_sizing: RefCell<bool>,
    }

    impl FakeConfig {
        fn r5xx() -> Self {
            let mut regs = [0u32; 64];
            regs[0] = 0x7100_1002;
            regs[1] = 0x0000_0007; // I/O + memory + bus master enabled
            regs[2] = 0x0300_0000;
            regs[4] = 0xE000_0000; // BAR0: 32-bit memory
            regs[6] = 0xC000_000C; // BAR2: 64-bit prefetchable
            regs[7] = 0x0000_0000;
            regs[8] = 0x0000_C001; // BAR4: I/O
            regs[15] = 0x0000_0100; // INTA#
            FakeConfig {
                regs: RefCell::new(regs),
                sizes: [!(0x1_0000 - 1), 0, !(0x1000_0000 - 1), u32::MAX, !(0x100 - 1), 0],
                decode_enabled_while_sizing: RefCell::new(false),
            }
        }
    }

    impl ConfigRegionAccess for FakeConfig {
        unsafe fn read(&self, address: PciAddress, offset: u16) -> u32 {
            if (address.segment(), address.bus(), address.device(), address.function())
                != (0, 0, 3, 0)
            {
                return u32::MAX;
            }
            self.regs.borrow()[usize::from(offset / 4)]
        }

        unsafe fn write(&self, address: PciAddress, offset: u16, value: u32) {
            if (address.segment(), address.bus(), address.device(), address.function())
                != (0, 0, 3, 0)
            {
                return;
            }
            let index = usize::from(offset / 4);
            let mut regs = self.regs.borrow_mut();
            if (4..10).contains(&index) {
                if value == u32::MAX && regs[1] & 0b11 != 0 {
                    *self.decode_enabled_while_sizing.borrow_mut() = true;
                }
                let flags = regs[index] & if regs[index] & 1 == 1 { 0x3 } else { 0xF };
                regs[index] = (value & self.sizes[index - 4]) | flags;
            } else {
                regs[index] = value;
            }
        }
    }

    #[test]
    fn probe_decodes_bars_with_decoding_off_and_restores_the_command_register() {
        let cfg = FakeConfig::r5xx();
        let f = probe(&cfg, PciAddress::new(0, 0, 3, 0)).unwrap();
        assert_eq!((f.vendor, f.device, f.class), (0x1002, 0x7100, 0x030000));
        assert_eq!(f.memory_bar(0), Some((0xE000_0000, 0x1_0000)));
        assert_eq!(f.memory_bar(2), Some((0xC000_0000, 0x1000_0000)));
        assert_eq!(f.bars[3], None, "upper half of a 64-bit BAR");
        assert_eq!(f.bars[4], Some(Bar::Io { port: 0xC000 }));
        assert_eq!(f.interrupt_pin, 1);
        assert!(!*cfg.decode_enabled_while_sizing.borrow());
        assert_eq!(cfg.regs.borrow()[1], 7, "command register restored");
        assert_eq!(cfg.regs.borrow()[4] & !0xF, 0xE000_0000, "BAR address restored");
    }

    #[test]
    fn all_ones_config_space_is_reported_as_no_device() {
        let cfg = FakeConfig::r5xx();
        assert_eq!(probe(&cfg, PciAddress::new(0, 0, 4, 0)), Err(PciError::NoDevice));
    }

    #[test]
    fn reserved_bar_type_is_an_error_not_a_panic() {
        let cfg = FakeConfig::r5xx();
        cfg.regs.borrow_mut()[4] = 0xE000_0002; // type 01: reserved (was "below 1 MiB")
        assert_eq!(
            probe(&cfg, PciAddress::new(0, 0, 3, 0)),
            Err(PciError::ReservedBarType { slot: 0 })
        );
        assert_eq!(cfg.regs.borrow()[1], 7, "command register restored on error too");
    }

    /// A BAR that reads as a valid type once and as a reserved type on every later read:
    /// `pci_types` re-read it after our check and panicked ("BAR Memory type is reserved!").
    #[test]
    fn a_bar_that_changes_between_reads_is_decoded_from_one_read() {
        struct Changing(FakeConfig, core::cell::Cell<u32>);
        impl ConfigRegionAccess for Changing {
            unsafe fn read(&self, address: PciAddress, offset: u16) -> u32 {
                // SAFETY: forwarded with the caller's guarantee.
                let v = unsafe { self.0.read(address, offset) };
                if offset != OFFSET_BAR0 {
                    return v;
                }
                self.1.set(self.1.get() + 1);
                if self.1.get() == 1 { v } else { v | 0b110 }
            }
            unsafe fn write(&self, address: PciAddress, offset: u16, value: u32) {
                // SAFETY: forwarded with the caller's guarantee.
                unsafe { self.0.write(address, offset, value) }
            }
        }
        let cfg = Changing(FakeConfig::r5xx(), core::cell::Cell::new(0));
        let f = probe(&cfg, PciAddress::new(0, 0, 3, 0)).unwrap();
        assert_eq!(f.memory_bar(0), Some((0xE000_0000, 0x1_0000)));
    }

    /// Sizing read-backs without a single address bit name no size: `pci_types` shifted by 32
    /// (a 32-bit BAR reading back only its type bits) or 64 (a 64-bit BAR reading back 0/0),
    /// a panic with overflow checks and a size of 1 without.
    #[test]
    fn a_sizing_read_back_without_address_bits_is_an_error_not_a_panic() {
        let mut cfg = FakeConfig::r5xx();
        cfg.sizes[0] = 0; // BAR0 keeps only its flag bits, and they are not zero
        cfg.regs.borrow_mut()[4] = 0x0000_0008; // 32-bit prefetchable memory at 0
        assert_eq!(probe(&cfg, PciAddress::new(0, 0, 3, 0)), Err(PciError::BadBarSize { slot: 0 }));
        let mut cfg = FakeConfig::r5xx();
        cfg.sizes[2] = 0; // BAR2/3: a 64-bit BAR whose halves read back 0 and 0
        cfg.sizes[3] = 0;
        cfg.regs.borrow_mut()[6] = 0x0000_0004;
        assert_eq!(probe(&cfg, PciAddress::new(0, 0, 3, 0)), Err(PciError::BadBarSize { slot: 2 }));
        assert_eq!(cfg.regs.borrow()[1], 7, "command register restored");
        let cfg = FakeConfig::r5xx();
        cfg.regs.borrow_mut()[9] = 0x0000_0004; // BAR5: 64-bit, no slot for its upper half
        assert_eq!(probe(&cfg, PciAddress::new(0, 0, 3, 0)), Err(PciError::WideBarInLastSlot));
    }

    #[test]
    fn scan_finds_the_one_function_on_its_segment_only() {
        let cfg = FakeConfig::r5xx();
        let mut found = 0;
        scan(&cfg, 1, |f| {
            assert_eq!(f.address, PciAddress::new(0, 0, 3, 0));
            found += 1;
        });
        assert_eq!(found, 1);
        scan_segment(&cfg, 1, 1, |f| panic!("segment 1 is empty, found {f:?}"));
    }

    #[test]
    fn a_match_entry_covers_its_vendor_and_inclusive_device_range() {
        let m = PciMatch { vendor: 0x1002, first: 0x7140, last: 0x714F, chipset: (), name: None };
        assert!(m.matches(0x1002, 0x7140) && m.matches(0x1002, 0x714F));
        assert!(!m.matches(0x1002, 0x7150) && !m.matches(0x10DE, 0x7145));
    }
}
