//! `nvidia-gt215-*`: the nVidia Tesla driver (`drivers/nvidia-tesla`) against the emulated
//! GT215 (`qemu-tests/models/gt215`): registers through the mailbox `RegisterIo`, pushbuffers,
//! IB rings and fence memory in guest RAM, falcon programs from `baregpu-falcon-asm`.

use super::{CaseError, attach_reset, check, expect, expect_eq, inject};
use crate::Kernel;
use crate::clock::TscClock;
use crate::dma::IdentityDma;
use crate::mailbox::{Mailbox, MailboxIo, virtual_function};
use baregpu_falcon_asm::programs::{self, methods};
use baregpu_hal::RegisterIoExt;
use baregpu_hal::dma::{DmaBuffer, DmaLayout, DmaRegion};
use baregpu_hal::io::BlockIo;
use baregpu_hal::register::InstanceArray;
use baregpu_hal::time::poll_until;
use baregpu_nvidia_tesla::firmware::falcon::FalconImage;
use baregpu_nvidia_tesla::gpu::{FenceError, FenceStatus, GpuQueue as _};
use baregpu_nvidia_tesla::queue::{FENCE_WORDS, UserIo};
use baregpu_nvidia_tesla::regs::Chipset;
use baregpu_nvidia_tesla::regs::falcon::{Pcopy0, Pdaemon};
use baregpu_nvidia_tesla::regs::pfifo::cache1_dma_state_g80_until_gf100::ErrorCode as PusherErrorKind;
use baregpu_nvidia_tesla::regs::pfifo_user::{DMA_GET, DMA_PUT, IB_PUT, REF, UserG80};
use baregpu_nvidia_tesla::ring::nvidia::{
    DmaRing, DmaSink, IbSubmitError, PushbufferError, PushbufferWriter,
};
use baregpu_nvidia_tesla::ring::ring::{CommandRing, RegisterRptr};
use baregpu_nvidia_tesla::ring::stream::CommandSink;
use baregpu_nvidia_tesla::{
    ChannelId, DmaPushbuffer, Engine, FalconError, FencePoint, FifoError, Identity, InitError,
    Missing, ProbeError, Queue, QueueConfig, SubmitError, Tesla, TeslaConfig, pci,
};
use baregpu_regs::nvidia::packets::{IB_ENTRY, ib_entry};
use baregpu_regs::packet::put_address;
use baregpu_regs::pushbuffer::PusherMode;
use core::cell::RefCell;
use core::time::Duration;
use defmt::Debug2Format;
use gpu_mailbox::gt215_faults;

type Gpu = Tesla<MailboxIo, TscClock>;
type Buffer = DmaBuffer<'static, IdentityDma>;
type GpuQueue<'q> = Queue<'q, MailboxIo, TscClock>;

/// A batch of fences or a falcon program normally finishes within a few thousand mailbox
/// round trips; the bound absorbs a loaded host.
const WAIT: Duration = Duration::from_secs(10);
/// Fences the IB case submits, six methods each (REF_CNT, a four-method semaphore release,
/// NOTIFY_INTR): 30,000 methods through a 4 KiB main pushbuffer.
const IB_FENCES: usize = 5000;
/// `nvidia-gt215-ib`'s IB ring: 8 entries (7 usable), fewer than the fences its 4 KiB main
/// pushbuffer holds.
const IB_RING_BYTES: usize = 64;
/// The other cases' IB rings: 512 entries.
const IB_RING_BYTES_DEFAULT: usize = 4096;
/// Methods the DMA-mode case writes, and its pushbuffer (1,024 words: 20,000 words wrap it
/// about twenty times).
const DMA_METHODS: u32 = 10_000;
const DMA_PUSHBUFFER_BYTES: usize = 4096;
/// A command word with bits 17:16 = 3 and nothing else: the long non-increasing methods form,
/// which exists in IB mode only (§2.8.3 command table), so in DMA mode no form matches it.
const LONG_NON_INCREASING: u32 = 3 << 16;
/// Words the DMEM checksum sums.
const CHECKSUM_WORDS: usize = 64;
/// The copy case's buffer.
const COPY_WORDS: usize = 1024;

fn alloc(kernel: &Kernel, bytes: usize, align: usize) -> Result<Buffer, CaseError> {
    let r = DmaBuffer::allocate(kernel.dma, DmaLayout::new(bytes, align)?)?;
    r.zero();
    Ok(r)
}

/// Mailbox attached, device reset, the GT215's PCI function probed by the driver's table
/// (10de:0ca3, BAR0 and the BAR1/BAR3 apertures) and enabled.
fn attach(kernel: &Kernel) -> Result<(&'static Mailbox, MailboxIo), CaseError> {
    let (mailbox, platform) = attach_reset(kernel)?;
    let probed = check("pci probe", pci::probe(&platform, virtual_function()))?;
    defmt::info!(
        "nvidia: {=str} {=u16:04x}:{=u16:04x}, registers in BAR{=usize}, VRAM aperture {}, RAMIN aperture {}",
        probed.gpu.name,
        probed.gpu.function.vendor,
        probed.gpu.function.device,
        probed.gpu.registers.slot as usize,
        Debug2Format(&probed.vram_aperture),
        Debug2Format(&probed.ramin_aperture)
    );
    expect_eq("pci: vendor", probed.gpu.function.vendor, 0x10deu16)?;
    expect_eq("pci: device (GeForce GT 240)", probed.gpu.function.device, 0x0ca3u16)?;
    expect("pci: BAR1 VRAM and BAR3 RAMIN apertures", {
        probed.vram_aperture.is_some() && probed.ramin_aperture.is_some()
    })?;
    check("pci enable", pci::enable(&platform, virtual_function()))?;
    Ok((mailbox, mailbox.io(probed.gpu.registers.slot as u32)))
}

