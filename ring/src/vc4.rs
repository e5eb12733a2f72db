//! VideoCore IV control lists (broadcom-videocore-iv-3d §9): the [`ControlListWriter`] packs
//! records from the generated, document-checked record table (`baregpu_regs::vc4::packets`)
//! into any [`CommandSink`] of bytes.
//!
//! Every record is checked before a byte is written: it is one whole record of its kind
//! ([`RecordError`]), the list may hold it (§9: "(B)" records only in binning lists, "(R)"
//! only in rendering lists), and each of its address fields is given as a buffer and an offset
//! that the caller's [`Relocate`] hook turns into a bus address. The one hook sees every
//! address the writer emits (tile allocation memory, shader records, branch targets, frame
//! buffers), so a caller that moves or validates buffers has a single place to do it. A
//! record that fails any check, or does not fit the sink, leaves the list as it was.
//!
//! ```
//! use baregpu_hal::dma::BusAddress;
//! use baregpu_regs::packet::ListKind;
//! use baregpu_regs::vc4::packets::{self as cl, branch_to_sub_list, tile_coordinates};
//! use baregpu_ring::stream::SliceSink;
//! use baregpu_ring::vc4::{ControlListWriter, Relocate, Relocation, RelocationError};
//!
//! /// Buffers by index, each at a fixed bus address (a real caller looks its buffers up).
//! struct Buffers([(u64, u32); 2]);
//! impl Relocate for Buffers {
//!     type Buffer = usize;
//!     fn bus_address(&mut self, buffer: usize, offset: u32) -> Result<BusAddress, RelocationError> {
//!         let &(base, size) = self.0.get(buffer).ok_or(RelocationError::UnknownBuffer)?;
//!         if offset >= size {
//!             return Err(RelocationError::OutOfBounds { offset, size });
//!         }
//!         Ok(BusAddress(base + u64::from(offset)))
//!     }
//! }
//!
//! let mut bytes = [0u8; 64];
//! let mut list = ControlListWriter::new(
//!     SliceSink::new(&mut bytes),
//!     ListKind::Rendering,
//!     Buffers([(0x1000_0000, 0x1000), (0x2000_0000, 0x10_0000)]),
//! );
//! let tile = tile_coordinates::Body::new().with_tile_column_number(1)?;
//! list.write(&cl::TILE_COORDINATES, tile.bytes(), &[])?;
//! // The tile's list in the tile allocation memory (buffer 0), 32 bytes per tile.
//! let branch = [Relocation { field: &branch_to_sub_list::ABSOLUTE_BRANCH_ADDRESS, buffer: 0, offset: 32 }];
//! list.write(&cl::BRANCH_TO_SUB_LIST, branch_to_sub_list::Body::new().bytes(), &branch)?;
//! list.write(&cl::STORE_MULTI_SAMPLE_RESOLVED_TILE_COLOR_BUFFER_AND_SIGNAL_END_OF_FRAME, &[25], &[])?;
//! assert_eq!(list.sink().written(), [115, 1, 0, 17, 0x20, 0, 0, 0x10, 25]);
//! # Ok::<(), Box<dyn core::error::Error>>(())
//! ```

use core::fmt;

use baregpu_hal::dma::BusAddress;
use baregpu_hal::register::AddressFieldError;
use baregpu_regs::packet::{ListKind, Record, RecordError, RecordField};
use baregpu_regs::vc4::Family;

use crate::stream::{CommandSink, NoSpace};

/// Largest record of the table (Tile Binning Mode Configuration, 16 bytes): the writer builds
/// a record on the stack before writing it.
pub const MAX_RECORD_BYTES: usize = 16;

/// Turns a buffer and an offset into the bus address a record holds: the one place every
/// address of a control list goes through. Implemented by the caller (a driver's buffer
/// table, a validator that checks a user's handles, a test's fixed map).
pub trait Relocate {
    /// How the caller names a buffer (an index, a handle).
    type Buffer: Copy + fmt::Debug;

    /// The bus address of byte `offset` of `buffer`, or why there is none.
    fn bus_address(
        &mut self,
        buffer: Self::Buffer,
        offset: u32,
    ) -> Result<BusAddress, RelocationError>;
}

/// Why a [`Relocate`] hook gave no address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum RelocationError {
    /// The caller knows no such buffer.
    UnknownBuffer,
    /// The offset is past the buffer's end.
    OutOfBounds {
        /// The offset asked for.
        offset: u32,
        /// The buffer's size in bytes.
        size: u32,
    },
    /// The buffer has no bus address the V3D can reach (not resident, above 4 GiB).
    Unreachable,
}

impl fmt::Display for RelocationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RelocationError::UnknownBuffer => f.write_str("no such buffer"),
            RelocationError::OutOfBounds { offset, size } => {
                write!(f, "offset {offset:#x} is past the buffer's {size:#x} bytes")
            }
            RelocationError::Unreachable => {
                f.write_str("the buffer has no bus address the V3D reaches")
            }
        }
    }
}

impl core::error::Error for RelocationError {}

/// One address field of a record, given as a buffer and an offset in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Relocation<B> {
    /// The record's address field (`branch_to_sub_list::ABSOLUTE_BRANCH_ADDRESS`).
    pub field: &'static RecordField,
    /// The buffer the address points into.
    pub buffer: B,
    /// Byte offset in it.
    pub offset: u32,
}

