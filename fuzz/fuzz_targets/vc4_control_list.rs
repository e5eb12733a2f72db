//! VideoCore IV control lists (broadcom-videocore-iv-3d §9): arbitrary records, with arbitrary
//! field values and relocations (some of which fail), written with the list writer into a
//! buffer of arbitrary size, then decoded. A record is written whole or not at all; the list
//! decodes to exactly the records written, each field to the value put in (an address field to
//! the relocated address): decode(pack(x)) == x. Arbitrary bytes walked and printed as a list
//! never panic, and each whole record re-packed from its decoded fields is the same record.
#![no_main]

use baregpu_hal::dma::BusAddress;
use baregpu_regs::packet::{ListKind, Record, RecordField, Walked, decode_records, records};
use baregpu_regs::vc4::{Family, packets::ALL};
use baregpu_ring::stream::SliceSink;
use baregpu_ring::vc4::{
    ControlListWriter, MAX_RECORD_BYTES, Relocate, Relocation, RelocationError,
};
use libfuzzer_sys::fuzz_target;

/// Four buffers at fixed bus addresses; buffer 3 is gone.
struct Buffers;

const BASES: [u64; 3] = [0x1000_0000, 0x2000_0000, 0xffff_f000];
const SIZE: u32 = 0x1000;

impl Relocate for Buffers {
    type Buffer = u8;
    fn bus_address(&mut self, buffer: u8, offset: u32) -> Result<BusAddress, RelocationError> {
        let base = *BASES.get(usize::from(buffer)).ok_or(RelocationError::UnknownBuffer)?;
        if offset >= SIZE {
            return Err(RelocationError::OutOfBounds { offset, size: SIZE });
        }
        Ok(BusAddress(base + u64::from(offset)))
    }
}

fn take<const N: usize>(it: &mut impl Iterator<Item = u8>) -> [u8; N] {
    [0; N].map(|_| it.next().unwrap_or(0))
}

fn mask(f: &RecordField) -> u64 {
    if f.width == 64 { u64::MAX } else { (1 << f.width) - 1 }
}

fuzz_target!(|data: &[u8]| {
    // Any bytes as a list: never a panic; whole records re-pack to themselves.
    let _ = decode_records(ALL, data).to_string();
    for step in records(ALL, data) {
        if let Walked::Record { record, bytes, .. } = step {
            let mut again = [0u8; MAX_RECORD_BYTES];
            again[0] = record.opcode;
            for f in record.fields {
                f.set(&mut again[..record.bytes], f.get(bytes));
            }
            // The bits the fields cover are the record's bits again (unused bits aside).
            let mut covered = [0u8; MAX_RECORD_BYTES];
            covered[0] = 0xff;
            for f in record.fields {
                f.set(&mut covered[..record.bytes], u64::MAX);
            }
            for i in 0..record.bytes {
                assert_eq!(
                    again[i] & covered[i],
                    bytes[i] & covered[i],
                    "{} byte {i}",
                    record.name
                );
            }
        }
    }

    let mut it = data.iter().copied();
    let [kind, size] = take::<2>(&mut it);
    let list = if kind & 1 == 0 { ListKind::Binning } else { ListKind::Rendering };
    let mut buf = vec![0u8; usize::from(size)];
    let mut w = ControlListWriter::new(SliceSink::new(&mut buf), list, Buffers);
    let fixed: Vec<&Record<Family>> = ALL.iter().filter(|r| !r.open_ended).collect();
    // What was written: each record with the value of each of its fields.
    let mut written: Vec<(&Record<Family>, Vec<u64>)> = Vec::new();
    while let Some(pick) = it.next() {
        let record = fixed[usize::from(pick) % fixed.len()];
        let mut bytes = [0u8; MAX_RECORD_BYTES];
        let bytes = &mut bytes[..record.bytes];
        bytes[0] = record.opcode;
        let mut relocations = Vec::new();
        let mut values = Vec::new();
        for f in record.fields {
            if f.is_address() {
                let [buffer, lo, hi] = take::<3>(&mut it);
                let offset = u32::from(u16::from_le_bytes([lo, hi]) & 0x1ff0);
                relocations.push(Relocation { field: f, buffer: buffer % 4, offset });
                values
                    .push(BASES.get(usize::from(buffer % 4)).map_or(0, |b| b + u64::from(offset)));
            } else {
                let v = u64::from_le_bytes(take::<8>(&mut it)) & mask(f);
                f.set(bytes, v);
                values.push(v);
            }
        }
        let before = w.sink().len();
        match w.write(record, bytes, &relocations) {
            Ok(()) => {
                assert_eq!(w.sink().len(), before + record.bytes);
                assert!(record.lists.allows(list));
                written.push((record, values));
            }
            // Nothing partial.
            Err(_) => assert_eq!(w.sink().len(), before),
        }
    }
    let (sink, _) = w.into_parts();
    let mut walked = records(ALL, sink.written());
    for (record, values) in &written {
        let Some(Walked::Record { record: got, bytes, .. }) = walked.next() else {
            panic!("{} not decoded", record.name)
        };
        assert_eq!(got, *record);
        for (f, &v) in record.fields.iter().zip(values) {
            let read = if f.is_address() { f.address(bytes).0 } else { f.get(bytes) };
            assert_eq!(read, v, "{}.{}", record.name, f.name);
        }
    }
    assert!(walked.next().is_none());
});
