//! Binning control list validation: the rules of Linux vc4_validate.c over the records of
//! broadcom-videocore-iv-3d §9 (Table 38, walked with the generated record table), the shader
//! records of Tables 45 and 46, and every address checked against the caller's [`Buffers`].

use core::fmt;

use baregpu_regs::packet::{Walked, records};
use baregpu_regs::vc4::packets::{
    self as cl, gl_shader_state, indexed_primitive_list, nv_shader_state,
    tile_binning_mode_configuration as tbmc, vertex_array_primitives,
};

use crate::buffers::{Buffer, Buffers, Purposes};
use crate::shader::{ShaderError, ShaderInfo, validate_shader};

/// Binner memory may not cross a multiple of 256 MiB (Linux vc4_v3d.c: the binner's address
/// arithmetic keeps the top four bits).
pub const BINNER_BOUNDARY: u64 = 1 << 28;
/// Bytes of tile state data per tile (Table 38, record 112).
pub const TILE_STATE_BYTES_PER_TILE: u64 = 48;
/// Shader records are 16-byte aligned (Table 38, records 64 and 65).
pub const SHADER_RECORD_ALIGN: u64 = 16;
/// Bytes of an NV shader state record (Table 46).
pub const NV_RECORD_BYTES: u64 = 16;
/// Attribute arrays of a GL shader state record (Table 45: n = 0-7).
pub const MAX_ATTRIBUTES: usize = 8;

/// Byte offsets in the shader state records (Tables 45 and 46).
mod record {
    pub const FLAGS: usize = 0;
    /// Flag bit 0: fragment shader single-threaded.
    pub const SINGLE_THREADED: u8 = 1 << 0;
    /// NV flag bit 1: point size in the shaded vertex.
    pub const POINT_SIZE: u8 = 1 << 1;
    /// NV flag bit 3: clip coordinates header in the shaded vertex.
    pub const CLIP_HEADER: u8 = 1 << 3;
    pub const NV_STRIDE: usize = 1;
    pub const VARYINGS: usize = 3;
    pub const FS_CODE: usize = 4;
    pub const FS_UNIFORMS: usize = 8;
    pub const NV_VERTICES: usize = 12;
    pub const VS_CODE: usize = 16;
    pub const VS_UNIFORMS: usize = 20;
    pub const CS_CODE: usize = 28;
    pub const CS_UNIFORMS: usize = 32;
    /// Attribute array n: base address at 36 + 8n, bytes - 1 at 40 + 8n, stride at 41 + 8n.
    pub const ATTRIBUTES: usize = 36;
    pub const ATTRIBUTE_BYTES: usize = 8;
    /// Extended strides (record 64's extended bit): 32 bits at 100 + 4n.
    pub const EXTENDED_STRIDES: usize = 100;
    /// Words of an NV shaded vertex before its varyings, without clip header and point size
    /// (Figure 12: Xs/Ys, Zs, 1/Wc); the clip header adds four.
    pub const NV_HEADER_WORDS: u64 = 3;
    pub const CLIP_HEADER_WORDS: u64 = 4;
}

/// What the validator accepts beyond Linux's rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct Options {
    /// Accept NV Shader State (65: pre-shaded vertices, no vertex or coordinate shader).
    /// Linux vc4_validate.c refuses it (its user space always uses 64); the project's driver
    /// draws with it. Off by default. The record gets the same checks as 64's fragment
    /// shader, and its vertices are bounded like an attribute array.
    pub allow_nv_shader_state: bool,
}

impl Options {
    /// Linux's record set (65 refused).
    pub const LINUX: Options = Options { allow_nv_shader_state: false };
    /// Linux's record set and NV Shader State (65), as `baregpu-videocore-v3d` writes it.
    pub const NV: Options = Options { allow_nv_shader_state: true };
}

