//! Model of the harness self-test device, written from its datasheet only
//! (`gpu_mailbox::selftest`): a PCI function with side-effect registers, DMA in both
//! directions and interrupts.
//!
//! Where the datasheet leaves a choice, this model decides (and the kernel's tests must agree):
//! - Every register reads 0 after reset, `INVERT` included (it holds the complement of the
//!   last value written, 0 after reset).
//! - `DMA_CMD` reads 0; writing a value other than the two commands does nothing.
//! - A transfer of length 0 is valid (nothing moves, `CHECKSUM` = 0, `DMA_DONE` raised).
//! - A faulting transfer (bad length, or any byte outside guest RAM) sets `DMA_STATUS` to
//!   `FAULT` only, leaves `CHECKSUM` and the buffer unchanged, raises no interrupt and puts the
//!   model in its error state with [`ERROR_DMA_LENGTH`] or [`ERROR_DMA_ADDRESS`]. The write
//!   to `DMA_CMD` itself completes normally (mailbox `Ok`): the fault is reported by
//!   `DMA_STATUS` and the mailbox header.
//! - In the error state (until reset) registers keep answering, like hardware, so a driver can
//!   read `DMA_STATUS_FAULT`; but the DMA engine is stopped: `DMA_CMD` starts nothing and
//!   `DMA_STATUS`, `CHECKSUM`, the buffer and guest memory stay as they are.
//! - Any non-zero write to `IRQ_RAISE` sets `IRQ_SOFTWARE`; `IRQ_STATUS` and `IRQ_ENABLE` keep
//!   only the two defined bits.
//! - Undefined offsets in BAR0 read 0 and ignore writes.
//! - The interrupt is mailbox line 0 (`IRQ_STATUS` bit 0).

#![forbid(unsafe_code)]

use gpu_device_model::{Activity, BarSpec, DeviceContext, GpuModel, PciIdentity};
use gpu_mailbox::selftest as ds;

/// `header::ERROR` after a transfer with a bad length.
pub const ERROR_DMA_LENGTH: u32 = 1;
/// `header::ERROR` after a transfer touching memory outside guest RAM.
pub const ERROR_DMA_ADDRESS: u32 = 2;
/// The mailbox interrupt line the device drives.
pub const IRQ_LINE: u32 = 1 << 0;

const IRQ_BITS: u32 = ds::IRQ_DMA_DONE | ds::IRQ_SOFTWARE;
const BUFFER_WORDS: usize = ds::BUFFER_SIZE as usize / 4;

/// The self-test device.
#[derive(Debug, Clone)]
pub struct SelftestModel {
    scratch: u32,
    counter: u32,
    inverted: u32,
    dma_addr_lo: u32,
    dma_addr_hi: u32,
    dma_len: u32,
    dma_status: u32,
    checksum: u32,
    irq_status: u32,
    irq_enable: u32,
    buffer: [u32; BUFFER_WORDS],
}

impl Default for SelftestModel {
    fn default() -> Self {
        Self::new()
    }
}

impl SelftestModel {
    /// A device in its reset state.
    pub const fn new() -> Self {
        SelftestModel {
            scratch: 0,
            counter: 0,
            inverted: 0,
            dma_addr_lo: 0,
            dma_addr_hi: 0,
            dma_len: 0,
            dma_status: 0,
            checksum: 0,
            irq_status: 0,
            irq_enable: 0,
            buffer: [0; BUFFER_WORDS],
        }
    }

    /// The device buffer (white-box tests).
    pub fn buffer(&self) -> &[u32] {
        &self.buffer
    }

    /// `DMA_STATUS` without going through a bus access (no side effects, no request counted).
    pub fn dma_status(&self) -> u32 {
        self.dma_status
    }

    /// The interrupt line follows `IRQ_STATUS & IRQ_ENABLE`.
    fn update_irq(&self, dev: &mut DeviceContext<'_>) {
        dev.set_irq(IRQ_LINE, self.irq_status & self.irq_enable != 0);
    }

