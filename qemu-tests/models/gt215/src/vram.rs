//! VRAM, allocated in 64 KiB chunks as they are first written: a 64 MiB card costs nothing
//! until a driver fills it (a model is built per test and per fuzz input).

/// Bytes per chunk.
const CHUNK: usize = 0x1_0000;

/// The card's memory, read and written in aligned dwords.
pub struct Vram {
    chunks: Vec<Option<Box<[u8]>>>,
    len: usize,
}

impl Vram {
    /// `len` bytes of zeroed VRAM (a multiple of 64 KiB).
    pub fn new(len: usize) -> Self {
        Vram { chunks: (0..len.div_ceil(CHUNK)).map(|_| None).collect(), len }
    }

    fn slot(&self, address: u64) -> Option<(usize, usize)> {
        let a = usize::try_from(address).ok()?;
        (a.is_multiple_of(4) && a.checked_add(4)? <= self.len).then_some((a / CHUNK, a % CHUNK))
    }

    /// The dword at `address`; `None` outside VRAM or unaligned.
    pub fn read_u32(&self, address: u64) -> Option<u32> {
        let (chunk, at) = self.slot(address)?;
        Some(
            self.chunks[chunk]
                .as_ref()
                .map_or(0, |c| u32::from_le_bytes([c[at], c[at + 1], c[at + 2], c[at + 3]])),
        )
    }

    /// Store a dword; false outside VRAM or unaligned.
    pub fn write_u32(&mut self, address: u64, value: u32) -> bool {
        let Some((chunk, at)) = self.slot(address) else { return false };
        let c = self.chunks[chunk].get_or_insert_with(|| vec![0; CHUNK].into_boxed_slice());
        c[at..at + 4].copy_from_slice(&value.to_le_bytes());
        true
    }
}