/// The rule of Linux vc4_validate.c (or of this validator, where stricter) a record breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum ListRule {
    /// An id Table 38 does not have.
    UnknownRecord {
        /// The id byte.
        id: u8,
    },
    /// The list ends inside a record.
    Truncated {
        /// The record's id.
        id: u8,
    },
    /// A record a binning list from an untrusted source may not hold.
    NotAllowed {
        /// The record's id.
        id: u8,
    },
    /// An address field outside every buffer handed in.
    AddressOutsideBuffers {
        /// The address.
        address: u64,
    },
    /// A second Tile Binning Mode Configuration (112).
    BinningConfigRepeated,
    /// Start Tile Binning (6) before the configuration (112).
    StartBeforeBinningConfig,
    /// A second Start Tile Binning (6).
    StartRepeated,
    /// No Start Tile Binning (6).
    MissingStartTileBinning,
    /// A tile count of 0 across or down.
    ZeroTiles,
    /// The double-buffer flag of 112.
    DoubleBuffer,
    /// The 64-bit colour tile buffer flag of 112.
    Color64Bit,
    /// 112 without auto-initialised tile state: the array's stale pointers would be used.
    TileStateNotAutoInitialised,
    /// Tile allocation memory not inside one tile allocation buffer.
    TileAllocationOutside,
    /// Tile allocation memory smaller than one initial block per tile.
    TileAllocationTooSmall,
    /// The tile state data array (48 bytes per tile) not inside one tile state buffer, or
    /// not 16-byte aligned.
    TileStateOutside,
    /// Binner memory crossing a multiple of 256 MiB.
    CrossesBinnerBoundary,
    /// Increment Semaphore (7) not the second-last byte.
    SemaphoreNotSecondLast,
    /// Flush (4) not the last byte.
    FlushNotLast,
    /// The list does not end with Increment Semaphore (7) and Flush (4).
    MissingEnd,
    /// A primitive record (32, 33) before any shader state (64, 65).
    PrimitiveWithoutShaderState,
    /// An index list not inside one index buffer.
    IndicesOutside,
    /// An index above the record's maximum index.
    IndexAboveMaximum {
        /// The index.
        index: u32,
    },
    /// Attribute array (or NV vertex data, attribute 0) read past its buffer by the draw.
    AttributeOutOfBounds {
        /// The attribute array.
        attribute: u8,
    },
    /// Attribute array base not inside one vertex buffer.
    AttributeOutside {
        /// The attribute array.
        attribute: u8,
    },
    /// A shader record address not 16-byte aligned.
    ShaderRecordMisaligned,
    /// A shader record not inside one shader record buffer with contents.
    ShaderRecordOutside,
    /// Shader code not at byte 0 of a shader code buffer with contents.
    ShaderNotAtBufferStart {
        /// The code address.
        address: u64,
    },
    /// A shader the shader rules refuse (the error is the `source()`).
    Shader(ShaderError),
    /// The fragment shader's single-threaded flag does not match the shader.
    ThreadingMismatch,
    /// A vertex or coordinate shader that switches threads.
    VertexShaderThreaded,
    /// A shader with TMU lookups: their configuration (texture addresses) comes from the
    /// uniforms, which this validator does not check yet.
    TmuLookup,
    /// The uniforms a shader reads not inside one uniforms buffer.
    UniformsOutside,
    /// A uniform-address write whose uniform is not the stream's own address (or the
    /// uniforms buffer has no contents to check it).
    UniformAddressMismatch,
}

impl fmt::Display for ListRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ListRule::UnknownRecord { id } => write!(f, "unknown record id {id}"),
            ListRule::Truncated { id } => write!(f, "the list ends inside record {id}"),
            ListRule::NotAllowed { id } => write!(f, "record {id} is not allowed"),
            ListRule::AddressOutsideBuffers { address } => {
                write!(f, "address {address:#x} is outside every buffer")
            }
            ListRule::BinningConfigRepeated => f.write_str("second tile binning configuration"),
            ListRule::StartBeforeBinningConfig => {
                f.write_str("start tile binning before the tile binning configuration")
            }
            ListRule::StartRepeated => f.write_str("second start tile binning"),
            ListRule::MissingStartTileBinning => f.write_str("no start tile binning"),
            ListRule::ZeroTiles => f.write_str("zero tiles across or down"),
            ListRule::DoubleBuffer => f.write_str("double-buffer flag set"),
            ListRule::Color64Bit => f.write_str("64-bit colour flag set"),
            ListRule::TileStateNotAutoInitialised => {
                f.write_str("tile state data array not auto-initialised")
            }
            ListRule::TileAllocationOutside => {
                f.write_str("tile allocation memory outside the tile allocation buffers")
            }
            ListRule::TileAllocationTooSmall => {
                f.write_str("tile allocation memory smaller than one initial block per tile")
            }
            ListRule::TileStateOutside => {
                f.write_str("tile state data array outside the tile state buffers or misaligned")
            }
            ListRule::CrossesBinnerBoundary => {
                f.write_str("binner memory crosses a 256 MiB boundary")
            }
            ListRule::SemaphoreNotSecondLast => {
                f.write_str("increment semaphore is not the second-last byte")
            }
            ListRule::FlushNotLast => f.write_str("flush is not the last byte"),
            ListRule::MissingEnd => {
                f.write_str("the list does not end with increment semaphore and flush")
            }
            ListRule::PrimitiveWithoutShaderState => {
                f.write_str("primitives before any shader state")
            }
            ListRule::IndicesOutside => f.write_str("index list outside the index buffers"),
            ListRule::IndexAboveMaximum { index } => {
                write!(f, "index {index} above the record's maximum")
            }
            ListRule::AttributeOutOfBounds { attribute } => {
                write!(f, "attribute array {attribute} read past its buffer")
            }
            ListRule::AttributeOutside { attribute } => {
                write!(f, "attribute array {attribute} outside the vertex buffers")
            }
            ListRule::ShaderRecordMisaligned => f.write_str("shader record not 16-byte aligned"),
            ListRule::ShaderRecordOutside => {
                f.write_str("shader record outside the readable shader record buffers")
            }
            ListRule::ShaderNotAtBufferStart { address } => {
                write!(f, "shader code at {address:#x} is not the start of a readable code buffer")
            }
            ListRule::Shader(_) => f.write_str("shader refused"),
            ListRule::ThreadingMismatch => {
                f.write_str("fragment shader threading does not match the record's flag")
            }
            ListRule::VertexShaderThreaded => f.write_str("vertex or coordinate shader threaded"),
            ListRule::TmuLookup => f.write_str("shader uses the TMUs"),
            ListRule::UniformsOutside => f.write_str("uniforms outside the uniforms buffers"),
            ListRule::UniformAddressMismatch => {
                f.write_str("uniform-address uniform is not the stream's address")
            }
        }
    }
}

