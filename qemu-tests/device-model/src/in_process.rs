//! Drivers against models without QEMU: [`InProcess`] is a device a host test talks to through
//! the same traits a kernel uses — [`RegisterIo`] for BARs, [`ConfigRegionAccess`] for
//! configuration space, [`DmaAllocator`] for DMA memory the model reaches.
//!
//! ```
//! use gpu_device_model::{InProcess, GpuModel, DeviceContext, PciIdentity, BarSpec};
//! use baregpu_hal::RegisterIo;
//!
//! struct Echo(u32);
//! impl GpuModel for Echo {
//!     fn pci_identity(&self) -> PciIdentity {
//!         PciIdentity::new(0x1234, 0x1, 0xFF0000).with_bar(0, BarSpec::mem32(0x1000))
//!     }
//!     fn mmio_read(&mut self, _: u8, _: u32, _: &mut DeviceContext<'_>) -> u32 { self.0 }
//!     fn mmio_write(&mut self, _: u8, _: u32, v: u32, _: &mut DeviceContext<'_>) { self.0 = v }
//!     fn reset(&mut self) { self.0 = 0 }
//! }
//!
//! let gpu = InProcess::new(Echo(0)).unwrap();
//! gpu.write32(0x10, 42);
//! assert_eq!(gpu.read32(0x10), 42);
//! ```

use crate::config::{COMMAND_BUS_MASTER, COMMAND_IO, COMMAND_MEMORY};
use crate::device::Device;
use crate::engine::Engine;
use crate::memory::{DmaFault, GuestMemory, MemoryError, VecMemory};
use crate::model::{GpuModel, IdentityError};
use crate::pacing::{BadPacing, Pacing};
use baregpu_hal::RegisterIo;
use baregpu_hal::dma::{BusAddress, DmaAllocator, DmaError, DmaLayout, DmaRegion};
use baregpu_hal::time::Clock;
use gpu_mailbox::{ModelState, Op, Status};
use pci_types::{ConfigRegionAccess, PciAddress};
use std::cell::Cell;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::MutexGuard;
use std::time::Instant;

/// First bus address handed out by the DMA allocator: page 0 stays unused so a driver that
/// programs address 0 (an uninitialised pointer) hits memory no buffer lives in.
pub const DMA_BASE: u64 = 0x1000;

/// Where memory BARs are placed when the device is built (like firmware would).
pub const BAR_WINDOW: u64 = 0xE000_0000;

/// How to build an [`InProcess`] device.
#[derive(Debug, Clone, Copy)]
pub struct InProcessOptions {
    /// Guest memory bytes (bus addresses `0..memory_size`).
    pub memory_size: usize,
    /// Where the function answers configuration accesses.
    pub address: PciAddress,
    /// Turn on memory/I-O decoding and bus mastering at start (as if a driver had enabled the
    /// device); otherwise the command register starts at 0 like after power-on.
    pub enable: bool,
    /// How the engines advance ([`crate::pacing`]); `None`: the environment's
    /// `GPU_MODEL_PACING`, else [`Pacing::DEFAULT`] (seeded). `threaded` starts an engine
    /// thread for the device, as the server does.
    pub pacing: Option<Pacing>,
}

impl Default for InProcessOptions {
    /// 16 MiB of memory, 00:03.0, enabled, pacing from the environment or the default.
    fn default() -> Self {
        InProcessOptions {
            memory_size: 16 << 20,
            address: PciAddress::new(0, 0, 3, 0),
            enable: true,
            pacing: None,
        }
    }
}

/// Why an [`InProcess`] device could not be built.
#[derive(Debug)]
pub enum InProcessError {
    /// The model's PCI identity is invalid.
    Identity(IdentityError),
    /// The memory could not be allocated.
    Memory(MemoryError),
    /// `GPU_MODEL_PACING` does not parse.
    Pacing(BadPacing),
    /// The engine thread of `threaded` pacing could not be started.
    EngineThread(std::io::Error),
}

impl fmt::Display for InProcessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InProcessError::Identity(e) => write!(f, "invalid PCI identity: {e}"),
            InProcessError::Memory(e) => write!(f, "guest memory: {e}"),
            InProcessError::Pacing(e) => write!(f, "{e}"),
            InProcessError::EngineThread(e) => write!(f, "starting the engine thread: {e}"),
        }
    }
}

