//! The ring of an nVidia DMA-mode channel (`nvidia::Pushbuffer`, envytools §2.8.3): the
//! doorbell (`DMA_PUT`) lives in a per-channel USER block, reached through a `BlockIo` of the
//! channel's instance, and the read pointer (`DMA_GET`) is a register read, not a write-back
//! dword. The same generic ring serves it: space, back-pressure, wrap and read-pointer
//! validation (the jump back before the end is `DmaSink`'s, tested in `nvidia_pushbuffer.rs`).

#[path = "common/mod.rs"]
mod common;

use core::cell::{Cell, RefCell};

use baregpu_hal::dma::DmaRegion;
use baregpu_hal::{BlockIo, RegisterIo, RegisterIoExt};
use baregpu_regs::nvidia::pfifo_user::{self, UserG80};
use baregpu_ring::nvidia::Pushbuffer as Channel;
use baregpu_ring::pm4::{CommandSink, NoSpace};
use baregpu_ring::r5xx;
use baregpu_ring::ring::{BadReadPointer, CommandRing, RegisterRptr, RingFull};
use common::{dwords, region};

const CHANNEL: usize = 3;
/// Channel 3's USER area in BAR0: 0xc00000 + 3 * 0x2000 (envytools §2.8.3, `USER_G80`).
const USER: usize = 0xc0_0000 + CHANNEL * 0x2000;

/// BAR0 with one channel: records every access; `DMA_GET` reads `get`.
#[derive(Default)]
struct Bar0 {
    writes: RefCell<Vec<(usize, u32)>>,
    reads: Cell<usize>,
    get: Cell<u32>,
}

impl RegisterIo for Bar0 {
    fn read32(&self, offset: usize) -> u32 {
        assert_eq!(offset, USER + 0x44, "the ring reads only channel 3's DMA_GET");
        self.reads.set(self.reads.get() + 1);
        self.get.get()
    }
    fn write32(&self, offset: usize, value: u32) {
        self.writes.borrow_mut().push((offset, value));
    }
}

type ChannelRing<'a> =
    CommandRing<DmaRegion, RegisterRptr<BlockIo<&'a Bar0, pfifo_user::Block>>, Channel>;

fn channel_ring(bar0: &Bar0, words: usize) -> ChannelRing<'_> {
    let user = bar0.at_index::<UserG80>(CHANNEL).unwrap();
    CommandRing::with_read_pointer(region(words, 0x4_0000), RegisterRptr::new(user)).unwrap()
}

#[test]
fn the_doorbell_is_written_in_the_channels_user_block() {
    let bar0 = Bar0::default();
    let mut ring = channel_ring(&bar0, 16);
    ring.write_packet(0x2001_0000, &[7]).unwrap();
    ring.write_packet(0x2002_0004, &[8, 9]).unwrap();
    let user = bar0.at_index::<UserG80>(CHANNEL).unwrap();
    ring.kick(&user);
    // DMA_PUT (USER + 0x40) = byte offset of the next word: 5 words written.
    assert_eq!(*bar0.writes.borrow(), [(USER + 0x40, 20)]);
    assert_eq!(&dwords(ring.buffer())[..5], &[0x2001_0000, 7, 0x2002_0004, 8, 9]);
    assert_eq!(bar0.reads.get(), 0, "the cached free space sufficed: no DMA_GET read");
}

#[test]
fn back_pressure_reads_dma_get_and_wraps() {
    let bar0 = Bar0::default();
    let user = bar0.at_index::<UserG80>(CHANNEL).unwrap();
    let mut ring = channel_ring(&bar0, 16);
    for i in 0..5 {
        ring.write_packet(i, &[i, i]).unwrap();
    }
    ring.kick(&user);
    // 15 of 15 words used: the next packet reads DMA_GET, which has not moved.
    assert_eq!(ring.write_packet(9, &[9]), Err(RingFull { needed: 2, free: 0 }));
    assert_eq!(bar0.reads.get(), 1);
    // The channel fetched 12 words (GET = 48 bytes): the packet fits, straddling the end.
    bar0.get.set(48);
    ring.write_packet(0xA, &[0xB, 0xC]).unwrap();
    assert_eq!((bar0.reads.get(), ring.cached_rptr(), ring.head()), (2, 12, 2));
    let mem = dwords(ring.buffer());
    assert_eq!((mem[15], mem[0], mem[1]), (0xA, 0xB, 0xC), "wrapped to word 0");
    ring.kick(&user);
    assert_eq!(bar0.writes.borrow()[1], (USER + 0x40, 8), "PUT wrapped to byte 8");
}

#[test]
fn a_get_the_channel_cannot_have_reached_is_ignored() {
    let bar0 = Bar0::default();
    let user = bar0.at_index::<UserG80>(CHANNEL).unwrap();
    let mut ring = channel_ring(&bar0, 16);
    ring.write_packet(1, &[2, 3]).unwrap();
    ring.kick(&user);
    // GET past PUT (word 5 of 3 committed), then all-ones (a channel that fell off the bus:
    // not a word offset, so outside the ring).
    for (bogus, rptr) in [(20, 5), (u32::MAX, u32::MAX)] {
        bar0.get.set(bogus);
        let err = ring.refresh_rptr().unwrap_err();
        assert_eq!(err, BadReadPointer { rptr, cached: 0, committed: 3 });
        assert_eq!(ring.cached_rptr(), 0);
    }
    assert_eq!(ring.free_units(), 12, "nothing the channel has not fetched is freed");
    assert_eq!(ring.write_packet(0, &[0; 12]), Err(NoSpace { needed: 13, free: 12 }));
}

/// An AMD ring may take the same policy: R5xx CP_RB_RPTR (§11.1) read through the register
/// window instead of the write-back dword.
#[test]
fn an_r5xx_ring_may_poll_cp_rb_rptr() {
    struct Cp(Cell<u32>);
    impl RegisterIo for Cp {
        fn read32(&self, offset: usize) -> u32 {
            assert_eq!(offset, 0x710, "CP_RB_RPTR");
            self.0.get()
        }
        fn write32(&self, _: usize, _: u32) {}
    }
    let cp = Cp(Cell::new(0));
    let mut ring: CommandRing<DmaRegion, RegisterRptr<&Cp>, r5xx::Family> =
        CommandRing::with_read_pointer(region(8, 0x1000), RegisterRptr::new(&cp)).unwrap();
    ring.write_packet(0, &[0; 6]).unwrap();
    ring.kick(&cp);
    cp.0.set(5);
    assert_eq!(ring.refresh_rptr(), Ok(5));
    assert_eq!(ring.free_units(), 7 - 2);
}
