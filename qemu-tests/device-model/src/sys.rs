//! Thin, safe wrappers over the Linux calls the framework needs (through `libc`): shared
//! mappings, memfd, eventfd, epoll, and `sendmsg`/`recvmsg` with one `SCM_RIGHTS` descriptor.

use std::ffi::CStr;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::ptr::{self, NonNull};
use std::sync::atomic::AtomicU32;
use std::sync::atomic::Ordering::Relaxed;

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 { Err(io::Error::last_os_error()) } else { Ok(r) }
}

/// A `MAP_SHARED` read/write mapping of a file descriptor, unmapped on drop.
///
/// Other processes (QEMU, the guest) write the memory concurrently, so it is only accessed
/// through raw pointers with atomic operations, never through references to the bytes.
#[derive(Debug)]
pub struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is process-wide memory; every access goes through raw pointers with
// atomic operations, which are valid from any thread.
unsafe impl Send for Mapping {}
// SAFETY: as above; no `&`/`&mut` to the bytes is ever handed out.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Map `len` bytes of `fd` from offset 0.
    pub fn new(fd: BorrowedFd<'_>, len: usize) -> io::Result<Mapping> {
        if len == 0 {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "zero-length mapping"));
        }
        // SAFETY: a fresh mapping chosen by the kernel (null hint) cannot alias existing Rust
        // objects; `fd` is a valid descriptor for the duration of the call.
        let p = unsafe {
            libc::mmap(
                ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let ptr =
            NonNull::new(p.cast::<u8>()).ok_or_else(|| io::Error::other("mmap returned null"))?;
        Ok(Mapping { ptr, len })
    }

    /// First byte.
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Never true (zero-length mappings are refused).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `ptr..ptr+len` is the mapping created in `new`, unmapped exactly once; no
        // reference into it outlives `self` (only raw pointers are used).
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.len);
        }
    }
}

/// The 32-bit word of shared memory holding the byte at `p`, and `p`'s offset in it.
///
/// # Safety
/// The aligned word containing `p` must be inside a live mapping that is only accessed with
/// 32-bit atomics.
unsafe fn word_of<'a>(p: *const u8) -> (&'a AtomicU32, usize) {
    let offset = p as usize % 4;
    // SAFETY: `p - offset` is the 4-byte aligned start of the word holding `p`, inside the
    // mapping (the caller's contract); it is only ever accessed as this atomic.
    let word = unsafe { AtomicU32::from_ptr(p.sub(offset).cast::<u32>().cast_mut()) };
    (word, offset)
}

/// Copy `dst.len()` bytes from shared memory at `src` with relaxed 32-bit atomic loads, also
/// at unaligned ends (the word holding them is loaded and the bytes taken from it).
///
/// Shared memory is written concurrently by others (QEMU's guest, or a driver's `DmaRegion`
/// on another thread in process), so it is only accessed atomically, and always with the
/// same size: a driver's `DmaRegion` uses 32-bit atomics, so every access here is a 32-bit
/// atomic on an aligned word too. (Byte atomics at unaligned ends would overlap the driver's
/// 32-bit ones with a different size, which the memory model does not define and Miri
/// reports; a guest can ask for byte-aligned DMA, e.g. a CP DMA to an odd address.)
///
/// # Safety
/// Every aligned 32-bit word overlapping `src..src + dst.len()` must be inside a live mapping
/// that is only accessed with 32-bit atomics.
pub unsafe fn copy_from_shared(src: *const u8, dst: &mut [u8]) {
    let mut i = 0;
    while i < dst.len() {
        // SAFETY: `i < dst.len()`: the word holding `src + i` is one the caller vouches for.
        let (word, offset) = unsafe { word_of(src.add(i)) };
        let n = (4 - offset).min(dst.len() - i);
        let bytes = word.load(Relaxed).to_ne_bytes();
        dst[i..i + n].copy_from_slice(&bytes[offset..offset + n]);
        i += n;
    }
}

/// Copy `src` into shared memory at `dst` with relaxed 32-bit atomics: a store for each
/// whole aligned word, and at unaligned ends a compare-and-swap that replaces only the
/// copied bytes of the word (so a concurrent write to its other bytes is not lost); see
/// [`copy_from_shared`].
///
/// # Safety
/// Every aligned 32-bit word overlapping `dst..dst + src.len()` must be inside a live
/// writable mapping that is only accessed with 32-bit atomics.
pub unsafe fn copy_to_shared(dst: *mut u8, src: &[u8]) {
    let mut i = 0;
    while i < src.len() {
        // SAFETY: `i < src.len()`: the word holding `dst + i` is one the caller vouches for.
        let (word, offset) = unsafe { word_of(dst.add(i)) };
        let n = (4 - offset).min(src.len() - i);
        if n == 4 {
            let w = u32::from_ne_bytes([src[i], src[i + 1], src[i + 2], src[i + 3]]);
            word.store(w, Relaxed);
        } else {
            let _ = word.fetch_update(Relaxed, Relaxed, |old| {
                let mut bytes = old.to_ne_bytes();
                bytes[offset..offset + n].copy_from_slice(&src[i..i + n]);
                Some(u32::from_ne_bytes(bytes))
            });
        }
        i += n;
    }
}

