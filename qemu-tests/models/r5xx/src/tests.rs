//! Tests written from the document: each cites the section it checks. PM4 dwords are built by
//! hand with the bit layouts of §6.1 (no encoder crate).
//!
//! The document's semantics are checked run to idle (`Bench`: the state after the engines
//! settled); how work spreads over ticks is checked tick by tick (`Stepper`).

use super::*;
use baregpu_hal::RegisterIo;
use gpu_device_model::{Device, InProcess, InProcessOptions, Pacing, VecMemory};
use gpu_mailbox::{ModelState, Op, Status};

const RING: u32 = 0x10_0000;
const RPTR_COPY: u32 = 0x8000;
const SCRATCH_COPY: u32 = 0x9000;
const IB1_AT: u32 = 0x20_0000;
const IB2_AT: u32 = 0x30_0000;
const SENTINEL: u32 = 0xFFFF_FFFF;

// --- PM4 by hand (§6.1) -------------------------------------------------------------------

/// Type-0 header (§6.1.1): TYPE 0 in bits 31:30, COUNT = N-1 in 29:16, ONE_REG_WR in bit 15,
/// BASE_INDEX = byte offset >> 2 in 12:0.
fn type0(reg: u32, n: u32, one_reg_wr: bool) -> u32 {
    ((n - 1) << 16) | (u32::from(one_reg_wr) << 15) | ((reg >> 2) & 0x1FFF)
}

/// Type-1 header (§6.1.2): TYPE 1 in 31:30, REG_INDEX2 in 21:11, REG_INDEX1 in 10:0 (dword
/// indices).
fn type1(reg1: u32, reg2: u32) -> u32 {
    (1 << 30) | (((reg2 >> 2) & 0x7FF) << 11) | ((reg1 >> 2) & 0x7FF)
}

/// Type-2 filler (§6.1.3): TYPE 2 in 31:30, bits 29:0 don't care.
const TYPE2: u32 = 2 << 30;

/// Type-3 header (§6.1.4): TYPE 3 in 31:30, COUNT = N-1 in 29:16, IT_OPCODE in 15:8.
fn type3(opcode: u32, n: u32) -> u32 {
    (3 << 30) | ((n - 1) << 16) | (opcode << 8)
}

fn scratch(n: u32) -> u32 {
    SCRATCH_REG0 + 4 * n
}

/// CSQ_MODE values (§11.1 CP_CSQ_CNTL bits 31:28).
const PRIMARY_PIO: u32 = 1 << 28;
const PRIMARY_BM: u32 = 2 << 28;
const PRIMARY_BM_INDIRECT_BM: u32 = 4 << 28;
const BOTH_PIO: u32 = 15 << 28;

// --- bench ----------------------------------------------------------------------------------

struct Bench {
    gpu: InProcess<R5xxModel>,
    wptr: u32,
    ring_dwords: u32,
}

impl Bench {
    fn new() -> Bench {
        Self::with_faults(Faults::default())
    }

    fn with_faults(faults: Faults) -> Bench {
        let options =
            InProcessOptions { pacing: Some(Pacing::RunToIdle), ..InProcessOptions::default() };
        let gpu = InProcess::with_options(R5xxModel::with_faults(faults), options).unwrap();
        Bench { gpu, wptr: 0, ring_dwords: 0 }
    }

    fn wr(&self, offset: u32, value: u32) {
        self.gpu.write32(offset as usize, value);
    }

    fn rd(&self, offset: u32) -> u32 {
        self.gpu.read32(offset as usize)
    }

    fn poke(&self, address: u32, words: &[u32]) {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        self.gpu.write_memory(u64::from(address), &bytes).unwrap();
    }

    fn peek(&self, address: u32) -> u32 {
        let mut b = [0u8; 4];
        self.gpu.read_memory(u64::from(address), &mut b).unwrap();
        u32::from_le_bytes(b)
    }

    /// §5.12: ADDR = 0, then DATAH, DATAL for each entry.
    fn upload(&self, entries: &[(u32, u32)]) {
        self.wr(ME_RAM_ADDR, 0);
        for &(high, low) in entries {
            self.wr(ME_RAM_DATAH, high);
            self.wr(ME_RAM_DATAL, low);
        }
    }

    /// The real R520 microcode (a known image).
    fn load_microcode(&self) {
        self.upload(&r520_entries());
    }

    /// A pattern the ME RAM ports can be checked with: entry i = i << 32 | 0xC0DE_0000 | i. Not
    /// microcode: the CP does not run it.
    fn load_pattern(&self) {
        let pattern: Vec<(u32, u32)> = (0..256).map(|i| (i, 0xC0DE_0000 | i)).collect();
        self.upload(&pattern);
    }

    /// Ring of 2^(bufsz+1) dwords at RING, write-back to RPTR_COPY, block 2^blksz quadwords,
    /// `extra` more CP_RB_CNTL bits; then the CSQ mode.
    fn ring(&mut self, bufsz: u32, blksz: u32, extra: u32, csq_mode: u32) {
        self.poke(RPTR_COPY, &[SENTINEL]);
        self.wr(RB_CNTL, bufsz | (blksz << 8) | extra);
        self.wr(RB_BASE, RING);
        self.wr(RB_RPTR_ADDR, RPTR_COPY);
        self.wr(CSQ_CNTL, csq_mode);
        self.ring_dwords = 1 << (bufsz.clamp(2, 22) + 1);
    }

    /// The §11.1 `CP_CSQ_MODE` queue split: primary = `i1` double octwords, indirect 1 up to
    /// `i2`, indirect 2 the rest of the 0x60.
    fn split(&self, i1: u32, i2: u32) {
        self.wr(CSQ_MODE, i1 << 8 | i2);
    }

    /// Microcode + a 64-dword ring (bufsz 5), block 4 dwords, primary BM (+ indirect BM).
    fn running() -> Bench {
        let mut b = Bench::new();
        b.load_microcode();
        b.ring(5, 1, 0, PRIMARY_BM_INDIRECT_BM);
        b
    }

    /// Copy packets to the ring at WPTR (wrapping) and ring the doorbell.
    fn submit(&mut self, words: &[u32]) {
        for w in words {
            self.poke(RING + 4 * self.wptr, &[*w]);
            self.wptr = (self.wptr + 1) % self.ring_dwords;
        }
        self.wr(RB_WPTR, self.wptr);
    }

    fn error(&self) -> (ModelState, u32) {
        (self.gpu.state(), self.gpu.error_code())
    }
}

/// `radeon/R520_cp.bin` as (DATAH, DATAL) pairs: 256 entries of two big-endian dwords (the
/// layout Linux radeon r100.c loads).
fn r520_entries() -> Vec<(u32, u32)> {
    let path = "/lib/firmware/radeon/R520_cp.bin";
    let bytes = std::fs::read(path).unwrap_or_else(|e| {
        panic!("{path}: {e}; install it with `bash scripts/setup.sh` (firmware-amd-graphics)")
    });
    assert_eq!(bytes.len(), 2048);
    bytes
        .chunks_exact(8)
        .map(|e| {
            let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
            (be(&e[..4]), be(&e[4..]))
        })
        .collect()
}

/// A bare device whose engines advance only when the test ticks them (the threaded pacing
/// without its thread): requests never tick.
struct Stepper {
    dev: Device<R5xxModel>,
}

impl Stepper {
    fn new(faults: Faults) -> Stepper {
        let memory = VecMemory::new(16 << 20).unwrap();
        let mut dev = Device::new(R5xxModel::with_faults(faults), Box::new(memory)).unwrap();
        dev.set_pacing(Pacing::Threaded { ticks_per_ms: 1 });
        // Memory decoding and bus mastering.
        assert_eq!(dev.handle(Op::ConfigWrite as u32, 0, 4, 0b110).0, Status::Ok);
        Stepper { dev }
    }

    fn wr(&mut self, offset: u32, value: u32) {
        assert_eq!(self.dev.handle(Op::MmioWrite as u32, 0, offset, value).0, Status::Ok);
    }

    fn rd(&mut self, offset: u32) -> u32 {
        self.dev.handle(Op::MmioRead as u32, 0, offset, 0).1
    }

    fn tick(&mut self) -> Activity {
        self.dev.tick_engines(1)
    }

    /// Microcode, a ring of 2^(bufsz+1) dwords at RING with MAX_FETCH `max_fetch`, write-back
    /// to RPTR_COPY every 2 quadwords, primary BM; then `words` at 0 and the doorbell.
    fn ring(&mut self, bufsz: u32, max_fetch: u32, words: &[u32]) {
        self.wr(ME_RAM_ADDR, 0);
        for (high, low) in r520_entries() {
            self.wr(ME_RAM_DATAH, high);
            self.wr(ME_RAM_DATAL, low);
        }
        self.wr(RB_CNTL, bufsz | 1 << 8 | max_fetch << 18);
        self.wr(RB_BASE, RING);
        self.wr(RB_RPTR_ADDR, RPTR_COPY);
        self.wr(CSQ_CNTL, PRIMARY_BM_INDIRECT_BM);
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        self.dev.memory_mut().write(u64::from(RING), &bytes).unwrap();
        self.wr(RB_WPTR, words.len() as u32);
    }

    fn peek(&self, address: u32) -> u32 {
        let mut b = [0u8; 4];
        self.dev.memory().read(u64::from(address), &mut b).unwrap();
        u32::from_le_bytes(b)
    }
}

// --- identity and register file -------------------------------------------------------------

#[test]
fn pci_identity_is_r520_with_a_64k_register_bar() {
    // R520 1002:7100 (Linux radeon PCI IDs); BAR0 = 64 KiB of registers.
    let b = Bench::new();
    let f = baregpu_hal::pci::probe(&b.gpu, b.gpu.pci_address()).unwrap();
    assert_eq!((f.vendor, f.device, f.class), (0x1002, 0x7100, 0x03_0000));
    assert_eq!(f.memory_bar(0).map(|(_, size)| size), Some(0x1_0000));
}

