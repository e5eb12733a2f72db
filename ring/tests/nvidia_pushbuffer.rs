//! nVidia pushbuffers (nvidia-hardware-envytools §2.8): words the writer produces against
//! words encoded by hand from the §2.8.3 bit layouts (`000CCCCCCCCCCC00SSSMMMMMMMMMMM00`, the
//! jump/call/return forms, the IB entry's two words); the IB-mode channel's back-pressure,
//! one `IB_PUT` write per batch, `NOT_MAIN` entries and hostile `IB_GET` values; 10,000 methods
//! through both modes with wrap-around, consumed by a pusher written here from §2.8.3 that
//! decodes what it reads through the document-checked tables.

#[path = "common/mod.rs"]
mod common;

use core::cell::{Cell, RefCell};
use core::time::Duration;

use baregpu_hal::dma::{BusAddress, DmaRegion};
use baregpu_hal::time::Clock;
use baregpu_hal::{BlockIo, RegisterIo, RegisterIoExt};
use baregpu_regs::nvidia::packets::{self as pb, COMMANDS, METHODS};
use baregpu_regs::nvidia::pfifo_user::{self, UserG80};
use baregpu_regs::pushbuffer::{PusherMode, decode_pushbuffer, find_command};
use baregpu_ring::nvidia::{
    DmaRing, DmaSink, IbChannel, IbSubmitError, PushbufferError, PushbufferWriter, Segment,
};
use baregpu_ring::ring::{BadReadPointer, CommandRing, RegisterRptr};
use baregpu_ring::stream::{NoSpace, SliceSink};
use common::{dwords, region};

/// `top` in bits 31:29, count 28:18, subchannel 15:13, method address 12:2 (§2.8.3).
const fn header(top: u32, subc: u32, method: u32, count: u32) -> u32 {
    top << 29 | count << 18 | subc << 13 | method
}

