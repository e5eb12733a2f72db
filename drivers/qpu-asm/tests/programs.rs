//! The example programs: they assemble, pass every §3 rule for their kind, and do what their
//! documentation says at the encoding level (the lead runs them on the emulated V3D).

use baregpu_qpu_asm::isa::{
    AddOp, Instruction, LoadImm, MulOp, MulPack, Mux, Packing, RaddrB, Reg, Signal,
};
use baregpu_qpu_asm::programs::{self, SAXPY, VARYING_COLOUR, VECTOR_ADD, VPM_STORE};
use baregpu_qpu_asm::{ProgramKind, check, vpm};

fn program(text: &str, kind: ProgramKind) -> Vec<Instruction> {
    let mut out = [0u64; 64];
    let words = programs::assemble_into(text, &mut out).unwrap_or_else(|e| panic!("{e}"));
    check(words, kind).unwrap_or_else(|e| panic!("{e}"));
    words.iter().map(|&w| Instruction::decode(w).unwrap()).collect()
}

fn ldi_values(insns: &[Instruction]) -> Vec<u32> {
    insns
        .iter()
        .filter_map(|i| match i {
            Instruction::LoadImm(LoadImm { value, .. }) => Some(*value),
            _ => None,
        })
        .collect()
}

/// The last three instructions: thread end, then two delay slots.
fn ends_thread(insns: &[Instruction]) {
    let n = insns.len();
    assert_eq!(insns[n - 3].signal(), Signal::ProgramEnd);
}

#[test]
fn constant_colour_ends_as_mesa_ends_fragment_shaders() {
    let mut out = [0u64; 8];
    let words = programs::constant_colour(0xff00_00ff, &mut out).unwrap();
    assert_eq!(
        words,
        [
            // sig 14, cond_add 1 (bit 49), waddr_add 32 (r0), waddr_mul 39 (nop), the colour.
            0xe002_0827_ff00_00ff,
            0x1000_09e7_009e_7000, // nop
            // sig 1, cond_add 1, waddr_add 46 (TLB_COLOUR_ALL), op_add 21 (or), raddrs 39, r0 r0.
            0x1002_0ba7_159e_7000,
            0x3000_09e7_009e_7000, // thread end
            0x1000_09e7_009e_7000, // nop
            0x5000_09e7_009e_7000, // nop + scoreboard unlock
        ]
    );
    check(words, ProgramKind::Fragment).unwrap();
}

#[test]
fn varying_colour_interpolates_three_varyings_into_bytes() {
    let insns = program(VARYING_COLOUR, ProgramKind::Fragment);
    let mut varyings = 0;
    let mut bytes = Vec::new();
    for i in &insns {
        let Instruction::Alu(a) = i else { panic!("{i:?}") };
        if a.op_mul == MulOp::Fmul && a.raddr_b == RaddrB::Reg(Reg::VARYING_READ) {
            varyings += 1;
            assert_eq!(a.raddr_a, Reg::new(15).unwrap(), "times W in ra15");
        }
        if a.op_add == AddOp::Fadd {
            assert_eq!(a.add_b, Mux::R5, "plus C in r5");
        }
        if let Packing::MulR4 { pack, .. } = a.packing {
            assert_eq!(a.wb.waddr_mul, Reg::ACC3);
            bytes.push(pack);
        }
    }
    assert_eq!(varyings, 3);
    assert_eq!(bytes, [MulPack::C8a, MulPack::C8b, MulPack::C8c, MulPack::C8d]);
    let Instruction::Alu(tlb) = insns[insns.len() - 4] else { panic!() };
    assert_eq!(tlb.wb.waddr_add, Reg::TLB_COLOUR_ALL);
    assert_eq!(insns.last().unwrap().signal(), Signal::ScoreboardUnlock);
    ends_thread(&insns);
}

