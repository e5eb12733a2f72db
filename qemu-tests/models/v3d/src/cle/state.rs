//! The primitive state both pipelines keep from state records (§9 Table 38: 56, 65, 96, 97,
//! 102, 103 and the ones the model stores without using), the NV shader state record (§9
//! Table 46), pre-shaded vertices in memory (§9 Figure 12) and the OpenGL primitive lists
//! (32, 33) walked triangle by triangle.

use baregpu_regs::vc4::packets::{
    self, clip_window, configuration_bits, flat_shade_flags, indexed_primitive_list,
    nv_shader_state, primitive_list_format, vertex_array_primitives, viewport_offset,
};
use gpu_device_model::DeviceContext;

use super::error::{self, CleError};

/// Byte offsets and flag bits of the NV shader state record (§9 Table 46).
mod nv {
    pub const FLAGS: usize = 0;
    pub const STRIDE: usize = 1;
    pub const VARYINGS: usize = 3;
    pub const FS_CODE: usize = 4;
    pub const FS_UNIFORMS: usize = 8;
    pub const VERTEX_DATA: usize = 12;
    pub const BYTES: usize = 16;
    /// Flag bit 0: the fragment shader is single threaded.
    pub const SINGLE_THREADED: u8 = 1 << 0;
    /// Flag bit 1: point size included in the shaded vertex data.
    pub const POINT_SIZE: u8 = 1 << 1;
    /// Flag bit 3: clip coordinates header included in the shaded vertex data.
    pub const CLIP_HEADER: u8 = 1 << 3;
    /// Record alignment ("16-byte aligned", Table 38 id 65).
    pub const ALIGN: u32 = 16;
}

/// Most varyings a primitive carries: the Flat Shade Flags record has one bit per varying
/// (§9 Table 38 id 97, 32x1-bit).
pub const MAX_VARYINGS: usize = 32;

/// The NV shader state record (§9 Table 46).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NvShaderState {
    /// Flag bits (byte 0).
    pub flags: u8,
    /// Shaded vertex data stride in bytes.
    pub stride: u32,
    /// Fragment shader number of varyings.
    pub varyings: usize,
    /// Fragment shader code address.
    pub code: u32,
    /// Fragment shader uniforms address.
    pub uniforms: u32,
    /// Shaded vertex data address.
    pub vertices: u32,
}

impl NvShaderState {
    /// Read the record at `address` (from record 65), checking what Table 46 allows.
    pub fn read(dev: &mut DeviceContext<'_>, address: u32) -> Result<Self, CleError> {
        if !address.is_multiple_of(nv::ALIGN) {
            return Err(CleError::invalid(format!(
                "NV shader state record at {address:#x} is not 16-byte aligned (§9 Table 38)"
            )));
        }
        let mut b = [0u8; nv::BYTES];
        error::read(dev, "NV shader state record", address.into(), &mut b)?;
        let word = |at: usize| u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
        let state = NvShaderState {
            flags: b[nv::FLAGS],
            stride: u32::from(b[nv::STRIDE]),
            varyings: usize::from(b[nv::VARYINGS]),
            code: word(nv::FS_CODE),
            uniforms: word(nv::FS_UNIFORMS),
            vertices: word(nv::VERTEX_DATA),
        };
        if state.varyings > MAX_VARYINGS {
            return Err(CleError::config(format!(
                "{} varyings: the flat-shade flags cover {MAX_VARYINGS}",
                state.varyings
            )));
        }
        if state.stride < state.vertex_bytes() {
            return Err(CleError::config(format!(
                "shaded vertex stride {} is shorter than a vertex ({} bytes, §9 Figure 12)",
                state.stride,
                state.vertex_bytes()
            )));
        }
        if state.flags & nv::CLIP_HEADER != 0 && !state.vertices.is_multiple_of(16) {
            return Err(CleError::invalid(
                "shaded vertex data with a clip header must be 128-bit aligned (§9 Table 46)",
            ));
        }
        Ok(state)
    }

    /// Whether the fragment shader is single threaded.
    pub fn single_threaded(&self) -> bool {
        self.flags & nv::SINGLE_THREADED != 0
    }

    /// Offset of the Xs/Ys word in a vertex: after the clip header (Xc, Yc, Zc, Wc) if any.
    fn screen_offset(&self) -> u32 {
        if self.flags & nv::CLIP_HEADER != 0 { 16 } else { 0 }
    }

