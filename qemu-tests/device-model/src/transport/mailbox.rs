//! The mailbox words in the ivshmem shared memory (layout: `gpu-mailbox`), accessed with
//! atomics only: the guest writes the request words concurrently from another process, so no
//! Rust reference to plain shared bytes is ever formed.
//!
//! Ordering as the contract requires: request fields are read after an acquire load of
//! `request::SEQ`; completion fields are written before a release store of `completion::SEQ`;
//! header and `IRQ_STATUS` are written before the completion (and before an interrupt is
//! signalled).

use crate::sys::Mapping;
use gpu_mailbox::{IRQ_STATUS, MAGIC, ModelState, SHMEM_SIZE, Status, VERSION, completion};
use gpu_mailbox::{header, request};
use std::sync::atomic::{AtomicU32, Ordering};

/// A request read from the mailbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// `request::SEQ`.
    pub seq: u32,
    /// `request::OP` (raw: may be invalid).
    pub op: u32,
    /// `request::BAR`.
    pub bar: u32,
    /// `request::ADDRESS`.
    pub address: u32,
    /// `request::VALUE`.
    pub value: u32,
}

/// The mailbox at the start of a shared mapping of at least [`SHMEM_SIZE`] bytes.
#[derive(Debug)]
pub struct SharedMailbox {
    map: Mapping,
}

/// The mapping is smaller than the mailbox needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MappingTooSmall(pub usize);

impl SharedMailbox {
    /// Use `map` (the ivshmem shared memory) as the mailbox.
    pub fn new(map: Mapping) -> Result<Self, MappingTooSmall> {
        if map.len() < SHMEM_SIZE || !(map.as_ptr() as usize).is_multiple_of(4) {
            return Err(MappingTooSmall(map.len()));
        }
        Ok(SharedMailbox { map })
    }

    fn word(&self, offset: usize) -> &AtomicU32 {
        // Mailbox offsets are constants from gpu-mailbox; make a bad one a bug, not UB.
        assert!(offset.is_multiple_of(4) && offset + 4 <= SHMEM_SIZE, "mailbox offset {offset:#x}");
        // SAFETY: in bounds of a live mapping (checked above and in `new`), 4-byte aligned
        // (page-aligned base, aligned offset). `AtomicU32` is interior-mutable, so a shared
        // reference to it permits the concurrent writes of the other process; the reference
        // does not outlive `self`, which owns the mapping.
        unsafe { AtomicU32::from_ptr(self.map.as_ptr().add(offset).cast::<u32>()) }
    }

    /// Load a word.
    pub fn load(&self, offset: usize, order: Ordering) -> u32 {
        self.word(offset).load(order)
    }

    /// Store a word.
    pub fn store(&self, offset: usize, value: u32, order: Ordering) {
        self.word(offset).store(value, order)
    }

    // ---- model side ----

    /// Write the header of a model that starts serving: version, state, then `MAGIC` last.
    pub fn announce(&self, state: ModelState, error: u32, served: u32) {
        self.store(header::VERSION, VERSION, Ordering::Relaxed);
        self.publish_header(state, error, served);
        self.store(header::MAGIC, MAGIC, Ordering::Release);
    }

    /// Update `header::STATE`, `ERROR` and `SERVED`.
    pub fn publish_header(&self, state: ModelState, error: u32, served: u32) {
        self.store(header::STATE, state as u32, Ordering::Relaxed);
        self.store(header::ERROR, error, Ordering::Relaxed);
        self.store(header::SERVED, served, Ordering::Relaxed);
    }

    /// Update `IRQ_STATUS`.
    pub fn set_irq_status(&self, lines: u32) {
        self.store(IRQ_STATUS, lines, Ordering::Relaxed);
    }

