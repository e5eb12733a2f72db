//! `evergreen-*`: the Radeon Evergreen/Cayman driver (`drivers/radeon-evergreen`) against the
//! emulated Cypress or Cayman of the harness (the runner picks the model; the case finds the
//! chip by probing): registers through the mailbox `RegisterIo`, DMA in guest RAM, the real
//! PFP/ME/RLC images, kernels from `baregpu-evergreen-asm`.

use super::{CaseError, attach_reset, check, expect, expect_eq, inject};
use crate::Kernel;
use crate::clock::TscClock;
use crate::dma::IdentityDma;
use crate::mailbox::{self, Mailbox, MailboxIo, virtual_function};
use crate::pci::Platform;
use baregpu_evergreen_asm::{Chip, Node, assemble, examples};
use baregpu_firmware::amd::evergreen::{EvergreenFirmware, EvergreenUcode, Image, LoadError};
use baregpu_gpu::GpuQueue;
use baregpu_hal::dma::{BusAddress, DmaBuffer, DmaLayout, DmaRegion};
use baregpu_hal::time::poll_until;
use baregpu_radeon_evergreen::compute::{self, Dispatch, Kernel as GpuKernel};
use baregpu_radeon_evergreen::pm4::{PredOp, opcode, set_regs};
use baregpu_radeon_evergreen::{
    Evergreen, FENCE_DWORDS, FenceError, InitError, RingConfig, SubmitError, pci,
};
use baregpu_regs::evergreen::Chipset;
use core::sync::atomic::{AtomicU32, Ordering};
use core::time::Duration;
use defmt::Debug2Format;
use gpu_mailbox::{Op, evergreen_faults};

static CYPRESS_PFP: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/CYPRESS_pfp.bin"));
static CYPRESS_ME: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/CYPRESS_me.bin"));
static CYPRESS_RLC: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/CYPRESS_rlc.bin"));
static CAYMAN_PFP: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/CAYMAN_pfp.bin"));
static CAYMAN_ME: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/CAYMAN_me.bin"));
static CAYMAN_RLC: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/CAYMAN_rlc.bin"));

/// The driver; its ring, write-back page and IH ring come from the kernel's DMA pool and go back
/// to it when the driver is dropped (CP halted and IH ring off first).
type Gpu = Evergreen<'static, MailboxIo, TscClock, IdentityDma>;
/// DMA memory from the kernel's pool, given back on drop.
type Buffer = DmaBuffer<'static, IdentityDma>;

/// Fence wait bound (a fence normally signals within a few mailbox round trips).
const FENCE_TIMEOUT: Duration = Duration::from_millis(300);
/// How long a fence that must NOT signal (stalled CP) is waited for.
const STALL_WINDOW: Duration = Duration::from_millis(30);
/// Bound on an interrupt's arrival (model -> QEMU -> MSI-X -> LAPIC).
const IRQ_TIMEOUT: Duration = Duration::from_millis(300);

/// The chip's firmware set, parsed (the images are the unmodified Debian files).
pub(super) fn firmware(chip: Chipset) -> Result<EvergreenFirmware<'static>, CaseError> {
    let (pfp, me, rlc) = match chip {
        Chipset::CYPRESS => (CYPRESS_PFP, CYPRESS_ME, CYPRESS_RLC),
        Chipset::CAYMAN => (CAYMAN_PFP, CAYMAN_ME, CAYMAN_RLC),
        _ => return Err(UNKNOWN_CHIP),
    };
    let ucode = EvergreenUcode::of(chip).ok_or(UNKNOWN_CHIP)?;
    check("firmware parses", EvergreenFirmware::parse(ucode, pfp, me, rlc))
}

/// Mailbox attached, device reset, probed and enabled with the driver's PCI code.
/// A chipset the Evergreen cases have no images, IDs or assembler target for (`Chipset` is
/// non-exhaustive).
const UNKNOWN_CHIP: CaseError = CaseError::Check("a chip the Evergreen cases know");

