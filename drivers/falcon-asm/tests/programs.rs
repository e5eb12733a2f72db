//! The programs assemble and do what their docs say, run on a small interpreter of the §2.10
//! semantics of the instructions they use (§2.10.3 arithmetic and flags, §2.10.4 ld/st,
//! §2.10.5 bra, §2.10.9 xfers with their size and alignment rules, §2.10.10 iord/iowr,
//! §2.10.6 exit), with the method FIFO registers of the IO space (envytools rnndb
//! `falcon.xml`) fed like PFIFO feeds an engine, and a sparse guest memory behind the xfers.
//! Results are compared with what the CPU computes.

use std::collections::{HashMap, VecDeque};

use baregpu_falcon_asm::programs::{self, Image, methods};
use baregpu_falcon_asm::{Instruction, Op, Size, SpecialReg, assemble};

const SCRATCH0: u32 = 0x1000;
const SCRATCH1: u32 = 0x1100;
const FIFO_ENABLE: u32 = 0x1200;
const FIFO_DATA: u32 = 0x1900;
const FIFO_CMD: u32 = 0x1a00;
const FIFO_OCCUPIED: u32 = 0x1c00;
const FIFO_ACK: u32 = 0x1d00;
const SCRATCH2: u32 = 0x2000;
const SCRATCH3: u32 = 0x2100;
/// DMEM of the interpreted falcon (small on purpose: programs must stay inside it).
const DMEM_BYTES: usize = 0x800;

/// One xfer as the interpreter saw it.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Xfer {
    store: bool,
    external: u64,
    bytes: usize,
}

struct Falcon {
    r: [u32; 16],
    sr: [u32; 16],
    z: bool,
    c: bool,
    scratch: HashMap<u32, u32>,
    fifo_enable: u32,
    /// (FIFO_CMD, FIFO_DATA) entries as PFIFO queued them.
    fifo: VecDeque<(u32, u32)>,
    acks: usize,
    dmem: Vec<u8>,
    guest: HashMap<u64, u8>,
    xfers: Vec<Xfer>,
    pc: usize,
    /// INTR_EN (§2.10.8).
    intr_en: u32,
    /// Return addresses of taken interrupts.
    stack: Vec<usize>,
}

enum Stop {
    Exit,
    Budget,
    /// `sleep` with no unmasked interrupt pending (§2.10.6).
    Sleep,
}

/// `$flags` bits (§2.10.2): p0, ie0, is0.
const P0: u32 = 1;
const IE0: u32 = 1 << 16;
const IS0: u32 = 1 << 20;
/// Falcon interrupt line 2, FIFO data available (level, §2.10.8).
const LINE_FIFO: u32 = 1 << 2;
const INTR_EN_SET: u32 = 0x400;

impl Falcon {
    fn new() -> Self {
        Self {
            r: [0; 16],
            sr: [0; 16],
            z: false,
            c: false,
            scratch: HashMap::new(),
            fifo_enable: 0,
            fifo: VecDeque::new(),
            acks: 0,
            dmem: vec![0; DMEM_BYTES],
            guest: HashMap::new(),
            xfers: Vec::new(),
            pc: 0,
            intr_en: 0,
            stack: Vec::new(),
        }
    }

    /// Queues a method as PFIFO delivers it: FIFO_CMD = method >> 2 | subchannel << 11.
    fn method(&mut self, subchannel: u32, method: u32, data: u32) {
        self.fifo.push_back((method >> 2 | subchannel << 11, data));
    }

    fn guest_write(&mut self, addr: u64, bytes: &[u8]) {
        for (k, b) in bytes.iter().enumerate() {
            self.guest.insert(addr + k as u64, *b);
        }
    }

    fn guest_read(&self, addr: u64, len: usize) -> Vec<u8> {
        (0..len as u64).map(|k| *self.guest.get(&(addr + k)).unwrap_or(&0)).collect()
    }

    fn io_read(&self, addr: u32) -> u32 {
        let fifo_on = self.fifo_enable & 2 != 0;
        match addr {
            SCRATCH0 | SCRATCH1 | SCRATCH2 | SCRATCH3 => *self.scratch.get(&addr).unwrap_or(&0),
            FIFO_OCCUPIED if fifo_on => self.fifo.len() as u32,
            FIFO_OCCUPIED => 0,
            FIFO_CMD => self.fifo.front().expect("FIFO_CMD read with the FIFO empty").0,
            FIFO_DATA => self.fifo.front().expect("FIFO_DATA read with the FIFO empty").1,
            other => panic!("read of IO {other:#x}, which this bench does not have"),
        }
    }

