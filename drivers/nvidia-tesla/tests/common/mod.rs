//! The scripted register file and helpers the register-level tests share.
#![allow(dead_code)]

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::ptr::NonNull;

use baregpu_nvidia_tesla::hal::RegisterIo;
use baregpu_nvidia_tesla::hal::dma::{BusAddress, DmaRegion};
use baregpu_nvidia_tesla::hal::time::Clock;
use baregpu_nvidia_tesla::regs::pmc::BOOT_0;
use baregpu_nvidia_tesla::{ChannelId, IbRing, TeslaConfig};

// BAR0 offsets, spelled out here on purpose: the test checks the generated tables put the
// registers where envytools rnndb and Linux nouveau nv50.c have them.
pub const PMC_BOOT_0: usize = 0x0;
pub const PMC_INTR: usize = 0x100;
pub const PMC_ENABLE: usize = 0x200;
pub const PMC_INTR_MASK: usize = 0x640;
pub const PMEM_WINDOW: usize = 0x1700;
pub const PFIFO_UNK044: usize = 0x2044;
pub const PFIFO_INTR: usize = 0x2100;
pub const PFIFO_INTR_EN: usize = 0x2140;
pub const PFIFO_CACHES: usize = 0x2500;
pub const PFIFO_UNK50C: usize = 0x250c;
pub const CHAN_TABLE: usize = 0x2600;
pub const PUSH0: usize = 0x3200;
pub const PUSH1: usize = 0x3204;
pub const DMA_STATE: usize = 0x3228;
pub const DMA_PUT: usize = 0x3240;
pub const DMA_GET: usize = 0x3244;
pub const IB_PUT: usize = 0x3330;
pub const IB_GET: usize = 0x3334;
pub const PULL0: usize = 0x3250;
pub const PLAYLIST_LEN: usize = 0x32ec;
pub const PLAYLIST: usize = 0x32f4;
pub const UNLOAD: usize = 0x32fc;
pub const PMEM: usize = 0x70_0000;

pub const VRAM: u64 = 0x100_0000;

/// What the test does after a write.
pub type WriteHook = Box<dyn Fn(usize, u32)>;

/// A register file: reads give what was last written (or the preset), writes are logged.
/// `hung_unload` makes `CHANNEL_UNLOAD` read all-ones forever; `gone` every register.
#[derive(Default)]
pub struct Fake {
    pub regs: RefCell<HashMap<usize, u32>>,
    pub writes: RefCell<Vec<(usize, u32)>>,
    pub hung_unload: Cell<bool>,
    pub gone: Cell<bool>,
    /// Called after each write (the test plays the GPU's side).
    pub on_write: RefCell<Option<WriteHook>>,
}

impl Fake {
    pub fn gt215() -> Self {
        let f = Fake::default();
        f.regs.borrow_mut().insert(PMC_BOOT_0, BOOT_0::CHIPSET.set(0, 0xa3) | 0xa2);
        f.regs.borrow_mut().insert(PMC_ENABLE, 1 << 12);
        f
    }

    pub fn set(&self, offset: usize, value: u32) {
        self.regs.borrow_mut().insert(offset, value);
    }

    /// Register writes in order, without PMEM and its window (VRAM traffic).
    pub fn register_writes(&self) -> Vec<(usize, u32)> {
        let vram = |o: usize| o == PMEM_WINDOW || (PMEM..PMEM + 0x10_0000).contains(&o);
        self.writes.borrow().iter().copied().filter(|(o, _)| !vram(*o)).collect()
    }

    /// The word at VRAM `address`, assuming the window was last set to cover it.
    pub fn vram(&self, address: u64) -> u32 {
        let window = u64::from(self.regs.borrow()[&PMEM_WINDOW] & 0xff_ffff) << 16;
        let at = PMEM + (address - window) as usize;
        self.regs.borrow().get(&at).copied().unwrap_or(0)
    }
}

impl RegisterIo for &Fake {
    fn read32(&self, offset: usize) -> u32 {
        if self.gone.get() || (offset == UNLOAD && self.hung_unload.get()) {
            return u32::MAX;
        }
        self.regs.borrow().get(&offset).copied().unwrap_or(0)
    }

    fn write32(&self, offset: usize, value: u32) {
        self.writes.borrow_mut().push((offset, value));
        self.regs.borrow_mut().insert(offset, value);
        if let Some(hook) = &*self.on_write.borrow() {
            hook(offset, value);
        }
    }
}

/// A clock that moves 1 µs per reading.
#[derive(Default)]
pub struct StepClock(Cell<u64>);

impl Clock for StepClock {
    fn now_ns(&self) -> u64 {
        self.0.set(self.0.get() + 1000);
        self.0.get()
    }
}

pub fn config() -> TeslaConfig {
    TeslaConfig::new(VRAM, 4 << 20)
}

pub fn id(n: u8) -> ChannelId {
    ChannelId::new(n).unwrap()
}

pub const IB: IbRing = IbRing { address: 0x8000_0000, entries: 512 };

/// A channel's USER area in BAR0 (G80: 0xc00000 + 0x2000 per channel) and its registers.
pub fn user(channel: u8) -> usize {
    0xc0_0000 + 0x2000 * usize::from(channel)
}
pub const USER_REF: usize = 0x48;
pub const USER_IB_GET: usize = 0x88;
pub const USER_IB_PUT: usize = 0x8c;

/// `bytes` zeroed bytes of host memory seen by the device at `bus`, for the test's lifetime.
pub fn region(bytes: usize, bus: u64) -> &'static DmaRegion {
    let dwords = bytes.div_ceil(4);
    let mem: &'static mut [u32] = Box::leak(vec![0u32; dwords].into_boxed_slice());
    let cpu = NonNull::from(mem).cast::<u8>();
    // SAFETY: the leaked buffer is valid for reads and writes forever, 4-byte aligned, never
    // accessed except through this region, and `dwords * 4` bytes long.
    Box::leak(Box::new(unsafe { DmaRegion::from_raw_parts(cpu, BusAddress(bus), dwords * 4) }))
}

/// The words of `r`.
pub fn words(r: &DmaRegion, count: usize) -> Vec<u32> {
    let mut w = vec![0u32; count];
    r.read_slice(0, &mut w).unwrap();
    w
}
