//! A driver's `DmaRegion` (from `InProcess::allocate`) is `Send`: moved to another thread, it
//! is written and read while the model DMAs the same bytes. Both sides access the memory with
//! 32-bit atomics, so this is race-free; `cargo miri test` checks it (a plain or volatile access
//! on either side is reported as a data race).

use baregpu_hal::dma::{DmaAllocator, DmaLayout};
use gpu_device_model::{
    BarSpec, DeviceContext, GpuModel, InProcess, InProcessOptions, PciIdentity,
};

/// A device with one register that DMAs its value to guest address 0x1004 when written.
struct Dma;

impl GpuModel for Dma {
    fn pci_identity(&self) -> PciIdentity {
        PciIdentity::new(0x1234, 0x5678, 0xFF0000).with_bar(0, BarSpec::mem32(0x100))
    }
    fn mmio_read(&mut self, _: u8, _: u32, _: &mut DeviceContext<'_>) -> u32 {
        0
    }
    fn mmio_write(&mut self, _: u8, _: u32, value: u32, dev: &mut DeviceContext<'_>) {
        let _ = dev.dma_write_u32(0x1004, value);
    }
    fn reset(&mut self) {}
}

#[test]
fn a_region_on_another_thread_and_model_dma_do_not_race() {
    use baregpu_hal::RegisterIo;
    let options = InProcessOptions { memory_size: 64 << 10, ..InProcessOptions::default() };
    let gpu = InProcess::with_options(Dma, options).unwrap();
    let region = gpu.allocate(DmaLayout::new(16, 4).unwrap()).unwrap();
    assert_eq!(region.bus_address().0, 0x1000);
    const N: u32 = 20;
    let driver = std::thread::spawn(move || {
        let mut seen = 0;
        for k in 1..=N {
            region.write_u32(0, k).unwrap();
            seen = seen.max(region.read_u32(4).unwrap());
        }
        (region, seen)
    });
    let mut seen = 0;
    for k in 1..=N {
        gpu.write32(0, k); // the model writes dword 1 of the region
        let mut b = [0u8; 4];
        gpu.read_memory(0x1000, &mut b).unwrap(); // and reads dword 0
        seen = seen.max(u32::from_le_bytes(b));
        gpu.write_memory(0x1008, &k.to_le_bytes()).unwrap();
    }
    let (region, driver_seen) = driver.join().unwrap();
    assert!(seen <= N && driver_seen <= N, "only values either side wrote");
    assert_eq!(region.read_u32(0), Ok(N));
    assert_eq!(region.read_u32(4), Ok(N));
    assert_eq!(region.read_u32(8), Ok(N));
    gpu.deallocate(region);
}
