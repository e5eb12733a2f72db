//! The primitive tile binner (PTB, §8 "System Operation", §9): it takes the binning list's
//! state and primitives and writes one tile list per tile into tile-allocation memory, in the
//! document's record format, for the rendering list to call as sub-lists.
//!
//! Tile lists: tile `i` (row-major) starts in its initial block at
//! `tile allocation address + i * initial block size`; further blocks of the configured block
//! size come from the binning memory pool (the rest of the tile allocation memory, then the
//! overspill blocks the host gives through V3D_BPOA/BPOS, §10 Tables 58-61). A tile list holds:
//! the state records in force when a primitive first lands in it after a state change (the PTB
//! "only adds state change data to a list when the state is relevant to primitives actually
//! entered in the list", §8), a Compressed Primitive List (48) of coding-3 triangles
//! (Table 39) closed by the escape code, a Branch (16) to the next block when a block fills,
//! and the Return from Sub-list (18) that Flush adds (Table 38 id 4).

use std::collections::VecDeque;

use baregpu_regs::vc4::packets::{self, branch, tile_binning_mode_configuration as bin_cfg};
use gpu_device_model::DeviceContext;

use super::compressed::{self, ESCAPE};
use super::error::{self, CleError};
use super::raster::{Facing, Triangle};
use super::state::{PrimitiveList, PrimitiveState, StateRecord, TILE_STATE_RECORDS};

/// Tile size in pixels, non-multisample 32-bit colour (§5).
pub const TILE_PIXELS: u32 = 64;
/// Bytes of tile state per tile in the Tile State Data Array (§9 Table 38 id 112).
pub const TSDA_BYTES_PER_TILE: u64 = 48;
/// Binner work per tick: tile visits (a visit writes one tile's records, at most a few
/// dozen bytes), 64-byte chunks of tile-state initialisation, or triangle fetches.
pub const BIN_UNITS_PER_TICK: u64 = 32;
/// The model's alignment for tile allocation memory: the smallest block (32 bytes, Table 38).
const TILE_ALLOC_ALIGN: u32 = 32;
/// The hardware rounds the area of initial blocks up to 256 bytes; the pool starts after it.
const INITIAL_AREA_ALIGN: u64 = 256;
/// Room kept at the end of every block for the escape code and a Branch (16) record.
const BLOCK_RESERVE: u64 = 1 + packets::BRANCH.bytes as u64;

/// Binning mode configuration (record 112).
#[derive(Debug, Clone, Copy)]
struct Config {
    tile_alloc: u32,
    tsda: u32,
    width: u32,
    height: u32,
    initial_block: u32,
    block: u32,
}

/// One tile's list under construction.
#[derive(Debug, Clone, Copy, Default)]
struct TileList {
    /// Next byte to write.
    at: u64,
    /// End of the current block.
    end: u64,
    /// A compressed primitive list is open.
    open: bool,
    /// The state version last written into this list.
    version: u32,
}

/// Work the binner does over ticks.
#[derive(Debug, Clone)]
enum Job {
    /// Auto-initialising the tile state data array: bytes done.
    InitTileState(u64),
    /// Binning a primitive list.
    Primitives { list: PrimitiveList, tri: Option<Binned> },
    /// Flushing every tile list: the next tile, with the state first (Flush All State), and
    /// the records of that tile still to write.
    Flush { next: u32, all_state: bool, pending: Option<VecDeque<Vec<u8>>> },
}

/// A triangle being written to the tiles it touches.
#[derive(Debug, Clone)]
struct Binned {
    indices: [u16; 3],
    triangle: Triangle,
    /// Tile range `[x0, x1) x [y0, y1)` and the next tile to visit.
    tiles: [u32; 4],
    next: (u32, u32),
    /// Records still to write into the tile being visited.
    pending: VecDeque<Vec<u8>>,
}

/// What [`Binner::step`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BinEvents {
    /// A flush completed (V3D_BFC, INT_FLDONE).
    pub flushed: bool,
    /// The binner took the overspill block (INT_SPILLUSE).
    pub spill_used: bool,
}