#[test]
fn register_writes_are_masked_to_their_fields_and_resets_apply() {
    // §11.1 field tables through the database: CP_RB_CNTL has RB_BUFSZ 5:0, RB_BLKSZ 13:8,
    // BUF_SWAP 17:16, MAX_FETCH 19:18, RB_NO_UPDATE 27, RB_RPTR_WR_ENA 31.
    let b = Bench::new();
    b.wr(RB_CNTL, u32::MAX);
    assert_eq!(b.rd(RB_CNTL), 0x880F_3F3F);
    // CP_RB_BASE 31:2.
    b.wr(RB_BASE, 0x1234_5677);
    assert_eq!(b.rd(RB_BASE), 0x1234_5674);
    // CP_CSQ_CNTL: only CSQ_MODE 31:28.
    b.wr(CSQ_CNTL, u32::MAX);
    assert_eq!(b.rd(CSQ_CNTL), 0xF000_0000);
    // CP_ME_CNTL: reset ME_MODE = 1 (free-running); ME_STEP (31) is write-only and reads 0.
    assert_eq!(b.rd(ME_CNTL), 1 << 30);
    b.wr(ME_CNTL, 1 << 31 | 1 << 30 | 0x3 << 16);
    assert_eq!(b.rd(ME_CNTL), 1 << 30 | 0x3 << 16);
    // Read-only registers ignore writes: CP_RB_RPTR, CP_CSQ_STAT.
    b.wr(RB_RPTR, 0x55);
    b.wr(CSQ_STAT, 0x55);
    assert_eq!((b.rd(RB_RPTR), b.rd(CSQ_STAT)), (0, 0));
    // Write-only registers read 0: CP_ME_RAM_RADDR, CP_CSQ_ADDR, the apertures.
    b.wr(ME_RAM_RADDR, 7);
    assert_eq!(b.rd(ME_RAM_RADDR), 0);
    b.wr(off::<cp::CP_CSQ_ADDR>(), 0xFFC);
    assert_eq!(b.rd(off::<cp::CP_CSQ_ADDR>()), 0);
    assert_eq!(b.rd(APER_PRIMARY), 0);
    // An offset no register occupies (between CP_VP_ADDR_CNTL 0x7E8 and CP_CSQ_ADDR 0x7F0)
    // reads 0 and keeps nothing.
    assert!(b.gpu.model().regs.spec(0x7EC).is_none());
    b.wr(0x7EC, 0xABCD);
    assert_eq!(b.rd(0x7EC), 0);
    // RBBM_STATUS: idle, 64 free FIFO entries (Linux r100d.h CMDFIFO_AVAIL).
    assert_eq!(b.rd(RBBM_STATUS), RBBM_CMDFIFO_AVAIL);
}

// --- ME RAM -----------------------------------------------------------------------------------

#[test]
fn me_ram_write_path_commits_40_bits_on_datal_and_auto_increments() {
    // §5.12: ADDR, then DATAH (low 8 bits kept) then DATAL; commit + increment on DATAL.
    let b = Bench::new();
    b.wr(ME_RAM_ADDR, 0x10);
    b.wr(ME_RAM_DATAH, 0x1AB); // only bits 7:0 = 0xAB
    b.wr(ME_RAM_DATAL, 0x1111_2222);
    assert_eq!(b.rd(ME_RAM_ADDR), 0x11, "auto-incremented");
    b.wr(ME_RAM_DATAH, 0xCD);
    b.wr(ME_RAM_DATAL, 0x3333_4444);
    let m = b.gpu.model();
    assert_eq!(m.me_ram_entry(0x10), 0xAB_1111_2222);
    assert_eq!(m.me_ram_entry(0x11), 0xCD_3333_4444);
    assert_eq!(m.me_ram_entry(0x12), 0);
    drop(m);
    // The address is 8 bits: it wraps from 0xFF to 0.
    b.wr(ME_RAM_ADDR, 0xFF);
    b.wr(ME_RAM_DATAH, 1);
    b.wr(ME_RAM_DATAL, 2);
    assert_eq!(b.rd(ME_RAM_ADDR), 0);
}

#[test]
fn me_ram_read_path_loads_the_holding_register_and_auto_increments() {
    // §5.13: RADDR loads entry into the holding register and increments; DATAH then DATAL
    // read the halves; the end of the DATAL read loads the next entry and increments again.
    let b = Bench::new();
    b.load_pattern(); // entry i = i << 32 | 0xC0DE_0000 | i
    b.wr(ME_RAM_RADDR, 0x20);
    assert_eq!(b.rd(ME_RAM_ADDR), 0x21);
    assert_eq!(b.rd(ME_RAM_DATAH), 0x20);
    assert_eq!(b.rd(ME_RAM_DATAH), 0x20, "DATAH reads have no side effect");
    assert_eq!(b.rd(ME_RAM_DATAL), 0xC0DE_0020);
    assert_eq!(b.rd(ME_RAM_ADDR), 0x22);
    assert_eq!(b.rd(ME_RAM_DATAH), 0x21);
    assert_eq!(b.rd(ME_RAM_DATAL), 0xC0DE_0021);
    // A full verification pass from 0.
    b.wr(ME_RAM_RADDR, 0);
    for i in 0..256u32 {
        assert_eq!((b.rd(ME_RAM_DATAH), b.rd(ME_RAM_DATAL)), (i, 0xC0DE_0000 | i));
    }
}

// --- starting the CP --------------------------------------------------------------------------

#[test]
fn cp_does_nothing_without_microcode() {
    // §5.12: the micro-engine parses packets only once its RAM holds microcode. An upload
    // missing its last code entry (0xFB; 0xFC-0xFF are the §6.2.4.1 semaphores) is not enough.
    // The streams are off during the upload (§5.8 step 1); enabling them starts the pending
    // work.
    let mut b = Bench::new();
    b.ring(5, 1, 0, 0);
    b.submit(&[type0(scratch(0), 1, false), 0x1234]);
    b.wr(CSQ_CNTL, PRIMARY_BM);
    assert_eq!((b.rd(RB_RPTR), b.rd(scratch(0))), (0, 0), "nothing fetched");
    assert_eq!(b.peek(RPTR_COPY), SENTINEL, "no write-back either");
    b.wr(CSQ_CNTL, 0);
    let image = r520_entries();
    b.upload(&image[..0xFB]);
    b.wr(CSQ_CNTL, PRIMARY_BM);
    assert_eq!(b.rd(RB_RPTR), 0);
    assert!(!b.gpu.model().microcode_loaded());
    b.wr(CSQ_CNTL, 0);
    b.wr(ME_RAM_ADDR, 0xFB);
    b.wr(ME_RAM_DATAH, image[0xFB].0);
    b.wr(ME_RAM_DATAL, image[0xFB].1);
    assert_eq!(b.gpu.model().microcode().map(|k| k.file), Some("radeon/R520_cp.bin"));
    b.wr(CSQ_CNTL, PRIMARY_BM);
    assert_eq!((b.rd(RB_RPTR), b.rd(scratch(0))), (2, 0x1234));
}

#[test]
fn only_a_known_microcode_image_runs_pm4() {
    // The ME's instruction set is not documented: §6 is what AMD's microcode does. Images the
    // model does not know by SHA-256 leave the CP fetching nothing (and idle: no error).
    let real = r520_entries();
    let mut reversed = real.clone();
    reversed.reverse();
    let mut flipped = real.clone();
    flipped[0x40].1 ^= 1 << 7;
    let mut truncated = real[..128].to_vec();
    truncated.resize(256, (0, 0));
    let mut zero_but_last = vec![(0, 0); 256];
    zero_but_last[0xFB] = (0, 1);
    let ones = vec![(0, 1); 256];
    let cases = [
        ("reversed", reversed),
        ("one bit flipped", flipped),
        ("truncated and padded", truncated),
        ("all zero but the last entry", zero_but_last),
        ("all (0, 1)", ones),
    ];
    for (what, image) in cases {
        let mut b = Bench::new();
        b.upload(&image);
        b.ring(5, 1, 0, PRIMARY_BM);
        b.submit(&[type0(scratch(0), 1, false), 0x1234]);
        b.gpu.poll();
        assert_eq!((b.rd(RB_RPTR), b.rd(scratch(0))), (0, 0), "{what}: nothing fetched");
        assert_eq!(b.error(), (ModelState::Ready, 0), "{what}");
        assert!(b.gpu.model().microcode().is_none(), "{what}");
    }
}

#[test]
fn the_identity_is_the_sha256_of_the_rebuilt_file() {
    // The rebuilt bytes are the file: (DATAH, DATAL) as big-endian dwords per entry, the four
    // semaphore slots counted as zero (the file ships them zero).
    let real = r520_entries();
    let file = std::fs::read("/lib/firmware/radeon/R520_cp.bin").unwrap();
    let mut entries = [0u64; ME_RAM_ENTRIES];
    for (e, (high, low)) in entries.iter_mut().zip(&real) {
        *e = u64::from(*high) << 32 | u64::from(*low);
    }
    assert_eq!(microcode::image_bytes(&entries)[..], file[..]);
    assert_eq!(microcode::identify(&entries), Some(&KNOWN_IMAGES[0]));
    // Semaphores are data: the driver's values there do not change the identity.
    for slot in SEMAPHORE_SLOTS {
        entries[slot] = 0x55;
    }
    assert_eq!(microcode::identify(&entries), Some(&KNOWN_IMAGES[0]));
    entries[0xFB] ^= 1 << 39;
    assert_eq!(microcode::identify(&entries), None, "bit 39 (DATAH bit 7) is code");
}

#[test]
fn cp_needs_an_enabled_primary_stream_and_free_running_me() {
    // §11.1 CSQ_MODE 0 = primary disabled; CP_ME_CNTL.ME_MODE 0 = single-step.
    let mut b = Bench::new();
    b.load_microcode();
    b.ring(5, 1, 0, 0);
    b.wr(ME_CNTL, 0);
    b.submit(&[type0(scratch(0), 1, false), 7]);
    assert_eq!(b.rd(RB_RPTR), 0);
    b.wr(CSQ_CNTL, PRIMARY_BM);
    assert_eq!(b.rd(RB_RPTR), 0, "single-step mode: not running");
    b.wr(ME_CNTL, 1 << 30);
    assert_eq!((b.rd(RB_RPTR), b.rd(scratch(0))), (2, 7));
}

// --- ring buffer ------------------------------------------------------------------------------

#[test]
fn ring_fetch_wraps_and_empty_writes_back_the_read_pointer() {
    // §5.4: packets wrap from the end of the buffer to the start; equal pointers = empty; the
    // read pointer is written to the host copy when the queue becomes empty.
    // RB_BUFSZ 3 = 2^(3+1) = 16 dwords (§11.1).
    let mut b = Bench::new();
    b.load_microcode();
    b.ring(3, 6, 0, PRIMARY_BM);
    // 12 dwords: 6 type-0 writes of SCRATCH_REG0.
    let mut first = vec![];
    for v in 1..=6 {
        first.extend([type0(scratch(0), 1, false), v]);
    }
    b.submit(&first);
    assert_eq!((b.rd(RB_RPTR), b.peek(RPTR_COPY), b.rd(scratch(0))), (12, 12, 6));
    // 8 more: dwords 12..15 and 0..3 (wrap).
    b.submit(&[
        type0(scratch(1), 1, false),
        0xA,
        type0(scratch(2), 2, false),
        0xB,
        0xC,
        TYPE2,
        type0(scratch(0), 1, false),
        0xD,
    ]);
    assert_eq!(b.wptr, 4);
    assert_eq!(
        (b.rd(RB_RPTR), b.peek(RPTR_COPY)),
        (4, 4),
        "read pointer wrapped and was written back"
    );
    assert_eq!(
        [b.rd(scratch(0)), b.rd(scratch(1)), b.rd(scratch(2)), b.rd(scratch(3))],
        [0xD, 0xA, 0xB, 0xC]
    );
    // Equal pointers: empty; writing the same WPTR again does nothing.
    b.wr(RB_WPTR, 4);
    assert_eq!(b.rd(RB_RPTR), 4);
    assert_eq!(b.gpu.state(), ModelState::Ready);
}

