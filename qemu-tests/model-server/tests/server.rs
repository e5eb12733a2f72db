//! The real `model-server` binary driven by a fake QEMU: handshake, ready line, the self-test
//! device over the mailbox (registers, DMA through the guest RAM file, interrupt eventfd),
//! clean exit on disconnect, and the fault-injection flags. Waits are bounded; nothing asserts
//! on timing.

use gpu_device_model::transport::client::{ClientError, FakeQemu};
use gpu_device_model::{GuestMemory, SharedFileMemory};
use gpu_mailbox::selftest as ds;
use gpu_mailbox::{IRQ_STATUS, ModelState, Op, Status, header};
use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

const RAM: u64 = 16 << 20;

struct Server {
    child: Child,
    dir: PathBuf,
    socket: PathBuf,
    ram: PathBuf,
}

impl Server {
    fn start(name: &str, extra: &[&str]) -> Server {
        let mut args = vec!["--model", "selftest"];
        args.extend(extra);
        Self::start_with(name, &args)
    }

    fn start_with(name: &str, args: &[&str]) -> Server {
        let dir = std::env::temp_dir().join(format!("model-server-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let (socket, ram) = (dir.join("sock"), dir.join("ram"));
        let mut child = Command::new(env!("CARGO_BIN_EXE_model-server"))
            .args(args)
            .arg("--socket")
            .arg(&socket)
            .arg("--guest-ram")
            .arg(&ram)
            .args(["--ram-size", &RAM.to_string()])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        assert_eq!(line.trim_end(), format!("model-server: ready socket={}", socket.display()));
        Server { child, dir, socket, ram }
    }

    fn connect(&self) -> (FakeQemu, SharedFileMemory) {
        let qemu = FakeQemu::connect(&self.socket).unwrap();
        let ram = SharedFileMemory::open_q35(&self.ram, RAM).unwrap();
        (qemu, ram)
    }

    /// Wait (bounded) for the process to exit.
    fn wait(&mut self) -> ExitStatus {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "model-server did not exit");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn enable(q: &mut FakeQemu) {
    assert_eq!(q.request(Op::ConfigRead, 0, 0, 0).unwrap(), (Status::Ok, 0x5E1F_1234));
    assert_eq!(q.request(Op::ConfigWrite, 0, 4, 0b110).unwrap(), (Status::Ok, 0));
}

fn rd(q: &mut FakeQemu, offset: usize) -> u32 {
    let (status, value) = q.request(Op::MmioRead, 0, offset as u32, 0).unwrap();
    assert_eq!(status, Status::Ok);
    value
}

fn wr(q: &mut FakeQemu, offset: usize, value: u32) -> Status {
    q.request(Op::MmioWrite, 0, offset as u32, value).unwrap().0
}

#[test]
fn selftest_device_over_the_mailbox_then_clean_exit() {
    let mut server = Server::start("e2e", &[]);
    let (mut q, mut ram) = server.connect();
    enable(&mut q);
    assert_eq!(rd(&mut q, ds::ID), ds::ID_VALUE);
    assert_eq!([rd(&mut q, ds::COUNTER), rd(&mut q, ds::COUNTER)], [0, 1]);
    wr(&mut q, ds::INVERT, 0xFF00_FF00);
    assert_eq!(rd(&mut q, ds::INVERT), 0x00FF_00FF);

    // Guest RAM → device → guest RAM, checked in the RAM file.
    let words: Vec<u8> = (0..64u32).flat_map(|i| (i * 3).to_le_bytes()).collect();
    ram.write(0x10_0000, &words).unwrap();
    wr(&mut q, ds::IRQ_ENABLE, ds::IRQ_DMA_DONE);
    wr(&mut q, ds::DMA_ADDR_LO, 0x10_0000);
    wr(&mut q, ds::DMA_LEN, 256);
    assert_eq!(wr(&mut q, ds::DMA_CMD, ds::DMA_CMD_TO_DEVICE), Status::Ok);
    assert_eq!(rd(&mut q, ds::DMA_STATUS), ds::DMA_STATUS_DONE);
    assert_eq!(rd(&mut q, ds::CHECKSUM), (0..64u32).map(|i| i * 3).sum::<u32>());
    assert_eq!(q.wait_irq(Duration::from_secs(10)).unwrap(), 1, "MSI-X vector signalled");
    assert_eq!(q.mailbox().load(IRQ_STATUS, Ordering::Acquire), 1);
    wr(&mut q, ds::DMA_ADDR_LO, 0x20_0000);
    assert_eq!(wr(&mut q, ds::DMA_CMD, ds::DMA_CMD_FROM_DEVICE), Status::Ok);
    let mut back = vec![0u8; 256];
    ram.read(0x20_0000, &mut back).unwrap();
    assert_eq!(back, words);
    // Interrupt handler: device, then mailbox.
    wr(&mut q, ds::IRQ_STATUS, ds::IRQ_DMA_DONE);
    assert_eq!(q.request(Op::IrqAck, 0, 0, 1).unwrap(), (Status::Ok, 0));

    // DMA fault: the command write completes, the fault shows in DMA_STATUS and the header,
    // registers keep answering, recovered by reset.
    wr(&mut q, ds::DMA_ADDR_LO, (RAM - 4) as u32);
    wr(&mut q, ds::DMA_LEN, 8);
    assert_eq!(wr(&mut q, ds::DMA_CMD, ds::DMA_CMD_FROM_DEVICE), Status::Ok);
    assert_eq!(q.mailbox().load(header::STATE, Ordering::Acquire), ModelState::Error as u32);
    assert_eq!(
        q.mailbox().load(header::ERROR, Ordering::Acquire),
        selftest_model::ERROR_DMA_ADDRESS
    );
    assert_eq!(rd(&mut q, ds::DMA_STATUS), ds::DMA_STATUS_FAULT);
    assert_eq!(wr(&mut q, ds::SCRATCH, 0x5A5A), Status::Ok);
    assert_eq!(rd(&mut q, ds::SCRATCH), 0x5A5A);
    assert_eq!(q.mailbox().load(header::STATE, Ordering::Acquire), ModelState::Error as u32);
    assert_eq!(q.request(Op::Reset, 0, 0, 0).unwrap(), (Status::Ok, 0));
    assert_eq!(q.mailbox().load(header::STATE, Ordering::Acquire), ModelState::Ready as u32);
    assert_eq!(q.mailbox().load(header::ERROR, Ordering::Acquire), 0);
    assert_eq!(rd(&mut q, ds::SCRATCH), 0);
    assert_eq!(rd(&mut q, ds::DMA_STATUS), 0);

    let served = q.mailbox().load(header::SERVED, Ordering::Acquire);
    assert_eq!(served, 26);
    q.disconnect();
    let status = server.wait();
    assert!(status.success(), "{status:?}");
    assert!(!server.socket.exists(), "socket removed");
}

#[test]
fn die_after_requests_aborts_leaving_the_request_unanswered() {
    let mut server = Server::start("die", &["--die-after-requests", "2"]);
    let (mut q, _ram) = server.connect();
    enable(&mut q);
    q.deadline = Duration::from_millis(200);
    assert!(matches!(q.request(Op::MmioRead, 0, 0, 0), Err(ClientError::Timeout)));
    let status = server.wait();
    assert_eq!(status.signal(), Some(libc::SIGABRT), "{status:?}");
}

#[test]
fn fault_after_requests_enters_the_error_state() {
    let mut server = Server::start("fault", &["--fault-after-requests", "3"]);
    let (mut q, _ram) = server.connect();
    enable(&mut q);
    assert_eq!(rd(&mut q, ds::ID), ds::ID_VALUE);
    assert_eq!(q.mailbox().load(header::STATE, Ordering::Acquire), ModelState::Ready as u32);
    // Injected before request 4, which is still performed (like every later one).
    assert_eq!(rd(&mut q, ds::ID), ds::ID_VALUE);
    assert_eq!(q.mailbox().load(header::STATE, Ordering::Acquire), ModelState::Error as u32);
    let error = q.mailbox().load(header::ERROR, Ordering::Acquire);
    assert_eq!(error, gpu_device_model::error_code::INJECTED);
    assert_eq!(wr(&mut q, ds::SCRATCH, 3), Status::Ok);
    assert_eq!(rd(&mut q, ds::SCRATCH), 3);
    q.disconnect();
    assert!(server.wait().success());
}

fn run(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_model-server")).args(args).output().unwrap()
}

#[test]
fn unknown_model_is_a_clear_error_listing_the_models() {
    let out = run(&[
        "--model",
        "r9000",
        "--socket",
        "/nonexistent/s",
        "--guest-ram",
        "/nonexistent/r",
        "--ram-size",
        "1M",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown model `r9000`") && err.contains("selftest"), "{err}");
    assert!(out.stdout.is_empty(), "no ready line");
}

#[test]
fn bad_command_lines_exit_2_and_help_lists_models() {
    let out = run(&["--model", "selftest"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--socket is required"));
    let out = run(&["--help"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("selftest"));
}

/// A fresh scratch directory holding a regular file `notes` ("precious"), and the path of a
/// guest RAM file in it (not created).
fn scratch_with_notes(name: &str) -> (PathBuf, PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("model-server-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (notes, ram) = (dir.join("notes"), dir.join("ram"));
    std::fs::write(&notes, b"precious").unwrap();
    (dir, notes, ram)
}

/// `--socket` naming an existing regular file, or the `--guest-ram` file itself: refused with
/// a clear message before anything is deleted.
#[test]
fn socket_path_that_is_not_a_stale_socket_is_refused() {
    let (dir, notes, ram) = scratch_with_notes("paths");
    // An existing guest RAM file (the runner creates it before the server): a failed start
    // leaves it as it was.
    std::fs::File::create(&ram).unwrap().set_len(RAM).unwrap();
    // A server that accepted the path would wait for QEMU forever: bounded wait, then kill.
    let run = |socket: &std::path::Path| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_model-server"))
            .args(["--model", "selftest", "--socket"])
            .arg(socket)
            .arg("--guest-ram")
            .arg(&ram)
            .args(["--ram-size", &RAM.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while child.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                let _ = child.kill();
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        child.wait_with_output().unwrap()
    };
    let out = run(&notes);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("not a socket"), "{err}");
    assert_eq!(std::fs::read(&notes).unwrap(), b"precious");
    assert_eq!(std::fs::metadata(&ram).unwrap().len(), RAM, "existing guest RAM file kept");
    // Same path for both: refused as a command-line error; the RAM file is kept.
    let out = run(&ram);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--socket and --guest-ram"), "{err}");
    assert_eq!(std::fs::metadata(&ram).unwrap().len(), RAM, "guest RAM file kept");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A guest RAM file the server created is gone after a failed start; an existing file with
/// data that is smaller than `--ram-size` is refused, not silently extended.
#[test]
fn a_failed_start_leaves_no_ram_file_and_a_small_one_is_refused() {
    let (dir, notes, ram) = scratch_with_notes("ram");
    let start = |socket: &std::path::Path| {
        Command::new(env!("CARGO_BIN_EXE_model-server"))
            .args(["--model", "selftest", "--socket"])
            .arg(socket)
            .arg("--guest-ram")
            .arg(&ram)
            .args(["--ram-size", &RAM.to_string()])
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    // Binding fails (the socket path is a regular file) after the RAM file was created.
    let out = start(&notes);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!ram.exists(), "a failed start left the guest RAM file it created behind");
    // A small existing file with data: refused with a message, unchanged.
    std::fs::write(&ram, b"another guest's RAM").unwrap();
    let out = start(&dir.join("sock"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("fewer than the 16777216 of guest RAM"), "{err}");
    assert!(out.stdout.is_empty(), "no ready line");
    assert_eq!(std::fs::read(&ram).unwrap(), b"another guest's RAM", "not extended");
    std::fs::remove_dir_all(&dir).unwrap();
}

// --- the emulated R5xx under each engine pacing -------------------------------------------------

/// §11.1 register offsets (MMReg) and values, by hand.
const CP_RB_BASE: usize = 0x700;
const CP_RB_CNTL: usize = 0x704;
const CP_RB_RPTR_ADDR: usize = 0x70C;
const CP_RB_WPTR: usize = 0x714;
const CP_CSQ_CNTL: usize = 0x740;
const CP_ME_RAM_ADDR: usize = 0x7D4;
const CP_ME_RAM_DATAH: usize = 0x7DC;
const CP_ME_RAM_DATAL: usize = 0x7E0;
/// CP_CSQ_CNTL.CSQ_MODE (31:28) 2 = "Primary BM, Indirect Disabled".
const PRIMARY_BM: u32 = 2 << 28;
/// A type-2 filler packet (§6.1.3).
const TYPE2: u32 = 2 << 30;
const RING: u64 = 0x10_0000;
const RPTR_COPY: u64 = 0x8000;
const RING_DWORDS: u32 = 2048;

fn start_r5xx(name: &str, extra: &[&str]) -> (Server, FakeQemu, SharedFileMemory) {
    let mut args = vec!["--model", "r5xx"];
    args.extend(extra);
    let server = Server::start_with(name, &args);
    let (mut q, ram) = server.connect();
    assert_eq!(q.request(Op::ConfigWrite, 0, 4, 0b110).unwrap(), (Status::Ok, 0));
    (server, q, ram)
}

/// Upload R520_cp.bin (§5.12), a ring of fillers with write-back every 2 quadwords, MAX_FETCH
/// 8 dwords (one per engine tick); then ring the doorbell once.
fn fill_and_ring(q: &mut FakeQemu, ram: &mut SharedFileMemory) {
    let image = std::fs::read("/lib/firmware/radeon/R520_cp.bin")
        .expect("radeon/R520_cp.bin: run `bash scripts/setup.sh` (firmware-amd-graphics)");
    wr(q, CP_ME_RAM_ADDR, 0);
    for e in image.chunks_exact(8) {
        wr(q, CP_ME_RAM_DATAH, u32::from_be_bytes([e[0], e[1], e[2], e[3]]));
        wr(q, CP_ME_RAM_DATAL, u32::from_be_bytes([e[4], e[5], e[6], e[7]]));
    }
    // RB_BUFSZ 10 = 2^11 dwords, RB_BLKSZ 1 = 2 quadwords, MAX_FETCH 0 = 8 dwords.
    wr(q, CP_RB_CNTL, 10 | 1 << 8);
    wr(q, CP_RB_BASE, RING as u32);
    wr(q, CP_RB_RPTR_ADDR, RPTR_COPY as u32);
    ram.write(RPTR_COPY, &u32::MAX.to_le_bytes()).unwrap();
    let fillers: Vec<u8> = (0..RING_DWORDS - 1).flat_map(|_| TYPE2.to_le_bytes()).collect();
    ram.write(RING, &fillers).unwrap();
    wr(q, CP_CSQ_CNTL, PRIMARY_BM);
    wr(q, CP_RB_WPTR, RING_DWORDS - 1);
}

/// The written-back read pointers the guest sees polling RAM only (no requests) until the CP
/// is done or `within` passes.
fn poll_copy(ram: &SharedFileMemory, within: Duration) -> Vec<u32> {
    let deadline = Instant::now() + within;
    let mut seen = Vec::new();
    while Instant::now() < deadline {
        let mut b = [0u8; 4];
        ram.read(RPTR_COPY, &mut b).unwrap();
        let v = u32::from_le_bytes(b);
        if seen.last() != Some(&v) {
            seen.push(v);
        }
        if v == RING_DWORDS - 1 {
            break;
        }
        std::thread::yield_now();
    }
    seen
}

#[test]
fn r5xx_engines_advance_while_the_guest_polls_memory_under_every_pacing() {
    // 2047 fillers at 8 dwords per tick: 256 ticks. Run to idle they are done before the
    // doorbell request completes; seeded, the server's 1 ms timer keeps ticking while the
    // guest only polls memory; threaded, the engine thread does. Paced, the guest sees the
    // read pointer part-way.
    for pacing in ["run-to-idle", "seeded:9", "threaded:20"] {
        let (mut server, mut q, mut ram) = start_r5xx("pace", &["--pacing", pacing]);
        fill_and_ring(&mut q, &mut ram);
        let seen = poll_copy(&ram, Duration::from_secs(20));
        assert_eq!(seen.last(), Some(&(RING_DWORDS - 1)), "{pacing}: done: {seen:?}");
        if pacing == "run-to-idle" {
            assert_eq!(seen, [RING_DWORDS - 1], "done with the doorbell");
        } else {
            assert!(seen.len() > 2, "{pacing}: progress seen part-way: {seen:?}");
        }
        assert_eq!(q.mailbox().load(header::STATE, Ordering::Acquire), ModelState::Ready as u32);
        q.disconnect();
        assert!(server.wait().success(), "{pacing}");
    }
}

#[test]
fn r5xx_faults_from_the_command_line() {
    // cp-stall: the CP never fetches, whatever the pacing.
    let (mut server, mut q, mut ram) =
        start_r5xx("stall", &["--pacing", "threaded:50", "--fault", "cp-stall"]);
    fill_and_ring(&mut q, &mut ram);
    assert_eq!(poll_copy(&ram, Duration::from_millis(200)), [u32::MAX], "no write-back");
    q.disconnect();
    assert!(server.wait().success());
    // slow: one packet per 4 ticks, still done.
    let (mut server, mut q, mut ram) =
        start_r5xx("slow", &["--pacing", "threaded:500", "--fault", "slow=4"]);
    fill_and_ring(&mut q, &mut ram);
    let seen = poll_copy(&ram, Duration::from_secs(20));
    assert_eq!(seen.last(), Some(&(RING_DWORDS - 1)), "{seen:?}");
    q.disconnect();
    assert!(server.wait().success());
    // A bad list, or faults for a model without any, is a command-line error.
    let base = ["--socket", "/nonexistent/s", "--guest-ram", "/nonexistent/r", "--ram-size", "1M"];
    for (model, fault, message) in [
        ("r5xx", "melt", "unknown fault `melt`"),
        ("evergreen-cayman", "ucode-corrupt=4096", "unknown fault `ucode-corrupt=4096`"),
        ("selftest", "cp-stall", "has no injectable faults"),
        ("v3d", "ucode-corrupt", "unknown fault `ucode-corrupt`"),
    ] {
        let mut args = vec!["--model", model, "--fault", fault];
        args.extend(base);
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{model} {fault}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(message), "{err}");
    }
}

/// The emulated Evergreen/Cayman over the socket: microcode from /lib/firmware, then a ring of
/// ME_INITIALIZE and fillers, served by the engine thread while the guest only polls memory.
#[test]
fn evergreen_models_serve_a_ring_on_the_engine_thread() {
    // Linux radeon evergreend.h offsets.
    const CP_ME_CNTL: usize = 0x86D8;
    const PFP_ADDR: usize = 0xC150;
    const PFP_DATA: usize = 0xC154;
    const ME_WADDR: usize = 0xC15C;
    const ME_DATA: usize = 0xC160;
    const RB_BASE: usize = 0xC100;
    const RB_CNTL: usize = 0xC104;
    const RB_RPTR_ADDR: usize = 0xC10C;
    const RB_WPTR: usize = 0xC114;
    for (model, chip) in [("evergreen-cypress", "CYPRESS"), ("evergreen-cayman", "CAYMAN")] {
        let server = Server::start_with(model, &["--model", model, "--pacing", "threaded:20"]);
        let (mut q, mut ram) = server.connect();
        assert_eq!(q.request(Op::ConfigWrite, 0, 4, 0b110).unwrap(), (Status::Ok, 0));
        for (part, addr, data) in [("pfp", PFP_ADDR, PFP_DATA), ("me", ME_WADDR, ME_DATA)] {
            let path = format!("/lib/firmware/radeon/{chip}_{part}.bin");
            let image = std::fs::read(&path)
                .unwrap_or_else(|e| panic!("{path}: {e}: run `bash scripts/setup.sh`"));
            wr(&mut q, addr, 0);
            for w in image.chunks_exact(4) {
                wr(&mut q, data, u32::from_be_bytes([w[0], w[1], w[2], w[3]]));
            }
        }
        // RB_BUFSZ 10 = 2^11 dwords, RB_BLKSZ 1; base >> 8; ME_INITIALIZE (§9.2.1, opcode 0x44,
        // MAX_CONTEXT 7) then type-2 fillers (§9.1.3).
        wr(&mut q, RB_CNTL, 10 | 1 << 8);
        wr(&mut q, RB_BASE, (RING >> 8) as u32);
        wr(&mut q, RB_RPTR_ADDR, RPTR_COPY as u32);
        ram.write(RPTR_COPY, &u32::MAX.to_le_bytes()).unwrap();
        let mut words = vec![3 << 30 | 5 << 16 | 0x44 << 8, 1, 0, 7, 0, 0, 0];
        words.resize(RING_DWORDS as usize - 1, TYPE2);
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        ram.write(RING, &bytes).unwrap();
        wr(&mut q, CP_ME_CNTL, 0);
        wr(&mut q, RB_WPTR, RING_DWORDS - 1);
        let seen = poll_copy(&ram, Duration::from_secs(20));
        assert_eq!(seen.last(), Some(&(RING_DWORDS - 1)), "{model}: done: {seen:?}");
        assert!(seen.len() > 2, "{model}: progress seen part-way: {seen:?}");
        assert_eq!(q.mailbox().load(header::STATE, Ordering::Acquire), ModelState::Ready as u32);
        q.disconnect();
        let mut server = server;
        assert!(server.wait().success(), "{model}");
    }
}

/// The emulated V3D over the socket: the project-defined PCI identity, `V3D_IDENT0` ("V3D",
/// technology version 2, §10 Table 79) through BAR0, and `--fault all-ones` from the command
/// line making every register read all-ones, as a V3D that fell off the bus (its bad fault
/// lists: `r5xx_faults_from_the_command_line`).
#[test]
fn v3d_model_answers_and_takes_its_faults_from_the_command_line() {
    const V3D_IDENT0: usize = 0x000;
    for (name, extra, ident0) in
        [("v3d", &[][..], 0x0244_3356), ("v3d-ones", &["--fault", "all-ones"][..], u32::MAX)]
    {
        let mut args = vec!["--model", "v3d"];
        args.extend(extra);
        let mut server = Server::start_with(name, &args);
        let (mut q, _ram) = server.connect();
        assert_eq!(q.request(Op::ConfigRead, 0, 0, 0).unwrap(), (Status::Ok, 0x3D04_1234));
        assert_eq!(q.request(Op::ConfigWrite, 0, 4, 0b110).unwrap(), (Status::Ok, 0));
        assert_eq!(rd(&mut q, V3D_IDENT0), ident0, "{name}");
        q.disconnect();
        assert!(server.wait().success(), "{name}");
    }
}

/// The emulated GT215 over the socket: nVidia's PCI identity, `PMC.BOOT_0` naming GT215
/// (nvidia-hardware-envytools §2.2.3: GPU id 0xa3 in bits 28:20), PTIMER advancing on the
/// engine thread while the guest only reads it, and `--fault all-ones` from the command line
/// making every register read all-ones, as a GPU that fell off the bus.
#[test]
fn gt215_model_answers_and_takes_its_faults_from_the_command_line() {
    // envytools rnndb bus/pmc.xml and bus/ptimer.xml.
    const BOOT_0: usize = 0x0;
    const TIME_LOW: usize = 0x9400;
    for (name, extra, gpu_id) in
        [("gt215", &[][..], Some(0xa3)), ("gt215-ones", &["--fault", "all-ones"][..], None)]
    {
        let mut args = vec!["--model", "gt215", "--pacing", "threaded:50"];
        args.extend(extra);
        let mut server = Server::start_with(name, &args);
        let (mut q, _ram) = server.connect();
        assert_eq!(q.request(Op::ConfigRead, 0, 0, 0).unwrap(), (Status::Ok, 0x0CA3_10DE));
        assert_eq!(q.request(Op::ConfigWrite, 0, 4, 0b110).unwrap(), (Status::Ok, 0));
        let boot = rd(&mut q, BOOT_0);
        match gpu_id {
            Some(id) => {
                assert_eq!(boot >> 20 & 0x1ff, id, "{name}: BOOT_0 {boot:#x}");
                let first = rd(&mut q, TIME_LOW);
                let deadline = Instant::now() + Duration::from_secs(20);
                while rd(&mut q, TIME_LOW) == first {
                    assert!(Instant::now() < deadline, "{name}: PTIMER never advanced");
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
            None => {
                assert_eq!(boot, u32::MAX, "{name}");
                assert_eq!(rd(&mut q, TIME_LOW), u32::MAX, "{name}");
            }
        }
        q.disconnect();
        assert!(server.wait().success(), "{name}");
    }
}
