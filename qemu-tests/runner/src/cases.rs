//! The test cases and what each expects.

use crate::images::Images;
use std::fmt;
use std::time::Duration;

/// Numbers the benchmark case logs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bench {
    /// Mailbox register round trips per second.
    pub round_trips_per_s: f64,
    /// DMA bytes per second between model and guest RAM.
    pub dma_bytes_per_s: f64,
}

/// How a case ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The image reported success.
    Passed {
        /// QEMU start to exit.
        boot_to_exit: Option<Duration>,
        /// Benchmark figures, if the case logs them.
        bench: Option<Bench>,
    },
    /// The test kernel reported a failure (assertion, panic, exception).
    KernelFailed {
        /// The kernel's last error lines.
        reason: String,
    },
    /// The device model process exited before QEMU did.
    ModelDied {
        /// How it exited.
        status: String,
    },
    /// A model the case kills mid-run (`Model::dies`) was still alive when the kernel finished:
    /// the case did not test what it says.
    ModelSurvived {
        /// The model's name.
        model: &'static str,
    },
    /// QEMU exited in a way the kernel never requests.
    QemuCrashed {
        /// Exit status and QEMU's last stderr lines.
        status: String,
    },
    /// Nothing ended the case in time; everything was killed.
    TimedOut {
        /// The case's timeout.
        after: Duration,
    },
    /// A built image (the Pi's SD card) does not hold what was written into it.
    ImageInvalid {
        /// What differs.
        reason: String,
    },
    /// A frame the kernel rendered differs from the runner's reference rasterisation (or
    /// could not be read from guest RAM).
    FrameMismatch {
        /// Which frame, how many pixels, where the PNGs are.
        reason: String,
    },
    /// The case could not be started (missing program, build failure, file errors).
    Setup {
        /// What went wrong.
        reason: String,
    },
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Passed { .. } => write!(f, "passed"),
            Outcome::KernelFailed { reason } => write!(f, "test kernel reported failure: {reason}"),
            Outcome::ImageInvalid { reason } => write!(f, "image read back wrong: {reason}"),
            Outcome::ModelDied { status } => write!(f, "device model died mid-test ({status})"),
            Outcome::ModelSurvived { model } => {
                write!(f, "device model {model} was to die mid-run but was still alive at the end")
            }
            Outcome::QemuCrashed { status } => write!(f, "QEMU exited unexpectedly: {status}"),
            Outcome::TimedOut { after } => {
                write!(f, "timed out after {} s; killed QEMU and the model", after.as_secs())
            }
            Outcome::FrameMismatch { reason } => write!(f, "rendered frame wrong: {reason}"),
            Outcome::Setup { reason } => write!(f, "could not start: {reason}"),
        }
    }
}

/// What a case must produce to pass.
pub enum Expect {
    /// The image reports success.
    Pass,
    /// The image reports success and logs exactly these frames (scenes of
    /// `gpu_mailbox::v3d_scenes`, in order), each equal to the runner's reference
    /// (`frames`): a render case cannot pass without its picture check.
    Frames(&'static [&'static str]),
    /// A negative test: the runner must report this kind of failure (cleanly, in time).
    Fail(fn(&Outcome) -> bool),
}

/// One device-model process beside QEMU, behind its own `ivshmem-doorbell` function (the
/// guest finds the functions in this order on the PCI bus).
#[derive(Debug, Clone, Copy)]
pub struct Model {
    /// `model-server --model` name.
    pub name: &'static str,
    /// Extra model-server arguments.
    pub args: &'static [&'static str],
    /// The model is made to abort mid-run (`--die-after-requests` in `args`): its death is part
    /// of the case, not a failure, and the case fails if it is still alive at the end.
    pub dies: bool,
}

