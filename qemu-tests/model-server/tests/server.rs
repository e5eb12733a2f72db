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
        let dir = std::env::temp_dir().join(format!("model-server-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let (socket, ram) = (dir.join("sock"), dir.join("ram"));
        let mut child = Command::new(env!("CARGO_BIN_EXE_model-server"))
            .args(["--model", "selftest", "--socket"])
            .arg(&socket)
            .arg("--guest-ram")
            .arg(&ram)
            .args(["--ram-size", &RAM.to_string()])
            .args(extra)
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

/// `--socket` naming an existing regular file, or the `--guest-ram` file itself: refused with
/// a clear message before anything is deleted.
#[test]
fn socket_path_that_is_not_a_stale_socket_is_refused() {
    let dir = std::env::temp_dir().join(format!("model-server-paths-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (notes, ram) = (dir.join("notes"), dir.join("ram"));
    std::fs::write(&notes, b"precious").unwrap();
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
    // Same path for both (the RAM file exists from the run above): refused as a command-line
    // error; the RAM file is kept.
    let out = run(&ram);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--socket and --guest-ram"), "{err}");
    assert_eq!(std::fs::metadata(&ram).unwrap().len(), RAM, "guest RAM file kept");
    std::fs::remove_dir_all(&dir).unwrap();
}
