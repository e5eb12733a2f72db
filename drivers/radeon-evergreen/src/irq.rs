//! The interrupt-handler (IH) ring: the GPU writes 16-byte interrupt vectors into a ring in
//! memory and its write pointer to the write-back page; the driver consumes them and moves
//! `IH_RB_RPTR` (registers and sequence from Linux radeon r600.c `r600_irq_init`,
//! `evergreen_irq_process`; the document does not describe the IH).

use baregpu_hal::dma::{BusAddress, DmaAllocator, DmaBuffer, DmaRegion};
use baregpu_hal::{RegisterIo, RegisterIoExt};
use baregpu_regs::evergreen::cp::CP_INT_CNTL;
use baregpu_regs::evergreen::ih::{
    IH_CNTL, IH_RB_BASE, IH_RB_CNTL, IH_RB_RPTR, IH_RB_WPTR, IH_RB_WPTR_ADDR_HI,
    IH_RB_WPTR_ADDR_LO, INTERRUPT_CNTL, INTERRUPT_CNTL2,
};

use core::fmt;

use crate::Bar;
use crate::consts::{WB_IH_WPTR_OFFSET, split_address};
use crate::error::{DeviceGone, InitError};
use crate::liveness;

/// Bytes per interrupt vector (Linux radeon: 4 dwords: source id 7:0, source data 27:0, ring
/// id, reserved).
pub const VECTOR_BYTES: usize = 16;

/// Interrupt source ids (Linux radeon evergreen.c `evergreen_irq_process`).
pub mod source {
    /// CP ring buffer interrupt (`RB_INT`).
    pub const CP_RB: u32 = 176;
    /// CP end-of-pipe event (`EVENT_WRITE_EOP` with INT_SEL, §9.6.2).
    pub const CP_EOP: u32 = 181;
    /// GUI idle.
    pub const GUI_IDLE: u32 = 233;
}

/// The IH ring memory (given back to its allocator when the driver drops it, after the ring is
/// disabled) and the driver's read pointer (bytes).
pub struct IhRing<'d, A: DmaAllocator + ?Sized> {
    mem: DmaBuffer<'d, A>,
    rptr: usize,
    enabled: bool,
}

/// What one [`Evergreen::handle_interrupts`](crate::Evergreen::handle_interrupts) call
/// consumed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct IrqReport {
    /// Vectors consumed.
    pub vectors: usize,
    /// End-of-pipe (fence) interrupts among them.
    pub eop: usize,
    /// Vectors from sources the driver does not handle.
    pub other: usize,
    /// The ring overflowed (the GPU wrapped over unread vectors): the oldest were lost, the
    /// read pointer skipped to the oldest valid vector and the overflow flag was cleared.
    pub overflowed: bool,
    /// Every fence up to this sequence number is complete (read after the vectors).
    pub completed: u64,
}

/// Why [`Evergreen::handle_interrupts`](crate::Evergreen::handle_interrupts) consumed nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum IrqError {
    /// `IH_RB_WPTR` names no vector boundary of the ring: the IH writes whole 16-byte vectors
    /// and wraps at the ring's end, so its write offset is a multiple of [`VECTOR_BYTES`]
    /// below the ring size. Nothing was consumed; the driver kept its read pointer and wrote
    /// it back to `IH_RB_RPTR`, so the next call resumes from the last vector it read.
    BadWritePointer {
        /// The raw `IH_RB_WPTR` value.
        wptr: u32,
        /// The ring size in bytes.
        ring_bytes: usize,
    },
    /// The device reads all-ones.
    DeviceGone(DeviceGone),
}

impl From<DeviceGone> for IrqError {
    fn from(e: DeviceGone) -> Self {
        IrqError::DeviceGone(e)
    }
}

impl fmt::Display for IrqError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IrqError::BadWritePointer { wptr, ring_bytes } => write!(
                f,
                "IH_RB_WPTR {wptr:#x} is not a 16-byte vector boundary of the {ring_bytes}-byte IH ring"
            ),
            IrqError::DeviceGone(_) => f.write_str("device gone"),
        }
    }
}

impl core::error::Error for IrqError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            IrqError::DeviceGone(e) => Some(e),
            IrqError::BadWritePointer { .. } => None,
        }
    }
}

impl<'d, A: DmaAllocator + ?Sized> IhRing<'d, A> {
    pub(crate) fn new(mem: DmaBuffer<'d, A>) -> Self {
        IhRing { mem, rptr: 0, enabled: false }
    }

    /// Whether the IH ring is running.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    fn mask(&self) -> usize {
        self.mem.size() - 1
    }
}