/// The binner.
#[derive(Debug, Clone, Default)]
pub struct Binner {
    config: Option<Config>,
    started: bool,
    /// State in force, and the records to copy into tile lists.
    pub state: PrimitiveState,
    records: Vec<Vec<u8>>,
    version: u32,
    tiles: Vec<TileList>,
    job: Option<Job>,
    /// V3D_BPCA / V3D_BPCS.
    pub pool: (u32, u32),
    /// V3D_BPOA / V3D_BPOS.
    pub overspill: (u32, u32),
    /// Out of binning memory (V3D_PCS.BMOOM): stalled until the host writes V3D_BPOS.
    pub out_of_memory: bool,
    /// Fault injection: the pool never has memory (an OUTOMEM storm).
    pub starve: bool,
}

fn block_bytes(code: u64) -> u32 {
    32 << code
}

impl Binner {
    /// Whether binning started (Start Tile Binning seen): CT0CS.CTMODE reads 0 then.
    pub fn prefixing(&self) -> bool {
        self.config.is_some() && !self.started
    }

    /// Work in flight (the binning thread waits for it).
    pub fn busy(&self) -> bool {
        self.job.is_some()
    }

    /// Every tile list is closed and in memory: no binning configured since the last Flush
    /// completed (or none at all), nothing in flight.
    pub fn flushed(&self) -> bool {
        self.config.is_none() && self.job.is_none()
    }

    /// Triangles left in the list being binned (CT0PC).
    pub fn primitives_remaining(&self) -> u32 {
        match &self.job {
            Some(Job::Primitives { list, tri }) => list.remaining() + u32::from(tri.is_some()),
            _ => 0,
        }
    }

    /// Tile Binning Mode Configuration (112).
    pub fn configure(&mut self, bytes: &[u8]) -> Result<(), CleError> {
        let get = |f: &baregpu_regs::packet::RecordField| f.get(bytes);
        if get(&bin_cfg::MULTISAMPLE_MODE) != 0
            || get(&bin_cfg::TILE_BUFFER_64_BIT_COLOR_DEPTH) != 0
            || get(&bin_cfg::DOUBLE_BUFFER_IN_NON_MS_MODE) != 0
        {
            return Err(CleError::unsupported(
                "Tile Binning Mode Configuration: 4x multisampling, 64-bit colour and double buffering are not emulated",
            ));
        }
        if get(&bin_cfg::AUTO_INITIALISE_TILE_STATE_DATA_ARRAY) == 0 {
            return Err(CleError::unsupported(
                "Tile Binning Mode Configuration without auto-initialise: the tile state format is not documented",
            ));
        }
        let config = Config {
            tile_alloc: bin_cfg::TILE_ALLOCATION_MEMORY_ADDRESS.address(bytes).0 as u32,
            tsda: bin_cfg::TILE_STATE_DATA_ARRAY_BASE_ADDRESS.address(bytes).0 as u32,
            width: get(&bin_cfg::WIDTH) as u32,
            height: get(&bin_cfg::HEIGHT) as u32,
            initial_block: block_bytes(get(&bin_cfg::TILE_ALLOCATION_INITIAL_BLOCK_SIZE)),
            block: block_bytes(get(&bin_cfg::TILE_ALLOCATION_BLOCK_SIZE)),
        };
        let size = get(&bin_cfg::TILE_ALLOCATION_MEMORY_SIZE);
        if config.width == 0 || config.height == 0 {
            return Err(CleError::config("Tile Binning Mode Configuration: 0 tiles wide or high"));
        }
        if !config.tsda.is_multiple_of(16) {
            return Err(CleError::invalid(format!(
                "tile state data array at {:#x} is not 16-byte aligned (Table 38 id 112)",
                config.tsda
            )));
        }
        if !config.tile_alloc.is_multiple_of(TILE_ALLOC_ALIGN) {
            return Err(CleError::invalid(format!(
                "tile allocation memory at {:#x} is not 32-byte aligned",
                config.tile_alloc
            )));
        }
        if config.tile_alloc == 0 {
            return Err(CleError::store("tile allocation memory", None, 0));
        }
        if config.tsda == 0 {
            return Err(CleError::store("tile state data array", None, 0));
        }
        let tiles = u64::from(config.width * config.height);
        let initial =
            (tiles * u64::from(config.initial_block)).next_multiple_of(INITIAL_AREA_ALIGN);
        if size < initial {
            return Err(CleError::config(format!(
                "tile allocation memory of {size} bytes is smaller than the {initial} bytes of initial blocks"
            )));
        }
        self.tiles = (0..tiles)
            .map(|i| {
                let at = u64::from(config.tile_alloc) + i * u64::from(config.initial_block);
                TileList { at, end: at + u64::from(config.initial_block), open: false, version: 0 }
            })
            .collect();
        let Some(pool) = u32::try_from(initial).ok().and_then(|i| config.tile_alloc.checked_add(i))
        else {
            return Err(CleError::config("tile allocation memory past the 32-bit bus"));
        };
        self.pool = (pool, (size - initial) as u32);
        self.config = Some(config);
        self.started = false;
        // State persists from frame to frame (the hardware's registers do); only the tile
        // lists start afresh, with the state as their prefix.
        self.version = 0;
        self.job = Some(Job::InitTileState(0));
        Ok(())
    }