/// Ring where the first packet is a WAIT_SEMAPHORE on ME RAM slot 0xFC (§6.2.4.1), so the CP
/// stops after fetching its first MAX_FETCH chunk (8 dwords, §11.1 MAX_FETCH 0) while 14 dwords
/// are queued.
fn stalled_at_rptr_8(blksz: u32, extra: u32) -> Bench {
    let mut b = Bench::new();
    b.load_microcode();
    // Semaphore slot 0xFC non-zero: the CP waits (§6.2.4.1: written via ADDR + DATAL).
    b.wr(ME_RAM_ADDR, 0xFC);
    b.wr(ME_RAM_DATAL, 1);
    b.ring(5, blksz, extra, PRIMARY_BM);
    let mut words = vec![type3(0x22, 1), 0xFC]; // WAIT_SEMAPHORE, offset 0xFC
    words.extend([TYPE2; 10]);
    words.extend([type0(scratch(0), 1, false), 0x99]);
    b.submit(&words);
    b
}

#[test]
fn read_pointer_is_written_back_every_block() {
    // §5.4 + §11.1 RB_BLKSZ: the host copy is updated every "block's-worth" of fetched data.
    // RB_BLKSZ 1 = 2 quadwords = 4 dwords: the first 8-dword fetch updates it.
    let b = stalled_at_rptr_8(1, 0);
    assert_eq!((b.rd(RB_RPTR), b.peek(RPTR_COPY)), (8, 8));
    assert_eq!(b.rd(scratch(0)), 0, "still waiting");
    assert_eq!(b.rd(RBBM_STATUS) & RBBM_GUI_ACTIVE, RBBM_GUI_ACTIVE);
    // Release the semaphore: the rest is fetched, the ring empties, the copy follows.
    b.wr(ME_RAM_ADDR, 0xFC);
    b.wr(ME_RAM_DATAL, 0);
    b.gpu.poll();
    assert_eq!((b.rd(RB_RPTR), b.peek(RPTR_COPY), b.rd(scratch(0))), (14, 14, 0x99));
    assert_eq!(b.rd(RBBM_STATUS), RBBM_CMDFIFO_AVAIL, "idle again");

    // RB_BLKSZ 4 = 16 quadwords = 32 dwords: no update before the ring is empty.
    let b = stalled_at_rptr_8(4, 0);
    assert_eq!((b.rd(RB_RPTR), b.peek(RPTR_COPY)), (8, SENTINEL));
}

#[test]
fn rb_no_update_suppresses_the_write_back() {
    // §11.1 RB_NO_UPDATE (bit 27): "Do not write to Host's copy of Read pointer".
    let b = stalled_at_rptr_8(1, 1 << 27);
    b.wr(ME_RAM_ADDR, 0xFC);
    b.wr(ME_RAM_DATAL, 0);
    b.gpu.poll();
    assert_eq!((b.rd(RB_RPTR), b.peek(RPTR_COPY)), (14, SENTINEL));
}

#[test]
fn rptr_wr_is_transferred_on_the_wptr_write_only_when_enabled() {
    // §5.8: CP_RB_RPTR_WR reaches CP_RB_RPTR on the next CP_RB_WPTR write, if RB_RPTR_WR_ENA.
    let mut b = Bench::new();
    b.ring(5, 1, 0, 0); // CP off: only the pointers move
    b.wr(RB_RPTR_WR, 20);
    b.wr(RB_WPTR, 20);
    assert_eq!(b.rd(RB_RPTR), 0, "not enabled");
    b.wr(RB_CNTL, 5 | 1 << 8 | 1 << 31);
    b.wr(RB_WPTR, 20);
    assert_eq!(b.rd(RB_RPTR), 20);
    // The CP then starts at dword 20.
    b.wr(RB_CNTL, 5 | 1 << 8);
    b.wptr = 20;
    b.load_microcode();
    b.wr(CSQ_CNTL, PRIMARY_BM);
    b.submit(&[type0(scratch(5), 1, false), 0x55]);
    assert_eq!((b.rd(RB_RPTR), b.rd(scratch(5))), (22, 0x55));
}

#[test]
fn buf_swap_applies_to_fetched_commands() {
    // §11.1 BUF_SWAP 2 = 32-bit swap (0xAABBCCDD -> 0xDDCCBBAA) for ring data.
    let mut b = Bench::new();
    b.load_microcode();
    b.ring(5, 1, 2 << 16, PRIMARY_BM);
    b.submit(&[type0(scratch(0), 1, false).swap_bytes(), 0x1122_3344u32.swap_bytes()]);
    assert_eq!(b.rd(scratch(0)), 0x1122_3344);
}

// --- PM4 ----------------------------------------------------------------------------------------

#[test]
fn type0_writes_consecutive_registers_or_one_register() {
    // §6.1.1: ONE_REG_WR 0 = N consecutive registers; 1 = all data to the same register.
    let mut b = Bench::running();
    b.wr(SCRATCH_ADDR, SCRATCH_COPY);
    b.wr(SCRATCH_UMSK, 1);
    b.submit(&[type0(scratch(1), 3, false), 0xA1, 0xA2, 0xA3]);
    assert_eq!([b.rd(scratch(1)), b.rd(scratch(2)), b.rd(scratch(3))], [0xA1, 0xA2, 0xA3]);
    let before = b.gpu.model().stats().scratch_writebacks;
    b.submit(&[type0(scratch(0), 3, true), 0xB1, 0xB2, 0xB3]);
    assert_eq!([b.rd(scratch(0)), b.rd(scratch(1))], [0xB3, 0xA1], "one register, last wins");
    assert_eq!(b.gpu.model().stats().scratch_writebacks - before, 3, "three separate writes");
    assert_eq!(b.peek(SCRATCH_COPY), 0xB3);
}

#[test]
fn type0_writes_to_register_holes_are_dropped() {
    // §6.1.1 writes "registers"; offsets no register occupies (0x7EC) and the PIO apertures
    // (§5.11, a host-only path) take nothing from a packet, and the CP carries on.
    let mut b = Bench::running();
    b.submit(&[type0(0x7EC, 1, false), 1, type0(APER_PRIMARY, 1, false), TYPE2]);
    b.submit(&[type0(scratch(0), 1, false), 2]);
    assert_eq!((b.gpu.state(), b.rd(0x7EC), b.rd(scratch(0))), (ModelState::Ready, 0, 2));
    assert_eq!(b.gpu.model().stats().writes_dropped, 2);
}

#[test]
fn type1_writes_two_arbitrary_registers() {
    // §6.1.2: REG_DATA_1 to REG_INDEX1, REG_DATA_2 to REG_INDEX2.
    let mut b = Bench::running();
    b.submit(&[type1(scratch(6), scratch(2)), 0x66, 0x22]);
    assert_eq!((b.rd(scratch(6)), b.rd(scratch(2))), (0x66, 0x22));
    assert_eq!(b.gpu.model().stats().packets[1], 1);
}

#[test]
fn type2_is_a_one_dword_filler() {
    // §6.1.3: only bits 31:30 matter.
    let mut b = Bench::running();
    b.submit(&[TYPE2 | 0x3FFF_FFFF, TYPE2, type0(scratch(0), 1, false), 0x42]);
    assert_eq!(b.rd(scratch(0)), 0x42);
    assert_eq!(b.gpu.model().stats().packets[2], 2);
}

#[test]
fn type3_nop_skips_its_body() {
    // §6.2.2.1: NOP (0x10) skips N dwords whatever they contain: here a body that would be a
    // type-0 write of SCRATCH_REG0 if parsed.
    let mut b = Bench::running();
    b.submit(&[type3(0x10, 2), type0(scratch(0), 1, false), 0xBAD, type0(scratch(1), 1, false), 1]);
    assert_eq!((b.rd(scratch(0)), b.rd(scratch(1))), (0, 1));
    assert_eq!(b.gpu.state(), ModelState::Ready);
}

#[test]
fn documented_drawing_packets_are_consumed_by_count() {
    // §6.2.3.10 3D_CLEAR_HIZ (0x37): 3-dword body, no HiZ RAM modelled; parsing resumes after it.
    let mut b = Bench::running();
    b.submit(&[type3(0x37, 3), 0, 0x3FFF, 0, type0(scratch(0), 1, false), 5]);
    assert_eq!(b.rd(scratch(0)), 5);
    assert_eq!(b.gpu.model().stats().consumed, 1);
}

#[test]
fn unknown_type3_opcode_stops_the_cp_in_an_error_state() {
    // §6.2.1 lists the opcodes; 0x77 is not one of them.
    let mut b = Bench::running();
    b.submit(&[type3(0x77, 1), 0, type0(scratch(0), 1, false), 1]);
    assert_eq!(b.error(), (ModelState::Error, error_code::UNKNOWN_OPCODE));
    assert_eq!(b.rd(scratch(0)), 0, "nothing after the bad packet");
    // The hung CP shows busy (Linux r100d.h RBBM_STATUS GUI_ACTIVE / CP_CMDSTRM_BUSY).
    assert_eq!(b.rd(RBBM_STATUS), RBBM_CMDFIFO_AVAIL | RBBM_GUI_ACTIVE | RBBM_CP_CMDSTRM_BUSY);
    assert_ne!(b.rd(CP_STAT) & (1 << 31), 0, "CP_STAT.CP_BUSY");
    assert_ne!(b.rd(ME_CNTL) & (1 << 29), 0, "CP_ME_CNTL.ME_BUSY");
    assert_eq!(b.gpu.model().cp_error(), Some(error_code::UNKNOWN_OPCODE));
    // Documented but not emulated control flow (COND_EXEC 0x21) has its own code.
    let mut b = Bench::running();
    b.submit(&[type3(0x21, 2), 2, 0]);
    assert_eq!(b.error(), (ModelState::Error, error_code::UNSUPPORTED_PACKET));
}

