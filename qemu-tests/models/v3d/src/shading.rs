//! The seam between the renderer (rasteriser, varyings interpolation, tile buffer) and the
//! QPUs that run fragment shaders.
//!
//! The renderer builds one [`FragmentBatch`] per group of up to four 2x2 quads of one
//! primitive in one tile (a QPU thread's 16 lanes, §3 "Quad Processor Architecture"), starts
//! it on a [`FragmentShading`] implementation and steps it with a bounded instruction budget
//! per model tick (checklist item 3) until it is done; then it applies the result to the tile
//! buffer.

use gpu_device_model::DeviceContext;

/// Lanes of one QPU thread: four quads of 2x2 pixels (§3).
pub const LANES: usize = 16;

/// One varying as the interpolation hardware presents it (§6 "Varyings Interpolation"): the
/// shader reads `partial` (per lane, `A*(x-x0) + B*(y-y0)`) from VARYING_READ and the same
/// read loads `c` into accumulator r5, so `partial * W + c` is the interpolated value.
#[derive(Clone, Debug, PartialEq)]
pub struct VaryingInput {
    /// The partial result per lane.
    pub partial: [f32; LANES],
    /// The C coefficient (constant across the primitive, so across every quad).
    pub c: f32,
}

/// What the front-end pipe hands a fragment-shader thread (§6 "Initial Data", §3 "QPU
/// Register Address Map").
#[derive(Clone, Debug, PartialEq)]
pub struct FragmentBatch {
    /// Bus address of the fragment shader code (shader record, §9).
    pub code_address: u32,
    /// Bus address of the fragment shader's uniforms (shader record, §9).
    pub uniforms_address: u32,
    /// The shader record's single-threaded flag: the shader may use all 64 registers of each
    /// file; otherwise it runs as one of two threads with half of each (§3 "Thread Control").
    pub single_threaded: bool,
    /// X_PIXEL_COORD per lane (regfile A address 41).
    pub x: [u16; LANES],
    /// Y_PIXEL_COORD per lane (regfile B address 41).
    pub y: [u16; LANES],
    /// MS_FLAGS as a lane mask: bit `i` set when lane `i` is inside the primitive (regfile A
    /// address 42). Lanes outside it run but their tile-buffer writes are discarded.
    pub coverage: u16,
    /// REV_FLAG: the primitive is back-facing (regfile B address 42).
    pub reverse: bool,
    /// W per lane, in regfile A location 15 when the shader starts (§6).
    pub w: [f32; LANES],
    /// Fixed-point Z (24 bits) per lane, in regfile B location 15 when the shader starts (§6).
    pub z: [u32; LANES],
    /// The varyings in the order the shader consumes them (§3 "Varyings").
    pub varyings: Vec<VaryingInput>,
    /// The tile buffer's colour at each lane's pixel, returned by a TLB colour read (§5
    /// "Color Read and Write").
    pub tile_colour: [u32; LANES],
}

/// What a finished fragment-shader thread leaves for the tile buffer (§5).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FragmentOutput {
    /// The last value written to a TLB colour register per lane.
    pub colour: [u32; LANES],
    /// Lanes whose colour was written (conditions applied; coverage not yet applied: the
    /// renderer masks with [`FragmentBatch::coverage`]).
    pub colour_written: u16,
    /// The value written to TLB_Z per lane, if the shader wrote Z.
    pub z: [u32; LANES],
    /// Lanes whose Z was written.
    pub z_written: u16,
}

/// Why a fragment-shader thread stopped without finishing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShaderFault {
    /// Bus address of the instruction that faulted.
    pub pc: u32,
    /// What hardware would not do (e.g. an encoding §3 forbids, a DMA fault, a VPM access
    /// from a fragment shader, the instruction budget of one job exhausted).
    pub reason: &'static str,
}

/// The outcome of [`FragmentShading::step`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShadingStep {
    /// The budget ran out before the thread ended; step again on a later tick.
    Running,
    /// The thread ended (thread-end signal and its two delay slots, §3 "Thread Control").
    Done(FragmentOutput),
    /// The thread did something hardware would not do.
    Fault(ShaderFault),
}

/// The QPUs as the renderer sees them.
pub trait FragmentShading {
    /// Start a fragment-shader thread on `batch` (the previous one, if any, is abandoned).
    fn start(&mut self, batch: FragmentBatch);

    /// Run at most `budget` instructions of the current thread, fetching code and uniforms
    /// (and TMU reads) through `dev`.
    fn step(&mut self, dev: &mut DeviceContext<'_>, budget: u32) -> ShadingStep;
}
