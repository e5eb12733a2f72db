//! Evergreen PFP/ME image validation on synthetic inputs.

use baregpu_firmware::FirmwareError;
use baregpu_firmware::amd::evergreen::{EvergreenUcode, MeMicrocode, PfpMicrocode};

#[test]
fn malformed_images_are_rejected() {
    let c = &EvergreenUcode::CYPRESS;
    assert_eq!(PfpMicrocode::parse(&[], c), Err(FirmwareError::Empty));
    assert_eq!(MeMicrocode::parse(&[], c), Err(FirmwareError::Empty));
    assert_eq!(
        PfpMicrocode::parse(&[0; 3], c),
        Err(FirmwareError::TruncatedEntry { len: 3, entry_bytes: 4 })
    );
    assert_eq!(
        PfpMicrocode::parse(&[0; 4479], c),
        Err(FirmwareError::TruncatedEntry { len: 4479, entry_bytes: 4 })
    );
    assert_eq!(
        PfpMicrocode::parse(&[0; 4484], c),
        Err(FirmwareError::WrongSize { expected: 4480, found: 4484 })
    );
    assert_eq!(
        MeMicrocode::parse(&[0; 5500], c),
        Err(FirmwareError::WrongSize { expected: 5504, found: 5500 })
    );
}

#[test]
fn words_are_big_endian() {
    let mut bytes = vec![0u8; 1120 * 4];
    bytes[..8].copy_from_slice(&[0x12, 0x34, 0x56, 0x78, 0xff, 0xff, 0xff, 0xff]);
    let pfp = PfpMicrocode::parse(&bytes, &EvergreenUcode::CYPRESS).unwrap();
    assert_eq!(pfp.word(0), Some(0x1234_5678));
    assert_eq!(pfp.word(1), Some(0xffff_ffff));
    assert_eq!(pfp.chip().chip(), "CYPRESS");
    assert_eq!(pfp.chip().pfp_file(), "radeon/CYPRESS_pfp.bin");
}

#[test]
fn descriptor_sizes_match_hardware_facts() {
    let c = EvergreenUcode::CYPRESS;
    assert_eq!((c.pfp_dwords(), c.me_dwords()), (1120, 1376));
    let k = EvergreenUcode::CAYMAN;
    assert_eq!((k.pfp_dwords(), k.me_dwords()), (2176, 2176));
    assert_eq!(k.me_file(), "radeon/CAYMAN_me.bin");
}

// --- RLC, sets and upload -----------------------------------------------------------------

use std::cell::RefCell;

use baregpu_firmware::amd::evergreen::{
    self, EvergreenFirmware, Image, ImageError, LoadError, RlcMicrocode, UploadReport,
};
use baregpu_hal::{Register, RegisterIo};
use baregpu_regs::evergreen::Chipset;
use baregpu_regs::evergreen::cp::{
    CP_ME_CNTL, CP_ME_RAM_DATA, CP_ME_RAM_RADDR, CP_ME_RAM_WADDR, CP_PFP_UCODE_ADDR,
    CP_PFP_UCODE_DATA,
};
use baregpu_regs::evergreen::rlc::{RLC_CNTL, RLC_UCODE_ADDR, RLC_UCODE_DATA};

const PFP_ADDR: usize = <CP_PFP_UCODE_ADDR as Register>::OFFSET;
const PFP_DATA: usize = <CP_PFP_UCODE_DATA as Register>::OFFSET;
const ME_WADDR: usize = <CP_ME_RAM_WADDR as Register>::OFFSET;
const ME_RADDR: usize = <CP_ME_RAM_RADDR as Register>::OFFSET;
const ME_DATA: usize = <CP_ME_RAM_DATA as Register>::OFFSET;
const RLC_ADDR: usize = <RLC_UCODE_ADDR as Register>::OFFSET;
const RLC_DATA: usize = <RLC_UCODE_DATA as Register>::OFFSET;
const ME_CNTL: usize = <CP_ME_CNTL as Register>::OFFSET;
const RLC_CNTL_OFF: usize = <RLC_CNTL as Register>::OFFSET;

/// One RAM behind an address register and an auto-incrementing data port (Linux radeon
/// evergreen.c writes the address once, then every word through the data port).
#[derive(Default)]
struct Ram {
    words: Vec<u32>,
    addr: usize,
}

