//! A device that is not PCI on real hardware, presented through `PlatformDevice`: a tiny
//! register window (a control register and a counter its engine advances) found by the
//! ordinary PCI probe under the project-defined IDs, its registers behind BAR0.

use baregpu_hal::RegisterIo;
use gpu_device_model::{Activity, DeviceContext, InProcess, PlatformDevice, PlatformModel};
use gpu_mailbox::platform;

/// Offset 0: a control register (write 1 to run); offset 4: a counter the engine advances by
/// one per tick while running, up to 3.
#[derive(Default)]
struct Counter {
    run: bool,
    count: u32,
}

impl PlatformModel for Counter {
    fn window_bytes(&self) -> u64 {
        16
    }
    fn read(&mut self, offset: u32, _: &mut DeviceContext<'_>) -> u32 {
        match offset {
            0 => u32::from(self.run),
            4 => self.count,
            _ => 0,
        }
    }
    fn write(&mut self, offset: u32, value: u32, _: &mut DeviceContext<'_>) {
        if offset == 0 {
            self.run = value & 1 != 0;
        }
    }
    fn tick(&mut self, _: &mut DeviceContext<'_>) -> Activity {
        if !self.run || self.count == 3 {
            return Activity::Idle;
        }
        self.count += 1;
        Activity::Busy
    }
    fn reset(&mut self) {
        *self = Counter::default();
    }
}

#[test]
fn a_non_pci_register_window_is_probed_and_driven_as_a_pci_function() {
    let gpu =
        InProcess::new(PlatformDevice::new(Counter::default(), platform::DEVICE_TEST)).unwrap();
    let f = baregpu_hal::pci::probe(&gpu, gpu.pci_address()).unwrap();
    assert_eq!(
        (f.vendor, f.device, f.class),
        (platform::VENDOR, platform::DEVICE_TEST, platform::CLASS)
    );
    assert_eq!(f.memory_bar(usize::from(platform::REGISTER_BAR)).map(|(_, size)| size), Some(16));
    // The window's registers behind BAR0; the engine runs on the framework's pacing.
    gpu.write32(0, 1);
    let mut count = 0;
    for _ in 0..100 {
        count = gpu.read32(4);
        if count == 3 {
            break;
        }
    }
    assert_eq!(count, 3);
    assert!(gpu.model().model().run);
    // A function-level reset reaches the model.
    gpu.reset();
    assert_eq!((gpu.read32(0), gpu.read32(4)), (0, 0));
}