fn attach(kernel: &Kernel) -> Result<(&'static Mailbox, Chipset), CaseError> {
    let (mailbox, platform) = attach_reset(kernel)?;
    let probed = check("probe", pci::probe(&platform, virtual_function()))?;
    defmt::info!(
        "evergreen: {=str} ({=str}) {=u16:04x}:{=u16:04x}, registers in BAR{=usize} ({=u64} KiB)",
        probed.chip.name(),
        probed.name,
        probed.function.vendor,
        probed.function.device,
        probed.registers.slot,
        probed.registers.size / 1024
    );
    check("enable", pci::enable(&platform, virtual_function()))?;
    Ok((mailbox, probed.chip))
}

fn init(
    kernel: &Kernel,
    mailbox: &'static Mailbox,
    chip: Chipset,
    config: RingConfig,
) -> Result<Gpu, CaseError> {
    let fw = firmware(chip)?;
    // Bring-up tests the interrupt path once: the test's fence raises the line, and the driver
    // consumes the vector by polling the IH ring, so the only handler needed meanwhile is one
    // that lets the mailbox acknowledge the line. Then interrupts are off (opt-in): the cases
    // that poll their fences take none (a stray one would be logged as "interrupt with no
    // handler"); evergreen-irq enables them and installs its handler.
    mailbox::set_irq_handler(Some(bring_up_interrupt_test));
    let gpu = Evergreen::init(mailbox.io(0), TscClock, kernel.dma, chip, &fw, config);
    mailbox::set_irq_handler(None);
    mailbox.request(Op::IrqAck, 0, 0, u32::MAX)?;
    check("init", gpu)
}

static LINES_WHILE_POLLING: AtomicU32 = AtomicU32::new(0);

/// Counts the asserted device lines (a late MSI of an already acknowledged line carries none).
fn count_lines(lines: u32) {
    LINES_WHILE_POLLING.fetch_add(lines.count_ones(), Ordering::SeqCst);
}

/// The handler while bring-up's interrupt test runs: nothing to do (the driver polls the IH
/// ring), the mailbox acknowledges the line.
fn bring_up_interrupt_test(_lines: u32) {}

fn bus(r: &DmaRegion, offset: usize) -> BusAddress {
    BusAddress(r.bus_address().0 + offset as u64)
}

fn alloc(kernel: &Kernel, bytes: usize) -> Result<Buffer, CaseError> {
    let r = DmaBuffer::allocate(kernel.dma, DmaLayout::new(bytes, 256)?)?;
    r.zero();
    Ok(r)
}

/// `evergreen-probe`: the chipset table finds the model's chip and its register BAR.
pub fn probe(kernel: &Kernel) -> Result<(), CaseError> {
    let (mailbox, chip) = attach(kernel)?;
    let platform = Platform { mailbox: Some(mailbox.config()) };
    let probed = check("probe", pci::probe(&platform, virtual_function()))?;
    expect_eq("pci: vendor (ATI)", probed.function.vendor, 0x1002u16)?;
    let device = match chip {
        Chipset::CYPRESS => 0x6898u16,
        Chipset::CAYMAN => 0x6718u16,
        _ => return Err(UNKNOWN_CHIP),
    };
    expect_eq("pci: device matches the chip", probed.function.device, device)?;
    expect("pci: register BAR >= 64 KiB", probed.registers.size >= 64 * 1024)?;
    Ok(())
}

