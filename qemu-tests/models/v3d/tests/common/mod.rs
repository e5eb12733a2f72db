//! Shared fixtures: a tiny QPU instruction encoder written from the bit layouts (§3 Figure 3 as
//! Mesa's public vc4_qpu_defines.h places the fields: sig 63:60, unpack 59:57, pm 56, pack
//! 55:52, cond_add 51:49, cond_mul 48:46, sf 45, ws 44, waddr_add 43:38, waddr_mul 37:32,
//! op_mul 31:29, op_add 28:24, raddr_a 23:18, raddr_b 17:12, add_a 11:9, add_b 8:6, mul_a
//! 5:3, mul_b 2:0) — not the project's assembler — and a bench that steps the model's engines.
#![allow(dead_code)]

use gpu_device_model::VecMemory;
use gpu_device_model::{Activity, Device, DeviceContext, Pacing, PlatformDevice, PlatformModel};
use gpu_mailbox::{Op, Status, platform};
use v3d_model::V3d;
use v3d_model::scheduler::Qpus;
use v3d_model::shading::{FragmentBatch, FragmentShading, ShadingStep};

/// Register offsets (§10 Table 48; DBCFG/DBQITE/DBQITC from Broadcom's public reg_v3d.h).
pub const IDENT0: u32 = 0x000;
pub const IDENT1: u32 = 0x004;
pub const IDENT2: u32 = 0x008;
pub const SCRATCH: u32 = 0x010;
pub const L2CACTL: u32 = 0x020;
pub const SLCACTL: u32 = 0x024;
pub const INTCTL: u32 = 0x030;
pub const INTENA: u32 = 0x034;
pub const INTDIS: u32 = 0x038;
pub const SQRSV0: u32 = 0x410;
pub const SRQPC: u32 = 0x430;
pub const SRQUA: u32 = 0x434;
pub const SRQUL: u32 = 0x438;
pub const SRQCS: u32 = 0x43C;
pub const VPMBASE: u32 = 0x504;
pub const DBCFG: u32 = 0xE00;
pub const DBQITE: u32 = 0xE2C;
pub const DBQITC: u32 = 0xE30;

// Register-space addresses (§3 Table 14).
pub const R0: u64 = 32;
pub const R1: u64 = 33;
pub const R2: u64 = 34;
pub const R3: u64 = 35;
pub const UNIF: u64 = 32;
pub const VARY: u64 = 35;
pub const ELEM: u64 = 38;
pub const HOST_INT: u64 = 38;
pub const NOP_ADDR: u64 = 39;
pub const UNIF_ADDR: u64 = 40;
pub const TLB_Z: u64 = 44;
pub const TLB_COLOUR_ALL: u64 = 46;
pub const VPM: u64 = 48;
pub const VPM_SETUP: u64 = 49;
pub const VPM_DMA_ADDR: u64 = 50;
pub const VPM_WAIT: u64 = 50;
pub const MUTEX: u64 = 51;
pub const SFU_RECIP: u64 = 52;
pub const SFU_RECIPSQRT: u64 = 53;
pub const SFU_EXP: u64 = 54;
pub const SFU_LOG: u64 = 55;
pub const TMU0_S: u64 = 56;

// Input muxes (§3 Table 3).
pub const M_R0: u64 = 0;
pub const M_R1: u64 = 1;
pub const M_R2: u64 = 2;
pub const M_R3: u64 = 3;
pub const M_R4: u64 = 4;
pub const M_R5: u64 = 5;
pub const M_A: u64 = 6;
pub const M_B: u64 = 7;

/// An ALU instruction's fields; [`NOP`] plus the fields a test sets.
#[derive(Clone, Copy, Debug)]
pub struct I {
    pub sig: u64,
    pub unpack: u64,
    pub pm: u64,
    pub pack: u64,
    pub cond_add: u64,
    pub cond_mul: u64,
    pub sf: u64,
    pub ws: u64,
    pub waddr_add: u64,
    pub waddr_mul: u64,
    pub op_mul: u64,
    pub op_add: u64,
    pub raddr_a: u64,
    pub raddr_b: u64,
    pub add_a: u64,
    pub add_b: u64,
    pub mul_a: u64,
    pub mul_b: u64,
}

