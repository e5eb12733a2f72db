//! The shader core's view of GPU memory: 40-bit MC addresses (SQ_PGM_START_LS and CB_COLORn_BASE
//! hold address >> 8, buffer resources BASE plus BASE_HI 7:0), reached through a small trait the
//! command processor implements over guest RAM, so the core needs no device framework.

use core::fmt;

/// A refused memory access: nothing was read or written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryFault {
    /// GPU address of the first byte.
    pub address: u64,
    /// Length in bytes.
    pub len: usize,
}

impl fmt::Display for MemoryFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "memory access of {} bytes at {:#x} refused", self.len, self.address)
    }
}

impl std::error::Error for MemoryFault {}

/// The unit of the shader core an access goes through: each has its own cache in front of
/// memory on the chip (the model's caches are the command processor's, `crate::cache`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Path {
    /// Program words (CF, ALU and fetch clauses): the SQ instruction cache.
    Instruction,
    /// ALU constants locked into the kcache: the SQ constant cache.
    Constant,
    /// Vertex (buffer) fetches: the vertex/texture cache.
    Fetch,
    /// `MEM_RAT` exports: through the colour-buffer cache (§8.6 EXPORT_RAT), written back
    /// only when it is flushed.
    Rat {
        /// The colour buffer (RAT_ID) whose cache holds the line.
        cb: u8,
    },
    /// `MEM_RAT_CACHELESS` exports: straight to memory (§8.6 EXPORT_RAT_CACHELESS).
    RatCacheless,
}

/// Memory as the shader core sees it (program words, constants, fetches, RAT writes). Every
/// access is all-or-nothing; words are little endian.
pub trait ShaderMemory {
    /// Read `buf.len()` bytes at `address`.
    fn read(&mut self, address: u64, buf: &mut [u8]) -> Result<(), MemoryFault>;
    /// Write `data` at `address`.
    fn write(&mut self, address: u64, data: &[u8]) -> Result<(), MemoryFault>;

    /// Read through the unit `path` names (memory without caches: a plain read).
    fn read_via(&mut self, path: Path, address: u64, buf: &mut [u8]) -> Result<(), MemoryFault> {
        let _ = path;
        self.read(address, buf)
    }
    /// Write through the unit `path` names (memory without caches: a plain write).
    fn write_via(&mut self, path: Path, address: u64, data: &[u8]) -> Result<(), MemoryFault> {
        let _ = path;
        self.write(address, data)
    }
    /// A 32-bit word through `path`.
    fn read_u32_via(&mut self, path: Path, address: u64) -> Result<u32, MemoryFault> {
        let mut b = [0u8; 4];
        self.read_via(path, address, &mut b)?;
        Ok(u32::from_le_bytes(b))
    }
    /// A 32-bit word through `path`.
    fn write_u32_via(&mut self, path: Path, address: u64, value: u32) -> Result<(), MemoryFault> {
        self.write_via(path, address, &value.to_le_bytes())
    }

    /// Read a 32-bit word.
    fn read_u32(&mut self, address: u64) -> Result<u32, MemoryFault> {
        let mut b = [0u8; 4];
        self.read(address, &mut b)?;
        Ok(u32::from_le_bytes(b))
    }
    /// Write a 32-bit word.
    fn write_u32(&mut self, address: u64, value: u32) -> Result<(), MemoryFault> {
        self.write(address, &value.to_le_bytes())
    }
}

/// A flat byte array mapped at GPU address `base` (tests, host tools).
#[derive(Debug, Clone)]
pub struct FlatMemory {
    base: u64,
    bytes: Vec<u8>,
}

impl FlatMemory {
    /// `size` zeroed bytes at GPU address `base`.
    pub fn new(base: u64, size: usize) -> Self {
        Self { base, bytes: vec![0; size] }
    }

    fn range(&self, address: u64, len: usize) -> Result<core::ops::Range<usize>, MemoryFault> {
        let fault = MemoryFault { address, len };
        let start =
            usize::try_from(address.checked_sub(self.base).ok_or(fault)?).map_err(|_| fault)?;
        let end = start.checked_add(len).ok_or(fault)?;
        if end > self.bytes.len() {
            return Err(fault);
        }
        Ok(start..end)
    }

    /// Write consecutive words from `address`.
    pub fn write_words(&mut self, address: u64, words: &[u32]) -> Result<(), MemoryFault> {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        self.write(address, &bytes)
    }

    /// Read `n` consecutive words from `address`.
    pub fn read_words(&mut self, address: u64, n: usize) -> Result<Vec<u32>, MemoryFault> {
        let mut bytes = vec![0u8; n * 4];
        self.read(address, &mut bytes)?;
        Ok(bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
    }
}

impl ShaderMemory for FlatMemory {
    fn read(&mut self, address: u64, buf: &mut [u8]) -> Result<(), MemoryFault> {
        let r = self.range(address, buf.len())?;
        buf.copy_from_slice(&self.bytes[r]);
        Ok(())
    }
    fn write(&mut self, address: u64, data: &[u8]) -> Result<(), MemoryFault> {
        let r = self.range(address, data.len())?;
        self.bytes[r].copy_from_slice(data);
        Ok(())
    }
}