#[test]
fn huge_rings_are_served_in_bounded_ticks() {
    // §5.4 with RB_BUFSZ 18 = 2^19 dwords (2 MiB) full of fillers: parsed without the
    // framework declaring the model hung.
    let mut b = Bench::new();
    b.load_microcode();
    b.ring(18, 16, 3 << 18, PRIMARY_BM);
    let n = (1u32 << 19) - 1;
    let bytes: Vec<u8> = (0..n).flat_map(|_| TYPE2.to_le_bytes()).collect();
    b.gpu.write_memory(u64::from(RING), &bytes).unwrap();
    b.wr(RB_WPTR, n);
    assert_eq!((b.gpu.state(), b.rd(RB_RPTR), b.peek(RPTR_COPY)), (ModelState::Ready, n, n));
    assert_eq!(b.gpu.model().stats().packets[2], u64::from(n));
}

// --- indirect buffers ---------------------------------------------------------------------------

#[test]
fn ib1_runs_then_returns_to_the_ring() {
    // §5.6/§5.10: type-0 of CP_IB_BASE + CP_IB_BUFSZ (BUFSZ last); the next packet comes from
    // IB1; when BUFSZ dwords are consumed the CP returns to the primary stream.
    let mut b = Bench::running();
    b.poke(IB1_AT, &[type0(scratch(0), 1, false), 1, type0(scratch(1), 1, false), 0x11]);
    b.submit(&[type0(IB_BASE, 2, false), IB1_AT, 4, type0(scratch(0), 1, false), 2]);
    assert_eq!((b.rd(scratch(0)), b.rd(scratch(1))), (2, 0x11), "IB ran before the ring's write");
    assert_eq!(b.gpu.model().stats().ibs_started, [1, 0]);
    assert_eq!(b.gpu.model().active_stream(), Stream::Primary);
    assert_eq!(b.gpu.state(), ModelState::Ready);
}

#[test]
fn ib2_runs_from_ib1_and_returns_to_ib1_then_the_ring() {
    // §5.10: CP_IB2_BUFSZ written from IB1 switches to IB2, which returns to IB1.
    let mut b = Bench::running();
    b.poke(IB2_AT, &[type0(scratch(2), 1, false), 0x22, type0(scratch(0), 1, false), 0x20]);
    b.poke(
        IB1_AT,
        &[
            type0(scratch(0), 1, false),
            0x10,
            type0(IB2_BASE, 2, false),
            IB2_AT,
            4,
            type0(scratch(1), 1, false),
            0x11,
        ],
    );
    b.submit(&[type0(IB_BASE, 2, false), IB1_AT, 7, type0(scratch(3), 1, false), 0x33]);
    let got = [b.rd(scratch(0)), b.rd(scratch(1)), b.rd(scratch(2)), b.rd(scratch(3))];
    assert_eq!(got, [0x20, 0x11, 0x22, 0x33]);
    assert_eq!(b.gpu.model().stats().ibs_started, [1, 1]);
    assert_eq!(b.gpu.state(), ModelState::Ready);
}

#[test]
fn ib2_from_the_ring_is_a_nesting_violation() {
    // §5.10: IB2 is started from the Indirect1 stream only.
    let mut b = Bench::running();
    b.poke(IB2_AT, &[type0(scratch(0), 1, false), 1]);
    b.submit(&[type0(IB2_BASE, 2, false), IB2_AT, 2, type0(scratch(1), 1, false), 1]);
    assert_eq!(b.error(), (ModelState::Error, error_code::IB_NESTING));
    assert_eq!((b.rd(scratch(0)), b.rd(scratch(1))), (0, 0));
    // And IB1 from IB1.
    let mut b = Bench::running();
    b.poke(IB1_AT, &[type0(IB_BASE, 2, false), IB1_AT, 3]);
    b.submit(&[type0(IB_BASE, 2, false), IB1_AT, 3]);
    assert_eq!(b.error(), (ModelState::Error, error_code::IB_NESTING));
}

#[test]
fn bufsz_must_be_the_last_write_of_its_packet() {
    // §5.10: "the write to the CP_IB_BUFSZ ... must be the last register-write of a Type 0 or
    // Type 1 packet". Type-0 from CP_IB_BUFSZ (0x73C) with 2 dwords also writes CP_CSQ_CNTL.
    let mut b = Bench::running();
    b.wr(IB_BASE, IB1_AT);
    b.submit(&[type0(IB_BUFSZ, 2, false), 2, PRIMARY_BM_INDIRECT_BM]);
    assert_eq!(b.error(), (ModelState::Error, error_code::IB_SEQUENCE));
    // Type 1 with BUFSZ as REG_INDEX1 (written first) likewise.
    let mut b = Bench::running();
    b.submit(&[type1(IB_BUFSZ, scratch(0)), 2, 0]);
    assert_eq!(b.error(), (ModelState::Error, error_code::IB_SEQUENCE));
    // ... and as REG_INDEX2 it is fine.
    let mut b = Bench::running();
    b.poke(IB1_AT, &[type0(scratch(0), 1, false), 9]);
    b.submit(&[type1(IB_BASE, IB_BUFSZ), IB1_AT, 2]);
    assert_eq!((b.gpu.state(), b.rd(scratch(0))), (ModelState::Ready, 9));
}

#[test]
fn ib_with_the_indirect_stream_off_is_rejected() {
    // §11.1 CSQ_MODE 2 = "Primary BM, Indirect Disabled".
    let mut b = Bench::new();
    b.load_microcode();
    b.ring(5, 1, 0, PRIMARY_BM);
    b.submit(&[type0(IB_BASE, 2, false), IB1_AT, 2]);
    assert_eq!(b.error(), (ModelState::Error, error_code::STREAM_DISABLED));
}

#[test]
fn a_packet_may_not_run_past_the_end_of_its_ib() {
    // §5.10: the IB is "BUFSZ amount"; a type-0 announcing 2 data dwords in a 2-dword IB is cut.
    let mut b = Bench::running();
    b.poke(IB1_AT, &[type0(scratch(0), 2, false), 1, 2]);
    b.submit(&[type0(IB_BASE, 2, false), IB1_AT, 2]);
    assert_eq!(b.error(), (ModelState::Error, error_code::INVALID_PACKET));
}

#[test]
fn ib_outside_guest_memory_is_a_dma_fault() {
    // §5.6: the CP fetches the IB by bus mastering; 0xF000_0000 is beyond the 16 MiB of RAM.
    let mut b = Bench::running();
    b.submit(&[type0(IB_BASE, 2, false), 0xF000_0000, 4]);
    assert_eq!(b.error(), (ModelState::Error, error_code::DMA_FETCH_FAULT));
}

// --- scratch, interrupts ----------------------------------------------------------------------

#[test]
fn scratch_registers_are_written_back_under_umsk() {
    // §5.9: a scratch write is copied to SCRATCH_ADDR + n (dwords) when its UMSK bit is set.
    let mut b = Bench::running();
    b.poke(SCRATCH_COPY, &[SENTINEL; 8]);
    b.wr(SCRATCH_ADDR, SCRATCH_COPY);
    b.wr(SCRATCH_UMSK, 0b1010_0010); // registers 1, 5, 7
    let mut words = vec![type0(scratch(0), 8, false)];
    words.extend((0..8).map(|i| 0x100 + i));
    b.submit(&words);
    let copy: Vec<u32> = (0..8).map(|i| b.peek(SCRATCH_COPY + 4 * i)).collect();
    assert_eq!(copy, [SENTINEL, 0x101, SENTINEL, SENTINEL, SENTINEL, 0x105, SENTINEL, 0x107]);
    // Linux radeon's ring test (r100.c): an MMIO write of the register is copied too.
    b.wr(scratch(7), 0xCAFE_DEAD);
    assert_eq!(b.peek(SCRATCH_COPY + 28), 0xCAFE_DEAD);
    // A write-back outside guest memory is a DMA fault.
    b.wr(SCRATCH_ADDR, 0xFFFF_0000);
    b.submit(&[type0(scratch(1), 1, false), 1]);
    assert_eq!(b.error(), (ModelState::Error, error_code::DMA_WRITE_FAULT));
}

#[test]
fn software_interrupt_from_the_ring_raises_the_line_when_enabled() {
    // Linux rs600d.h: GEN_INT_STATUS.SW_INT_SET (26) raises SW_INT (25); GEN_INT_CNTL.SW_INT_EN
    // (25) enables it; writing 1 to SW_INT acknowledges.
    let mut b = Bench::running();
    b.submit(&[type0(GEN_INT_STATUS, 1, false), 1 << 26]);
    assert_eq!(b.rd(GEN_INT_STATUS), 1 << 25, "status latched");
    assert_eq!(b.gpu.irq_status(), 0, "not enabled");
    b.wr(GEN_INT_CNTL, 1 << 25);
    assert_eq!((b.gpu.irq_status(), b.gpu.take_interrupts()), (IRQ_LINE, 1));
    b.wr(GEN_INT_STATUS, 1 << 25);
    assert_eq!(b.rd(GEN_INT_STATUS), 0);
    assert_eq!(b.gpu.ack_irq(IRQ_LINE), 0, "line lowered by the acknowledgement");
    // Fence pattern: scratch write then the interrupt, in one submission.
    b.submit(&[type0(scratch(0), 1, false), 7, type0(GEN_INT_STATUS, 1, false), 1 << 26]);
    assert_eq!((b.rd(scratch(0)), b.gpu.irq_status()), (7, IRQ_LINE));
}

#[test]
fn scratch_compare_interrupt_fires_on_write_back_at_or_above_the_reference() {
    // §5.9 / §10.1.13: asserted when the selected pair is written to memory and is >= the
    // driver's pair (white-box arming; GEN_INT bit 18 from Linux rs600d.h).
    let mut b = Bench::running();
    b.wr(SCRATCH_ADDR, SCRATCH_COPY);
    b.wr(SCRATCH_UMSK, 0b1100);
    b.wr(GEN_INT_CNTL, GEN_INT_SCRATCH);
    b.gpu.model_mut().set_scratch_compare(Some(ScratchCompare { pair: 1, reference: 5 }));
    b.submit(&[type0(scratch(2), 2, false), 4, 0]); // pair 1 = 4 < 5
    assert_eq!(b.gpu.irq_status(), 0);
    b.submit(&[type0(scratch(2), 1, false), 5]); // 5 >= 5
    assert_eq!((b.rd(GEN_INT_STATUS), b.gpu.irq_status()), (GEN_INT_SCRATCH, IRQ_LINE));
}

// --- PIO ----------------------------------------------------------------------------------------