impl Ram {
    fn new(len: usize) -> Self {
        Ram { words: (0..len as u32).map(|i| 0xdead_0000 | i).collect(), addr: 0 }
    }
    fn write(&mut self, v: u32) {
        if let Some(w) = self.words.get_mut(self.addr) {
            *w = v;
        }
        self.addr += 1;
    }
    fn read(&mut self) -> u32 {
        let v = self.words.get(self.addr).copied().unwrap_or(0);
        self.addr += 1;
        v
    }
}

#[derive(Default)]
struct Ports {
    pfp: Ram,
    me: Ram,
    rlc: Ram,
    me_cntl: u32,
    rlc_cntl: u32,
    writes: usize,
    reads: usize,
    /// Every read answers all-ones (the device left the bus).
    gone: bool,
    /// (image, index): that word reads back with bit 0 flipped.
    flip: Option<(Image, usize)>,
    /// Writes seen while the engines were not halted.
    unhalted_writes: usize,
}

struct FakeCp(RefCell<Ports>);

impl FakeCp {
    fn new(chip: &EvergreenUcode) -> Self {
        FakeCp(RefCell::new(Ports {
            pfp: Ram::new(chip.pfp_dwords()),
            me: Ram::new(chip.me_dwords()),
            rlc: Ram::new(chip.rlc_dwords()),
            rlc_cntl: 1,
            ..Ports::default()
        }))
    }
}

impl RegisterIo for FakeCp {
    fn read32(&self, offset: usize) -> u32 {
        let mut p = self.0.borrow_mut();
        p.reads += 1;
        if p.gone {
            return u32::MAX;
        }
        let (index, v, image) = match offset {
            PFP_DATA => (p.pfp.addr, p.pfp.read(), Image::Pfp),
            ME_DATA => (p.me.addr, p.me.read(), Image::Me),
            RLC_DATA => (p.rlc.addr, p.rlc.read(), Image::Rlc),
            ME_CNTL => return p.me_cntl,
            _ => panic!("unexpected read of {offset:#x}"),
        };
        if p.flip == Some((image, index)) { v ^ 1 } else { v }
    }
    fn write32(&self, offset: usize, value: u32) {
        let mut p = self.0.borrow_mut();
        p.writes += 1;
        let halted = CP_ME_CNTL::from_raw(p.me_cntl);
        if ![ME_CNTL, RLC_CNTL_OFF].contains(&offset)
            && !(halted.me_halt() && halted.pfp_halt() && p.rlc_cntl == 0)
        {
            p.unhalted_writes += 1;
        }
        match offset {
            ME_CNTL => p.me_cntl = value,
            RLC_CNTL_OFF => p.rlc_cntl = value,
            PFP_ADDR => p.pfp.addr = value as usize,
            PFP_DATA => p.pfp.write(value),
            ME_WADDR | ME_RADDR => p.me.addr = value as usize,
            ME_DATA => p.me.write(value),
            RLC_ADDR => p.rlc.addr = value as usize,
            RLC_DATA => p.rlc.write(value),
            _ => panic!("unexpected write of {offset:#x}"),
        }
    }
}

/// A set of distinct pseudo-random images of the right sizes for `chip`.
fn images(chip: &EvergreenUcode) -> [Vec<u8>; 3] {
    let image = |n: usize, seed: u32| -> Vec<u8> {
        (0..n as u32).flat_map(|i| (i.wrapping_mul(0x9e37_79b9) ^ seed).to_be_bytes()).collect()
    };
    [
        image(chip.pfp_dwords(), 0x1111_0000),
        image(chip.me_dwords(), 0x2222_0000),
        image(chip.rlc_dwords(), 0x3333_0000),
    ]
}

#[test]
fn rlc_sizes_follow_linux_radeon() {
    assert_eq!(EvergreenUcode::CYPRESS.rlc_dwords(), 768);
    assert_eq!(EvergreenUcode::CAYMAN.rlc_dwords(), 1024);
    assert_eq!(EvergreenUcode::CAYMAN.rlc_file(), "radeon/CAYMAN_rlc.bin");
    assert_eq!(EvergreenUcode::of(Chipset::CYPRESS), Some(&EvergreenUcode::CYPRESS));
    assert_eq!(EvergreenUcode::of(Chipset::CAYMAN), Some(&EvergreenUcode::CAYMAN));
    assert_eq!(
        RlcMicrocode::parse(&[0; 768 * 4], &EvergreenUcode::CAYMAN),
        Err(FirmwareError::WrongSize { expected: 4096, found: 3072 })
    );
}

