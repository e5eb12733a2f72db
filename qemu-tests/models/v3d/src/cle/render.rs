//! The rendering pipeline behind control-list thread 1: the tile buffer (§5), the front-end
//! pipe's rasteriser and interpolation (§6), fragment-shader batches on the QPUs
//! ([`crate::shading`]) and the stores that write a tile to memory (§9 Table 38 ids 24, 25,
//! 28).
//!
//! One tile buffer of 64x64 pixels, 32-bit colour and 24-bit Z (non-multisample, §5). A
//! triangle is scanned in 2x2 quads; up to four quads with a covered pixel make a batch of 16
//! lanes for one fragment-shader thread. A batch runs to its end before the next starts, so
//! tile-buffer accesses keep primitive order (the scoreboard's job on the chip, §5).

use baregpu_regs::vc4::packets::{
    self, clear_colors, store_tile_buffer_general as store_general, tile_coordinates,
    tile_rendering_mode_configuration as render_cfg,
};
use gpu_device_model::DeviceContext;

use super::binner::TILE_PIXELS;
use super::error::{self, CleError, code};
use super::raster::{Facing, Interpolation, Triangle};
use super::state::PrimitiveState;
use crate::shading::{
    FragmentBatch, FragmentOutput, FragmentShading, LANES, ShadingStep, VaryingInput,
};

/// Quads the rasteriser examines per tick.
pub const RASTER_QUADS_PER_TICK: u64 = 64;
/// QPU instructions a fragment-shader batch may run per tick.
pub const QPU_INSTRUCTIONS_PER_TICK: u32 = 256;
/// Tile rows stored to memory per tick (a row is at most 256 bytes: 4 units of 64 bytes).
pub const STORE_ROWS_PER_TICK: u32 = 16;
/// Units one stored row counts.
const UNITS_PER_ROW: u64 = 4;
/// Most units the renderer uses in one tick.
pub const RENDER_UNITS_PER_TICK: u64 = RASTER_QUADS_PER_TICK
    + QPU_INSTRUCTIONS_PER_TICK as u64
    + STORE_ROWS_PER_TICK as u64 * UNITS_PER_ROW;
const TILE_AREA: usize = (TILE_PIXELS * TILE_PIXELS) as usize;
const QUADS_PER_ROW: u32 = TILE_PIXELS / 2;

/// Frame-buffer pixel formats the model stores (Table 38 ids 113 and 28).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PixelFormat {
    /// RGBA8888: the tile buffer's 32-bit colour as it is, little-endian.
    Rgba8888,
    /// BGR565 without dithering: red in bits 4:0, green 10:5, blue 15:11, from the colour's
    /// bytes 0, 1 and 2 (R, G, B in the order the name RGBA8888 gives them).
    Bgr565,
}

impl PixelFormat {
    fn bytes(self) -> u32 {
        match self {
            PixelFormat::Rgba8888 => 4,
            PixelFormat::Bgr565 => 2,
        }
    }

    fn encode(self, colour: u32, out: &mut Vec<u8>) {
        match self {
            PixelFormat::Rgba8888 => out.extend_from_slice(&colour.to_le_bytes()),
            PixelFormat::Bgr565 => {
                let [r, g, b, _] = colour.to_le_bytes().map(u16::from);
                let v = (r >> 3) | ((g >> 2) << 5) | ((b >> 3) << 11);
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
    }
}

/// How a frame buffer is laid out in memory (§11).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Raster order, row 0 first.
    Linear,
    /// LT-format: micro-tiles of 64 bytes (4x4 pixels at 32 bpp, 8x4 at 16 bpp, pixels in
    /// raster order) in raster order, each row of micro-tiles padded to whole micro-tiles.
    LinearTile,
}

impl Layout {
    fn from_name(name: Option<&str>) -> Result<Self, CleError> {
        match name {
            Some("LINEAR" | "RASTER_FORMAT") => Ok(Layout::Linear),
            Some("LT_FORMAT") => Ok(Layout::LinearTile),
            Some(other) => Err(CleError::unsupported(format!(
                "{other} frame buffers (§11's figures of the 4K tile order are not in the text)"
            ))),
            None => Err(CleError::invalid("reserved memory format")),
        }
    }

