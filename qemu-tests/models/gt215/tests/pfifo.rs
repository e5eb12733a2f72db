//! PFIFO (nvidia-hardware-envytools §2.8): channels, the DMA pusher in DMA and IB modes, method
//! headers, DMA_PUSHER errors and recovery, REF_CNT, semaphores across channels, PCOPY's
//! method FIFO.
//!
//! Command words are written by hand from the §2.8.3 forms: increasing methods
//! `000CCCCCCCCCCC00SSSMMMMMMMMMMM00` (count 28:18, subchannel 15:13, method 12:2),
//! non-increasing `010...`, long non-increasing `0000000000000011SSSMMMMMMMMMMM00` + count word,
//! jump `J..J01`, call `J..J10`, return `0x00020000`; IB entries word 0 = address 31:2, word 1 =
//! address 39:32 | NOT_MAIN bit 9 | size in words << 10.

mod common;

use baregpu_hal::RegisterIo;
use baregpu_hal::dma::{DmaAllocator, DmaLayout};
use baregpu_regs::nvidia::{pfifo as p, pmc};
use common::*;
use gpu_device_model::{InProcess, Pacing};
use gt215_model::Faults;
use gt215_model::pfifo::{ChannelError, pusher_error, semaphore_error};

const PFIFO_INTR: usize = 0x2100;
const PFIFO_INTR_EN: usize = 0x2140;
const CHAN_TABLE: usize = 0x2600;
const PUSH0: usize = 0x3200;
const PUSH1: usize = 0x3204;
const DMA_STATE: usize = 0x3228;
const CACHE1_DMA_PUT: usize = 0x3240;
const CACHE1_DMA_GET: usize = 0x3244;
const PULL0: usize = 0x3250;
/// Channel control areas (§2.8.3: "0xc00000 + 0x2000 * channel ID").
const USER: usize = 0xc0_0000;
const USER_DMA_PUT: usize = 0x40;
const USER_DMA_GET: usize = 0x44;
const USER_REF: usize = 0x48;
const USER_IB_GET: usize = 0x88;
const USER_IB_PUT: usize = 0x8c;

/// RAMFC offsets (envytools rnndb G80_RAMFC).
const RAMFC_DMA_PUT: u64 = 0x08;
const RAMFC_DMA_GET: u64 = 0x10;
const RAMFC_DMA_FETCH: u64 = 0x3c;
const RAMFC_DMA_INSTANCE: u64 = 0x48;
const RAMFC_IB_ADDRESS: u64 = 0x50;
const RAMFC_IB_CONFIG: u64 = 0x54;
const RAMFC_RAMHT: u64 = 0x80;
const RAMFC_CHAN_INST: u64 = 0x98;

/// Object handles in every test channel's RAMHT.
const PCOPY_HANDLE: u32 = 0xbeef_0301;
const SEMA_HANDLE: u32 = 0xbeef_0060;

/// Method header: increasing methods (§2.8.3).
fn incr(subc: u32, mthd: u32, count: u32) -> u32 {
    count << 18 | subc << 13 | mthd
}

/// Method header: non-increasing methods.
fn nonincr(subc: u32, mthd: u32, count: u32) -> u32 {
    0x4000_0000 | incr(subc, mthd, count)
}

/// A channel's structures in VRAM: instance at `0x10000 * chid`, RAMFC at `0x200000 + 0x100 *
/// chid`, the pushbuffer DMA object (SYSRAM, base 0) at selector 0x10, the semaphore one at
/// 0x12, the PCOPY object at 0x20, a 512-entry RAMHT at instance + 0x1000.
struct Channel<'a> {
    gpu: &'a InProcess<Gt215>,
    chid: usize,
    ramfc: u64,
}

fn vram_write(gpu: &InProcess<Gt215>, address: u64, value: u32) {
    gpu.bar(1).write32(address as usize, value);
}

/// The model's RAMHT hash (its README): XOR of the handle's 9-bit pieces for 512 entries.
fn hash(handle: u32) -> u64 {
    let mut h = handle;
    let mut x = 0;
    while h != 0 {
        x ^= h & 0x1ff;
        h >>= 9;
    }
    u64::from(x)
}

impl<'a> Channel<'a> {
    /// A channel in IB mode (`ib_order` given) or DMA mode starting at `start`; the RAMFC is
    /// complete before the channel table enables it.
    fn new(gpu: &'a InProcess<Gt215>, chid: usize, ib_order: Option<u32>, ib_address: u64) -> Self {
        Self::with_start(gpu, chid, ib_order, ib_address, 0)
    }

    fn dma(gpu: &'a InProcess<Gt215>, chid: usize, start: u64) -> Self {
        Self::with_start(gpu, chid, None, 0, start)
    }

