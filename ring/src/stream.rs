//! What every command stream shares, whatever its family: the unit it is made of and the
//! reserve-then-push sink protocol with its back-pressure error.
//!
//! AMD PM4 streams (R5xx §6, Evergreen §9) and nVidia pushbuffers (method headers, IB entries)
//! are made of 32-bit dwords; VideoCore IV control lists (broadcom-videocore-iv-3d §9) of byte
//! records. A [`CommandSink`] is generic over that [`StreamUnit`], so the
//! [`CommandRing`](crate::ring::CommandRing)'s space accounting, back-pressure and wrap are
//! written once for every unit.

use core::fmt;
use core::sync::atomic::Ordering;

use baregpu_hal::dma::DmaRegion;

/// The unit a command stream is made of, and how it is stored in DMA memory.
///
/// Implemented for `u32` (PM4 dwords, pushbuffer words) and `u8` (byte records).
pub trait StreamUnit: Copy + Default + PartialEq + fmt::Debug + 'static {
    /// Bytes per unit.
    const BYTES: usize;

    /// Store `value` as unit `index` of `region` (out of bounds: nothing is written).
    fn store(region: &DmaRegion, index: usize, value: Self);

    /// Store `values` from unit `index` on (all or nothing when out of bounds).
    #[inline]
    fn store_slice(region: &DmaRegion, index: usize, values: &[Self]) {
        for (i, &v) in values.iter().enumerate() {
            Self::store(region, index + i, v);
        }
    }

    /// Store `first` then `then` as one run from unit `index` on (all or nothing when out of
    /// bounds): a packet's prefix and body, written by the caller's one reservation.
    #[inline]
    fn store_run(region: &DmaRegion, index: usize, first: &[Self], then: &[Self]) {
        if (index + first.len() + then.len()) * Self::BYTES <= region.size() {
            Self::store_slice(region, index, first);
            Self::store_slice(region, index + first.len(), then);
        }
    }

    /// Load unit `index` of `region` (`None` out of bounds).
    fn load(region: &DmaRegion, index: usize) -> Option<Self>;
}

impl StreamUnit for u32 {
    const BYTES: usize = 4;

    #[inline]
    fn store(region: &DmaRegion, index: usize, value: u32) {
        let _ = region.write_u32(index * 4, value);
    }

    #[inline]
    fn store_slice(region: &DmaRegion, index: usize, values: &[u32]) {
        let _ = region.write_slice(index * 4, values);
    }

    /// One bounds check for the run, then one store per dword (`DmaRegion::words`).
    #[inline(always)]
    fn store_run(region: &DmaRegion, index: usize, first: &[u32], then: &[u32]) {
        if let Ok(slots) = region.words(index * 4, first.len() + then.len()) {
            let (a, b) = slots.split_at(first.len());
            for (slot, &v) in a.iter().zip(first) {
                slot.store(v, Ordering::Relaxed);
            }
            for (slot, &v) in b.iter().zip(then) {
                slot.store(v, Ordering::Relaxed);
            }
        }
    }

    #[inline]
    fn load(region: &DmaRegion, index: usize) -> Option<u32> {
        region.read_u32(index * 4).ok()
    }
}

impl StreamUnit for u8 {
    const BYTES: usize = 1;

    /// DMA regions are accessed by dwords: the byte is merged into its dword. Only the host
    /// writes stream memory, so the read-modify-write cannot lose a device write.
    #[inline]
    fn store(region: &DmaRegion, index: usize, value: u8) {
        let (offset, shift) = (index & !3, (index & 3) * 8);
        if let Ok(word) = region.read_u32(offset) {
            let merged = word & !(0xFF << shift) | u32::from(value) << shift;
            let _ = region.write_u32(offset, merged);
        }
    }

    #[inline]
    fn load(region: &DmaRegion, index: usize) -> Option<u8> {
        let word = region.read_u32(index & !3).ok()?;
        Some((word >> ((index & 3) * 8)) as u8)
    }
}

/// A sink had no room for a whole packet (or a unit was pushed outside a reservation); nothing
/// was written. Counts are in the stream's units; the message says dwords, the unit of every
/// PM4 and pushbuffer stream (a byte-record stream counts bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct NoSpace {
    /// Units requested.
    pub needed: usize,
    /// Units available when the request was made.
    pub free: usize,
}

impl fmt::Display for NoSpace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "no room for {} dwords ({} free)", self.needed, self.free)
    }
}

impl core::error::Error for NoSpace {}

/// Somewhere packets go: a ring, an indirect buffer, a stack buffer.
///
/// The protocol is reserve-then-push: [`reserve`](Self::reserve) grants room for a whole packet
/// (or fails with [`NoSpace`] without touching memory), then the packet's units are
/// [`push`](Self::push)ed inside that grant. A push outside any grant fails with [`NoSpace`]
/// and writes nothing, so a sink never overwrites memory it did not grant (for a ring: units
/// the device has not consumed yet). `U` is the stream's unit (`u32` dwords by default).
pub trait CommandSink<U: StreamUnit = u32> {
    /// Grant room for the next `units` pushes, replacing any earlier unused grant; on error
    /// nothing changes.
    fn reserve(&mut self, units: usize) -> Result<(), NoSpace>;

