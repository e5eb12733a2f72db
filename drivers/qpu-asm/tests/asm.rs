//! The text syntax: what lines assemble to, and where errors point.

use baregpu_qpu_asm::{
    AluSpec, AsmErrorKind, BuildError, Builder, Dst, OperandError, Pipe, ProgramKind, Rule, Src,
    assemble, isa::AddOp, isa::Instruction, isa::MulOp, isa::Signal,
};

fn one(text: &str) -> u64 {
    let mut w = [0u64; 1];
    assert_eq!(assemble(text, &mut w).unwrap_or_else(|e| panic!("{text}: {e}")), 1);
    w[0]
}

fn error(text: &str) -> (u32, u32, AsmErrorKind) {
    let mut w = [0u64; 8];
    let e = assemble(text, &mut w).expect_err(text);
    (e.line, e.column, e.kind)
}

#[test]
fn the_disassembly_is_the_canonical_text() {
    for text in [
        "nop",
        "thrend",
        "add ra1, r0, r1 ; fmul rb2, r2, r3 ; thrsw",
        "fadd.ifz.setf r0, ra15, vary ; fmul r1, r0, ra15",
        "mov tlb_color_all, r0",
        "nop ; fmul r0.c8888, r1, r2",
        "fadd ra1.16a.sat, r0, r1",
        "mov r0, ra3.8a ; mov r1, r4",
        "nop ; fmul r1, r4.8c, r2 ; ldtmu0",
        "add r0, r1, -3",
        "nop ; fmul r0, r1, 0.25",
        "nop ; fmul r0, r1, r2 ; rot 3",
        "ldi r0, 0x3f800000",
        "ldi.pes ra4, 0x1",
        "ldi vw_setup, 0x1a00",
        "sem acq 3",
        "sem rel 15",
        "bra.anyz rel -32",
        "bra abs ra2 + 0, ra3",
        "mov vw_addr, unif",
        "mov r0, elem_num ; mov r1, qpu_num",
    ] {
        let word = one(text);
        let shown = Instruction::decode(word).unwrap().display().to_string();
        let shown = if text == "fmul r0, r1, 0.25" { text.to_string() } else { shown };
        assert_eq!(shown, text);
    }
}

#[test]
fn a_mul_only_operation_alone_is_the_mul_pipe() {
    assert_eq!(one("fmul r0, r1, r2"), one("nop ; fmul r0, r1, r2"));
    assert_eq!(one("nop ; nop ; thrend"), one("thrend"));
}

#[test]
fn labels_resolve_relative_to_the_instruction_after_the_delay_slots() {
    let mut w = [0u64; 8];
    let n =
        assemble("top: nop\n bra -> top\n nop\n nop\n nop\n bra -> end\n nop\nend: nop", &mut w)
            .unwrap();
    assert_eq!(n, 8);
    // bra at 1 to 0: 0 - (1 + 4) = -5 instructions, -40 bytes.
    assert_eq!(w[1] as u32 as i32, -40);
    // bra at 5 to 7: 7 - 9 = -2.
    assert_eq!(w[5] as u32 as i32, -16);
}