fn bring_up(io: MailboxIo) -> Result<Gpu, CaseError> {
    // 1 MiB of the GPU's VRAM at 1 MiB for the channel structures.
    check("init", Tesla::init(io, TscClock, TeslaConfig::new(1 << 20, 1 << 20)))
}

/// The DMA memory of one queue: a 4 KiB main pushbuffer (so thousands of fences wrap it), a
/// 512-entry IB ring and the fence memory.
struct QueueMemory {
    main: Buffer,
    ib: Buffer,
    fences: Buffer,
}

impl QueueMemory {
    /// A 4 KiB main pushbuffer and a 512-entry IB ring.
    fn new(kernel: &Kernel) -> Result<Self, CaseError> {
        Self::with_ib_bytes(kernel, IB_RING_BYTES_DEFAULT)
    }

    fn with_ib_bytes(kernel: &Kernel, ib_bytes: usize) -> Result<Self, CaseError> {
        Ok(QueueMemory {
            main: alloc(kernel, 4096, 4096)?,
            ib: alloc(kernel, ib_bytes, 4096)?,
            fences: alloc(kernel, 32, 16)?,
        })
    }

    fn queue<'q>(&'q self, gpu: &'q RefCell<Gpu>, channel: u8) -> Result<GpuQueue<'q>, CaseError> {
        let id = check("channel id", ChannelId::new(channel))?;
        let config = QueueConfig::default();
        check("queue", Queue::new(gpu, id, &self.main, &self.ib, &self.fences, config))
    }
}

/// A falcon image of `image`'s code with DMEM `data`: code in whole 0x100-byte pages
/// (§2.10.7), the last padded with zeros in `code`.
fn falcon_image<'a>(
    image: &programs::Image,
    data: &'a [u8],
    code: &'a mut [u8; 0x400],
) -> Result<FalconImage<'a>, CaseError> {
    let len = image.code().len();
    code[..len].copy_from_slice(image.code());
    let pages = len.div_ceil(0x100) * 0x100;
    check("falcon image", FalconImage::new(&code[..pages], 0, data, image.entry))
}

/// `nvidia-gt215-probe`: the PCI IDs and apertures, `PMC.BOOT_0` decoded as GT215 and logged;
/// the refusals the decode gives other NV50-family chips; with `all-ones` injected the probe
/// and `init` say `DeviceGone`.
pub fn probe(kernel: &Kernel) -> Result<(), CaseError> {
    let (mailbox, io) = attach(kernel)?;
    let gpu = bring_up(io)?;
    let id = gpu.identity();
    defmt::info!(
        "nvidia: PMC.BOOT_0 {=u32:#010x}: chipset {} (GPU id {=u32:#x})",
        id.boot0,
        Debug2Format(&id.chipset),
        id.chipset.id().unwrap_or(0)
    );
    expect("BOOT_0 decodes as GT215", id.chipset == Chipset::GT215)?;
    check("alive", gpu.check_alive())?;
    // The other NV50-family chips are identified and refused naming what they lack.
    for (gpu_id, missing) in
        [(0x84, Missing::Falcon), (0x98, Missing::CopyEngineAndDaemon), (0xaf, Missing::Vram)]
    {
        let boot0 = baregpu_nvidia_tesla::regs::pmc::BOOT_0::CHIPSET.set(0, gpu_id);
        match Identity::decode(boot0) {
            Err(ProbeError::Unsupported { chipset, missing: m }) if m == missing => {
                defmt::info!("nvidia: {} refused: {}", Debug2Format(&chipset), Debug2Format(&m))
            }
            other => {
                defmt::error!("FAILED: id {=u32:#x}: {}", gpu_id, Debug2Format(&other));
                return Err(CaseError::Check("an unsupported NV50 chip refused"));
            }
        }
    }
    drop(gpu);
    inject(mailbox, gt215_faults::ALL_ONES)?;
    match Tesla::init(io, TscClock, TeslaConfig::new(1 << 20, 1 << 20)) {
        Err(InitError::DeviceGone(_)) => defmt::info!("nvidia: all-ones: init says DeviceGone"),
        Err(e) => {
            defmt::error!("FAILED: all-ones init: {}", Debug2Format(&e));
            return Err(CaseError::Check("all-ones is DeviceGone"));
        }
        Ok(_) => return Err(CaseError::Check("all-ones is refused")),
    }
    inject(mailbox, 0)
}

