//! Guest side of the register-access mailbox (contract: `gpu_mailbox`).
//!
//! [`Mailbox::request`] posts one request and polls its completion; [`MailboxIo`] turns that
//! into a [`RegisterIo`] for one BAR of the emulated device, [`MailboxConfig`] into the
//! configuration space of a virtual PCI function at [`Mailbox::function`], and
//! [`handle_interrupt`] is the MSI-X path for device interrupts.
//!
//! Up to [`MAX_MAILBOXES`] emulated devices (one model process and one ivshmem function each,
//! in bus order) are reached at once: mailbox `i` answers at virtual device `i`
//! ([`virtual_function_of`]) and interrupts on its own IDT vector with its own handler. The
//! single-device cases use slot 0 ([`attach`], [`virtual_function`], [`set_irq_handler`]).
//!
//! Failure semantics follow a PCI master abort: a request that times out or completes with a
//! status other than `Ok` makes a read return all-ones and drops a write; the event is logged.
//! After a timeout the model is considered gone and later requests fail at once (otherwise
//! every access of a test would wait the full timeout).
// The aarch64 kernel polls: the interrupt path is unused there.
#![cfg_attr(target_arch = "aarch64", allow(dead_code))]

// The transport function is found and set up per architecture (x86_64: configuration ports,
// firmware-placed BARs, MSI-X; aarch64: ECAM, BARs assigned here, polled).
pub(crate) mod function;
#[cfg_attr(target_arch = "aarch64", path = "../aarch64/ivshmem.rs")]
mod ivshmem;

#[cfg(target_arch = "x86_64")]
pub use ivshmem::attach_nth;
#[cfg(target_arch = "aarch64")]
pub use ivshmem::count as ivshmem_count;
pub use ivshmem::{IvshmemError, attach};

use crate::arch::irq::without_interrupts;
use crate::clock::KernelClock;
use baregpu_hal::pci::{ConfigRegionAccess, PciAddress};
use baregpu_hal::time::{TimedOut, poll_until};
use baregpu_hal::{MmioRegion, RegisterIo};
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use core::time::Duration;
use gpu_mailbox::guest::{self, ConnectError, ExchangeError, Request};
use gpu_mailbox::{IVSHMEM_IVPOSITION, MAGIC, Op, Status, VERSION, header};
use spin::{Mutex, Once};

/// PCI segment on which the emulated device's configuration space appears.
pub const VIRTUAL_SEGMENT: u16 = 1;

/// Emulated devices reachable at once (one ivshmem function and IDT vector each).
pub const MAX_MAILBOXES: usize = 2;

/// Address of the (first) emulated device: segment [`VIRTUAL_SEGMENT`], bus 0, device 0,
/// function 0.
pub fn virtual_function() -> PciAddress {
    virtual_function_of(0)
}

/// Address of the emulated device behind mailbox `index`: device `index` on bus 0 of
/// [`VIRTUAL_SEGMENT`].
pub fn virtual_function_of(index: usize) -> PciAddress {
    PciAddress::new(VIRTUAL_SEGMENT, 0, index as u8, 0)
}

/// Completion timeout of one request. The model answers in ~10 µs under TCG (spike: 100k-180k
/// round trips/s) and a 2 KiB DMA in well under a millisecond; 1 s absorbs a loaded host and
/// still ends a test quickly when the model died.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(1);
/// How long to wait for the model's header. The model writes it before it listens, so QEMU
/// cannot start before it is there; the bound covers a model that initialises lazily.
const READY_TIMEOUT: Duration = Duration::from_secs(1);
/// How often the first request's doorbell is rung again until the model answers (see
/// [`Mailbox::connect`]).
const FIRST_CONTACT_RETRY: Duration = Duration::from_millis(10);
/// Failed accesses logged individually.
const LOGGED_FAILURES: u32 = 16;