#[test]
fn errors_point_at_line_and_column() {
    assert_eq!(error("nop\n  frob r0, r1, r2"), (2, 3, AsmErrorKind::UnknownMnemonic));
    assert_eq!(error("add r0, r1, r9"), (1, 13, AsmErrorKind::UnknownRegister));
    assert_eq!(error("add r0, r1, 99"), (1, 13, AsmErrorKind::BadNumber));
    assert_eq!(error("fadd.ifq r0, r1, r2"), (1, 6, AsmErrorKind::UnknownSuffix));
    assert_eq!(error("bra -> nowhere"), (1, 8, AsmErrorKind::UndefinedLabel));
    assert_eq!(error("a: nop\na: nop"), (2, 1, AsmErrorKind::DuplicateLabel));
    assert_eq!(error("sem acq 16"), (1, 9, AsmErrorKind::BadNumber));
    assert_eq!(
        error("add r0, ra1, ra2"),
        (1, 1, AsmErrorKind::Operands(OperandError::TooManyReads))
    );
    // The add pipe writes side A and the mul pipe side B unless ws: rb on add and ra on mul
    // together need both.
    assert_eq!(
        error("add rb1, r0, r0 ; fmul rb2, r0, r0"),
        (1, 1, AsmErrorKind::Operands(OperandError::WriteSides))
    );
    assert_eq!(
        error("add r0, r1, r2 ; nop ; thrend ; thrsw").2,
        AsmErrorKind::Expected("each item once")
    );
    // A regfile-A pack on the pipe writing side B.
    assert_eq!(error("add rb1.16a, r0, r0"), (1, 9, AsmErrorKind::PackPlacement));
    // An unpack on an accumulator other than r4.
    assert_eq!(error("add r0, r1.8a, r2"), (1, 12, AsmErrorKind::PackPlacement));
    // r4 unpack (pm 1) with a regfile-A pack (pm 0).
    assert_eq!(error("fadd ra1.16a, r4.8a, r0"), (1, 18, AsmErrorKind::PackConflict));
    // A small immediate takes the raddr_b field: no side-B read beside it (§3 "Small
    // Immediates").
    assert_eq!(error("add r0, rb1, 3"), (1, 1, AsmErrorKind::Operands(OperandError::TooManyReads)));
    assert_eq!(
        error("add r0, r1, 3 ; fmul r2, r1, 4"),
        (1, 1, AsmErrorKind::Operands(OperandError::TooManyReads))
    );
    // A signal cannot go with a small immediate.
    assert!(matches!(
        error("add r0, r1, 1 ; nop ; thrsw").2,
        AsmErrorKind::Operands(OperandError::Encode(_))
    ));
    let mut small = [0u64; 1];
    assert_eq!(
        assemble("nop\nnop", &mut small).unwrap_err().kind,
        AsmErrorKind::Build(BuildError::OutOfSpace(1))
    );
}

#[test]
fn either_side_names_take_the_free_read_port() {
    // ra15 takes side A, so vary reads through side B.
    let Instruction::Alu(a) = Instruction::decode(one("fmul r0, vary, ra15")).unwrap() else {
        panic!()
    };
    assert_eq!((a.mul_a, a.mul_b), (baregpu_qpu_asm::isa::Mux::B, baregpu_qpu_asm::isa::Mux::A));
}

#[test]
fn the_builder_makes_the_same_words_as_the_text() {
    let mut words = [0u64; 16];
    let mut b = Builder::new(&mut words);
    let top = b.label().unwrap();
    b.bind(top).unwrap();
    b.alu(
        AluSpec::pair(
            Pipe::<AddOp>::new(AddOp::Add, Dst::ra(1), Src::R0, Src::R1),
            Pipe::<MulOp>::new(MulOp::Fmul, Dst::rb(2), Src::R2, Src::R3),
        )
        .sig(Signal::ThreadSwitch),
    )
    .unwrap();
    b.ldi(Dst::VW_SETUP, 0x1a00).unwrap();
    b.semaphore(true, 3).unwrap();
    b.branch(baregpu_qpu_asm::BranchCond::AnyZ, top).unwrap();
    b.nops(2).unwrap();
    b.alu(AluSpec::NOP.sig(Signal::LastThreadSwitch)).unwrap();
    b.nops(2).unwrap();
    b.alu(AluSpec::NOP.sig(Signal::ProgramEnd)).unwrap();
    b.nops(2).unwrap();
    let built = b.finish(ProgramKind::User).unwrap().to_vec();
    let text = "top: add ra1, r0, r1 ; fmul rb2, r2, r3 ; thrsw\nldi vw_setup, 0x1a00\nsem acq 3\n\
                bra.anyz -> top\nnop\nnop\nlthrsw\nnop\nnop\nthrend\nnop\nnop\n";
    let mut words = [0u64; 16];
    let n = assemble(text, &mut words).unwrap();
    assert_eq!(built, words[..n]);
}

#[test]
fn the_builder_reports_unbound_labels_and_rules() {
    let mut words = [0u64; 8];
    let mut b = Builder::new(&mut words);
    let l = b.label().unwrap();
    b.branch(baregpu_qpu_asm::BranchCond::Always, l).unwrap();
    assert_eq!(b.finish(ProgramKind::User), Err(BuildError::UnboundLabel(0)));
    let mut words = [0u64; 8];
    let mut b = Builder::new(&mut words);
    b.nops(3).unwrap();
    let err = b.finish(ProgramKind::User).unwrap_err();
    assert!(matches!(err, BuildError::Rule(e) if e.rule == Rule::MissingThreadEnd), "{err}");
    let mut words = [0u64; 2];
    let mut b = Builder::new(&mut words);
    assert_eq!(b.nops(3), Err(BuildError::OutOfSpace(2)));
}
