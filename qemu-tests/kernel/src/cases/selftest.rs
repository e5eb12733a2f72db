//! `selftest-*`: the self-test device (datasheet: `gpu_mailbox::selftest`) through the mailbox,
//! exercising registers with side effects, DMA both ways, DMA faults, interrupts, and speed.
// The interrupt case is x86_64-only; its helpers are unused on aarch64.
#![cfg_attr(target_arch = "aarch64", allow(dead_code, unused_imports))]

use super::{CaseError, expect, expect_eq};
use crate::Kernel;
use crate::clock::{self, KernelClock};
use crate::mailbox::{self, Mailbox, MailboxError, MailboxIo, virtual_function};
use crate::pci::Platform;
use baregpu_hal::RegisterIo;
use baregpu_hal::barrier::{dma_rmb, dma_wmb};
use baregpu_hal::dma::{DmaBuffer, DmaLayout, DmaRegion};
use baregpu_hal::pci::{self, ConfigRegionAccess};
use baregpu_hal::time::{Clock, poll_until};
use core::sync::atomic::{AtomicU32, Ordering};
use core::time::Duration;
use gpu_mailbox::selftest as st;
use gpu_mailbox::{ModelState, Op, header};

/// The self-test device, probed and enabled.
struct Device {
    mailbox: &'static Mailbox,
    io: MailboxIo,
}

const COMMAND_MEMORY: u32 = 1 << 1;
const COMMAND_BUS_MASTER: u32 = 1 << 2;
/// Bound on waiting for a device interrupt. Delivery (model eventfd -> QEMU -> MSI-X -> LAPIC)
/// takes tens of microseconds under TCG; 100 ms covers a busy host.
const IRQ_TIMEOUT: Duration = Duration::from_millis(100);
/// How long an interrupt that must NOT come is waited for.
const NO_IRQ_WINDOW: Duration = Duration::from_millis(20);

/// Attach the mailbox, reset the device, probe it on the virtual segment like a driver would
/// probe a real GPU, check the datasheet identity, enable memory decoding and bus mastering.
fn device(kernel: &Kernel) -> Result<Device, CaseError> {
    let ivshmem =
        mailbox::attach(kernel.cmdline.flag("ivshmem.relocate")).map_err(CaseError::Ivshmem)?;
    let mailbox = Mailbox::connect(ivshmem)?;
    mailbox.reset()?;
    let platform = Platform { mailbox: Some(mailbox.config()) };
    let f = pci::probe(&platform, virtual_function()).map_err(CaseError::Pci)?;
    defmt::info!(
        "selftest: probed {=u16:04x}:{=u16:04x} class {=u32:06x} rev {=u8} on segment {=u16}",
        f.vendor,
        f.device,
        f.class,
        f.revision,
        f.address.segment()
    );
    expect_eq("pci: vendor", f.vendor, st::VENDOR)?;
    expect_eq("pci: device", f.device, st::DEVICE)?;
    expect_eq("pci: class", f.class, st::CLASS)?;
    let (_, bar0_size) = f.memory_bar(0).ok_or(CaseError::Check("pci: BAR0 is a memory BAR"))?;
    expect_eq("pci: BAR0 size", bar0_size, st::BAR0_SIZE)?;
    expect(
        "pci: nothing else on the virtual segment",
        // SAFETY: reading the ID dword of an empty slot has no effect.
        unsafe { platform.read(baregpu_hal::pci::PciAddress::new(1, 0, 1, 0), 0) } == u32::MAX,
    )?;
    // SAFETY: offset 4 (command) of the virtual function; enabling decode is what a driver does.
    unsafe {
        let command = platform.read(f.address, 4) & 0xFFFF;
        platform.write(f.address, 4, command | COMMAND_MEMORY | COMMAND_BUS_MASTER);
    }
    Ok(Device { mailbox, io: mailbox.io(0) })
}

