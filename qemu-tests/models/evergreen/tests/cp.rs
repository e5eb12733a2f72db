//! The command processor, IH ring and CP DMA, tested from amd-evergreen-cayman-acceleration §9
//! (each test quotes the section it checks) and the public facts the crate docs name. PM4
//! dwords are written by hand from the §9.1 bit layouts (no encoder crate); both chips run
//! every test that is not chip-specific.
//!
//! Semantics are checked run to idle (`Bench`); how work spreads over ticks with a device whose
//! engines advance only when the test ticks them (`Stepper`).

mod common;

use baregpu_hal::RegisterIo;
use evergreen_model::{
    Asic, DWORDS_PER_TICK, Engine, EvergreenModel, Faults, IRQ_LINE, MAX_UNITS_PER_TICK,
    SHADER_UNITS_PER_TICK, error_code as ec,
};
use gpu_device_model::{Device, InProcess, InProcessOptions, Pacing, VecMemory};
use gpu_mailbox::{ModelState, Op, Status};

// Register offsets (Linux radeon evergreend.h, as the register database holds them).
const CP_ME_CNTL: u32 = 0x86D8;
const PFP_ADDR: u32 = 0xC150;
const PFP_DATA: u32 = 0xC154;
const ME_RADDR: u32 = 0xC158;
const ME_WADDR: u32 = 0xC15C;
const ME_DATA: u32 = 0xC160;
const RLC_CNTL: u32 = 0x3F00;
const RLC_ADDR: u32 = 0x3F2C;
const RLC_DATA: u32 = 0x3F30;
const RB_BASE: u32 = 0xC100;
const RB_CNTL: u32 = 0xC104;
const RB_RPTR_WR: u32 = 0xC108;
const RB_RPTR_ADDR: u32 = 0xC10C;
const RB_RPTR_ADDR_HI: u32 = 0xC110;
const RB_WPTR: u32 = 0xC114;
const RB_RPTR: u32 = 0x8700;
const CP_INT_CNTL: u32 = 0xC124;
const SCRATCH_REG0: u32 = 0x8500;
const SCRATCH_UMSK: u32 = 0x8540;
const SCRATCH_ADDR: u32 = 0x8544;
const GRBM_SOFT_RESET: u32 = 0x8020;
const GRBM_STATUS: u32 = 0x8010;
const IH_RB_CNTL: u32 = 0x3E00;
const IH_RB_BASE: u32 = 0x3E04;
const IH_RB_RPTR: u32 = 0x3E08;
const IH_RB_WPTR: u32 = 0x3E0C;
const IH_WPTR_ADDR_HI: u32 = 0x3E10;
const IH_WPTR_ADDR_LO: u32 = 0x3E14;
const IH_CNTL: u32 = 0x3E18;
const HALT: u32 = 1 << 28 | 1 << 26;

// Guest memory layout (the shader fixtures use the first MiB).
const RING: u32 = 0x20_0000;
const RPTR_COPY: u32 = 0x30_0000;
const SCRATCH_COPY: u32 = 0x30_1000;
const IH_RING: u32 = 0x31_0000;
const IH_WPTR_COPY: u32 = 0x30_2000;
const FENCE: u32 = 0x30_3000;
const IB: u32 = 0x40_0000;
const DATA: u32 = 0x50_0000;
const SENTINEL: u32 = 0xFFFF_FFFF;

// --- PM4 by hand (§9.1) ----------------------------------------------------------------------

/// §9.1.4 type-3 header: TYPE 3 in 31:30, COUNT = body dwords - 1 in 29:16, IT_OPCODE 15:8,
/// SHADER_TYPE bit 1, PREDICATE bit 0.
fn t3(opcode: u32, body: u32) -> u32 {
    3 << 30 | (body - 1) << 16 | opcode << 8
}
/// The compute version (bit 1, §3.1 "bit 1 in the PM4 packet 3 header needs to be set").
fn t3c(opcode: u32, body: u32) -> u32 {
    t3(opcode, body) | 2
}
/// §9.1.1 type-0 header: COUNT 29:16, BASE_INDEX = register dword index 15:0.
fn t0(reg: u32, n: u32) -> u32 {
    (n - 1) << 16 | reg >> 2
}
/// §9.1.3: a type-2 filler.
const T2: u32 = 2 << 30;

// Opcodes (Linux radeon evergreend.h PACKET3_*).
const NOP: u32 = 0x10;
const DEALLOC_STATE: u32 = 0x14;
const DISPATCH_DIRECT: u32 = 0x15;
const DISPATCH_INDIRECT: u32 = 0x16;
const SET_BASE: u32 = 0x11;
const SET_PREDICATION: u32 = 0x20;
const COND_EXEC: u32 = 0x22;
const INDIRECT_BUFFER: u32 = 0x32;
const WAIT_REG_MEM: u32 = 0x3C;
const MEM_WRITE: u32 = 0x3D;
const CP_DMA: u32 = 0x41;
const SURFACE_SYNC: u32 = 0x43;
const ME_INITIALIZE: u32 = 0x44;
const EVENT_WRITE: u32 = 0x46;
const EVENT_WRITE_EOP: u32 = 0x47;
const SET_CONFIG_REG: u32 = 0x68;
const SET_CONTEXT_REG: u32 = 0x69;
const SET_LOOP_CONST: u32 = 0x6C;
const SET_RESOURCE: u32 = 0x6D;

/// §9.2.1: ME_INITIALIZE, 6 body dwords: DW2 1 (reset control), DW3 0, DW4 MAX_CONTEXT 7,
/// DW5 DEV_ID 1 << 16, DW6 0, DW7 0.
fn me_initialize() -> Vec<u32> {
    me_initialize_as(1)
}

/// ME_INITIALIZE giving this GPU `device_id` (DW5 Device-ID 23:16).
fn me_initialize_as(device_id: u32) -> Vec<u32> {
    vec![t3(ME_INITIALIZE, 6), 1, 0, 7, device_id << 16, 0, 0]
}

/// §9.4.14: SET_CONFIG_REG, REG_OFFSET = (reg - 0x8000) >> 2, then the data.
fn set_config(reg: u32, data: &[u32]) -> Vec<u32> {
    let mut v = vec![t3(SET_CONFIG_REG, 1 + data.len() as u32), (reg - 0x8000) >> 2];
    v.extend_from_slice(data);
    v
}

/// §9.4.15: SET_CONTEXT_REG (compute), REG_OFFSET = (reg - 0x28000) >> 2.
fn set_context(reg: u32, data: &[u32]) -> Vec<u32> {
    let mut v = vec![t3c(SET_CONTEXT_REG, 1 + data.len() as u32), (reg - 0x2_8000) >> 2];
    v.extend_from_slice(data);
    v
}

/// §9.6.2: EVENT_WRITE_EOP with CACHE_FLUSH_AND_INV_EVENT_TS (0x14) index 5 (DW2 = 0x514),
/// ADDRESS_LO, DATA_SEL 31:29 | INT_SEL 25:24 | ADDRESS_HI, DATA_LO, DATA_HI.
fn eop(address: u32, data_sel: u32, int_sel: u32, value: u64) -> Vec<u32> {
    vec![
        t3(EVENT_WRITE_EOP, 5),
        0x514,
        address,
        data_sel << 29 | int_sel << 24,
        value as u32,
        (value >> 32) as u32,
    ]
}

fn firmware(asic: Asic, engine: Engine) -> Vec<u32> {
    let path = format!("/lib/firmware/{}", asic.image(engine).file);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| {
        panic!("{path}: {e}; install it with `bash scripts/setup.sh` (firmware-amd-graphics)")
    });
    bytes.chunks_exact(4).map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]])).collect()
}

// --- bench ------------------------------------------------------------------------------------

struct Bench {
    gpu: InProcess<EvergreenModel>,
    asic: Asic,
    wptr: u32,
    ring_dwords: u32,
}

impl Bench {
    fn new(asic: Asic) -> Bench {
        Self::with_faults(asic, Faults::default())
    }

    fn with_faults(asic: Asic, faults: Faults) -> Bench {
        let options =
            InProcessOptions { pacing: Some(Pacing::RunToIdle), ..InProcessOptions::default() };
        let gpu =
            InProcess::with_options(EvergreenModel::with_faults(asic, faults), options).unwrap();
        Bench { gpu, asic, wptr: 0, ring_dwords: 0 }
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

    fn upload(&self, engine: Engine, words: &[u32]) {
        let (addr, data) = match engine {
            Engine::Pfp => (PFP_ADDR, PFP_DATA),
            Engine::Me => (ME_WADDR, ME_DATA),
            Engine::Rlc => (RLC_ADDR, RLC_DATA),
        };
        self.wr(addr, 0);
        for &w in words {
            self.wr(data, w);
        }
    }

    /// The chip's real PFP, ME and RLC images (CP halted, its power-on state), RLC enabled.
    fn load_microcode(&self) {
        for engine in [Engine::Pfp, Engine::Me, Engine::Rlc] {
            self.upload(engine, &firmware(self.asic, engine));
        }
        self.wr(RLC_CNTL, 1);
    }

    /// A ring of 2^(bufsz+1) dwords at RING (RB_BUFSZ = log2 quad-words), write-back to
    /// RPTR_COPY every 2^(blksz+1) dwords.
    fn ring(&mut self, bufsz: u32, blksz: u32) {
        self.poke(RPTR_COPY, &[SENTINEL]);
        self.wr(RB_CNTL, bufsz | blksz << 8);
        self.wr(RB_BASE, RING >> 8);
        self.wr(RB_RPTR_ADDR, RPTR_COPY);
        self.wr(RB_RPTR_ADDR_HI, 0);
        self.wr(RB_WPTR, 0);
        self.ring_dwords = 1 << (bufsz + 1);
    }

    /// Microcode, a 1024-dword ring (block 4 dwords), un-halted, ME_INITIALIZE done.
    fn running(asic: Asic) -> Bench {
        Self::running_as(asic, 1)
    }

    /// [`Bench::running`] with ME_INITIALIZE's Device-ID `device_id`.
    fn running_as(asic: Asic, device_id: u32) -> Bench {
        let mut b = Bench::new(asic);
        b.load_microcode();
        b.ring(9, 1);
        b.wr(CP_ME_CNTL, 0);
        b.submit(&me_initialize_as(device_id));
        assert!(b.gpu.model().me_initialized(), "{asic:?}");
        b
    }

    /// IH ring of 2^log2_dwords dwords at IH_RING with write-back, overflow and interrupts on;
    /// CP EOP interrupts enabled.
    fn ih(&self, log2_dwords: u32) {
        self.wr(IH_RB_BASE, IH_RING >> 8);
        self.wr(IH_WPTR_ADDR_LO, IH_WPTR_COPY);
        self.wr(IH_WPTR_ADDR_HI, 0);
        self.wr(IH_RB_RPTR, 0);
        // IH_RB_ENABLE 0 | IH_IB_SIZE 5:1 | IH_WPTR_WRITEBACK_ENABLE 8 | OVERFLOW_ENABLE 16.
        self.wr(IH_RB_CNTL, 1 | log2_dwords << 1 | 1 << 8 | 1 << 16);
        self.wr(IH_CNTL, 1);
        self.wr(CP_INT_CNTL, 1 << 26);
    }

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

    fn ok(&self) {
        assert_eq!(self.error(), (ModelState::Ready, 0), "{:?}", self.asic);
        assert_eq!(self.gpu.model().cp_error(), None);
    }

    fn failed_with(&self, code: u32) {
        assert_eq!(self.error(), (ModelState::Error, code), "{:?}", self.asic);
    }
}

/// A device whose engines advance only when the test ticks them.
struct Stepper {
    dev: Device<EvergreenModel>,
}

impl Stepper {
    fn running(asic: Asic) -> Stepper {
        let memory = VecMemory::new(16 << 20).unwrap();
        let mut dev = Device::new(EvergreenModel::new(asic), Box::new(memory)).unwrap();
        dev.set_pacing(Pacing::Threaded { ticks_per_ms: 1 });
        assert_eq!(dev.handle(Op::ConfigWrite as u32, 0, 4, 0b110).0, Status::Ok);
        let mut s = Stepper { dev };
        for engine in [Engine::Pfp, Engine::Me] {
            let (addr, data) =
                if engine == Engine::Pfp { (PFP_ADDR, PFP_DATA) } else { (ME_WADDR, ME_DATA) };
            s.wr(addr, 0);
            for w in firmware(asic, engine) {
                s.wr(data, w);
            }
        }
        s.wr(RB_CNTL, 9 | 1 << 8);
        s.wr(RB_BASE, RING >> 8);
        s.wr(RB_RPTR_ADDR, RPTR_COPY);
        s.wr(CP_ME_CNTL, 0);
        s
    }

    fn wr(&mut self, offset: u32, value: u32) {
        assert_eq!(self.dev.handle(Op::MmioWrite as u32, 0, offset, value).0, Status::Ok);
    }

    fn rd(&mut self, offset: u32) -> u32 {
        self.dev.handle(Op::MmioRead as u32, 0, offset, 0).1
    }

    fn put(&mut self, address: u32, words: &[u32]) {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        self.dev.memory_mut().write(u64::from(address), &bytes).unwrap();
    }

