//! The example programs assemble and do what their docs say, run on a small interpreter of the
//! §2.10 semantics of the instructions they use (§2.10.3 add/sub/cmpu/mov/sethi/clear, §2.10.4
//! ld, §2.10.5 bra, §2.10.9 xdld/xdst, §2.10.10 iord/iowr, §2.10.6 exit).

use std::collections::HashMap;

use baregpu_falcon_asm::{Instruction, Op, Size, SpecialReg, assemble, examples};

#[derive(Default)]
struct Falcon {
    r: [u32; 16],
    sr: [u32; 16],
    z: bool,
    c: bool,
    io: HashMap<u32, u32>,
    dmem: Vec<u8>,
    ext: Vec<u8>,
}

impl Falcon {
    fn new() -> Self {
        Self { dmem: vec![0; 0x1000], ext: vec![0; 0x1000], ..Self::default() }
    }

    /// Runs from 0 until `exit`; `false` if `steps` run out first.
    fn run(&mut self, code: &[u8], steps: usize) -> bool {
        let mut pc = 0usize;
        for _ in 0..steps {
            let (i, len) = Instruction::decode(&code[pc..]).expect("decodes");
            assert!(i.size.is_none() || i.size == Some(Size::B32), "{i:?}: the examples use b32");
            let (r1, r2, imm) = (usize::from(i.r1), usize::from(i.r2), i.imm_value() as u32);
            let mut next = pc + len;
            match i.op {
                Op::Mov_f0 | Op::Mov_f1 => self.r[r2] = imm,
                Op::Sethi_f0 | Op::Sethi_f1 => self.r[r2] = self.r[r2] & 0xffff | imm << 16,
                Op::Clear_3d => self.r[r2] = 0,
                Op::Add_36 | Op::Add_37 => self.r[r2] = self.r[r2].wrapping_add(imm),
                Op::Sub_36 | Op::Sub_37 => self.r[r2] = self.r[r2].wrapping_sub(imm),
                Op::Add_3b => self.r[r2] = self.r[r2].wrapping_add(self.r[r1]),
                Op::Cmpu_30 | Op::Cmpu_31 => {
                    self.z = self.r[r2] == imm;
                    self.c = self.r[r2] < imm;
                }
                Op::Bra_f4 | Op::Bra_f5 => {
                    let taken = match i.cond.bits() {
                        0x0e => true,
                        0x0b => self.z,
                        0x1b => !self.z,
                        other => panic!("condition {other:#x} not interpreted"),
                    };
                    if taken {
                        next = i.branch_target(pc as u32).unwrap() as usize;
                    }
                }
                Op::Iord_cx => self.r[r1] = *self.io.get(&(self.r[r2] + imm * 4)).unwrap_or(&0),
                Op::Iowr_dx => {
                    self.io.insert(self.r[r2] + imm * 4, self.r[r1]);
                }
                Op::Ld_1x => {
                    let a = (self.r[r2] + imm * 4) as usize & !3;
                    self.r[r1] = u32::from_le_bytes(self.dmem[a..a + 4].try_into().unwrap());
                }
                Op::MovToSr_fe => self.sr[r1] = self.r[r2],
                Op::Xdld_fa | Op::Xdst_fa => {
                    let ext = ((self.sr[usize::from(SpecialReg::XDBASE.index())] << 8) + self.r[r2])
                        as usize;
                    let local = (self.r[r1] & 0xffff) as usize;
                    let n = 4usize << (self.r[r1] >> 16 & 7);
                    if i.op == Op::Xdld_fa {
                        self.dmem[local..local + n].copy_from_slice(&self.ext[ext..ext + n]);
                    } else {
                        self.ext[ext..ext + n].copy_from_slice(&self.dmem[local..local + n]);
                    }
                }
                Op::Xdwait_f8 => {}
                Op::Exit_f8 => return true,
                other => panic!("{other:?} not interpreted"),
            }
            pc = next;
        }
        false
    }
}

fn code(src: &str) -> Vec<u8> {
    let mut out = [0u8; 256];
    let len = assemble(src, &mut out).unwrap_or_else(|e| panic!("{e}"));
    out[..len].to_vec()
}

#[test]
fn every_example_assembles() {
    for (name, src) in examples::ALL {
        assert!(code(src).len() > 4, "{name}");
    }
}

#[test]
fn mailbox_echo_answers_the_request_plus_one() {
    let prog = code(examples::MAILBOX_ECHO);
    let mut f = Falcon::new();
    // No request: it keeps polling SCRATCH0.
    assert!(!f.run(&prog, 1000));
    let mut f = Falcon::new();
    f.io.insert(0x1000, 41);
    assert!(f.run(&prog, 1000));
    assert_eq!((f.io[&0x1100], f.io[&0x1000]), (42, 0));
}

#[test]
fn dmem_checksum_sums_the_words() {
    let prog = code(examples::DMEM_CHECKSUM);
    let mut f = Falcon::new();
    for (k, w) in [1u32, 2, 3, 0xffff_ffff, 77].iter().enumerate() {
        f.dmem[k * 4..k * 4 + 4].copy_from_slice(&w.to_le_bytes());
    }
    f.io.insert(0x1000, 4); // the fifth word is not summed
    assert!(f.run(&prog, 1000));
    assert_eq!(f.io[&0x1100], 5); // 1 + 2 + 3 + 0xffffffff, wrapping
}

#[test]
fn xfer_memcpy_copies_whole_blocks() {
    let prog = code(examples::XFER_MEMCPY);
    let mut f = Falcon::new();
    for (k, b) in f.ext.iter_mut().enumerate() {
        *b = (k * 7 + 3) as u8;
    }
    let before = f.ext.clone();
    f.io.insert(0x1000, 0x100); // source
    f.io.insert(0x1100, 0x800); // destination
    f.io.insert(0x2000, 0x200); // two 256-byte blocks
    assert!(f.run(&prog, 1000));
    assert_eq!(f.ext[0x800..0xa00], before[0x100..0x300]);
    assert_eq!(f.ext[0xa00..], before[0xa00..], "nothing past the length");
    assert_eq!(f.io[&0x2100], 1);
}