/// An anonymous memory file of `size` bytes (the ivshmem shared memory).
pub fn memfd(name: &CStr, size: usize) -> io::Result<OwnedFd> {
    // SAFETY: `name` is a valid NUL-terminated string; the flags are valid.
    let fd = cvt(unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) })?;
    // SAFETY: `fd` was just returned by the kernel and is owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let size = libc::off_t::try_from(size)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "memfd size too large"))?;
    // SAFETY: `fd` is a valid memfd.
    cvt(unsafe { libc::ftruncate(fd.as_raw_fd(), size) })?;
    Ok(fd)
}

/// A non-blocking eventfd (the ivshmem doorbell and interrupt signal).
#[derive(Debug)]
pub struct EventFd(OwnedFd);

impl EventFd {
    /// A new counter at 0.
    pub fn new() -> io::Result<EventFd> {
        // SAFETY: plain syscall with valid flags.
        let fd = cvt(unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) })?;
        // SAFETY: `fd` was just returned by the kernel and is owned by nobody else.
        Ok(EventFd(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// Wrap a received eventfd (e.g. in a test client).
    pub fn from_owned(fd: OwnedFd) -> EventFd {
        EventFd(fd)
    }

    /// A second descriptor for the same counter (e.g. for another thread).
    pub fn try_clone(&self) -> io::Result<EventFd> {
        Ok(EventFd(self.0.try_clone()?))
    }

    /// Add 1 to the counter (wakes the reader).
    pub fn signal(&self) -> io::Result<()> {
        signal_eventfd(self.0.as_raw_fd())
    }

    /// Read and reset the counter; 0 if nothing was pending (or on error).
    pub fn drain(&self) -> u64 {
        let mut v = 0u64;
        // SAFETY: reads 8 bytes into a local u64 from a valid descriptor.
        let n = unsafe { libc::read(self.0.as_raw_fd(), (&raw mut v).cast(), 8) };
        if n == 8 { v } else { 0 }
    }

    /// Wait up to `timeout_ms` for the counter to become non-zero; then drain it. Returns the
    /// drained count (0 on timeout).
    pub fn wait(&self, timeout_ms: i32) -> io::Result<u64> {
        let mut pfd = libc::pollfd { fd: self.0.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        loop {
            // SAFETY: one valid pollfd.
            let r = unsafe { libc::poll(&raw mut pfd, 1, timeout_ms) };
            if r < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            return Ok(if r == 0 { 0 } else { self.drain() });
        }
    }

    /// The descriptor.
    pub fn fd(&self) -> BorrowedFd<'_> {
        use std::os::fd::AsFd;
        self.0.as_fd()
    }
}

/// Add 1 to the eventfd `fd`.
pub fn signal_eventfd(fd: RawFd) -> io::Result<()> {
    let v = 1u64;
    // SAFETY: writes 8 bytes from a local u64 to a descriptor the caller owns.
    let n = unsafe { libc::write(fd, (&raw const v).cast(), 8) };
    if n == 8 { Ok(()) } else { Err(io::Error::last_os_error()) }
}

/// An epoll instance whose events carry a `u64` token.
#[derive(Debug)]
pub struct Epoll(OwnedFd);

/// One ready descriptor.
#[derive(Debug, Clone, Copy)]
pub struct Ready {
    /// The token given to [`Epoll::add`].
    pub token: u64,
    /// Readable.
    pub readable: bool,
    /// Hung up, peer closed its end, or error.
    pub hangup: bool,
}

impl Epoll {
    /// A new instance.
    pub fn new() -> io::Result<Epoll> {
        // SAFETY: plain syscall with valid flags.
        let fd = cvt(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?;
        // SAFETY: `fd` was just returned by the kernel and is owned by nobody else.
        Ok(Epoll(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// Watch `fd` for input and hang-up.
    pub fn add(&self, fd: RawFd, token: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event {
            events: (libc::EPOLLIN | libc::EPOLLRDHUP | libc::EPOLLHUP | libc::EPOLLERR) as u32,
            u64: token,
        };
        // SAFETY: valid epoll descriptor, valid event struct; `fd` is owned by the caller, who
        // removes it (or drops the epoll) before closing it.
        cvt(unsafe { libc::epoll_ctl(self.0.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &raw mut ev) })?;
        Ok(())
    }

    /// Wait up to `timeout_ms` (-1: forever); an interrupted wait returns no events.
    pub fn wait(&self, out: &mut Vec<Ready>, timeout_ms: i32) -> io::Result<()> {
        let mut events = [libc::epoll_event { events: 0, u64: 0 }; 16];
        out.clear();
        // SAFETY: the buffer holds `events.len()` entries.
        let n = unsafe {
            libc::epoll_wait(
                self.0.as_raw_fd(),
                events.as_mut_ptr(),
                events.len() as libc::c_int,
                timeout_ms,
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::Interrupted { Ok(()) } else { Err(e) };
        }
        let hangup = (libc::EPOLLHUP | libc::EPOLLRDHUP | libc::EPOLLERR) as u32;
        for ev in &events[..n as usize] {
            let (flags, token) = (ev.events, ev.u64);
            out.push(Ready {
                token,
                readable: flags & libc::EPOLLIN as u32 != 0,
                hangup: flags & hangup != 0,
            });
        }
        Ok(())
    }
}

const FD_SIZE: usize = size_of::<libc::c_int>();

/// Send one 8-byte little-endian message with an optional descriptor (`SCM_RIGHTS`).
pub fn send_msg(sock: BorrowedFd<'_>, value: i64, fd: Option<BorrowedFd<'_>>) -> io::Result<()> {
    let bytes = value.to_le_bytes();
    let mut iov = libc::iovec { iov_base: bytes.as_ptr() as *mut libc::c_void, iov_len: 8 };
    // u64 array: aligned for cmsghdr, large enough for one descriptor.
    let mut control = [0u64; 4];
    // SAFETY: all-zero is a valid msghdr (null pointers, zero lengths).
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &raw mut iov;
    msg.msg_iovlen = 1;
    if let Some(fd) = fd {
        // SAFETY: CMSG_SPACE is a pure size computation.
        let space = unsafe { libc::CMSG_SPACE(FD_SIZE as u32) } as usize;
        debug_assert!(space <= size_of_val(&control));
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = space as _;
        // SAFETY: `msg` has a control buffer of `space` bytes, so CMSG_FIRSTHDR is non-null
        // and the header plus one int of data fit in it.
        unsafe {
            let cmsg = libc::CMSG_FIRSTHDR(&raw const msg);
            (*cmsg).cmsg_level = libc::SOL_SOCKET;
            (*cmsg).cmsg_type = libc::SCM_RIGHTS;
            (*cmsg).cmsg_len = libc::CMSG_LEN(FD_SIZE as u32) as _;
            ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<libc::c_int>(), fd.as_raw_fd());
        }
    }
    // SAFETY: `msg` points at live buffers for the duration of the call.
    let n = unsafe { libc::sendmsg(sock.as_raw_fd(), &raw const msg, libc::MSG_NOSIGNAL) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    if n != 8 {
        return Err(io::Error::new(io::ErrorKind::WriteZero, "short sendmsg"));
    }
    Ok(())
}

/// Receive one 8-byte little-endian message and the descriptor sent with it, if any.
/// `Ok(None)` at end of stream.
pub fn recv_msg(sock: BorrowedFd<'_>) -> io::Result<Option<(i64, Option<OwnedFd>)>> {
    let mut bytes = [0u8; 8];
    let mut got = 0;
    let mut fd = None;
    while got < 8 {
        let mut iov = libc::iovec { iov_base: bytes[got..].as_mut_ptr().cast(), iov_len: 8 - got };
        let mut control = [0u64; 4];
        // SAFETY: all-zero is a valid msghdr.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = &raw mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = size_of_val(&control) as _;
        // SAFETY: `msg` points at live buffers for the duration of the call.
        let n = unsafe { libc::recvmsg(sock.as_raw_fd(), &raw mut msg, libc::MSG_CMSG_CLOEXEC) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            return if got == 0 {
                Ok(None)
            } else {
                Err(io::Error::new(io::ErrorKind::UnexpectedEof, "truncated message"))
            };
        }
        got += n as usize;
        // SAFETY: the kernel filled `msg`'s control area; CMSG_FIRSTHDR/NXTHDR walk it within
        // `msg_controllen`, and SCM_RIGHTS data holds ints that are now our descriptors.
        unsafe {
            let mut cmsg = libc::CMSG_FIRSTHDR(&raw const msg);
            while !cmsg.is_null() {
                if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                    let data = libc::CMSG_DATA(cmsg);
                    let count = ((*cmsg).cmsg_len as usize - libc::CMSG_LEN(0) as usize) / FD_SIZE;
                    for i in 0..count {
                        let raw = ptr::read_unaligned(data.add(i * FD_SIZE).cast::<libc::c_int>());
                        // Keep the first; close any extra (protocol sends at most one).
                        let owned = OwnedFd::from_raw_fd(raw);
                        if fd.is_none() {
                            fd = Some(owned);
                        }
                    }
                }
                cmsg = libc::CMSG_NXTHDR(&raw const msg, cmsg);
            }
        }
    }
    Ok(Some((i64::from_le_bytes(bytes), fd)))
}

/// Miri cannot run these: they need real descriptors (sockets, eventfds, memfds).
#[cfg(all(test, not(miri)))]
mod tests {
    use super::*;
    use std::os::fd::AsFd;
    use std::os::unix::net::UnixStream;

    #[test]
    fn messages_carry_values_and_descriptors() {
        let (a, b) = UnixStream::pair().unwrap();
        let ev = EventFd::new().unwrap();
        send_msg(a.as_fd(), -1, Some(ev.fd())).unwrap();
        send_msg(a.as_fd(), 0x0102_0304_0506_0708, None).unwrap();
        let (v, fd) = recv_msg(b.as_fd()).unwrap().unwrap();
        assert_eq!(v, -1);
        let received = EventFd::from_owned(fd.unwrap());
        received.signal().unwrap();
        assert_eq!(ev.drain(), 1, "the received descriptor is the same eventfd");
        let (v, fd) = recv_msg(b.as_fd()).unwrap().unwrap();
        assert_eq!((v, fd.is_none()), (0x0102_0304_0506_0708, true));
        drop(a);
        assert!(recv_msg(b.as_fd()).unwrap().is_none(), "end of stream");
    }

    #[test]
    fn eventfd_counts_and_wait_is_bounded() {
        let ev = EventFd::new().unwrap();
        assert_eq!(ev.drain(), 0);
        assert_eq!(ev.wait(0).unwrap(), 0);
        ev.signal().unwrap();
        ev.signal().unwrap();
        assert_eq!(ev.wait(1000).unwrap(), 2);
    }

    #[test]
    fn shared_copies_round_trip_at_any_alignment() {
        let fd = memfd(c"test", 4096).unwrap();
        let m = Mapping::new(fd.as_fd(), 4096).unwrap();
        let data: Vec<u8> = (0..=255u8).collect();
        for start in 0..4 {
            for len in [0, 1, 3, 4, 7, 64, 255] {
                // SAFETY: `start + len <= 259 < 4096`, inside the mapping.
                unsafe { copy_to_shared(m.as_ptr().add(100 + start), &data[..len]) };
                let mut out = vec![0u8; len];
                // SAFETY: as above.
                unsafe { copy_from_shared(m.as_ptr().add(100 + start), &mut out) };
                assert_eq!(out, data[..len]);
            }
        }
        // A second mapping of the same memfd sees the bytes.
        // SAFETY: inside the mapping.
        unsafe { copy_to_shared(m.as_ptr().add(1000), &[0, 1, 2, 3]) };
        let m2 = Mapping::new(fd.as_fd(), 4096).unwrap();
        let mut out = [0u8; 4];
        // SAFETY: inside the mapping.
        unsafe { copy_from_shared(m2.as_ptr().add(1000), &mut out) };
        assert_eq!(out, [0, 1, 2, 3]);
    }
}

/// The shared-memory copies over heap memory (no descriptor needed, so Miri checks them too).
#[cfg(test)]
mod copy_tests {
    use super::*;

    #[test]
    fn copies_round_trip_at_any_alignment_over_heap_memory() {
        let mut backing = vec![0u32; 128];
        let base = backing.as_mut_ptr().cast::<u8>();
        let data: Vec<u8> = (0..=255u8).collect();
        for start in 0..4 {
            for len in [0, 1, 3, 4, 7, 64, 255] {
                // SAFETY: `start + len <= 258 < 512` bytes of `backing`, which is only
                // accessed through these copies while `base` is in use.
                unsafe { copy_to_shared(base.add(start), &data[..len]) };
                let mut out = vec![0u8; len];
                // SAFETY: as above.
                unsafe { copy_from_shared(base.add(start), &mut out) };
                assert_eq!(out, data[..len]);
            }
        }
    }
}