impl std::error::Error for InProcessError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            InProcessError::Identity(e) => Some(e),
            InProcessError::Memory(e) => Some(e),
            InProcessError::Pacing(e) => Some(e),
            InProcessError::EngineThread(e) => Some(e),
        }
    }
}

/// A device model in this process, driven through the kernel-facing traits.
///
/// Every access is a mailbox request on the inner [`Device`], so the semantics are exactly the
/// QEMU harness's (decoding, bounds, error state, interrupt latch); a non-`Ok` status reads
/// all-ones and is kept in [`last_status`](Self::last_status). Interrupts are counted:
/// [`take_interrupts`](Self::take_interrupts) says how many the guest would have received.
///
/// Under `threaded` pacing an engine thread ticks the model on the wall clock beside the test
/// (as model-server's does); interrupts it raises are counted at the next access.
///
/// Not re-entrant: holding a [`model`](Self::model) or [`device`](Self::device) guard across
/// an access panics.
pub struct InProcess<M: GpuModel + 'static> {
    engine: Engine<M>,
    /// A guard of [`model`](Self::model) / [`device`](Self::device) is out.
    borrowed: Cell<bool>,
    memory: VecMemory,
    address: PciAddress,
    next: Cell<usize>,
    outstanding: Cell<usize>,
    interrupts: Cell<u32>,
    last_status: Cell<Status>,
}

