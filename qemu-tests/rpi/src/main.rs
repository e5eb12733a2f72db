//! `kernel8.img` for the Raspberry Pi 3 and QEMU `-M raspi3b`: logs the board revision and ARM
//! memory, allocates a 640x480x32 framebuffer through the mailbox property interface, draws the
//! test pattern (`pattern.rs`), then powers the V3D up through the firmware and probes it with
//! `baregpu-videocore-v3d` (`v3d.rs`): where it answers (a real Pi 3) it renders a frame into
//! the same framebuffer and runs a QPU user program; where it does not (QEMU) it logs the
//! typed `V3D not present` and the pattern stays. Then it logs `DONE` and parks. Failures log `FAIL: <error>` and park.
#![no_std]
#![no_main]

mod boot;

use baregpu_hal::error::Chain;
use core::fmt::Write;
use core::panic::PanicInfo;

use rpi_test_image::framebuffer::{Framebuffer, FramebufferRequest, PixelOrder};
use rpi_test_image::mailbox::{ClockId, Mailbox, MailboxError};
use rpi_test_image::pattern;
use rpi_test_image::timer::SystemTimer;
use rpi_test_image::uart::{BAUD, DEFAULT_UART_CLOCK_HZ, Pl011};
use rpi_test_image::v3d::{self, V3dError};

/// The framebuffer this image asks for.
const REQUEST: FramebufferRequest =
    FramebufferRequest { width: 640, height: 480, pixel_order: PixelOrder::Rgb, align: 4096 };

/// Called by `boot.rs` on core 0 at EL1 with the stack set and `.bss` zeroed.
#[unsafe(no_mangle)]
extern "C" fn rpi_main(entry_el: u64) -> ! {
    let clock = SystemTimer::new();
    let start_us = clock.now_us();
    let mut mailbox = Mailbox::bcm2837(&clock);
    // The UART divisor depends on the firmware's UART clock, so ask before the first byte.
    let uart_clock = mailbox.clock_rate(ClockId::Uart);
    let mut uart = Pl011::new(&clock);
    let hz = match uart_clock {
        Ok(hz) if hz != 0 => hz,
        _ => DEFAULT_UART_CLOCK_HZ,
    };
    if uart.init(hz, BAUD).is_err() {
        // A clock the divisor cannot express: fall back to the documented default.
        let _ = uart.init(DEFAULT_UART_CLOCK_HZ, BAUD);
    }
    let _ = writeln!(uart, "\nrpi-test-image: core 0 entered at EL{entry_el}, now EL1, MMU off");
    match uart_clock {
        Ok(hz) => {
            let _ = writeln!(uart, "uart: PL011 115200 8N1, reference clock {hz} Hz (mailbox)");
        }
        Err(e) => {
            let _ = writeln!(uart, "uart: clock query failed ({e}), assumed 48 MHz");
        }
    }
    match run(&mut uart, &mut mailbox, &clock) {
        Ok(()) => {
            let elapsed = clock.now_us().saturating_sub(start_us);
            let _ = writeln!(uart, "DONE ({elapsed} us from entry, system timer)");
        }
        Err(e) => {
            let _ = writeln!(uart, "FAIL: {e}");
        }
    }
    uart.flush();
    park()
}

/// Why the image stopped early.
enum Failure {
    Mailbox(MailboxError),
    Framebuffer(rpi_test_image::framebuffer::FramebufferError),
    Draw(baregpu_hal::dma::DmaError),
    V3d(V3dError),
}

impl core::fmt::Display for Failure {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Failure::Mailbox(e) => write!(f, "mailbox: {e}"),
            Failure::Framebuffer(e) => write!(f, "framebuffer: {e}"),
            Failure::Draw(e) => write!(f, "drawing: {e}"),
            Failure::V3d(e) => write!(f, "V3D: {}", Chain(e)),
        }
    }
}