#[test]
fn vpm_store_sets_up_the_vpm_and_the_dma_from_the_tables() {
    let insns = program(VPM_STORE, ProgramKind::User);
    assert_eq!(ldi_values(&insns), [vpm::write_rows(0), vpm::store_rows(1, 16, 0)]);
    // Both setups go to VPMVCD_WR_SETUP, on side B: the add pipe with write swap.
    for i in &insns {
        if let Instruction::LoadImm(l) = i {
            assert_eq!((l.wb.waddr_add, l.wb.ws), (Reg::VPM_SETUP, true));
        }
    }
    let Instruction::Alu(dma) = insns[3] else { panic!() };
    assert_eq!(
        (dma.wb.waddr_add, dma.wb.ws, dma.raddr_a),
        (Reg::VPM_ADDR, true, Reg::UNIFORM_READ)
    );
    ends_thread(&insns);
}

#[test]
fn vector_add_reads_three_uniforms_and_two_tmu_results() {
    let insns = program(VECTOR_ADD, ProgramKind::User);
    assert_eq!(ldi_values(&insns), [vpm::write_rows(0), vpm::store_rows(1, 16, 0)]);
    let count = |f: &dyn Fn(&Instruction) -> bool| insns.iter().filter(|i| f(i)).count();
    assert_eq!(count(&|i| i.signal() == Signal::LoadTmu0), 2);
    let reads_unif = |i: &Instruction| matches!(i, Instruction::Alu(a) if a.raddr_a == Reg::UNIFORM_READ || a.raddr_b == RaddrB::Reg(Reg::UNIFORM_READ));
    assert_eq!(count(&reads_unif), 3);
    let tmu = |i: &Instruction| matches!(i, Instruction::Alu(a) if a.wb.waddr_add == Reg::TMU0_S);
    assert_eq!(count(&tmu), 2);
    ends_thread(&insns);
}

#[test]
fn saxpy_loops_over_its_rows_under_the_mutex() {
    let insns = program(SAXPY, ProgramKind::User);
    let branch = insns.iter().position(|i| matches!(i, Instruction::Branch(_))).unwrap();
    let Instruction::Branch(b) = insns[branch] else { unreachable!() };
    // Back to the first TMU lookup, after the nine setup instructions.
    assert_eq!(b.target(branch), Some(9));
    // The loop counter sets the flags the branch tests.
    let Instruction::Alu(sub) = insns[branch - 1] else { panic!() };
    assert!(sub.op_add == AddOp::Sub && sub.wb.sf);
    let mutex = |i: &Instruction, w: bool| matches!(i, Instruction::Alu(a) if if w { a.wb.waddr_add == Reg::MUTEX } else { a.raddr_a == Reg::MUTEX });
    let acquire = insns.iter().position(|i| mutex(i, false)).unwrap();
    let release = insns.iter().position(|i| mutex(i, true)).unwrap();
    let vpm_write = insns
        .iter()
        .position(|i| matches!(i, Instruction::Alu(a) if a.wb.waddr_add == Reg::VPM))
        .unwrap();
    assert!(acquire < vpm_write && vpm_write < release);
    ends_thread(&insns);
    let u = programs::saxpy_uniforms(2.0, 0x1000, 0x2000, 0x3000, 4, 64, 5);
    assert_eq!(
        u,
        [0x4000_0000, 0x1000, 0x2000, 0x3000, 4, 64, vpm::write_rows(5), vpm::store_rows(1, 16, 5)]
    );
}

#[test]
fn vpm_setup_words_match_the_table_fields() {
    // Table 32: stride 1 (17:12), horizontal (11), 32-bit (9:8 = 2), row 3.
    assert_eq!(vpm::write_rows(3), 1 << 12 | 1 << 11 | 2 << 8 | 3);
    // Table 34: ID 2, 1 row, 16 words, horizontal, VPM row 2 (Y at VPMBASE bits 13:7).
    assert_eq!(vpm::store_rows(1, 16, 2), 0x8000_0000 | 1 << 23 | 16 << 16 | 1 << 14 | 2 << 7);
    // Table 33: 4 rows from row 1.
    assert_eq!(vpm::read_rows(1, 4), 4 << 20 | 1 << 12 | 1 << 11 | 2 << 8 | 1);
    // Table 36: ID 1, pitch 64 bytes (8 << 3), 2 rows, VPM pitch 1, row 5 (Y at 9:4).
    assert_eq!(vpm::load_rows(2, 3, 5), 0x8000_0000 | 3 << 24 | 2 << 16 | 1 << 12 | 5 << 4);
}
