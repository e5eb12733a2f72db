//! The emulated GT215 in process, and the driver brought up on it: what the end-to-end tests
//! and the benchmarks share.
#![allow(dead_code)]

use baregpu_nvidia_tesla::gpu::GpuQueue;
use std::cell::RefCell;
use std::time::Duration;

use baregpu_falcon_asm::programs::{self, methods};
use baregpu_nvidia_tesla::firmware::falcon::FalconImage;
use baregpu_nvidia_tesla::hal::dma::{DmaAllocator, DmaLayout, DmaRegion};
use baregpu_nvidia_tesla::hal::time::poll_until;
use baregpu_nvidia_tesla::regs::falcon::Pcopy0;
use baregpu_nvidia_tesla::{ChannelId, Engine, Queue, QueueConfig, Tesla, TeslaConfig};
use gpu_device_model::{InProcess, InProcessOptions, ModelClock, Pacing};
use gt215_model::{Faults, Gt215};

pub type Gpu = Tesla<&'static InProcess<Gt215>, ModelClock<'static, Gt215>>;

pub fn model(pacing: Pacing, faults: Faults) -> &'static InProcess<Gt215> {
    let options = InProcessOptions { pacing: Some(pacing), ..InProcessOptions::default() };
    Box::leak(Box::new(InProcess::with_options(Gt215::with_faults(faults), options).unwrap()))
}

pub fn bring_up(m: &'static InProcess<Gt215>) -> Gpu {
    // 1 MiB of the model's VRAM at 1 MiB for channel structures.
    Tesla::init(m, ModelClock::new(m), TeslaConfig::new(1 << 20, 1 << 20)).unwrap()
}

pub fn alloc(m: &'static InProcess<Gt215>, bytes: usize, align: usize) -> &'static DmaRegion {
    Box::leak(Box::new(m.allocate(DmaLayout::new(bytes, align).unwrap()).unwrap()))
}

/// A queue on `channel` with a 4 KiB main pushbuffer (so 300 fences wrap it), a 512-entry IB
/// ring and its fence memory, all in the model's guest memory.
pub fn queue(
    m: &'static InProcess<Gt215>,
    gpu: &'static RefCell<Gpu>,
    channel: u8,
) -> Queue<'static, &'static InProcess<Gt215>, ModelClock<'static, Gt215>> {
    let (main, ib, fences) = (alloc(m, 4096, 4096), alloc(m, 4096, 4096), alloc(m, 32, 16));
    let id = ChannelId::new(channel).unwrap();
    Queue::new(gpu, id, main, ib, fences, QueueConfig::default()).unwrap()
}

pub fn falcon_image(image: &programs::Image, code: &mut [u8; 0x400]) -> usize {
    code[..image.code().len()].copy_from_slice(image.code());
    // Code goes up in whole 0x100-byte pages (§2.10.7): the last one padded with zeros.
    image.code().len().div_ceil(0x100) * 0x100
}

/// PCOPY running the copy-engine firmware (this project's falcon program), a queue on
/// channel 1 with the copy object bound, and source, destination and semaphore buffers.
pub struct CopyRig {
    pub m: &'static InProcess<Gt215>,
    pub q: Queue<'static, &'static InProcess<Gt215>, ModelClock<'static, Gt215>>,
    pub src: &'static DmaRegion,
    pub dst: &'static DmaRegion,
    pub sem: &'static DmaRegion,
    sequence: u32,
}

impl CopyRig {
    /// Buffers of `bytes` (a multiple of 256).
    pub fn new(pacing: Pacing, bytes: usize) -> Self {
        let m = model(pacing, Faults::default());
        let gpu = bring_up(m);
        let mut code = [0u8; 0x400];
        let image = programs::copy_engine();
        let len = falcon_image(&image, &mut code);
        let fw = FalconImage::new(&code[..len], 0, image.data(), image.entry).unwrap();
        let copy = gpu.falcon::<Pcopy0>().unwrap();
        copy.enable().unwrap();
        copy.boot(&fw).unwrap();

        let gpu: &'static RefCell<Gpu> = Box::leak(Box::new(RefCell::new(gpu)));
        let (src, dst, sem) = (alloc(m, bytes, 256), alloc(m, bytes, 256), alloc(m, 16, 16));
        let q = queue(m, gpu, 1);
        // The copy object: class 0x85b5 (nouveau's GT212_DMA), PCOPY's engine in RAMHT.
        gpu.borrow_mut().add_engine_object(q.channel(), 0xc0b5, Engine::Copy, 0x85b5).unwrap();
        CopyRig { m, q, src, dst, sem, sequence: 0 }
    }

    /// Copies `bytes` from `src` to `dst` through PFIFO methods to the firmware, then waits
    /// (bounded) for the fence and the semaphore the firmware releases after the copy.
    pub fn copy(&mut self, bytes: u32) {
        self.sequence += 1;
        let seq = self.sequence;
        let (s, d, a) =
            (self.src.bus_address().0, self.dst.bus_address().0, self.sem.bus_address().0);
        let args = [
            (s >> 32) as u32,
            s as u32,
            (d >> 32) as u32,
            d as u32,
            bytes,
            (a >> 32) as u32,
            a as u32,
            seq,
            methods::LAUNCH_RELEASE_SEMAPHORE,
        ];
        let fence = self
            .q
            .submit(2 + 10 + 9, |sub| {
                sub.writer().bind_object(1, 0xc0b5)?;
                sub.writer().methods(1, methods::SRC_ADDRESS_HIGH as u16, &args)?;
                sub.fence()
            })
            .unwrap();
        self.q.wait(&fence, Duration::from_secs(10)).unwrap();
        let clock = ModelClock::new(self.m);
        let sem = self.sem;
        poll_until(&clock, Duration::from_secs(10), || {
            (sem.read_u32(0).ok() == Some(seq)).then_some(())
        })
        .unwrap();
    }
}
