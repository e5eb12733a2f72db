//! A compute-dispatch bench for hostile parameters, shared by `tests/dispatch_bounds.rs` and
//! the `evergreen_dispatch` fuzz target: one chip with a driver, a kernel that stores past the
//! end of its buffer, and an arena of guard words around the global memory, so any byte a
//! dispatch writes outside its buffer is seen.

use baregpu_evergreen_asm::{Chip, Node, assemble};
use baregpu_hal::dma::{BusAddress, DmaRegion};
use baregpu_radeon_evergreen::compute::{self, Dispatch, DispatchError, Kernel, MAX_RAT_DWORDS};
use baregpu_radeon_evergreen::gpu::GpuQueue;
use baregpu_regs::evergreen::Chipset;

use super::{Buffer, Driver, FENCE_TIMEOUT, Gpu, Images, alloc, assert_clean, init};

/// `rat0[first + gid] = gid` (`first` = argument 0): one store per thread, no bounds check, so
/// a dispatch of more threads than elements writes past the end unless RAT 0 stops it.
pub const STORE_GID: &str = "\
alu
    mullo_uint r2.x, r1.x, cb0[1].z     ; group id * local size x
    add_int r2.x, r2.x, r0.x            ; gid
    add_int r6.x, r2.x, cb0[2].y        ; RAT index: first + gid
mem_rat_cacheless store rat0[r6.x], r2.x
end
";

/// Bytes before the global buffer that must stay untouched (the buffer's base stays
/// 256-byte aligned).
const FRONT: usize = 256;
/// Bytes after the largest buffer that must stay untouched.
const BACK: usize = 4096;
/// Largest global memory the arena holds: just past what RAT 0 covers.
pub const MAX_TRIED: usize = MAX_RAT_DWORDS * 4 + 64;
/// Dispatches of more threads than this are submitted but not waited for (the fuzz target
/// asks for up to 2^32 groups).
const MAX_WAITED_THREADS: u128 = 1 << 14;

/// The pattern every word outside the buffer holds, by dword offset in the arena.
fn guard(dword: usize) -> u32 {
    0xA5C3_0000 ^ dword as u32
}

/// What one dispatch asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Global memory bytes (at most [`MAX_TRIED`]).
    pub bytes: usize,
    /// Element of the first store.
    pub first: u32,
    /// Group counts.
    pub groups: [u32; 3],
    /// Threads per group.
    pub local: [u32; 3],
    /// LDS dwords per group.
    pub lds_dwords: u32,
    /// `DISPATCH_INDIRECT`: below 256, a byte offset into a buffer of small group counts;
    /// otherwise the bus address itself.
    pub indirect: Option<u64>,
}

impl Shape {
    /// 4 groups of 64 threads storing from element `first` of `bytes` of global memory.
    pub const fn stores(bytes: usize, first: u32) -> Shape {
        Shape { bytes, first, groups: [4, 1, 1], local: [64, 1, 1], lds_dwords: 0, indirect: None }
    }

    /// The error the global-memory size alone calls for.
    pub fn size_error(&self) -> Option<DispatchError> {
        let bytes = self.bytes;
        if bytes > MAX_RAT_DWORDS * 4 {
            Some(DispatchError::GlobalTooLarge { bytes })
        } else if bytes == 0 || !bytes.is_multiple_of(4) {
            Some(DispatchError::BadGlobalSize { bytes })
        } else {
            None
        }
    }
}

/// One chip with a driver, the kernel, cb0 memory and the arena the buffers are cut from.
pub struct Bench<'g> {
    pub gpu: &'g Gpu,
    pub drv: Driver<'g>,
    pub kernel: Kernel,
    _code: Buffer<'g>,
    pub cb: Buffer<'g>,
    pub arena: Buffer<'g>,
    dims: Buffer<'g>,
}

impl<'g> Bench<'g> {
    pub fn new(gpu: &'g Gpu, chip: Chipset) -> Self {
        let drv = init(gpu, chip, &Images::of(chip), Default::default());
        let asm = match chip {
            Chipset::CYPRESS => Chip::Evergreen,
            Chipset::CAYMAN => Chip::Cayman,
            other => panic!("no assembler target for {other:?}"),
        };
        let mut nodes = [Node::EMPTY; 16];
        let mut words = [0u32; 64];
        let info = assemble(STORE_GID, asm, &mut nodes, &mut words).expect("assembles");
        let code = alloc(gpu, 256);
        let kernel = compute::load_kernel(&code, &words[..info.words], info.num_gprs, 0).unwrap();
        let cb = alloc(gpu, 256);
        let arena = alloc(gpu, FRONT + MAX_TRIED + BACK);
        // Indirect group counts: 1, 2 or 3 in every dword, so any aligned offset is small.
        let dims = alloc(gpu, 256 + 12);
        for i in 0..dims.size() / 4 {
            dims.write_u32(4 * i, 1 + i as u32 % 3).unwrap();
        }
        Bench { gpu, drv, kernel, _code: code, cb, arena, dims }
    }

