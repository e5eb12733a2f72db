//! Render jobs: a frame of NV-mode triangles (pre-shaded vertices, broadcom-videocore-iv-3d §8
//! "NV mode") turned into the two control lists of §8 "System Operation" (a binning list for
//! control list executor thread 0, a rendering list for thread 1), written with
//! `baregpu_ring::vc4::ControlListWriter` into caller-provided DMA buffers. No register is
//! touched here; [`crate::V3d`] submits the lists.
//!
//! The records and their order follow §9's rules (Table 38 and the list above it) and the
//! minimal jobs of Mesa vc4 (vc4_draw.c, binning) and Linux vc4 (vc4_render_cl.c, rendering):
//!
//! - binning: Tile Binning Mode Configuration (112), Start Tile Binning (6), Primitive List
//!   Format (56), state (Clip Window 102, Configuration Bits 96, Clipper XY Scaling 105,
//!   Clipper Z Scale and Offset 106, Viewport Offset 103, Flat Shade Flags 97), NV Shader State
//!   (65), Vertex Array Primitives (33), then Increment Semaphore (7) and Flush (4) as the last
//!   two bytes;
//! - rendering: Clear Colors (114), Tile Rendering Mode Configuration (113), a tile (0, 0) with
//!   a Store Tile Buffer General (28) of nothing, which applies the clear colours (Linux
//!   vc4_render_cl.c), then per tile: Tile Coordinates (115), Wait On Semaphore (8) before the
//!   first tile's list only, Branch To Sub-list (17) to the tile's list in tile allocation
//!   memory, Store Multi-sample Resolved Tile Color Buffer (24), or (25, end of frame) on the
//!   last tile.

use baregpu_hal::dma::{BusAddress, DmaRegion};
use baregpu_regs::packet::ListKind;
use baregpu_regs::vc4::packets::{
    self as cl, clear_colors, clip_window, clipper_xy_scaling, clipper_z_scale_and_offset,
    configuration_bits, flat_shade_flags, nv_shader_state, primitive_list_format,
    store_tile_buffer_general, tile_binning_mode_configuration, tile_coordinates,
    tile_rendering_mode_configuration, vertex_array_primitives, viewport_offset,
};
use baregpu_ring::stream::{CommandSink, NoSpace, StreamUnit};
use baregpu_ring::vc4::{ControlListWriter, Relocate, Relocation, RelocationError};
use baregpu_vc4_validate::{Buffer, Buffers, Options, validate_binning_list};

use crate::error::{JobBuffer, JobError};

/// Tile width and height in pixels without multisampling (§5: the tile buffer holds 64x64
/// pixels, 32x32 in 4x multisample mode).
pub const TILE_PIXELS: u32 = 64;
/// Bytes of tile state data per tile (Table 38, record 112: "size of 48 bytes * num tiles").
pub const TILE_STATE_BYTES_PER_TILE: usize = 48;
/// Bytes of each tile's initial block in tile allocation memory: the driver asks for the
/// 32-byte initial block (record 112's smallest), as Linux vc4 does, so tile `n`'s list
/// starts at `n * 32` (Linux vc4_render_cl.c).
pub const TILE_INITIAL_BLOCK_BYTES: usize = 32;
/// The binner rounds the area of the initial blocks up to this many bytes and takes its
/// further blocks after it; tile allocation memory smaller than the rounded area is refused
/// (not in the document; the emulated V3D's binner does so, and Linux vc4 always gives the
/// binner far more than the initial area).
pub const TILE_INITIAL_AREA_ALIGN: usize = 256;
/// Tile state data array and shader record alignment (Table 38 record 112, Table 46 via
/// record 65).
pub const RECORD_ALIGN: u64 = 16;
/// Binner memory may not cross a multiple of 256 MiB (Linux vc4_v3d.c: the binner's address
/// arithmetic keeps the top four bits).
pub const BINNER_BOUNDARY: u64 = 1 << 28;
/// Most varyings per vertex a [`RenderJob`] carries (the driver's choice: the shader record
/// holds a byte, Table 46; eight keeps [`NvVertex`] small).
pub const MAX_VARYINGS: usize = 8;
/// Bytes of the NV shader state record (Table 46).
pub const SHADER_RECORD_BYTES: usize = 16;
/// Words of a shaded vertex before its varyings without a clip header or point size (Figure
/// 12: Xs/Ys, Zs, 1/Wc).
const VERTEX_HEADER_WORDS: usize = 3;
/// Largest tile count each way (record 112: width and height in tiles are 8-bit).
const MAX_TILES: u32 = u8::MAX as u32;
/// Sub-pixel steps per pixel of the s12.4 screen coordinates (Figure 12).
const SUBPIXELS: f32 = 16.0;

