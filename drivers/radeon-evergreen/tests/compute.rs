//! Compute kernels from baregpu-evergreen-asm on the emulated Cypress and Cayman shader cores,
//! compared element by element with the CPU; typed errors for dispatches the hardware cannot
//! run.

mod common;

use baregpu_evergreen_asm::abi::AbiError;
use baregpu_evergreen_asm::{Chip, Node, assemble, examples};
use baregpu_hal::dma::{BusAddress, DmaRegion};
use baregpu_radeon_evergreen::compute::{self, Dispatch, DispatchError, Kernel};
use baregpu_radeon_evergreen::gpu::GpuQueue;
use baregpu_regs::evergreen::Chipset;
use common::*;

fn asm_chip(chip: Chipset) -> Chip {
    match chip {
        Chipset::CYPRESS => Chip::Evergreen,
        Chipset::CAYMAN => Chip::Cayman,
        other => panic!("no assembler target for {other:?}"),
    }
}

/// Assemble `source` for `chip` into fresh DMA memory.
fn kernel<'g>(gpu: &'g Gpu, chip: Chipset, source: &str) -> (Buffer<'g>, Kernel) {
    let mut nodes = [Node::EMPTY; 64];
    let mut words = [0u32; 256];
    let info = assemble(source, asm_chip(chip), &mut nodes, &mut words).expect("assembles");
    let region = alloc(gpu, 4096);
    let k = compute::load_kernel(&region, &words[..info.words], info.num_gprs, info.stack_depth)
        .expect("kernel");
    (region, k)
}

/// Global memory with `a`, `b` (f32) and room for `c`; byte offsets of the three arrays.
fn global<'g>(gpu: &'g Gpu, n: usize, a: &[f32], b: &[f32]) -> (Buffer<'g>, [u32; 3]) {
    let region = alloc(gpu, (3 * n * 4).next_multiple_of(4096));
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    region.write_slice(0, &bits(a)).unwrap();
    region.write_slice(n * 4, &bits(b)).unwrap();
    (region, [0, (n * 4) as u32, (2 * n * 4) as u32])
}

fn read_f32(r: &DmaRegion, offset: usize, n: usize) -> Vec<f32> {
    let mut out = vec![0u32; n];
    r.read_slice(offset, &mut out).unwrap();
    out.into_iter().map(f32::from_bits).collect()
}

fn inputs(n: usize) -> (Vec<f32>, Vec<f32>) {
    let a = (0..n).map(|i| i as f32 * 0.5 + 1.25).collect();
    let b = (0..n).map(|i| 1000.0 - i as f32 * 3.0).collect();
    (a, b)
}

#[test]
fn vector_add_matches_the_cpu_on_both_chips() {
    for (chip, asic) in CHIPS {
        let gpu = gpu(asic);
        let mut drv = init(&gpu, chip, &Images::of(chip), Default::default());
        let (_code, k) = kernel(&gpu, chip, examples::VECTOR_ADD);
        let n = 1024;
        let (a, b) = inputs(n);
        let (mem, [pa, pb, pc]) = global(&gpu, n, &a, &b);
        let cb = alloc(&gpu, 256);
        // Pointer arguments are byte offsets into global memory (kernel ABI).
        let args = [pa, pb, pc];
        let d = Dispatch {
            kernel: k,
            groups: [16, 1, 1],
            local: [64, 1, 1],
            args: &args,
            constants: &cb,
            global: &mem,
            lds_dwords: 0,
            indirect: None,
        };
        let f = drv.dispatch(&d).unwrap_or_else(|e| panic!("{chip:?}: {e}"));
        drv.wait(&f, FENCE_TIMEOUT)
            .unwrap_or_else(|e| panic!("{chip:?}: {e} (model error {})", gpu.error_code()));
        let c = read_f32(&mem, pc as usize, n);
        for i in 0..n {
            assert_eq!(c[i], a[i] + b[i], "{chip:?} element {i}");
        }
        assert_eq!(gpu.model().stats().dispatches, 1);
        println!("{chip:?}: c[0..4] = {:?}, checksum {}", &c[..4], c.iter().sum::<f32>());
        assert_clean(&gpu);
    }
}

