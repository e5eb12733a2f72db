//! The outside-crate build: what an OS author gets from crates.io, checked on every test run.
//!
//! The packaged crates (`target/package/*.crate`, written by `cargo package`) are unpacked
//! into `target/outside/crates/`, as a download would be, and a tiny `no_std` kernel crate is
//! generated beside them (`target/outside/kernel/`), outside the repository's workspace. Its
//! workspace patches crates.io's `baregpu-*` with the unpacked packages (they are not
//! published yet), so nothing of the repository but the packages is visible. Then, with the
//! stable toolchain of the declared `rust-version`:
//!
//! - the kernel is built for both bare-metal targets: it brings up both drivers' types over
//!   `baregpu-platform` (PCI ports or ECAM, the arch's clock, `BumpDma`, a driver in a
//!   `static` behind a lock for the interrupt handler, an Evergreen `Dispatch`, an nVidia
//!   Tesla with one IB-mode channel), and on aarch64 the VideoCore IV V3D at the Raspberry Pi
//!   3's register base;
//! - `cargo test --all-features` runs the packaged tests of every crate (what `cargo test
//!   --all-features` on a downloaded crate runs), so a test that needs an unpublished crate
//!   fails here.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The kernel's `src/main.rs`.
const KERNEL_MAIN: &str = r#"//! A hobby kernel's first hour: both Radeon drivers and the nVidia Tesla driver over
//! baregpu-platform, and the V3D on a Raspberry Pi 3 (built, not run).
#![no_std]
#![no_main]

use baregpu_hal::MmioRegion;
use baregpu_hal::dma::{BusAddress, DmaAllocator, DmaLayout};
use baregpu_hal::pci::{ConfigRegionAccess, PciAddress};
use baregpu_platform::dma::BumpDma;
use baregpu_radeon_evergreen::compute::Dispatch;
use baregpu_radeon_evergreen::{Evergreen, EvergreenFirmware, EvergreenUcode};
use baregpu_radeon_r5xx::R5xx;
use baregpu_radeon_r5xx::gpu::GpuQueue;
use core::ptr::NonNull;
use core::time::Duration;

#[cfg(target_arch = "x86_64")]
type KernelClock = baregpu_platform::clock::TscClock;
#[cfg(target_arch = "aarch64")]
type KernelClock = baregpu_platform::clock::CounterClock;

#[cfg(target_arch = "x86_64")]
fn clock() -> KernelClock {
    KernelClock::calibrate_pit(10).unwrap_or_else(|_| halt())
}
#[cfg(target_arch = "aarch64")]
fn clock() -> KernelClock {
    KernelClock::new().unwrap_or_else(|_| halt())
}

#[cfg(target_arch = "x86_64")]
fn config() -> impl ConfigRegionAccess {
    baregpu_platform::pci::PortConfig
}
#[cfg(target_arch = "aarch64")]
fn config() -> impl ConfigRegionAccess {
    // QEMU virt's ECAM window (its device tree's pci-host-ecam-generic node).
    let base = NonNull::new(0x40_1000_0000usize as *mut u8).unwrap_or_else(|| halt());
    // SAFETY: identity-mapped device memory in this kernel, used only for ECAM.
    unsafe { baregpu_platform::pci::Ecam::new(base, 0, 0, 255) }
}

static DMA: spin::Once<BumpDma> = spin::Once::new();
static R5XX: spin::Mutex<Option<R5xx<'static, MmioRegion, KernelClock, BumpDma>>> =
    spin::Mutex::new(None);
static EVERGREEN: spin::Mutex<Option<Evergreen<'static, MmioRegion, KernelClock, BumpDma>>> =
    spin::Mutex::new(None);

static V3D: spin::Mutex<Option<baregpu_videocore_v3d::V3d<'static, MmioRegion, KernelClock>>> =
    spin::Mutex::new(None);
static TESLA: spin::Mutex<Option<baregpu_nvidia_tesla::Tesla<MmioRegion, KernelClock>>> =
    spin::Mutex::new(None);

static R520_CP: [u8; 2048] = [0; 2048];

/// The V3D is no PCI device: its registers sit at the chip's base (the database's
/// `mmio_base`), here the Raspberry Pi 3's.
#[cfg(target_arch = "aarch64")]
fn bring_up_v3d() -> Option<()> {
    let base = baregpu_videocore_v3d::regs::Chipset::BCM2837.mmio_base()?;
    let regs = NonNull::new(base as usize as *mut u32)?;
    // SAFETY: identity-mapped uncached V3D registers in this kernel, used only by the driver.
    let io = unsafe { MmioRegion::new(regs, 4096) };
    let config = baregpu_videocore_v3d::V3dConfig::default();
    let mut v3d = baregpu_videocore_v3d::V3d::init(io, clock(), None, config).ok()?;
    v3d.enable_interrupts().ok()?;
    *V3D.lock() = Some(v3d);
    Some(())
}