    /// Byte offset of pixel (x, y) in a frame `width` pixels wide.
    fn offset(self, format: PixelFormat, x: u32, y: u32, width: u32) -> u64 {
        let bpp = u64::from(format.bytes());
        match self {
            Layout::Linear => (u64::from(y) * u64::from(width) + u64::from(x)) * bpp,
            Layout::LinearTile => {
                const MICRO_TILE_BYTES: u64 = 64;
                const MICRO_TILE_ROWS: u32 = 4;
                let mt_width = (MICRO_TILE_BYTES / bpp) as u32 / MICRO_TILE_ROWS;
                let per_row = u64::from(width.div_ceil(mt_width));
                let tile = u64::from(y / MICRO_TILE_ROWS) * per_row + u64::from(x / mt_width);
                let inside = u64::from((y % MICRO_TILE_ROWS) * mt_width + x % mt_width);
                tile * MICRO_TILE_BYTES + inside * bpp
            }
        }
    }
}

/// Tile Rendering Mode Configuration (113).
#[derive(Debug, Clone, Copy)]
struct Config {
    address: u32,
    width: u32,
    height: u32,
    format: PixelFormat,
    layout: Layout,
}

/// Where a store writes.
#[derive(Debug, Clone, Copy)]
struct Store {
    address: u32,
    format: PixelFormat,
    layout: Layout,
    /// Colour buffer written at all (false: Store General with buffer NONE).
    colour: bool,
    clear_colour: bool,
    clear_z: bool,
    end_of_frame: bool,
    row: u32,
}

/// A triangle being rasterised in the current tile.
#[derive(Debug, Clone)]
struct Raster {
    triangle: Triangle,
    interpolation: Interpolation,
    code: u32,
    uniforms: u32,
    single_threaded: bool,
    /// Pixels that may be drawn (tile, frame and clip window), screen coordinates.
    clip: [i64; 4],
    /// Tile origin in pixels.
    origin: (i64, i64),
    /// Next quad (index in the tile, row-major) and the quad range `[x0, x1) x [y0, y1)`.
    next: u32,
    quads: [u32; 4],
    /// The batch on the QPUs: its lanes' tile offsets and coverage.
    batch: Option<([usize; LANES], u16)>,
}

#[derive(Debug, Clone)]
enum Job {
    Raster(Box<Raster>),
    Store(Store),
}

/// What [`Renderer::step`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RenderEvents {
    /// The last tile of a frame was stored (V3D_RFC, INT_FRDONE).
    pub frame_done: bool,
}

/// The renderer.
#[derive(Debug, Clone)]
pub struct Renderer {
    config: Option<Config>,
    clear: (u32, u32),
    tile: Option<(u32, u32)>,
    colour: Vec<u32>,
    z: Vec<u32>,
    /// State in force.
    pub state: PrimitiveState,
    job: Option<Job>,
    /// Triangles drawn (shaded batches reached the tile buffer).
    pub batches: u64,
}

impl Default for Renderer {
    fn default() -> Self {
        Renderer {
            config: None,
            clear: (0, 0),
            tile: None,
            colour: vec![0; TILE_AREA],
            z: vec![0; TILE_AREA],
            state: PrimitiveState::default(),
            job: None,
            batches: 0,
        }
    }
}

fn pixel_format(name: Option<&str>) -> Result<PixelFormat, CleError> {
    match name {
        Some("RGBA8888") => Ok(PixelFormat::Rgba8888),
        Some("BGR565" | "BGR565_NO_DITHER") => Ok(PixelFormat::Bgr565),
        Some(other) => {
            Err(CleError::unsupported(format!("{other} colour stores (dithering is not emulated)")))
        }
        None => Err(CleError::invalid("reserved pixel colour format")),
    }
}

impl Renderer {
    /// Work in flight (the rendering thread waits for it).
    pub fn busy(&self) -> bool {
        self.job.is_some()
    }

    /// Abandon the work in flight (CT1CS.CTRSTA, reset).
    pub fn abandon(&mut self) {
        self.job = None;
    }

