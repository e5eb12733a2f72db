//! A program walker for the tests: follows the CF program from dword 0 the way a shader
//! sequencer does (CF words until the end, clause bodies at their `ADDR`), decoding with the
//! crate's word decoders only. It shares nothing with the builder's layout code, so a layout
//! mistake shows up as a walk that disagrees with what was built.

#![allow(dead_code)]

use baregpu_evergreen_asm::alu::Sel;
use baregpu_evergreen_asm::{
    AluWord, CfInst, CfInstruction, Chip, Node, ProgramInfo, VtxFetch, assemble,
};

/// One decoded ALU group.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub insts: Vec<AluWord>,
    pub literals: Vec<u32>,
}

/// A clause reached from a CF instruction.
#[derive(Debug, Clone, PartialEq)]
pub enum Clause {
    Alu(Vec<Group>),
    Fetch(Vec<VtxFetch>),
}

/// A walked program.
#[derive(Debug, Clone, PartialEq)]
pub struct Walk {
    pub cf: Vec<CfInstruction>,
    /// Clause of each CF instruction that has one, by CF index.
    pub clauses: Vec<(usize, Clause)>,
}

impl Walk {
    pub fn alu_groups(&self) -> Vec<&Group> {
        self.clauses
            .iter()
            .filter_map(|(_, c)| if let Clause::Alu(g) = c { Some(g) } else { None })
            .flatten()
            .collect()
    }
    pub fn fetches(&self) -> Vec<&VtxFetch> {
        self.clauses
            .iter()
            .filter_map(|(_, c)| if let Clause::Fetch(f) = c { Some(f) } else { None })
            .flatten()
            .collect()
    }
}

pub fn walk(words: &[u32], chip: Chip) -> Walk {
    let mut cf = Vec::new();
    let mut clauses = Vec::new();
    for i in 0.. {
        assert!(2 * i + 1 < words.len(), "CF program runs off the end without an end");
        let inst = CfInstruction::decode([words[2 * i], words[2 * i + 1]], chip)
            .unwrap_or_else(|e| panic!("CF {i}: {e}"));
        match inst {
            CfInstruction::Alu(a) => {
                let start = a.addr as usize * 2;
                let slots = usize::from(a.count) + 1;
                clauses.push((
                    i,
                    Clause::Alu(split_alu_clause(&words[start..start + 2 * slots], chip)),
                ));
            }
            CfInstruction::Cf(c) if matches!(c.inst, CfInst::Tc | CfInst::Vc) => {
                assert_eq!(c.addr % 2, 0, "fetch clauses start on 128 bits");
                let start = c.addr as usize * 2;
                let fetches = (0..=usize::from(c.count))
                    .map(|k| {
                        let w = &words[start + 4 * k..start + 4 * k + 4];
                        VtxFetch::decode([w[0], w[1], w[2], w[3]], chip).unwrap()
                    })
                    .collect();
                clauses.push((i, Clause::Fetch(fetches)));
            }
            _ => {}
        }
        cf.push(inst);
        if inst.ends_program(chip) {
            break;
        }
    }
    Walk { cf, clauses }
}

/// Splits an ALU clause body into groups: instructions up to `LAST`, then as many literal
/// dwords as the highest literal channel read, padded to an even count.
pub fn split_alu_clause(body: &[u32], chip: Chip) -> Vec<Group> {
    let mut groups = Vec::new();
    let mut i = 0;
    while i < body.len() {
        let mut insts = Vec::new();
        loop {
            let w = AluWord::decode([body[i], body[i + 1]], chip).unwrap();
            i += 2;
            insts.push(w);
            if w.last {
                break;
            }
        }
        let lits = insts
            .iter()
            .flat_map(|w| w.src.iter().take(w.op.src_count()))
            .filter(|s| s.sel == Sel::Literal)
            .map(|s| s.chan.index() + 1)
            .max()
            .unwrap_or(0);
        let padded = lits.next_multiple_of(2);
        groups.push(Group { insts, literals: body[i..i + lits].to_vec() });
        i += padded;
    }
    assert_eq!(i, body.len(), "clause COUNT covers exactly its groups");
    groups
}

/// Assembles or panics with the error.
pub fn asm(src: &str, chip: Chip) -> (Vec<u32>, ProgramInfo) {
    let mut nodes = vec![Node::EMPTY; 512];
    let mut out = vec![0u32; 4096];
    let info = assemble(src, chip, &mut nodes, &mut out).unwrap_or_else(|e| panic!("{chip}: {e}"));
    out.truncate(info.words);
    (out, info)
}

/// The error of a source that must not assemble.
pub fn asm_err(src: &str, chip: Chip) -> baregpu_evergreen_asm::Error {
    let mut nodes = vec![Node::EMPTY; 512];
    let mut out = vec![0u32; 4096];
    assemble(src, chip, &mut nodes, &mut out).expect_err("must be rejected")
}