/// A list refused: the byte offset of the record (the list's length for a missing end) and
/// the rule it breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ListError {
    /// Byte offset of the record in the list.
    pub offset: usize,
    /// The rule.
    pub rule: ListRule,
}

impl fmt::Display for ListError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "list byte {:#x}: {}", self.offset, self.rule)
    }
}

impl core::error::Error for ListError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match &self.rule {
            ListRule::Shader(e) => Some(e),
            _ => None,
        }
    }
}

/// What an accepted list does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ListSummary {
    /// Tiles across.
    pub tiles_x: u8,
    /// Tiles down.
    pub tiles_y: u8,
    /// Tile allocation memory (record 112): a rendering list built for this binning list
    /// branches to each tile's list in it.
    pub tile_allocation: u64,
    /// Its size in bytes.
    pub tile_allocation_bytes: u32,
    /// Bytes of each tile's initial block (32, 64, 128 or 256): tile `n`'s list starts at
    /// `n` times this.
    pub initial_block_bytes: u32,
    /// Shader state records.
    pub shader_states: u32,
    /// Primitive records.
    pub draws: u32,
}

/// What the V3D may read for one attribute array: from `base`, `stride` per vertex, `size`
/// bytes each, up to `limit` (the end of its buffer).
#[derive(Debug, Clone, Copy, Default)]
struct Attribute {
    base: u64,
    size: u64,
    stride: u64,
    limit: u64,
}

#[derive(Debug, Clone, Copy, Default)]
struct ShaderState {
    attributes: [Attribute; MAX_ATTRIBUTES],
    count: usize,
}

/// Validation state between records.
#[derive(Default)]
struct Walk {
    config: bool,
    start: bool,
    semaphore: bool,
    flush: bool,
    shader: Option<ShaderState>,
    summary: ListSummary,
}

fn refuse<T>(offset: usize, rule: ListRule) -> Result<T, ListError> {
    Err(ListError { offset, rule })
}

/// Whether an untrusted binning list may hold record `id` (Linux vc4_validate.c's table).
fn allowed(id: u8, options: &Options) -> bool {
    matches!(id, 0 | 1 | 4..=7 | 32 | 33 | 56 | 64 | 96..=103 | 105 | 106 | 112)
        || (id == cl::NV_SHADER_STATE.opcode && options.allow_nv_shader_state)
}

