#![allow(dead_code)]
//! A bus recorder: a `RegisterIo` that stores values and logs every access in order, so tests
//! can assert the exact offsets and values a sequence of typed accesses produces.

use baregpu_hal::RegisterIo;
use std::cell::RefCell;
use std::collections::BTreeMap;

/// One bus access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read(usize, u32),
    Write(usize, u32),
}

#[derive(Default)]
pub struct Recorder {
    pub regs: RefCell<BTreeMap<usize, u32>>,
    pub log: RefCell<Vec<Access>>,
}

impl Recorder {
    pub fn with(values: &[(usize, u32)]) -> Self {
        let r = Recorder::default();
        r.regs.borrow_mut().extend(values.iter().copied());
        r
    }
    pub fn writes(&self) -> Vec<(usize, u32)> {
        self.log
            .borrow()
            .iter()
            .filter_map(|a| match *a {
                Access::Write(o, v) => Some((o, v)),
                Access::Read(..) => None,
            })
            .collect()
    }
}

impl RegisterIo for Recorder {
    fn read32(&self, offset: usize) -> u32 {
        let v = self.regs.borrow().get(&offset).copied().unwrap_or(0);
        self.log.borrow_mut().push(Access::Read(offset, v));
        v
    }
    fn write32(&self, offset: usize, value: u32) {
        self.regs.borrow_mut().insert(offset, value);
        self.log.borrow_mut().push(Access::Write(offset, value));
    }
}
