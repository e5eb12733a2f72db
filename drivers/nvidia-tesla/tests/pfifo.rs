//! Bring-up, channels and PFIFO faults against a scripted register file that records every
//! write: the order and values the init sequence and the channel table need, and the typed
//! errors of an absent, foreign or hung GPU.

mod common;

use baregpu_nvidia_tesla::regs::pmc::BOOT_0;
use baregpu_nvidia_tesla::{
    ChannelError, ChannelId, DmaPushbuffer, Engine, FifoError, IbRing, InitError, Missing,
    ProbeError, Tesla, TeslaConfig,
};
use common::*;

#[test]
fn pfifo_init_follows_the_documented_order_with_pfifo_reset_first() {
    let fake = Fake::gt215();
    let _gpu = Tesla::init(&fake, StepClock::default(), config()).unwrap();
    let w = fake.register_writes();
    // PMC.ENABLE: PFIFO off, then on, PGRAPH left as it was; before any PFIFO register.
    assert_eq!(w[0], (PMC_ENABLE, 1 << 12));
    assert_eq!(w[1], (PMC_ENABLE, 1 << 12 | 1 << 8));
    assert_eq!(w[2], (PFIFO_UNK50C, 0x6f3c_fc34));
    assert_eq!(w[3], (PFIFO_UNK044, 0x0100_3fff));
    assert_eq!(w[4], (PFIFO_INTR, 0xffff_ffff));
    // Every documented error interrupt, not NOTIFY (bit 30).
    assert_eq!(w[5], (PFIFO_INTR_EN, 1 | 1 << 4 | 1 << 6 | 1 << 8 | 1 << 12 | 1 << 20));
    for i in 0..128 {
        assert_eq!(w[6 + i], (CHAN_TABLE + 4 * i, 0), "channel table entry {i}");
    }
    // The playlist is the first 4 KiB-aligned block of the driver's VRAM, empty.
    assert_eq!(w[134], (PLAYLIST, (VRAM >> 12) as u32));
    assert_eq!(w[135], (PLAYLIST_LEN, 0));
    assert_eq!(&w[136..139], [(PUSH0, 1), (PULL0, 1), (PFIFO_CACHES, 1)]);
    // Then every PMC line masked from the PCI interrupt until the kernel asks.
    assert_eq!(&w[139..], [(PMC_INTR_MASK, 0)]);
}

#[test]
fn all_ones_and_foreign_chips_are_refused_before_any_write() {
    let fake = Fake::gt215();
    fake.gone.set(true);
    let e = Tesla::init(&fake, StepClock::default(), config()).err().unwrap();
    assert!(matches!(e, InitError::DeviceGone(_)), "{e:?}");
    assert!(fake.writes.borrow().is_empty());

    let fake = Fake::gt215();
    fake.set(PMC_BOOT_0, BOOT_0::CHIPSET.set(0, 0x92));
    let e = Tesla::init(&fake, StepClock::default(), config()).err().unwrap();
    match e {
        InitError::Probe(ProbeError::Unsupported { missing, .. }) => {
            assert_eq!(missing, Missing::Falcon)
        }
        e => panic!("{e:?}"),
    }
    assert!(fake.writes.borrow().is_empty());
}

#[test]
fn a_channel_is_bound_in_the_table_after_its_ramfc_and_runs_once_enabled() {
    let fake = Fake::gt215();
    let mut gpu = Tesla::init(&fake, StepClock::default(), config()).unwrap();
    let start = fake.writes.borrow().len();
    gpu.create_channel(id(5), IB).unwrap();
    let mem = gpu.channel_memory(id(5)).unwrap();
    // RAMFC for IB mode: IB address and order, DMA_FETCH with IB_ENABLE, RAMHT, instance.
    assert_eq!(fake.vram(mem.ramfc.address + 0x50), 0x8000_0000);
    assert_eq!(fake.vram(mem.ramfc.address + 0x54), 9 << 16);
    assert_eq!(fake.vram(mem.ramfc.address + 0x3c), 0x403f_6078);
    assert_eq!(fake.vram(mem.ramfc.address + 0x80), 3 << 27 | 4 << 24 | 0x800);
    assert_eq!(fake.vram(mem.ramfc.address + 0x98), (mem.instance.address >> 12) as u32);
    assert_eq!(fake.vram(mem.ramfc.address + 0x48), 0x420, "pushbuffer DMA object at 0x4200");
    // The channel table entry is written last, pointing at RAMFC, not enabled.
    let w = fake.writes.borrow()[start..].to_vec();
    let entry = (mem.ramfc.address >> 8) as u32;
    assert_eq!(*w.last().unwrap(), (CHAN_TABLE + 4 * 5, entry));
    drop(w);
    assert_eq!(gpu.channel_state(id(5)), Some(false));

    let start = fake.writes.borrow().len();
    gpu.enable_channel(id(5)).unwrap();
    let w = fake.register_writes();
    let w: Vec<_> = w.iter().rev().take(3).rev().copied().collect();
    assert_eq!(w[0], (CHAN_TABLE + 4 * 5, entry | 1 << 31));
    assert_eq!(w[1].0, PLAYLIST);
    assert_eq!(w[2], (PLAYLIST_LEN, 1));
    assert!(
        fake.writes.borrow()[start..].iter().any(|&(o, v)| o >= PMEM && v == 5),
        "id 5 in the playlist"
    );
    assert_eq!(fake.vram(VRAM), 5);
}

