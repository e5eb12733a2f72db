//! The read caches between the QPUs and memory: per slice an instruction cache, a uniforms
//! cache and one cache per TMU (§3 "Core Pipeline Operation", "Uniforms"; §4 "Texture Data
//! Storage"), all behind the shared level-2 cache (§4: "via its internal cache and the 3D
//! system level-2 cache"). None of them snoops memory: data a driver rewrites stays stale in a
//! cache until `V3D_SLCACTL` (ICC/UCC/T0CC/T1CC per slice) or `V3D_L2CACTL.L2CCLR` clears it
//! (§10 Tables 71-72). The L2 is used only while `L2CENA` is set.

use crate::perf::{Events, source};
use gpu_device_model::DeviceContext;

/// Bytes per cache line (a decision: the document gives no line size).
pub const LINE_BYTES: u32 = 64;
/// Lines per slice cache (a decision: 4 KiB each).
pub const SLICE_CACHE_LINES: usize = 64;
/// Lines of the L2 (a decision: 32 KiB).
pub const L2_LINES: usize = 512;
/// Ways of every cache (a decision: 4-way set associative, round-robin replacement).
pub const WAYS: usize = 4;

type Line = [u8; LINE_BYTES as usize];

/// A set-associative read-only cache of [`LINE_BYTES`] lines.
#[derive(Debug, Clone)]
pub struct ReadCache {
    sets: Vec<[Option<(u32, Line)>; WAYS]>,
    /// The way each set replaces next.
    victim: Vec<u8>,
}

impl ReadCache {
    /// An empty cache of `lines` lines (a multiple of [`WAYS`]).
    pub fn new(lines: usize) -> Self {
        let sets = (lines / WAYS).max(1);
        ReadCache { sets: vec![[None; WAYS]; sets], victim: vec![0; sets] }
    }

    /// Drop every line.
    pub fn clear(&mut self) {
        self.sets.iter_mut().for_each(|s| *s = [None; WAYS]);
    }

    fn set(&self, line: u32) -> usize {
        (line / LINE_BYTES) as usize % self.sets.len()
    }

    fn get(&self, line: u32) -> Option<&Line> {
        self.sets[self.set(line)].iter().flatten().find(|(tag, _)| *tag == line).map(|(_, d)| d)
    }

    fn put(&mut self, line: u32, data: Line) {
        let s = self.set(line);
        let way = usize::from(self.victim[s]);
        self.victim[s] = ((way + 1) % WAYS) as u8;
        self.sets[s][way] = Some((line, data));
    }
}

/// Which slice cache a read goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Port {
    /// Instruction cache.
    Instruction,
    /// Uniforms cache.
    Uniforms,
    /// TMU0 or TMU1 cache.
    Tmu(u8),
}

/// Every cache of the V3D.
#[derive(Debug, Clone)]
pub struct Caches {
    l2: ReadCache,
    /// `V3D_L2CACTL.L2CENA`.
    pub l2_enabled: bool,
    /// Per slice: instruction, uniforms, TMU0, TMU1.
    slices: Vec<[ReadCache; 4]>,
}

fn index(port: Port) -> usize {
    match port {
        Port::Instruction => 0,
        Port::Uniforms => 1,
        Port::Tmu(t) => 2 + usize::from(t & 1),
    }
}

impl Caches {
    /// The caches of `slices` slices, all empty, the L2 disabled (reset).
    pub fn new(slices: usize) -> Self {
        Caches {
            l2: ReadCache::new(L2_LINES),
            l2_enabled: false,
            slices: (0..slices)
                .map(|_| core::array::from_fn(|_| ReadCache::new(SLICE_CACHE_LINES)))
                .collect(),
        }
    }

    /// Clear the L2 (`L2CCLR`).
    pub fn clear_l2(&mut self) {
        self.l2.clear();
    }

    /// Clear `port`'s cache in the slices whose bit is set in `slice_mask`.
    pub fn clear(&mut self, port: Port, slice_mask: u32) {
        for (s, caches) in self.slices.iter_mut().enumerate() {
            if slice_mask >> s & 1 != 0 {
                caches[index(port)].clear();
            }
        }
    }

    /// Read the dword at `address` (the low two bits ignored) through `slice`'s `port` cache,
    /// counting hits and misses in `events` (§10 Table 82). `Err(address)`: a bus fault, or the
    /// unprogrammed address 0.
    pub fn read_u32(
        &mut self,
        dev: &mut DeviceContext<'_>,
        events: &mut Events,
        slice: usize,
        port: Port,
        address: u32,
    ) -> Result<u32, u32> {
        let address = address & !3;
        if address == 0 {
            return Err(0);
        }
        let line = address & !(LINE_BYTES - 1);
        let at = (address - line) as usize;
        let word = |d: &Line| u32::from_le_bytes([d[at], d[at + 1], d[at + 2], d[at + 3]]);
        let (hit, miss) = match port {
            Port::Instruction => (Some(source::ICACHE_HITS), source::ICACHE_MISSES),
            Port::Uniforms => (Some(source::UCACHE_HITS), source::UCACHE_MISSES),
            Port::Tmu(_) => (None, source::TMU_MISSES),
        };
        let cache = &mut self.slices[slice][index(port)];
        if let Some(d) = cache.get(line) {
            if let Some(hit) = hit {
                events.add(hit, 1);
            }
            return Ok(word(d));
        }
        events.add(miss, 1);
        let data = match self.l2.get(line).filter(|_| self.l2_enabled) {
            Some(d) => {
                events.add(source::L2_HITS, 1);
                *d
            }
            None => {
                let mut d: Line = [0; LINE_BYTES as usize];
                dev.dma_read(u64::from(line), &mut d).map_err(|_| address)?;
                if self.l2_enabled {
                    events.add(source::L2_MISSES, 1);
                    self.l2.put(line, d);
                }
                d
            }
        };
        self.slices[slice][index(port)].put(line, data);
        Ok(word(&data))
    }
}
