//! `r5xx-*`: the Radeon R5xx driver (`drivers/radeon-r5xx`) against the emulated R520 of the
//! harness, exactly as it would drive a real card: probed on the (virtual) PCI bus, registers
//! through the mailbox `RegisterIo`, DMA in guest RAM, the real `radeon/R520_cp.bin`.

use super::{CaseError, attach_reset, check, expect, expect_eq, inject};
use crate::Kernel;
use crate::clock::TscClock;
use crate::dma::IdentityDma;
use crate::mailbox::{self, Mailbox, MailboxIo, virtual_function};
use crate::pci::Platform;
use baregpu_gpu::GpuQueue;
use baregpu_hal::dma::{DmaBuffer, DmaLayout};
use baregpu_hal::time::poll_until;
use baregpu_radeon_r5xx::{
    DeviceGone, FenceError, InitError, Interrupts, R5xx, RING_TEST_VALUE, RingConfig, TestError,
    USER_SCRATCH, pci,
};
use baregpu_regs::r5xx::Chipset;
use baregpu_regs::r5xx::cp::SCRATCH_REG0;
use baregpu_ring::ib::IndirectBuffer;
use baregpu_ring::r5xx::SUBMIT_ALIGN;
use core::sync::atomic::{AtomicU32, Ordering};
use core::time::Duration;
use defmt::Debug2Format;
use gpu_mailbox::r5xx_faults;

/// `radeon/R520_cp.bin` from Debian's firmware-amd-graphics, unmodified (embedded by build.rs).
pub(super) static FIRMWARE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/R520_cp.bin"));

type Gpu = R5xx<'static, MailboxIo, TscClock, IdentityDma>;

/// Fence wait bound: a fence normally signals within one mailbox round trip (~10 µs); 200 ms
/// covers a loaded 2-core host under TCG.
const FENCE_TIMEOUT: Duration = Duration::from_millis(200);
/// How long a fence that must NOT signal (stalled CP) is waited for.
const STALL_WINDOW: Duration = Duration::from_millis(30);
/// Bound on a device interrupt's arrival (model -> QEMU -> MSI-X -> LAPIC: tens of µs).
const IRQ_TIMEOUT: Duration = Duration::from_millis(200);

/// The emulated R520: mailbox attached, device reset, probed and enabled on the virtual
/// segment with the driver's own PCI code.
pub(super) fn attach(kernel: &Kernel) -> Result<&'static Mailbox, CaseError> {
    let (mailbox, platform) = attach_reset(kernel)?;
    let probed = pci::probe(&platform, virtual_function()).map_err(|e| {
        defmt::error!("r5xx: probe failed: {}", Debug2Format(&e));
        CaseError::Check("r5xx: probe")
    })?;
    defmt::info!(
        "r5xx: {=str} ({=str}) {=u16:04x}:{=u16:04x}, registers in BAR{=usize} ({=u64} KiB)",
        probed.chip.name(),
        probed.name,
        probed.function.vendor,
        probed.function.device,
        probed.registers.slot,
        probed.registers.size / 1024
    );
    pci::enable(&platform, virtual_function()).map_err(|e| {
        defmt::error!("r5xx: enabling the function failed: {}", Debug2Format(&e));
        CaseError::Check("r5xx: enable")
    })?;
    Ok(mailbox)
}

pub(super) fn init(
    kernel: &Kernel,
    mailbox: &'static Mailbox,
    config: RingConfig,
) -> Result<Gpu, CaseError> {
    R5xx::init(mailbox.io(0), TscClock, kernel.dma, FIRMWARE, config).map_err(|e| {
        defmt::error!("r5xx: init failed: {}", Debug2Format(&e));
        CaseError::Check("r5xx: init")
    })
}

/// A scratch-register value for packets.
fn scratch(value: u32) -> SCRATCH_REG0 {
    SCRATCH_REG0::RESET.with_scratch_reg0(value)
}

/// `r5xx-probe`: the device table and BAR decoding find the emulated R520.
pub fn probe(kernel: &Kernel) -> Result<(), CaseError> {
    let mailbox = attach(kernel)?;
    let platform = Platform { mailbox: Some(mailbox.config()) };
    let probed = check("probe", pci::probe(&platform, virtual_function()))?;
    expect_eq("pci: vendor (ATI)", probed.function.vendor, 0x1002u16)?;
    expect_eq("pci: device (R520)", probed.function.device, 0x7100u16)?;
    expect("pci: chip is R520", probed.chip == Chipset::R520)?;
    expect("pci: register BAR >= 64 KiB", probed.registers.size >= 64 * 1024)?;
    Ok(())
}