/// `evergreen-firmware`: PFP, ME, RLC uploaded at the write floor and read back; the other
/// chip's images refused before any register access; corrupted read-back reported.
pub fn firmware_case(kernel: &Kernel) -> Result<(), CaseError> {
    let (mailbox, chip) = attach(kernel)?;
    let gpu = init(kernel, mailbox, chip, RingConfig::default())?;
    let u = EvergreenUcode::of(chip).ok_or(UNKNOWN_CHIP)?;
    let r = gpu.upload_report();
    defmt::info!(
        "evergreen: PFP {=usize}, ME {=usize}, RLC {=usize} writes; {=usize} read back",
        r.pfp_writes,
        r.me_writes,
        r.rlc_writes,
        r.reads
    );
    expect_eq("PFP: address + one write per word", r.pfp_writes as u64, 1 + u.pfp_dwords() as u64)?;
    expect_eq("ME: address + one write per word", r.me_writes as u64, 1 + u.me_dwords() as u64)?;
    expect_eq("RLC: address + one write per word", r.rlc_writes as u64, 1 + u.rlc_dwords() as u64)?;
    let requests = mailbox.requests();
    let free = kernel.dma.free_bytes();
    let other = match chip {
        Chipset::CYPRESS => Chipset::CAYMAN,
        Chipset::CAYMAN => Chipset::CYPRESS,
        _ => return Err(UNKNOWN_CHIP),
    };
    let wrong = Evergreen::init(
        mailbox.io(0),
        TscClock,
        kernel.dma,
        chip,
        &firmware(other)?,
        RingConfig::default(),
    );
    expect(
        "other chip's firmware refused",
        matches!(wrong.err(), Some(InitError::WrongChip { .. })),
    )?;
    expect_eq("... before any register access", mailbox.requests(), requests)?;
    expect_eq("... and any allocation", kernel.dma.free_bytes(), free)?;
    mailbox.reset()?;
    let word = 5u32;
    inject(
        mailbox,
        evergreen_faults::UCODE_CORRUPT | (word << evergreen_faults::UCODE_WORD_SHIFT),
    )?;
    let bad = Evergreen::init(
        mailbox.io(0),
        TscClock,
        kernel.dma,
        chip,
        &firmware(chip)?,
        RingConfig::default(),
    );
    defmt::info!("corrupted read-back: {}", Debug2Format(&bad.as_ref().err()));
    expect(
        "corrupted read-back names the PFP word",
        matches!(
            bad.err(),
            Some(InitError::Firmware(LoadError::Readback { image: Image::Pfp, index: 5, .. }))
        ),
    )?;
    expect_eq(
        "the failed init gave its ring, write-back and IH ring back",
        kernel.dma.free_bytes(),
        free,
    )?;
    inject(mailbox, 0)?;
    Ok(())
}

/// `evergreen-ring`: ring test, IB test, 2,000 fenced submissions on a 4 KiB ring (it wraps),
/// one doorbell each.
pub fn ring(kernel: &Kernel) -> Result<(), CaseError> {
    let (mailbox, chip) = attach(kernel)?;
    let free = kernel.dma.free_bytes();
    let mut gpu = init(kernel, mailbox, chip, RingConfig::with_ring_bytes(4096))?;
    check("ring test", gpu.ring_test())?;
    let in_use = kernel.dma.free_bytes();
    check("IB test", gpu.ib_test())?;
    expect_eq("the IB test's buffer went back", kernel.dma.free_bytes(), in_use)?;
    let doorbells = gpu.stats().doorbells;
    // Count device interrupt lines while the fences run: polled fences must raise none.
    LINES_WHILE_POLLING.store(0, Ordering::SeqCst);
    mailbox::set_irq_handler(Some(count_lines));
    let mut last = None;
    for i in 0..2000u32 {
        let f = check(
            "submit",
            gpu.submit(3 + FENCE_DWORDS, |s| {
                s.set_scratch(1, i)?;
                s.fence()
            }),
        )?;
        last = Some(f);
    }
    let last = last.ok_or(CaseError::Check("fences"))?;
    check("last fence", gpu.wait(&last, FENCE_TIMEOUT))?;
    expect_eq("every fence signalled in order", gpu.last_signalled(), last.seq())?;
    expect_eq("one doorbell per batch", gpu.stats().doorbells - doorbells, 2000u64)?;
    mailbox::set_irq_handler(None);
    // Interrupts are opt-in: 2000 polled fences raised no interrupt line.
    let lines = LINES_WHILE_POLLING.load(Ordering::SeqCst) + mailbox.irq_lines();
    expect_eq("polled fences raise no interrupt", lines, 0u32)?;
    expect_eq("last scratch write", check("scratch", gpu.scratch(1))?, 1999u32)?;
    defmt::info!(
        "evergreen: 2000 batches; ring reads that saw the CP part-way: {=u64} of {=u64}",
        gpu.ring().partial_reads(),
        gpu.ring().rptr_reads()
    );
    gpu.shutdown();
    expect_eq(
        "shutdown gave the ring, write-back and IH ring back",
        kernel.dma.free_bytes(),
        free,
    )?;
    Ok(())
}

