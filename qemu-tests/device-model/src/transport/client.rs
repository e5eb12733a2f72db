//! A stand-in for QEMU and the guest, for testing a server without a VM: connects like
//! `ivshmem-doorbell`, maps the shared memory, posts mailbox requests and rings the doorbell
//! the way the guest kernel does, and waits for the interrupt eventfd.

use super::mailbox::SharedMailbox;
use crate::sys::{self, EventFd, Mapping};
use gpu_mailbox::{MODEL_PEER, Op, SHMEM_SIZE, Status, VECTOR_IRQ, VECTOR_REQUEST, VECTORS};
use std::fmt;
use std::io;
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

/// What went wrong on the client side.
#[derive(Debug)]
pub enum ClientError {
    /// A system call failed.
    Io(io::Error),
    /// The server's messages do not follow the protocol.
    Protocol(&'static str),
    /// No completion before the deadline.
    Timeout,
    /// The completion carries a status value the contract does not define.
    BadStatus(u32),
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::Io(e) => write!(f, "{e}"),
            ClientError::Protocol(what) => write!(f, "ivshmem protocol violation: {what}"),
            ClientError::Timeout => write!(f, "no completion before the deadline"),
            ClientError::BadStatus(s) => write!(f, "undefined completion status {s}"),
        }
    }
}

impl std::error::Error for ClientError {}

impl From<io::Error> for ClientError {
    fn from(e: io::Error) -> Self {
        ClientError::Io(e)
    }
}

/// A connected fake QEMU + guest.
pub struct FakeQemu {
    stream: UnixStream,
    id: i64,
    mailbox: SharedMailbox,
    /// The model's eventfds by vector (what DOORBELL writes reach).
    model_vectors: Vec<EventFd>,
    /// Our own eventfds by vector (MSI-X vectors).
    own_vectors: Vec<EventFd>,
    seq: u32,
    /// How long [`request`](Self::request) waits for a completion.
    pub deadline: Duration,
}

impl FakeQemu {
    /// Connect to the server at `socket` and read the handshake ([`VECTORS`] vectors per peer).
    pub fn connect(socket: &Path) -> Result<Self, ClientError> {
        let stream = UnixStream::connect(socket)?;
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        let next = || -> Result<(i64, Option<std::os::fd::OwnedFd>), ClientError> {
            sys::recv_msg(stream.as_fd())?.ok_or(ClientError::Protocol("server closed early"))
        };
        if !matches!(next()?, (0, None)) {
            return Err(ClientError::Protocol("first message is not version 0 without fd"));
        }
        let (id, none) = next()?;
        if id < 0 || none.is_some() {
            return Err(ClientError::Protocol("bad peer id message"));
        }
        let (minus_one, shm) = next()?;
        let shm = match (minus_one, shm) {
            (-1, Some(fd)) => fd,
            _ => return Err(ClientError::Protocol("expected -1 with the shared memory fd")),
        };
        let mut model_vectors = Vec::new();
        let mut own_vectors = Vec::new();
        while model_vectors.len() < VECTORS as usize || own_vectors.len() < VECTORS as usize {
            match next()? {
                (peer, Some(fd)) if peer == i64::from(MODEL_PEER) => {
                    model_vectors.push(EventFd::from_owned(fd))
                }
                (peer, Some(fd)) if peer == id => own_vectors.push(EventFd::from_owned(fd)),
                _ => return Err(ClientError::Protocol("unexpected peer message")),
            }
        }
        let map = Mapping::new(shm.as_fd(), SHMEM_SIZE)?;
        let mailbox = SharedMailbox::new(map)
            .map_err(|_| ClientError::Protocol("shared memory too small"))?;
        let seq = mailbox.load(gpu_mailbox::completion::SEQ, std::sync::atomic::Ordering::Acquire);
        Ok(FakeQemu {
            stream,
            id,
            mailbox,
            model_vectors,
            own_vectors,
            seq,
            deadline: Duration::from_secs(10),
        })
    }

    /// Our peer ID.
    pub fn id(&self) -> i64 {
        self.id
    }

    /// The shared mailbox.
    pub fn mailbox(&self) -> &SharedMailbox {
        &self.mailbox
    }

    /// Ring the model's doorbell `vector` (the guest's DOORBELL write).
    pub fn ring(&self, vector: u32) -> Result<(), ClientError> {
        let fd = self.model_vectors.get(vector as usize).ok_or(ClientError::Protocol("vector"))?;
        Ok(fd.signal()?)
    }

    /// Post a raw request, ring the doorbell and wait (bounded by [`deadline`](Self::deadline))
    /// for its completion.
    pub fn request_raw(
        &mut self,
        op: u32,
        bar: u32,
        address: u32,
        value: u32,
    ) -> Result<(Status, u32), ClientError> {
        self.seq = self.seq.wrapping_add(1);
        self.mailbox.post(self.seq, op, bar, address, value);
        self.ring(VECTOR_REQUEST)?;
        let start = Instant::now();
        let mut spins = 0u32;
        loop {
            if let Some((status, value)) = self.mailbox.completion(self.seq) {
                let status = Status::from_u32(status).ok_or(ClientError::BadStatus(status))?;
                return Ok((status, value));
            }
            if start.elapsed() > self.deadline {
                return Err(ClientError::Timeout);
            }
            spins += 1;
            if spins < 100 {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(50));
            }
        }
    }

    /// [`request_raw`](Self::request_raw) with a typed operation.
    pub fn request(
        &mut self,
        op: Op,
        bar: u32,
        address: u32,
        value: u32,
    ) -> Result<(Status, u32), ClientError> {
        self.request_raw(op as u32, bar, address, value)
    }

    /// Wait up to `timeout` for the model to signal the interrupt vector; returns how many
    /// signals were pending (0 on timeout).
    pub fn wait_irq(&self, timeout: Duration) -> Result<u64, ClientError> {
        let ms = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
        Ok(self.own_vectors[VECTOR_IRQ as usize].wait(ms)?)
    }

    /// Interrupt signals pending now (drained).
    pub fn pending_irqs(&self) -> u64 {
        self.own_vectors[VECTOR_IRQ as usize].drain()
    }

    /// Disconnect (as QEMU exiting does).
    pub fn disconnect(self) {
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }
}
