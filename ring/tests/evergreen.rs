//! The Evergreen/Cayman family of the ring crate (amd-evergreen-cayman-acceleration §9, facts
//! from Linux radeon evergreend.h / evergreen.c): ring setup values above 4 GiB, the write-back
//! split over CP_RB_RPTR_ADDR/_HI, doorbells through a recording RegisterIo, wrap and
//! back-pressure over DMA memory; `SET_*_REG` register writes by range and their typed errors;
//! `INDIRECT_BUFFER`. And the same ring core over a byte stream.

mod common;

use core::cell::RefCell;

use baregpu_hal::dma::{BusAddress, DmaRegion};
use baregpu_hal::register::Family;
use baregpu_hal::{Absolute, Register, RegisterIo};
use baregpu_regs::evergreen;
use baregpu_regs::evergreen::cb::CB_BLEND0_CONTROL;
use baregpu_regs::evergreen::cp::{CP_RB_CNTL, CP_RB_WPTR, SCRATCH_REG0};
use baregpu_regs::evergreen::db::DB_RENDER_CONTROL;
use baregpu_regs::evergreen::packets;
use baregpu_regs::evergreen::rlc::RLC_CNTL;
use baregpu_regs::evergreen::spi::{
    SPI_COMPUTE_NUM_THREAD_X, SPI_COMPUTE_NUM_THREAD_Y, SPI_COMPUTE_NUM_THREAD_Z,
};
use baregpu_regs::evergreen::sq::SQ_VTX_BASE_VTX_LOC;
use baregpu_ring::evergreen::{
    EvergreenIb, EvergreenRing, IbDescriptor, MAX_RING_DWORDS, MIN_RING_DWORDS, SUBMIT_ALIGN,
};
use baregpu_ring::ib::IbError;
use baregpu_ring::pm4::{CommandSink, NoSpace, Pm4Error, Pm4Family, Pm4Writer, SliceSink, TYPE2};
use baregpu_ring::ring::{
    CommandProcessorRing, CommandRing, RingConfigError, RingFull, WritebackFamily, WritebackRptr,
};
use common::{dwords, region};

/// Above 4 GiB: the Evergreen CP reaches 40-bit bus addresses.
const RING_BUS: u64 = 0x1_0000_0000;
const WB_BUS: u64 = 0x12_3456_7800;

fn ring(dw: usize) -> EvergreenRing {
    EvergreenRing::with_family(region(dw, RING_BUS), region(4, WB_BUS), 4).unwrap()
}

fn publish<F: WritebackFamily>(
    ring: &CommandRing<DmaRegion, WritebackRptr<DmaRegion, F>, F>,
    rptr: u32,
) {
    let (wb, off) = ring.writeback();
    wb.write_u32(off, rptr).unwrap();
}