/// `nvidia-gt215-ib`: thousands of fences on an IB-mode channel (30,000 methods through a
/// 4 KiB main pushbuffer that wraps, an 8-entry IB ring), every fence signalled in order,
/// `REF_CNT` equal to the last, one `IB_PUT` write per batch. Back-pressure first: with the
/// pusher stalled (`cp-stall`) the IB ring fills, the next batch waits for `IB_GET` (counted:
/// exactly one wait) and times out, discarded; the stall lifted, the fences go on.
pub fn ib(kernel: &Kernel) -> Result<(), CaseError> {
    let (mailbox, io) = attach(kernel)?;
    let gpu = RefCell::new(bring_up(io)?);
    let mem = QueueMemory::with_ib_bytes(kernel, IB_RING_BYTES)?;
    let mut a = mem.queue(&gpu, 1)?;
    let mut first = None;
    let mut last = None;
    // Back-pressure: with the pusher stalled, IB_GET stands still; the batches the IB ring
    // holds go in, the next one waits for IB_GET (bounded) and fails with nothing written.
    inject(mailbox, gt215_faults::CP_STALL)?;
    let mut accepted = 0;
    let stalled = loop {
        match a.submit_fence() {
            Ok(f) => {
                first.get_or_insert(f);
                last = Some(f);
                accepted += 1;
            }
            Err(e) => break e,
        }
        expect("the IB ring fills", accepted < IB_RING_BYTES / 8)?;
    };
    expect(
        "the full IB ring times out",
        matches!(stalled, SubmitError::Ib(IbSubmitError::TimedOut(_))),
    )?;
    expect_eq("one batch waited for IB_GET", a.ib_waits(), 1u64)?;
    inject(mailbox, 0)?;
    defmt::info!("nvidia: {=usize} batches filled the stalled IB ring, the next waited", accepted);
    for _ in accepted..IB_FENCES {
        let f = check("submit fence", a.submit_fence())?;
        first.get_or_insert(f);
        last = Some(f);
    }
    let (first, last) =
        (first.ok_or(CaseError::Check("fences"))?, last.ok_or(CaseError::Check("fences"))?);
    check("last fence", a.wait(&last, WAIT))?;
    expect("first fence signalled", a.fence_status(&first) == FenceStatus::Signalled)?;
    expect_eq("REF_CNT is the last fence", u64::from(a.ref_count()), last.seq())?;
    let stats = a.stats();
    defmt::info!(
        "nvidia: {=usize} fences on channel 1, REF_CNT {=u32}, {}",
        IB_FENCES,
        a.ref_count(),
        Debug2Format(&stats)
    );
    expect_eq("one IB_PUT per batch", stats.doorbells, IB_FENCES as u64 + 1)?;
    expect_eq("the timed-out batch discarded", stats.discarded, 1u64)?;
    // The IB ring holds fewer batches than the main pushbuffer: the flood waits too.
    defmt::info!("nvidia: {=u64} batches waited for IB_GET", a.ib_waits());

    Ok(())
}

/// `nvidia-gt215-falcon`: the mailbox echo uploaded, booted and answered on PDAEMON and PCOPY
/// (the upload's MMIO writes counted), then the DMEM checksum on PDAEMON compared with the
/// CPU's.
pub fn falcon(kernel: &Kernel) -> Result<(), CaseError> {
    let (_mailbox, io) = attach(kernel)?;
    let gpu = bring_up(io)?;
    let mut code = [0u8; 0x400];
    let echo = programs::mailbox_echo();
    let fw = falcon_image(&echo, echo.data(), &mut code)?;
    let daemon = check("PDAEMON", gpu.falcon::<Pdaemon>())?;
    check("PDAEMON enable", daemon.enable())?;
    check("PDAEMON boot", daemon.boot(&fw))?;
    daemon.write_mailbox(41);
    check("PDAEMON halts", daemon.wait_halted(WAIT))?;
    let answer = check("PDAEMON mailbox", daemon.read_mailbox())?;
    defmt::info!("nvidia: PDAEMON mailbox echo 41 -> {=u32}", answer);
    expect_eq("PDAEMON echo", answer, 42u32)?;

    let copy = check("PCOPY", gpu.falcon::<Pcopy0>())?;
    check("PCOPY enable", copy.enable())?;
    check("PCOPY interrupts", copy.enable_interrupts())?;
    let report = check("PCOPY boot", copy.boot(&fw))?;
    defmt::info!("nvidia: PCOPY upload: {} MMIO writes", report.load_writes);
    copy.write_mailbox(99);
    check("PCOPY halts", copy.wait_halted(WAIT))?;
    let answer = check("PCOPY mailbox", copy.read_mailbox())?;
    defmt::info!("nvidia: PCOPY mailbox echo 99 -> {=u32}", answer);
    expect_eq("PCOPY echo", answer, 100u32)?;
    expect("PCOPY's exit interrupt", check("PCOPY irq", copy.handle_interrupts())?.exit)?;

    // The DMEM checksum on PDAEMON: DMEM filled by the upload, the sum compared with the CPU's.
    let mut words = [0u32; CHECKSUM_WORDS];
    for (i, w) in words.iter_mut().enumerate() {
        *w = (i as u32 + 1).wrapping_mul(0x0101_0101) ^ 0x8000_0001;
    }
    let mut dmem = [0u8; CHECKSUM_WORDS * 4];
    for (bytes, w) in dmem.chunks_exact_mut(4).zip(&words) {
        bytes.copy_from_slice(&w.to_le_bytes());
    }
    let sum = programs::dmem_checksum();
    let mut code = [0u8; 0x400];
    let fw = falcon_image(&sum, &dmem, &mut code)?;
    // The program reads its word count from SCRATCH0 as it starts: written before the boot.
    daemon.write_mailbox(CHECKSUM_WORDS as u32);
    check("PDAEMON checksum boot", daemon.boot(&fw))?;
    check("PDAEMON checksum halts", daemon.wait_halted(WAIT))?;
    let got = check("PDAEMON checksum", daemon.read_mailbox())?;
    let cpu = words.iter().fold(0u32, |acc, w| acc.wrapping_add(*w));
    defmt::info!("nvidia: PDAEMON DMEM checksum {=u32:#010x}, CPU {=u32:#010x}", got, cpu);
    expect_eq("DMEM checksum equals the CPU's", got, cpu)?;
    Ok(())
}

