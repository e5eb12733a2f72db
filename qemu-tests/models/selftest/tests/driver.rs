//! The self-test device driven the way a kernel driver does, in process: probe through
//! `ConfigRegionAccess`, registers through `RegisterIo`, buffers from a `DmaAllocator`,
//! interrupts handled then acknowledged in the device and the mailbox.

use baregpu_hal::RegisterIo;
use baregpu_hal::dma::{DmaAllocator, DmaLayout, DmaRegion};
use baregpu_hal::pci::{self, PciAddress};
use gpu_device_model::{InProcess, InProcessOptions};
use gpu_mailbox::selftest as ds;
use gpu_mailbox::{ModelState, Status};
use pci_types::ConfigRegionAccess;
use selftest_model::{ERROR_DMA_ADDRESS, IRQ_LINE, SelftestModel};

/// What a minimal driver for the device looks like.
struct Driver<'a, I: RegisterIo> {
    io: &'a I,
}

impl<I: RegisterIo> Driver<'_, I> {
    fn transfer(&self, region: &DmaRegion, len: u32, command: u32) -> u32 {
        self.io.write32(ds::DMA_ADDR_LO, region.bus_address().low());
        self.io.write32(ds::DMA_ADDR_HI, region.bus_address().high());
        self.io.write32(ds::DMA_LEN, len);
        self.io.write32(ds::DMA_CMD, command);
        self.io.read32(ds::DMA_STATUS)
    }

    /// Interrupt handler: read and acknowledge the device's causes.
    fn handle_irq(&self) -> u32 {
        let causes = self.io.read32(ds::IRQ_STATUS);
        self.io.write32(ds::IRQ_STATUS, causes);
        causes
    }
}

fn gpu() -> InProcess<SelftestModel> {
    InProcess::new(SelftestModel::new()).unwrap()
}

#[test]
fn probe_finds_the_device_by_its_datasheet_identity() {
    let options = InProcessOptions {
        address: PciAddress::new(0, 0, 5, 0),
        enable: false,
        ..InProcessOptions::default()
    };
    let gpu = InProcess::with_options(SelftestModel::new(), options).unwrap();
    let mut found = Vec::new();
    pci::scan(&gpu, 0, |f| found.push(f));
    assert_eq!(found.len(), 1);
    let f = found[0];
    assert_eq!((f.vendor, f.device, f.class), (ds::VENDOR, ds::DEVICE, ds::CLASS));
    assert_eq!(f.address, PciAddress::new(0, 0, 5, 0));
    let (_, size) = f.memory_bar(0).unwrap();
    assert_eq!(size, u64::from(ds::BAR0_SIZE));

    // Decoding is off after power-on: the device does not answer until the driver enables it.
    assert_eq!(gpu.read32(ds::ID), u32::MAX);
    // SAFETY: plain configuration write to the function found above.
    unsafe { gpu.write(f.address, 4, 0b110) };
    assert_eq!(gpu.read32(ds::ID), ds::ID_VALUE);
}

#[test]
fn register_side_effects() {
    let gpu = gpu();
    assert_eq!(gpu.read32(ds::ID), ds::ID_VALUE);
    gpu.write32(ds::SCRATCH, 0xCAFE_F00D);
    assert_eq!(gpu.read32(ds::SCRATCH), 0xCAFE_F00D);
    let counts: Vec<u32> = (0..3).map(|_| gpu.read32(ds::COUNTER)).collect();
    assert_eq!(counts, [0, 1, 2]);
    gpu.write32(ds::INVERT, 0x0000_FFFF);
    assert_eq!(gpu.read32(ds::INVERT), 0xFFFF_0000);
    assert_eq!(gpu.bar(0).read32(ds::SCRATCH), 0xCAFE_F00D);
    assert_eq!(gpu.last_status(), Status::Ok);
}

#[test]
fn dma_round_trip_through_allocated_buffers() {
    let gpu = gpu();
    let driver = Driver { io: &gpu };
    let src = gpu.allocate(DmaLayout::new(256, 256).unwrap()).unwrap();
    let dst = gpu.allocate(DmaLayout::new(256, 256).unwrap()).unwrap();
    let words: Vec<u32> = (0..64).map(|i| i * 0x0101_0101).collect();
    src.write_slice(0, &words).unwrap();
    baregpu_hal::barrier::dma_wmb();

    assert_eq!(driver.transfer(&src, 256, ds::DMA_CMD_TO_DEVICE), ds::DMA_STATUS_DONE);
    let sum = words.iter().fold(0u32, |s, w| s.wrapping_add(*w));
    assert_eq!(gpu.read32(ds::CHECKSUM), sum);
    assert_eq!(driver.transfer(&dst, 256, ds::DMA_CMD_FROM_DEVICE), ds::DMA_STATUS_DONE);
    let mut out = vec![0u32; 64];
    dst.read_slice(0, &mut out).unwrap();
    assert_eq!(out, words);
    gpu.deallocate(src);
    gpu.deallocate(dst);
}