    fn io_write(&mut self, addr: u32, value: u32) {
        match addr {
            SCRATCH0 | SCRATCH1 | SCRATCH2 | SCRATCH3 => {
                self.scratch.insert(addr, value);
            }
            FIFO_ENABLE => self.fifo_enable = value,
            INTR_EN_SET => self.intr_en |= value,
            FIFO_ACK => {
                assert_eq!(value, 1, "FIFO_ACK takes 1");
                self.fifo.pop_front().expect("FIFO_ACK with the FIFO empty");
                self.acks += 1;
            }
            other => panic!("write of IO {other:#x}, which this bench does not have"),
        }
    }

    /// An xfer (§2.10.9): external (`$xdbase` << 8) + offset, local address and size from the
    /// second operand; the rules the document states are asserted.
    fn xfer(&mut self, store: bool, offset: u32, local_size: u32) {
        let size = local_size >> 16 & 7;
        assert!(size <= 6, "data xfer size {size} (0-6 only)");
        let bytes = 4usize << size;
        let local = (local_size & 0xffff) as usize;
        let external =
            (u64::from(self.sr[usize::from(SpecialReg::XDBASE.index())]) << 8) + u64::from(offset);
        assert!(external % bytes as u64 == 0, "external {external:#x} not aligned to {bytes}");
        assert!(local.is_multiple_of(bytes), "local {local:#x} not aligned to {bytes}");
        assert!(local + bytes <= DMEM_BYTES, "xfer past DMEM");
        if store {
            let data = self.dmem[local..local + bytes].to_vec();
            self.guest_write(external, &data);
        } else {
            let data = self.guest_read(external, bytes);
            self.dmem[local..local + bytes].copy_from_slice(&data);
        }
        self.xfers.push(Xfer { store, external, bytes });
    }

    fn sub_flags(&mut self, a: u32, b: u32) -> u32 {
        self.c = a < b;
        let d = a.wrapping_sub(b);
        self.z = d == 0;
        d
    }

    fn add_flags(&mut self, a: u32, b: u32, carry: bool) -> u32 {
        let (s1, c1) = a.overflowing_add(b);
        let (s, c2) = s1.overflowing_add(u32::from(carry));
        self.c = c1 || c2;
        self.z = s == 0;
        s
    }

    fn flags(&mut self) -> &mut u32 {
        &mut self.sr[usize::from(SpecialReg::FLAGS.index())]
    }

    /// The FIFO line, pending and enabled (every line is routed to vector 0 here).
    fn fifo_interrupt(&self) -> bool {
        !self.fifo.is_empty() && self.intr_en & LINE_FIFO != 0
    }

