//! The caches between the shader core and memory, and what makes them coherent.
//!
//! §8.6: compute shaders write memory "via the CB" (`EXPORT_RAT`; `EXPORT_RAT_CACHELESS`
//! bypasses the cache) and read it "via TC"; §9.6.2: the CBs, DBs and SX flush their caches on
//! the cache-flush end-of-pipe events (a Bottom Of Pipe event leaves "data in their caches");
//! §9.6.7: SURFACE_SYNC applies `CP_COHER_CNTL`'s actions (CB_ACTION with the colour buffers'
//! DEST_BASE_ENA bits, TC/VC_ACTION, SH_ACTION) to the `COHER_BASE`/`COHER_SIZE` range. The
//! model keeps three caches of [`LINE_BYTES`] lines, each of [`CACHE_LINES`] lines (the
//! documents give no sizes; a model decision):
//!
//! - [`WriteBack`] for the colour buffers: RAT writes stay in it, invisible to the CPU and to
//!   every other unit, until a flush (or an eviction of the oldest line when it is full) writes
//!   them back;
//! - [`ReadOnly`] for vertex fetches (TC/VC) and one for program words and constants (SH): a
//!   line read once is served from the cache until it is invalidated, so memory changed
//!   behind it (by the CPU, CP DMA or a RAT write) stays unseen.

use crate::shader::{MemoryFault, ShaderMemory};
use std::collections::{BTreeMap, VecDeque};

/// Bytes per cache line.
pub const LINE_BYTES: u64 = 64;
/// Lines per cache (16 KiB per cache).
pub const CACHE_LINES: usize = 256;

/// A byte range `[start, end)` of GPU addresses (a SURFACE_SYNC's COHER_BASE/COHER_SIZE).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    /// First byte.
    pub start: u64,
    /// One past the last byte.
    pub end: u64,
}

impl Range {
    /// Every address.
    pub const ALL: Range = Range { start: 0, end: u64::MAX };

    fn holds_line(&self, tag: u64) -> bool {
        let line = tag * LINE_BYTES;
        line < self.end && line + LINE_BYTES > self.start
    }
}

#[derive(Debug, Clone)]
struct DirtyLine {
    cb: u8,
    data: [u8; LINE_BYTES as usize],
    /// Bit n: byte n holds data not yet in memory.
    dirty: u64,
}

/// A write-back cache without write-allocate reads: a write fills only the bytes it writes.
#[derive(Debug, Clone, Default)]
pub struct WriteBack {
    lines: BTreeMap<u64, DirtyLine>,
    /// Tags in allocation order (may name lines flushed since: skipped when evicting).
    order: VecDeque<u64>,
}

impl WriteBack {
    /// Lines holding data memory does not have yet.
    pub fn dirty_lines(&self) -> usize {
        self.lines.len()
    }

    /// Make room for one line: write back the oldest.
    fn evict(&mut self, memory: &mut dyn ShaderMemory) -> Result<(), MemoryFault> {
        while let Some(tag) = self.order.pop_front() {
            if let Some(line) = self.lines.remove(&tag) {
                return write_back(memory, tag, &line);
            }
        }
        Ok(())
    }

    /// Write `data` at `address` for colour buffer `cb`; a full cache first writes back its
    /// oldest line. Returns the lines written back.
    pub fn write(
        &mut self,
        memory: &mut dyn ShaderMemory,
        cb: u8,
        address: u64,
        data: &[u8],
    ) -> Result<u64, MemoryFault> {
        let mut written_back = 0;
        for (i, &byte) in data.iter().enumerate() {
            let at = address + i as u64;
            let (tag, offset) = (at / LINE_BYTES, (at % LINE_BYTES) as usize);
            if !self.lines.contains_key(&tag) {
                if self.lines.len() >= CACHE_LINES {
                    self.evict(memory)?;
                    written_back += 1;
                }
                if self.order.len() >= 2 * CACHE_LINES {
                    let lines = &self.lines;
                    self.order.retain(|t| lines.contains_key(t));
                }
                self.order.push_back(tag);
            }
            let line = self.lines.entry(tag).or_insert(DirtyLine {
                cb,
                data: [0; LINE_BYTES as usize],
                dirty: 0,
            });
            line.data[offset] = byte;
            line.dirty |= 1 << offset;
            line.cb = cb;
        }
        Ok(written_back)
    }