/// Why a record was not written. Nothing was written in every case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum ControlListError {
    /// The bytes are not one whole record of the kind given.
    Record(RecordError),
    /// A record this list may not hold (a binning-only record in a rendering list).
    WrongList {
        /// The record.
        record: &'static str,
        /// The list it was written to.
        list: ListKind,
    },
    /// A record with an escape-terminated list (ids 42, 48, 49): not written by this writer.
    OpenEnded {
        /// The record.
        record: &'static str,
    },
    /// An address field of the record without a relocation, or with two.
    Unrelocated {
        /// The record.
        record: &'static str,
        /// The field.
        field: &'static str,
    },
    /// A relocation for a field that is not one of the record's address fields.
    NotAnAddress {
        /// The record.
        record: &'static str,
        /// The field.
        field: &'static str,
    },
    /// The relocation hook gave no address.
    Relocation {
        /// The record.
        record: &'static str,
        /// The field.
        field: &'static str,
        /// Why.
        error: RelocationError,
    },
    /// The address the hook gave does not fit the field (misaligned, out of reach).
    Address(AddressFieldError),
    /// The list buffer has no room for the whole record.
    NoSpace(NoSpace),
}

impl fmt::Display for ControlListError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ControlListError::Record(e) => write!(f, "not a whole record: {e}"),
            ControlListError::WrongList { record, list } => {
                write!(f, "a {list:?} list may not hold {record}")
            }
            ControlListError::OpenEnded { record } => {
                write!(
                    f,
                    "{record} carries an escape-terminated list, which this writer does not write"
                )
            }
            ControlListError::Unrelocated { record, field } => {
                write!(f, "{record}.{field} needs exactly one relocation")
            }
            ControlListError::NotAnAddress { record, field } => {
                write!(f, "{record}.{field} is not an address field of the record")
            }
            ControlListError::Relocation { record, field, .. } => {
                write!(f, "no address for {record}.{field}")
            }
            ControlListError::Address(e) => write!(f, "relocated address does not fit: {e}"),
            ControlListError::NoSpace(e) => write!(f, "control list full: {e}"),
        }
    }
}

impl core::error::Error for ControlListError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            ControlListError::Record(e) => Some(e),
            ControlListError::Relocation { error, .. } => Some(error),
            ControlListError::Address(e) => Some(e),
            ControlListError::NoSpace(e) => Some(e),
            _ => None,
        }
    }
}

impl From<NoSpace> for ControlListError {
    fn from(e: NoSpace) -> Self {
        ControlListError::NoSpace(e)
    }
}

/// Writes the records of one control list (binning or rendering) into a byte sink, relocating
/// every address field through `R`.
#[derive(Debug)]
pub struct ControlListWriter<S, R> {
    sink: S,
    list: ListKind,
    relocate: R,
}

impl<S: CommandSink<u8>, R: Relocate> ControlListWriter<S, R> {
    /// A writer of a `list` into `sink`, resolving addresses with `relocate`.
    pub fn new(sink: S, list: ListKind, relocate: R) -> Self {
        ControlListWriter { sink, list, relocate }
    }

    /// Which list this is.
    pub fn list(&self) -> ListKind {
        self.list
    }

    /// The sink (to read what was written).
    pub fn sink(&self) -> &S {
        &self.sink
    }

    /// The sink and the relocation hook back.
    pub fn into_parts(self) -> (S, R) {
        (self.sink, self.relocate)
    }

    /// Write `record`, whose bytes (id first, address fields as they are) are `bytes`, with
    /// every address field set from `relocations`: all or nothing.
    pub fn write(
        &mut self,
        record: &Record<Family>,
        bytes: &[u8],
        relocations: &[Relocation<R::Buffer>],
    ) -> Result<(), ControlListError> {
        if record.open_ended {
            return Err(ControlListError::OpenEnded { record: record.name });
        }
        record.check(bytes).map_err(ControlListError::Record)?;
        if !record.lists.allows(self.list) {
            return Err(ControlListError::WrongList { record: record.name, list: self.list });
        }
        for r in relocations {
            if !r.field.is_address() || !record.fields.contains(r.field) {
                return Err(ControlListError::NotAnAddress {
                    record: record.name,
                    field: r.field.name,
                });
            }
        }
        let mut out = [0u8; MAX_RECORD_BYTES];
        let out = &mut out[..bytes.len()];
        out.copy_from_slice(bytes);
        for field in record.fields.iter().filter(|f| f.is_address()) {
            let mut given = relocations.iter().filter(|r| r.field == field);
            let (Some(r), None) = (given.next(), given.next()) else {
                return Err(ControlListError::Unrelocated {
                    record: record.name,
                    field: field.name,
                });
            };
            let address = self.relocate.bus_address(r.buffer, r.offset).map_err(|error| {
                ControlListError::Relocation { record: record.name, field: field.name, error }
            })?;
            field.put_address(record.name, out, address).map_err(ControlListError::Address)?;
        }
        self.sink.reserve(out.len())?;
        self.sink.push_slice(out)?;
        Ok(())
    }
}
