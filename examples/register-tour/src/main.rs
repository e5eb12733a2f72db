//! How a hobby OS links `baregpu-hal` and `baregpu-regs`.
//!
//! A kernel maps a GPU's register BAR as uncached memory and wraps it in `MmioRegion`; from then
//! on every access is typed. Here heap buffers stand in for the register windows so the tour
//! runs on the host: `cargo run -p register-tour`.

use baregpu_hal::dma::BusAddress;
use baregpu_hal::{MmioRegion, RegisterIo, RegisterIoExt};
use baregpu_regs::nvidia::falcon::{Pdaemon, SCRATCH0};
use baregpu_regs::nvidia::pmc::BOOT_0;
use baregpu_regs::r5xx::cp::{CP_ME_CNTL, CP_RB_BASE, CP_RB_CNTL, SCRATCH_REG0, cp_me_cntl};
use baregpu_regs::vc4::Chipset as Vc4Chipset;
use baregpu_regs::vc4::v3d::{V3D_IDENT0, V3D_INTCTL};
use std::ptr::NonNull;

/// Size of the stand-in R5xx register BAR (64 KiB, the R5xx register aperture).
const R5XX_BAR_BYTES: usize = 64 * 1024;
/// Size of the stand-in V3D window (4 KiB).
const V3D_BYTES: usize = 4 * 1024;
/// Size of the stand-in nVidia BAR0 (2 MiB: enough for PMC and the PDAEMON falcon at 0x10a000).
const NV_BAR0_BYTES: usize = 2 * 1024 * 1024;

/// Heap memory standing in for a register window of `bytes`.
fn window(bytes: usize) -> Box<[u32]> {
    vec![0u32; bytes / 4].into_boxed_slice()
}

/// `backing` as an `MmioRegion`.
fn map(backing: &mut [u32]) -> MmioRegion {
    let bytes = backing.len() * 4;
    let base = NonNull::new(backing.as_mut_ptr()).expect("a boxed slice is never null");
    // SAFETY: every caller keeps `backing` alive and untouched while the region exists (the
    // regions are dropped before their buffers at the end of main). On real hardware this is
    // the BAR mapped uncached.
    unsafe { MmioRegion::new(base, bytes) }
}

fn main() {
    let mut r5xx_backing = window(R5XX_BAR_BYTES);
    let mut v3d_backing = window(V3D_BYTES);
    let mut nv_backing = window(NV_BAR0_BYTES);
    let bar = map(&mut r5xx_backing);
    let v3d = map(&mut v3d_backing);
    let bar0 = map(&mut nv_backing);

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
    // Bus-address fields take a BusAddress and reject what they cannot hold.
    let ring = CP_RB_BASE::RESET.try_with_rb_base(BusAddress(0x0010_0000)).expect("aligned");
    bar.write(ring);
    println!("  ring at {}", bar.read::<CP_RB_BASE>().rb_base());
    match CP_RB_BASE::RESET.try_with_rb_base(BusAddress(0x1_0000_0000)) {
        Ok(_) => unreachable!("CP_RB_BASE holds 32-bit addresses"),
        Err(e) => println!("  {e}"),
    }

    println!("VideoCore IV V3D in its own window (broadcom-videocore-iv-3d §10):");
    for chip in Vc4Chipset::ALL {
        match chip.mmio_base() {
            Some(base) => println!("  {}: V3D window at ARM physical {base:#x}", chip.name()),
            None => println!("  {}: no CPU mapping in the database", chip.name()),
        }
    }
    v3d.write32(0, V3D_IDENT0::RESET.raw()); // what the hardware shows
    let ident = v3d.read::<V3D_IDENT0>();
    println!("  {ident:?} -> V3D version {}", ident.tver());
    println!("  {:?}", v3d.read::<V3D_INTCTL>());

    println!("nVidia BAR0 (nvidia-hardware-envytools):");
    bar0.write32(0, 0x0A30_00A1); // what a GT215 shows in PMC_BOOT_0
    match bar0.read::<BOOT_0>().chipset() {
        Ok(chip) => println!("  PMC_BOOT_0: chipset {}", chip.name()),
        Err(e) => println!("  PMC_BOOT_0: {e}"),
    }
    // Falcon registers live in an engine's IO space: only reachable through an engine.
    let pdaemon = bar0.at::<Pdaemon>();
    pdaemon.write(SCRATCH0::from_raw(0x1234));
    println!("  PDAEMON at {:#x}: {:?}", pdaemon.base(), pdaemon.read::<SCRATCH0>());

    println!("Offsets outside the window read all-ones, like a master abort:");
    println!("  read32({R5XX_BAR_BYTES:#x}) = {:#x}", bar.read32(R5XX_BAR_BYTES));
    // The regions (declared after their buffers) are dropped first.
}