    fn transfer(&mut self, command: u32, dev: &mut DeviceContext<'_>) {
        if dev.failed() {
            // The DMA engine stays stopped until reset.
            return;
        }
        let len = self.dma_len;
        if !len.is_multiple_of(4) || len > ds::BUFFER_SIZE {
            self.dma_status = ds::DMA_STATUS_FAULT;
            dev.fail(ERROR_DMA_LENGTH);
            return;
        }
        let address = u64::from(self.dma_addr_hi) << 32 | u64::from(self.dma_addr_lo);
        let words = len as usize / 4;
        let mut bytes = [0u8; ds::BUFFER_SIZE as usize];
        let bytes = &mut bytes[..len as usize];
        let result = if command == ds::DMA_CMD_TO_DEVICE {
            dev.dma_read(address, bytes).map(|()| {
                for (w, b) in self.buffer.iter_mut().zip(bytes.chunks_exact(4)) {
                    *w = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                }
            })
        } else {
            for (b, w) in bytes.chunks_exact_mut(4).zip(&self.buffer) {
                b.copy_from_slice(&w.to_le_bytes());
            }
            dev.dma_write(address, bytes)
        };
        if result.is_err() {
            self.dma_status = ds::DMA_STATUS_FAULT;
            dev.fail(ERROR_DMA_ADDRESS);
            return;
        }
        self.dma_status = ds::DMA_STATUS_DONE;
        self.checksum = self.buffer[..words].iter().fold(0u32, |s, w| s.wrapping_add(*w));
        self.irq_status |= ds::IRQ_DMA_DONE;
        self.update_irq(dev);
    }
}

impl GpuModel for SelftestModel {
    fn pci_identity(&self) -> PciIdentity {
        PciIdentity::new(ds::VENDOR, ds::DEVICE, ds::CLASS)
            .with_bar(0, BarSpec::mem32(u64::from(ds::BAR0_SIZE)))
    }

    fn mmio_read(&mut self, bar: u8, offset: u32, _dev: &mut DeviceContext<'_>) -> u32 {
        if bar != 0 {
            return 0;
        }
        match offset as usize {
            ds::ID => ds::ID_VALUE,
            ds::SCRATCH => self.scratch,
            ds::COUNTER => {
                let v = self.counter;
                self.counter = v.wrapping_add(1);
                v
            }
            ds::INVERT => self.inverted,
            ds::DMA_ADDR_LO => self.dma_addr_lo,
            ds::DMA_ADDR_HI => self.dma_addr_hi,
            ds::DMA_LEN => self.dma_len,
            ds::DMA_STATUS => self.dma_status,
            ds::CHECKSUM => self.checksum,
            ds::IRQ_STATUS => self.irq_status,
            ds::IRQ_ENABLE => self.irq_enable,
            o if (ds::BUFFER..ds::BUFFER + ds::BUFFER_SIZE as usize).contains(&o) => {
                self.buffer[(o - ds::BUFFER) / 4]
            }
            _ => 0,
        }
    }

    fn mmio_write(&mut self, bar: u8, offset: u32, value: u32, dev: &mut DeviceContext<'_>) {
        if bar != 0 {
            return;
        }
        match offset as usize {
            ds::SCRATCH => self.scratch = value,
            ds::INVERT => self.inverted = !value,
            ds::DMA_ADDR_LO => self.dma_addr_lo = value,
            ds::DMA_ADDR_HI => self.dma_addr_hi = value,
            ds::DMA_LEN => self.dma_len = value,
            ds::DMA_CMD if value == ds::DMA_CMD_TO_DEVICE || value == ds::DMA_CMD_FROM_DEVICE => {
                self.transfer(value, dev)
            }
            ds::IRQ_STATUS => {
                self.irq_status &= !value;
                self.update_irq(dev);
            }
            ds::IRQ_ENABLE => {
                self.irq_enable = value & IRQ_BITS;
                self.update_irq(dev);
            }
            ds::IRQ_RAISE if value != 0 => {
                self.irq_status |= ds::IRQ_SOFTWARE;
                self.update_irq(dev);
            }
            o if (ds::BUFFER..ds::BUFFER + ds::BUFFER_SIZE as usize).contains(&o) => {
                self.buffer[(o - ds::BUFFER) / 4] = value;
            }
            _ => {}
        }
    }