    fn with_start(
        gpu: &'a InProcess<Gt215>,
        chid: usize,
        ib_order: Option<u32>,
        ib_address: u64,
        start: u64,
    ) -> Self {
        let inst = 0x10000 * chid as u64;
        let ramfc = 0x20_0000 + 0x100 * chid as u64;
        let c = Channel { gpu, chid, ramfc };
        // DMA objects (§2.7.8): word 0 class | target << 16, word 1 limit, word 2 base.
        for (sel, class_target) in [(0x10u64, 0x2_003d), (0x12, 0x2_003d)] {
            let at = inst + (sel << 4);
            vram_write(gpu, at, class_target);
            vram_write(gpu, at + 4, 0x0100_0000); // limit: 16 MiB of guest memory
            vram_write(gpu, at + 8, 0);
            vram_write(gpu, at + 12, 0);
        }
        // RAMHT entries {handle, engine << 20 | offset >> 4}.
        let ramht = inst + 0x1000;
        vram_write(gpu, ramht + hash(PCOPY_HANDLE) * 8, PCOPY_HANDLE);
        vram_write(gpu, ramht + hash(PCOPY_HANDLE) * 8 + 4, 3 << 20 | 0x20);
        vram_write(gpu, ramht + hash(SEMA_HANDLE) * 8, SEMA_HANDLE);
        vram_write(gpu, ramht + hash(SEMA_HANDLE) * 8 + 4, 0x12);
        c.ramfc_write(RAMFC_CHAN_INST, (inst >> 12) as u32);
        c.ramfc_write(RAMFC_DMA_INSTANCE, 0x10);
        c.ramfc_write(RAMFC_RAMHT, 4 << 24 | 0x100);
        if let Some(order) = ib_order {
            c.ramfc_write(RAMFC_DMA_FETCH, 1 << 30);
            c.ramfc_write(RAMFC_IB_ADDRESS, ib_address as u32);
            c.ramfc_write(RAMFC_IB_CONFIG, order << 16 | (ib_address >> 32) as u32);
        }
        c.ramfc_write(RAMFC_DMA_GET, start as u32);
        c.ramfc_write(RAMFC_DMA_PUT, start as u32);
        // Enable: CHAN_TABLE = ENABLE | RAMFC >> 8.
        gpu.write32(CHAN_TABLE + 4 * chid, 1 << 31 | (ramfc >> 8) as u32);
        c
    }

    fn ramfc_write(&self, offset: u64, value: u32) {
        vram_write(self.gpu, self.ramfc + offset, value);
    }

    fn user(&self, offset: usize) -> usize {
        USER + 0x2000 * self.chid + offset
    }

    fn dma_put(&self, put: u64) {
        self.gpu.write32(self.user(USER_DMA_PUT), put as u32);
    }

    fn reference(&self) -> u32 {
        self.gpu.read32(self.user(USER_REF))
    }
}

/// A GT215 with PFIFO and PCOPY enabled, the pusher and puller on, PFIFO interrupts enabled.
fn pfifo_gpu(pacing: Pacing) -> InProcess<Gt215> {
    let gpu = gpu_with(Some(pacing));
    gpu.write32(0x200, pmc::ENABLE::PFIFO.set(pmc::ENABLE::PCOPY_PDAEMON.set(0, 1), 1));
    // PCOPY takes methods (FIFO_ENABLE bit 1, envytools rnndb ACCESS_EN).
    Falcon::new(&gpu, Engine::Pcopy).write(0x48, 2);
    gpu.write32(PUSH0, 1);
    gpu.write32(PULL0, 1);
    gpu.write32(PFIFO_INTR_EN, u32::MAX);
    gpu.write32(0x640, 1 << 8); // PMC INTR_MASK: PFIFO
    gpu
}

fn buffer(gpu: &InProcess<Gt215>, bytes: usize) -> u64 {
    gpu.allocate(DmaLayout::new(bytes, 0x1000).unwrap()).unwrap().bus_address().0
}

fn write_words(gpu: &InProcess<Gt215>, at: u64, words: &[u32]) {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    gpu.write_memory(at, &bytes).unwrap();
}

/// Pop every method in PCOPY's FIFO through the host window: (FIFO_CMD, FIFO_DATA).
fn drain_pcopy(gpu: &InProcess<Gt215>) -> Vec<(u32, u32)> {
    let pcopy = Falcon::new(gpu, Engine::Pcopy);
    let mut out = vec![];
    while pcopy.read(0x70) != 0 {
        out.push((pcopy.read(0x68), pcopy.read(0x64)));
        pcopy.write(0x74, 1);
    }
    out
}