/// Bytes the binning list of every job takes (the records listed in the module docs).
pub const BINNING_LIST_BYTES: usize = cl::TILE_BINNING_MODE_CONFIGURATION.bytes
    + cl::START_TILE_BINNING.bytes
    + cl::PRIMITIVE_LIST_FORMAT.bytes
    + cl::CLIP_WINDOW.bytes
    + cl::CONFIGURATION_BITS.bytes
    + cl::CLIPPER_XY_SCALING.bytes
    + cl::CLIPPER_Z_SCALE_AND_OFFSET.bytes
    + cl::VIEWPORT_OFFSET.bytes
    + cl::FLAT_SHADE_FLAGS.bytes
    + cl::NV_SHADER_STATE.bytes
    + cl::VERTEX_ARRAY_PRIMITIVES.bytes
    + cl::INCREMENT_SEMAPHORE.bytes
    + cl::FLUSH.bytes;

/// Bytes a DMA buffer needs to hold a list of `list_bytes`: the list rounded up to whole
/// dwords. A `DmaRegion` is written by dwords, so the bytes of a partial last dword cannot be
/// stored: allocate list buffers with this (a buffer of exactly [`BINNING_LIST_BYTES`] is
/// refused with [`JobError::BufferTooSmall`], where it used to lose the closing Flush).
pub const fn list_buffer_bytes(list_bytes: usize) -> usize {
    list_bytes.next_multiple_of(4)
}

/// Bytes of the rendering list for `tiles` tiles.
pub const fn rendering_list_bytes(tiles: usize) -> usize {
    cl::CLEAR_COLORS.bytes
        + cl::TILE_RENDERING_MODE_CONFIGURATION.bytes
        + cl::TILE_COORDINATES.bytes
        + cl::STORE_TILE_BUFFER_GENERAL.bytes
        + cl::WAIT_ON_SEMAPHORE.bytes
        + tiles
            * (cl::TILE_COORDINATES.bytes
                + cl::BRANCH_TO_SUB_LIST.bytes
                + cl::STORE_MULTI_SAMPLE_RESOLVED_TILE_COLOR_BUFFER.bytes)
}

/// Frame buffer pixel format (record 113, non-HDR colour format).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum ColorFormat {
    /// 32-bit RGBA.
    Rgba8888,
    /// 16-bit BGR565.
    Bgr565,
    /// 16-bit BGR565, dithered.
    Bgr565Dithered,
}

impl ColorFormat {
    /// Bytes per pixel.
    pub const fn bytes_per_pixel(self) -> u32 {
        match self {
            ColorFormat::Rgba8888 => 4,
            ColorFormat::Bgr565 | ColorFormat::Bgr565Dithered => 2,
        }
    }

    fn record(self) -> tile_rendering_mode_configuration::NonHdrFrameBufferColorFormat {
        use tile_rendering_mode_configuration::NonHdrFrameBufferColorFormat as F;
        match self {
            ColorFormat::Rgba8888 => F::Rgba8888,
            ColorFormat::Bgr565 => F::Bgr565,
            ColorFormat::Bgr565Dithered => F::Bgr565Dithered,
        }
    }
}

/// Where the frame is stored: a linear (raster) frame buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Framebuffer {
    /// Bus address of pixel (0, 0).
    pub address: BusAddress,
    /// Pixels.
    pub width: u16,
    /// Pixels.
    pub height: u16,
    /// Pixel format.
    pub format: ColorFormat,
}

impl Framebuffer {
    /// Bytes the frame buffer spans.
    pub fn bytes(&self) -> u32 {
        u32::from(self.width) * u32::from(self.height) * self.format.bytes_per_pixel()
    }
}

/// A pre-shaded vertex (Figure 12, without clip header or point size): screen position in
/// pixels (stored as s12.4), Zs, 1/Wc and the varyings the fragment shader reads.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct NvVertex {
    /// Screen X in pixels.
    pub x: f32,
    /// Screen Y in pixels.
    pub y: f32,
    /// Zs.
    pub z: f32,
    /// 1/Wc (1.0 for a flat 2D triangle).
    pub inv_w: f32,
    /// Varyings; the first [`RenderJob::varyings`] are stored.
    pub varyings: [f32; MAX_VARYINGS],
}

impl NvVertex {
    /// A vertex at (`x`, `y`) pixels, Z 0, 1/W 1, no varyings.
    pub const fn at(x: f32, y: f32) -> Self {
        NvVertex { x, y, z: 0.0, inv_w: 1.0, varyings: [0.0; MAX_VARYINGS] }
    }