fn write(mode: PusherMode, f: impl FnOnce(&mut PushbufferWriter<SliceSink<'_>>)) -> Vec<u32> {
    let mut buf = [0u32; 64];
    let mut w = PushbufferWriter::new(SliceSink::new(&mut buf), mode);
    f(&mut w);
    w.sink().written().to_vec()
}

#[test]
fn method_headers_are_the_documents_bits() {
    let words = write(PusherMode::Ib, |w| {
        w.methods(5, 0x50, &[1, 2, 3]).unwrap();
        w.methods_non_increasing(7, 0x1ffc, &[9]).unwrap();
        w.methods_long(2, 0x18, &[4, 4]).unwrap();
    });
    assert_eq!(
        words,
        [
            0x000c_a050, // 000 00000000011 00 101 00000010100 00
            1,
            2,
            3,
            0x4004_fffc, // 010 00000000001 00 111 11111111111 00
            9,
            0x0003_4018, // 0000000000000011 010 00000000110 00, count in the next word
            2,
            4,
            4,
        ]
    );
    assert_eq!(words[0], header(0, 5, 0x50, 3));
    assert_eq!(words[4], header(2, 7, 0x1ffc, 1));
}

#[test]
fn puller_methods_and_control_flow_are_the_documents_words() {
    let words = write(PusherMode::Dma, |w| {
        w.ref_cnt(7).unwrap();
        w.bind_object(2, 0xbeef).unwrap();
        w.dma_semaphore(0xd00d).unwrap();
        w.semaphore_release(BusAddress(0x12_3456_7890), 5).unwrap();
        w.semaphore_acquire_geq(BusAddress(0x100), 6).unwrap();
        w.jump(0x1000).unwrap();
        w.call(0x2000).unwrap();
        w.ret().unwrap();
    });
    assert_eq!(
        words,
        [
            header(0, 0, 0x50, 1), // REF_CNT
            7,
            header(0, 2, 0x00, 1), // OBJECT on subchannel 2
            0xbeef,
            header(0, 0, 0x60, 1), // DMA_SEMAPHORE
            0xd00d,
            header(0, 0, 0x10, 4), // address high, low, sequence, trigger
            0x12,
            0x3456_7890,
            5,
            2, // WRITE_LONG
            header(0, 0, 0x10, 4),
            0,
            0x100,
            6,
            4,           // ACQUIRE_GEQUAL
            0x0000_1001, // jump: J..J 01
            0x0000_2002, // call: J..J 10
            0x0002_0000, // return
        ]
    );
}

#[test]
fn bad_commands_are_typed_errors_and_write_nothing() {
    let mut buf = [0u32; 4];
    let mut w = PushbufferWriter::new(SliceSink::new(&mut buf), PusherMode::Ib);
    let big = vec![0u32; 2048];
    assert_eq!(w.methods(0, 0x104, &[]), Err(PushbufferError::BadCount { count: 0, max: 2047 }));
    assert_eq!(
        w.methods(0, 0x104, &big),
        Err(PushbufferError::BadCount { count: 2048, max: 2047 })
    );
    assert_eq!(w.methods(8, 0x104, &[1]), Err(PushbufferError::BadSubchannel { subchannel: 8 }));
    assert!(matches!(w.methods(0, 0x2000, &[1]), Err(PushbufferError::BadMethod(_))));
    assert!(matches!(w.methods(0, 0x106, &[1]), Err(PushbufferError::BadMethod(_))));
    assert!(matches!(
        w.jump(0),
        Err(PushbufferError::WrongMode { command: "JUMP", mode: PusherMode::Ib })
    ));
    assert!(matches!(w.semaphore_release(BusAddress(0x1002), 1), Err(PushbufferError::Address(_))));
    assert!(matches!(
        w.semaphore_release(BusAddress(1 << 40), 1),
        Err(PushbufferError::Address(_))
    ));
    // Five words do not fit four: nothing of the semaphore is written.
    assert!(matches!(
        w.semaphore_release(BusAddress(0x1000), 1),
        Err(PushbufferError::NoSpace(NoSpace { needed: 5, free: 4 }))
    ));
    assert!(w.sink().is_empty());
    let mut dma = PushbufferWriter::new(SliceSink::new(&mut buf), PusherMode::Dma);
    assert!(matches!(dma.methods_long(0, 0x104, &[1]), Err(PushbufferError::WrongMode { .. })));
    assert!(matches!(dma.jump(0x1002), Err(PushbufferError::Address(_))));
    assert!(dma.sink().is_empty());
}

#[test]
fn written_streams_decode_through_the_tables() {
    let words = write(PusherMode::Ib, |w| {
        w.ref_cnt(3).unwrap();
        w.semaphore_acquire(BusAddress(0x40), 3).unwrap();
        w.methods_long(1, 0x200, &[7; 3]).unwrap();
    });
    let text = decode_pushbuffer(COMMANDS, METHODS, &words).to_string();
    for want in [
        "REF_CNT VALUE=0x3",
        "SEMAPHORE_ADDRESS_LOW ADDRESS_LOW=0x40",
        "SEMAPHORE_TRIGGER OPERATION=ACQUIRE_EQUAL",
        "LONG_NON_INCREASING_METHODS [IB mode] SUBCHANNEL=0x1 x3",
        "mthd 0x0200 = 0x7",
    ] {
        assert!(text.contains(want), "{want:?} not in\n{text}");
    }
    let cmd = find_command(COMMANDS, words[0], Some(PusherMode::Ib)).unwrap();
    assert_eq!(cmd.name, "INCREASING_METHODS");
    assert_eq!(cmd.field("METHOD").unwrap().get(&words) << 2, 0x50);
}

const CHANNEL: usize = 5;
const USER: usize = 0xc0_0000 + CHANNEL * 0x2000;
const DMA_PUT: usize = USER + 0x40;
const DMA_GET: usize = USER + 0x44;
const DMA_MGET: usize = USER + 0x58;
const IB_GET: usize = USER + 0x88;
const IB_PUT: usize = USER + 0x8c;

/// BAR0 with one channel's USER block (§2.8.3 channel control area): GETs read from cells,
/// writes recorded.
#[derive(Default)]
struct Bar0 {
    writes: RefCell<Vec<(usize, u32)>>,
    ib_get: Cell<u32>,
    dma_get: Cell<u32>,
    mget: Cell<u32>,
    ib_get_reads: Cell<u32>,
}

impl RegisterIo for Bar0 {
    fn read32(&self, offset: usize) -> u32 {
        match offset {
            IB_GET => {
                self.ib_get_reads.set(self.ib_get_reads.get() + 1);
                self.ib_get.get()
            }
            DMA_GET => self.dma_get.get(),
            DMA_MGET => self.mget.get(),
            _ => panic!("unexpected read at {offset:#x}"),
        }
    }
    fn write32(&self, offset: usize, value: u32) {
        self.writes.borrow_mut().push((offset, value));
    }
}

type User<'a> = BlockIo<&'a Bar0, pfifo_user::Block>;

const MAIN_BUS: u64 = 0x10_0000;
const IB_BUS: u64 = 0x20_0000;

fn channel(
    bar0: &Bar0,
    main_words: usize,
    ib_entries: usize,
) -> IbChannel<DmaRegion, DmaRegion, User<'_>> {
    let user = bar0.at_index::<UserG80>(CHANNEL).unwrap();
    IbChannel::new(region(main_words, MAIN_BUS), region(ib_entries * 2, IB_BUS), user).unwrap()
}

