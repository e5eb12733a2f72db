//! Falcon engine control for any falcon by its typed instance (`regs::falcon::Pcopy0`,
//! `regs::falcon::Pdaemon`), nvidia-hardware-envytools §2.10: engine enable and reset
//! (`PMC.ENABLE`),
//! code and data upload through `baregpu_firmware::falcon::FalconLoader` (IMEM with
//! `CODE_VIRT` pages and auto-increment, DMEM, read-back), the entry point (`UC_ENTRY`), start
//! (`UC_CTRL.START`), halt detection (the `EXIT` interrupt line and `UC_CTRL.HALTED`, §2.10.6),
//! the `SCRATCH0`/`SCRATCH1` mailbox, and the `EXIT` and scratch (`SWGEN`) interrupt lines
//! (§2.10.8) routed to the engine's PMC line.

use core::fmt;
use core::marker::PhantomData;
use core::time::Duration;

use baregpu_firmware::falcon::{FalconImage, FalconLoadError, FalconLoader, FalconUploadReport};
use baregpu_hal::register::{FieldSpec, Instance};
use baregpu_hal::time::{Clock, TimedOut, poll_until};
use baregpu_hal::{RegisterIo, RegisterIoExt};
use baregpu_regs::nvidia::falcon::{
    self, INTR, INTR_CLEAR, INTR_EN_SET, INTR_ROUTING, Pcopy0, Pdaemon, SCRATCH0, SCRATCH1,
    UC_CTRL, UC_ENTRY,
};
use baregpu_regs::nvidia::pmc::{ENABLE, INTR_MASK_GT215_ONWARD as INTR_MASK};
use baregpu_regs::nvidia::{Chipset, Family};

use crate::error::DeviceGone;
use crate::tesla::Tesla;

/// A falcon engine this driver controls on Tesla: its PMC enable bit and interrupt line.
pub trait TeslaFalcon: Instance<Family = Family, Block = falcon::Block> {
    /// Its `PMC.ENABLE` bit, or `None` where the engine has none the document names
    /// (PDAEMON on GT215:GF100: "none, use reg 0x22210 instead", §2.5.2).
    const PMC_ENABLE: Option<FieldSpec>;
    /// Its line's bit in `PMC.INTR_MASK` (GT215:GF100; the same bit as in `PMC.INTR`).
    const PMC_INTR_MASK: FieldSpec;
}

impl TeslaFalcon for Pcopy0 {
    const PMC_ENABLE: Option<FieldSpec> = Some(ENABLE::PCOPY_PDAEMON);
    const PMC_INTR_MASK: FieldSpec = INTR_MASK::PCOPY_GT215;
}

impl TeslaFalcon for Pdaemon {
    const PMC_ENABLE: Option<FieldSpec> = None;
    const PMC_INTR_MASK: FieldSpec = INTR_MASK::PDAEMON_GT215;
}

/// Why a falcon operation failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum FalconError {
    /// The chip has no such engine (`Instance::CHIPSETS`).
    NotOnChip {
        /// The engine.
        engine: &'static str,
        /// The chip.
        chipset: Chipset,
    },
    /// The engine is running: code is uploaded only while it is stopped.
    Running,
    /// The upload failed (size against `UC_CAPS`, read-back).
    Load(FalconLoadError),
    /// The program did not halt within the timeout.
    NotHalted(TimedOut),
    /// The engine has no `PMC.ENABLE` bit to reset it through (PDAEMON on GT215:GF100,
    /// §2.5.2).
    NoResetBit {
        /// The engine.
        engine: &'static str,
    },
    /// The device reads all-ones.
    DeviceGone(DeviceGone),
}

impl From<DeviceGone> for FalconError {
    fn from(e: DeviceGone) -> Self {
        FalconError::DeviceGone(e)
    }
}

impl fmt::Display for FalconError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FalconError::NotOnChip { engine, chipset } => {
                write!(f, "{} has no {engine}", chipset.name())
            }
            FalconError::Running => f.write_str("the falcon is running"),
            FalconError::Load(_) => f.write_str("falcon upload failed"),
            FalconError::NotHalted(_) => f.write_str("the falcon program did not halt"),
            FalconError::NoResetBit { engine } => write!(f, "{engine} has no PMC.ENABLE bit"),
            FalconError::DeviceGone(_) => f.write_str("device gone"),
        }
    }
}

