//! The budget sink and the all-or-nothing protocol, over a slice sink.

use baregpu_gpu::submit::{Batch, Budget, submit};
use baregpu_gpu::{DeviceGone, Overrun};
use baregpu_ring::pm4::{CommandSink, SliceSink};

#[test]
fn nothing_past_the_reservation_is_written() {
    let mut buf = [0u32; 8];
    let mut sink = Budget::new(SliceSink::new(&mut buf), 3);
    sink.write_packet(1, &[2]).unwrap();
    assert!(sink.write_packet(3, &[4]).is_err(), "2 dwords do not fit in the 1 left");
    assert_eq!(sink.overrun(), Some(Overrun { reserved: 3, attempted: 4 }));
    sink.reserve(1).unwrap();
    sink.push(5).unwrap();
    assert!(sink.push(6).is_err());
    assert_eq!(sink.inner().written(), &[1, 2, 5]);
}

#[derive(Debug, PartialEq)]
enum Err {
    Overrun(Overrun),
    Gone,
    Closure,
}
impl From<Overrun> for Err {
    fn from(o: Overrun) -> Self {
        Err::Overrun(o)
    }
}
impl From<DeviceGone> for Err {
    fn from(_: DeviceGone) -> Self {
        Err::Gone
    }
}

/// A batch that records the protocol's calls.
#[derive(Default)]
struct Recorder {
    opened: Option<usize>,
    budget: Option<Budget<Log>>,
    discarded: bool,
    doorbells: u32,
}
impl Batch for Recorder {
    type Error = Err;
    fn open(&mut self, units: usize) -> Result<(), Err> {
        self.opened = Some(units);
        self.budget = Some(Budget::new(Log(Vec::new()), units));
        Ok(())
    }
    fn overrun(&self) -> Option<Overrun> {
        self.budget.as_ref().and_then(Budget::overrun)
    }
    fn discard(&mut self) {
        self.discarded = true;
    }
    fn commit(&mut self) -> Result<(), Err> {
        self.doorbells += 1;
        Ok(())
    }
}
/// A growing sink.
struct Log(Vec<u32>);
impl CommandSink for Log {
    fn reserve(&mut self, _: usize) -> Result<(), baregpu_ring::pm4::NoSpace> {
        Ok(())
    }
    fn push(&mut self, unit: u32) -> Result<(), baregpu_ring::pm4::NoSpace> {
        self.0.push(unit);
        Ok(())
    }
}

#[test]
fn a_failing_closure_is_discarded_without_a_doorbell() {
    let mut b = Recorder::default();
    let r: Result<(), Err> = submit(&mut b, 4, |_| Err(Err::Closure));
    assert_eq!(r, Err(Err::Closure));
    assert!(b.discarded);
    assert_eq!(b.doorbells, 0);
}

#[test]
fn an_overrun_fails_the_submission_even_when_the_closure_swallows_it() {
    let mut b = Recorder::default();
    let r: Result<(), Err> = submit(&mut b, 2, |b| {
        let _ignored = b.budget.as_mut().unwrap().push_slice(&[1, 2, 3]);
        Ok(())
    });
    assert_eq!(r, Err(Err::Overrun(Overrun { reserved: 2, attempted: 3 })));
    assert!(b.discarded);
    assert_eq!(b.doorbells, 0);
}

#[test]
fn a_good_closure_commits_once() {
    let mut b = Recorder::default();
    let r: Result<u8, Err> = submit(&mut b, 2, |b| {
        b.budget.as_mut().unwrap().push_slice(&[1, 2]).unwrap();
        Ok(7)
    });
    assert_eq!(r, Ok(7));
    assert!(!b.discarded);
    assert_eq!(b.doorbells, 1);
}
