//! The ivshmem transport: this process is the ivshmem server QEMU's `ivshmem-doorbell` device
//! connects to, and peer [`MODEL_PEER`] behind it.
//!
//! Server protocol (QEMU `docs/specs/ivshmem-spec.rst`): every message from server to client
//! is a little-endian `i64`, optionally with one descriptor (`SCM_RIGHTS`). On connect the
//! server sends the protocol version (0), the client's own peer ID, then `-1` with the shared
//! memory descriptor (its size becomes BAR2's, a power of two), then for every other peer its
//! ID once per vector with that peer's eventfd for the vector, and finally the client's own ID
//! once per vector with the eventfds the client receives interrupts on. A peer ID without a
//! descriptor later means that peer left. The client never sends anything: its socket
//! becoming readable at end of stream means QEMU is gone.
//!
//! Here the model is peer [`MODEL_PEER`] with [`VECTORS`] eventfds the guest's doorbell rings
//! (vector [`VECTOR_REQUEST`]: a mailbox request is posted); QEMU is peer `MODEL_PEER + 1` and
//! the model signals its vector [`VECTOR_IRQ`] eventfd to raise the guest's MSI-X vector. One
//! QEMU at a time; further connections are closed at once.
//!
//! QEMU drops an MSI-X message while MSI-X is disabled in the ivshmem function (and keeps it
//! pending while the vector is masked), so the guest must enable MSI-X before the device
//! raises its first interrupt. The latched lines stay readable in `IRQ_STATUS` regardless.

pub mod client;
pub mod mailbox;

use crate::device::{Device, error_code};
use crate::engine::Engine;
use crate::model::{Activity, GpuModel};
use crate::pacing::Pacing;
use crate::sys::{self, Epoll, EventFd, Mapping, Ready};
use gpu_mailbox::{MODEL_PEER, SHMEM_SIZE, VECTOR_IRQ, VECTOR_REQUEST, VECTORS};
use mailbox::SharedMailbox;
use std::fmt;
use std::io::{self, Read};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

/// ivshmem server protocol version.
pub const PROTOCOL_VERSION: i64 = 0;
/// The peer ID QEMU is given.
pub const QEMU_PEER: i64 = MODEL_PEER as i64 + 1;

/// Why the server stopped or could not start.
#[derive(Debug)]
pub enum TransportError {
    /// A system call failed.
    Io {
        /// What was being done.
        context: &'static str,
        /// The OS error.
        source: io::Error,
    },
    /// The socket path names an existing file that is not a socket (it is left alone).
    NotASocket {
        /// The path.
        path: PathBuf,
    },
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TransportError::Io { context, source } => write!(f, "{context}: {source}"),
            TransportError::NotASocket { path } => write!(
                f,
                "{} exists and is not a socket; refusing to replace it (choose another --socket \
                 path or remove the file)",
                path.display()
            ),
        }
    }
}

impl std::error::Error for TransportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TransportError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Identity of a file: (device, inode).
type FileId = (u64, u64);

fn file_id(meta: &std::fs::Metadata) -> FileId {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

/// Make `path` free for `bind`: nothing there, or a socket file, taken to be a previous
/// server's leftover and removed. Any other file — a regular file, a directory, the guest RAM
/// file — is refused and left untouched. (Whether a socket is still listened on is not probed:
/// a probing connection would be accepted by that server as its QEMU. Two servers must not be
/// given one path.)
fn clear_stale_socket(path: &Path) -> Result<(), TransportError> {
    use std::os::unix::fs::FileTypeExt;
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io_err("inspecting the socket path")(e)),
    };
    if !meta.file_type().is_socket() {
        return Err(TransportError::NotASocket { path: path.to_owned() });
    }
    std::fs::remove_file(path).map_err(io_err("removing a stale socket"))
}

fn io_err(context: &'static str) -> impl FnOnce(io::Error) -> TransportError {
    move |source| TransportError::Io { context, source }
}

