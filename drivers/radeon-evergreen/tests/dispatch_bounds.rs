//! Hostile dispatch parameters (#24 §1): every global-memory size from 0 to 64 bytes and
//! around RAT 0's upper bound, on both chips, with a kernel whose writes run past the end of
//! the buffer. A size the hardware cannot cover is a typed `DispatchError` before anything
//! is written; an accepted one runs, and no byte outside the buffer changes.

mod common;

use baregpu_evergreen_asm::{Chip, Node, assemble};
use baregpu_hal::dma::{BusAddress, DmaRegion};
use baregpu_radeon_evergreen::compute::{self, Dispatch, DispatchError, Kernel, MAX_RAT_DWORDS};
use baregpu_regs::evergreen::Chipset;
use common::*;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

/// `rat0[first + gid] = gid`: one store per thread, no bounds check, so a dispatch of more
/// threads than elements writes past the end unless RAT 0 stops it.
const STORE_GID: &str = "\
alu
    mullo_uint r2.x, r1.x, cb0[1].z     ; group id * local size x
    add_int r2.x, r2.x, r0.x            ; gid
    add_int r6.x, r2.x, cb0[2].y        ; RAT index: first + gid
mem_rat_cacheless store rat0[r6.x], r2.x
end
";

/// Threads per dispatch: 4 groups of 64.
const THREADS: u32 = 256;
/// Bytes before the global buffer that must stay untouched (the buffer's base stays
/// 256-byte aligned).
const FRONT: usize = 256;
/// Bytes after the largest buffer that must stay untouched: more than the kernel's reach.
const BACK: usize = 4 * THREADS as usize * 2;
/// Largest size tried: just past what RAT 0 covers.
const MAX_TRIED: usize = MAX_RAT_DWORDS * 4 + 64;

/// The pattern every byte outside the buffer holds, by dword offset in the arena.
fn guard(dword: usize) -> u32 {
    0xA5C3_0000 ^ dword as u32
}

/// One chip with a driver, the kernel, cb0 memory and the arena the buffers are cut from.
struct Bench<'g> {
    gpu: &'g Gpu,
    drv: Driver<'g>,
    kernel: Kernel,
    _code: Buffer<'g>,
    cb: Buffer<'g>,
    arena: Buffer<'g>,
}

impl<'g> Bench<'g> {
    fn new(gpu: &'g Gpu, chip: Chipset) -> Self {
        let drv = init(gpu, chip, &Images::of(chip), Default::default());
        let asm = match chip {
            Chipset::CYPRESS => Chip::Evergreen,
            Chipset::CAYMAN => Chip::Cayman,
        };
        let mut nodes = [Node::EMPTY; 16];
        let mut words = [0u32; 64];
        let info = assemble(STORE_GID, asm, &mut nodes, &mut words).expect("assembles");
        let code = alloc(gpu, 256);
        let kernel = compute::load_kernel(&code, &words[..info.words], info.num_gprs, 0).unwrap();
        let cb = alloc(gpu, 256);
        let arena = alloc(gpu, FRONT + MAX_TRIED + BACK);
        Bench { gpu, drv, kernel, _code: code, cb, arena }
    }

    /// The `bytes` bytes of the arena after its front guard, as a region of exactly that size.
    fn global(&self, bytes: usize) -> DmaRegion {
        self.view(BusAddress(self.arena.bus_address().0 + FRONT as u64), bytes)
    }

    /// The `bytes` bytes of the arena after its front guard, claiming bus address `bus` (a
    /// region the driver must refuse before the device could use the address).
    fn view(&self, bus: BusAddress, bytes: usize) -> DmaRegion {
        assert!(bytes <= MAX_TRIED);
        // SAFETY: FRONT + bytes lies inside the arena (asserted above), which outlives the
        // view (views are dropped before the bench) and is never given back to the allocator
        // through it (a DmaRegion has no destructor). Both the view and the arena access the
        // bytes only through DmaRegion's atomics.
        unsafe { DmaRegion::from_raw_parts(self.arena.cpu_ptr().add(FRONT), bus, bytes) }
    }

