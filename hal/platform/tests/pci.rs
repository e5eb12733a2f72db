//! ECAM addressing and MSI-X set-up against a configuration space held in host memory.

use baregpu_hal::RegisterIo;
use baregpu_hal::pci::{self, ConfigRegionAccess, PciAddress};
use baregpu_platform::msi::{MsiError, MsiMessage, Msix};
use baregpu_platform::pci::Ecam;
use core::cell::RefCell;
use core::ptr::NonNull;

/// A window of `buses` buses of 4 KiB function spaces, none with a function: each space's
/// ID dword reads all-ones, as an absent function's does (a scan reads nothing else of it).
/// Zeroed memory and 256 ID dwords per bus, not 1 MiB filled dword by dword: 12 s under Miri.
fn window(buses: usize) -> &'static mut [u32] {
    let memory = Box::leak(vec![0u32; buses << 18].into_boxed_slice());
    for id in memory.iter_mut().step_by(4096 / 4) {
        *id = u32::MAX;
    }
    memory
}

/// Byte offset of a function's space in a window starting at bus `first`.
fn at(bus: u8, device: u8, function: u8, first: u8) -> usize {
    (usize::from(bus - first) << 20) | usize::from(device) << 15 | usize::from(function) << 12
}

#[test]
fn ecam_reaches_the_function_space_the_address_names_and_nothing_outside_its_buses() {
    let memory = window(1);
    // Bus 5 of segment 0 (a window starting past bus 0); one function, 05:03.0, with an empty header. Set up before
    // the window's pointer is taken: from then on only ECAM touches it.
    let space = at(5, 3, 0, 5) / 4;
    memory[space..space + 1024].fill(0);
    memory[space] = 0x7100_1002; // device:vendor of 05:03.0
    memory[space + 0xFFC / 4] = 0x1234_5678; // last dword of its extended space
    let ecam_base = NonNull::new(memory.as_mut_ptr().cast::<u8>()).unwrap();
    // SAFETY: the leaked window stands in for the mapped ECAM region, used only here.
    let ecam = unsafe { Ecam::new(ecam_base, 0, 5, 5) };
    let function = PciAddress::new(0, 5, 3, 0);
    // SAFETY: reads and writes of a window in host memory; no device behind it.
    unsafe {
        assert_eq!(ecam.read(function, 0), 0x7100_1002);
        assert_eq!(ecam.read(function, 0xFFC), 0x1234_5678);
        // Sub-dword offsets address their dword.
        assert_eq!(ecam.read(function, 2), 0x7100_1002);
        ecam.write(function, 0x10, 0xE000_0000);
        // Outside the window: another bus, segment or an offset past 4 KiB.
        assert_eq!(ecam.read(PciAddress::new(0, 3, 3, 0), 0), u32::MAX);
        assert_eq!(ecam.read(PciAddress::new(1, 5, 3, 0), 0), u32::MAX);
        assert_eq!(ecam.read(function, 0x1000), u32::MAX);
        ecam.write(PciAddress::new(0, 6, 0, 0), 0, 0);
        ecam.write(PciAddress::new(0, 4, 0, 0), 0, 0);
    }
    // The HAL's scan finds the function through ECAM.
    let mut found = Vec::new();
    pci::scan(&ecam, 5, |f| found.push((f.address, f.vendor, f.device)));
    assert_eq!(found, [(function, 0x1002, 0x7100)]);
    // The write through ECAM landed in the function's BAR0 dword.
    assert_eq!(memory[space + 0x10 / 4], 0xE000_0000);
}

/// Configuration space of one endpoint with an MSI-X capability at 0x50 (8 entries, table in
/// BAR2 at 0x1000), as a `ConfigRegionAccess`.
struct FakeFunction {
    space: RefCell<[u32; 64]>,
}

fn function_address() -> PciAddress {
    PciAddress::new(0, 0, 4, 0)
}

