//! Every word that decodes re-encodes to itself, and its disassembly assembles back to it.

use baregpu_qpu_asm::{Instruction, assemble};
use proptest::prelude::*;

fn round_trip(word: u64) {
    let Ok(insn) = Instruction::decode(word) else { return };
    assert_eq!(insn.encode(), Ok(word), "{insn:?}");
    let text = insn.display().to_string();
    let mut out = [0u64; 1];
    let n = assemble(&text, &mut out).unwrap_or_else(|e| panic!("{word:#018x} {text:?}: {e}"));
    assert_eq!((n, out[0]), (1, word), "{text:?}: {:#018x} vs {word:#018x}", out[0]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20_000))]
    #[test]
    fn any_word(word in any::<u64>()) {
        round_trip(word);
    }

    /// Words near the common ones (few fields set) exercise the short forms.
    #[test]
    fn sparse_words(sig in 0u64..16, hi_bits in any::<u32>(), lo in any::<u32>(), mask in any::<u64>()) {
        let word = (sig << 60 | (hi_bits as u64) << 28 | lo as u64) & (mask | 0xf << 60);
        round_trip(word);
        round_trip(word & 0xf000_0fff_ffff_ffff | 0x0000_09e7_009e_7000 & !(mask >> 1));
    }
}

#[test]
fn each_signal_with_nop() {
    for sig in 0u64..16 {
        round_trip(sig << 60 | 0x0000_09e7_009e_7000);
    }
}
