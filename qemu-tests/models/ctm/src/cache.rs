//! The Memory Controller Unit's caches (CTM guide §2.1.4), modelled the way a strict
//! implementation of that text behaves, so that a driver which forgets an invalidate or a
//! flush sees stale or missing data instead of silently working.
//!
//! The MC keeps, per §2.1.4:
//!
//! - an **instruction read cache** ("must be invalidated to guarantee that data that has
//!   changed in memory is properly read": inv_inst_cache);
//! - three **constant read caches**, float, integer and boolean (inv_constf_cache,
//!   inv_consti_cache, inv_constb_cache);
//! - the **input read cache**, "shared among all 16 program inputs, and must be invalidated to
//!   guarantee correct reading of data that has changed in memory" (inv_inp_cache);
//! - the **output write cache**, "shared among all 4 program outputs, and must be flushed to
//!   guarantee that any data written by the processors are placed in memory"
//!   (flush_out_cache);
//! - the **conditional output cache**, which serves the CO's reads and writes: invalidated
//!   with inv_cond_out_cache, flushed with flush_cond_out_cache.
//!
//! Every cache here is a [`LineCache`]: [`LINE_BYTES`]-byte lines tagged by their MC
//! address (the cache sits behind the MC's address translation, so the tag is the address,
//! not the instruction, constant or element index), with a valid and a dirty bit per byte.
//!
//! Model choices (the guide leaves them open):
//!
//! - Read misses fill the whole line; if the line cannot be read as a whole (it crosses the
//!   end of memory) only the requested bytes are read, so a fill never faults where an
//!   uncached access would not.
//! - Writes allocate without reading memory and mark exactly the bytes written dirty, so a
//!   masked channel write (set_out_mask) never clobbers the bytes next to it.
//! - The model never evicts below a cache's capacity ([`READ_CACHE_LINES`],
//!   [`WRITE_CACHE_LINES`], far above what a test or a sane program touches between two
//!   invalidations or flushes): clean data is served until the invalidate command and
//!   unflushed outputs are never visible in memory. The capacity only bounds the model's
//!   own memory use against hostile programs; when a cache is full it drops its clean lines
//!   and, if that is not enough, pushes all dirty bytes out to memory — the "push out a
//!   portion of the cache ... to free space" that §2.1.4 describes.
//! - An invalidate drops clean bytes only; dirty bytes (pending conditional output writes)
//!   survive it and still reach memory at the next flush. §2.1.4 gives invalidation one
//!   purpose, that "data that has changed in memory is properly read", and flushing
//!   another, that "any data written by the conditional output block is placed in memory";
//!   nothing says an invalidate discards writes.
//! - A flush writes the dirty bytes in ascending address order, keeps going past a failing
//!   write and reports the first fault; the dirty bytes are then clean (or lost, for the
//!   failing write) either way.
//! - Caches are not coherent with each other or with the host: data flushed from the output
//!   cache is not seen through the input cache until inv_inp_cache, exactly as the guide's
//!   separate invalidate and flush commands imply.

use crate::memory::{MemFault, Memory};
use core::fmt;
use std::collections::BTreeMap;

/// Bytes per cache line (model choice; the guide gives no line size).
pub const LINE_BYTES: u32 = 64;
/// Lines a read cache holds before it drops its clean lines (4 MiB of data).
pub const READ_CACHE_LINES: usize = 1 << 16;
/// Lines a write cache holds before it pushes its dirty data out (16 MiB of data).
pub const WRITE_CACHE_LINES: usize = 1 << 18;

const LINE: usize = LINE_BYTES as usize;

#[derive(Clone)]
struct Line {
    data: [u8; LINE],
    /// Bit n: byte n holds the memory contents or a pending write.
    valid: u64,
    /// Bit n: byte n holds a write not yet in memory (always a subset of `valid`).
    dirty: u64,
}

impl Line {
    const EMPTY: Self = Self { data: [0; LINE], valid: 0, dirty: 0 };
}

/// Mask of `len` bytes starting at byte `off` of a line (`off + len <= 64`, `len >= 1`).
fn span(off: usize, len: usize) -> u64 {
    let m = if len >= LINE { u64::MAX } else { (1u64 << len) - 1 };
    m << off
}

/// Split an access of `len` bytes at `address` into (line address, offset in line, range in
/// the caller's buffer). Addresses wrap at 2^32 like the MC's 32-bit adder.
fn segments(
    address: u32,
    len: usize,
) -> impl Iterator<Item = (u32, usize, core::ops::Range<usize>)> {
    let mut pos = 0usize;
    core::iter::from_fn(move || {
        if pos >= len {
            return None;
        }
        let a = address.wrapping_add(pos as u32);
        let off = (a % LINE_BYTES) as usize;
        let n = (LINE - off).min(len - pos);
        let r = pos..pos + n;
        pos += n;
        Some((a - off as u32, off, r))
    })
}