fn registers(bar: baregpu_hal::pci::RegisterBar) -> MmioRegion {
    let base = NonNull::new(bar.address as usize as *mut u32).unwrap_or_else(|| halt());
    // SAFETY: identity-mapped uncached BAR in this kernel, used only by the driver.
    unsafe { MmioRegion::new(base, bar.size as usize) }
}

fn bring_up(cfg: &impl ConfigRegionAccess, at: PciAddress) -> Option<()> {
    let dma = DMA.call_once(|| {
        let pool = NonNull::new(0x100_0000usize as *mut u8).unwrap_or_else(|| halt());
        // SAFETY: 1 MiB of identity-mapped RAM this kernel reserves for DMA.
        unsafe { BumpDma::new(pool, BusAddress(0x100_0000), 1 << 20) }.unwrap_or_else(|_| halt())
    });
    if let Ok(probed) = baregpu_radeon_r5xx::pci::probe(cfg, at) {
        baregpu_radeon_r5xx::pci::enable(cfg, at).ok()?;
        let cfg = baregpu_radeon_r5xx::RingConfig::default();
        let mut gpu = R5xx::init(registers(probed.registers), clock(), dma, &R520_CP, cfg).ok()?;
        let fence = gpu.submit(16, |s| s.fence()).ok()?;
        gpu.wait(&fence, Duration::from_millis(100)).ok()?;
        gpu.enable_interrupts(baregpu_radeon_r5xx::Interrupts::NONE.with_software(true)).ok()?;
        *R5XX.lock() = Some(gpu);
    }
    let probed = baregpu_radeon_evergreen::pci::probe(cfg, at).ok()?;
    baregpu_radeon_evergreen::pci::enable(cfg, at).ok()?;
    let ucode = EvergreenUcode::of(probed.chip)?;
    let fw = EvergreenFirmware::parse(ucode, &[], &[], &[]).ok()?;
    let ring = baregpu_radeon_evergreen::RingConfig::default();
    let mut gpu =
        Evergreen::init(registers(probed.registers), clock(), dma, probed.chip, &fw, ring).ok()?;
    let code = dma.allocate(DmaLayout::new(4096, 256).ok()?).ok()?;
    let constants = dma.allocate(DmaLayout::new(256, 256).ok()?).ok()?;
    let global = dma.allocate(DmaLayout::new(4096, 256).ok()?).ok()?;
    let kernel = baregpu_radeon_evergreen::compute::load_kernel(&code, &[0; 8], 4, 0).ok()?;
    let fence = gpu.dispatch(&Dispatch::new(kernel, [1, 1, 1], [64, 1, 1], &constants, &global)).ok()?;
    gpu.wait(&fence, Duration::from_millis(100)).ok()?;
    *EVERGREEN.lock() = Some(gpu);
    Some(())
}

/// An nVidia Tesla: PFIFO up, channel 1 in IB mode over an IB ring at bus address 0x180_0000,
/// channel structures in the first MiB of VRAM past 16 MiB.
fn bring_up_tesla(cfg: &impl ConfigRegionAccess, at: PciAddress) -> Option<()> {
    use baregpu_nvidia_tesla::{ChannelId, IbRing, Tesla, TeslaConfig};
    let probed = baregpu_nvidia_tesla::pci::probe(cfg, at).ok()?;
    baregpu_nvidia_tesla::pci::enable(cfg, at).ok()?;
    let config = TeslaConfig::new(16 << 20, 1 << 20);
    let mut gpu = Tesla::init(registers(probed.gpu.registers), clock(), config).ok()?;
    let id = ChannelId::new(1).ok()?;
    gpu.create_channel(id, IbRing { address: 0x180_0000, entries: 512 }).ok()?;
    gpu.enable_channel(id).ok()?;
    *TESLA.lock() = Some(gpu);
    Some(())
}

