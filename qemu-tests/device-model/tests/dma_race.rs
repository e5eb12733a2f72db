//! A driver's `DmaRegion` (from `InProcess::allocate`) is `Send`: moved to another thread, it
//! is written and read while the model DMAs the same bytes. Both sides access the memory with
//! 32-bit atomics on aligned words, also when the model's DMA starts or ends inside a word, so
//! this is race-free; `cargo miri test` checks it (a plain or volatile access on either side is
//! reported as a data race, and so are overlapping atomics of different sizes).

use baregpu_hal::dma::{DmaAllocator, DmaLayout, DmaRegion};
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
    fn mmio_write(&mut self, _: u8, offset: u32, value: u32, dev: &mut DeviceContext<'_>) {
        match offset {
            0 => {
                let _ = dev.dma_write_u32(0x1004, value);
            }
            // Byte-aligned DMA (as a CP DMA to an odd address): bytes 1-6 of the region,
            // the upper three bytes of dword 0 and the lower three of dword 1.
            _ => {
                let b = value.to_le_bytes();
                let _ = dev.dma_write(0x1001, &[b[0], b[1], b[2], b[0], b[1], b[2]]);
            }
        }
    }
    fn reset(&mut self) {}
}

/// The device in process with a 16-byte region at bus address 0x1000, which the device DMAs.
fn device_and_region() -> (InProcess<Dma>, DmaRegion) {
    let options = InProcessOptions { memory_size: 64 << 10, ..InProcessOptions::default() };
    let gpu = InProcess::with_options(Dma, options).unwrap();
    let region = gpu.allocate(DmaLayout::new(16, 4).unwrap()).unwrap();
    assert_eq!(region.bus_address().0, 0x1000);
    (gpu, region)
}

#[test]
fn a_region_on_another_thread_and_model_dma_do_not_race() {
    use baregpu_hal::RegisterIo;
    let (gpu, region) = device_and_region();
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

/// A byte-aligned DMA racing with a driver thread that reads the dwords it writes bytes of
/// (and writes a dword the model reads back unaligned): the model's copies use 32-bit atomics
/// on the words they overlap (loads, and compare-and-swap at unaligned ends), the region
/// 32-bit atomics, so Miri sees no mixed-size race, and the bytes end as the last DMA left them.
#[test]
fn a_byte_aligned_dma_and_a_driver_on_another_thread_do_not_race() {
    use baregpu_hal::RegisterIo;
    let (gpu, region) = device_and_region();
    const N: u32 = 12;
    let driver = std::thread::spawn(move || {
        for k in 1..=N {
            // The driver writes dword 2 (which the model reads back below) and reads the two
            // dwords the DMA writes bytes of: each byte is 0 or a value the DMA wrote.
            region.write_u32(8, k).unwrap();
            let d0 = region.read_u32(0).unwrap().to_le_bytes();
            let d1 = region.read_u32(4).unwrap().to_le_bytes();
            assert_eq!((d0[0], d1[3]), (0, 0), "bytes outside the DMA");
            assert!(d0[1..].iter().chain(&d1[..3]).all(|&b| u32::from(b) <= N));
        }
        region
    });
    for k in 1..=N {
        gpu.write32(4, k * 0x01_0101); // the model DMAs bytes 1-6
        let mut out = [0u8; 12];
        gpu.read_memory(0x1001, &mut out).unwrap(); // and reads bytes 1-12 back
    }
    let region = driver.join().unwrap();
    let last = (N * 0x01_0101).to_le_bytes();
    assert_eq!(region.read_u32(0).unwrap().to_le_bytes()[1..], last[..3]);
    assert_eq!(region.read_u32(4).unwrap().to_le_bytes()[..3], last[..3]);
    assert_eq!(region.read_u32(8), Ok(N));
    gpu.deallocate(region);
}
