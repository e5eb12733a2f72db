//! Test doubles: a recording `RegisterIo` and a fake of the R5xx MicroEngine RAM ports written
//! from amd-r5xx-acceleration §5.12 (write path), §5.13 (read path) and §11.1 (field widths).
#![allow(dead_code)]

use std::cell::RefCell;

use baregpu_firmware::amd::MeRamEntry;
use baregpu_hal::{Register, RegisterIo};
use baregpu_regs::r5xx::cp::{
    CP_CSQ_CNTL, CP_ME_CNTL, CP_ME_RAM_ADDR, CP_ME_RAM_DATAH, CP_ME_RAM_DATAL, CP_ME_RAM_RADDR,
};

pub const ADDR: usize = <CP_ME_RAM_ADDR as Register>::OFFSET;
pub const RADDR: usize = <CP_ME_RAM_RADDR as Register>::OFFSET;
pub const DATAH: usize = <CP_ME_RAM_DATAH as Register>::OFFSET;
pub const DATAL: usize = <CP_ME_RAM_DATAL as Register>::OFFSET;
pub const ME_CNTL: usize = <CP_ME_CNTL as Register>::OFFSET;
pub const CSQ_CNTL: usize = <CP_CSQ_CNTL as Register>::OFFSET;

/// One register access, in program order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read(usize),
    Write(usize, u32),
}

/// Records every access; reads return `read_value`.
pub struct Recorder {
    pub log: RefCell<Vec<Access>>,
    pub read_value: u32,
}

impl Recorder {
    pub fn new() -> Self {
        Recorder { log: RefCell::new(Vec::new()), read_value: 0 }
    }
    pub fn accesses(&self) -> usize {
        self.log.borrow().len()
    }
}

impl RegisterIo for Recorder {
    fn read32(&self, offset: usize) -> u32 {
        self.log.borrow_mut().push(Access::Read(offset));
        self.read_value
    }
    fn write32(&self, offset: usize, value: u32) {
        self.log.borrow_mut().push(Access::Write(offset, value));
    }
}

/// Faults the fake can inject.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    None,
    /// Reading entry `entry` back returns it with bit `bit` (0..40) flipped.
    FlipOnRead {
        entry: usize,
        bit: u32,
    },
    /// Every read returns all-ones and writes are lost (the device is gone from the start).
    Gone,
    /// The device falls off the bus when `CP_ME_RAM_RADDR` is written: from then on every read
    /// returns all-ones.
    GoneAtReadback,
    /// `DATAH` writes are ignored (the high byte never reaches the holding register).
    StuckDatah,
}

pub struct MeRamState {
    /// 40-bit entries, stored as (high 8 bits, low 32 bits).
    pub ram: [MeRamEntry; 256],
    /// The RAM address register, shared by `CP_ME_RAM_ADDR` and its mirror `CP_ME_RAM_RADDR`.
    pub addr: u8,
    /// The 40-bit holding register.
    pub holding: MeRamEntry,
    pub me_cntl: u32,
    pub csq_cntl: u32,
    pub fault: Fault,
    pub gone: bool,
    pub log: Vec<Access>,
}

/// The CP_ME_RAM_* ports of an R5xx, per §5.12/§5.13:
/// - write `CP_ME_RAM_ADDR`: set the address (8 bits);
/// - write `DATAH`: low 8 bits into the top of the holding register;
/// - write `DATAL`: low 32 bits into the holding register, commit it at the address, increment;
/// - write `CP_ME_RAM_RADDR`: set the address, load that entry into the holding register,
///   increment;
/// - read `DATAH` / `DATAL`: the halves of the holding register; the end of the `DATAL` read
///   loads the entry at the address and increments;
/// - read `CP_ME_RAM_ADDR`: the address.
///
/// `CP_ME_CNTL` and `CP_CSQ_CNTL` read back configurable values. Any other offset panics.
pub struct FakeMeRam {
    pub state: RefCell<MeRamState>,
}