/// Why a request failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, defmt::Format)]
pub enum MailboxError {
    /// No completion within [`REQUEST_TIMEOUT`]: the model is considered gone.
    TimedOut(TimedOut),
    /// An earlier request timed out; no request is posted any more.
    Dead,
    /// The model completed the request with a status other than `Ok` (raw value; see
    /// [`status_name`]).
    Status(u32),
    /// The model's header never showed [`MAGIC`] (last value read).
    NotReady(u32),
    /// The model speaks another protocol version.
    Version(u32),
    /// The ivshmem function's index has no mailbox slot (more than [`MAX_MAILBOXES`]).
    NoSlot,
}

/// Name of a raw completion status.
pub fn status_name(raw: u32) -> &'static str {
    match Status::from_u32(raw) {
        Some(Status::Ok) => "Ok",
        Some(Status::BadOp) => "BadOp",
        Some(Status::BadAddress) => "BadAddress",
        Some(Status::ModelError) => "ModelError",
        None => "unknown",
    }
}

fn op_name(op: Op) -> &'static str {
    match op {
        Op::MmioRead => "MmioRead",
        Op::MmioWrite => "MmioWrite",
        Op::ConfigRead => "ConfigRead",
        Op::ConfigWrite => "ConfigWrite",
        Op::Reset => "Reset",
        Op::IrqAck => "IrqAck",
        Op::Inject => "Inject",
    }
}

/// The mailbox in ivshmem BAR2 plus the doorbell in BAR0.
pub struct Mailbox {
    /// Slot (= ivshmem function in bus order).
    index: usize,
    registers: MmioRegion,
    shared: MmioRegion,
    /// Sequence number of the last posted request; the lock serialises requests.
    seq: Mutex<u32>,
    dead: AtomicBool,
    requests: AtomicU64,
    failures: AtomicU32,
    interrupts: AtomicU32,
}

static MAILBOXES: [Once<Mailbox>; MAX_MAILBOXES] = [const { Once::new() }; MAX_MAILBOXES];
/// A device's interrupt handler slot.
type IrqHandler = Mutex<Option<fn(u32)>>;
static IRQ_HANDLERS: [IrqHandler; MAX_MAILBOXES] = [const { Mutex::new(None) }; MAX_MAILBOXES];
static INTERRUPTS: AtomicU32 = AtomicU32::new(0);