    /// Tile Rendering Mode Configuration (113).
    pub fn configure(&mut self, bytes: &[u8]) -> Result<(), CleError> {
        let get = |f: &baregpu_regs::packet::RecordField| f.get(bytes);
        let memory = get(&render_cfg::MEMORY_FORMAT);
        if render_cfg::MEMORY_FORMAT.value_name(memory).is_none()
            || render_cfg::DECIMATE_MODE.value_name(get(&render_cfg::DECIMATE_MODE)).is_none()
        {
            return Err(CleError::invalid("Tile Rendering Mode Configuration: reserved value"));
        }
        if get(&render_cfg::MULTISAMPLE_MODE) != 0
            || get(&render_cfg::TILE_BUFFER_64_BIT_COLOR_DEPTH) != 0
            || get(&render_cfg::DECIMATE_MODE) != 0
            || get(&render_cfg::DOUBLE_BUFFER_IN_NON_MS_MODE) != 0
            || get(&render_cfg::SELECT_COVERAGE_MODE) != 0
            || get(&render_cfg::ENABLE_VG_MASK_BUFFER) != 0
        {
            return Err(CleError::unsupported(
                "Tile Rendering Mode Configuration: only non-multisample, 32-bit tile buffers are emulated",
            ));
        }
        let format = render_cfg::NON_HDR_FRAME_BUFFER_COLOR_FORMAT;
        let config = Config {
            address: render_cfg::MEMORY_ADDRESS.address(bytes).0 as u32,
            width: get(&render_cfg::WIDTH) as u32,
            height: get(&render_cfg::HEIGHT) as u32,
            format: pixel_format(format.value_name(format.get(bytes)))?,
            layout: Layout::from_name(render_cfg::MEMORY_FORMAT.value_name(memory))?,
        };
        if config.width == 0 || config.height == 0 {
            return Err(CleError::config("Tile Rendering Mode Configuration: an empty frame"));
        }
        self.config = Some(config);
        self.tile = None;
        Ok(())
    }

    /// Clear Colors (114): the values the tile buffer is cleared to after each store (§5).
    pub fn clear_colours(&mut self, bytes: &[u8]) {
        // 32-bit colour: the first of the two RGBA8888 values.
        self.clear = (
            clear_colors::CLEAR_COLOR.get(bytes) as u32,
            clear_colors::CLEAR_Z_S.get(bytes) as u32,
        );
    }

    fn config(&self) -> Result<Config, CleError> {
        self.config.ok_or_else(|| {
            CleError::invalid("a rendering record before Tile Rendering Mode Configuration (§9)")
        })
    }

    fn tile(&self) -> Result<(u32, u32), CleError> {
        self.tile.ok_or_else(|| CleError::invalid("a tile operation before Tile Coordinates (§9)"))
    }

    /// Tile Coordinates (115).
    pub fn tile_coordinates(&mut self, bytes: &[u8]) -> Result<(), CleError> {
        let config = self.config()?;
        let x = tile_coordinates::TILE_COLUMN_NUMBER.get(bytes) as u32;
        let y = tile_coordinates::TILE_ROW_NUMBER.get(bytes) as u32;
        if x * TILE_PIXELS >= config.width || y * TILE_PIXELS >= config.height {
            return Err(CleError::invalid(format!(
                "tile ({x}, {y}) is outside the {}x{} frame",
                config.width, config.height
            )));
        }
        self.tile = Some((x, y));
        Ok(())
    }