    /// Start Tile Binning (6).
    pub fn start(&mut self) -> Result<(), CleError> {
        if self.config.is_none() || self.started {
            return Err(CleError::invalid(
                "Start Tile Binning must come once, after Tile Binning Mode Configuration (§9)",
            ));
        }
        self.started = true;
        Ok(())
    }

    /// A state record: applied, and remembered for the tile lists.
    pub fn state_record(
        &mut self,
        dev: &mut DeviceContext<'_>,
        bytes: &[u8],
    ) -> Result<StateRecord, CleError> {
        let kind = self.state.apply(dev, bytes)?;
        if kind == StateRecord::Yes && TILE_STATE_RECORDS.contains(&bytes[0]) {
            self.records.retain(|r| r[0] != bytes[0]);
            self.records.push(bytes.to_vec());
            self.records.sort_by_key(|r| TILE_STATE_RECORDS.iter().position(|&id| id == r[0]));
            // State before Start Tile Binning is the prefix every tile list starts with (§8).
            if self.started {
                self.version += 1;
            }
        }
        Ok(kind)
    }

    /// A primitive list record (32, 33).
    pub fn primitives(&mut self, bytes: &[u8]) -> Result<(), CleError> {
        if !self.started {
            return Err(CleError::invalid("a primitive before Start Tile Binning (§9)"));
        }
        self.state.nv()?;
        self.job = Some(Job::Primitives { list: PrimitiveList::parse(bytes)?, tri: None });
        Ok(())
    }

    /// Flush (4) or Flush All State (5).
    pub fn flush(&mut self, all_state: bool) -> Result<(), CleError> {
        if !self.started {
            return Err(CleError::invalid("Flush before Start Tile Binning (§9)"));
        }
        self.job = Some(Job::Flush { next: 0, all_state, pending: None });
        Ok(())
    }

    /// The host wrote V3D_BPOS: new overspill memory, and the out-of-memory condition clears
    /// (§10 Table 55).
    pub fn give_overspill(&mut self, size: u32) {
        self.overspill.1 = size;
        self.out_of_memory = false;
    }

    /// Abandon all work (CT0CS.CTRSTA, reset).
    pub fn abandon(&mut self) {
        self.job = None;
        self.config = None;
        self.started = false;
        self.out_of_memory = false;
    }

    /// Run up to [`BIN_UNITS_PER_TICK`] units; returns the units used.
    pub fn step(
        &mut self,
        dev: &mut DeviceContext<'_>,
        events: &mut BinEvents,
    ) -> Result<u64, CleError> {
        let mut units = 0;
        while units < BIN_UNITS_PER_TICK && !self.out_of_memory {
            let Some(job) = self.job.take() else { break };
            units += 1;
            self.job = self.advance(dev, job, events)?;
        }
        Ok(units)
    }

