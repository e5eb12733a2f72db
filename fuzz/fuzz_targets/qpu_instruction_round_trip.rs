//! QPU instructions (§3): any 64-bit word is a typed decode error, or an instruction that
//! re-encodes to exactly the same word and whose disassembly assembles back to it.
#![no_main]

use baregpu_qpu_asm::{Instruction, assemble};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|word: u64| {
    let Ok(insn) = Instruction::decode(word) else { return };
    assert_eq!(insn.encode(), Ok(word), "{insn:?}");
    let text = insn.display().to_string();
    let mut out = [0u64; 1];
    assert_eq!(assemble(&text, &mut out).unwrap_or_else(|e| panic!("{text:?}: {e}")), 1);
    assert_eq!(out[0], word, "{text:?}");
});
