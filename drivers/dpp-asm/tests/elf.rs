//! The executable writer's output, read back by a tiny independent ELF reader that checks the
//! rules of ctm-guide chapter 4.

use baregpu_dpp_asm::elf::*;
use baregpu_dpp_asm::{Instruction, Words, assemble_executable};

fn u16_at(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes([b[o], b[o + 1]])
}
fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(b[o..o + 4].try_into().unwrap())
}

struct Note {
    ty: u32,
    desc: Vec<u32>,
}

struct Exe {
    text: Vec<u8>,
    notes: Vec<Note>,
    sections: Vec<(String, u32, u32)>,
}

/// Parses and checks an executable against ctm-guide §4.1.
fn read(b: &[u8]) -> Exe {
    // §4.1.2 ELF header.
    assert_eq!(&b[..4], b"\x7fELF");
    assert_eq!(b[4], 1, "ELFCLASS32");
    assert_eq!(b[5], 1, "ELFDATA2LSB");
    assert_eq!(b[6], 1, "EV_CURRENT");
    assert_eq!(b[7], 98, "ELFOSABI_ATI");
    assert_eq!(b[8], 1, "EI_ABIVERSION");
    assert_eq!(u16_at(b, 16), 2, "ET_EXEC");
    assert_eq!(u16_at(b, 18), 122, "EM_ATI_R5XX");
    assert_eq!(u32_at(b, 20), 1, "e_version");
    assert_eq!(u32_at(b, 24), 0, "e_entry");
    assert_eq!(u32_at(b, 36), 1, "EF_ATI_DPP");
    assert_eq!(u16_at(b, 40), 52);
    let phoff = u32_at(b, 28) as usize;
    let shoff = u32_at(b, 32) as usize;
    let (phentsize, phnum) = (u16_at(b, 42) as usize, u16_at(b, 44) as usize);
    let (shentsize, shnum, shstrndx) =
        (u16_at(b, 46) as usize, u16_at(b, 48) as usize, u16_at(b, 50) as usize);
    assert_eq!((phentsize, shentsize), (32, 40));
    // Program headers: exactly one PT_LOAD (§4.1.3), PT_NOTEs carrying the notes (§4.1.4).
    let mut text = None;
    let mut notes = Vec::new();
    for k in 0..phnum {
        let p = phoff + k * phentsize;
        let (ty, off, filesz) =
            (u32_at(b, p), u32_at(b, p + 4) as usize, u32_at(b, p + 16) as usize);
        match ty {
            1 => {
                assert!(text.is_none(), "one PT_LOAD");
                assert_eq!(u32_at(b, p + 24) & 1, 1, "PF_X");
                text = Some(b[off..off + filesz].to_vec());
            }
            4 => {
                let mut o = off;
                while o < off + filesz {
                    let (namesz, descsz, nty) =
                        (u32_at(b, o), u32_at(b, o + 4) as usize, u32_at(b, o + 8));
                    assert_eq!(namesz, 8);
                    assert_eq!(&b[o + 12..o + 20], b"ATI DPP\0");
                    assert_eq!(descsz % 4, 0);
                    let desc = (0..descsz / 4).map(|i| u32_at(b, o + 20 + 4 * i)).collect();
                    notes.push(Note { ty: nty, desc });
                    o += 20 + descsz;
                }
                assert_eq!(o, off + filesz);
            }
            _ => panic!("unexpected segment type {ty}"),
        }
    }
    // Sections: .text is SHT_PROGBITS with SHF_ALLOC | SHF_EXECINSTR and matches the PT_LOAD.
    let str_off = u32_at(b, shoff + shstrndx * shentsize + 16) as usize;
    let mut sections = Vec::new();
    for k in 0..shnum {
        let s = shoff + k * shentsize;
        let name_off = str_off + u32_at(b, s) as usize;
        let end = b[name_off..].iter().position(|&c| c == 0).unwrap();
        let name = String::from_utf8(b[name_off..name_off + end].to_vec()).unwrap();
        let (ty, flags) = (u32_at(b, s + 4), u32_at(b, s + 8));
        if name == ".text" {
            assert_eq!((ty, flags), (1, 6));
            let (off, size) = (u32_at(b, s + 16) as usize, u32_at(b, s + 20) as usize);
            assert_eq!(&b[off..off + size], text.as_deref().unwrap());
        }
        sections.push((name, ty, flags));
    }
    Exe { text: text.expect("PT_LOAD"), notes, sections }
}