static GPU: spin::Mutex<Option<Gpu>> = spin::Mutex::new(None);
static EOP_IRQS: AtomicU32 = AtomicU32::new(0);
static MSIX_CALLS: AtomicU32 = AtomicU32::new(0);

/// Device interrupt (MSI-X only: nothing else calls it): drain the IH ring, count EOP vectors.
fn on_interrupt(lines: u32) {
    if lines != 0 {
        MSIX_CALLS.fetch_add(1, Ordering::SeqCst);
    }
    if let Some(mut guard) = GPU.try_lock()
        && let Some(gpu) = guard.as_mut()
        && let Ok(report) = gpu.handle_interrupts()
    {
        EOP_IRQS.fetch_add(report.eop as u32, Ordering::SeqCst);
    }
}

/// `evergreen-irq`: EOP interrupts of 10 fences arrive through the IH ring as MSI-X.
///
/// Only the MSI-X handler consumes the IH ring: the case waits for each fence's vector with
/// interrupts on and never polls the ring. (It used to wait for the fences with interrupts off
/// and then drain the ring by polling: when QEMU delivered the one MSI-X of the latched line
/// after that drain, no vector had come by interrupt and the case failed by chance.)
pub fn irq(kernel: &Kernel) -> Result<(), CaseError> {
    let (mailbox, chip) = attach(kernel)?;
    let mut gpu = init(kernel, mailbox, chip, RingConfig::default())?;
    // Enabling runs the interrupt test, which consumes its vector by polling: with interrupts
    // off, so no handler acknowledges the line while the vector is still unread (each such
    // acknowledgement latches the asserted line again: one MSI-X after another). Then clear
    // the latch it left, so the fences below signal afresh, and install the handler before
    // interrupts come back on: a late MSI-X of that latch finds no line and an empty IH ring.
    x86_64::instructions::interrupts::without_interrupts(|| {
        check("enable interrupts", gpu.enable_interrupts())?;
        mailbox.request(Op::IrqAck, 0, 0, u32::MAX)?;
        EOP_IRQS.store(0, Ordering::SeqCst);
        MSIX_CALLS.store(0, Ordering::SeqCst);
        *GPU.lock() = Some(gpu);
        mailbox::set_irq_handler(Some(on_interrupt));
        Ok::<_, CaseError>(())
    })?;
    x86_64::instructions::interrupts::enable();
    for i in 1..=10u32 {
        let fence = x86_64::instructions::interrupts::without_interrupts(|| {
            let mut guard = GPU.lock();
            let gpu = guard.as_mut().ok_or(CaseError::Check("driver present"))?;
            check("fence", gpu.fence())
        })?;
        // Interrupts on, the driver unlocked: the handler is the only one consuming vectors.
        let arrived = poll_until(&TscClock, IRQ_TIMEOUT, || {
            (EOP_IRQS.load(Ordering::SeqCst) >= i).then_some(())
        });
        check("EOP interrupt", arrived)?;
        // INT_SEL 2 (Evergreen §9.6.2): the fence write is confirmed before the interrupt.
        let signalled = x86_64::instructions::interrupts::without_interrupts(|| {
            GPU.lock().as_ref().is_some_and(|gpu| gpu.signalled(&fence))
        });
        expect("a fence has signalled when its EOP interrupt arrives", signalled)?;
    }
    expect_eq("EOP vectors handled", EOP_IRQS.load(Ordering::SeqCst), 10u32)?;
    let calls = MSIX_CALLS.load(Ordering::SeqCst);
    defmt::info!("evergreen: {=u32} MSI-X interrupts carried the 10 EOP vectors", calls);
    expect("EOP vectors arrived by MSI-X", calls > 0)?;
    mailbox::set_irq_handler(None);
    *GPU.lock() = None;
    Ok(())
}