#[test]
fn interrupt_flow_like_the_kernel_handler() {
    let gpu = gpu();
    let driver = Driver { io: &gpu };
    gpu.write32(ds::IRQ_ENABLE, ds::IRQ_DMA_DONE | ds::IRQ_SOFTWARE);
    let buf = gpu.allocate(DmaLayout::new(16, 4).unwrap()).unwrap();
    driver.transfer(&buf, 16, ds::DMA_CMD_TO_DEVICE);
    assert_eq!(gpu.take_interrupts(), 1);
    assert_eq!(gpu.irq_status(), IRQ_LINE);
    // Handler: device first, then the mailbox line.
    assert_eq!(driver.handle_irq(), ds::IRQ_DMA_DONE);
    assert_eq!(gpu.ack_irq(IRQ_LINE), 0);
    assert_eq!(gpu.take_interrupts(), 0);

    gpu.write32(ds::IRQ_RAISE, 1);
    assert_eq!(gpu.take_interrupts(), 1);
    // A driver that acks only the mailbox gets the interrupt again (level semantics).
    assert_eq!(gpu.ack_irq(IRQ_LINE), IRQ_LINE);
    assert_eq!(gpu.take_interrupts(), 1);
    assert_eq!(driver.handle_irq(), ds::IRQ_SOFTWARE);
    assert_eq!(gpu.ack_irq(IRQ_LINE), 0);
}

#[test]
fn dma_fault_puts_the_device_in_error_until_reset() {
    let gpu = gpu();
    gpu.write32(ds::DMA_ADDR_LO, 0);
    gpu.write32(ds::DMA_ADDR_HI, 0x10);
    gpu.write32(ds::DMA_LEN, 4);
    gpu.write32(ds::DMA_CMD, ds::DMA_CMD_FROM_DEVICE);
    assert_eq!(gpu.last_status(), Status::Ok, "the command write itself completes");
    assert_eq!((gpu.state(), gpu.error_code()), (ModelState::Error, ERROR_DMA_ADDRESS));
    // Like on hardware, the driver sees the fault in the device's status register.
    assert_eq!(gpu.read32(ds::DMA_STATUS), ds::DMA_STATUS_FAULT);
    assert_eq!(gpu.last_status(), Status::Ok);
    assert_eq!(gpu.read32(ds::ID), ds::ID_VALUE, "registers keep answering");
    gpu.write32(ds::SCRATCH, 0xABCD);
    assert_eq!(gpu.read32(ds::SCRATCH), 0xABCD, "writes are performed");
    assert_eq!(gpu.state(), ModelState::Error, "until reset");
    gpu.reset();
    assert_eq!((gpu.state(), gpu.error_code()), (ModelState::Ready, 0));
    assert_eq!(gpu.read32(ds::ID), ds::ID_VALUE);
    assert_eq!(gpu.read32(ds::DMA_STATUS), 0);
    assert_eq!(gpu.read32(ds::SCRATCH), 0);
}

#[test]
fn dma_needs_bus_mastering() {
    let options = InProcessOptions { enable: false, ..InProcessOptions::default() };
    let gpu = InProcess::with_options(SelftestModel::new(), options).unwrap();
    // Memory decoding only.
    // SAFETY: plain configuration write.
    unsafe { gpu.write(gpu.pci_address(), 4, 0b010) };
    let buf = gpu.allocate(DmaLayout::new(4, 4).unwrap()).unwrap();
    gpu.write32(ds::DMA_ADDR_LO, buf.bus_address().low());
    gpu.write32(ds::DMA_LEN, 4);
    gpu.write32(ds::DMA_CMD, ds::DMA_CMD_TO_DEVICE);
    assert_eq!(gpu.last_status(), Status::Ok);
    assert_eq!((gpu.state(), gpu.error_code()), (ModelState::Error, ERROR_DMA_ADDRESS));
    assert_eq!(gpu.read32(ds::DMA_STATUS), ds::DMA_STATUS_FAULT);
}