/// The MSI handler's work.
pub fn gpu_interrupt() {
    if let Some(gpu) = R5XX.lock().as_mut() {
        let _ = gpu.handle_interrupts();
    }
    if let Some(gpu) = EVERGREEN.lock().as_mut() {
        let _ = gpu.handle_interrupts();
    }
    if let Some(gpu) = V3D.lock().as_mut() {
        let _ = gpu.handle_interrupts();
    }
    if let Some(gpu) = TESLA.lock().as_mut() {
        let _ = gpu.handle_interrupts();
    }
}

fn halt() -> ! {
    loop {
        core::hint::spin_loop();
    }
}

#[unsafe(no_mangle)]
extern "C" fn _start() -> ! {
    let cfg = config();
    let _ = bring_up(&cfg, PciAddress::new(0, 0, 2, 0));
    let _ = bring_up_tesla(&cfg, PciAddress::new(0, 0, 3, 0));
    #[cfg(target_arch = "aarch64")]
    let _ = bring_up_v3d();
    gpu_interrupt();
    halt()
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    halt()
}
"#;

/// The kernel's `Cargo.toml`; `{PATCHES}` is replaced by the crates.io patches.
const KERNEL_MANIFEST: &str = r#"[package]
name = "outside-kernel"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
baregpu-hal = "0.1"
baregpu-platform = { version = "0.1", features = ["x86_64", "aarch64"] }
baregpu-radeon-r5xx = "0.1"
baregpu-radeon-evergreen = "0.1"
baregpu-videocore-v3d = "0.1"
baregpu-nvidia-tesla = "0.1"
spin = { version = "0.10", default-features = false, features = ["spin_mutex", "once"] }
"#;

/// The generated kernel and the unpacked packages, ready to build: returns the workspace
/// directory. `packages` are the `.crate` files of the published crates.
pub fn prepare(root: &Path, packages: &[PathBuf]) -> Result<PathBuf, String> {
    let dir = root.join("target/outside");
    let crates = dir.join("crates");
    let _ = std::fs::remove_dir_all(&crates);
    std::fs::create_dir_all(&crates).map_err(|e| format!("{}: {e}", crates.display()))?;
    let mut members = Vec::new();
    let mut patches = String::new();
    for package in packages {
        // `m`: files get the time of unpacking, not the archive's, so cargo rebuilds a
        // package whose sources changed since the last run (same path, same version).
        let status = Command::new("tar")
            .arg("xzmf")
            .arg(package)
            .arg("-C")
            .arg(&crates)
            .status()
            .map_err(|e| format!("tar: {e}"))?;
        if !status.success() {
            return Err(format!("cannot unpack {}", package.display()));
        }
        let stem = package
            .file_stem()
            .and_then(|s| s.to_str())
            .ok_or_else(|| format!("{}: no file name", package.display()))?;
        let name = stem.rsplit_once('-').map_or(stem, |(name, _version)| name);
        members.push(format!("\"crates/{stem}\""));
        patches.push_str(&format!("{name} = {{ path = \"crates/{stem}\" }}\n"));
    }
    let kernel = dir.join("kernel");
    std::fs::create_dir_all(kernel.join("src"))
        .map_err(|e| format!("{}: {e}", kernel.display()))?;
    let write = |path: PathBuf, text: &str| {
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))
    };
    write(kernel.join("Cargo.toml"), KERNEL_MANIFEST)?;
    write(kernel.join("src/main.rs"), KERNEL_MAIN)?;
    write(
        dir.join("Cargo.toml"),
        &format!(
            "# Generated by `cargo xtask test` (xtask/src/outside.rs): a kernel outside the\n\
             # repository's workspace and the packaged crates, unpacked.\n\
             [workspace]\nresolver = \"2\"\nmembers = [\"kernel\", {}]\n\n\
             [profile.dev]\npanic = \"abort\"\n\
             # No debug information: the packaged tests build in ~15% less time; a failure\n\
             # still names its test and functions (the workspace runs the same tests).\n\
             debug = false\n\n\
             # The baregpu crates are not on crates.io yet: the packages stand in for them.\n\
             [patch.crates-io]\n{patches}",
            members.join(", ")
        ),
    )?;
    Ok(dir)
}

/// The `.crate` files `cargo package` wrote for `names` (`<name>-<version>.crate`).
pub fn packages(root: &Path, names: &[&str]) -> Vec<PathBuf> {
    let dir = root.join("target/package");
    let files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    names
        .iter()
        .filter_map(|name| {
            files.iter().find(|f| {
                f.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                    n.strip_prefix(name)
                        .and_then(|rest| rest.strip_prefix('-'))
                        .is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit()))
                        && n.ends_with(".crate")
                })
            })
        })
        .cloned()
        .collect()
}