    fn peek(&self, address: u32) -> u32 {
        let mut b = [0u8; 4];
        self.dev.memory().read(u64::from(address), &mut b).unwrap();
        u32::from_le_bytes(b)
    }
}

// --- identity, registers, microcode -----------------------------------------------------------

#[test]
fn pci_identity_is_the_chip_with_a_256k_register_bar() {
    for (asic, device) in [(Asic::Cypress, 0x6898), (Asic::Cayman, 0x6718)] {
        let b = Bench::new(asic);
        let f = baregpu_hal::pci::probe(&b.gpu, b.gpu.pci_address()).unwrap();
        assert_eq!((f.vendor, f.device, f.class), (0x1002, device, 0x03_0000));
        assert_eq!(f.memory_bar(0).map(|(_, size)| size), Some(0x4_0000));
    }
}

#[test]
fn register_writes_are_masked_to_their_fields_and_holes_are_counted() {
    let b = Bench::new(Asic::Cypress);
    // CP_RB_CNTL fields (Linux radeon evergreend.h): RB_BUFSZ 5:0, RB_BLKSZ 13:8, BUF_SWAP
    // 17:16, RB_NO_UPDATE 27, RB_RPTR_WR_ENA 31.
    b.wr(RB_CNTL, u32::MAX);
    assert_eq!(b.rd(RB_CNTL), 0x8803_3F3F);
    // The power-on CP_ME_CNTL halts both engines.
    assert_eq!(b.rd(CP_ME_CNTL), HALT);
    // A hole (no register at 0x8004) reads 0 and counts a dropped write.
    b.wr(0x8004, 0x1234);
    assert_eq!(b.rd(0x8004), 0);
    assert_eq!(b.gpu.model().stats().writes_dropped, 1);
    // Cayman's SX_SCATTER_EXPORT_BASE (0x28358) does not exist on Cypress, and vice versa
    // for SX_MEMORY_EXPORT_BASE (0x9010) on Cayman.
    b.wr(0x2_8358, 0x55);
    assert_eq!(b.rd(0x2_8358), 0);
    let c = Bench::new(Asic::Cayman);
    c.wr(0x2_8358, 0x55);
    c.wr(0x9010, 0x66);
    assert_eq!((c.rd(0x2_8358), c.rd(0x9010)), (0x55, 0));
}

#[test]
fn microcode_ports_auto_increment_and_read_back() {
    for asic in Asic::ALL {
        let b = Bench::new(asic);
        b.load_microcode();
        for engine in [Engine::Pfp, Engine::Me, Engine::Rlc] {
            assert_eq!(
                b.gpu.model_mut().microcode(engine).map(|k| k.file),
                Some(asic.image(engine).file)
            );
        }
        // Read-back from word 0: PFP and RLC share one address register, ME reads through
        // CP_ME_RAM_RADDR; each data read advances.
        let pfp = firmware(asic, Engine::Pfp);
        b.wr(PFP_ADDR, 0);
        assert_eq!([b.rd(PFP_DATA), b.rd(PFP_DATA), b.rd(PFP_DATA)], [pfp[0], pfp[1], pfp[2]]);
        assert_eq!(b.rd(PFP_ADDR), 3);
        let me = firmware(asic, Engine::Me);
        b.wr(ME_RADDR, 5);
        assert_eq!([b.rd(ME_DATA), b.rd(ME_DATA)], [me[5], me[6]]);
        let rlc = firmware(asic, Engine::Rlc);
        b.wr(RLC_ADDR, rlc.len() as u32 - 1);
        assert_eq!(b.rd(RLC_DATA), rlc[rlc.len() - 1]);
        b.ok();
    }
}

#[test]
fn unknown_microcode_runs_nothing() {
    // The CP parses PM4 only with the chip's known PFP and ME images: reversed, one bit
    // flipped, truncated (zero padded) and the other chip's images all leave the ring
    // untouched.
    for asic in Asic::ALL {
        let other = if asic == Asic::Cypress { Asic::Cayman } else { Asic::Cypress };
        let me = firmware(asic, Engine::Me);
        let mut reversed = me.clone();
        reversed.reverse();
        let mut flipped = me.clone();
        flipped[100] ^= 1 << 7;
        let truncated = me[..me.len() - 16].to_vec();
        // As much of the other chip's image as the RAM holds (more is an overflow).
        let mut other_me = firmware(other, Engine::Me);
        other_me.truncate(me.len());
        for (what, image) in [
            ("reversed", reversed),
            ("flipped", flipped),
            ("truncated", truncated),
            ("other", other_me),
        ] {
            let mut b = Bench::new(asic);
            b.load_microcode();
            b.upload(Engine::Me, &vec![0; me.len()]);
            b.upload(Engine::Me, &image);
            b.ring(9, 1);
            b.wr(CP_ME_CNTL, 0);
            b.submit(&me_initialize());
            assert_eq!(b.rd(RB_RPTR), 0, "{asic:?} {what}: nothing fetched");
            assert_eq!(b.peek(RPTR_COPY), SENTINEL, "{asic:?} {what}: no write-back");
            assert!(b.gpu.model_mut().microcode(Engine::Me).is_none());
            b.ok();
        }
    }
}

#[test]
fn microcode_written_while_running_is_an_error() {
    for asic in Asic::ALL {
        let b = Bench::new(asic);
        b.load_microcode();
        b.wr(CP_ME_CNTL, 0);
        b.wr(PFP_ADDR, 0);
        b.wr(PFP_DATA, 0);
        b.failed_with(ec::UCODE_WRITE_WHILE_RUNNING);
        // The RLC's RAM while the RLC runs.
        let b = Bench::new(asic);
        b.wr(RLC_CNTL, 1);
        b.wr(RLC_DATA, 0);
        b.failed_with(ec::UCODE_WRITE_WHILE_RUNNING);
    }
}

// --- ring, packets ---------------------------------------------------------------------------

#[test]
fn ring_test_writes_a_scratch_register_and_the_read_pointer_back() {
    // §9.4.14: SET_CONFIG_REG writes 0x2000 + REG_OFFSET; SCRATCH_REG0 (0x8500) has offset
    // 0x140. With SCRATCH_UMSK bit 0 the value is copied to SCRATCH_ADDR << 8.
    for asic in Asic::ALL {
        let mut b = Bench::running(asic);
        b.wr(SCRATCH_ADDR, SCRATCH_COPY >> 8);
        b.wr(SCRATCH_UMSK, 1);
        b.submit(&[t3(SET_CONFIG_REG, 2), 0x140, 0xCAFE_DEAD]);
        assert_eq!(b.rd(SCRATCH_REG0), 0xCAFE_DEAD);
        assert_eq!(b.peek(SCRATCH_COPY), 0xCAFE_DEAD);
        assert_eq!(b.rd(RB_RPTR), 10);
        assert_eq!(b.peek(RPTR_COPY), 10, "written back when the ring ran empty");
        assert_eq!(b.rd(GRBM_STATUS) >> 31, 0, "idle");
        assert_eq!(b.gpu.model().stats().writes_dropped, 0);
        b.ok();
    }
}

#[test]
fn packets_before_me_initialize_are_an_error() {
    // §9.2.1: ME_INITIALIZE "should be sent to the CP immediately after loading the
    // microcode"; the model refuses any other packet first (NOP padding aside).
    for asic in Asic::ALL {
        let mut b = Bench::new(asic);
        b.load_microcode();
        b.ring(9, 1);
        b.wr(CP_ME_CNTL, 0);
        b.submit(&[t3(NOP, 1), 0, t3(SET_CONFIG_REG, 2), 0x140, 1]);
        b.failed_with(ec::ME_NOT_INITIALIZED);
        // MAX_CONTEXT 0 "is not valid".
        let mut b = Bench::new(asic);
        b.load_microcode();
        b.ring(9, 1);
        b.wr(CP_ME_CNTL, 0);
        b.submit(&[t3(ME_INITIALIZE, 6), 1, 0, 0, 0, 0, 0]);
        b.failed_with(ec::INVALID_PACKET);
    }
}

#[test]
fn packet_types_and_counts_are_checked() {
    for asic in Asic::ALL {
        // §9.1.3: type-2 fillers are skipped; §9.1.1: type 0 writes consecutive registers.
        let mut b = Bench::running(asic);
        b.submit(&[T2, T2, t0(SCRATCH_REG0 + 4, 2), 11, 22, T2]);
        assert_eq!((b.rd(SCRATCH_REG0 + 4), b.rd(SCRATCH_REG0 + 8)), (11, 22));
        b.ok();
        // §9.1.2: type 1 is not supported.
        let mut b = Bench::running(asic);
        b.submit(&[1 << 30]);
        b.failed_with(ec::INVALID_PACKET);
        // §9.6.2: EVENT_WRITE_EOP has 5 body dwords; COUNT 3 is a bad packet.
        let mut b = Bench::running(asic);
        b.submit(&[t3(EVENT_WRITE_EOP, 4), 0x514, FENCE, 1 << 29, 1]);
        b.failed_with(ec::INVALID_PACKET);
        // An opcode neither chip has.
        let mut b = Bench::running(asic);
        b.submit(&[t3(0x99, 1), 0]);
        b.failed_with(ec::UNKNOWN_OPCODE);
        // §9.4.2 DEALLOC_STATE is Cayman's, with the compute bit.
        let mut b = Bench::running(asic);
        b.submit(&[t3c(DEALLOC_STATE, 1), 0]);
        match asic {
            Asic::Cypress => b.failed_with(ec::UNKNOWN_OPCODE),
            Asic::Cayman => b.ok(),
        }
        // §9.6.1: a 2-dword event (CS_PARTIAL_FLUSH 0x07 index 4) with 4 dwords is bad.
        let mut b = Bench::running(asic);
        b.submit(&[t3(EVENT_WRITE, 1), 0x407, t3(EVENT_WRITE, 3), 0x407, 0, 0]);
        b.failed_with(ec::INVALID_PACKET);
        assert_eq!(
            b.gpu.model().register(0x2_8A90),
            0x07,
            "the first one reached VGT_EVENT_INITIATOR"
        );
    }
}

#[test]
fn set_packets_stay_inside_their_range() {
    for asic in Asic::ALL {
        // §9.4.14: the config range ends at 0xAC00 (Linux radeon evergreend.h); a packet whose
        // last register is 0xAC00 is out.
        let mut b = Bench::running(asic);
        b.submit(&[t3(SET_CONFIG_REG, 3), (0xABFC - 0x8000) >> 2, 1, 2]);
        b.failed_with(ec::REG_RANGE);
        // §9.4.14: REG_OFFSET bits 31:16 "must be programmed to zero".
        let mut b = Bench::running(asic);
        b.submit(&[t3(SET_CONFIG_REG, 2), 1 << 16 | 0x140, 1]);
        b.failed_with(ec::INVALID_PACKET);
        // §9.4.15: SET_CONTEXT_REG reaches 0x28000 + 4 * offset: VGT_DISPATCH_INITIATOR 0x28B74.
        let mut b = Bench::running(asic);
        b.submit(&set_context(0x2_8B74, &[1]));
        assert_eq!(b.gpu.model().register(0x2_8B74), 1);
        // §9.4.18: SET_RESOURCE, 8 dwords of resource 817 at 0x30000 + 817 * 32.
        let words: Vec<u32> = (1..=8).collect();
        let mut p = vec![t3c(SET_RESOURCE, 9), 817 * 8];
        p.extend_from_slice(&words);
        b.submit(&p);
        assert_eq!(b.gpu.model().register(0x3_0000 + 817 * 32 + 28), 8);
        assert_eq!(b.gpu.model().stats().writes_dropped, 0, "a valid stream drops nothing");
        // Inside the context range but no register (0x28004): stored nowhere, counted.
        b.submit(&set_context(0x2_8004, &[0xBAD]));
        assert_eq!(b.gpu.model().stats().writes_dropped, 1);
        b.ok();
    }
}

#[test]
fn indirect_buffers_run_and_packets_may_not_straddle_their_end() {
    // §9.3.1: IB_BASE_LO 31:2, IB_BASE_HI 7:0, IB_SIZE 19:0 dwords.
    for asic in Asic::ALL {
        let mut b = Bench::running(asic);
        b.poke(IB, &[t3(SET_CONFIG_REG, 2), 0x141, 0x1B1B]);
        b.submit(&[t3(INDIRECT_BUFFER, 3), IB, 0, 3]);
        assert_eq!(b.rd(SCRATCH_REG0 + 4), 0x1B1B);
        assert_eq!(b.gpu.model().stats().ibs_started, 1);
        b.ok();
        // An IB of 2 dwords that holds the first 2 of a 3-dword packet.
        let mut b = Bench::running(asic);
        b.poke(IB, &[t3(SET_CONFIG_REG, 2), 0x141, 0x1B1B]);
        b.submit(&[t3(INDIRECT_BUFFER, 3), IB, 0, 2]);
        b.failed_with(ec::INVALID_PACKET);
        // IB1 -> IB2 is fine, a third level is not.
        let mut b = Bench::running(asic);
        b.poke(IB, &[t3(INDIRECT_BUFFER, 3), IB + 0x100, 0, 4]);
        b.poke(IB + 0x100, &[t3(INDIRECT_BUFFER, 3), IB + 0x200, 0, 3]);
        b.poke(IB + 0x200, &[t3(SET_CONFIG_REG, 2), 0x141, 1]);
        b.submit(&[t3(INDIRECT_BUFFER, 3), IB, 0, 4]);
        b.failed_with(ec::IB_NESTING);
    }
}

#[test]
fn fences_write_32_and_64_bit_data_and_interrupt_through_the_ih_ring() {
    // §9.6.2: DATA_SEL 1 sends DATA_LO, 2 the 64-bit data; INT_SEL 2 interrupts when the write
    // is confirmed. The IH vector: source id 181 (Linux radeon evergreen_irq_process).
    for asic in Asic::ALL {
        let mut b = Bench::running(asic);
        b.ih(6); // 64 dwords: 16 vectors of 16 bytes
        b.poke(FENCE, &[SENTINEL; 4]);
        b.submit(&eop(FENCE, 1, 0, 0x1_0000_0007));
        assert_eq!([b.peek(FENCE), b.peek(FENCE + 4)], [7, SENTINEL]);
        assert_eq!(b.gpu.irq_status() & IRQ_LINE, 0, "INT_SEL 0: no interrupt");
        b.submit(&[t3(SURFACE_SYNC, 4), 0x0B80_0000 | 1 << 23, 0xFFFF_FFFF, 0, 10]);
        b.submit(&eop(FENCE + 8, 2, 2, 0x1234_5678_9ABC_DEF0));
        assert_eq!([b.peek(FENCE + 8), b.peek(FENCE + 12)], [0x9ABC_DEF0, 0x1234_5678]);
        assert_eq!([b.peek(IH_RING), b.peek(IH_RING + 4)], [181, 0]);
        assert_eq!(b.rd(IH_RB_WPTR), 16);
        assert_eq!(b.peek(IH_WPTR_COPY), 16);
        assert_ne!(b.gpu.irq_status() & IRQ_LINE, 0);
        // The driver consumed the vector: the line drops.
        b.wr(IH_RB_RPTR, 16);
        b.gpu.ack_irq(IRQ_LINE);
        assert_eq!(b.gpu.irq_status() & IRQ_LINE, 0);
        // DATA_SEL 3: the 64-bit GPU clock, which advances.
        b.submit(&eop(FENCE, 3, 0, 0));
        let first = u64::from(b.peek(FENCE)) | u64::from(b.peek(FENCE + 4)) << 32;
        b.submit(&eop(FENCE, 3, 0, 0));
        let second = u64::from(b.peek(FENCE)) | u64::from(b.peek(FENCE + 4)) << 32;
        assert!(first > 0 && second > first, "{first} {second}");
        // A QWORD fence address must be 8-byte aligned (§9.6.2 ADDRESS_LO "[31:3]").
        b.submit(&eop(FENCE + 4, 2, 0, 1));
        b.failed_with(ec::INVALID_PACKET);
    }
}

#[test]
fn a_full_ih_ring_sets_overflow_and_keeps_the_newest_vectors() {
    // IH_IB_SIZE 4: 16 dwords = 4 vectors, one slot always free: the fourth EOP finds it full.
    for asic in Asic::ALL {
        let mut b = Bench::running(asic);
        b.ih(4);
        for i in 0..4 {
            b.submit(&eop(FENCE, 1, 2, i));
        }
        let wptr = b.rd(IH_RB_WPTR);
        assert_eq!(wptr & 1, 1, "RB_OVERFLOW");
        assert_eq!(wptr & !1, 0, "the write pointer wrapped onto the read pointer");
        // Linux evergreen_get_ih_wptr clears it with IH_WPTR_OVERFLOW_CLEAR (bit 31).
        let cntl = b.rd(IH_RB_CNTL);
        b.wr(IH_RB_CNTL, cntl | 1 << 31);
        assert_eq!(b.rd(IH_RB_WPTR) & 1, 0);
        assert_eq!(b.gpu.model().stats().ih_entries, 4);
        b.ok();
    }
}

#[test]
fn wait_reg_mem_waits_for_memory_and_polls_once_per_tick() {
    // §9.6.8: MEM_SPACE 1, FUNCTION 3 (=), masked value against the reference.
    for asic in Asic::ALL {
        let mut b = Bench::running(asic);
        b.poke(DATA, &[0]);
        // POLL_INTERVAL 4, the shortest: a poll per tick, so each access sees the next poll.
        b.submit(&[t3(WAIT_REG_MEM, 6), 1 << 4 | 3, DATA, 0, 0x40, 0xF0, 4]);
        b.submit(&set_config(SCRATCH_REG0, &[0x77]));
        assert_eq!(b.rd(SCRATCH_REG0), 0, "still waiting");
        b.poke(DATA, &[0x4F]);
        // Any register access gives the engines time again (run to idle, after the access).
        let _ = b.rd(GRBM_STATUS);
        assert_eq!(b.rd(SCRATCH_REG0), 0x77);
        b.ok();
        // MEM_SPACE 0: POLL_ADDRESS_LO 15:0 is the register's dword address (SCRATCH_REG1
        // 0x8504 >> 2); FUNCTION 5 (>=), the host writes the register later.
        b.submit(&[t3(WAIT_REG_MEM, 6), 5, (SCRATCH_REG0 + 4) >> 2, 0, 3, 0xFF, 4]);
        b.submit(&set_config(SCRATCH_REG0 + 8, &[0x88]));
        assert_eq!(b.rd(SCRATCH_REG0 + 8), 0, "still waiting on the register");
        assert_eq!(b.rd(GRBM_STATUS) >> 29 & 5, 5, "GUI_ACTIVE and CP_BUSY while waiting");
        b.wr(SCRATCH_REG0 + 4, 3);
        let _ = b.rd(GRBM_STATUS);
        assert_eq!(b.rd(SCRATCH_REG0 + 8), 0x88);
        b.ok();
        // §9.6.8: "If ENGINE = PFP, only Memory is valid".
        let mut b = Bench::running(asic);
        b.submit(&[t3(WAIT_REG_MEM, 6), 1 << 8 | 5, SCRATCH_REG0 >> 2, 0, 0, 0, 10]);
        b.failed_with(ec::INVALID_PACKET);
        // FUNCTION 111 is reserved.
        let mut b = Bench::running(asic);
        b.submit(&[t3(WAIT_REG_MEM, 6), 1 << 4 | 7, DATA, 0, 0, 0, 10]);
        b.failed_with(ec::INVALID_PACKET);
    }
    // Tick by tick: at the shortest POLL_INTERVAL (values below 4 are forced to 4) a failing
    // poll is one poll per tick, reported as waiting.
    let mut s = Stepper::running(Asic::Cypress);
    let mut ring = me_initialize();
    ring.extend([t3(WAIT_REG_MEM, 6), 1 << 4 | 3, DATA, 0, 1, 1, 2]);
    s.put(DATA, &[0]);
    s.put(RING, &ring);
    s.wr(RB_WPTR, ring.len() as u32);
    s.dev.tick_engines(1);
    for _ in 0..5 {
        assert_eq!(s.dev.tick_engines(1), gpu_device_model::Activity::Waiting);
    }
    assert_eq!(s.dev.model().stats().polls, 5);
    s.put(DATA, &[1]);
    s.dev.tick_engines(1);
    assert!(!s.dev.model().work_in_progress());
}

#[test]
fn the_ring_is_consumed_a_bounded_number_of_dwords_per_tick() {
    // 200 dwords of NOP packets: each tick fetches at most DWORDS_PER_TICK, and the read
    // pointer the driver reads is strictly between the old and the new write pointer.
    for asic in Asic::ALL {
        let mut s = Stepper::running(asic);
        let mut ring = me_initialize();
        for _ in 0..49 {
            ring.extend([t3(NOP, 3), 0, 0, 0]);
        }
        s.put(RING, &ring);
        s.wr(RB_WPTR, ring.len() as u32);
        let mut seen = vec![];
        while s.rd(RB_RPTR) != ring.len() as u32 {
            s.dev.tick_engines(1);
            seen.push(s.rd(RB_RPTR));
        }
        assert!(seen.windows(2).all(|w| w[1] - w[0] <= DWORDS_PER_TICK), "{seen:?}");
        assert!(seen.iter().any(|&r| r > 0 && r < ring.len() as u32));
        assert_eq!(s.peek(RPTR_COPY), ring.len() as u32);
    }
}

#[test]
fn cp_dma_fills_and_copies() {
    // Linux radeon evergreend.h CP_DMA: DW2 SRC_SEL 30:29 (2 = DATA), DW5 BYTE_COUNT 20:0.
    for asic in Asic::ALL {
        let mut b = Bench::running(asic);
        let n = 10_000u32; // more than one DMA slice
        b.poke(DATA + n, &[SENTINEL]);
        b.submit(&[t3(CP_DMA, 5), 0xA5A5_0001, 2 << 29, DATA, 0, n]);
        assert_eq!(
            [b.peek(DATA), b.peek(DATA + n - 4), b.peek(DATA + n)],
            [0xA5A5_0001, 0xA5A5_0001, SENTINEL]
        );
        // Copy 4 KiB + 12 bytes from DATA to DATA + 0x10000.
        let words: Vec<u32> = (0..1027).map(|i| i * 3 + 1).collect();
        b.poke(DATA, &words);
        b.submit(&[t3(CP_DMA, 5), DATA, 0, DATA + 0x1_0000, 0, 1027 * 4]);
        for (i, w) in words.iter().enumerate() {
            assert_eq!(b.peek(DATA + 0x1_0000 + 4 * i as u32), *w, "{asic:?} word {i}");
        }
        assert_eq!(b.gpu.model().stats().dma_bytes, u64::from(n) + 1027 * 4);
        b.ok();
        // A fill of a count that is not a whole number of dwords.
        b.submit(&[t3(CP_DMA, 5), 0, 2 << 29, DATA, 0, 6]);
        b.failed_with(ec::INVALID_PACKET);
    }
}

#[test]
fn cond_exec_skips_its_packets_when_the_boolean_is_zero() {
    // §9.5.1: "the CP.PFP will start parsing the DWord immediately following EXEC_COUNT
    // DWords" when the boolean is zero.
    for asic in Asic::ALL {
        let mut b = Bench::running(asic);
        for (boolean, expect) in [(0, 0), (1, 0x5EC)] {
            b.wr(SCRATCH_REG0, 0);
            b.poke(DATA, &[boolean]);
            let mut p = vec![t3(COND_EXEC, 3), DATA, 0, 3];
            p.extend(set_config(SCRATCH_REG0, &[0x5EC]));
            p.extend(set_config(SCRATCH_REG0 + 4, &[boolean + 1]));
            b.submit(&p);
            assert_eq!(b.rd(SCRATCH_REG0), expect, "{asic:?} boolean {boolean}");
            assert_eq!(b.rd(SCRATCH_REG0 + 4), boolean + 1, "the packet after is parsed");
        }
        b.ok();
    }
}

#[test]
fn set_predication_skips_predicated_packets() {
    // §9.5.3 PRED_OP 1 (ZPASS) with PREDICATION_BOOLEAN 1 "draw if visible": a record whose
    // begin and end counts are equal (nothing visible) skips packets with header bit 0.
    for asic in Asic::ALL {
        let mut b = Bench::running(asic);
        b.poke(DATA, &[5, 1 << 31, 5, 1 << 31]);
        b.poke(DATA + 16, &[5, 1 << 31, 9, 1 << 31]);
        b.submit(&[t3(SET_PREDICATION, 2), DATA, 1 << 16 | 1 << 8]);
        let predicated = [t3(SET_CONFIG_REG, 2) | 1, 0x140, 0xAAA];
        b.submit(&predicated);
        assert_eq!(b.rd(SCRATCH_REG0), 0, "not visible: skipped");
        b.submit(&set_config(SCRATCH_REG0 + 4, &[1]));
        assert_eq!(b.rd(SCRATCH_REG0 + 4), 1, "an unpredicated packet runs");
        b.submit(&[t3(SET_PREDICATION, 2), DATA + 16, 1 << 16 | 1 << 8]);
        b.submit(&predicated);
        assert_eq!(b.rd(SCRATCH_REG0), 0xAAA, "visible: runs");
        // PRED_OP 0 clears the predicate.
        b.submit(&[t3(SET_PREDICATION, 2), DATA, 1 << 8]);
        b.submit(&[t3(SET_CONFIG_REG, 2) | 1, 0x140, 0xBBB]);
        assert_eq!(b.rd(SCRATCH_REG0), 0xBBB);
        assert_eq!(b.gpu.model().stats().packets_skipped, 1);
        b.ok();
    }
}

#[test]
fn mem_write_writes_one_or_two_dwords() {
    // §9.7.1: DATA32 (bit 18) writes only the low dword.
    for asic in Asic::ALL {
        let mut b = Bench::running(asic);
        b.poke(DATA, &[SENTINEL; 4]);
        b.submit(&[t3(MEM_WRITE, 4), DATA, 0, 1, 2]);
        b.submit(&[t3(MEM_WRITE, 4), DATA + 8, 1 << 18, 3, 4]);
        assert_eq!(
            [b.peek(DATA), b.peek(DATA + 4), b.peek(DATA + 8), b.peek(DATA + 12)],
            [1, 2, 3, SENTINEL]
        );
        b.ok();
    }
}

// --- write-backs, reset, faults ----------------------------------------------------------------

#[test]
fn an_unprogrammed_write_back_address_is_a_dma_fault() {
    for asic in Asic::ALL {
        let mut b = Bench::new(asic);
        b.load_microcode();
        b.ring(9, 1);
        b.wr(RB_RPTR_ADDR, 0);
        b.wr(CP_ME_CNTL, 0);
        b.submit(&me_initialize());
        b.failed_with(ec::DMA_WRITE_FAULT);
        // RB_NO_UPDATE: no write-back, no fault.
        let mut b = Bench::new(asic);
        b.load_microcode();
        b.ring(9, 1);
        b.wr(RB_RPTR_ADDR, 0);
        b.wr(RB_CNTL, 9 | 1 << 8 | 1 << 27);
        b.wr(CP_ME_CNTL, 0);
        b.submit(&me_initialize());
        b.ok();
    }
}

#[test]
fn soft_reset_needs_the_cp_halted_and_clears_its_state() {
    for asic in Asic::ALL {
        let b = Bench::running(asic);
        b.wr(GRBM_SOFT_RESET, 1);
        b.failed_with(ec::RESET_WHILE_RUNNING);
        // Halted first (Linux radeon evergreen_gpu_soft_reset): the CP restarts from scratch.
        let mut b = Bench::running(asic);
        b.submit(&set_config(SCRATCH_REG0, &[1]));
        b.wr(CP_ME_CNTL, HALT);
        b.wr(GRBM_SOFT_RESET, 1);
        b.wr(GRBM_SOFT_RESET, 0);
        assert_eq!(b.rd(RB_RPTR), 0);
        assert!(!b.gpu.model().me_initialized());
        // Linux evergreen_cp_resume: RB_RPTR_WR_ENA, CP_RB_RPTR_WR = CP_RB_WPTR = 0, then the
        // ring from 0 again with ME_INITIALIZE.
        b.wr(RB_CNTL, 9 | 1 << 8 | 1 << 31);
        b.wr(RB_RPTR_WR, 0);
        b.wr(RB_CNTL, 9 | 1 << 8);
        b.wptr = 0;
        b.wr(RB_WPTR, 0);
        b.wr(CP_ME_CNTL, 0);
        b.submit(&me_initialize());
        b.submit(&set_config(SCRATCH_REG0, &[2]));
        assert_eq!(b.rd(SCRATCH_REG0), 2);
        assert_eq!(
            b.gpu.model_mut().microcode(Engine::Me).map(|k| k.words),
            Some(asic.image(Engine::Me).words)
        );
        b.ok();
    }
}

#[test]
fn injected_faults_behave_like_broken_hardware() {
    for asic in Asic::ALL {
        // all-ones: the device is gone.
        let b = Bench::with_faults(asic, "all-ones".parse().unwrap());
        assert_eq!((b.rd(RB_RPTR), b.rd(GRBM_STATUS)), (u32::MAX, u32::MAX));
        // ucode-corrupt=2: word 2 reads back with bit 0 flipped, the RAM is intact.
        let b = Bench::with_faults(asic, "ucode-corrupt=2".parse().unwrap());
        b.load_microcode();
        let pfp = firmware(asic, Engine::Pfp);
        b.wr(PFP_ADDR, 2);
        assert_eq!(b.rd(PFP_DATA), pfp[2] ^ 1);
        assert!(b.gpu.model_mut().microcode(Engine::Pfp).is_some());
        // cp-stall: nothing fetched.
        let mut b = Bench::with_faults(asic, "cp-stall".parse().unwrap());
        b.load_microcode();
        b.ring(9, 1);
        b.wr(CP_ME_CNTL, 0);
        b.submit(&me_initialize());
        assert_eq!(b.rd(RB_RPTR), 0);
        b.ok();
        // dma-fault: the next fetch faults.
        let mut b = Bench::with_faults(asic, "dma-fault".parse().unwrap());
        b.load_microcode();
        b.ring(9, 1);
        b.wr(CP_ME_CNTL, 0);
        b.submit(&me_initialize());
        b.failed_with(ec::DMA_FETCH_FAULT);
        // slow=50: one packet per 50 ticks, but it gets there.
        let mut b = Bench::with_faults(asic, "slow=50".parse().unwrap());
        b.load_microcode();
        b.ring(9, 1);
        b.wr(CP_ME_CNTL, 0);
        b.submit(&me_initialize());
        b.submit(&set_config(SCRATCH_REG0, &[9]));
        assert_eq!(b.rd(SCRATCH_REG0), 9);
        b.ok();
    }
}

// --- compute ---------------------------------------------------------------------------------

/// §3.2 state for the shared vector-add kernel (common::two_input_program): program, GPRs,
/// thread ids, group size, constant buffer 0, fetch resource 817 (BUFFER_ID 1), RAT 0.
fn compute_state(local: u32) -> Vec<u32> {
    use common::*;
    let mut p = vec![];
    // SQ_PGM_START_LS 0x288D0 (address >> 8), SQ_PGM_RESOURCES_LS (NUM_GPRS 8, STACK 2).
    p.extend(set_context(0x2_88D0, &[(PROG >> 8) as u32, 8 | 2 << 8, 0]));
    // SPI_COMPUTE_INPUT_CNTL 0x286E8 = 7 (TID_IN_GROUP, TGID, DISABLE_INDEX_PACK), then
    // SPI_COMPUTE_NUM_THREAD_X/Y/Z.
    p.extend(set_context(0x2_86E8, &[7, local, 1, 1]));
    // SQ_ALU_CONST_CACHE_LS_0 0x28F40 = CB0 >> 8; SQ_ALU_CONST_BUFFER_SIZE_LS_0 0x28FC0 = 2.
    p.extend(set_context(0x2_8F40, &[(CB0 >> 8) as u32]));
    p.extend(set_context(0x2_8FC0, &[2]));
    // Resource 817 = CS base 816 + BUFFER_ID 1.
    let mut r = vec![t3c(SET_RESOURCE, 9), 817 * 8];
    r.extend(resource(POOL, POOL_BYTES, 0x04D0_0100, RES_W3_XYZW));
    p.extend(r);
    // CB_COLOR0: BASE, PITCH, SLICE, VIEW, INFO, ATTRIB, DIM (0x28C60..0x28C78).
    let rat = rat_u32(POOL, POOL_BYTES / 4);
    p.extend(set_context(0x2_8C60, &[rat.base, 0, 0, 0, rat.info, rat.attrib, rat.dim]));
    // Loop constant 160 (Mesa: 0x01000FFF).
    p.extend([t3c(SET_LOOP_CONST, 2), 160, 0x0100_0FFF]);
    p
}

#[test]
fn dispatch_direct_runs_vector_add_through_the_cp() {
    use common::*;
    let n = 300usize;
    let a: Vec<u32> = (0..n).map(|i| (1.0 + i as f32 * 0.25).to_bits()).collect();
    let b_in: Vec<u32> = (0..n).map(|i| (1000.0 - i as f32 * 0.5).to_bits()).collect();
    for asic in Asic::ALL {
        let chip = asic.shader_chip();
        let mut m = mem();
        two_input_program(
            &mut m,
            chip,
            DST_ARG2,
            [0x0000_0012, 0xA000_0000],
            [0x8080_8004, 0x0080_0010],
        );
        let mut cb = vec![3, 1, 1, 300, 1, 1, 100, 1, 1];
        cb.extend([A, B, C]);
        put(&mut m, CB0, &cb);
        put(&mut m, POOL + u64::from(A), &a);
        put(&mut m, POOL + u64::from(B), &b_in);
        let mut bench = Bench::running(asic);
        bench.poke(0, &get(&mut m, 0, (POOL as usize + 0x8000) / 4));
        let mut p = compute_state(100);
        // §9.3.12 DISPATCH_DIRECT: X, Y, Z, DISPATCH_INITIATOR COMPUTE_SHADER_EN.
        p.extend([t3c(DISPATCH_DIRECT, 4), 3, 1, 1, 1]);
        p.extend(eop(FENCE, 1, 0, 0xD0_0E));
        bench.submit(&p);
        bench.ok();
        assert_eq!(bench.peek(FENCE), 0xD0_0E, "{asic:?}: the fence after the dispatch");
        for i in 0..n {
            let c = f32::from_bits(bench.peek(POOL as u32 + C + 4 * i as u32));
            assert_eq!(c, f32::from_bits(a[i]) + f32::from_bits(b_in[i]), "{asic:?} element {i}");
        }
        let stats = bench.gpu.model().stats();
        assert_eq!(stats.dispatches, 1);
        assert!(stats.max_tick_units <= MAX_UNITS_PER_TICK, "{}", stats.max_tick_units);
        // DISPATCH_INDIRECT: the dimensions from memory at the SET_BASE address + DATA_OFFSET.
        bench.poke(POOL as u32 + C, &[0; 300]);
        bench.poke(DATA + 0x40, &[3, 1, 1]);
        bench.submit(&[t3(SET_BASE, 3), 1, DATA, 0, t3c(DISPATCH_INDIRECT, 2), 0x40, 1]);
        bench.ok();
        assert_eq!(
            f32::from_bits(bench.peek(POOL as u32 + C + 4 * 299)),
            f32::from_bits(a[299]) + f32::from_bits(b_in[299])
        );
    }
}

#[test]
fn dispatch_errors_are_cp_errors() {
    for asic in Asic::ALL {
        // §9.3.12: "Shader_Type in bit 1 of the Header will be set to 1".
        let mut b = Bench::running(asic);
        b.submit(&[t3(DISPATCH_DIRECT, 4), 1, 1, 1, 1]);
        b.failed_with(ec::NOT_COMPUTE);
        // §3.2 step 11: DISPATCH_INITIATOR.COMPUTE_SHADER_EN = 1.
        let mut b = Bench::running(asic);
        b.submit(&[t3c(DISPATCH_DIRECT, 4), 1, 1, 1, 0]);
        b.failed_with(ec::NOT_COMPUTE);
        // A group size of 0 threads: the shader core's InvalidGroupSize code.
        let mut b = Bench::running(asic);
        b.submit(&[t3c(DISPATCH_DIRECT, 4), 1, 1, 1, 1]);
        b.failed_with(0x3101);
    }
}

// --- hostile submissions ---------------------------------------------------------------------

#[test]
fn a_maximal_submission_stays_bounded_per_request() {
    // A huge grid of a kernel that never ends, a wait that never passes, and a long chain of
    // indirect buffers: under seeded pacing each request gives the engines at most a few
    // ticks, each tick does at most MAX_UNITS_PER_TICK units, and the runaway kernel ends in
    // the shader core's budget error instead of running forever.
    use common::*;
    for asic in Asic::ALL {
        let options =
            InProcessOptions { pacing: Some(Pacing::Seeded(7)), ..InProcessOptions::default() };
        let gpu = InProcess::with_options(EvergreenModel::new(asic), options).unwrap();
        gpu.model_mut().set_limits(Limits { wave_units: 1 << 12, dispatch_units: 1 << 16 });
        let mut b = Bench { gpu, asic, wptr: 0, ring_dwords: 0 };
        b.load_microcode();
        b.ring(9, 1);
        b.wr(CP_ME_CNTL, 0);
        // The program: CF0 JUMP to itself forever (Evergreen CF_WORD1 JUMP 0x0A << 22, ADDR 0;
        // same on Cayman).
        b.poke(PROG as u32, &[0, 0x0A << 22 | 1 << 31]);
        let mut p = me_initialize();
        // 100 chained IBs of a SET_CONFIG_REG each.
        for i in 0..100u32 {
            b.poke(IB + 16 * i, &[t3(SET_CONFIG_REG, 2), 0x140, i]);
            p.extend([t3(INDIRECT_BUFFER, 3), IB + 16 * i, 0, 3]);
        }
        p.extend(compute_state(64));
        p.extend([t3c(DISPATCH_DIRECT, 4), 0xFFFF_FFFF, 0xFFFF, 0xFFFF, 1]);
        b.submit(&p);
        let mut requests = 0;
        let mut last_units = 0;
        while b.gpu.state() == ModelState::Ready && requests < 1_000_000 {
            let _ = b.rd(RB_RPTR);
            requests += 1;
            let units = b.gpu.model().stats().units;
            assert!(
                units - last_units
                    <= u64::from(gpu_device_model::pacing::SEEDED_MAX_TICKS) * MAX_UNITS_PER_TICK,
                "one request ran {} units",
                units - last_units
            );
            last_units = units;
        }
        // The dispatch budget (2^16 units) stops the kernel: DispatchBudgetExceeded.
        assert_eq!(b.gpu.state(), ModelState::Error, "{asic:?}");
        // The shader core ran full steps beside the CP, within the bound.
        let max = b.gpu.model().stats().max_tick_units;
        assert!((SHADER_UNITS_PER_TICK..=MAX_UNITS_PER_TICK).contains(&max), "{max}");
        assert_eq!(b.rd(SCRATCH_REG0), 99, "every IB ran first");
        // A WAIT_REG_MEM that never passes: one poll per tick, the device stays usable (waiting
        // is not a hang) and every request stays within the bound.
        let gpu = InProcess::with_options(EvergreenModel::new(asic), options).unwrap();
        let mut b = Bench { gpu, asic, wptr: 0, ring_dwords: 0 };
        b.load_microcode();
        b.ring(9, 1);
        b.wr(CP_ME_CNTL, 0);
        b.poke(DATA, &[0]);
        let mut p = me_initialize();
        p.extend([t3(WAIT_REG_MEM, 6), 1 << 4 | 3, DATA, 0, 1, 1, 4]);
        b.submit(&p);
        let mut last = b.gpu.model().stats();
        for _ in 0..2000 {
            let _ = b.rd(GRBM_STATUS);
            let now = b.gpu.model().stats();
            let bound = u64::from(gpu_device_model::pacing::SEEDED_MAX_TICKS);
            assert!(now.units - last.units <= bound * MAX_UNITS_PER_TICK);
            assert!(now.polls - last.polls <= bound);
            last = now;
        }
        assert!(last.polls > 100, "{}", last.polls);
        b.ok();
    }
}

// --- more packets, each from its section ------------------------------------------------------

#[test]
fn state_and_sync_packets_are_accepted_with_their_documented_bodies() {
    const CLEAR_STATE: u32 = 0x12;
    const MODE_CONTROL: u32 = 0x18;
    const CONTEXT_CONTROL: u32 = 0x28;
    const PFP_SYNC_ME: u32 = 0x42;
    const PREAMBLE_CNTL: u32 = 0x4A;
    for asic in Asic::ALL {
        let mut b = Bench::running(asic);
        b.submit(&[
            // §9.2.2: begin / end of clear-state initialization (commands 2 and 3 in 31:28).
            t3(PREAMBLE_CNTL, 1),
            2 << 28,
            t3(PREAMBLE_CNTL, 1),
            3 << 28,
            // §9.4.1 CLEAR_STATE, §9.4.4 CONTEXT_CONTROL (load and shadow enables with their
            // DW-enable bit 31), §9.6.5 PFP_SYNC_ME, §9.4.3 MODE_CONTROL CMD 001.
            t3(CLEAR_STATE, 1),
            0,
            t3(CONTEXT_CONTROL, 2),
            1 << 31 | 1,
            1 << 31,
            t3(PFP_SYNC_ME, 1),
            0,
            t3(MODE_CONTROL, 1),
            1,
        ]);
        // §9.6.7: SURFACE_SYNC's COHER_CNTL, COHER_SIZE and COHER_BASE reach the CP_COHER_*
        // registers (ENGINE, bit 31, is not part of COHER_CNTL).
        b.submit(&[t3(SURFACE_SYNC, 4), 1 << 31 | 1 << 23 | 1 << 27, 0x10, DATA >> 8, 10]);
        let m = b.gpu.model();
        assert_eq!(
            [m.register(0x85F0), m.register(0x85F4), m.register(0x85F8)],
            [1 << 23 | 1 << 27, 0x10, DATA >> 8]
        );
        drop(m);
        b.ok();
        // §9.2.2: commands 1xxx and x1xx are reserved.
        b.submit(&[t3(PREAMBLE_CNTL, 1), 4 << 28]);
        b.failed_with(ec::INVALID_PACKET);
        // §9.4.3: MODE_CONTROL CMD 000 is reserved.
        let mut b = Bench::running(asic);
        b.submit(&[t3(MODE_CONTROL, 1), 0]);
        b.failed_with(ec::INVALID_PACKET);
    }
}

#[test]
fn event_write_zpass_done_and_eos_write_memory() {
    const EVENT_WRITE_EOS: u32 = 0x48;
    for asic in Asic::ALL {
        let mut b = Bench::running(asic);
        b.poke(DATA, &[SENTINEL; 4]);
        // §9.6.1: ZPASS_DONE (0x15) with EVENT_INDEX 1 is a 4-dword event: the DB's sample
        // count at the QWORD address: none drawn, with the result-valid bit 63.
        b.submit(&[t3(EVENT_WRITE, 3), 1 << 8 | 0x15, DATA, 0]);
        assert_eq!([b.peek(DATA), b.peek(DATA + 4)], [0, 1 << 31]);
        // §9.6.3: EVENT_WRITE_EOS CMD 010 stores DATA (CS_DONE 0x2F, index 6).
        b.submit(&[t3(EVENT_WRITE_EOS, 4), 6 << 8 | 0x2F, DATA + 8, 2 << 29, 0xE05]);
        assert_eq!(b.peek(DATA + 8), 0xE05);
        b.ok();
        // §9.6.2: INT_SEL 01 "Send Interrupt Only. Program DATA_SEL 000".
        b.submit(&eop(FENCE, 1, 1, 5));
        b.failed_with(ec::INVALID_PACKET);
    }
}

#[test]
fn cond_write_and_pred_exec() {
    const COND_WRITE: u32 = 0x45;
    for asic in Asic::ALL {
        let mut b = Bench::running(asic);
        b.poke(DATA, &[0x35, SENTINEL]);
        // §9.5.2: POLL_SPACE memory (bit 4), WRITE_SPACE memory (bit 8), FUNCTION 3 (=) of
        // (value & MASK) against REFERENCE: 0x35 & 0xF0 = 0x30 passes, the write happens.
        b.submit(&[t3(COND_WRITE, 8), 1 << 8 | 1 << 4 | 3, DATA, 0, 0x30, 0xF0, DATA + 4, 0, 0x77]);
        assert_eq!(b.peek(DATA + 4), 0x77);
        // Reference 0x40: the test fails and the CP skips the write; WRITE_SPACE register.
        b.submit(&[t3(COND_WRITE, 8), 1 << 4 | 3, DATA, 0, 0x40, 0xF0, SCRATCH_REG0 >> 2, 0, 9]);
        assert_eq!(b.rd(SCRATCH_REG0), 0);
        // §9.5.4: PRED_EXEC runs EXEC_COUNT dwords only on the selected devices (this GPU is
        // device 0, DEVICE_SELECT bit 24).
        let mut p = vec![t3(PRED_EXEC, 1), 2 << 24 | 3];
        p.extend(set_config(SCRATCH_REG0, &[1]));
        p.extend([t3(PRED_EXEC, 1), 1 << 24 | 3]);
        p.extend(set_config(SCRATCH_REG0 + 4, &[2]));
        b.submit(&p);
        assert_eq!([b.rd(SCRATCH_REG0), b.rd(SCRATCH_REG0 + 4)], [0, 2]);
        b.ok();
    }
}

#[test]
fn the_ih_ring_needs_its_enables_and_a_write_back_address() {
    for asic in Asic::ALL {
        // IH_CNTL.ENABLE_INTR off: no vector, no interrupt (counted as dropped).
        let mut b = Bench::running(asic);
        b.ih(6);
        b.wr(IH_CNTL, 0);
        b.submit(&eop(FENCE, 1, 2, 1));
        assert_eq!((b.peek(IH_RING), b.gpu.irq_status() & IRQ_LINE), (0, 0));
        assert_eq!(b.gpu.model().stats().ih_dropped, 1);
        b.ok();
        // The RLC off: the IH stays silent too.
        let mut b = Bench::running(asic);
        b.ih(6);
        b.wr(RLC_CNTL, 0);
        b.submit(&eop(FENCE, 1, 2, 1));
        assert_eq!(b.gpu.model().stats().ih_entries, 0);
        // Write-back enabled with the address never programmed: a DMA fault.
        let mut b = Bench::running(asic);
        b.ih(6);
        b.wr(IH_WPTR_ADDR_LO, 0);
        b.submit(&eop(FENCE, 1, 2, 1));
        b.failed_with(ec::DMA_WRITE_FAULT);
    }
}

#[test]
fn cp_dma_refuses_what_it_does_not_model() {
    // Linux radeon evergreend.h CP_DMA: SRC_SEL 1 (GDS), DST_SEL 1 (GDS), SAS/DAS (register
    // space, COMMAND bits 26/27), SAIC/DAIC (no increment, 28/29): not modelled; SRC_SEL 3 is
    // not defined.
    for asic in Asic::ALL {
        for (dw2, command, code) in [
            (1 << 29, 4, ec::UNSUPPORTED_PACKET),
            (1 << 20, 4, ec::UNSUPPORTED_PACKET),
            (0, 1 << 26 | 4, ec::UNSUPPORTED_PACKET),
            (0, 1 << 29 | 4, ec::UNSUPPORTED_PACKET),
            (3 << 29, 4, ec::INVALID_PACKET),
        ] {
            let mut b = Bench::running(asic);
            b.submit(&[t3(CP_DMA, 5), DATA, dw2, DATA + 0x100, 0, command]);
            b.failed_with(code);
        }
    }
}

#[test]
fn the_cp_reports_busy_while_a_dispatch_runs() {
    use common::*;
    // A kernel that loops forever keeps GUI_ACTIVE set tick after tick; the fence behind it
    // stays unwritten (the EOP waits at the end of the pipe). The CP itself parsed everything:
    // CP_BUSY is clear.
    let mut s = Stepper::running(Asic::Cayman);
    s.put(PROG as u32, &[0, 0x0A << 22 | 1 << 31]);
    let mut ring = me_initialize();
    ring.extend(compute_state(64));
    ring.extend([t3c(DISPATCH_DIRECT, 4), 4, 1, 1, 1]);
    ring.extend(eop(FENCE, 1, 0, 1));
    s.put(FENCE, &[0]);
    s.put(RING, &ring);
    s.wr(RB_WPTR, ring.len() as u32);
    for _ in 0..200 {
        s.dev.tick_engines(1);
    }
    assert!(s.dev.model().work_in_progress());
    assert_eq!(s.rd(GRBM_STATUS) >> 29 & 5, 4, "GUI_ACTIVE, not CP_BUSY");
    assert_eq!(s.peek(FENCE), 0);
    assert!(s.dev.model().stats().max_tick_units <= MAX_UNITS_PER_TICK);
}

#[test]
fn grbm_status_follows_each_block() {
    use common::*;
    // A dispatch that is the last packet: the CP has nothing left to parse (CP_BUSY clear)
    // while the shader core works (GUI_ACTIVE set); idle once it is done.
    let mut s = Stepper::running(Asic::Cypress);
    s.put(PROG as u32, &[0, 0x0A << 22 | 1 << 31]);
    let mut ring = me_initialize();
    ring.extend(compute_state(64));
    ring.extend([t3c(DISPATCH_DIRECT, 4), 4, 1, 1, 1]);
    s.put(RING, &ring);
    s.wr(RB_WPTR, ring.len() as u32);
    for _ in 0..200 {
        s.dev.tick_engines(1);
    }
    assert!(s.dev.model().work_in_progress());
    assert_eq!(s.rd(GRBM_STATUS) >> 29 & 5, 4, "GUI_ACTIVE without CP_BUSY");
    // A WAIT_REG_MEM keeps the CP itself busy.
    let mut s = Stepper::running(Asic::Cypress);
    let mut ring = me_initialize();
    ring.extend([t3(WAIT_REG_MEM, 6), 1 << 4 | 3, DATA, 0, 1, 1, 4]);
    s.put(DATA, &[0]);
    s.put(RING, &ring);
    s.wr(RB_WPTR, ring.len() as u32);
    s.dev.tick_engines(4);
    assert_eq!(s.rd(GRBM_STATUS) >> 29 & 5, 5, "GUI_ACTIVE and CP_BUSY while waiting");
    s.put(DATA, &[1]);
    s.dev.tick_engines(4);
    assert_eq!(s.rd(GRBM_STATUS) >> 29 & 5, 0, "idle");
}

#[test]
fn results_do_not_depend_on_the_pacing() {
    // The same submission (IB, dispatch, EOP with interrupt) under run-to-idle and three seeds:
    // the driver polls GRBM_STATUS.GUI_ACTIVE until idle and sees the same memory every time;
    // paced, it sees the CP busy part of the way.
    use common::*;
    let n = 300usize;
    let a: Vec<u32> = (0..n).map(|i| (i as f32 * 1.5).to_bits()).collect();
    let b_in: Vec<u32> = (0..n).map(|i| (7.0 - i as f32).to_bits()).collect();
    for asic in Asic::ALL {
        let mut results = vec![];
        let mut seeded_busy_polls = 0;
        for pacing in [Pacing::RunToIdle, Pacing::Seeded(1), Pacing::Seeded(2), Pacing::Seeded(3)] {
            let options = InProcessOptions { pacing: Some(pacing), ..InProcessOptions::default() };
            let gpu = InProcess::with_options(EvergreenModel::new(asic), options).unwrap();
            let mut b = Bench { gpu, asic, wptr: 0, ring_dwords: 0 };
            b.load_microcode();
            b.ring(9, 1);
            b.ih(6);
            b.wr(CP_ME_CNTL, 0);
            let mut m = mem();
            two_input_program(
                &mut m,
                asic.shader_chip(),
                DST_ARG2,
                [0x0000_0012, 0xA000_0000],
                [0x8080_8004, 0x0080_0010],
            );
            let mut cb = vec![3, 1, 1, 300, 1, 1, 100, 1, 1];
            cb.extend([A, B, C]);
            put(&mut m, CB0, &cb);
            put(&mut m, POOL + u64::from(A), &a);
            put(&mut m, POOL + u64::from(B), &b_in);
            b.poke(0, &get(&mut m, 0, (POOL as usize + 0x8000) / 4));
            b.poke(IB, &set_config(SCRATCH_REG0, &[0x1B]));
            let mut p = me_initialize();
            p.extend([t3(INDIRECT_BUFFER, 3), IB, 0, 3]);
            p.extend(compute_state(100));
            p.extend([t3c(DISPATCH_DIRECT, 4), 3, 1, 1, 1]);
            p.extend(eop(FENCE, 2, 2, 0xFE_0000_0001));
            b.submit(&p);
            let mut busy_polls = 0;
            while b.rd(GRBM_STATUS) >> 31 == 1 {
                busy_polls += 1;
                assert!(busy_polls < 1_000_000, "{asic:?} {pacing:?}: never idle");
            }
            b.ok();
            if pacing != Pacing::RunToIdle {
                seeded_busy_polls += busy_polls;
            }
            let c: Vec<u32> = (0..n).map(|i| b.peek(POOL as u32 + C + 4 * i as u32)).collect();
            results.push((
                c,
                b.rd(SCRATCH_REG0),
                [b.peek(FENCE), b.peek(FENCE + 4)],
                [b.peek(IH_RING), b.rd(IH_RB_WPTR)],
            ));
        }
        assert!(results.windows(2).all(|w| w[0] == w[1]), "{asic:?}");
        // The CP and its engines may finish within one request's ticks; not under every seed.
        assert!(seeded_busy_polls > 0, "{asic:?}: the GPU was busy part of the way");
        let (c, scratch, fence, ih) = &results[0];
        assert_eq!(
            f32::from_bits(c[n - 1]),
            f32::from_bits(a[n - 1]) + f32::from_bits(b_in[n - 1])
        );
        assert_eq!((*scratch, *fence, *ih), (0x1B, [1, 0xFE], [181, 16]));
    }
}

// --- §9.5.4 PRED_EXEC, §9.6.4 MEM_SEMAPHORE, §9.6.6 STRMOUT_BUFFER_UPDATE --------------------

const PRED_EXEC: u32 = 0x23;
const MEM_SEMAPHORE: u32 = 0x39;
/// §9.6.4 SEM_SEL 31:29: 110 signal, 111 wait.
const SEM_SIGNAL: u32 = 6 << 29;
const SEM_WAIT: u32 = 7 << 29;

/// §9.6.4: MEM_SEMAPHORE, ADDRESS_LO (QWORD aligned), then SEM_SEL | fields | ADDRESS_HI.
fn semaphore(address: u32, dw3: u32) -> Vec<u32> {
    vec![t3(MEM_SEMAPHORE, 2), address, dw3]
}

/// The 64-bit semaphore at `address`.
fn peek64(b: &Bench, address: u32) -> u64 {
    u64::from(b.peek(address)) | u64::from(b.peek(address + 4)) << 32
}

#[test]
fn pred_exec_selects_on_the_device_id_of_me_initialize() {
    // §9.5.4: device_select [31:24] selects "one or more device IDs" (a mask: bit n = ID n + 1,
    // the model's decision, `pm4::device_selected`); §9.2.1 DW5 23:16 is the GPU's Device-ID.
    for asic in Asic::ALL {
        let mut b = Bench::running_as(asic, 3);
        assert_eq!(b.gpu.model().device_id(), 3);
        let mut p = vec![];
        // ID 1 only (bit 24): not this GPU, the write is skipped.
        p.extend([t3(PRED_EXEC, 1), 1 << 24 | 3]);
        p.extend(set_config(SCRATCH_REG0, &[0x11]));
        // ID 3 (bit 26): executed.
        p.extend([t3(PRED_EXEC, 1), 1 << 26 | 3]);
        p.extend(set_config(SCRATCH_REG0 + 4, &[0x22]));
        // IDs 1 and 3 together (0b101): executed; IDs 2, 4-8 (0b1111_1010): skipped.
        p.extend([t3(PRED_EXEC, 1), 0b101 << 24 | 3]);
        p.extend(set_config(SCRATCH_REG0 + 8, &[0x33]));
        p.extend([t3(PRED_EXEC, 1), 0b1111_1010 << 24 | 3]);
        p.extend(set_config(SCRATCH_REG0 + 12, &[0x44]));
        b.submit(&p);
        let got: Vec<u32> = (0..4).map(|n| b.rd(SCRATCH_REG0 + 4 * n)).collect();
        assert_eq!(got, [0, 0x22, 0x33, 0], "{asic:?}");
        assert_eq!(b.gpu.model().stats().packets_skipped, 2);
        b.ok();
    }
}

#[test]
fn pred_exec_skips_its_dwords_without_parsing_them() {
    // §9.5.4: "The CP will start parsing the DWord immediately following EXEC_COUNT DWords":
    // skipped dwords are not packets (a type-1 header and an unknown opcode here), and the
    // packet after them runs.
    for asic in Asic::ALL {
        let mut b = Bench::running(asic);
        let mut p = vec![t3(PRED_EXEC, 1), 2 << 24 | 3, 1 << 30, t3(0xFF, 1), 0];
        p.extend(set_config(SCRATCH_REG0, &[0x55]));
        b.submit(&p);
        assert_eq!(b.rd(SCRATCH_REG0), 0x55, "{asic:?}");
        b.ok();
        // A GPU given Device-ID 0 (or above 8) is named by no select bit: every body skipped.
        let mut b = Bench::running_as(asic, 0);
        let mut p = vec![t3(PRED_EXEC, 1), 0xFF << 24 | 3];
        p.extend(set_config(SCRATCH_REG0, &[0x66]));
        b.submit(&p);
        assert_eq!(b.rd(SCRATCH_REG0), 0);
        b.ok();
    }
}

#[test]
fn pred_exec_needs_a_count_that_stays_in_its_stream() {
    for asic in Asic::ALL {
        // exec_count 0 predicates no packet: not a valid PRED_EXEC.
        let mut b = Bench::running(asic);
        b.submit(&[t3(PRED_EXEC, 1), 1 << 24]);
        b.failed_with(ec::INVALID_PACKET);
        // Inside an indirect buffer the predicated dwords must be in it (§9.3.1: an IB holds
        // whole packets), selected or not: 4 counted, 3 left.
        for select in [1u32, 2] {
            let mut b = Bench::running(asic);
            let mut ib = vec![t3(PRED_EXEC, 1), select << 24 | 4];
            ib.extend(set_config(SCRATCH_REG0, &[1]));
            b.poke(IB, &ib);
            b.submit(&[t3(INDIRECT_BUFFER, 3), IB, 0, ib.len() as u32]);
            b.failed_with(ec::INVALID_PACKET);
            assert_eq!(b.rd(SCRATCH_REG0), 0, "{asic:?}: nothing of the packet ran");
        }
        // Exactly the rest of the IB is fine.
        let mut b = Bench::running(asic);
        let mut ib = vec![t3(PRED_EXEC, 1), 2 << 24 | 3];
        ib.extend(set_config(SCRATCH_REG0, &[1]));
        b.poke(IB, &ib);
        b.submit(&[t3(INDIRECT_BUFFER, 3), IB, 0, ib.len() as u32]);
        b.submit(&set_config(SCRATCH_REG0 + 4, &[2]));
        assert_eq!([b.rd(SCRATCH_REG0), b.rd(SCRATCH_REG0 + 4)], [0, 2]);
        b.ok();
    }
}

#[test]
fn a_semaphore_signal_increments_the_qword_or_writes_one() {
    // §9.6.4: SIGNAL_TYPE 0 "signal type is increment", 1 "write '1'"; ADDRESS_LO 31:3 and
    // ADDRESS_HI 7:0 name a QWORD.
    for asic in Asic::ALL {
        let mut b = Bench::running(asic);
        // A 64-bit count: the carry reaches the high dword.
        b.poke(DATA, &[0xFFFF_FFFF, 0, 41, 0]);
        b.submit(&semaphore(DATA, SEM_SIGNAL));
        assert_eq!(peek64(&b, DATA), 1 << 32, "{asic:?}");
        b.submit(&semaphore(DATA + 8, SEM_SIGNAL | 1 << 20));
        assert_eq!(peek64(&b, DATA + 8), 1, "write '1'");
        // CLIENT_CODE 25:24 CB, DB, SX: signalled once their work before it is done, which in
        // this in-order CP is when the packet is parsed.
        for client in 1..4 {
            b.submit(&semaphore(DATA + 8, SEM_SIGNAL | client << 24));
        }
        assert_eq!(peek64(&b, DATA + 8), 4);
        assert_eq!(b.gpu.model().stats().semaphore_signals, 5);
        b.ok();
    }
}

#[test]
fn a_semaphore_wait_stalls_the_cp_until_signalled_then_takes_one_count() {
    // §9.6.4: "Wait Semaphores are executed at the top of pipe (CP)": the packets after the
    // wait run only once the semaphore is not zero, which the wait decrements.
    for asic in Asic::ALL {
        let mut b = Bench::running(asic);
        b.poke(DATA, &[0, 0]);
        b.submit(&semaphore(DATA, SEM_WAIT));
        b.submit(&set_config(SCRATCH_REG0, &[0x77]));
        assert_eq!(b.rd(SCRATCH_REG0), 0, "{asic:?}: ran past the wait");
        assert_eq!(b.rd(GRBM_STATUS) >> 29 & 5, 5, "GUI_ACTIVE and CP_BUSY while waiting");
        assert!(b.gpu.model().work_in_progress());
        // The host signals twice: the wait takes one count and the CP goes on.
        b.poke(DATA, &[2, 0]);
        let _ = b.rd(GRBM_STATUS);
        assert_eq!(b.rd(SCRATCH_REG0), 0x77);
        assert_eq!(peek64(&b, DATA), 1);
        // A second wait takes the other count at once; a third stalls again.
        b.submit(&semaphore(DATA, SEM_WAIT));
        b.submit(&set_config(SCRATCH_REG0 + 4, &[0x88]));
        assert_eq!((b.rd(SCRATCH_REG0 + 4), peek64(&b, DATA)), (0x88, 0));
        b.submit(&semaphore(DATA, SEM_WAIT));
        b.submit(&set_config(SCRATCH_REG0 + 8, &[0x99]));
        assert_eq!(b.rd(SCRATCH_REG0 + 8), 0);
        // A high-dword count is a count too (64-bit semaphore).
        b.poke(DATA, &[0, 1]);
        let _ = b.rd(GRBM_STATUS);
        assert_eq!((b.rd(SCRATCH_REG0 + 8), peek64(&b, DATA)), (0x99, 0xFFFF_FFFF));
        b.ok();
        // A signal earlier in the stream releases a later wait: in order, no host.
        let mut b = Bench::running(asic);
        b.poke(DATA, &[0, 0]);
        let mut p = semaphore(DATA, SEM_SIGNAL);
        p.extend(semaphore(DATA, SEM_WAIT));
        p.extend(set_config(SCRATCH_REG0, &[0x5A]));
        b.submit(&p);
        assert_eq!((b.rd(SCRATCH_REG0), peek64(&b, DATA)), (0x5A, 0));
        b.ok();
    }
    // Tick by tick: one 64-bit poll per tick while the semaphore is 0, reported as waiting
    // (never busy, so the framework's hang budget does not run out on a long wait).
    let mut s = Stepper::running(Asic::Cayman);
    let mut ring = me_initialize();
    ring.extend(semaphore(DATA, SEM_WAIT));
    s.put(DATA, &[0, 0]);
    s.put(RING, &ring);
    s.wr(RB_WPTR, ring.len() as u32);
    s.dev.tick_engines(1);
    for _ in 0..5 {
        assert_eq!(s.dev.tick_engines(1), gpu_device_model::Activity::Waiting);
    }
    assert_eq!(s.dev.model().stats().semaphore_polls, 5);
    s.put(DATA, &[1, 0]);
    s.dev.tick_engines(1);
    assert!(!s.dev.model().work_in_progress());
    assert_eq!(s.peek(DATA), 0);
}

#[test]
fn semaphore_fields_are_checked() {
    for asic in Asic::ALL {
        for (dw2, dw3, code) in [
            // ADDRESS_LO 31:3: a QWORD-aligned address.
            (DATA + 4, SEM_SIGNAL, ec::INVALID_PACKET),
            // SEM_SEL: only 110 and 111.
            (DATA, 5 << 29, ec::INVALID_PACKET),
            (DATA, 0, ec::INVALID_PACKET),
            // SIGNAL_TYPE 1 is a signal's "write '1'"; a wait has 0.
            (DATA, SEM_WAIT | 1 << 20, ec::INVALID_PACKET),
            // USE_MAILBOX: a signal held for a mailbox write the model does not have.
            (DATA, SEM_SIGNAL | 1 << 16, ec::UNSUPPORTED_PACKET),
        ] {
            let mut b = Bench::running(asic);
            b.poke(DATA, &[1, 0]);
            b.submit(&semaphore(dw2, dw3));
            b.failed_with(code);
            assert_eq!(peek64(&b, DATA), 1, "{asic:?} {dw3:#x}: the semaphore is untouched");
        }
        // WAIT_ON_SIGNAL (bit 12): "should be set in evergreen, but in cayman it is reserved
        // and should be set to zero" (Linux radeon sets it before Cayman).
        let mut b = Bench::running(asic);
        b.poke(DATA, &[0, 0]);
        b.submit(&semaphore(DATA, SEM_SIGNAL | 1 << 12));
        b.submit(&semaphore(DATA, SEM_WAIT | 1 << 12));
        if asic == Asic::Cayman {
            b.failed_with(ec::INVALID_PACKET);
        } else {
            assert_eq!(peek64(&b, DATA), 0, "signalled, then taken");
            b.ok();
        }
        // A 40-bit address: ADDRESS_HI 7:0 is bits 39:32 (outside guest memory here).
        let mut b = Bench::running(asic);
        b.submit(&semaphore(DATA, SEM_SIGNAL | 0x01));
        b.failed_with(ec::DMA_FETCH_FAULT);
        // MEM_SEMAPHORE has a 2-dword body.
        let mut b = Bench::running(asic);
        b.submit(&[t3(MEM_SEMAPHORE, 3), DATA, SEM_SIGNAL, 0]);
        b.failed_with(ec::INVALID_PACKET);
    }
}

#[test]
fn a_soft_reset_abandons_a_semaphore_wait() {
    for asic in Asic::ALL {
        let mut b = Bench::running(asic);
        b.poke(DATA, &[0, 0]);
        b.submit(&semaphore(DATA, SEM_WAIT));
        assert!(b.gpu.model().work_in_progress());
        b.wr(CP_ME_CNTL, HALT);
        b.wr(GRBM_SOFT_RESET, 1);
        b.wr(GRBM_SOFT_RESET, 0);
        assert!(!b.gpu.model().work_in_progress(), "{asic:?}");
        assert_eq!(peek64(&b, DATA), 0, "nothing taken");
    }
}

#[test]
fn strmout_buffer_update_is_documented_but_not_emulated() {
    // §9.6.6 STRMOUT_BUFFER_UPDATE updates graphics stream-out buffers (VGT_STRMOUT_*): the
    // model has no stream-out, so the CP stops with the "unsupported" error state.
    const STRMOUT_BUFFER_UPDATE: u32 = 0x34;
    for asic in Asic::ALL {
        let mut b = Bench::running(asic);
        b.submit(&[t3(STRMOUT_BUFFER_UPDATE, 5), 1, DATA, 0, 0, 0]);
        b.failed_with(ec::UNSUPPORTED_PACKET);
    }
}

// --- what the documents forbid is refused, not accepted silently (#19) -----------------------

#[test]
fn wait_reg_mem_polls_at_its_poll_interval() {
    // §9.6.8 DW7: "Time between these is 16*Poll_Interval clocks"; a tick is 64 clocks, so
    // POLL_INTERVAL 0x40 (1024 clocks) polls once every 16 ticks.
    let mut s = Stepper::running(Asic::Cypress);
    let mut ring = me_initialize();
    ring.extend([t3(WAIT_REG_MEM, 6), 1 << 4 | 3, DATA, 0, 1, 1, 0x40]);
    s.put(DATA, &[0]);
    s.put(RING, &ring);
    s.wr(RB_WPTR, ring.len() as u32);
    s.dev.tick_engines(1);
    for _ in 0..48 {
        assert_eq!(s.dev.tick_engines(1), gpu_device_model::Activity::Waiting);
    }
    assert_eq!(s.dev.model().stats().polls, 3, "one poll per 16 ticks");
    s.put(DATA, &[1]);
    s.dev.tick_engines(16);
    assert!(!s.dev.model().work_in_progress(), "the next poll sees the value");
}

#[test]
fn event_packets_need_their_documented_event_index_and_type() {
    for asic in Asic::ALL {
        // §9.6.2: EVENT_INDEX 0101 is the EOP time-stamp/fence index; the EOP events are the
        // cache-flush and bottom-of-pipe time stamps. Index 0 or type 0 is refused.
        for dw2 in [0x014, 0x500, 0x000, 0x407] {
            let mut b = Bench::running(asic);
            let mut p = eop(FENCE, 1, 0, 5);
            p[1] = dw2;
            b.submit(&p);
            b.failed_with(ec::INVALID_PACKET);
        }
        for dw2 in [0x504, 0x514, 0x515] {
            let mut b = Bench::running(asic);
            let mut p = eop(FENCE, 1, 0, 5);
            p[1] = dw2;
            b.submit(&p);
            b.ok();
            assert_eq!(b.peek(FENCE), 5, "{dw2:#x}");
        }
        // §9.6.3: EOS takes EVENT_INDEX 0110 (CS Done, PS Done).
        let eos = |dw2: u32| vec![t3(0x48, 4), dw2, FENCE, 2 << 29, 9];
        let mut b = Bench::running(asic);
        b.submit(&eos(0x2F));
        b.failed_with(ec::INVALID_PACKET);
        let mut b = Bench::running(asic);
        b.submit(&eos(0x62F));
        b.ok();
        assert_eq!(b.peek(FENCE), 9);
    }
}

#[test]
fn indirect_buffers_of_no_dwords_or_with_reserved_size_bits_are_refused() {
    for asic in Asic::ALL {
        // §9.3.1 DW4: IB_SIZE 19:0; bits 23:20 are reserved; size 0 is no buffer at all.
        for dw4 in [0, 1 << 20, 1 << 20 | 4] {
            let mut b = Bench::running(asic);
            b.poke(IB, &[T2; 4]);
            b.submit(&[t3(INDIRECT_BUFFER, 3), IB, 0, dw4]);
            b.failed_with(ec::INVALID_PACKET);
        }
        // An IB at bus address 0 was never placed.
        let mut b = Bench::running(asic);
        b.submit(&[t3(INDIRECT_BUFFER, 3), 0, 0, 4]);
        b.failed_with(ec::DMA_FETCH_FAULT);
    }
}

#[test]
fn bus_address_zero_is_an_unprogrammed_address_everywhere() {
    for asic in Asic::ALL {
        let stores: [(&str, Vec<u32>); 4] = [
            ("EOP", eop(0, 1, 0, 5)),
            // CP_DMA fill (SRC_SEL 2 DATA) of 64 bytes to DST 0.
            ("CP_DMA", vec![t3(CP_DMA, 5), 7, 2 << 29, 0, 0, 64]),
            ("EOS", vec![t3(0x48, 4), 0x62F, 0, 2 << 29, 9]),
            ("MEM_WRITE", vec![t3(MEM_WRITE, 4), 0, 1 << 18, 7, 0]),
        ];
        for (what, packet) in stores {
            let mut b = Bench::running(asic);
            b.submit(&packet);
            assert_eq!(b.error(), (ModelState::Error, ec::DMA_WRITE_FAULT), "{asic:?} {what}");
        }
        let mut b = Bench::running(asic);
        b.submit(&[t3(CP_DMA, 5), 0, 0, DATA, 0, 64]);
        b.failed_with(ec::DMA_FETCH_FAULT);
        // A semaphore is read before it is signalled or taken.
        for dw3 in [6 << 29, 7 << 29] {
            let mut b = Bench::running(asic);
            b.submit(&semaphore(0, dw3));
            b.failed_with(ec::DMA_FETCH_FAULT);
        }
        // A ring never placed: CP_RB_BASE keeps its reset value 0.
        let mut b = Bench::new(asic);
        b.load_microcode();
        b.ring(9, 1);
        b.wr(RB_BASE, 0);
        b.wr(CP_ME_CNTL, 0);
        b.poke(0, &me_initialize());
        b.wr(RB_WPTR, 7);
        b.failed_with(ec::DMA_FETCH_FAULT);
        assert!(!b.gpu.model().me_initialized(), "{asic:?}: nothing ran from address 0");
    }
}

#[test]
fn ring_and_ih_sizes_outside_their_range_are_refused() {
    for asic in Asic::ALL {
        // RB_BUFSZ 23 (a 64 MiB ring) and 1 are outside 2..=22: refused when the CP fetches.
        for bufsz in [1, 23] {
            let mut b = Bench::new(asic);
            b.load_microcode();
            b.ring(9, 1);
            b.wr(RB_CNTL, bufsz | 1 << 8);
            b.ring_dwords = 1024;
            b.wr(CP_ME_CNTL, 0);
            b.submit(&me_initialize());
            b.failed_with(ec::BAD_CONFIGURATION);
        }
        // IH_IB_SIZE 17 (log2 dwords) is past the largest IH ring.
        let mut b = Bench::running(asic);
        b.ih(17);
        b.submit(&eop(FENCE, 1, 2, 5));
        b.failed_with(ec::BAD_CONFIGURATION);
        // An IH ring never placed.
        let mut b = Bench::running(asic);
        b.ih(8);
        b.wr(IH_RB_BASE, 0);
        b.submit(&eop(FENCE, 1, 2, 5));
        b.failed_with(ec::DMA_WRITE_FAULT);
    }
}

#[test]
fn microcode_written_past_the_end_of_its_ram_is_an_error() {
    for asic in Asic::ALL {
        for engine in [Engine::Pfp, Engine::Me, Engine::Rlc] {
            let b = Bench::new(asic);
            let mut image = firmware(asic, engine);
            image.push(0);
            b.upload(engine, &image);
            assert_eq!(b.error(), (ModelState::Error, ec::UCODE_OVERFLOW), "{asic:?} {engine:?}");
        }
    }
}

// --- engines beside the CP, end of pipe, caches (§9.6, §8.6) ---------------------------------

const EVENT_WRITE_EOS: u32 = 0x48;
/// §9.6.1 EVENT_WRITE CS_PARTIAL_FLUSH (0x07, EVENT_INDEX 4): the CP waits for the compute
/// shaders before it.
const CS_PARTIAL_FLUSH: [u32; 2] = [t3c_const(EVENT_WRITE, 1), 4 << 8 | 0x07];
/// CP_COHER_CNTL (Linux radeon evergreend.h): CB0_DEST_BASE_ENA 6, TC_ACTION_ENA 23,
/// VC_ACTION_ENA 24, CB_ACTION_ENA 25, SH_ACTION_ENA 27.
const CB0_DEST_BASE: u32 = 1 << 6;
const TC_ACTION: u32 = 1 << 23;
const CB_ACTION: u32 = 1 << 25;
const SH_ACTION: u32 = 1 << 27;
/// Where the copies and flags of these tests go (behind the vector add's pool).
const COPY: u32 = 0x60_0000;
const FLAG: u32 = 0x30_4000;
/// Elements of the multi-tick vector add: 20 groups of 100 (several shader steps).
const N: usize = 2000;

const fn t3c_const(opcode: u32, body: u32) -> u32 {
    3 << 30 | (body - 1) << 16 | opcode << 8 | 2
}

/// §9.6.7 SURFACE_SYNC of everything (COHER_SIZE 0xFFFFFFFF, base 0, POLL_INTERVAL 10).
fn surface_sync(coher_cntl: u32) -> Vec<u32> {
    vec![t3(SURFACE_SYNC, 4), coher_cntl, 0xFFFF_FFFF, 0, 10]
}

/// §9.7.1 MEM_WRITE of one dword (DATA32).
fn mem_write(address: u32, value: u32) -> Vec<u32> {
    vec![t3(MEM_WRITE, 4), address, 1 << 18, value, 0]
}

/// §9.6.3 EVENT_WRITE_EOS (CS_DONE 0x2F, EVENT_INDEX 6), CMD 010: store DATA.
fn eos(address: u32, value: u32) -> Vec<u32> {
    vec![t3c(EVENT_WRITE_EOS, 4), 6 << 8 | 0x2F, address, 2 << 29, value]
}

/// CP_DMA (Linux radeon evergreend.h) copy of `bytes` from `src` to `dst`, CP_SYNC optional.
fn cp_dma_copy(src: u32, dst: u32, bytes: u32, sync: bool) -> Vec<u32> {
    vec![t3(CP_DMA, 5), src, u32::from(sync) << 31, dst, 0, bytes]
}

/// CP_DMA fill (SRC_SEL 2 = DATA) of `bytes` at `dst` with `value`.
fn cp_dma_fill(value: u32, dst: u32, bytes: u32, sync: bool) -> Vec<u32> {
    vec![t3(CP_DMA, 5), value, u32::from(sync) << 31 | 2 << 29, dst, 0, bytes]
}

/// The vector add C = A + B of [`N`] elements in the shader pool (words from address 0 up to
/// the end of C); `cached`: its RAT store is MEM_RAT (through the colour-buffer cache, CF_INST
/// 0x56) instead of MEM_RAT_CACHELESS (0x57).
fn vector_add_image(asic: Asic, a: &[u32], b: &[u32], cached: bool) -> Vec<u32> {
    use common::*;
    let mut m = mem();
    two_input_program(
        &mut m,
        asic.shader_chip(),
        DST_ARG2,
        [0x0000_0012, 0xA000_0000],
        [0x8080_8004, 0x0080_0010],
    );
    if cached {
        // CF 3's WORD1: CF_INST 29:22 from 0x57 to 0x56.
        let word1 = get(&mut m, PROG + 3 * 8 + 4, 1)[0];
        put(&mut m, PROG + 3 * 8 + 4, &[word1 - (1 << 22)]);
    }
    let groups = (N / 100) as u32;
    let mut cb = vec![groups, 1, 1, N as u32, 1, 1, 100, 1, 1];
    cb.extend([A, B, C]);
    put(&mut m, CB0, &cb);
    put(&mut m, POOL + u64::from(A), a);
    put(&mut m, POOL + u64::from(B), b);
    get(&mut m, 0, (POOL as usize + C as usize + 4 * N) / 4)
}

fn inputs(seed: u32) -> (Vec<u32>, Vec<u32>) {
    let a = (0..N).map(|i| (i as f32 * 0.5 + seed as f32).to_bits()).collect();
    let b = (0..N).map(|i| (1000.0 - i as f32 * 0.25 + seed as f32).to_bits()).collect();
    (a, b)
}

/// Where two word vectors first differ (`None`: equal), so a failure prints one element.
fn first_difference(got: &[u32], want: &[u32]) -> Option<(usize, u32, u32)> {
    assert_eq!(got.len(), want.len());
    got.iter().zip(want).enumerate().find(|(_, (g, w))| g != w).map(|(i, (g, w))| (i, *g, *w))
}

/// The state and DISPATCH_DIRECT of the vector add.
fn vector_add_dispatch() -> Vec<u32> {
    let mut p = compute_state(100);
    p.extend([t3c(DISPATCH_DIRECT, 4), (N / 100) as u32, 1, 1, 1]);
    p
}

/// The sums the vector add computes (a float add).
fn sums(a: &[u32], b: &[u32]) -> Vec<u32> {
    a.iter().zip(b).map(|(x, y)| (f32::from_bits(*x) + f32::from_bits(*y)).to_bits()).collect()
}

fn peek_n(b: &Bench, address: u32, n: usize) -> Vec<u32> {
    (0..n).map(|i| b.peek(address + 4 * i as u32)).collect()
}

impl Bench {
    /// [`Bench::running`] with the vector add's memory image ([`vector_add_image`]).
    fn with_vector_add(asic: Asic, inputs: (&[u32], &[u32]), cached: bool) -> Bench {
        let b = Bench::running(asic);
        b.poke(0, &vector_add_image(asic, inputs.0, inputs.1, cached));
        b
    }