    fn tick(&mut self, _dev: &mut DeviceContext<'_>) -> Activity {
        // Synchronous device: every transfer completes inside the DMA_CMD write.
        Activity::Idle
    }

    fn reset(&mut self) {
        *self = SelftestModel::new();
    }
}

#[cfg(test)]
mod tests {
    //! Each test cites the datasheet line it checks (`gpu_mailbox::selftest`).
    use super::*;
    use gpu_device_model::{COMMAND_BUS_MASTER, COMMAND_MEMORY, Device, VecMemory};
    use gpu_mailbox::{ModelState, Op, Status};

    const RAM: usize = 1 << 20;

    struct Bench(Device<SelftestModel>);

    impl Bench {
        fn new() -> Bench {
            let memory = Box::new(VecMemory::new(RAM).unwrap());
            let mut d = Device::new(SelftestModel::new(), memory).unwrap();
            let command = u32::from(COMMAND_MEMORY | COMMAND_BUS_MASTER);
            assert_eq!(d.handle(Op::ConfigWrite as u32, 0, 4, command), (Status::Ok, 0));
            Bench(d)
        }
        fn rd(&mut self, offset: usize) -> u32 {
            let (status, v) = self.0.handle(Op::MmioRead as u32, 0, offset as u32, 0);
            assert_eq!(status, Status::Ok, "read {offset:#x}");
            v
        }
        fn wr(&mut self, offset: usize, value: u32) -> Status {
            self.0.handle(Op::MmioWrite as u32, 0, offset as u32, value).0
        }
        fn poke(&mut self, address: u64, words: &[u32]) {
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            self.0.memory_mut().write(address, &bytes).unwrap();
        }
        fn peek(&self, address: u64, n: usize) -> Vec<u32> {
            let mut bytes = vec![0u8; n * 4];
            self.0.memory().read(address, &mut bytes).unwrap();
            bytes.chunks_exact(4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect()
        }
        fn dma(&mut self, address: u64, len: u32, command: u32) -> Status {
            assert_eq!(self.wr(ds::DMA_ADDR_LO, address as u32), Status::Ok);
            assert_eq!(self.wr(ds::DMA_ADDR_HI, (address >> 32) as u32), Status::Ok);
            assert_eq!(self.wr(ds::DMA_LEN, len), Status::Ok);
            self.wr(ds::DMA_CMD, command)
        }
    }

    #[test]
    fn pci_identity_matches_the_datasheet() {
        // VENDOR, DEVICE, CLASS, BAR0_SIZE ("BAR0 is 4 KiB of 32-bit registers").
        let mut b = Bench::new();
        let cfg = |b: &mut Bench, off| b.0.handle(Op::ConfigRead as u32, 0, off, 0).1;
        assert_eq!(cfg(&mut b, 0), 0x5E1F_1234);
        assert_eq!(cfg(&mut b, 8) >> 8, 0xFF_0000);
        b.0.handle(Op::ConfigWrite as u32, 0, 0x10, u32::MAX);
        assert_eq!(cfg(&mut b, 0x10), !(ds::BAR0_SIZE - 1), "32-bit, non-prefetchable");
        assert_eq!(b.0.handle(Op::MmioRead as u32, 0, ds::BAR0_SIZE, 0).0, Status::BadAddress);
    }

