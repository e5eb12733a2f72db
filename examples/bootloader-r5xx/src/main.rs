//! Example kernel: the Radeon R5xx driver in a kernel booted by rust-osdev's `bootloader` 0.11,
//! linked the way a hobby OS links it.
//!
//! The kernel supplies what the driver asks of a platform (the porting guide in the
//! repository's README says what each must guarantee):
//!
//! - a [`Clock`](baregpu_hal::time::Clock): the TSC, calibrated against the PIT ([`clock`]);
//! - a [`DmaAllocator`](baregpu_hal::dma::DmaAllocator): a bump allocator over a usable region
//!   of the bootloader's memory map, reached through its physical-memory map ([`dma`]);
//! - a [`RegisterIo`] for the GPU's registers: an R5xx found on the PCI bus gets its register
//!   BAR mapped uncached ([`mmio`]); without one, the QEMU harness's emulated R520 behind the
//!   ivshmem mailbox ([`device`]) is used;
//! - PCI configuration access, with which the driver's own `pci::probe` and `pci::enable` find
//!   and enable the GPU.
//!
//! Then: `R5xx::init` with the R520 microcode (`include_bytes!` of the file named at build time
//! by `R520_FIRMWARE`), one submission holding a fence, a bounded wait, and the fence printed
//! to COM1. QEMU is left through `isa-debug-exit` (status 33: success, 35: failure).
#![no_std]
#![no_main]
#![deny(clippy::unwrap_used, clippy::expect_used)]

mod clock;
mod device;
mod dma;
mod mmio;
mod serial;

use baregpu_hal::RegisterIo;
use baregpu_radeon_r5xx::{InitError, R5xx, RingConfig, SubmitError, pci};
use bootloader_api::config::{BootloaderConfig, Mapping};
use bootloader_api::{BootInfo, entry_point};
use core::fmt::Write;
use core::time::Duration;

/// `radeon/R520_cp.bin` from linux-firmware, unmodified (path from `build.rs`).
static FIRMWARE: &[u8] = include_bytes!(env!("R520_FIRMWARE"));

/// Ask the bootloader to map all physical memory (at an address it picks): DMA memory and the
/// BARs are reached through it.
pub static BOOTLOADER_CONFIG: BootloaderConfig = {
    let mut config = BootloaderConfig::new_default();
    config.mappings.physical_memory = Some(Mapping::Dynamic);
    config
};

entry_point!(kernel_main, config = &BOOTLOADER_CONFIG);

/// PCI buses scanned for a real board.
const LAST_BUS: u8 = 3;

/// How long the fence may take (one ring fetch on the device; generous for TCG on a busy host).
const FENCE_TIMEOUT: Duration = Duration::from_millis(500);

/// Why the example stopped (printed with `Debug`, which the dead-code lint does not count).
#[derive(Debug)]
#[allow(dead_code)]
enum Error {
    /// The bootloader did not map physical memory.
    NoPhysicalMemoryMap,
    Clock(clock::CalibrationError),
    /// No usable region holds the DMA pool.
    NoDmaMemory,
    Device(device::DeviceError),
    /// The board's register BAR could not be mapped.
    Map(mmio::MapError),
    Probe(pci::ProbeError),
    Init(InitError),
    Submit(SubmitError),
    Fence(baregpu_radeon_r5xx::FenceError),
}

fn kernel_main(boot_info: &'static mut BootInfo) -> ! {
    let mut out = serial::Serial::init();
    let api = boot_info.api_version;
    let _ = writeln!(
        out,
        "bootloader-r5xx: booted by bootloader_api {}.{}.{}",
        api.version_major(),
        api.version_minor(),
        api.version_patch()
    );
    match run(boot_info, &mut out) {
        Ok(seq) => {
            let _ = writeln!(out, "bootloader-r5xx: fence {seq} signalled");
            exit(0x10)
        }
        Err(e) => {
            let _ = writeln!(out, "bootloader-r5xx: FAILED: {e:?}");
            exit(0x11)
        }
    }
}