impl Model {
    /// A model that must live until QEMU exits.
    pub const fn new(name: &'static str, args: &'static [&'static str]) -> Model {
        Model { name, args, dies: false }
    }
}

/// What runs in a case.
pub enum Kind {
    /// The x86_64 test kernel with `case=<kernel_case>`, beside the named device models (none,
    /// one, or one per emulated GPU of a multi-GPU case).
    X86 {
        /// Kernel test case name (the kernel's command line).
        kernel_case: &'static str,
        /// Device models to run, each behind its own ivshmem function.
        models: &'static [Model],
        /// Environment overrides for the runner itself (negative tests).
        qemu_override: Option<&'static str>,
    },
    /// The test kernel built for aarch64 on QEMU `virt` with `case=<kernel_case>`, beside the
    /// named device models (the same plumbing as [`Kind::X86`]).
    Aarch64 {
        /// Kernel test case name.
        kernel_case: &'static str,
        /// Device models to run, each behind its own ivshmem function.
        models: &'static [Model],
    },
    /// The Raspberry Pi 3 image: framebuffer test pattern checked through a QMP screendump.
    RaspiFramebuffer,
    /// The Raspberry Pi SD-card image (`target/rpi/sdcard.img`), read back: its partition
    /// table, file list and files against what went in. No QEMU.
    RaspiSdCard,
    /// `examples/bootloader-r5xx`: its BIOS disk image (rust-osdev `bootloader` 0.11) booted
    /// with `-drive` beside the emulated R520; its COM1 text must hold the fence line.
    BootloaderR5xx,
}

/// One test case.
pub struct Case {
    /// Unique name (also its output folder).
    pub name: &'static str,
    /// One line for `qemu-runner list`.
    pub summary: &'static str,
    /// What runs.
    pub kind: Kind,
    /// Pass condition.
    pub expect: Expect,
    /// Wall-clock limit (TCG on 2 cores; a case normally takes 1-3 s).
    pub timeout: Duration,
    /// Part of `qemu-runner demo`.
    pub demo: bool,
}

const SELFTEST: &[Model] = &[Model::new("selftest", &[])];
/// The emulated R520 under model-server's default engine pacing: `GPU_MODEL_PACING` if set,
/// else seeded with the framework's default seed (never run-to-idle unless asked): the driver
/// in the guest sees partly consumed rings and fences in flight.
pub const R5XX: &[Model] = &[Model::new("r5xx", &[])];
/// The emulated R520 with its engines on model-server's engine thread, 100 ticks per ms of
/// wall time (up to 1,600 ring dwords/ms at the driver's MAX_FETCH), as hardware runs.
const R5XX_THREADED: &[Model] = &[Model::new("r5xx", &["--pacing", "threaded:100"])];

/// An R5xx case: the test kernel's `r5xx-*` case beside the emulated R520.
const fn r5xx(name: &'static str, summary: &'static str, demo: bool) -> Case {
    Case {
        name,
        summary,
        kind: Kind::X86 { kernel_case: name, models: R5XX, qemu_override: None },
        expect: Expect::Pass,
        timeout: Duration::from_secs(60),
        demo,
    }
}

/// The emulated Cypress / Cayman under model-server's default engine pacing.
const CYPRESS: &[Model] = &[Model::new("evergreen-cypress", &[])];
const CAYMAN: &[Model] = &[Model::new("evergreen-cayman", &[])];
/// The emulated Cypress / Cayman with their engines (CP, shader core, DMA engine) on
/// model-server's engine thread, 100 ticks per ms of wall time.
const CYPRESS_THREADED: &[Model] =
    &[Model::new("evergreen-cypress", &["--pacing", "threaded:100"])];
const CAYMAN_THREADED: &[Model] = &[Model::new("evergreen-cayman", &["--pacing", "threaded:100"])];

/// An Evergreen case: the test kernel's `evergreen-*` case beside one chip's model (the kernel
/// finds the chip by probing).
const fn evergreen(
    name: &'static str,
    kernel_case: &'static str,
    models: &'static [Model],
    summary: &'static str,
    demo: bool,
) -> Case {
    Case {
        name,
        summary,
        kind: Kind::X86 { kernel_case, models, qemu_override: None },
        expect: Expect::Pass,
        timeout: Duration::from_secs(90),
        demo,
    }
}

/// The emulated VideoCore IV V3D under model-server's default engine pacing.
const V3D: &[Model] = &[Model::new("v3d", &[])];

/// A V3D case: the test kernel's case of the same name beside the emulated V3D. A render
/// case's frame is read from guest RAM, saved as `frame.png` and compared with the runner's
/// own rasterisation (`frames`).
const fn v3d(
    name: &'static str,
    summary: &'static str,
    frames: &'static [&'static str],
    demo: bool,
) -> Case {
    Case {
        name,
        summary,
        kind: Kind::X86 { kernel_case: name, models: V3D, qemu_override: None },
        expect: if frames.is_empty() { Expect::Pass } else { Expect::Frames(frames) },
        timeout: Duration::from_secs(120),
        demo,
    }
}