impl<M: GpuModel + 'static> InProcess<M> {
    /// A device with [`InProcessOptions::default`].
    pub fn new(model: M) -> Result<Self, InProcessError> {
        Self::with_options(model, InProcessOptions::default())
    }

    /// A device built with `options`; BARs are assigned from [`BAR_WINDOW`]. Prints the pacing
    /// (captured by the test harness, shown with a failing test's output).
    pub fn with_options(model: M, options: InProcessOptions) -> Result<Self, InProcessError> {
        let pacing = Pacing::resolve(options.pacing).map_err(InProcessError::Pacing)?;
        let memory = VecMemory::new(options.memory_size).map_err(InProcessError::Memory)?;
        let mut device =
            Device::new(model, Box::new(memory.share())).map_err(InProcessError::Identity)?;
        device.set_pacing(pacing);
        println!(
            "gpu-device-model: engine pacing {pacing} (reproduce with {}={pacing})",
            crate::pacing::PACING_ENV
        );
        device.config_mut().assign_bars(BAR_WINDOW);
        if options.enable {
            let command = COMMAND_MEMORY | COMMAND_IO | COMMAND_BUS_MASTER;
            // Offset 4 is always valid; unimplemented bits are dropped by the space.
            let _ = device.config_mut().write(4, u32::from(command));
        }
        Ok(InProcess {
            engine: Engine::start(device, || ()).map_err(InProcessError::EngineThread)?,
            borrowed: Cell::new(false),
            memory,
            address: options.address,
            next: Cell::new(DMA_BASE as usize),
            outstanding: Cell::new(0),
            interrupts: Cell::new(0),
            last_status: Cell::new(Status::Ok),
        })
    }

    /// The device, locked against the engine thread.
    fn lock(&self) -> MutexGuard<'_, Device<M>> {
        assert!(!self.borrowed.get(), "InProcess accessed while a model()/device() guard is out");
        self.engine.device()
    }

    /// Interrupts the device signalled since the last look (requests and engine ticks).
    fn count_interrupts(&self, device: &mut Device<M>) {
        let signals = device.take_irq_signals();
        self.interrupts.set(self.interrupts.get().saturating_add(signals));
    }

    /// Perform one raw mailbox request (see [`Device::handle`]).
    pub fn request(&self, op: Op, bar: u32, address: u32, value: u32) -> (Status, u32) {
        let mut device = self.lock();
        let (status, value) = device.handle(op as u32, bar, address, value);
        self.count_interrupts(&mut device);
        drop(device);
        // The request may have given the engines work: wake the engine thread.
        self.engine.notify();
        self.last_status.set(status);
        (status, value)
    }

    /// Register access to BAR `bar` (BAR0 is also reachable through `self`).
    pub fn bar(&self, bar: u8) -> BarIo<'_, M> {
        BarIo { device: self, bar }
    }

    fn mmio_read(&self, bar: u8, offset: usize) -> u32 {
        match u32::try_from(offset) {
            Ok(offset) => self.request(Op::MmioRead, bar.into(), offset, 0).1,
            Err(_) => {
                self.last_status.set(Status::BadAddress);
                u32::MAX
            }
        }
    }

    fn mmio_write(&self, bar: u8, offset: usize, value: u32) {
        match u32::try_from(offset) {
            Ok(offset) => {
                self.request(Op::MmioWrite, bar.into(), offset, value);
            }
            Err(_) => self.last_status.set(Status::BadAddress),
        }
    }

    /// Status of the most recent access.
    pub fn last_status(&self) -> Status {
        self.last_status.get()
    }

    /// Interrupts delivered to the "guest" since the last call (including those the engine
    /// thread raised since the last access).
    pub fn take_interrupts(&self) -> u32 {
        self.count_interrupts(&mut self.lock());
        self.interrupts.replace(0)
    }

    /// Mailbox `IRQ_STATUS` (latched lines).
    pub fn irq_status(&self) -> u32 {
        self.lock().irq_status()
    }

    /// `Op::IrqAck`: clear latched lines; returns the new `IRQ_STATUS`.
    pub fn ack_irq(&self, mask: u32) -> u32 {
        self.request(Op::IrqAck, 0, 0, mask).1
    }

    /// `Op::Reset`: function-level reset of the model.
    pub fn reset(&self) {
        self.request(Op::Reset, 0, 0, 0);
    }

    /// Let time pass for the engines ([`Device::poll`]: to idle, or the seeded pacing's next
    /// tick count); [`ModelClock`] does this on every reading.
    pub fn poll(&self) -> crate::Activity {
        let mut device = self.lock();
        self.engine.catch_up(&mut device);
        let activity = device.poll();
        self.count_interrupts(&mut device);
        activity
    }

    /// The pacing the device runs under.
    pub fn pacing(&self) -> Pacing {
        self.lock().pacing()
    }

    /// Mailbox `header::STATE`.
    pub fn state(&self) -> ModelState {
        self.lock().state()
    }

    /// Mailbox `header::ERROR` (0 unless in the error state).
    pub fn error_code(&self) -> u32 {
        self.lock().error_code()
    }

    /// Where the function answers configuration accesses.
    pub fn pci_address(&self) -> PciAddress {
        self.address
    }

    /// The framework device (config space, counters), locked: under `threaded` pacing the
    /// engines stand still while the guard is held.
    pub fn device(&self) -> Guard<'_, M, Device<M>> {
        self.guard(|d| d, |d| d)
    }

    /// The framework device, mutably.
    pub fn device_mut(&self) -> Guard<'_, M, Device<M>> {
        self.device()
    }

    /// The model (white-box inspection).
    pub fn model(&self) -> Guard<'_, M, M> {
        self.guard(|d| d.model(), |d| d.model_mut())
    }

    /// The model, mutably.
    pub fn model_mut(&self) -> Guard<'_, M, M> {
        self.model()
    }

    fn guard<T: ?Sized>(
        &self,
        get: fn(&Device<M>) -> &T,
        get_mut: fn(&mut Device<M>) -> &mut T,
    ) -> Guard<'_, M, T> {
        let device = self.lock();
        self.borrowed.set(true);
        Guard { device, borrowed: &self.borrowed, get, get_mut }
    }

    /// Read guest memory at a bus address (test set-up/inspection, no bus-master check).
    pub fn read_memory(&self, address: u64, buf: &mut [u8]) -> Result<(), DmaFault> {
        self.memory.read(address, buf)
    }

    /// Write guest memory at a bus address.
    pub fn write_memory(&self, address: u64, data: &[u8]) -> Result<(), DmaFault> {
        self.memory.share().write(address, data)
    }

    /// Guest memory size in bytes.
    pub fn memory_size(&self) -> usize {
        self.memory.len()
    }

    /// DMA regions handed out and not given back (leak checks in tests).
    pub fn dma_outstanding(&self) -> usize {
        self.outstanding.get()
    }
}

