//! `multi-gpu-*`: two emulated GPUs in one guest, an R520 and a Cypress, each beside its own
//! model process behind its own ivshmem function: distinct mailboxes, virtual PCI functions,
//! BARs and MSI-X vectors. The guest finds which is which by probing, not by bus order.

use super::{CaseError, expect, expect_eq};
use crate::Kernel;
use crate::clock::TscClock;
use crate::dma::IdentityDma;
use crate::mailbox::{self, MAX_MAILBOXES, Mailbox, MailboxIo};
use crate::pci::Platform;
use baregpu_hal::time::poll_until;
use baregpu_radeon_evergreen::{Evergreen, RingConfig as EvergreenRing};
use baregpu_radeon_r5xx::{Interrupts, R5xx, RingConfig as R5xxRing};
use baregpu_regs::evergreen::Chipset as EvergreenChip;
use baregpu_regs::r5xx::Chipset as R5xxChip;
use core::time::Duration;
use defmt::Debug2Format;

/// The R520's driver in this guest.
pub(super) type R520 = R5xx<'static, MailboxIo, TscClock, IdentityDma>;
/// The Cypress's driver in this guest.
pub(super) type Cypress = Evergreen<'static, MailboxIo, TscClock, IdentityDma>;

/// Bound on a fence or an interrupt (a few mailbox round trips on a loaded 2-core host).
const TIMEOUT: Duration = Duration::from_millis(300);

fn check<T, E: core::fmt::Debug>(what: &'static str, r: Result<T, E>) -> Result<T, CaseError> {
    r.map_err(|e| {
        defmt::error!("FAILED: {=str}: {}", what, Debug2Format(&e));
        CaseError::Check(what)
    })
}

