//! The DPP text assembler: any text is refused with a positioned error or assembled into
//! instructions that encode, and decode back to themselves; never a panic.
#![no_main]

use baregpu_dpp_asm::Instruction;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let Ok(src) = std::str::from_utf8(bytes) else { return };
    let mut out = vec![Instruction::default(); 512];
    if let Ok(n) = baregpu_dpp_asm::assemble(src, &mut out) {
        for inst in &out[..n] {
            if let Ok(words) = inst.encode() {
                assert_eq!(Instruction::decode(&words), Ok(*inst), "{src:?}");
            }
        }
    }
});