#[test]
fn primary_aperture_feeds_the_primary_stream_in_pio_mode() {
    // §5.11: writes anywhere in CP_CSQ_APER_PRIMARY (0x1000-0x11FC) are enqueued in order.
    let b = Bench::new();
    b.load_microcode();
    b.split(16, 80);
    b.wr(CSQ_CNTL, PRIMARY_PIO);
    b.wr(APER_PRIMARY + 0x1F0, type0(scratch(0), 2, false));
    b.wr(APER_PRIMARY, 0xAA);
    b.wr(APER_PRIMARY + 0x44, 0xBB);
    assert_eq!((b.rd(scratch(0)), b.rd(scratch(1))), (0xAA, 0xBB));
    assert_eq!(b.rd(CSQ_AVAIL) & 0x3FF, 128, "queue drained: all 128 primary dwords free");
    // In BM mode the aperture is not a stream input.
    b.wr(CSQ_CNTL, PRIMARY_BM);
    b.wr(APER_PRIMARY, type0(scratch(0), 1, false));
    assert_eq!(b.gpu.model().stats().pio_dropped, 1);
}

#[test]
fn pio_data_waits_in_the_queue_until_the_cp_can_run() {
    // §5.11 + §5.12: without microcode the queue fills (CP_CSQ_AVAIL's free count drops) but
    // nothing runs; the streams go off for the upload (§5.8 step 1) and the queue keeps its
    // data.
    let b = Bench::new();
    b.split(16, 80);
    b.wr(CSQ_CNTL, PRIMARY_PIO);
    b.wr(APER_PRIMARY, type0(scratch(0), 1, false));
    b.wr(APER_PRIMARY, 3);
    assert_eq!((b.rd(CSQ_AVAIL) & 0x3FF, b.rd(scratch(0))), (128 - 2, 0));
    assert_eq!(b.rd(CSQ_STAT), 2 << 10, "WPTR_PRIMARY 2, RPTR_PRIMARY 0");
    b.wr(CSQ_CNTL, 0);
    b.load_microcode();
    assert_eq!(b.rd(scratch(0)), 0, "still off");
    b.wr(CSQ_CNTL, PRIMARY_PIO);
    assert_eq!((b.rd(CSQ_AVAIL) & 0x3FF, b.rd(scratch(0))), (128, 3));
    assert_eq!(b.rd(CSQ_STAT), 2 << 10 | 2);
}

#[test]
fn csq_avail_counts_the_dwords_the_host_may_still_write() {
    // §11.1 CP_CSQ_AVAIL, "Command Stream Queue Available Counts": CSQ_CNT_PRIMARY 9:0 "Count
    // of available dwords in the queue for the Primary Stream", CSQ_CNT_INDIRECT 19:10 and
    // CSQ_CNT_INDIRECT2 29:20 likewise. Available = room to write (§5.4: "poll the Read
    // Pointer until space becomes available"); the dwords held are CP_CSQ_STAT's pointers.
    let b = Bench::new();
    b.split(16, 80);
    let empty = 128 | 512 << 10 | 128 << 20;
    assert_eq!(b.rd(CSQ_AVAIL), empty, "every queue's whole share of the command cache is free");
    b.wr(CSQ_CNTL, BOTH_PIO);
    for _ in 0..5 {
        b.wr(APER_PRIMARY, TYPE2);
    }
    b.wr(APER_INDIRECT, TYPE2);
    // No microcode: nothing is parsed, the queues keep what was written.
    assert_eq!(b.rd(CSQ_AVAIL), (128 - 5) | (512 - 1) << 10 | 128 << 20);
    for _ in 5..128 {
        b.wr(APER_PRIMARY, TYPE2);
    }
    assert_eq!(b.rd(CSQ_AVAIL) & 0x3FF, 0, "a full primary queue has no dword available");
    // The whole cache to one queue (768 dwords) still fits the 10-bit field.
    let b = Bench::new();
    b.split(0, 0);
    assert_eq!(b.rd(CSQ_AVAIL), 768 << 20);
}

#[test]
fn csq_mode_splits_the_command_cache_into_the_pio_queues() {
    // §11.1 CP_CSQ_MODE: INDIRECT1_START "is also the size in double octwords of the Primary
    // Queue", INDIRECT2_START - INDIRECT1_START that of Indirect Queue 1, Indirect Queue 2
    // "INDIRECT2_START to 0x5f". 8 dwords per double octword. A full queue is an error rather
    // than lost data (the CP cannot parse here: no microcode).
    for (i1, i2, primary, indirect1, indirect2) in
        [(16, 80, 128, 512, 128), (2, 3, 16, 8, 744), (0x30, 0x20, 384, 0, 512), (0, 0, 0, 0, 768)]
    {
        let b = Bench::new();
        b.split(i1, i2);
        let m = b.gpu.model();
        let got =
            [Stream::Primary, Stream::Indirect1, Stream::Indirect2].map(|s| m.queue_capacity(s));
        assert_eq!(got, [primary, indirect1, indirect2], "split {i1:#x}/{i2:#x}");
        drop(m);
        b.wr(CSQ_CNTL, BOTH_PIO);
        for (aperture, capacity) in
            [(APER_PRIMARY, primary), (APER_INDIRECT, indirect1), (APER_INDIRECT2, indirect2)]
        {
            for _ in 0..capacity {
                b.wr(aperture, TYPE2);
            }
            assert_eq!(b.error(), (ModelState::Ready, 0), "split {i1:#x}/{i2:#x}");
        }
        b.wr(APER_INDIRECT2, TYPE2);
        assert_eq!(b.error(), (ModelState::Error, error_code::PIO_OVERFLOW));
    }
    // A queue programmed for 16 dwords takes 16, not 200.
    let b = Bench::new();
    b.split(2, 80);
    b.wr(CSQ_CNTL, PRIMARY_PIO);
    for i in 0..17 {
        assert_eq!(b.error().1, 0, "dword {i}");
        b.wr(APER_PRIMARY, TYPE2);
    }
    assert_eq!(b.error(), (ModelState::Error, error_code::PIO_OVERFLOW));
}

#[test]
fn indirect_buffers_in_pio_mode_come_from_their_apertures() {
    // §5.10 "In PIO mode, the BUFSZ register still needs to be written"; §5.11 IB1 aperture
    // 0x1300-0x13FC, IB2 aperture 0x1200-0x12FC; CSQ_MODE 15 = both PIO.
    let b = Bench::new();
    b.load_microcode();
    b.split(16, 32);
    b.wr(CSQ_CNTL, BOTH_PIO);
    // IB1 data first (it waits in its queue), then the primary packet that starts IB1.
    for w in [type0(IB2_BASE, 2, false), 0, 2, type0(scratch(1), 1, false), 0x11] {
        b.wr(APER_INDIRECT, w);
    }
    for w in [type0(scratch(2), 1, false), 0x22] {
        b.wr(APER_INDIRECT2, w);
    }
    for w in [type0(IB_BASE, 2, false), 0, 5, type0(scratch(0), 1, false), 0x33] {
        b.wr(APER_PRIMARY, w);
    }
    let got = [b.rd(scratch(0)), b.rd(scratch(1)), b.rd(scratch(2))];
    assert_eq!(got, [0x33, 0x11, 0x22]);
    assert_eq!(b.gpu.model().stats().ibs_started, [1, 1]);
    assert_eq!(b.gpu.model().active_stream(), Stream::Primary);
}

// --- waits --------------------------------------------------------------------------------------

#[test]
fn wait_mem_waits_for_a_zero_semaphore_in_memory() {
    // §6.2.5.2: SEM_ADDR, SEM_LEN = 2; the CP waits until the dword is zero.
    let mut b = Bench::running();
    let sem = 0xA000;
    b.poke(sem, &[1, 2]);
    b.submit(&[type3(0x23, 2), sem, 2, type0(scratch(0), 1, false), 0x77]);
    assert_eq!(b.rd(scratch(0)), 0);
    assert_eq!(b.gpu.poll(), Activity::Waiting);
    b.poke(sem, &[0]);
    b.gpu.poll();
    assert_eq!(b.rd(scratch(0)), 0x77);
    // A WAIT_MEM without its two body dwords is malformed.
    let mut b = Bench::running();
    b.submit(&[type3(0x23, 1), sem]);
    assert_eq!(b.error(), (ModelState::Error, error_code::INVALID_PACKET));
}

#[test]
fn wait_mem_without_the_fixed_two_hangs_the_cp_until_a_soft_reset() {
    // §6.2.5.2: "If both ordinal 3 (SEM_LEN) and the DWORD in memory following the semaphore
    // value is not equal to two, the CP micro-engine will become confused and ultimately hang
    // the hardware." A hang, not an error: no error code, the CP stops and looks busy.
    let sem = 0xA000;
    for (words, second, hang) in [
        (vec![type3(0x23, 2), sem, 2], 3, Hang::WaitMemFixedWord(3)),
        (vec![type3(0x23, 2), sem, 2], 0, Hang::WaitMemFixedWord(0)),
        (vec![type3(0x23, 2), sem, 3], 2, Hang::WaitMemLength(3)),
    ] {
        let mut b = Bench::running();
        b.poke(sem, &[0, second]); // the semaphore itself is free
        let mut words = words.clone();
        words.extend([type0(scratch(0), 1, false), 0x77]);
        b.submit(&words);
        for _ in 0..10 {
            b.gpu.poll();
        }
        assert_eq!(b.gpu.model().hang(), Some(hang));
        assert_eq!(b.error(), (ModelState::Ready, 0), "{hang:?}: no error code");
        assert_eq!(b.rd(scratch(0)), 0, "{hang:?}: stopped at the WAIT_MEM");
        assert_ne!(b.rd(RBBM_STATUS) & RBBM_GUI_ACTIVE, 0, "{hang:?}: busy");
        assert_ne!(b.rd(CP_STAT) & 1 << 31, 0, "{hang:?}: CP_STAT.CP_BUSY");
        // §5.8: disable, soft reset, restart at the end of the submission.
        b.wr(CSQ_CNTL, 0);
        b.wr(RBBM_SOFT_RESET, 1);
        b.wr(RBBM_SOFT_RESET, 0);
        assert_eq!(b.rd(RBBM_STATUS), RBBM_CMDFIFO_AVAIL);
        assert_eq!(b.gpu.model().hang(), None);
        b.wr(RB_CNTL, 5 | 1 << 8 | 1 << 31);
        b.wr(RB_RPTR_WR, b.wptr);
        b.wr(RB_WPTR, b.wptr);
        b.wr(RB_CNTL, 5 | 1 << 8);
        b.wr(CSQ_CNTL, PRIMARY_BM);
        b.submit(&[type0(scratch(1), 1, false), 0x11]);
        assert_eq!((b.rd(scratch(0)), b.rd(scratch(1))), (0, 0x11), "{hang:?}: recovered");
    }
}

// --- soft reset -------------------------------------------------------------------------------