/// `nvidia-gt215-copy`: the copy-engine firmware on PCOPY, given a copy through an IB-mode
/// pushbuffer (PFIFO delivers the methods to the falcon, the firmware moves the data with
/// xfers and releases a semaphore): the destination equals the source word for word, with
/// the checksum logged.
pub fn copy(kernel: &Kernel) -> Result<(), CaseError> {
    let (_mailbox, io) = attach(kernel)?;
    let sum = copy_through_pcopy(kernel, io)?;
    defmt::info!("nvidia: PCOPY copied {=usize} bytes, checksum {=u32:#010x}", COPY_WORDS * 4, sum);
    Ok(())
}

/// Boot the copy engine, copy `COPY_WORDS` words through it, compare with the CPU; the
/// checksum (wrapping sum) of what arrived.
fn copy_through_pcopy(kernel: &Kernel, io: MailboxIo) -> Result<u32, CaseError> {
    let gpu = bring_up(io)?;
    let mut code = [0u8; 0x400];
    let image = programs::copy_engine();
    let fw = falcon_image(&image, image.data(), &mut code)?;
    {
        let copy = check("PCOPY", gpu.falcon::<Pcopy0>())?;
        check("PCOPY enable", copy.enable())?;
        check("PCOPY boot", copy.boot(&fw))?;
    }
    let gpu = RefCell::new(gpu);
    let (src, dst, sem) = (
        alloc(kernel, COPY_WORDS * 4, 256)?,
        alloc(kernel, COPY_WORDS * 4, 256)?,
        alloc(kernel, 16, 16)?,
    );
    let mut expected = [0u32; COPY_WORDS];
    for (i, w) in expected.iter_mut().enumerate() {
        *w = (i as u32).wrapping_mul(0x9e37_79b9);
    }
    check("source", src.write_slice(0, &expected))?;
    let mem = QueueMemory::new(kernel)?;
    let mut q = mem.queue(&gpu, 1)?;
    // The copy object: class 0x85b5 (nouveau's GT212_DMA), PCOPY's engine in RAMHT.
    check(
        "copy object",
        gpu.borrow_mut().add_engine_object(q.channel(), 0xc0b5, Engine::Copy, 0x85b5),
    )?;
    let (s, d, a) = (src.bus_address().0, dst.bus_address().0, sem.bus_address().0);
    let args = [
        (s >> 32) as u32,
        s as u32,
        (d >> 32) as u32,
        d as u32,
        (COPY_WORDS * 4) as u32,
        (a >> 32) as u32,
        a as u32,
        77,
        methods::LAUNCH_RELEASE_SEMAPHORE,
    ];
    let fence = check(
        "submit copy",
        q.submit(2 + 10 + 9, |sub| {
            sub.writer().bind_object(1, 0xc0b5)?;
            sub.writer().methods(1, methods::SRC_ADDRESS_HIGH as u16, &args)?;
            sub.fence()
        }),
    )?;
    check("copy's fence", q.wait(&fence, WAIT))?;
    check(
        "copy's semaphore",
        poll_until(&TscClock, WAIT, || (sem.read_u32(0).ok() == Some(77)).then_some(())),
    )?;
    let mut copied = [0u32; COPY_WORDS];
    check("destination", dst.read_slice(0, &mut copied))?;
    expect("the copy equals the source", copied == expected)?;
    Ok(copied.iter().fold(0u32, |acc, w| acc.wrapping_add(*w)))
}

/// `nvidia-gt215-demo`: the chipset from `PMC.BOOT_0`, the falcon mailbox round trip on
/// PDAEMON, and a copy through the copy-engine firmware on PCOPY, checked against the CPU and
/// checksummed.
pub fn demo(kernel: &Kernel) -> Result<(), CaseError> {
    let (_mailbox, io) = attach(kernel)?;
    let gpu = bring_up(io)?;
    let id = gpu.identity();
    defmt::info!(
        "nvidia-demo: chipset {} (PMC.BOOT_0 {=u32:#010x}), PFIFO up",
        Debug2Format(&id.chipset),
        id.boot0
    );
    let mut code = [0u8; 0x400];
    let echo = programs::mailbox_echo();
    let fw = falcon_image(&echo, echo.data(), &mut code)?;
    let daemon = check("PDAEMON", gpu.falcon::<Pdaemon>())?;
    check("PDAEMON enable", daemon.enable())?;
    let report = check("PDAEMON boot", daemon.boot(&fw))?;
    daemon.write_mailbox(0x1234);
    check("PDAEMON halts", daemon.wait_halted(WAIT))?;
    let answer = check("PDAEMON mailbox", daemon.read_mailbox())?;
    expect_eq("PDAEMON echo", answer, 0x1235u32)?;
    defmt::info!(
        "nvidia-demo: PDAEMON mailbox round trip: sent {=u32:#x}, the falcon answered {=u32:#x} ({=usize} MMIO writes to upload)",
        0x1234u32,
        answer,
        report.load_writes
    );
    drop(gpu);
    let sum = copy_through_pcopy(kernel, io)?;
    defmt::info!(
        "nvidia-demo: PCOPY copied {=usize} bytes through PFIFO, equal to the source, checksum {=u32:#010x}",
        COPY_WORDS * 4,
        sum
    );
    Ok(())
}