    /// Append one unit inside the current grant.
    fn push(&mut self, unit: U) -> Result<(), NoSpace>;

    /// Append a whole packet, `header` then `body`, or nothing ([`NoSpace`]). Same effect as
    /// `reserve(1 + body.len())` and the pushes; sinks override it with a faster path.
    #[inline]
    fn write_packet(&mut self, header: U, body: &[U]) -> Result<(), NoSpace> {
        self.write_parts(&[header], body)
    }

    /// Append a whole packet given in two parts (a header and the dwords the packet puts before
    /// its values, then the values), or nothing ([`NoSpace`]): one reservation, one run of
    /// stores. Same effect as `reserve(prefix.len() + body.len())` and the pushes; sinks
    /// override it with a faster path.
    #[inline]
    fn write_parts(&mut self, prefix: &[U], body: &[U]) -> Result<(), NoSpace> {
        self.reserve(prefix.len() + body.len())?;
        self.push_slice(prefix)?;
        self.push_slice(body)
    }

    /// Append units inside the current grant. The sinks of this crate check the whole slice
    /// against the grant first (all or none); this default pushes one by one and stops at the
    /// first error.
    fn push_slice(&mut self, units: &[U]) -> Result<(), NoSpace> {
        for &u in units {
            self.push(u)?;
        }
        Ok(())
    }
}

impl<U: StreamUnit, S: CommandSink<U> + ?Sized> CommandSink<U> for &mut S {
    fn reserve(&mut self, units: usize) -> Result<(), NoSpace> {
        (**self).reserve(units)
    }
    fn push(&mut self, unit: U) -> Result<(), NoSpace> {
        (**self).push(unit)
    }
    fn push_slice(&mut self, units: &[U]) -> Result<(), NoSpace> {
        (**self).push_slice(units)
    }
    #[inline(always)]
    fn write_packet(&mut self, header: U, body: &[U]) -> Result<(), NoSpace> {
        (**self).write_packet(header, body)
    }
    #[inline(always)]
    fn write_parts(&mut self, prefix: &[U], body: &[U]) -> Result<(), NoSpace> {
        (**self).write_parts(prefix, body)
    }
}

/// A [`CommandSink`] over a caller's `[U]` (stack buffers, PIO staging, benchmarks).
#[derive(Debug)]
pub struct SliceSink<'a, U = u32> {
    buf: &'a mut [U],
    len: usize,
    granted: usize,
}

impl<'a, U: StreamUnit> SliceSink<'a, U> {
    /// An empty sink writing from the start of `buf`.
    pub fn new(buf: &'a mut [U]) -> Self {
        SliceSink { buf, len: 0, granted: 0 }
    }

    /// The units written so far.
    pub fn written(&self) -> &[U] {
        &self.buf[..self.len]
    }

    /// Number of units written.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Forget the contents (the buffer is reused from its start).
    pub fn clear(&mut self) {
        self.len = 0;
        self.granted = 0;
    }
}

impl<U: StreamUnit> CommandSink<U> for SliceSink<'_, U> {
    #[inline]
    fn write_packet(&mut self, header: U, body: &[U]) -> Result<(), NoSpace> {
        let n = 1 + body.len();
        let free = self.buf.len() - self.len;
        if n > free {
            return Err(NoSpace { needed: n, free });
        }
        let dst = &mut self.buf[self.len..self.len + n];
        dst[0] = header;
        dst[1..].copy_from_slice(body);
        self.len += n;
        self.granted = 0;
        Ok(())
    }

    #[inline]
    fn write_parts(&mut self, prefix: &[U], body: &[U]) -> Result<(), NoSpace> {
        let n = prefix.len() + body.len();
        let free = self.buf.len() - self.len;
        if n > free {
            return Err(NoSpace { needed: n, free });
        }
        let (a, b) = self.buf[self.len..self.len + n].split_at_mut(prefix.len());
        a.copy_from_slice(prefix);
        b.copy_from_slice(body);
        self.len += n;
        self.granted = 0;
        Ok(())
    }

    #[inline]
    fn reserve(&mut self, units: usize) -> Result<(), NoSpace> {
        let free = self.buf.len() - self.len;
        if units > free {
            return Err(NoSpace { needed: units, free });
        }
        self.granted = units;
        Ok(())
    }

    #[inline]
    fn push(&mut self, unit: U) -> Result<(), NoSpace> {
        if self.granted == 0 {
            return Err(NoSpace { needed: 1, free: 0 });
        }
        self.buf[self.len] = unit;
        self.len += 1;
        self.granted -= 1;
        Ok(())
    }

    #[inline]
    fn push_slice(&mut self, units: &[U]) -> Result<(), NoSpace> {
        if units.len() > self.granted {
            return Err(NoSpace { needed: units.len(), free: self.granted });
        }
        self.buf[self.len..self.len + units.len()].copy_from_slice(units);
        self.len += units.len();
        self.granted -= units.len();
        Ok(())
    }
}