#[test]
fn the_semaphore_object_is_in_ramht_under_its_handle() {
    let fake = Fake::gt215();
    let mut gpu = Tesla::init(&fake, StepClock::default(), config()).unwrap();
    gpu.create_channel(id(1), IB).unwrap();
    let mem = gpu.channel_memory(id(1)).unwrap();
    let h = baregpu_nvidia_tesla::SEMAPHORE_DMA_HANDLE;
    let slot = (h & 0xfff) ^ (h >> 12 & 0xfff) ^ (h >> 24);
    let entry = mem.ramht() + 8 * u64::from(slot);
    assert_eq!(fake.vram(entry), h);
    // Software engine (0), the object after the pushbuffer's at 0x4200 + 0x20.
    assert_eq!(fake.vram(entry + 4), 0x4220 >> 4);
    // Read-write class 0x3d, system memory snooped, 40-bit limit.
    assert_eq!(fake.vram(mem.instance.address + 0x4220) & 0xffff, 0x3d);
    assert_eq!(
        gpu.add_dma_object(
            id(1),
            h,
            baregpu_nvidia_tesla::DmaObject::linear_sysram(baregpu_nvidia_tesla::Access::ReadOnly)
        ),
        Err(ChannelError::DuplicateHandle { handle: h })
    );
}

#[test]
fn channel_ids_and_bad_ib_rings_are_refused_with_the_table_untouched() {
    let fake = Fake::gt215();
    let mut gpu = Tesla::init(&fake, StepClock::default(), config()).unwrap();
    assert_eq!(ChannelId::new(0), Err(ChannelError::BadId { id: 0 }));
    assert_eq!(ChannelId::new(127), Err(ChannelError::BadId { id: 127 }));
    let free = gpu.vram_free();
    let start = fake.writes.borrow().len();
    let bad = IbRing { address: 0x8000_0004, entries: 512 };
    assert!(matches!(gpu.create_channel(id(2), bad), Err(ChannelError::BadIbRing { .. })));
    assert_eq!(fake.writes.borrow().len(), start);
    assert_eq!(gpu.vram_free(), free);
    gpu.create_channel(id(2), IB).unwrap();
    assert_eq!(gpu.create_channel(id(2), IB), Err(ChannelError::InUse { id: 2 }));
    assert_eq!(gpu.enable_channel(id(3)), Err(ChannelError::NotCreated { id: 3 }));
}

#[test]
fn a_full_vram_range_is_a_typed_error_that_writes_nothing() {
    let fake = Fake::gt215();
    // The playlist (4 KiB) and room for less than one channel structure (64 KiB).
    let mut gpu = Tesla::init(&fake, StepClock::default(), TeslaConfig::new(VRAM, 0x8000)).unwrap();
    let start = fake.writes.borrow().len();
    let e = gpu.create_channel(id(1), IB).unwrap_err();
    assert!(matches!(e, ChannelError::Memory(_)), "{e:?}");
    assert_eq!(fake.writes.borrow().len(), start);
}