fn settle(gpu: &InProcess<Gt215>, polls: u32) {
    for _ in 0..polls {
        gpu.poll();
    }
}

#[test]
fn dma_mode_delivers_pcopy_methods_in_order_and_ref_cnt_waits_for_the_engine() {
    let gpu = pfifo_gpu(Pacing::RunToIdle);
    let pb = buffer(&gpu, 0x1000);
    let ch = Channel::dma(&gpu, 1, pb);
    let words = [
        incr(2, 0x000, 1),
        PCOPY_HANDLE, // OBJECT: bind PCOPY on subchannel 2
        incr(2, 0x300, 3),
        0xa,
        0xb,
        0xc, // 0x300, 0x304, 0x308
        nonincr(2, 0x400, 2),
        0xd,
        0xe, // 0x400 twice
        incr(0, 0x050, 1),
        7, // REF_CNT 7
    ];
    write_words(&gpu, pb, &words);
    ch.dma_put(pb + 4 * words.len() as u64);
    settle(&gpu, 10);
    assert_eq!(gpu.read32(ch.user(USER_DMA_GET)), (pb + 44) as u32, "all words fetched");
    assert_eq!(ch.reference(), 0, "REF_CNT waits until PCOPY took every method");
    // FIFO_CMD (envytools rnndb): method >> 2 in bits 10:0, subchannel in 13:11.
    let sub2 = 2 << 11;
    assert_eq!(
        drain_pcopy(&gpu),
        vec![
            (sub2, 0x20), // OBJECT: the object's instance offset >> 4 from RAMHT
            (sub2 | 0x300 >> 2, 0xa),
            (sub2 | 0x304 >> 2, 0xb),
            (sub2 | 0x308 >> 2, 0xc),
            (sub2 | 0x400 >> 2, 0xd),
            (sub2 | 0x400 >> 2, 0xe),
        ]
    );
    settle(&gpu, 3);
    assert_eq!(ch.reference(), 7);
    assert_eq!(gpu.read32(PFIFO_INTR), 0);
}

#[test]
fn pcopy_takes_methods_only_with_fifo_access_enabled() {
    let gpu = pfifo_gpu(Pacing::RunToIdle);
    let pcopy = Falcon::new(&gpu, Engine::Pcopy);
    pcopy.write(0x48, 0); // FIFO_ENABLE: access off
    let pb = buffer(&gpu, 0x1000);
    let ch = Channel::dma(&gpu, 1, pb);
    write_words(&gpu, pb, &[incr(2, 0, 1), PCOPY_HANDLE, incr(0, 0x50, 1), 1]);
    ch.dma_put(pb + 16);
    settle(&gpu, 20);
    assert_eq!(gpu.read32(ch.user(USER_DMA_GET)), (pb + 4) as u32, "the OBJECT word waits");
    assert_eq!(pcopy.read(0x70), 0);
    assert_eq!(gpu.read32(PFIFO_INTR), 0, "waiting is no error");
    pcopy.write(0x48, 2);
    settle(&gpu, 5);
    assert_eq!(drain_pcopy(&gpu).len(), 1);
    settle(&gpu, 5);
    assert_eq!(ch.reference(), 1);
}

#[test]
fn dma_mode_follows_jumps_calls_and_returns() {
    let gpu = pfifo_gpu(Pacing::RunToIdle);
    let pb = buffer(&gpu, 0x1000);
    let ch = Channel::dma(&gpu, 1, pb);
    // 0x000: call 0x100; REF 2; jump 0x200 | 0x100: REF 1; return | 0x200: REF 3
    write_words(&gpu, pb, &[(pb + 0x100) as u32 | 2, incr(0, 0x50, 1), 2, (pb + 0x200) as u32 | 1]);
    write_words(&gpu, pb + 0x100, &[incr(0, 0x50, 1), 1, 0x0002_0000]);
    write_words(&gpu, pb + 0x200, &[incr(0, 0x50, 1), 3]);
    ch.dma_put(pb + 0x208);
    settle(&gpu, 10);
    assert_eq!(ch.reference(), 3);
    assert_eq!(gpu.read32(ch.user(USER_DMA_GET)), (pb + 0x208) as u32);
    assert_eq!(gpu.read32(PFIFO_INTR), 0);
}

