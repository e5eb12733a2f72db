//! Each §3 restriction the checker implements: a program that breaks it is rejected at the
//! instruction that breaks it, and the same program with the fix passes.

use baregpu_qpu_asm::{ProgramKind, Rule, RuleError, assemble, check, isa::File, isa::Reg};

const END: &str = "thrend\nnop\nnop\n";

fn run(text: &str, kind: ProgramKind) -> Result<(), RuleError> {
    let mut words = [0u64; 64];
    let n = assemble(text, &mut words).unwrap_or_else(|e| panic!("{text}: {e}"));
    check(&words[..n], kind)
}

/// `bad` breaks `rule` at `index`; `good` is the fixed program.
fn rejects(bad: &str, good: &str, kind: ProgramKind, index: usize, rule: Rule) {
    let err = run(bad, kind).expect_err(bad);
    assert_eq!((err.index, err.rule), (index, rule), "{bad}");
    run(good, kind).unwrap_or_else(|e| panic!("{good}: {e}"));
}

#[test]
fn both_pipes_writing_one_accumulator() {
    rejects(
        &format!("add r0, r1, r2 ; fmul r0, r1, r2\n{END}"),
        &format!("add r0, r1, r2 ; fmul r3, r1, r2\n{END}"),
        ProgramKind::User,
        0,
        Rule::SameDestination(Reg::ACC0),
    );
    // quad_x and quad_y share address 41 but are different registers.
    run(&format!("add quad_x, r1, r2 ; fmul quad_y, r1, r2\n{END}"), ProgramKind::Fragment)
        .unwrap();
}

#[test]
fn reading_a_location_written_by_the_previous_instruction() {
    rejects(
        &format!("mov ra3, r0\nmov r1, ra3\n{END}"),
        &format!("mov ra3, r0\nnop\nmov r1, ra3\n{END}"),
        ProgramKind::User,
        1,
        Rule::ReadAfterWrite(File::A, 3),
    );
    // The mul pipe writes side B: rb7 read next is the hazard, ra7 is not.
    rejects(
        &format!("nop ; fmul rb7, r0, r0\nmov r1, rb7\n{END}"),
        &format!("nop ; fmul rb7, r0, r0\nmov r1, ra7\n{END}"),
        ProgramKind::User,
        1,
        Rule::ReadAfterWrite(File::B, 7),
    );
}

#[test]
fn r4_after_an_sfu_write() {
    rejects(
        &format!("mov sfu_recip, r0\nnop\nmov r1, r4\n{END}"),
        &format!("mov sfu_recip, r0\nnop\nnop\nmov r1, r4\n{END}"),
        ProgramKind::User,
        2,
        Rule::R4AfterSfu,
    );
    rejects(
        &format!("mov sfu_recip, r0\nldtmu0\nnop\n{END}"),
        &format!("mov sfu_recip, r0\nnop\nnop\nldtmu0\n{END}"),
        ProgramKind::User,
        1,
        Rule::R4AfterSfu,
    );
}

#[test]
fn one_closely_coupled_access() {
    rejects(
        &format!("nop\nnop\nmov tmu0_s, r0 ; ldtmu0\n{END}"),
        &format!("nop\nnop\nmov tmu0_s, r0\nldtmu0\n{END}"),
        ProgramKind::User,
        2,
        Rule::CloselyCoupled,
    );
    rejects(
        &format!("nop\nnop\nmov tlb_z, r0 ; mov sfu_exp, r1\n{END}"),
        &format!("nop\nnop\nmov tlb_z, r0 ; mov r2, r1\n{END}"),
        ProgramKind::Fragment,
        2,
        Rule::CloselyCoupled,
    );
}

#[test]
fn the_last_three_instructions() {
    rejects("nop\nnop\nnop\n", END, ProgramKind::User, 0, Rule::MissingThreadEnd);
    rejects(
        &format!("thrend\nnop\n{END}"),
        &format!("nop\nnop\n{END}"),
        ProgramKind::User,
        2,
        Rule::ThreadEndDelaySlots,
    );
    rejects(
        "nop\nthrend\nmov r0, unif\nnop\n",
        "mov r0, unif\nthrend\nnop\nnop\n",
        ProgramKind::User,
        2,
        Rule::EndAccessesIo,
    );
    rejects(
        "nop\nthrend\nnop\nmov vpm, r0\n",
        "mov vpm, r0\nthrend\nnop\nnop\n",
        ProgramKind::User,
        3,
        Rule::EndAccessesIo,
    );
    rejects(
        "add ra1, r0, r0 ; nop ; thrend\nnop\nnop\n",
        "add r1, r0, r0 ; nop ; thrend\nnop\nnop\n",
        ProgramKind::User,
        0,
        Rule::ThreadEndWritesRegfile,
    );
    rejects(
        "thrend\nmov r0, rb14\nnop\n",
        "mov r0, rb14\nthrend\nnop\nnop\n",
        ProgramKind::User,
        1,
        Rule::EndTouches14,
    );
    rejects(
        "nop\nnop\nthrend\nnop\nmov tlb_z, r0\n",
        "nop\nnop\nthrend\nmov tlb_z, r0\nnop\n",
        ProgramKind::Fragment,
        4,
        Rule::FinalTlbZ,
    );
}

