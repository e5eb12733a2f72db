//! Encode/decode and text round trips over the whole table and random bytes.

use baregpu_falcon_asm::{Instruction, Op, assemble};
use proptest::prelude::*;

/// Decodable bytes re-encode to themselves, and their text assembles back to them.
fn check(bytes: &[u8]) -> Result<(), TestCaseError> {
    let Ok((insn, len)) = Instruction::decode(bytes) else { return Ok(()) };
    let mut again = [0u8; 4];
    prop_assert_eq!(insn.encode(&mut again), Ok(len));
    prop_assert_eq!(&again[..len], &bytes[..len]);
    let text = insn.display_at(0).to_string();
    let mut out = [0u8; 4];
    let n = assemble(&text, &mut out).map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
    prop_assert_eq!(&out[..n], &bytes[..len], "{}", text);
    Ok(())
}

#[test]
fn every_row_round_trips_through_bytes_and_text() {
    for &op in Op::ALL {
        let insn = Instruction::new(op);
        let mut bytes = [0u8; 4];
        let len = insn.encode(&mut bytes).unwrap_or_else(|e| panic!("{op:?}: {e}"));
        assert_eq!(len, op.format().length());
        assert_eq!(Instruction::decode(&bytes[..len]), Ok((insn, len)), "{op:?}");
        check(&bytes[..len]).unwrap();
    }
}

#[test]
fn every_first_two_bytes_round_trip_when_they_decode() {
    let mut decoded = 0;
    for b0 in 0..=255u8 {
        for b1 in 0..=255u8 {
            for tail in [[0x00, 0x00], [0x5c, 0x80], [0xff, 0x7f]] {
                let bytes = [b0, b1, tail[0], tail[1]];
                if Instruction::decode(&bytes).is_ok() {
                    decoded += 1;
                }
                check(&bytes).unwrap();
            }
        }
    }
    // Most of the space is instructions; a decoder refusing everything would pass `check`.
    assert!(decoded > 20_000, "{decoded}");
}

proptest! {
    #[test]
    fn random_bytes_round_trip(bytes in proptest::array::uniform4(any::<u8>())) {
        check(&bytes)?;
    }
}