/// A pusher (§2.8.3 pseudocode, IB mode, no faults) over the test's memory: reads entries
/// from `ib_get` to `IB_PUT`, each segment word by word, and decodes commands through the
/// tables, collecting (subchannel, method, data).
struct Pusher {
    ib_get: u32,
    mcnt: u32,
    method: u32,
    subc: u32,
    ni: bool,
    lenp: bool,
    seen: Vec<(u32, u32, u32)>,
}

impl Pusher {
    fn new() -> Self {
        Pusher { ib_get: 0, mcnt: 0, method: 0, subc: 0, ni: false, lenp: false, seen: Vec::new() }
    }

    fn word(&mut self, word: u32, mode: PusherMode) -> Option<u32> {
        if self.lenp {
            self.lenp = false;
            self.mcnt = pb::long_non_increasing_methods::COUNT.get(&[0, word]);
        } else if self.mcnt > 0 {
            self.seen.push((self.subc, self.method, word));
            if !self.ni {
                self.method += 4;
            }
            self.mcnt -= 1;
        } else {
            let cmd = find_command(COMMANDS, word, Some(mode)).expect("INVALID_CMD");
            if let Some(target) = cmd.field("TARGET") {
                return Some(target.get(&[word]) << 2);
            }
            let w = [word];
            self.method = cmd.field("METHOD").unwrap().get(&w) << 2;
            self.subc = cmd.field("SUBCHANNEL").unwrap().get(&w);
            self.ni = cmd.non_increasing;
            if cmd.words == 2 {
                self.lenp = true;
            } else {
                self.mcnt = cmd.field("COUNT").unwrap().get(&w);
            }
        }
        None
    }

    /// Consume every entry up to IB_PUT; sets IB_GET and DMA_MGET.
    fn run_ib(&mut self, bar0: &Bar0, main: &DmaRegion, ib: &DmaRegion) {
        let put = bar0.writes.borrow().iter().rev().find(|w| w.0 == IB_PUT).map_or(0, |w| w.1);
        let entries = (ib.size() / 8) as u32;
        while self.ib_get != put {
            let e = [
                ib.read_u32(self.ib_get as usize * 8).unwrap(),
                ib.read_u32(self.ib_get as usize * 8 + 4).unwrap(),
            ];
            self.ib_get = (self.ib_get + 1) % entries;
            let address = baregpu_regs::pushbuffer::get_address(pb::ib_entry::FIELDS, &e).0;
            let size = pb::ib_entry::SIZE.get(&e);
            let not_main = pb::ib_entry::NOT_MAIN.get(&e) != 0;
            assert!(size > 0, "IB_EMPTY");
            if not_main {
                continue;
            }
            let start = (address - MAIN_BUS) as usize;
            for i in 0..size as usize {
                let word =
                    main.read_u32(start + 4 * i).expect("segment inside the main pushbuffer");
                assert!(self.word(word, PusherMode::Ib).is_none());
                bar0.mget.set((MAIN_BUS as usize + start + 4 * i + 4) as u32);
            }
        }
        bar0.ib_get.set(self.ib_get);
    }
}

fn ib_puts(bar0: &Bar0) -> usize {
    bar0.writes.borrow().iter().filter(|w| w.0 == IB_PUT).count()
}

#[test]
fn a_batch_is_one_entry_and_one_ib_put_write() {
    let bar0 = Bar0::default();
    let mut ch = channel(&bar0, 64, 8);
    ch.writer().ref_cnt(1).unwrap();
    ch.writer().methods(1, 0x104, &[2, 3]).unwrap();
    assert_eq!(ch.submit(), Ok(1));
    assert_eq!(*bar0.writes.borrow(), [(IB_PUT, 1)], "one IB_PUT write, entry index 1");
    // Word 0: address bits 31:2; word 1: bits 39:32 | NOT_MAIN 9 | SIZE (5 words) << 10.
    let ib = dwords(ch.ib().buffer());
    assert_eq!(&ib[..2], &[MAIN_BUS as u32, 5 << 10]);
    assert_eq!(ch.doorbells(), 1);
    assert_eq!(ch.submit(), Ok(0), "an empty batch writes nothing");
    assert_eq!(ib_puts(&bar0), 1);
    assert_eq!(bar0.ib_get_reads.get(), 0, "the cached free space sufficed");
}