impl Mailbox {
    /// Wait for the model's header on an attached ivshmem function and install it as mailbox
    /// `device.index` (the interrupt path finds it there).
    pub fn connect(device: function::Ivshmem) -> Result<&'static Mailbox, MailboxError> {
        let shared = device.shared;
        let seq = guest::connect(&shared, &KernelClock, READY_TIMEOUT).map_err(|e| match e {
            ConnectError::NotReady(magic) => MailboxError::NotReady(magic),
            ConnectError::Version(version) => MailboxError::Version(version),
        })?;
        defmt::info!(
            "mailbox {=usize}: model ready (magic {=u32:#x}, version {=u32}, state {=u32}), guest is ivshmem peer {=u32}, next seq {=u32}",
            device.index,
            MAGIC,
            VERSION,
            shared.read32(header::STATE),
            device.registers.read32(IVSHMEM_IVPOSITION),
            seq.wrapping_add(1)
        );
        let slot = MAILBOXES.get(device.index).ok_or(MailboxError::NoSlot)?;
        if let Some(installed) = slot.get() {
            // Attached before in this case: its sequence numbers go on.
            return Ok(installed);
        }
        let seq = first_contact(&shared, &device.registers, seq)?;
        Ok(slot.call_once(|| Mailbox {
            index: device.index,
            registers: device.registers,
            shared,
            seq: Mutex::new(seq),
            dead: AtomicBool::new(false),
            requests: AtomicU64::new(0),
            failures: AtomicU32::new(0),
            interrupts: AtomicU32::new(0),
        }))
    }

    /// The first installed mailbox, if [`connect`](Self::connect) succeeded.
    pub fn get() -> Option<&'static Mailbox> {
        MAILBOXES[0].get()
    }

    /// Its slot: which ivshmem function (in bus order) and virtual device it is.
    pub fn index(&self) -> usize {
        self.index
    }

    /// Address of its emulated device on the virtual segment ([`virtual_function_of`]).
    pub fn function(&self) -> PciAddress {
        virtual_function_of(self.index)
    }

    /// Install (or remove) the interrupt handler of this mailbox's device (see
    /// [`set_irq_handler`]).
    pub fn set_irq_handler(&self, handler: Option<fn(u32)>) {
        without_interrupts(|| *IRQ_HANDLERS[self.index].lock() = handler);
    }

    /// MSI-X interrupts this mailbox's device raised so far.
    pub fn interrupts(&self) -> u32 {
        self.interrupts.load(Ordering::SeqCst)
    }

    /// Post one request and wait for its completion; returns the completion value.
    /// Interrupts are off for the whole exchange (the interrupt handler posts requests too).
    pub fn request(&self, op: Op, bar: u32, address: u32, value: u32) -> Result<u32, MailboxError> {
        if self.dead.load(Ordering::Relaxed) {
            return Err(MailboxError::Dead);
        }
        without_interrupts(|| {
            let mut seq = self.seq.lock();
            let next = seq.wrapping_add(1);
            *seq = next;
            self.requests.fetch_add(1, Ordering::Relaxed);
            let fields = Request { op, bar, address, value };
            guest::exchange(
                &self.shared,
                &self.registers,
                &KernelClock,
                REQUEST_TIMEOUT,
                next,
                fields,
            )
            .map_err(|e| match e {
                ExchangeError::TimedOut(timed_out) => {
                    self.dead.store(true, Ordering::Relaxed);
                    MailboxError::TimedOut(timed_out)
                }
                ExchangeError::Status(status) => MailboxError::Status(status),
            })
        })
    }

    /// [`request`](Self::request), logging a failure; `None` on failure. Only the first
    /// [`LOGGED_FAILURES`] failures are logged (a dead model would flood the log otherwise);
    /// [`failures`](Self::failures) counts them all.
    fn logged(&self, op: Op, bar: u32, address: u32, value: u32) -> Option<u32> {
        match self.request(op, bar, address, value) {
            Ok(v) => Some(v),
            Err(e) => {
                let n = self.failures.fetch_add(1, Ordering::Relaxed) + 1;
                if n > LOGGED_FAILURES {
                    return None;
                }
                let status = match e {
                    MailboxError::Status(raw) => status_name(raw),
                    _ => "-",
                };
                defmt::warn!(
                    "mailbox {=usize}: {=str} bar={=u32} address={=u32:#x} value={=u32:#x} failed: {} (status {=str})",
                    self.index,
                    op_name(op),
                    bar,
                    address,
                    value,
                    e,
                    status
                );
                if n == LOGGED_FAILURES {
                    defmt::warn!(
                        "mailbox {=usize}: not logging further failed accesses",
                        self.index
                    );
                }
                None
            }
        }
    }

    /// A header word (`gpu_mailbox::header::*`), read directly from shared memory.
    pub fn header(&self, offset: usize) -> u32 {
        self.shared.read32(offset)
    }

    /// Interrupt lines the model asserts (`gpu_mailbox::IRQ_STATUS`).
    pub fn irq_lines(&self) -> u32 {
        self.shared.read32(gpu_mailbox::IRQ_STATUS)
    }

    /// Function-level reset of the emulated device ([`Op::Reset`]): registers back to reset
    /// values, the model's error state cleared.
    pub fn reset(&self) -> Result<(), MailboxError> {
        self.request(Op::Reset, 0, 0, 0).map(|_| ())
    }

    /// Register access to BAR `bar` of the emulated device.
    pub fn io(&'static self, bar: u32) -> MailboxIo {
        MailboxIo { mailbox: self, bar }
    }

    /// Configuration space of the emulated device (at [`function`](Self::function)).
    pub fn config(&'static self) -> MailboxConfig {
        MailboxConfig { mailbox: self }
    }

    /// Requests posted so far.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// Register or configuration accesses that failed (read all-ones / write dropped).
    pub fn failures(&self) -> u32 {
        self.failures.load(Ordering::Relaxed)
    }
}