/// Validate the binning control list `list` against `buffers`: every record allowed and
/// whole, every address inside a buffer of the right purpose, the shader records and shaders
/// valid, the draws inside their vertex and index buffers, the list ended as the rendering
/// thread expects.
pub fn validate_binning_list(
    list: &[u8],
    buffers: &Buffers<'_>,
    options: &Options,
) -> Result<ListSummary, ListError> {
    let mut walk = Walk::default();
    for step in records(cl::ALL, list) {
        let (at, record, bytes) = match step {
            Walked::Record { at, record, bytes } => (at, record, bytes),
            Walked::Unknown { at, id } => return refuse(at, ListRule::UnknownRecord { id }),
            Walked::Truncated { at, record, .. } => {
                return refuse(at, ListRule::Truncated { id: record.opcode });
            }
            Walked::OpenEnded { at, record, .. } => {
                return refuse(at, ListRule::NotAllowed { id: record.opcode });
            }
        };
        let id = record.opcode;
        if !allowed(id, options) {
            return refuse(at, ListRule::NotAllowed { id });
        }
        for field in record.fields.iter().filter(|f| f.is_address()) {
            let address = field.address(bytes).0;
            if !buffers.covers(address, 1) {
                return refuse(at, ListRule::AddressOutsideBuffers { address });
            }
        }
        let check = match id {
            0 => break, // HALT: the executor stops here.
            4 => {
                walk.flush = true;
                ok_if(at + 1 == list.len(), ListRule::FlushNotLast)
            }
            7 => {
                walk.semaphore = true;
                ok_if(at + 2 == list.len(), ListRule::SemaphoreNotSecondLast)
            }
            6 => {
                let rule = if !walk.config {
                    Err(ListRule::StartBeforeBinningConfig)
                } else {
                    ok_if(!walk.start, ListRule::StartRepeated)
                };
                walk.start = true;
                rule
            }
            112 => binning_config(&mut walk, bytes, buffers),
            32 | 33 => draw(&mut walk, id, bytes, buffers),
            64 | 65 => shader_state(&mut walk, id, bytes, buffers),
            _ => Ok(()),
        };
        check.map_err(|rule| ListError { offset: at, rule })?;
    }
    if !walk.start {
        return refuse(list.len(), ListRule::MissingStartTileBinning);
    }
    if !(walk.semaphore && walk.flush) {
        return refuse(list.len(), ListRule::MissingEnd);
    }
    Ok(walk.summary)
}

fn ok_if(ok: bool, rule: ListRule) -> Result<(), ListRule> {
    if ok { Ok(()) } else { Err(rule) }
}

fn crosses_boundary(base: u64, len: u64) -> bool {
    let last = base + len.max(1) - 1;
    base / BINNER_BOUNDARY != last / BINNER_BOUNDARY
}

/// Tile Binning Mode Configuration (112).
fn binning_config(walk: &mut Walk, bytes: &[u8], buffers: &Buffers<'_>) -> Result<(), ListRule> {
    ok_if(!walk.config, ListRule::BinningConfigRepeated)?;
    walk.config = true;
    let (x, y) = (tbmc::WIDTH.get(bytes), tbmc::HEIGHT.get(bytes));
    ok_if(x != 0 && y != 0, ListRule::ZeroTiles)?;
    ok_if(tbmc::DOUBLE_BUFFER_IN_NON_MS_MODE.get(bytes) == 0, ListRule::DoubleBuffer)?;
    ok_if(tbmc::TILE_BUFFER_64_BIT_COLOR_DEPTH.get(bytes) == 0, ListRule::Color64Bit)?;
    ok_if(
        tbmc::AUTO_INITIALISE_TILE_STATE_DATA_ARRAY.get(bytes) != 0,
        ListRule::TileStateNotAutoInitialised,
    )?;
    let tiles = x * y;
    let ta = tbmc::TILE_ALLOCATION_MEMORY_ADDRESS.address(bytes).0;
    let ta_size = tbmc::TILE_ALLOCATION_MEMORY_SIZE.get(bytes);
    buffers.find(ta, ta_size, Purposes::TILE_ALLOCATION).ok_or(ListRule::TileAllocationOutside)?;
    // Initial block of 32 << n bytes (Table 38, record 112).
    let initial = 32u64 << tbmc::TILE_ALLOCATION_INITIAL_BLOCK_SIZE.get(bytes);
    ok_if(ta_size >= tiles * initial, ListRule::TileAllocationTooSmall)?;
    let ts = tbmc::TILE_STATE_DATA_ARRAY_BASE_ADDRESS.address(bytes).0;
    let ts_size = tiles * TILE_STATE_BYTES_PER_TILE;
    buffers.find(ts, ts_size, Purposes::TILE_STATE).ok_or(ListRule::TileStateOutside)?;
    ok_if(ts.is_multiple_of(SHADER_RECORD_ALIGN), ListRule::TileStateOutside)?;
    ok_if(
        !crosses_boundary(ta, ta_size) && !crosses_boundary(ts, ts_size),
        ListRule::CrossesBinnerBoundary,
    )?;
    walk.summary.tiles_x = x as u8;
    walk.summary.tiles_y = y as u8;
    walk.summary.tile_allocation = ta;
    walk.summary.tile_allocation_bytes = ta_size as u32;
    walk.summary.initial_block_bytes = initial as u32;
    Ok(())
}