/// One MC cache: address-tagged lines with per-byte valid and dirty bits.
#[derive(Clone)]
pub struct LineCache {
    lines: BTreeMap<u32, Line>,
    capacity: usize,
    /// Lines written back to memory so far (by flushes and push-outs).
    written: u64,
}

impl fmt::Debug for LineCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LineCache")
            .field("lines", &self.lines())
            .field("valid_bytes", &self.valid_bytes())
            .field("dirty_bytes", &self.dirty_bytes())
            .field("capacity", &self.capacity)
            .finish()
    }
}

impl LineCache {
    /// An empty cache of at most `capacity` lines (at least one).
    pub fn new(capacity: usize) -> Self {
        Self { lines: BTreeMap::new(), capacity: capacity.max(1), written: 0 }
    }

    /// Maximum number of lines before the cache makes room (see the module docs).
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Lines written back to memory since the cache was made: each flush or push-out counts
    /// every line holding dirty bytes once (the engine charges them as work units).
    pub fn lines_written(&self) -> u64 {
        self.written
    }

    /// Lines currently allocated.
    pub fn lines(&self) -> usize {
        self.lines.len()
    }

    /// Bytes held (clean or dirty).
    pub fn valid_bytes(&self) -> usize {
        self.lines.values().map(|l| l.valid.count_ones() as usize).sum()
    }

    /// Bytes written into the cache and not yet in memory.
    pub fn dirty_bytes(&self) -> usize {
        self.lines.values().map(|l| l.dirty.count_ones() as usize).sum()
    }

    /// Whether the byte at MC address `address` is held (a read of it would hit).
    pub fn holds(&self, address: u32) -> bool {
        self.bit(address, |l| l.valid)
    }

    /// Whether the byte at MC address `address` is a pending (unflushed) write.
    pub fn is_dirty(&self, address: u32) -> bool {
        self.bit(address, |l| l.dirty)
    }

    fn bit(&self, address: u32, mask: impl Fn(&Line) -> u64) -> bool {
        let off = address % LINE_BYTES;
        self.lines.get(&(address - off)).is_some_and(|l| mask(l) >> off & 1 != 0)
    }

    /// Read through the cache: hits are served from the cache, misses fill the line from
    /// `mem` first (bytes already held, pending writes in particular, are kept).
    pub fn read(
        &mut self,
        mem: &mut dyn Memory,
        address: u32,
        buf: &mut [u8],
    ) -> Result<(), MemFault> {
        for (line, off, r) in segments(address, buf.len()) {
            let need = span(off, r.len());
            if !self.lines.get(&line).is_some_and(|l| l.valid & need == need) {
                self.fill(mem, line, off, r.len())?;
            }
            let l = &self.lines[&line];
            buf[r.clone()].copy_from_slice(&l.data[off..off + r.len()]);
        }
        Ok(())
    }

    /// Fill the missing bytes of `line` (at least bytes `off..off + len`) from memory.
    fn fill(
        &mut self,
        mem: &mut dyn Memory,
        line: u32,
        off: usize,
        len: usize,
    ) -> Result<(), MemFault> {
        let mut tmp = [0u8; LINE];
        let got = match mem.read(line, &mut tmp) {
            Ok(()) => u64::MAX,
            Err(_) => {
                // The whole line is not readable: fetch only what was asked for.
                mem.read(line + off as u32, &mut tmp[off..off + len])?;
                span(off, len)
            }
        };
        let l = self.line_mut(mem, line)?;
        let fresh = got & !l.valid;
        for (b, (d, t)) in l.data.iter_mut().zip(tmp).enumerate() {
            if fresh >> b & 1 != 0 {
                *d = t;
            }
        }
        l.valid |= got;
        Ok(())
    }

    /// Write into the cache only (write-back, write-allocate without a fill): the bytes
    /// reach memory at [`LineCache::flush`].
    pub fn write(
        &mut self,
        mem: &mut dyn Memory,
        address: u32,
        data: &[u8],
    ) -> Result<(), MemFault> {
        for (line, off, r) in segments(address, data.len()) {
            let l = self.line_mut(mem, line)?;
            l.data[off..off + r.len()].copy_from_slice(&data[r.clone()]);
            let m = span(off, r.len());
            l.valid |= m;
            l.dirty |= m;
        }
        Ok(())
    }