/// The first request, a read of the device's ID (no side effects), with its doorbell rung
/// again every [`FIRST_CONTACT_RETRY`] until the model answers, for up to [`READY_TIMEOUT`];
/// returns its sequence number. QEMU learns the model's doorbell eventfds from the ivshmem
/// server on its main loop, after the guest may already run (aarch64 `virt` with `-kernel`
/// enters the kernel within milliseconds, with no firmware before it), and drops a doorbell for
/// a peer it does not know yet. Ringing again is harmless: the model serves a sequence number
/// once.
fn first_contact(
    shared: &MmioRegion,
    registers: &MmioRegion,
    last: u32,
) -> Result<u32, MailboxError> {
    let seq = last.wrapping_add(1);
    let ping = Request { op: Op::ConfigRead, bar: 0, address: 0, value: 0 };
    let mut rings = 0u32;
    let waited = poll_until(&KernelClock, READY_TIMEOUT, || {
        rings += 1;
        match guest::exchange(shared, registers, &KernelClock, FIRST_CONTACT_RETRY, seq, ping) {
            Err(ExchangeError::TimedOut(_)) => None,
            Ok(_) | Err(ExchangeError::Status(_)) => Some(()),
        }
    });
    if rings > 1 {
        defmt::info!("mailbox: the model answered the first request after {=u32} doorbells", rings);
    }
    waited.map(|()| seq).map_err(MailboxError::TimedOut)
}

/// One BAR of the emulated device as a [`RegisterIo`]: each access is one mailbox round trip.
#[derive(Clone, Copy)]
pub struct MailboxIo {
    mailbox: &'static Mailbox,
    bar: u32,
}

impl RegisterIo for MailboxIo {
    fn read32(&self, offset: usize) -> u32 {
        let Ok(address) = u32::try_from(offset) else { return u32::MAX };
        self.mailbox.logged(Op::MmioRead, self.bar, address, 0).unwrap_or(u32::MAX)
    }

    fn write32(&self, offset: usize, value: u32) {
        if let Ok(address) = u32::try_from(offset) {
            self.mailbox.logged(Op::MmioWrite, self.bar, address, value);
        }
    }
}

/// The emulated device's configuration space. Only its [`Mailbox::function`] answers; every
/// other address reads all-ones and ignores writes, like an empty slot.
#[derive(Clone, Copy)]
pub struct MailboxConfig {
    mailbox: &'static Mailbox,
}

impl ConfigRegionAccess for MailboxConfig {
    unsafe fn read(&self, address: PciAddress, offset: u16) -> u32 {
        if address != self.mailbox.function() {
            return u32::MAX;
        }
        self.mailbox.logged(Op::ConfigRead, 0, u32::from(offset & !3), 0).unwrap_or(u32::MAX)
    }

    unsafe fn write(&self, address: PciAddress, offset: u16, value: u32) {
        if address == self.mailbox.function() {
            self.mailbox.logged(Op::ConfigWrite, 0, u32::from(offset & !3), value);
        }
    }
}

/// Install (or remove) the interrupt handler of the first mailbox's device. It runs in
/// interrupt context with the asserted mailbox lines as argument, must acknowledge the interrupt
/// in the device's own registers, and must not allocate.
pub fn set_irq_handler(handler: Option<fn(u32)>) {
    without_interrupts(|| *IRQ_HANDLERS[0].lock() = handler);
}

/// MSI-X interrupts taken so far, from every mailbox's device.
pub fn interrupts() -> u32 {
    INTERRUPTS.load(Ordering::SeqCst)
}

/// Mailbox `index`'s MSI-X vector's work (called by its IDT stub, which sends the LAPIC EOI):
/// read the asserted lines, run that device's handler, then clear the lines with
/// [`Op::IrqAck`].
pub fn handle_interrupt(index: usize) {
    INTERRUPTS.fetch_add(1, Ordering::SeqCst);
    let Some(mailbox) = MAILBOXES.get(index).and_then(Once::get) else { return };
    mailbox.interrupts.fetch_add(1, Ordering::SeqCst);
    let lines = mailbox.irq_lines();
    let handler = *IRQ_HANDLERS[index].lock();
    match handler {
        Some(handler) => handler(lines),
        None => defmt::warn!(
            "mailbox {=usize}: interrupt (lines {=u32:#x}) with no handler",
            index,
            lines
        ),
    }
    if lines != 0 {
        mailbox.logged(Op::IrqAck, 0, 0, lines);
    }
}
