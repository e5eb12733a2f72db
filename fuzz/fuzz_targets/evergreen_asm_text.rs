//! The Evergreen/Cayman text assembler: any text is refused with a positioned error or
//! assembled, for either chip, into a program whose CF instructions (the first `2 * cf_count`
//! dwords) decode and re-encode to the same words; never a panic, never a write past the
//! caller's buffers.
#![no_main]

use baregpu_evergreen_asm::{CfInstruction, Chip, Node, assemble};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let Ok(src) = std::str::from_utf8(bytes) else { return };
    for chip in Chip::ALL {
        let mut nodes = [Node::EMPTY; 128];
        let mut words = [0u32; 512];
        let Ok(info) = assemble(src, chip, &mut nodes, &mut words) else { continue };
        assert!(info.words <= words.len() && 2 * info.cf_count <= info.words, "{src:?}");
        for cf in words[..2 * info.cf_count].chunks_exact(2) {
            let pair = [cf[0], cf[1]];
            let decoded = CfInstruction::decode(pair, chip)
                .unwrap_or_else(|e| panic!("{chip:?}: CF {pair:08x?} does not decode: {e:?}"));
            assert_eq!(decoded.encode(chip), Ok(pair), "{chip:?} {src:?}");
        }
    }
});
