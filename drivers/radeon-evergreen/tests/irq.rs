//! Hostile IH write pointers (#24 §2): `IH_RB_WPTR` values the IH could not have written
//! (every value mod 16, beyond the ring, with the overflow bit) on both chips. Each is refused
//! or handled, and afterwards the driver and the IH stay in step: the read pointer is a vector
//! boundary, every later fence's EOP vector is counted exactly once and nothing else is.

mod common;

use std::cell::Cell;

use baregpu_hal::{Register, RegisterIo, RegisterIoExt};
use baregpu_radeon_evergreen::irq::VECTOR_BYTES;
use baregpu_radeon_evergreen::regs::ih::{IH_RB_RPTR, IH_RB_WPTR};
use baregpu_radeon_evergreen::{Evergreen, IrqError, RingConfig};
use baregpu_regs::evergreen::Chipset;
use common::*;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

/// The emulated GPU, except that the next read of `IH_RB_WPTR` returns a planted value.
struct PlantedWptr<'g> {
    gpu: &'g Gpu,
    next: Cell<Option<u32>>,
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

type Hostile<'g> = Evergreen<'g, &'g PlantedWptr<'g>, ModelClock<'g>, Gpu>;

/// 256 bytes: 16 vectors, so a few fences wrap the ring.
const IH_BYTES: usize = 256;

/// One fence, waited for, its EOP vector drained: the driver must count exactly it and leave
/// its read pointer where the IH's write pointer is.
fn assert_in_step(gpu: &Gpu, drv: &mut Hostile<'_>, what: &str) -> Result<(), TestCaseError> {
    let f = drv.fence().unwrap();
    drv.wait(&f, FENCE_TIMEOUT).unwrap();
    let (mut eop, mut vectors) = (0, 0);
    for _ in 0..100 {
        let r = drv.handle_interrupts().map_err(|e| TestCaseError::fail(format!("{what}: {e}")))?;
        prop_assert!(!r.overflowed, "{}: {:?}", what, r);
        eop += r.eop;
        vectors += r.vectors;
        if eop > 0 {
            break;
        }
        gpu.poll();
    }
    prop_assert_eq!((eop, vectors), (1, 1), "{}: one fence, one EOP vector", what);
    let rptr = gpu.read::<IH_RB_RPTR>().rptr_offset() as usize * 4;
    let wptr = gpu.read::<IH_RB_WPTR>().wptr_offset() as usize * 4;
    prop_assert_eq!(rptr % VECTOR_BYTES, 0, "{}: IH_RB_RPTR {:#x} inside a vector", what, rptr);
    prop_assert_eq!(rptr, wptr, "{}: driver and IH out of step", what);
    Ok(())
}

/// Plant `hostile` (built from the IH's current write offset) for one `handle_interrupts`,
/// check its outcome, then check the ring is in step.
fn plant(
    gpu: &Gpu,
    io: &PlantedWptr<'_>,
    drv: &mut Hostile<'_>,
    hostile: impl Fn(u32) -> u32,
) -> Result<(), TestCaseError> {
    let real = gpu.read::<IH_RB_WPTR>().raw();
    let v = hostile(real);
    io.next.set(Some(v));
    let offset = (v as usize & 0x3_FFFC) % (1 << 18);
    let possible = offset.is_multiple_of(VECTOR_BYTES) && offset < IH_BYTES;
    let what = format!("IH_RB_WPTR {v:#x} (the IH's {real:#x})");
    match drv.handle_interrupts() {
        Ok(r) => {
            prop_assert!(possible, "{}: accepted: {:?}", what, r);
            prop_assert!(r.vectors < IH_BYTES / VECTOR_BYTES, "{}: {:?}", what, r);
            prop_assert_eq!(r.overflowed, v & 1 == 1, "{}", what);
        }
        Err(e) => {
            prop_assert!(!possible, "{}: {}", what, e);
            prop_assert_eq!(e, IrqError::BadWritePointer { wptr: v, ring_bytes: IH_BYTES });
        }
    }
    // IH_RB_RPTR is a vector boundary whatever was planted.
    let rptr = gpu.read::<IH_RB_RPTR>().rptr_offset() as usize * 4;
    prop_assert_eq!(rptr % VECTOR_BYTES, 0, "{}: IH_RB_RPTR {:#x}", what, rptr);
    assert_in_step(gpu, drv, &what)
}

fn driver<'g>(gpu: &'g Gpu, io: &'g PlantedWptr<'g>, chip: Chipset) -> Hostile<'g> {
    let config = RingConfig { ih_ring_bytes: IH_BYTES, ..Default::default() };
    let fw = Images::of(chip);
    let mut drv =
        Evergreen::init(io, ModelClock::new(gpu), gpu, chip, &fw.parse(), config).expect("init");
    // The IB test's EOP vector.
    let f = drv.fence().unwrap();
    drv.wait(&f, FENCE_TIMEOUT).unwrap();
    for _ in 0..10 {
        gpu.poll();
    }
    drv.handle_interrupts().unwrap();
    drv
}

#[test]
fn every_write_pointer_mod_16_beyond_the_ring_or_overflowed_leaves_the_ring_in_step() {
    for (chip, asic) in CHIPS {
        let gpu = gpu(asic);
        let io = PlantedWptr { gpu: &gpu, next: Cell::new(None) };
        let mut drv = driver(&gpu, &io, chip);
        assert_in_step(&gpu, &mut drv, "before").unwrap();
        // Every value mod 16 around the IH's own offset: 1 is the overflow bit, 2 a reserved
        // bit; 4, 8 and 12 are byte offsets inside a vector.
        for k in 0..16u32 {
            plant(&gpu, &io, &mut drv, |real| (real & !0xF) + k)
                .unwrap_or_else(|e| panic!("{asic:?}, +{k}: {e}"));
        }
        // Beyond the ring (IH_IB_SIZE is 256 bytes here; WPTR_OFFSET has 16 bits), with and
        // without the overflow bit, and the highest offset the field holds.
        for v in [IH_BYTES as u32, IH_BYTES as u32 + 16, 0x3_FFF0, 0x3_FFFC, 0x3_FFFD, 0x101] {
            plant(&gpu, &io, &mut drv, |_| v).unwrap_or_else(|e| panic!("{asic:?}, {v:#x}: {e}"));
        }
    }
}

#[test]
fn arbitrary_write_pointers_never_desynchronise_the_ring() {
    for (chip, asic) in CHIPS {
        let gpu = gpu(asic);
        let io = PlantedWptr { gpu: &gpu, next: Cell::new(None) };
        let drv = std::cell::RefCell::new(driver(&gpu, &io, chip));
        // Any value except a different vector boundary inside the ring, which the IH could
        // have written and which the driver must therefore believe.
        let hostile = prop_oneof![
            (0u32..16).prop_map(|k| (k, None)),
            any::<u32>().prop_map(|v| (0, Some(v))),
        ];
        TestRunner::new(Config { cases: 64, ..Config::default() })
            .run(&hostile, |(k, v)| {
                let planted = move |real: u32| match v {
                    Some(v) if (v & 0x3_FFFC) as usize >= IH_BYTES || v & 0xC != 0 => v,
                    _ => (real & !0xF) + k,
                };
                plant(&gpu, &io, &mut drv.borrow_mut(), planted)
            })
            .unwrap_or_else(|e| panic!("{asic:?}: {e}"));
    }
}