#[test]
fn ib_mode_fetches_entries_with_wrap_and_long_non_increasing_methods() {
    let gpu = pfifo_gpu(Pacing::RunToIdle);
    let ib = buffer(&gpu, 0x1000);
    let pb = buffer(&gpu, 0x4000);
    // 8 entries (order 3).
    let ch = Channel::new(&gpu, 3, Some(3), ib);
    assert_eq!(gpu.read32(ch.user(USER_IB_PUT)), 0);
    // Every segment: bind PCOPY, a long non-increasing method of 3 words, REF_CNT = n.
    let mut put = 0u32;
    for n in 1..=20u32 {
        let seg = pb + 0x100 * u64::from(n);
        let words = [
            incr(1, 0, 1),
            PCOPY_HANDLE,
            0x0003_0000 | 1 << 13 | 0x500,
            3,
            n,
            n,
            n,
            incr(0, 0x50, 1),
            n,
        ];
        write_words(&gpu, seg, &words);
        let entry = [seg as u32, (seg >> 32) as u32 | (words.len() as u32) << 10];
        write_words(&gpu, ib + 8 * u64::from(put), &entry);
        put = (put + 1) % 8;
        gpu.write32(ch.user(USER_IB_PUT), put);
        settle(&gpu, 5);
        let methods = drain_pcopy(&gpu);
        assert_eq!(methods.len(), 4, "OBJECT and three 0x500s");
        assert!(methods[1..].iter().all(|&m| m == (1 << 11 | 0x500 >> 2, n)), "{methods:x?}");
        settle(&gpu, 3);
        assert_eq!(ch.reference(), n);
        assert_eq!(gpu.read32(ch.user(USER_IB_GET)), put, "IB_GET wraps at 8 like IB_PUT");
    }
    // An IB_PUT past the ring is refused.
    gpu.write32(ch.user(USER_IB_PUT), 8);
    assert_eq!(gpu.read32(ch.user(USER_IB_PUT)), put);
    // DMA_PUT is not writable in IB mode (§2.8.3).
    gpu.write32(ch.user(USER_DMA_PUT), 0x1234);
    assert_ne!(gpu.read32(ch.user(USER_DMA_PUT)), 0x1234);
    assert_eq!(gpu.model().pfifo().stats().ib_entries, 20);
}

#[test]
fn dma_mget_follows_the_main_pushbuffer_only_and_high_parts_read_through_their_shadows() {
    let gpu = pfifo_gpu(Pacing::RunToIdle);
    let ib = buffer(&gpu, 0x1000);
    let (main, external) = (buffer(&gpu, 0x1000), buffer(&gpu, 0x1000));
    let ch = Channel::new(&gpu, 1, Some(2), ib);
    write_words(&gpu, main, &[incr(0, 0x50, 1), 1]);
    write_words(&gpu, external, &[incr(0, 0x50, 1), 2, incr(0, 0x50, 1), 3]);
    // Entry 0: the main pushbuffer; entry 1: NOT_MAIN (word 1 bit 9).
    write_words(&gpu, ib, &[main as u32, 2 << 10, external as u32, 4 << 10 | 1 << 9]);
    gpu.write32(ch.user(USER_IB_PUT), 2);
    settle(&gpu, 10);
    assert_eq!(ch.reference(), 3);
    assert_eq!(gpu.read32(ch.user(USER_DMA_GET)), (external + 16) as u32);
    // §2.8.3: "DMA_MGET will then contain the address of the current position in the main
    // buffer without being affected by IB entries pulling data from other pushbuffers".
    assert_eq!(gpu.read32(ch.user(0x58)), (main + 8) as u32, "DMA_MGET");
    assert_eq!(gpu.read32(ch.user(0x5c)), 1 << 31, "DMA_MGET_HIGH: bits 39:32 0, valid");
    assert_eq!(gpu.read32(ch.user(0x60)), 0, "DMA_GET_HIGH shadow");
    // DMA mode: DMA_PUT_HIGH is a write shadow taken with the next DMA_PUT write.
    let pb = buffer(&gpu, 0x1000);
    let dma = Channel::dma(&gpu, 2, pb);
    write_words(&gpu, pb, &[incr(0, 0x50, 1), 9]);
    gpu.write32(dma.user(0x4c), 0);
    dma.dma_put(pb + 8);
    settle(&gpu, 5);
    assert_eq!(dma.reference(), 9);
    assert_eq!(gpu.read32(dma.user(0x54)), (pb + 8) as u32, "DMA_CGET = DMA_GET outside a call");
}

/// Submit `words` on a fresh DMA-mode channel 1 and run; returns the GPU.
fn run_dma(words: &[u32], ib: bool) -> (InProcess<Gt215>, u64) {
    let gpu = pfifo_gpu(Pacing::RunToIdle);
    let pb = buffer(&gpu, 0x1000);
    if ib {
        let ibuf = buffer(&gpu, 0x100);
        let ch = Channel::new(&gpu, 1, Some(2), ibuf);
        write_words(&gpu, pb, words);
        write_words(&gpu, ibuf, &[pb as u32, (words.len() as u32) << 10]);
        gpu.write32(ch.user(USER_IB_PUT), 1);
    } else {
        let ch = Channel::dma(&gpu, 1, pb);
        write_words(&gpu, pb, words);
        ch.dma_put(pb + 4 * words.len() as u64);
    }
    settle(&gpu, 10);
    (gpu, pb)
}