/// `nop`: sig 1, write and read addresses 39, conditions never (hi 0x100009E7, lo
/// 0x009E7000).
pub const NOP: I = I {
    sig: 1,
    unpack: 0,
    pm: 0,
    pack: 0,
    cond_add: 0,
    cond_mul: 0,
    sf: 0,
    ws: 0,
    waddr_add: 39,
    waddr_mul: 39,
    op_mul: 0,
    op_add: 0,
    raddr_a: 39,
    raddr_b: 39,
    add_a: 0,
    add_b: 0,
    mul_a: 0,
    mul_b: 0,
};

impl I {
    pub fn word(self) -> u64 {
        self.sig << 60
            | self.unpack << 57
            | self.pm << 56
            | self.pack << 52
            | self.cond_add << 49
            | self.cond_mul << 46
            | self.sf << 45
            | self.ws << 44
            | self.waddr_add << 38
            | self.waddr_mul << 32
            | self.op_mul << 29
            | self.op_add << 24
            | self.raddr_a << 18
            | self.raddr_b << 12
            | self.add_a << 9
            | self.add_b << 6
            | self.mul_a << 3
            | self.mul_b
    }
}

/// Add-pipe operation `op` (§3 Table 12) `waddr = a op b`, always.
pub fn add_op(op: u64, waddr: u64, a: u64, b: u64) -> I {
    I { op_add: op, cond_add: 1, waddr_add: waddr, add_a: a, add_b: b, ..NOP }
}

/// `mov waddr, mux` through the add pipe (`or x, x`).
pub fn mov(waddr: u64, mux: u64) -> I {
    add_op(21, waddr, mux, mux)
}

/// `mov waddr, regfile-A/IO read raddr_a`.
pub fn mov_a(waddr: u64, raddr_a: u64) -> I {
    I { raddr_a, ..mov(waddr, M_A) }
}

/// Mul-pipe operation `op` (§3 Table 13) `waddr = a op b`, always.
pub fn mul_op(op: u64, waddr: u64, a: u64, b: u64) -> I {
    I { op_mul: op, cond_mul: 1, waddr_mul: waddr, mul_a: a, mul_b: b, ..NOP }
}

/// `ldi` (sig 14, mode 0): the 32-bit immediate to `waddr` through the add pipe.
pub fn ldi(waddr: u64, imm: u32) -> u64 {
    14 << 60 | 1 << 49 | waddr << 38 | 39 << 32 | u64::from(imm)
}

/// `ldi` to a B-space register (write swap: the add pipe writes regfile B space).
pub fn ldi_b(waddr: u64, imm: u32) -> u64 {
    ldi(waddr, imm) | 1 << 44
}

/// Per-element load immediate, mode 1 (signed) or 3 (unsigned).
pub fn ldi_elements(waddr: u64, mode: u64, ms: u16, ls: u16) -> u64 {
    14 << 60 | mode << 57 | 1 << 49 | waddr << 38 | 39 << 32 | u64::from(ms) << 16 | u64::from(ls)
}

/// Semaphore (sig 14, mode 4): acquire (decrement) or release.
pub fn sema(acquire: bool, n: u64) -> u64 {
    14 << 60 | 4 << 57 | 39 << 38 | 39 << 32 | u64::from(acquire) << 4 | n
}

/// Branch (sig 15): condition, relative, immediate.
pub fn branch(cond: u64, rel: bool, imm: i32) -> u64 {
    15 << 60 | cond << 52 | u64::from(rel) << 51 | 39 << 38 | 39 << 32 | u64::from(imm as u32)
}

/// A thread end (sig 3) with nothing else.
pub const END: I = I { sig: 3, ..NOP };

/// VPM generic block write setup (§7 Table 32): horizontal 32-bit, stride 1, row `y`.
pub fn vpm_write_setup(y: u32) -> u32 {
    1 << 12 | 1 << 11 | 2 << 8 | y
}

/// VPM generic block read setup (Table 33): `num` horizontal 32-bit rows from `y`, stride 1.
pub fn vpm_read_setup(num: u32, y: u32) -> u32 {
    (num & 0xF) << 20 | 1 << 12 | 1 << 11 | 2 << 8 | y
}

