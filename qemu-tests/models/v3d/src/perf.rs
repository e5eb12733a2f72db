//! Performance counters (§10 Tables 82-86): sixteen counters, each counting one of the Table 82
//! sources while enabled (`V3D_PCTRE`), mapped by `V3D_PCTRSn`, cleared by `V3D_PCTRC`,
//! readable and writable as `V3D_PCTRn`.
//!
//! The model counts source events as they happen ([`Events`]); a counter adds what its source
//! counted while it was enabled. The QPU side counts sources 13 (idle cycles), 15 (fragment
//! shading cycles), 16 (valid instructions), 20-23 (instruction and uniforms cache hits and
//! misses), 24 (texture quads), 25 (TMU cache misses) and 28-29 (L2 hits and misses; only
//! while the L2 is enabled). A QPU "clock cycle" is one instruction slot of the model: a tick
//! gives each QPU `INSTRUCTIONS_PER_TICK / 12` (a decision). Its stalls on the TMU, the
//! scoreboard and varyings (17-19) and the VPM stalls (26-27) never happen in the model, which
//! answers those at once. The control-list side counts the FEP, TLB, PTB and PSE sources (0-12)
//! and vertex shading (14) through `V3d::count_event`.

/// Table 82 source numbers the QPU side counts.
pub mod source {
    /// QPU total idle clock cycles for all QPUs.
    pub const QPU_IDLE: usize = 13;
    /// QPU total clock cycles doing fragment shading.
    pub const QPU_FRAGMENT: usize = 15;
    /// QPU total clock cycles executing valid instructions.
    pub const QPU_VALID: usize = 16;
    /// Instruction cache hits, all slices.
    pub const ICACHE_HITS: usize = 20;
    /// Instruction cache misses.
    pub const ICACHE_MISSES: usize = 21;
    /// Uniforms cache hits.
    pub const UCACHE_HITS: usize = 22;
    /// Uniforms cache misses.
    pub const UCACHE_MISSES: usize = 23;
    /// Texture quads processed.
    pub const TMU_QUADS: usize = 24;
    /// TMU cache misses (fetches from memory or the L2).
    pub const TMU_MISSES: usize = 25;
    /// L2 hits.
    pub const L2_HITS: usize = 28;
    /// L2 misses.
    pub const L2_MISSES: usize = 29;
}

/// Sources a `PCTRS` field can name (5 bits; 30 and 31 count nothing).
pub const SOURCE_IDS: usize = 32;
/// Counters (`V3D_PCTR0`-`V3D_PCTR15`).
pub const COUNTERS: usize = 16;

/// Events counted per source since power-on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Events([u64; SOURCE_IDS]);

impl Events {
    /// Count `n` events of `source` (ignored beyond the 5-bit range).
    pub fn add(&mut self, source: usize, n: u64) {
        if let Some(e) = self.0.get_mut(source) {
            *e = e.wrapping_add(n);
        }
    }

    /// Events of `source` so far.
    pub fn total(&self, source: usize) -> u64 {
        self.0.get(source).copied().unwrap_or(0)
    }
}

/// The sixteen counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counters {
    value: [u32; COUNTERS],
    /// The source's total when the counter last caught up.
    mark: [u64; COUNTERS],
    source: [u8; COUNTERS],
    enabled: u16,
}

impl Counters {
    /// Add to each enabled counter what its source counted since it last caught up.
    fn sync(&mut self, events: &Events) {
        for n in 0..COUNTERS {
            let total = events.total(usize::from(self.source[n]));
            if self.enabled >> n & 1 != 0 {
                self.value[n] = self.value[n].wrapping_add(total.wrapping_sub(self.mark[n]) as u32);
            }
            self.mark[n] = total;
        }
    }

    /// `V3D_PCTRn`.
    pub fn value(&mut self, n: usize, events: &Events) -> u32 {
        self.sync(events);
        self.value[n % COUNTERS]
    }

    /// Write `V3D_PCTRn`.
    pub fn set_value(&mut self, n: usize, value: u32, events: &Events) {
        self.sync(events);
        self.value[n % COUNTERS] = value;
    }

    /// `V3D_PCTRSn`.
    pub fn source(&self, n: usize) -> u32 {
        u32::from(self.source[n % COUNTERS])
    }

    /// Write `V3D_PCTRSn`: count `source` from now on.
    pub fn set_source(&mut self, n: usize, source: u32, events: &Events) {
        self.sync(events);
        let n = n % COUNTERS;
        self.source[n] = (source & 0x1F) as u8;
        self.mark[n] = events.total(usize::from(self.source[n]));
    }

    /// `V3D_PCTRE`.
    pub fn enables(&self) -> u32 {
        u32::from(self.enabled)
    }

    /// Write `V3D_PCTRE`.
    pub fn set_enables(&mut self, mask: u32, events: &Events) {
        self.sync(events);
        self.enabled = mask as u16;
    }

    /// Write `V3D_PCTRC`: clear the counters whose bit is set.
    pub fn clear(&mut self, mask: u32, events: &Events) {
        self.sync(events);
        for n in 0..COUNTERS {
            if mask >> n & 1 != 0 {
                self.value[n] = 0;
            }
        }
    }
}