    /// This vertex with `varyings` (at most [`MAX_VARYINGS`]; more are ignored).
    pub fn with_varyings(mut self, varyings: &[f32]) -> Self {
        for (slot, v) in self.varyings.iter_mut().zip(varyings) {
            *slot = *v;
        }
        self
    }
}

/// The fragment shader the job runs: code and uniforms in memory the caller owns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct FragmentShader {
    /// Bus address of the first instruction.
    pub code: BusAddress,
    /// Bus address of the uniforms stream.
    pub uniforms: BusAddress,
    /// The shader is single-threaded (Table 46 flag bit 0).
    pub single_threaded: bool,
}

/// One frame: NV-mode triangles shaded by one fragment shader into a cleared frame buffer.
#[derive(Debug, Clone, Copy)]
pub struct RenderJob<'a> {
    /// Where the frame goes.
    pub framebuffer: Framebuffer,
    /// The clear colour, in the frame buffer's format (Table 38 record 114).
    pub clear_color: u32,
    /// Triangles, three vertices each.
    pub triangles: &'a [[NvVertex; 3]],
    /// Varyings per vertex (0..=[`MAX_VARYINGS`]).
    pub varyings: usize,
    /// The fragment shader.
    pub shader: FragmentShader,
}

/// The DMA buffers a job is built into, owned by the caller (kept unchanged until the job's
/// fence signalled).
#[derive(Debug, Clone, Copy)]
pub struct JobMemory<'a> {
    /// The binning list ([`list_buffer_bytes`] of [`BINNING_LIST_BYTES`]).
    pub binning_list: &'a DmaRegion,
    /// The rendering list ([`list_buffer_bytes`] of [`rendering_list_bytes`]).
    pub rendering_list: &'a DmaRegion,
    /// Tile allocation memory (at least [`TileLayout::tile_allocation_bytes`], not crossing a
    /// 256 MiB boundary).
    pub tile_allocation: &'a DmaRegion,
    /// The tile state data array ([`TileLayout::tile_state_bytes`], 16-byte aligned, not
    /// crossing a 256 MiB boundary).
    pub tile_state: &'a DmaRegion,
    /// The shader record and the vertices ([`vertex_buffer_bytes`], 16-byte aligned).
    pub vertices: &'a DmaRegion,
}

/// How a frame buffer is cut into tiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct TileLayout {
    /// Tile columns.
    pub tiles_x: u32,
    /// Tile rows.
    pub tiles_y: u32,
}

impl TileLayout {
    /// The tiles of a `width` x `height` pixel frame (64x64-pixel tiles, non-multisample).
    pub fn of(width: u32, height: u32) -> Result<TileLayout, JobError> {
        let layout = TileLayout {
            tiles_x: width.div_ceil(TILE_PIXELS),
            tiles_y: height.div_ceil(TILE_PIXELS),
        };
        let fits = |t: u32| (1..=MAX_TILES).contains(&t);
        if !fits(layout.tiles_x) || !fits(layout.tiles_y) {
            return Err(JobError::BadFramebuffer { width, height });
        }
        Ok(layout)
    }

    /// Tiles in the frame.
    pub fn tiles(&self) -> usize {
        (self.tiles_x * self.tiles_y) as usize
    }

    /// Bytes of the tile state data array (48 per tile, Table 38).
    pub fn tile_state_bytes(&self) -> usize {
        self.tiles() * TILE_STATE_BYTES_PER_TILE
    }

    /// Least tile allocation memory: one initial block per tile, the area rounded up to
    /// [`TILE_INITIAL_AREA_ALIGN`]. The binner takes further blocks from the rest of it, then
    /// from the overflow pool (OUTOMEM).
    pub fn tile_allocation_bytes(&self) -> usize {
        (self.tiles() * TILE_INITIAL_BLOCK_BYTES).next_multiple_of(TILE_INITIAL_AREA_ALIGN)
    }
}

/// The least bytes each buffer of a job ([`JobMemory`]) takes: what [`build`] checks the
/// buffers against, for the caller to allocate them by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct JobBufferSizes {
    /// [`list_buffer_bytes`] of [`BINNING_LIST_BYTES`].
    pub binning_list: usize,
    /// [`list_buffer_bytes`] of [`rendering_list_bytes`].
    pub rendering_list: usize,
    /// [`TileLayout::tile_allocation_bytes`] (more gives the binner room before OUTOMEM).
    pub tile_allocation: usize,
    /// [`TileLayout::tile_state_bytes`].
    pub tile_state: usize,
    /// [`vertex_buffer_bytes`].
    pub vertices: usize,
}