/// VDW basic setup (Table 34): `units` rows of `depth` words, horizontal, from VPM row `y`.
pub fn vdw_setup(units: u32, depth: u32, y: u32) -> u32 {
    2 << 30 | (units & 0x7F) << 23 | (depth & 0x7F) << 16 | 1 << 14 | (y << 4) << 3
}

/// VDR basic setup (Table 36): one row of 16 words, 32-bit, horizontal, to VPM row `y`
/// (MPITCH 1: 16-byte pitch, irrelevant for one row).
pub fn vdr_setup(y: u32) -> u32 {
    1 << 31 | 1 << 24 | 1 << 16 | 1 << 12 | y << 4
}

/// The three-instruction program end (thread end and two delay-slot nops).
pub fn end() -> Vec<u64> {
    vec![END.word(), NOP.word(), NOP.word()]
}

/// Write `units` VPM rows from row `y` (16 words each) to the next uniform's address through
/// the VDW and wait.
pub fn store_rows(units: u32, y: u32) -> Vec<u64> {
    vec![
        ldi_b(VPM_SETUP, vdw_setup(units, 16, y)),
        mov_a(VPM_DMA_ADDR, UNIF).ws(),
        I { raddr_b: VPM_WAIT, ..NOP }.word(),
    ]
}

/// Write the 16 words of VPM row `y` to the next uniform's address.
pub fn store_row(y: u32) -> Vec<u64> {
    store_rows(1, y)
}

impl I {
    /// With write swap (add pipe to regfile B space).
    pub fn ws(self) -> u64 {
        I { ws: 1, ..self }.word()
    }
}

pub fn w(i: I) -> u64 {
    i.word()
}

/// Guest memory layout.
pub const CODE: u32 = 0x1_0000;
pub const CODE2: u32 = 0x1_2000;
pub const UNIFORMS: u32 = 0x2_0000;
pub const UNIFORMS2: u32 = 0x2_1000;
pub const OUT: u32 = 0x3_0000;
pub const OUT2: u32 = 0x3_1000;
pub const DATA: u32 = 0x4_0000;

/// A device whose engines advance only when the test ticks them.
pub struct Bench {
    pub dev: Device<PlatformDevice<V3d>>,
}

impl Bench {
    pub fn new() -> Bench {
        Self::with(V3d::new())
    }

    pub fn with(model: V3d) -> Bench {
        let memory = VecMemory::new(16 << 20).unwrap();
        let model = PlatformDevice::new(model, platform::DEVICE_V3D);
        let mut dev = Device::new(model, Box::new(memory)).unwrap();
        dev.set_pacing(Pacing::Threaded { ticks_per_ms: 1 });
        assert_eq!(dev.handle(Op::ConfigWrite as u32, 0, 4, 0b110).0, Status::Ok);
        let mut b = Bench { dev };
        // The user VPM reservation GPU_FFT (hello_fft) relies on.
        b.wr(VPMBASE, 16);
        b
    }

    pub fn wr(&mut self, offset: u32, value: u32) {
        assert_eq!(self.dev.handle(Op::MmioWrite as u32, 0, offset, value).0, Status::Ok);
    }

    pub fn rd(&mut self, offset: u32) -> u32 {
        self.dev.handle(Op::MmioRead as u32, 0, offset, 0).1
    }

    pub fn put(&mut self, address: u32, words: &[u32]) {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        self.dev.memory_mut().write(u64::from(address), &bytes).unwrap();
    }

    pub fn code(&mut self, address: u32, program: &[u64]) {
        let words: Vec<u32> = program.iter().flat_map(|&i| [i as u32, (i >> 32) as u32]).collect();
        self.put(address, &words);
    }

    pub fn peek(&self, address: u32) -> u32 {
        let mut b = [0u8; 4];
        self.dev.memory().read(u64::from(address), &mut b).unwrap();
        u32::from_le_bytes(b)
    }

    pub fn peek_n(&self, address: u32, n: usize) -> Vec<u32> {
        (0..n).map(|i| self.peek(address + 4 * i as u32)).collect()
    }