/// `evergreen-cp-dma`: CP DMA fill and copy, checked against the CPU word by word.
pub fn cp_dma(kernel: &Kernel) -> Result<(), CaseError> {
    let (mailbox, chip) = attach(kernel)?;
    // Allocated before the driver, so they are freed after it (CP halted) on every return.
    let src = alloc(kernel, 16 * 1024)?;
    let dst = alloc(kernel, 16 * 1024)?;
    let mut gpu = init(kernel, mailbox, chip, RingConfig::default())?;
    for i in 0..4096usize {
        src.write_u32(i * 4, (i as u32).wrapping_mul(0x9E37_79B9) ^ 0xA5A5)?;
    }
    let f = check(
        "submit",
        gpu.submit(12 + FENCE_DWORDS, |s| {
            s.cp_dma_fill(0xFEED_F00D, bus(&dst, 0), 8 * 1024)?;
            s.cp_dma_copy(bus(&src, 0), bus(&dst, 8 * 1024), 8 * 1024)?;
            s.fence()
        }),
    )?;
    check("fence", gpu.wait(&f, FENCE_TIMEOUT))?;
    for i in 0..2048usize {
        if dst.read_u32(i * 4)? != 0xFEED_F00D {
            return expect_eq("fill word", dst.read_u32(i * 4)?, 0xFEED_F00Du32);
        }
        let want = src.read_u32(i * 4)?;
        if dst.read_u32(8 * 1024 + i * 4)? != want {
            return expect_eq("copied word", dst.read_u32(8 * 1024 + i * 4)?, want);
        }
    }
    expect("8 KiB filled and 8 KiB copied, equal to the CPU", true)?;
    Ok(())
}

/// `evergreen-predication`: COND_EXEC skips and runs, SET_PREDICATION skips predicated packets
/// until cleared, WAIT_REG_MEM holds later packets until memory matches.
pub fn predication(kernel: &Kernel) -> Result<(), CaseError> {
    let (mailbox, chip) = attach(kernel)?;
    // Freed after the driver (CP halted): a held WAIT_REG_MEM polls it until then.
    let mem = alloc(kernel, 256)?;
    let mut gpu = init(kernel, mailbox, chip, RingConfig::default())?;
    for (flag, value, want) in [(0u32, 0x1111u32, 0u32), (1, 0x2222, 0x2222)] {
        mem.write_u32(0, flag)?;
        let f = check(
            "COND_EXEC submit",
            gpu.submit(16 + FENCE_DWORDS, |s| {
                s.set_scratch(4, 0)?;
                s.cond_exec(bus(&mem, 0), 8, |inner| set_regs(inner, 0x8510, &[value], false))?;
                s.fence()
            }),
        )?;
        check("COND_EXEC fence", gpu.wait(&f, FENCE_TIMEOUT))?;
        expect_eq("COND_EXEC result", check("scratch", gpu.scratch(4))?, want)?;
    }
    // ZPASS counts of zero at mem+16: "not visible", predicated packets are skipped.
    let f = check(
        "SET_PREDICATION submit",
        gpu.submit(20 + FENCE_DWORDS, |s| {
            s.set_scratch(5, 1)?;
            s.set_predication(bus(&mem, 16), PredOp::Zpass, true)?;
            s.predicated_packet(opcode::SET_CONFIG_REG, &[(0x8514 - 0x8000) / 4, 7])?;
            s.set_predication(bus(&mem, 16), PredOp::Clear, true)?;
            s.predicated_packet(opcode::SET_CONFIG_REG, &[(0x8518 - 0x8000) / 4, 9])?;
            s.fence()
        }),
    )?;
    check("SET_PREDICATION fence", gpu.wait(&f, FENCE_TIMEOUT))?;
    expect_eq("predicated off: skipped", check("scratch", gpu.scratch(5))?, 1u32)?;
    expect_eq("after clear: executed", check("scratch", gpu.scratch(6))?, 9u32)?;
    mem.write_u32(64, 0)?;
    let f = check(
        "WAIT_REG_MEM submit",
        gpu.submit(10 + FENCE_DWORDS, |s| {
            s.wait_mem(bus(&mem, 64), baregpu_radeon_evergreen::pm4::Compare::Equal, 0x55, 0xFF)?;
            s.set_scratch(3, 0xABCD)?;
            s.fence()
        }),
    )?;
    let held = gpu.wait(&f, STALL_WINDOW);
    expect("WAIT_REG_MEM holds the fence", matches!(held, Err(FenceError::Timeout { .. })))?;
    mem.write_u32(64, 0x1255)?;
    check("WAIT_REG_MEM released", gpu.wait(&f, FENCE_TIMEOUT))?;
    expect_eq("packet after the wait ran", check("scratch", gpu.scratch(3))?, 0xABCDu32)?;
    Ok(())
}