/// `r5xx-firmware`: R520_cp.bin validated, uploaded with auto-increment, read back.
pub fn firmware(kernel: &Kernel) -> Result<(), CaseError> {
    let mailbox = attach(kernel)?;
    let gpu = init(kernel, mailbox, RingConfig::default())?;
    let report = gpu.upload_report();
    defmt::info!(
        "r5xx: microcode {=usize} entries, {=usize} load writes",
        report.entries,
        report.load_writes
    );
    expect_eq("microcode: entries", report.entries as u64, 256u64)?;
    expect_eq("microcode: 1 + 512 MMIO writes", report.load_writes as u64, 513u64)?;
    Ok(())
}

/// `r5xx-ring`: the ring test (a type-0 write of a scratch register, seen in memory).
pub fn ring(kernel: &Kernel) -> Result<(), CaseError> {
    let mailbox = attach(kernel)?;
    let mut gpu = init(kernel, mailbox, RingConfig::default())?;
    check("ring test", gpu.ring_test())?;
    let fence = check(
        "fence",
        gpu.submit(8, |s| {
            s.writer().write_reg_at(USER_SCRATCH, scratch(0x5C4A_7C40))?;
            s.fence()
        }),
    )?;
    check("fence wait", gpu.wait(&fence, FENCE_TIMEOUT))?;
    expect_eq(
        "scratch written back to memory",
        gpu.scratch_writeback(USER_SCRATCH).unwrap_or(0),
        0x5C4A_7C40u32,
    )?;
    expect_eq("ring test value", RING_TEST_VALUE, 0xDEAD_BEEFu32)?;
    Ok(())
}

/// `r5xx-ib`: the IB test (IB1 from the ring), then an IB2 started from inside an IB1.
pub fn ib(kernel: &Kernel) -> Result<(), CaseError> {
    let mailbox = attach(kernel)?;
    let mut gpu = init(kernel, mailbox, RingConfig::default())?;
    check("IB test", gpu.ib_test())?;
    let ring_before = gpu.ring().head();
    run_ib2(kernel.dma, &mut gpu, 0x01B1, 0x02B2)?;
    defmt::info!(
        "r5xx: IB1 + IB2 done (ring head {=u32} -> {=u32})",
        ring_before,
        gpu.ring().head()
    );
    Ok(())
}

/// Build IB2 (writes `v2`) called from IB1 (then writes `v1`), submit IB1 + a fence, check both.
fn run_ib2(dma: &IdentityDma, gpu: &mut Gpu, v1: u32, v2: u32) -> Result<(), CaseError> {
    // Both go back to `dma` when this returns (after the fence, or on an error).
    let mem2 = DmaBuffer::allocate(dma, DmaLayout::new(SUBMIT_ALIGN * 4, 64)?)?;
    let mem1 = DmaBuffer::allocate(dma, DmaLayout::new(SUBMIT_ALIGN * 4 * 2, 64)?)?;
    {
        let mut ib2 = check("IB2 buffer", IndirectBuffer::new(&*mem2))?;
        check("IB2 packet", ib2.writer().write_reg_at(USER_SCRATCH + 1, scratch(v2)))?;
        check("IB2 pad", ib2.pad_to(SUBMIT_ALIGN))?;
        let mut ib1 = check("IB1 buffer", IndirectBuffer::new(&*mem1))?;
        check("IB1 -> IB2", ib1.writer().indirect_buffer2(check("IB2", ib2.descriptor())?))?;
        check("IB1 packet", ib1.writer().write_reg_at(USER_SCRATCH, scratch(v1)))?;
        check("IB1 pad", ib1.pad_to(SUBMIT_ALIGN))?;
        let descriptor = check("IB1", ib1.descriptor())?;
        let fence = check(
            "submit IB1",
            gpu.submit(8, |s| {
                s.indirect_buffer(descriptor)?;
                s.fence()
            }),
        )?;
        check("IB fence", gpu.wait(&fence, FENCE_TIMEOUT))?;
    }
    expect_eq("IB2 wrote its scratch", gpu.scratch_writeback(USER_SCRATCH + 1).unwrap_or(0), v2)?;
    expect_eq("IB1 continued after IB2", gpu.scratch_writeback(USER_SCRATCH).unwrap_or(0), v1)?;
    Ok(())
}

