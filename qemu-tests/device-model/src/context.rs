//! What a model may do to the rest of the system while it handles an access: DMA to guest
//! memory, interrupt lines, and entering the error state.

use crate::memory::{DmaFault, DmaFaultKind, GuestMemory};

/// Interrupt lines and the guest-visible latch (mailbox `IRQ_STATUS`).
///
/// A line is a level the model drives ([`DeviceContext::raise_irq`] /
/// [`DeviceContext::lower_irq`]). Asserting a line sets its bit in the latch; when the latch
/// gains a bit the guest is signalled (MSI-X vector `VECTOR_IRQ`), once. `IrqAck` clears latch
/// bits, and any line still asserted is latched (and signalled) again, so an interrupt raised
/// between the driver's device acknowledgement and its `IrqAck` is not lost.
#[derive(Debug, Default, Clone)]
pub(crate) struct IrqState {
    pub(crate) lines: u32,
    pub(crate) status: u32,
    pub(crate) signals: u32,
}

impl IrqState {
    fn latch(&mut self, bits: u32) {
        if bits & !self.status != 0 {
            self.signals = self.signals.saturating_add(1);
        }
        self.status |= bits;
    }

    pub(crate) fn ack(&mut self, mask: u32) {
        self.status &= !mask;
        self.latch(self.lines);
    }
}

/// The device services a model uses during [`crate::GpuModel`] callbacks.
pub struct DeviceContext<'a> {
    pub(crate) memory: &'a mut dyn GuestMemory,
    pub(crate) bus_master: bool,
    pub(crate) irq: &'a mut IrqState,
    pub(crate) error: &'a mut Option<u32>,
}

impl DeviceContext<'_> {
    fn check_master(&self, address: u64, len: usize) -> Result<(), DmaFault> {
        if self.bus_master {
            Ok(())
        } else {
            Err(DmaFault { address, len, kind: DmaFaultKind::BusMasterDisabled })
        }
    }

    /// Read `buf.len()` bytes of guest memory at bus address `address`. All or nothing: a
    /// fault leaves `buf` unspecified and never touches memory outside guest RAM.
    pub fn dma_read(&mut self, address: u64, buf: &mut [u8]) -> Result<(), DmaFault> {
        self.check_master(address, buf.len())?;
        self.memory.read(address, buf)
    }

    /// Write `data` to guest memory at bus address `address`, all or nothing.
    pub fn dma_write(&mut self, address: u64, data: &[u8]) -> Result<(), DmaFault> {
        self.check_master(address, data.len())?;
        self.memory.write(address, data)
    }

    /// Read a little-endian dword.
    pub fn dma_read_u32(&mut self, address: u64) -> Result<u32, DmaFault> {
        let mut b = [0u8; 4];
        self.dma_read(address, &mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    /// Write a little-endian dword.
    pub fn dma_write_u32(&mut self, address: u64, value: u32) -> Result<(), DmaFault> {
        self.dma_write(address, &value.to_le_bytes())
    }

    /// Assert interrupt lines (bit mask). Already-asserted lines stay asserted and are not
    /// signalled again.
    pub fn raise_irq(&mut self, lines: u32) {
        self.irq.lines |= lines;
        self.irq.latch(lines);
    }

    /// Deassert interrupt lines. The guest-visible latch keeps its bits until `IrqAck`.
    pub fn lower_irq(&mut self, lines: u32) {
        self.irq.lines &= !lines;
    }

    /// Drive lines to a level: raise if `asserted`, else lower.
    pub fn set_irq(&mut self, lines: u32, asserted: bool) {
        if asserted { self.raise_irq(lines) } else { self.lower_irq(lines) }
    }

    /// Currently asserted lines.
    pub fn irq_lines(&self) -> u32 {
        self.irq.lines
    }

    /// Enter the error state (mailbox `ModelState::Error`, `header::ERROR = code`) until reset.
    /// The access in progress still completes normally and later register accesses still reach
    /// the model (so report the fault in a status register too); only
    /// [`tick`](crate::GpuModel::tick) stops. The first code is kept if the model fails again.
    /// Codes at or above [`crate::error_code::FRAMEWORK_BASE`] are the framework's.
    pub fn fail(&mut self, code: u32) {
        self.error.get_or_insert(code);
    }

    /// Whether the device is in its error state.
    pub fn failed(&self) -> bool {
        self.error.is_some()
    }
}
