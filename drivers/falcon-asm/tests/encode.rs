//! Hand-computed encodings from nvidia-hardware-envytools §2.10.2 (formats: byte 0 bits 7:6
//! size 00 b8 / 01 b16 / 10 b32 / 11 unsized; O1 subop in byte 0 low 4 bits, O2 in byte 1 low 4,
//! OL in byte 1 low 6, O3 in byte 2 low 4; R1 byte 1 low nibble, R2 byte 1 high nibble, R3 byte 2
//! high nibble; I8 byte 2; I16 bytes 2-3 little-endian) and the per-instruction sections. Each
//! vector says how its bytes follow from those tables. Both directions are checked: the text
//! assembles to the bytes, and the bytes disassemble to the text. Every vector was also
//! checked against envytools envydis (`envydis -m falcon -V fuc3`), which reads the same
//! instruction from the bytes (see `tests/envydis.rs` for the notation differences).

use baregpu_falcon_asm::{Instruction, assemble};

/// (address, canonical text, bytes, derivation).
const VECTORS: &[(u32, &str, &[u8], &str)] = &[
    // §2.10.4 st, form "R2, I8, R1" opcode 00, subop 0; I8 = offset / 4 for b32.
    (0, "st b32 D[$r2 + 0x8], $r1", &[0x80, 0x21, 0x02], "b32 0x80|00|0; R2=2 R1=1; 8/4=2"),
    // §2.10.4 ld, form "R1, R2, I8" opcode 10, subop 8; I8 = offset / 2 for b16.
    (0, "ld b16 $r3, D[$r4 + 0x6]", &[0x58, 0x43, 0x03], "b16 0x40|0x10|8; R2=4 R1=3; 6/2=3"),
    // §2.10.4 ld [sp], form "R2, $sp, I8" opcode 34 (O2 subop 0).
    (0, "ld b8 $r5, D[$sp + 0x7]", &[0x34, 0x50, 0x07], "b8 0x34; R2=5 subop 0; 7/1"),
    // §2.10.4 st [sp], form "$sp, I8, R2" opcode 30, subop 1.
    (0, "st b32 D[$sp + 0xc], $r6", &[0xb0, 0x61, 0x03], "b32 0x80|0x30; R2=6 subop 1; 12/4"),
    // §2.10.4 st, form "R2, 0, R1" opcode 38 subop 0 (O3).
    (0, "st b16 D[$r7], $r8", &[0x78, 0x78, 0x00], "b16 0x40|0x38; R2=7 R1=8; byte 2 subop 0"),
    // §2.10.4 ld, form "R3, R2, R1" opcode 3c subop 8.
    (0, "ld b32 $r1, D[$r2 + $r3]", &[0xbc, 0x23, 0x18], "b32 0xbc; R2=2 R1=3; R3=1 subop 8"),
    // §2.10.3 add, form "R1, R2, I8" opcode 10 subop 0.
    (0, "add b32 $r1, $r2, 0x10", &[0x90, 0x21, 0x10], "b32 0x80|0x10|0; R2=2 R1=1; I8"),
    // §2.10.3 sub, form "R1, R2, I16" opcode 20 subop 2.
    (0, "sub b16 $r1, $r2, 0x1234", &[0x62, 0x21, 0x34, 0x12], "b16 0x40|0x20|2; I16 LE"),
    // §2.10.3 add, form "R2, R2, I8" opcode 36 subop 0.
    (0, "add b8 $r3, 0x5", &[0x36, 0x30, 0x05], "b8 0x36; R2=3 subop 0; I8"),
    // The same with the 16-bit immediate form 37 (`.l` keeps it).
    (0, "add.l b32 $r3, 0x5", &[0xb7, 0x30, 0x05, 0x00], "b32 0x80|0x37; R2=3 subop 0; I16"),
    // §2.10.3 shl, form "R2, R2, R1" opcode 3b subop 4.
    (0, "shl b32 $r4, $r5", &[0xbb, 0x45, 0x04], "b32 0xbb; R2=4 R1=5; subop 4"),
    // §2.10.2 table: sar subop 7; form "R3, R2, R1" opcode 3c.
    (0, "sar b32 $r1, $r2, $r3", &[0xbc, 0x23, 0x17], "b32 0xbc; R2=2 R1=3; R3=1 subop 7"),
    // §2.10.3 cmp (v3+) subop 6, form "R2, I8" opcode 30, sign-extended immediate.
    (0, "cmp b32 $r1, -0x1", &[0xb0, 0x16, 0xff], "b32 0xb0; R2=1 subop 6; -1 as I8"),
    // §2.10.3 cmpu subop 4, form "R2, R1" opcode 38.
    (0, "cmpu b32 $r2, $r3", &[0xb8, 0x23, 0x04], "b32 0xb8; R2=2 R1=3; subop 4"),
    // §2.10.3 neg subop 1, form "R1, R2" opcode 39.
    (0, "neg b32 $r1, $r2", &[0xb9, 0x21, 0x01], "b32 0xb9; R2=2 R1=1; subop 1"),
    // §2.10.3 clear subop 4, form "R2" opcode 3d.
    (0, "clear b32 $r3", &[0xbd, 0x34], "b32 0xbd; R2=3 subop 4"),
    // §2.10.3 mov (immediate) subop 7, form "R2, I8" f0, sign-extended.
    (0, "mov $r1, -0x2", &[0xf0, 0x17, 0xfe], "f0; R2=1 subop 7; -2"),
    // §2.10.3 sethi subop 3, form "R2, I16" f1.
    (0, "sethi $r1, 0x1234", &[0xf1, 0x13, 0x34, 0x12], "f1; R2=1 subop 3; I16 LE"),
    // §2.10.3 and subop 4, form "R1, R2, I8" cx.
    (0, "and $r1, $r2, 0xff", &[0xc4, 0x21, 0xff], "0xc0|4; R2=2 R1=1; I8"),
    // §2.10.3 or subop 5, form "R3, R2, R1" ff.
    (0, "or $r3, $r4, $r5", &[0xff, 0x45, 0x35], "ff; R2=4 R1=5; R3=3 subop 5"),
    // §2.10.3 mulu subop 0, form "R1, R2, I16" ex.
    (0, "mulu $r1, $r2, 0x1234", &[0xe0, 0x21, 0x34, 0x12], "0xe0|0; R2=2 R1=1; I16 LE"),
    // §2.10.3 div (v3+) subop c, form "R3, R2, R1" ff.
    (0, "div $r1, $r2, $r3", &[0xff, 0x23, 0x1c], "ff; R2=2 R1=3; R3=1 subop c"),
    // §2.10.10 iord subop f, form "R1, R2, I8" cx; address R2 + I8 * 4.
    (0, "iord $r2, I[$r1 + 0x100]", &[0xcf, 0x12, 0x40], "0xc0|f; R2=1 R1=2; 0x100/4"),
    // §2.10.10 iowr subop 0, form "R2, I8, R1" dx.
    (0, "iowr I[$r1 + 0x100], $r2", &[0xd0, 0x12, 0x40], "0xd0|0; R2=1 R1=2; 0x100/4"),
    // §2.10.10 iowrs (v3+) subop 1, form "R2, 0, R1" fa.
    (0, "iowrs I[$r3], $r4", &[0xfa, 0x34, 0x01], "fa; R2=3 R1=4; subop 1"),
    // §2.10.10 iord, form "R3, R2, R1" ff subop f.
    (0, "iord $r1, I[$r2 + $r3]", &[0xff, 0x23, 0x1f], "ff; R2=2 R1=3; R3=1 subop f"),
    // §2.10.9 xdld subop 5, form "R2, R1" fa: external offset R2, local address/size R1.
    (0, "xdld $r2, $r5", &[0xfa, 0x25, 0x05], "fa; R2=2 R1=5; subop 5"),
    (0, "xdst $r3, $r5", &[0xfa, 0x35, 0x06], "fa; R2=3 R1=5; subop 6"),
    (0, "xcld $r1, $r2", &[0xfa, 0x12, 0x04], "fa; R2=1 R1=2; subop 4"),
    // §2.10.9 xdwait f8 subop 3; §2.10.6 exit f8 subop 2; §2.10.5 ret f8 subop 0.
    (0, "xdwait", &[0xf8, 0x03], "f8; O2 subop 3"),
    (0, "xcwait", &[0xf8, 0x07], "f8; O2 subop 7"),
    (0, "exit", &[0xf8, 0x02], "f8; O2 subop 2"),
    (0, "ret", &[0xf8, 0x00], "f8; O2 subop 0"),
    // §2.10.8 iret f8 subop 1; trap N: f8 subop 8+N (v3+).
    (0, "iret", &[0xf8, 0x01], "f8; O2 subop 1"),
    (0, "trap 0x2", &[0xf8, 0x0a], "f8; O2 subop 8+2"),
    // §2.10.6 sleep f4 OL subop 28, I8 = the $flags bit.
    (0, "sleep 0x10", &[0xf4, 0x28, 0x10], "f4; OL 0x28; bit 16 (ie0)"),
    // §2.10.5 bra ne: OL subop 1b; f4 I8 sign-extended, relative to the instruction.
    (0, "bra ne 0x10", &[0xf4, 0x1b, 0x10], "f4; OL 0x1b; +0x10 from 0"),
    (0x20, "bra 0x0", &[0xf4, 0x0e, 0xe0], "f4; OL 0x0e (always); 0 - 0x20 = -0x20"),
    (0, "bra not $p1 0x200", &[0xf5, 0x11, 0x00, 0x02], "f5; OL 0x10+1; +0x200 needs I16"),
    (0, "bra g 0x4", &[0xf4, 0x1c, 0x04], "f4; OL 0x1c (v3+)"),
    // §2.10.5 jmp OL subop 20 (f5: I16 absolute); call subop 21 (f4: I8); call f9 subop 5.
    (0, "jmp 0x1234", &[0xf5, 0x20, 0x34, 0x12], "f5; OL 0x20; I16 LE"),
    (0, "call 0x40", &[0xf4, 0x21, 0x40], "f4; OL 0x21; I8"),
    (0, "call $r3", &[0xf9, 0x35], "f9; R2=3 subop 5"),
    // §2.10.4 push f9 subop 0, pop fc subop 0, add $sp f4 subop 30 (signed) / f9 subop 1.
    (0, "push $r4", &[0xf9, 0x40], "f9; R2=4 subop 0"),
    (0, "pop $r5", &[0xfc, 0x50], "fc; R2=5 subop 0"),
    (0, "add $sp, -0x4", &[0xf4, 0x30, 0xfc], "f4; OL 0x30; -4"),
    (0, "add $sp, $r2", &[0xf9, 0x21], "f9; R2=2 subop 1"),
    // mov to/from special registers (envytools envydis falcon.c: fe/0 `mov $sX, $rY` with the
    // special register in R1; fe/1 `mov $rX, $sY` with it in R2).
    (0, "mov $xdbase, $r9", &[0xfe, 0x97, 0x00], "fe; R2=9 R1=$sr7; subop 0"),
    (0, "mov $r1, $flags", &[0xfe, 0x81, 0x01], "fe; R2=$sr8 R1=1; subop 1"),
    // §2.10.3 bset on $flags: f4 OL subop 31.
    (0, "bset $flags, 0x10", &[0xf4, 0x31, 0x10], "f4; OL 0x31; bit 16"),
];

/// Assembles one statement at `pc` (padding with 2-byte `ret`s).
fn assemble_at(pc: u32, text: &str) -> Vec<u8> {
    let mut src = "ret\n".repeat(pc as usize / 2);
    src.push_str(text);
    let mut out = [0u8; 512];
    let len = assemble(&src, &mut out).unwrap_or_else(|e| panic!("{text}: {e}"));
    out[pc as usize..len].to_vec()
}

#[test]
fn text_assembles_to_the_hand_computed_bytes() {
    for (pc, text, bytes, why) in VECTORS {
        assert_eq!(assemble_at(*pc, text), *bytes, "{text} ({why})");
    }
}

#[test]
fn hand_computed_bytes_disassemble_to_the_text() {
    for (pc, text, bytes, why) in VECTORS {
        let (insn, len) = Instruction::decode(bytes).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(len, bytes.len(), "{text} ({why})");
        assert_eq!(insn.display_at(*pc).to_string(), *text, "{why}");
        let mut again = [0u8; 4];
        assert_eq!(insn.encode(&mut again), Ok(len));
        assert_eq!(&again[..len], *bytes);
    }
}