impl FakeMeRam {
    /// A CP just out of reset: CP_ME_CNTL = reset value (free-running, not busy), CSQ disabled,
    /// RAM filled with a recognisable non-zero pattern (so a skipped entry is noticed).
    pub fn new() -> Self {
        let mut ram = [MeRamEntry { high: 0, low: 0 }; 256];
        for (i, e) in ram.iter_mut().enumerate() {
            *e = MeRamEntry { high: 0x5a, low: 0xdead_0000 | i as u32 };
        }
        FakeMeRam {
            state: RefCell::new(MeRamState {
                ram,
                addr: 0,
                holding: MeRamEntry { high: 0, low: 0 },
                me_cntl: CP_ME_CNTL::RESET.raw(),
                csq_cntl: CP_CSQ_CNTL::RESET.raw(),
                fault: Fault::None,
                gone: false,
                log: Vec::new(),
            }),
        }
    }

    pub fn with_fault(self, fault: Fault) -> Self {
        {
            let mut s = self.state.borrow_mut();
            s.fault = fault;
            s.gone = fault == Fault::Gone;
        }
        self
    }

    pub fn ram(&self) -> [MeRamEntry; 256] {
        self.state.borrow().ram
    }

    pub fn log(&self) -> Vec<Access> {
        self.state.borrow().log.clone()
    }

    pub fn writes(&self) -> usize {
        self.log().iter().filter(|a| matches!(a, Access::Write(..))).count()
    }

    pub fn reads(&self) -> usize {
        self.log().iter().filter(|a| matches!(a, Access::Read(..))).count()
    }
}

impl MeRamState {
    /// Load the entry at the address into the holding register and auto-increment (§5.13).
    fn fetch(&mut self) {
        let mut e = self.ram[self.addr as usize];
        if let Fault::FlipOnRead { entry, bit } = self.fault
            && entry == self.addr as usize
        {
            let v = e.to_u64() ^ (1u64 << bit);
            e = MeRamEntry { high: (v >> 32) as u8, low: v as u32 };
        }
        self.holding = e;
        self.addr = self.addr.wrapping_add(1);
    }
}

impl RegisterIo for FakeMeRam {
    fn read32(&self, offset: usize) -> u32 {
        let mut s = self.state.borrow_mut();
        s.log.push(Access::Read(offset));
        if s.gone {
            return u32::MAX;
        }
        match offset {
            DATAH => s.holding.high as u32,
            DATAL => {
                let low = s.holding.low;
                s.fetch();
                low
            }
            ADDR => s.addr as u32,
            ME_CNTL => s.me_cntl,
            CSQ_CNTL => s.csq_cntl,
            _ => panic!("unexpected read of {offset:#x}"),
        }
    }

    fn write32(&self, offset: usize, value: u32) {
        let mut s = self.state.borrow_mut();
        s.log.push(Access::Write(offset, value));
        if s.gone {
            return;
        }
        match offset {
            ADDR => s.addr = value as u8,
            DATAH => {
                if s.fault != Fault::StuckDatah {
                    s.holding.high = value as u8;
                }
            }
            DATAL => {
                s.holding.low = value;
                let (addr, holding) = (s.addr as usize, s.holding);
                s.ram[addr] = holding;
                s.addr = s.addr.wrapping_add(1);
            }
            RADDR => {
                if s.fault == Fault::GoneAtReadback {
                    s.gone = true;
                    return;
                }
                s.addr = value as u8;
                s.fetch();
            }
            _ => panic!("unexpected write of {value:#x} to {offset:#x}"),
        }
    }
}

/// A valid R520-sized image: entry i = (i as u8, i * 0x01010101 ^ 0x8000_0001).
pub fn synthetic_image() -> Vec<u8> {
    let mut bytes = Vec::with_capacity(2048);
    for i in 0..256u32 {
        bytes.extend_from_slice(&(i & 0xff).to_be_bytes());
        bytes.extend_from_slice(&(i.wrapping_mul(0x0101_0101) ^ 0x8000_0001).to_be_bytes());
    }
    bytes
}

/// Read a real firmware file installed by the project's setup script.
pub fn real_firmware(name: &str) -> Vec<u8> {
    let path = format!("/lib/firmware/radeon/{name}");
    std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {path} ({e}): the Debian package firmware-amd-graphics provides it; \
             run `bash scripts/setup.sh` from the repository root"
        )
    })
}
