//! The x86_64 QEMU test kernel.
//!
//! Boots by PVH (`qemu-system-x86_64 -kernel test-kernel`), logs with defmt over COM1, runs the
//! test case named by `case=<name>` on the kernel command line and leaves QEMU through
//! `isa-debug-exit` (status 33 = pass, 35 = fail). Emulated GPUs are reached through the
//! ivshmem mailbox ([`mailbox`]). See README.md for the QEMU command line.
#![no_std]
#![no_main]
#![feature(abi_x86_interrupt)]
#![deny(clippy::unwrap_used, clippy::expect_used)]

extern crate alloc;

mod arch;
mod bootinfo;
mod cases;
mod clock;
mod dma;
mod heap;
mod logger;
mod mailbox;
mod memory;
mod pci;

use arch::exit::{Exit, exit};
use bootinfo::BootInfo;
use cases::CaseError;
use dma::IdentityDma;
use spin::Once;

core::arch::global_asm!(include_str!("boot.s"), options(att_syntax));

static DMA: Once<IdentityDma> = Once::new();

/// What the test cases get from the boot sequence.
pub struct Kernel {
    /// Command line and memory map.
    pub boot: BootInfo,
    /// The DMA pool.
    pub dma: &'static IdentityDma,
}

/// Called by `boot.s` in long mode on the boot stack with the PVH start-info address.
#[unsafe(no_mangle)]
pub extern "C" fn kmain(start_info: u32) -> ! {
    logger::init();
    defmt::info!("test-kernel: long mode, start_info at {=u32:#x}", start_info);
    let result = init(start_info).and_then(|kernel| {
        let case = kernel.boot.arg("case").unwrap_or("");
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

fn init(start_info: u32) -> Result<Kernel, CaseError> {
    arch::init().map_err(CaseError::Lapic)?;
    if let Err(e) = clock::init() {
        defmt::error!("clock: calibration failed ({}), assuming 1 GHz", e);
    }
    // SAFETY: `start_info` is the PVH loader's pointer, read before any memory is handed out.
    let boot = unsafe { BootInfo::parse(start_info) }.map_err(CaseError::BootInfo)?;
    defmt::info!("cmdline: {=str}", boot.cmdline());
    for r in boot.memory_map() {
        defmt::debug!("memmap {=u64:#x}..{=u64:#x} type {=u32}", r.start, r.end(), r.kind);
    }
    let plan = memory::plan(boot.memory_map()).map_err(CaseError::Memory)?;
    // SAFETY: the plan puts the heap in RAM after the kernel image, clear of the DMA pool; the
    // start info was copied out above.
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
    x86_64::instructions::interrupts::enable();
    Ok(Kernel { boot, dma })
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    let (file, line) = info.location().map_or(("?", 0), |l| (l.file(), l.line()));
    defmt::error!("panic at {=str}:{=u32}: {}", file, line, defmt::Display2Format(&info.message()));
    exit(Exit::Failure)
}
