//! Example kernel: the Radeon R5xx driver in a kernel booted by rust-osdev's `bootloader` 0.11,
//! linked the way a hobby OS links it.
//!
//! The kernel supplies what the driver asks of a platform (the repository's
//! `docs/porting.md` says what each must guarantee), all from `baregpu-platform`:
//!
//! - a [`Clock`](baregpu_hal::time::Clock): the TSC, calibrated against the PIT
//!   ([`TscClock`]);
//! - a [`DmaAllocator`](baregpu_hal::dma::DmaAllocator): a bump allocator over a usable region
//!   of the bootloader's memory map, reached through its physical-memory map
//!   ([`boot::dma_pool`]);
//! - a [`RegisterIo`] for the GPU's registers: an R5xx found on the PCI bus gets its register
//!   BAR mapped uncached ([`boot::map_bar`]); without one, and only with the `qemu-harness`
//!   feature, the QEMU harness's emulated R520 behind the ivshmem mailbox (`harness`);
//! - PCI configuration access ([`PortConfig`]), with which the driver's own `pci::probe` and
//!   `pci::enable` find and enable the GPU.
//!
//! Then: `R5xx::init` with the R520 microcode (`include_bytes!` of the file named at build time
//! by `R520_FIRMWARE`), one submission holding a fence, a bounded wait, and the fence printed
//! to COM1. QEMU is left through `isa-debug-exit` (status 33: success, 35: failure).
#![no_std]
#![no_main]
#![deny(clippy::unwrap_used, clippy::expect_used)]

#[cfg(feature = "qemu-harness")]
mod harness;
mod serial;

use baregpu_hal::RegisterIo;
use baregpu_platform::boot::{self, BootError};
use baregpu_platform::clock::{CalibrationError, TscClock};
use baregpu_platform::dma::BumpDma;
use baregpu_platform::pci::PortConfig;
use baregpu_radeon_r5xx::gpu::GpuQueue;
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

/// Bytes of the DMA pool (the driver needs a 64 KiB ring and a few pages).
const DMA_POOL_BYTES: u64 = 1 << 20;
/// The pool lies below 4 GiB: the R5xx CP is a 32-bit bus master.
const DMA_LIMIT: u64 = 1 << 32;
/// PIT window of the TSC calibration.
const CALIBRATION_MS: u16 = 10;

/// Why the example stopped.
#[derive(Debug)]
enum Error {
    Clock(CalibrationError),
    /// No physical-memory map, no DMA pool, or a BAR not mapped.
    Boot(BootError),
    /// No R5xx on the PCI bus, and no way to the emulated one (built without `qemu-harness`).
    #[cfg_attr(feature = "qemu-harness", allow(dead_code))]
    NoBoard,
    #[cfg(feature = "qemu-harness")]
    Device(harness::DeviceError),
    Probe(pci::ProbeError),
    Init(InitError),
    Submit(SubmitError),
    Fence(baregpu_radeon_r5xx::FenceError),
}

impl core::fmt::Display for Error {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        use baregpu_hal::error::Chain;
        match self {
            Error::Clock(e) => write!(f, "TSC calibration: {}", Chain(e)),
            Error::Boot(e) => write!(f, "boot information: {}", Chain(e)),
            Error::NoBoard => write!(
                f,
                "no R5xx board on PCI buses 0-{LAST_BUS} (built without the `qemu-harness` \
                 feature, so the emulated R520 is not looked for)"
            ),
            #[cfg(feature = "qemu-harness")]
            Error::Device(e) => write!(f, "no R5xx board on PCI buses 0-{LAST_BUS}, and {e}"),
            Error::Probe(e) => write!(f, "probe: {}", Chain(e)),
            Error::Init(e) => write!(f, "init: {}", Chain(e)),
            Error::Submit(e) => write!(f, "submit: {}", Chain(e)),
            Error::Fence(e) => write!(f, "fence: {}", Chain(e)),
        }
    }
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
            let _ = writeln!(out, "bootloader-r5xx: FAILED: {e}");
            exit(0x11)
        }
    }
}

fn run(boot_info: &BootInfo, out: &mut serial::Serial) -> Result<u64, Error> {
    let offset = boot::physical_memory_offset(boot_info).map_err(Error::Boot)?;
    let clock = TscClock::calibrate_pit(CALIBRATION_MS).map_err(Error::Clock)?;
    // SAFETY: this kernel has no frame allocator of its own: nothing else uses the pool.
    let dma =
        unsafe { boot::dma_pool(boot_info, DMA_POOL_BYTES, DMA_LIMIT) }.map_err(Error::Boot)?;
    let (start, end) = dma.bus_range();
    let _ = writeln!(
        out,
        "bootloader-r5xx: TSC {} MHz, physical memory at {offset:#x}, DMA pool {:#x}..{:#x}",
        clock.hz() / 1_000_000,
        start.0,
        end.0
    );

    // A real R5xx on the PCI bus: the driver gets its register BAR, mapped uncached.
    let mut board = None;
    baregpu_hal::pci::scan(&PortConfig, LAST_BUS, |f| {
        if board.is_none() && baregpu_regs::r5xx::identify_pci(f.vendor, f.device).is_some() {
            board = Some(f.address);
        }
    });
    if let Some(address) = board {
        let probed = pci::probe(&PortConfig, address).map_err(Error::Probe)?;
        pci::enable(&PortConfig, address).map_err(Error::Probe)?;
        report(out, &probed);
        let registers = &probed.registers;
        // SAFETY: the board's register BAR, mapped once by this single-CPU kernel and used
        // only by the driver.
        let io = unsafe { boot::map_bar(boot_info, registers.address, registers.size) }
            .map_err(Error::Boot)?;
        return drive(io, clock, &dma, out);
    }
    emulated(boot_info, clock, &dma, out)
}

/// The QEMU harness's emulated R520, behind the ivshmem mailbox.
#[cfg(feature = "qemu-harness")]
fn emulated(
    boot_info: &BootInfo,
    clock: TscClock,
    dma: &BumpDma,
    out: &mut serial::Serial,
) -> Result<u64, Error> {
    let mailbox = harness::Mailbox::attach(boot_info, clock).map_err(Error::Device)?;
    mailbox.reset().map_err(Error::Device)?;
    let gpu_address = harness::virtual_function();
    let probed = pci::probe(&mailbox, gpu_address).map_err(Error::Probe)?;
    pci::enable(&mailbox, gpu_address).map_err(Error::Probe)?;
    report(out, &probed);
    drive(mailbox.io(probed.registers.slot), clock, dma, out)
}

/// Without the harness transport there is nothing but a real board to drive.
#[cfg(not(feature = "qemu-harness"))]
fn emulated(_: &BootInfo, _: TscClock, _: &BumpDma, _: &mut serial::Serial) -> Result<u64, Error> {
    Err(Error::NoBoard)
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
    clock: TscClock,
    dma: &BumpDma,
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