#[test]
fn not_main_segments_follow_the_main_words_in_order() {
    let bar0 = Bar0::default();
    let mut ch = channel(&bar0, 64, 8);
    ch.writer().ref_cnt(1).unwrap();
    let ext = Segment { address: BusAddress(0x12_3000_0040), words: 4, not_main: true };
    ch.push_external(ext).unwrap();
    ch.writer().ref_cnt(2).unwrap();
    assert_eq!(ch.submit(), Ok(3));
    let ib = dwords(ch.ib().buffer());
    assert_eq!(
        &ib[..6],
        &[
            MAIN_BUS as u32,
            2 << 10,
            0x3000_0040,
            0x12 | 1 << 9 | 4 << 10,
            MAIN_BUS as u32 + 8,
            2 << 10
        ]
    );
    assert_eq!(ib_puts(&bar0), 1);
    // A batch never outgrows the IB ring (7 entries) and keeps room for its main runs: 5
    // external segments, then no more; the batch waits for room and goes out whole.
    for _ in 0..5 {
        ch.push_external(ext).unwrap();
    }
    assert_eq!(ch.push_external(ext), Err(IbSubmitError::TooLarge { needed: 8, capacity: 7 }));
    ch.writer().ref_cnt(3).unwrap();
    assert_eq!(ch.submit(), Err(IbSubmitError::Full { needed: 6, free: 4 }));
    bar0.ib_get.set(3);
    assert_eq!(ch.submit(), Ok(6));
    assert_eq!(ib_puts(&bar0), 2);
    assert!(matches!(
        ch.push_external(Segment { words: 0, ..ext }),
        Err(IbSubmitError::BadSegment { words: 0 })
    ));
    assert!(matches!(
        ch.push_external(Segment { address: BusAddress(0x1002), ..ext }),
        Err(IbSubmitError::Address(_))
    ));
}

#[test]
fn a_full_ib_ring_is_an_error_and_overwrites_nothing() {
    let bar0 = Bar0::default();
    let mut ch = channel(&bar0, 256, 4); // 3 usable entries
    for i in 0..3 {
        ch.writer().ref_cnt(i).unwrap();
        ch.submit().unwrap();
    }
    let before = dwords(ch.ib().buffer());
    ch.writer().ref_cnt(9).unwrap();
    assert_eq!(ch.submit(), Err(IbSubmitError::Full { needed: 1, free: 0 }));
    assert_eq!(dwords(ch.ib().buffer()), before, "no unread entry overwritten");
    assert_eq!(ib_puts(&bar0), 3);
    // The pusher read one entry: the batch goes out, nothing of it lost.
    bar0.ib_get.set(1);
    assert_eq!(ch.submit(), Ok(1));
    let ib = dwords(ch.ib().buffer());
    assert_eq!(&ib[6..8], &[MAIN_BUS as u32 + 24, 2 << 10], "entry 3, the REF_CNT 9 words");
    assert_eq!(*bar0.writes.borrow().last().unwrap(), (IB_PUT, 0), "IB_PUT wrapped to 0");
}

#[test]
fn hostile_ib_get_values_are_typed_errors() {
    let bar0 = Bar0::default();
    let mut ch = channel(&bar0, 256, 4);
    for i in 0..3 {
        ch.writer().ref_cnt(i).unwrap();
        ch.submit().unwrap();
    }
    let before = dwords(ch.ib().buffer());
    ch.writer().ref_cnt(9).unwrap();
    // Beyond the ring (4 entries), all-ones, then backwards after a real advance.
    for bogus in [4, 100, u32::MAX] {
        bar0.ib_get.set(bogus);
        assert!(
            matches!(ch.submit(), Err(IbSubmitError::BadIbGet(BadReadPointer { cached: 0, .. }))),
            "IB_GET {bogus}"
        );
    }
    bar0.ib_get.set(2);
    assert_eq!(ch.refresh_ib_get(), Ok(2));
    bar0.ib_get.set(1);
    assert!(matches!(
        ch.refresh_ib_get(),
        Err(IbSubmitError::BadIbGet(BadReadPointer { rptr: 2, cached: 4, .. }))
    ));
    assert_eq!(dwords(ch.ib().buffer()), before);
    assert_eq!(ib_puts(&bar0), 3);
}

struct StuckClock(Cell<u64>);
impl Clock for StuckClock {
    fn now_ns(&self) -> u64 {
        self.0.set(self.0.get() + 1_000_000);
        self.0.get()
    }
}

