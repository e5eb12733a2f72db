//! The QPU text assembler: any text is refused with a positioned error or assembled into words
//! whose disassembly assembles back to the same words; never a panic.
#![no_main]

use baregpu_qpu_asm::{Disassembly, assemble};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let Ok(src) = std::str::from_utf8(bytes) else { return };
    let mut out = vec![0u64; 1024];
    let Ok(n) = assemble(src, &mut out) else { return };
    let text = Disassembly::new(&out[..n]).to_string();
    let mut again = vec![0u64; n];
    let m = assemble(&text, &mut again).unwrap_or_else(|e| panic!("{src:?} -> {text:?}: {e}"));
    assert_eq!(again[..m], out[..n], "{src:?} -> {text:?}");
});