/// A locked view of an [`InProcess`] device's framework device or model.
pub struct Guard<'a, M: GpuModel, T: ?Sized> {
    device: MutexGuard<'a, Device<M>>,
    borrowed: &'a Cell<bool>,
    get: fn(&Device<M>) -> &T,
    get_mut: fn(&mut Device<M>) -> &mut T,
}

impl<M: GpuModel, T: ?Sized> Deref for Guard<'_, M, T> {
    type Target = T;
    fn deref(&self) -> &T {
        (self.get)(&self.device)
    }
}

impl<M: GpuModel, T: ?Sized> DerefMut for Guard<'_, M, T> {
    fn deref_mut(&mut self) -> &mut T {
        (self.get_mut)(&mut self.device)
    }
}

impl<M: GpuModel, T: ?Sized> Drop for Guard<'_, M, T> {
    fn drop(&mut self) {
        self.borrowed.set(false);
    }
}

impl<M: GpuModel + 'static> Drop for InProcess<M> {
    fn drop(&mut self) {
        if self.outstanding.get() > 0 {
            // Regions are still out: their memory must stay valid (DmaRegion's contract), so
            // the buffer is deliberately leaked.
            std::mem::forget(self.memory.share());
        }
    }
}

/// Nanoseconds [`ModelClock`] advances per reading.
pub const MODEL_CLOCK_STEP_NS: u64 = 10_000;

/// A [`Clock`] for host tests: every reading lets the in-process model's engines advance by its
/// pacing ([`InProcess::poll`]) and advances time by [`MODEL_CLOCK_STEP_NS`], so a driver's
/// bounded wait makes progress the way real time does for real hardware, deterministically.
/// Under `threaded` pacing the engines run on the wall clock, and so does this clock (time
/// since it was made; each reading yields the processor to the engine thread, and ticks for it
/// when the host left it unscheduled, so a timeout on this clock saw the engines run that long).
pub struct ModelClock<'a, M: GpuModel + 'static> {
    device: &'a InProcess<M>,
    now: Cell<u64>,
    /// The start of wall time under `threaded` pacing.
    wall: Option<Instant>,
}

impl<'a, M: GpuModel + 'static> ModelClock<'a, M> {
    /// A clock at time 0 driving `device`.
    pub fn new(device: &'a InProcess<M>) -> Self {
        let wall = matches!(device.pacing(), Pacing::Threaded { .. }).then(Instant::now);
        ModelClock { device, now: Cell::new(0), wall }
    }
}

impl<M: GpuModel + 'static> Clock for ModelClock<'_, M> {
    fn now_ns(&self) -> u64 {
        self.device.poll();
        if let Some(start) = self.wall {
            std::thread::yield_now();
            return u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        }
        let t = self.now.get();
        self.now.set(t + MODEL_CLOCK_STEP_NS);
        t
    }
}

/// [`RegisterIo`] for BAR0.
impl<M: GpuModel + 'static> RegisterIo for InProcess<M> {
    fn read32(&self, offset: usize) -> u32 {
        self.mmio_read(0, offset)
    }
    fn write32(&self, offset: usize, value: u32) {
        self.mmio_write(0, offset, value)
    }
}

/// Register access to one BAR of an [`InProcess`] device.
pub struct BarIo<'a, M: GpuModel + 'static> {
    device: &'a InProcess<M>,
    bar: u8,
}

impl<M: GpuModel + 'static> RegisterIo for BarIo<'_, M> {
    fn read32(&self, offset: usize) -> u32 {
        self.device.mmio_read(self.bar, offset)
    }
    fn write32(&self, offset: usize, value: u32) {
        self.device.mmio_write(self.bar, offset, value)
    }
}

/// Configuration space at [`InProcess::pci_address`]; every other function reads all-ones.
impl<M: GpuModel + 'static> ConfigRegionAccess for InProcess<M> {
    unsafe fn read(&self, address: PciAddress, offset: u16) -> u32 {
        if address != self.address {
            return u32::MAX;
        }
        self.request(Op::ConfigRead, 0, offset.into(), 0).1
    }

    unsafe fn write(&self, address: PciAddress, offset: u16, value: u32) {
        if address == self.address {
            self.request(Op::ConfigWrite, 0, offset.into(), value);
        }
    }
}