/// `r5xx-stress`: 10,000 submissions on a 4 KiB ring (it wraps ~150 times), every fence
/// signalled, in order.
pub fn stress(kernel: &Kernel) -> Result<(), CaseError> {
    const SUBMISSIONS: u32 = 10_000;
    let mailbox = attach(kernel)?;
    let mut gpu = init(kernel, mailbox, RingConfig::with_ring_bytes(4096))?;
    let doorbells = gpu.stats().doorbells;
    let mut last = gpu.last_signalled();
    let mut wraps = 0u32;
    let mut previous_head = gpu.ring().head();
    for i in 0..SUBMISSIONS {
        let fence = check(
            "submit",
            gpu.submit(8, |s| {
                s.writer().write_reg_at(USER_SCRATCH, scratch(i))?;
                s.fence()
            }),
        )?;
        // Wait for every 64th fence: the ring keeps up to ~60 batches in flight and must apply
        // back-pressure on its own in between.
        if i % 64 == 63 || i + 1 == SUBMISSIONS {
            check("fence wait", gpu.wait(&fence, FENCE_TIMEOUT))?;
            let now = gpu.last_signalled();
            expect("fences signal in order", now.wrapping_sub(last) as i32 > 0)?;
            last = now;
        }
        let head = gpu.ring().head();
        if head < previous_head {
            wraps += 1;
        }
        previous_head = head;
    }
    defmt::info!("r5xx: {=u32} submissions, ring wrapped {=u32} times", SUBMISSIONS, wraps);
    expect("the ring wrapped many times", wraps > 100)?;
    expect_eq(
        "last scratch value",
        gpu.scratch_writeback(USER_SCRATCH).unwrap_or(0),
        SUBMISSIONS - 1,
    )?;
    expect_eq(
        "one doorbell per submission",
        gpu.stats().doorbells - doorbells,
        u64::from(SUBMISSIONS),
    )?;
    Ok(())
}

/// `r5xx-pio`: packets pushed through the primary aperture (§5.11) instead of the ring.
pub fn pio(kernel: &Kernel) -> Result<(), CaseError> {
    let mailbox = attach(kernel)?;
    let mut gpu = init(kernel, mailbox, RingConfig::default())?;
    let fence = {
        let mut session = check("PIO mode", gpu.pio())?;
        for i in 0..100u32 {
            check(
                "PIO packet",
                session.packets(|w| w.write_reg_at(USER_SCRATCH, scratch(0x9100 + i))),
            )?;
        }
        let fence = check("PIO fence", session.fence())?;
        defmt::info!("r5xx: {=u64} dwords pushed through the aperture", session.dwords_written());
        check("PIO finish", session.finish())?;
        fence
    };
    check("PIO fence wait", gpu.wait(&fence, FENCE_TIMEOUT))?;
    expect_eq(
        "last PIO scratch",
        gpu.scratch_writeback(USER_SCRATCH).unwrap_or(0),
        0x9100u32 + 99,
    )?;
    // The ring still works after switching back.
    let fence = check("ring fence after PIO", gpu.emit_fence())?;
    check("ring fence wait", gpu.wait(&fence, FENCE_TIMEOUT))?;
    Ok(())
}

static GPU: spin::Mutex<Option<Gpu>> = spin::Mutex::new(None);
static SOFTWARE_IRQS: AtomicU32 = AtomicU32::new(0);

/// Device interrupt handler: the driver acknowledges in GEN_INT_STATUS.
fn on_interrupt(_lines: u32) {
    if let Some(mut guard) = GPU.try_lock()
        && let Some(gpu) = guard.as_mut()
        && let Ok(fired) = gpu.handle_interrupts()
        && fired.software
    {
        SOFTWARE_IRQS.fetch_add(1, Ordering::SeqCst);
    }
}

fn wait_irqs(count: u32) -> Result<(), CaseError> {
    poll_until(&TscClock, IRQ_TIMEOUT, || {
        (SOFTWARE_IRQS.load(Ordering::SeqCst) >= count).then_some(())
    })
    .map_err(|waited| CaseError::TimedOut { what: "software interrupt", waited })
}