    /// A store record (24, 25, 28).
    pub fn store(&mut self, bytes: &[u8]) -> Result<(), CleError> {
        let config = self.config()?;
        self.tile()?;
        let mut store = Store {
            address: config.address,
            format: config.format,
            layout: config.layout,
            colour: true,
            clear_colour: true,
            clear_z: true,
            end_of_frame: bytes[0]
                == packets::STORE_MULTI_SAMPLE_RESOLVED_TILE_COLOR_BUFFER_AND_SIGNAL_END_OF_FRAME
                    .opcode,
            row: 0,
        };
        if bytes[0] == packets::STORE_TILE_BUFFER_GENERAL.opcode {
            let get = |f: &baregpu_regs::packet::RecordField| f.get(bytes);
            let buffer = store_general::BUFFER_TO_STORE;
            match buffer.value_name(get(&buffer)) {
                Some("NONE") => store.colour = false,
                Some("COLOR") => {}
                Some(other) => {
                    return Err(CleError::unsupported(format!(
                        "Store Tile Buffer General of {other}"
                    )));
                }
                None => {
                    return Err(CleError::invalid("Store Tile Buffer General: reserved buffer"));
                }
            }
            if store.colour {
                if get(&store_general::MODE) != 0 {
                    return Err(CleError::unsupported(
                        "Store Tile Buffer General: only sample 0 stores are emulated",
                    ));
                }
                let layout = store_general::FORMAT;
                store.layout = Layout::from_name(layout.value_name(get(&layout)))?;
                let f = store_general::PIXEL_COLOR_FORMAT;
                store.format = pixel_format(f.value_name(get(&f)))?;
                store.address = store_general::MEMORY_BASE_ADDRESS_OF_FRAME_TILE_DUMP_BUFFER
                    .address(bytes)
                    .0 as u32;
            }
            store.clear_colour = get(&store_general::DISABLE_COLOR_BUFFER_CLEAR_ON_STORE_DUMP) == 0;
            store.clear_z = get(&store_general::DISABLE_Z_STENCIL_BUFFER_CLEAR_ON_STORE_DUMP) == 0;
            store.end_of_frame = get(&store_general::LAST_TILE_OF_FRAME) != 0;
        }
        self.job = Some(Job::Store(store));
        Ok(())
    }

    /// A triangle (indices into the NV vertex data) to draw in the current tile.
    pub fn triangle(
        &mut self,
        dev: &mut DeviceContext<'_>,
        indices: [u32; 3],
    ) -> Result<(), CleError> {
        self.config()?;
        let (tx, ty) = self.tile()?;
        let nv = self.state.nv()?;
        let mut vertices = Vec::with_capacity(3);
        for &i in &indices {
            vertices.push(nv.vertex(dev, i, self.state.viewport, true)?);
        }
        let Ok(vertices) = <[_; 3]>::try_from(vertices) else { return Ok(()) };
        let c = self.state.config;
        use baregpu_regs::vc4::packets::configuration_bits as cb;
        let facing = Facing {
            front: cb::ENABLE_FORWARD_FACING_PRIMITIVE.get(&c) != 0,
            back: cb::ENABLE_REVERSE_FACING_PRIMITIVE.get(&c) != 0,
            clockwise: cb::CLOCKWISE_PRIMITIVES.get(&c) != 0,
        };
        let Some(triangle) = Triangle::new(vertices, facing) else { return Ok(()) };
        // The quads of this tile the triangle (and the clip window) can reach.
        let t = i64::from(TILE_PIXELS);
        let (ox, oy) = (i64::from(tx) * t, i64::from(ty) * t);
        let mut rect = triangle.bounds();
        let config = self.config()?;
        let window = self.state.clip.map_or([0, 0, i64::MAX, i64::MAX], |[l, b, w, h]| {
            [i64::from(l), i64::from(b), i64::from(l + w), i64::from(b + h)]
        });
        let limit =
            [ox, oy, (ox + t).min(i64::from(config.width)), (oy + t).min(i64::from(config.height))];
        for k in 0..2 {
            rect[k] = rect[k].max(limit[k]).max(window[k]);
            rect[k + 2] = rect[k + 2].min(limit[k + 2]).min(window[k + 2]);
        }
        if rect[0] >= rect[2] || rect[1] >= rect[3] {
            return Ok(());
        }
        let quads = [
            ((rect[0] - ox) / 2) as u32,
            ((rect[1] - oy) / 2) as u32,
            ((rect[2] - ox + 1) / 2) as u32,
            ((rect[3] - oy + 1) / 2) as u32,
        ];
        let interpolation = triangle.interpolation(self.state.flat);
        self.job = Some(Job::Raster(Box::new(Raster {
            triangle,
            interpolation,
            code: nv.code,
            uniforms: nv.uniforms,
            single_threaded: nv.single_threaded(),
            clip: rect,
            origin: (ox, oy),
            next: quads[1] * QUADS_PER_ROW + quads[0],
            quads,
            batch: None,
        })));
        Ok(())
    }