/// `selftest-registers`: identity, scratch, read and write side effects, master abort.
pub fn registers(kernel: &Kernel) -> Result<(), CaseError> {
    let dev = device(kernel)?;
    let io = &dev.io;
    expect_eq("ID", io.read32(st::ID), st::ID_VALUE)?;
    for value in [0u32, 0xFFFF_FFFF, 0xA5A5_5A5A, 0x1234_5678] {
        io.write32(st::SCRATCH, value);
        expect_eq("SCRATCH round trip", io.read32(st::SCRATCH), value)?;
    }
    for n in 0..3u32 {
        expect_eq("COUNTER counts its own reads", io.read32(st::COUNTER), n)?;
    }
    for value in [0u32, 0xFFFF_0000, 0x1357_9BDF] {
        io.write32(st::INVERT, value);
        expect_eq("INVERT reads the complement", io.read32(st::INVERT), !value)?;
    }
    expect_eq(
        "read past BAR0 is a master abort (all-ones)",
        io.read32(st::BAR0_SIZE as usize),
        u32::MAX,
    )?;
    let status = dev.mailbox.request(Op::MmioRead, 0, st::BAR0_SIZE, 0);
    expect(
        "past-BAR0 request completes with BadAddress",
        status == Err(MailboxError::Status(gpu_mailbox::Status::BadAddress as u32)),
    )?;
    expect_eq("model still answers after the abort", io.read32(st::ID), st::ID_VALUE)?;
    defmt::info!("selftest: {=u64} mailbox requests", dev.mailbox.requests());
    expect_eq("only the deliberate access failed", dev.mailbox.failures(), 1u32)
}

/// Program and start one transfer; returns DMA_STATUS.
fn transfer(io: &MailboxIo, bus: u64, len: u32, command: u32) -> u32 {
    dma_wmb(); // CPU writes to the buffer before the device is told to read it
    io.write32(st::DMA_ADDR_LO, bus as u32);
    io.write32(st::DMA_ADDR_HI, (bus >> 32) as u32);
    io.write32(st::DMA_LEN, len);
    io.write32(st::DMA_CMD, command);
    let status = io.read32(st::DMA_STATUS);
    dma_rmb(); // the status before the device-written data
    status
}

fn pattern(i: usize) -> u32 {
    (i as u32).wrapping_mul(0x9E37_79B9) ^ 0x5E1F_0000
}

fn fill(region: &DmaRegion, words: usize) -> Result<u32, CaseError> {
    let mut sum = 0u32;
    for i in 0..words {
        region.write_u32(i * 4, pattern(i))?;
        sum = sum.wrapping_add(pattern(i));
    }
    Ok(sum)
}

/// `selftest-dma`: both directions, the BUFFER window, a fault outside RAM, reset.
pub fn dma(kernel: &Kernel) -> Result<(), CaseError> {
    let dev = device(kernel)?;
    let io = &dev.io;
    let len = st::BUFFER_SIZE;
    let words = len as usize / 4;
    let src = DmaBuffer::allocate(kernel.dma, DmaLayout::new(len as usize, 4096)?)?;
    let dst = DmaBuffer::allocate(kernel.dma, DmaLayout::new(len as usize, 4096)?)?;
    let sum = fill(&src, words)?;

    let status = transfer(io, src.bus_address().0, len, st::DMA_CMD_TO_DEVICE);
    expect_eq("to device: DMA_STATUS", status, st::DMA_STATUS_DONE)?;
    expect_eq("to device: CHECKSUM", io.read32(st::CHECKSUM), sum)?;
    let mut mismatches = 0;
    for i in 0..words {
        if io.read32(st::BUFFER + i * 4) != pattern(i) {
            mismatches += 1;
        }
    }
    expect_eq("to device: BUFFER window words differing from memory", mismatches as u32, 0u32)?;

    const MARK: u32 = 0xCAFE_F00D;
    io.write32(st::BUFFER, MARK); // the window is writable too
    let status = transfer(io, dst.bus_address().0, len, st::DMA_CMD_FROM_DEVICE);
    expect_eq("from device: DMA_STATUS", status, st::DMA_STATUS_DONE)?;
    expect_eq("from device: word 0 (written through the window)", dst.read_u32(0)?, MARK)?;
    let mut mismatches = 0;
    for i in 1..words {
        if dst.read_u32(i * 4)? != src.read_u32(i * 4)? {
            mismatches += 1;
        }
    }
    expect_eq("from device: words differing from the source", mismatches as u32, 0u32)?;

    // 0xF000_0000 is in q35's PCI hole, not RAM (the machine has 256 MiB): the transfer must
    // fault. Like hardware after a bus error, the device keeps answering: the DMA_CMD write
    // completes, DMA_STATUS reports FAULT, and the model's error state shows in the mailbox
    // header until reset (gpu-mailbox `ModelState::Error`).
    const NOT_RAM: u64 = 0xF000_0000;
    io.write32(st::DMA_ADDR_LO, NOT_RAM as u32);
    io.write32(st::DMA_ADDR_HI, (NOT_RAM >> 32) as u32);
    io.write32(st::DMA_LEN, len);
    let command = dev.mailbox.request(Op::MmioWrite, 0, st::DMA_CMD as u32, st::DMA_CMD_TO_DEVICE);
    expect("fault: the DMA_CMD write completes", command.is_ok())?;
    let status = dev.mailbox.request(Op::MmioRead, 0, st::DMA_STATUS as u32, 0)?;
    expect_eq("fault: DMA_STATUS", status, st::DMA_STATUS_FAULT)?;
    expect_eq("fault: model state", dev.mailbox.header(header::STATE), ModelState::Error as u32)?;
    let error = dev.mailbox.header(header::ERROR);
    defmt::info!("fault: model error code {=u32:#x}", error);
    expect("fault: model error code set", error != 0)?;
    expect_eq("fault: registers still answer", io.read32(st::ID), st::ID_VALUE)?;

    dev.mailbox.reset()?;
    expect_eq("reset: model state", dev.mailbox.header(header::STATE), ModelState::Ready as u32)?;
    expect_eq("reset: model error code", dev.mailbox.header(header::ERROR), 0u32)?;
    expect_eq("reset: DMA_STATUS back to 0", io.read32(st::DMA_STATUS), 0u32)?;
    expect_eq("reset: ID", io.read32(st::ID), st::ID_VALUE)?;
    Ok(())
}