/// `r5xx-irq`: the software interrupt, fired by the host and by a ring packet, reaches the
/// driver through MSI-X.
pub fn irq(kernel: &Kernel) -> Result<(), CaseError> {
    let mailbox = attach(kernel)?;
    let mut gpu = init(kernel, mailbox, RingConfig::default())?;
    check("r5xx: interrupt test", gpu.enable_interrupts(Interrupts::NONE.with_software(true)))?;
    *GPU.lock() = Some(gpu);
    mailbox::set_irq_handler(Some(on_interrupt));
    x86_64::instructions::interrupts::enable();

    // Interrupts off before the lock is taken: an interrupt arriving while the main thread
    // holds it would find the driver locked, leave the device unacknowledged and, with the
    // line still asserted, be raised again at once (a storm that starves the main thread).
    // The engines run on their own time, so the ring's interrupt can arrive at any moment.
    let with_gpu = |f: &mut dyn FnMut(&mut Gpu) -> Result<(), CaseError>| -> Result<(), CaseError> {
        x86_64::instructions::interrupts::without_interrupts(|| {
            let mut guard = GPU.lock();
            let gpu = guard.as_mut().ok_or(CaseError::Check("r5xx: driver present"))?;
            f(gpu)
        })
    };
    with_gpu(&mut |gpu| {
        gpu.raise_software_interrupt();
        Ok(())
    })?;
    wait_irqs(1)?;
    expect("host-fired software interrupt handled", true)?;
    with_gpu(&mut |gpu| {
        let fence = check(
            "submit",
            gpu.submit(8, |s| {
                s.software_interrupt()?;
                s.fence()
            }),
        )?;
        check("fence", gpu.wait(&fence, FENCE_TIMEOUT))
    })?;
    wait_irqs(2)?;
    expect_eq("software interrupts handled", SOFTWARE_IRQS.load(Ordering::SeqCst), 2u32)?;
    mailbox::set_irq_handler(None);
    *GPU.lock() = None;
    Ok(())
}