    fn advance(
        &mut self,
        dev: &mut DeviceContext<'_>,
        job: Job,
        events: &mut BinEvents,
    ) -> Result<Option<Job>, CleError> {
        let Some(config) = self.config else { return Ok(None) };
        match job {
            Job::InitTileState(done) => {
                let total = u64::from(config.width * config.height) * TSDA_BYTES_PER_TILE;
                let chunk = (total - done).min(64);
                let zeros = [0u8; 64];
                error::write(
                    dev,
                    "tile state data array",
                    u64::from(config.tsda) + done,
                    &zeros[..chunk as usize],
                )?;
                Ok((done + chunk < total).then_some(Job::InitTileState(done + chunk)))
            }
            Job::Flush { next, all_state, pending } => {
                let tile = next as usize;
                let mut pending = pending.unwrap_or_else(|| {
                    let mut records = VecDeque::new();
                    if self.tiles[tile].open {
                        records.push_back(vec![ESCAPE]);
                    }
                    if all_state {
                        records.extend(self.records.iter().cloned());
                    }
                    records.push_back(vec![packets::RETURN_FROM_SUB_LIST.opcode]);
                    records
                });
                if !self.write(dev, tile, &mut pending, events)? {
                    // Out of memory: the records not yet written wait for more memory.
                    return Ok(Some(Job::Flush { next, all_state, pending: Some(pending) }));
                }
                if next + 1 < config.width * config.height {
                    return Ok(Some(Job::Flush { next: next + 1, all_state, pending: None }));
                }
                events.flushed = true;
                self.config = None;
                self.started = false;
                Ok(None)
            }
            Job::Primitives { mut list, tri } => {
                let tri = match tri {
                    Some(t) => Some(t),
                    None => self.fetch(dev, &mut list, config)?,
                };
                let tri = match tri {
                    Some(t) => self.visit(dev, t, config, events)?,
                    None => None,
                };
                if tri.is_none() && list.remaining() == 0 {
                    return Ok(None);
                }
                Ok(Some(Job::Primitives { list, tri }))
            }
        }
    }

    /// The next triangle of `list` with the tiles it may touch; `None` for one that touches
    /// no pixel (no area) or when the list is done.
    fn fetch(
        &mut self,
        dev: &mut DeviceContext<'_>,
        list: &mut PrimitiveList,
        config: Config,
    ) -> Result<Option<Binned>, CleError> {
        let Some(indices) = list.next_triangle(dev)? else { return Ok(None) };
        let nv = self.state.nv()?;
        let mut vertices = Vec::with_capacity(3);
        for &i in &indices {
            vertices.push(nv.vertex(dev, i, self.state.viewport, false)?);
        }
        let Ok(vertices) = <[_; 3]>::try_from(vertices) else { return Ok(None) };
        // Both facings: culling is the renderer's (its Configuration Bits may differ).
        let all = Facing { front: true, back: true, clockwise: false };
        let Some(triangle) = Triangle::new(vertices, all) else { return Ok(None) };
        let (Ok(a), Ok(b), Ok(c)) =
            (u16::try_from(indices[0]), u16::try_from(indices[1]), u16::try_from(indices[2]))
        else {
            return Err(CleError::unsupported(format!(
                "vertex indices {indices:?}: tile lists hold 16-bit indices (Primitive List Format 0x12)"
            )));
        };
        let mut rect = triangle.bounds();
        let frame =
            [0, 0, i64::from(config.width * TILE_PIXELS), i64::from(config.height * TILE_PIXELS)];
        let clip = self.state.clip.map_or(frame, |[l, b, w, h]| {
            [i64::from(l), i64::from(b), i64::from(l + w), i64::from(b + h)]
        });
        for k in 0..2 {
            rect[k] = rect[k].max(frame[k]).max(clip[k]);
            rect[k + 2] = rect[k + 2].min(frame[k + 2]).min(clip[k + 2]);
        }
        if rect[0] >= rect[2] || rect[1] >= rect[3] {
            return Ok(None);
        }
        let t = i64::from(TILE_PIXELS);
        let tiles = [
            (rect[0] / t) as u32,
            (rect[1] / t) as u32,
            ((rect[2] + t - 1) / t) as u32,
            ((rect[3] + t - 1) / t) as u32,
        ];
        Ok(Some(Binned {
            indices: [a, b, c],
            triangle,
            tiles,
            next: (tiles[0], tiles[1]),
            pending: VecDeque::new(),
        }))
    }