fn run<'c>(
    uart: &mut Pl011<'_>,
    mailbox: &mut Mailbox<baregpu_hal::MmioRegion, &'c SystemTimer>,
    clock: &'c SystemTimer,
) -> Result<(), Failure> {
    let revision = mailbox.board_revision().map_err(Failure::Mailbox)?;
    let _ = writeln!(uart, "board revision: {revision:#010x}");
    let memory = mailbox.arm_memory().map_err(Failure::Mailbox)?;
    let _ = writeln!(
        uart,
        "ARM memory: base {:#010x} size {:#010x} ({} MiB)",
        memory.base,
        memory.size,
        memory.size >> 20
    );
    let fb = Framebuffer::allocate(mailbox, &REQUEST).map_err(Failure::Framebuffer)?;
    let _ = writeln!(
        uart,
        "framebuffer: {}x{}x32 {:?} alpha {:?}, pitch {}, bus {:#010x}, ARM {:#010x}, size {}",
        fb.width(),
        fb.height(),
        fb.pixel_order(),
        fb.alpha_mode(),
        fb.pitch(),
        fb.bus_address().0,
        fb.arm_address(),
        fb.size()
    );
    let (w, h) = (fb.width(), fb.height());
    fb.fill_with(|x, y| pattern::color_at(x, y, w, h)).map_err(Failure::Draw)?;
    let _ = writeln!(
        uart,
        "pattern drawn: 8 bars rows 0-{}, grey ramp rows {}-{}, {}px checkerboard rows {}-{}",
        h * 3 / 4 - 1,
        h * 3 / 4,
        h * 7 / 8 - 1,
        pattern::CHECKER,
        h * 7 / 8,
        h - 1
    );
    run_v3d(uart, mailbox, clock, &fb)
}

/// Power up, probe and bring up the V3D; where it is present, render the frame into `fb` and
/// run the user-program demo.
/// A V3D that is not there is logged (`V3D not present (...): ...`) and is not a failure: the
/// framebuffer keeps the test pattern.
fn run_v3d<'c>(
    uart: &mut Pl011<'_>,
    mailbox: &mut Mailbox<baregpu_hal::MmioRegion, &'c SystemTimer>,
    clock: &'c SystemTimer,
    fb: &Framebuffer,
) -> Result<(), Failure> {
    let dma = v3d::take_arena().map_err(Failure::V3d)?;
    let overflow = v3d::overflow_memory(&dma).map_err(Failure::V3d)?;
    let mut gpu = match v3d::bring_up(mailbox, clock, &overflow) {
        Ok(gpu) => gpu,
        Err(absent @ V3dError::NotPresent { .. }) => {
            let _ = writeln!(uart, "{}", Chain(&absent));
            return Ok(());
        }
        Err(e) => return Err(Failure::V3d(e)),
    };
    let id = *gpu.identity();
    let _ = writeln!(
        uart,
        "V3D: revision {}, {} slices x {} QPUs, {} KiB VPM, tile buffer {:?}",
        id.revision,
        id.slices,
        id.qpus_per_slice,
        id.vpm_bytes / 1024,
        id.tile_buffer
    );
    let frame = v3d::render_scene(&mut gpu, fb, &dma).map_err(Failure::V3d)?;
    let _ = writeln!(
        uart,
        "V3D: frame {frame} rendered: background {:?}, triangle {:?}",
        v3d::BACKGROUND,
        v3d::TRIANGLE
    );
    let words = v3d::run_user_program(&mut gpu, &dma).map_err(Failure::V3d)?;
    let _ = writeln!(
        uart,
        "V3D: user program VPM_STORE wrote {}..={} through the VPM and a VDW DMA",
        words[0],
        words[words.len() - 1]
    );
    Ok(())
}

/// Wait for events forever (interrupts are masked, so this is a low-power stop).
fn park() -> ! {
    loop {
        aarch64_wfe();
    }
}

fn aarch64_wfe() {
    // SAFETY: `wfe` only waits for an event; it touches no memory or registers.
    unsafe { core::arch::asm!("wfe", options(nomem, nostack, preserves_flags)) }
}

/// Entered from every EL1 vector (`boot.rs`) with the vector index and ESR/ELR/FAR.
#[unsafe(no_mangle)]
extern "C" fn rpi_exception(vector: u64, esr: u64, elr: u64, far: u64) -> ! {
    let clock = SystemTimer::new();
    let mut uart = Pl011::new(&clock);
    let _ = writeln!(
        uart,
        "EXCEPTION: vector {vector} ESR {esr:#x} (EC {:#x}) ELR {elr:#x} FAR {far:#x}",
        esr >> 26
    );
    uart.flush();
    park()
}

#[panic_handler]
fn panic(info: &PanicInfo<'_>) -> ! {
    let clock = SystemTimer::new();
    let mut uart = Pl011::new(&clock);
    let _ = writeln!(uart, "PANIC: {info}");
    uart.flush();
    park()
}
