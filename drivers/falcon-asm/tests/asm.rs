//! The text assembler's errors, labels and branch relocation.

use baregpu_falcon_asm::{
    AsmErrorKind, BuildError, Builder, Cond, DecodeError, Instruction, Mnemonic, Operand, Size,
    assemble, disassemble, regs::*,
};

fn err(src: &str) -> (u32, u32, AsmErrorKind) {
    let mut out = [0u8; 256];
    let e = assemble(src, &mut out).expect_err(src);
    (e.line, e.column, e.kind)
}

#[test]
fn errors_name_line_and_column() {
    assert_eq!(err("exit\n  frob $r1"), (2, 3, AsmErrorKind::UnknownMnemonic));
    assert_eq!(err("mov $r1, $r99"), (1, 10, AsmErrorKind::UnknownRegister));
    assert_eq!(err("add b32 $r1, 0x1g"), (1, 14, AsmErrorKind::BadNumber));
    assert_eq!(err("bra nowhere"), (1, 5, AsmErrorKind::UndefinedLabel));
    assert_eq!(err("a:\na: exit"), (2, 1, AsmErrorKind::DuplicateLabel));
    // 16-bit immediates exist for add but 0x10000 fits neither form.
    assert_eq!(
        err("add b32 $r1, 0x10000"),
        (1, 1, AsmErrorKind::Build(BuildError::ImmediateOutOfRange))
    );
    // mov's immediate is sign-extended (§2.10.3): 0xffff does not fit I16.
    assert_eq!(
        err("mov $r1, 0xffff"),
        (1, 1, AsmErrorKind::Build(BuildError::ImmediateOutOfRange))
    );
    // b32 loads scale the I8 by 4 (§2.10.4).
    assert_eq!(
        err("ld b32 $r1, D[$r2 + 0x6]"),
        (1, 1, AsmErrorKind::Build(BuildError::MisalignedOffset))
    );
    // add is sized: without b8/b16/b32 only the $sp forms are unsized.
    assert_eq!(
        err("add $r1, $r2, 1"),
        (1, 1, AsmErrorKind::Build(BuildError::NoMatchingForm(Mnemonic::Add)))
    );
    // Shifts have no 16-bit immediate form (§2.10.3 forms).
    assert_eq!(
        err("shl.l b32 $r1, 1"),
        (1, 1, AsmErrorKind::Build(BuildError::ImmediateOutOfRange))
    );
}

#[test]
fn labels_resolve_forward_and_backward() {
    let mut out = [0u8; 64];
    let len = assemble("top: bra skip\n exit\nskip: jmp top\n call top", &mut out).unwrap();
    // bra (f5, 4 bytes) at 0 to 6: +6; exit at 4; jmp (f5) at 6 to 0; call (f5) at 10 to 0.
    assert_eq!(
        out[..len],
        [0xf5, 0x0e, 0x06, 0x00, 0xf8, 0x02, 0xf5, 0x20, 0x00, 0x00, 0xf5, 0x21, 0x00, 0x00]
    );
}

#[test]
fn builder_reports_unbound_labels_and_full_output() {
    let mut small = [0u8; 3];
    let mut b = Builder::new(&mut small);
    let l = b.label().unwrap();
    b.exit().unwrap();
    assert_eq!(b.bra(Cond::ALWAYS, l), Err(BuildError::OutputFull));
    let mut out = [0u8; 16];
    let mut b = Builder::new(&mut out);
    let l = b.label().unwrap();
    b.bra(Cond::Z, l).unwrap();
    assert_eq!(b.finish(), Err(BuildError::UnboundLabel(l)));
    let mut b = Builder::new(&mut out);
    let l = b.label().unwrap();
    b.bind(l).unwrap();
    assert_eq!(b.bind(l), Err(BuildError::LabelBoundTwice));
}

#[test]
fn builder_and_text_agree() {
    let mut a = [0u8; 32];
    let mut b = [0u8; 32];
    let n = assemble("iord $r2, I[$r1 + 0x0]\nst b32 D[$sp + 0x4], $r2", &mut a).unwrap();
    let mut bl = Builder::new(&mut b);
    use baregpu_falcon_asm::{Mem, MemBase, MemIndex, Space};
    let io = Mem { space: Space::Io, base: MemBase::Reg(R1), index: MemIndex::Offset(0) };
    bl.asm(Mnemonic::Iord, None, &[Operand::Reg(R2), Operand::Mem(io)]).unwrap();
    let d = Mem { space: Space::Data, base: MemBase::Sp, index: MemIndex::Offset(4) };
    bl.asm(Mnemonic::St, Some(Size::B32), &[Operand::Mem(d), Operand::Reg(R2)]).unwrap();
    assert_eq!(bl.finish(), Ok(n));
    assert_eq!(a[..n], b[..n]);
}

#[test]
fn decoder_refuses_invalid_and_noncanonical_bytes() {
    // Sized opcode 0x3e with size b32 (0xbe) is the v4+ long branch: not a v3 instruction.
    assert_eq!(
        Instruction::decode(&[0xbe, 0, 0, 0]),
        Err(DecodeError::InvalidOpcode { byte0: 0xbe })
    );
    // bra condition 0x0f is not in the §2.10.5 table.
    assert_eq!(
        Instruction::decode(&[0xf4, 0x0f, 0]),
        Err(DecodeError::InvalidOpcode { byte0: 0xf4 })
    );
    // exit (f8/2) with the unused high nibble of byte 1 set.
    assert_eq!(Instruction::decode(&[0xf8, 0x12]), Err(DecodeError::ReservedBits { byte0: 0xf8 }));
    assert_eq!(Instruction::decode(&[0xf5, 0x20, 0x00]), Err(DecodeError::Truncated { needed: 4 }));
}

#[test]
fn disassembly_lists_addresses_and_stops_at_bad_bytes() {
    let mut text = String::new();
    assert_eq!(
        disassemble(&[0xf4, 0x0e, 0x00, 0xf8, 0x02, 0xf8], &mut text),
        Err((5, DecodeError::Truncated { needed: 2 }))
    );
    assert_eq!(text, "0000: bra 0x0\n0003: exit\n");
}