impl JobBufferSizes {
    /// The sizes for a frame of `tiles` and `vertices` vertices of `varyings` varyings each
    /// (three vertices per triangle).
    pub fn of(tiles: TileLayout, vertices: usize, varyings: usize) -> JobBufferSizes {
        JobBufferSizes {
            binning_list: list_buffer_bytes(BINNING_LIST_BYTES),
            rendering_list: list_buffer_bytes(rendering_list_bytes(tiles.tiles())),
            tile_allocation: tiles.tile_allocation_bytes(),
            tile_state: tiles.tile_state_bytes(),
            vertices: vertex_buffer_bytes(vertices, varyings),
        }
    }
}

/// Bytes the shader record and `vertices` vertices with `varyings` varyings take.
pub const fn vertex_buffer_bytes(vertices: usize, varyings: usize) -> usize {
    SHADER_RECORD_BYTES + vertices * (VERTEX_HEADER_WORDS + varyings) * 4
}

/// A control list in memory: what `V3D_CTnCA` and `V3D_CTnEA` are given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ListRange {
    /// Bus address of the first record.
    pub start: BusAddress,
    /// Bus address after the last record.
    pub end: BusAddress,
}

/// A job's lists, ready to submit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct BuiltJob {
    /// Thread 0's list.
    pub binning: ListRange,
    /// Thread 1's list.
    pub rendering: ListRange,
    /// The frame's tiles.
    pub tiles: TileLayout,
}

/// The buffers a job's records point into, for the list writer's relocation hook: every
/// address the lists hold goes through [`Relocate::bus_address`] here, bounds-checked.
#[derive(Debug, Clone, Copy)]
struct JobAddresses {
    tile_allocation: (BusAddress, usize),
    tile_state: (BusAddress, usize),
    vertices: (BusAddress, usize),
    framebuffer: (BusAddress, usize),
}

impl Relocate for JobAddresses {
    type Buffer = JobBuffer;

    fn bus_address(
        &mut self,
        buffer: JobBuffer,
        offset: u32,
    ) -> Result<BusAddress, RelocationError> {
        let (base, size) = match buffer {
            JobBuffer::TileAllocation => self.tile_allocation,
            JobBuffer::TileState => self.tile_state,
            JobBuffer::Vertices => self.vertices,
            JobBuffer::Framebuffer => self.framebuffer,
            _ => return Err(RelocationError::UnknownBuffer),
        };
        let size32 = u32::try_from(size).unwrap_or(u32::MAX);
        if offset >= size32 {
            return Err(RelocationError::OutOfBounds { offset, size: size32 });
        }
        let address = base.0 + u64::from(offset);
        // The V3D has 32-bit bus addresses (every address field of Table 38 is 32 bits).
        if address > u64::from(u32::MAX) {
            return Err(RelocationError::Unreachable);
        }
        Ok(BusAddress(address))
    }
}

/// A byte sink over a DMA region: a control list written in place, in the region's whole
/// dwords (the bytes of a partial last dword cannot be stored, so they are not offered).
#[derive(Debug)]
pub struct RegionSink<'a> {
    region: &'a DmaRegion,
    len: usize,
    granted: usize,
}

impl<'a> RegionSink<'a> {
    /// An empty list at the start of `region`.
    pub fn new(region: &'a DmaRegion) -> Self {
        RegionSink { region, len: 0, granted: 0 }
    }

    /// Bytes written.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl CommandSink<u8> for RegionSink<'_> {
    fn reserve(&mut self, units: usize) -> Result<(), NoSpace> {
        let free = (self.region.size() & !3) - self.len;
        if units > free {
            return Err(NoSpace { needed: units, free });
        }
        self.granted = units;
        Ok(())
    }

    fn push(&mut self, unit: u8) -> Result<(), NoSpace> {
        self.push_slice(&[unit])
    }

    fn push_slice(&mut self, units: &[u8]) -> Result<(), NoSpace> {
        if units.len() > self.granted {
            return Err(NoSpace { needed: units.len(), free: self.granted });
        }
        u8::store_slice(self.region, self.len, units);
        self.len += units.len();
        self.granted -= units.len();
        Ok(())
    }
}

fn need(buffer: JobBuffer, region: &DmaRegion, needed: usize) -> Result<(), JobError> {
    if region.size() < needed {
        return Err(JobError::BufferTooSmall { buffer, needed, size: region.size() });
    }
    Ok(())
}

fn aligned(buffer: JobBuffer, region: &DmaRegion, align: u64) -> Result<(), JobError> {
    if !region.bus_address().0.is_multiple_of(align) {
        return Err(JobError::Misaligned { buffer, align });
    }
    Ok(())
}