#[test]
fn disable_takes_the_channel_off_the_playlist_then_unloads_it_bounded() {
    let fake = Fake::gt215();
    let mut gpu = Tesla::init(&fake, StepClock::default(), config()).unwrap();
    gpu.create_channel(id(7), IB).unwrap();
    gpu.enable_channel(id(7)).unwrap();
    let mem = gpu.channel_memory(id(7)).unwrap();
    gpu.disable_channel(id(7)).unwrap();
    let w = fake.register_writes();
    let n = w.len();
    assert_eq!(w[n - 3], (PLAYLIST_LEN, 0), "off the playlist first");
    assert_eq!(w[n - 2], (CHAN_TABLE + 4 * 7, (mem.ramfc.address >> 8) as u32));
    assert_eq!(w[n - 1], (UNLOAD, (mem.instance.address >> 12) as u32));

    fake.hung_unload.set(true);
    gpu.enable_channel(id(7)).unwrap();
    assert!(matches!(gpu.disable_channel(id(7)), Err(ChannelError::UnloadTimeout(_))));
}

#[test]
fn pfifo_faults_are_decoded_acknowledged_and_the_channel_recovered() {
    let fake = Fake::gt215();
    let mut gpu = Tesla::init(&fake, StepClock::default(), config()).unwrap();
    gpu.create_channel(id(3), IB).unwrap();
    gpu.enable_channel(id(3)).unwrap();
    // DMA_PUSHER with IB_EMPTY (5) and SEMAPHORE on channel 3.
    fake.set(PMC_INTR, 1 << 8);
    fake.set(PFIFO_INTR, 1 << 12 | 1 << 20);
    fake.set(PUSH1, 1 << 16 | 3);
    fake.set(DMA_STATE, 5 << 29);
    // An IB-mode channel: the segment was read (DMA_GET = DMA_PUT), entries 3..7 were not.
    fake.set(DMA_PUT, 0x1000);
    fake.set(DMA_GET, 0x1000);
    fake.set(IB_PUT, 7);
    fake.set(IB_GET, 3);
    let report = gpu.handle_interrupts().unwrap();
    let faults: Vec<FifoError> = report.faults().collect();
    assert_eq!(faults.len(), 2, "{faults:?}");
    assert!(matches!(faults[0], FifoError::DmaPusher { channel: 3, .. }), "{faults:?}");
    assert!(faults[0].to_string().contains("IbEmpty"), "{}", faults[0]);
    assert_eq!(faults[1], FifoError::Semaphore { channel: 3 });
    let w = fake.register_writes();
    let n = w.len();
    assert_eq!(w[n - 3], (IB_GET, 7), "the entries the pusher had not fetched skipped");
    assert_eq!(w[n - 2], (DMA_STATE, 0), "pusher error cleared");
    assert_eq!(w[n - 1], (PFIFO_INTR, 1 << 12 | 1 << 20), "both acknowledged");

    assert_eq!(gpu.channel_fault(id(3)), Some(faults[1]), "the last fault naming channel 3");
    fake.set(PFIFO_INTR, 0);
    gpu.recover_channel(id(3)).unwrap();
    assert_eq!(gpu.channel_fault(id(3)), None);
    assert_eq!(gpu.channel_state(id(3)), Some(true));
    let mem = gpu.channel_memory(id(3)).unwrap();
    assert_eq!(fake.vram(mem.ramfc.address), 0, "IB_PUT 0");
    assert_eq!(fake.vram(mem.ramfc.address + 4), 0, "IB_GET 0");
}

#[test]
fn notify_is_reported_only_once_enabled_and_all_ones_is_device_gone() {
    let fake = Fake::gt215();
    let mut gpu = Tesla::init(&fake, StepClock::default(), config()).unwrap();
    fake.set(PMC_INTR, 1 << 8 | 1 << 22);
    fake.set(PFIFO_INTR, 1 << 30);
    let r = gpu.handle_interrupts().unwrap();
    assert!(!r.notify && r.pcopy && r.faults().next().is_none());
    gpu.set_notify_interrupts(true);
    fake.set(PFIFO_INTR, 1 << 30); // the fake stores the acknowledgement: raise it again
    assert!(gpu.handle_interrupts().unwrap().notify);
    fake.gone.set(true);
    assert!(gpu.handle_interrupts().is_err());
    assert!(gpu.check_alive().is_err());
}