    #[test]
    fn id_is_read_only() {
        // "ID: Read-only identification; reads ID_VALUE."
        let mut b = Bench::new();
        assert_eq!(b.rd(ds::ID), ds::ID_VALUE);
        b.wr(ds::ID, 0);
        assert_eq!(b.rd(ds::ID), ds::ID_VALUE);
    }

    #[test]
    fn scratch_reads_back_what_was_written() {
        // "SCRATCH: Read/write scratch register." Reset value 0.
        let mut b = Bench::new();
        assert_eq!(b.rd(ds::SCRATCH), 0);
        for v in [0xDEAD_BEEF, 0, u32::MAX, 0x1234_5678] {
            b.wr(ds::SCRATCH, v);
            assert_eq!(b.rd(ds::SCRATCH), v);
        }
    }

    #[test]
    fn counter_counts_earlier_reads() {
        // "every read returns the number of earlier reads of this register (read side effect:
        // 0, 1, 2, ...). Reset clears it."
        let mut b = Bench::new();
        for expected in 0..5 {
            assert_eq!(b.rd(ds::COUNTER), expected);
        }
        b.wr(ds::COUNTER, 100);
        assert_eq!(b.rd(ds::COUNTER), 5, "read-only: the write is ignored");
        b.rd(ds::SCRATCH);
        assert_eq!(b.rd(ds::COUNTER), 6, "other reads do not count");
        b.0.handle(Op::Reset as u32, 0, 0, 0);
        assert_eq!(b.rd(ds::COUNTER), 0);
    }

    #[test]
    fn invert_returns_the_complement_of_the_last_write() {
        // "reads return the bitwise complement of the last value written (write side effect)."
        let mut b = Bench::new();
        assert_eq!(b.rd(ds::INVERT), 0, "reset value");
        b.wr(ds::INVERT, 0x0F0F_1234);
        assert_eq!(b.rd(ds::INVERT), 0xF0F0_EDCB);
        assert_eq!(b.rd(ds::INVERT), 0xF0F0_EDCB, "reads have no side effect");
        b.wr(ds::INVERT, u32::MAX);
        assert_eq!(b.rd(ds::INVERT), 0);
    }

    #[test]
    fn dma_to_device_fills_the_buffer_and_sums_it() {
        // DMA_CMD_TO_DEVICE: "Copy guest memory into the device buffer"; DMA_STATUS_DONE;
        // CHECKSUM "wrapping sum of the device buffer's dwords over the last transfer's length";
        // IRQ_DMA_DONE "A DMA transfer completed".
        let mut b = Bench::new();
        let words: Vec<u32> = (0..16).map(|i| 0x8000_0000 + i * 0x1111).collect();
        b.poke(0x4000, &words);
        assert_eq!(b.dma(0x4000, 64, ds::DMA_CMD_TO_DEVICE), Status::Ok);
        assert_eq!(b.rd(ds::DMA_STATUS), ds::DMA_STATUS_DONE);
        let sum = words.iter().fold(0u32, |s, w| s.wrapping_add(*w));
        assert_eq!(b.rd(ds::CHECKSUM), sum);
        for (i, w) in words.iter().enumerate() {
            assert_eq!(b.rd(ds::BUFFER + i * 4), *w);
        }
        assert_eq!(b.rd(ds::BUFFER + 64), 0, "only LEN bytes moved");
        assert_eq!(b.rd(ds::IRQ_STATUS), ds::IRQ_DMA_DONE);
        assert_eq!(b.0.irq_status(), 0, "IRQ_ENABLE is 0: the line stays low");
    }

