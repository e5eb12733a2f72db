//! Indirect buffers (amd-r5xx-acceleration §5.6, §5.10) and their 3-dword emission.

mod common;

use baregpu_hal::dma::{BusAddress, DmaRegion};
use baregpu_regs::r5xx::cp::SCRATCH_REG0;
use baregpu_ring::ib::{IbError, IndirectBuffer};
use baregpu_ring::pm4::{NoSpace, PadError, Pm4Error, TYPE2};
use baregpu_ring::r5xx::{IB_PACKET_DWORDS, IbDescriptor, MAX_IB_DWORDS};
use baregpu_ring::ring::CommandRing;
use common::{dwords, region};

#[test]
fn ib1_emission_in_the_ring() {
    let mut ring = CommandRing::new(region(64, 0x1_0000), region(1, 0x2_0000), 0).unwrap();
    let ib = IbDescriptor::new(BusAddress(0x0040_0000), 16).unwrap();
    ring.writer().indirect_buffer(ib).unwrap();
    assert_eq!(ring.head() as usize, IB_PACKET_DWORDS);
    // Type 0, COUNT 2 - 1 = 1 << 16, BASE_INDEX CP_IB_BASE 0x738 >> 2 = 0x1CE: 0x000101CE;
    // then CP_IB_BASE = 0x00400000 (address bits 31:2 in place) and CP_IB_BUFSZ = 16 last.
    assert_eq!(&dwords(ring.buffer())[..3], &[0x0001_01CE, 0x0040_0000, 16]);
}

#[test]
fn ib2_emission_inside_an_ib1() {
    let mut ib1 = IndirectBuffer::new(region(32, 0x3_0000)).unwrap();
    let ib2 = IbDescriptor::new(BusAddress(0x0050_0010), 0x7F_FFFF).unwrap();
    ib1.writer().indirect_buffer2(ib2).unwrap();
    // CP_IB2_BASE 0x730 >> 2 = 0x1CC, COUNT 1 << 16: 0x000101CC; CP_IB2_BUFSZ (0x734) last.
    assert_eq!(&dwords(ib1.region())[..3], &[0x0001_01CC, 0x0050_0010, 0x7F_FFFF]);
    assert_eq!(ib1.len(), 3);
}

#[test]
fn building_an_ib_and_running_it_from_the_ring() {
    // Linux radeon's IB test (r100.c r100_ib_test): a scratch write inside an IB padded with type-2 packets.
    let mem = region(64, 0x8_0000);
    let mut ib = IndirectBuffer::new(&mem).unwrap();
    assert_eq!(ib.descriptor(), Err(IbError::BadSize { dwords: 0 }));
    ib.writer().write_reg_at(2, SCRATCH_REG0::from_raw(0xDEAD_BEEF)).unwrap();
    assert_eq!(ib.pad_to(16), Ok(14));
    let d = ib.descriptor().unwrap();
    assert_eq!((d.base(), d.dwords()), (BusAddress(0x8_0000), 16));
    let contents = dwords(&mem);
    // SCRATCH_REG0[2] = 0x15E8 >> 2 = 0x57A, COUNT 0.
    assert_eq!(&contents[..2], &[0x0000_057A, 0xDEAD_BEEF]);
    assert!(contents[2..16].iter().all(|&w| w == TYPE2));

    let mut ring = CommandRing::new(region(32, 0x1_0000), region(1, 0x2_0000), 0).unwrap();
    ring.writer().indirect_buffer(d).unwrap();
    assert_eq!(&dwords(ring.buffer())[..3], &[0x0001_01CE, 0x8_0000, 16]);
    ib.clear();
    assert!(ib.is_empty());
}

#[test]
fn descriptor_errors() {
    assert_eq!(
        IbDescriptor::new(BusAddress(0x1002), 4),
        Err(IbError::Unaligned { address: BusAddress(0x1002) })
    );
    assert_eq!(IbDescriptor::new(BusAddress(0x1000), 0), Err(IbError::BadSize { dwords: 0 }));
    assert_eq!(
        IbDescriptor::new(BusAddress(0x1000), MAX_IB_DWORDS + 1),
        Err(IbError::BadSize { dwords: 0x80_0000 })
    );
    // Ends past 4 GiB: CP_IB_BASE is a 32-bit address.
    assert_eq!(
        IbDescriptor::new(BusAddress(0xFFFF_FFF0), 8),
        Err(IbError::AddressOutOfRange { address: BusAddress(0xFFFF_FFF0), dwords: 8 })
    );
    assert!(IbDescriptor::new(BusAddress(0xFFFF_FFF0), 4).is_ok());
    let high: DmaRegion = region(4, 0x1_0000_0000);
    assert!(matches!(IndirectBuffer::new(&high), Err(IbError::AddressOutOfRange { .. })));
}

#[test]
fn a_full_ib_refuses_whole_packets() {
    let mut ib = IndirectBuffer::new(region(4, 0x4000)).unwrap();
    ib.writer().write_reg_at(0, SCRATCH_REG0::from_raw(1)).unwrap();
    let d = IbDescriptor::new(BusAddress(0x9000), 4).unwrap();
    assert_eq!(
        ib.writer().indirect_buffer2(d),
        Err(Pm4Error::NoSpace(NoSpace { needed: 3, free: 2 }))
    );
    assert_eq!(ib.len(), 2);
    assert_eq!(ib.pad_to(8), Err(PadError::NoSpace(NoSpace { needed: 6, free: 2 })));
    assert_eq!(ib.pad_to(4), Ok(2));
    assert_eq!(ib.free_dwords(), 0);
}
