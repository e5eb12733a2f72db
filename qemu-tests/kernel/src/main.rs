//! The QEMU test kernel, for x86_64 and aarch64.
//!
//! x86_64: boots by PVH (`qemu-system-x86_64 -kernel test-kernel`), logs with defmt over COM1,
//! leaves QEMU through `isa-debug-exit` (status 33 = pass, 35 = fail). aarch64: boots on QEMU
//! `virt` (`qemu-system-aarch64 -kernel`, [`aarch64`]), logs with defmt over the PL011, leaves
//! QEMU through semihosting with the same statuses. Both run the test case named by
//! `case=<name>` on the kernel command line; emulated GPUs are reached through the ivshmem
//! mailbox ([`mailbox`]). See README.md for the QEMU command lines.
#![no_std]
#![no_main]
#![cfg_attr(target_arch = "x86_64", feature(abi_x86_interrupt))]
#![deny(clippy::unwrap_used, clippy::expect_used)]

extern crate alloc;

#[cfg(target_arch = "aarch64")]
mod aarch64;
#[cfg(target_arch = "x86_64")]
mod arch;
#[cfg(target_arch = "x86_64")]
mod bootinfo;
mod cases;
#[cfg(target_arch = "x86_64")]
mod clock;
mod cmdline;
mod dma;
mod heap;
mod logger;
mod mailbox;
mod memory;
mod pci;

#[cfg(target_arch = "aarch64")]
use aarch64 as arch;
#[cfg(target_arch = "aarch64")]
use aarch64::clock;
use arch::exit::{Exit, exit};
use cases::CaseError;
use cmdline::Cmdline;
use dma::IdentityDma;
use spin::Once;

#[cfg(target_arch = "x86_64")]
core::arch::global_asm!(include_str!("boot.s"), options(att_syntax));

static DMA: Once<IdentityDma> = Once::new();

/// What the test cases get from the boot sequence.
pub struct Kernel {
    /// The kernel command line.
    pub cmdline: Cmdline,
    /// The DMA pool.
    pub dma: &'static IdentityDma,
}

/// Run the case named on the command line and leave QEMU with its verdict.
fn run_case(kernel: Result<Kernel, CaseError>) -> ! {
    let result = kernel.and_then(|kernel| {
        let case = kernel.cmdline.arg("case").unwrap_or("");
        defmt::info!("case {=str}: start", case);
        cases::run(case, &kernel)
    });
    match result {
        Ok(()) => {
            defmt::info!("result: PASS");
            exit(Exit::Success)
        }
        Err(e) => {
            defmt::error!("result: FAIL: {}", e);
            exit(Exit::Failure)
        }
    }
}

/// Called by `boot.s` in long mode on the boot stack with the PVH start-info address.
#[cfg(target_arch = "x86_64")]
#[unsafe(no_mangle)]
pub extern "C" fn kmain(start_info: u32) -> ! {
    logger::init();
    defmt::info!("test-kernel: long mode, start_info at {=u32:#x}", start_info);
    run_case(init(start_info))
}

#[cfg(target_arch = "x86_64")]
fn init(start_info: u32) -> Result<Kernel, CaseError> {
    use bootinfo::BootInfo;
    arch::init().map_err(CaseError::Lapic)?;
    if let Err(e) = clock::init() {
        defmt::error!("clock: calibration failed ({}), assuming 1 GHz", e);
    }
    // SAFETY: `start_info` is the PVH loader's pointer, read before any memory is handed out.
    let boot = unsafe { BootInfo::parse(start_info) }.map_err(CaseError::BootInfo)?;
    defmt::info!("cmdline: {=str}", boot.cmdline.as_str());
    for r in boot.memory_map() {
        defmt::debug!("memmap {=u64:#x}..{=u64:#x} type {=u32}", r.start, r.end(), r.kind);
    }
    let plan = memory::plan(boot.memory_map()).map_err(CaseError::Memory)?;
    let dma = init_memory(plan);
    x86_64::instructions::interrupts::enable();
    Ok(Kernel { cmdline: boot.cmdline, dma })
}

/// Hand the heap and the DMA pool of `plan` out.
fn init_memory(plan: memory::MemoryPlan) -> &'static IdentityDma {
    // SAFETY: the plan puts the heap in RAM after the kernel image, clear of the DMA pool; the
    // boot information was copied out before.
    unsafe { heap::init(plan.heap_start, memory::HEAP_SIZE) };
    // SAFETY: the pool is RAM at the top of the same range, above the heap, used by nothing
    // else; identity mapped and device-reachable at the same addresses (no IOMMU).
    let dma = DMA.call_once(|| unsafe { IdentityDma::new(plan.dma_start, memory::DMA_SIZE) });
    defmt::info!(
        "memory: heap {=u64:#x}+{=u64:#x}, DMA pool {=u64:#x}+{=u64:#x}",
        plan.heap_start,
        memory::HEAP_SIZE,
        plan.dma_start,
        memory::DMA_SIZE
    );
    dma
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    let (file, line) = info.location().map_or(("?", 0), |l| (l.file(), l.line()));
    defmt::error!("panic at {=str}:{=u32}: {}", file, line, defmt::Display2Format(&info.message()));
    exit(Exit::Failure)
}