    #[test]
    fn dma_from_device_writes_guest_memory() {
        // DMA_CMD_FROM_DEVICE: "Copy the device buffer into guest memory"; the buffer is "also
        // readable and writable directly through BAR0".
        let mut b = Bench::new();
        for i in 0..8u32 {
            b.wr(ds::BUFFER + i as usize * 4, 0xA0 + i);
        }
        b.poke(0x7000, &[0xFFFF_FFFF; 9]);
        assert_eq!(b.dma(0x7000, 32, ds::DMA_CMD_FROM_DEVICE), Status::Ok);
        assert_eq!(b.peek(0x7000, 9), [0xA0, 0xA1, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6, 0xA7, u32::MAX]);
        assert_eq!(b.rd(ds::DMA_STATUS), ds::DMA_STATUS_DONE);
        assert_eq!(b.rd(ds::CHECKSUM), (0xA0..0xA8).sum::<u32>());
    }

    #[test]
    fn full_buffer_transfer_is_allowed() {
        // "DMA_LEN: a multiple of 4, at most BUFFER_SIZE."
        let mut b = Bench::new();
        let words: Vec<u32> = (0..ds::BUFFER_SIZE / 4).map(|i| i * 7).collect();
        b.poke(0x10000, &words);
        assert_eq!(b.dma(0x10000, ds::BUFFER_SIZE, ds::DMA_CMD_TO_DEVICE), Status::Ok);
        assert_eq!(b.rd(ds::BUFFER + ds::BUFFER_SIZE as usize - 4), words[words.len() - 1]);
        assert_eq!(b.dma(0x20000, ds::BUFFER_SIZE, ds::DMA_CMD_FROM_DEVICE), Status::Ok);
        assert_eq!(b.peek(0x20000, words.len()), words);
    }

    /// After a faulted transfer: `DMA_STATUS` reads `FAULT` through the bus (the error state
    /// does not stop register accesses), the header shows the error until reset, registers are
    /// still written, and reset returns to `Ready` with `DMA_STATUS` cleared.
    fn assert_faulted(b: &mut Bench, code: u32) {
        assert_eq!(b.rd(ds::DMA_STATUS), ds::DMA_STATUS_FAULT);
        assert_eq!((b.0.state(), b.0.error_code()), (ModelState::Error, code));
        assert_eq!(b.rd(ds::ID), ds::ID_VALUE);
        assert_eq!(b.wr(ds::SCRATCH, 0x5C), Status::Ok);
        assert_eq!(b.rd(ds::SCRATCH), 0x5C, "register writes are performed");
        assert_eq!((b.0.state(), b.0.error_code()), (ModelState::Error, code), "until reset");
        assert_eq!(b.0.handle(Op::Reset as u32, 0, 0, 0), (Status::Ok, 0));
        assert_eq!((b.0.state(), b.0.error_code()), (ModelState::Ready, 0));
        assert_eq!(b.rd(ds::DMA_STATUS), 0);
        assert_eq!(b.rd(ds::SCRATCH), 0);
    }

    #[test]
    fn dma_outside_guest_ram_faults_without_transferring() {
        // DMA_STATUS_FAULT: "touched memory outside guest RAM ...: nothing was transferred, and
        // the model entered its error state (mailbox ModelState::Error) until reset."
        let mut b = Bench::new();
        b.wr(ds::BUFFER, 0x1111);
        b.poke(RAM as u64 - 4, &[0x2222]);
        // Straddles the end of RAM: the in-RAM part must not be touched either. The DMA_CMD
        // write itself completes; the fault is reported by DMA_STATUS and the header.
        assert_eq!(b.dma(RAM as u64 - 4, 8, ds::DMA_CMD_FROM_DEVICE), Status::Ok);
        assert_eq!(b.peek(RAM as u64 - 4, 1), [0x2222]);
        assert_eq!(b.0.model().buffer()[0], 0x1111);
        assert_eq!(b.0.irq_status(), 0);
        assert_faulted(&mut b, ERROR_DMA_ADDRESS);

        b.wr(ds::BUFFER, 0x1111);
        assert_eq!(b.dma(1 << 32, 4, ds::DMA_CMD_TO_DEVICE), Status::Ok, "DMA_ADDR_HI");
        assert_eq!(b.0.model().buffer()[0], 0x1111, "buffer unchanged");
        assert_eq!(b.rd(ds::IRQ_STATUS), 0, "no DMA_DONE for a faulted transfer");
        assert_faulted(&mut b, ERROR_DMA_ADDRESS);
    }