/// Indexed Primitive List (32) or Vertex Array Primitives (33): the highest vertex the draw
/// reads, checked against every attribute array of the current shader state.
fn draw(walk: &mut Walk, id: u8, bytes: &[u8], buffers: &Buffers<'_>) -> Result<(), ListRule> {
    let state = walk.shader.ok_or(ListRule::PrimitiveWithoutShaderState)?;
    walk.summary.draws += 1;
    let max_index = if id == cl::VERTEX_ARRAY_PRIMITIVES.opcode {
        let length = vertex_array_primitives::LENGTH.get(bytes);
        let first = vertex_array_primitives::INDEX_OF_FIRST_VERTEX.get(bytes);
        if length == 0 {
            return Ok(());
        }
        first + length - 1
    } else {
        let length = indexed_primitive_list::LENGTH.get(bytes);
        if length == 0 {
            return Ok(());
        }
        // Index type 0: 8-bit, 1: 16-bit (Table 38, record 32).
        let size = if indexed_primitive_list::INDEX_TYPE.get(bytes) == 0 { 1 } else { 2 };
        let address = indexed_primitive_list::ADDRESS_OF_INDICES_LIST.address(bytes).0;
        let max = indexed_primitive_list::MAXIMUM_INDEX.get(bytes);
        let (buffer, offset) = buffers
            .find(address, length * size, Purposes::INDICES)
            .ok_or(ListRule::IndicesOutside)?;
        check_indices(buffer, offset, length, size, max)?;
        max
    };
    for (n, a) in state.attributes[..state.count].iter().enumerate() {
        let end = max_index
            .checked_mul(a.stride)
            .and_then(|v| v.checked_add(a.base))
            .and_then(|v| v.checked_add(a.size));
        if end.is_none_or(|end| end > a.limit) {
            return Err(ListRule::AttributeOutOfBounds { attribute: n as u8 });
        }
    }
    Ok(())
}

/// Each index of a list whose bytes the caller handed in, against the record's maximum
/// (Linux trusts the maximum field; with the bytes at hand the validator checks it).
fn check_indices(
    buffer: &Buffer<'_>,
    offset: u32,
    length: u64,
    size: u64,
    max: u64,
) -> Result<(), ListRule> {
    let Some(bytes) = buffer.bytes_from(offset) else { return Ok(()) };
    let len = (length * size) as usize;
    let Some(indices) = bytes.get(..len) else { return Ok(()) };
    for chunk in indices.chunks_exact(size as usize) {
        let index = if size == 1 {
            u32::from(chunk[0])
        } else {
            u32::from(u16::from_le_bytes([chunk[0], chunk[1]]))
        };
        if u64::from(index) > max {
            return Err(ListRule::IndexAboveMaximum { index });
        }
    }
    Ok(())
}

fn word(bytes: &[u8], at: usize) -> u64 {
    u64::from(u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]))
}

