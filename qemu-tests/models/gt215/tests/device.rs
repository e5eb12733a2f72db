//! The device around the engines: PCI identity and BARs (nvidia-hardware-envytools §2.4.1),
//! PMC (§2.4.1, §2.2.3; bits from envytools rnndb bus/pmc.xml), PTIMER (§2.10.11), VRAM and
//! the PMEM window, faults.

mod common;

use baregpu_hal::RegisterIo;
use baregpu_hal::pci;
use baregpu_regs::nvidia::{Chipset, pmc};
use common::*;
use gpu_device_model::BAR_WINDOW;
use gpu_device_model::GpuModel;
use gt215_model::{Faults, VRAM_SIZE};

const BOOT_0: usize = 0x0;
const PMC_INTR: usize = 0x100;
const PMC_ENABLE: usize = 0x200;
const PMC_INTR_MASK: usize = 0x640;
const PMEM_WINDOW: usize = 0x1700;
const PMEM: usize = 0x70_0000;
const TIME_LOW: usize = 0x9400;
const TIME_HIGH: usize = 0x9410;

#[test]
fn pci_identity_is_a_geforce_gt_240_with_the_documented_bars() {
    let gpu = gpu();
    let f = pci::probe(&gpu, gpu.pci_address()).unwrap();
    // §2.2.3: GT215 is 10de:0ca0-0cbf; 0x0ca3 is the GeForce GT 240.
    assert_eq!((f.vendor, f.device, f.class >> 16), (0x10de, 0x0ca3, 0x03));
    let identity = baregpu_regs::nvidia::identify_pci(f.vendor, f.device).unwrap();
    assert_eq!(identity.chipset, Chipset::GT215);
    // §2.4.1: BAR0 "a 16MB area", 32-bit; BAR1 the VRAM aperture; BAR3 the RAMIN aperture,
    // "at least 16MB".
    assert_eq!(f.memory_bar(0), Some((BAR_WINDOW, 16 << 20)));
    assert_eq!(f.memory_bar(1).map(|b| b.1), Some(VRAM_SIZE as u64));
    assert_eq!(f.memory_bar(3).map(|b| b.1), Some(16 << 20));
}

#[test]
fn boot_0_reports_gt215s_gpu_id_and_is_read_only() {
    let gpu = gpu();
    let boot = pmc::BOOT_0::from_raw(gpu.read32(BOOT_0));
    assert_eq!(boot.chipset_raw(), 0xa3, "§2.2.3: GT215's GPU id");
    assert_eq!(boot.chipset(), Ok(Chipset::GT215));
    gpu.write32(BOOT_0, 0);
    assert_eq!(gpu.read32(BOOT_0), boot.raw());
    assert_eq!(gpu.model().stats().writes_dropped, 1);
}

#[test]
fn pmc_enable_holds_pcopy_in_reset_and_clearing_it_loses_the_engine_state() {
    let gpu = gpu();
    let pcopy = Falcon::new(&gpu, Engine::Pcopy);
    // Power-on: every enable off; a disabled engine's registers read 0 and keep nothing.
    assert_eq!(gpu.read32(PMC_ENABLE), 0);
    pcopy.write(reg::SCRATCH0, 0x1234);
    assert_eq!(pcopy.read(reg::SCRATCH0), 0);
    assert_eq!(pcopy.read(reg::UC_CAPS), 0);
    gpu.write32(PMC_ENABLE, pmc::ENABLE::PCOPY_PDAEMON.set(0, 1));
    pcopy.write(reg::SCRATCH0, 0x1234);
    assert_eq!(pcopy.read(reg::SCRATCH0), 0x1234);
    gpu.write32(PMC_ENABLE, 0);
    gpu.write32(PMC_ENABLE, pmc::ENABLE::PCOPY_PDAEMON.set(0, 1));
    assert_eq!(pcopy.read(reg::SCRATCH0), 0, "reset by the enable bit");
    // Only the documented enable bits stick (PFIFO 8, PGRAPH 12, PCOPY 13, PDISPLAY 30).
    gpu.write32(PMC_ENABLE, u32::MAX);
    assert_eq!(gpu.read32(PMC_ENABLE), 1 << 8 | 1 << 12 | 1 << 13 | 1 << 30);
}

#[test]
fn the_pmem_window_reaches_vram_at_its_base_as_bar1_and_bar3_see_it() {
    let gpu = gpu();
    // PMEM_WINDOW = VRAM address >> 16: the window starts at VRAM 0x20_0000.
    gpu.write32(PMEM_WINDOW, 0x20);
    gpu.write32(PMEM + 0x10, 0xCAFE_F00D);
    assert_eq!(gpu.bar(1).read32(0x20_0010), 0xCAFE_F00D);
    assert_eq!(gpu.bar(3).read32(0x20_0010), 0xCAFE_F00D);
    gpu.bar(1).write32(0x20_0ffc, 7);
    assert_eq!(gpu.read32(PMEM + 0xffc), 7);
    assert_eq!(gpu.model().vram_u32(0x20_0010), Some(0xCAFE_F00D));
    // Moving the window moves what it shows.
    gpu.write32(PMEM_WINDOW, 0x21);
    assert_eq!(gpu.read32(PMEM + 0x10), 0);
    // A window past the end of VRAM reaches nothing: reads 0, writes dropped and counted.
    gpu.write32(PMEM_WINDOW, (VRAM_SIZE >> 16) as u32);
    let before = gpu.model().stats().writes_dropped;
    gpu.write32(PMEM, 1);
    assert_eq!(gpu.read32(PMEM), 0);
    assert_eq!(gpu.model().stats().writes_dropped, before + 1);
    // BAR3 is 16 MiB: its last dword is VRAM 0xfffffc.
    gpu.bar(3).write32(0xff_fffc, 9);
    assert_eq!(gpu.bar(1).read32(0xff_fffc), 9);
}