impl FakeFunction {
    fn new(msix: bool) -> FakeFunction {
        let mut space = [0u32; 64];
        space[0] = 0x6898_1002;
        space[1] = 1 << 20; // status: capability list
        space[2] = 0x0300_0000;
        space[3] = 0; // header type 0
        space[4] = 0x0000_000C; // BAR0: 64-bit prefetchable (VRAM)
        space[6] = 0xFEB0_0000; // BAR2: 32-bit registers
        space[0x34 / 4] = 0x40;
        // 0x40: power management (ID 1), next 0x50.
        space[0x40 / 4] = 0x0003_5001;
        if msix {
            // 0x50: MSI-X (ID 0x11), last; table size field 7 (8 entries).
            space[0x50 / 4] = 0x0007_0011;
            space[0x54 / 4] = 0x1000 | 2; // table: BAR2 + 0x1000
            space[0x58 / 4] = 0x1800 | 2; // PBA
        }
        FakeFunction { space: RefCell::new(space) }
    }

    fn control(&self) -> u32 {
        self.space.borrow()[0x50 / 4] >> 16
    }
}

impl ConfigRegionAccess for FakeFunction {
    unsafe fn read(&self, address: PciAddress, offset: u16) -> u32 {
        if address != function_address() {
            return u32::MAX;
        }
        // BAR sizing: writes of all-ones read back the size mask (BAR0 64 MiB, BAR2 64 KiB).
        self.space.borrow()[usize::from(offset / 4)]
    }

    unsafe fn write(&self, address: PciAddress, offset: u16, value: u32) {
        if address != function_address() {
            return;
        }
        let mut space = self.space.borrow_mut();
        let index = usize::from(offset / 4);
        space[index] = match (index, value) {
            (4, u32::MAX) => 0xFC00_000C,
            (5, u32::MAX) => u32::MAX,
            (6, u32::MAX) => 0xFFFF_0000,
            (7..=9, u32::MAX) => 0,
            // Only the MSI-X control bits are writable in the capability header.
            (0x14, v) => (space[index] & 0x3FFF_FFFF) | (v & 0xC000_0000),
            (_, v) => v,
        };
    }
}

/// The MSI-X table as a `RegisterIo`.
struct Table(RefCell<[u32; 32]>);

impl RegisterIo for Table {
    fn read32(&self, offset: usize) -> u32 {
        self.0.borrow()[offset / 4]
    }
    fn write32(&self, offset: usize, value: u32) {
        self.0.borrow_mut()[offset / 4] = value;
    }
}

#[test]
fn msix_programs_the_chosen_entries_masks_the_rest_and_unmasks_the_function() {
    let config = FakeFunction::new(true);
    let function = pci::probe(&config, function_address()).unwrap();
    let mut msix = Msix::find(&config, &function).unwrap();
    assert_eq!(msix.entries(), 8);
    assert_eq!(msix.table_address(), 0xFEB0_1000);
    assert_eq!(msix.table_bytes(), 128);
    let table = Table(RefCell::new([0; 32]));
    let message = MsiMessage::x86_lapic(2, 0x40);
    assert_eq!(message, MsiMessage { address: 0xFEE0_2000, data: 0x40 });
    msix.enable(&config, &table, &[(1, message)]).unwrap();
    let entries = table.0.borrow();
    for entry in 0..8 {
        let words = &entries[entry * 4..entry * 4 + 4];
        if entry == 1 {
            assert_eq!(words, [0xFEE0_2000, 0, 0x40, 0], "entry 1 programmed and unmasked");
        } else {
            assert_eq!(words[3], 1, "entry {entry} masked");
        }
    }
    // Enabled, function mask cleared.
    assert_eq!(config.control() & 0xC000, 0x8000);
}

#[test]
fn msix_refuses_a_missing_capability_and_an_entry_past_the_table() {
    let config = FakeFunction::new(false);
    let function = pci::probe(&config, function_address()).unwrap();
    assert_eq!(Msix::find(&config, &function).unwrap_err(), MsiError::NoCapability);

    let config = FakeFunction::new(true);
    let function = pci::probe(&config, function_address()).unwrap();
    let mut msix = Msix::find(&config, &function).unwrap();
    let table = Table(RefCell::new([7; 32]));
    let err = msix.enable(&config, &table, &[(8, MsiMessage::x86_lapic(0, 0x40))]).unwrap_err();
    assert_eq!(err, MsiError::NoSuchEntry { entry: 8, entries: 8 });
    // Nothing was written: not the table, not the capability.
    assert!(table.0.borrow().iter().all(|&w| w == 7));
    assert_eq!(config.control() & 0xC000, 0);
}
