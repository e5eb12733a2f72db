/*
 * PVH entry for QEMU `-kernel kernel.elf` (the ELF note below makes QEMU boot it PVH-style).
 * Entered in 32-bit protected mode, paging off, flat segments, %ebx = &hvm_start_info.
 * Builds an identity map of the first 4 GiB with 2 MiB pages (0..3 GiB write-back RAM, 3..4 GiB
 * uncached: PCI MMIO hole, IOAPIC, LAPIC on q35), enables PAE + EFER.LME + paging, loads a
 * boot GDT with a 64-bit code segment, and calls kmain(start_info) on the boot stack.
 * The Rust side replaces the GDT (adds a TSS) before it loads the IDT.
 * AT&T syntax (global_asm! is given options(att_syntax)).
 */

/* ---- Xen ELF note: XEN_ELFNOTE_PHYS32_ENTRY (18) ------------------------------------------ */
    .section .note.Xen, "a", @note
    .p2align 2
    .long 4                      /* n_namesz: "Xen\0" */
    .long 4                      /* n_descsz: 32-bit physical entry */
    .long 18                     /* n_type:   XEN_ELFNOTE_PHYS32_ENTRY */
    .asciz "Xen"
    .p2align 2
    .long pvh_start32
    .p2align 2

/* ---- page tables + boot stack (NOLOAD .bss; zeroed here, not trusted to the loader) ------- */
    .section .bss.boot, "aw", @nobits
    .p2align 12
boot_pml4:  .skip 4096
boot_pdpt:  .skip 4096
boot_pd:    .skip 4096 * 4       /* 4 PDs x 512 x 2 MiB = 4 GiB */
boot_pd_end:
    .p2align 4
boot_stack_bottom:
    .skip 128 * 1024
    .global boot_stack_top
boot_stack_top:

/* ---- boot GDT ------------------------------------------------------------------------------ */
    .section .rodata.boot, "a"
    .p2align 3
gdt64:
    .quad 0                      /* 0x00 null */
    .quad 0x00AF9A000000FFFF     /* 0x08 64-bit code: P, DPL0, S, exec/read, L=1, G */
    .quad 0x00CF92000000FFFF     /* 0x10 data: P, DPL0, S, read/write, D/B=1, G */
gdt64_end:
    .p2align 1
gdt64_ptr:
    .word gdt64_end - gdt64 - 1
    .quad gdt64                  /* 32-bit lgdt reads base[31:0] only; the kernel is below 4 GiB */

/* ---- 32-bit entry --------------------------------------------------------------------------- */
    .section .text.boot, "ax"
    .code32
    .global pvh_start32
pvh_start32:
    cli
    cld
    movl %ebx, %esi              /* keep the hvm_start_info pointer */

    movl $boot_pml4, %edi        /* zero PML4, PDPT and the PDs */
    movl $((boot_pd_end - boot_pml4) / 4), %ecx
    xorl %eax, %eax
    rep stosl

    movl $boot_pdpt, %eax        /* PML4[0] -> PDPT (P | RW) */
    orl  $0x3, %eax
    movl %eax, boot_pml4

    movl $boot_pd, %eax          /* PDPT[i] -> PD i, i = 0..3 */
    orl  $0x3, %eax
    xorl %ecx, %ecx
1:  movl %eax, boot_pdpt(,%ecx,8)
    addl $4096, %eax
    incl %ecx
    cmpl $4, %ecx
    jb 1b

    /* PD entries j = 0..2047: (j << 21) | PS | RW | P, plus PCD | PWT from 3 GiB (j >= 1536) */
    xorl %ecx, %ecx
2:  movl %ecx, %eax
    shll $21, %eax
    orl  $0x83, %eax
    cmpl $1536, %ecx
    jb 3f
    orl  $0x18, %eax             /* PWT | PCD: uncached device memory */
3:  movl %eax, boot_pd(,%ecx,8)
    movl $0, boot_pd+4(,%ecx,8)
    incl %ecx
    cmpl $2048, %ecx
    jb 2b

    movl %cr4, %eax              /* CR4.PAE */
    orl  $(1 << 5), %eax
    movl %eax, %cr4

    movl $boot_pml4, %eax
    movl %eax, %cr3

    movl $0xC0000080, %ecx       /* EFER.LME */
    rdmsr
    orl  $(1 << 8), %eax
    wrmsr

    movl %cr0, %eax              /* CR0.PG | CR0.WP | CR0.PE */
    orl  $0x80010001, %eax
    movl %eax, %cr0

    lgdt gdt64_ptr
    ljmp $0x08, $long_mode_entry

/* ---- 64-bit --------------------------------------------------------------------------------- */
    .code64
long_mode_entry:
    movw $0x10, %ax
    movw %ax, %ds
    movw %ax, %es
    movw %ax, %ss
    xorw %ax, %ax
    movw %ax, %fs
    movw %ax, %gs

    movabsq $boot_stack_top, %rsp
    xorl %ebp, %ebp
    movl %esi, %edi              /* arg0 = start_info (u32, zero-extended) */
    call kmain
4:  cli
    hlt
    jmp 4b
