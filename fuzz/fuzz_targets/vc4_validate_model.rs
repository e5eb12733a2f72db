//! The emulated V3D for the `vc4_validate` target (included with `#[path]`): guest memory
//! that asserts every access stays inside the ranges the validator was told about, a
//! rendering list for an accepted binning list's tiles (what the driver writes for an
//! untrusted list, Linux vc4_render_cl.c's shape), and one frame run on v3d-model.

use baregpu_hal::register::Register;
use baregpu_regs::vc4::packets::{self as cl, tile_rendering_mode_configuration as trmc};
use baregpu_regs::vc4::v3d::{
    V3D_BFC, V3D_CT0CA, V3D_CT0CS, V3D_CT0EA, V3D_CT1CA, V3D_CT1CS, V3D_CT1EA,
};
use baregpu_vc4_validate::ListSummary;
use gpu_device_model::{
    BAR_WINDOW, COMMAND_BUS_MASTER, COMMAND_MEMORY, Device, DmaFault, GuestMemory, Pacing,
    PlatformDevice, VecMemory,
};
use gpu_mailbox::{Op, platform};
use v3d_model::V3d;

/// Guest RAM: the sample's buffers sit below 2 MiB, the lists and the frame above.
const RAM: usize = 8 << 20;
/// Where the binning list is copied.
pub const BIN_LIST: u64 = 0x18_0000;
/// Where the rendering list goes.
pub const RENDER_LIST: u64 = 0x19_0000;
/// The frame buffer (RGBA8888, linear, 64x64 pixels per tile).
const FRAME: u64 = 0x20_0000;
/// Engine ticks one poll may run before the model counts as hung.
const TICKS: u32 = 4_000;
/// Polls per frame.
const POLLS: usize = 8;

/// The frame buffer of `summary`'s tiles: (base, bytes).
pub fn frame(summary: &ListSummary) -> (u64, u64) {
    let (w, h) = (u64::from(summary.tiles_x) * 64, u64::from(summary.tiles_y) * 64);
    (FRAME, w * h * 4)
}

/// The rendering list for `summary`: clear colours, the frame buffer's configuration, a
/// clearing store of tile (0, 0), then per tile its coordinates, (first) Wait On Semaphore,
/// Branch To Sub-list into the tile allocation memory, and a store (end of frame on the last).
pub fn rendering_list(summary: &ListSummary) -> Vec<u8> {
    let mut l = Vec::new();
    l.extend(cl::clear_colors::Body::new().with_clear_color(0xff20_4060_ff20_4060).bytes());
    let mut config = trmc::Body::new()
        .with_non_hdr_frame_buffer_color_format(trmc::NonHdrFrameBufferColorFormat::Rgba8888);
    trmc::MEMORY_ADDRESS.set(&mut config.0, FRAME);
    trmc::WIDTH.set(&mut config.0, u64::from(summary.tiles_x) * 64);
    trmc::HEIGHT.set(&mut config.0, u64::from(summary.tiles_y) * 64);
    l.extend(config.bytes());
    l.extend(cl::tile_coordinates::Body::new().bytes());
    let mut store = cl::store_tile_buffer_general::Body::new();
    cl::store_tile_buffer_general::MEMORY_BASE_ADDRESS_OF_FRAME_TILE_DUMP_BUFFER
        .set(&mut store.0, FRAME >> 4);
    l.extend(store.bytes());
    let tiles = u32::from(summary.tiles_x) * u32::from(summary.tiles_y);
    for n in 0..tiles {
        let mut coords = cl::tile_coordinates::Body::new();
        cl::tile_coordinates::TILE_COLUMN_NUMBER
            .set(&mut coords.0, u64::from(n % u32::from(summary.tiles_x)));
        cl::tile_coordinates::TILE_ROW_NUMBER
            .set(&mut coords.0, u64::from(n / u32::from(summary.tiles_x)));
        l.extend(coords.bytes());
        if n == 0 {
            l.push(cl::WAIT_ON_SEMAPHORE.opcode);
        }
        let mut branch = cl::branch_to_sub_list::Body::new();
        cl::branch_to_sub_list::ABSOLUTE_BRANCH_ADDRESS.set(
            &mut branch.0,
            summary.tile_allocation + u64::from(n * summary.initial_block_bytes),
        );
        l.extend(branch.bytes());
        l.push(if n + 1 == tiles {
            cl::STORE_MULTI_SAMPLE_RESOLVED_TILE_COLOR_BUFFER_AND_SIGNAL_END_OF_FRAME.opcode
        } else {
            cl::STORE_MULTI_SAMPLE_RESOLVED_TILE_COLOR_BUFFER.opcode
        });
    }
    l
}

/// Guest RAM that asserts reads inside `readable` and writes inside `writable` (base, bytes).
struct Watched {
    ram: VecMemory,
    readable: Vec<(u64, u64)>,
    writable: Vec<(u64, u64)>,
}

fn inside(ranges: &[(u64, u64)], address: u64, len: usize) -> bool {
    ranges.iter().any(|&(base, size)| address >= base && address + len as u64 <= base + size)
}

impl GuestMemory for Watched {
    fn ram_size(&self) -> u64 {
        self.ram.ram_size()
    }
    fn read(&self, address: u64, buf: &mut [u8]) -> Result<(), DmaFault> {
        assert!(inside(&self.readable, address, buf.len()), "read {address:#x}+{}", buf.len());
        self.ram.read(address, buf)
    }
    fn write(&mut self, address: u64, data: &[u8]) -> Result<(), DmaFault> {
        assert!(inside(&self.writable, address, data.len()), "write {address:#x}+{}", data.len());
        self.ram.write(address, data)
    }
}

/// One frame: `contents` (base, bytes) in guest RAM, the lists started (rendering thread
/// first, as the driver does), the engines polled a bounded number of times; the binning jobs
/// the V3D finished (`V3D_BFC`).
pub fn run(
    contents: &[(u64, &[u8])],
    readable: Vec<(u64, u64)>,
    writable: Vec<(u64, u64)>,
    bin_len: u32,
    render_len: u32,
) -> u32 {
    let mut ram = VecMemory::new(RAM).expect("guest RAM");
    for &(base, bytes) in contents {
        ram.write(base, bytes).expect("inside RAM");
    }
    let model = PlatformDevice::new(V3d::new(), platform::DEVICE_V3D);
    let mut device = Device::new(model, Box::new(Watched { ram, readable, writable })).unwrap();
    device.config_mut().assign_bars(BAR_WINDOW);
    device.config_mut().write(4, u32::from(COMMAND_MEMORY | COMMAND_BUS_MASTER)).unwrap();
    device.set_pacing(Pacing::RunToIdle);
    device.set_tick_budget(TICKS);
    let mut write = |offset: usize, value: u32| {
        device.handle(Op::MmioWrite as u32, 0, offset as u32, value);
    };
    let stop = V3D_CT0CS::CTRUN.mask();
    for (cs, ca, ea, start, len) in [
        (V3D_CT1CS::OFFSET, V3D_CT1CA::OFFSET, V3D_CT1EA::OFFSET, RENDER_LIST, render_len),
        (V3D_CT0CS::OFFSET, V3D_CT0CA::OFFSET, V3D_CT0EA::OFFSET, BIN_LIST, bin_len),
    ] {
        write(cs, stop);
        write(ca, start as u32);
        write(ea, start as u32 + len);
    }
    for _ in 0..POLLS {
        device.poll();
    }
    device.handle(Op::MmioRead as u32, 0, V3D_BFC::OFFSET as u32, 0).1 & 0xff
}