/// Fault injection for the harness's negative tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Injection {
    /// Serve normally.
    #[default]
    None,
    /// Serve `n` requests, then enter the error state ([`error_code::INJECTED`]) before the
    /// next one.
    FaultAfter(u64),
    /// Serve `n` requests, then abort the process when the next one arrives (it is never
    /// completed): a model dying mid-test.
    DieAfter(u64),
}

/// Server settings.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Where to listen. A stale socket file there is replaced; any other existing file is
    /// refused ([`TransportError::NotASocket`]).
    pub socket: PathBuf,
    /// Fault injection.
    pub injection: Injection,
    /// How often a model that is not idle is ticked by the clock (a [`Activity::Waiting`]
    /// model under every pacing, a busy one under `seeded`), in milliseconds.
    pub poll_interval_ms: u16,
    /// How the engines advance ([`crate::pacing`]); `threaded` starts the engine thread.
    pub pacing: Pacing,
}

impl ServerOptions {
    /// Listen on `socket`, no injection, 1 ms poll interval, run-to-idle.
    pub fn new(socket: impl Into<PathBuf>) -> Self {
        ServerOptions {
            socket: socket.into(),
            injection: Injection::None,
            poll_interval_ms: 1,
            pacing: Pacing::RunToIdle,
        }
    }
}

const TOKEN_LISTENER: u64 = 1 << 32;
const TOKEN_QEMU: u64 = 2 << 32;
const TOKEN_VECTOR: u64 = 3 << 32;
const TOKEN_ENGINE: u64 = 4 << 32;

struct Peer {
    stream: UnixStream,
    /// Eventfds QEMU receives interrupts on, by vector.
    vectors: Vec<EventFd>,
}

/// An ivshmem server serving one device model.
///
/// Engines advance by the options' [`Pacing`]: after each request, and on a timer of
/// `poll_interval_ms` while the model is not idle (`run-to-idle`: waiting models; `seeded`:
/// busy or waiting ones, so a guest polling a fence in DMA memory without register accesses
/// still sees progress), or on the engine thread (`threaded`, see `crate::engine`).
pub struct Server<M: GpuModel + 'static> {
    engine: Engine<M>,
    /// Signalled by the engine thread after it ticked.
    progress: EventFd,
    options: ServerOptions,
    listener: UnixListener,
    shm: OwnedFd,
    mailbox: SharedMailbox,
    doorbells: Vec<EventFd>,
    epoll: Epoll,
    qemu: Option<Peer>,
    last_seq: u32,
    /// The socket file this server created: removed on drop only if still the same file.
    socket_id: Option<FileId>,
}

