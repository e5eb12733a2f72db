//! Lists that did not come from the driver's writer: the validator (`baregpu-vc4-validate`)
//! accepts the lists the driver itself writes (with NV shader state allowed), and an
//! untrusted binning list goes to the device only validated, copied into the driver's buffer
//! and with the driver's rendering list; a hostile one never reaches a register.

mod common;

use baregpu_hal::dma::BusAddress;
use baregpu_regs::packet::{Walked, records};
use baregpu_videocore_v3d::job::{self, rendering_list_bytes};
use baregpu_videocore_v3d::regs::packets as cl;
use baregpu_videocore_v3d::regs::v3d::{V3D_CT0CA, V3D_CT1CA};
use baregpu_videocore_v3d::validate::sample::Sample;
use baregpu_videocore_v3d::validate::{
    Buffer, Buffers as Described, ListError, ListRule, Options, Purposes, validate_binning_list,
};
use baregpu_videocore_v3d::{
    BuildError, JobBuffer, JobError, ListOrigin, SubmitError, UntrustedJob, UntrustedMemory, V3d,
    V3dConfig,
};
use common::*;

const COPY_BUS: u64 = 0x0500_0000;
const COPY_RENDER_BUS: u64 = 0x0501_0000;

/// The job's buffers as the validator sees them; the fragment shader is the validator's
/// sample (a single-threaded constant colour, as `common::shader()` declares).
struct Contents {
    vertices: Vec<u8>,
    code: [u8; 64],
    uniforms: [u8; 16],
}

impl Contents {
    fn of(bufs: &Buffers) -> Self {
        Contents {
            vertices: bytes(&bufs.vertices, 4096),
            code: Sample::new().code,
            uniforms: [0; 16],
        }
    }

    fn described(&self) -> [Buffer<'_>; 5] {
        [
            Buffer::new(BusAddress(TILE_ALLOC_BUS), 64 * 1024, Purposes::TILE_ALLOCATION),
            Buffer::new(BusAddress(TILE_STATE_BUS), 4096, Purposes::TILE_STATE),
            Buffer::with_contents(
                BusAddress(VERTICES_BUS),
                &self.vertices,
                Purposes::SHADER_RECORDS | Purposes::VERTICES,
            ),
            Buffer::with_contents(BusAddress(SHADER_BUS), &self.code, Purposes::SHADER_CODE),
            Buffer::with_contents(BusAddress(UNIFORMS_BUS), &self.uniforms, Purposes::UNIFORMS),
        ]
    }
}

/// Offset of record `id` in `list`.
fn offset_of(list: &[u8], id: u8) -> usize {
    records(cl::ALL, list)
        .find_map(|step| match step {
            Walked::Record { at, record, .. } if record.opcode == id => Some(at),
            _ => None,
        })
        .unwrap()
}

/// The driver's lists for the sample triangle job: (buffers, binning list bytes).
fn drivers_job() -> (Buffers, Vec<u8>) {
    let bufs = Buffers::new();
    let tris = one_triangle();
    let built = job::build(&triangle_job(&tris), &bufs.memory()).unwrap();
    let list = bytes(&bufs.binning, (built.binning.end.0 - built.binning.start.0) as usize);
    (bufs, list)
}

#[test]
fn the_drivers_own_binning_list_passes_the_validator_with_nv_shader_state() {
    let (bufs, list) = drivers_job();
    let contents = Contents::of(&bufs);
    let described = contents.described();
    let summary = validate_binning_list(&list, &Described::new(&described), &Options::NV).unwrap();
    assert_eq!((summary.tiles_x, summary.tiles_y, summary.draws), (3, 2, 1));
    assert_eq!(summary.tile_allocation, TILE_ALLOC_BUS);
    // Linux's rules refuse NV shader state (65), which the driver draws with.
    assert_eq!(
        validate_binning_list(&list, &Described::new(&described), &Options::LINUX),
        Err(ListError {
            offset: offset_of(&list, cl::NV_SHADER_STATE.opcode),
            rule: ListRule::NotAllowed { id: 65 }
        })
    );
}

fn untrusted<'a>(
    list: &'a [u8],
    described: &'a [Buffer<'a>],
    copy: &'a Buffers,
    width: u16,
) -> ListOrigin<'a> {
    let tris = one_triangle();
    let mut framebuffer = triangle_job(&tris).framebuffer;
    framebuffer.width = width;
    ListOrigin::Untrusted {
        job: UntrustedJob {
            binning_list: list,
            buffers: described,
            options: Options::NV,
            framebuffer,
            clear_color: triangle_job(&tris).clear_color,
        },
        memory: UntrustedMemory { binning_list: &copy.binning, rendering_list: &copy.rendering },
    }
}

/// Buffers for the driver's copy of an untrusted list (only `binning` and `rendering` used).
fn copy_buffers() -> Buffers {
    let mut b = Buffers::new();
    b.binning = region(256, COPY_BUS);
    b.rendering = region(4096, COPY_RENDER_BUS);
    b
}