/// `r5xx-faults`: every injected fault produces its typed error, and the driver recovers
/// where recovery is possible.
pub fn faults(kernel: &Kernel) -> Result<(), CaseError> {
    let mailbox = attach(kernel)?;
    let mut gpu = init(kernel, mailbox, RingConfig::with_ring_bytes(4096))?;

    // Hung engine: the CP stops fetching; the fence times out, reset brings it back.
    inject(mailbox, r5xx_faults::CP_STALL)?;
    let fence = check("submit while stalled", gpu.emit_fence())?;
    let stalled = gpu.wait(&fence, STALL_WINDOW);
    defmt::info!("fault cp-stall: {}", Debug2Format(&stalled));
    expect("cp-stall: fence timeout", matches!(stalled, Err(FenceError::Timeout { .. })))?;
    inject(mailbox, 0)?;
    let report = check("cp-stall: reset", gpu.reset())?;
    defmt::info!("fault cp-stall: reset {}", Debug2Format(&report));
    let fence = check("cp-stall: fence after reset", gpu.emit_fence())?;
    check("cp-stall: recovered", gpu.wait(&fence, FENCE_TIMEOUT))?;

    // Slow engine (one packet per 8 engine ticks): not a hang. Every fence arrives within its
    // timeout and nothing is reset.
    let resets = gpu.stats().resets;
    inject(mailbox, r5xx_faults::SLOW | (8 << r5xx_faults::SLOW_TICKS_SHIFT))?;
    for i in 0..20 {
        let fence = check(
            "slow: submit",
            gpu.submit(4, |s| {
                s.writer().write_reg_at(USER_SCRATCH, scratch(i))?;
                s.fence()
            }),
        )?;
        check("slow: fence in time", gpu.wait(&fence, FENCE_TIMEOUT))?;
    }
    inject(mailbox, 0)?;
    expect_eq("slow: no reset", gpu.stats().resets, resets)?;
    defmt::info!("fault slow: 20 fences in time, no reset");

    // Bus fault on a command fetch: hang detected, function-level reset, microcode reloaded.
    inject(mailbox, r5xx_faults::DMA_FAULT)?;
    let fence = check("submit before the DMA fault", gpu.emit_fence())?;
    let faulted = gpu.wait(&fence, STALL_WINDOW);
    defmt::info!("fault dma: {}", Debug2Format(&faulted));
    expect("dma fault: fence timeout", matches!(faulted, Err(FenceError::Timeout { .. })))?;
    mailbox.reset()?; // the platform's function-level reset
    let report = check("dma fault: recover", gpu.recover(FIRMWARE))?;
    defmt::info!("fault dma: recovered {}", Debug2Format(&report));
    let fence = check("dma fault: fence after recovery", gpu.emit_fence())?;
    check("dma fault: recovered", gpu.wait(&fence, FENCE_TIMEOUT))?;
    check("dma fault: IB test after recovery", gpu.ib_test())?;

    // Device gone: every register reads all-ones; the driver reports it, never loops.
    inject(mailbox, r5xx_faults::ALL_ONES)?;
    let fence = gpu.emit_fence();
    let gone = match fence {
        Ok(f) => gpu.wait(&f, FENCE_TIMEOUT).err(),
        Err(e) => {
            defmt::info!("fault all-ones: submit {}", Debug2Format(&e));
            Some(FenceError::DeviceGone(DeviceGone))
        }
    };
    defmt::info!("fault all-ones: {}", Debug2Format(&gone));
    expect("all-ones: DeviceGone", matches!(gone, Some(FenceError::DeviceGone(DeviceGone))))?;
    expect("all-ones: device_gone()", gpu.device_gone())?;
    inject(mailbox, 0)?;
    gpu.shutdown();

    // Corrupted microcode read-back: init refuses with the entry's index, then works.
    mailbox.reset()?;
    inject(mailbox, r5xx_faults::ME_RAM_CORRUPT | (17 << r5xx_faults::ME_RAM_ENTRY_SHIFT))?;
    let bad = R5xx::init(mailbox.io(0), TscClock, kernel.dma, FIRMWARE, RingConfig::default());
    let err = bad.err();
    defmt::info!("fault me-ram-corrupt: {}", Debug2Format(&err));
    expect(
        "me-ram-corrupt: microcode read-back error at entry 17",
        matches!(
            err,
            Some(InitError::Microcode(baregpu_firmware::amd::LoadError::Readback {
                index: 17,
                ..
            }))
        ),
    )?;
    inject(mailbox, 0)?;
    mailbox.reset()?;
    let mut gpu = init(kernel, mailbox, RingConfig::default())?;
    let fence = check("fence after a clean init", gpu.emit_fence())?;
    check("me-ram-corrupt: recovered", gpu.wait(&fence, FENCE_TIMEOUT))?;

    // Microcode the device does not run (R520_cp.bin with its entries reversed) parses, loads
    // and reads back, but the ring test times out; the driver leaves the streams off.
    let mut reversed = [0u8; 2048];
    for (dst, src) in reversed.chunks_exact_mut(8).zip(FIRMWARE.chunks_exact(8).rev()) {
        dst.copy_from_slice(src);
    }
    gpu.shutdown();
    mailbox.reset()?;
    let unknown = R5xx::init(mailbox.io(0), TscClock, kernel.dma, &reversed, RingConfig::default());
    defmt::info!("unknown microcode: {}", Debug2Format(&unknown.as_ref().err()));
    expect(
        "unknown microcode: ring-test timeout",
        matches!(unknown, Err(InitError::RingTest(TestError::Mismatch { .. }))),
    )?;
    mailbox.reset()?;
    let mut gpu = init(kernel, mailbox, RingConfig::default())?;
    let fence = check("fence after the real microcode", gpu.emit_fence())?;
    check("unknown microcode: recovered", gpu.wait(&fence, FENCE_TIMEOUT))?;

    // Malformed firmware never touches the device.
    let requests = mailbox.requests();
    let truncated =
        R5xx::init(mailbox.io(0), TscClock, kernel.dma, &FIRMWARE[..2047], RingConfig::default());
    defmt::info!("truncated firmware: {}", Debug2Format(&truncated.as_ref().err()));
    expect("truncated firmware: typed error", matches!(truncated, Err(InitError::Firmware(_))))?;
    expect_eq("truncated firmware: no register access", mailbox.requests() - requests, 0u64)?;
    Ok(())
}

/// `r5xx-demo`: the README main command's R5xx demo: firmware loaded, an indirect buffer
/// executed, a fence signalled.
pub fn demo(kernel: &Kernel) -> Result<(), CaseError> {
    let mailbox = attach(kernel)?;
    let mut gpu = init(kernel, mailbox, RingConfig::default())?;
    let report = gpu.upload_report();
    defmt::info!(
        "r5xx-demo: R520_cp.bin loaded: {=usize} microengine entries, {=usize} writes, verified by read-back",
        report.entries,
        report.load_writes
    );
    run_ib2(kernel.dma, &mut gpu, 0xC0FF_EE01, 0xC0FF_EE02)?;
    defmt::info!(
        "r5xx-demo: IB1 executed (scratch {=u32:#x}), IB2 executed (scratch {=u32:#x})",
        gpu.scratch_writeback(USER_SCRATCH).unwrap_or(0),
        gpu.scratch_writeback(USER_SCRATCH + 1).unwrap_or(0)
    );
    let fence = check("fence", gpu.emit_fence())?;
    check("fence wait", gpu.wait(&fence, FENCE_TIMEOUT))?;
    defmt::info!(
        "r5xx-demo: fence {=u64} signalled; {}",
        gpu.last_signalled(),
        Debug2Format(&gpu.stats())
    );
    Ok(())
}
