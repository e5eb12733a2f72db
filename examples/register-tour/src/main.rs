//! How a hobby OS links `baregpu-hal` and `baregpu-regs`.
//!
//! A kernel maps a GPU's register BAR as uncached memory and wraps it in `MmioRegion`; from then
//! on every access is typed. Here a heap buffer stands in for the BAR so the tour runs on the
//! host: `cargo run -p register-tour`.

use baregpu_hal::{MmioRegion, Register, RegisterIo, RegisterIoExt};
use baregpu_regs::r5xx::cp::{CP_ME_CNTL, CP_RB_CNTL, SCRATCH_REG0, cp_me_cntl};
use baregpu_regs::vc4::v3d::{V3D_IDENT0, V3D_INTCTL};
use std::ptr::NonNull;

/// Size of the stand-in register BAR (64 KiB, like the R5xx register aperture).
const BAR_BYTES: usize = 64 * 1024;

fn main() {
    let mut backing = vec![0u32; BAR_BYTES / 4].into_boxed_slice();
    let base = NonNull::new(backing.as_mut_ptr()).expect("a boxed slice is never null");
    // SAFETY: `backing` outlives `bar` (dropped at the end of main, after it) and nothing else
    // touches it while `bar` exists. On real hardware this is the BAR mapped uncached.
    let bar = unsafe { MmioRegion::new(base, BAR_BYTES) };

    println!("R5xx command processor (amd-r5xx-acceleration §11.1):");
    bar.write(CP_RB_CNTL::RESET.try_with_rb_bufsz(13).expect("13 fits the 6-bit RB_BUFSZ"));
    println!("  {:?}", bar.read::<CP_RB_CNTL>());
    bar.modify::<CP_ME_CNTL>(|r| r.with_me_mode(cp_me_cntl::MeMode::FreeRunningMode));
    println!("  {:?}", bar.read::<CP_ME_CNTL>());
    for i in 0..2 {
        bar.write_at(i, SCRATCH_REG0::from_raw(0xCAFE_0000 + i as u32)).expect("index < 8");
    }
    println!("  SCRATCH_REG0[1] = {:#x}", bar.read_at::<SCRATCH_REG0>(1).expect("index < 8").raw());
    match bar.read_at::<SCRATCH_REG0>(8) {
        Ok(_) => unreachable!("SCRATCH_REG0 has 8 instances"),
        Err(e) => println!("  {e}"),
    }

    println!("VideoCore IV V3D at a run-time base (broadcom-videocore-iv-3d §10):");
    let v3d = bar.at(0x8000);
    v3d.write32(<V3D_IDENT0 as Register>::OFFSET, V3D_IDENT0::RESET.raw()); // what hardware shows
    let ident = v3d.read::<V3D_IDENT0>();
    println!("  {ident:?} -> V3D version {}", ident.tver());
    println!("  {:?}", v3d.read::<V3D_INTCTL>());

    println!("Offsets outside the BAR read all-ones, like a master abort:");
    println!("  read32({BAR_BYTES:#x}) = {:#x}", bar.read32(BAR_BYTES));
    // `bar` was declared after `backing`, so it is dropped first.
}
