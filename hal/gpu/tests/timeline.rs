//! The fence timeline: ordering, the 2^32 boundary of 32-bit write-backs, rollback, error
//! completion.

use baregpu_gpu::{FenceFailure, FenceStatus, Timeline};
use proptest::prelude::*;

#[test]
fn fences_signal_in_order_and_stale_or_future_values_are_ignored() {
    let mut t = Timeline::new();
    let f: Vec<_> = (0..4).map(|_| t.emit()).collect();
    assert_eq!(t.observe(2), 2);
    assert_eq!(t.status(&f[1]), FenceStatus::Signalled);
    assert_eq!(t.status(&f[2]), FenceStatus::Pending);
    assert_eq!(t.observe(1), 2, "a stale write-back does not move the mark back");
    assert_eq!(t.observe(9), 2, "a value never emitted is not a completion");
    assert_eq!(t.status(&f[3]), FenceStatus::Pending);
}

#[test]
fn a_32_bit_write_back_extends_across_the_2_pow_32_boundary() {
    let mut t = Timeline::starting_at((1 << 32) - 2);
    let before = t.emit(); // 2^32 - 1
    let at = t.emit(); // 2^32: low 32 bits 0
    let after = t.emit(); // 2^32 + 1
    assert_eq!(after.seq(), (1 << 32) + 1);
    // The hardware wrote back 0xFFFF_FFFF: the fence before the boundary, not 2^33 - 1.
    t.observe(t.extend32(u32::MAX));
    assert_eq!(t.status(&before), FenceStatus::Signalled);
    assert_eq!(t.status(&at), FenceStatus::Pending, "0xffffffff is below 0x1_0000_0000");
    t.observe(t.extend32(1));
    assert_eq!(t.status(&at), FenceStatus::Signalled);
    assert_eq!(t.status(&after), FenceStatus::Signalled);
    assert_eq!(t.completed_up_to(), (1 << 32) + 1);
}

#[test]
fn rollback_returns_the_numbers_of_a_discarded_submission() {
    let mut t = Timeline::new();
    let kept = t.emit();
    let cp = t.checkpoint();
    let discarded = t.emit();
    t.rollback(cp);
    assert_eq!(t.status(&discarded), FenceStatus::NotSubmitted);
    assert_eq!(t.emit().seq(), kept.seq() + 1, "the number is taken again");
}

#[test]
fn lost_fences_complete_with_an_error_and_later_ones_signal() {
    let mut t = Timeline::new();
    let done = t.emit();
    let lost = [t.emit(), t.emit()];
    t.observe(done.seq());
    let range = t.fail_pending(FenceFailure::Lost).unwrap();
    assert_eq!((range.first, range.last, range.count()), (2, 3, 2));
    assert_eq!(t.status(&done), FenceStatus::Signalled);
    for f in &lost {
        assert_eq!(t.status(f), FenceStatus::Failed(FenceFailure::Lost));
    }
    assert_eq!(t.outstanding(), 0);
    assert_eq!(t.fail_pending(FenceFailure::Lost), None, "nothing outstanding, nothing lost");
    let next = t.emit();
    t.observe(next.seq());
    assert_eq!(t.status(&next), FenceStatus::Signalled);
    assert_eq!(t.status(&lost[0]), FenceStatus::Failed(FenceFailure::Lost));
}

proptest! {
    /// Whatever the 64-bit position, the low 32 bits of any of the last 2^32 - 1 emitted
    /// numbers extend back to that number.
    #[test]
    fn extend32_is_exact_within_a_window(top in 1u64..u64::MAX / 2, back in 0u64..(1 << 32) - 1) {
        let t = Timeline::starting_at(top);
        let seq = top.saturating_sub(back);
        prop_assert_eq!(t.extend32(seq as u32), seq);
    }
}
