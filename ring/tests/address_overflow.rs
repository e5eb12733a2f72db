//! Bus addresses near the top of every width a CP address field or a bus can hold (32-bit
//! CP_RB_BASE / CP_RB_RPTR_ADDR / CP_IB_BASE, 40-bit masters, the 64-bit `BusAddress`):
//! setup values are either exact or refused with a typed error, never wrapped or panicking.

mod common;

use baregpu_hal::Register;
use baregpu_hal::dma::BusAddress;
use baregpu_ring::ib::IbError;
use baregpu_ring::r5xx::IbDescriptor;
use baregpu_ring::ring::{CommandRing, RingConfigError};
use common::region;
use proptest::prelude::*;

const FOUR_GIB: u64 = 1 << 32;

/// An address within `below` bytes under the top of a `width`-bit space (`width` 32, 40 or
/// 64), dword-aligned or not.
fn near_top() -> impl Strategy<Value = u64> {
    (prop_oneof![Just(32u32), Just(40), Just(64)], 0u64..=4096).prop_map(|(width, below)| {
        let top = if width == 64 { u64::MAX } else { (1u64 << width) - 1 };
        top - below
    })
}

proptest! {
    /// A ring at any address near a top: accepted exactly when it is dword-aligned and ends
    /// at or below 4 GiB (CP_RB_BASE holds address bits 31:2), and then CP_RB_BASE names it.
    #[test]
    fn ring_base_near_the_top(base in near_top(), log2 in 3u32..8) {
        let dwords = 1usize << log2;
        let bytes = dwords as u64 * 4;
        let wb = region(1, 0x1000);
        let r = CommandRing::new(region(dwords, base), &wb, 0);
        let fits = base % 4 == 0 && base.checked_add(bytes).is_some_and(|end| end <= FOUR_GIB);
        match r {
            Ok(r) => {
                prop_assert!(fits);
                prop_assert_eq!(u64::from(r.cp_rb_base().to_raw()), base);
            }
            Err(e) => {
                prop_assert!(!fits);
                prop_assert_eq!(e, RingConfigError::BadBase { address: BusAddress(base) });
            }
        }
    }

    /// The read-pointer writeback at any region address and offset near a top: accepted
    /// exactly when the dword is aligned, inside its region and ends at or below 4 GiB, and
    /// then CP_RB_RPTR_ADDR names exactly that dword (a write-back address of
    /// `u64::MAX - 3` once became CP_RB_RPTR_ADDR = 0).
    #[test]
    fn writeback_near_the_top(wb_base in near_top(), offset in 0usize..16) {
        let wb = region(4, wb_base);
        let r = CommandRing::new(region(8, 0x1000), &wb, offset);
        let address = wb_base.checked_add(offset as u64);
        let fits = offset % 4 == 0
            && offset + 4 <= 16
            && address.is_some_and(|a| a % 4 == 0 && a + 4 <= FOUR_GIB);
        match r {
            Ok(r) => {
                prop_assert!(fits);
                prop_assert_eq!(Some(u64::from(r.cp_rb_rptr_addr().to_raw())), address);
            }
            Err(e) => {
                prop_assert!(!fits);
                let address = address.map(BusAddress);
                prop_assert_eq!(e, RingConfigError::BadWriteback { offset, address });
            }
        }
    }

    /// Indirect buffers near a top: accepted exactly when they end at or below 4 GiB
    /// (CP_IB_BASE is a 32-bit address).
    #[test]
    fn indirect_buffer_near_the_top(base in near_top(), dwords in 1usize..64) {
        let base = base & !3;
        let fits = base.checked_add(dwords as u64 * 4).is_some_and(|end| end <= FOUR_GIB);
        match IbDescriptor::new(BusAddress(base), dwords) {
            Ok(ib) => {
                prop_assert!(fits);
                prop_assert_eq!(u64::from(ib.ib1_registers().0.to_raw()), base);
            }
            Err(e) => {
                prop_assert!(!fits);
                prop_assert_eq!(e, IbError::AddressOutOfRange { address: BusAddress(base), dwords });
            }
        }
    }
}

/// The two cases the issue reported, as fixed examples.
#[test]
fn reported_cases_are_refused() {
    let wb = region(1, 0x1000);
    let top = BusAddress(0xffff_ffff_ffff_ffe0);
    assert_eq!(
        CommandRing::new(region(8, top.0), &wb, 0).unwrap_err(),
        RingConfigError::BadBase { address: top }
    );
    let wb = region(4, u64::MAX - 3);
    assert_eq!(
        CommandRing::new(region(8, 0x1000), &wb, 0).unwrap_err(),
        RingConfigError::BadWriteback { offset: 0, address: Some(BusAddress(u64::MAX - 3)) }
    );
}