    /// Run the work in flight for one tick; returns the units used.
    pub fn step(
        &mut self,
        dev: &mut DeviceContext<'_>,
        qpus: &mut dyn FragmentShading,
        events: &mut RenderEvents,
    ) -> Result<u64, CleError> {
        match self.job.take() {
            None => Ok(0),
            Some(Job::Raster(mut r)) => {
                let (done, units) = self.raster(dev, qpus, &mut r)?;
                if !done {
                    self.job = Some(Job::Raster(r));
                }
                Ok(units)
            }
            Some(Job::Store(mut s)) => {
                let units = self.store_rows(dev, &mut s)?;
                if s.row < TILE_PIXELS {
                    self.job = Some(Job::Store(s));
                } else {
                    if s.clear_colour {
                        self.colour.fill(self.clear.0);
                    }
                    if s.clear_z {
                        self.z.fill(self.clear.1);
                    }
                    events.frame_done |= s.end_of_frame;
                }
                Ok(units)
            }
        }
    }

    /// Shade the batch in flight, then scan for the next one; `true` when the triangle is done.
    fn raster(
        &mut self,
        dev: &mut DeviceContext<'_>,
        qpus: &mut dyn FragmentShading,
        r: &mut Raster,
    ) -> Result<(bool, u64), CleError> {
        let mut units = 0;
        if let Some((offsets, coverage)) = r.batch {
            units += u64::from(QPU_INSTRUCTIONS_PER_TICK);
            match qpus.step(dev, QPU_INSTRUCTIONS_PER_TICK) {
                ShadingStep::Running => return Ok((false, units)),
                ShadingStep::Fault(f) => {
                    return Err(CleError::new(
                        code::FRAGMENT_SHADER_FAULT,
                        format!("fragment shader at {:#x}: {}", f.pc, f.reason),
                    ));
                }
                ShadingStep::Done(out) => {
                    self.apply(&offsets, coverage, &out);
                    self.batches += 1;
                    r.batch = None;
                }
            }
        }
        // Scan quads for the next batch.
        let mut quads: Vec<(u32, u32, u8)> = Vec::with_capacity(4);
        let mut scanned = 0;
        while quads.len() < 4 && scanned < RASTER_QUADS_PER_TICK {
            let (qx, qy) = (r.next % QUADS_PER_ROW, r.next / QUADS_PER_ROW);
            if qy >= r.quads[3] {
                break;
            }
            if qx < r.quads[0] {
                r.next = qy * QUADS_PER_ROW + r.quads[0];
                continue;
            }
            if qx >= r.quads[2] {
                r.next = (qy + 1) * QUADS_PER_ROW + r.quads[0];
                continue;
            }
            scanned += 1;
            r.next += 1;
            let mut mask = 0u8;
            for lane in 0..4u32 {
                let px = r.origin.0 + i64::from(qx * 2 + lane % 2);
                let py = r.origin.1 + i64::from(qy * 2 + lane / 2);
                let inside = px >= r.clip[0] && px < r.clip[2] && py >= r.clip[1] && py < r.clip[3];
                if inside && r.triangle.covers(px, py) {
                    mask |= 1 << lane;
                }
            }
            if mask != 0 {
                quads.push((qx, qy, mask));
            }
        }
        units += scanned;
        if quads.is_empty() {
            let finished = r.next / QUADS_PER_ROW >= r.quads[3];
            return Ok((finished, units));
        }
        self.start_batch(qpus, r, &quads);
        Ok((false, units))
    }

    fn start_batch(
        &mut self,
        qpus: &mut dyn FragmentShading,
        r: &mut Raster,
        quads: &[(u32, u32, u8)],
    ) {
        let mut x = [0u16; LANES];
        let mut y = [0u16; LANES];
        let mut w = [0f32; LANES];
        let mut z = [0u32; LANES];
        let mut offsets = [0usize; LANES];
        let mut tile_colour = [0u32; LANES];
        let mut coverage = 0u16;
        let count = r.interpolation.varyings.len();
        let mut partial = vec![[0f32; LANES]; count];
        for lane in 0..LANES {
            // Lanes of missing quads repeat the first quad's pixels, uncovered.
            let (qx, qy, mask) =
                quads.get(lane / 4).copied().unwrap_or((quads[0].0, quads[0].1, 0));
            let sub = (lane % 4) as u32;
            let (tx, ty) = (qx * 2 + sub % 2, qy * 2 + sub / 2);
            let (px, py) = (r.origin.0 + i64::from(tx), r.origin.1 + i64::from(ty));
            x[lane] = px as u16;
            y[lane] = py as u16;
            if mask & (1 << sub) != 0 {
                coverage |= 1 << lane;
            }
            let d = r.triangle.offset(px, py);
            w[lane] = r.interpolation.w(d);
            z[lane] = r.interpolation.z(d);
            for (i, p) in partial.iter_mut().enumerate() {
                p[lane] = r.interpolation.partial(i, d);
            }
            offsets[lane] = (ty * TILE_PIXELS + tx) as usize;
            tile_colour[lane] = self.colour[offsets[lane]];
        }
        let varyings = partial
            .into_iter()
            .zip(&r.interpolation.varyings)
            .map(|(partial, c)| VaryingInput { partial, c: c.c })
            .collect();
        qpus.start(FragmentBatch {
            code_address: r.code,
            uniforms_address: r.uniforms,
            single_threaded: r.single_threaded,
            x,
            y,
            coverage,
            reverse: r.triangle.reverse,
            w,
            z,
            varyings,
            tile_colour,
        });
        r.batch = Some((offsets, coverage));
    }