/// `Err` when `size` bytes at `base` cross a multiple of [`BINNER_BOUNDARY`].
pub(crate) fn within_binner_boundary(
    buffer: JobBuffer,
    base: BusAddress,
    size: usize,
) -> Result<(), JobError> {
    let last = base.0 + (size.max(1) as u64) - 1;
    if base.0 / BINNER_BOUNDARY != last / BINNER_BOUNDARY {
        return Err(JobError::CrossesBinnerBoundary { buffer });
    }
    Ok(())
}

fn region(r: &DmaRegion) -> (BusAddress, usize) {
    (r.bus_address(), r.size())
}

/// s12.4 screen coordinate of `pixels` (Figure 12), rounded to the nearest sixteenth.
fn subpixel(pixels: f32) -> Result<i16, JobError> {
    let v = pixels * SUBPIXELS;
    if !v.is_finite() || v < f32::from(i16::MIN) || v > f32::from(i16::MAX) {
        return Err(JobError::CoordinateOutOfRange);
    }
    let rounded = if v >= 0.0 { v + 0.5 } else { v - 0.5 };
    Ok(rounded as i16)
}

/// The shaded vertex words of Figure 12 (no clip header, no point size): Xs in the low and
/// Ys in the high half of word 0, then Zs, 1/Wc and the varyings.
fn vertex_words(
    v: &NvVertex,
    varyings: usize,
    out: &mut [u32; VERTEX_HEADER_WORDS + MAX_VARYINGS],
) -> Result<usize, JobError> {
    let xs = u32::from(subpixel(v.x)? as u16);
    let ys = u32::from(subpixel(v.y)? as u16);
    out[0] = xs | ys << 16;
    out[1] = v.z.to_bits();
    out[2] = v.inv_w.to_bits();
    for (slot, value) in out[VERTEX_HEADER_WORDS..].iter_mut().zip(&v.varyings[..varyings]) {
        *slot = value.to_bits();
    }
    Ok(VERTEX_HEADER_WORDS + varyings)
}

/// The NV shader state record (Table 46) as four little-endian words: byte 0 the flags (bit
/// 0: single-threaded fragment shader; no clip header, no clipping, no point size), byte 1
/// the shaded vertex stride, byte 2 the uniforms count (not used), byte 3 the varyings; then
/// the fragment shader code and uniforms addresses and the shaded vertex data address.
fn nv_shader_record(
    shader: &FragmentShader,
    stride: u8,
    varyings: u8,
    vertices: BusAddress,
) -> Result<[u32; SHADER_RECORD_BYTES / 4], JobError> {
    let word =
        |a: BusAddress| u32::try_from(a.0).map_err(|_| JobError::AddressAbove4GiB { address: a.0 });
    let flags = u32::from(shader.single_threaded);
    let head = u32::from_le_bytes([flags as u8, stride, 0, varyings]);
    Ok([head, word(shader.code)?, word(shader.uniforms)?, word(vertices)?])
}

/// Build `job`'s binning and rendering lists, shader record and vertices into `memory`.
///
/// Every size and alignment is checked before a byte is written; a failure in the writer
/// leaves the buffers partly written but nothing submitted.
pub fn build(job: &RenderJob<'_>, memory: &JobMemory<'_>) -> Result<BuiltJob, JobError> {
    let fb = &job.framebuffer;
    let tiles = TileLayout::of(u32::from(fb.width), u32::from(fb.height))?;
    if job.triangles.is_empty() {
        return Err(JobError::NoTriangles);
    }
    if job.varyings > MAX_VARYINGS {
        return Err(JobError::TooManyVaryings { varyings: job.varyings });
    }
    let vertex_count = job.triangles.len() * 3;
    let sizes = JobBufferSizes::of(tiles, vertex_count, job.varyings);
    need(JobBuffer::BinningList, memory.binning_list, sizes.binning_list)?;
    need(JobBuffer::RenderingList, memory.rendering_list, sizes.rendering_list)?;
    need(JobBuffer::TileAllocation, memory.tile_allocation, sizes.tile_allocation)?;
    need(JobBuffer::TileState, memory.tile_state, sizes.tile_state)?;
    need(JobBuffer::Vertices, memory.vertices, sizes.vertices)?;
    aligned(JobBuffer::TileState, memory.tile_state, RECORD_ALIGN)?;
    aligned(JobBuffer::Vertices, memory.vertices, RECORD_ALIGN)?;
    let (ta, ta_size) = region(memory.tile_allocation);
    within_binner_boundary(JobBuffer::TileAllocation, ta, ta_size)?;
    let (ts, ts_size) = region(memory.tile_state);
    within_binner_boundary(JobBuffer::TileState, ts, ts_size)?;
    let length = u32::try_from(vertex_count).map_err(|_| JobError::NoTriangles)?;

    // Shader record, then the vertices right after it.
    let stride_words = VERTEX_HEADER_WORDS + job.varyings;
    let stride = (stride_words * 4) as u8;
    let vertices_at = BusAddress(memory.vertices.bus_address().0 + SHADER_RECORD_BYTES as u64);
    let record = nv_shader_record(&job.shader, stride, job.varyings as u8, vertices_at)?;
    memory.vertices.write_slice(0, &record)?;
    let mut words = [0u32; VERTEX_HEADER_WORDS + MAX_VARYINGS];
    let mut at = SHADER_RECORD_BYTES;
    for v in job.triangles.iter().flatten() {
        let n = vertex_words(v, job.varyings, &mut words)?;
        memory.vertices.write_slice(at, &words[..n])?;
        at += n * 4;
    }

    let addresses = JobAddresses {
        tile_allocation: (ta, ta_size),
        tile_state: (ts, ts_size),
        vertices: region(memory.vertices),
        framebuffer: (fb.address, fb.bytes() as usize),
    };
    let binning = binning_list(job, tiles, length, memory, addresses)?;
    let rendering = rendering_list(fb, job.clear_color, tiles, memory.rendering_list, addresses)?;
    Ok(BuiltJob { binning, rendering, tiles })
}