#[test]
fn saxpy_matches_the_cpu_on_both_chips_direct_and_indirect() {
    for (chip, asic) in CHIPS {
        let gpu = gpu(asic);
        let mut drv = init(&gpu, chip, &Images::of(chip), Default::default());
        let (_code, k) = kernel(&gpu, chip, examples::SAXPY);
        let n = 512;
        let (x, y) = inputs(n);
        let alpha = 2.5f32;
        let (mem, [px, py, _]) = global(&gpu, n, &x, &y);
        let cb = alloc(&gpu, 256);
        let args = [alpha.to_bits(), px, py];
        let dims = alloc(&gpu, 256);
        dims.write_slice(0, &[4, 1, 1]).unwrap();
        let mut expected = y.clone();
        for indirect in [None, Some(dims.bus_address())] {
            let d = Dispatch {
                kernel: k,
                groups: [4, 1, 1],
                local: [128, 1, 1],
                args: &args,
                constants: &cb,
                global: &mem,
                lds_dwords: 0,
                indirect,
            };
            let f = drv.dispatch(&d).unwrap_or_else(|e| panic!("{chip:?}: {e}"));
            drv.wait(&f, FENCE_TIMEOUT).unwrap_or_else(|e| {
                panic!("{chip:?} {indirect:?}: {e} (model error {})", gpu.error_code())
            });
            for (e, xi) in expected.iter_mut().zip(&x) {
                *e += alpha * xi;
            }
            let got = read_f32(&mem, py as usize, n);
            for i in 0..n {
                assert_eq!(got[i], expected[i], "{chip:?} {indirect:?} element {i}");
            }
        }
        assert_eq!(gpu.model().stats().dispatches, 2);
        assert_clean(&gpu);
    }
}