    /// Apply a finished batch to the tile buffer: the Z test where the shader wrote Z (§5 "Z
    /// and Stencil": writing TLB_Z starts the test), then the colour of lanes still covered.
    fn apply(&mut self, offsets: &[usize; LANES], coverage: u16, out: &FragmentOutput) {
        use baregpu_regs::vc4::packets::configuration_bits as cb;
        let c = self.state.config;
        let function = cb::DEPTH_TEST_FUNCTION.value_name(cb::DEPTH_TEST_FUNCTION.get(&c));
        let update = cb::Z_UPDATES_ENABLE.get(&c) != 0;
        for (lane, &o) in offsets.iter().enumerate() {
            let bit = 1u16 << lane;
            if coverage & bit == 0 {
                continue;
            }
            if out.z_written & bit != 0 {
                let (z, old) = (out.z[lane] & super::raster::Z_MAX, self.z[o]);
                let pass = match function {
                    Some("NEVER") => false,
                    Some("LT") => z < old,
                    Some("EQ") => z == old,
                    Some("LE") => z <= old,
                    Some("GT") => z > old,
                    Some("NE") => z != old,
                    Some("GE") => z >= old,
                    _ => true, // ALWAYS (the 3-bit field has no other value)
                };
                if !pass {
                    continue;
                }
                if update {
                    self.z[o] = z;
                }
            }
            if out.colour_written & bit != 0 {
                self.colour[o] = out.colour[lane];
            }
        }
    }

    /// Store up to [`STORE_ROWS_PER_TICK`] rows of the tile, each as the runs of pixels that
    /// are contiguous in the layout.
    fn store_rows(&mut self, dev: &mut DeviceContext<'_>, s: &mut Store) -> Result<u64, CleError> {
        let (config, (tx, ty)) = (self.config()?, self.tile()?);
        if !s.colour {
            s.row = TILE_PIXELS;
            return Ok(0);
        }
        if s.address == 0 {
            return Err(CleError::store("tile store", None, 0));
        }
        let x0 = tx * TILE_PIXELS;
        let pixels = (config.width - x0).min(TILE_PIXELS);
        let mut units = 0;
        let mut run = Vec::with_capacity((pixels * 4) as usize);
        for _ in 0..STORE_ROWS_PER_TICK {
            let y = ty * TILE_PIXELS + s.row;
            if s.row >= TILE_PIXELS || y >= config.height {
                s.row = TILE_PIXELS;
                break;
            }
            let mut start = None;
            for x in 0..pixels {
                let at = s.layout.offset(s.format, x0 + x, y, config.width);
                match start {
                    Some(begin) if begin + run.len() as u64 == at => {}
                    _ => {
                        if let Some(begin) = start {
                            error::write(dev, "tile store", u64::from(s.address) + begin, &run)?;
                        }
                        run.clear();
                        start = Some(at);
                    }
                }
                s.format.encode(self.colour[(s.row * TILE_PIXELS + x) as usize], &mut run);
            }
            if let Some(begin) = start {
                error::write(dev, "tile store", u64::from(s.address) + begin, &run)?;
            }
            s.row += 1;
            units += UNITS_PER_ROW;
        }
        Ok(units)
    }
}