fn range(region: &DmaRegion, len: usize) -> ListRange {
    let start = region.bus_address();
    ListRange { start, end: BusAddress(start.0 + len as u64) }
}

fn binning_list(
    job: &RenderJob<'_>,
    tiles: TileLayout,
    vertices: u32,
    memory: &JobMemory<'_>,
    addresses: JobAddresses,
) -> Result<ListRange, JobError> {
    let fb = &job.framebuffer;
    let mut list =
        ControlListWriter::new(RegionSink::new(memory.binning_list), ListKind::Binning, addresses);
    // 112: tile allocation memory and the tile state data array, auto-initialised; the
    // 32-byte initial block per tile the rendering list's branches assume and 128-byte
    // further blocks (Linux vc4 vc4_validate.c forces the same).
    {
        use tile_binning_mode_configuration::{
            Body, TILE_ALLOCATION_MEMORY_ADDRESS as TA, TILE_STATE_DATA_ARRAY_BASE_ADDRESS as TS,
            TileAllocationBlockSize, TileAllocationInitialBlockSize,
        };
        let size = u32::try_from(memory.tile_allocation.size()).unwrap_or(u32::MAX);
        let body = Body::new()
            .with_tile_allocation_memory_size(size)
            .with_width(tiles.tiles_x)?
            .with_height(tiles.tiles_y)?
            .with_auto_initialise_tile_state_data_array(true)
            .with_tile_allocation_initial_block_size(TileAllocationInitialBlockSize::V32Bytes)
            .with_tile_allocation_block_size(TileAllocationBlockSize::V128Bytes);
        let relocs = [
            Relocation { field: &TA, buffer: JobBuffer::TileAllocation, offset: 0 },
            Relocation { field: &TS, buffer: JobBuffer::TileState, offset: 0 },
        ];
        list.write(&cl::TILE_BINNING_MODE_CONFIGURATION, body.bytes(), &relocs)?;
    }
    list.write(&cl::START_TILE_BINNING, cl::start_tile_binning::Body::new().bytes(), &[])?;
    let format = primitive_list_format::Body::new()
        .with_data_type(primitive_list_format::DataType::V16BitIndex)
        .with_primitive_type(primitive_list_format::PrimitiveType::Triangles);
    list.write(&cl::PRIMITIVE_LIST_FORMAT, format.bytes(), &[])?;
    // State, in Mesa vc4_emit.c's order.
    let clip = clip_window::Body::new()
        .with_clip_window_left_pixel_coordinate(0)?
        .with_clip_window_bottom_pixel_coordinate(0)?
        .with_clip_window_width_in_pixels(u32::from(fb.width))?
        .with_clip_window_height_in_pixels(u32::from(fb.height))?;
    list.write(&cl::CLIP_WINDOW, clip.bytes(), &[])?;
    // Both facings drawn (no culling), depth test always passes, no Z writes.
    let config = configuration_bits::Body::new()
        .with_enable_forward_facing_primitive(true)
        .with_enable_reverse_facing_primitive(true)
        .with_depth_test_function(configuration_bits::DepthTestFunction::Always);
    list.write(&cl::CONFIGURATION_BITS, config.bytes(), &[])?;
    let xy = clipper_xy_scaling::Body::new()
        .with_viewport_half_width_in_1_16_th_of_pixel(f32::from(fb.width) * SUBPIXELS / 2.0)
        .with_viewport_half_height_in_1_16_th_of_pixel(f32::from(fb.height) * SUBPIXELS / 2.0);
    list.write(&cl::CLIPPER_XY_SCALING, xy.bytes(), &[])?;
    let z = clipper_z_scale_and_offset::Body::new().with_viewport_z_scale(1.0);
    list.write(&cl::CLIPPER_Z_SCALE_AND_OFFSET, z.bytes(), &[])?;
    // The viewport centre at the origin: NV-mode Xs/Ys (relative to the viewport centre,
    // Figure 12) are then frame buffer pixels.
    let offset = viewport_offset::Body::new()
        .with_viewport_centre_x_coordinate(0)?
        .with_viewport_centre_y_coordinate(0)?;
    list.write(&cl::VIEWPORT_OFFSET, offset.bytes(), &[])?;
    list.write(&cl::FLAT_SHADE_FLAGS, flat_shade_flags::Body::new().bytes(), &[])?;
    let shader = [Relocation {
        field: &nv_shader_state::MEMORY_ADDRESS_OF_SHADER_RECORD,
        buffer: JobBuffer::Vertices,
        offset: 0,
    }];
    list.write(&cl::NV_SHADER_STATE, nv_shader_state::Body::new().bytes(), &shader)?;
    let prims = vertex_array_primitives::Body::new()
        .with_primitive_mode(vertex_array_primitives::PrimitiveMode::Triangles)
        .with_length(vertices)
        .with_index_of_first_vertex(0);
    list.write(&cl::VERTEX_ARRAY_PRIMITIVES, prims.bytes(), &[])?;
    // The last two bytes (Linux vc4_validate.c): release the rendering thread, then flush the
    // tile lists (each capped with a return from sub-list, Table 38 record 4).
    list.write(&cl::INCREMENT_SEMAPHORE, cl::increment_semaphore::Body::new().bytes(), &[])?;
    list.write(&cl::FLUSH, cl::flush::Body::new().bytes(), &[])?;
    let (sink, _) = list.into_parts();
    Ok(range(memory.binning_list, sink.len()))
}

