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

use core::borrow::BorrowMut;

use baregpu_ring::stream::{CommandSink, NoSpace, StreamUnit};

use crate::error::{DeviceGone, Overrun};

/// What a submission may still write: the reservation, what is left of it, the first write
/// that did not fit. Kept by a family's submission type and lent to a [`Budget`] per writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Allowance {
    reserved: usize,
    left: usize,
    overrun: Option<Overrun>,
}

impl Allowance {
    /// `reserved` units allowed.
    pub const fn new(reserved: usize) -> Self {
        Allowance { reserved, left: reserved, overrun: None }
    }

    /// Allow `units` more (an open-ended batch that reserved more ring space).
    pub fn grow(&mut self, units: usize) {
        self.reserved += units;
        self.left += units;
    }

    /// Units still allowed.
    pub const fn left(&self) -> usize {
        self.left
    }

    /// Units written so far.
    pub const fn written(&self) -> usize {
        self.reserved - self.left
    }

    /// The first write that did not fit, if any.
    pub const fn overrun(&self) -> Option<Overrun> {
        self.overrun
    }

    /// Take `units` of the allowance, or record the overrun and refuse.
    pub fn take(&mut self, units: usize) -> Result<(), NoSpace> {
        self.check(units)?;
        self.left -= units;
        Ok(())
    }

    /// Whether `units` fit, recording the overrun when they do not (takes nothing).
    pub fn check(&mut self, units: usize) -> Result<(), NoSpace> {
        if units > self.left {
            let attempted = self.written() + units;
            self.overrun.get_or_insert(Overrun { reserved: self.reserved, attempted });
            return Err(NoSpace { needed: units, free: self.left });
        }
        Ok(())
    }
}

/// A command sink held to an [`Allowance`]: at most what is left of it reaches the inner sink;
/// a write that would pass it writes nothing, fails with [`NoSpace`] and is remembered as an
/// [`Overrun`]. `A` is the allowance, owned (the default) or borrowed from the family's
/// submission (`&mut Allowance`).
#[derive(Debug)]
pub struct Budget<S, A: BorrowMut<Allowance> = Allowance> {
    sink: S,
    allowance: A,
}

impl<S> Budget<S> {
    /// `sink`, allowed `reserved` more units.
    pub fn new(sink: S, reserved: usize) -> Self {
        Budget { sink, allowance: Allowance::new(reserved) }
    }
}

impl<S, A: BorrowMut<Allowance>> Budget<S, A> {
    /// `sink`, held to `allowance`.
    pub fn with_allowance(sink: S, allowance: A) -> Self {
        Budget { sink, allowance }
    }

    /// Units still allowed.
    pub fn left(&self) -> usize {
        self.allowance.borrow().left()
    }

    /// Units written so far.
    pub fn written(&self) -> usize {
        self.allowance.borrow().written()
    }

    /// The first write that did not fit, if any.
    pub fn overrun(&self) -> Option<Overrun> {
        self.allowance.borrow().overrun()
    }

    /// The inner sink (writes through it are not counted: the family's own padding).
    pub fn inner(&mut self) -> &mut S {
        &mut self.sink
    }
}

impl<U: StreamUnit, S: CommandSink<U>, A: BorrowMut<Allowance>> CommandSink<U> for Budget<S, A> {
    fn reserve(&mut self, units: usize) -> Result<(), NoSpace> {
        self.allowance.borrow_mut().check(units)?;
        self.sink.reserve(units)
    }

    fn push(&mut self, unit: U) -> Result<(), NoSpace> {
        self.allowance.borrow_mut().check(1)?;
        self.sink.push(unit)?;
        self.allowance.borrow_mut().take(1)
    }

    fn write_packet(&mut self, header: U, body: &[U]) -> Result<(), NoSpace> {
        let n = 1 + body.len();
        self.allowance.borrow_mut().check(n)?;
        self.sink.write_packet(header, body)?;
        self.allowance.borrow_mut().take(n)
    }

    fn push_slice(&mut self, units: &[U]) -> Result<(), NoSpace> {
        self.allowance.borrow_mut().check(units.len())?;
        self.sink.push_slice(units)?;
        self.allowance.borrow_mut().take(units.len())
    }

    #[inline]
    fn write_parts(&mut self, prefix: &[U], body: &[U]) -> Result<(), NoSpace> {
        let n = prefix.len() + body.len();
        self.allowance.borrow_mut().check(n)?;
        // The inner sink's one-reservation path (the ring's store run).
        self.sink.write_parts(prefix, body)?;
        self.allowance.borrow_mut().take(n)
    }
}

/// What the submission protocol needs from a family: implemented by the family's submission
/// type, which holds the ring, the fence timeline and the registers for one batch.
pub trait Batch {
    /// The family's submission error.
    type Error: From<Overrun> + From<DeviceGone>;

    /// Wait (bounded by the family's submit timeout, reporting a gone device) until `units`
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