    /// Dispatch [`STORE_GID`] over global memory of `bytes` with its first store at element
    /// `first`; returns the dispatch's result after checking that nothing outside the buffer
    /// changed (and, on an error, that nothing was submitted or written at all).
    fn run(&mut self, bytes: usize, first: u32) -> Result<(), TestCaseError> {
        let words = self.arena.size() / 4;
        for i in 0..words {
            self.arena.write_u32(4 * i, guard(i)).unwrap();
        }
        self.cb.zero();
        let global = self.global(bytes);
        let args = [first];
        let d = Dispatch {
            kernel: self.kernel,
            groups: [THREADS / 64, 1, 1],
            local: [64, 1, 1],
            args: &args,
            constants: &self.cb,
            global: &global,
            lds_dwords: 0,
            indirect: None,
        };
        let submissions = self.drv.stats().submissions;
        let result = self.drv.dispatch(&d);
        let expected = if bytes > MAX_RAT_DWORDS * 4 {
            Err(DispatchError::GlobalTooLarge { bytes })
        } else if bytes == 0 || !bytes.is_multiple_of(4) {
            Err(DispatchError::BadGlobalSize { bytes })
        } else {
            Ok(())
        };
        match result {
            Ok(f) => {
                prop_assert_eq!(Ok(()), expected, "{} bytes accepted", bytes);
                self.drv.wait(&f, FENCE_TIMEOUT).map_err(|e| {
                    TestCaseError::fail(format!("{bytes} bytes: {e} ({})", self.gpu.error_code()))
                })?;
                assert_clean(self.gpu);
                // The stores that land inside the buffer did land.
                let elements = (bytes / 4) as u32;
                for gid in 0..THREADS {
                    let e = first + gid;
                    if e < elements {
                        prop_assert_eq!(global.read_u32(4 * e as usize).unwrap(), gid);
                    }
                }
            }
            Err(e) => {
                prop_assert_eq!(Err(e), expected, "{} bytes", bytes);
                prop_assert_eq!(self.drv.stats().submissions, submissions, "nothing submitted");
                let mut cb = [0u32; 64];
                self.cb.read_slice(0, &mut cb).unwrap();
                prop_assert_eq!(cb, [0u32; 64], "cb0 untouched");
            }
        }
        // Nothing outside the buffer changed.
        let end = FRONT + bytes.next_multiple_of(4);
        for i in (0..FRONT / 4).chain(end / 4..words) {
            let v = self.arena.read_u32(4 * i).unwrap();
            prop_assert_eq!(v, guard(i), "{} bytes: arena byte {} changed", bytes, 4 * i);
        }
        // The partial dword at the end of a refused odd-sized buffer is outside it too.
        if !bytes.is_multiple_of(4) {
            let i = FRONT / 4 + bytes / 4;
            prop_assert_eq!(self.arena.read_u32(4 * i).unwrap(), guard(i));
        }
        Ok(())
    }
}

/// Sizes 0..=64 bytes and 64 bytes either side of RAT 0's upper bound.
fn hostile_size() -> impl Strategy<Value = usize> {
    let top = MAX_RAT_DWORDS * 4;
    prop_oneof![0usize..=64, (top - 64)..=(top + 64)]
}

/// The first element the kernel stores to: at the start of the buffer or straddling its end.
fn first_element(bytes: usize) -> impl Strategy<Value = u32> {
    let elements = (bytes / 4) as u32;
    prop_oneof![Just(0), elements.saturating_sub(THREADS)..=elements + THREADS]
}

#[test]
fn every_small_global_size_is_refused_or_stays_inside_its_buffer_on_both_chips() {
    for (chip, asic) in CHIPS {
        let gpu = gpu(asic);
        let mut bench = Bench::new(&gpu, chip);
        for bytes in 0..=64 {
            bench.run(bytes, 0).unwrap_or_else(|e| panic!("{chip:?}, {bytes} bytes: {e}"));
        }
    }
}

#[test]
fn hostile_global_sizes_never_reach_memory_outside_the_buffer_on_both_chips() {
    for (chip, asic) in CHIPS {
        let gpu = gpu(asic);
        let bench = std::cell::RefCell::new(Bench::new(&gpu, chip));
        // The seed comes from PROPTEST_RNG_SEED (fixed under `cargo xtask test`); a failure
        // prints the minimal (size, first element).
        let mut runner = TestRunner::new(Config { cases: 48, ..Config::default() });
        let cases = hostile_size().prop_flat_map(|b| (Just(b), first_element(b)));
        runner
            .run(&cases, |(bytes, first)| bench.borrow_mut().run(bytes, first))
            .unwrap_or_else(|e| panic!("{chip:?}: {e}"));
    }
}

#[test]
fn memory_reaching_past_40_bits_is_refused_before_anything_is_written() {
    for (chip, asic) in CHIPS {
        let gpu = gpu(asic);
        let mut bench = Bench::new(&gpu, chip);
        let high = BusAddress((1 << 40) - 256);
        let global = bench.view(high, 512);
        let cb = bench.view(high, 512);
        let submissions = bench.drv.stats().submissions;
        let d = Dispatch {
            kernel: bench.kernel,
            groups: [1, 1, 1],
            local: [64, 1, 1],
            args: &[0],
            constants: &bench.cb,
            global: &global,
            lds_dwords: 0,
            indirect: None,
        };
        let beyond = DispatchError::BeyondAddressSpace { address: high, bytes: 512 };
        assert_eq!(bench.drv.dispatch(&d).err(), Some(beyond), "{chip:?}: global memory");
        let d = Dispatch { constants: &cb, global: &bench.arena, ..d };
        assert_eq!(bench.drv.dispatch(&d).err(), Some(beyond), "{chip:?}: constants");
        assert_eq!(bench.drv.stats().submissions, submissions, "{chip:?}: nothing submitted");
        let mut words = [0u32; 128];
        cb.read_slice(0, &mut words).unwrap();
        assert_eq!(words, [0; 128], "{chip:?}: cb0 not written");
    }
}