#[test]
fn soft_reset_follows_the_section_5_8_sequence() {
    // §5.8: disable (CSQ 0), RBBM soft reset CP, RPTR_WR + WPTR to restart, re-enable.
    let mut b = stalled_at_rptr_8(1, 0); // CP waiting inside the ring
    assert!(b.rd(RBBM_STATUS) & RBBM_GUI_ACTIVE != 0);
    // 1) disable.
    b.wr(CSQ_CNTL, 0);
    b.wr(CSQ_MODE, 0);
    // 2) assert then de-assert SOFT_RESET_CP (bit 0, Linux radeon_reg.h).
    b.wr(RBBM_SOFT_RESET, 1);
    assert_eq!(b.rd(RB_RPTR), 0, "read pointer resets to zero");
    b.wr(RBBM_SOFT_RESET, 0);
    assert_eq!(b.rd(RBBM_STATUS), RBBM_CMDFIFO_AVAIL, "the wait and queues are gone");
    // 3)-6) restart from dword 14 (the end of what was submitted) with RPTR = WPTR = 14.
    b.wr(RB_CNTL, 5 | 1 << 8 | 1 << 31);
    b.wr(RB_RPTR_WR, 14);
    b.wr(RB_WPTR, 14);
    b.wr(RB_CNTL, 5 | 1 << 8);
    assert_eq!(b.rd(RB_RPTR), 14);
    // 7) re-enable: the microcode survived the soft reset, the ring runs again.
    b.wr(CSQ_CNTL, PRIMARY_BM);
    assert!(b.gpu.model().microcode_loaded());
    b.wptr = 14;
    b.submit(&[type0(scratch(4), 1, false), 0x44]);
    assert_eq!((b.rd(RB_RPTR), b.rd(scratch(4)), b.rd(scratch(0))), (16, 0x44, 0));
}

#[test]
fn soft_reset_clears_the_cp_error_and_function_reset_recovers_the_device() {
    // After an error the framework keeps the device failed until its function-level reset;
    // RBBM_SOFT_RESET clears the CP's own error (the busy status).
    let mut b = Bench::running();
    b.submit(&[type3(0x77, 1), 0]);
    assert_eq!(b.error(), (ModelState::Error, error_code::UNKNOWN_OPCODE));
    b.wr(CSQ_CNTL, 0);
    b.wr(RBBM_SOFT_RESET, 1);
    b.wr(RBBM_SOFT_RESET, 0);
    assert_eq!(b.gpu.model().cp_error(), None);
    assert_eq!(b.rd(RBBM_STATUS) & RBBM_GUI_ACTIVE, 0);
    // Function-level reset: power-on state, microcode gone, device usable again.
    b.gpu.reset();
    assert_eq!(b.error(), (ModelState::Ready, 0));
    assert!(!b.gpu.model().microcode_loaded());
    b.wptr = 0;
    b.load_microcode();
    b.ring(5, 1, 0, PRIMARY_BM);
    b.submit(&[type0(scratch(0), 1, false), 0xF00D]);
    assert_eq!(b.rd(scratch(0)), 0xF00D);
}

// --- the CTM device interface (project-defined CTM_CB_BASE/SIZE/STATUS, CTM guide ch. 5) -------

const CTM_CB_AT: u32 = 0x40_0000;
const PERF_AT: u32 = 0x41_0000; // 2K aligned (§2.2.1 read_perf_counters: a GPU address)

/// CTM_STATUS fields (register database): CONSUMED 15:0, ERROR_CODE 27:16, ERROR 31.
fn ctm_status(b: &Bench) -> (u32, u32, bool) {
    let v = b.rd(CTM_STATUS);
    (v & 0xFFFF, (v >> 16) & 0xFFF, v >> 31 != 0)
}

/// Table 3 words, by hand: init_perf_counters(enable), start, stop, read_perf_counters(addr).
fn perf_buffer() -> [u32; 8] {
    [0xC001_0200, 1, 0xC000_0300, 0, 0xC000_0400, 0, 0xC001_0500, PERF_AT]
}

/// A type-0 packet writing CTM_CB_BASE then CTM_CB_SIZE, then a scratch fence.
fn dispatch(size: u32, fence: u32) -> [u32; 5] {
    [type0(CTM_CB_BASE, 2, false), CTM_CB_AT, size, type0(scratch(1), 1, false), fence]
}

#[test]
fn ctm_buffer_written_from_the_ring_is_consumed_before_the_next_packet() {
    let mut b = Bench::running();
    b.poke(CTM_CB_AT, &perf_buffer());
    b.poke(PERF_AT, &[SENTINEL, SENTINEL]);
    b.submit(&dispatch(8, 0xF1));
    assert_eq!(b.rd(scratch(1)), 0xF1, "the fence after the buffer");
    // The perf counters ran for the commands between start and stop (the clocks are the
    // model's; total >= active).
    let (total, active) = (b.peek(PERF_AT), b.peek(PERF_AT + 4));
    assert!(total != SENTINEL && total >= active, "read_perf_counters wrote {total} {active}");
    assert_eq!(ctm_status(&b), (1, 0, false));
    assert_eq!(b.gpu.model().ctm().cache_ops.wait_for_idle, 0);
}

#[test]
fn ctm_size_written_by_mmio_is_only_stored() {
    let b = Bench::running();
    b.poke(CTM_CB_AT, &perf_buffer());
    b.poke(PERF_AT, &[SENTINEL]);
    b.wr(CTM_CB_BASE, CTM_CB_AT);
    b.wr(CTM_CB_SIZE, 8);
    assert_eq!(b.rd(CTM_CB_SIZE), 8);
    assert_eq!(b.peek(PERF_AT), SENTINEL, "nothing executed");
    assert_eq!(ctm_status(&b), (0, 0, false));
}

#[test]
fn ctm_bad_command_stops_the_units_and_the_cp_until_reset() {
    let mut b = Bench::running();
    // 0xC000_0100: type-3-shaped but opcode 0x01 is not in Table 3.
    b.poke(CTM_CB_AT, &[0xC000_0300, 0, 0xC000_0100, 0]);
    b.submit(&dispatch(4, 0xF2));
    assert_eq!(ctm_status(&b), (0, 0x101, true));
    assert_eq!(b.rd(scratch(1)), 0, "the CP stopped with the CTM units");
    assert_eq!(b.error(), (ModelState::Error, 0x101));
    // A truncated buffer is its own code: the function-level reset, then try again.
    b.gpu.reset();
    b.wptr = 0;
    b.load_microcode();
    b.ring(5, 1, 0, PRIMARY_BM_INDIRECT_BM);
    b.poke(CTM_CB_AT, &[0xC003_0700, 0, 0]); // set_domain needs four parameters
    b.submit(&dispatch(3, 0xF3));
    assert_eq!(ctm_status(&b), (0, 0x103, true));
    // RBBM_SOFT_RESET resets the CP and the CTM units it feeds (streams off first, §5.8).
    b.wr(CSQ_CNTL, 0);
    b.wr(RBBM_SOFT_RESET, 1);
    b.wr(RBBM_SOFT_RESET, 0);
    assert_eq!(ctm_status(&b), (0, 0, false));
}

#[test]
fn ctm_program_registers_reach_the_engine() {
    // §4.1.4 dpp_proginfo through the §11.10 registers: START/END relative to OFFSET_ADDR,
    // US_FC_CTRL.FULL_FC_EN (bit 31).
    let mut b = Bench::running();
    b.submit(&[
        type0(off::<us::US_CODE_ADDR>(), 1, false),
        (9 << 16) | 2,
        type0(off::<us::US_CODE_OFFSET>(), 1, false),
        4,
        type0(off::<us::US_FC_CTRL>(), 1, false),
        0,
    ]);
    b.poke(CTM_CB_AT, &[0xC000_0300, 0]);
    b.submit(&dispatch(2, 0xF4));
    let p = b.gpu.model().ctm().program;
    assert_eq!((p.start, p.end, p.code_offset, p.full_flow_control), (6, 13, 4, false));
}

/// A CTM buffer of `n` wait_for_idle commands (Table 3: 0xC000_0900, one parameter): one
/// work unit each, valid in any state.
fn wait_for_idle_buffer(n: usize) -> Vec<u32> {
    [ctm_model::op::WAIT_FOR_IDLE, 0].repeat(n)
}

/// Ticks `s` until idle, asserting the CTM work of every tick stays within its bound; returns
/// (ticks, CTM units done, the fence scratch seen on each tick while the buffer was in flight).
fn tick_ctm_to_idle(s: &mut Stepper) -> (u32, u64, Vec<u32>) {
    let bound = CTM_UNITS_PER_TICK + ctm_model::MAX_STEP_UNITS;
    let (mut ticks, mut fences) = (0u32, Vec::new());
    loop {
        let before = s.dev.model().stats().ctm_units;
        let activity = s.tick();
        let units = s.dev.model().stats().ctm_units - before;
        assert!(units <= bound, "tick {ticks}: {units} CTM units > {bound}");
        ticks += 1;
        if s.dev.model().ctm().in_flight() {
            fences.push(s.rd(scratch(1)));
        }
        if activity == Activity::Idle {
            return (ticks, s.dev.model().stats().ctm_units, fences);
        }
        assert!(ticks < 10_000, "the buffer never finished");
    }
}

#[test]
fn ctm_buffer_runs_a_bounded_slice_per_tick_while_the_cp_waits_for_it() {
    // 100,000 commands = 100,000 work units: more than six ticks of CTM_UNITS_PER_TICK. The CP
    // parses the fence after the buffer only once the buffer is consumed (CTM guide §2.2, the
    // project's device interface: "the CP resumes after the CTM units consumed the buffer").
    let mut s = Stepper::new(Faults::default());
    let n = 100_000;
    let cb = wait_for_idle_buffer(n);
    let bytes: Vec<u8> = cb.iter().flat_map(|w| w.to_le_bytes()).collect();
    s.dev.memory_mut().write(u64::from(CTM_CB_AT), &bytes).unwrap();
    s.ring(6, 3, &dispatch(cb.len() as u32, 0xF5));
    let (ticks, units, fences) = tick_ctm_to_idle(&mut s);
    assert_eq!(units, n as u64, "one unit per command");
    let min = n as u64 / CTM_UNITS_PER_TICK;
    assert!(u64::from(ticks) > min, "{ticks} ticks for {units} units");
    assert!(fences.len() as u64 >= min && fences.iter().all(|&f| f == 0), "{fences:?}");
    assert_eq!(s.rd(scratch(1)), 0xF5, "the fence after the buffer");
    let status = s.rd(CTM_STATUS);
    assert_eq!((status & 0xFFFF, status >> 31), (1, 0), "consumed, no error");
    assert_eq!(s.dev.model().ctm().cache_ops.wait_for_idle, n as u32);
}

