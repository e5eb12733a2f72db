//! End to end over the ivshmem transport without a VM: a server thread with a small model,
//! a fake QEMU that receives the descriptors, maps the shared memory, posts requests and rings
//! the doorbell. No timing assertions: waits are bounded by generous deadlines.

use gpu_device_model::transport::client::FakeQemu;
use gpu_device_model::transport::{Injection, Server, ServerOptions};
use gpu_device_model::{
    Activity, BarSpec, COMMAND_BUS_MASTER, COMMAND_MEMORY, Device, DeviceContext, GpuModel,
    GuestMemory, PciIdentity, SharedFileMemory, error_code,
};
use gpu_mailbox::{IRQ_STATUS, MAGIC, ModelState, Op, Status, header};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::thread;
use std::time::Duration;

/// Registers: 0x0 scratch; 0x4 write = raise line 0 (value != 0) or lower it; 0x8 write =
/// DMA the scratch value to that guest address; 0xC write = wait until the guest-memory
/// dword at that address becomes non-zero, then raise line 1.
#[derive(Default)]
struct Sem {
    scratch: u32,
    wait_on: Option<u64>,
}

impl GpuModel for Sem {
    fn pci_identity(&self) -> PciIdentity {
        PciIdentity::new(0x1234, 0xABCD, 0xFF0000).with_bar(0, BarSpec::mem32(0x100))
    }
    fn mmio_read(&mut self, _: u8, offset: u32, _: &mut DeviceContext<'_>) -> u32 {
        if offset == 0 { self.scratch } else { 0 }
    }
    fn mmio_write(&mut self, _: u8, offset: u32, value: u32, dev: &mut DeviceContext<'_>) {
        match offset {
            0x0 => self.scratch = value,
            0x4 => dev.set_irq(1, value != 0),
            0x8 => {
                if dev.dma_write_u32(value.into(), self.scratch).is_err() {
                    dev.fail(0x42);
                }
            }
            0xC => self.wait_on = Some(value.into()),
            _ => {}
        }
    }
    fn tick(&mut self, dev: &mut DeviceContext<'_>) -> Activity {
        let Some(address) = self.wait_on else { return Activity::Idle };
        match dev.dma_read_u32(address) {
            Ok(0) => Activity::Waiting,
            Ok(_) => {
                self.wait_on = None;
                dev.raise_irq(2);
                Activity::Idle
            }
            Err(_) => {
                dev.fail(0x43);
                Activity::Idle
            }
        }
    }
    fn reset(&mut self) {
        *self = Sem::default();
    }
}

struct Fixture {
    dir: PathBuf,
    ram: SharedFileMemory,
    server: thread::JoinHandle<Result<u64, String>>,
    qemu: FakeQemu,
}

