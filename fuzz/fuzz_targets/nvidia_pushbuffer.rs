//! The nVidia pushbuffer writer and IB-mode channel (nvidia-hardware-envytools §2.8.3) under
//! hostile `IB_GET` and `DMA_MGET` values and arbitrary method sequences: whatever the "pusher"
//! reports, the channel never overwrites an IB entry it submitted and has not seen read, every
//! entry it writes has a non-zero size (no `IB_EMPTY`), each successful non-empty submit is
//! exactly one `IB_PUT` write, a refused command or batch writes nothing; never a panic.
#![no_main]

use core::cell::{Cell, RefCell};
use core::ptr::NonNull;

use baregpu_hal::dma::{BusAddress, DmaRegion};
use baregpu_hal::{RegisterIo, RegisterIoExt};
use baregpu_regs::nvidia::packets::ib_entry;
use baregpu_regs::nvidia::pfifo_user::UserG80;
use baregpu_ring::nvidia::{IbChannel, IbSubmitError, Segment};
use libfuzzer_sys::fuzz_target;

/// `words` of host memory as a region at bus address `bus`.
///
/// # Safety
/// The region must be dropped before `words`, which nothing else touches meanwhile.
unsafe fn region(words: &mut [u32], bus: u64) -> DmaRegion {
    let bytes = words.len() * 4;
    let cpu = NonNull::from(words).cast::<u8>();
    // SAFETY: the caller keeps `words` alive and untouched while the region lives; 4-byte
    // aligned; the length is the slice's.
    unsafe { DmaRegion::from_raw_parts(cpu, BusAddress(bus), bytes) }
}

const USER: usize = 0xc0_0000 + 0x2000;

#[derive(Default)]
struct Bar0 {
    ib_get: Cell<u32>,
    mget: Cell<u32>,
    ib_puts: RefCell<Vec<u32>>,
}

impl RegisterIo for Bar0 {
    fn read32(&self, offset: usize) -> u32 {
        match offset - USER {
            0x88 => self.ib_get.get(),
            0x58 => self.mget.get(),
            other => panic!("unexpected read of USER+{other:#x}"),
        }
    }
    fn write32(&self, offset: usize, value: u32) {
        assert_eq!(offset, USER + 0x8c, "only IB_PUT is written");
        self.ib_puts.borrow_mut().push(value);
    }
}

fuzz_target!(|bytes: &[u8]| {
    let Some((&sizes, ops)) = bytes.split_first() else { return };
    let main_words = 16usize << (sizes % 4);
    let entries = 2usize << ((sizes >> 2) % 4);
    let mut main_mem = vec![0u32; main_words];
    let mut ib_mem = vec![0u32; entries * 2];
    let bar0 = Bar0::default();
    let user = bar0.at_index::<UserG80>(1).expect("channel 1");
    // SAFETY: both regions live inside `ch`, dropped at the end of this closure before the
    // vectors; nothing else touches the vectors meanwhile.
    let (main, ib) = unsafe { (region(&mut main_mem, 0x10_0000), region(&mut ib_mem, 0x20_0000)) };
    let mut ch = IbChannel::new(main, ib, user).expect("a valid channel");
    let mut it = ops.iter().copied();
    let mut next_u32 = move || -> Option<u32> {
        Some(u32::from_le_bytes([it.next()?, it.next()?, it.next()?, it.next()?]))
    };
    let mut submits = 0usize;
    while let Some(op) = next_u32() {
        // Entries submitted and not yet read before the operation: from what the pusher
        // reports (when it is a position it can be at: between the channel's cached IB_GET
        // and its IB_PUT), else from the cached IB_GET.
        let (cached, put) = (ch.ib().cached_rptr() / 2, ch.ib().committed() / 2);
        let n = entries as u32;
        let reported = bar0.ib_get.get();
        let get = if reported < n && (reported + n - cached) % n <= (put + n - cached) % n {
            reported
        } else {
            cached
        };
        let unread: Vec<(u32, [u32; 2])> = (0..(put + entries as u32 - get) % entries as u32)
            .map(|k| {
                let i = (get + k) % entries as u32;
                let b = ch.ib().buffer();
                (i, [b.read_u32(i as usize * 8).unwrap(), b.read_u32(i as usize * 8 + 4).unwrap()])
            })
            .collect();
        let arg = op >> 4;
        match op % 8 {
            0 => {
                let n = (arg as usize) % 40;
                let data: Vec<u32> = (0..n as u32).collect();
                let _ = ch.writer().methods((arg >> 8) as u8, (arg >> 12) as u16, &data);
            }
            1 => {
                let _ = ch.writer().methods_long((arg >> 8) as u8, (arg >> 12) as u16, &[arg; 3]);
            }
            2 => {
                let _ = ch.writer().semaphore_release(BusAddress(u64::from(arg) << 2), arg);
            }
            3 => {
                let s = Segment {
                    address: BusAddress(u64::from(arg) << 4),
                    words: arg % 5,
                    not_main: arg & 1 == 0,
                };
                let _ = ch.push_external(s);
            }
            4 | 5 => {
                let before = bar0.ib_puts.borrow().len();
                match ch.submit() {
                    Ok(0) => assert_eq!(bar0.ib_puts.borrow().len(), before),
                    Ok(_) => {
                        submits += 1;
                        assert_eq!(bar0.ib_puts.borrow().len(), before + 1, "one IB_PUT per batch");
                    }
                    Err(
                        IbSubmitError::Full { .. }
                        | IbSubmitError::BadIbGet(_)
                        | IbSubmitError::TooLarge { .. },
                    ) => assert_eq!(bar0.ib_puts.borrow().len(), before),
                    Err(e) => panic!("unexpected {e:?}"),
                }
            }
            6 => bar0.ib_get.set(arg),
            _ => bar0.mget.set(arg),
        }
        for (i, e) in unread {
            let b = ch.ib().buffer();
            let now =
                [b.read_u32(i as usize * 8).unwrap(), b.read_u32(i as usize * 8 + 4).unwrap()];
            assert_eq!(now, e, "unread IB entry {i} overwritten");
        }
        let committed = ch.ib().committed() / 2;
        let mut i = ch.ib().cached_rptr() / 2;
        while i != committed {
            let w1 = ch.ib().buffer().read_u32(i as usize * 8 + 4).unwrap();
            assert!(ib_entry::SIZE.get(&[0, w1]) > 0, "IB_EMPTY entry {i}");
            i = (i + 1) % entries as u32;
        }
        assert!(ch.ib().cached_rptr() < 2 * entries as u32);
    }
    assert_eq!(bar0.ib_puts.borrow().len(), submits);
    drop(ch);
});