impl core::error::Error for FalconError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            FalconError::Load(e) => Some(e),
            FalconError::NotHalted(e) => Some(e),
            FalconError::DeviceGone(e) => Some(e),
            _ => None,
        }
    }
}

/// What a falcon's interrupt lines said ([`Falcon::handle_interrupts`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct FalconIrq {
    /// The processor stopped (`EXIT`, line 4).
    pub exit: bool,
    /// The program raised scratch line 0 (`SWGEN0`, line 6).
    pub swgen0: bool,
    /// The program raised scratch line 1 (`SWGEN1`, line 7).
    pub swgen1: bool,
}

/// The interrupt lines the driver enables and routes: `EXIT` and both scratch lines.
const DRIVER_LINES: INTR_EN_SET =
    INTR_EN_SET::RESET.with_exit(true).with_scratch0(true).with_scratch1(true);

/// Falcon `E` of a [`Tesla`].
pub struct Falcon<'a, IO: RegisterIo, C: Clock, E> {
    gpu: &'a Tesla<IO, C>,
    engine: PhantomData<fn() -> E>,
}

impl<IO: RegisterIo, C: Clock> Tesla<IO, C> {
    /// Falcon `E` (`regs::falcon::Pcopy0`, `regs::falcon::Pdaemon`), or
    /// [`FalconError::NotOnChip`] when the chip lacks it.
    pub fn falcon<E: TeslaFalcon>(&self) -> Result<Falcon<'_, IO, C, E>, FalconError> {
        let chipset = self.identity().chipset;
        if !E::CHIPSETS.contains(chipset) {
            return Err(FalconError::NotOnChip { engine: E::NAME, chipset });
        }
        Ok(Falcon { gpu: self, engine: PhantomData })
    }
}