    #[test]
    fn bad_lengths_fault() {
        // "or had a bad length": not a multiple of 4, or more than BUFFER_SIZE.
        for len in [2, 4094, ds::BUFFER_SIZE + 4, u32::MAX] {
            let mut b = Bench::new();
            assert_eq!(b.dma(0x1000, len, ds::DMA_CMD_TO_DEVICE), Status::Ok, "{len}");
            assert_eq!(b.rd(ds::CHECKSUM), 0, "{len}: CHECKSUM unchanged");
            assert_faulted(&mut b, ERROR_DMA_LENGTH);
        }
    }

    #[test]
    fn dma_engine_stays_stopped_in_the_error_state_until_reset() {
        // Model choice: after a fault, DMA_CMD starts nothing until reset.
        let mut b = Bench::new();
        b.poke(0x3000, &[7, 8]);
        assert_eq!(b.dma(0x3000, 8, ds::DMA_CMD_TO_DEVICE), Status::Ok);
        assert_eq!(b.rd(ds::CHECKSUM), 15);
        assert_eq!(b.dma(0x1000, 3, ds::DMA_CMD_TO_DEVICE), Status::Ok);
        assert_eq!((b.0.state(), b.0.error_code()), (ModelState::Error, ERROR_DMA_LENGTH));
        // A valid transfer in the error state: accepted by the bus, ignored by the engine.
        b.poke(0x4000, &[1, 2]);
        assert_eq!(b.dma(0x4000, 8, ds::DMA_CMD_TO_DEVICE), Status::Ok);
        assert_eq!(b.dma(0x5000, 8, ds::DMA_CMD_FROM_DEVICE), Status::Ok);
        assert_eq!(b.rd(ds::DMA_STATUS), ds::DMA_STATUS_FAULT);
        assert_eq!(b.rd(ds::CHECKSUM), 15);
        assert_eq!([b.rd(ds::BUFFER), b.rd(ds::BUFFER + 4)], [7, 8]);
        assert_eq!(b.peek(0x5000, 2), [0, 0], "guest memory untouched");
        assert_eq!(b.rd(ds::IRQ_STATUS), ds::IRQ_DMA_DONE, "only the first transfer's");
        assert_eq!(b.0.error_code(), ERROR_DMA_LENGTH, "first code kept");
        // Reset starts the engine again.
        assert_eq!(b.0.handle(Op::Reset as u32, 0, 0, 0), (Status::Ok, 0));
        assert_eq!(b.dma(0x4000, 8, ds::DMA_CMD_TO_DEVICE), Status::Ok);
        assert_eq!(b.rd(ds::DMA_STATUS), ds::DMA_STATUS_DONE);
        assert_eq!(b.rd(ds::CHECKSUM), 3);
    }

    #[test]
    fn irq_status_is_write_one_to_clear() {
        // "IRQ_STATUS: Interrupt status, write 1 to clear."
        let mut b = Bench::new();
        b.dma(0x1000, 4, ds::DMA_CMD_TO_DEVICE);
        b.wr(ds::IRQ_RAISE, 1);
        assert_eq!(b.rd(ds::IRQ_STATUS), ds::IRQ_DMA_DONE | ds::IRQ_SOFTWARE);
        b.wr(ds::IRQ_STATUS, 0);
        assert_eq!(b.rd(ds::IRQ_STATUS), ds::IRQ_DMA_DONE | ds::IRQ_SOFTWARE, "0 clears nothing");
        b.wr(ds::IRQ_STATUS, ds::IRQ_SOFTWARE);
        assert_eq!(b.rd(ds::IRQ_STATUS), ds::IRQ_DMA_DONE);
        b.wr(ds::IRQ_STATUS, u32::MAX);
        assert_eq!(b.rd(ds::IRQ_STATUS), 0);
    }