fn rendering_list(
    fb: &Framebuffer,
    clear_color: u32,
    tiles: TileLayout,
    region: &DmaRegion,
    addresses: JobAddresses,
) -> Result<ListRange, JobError> {
    let mut list = ControlListWriter::new(RegionSink::new(region), ListKind::Rendering, addresses);
    // Both halves of the 64-bit clear colour hold the 32-bit colour (Linux vc4_render_cl.c).
    let colour = u64::from(clear_color);
    let clear = clear_colors::Body::new().with_clear_color(colour | colour << 32);
    list.write(&cl::CLEAR_COLORS, clear.bytes(), &[])?;
    let mode = tile_rendering_mode_configuration::Body::new()
        .with_width(u32::from(fb.width))?
        .with_height(u32::from(fb.height))?
        .with_non_hdr_frame_buffer_color_format(fb.format.record())
        .with_memory_format(tile_rendering_mode_configuration::MemoryFormat::Linear);
    let fb_reloc = |field| [Relocation { field, buffer: JobBuffer::Framebuffer, offset: 0 }];
    list.write(
        &cl::TILE_RENDERING_MODE_CONFIGURATION,
        mode.bytes(),
        &fb_reloc(&tile_rendering_mode_configuration::MEMORY_ADDRESS),
    )?;
    // A store of nothing to tile (0, 0) applies the clear colours before the first tile.
    list.write(&cl::TILE_COORDINATES, tile_coordinates::Body::new().bytes(), &[])?;
    let store = store_tile_buffer_general::Body::new()
        .with_buffer_to_store(store_tile_buffer_general::BufferToStore::None);
    list.write(
        &cl::STORE_TILE_BUFFER_GENERAL,
        store.bytes(),
        &fb_reloc(&store_tile_buffer_general::MEMORY_BASE_ADDRESS_OF_FRAME_TILE_DUMP_BUFFER),
    )?;
    let last = tiles.tiles() - 1;
    for y in 0..tiles.tiles_y {
        for x in 0..tiles.tiles_x {
            let index = (y * tiles.tiles_x + x) as usize;
            let coords = tile_coordinates::Body::new()
                .with_tile_column_number(x)?
                .with_tile_row_number(y)?;
            list.write(&cl::TILE_COORDINATES, coords.bytes(), &[])?;
            if index == 0 {
                // The first tile's list waits for the binner's Increment Semaphore.
                list.write(
                    &cl::WAIT_ON_SEMAPHORE,
                    cl::wait_on_semaphore::Body::new().bytes(),
                    &[],
                )?;
            }
            let branch = [Relocation {
                field: &cl::branch_to_sub_list::ABSOLUTE_BRANCH_ADDRESS,
                buffer: JobBuffer::TileAllocation,
                offset: (index * TILE_INITIAL_BLOCK_BYTES) as u32,
            }];
            list.write(
                &cl::BRANCH_TO_SUB_LIST,
                cl::branch_to_sub_list::Body::new().bytes(),
                &branch,
            )?;
            if index == last {
                let eof = cl::store_multi_sample_resolved_tile_color_buffer_and_signal_end_of_frame::Body::new();
                list.write(
                    &cl::STORE_MULTI_SAMPLE_RESOLVED_TILE_COLOR_BUFFER_AND_SIGNAL_END_OF_FRAME,
                    eof.bytes(),
                    &[],
                )?;
            } else {
                let store = cl::store_multi_sample_resolved_tile_color_buffer::Body::new();
                list.write(&cl::STORE_MULTI_SAMPLE_RESOLVED_TILE_COLOR_BUFFER, store.bytes(), &[])?;
            }
        }
    }
    let (sink, _) = list.into_parts();
    Ok(range(region, sink.len()))
}