#[test]
fn ctm_buffer_over_its_work_budget_stops_with_code_0x107_within_bounded_ticks() {
    // The per-buffer budget (CTM_STATUS.ERROR_CODE 0x107, register database): a buffer that
    // would do more work stops after at most the budget, slice by slice, never in one tick.
    let mut s = Stepper::new(Faults::default());
    let limits = ctm_model::Limits { per_buffer: 40_000, ..ctm_model::Limits::default() };
    s.dev.model_mut().set_ctm_limits(limits);
    let cb = wait_for_idle_buffer(100_000);
    let bytes: Vec<u8> = cb.iter().flat_map(|w| w.to_le_bytes()).collect();
    s.dev.memory_mut().write(u64::from(CTM_CB_AT), &bytes).unwrap();
    s.ring(6, 3, &dispatch(cb.len() as u32, 0xF6));
    let (_, units, _) = tick_ctm_to_idle(&mut s);
    assert_eq!(units, 40_000, "stopped at the budget");
    let status = s.rd(CTM_STATUS);
    assert_eq!(((status >> 16) & 0xFFF, status >> 31), (0x107, 1));
    assert_eq!((s.dev.state(), s.dev.error_code()), (ModelState::Error, 0x107));
    assert_eq!(s.rd(scratch(1)), 0, "the CP stopped with the CTM units");
    // The limits survive the function-level reset (they are the part's, not the guest's).
    s.dev.reset();
    assert_eq!(s.dev.model().ctm().limits, limits);
}

#[test]
fn a_hostile_ctm_submission_settles_every_request_within_its_work_bound() {
    // Seeded pacing: each request advances the engines by at most SEEDED_MAX_TICKS ticks, so
    // no request does more than that many ticks' CTM work, however long the buffer.
    let mut s = Stepper::new(Faults::default());
    let cb = wait_for_idle_buffer(200_000);
    let bytes: Vec<u8> = cb.iter().flat_map(|w| w.to_le_bytes()).collect();
    s.dev.memory_mut().write(u64::from(CTM_CB_AT), &bytes).unwrap();
    s.ring(6, 3, &dispatch(cb.len() as u32, 0xF7));
    s.dev.set_pacing(Pacing::Seeded(0x5EED_0013));
    let bound = u64::from(gpu_device_model::pacing::SEEDED_MAX_TICKS)
        * (CTM_UNITS_PER_TICK + ctm_model::MAX_STEP_UNITS);
    let mut requests = 0;
    while s.rd(scratch(1)) != 0xF7 {
        let before = s.dev.model().stats().ctm_units;
        let _ = s.rd(CTM_STATUS);
        let units = s.dev.model().stats().ctm_units - before;
        assert!(units <= bound, "request {requests}: {units} CTM units > {bound}");
        requests += 1;
        assert!(requests < 100_000, "never finished");
    }
    assert_eq!(s.dev.model().stats().ctm_units, 200_000);
    assert!(requests > 200_000 / bound as usize, "{requests} requests");
}

// --- faults ----------------------------------------------------------------------------------

#[test]
fn fault_cp_stall_never_advances_the_read_pointer() {
    let mut b = Bench::with_faults(Faults { cp_stall: true, ..Faults::default() });
    b.load_microcode();
    b.ring(5, 1, 0, PRIMARY_BM);
    b.submit(&[type0(scratch(0), 1, false), 1]);
    b.gpu.poll();
    assert_eq!((b.rd(RB_RPTR), b.peek(RPTR_COPY), b.rd(scratch(0))), (0, SENTINEL, 0));
    assert_eq!(b.gpu.state(), ModelState::Ready, "a stall, not an error: the driver times out");
    assert!(b.rd(RBBM_STATUS) & RBBM_GUI_ACTIVE != 0, "busy forever");
    b.gpu.model_mut().set_faults(Faults::default());
    b.gpu.poll();
    assert_eq!(b.rd(scratch(0)), 1);
}

#[test]
fn fault_registers_read_all_ones() {
    let b = Bench::with_faults(Faults { registers_all_ones: true, ..Faults::default() });
    assert_eq!((b.rd(ME_CNTL), b.rd(RBBM_STATUS), b.rd(0x7EC)), (u32::MAX, u32::MAX, u32::MAX));
    b.wr(scratch(0), 5);
    b.gpu.model_mut().set_faults(Faults::default());
    assert_eq!(b.rd(scratch(0)), 0, "writes were dropped");
}

#[test]
fn fault_me_ram_corrupt_flips_one_entry_on_readback() {
    // §5.13 read path with entry 0x42 corrupted; the RAM itself is intact.
    let b = Bench::with_faults(Faults { me_ram_corrupt: Some(0x42), ..Faults::default() });
    b.load_pattern();
    b.wr(ME_RAM_RADDR, 0x41);
    assert_eq!(b.rd(ME_RAM_DATAL), 0xC0DE_0041);
    assert_eq!(b.rd(ME_RAM_DATAH), 0x42);
    assert_eq!(b.rd(ME_RAM_DATAL), 0xC0DE_0043, "bit 0 flipped");
    assert_eq!(b.rd(ME_RAM_DATAL), 0xC0DE_0043, "the next entry is fine");
    assert_eq!(b.gpu.model().me_ram_entry(0x42), 0x42_C0DE_0042);
}

#[test]
fn fault_dma_fails_the_next_ring_fetch() {
    let mut b = Bench::with_faults(Faults { dma_fault_next_fetch: true, ..Faults::default() });
    b.load_microcode();
    b.ring(5, 1, 0, PRIMARY_BM);
    b.submit(&[type0(scratch(0), 1, false), 1]);
    assert_eq!(b.error(), (ModelState::Error, error_code::DMA_FETCH_FAULT));
    assert_eq!((b.rd(RB_RPTR), b.rd(scratch(0))), (0, 0));
    assert!(!b.gpu.model().faults().dma_fault_next_fetch, "one-shot");
}

#[test]
fn ring_outside_guest_memory_is_a_dma_fault() {
    // §5.4: the ring is read by bus mastering.
    let mut b = Bench::new();
    b.load_microcode();
    b.ring(5, 1, 0, PRIMARY_BM);
    b.wr(RB_BASE, 0xFFFF_0000);
    b.submit(&[TYPE2]);
    assert_eq!(b.error(), (ModelState::Error, error_code::DMA_FETCH_FAULT));
}

#[test]
fn fault_names_parse() {
    let f: Faults = "cp-stall, me-ram-corrupt=0x10,dma-fault,all-ones".parse().unwrap();
    assert_eq!(
        f,
        Faults {
            cp_stall: true,
            registers_all_ones: true,
            me_ram_corrupt: Some(0x10),
            dma_fault_next_fetch: true,
            slow: None,
        }
    );
    assert_eq!("slow=0x40".parse::<Faults>().unwrap().slow, Some(64));
    for bad in ["slow", "slow=0", "slow=65536"] {
        assert!(bad.parse::<Faults>().is_err(), "{bad}");
    }
    assert_eq!("".parse::<Faults>(), Ok(Faults::default()));
    assert_eq!("me-ram-corrupt".parse::<Faults>().unwrap().me_ram_corrupt, Some(0));
    assert!("me-ram-corrupt=300".parse::<Faults>().is_err());
    assert!("melt".parse::<Faults>().is_err());
}

// --- streams must be off for microcode and resets (§5.8 step 1) ------------------------------

#[test]
fn microcode_written_while_a_stream_is_enabled_is_an_error() {
    // §5.8 step 1 "effectively disabling the CP" precedes everything that changes the CP;
    // §5.12 writes the RAM the ME executes from.
    let b = Bench::running();
    b.wr(ME_RAM_ADDR, 0x10);
    b.wr(ME_RAM_DATAH, 0);
    assert_eq!(b.error(), (ModelState::Ready, 0), "DATAH only loads the holding register");
    b.wr(ME_RAM_DATAL, 0);
    assert_eq!(b.error(), (ModelState::Error, error_code::ME_RAM_WRITE_WHILE_RUNNING));
    // Semaphores are the exception (§6.2.4.1: written "at any time"), with any stream mode,
    // PIO included.
    for mode in [PRIMARY_BM, PRIMARY_PIO, BOTH_PIO] {
        let b = Bench::running();
        b.wr(CSQ_CNTL, mode);
        for slot in 0xFC..=0xFF {
            b.wr(ME_RAM_ADDR, slot);
            b.wr(ME_RAM_DATAL, 1);
        }
        assert_eq!(b.error(), (ModelState::Ready, 0));
        assert!(b.gpu.model().microcode_loaded());
    }
    // CP_CSQ_MODE's per-stream enables count as enabled streams too.
    let b = Bench::new();
    b.wr(CSQ_MODE, 1 << 29 | 1 << 28); // CSQ_INDIRECT1_ENABLE, BM
    b.load_microcode();
    assert_eq!(b.error(), (ModelState::Error, error_code::ME_RAM_WRITE_WHILE_RUNNING));
}

#[test]
fn a_soft_reset_with_a_stream_enabled_is_an_error() {
    // §5.8: "1) Write CP_CSQ_CNTL and CP_CSQ_MODE to zero" before "2) ... assert and then
    // de-assert the Soft Reset signal".
    let b = stalled_at_rptr_8(1, 0);
    b.wr(RBBM_SOFT_RESET, 1);
    assert_eq!(b.error(), (ModelState::Error, error_code::RESET_WHILE_RUNNING));
    assert_eq!(b.rd(RB_RPTR), 8, "nothing was reset");
    // With both registers zero it is a clean reset.
    let b = stalled_at_rptr_8(1, 0);
    b.wr(CSQ_CNTL, 0);
    b.wr(CSQ_MODE, 1 << 31 | 1 << 30); // primary enabled through CP_CSQ_MODE
    b.wr(RBBM_SOFT_RESET, 1);
    assert_eq!(b.error(), (ModelState::Error, error_code::RESET_WHILE_RUNNING));
    let b = stalled_at_rptr_8(1, 0);
    b.wr(CSQ_CNTL, 0);
    b.wr(CSQ_MODE, 0);
    b.wr(RBBM_SOFT_RESET, 1);
    b.wr(RBBM_SOFT_RESET, 0);
    assert_eq!((b.error(), b.rd(RB_RPTR)), ((ModelState::Ready, 0), 0));
}