    /// Runs until `exit`, a `sleep` nothing wakes, or `steps` instructions; takes the FIFO
    /// interrupt on vector 0 when `ie0` is set (§2.10.8 "Interrupt delivery").
    fn run(&mut self, code: &[u8], steps: usize) -> Stop {
        for _ in 0..steps {
            if *self.flags() & IE0 != 0 && self.fifo_interrupt() {
                self.stack.push(self.pc);
                let f = self.flags();
                *f = (*f & !(IE0 | IS0)) | IS0;
                self.pc = self.sr[usize::from(SpecialReg::IV0.index())] as usize;
            }
            let (i, len) = Instruction::decode(&code[self.pc..]).expect("decodes");
            assert!(i.size.is_none() || i.size == Some(Size::B32), "{i:?}: the programs use b32");
            let (r1, r2, r3) = (usize::from(i.r1), usize::from(i.r2), usize::from(i.r3));
            let imm = i.imm_value() as u32;
            let mut next = self.pc + len;
            match i.op {
                Op::Mov_f0 | Op::Mov_f1 => self.r[r2] = imm,
                Op::Clear_3d => self.r[r2] = 0,
                Op::Add_36 | Op::Add_37 => self.r[r2] = self.add_flags(self.r[r2], imm, false),
                Op::Add_3b => self.r[r2] = self.add_flags(self.r[r2], self.r[r1], false),
                Op::Adc_36 => self.r[r2] = self.add_flags(self.r[r2], imm, self.c),
                Op::Sub_36 | Op::Sub_37 => self.r[r2] = self.sub_flags(self.r[r2], imm),
                Op::Sub_3b => self.r[r2] = self.sub_flags(self.r[r2], self.r[r1]),
                Op::Sub_1x => self.r[r1] = self.sub_flags(self.r[r2], imm),
                Op::Cmpu_30 | Op::Cmpu_31 => drop(self.sub_flags(self.r[r2], imm)),
                Op::Cmpu_38 => drop(self.sub_flags(self.r[r2], self.r[r1])),
                Op::And_f0 | Op::And_f1 => self.r[r2] &= imm,
                Op::And_fd => self.r[r2] &= self.r[r1],
                Op::And_cx => self.r[r1] = self.r[r2] & imm,
                Op::Or_fd => self.r[r2] |= self.r[r1],
                Op::Or_ff => self.r[r3] = self.r[r2] | self.r[r1],
                Op::Shl_36 => self.r[r2] <<= imm & 0x1f,
                Op::Shl_1x => self.r[r1] = self.r[r2] << (imm & 0x1f),
                Op::Shr_36 => self.r[r2] >>= imm & 0x1f,
                Op::Shr_1x => self.r[r1] = self.r[r2] >> (imm & 0x1f),
                Op::Bra_f4 | Op::Bra_f5 => {
                    let taken = match i.cond.bits() {
                        0x0e => true,
                        0x0b => self.z,
                        0x1b => !self.z,
                        0x18 => !self.c,
                        other => panic!("condition {other:#x} not interpreted"),
                    };
                    if taken {
                        next = i.branch_target(self.pc as u32).unwrap() as usize;
                    }
                }
                Op::Iord_cx => self.r[r1] = self.io_read(self.r[r2] + imm * 4),
                Op::Iowr_dx => self.io_write(self.r[r2] + imm * 4, self.r[r1]),
                Op::Iowr_fa => self.io_write(self.r[r2], self.r[r1]),
                Op::Ld_1x => {
                    let a = (self.r[r2] + imm * 4) as usize & !3;
                    self.r[r1] = u32::from_le_bytes(self.dmem[a..a + 4].try_into().unwrap());
                }
                Op::St_38 => {
                    let a = self.r[r2] as usize & !3;
                    self.dmem[a..a + 4].copy_from_slice(&self.r[r1].to_le_bytes());
                }
                Op::MovToSr_fe => self.sr[r1] = self.r[r2],
                Op::Xdld_fa => self.xfer(false, self.r[r2], self.r[r1]),
                Op::Xdst_fa => self.xfer(true, self.r[r2], self.r[r1]),
                Op::Xdwait_f8 => {} // xfers complete at once here
                Op::BsetFlags_f4 => *self.flags() |= 1 << (imm & 0x1f),
                Op::BclrFlags_f4 => *self.flags() &= !(1 << (imm & 0x1f)),
                Op::Sleep_f4 => {
                    assert_eq!(imm, 0, "the programs sleep on $p0");
                    if *self.flags() & P0 != 0 {
                        // Nothing deliverable now (checked above): sleeping until PFIFO.
                        return Stop::Sleep;
                    }
                }
                Op::Iret_f8 => {
                    next = self.stack.pop().expect("iret without an interrupt");
                    let f = self.flags();
                    *f = (*f & !IE0) | u32::from(*f & IS0 != 0) << 16;
                }
                Op::Exit_f8 => return Stop::Exit,
                other => panic!("{other:?} not interpreted"),
            }
            self.pc = next;
        }
        Stop::Budget
    }
}

fn pattern(len: usize, seed: u32) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

#[test]
fn every_program_assembles_into_its_image() {
    let images: [(&str, Image); 4] = [
        ("mailbox_echo", programs::mailbox_echo()),
        ("dmem_checksum", programs::dmem_checksum()),
        ("xfer_memcpy", programs::xfer_memcpy()),
        ("copy_engine", programs::copy_engine()),
    ];
    for ((name, src), (image_name, image)) in programs::ALL.iter().zip(&images) {
        assert_eq!(name, image_name);
        let mut out = [0u8; programs::MAX_CODE];
        let len = assemble(src, &mut out).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(image.code(), &out[..len], "{name}");
        assert_eq!((image.entry, image.data().len()), (0, 0), "{name}");
    }
}

#[test]
fn mailbox_echo_answers_the_request_plus_one() {
    let image = programs::mailbox_echo();
    let mut f = Falcon::new();
    // No request: it keeps polling SCRATCH0.
    assert!(matches!(f.run(image.code(), 1000), Stop::Budget));
    f.scratch.insert(SCRATCH0, 41);
    assert!(matches!(f.run(image.code(), 1000), Stop::Exit));
    assert_eq!((f.scratch[&SCRATCH1], f.scratch[&SCRATCH0]), (42, 0));
}