/// The same V3D case on aarch64 `virt` (the kernel's `v3d-*` code there, with the name
/// `aarch64-<...>`): the driver's aarch64 build, barriers and MMIO paths against the model.
const fn aarch64_v3d(
    name: &'static str,
    summary: &'static str,
    frames: &'static [&'static str],
) -> Case {
    Case {
        name,
        summary,
        kind: Kind::Aarch64 { kernel_case: name, models: V3D },
        expect: if frames.is_empty() { Expect::Pass } else { Expect::Frames(frames) },
        timeout: Duration::from_secs(120),
        demo: false,
    }
}

/// The emulated GT215 alone.
const GT215: &[Model] = &[Model::new("gt215", &[])];

/// An nVidia Tesla case: the test kernel's case of the same name beside the emulated GT215.
const fn gt215(name: &'static str, summary: &'static str, demo: bool) -> Case {
    Case {
        name,
        summary,
        kind: Kind::X86 { kernel_case: name, models: GT215, qemu_override: None },
        expect: Expect::Pass,
        timeout: Duration::from_secs(120),
        demo,
    }
}

/// Two GPUs in one guest: the R520 and the Cypress, each its own model process and ivshmem
/// function (the guest tells them apart by probing).
const R520_CYPRESS: &[Model] = &[Model::new("r5xx", &[]), Model::new("evergreen-cypress", &[])];

