//! Property: any sequence of batch sizes on a tiny ring (64 dwords, wrapping every few
//! batches, packets straddling the end) executes in order with every fence signalled.

mod common;

use baregpu_radeon_r5xx::gpu::GpuQueue;
use baregpu_radeon_r5xx::{RingConfig, USER_SCRATCH};
use baregpu_regs::r5xx::cp::SCRATCH_REG0;
use common::*;
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn batches_of_any_size_wrap_and_signal_in_order(
        sizes in proptest::collection::vec((1usize..=30, 0usize..=2), 1..60)
    ) {
        let gpu = gpu();
        let mut drv = init(&gpu, RingConfig::with_ring_bytes(256));
        for (i, &(nop, writes)) in sizes.iter().enumerate() {
            let value = i as u32;
            let f = drv
                .submit(1 + nop + 2 * writes + 2, |s| {
                    s.writer().nop(&vec![value; nop])?;
                    for _ in 0..writes {
                        s.writer()
                            .write_reg_at(USER_SCRATCH, SCRATCH_REG0::RESET.with_scratch_reg0(value))?;
                    }
                    s.fence()
                })
                .unwrap();
            drv.wait(&f, FENCE_TIMEOUT).unwrap();
            prop_assert_eq!(drv.ring().head() % 16, 0);
            if writes > 0 {
                prop_assert_eq!(drv.scratch_writeback(USER_SCRATCH), Some(value));
            }
        }
        prop_assert_eq!(drv.last_signalled(), sizes.len() as u64);
        prop_assert_eq!(gpu.error_code(), 0);
    }
}
