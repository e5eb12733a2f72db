//! The QEMU harness's transport to the emulated R520 (feature `qemu-harness`; delete this file
//! and the feature when you copy the example out of the repository).
//!
//! A real board's `RegisterIo` is its register BAR itself (`baregpu_platform::boot::map_bar`,
//! an [`MmioRegion`]; `main.rs` takes that path when the PCI scan finds an R5xx). In the
//! harness the GPU is a device model running beside QEMU (a separate process, `model-server`,
//! which plain QEMU does not start) and reached
//! through QEMU's `ivshmem-doorbell` PCI function: each register or configuration access is one
//! request in a mailbox at the start of ivshmem's BAR2, announced through the doorbell in BAR0
//! (the contract: the `gpu_mailbox` crate, whose `guest` module does the exchange for this
//! kernel and the test kernel alike). The model performs the access
//! with all its side effects before it completes the request, so [`DeviceIo`] is a
//! `RegisterIo` with the same ordering guarantees as MMIO. Guest RAM is shared with the model,
//! so its DMA reaches physical addresses as a bus master's does.

use baregpu_hal::pci::{self, ConfigRegionAccess, PciAddress};
use baregpu_hal::time::Clock;
use baregpu_hal::{MmioRegion, RegisterIo};
use baregpu_platform::boot::{self, BootError};
use baregpu_platform::pci::PortConfig;
use bootloader_api::BootInfo;
use core::cell::Cell;
use core::fmt;
use core::time::Duration;
use gpu_mailbox::guest::{self, ConnectError, ExchangeError, Request};
use gpu_mailbox::{IVSHMEM_DEVICE, IVSHMEM_VENDOR, Op, SHMEM_SIZE};

/// Buses scanned for the ivshmem function.
const LAST_BUS: u8 = 3;
/// Bound on one request and on the wait for the model's header (the model answers in
/// microseconds; 1 s covers a loaded host).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(1);
/// PCI segment on which the harness presents the emulated GPU's configuration space.
pub const VIRTUAL_SEGMENT: u16 = 1;

/// Why the emulated device is unreachable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceError {
    /// No ivshmem-doorbell function on the scanned buses: QEMU was started without the
    /// harness's `-device ivshmem-doorbell` and its device model.
    NoIvshmem,
    /// BAR `0` or `2` is missing or too small.
    MissingBar(u8),
    /// A BAR could not be mapped.
    Map(BootError),
    /// The model's header is missing or of another protocol version.
    Connect(ConnectError),
    /// A request failed (no completion in time, or an error status).
    Request(ExchangeError),
}

impl fmt::Display for DeviceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceError::NoIvshmem => write!(
                f,
                "no ivshmem-doorbell function ({IVSHMEM_VENDOR:04x}:{IVSHMEM_DEVICE:04x}): the emulated \
                 R520 is a device model that runs beside QEMU, which plain qemu-system-x86_64 \
                 does not start; run `cargo run -p qemu-runner -- case bootloader-r5xx`"
            ),
            DeviceError::MissingBar(slot) => write!(f, "ivshmem BAR{slot} is missing or too small"),
            DeviceError::Map(e) => write!(f, "ivshmem BAR not mapped: {e:?}"),
            DeviceError::Connect(e) => write!(f, "device model not answering: {e:?}"),
            DeviceError::Request(e) => write!(f, "mailbox request failed: {e:?}"),
        }
    }
}

/// The mailbox: doorbell registers (ivshmem BAR0) and shared memory (BAR2).
pub struct Mailbox<C: Clock> {
    doorbell: MmioRegion,
    shared: MmioRegion,
    clock: C,
    seq: Cell<u32>,
}