#[test]
fn dmem_checksum_matches_the_cpu_sum() {
    let image = programs::dmem_checksum();
    let words: Vec<u32> =
        pattern(4 * 100, 7).chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
    for n in [0usize, 1, 37, 100] {
        let mut f = Falcon::new();
        for (k, w) in words.iter().enumerate() {
            f.dmem[k * 4..k * 4 + 4].copy_from_slice(&w.to_le_bytes());
        }
        f.scratch.insert(SCRATCH0, n as u32);
        assert!(matches!(f.run(image.code(), 10_000), Stop::Exit));
        let cpu = words[..n].iter().fold(0u32, |s, w| s.wrapping_add(*w));
        assert_eq!(f.scratch[&SCRATCH1], cpu, "{n} words");
    }
}

/// Runs the memcpy service on one request; returns the falcon afterwards.
fn memcpy(src: u32, dst: u32, len: u32, guest: &[u8]) -> Falcon {
    let mut f = Falcon::new();
    f.guest_write(0, guest);
    f.scratch.insert(SCRATCH0, src);
    f.scratch.insert(SCRATCH1, dst);
    f.scratch.insert(SCRATCH2, len);
    assert!(matches!(f.run(programs::xfer_memcpy().code(), 100_000), Stop::Exit));
    f
}

#[test]
fn xfer_memcpy_copies_like_the_cpu_in_aligned_chunks() {
    let guest = pattern(0x4000, 3);
    // (source, destination, length): page-aligned, word-aligned, mixed alignments.
    for (src, dst, len) in
        [(0x100, 0x2000, 0x400), (0x104, 0x2008, 0x3f4), (0x10, 0x3004, 0x24), (0x80, 0x2080, 0)]
    {
        let f = memcpy(src, dst, len, &guest);
        let mut cpu = guest.clone();
        cpu.copy_within(src as usize..(src + len) as usize, dst as usize);
        assert_eq!(f.guest_read(0, 0x4000), cpu, "{src:#x} -> {dst:#x}, {len:#x} bytes");
        assert_eq!(f.scratch[&SCRATCH3], 1);
        let moved: usize = f.xfers.iter().filter(|x| x.store).map(|x| x.bytes).sum();
        assert_eq!(moved, len as usize, "every byte stored once");
    }
    // Both addresses 256-aligned: whole 256-byte xfers (size 6), one load and one store each.
    let f = memcpy(0x100, 0x2000, 0x400, &guest);
    assert_eq!(f.xfers.len(), 8);
    assert!(f.xfers.iter().all(|x| x.bytes == 0x100));
}

#[test]
fn xfer_memcpy_refuses_unaligned_requests_and_copies_nothing() {
    let guest = pattern(0x4000, 5);
    for (src, dst, len) in [(0x101, 0x2000, 0x40), (0x100, 0x2002, 0x40), (0x100, 0x2000, 0x41)] {
        let f = memcpy(src, dst, len, &guest);
        assert_eq!(f.scratch[&SCRATCH3], 2);
        assert!(f.xfers.is_empty());
        assert_eq!(f.guest_read(0, 0x4000), guest);
    }
}

/// A copy-engine falcon with the image's code, started.
struct CopyEngine {
    f: Falcon,
    code: Vec<u8>,
}

impl CopyEngine {
    fn new() -> Self {
        Self { f: Falcon::new(), code: programs::copy_engine().code().to_vec() }
    }

    /// The methods of one copy, as a driver would submit them on subchannel `subc`.
    #[allow(clippy::too_many_arguments)]
    fn copy(&mut self, subc: u32, src: u64, dst: u64, len: u32, sem: u64, seq: u32, launch: u32) {
        let f = &mut self.f;
        f.method(subc, methods::SRC_ADDRESS_HIGH, (src >> 32) as u32);
        f.method(subc, methods::SRC_ADDRESS_LOW, src as u32);
        f.method(subc, methods::DST_ADDRESS_HIGH, (dst >> 32) as u32);
        f.method(subc, methods::DST_ADDRESS_LOW, dst as u32);
        f.method(subc, methods::LENGTH, len);
        f.method(subc, methods::SEMAPHORE_ADDRESS_HIGH, (sem >> 32) as u32);
        f.method(subc, methods::SEMAPHORE_ADDRESS_LOW, sem as u32);
        f.method(subc, methods::SEMAPHORE_SEQUENCE, seq);
        f.method(subc, methods::LAUNCH, launch);
    }

    /// Runs until every queued method is taken and handled and the firmware sleeps on the
    /// empty FIFO (it never exits, and never sleeps with a method waiting).
    fn drain(&mut self) {
        match self.f.run(&self.code, 10_000_000) {
            Stop::Sleep => assert!(self.f.fifo.is_empty(), "asleep with methods waiting"),
            Stop::Exit => panic!("the firmware exited"),
            Stop::Budget => panic!("the firmware never went to sleep"),
        }
    }

