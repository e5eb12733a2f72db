//! CTM command words (CTM guide §2.2, Table 3) through the driver's strict decoder: whatever
//! decodes re-encodes to exactly the words it was decoded from (decode is the inverse of
//! encode); never a panic.
#![no_main]

use baregpu_ati_ctm::command::Command;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let words: Vec<u32> =
        bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    let mut at = 0;
    while at < words.len() {
        let Ok((cmd, n)) = Command::decode(&words[at..]) else { break };
        let (encoded, len) = cmd.encode().expect("a decoded command encodes");
        assert_eq!(len, n);
        assert_eq!(&encoded[..len], &words[at..at + n], "{cmd:?}");
        at += n;
    }
});