fn build(src: &str) -> (Vec<u8>, Vec<Words>) {
    let mut insts = vec![Instruction::default(); 512];
    let mut words = vec![[0u32; 6]; 512];
    let mut out = vec![0u8; 64 * 1024];
    let n = assemble_executable(src, &mut insts, &mut words, &mut out).unwrap();
    out.truncate(n);
    let ninst = baregpu_dpp_asm::assemble(src, &mut insts).unwrap();
    words.truncate(ninst);
    (out, words)
}

#[test]
fn saxpy_executable() {
    let (b, words) = build(baregpu_dpp_asm::examples::SAXPY);
    let e = read(&b);
    // .text: 6 little-endian words per slot.
    assert_eq!(e.text.len(), words.len() * 24);
    for (k, w) in words.iter().enumerate() {
        for (j, &x) in w.iter().enumerate() {
            assert_eq!(u32_at(&e.text, k * 24 + j * 4), x);
        }
    }
    // Seven notes, types 1..=7 in order.
    assert_eq!(e.notes.iter().map(|n| n.ty).collect::<Vec<_>>(), [1, 2, 3, 4, 5, 6, 7]);
    let pi = &e.notes[0].desc;
    assert_eq!(pi.len(), 28);
    let n = words.len() as u32;
    assert_eq!(pi[0], 1);
    assert_eq!(pi[1], 0, "no conditional output");
    assert_eq!(pi[2], 0, "cached writes");
    assert_eq!(pi[3], 2, "largest register r2");
    assert_eq!(pi[4], 0, "partial flow control");
    assert_eq!(pi[5], (n - 1) << 16, "US_CODE_ADDR");
    assert_eq!(pi[6], (n - 1) << 16, "US_CODE_RANGE");
    assert_eq!((pi[7], pi[8]), (0xc0, 0x20000));
    assert!(pi[9..27].iter().all(|&x| x == 0));
    assert_eq!(pi[27], n, "INSTR_CNT");
    assert_eq!(e.notes[1].desc, [0, 1], "inputs");
    assert_eq!(e.notes[2].desc, [0], "outputs");
    assert_eq!(e.notes[3].desc, [0], "condout");
    assert_eq!(e.notes[4].desc, [0], "float32 constants: c0");
    assert!(e.notes[5].desc.is_empty(), "int32 constants");
    assert_eq!(e.notes[6].desc, [0], "early exit");
    assert!(e.sections.iter().any(|s| s.0 == ".note" && s.1 == 7));
}

#[test]
fn flags_follow_the_program() {
    let (b, _) = build(baregpu_dpp_asm::examples::REDUCE_2X2);
    let e = read(&b);
    assert_eq!(e.notes[0].desc[1], 1, "FG_DEPTH_SRC: conditional value exported");
    assert_eq!(e.notes[3].desc, [1]);
    let (b, _) = build(baregpu_dpp_asm::examples::CONST_LOOP);
    let e = read(&b);
    assert_eq!(e.notes[0].desc[4], 1 << 31, "US_FC_CTRL full flow control");
    assert_eq!(e.notes[5].desc, [0], "i0 referenced");
    let (b, _) = build("texkill r0\nmov.last o0, r1\nend");
    let e = read(&b);
    assert_eq!(e.notes[6].desc, [1], "early exit");
}

#[test]
fn every_example_is_a_valid_executable() {
    for (_, src) in baregpu_dpp_asm::examples::ALL {
        let (b, words) = build(src);
        let e = read(&b);
        assert_eq!(e.text.len(), words.len() * 24);
        assert_eq!(e.notes.len(), 7);
    }
}

#[test]
fn writer_errors() {
    let info = ProgramInfo::default();
    assert_eq!(write_executable(&[], &info, &mut [0; 1024]), Err(ElfError::Empty));
    let w = vec![[0u32; 6]; 513];
    assert_eq!(write_executable(&w, &info, &mut [0; 1024]), Err(ElfError::TooLong(513)));
    let needed = executable_len(1, &info);
    assert_eq!(
        write_executable(&w[..1], &info, &mut [0; 16]),
        Err(ElfError::BufferTooSmall { needed })
    );
    let mut buf = vec![0; needed];
    assert_eq!(write_executable(&w[..1], &info, &mut buf), Ok(needed));
}
