//! falcon instructions (§2.10.2): whatever four bytes decode re-encode to exactly the same
//! bytes, and the disassembly assembles back to them.
#![no_main]

use baregpu_falcon_asm::{Instruction, assemble};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: [u8; 4]| {
    let Ok((insn, len)) = Instruction::decode(&bytes) else { return };
    let mut again = [0u8; 4];
    assert_eq!(insn.encode(&mut again), Ok(len));
    assert_eq!(again[..len], bytes[..len]);
    let text = insn.display_at(0).to_string();
    let mut out = [0u8; 4];
    let n = assemble(&text, &mut out).unwrap_or_else(|e| panic!("{text:?}: {e}"));
    assert_eq!(out[..n], bytes[..len], "{text:?}");
});