    /// The posted request, if its sequence number differs from `last_seq` (the last one
    /// completed).
    pub fn take_request(&self, last_seq: u32) -> Option<Request> {
        let seq = self.load(request::SEQ, Ordering::Acquire);
        (seq != last_seq).then(|| Request {
            seq,
            op: self.load(request::OP, Ordering::Relaxed),
            bar: self.load(request::BAR, Ordering::Relaxed),
            address: self.load(request::ADDRESS, Ordering::Relaxed),
            value: self.load(request::VALUE, Ordering::Relaxed),
        })
    }

    /// Post the completion of request `seq` (`SEQ` last, release).
    pub fn complete(&self, seq: u32, status: Status, value: u32) {
        self.store(completion::STATUS, status as u32, Ordering::Relaxed);
        self.store(completion::VALUE, value, Ordering::Relaxed);
        self.store(completion::SEQ, seq, Ordering::Release);
    }

    // ---- guest side (test clients) ----

    /// Post a request as the guest does (`SEQ` last, release).
    pub fn post(&self, seq: u32, op: u32, bar: u32, address: u32, value: u32) {
        self.store(request::OP, op, Ordering::Relaxed);
        self.store(request::BAR, bar, Ordering::Relaxed);
        self.store(request::ADDRESS, address, Ordering::Relaxed);
        self.store(request::VALUE, value, Ordering::Relaxed);
        self.store(request::SEQ, seq, Ordering::Release);
    }

    /// The completion for `seq` if posted: (raw status, value).
    pub fn completion(&self, seq: u32) -> Option<(u32, u32)> {
        (self.load(completion::SEQ, Ordering::Acquire) == seq).then(|| {
            (
                self.load(completion::STATUS, Ordering::Relaxed),
                self.load(completion::VALUE, Ordering::Relaxed),
            )
        })
    }
}

/// Miri cannot run these: the mailbox lives in a memfd mapping.
#[cfg(all(test, not(miri)))]
mod tests {
    use super::*;
    use crate::sys::memfd;
    use std::os::fd::AsFd;

    #[test]
    fn request_and_completion_round_trip_between_two_mappings() {
        let fd = memfd(c"mailbox-test", SHMEM_SIZE).unwrap();
        let model = SharedMailbox::new(Mapping::new(fd.as_fd(), SHMEM_SIZE).unwrap()).unwrap();
        let guest = SharedMailbox::new(Mapping::new(fd.as_fd(), SHMEM_SIZE).unwrap()).unwrap();
        assert_eq!(guest.load(header::MAGIC, Ordering::Acquire), 0);
        model.announce(ModelState::Ready, 0, 0);
        assert_eq!(guest.load(header::MAGIC, Ordering::Acquire), MAGIC);
        assert_eq!(guest.load(header::VERSION, Ordering::Relaxed), VERSION);
        assert_eq!(guest.load(header::STATE, Ordering::Relaxed), ModelState::Ready as u32);

        assert_eq!(model.take_request(0), None, "nothing posted");
        guest.post(1, 2, 0, 0x10, 0xABCD);
        let r = model.take_request(0).unwrap();
        assert_eq!(r, Request { seq: 1, op: 2, bar: 0, address: 0x10, value: 0xABCD });
        assert_eq!(guest.completion(1), None);
        model.complete(1, Status::BadAddress, u32::MAX);
        assert_eq!(guest.completion(1), Some((Status::BadAddress as u32, u32::MAX)));
        assert_eq!(model.take_request(1), None, "already completed");

        model.set_irq_status(1);
        model.publish_header(ModelState::Error, 9, 2);
        assert_eq!(guest.load(IRQ_STATUS, Ordering::Relaxed), 1);
        assert_eq!(guest.load(header::ERROR, Ordering::Relaxed), 9);
        assert_eq!(guest.load(header::SERVED, Ordering::Relaxed), 2);
    }

    #[test]
    fn small_mappings_are_refused() {
        let fd = memfd(c"mailbox-small", 4096).unwrap();
        let m = Mapping::new(fd.as_fd(), 4096).unwrap();
        assert_eq!(SharedMailbox::new(m).unwrap_err(), MappingTooSmall(4096));
    }
}