    /// Queue a user program (SRQUA, SRQUL, then SRQPC as §10 Tables 65-67 order them).
    pub fn submit(&mut self, code: u32, uniforms: u32, length: u32) {
        self.wr(SRQUA, uniforms);
        self.wr(SRQUL, length);
        self.wr(SRQPC, code);
    }

    /// Tick until the engines are not busy (at most `max` ticks); returns the ticks run.
    pub fn run(&mut self, max: u32) -> u32 {
        for n in 1..=max {
            if self.dev.tick_engines(1) != Activity::Busy {
                return n;
            }
        }
        max
    }

    /// User programs completed (SRQCS QPURQCC, bits 23:16).
    pub fn completed(&mut self) -> u32 {
        self.rd(SRQCS) >> 16 & 0xFF
    }

    pub fn model(&self) -> &V3d {
        self.dev.model().model()
    }
}

/// Write the vector in `mux` as VPM row `y`, then store the row to the next uniform's address.
pub fn store_vector(mux: u64, y: u32) -> Vec<u64> {
    let mut p = vec![ldi_b(VPM_SETUP, vpm_write_setup(y)), w(mov(VPM, mux))];
    p.extend(store_row(y));
    p
}

impl Bench {
    /// Run `program` (the program end appended) at [`CODE`] as one user program with
    /// `uniforms`, to completion, without a fault.
    pub fn run_program(&mut self, program: &[u64], uniforms: &[u32]) {
        let mut p = program.to_vec();
        p.extend(end());
        self.code(CODE, &p);
        self.put(UNIFORMS, uniforms);
        let done = self.completed();
        self.submit(CODE, UNIFORMS, uniforms.len() as u32);
        self.run(1000);
        assert_eq!(self.model().fault(), None);
        assert_eq!(self.completed(), done + 1);
    }
}

/// Run `program` (the program end appended) as one user program whose one uniform is
/// [`OUT`], on a new bench.
pub fn run_user(program: &[u64]) -> Bench {
    let mut b = Bench::new();
    b.run_program(program, &[OUT]);
    b
}

/// A test-only renderer: steps one fragment thread from the model's tick, 4 instructions a
/// tick, as the control-list executor does.
#[derive(Default)]
pub struct Renderer {
    pub qpus: Qpus,
    pub result: Option<ShadingStep>,
    pub steps: u32,
}

impl PlatformModel for Renderer {
    fn window_bytes(&self) -> u64 {
        16
    }
    fn read(&mut self, _: u32, _: &mut DeviceContext<'_>) -> u32 {
        0
    }
    fn write(&mut self, _: u32, _: u32, _: &mut DeviceContext<'_>) {}
    fn tick(&mut self, dev: &mut DeviceContext<'_>) -> Activity {
        if self.result.is_some() {
            return Activity::Idle;
        }
        self.steps += 1;
        match self.qpus.step(dev, 4) {
            ShadingStep::Running => Activity::Busy,
            done => {
                self.result = Some(done);
                Activity::Idle
            }
        }
    }
    fn reset(&mut self) {}
}

/// Run `program` as a fragment shader on `batch` for at most `ticks` ticks (with the QPUs'
/// instruction limit lowered to `limit` if given); the result, if it finished, and the ticks.
pub fn shade_with(
    program: &[u64],
    batch: FragmentBatch,
    limit: Option<u64>,
    ticks: u32,
) -> (Option<ShadingStep>, u32) {
    let memory = VecMemory::new(1 << 20).unwrap();
    let model = PlatformDevice::new(Renderer::default(), platform::DEVICE_V3D);
    let mut dev = Device::new(model, Box::new(memory)).unwrap();
    dev.set_pacing(Pacing::Threaded { ticks_per_ms: 1 });
    let bytes: Vec<u8> = program.iter().flat_map(|i| i.to_le_bytes()).collect();
    dev.memory_mut().write(u64::from(batch.code_address), &bytes).unwrap();
    let renderer = dev.model_mut().model_mut();
    if let Some(limit) = limit {
        renderer.qpus.shared.instruction_limit = limit;
    }
    renderer.qpus.start(batch);
    assert_eq!(dev.handle(Op::ConfigWrite as u32, 0, 4, 0b110).0, Status::Ok);
    dev.tick_engines(ticks);
    let r = dev.model().model();
    (r.result.clone(), r.steps)
}
