//! The family-generic contract suite (`gpu-contract`, issue #17 §1) over the V3D driver and
//! the emulated V3D in process. The marker is written by the device: a QPU user program
//! stores the value from its uniforms to memory through the VPM and a VDW DMA (§7), then
//! raises its host interrupt (§3, HOST_INT) so fence interrupts have a source.

mod emulated;

use std::cell::RefCell;
use std::time::Duration;

use baregpu_qpu_asm::vpm;
use baregpu_videocore_v3d::hal::RegisterIoExt;
use baregpu_videocore_v3d::hal::dma::DmaRegion;
use baregpu_videocore_v3d::regs::v3d::{V3D_SQRSV0, V3D_SQRSV1};
use baregpu_videocore_v3d::{BuildError, Submission, UserProgram};
use emulated::*;
use gpu_contract::{Fixture, InProcessDevice};

/// The marker program: 16 copies of uniform 0 into VPM row 0, one row stored to the address in
/// uniform 1, the store waited for, the host interrupt, the end.
const MARKER: &str = "\
    ldi vw_setup, 0x1a00          # vpm::write_rows(0)
    mov vpm, unif                 # uniform 0: the value
    ldi vw_setup, 0x80904000      # vpm::store_rows(1, 16, 0)
    mov vw_addr, unif             # uniform 1: the marker's address
    mov r0, vw_wait
    mov host_int, 1
    thrend
    nop
    nop
";

/// Uniform slots the marker programs cycle through: more than can be queued or running at
/// once (the 16-deep queue, the 12 QPUs), so a slot is rewritten only after its program ran.
const SLOTS: usize = 1024;

/// What the marker writes need while a test runs: `write_marker` gets no fixture.
struct Markers {
    code: u32,
    marker: u32,
    uniforms: DmaRegion,
    next: usize,
}

thread_local! {
    static MARKERS: RefCell<Option<Markers>> = const { RefCell::new(None) };
}

struct V3dFixture<'a> {
    gpu: &'a Gpu,
    drv: Driver<'a>,
    marker: Buffer<'a>,
}

impl<'a> Fixture for V3dFixture<'a> {
    type Queue = Driver<'a>;

    fn queue(&mut self) -> &mut Driver<'a> {
        &mut self.drv
    }
    type Model = gpu_device_model::PlatformDevice<v3d_model::V3d>;

    fn device(&self) -> InProcessDevice<'_, Self::Model> {
        InProcessDevice::new(self.gpu, |m| m.model().faults().switches())
    }
    /// One user program request.
    const MARKER_UNITS: usize = 1;
    fn write_marker(s: &mut Submission<'_>, value: u32) -> Result<(), BuildError> {
        let program = MARKERS.with_borrow_mut(|m| {
            let m = m.as_mut().expect("markers set up");
            let slot = m.next % SLOTS;
            m.next += 1;
            m.uniforms.write_slice(slot * 8, &[value, m.marker]).expect("uniform slot");
            UserProgram {
                code: baregpu_videocore_v3d::hal::dma::BusAddress(m.code.into()),
                uniforms: baregpu_videocore_v3d::hal::dma::BusAddress(
                    m.uniforms.bus_address().0 + (slot * 8) as u64,
                ),
                uniforms_len: 2,
            }
        });
        s.program(&program)
    }
    fn read_marker(&self) -> u32 {
        self.marker.read_u32(0).expect("marker")
    }
    fn closure_error() -> BuildError {
        BuildError::BadProgram
    }
    /// The user program queue's 16 requests.
    fn ring_units(&self) -> usize {
        baregpu_videocore_v3d::SRQ_DEPTH as usize
    }
    const TIMEOUT: Duration = TIMEOUT;
    /// One `V3D_SRQPC` write per user program request.
    fn doorbells(markers: usize) -> u64 {
        markers as u64
    }
    /// The reset's test is `V3D_SCRATCH`; a running QPU cannot be stopped (the document
    /// describes no way), the queued requests are dropped.
    const RESET_TESTS_ENGINE: bool = false;
}

/// Run `test` on a fresh emulated V3D and its driver. User programs run on QPU 0 only (the
/// others reserved against them, `V3D_SQRSV0/1` bit 0 per QPU, Table 62), so the markers land
/// in queue order as the suite requires; 256 bytes of VPM are reserved for them.
fn with_v3d(test: impl Fn(&mut V3dFixture<'_>)) {
    let gpu = gpu();
    let mut drv = driver(&gpu, None);
    drv.reserve_user_vpm(256).expect("user VPM");
    const USER: u8 = 1;
    drv.io().write(
        V3D_SQRSV0::RESET
            .with_qpursv1(USER)
            .with_qpursv2(USER)
            .with_qpursv3(USER)
            .with_qpursv4(USER)
            .with_qpursv5(USER)
            .with_qpursv6(USER)
            .with_qpursv7(USER),
    );
    drv.io().write(
        V3D_SQRSV1::RESET
            .with_qpursv8(USER)
            .with_qpursv9(USER)
            .with_qpursv10(USER)
            .with_qpursv11(USER),
    );
    let code = program_code(&gpu, MARKER);
    let marker = alloc(&gpu, 64);
    let uniforms = alloc(&gpu, SLOTS * 8).into_raw();
    MARKERS.set(Some(Markers {
        code: code.bus_address().0 as u32,
        marker: marker.bus_address().0 as u32,
        uniforms,
        next: 0,
    }));
    test(&mut V3dFixture { gpu: &gpu, drv, marker });
    MARKERS.set(None);
}

gpu_contract::contract_suite!(with_v3d);

#[test]
fn the_marker_program_uses_the_documented_vpm_setups() {
    assert!(MARKER.contains(&format!("{:#x}", vpm::write_rows(0))));
    assert!(MARKER.contains(&format!("{:#x}", vpm::store_rows(1, 16, 0))));
}
