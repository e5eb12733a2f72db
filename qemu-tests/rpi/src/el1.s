// EL1 start-up shared by the Raspberry Pi image (src/boot.rs) and the test kernel on QEMU virt
// (qemu-tests/kernel/src/aarch64/mod.rs): both run at EL1 with the MMU off.

// FP/SIMD usable (CPACR_EL1.FPEN = 0b11: the targets' code uses NEON registers), VBAR_EL1 =
// \vectors, SP = __stack_top, .bss (__bss_start..__bss_end, 16-byte aligned) zeroed.
// Clobbers x2, x3.
.macro el1_start vectors
    mov     x2, #(3 << 20)
    msr     cpacr_el1, x2
    adrp    x2, \vectors
    add     x2, x2, :lo12:\vectors
    msr     vbar_el1, x2
    isb
    adrp    x2, __stack_top
    add     x2, x2, :lo12:__stack_top
    mov     sp, x2
    adrp    x2, __bss_start
    add     x2, x2, :lo12:__bss_start
    adrp    x3, __bss_end
    add     x3, x3, :lo12:__bss_end
1:  cmp     x2, x3
    b.hs    2f
    stp     xzr, xzr, [x2], #16
    b       1b
2:
.endm

// The EL1 vector table \name (Arm ARM D1.10.2: 16 entries of 128 bytes, 2 KiB aligned): every
// entry calls \handler(entry index, ESR_EL1, ELR_EL1, FAR_EL1), which does not return.
.macro el1_vectors name, handler
    .section .text.vectors, "ax"
    .balign 2048
\name:
    .set i, 0
    .rept 16
    .balign 128
    mov     x0, #i
    mrs     x1, esr_el1
    mrs     x2, elr_el1
    mrs     x3, far_el1
    b       \handler
    .set i, i + 1
    .endr
.endm