#[test]
fn ptimer_counts_nanoseconds_with_the_engine_ticks_and_can_be_set() {
    let gpu = gpu();
    let t0 = gpu.read32(TIME_LOW);
    for _ in 0..10 {
        gpu.poll();
    }
    let t1 = gpu.read32(TIME_LOW);
    assert!(t1 > t0, "time advances: {t0} -> {t1}");
    assert_eq!((t1 - t0) % 1000, 0, "a tick is a microsecond");
    // TIME_HIGH:TIME_LOW is one 64-bit count; writes set it (§2.10.11 names both registers).
    gpu.write32(TIME_HIGH, 5);
    gpu.write32(TIME_LOW, 0x1000_0000);
    assert_eq!(gpu.read32(TIME_HIGH), 5);
    // The falcons see the same time through their read-only aliases.
    enable_all(&gpu);
    let pdaemon = Falcon::new(&gpu, Engine::Pdaemon);
    let alias = pdaemon.read(reg::TIME_LOW);
    let direct = gpu.read32(TIME_LOW);
    assert!(alias <= direct && direct - alias < 100_000);
    pdaemon.write(reg::TIME_LOW, 0);
    assert!(pdaemon.read(reg::TIME_LOW) >= alias, "the alias is read-only");
}

#[test]
fn pmc_intr_aggregates_falcon_lines_routed_to_pmc_and_intr_mask_gates_the_pci_interrupt() {
    let gpu = gpu();
    enable_all(&gpu);
    let pdaemon = Falcon::new(&gpu, Engine::Pdaemon);
    let pcopy = Falcon::new(&gpu, Engine::Pcopy);
    // SWGEN line 6 routed to PMC (§2.10.8: selector 1 = bit 6 of INTR_ROUTING's low half).
    pdaemon.write(reg::INTR_ROUTING, 1 << 6);
    pdaemon.write(reg::INTR_EN_SET, 1 << 6);
    pdaemon.write(reg::INTR_SET, 1 << 6);
    assert_eq!(pdaemon.read(reg::INTR) & (1 << 6), 1 << 6);
    let intr = pmc::INTR::from_raw(gpu.read32(PMC_INTR));
    assert!(intr.pdaemon_gt215() && !intr.pcopy_gt215());
    assert_eq!(gpu.take_interrupts(), 0, "INTR_MASK is 0 after reset");
    gpu.write32(PMC_INTR_MASK, 1 << 18);
    assert_eq!(gpu.take_interrupts(), 1);
    // Acknowledged at the engine: PMC INTR clears and the line drops.
    pdaemon.write(reg::INTR_CLEAR, 1 << 6);
    assert_eq!(gpu.read32(PMC_INTR), 0);
    gpu.ack_irq(u32::MAX);
    assert_eq!(gpu.irq_status(), 0);
    // A line left at selector 0 goes to the falcon's vector 0, not to PMC.
    pcopy.write(reg::INTR_EN_SET, 1 << 7);
    pcopy.write(reg::INTR_SET, 1 << 7);
    assert_eq!(gpu.read32(PMC_INTR), 0);
    pcopy.write(reg::INTR_ROUTING, 1 << 7);
    assert!(pmc::INTR::from_raw(gpu.read32(PMC_INTR)).pcopy_gt215());
    // Level-mode lines ignore INTR_SET (§2.10.8; INTR_MODE resets to 0xfc04).
    pcopy.write(reg::INTR_SET, 1 << 2);
    assert_eq!(pcopy.read(reg::INTR) & (1 << 2), 0);
}

#[test]
fn holes_and_read_only_registers_are_counted_as_dropped_writes() {
    let gpu = gpu();
    let before = gpu.model().stats().writes_dropped;
    gpu.write32(0x3000, 1); // nothing lives there in this model
    gpu.write32(PMC_INTR, 1); // read-only status
    assert_eq!(gpu.read32(0x3000), 0);
    assert_eq!(gpu.model().stats().writes_dropped, before + 2);
}

#[test]
fn a_device_gone_from_the_bus_reads_all_ones_everywhere_and_keeps_nothing() {
    let gpu = gpu();
    gpu.model_mut().set_faults("all-ones".parse::<Faults>().unwrap());
    assert_eq!(gpu.read32(BOOT_0), u32::MAX);
    assert_eq!(gpu.bar(1).read32(0), u32::MAX);
    gpu.write32(PMEM_WINDOW, 3);
    gpu.model_mut().set_faults(Faults::default());
    assert_eq!(gpu.read32(PMEM_WINDOW), 0);
    // The mailbox Inject request sets the same switches.
    assert!(gpu.device_mut().model_mut().inject(gpu_mailbox::gt215_faults::ALL_ONES));
    assert_eq!(gpu.read32(BOOT_0), u32::MAX);
}