#[test]
fn a_dma_mode_channel_reads_its_pushbuffer_through_an_object_that_starts_at_it() {
    let fake = Fake::gt215();
    let mut gpu = Tesla::init(&fake, StepClock::default(), config()).unwrap();
    let pb = DmaPushbuffer { address: 0x9000_0000, bytes: 0x4000 };
    gpu.create_channel(id(9), pb).unwrap();
    let mem = gpu.channel_memory(id(9)).unwrap();
    // DMA_FETCH without IB_ENABLE, DMA_GET = DMA_PUT = 0, no limit but the object's.
    assert_eq!(fake.vram(mem.ramfc.address + 0x3c), 0x003f_6078);
    assert_eq!(fake.vram(mem.ramfc.address + 0x10), 0);
    assert_eq!(fake.vram(mem.ramfc.address + 0x08), 0);
    assert_eq!(fake.vram(mem.ramfc.address + 0x4c), u32::MAX);
    // The pushbuffer object (at 0x4200): read-only class 2, system memory, base and limit.
    let o = mem.instance.address + 0x4200;
    assert_eq!(fake.vram(o) & 0xffff, 0x0002);
    assert_eq!((fake.vram(o + 4), fake.vram(o + 8)), (0x9000_3fff, 0x9000_0000));
    let bad = DmaPushbuffer { address: 0x9000_0002, bytes: 0x4000 };
    let e = gpu.create_channel(id(10), bad).unwrap_err();
    assert!(matches!(e, ChannelError::BadPushbuffer { .. }), "{e:?}");
    // Recovery keeps the mode.
    gpu.recover_channel(id(9)).unwrap();
    assert_eq!(fake.vram(mem.ramfc.address + 0x3c), 0x003f_6078);
}

#[test]
fn a_dma_mode_pusher_error_skips_the_rest_of_the_pushbuffer() {
    let fake = Fake::gt215();
    let mut gpu = Tesla::init(&fake, StepClock::default(), config()).unwrap();
    fake.set(PMC_INTR, 1 << 8);
    fake.set(PFIFO_INTR, 1 << 12);
    fake.set(PUSH1, 1 << 16 | 4);
    fake.set(DMA_STATE, 4 << 29); // INVALID_CMD
    fake.set(DMA_PUT, 0x200);
    fake.set(DMA_GET, 0x80);
    let faults: Vec<FifoError> = gpu.handle_interrupts().unwrap().faults().collect();
    assert!(matches!(faults[..], [FifoError::DmaPusher { channel: 4, .. }]), "{faults:?}");
    let w = fake.register_writes();
    let n = w.len();
    assert_eq!(&w[n - 3..], [(DMA_GET, 0x200), (DMA_STATE, 0), (PFIFO_INTR, 1 << 12)]);
}

#[test]
fn interrupts_reach_the_pci_line_only_once_enabled() {
    let fake = Fake::gt215();
    let gpu = Tesla::init(&fake, StepClock::default(), config()).unwrap();
    assert_eq!(fake.regs.borrow()[&PMC_INTR_MASK], 0);
    gpu.enable_interrupts().unwrap();
    assert_eq!(fake.regs.borrow()[&PMC_INTR_MASK], 1 << 8);
    gpu.disable_interrupts();
    assert_eq!(fake.regs.borrow()[&PMC_INTR_MASK], 0);
}

#[test]
fn an_engine_object_holds_its_class_and_its_handle_names_engine_and_offset() {
    let fake = Fake::gt215();
    let mut gpu = Tesla::init(&fake, StepClock::default(), config()).unwrap();
    gpu.create_channel(id(1), IB).unwrap();
    let mem = gpu.channel_memory(id(1)).unwrap();
    let offset = gpu.add_engine_object(id(1), 0xc0b5, Engine::Copy, 0x85b5).unwrap();
    // After the pushbuffer (0x4200) and semaphore (0x4220) DMA objects.
    assert_eq!(offset, 0x4240);
    assert_eq!(fake.vram(mem.instance.address + offset), 0x85b5);
    let slot: u64 = 0x0b5 ^ 0xc; // the 12-bit pieces of the handle, XORed
    let entry = mem.ramht() + 8 * slot;
    assert_eq!((fake.vram(entry), fake.vram(entry + 4)), (0xc0b5, 3 << 20 | 0x424));
    assert_eq!(
        gpu.add_engine_object(id(1), 0xc0b5, Engine::Copy, 0x85b5),
        Err(ChannelError::DuplicateHandle { handle: 0xc0b5 })
    );
}