impl<C: Clock> Mailbox<C> {
    /// Find ivshmem on segment 0, enable its memory decoding, map its BARs through the
    /// bootloader's physical-memory map and wait for the model's header.
    pub fn attach(boot_info: &BootInfo, clock: C) -> Result<Self, DeviceError> {
        let mut found = None;
        pci::scan(&PortConfig, LAST_BUS, |f| {
            if (f.vendor, f.device) == (IVSHMEM_VENDOR, IVSHMEM_DEVICE) && found.is_none() {
                found = Some(f);
            }
        });
        let function = found.ok_or(DeviceError::NoIvshmem)?;
        // SAFETY: the command register of the ivshmem function: memory decoding on.
        unsafe {
            let command = PortConfig.read(function.address, 0x04) & 0xFFFF;
            PortConfig.write(function.address, 0x04, command | 0x2);
        }
        let (bar0, size0) = function.memory_bar(0).ok_or(DeviceError::MissingBar(0))?;
        let (bar2, size2) = function.memory_bar(2).ok_or(DeviceError::MissingBar(2))?;
        if size2 < SHMEM_SIZE as u64 {
            return Err(DeviceError::MissingBar(2));
        }
        // SAFETY: BAR0 and BAR2 of the ivshmem function (device memory), mapped once by this
        // single-CPU kernel and used only through the mailbox.
        let (doorbell, shared) = unsafe {
            (
                boot::map_bar(boot_info, bar0, size0).map_err(DeviceError::Map)?,
                boot::map_bar(boot_info, bar2, SHMEM_SIZE as u64).map_err(DeviceError::Map)?,
            )
        };
        let seq = guest::connect(&shared, &clock, REQUEST_TIMEOUT).map_err(DeviceError::Connect)?;
        Ok(Mailbox { doorbell, shared, clock, seq: Cell::new(seq) })
    }

    /// One request (this single-threaded kernel never has two in flight).
    fn request(&self, op: Op, bar: u32, address: u32, value: u32) -> Result<u32, DeviceError> {
        let next = self.seq.get().wrapping_add(1);
        self.seq.set(next);
        let fields = Request { op, bar, address, value };
        guest::exchange(&self.shared, &self.doorbell, &self.clock, REQUEST_TIMEOUT, next, fields)
            .map_err(DeviceError::Request)
    }

    /// Function-level reset of the emulated device.
    pub fn reset(&self) -> Result<(), DeviceError> {
        self.request(Op::Reset, 0, 0, 0).map(|_| ())
    }

    /// BAR `slot` of the emulated device as the driver's `RegisterIo`.
    pub fn io(&self, slot: usize) -> DeviceIo<'_, C> {
        DeviceIo { mailbox: self, bar: slot as u32 }
    }
}

/// The emulated device's address on [`VIRTUAL_SEGMENT`].
pub fn virtual_function() -> PciAddress {
    PciAddress::new(VIRTUAL_SEGMENT, 0, 0, 0)
}

/// One BAR of the emulated device. A failed access behaves like a PCI master abort: reads
/// return all-ones (which the driver reports as `DeviceGone`), writes are dropped.
pub struct DeviceIo<'a, C: Clock> {
    mailbox: &'a Mailbox<C>,
    bar: u32,
}

impl<C: Clock> RegisterIo for DeviceIo<'_, C> {
    fn read32(&self, offset: usize) -> u32 {
        let address = u32::try_from(offset).unwrap_or(u32::MAX);
        self.mailbox.request(Op::MmioRead, self.bar, address, 0).unwrap_or(u32::MAX)
    }

    fn write32(&self, offset: usize, value: u32) {
        let address = u32::try_from(offset).unwrap_or(u32::MAX);
        let _ = self.mailbox.request(Op::MmioWrite, self.bar, address, value);
    }
}

/// PCI configuration space: segment 0 through the ports, the emulated device through the
/// mailbox.
impl<C: Clock> ConfigRegionAccess for Mailbox<C> {
    unsafe fn read(&self, address: PciAddress, offset: u16) -> u32 {
        match address.segment() {
            // SAFETY: forwarded with the caller's guarantees.
            0 => unsafe { PortConfig.read(address, offset) },
            _ if address == virtual_function() => {
                self.request(Op::ConfigRead, 0, u32::from(offset & !3), 0).unwrap_or(u32::MAX)
            }
            _ => u32::MAX,
        }
    }

    unsafe fn write(&self, address: PciAddress, offset: u16, value: u32) {
        match address.segment() {
            // SAFETY: forwarded with the caller's guarantees.
            0 => unsafe { PortConfig.write(address, offset, value) },
            _ if address == virtual_function() => {
                let _ = self.request(Op::ConfigWrite, 0, u32::from(offset & !3), value);
            }
            _ => {}
        }
    }
}
