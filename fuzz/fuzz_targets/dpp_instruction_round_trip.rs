//! DPP instruction slots (CTM guide ch. 3): the decoder and encoder agree. Any six words that
//! decode encode again, to words that decode to the same instruction (decode ∘ encode ∘ decode).
#![no_main]

use baregpu_dpp_asm::Instruction;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: [u8; 24]| {
    let mut w = [0u32; 6];
    for (k, c) in bytes.chunks_exact(4).enumerate() {
        w[k] = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
    }
    if let Ok(inst) = Instruction::decode(&w) {
        let e = inst.encode().unwrap_or_else(|e| panic!("{w:08x?} decodes, does not encode: {e}"));
        assert_eq!(Instruction::decode(&e), Ok(inst));
    }
});