    /// Offset of varying 0: after Xs/Ys, Zs, 1/Wc and the point size if any.
    fn varyings_offset(&self) -> u32 {
        self.screen_offset() + 12 + if self.flags & nv::POINT_SIZE != 0 { 4 } else { 0 }
    }

    /// Bytes of one vertex (§9 Figure 12).
    fn vertex_bytes(&self) -> u32 {
        self.varyings_offset() + 4 * self.varyings as u32
    }

    /// Read vertex `index`; `with_varyings` false reads only what the binner needs.
    pub fn vertex(
        &self,
        dev: &mut DeviceContext<'_>,
        index: u32,
        viewport: (i32, i32),
        with_varyings: bool,
    ) -> Result<Vertex, CleError> {
        let address = u64::from(self.vertices) + u64::from(index) * u64::from(self.stride);
        let len = if with_varyings { self.vertex_bytes() } else { self.screen_offset() + 12 };
        let mut b = vec![0u8; len as usize];
        error::read(dev, "shaded vertex", address, &mut b)?;
        let word = |at: u32| {
            let at = at as usize;
            u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
        };
        let xy = word(self.screen_offset());
        // Xs, Ys: signed 12.4 fixed point relative to the viewport centre (§9 Figure 12); the
        // Viewport Offset record is taken in the same units (see the crate README).
        let x = i32::from(xy as u16 as i16) + viewport.0;
        let y = i32::from((xy >> 16) as u16 as i16) + viewport.1;
        let mut v = Vertex {
            x,
            y,
            z: f32::from_bits(word(self.screen_offset() + 4)),
            inv_w: f32::from_bits(word(self.screen_offset() + 8)),
            varyings: Vec::new(),
        };
        if with_varyings {
            v.varyings = (0..self.varyings as u32)
                .map(|i| f32::from_bits(word(self.varyings_offset() + 4 * i)))
                .collect();
        }
        Ok(v)
    }
}

/// One pre-shaded vertex in screen space.
#[derive(Debug, Clone, PartialEq)]
pub struct Vertex {
    /// X in 1/16 pixel (12.4 fixed point).
    pub x: i32,
    /// Y in 1/16 pixel.
    pub y: i32,
    /// Zs (0.0 to 1.0).
    pub z: f32,
    /// 1/Wc.
    pub inv_w: f32,
    /// The varyings, in order.
    pub varyings: Vec<f32>,
}

/// The state records a pipeline keeps (§9 Table 38). Before any record the state is all
/// zeros, as the hardware resets it.
#[derive(Debug, Clone, Default)]
pub struct PrimitiveState {
    /// The NV shader state (record 65); `None` before one.
    pub nv: Option<NvShaderState>,
    /// Configuration Bits (96), bytes 1-3.
    pub config: [u8; 4],
    /// Flat Shade Flags (97).
    pub flat: u32,
    /// Clip window (102): left, bottom, width, height in pixels; `None`: the whole frame.
    pub clip: Option<[u32; 4]>,
    /// Viewport centre (103) in 1/16 pixel.
    pub viewport: (i32, i32),
}

/// What a state record did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateRecord {
    /// Not a state record.
    No,
    /// A state record the tile lists must carry.
    Yes,
    /// A state record for the binner only (clipper scaling, 105/106) or for primitives the
    /// model does not draw (RHT X boundary, 100): accepted, not copied.
    BinnerOnly,
}

/// The state records the binner copies into the tile lists for the renderer (everything the
/// rendering pipeline reads; 105/106 are binning only).
pub const TILE_STATE_RECORDS: &[u8] = &[
    packets::PRIMITIVE_LIST_FORMAT.opcode,
    packets::NV_SHADER_STATE.opcode,
    packets::CONFIGURATION_BITS.opcode,
    packets::FLAT_SHADE_FLAGS.opcode,
    packets::POINTS_SIZE.opcode,
    packets::LINE_WIDTH.opcode,
    packets::DEPTH_OFFSET.opcode,
    packets::CLIP_WINDOW.opcode,
    packets::VIEWPORT_OFFSET.opcode,
    packets::Z_MIN_AND_MAX_CLIPPING_PLANES.opcode,
];

