//! The buffers a caller hands in with a list: the only memory the list, its shader records and
//! shaders may make the V3D touch.

use baregpu_hal::dma::BusAddress;

/// What a buffer may be used for (a set: the project's driver keeps the shader record and
/// the vertices in one buffer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Purposes(u8);

impl Purposes {
    /// Nothing.
    pub const NONE: Purposes = Purposes(0);
    /// Tile allocation memory (record 112): the binner writes tile lists here.
    pub const TILE_ALLOCATION: Purposes = Purposes(1 << 0);
    /// The tile state data array (record 112): the binner writes here.
    pub const TILE_STATE: Purposes = Purposes(1 << 1);
    /// Shader state records (records 64, 65); `contents` required.
    pub const SHADER_RECORDS: Purposes = Purposes(1 << 2);
    /// QPU code, one shader from byte 0; `contents` required.
    pub const SHADER_CODE: Purposes = Purposes(1 << 3);
    /// A uniforms stream from byte 0; `contents` required when a shader writes its
    /// uniforms address.
    pub const UNIFORMS: Purposes = Purposes(1 << 4);
    /// Vertex attribute arrays or NV-mode shaded vertices.
    pub const VERTICES: Purposes = Purposes(1 << 5);
    /// Index lists (record 32); with `contents`, each index is checked against the record's
    /// maximum.
    pub const INDICES: Purposes = Purposes(1 << 6);

    /// Both sets.
    pub const fn union(self, other: Purposes) -> Purposes {
        Purposes(self.0 | other.0)
    }

    /// Whether every purpose of `other` is in `self`.
    pub const fn contains(self, other: Purposes) -> bool {
        self.0 & other.0 == other.0
    }
}

impl core::ops::BitOr for Purposes {
    type Output = Purposes;
    fn bitor(self, other: Purposes) -> Purposes {
        self.union(other)
    }
}

/// One buffer: where the V3D sees it, how big it is, what it is for and, where a rule reads
/// it, its bytes as the V3D will see them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Buffer<'a> {
    /// Bus address of byte 0.
    pub base: BusAddress,
    /// Bytes.
    pub size: u32,
    /// What it may hold.
    pub purposes: Purposes,
    /// Its bytes as the V3D will see them, for the rules that read them (shader records,
    /// shaders, uniforms, indices); a rule reads at most the first `size`.
    pub contents: Option<&'a [u8]>,
}

impl<'a> Buffer<'a> {
    /// A buffer whose bytes the validator does not read.
    pub const fn new(base: BusAddress, size: u32, purposes: Purposes) -> Self {
        Buffer { base, size, purposes, contents: None }
    }

    /// A buffer the validator reads (`bytes` as the V3D will see them, `size` their length).
    pub const fn with_contents(base: BusAddress, bytes: &'a [u8], purposes: Purposes) -> Self {
        let size = if bytes.len() > u32::MAX as usize { u32::MAX } else { bytes.len() as u32 };
        Buffer { base, size, purposes, contents: Some(bytes) }
    }

    /// The offset of `address` in the buffer when `len` bytes from it lie inside.
    pub fn offset_of(&self, address: u64, len: u64) -> Option<u32> {
        let offset = address.checked_sub(self.base.0)?;
        let end = offset.checked_add(len)?;
        (end <= u64::from(self.size)).then_some(offset as u32)
    }

    /// The buffer's bytes from `offset`, when it has contents that far.
    pub fn bytes_from(&self, offset: u32) -> Option<&'a [u8]> {
        let bytes = self.contents?;
        let end = bytes.len().min(self.size as usize);
        bytes.get(offset as usize..end)
    }
}

/// The buffers of one submission.
#[derive(Debug, Clone, Copy)]
pub struct Buffers<'a> {
    list: &'a [Buffer<'a>],
}

impl<'a> Buffers<'a> {
    /// The buffers in `list`.
    pub const fn new(list: &'a [Buffer<'a>]) -> Self {
        Buffers { list }
    }

    /// Every buffer.
    pub fn iter(&self) -> impl Iterator<Item = &'a Buffer<'a>> {
        self.list.iter()
    }

    /// The first buffer holding `len` bytes at `address` for `purpose`, or `None`.
    pub fn find(&self, address: u64, len: u64, purpose: Purposes) -> Option<(&'a Buffer<'a>, u32)> {
        self.list.iter().find_map(|b| {
            let offset = b.offset_of(address, len)?;
            b.purposes.contains(purpose).then_some((b, offset))
        })
    }

    /// Whether any buffer holds `len` bytes at `address`.
    pub fn covers(&self, address: u64, len: u64) -> bool {
        self.find(address, len, Purposes::NONE).is_some()
    }
}