/// Wait for the PFIFO error on the queue's channel, check it is the pusher's `kind`, reset the
/// queue and see a fresh fence signal.
fn pusher_error_and_recovery(
    gpu: &RefCell<Gpu>,
    q: &mut GpuQueue<'_>,
    kind: PusherErrorKind,
    what: &'static str,
) -> Result<(), CaseError> {
    let fault = check(
        what,
        poll_until(&TscClock, WAIT, || match gpu.borrow_mut().handle_interrupts() {
            Ok(report) => report.faults().next().map(Ok),
            Err(e) => Some(Err(e)),
        }),
    )?;
    let fault = check(what, fault)?;
    defmt::info!("nvidia: {=str}: {}", what, Debug2Format(&fault));
    let channel = q.channel().get();
    expect(
        what,
        matches!(fault, FifoError::DmaPusher { channel: c, error } if c == channel && error == kind),
    )?;
    expect("the queue holds its fault", q.fault() == Some(fault))?;
    let report = check("queue reset", q.reset())?;
    defmt::info!("nvidia: reset: {}", Debug2Format(&report));
    expect("fault cleared by the reset", q.fault().is_none())?;
    let after = check("fence after the reset", q.submit_fence())?;
    check("fence after the reset signals", q.wait(&after, WAIT))
}

/// `nvidia-gt215-faults`: an invalid method and a memory fault on a pushbuffer fetch
/// (`dma-fault`) each a typed `DmaPusher` error, recovered by the queue's reset; a stalled
/// pusher (`cp-stall`) times out within its bound and recovers; a slow pusher (`slow=8`)
/// completes; a falcon that never halts (the copy engine's main loop) is a typed
/// `NotHalted` timeout, recovered by a reset through its `PMC.ENABLE` bit and the mailbox echo
/// run after it; a device reading all-ones refuses submissions as `DeviceGone`.
pub fn faults(kernel: &Kernel) -> Result<(), CaseError> {
    let (mailbox, io) = attach(kernel)?;
    let gpu = RefCell::new(bring_up(io)?);
    let mem = QueueMemory::new(kernel)?;
    let mut q = mem.queue(&gpu, 3)?;
    let ok = check("fence", q.submit_fence())?;
    check("fence signals", q.wait(&ok, WAIT))?;

    // Method 0x0004 is no puller method (§2.8.4's list): INVALID_MTHD (§2.8.3).
    check("invalid method", q.submit(2, |s| s.writer().methods(0, 0x0004, &[0])))?;
    pusher_error_and_recovery(&gpu, &mut q, PusherErrorKind::InvalidMthd, "invalid method")?;

    inject(mailbox, gt215_faults::DMA_FAULT)?;
    check("fence under dma-fault", q.submit_fence())?;
    pusher_error_and_recovery(&gpu, &mut q, PusherErrorKind::MemFault, "pushbuffer fetch fault")?;
    inject(mailbox, 0)?;

    inject(mailbox, gt215_faults::CP_STALL)?;
    let stalled = check("fence under cp-stall", q.submit_fence())?;
    let e = q.wait(&stalled, Duration::from_millis(20));
    defmt::info!("nvidia: stalled pusher: {}", Debug2Format(&e));
    expect("a stalled pusher times out", matches!(e, Err(FenceError::Timeout { .. })))?;
    inject(mailbox, 0)?;
    check("reset after the stall", q.reset())?;
    let after = check("fence after the stall", q.submit_fence())?;
    check("fence after the stall signals", q.wait(&after, WAIT))?;

    inject(mailbox, gt215_faults::SLOW | 8 << gt215_faults::SLOW_TICKS_SHIFT)?;
    let mut last = None;
    for _ in 0..50 {
        last = Some(check("fence under slow=8", q.submit_fence())?);
    }
    let last = last.ok_or(CaseError::Check("fences"))?;
    check("a slow pusher completes", q.wait(&last, WAIT))?;
    defmt::info!("nvidia: slow=8: 50 fences signalled, REF_CNT {=u32}", q.ref_count());
    inject(mailbox, 0)?;

    {
        let g = gpu.borrow();
        let copy = check("PCOPY", g.falcon::<Pcopy0>())?;
        check("PCOPY enable", copy.enable())?;
        let mut code = [0u8; 0x400];
        let image = programs::copy_engine();
        check("PCOPY boot", copy.boot(&falcon_image(&image, image.data(), &mut code)?))?;
        let e = copy.wait_halted(Duration::from_millis(20));
        defmt::info!("nvidia: a falcon that never halts: {}", Debug2Format(&e));
        expect("never halts: NotHalted", matches!(e, Err(FalconError::NotHalted(_))))?;
        // Recovery: PCOPY reset through its PMC.ENABLE bit, then the mailbox echo answers.
        check("PCOPY reset", copy.reset())?;
        expect("PCOPY stopped after the reset", check("PCOPY halted", copy.halted())?)?;
        let echo = programs::mailbox_echo();
        let mut code = [0u8; 0x400];
        check(
            "PCOPY boot after the reset",
            copy.boot(&falcon_image(&echo, echo.data(), &mut code)?),
        )?;
        copy.write_mailbox(5);
        check("PCOPY halts after the reset", copy.wait_halted(WAIT))?;
        expect_eq(
            "PCOPY echo after the reset",
            check("PCOPY mailbox", copy.read_mailbox())?,
            6u32,
        )?;
        defmt::info!("nvidia: PCOPY reset through PMC.ENABLE, the mailbox echo answered");
    }

    inject(mailbox, gt215_faults::ALL_ONES)?;
    let e = q.submit_fence();
    defmt::info!("nvidia: all-ones: submit {}", Debug2Format(&e));
    expect("all-ones: submit is DeviceGone", matches!(e, Err(SubmitError::DeviceGone(_))))?;
    expect("all-ones: check_alive fails", gpu.borrow().check_alive().is_err())?;
    inject(mailbox, 0)
}