    fn semaphore(&self, addr: u64) -> u32 {
        u32::from_le_bytes(self.f.guest_read(addr, 4).try_into().unwrap())
    }
}

const SRC: u64 = 0x1_0000_1000;
const DST: u64 = 0x2_0040_0000;
const SEM: u64 = 0x1_0000_0010;

#[test]
fn copy_engine_copies_a_buffer_like_the_cpu_and_releases_the_semaphore() {
    let mut ce = CopyEngine::new();
    let data = pattern(0x1234, 9);
    ce.f.guest_write(SRC, &data);
    ce.f.method(0, 0, 0xcafe0); // OBJECT: the bound object's address, ignored
    ce.copy(0, SRC + 4, DST + 8, 0x1228, SEM, 0x1111_0001, methods::LAUNCH_RELEASE_SEMAPHORE);
    let queued = ce.f.fifo.len();
    ce.drain();
    assert_eq!(ce.f.acks, queued, "every method acknowledged once");
    assert_eq!(ce.f.guest_read(DST + 8, 0x1228), data[4..4 + 0x1228]);
    assert_eq!(ce.f.guest_read(DST, 8), [0; 8], "nothing before the destination");
    assert_eq!(ce.f.guest_read(DST + 8 + 0x1228, 8), [0; 8], "nothing past the length");
    assert_eq!(ce.semaphore(SEM), 0x1111_0001);
    // The release is the last store, after all the data.
    let last = ce.f.xfers.last().unwrap();
    assert_eq!((last.store, last.external, last.bytes), (true, SEM, 4));
    assert_eq!(ce.f.fifo_enable & 2, 2, "PFIFO access enabled");
}

#[test]
fn copy_engine_carries_into_the_address_high_word() {
    // The source crosses a 4 GiB boundary: low words wrap, high words carry.
    let mut ce = CopyEngine::new();
    let src = 0x1_ffff_ff00u64;
    let data = pattern(0x300, 11);
    ce.f.guest_write(src, &data);
    ce.copy(1, src, DST, 0x300, SEM, 7, methods::LAUNCH_RELEASE_SEMAPHORE);
    ce.drain();
    assert_eq!(ce.f.guest_read(DST, 0x300), data);
    assert_eq!(ce.semaphore(SEM), 7);
}

#[test]
fn copy_engine_runs_launches_in_order_and_releases_only_when_asked() {
    let mut ce = CopyEngine::new();
    let a = pattern(0x100, 1);
    let b = pattern(0x80, 2);
    ce.f.guest_write(SRC, &a);
    ce.f.guest_write(SRC + 0x100, &b);
    ce.copy(0, SRC, DST, 0x100, SEM, 1, methods::LAUNCH_RELEASE_SEMAPHORE);
    ce.f.method(0, 0x104, 0x55); // a method of no copy-engine meaning: ignored
    ce.copy(0, SRC + 0x100, DST + 0x100, 0x80, SEM, 2, 0); // no release
    ce.drain();
    assert_eq!(ce.f.guest_read(DST, 0x100), a);
    assert_eq!(ce.f.guest_read(DST + 0x100, 0x80), b);
    assert_eq!(ce.semaphore(SEM), 1, "the second launch did not release");
    ce.copy(0, SRC, DST + 0x1000, 0x40, SEM, 3, methods::LAUNCH_RELEASE_SEMAPHORE);
    ce.drain();
    assert_eq!(ce.semaphore(SEM), 3);
}

#[test]
fn copy_engine_refuses_a_misaligned_launch_and_keeps_serving() {
    let mut ce = CopyEngine::new();
    let data = pattern(0x40, 4);
    ce.f.guest_write(SRC, &data);
    ce.copy(0, SRC + 2, DST, 0x40, SEM, 5, methods::LAUNCH_RELEASE_SEMAPHORE);
    ce.drain();
    assert_eq!(ce.f.scratch[&SCRATCH3], methods::ERROR_MISALIGNED);
    assert!(ce.f.xfers.is_empty(), "nothing copied, no release");
    ce.copy(0, SRC, DST, 0x40, SEM + 2, 6, methods::LAUNCH_RELEASE_SEMAPHORE);
    ce.drain();
    assert_eq!(ce.f.guest_read(DST, 0x40), data, "a misaligned semaphore does not stop the copy");
    assert_eq!(ce.semaphore(SEM + 2), 0, "but is not written");
    ce.copy(0, SRC, DST + 0x100, 0x40, SEM, 8, methods::LAUNCH_RELEASE_SEMAPHORE);
    ce.drain();
    assert_eq!(ce.f.guest_read(DST + 0x100, 0x40), data);
    assert_eq!(ce.semaphore(SEM), 8);
}