impl<IO: RegisterIo, C: Clock, E: TeslaFalcon> Falcon<'_, IO, C, E> {
    /// Take the engine out of reset (`PMC.ENABLE`, its bit set, the others kept); nothing to
    /// do for an engine without a PMC bit.
    pub fn enable(&self) -> Result<(), FalconError> {
        self.gpu.check_alive()?;
        if let Some(bit) = E::PMC_ENABLE {
            self.gpu.io().modify::<ENABLE>(|e| ENABLE::from_raw(bit.set(e.raw(), 1)));
        }
        Ok(())
    }

    /// Reset the engine through its `PMC.ENABLE` bit: cleared (the engine held in reset loses
    /// its state, §2.4.1 "Big Red Switches"), then set again, the other bits kept. The way out
    /// for a program that never halts: afterwards the processor is stopped and its code must
    /// be uploaded again. An engine without the bit is [`FalconError::NoResetBit`] and
    /// nothing is written.
    pub fn reset(&self) -> Result<(), FalconError> {
        self.gpu.check_alive()?;
        let bit = E::PMC_ENABLE.ok_or(FalconError::NoResetBit { engine: E::NAME })?;
        let io = self.gpu.io();
        io.modify::<ENABLE>(|e| ENABLE::from_raw(bit.set(e.raw(), 0)));
        io.modify::<ENABLE>(|e| ENABLE::from_raw(bit.set(e.raw(), 1)));
        Ok(())
    }

    /// Whether the processor is stopped (`UC_CTRL.HALTED`).
    pub fn halted(&self) -> Result<bool, FalconError> {
        let ctrl = self.gpu.io().at::<E>().read::<UC_CTRL>();
        if ctrl.raw() == u32::MAX {
            return Err(FalconError::DeviceGone(DeviceGone));
        }
        Ok(ctrl.halted())
    }

    /// Upload `image` (code, data, read back) while the processor is stopped; it is not
    /// started. A running engine is [`FalconError::Running`] and nothing is written.
    pub fn load(&self, image: &FalconImage<'_>) -> Result<FalconUploadReport, FalconError> {
        if !self.halted()? {
            return Err(FalconError::Running);
        }
        FalconLoader::<IO, E>::new(self.gpu.io().raw()).upload(image).map_err(|e| match e {
            FalconLoadError::DeviceGone => FalconError::DeviceGone(DeviceGone),
            e => FalconError::Load(e),
        })
    }

    /// Start the processor at `entry` (a virtual code address): the `EXIT` line acknowledged
    /// (so [`wait_halted`](Self::wait_halted) sees this run's exit), `UC_ENTRY`, then
    /// `UC_CTRL.START` (§2.10.6: "STOPPED → RUNNING: Start by UC_CTRL").
    pub fn start(&self, entry: u32) -> Result<(), FalconError> {
        if !self.halted()? {
            return Err(FalconError::Running);
        }
        let e = self.gpu.io().at::<E>();
        e.write(INTR_CLEAR::RESET.with_exit(true));
        e.write(UC_ENTRY::RESET.with_uc_entry(entry));
        e.write(UC_CTRL::RESET.with_start(true));
        Ok(())
    }

    /// [`load`](Self::load) `image` and [`start`](Self::start) it at its entry point.
    pub fn boot(&self, image: &FalconImage<'_>) -> Result<FalconUploadReport, FalconError> {
        let report = self.load(image)?;
        self.start(image.entry())?;
        Ok(report)
    }

    /// Wait (at most `timeout`) until the program stopped: the `EXIT` line raised ("falcon
    /// interrupt line 4 is active" whenever execution stops, §2.10.6) and `UC_CTRL.HALTED`.
    pub fn wait_halted(&self, timeout: Duration) -> Result<(), FalconError> {
        let e = self.gpu.io().at::<E>();
        let polled = poll_until(self.gpu.clock(), timeout, || {
            let intr = e.read::<INTR>();
            let ctrl = e.read::<UC_CTRL>();
            if intr.raw() == u32::MAX || ctrl.raw() == u32::MAX {
                return Some(Err(FalconError::DeviceGone(DeviceGone)));
            }
            (intr.exit() && ctrl.halted()).then_some(Ok(()))
        });
        polled.map_err(FalconError::NotHalted)?
    }

    /// Write the host-to-falcon mailbox (`SCRATCH0`, falcon `I[0x1000]`).
    pub fn write_mailbox(&self, value: u32) {
        self.gpu.io().at::<E>().write(SCRATCH0::RESET.with_scratch0(value));
    }

    /// Read the falcon-to-host mailbox (`SCRATCH1`, falcon `I[0x1100]`).
    pub fn read_mailbox(&self) -> Result<u32, FalconError> {
        let v = self.gpu.io().at::<E>().read::<SCRATCH1>().scratch1();
        if v == u32::MAX {
            self.gpu.check_alive()?;
        }
        Ok(v)
    }

    /// Enable the `EXIT` and scratch lines, route them to the engine's PMC line
    /// (`INTR_ROUTING` selector 1: "PMC HOST/DAEMON line", §2.10.8) and let that line through
    /// to the PCI interrupt (`PMC.INTR_MASK`).
    pub fn enable_interrupts(&self) -> Result<(), FalconError> {
        self.gpu.check_alive()?;
        let e = self.gpu.io().at::<E>();
        let lines = DRIVER_LINES.raw() as u16;
        e.modify::<INTR_ROUTING>(|r| {
            r.with_route_bit0(r.route_bit0() | lines).with_route_bit1(r.route_bit1() & !lines)
        });
        e.write(DRIVER_LINES);
        self.gpu.unmask_line(E::PMC_INTR_MASK, true);
        Ok(())
    }

    /// Read and acknowledge the `EXIT` and scratch lines (`INTR`, then `INTR_CLEAR`).
    pub fn handle_interrupts(&self) -> Result<FalconIrq, FalconError> {
        let e = self.gpu.io().at::<E>();
        let intr = e.read::<INTR>();
        if intr.raw() == u32::MAX {
            return Err(FalconError::DeviceGone(DeviceGone));
        }
        let irq = FalconIrq { exit: intr.exit(), swgen0: intr.scratch0(), swgen1: intr.scratch1() };
        let ack = INTR_CLEAR::RESET
            .with_exit(irq.exit)
            .with_scratch0(irq.swgen0)
            .with_scratch1(irq.swgen1);
        if ack.raw() != 0 {
            e.write(ack);
        }
        Ok(irq)
    }
}