fn encode(
    f: impl FnOnce(&mut Pm4Writer<SliceSink<'_>, evergreen::Family>) -> Result<(), Pm4Error>,
) -> Vec<u32> {
    let mut buf = [0u32; 64];
    let mut w = Pm4Writer::<_, evergreen::Family>::with_family(SliceSink::new(&mut buf));
    f(&mut w).unwrap();
    w.sink().written().to_vec()
}

fn encode_err(
    f: impl FnOnce(&mut Pm4Writer<SliceSink<'_>, evergreen::Family>) -> Result<(), Pm4Error>,
) -> (Pm4Error, usize) {
    let mut buf = [0u32; 64];
    let mut w = Pm4Writer::<_, evergreen::Family>::with_family(SliceSink::new(&mut buf));
    let e = f(&mut w).unwrap_err();
    (e, w.sink().len())
}

#[test]
fn setup_values_reach_forty_bits() {
    let r = ring(1024);
    // RB_BUFSZ = log2(4096 bytes / 8) = 9, as Linux evergreen.c computes it.
    assert_eq!(r.rb_bufsz(), 9);
    assert_eq!(r.size_dwords(), 1024);
    // CP_RB_BASE holds address >> 8.
    assert_eq!(r.cp_rb_base().to_raw(), (RING_BUS >> 8) as u32);
    assert_eq!(r.cp_rb_base().rb_base(), BusAddress(RING_BUS));
    // The write-back dword at WB_BUS + 4: bits 31:2 low, 39:32 high.
    let wb = r.cp_rb_rptr_addr();
    assert_eq!(wb.low.to_raw(), 0x3456_7804);
    assert_eq!(wb.high.to_raw(), 0x12);
    assert_eq!(wb.low.rb_rptr_swap(), 0, "no swap");
    let big =
        EvergreenRing::with_family(region(MAX_RING_DWORDS, 0), region(1, 1 << 30), 0).unwrap();
    assert_eq!(big.rb_bufsz(), 17);
}

#[test]
fn setup_errors() {
    let wb = region(2, WB_BUS);
    let err = |r: DmaRegion, off| EvergreenRing::with_family(r, &wb, off).unwrap_err();
    // Below one GPU page, above 1 MiB, not a power of two.
    assert_eq!(err(region(MIN_RING_DWORDS / 2, 0), 0), RingConfigError::BadSize { bytes: 2048 });
    assert_eq!(
        err(region(MAX_RING_DWORDS * 2, 0), 0),
        RingConfigError::BadSize { bytes: MAX_RING_DWORDS * 8 }
    );
    assert_eq!(err(region(1536, 0), 0), RingConfigError::BadSize { bytes: 6144 });
    // CP_RB_BASE holds bits 39:8: 256-byte alignment; and the ring must end below 1 TiB.
    let address = BusAddress(0x1_0000_0040);
    assert_eq!(err(region(1024, address.0), 0), RingConfigError::BadBase { address });
    let address = BusAddress((1 << 40) - 0x1000);
    assert_eq!(err(region(2048, address.0), 0), RingConfigError::BadBase { address });
    // The write-back: past its region, or past 1 TiB.
    assert_eq!(
        err(region(1024, 0), 8),
        RingConfigError::BadWriteback { offset: 8, address: Some(BusAddress(WB_BUS + 8)) }
    );
    let top = region(1, 1 << 40);
    assert_eq!(
        EvergreenRing::with_family(region(1024, 0), &top, 0).unwrap_err(),
        RingConfigError::BadWriteback { offset: 0, address: Some(BusAddress(1 << 40)) }
    );
}

/// A RegisterIo recording writes.
#[derive(Default)]
struct Recorder(RefCell<Vec<(usize, u32)>>);
impl RegisterIo for Recorder {
    fn read32(&self, _: usize) -> u32 {
        unreachable!("the ring never reads registers")
    }
    fn write32(&self, offset: usize, value: u32) {
        self.0.borrow_mut().push((offset, value));
    }
}

#[test]
fn one_doorbell_per_batch_at_cp_rb_wptr() {
    let io = Recorder::default();
    let mut r = ring(1024);
    for i in 0..20 {
        r.writer().write_reg_at(2, SCRATCH_REG0::from_raw(i)).unwrap();
    }
    // 20 SET_CONFIG_REG packets of 3 dwords, padded with type-2 to 64.
    assert_eq!(r.pad_to(SUBMIT_ALIGN), Ok(4));
    r.kick(&io);
    assert_eq!(r.commits(), 1);
    assert_eq!(*io.0.borrow(), [(CP_RB_WPTR::OFFSET, 64)]);
    assert_eq!(CP_RB_WPTR::OFFSET, 0xc114);
    let mem = dwords(r.buffer());
    assert_eq!(&mem[..3], &[0xC001_6800, 0x142, 0]);
    assert!(mem[60..64].iter().all(|&d| d == TYPE2));
}

#[test]
fn wrap_and_back_pressure() {
    let mut r = ring(1024);
    // Fill to 1000, commit; the CP consumes 996 and writes its pointer back.
    r.writer().filler(1000).unwrap();
    r.commit();
    assert_eq!(r.free_dwords(), 23);
    // 30 dwords do not fit until the write-back is read: nothing is written.
    let before = dwords(r.buffer());
    assert_eq!(r.reserve(30), Err(RingFull { needed: 30, free: 23 }));
    assert_eq!(dwords(r.buffer()), before);
    publish(&r, 996);
    // A NOP of 29 body dwords now fits and straddles the end: 1000..=1023, then 0..=5.
    let body: Vec<u32> = (1..=29).collect();
    r.writer().nop(&body).unwrap();
    assert_eq!(r.head(), 6);
    let mem = dwords(r.buffer());
    assert_eq!(mem[1000], 0xC01C_1000); // NOP (0x10), COUNT 28
    assert_eq!(&mem[1001..1024], &body[..23]);
    assert_eq!(&mem[..6], &body[23..]);
    assert_eq!(r.commit().to_raw(), 6);
    // A write-back beyond the committed pointer is ignored.
    publish(&r, 7);
    assert!(r.refresh_rptr().is_err());
    assert_eq!(r.cached_rptr(), 996);
}

/// A register write whose two-dword prefix (header, REG_OFFSET) passes the end of the ring:
/// the header is the last dword, REG_OFFSET and the value continue at dword 0 (the one run of
/// stores is split once, inside the prefix).
#[test]
fn a_packet_prefix_straddles_the_end() {
    let mut r = ring(1024);
    r.writer().filler(1023).unwrap();
    r.commit();
    publish(&r, 1023);
    r.writer().write_reg_at(2, SCRATCH_REG0::from_raw(0xAB)).unwrap();
    let mem = dwords(r.buffer());
    // SET_CONFIG_REG (0x68), COUNT 1; SCRATCH_REG2 at 0x8508: (0x8508 - 0x8000) / 4 = 0x142.
    assert_eq!((mem[1023], mem[0], mem[1]), (0xC001_6800, 0x142, 0xAB));
    assert_eq!(r.head(), 2);
    // And a run whose body passes the end after a whole prefix: the two prefix dwords at 1021
    // and 1022, the body from 1023 on, continuing at 0.
    let mut r = ring(1024);
    r.writer().filler(1021).unwrap();
    r.commit();
    publish(&r, 1021);
    r.write_parts(&[0xC003_6800, 0x140], &[1, 2, 3]).unwrap();
    let mem = dwords(r.buffer());
    assert_eq!(&mem[1021..], &[0xC003_6800, 0x140, 1]);
    assert_eq!(&mem[..2], &[2, 3]);
    assert_eq!(r.head(), 2);
}

#[test]
fn registers_go_by_range() {
    // Config space (§9.4.14): REG_OFFSET from 0x8000. SCRATCH_REG0 is 0x8500.
    assert_eq!(encode(|w| w.write_reg_at(0, SCRATCH_REG0::from_raw(7))), [0xC001_6800, 0x140, 7]);
    // Context space (§9.4.15): REG_OFFSET from 0x28000.
    assert_eq!(encode(|w| w.write_reg(DB_RENDER_CONTROL::from_raw(5))), [0xC001_6900, 0, 5]);
    // Three consecutive context registers, one packet: 0x286ec = 0x28000 + 0x1bb dwords.
    assert_eq!(
        encode(|w| w.write_regs((
            SPI_COMPUTE_NUM_THREAD_X::from_raw(64),
            SPI_COMPUTE_NUM_THREAD_Y::from_raw(1),
            SPI_COMPUTE_NUM_THREAD_Z::from_raw(1),
        ))),
        [0xC003_6900, 0x1BB, 64, 1, 1]
    );
    // A register array: all eight CB_BLEND<n>_CONTROL in one SET_CONTEXT_REG.
    let blends = [CB_BLEND0_CONTROL::from_raw(3); 8];
    let out = encode(|w| w.write_reg_array(0, &blends));
    assert_eq!(&out[..2], &[0xC008_6900, (0x28780 - 0x28000) / 4]);
    assert_eq!(out.len(), 10);
    // Control constants (§9.4.16): SET_CTL_CONST from SQ_VTX_BASE_VTX_LOC.
    assert_eq!(encode(|w| w.write_reg(SQ_VTX_BASE_VTX_LOC::from_raw(9))), [0xC001_6F00, 0, 9]);
    // A system register (below 32 KiB, §9.1.1): type 0, 2 dwords.
    assert_eq!(encode(|w| w.write_reg(RLC_CNTL::from_raw(1))), [0x0000_0FC0, 1]);
}

#[test]
fn registers_no_packet_reaches_are_typed_errors() {
    // CP_RB_CNTL (0xc104) is above the config range and below the context range.
    assert_eq!(
        encode_err(|w| w.write_reg(CP_RB_CNTL::from_raw(0))),
        (Pm4Error::NoRegisterPacket { offset: 0xc104 }, 0)
    );
    // A run may not leave its range: the config range ends at 0xac00.
    assert_eq!(
        evergreen::Family::register_write(0xABFC, 2),
        Err(Pm4Error::RegisterOutOfRange { offset: 0xAC00, max: 0xABFC })
    );
    assert_eq!(
        evergreen::Family::register_write(0x7FFC, 2),
        Err(Pm4Error::RegisterOutOfRange { offset: 0x8000, max: 0x7FFC })
    );
    assert_eq!(
        evergreen::Family::register_write(0x8002, 1),
        Err(Pm4Error::UnalignedRegister { offset: 0x8002 })
    );
    assert_eq!(evergreen::Family::register_write(0x8000, 0), Err(Pm4Error::BadCount { count: 0 }));
    // The longest SET_* packet: REG_OFFSET + 0x3FFF values fills the 0x4000-dword body.
    assert!(
        evergreen::Family::register_write(0x28000, 0x3FFF).is_err(),
        "context range is 0x400 dwords"
    );
    assert_eq!(
        evergreen::Family::register_write(0x30000, 0x4000),
        Err(Pm4Error::BadCount { count: 0x4000 })
    );
    assert!(evergreen::Family::register_write(0x30000, 0x1FFF).is_ok());
}

#[test]
fn indirect_buffers_above_four_gib() {
    let base = 0x1_2345_6780;
    let mut ib = EvergreenIb::with_family(region(64, base)).unwrap();
    ib.writer().write_reg_at(1, SCRATCH_REG0::from_raw(1)).unwrap();
    ib.pad_to(16).unwrap();
    let d = ib.descriptor().unwrap();
    assert_eq!((d.base(), d.dwords()), (BusAddress(base), 16));
    let out = encode(|w| w.indirect_buffer(d));
    // INDIRECT_BUFFER 0x32, 3 body dwords: base 31:2, base 39:32, size (§9.3.1).
    assert_eq!(out, [0xC002_3200, 0x2345_6780, 0x1, 16]);
    assert_eq!(
        IbDescriptor::new(BusAddress(0x1002), 4),
        Err(IbError::Unaligned { address: BusAddress(0x1002) })
    );
    assert_eq!(
        IbDescriptor::new(BusAddress(0), 1 << 20),
        Err(IbError::BadSize { dwords: 1 << 20 })
    );
    let top = BusAddress((1 << 40) - 8);
    assert_eq!(
        IbDescriptor::new(top, 4),
        Err(IbError::AddressOutOfRange { address: top, dwords: 4 })
    );
}

#[test]
fn compute_writer_sets_shader_type() {
    let mut r = ring(1024);
    let mut w = r.compute_writer();
    w.write_reg(SPI_COMPUTE_NUM_THREAD_X::from_raw(64)).unwrap();
    w.packet(packets::DISPATCH_DIRECT, &[4, 1, 1, 1]).unwrap();
    w.write_reg(RLC_CNTL::from_raw(0)).unwrap(); // type 0: no SHADER_TYPE bit there
    let mem = dwords(r.buffer());
    // SET_CONTEXT_REG and DISPATCH_DIRECT (0x15) with SHADER_TYPE (bit 1) = compute (§9.1.4).
    assert_eq!(&mem[..3], &[0xC001_6902, 0x1BB, 64]);
    let decoded = baregpu_regs::packet::decode(packets::ALL, &mem[..10]);
    assert_eq!(&mem[3..8], &[0xC003_1502, 4, 1, 1, 1], "the stream:\n{decoded}");
    assert_eq!(&mem[8..10], &[0x0000_0FC0, 0]);
    // The graphics writer leaves it clear.
    let mut g = ring(1024);
    g.writer().packet(packets::DISPATCH_DIRECT, &[4, 1, 1, 1]).unwrap();
    assert_eq!(dwords(g.buffer())[0], 0xC003_1500);
}

#[test]
fn writer_refuses_bodies_that_do_not_fit_the_packet_layout() {
    // §9.3.12: DISPATCH_DIRECT takes DIM_X, DIM_Y, DIM_Z and DISPATCH_INITIATOR; a 3-dword body
    // (no initiator) is refused before anything is written.
    let mut r = ring(1024);
    let before = r.free_dwords();
    let err = r.writer().packet(packets::DISPATCH_DIRECT, &[4, 1, 1]).unwrap_err();
    let Pm4Error::Body(body) = err else { panic!("{err:?}") };
    assert_eq!((body.packet, body.dwords, body.min, body.max), ("DISPATCH_DIRECT", 3, 4, 4));
    assert_eq!(r.free_dwords(), before);
    // §9.6.1: EVENT_WRITE takes 1 dword, or 3 with the sample address; not 2.
    assert!(matches!(r.writer().packet(packets::EVENT_WRITE, &[0, 0]), Err(Pm4Error::Body(_))));
    r.writer().packet(packets::EVENT_WRITE, &[0]).unwrap();
    r.writer().packet(packets::EVENT_WRITE, &[0, 0, 0]).unwrap();
    // The typed bodies always fit.
    let eop = packets::event_write_eop::Body::new();
    r.writer().packet(packets::EVENT_WRITE_EOP, eop.dwords()).unwrap();
}

/// A family whose ring holds byte records (as VideoCore IV control lists are): only to show
/// that the space, back-pressure and wrap logic is one generic core.
enum ByteRecords {}

impl CommandProcessorRing for ByteRecords {
    type Unit = u8;
    type Base = BusAddress;
    type Doorbell = Doorbell;
    const MIN_UNITS: usize = 16;
    const MAX_UNITS: usize = 1 << 16;
    const FILLER: u8 = 0; // a one-byte no-op record
    const SUBMIT_ALIGN: usize = 4;
    fn base(address: BusAddress, _bytes: usize) -> Option<BusAddress> {
        Some(address)
    }
    fn size_field(units: usize) -> u8 {
        units.trailing_zeros() as u8
    }
    fn doorbell(wptr: u32) -> Doorbell {
        Doorbell(wptr)
    }
}

impl WritebackFamily for ByteRecords {
    type Writeback = BusAddress;
    fn writeback(address: BusAddress) -> Option<BusAddress> {
        address.0.is_multiple_of(4).then_some(address)
    }
}

/// The test family's doorbell register.
#[derive(Clone, Copy, Debug)]
struct Doorbell(u32);
enum TestFamily {}
impl Family for TestFamily {
    const NAME: &'static str = "test";
    type Chipset = ();
}
impl Register for Doorbell {
    type Family = TestFamily;
    type Base = Absolute;
    const NAME: &'static str = "DOORBELL";
    const OFFSET: usize = 0x40;
    const WRITE_MASK: u32 = u32::MAX;
    const RESET_RAW: u32 = 0;
    fn from_raw(raw: u32) -> Self {
        Doorbell(raw)
    }
    fn to_raw(self) -> u32 {
        self.0
    }
}
impl baregpu_hal::Writable for Doorbell {}
impl baregpu_hal::Scalar for Doorbell {}

#[test]
fn the_same_core_over_byte_records() {
    let io = Recorder::default();
    let mut r: CommandRing<DmaRegion, WritebackRptr<DmaRegion, ByteRecords>, ByteRecords> =
        CommandRing::with_family(region(4, 0x1000), region(1, 0x2000), 0).unwrap();
    assert_eq!((r.size_units(), r.capacity()), (16, 15));
    r.write_packet(0x70, &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]).unwrap();
    assert_eq!(r.pad_to(ByteRecords::SUBMIT_ALIGN), Ok(1));
    // 12 of 15 bytes used: a 4-byte record does not fit, and nothing is written.
    assert_eq!(r.write_packet(0x71, &[0, 0, 0]), Err(NoSpace { needed: 4, free: 3 }));
    assert_eq!(r.head(), 12);
    r.kick(&io);
    assert_eq!(*io.0.borrow(), [(0x40, 12)]);
    // Back-pressure in bytes: once the CP has consumed 10, a 5-byte record fits and wraps.
    publish(&r, 10);
    r.write_packet(0x72, &[0xAA, 0xBB, 0xCC, 0xDD]).unwrap();
    assert_eq!(r.head(), 1);
    assert_eq!(r.free_units(), 15 - 7);
    let mem: Vec<u8> = dwords(r.buffer()).iter().flat_map(|d| d.to_le_bytes()).collect();
    assert_eq!(&mem[..11], &[0xDD, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10], "the record wrapped to byte 0");
    assert_eq!(&mem[11..16], &[0, 0x72, 0xAA, 0xBB, 0xCC], "a filler, then the record");
}