    /// Read `buf` at `address`: memory with the cached bytes on top (what the CB sees).
    pub fn read(
        &self,
        memory: &mut dyn ShaderMemory,
        address: u64,
        buf: &mut [u8],
    ) -> Result<(), MemoryFault> {
        memory.read(address, buf)?;
        for (i, byte) in buf.iter_mut().enumerate() {
            let at = address + i as u64;
            let (tag, offset) = (at / LINE_BYTES, at % LINE_BYTES);
            if let Some(line) = self.lines.get(&tag).filter(|l| l.dirty >> offset & 1 != 0) {
                *byte = line.data[offset as usize];
            }
        }
        Ok(())
    }

    /// Forget cached bytes of `[address, address + len)` (a newer uncached write went to
    /// memory; a later flush must not overwrite it).
    pub fn forget(&mut self, address: u64, len: usize) {
        for at in address..address + len as u64 {
            let (tag, offset) = (at / LINE_BYTES, at % LINE_BYTES);
            if let Some(line) = self.lines.get_mut(&tag) {
                line.dirty &= !(1 << offset);
            }
        }
        self.lines.retain(|_, l| l.dirty != 0);
    }

    /// Write back (and drop) the lines of the colour buffers in `cbs` (bit n: CB n) that
    /// overlap `range`. Returns the lines written back.
    pub fn flush(
        &mut self,
        memory: &mut dyn ShaderMemory,
        cbs: u32,
        range: Range,
    ) -> Result<u64, MemoryFault> {
        let chosen: Vec<u64> = self
            .lines
            .iter()
            .filter(|(tag, line)| cbs >> line.cb & 1 != 0 && range.holds_line(**tag))
            .map(|(tag, _)| *tag)
            .collect();
        for tag in &chosen {
            let line = self.lines.remove(tag).expect("chosen from the map");
            write_back(memory, *tag, &line)?;
        }
        Ok(chosen.len() as u64)
    }
}

/// Write the dirty bytes of `line` in runs.
fn write_back(
    memory: &mut dyn ShaderMemory,
    tag: u64,
    line: &DirtyLine,
) -> Result<(), MemoryFault> {
    let base = tag * LINE_BYTES;
    let mut i = 0;
    while i < LINE_BYTES as usize {
        if line.dirty >> i & 1 == 0 {
            i += 1;
            continue;
        }
        let start = i;
        while i < LINE_BYTES as usize && line.dirty >> i & 1 != 0 {
            i += 1;
        }
        memory.write(base + start as u64, &line.data[start..i])?;
    }
    Ok(())
}

/// A read-only cache: lines filled from memory on a miss, served until invalidated.
#[derive(Debug, Clone, Default)]
pub struct ReadOnly {
    lines: BTreeMap<u64, [u8; LINE_BYTES as usize]>,
    /// Tags in fill order (may name invalidated lines: skipped when dropping the oldest).
    order: VecDeque<u64>,
}

impl ReadOnly {
    /// Lines held.
    pub fn lines(&self) -> usize {
        self.lines.len()
    }

    /// Read `buf` at `address`, filling missing lines (a full cache drops its oldest line).
    /// Returns the lines filled.
    pub fn read(
        &mut self,
        memory: &mut dyn ShaderMemory,
        address: u64,
        buf: &mut [u8],
    ) -> Result<u64, MemoryFault> {
        let mut filled = 0;
        let mut i = 0;
        while i < buf.len() {
            let at = address + i as u64;
            let (tag, offset) = (at / LINE_BYTES, (at % LINE_BYTES) as usize);
            let line = match self.lines.get(&tag) {
                Some(data) => *data,
                None => {
                    let mut data = [0u8; LINE_BYTES as usize];
                    // The line fill reads the whole line; a fault names the access.
                    memory
                        .read(tag * LINE_BYTES, &mut data)
                        .map_err(|_| MemoryFault { address, len: buf.len() })?;
                    while self.lines.len() >= CACHE_LINES {
                        let Some(oldest) = self.order.pop_front() else { break };
                        self.lines.remove(&oldest);
                    }
                    if self.order.len() >= 2 * CACHE_LINES {
                        let lines = &self.lines;
                        self.order.retain(|t| lines.contains_key(t));
                    }
                    self.lines.insert(tag, data);
                    self.order.push_back(tag);
                    filled += 1;
                    data
                }
            };
            let n = (LINE_BYTES as usize - offset).min(buf.len() - i);
            buf[i..i + n].copy_from_slice(&line[offset..offset + n]);
            i += n;
        }
        Ok(filled)
    }

