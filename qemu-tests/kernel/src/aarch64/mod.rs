//! aarch64 on QEMU `virt` (`-cpu cortex-a53`, `-kernel test-kernel`): entry and exception
//! vectors, PL011 console, generic-timer clock, ECAM, semihosting for the command line and the
//! exit status.
//!
//! **MMU off.** Every data access is then Device-nGnRnE (Arm ARM D8.2.10 "behavior when stage 1
//! address translation is disabled"): uncached, so the model process sees guest RAM and the
//! ivshmem BARs without cache maintenance, but every access must be naturally aligned (an
//! unaligned one is an alignment fault, which case `aarch64-fail-exception` checks).
//! `aarch64-unknown-none` builds with `+strict-align`, so compiled code never issues one; the
//! DMA pool hands out 64-byte aligned buffers and `baregpu_hal` accesses them and MMIO in
//! aligned volatile 32-bit units. A minimal identity map would buy caching (speed) at the price
//! of cache maintenance for DMA, which the harness does not need: the point here is that the
//! driver's barriers and MMIO paths run on aarch64.
//!
//! Interrupts stay masked (PSTATE.I): the ivshmem mailbox is polled; device interrupts (GICv3
//! ITS for MSI-X) are not set up.

pub mod clock;
pub mod ecam;

use crate::cases::CaseError;
use crate::{Kernel, logger, memory, run_case};
use core::arch::{asm, global_asm};

// Entry at EL1 (QEMU `virt` without `virtualization=on`/`secure=on` starts an ELF there),
// MMU and caches off. SCTLR_EL1: RES1 bits 29,28,23,22,20,11 + I (bit 12); M, C, A clear.
// Then the EL1 start-up the Raspberry Pi image uses too (`el1.s`: FP/SIMD, vectors, the stack
// `__stack_top` of linker-aarch64.ld, `.bss` zeroed).
global_asm!(concat!(
    include_str!("../../../rpi/src/el1.s"),
    r#"
    .section .text.boot, "ax"
    .global _start
_start:
    mrs     x1, CurrentEL
    ubfx    x1, x1, #2, #2
    cmp     x1, #1
    b.ne    90f
    movz    x2, #0x30d0, lsl #16
    movk    x2, #0x1800
    msr     sctlr_el1, x2
    el1_start aarch64_vectors
    bl      kmain_aarch64
90: wfe
    b       90b

    el1_vectors aarch64_vectors, aarch64_exception
    "#
));

/// Entered by `_start` at EL1 with the stack set and `.bss` zeroed.
#[unsafe(no_mangle)]
extern "C" fn kmain_aarch64() -> ! {
    logger::init();
    defmt::info!("test-kernel: aarch64 at EL1, MMU off");
    run_case(init())
}

fn init() -> Result<Kernel, CaseError> {
    clock::init();
    let cmdline = semihosting::cmdline();
    defmt::info!("cmdline: {=str}", cmdline.as_str());
    let plan = memory::plan().map_err(CaseError::Memory)?;
    let dma = crate::init_memory(plan);
    Ok(Kernel { cmdline, dma })
}

/// Names of the vector table's 16 entries (Arm ARM D1.10.2): where the exception came from
/// and its type.
const VECTOR_NAMES: [&str; 16] = [
    "synchronous, EL1t",
    "IRQ, EL1t",
    "FIQ, EL1t",
    "SError, EL1t",
    "synchronous, EL1h",
    "IRQ, EL1h",
    "FIQ, EL1h",
    "SError, EL1h",
    "synchronous, EL0 AArch64",
    "IRQ, EL0 AArch64",
    "FIQ, EL0 AArch64",
    "SError, EL0 AArch64",
    "synchronous, EL0 AArch32",
    "IRQ, EL0 AArch32",
    "FIQ, EL0 AArch32",
    "SError, EL0 AArch32",
];

/// Every exception ends the case: the kernel takes none on purpose (interrupts are masked).
#[unsafe(no_mangle)]
extern "C" fn aarch64_exception(index: u64, esr: u64, elr: u64, far: u64) -> ! {
    let name = VECTOR_NAMES.get(index as usize).copied().unwrap_or("?");
    // ESR_EL1.EC (bits 31:26) says what happened: 0x25 data abort at EL1, 0x21 instruction
    // abort; for aborts ISS.DFSC 0b100001 is an alignment fault.
    defmt::error!(
        "exception: {=str}, ESR_EL1 {=u64:#x} (EC {=u64:#x}), ELR_EL1 {=u64:#x}, FAR_EL1 {=u64:#x}",
        name,
        esr,
        (esr >> 26) & 0x3F,
        elr,
        far
    );
    exit::exit(exit::Exit::Failure)
}

/// Interrupt masking (PSTATE.I), as the shared code uses it; the kernel never unmasks.
pub mod irq {
    use core::arch::asm;

    /// Whether IRQs are unmasked.
    pub fn are_enabled() -> bool {
        let daif: u64;
        // SAFETY: reading DAIF has no side effects.
        unsafe { asm!("mrs {}, daif", out(reg) daif, options(nomem, nostack)) };
        daif & (1 << 7) == 0
    }

    /// Mask IRQs.
    pub fn disable() {
        // SAFETY: masking interrupts is always allowed at EL1.
        unsafe { asm!("msr daifset, #2", options(nostack)) };
    }

    /// Unmask IRQs.
    pub fn enable() {
        // SAFETY: no interrupt source is routed to this CPU (no GIC set-up), so unmasking
        // cannot run a handler the kernel does not have.
        unsafe { asm!("msr daifclr, #2", options(nostack)) };
    }

