//! Shared fixtures: an in-process GT215, falcon upload through the §2.10.7 / §2.10.4 ports and
//! a bounded wait for a falcon to stop.
//!
//! Falcon programs in these tests are bytes written by hand from the §2.10.2 formats (size in
//! byte 0 bits 7:6, subopcodes O1/O2/OL/O3, registers R1 = byte 1 low nibble, R2 = byte 1 high
//! nibble, R3 = byte 2 high nibble, I8 = byte 2, I16 = bytes 2-3); each line says which form
//! it is. Nothing encodes instructions from field values.
#![allow(dead_code, unused_imports)]

use baregpu_hal::RegisterIo;
use gpu_device_model::{InProcess, InProcessOptions, Pacing};
pub use gt215_model::falcon::{Engine, INSNS_PER_TICK, State};
pub use gt215_model::{Gt215, Stats};

/// Host window offsets of the falcon registers (§2.10.10 Table 18).
pub mod reg {
    pub const INTR_SET: usize = 0x000;
    pub const INTR_CLEAR: usize = 0x004;
    pub const INTR: usize = 0x008;
    pub const INTR_EN_SET: usize = 0x010;
    pub const INTR_EN: usize = 0x018;
    pub const INTR_ROUTING: usize = 0x01c;
    pub const TIME_LOW: usize = 0x02c;
    pub const SCRATCH0: usize = 0x040;
    pub const SCRATCH1: usize = 0x044;
    pub const SCRATCH2: usize = 0x080;
    pub const STATUS: usize = 0x04c;
    pub const UC_CTRL: usize = 0x100;
    pub const UC_ENTRY: usize = 0x104;
    pub const UC_CAPS: usize = 0x108;
    pub const XFER_EXT_BASE: usize = 0x110;
    pub const XFER_LOCAL_ADDRESS: usize = 0x114;
    pub const XFER_CTRL: usize = 0x118;
    pub const XFER_EXT_OFFSET: usize = 0x11c;
    pub const XFER_STATUS: usize = 0x120;
    pub const UC_CAPS2: usize = 0x12c;
    pub const TLB_CMD: usize = 0x140;
    pub const TLB_CMD_RES: usize = 0x144;
    pub const CODE_INDEX: usize = 0x180;
    pub const CODE: usize = 0x184;
    pub const CODE_VIRT: usize = 0x188;
    pub const DATA_INDEX: usize = 0x1c0;
    pub const DATA: usize = 0x1c4;
    pub const UC_SP: usize = 0xfec;
    pub const UC_PC: usize = 0xff0;
}

/// UC_CTRL bit 1: start (§2.10.6 "Start by UC_CTRL"; envytools rnndb falcon.xml).
pub const START: u32 = 1 << 1;
/// UC_CTRL bit 4: stopped.
pub const HALTED: u32 = 1 << 4;
/// CODE_INDEX / DATA_INDEX bit 24: write auto-increment (§2.10.7, §2.10.4).
pub const WRITE_AUTOINC: u32 = 1 << 24;
/// Bit 25: read auto-increment.
pub const READ_AUTOINC: u32 = 1 << 25;

/// A GT215 with the given pacing (or the environment's).
pub fn gpu_with(pacing: Option<Pacing>) -> InProcess<Gt215> {
    let options = InProcessOptions { pacing, ..InProcessOptions::default() };
    InProcess::with_options(Gt215::new(), options).unwrap()
}

/// A GT215 run to idle after every access (deterministic counts).
pub fn gpu() -> InProcess<Gt215> {
    gpu_with(Some(Pacing::RunToIdle))
}

/// The pacings every falcon program result must not depend on.
pub fn pacings() -> Vec<Pacing> {
    vec![
        Pacing::RunToIdle,
        Pacing::Seeded(1),
        Pacing::Seeded(0xDEAD_BEEF),
        Pacing::Seeded(42),
        Pacing::Threaded { ticks_per_ms: 50 },
    ]
}

/// PMC.ENABLE with every engine on (PCOPY is bit 13 on GT215).
pub fn enable_all(gpu: &InProcess<Gt215>) {
    gpu.write32(0x200, 0xFFFF_FFFF);
}

/// Register access to one falcon's host window.
pub struct Falcon<'a> {
    pub gpu: &'a InProcess<Gt215>,
    pub base: usize,
}

impl<'a> Falcon<'a> {
    pub fn new(gpu: &'a InProcess<Gt215>, engine: Engine) -> Self {
        Falcon { gpu, base: engine.base() as usize }
    }
    pub fn read(&self, offset: usize) -> u32 {
        self.gpu.read32(self.base + offset)
    }
    pub fn write(&self, offset: usize, value: u32) {
        self.gpu.write32(self.base + offset, value)
    }

    /// Upload `code` (padded to whole 0x100-byte pages) to physical page `phys`, virtual page
    /// `virt` and up: per page CODE_VIRT, then 0x40 words through CODE with write
    /// auto-increment (§2.10.7 "In summary, to upload a single page of code").
    pub fn upload_code(&self, phys: u32, virt: u32, code: &[u8]) {
        let mut bytes = code.to_vec();
        bytes.resize(code.len().next_multiple_of(0x100).max(0x100), 0);
        self.write(reg::CODE_INDEX, (phys << 8) | WRITE_AUTOINC);
        for (i, page) in bytes.chunks(0x100).enumerate() {
            self.write(reg::CODE_VIRT, virt + i as u32);
            for w in page.chunks(4) {
                self.write(reg::CODE, u32::from_le_bytes([w[0], w[1], w[2], w[3]]));
            }
        }
    }

    /// Write `words` to DMEM at `address` through DATA port 0 with write auto-increment.
    pub fn upload_data(&self, address: u32, words: &[u32]) {
        self.write(reg::DATA_INDEX, address | WRITE_AUTOINC);
        for &w in words {
            self.write(reg::DATA, w);
        }
    }

    /// Read `n` DMEM words at `address` through DATA port 0 with read auto-increment.
    pub fn read_data(&self, address: u32, n: usize) -> Vec<u32> {
        self.write(reg::DATA_INDEX, address | READ_AUTOINC);
        (0..n).map(|_| self.read(reg::DATA)).collect()
    }

    /// UC_ENTRY = `entry`, UC_CTRL = START.
    pub fn start(&self, entry: u32) {
        self.write(reg::UC_ENTRY, entry);
        self.write(reg::UC_CTRL, START);
    }

    /// Poll until UC_CTRL says stopped; `false` after `polls` polls without.
    pub fn wait_halted(&self, polls: u32) -> bool {
        for _ in 0..polls {
            if self.read(reg::UC_CTRL) & HALTED != 0 {
                return true;
            }
            self.gpu.poll();
        }
        self.read(reg::UC_CTRL) & HALTED != 0
    }

    /// Upload `code` at page 0 (virtual 0) and start it at 0.
    pub fn run_async(&self, code: &[u8]) {
        self.upload_code(0, 0, code);
        self.start(0);
    }

    /// Upload `code` at page 0 (virtual 0), start at 0, wait for the stop.
    pub fn run(&self, code: &[u8]) {
        self.upload_code(0, 0, code);
        self.start(0);
        assert!(self.wait_halted(100_000), "the program did not exit");
    }
}

/// Concatenate instruction byte groups.
pub fn program(insns: &[&[u8]]) -> Vec<u8> {
    insns.concat()
}