#[test]
fn an_unprogrammed_read_pointer_address_is_a_dma_fault_not_a_write_to_zero() {
    // §5.4: the CP writes the read pointer to CP_RB_RPTR_ADDR unless RB_NO_UPDATE. Its reset
    // value 0 means the driver never said where: a fault, and bus address 0 stays untouched.
    let mut b = Bench::new();
    b.load_microcode();
    b.ring(5, 1, 0, PRIMARY_BM);
    b.poke(0, &[SENTINEL]);
    b.wr(RB_RPTR_ADDR, 0);
    b.submit(&[type0(scratch(0), 1, false), 1]);
    assert_eq!(b.error(), (ModelState::Error, error_code::DMA_WRITE_FAULT));
    assert_eq!(b.peek(0), SENTINEL);
    // With RB_NO_UPDATE the address is never used.
    let mut b = Bench::new();
    b.load_microcode();
    b.ring(5, 1, 1 << 27, PRIMARY_BM);
    b.wr(RB_RPTR_ADDR, 0);
    b.submit(&[type0(scratch(0), 1, false), 1]);
    assert_eq!((b.error(), b.rd(scratch(0))), ((ModelState::Ready, 0), 1));
}

#[test]
fn a_valid_stream_drops_no_writes_and_a_bad_one_is_counted() {
    // Writes a packet makes to registers that exist all land; the ones to holes (0x7EC,
    // between CP_VP_ADDR_CNTL and CP_CSQ_ADDR) and beyond the register space are counted.
    let mut b = Bench::running();
    b.wr(SCRATCH_ADDR, SCRATCH_COPY);
    b.wr(SCRATCH_UMSK, 0xFF);
    b.submit(&[
        type0(scratch(0), 8, false),
        1,
        2,
        3,
        4,
        5,
        6,
        7,
        8,
        type1(scratch(1), scratch(2)),
        9,
        10,
    ]);
    assert_eq!(b.rd(scratch(2)), 10);
    assert_eq!(b.gpu.model().stats().writes_dropped, 0);
    // A type-1 packet writing the hole twice and a type-0 into the PIO aperture (host-only).
    b.submit(&[type1(0x7EC, 0x7EC), 1, 2, type0(APER_PRIMARY, 1, false), 3]);
    assert_eq!(b.error(), (ModelState::Ready, 0), "dropped, not an error");
    assert_eq!(b.gpu.model().stats().writes_dropped, 3);
}

// --- work per tick (the framework's pacing) ------------------------------------------------------

#[test]
fn a_tick_fetches_one_max_fetch_chunk() {
    // §11.1 MAX_FETCH 0 = 1 double octword = 8 dwords per CP memory read; the model reads one
    // chunk per tick, so a 32-dword submission takes four ticks and the read pointer (and its
    // write-back every RB_BLKSZ 1 = 4 dwords) moves 8 at a time.
    let mut words = Vec::new();
    for v in 1..=16 {
        words.extend([type0(scratch(0), 1, false), v]);
    }
    let mut s = Stepper::new(Faults::default());
    s.ring(5, 0, &words);
    let mut seen = Vec::new();
    loop {
        let activity = s.tick();
        seen.push((s.rd(RB_RPTR), s.peek(RPTR_COPY), s.rd(scratch(0))));
        if activity == Activity::Idle {
            break;
        }
    }
    // The last tick finds the ring empty after its chunk: idle at once.
    assert_eq!(seen, [(8, 8, 4), (16, 16, 8), (24, 24, 12), (32, 32, 16)]);
    // MAX_FETCH 3 = 8 double octwords = 64 dwords: one tick does it all.
    let mut s = Stepper::new(Faults::default());
    s.ring(6, 3, &words);
    assert_eq!(s.tick(), Activity::Idle);
    assert_eq!((s.rd(RB_RPTR), s.rd(scratch(0))), (32, 16));
}

#[test]
fn fault_slow_completes_one_packet_per_n_ticks_and_is_not_a_hang() {
    // Not a hardware behaviour: a slow engine for drivers' timeout logic. 3 packets, 5 ticks
    // each; busy while it works, idle once done, and never an error.
    let words = [type0(scratch(0), 1, false), 1, TYPE2, type0(scratch(0), 1, false), 3];
    let mut s = Stepper::new(Faults { slow: Some(5), ..Faults::default() });
    s.ring(5, 0, &words);
    let mut ticks = 0;
    let mut values = Vec::new();
    while s.tick() == Activity::Busy {
        ticks += 1;
        values.push(s.rd(scratch(0)));
        assert!(ticks < 100);
    }
    assert_eq!(ticks, 15, "{values:?}");
    assert_eq!(values[3..6], [0, 1, 1], "the first packet completes on tick 5");
    assert_eq!((s.rd(scratch(0)), s.dev.state()), (3, ModelState::Ready));
    assert_ne!(s.dev.model().stats().packets[2], 0);
}

// --- robustness -------------------------------------------------------------------------------

#[test]
fn no_guest_input_panics() {
    // Arbitrary register writes everywhere, then arbitrary ring contents.
    let mut seed = 0x1234_5678_u32;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed
    };
    let b = Bench::new();
    b.load_microcode();
    for offset in (0..REG_SPACE).step_by(4) {
        if offset != off::<rbbm::RBBM_SOFT_RESET>() {
            b.wr(offset, next());
        }
        b.rd(offset);
    }
    for _ in 0..4 {
        let mut b = Bench::running();
        b.wr(SCRATCH_ADDR, SCRATCH_COPY);
        let words: Vec<u32> = (0..60).map(|_| next()).collect();
        b.submit(&words);
        b.gpu.poll();
        let _ = b.error();
    }
}

// --- what the document forbids is refused, not accepted silently (#19) -----------------------

#[test]
fn type3_bodies_must_fit_their_packet_tables() {
    // §6.2.3.4 3D_DRAW_VBUF_2: one dword (VAP_VF_CNTL); §6.2.3 SET_SCISSORS: two; §6.2.4.1
    // WAIT_SEMAPHORE: offset and an optional reset value; 3D_CLEAR_HIZ: three.
    for (header, what) in [
        (type3(0x34, 2), "3D_DRAW_VBUF_2 with 2 dwords"),
        (type3(0x1E, 1), "SET_SCISSORS with 1"),
        (type3(0x1E, 3), "SET_SCISSORS with 3"),
        (type3(0x37, 40), "3D_CLEAR_HIZ with 40"),
        (type3(0x28, 9), "3D_DRAW_VBUF with 9"),
        (type3(0x22, 3), "WAIT_SEMAPHORE with 3"),
        (type3(0x29, 1), "3D_DRAW_IMMD without VAP_VF_CNTL"),
    ] {
        let mut b = Bench::running();
        let body = (header >> 16 & 0x3FFF) + 1;
        let mut words = vec![header];
        words.extend(std::iter::repeat_n(0, body as usize));
        b.submit(&words);
        assert_eq!(b.error(), (ModelState::Error, error_code::INVALID_PACKET), "{what}");
    }
    // 3D_LOAD_VBPNTR: the length follows VTX_NUM_ARRAYS (3 arrays: 1 + 3 + 2 dwords).
    let mut b = Bench::running();
    b.submit(&[type3(0x2F, 6), 3, 0, 0, 0, 0, 0, type0(scratch(0), 1, false), 6]);
    assert_eq!(b.rd(scratch(0)), 6, "a consistent 3D_LOAD_VBPNTR is consumed");
    b.submit(&[type3(0x2F, 6), 2, 0, 0, 0, 0, 0]);
    assert_eq!(b.error(), (ModelState::Error, error_code::INVALID_PACKET), "2 arrays in 6 dwords");
    // Open-ended packets take any body past their fixed dwords.
    let mut b = Bench::running();
    b.submit(&[type3(0x29, 5), 0, 0, 1, 2, 3, type0(scratch(0), 1, false), 7]);
    assert_eq!(b.rd(scratch(0)), 7);
    assert_eq!(b.error(), (ModelState::Ready, 0));
}

#[test]
fn type0_writes_to_read_only_registers_are_counted_as_dropped() {
    // §11.1: CP_STAT and CP_CSQ_STAT are read-only; a stream that writes them is not clean.
    let mut b = Bench::running();
    b.submit(&[type0(CP_STAT, 1, false), 0xFFFF_FFFF, type0(CSQ_STAT, 1, false), 1]);
    assert_eq!(b.gpu.model().stats().writes_dropped, 2);
    assert_eq!(b.error(), (ModelState::Ready, 0));
}

#[test]
fn reserved_csq_modes_are_refused() {
    // §11.1 CSQ_MODE: 0-8 and 15 are defined; 9-14 reserved.
    for mode in 9..=14 {
        let b = Bench::new();
        b.wr(CSQ_CNTL, mode << 28);
        assert_eq!(b.error(), (ModelState::Error, error_code::BAD_CONFIGURATION), "{mode}");
    }
}

#[test]
fn bus_address_zero_is_an_unprogrammed_address() {
    // A ring never placed: CP_RB_BASE keeps its reset value 0.
    let mut b = Bench::new();
    b.load_microcode();
    b.ring(5, 1, 0, PRIMARY_BM);
    b.wr(RB_BASE, 0);
    b.poke(0, &[type0(scratch(0), 1, false), 1]);
    b.wr(RB_WPTR, 2);
    assert_eq!(b.error(), (ModelState::Error, error_code::DMA_FETCH_FAULT), "ring at 0");
    assert_eq!(b.rd(scratch(0)), 0, "nothing ran from address 0");
    // SCRATCH_ADDR never programmed: the write-back has nowhere to go.
    let mut b = Bench::running();
    b.wr(SCRATCH_UMSK, 1);
    b.submit(&[type0(scratch(0), 1, false), 5]);
    assert_eq!(b.error(), (ModelState::Error, error_code::DMA_WRITE_FAULT), "scratch copy at 0");
    // An indirect buffer at 0 (CP_IB_BASE's reset value) and a WAIT_MEM semaphore at 0.
    let mut b = Bench::running();
    b.submit(&[type0(IB_BASE, 2, false), 0, 2]);
    assert_eq!(b.error(), (ModelState::Error, error_code::DMA_FETCH_FAULT), "IB at 0");
    let mut b = Bench::running();
    b.submit(&[type3(0x23, 2), 0, 2]);
    assert_eq!(b.error(), (ModelState::Error, error_code::DMA_FETCH_FAULT), "WAIT_MEM at 0");
}

#[test]
fn microcode_written_past_the_last_entry_is_an_error() {
    // 256 entries fill the RAM; a 257th commit would wrap onto entry 0.
    let b = Bench::new();
    let mut image = r520_entries();
    image.push(image[0]);
    b.upload(&image);
    assert_eq!(b.error(), (ModelState::Error, error_code::UCODE_OVERFLOW));
    // Rewriting the address first is a new upload, not an overflow.
    let b = Bench::new();
    b.load_microcode();
    b.load_microcode();
    assert_eq!(b.error(), (ModelState::Ready, 0));
    assert!(b.gpu.model().microcode_loaded());
}