#[test]
fn no_scoreboard_wait_in_the_first_two_fragment_instructions() {
    rejects(
        &format!("nop\nsbwait\n{END}"),
        &format!("nop\nnop\nsbwait\n{END}"),
        ProgramKind::Fragment,
        1,
        Rule::EarlyScoreboardWait,
    );
    rejects(
        &format!("mov tlb_color_all, r0\n{END}"),
        &format!("nop\nnop\nmov tlb_color_all, r0\n{END}"),
        ProgramKind::Fragment,
        0,
        Rule::EarlyScoreboardWait,
    );
    // Not a fragment shader: no scoreboard.
    run(&format!("sbwait\n{END}"), ProgramKind::User).unwrap();
}

#[test]
fn tmu_noswap_three_instructions_before_the_first_tmu_write() {
    rejects(
        &format!("mov tmu_noswap, r0\nnop\nmov tmu0_s, r1\n{END}"),
        &format!("mov tmu_noswap, r0\nnop\nnop\nmov tmu0_s, r1\n{END}"),
        ProgramKind::User,
        2,
        Rule::NoSwapTooLate,
    );
}

#[test]
fn rotations_after_accumulator_writes() {
    rejects(
        &format!("mov r5, r0\nnop ; fmul r1, r2, r3 ; rot r5\n{END}"),
        &format!("mov r5, r0\nnop\nnop ; fmul r1, r2, r3 ; rot r5\n{END}"),
        ProgramKind::User,
        1,
        Rule::RotateAfterR5Write,
    );
    rejects(
        &format!("mov r2, r0\nnop ; fmul r1, r2, r3 ; rot 3\n{END}"),
        &format!("mov r0, r0\nnop ; fmul r1, r2, r3 ; rot 3\n{END}"),
        ProgramKind::User,
        1,
        Rule::RotateAfterAccumulatorWrite,
    );
}

#[test]
fn ms_flags_after_a_tlb_z_write() {
    rejects(
        "nop\nnop\nmov tlb_z, r0\nnop\nmov r1, ms_flags\nthrend\nnop\nnop\n",
        "nop\nnop\nmov tlb_z, r0\nnop\nnop\nmov r1, ms_flags\nthrend\nnop\nnop\n",
        ProgramKind::Fragment,
        4,
        Rule::MsFlagsAfterTlbZ,
    );
}

#[test]
fn branches_and_their_delay_slots() {
    rejects(
        &format!("top: bra -> top\nbra -> top\nnop\nnop\nnop\n{END}"),
        &format!("top: bra -> top\nnop\nnop\nnop\nbra -> top\nnop\nnop\nnop\n{END}"),
        ProgramKind::User,
        1,
        Rule::BranchInDelaySlot,
    );
    rejects(
        "bra rel 8000\nnop\nnop\nnop\nthrend\nnop\nnop\n",
        "bra rel 8\nnop\nnop\nnop\nthrend\nnop\nnop\n",
        ProgramKind::User,
        0,
        Rule::BranchTarget,
    );
}

#[test]
fn thread_switches() {
    rejects(
        &format!("thrsw\nlthrsw\nnop\nnop\n{END}"),
        &format!("thrsw\nnop\nnop\nlthrsw\nnop\nnop\n{END}"),
        ProgramKind::Fragment,
        1,
        Rule::ThreadSwitchInDelaySlot,
    );
    rejects(
        &format!("thrsw\nnop\nnop\n{END}"),
        &format!("lthrsw\nnop\nnop\n{END}"),
        ProgramKind::Fragment,
        0,
        Rule::LastThreadSwitch,
    );
    rejects(
        &format!("lthrsw\nnop\nnop\nthrsw\nnop\nnop\n{END}"),
        &format!("thrsw\nnop\nnop\nlthrsw\nnop\nnop\n{END}"),
        ProgramKind::Fragment,
        3,
        Rule::LastThreadSwitch,
    );
}

#[test]
fn semaphores_do_not_write_stalling_peripherals() {
    rejects(
        &format!("sem acq 0, tmu0_s\n{END}"),
        &format!("sem acq 0, r0\n{END}"),
        ProgramKind::User,
        0,
        Rule::SemaphoreWritesPeripheral,
    );
}

#[test]
fn uniform_reads_after_an_address_write() {
    rejects(
        &format!("mov unif_addr, r0\nnop\nmov r1, unif\n{END}"),
        &format!("mov unif_addr, r0\nnop\nnop\nmov r1, unif\n{END}"),
        ProgramKind::User,
        2,
        Rule::UniformAfterAddressWrite,
    );
}

#[test]
fn undecodable_words_are_errors_with_their_index() {
    let words = [
        0x1000_09e7_009e_7000,
        0x0000_09e7_0900_7000,
        0x3000_09e7_009e_7000,
        0x1000_09e7_009e_7000,
        0x1000_09e7_009e_7000,
    ];
    let err = check(&words, ProgramKind::User).unwrap_err();
    assert_eq!(err.index, 1);
    assert!(matches!(err.rule, Rule::Decode(_)), "{err}");
}