/// `nvidia-gt215-dma`: an NV4-style DMA-mode channel (`Pusher::Dma`) over a 4 KiB pushbuffer
/// in guest RAM: 10,000 `REF_CNT` methods written through the ring's `DmaSink` (which jumps
/// back to the start before the end, §2.8.3), `DMA_PUT` per batch of 64 and whenever the ring
/// is full (back-pressure on `DMA_GET`); every method executed in order (`REF_CNT` ends at
/// the last value, `DMA_GET` at `DMA_PUT`) and the pushbuffer wrapped by jumps.
pub fn dma(kernel: &Kernel) -> Result<(), CaseError> {
    let (_mailbox, io) = attach(kernel)?;
    let mut gpu = bring_up(io)?;
    let buffer = alloc(kernel, DMA_PUSHBUFFER_BYTES, 4096)?;
    let id = dma_channel(&mut gpu, &buffer, 4)?;
    let user = check("USER block", gpu.io().at_index::<UserG80>(usize::from(id.get())))?;
    let mut ring: DmaRing<&DmaRegion, _> =
        check("ring", CommandRing::with_read_pointer(&*buffer, RegisterRptr::new(user)))?;
    let mut jumps = 0u64;
    let mut full = 0u64;
    for i in 0..DMA_METHODS {
        check(
            "room in the pushbuffer",
            poll_until(&TscClock, WAIT, || {
                let mut sink = DmaSink::new(&mut ring);
                let r = PushbufferWriter::new(&mut sink, PusherMode::Dma).ref_cnt(i);
                jumps += sink.jumps();
                match r {
                    Ok(()) => Some(Ok(())),
                    Err(PushbufferError::NoSpace(_)) => {
                        // Full: what is written goes to the pusher, then DMA_GET is re-read.
                        full += 1;
                        ring.kick(&user);
                        None
                    }
                    Err(e) => Some(Err(e)),
                }
            }),
        )
        .and_then(|r| check("REF_CNT method", r))?;
        if i % 64 == 63 {
            ring.kick(&user);
        }
    }
    ring.kick(&user);
    let last = DMA_METHODS - 1;
    check(
        "every method executed",
        poll_until(&TscClock, WAIT, || {
            let done = user.read::<REF>().raw() == last
                && user.read::<DMA_GET>().raw() == user.read::<DMA_PUT>().raw();
            done.then_some(())
        }),
    )?;
    defmt::info!(
        "nvidia: DMA mode: {=u32} REF_CNT methods, REF {=u32}, {=u64} jumps back to the start, {=u64} waits for room, {=u64} DMA_PUT writes",
        DMA_METHODS,
        user.read::<REF>().raw(),
        jumps,
        full,
        ring.commits()
    );
    expect("the pushbuffer wrapped by jumps", jumps > 10)?;
    check("fault-free", gpu.check_alive())?;
    expect("no PFIFO error on the channel", gpu.channel_fault(id).is_none())?;
    Ok(())
}

/// `nvidia-gt215-channels`: PFIFO brought up, two IB-mode channels created and enabled, each
/// with its own RAMFC and RAMHT in VRAM, each running a fence; channel 2 disabled (off the
/// playlist, unloaded) while channel 1 runs on, no PFIFO error, then enabled again and runs a
/// fence (its state kept in RAMFC); both destroyed with their queues; channel 2 created again
/// runs a fence.
pub fn channels(kernel: &Kernel) -> Result<(), CaseError> {
    let (_mailbox, io) = attach(kernel)?;
    let gpu = RefCell::new(bring_up(io)?);
    defmt::info!(
        "nvidia: PFIFO up, {=u64} bytes of the channel VRAM free",
        gpu.borrow().vram_free()
    );
    let (mem_a, mem_b) = (QueueMemory::new(kernel)?, QueueMemory::new(kernel)?);
    {
        let mut a = mem_a.queue(&gpu, 1)?;
        let mut b = mem_b.queue(&gpu, 2)?;
        let (ia, ib) = (a.channel(), b.channel());
        let (ma, mb) = {
            let g = gpu.borrow();
            expect("channel 1 enabled", g.channel_state(ia) == Some(true))?;
            expect("channel 2 enabled", g.channel_state(ib) == Some(true))?;
            let ma = g.channel_memory(ia).ok_or(CaseError::Check("channel 1's memory"))?;
            let mb = g.channel_memory(ib).ok_or(CaseError::Check("channel 2's memory"))?;
            (ma, mb)
        };
        for (n, m) in [(1u8, &ma), (2, &mb)] {
            defmt::info!(
                "nvidia: channel {=u8}: instance {=u64:#x}, RAMFC {=u64:#x}, RAMHT {=u64:#x}",
                n,
                m.instance.address,
                m.ramfc.address,
                m.ramht()
            );
        }
        expect("distinct RAMFCs", ma.ramfc.address != mb.ramfc.address)?;
        expect("distinct RAMHTs", ma.ramht() != mb.ramht())?;
        for q in [&mut a, &mut b] {
            let f = check("fence", q.submit_fence())?;
            check("fence signals", q.wait(&f, WAIT))?;
        }

        check("disable channel 2", gpu.borrow_mut().disable_channel(ib))?;
        expect("channel 2 disabled", gpu.borrow().channel_state(ib) == Some(false))?;
        fence_without_fault(&gpu, &mut a, "channel 1 runs on")?;
        defmt::info!("nvidia: channel 2 disabled and unloaded, channel 1 ran on");

        // Enabled again, channel 2 resumes from the state unloaded to its RAMFC (the
        // semaphore binding its fences release through included).
        check("enable channel 2 again", gpu.borrow_mut().enable_channel(ib))?;
        expect("channel 2 enabled again", gpu.borrow().channel_state(ib) == Some(true))?;
        fence_without_fault(&gpu, &mut b, "channel 2's fence after disable and enable")?;
        defmt::info!("nvidia: channel 2 enabled again and ran its fence");
    }
    {
        let g = gpu.borrow();
        for n in [1u8, 2] {
            let id = check("channel id", ChannelId::new(n))?;
            expect("destroyed with its queue", g.channel_state(id).is_none())?;
        }
    }
    // A channel created again where a destroyed one was runs from a fresh RAMFC.
    let mut again = mem_b.queue(&gpu, 2)?;
    let f = check("fence on the re-created channel", again.submit_fence())?;
    check("the re-created channel runs", again.wait(&f, WAIT))?;
    defmt::info!("nvidia: channel 2 created again and ran its fence");
    Ok(())
}