/// A frame whose binning list someone else wrote (a user program): the list's bytes and the
/// buffers it may make the V3D touch. [`build_untrusted`] validates it (with
/// `baregpu-vc4-validate`) before a byte reaches DMA memory.
#[derive(Debug, Clone, Copy)]
pub struct UntrustedJob<'a> {
    /// The binning list, as the program wrote it.
    pub binning_list: &'a [u8],
    /// The buffers it may name: tile memory, shader records, shaders, uniforms, vertices,
    /// indices (with the bytes the validator reads).
    pub buffers: &'a [Buffer<'a>],
    /// What the validator accepts beyond Linux's rules (`Options::NV` for NV shader state).
    pub options: Options,
    /// Where the frame goes (the driver writes the rendering list itself).
    pub framebuffer: Framebuffer,
    /// The clear colour, in the frame buffer's format.
    pub clear_color: u32,
}

/// The DMA buffers the driver copies an [`UntrustedJob`]'s validated binning list into and
/// writes its rendering list into (the program's own copy is never submitted, so it cannot
/// change after validation).
#[derive(Debug, Clone, Copy)]
pub struct UntrustedMemory<'a> {
    /// The binning list's copy ([`list_buffer_bytes`] of the list's length).
    pub binning_list: &'a DmaRegion,
    /// The rendering list ([`list_buffer_bytes`] of [`rendering_list_bytes`]).
    pub rendering_list: &'a DmaRegion,
}

/// Validate `job`'s binning list against its buffers, copy it into `memory.binning_list` and
/// write the rendering list for its tiles (Linux vc4 does the same: a user's binning list is
/// validated and copied, the rendering list is the kernel's). Nothing is written to DMA
/// memory unless the list is accepted and its tiles are the frame buffer's.
pub fn build_untrusted(
    job: &UntrustedJob<'_>,
    memory: &UntrustedMemory<'_>,
) -> Result<BuiltJob, JobError> {
    let fb = &job.framebuffer;
    let summary =
        validate_binning_list(job.binning_list, &Buffers::new(job.buffers), &job.options)?;
    let tiles = TileLayout::of(u32::from(fb.width), u32::from(fb.height))?;
    let list_tiles = (u32::from(summary.tiles_x), u32::from(summary.tiles_y));
    if list_tiles != (tiles.tiles_x, tiles.tiles_y) {
        return Err(JobError::TilesMismatch {
            list: list_tiles,
            framebuffer: (tiles.tiles_x, tiles.tiles_y),
        });
    }
    if summary.initial_block_bytes as usize != TILE_INITIAL_BLOCK_BYTES {
        return Err(JobError::UnsupportedTileBlock { bytes: summary.initial_block_bytes });
    }
    let len = job.binning_list.len();
    need(JobBuffer::BinningList, memory.binning_list, list_buffer_bytes(len))?;
    let rendering = list_buffer_bytes(rendering_list_bytes(tiles.tiles()));
    need(JobBuffer::RenderingList, memory.rendering_list, rendering)?;
    let mut sink = RegionSink::new(memory.binning_list);
    sink.reserve(len).and_then(|()| sink.push_slice(job.binning_list)).map_err(|e| {
        JobError::BufferTooSmall { buffer: JobBuffer::BinningList, needed: e.needed, size: e.free }
    })?;
    let addresses = JobAddresses {
        tile_allocation: (
            BusAddress(summary.tile_allocation),
            summary.tile_allocation_bytes as usize,
        ),
        tile_state: (BusAddress(0), 0),
        vertices: (BusAddress(0), 0),
        framebuffer: (fb.address, fb.bytes() as usize),
    };
    let rendering = rendering_list(fb, job.clear_color, tiles, memory.rendering_list, addresses)?;
    Ok(BuiltJob { binning: range(memory.binning_list, len), rendering, tiles })
}