    /// Drop the lines overlapping `range`.
    pub fn invalidate(&mut self, range: Range) {
        self.lines.retain(|tag, _| !range.holds_line(*tag));
    }
}

/// The three caches of the model.
#[derive(Debug, Clone, Default)]
pub struct Caches {
    /// Colour-buffer (RAT) writes.
    pub cb: WriteBack,
    /// Vertex/texture fetches (TC_ACTION_ENA / VC_ACTION_ENA invalidate it).
    pub tc: ReadOnly,
    /// Program words and ALU constants (SH_ACTION_ENA invalidates it).
    pub sh: ReadOnly,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shader::FlatMemory;

    #[test]
    fn writes_stay_in_the_cache_until_flushed_and_reads_see_them() {
        let mut m = FlatMemory::new(0, 4096);
        let mut cb = WriteBack::default();
        cb.write(&mut m, 0, 0x104, &7u32.to_le_bytes()).unwrap();
        assert_eq!(m.read_u32(0x104), Ok(0), "not in memory yet");
        let mut b = [0u8; 8];
        cb.read(&mut m, 0x100, &mut b).unwrap();
        assert_eq!(b, [0, 0, 0, 0, 7, 0, 0, 0], "the CB sees its own data");
        assert_eq!(cb.flush(&mut m, 1 << 1, Range::ALL), Ok(0), "CB 1 has no lines");
        assert_eq!(cb.flush(&mut m, 1, Range { start: 0x200, end: 0x300 }), Ok(0));
        assert_eq!(cb.flush(&mut m, 1, Range { start: 0x13F, end: 0x140 }), Ok(1));
        assert_eq!(m.read_u32(0x104), Ok(7));
        assert_eq!(m.read_u32(0x100), Ok(0), "only the written bytes go back");
    }

    #[test]
    fn a_full_write_back_cache_evicts_its_oldest_line() {
        let mut m = FlatMemory::new(0, 1 << 20);
        let mut cb = WriteBack::default();
        for n in 0..=CACHE_LINES as u64 {
            cb.write(&mut m, 0, n * LINE_BYTES, &[1]).unwrap();
        }
        assert_eq!(cb.dirty_lines(), CACHE_LINES);
        assert_eq!(m.read_u32(0), Ok(1), "line 0 was evicted");
        assert_eq!(m.read_u32(LINE_BYTES), Ok(0));
        cb.forget(LINE_BYTES, 1);
        assert_eq!(cb.dirty_lines(), CACHE_LINES - 1);
    }

    #[test]
    fn read_only_lines_hide_newer_memory_until_invalidated() {
        let mut m = FlatMemory::new(0, 4096);
        m.write_u32(0x80, 1).unwrap();
        let mut tc = ReadOnly::default();
        let mut b = [0u8; 4];
        assert_eq!(tc.read(&mut m, 0x80, &mut b), Ok(1));
        m.write_u32(0x80, 2).unwrap();
        assert_eq!(tc.read(&mut m, 0x80, &mut b), Ok(0));
        assert_eq!(u32::from_le_bytes(b), 1, "stale");
        tc.invalidate(Range { start: 0, end: 0x80 });
        tc.read(&mut m, 0x80, &mut b).unwrap();
        assert_eq!(u32::from_le_bytes(b), 1, "the range missed the line");
        tc.invalidate(Range::ALL);
        tc.read(&mut m, 0x80, &mut b).unwrap();
        assert_eq!(u32::from_le_bytes(b), 2);
        // A read across two lines fills both.
        let mut wide = [0u8; 8];
        assert_eq!(tc.read(&mut m, 0xFC, &mut wide), Ok(2));
    }
}
