//! The falcon loader against a fake falcon written from nvidia-hardware-envytools §2.10: the
//! code port (§2.10.7: `CODE_INDEX` at 0x180 with bits 2-15 the address, bit 24 write and bit
//! 25 read auto-increment; `CODE` at 0x184 stores a word, and a word 0 write samples
//! `CODE_VIRT` at 0x188 as the page's virtual index, marking the page busy until its word
//! 0x3f), the data ports (§2.10.4: `DATA_INDEX` 0x1c0 + 8i, `DATA` 0x1c4 + 8i), and `UC_CAPS`
//! (0x108: code pages in bits 0-8, data size >> 8 in bits 9-16). Images come from the
//! project's falcon assembler. Every write is counted: the loader writes the floor, and a bad
//! image writes nothing.

use std::cell::{Cell, RefCell};

use baregpu_falcon_asm::assemble;
use baregpu_firmware::falcon::{
    FalconImage, FalconImageError, FalconLoadError, FalconLoader, PAGE_WORDS, Segment,
};
use baregpu_hal::RegisterIo;
use baregpu_regs::nvidia::falcon::{Pcopy0, Pdaemon};

const PDAEMON: usize = 0x10a000;
const PCOPY: usize = 0x104000;

/// One falcon's host-visible state.
struct Falcon {
    base: usize,
    caps: u32,
    code: RefCell<Vec<u32>>,
    data: RefCell<Vec<u32>>,
    /// Per physical page: (virtual index, usable) as the TLB holds it.
    tlb: RefCell<Vec<(u32, bool)>>,
    code_index: Cell<u32>,
    code_virt: Cell<u32>,
    data_index: Cell<u32>,
    writes: Cell<usize>,
    /// Make word `n` of the code read back wrong.
    corrupt: Cell<Option<usize>>,
    started: Cell<bool>,
}

impl Falcon {
    fn new(base: usize, code_pages: u32, data_bytes: u32) -> Self {
        Falcon {
            base,
            caps: code_pages | (data_bytes >> 8) << 9,
            code: RefCell::new(vec![0; code_pages as usize * 64]),
            data: RefCell::new(vec![0; data_bytes as usize / 4]),
            tlb: RefCell::new(vec![(0, false); code_pages as usize]),
            code_index: Cell::new(0),
            code_virt: Cell::new(0),
            data_index: Cell::new(0),
            writes: Cell::new(0),
            corrupt: Cell::new(None),
            started: Cell::new(false),
        }
    }

    fn advance(index: &Cell<u32>, flag_bit: u32) {
        let v = index.get();
        if v & 1 << flag_bit != 0 {
            index.set(v & !0xfffc | (v + 4) & 0xfffc);
        }
    }
}

impl RegisterIo for Falcon {
    fn read32(&self, offset: usize) -> u32 {
        match offset - self.base {
            0x108 => self.caps,
            0x184 => {
                let addr = (self.code_index.get() & 0xfffc) as usize;
                let mut w = self.code.borrow()[addr / 4];
                if self.corrupt.get() == Some(addr / 4) {
                    w ^= 1;
                }
                Self::advance(&self.code_index, 25);
                w
            }
            0x1c4 => {
                let w = self.data.borrow()[(self.data_index.get() & 0xfffc) as usize / 4];
                Self::advance(&self.data_index, 25);
                w
            }
            other => panic!("read of falcon register {other:#x}"),
        }
    }

    fn write32(&self, offset: usize, value: u32) {
        self.writes.set(self.writes.get() + 1);
        match offset - self.base {
            0x180 => self.code_index.set(value),
            0x188 => self.code_virt.set(value),
            0x184 => {
                let addr = (self.code_index.get() & 0xfffc) as usize;
                let page = addr >> 8;
                if addr & 0xfc == 0 {
                    self.tlb.borrow_mut()[page] = (self.code_virt.get(), false); // busy
                }
                self.code.borrow_mut()[addr / 4] = value;
                if addr & 0xfc == 0xfc {
                    self.tlb.borrow_mut()[page].1 = true; // complete: usable
                }
                Self::advance(&self.code_index, 24);
            }
            0x1c0 => self.data_index.set(value),
            0x1c4 => {
                self.data.borrow_mut()[(self.data_index.get() & 0xfffc) as usize / 4] = value;
                Self::advance(&self.data_index, 24);
            }
            0x100 => self.started.set(true), // UC_CTRL
            other => panic!("write of falcon register {other:#x}"),
        }
    }
}

/// BAR0 routing each falcon's window to its fake.
struct Bar0<'a>(&'a [&'a Falcon]);

impl RegisterIo for Bar0<'_> {
    fn read32(&self, offset: usize) -> u32 {
        self.falcon(offset).read32(offset)
    }
    fn write32(&self, offset: usize, value: u32) {
        self.falcon(offset).write32(offset, value)
    }
}

impl Bar0<'_> {
    fn falcon(&self, offset: usize) -> &Falcon {
        self.0.iter().find(|f| (f.base..f.base + 0x1000).contains(&offset)).expect("a falcon")
    }
}

/// A program padded to whole pages: read SCRATCH0, add 1, write SCRATCH1, exit.
fn program(pages: usize) -> Vec<u8> {
    let mut code = vec![0u8; pages * 0x100];
    let n = assemble(
        "mov $r1, 0x1000\niord $r2, I[$r1 + 0]\nadd b32 $r2, 1\niowr I[$r1 + 0x100], $r2\nexit\n",
        &mut code,
    )
    .unwrap();
    assert!(n < 0x100);
    // Fill the rest with recognisable words so the read-back compares something.
    for (i, b) in code.iter_mut().enumerate().skip(n) {
        *b = i as u8;
    }
    code
}