fn start(name: &str, injection: Injection) -> Fixture {
    let dir = std::env::temp_dir().join(format!("gdm-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let ram_path = dir.join("ram");
    let memory = SharedFileMemory::open_q35(&ram_path, 1 << 20).unwrap();
    let device = Device::new(Sem::default(), Box::new(memory)).unwrap();
    let mut options = ServerOptions::new(dir.join("sock"));
    options.injection = injection;
    let mut server = Server::bind(device, options).unwrap();
    let socket = server.socket_path().to_owned();
    let handle = thread::spawn(move || {
        server.run().map_err(|e| e.to_string())?;
        Ok(server.device().served())
    });
    let qemu = FakeQemu::connect(&socket).unwrap();
    let ram = SharedFileMemory::open_q35(&ram_path, 1 << 20).unwrap();
    Fixture { dir, ram, server: handle, qemu }
}

impl Fixture {
    fn finish(self) -> u64 {
        self.qemu.disconnect();
        let served = self.server.join().unwrap().unwrap();
        assert!(!self.dir.join("sock").exists(), "socket removed on exit");
        std::fs::remove_dir_all(&self.dir).unwrap();
        served
    }
}

fn enable(q: &mut FakeQemu) {
    let command = u32::from(COMMAND_MEMORY | COMMAND_BUS_MASTER);
    assert_eq!(q.request(Op::ConfigWrite, 0, 4, command).unwrap(), (Status::Ok, 0));
}

#[test]
fn requests_dma_interrupts_and_clean_exit() {
    let mut f = start("basic", Injection::None);
    let q = &mut f.qemu;
    assert_eq!(q.id(), 1);
    let mb = q.mailbox();
    assert_eq!(mb.load(header::MAGIC, Ordering::Acquire), MAGIC);
    assert_eq!(mb.load(header::STATE, Ordering::Relaxed), ModelState::Ready as u32);

    assert_eq!(q.request(Op::ConfigRead, 0, 0, 0).unwrap(), (Status::Ok, 0xABCD_1234));
    assert_eq!(q.request(Op::MmioRead, 0, 0, 0).unwrap(), (Status::BadAddress, u32::MAX));
    enable(q);
    assert_eq!(q.request(Op::MmioWrite, 0, 0, 0x5EED).unwrap(), (Status::Ok, 0));
    assert_eq!(q.request(Op::MmioRead, 0, 0, 0).unwrap(), (Status::Ok, 0x5EED));
    assert_eq!(q.request_raw(77, 0, 0, 0).unwrap(), (Status::BadOp, u32::MAX));
    assert_eq!(q.request(Op::MmioRead, 0, 0x100, 0).unwrap().0, Status::BadAddress);

    // DMA lands in the guest RAM file.
    assert_eq!(q.request(Op::MmioWrite, 0, 8, 0x8000).unwrap(), (Status::Ok, 0));
    let mut word = [0u8; 4];
    f.ram.read(0x8000, &mut word).unwrap();
    assert_eq!(u32::from_le_bytes(word), 0x5EED);

    // Interrupt: IRQ_STATUS set and QEMU's vector eventfd signalled.
    assert_eq!(q.pending_irqs(), 0);
    assert_eq!(q.request(Op::MmioWrite, 0, 4, 1).unwrap(), (Status::Ok, 0));
    assert_eq!(q.mailbox().load(IRQ_STATUS, Ordering::Acquire), 1);
    assert_eq!(q.wait_irq(Duration::from_secs(10)).unwrap(), 1);
    q.request(Op::MmioWrite, 0, 4, 0).unwrap();
    assert_eq!(q.request(Op::IrqAck, 0, 0, 1).unwrap(), (Status::Ok, 0));
    assert_eq!(q.mailbox().load(IRQ_STATUS, Ordering::Acquire), 0);
    assert_eq!(q.pending_irqs(), 0, "no signal for a lowered line");

    // A spurious doorbell with nothing posted is harmless.
    q.ring(0).unwrap();
    q.ring(1).unwrap();
    assert_eq!(q.request(Op::MmioRead, 0, 0, 0).unwrap(), (Status::Ok, 0x5EED));
    assert_eq!(q.mailbox().load(header::SERVED, Ordering::Relaxed), 12);
    assert_eq!(f.finish(), 12);
}

#[test]
fn waiting_model_is_ticked_by_the_timer_until_guest_memory_changes() {
    let mut f = start("wait", Injection::None);
    enable(&mut f.qemu);
    assert_eq!(f.qemu.request(Op::MmioWrite, 0, 0xC, 0x9000).unwrap(), (Status::Ok, 0));
    assert_eq!(f.qemu.pending_irqs(), 0);
    // The "guest" releases the semaphore; no request follows, only the timer ticks the model.
    f.ram.write(0x9000, &1u32.to_le_bytes()).unwrap();
    assert_eq!(f.qemu.wait_irq(Duration::from_secs(10)).unwrap(), 1);
    assert_eq!(f.qemu.mailbox().load(IRQ_STATUS, Ordering::Acquire), 2);
    f.finish();
}

#[test]
fn dma_fault_sets_error_state_visible_in_the_header_until_reset() {
    let mut f = start("fault", Injection::None);
    let q = &mut f.qemu;
    enable(q);
    assert_eq!(q.request(Op::MmioWrite, 0, 0, 0x77).unwrap(), (Status::Ok, 0));
    // The faulting write completes Ok (it happened); the fault shows in the header.
    assert_eq!(q.request(Op::MmioWrite, 0, 8, 0xFFFF_0000).unwrap(), (Status::Ok, 0));
    assert_eq!(q.mailbox().load(header::STATE, Ordering::Acquire), ModelState::Error as u32);
    assert_eq!(q.mailbox().load(header::ERROR, Ordering::Acquire), 0x42);
    // Requests are still performed in the error state, which lasts until reset.
    assert_eq!(q.request(Op::MmioRead, 0, 0, 0).unwrap(), (Status::Ok, 0x77));
    assert_eq!(q.request(Op::MmioWrite, 0, 0, 0x78).unwrap(), (Status::Ok, 0));
    assert_eq!(q.request(Op::MmioRead, 0, 0, 0).unwrap(), (Status::Ok, 0x78));
    assert_eq!(q.request(Op::MmioRead, 0, 0x100, 0).unwrap(), (Status::BadAddress, u32::MAX));
    assert_eq!(q.mailbox().load(header::STATE, Ordering::Acquire), ModelState::Error as u32);
    assert_eq!(q.mailbox().load(header::ERROR, Ordering::Acquire), 0x42);
    assert_eq!(q.request(Op::Reset, 0, 0, 0).unwrap(), (Status::Ok, 0));
    assert_eq!(q.mailbox().load(header::STATE, Ordering::Acquire), ModelState::Ready as u32);
    assert_eq!(q.mailbox().load(header::ERROR, Ordering::Acquire), 0);
    assert_eq!(q.request(Op::MmioRead, 0, 0, 0).unwrap(), (Status::Ok, 0));
    f.finish();
}

#[test]
fn injected_fault_after_n_requests() {
    let mut f = start("inject", Injection::FaultAfter(2));
    enable(&mut f.qemu);
    assert_eq!(f.qemu.request(Op::MmioRead, 0, 0, 0).unwrap(), (Status::Ok, 0));
    assert_eq!(f.qemu.mailbox().load(header::STATE, Ordering::Acquire), ModelState::Ready as u32);
    // The fault is injected before request 3, which is still performed.
    assert_eq!(f.qemu.request(Op::MmioWrite, 0, 0, 5).unwrap(), (Status::Ok, 0));
    assert_eq!(f.qemu.request(Op::MmioRead, 0, 0, 0).unwrap(), (Status::Ok, 5));
    let mb = f.qemu.mailbox();
    assert_eq!(mb.load(header::STATE, Ordering::Acquire), ModelState::Error as u32);
    assert_eq!(mb.load(header::ERROR, Ordering::Acquire), error_code::INJECTED);
    f.finish();
}

#[test]
fn a_second_client_is_turned_away() {
    let f = start("second", Injection::None);
    let dir = f.dir.clone();
    assert!(FakeQemu::connect(&dir.join("sock")).is_err());
    let mut f = f;
    enable(&mut f.qemu);
    f.finish();
}

/// A server for the socket-path tests: a fresh directory holding the guest RAM file.
fn bind_at(
    name: &str,
    socket: impl Fn(&std::path::Path) -> PathBuf,
) -> (PathBuf, PathBuf, Result<Server<Sem>, String>) {
    let dir = std::env::temp_dir().join(format!("gdm-path-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let ram = dir.join("ram");
    let memory = SharedFileMemory::open_q35(&ram, 1 << 20).unwrap();
    let device = Device::new(Sem::default(), Box::new(memory)).unwrap();
    let socket = socket(&dir);
    let server = Server::bind(device, ServerOptions::new(&socket)).map_err(|e| e.to_string());
    (dir, socket, server)
}

#[test]
fn an_existing_regular_file_is_refused_and_kept() {
    let (dir, socket, server) = bind_at("file", |d| {
        let p = d.join("notes");
        std::fs::write(&p, b"precious").unwrap();
        p
    });
    let err = server.err().expect("a regular file is not replaced by a socket");
    assert!(err.contains("not a socket"), "{err}");
    assert_eq!(std::fs::read(&socket).unwrap(), b"precious");
    // The guest RAM file itself given as the socket path (model-server refuses equal paths
    // earlier; a second name for the same file lands here).
    let (dir2, ram, server) = bind_at("ram", |d| d.join("ram"));
    assert!(server.is_err());
    assert_eq!(std::fs::metadata(&ram).unwrap().len(), 1 << 20, "guest RAM kept");
    let _ = std::fs::remove_dir_all(dir);
    let _ = std::fs::remove_dir_all(dir2);
}

#[test]
fn a_stale_socket_is_replaced() {
    use std::os::unix::fs::FileTypeExt;
    use std::os::unix::net::UnixListener;
    let (dir, socket, server) = bind_at("stale", |d| {
        let p = d.join("sock");
        drop(UnixListener::bind(&p).unwrap()); // the file stays, nobody listens: stale
        p
    });
    let server = server.expect("a stale socket is replaced");
    assert!(std::fs::metadata(&socket).unwrap().file_type().is_socket());
    assert!(std::os::unix::net::UnixStream::connect(&socket).is_ok(), "the new server listens");
    drop(server);
    assert!(!socket.exists(), "the server removes its own socket on exit");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn exit_removes_only_the_servers_own_socket() {
    let (dir, socket, server) = bind_at("own", |d| d.join("sock"));
    let server = server.unwrap();
    // Someone replaces the socket with a file while the server runs: exit leaves it alone.
    std::fs::remove_file(&socket).unwrap();
    std::fs::write(&socket, b"not ours").unwrap();
    drop(server);
    assert_eq!(std::fs::read(&socket).unwrap(), b"not ours");
    let _ = std::fs::remove_dir_all(dir);
}