#[test]
fn dispatches_the_hardware_cannot_run_are_typed_errors_and_submit_nothing() {
    for (chip, asic) in CHIPS {
        let gpu = gpu(asic);
        let mut drv = init(&gpu, chip, &Images::of(chip), Default::default());
        let (_code, k) = kernel(&gpu, chip, examples::VECTOR_ADD);
        let cb = alloc(&gpu, 256);
        let mem = alloc(&gpu, 4096);
        let ok = Dispatch {
            kernel: k,
            groups: [1, 1, 1],
            local: [64, 1, 1],
            args: &[0, 0, 0],
            constants: &cb,
            global: &mem,
            lds_dwords: 0,
            indirect: None,
        };
        let many_args = [0u32; compute::MAX_ARGS + 1];
        let small_cb = alloc(&gpu, 128);
        let top = BusAddress(1 << 40);
        let submissions = drv.stats().submissions;
        let cases: [(Dispatch<'_>, DispatchError); 14] = [
            (Dispatch { local: [16, 16, 2], ..ok }, DispatchError::GroupTooLarge { threads: 512 }),
            // The product of the dimensions overflows 64 bits.
            (
                Dispatch { local: [u32::MAX, u32::MAX, 4], ..ok },
                DispatchError::GroupTooLarge { threads: u64::MAX },
            ),
            (Dispatch { groups: [0, 1, 1], ..ok }, DispatchError::EmptyDispatch),
            (Dispatch { local: [64, 0, 1], ..ok }, DispatchError::EmptyDispatch),
            (Dispatch { lds_dwords: 8193, ..ok }, DispatchError::LdsTooLarge { dwords: 8193 }),
            (
                Dispatch { kernel: Kernel { num_gprs: 1, ..k }, ..ok },
                DispatchError::BadGprCount { num_gprs: 1 },
            ),
            (
                Dispatch { kernel: Kernel { code: BusAddress(k.code.0 + 4), ..k }, ..ok },
                DispatchError::Misaligned { address: BusAddress(k.code.0 + 4) },
            ),
            // groups x local must fit the 32-bit global size of cb0.
            (
                Dispatch { groups: [1 << 26, 1, 1], ..ok },
                DispatchError::Constants(AbiError::GlobalSizeOverflow),
            ),
            (
                Dispatch { args: &many_args, ..ok },
                DispatchError::Constants(AbiError::BufferTooSmall { needed: 9 + 56 }),
            ),
            // cb0 is read in 256-byte units: 128 bytes of constants memory are too few.
            (
                Dispatch { constants: &small_cb, ..ok },
                DispatchError::Constants(AbiError::BufferTooSmall { needed: 64 }),
            ),
            // The indirect group counts: where SET_BASE can point (ADDRESS_LO holds bits 31:3),
            // all 12 bytes below 2^40.
            (
                Dispatch { indirect: Some(BusAddress(mem.bus_address().0 + 2)), ..ok },
                DispatchError::BadIndirect { address: BusAddress(mem.bus_address().0 + 2) },
            ),
            (
                Dispatch { indirect: Some(BusAddress(mem.bus_address().0 + 4)), ..ok },
                DispatchError::BadIndirect { address: BusAddress(mem.bus_address().0 + 4) },
            ),
            (
                Dispatch { indirect: Some(BusAddress(top.0 - 8)), ..ok },
                DispatchError::BadIndirect { address: BusAddress(top.0 - 8) },
            ),
            (
                Dispatch { indirect: Some(BusAddress(u64::MAX - 3)), ..ok },
                DispatchError::BadIndirect { address: BusAddress(u64::MAX - 3) },
            ),
        ];
        for (d, e) in cases {
            assert_eq!(drv.dispatch(&d).err(), Some(e), "{chip:?}");
        }
        assert_eq!(drv.stats().submissions, submissions, "{chip:?}: nothing reached the ring");
        // The valid one runs, with and without indirect group counts.
        let dims = alloc(&gpu, 256);
        dims.write_slice(0, &[1, 1, 1]).unwrap();
        for indirect in [None, Some(dims.bus_address())] {
            let f = drv.dispatch(&Dispatch { indirect, ..ok }).unwrap();
            drv.wait(&f, FENCE_TIMEOUT).unwrap();
        }
        assert_clean(&gpu);
    }
}

/// Run `source` over `n` u32 elements of `input` (at byte 0 of global memory) with the
/// pointer arguments `args`; returns global memory afterwards.
fn run_u32(
    chip: Chipset,
    asic: evergreen_model::Asic,
    source: &str,
    input: &[u32],
    extra: usize,
    args: &[u32],
    local: u32,
) -> Vec<u32> {
    let gpu = gpu(asic);
    let mut drv = init(&gpu, chip, &Images::of(chip), Default::default());
    let (_code, k) = kernel(&gpu, chip, source);
    let n = input.len();
    let mem = alloc(&gpu, ((n + extra) * 4).next_multiple_of(4096));
    mem.write_slice(0, input).unwrap();
    let cb = alloc(&gpu, 256);
    let d = Dispatch {
        kernel: k,
        groups: [n as u32 / local, 1, 1],
        local: [local, 1, 1],
        args,
        constants: &cb,
        global: &mem,
        lds_dwords: 0,
        indirect: None,
    };
    let f = drv.dispatch(&d).unwrap_or_else(|e| panic!("{chip:?}: {e}"));
    drv.wait(&f, FENCE_TIMEOUT)
        .unwrap_or_else(|e| panic!("{chip:?}: {e} (model error {})", gpu.error_code()));
    assert_clean(&gpu);
    let mut out = vec![0u32; n + extra];
    mem.read_slice(0, &mut out).unwrap();
    out
}

fn values(n: usize) -> Vec<u32> {
    (0..n as u32).map(|i| i.wrapping_mul(0x9E37_79B9).rotate_left(i % 32) >> (i % 29)).collect()
}

#[test]
fn atomic_reduction_branchy_and_loop_kernels_match_the_cpu_on_both_chips() {
    let n = 256;
    let input = values(n);
    for (chip, asic) in CHIPS {
        // REDUCE_ADD: *sum (just past the input) += every a[i], atomically through RAT 0.
        let out = run_u32(chip, asic, examples::REDUCE_ADD, &input, 1, &[0, (n * 4) as u32], 64);
        let sum = input.iter().fold(0u32, |s, v| s.wrapping_add(*v));
        assert_eq!(out[n], sum, "{chip:?}: reduction");
        // COLLATZ_STEP: data-dependent if/else.
        let out = run_u32(chip, asic, examples::COLLATZ_STEP, &input, n, &[0, (n * 4) as u32], 64);
        for (i, v) in input.iter().enumerate() {
            let want = if v % 2 == 1 { v.wrapping_mul(3).wrapping_add(1) } else { v / 2 };
            assert_eq!(out[n + i], want, "{chip:?}: collatz element {i} of {v}");
        }
        // BIT_LENGTH: a loop each thread leaves at its own iteration.
        let out = run_u32(chip, asic, examples::BIT_LENGTH, &input, n, &[0, (n * 4) as u32], 64);
        for (i, v) in input.iter().enumerate() {
            assert_eq!(
                out[n + i],
                32 - v.leading_zeros(),
                "{chip:?}: bit length element {i} of {v}"
            );
        }
    }
}
