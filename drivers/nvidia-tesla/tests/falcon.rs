//! Falcon engine control against the scripted register file: PMC enable, upload through the
//! loader while stopped, the start sequence, halt detection, the mailbox and the interrupt
//! lines, at the offsets of nvidia-hardware-envytools §2.10 (PCOPY at 0x104000, PDAEMON at
//! 0x10a000, envytools rnndb).

mod common;

use std::time::Duration;

use baregpu_nvidia_tesla::firmware::falcon::FalconImage;
use baregpu_nvidia_tesla::regs::falcon::{Pcopy0, Pdaemon};
use baregpu_nvidia_tesla::{FalconError, Tesla};
use common::*;

const PCOPY: usize = 0x10_4000;
const PDAEMON: usize = 0x10_a000;
const INTR_CLEAR: usize = 0x004;
const INTR: usize = 0x008;
const INTR_EN_SET: usize = 0x010;
const INTR_ROUTING: usize = 0x01c;
const SCRATCH0: usize = 0x040;
const SCRATCH1: usize = 0x044;
const UC_CTRL: usize = 0x100;
const UC_ENTRY: usize = 0x104;
const UC_CAPS: usize = 0x108;
const HALTED: u32 = 1 << 4;
const EXIT: u32 = 1 << 4;

fn gpu(fake: &Fake) -> Tesla<&Fake, StepClock> {
    let gpu = Tesla::init(fake, StepClock::default(), config()).unwrap();
    // A stopped PCOPY with 0x10 code pages and 0x10 x 0x100 bytes of data (UC_CAPS).
    fake.set(PCOPY + UC_CTRL, HALTED);
    fake.set(PCOPY + UC_CAPS, 0x10 | 0x10 << 9);
    gpu
}

fn since(fake: &Fake, start: usize) -> Vec<(usize, u32)> {
    fake.writes.borrow()[start..].to_vec()
}

#[test]
fn enabling_pcopy_sets_its_pmc_bit_and_keeps_the_others_pdaemon_has_none() {
    let fake = Fake::gt215();
    let gpu = gpu(&fake);
    let start = fake.writes.borrow().len();
    gpu.falcon::<Pcopy0>().unwrap().enable().unwrap();
    assert_eq!(since(&fake, start), [(PMC_ENABLE, 1 << 13 | 1 << 12 | 1 << 8)]);
    let start = fake.writes.borrow().len();
    gpu.falcon::<Pdaemon>().unwrap().enable().unwrap();
    assert!(since(&fake, start).is_empty(), "GT215's PDAEMON has no PMC enable bit (§2.5.2)");
}

#[test]
fn boot_uploads_at_the_floor_then_sets_the_entry_and_starts() {
    let fake = Fake::gt215();
    let gpu = gpu(&fake);
    let code = [0u8; 0x200];
    let data = [0u8; 16];
    let image = FalconImage::new(&code, 0, &data, 0x10).unwrap();
    let start = fake.writes.borrow().len();
    let report = gpu.falcon::<Pcopy0>().unwrap().boot(&image).unwrap();
    // CODE_INDEX, 2 x (CODE_VIRT + 64 CODE), DATA_INDEX, 4 DATA.
    assert_eq!(report.load_writes, 1 + 2 + 128 + 1 + 4);
    let w = since(&fake, start);
    let tail: Vec<_> = w[w.len() - 3..].to_vec();
    assert_eq!(tail, [(PCOPY + INTR_CLEAR, EXIT), (PCOPY + UC_ENTRY, 0x10), (PCOPY + UC_CTRL, 2)]);
}

#[test]
fn a_running_falcon_is_neither_loaded_nor_started() {
    let fake = Fake::gt215();
    let gpu = gpu(&fake);
    fake.set(PCOPY + UC_CTRL, 0);
    let code = [0u8; 0x100];
    let image = FalconImage::new(&code, 0, &[], 0).unwrap();
    let start = fake.writes.borrow().len();
    let f = gpu.falcon::<Pcopy0>().unwrap();
    assert_eq!(f.load(&image).unwrap_err(), FalconError::Running);
    assert_eq!(f.start(0).unwrap_err(), FalconError::Running);
    assert!(since(&fake, start).is_empty());
}

#[test]
fn halt_is_the_exit_line_and_uc_ctrl_halted_bounded_otherwise() {
    let fake = Fake::gt215();
    let gpu = gpu(&fake);
    let f = gpu.falcon::<Pcopy0>().unwrap();
    f.start(0).unwrap();
    // Still running: a timeout.
    let e = f.wait_halted(Duration::from_millis(1)).unwrap_err();
    assert!(matches!(e, FalconError::NotHalted(_)), "{e:?}");
    // HALTED alone (before the program ran) is not an exit.
    fake.set(PCOPY + UC_CTRL, HALTED);
    assert!(f.wait_halted(Duration::from_millis(1)).is_err());
    fake.set(PCOPY + INTR, EXIT);
    f.wait_halted(Duration::from_millis(1)).unwrap();
    fake.gone.set(true);
    assert!(matches!(f.wait_halted(Duration::from_millis(1)), Err(FalconError::DeviceGone(_))));
}

#[test]
fn the_mailbox_is_scratch0_in_and_scratch1_out() {
    let fake = Fake::gt215();
    let gpu = gpu(&fake);
    let f = gpu.falcon::<Pdaemon>().unwrap();
    f.write_mailbox(41);
    assert_eq!(fake.writes.borrow().last(), Some(&(PDAEMON + SCRATCH0, 41)));
    fake.set(PDAEMON + SCRATCH1, 42);
    assert_eq!(f.read_mailbox().unwrap(), 42);
}

#[test]
fn exit_and_swgen_lines_are_routed_to_pmc_enabled_and_acknowledged() {
    let fake = Fake::gt215();
    let gpu = gpu(&fake);
    let f = gpu.falcon::<Pcopy0>().unwrap();
    fake.set(PCOPY + INTR_ROUTING, 1 << 20 | 1 << 0);
    f.enable_interrupts().unwrap();
    let lines = 1 << 4 | 1 << 6 | 1 << 7;
    // Selector 1 (bit 0 set, bit 1 clear) for lines 4, 6, 7; the other lines as they were.
    assert!(fake.writes.borrow().contains(&(PCOPY + INTR_ROUTING, 1 | lines)));
    let w = fake.writes.borrow().clone();
    assert_eq!(w[w.len() - 2], (PCOPY + INTR_EN_SET, lines));
    assert_eq!(w[w.len() - 1], (PMC_INTR_MASK, 1 << 22), "PCOPY's PMC line let through");
    fake.set(PCOPY + INTR, EXIT | 1 << 6);
    let irq = f.handle_interrupts().unwrap();
    assert!(irq.exit && irq.swgen0 && !irq.swgen1);
    assert_eq!(fake.writes.borrow().last(), Some(&(PCOPY + INTR_CLEAR, EXIT | 1 << 6)));
}