#[test]
fn an_upload_writes_the_floor_and_reads_everything_back() {
    let pdaemon = Falcon::new(PDAEMON, 0x60, 0x6000);
    let engines = [&pdaemon];
    let bar0 = Bar0(&engines);
    let code = program(3);
    let data: Vec<u8> = (0..40u8).collect();
    let image = FalconImage::new(&code, 0x20, &data, 0x2000).unwrap();
    let report = FalconLoader::<_, Pdaemon>::new(&bar0).upload(&image).unwrap();
    // One CODE_INDEX, one CODE_VIRT per page, one CODE per word; one DATA_INDEX, one DATA per
    // word.
    let floor = 1 + 3 + 3 * PAGE_WORDS + 1 + 10;
    assert_eq!(report.load_writes, floor);
    assert_eq!(report.verify_writes, 2);
    assert_eq!(pdaemon.writes.get(), floor + 2);
    assert_eq!(report.reads, 1 + 3 * PAGE_WORDS + 10);
    assert_eq!((report.code_pages, report.data_words), (3, 10));
    let words: Vec<u32> =
        code.chunks(4).map(|w| u32::from_le_bytes(w.try_into().unwrap())).collect();
    assert_eq!(&pdaemon.code.borrow()[..words.len()], &words[..]);
    assert_eq!(pdaemon.data.borrow()[1], u32::from_le_bytes([4, 5, 6, 7]));
    // Each page carries its virtual index and is complete.
    assert_eq!(&pdaemon.tlb.borrow()[..4], &[(0x20, true), (0x21, true), (0x22, true), (0, false)]);
    assert!(!pdaemon.started.get(), "the loader never starts the falcon");
}

#[test]
fn each_engine_is_reached_through_its_instance() {
    let pdaemon = Falcon::new(PDAEMON, 0x60, 0x6000);
    let pcopy = Falcon::new(PCOPY, 0x10, 0x1000);
    let engines = [&pdaemon, &pcopy];
    let bar0 = Bar0(&engines);
    let code = program(1);
    let image = FalconImage::new(&code, 0, &[], 0).unwrap();
    FalconLoader::<_, Pcopy0>::new(&bar0).upload(&image).unwrap();
    assert_eq!((pcopy.writes.get(), pdaemon.writes.get()), (1 + 1 + PAGE_WORDS + 1, 0));
    let caps = FalconLoader::<_, Pcopy0>::new(&bar0).caps().unwrap();
    assert_eq!((caps.code_bytes, caps.data_bytes), (0x1000, 0x1000));
}

#[test]
fn images_the_engine_cannot_hold_write_nothing() {
    let pcopy = Falcon::new(PCOPY, 2, 0x100);
    let engines = [&pcopy];
    let bar0 = Bar0(&engines);
    let loader = FalconLoader::<_, Pcopy0>::new(&bar0);
    let code = program(3);
    let image = FalconImage::new(&code, 0, &[], 0).unwrap();
    assert_eq!(
        loader.upload(&image),
        Err(FalconLoadError::TooLarge { segment: Segment::Code, bytes: 0x300, capacity: 0x200 })
    );
    let data = [0u8; 0x104];
    let image = FalconImage::new(&code[..0x100], 0, &data, 0).unwrap();
    assert_eq!(
        loader.upload(&image),
        Err(FalconLoadError::TooLarge { segment: Segment::Data, bytes: 0x104, capacity: 0x100 })
    );
    assert_eq!(pcopy.writes.get(), 0);
    // Images that are not falcon images at all never reach a loader.
    assert_eq!(FalconImage::new(&[], 0, &[], 0), Err(FalconImageError::EmptyCode));
    assert_eq!(
        FalconImage::new(&code[..0xfc], 0, &[], 0),
        Err(FalconImageError::CodeNotPages { bytes: 0xfc })
    );
    assert_eq!(
        FalconImage::new(&code[..0x100], 0, &[1, 2], 0),
        Err(FalconImageError::DataNotWords { bytes: 2 })
    );
    assert_eq!(
        FalconImage::new(&code, 0xfffe, &[], 0xfffe00),
        Err(FalconImageError::VirtualPagesOutOfRange { first: 0xfffe, pages: 3 })
    );
    assert_eq!(
        FalconImage::new(&code, 1, &[], 0x400),
        Err(FalconImageError::EntryOutsideCode { entry: 0x400, start: 0x100, end: 0x400 })
    );
}

#[test]
fn a_word_that_reads_back_wrong_is_a_typed_error() {
    let pdaemon = Falcon::new(PDAEMON, 0x60, 0x6000);
    pdaemon.corrupt.set(Some(70));
    let engines = [&pdaemon];
    let bar0 = Bar0(&engines);
    let code = program(2);
    let image = FalconImage::new(&code, 0, &[], 0).unwrap();
    let expected = u32::from_le_bytes(code[280..284].try_into().unwrap());
    assert_eq!(
        FalconLoader::<_, Pdaemon>::new(&bar0).upload(&image),
        Err(FalconLoadError::Readback {
            segment: Segment::Code,
            offset: 280,
            expected,
            found: expected ^ 1
        })
    );
}

#[test]
fn an_engine_that_reads_all_ones_is_gone_and_gets_no_write() {
    let gone = Falcon::new(PDAEMON, 0x60, 0x6000);
    let gone = Falcon { caps: u32::MAX, ..gone };
    let engines = [&gone];
    let bar0 = Bar0(&engines);
    let code = program(1);
    let image = FalconImage::new(&code, 0, &[], 0).unwrap();
    assert_eq!(
        FalconLoader::<_, Pdaemon>::new(&bar0).upload(&image),
        Err(FalconLoadError::DeviceGone)
    );
    assert_eq!(gone.writes.get(), 0);
}