/// The two emulated GPUs, found and enabled (not yet initialised).
pub(super) struct Found {
    /// The R520's mailbox.
    pub r5xx: &'static Mailbox,
    /// The Evergreen chip's mailbox and chip.
    pub evergreen: (&'static Mailbox, EvergreenChip),
}

/// Attach every ivshmem function, reset its model, and probe its virtual function with both
/// drivers' PCI tables: one must be an R5xx, the other an Evergreen chip.
pub(super) fn attach(kernel: &Kernel) -> Result<Found, CaseError> {
    let (mut r5xx, mut evergreen) = (None, None);
    for index in 0..MAX_MAILBOXES {
        let ivshmem = mailbox::attach_nth(index, kernel.boot.flag("ivshmem.relocate"))
            .map_err(CaseError::Ivshmem)?;
        let mailbox = Mailbox::connect(ivshmem)?;
        mailbox.reset()?;
        let platform = Platform { mailbox: Some(mailbox.config()) };
        let address = mailbox.function();
        if let Ok(p) = baregpu_radeon_r5xx::pci::probe(&platform, address) {
            defmt::info!(
                "multi-gpu: mailbox {=usize}: {=str} ({=str}) {=u16:04x}:{=u16:04x}",
                index,
                p.chip.name(),
                p.name,
                p.function.vendor,
                p.function.device
            );
            check("R5xx enable", baregpu_radeon_r5xx::pci::enable(&platform, address))?;
            expect("one R5xx", r5xx.replace((mailbox, p.chip)).is_none())?;
        } else {
            let p = check("probe", baregpu_radeon_evergreen::pci::probe(&platform, address))?;
            defmt::info!(
                "multi-gpu: mailbox {=usize}: {=str} ({=str}) {=u16:04x}:{=u16:04x}",
                index,
                p.chip.name(),
                p.name,
                p.function.vendor,
                p.function.device
            );
            check("Evergreen enable", baregpu_radeon_evergreen::pci::enable(&platform, address))?;
            expect("one Evergreen", evergreen.replace((mailbox, p.chip)).is_none())?;
        }
    }
    let (r5xx, r5xx_chip) = r5xx.ok_or(CaseError::Check("an R5xx among the GPUs"))?;
    let evergreen = evergreen.ok_or(CaseError::Check("an Evergreen among the GPUs"))?;
    expect("the R5xx is an R520", r5xx_chip == R5xxChip::R520)?;
    expect("the Evergreen chip is a Cypress", evergreen.1 == EvergreenChip::CYPRESS)?;
    Ok(Found { r5xx, evergreen })
}

/// The R520 brought up (microcode, ring, ring test).
pub(super) fn init_r520(kernel: &Kernel, mailbox: &'static Mailbox) -> Result<R520, CaseError> {
    super::r5xx::init(kernel, mailbox, R5xxRing::default())
}

/// The Cypress brought up (PFP/ME/RLC, ring, IH ring, ring and IB tests).
pub(super) fn init_cypress(
    kernel: &Kernel,
    (mailbox, chip): (&'static Mailbox, EvergreenChip),
) -> Result<Cypress, CaseError> {
    let fw = super::evergreen::firmware(chip)?;
    check(
        "Cypress init",
        Evergreen::init(mailbox.io(0), TscClock, kernel.dma, chip, &fw, EvergreenRing::default()),
    )
}

static R520_IRQ: spin::Mutex<Option<R520>> = spin::Mutex::new(None);

/// The R520's interrupt handler: the driver acknowledges in GEN_INT_STATUS.
fn on_r520_interrupt(_lines: u32) {
    if let Some(mut guard) = R520_IRQ.try_lock()
        && let Some(gpu) = guard.as_mut()
    {
        let _ = gpu.handle_interrupts();
    }
}

/// The Cypress's handler while this case polls its fences: the mailbox acknowledges the line,
/// the EOP vectors stay in the IH ring.
fn on_cypress_interrupt(_lines: u32) {}

/// `multi-gpu-probe`: both GPUs found by probing, each with its own mailbox, virtual function
/// and BARs; both initialised; each one's interrupt arrives on its own MSI-X vector only.
pub fn probe(kernel: &Kernel) -> Result<(), CaseError> {
    let found = attach(kernel)?;
    let (r_box, e_box) = (found.r5xx, found.evergreen.0);
    expect("distinct mailboxes", r_box.index() != e_box.index())?;
    expect("distinct virtual functions", r_box.function() != e_box.function())?;

    // The R520's software interrupt reaches its vector only (the Cypress is not running yet,
    // so nothing else can interrupt).
    let mut r520 = init_r520(kernel, r_box)?;
    let fence = check("R520 fence", r520.emit_fence())?;
    check("R520 fence wait", r520.wait(&fence, TIMEOUT))?;
    r520.enable_interrupts(Interrupts { software: true, scratch: false });
    *R520_IRQ.lock() = Some(r520);
    r_box.set_irq_handler(Some(on_r520_interrupt));
    e_box.set_irq_handler(Some(on_cypress_interrupt));
    x86_64::instructions::interrupts::without_interrupts(|| {
        if let Some(gpu) = R520_IRQ.lock().as_ref() {
            gpu.raise_software_interrupt();
        }
    });
    let arrived = poll_until(&TscClock, TIMEOUT, || (r_box.interrupts() >= 1).then_some(()));
    check("R520 interrupt on its vector", arrived)?;
    expect_eq("no interrupt on the Cypress's vector", e_box.interrupts(), 0u32)?;

    // The Cypress's EOP interrupts reach its vector only.
    let r520_irqs = r_box.interrupts();
    let mut cypress = init_cypress(kernel, found.evergreen)?;
    let fence = check("Cypress fence", cypress.fence())?;
    check("Cypress fence wait", cypress.wait(&fence, TIMEOUT))?;
    let arrived = poll_until(&TscClock, TIMEOUT, || (e_box.interrupts() >= 1).then_some(()));
    check("Cypress EOP interrupt on its vector", arrived)?;
    expect_eq("no further interrupt on the R520's vector", r_box.interrupts(), r520_irqs)?;
    defmt::info!(
        "multi-gpu: interrupts: R520 {=u32} (mailbox {=usize}), Cypress {=u32} (mailbox {=usize})",
        r_box.interrupts(),
        r_box.index(),
        e_box.interrupts(),
        e_box.index()
    );
    cypress.shutdown();
    r_box.set_irq_handler(None);
    e_box.set_irq_handler(None);
    *R520_IRQ.lock() = None;
    Ok(())
}