static IRQS_HANDLED: AtomicU32 = AtomicU32::new(0);
static IRQ_BITS_SEEN: AtomicU32 = AtomicU32::new(0);

/// Device interrupt handler: read and W1C-acknowledge IRQ_STATUS.
#[cfg(target_arch = "x86_64")]
fn selftest_irq(_lines: u32) {
    let Some(mailbox) = Mailbox::get() else { return };
    let io = mailbox.io(0);
    let status = io.read32(st::IRQ_STATUS);
    if status != u32::MAX && status != 0 {
        io.write32(st::IRQ_STATUS, status);
        IRQ_BITS_SEEN.fetch_or(status, Ordering::SeqCst);
    }
    IRQS_HANDLED.fetch_add(1, Ordering::SeqCst);
}

#[cfg(target_arch = "x86_64")]
fn wait_handled(what: &'static str, count: u32) -> Result<(), CaseError> {
    poll_until(&KernelClock, IRQ_TIMEOUT, || {
        (IRQS_HANDLED.load(Ordering::SeqCst) >= count).then_some(())
    })
    .map_err(|waited| CaseError::TimedOut { what, waited })
}

/// `selftest-irq`: software interrupt, masked interrupt, DMA-done interrupt, W1C (x86_64:
/// the aarch64 kernel polls and takes no device interrupts).
#[cfg(target_arch = "x86_64")]
pub fn irq(kernel: &Kernel) -> Result<(), CaseError> {
    let dev = device(kernel)?;
    let io = &dev.io;
    mailbox::set_irq_handler(Some(selftest_irq));
    expect("interrupts enabled on the CPU", x86_64::instructions::interrupts::are_enabled())?;

    // Masked: IRQ_RAISE sets the status bit but must not interrupt.
    io.write32(st::IRQ_ENABLE, 0);
    io.write32(st::IRQ_RAISE, 1);
    KernelClock.delay(NO_IRQ_WINDOW);
    expect_eq("masked: no interrupt", mailbox::interrupts(), 0u32)?;
    expect_eq("masked: IRQ_STATUS", io.read32(st::IRQ_STATUS), st::IRQ_SOFTWARE)?;
    io.write32(st::IRQ_STATUS, st::IRQ_SOFTWARE);
    expect_eq("W1C clears IRQ_STATUS", io.read32(st::IRQ_STATUS), 0u32)?;

    io.write32(st::IRQ_ENABLE, st::IRQ_SOFTWARE | st::IRQ_DMA_DONE);
    let start = clock::now_ns();
    io.write32(st::IRQ_RAISE, 1);
    wait_handled("software interrupt", 1)?;
    defmt::info!("software interrupt handled {=u64} ns after IRQ_RAISE", clock::now_ns() - start);
    expect(
        "software: handler saw IRQ_SOFTWARE",
        IRQ_BITS_SEEN.load(Ordering::SeqCst) & st::IRQ_SOFTWARE != 0,
    )?;
    expect_eq("software: IRQ_STATUS acknowledged", io.read32(st::IRQ_STATUS), 0u32)?;
    expect_eq("software: mailbox lines cleared by IrqAck", dev.mailbox.irq_lines(), 0u32)?;

    let buf = DmaBuffer::allocate(kernel.dma, DmaLayout::new(64, 64)?)?;
    fill(&buf, 16)?;
    let status = transfer(io, buf.bus_address().0, 64, st::DMA_CMD_TO_DEVICE);
    expect_eq("dma: DMA_STATUS", status, st::DMA_STATUS_DONE)?;
    wait_handled("DMA-done interrupt", 2)?;
    expect(
        "dma: handler saw IRQ_DMA_DONE",
        IRQ_BITS_SEEN.load(Ordering::SeqCst) & st::IRQ_DMA_DONE != 0,
    )?;
    expect_eq("dma: IRQ_STATUS acknowledged", io.read32(st::IRQ_STATUS), 0u32)?;

    io.write32(st::IRQ_ENABLE, 0);
    KernelClock.delay(Duration::from_millis(1));
    expect_eq("one interrupt per event", mailbox::interrupts(), 2u32)?;
    mailbox::set_irq_handler(None);
    Ok(())
}

