//! The falcon text assembler: any text is refused with a positioned error or assembled into
//! bytes that disassemble instruction by instruction and whose text assembles back to the
//! same bytes; never a panic.
#![no_main]

use baregpu_falcon_asm::{Instruction, assemble};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let Ok(src) = std::str::from_utf8(bytes) else { return };
    let mut out = vec![0u8; 4096];
    let Ok(len) = assemble(src, &mut out) else { return };
    let mut pc = 0;
    while pc < len {
        let (insn, n) =
            Instruction::decode(&out[pc..len]).unwrap_or_else(|e| panic!("{src:?} at {pc}: {e}"));
        // The same instruction, alone at the same address (padded with 2-byte `ret`s).
        let text = format!("{}{}", "ret\n".repeat(pc / 2), insn.display_at(pc as u32));
        let mut again = vec![0u8; pc + 4];
        if pc % 2 == 0 {
            let m = assemble(&text, &mut again).unwrap_or_else(|e| panic!("{text:?}: {e}"));
            assert_eq!(&again[pc..m], &out[pc..pc + n], "{text:?}");
        }
        pc += n;
    }
});