/// A fence on `q` signals and PFIFO reported no error meanwhile.
fn fence_without_fault(
    gpu: &RefCell<Gpu>,
    q: &mut GpuQueue<'_>,
    what: &'static str,
) -> Result<(), CaseError> {
    let f = check(what, q.submit_fence())?;
    check(what, q.wait(&f, WAIT))?;
    let faults = check("interrupts", gpu.borrow_mut().handle_interrupts())?;
    expect("no PFIFO error", faults.faults().next().is_none())
}

/// `nvidia-gt215-semaphores`: semaphore fences across two IB-mode channels: channel 2
/// acquires (>=) a value channel 1 has not released and stalls, then passes once channel 1
/// releases it; channel 1 acquires (equal) channel 2's next fence value and passes once
/// channel 2 releases it.
pub fn semaphores(kernel: &Kernel) -> Result<(), CaseError> {
    let (_mailbox, io) = attach(kernel)?;
    let gpu = RefCell::new(bring_up(io)?);
    let (mem_a, mem_b) = (QueueMemory::new(kernel)?, QueueMemory::new(kernel)?);
    let mut a = mem_a.queue(&gpu, 1)?;
    let mut b = mem_b.queue(&gpu, 2)?;
    let fa = check("fence on channel 1", a.submit_fence())?;
    check("channel 1's fence", a.wait(&fa, WAIT))?;

    let next = FencePoint { value: fa.seq() as u32 + 1, ..a.fence_point(&fa) };
    let fb = check(
        "acquire >= on channel 2",
        b.submit(5 + FENCE_WORDS, |s| {
            s.wait_for(next)?;
            s.fence()
        }),
    )?;
    let e = b.wait(&fb, Duration::from_millis(20));
    expect("channel 2 stalls on the acquire", matches!(e, Err(FenceError::Timeout { .. })))?;
    let release = check("release on channel 1", a.submit_fence())?;
    check("channel 1's release", a.wait(&release, WAIT))?;
    check("channel 2 passes the acquire", b.wait(&fb, WAIT))?;
    defmt::info!("nvidia: channel 2 acquired (>=) channel 1's release {=u32}", next.value);

    let b_next = FencePoint { value: fb.seq() as u32 + 1, ..b.fence_point(&fb) };
    let fa2 = check(
        "acquire equal on channel 1",
        a.submit(5 + FENCE_WORDS, |s| {
            s.wait_equal(b_next)?;
            s.fence()
        }),
    )?;
    let e = a.wait(&fa2, Duration::from_millis(20));
    expect("channel 1 stalls on the acquire", matches!(e, Err(FenceError::Timeout { .. })))?;
    let fb2 = check("release on channel 2", b.submit_fence())?;
    check("channel 2's release", b.wait(&fb2, WAIT))?;
    check("channel 1 passes the acquire", a.wait(&fa2, WAIT))?;
    defmt::info!("nvidia: channel 1 acquired (equal) channel 2's release {=u32}", b_next.value);
    Ok(())
}

/// A DMA-mode channel over `DMA_PUSHBUFFER_BYTES` of guest RAM, for the cases that write the
/// pushbuffer themselves.
fn dma_channel(gpu: &mut Gpu, buffer: &Buffer, channel: u8) -> Result<ChannelId, CaseError> {
    let id = check("channel id", ChannelId::new(channel))?;
    let pushbuffer =
        DmaPushbuffer { address: buffer.bus_address().0, bytes: DMA_PUSHBUFFER_BYTES as u64 };
    check("DMA-mode channel", gpu.create_channel(id, pushbuffer))?;
    check("enable", gpu.enable_channel(id))?;
    Ok(id)
}