/// A brought-up V3D over `fake`, its write log cleared.
fn up(fake: &FakeV3d) -> V3d<'_, &FakeV3d, StepClock> {
    let v3d = V3d::init(fake, StepClock::default(), None, V3dConfig::default()).unwrap();
    fake.clear_log();
    v3d
}

/// A test's world: the driver's own job (its buffers and binning list), those buffers as
/// the validator sees them, the buffers of the driver's copy, a scripted device.
struct World {
    bufs: Buffers,
    list: Vec<u8>,
    contents: Contents,
    copy: Buffers,
    fake: FakeV3d,
}

fn world() -> World {
    let (bufs, list) = drivers_job();
    let contents = Contents::of(&bufs);
    World { bufs, list, contents, copy: copy_buffers(), fake: FakeV3d::default() }
}

#[test]
fn an_untrusted_list_is_validated_copied_and_given_the_drivers_rendering_list() {
    let World { bufs, list, contents, copy, fake } = world();
    let described = contents.described();
    let mut v3d = up(&fake);
    let built = v3d
        .submit(2, |s| {
            let built = s.render_lists(untrusted(&list, &described, &copy, 130))?;
            s.fence()?;
            Ok(built)
        })
        .unwrap();
    // The device reads the driver's copy, not the program's bytes.
    assert_eq!(built.binning.start, BusAddress(COPY_BUS));
    assert_eq!(fake.writes_to(off::<V3D_CT0CA>()), [COPY_BUS as u32]);
    assert_eq!(fake.writes_to(off::<V3D_CT1CA>()), [COPY_RENDER_BUS as u32]);
    assert_eq!(bytes(&copy.binning, list.len()), list);
    // The rendering list is the one the driver writes for its own job of the same frame.
    let len = rendering_list_bytes(6);
    assert_eq!(bytes(&copy.rendering, len), bytes(&bufs.rendering, len));
}

#[test]
fn a_hostile_untrusted_list_never_reaches_the_device() {
    let World { list, contents, copy, fake, .. } = world();
    let described = contents.described();
    let mut v3d = up(&fake);
    let draw_at = offset_of(&list, cl::VERTEX_ARRAY_PRIMITIVES.opcode);
    // 1000 vertices: the draw reads far past the vertex buffer.
    let mut hostile = list.clone();
    hostile[draw_at + 2..draw_at + 6].copy_from_slice(&1000u32.to_le_bytes());
    // A branch to memory the validator never saw.
    let mut branching = list.clone();
    branching.splice(draw_at..draw_at, [16, 0, 0, 0, 0x30]);
    let cases: [(&[u8], u16, JobError); 3] = [
        (
            &hostile,
            130,
            JobError::Rejected(ListError {
                offset: draw_at,
                rule: ListRule::AttributeOutOfBounds { attribute: 0 },
            }),
        ),
        (
            &branching,
            130,
            JobError::Rejected(ListError {
                offset: draw_at,
                rule: ListRule::NotAllowed { id: 16 },
            }),
        ),
        // A valid list for a wider frame: the rendering list would read unwritten tile lists.
        (&list, 500, JobError::TilesMismatch { list: (3, 2), framebuffer: (8, 2) }),
    ];
    for (list, width, expected) in cases {
        fake.clear_log();
        let result = v3d.submit(2, |s| {
            s.render_lists(untrusted(list, &described, &copy, width))?;
            s.fence()
        });
        assert_eq!(result.unwrap_err(), SubmitError::Build(BuildError::Job(expected)));
        assert_eq!(fake.log(), [], "no register written for {expected:?}");
        assert!(bytes(&copy.binning, 256).iter().all(|&b| b == 0), "nothing copied");
    }
}

#[test]
fn a_copy_buffer_without_whole_dwords_for_the_list_is_refused_before_any_write() {
    // The driver's own list is 77 bytes: a copy buffer of exactly 77 cannot store the partial
    // last dword (the closing Flush); refused with the size that holds it.
    let World { list, contents, mut copy, fake, .. } = world();
    assert_ne!(list.len() % 4, 0);
    copy.binning = exact_region(list.len(), COPY_BUS);
    let described = contents.described();
    let mut v3d = up(&fake);
    let r = v3d.submit(2, |s| {
        s.render_lists(untrusted(&list, &described, &copy, 130))?;
        s.fence()
    });
    let needed = job::list_buffer_bytes(list.len());
    assert_eq!(
        r.unwrap_err(),
        SubmitError::Build(BuildError::Job(JobError::BufferTooSmall {
            buffer: JobBuffer::BinningList,
            needed,
            size: list.len(),
        }))
    );
    assert!(fake.log().is_empty(), "no register written");
    let whole = list.len() & !3;
    assert_eq!(bytes(&copy.binning, whole), vec![0; whole], "no byte copied");
}
