//! Entry at 0x80000 and the EL1 exception vectors.
//!
//! The firmware (`arm_64bit=1`, armstub8) and QEMU `-M raspi3b -kernel` both enter the image's
//! first byte at EL2 with the MMU and caches off; real firmware keeps cores 1-3 in its spin
//! table, QEMU in its own boot stub, but a `kernel_old=1` boot would start all four here, so
//! the entry parks every core but core 0 (MPIDR_EL1.Aff0 != 0) first.
//!
//! Core 0 then drops to EL1 (from EL3 through EL2, or from EL2), keeping the MMU and data cache
//! **off**: every data access is then Device-nGnRnE, so the mailbox buffer and the framebuffer
//! are coherent with the VideoCore without cache maintenance (the price is uncached drawing, and
//! naturally aligned accesses only, which `aarch64-unknown-none`'s `+strict-align` guarantees).
//! The instruction cache is enabled. Then: FP/SIMD enabled (CPACR_EL1.FPEN, the target uses
//! NEON), VBAR_EL1, stack at `__stack_top`, `.bss` zeroed, and `rpi_main(entry_el)`.

use core::arch::global_asm;

// SCTLR_EL1: RES1 bits 29,28,23,22,20,11 (ARMv8.0) + I (bit 12); M, C, A clear.
// HCR_EL2.RW (bit 31): EL1 is AArch64. CPTR_EL2: RES1 bits 13:12 and 9:0, TFP (bit 10) clear.
// CNTHCTL_EL2.EL1PCTEN|EL1PCEN: EL1 may use the physical counter and timer.
// SPSR 0x3C5: D, A, I, F masked, EL1h. 0x3C9: the same for EL2h.
// SCR_EL3: RW (bit 10), RES1 bits 5:4, NS (bit 0).
global_asm!(concat!(
    include_str!("el1.s"),
    r#"
    .section .text.boot, "ax"
    .global _start
_start:
    mrs     x1, mpidr_el1
    and     x1, x1, #0xff
    cbnz    x1, 90f

    mrs     x19, CurrentEL
    ubfx    x19, x19, #2, #2

    movz    x2, #0x30d0, lsl #16
    movk    x2, #0x1800
    msr     sctlr_el1, x2

    cmp     x19, #3
    b.eq    30f
    cmp     x19, #2
    b.eq    20f
    b       10f

30: // EL3 -> EL2
    mov     x2, #0x431
    msr     scr_el3, x2
    mov     x2, #0x3c9
    msr     spsr_el3, x2
    adr     x2, 20f
    msr     elr_el3, x2
    eret

20: // EL2 -> EL1
    movz    x2, #0x8000, lsl #16
    msr     hcr_el2, x2
    mrs     x2, cnthctl_el2
    orr     x2, x2, #3
    msr     cnthctl_el2, x2
    msr     cntvoff_el2, xzr
    mov     x2, #0x33ff
    msr     cptr_el2, x2
    msr     hstr_el2, xzr
    mov     x2, #0x3c5
    msr     spsr_el2, x2
    adr     x2, 10f
    msr     elr_el2, x2
    eret

10: // EL1
    el1_start rpi_vectors
    mov     x0, x19
    bl      rpi_main

90: // parked (cores 1-3, or a return from rpi_main, which cannot happen)
    wfe
    b       90b

    el1_vectors rpi_vectors, rpi_exception
    "#
));