    /// The vector add's DISPATCH_DIRECT again (its state is still set), after a SURFACE_SYNC
    /// of `coher_cntl` if there is one.
    fn dispatch_again(&mut self, coher_cntl: Option<u32>) {
        let mut p = coher_cntl.map(surface_sync).unwrap_or_default();
        p.extend([t3c(DISPATCH_DIRECT, 4), (N / 100) as u32, 1, 1, 1]);
        self.submit(&p);
        self.ok();
    }
}

#[test]
fn a_copy_behind_a_running_dispatch_reads_stale_data_unless_the_cs_partial_flush_waits() {
    // The CP hands the dispatch to the shader core and parses on: a CP DMA of the dispatch's
    // output queued right behind it copies what memory held before (a driver that forgot the
    // partial flush); §9.6.1 CS_PARTIAL_FLUSH makes the CP wait for the compute shaders first.
    let (a, b_in) = inputs(1);
    let want = sums(&a, &b_in);
    for asic in Asic::ALL {
        for flush in [false, true] {
            let mut b = Bench::with_vector_add(asic, (&a, &b_in), false);
            b.poke(COPY, &[SENTINEL; N]);
            let mut p = vector_add_dispatch();
            if flush {
                p.extend(CS_PARTIAL_FLUSH);
            }
            p.extend(cp_dma_copy(common::POOL as u32 + common::C, COPY, 4 * N as u32, true));
            b.submit(&p);
            b.ok();
            let out = peek_n(&b, common::POOL as u32 + common::C, N);
            assert_eq!(first_difference(&out, &want), None, "{asic:?}: the dispatch completes");
            let copy = peek_n(&b, COPY, N);
            if flush {
                assert_eq!(first_difference(&copy, &want), None, "{asic:?}: the copy waited");
            } else {
                assert_eq!(copy[N - 1], 0, "{asic:?}: the copy ran beside the dispatch");
            }
        }
    }
}

#[test]
fn cp_dma_runs_beside_the_cp_unless_cp_sync_holds_it() {
    // A 64 KiB fill takes 16 DMA slices; a MEM_WRITE behind it lands at once unless the
    // CP_DMA's CP_SYNC bit makes the CP wait for the transfer (Linux radeon evergreend.h).
    for asic in Asic::ALL {
        for sync in [false, true] {
            let mut s = Stepper::running(asic);
            let mut ring = me_initialize();
            ring.extend(cp_dma_fill(0xAB, DATA, 0x1_0000, sync));
            ring.extend(mem_write(FLAG, 1));
            s.put(FLAG, &[0]);
            s.put(RING, &ring);
            s.wr(RB_WPTR, ring.len() as u32);
            s.tick_until_set(FLAG, 100);
            let last = s.peek(DATA + 0x1_0000 - 4);
            if sync {
                assert_eq!(last, 0xAB, "{asic:?}: CP_SYNC: the fill was complete first");
            } else {
                assert_eq!(last, 0, "{asic:?}: the flag landed while the fill ran");
                assert!(s.dev.model().work_in_progress());
            }
        }
    }
}

impl Stepper {
    /// [`Stepper::running`] with the RLC image running and the IH ring on (as `Bench::ih`).
    fn with_ih(asic: Asic) -> Stepper {
        let mut s = Stepper::running(asic);
        s.wr(RLC_ADDR, 0);
        for w in firmware(asic, Engine::Rlc) {
            s.wr(RLC_DATA, w);
        }
        s.wr(RLC_CNTL, 1);
        s.wr(IH_RB_BASE, IH_RING >> 8);
        s.wr(IH_WPTR_ADDR_LO, IH_WPTR_COPY);
        s.wr(IH_RB_CNTL, 1 | 6 << 1 | 1 << 8 | 1 << 16);
        s.wr(IH_CNTL, 1);
        s.wr(CP_INT_CNTL, 1 << 26);
        s
    }