    /// The line at `line`, allocated (after making room) if absent.
    fn line_mut(&mut self, mem: &mut dyn Memory, line: u32) -> Result<&mut Line, MemFault> {
        if !self.lines.contains_key(&line) {
            self.make_room(mem)?;
        }
        Ok(self.lines.entry(line).or_insert(Line::EMPTY))
    }

    /// Capacity reached: drop clean data; if every line is dirty, push everything out.
    fn make_room(&mut self, mem: &mut dyn Memory) -> Result<(), MemFault> {
        if self.lines.len() < self.capacity {
            return Ok(());
        }
        self.invalidate();
        if self.lines.len() < self.capacity {
            return Ok(());
        }
        let r = self.flush(mem);
        self.lines.clear();
        r
    }

    /// Write every dirty byte to `mem` (ascending addresses, one write per run of dirty
    /// bytes within a line); the written bytes stay held, now clean. All runs are attempted;
    /// the first fault is returned.
    pub fn flush(&mut self, mem: &mut dyn Memory) -> Result<(), MemFault> {
        let mut first = None;
        for (&line, l) in self.lines.iter_mut() {
            self.written += u64::from(l.dirty != 0);
            let mut d = l.dirty;
            while d != 0 {
                let start = d.trailing_zeros() as usize;
                let run = (d >> start).trailing_ones() as usize;
                if let Err(e) = mem.write(line + start as u32, &l.data[start..start + run]) {
                    first.get_or_insert(e);
                }
                d &= !span(start, run);
            }
            l.dirty = 0;
        }
        first.map_or(Ok(()), Err)
    }

    /// Forget every clean byte, so the next read of it comes from memory. Dirty bytes are
    /// kept (see the module docs).
    pub fn invalidate(&mut self) {
        self.lines.retain(|_, l| {
            l.valid = l.dirty;
            l.dirty != 0
        });
    }

    /// Forget everything, pending writes included.
    pub fn clear(&mut self) {
        self.lines.clear();
    }
}

/// The MC's caches (see the module docs). Owned by [`crate::CtmEngine`], so their contents
/// persist across start_program commands and command buffers until the matching invalidate
/// or flush command, or an engine reset.
#[derive(Debug, Clone)]
pub struct Caches {
    /// Instruction read cache (inv_inst_cache).
    pub inst: LineCache,
    /// Floating-point constant read cache (inv_constf_cache).
    pub constf: LineCache,
    /// Integer constant read cache (inv_consti_cache).
    pub consti: LineCache,
    /// Boolean constant read cache (inv_constb_cache).
    pub constb: LineCache,
    /// Input read cache, shared by the 16 inputs (inv_inp_cache).
    pub input: LineCache,
    /// Output write cache, shared by the 4 outputs (flush_out_cache).
    pub output: LineCache,
    /// Conditional output cache, read and written by the CO (inv_cond_out_cache,
    /// flush_cond_out_cache).
    pub cond_out: LineCache,
}

impl Caches {
    /// Lines written back to memory by all caches so far ([`LineCache::lines_written`]).
    pub fn lines_written(&self) -> u64 {
        [
            &self.inst,
            &self.constf,
            &self.consti,
            &self.constb,
            &self.input,
            &self.output,
            &self.cond_out,
        ]
        .iter()
        .map(|c| c.written)
        .sum()
    }
}

impl Default for Caches {
    fn default() -> Self {
        let r = || LineCache::new(READ_CACHE_LINES);
        Self {
            inst: r(),
            constf: r(),
            consti: r(),
            constb: r(),
            input: r(),
            output: LineCache::new(WRITE_CACHE_LINES),
            cond_out: LineCache::new(WRITE_CACHE_LINES),
        }
    }
}

/// A [`Memory`] view that goes through one cache: what the MC hands its clients.
pub(crate) struct CachedMemory<'a> {
    cache: &'a mut LineCache,
    mem: &'a mut dyn Memory,
}

impl<'a> CachedMemory<'a> {
    pub(crate) fn new(cache: &'a mut LineCache, mem: &'a mut dyn Memory) -> Self {
        Self { cache, mem }
    }
}