/// Every case, in run order.
pub static CASES: &[Case] = &[
    Case {
        name: "x86-boot",
        summary: "long mode, heap, DMA allocator, clock, exception handling",
        kind: Kind::X86 { kernel_case: "boot", models: &[], qemu_override: None },
        expect: Expect::Pass,
        timeout: Duration::from_secs(30),
        demo: true,
    },
    Case {
        name: "selftest-registers",
        summary: "probe the virtual PCI function; registers with side effects",
        kind: Kind::X86 {
            kernel_case: "selftest-registers",
            models: SELFTEST,
            qemu_override: None,
        },
        expect: Expect::Pass,
        timeout: Duration::from_secs(30),
        demo: true,
    },
    Case {
        name: "selftest-dma",
        summary: "DMA both directions, DMA fault -> model error state -> reset",
        kind: Kind::X86 { kernel_case: "selftest-dma", models: SELFTEST, qemu_override: None },
        expect: Expect::Pass,
        timeout: Duration::from_secs(30),
        demo: false,
    },
    Case {
        name: "selftest-irq",
        summary: "device interrupts reach the guest handler (MSI-X)",
        kind: Kind::X86 { kernel_case: "selftest-irq", models: SELFTEST, qemu_override: None },
        expect: Expect::Pass,
        timeout: Duration::from_secs(30),
        demo: false,
    },
    Case {
        name: "selftest-bench",
        summary: "mailbox round trips/s and DMA bandwidth (reported, not asserted)",
        kind: Kind::X86 { kernel_case: "selftest-bench", models: SELFTEST, qemu_override: None },
        expect: Expect::Pass,
        timeout: Duration::from_secs(60),
        demo: false,
    },
    r5xx("r5xx-demo", "R520: firmware loaded, IB executed, fence signalled", true),
    r5xx("r5xx-probe", "R520 found on the virtual PCI segment, BAR0 decoded", false),
    r5xx("r5xx-firmware", "R520_cp.bin uploaded (1 + 512 writes) and verified by read-back", false),
    r5xx("r5xx-ring", "ring test: a type-0 scratch write lands in memory", false),
    r5xx("r5xx-ib", "IB1 from the ring, IB2 from inside IB1", false),
    r5xx("r5xx-stress", "10,000 submissions with wrap-around and ordered fences", false),
    Case {
        name: "r5xx-stress-threaded",
        summary: "r5xx-stress with the R520's engines on their own thread (wall clock)",
        kind: Kind::X86 { kernel_case: "r5xx-stress", models: R5XX_THREADED, qemu_override: None },
        expect: Expect::Pass,
        timeout: Duration::from_secs(60),
        demo: false,
    },
    r5xx("r5xx-pio", "PIO push mode through the primary aperture", false),
    r5xx("r5xx-irq", "software and scratch interrupts through MSI-X", false),
    r5xx(
        "r5xx-faults",
        "each injected fault gives its typed error (slow is not hung), unknown microcode \
         runs nothing, then recovery",
        false,
    ),
    r5xx("ctm-demo", "CTM SAXPY on the R520: checksum and first elements", true),
    r5xx("ctm-vector-add", "CTM vector add, checked element by element", false),
    r5xx("ctm-saxpy", "CTM SAXPY with a float constant, checked element by element", false),
    r5xx("ctm-stencil", "CTM 4-point stencil over a tiled input", false),
    r5xx("ctm-reduce", "CTM 2x2 reduction gated by the conditional output unit", false),
    r5xx("ctm-units", "CTM caches, perf counters, wait_for_idle fault and recovery", false),
    evergreen(
        "evergreen-cypress-probe",
        "evergreen-probe",
        CYPRESS,
        "Cypress: probe: the chipset table names the chip, register BAR decoded",
        false,
    ),
    evergreen(
        "evergreen-cypress-firmware",
        "evergreen-firmware",
        CYPRESS,
        "Cypress: PFP/ME/RLC at the write floor, read back; other chip's images refused with no access; corrupted read-back named",
        false,
    ),
    evergreen(
        "evergreen-cypress-ring",
        "evergreen-ring",
        CYPRESS,
        "Cypress: ring and IB tests, 2,000 fenced batches on a wrapping 4 KiB ring, one doorbell each",
        false,
    ),
    evergreen(
        "evergreen-cypress-ring-threaded",
        "evergreen-ring",
        CYPRESS_THREADED,
        "evergreen-cypress-ring with the engines on their own thread (wall clock)",
        false,
    ),
    evergreen(
        "evergreen-cypress-irq",
        "evergreen-irq",
        CYPRESS,
        "Cypress: EOP interrupts through the IH ring as MSI-X",
        false,
    ),
    evergreen(
        "evergreen-cypress-cp-dma",
        "evergreen-cp-dma",
        CYPRESS,
        "Cypress: CP DMA fill and copy equal to the CPU",
        false,
    ),
    evergreen(
        "evergreen-cypress-predication",
        "evergreen-predication",
        CYPRESS,
        "Cypress: COND_EXEC, SET_PREDICATION and WAIT_REG_MEM show the skipped and waited work",
        false,
    ),
    evergreen(
        "evergreen-cypress-faults",
        "evergreen-faults",
        CYPRESS,
        "Cypress: hung CP (timeout, soft reset), slow CP (no reset), device gone, function-level reset with firmware reload",
        false,
    ),
    evergreen(
        "evergreen-cypress-compute",
        "evergreen-compute",
        CYPRESS,
        "Cypress: VECTOR_ADD and SAXPY compared element by element with the CPU",
        false,
    ),
    evergreen(
        "evergreen-cypress-demo",
        "evergreen-demo",
        CYPRESS,
        "Cypress: vector add and SAXPY: checksums and first elements",
        true,
    ),
    evergreen(
        "evergreen-cayman-probe",
        "evergreen-probe",
        CAYMAN,
        "Cayman: probe: the chipset table names the chip, register BAR decoded",
        false,
    ),
    evergreen(
        "evergreen-cayman-firmware",
        "evergreen-firmware",
        CAYMAN,
        "Cayman: PFP/ME/RLC at the write floor, read back; other chip's images refused with no access; corrupted read-back named",
        false,
    ),
    evergreen(
        "evergreen-cayman-ring",
        "evergreen-ring",
        CAYMAN,
        "Cayman: ring and IB tests, 2,000 fenced batches on a wrapping 4 KiB ring, one doorbell each",
        false,
    ),
    evergreen(
        "evergreen-cayman-irq",
        "evergreen-irq",
        CAYMAN,
        "Cayman: EOP interrupts through the IH ring as MSI-X",
        false,
    ),
    evergreen(
        "evergreen-cayman-cp-dma",
        "evergreen-cp-dma",
        CAYMAN,
        "Cayman: CP DMA fill and copy equal to the CPU",
        false,
    ),
    evergreen(
        "evergreen-cayman-predication",
        "evergreen-predication",
        CAYMAN,
        "Cayman: COND_EXEC, SET_PREDICATION and WAIT_REG_MEM show the skipped and waited work",
        false,
    ),
    evergreen(
        "evergreen-cayman-faults",
        "evergreen-faults",
        CAYMAN,
        "Cayman: hung CP (timeout, soft reset), slow CP (no reset), device gone, function-level reset with firmware reload",
        false,
    ),
    evergreen(
        "evergreen-cayman-compute",
        "evergreen-compute",
        CAYMAN,
        "Cayman: VECTOR_ADD and SAXPY compared element by element with the CPU",
        false,
    ),
    evergreen(
        "evergreen-cayman-compute-threaded",
        "evergreen-compute",
        CAYMAN_THREADED,
        "evergreen-cayman-compute with the engines on their own thread (wall clock)",
        false,
    ),
    evergreen(
        "evergreen-cayman-demo",
        "evergreen-demo",
        CAYMAN,
        "Cayman: vector add and SAXPY: checksums and first elements",
        true,
    ),
    v3d(
        "v3d-probe",
        "V3D_IDENT0/1/2 decoded (3 slices x 4 QPUs, 12 KiB VPM); all-ones is DeviceGone for \
         probe and init after reads only; IDENT0 zero (powered off) is NotV3d",
        &[],
        false,
    ),
    v3d(
        "v3d-triangle",
        "one triangle through the constant-colour fragment shader over four tiles: frame.png \
         compared pixel by pixel with the runner's rasterisation",
        &["triangle"],
        false,
    ),
    v3d(
        "v3d-scene",
        "four overlapping triangles of both windings with interpolated colours (the \
         varying-colour shader): frame.png compared with the runner's rasterisation",
        &["scene"],
        true,
    ),
    v3d(
        "v3d-vector-add",
        "VECTOR_ADD through the user-program queue (TMU loads, VPM DMA store) equals the CPU's sum",
        &[],
        false,
    ),
    v3d(
        "v3d-saxpy",
        "SAXPY over 768 floats on twelve QPUs queued in one submission, bit for bit the CPU's",
        &[],
        false,
    ),
    v3d(
        "v3d-faults",
        "all-ones: DeviceGone, no doorbell; stuck CLE: bounded wait times out; OUTOMEM storm: \
         OverflowPoolExhausted; each recovered by reset (lost fence, frame renders); list fetch \
         fault: ControlListError, platform reset, fresh bring-up; slow CLE completes",
        &[],
        false,
    ),
    v3d(
        "v3d-irq",
        "opt-in interrupts by MSI-X: a frame's FRDONE and a QPU host interrupt acknowledged by \
         handle_interrupts; missed-irq: no MSI-X, the fence completes by polling, the latched \
         bit found by a polled handler",
        &[],
        false,
    ),
    gt215(
        "nvidia-gt215-probe",
        "PCI 10de:0ca3 with BAR1/BAR3 apertures; PMC.BOOT_0 decoded as GT215 and logged; G84, \
         G98 and MCP89 ids refused naming what they lack; all-ones: init is DeviceGone",
        false,
    ),
    gt215(
        "nvidia-gt215-channels",
        "PFIFO init, two IB-mode channels with their own RAMFC/RAMHT each running a fence; \
         channel 2 disabled and unloaded while channel 1 runs on, enabled again running a fence; \
         destroyed, then created again and running",
        false,
    ),
    gt215(
        "nvidia-gt215-ib",
        "5,000 fences (30,000 methods) through a wrapping 4 KiB IB-mode pushbuffer and an \
         8-entry IB ring, in order, REF_CNT the last, one IB_PUT per batch; under cp-stall the \
         IB ring fills and the next batch waits for IB_GET (counted) and times out",
        false,
    ),
    gt215(
        "nvidia-gt215-dma",
        "a DMA-mode channel: 10,000 REF_CNT methods through a 4 KiB pushbuffer wrapped by \
         jumps, back-pressure on DMA_GET; all executed in order, no PFIFO error",
        false,
    ),
    gt215(
        "nvidia-gt215-semaphores",
        "across two channels: an acquire >= stalls until the other releases; an acquire equal \
         the other way round likewise",
        false,
    ),
    gt215(
        "nvidia-gt215-pfifo-errors",
        "DMA mode: invalid method, invalid command, return without call, call inside a \
         subroutine, jump past the object: each FifoError::DmaPusher with its kind, skipped, \
         the channel runs on; IB mode: a raw zero-size IB entry is IbEmpty, the queue's reset \
         recovers",
        false,
    ),
    gt215(
        "nvidia-gt215-falcon",
        "the mailbox echo uploaded, booted and answered on PDAEMON and PCOPY, PCOPY's exit \
         interrupt; the DMEM checksum on PDAEMON equal to the CPU's",
        false,
    ),
    gt215(
        "nvidia-gt215-copy",
        "the copy-engine firmware on PCOPY copies 4 KiB given through PFIFO, releases its \
         semaphore; the destination equals the source",
        false,
    ),
    gt215(
        "nvidia-gt215-faults",
        "invalid method and dma-fault: typed DmaPusher errors, queue reset recovers; cp-stall: \
         bounded timeout, then recovery; slow=8 completes; a falcon that never halts is \
         NotHalted, reset through PMC.ENABLE it runs the mailbox echo; all-ones: submit is DeviceGone",
        false,
    ),
    gt215(
        "nvidia-gt215-demo",
        "GT215: chipset from BOOT_0, PDAEMON mailbox round trip, a checksummed PCOPY copy",
        true,
    ),
    Case {
        name: "multi-gpu-probe",
        summary: "an R520 and a Cypress in one guest, each beside its own model: both found by \
                  probing, own mailbox, BARs and MSI-X vector; each one's interrupt on its own",
        kind: Kind::X86 {
            kernel_case: "multi-gpu-probe",
            models: R520_CYPRESS,
            qemu_override: None,
        },
        expect: Expect::Pass,
        timeout: Duration::from_secs(90),
        demo: false,
    },
    Case {
        name: "multi-gpu-schedule",
        summary: "examples/gpu-scheduler over the R520 and the Cypress in one guest: submissions \
                  interleaved, completion by interrupt, every scratch write and CP DMA fill \
                  checked by the CPU",
        kind: Kind::X86 {
            kernel_case: "multi-gpu-schedule",
            models: R520_CYPRESS,
            qemu_override: None,
        },
        expect: Expect::Pass,
        timeout: Duration::from_secs(120),
        demo: false,
    },
    Case {
        name: "multi-gpu-one-dies",
        summary: "the R520's model aborts mid-run: the Cypress's jobs all complete by interrupt, \
                  the R520's fences fail with DeviceGone (none pending), in bounded time",
        kind: Kind::X86 {
            kernel_case: "multi-gpu-one-dies",
            // The Cypress first: the guest must tell them apart by probing, not by bus order.
            // The R520's bring-up takes ~1,100 requests and its 400 jobs ~570 more: it dies
            // about halfway through its jobs (the kernel fails if it dies during bring-up, the
            // runner if it survives).
            models: &[
                Model::new("evergreen-cypress", &[]),
                Model { name: "r5xx", args: &["--die-after-requests", "1380"], dies: true },
            ],
            qemu_override: None,
        },
        expect: Expect::Pass,
        timeout: Duration::from_secs(120),
        demo: false,
    },
    Case {
        name: "bootloader-r5xx",
        summary: "examples/bootloader-r5xx from a bootloader 0.11 disk image: PCI probe, R5xx \
                  init with R520_cp.bin, a fence submitted, waited for and printed",
        kind: Kind::BootloaderR5xx,
        expect: Expect::Pass,
        timeout: Duration::from_secs(60),
        demo: false,
    },
    Case {
        name: "negative-model-dies",
        summary: "the device model aborts mid-test: a clean failure naming it, no hang",
        kind: Kind::X86 {
            kernel_case: "selftest-bench",
            models: &[Model::new("selftest", &["--die-after-requests", "200"])],
            qemu_override: None,
        },
        expect: Expect::Fail(
            |o| matches!(o, Outcome::ModelDied { status } if status.contains("SIGABRT")),
        ),
        timeout: Duration::from_secs(30),
        demo: false,
    },
    Case {
        name: "negative-model-survives",
        summary: "a model the case was to kill mid-run is still alive at the end: a failure, so \
                  a multi-GPU death case cannot pass without its death",
        kind: Kind::X86 {
            kernel_case: "selftest-registers",
            models: &[Model { name: "selftest", args: &[], dies: true }],
            qemu_override: None,
        },
        expect: Expect::Fail(
            |o| matches!(o, Outcome::ModelSurvived { model } if *model == "selftest"),
        ),
        timeout: Duration::from_secs(30),
        demo: false,
    },
    Case {
        name: "aarch64-boot",
        summary: "aarch64 virt: MMU off, heap, DMA allocator, generic timer, ECAM scan finds the ivshmem function, BARs assigned, mailbox answers",
        kind: Kind::Aarch64 { kernel_case: "aarch64-boot", models: SELFTEST },
        expect: Expect::Pass,
        timeout: Duration::from_secs(30),
        demo: false,
    },
    Case {
        name: "aarch64-selftest",
        summary: "aarch64 virt: the self-test device's registers and DMA through the polled mailbox",
        kind: Kind::Aarch64 { kernel_case: "aarch64-selftest", models: SELFTEST },
        expect: Expect::Pass,
        timeout: Duration::from_secs(30),
        demo: false,
    },
    aarch64_v3d(
        "aarch64-v3d-probe",
        "aarch64: v3d-probe's checks (IDENT decoded, all-ones DeviceGone, NotV3d)",
        &[],
    ),
    aarch64_v3d(
        "aarch64-v3d-triangle",
        "aarch64: v3d-triangle: one triangle over four tiles, frame.png compared with the runner's rasterisation",
        &["triangle"],
    ),
    aarch64_v3d(
        "aarch64-v3d-scene",
        "aarch64: v3d-scene: four interpolated triangles, frame.png compared with the runner's rasterisation",
        &["scene"],
    ),
    aarch64_v3d(
        "aarch64-v3d-user-program",
        "aarch64: v3d-vector-add: VECTOR_ADD through the user-program queue equals the CPU's sum",
        &[],
    ),
    aarch64_v3d(
        "aarch64-v3d-saxpy",
        "aarch64: v3d-saxpy: SAXPY on twelve QPUs, bit for bit the CPU's",
        &[],
    ),
    aarch64_v3d(
        "aarch64-v3d-faults",
        "aarch64: v3d-faults: all-ones, stuck CLE, OUTOMEM storm, list fetch fault, slow CLE, each recovered",
        &[],
    ),
    Case {
        name: "aarch64-negative-panic",
        summary: "aarch64: a panic is a failure reported with its location",
        kind: Kind::Aarch64 { kernel_case: "aarch64-fail-panic", models: &[] },
        expect: Expect::Fail(
            |o| matches!(o, Outcome::KernelFailed { reason } if reason.contains("panic at") && reason.contains(".rs:")),
        ),
        timeout: Duration::from_secs(30),
        demo: false,
    },
    Case {
        name: "aarch64-negative-exception",
        summary: "aarch64: an unaligned load with the MMU off is an alignment fault, reported",
        kind: Kind::Aarch64 { kernel_case: "aarch64-fail-exception", models: &[] },
        expect: Expect::Fail(
            |o| matches!(o, Outcome::KernelFailed { reason } if reason.contains("exception: synchronous")),
        ),
        timeout: Duration::from_secs(30),
        demo: false,
    },
    Case {
        name: "negative-kernel-panic",
        summary: "a panic in the test kernel is a failure reported with its location",
        kind: Kind::X86 { kernel_case: "fail-panic", models: &[], qemu_override: None },
        expect: Expect::Fail(
            |o| matches!(o, Outcome::KernelFailed { reason } if reason.contains("panic at") && reason.contains(".rs:")),
        ),
        timeout: Duration::from_secs(30),
        demo: false,
    },
    Case {
        name: "negative-kernel-exception",
        summary: "a CPU exception in the test kernel is a failure with its report",
        kind: Kind::X86 { kernel_case: "fail-exception", models: &[], qemu_override: None },
        expect: Expect::Fail(|o| matches!(o, Outcome::KernelFailed { .. })),
        timeout: Duration::from_secs(30),
        demo: false,
    },
    Case {
        name: "negative-qemu-missing",
        summary: "QEMU not installed: a clear message naming the set-up command",
        kind: Kind::X86 {
            kernel_case: "boot",
            models: &[],
            qemu_override: Some("/nonexistent/qemu-system-x86_64"),
        },
        expect: Expect::Fail(
            |o| matches!(o, Outcome::Setup { reason } if reason.contains("bash scripts/setup.sh")),
        ),
        timeout: Duration::from_secs(10),
        demo: false,
    },
    Case {
        name: "raspi3b-framebuffer",
        summary: "kernel8.img on raspi3b: typed V3D not present, test pattern checked by pixels",
        kind: Kind::RaspiFramebuffer,
        expect: Expect::Pass,
        timeout: Duration::from_secs(60),
        demo: true,
    },
    Case {
        name: "raspi3b-sdcard-image",
        summary: "target/rpi/sdcard.img read back: one bootable FAT32 (0x0C) partition, the boot \
                  files, kernel8.img byte for byte",
        kind: Kind::RaspiSdCard,
        expect: Expect::Pass,
        timeout: Duration::from_secs(60),
        demo: true,
    },
];