impl<A: DmaAllocator + ?Sized> IhRing<'_, A> {
    /// Set up and enable the IH ring and the CP's end-of-pipe interrupt (Linux radeon r600.c
    /// `r600_irq_init` order: disable, ring base and size with write-pointer write-back and
    /// overflow detection, pointers 0, `IH_CNTL`, enable; `CP_INT_CNTL.TIME_STAMP_INT_ENABLE`
    /// for `EVENT_WRITE_EOP` interrupts). `writeback` is the driver's write-back page.
    pub(crate) fn enable(
        &mut self,
        io: &Bar<impl RegisterIo>,
        writeback: &DmaRegion,
    ) -> Result<(), InitError> {
        io.write(IH_CNTL::RESET);
        io.write(IH_RB_CNTL::RESET);
        let wb = BusAddress(writeback.bus_address().0 + WB_IH_WPTR_OFFSET as u64);
        let _ = writeback.write_u32(WB_IH_WPTR_OFFSET, 0);
        let base = self.mem.bus_address();
        let bad = |_| {
            InitError::Ring(baregpu_ring::ring::RingConfigError::BadWriteback {
                offset: WB_IH_WPTR_OFFSET,
                address: Some(wb),
            })
        };
        // The dummy-read address (>> 8) is the write-back page (Linux uses its dummy page).
        let page = writeback.bus_address();
        io.write(INTERRUPT_CNTL2::RESET.try_with_interrupt_cntl2(page).map_err(bad)?);
        io.write(INTERRUPT_CNTL::RESET);
        io.write(IH_RB_BASE::RESET.try_with_ih_rb_base(base).map_err(bad)?);
        // IH_IB_SIZE = log2(ring dwords) (Linux `order_base_2(ring_size / 4)`).
        let size_log2 = (self.mem.size() / 4).trailing_zeros() as u8;
        let cntl = IH_RB_CNTL::RESET
            .with_ih_ib_size(size_log2)
            .with_ih_wptr_overflow_enable(true)
            .with_ih_wptr_overflow_clear(true)
            .with_ih_wptr_writeback_enable(true);
        io.write(cntl);
        let (lo, hi) = split_address(wb);
        io.write(IH_RB_WPTR_ADDR_LO::RESET.try_with_ih_rb_wptr_addr_lo(lo).map_err(bad)?);
        io.write(IH_RB_WPTR_ADDR_HI::RESET.try_with_ih_rb_wptr_addr_hi(hi).map_err(bad)?);
        // Start reading where the IH will write next: `IH_RB_WPTR` is read-only, so after a
        // disable/enable it still points past the vectors of the previous enable, which the
        // ring memory still holds. Reading from 0 would take those stale vectors for new ones
        // (the interrupt test would pass on an old end-of-pipe vector and leave its own, the
        // line asserted).
        let wptr = io.read::<IH_RB_WPTR>();
        let next = wptr.wptr_offset() as usize * 4;
        self.rptr =
            if next.is_multiple_of(VECTOR_BYTES) && next < self.mem.size() { next } else { 0 };
        self.write_rptr(io);
        // MC_WRREQ_CREDIT and MC_WR_CLEAN_CNT 0x10 (Linux), RPTR_REARM for MSI.
        let ih_cntl = IH_CNTL::RESET
            .with_mc_wrreq_credit(0x10)
            .with_mc_wr_clean_cnt(0x10)
            .with_rptr_rearm(true);
        io.write(ih_cntl.with_enable_intr(true));
        io.write(cntl.with_ih_wptr_overflow_clear(false).with_ih_rb_enable(true));
        io.write(CP_INT_CNTL::RESET.with_time_stamp_int_enable(true));
        self.enabled = true;
        Ok(())
    }

    /// Disable the IH ring and the CP interrupts.
    pub(crate) fn disable(&mut self, io: &Bar<impl RegisterIo>) {
        io.write(CP_INT_CNTL::RESET);
        io.write(IH_CNTL::RESET);
        io.write(IH_RB_CNTL::RESET);
        self.enabled = false;
    }

    /// Consume the pending interrupt vectors (at most one ring's worth: bounded), move
    /// `IH_RB_RPTR` past them, handle an overflow.
    ///
    /// The read pointer only ever moves by whole vectors: a write pointer that is not a vector
    /// boundary inside the ring is [`IrqError::BadWritePointer`] and consumes nothing (the
    /// reserved bits of `IH_RB_WPTR` are ignored, as Linux radeon masks them).
    pub(crate) fn process(&mut self, io: &Bar<impl RegisterIo>) -> Result<IrqReport, IrqError> {
        let mut report = IrqReport::default();
        let wptr = io.read::<IH_RB_WPTR>();
        if wptr.raw() == u32::MAX {
            liveness::check_alive(io)?;
        }
        let ring_bytes = self.mem.size();
        let end = wptr.wptr_offset() as usize * 4;
        if !end.is_multiple_of(VECTOR_BYTES) || end >= ring_bytes {
            // Resynchronise: the IH and the driver agree on the last vector read; an
            // overflow flag stays set for the next call to handle with a usable pointer.
            self.write_rptr(io);
            return Err(IrqError::BadWritePointer { wptr: wptr.raw(), ring_bytes });
        }
        let mask = self.mask();
        if wptr.rb_overflow() {
            // Linux radeon: the oldest valid vector is the one after the write pointer.
            report.overflowed = true;
            self.rptr = (end + VECTOR_BYTES) & mask;
            let cntl = io.read::<IH_RB_CNTL>();
            io.write(cntl.with_ih_wptr_overflow_clear(true));
            io.write(cntl.with_ih_wptr_overflow_clear(false));
        }
        // `rptr` and `end` are vector boundaries inside the ring: this meets `end` within one
        // ring's worth of vectors.
        while self.rptr != end {
            let id = self.mem.read_u32(self.rptr).unwrap_or(0) & 0xFF;
            report.vectors += 1;
            if id == source::CP_EOP {
                report.eop += 1;
            } else {
                report.other += 1;
            }
            self.rptr = (self.rptr + VECTOR_BYTES) & mask;
        }
        self.write_rptr(io);
        Ok(report)
    }

    /// Tell the IH the driver's read pointer (always a vector boundary inside the ring).
    fn write_rptr(&self, io: &Bar<impl RegisterIo>) {
        io.write(IH_RB_RPTR::RESET.with_rptr_offset((self.rptr / 4) as u16));
    }
}