fn pusher_error_of(gpu: &InProcess<Gt215>) -> u32 {
    p::CACHE1_DMA_STATE_G80_UNTIL_GF100::ERROR_CODE.get(gpu.read32(DMA_STATE))
}

#[test]
fn every_dma_pusher_error_is_reported_with_its_kind_and_the_channel() {
    let cases: [(&[u32], bool, u32); 6] = [
        (&[0x8000_0000], false, pusher_error::INVALID_CMD), // 100... is no form
        (&[incr(0, 0x004, 1), 0], false, pusher_error::INVALID_MTHD), // no puller method 0x4
        (&[0x0002_0000], false, pusher_error::RET_SUBR_INACTIVE),
        (&[0x0000_0002], false, pusher_error::CALL_SUBR_ACTIVE), // calls itself twice
        (&[0x0000_1001], true, pusher_error::INVALID_CMD),       // jumps do not exist in IB mode
        (&[0x0003_0000], false, pusher_error::INVALID_CMD),      // long NI is IB-only
    ];
    for (words, ib, kind) in cases {
        let (gpu, pb) = if kind == pusher_error::CALL_SUBR_ACTIVE {
            // call pb (itself): the second call finds the subroutine active.
            let gpu = pfifo_gpu(Pacing::RunToIdle);
            let pb = buffer(&gpu, 0x1000);
            let ch = Channel::dma(&gpu, 1, pb);
            write_words(&gpu, pb, &[pb as u32 | 2]);
            ch.dma_put(pb + 4);
            settle(&gpu, 10);
            (gpu, pb)
        } else {
            run_dma(words, ib)
        };
        let _ = pb;
        assert_eq!(pusher_error_of(&gpu), kind, "{words:x?}");
        let intr = p::INTR_G80_UNTIL_GF100::from_raw(gpu.read32(PFIFO_INTR));
        assert!(intr.dma_pusher(), "{words:x?}");
        assert_eq!(p::CACHE1_PUSH1_G80_UNTIL_GF100::CHID.get(gpu.read32(PUSH1)), 1);
        assert!(pmc::INTR::from_raw(gpu.read32(0x100)).pfifo(), "PMC INTR PFIFO");
        assert!(gpu.take_interrupts() >= 1, "the PCI interrupt fired");
        assert_eq!(gpu.model().pfifo().channel_error(1), Some(ChannelError::Pusher(kind)));
    }
}

#[test]
fn ib_empty_and_mem_fault_are_pusher_errors() {
    // A zero-length IB entry.
    let gpu = pfifo_gpu(Pacing::RunToIdle);
    let ibuf = buffer(&gpu, 0x100);
    let ch = Channel::new(&gpu, 1, Some(2), ibuf);
    write_words(&gpu, ibuf, &[0x1000, 0]);
    gpu.write32(ch.user(USER_IB_PUT), 1);
    settle(&gpu, 5);
    assert_eq!(pusher_error_of(&gpu), pusher_error::IB_EMPTY);
    // An IB_GET the host wrote out of range (through CACHE1): entry u32::MAX lies past the
    // DMA object's limit, a MEM_FAULT that leaves IB_GET at the entry that faulted.
    let gpu = pfifo_gpu(Pacing::RunToIdle);
    let ibuf = buffer(&gpu, 0x100);
    let ch = Channel::new(&gpu, 1, Some(2), ibuf);
    gpu.write32(PUSH1, 1);
    gpu.write32(0x3334, u32::MAX); // CACHE1_IB_GET
    settle(&gpu, 5);
    assert_eq!(pusher_error_of(&gpu), pusher_error::MEM_FAULT);
    assert_eq!(gpu.read32(ch.user(USER_IB_GET)), u32::MAX);
    // A pushbuffer past the DMA object's limit (16 MiB).
    let gpu = pfifo_gpu(Pacing::RunToIdle);
    let ch = Channel::dma(&gpu, 1, 0x0100_0000);
    ch.dma_put(0x0100_0010);
    settle(&gpu, 5);
    assert_eq!(pusher_error_of(&gpu), pusher_error::MEM_FAULT);
    // The injected bus fault on the next fetch.
    let gpu = pfifo_gpu(Pacing::RunToIdle);
    gpu.model_mut().set_faults("dma-fault".parse::<Faults>().unwrap());
    let pb = buffer(&gpu, 0x1000);
    let ch = Channel::dma(&gpu, 1, pb);
    write_words(&gpu, pb, &[incr(0, 0x50, 1), 1]);
    ch.dma_put(pb + 8);
    settle(&gpu, 5);
    assert_eq!(pusher_error_of(&gpu), pusher_error::MEM_FAULT);
    assert_eq!(gpu.error_code(), 0, "a channel error, not a device failure");
}