    /// Run `f` with IRQs masked, restoring the previous mask.
    pub fn without_interrupts<R>(f: impl FnOnce() -> R) -> R {
        let was = are_enabled();
        disable();
        let r = f();
        if was {
            enable();
        }
        r
    }
}

/// The PL011 UART of `virt` at 0x0900_0000 (QEMU `hw/arm/virt.c` memory map, `VIRT_UART`):
/// the defmt byte stream, as `-serial file:`.
pub mod serial {
    use baregpu_hal::{MmioRegion, RegisterIo};
    use core::ptr::NonNull;

    const BASE: usize = 0x0900_0000;
    /// PL011 TRM §3.2: data, flags, line control, control.
    const DR: usize = 0x00;
    const FR: usize = 0x18;
    const LCRH: usize = 0x2C;
    const CR: usize = 0x30;
    const FR_TXFF: u32 = 1 << 5;
    const LCRH_FEN_WLEN8: u32 = (1 << 4) | (0b11 << 5);
    const CR_UARTEN_TXE: u32 = (1 << 0) | (1 << 8);
    /// Polls of a full FIFO before a byte is dropped (logging must never hang).
    const FULL_POLLS: u32 = 1_000_000;

    fn uart() -> MmioRegion {
        // SAFETY: BASE is not null; the PL011's 4 KiB register page is device memory with the
        // MMU off, used by nothing else; only aligned 32-bit accesses are made.
        unsafe { MmioRegion::new(NonNull::new_unchecked(BASE as *mut u32), 0x1000) }
    }

    /// 8-bit frames, FIFO on, transmitter enabled (QEMU ignores the baud divisor).
    pub fn init() {
        let u = uart();
        u.write32(CR, 0);
        u.write32(LCRH, LCRH_FEN_WLEN8);
        u.write32(CR, CR_UARTEN_TXE);
    }

    /// Queue `bytes`, waiting (bounded) for FIFO space.
    pub fn write(bytes: &[u8]) {
        let u = uart();
        for &b in bytes {
            let mut polls = 0;
            while u.read32(FR) & FR_TXFF != 0 && polls < FULL_POLLS {
                polls += 1;
            }
            u.write32(DR, u32::from(b));
        }
    }
}

/// Arm semihosting (`-semihosting`), trapped by QEMU on `HLT #0xF000` (Arm "Semihosting for
/// AArch32 and AArch64" v2: operation number in W0, parameter block address in X1).
mod semihosting {
    use crate::cmdline::{Cmdline, MAX_CMDLINE};
    use core::arch::asm;

    const SYS_GET_CMDLINE: u64 = 0x15;
    const SYS_EXIT: u64 = 0x18;
    /// `ADP_Stopped_ApplicationExit`: the subcode is the exit status.
    const ADP_STOPPED_APPLICATION_EXIT: u64 = 0x20026;

    /// # Safety
    /// `block` must be the parameter block `op` expects.
    unsafe fn call(op: u64, block: *mut u64) -> u64 {
        let ret: u64;
        // SAFETY: QEMU handles the trap and reads/writes only the block (caller's contract).
        unsafe { asm!("hlt #0xf000", inout("x0") op => ret, in("x1") block, options(nostack)) };
        ret
    }

    /// The command line (QEMU: the `-kernel` path, then `-append`).
    pub fn cmdline() -> Cmdline {
        let mut buf = [0u64; MAX_CMDLINE / 8];
        let mut block = [buf.as_mut_ptr() as u64, MAX_CMDLINE as u64];
        // SAFETY: SYS_GET_CMDLINE's block: buffer address and size, the length written back.
        let ret = unsafe { call(SYS_GET_CMDLINE, block.as_mut_ptr()) };
        let mut line = Cmdline::new();
        if ret != 0 {
            return line;
        }
        let len = (block[1] as usize).min(MAX_CMDLINE);
        // Read the words the host wrote, byte by byte from registers (aligned loads only).
        for i in 0..len {
            let byte = (buf[i / 8] >> ((i % 8) * 8)) as u8;
            if byte == 0 || !line.push(byte) {
                break;
            }
        }
        line
    }

    /// Leave QEMU with `status`.
    pub fn exit(status: u64) -> ! {
        let mut block = [ADP_STOPPED_APPLICATION_EXIT, status];
        // SAFETY: SYS_EXIT's block: reason and subcode; QEMU exits and does not return.
        unsafe { call(SYS_EXIT, block.as_mut_ptr()) };
        loop {
            // SAFETY: waiting for an event has no effect on memory.
            unsafe { asm!("wfe", options(nomem, nostack)) };
        }
    }
}

/// Leaving QEMU with the harness's statuses (the same as x86_64's `isa-debug-exit`).
pub mod exit {
    /// Verdict.
    #[derive(Clone, Copy)]
    pub enum Exit {
        /// QEMU exit status 33.
        Success,
        /// QEMU exit status 35.
        Failure,
    }

    /// Leave QEMU.
    pub fn exit(verdict: Exit) -> ! {
        super::semihosting::exit(match verdict {
            Exit::Success => 33,
            Exit::Failure => 35,
        })
    }
}

/// Make an unaligned 32-bit load, which with the MMU off (Device memory) is an alignment
/// fault: the exception path's test.
pub fn unaligned_load(address: usize) -> u32 {
    let value: u32;
    // SAFETY: deliberately faults; the exception handler ends the run.
    unsafe { asm!("ldr {0:w}, [{1}]", out(reg) value, in(reg) address, options(nostack)) };
    value
}