/// Register round trips timed.
const BENCH_ROUND_TRIPS: u32 = 5000;
/// 2 KiB transfers per direction timed.
const BENCH_DMA_REPEATS: u32 = 100;

/// `selftest-bench`: mailbox round trips per second and DMA throughput.
pub fn bench(kernel: &Kernel) -> Result<(), CaseError> {
    let dev = device(kernel)?;
    let io = &dev.io;
    const SCRATCH_VALUE: u32 = 0x0BE1_C4ED;
    io.write32(st::SCRATCH, SCRATCH_VALUE);
    let start = clock::now_ns();
    for _ in 0..BENCH_ROUND_TRIPS {
        if io.read32(st::SCRATCH) != SCRATCH_VALUE {
            return Err(CaseError::Check("bench: SCRATCH read back wrong"));
        }
    }
    let rtt_ns = (clock::now_ns() - start).max(1);

    let len = st::BUFFER_SIZE;
    let a = DmaBuffer::allocate(kernel.dma, DmaLayout::new(len as usize, 4096)?)?;
    let b = DmaBuffer::allocate(kernel.dma, DmaLayout::new(len as usize, 4096)?)?;
    fill(&a, len as usize / 4)?;
    let start = clock::now_ns();
    for _ in 0..BENCH_DMA_REPEATS {
        if transfer(io, a.bus_address().0, len, st::DMA_CMD_TO_DEVICE) != st::DMA_STATUS_DONE
            || transfer(io, b.bus_address().0, len, st::DMA_CMD_FROM_DEVICE) != st::DMA_STATUS_DONE
        {
            return Err(CaseError::Check("bench: DMA failed"));
        }
    }
    let dma_ns = (clock::now_ns() - start).max(1);
    expect_eq(
        "bench: last transfer copied the data",
        b.read_u32(len as usize - 4)?,
        a.read_u32(len as usize - 4)?,
    )?;

    let rtt_per_s = u64::from(BENCH_ROUND_TRIPS) * 1_000_000_000 / rtt_ns;
    let dma_bytes = u64::from(BENCH_DMA_REPEATS) * 2 * u64::from(len);
    let dma_bytes_per_s = dma_bytes * 1_000_000_000 / dma_ns;
    defmt::info!(
        "bench: {=u32} round trips in {=u64} ns; {=u64} DMA bytes in {=u64} ns",
        BENCH_ROUND_TRIPS,
        rtt_ns,
        dma_bytes,
        dma_ns
    );
    defmt::info!("bench: rtt_per_s={=u64} dma_bytes_per_s={=u64}", rtt_per_s, dma_bytes_per_s);
    Ok(())
}