/// A bump allocator over the device's memory: bus address = offset, starting at [`DMA_BASE`].
/// Memory is never reused; it is zero when handed out.
impl<M: GpuModel + 'static> DmaAllocator for InProcess<M> {
    fn allocate(&self, layout: DmaLayout) -> Result<DmaRegion, DmaError> {
        if layout.size == 0 {
            return Err(DmaError::ZeroSize);
        }
        if !layout.align.is_power_of_two() {
            return Err(DmaError::BadAlignment(layout.align));
        }
        let start = self.next.get().checked_next_multiple_of(layout.align.max(4));
        let end = start.and_then(|s| s.checked_add(layout.size));
        let (Some(start), Some(end)) = (start, end) else { return Err(DmaError::OutOfMemory) };
        if end > self.memory.len() || (end as u64 - 1) > layout.max_address {
            return Err(DmaError::OutOfMemory);
        }
        self.next.set(end);
        self.outstanding.set(self.outstanding.get() + 1);
        // SAFETY: `start < end <= len`, inside the allocation.
        let cpu = unsafe { self.memory.base().add(start) };
        // SAFETY: `start..end` is handed out once (bump allocation), 4-byte aligned (the base is
        // page-aligned, `start` a multiple of at least 4), valid while any region is out (Drop
        // leaks the buffer otherwise), and the model sees it at bus address `start`.
        Ok(unsafe { DmaRegion::from_raw_parts(cpu, BusAddress(start as u64), layout.size) })
    }

    fn deallocate(&self, region: DmaRegion) {
        let offset = region.bus_address().0;
        // SAFETY: only used for comparison when the offset lies inside the buffer.
        let ours = offset < self.memory.len() as u64
            && region.cpu_ptr() == unsafe { self.memory.base().add(offset as usize) };
        if ours {
            self.outstanding.set(self.outstanding.get().saturating_sub(1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::tests::Toy;
    use baregpu_hal::pci;

    #[test]
    fn registers_config_space_and_probe_work_through_the_kernel_traits() {
        let gpu = InProcess::new(Toy::default()).unwrap();
        gpu.write32(0x8, 77);
        assert_eq!(gpu.read32(0x8), 77);
        assert_eq!(gpu.bar(0).read32(0x8), 77);
        assert_eq!(gpu.last_status(), Status::Ok);
        assert_eq!(gpu.read32(0x1000), u32::MAX);
        assert_eq!(gpu.last_status(), Status::BadAddress);
        assert_eq!(gpu.bar(3).read32(0), u32::MAX);
        assert_eq!(gpu.read32(usize::MAX - 3), u32::MAX);

        let f = pci::probe(&gpu, gpu.pci_address()).unwrap();
        assert_eq!((f.vendor, f.device, f.class, f.interrupt_pin), (0x1234, 1, 0xFF0000, 1));
        assert_eq!(f.memory_bar(0), Some((BAR_WINDOW, 128)));
        // SAFETY: configuration reads have no memory-safety requirements here.
        let other = unsafe { ConfigRegionAccess::read(&gpu, PciAddress::new(0, 0, 4, 0), 0) };
        assert_eq!(other, u32::MAX);
        assert_eq!(gpu.read32(0x8), 77, "probe restored decoding");
    }

    #[test]
    fn power_on_option_starts_with_decoding_off() {
        let options = InProcessOptions { enable: false, ..InProcessOptions::default() };
        let gpu = InProcess::with_options(Toy::default(), options).unwrap();
        assert_eq!(gpu.read32(0), u32::MAX);
        // SAFETY: plain configuration write.
        unsafe { ConfigRegionAccess::write(&gpu, gpu.pci_address(), 4, 2) };
        assert_eq!(gpu.read32(0), 0);
    }

    #[test]
    fn dma_allocator_hands_out_aligned_zeroed_memory_the_model_sees() {
        let gpu = InProcess::new(Toy::default()).unwrap();
        let a = gpu.allocate(DmaLayout::new(12, 4).unwrap()).unwrap();
        let b = gpu.allocate(DmaLayout::new(64, 4096).unwrap()).unwrap();
        assert_eq!(a.bus_address(), BusAddress(DMA_BASE));
        assert_eq!(b.bus_address().0 % 4096, 0);
        assert!(b.bus_address().0 >= DMA_BASE + 12);
        assert_eq!(b.read_u32(60), Ok(0));
        // The model writes 0xC0DE at the address given through register 0x10.
        gpu.write32(0x10, b.bus_address().low() + 8);
        assert_eq!(b.read_u32(8), Ok(0xC0DE));
        a.write_u32(0, 0x1234_5678).unwrap();
        let mut bytes = [0u8; 4];
        gpu.read_memory(DMA_BASE, &mut bytes).unwrap();
        assert_eq!(u32::from_le_bytes(bytes), 0x1234_5678);
        gpu.deallocate(a);
        gpu.deallocate(b);
        let huge = DmaLayout::new(32 << 20, 4).unwrap();
        assert_eq!(gpu.allocate(huge).unwrap_err(), DmaError::OutOfMemory);
        let low = DmaLayout::new(16, 4).unwrap().with_max_address(0xFFF);
        assert_eq!(gpu.allocate(low).unwrap_err(), DmaError::OutOfMemory);
    }

    #[test]
    fn regions_outliving_the_device_stay_valid() {
        let gpu = InProcess::new(Toy::default()).unwrap();
        let r = gpu.allocate(DmaLayout::new(16, 4).unwrap()).unwrap();
        drop(gpu);
        r.write_u32(12, 5).unwrap();
        assert_eq!(r.read_u32(12), Ok(5));
    }

    #[test]
    fn threaded_pacing_runs_the_engines_beside_the_test_on_the_wall_clock() {
        let options = InProcessOptions {
            pacing: Some(Pacing::Threaded { ticks_per_ms: 100 }),
            ..InProcessOptions::default()
        };
        let gpu = InProcess::with_options(Toy::default(), options).unwrap();
        let clock = ModelClock::new(&gpu);
        let start = gpu.model().ticks;
        // 3000 busy ticks: about 30 ms of the engine thread, while the test makes no request
        // (long enough that a test thread descheduled on a loaded machine still sees them
        // unfinished right after the write).
        gpu.write32(0x18, 3000);
        assert!(gpu.model().ticks - start < 3000, "not all at once");
        let t0 = clock.now_ns();
        while gpu.model().ticks - start <= 3000 {
            std::thread::sleep(std::time::Duration::from_millis(1));
            assert!(clock.now_ns() - t0 < 10_000_000_000, "the engine thread never ran");
        }
        assert!(clock.now_ns() - t0 >= 1_000_000, "the clock is the wall clock");
        assert_eq!(gpu.state(), ModelState::Ready);
    }

    #[test]
    #[should_panic(expected = "guard is out")]
    fn an_access_while_a_model_guard_is_out_panics() {
        let gpu = InProcess::new(Toy::default()).unwrap();
        let _model = gpu.model();
        gpu.write32(0x8, 1);
    }

    #[test]
    fn interrupts_are_counted_and_acknowledged() {
        let gpu = InProcess::new(Toy::default()).unwrap();
        gpu.write32(0x14, 1);
        assert_eq!((gpu.irq_status(), gpu.take_interrupts()), (1, 1));
        gpu.write32(0x14, 0);
        assert_eq!(gpu.ack_irq(1), 0);
        assert_eq!(gpu.take_interrupts(), 0);
        gpu.write32(0x10, 0xFFFF_0000);
        assert_eq!(
            (gpu.last_status(), gpu.state(), gpu.error_code()),
            (Status::Ok, ModelState::Error, 7),
            "the faulting write completes; the fault is recorded"
        );
        assert_eq!(gpu.read32(0x10), 0xFFFF_0000, "registers still answer in the error state");
        assert_eq!(gpu.last_status(), Status::Ok);
        gpu.reset();
        assert_eq!(gpu.state(), ModelState::Ready);
        assert_eq!(gpu.model().resets, 1);
    }
}