/// Run one case.
pub fn run(case: &Case, images: &Images) -> Outcome {
    let dir = crate::output_dir().join(case.name);
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(e) = std::fs::create_dir_all(&dir) {
        return Outcome::Setup { reason: format!("cannot create {}: {e}", dir.display()) };
    }
    match &case.kind {
        Kind::X86 { kernel_case, models, qemu_override } => {
            let Some(kernel) = &images.kernel else {
                return Outcome::Setup { reason: "the test kernel was not built".into() };
            };
            let boot = crate::x86::Boot::Pvh { kernel, case: kernel_case };
            crate::x86::run(case, boot, models, *qemu_override, images, &dir)
        }
        Kind::Aarch64 { kernel_case, models } => {
            let Some(kernel) = &images.kernel_aarch64 else {
                return Outcome::Setup { reason: "the aarch64 test kernel was not built".into() };
            };
            let boot = crate::x86::Boot::Virt { kernel, case: kernel_case };
            crate::x86::run(case, boot, models, None, images, &dir)
        }
        Kind::BootloaderR5xx => {
            let Some(image) = &images.bootloader_r5xx else {
                return Outcome::Setup {
                    reason: "the bootloader-r5xx disk image was not built".into(),
                };
            };
            crate::x86::run(case, crate::x86::Boot::Disk { image }, R5XX, None, images, &dir)
        }
        Kind::RaspiFramebuffer => crate::raspi::run(case, images, &dir),
        Kind::RaspiSdCard => crate::raspi::check_sdcard(images, &dir),
    }
}