    /// The `bytes` bytes of the arena after its front guard, as a region of exactly that size.
    pub fn global(&self, bytes: usize) -> DmaRegion {
        self.view(BusAddress(self.arena.bus_address().0 + FRONT as u64), bytes)
    }

    /// The `bytes` bytes of the arena after its front guard, claiming bus address `bus` (a
    /// region the driver must refuse before the device could use the address).
    pub fn view(&self, bus: BusAddress, bytes: usize) -> DmaRegion {
        assert!(bytes <= MAX_TRIED);
        // SAFETY: FRONT + bytes lies inside the arena (asserted above), which outlives the
        // view (views are dropped before the bench) and is never given back to the allocator
        // through it (a DmaRegion has no destructor). Both the view and the arena access the
        // bytes only through DmaRegion's atomics.
        unsafe { DmaRegion::from_raw_parts(self.arena.cpu_ptr().add(FRONT), bus, bytes) }
    }

    /// Dispatch [`STORE_GID`] as `s` asks; returns the dispatch's result after checking that
    /// nothing outside the buffer changed and, on an error, that nothing was submitted and
    /// cb0 not written; a dispatch small enough to wait for must complete with its in-buffer
    /// stores landed. `Err` says which check failed.
    pub fn run(&mut self, s: &Shape) -> Result<Result<(), DispatchError>, String> {
        let words = self.arena.size() / 4;
        for i in 0..words {
            self.arena.write_u32(4 * i, guard(i)).unwrap();
        }
        self.cb.zero();
        let global = self.global(s.bytes);
        let args = [s.first];
        let indirect = s.indirect.map(|v| match v {
            0..256 => BusAddress(self.dims.bus_address().0 + v),
            _ => BusAddress(v),
        });
        let d = Dispatch {
            kernel: self.kernel,
            groups: s.groups,
            local: s.local,
            args: &args,
            constants: &self.cb,
            global: &global,
            lds_dwords: s.lds_dwords,
            indirect,
        };
        let submissions = self.drv.stats().submissions;
        let result = self.drv.dispatch(&d);
        let fail = |what: String| Err(format!("{s:?}: {what}"));
        match result {
            Ok(f) => {
                if let Some(e) = s.size_error() {
                    return fail(format!("accepted, expected {e:?}"));
                }
                let groups = match indirect {
                    // Indirect counts are 1-3 each.
                    Some(_) => 27,
                    None => s.groups.iter().map(|&g| u128::from(g)).product::<u128>(),
                };
                let threads = groups * s.local.iter().map(|&l| u128::from(l)).product::<u128>();
                if threads > MAX_WAITED_THREADS {
                    return Ok(Ok(()));
                }
                if let Err(e) = self.drv.wait(&f, FENCE_TIMEOUT) {
                    return fail(format!("{e} (model error {})", self.gpu.error_code()));
                }
                assert_clean(self.gpu);
                // In one dimension, the stores that land inside the buffer did land.
                let one_dimension = s.local[1..] == [1, 1] && s.groups[1..] == [1, 1];
                if one_dimension && indirect.is_none() {
                    let elements = (s.bytes / 4) as u64;
                    for gid in 0..(s.groups[0] * s.local[0]) {
                        let e = u64::from(s.first) + u64::from(gid);
                        let got = global.read_u32(4 * e as usize).ok();
                        if e < elements && got != Some(gid) {
                            return fail(format!("element {e} holds {got:?}, not {gid}"));
                        }
                    }
                }
            }
            Err(e) => {
                if self.drv.stats().submissions != submissions {
                    return fail(format!("{e:?} after a submission"));
                }
                let mut cb = [0u32; 64];
                self.cb.read_slice(0, &mut cb).unwrap();
                if cb != [0; 64] {
                    return fail(format!("{e:?} after writing cb0"));
                }
            }
        }
        // Nothing outside the buffer changed (a refused odd size's partial word included).
        let end = FRONT + s.bytes - s.bytes % 4;
        let inside = if result.is_ok() { FRONT / 4..end / 4 } else { 0..0 };
        for i in (0..words).filter(|i| !inside.contains(i)) {
            let v = self.arena.read_u32(4 * i).unwrap();
            if v != guard(i) {
                return fail(format!("arena byte {} changed: {v:#x}", 4 * i));
            }
        }
        Ok(result.map(drop))
    }
}