    #[test]
    fn irq_enable_gates_the_line_and_the_signal() {
        // "The interrupt line is asserted while IRQ_STATUS & IRQ_ENABLE != 0; the model signals
        // the guest when it becomes asserted."
        let mut b = Bench::new();
        b.wr(ds::IRQ_RAISE, 1);
        assert_eq!((b.0.irq_status(), b.0.take_irq_signals()), (0, 0), "masked");
        b.wr(ds::IRQ_ENABLE, ds::IRQ_DMA_DONE);
        assert_eq!(b.0.take_irq_signals(), 0, "other bit enabled: still low");
        b.wr(ds::IRQ_ENABLE, ds::IRQ_DMA_DONE | ds::IRQ_SOFTWARE);
        assert_eq!((b.0.irq_status(), b.0.take_irq_signals()), (IRQ_LINE, 1));
        assert_eq!(b.rd(ds::IRQ_ENABLE), IRQ_BITS);
        // Driver acknowledges in the device, then in the mailbox: the line is low, no repeat.
        b.wr(ds::IRQ_STATUS, ds::IRQ_SOFTWARE);
        assert_eq!(b.0.handle(Op::IrqAck as u32, 0, 0, IRQ_LINE), (Status::Ok, 0));
        assert_eq!(b.0.take_irq_signals(), 0);
        // A completed transfer raises DMA_DONE through the enabled mask.
        b.dma(0x1000, 4, ds::DMA_CMD_TO_DEVICE);
        assert_eq!((b.0.irq_status(), b.0.take_irq_signals()), (IRQ_LINE, 1));
        // Masking lowers the line; the mailbox latch keeps its bit until IrqAck.
        b.wr(ds::IRQ_ENABLE, 0);
        assert_eq!(b.0.handle(Op::IrqAck as u32, 0, 0, IRQ_LINE), (Status::Ok, 0));
    }

    #[test]
    fn irq_raise_sets_the_software_bit() {
        // "IRQ_RAISE: Write 1 to set IRQ_SOFTWARE in IRQ_STATUS."
        let mut b = Bench::new();
        b.wr(ds::IRQ_RAISE, 0);
        assert_eq!(b.rd(ds::IRQ_STATUS), 0);
        b.wr(ds::IRQ_RAISE, 1);
        assert_eq!(b.rd(ds::IRQ_STATUS), ds::IRQ_SOFTWARE);
        assert_eq!(b.rd(ds::IRQ_RAISE), 0);
    }

    #[test]
    fn reset_returns_every_register_to_zero() {
        // "Reset values are 0 unless stated."
        let mut b = Bench::new();
        b.wr(ds::SCRATCH, 1);
        b.wr(ds::INVERT, 1);
        b.rd(ds::COUNTER);
        b.wr(ds::IRQ_ENABLE, 3);
        b.wr(ds::BUFFER + 8, 9);
        b.dma(0x1000, 4, ds::DMA_CMD_TO_DEVICE);
        b.wr(ds::IRQ_RAISE, 1);
        assert_eq!(b.0.irq_status(), IRQ_LINE);
        assert_eq!(b.0.handle(Op::Reset as u32, 0, 0, 0), (Status::Ok, 0));
        assert_eq!(b.0.irq_status(), 0, "mailbox line cleared");
        for off in (0..0x40).step_by(4).filter(|&o| o != ds::ID) {
            assert_eq!(b.rd(off), 0, "offset {off:#x}");
        }
        assert!((0..ds::BUFFER_SIZE as usize).step_by(4).all(|o| b.rd(ds::BUFFER + o) == 0));
        assert_eq!(b.rd(ds::ID), ds::ID_VALUE);
    }
}