#[test]
fn a_set_names_the_image_that_failed() {
    let c = &EvergreenUcode::CYPRESS;
    let [pfp, me, rlc] = images(c);
    assert!(EvergreenFirmware::parse(c, &pfp, &me, &rlc).is_ok());
    assert_eq!(
        EvergreenFirmware::parse(c, &pfp, &me, &rlc[4..]),
        Err(ImageError::new(Image::Rlc, FirmwareError::WrongSize { expected: 3072, found: 3068 }))
    );
    // The Cypress set is not a Cayman set.
    assert_eq!(
        EvergreenFirmware::parse(&EvergreenUcode::CAYMAN, &pfp, &me, &rlc).map_err(|e| e.image),
        Err(Image::Pfp)
    );
}

#[test]
fn upload_writes_address_plus_one_per_word_and_reads_back_on_both_chips() {
    for chip in [&EvergreenUcode::CYPRESS, &EvergreenUcode::CAYMAN] {
        let [pfp, me, rlc] = images(chip);
        let fw = EvergreenFirmware::parse(chip, &pfp, &me, &rlc).unwrap();
        let dev = FakeCp::new(chip);
        let report = evergreen::upload(&dev, &fw).expect("upload");
        assert_eq!(
            report,
            UploadReport {
                pfp_writes: 1 + chip.pfp_dwords(),
                me_writes: 1 + chip.me_dwords(),
                rlc_writes: 1 + chip.rlc_dwords(),
                verify_writes: 3,
                reads: 1 + chip.pfp_dwords() + chip.me_dwords() + chip.rlc_dwords(),
            }
        );
        let p = dev.0.borrow();
        assert_eq!(p.writes, 2 + 3 + 3 + chip.pfp_dwords() + chip.me_dwords() + chip.rlc_dwords());
        assert_eq!(p.pfp.words, fw.pfp.words().collect::<Vec<_>>());
        assert_eq!(p.me.words, fw.me.words().collect::<Vec<_>>());
        assert_eq!(p.rlc.words, fw.rlc.words().collect::<Vec<_>>());
        // Halted before the first RAM write, and left halted for the driver's ME_INITIALIZE.
        assert_eq!(p.unhalted_writes, 0);
        let cntl = CP_ME_CNTL::from_raw(p.me_cntl);
        assert!(cntl.me_halt() && cntl.pfp_halt());
    }
}

#[test]
fn a_corrupted_word_is_reported_with_its_image_and_index() {
    let chip = &EvergreenUcode::CAYMAN;
    let [pfp, me, rlc] = images(chip);
    let fw = EvergreenFirmware::parse(chip, &pfp, &me, &rlc).unwrap();
    for (image, index) in [(Image::Pfp, 0), (Image::Me, 2175), (Image::Rlc, 700)] {
        let dev = FakeCp::new(chip);
        dev.0.borrow_mut().flip = Some((image, index));
        let expected = match image {
            Image::Pfp => fw.pfp.word(index),
            Image::Me => fw.me.word(index),
            Image::Rlc => fw.rlc.word(index),
        }
        .unwrap();
        assert_eq!(
            evergreen::upload(&dev, &fw),
            Err(LoadError::Readback { image, index, expected, found: expected ^ 1 })
        );
    }
}

#[test]
fn a_device_that_reads_all_ones_gets_no_write() {
    let chip = &EvergreenUcode::CYPRESS;
    let [pfp, me, rlc] = images(chip);
    let fw = EvergreenFirmware::parse(chip, &pfp, &me, &rlc).unwrap();
    let dev = FakeCp::new(chip);
    dev.0.borrow_mut().gone = true;
    assert_eq!(evergreen::upload(&dev, &fw), Err(LoadError::DeviceGone { image: None }));
    assert_eq!(dev.0.borrow().writes, 0);
}

#[test]
fn a_device_lost_during_read_back_is_gone_not_corrupt() {
    struct LosesBusAtReadback(FakeCp);
    impl RegisterIo for LosesBusAtReadback {
        fn read32(&self, offset: usize) -> u32 {
            // The liveness read comes first, the data-port reads after every write.
            if offset != ME_CNTL {
                self.0.0.borrow_mut().gone = true;
            }
            self.0.read32(offset)
        }
        fn write32(&self, offset: usize, value: u32) {
            self.0.write32(offset, value)
        }
    }
    let chip = &EvergreenUcode::CYPRESS;
    let [pfp, me, rlc] = images(chip);
    let fw = EvergreenFirmware::parse(chip, &pfp, &me, &rlc).unwrap();
    let dev = LosesBusAtReadback(FakeCp::new(chip));
    assert_eq!(
        evergreen::upload(&dev, &fw),
        Err(LoadError::DeviceGone { image: Some(Image::Pfp) })
    );
}