fn run(boot_info: &BootInfo, out: &mut serial::Serial) -> Result<u64, Error> {
    let offset =
        boot_info.physical_memory_offset.into_option().ok_or(Error::NoPhysicalMemoryMap)?;
    let clock = clock::TscClock::calibrate().map_err(Error::Clock)?;
    let dma = dma::BumpDma::from_memory_map(&boot_info.memory_regions, offset)
        .ok_or(Error::NoDmaMemory)?;
    let (start, end) = dma.range();
    let _ = writeln!(
        out,
        "bootloader-r5xx: TSC {} MHz, physical memory at {offset:#x}, DMA pool {start:#x}..{end:#x}",
        clock.hz() / 1_000_000
    );

    // A real R5xx on the PCI bus: the driver gets its register BAR, mapped uncached.
    let mut board = None;
    baregpu_hal::pci::scan(&device::PortConfig, LAST_BUS, |f| {
        if board.is_none() && baregpu_regs::r5xx::identify_pci(f.vendor, f.device).is_some() {
            board = Some(f.address);
        }
    });
    if let Some(address) = board {
        let probed = pci::probe(&device::PortConfig, address).map_err(Error::Probe)?;
        pci::enable(&device::PortConfig, address).map_err(Error::Probe)?;
        report(out, &probed);
        let registers = &probed.registers;
        let io = mmio::map(registers.address, registers.size, offset).map_err(Error::Map)?;
        return drive(io, clock, &dma, out);
    }

    // Otherwise the QEMU harness's emulated R520, behind the ivshmem mailbox.
    let mailbox = device::Mailbox::attach(offset, clock).map_err(Error::Device)?;
    mailbox.reset().map_err(Error::Device)?;
    let gpu_address = device::virtual_function();
    let probed = pci::probe(&mailbox, gpu_address).map_err(Error::Probe)?;
    pci::enable(&mailbox, gpu_address).map_err(Error::Probe)?;
    report(out, &probed);
    drive(mailbox.io(probed.registers.slot), clock, &dma, out)
}

fn report(out: &mut serial::Serial, probed: &pci::Probed) {
    let _ = writeln!(
        out,
        "bootloader-r5xx: {} ({}) {:04x}:{:04x}, registers in BAR{} ({} KiB)",
        probed.chip.name(),
        probed.name,
        probed.function.vendor,
        probed.function.device,
        probed.registers.slot,
        probed.registers.size / 1024
    );
}

/// What any kernel does with the driver: init (microcode, ring), one submission holding a
/// fence, a bounded wait. Returns the fence's sequence number.
fn drive(
    io: impl RegisterIo,
    clock: clock::TscClock,
    dma: &dma::BumpDma,
    out: &mut serial::Serial,
) -> Result<u64, Error> {
    let mut gpu =
        R5xx::init(io, clock, dma, FIRMWARE, RingConfig::default()).map_err(Error::Init)?;
    let _ =
        writeln!(out, "bootloader-r5xx: microcode loaded ({} bytes), ring running", FIRMWARE.len());
    let fence = gpu.submit(16, |s| s.fence()).map_err(Error::Submit)?;
    gpu.wait(&fence, FENCE_TIMEOUT).map_err(Error::Fence)?;
    Ok(fence.seq())
}

/// Stop QEMU through `isa-debug-exit` (port 0xF4); park the CPU where the device is absent.
fn exit(code: u32) -> ! {
    // SAFETY: the isa-debug-exit port only terminates QEMU; nothing else decodes it.
    unsafe { x86_64::instructions::port::Port::<u32>::new(0xF4).write(code) };
    loop {
        x86_64::instructions::hlt();
    }
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    let _ = writeln!(serial::Serial, "bootloader-r5xx: FAILED: panic: {info}");
    exit(0x11)
}