/// `evergreen-faults`: hung CP (timeout, ring full, soft reset), slow CP (no reset), device
/// gone (typed), function-level reset (firmware reloaded by recover).
pub fn faults(kernel: &Kernel) -> Result<(), CaseError> {
    let (mailbox, chip) = attach(kernel)?;
    let mut gpu = init(kernel, mailbox, chip, RingConfig::with_ring_bytes(4096))?;
    inject(mailbox, evergreen_faults::CP_STALL)?;
    let f = check("submit while stalled", gpu.fence())?;
    let stalled = gpu.wait(&f, STALL_WINDOW);
    defmt::info!("fault cp-stall: {}", Debug2Format(&stalled));
    expect(
        "cp-stall: fence timeout, no progress",
        matches!(stalled, Err(FenceError::Timeout { progressed: false, .. })),
    )?;
    inject(mailbox, 0)?;
    check("cp-stall: soft reset", gpu.reset())?;
    let f = check("fence after reset", gpu.fence())?;
    check("cp-stall: recovered", gpu.wait(&f, FENCE_TIMEOUT))?;

    let resets = gpu.stats().resets;
    inject(mailbox, evergreen_faults::SLOW | (8 << evergreen_faults::SLOW_TICKS_SHIFT))?;
    for i in 0..20 {
        let f = check(
            "slow: submit",
            gpu.submit(3 + FENCE_DWORDS, |s| {
                s.set_scratch(2, i)?;
                s.fence()
            }),
        )?;
        check("slow: fence in time", gpu.wait(&f, FENCE_TIMEOUT))?;
    }
    inject(mailbox, 0)?;
    expect_eq("slow: no reset", gpu.stats().resets, resets)?;

    inject(mailbox, evergreen_faults::ALL_ONES)?;
    let gone = gpu.fence();
    expect("all-ones: DeviceGone", matches!(gone, Err(SubmitError::DeviceGone(_))))?;
    inject(mailbox, 0)?;

    mailbox.reset()?; // function-level reset: microcode lost
    let platform = Platform { mailbox: Some(mailbox.config()) };
    check("re-enable", pci::enable(&platform, virtual_function()))?;
    let report = check("recover", gpu.recover(&firmware(chip)?))?;
    expect("recover reloaded the firmware", report.reloaded_firmware)?;
    let f = check("fence after recovery", gpu.fence())?;
    check("recovered", gpu.wait(&f, FENCE_TIMEOUT))?;
    Ok(())
}

fn asm_chip(chip: Chipset) -> Result<Chip, CaseError> {
    match chip {
        Chipset::CYPRESS => Ok(Chip::Evergreen),
        Chipset::CAYMAN => Ok(Chip::Cayman),
        _ => Err(UNKNOWN_CHIP),
    }
}

fn load(kernel: &Kernel, chip: Chipset, source: &str) -> Result<(Buffer, GpuKernel), CaseError> {
    let mut nodes = [Node::EMPTY; 64];
    let mut words = [0u32; 256];
    let info = check("assemble", assemble(source, asm_chip(chip)?, &mut nodes, &mut words))?;
    let region = alloc(kernel, 4096)?;
    let k = check(
        "load kernel",
        compute::load_kernel(&region, &words[..info.words], info.num_gprs, info.stack_depth),
    )?;
    Ok((region, k))
}

const N: usize = 1024;

fn input(i: usize, which: u32) -> f32 {
    if which == 0 { i as f32 * 0.5 + 1.25 } else { 1000.0 - i as f32 * 3.0 }
}

