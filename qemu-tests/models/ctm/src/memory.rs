//! The MC's view of memory (CTM guide §2.1.4): 32-bit MC addresses, reached through a small
//! [`Memory`] trait so the interpreter is testable without a device; [`DmaMemory`] adapts the
//! device-model framework's [`DeviceContext`].

use gpu_device_model::{DeviceContext, DmaFault};

/// A refused memory access (nothing was read or written).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemFault {
    /// MC address (§2.1.4: a 32-bit unsigned integer) of the first byte.
    pub address: u32,
    /// Length in bytes.
    pub len: usize,
    /// The DMA fault behind it, when the memory is guest RAM.
    pub dma: Option<DmaFault>,
}

/// Memory as the MC sees it. All accesses are all-or-nothing.
pub trait Memory {
    /// Read `buf.len()` bytes at MC address `address`.
    fn read(&mut self, address: u32, buf: &mut [u8]) -> Result<(), MemFault>;
    /// Write `data` at MC address `address`.
    fn write(&mut self, address: u32, data: &[u8]) -> Result<(), MemFault>;

    /// Read a little-endian 32-bit word.
    fn read_u32(&mut self, address: u32) -> Result<u32, MemFault> {
        let mut b = [0u8; 4];
        self.read(address, &mut b)?;
        Ok(u32::from_le_bytes(b))
    }
    /// Write a little-endian 32-bit word.
    fn write_u32(&mut self, address: u32, value: u32) -> Result<(), MemFault> {
        self.write(address, &value.to_le_bytes())
    }
}

/// A flat byte array mapped at MC address `base` (tests, host tools).
#[derive(Debug, Clone)]
pub struct FlatMemory {
    base: u32,
    bytes: Vec<u8>,
}

impl FlatMemory {
    /// `size` zeroed bytes at MC address `base`.
    pub fn new(base: u32, size: usize) -> Self {
        Self { base, bytes: vec![0; size] }
    }

    fn range(&self, address: u32, len: usize) -> Result<core::ops::Range<usize>, MemFault> {
        let fault = MemFault { address, len, dma: None };
        let start = address.checked_sub(self.base).ok_or(fault)? as usize;
        let end = start.checked_add(len).ok_or(fault)?;
        if end > self.bytes.len() {
            return Err(fault);
        }
        Ok(start..end)
    }

    /// Read an `f32` (little endian).
    pub fn read_f32(&mut self, address: u32) -> Result<f32, MemFault> {
        self.read_u32(address).map(f32::from_bits)
    }
    /// Write an `f32` (little endian).
    pub fn write_f32(&mut self, address: u32, value: f32) -> Result<(), MemFault> {
        self.write_u32(address, value.to_bits())
    }
    /// Write consecutive little-endian words starting at `address`.
    pub fn write_words(&mut self, address: u32, words: &[u32]) -> Result<(), MemFault> {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        self.write(address, &bytes)
    }
}

impl Memory for FlatMemory {
    fn read(&mut self, address: u32, buf: &mut [u8]) -> Result<(), MemFault> {
        let r = self.range(address, buf.len())?;
        buf.copy_from_slice(&self.bytes[r]);
        Ok(())
    }
    fn write(&mut self, address: u32, data: &[u8]) -> Result<(), MemFault> {
        let r = self.range(address, data.len())?;
        self.bytes[r].copy_from_slice(data);
        Ok(())
    }
}

/// MC memory backed by guest RAM through a [`DeviceContext`]: MC address `a` is bus address
/// `bus_base + a` (the R5xx model chooses the mapping; §2.1.4 says it is system-dependent).
pub struct DmaMemory<'a, 'b> {
    ctx: &'a mut DeviceContext<'b>,
    bus_base: u64,
}

impl<'a, 'b> DmaMemory<'a, 'b> {
    /// Adapt `ctx`, mapping MC address 0 to bus address `bus_base`.
    pub fn new(ctx: &'a mut DeviceContext<'b>, bus_base: u64) -> Self {
        Self { ctx, bus_base }
    }

    fn bus(&self, address: u32, len: usize) -> Result<u64, MemFault> {
        self.bus_base.checked_add(u64::from(address)).ok_or(MemFault { address, len, dma: None })
    }
}

impl Memory for DmaMemory<'_, '_> {
    fn read(&mut self, address: u32, buf: &mut [u8]) -> Result<(), MemFault> {
        let bus = self.bus(address, buf.len())?;
        let len = buf.len();
        self.ctx.dma_read(bus, buf).map_err(|e| MemFault { address, len, dma: Some(e) })
    }
    fn write(&mut self, address: u32, data: &[u8]) -> Result<(), MemFault> {
        let bus = self.bus(address, data.len())?;
        self.ctx.dma_write(bus, data).map_err(|e| MemFault {
            address,
            len: data.len(),
            dma: Some(e),
        })
    }
}
