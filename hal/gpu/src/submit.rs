//! Submission, all or nothing, written once over a small per-family trait ([`Batch`]):
//! reserve (with bounded back-pressure), build, pad, commit, one doorbell.
//!
//! - The closure writes through a sink held to the reservation ([`Budget`]): a write past it
//!   fails with `NoSpace`, writes nothing, and the submission fails with [`Overrun`] even if
//!   the closure swallowed the error.
//! - A closure that fails (or overruns) leaves nothing in the ring: the family's
//!   [`Batch::discard`] moves the write pointer back to where the submission began and rolls
//!   the fence timeline back; no doorbell is rung, so the device never sees a dword of it.
//! - Only a whole, padded batch is published, with exactly one doorbell.

use baregpu_ring::stream::{CommandSink, NoSpace, StreamUnit};

use crate::error::{DeviceGone, Overrun};

/// A command sink held to a reservation: at most `reserved` units reach the inner sink; a write
/// that would pass it writes nothing, fails with [`NoSpace`] and is remembered as an
/// [`Overrun`].
#[derive(Debug)]
pub struct Budget<S> {
    sink: S,
    reserved: usize,
    left: usize,
    overrun: Option<Overrun>,
}

impl<S> Budget<S> {
    /// `sink`, allowed `reserved` more units.
    pub fn new(sink: S, reserved: usize) -> Self {
        Budget { sink, reserved, left: reserved, overrun: None }
    }

    /// Units still allowed.
    pub fn left(&self) -> usize {
        self.left
    }

    /// Units written so far.
    pub fn written(&self) -> usize {
        self.reserved - self.left
    }

    /// The first write that did not fit, if any.
    pub fn overrun(&self) -> Option<Overrun> {
        self.overrun
    }

    /// The inner sink (writes through it are not counted: the family's own padding).
    pub fn inner(&mut self) -> &mut S {
        &mut self.sink
    }

    fn allow(&mut self, units: usize) -> Result<(), NoSpace> {
        if units > self.left {
            let attempted = self.written() + units;
            self.overrun.get_or_insert(Overrun { reserved: self.reserved, attempted });
            return Err(NoSpace { needed: units, free: self.left });
        }
        Ok(())
    }
}

impl<U: StreamUnit, S: CommandSink<U>> CommandSink<U> for Budget<S> {
    fn reserve(&mut self, units: usize) -> Result<(), NoSpace> {
        self.allow(units)?;
        self.sink.reserve(units)
    }

    fn push(&mut self, unit: U) -> Result<(), NoSpace> {
        self.allow(1)?;
        self.sink.push(unit)?;
        self.left -= 1;
        Ok(())
    }

    fn write_packet(&mut self, header: U, body: &[U]) -> Result<(), NoSpace> {
        let n = 1 + body.len();
        self.allow(n)?;
        self.sink.write_packet(header, body)?;
        self.left -= n;
        Ok(())
    }

    fn push_slice(&mut self, units: &[U]) -> Result<(), NoSpace> {
        self.allow(units.len())?;
        self.sink.push_slice(units)?;
        self.left -= units.len();
        Ok(())
    }
}

/// What the submission protocol needs from a family: implemented by the family's submission
/// type, which holds the ring, the fence timeline and the registers for one batch.
pub trait Batch {
    /// The family's submission error.
    type Error: From<Overrun> + From<DeviceGone>;

    /// Check the device answers, wait (bounded by the family's submit timeout) until `units`
    /// plus the padding after them are free, remember where the batch begins (ring write
    /// pointer, [`Timeline::checkpoint`](crate::fence::Timeline::checkpoint)) and hold the
    /// closure to `units`. Writes nothing.
    fn open(&mut self, units: usize) -> Result<(), Self::Error>;

    /// The first write past the reservation, if any.
    fn overrun(&self) -> Option<Overrun>;

    /// Forget everything written since [`open`](Self::open): the ring's write pointer back to
    /// where the batch began, the fence timeline rolled back. No doorbell.
    fn discard(&mut self);

    /// Pad to the family's submission alignment and ring the doorbell once.
    fn commit(&mut self) -> Result<(), Self::Error>;
}

/// One batch, all or nothing: [`Batch::open`] `units`, let `build` write, then either
/// [`Batch::commit`] (one doorbell) or, when `build` failed or overran, [`Batch::discard`]
/// (nothing reaches the device). An overrun is reported as the family's
/// `From<`[`Overrun`]`>` error even when `build` swallowed the `NoSpace` it got.
pub fn submit<B: Batch, T, E: From<B::Error>>(
    batch: &mut B,
    units: usize,
    build: impl FnOnce(&mut B) -> Result<T, E>,
) -> Result<T, E> {
    batch.open(units)?;
    let built = build(batch);
    let failure = match (built, batch.overrun()) {
        (_, Some(overrun)) => E::from(B::Error::from(overrun)),
        (Err(e), None) => e,
        (Ok(value), None) => match batch.commit() {
            Ok(()) => return Ok(value),
            Err(e) => E::from(e),
        },
    };
    batch.discard();
    Err(failure)
}