/// Run VECTOR_ADD and SAXPY, compare with the CPU; returns (checksums, first elements).
fn run_kernels(
    kernel: &Kernel,
    gpu: &mut Gpu,
    chip: Chipset,
) -> Result<([f32; 2], [[f32; 4]; 2]), CaseError> {
    let mem = alloc(kernel, 3 * N * 4 + 4096)?;
    for i in 0..N {
        mem.write_u32(i * 4, input(i, 0).to_bits())?;
        mem.write_u32((N + i) * 4, input(i, 1).to_bits())?;
    }
    let cb = alloc(kernel, 256)?;
    let (_code, add) = load(kernel, chip, examples::VECTOR_ADD)?;
    let (a, b, c) = (0u32, (N * 4) as u32, (2 * N * 4) as u32);
    let d = Dispatch {
        kernel: add,
        groups: [(N / 64) as u32, 1, 1],
        local: [64, 1, 1],
        args: &[a, b, c],
        constants: &cb,
        global: &mem,
        lds_dwords: 0,
        indirect: None,
    };
    let f = check("vector add dispatch", gpu.dispatch(&d))?;
    check("vector add fence", gpu.wait(&f, FENCE_TIMEOUT))?;
    let add_result =
        compare(&mem, c as usize, "vector add element", |i| input(i, 0) + input(i, 1))?;
    expect("vector add: 1024 elements equal to the CPU", true)?;
    let (_code, saxpy) = load(kernel, chip, examples::SAXPY)?;
    let alpha = 2.5f32;
    let d = Dispatch {
        kernel: saxpy,
        args: &[alpha.to_bits(), a, b],
        local: [128, 1, 1],
        groups: [(N / 128) as u32, 1, 1],
        ..d
    };
    let f = check("saxpy dispatch", gpu.dispatch(&d))?;
    check("saxpy fence", gpu.wait(&f, FENCE_TIMEOUT))?;
    let saxpy_result =
        compare(&mem, b as usize, "saxpy element", |i| alpha * input(i, 0) + input(i, 1))?;
    expect("saxpy: 1024 elements equal to the CPU", true)?;
    Ok(([add_result.0, saxpy_result.0], [add_result.1, saxpy_result.1]))
}

/// Compare the `N` f32 results at byte `offset` of `mem` with the CPU's `want(i)`, bit for
/// bit; returns their sum and the first four.
fn compare(
    mem: &DmaRegion,
    offset: usize,
    what: &'static str,
    want: impl Fn(usize) -> f32,
) -> Result<(f32, [f32; 4]), CaseError> {
    let mut sum = 0f32;
    let mut first = [0f32; 4];
    for i in 0..N {
        let got = f32::from_bits(mem.read_u32(offset + i * 4)?);
        if got.to_bits() != want(i).to_bits() {
            expect_eq(what, got.to_bits(), want(i).to_bits())?;
        }
        sum += got;
        if let Some(slot) = first.get_mut(i) {
            *slot = got;
        }
    }
    Ok((sum, first))
}

/// `evergreen-compute`: VECTOR_ADD and SAXPY compared element by element with the CPU.
pub fn compute(kernel: &Kernel) -> Result<(), CaseError> {
    let (mailbox, chip) = attach(kernel)?;
    let mut gpu = init(kernel, mailbox, chip, RingConfig::default())?;
    run_kernels(kernel, &mut gpu, chip)?;
    Ok(())
}

/// `evergreen-demo`: vector add and SAXPY on the emulated chip, checksums and first elements.
pub fn demo(kernel: &Kernel) -> Result<(), CaseError> {
    let (mailbox, chip) = attach(kernel)?;
    let mut gpu = init(kernel, mailbox, chip, RingConfig::default())?;
    let r = gpu.upload_report();
    defmt::info!(
        "evergreen-demo: {=str}: PFP/ME/RLC loaded ({=usize} + {=usize} + {=usize} writes), ring and IB tests passed",
        chip.name(),
        r.pfp_writes,
        r.me_writes,
        r.rlc_writes
    );
    let (sums, firsts) = run_kernels(kernel, &mut gpu, chip)?;
    defmt::info!(
        "evergreen-demo: {=str} vector add: checksum {=f32}, c[0..4] = {=f32} {=f32} {=f32} {=f32}",
        chip.name(),
        sums[0],
        firsts[0][0],
        firsts[0][1],
        firsts[0][2],
        firsts[0][3]
    );
    defmt::info!(
        "evergreen-demo: {=str} SAXPY (a = 2.5): checksum {=f32}, y[0..4] = {=f32} {=f32} {=f32} {=f32}",
        chip.name(),
        sums[1],
        firsts[1][0],
        firsts[1][1],
        firsts[1][2],
        firsts[1][3]
    );
    Ok(())
}