    /// The vector add's memory image; on the ring ME_INITIALIZE, its dispatch, then `tail`;
    /// FLAG and FENCE cleared.
    fn submit_vector_add(
        &mut self,
        asic: Asic,
        inputs: (&[u32], &[u32]),
        cached: bool,
        tail: &[u32],
    ) {
        self.put(0, &vector_add_image(asic, inputs.0, inputs.1, cached));
        let mut ring = me_initialize();
        ring.extend(vector_add_dispatch());
        ring.extend_from_slice(tail);
        self.put(FENCE, &[0]);
        self.put(FLAG, &[0]);
        self.put(RING, &ring);
        self.wr(RB_WPTR, ring.len() as u32);
    }

    /// Tick until the dword at `address` is not 0 (at most `limit` ticks); the ticks it took.
    fn tick_until_set(&mut self, address: u32, limit: u32) -> u32 {
        let mut ticks = 0;
        while self.peek(address) == 0 {
            self.dev.tick_engines(1);
            ticks += 1;
            assert!(ticks < limit, "{address:#x} never written");
        }
        ticks
    }

    fn vector_add_output(&self) -> Vec<u32> {
        (0..N).map(|i| self.peek(common::POOL as u32 + common::C + 4 * i as u32)).collect()
    }
}

#[test]
fn the_eop_is_written_at_the_end_of_the_pipe_and_int_sel_2_interrupts_after_the_write() {
    // §9.6.2: the EOP behind a dispatch is written once the dispatch is done, while a
    // MEM_WRITE behind it lands at the top of the pipe (§9.7.1) at once; INT_SEL 2 sends the
    // interrupt "when Write Confirm is received": the vector appears the tick after the fence.
    let (a, b_in) = inputs(2);
    let want = sums(&a, &b_in);
    for asic in Asic::ALL {
        let mut s = Stepper::with_ih(asic);
        let tail = [eop(FENCE, 1, 2, 0xF00D), mem_write(FLAG, 1)].concat();
        s.submit_vector_add(asic, (&a, &b_in), false, &tail);
        s.tick_until_set(FLAG, 100);
        assert_eq!(s.peek(FENCE), 0, "{asic:?}: the MEM_WRITE passed the EOP");
        assert!(s.dev.model().dispatches_in_flight() > 0, "{asic:?}");
        s.tick_until_set(FENCE, 1000);
        let out = s.vector_add_output();
        assert_eq!(first_difference(&out, &want), None, "{asic:?}: the fence came after the work");
        assert_eq!(s.rd(IH_RB_WPTR), 0, "{asic:?}: no interrupt before the write confirm");
        s.dev.tick_engines(1);
        assert_eq!(s.rd(IH_RB_WPTR), 16, "{asic:?}: the interrupt after the write confirm");
        assert_eq!(s.peek(IH_RING), 181);
    }
}

#[test]
fn rat_writes_stay_in_the_colour_buffer_cache_until_a_flush() {
    // §8.6: MEM_RAT exports go through the CB; an end-of-shader fence (§9.6.3) says the
    // shaders are done, not that their writes left the CB cache. SURFACE_SYNC with CB_ACTION and
    // CB0's DEST_BASE_ENA, or an EOP with a cache-flush event (§9.6.2 "Cache Flush And Inval
    // TS"), writes them back; a sync of another colour buffer does not.
    let (a, b_in) = inputs(3);
    let want = sums(&a, &b_in);
    let out = |b: &Bench| peek_n(b, common::POOL as u32 + common::C, N);
    for asic in Asic::ALL {
        let mut b = Bench::with_vector_add(asic, (&a, &b_in), true);
        let mut p = vector_add_dispatch();
        p.extend(eos(FENCE, 1));
        b.submit(&p);
        b.ok();
        assert_eq!(b.peek(FENCE), 1, "{asic:?}: the shaders are done");
        assert_eq!(out(&b)[..100], [0; 100], "{asic:?}: stale memory");
        assert!(b.gpu.model().dirty_cache_lines() > 0);
        b.submit(&surface_sync(CB_ACTION | CB0_DEST_BASE << 1));
        assert_eq!(out(&b)[..100], [0; 100], "{asic:?}: CB1's sync leaves CB0's lines");
        b.submit(&surface_sync(CB_ACTION | CB0_DEST_BASE));
        assert_eq!(first_difference(&out(&b), &want), None, "{asic:?}: CB0 flushed");
        assert_eq!(b.gpu.model().dirty_cache_lines(), 0);
        // The fence of the driver: EOP with CACHE_FLUSH_AND_INV_EVENT_TS after the dispatch.
        b.poke(common::POOL as u32 + common::C, &[0; N]);
        let mut p = vector_add_dispatch();
        p.extend(eop(FENCE, 1, 0, 2));
        b.submit(&p);
        assert_eq!(b.peek(FENCE), 2);
        assert_eq!(first_difference(&out(&b), &want), None, "{asic:?}: flushed at the EOP");
    }
}

#[test]
fn fetches_see_stale_lines_until_the_texture_cache_is_invalidated() {
    // §8.6: shaders read memory "via TC". Inputs the CPU changes after a dispatch read them are
    // unseen by the next dispatch until a SURFACE_SYNC with TC_ACTION (§9.6.7) invalidates them.
    let (a, b_in) = inputs(4);
    let (a2, _) = inputs(40);
    for asic in Asic::ALL {
        for invalidate in [false, true] {
            let mut b = Bench::with_vector_add(asic, (&a, &b_in), false);
            b.submit(&vector_add_dispatch());
            b.poke(common::POOL as u32 + common::A, &a2);
            b.dispatch_again(invalidate.then_some(TC_ACTION));
            let got = peek_n(&b, common::POOL as u32 + common::C, N);
            let fresh = sums(&a2, &b_in);
            let want = if invalidate { fresh } else { sums(&a, &b_in) };
            // Without the invalidate, the old inputs come from the cache.
            assert_eq!(first_difference(&got, &want), None, "{asic:?} {invalidate}");
        }
    }
}

#[test]
fn constants_come_from_the_shader_cache_until_sh_action_invalidates_it() {
    // The kernel arguments (the output offset, dword 11 of constant buffer 0) are read into the
    // kcache; an argument the CPU changes between two dispatches is unseen until a
    // SURFACE_SYNC with SH_ACTION_ENA (§9.6.7, CP_COHER_CNTL bit 27).
    let (a, b_in) = inputs(5);
    let want = sums(&a, &b_in);
    for asic in Asic::ALL {
        for invalidate in [false, true] {
            let mut b = Bench::with_vector_add(asic, (&a, &b_in), false);
            b.submit(&vector_add_dispatch());
            b.poke(common::POOL as u32 + common::C, &[0; N]);
            // The third argument (C) now names R.
            b.poke(common::CB0 as u32 + 4 * 11, &[common::R]);
            b.dispatch_again(invalidate.then_some(SH_ACTION));
            let (fresh, stale) =
                if invalidate { (common::R, common::C) } else { (common::C, common::R) };
            let written = peek_n(&b, common::POOL as u32 + fresh, N);
            assert_eq!(first_difference(&written, &want), None, "{asic:?} {invalidate}");
            assert_eq!(b.peek(common::POOL as u32 + stale), 0, "{asic:?} {invalidate}");
        }
    }
}

#[test]
fn a_surface_sync_of_the_colour_buffer_waits_for_the_dispatch_writing_it() {
    // §9.6.7: the sync makes the surface coherent, so the CP waits at it for the dispatch
    // still writing CB0 and then writes its lines back: a MEM_WRITE behind it lands after both.
    let (a, b_in) = inputs(6);
    let want = sums(&a, &b_in);
    for asic in Asic::ALL {
        let mut s = Stepper::running(asic);
        let tail = [surface_sync(CB_ACTION | CB0_DEST_BASE), mem_write(FLAG, 1)].concat();
        s.submit_vector_add(asic, (&a, &b_in), true, &tail);
        let ticks = s.tick_until_set(FLAG, 1000);
        assert!(ticks > 2, "{asic:?}: the CP waited ({ticks} ticks)");
        assert_eq!(first_difference(&s.vector_add_output(), &want), None, "{asic:?}");
        assert_eq!(s.dev.model().dirty_cache_lines(), 0);
    }
}

#[test]
fn a_dispatch_reading_the_previous_ones_output_needs_a_partial_flush() {
    // Two dispatches in flight share the shader core: the second (R = C + B) runs beside the
    // first (C = A + B) and reads C before all of it is written, unless a CS_PARTIAL_FLUSH
    // (§9.6.1) holds it back. With the partial flush and the read caches' SURFACE_SYNC
    // (§9.6.7), as a driver writes them between dependent dispatches, R = A + 2B everywhere.
    let (a, b_in) = inputs(7);
    let c = sums(&a, &b_in);
    let want = sums(&c, &b_in);
    for asic in Asic::ALL {
        for synchronised in [false, true] {
            let mut b = Bench::with_vector_add(asic, (&a, &b_in), false);
            // The second kernel's arguments in constant buffer 1: C + B into R.
            let groups = (N / 100) as u32;
            let args = [groups, 1, 1, N as u32, 1, 1, 100, 1, 1, common::C, common::B, common::R];
            b.poke(common::CB1 as u32, &args);
            let mut p = vector_add_dispatch();
            if synchronised {
                p.extend(CS_PARTIAL_FLUSH);
                p.extend(surface_sync(TC_ACTION));
            }
            // SQ_ALU_CONST_CACHE_LS_0 0x28F40 = CB1 >> 8 (the first dispatch keeps its own).
            p.extend(set_context(0x2_8F40, &[(common::CB1 >> 8) as u32]));
            p.extend([t3c(DISPATCH_DIRECT, 4), groups, 1, 1, 1]);
            b.submit(&p);
            b.ok();
            let r = peek_n(&b, common::POOL as u32 + common::R, N);
            if synchronised {
                assert_eq!(first_difference(&r, &want), None, "{asic:?}");
            } else {
                assert!(first_difference(&r, &want).is_some(), "{asic:?}: no stale element");
            }
        }
    }
}

#[test]
fn a_fence_is_in_flight_after_the_cp_has_parsed_the_whole_ring() {
    // §9.6.2: the EOP event travels down the pipe. On the tick the CP parses it (the read
    // pointer reaches the write pointer) its fence is not written yet; on the next tick it is.
    for asic in Asic::ALL {
        let mut s = Stepper::running(asic);
        let mut ring = me_initialize();
        ring.extend(eop(FENCE, 1, 0, 7));
        s.put(FENCE, &[0]);
        s.put(RING, &ring);
        s.wr(RB_WPTR, ring.len() as u32);
        s.dev.tick_engines(1);
        assert_eq!(s.rd(RB_RPTR), ring.len() as u32, "{asic:?}: the CP parsed everything");
        assert_eq!(s.peek(FENCE), 0, "{asic:?}: the fence is in flight");
        s.dev.tick_engines(1);
        assert_eq!(s.peek(FENCE), 7, "{asic:?}");
    }
}
