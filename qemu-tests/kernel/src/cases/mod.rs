//! Test cases, selected by `case=<name>` on the kernel command line.

#[cfg(target_arch = "aarch64")]
mod aarch64;
mod boot;
#[cfg(target_arch = "x86_64")]
mod ctm;
#[cfg(target_arch = "x86_64")]
mod evergreen;
#[cfg(target_arch = "x86_64")]
mod multi_gpu;
#[cfg(target_arch = "x86_64")]
mod nvidia;
#[cfg(target_arch = "x86_64")]
mod r5xx;
mod selftest;
mod v3d;

use crate::Kernel;
#[cfg(target_arch = "x86_64")]
use crate::arch::lapic::LapicError;
#[cfg(target_arch = "x86_64")]
use crate::bootinfo::BootInfoError;
use crate::mailbox::{IvshmemError, MailboxError};
use crate::memory::MemoryError;
use baregpu_hal::dma::DmaError;
use baregpu_hal::pci::PciError;
use baregpu_hal::time::TimedOut;

/// Why a case (or the boot before it) failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, defmt::Format)]
pub enum CaseError {
    /// No `case=` on the command line.
    NoCase,
    /// `case=` names no known case.
    UnknownCase,
    /// The PVH start info is unusable.
    #[cfg(target_arch = "x86_64")]
    BootInfo(BootInfoError),
    /// No room for heap or DMA pool.
    Memory(MemoryError),
    /// The local APIC cannot be used.
    #[cfg(target_arch = "x86_64")]
    Lapic(LapicError),
    /// The ivshmem transport is missing or broken.
    Ivshmem(IvshmemError),
    /// A mailbox request failed where the case needed it to succeed.
    Mailbox(MailboxError),
    /// Probing the emulated device failed.
    Pci(PciError),
    /// DMA allocation failed.
    Dma(DmaError),
    /// A bounded wait expired.
    #[cfg_attr(target_arch = "aarch64", allow(dead_code))]
    TimedOut {
        /// What was waited for.
        what: &'static str,
        /// How long.
        waited: TimedOut,
    },
    /// A value differs from the expected one.
    Mismatch {
        /// What was checked.
        what: &'static str,
        /// Value seen.
        got: u64,
        /// Value expected.
        want: u64,
    },
    /// A condition does not hold.
    Check(&'static str),
}

impl From<MailboxError> for CaseError {
    fn from(e: MailboxError) -> Self {
        CaseError::Mailbox(e)
    }
}

impl From<DmaError> for CaseError {
    fn from(e: DmaError) -> Self {
        CaseError::Dma(e)
    }
}

/// Check `got == want`, logging the outcome.
pub fn expect_eq(
    what: &'static str,
    got: impl Into<u64>,
    want: impl Into<u64>,
) -> Result<(), CaseError> {
    let (got, want) = (got.into(), want.into());
    if got == want {
        defmt::info!("ok: {=str} = {=u64:#x}", what, got);
        Ok(())
    } else {
        defmt::error!("FAILED: {=str}: got {=u64:#x}, want {=u64:#x}", what, got, want);
        Err(CaseError::Mismatch { what, got, want })
    }
}

/// `r`'s value, or its error logged as `FAILED: what: …` and the case failed as `what`.
pub fn check<T, E: core::fmt::Debug>(what: &'static str, r: Result<T, E>) -> Result<T, CaseError> {
    r.map_err(|e| {
        defmt::error!("FAILED: {=str}: {}", what, defmt::Debug2Format(&e));
        CaseError::Check(what)
    })
}

/// The first mailbox attached (`ivshmem.relocate` from the command line) and its device
/// reset, with the platform that reaches the device's configuration space through it.
pub fn attach_reset(
    kernel: &Kernel,
) -> Result<(&'static crate::mailbox::Mailbox, crate::pci::Platform), CaseError> {
    let ivshmem = crate::mailbox::attach(kernel.cmdline.flag("ivshmem.relocate"))
        .map_err(CaseError::Ivshmem)?;
    let mailbox = crate::mailbox::Mailbox::connect(ivshmem)?;
    mailbox.reset()?;
    Ok((mailbox, crate::pci::Platform { mailbox: Some(mailbox.config()) }))
}

/// Switch the model's injected faults (`Op::Inject`, the model's `*_faults` switches).
pub fn inject(mailbox: &crate::mailbox::Mailbox, switches: u32) -> Result<(), CaseError> {
    mailbox.request(gpu_mailbox::Op::Inject, 0, 0, switches)?;
    Ok(())
}

/// Check a condition, logging the outcome.
pub fn expect(what: &'static str, condition: bool) -> Result<(), CaseError> {
    if condition {
        defmt::info!("ok: {=str}", what);
        Ok(())
    } else {
        defmt::error!("FAILED: {=str}", what);
        Err(CaseError::Check(what))
    }
}

/// A case's entry point.
type Case = fn(&Kernel) -> Result<(), CaseError>;

/// Every case by name.
#[cfg(target_arch = "aarch64")]
const CASES: &[(&str, Case)] = &[
    ("aarch64-boot", aarch64::boot),
    ("aarch64-selftest", aarch64::selftest),
    ("aarch64-v3d-probe", v3d::probe),
    ("aarch64-v3d-triangle", v3d::triangle),
    ("aarch64-v3d-scene", v3d::scene),
    ("aarch64-v3d-user-program", v3d::vector_add),
    ("aarch64-v3d-saxpy", v3d::saxpy),
    ("aarch64-v3d-faults", v3d::faults),
    ("aarch64-fail-panic", fail_panic),
    ("aarch64-fail-exception", aarch64::fail_exception),
];

/// Every case by name.
#[cfg(target_arch = "x86_64")]
const CASES: &[(&str, Case)] = &[
    ("boot", boot::run),
    ("selftest-registers", selftest::registers),
    ("selftest-dma", selftest::dma),
    ("selftest-irq", selftest::irq),
    ("selftest-bench", selftest::bench),
    ("r5xx-probe", r5xx::probe),
    ("r5xx-firmware", r5xx::firmware),
    ("r5xx-ring", r5xx::ring),
    ("r5xx-ib", r5xx::ib),
    ("r5xx-stress", r5xx::stress),
    ("r5xx-pio", r5xx::pio),
    ("r5xx-irq", r5xx::irq),
    ("r5xx-faults", r5xx::faults),
    ("r5xx-demo", r5xx::demo),
    ("ctm-vector-add", ctm::vector_add),
    ("ctm-saxpy", ctm::saxpy),
    ("ctm-stencil", ctm::stencil),
    ("ctm-reduce", ctm::reduce),
    ("ctm-units", ctm::units),
    ("ctm-demo", ctm::demo),
    ("evergreen-probe", evergreen::probe),
    ("evergreen-firmware", evergreen::firmware_case),
    ("evergreen-ring", evergreen::ring),
    ("evergreen-irq", evergreen::irq),
    ("evergreen-cp-dma", evergreen::cp_dma),
    ("evergreen-predication", evergreen::predication),
    ("evergreen-faults", evergreen::faults),
    ("evergreen-compute", evergreen::compute),
    ("evergreen-demo", evergreen::demo),
    ("v3d-probe", v3d::probe),
    ("v3d-triangle", v3d::triangle),
    ("v3d-scene", v3d::scene),
    ("v3d-vector-add", v3d::vector_add),
    ("v3d-saxpy", v3d::saxpy),
    ("v3d-faults", v3d::faults),
    ("v3d-irq", v3d::irq),
    ("nvidia-gt215-probe", nvidia::probe),
    ("nvidia-gt215-channels", nvidia::channels),
    ("nvidia-gt215-ib", nvidia::ib),
    ("nvidia-gt215-dma", nvidia::dma),
    ("nvidia-gt215-semaphores", nvidia::semaphores),
    ("nvidia-gt215-pfifo-errors", nvidia::pfifo_errors),
    ("nvidia-gt215-falcon", nvidia::falcon),
    ("nvidia-gt215-copy", nvidia::copy),
    ("nvidia-gt215-faults", nvidia::faults),
    ("nvidia-gt215-demo", nvidia::demo),
    ("multi-gpu-probe", multi_gpu::probe),
    ("multi-gpu-schedule", multi_gpu::schedule),
    ("multi-gpu-one-dies", multi_gpu::one_dies),
    ("fail-panic", fail_panic),
    ("fail-exception", fail_exception),
];

/// `fail-panic`: must end with a logged panic and exit status 35 (tests the failure path).
fn fail_panic(_: &Kernel) -> Result<(), CaseError> {
    panic!("deliberate panic of case fail-panic");
}

/// `fail-exception`: must end with a logged page fault and exit status 35.
#[cfg(target_arch = "x86_64")]
fn fail_exception(_: &Kernel) -> Result<(), CaseError> {
    /// Canonical but outside the 4 GiB identity map.
    const UNMAPPED: usize = 0x0000_4000_0000_0000;
    // SAFETY: deliberately faults: the read never completes, the #PF handler ends the run.
    let value = unsafe { core::ptr::read_volatile(UNMAPPED as *const u32) };
    defmt::error!("read of an unmapped address returned {=u32:#x}", value);
    Err(CaseError::Check("unmapped read did not fault"))
}

/// Run case `name`.
pub fn run(name: &str, kernel: &Kernel) -> Result<(), CaseError> {
    if name.is_empty() {
        defmt::error!("no case= on the kernel command line (-append \"case=<name>\")");
        return Err(CaseError::NoCase);
    }
    match CASES.iter().find(|(n, _)| *n == name) {
        Some((_, case)) => case(kernel),
        None => {
            defmt::error!("unknown case {=str}; known cases:", name);
            for (n, _) in CASES {
                defmt::error!("  {=str}", n);
            }
            Err(CaseError::UnknownCase)
        }
    }
}