    /// Visit the next tile of `tri`; `None` when every tile is done.
    fn visit(
        &mut self,
        dev: &mut DeviceContext<'_>,
        mut tri: Binned,
        config: Config,
        events: &mut BinEvents,
    ) -> Result<Option<Binned>, CleError> {
        let (tx, ty) = tri.next;
        let tile = (ty * config.width + tx) as usize;
        if tri.pending.is_empty() {
            let t = i64::from(TILE_PIXELS);
            let rect = [
                i64::from(tx) * t,
                i64::from(ty) * t,
                i64::from(tx + 1) * t,
                i64::from(ty + 1) * t,
            ];
            if tri.triangle.touches(rect) {
                let list = &mut self.tiles[tile];
                if list.version != self.version {
                    if list.open {
                        tri.pending.push_back(vec![ESCAPE]);
                    }
                    tri.pending.extend(self.records.iter().cloned());
                    tri.pending.push_back(vec![packets::COMPRESSED_PRIMITIVE_LIST.opcode]);
                } else if !list.open {
                    tri.pending.push_back(vec![packets::COMPRESSED_PRIMITIVE_LIST.opcode]);
                }
                tri.pending.push_back(compressed::encode_absolute(tri.indices).to_vec());
            }
        }
        if !tri.pending.is_empty() {
            if !self.write(dev, tile, &mut tri.pending, events)? {
                return Ok(Some(tri));
            }
            let list = &mut self.tiles[tile];
            list.open = true;
            list.version = self.version;
        }
        tri.next.0 += 1;
        if tri.next.0 == tri.tiles[2] {
            tri.next = (tri.tiles[0], ty + 1);
        }
        Ok((tri.next.1 < tri.tiles[3]).then_some(tri))
    }

    /// Write `records` into tile `tile`'s list, moving to a new block when one fills; `false`
    /// when the binning memory ran out (the records not yet written stay in `records`).
    fn write(
        &mut self,
        dev: &mut DeviceContext<'_>,
        tile: usize,
        records: &mut VecDeque<Vec<u8>>,
        events: &mut BinEvents,
    ) -> Result<bool, CleError> {
        while let Some(record) = records.front() {
            let list = self.tiles[tile];
            let len = record.len() as u64;
            // The list's last records (escape, return) need no room for a branch after them.
            let last = record[0] == ESCAPE || record[0] == packets::RETURN_FROM_SUB_LIST.opcode;
            let need = if last { len } else { len + BLOCK_RESERVE };
            if list.at + need > list.end {
                let Some(block) = self.allocate(events)? else {
                    self.out_of_memory = true;
                    return Ok(false);
                };
                let mut jump = Vec::new();
                if list.open {
                    jump.push(ESCAPE);
                }
                let b = branch::Body::new()
                    .with_absolute_branch_address(baregpu_hal::dma::BusAddress(block.into()))
                    .map_err(|e| CleError::invalid(format!("{e:?}")))?;
                jump.extend_from_slice(b.bytes());
                error::write(dev, "tile list", list.at, &jump)?;
                let l = &mut self.tiles[tile];
                l.at = block.into();
                l.end = l.at + u64::from(self.config.map_or(32, |c| c.block));
                if l.open {
                    // Reopen the compressed list in the new block (only a triangle code can
                    // follow an open list: state records are preceded by the escape code).
                    let reopen = [packets::COMPRESSED_PRIMITIVE_LIST.opcode];
                    error::write(dev, "tile list", l.at, &reopen)?;
                    l.at += 1;
                }
                continue;
            }
            error::write(dev, "tile list", list.at, record)?;
            let l = &mut self.tiles[tile];
            l.at += len;
            if record[0] == ESCAPE {
                l.open = false;
            } else if record[0] == packets::COMPRESSED_PRIMITIVE_LIST.opcode {
                l.open = true;
            }
            records.pop_front();
        }
        Ok(true)
    }

    /// A block from the pool, else from the overspill memory; `None`: out of memory.
    fn allocate(&mut self, events: &mut BinEvents) -> Result<Option<u32>, CleError> {
        if self.starve {
            return Ok(None);
        }
        let size = self.config.map_or(32, |c| c.block);
        if self.pool.1 < size {
            if self.overspill.1 == 0 {
                return Ok(None);
            }
            if self.overspill.0 == 0 {
                return Err(CleError::store("overspill binning memory (V3D_BPOA)", None, 0));
            }
            self.pool = self.overspill;
            self.overspill.1 = 0;
            events.spill_used = true;
            if self.pool.1 < size {
                return Ok(None);
            }
        }
        let block = self.pool.0;
        let Some(next) = block.checked_add(size) else {
            return Err(CleError::new(
                gpu_device_model::cp_error::DMA_WRITE_FAULT,
                format!("binning memory block at {block:#x} runs past the 32-bit bus"),
            ));
        };
        self.pool = (next, self.pool.1 - size);
        Ok(Some(block))
    }
}