#[test]
fn a_pusher_error_is_recovered_by_skipping_to_put_and_clearing_the_state() {
    let (gpu, pb) = run_dma(&[0x8000_0000, incr(0, 0x50, 1), 5], false);
    assert_eq!(pusher_error_of(&gpu), pusher_error::INVALID_CMD);
    let put = gpu.read32(CACHE1_DMA_PUT);
    assert_eq!(put, (pb + 12) as u32);
    assert_eq!(gpu.read32(CACHE1_DMA_GET), (pb + 4) as u32, "stopped after the bad word");
    // nouveau's recovery: GET = PUT, DMA_STATE = 0, acknowledge the interrupt.
    gpu.write32(CACHE1_DMA_GET, put);
    gpu.write32(DMA_STATE, 0);
    gpu.write32(PFIFO_INTR, 1 << 12);
    assert_eq!(gpu.read32(PFIFO_INTR), 0);
    assert_eq!(gpu.model().pfifo().channel_error(1), None);
    // The channel runs again.
    write_words(&gpu, pb + 12, &[incr(0, 0x50, 1), 9]);
    gpu.write32(USER + 0x2000 + USER_DMA_PUT, (pb + 20) as u32);
    settle(&gpu, 5);
    assert_eq!(gpu.read32(USER + 0x2000 + USER_REF), 9);
}

