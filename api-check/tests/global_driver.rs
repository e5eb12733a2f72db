//! The porting guide's pattern for interrupts: the driver in a `static` behind a lock, taken by
//! the interrupt handler and by the rest of the kernel. It compiles only if the driver is
//! `Send`, which needs a `Send` register window and clock and a `Sync` allocator: the
//! platform crate's `BumpDma` is one (a `Cell`-based bump allocator is not, and a static of a
//! driver borrowing it fails with E0277).

use baregpu_hal::MmioRegion;
use baregpu_hal::time::Clock;
use baregpu_platform::dma::BumpDma;
use baregpu_radeon_evergreen::Evergreen;
use baregpu_radeon_r5xx::R5xx;
use baregpu_videocore_v3d::V3d;
use std::sync::Mutex;

/// A kernel's clock (a `Copy` handle on a free-running counter).
#[derive(Clone, Copy)]
struct KernelClock;

impl Clock for KernelClock {
    fn now_ns(&self) -> u64 {
        0
    }
}

/// The allocator lives as long as the kernel: the drivers borrow it for `'static`.
static DMA: std::sync::OnceLock<BumpDma> = std::sync::OnceLock::new();

/// `spin::Mutex` in a kernel (taken with interrupts off outside the handler); the same `Send`
/// bound applies to `std`'s.
static R5XX: Mutex<Option<R5xx<'static, MmioRegion, KernelClock, BumpDma>>> = Mutex::new(None);
static EVERGREEN: Mutex<Option<Evergreen<'static, MmioRegion, KernelClock, BumpDma>>> =
    Mutex::new(None);
/// The V3D driver owns no DMA memory (its overflow pool is the kernel's, borrowed `'static`).
static V3D: Mutex<Option<V3d<'static, MmioRegion, KernelClock>>> = Mutex::new(None);

/// Bring-up at boot: the driver borrows the `'static` allocator and moves into the static.
#[allow(dead_code)]
fn bring_up(io: MmioRegion, firmware: &[u8]) -> Result<(), baregpu_radeon_r5xx::InitError> {
    let dma = DMA.get().expect("the kernel set the pool up first");
    let gpu =
        R5xx::init(io, KernelClock, dma, firmware, baregpu_radeon_r5xx::RingConfig::default())?;
    *R5XX.lock().expect("not poisoned") = Some(gpu);
    Ok(())
}

/// What an MSI handler does: take the lock, handle, release.
fn r5xx_interrupt() -> bool {
    let mut gpu = R5XX.lock().expect("not poisoned");
    gpu.as_mut().is_some_and(|gpu| gpu.handle_interrupts().is_ok())
}

fn evergreen_interrupt() -> bool {
    let mut gpu = EVERGREEN.lock().expect("not poisoned");
    gpu.as_mut().is_some_and(|gpu| gpu.handle_interrupts().is_ok())
}

fn v3d_interrupt() -> bool {
    let mut gpu = V3D.lock().expect("not poisoned");
    gpu.as_mut().is_some_and(|gpu| gpu.handle_interrupts().is_ok())
}

fn assert_send<T: Send>() {}
fn assert_sync<T: Sync>() {}

#[test]
fn a_driver_over_the_platform_allocator_can_live_in_a_static_for_the_interrupt_handler() {
    assert_sync::<BumpDma>();
    assert_send::<R5xx<'static, MmioRegion, KernelClock, BumpDma>>();
    assert_send::<Evergreen<'static, MmioRegion, KernelClock, BumpDma>>();
    assert_send::<V3d<'static, MmioRegion, KernelClock>>();
    // Before `init` stores a driver there, the handler finds none and does nothing.
    assert!(!r5xx_interrupt());
    assert!(!evergreen_interrupt());
    assert!(!v3d_interrupt());
    assert!(DMA.get().is_none());
}