/// GL (64) or NV (65) Shader State: the record read from its buffer, its shaders validated,
/// their uniforms bounded, its attribute arrays kept for the draws.
fn shader_state(
    walk: &mut Walk,
    id: u8,
    bytes: &[u8],
    buffers: &Buffers<'_>,
) -> Result<(), ListRule> {
    let nv = id == cl::NV_SHADER_STATE.opcode;
    let (address, size, attributes, extended) = if nv {
        let a = nv_shader_state::MEMORY_ADDRESS_OF_SHADER_RECORD.address(bytes).0;
        ok_if(a.is_multiple_of(SHADER_RECORD_ALIGN), ListRule::ShaderRecordMisaligned)?;
        (a, NV_RECORD_BYTES, 0, false)
    } else {
        let a = gl_shader_state::MEMORY_ADDRESS_OF_SHADER_RECORD.address(bytes).0;
        let extended = gl_shader_state::EXTENDED_SHADER_RECORD_WITH_26_BIT_ATTRIBUTE_MEMORY_STRIDE
            .get(bytes)
            != 0;
        // Attribute arrays: 0 means 8 (Table 38, record 64).
        let n = match gl_shader_state::NUMBER_OF_ATTRIBUTE_ARRAYS.get(bytes) {
            0 => MAX_ATTRIBUTES,
            n => n as usize,
        };
        let size = if extended {
            record::EXTENDED_STRIDES + 4 * n
        } else {
            record::ATTRIBUTES + record::ATTRIBUTE_BYTES * n
        };
        (a, size as u64, n, extended)
    };
    let (buffer, offset) = buffers
        .find(address, size, Purposes::SHADER_RECORDS)
        .ok_or(ListRule::ShaderRecordOutside)?;
    let rec = buffer
        .bytes_from(offset)
        .and_then(|b| b.get(..size as usize))
        .ok_or(ListRule::ShaderRecordOutside)?;
    let flags = rec[record::FLAGS];
    let fs = shader(rec, record::FS_CODE, record::FS_UNIFORMS, buffers)?;
    ok_if(fs.threaded == (flags & record::SINGLE_THREADED == 0), ListRule::ThreadingMismatch)?;
    let mut state = ShaderState::default();
    if nv {
        // One "attribute": the shaded vertices (Figure 12).
        let words = record::NV_HEADER_WORDS
            + u64::from(rec[record::VARYINGS])
            + u64::from(flags & record::POINT_SIZE != 0)
            + if flags & record::CLIP_HEADER != 0 { record::CLIP_HEADER_WORDS } else { 0 };
        let base = word(rec, record::NV_VERTICES);
        state.attributes[0] =
            attribute(buffers, 0, base, words * 4, u64::from(rec[record::NV_STRIDE]))?;
        state.count = 1;
    } else {
        for (code, uniforms) in
            [(record::VS_CODE, record::VS_UNIFORMS), (record::CS_CODE, record::CS_UNIFORMS)]
        {
            let info = shader(rec, code, uniforms, buffers)?;
            ok_if(!info.threaded, ListRule::VertexShaderThreaded)?;
        }
        for n in 0..attributes {
            let at = record::ATTRIBUTES + record::ATTRIBUTE_BYTES * n;
            let base = word(rec, at);
            let size = u64::from(rec[at + 4]) + 1;
            let stride = if extended {
                word(rec, record::EXTENDED_STRIDES + 4 * n)
            } else {
                u64::from(rec[at + 5])
            };
            state.attributes[n] = attribute(buffers, n as u8, base, size, stride)?;
        }
        state.count = attributes;
    }
    walk.shader = Some(state);
    walk.summary.shader_states += 1;
    Ok(())
}

fn attribute(
    buffers: &Buffers<'_>,
    n: u8,
    base: u64,
    size: u64,
    stride: u64,
) -> Result<Attribute, ListRule> {
    let (buffer, _) = buffers
        .find(base, size, Purposes::VERTICES)
        .ok_or(ListRule::AttributeOutside { attribute: n })?;
    Ok(Attribute {
        base,
        size,
        stride,
        limit: buffer.base.0.saturating_add(u64::from(buffer.size)),
    })
}

/// The shader whose code and uniforms addresses a record holds at `code_at` and
/// `uniforms_at`: at byte 0 of a code buffer, valid, without TMU lookups, its uniforms
/// inside a uniforms buffer (and each uniform-address write's uniform the stream's address).
fn shader(
    rec: &[u8],
    code_at: usize,
    uniforms_at: usize,
    buffers: &Buffers<'_>,
) -> Result<ShaderInfo, ListRule> {
    let address = word(rec, code_at);
    let code = buffers
        .find(address, 1, Purposes::SHADER_CODE)
        .filter(|(_, offset)| *offset == 0)
        .and_then(|(b, _)| b.bytes_from(0))
        .ok_or(ListRule::ShaderNotAtBufferStart { address })?;
    let info = validate_shader(code).map_err(ListRule::Shader)?;
    ok_if(info.tmu_lookups == 0, ListRule::TmuLookup)?;
    let uniforms = word(rec, uniforms_at);
    let (buffer, offset) = buffers
        .find(uniforms, u64::from(info.uniforms) * 4, Purposes::UNIFORMS)
        .ok_or(ListRule::UniformsOutside)?;
    for &position in &info.uniform_address_writes[..info.uniform_address_write_count] {
        let at = offset as usize + position as usize * 4;
        let value = buffer.bytes_from(0).and_then(|b| b.get(at..at + 4)).map(|b| word(b, 0));
        ok_if(value == Some(uniforms), ListRule::UniformAddressMismatch)?;
    }
    Ok(info)
}