/// Channel 1 binds its semaphore (puller state, §2.8.4 table: DMA_SEMAPHORE, the address, the
/// sequence 7: six words at the pushbuffer's start), then `between` does something to the
/// channel and says where its pushbuffer goes on; there a TRIGGER alone must release
/// (WRITE_LONG) through the binding made before, with no SEMAPHORE error.
fn the_semaphore_binding_survives(
    between: impl FnOnce(&InProcess<Gt215>, &Channel<'_>, u64) -> u64,
) {
    let gpu = pfifo_gpu(Pacing::RunToIdle);
    let (pb, sem) = (buffer(&gpu, 0x1000), buffer(&gpu, 0x1000));
    let ch = Channel::dma(&gpu, 1, pb);
    let words =
        [incr(0, 0x60, 1), SEMA_HANDLE, incr(0, 0x10, 3), (sem >> 32) as u32, sem as u32, 7];
    write_words(&gpu, pb, &words);
    let at = between(&gpu, &ch, pb);
    write_words(&gpu, at, &[incr(0, 0x1c, 1), 2, incr(0, 0x50, 1), 3]);
    ch.dma_put(at + 16);
    settle(&gpu, 10);
    assert_eq!(gpu.model().pfifo().channel_error(1), None, "no SEMAPHORE error");
    assert_eq!(ch.reference(), 3, "the channel ran on");
    let mut word = [0u8; 4];
    gpu.read_memory(sem, &mut word).unwrap();
    assert_eq!(u32::from_le_bytes(word), 7, "released at the address set before");
}

#[test]
fn clearing_dma_state_after_a_pusher_error_keeps_the_puller_state_the_semaphore_binding() {
    the_semaphore_binding_survives(|gpu, ch, pb| {
        write_words(gpu, pb + 24, &[0x8000_0000]);
        ch.dma_put(pb + 28);
        settle(gpu, 10);
        assert_eq!(pusher_error_of(gpu), pusher_error::INVALID_CMD);
        // Recovery: GET = PUT, DMA_STATE = 0 (pusher state only, §2.8.3), acknowledge.
        gpu.write32(CACHE1_DMA_GET, (pb + 28) as u32);
        gpu.write32(DMA_STATE, 0);
        gpu.write32(PFIFO_INTR, 1 << 12);
        pb + 28
    });
}

#[test]
fn disabling_and_enabling_a_channel_keeps_its_state_the_semaphore_binding() {
    the_semaphore_binding_survives(|gpu, ch, pb| {
        ch.dma_put(pb + 24);
        settle(gpu, 10);
        // Disable (ENABLE off, same RAMFC: unloaded to it, §2.8), then enable again.
        let entry = 1 << 31 | (ch.ramfc >> 8) as u32;
        gpu.write32(CHAN_TABLE + 4, entry & !(1 << 31));
        settle(gpu, 10);
        gpu.write32(CHAN_TABLE + 4, entry);
        pb + 24
    });
}

#[test]
fn semaphores_release_long_and_acquire_across_two_channels() {
    let gpu = pfifo_gpu(Pacing::Seeded(7));
    let sem = buffer(&gpu, 0x1000);
    let (pb1, pb2) = (buffer(&gpu, 0x1000), buffer(&gpu, 0x1000));
    let a = Channel::dma(&gpu, 1, pb1);
    let b = Channel::dma(&gpu, 2, pb2);
    // Channel 2: acquire >= 6, then REF 1.
    let acquire = [
        incr(0, 0x60, 1),
        SEMA_HANDLE,
        incr(0, 0x10, 4),
        (sem >> 32) as u32,
        sem as u32,
        6,
        4, // ADDRESS_HIGH, LOW, SEQUENCE, TRIGGER = ACQUIRE_GEQUAL
        incr(0, 0x50, 1),
        1,
    ];
    write_words(&gpu, pb2, &acquire);
    b.dma_put(pb2 + 4 * acquire.len() as u64);
    settle(&gpu, 200);
    assert_eq!(b.reference(), 0, "blocked on the semaphore");
    assert_eq!(gpu.error_code(), 0);
    // Channel 1: release (WRITE_LONG) 6.
    let release =
        [incr(0, 0x60, 1), SEMA_HANDLE, incr(0, 0x10, 4), (sem >> 32) as u32, sem as u32, 6, 2];
    write_words(&gpu, pb1, &release);
    let before = gpu.model().time_ns();
    a.dma_put(pb1 + 4 * release.len() as u64);
    for _ in 0..2000 {
        if b.reference() == 1 {
            break;
        }
        gpu.poll();
    }
    assert_eq!(b.reference(), 1, "released");
    // §2.8.4: sequence, 0, 64-bit PTIMER timestamp.
    let mut long = [0u8; 16];
    gpu.read_memory(sem, &mut long).unwrap();
    let w = |i: usize| u32::from_le_bytes(long[4 * i..4 * i + 4].try_into().unwrap());
    assert_eq!((w(0), w(1)), (6, 0));
    let stamp = u64::from(w(2)) | u64::from(w(3)) << 32;
    assert!(stamp >= before && stamp <= gpu.model().time_ns(), "{stamp} {before}");
}

#[test]
fn semaphore_misuse_raises_the_semaphore_error() {
    // An unaligned address.
    let (gpu, _) = run_dma(&[incr(0, 0x14, 1), 0x1002], false);
    assert!(p::INTR_G80_UNTIL_GF100::from_raw(gpu.read32(PFIFO_INTR)).semaphore());
    assert_eq!(
        gpu.model().pfifo().channel_error(1),
        Some(ChannelError::Semaphore(semaphore_error::ADDRESS_UNALIGNED))
    );
    // A trigger without a DMA object.
    let (gpu, _) = run_dma(&[incr(0, 0x1c, 1), 2], false);
    assert_eq!(
        gpu.model().pfifo().channel_error(1),
        Some(ChannelError::Semaphore(semaphore_error::INVALID_STATE))
    );
    // A RAMHT larger than the model takes (512 << 31 entries): the lookup fails, CACHE_ERROR.
    let gpu = pfifo_gpu(Pacing::RunToIdle);
    let pb = buffer(&gpu, 0x1000);
    let ch = Channel::dma(&gpu, 1, pb);
    ch.ramfc_write(0x80, 0xf800_0100);
    write_words(&gpu, pb, &[incr(2, 0, 1), PCOPY_HANDLE]);
    ch.dma_put(pb + 8);
    settle(&gpu, 5);
    assert_eq!(gpu.model().pfifo().channel_error(1), Some(ChannelError::Cache));
    // A method for an unbound subchannel: CACHE_ERROR.
    let (gpu, _) = run_dma(&[incr(5, 0x300, 1), 1], false);
    assert!(p::INTR_G80_UNTIL_GF100::from_raw(gpu.read32(PFIFO_INTR)).cache_error());
}

#[test]
fn the_pusher_decodes_a_bounded_number_of_words_per_tick_and_a_jump_loop_never_hangs_a_tick() {
    let gpu = pfifo_gpu(Pacing::Seeded(3));
    let pb = buffer(&gpu, 0x1000);
    let ch = Channel::dma(&gpu, 1, pb);
    // REF_CNTs then a jump back to the start: a stream that never ends.
    write_words(&gpu, pb, &[incr(0, 0x50, 1), 1, incr(0, 0x50, 1), 2, pb as u32 | 1]);
    ch.dma_put(pb + 0x800);
    settle(&gpu, 300);
    let stats = gpu.model().pfifo().stats();
    assert_eq!(stats.max_tick_words, gt215_model::pfifo::PUSHER_WORDS_PER_TICK);
    assert!(stats.words > 1000);
    assert_eq!(gpu.error_code(), 0);
    // Turning the pusher off stops it.
    gpu.write32(PUSH0, 0);
    let words = gpu.model().pfifo().stats().words;
    settle(&gpu, 50);
    assert_eq!(gpu.model().pfifo().stats().words, words);
}

#[test]
fn cp_stall_freezes_the_pusher_and_pmc_enable_resets_pfifo() {
    let gpu = pfifo_gpu(Pacing::RunToIdle);
    gpu.model_mut().set_faults("cp-stall".parse::<Faults>().unwrap());
    let pb = buffer(&gpu, 0x1000);
    let ch = Channel::dma(&gpu, 1, pb);
    write_words(&gpu, pb, &[incr(0, 0x50, 1), 4]);
    ch.dma_put(pb + 8);
    settle(&gpu, 100);
    assert_eq!(gpu.read32(ch.user(USER_DMA_GET)), pb as u32, "GET stands still");
    gpu.model_mut().set_faults(Faults::default());
    settle(&gpu, 5);
    assert_eq!(ch.reference(), 4);
    // PFIFO held in reset: registers read 0, the channel table is gone.
    gpu.write32(0x200, 0);
    gpu.write32(0x200, 1 << 8);
    assert_eq!(gpu.read32(CHAN_TABLE + 4), 0);
    assert_eq!(gpu.read32(PUSH0), 0);
}

#[test]
fn a_falcon_program_consumes_pcopy_methods_from_its_fifo() {
    falcon_consumes_methods(Pacing::Seeded(11));
}

#[test]
fn results_do_not_depend_on_the_pacing() {
    for pacing in pacings() {
        falcon_consumes_methods(pacing);
    }
}

/// The PCOPY falcon sums FIFO_DATA of 4 methods and reports it in SCRATCH1; REF_CNT follows.
fn falcon_consumes_methods(pacing: Pacing) {
    let gpu = pfifo_gpu(pacing);
    let pcopy = Falcon::new(&gpu, Engine::Pcopy);
    pcopy.run_async(&program(&[
        &[0xf0, 0x07, 0x00],       // 00 f0/7 mov $r0, 0 (sum)
        &[0xf0, 0x57, 0x04],       // 03 f0/7 mov $r5, 4 (methods left)
        &[0xf1, 0x17, 0x00, 0x1c], // 06 f1/7 mov $r1, 0x1c00 (FIFO_OCCUPIED)
        &[0xcf, 0x12, 0x00],       // 0a cx/f iord $r2, I[$r1]
        &[0xb0, 0x24, 0x00],       // 0d 30/4 b32 cmpu $r2, 0
        &[0xf4, 0x0b, 0xfa],       // 10 f4/0b bra e -6 (to 0a)
        &[0xf1, 0x17, 0x00, 0x19], // 13 f1/7 mov $r1, 0x1900 (FIFO_DATA)
        &[0xcf, 0x13, 0x00],       // 17 cx/f iord $r3, I[$r1]
        &[0xbb, 0x03, 0x00],       // 1a 3b/0 b32 add $r0, $r3
        &[0xf1, 0x17, 0x00, 0x1d], // 1d f1/7 mov $r1, 0x1d00 (FIFO_ACK)
        &[0xd0, 0x15, 0x00],       // 21 dx/0 iowr I[$r1], $r5
        &[0xb6, 0x52, 0x01],       // 24 36/2 b32 sub $r5, 1
        &[0xf4, 0x1b, 0xdf],       // 27 f4/1b bra ne -0x21 (to 06)
        &[0xf1, 0x47, 0x00, 0x11], // 2a f1/7 mov $r4, 0x1100 (SCRATCH1)
        &[0xd0, 0x40, 0x00],       // 2e dx/0 iowr I[$r4], $r0
        &[0xf8, 0x02],             // 31 f8/2 exit
    ]));
    let pb = buffer(&gpu, 0x1000);
    let ch = Channel::dma(&gpu, 1, pb);
    let words = [incr(2, 0, 1), PCOPY_HANDLE, incr(2, 0x300, 3), 100, 20, 3, incr(0, 0x50, 1), 1];
    write_words(&gpu, pb, &words);
    ch.dma_put(pb + 4 * words.len() as u64);
    assert!(pcopy.wait_halted(1_000_000), "{pacing}");
    // OBJECT's parameter (0x20) and 100 + 20 + 3.
    assert_eq!(pcopy.read(reg::SCRATCH1), 0x20 + 123, "{pacing}");
    for _ in 0..100_000 {
        if ch.reference() == 1 {
            break;
        }
        gpu.poll();
    }
    assert_eq!(ch.reference(), 1, "REF_CNT after PCOPY took everything ({pacing})");
}
