//! A small valid job to start from: a constant-colour fragment shader (`baregpu-qpu-asm`'s
//! `programs::constant_colour`), GL (Table 45) and NV (Table 46) shader
//! records, three vertices and a binning list that draws them, each at a fixed bus address.
//! The crate's tests, fuzz target and benchmark mutate it; a kernel's own tests can too.

use baregpu_hal::dma::BusAddress;
use baregpu_qpu_asm::programs::constant_colour;
use baregpu_regs::vc4::packets::{
    self as cl, gl_shader_state, nv_shader_state, primitive_list_format,
    tile_binning_mode_configuration as tbmc, vertex_array_primitives,
};

use crate::buffers::{Buffer, Purposes};

/// Tile allocation memory (the buffers sit in the first 2 MiB, so a device model with that
/// much memory can run the sample).
pub const TILE_ALLOCATION: BusAddress = BusAddress(0x0010_0000);
/// Its size: 4 KiB.
pub const TILE_ALLOCATION_BYTES: u32 = 0x1000;
/// The tile state data array.
pub const TILE_STATE: BusAddress = BusAddress(0x0011_0000);
/// Its size: 4 KiB.
pub const TILE_STATE_BYTES: u32 = 0x1000;
/// Shader records and vertices ([`Sample::records`]).
pub const RECORDS: BusAddress = BusAddress(0x0012_0000);
/// The shader code ([`Sample::code`]).
pub const CODE: BusAddress = BusAddress(0x0013_0000);
/// The uniforms ([`Sample::uniforms`]).
pub const UNIFORMS: BusAddress = BusAddress(0x0014_0000);
/// Offset of the GL shader record in [`Sample::records`].
pub const GL_RECORD: usize = 0;
/// Offset of the NV shader record.
pub const NV_RECORD: usize = 48;
/// Offset of the vertices (three, 12 bytes each: Xs/Ys, Zs, 1/Wc).
pub const VERTICES: usize = 64;
/// Bytes per vertex.
pub const VERTEX_BYTES: usize = 12;
/// Tiles each way of the sample frame.
pub const TILES: u32 = 2;

/// The colour the sample's fragment shader writes.
pub const COLOUR: u32 = 0xff00_ff00;

/// The sample's buffers' bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample {
    /// The fragment (and, for the GL record, vertex and coordinate) shader: six
    /// instructions, then room to grow.
    pub code: [u8; 64],
    /// The GL record at [`GL_RECORD`], the NV record at [`NV_RECORD`], vertices at
    /// [`VERTICES`].
    pub records: [u8; 128],
    /// The uniforms (the shader reads none).
    pub uniforms: [u8; 16],
}

impl Default for Sample {
    fn default() -> Self {
        Self::new()
    }
}

impl Sample {
    /// The valid sample.
    pub fn new() -> Sample {
        let mut code = [0u8; 64];
        let mut words = [0u64; 8];
        // Six instructions fit the eight words; the tests check the sample is valid.
        if let Ok(program) = constant_colour(COLOUR, &mut words) {
            for (slot, word) in code.chunks_exact_mut(8).zip(program) {
                slot.copy_from_slice(&word.to_le_bytes());
            }
        }
        let mut records = [0u8; 128];
        let put =
            |r: &mut [u8; 128], at: usize, v: u32| r[at..at + 4].copy_from_slice(&v.to_le_bytes());
        let (code_at, uniforms_at) = (CODE.0 as u32, UNIFORMS.0 as u32);
        // GL record (Table 45): single-threaded FS; FS, VS, CS code and uniforms; one
        // attribute array of 12-byte vertices.
        records[GL_RECORD] = 1;
        for at in [4, 16, 28] {
            put(&mut records, GL_RECORD + at, code_at);
            put(&mut records, GL_RECORD + at + 4, uniforms_at);
        }
        put(&mut records, GL_RECORD + 36, RECORDS.0 as u32 + VERTICES as u32);
        records[GL_RECORD + 40] = (VERTEX_BYTES - 1) as u8;
        records[GL_RECORD + 41] = VERTEX_BYTES as u8;
        // NV record (Table 46): single-threaded FS, 12-byte stride, no varyings.
        records[NV_RECORD] = 1;
        records[NV_RECORD + 1] = VERTEX_BYTES as u8;
        put(&mut records, NV_RECORD + 4, code_at);
        put(&mut records, NV_RECORD + 8, uniforms_at);
        put(&mut records, NV_RECORD + 12, RECORDS.0 as u32 + VERTICES as u32);
        Sample { code, records, uniforms: [0; 16] }
    }

    /// The buffers, with the bytes the rules read.
    pub fn buffers(&self) -> [Buffer<'_>; 5] {
        [
            Buffer::new(TILE_ALLOCATION, TILE_ALLOCATION_BYTES, Purposes::TILE_ALLOCATION),
            Buffer::new(TILE_STATE, TILE_STATE_BYTES, Purposes::TILE_STATE),
            Buffer::with_contents(
                RECORDS,
                &self.records,
                Purposes::SHADER_RECORDS | Purposes::VERTICES,
            ),
            Buffer::with_contents(CODE, &self.code, Purposes::SHADER_CODE),
            Buffer::with_contents(UNIFORMS, &self.uniforms, Purposes::UNIFORMS),
        ]
    }

    /// A binning list drawing the three vertices with the GL record, or with the NV record
    /// when `nv`: its bytes (in a 64-byte array) and length.
    pub fn binning_list(&self, nv: bool) -> ([u8; 64], usize) {
        let mut out = [0u8; 64];
        let mut len = 0;
        let mut push = |bytes: &[u8]| {
            out[len..len + bytes.len()].copy_from_slice(bytes);
            len += bytes.len();
        };
        let mut config = tbmc::Body::new()
            .with_tile_allocation_memory_size(TILE_ALLOCATION_BYTES)
            .with_auto_initialise_tile_state_data_array(true);
        tbmc::TILE_ALLOCATION_MEMORY_ADDRESS.set(&mut config.0, TILE_ALLOCATION.0);
        tbmc::TILE_STATE_DATA_ARRAY_BASE_ADDRESS.set(&mut config.0, TILE_STATE.0);
        tbmc::WIDTH.set(&mut config.0, u64::from(TILES));
        tbmc::HEIGHT.set(&mut config.0, u64::from(TILES));
        push(config.bytes());
        push(cl::start_tile_binning::Body::new().bytes());
        push(
            primitive_list_format::Body::new()
                .with_data_type(primitive_list_format::DataType::V16BitIndex)
                .with_primitive_type(primitive_list_format::PrimitiveType::Triangles)
                .bytes(),
        );
        if nv {
            let mut state = nv_shader_state::Body::new();
            nv_shader_state::MEMORY_ADDRESS_OF_SHADER_RECORD
                .set(&mut state.0, RECORDS.0 + NV_RECORD as u64);
            push(state.bytes());
        } else {
            let mut state = gl_shader_state::Body::new();
            gl_shader_state::MEMORY_ADDRESS_OF_SHADER_RECORD
                .set(&mut state.0, (RECORDS.0 + GL_RECORD as u64) >> 4);
            gl_shader_state::NUMBER_OF_ATTRIBUTE_ARRAYS.set(&mut state.0, 1);
            push(state.bytes());
        }
        push(
            vertex_array_primitives::Body::new()
                .with_primitive_mode(vertex_array_primitives::PrimitiveMode::Triangles)
                .with_length(3)
                .bytes(),
        );
        push(cl::increment_semaphore::Body::new().bytes());
        push(cl::flush::Body::new().bytes());
        (out, len)
    }
}