/// `nvidia-gt215-pfifo-errors`: on a DMA-mode channel, each DMA_PUSHER error the model raises
/// from a bad stream (§2.8.3 errors): a method the puller lacks (`InvalidMthd`), a word no
/// command form matches in DMA mode (the IB-only long non-increasing form: `InvalidCmd`), a
/// return with no subroutine (`RetSubrInactive`), a call inside a subroutine (a call to
/// itself: `CallSubrActive`), a jump past the pushbuffer object (`MemFault`); each decoded by
/// `handle_interrupts` into `FifoError::DmaPusher` naming the channel, the bad command
/// skipped, and the channel then runs a `REF_CNT` method. Then `IbEmpty` on an IB-mode queue:
/// an IB entry of size 0 (which the ring's IB writer never writes) written raw from the entry
/// table, decoded, recovered by the queue's reset and a fence run after it. (`dma-fault` on
/// IB mode is in `nvidia-gt215-faults`.)
pub fn pfifo_errors(kernel: &Kernel) -> Result<(), CaseError> {
    let (_mailbox, io) = attach(kernel)?;
    let mut gpu = bring_up(io)?;
    let buffer = alloc(kernel, DMA_PUSHBUFFER_BYTES, 4096)?;
    let id = dma_channel(&mut gpu, &buffer, 5)?;
    // The USER block owned (not borrowed from `gpu`, which handles the interrupts).
    let base = check("USER block", UserG80::base_of(usize::from(id.get())))?;
    let user: UserIo<MailboxIo> = BlockIo::new(*gpu.io().raw(), base);
    let mut ring: DmaRing<&DmaRegion, _> =
        check("ring", CommandRing::with_read_pointer(&*buffer, RegisterRptr::new(user)))?;
    let cases = [
        ("a method the puller lacks", PusherErrorKind::InvalidMthd),
        ("no command form in DMA mode", PusherErrorKind::InvalidCmd),
        ("a return with no subroutine", PusherErrorKind::RetSubrInactive),
        ("a call inside a subroutine", PusherErrorKind::CallSubrActive),
        ("a jump past the pushbuffer object", PusherErrorKind::MemFault),
    ];
    for (n, (what, kind)) in cases.into_iter().enumerate() {
        // Each from a fresh point in the ring: the pusher has read all before it.
        let call_at = ring.head() * 4;
        {
            let mut sink = DmaSink::new(&mut ring);
            let mut w = PushbufferWriter::new(&mut sink, PusherMode::Dma);
            let written = match kind {
                // Method 0x0004 is no puller method (§2.8.4's list).
                PusherErrorKind::InvalidMthd => w.methods(0, 0x0004, &[0]),
                // Written raw below: the writer has no word no form matches.
                PusherErrorKind::InvalidCmd => Ok(()),
                PusherErrorKind::RetSubrInactive => w.ret(),
                // A call to its own word: inside the subroutine the same call comes again.
                PusherErrorKind::CallSubrActive => w.call(call_at),
                _ => w.jump(DMA_PUSHBUFFER_BYTES as u32 * 16),
            };
            check(what, written)?;
        }
        if kind == PusherErrorKind::InvalidCmd {
            check("room", ring.reserve(1).map_err(|_| "ring full"))?;
            check(
                "raw word",
                CommandSink::push(&mut ring, LONG_NON_INCREASING).map_err(|_| "no space"),
            )?;
        }
        ring.kick(&user);
        let fault = check(
            what,
            poll_until(&TscClock, WAIT, || match gpu.handle_interrupts() {
                Ok(report) => report.faults().next().map(Ok),
                Err(e) => Some(Err(e)),
            }),
        )?;
        let fault = check(what, fault)?;
        defmt::info!("nvidia: {=str}: {}", what, Debug2Format(&fault));
        expect(
            what,
            matches!(fault, FifoError::DmaPusher { channel, error } if channel == id.get() && error == kind),
        )?;
        // The bad command was skipped: the channel runs on.
        let value = 0x100 + n as u32;
        {
            let mut sink = DmaSink::new(&mut ring);
            check("REF_CNT", PushbufferWriter::new(&mut sink, PusherMode::Dma).ref_cnt(value))?;
        }
        ring.kick(&user);
        check(
            "the channel runs on",
            poll_until(&TscClock, WAIT, || (user.read::<REF>().raw() == value).then_some(())),
        )?;
    }
    defmt::info!("nvidia: five DMA_PUSHER errors decoded, each channel run on after it");

    // IB_EMPTY on an IB-mode queue: an entry of SIZE 0 (§2.8.3 "IB mode"), which the ring's
    // IB writer refuses (`BadSegment`), written raw into the IB ring from the entry table at
    // IB_PUT, then IB_PUT moved past it; recovered by the queue's reset.
    let gpu = RefCell::new(gpu);
    let mem = QueueMemory::new(kernel)?;
    let mut q = mem.queue(&gpu, 6)?;
    let ok = check("fence", q.submit_fence())?;
    check("fence signals", q.wait(&ok, WAIT))?;
    let base = check("USER block", UserG80::base_of(usize::from(q.channel().get())))?;
    let ib_user: UserIo<MailboxIo> = BlockIo::new(*gpu.borrow().io().raw(), base);
    let put = ib_user.read::<IB_PUT>().raw();
    let mut entry = [0u32; IB_ENTRY.words];
    check(
        "entry address",
        put_address(IB_ENTRY.name, ib_entry::FIELDS, &mut entry, mem.main.bus_address()),
    )?;
    check("entry size 0", ib_entry::SIZE.put(IB_ENTRY.name, &mut entry, 0))?;
    let entry_bytes = 4 * entry.len();
    check("raw IB entry", mem.ib.write_slice(put as usize * entry_bytes, &entry))?;
    let entries = (IB_RING_BYTES_DEFAULT / entry_bytes) as u32;
    ib_user.write(IB_PUT::from_raw((put + 1) % entries));
    pusher_error_and_recovery(&gpu, &mut q, PusherErrorKind::IbEmpty, "a zero-size IB entry")?;
    defmt::info!("nvidia: IB_EMPTY decoded, the IB-mode channel recovered and ran a fence");
    Ok(())
}