impl Memory for CachedMemory<'_> {
    fn read(&mut self, address: u32, buf: &mut [u8]) -> Result<(), MemFault> {
        self.cache.read(self.mem, address, buf)
    }
    fn write(&mut self, address: u32, data: &[u8]) -> Result<(), MemFault> {
        self.cache.write(self.mem, address, data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::FlatMemory;

    #[test]
    fn read_fills_lines_and_serves_until_invalidated() {
        let mut m = FlatMemory::new(0, 0x1000);
        m.write_u32(0x104, 1).unwrap();
        m.write_u32(0x108, 2).unwrap();
        let mut c = LineCache::new(8);
        let mut b = [0u8; 4];
        c.read(&mut m, 0x104, &mut b).unwrap();
        assert_eq!(u32::from_le_bytes(b), 1);
        // The whole line 0x100..0x140 is held: 0x108 was fetched with 0x104.
        assert!(c.holds(0x100) && c.holds(0x13f) && !c.holds(0x140));
        m.write_u32(0x108, 20).unwrap();
        c.read(&mut m, 0x108, &mut b).unwrap();
        assert_eq!(u32::from_le_bytes(b), 2); // stale
        c.invalidate();
        c.read(&mut m, 0x108, &mut b).unwrap();
        assert_eq!(u32::from_le_bytes(b), 20);
    }

    #[test]
    fn fill_at_end_of_memory_reads_only_the_request() {
        let mut m = FlatMemory::new(0, 0x30);
        m.write_u32(0x20, 7).unwrap();
        let mut c = LineCache::new(8);
        let mut b = [0u8; 4];
        c.read(&mut m, 0x20, &mut b).unwrap();
        assert_eq!(u32::from_le_bytes(b), 7);
        assert_eq!(c.valid_bytes(), 4);
        // Past the end: the same fault an uncached read gets.
        let e = c.read(&mut m, 0x30, &mut b).unwrap_err();
        assert_eq!((e.address, e.len), (0x30, 4));
    }

    #[test]
    fn writes_are_byte_masked_and_only_reach_memory_at_flush() {
        let mut m = FlatMemory::new(0, 0x1000);
        m.write_u32(0x200, 0xaaaa_aaaa).unwrap();
        let mut c = LineCache::new(8);
        c.write(&mut m, 0x201, &[0x11]).unwrap();
        c.write(&mut m, 0x23e, &[1, 2, 3, 4]).unwrap(); // crosses into the next line
        assert_eq!(c.lines(), 2);
        assert_eq!(c.dirty_bytes(), 5);
        assert_eq!(m.read_u32(0x200).unwrap(), 0xaaaa_aaaa);
        // A read of a partly written line keeps the pending byte and fills the rest.
        let mut b = [0u8; 4];
        c.read(&mut m, 0x200, &mut b).unwrap();
        assert_eq!(u32::from_le_bytes(b), 0xaaaa_11aa);
        // Invalidation keeps pending writes.
        c.invalidate();
        assert_eq!(c.dirty_bytes(), 5);
        c.flush(&mut m).unwrap();
        assert_eq!(c.dirty_bytes(), 0);
        assert_eq!(m.read_u32(0x200).unwrap(), 0xaaaa_11aa);
        assert_eq!(m.read_u32(0x23c).unwrap(), 0x0201_0000);
        assert_eq!(m.read_u32(0x240).unwrap(), 0x0000_0403);
    }

    #[test]
    fn full_caches_drop_clean_lines_then_push_out() {
        let mut m = FlatMemory::new(0, 0x1000);
        let mut c = LineCache::new(2);
        let mut b = [0u8; 1];
        c.read(&mut m, 0, &mut b).unwrap();
        c.write(&mut m, 0x40, &[5]).unwrap();
        c.write(&mut m, 0x80, &[6]).unwrap(); // drops the clean line 0
        assert_eq!((c.lines(), c.dirty_bytes()), (2, 2));
        assert_eq!(m.read(0x40, &mut b).map(|()| b[0]), Ok(0));
        c.write(&mut m, 0xc0, &[7]).unwrap(); // all dirty: pushed out
        assert_eq!((c.lines(), c.dirty_bytes()), (1, 1));
        assert_eq!(m.read(0x40, &mut b).map(|()| b[0]), Ok(5));
        assert_eq!(m.read(0x80, &mut b).map(|()| b[0]), Ok(6));
    }

    #[test]
    fn flush_reports_the_first_fault_and_writes_the_rest() {
        let mut m = FlatMemory::new(0, 0x100);
        let mut c = LineCache::new(8);
        c.write(&mut m, 0x40, &[1]).unwrap();
        c.write(&mut m, 0x1000, &[2]).unwrap();
        let e = c.flush(&mut m).unwrap_err();
        assert_eq!(e.address, 0x1000);
        let mut b = [0u8; 1];
        m.read(0x40, &mut b).unwrap();
        assert_eq!(b[0], 1);
        assert_eq!(c.dirty_bytes(), 0);
    }
}