impl<M: GpuModel + 'static> Server<M> {
    /// Create the shared memory, announce the model in the mailbox header and listen.
    pub fn bind(mut device: Device<M>, options: ServerOptions) -> Result<Self, TransportError> {
        let shm = sys::memfd(c"gpu-mailbox", SHMEM_SIZE).map_err(io_err("creating the memfd"))?;
        let map = Mapping::new(shm.as_fd(), SHMEM_SIZE).map_err(io_err("mapping the memfd"))?;
        let mailbox = SharedMailbox::new(map).map_err(|_| TransportError::Io {
            context: "mapping the memfd",
            source: io::Error::new(io::ErrorKind::InvalidData, "mapping too small"),
        })?;
        let doorbells = (0..VECTORS)
            .map(|_| EventFd::new())
            .collect::<io::Result<Vec<_>>>()
            .map_err(io_err("creating the model's eventfds"))?;
        clear_stale_socket(&options.socket)?;
        let listener = UnixListener::bind(&options.socket).map_err(io_err("binding the socket"))?;
        let socket_id = std::fs::symlink_metadata(&options.socket).ok().map(|m| file_id(&m));
        listener.set_nonblocking(true).map_err(io_err("configuring the socket"))?;
        let epoll = Epoll::new().map_err(io_err("creating the epoll instance"))?;
        epoll.add(listener.as_raw_fd(), TOKEN_LISTENER).map_err(io_err("epoll_ctl"))?;
        for (v, fd) in doorbells.iter().enumerate() {
            epoll.add(fd.fd().as_raw_fd(), TOKEN_VECTOR | v as u64).map_err(io_err("epoll_ctl"))?;
        }
        let progress = EventFd::new().map_err(io_err("creating the engine eventfd"))?;
        epoll.add(progress.fd().as_raw_fd(), TOKEN_ENGINE).map_err(io_err("epoll_ctl"))?;
        device.set_pacing(options.pacing);
        let signal = progress.try_clone().map_err(io_err("cloning the engine eventfd"))?;
        // Only fails if the counter would overflow: the server has a wake-up pending anyway.
        let engine = Engine::start(device, move || drop(signal.signal()))
            .map_err(io_err("starting the engine thread"))?;
        let server = Server {
            engine,
            progress,
            options,
            listener,
            shm,
            mailbox,
            doorbells,
            epoll,
            qemu: None,
            last_seq: 0,
            socket_id,
        };
        server.publish();
        let device = server.engine.device();
        server.mailbox.announce(device.state(), device.error_code(), device.served() as u32);
        drop(device);
        Ok(server)
    }

    /// The socket path.
    pub fn socket_path(&self) -> &Path {
        &self.options.socket
    }

    /// The device (counters, model state), locked against the engine thread: do not hold it
    /// across another call on the server.
    pub fn device(&self) -> std::sync::MutexGuard<'_, Device<M>> {
        self.engine.device()
    }

    /// Serve until the connected QEMU goes away (`Ok`), or a system call fails.
    pub fn run(&mut self) -> Result<(), TransportError> {
        let mut ready = Vec::new();
        loop {
            let activity = self.engine.device().activity();
            let timed = match (activity, self.options.pacing) {
                _ if self.engine.threaded() => false,
                (Activity::Waiting, _) => true,
                (Activity::Busy, Pacing::Seeded(_)) => true,
                _ => false,
            };
            let timeout = if timed { i32::from(self.options.poll_interval_ms) } else { -1 };
            self.epoll.wait(&mut ready, timeout).map_err(io_err("epoll_wait"))?;
            if ready.is_empty() && timed {
                self.engine.device().poll_timer();
                self.publish();
                self.signal_irq();
            }
            for &Ready { token, readable, hangup } in &ready {
                match token & !0xFFFF_FFFF {
                    TOKEN_LISTENER => self.accept()?,
                    TOKEN_ENGINE => {
                        self.progress.drain();
                        self.publish();
                        self.signal_irq();
                    }
                    TOKEN_QEMU if self.qemu_gone(readable, hangup) => return Ok(()),
                    TOKEN_VECTOR => {
                        let vector = (token & 0xFFFF_FFFF) as usize;
                        if let Some(fd) = self.doorbells.get(vector) {
                            fd.drain();
                        }
                        if vector == VECTOR_REQUEST as usize {
                            self.serve();
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    fn accept(&mut self) -> Result<(), TransportError> {
        loop {
            let stream = match self.listener.accept() {
                Ok((s, _)) => s,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(io_err("accepting a connection")(e)),
            };
            if self.qemu.is_some() {
                // One QEMU per model: the extra client sees end of stream at once.
                continue;
            }
            let vectors = (0..VECTORS)
                .map(|_| EventFd::new())
                .collect::<io::Result<Vec<_>>>()
                .map_err(io_err("creating QEMU's eventfds"))?;
            handshake(&stream, &self.shm, &self.doorbells, &vectors)
                .map_err(io_err("sending the ivshmem handshake"))?;
            self.epoll.add(stream.as_raw_fd(), TOKEN_QEMU).map_err(io_err("epoll_ctl"))?;
            stream.set_nonblocking(true).map_err(io_err("configuring QEMU's socket"))?;
            self.qemu = Some(Peer { stream, vectors });
            // A request posted before the connection completed (not expected) is served now.
            self.serve();
        }
    }

    fn qemu_gone(&mut self, readable: bool, hangup: bool) -> bool {
        let Some(peer) = &mut self.qemu else { return false };
        if hangup {
            return true;
        }
        if readable {
            // QEMU never sends; drain whatever arrives and watch for end of stream.
            let mut buf = [0u8; 64];
            return match peer.stream.read(&mut buf) {
                Ok(0) => true,
                Ok(_) => false,
                Err(e) => {
                    !matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted)
                }
            };
        }
        false
    }

    /// Serve every posted request (normally exactly one per doorbell).
    fn serve(&mut self) {
        while let Some(req) = self.mailbox.take_request(self.last_seq) {
            let mut device = self.engine.device();
            let served = device.served();
            match self.options.injection {
                Injection::DieAfter(n) if served >= n => {
                    eprintln!("model-server: dying before request {} as asked", served + 1);
                    std::process::abort();
                }
                Injection::FaultAfter(n) if served >= n => device.fail(error_code::INJECTED),
                _ => {}
            }
            let (status, value) = device.handle(req.op, req.bar, req.address, req.value);
            drop(device);
            self.engine.notify();
            self.publish();
            self.mailbox.complete(req.seq, status, value);
            self.last_seq = req.seq;
            self.signal_irq();
        }
    }

    fn publish(&self) {
        let device = self.engine.device();
        self.mailbox.set_irq_status(device.irq_status());
        self.mailbox.publish_header(device.state(), device.error_code(), device.served() as u32);
    }

    fn signal_irq(&mut self) {
        if self.engine.device().take_irq_signals() == 0 {
            return;
        }
        if let Some(fd) = self.qemu.as_ref().and_then(|p| p.vectors.get(VECTOR_IRQ as usize)) {
            // Only fails if the counter would overflow: the guest has a signal pending anyway.
            let _ = fd.signal();
        }
    }
}

impl<M: GpuModel + 'static> Drop for Server<M> {
    /// Remove the socket file, unless something else has taken its path since.
    fn drop(&mut self) {
        let path = &self.options.socket;
        let now = std::fs::symlink_metadata(path).ok().map(|m| file_id(&m));
        if now.is_some() && now == self.socket_id {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Send the connect-time messages to a new client (see the module documentation).
fn handshake(
    stream: &UnixStream,
    shm: &OwnedFd,
    model_vectors: &[EventFd],
    own_vectors: &[EventFd],
) -> io::Result<()> {
    let s = stream.as_fd();
    sys::send_msg(s, PROTOCOL_VERSION, None)?;
    sys::send_msg(s, QEMU_PEER, None)?;
    sys::send_msg(s, -1, Some(shm.as_fd()))?;
    for fd in model_vectors {
        sys::send_msg(s, i64::from(MODEL_PEER), Some(fd.fd()))?;
    }
    for fd in own_vectors {
        sys::send_msg(s, QEMU_PEER, Some(fd.fd()))?;
    }
    Ok(())
}

/// Miri cannot run these: they need a socket pair and eventfds.
#[cfg(all(test, not(miri)))]
mod tests {
    use super::*;
    use std::os::unix::net::UnixStream;

    #[test]
    fn handshake_sends_version_id_memory_and_vectors_in_order() {
        let (server, client) = UnixStream::pair().unwrap();
        let shm = sys::memfd(c"hs", 4096).unwrap();
        let model: Vec<_> = (0..2).map(|_| EventFd::new().unwrap()).collect();
        let own: Vec<_> = (0..2).map(|_| EventFd::new().unwrap()).collect();
        handshake(&server, &shm, &model, &own).unwrap();
        let mut msgs = Vec::new();
        for _ in 0..7 {
            msgs.push(sys::recv_msg(client.as_fd()).unwrap().unwrap());
        }
        let values: Vec<i64> = msgs.iter().map(|m| m.0).collect();
        assert_eq!(values, [0, 1, -1, 0, 0, 1, 1]);
        let with_fd: Vec<bool> = msgs.iter().map(|m| m.1.is_some()).collect();
        assert_eq!(with_fd, [false, false, true, true, true, true, true]);
        // The model's vector 0 descriptor is the model's doorbell.
        let doorbell = EventFd::from_owned(msgs.swap_remove(3).1.unwrap());
        doorbell.signal().unwrap();
        assert_eq!(model[0].drain(), 1);
    }
}