impl PrimitiveState {
    /// Apply state record `bytes` (id first).
    pub fn apply(
        &mut self,
        dev: &mut DeviceContext<'_>,
        bytes: &[u8],
    ) -> Result<StateRecord, CleError> {
        const FORMAT: u8 = packets::PRIMITIVE_LIST_FORMAT.opcode;
        const NV: u8 = packets::NV_SHADER_STATE.opcode;
        const CONFIG: u8 = packets::CONFIGURATION_BITS.opcode;
        const FLAT: u8 = packets::FLAT_SHADE_FLAGS.opcode;
        const CLIP: u8 = packets::CLIP_WINDOW.opcode;
        const VIEWPORT: u8 = packets::VIEWPORT_OFFSET.opcode;
        match bytes[0] {
            FORMAT => {
                let data = primitive_list_format::DATA_TYPE.get(bytes);
                let prim = primitive_list_format::PRIMITIVE_TYPE.get(bytes);
                let (Some(data), Some(prim)) = (
                    primitive_list_format::DATA_TYPE.value_name(data),
                    primitive_list_format::PRIMITIVE_TYPE.value_name(prim),
                ) else {
                    return Err(CleError::invalid(format!(
                        "Primitive List Format with reserved data type {data} or primitive type {prim}"
                    )));
                };
                if data != "16_BIT_INDEX" || prim != "TRIANGLES" {
                    return Err(CleError::unsupported(format!(
                        "Primitive List Format {prim} with {data}: the model bins triangles with 16-bit indices"
                    )));
                }
            }
            NV => {
                let address = nv_shader_state::MEMORY_ADDRESS_OF_SHADER_RECORD.address(bytes).0;
                self.nv = Some(NvShaderState::read(dev, address as u32)?);
            }
            CONFIG => {
                self.config.copy_from_slice(&bytes[..4]);
                let oversample = configuration_bits::RASTERISER_OVERSAMPLE_MODE.get(bytes);
                if configuration_bits::RASTERISER_OVERSAMPLE_MODE.value_name(oversample).is_none() {
                    return Err(CleError::invalid(
                        "Configuration Bits: reserved oversample mode 3",
                    ));
                }
                if oversample != 0
                    || configuration_bits::COVERAGE_PIPE_SELECT.get(bytes) != 0
                    || configuration_bits::ENABLE_DEPTH_OFFSET.get(bytes) != 0
                {
                    return Err(CleError::unsupported(
                        "Configuration Bits: oversampling, the coverage pipe and depth offset are not emulated",
                    ));
                }
            }
            FLAT => self.flat = flat_shade_flags::FLAT_SHADING_FLAGS.get(bytes) as u32,
            CLIP => {
                self.clip = Some([
                    clip_window::CLIP_WINDOW_LEFT_PIXEL_COORDINATE.get(bytes) as u32,
                    clip_window::CLIP_WINDOW_BOTTOM_PIXEL_COORDINATE.get(bytes) as u32,
                    clip_window::CLIP_WINDOW_WIDTH_IN_PIXELS.get(bytes) as u32,
                    clip_window::CLIP_WINDOW_HEIGHT_IN_PIXELS.get(bytes) as u32,
                ])
            }
            VIEWPORT => {
                self.viewport = (
                    viewport_offset::VIEWPORT_CENTRE_X_COORDINATE.get_signed(bytes) as i32,
                    viewport_offset::VIEWPORT_CENTRE_Y_COORDINATE.get_signed(bytes) as i32,
                )
            }
            id if TILE_STATE_RECORDS.contains(&id) => {}
            id if id == packets::CLIPPER_XY_SCALING.opcode
                || id == packets::CLIPPER_Z_SCALE_AND_OFFSET.opcode
                || id == packets::RHT_X_BOUNDARY.opcode =>
            {
                return Ok(StateRecord::BinnerOnly);
            }
            _ => return Ok(StateRecord::No),
        }
        Ok(StateRecord::Yes)
    }

    /// The NV shader state, or why a primitive cannot be drawn without one.
    pub fn nv(&self) -> Result<NvShaderState, CleError> {
        self.nv.ok_or_else(|| {
            CleError::invalid("a primitive before any shader state record (§9: 56 then 64-67)")
        })
    }

    /// Whether GL mode was selected (record 64): not emulated.
    pub fn gl_mode(record: u8) -> bool {
        record == packets::GL_SHADER_STATE.opcode
    }
}

/// The OpenGL primitive modes the model draws (§9 Table 38 ids 32/33: 4, 5, 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Triangles,
    Strip,
    Fan,
}

/// Where a primitive list's vertex indices come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    /// Vertex Array Primitives (33): `first + n`.
    Array { first: u32 },
    /// Indexed Primitive List (32): from memory, 8- or 16-bit, at most `max`.
    Indexed { address: u32, wide: bool, max: u32 },
}

