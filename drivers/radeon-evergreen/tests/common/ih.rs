//! A bench for hostile IH write pointers, shared by `tests/irq.rs` and the `evergreen_ih_ring`
//! fuzz target: the driver over a register interface that can plant the next `IH_RB_WPTR`
//! read, and the check that the driver and the IH are in step afterwards.

use baregpu_radeon_evergreen::gpu::GpuQueue;
use std::cell::Cell;

use baregpu_hal::{Register, RegisterIo, RegisterIoExt};
use baregpu_radeon_evergreen::irq::VECTOR_BYTES;
use baregpu_radeon_evergreen::regs::ih::{IH_RB_RPTR, IH_RB_WPTR};
use baregpu_radeon_evergreen::{Evergreen, IrqError, RingConfig};
use baregpu_regs::evergreen::Chipset;

use super::{FENCE_TIMEOUT, Gpu, Images, ModelClock};

/// 256 bytes: 16 vectors, so a few fences wrap the ring.
pub const IH_BYTES: usize = 256;

/// The emulated GPU, except that the next read of `IH_RB_WPTR` returns a planted value.
pub struct PlantedWptr<'g> {
    pub gpu: &'g Gpu,
    pub next: Cell<Option<u32>>,
}

impl RegisterIo for PlantedWptr<'_> {
    fn read32(&self, offset: usize) -> u32 {
        if offset == IH_RB_WPTR::OFFSET
            && let Some(v) = self.next.take()
        {
            return v;
        }
        self.gpu.read32(offset)
    }
    fn write32(&self, offset: usize, value: u32) {
        self.gpu.write32(offset, value)
    }
}

/// The driver over [`PlantedWptr`].
pub type Hostile<'g> = Evergreen<'g, &'g PlantedWptr<'g>, ModelClock<'g>, Gpu>;

/// The driver with an [`IH_BYTES`] IH ring, the IB test's EOP vector drained.
pub fn driver<'g>(gpu: &'g Gpu, io: &'g PlantedWptr<'g>, chip: Chipset) -> Hostile<'g> {
    let config = RingConfig { ih_ring_bytes: IH_BYTES, ..Default::default() };
    let fw = Images::of(chip);
    let mut drv =
        Evergreen::init(io, ModelClock::new(gpu), gpu, chip, &fw.parse(), config).expect("init");
    drv.enable_interrupts().expect("interrupts (opt-in)");
    let f = drv.fence().unwrap();
    drv.wait(&f, FENCE_TIMEOUT).unwrap();
    for _ in 0..10 {
        gpu.poll();
    }
    drv.handle_interrupts().unwrap();
    drv
}

/// The hostile value `v` itself if the IH could not have written it (no vector boundary
/// inside the ring), else the IH's own offset `real` with the flag bits (overflow, reserved)
/// of `v`: a different vector boundary is a value the driver must believe, so it would
/// desynchronise the ring by design, not by a defect.
pub fn impossible_or_flags(v: u32, real: u32) -> u32 {
    let offset = (v & 0x3_FFFC) as usize;
    if offset >= IH_BYTES || !offset.is_multiple_of(VECTOR_BYTES) {
        v
    } else {
        (real & !0xF) | (v & 0x3)
    }
}

/// One fence, waited for, its EOP vector drained: the driver must count exactly it and leave
/// its read pointer where the IH's write pointer is.
pub fn assert_in_step(gpu: &Gpu, drv: &mut Hostile<'_>, what: &str) -> Result<(), String> {
    let f = drv.fence().unwrap();
    drv.wait(&f, FENCE_TIMEOUT).unwrap();
    let (mut eop, mut vectors) = (0, 0);
    for _ in 0..100 {
        let r = drv.handle_interrupts().map_err(|e| format!("{what}: {e}"))?;
        if r.overflowed {
            return Err(format!("{what}: {r:?}"));
        }
        eop += r.eop;
        vectors += r.vectors;
        if eop > 0 {
            break;
        }
        gpu.poll();
    }
    if (eop, vectors) != (1, 1) {
        return Err(format!("{what}: one fence gave {eop} EOP of {vectors} vectors"));
    }
    let rptr = gpu.read::<IH_RB_RPTR>().rptr_offset() as usize * 4;
    let wptr = gpu.read::<IH_RB_WPTR>().wptr_offset() as usize * 4;
    if rptr != wptr {
        return Err(format!("{what}: IH_RB_RPTR {rptr:#x}, the IH's write pointer {wptr:#x}"));
    }
    Ok(())
}

/// Plant `hostile(the IH's IH_RB_WPTR)` for one `handle_interrupts`, check its outcome (a
/// value that is no vector boundary inside the ring is `BadWritePointer`, a possible one is
/// consumed within one ring's worth of vectors), that `IH_RB_RPTR` is a vector boundary, then
/// that the ring is in step.
pub fn plant(
    gpu: &Gpu,
    io: &PlantedWptr<'_>,
    drv: &mut Hostile<'_>,
    hostile: impl Fn(u32) -> u32,
) -> Result<(), String> {
    let real = gpu.read::<IH_RB_WPTR>().raw();
    let v = hostile(real);
    io.next.set(Some(v));
    let offset = (v & 0x3_FFFC) as usize;
    let possible = offset.is_multiple_of(VECTOR_BYTES) && offset < IH_BYTES;
    let what = format!("IH_RB_WPTR {v:#x} (the IH's {real:#x})");
    match drv.handle_interrupts() {
        Ok(r) if !possible => return Err(format!("{what}: accepted: {r:?}")),
        Ok(r) if r.vectors >= IH_BYTES / VECTOR_BYTES || r.overflowed != (v & 1 == 1) => {
            return Err(format!("{what}: {r:?}"));
        }
        Ok(_) => {}
        Err(e) if possible => return Err(format!("{what}: {e}")),
        Err(e) if e != (IrqError::BadWritePointer { wptr: v, ring_bytes: IH_BYTES }) => {
            return Err(format!("{what}: {e:?}"));
        }
        Err(_) => {}
    }
    let rptr = gpu.read::<IH_RB_RPTR>().rptr_offset() as usize * 4;
    if !rptr.is_multiple_of(VECTOR_BYTES) {
        return Err(format!("{what}: IH_RB_RPTR {rptr:#x} inside a vector"));
    }
    assert_in_step(gpu, drv, &what)
}