#[test]
fn waiting_on_a_stalled_pusher_is_bounded() {
    let bar0 = Bar0::default();
    let mut ch = channel(&bar0, 256, 2); // one usable entry
    ch.writer().ref_cnt(1).unwrap();
    ch.submit().unwrap();
    ch.writer().ref_cnt(2).unwrap();
    let clock = StuckClock(Cell::new(0));
    assert!(matches!(
        ch.submit_blocking(&clock, Duration::from_millis(10)),
        Err(IbSubmitError::TimedOut(_))
    ));
    assert_eq!(ch.ib_waits(), 1, "the batch waited for IB_GET");
    bar0.ib_get.set(1);
    assert_eq!(ch.submit_blocking(&clock, Duration::from_millis(10)), Ok(1));
    assert_eq!(ch.ib_waits(), 1, "room at once: no wait");
}

#[test]
fn ten_thousand_methods_wrap_both_ib_mode_rings() {
    let bar0 = Bar0::default();
    let mut ch = channel(&bar0, 64, 8);
    let mut pusher = Pusher::new();
    let mut submits = 0;
    let mut i = 0u32;
    while i < 10_000 {
        // Up to three methods per batch: a REF_CNT or an engine method, alternating.
        let mut wrote = 0;
        while wrote < 3 && i < 10_000 {
            let r = if i.is_multiple_of(2) {
                ch.writer().ref_cnt(i)
            } else {
                ch.writer().methods(3, 0x104, &[i])
            };
            match r {
                Ok(()) => {
                    i += 1;
                    wrote += 1;
                }
                Err(PushbufferError::NoSpace(_)) => break,
                Err(e) => panic!("{e}"),
            }
        }
        match ch.submit() {
            Ok(n) if n > 0 => submits += 1,
            Ok(_) | Err(IbSubmitError::Full { .. }) => {}
            Err(e) => panic!("{e}"),
        }
        pusher.run_ib(&bar0, ch.main().buffer(), ch.ib().buffer());
    }
    while ch.submit() != Ok(0) {
        submits += 1;
        pusher.run_ib(&bar0, ch.main().buffer(), ch.ib().buffer());
    }
    assert_eq!(pusher.seen.len(), 10_000);
    for (k, &(subc, method, data)) in pusher.seen.iter().enumerate() {
        let want = if k.is_multiple_of(2) { (0, 0x50, k as u32) } else { (3, 0x104, k as u32) };
        assert_eq!((subc, method, data), want, "method {k}");
    }
    assert_eq!(ib_puts(&bar0), submits, "one IB_PUT write per batch");
    assert!(submits > 3000, "{submits} batches");
}

#[test]
fn ten_thousand_methods_wrap_a_dma_mode_pushbuffer_by_jumps() {
    let bar0 = Bar0::default();
    let user = bar0.at_index::<UserG80>(CHANNEL).unwrap();
    let mut ring: DmaRing<DmaRegion, User<'_>> =
        CommandRing::with_read_pointer(region(64, 0x40_0000), RegisterRptr::new(user)).unwrap();
    let mut pusher = Pusher::new();
    let (mut get, mut jumps) = (0u32, 0u64);
    let mut i = 0u32;
    while i < 10_000 {
        let mut sink = DmaSink::new(&mut ring);
        let mut w = PushbufferWriter::new(&mut sink, PusherMode::Dma);
        match w.methods_non_increasing(1, 0x200 + 4 * (i % 7) as u16, &[i]) {
            Ok(()) => i += 1,
            Err(PushbufferError::NoSpace(_)) => {}
            Err(e) => panic!("{e}"),
        }
        jumps += sink.jumps();
        ring.kick(&user);
        // The pusher reads from DMA_GET to DMA_PUT, following jumps (§2.8.3 NV4-style mode).
        let put = bar0.writes.borrow().last().unwrap().1;
        assert_eq!(bar0.writes.borrow().last().unwrap().0, DMA_PUT);
        while get != put {
            let word = ring.buffer().read_u32(get as usize).expect("DMA_GET inside the ring");
            get = match pusher.word(word, PusherMode::Dma) {
                Some(target) => target,
                None => get + 4,
            };
        }
        bar0.dma_get.set(get);
    }
    assert_eq!(pusher.seen.len(), 10_000);
    for (k, &(subc, method, data)) in pusher.seen.iter().enumerate() {
        assert_eq!((subc, method, data), (1, 0x200 + 4 * (k as u32 % 7), k as u32));
    }
    // 20,000 words through a 64-word ring: over 300 times round, each by a jump.
    assert!(jumps > 300, "the ring wrapped by jumps ({jumps})");
}