/// A primitive list record (32 or 33) walked triangle by triangle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrimitiveList {
    mode: Mode,
    source: Source,
    count: u32,
    next: u32,
}

impl PrimitiveList {
    /// The list a record 32 or 33 describes.
    pub fn parse(bytes: &[u8]) -> Result<Self, CleError> {
        let (mode, count, source) = if bytes[0] == packets::VERTEX_ARRAY_PRIMITIVES.opcode {
            (
                vertex_array_primitives::PRIMITIVE_MODE.get(bytes),
                vertex_array_primitives::LENGTH.get(bytes) as u32,
                Source::Array {
                    first: vertex_array_primitives::INDEX_OF_FIRST_VERTEX.get(bytes) as u32,
                },
            )
        } else {
            let kind = indexed_primitive_list::INDEX_TYPE.get(bytes);
            let wide = match indexed_primitive_list::INDEX_TYPE.value_name(kind) {
                Some("16_BIT") => true,
                Some(_) => false,
                None => {
                    return Err(CleError::invalid(format!(
                        "Indexed Primitive List: reserved index type {kind}"
                    )));
                }
            };
            let address = indexed_primitive_list::ADDRESS_OF_INDICES_LIST.address(bytes).0 as u32;
            (
                indexed_primitive_list::PRIMITIVE_MODE.get(bytes),
                indexed_primitive_list::LENGTH.get(bytes) as u32,
                Source::Indexed {
                    address,
                    wide,
                    max: indexed_primitive_list::MAXIMUM_INDEX.get(bytes) as u32,
                },
            )
        };
        // Both records share the mode values (Table 38 ids 32 and 33).
        let mode = match vertex_array_primitives::PRIMITIVE_MODE.value_name(mode) {
            Some("TRIANGLES") => Mode::Triangles,
            Some("TRIANGLE_STRIP") => Mode::Strip,
            Some("TRIANGLE_FAN") => Mode::Fan,
            Some(other) => {
                return Err(CleError::unsupported(format!(
                    "primitive mode {other} (points and lines are not emulated)"
                )));
            }
            None => return Err(CleError::invalid(format!("reserved primitive mode {mode}"))),
        };
        Ok(PrimitiveList { mode, source, count, next: 0 })
    }

    /// Triangles the list holds.
    pub fn triangles(&self) -> u32 {
        match self.mode {
            Mode::Triangles => self.count / 3,
            Mode::Strip | Mode::Fan => self.count.saturating_sub(2),
        }
    }

    /// Triangles not yet taken (CTnPC, §10 Table 54).
    pub fn remaining(&self) -> u32 {
        self.triangles() - self.next
    }

    /// The vertex indices of the next triangle, in the winding the application gave.
    pub fn next_triangle(
        &mut self,
        dev: &mut DeviceContext<'_>,
    ) -> Result<Option<[u32; 3]>, CleError> {
        if self.next >= self.triangles() {
            return Ok(None);
        }
        let n = self.next;
        self.next += 1;
        let positions = match self.mode {
            Mode::Triangles => [3 * n, 3 * n + 1, 3 * n + 2],
            // Odd strip triangles swap their first two vertices to keep the winding.
            Mode::Strip if n % 2 == 1 => [n + 1, n, n + 2],
            Mode::Strip => [n, n + 1, n + 2],
            Mode::Fan => [0, n + 1, n + 2],
        };
        let mut out = [0u32; 3];
        for (o, p) in out.iter_mut().zip(positions) {
            *o = self.index(dev, p)?;
        }
        Ok(Some(out))
    }

    fn index(&self, dev: &mut DeviceContext<'_>, position: u32) -> Result<u32, CleError> {
        match self.source {
            Source::Array { first } => first.checked_add(position).ok_or_else(|| {
                CleError::invalid("Vertex Array Primitives: vertex index past 2^32")
            }),
            Source::Indexed { address, wide, max } => {
                let size = if wide { 2 } else { 1 };
                let at = u64::from(address) + u64::from(position) * size;
                let mut b = [0u8; 2];
                error::read(dev, "index list", at, &mut b[..size as usize])?;
                let index = u32::from(u16::from_le_bytes(b));
                if index > max {
                    return Err(CleError::invalid(format!(
                        "index {index} above the record's Maximum Index {max} (§9 Table 38 id 32)"
                    )));
                }
                Ok(index)
            }
        }
    }
}
